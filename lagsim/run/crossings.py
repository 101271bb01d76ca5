"""Where an event expression g crosses zero inside an accepted step (``--stop-when``,
``--section``; issue 32, "crossings missed").

Comparing the signs of g at the ends of each accepted step misses every step in which g changes
sign twice (or any even number of times): the solver chooses its steps for the motion, not for
g, and g may depend on t or on the state faster than the motion moves (``sin(2*pi*t)`` on a
free mass, whose polynomial motion lets DOP853 take steps of tens of seconds). Shampine and
Thompson ("Event location for ordinary differential equations", Comput. Math. Appl. 39 (2000)
43-54) locate events on the step's interpolant; this module does so at a resolution tied to g's
own rate.

:class:`Scan` cuts the step [a, b] at :data:`SPLIT`, recursively, until on each piece [u, v] g
is *simple*: with values g_u, g_v and slopes d_u, d_v at the ends (one-sided differences on the
dense output, :data:`SLOPE_STEP` of the step apart) the cubic Hermite interpolant H of g is
H = chord + L·[(d_u − c)·s(1 − s)² − (d_v − c)·s²(1 − s)] with c = (g_v − g_u)/L and s in
[0, 1], so |H − chord| ≤ r = (4/27)·L·(|d_u − c| + |d_v − c|) and |H′ − c| ≤ |d_u − c| + |d_v − c|.
The value of g at the cut x = u + SPLIT·L checks H there (e = |g_x − H(x)|). A piece is simple
when

* g is monotone: |d_u − c| + |d_v − c| ≤ |c|/2 and 16·e ≤ |g_v − g_u| (one crossing where g
  changes sign, found by Brent's method on the dense output, else none), or
* g has one sign at both ends and 2·(r + 2e) < min(|g_u|, |g_v|) (g stays clear of zero).

Most steps need no scan: :func:`clear` applies the same test to the whole step from g at
states off the dense output (:func:`probes`: on the tangents near the ends and the state's
cubic Hermite interpolant at the cut), and only a step that is not clear of zero that way makes
its dense output (three more evaluations of DOP853) and is scanned.

A piece is cut down to :data:`SMALLEST` of the step at most. A piece still not simple then
(unless g leaves an exact zero at one of its ends, :func:`leaves_zero`), or any piece after it
in the same step, is *unresolved*: its sign changes are still taken, but it may hide pairs of
crossings, and the run says so once on stderr (:func:`message`, in the style of the
sample-aliasing warning, :mod:`lagsim.run.aliasing`). Not when the caller gives g a rounding
``zero`` > 0 and g is within it at both ends and at the cut (:func:`rounding`): g is 0 there
to rounding, its sign changes are rounding's (the gap of two bodies that left an impact
together, at 0 with the rate 0: the cradle's balls 2 and 3, :mod:`lagsim.run.engines.impacts`),
and the slopes, difference quotients of that rounding over :data:`SLOPE_STEP` of the step,
cannot be made simple by cutting. Such a piece also ends the cutting in its step, as an
unresolved one does, so that a g at 0 to rounding over a whole step costs no more than an
unresolved step; a later piece of the step that is not simple and leaves the band is unresolved.

The C step loop (``lagsim/numeric/c/cloop.c``, ``scan_step``) does the same, operation for
operation, so both loops find the same crossings.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

SPLIT = (3.0 - 5.0 ** 0.5) / 2.0
"""Where a piece [u, v] is looked at and cut: u + SPLIT·(v − u), the golden section. Not the
middle: pieces halved again and again share their points, so a g periodic with a period near
a piece's length looks the same at every one of them (sin(400 t) on a step of 1 hid 8 zeros
that way); the golden section is the cut least often in step with a period."""
SPLIT_P = SPLIT * (1.0 - SPLIT) ** 2
SPLIT_Q = SPLIT ** 2 * (1.0 - SPLIT)
H00, H10 = 2.0 * SPLIT ** 3 - 3.0 * SPLIT ** 2 + 1.0, SPLIT ** 3 - 2.0 * SPLIT ** 2 + SPLIT
H01, H11 = -2.0 * SPLIT ** 3 + 3.0 * SPLIT ** 2, SPLIT ** 3 - SPLIT ** 2
"""The cubic Hermite basis at SPLIT (:func:`probes`)."""
SMALLEST = 2.0 ** -12
"""A piece no longer than this fraction of its step is not cut again: g is followed to 1/4096
of the step."""
SLOPE_STEP = 2.0 ** -24
"""The slope of g at a point is the difference quotient over this fraction of the step (at
least :data:`SLOPE_FLOOR` of |t|, a few units in the last place): forward, and backward at the
step's end, so that every value lies inside the step."""
SLOPE_FLOOR = 2.0 ** -50
XTOL = 1e-14
"""Brent's absolute tolerance, relative to max(1, |b|) at the step's end b."""
RTOL = 4 * 2.220446049250313e-16


