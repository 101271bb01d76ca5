"""Simulated motion against closed forms of the seeds and textbooks (issue 3, "Tests that must be
there"). Reference values never come from lagsim itself:

- the pendulum's exact Jacobi-elliptic solution (tests/reference/exact.py, seed 001 Ex. 10.5) and
  the harmonic solution θ0 cos ωt for small angles; the SHO's x0 cos ωt (seed 002 §23.6);
- the string tensions of seed 002 §23.7 (T = mℓθ̇² + mg cos θ) and §23.8 (μ1, μ2ℓ2), the SHO's
  normal force mg (§23.6);
- conservation of h (seed 001) and of the constraints, the skate's circle of radius v0/w.

Few long runs, shared by module fixtures, keep the file fast.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference import exact

from lagsim.numeric.compile import compile_model
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model

G = 9.81
THETA0 = math.pi / 6


def run(name: str, initial: dict | None = None, **flags):
    spec = load_spec(name, initial=initial)
    model = build_model(spec)
    options = SimulateOptions.resolve(spec.simulate, flags)
    return simulate(spec, model, options, numeric=compile_model(model))


def natural_angle(traj) -> tuple[np.ndarray, np.ndarray]:
    """θ = atan2(x, −y) and θ̇ = (x ẏ − y ẋ)/ℓ² of the natural coordinates (ℓ = 1)."""
    x, y = traj.q[:, 0], traj.q[:, 1]
    xd, yd = traj.qd[:, 0], traj.qd[:, 1]
    return np.arctan2(x, -y), (x * yd - y * xd) / (x**2 + y**2)


@pytest.fixture(scope="module")
def minimal():
    return run("pendulum", samples=11)


@pytest.fixture(scope="module")
def natural_projection():
    """100 s of the pendulum in natural coordinates at the defaults (index1 + projection)."""
    return run("pendulum_natural", t_end=100.0, samples=2001)


@pytest.fixture(scope="module")
def natural_none():
    return run("pendulum_natural", t_end=100.0, samples=2001, formulation="index1",
               stabilize="none")


@pytest.fixture(scope="module")
def natural_uk():
    return run("pendulum_natural", samples=11, formulation="udwadia-kalaba")


def test_pendulum_formulations_agree_with_the_exact_solution(minimal, natural_projection,
                                                             natural_uk) -> None:
    """θ(10) of seed 001 Ex. 10.5 in minimal and natural (index1, UK) form, to 1e-7."""
    reference = float(exact.angle(10.0, THETA0)[0])
    theta_index1 = natural_angle(natural_projection)[0]
    assert natural_projection.t[200] == 10.0
    assert natural_projection.formulation == "index1"
    values = {
        "minimal": minimal.q[-1, 0],
        "index1": theta_index1[200],
        "udwadia-kalaba": natural_angle(natural_uk)[0][-1],
    }
    for form, value in values.items():
        assert abs(value - reference) < 1e-7, (form, value, reference)


def test_reduced_pendulum_agrees() -> None:
    """002 §23.5/23.7: the reduced θ of pendulum_constrained and the reduced x of
    pendulum_natural (y = −√(ℓ² − x²) rebuilt) give the exact θ(10), the full CSV columns and
    the tension mℓθ̇² + mg cos θ from the rebuilt multipliers."""
    reference = float(exact.angle(10.0, THETA0)[0])
    constrained = run("pendulum_constrained", samples=101, formulation="reduced")
    assert constrained.formulation == "reduced" and constrained.stabilize == "none"
    assert constrained.columns == run("pendulum_constrained", samples=2).columns
    assert abs(constrained.q[-1, 0] - reference) < 1e-7
    assert np.abs(constrained.q[:, 1:]).max() == 0.0
    theta, w = constrained.q[:, 0], constrained.qd[:, 0]
    np.testing.assert_allclose(-constrained.lam[:, 0], w**2 + G * np.cos(theta), rtol=0,
                               atol=1e-6)
    assert np.abs(constrained.lam[:, 1]).max() < 1e-12
    natural = run("pendulum_natural", samples=101, formulation="reduced")
    theta_n, w_n = natural_angle(natural)
    assert abs(theta_n[-1] - reference) < 1e-7
    assert np.abs(natural.residual).max() < 1e-14 and np.abs(natural.residual_dot).max() < 1e-12
    np.testing.assert_allclose(-2.0 * natural.lam[:, 0], w_n**2 + G * np.cos(theta_n), rtol=0,
                               atol=1e-6)


def test_small_angle_matches_the_harmonic_solution() -> None:
    """θ0 = 1e-3: θ = θ0 cos ωt, ω = √(g/ℓ); the nonlinear frequency shift ω θ0²/16 moves the
    phase by 2e-6 rad over 10 s, so 1e-5 θ0 bounds the difference."""
    theta0 = 1e-3
    traj = run("pendulum", initial={"theta": theta0}, samples=201)
    harmonic = theta0 * np.cos(math.sqrt(G) * traj.t)
    assert np.abs(traj.q[:, 0] - harmonic).max() < 1e-5 * theta0
    assert np.abs(traj.q[:, 0]).max() == pytest.approx(theta0, rel=1e-9)


def test_sho_on_the_table() -> None:
    """Seed 002 §23.6: x = x0 cos ωt with ω = √(k/m) = 2, normal force λ_table = mg, λ_line = 0."""
    traj = run("sho_table", samples=101)
    assert traj.formulation == "index1"
    np.testing.assert_allclose(traj.q[:, 0], 0.5 * np.cos(2.0 * traj.t), rtol=0, atol=1e-9)
    assert np.abs(traj.q[:, 1:]).max() < 1e-14
    names = traj.constraint_names
    np.testing.assert_allclose(traj.lam[:, names.index("table")], G, rtol=1e-12)
    assert np.abs(traj.lam[:, names.index("line")]).max() < 1e-9


def test_string_tension_of_the_pendulum(natural_projection, natural_uk) -> None:
    """002 §23.7: T = mℓθ̇² + mg cos θ; natural coordinates have T = −2ℓλ_rod (φ_q = 2(x, y))."""
    for traj in (natural_projection, natural_uk):
        theta, w = natural_angle(traj)
        tension = w**2 + G * np.cos(theta)
        np.testing.assert_allclose(-2.0 * traj.lam[:, 0], tension, rtol=0, atol=1e-6)
    constrained = run("pendulum_constrained", samples=101)
    theta, w = constrained.q[:, 0], constrained.qd[:, 0]
    np.testing.assert_allclose(-constrained.lam[:, 0], w**2 + G * np.cos(theta), rtol=0,
                               atol=1e-6)
    assert np.abs(constrained.lam[:, 1]).max() < 1e-12


def test_string_tensions_of_the_double_pendulum() -> None:
    """002 §23.8: μ1 = λ_string1 and μ2ℓ2 = λ_string2, with θ̈ from the seed's two equations."""
    traj = run("double_pendulum_constrained", t_end=5.0, samples=101)
    m1 = m2 = l1 = l2 = 1.0
    th1, th2 = traj.q[:, 0], traj.q[:, 1]
    w1, w2 = traj.qd[:, 0], traj.qd[:, 1]
    d = th2 - th1
    mu1 = np.empty_like(th1)
    mu2l2 = np.empty_like(th1)
    for i in range(len(th1)):
        K = np.array([[(m1 + m2) * l1**2, m2 * l1 * l2 * math.cos(d[i])],
                      [m2 * l1 * l2 * math.cos(d[i]), m2 * l2**2]])
        rhs = -np.array([
            -m2 * l1 * l2 * w2[i]**2 * math.sin(d[i]) + (m1 + m2) * G * l1 * math.sin(th1[i]),
            m2 * l1 * l2 * w1[i]**2 * math.sin(d[i]) + m2 * G * l2 * math.sin(th2[i]),
        ])
        a1, a2 = np.linalg.solve(K, rhs)
        s12, c12 = math.sin(th1[i] - th2[i]), math.cos(th1[i] - th2[i])
        mu1[i] = (-(m1 + m2) * (l1 * w1[i]**2 + G * math.cos(th1[i]))
                  + m2 * l2 * (a2 * s12 - w2[i]**2 * c12))
        mu2l2[i] = -m2 * (G * math.cos(th2[i]) + l2 * w2[i]**2 + l1 * a1 * s12
                          + l1 * w1[i]**2 * c12)
    names = traj.constraint_names
    np.testing.assert_allclose(traj.lam[:, names.index("string1")], mu1, rtol=0, atol=1e-6)
    np.testing.assert_allclose(traj.lam[:, names.index("string2")], mu2l2, rtol=0, atol=1e-6)
    assert np.abs(mu1).max() > 10.0


