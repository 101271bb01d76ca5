"""``--method variational`` (issue 11; Marsden and West 2001 §3.4, docs/references.md): the
midpoint discrete Lagrangian's constrained discrete Euler–Lagrange equations on systems RATTLE
cannot take (M(q), rheonomic constraints) and on those it can.

References never come from lagsim itself: order 2 from a step-halving series, the constraint
φ = 0 (seed 001 §10.7), the energy h (seed 001) of an autonomous system, the Noether momenta
of a rotational symmetry (p_φ = m l² sin²θ φ̇ of the spherical pendulum, seed 001 Theorem 10.2
with φ cyclic; L_z in Cartesian coordinates). Systems are the inline ones of test_rattle.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner
from test_rattle import (
    A01,
    DAMPED,
    DOUBLE_NATURAL,
    MOVING_PIVOT,
    SKATE,
    SPHERICAL_ANGLES,
    SPHERICAL_CARTESIAN,
    end_state,
    energy_per_tenth,
    halving_order,
    run,
)

from lagsim.cli import main

DOUBLE_ANGLES = """
name: double_angles
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [a, b]
masses:
  p1: {mass: m, position: [l*sin(a), -l*cos(a)]}
  p2: {mass: m, position: [l*sin(a) + l*sin(b), -l*cos(a) - l*cos(b)]}
gravity: [0, -g]
initial: {a: 1.0, b: 2.0, a_dot: 0, b_dot: 0}
"""
"""The double pendulum in its angles: M depends on a − b."""

QUARTIC = """
name: quartic
parameters: {m: 1.0, k: 4.0}
coordinates: [x, y]
masses:
  bob: {mass: m, position: [x, y]}
potential: k*(x**4 + y**4) + x**2*y**2
constraints:
  - name: ring
    holonomic: x**2 + y**2 - 1
initial: {x: 1, y: 0, x_dot: 0, y_dot: 2}
"""
"""A bead on a ring in a quartic potential: the midpoint rule and RATTLE's trapezoidal rule
differ here (under a linear potential such as gravity they coincide)."""

MAGNETIC = """
name: magnetic
parameters: {m: 1.0, B: 2.0, k: 1.0}
coordinates: [x, y]
lagrangian: 1/2*m*(x_dot**2 + y_dot**2) + B/2*(x*y_dot - y*x_dot) - k/4*(x**2 + y**2)**2
initial: {x: 1, y: 0, x_dot: 0, y_dot: 1}
"""
"""A charge in a uniform magnetic field B (symmetric gauge) and a quartic central potential:
terms linear in q̇, so ∂L/∂q̇ ≠ M q̇ (refused by RATTLE). Its canonical angular momentum
m(x ẏ − y ẋ) + ½B(x² + y²) is conserved (rotations about the origin)."""


@pytest.mark.parametrize("text", [A01, DOUBLE_NATURAL, DOUBLE_ANGLES, MOVING_PIVOT, DAMPED,
                                  MAGNETIC],
                         ids=["pendulum", "double_natural", "double_angles_Mq",
                              "rheonomic", "forces", "magnetic"])
def test_order_two(text: str) -> None:
    """2.00 ± 0.05 from a step-halving series (h = 0.01, 0.005, 0.0025 up to t = 1)."""
    assert abs(halving_order(text, "variational", 0.01) - 2.0) <= 0.05


def test_differs_from_rattle_under_a_nonlinear_potential() -> None:
    """Both are of order 2 and agree to O(h²), and they are different methods."""
    rattle = end_state(QUARTIC, "rattle", 0.01)
    variational = end_state(QUARTIC, "variational", 0.01)
    assert 1e-8 < np.abs(rattle - variational).max() < 1e-2
    assert abs(halving_order(QUARTIC, "variational", 0.01) - 2.0) <= 0.05


@pytest.mark.parametrize("text", [A01, DOUBLE_NATURAL, MOVING_PIVOT],
                         ids=["pendulum", "double_natural", "rheonomic"])
def test_constraints_kept_to_rounding(text: str) -> None:
    traj = run(text, "variational", dt=0.01, t_end=20.0, samples=501)
    assert np.abs(traj.residual).max() <= 1e-13
    assert np.abs(traj.residual_dot).max() <= 1e-12


def test_energy_error_is_bounded_with_a_configuration_dependent_mass_matrix() -> None:
    """The spherical pendulum in its angles (M = m l² diag(1, sin²θ)) over 100 s at h = 0.02:
    the largest energy error of each tenth of the run within 10 % of every other tenth's."""
    traj = run(SPHERICAL_ANGLES, "variational", dt=0.02, t_end=100.0, samples=2001)
    tenths = energy_per_tenth(traj)
    assert tenths.max() <= 1.1 * tenths.min(), tenths
    assert tenths.max() < 1e-2


