"""Budgeted tidying of the expressions `lagsim derive` prints.

SymPy's ``simplify``, ``trigsimp``, ``factor`` and ``cancel`` give the short forms students expect
(m l² θ̇² for m l²(sin²θ + cos²θ) θ̇², cos(θ₁ − θ₂) for sin θ₁ sin θ₂ + cos θ₁ cos θ₂), but their
cost grows without bound with the size of the expression: a 3-coordinate system with messy mass
positions spent 15 s in one trigsimp (issue 8 §5), an Udwadia–Kalaba closed form over 150 s
(issue 16 §4). So every such call here is guarded by an operation count (``sympy.count_ops``) that
depends only on the expression, never on the clock: the same input prints the same output on a
busy machine. Past the budget the expression is kept as it is (exactly equal, just longer), and
the reason is appended to the caller's list, for ``--debug`` to say on stderr.

:func:`combine_trig` is the cheap tidying of the Lagrangian (:func:`lagsim.model.tidy_model`) and
of the inputs of closed forms: Pythagoras (c·r·sin²x + c·r·cos²x
= c·r) and the angle-sum identities (c·r·(sin a sin b + cos a cos b) = c·r·cos(a − b), …) applied
term by term to an expanded sum, in time linear in its number of terms.
"""

from __future__ import annotations

from collections.abc import Callable

import symengine as se
import sympy
from sympy import Add, Mul, cos, sin

SIMPLIFY_MAX_OPS = 40
"""Largest expression (``count_ops``) that ``sympy.simplify`` is tried on."""

CANCEL_MAX_OPS = 200
"""Largest expression that is put over a common denominator (``sympy.cancel``)."""


def ops(expr: sympy.Basic) -> int:
    """The size of an expression, matrix or equation: SymPy's operation count."""
    if isinstance(expr, sympy.MatrixBase):
        return sum(ops(e) for e in expr)
    if isinstance(expr, sympy.Eq):
        return ops(expr.lhs) + ops(expr.rhs)
    return int(sympy.count_ops(expr))


def within(expr: sympy.Basic, budget: int, skips: list[str], what: str, step: str) -> bool:
    """Whether ``expr`` is at most ``budget`` operations; if not, appends to ``skips`` that
    ``step`` of ``what`` was skipped."""
    size = ops(expr)
    if size <= budget:
        return True
    skips.append(f"{what}: {step} skipped ({size} operations > {budget})")
    return False


def light(expr: sympy.Expr, skips: list[str], what: str) -> sympy.Expr:
    """``expr`` through :func:`combine_trig`, then ``sympy.simplify`` if that is shorter and the
    expression is at most :data:`SIMPLIFY_MAX_OPS` operations (else recorded in ``skips``); an
    expression with a root only gets its common factors pulled out."""
    expr = combine_trig(expr)
    if expr.is_number or not within(expr, SIMPLIFY_MAX_OPS, skips, what, "simplify"):
        return expr
    if _has_root(expr):
        return sympy.factor_terms(expr)
    tidy = sympy.simplify(expr)
    return tidy if sympy.count_ops(tidy) <= sympy.count_ops(expr) else expr


def _has_root(expr: sympy.Expr) -> bool:
    """Whether a power with a non-integer exponent (a root) occurs: simplify's trigonometric
    search on such a 27-operation expression took 0.3 s (the spring pendulum's closed form)."""
    return any(p.is_Pow and not p.exp.is_Integer for p in sympy.preorder_traversal(expr))


def cancelled(expr: sympy.Expr, skips: list[str], what: str) -> sympy.Expr:
    """``expr`` over one denominator (``sympy.cancel``) when it has at most
    :data:`CANCEL_MAX_OPS` operations and that is not longer, else as it is (a skip for size is
    recorded in ``skips``)."""
    if not within(expr, CANCEL_MAX_OPS, skips, what, "cancel"):
        return expr
    together = sympy.cancel(expr)
    return together if sympy.count_ops(together) <= sympy.count_ops(expr) else expr


def expand(expr: sympy.Expr) -> sympy.Expr:
    """``sympy.expand(expr)``, computed by SymEngine (ten times faster) when it can read expr."""
    try:
        return sympy.sympify(se.expand(se.sympify(expr)))
    except (RuntimeError, TypeError, ValueError, NotImplementedError, se.SympifyError):
        return sympy.expand(expr)


def _split(term: sympy.Expr) -> tuple[sympy.Expr, dict]:
    coeff, rest = term.as_coeff_Mul()
    return coeff, dict(rest.as_powers_dict()) if rest != 1 else {}


def _rebuild(coeff: sympy.Expr, powers: dict) -> sympy.Expr:
    return Mul(coeff, *(b**e for b, e in powers.items() if e != 0))


def _without(powers: dict, drop: dict) -> frozenset:
    out = dict(powers)
    for base, e in drop.items():
        out[base] = out.get(base, 0) - e
    return frozenset((b, e) for b, e in out.items() if e != 0)