def test_energy_is_conserved_over_100_s(natural_projection) -> None:
    """h of a conservative system stays within a relative 1e-8 over 100 s at the defaults."""
    minimal = run("pendulum", t_end=100.0, samples=101)
    for traj in (minimal, natural_projection):
        h = traj.energy
        assert h[0] == pytest.approx(-G * math.cos(THETA0), rel=1e-14)
        assert np.abs(h - h[0]).max() < 1e-8 * abs(h[0]), traj.formulation


def test_projection_keeps_the_constraint(natural_projection, natural_none) -> None:
    """|φ| < 1e-10 for 100 s with projection; without a stabilizer the drift is measurable
    (over a hundred times larger) and grows."""
    with_projection = np.abs(natural_projection.residual[:, 0]).max()
    without = np.abs(natural_none.residual[:, 0])
    assert with_projection < 1e-10
    assert np.abs(natural_projection.residual_dot[:, 0]).max() < 1e-10
    assert without.max() > 100 * max(with_projection, 1e-15)
    assert without[-200:].max() > without[:200].max()


def test_baumgarte_bounds_the_drift(natural_none) -> None:
    traj = run("pendulum_natural", t_end=100.0, samples=201, formulation="index1",
               stabilize="baumgarte")
    drift = np.abs(traj.residual[:, 0]).max()
    assert drift < np.abs(natural_none.residual[:, 0]).max()
    assert drift < 1e-8


