"""Whether an expression truly depends on a symbol, at the parameters' values (issue 29).

An expression derived from mass positions keeps identities unsimplified: the spun hoop's
Lagrangian holds ``sin(w*t)**2 + cos(w*t)**2``, the pendulum's mass matrix
``l**2*(sin(theta)**2 + cos(theta)**2)``, and a driven system run with ``--set F0=0`` keeps
``F0*cos(W*t)`` with F0 = 0. Reading ``free_symbols`` calls all three time- or
configuration-dependent. :func:`varying` decides on the function instead:

1. a symbol absent from the expression, or one given a value (a parameter), is not varied;
2. for each remaining symbol s, the expression is evaluated at seeded random points p and at p
   with s alone moved (every other symbol random, the parameters at their values, all of it in
   mpmath at 100 and at 200 bits, so that an identity of the parameters' values cancels too).
   A difference e(p) − e(p′) that is the same at both precisions (to 2⁻⁵⁰ of itself) is a true
   change: s is varying, for certain. A difference that shrinks with the precision is the
   rounding of an identity;
3. when :data:`POINTS` pairs show no change, the cheap symbolic tidying of
   :func:`lagsim.symbolic.tidy.combine_trig` (expand, Pythagoras, angle sums) is asked to confirm
   that ∂e/∂s is 0; where it does not reach (parameters' values, other identities), the verdict
   rests on :data:`UNCONFIRMED_POINTS` further pairs (a non-zero analytic function vanishes on a set
   of measure zero: probabilistic identity testing, J. T. Schwartz, J. ACM 27 (1980) 701–717).

A point where the expression cannot be evaluated (outside a function's domain in a way mpmath
refuses, an unevaluated derivative) does not count; when no point can be evaluated the symbol is
taken as varying, the cautious answer for every caller (equilibria, modes, rattle).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import mpmath
import numpy as np
import symengine as se

from lagsim.spec.expressions import diff

POINTS = 6
"""Random pairs of points at which a symbol's effect is tested."""
UNCONFIRMED_POINTS = 24
"""Further pairs tested when the symbolic tidying does not confirm a numerical zero."""
SEED = 20290429
LOW_BITS, HIGH_BITS = 100, 200
STABLE = 2.0 ** -50
"""A difference is a true change when its 100- and 200-bit values agree to this, relatively."""

_UNARY = {
    "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "asin": mpmath.asin,
    "acos": mpmath.acos, "atan": mpmath.atan, "sinh": mpmath.sinh, "cosh": mpmath.cosh,
    "tanh": mpmath.tanh, "log": mpmath.log, "Abs": abs, "sign": mpmath.sign,
}


class _Unevaluable(Exception):
    """The expression has no value here (or holds something the evaluator does not know)."""


def _evaluate(expr: se.Basic, point: Mapping[se.Basic, Any], memo: dict[se.Basic, Any]) -> Any:
    """``expr`` at ``point`` (symbol → mpmath number) in the current mpmath precision."""
    if expr in memo:
        return memo[expr]
    kind = type(expr).__name__
    if kind == "Symbol":
        if expr not in point:
            raise _Unevaluable(str(expr))
        value = point[expr]
    elif expr.is_Integer:
        value = mpmath.mpf(int(expr))
    elif expr.is_Rational:
        num, den = expr.get_num_den()
        value = mpmath.mpf(int(num)) / int(den)
    elif kind == "RealDouble":
        value = mpmath.mpf(float(expr))
    elif kind == "Pi":
        value = mpmath.pi
    elif kind == "Exp1":
        value = mpmath.e
    elif kind == "ImaginaryUnit":
        value = mpmath.mpc(0, 1)
    else:
        args = [_evaluate(a, point, memo) for a in expr.args]
        try:
            if kind == "Add":
                value = mpmath.fsum(args)
            elif kind == "Mul":
                value = mpmath.fprod(args)
            elif kind == "Pow":
                base, power = args
                value = (mpmath.exp(power) if type(expr.args[0]).__name__ == "Exp1"
                         else mpmath.power(base, power))
            elif kind == "atan2":
                if any(isinstance(a, mpmath.mpc) for a in args):
                    raise _Unevaluable(kind)
                value = mpmath.atan2(*args)
            elif kind in _UNARY and len(args) == 1:
                value = _UNARY[kind](args[0])
            else:
                raise _Unevaluable(kind)
        except (ValueError, ZeroDivisionError, TypeError, OverflowError) as error:
            raise _Unevaluable(kind) from error
    memo[expr] = value
    return value


def _change(expr: se.Basic, here: Mapping[se.Basic, Any], there: Mapping[se.Basic, Any]
            ) -> bool | None:
    """Whether ``expr`` differs between the two points beyond rounding (None: not evaluable)."""
    values = []
    for bits in (LOW_BITS, HIGH_BITS):
        with mpmath.workprec(bits):
            try:
                a = _evaluate(expr, {k: mpmath.mpf(v) for k, v in here.items()}, {})
                b = _evaluate(expr, {k: mpmath.mpf(v) for k, v in there.items()}, {})
            except _Unevaluable:
                return None
            if not (mpmath.isfinite(a) and mpmath.isfinite(b)):
                return None
            values.append(a - b)
    low, high = values
    if high == 0:
        return False
    return bool(abs(low - high) <= STABLE * abs(high))


def _tidies_to_zero(expr: se.Basic) -> bool:
    """Whether the cheap symbolic tidying (expand, Pythagoras, angle sums) makes ``expr`` 0."""
    from lagsim.symbolic.model import to_sympy
    from lagsim.symbolic.tidy import combine_trig

    if expr == 0:
        return True
    if len(str(expr)) > 20_000:
        return False
    try:
        return bool(combine_trig(to_sympy(expr)) == 0)
    except (RecursionError, TypeError, ValueError, AttributeError):
        return False


def varying(expr: Any, symbols: Iterable[se.Symbol], values: Mapping[se.Symbol, float]
            ) -> tuple[se.Symbol, ...]:
    """The symbols among ``symbols`` that ``expr`` truly depends on with the parameters at
    ``values`` (symbol → number), in the order given (module docstring)."""
    expr = se.sympify(expr)
    present = expr.free_symbols
    wanted = [s for s in symbols if s in present and s not in values]
    if not wanted:
        return ()
    fixed = {k: float(v) for k, v in values.items() if k in present}
    free = sorted(present - set(fixed), key=str)
    rng = np.random.default_rng(SEED)

    def moves(s: se.Symbol, points: int) -> bool | None:
        evaluated = 0
        for _ in range(points):
            here = {**fixed, **dict(zip(free, rng.uniform(-2.0, 2.0, len(free))))}
            there = {**here, s: float(rng.uniform(-2.0, 2.0))}
            change = _change(expr, here, there)
            if change:
                return True
            evaluated += change is not None
        return False if evaluated else None

    out = []
    for s in wanted:
        verdict = moves(s, POINTS)
        if verdict is False and not _tidies_to_zero(diff(expr, s)):
            verdict = moves(s, UNCONFIRMED_POINTS)
        if verdict is not False:
            out.append(s)
    return tuple(out)


def depends(expr: Any, symbols: Iterable[se.Symbol], values: Mapping[se.Symbol, float]
            ) -> bool:
    """Whether ``expr`` truly depends on any of ``symbols`` (:func:`varying`)."""
    return bool(varying(expr, symbols, values))
