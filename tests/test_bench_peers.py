"""The peers of bench/peers.py integrate lagsim's chain; no timing here.

- PyDy's right-hand side (``generate_ode_function`` from the Kane anchor's ``KanesMethod``) is
  lagsim's at random states of the 3-chain, and each call gives its own array (PyDy overwrites
  one buffer, which ``solve_ivp`` would keep as a DOP853 stage);
- CasADi's SX chain (M = ∂²T/∂v², q̈ = solve(M, F)) is lagsim's at random states, and its
  CVODES run keeps the chain's energy (seed 001, Theorem 10.2: L has no explicit t) over 1 s;
- CasADi's IDAS on the natural 2-chain, in both index-1 forms of bench/constrained.py (with the
  accelerations algebraic, and the fair one with only λ algebraic), ends within 1e-6 of the
  hand-written double pendulum's (seed 002 §23.8) tight run at 10 s (φ̈ = 0 from a consistent
  start keeps φ = 0, seed 003);
- the sympy ``KanesMethod`` anchor has the ``LagrangesMethod`` anchor's right-hand side.
Each peer's test is skipped when the peer is not installed (the ``bench`` extra is optional).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from bench import anchor_numpy, anchor_sympy, constrained, peers
from lagsim.numeric.compile import compile_model
from lagsim.spec.chains import chain_yaml
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

N = 3


@pytest.fixture(scope="module")
def lagsim_rhs():
    return compile_model(build_model(parse_spec(chain_yaml(N)))).ode_rhs()


def states(seed: int, count: int = 10) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack((rng.uniform(-np.pi, np.pi, (count, N)),
                            rng.uniform(-3, 3, (count, N))))


def test_pydy_chain_is_lagsims(lagsim_rhs) -> None:
    pytest.importorskip("pydy")
    rhs = peers.pydy_chain(N, "lambdify")
    for y in states(31):
        np.testing.assert_allclose(rhs(0.0, y), lagsim_rhs(0.0, y), rtol=0, atol=1e-11)
    first, second = (rhs(0.0, y) for y in states(32, 2))
    assert not np.shares_memory(first, second)


def test_casadi_chain_is_lagsims_and_cvodes_keeps_its_energy(lagsim_rhs) -> None:
    ca = pytest.importorskip("casadi")
    x, ode = peers.casadi_chain(N)
    f = ca.Function("f", [x], [ode])
    for y in states(33):
        np.testing.assert_allclose(np.array(f(y)).ravel(), lagsim_rhs(0.0, y), rtol=0,
                                   atol=1e-11)
    integ = ca.integrator("chain", "cvodes", {"x": x, "ode": ode}, 0.0, 1.0,
                          {"abstol": 1e-10, "reltol": 1e-10, **peers.CVODES["adams"]})
    y0 = np.concatenate((np.full(N, peers.ANGLE), np.zeros(N)))
    end = np.array(integ(x0=y0)["xf"]).ravel()
    assert abs(end[N:]).max() > 0.5
    assert anchor_sympy.chain_energy(N, end) == pytest.approx(
        anchor_sympy.chain_energy(N, y0), abs=1e-7)


def test_kane_anchor_is_the_lagrange_anchor() -> None:
    n = 2
    kane = anchor_sympy.chain_functions(n, "kane").rhs
    lagrange = anchor_sympy.chain_functions(n).rhs
    rng = np.random.default_rng(34)
    for y in np.column_stack((rng.uniform(-np.pi, np.pi, (10, n)), rng.uniform(-3, 3, (10, n)))):
        np.testing.assert_allclose(kane(0.0, y), lagrange(0.0, y), rtol=0, atol=1e-11)


@pytest.mark.parametrize("form", list(constrained.CASADI_FORMS))
def test_idas_natural_chain_ends_where_the_double_pendulum_does(form: str) -> None:
    pytest.importorskip("casadi")
    _, bobs = constrained.casadi_chain(2, 1e-10, form)
    tight = solve_ivp(anchor_numpy.make_rhs(), (0.0, 10.0), [0.5, 0.5, 0.0, 0.0],
                      method="DOP853", rtol=1e-13, atol=1e-13)
    theta = tight.y[:2, -1]
    reference = np.column_stack((np.cumsum(np.sin(theta)), -np.cumsum(np.cos(theta))))
    np.testing.assert_allclose(bobs, reference, rtol=0, atol=1e-6)
    assert np.abs(bobs[:, 1]).max() > 0.5