def _pythagoras(terms: list[tuple]) -> list[tuple] | None:
    """Every disjoint pair c·r·sin²x + c·r·cos²x → c·r, or None when there is none."""
    seen: dict[tuple, int] = {}
    used: set[int] = set()
    merged: list[tuple] = []
    for i, (coeff, powers) in enumerate(terms):
        for base, e in powers.items():
            if i in used or not (isinstance(base, (sin, cos)) and e.is_Integer and e >= 2):
                continue
            key = (base.args[0], coeff, _without(powers, {base: 2}))
            kind = isinstance(base, sin)
            other = seen.get((not kind, *key))
            if other is not None and other not in used:
                used.update((i, other))
                merged.append((coeff, dict(key[2])))
            else:
                seen.setdefault((kind, *key), i)
    if not merged:
        return None
    return [t for j, t in enumerate(terms) if j not in used] + merged


_PARTNER = {("sin", "sin"): ("cos", "cos"), ("cos", "cos"): ("sin", "sin"),
            ("sin", "cos"): ("cos", "sin"), ("cos", "sin"): ("sin", "cos")}


def _combined(shape: tuple[str, str], coeff, partner_coeff, a, b) -> sympy.Expr:
    """The one trigonometric term two matched products (a < b) make."""
    same = coeff == partner_coeff
    if shape in (("sin", "cos"), ("cos", "sin")):
        first = coeff if shape == ("sin", "cos") else partner_coeff
        return first * sin(a + b) if same else first * sin(a - b)
    cc = coeff if shape == ("cos", "cos") else partner_coeff
    return cc * cos(a - b) if same else cc * cos(a + b)


def _angle_sum(terms: list[tuple]) -> list[tuple] | None:
    """Every disjoint pair c·r·(sin a sin b ± cos a cos b) → c·r·cos(a ∓ b) and
    c·r·(sin a cos b ± cos a sin b) → c·r·sin(a ± b), or None when there is none."""
    seen: dict[tuple, tuple[int, sympy.Expr]] = {}
    used: set[int] = set()
    merged: list[tuple] = []
    for i, (coeff, powers) in enumerate(terms):
        trig = [b for b, e in powers.items() if isinstance(b, (sin, cos)) and e == 1]
        for j, u in enumerate(trig):
            for v in trig[j + 1:]:
                if i in used:
                    break
                a, b = u.args[0], v.args[0]
                if a == b:
                    continue
                if sympy.Basic.compare(a, b) > 0:
                    a, b, u, v = b, a, v, u
                rest = _without(powers, {u: 1, v: 1})
                shape = (type(u).__name__, type(v).__name__)
                other = seen.get((_PARTNER[shape], a, b, rest))
                if other is not None and other[0] not in used and abs(coeff) == abs(other[1]):
                    used.update((i, other[0]))
                    merged.append(_split(_rebuild(_combined(shape, coeff, other[1], a, b),
                                                  dict(rest))))
                else:
                    seen.setdefault((shape, a, b, rest), (i, coeff))
    if not merged:
        return None
    return [t for j, t in enumerate(terms) if j not in used] + merged


def _combine_sum(expanded: sympy.Expr, max_terms: int) -> sympy.Expr:
    if not isinstance(expanded, Add) or len(expanded.args) > max_terms:
        return expanded
    terms = [_split(t) for t in Add.make_args(expanded)]
    rules: tuple[Callable, ...] = (_pythagoras, _angle_sum)
    changed = True
    while changed:
        changed = False
        for rule in rules:
            out = rule(terms)
            if out is not None:
                terms = [_split(t) for t in Add.make_args(Add(*(_rebuild(c, p) for c, p in out)))]
                changed = True
    return Add(*(_rebuild(c, p) for c, p in terms))


FACTOR_MAX_TERMS = 40
"""Sums of at most this many terms get their common factors pulled out (``factor_terms``)."""


def tidy_lagrangian(expr: sympy.Expr) -> sympy.Expr:
    """A Lagrangian through :func:`combine_trig`, then with the factors common to all its terms
    pulled out (m(ṙ²/2 + r²θ̇²/2 + μ/r)) when it has at most :data:`FACTOR_MAX_TERMS` terms."""
    tidy = combine_trig(expr)
    if len(Add.make_args(tidy)) <= FACTOR_MAX_TERMS:
        tidy = sympy.factor_terms(tidy)
    return tidy


def combine_trig(expr: sympy.Expr, max_terms: int = 400) -> sympy.Expr:
    """``expr`` expanded, with sin² + cos² = 1 and the angle-sum identities applied to pairs of
    terms (and inside the bases of roots) while any pair matches; exactly equal to ``expr``. A
    sum of more than ``max_terms`` terms is only expanded."""
    expanded = expand(expr)
    if not expanded.has(sin, cos):
        return expanded
    expanded = expanded.replace(
        lambda e: e.is_Pow and not e.exp.is_Integer and isinstance(e.base, Add)
        and e.base.has(sin, cos),
        lambda e: _combine_sum(e.base, max_terms) ** e.exp)
    return _combine_sum(expanded, max_terms)
