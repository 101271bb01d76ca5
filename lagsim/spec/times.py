"""The sample times of a run, each the double nearest its exact decimal value (issue 15: the
time 0.15 is written 0.15, not 0.15000000000000002 as from ``np.linspace``).

They are the spec's arithmetic on the decimals the user wrote (``t_start``, ``t_end``, ``dt``),
read by :meth:`lagsim.spec.options.SimulateOptions.sample_times`.
"""

from __future__ import annotations

import math

import numpy as np

_EXACT = 2**53
"""Integers below this are exact doubles, so their quotient is correctly rounded (IEEE 754)."""
_SLOW_ROWS = 200_000
"""Up to this many rows, times whose integers pass 2**53 are divided exactly in Python (about
0.3 µs a row)."""


def _decimal(x: float) -> tuple[int, int]:
    """(m, s) with x = m / 10**s exactly for the shortest decimal that reads back as ``x``
    (``repr``, which writes ``[-]digits[.digits][e±exponent]``), s ≥ 0; read from the text
    itself, not through the decimal module (a millisecond of every run's start-up, issue 31)."""
    text = repr(float(x))
    if not math.isfinite(x):
        raise ValueError(f"{x!r} is not finite")
    digits, _, power = text.partition("e")
    whole, _, fraction = digits.partition(".")
    mantissa = int(whole + fraction)
    exponent = int(power or "0") - len(fraction)
    return (mantissa * 10**exponent, 0) if exponent >= 0 else (mantissa, -exponent)


def _common(*values: float) -> tuple[list[int], int]:
    """The decimals of ``values`` as integers over one power of ten: ([m...], s)."""
    parts = [_decimal(v) for v in values]
    scale = max(s for _, s in parts)
    return [m * 10 ** (scale - s) for m, s in parts], scale


def clean_times(t0: float, t1: float, n: int) -> np.ndarray:
    """n equally spaced times from t0 to t1, both ends included: t_k = t0 + k (t1 − t0)/(n − 1)
    computed exactly from the decimals t0 and t1 as written, then rounded once, so that each t_k
    is the double nearest its decimal value (0.15 prints as 0.15, not 0.15000000000000002 as from
    ``np.linspace``). Where the integers involved pass 2**53 the quotients are Python's exact
    integer divisions (also correctly rounded), up to :data:`_SLOW_ROWS` rows; beyond that
    ``np.linspace``'s values, within an ulp of these."""
    if n < 2:
        return np.array([t0], dtype=float)
    (a, b), scale = _common(t0, t1)
    steps = n - 1
    denominator = steps * 10**scale
    if max(abs(a), abs(b)) * steps >= _EXACT or denominator >= _EXACT:
        if n > _SLOW_ROWS:
            return np.linspace(t0, t1, n)
        return np.array([(a * steps + k * (b - a)) / denominator for k in range(n)])
    k = np.arange(n, dtype=np.int64)
    numerator = a * steps + k * (b - a)
    return numerator.astype(float) / float(denominator)


def clean_steps(t0: float, dt: float, n: int) -> np.ndarray:
    """t_k = t0 + k·dt for k < n, each the double nearest its exact decimal value (as
    :func:`clean_times`, with the same limits)."""
    (a, c), scale = _common(t0, dt)
    denominator = 10**scale
    if abs(a) + abs(c) * max(n - 1, 0) >= _EXACT or denominator >= _EXACT:
        if n > _SLOW_ROWS:
            return t0 + dt * np.arange(n)
        return np.array([(a + k * c) / denominator for k in range(n)], dtype=float)
    k = np.arange(n, dtype=np.int64)
    return (a + k * c).astype(float) / float(denominator)