def simple(gu: float, du: float, gv: float, dv: float, gx: float, length: float) -> bool:
    """Whether g is simple on a piece of ``length`` (the module docstring) whose value at the
    cut (:data:`SPLIT`) is gx: clear of zero, or monotone through it."""
    c = (gv - gu) / length
    a, b = abs(du - c), abs(dv - c)
    e = abs(gx - (gu + length * (c * SPLIT + (du - c) * SPLIT_P - (dv - c) * SPLIT_Q)))
    monotone = a + b <= 0.5 * abs(c) and 16.0 * e <= abs(gv - gu)
    if gu * gv > 0.0:
        return monotone or 2.0 * (4.0 / 27.0 * length * (a + b) + 2.0 * e) < min(abs(gu),
                                                                                 abs(gv))
    return monotone


def rounding(gu: float, gv: float, gx: float, zero: float) -> bool:
    """Whether g is 0 to rounding on a piece: within ``zero`` of 0 at both ends and at the cut
    (never for ``zero`` = 0, an expression without a rounding band)."""
    return max(abs(gu), abs(gv), abs(gx)) < zero


def leaves_zero(gu: float, du: float, gv: float, dv: float, gx: float, length: float) -> bool:
    """Whether g, exactly 0 at one end of a piece of ``length`` and not at the other, leaves
    that zero (or comes to it) without crossing inside, as far as the piece shows: g at the cut
    on the other end's side and the cubic model right there (16·e ≤ |g_v − g_u|). A piece too
    short to cut that does so is not unresolved (a start on the section with zero slope, t² at
    t = 0, is not a hidden pair)."""
    if (gu == 0.0) == (gv == 0.0):
        return False
    c = (gv - gu) / length
    e = abs(gx - (gu + length * (c * SPLIT + (du - c) * SPLIT_P - (dv - c) * SPLIT_Q)))
    return gx * (gu + gv) > 0.0 and 16.0 * e <= abs(gv - gu)


Visit = Callable[[float, float, float, float], bool]
"""visit(u, g_u, v, g_v) for each piece in time order; True ends the scan (a stop found)."""


def offset(x: float, h: float) -> float:
    """How far from x the slope of g at x is taken, in a step of length h."""
    return max(h * SLOPE_STEP, abs(x) * SLOPE_FLOOR)


