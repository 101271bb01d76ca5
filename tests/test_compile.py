"""Compiled numeric functions against SymPy substitution at seeded random states.

The contract of ``lagsim/numeric/compile.py`` (docs/architecture.md): M q̈ = F + Aᵀλ, A q̈ = b (seed
001 §10.7, seed 003), φ and φ_q, the velocity terms (A, c) and h; every call returns fresh arrays.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from lagsim.numeric.compile import compile_model
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model, to_sympy

SYSTEMS = ("double_pendulum_constrained", "pendulum_natural", "skate", "moving_pivot_pendulum",
           "sho_table", "driven_damped_pendulum", "slider_crank")


def _values(model, rng):
    q = rng.uniform(-1.0, 1.0, model.n)
    qd = rng.uniform(-1.0, 1.0, model.n)
    t = float(rng.uniform(0.0, 2.0))
    subs = {sympy.Symbol(k): v for k, v in model.parameters.items()}
    subs.update({sympy.Symbol(str(s)): v for s, v in zip(model.q, q)})
    subs.update({sympy.Symbol(str(s)): v for s, v in zip(model.qd, qd)})
    subs[sympy.Symbol("t")] = t
    return t, q, qd, subs


def _num(expr, subs) -> np.ndarray:
    return np.array(to_sympy(expr).subs(subs).evalf(), dtype=float)


@pytest.mark.parametrize("name", SYSTEMS)
def test_compiled_functions_equal_substitution(name):
    model = build_model(load_spec(name))
    numeric = compile_model(model)
    rng = np.random.default_rng(7)
    for _ in range(3):
        t, q, qd, subs = _values(model, rng)
        M, F, A, b = numeric.dynamics(t, q, qd)
        np.testing.assert_allclose(M, _num(model.mass_matrix, subs), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(F, _num(model.forcing, subs).ravel(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(A, _num(model.A, subs).reshape(model.m, model.n),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b, _num(model.b, subs).ravel(), rtol=1e-12, atol=1e-12)
        assert numeric.energy(t, q, qd) == pytest.approx(float(_num(model.energy, subs)),
                                                         rel=1e-12, abs=1e-12)
        phi, phi_q = numeric.phi(t, q)
        expected = [float(_num(c.expression, subs)) for c in model.holonomic]
        np.testing.assert_allclose(phi, expected, rtol=1e-12, atol=1e-12)
        hol = [i for i, c in enumerate(model.constraints) if c.kind == "holonomic"]
        np.testing.assert_allclose(phi_q, A[hol], rtol=1e-12, atol=1e-12)
        w = [float(_num(c.velocity_form, subs)) for c in model.constraints]
        np.testing.assert_allclose(numeric.velocity_residual(t, q, qd), w, rtol=1e-12,
                                   atol=1e-12)


def test_every_call_returns_fresh_arrays():
    """solve_ivp keeps what an RHS returns: a reused buffer would corrupt its history."""
    numeric = compile_model(build_model(load_spec("double_pendulum_constrained")))
    q, qd = np.full(6, 0.3), np.zeros(6)
    first = numeric.dynamics(0.0, q, qd)
    kept = [a.copy() for a in first]
    numeric.dynamics(0.0, q + 0.5, qd + 1.0)
    for a, b in zip(first, kept):
        np.testing.assert_array_equal(a, b)


def test_time_dependence_is_detected():
    assert compile_model(build_model(load_spec("moving_pivot_pendulum"))).time_dependent
    assert not compile_model(build_model(load_spec("pendulum"))).time_dependent


def test_coordinates_named_like_cse_temporaries():
    """symengine's cse names its temporaries x0, x1, …; coordinates so named must not clash."""
    from lagsim.spec.system import parse_spec

    text = """
parameters: {m: 0.5, g: 9.81}
coordinates: [x0, x1, x2]
kinetic: 1/2*m*(x0_dot**2 + x1_dot**2 + x2_dot**2) + m*x0_dot*x1_dot
potential: m*g*(x1 + 2*x2) + x0**2*x1
"""
    model = build_model(parse_spec(text))
    numeric = compile_model(model)
    q = np.array([0.3, 0.2, 0.4])
    qd = np.array([0.1, -0.2, 0.5])
    kinetic = 0.5 * 0.5 * (qd @ qd) + 0.5 * qd[0] * qd[1]
    potential = 0.5 * 9.81 * (q[1] + 2 * q[2]) + q[0] ** 2 * q[1]
    assert numeric.energy(0.0, q, qd) == pytest.approx(kinetic + potential, rel=1e-14)
