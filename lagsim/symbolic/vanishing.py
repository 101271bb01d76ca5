"""Whether an expression vanishes: exactly, or at numbers up to the rounding of its evaluation.

Two questions ``check`` asks of its conditions (Frobenius' ω ∧ dω and brackets in
:mod:`lagsim.symbolic.integrability`, Noether's δL, τ·ξ, Aξ in :mod:`lagsim.symbolic.invariants`):

* **exactly**: the expression expands to 0 with the parameters as exact rationals
  (:func:`exact_values`: 9.81 is 981/100, so g·(m₁ + 3m₂ − 5m₃) with m = 3.5, 0.5, 1 is 0, where
  the floats leave 3.6e-15);
* **at numbers**: a value is rounding when it is within a small multiple of the rounding bound of
  its evaluation, :func:`magnitude`: the expression with each sum replaced by the sum of the
  absolute values of its terms, as written (unexpanded). Floating-point summation errs by at most
  γ_{n−1} Σ|x_i| and a product by γ_n |Π x_i| (Higham, *Accuracy and Stability of Numerical
  Algorithms*, 2nd ed., §3.1 and §4.2), so a value far below ε × magnitude proves nothing, and a
  value well above it proves the expression nonzero. The expanded form's Σ|terms| is no such
  bound: it is 0 when the expansion cancels, and one number when the terms are numbers.
"""

from __future__ import annotations

from collections.abc import Mapping

import symengine as se


def exact_values(values: Mapping[se.Basic, float]) -> dict[se.Basic, se.Basic]:
    """The parameter values as the rationals of their shortest decimal form (``repr``): the
    numbers the user wrote, exactly. A value that is not finite stays a float."""
    from fractions import Fraction  # with decimal, a few ms a run that needs no exact values

    out: dict[se.Basic, se.Basic] = {}
    for symbol, value in values.items():
        try:
            fraction = Fraction(repr(float(value)))
        except (ValueError, OverflowError):
            out[symbol] = se.Float(float(value))
            continue
        out[symbol] = se.Rational(fraction.numerator, fraction.denominator)
    return out


def magnitude(expr: se.Basic) -> se.Basic:
    """The rounding scale of ``expr`` as written: |·| of each leaf, sums of absolute values for
    sums, products for products and positive integer powers (module docstring)."""
    memo: dict[se.Basic, se.Basic] = {}

    def walk(e: se.Basic) -> se.Basic:
        known = memo.get(e)
        if known is not None:
            return known
        if isinstance(e, se.Add):
            out = se.Add(*(walk(a) for a in e.args))
        elif isinstance(e, se.Mul):
            out = se.Mul(*(walk(a) for a in e.args))
        elif isinstance(e, se.Pow) and e.args[1].is_Integer and int(e.args[1]) > 0:
            out = walk(e.args[0]) ** e.args[1]
        else:
            out = se.Abs(e)
        memo[e] = out
        return out

    return walk(se.sympify(expr))