def test_energy_error_of_a01_is_bounded() -> None:
    traj = run(A01, "variational", dt=0.02, t_end=100.0, samples=2001)
    tenths = energy_per_tenth(traj)
    assert tenths.max() <= 1.1 * tenths.min(), tenths


def test_noether_momentum_of_the_azimuth() -> None:
    """φ is cyclic, so p_φ = m l² sin²θ φ̇ is the discrete Noether momentum of L_d: kept to
    1e-13 over 5·10³ steps."""
    traj = run(SPHERICAL_ANGLES, "variational", dt=0.01, t_end=50.0, samples=2001)
    theta, phi_dot = traj.q[:, 0], traj.qd[:, 1]
    p_phi = np.sin(theta) ** 2 * phi_dot
    assert abs(p_phi[0] - 3.0 * math.sin(1.0) ** 2) < 1e-14
    assert np.abs(p_phi - p_phi[0]).max() <= 1e-13


def test_spherical_pendulum_in_cartesian_coordinates_keeps_lz() -> None:
    traj = run(SPHERICAL_CARTESIAN, "variational", dt=0.01, t_end=50.0, samples=2001)
    x, y, _ = traj.q.T
    xd, yd, _ = traj.qd.T
    lz = x * yd - y * xd
    assert np.abs(lz - lz[0]).max() <= 1e-13


def test_numpy_path_agrees_with_c(monkeypatch) -> None:
    c = end_state(DOUBLE_ANGLES, "variational", 0.01)
    monkeypatch.setenv("LAGSIM_NO_CC", "1")
    numpy = end_state(DOUBLE_ANGLES, "variational", 0.01)
    assert np.abs(c - numpy).max() <= 1e-12


def test_velocity_constraint_is_refused_with_the_literature() -> None:
    result = CliRunner().invoke(main, ["simulate", "-", "--method", "variational", "--dt",
                                       "0.01"], input=SKATE)
    assert result.exit_code == 2
    message = result.output.strip()
    assert message.startswith("lagsim: error: ") and "\n" not in message
    assert "velocity constraint" in message
    assert "Cortés" in message and "McLachlan" in message


def test_a_step_too_large_for_newton_fails_with_the_time() -> None:
    """A step so large that Newton's method cannot converge ends the run with exit 1, the
    time and the advice to take a smaller --dt."""
    result = CliRunner().invoke(main, ["simulate", "-", "--method", "variational", "--dt",
                                       "3", "--t-end", "30"], input=DOUBLE_NATURAL)
    assert result.exit_code == 1, result.output
    assert "smaller --dt" in result.output


def test_canonical_angular_momentum_with_a_magnetic_field() -> None:
    """The Noether momentum of a Lagrangian with terms linear in q̇, kept to 1e-13 over 5·10³
    steps."""
    traj = run(MAGNETIC, "variational", dt=0.01, t_end=50.0, samples=1001)
    x, y = traj.q.T
    xd, yd = traj.qd.T
    p = x * yd - y * xd + 0.5 * 2.0 * (x**2 + y**2)
    assert abs(p[0] - 2.0) < 1e-15
    assert np.abs(p - p[0]).max() <= 1e-13


def test_rattle_refuses_terms_linear_in_velocities() -> None:
    result = CliRunner().invoke(main, ["simulate", "-", "--method", "rattle", "--dt", "0.01"],
                                input=MAGNETIC)
    assert result.exit_code == 2
    assert "not proportional to a velocity" in result.output
    assert "--method variational" in result.output
