"""Mass paths and rods for `plot --kind path` and `animate`."""

from __future__ import annotations

import numpy as np
import pytest

from lagsim.analysis.kinematics import mass_paths, rods
from lagsim.errors import InputError
from lagsim.output.io import Table
from lagsim.spec.system import load_spec, parse_spec
from lagsim.symbolic.model import build_model


def _table(columns, data):
    return Table(tuple(columns), np.asarray(data, dtype=float), "<test>")


def test_paths_of_the_double_pendulum_follow_its_positions():
    """002 §23.8: r1 = ℓ1 e1_x, r2 = r1 + ℓ2 e2_x with e_x = (cos θ, sin θ) on the constraints."""
    model = build_model(load_spec("double_pendulum_constrained"))
    t = np.linspace(0.0, 1.0, 5)
    th1, th2 = 0.3 * np.cos(t), -0.7 + t
    zeros = np.zeros_like(t)
    table = _table(["t", *model.coordinates],
                   np.column_stack([t, th1, th2, zeros, zeros, zeros, zeros]))
    paths = mass_paths(model, table)
    l1, l2 = model.parameters["l1"], model.parameters["l2"]
    np.testing.assert_allclose(paths["bob1"][0], l1 * np.cos(th1), atol=1e-14)
    np.testing.assert_allclose(paths["bob1"][1], l1 * np.sin(th1), atol=1e-14)
    np.testing.assert_allclose(paths["bob2"][0], l1 * np.cos(th1) + l2 * np.cos(th2), atol=1e-14)
    assert rods(model, paths) == [("origin", "bob1"), ("bob1", "bob2")]


def test_rods_of_a_closed_loop_follow_its_constraints():
    model = build_model(load_spec("slider_crank"))
    theta = np.linspace(0.0, 2.0, 7)
    r, l = model.parameters["r"], model.parameters["l"]
    x1, y1 = r * np.cos(theta), r * np.sin(theta)
    x2 = x1 + np.sqrt(l**2 - y1**2)
    table = _table(["t", "x1", "y1", "x2", "y2"],
                   np.column_stack([theta, x1, y1, x2, np.zeros_like(theta)]))
    assert rods(model, mass_paths(model, table)) == [("origin", "pin"), ("pin", "slider")]


def test_an_orbit_gets_no_rod_even_when_circular():
    """Kepler's r is a coordinate, not a constraint: a circular orbit is no rod."""
    model = build_model(load_spec("kepler"))
    t = np.linspace(0.0, 3.0, 7)
    table = _table(["t", "r", "theta"], np.column_stack([t, np.ones_like(t), t]))
    assert rods(model, mass_paths(model, table)) == []


def test_a_system_without_masses_has_no_path():
    model = build_model(parse_spec("coordinates: [r, theta]\n"
                                   "kinetic: 1/2*(r_dot**2 + r**2*theta_dot**2)\n"))
    table = _table(["t", "r", "theta"], [[0, 1, 0], [1, 1, 1]])
    with pytest.raises(InputError, match="declares no 'masses'"):
        mass_paths(model, table)
