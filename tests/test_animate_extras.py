"""What an animation shows besides the masses (issue 14): the direction of gravity, a trail
drawn through the samples, springs, and progress on a terminal."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.text import Annotation

from lagsim.analysis.kinematics import gravity_direction
from lagsim.spec.system import load_spec
from lagsim.viz.animate import _stage, gravity_arrow


@pytest.mark.parametrize(("name", "direction"), [
    ("double_pendulum", (0.0, -1.0)),              # gravity: [0, -g], hangs down the screen
    ("double_pendulum_constrained", (1.0, 0.0)),   # 002 §23.8's axes: E_x points down, g = g E_x
    ("pendulum_natural", (0.0, -1.0)),
    ("kepler", None),                              # a central force, no gravity: no arrow
])
def test_gravity_direction_is_the_files_unit_vector(name, direction) -> None:
    got = gravity_direction(load_spec(name))
    if direction is None:
        assert got is None
    else:
        np.testing.assert_allclose(got, direction, atol=1e-15)


def test_gravity_direction_scales_out_the_magnitude_and_drops_z() -> None:
    from lagsim.spec.system import parse_spec

    spec = parse_spec("parameters: {g: 9.81, m: 2}\ncoordinates: [x, y, z]\n"
                      "masses: {a: {mass: m, position: [x, y, z]}}\ngravity: [3*g, -4*g, -g]\n")
    np.testing.assert_allclose(gravity_direction(spec), (0.6, -0.8), rtol=1e-15)


def _ends(arrow) -> tuple[np.ndarray, np.ndarray]:
    """The tail and the head of a gravity arrow, in pixels."""
    return arrow.anncoords.transform(arrow.xyann), arrow.xycoords.transform(arrow.xy)


def test_the_arrow_points_along_gravity_in_the_top_right_corner() -> None:
    """Along gravity on the page, GRAVITY_INCHES long, whatever the axes' shape (the path
    figure's equal scales leave its box a rectangle)."""
    from matplotlib.figure import Figure

    from lagsim.viz.figures import GRAVITY_INCHES

    fig = Figure(figsize=(8.0, 3.0), dpi=100)
    ax = fig.subplots()
    arrow = gravity_arrow(ax, (0.6, -0.8))
    tail, head = _ends(arrow)
    np.testing.assert_allclose(head - tail, [0.6 * 100 * GRAVITY_INCHES,
                                             -0.8 * 100 * GRAVITY_INCHES], atol=1e-9)
    box = ax.get_window_extent()
    middle = (0.5 * (tail + head) - [box.x0, box.y0]) / [box.width, box.height]
    assert min(middle) > 0.5
    assert [t.get_text() for t in ax.texts if not isinstance(t, Annotation)] == ["g"]


def test_the_stage_of_an_animation_carries_the_arrow_only_with_gravity() -> None:
    colours = [(0.0, 0.0, 1.0, 1.0)]
    with_g, _ = _stage(-1, 1, -1, 1, ["bob"], colours, ["o"], True, "t", 40, (0.0, -1.0))
    without, _ = _stage(-1, 1, -1, 1, ["bob"], colours, ["o"], True, "t", 40, None)
    arrows = [a for a in with_g.axes[0].texts if isinstance(a, Annotation)]
    assert len(arrows) == 1 and _ends(arrows[0])[1][1] < _ends(arrows[0])[0][1]
    assert not [a for a in without.axes[0].texts if isinstance(a, Annotation)]


# --- the trail, springs and progress --------------------------------------------------------------


