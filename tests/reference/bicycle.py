"""The linearized benchmark bicycle of Meijaard, Papadopoulos, Ruina and Schwab (2007).

J. P. Meijaard, J. M. Papadopoulos, A. Ruina, A. L. Schwab, "Linearized dynamics equations for
the balance and steer of a bicycle: a benchmark and review", Proc. R. Soc. A 463 (2007)
1955–1982, doi:10.1098/rspa.2007.1857. For q = (lean φ, steer δ), eq. (5.3):

    M q̈ + v C1 q̇ + (g K0 + v² K2) q = 0,

with M, C1, K0, K2 from the 25 parameters of Table 1 by the formulas of Appendix A (A1–A25;
axes x forward, y right, z DOWN, origin at the rear contact, upright reference configuration).
``PUBLISHED`` holds the matrices printed in §5 (eq. 5.4, 14 digits) and ``TABLE2`` the
eigenvalues of Table 2 at v = 0, 1, …, 10 m/s, transcribed and cross-checked against two
independent public copies (D. L. Peterson's whipple eigenvalue tests, 2010–2011, and the
MATLAB script compute_benchmark_bicycle_matrices.m of J. K. Moore's course EME134).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

BENCHMARK: dict[str, float] = {
    "w": 1.02, "c": 0.08, "lam": math.pi / 10, "g": 9.81,
    "rR": 0.3, "mR": 2.0, "IRxx": 0.0603, "IRyy": 0.12,
    "xB": 0.3, "zB": -0.9, "mB": 85.0,
    "IBxx": 9.2, "IByy": 11.0, "IBzz": 2.8, "IBxz": 2.4,
    "xH": 0.9, "zH": -0.7, "mH": 4.0,
    "IHxx": 0.05892, "IHyy": 0.06, "IHzz": 0.00708, "IHxz": -0.00756,
    "rF": 0.35, "mF": 3.0, "IFxx": 0.1405, "IFyy": 0.28,
}
"""Table 1 of the paper (λ = π/10 is the steer axis tilt; products of inertia with z down)."""


@dataclass(frozen=True)
class Linear:
    """The four 2×2 matrices of eq. (5.3)."""

    M: np.ndarray
    C1: np.ndarray
    K0: np.ndarray
    K2: np.ndarray


PUBLISHED = Linear(
    M=np.array([[80.81722, 2.31941332208709], [2.31941332208709, 0.29784188199686]]),
    C1=np.array([[0.0, 33.86641391492494], [-0.85035641456978, 1.68540397397560]]),
    K0=np.array([[-80.95, -2.59951685249872], [-2.59951685249872, -0.80329488458618]]),
    K2=np.array([[0.0, 76.59734589573222], [0.0, 2.65431523794604]]),
)
"""The matrices printed in §5 of the paper, eq. (5.4)."""

TABLE2: dict[int, tuple[complex, ...]] = {
    0: (5.53094371765393, 3.13164324790656, -3.13164324790656, -5.53094371765393),
    1: (3.52696170990070 + 0.80774027519930j, 3.52696170990070 - 0.80774027519930j,
        -3.13423125066578, -7.11008014637442),
    2: (2.68234517512745 + 1.68066296590675j, 2.68234517512745 - 1.68066296590675j,
        -3.07158645641514, -8.67387984831735),
    3: (1.70675605663975 + 2.31582447384325j, 1.70675605663975 - 2.31582447384325j,
        -2.63366137253667, -10.35101467245920),
    4: (0.41325331521125 + 3.07910818603206j, 0.41325331521125 - 3.07910818603206j,
        -1.42944427361326, -12.15861426576450),
    5: (-0.77534188219585 + 4.46486771378823j, -0.77534188219585 - 4.46486771378823j,
        -0.32286642900409, -14.07838969279820),
    6: (-1.52644486584142 + 5.87673060598709j, -1.52644486584142 - 5.87673060598709j,
        -0.00406690076970, -16.08537123098030),
    7: (-2.13875644258362 + 7.19525913329805j, -2.13875644258362 - 7.19525913329805j,
        0.10268170574766, -18.15788466125262),
    8: (-2.69348683581097 + 8.46037971396931j, -2.69348683581097 - 8.46037971396931j,
        0.14327879765713, -20.27940894394569),
    9: (-3.21675402252485 + 9.69377351531791j, -3.21675402252485 - 9.69377351531791j,
        0.15790184030917, -22.43788559040858),
    10: (-3.72016840437287 + 10.90681139476287j, -3.72016840437287 - 10.90681139476287j,
         0.16105338653172, -24.62459635017404),
}
"""Table 2(b): the four eigenvalues (1/s) of the benchmark at forward speeds v = 0 … 10 m/s."""

WEAVE_SPEED = 4.29238253634111
"""Table 2(a): the speed (m/s) where the weave pair crosses to the left half plane."""
WEAVE_FREQUENCY = 3.43503384866144
"""Table 2(a): the imaginary part (rad/s) of the weave pair at the weave speed."""
CAPSIZE_SPEED = 6.02426201538837
"""Table 2(a): the speed (m/s) where the capsize eigenvalue crosses to the right half plane."""


def linear(p: dict[str, float] = BENCHMARK) -> Linear:
    """M, C1, K0, K2 from the parameters ``p`` by Appendix A, eqs. (A1)–(A25) of the paper."""
    w, c, lam = p["w"], p["c"], p["lam"]
    rR, mR, IRxx, IRyy = p["rR"], p["mR"], p["IRxx"], p["IRyy"]
    xB, zB, mB = p["xB"], p["zB"], p["mB"]
    IBxx, IBzz, IBxz = p["IBxx"], p["IBzz"], p["IBxz"]
    xH, zH, mH = p["xH"], p["zH"], p["mH"]
    IHxx, IHzz, IHxz = p["IHxx"], p["IHzz"], p["IHxz"]
    rF, mF, IFxx, IFyy = p["rF"], p["mF"], p["IFxx"], p["IFyy"]
    sl, cl = math.sin(lam), math.cos(lam)
    IRzz, IFzz = IRxx, IFxx
    # (A1)-(A5): the whole bicycle as one body
    mT = mR + mB + mH + mF
    xT = (xB * mB + xH * mH + w * mF) / mT
    zT = (-rR * mR + zB * mB + zH * mH - rF * mF) / mT
    ITxx = IRxx + IBxx + IHxx + IFxx + mR * rR**2 + mB * zB**2 + mH * zH**2 + mF * rF**2
    ITxz = IBxz + IHxz - mB * xB * zB - mH * xH * zH + mF * w * rF
    ITzz = IRzz + IBzz + IHzz + IFzz + mB * xB**2 + mH * xH**2 + mF * w**2
    # (A6)-(A11): the front assembly A = H + F
    mA = mH + mF
    xA = (xH * mH + w * mF) / mA
    zA = (zH * mH - rF * mF) / mA
    IAxx = IHxx + IFxx + mH * (zH - zA) ** 2 + mF * (rF + zA) ** 2
    IAxz = IHxz - mH * (xH - xA) * (zH - zA) + mF * (w - xA) * (rF + zA)
    IAzz = IHzz + IFzz + mH * (xH - xA) ** 2 + mF * (w - xA) ** 2
    # (A12)-(A15): about the steer axis
    uA = (xA - w - c) * cl - zA * sl
    IAll = mA * uA**2 + IAxx * sl**2 + 2 * IAxz * sl * cl + IAzz * cl**2
    IAlx = -mA * uA * zA + IAxx * sl + IAxz * cl
    IAlz = mA * uA * xA + IAxz * sl + IAzz * cl
    # (A16)-(A20)
    mu = c / w * cl
    SR, SF = IRyy / rR, IFyy / rF
    ST = SR + SF
    SA = mA * uA + mu * mT * xT
    # (A21)-(A25)
    M = np.array([[ITxx, IAlx + mu * ITxz],
                  [IAlx + mu * ITxz, IAll + 2 * mu * IAlz + mu**2 * ITzz]])
    K0 = np.array([[mT * zT, -SA], [-SA, -SA * sl]])
    K2 = np.array([[0.0, (ST - mT * zT) / w * cl], [0.0, (SA + SF * sl) / w * cl]])
    C1 = np.array([[0.0, mu * ST + SF * cl + ITxz / w * cl - mu * mT * zT],
                   [-(mu * ST + SF * cl), IAlz / w * cl + mu * (SA + ITzz / w * cl)]])
    return Linear(M=M, C1=C1, K0=K0, K2=K2)


def eigenvalues(v: float, model: Linear | None = None, g: float = BENCHMARK["g"]) -> np.ndarray:
    """The four eigenvalues of eq. (5.3) at speed ``v``, from its first-order form."""
    m = linear() if model is None else model
    stiffness = g * m.K0 + v**2 * m.K2
    Minv = np.linalg.inv(m.M)
    A = np.block([[np.zeros((2, 2)), np.eye(2)], [-Minv @ stiffness, -v * Minv @ m.C1]])
    return np.linalg.eigvals(A)


def weave_real_part(lams: np.ndarray) -> float:
    """Re of the weave pair: the eigenvalue of largest positive imaginary part."""
    return float(lams[np.argmax(lams.imag)].real)


def capsize_real_part(lams: np.ndarray) -> float:
    """The real eigenvalue nearest 0 among the real ones (the capsize mode, v > 1 m/s)."""
    real = lams[np.abs(lams.imag) < 1e-9 * (1 + np.abs(lams.real))].real
    return float(real[np.argmin(np.abs(real))])


def critical_speeds(eig: Callable[[float], np.ndarray] = eigenvalues) -> tuple[float, float]:
    """(weave speed, capsize speed): the roots of Re λ = 0 of those modes, bracketed in
    [3, 5] and [5.5, 7] m/s (Table 2(a) puts them at 4.29 and 6.02 m/s)."""
    weave = brentq(lambda v: weave_real_part(eig(v)), 3.0, 5.0, xtol=1e-14, rtol=1e-15)
    capsize = brentq(lambda v: capsize_real_part(eig(v)), 5.5, 7.0, xtol=1e-14, rtol=1e-15)
    return weave, capsize