def test_constraint_listed_twice(natural_uk) -> None:
    """Seed 004 Remarks: UK needs no independent constraints; the motion is the single one and
    the minimum-norm split halves the multiplier."""
    twice = run("pendulum_redundant", samples=11)
    assert twice.formulation == "udwadia-kalaba"
    np.testing.assert_allclose(twice.q, natural_uk.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(twice.lam.sum(axis=1), natural_uk.lam[:, 0], rtol=0, atol=1e-8)
    np.testing.assert_allclose(twice.lam[:, 0], twice.lam[:, 1], rtol=0, atol=1e-8)


def test_skate_traces_a_circle() -> None:
    """Knife edge at speed v0 turning at rate w: the blade constraint holds to 1e-9 and the path
    is the circle of radius v0/w = 2 about (0, 2); the ice pushes sideways with −m v0 w."""
    traj = run("skate", samples=401)
    assert np.abs(traj.residual[:, 0]).max() < 1e-9
    radius = np.hypot(traj.q[:, 0], traj.q[:, 1] - 2.0)
    np.testing.assert_allclose(radius, 2.0, rtol=0, atol=1e-8)
    np.testing.assert_allclose(traj.q[:, 2], 0.5 * traj.t, rtol=0, atol=1e-9)
    np.testing.assert_allclose(traj.lam[:, 0], -0.5, rtol=0, atol=1e-8)


def test_stop_when_the_pendulum_passes_the_bottom() -> None:
    """θ = π/6 reaches θ = 0 after a quarter period K(k²)/ω (tests/reference/exact.py)."""
    traj = run("pendulum", stop_when="theta")
    quarter = exact.period(THETA0) / 4
    assert traj.stop_reason == "stop_when"
    assert traj.t[-1] == pytest.approx(quarter, abs=1e-9)
    assert abs(traj.q[-1, 0]) < 1e-9
    assert np.all(np.diff(traj.t) > 0) and traj.t[-2] < traj.t[-1]
    assert "stopped at t = " in traj.message