def test_the_trail_runs_through_every_sample_of_its_span() -> None:
    """A mass on the unit circle sampled 1000 times a revolution, drawn at 2 frames per second:
    the trail of the last 0.25 s is made of the samples in it (each on the circle), not of one
    chord between two frames."""
    from lagsim.viz.animate import trail_points

    t = np.linspace(0.0, 1.0, 1001)
    path = np.column_stack([np.cos(2 * np.pi * t), np.sin(2 * np.pi * t)])
    now = 0.5
    here = np.array([np.cos(np.pi), np.sin(np.pi)])
    points, times = trail_points(t, path, now, here, 0.25)
    assert times[0] == pytest.approx(0.25) and times[-1] == now
    assert len(points) == 250 + 1 and np.all(np.diff(times) > 0)
    np.testing.assert_allclose(np.hypot(points[:, 0], points[:, 1]), 1.0, atol=1e-5)
    np.testing.assert_allclose(points[-1], here)
    start, _ = trail_points(t, path, 0.0, path[0], 0.25)
    assert len(start) == 1


def test_a_zigzag_spring_joins_its_two_ends() -> None:
    from lagsim.viz.animate import zigzag

    a, b = np.array([0.0, 1.0]), np.array([3.0, -3.0])
    path = zigzag(a, b, width=0.1, coils=5)
    np.testing.assert_array_equal(path[0], a)
    np.testing.assert_array_equal(path[-1], b)
    d = (b - a) / 5.0
    rel = path - a
    offsets = np.abs(d[0] * rel[:, 1] - d[1] * rel[:, 0]) / np.hypot(*d)
    assert offsets.max() == pytest.approx(0.1) and len(path) == 2 * 5 + 1 + 2


def test_springs_come_from_the_file_and_from_the_potential() -> None:
    """002 §23.9's spring from the bob to B = d E_y (spring_pendulum, d = 1) is found in its
    potential K/2 (|r_A − r_B| − l0)²; two masses and a mass and the origin likewise; the file's
    springs: come first."""
    from lagsim.analysis.kinematics import springs
    from lagsim.spec.system import parse_spec
    from lagsim.symbolic.model import build_model

    spec = load_spec("spring_pendulum")
    assert springs(spec, build_model(spec)) == [("bob", (0.0, 1.0))]
    pair = parse_spec("parameters: {k: 3, l0: 0.5}\ncoordinates: [x1, y1, x2, y2]\n"
                      "masses: {a: {mass: 1, position: [x1, y1]}, b: {mass: 1, position: [x2, "
                      "y2]}}\npotential: k/2*(sqrt((x1 - x2)**2 + (y1 - y2)**2) - l0)**2 + "
                      "k/2*(sqrt(x1**2 + y1**2) - l0)**2 + y2\nsprings: [[b, [1, 2]]]\n")
    assert springs(pair, build_model(pair)) == [("b", (1.0, 2.0)), ("a", "origin"), ("a", "b")]
    assert springs(load_spec("pendulum"), build_model(load_spec("pendulum"))) == []


def test_a_drawn_spring_is_a_zigzag_of_equal_teeth_at_60_degrees(monkeypatch, tmp_path) -> None:
    """Issue 30: the spring_pendulum's spring read as a staircase (teeth 2.7 times as tall as
    their pitch). Each frame's spring runs from its end to its end with 2·coils strokes between
    the straight ends, alternating sides of the axis by one half-width; at the median length
    each stroke crosses the axis at 60° (equilateral teeth), and the width stays that of the
    run in every frame."""
    from lagsim.output.io import Table
    from lagsim.viz import animate as module

    drawn: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    zigzag = module.zigzag

    def recording(a, b, width, coils=module.SPRING_COILS):
        path = zigzag(a, b, width, coils)
        drawn.append((np.array(a), np.array(b), path))
        return path

    monkeypatch.setattr(module, "zigzag", recording)
    t = np.linspace(0.0, 1.0, 51)
    r = 1.0 + 0.3 * np.sin(2 * np.pi * t)
    table = Table(("t", "x"), np.column_stack([t, t]), "<test>")
    module.animate(table, {"bob": (r * np.cos(t), r * np.sin(t))}, [], tmp_path / "s.gif",
                   fps=9, dpi=30, springs=[("origin", "bob")])
    assert len(drawn) == 9
    lengths = [float(np.hypot(*(b - a))) for a, b, _ in drawn]
    n = module.SPRING_COILS
    widths = set()
    for (a, b, path), length in zip(drawn, lengths, strict=True):
        np.testing.assert_array_equal(path[0], a)
        np.testing.assert_array_equal(path[-1], b)
        axis = (b - a) / length
        offsets = (path - a) @ np.array([-axis[1], axis[0]])
        teeth = offsets[2:-2]
        assert len(path) - 3 == 2 * n
        assert np.allclose(np.abs(teeth), abs(teeth[0]), rtol=1e-12)
        assert np.all(np.sign(teeth[1:]) == -np.sign(teeth[:-1]))
        widths.add(round(abs(float(teeth[0])), 12))
        strokes = np.diff(path[2:-2], axis=0)
        if length == np.median(lengths):
            angles = np.degrees(np.arccos(np.abs(strokes @ axis)
                                          / np.hypot(strokes[:, 0], strokes[:, 1])))
            np.testing.assert_allclose(angles, 60.0, atol=1e-9)
    assert len(widths) == 1


