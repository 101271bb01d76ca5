"""Exact motion of the simple pendulum released from rest, for the work–precision workload.

Pendulum of seed 001 Ex. 10.5: θ̈ = −ω² sin θ, ω = sqrt(g/l), θ from the downward vertical,
bob at x = l sin θ, y = −l cos θ; released at rest from θ0 with |θ0| < π.

Derivation. Energy conservation, ½ l² θ̇² − g l cos θ = −g l cos θ0, gives
θ̇² = 2ω²(cos θ − cos θ0) = 4ω²(k² − sin²(θ/2)) with k = sin(θ0/2). Put sin(θ/2) = k s; then
θ̇ = 2k ṡ / cos(θ/2) and cos²(θ/2) = 1 − k² s², so ṡ² = ω² (1 − s²)(1 − k² s²): the equation of
the Jacobi function s = sn(u | m), m = k², u' = ±ω. Starting at the turning point s(0) = 1 = sn(K)
(K = K(m), the complete elliptic integral), s(t) = sn(K − ωt | m), hence

    θ(t) = 2 asin(k sn(K − ωt | m)),    θ̇(t) = −2 k ω cn(K − ωt | m)

(using d sn/du = cn dn and cos(θ/2) = dn(K − ωt | m)). The period is 4K(m)/ω.
``scipy.special.ellipj(u, m)`` and ``ellipk(m)`` take the parameter m = k².
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ellipj, ellipk


def _check(theta0: float) -> float:
    if not abs(theta0) < math.pi:
        raise ValueError(f"need |theta0| < pi for an oscillation, got {theta0}")
    return math.sin(theta0 / 2.0)


def period(theta0: float, g: float = 9.81, l: float = 1.0) -> float:
    """Period 4 K(k²) / ω of the pendulum of amplitude ``theta0``."""
    k = _check(theta0)
    return 4.0 * float(ellipk(k * k)) / math.sqrt(g / l)


def angle(
    t: ArrayLike, theta0: float = math.pi / 2, g: float = 9.81, l: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """θ(t) and θ̇(t) of the pendulum released at rest from ``theta0``."""
    k = _check(theta0)
    m = k * k
    omega = math.sqrt(g / l)
    u = float(ellipk(m)) - omega * np.asarray(t, dtype=float)
    sn, cn, _dn, _ph = ellipj(u, m)
    return 2.0 * np.arcsin(k * sn), -2.0 * k * omega * cn


def position(
    t: ArrayLike, theta0: float = math.pi / 2, g: float = 9.81, l: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Bob position x(t) = l sin θ, y(t) = −l cos θ (the natural coordinates of 001 §10.7)."""
    theta, _ = angle(t, theta0, g, l)
    return l * np.sin(theta), -l * np.cos(theta)


def velocity(
    t: ArrayLike, theta0: float = math.pi / 2, g: float = 9.81, l: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Bob velocity ẋ = l cos θ θ̇, ẏ = l sin θ θ̇."""
    theta, theta_dot = angle(t, theta0, g, l)
    return l * np.cos(theta) * theta_dot, l * np.sin(theta) * theta_dot


def position_error(
    t: float, x: float, y: float, theta0: float = math.pi / 2, g: float = 9.81, l: float = 1.0
) -> float:
    """Euclidean distance of (x, y) from the exact bob position at time t."""
    xe, ye = position(t, theta0, g, l)
    return float(math.hypot(x - float(xe), y - float(ye)))
