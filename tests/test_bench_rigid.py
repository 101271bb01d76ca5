"""The peers of bench/rigid_bodies.py are the same models as lagsim's; no timing here.

- the heavy top built with sympy.physics.mechanics (``LagrangesMethod``, ZXZ Euler angles) has
  lagsim's M and F at random states, and its ``KanesMethod`` twin (u = q̇) the same M;
- the free body's rotation matrix from ``orient_quaternion`` is the bench's R(e) (Goldstein
  §4.5), the one the agreement of the two runs is measured with, and ω = 2 G(e) ė is the body
  rate of that R (the axial vector of Rᵀ Ṙ, Goldstein §4.8).
"""

from __future__ import annotations

import numpy as np
import pytest

from bench import rigid_bodies
from lagsim import api
from lagsim.numeric.compile import compile_model


@pytest.fixture(scope="module")
def top() -> dict:
    return rigid_bodies.mechanics_top()


def test_mechanics_top_has_lagsims_mass_matrix_and_forcing(top) -> None:
    system = api.open_system("heavy_top")
    numeric = compile_model(system.model)
    p = system.parameters
    values = [p[k] for k in ("m", "g", "l", "I1", "I3")]
    rng = np.random.default_rng(24)
    for _ in range(10):
        q = rng.uniform(-np.pi, np.pi, 3)
        q[1] = rng.uniform(0.2, np.pi - 0.2)
        qd = rng.uniform(-5, 5, 3)
        y = np.concatenate([q, qd])
        M, F, _, _ = numeric.dynamics(0.0, q, qd)
        full_M = top["mass"](y, values)
        full_F = np.asarray(top["forcing"](y, values)).ravel()
        np.testing.assert_allclose(full_M[3:, 3:], M, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(full_F[3:], F, rtol=1e-12, atol=1e-11)
        np.testing.assert_allclose(full_F[:3], qd, rtol=0, atol=0)


def test_kane_top_has_the_same_mass_matrix(top) -> None:
    import sympy

    lagrange, kane = top["lagrange"][0], top["kane"][0]
    assert sympy.simplify(lagrange - kane) == sympy.zeros(3, 3)


def test_free_body_rotation_and_rates_conventions() -> None:
    free = rigid_bodies.mechanics_free_body()
    rng = np.random.default_rng(7)
    for _ in range(10):
        e = rng.normal(size=4)
        e /= np.linalg.norm(e)
        R = rigid_bodies.quaternion_matrix(e)
        np.testing.assert_allclose(np.array(free["R"](e), dtype=float), R, atol=1e-14)
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-14)
        ed = rng.normal(size=4)
        ed -= (ed @ e) * e
        h = 1e-6
        dR = (rigid_bodies.quaternion_matrix(e + h * ed)
              - rigid_bodies.quaternion_matrix(e - h * ed)) / (2 * h)
        W = R.T @ dR
        axial = np.array([W[2, 1], W[0, 2], W[1, 0]])
        np.testing.assert_allclose(rigid_bodies.body_rates(e, ed), axial, atol=1e-8)
