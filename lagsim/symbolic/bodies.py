"""Points of bodies: their positions, the velocities of the material points at them, and the
generalized forces of loads, torques and springs that act there.

A body's frame is its centre of mass r_c, that point's velocity ṙ_c, its rotation R (body axes
→ space axes) and its angular velocity ω in space axes. A point P is an offset d from the centre
of mass, given in body axes (d = R d_b) or in space axes. The velocity of P is that of the
body's material point at P at this instant (Goldstein, *Classical Mechanics*, 3rd ed., §4.9;
Kane & Levinson, *Dynamics: Theory and Applications*, §2.7):

    v_P = ṙ_c + ω × (r_P − r_c),

which is not d/dt r_P when d depends on q through space axes (a contact point moving over the
body's surface): rolling without slipping is v_P = 0 at the contact point (Neimark & Fufaev,
*Dynamics of Nonholonomic Systems*, AMS 1972, the rolling disk; O'Reilly, Nonlinear Dynamics 10
(1996) 287–305). A force
F at P has the generalized force Q_i = F·∂v_P/∂q̇_i and a moment M on the body Q_i = M·∂ω/∂q̇_i
(the virtual power of Kane's method, Kane & Levinson ch. 4: τ = J_vᵀF + J_ωᵀM), exact and
symbolic.
"""

from __future__ import annotations

from collections.abc import Sequence

import symengine as se

from lagsim.records import record
from lagsim.symbolic.rotations import AXES, elementary, intrinsic


@record
class Frame:
    """A body's (or a point mass's) centre of mass, its velocity, rotation and angular
    velocity: ``rotation`` is R (3×3) of a 3-D body, the 2×2 (about z) of a planar one, None
    for a point mass; ``omega`` is ω in space axes (3 components; (θ̇,) for a planar body) and
    ``omega_body`` ω in body axes (3-D only)."""

    position: tuple[se.Basic, ...]
    velocity: tuple[se.Basic, ...]
    rotation: se.DenseMatrix | None
    omega: tuple[se.Basic, ...]
    omega_body: tuple[se.Basic, ...] = ()


def euler_space_rates(sequence: str, angles: tuple[se.Basic, ...],
                      rates: tuple[se.Basic, ...], extrinsic: bool = False) -> list[se.Basic]:
    """ω in space axes of R = R_A(a) R_B(b) R_C(c): ȧ e_A + ḃ R_A e_B + ċ R_A R_B e_C (Ṙ Rᵀ
    written term by term; Goldstein §4.9), short because each term is one axis turned
    forward."""
    seq, ang = intrinsic(sequence, angles, extrinsic)
    rat = tuple(reversed(rates)) if extrinsic else tuple(rates)
    omega = [se.Integer(0)] * 3
    ahead = se.eye(3)
    for k in range(3):
        column = ahead.col(AXES[seq[k]])
        omega = [w + rat[k] * column[i, 0] for i, w in enumerate(omega)]
        ahead = ahead.mul_matrix(elementary(seq[k], ang[k]))
    return omega


def planar_rotation(angle: se.Basic) -> se.DenseMatrix:
    """The 2×2 rotation by a planar body's angle."""
    c, s = se.cos(angle), se.sin(angle)
    return se.DenseMatrix([[c, -s], [s, c]])


def offset(frame: Frame, components: Sequence[se.Basic], space: bool) -> tuple[se.Basic, ...]:
    """d = r_P − r_c in space axes: ``components`` as given (space) or turned by R (body
    axes; a planar body turns the first two about z)."""
    d = list(components)
    if space or frame.rotation is None:
        return tuple(d)
    R = frame.rotation
    k = R.rows
    turned = [se.Add(*(R[i, j] * d[j] for j in range(k))) for i in range(k)]
    return tuple(turned + d[k:])


def point_velocity(frame: Frame, d: Sequence[se.Basic]) -> tuple[se.Basic, ...]:
    """v_P = ṙ_c + ω × d, the velocity of the body's material point at r_c + d."""
    v = frame.velocity
    if frame.rotation is None:
        return tuple(v)
    if len(frame.omega) == 1:
        w = frame.omega[0]
        return (v[0] - w * d[1], v[1] + w * d[0], *v[2:])
    wx, wy, wz = frame.omega
    return (v[0] + wy * d[2] - wz * d[1], v[1] + wz * d[0] - wx * d[2],
            v[2] + wx * d[1] - wy * d[0])


def projected(vector: Sequence[se.Basic], velocity: Sequence[se.Basic],
              qd: Sequence[se.Symbol]) -> list[se.Basic]:
    """Q_i = vector · ∂velocity/∂q̇_i for each q̇_i: the generalized force of a force (velocity
    of its point) or a moment (angular velocity) by virtual power."""
    return [se.Add(*(f * se.diff(v, s) for f, v in zip(vector, velocity) if f != 0))
            for s in qd]


def spring_energy(stiffness: se.Basic, length: se.Basic | None,
                  d: Sequence[se.Basic]) -> se.Basic:
    """½k(|d| − L0)², written ½k|d|² without a root when there is no rest length."""
    square = se.Add(*(x**2 for x in d))
    if length is None or length == 0:
        return stiffness * square / 2
    return stiffness * (se.sqrt(square) - length) ** 2 / 2


def spring_dissipation(damping: se.Basic, d: Sequence[se.Basic],
                       rate: Sequence[se.Basic]) -> se.Basic:
    """½c(d|d|/dt)² = ½c (d·ḋ)²/|d|², the Rayleigh function of a dashpot along the spring
    (Goldstein §1.5)."""
    along = se.Add(*(x * y for x, y in zip(d, rate)))
    return damping * along**2 / (2 * se.Add(*(x**2 for x in d)))