def probes(a: float, ya: np.ndarray, fa: np.ndarray, b: float, yb: np.ndarray, fb: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """The times and states (columns) at which :func:`clear` looks at g in the step [a, b]
    from the state ya (derivative fa) to yb (fb) without its dense output: near each end on
    the tangent (y ± δ·f, the slope's offset), and at the cut of the state's cubic Hermite
    interpolant, H00·ya + H10·h·fa + H01·yb + H11·h·fb."""
    h = b - a
    after, before = a + offset(a, h), b - offset(b, h)
    states = np.column_stack((ya + (after - a) * fa, yb - (b - before) * fb,
                              H00 * ya + H10 * h * fa + H01 * yb + H11 * h * fb))
    return np.array([after, before, a + SPLIT * h]), states


def clear(a: float, ga: float, b: float, gb: float, times: np.ndarray, values: np.ndarray
          ) -> bool:
    """Whether g stays clear of zero on the whole step [a, b], from its values ga, gb at the
    ends and ``values`` at the :func:`probes` ``times``: one sign at both ends and the test of
    :func:`simple` on the step as one piece. Most steps are clear; only the others are
    scanned on the dense output (which DOP853 makes with three more evaluations)."""
    after, before = float(times[0]), float(times[1])
    return ga * gb > 0.0 and simple(ga, (float(values[0]) - ga) / (after - a), gb,
                                    (float(values[1]) - gb) / (before - b), float(values[2]),
                                    b - a)


class Scan:
    """The pieces of accepted steps (the module docstring), for one run.

    ``g(times)`` is the expression at each of ``times`` on the current step's dense output (an
    array; it raises at the first non-finite value). ``missed`` is the first unresolved piece of
    the run (u, v, step length), or None. ``zero`` is the band within which g counts as 0 to
    rounding in the current step (:func:`rounding`; 0: none).
    """

    def __init__(self, g: Callable[[np.ndarray], np.ndarray]) -> None:
        self.g = g
        self.missed: tuple[float, float, float] | None = None
        self.h = 0.0
        self.zero = 0.0
        self.exhausted = False

    def carry(self, missed: tuple[float, float, float]) -> None:
        """Take ``missed`` as the run's first unresolved piece unless one is known: the C
        loop's scan of the same run found it (and said so) before the run went on here."""
        if self.missed is None:
            self.missed = missed

    def step(self, a: float, b: float, gb: float, visit: Visit, ga: float | None = None,
             zero: float = 0.0) -> bool:
        """Visit the pieces of the step [a, b] whose end value is ``gb`` (and start value
        ``ga``, evaluated on the dense output when None), g within ``zero`` of 0 being 0 to
        rounding (:func:`rounding`); True when a visit ended the scan."""
        h = self.h = b - a
        self.zero = zero
        self.exhausted = False
        after, before, x = a + offset(a, h), b - offset(b, h), a + SPLIT * h
        values = self.g(np.array([after, before, x] if ga is not None
                                 else [a, after, before, x]))
        if ga is None:
            ga, values = float(values[0]), values[1:]
        da = (float(values[0]) - ga) / (after - a)
        db = (float(values[1]) - gb) / (before - b)
        return self._piece(a, ga, da, b, gb, db, x, float(values[2]), visit)

    def _piece(self, u: float, gu: float, du: float, v: float, gv: float, dv: float,
               x: float, gx: float, visit: Visit) -> bool:
        """The piece [u, v] with its cut x, cut there while g is not simple on it."""
        if not (u < x < v):
            return visit(u, gu, v, gv)
        if not simple(gu, du, gv, dv, gx, v - u):
            if v - u > self.h * SMALLEST and not self.exhausted:
                after = x + offset(x, self.h)
                left, right = u + SPLIT * (x - u), x + SPLIT * (v - x)
                ga, gl, gr = (float(y) for y in self.g(np.array([after, left, right])))
                dx = (ga - gx) / (after - x)
                return (self._piece(u, gu, du, x, gx, dx, left, gl, visit)
                        or self._piece(x, gx, dx, v, gv, dv, right, gr, visit))
            if self.exhausted or not leaves_zero(gu, du, gv, dv, gx, v - u):
                self.exhausted = True
                if self.missed is None and not rounding(gu, gv, gx, self.zero):
                    self.missed = (u, v, self.h)
        return visit(u, gu, x, gx) or visit(x, gx, v, gv)


def message(flag: str, text: str, missed: tuple[float, float, float]) -> str:
    """The warning of a run whose ``flag`` expression ``text`` was not resolved on the piece
    ``missed`` (u, v, step length) of :attr:`Scan.missed` (the Python loop's and the C loop's)."""
    u, v, h = missed
    return (f"warning: {flag} {text} could not be followed between t = {u:.6g} and t = "
            f"{v:.6g} (a step of {h:.3g}, followed to {SMALLEST * h:.2g}: it changes too fast "
            f"there, or grazes zero): crossings there may be missed; give a smaller --rtol for "
            f"shorter steps, or an expression that varies no faster than the motion")


def bound_evaluators(compiled: Callable[[np.ndarray], np.ndarray], k: int,
                     values: np.ndarray) -> tuple[Callable[..., float],
                                                  Callable[[np.ndarray], np.ndarray]]:
    """An event expression compiled with the state's ``k`` arguments followed by the
    parameters, bound to the parameter ``values``: (g(*state) at one state, g at each row of an
    (N, k) array of states). The values are run-time inputs, so one compiled function serves
    every parameter value of a sweep."""
    x = np.empty(k + len(values))
    x[k:] = values

    def function(*state: float) -> float:
        x[:k] = state
        return float(compiled(x)[0])

    def rows(points: np.ndarray) -> np.ndarray:
        full = np.empty((len(points), k + len(values)))
        full[:, :k] = points
        full[:, k:] = values
        return np.asarray(compiled(full), dtype=float)[:, 0]

    return function, rows
