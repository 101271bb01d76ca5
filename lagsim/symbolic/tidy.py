"""Budgeted tidying of the expressions `lagsim derive` prints.

SymPy's ``simplify``, ``trigsimp``, ``factor`` and ``cancel`` give the short forms students expect
(m l² θ̇² for m l²(sin²θ + cos²θ) θ̇², cos(θ₁ − θ₂) for sin θ₁ sin θ₂ + cos θ₁ cos θ₂), but their
cost grows without bound with the size of the expression: a 3-coordinate system with messy mass
positions spent 15 s in one trigsimp (issue 8 §5), an Udwadia–Kalaba closed form over 150 s
(issue 16 §4). So every such call here is guarded by an operation count (``sympy.count_ops``) that
depends only on the expression, never on the clock: the same input prints the same output on a
busy machine. Past the budget the expression is kept as it is (exactly equal, just longer), and
the reason is appended to the caller's list, for ``--debug`` to say on stderr.

:func:`combine_trig` is the cheap tidying of the Lagrangian
(:func:`lagsim.symbolic.model.tidy_model`) and
of the inputs of closed forms: Pythagoras (c·r·sin²x + c·r·cos²x
= c·r) and the angle-sum identities (c·r·(sin a sin b + cos a cos b) = c·r·cos(a − b), …) applied
term by term to an expanded sum, in time linear in its number of terms.
"""

from __future__ import annotations

import functools
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeVar

import symengine as se
import sympy
from sympy import Add, Mul, cos, sin
from sympy.core.mul import _keep_coeff

from lagsim.symbolic.expansion import bounded_expand, expanded_terms

T = TypeVar("T")

SIMPLIFY_MAX_OPS = 40
"""Largest expression (``count_ops``) that ``sympy.simplify`` is tried on."""

CANCEL_MAX_OPS = 200
"""Largest expression that is put over a common denominator (``sympy.cancel``)."""


DEFAULT_SECONDS = 0.3
"""CPU seconds that the tidying of one `lagsim derive` may spend in SymPy's own routines
(``cancel``, ``simplify``, ``solve``) by default; past it, expressions print as derived (issue 16
§4: every form within 1 s for n ≤ 8)."""

SIMPLIFY_SECONDS = 10.0
"""The same for ``lagsim derive --simplify``, which also runs ``sympy.simplify`` (issue 14)."""


REPEAT = 0.1
"""After the budget runs out, SIGPROF comes again every this many CPU seconds until the block
ends: SymPy has bare ``except:`` clauses that swallow one :class:`OutOfTime` (seen in
``solve``, which then ran on for minutes), and the next one gets out."""


