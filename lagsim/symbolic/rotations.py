"""Rotation matrices of Euler and Tait–Bryan sequences and the body angular velocity of a 3-D
rigid body.

R maps body components to space components (its columns are the body axes in space). An
intrinsic sequence ``ABC`` with angles (a, b, c) is R = R_A(a) R_B(b) R_C(c), rotations about the
body's moving axes; the extrinsic one, about the fixed axes in that order, is R = R_C(c) R_B(b)
R_A(a) (Goldstein, *Classical Mechanics*, 3rd ed., §4.4 and appendix A). The body angular
velocity ω_b is the axial vector of Rᵀ Ṙ (Landau & Lifshitz, *Mechanics*, §35; Goldstein §4.8).
"""

from __future__ import annotations

import symengine as se

AXES = {"X": 0, "Y": 1, "Z": 2}


def elementary(axis: str, angle: se.Basic) -> se.DenseMatrix:
    """The rotation by ``angle`` about the coordinate axis ``axis`` (X, Y or Z)."""
    k = AXES[axis]
    i, j = (k + 1) % 3, (k + 2) % 3
    c, s = se.cos(angle), se.sin(angle)
    m = [[se.Integer(0)] * 3 for _ in range(3)]
    m[k][k] = se.Integer(1)
    m[i][i], m[i][j], m[j][i], m[j][j] = c, -s, s, c
    return se.DenseMatrix(m)


def intrinsic(sequence: str, angles: tuple[se.Basic, ...], extrinsic: bool
              ) -> tuple[str, tuple[se.Basic, ...]]:
    """The intrinsic sequence and angles of the same rotation: an extrinsic ``ABC`` (a, b, c) is
    the intrinsic ``CBA`` (c, b, a)."""
    if extrinsic:
        return sequence[::-1], tuple(reversed(angles))
    return sequence, angles


def euler_matrix(sequence: str, angles: tuple[se.Basic, ...], extrinsic: bool = False
                 ) -> se.DenseMatrix:
    """R of a 3-letter sequence (e.g. ``ZXZ``) and its three angles."""
    seq, ang = intrinsic(sequence, angles, extrinsic)
    R = elementary(seq[0], ang[0])
    for axis, angle in zip(seq[1:], ang[1:]):
        R = R.mul_matrix(elementary(axis, angle))
    return R


def euler_body_rates(sequence: str, angles: tuple[se.Basic, ...], rates: tuple[se.Basic, ...],
                     extrinsic: bool = False) -> list[se.Basic]:
    """ω_b of R = R_A(a) R_B(b) R_C(c): ȧ R_Cᵀ R_Bᵀ e_A + ḃ R_Cᵀ e_B + ċ e_C, which equals the axial
    vector of Rᵀ Ṙ exactly and comes out short (each term is an axis turned back into the body
    frame). ``rates`` are the time derivatives of ``angles``."""
    seq, ang = intrinsic(sequence, angles, extrinsic)
    rat = tuple(reversed(rates)) if extrinsic else tuple(rates)
    omega = [se.Integer(0)] * 3
    back = se.eye(3)
    for k in (2, 1, 0):
        axis = [se.Integer(0)] * 3
        axis[AXES[seq[k]]] = se.Integer(1)
        turned = back.mul_matrix(se.DenseMatrix(3, 1, axis))
        omega = [w + rat[k] * turned[i, 0] for i, w in enumerate(omega)]
        back = back.mul_matrix(elementary(seq[k], ang[k]).T)
    return omega


def body_rates(R: se.DenseMatrix, Rdot: se.DenseMatrix) -> list[se.Basic]:
    """The axial vector of the skew part of Rᵀ Ṙ: (W₃₂, W₁₃, W₂₁) with W = ½(RᵀṘ − ṘᵀR), exact
    for any orthogonal R."""
    W = R.T.mul_matrix(Rdot)
    half = se.Rational(1, 2)
    return [half * (W[2, 1] - W[1, 2]), half * (W[0, 2] - W[2, 0]), half * (W[1, 0] - W[0, 1])]


def quaternion_matrix(e: tuple[se.Basic, ...]) -> se.DenseMatrix:
    """R of the unit quaternion (e0, e1, e2, e3), scalar first (Goldstein §4.5, the
    Euler–Rodrigues parameters)."""
    e0, e1, e2, e3 = e
    two = se.Integer(2)
    return se.DenseMatrix([
        [e0**2 + e1**2 - e2**2 - e3**2, two * (e1 * e2 - e0 * e3), two * (e1 * e3 + e0 * e2)],
        [two * (e1 * e2 + e0 * e3), e0**2 - e1**2 + e2**2 - e3**2, two * (e2 * e3 - e0 * e1)],
        [two * (e1 * e3 - e0 * e2), two * (e2 * e3 + e0 * e1), e0**2 - e1**2 - e2**2 + e3**2],
    ])


def quaternion_body_rates(e: tuple[se.Basic, ...], rates: tuple[se.Basic, ...]
                          ) -> list[se.Basic]:
    """ω_b = 2 G(e) ė with G = [−e⃗, e0·1 − [e⃗×]] (Schaub & Junkins, *Analytical Mechanics of
    Space Systems*, §3.5): the axial vector of Rᵀ Ṙ where |e| = 1."""
    e0, e1, e2, e3 = e
    G = [[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]]
    return [2 * se.Add(*(g * r for g, r in zip(row, rates))) for row in G]


def quaternion_rotation(e: tuple[se.Basic, ...], axis: int) -> list[se.Basic]:
    """δe = ½ (0, e_k) ⊗ e, the change of the quaternion e under a rotation of the body by a
    small angle about the space axis k: R(q ⊗ e) = R(q) R(e) with q = (1, ½ε e_k) turns R into
    (1 + ε[e_k×]) R (Goldstein §4.5; Schaub & Junkins §3.5). Linear in e and skew, so it keeps
    |e| and e·ė."""
    e0, e1, e2, e3 = e
    half = se.Rational(1, 2)
    vector = (e1, e2, e3)
    k = [se.Integer(int(i == axis)) for i in range(3)]
    cross = [k[1] * vector[2] - k[2] * vector[1], k[2] * vector[0] - k[0] * vector[2],
             k[0] * vector[1] - k[1] * vector[0]]
    return [-half * vector[axis], *(half * (e0 * k[i] + cross[i]) for i in range(3))]


def cross_axis(axis: int, r: tuple[se.Basic, ...]) -> list[se.Basic]:
    """e_k × r, the change of a point r under a small rotation about the space axis k."""
    i, j = (axis + 1) % 3, (axis + 2) % 3
    out = [se.Integer(0)] * 3
    out[i], out[j] = -r[j], r[i]
    return out
