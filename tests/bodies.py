"""Helpers of the rigid-body tests (tests/test_body_points.py, test_rigid_bodies.py,
test_torque_free_body.py): a spec's run, the 3-angle body of every Euler sequence, and the
quaternion's G(e) and R(e)."""

from __future__ import annotations

import textwrap

import numpy as np
import symengine as se

from lagsim.output.trajectory import Trajectory
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import build_model

PRECISE = {"rtol": 1e-12, "atol": 1e-12}


def yml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def run(spec: SystemSpec, **flags: object) -> Trajectory:
    """``lagsim simulate`` of ``spec`` with ``flags`` over the file's ``simulate:``."""
    return simulate(spec, build_model(spec), SimulateOptions.resolve(spec.simulate, flags))


def euler_body(sequence: str, extrinsic: bool) -> str:
    """One body at the origin turned by the Euler ``sequence`` of the angles a, b, c."""
    flag = str(extrinsic).lower()
    return yml(f"""
        coordinates: [a, b, c]
        masses:
          body:
            mass: 1
            position: [0, 0, 0]
            orientation: {{euler: {sequence}, angles: [a, b, c], extrinsic: {flag}}}
            inertia: [1, 2, 2.5]
        """)


def angles_and_rates() -> tuple[tuple[se.Symbol, ...], tuple[se.Symbol, ...]]:
    """The symbols (a, b, c) and (a_dot, b_dot, c_dot) of :func:`euler_body`."""
    return (tuple(se.Symbol(n) for n in "abc"), tuple(se.Symbol(f"{n}_dot") for n in "abc"))


def g_matrix(e: np.ndarray) -> np.ndarray:
    """G(e) of ω_b = 2 G(e) ė (Schaub & Junkins §3.5), for a quaternion (4,) or an array of
    them (N, 4)."""
    e0, e1, e2, e3 = e.T
    return np.stack([np.stack([-e1, e0, e3, -e2], -1), np.stack([-e2, -e3, e0, e1], -1),
                     np.stack([-e3, e2, -e1, e0], -1)], -2)


def rotation(e: np.ndarray) -> np.ndarray:
    """R(e) (body → space, Goldstein §4.5), for a quaternion (4,) or an array of them (N, 4)."""
    e0, e1, e2, e3 = e.T
    return np.stack([
        np.stack([e0**2 + e1**2 - e2**2 - e3**2, 2 * (e1 * e2 - e0 * e3),
                  2 * (e1 * e3 + e0 * e2)], -1),
        np.stack([2 * (e1 * e2 + e0 * e3), e0**2 - e1**2 + e2**2 - e3**2,
                  2 * (e2 * e3 - e0 * e1)], -1),
        np.stack([2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1),
                  e0**2 - e1**2 - e2**2 + e3**2], -1)], -2)
