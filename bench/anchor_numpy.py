"""Anchor: a hand-written RHS of the double pendulum, the floor for an RHS that Python calls.

Seed 002 §23.8 gives, with δ = θ2 − θ1 (angles from the downward vertical),

    (m1 + m2) l1² θ̈1 + m2 l1 l2 (θ̈2 cos δ − θ̇2² sin δ) + (m1 + m2) g l1 sin θ1 = 0,
    m2 l2² θ̈2 + m2 l1 l2 (θ̈1 cos δ + θ̇1² sin δ) + m2 g l2 sin θ2 = 0,

a 2×2 linear system a·θ̈ = r solved here by Cramer's rule written out. The state is
y = [θ1, θ2, θ̇1, θ̇2] as for the sympy anchor and lagsim's chain_2; scalar trigonometry uses
:mod:`math` (faster than numpy ufuncs on scalars), the result is a fresh numpy array.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

try:
    from timing import per_call_us
except ImportError:  # imported as bench.anchor_numpy
    from bench.timing import per_call_us


def make_rhs(
    m1: float = 1.0, m2: float = 1.0, l1: float = 1.0, l2: float = 1.0, g: float = 9.81
) -> Callable[[float, np.ndarray], np.ndarray]:
    """``rhs(t, y) -> dy/dt`` of the double pendulum of seed 002 §23.8."""
    a11 = (m1 + m2) * l1 * l1
    a22 = m2 * l2 * l2
    c12 = m2 * l1 * l2
    g1 = (m1 + m2) * g * l1
    g2 = m2 * g * l2
    sin, cos, array = math.sin, math.cos, np.array

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        th1, th2, w1, w2 = y.tolist()
        delta = th2 - th1
        s, c = sin(delta), cos(delta)
        a12 = c12 * c
        r1 = c12 * w2 * w2 * s - g1 * sin(th1)
        r2 = -c12 * w1 * w1 * s - g2 * sin(th2)
        det = a11 * a22 - a12 * a12
        return array([w1, w2, (a22 * r1 - a12 * r2) / det, (a11 * r2 - a12 * r1) / det])

    return rhs


def measure(reps: int = 5) -> dict[str, float]:
    """Microseconds per call of the hand-written RHS at all angles 0.5, velocities 0.1/-0.2."""
    rhs = make_rhs()
    y = np.array([0.5, 0.5, 0.1, -0.2])
    timing = per_call_us(rhs, 0.0, y, reps=reps)
    return {"n": 2, "rhs_us": timing["median"], "rhs_us_min": timing["min"], "reps": reps}


if __name__ == "__main__":
    print(measure())
