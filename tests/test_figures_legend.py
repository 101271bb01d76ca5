"""Every legend entry of a figure can be told from every other (issue 30: the Whipple bicycle's
path drew 13 entries with matplotlib's 10-colour cycle, "rear_wheel: axis tip" and
"front_wheel: axis tip" both green dashes; a 12-link chain's coordinates were neighbouring shades
of viridis). Two entries look alike when they have the same line style and marker and colours
closer than :data:`ALIKE` in RGB: tab20's closest pair, light blue and light cyan, is 0.098 apart,
viridis's neighbours among twelve 0.081."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.legend import Legend

from lagsim.analysis.kinematics import BodyFrames
from lagsim.output.io import Table
from lagsim.viz.figures import make_figure
from lagsim.viz.palette import AXIS_COLOURS, LINE_COLOURS, MASS_COLOURS, look
from lagsim.viz.scene3d import Scene, path_figure

ALIKE = 0.12
"""RGB distance below which two colours of lines with the same style are taken for one."""


def alike(legend: Legend) -> list[tuple[str, str]]:
    """The pairs of ``legend``'s entries drawn alike."""
    entries = []
    for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
        assert handle is not None
        entries.append((text.get_text(), str(handle.get_linestyle()), str(handle.get_marker()),
                        np.array(to_rgb(handle.get_color()))))
    return [(a[0], b[0]) for a, b in itertools.combinations(entries, 2)
            if a[1:3] == b[1:3] and float(np.linalg.norm(a[3] - b[3])) < ALIKE]


def legends(fig: Figure) -> list[Legend]:
    found = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    assert found
    return found


def bicycle_scene() -> Scene:
    """The Whipple bicycle's scene as its path figure gets it: four bodies (the wheels symmetric
    about axis 2, as the 10-colour figure drew both their tips in axis 2's green) and the two
    contact points, rolling along x."""
    t = np.linspace(0.0, 1.0, 21)
    turn = np.stack([np.array([[np.cos(a), 0.0, np.sin(a)], [0.0, 1.0, 0.0],
                               [-np.sin(a), 0.0, np.cos(a)]]) for a in 5.0 * t])
    moments = {"rear_wheel": (0.06, 0.12, 0.06), "rear_frame": (9.2, 11.0, 2.8),
               "front_frame": (0.06, 0.05, 0.02), "front_wheel": (0.14, 0.28, 0.14)}
    points: dict[str, np.ndarray] = {}
    bodies: dict[str, BodyFrames] = {}
    for k, (name, (i1, i2, i3)) in enumerate(moments.items()):
        points[name] = np.column_stack([5.0 * t + 0.3 * k, np.full_like(t, 0.1 * k),
                                        np.full_like(t, -0.3 - 0.1 * k)])
        half = tuple(float(np.sqrt(1.5 * (a + b - c))) for a, b, c in
                     ((i2, i3, i1), (i3, i1, i2), (i1, i2, i3)))
        bodies[name] = BodyFrames(name, turn, np.eye(3), (i1, i2, i3), half)
    for name in ("rear_wheel.contact", "front_wheel.contact"):
        points[name] = np.column_stack([5.0 * t, 0.0 * t, 0.0 * t])
    return Scene(points, bodies, (), (0.0, 0.0, 1.0))


def test_the_bicycles_path_tells_its_bodies_tips_and_axes_apart() -> None:
    (legend,) = legends(path_figure(bicycle_scene(), (30.0, -60.0)))
    entries = {t.get_text(): h for t, h in zip(legend.get_texts(), legend.legend_handles,
                                                strict=True)}
    assert len(entries) == 16 and alike(legend) == []
    for body in ("rear_wheel", "rear_frame", "front_frame", "front_wheel"):
        path, tip = entries[body], entries[f"{body}: axis tip"]
        assert (path.get_color(), path.get_linestyle()) == (tip.get_color(), "-")
        assert tip.get_linestyle() == "--"


