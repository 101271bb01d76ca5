"""The plane a picture without 3-D bodies is drawn in (issue 30, "What the pictures and equations
show": a spherical pendulum was drawn from the top without saying so and without its gravity
arrow; a pendulum whose file has gravity along +x hung sideways): the plane gravity points down
in, named under the title, gravity's arrow pointing down the page, equal scales so that a
pendulum's path is a circle on the page (lagsim/viz/views.py choose_plane, view_plane;
lagsim/viz/figures.py plane_paths)."""

from __future__ import annotations

import numpy as np
import pytest

import lagsim
from lagsim.errors import InputError
from lagsim.viz.views import Plane, choose_plane, parse_view, view_plane


@pytest.mark.parametrize(("gravity", "spread", "plane"), [
    ((0.0, -1.0, 0.0), (1.0, 0.5, 0.0), Plane(0, 1, False, (0.0, -1.0))),
    ((1.0, 0.0, 0.0), (0.5, 1.0, 0.0), Plane(1, 0, True, (0.0, -1.0))),
    ((0.0, 0.0, -1.0), (1.6, 1.6, 0.3), Plane(0, 2, False, (0.0, -1.0))),
    ((0.0, 0.0, -1.0), (1.0, 1.6, 0.3), Plane(1, 2, False, (0.0, -1.0))),
    ((0.0, 0.0, 1.0), (1.0, 0.0, 0.3), Plane(0, 2, True, (0.0, -1.0))),
    ((0.6, -0.8, 0.0), (1.0, 1.0, 0.0), Plane(0, 1, False, (0.6, -0.8))),
    (None, (1.0, 2.0, 0.0), Plane(0, 1)),
    (None, (0.0, 2.0, 1.0), Plane(1, 2)),
])
def test_the_plane_is_the_one_gravity_points_down_in(gravity, spread, plane) -> None:
    assert choose_plane(gravity, spread) == plane


def test_a_view_chooses_the_plane_and_says_when_gravity_is_normal_to_it() -> None:
    top = view_plane(parse_view("top"), (0.0, 0.0, -1.0))
    assert (top.across, top.up, top.gravity) == (0, 1, None)
    assert top.caption == "x–y plane, gravity along −z (normal to the page)"
    front = view_plane(parse_view("front"), (0.0, 0.0, 1.0))
    assert front == Plane(0, 2, True, (0.0, -1.0)) and front.caption == "x–z plane, z down"
    assert view_plane(parse_view("side"), None) == Plane(1, 2)
    assert Plane(1, 0, True).project((0.0, 1.5)) == (1.5, 0.0)
    for view in ("iso", "20,-60"):
        with pytest.raises(InputError, match="a picture in the plane .* front .*x–z plane"):
            view_plane(parse_view(view), (0.0, -1.0, 0.0))


def _on_page(ax, x, y) -> np.ndarray:
    return ax.transData.transform(np.column_stack([x, y]))


def test_a_pendulum_with_gravity_along_x_hangs_down_its_path_a_circle() -> None:
    """A bob on the unit circle about the origin in the x–y plane, gravity along +x (the file of
    pendulum_constrained): x is drawn downwards, the arrow points down the page, and the path
    keeps one distance on the page from the pivot whichever way it points (equal scales: a
    circle, not an ellipse)."""
    from lagsim.output.io import Table
    from lagsim.viz.figures import make_figure, plane_paths

    t = np.linspace(0.0, 2.0, 201)
    angle = 1.2 * np.sin(2.0 * t)
    bob = np.column_stack([np.cos(angle), np.sin(angle), np.zeros_like(t)])
    plane, paths = plane_paths({"bob": bob}, (1.0, 0.0, 0.0))
    table = Table(("t", "theta"), np.column_stack([t, angle]), "run.csv")
    fig = make_figure(table, "path", path_xy=paths, plane=plane)
    fig.canvas.draw()
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("y", "x") and ax.yaxis_inverted()
    assert ax.get_title() == "x–y plane, x down"
    (head, tail), = [(a.xycoords.transform(a.xy), a.anncoords.transform(a.xyann))
                     for a in ax.texts if getattr(a, "arrow_patch", None) is not None]
    assert head[1] < tail[1] and abs(head[0] - tail[0]) < 1e-6 * abs(head[1] - tail[1])
    path = ax.lines[0]
    page = _on_page(ax, path.get_xdata(), path.get_ydata())
    pivot = _on_page(ax, [0.0], [0.0])[0]
    assert _on_page(ax, [0.0], [1.0])[0][1] < pivot[1]
    radii = np.linalg.norm(page - pivot, axis=1)
    assert np.ptp(radii) < 1e-3 * radii.mean()
    assert np.ptp(page[:, 0]) > 0.5 * radii.mean()