def test_animate_calls_progress_for_every_frame(tmp_path) -> None:
    from lagsim.output.io import Table
    from lagsim.viz.animate import animate

    t = np.linspace(0.0, 1.0, 51)
    table = Table(("t", "x"), np.column_stack([t, t]), "<test>")
    seen: list[float] = []
    frames = animate(table, {"bob": (np.cos(t), np.sin(t))}, [("origin", "bob")],
                     tmp_path / "a.gif", fps=6, dpi=30, springs=[("bob", (1.0, 1.0))],
                     progress=seen.append)
    assert frames == 6 and seen == pytest.approx([(i + 1) / 6 for i in range(6)])


def test_animate_shows_progress_on_a_terminal_only(monkeypatch, tmp_path) -> None:
    """`lagsim animate` hands the frames' progress to the same bar as `simulate`, labelled
    animating; the bar appears once the work has taken about a second, only on a terminal."""
    import io
    import sys

    from click.testing import CliRunner

    from lagsim.cli import main
    from lagsim.cli.commands import animate
    from lagsim.cli.progress import Progress

    bars: list[Progress] = []

    def early(label: str = "simulating") -> Progress:
        progress = Progress(label)
        progress.start -= 2.0
        bars.append(progress)
        return progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(animate, "Progress", early)
    result = CliRunner().invoke(main, ["animate", "pendulum", "--t-end", "0.5", "--fps", "4",
                                       "--dpi", "30", "-o", str(tmp_path / "p.gif")])
    assert result.exit_code == 0, result.output
    animating = [bar for bar in bars if bar.label == "animating"]
    assert len(animating) == 1 and animating[0].bar is None   # CliRunner's stderr: no terminal
    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    bar = Progress("animating")
    bar.start -= 2.0
    for k in range(4):
        bar((k + 1) / 4)
    bar.close()
    assert "animating" in stream.getvalue()


def test_the_stage_holds_every_sample_not_only_the_frames(tmp_path, monkeypatch) -> None:
    """The trail runs through every sample, so the limits must hold them all: a mass at
    x = sin(2πt) drawn in two frames (t = 0 and 1, both at x = 0) had limits about x = 0 and its
    trail, and the slider crank's slider, ran off the axes."""
    from lagsim.output.io import Table
    from lagsim.viz import animate as animation

    staged = {}
    real = animation._stage

    def spy(xmin, xmax, ymin, ymax, *rest, **keywords):
        staged.update(x=(xmin, xmax), y=(ymin, ymax))
        return real(xmin, xmax, ymin, ymax, *rest, **keywords)

    monkeypatch.setattr(animation, "_stage", spy)
    t = np.linspace(0.0, 1.0, 101)
    x = np.sin(2.0 * np.pi * t)
    table = Table(("t", "x"), np.column_stack([t, x]), "run.csv")
    animation.animate(table, {"m": (x, 0.0 * t)}, [], tmp_path / "m.gif", fps=2, frames=2,
                      dpi=20)
    assert staged["x"][0] < -1.0 and staged["x"][1] > 1.0