@pytest.mark.parametrize("n", [12, 20])
def test_a_time_plot_of_many_coordinates_tells_its_lines_apart(n: int) -> None:
    t = np.linspace(0.0, 1.0, 11)
    names = tuple(f"th{i + 1}" for i in range(n))
    table = Table(("t", *names), np.column_stack([t, *(np.sin(t + i) for i in range(n))]),
                  "run.csv")
    (legend,) = legends(make_figure(table, "time"))
    assert [text.get_text() for text in legend.get_texts()] == list(names)
    assert alike(legend) == []


def test_the_palettes_keep_their_distances() -> None:
    """The declared palettes are the premise of the figures' tests: each colour ≥ ALIKE from
    every other of its palette, and a mass's from every principal axis's."""
    for palette in (LINE_COLOURS, MASS_COLOURS + AXIS_COLOURS):
        rgb = [np.array(to_rgb(c)) for c in palette]
        assert min(float(np.linalg.norm(a - b)) for a, b in itertools.combinations(rgb, 2)) > ALIKE
    looks = [look(i, MASS_COLOURS, dashed) for i in range(2 * len(MASS_COLOURS))
             for dashed in (False, True)]
    assert len(set(looks)) == len(looks)


def test_a_plane_path_of_twelve_masses_tells_them_apart() -> None:
    """The 2-D path figure's legend copies each path's look, its style with its colour."""
    t = np.linspace(0.0, 1.0, 11)
    table = Table(("t", "th1"), np.column_stack([t, t]), "run.csv")
    paths = {f"p{i + 1}": (np.cos(t + i), np.sin(t + i) - i) for i in range(12)}
    (legend,) = legends(make_figure(table, "path", path_xy=paths))
    assert [text.get_text() for text in legend.get_texts()] == [*paths, "start", "end"]
    assert alike(legend) == []


@pytest.mark.parametrize(("n", "runs"), [(6, 2), (5, 3), (3, 19)])
def test_runs_drawn_over_each_other_tell_every_line_apart(n: int, runs: int) -> None:
    """Several runs in one figure: each run in its colour, its k-th quantity in the same style in
    every run; a run's fifth line (a 3-link chain's six coordinates in natural form repeated the
    first four looks of its run) and a 19th run (past the 18 colours, the first run's look)
    take a marker."""
    t = np.linspace(0.0, 1.0, 11)
    names = tuple(f"x{i + 1}" for i in range(n))
    inputs = [(f"run{r}", Table(("t", *names),
                                np.column_stack([t, *(np.sin(t + i + r) for i in range(n))]),
                                f"run{r}.csv")) for r in range(runs)]
    (legend,) = legends(make_figure(inputs, "time"))
    assert len(legend.get_texts()) == n * runs and alike(legend) == []
    looks = {text.get_text(): (handle.get_color(), handle.get_linestyle())
             for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True)}
    for name in names:
        assert len({looks[f"run{r}: {name}"][1] for r in range(runs)}) == 1
    for r in range(runs):
        assert len({looks[f"run{r}: {name}"][0] for name in names}) == 1


def test_the_masses_of_a_3d_animation_are_told_apart_past_the_palette(monkeypatch, tmp_path
                                                                       ) -> None:
    """Twelve masses against the eleven colours of MASS_COLOURS: the twelfth was the first's
    blue circle again; it is a blue diamond, in the legend as on the stage."""
    from lagsim.viz import animate

    captured = []
    monkeypatch.setattr(animate, "_write", lambda fig, *args: captured.append(fig))
    t = np.linspace(0.0, 1.0, 5)
    points = {f"m{i + 1}": np.column_stack([t + i, 0.0 * t, 0.0 * t]) for i in range(12)}
    table = Table(("t", "q"), np.column_stack([t, t]), "run.csv")
    animate.animate_3d(table, Scene(points, {}, (), (0.0, 0.0, -1.0)), tmp_path / "a.gif",
                       (30.0, -60.0), fps=4)
    (fig,) = captured
    (legend,) = fig.legends
    names = [text.get_text() for text in legend.get_texts()]
    assert names[:12] == list(points) and alike(legend) == []
    markers = {n: h.get_marker() for n, h in zip(names, legend.legend_handles, strict=True)}
    assert (markers["m1"], markers["m12"]) == ("o", "D")