def test_a_spherical_pendulum_is_seen_from_the_side_unless_the_view_says_top() -> None:
    """spherical_pendulum (gravity [0, 0, -g]) at samples of a made-up motion (its positions
    need only the file, no run): z up in a vertical plane with gravity's arrow; from the top,
    the x–y plane with gravity named as normal to the page, no arrow."""
    from lagsim.analysis.kinematics import gravity_vector, mass_points
    from lagsim.output.io import Table
    from lagsim.viz.figures import make_figure, plane_paths

    system = lagsim.load("spherical_pendulum")
    t = np.linspace(0.0, 2.0, 101)
    table = Table(("t", "theta", "phi"), np.column_stack([t, 1.0 + 0.2 * np.sin(3.0 * t), 2.0 * t]),
                  "run.csv")
    points = mass_points(system.model, table)
    g = gravity_vector(system.spec)
    arrows = {}
    for view in (None, parse_view("top")):
        plane, paths = plane_paths(points, g, view)
        ax = make_figure(table, "path", path_xy=paths, plane=plane).axes[0]
        arrows[view] = [a for a in ax.texts if getattr(a, "arrow_patch", None) is not None]
        labels = ax.get_xlabel(), ax.get_ylabel(), ax.get_title()
        if view is None:
            assert labels in (("x", "z", "x–z plane"), ("y", "z", "y–z plane"))
            assert not ax.yaxis_inverted() and len(arrows[view]) == 1
        else:
            assert labels == ("x", "y", "x–y plane, gravity along −z (normal to the page)")
            assert arrows[view] == []


def test_the_spring_pendulums_animation_hangs_down_with_its_spring() -> None:
    """spring_pendulum (gravity [g, 0, 0], a spring to the fixed point B = (0, d) = (0, 1)): the
    animation takes the plane gravity points down in, x down, and B moves into it at
    (y, x) = (1, 0)."""
    from lagsim.analysis.kinematics import gravity_vector, springs

    system = lagsim.load("spring_pendulum")
    plane = choose_plane(gravity_vector(system.spec), (0.3, 0.3, 0.0))
    assert plane == Plane(1, 0, True, (0.0, -1.0))
    (mass, anchor), = springs(system.spec, system.model)
    assert mass == "bob" and plane.project(anchor) == (1.0, 0.0)


def test_the_arrow_takes_the_corner_it_covers_least() -> None:
    """The double pendulum's start sat under the arrow in the top right corner."""
    from lagsim.viz.figures import GRAVITY_CORNERS, quiet_corner

    rng = np.random.default_rng(30)
    everywhere = rng.uniform(0.0, 1.0, (2000, 2))
    crowded = np.vstack([everywhere, [[0.9, 0.85]] * 50])
    assert quiet_corner(everywhere[:0]) == GRAVITY_CORNERS[0]
    assert quiet_corner(crowded) != GRAVITY_CORNERS[0]
    lower = everywhere[everywhere[:, 1] < 0.5]
    assert quiet_corner(lower) == GRAVITY_CORNERS[0]
    upper = everywhere[everywhere[:, 1] > 0.5]
    assert quiet_corner(upper) == (0.91, 0.14)


def test_a_multiplier_constant_to_round_off_is_drawn_as_a_constant() -> None:
    """rod_two_particles' λ_rod = −8/3 to round-off: the axis is not zoomed into the round-off
    (ticks −2.666666666666664 …), its range is ±5 % of the value; a real variation of 1e-6 keeps
    matplotlib's own range."""
    from lagsim.output.io import Table
    from lagsim.viz.figures import make_figure

    t = np.linspace(0.0, 5.0, 501)
    noise = np.random.default_rng(3).normal(0.0, 4e-16, t.size)
    for wiggle, flat in ((noise, True), (1e-6 * np.sin(t), False)):
        table = Table(("t", "lambda_rod"), np.column_stack([t, -8.0 / 3.0 + wiggle]), "run.csv")
        fig = make_figure(table, "forces")
        fig.canvas.draw()
        low, high = fig.axes[0].get_ylim()
        labels = [label.get_text() for label in fig.axes[0].get_yticklabels()]
        if flat:
            assert (low, high) == pytest.approx((-8 / 3 - 2 / 15, -8 / 3 + 2 / 15), rel=1e-12)
            assert max(len(text) for text in labels) <= 6
        else:
            assert high - low < 1e-5


def test_a_narrow_panel_is_labelled_from_a_round_value_near_it() -> None:
    """skate's λ_skate ≈ −0.5 varies by 1e-10: its ticks read −0.500000000025 …; they are drawn
    as λ − (−0.5) with −0.5 named in the axis label, the data left as they are."""
    from lagsim.output.io import Table
    from lagsim.viz.figures import make_figure

    t = np.linspace(0.0, 10.0, 501)
    lam = -0.5 - 6e-11 * (1.0 - np.cos(3.0 * t))
    fig = make_figure(Table(("t", "lambda_skate"), np.column_stack([t, lam]), "run.csv"),
                      "forces")
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_ylabel() == "λ_skate − (−0.5)"
    assert np.array_equal(ax.lines[0].get_ydata(), lam)
    ticks = [(v, label.get_text()) for v, label in zip(ax.get_yticks(), ax.get_yticklabels())
             if ax.get_ylim()[0] <= v <= ax.get_ylim()[1]]
    assert len(ticks) >= 3
    for value, text in ticks:
        assert len(text) <= 8
        assert float(text.replace("−", "-")) == pytest.approx(value + 0.5, abs=1e-13)
