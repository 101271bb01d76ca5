"""The benchmark's anchors and exact solution (bench/) compute the right thing; no timing here.

- the hand-written double-pendulum RHS (seed 002 §23.8) equals the sympy.physics.mechanics
  anchor's RHS at random states;
- the sympy anchor at n = 1 is θ̈ = −(g/l) sin θ (seed 001 Ex. 10.5) and conserves energy at n = 2;
- the Jacobi-elliptic pendulum solution (tests/reference/exact.py) matches a tight numerical
  solution and has period 4 K(k²)/ω.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from reference import exact
from scipy.integrate import solve_ivp

from bench import anchor_numpy, anchor_sympy, timing

G = 9.81


@pytest.fixture(scope="module")
def sympy_chain2() -> anchor_sympy.ChainFunctions:
    return anchor_sympy.chain_functions(2)


def test_numpy_rhs_matches_sympy_anchor(sympy_chain2) -> None:
    hand = anchor_numpy.make_rhs()
    rng = np.random.default_rng(2)
    for _ in range(20):
        y = np.concatenate([rng.uniform(-math.pi, math.pi, 2), rng.uniform(-3, 3, 2)])
        np.testing.assert_allclose(hand(0.0, y), sympy_chain2.rhs(0.0, y), rtol=0, atol=1e-10)


def test_numpy_rhs_unequal_links_against_seed_equations() -> None:
    """Residuals of both equations of seed 002 §23.8 vanish for m1 != m2, l1 != l2."""
    m1, m2, l1, l2 = 1.5, 0.4, 0.8, 1.3
    rhs = anchor_numpy.make_rhs(m1, m2, l1, l2, G)
    th1, th2, w1, w2 = 0.3, -1.1, 0.7, -2.0
    _, _, a1, a2 = rhs(0.0, np.array([th1, th2, w1, w2]))
    d = th2 - th1
    e1 = (
        (m1 + m2) * l1**2 * a1
        + m2 * l1 * l2 * (a2 * math.cos(d) - w2**2 * math.sin(d))
        + (m1 + m2) * G * l1 * math.sin(th1)
    )
    e2 = (
        m2 * l2**2 * a2
        + m2 * l1 * l2 * (a1 * math.cos(d) + w1**2 * math.sin(d))
        + m2 * G * l2 * math.sin(th2)
    )
    assert abs(e1) < 1e-12 and abs(e2) < 1e-12


def test_sympy_anchor_single_pendulum() -> None:
    rhs = anchor_sympy.chain_functions(1).rhs
    for th, w in [(0.5, 0.0), (2.0, -1.5), (-3.0, 4.0)]:
        np.testing.assert_allclose(
            rhs(0.0, np.array([th, w])), [w, -G * math.sin(th)], rtol=0, atol=1e-12
        )


def test_sympy_anchor_simulation_conserves_energy(sympy_chain2) -> None:
    sol = anchor_sympy.simulate(sympy_chain2.rhs, 2)
    assert sol.success
    e0 = anchor_sympy.chain_energy(2, anchor_sympy.initial_state(2))
    assert e0 == pytest.approx(-G * (2 + 1) * math.cos(0.5), abs=1e-12)
    assert abs(anchor_sympy.chain_energy(2, sol.y[:, -1]) - e0) < 1e-8


@pytest.fixture(scope="module")
def tight_pendulum():
    return solve_ivp(
        lambda t, y: [y[1], -G * math.sin(y[0])],
        (0.0, 12.0),
        [math.pi / 2, 0.0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
        dense_output=True,
    )


def test_exact_matches_tight_numerical_solution(tight_pendulum) -> None:
    times = np.array([0.0, 0.37, 1.0, 2.5, 4.2, 7.77, 12.0])
    theta, theta_dot = exact.angle(times)
    np.testing.assert_allclose(theta, tight_pendulum.sol(times)[0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(theta_dot, tight_pendulum.sol(times)[1], rtol=0, atol=1e-9)
    x, y = exact.position(times)
    num = tight_pendulum.sol(times)[0]
    np.testing.assert_allclose(x, np.sin(num), rtol=0, atol=1e-9)
    np.testing.assert_allclose(y, -np.cos(num), rtol=0, atol=1e-9)
    np.testing.assert_allclose(x**2 + y**2, 1.0, rtol=0, atol=1e-14)
    vx, vy = exact.velocity(times)
    np.testing.assert_allclose(x * vx + y * vy, 0.0, rtol=0, atol=1e-12)


def test_exact_period(tight_pendulum) -> None:
    p = exact.period(math.pi / 2)
    omega = math.sqrt(G)
    from scipy.special import ellipk

    assert p == pytest.approx(4 * ellipk(0.5) / omega, rel=1e-15)
    # half period: the numerical θ̇ first changes sign from negative to positive at p/2
    half = solve_ivp(
        lambda t, y: [y[1], -G * math.sin(y[0])],
        (0.0, 2.0),
        [math.pi / 2, 0.0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
        events=lambda t, y: y[1] if t > 0.1 else -1.0,
    )
    assert 2 * half.t_events[0][0] == pytest.approx(p, abs=1e-9)
    theta, _ = exact.angle([p / 4, p / 2, p, 7.5 * p])
    np.testing.assert_allclose(
        theta, [0.0, -math.pi / 2, math.pi / 2, -math.pi / 2], rtol=0, atol=1e-12
    )
    assert p > 2 * math.pi / omega
    assert exact.period(1e-4) == pytest.approx(2 * math.pi / omega, rel=1e-8)


def test_exact_rejects_over_the_top() -> None:
    with pytest.raises(ValueError, match="theta0"):
        exact.period(math.pi)


def test_median_time_cuts_repetitions_to_budget() -> None:
    result = timing.median_time(lambda: time.sleep(0.03), reps=5, budget_s=0.08)
    assert result["reps"] == 2 and "2 reps" in result["note"]
    assert 0.03 <= result["median"] < 0.2