class OutOfTime(BaseException):
    """Raised from the SIGPROF handler of :func:`time_budget`; a BaseException, so that the
    ``except Exception`` clauses inside SymPy cannot swallow it."""


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Interrupt the block with :class:`OutOfTime` after ``seconds`` of the process's CPU time.

    A thread cannot be stopped from outside, so the block is interrupted by SIGPROF (the
    profiling interval timer), which Python handles in the main thread only; elsewhere (and
    without ``setitimer``) :class:`RuntimeError` is raised before the block starts. Past the
    budget the signal repeats every :data:`REPEAT` seconds until the block ends. A timer
    already armed by an enclosing block is re-armed afterwards with its remaining time.
    """
    if seconds is None:
        yield
        return
    if not can_interrupt():
        raise RuntimeError("a CPU-time budget needs the main thread of a POSIX process")

    def expire(_signum: int, _frame: object) -> None:
        raise OutOfTime

    began = time.process_time()
    previous = signal.signal(signal.SIGPROF, expire)
    outer, _ = signal.getitimer(signal.ITIMER_PROF)
    signal.setitimer(signal.ITIMER_PROF, max(seconds if not outer else min(seconds, outer), 1e-3),
                     REPEAT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        if outer:
            signal.setitimer(signal.ITIMER_PROF, max(outer - (time.process_time() - began), 1e-3),
                             REPEAT)


def can_interrupt() -> bool:
    """Whether :func:`time_budget` can interrupt work here (main thread, POSIX timers)."""
    return threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")


@dataclass
class Budget:
    """The CPU time the open-ended SymPy steps of one derivation may take together, and whether
    it goes deep (``sympy.simplify``, for ``--simplify``). ``spent`` is the CPU time of the steps
    run through :func:`bounded` so far (a step inside another counts once, in the outer one);
    the linear-time tidying between them is not charged, so that ``lagsim derive --form all``
    leaves its later forms (the reduction, seed 002 §23.5) the budget that ``--form reduced``
    would give them. ``stopped`` counts the steps cut short by it."""

    seconds: float
    deep: bool = False
    spent: float = 0.0
    stopped: int = 0
    depth: int = field(default=0, repr=False)

    def left(self) -> float:
        return self.seconds - self.spent


_ACTIVE: list[Budget] = []


@contextmanager
def budget(seconds: float, deep: bool = False) -> Iterator[Budget]:
    """Within the block, the SymPy steps of the tidying (and the symbolic solves of the
    reduction) share ``seconds`` of CPU time: each step is interrupted when the rest runs out and
    its input kept (exactly equal, only longer); ``deep`` adds ``sympy.simplify``. Outside any
    block the steps are bounded by operation counts only (deterministic), and ``light``
    simplifies as ``deep`` would."""
    b = Budget(seconds, deep)
    _ACTIVE.append(b)
    try:
        yield b
    finally:
        _ACTIVE.remove(b)


def active() -> Budget | None:
    """The innermost :func:`budget`, or None."""
    return _ACTIVE[-1] if _ACTIVE else None


def bounded(step: Callable[[], T], skips: list[str], what: str, name: str) -> T | None:
    """``step()`` within the active budget's remaining CPU time, or None (recorded in ``skips``)
    when it is used up or runs out during the step; the step's CPU time is charged to the budget
    (:attr:`Budget.spent`). Without an active budget each step gets :data:`SIMPLIFY_SECONDS`;
    where a step cannot be interrupted (not the main thread) it runs as it is, bounded by the
    operation counts only."""
    b = active()
    if not can_interrupt():
        return step()
    if b is None:
        try:
            with time_budget(SIMPLIFY_SECONDS):
                return step()
        except OutOfTime:
            skips.append(f"{what}: {name} stopped after {SIMPLIFY_SECONDS:g} s")
            return None
    left = b.left()
    if left <= 0:
        b.stopped += 1
        skips.append(f"{what}: {name} skipped (the {b.seconds:g} s budget was used up)")
        return None
    began = time.process_time()
    b.depth += 1
    try:
        with time_budget(left):
            return step()
    except OutOfTime:
        b.stopped += 1
        skips.append(f"{what}: {name} stopped when the {b.seconds:g} s budget ran out")
        b.spent = b.seconds
        return None
    finally:
        b.depth -= 1
        if not b.depth:
            b.spent = min(b.seconds, b.spent + time.process_time() - began)


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


def light(expr: sympy.Expr, skips: list[str], what: str, deep: bool | None = None
          ) -> sympy.Expr:
    """``expr`` through :func:`cheap`, then (``deep``; default: the active budget's, or True
    outside one) ``sympy.simplify`` if that is shorter and the expression is at most
    :data:`SIMPLIFY_MAX_OPS` operations (else recorded in ``skips``); an expression with a root
    only gets its common factors pulled out."""
    expr = cheap(expr, skips, what)
    if deep is None:
        b = active()
        deep = b.deep if b is not None else True
    if not deep or expr.is_number or not within(expr, SIMPLIFY_MAX_OPS, skips, what,
                                                "simplify"):
        return expr
    if _has_root(expr):
        return sympy.factor_terms(expr)
    tidy = bounded(lambda: sympy.simplify(expr), skips, what, "simplify")
    return tidy if tidy is not None and sympy.count_ops(tidy) <= sympy.count_ops(expr) else expr


CHEAP_MAX_NODES = 4000
"""Expressions up to this many nodes go through :func:`cheap`; larger ones print as derived."""


def nodes_over(expr: sympy.Basic, limit: int) -> bool:
    """Whether ``expr`` has more than ``limit`` nodes; stops counting there."""
    count = 0
    for _ in sympy.preorder_traversal(expr):
        count += 1
        if count > limit:
            return True
    return False


def cheap(expr: sympy.Expr, skips: list[str] | None = None, what: str = "",
          collect: tuple[sympy.Symbol, ...] = ()) -> sympy.Expr:
    """The default tidying (issue 14), in time about linear in the size: :func:`combine_trig`
    (expanded: like terms combined, 8a² − 4a² → 4a²; sin² + cos² = 1; angle sums; a fraction's
    numerator and denominator each, not split into one fraction per term), the terms of
    each symbol in ``collect`` gathered with its coefficient's common factors pulled out
    (m r̈(4a²r² + 1)), or without ``collect`` the factors common to every term pulled out
    (:func:`common_factor`). Exactly equal to ``expr``; one larger than
    :data:`CHEAP_MAX_NODES` nodes is returned as it is (recorded in ``skips``). Memoized: the
    forms of one model share M, F, A and b. A SymEngine ``expr`` (the forms' derivatives) is
    tidied in SymEngine when it has no roots or denominators of sums (:func:`_cheap_se`, ten
    times faster: the 32-chain's equations) and converted to SymPy once."""
    if isinstance(expr, se.Basic):
        if len(_MEMO) > MEMO_MAX or len(_TIDIED) > MEMO_MAX:
            _MEMO.clear()
            _TIDIED.clear()
        fast = _cheap_se(expr, collect)
        if fast is not None:
            _TIDIED.add(fast)
            return fast
        expr = sympy.sympify(expr)
    if not isinstance(expr, sympy.Expr) or expr.is_Atom or expr in _TIDIED:
        return expr
    out = _cheap(expr, collect)
    if out is None:
        if skips is not None:
            skips.append(f"{what}: tidying skipped (more than {CHEAP_MAX_NODES} nodes)")
        return expr
    return out


@functools.lru_cache(maxsize=4096)
def _cheap(expr: sympy.Expr, collect: tuple[sympy.Symbol, ...]) -> sympy.Expr | None:
    if nodes_over(expr, CHEAP_MAX_NODES):
        return None
    if expr.is_Mul:
        num, den = sympy.fraction(expr)
        if den != 1 and isinstance(num, Add) or isinstance(den, Add):
            return _cheap(num, collect) / common_factor(combine_trig(den))
    out = combine_trig(expr)
    if not collect:
        return common_factor(out)
    if not isinstance(out, Add):
        return out
    wanted = set(collect)
    groups: dict[sympy.Basic, list[sympy.Expr]] = {}
    for term in out.args:
        factors = Mul.make_args(term)
        key = next((f for f in factors if f in wanted), None)
        if key is not None and factors.count(key) == 1:
            groups.setdefault(key, []).append(term / key)
        else:
            groups.setdefault(None, []).append(term)
    parts = [common_factor(Add(*ts)) * key for key, ts in groups.items() if key is not None]
    parts += groups.get(None, [])
    return Add(*parts)


MEMO_MAX = 200_000
"""The conversions and tidied results kept per process (cleared past this many)."""

_MEMO: dict[se.Basic, sympy.Basic] = {}
"""SymEngine → SymPy conversions of this process (:func:`to_sympy`), shared by all forms."""

_TIDIED: set[sympy.Basic] = set()
"""Results of the SymEngine path: already tidy, so :func:`cheap` returns them as they are."""

SE_MAX_TERMS = 5000
"""Expanded sums up to this many terms take the SymEngine path."""


def _plain_powers(expr: se.Basic) -> bool:
    """Whether every power in ``expr`` has an integer exponent and, if negative, an atom base
    (no roots, no denominators that are sums), and ``expr`` expands to at most
    :data:`SE_MAX_TERMS` terms (:func:`expanded_terms`): the shape :func:`_cheap_se` handles."""
    for p in expr.atoms(se.Pow):
        base, e = p.args
        if not e.is_Integer or (int(e) < 0 and isinstance(base, (se.Add, se.Mul))):
            return False
    return expanded_terms(expr, SE_MAX_TERMS) <= SE_MAX_TERMS


def _is_int(e: object) -> bool:
    """Whether an exponent (a SymEngine number or a Python int) is an integer."""
    return isinstance(e, int) or bool(getattr(e, "is_Integer", False))


def _se_terms(expanded: se.Basic) -> list[tuple[se.Basic, dict]]:
    """(coefficient, {base: exponent}) of each term of an expanded SymEngine sum."""
    out = []
    for mono, coeff in expanded.as_coefficients_dict().items():
        if coeff == 0:
            continue
        out.append((coeff, dict(mono.as_powers_dict()) if mono != 1 else {}))
    return out


def _se_rebuild(coeff: se.Basic, powers: dict) -> se.Basic:
    return se.Mul(coeff, *(b**e for b, e in powers.items() if e != 0))


def _se_pythagoras(terms: list[tuple]) -> list[tuple] | None:
    """SymEngine twin of :func:`_pythagoras`: c·r·sin²x + c·r·cos²x → c·r."""
    seen: dict[tuple, int] = {}
    used: set[int] = set()
    merged: list[tuple] = []
    for i, (coeff, powers) in enumerate(terms):
        for base, e in powers.items():
            if i in used or not (isinstance(base, (se.sin, se.cos)) and _is_int(e)
                                 and int(e) >= 2):
                continue
            key = (base.args[0], coeff, _without(powers, {base: 2}))
            kind = isinstance(base, se.sin)
            other = seen.get((not kind, *key))
            if other is not None and other not in used:
                used.update((i, other))
                merged.append((coeff, dict(key[2])))
            else:
                seen.setdefault((kind, *key), i)
    if not merged:
        return None
    return [t for j, t in enumerate(terms) if j not in used] + merged


def _se_angle_sum(terms: list[tuple]) -> list[tuple] | None:
    """SymEngine twin of :func:`_angle_sum` (angle arguments ordered by their text)."""
    seen: dict[tuple, tuple[int, se.Basic]] = {}
    used: set[int] = set()
    merged: list[tuple] = []
    for i, (coeff, powers) in enumerate(terms):
        trig = [b for b, e in powers.items() if isinstance(b, (se.sin, se.cos)) and e == 1]
        for j, u in enumerate(trig):
            for v in trig[j + 1:]:
                if i in used:
                    break
                a, b = u.args[0], v.args[0]
                if a == b:
                    continue
                if str(a) > str(b):
                    a, b, u, v = b, a, v, u
                rest = _without(powers, {u: 1, v: 1})
                shape = ("sin" if isinstance(u, se.sin) else "cos",
                         "sin" if isinstance(v, se.sin) else "cos")
                other = seen.get((_PARTNER[shape], a, b, rest))
                if other is not None and other[0] not in used and abs(coeff) == abs(other[1]):
                    used.update((i, other[0]))
                    merged.append((_se_combined(shape, coeff, other[1], a, b), dict(rest)))
                else:
                    seen.setdefault((shape, a, b, rest), (i, coeff))
    if not merged:
        return None
    out = [t for j, t in enumerate(terms) if j not in used]
    for factor, rest in merged:
        out += [(c, {**rest, **{k: v + rest.get(k, 0) for k, v in p.items()}})
                for c, p in _se_terms(se.expand(factor))]
    return out


def _se_combined(shape: tuple[str, str], coeff, partner_coeff, a, b) -> se.Basic:
    same = coeff == partner_coeff
    if shape in (("sin", "cos"), ("cos", "sin")):
        first = coeff if shape == ("sin", "cos") else partner_coeff
        return first * se.sin(a + b) if same else first * se.sin(a - b)
    cc = coeff if shape == ("cos", "cos") else partner_coeff
    return cc * se.cos(a - b) if same else cc * se.cos(a + b)


def _cheap_se(expr: se.Basic, collect: tuple[sympy.Symbol, ...]) -> sympy.Expr | None:
    """:func:`cheap` of a SymEngine expression done in SymEngine (expand, Pythagoras, angle
    sums, gathering ``collect``) and converted to SymPy once; None when ``expr`` has roots or
    denominators of sums, or expands past :data:`SE_MAX_TERMS` terms (then SymPy's path)."""
    if not _plain_powers(expr):
        return None
    expanded = se.expand(expr)
    if len(expanded.args) > SE_MAX_TERMS:
        return None
    terms = _se_terms(expanded) if isinstance(expanded, se.Add) else None
    if terms is None:
        return common_factor(sympy.sympify(expanded)) if not collect else sympy.sympify(expanded)
    changed = True
    while changed:
        changed = False
        for rule in (_se_pythagoras, _se_angle_sum):
            out = rule(terms)
            if out is not None:
                terms = _se_terms(se.Add(*(_se_rebuild(c, p) for c, p in out)))
                changed = True
    if not collect:
        return common_factor(to_sympy(se.Add(*(_se_rebuild(c, p) for c, p in terms)), _MEMO))
    keys = {se.Symbol(str(c)) for c in collect}
    groups: dict[se.Basic | None, list[tuple]] = {}
    for coeff, powers in terms:
        key = next((k for k in keys if powers.get(k) == 1), None)
        if key is not None:
            groups.setdefault(key, []).append(
                (coeff, {b: e for b, e in powers.items() if b != key}))
        else:
            groups.setdefault(None, []).append((coeff, powers))
    parts = [se.Mul(_se_common(ts), key) for key, ts in groups.items() if key is not None]
    parts += [_se_rebuild(c, p) for c, p in groups.get(None, [])]
    return to_sympy(se.Add(*parts), _MEMO)


_SE_FUNCTIONS = {"sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "exp": sympy.exp,
                 "log": sympy.log, "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh,
                 "atan": sympy.atan, "asin": sympy.asin, "acos": sympy.acos}


_PARITY = {"cos": 1, "sin": -1, "tan": -1}
"""cos(−a) = cos a, sin(−a) = −sin a, tan(−a) = −tan a: what SymPy's evaluation would write,
cos(θ₁ − θ₂) rather than SymEngine's cos(−θ₁ + θ₂)."""


def to_sympy(expr: se.Basic, memo: dict | None = None) -> sympy.Basic:
    """``sympy.sympify(expr)`` converting each distinct subexpression once, and functions
    unevaluated: SymEngine has put their arguments in canonical form already, and SymPy's
    evaluation of the 32-chain's 1024 cos(θi − θj) and sin(θi − θj) took 40 % of their tidying."""
    memo = {} if memo is None else memo

    def conv(e: se.Basic) -> sympy.Basic:
        out = memo.get(e)
        if out is not None:
            return out
        if isinstance(e, se.Add):
            out = Add(*map(conv, e.args))
        elif isinstance(e, se.Mul):
            out = Mul(*map(conv, e.args))
        elif isinstance(e, se.Pow):
            out = sympy.Pow(*map(conv, e.args))
        elif type(e).__name__ in _SE_FUNCTIONS and len(e.args) == 1:
            name, arg = type(e).__name__, conv(e.args[0])
            if name in _PARITY and arg.is_Add and arg.could_extract_minus_sign():
                out = _PARITY[name] * _SE_FUNCTIONS[name](-arg, evaluate=False)
            else:
                out = _SE_FUNCTIONS[name](arg, evaluate=False)
        else:
            out = sympy.sympify(e)
        memo[e] = out
        return out

    return conv(expr)


def _se_common(terms: list[tuple]) -> se.Basic:
    """The sum of ``terms`` with the rational and symbolic factors common to all of them pulled
    out, kept as a product (SymEngine does not distribute it)."""
    if len(terms) == 1:
        return _se_rebuild(*terms[0])
    if all(isinstance(c, (se.Integer, se.Rational)) for c, _ in terms):
        fracs = [Fraction(str(c)) for c, _ in terms]
        num = Fraction(functools.reduce(math.gcd, (f.numerator for f in fracs)),
                       functools.reduce(math.lcm, (f.denominator for f in fracs)))
        if all(f < 0 for f in fracs):
            num = -num
    else:
        num = Fraction(1)
    common = {b: e for b, e in terms[0][1].items() if _is_int(e) and int(e) != 0}
    for _, powers in terms[1:]:
        common = {b: _shared(e, powers[b]) for b, e in common.items()
                  if b in powers and _is_int(powers[b]) and int(powers[b]) * int(e) > 0}
        if not common:
            break
    factor = se.Rational(num.numerator, num.denominator)
    inner = se.Add(*(se.Mul(c / factor, *(b**(e - common.get(b, 0)) for b, e in p.items()))
                     for c, p in terms))
    return se.Mul(factor, *(b**e for b, e in common.items()), inner)


def _shared(a: Any, b: Any) -> Any:
    """The power of one base two terms share, their exponents of one sign: the smaller positive
    one (m² and m: m), or the negative one nearer 0 (1/m and 1/m²: 1/m)."""
    return min(a, b) if a > 0 else max(a, b)


def common_factor(expr: sympy.Expr) -> sympy.Expr:
    """A sum with the numeric and symbolic factors common to all its terms pulled out
    (m⋅(ṙ²/2 + r²θ̇²/2)), a common denominator factor too ((x² + y²)/m for x²/m + y²/m, issue
    30), in time linear in its terms: the cheap part of ``factor_terms``."""
    if not isinstance(expr, Add):
        return expr
    terms = [t.as_coeff_Mul() for t in expr.args]
    coeffs = [c for c, _ in terms]
    if not all(c.is_Rational for c in coeffs):
        return expr
    common: dict | None = None
    for _, rest in terms:
        powers = {b: e for b, e in rest.as_powers_dict().items()
                  if e.is_Integer and e != 0 and not b.is_Number}
        if common is None:
            common = powers
        else:
            common = {b: _shared(e, powers[b]) for b, e in common.items()
                      if b in powers and powers[b] * e > 0}
        if not common:
            break
    num = sympy.Rational(functools.reduce(math.gcd, (c.p for c in coeffs)),
                         functools.reduce(math.lcm, (c.q for c in coeffs)))
    if all(c < 0 for c in coeffs):
        num = -num
    factor = Mul(*(b**e for b, e in (common or {}).items()))
    if factor == 1 and num == 1:
        return expr
    inner = Add(*(c / num * (r / factor) for c, r in terms))
    return _keep_coeff(num, factor * inner)


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
    together = bounded(lambda: sympy.cancel(expr), skips, what, "cancel")
    return together if together is not None and sympy.count_ops(together) <= sympy.count_ops(
        expr) else expr


def expand(expr: sympy.Expr) -> sympy.Expr:
    """``sympy.expand(expr)``, computed by SymEngine (ten times faster) when it can read expr;
    ``expr`` as it is when that would build more than :data:`lagsim.spec.limits.MAX_EXPANSION`
    terms (:func:`bounded_expand`)."""
    try:
        converted = se.sympify(expr)
    except (RuntimeError, TypeError, ValueError, NotImplementedError, se.SympifyError):
        return sympy.expand(expr)
    expanded = bounded_expand(converted)
    return expr if expanded is None else sympy.sympify(expanded)


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
