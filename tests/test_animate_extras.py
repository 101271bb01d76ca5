"""What an animation shows besides the masses (issue 14): the direction of gravity, a trail
drawn through the samples, springs, and progress on a terminal."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.text import Annotation

from lagsim.animate import _stage, gravity_arrow
from lagsim.kinematics import gravity_direction
from lagsim.spec import load_spec


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
    from lagsim.spec import parse_spec

    spec = parse_spec("parameters: {g: 9.81, m: 2}\ncoordinates: [x, y, z]\n"
                      "masses: {a: {mass: m, position: [x, y, z]}}\ngravity: [3*g, -4*g, -g]\n")
    np.testing.assert_allclose(gravity_direction(spec), (0.6, -0.8), rtol=1e-15)


def test_the_arrow_points_along_gravity_in_the_top_right_corner() -> None:
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    ax.set_aspect("equal")
    arrow = gravity_arrow(ax, (0.6, -0.8))
    (x0, y0), (x1, y1) = arrow.xyann, arrow.xy
    np.testing.assert_allclose([x1 - x0, y1 - y0], [0.06, -0.08], atol=1e-12)
    assert min(x0, x1) > 0.5 and min(y0, y1) > 0.5
    assert [t.get_text() for t in ax.texts if not isinstance(t, Annotation)] == ["g"]


def test_the_stage_of_an_animation_carries_the_arrow_only_with_gravity() -> None:
    colours = [(0.0, 0.0, 1.0, 1.0)]
    with_g, _ = _stage(-1, 1, -1, 1, ["bob"], colours, True, "t", 40, (0.0, -1.0))
    without, _ = _stage(-1, 1, -1, 1, ["bob"], colours, True, "t", 40, None)
    arrows = [a for a in with_g.axes[0].texts if isinstance(a, Annotation)]
    assert len(arrows) == 1 and arrows[0].xy[1] < arrows[0].xyann[1]
    assert not [a for a in without.axes[0].texts if isinstance(a, Annotation)]
