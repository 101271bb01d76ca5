"""Bounded expansion of SymEngine expressions, and the signals during long C calls (issue 32).

Multiplying out is where a small expression becomes a huge one:
``(x + y + 1)**100*(x - y + 2)**100`` is 26 million products, ``(x + y + z + w + 1)**100``
4.6 million terms, each within every limit on what a file may write (docs/format.md, "Limits").
Every expansion of an expression that comes from a user's file is bounded here before it starts
(:func:`bounded_expand`), by a count that depends only on the expression (the same input gives
the same output on a busy machine, as the operation counts of :mod:`lagsim.symbolic.tidy`).
SymEngine only, so that a run imports no SymPy.
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import symengine as se

from lagsim.errors import say_once, signals_blocked
from lagsim.spec.limits import MAX_EXPANSION, exceeded


def expanded_terms(expr: se.Basic, limit: int) -> int:
    """An upper bound on the number of terms of ``expr`` expanded, or ``limit + 1`` once it is
    past ``limit``: sums add, products multiply, a sum of k terms to the power e gives
    C(e + k − 1, k − 1) (the product of the powers of every term, as the estimate before this
    one took, refused issue 8's messy3 det M of 517 terms). Linear in the size of ``expr``."""
    memo: dict[se.Basic, int] = {}

    def count(e: se.Basic) -> int:
        if e in memo:
            return memo[e]
        if isinstance(e, se.Add):
            out = sum(count(a) for a in e.args)
        elif isinstance(e, se.Mul):
            out = 1
            for a in e.args:
                out *= count(a)
                if out > limit:
                    break
        elif isinstance(e, se.Pow) and e.args[1].is_Integer and int(e.args[1]) > 1:
            k = count(e.args[0])
            out = math.comb(int(e.args[1]) + k - 1, k - 1) if k <= limit else limit + 1
        else:
            out = 1
        memo[e] = out = min(out, limit + 1)
        return out

    return count(expr)


def expansion_work(expr: se.Basic, limit: int) -> int:
    """An upper bound on the terms ``se.expand(expr)`` builds, or ``limit + 1`` once past
    ``limit``: :func:`expanded_terms` of the whole, and of every base that SymEngine expands on
    the way, inside a root or a denominator (``1/(x + y)**100`` expands its base to 101 terms);
    the arguments of functions are not expanded. Linear in the size of ``expr``."""
    worst = expanded_terms(expr, limit)
    seen: set[se.Basic] = set()
    stack = [expr]
    while stack and worst <= limit:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if isinstance(e, se.Pow):
            base, exponent = e.args
            if not (exponent.is_Integer and int(exponent) > 1):
                inner = base**abs(int(exponent)) if exponent.is_Integer else base
                worst = max(worst, expanded_terms(inner, limit))
        if isinstance(e, (se.Add, se.Mul, se.Pow)):
            stack.extend(e.args)
    return worst


def expandable(expr: se.Basic) -> bool:
    """Whether multiplying ``expr`` out builds at most :data:`lagsim.spec.limits.MAX_EXPANSION`
    terms (:func:`expansion_work`); when not, that is said once on stderr. For callers that hand
    ``expr`` to a routine that multiplies out inside (SymPy's polynomial gcd)."""
    if expansion_work(expr, MAX_EXPANSION) <= MAX_EXPANSION:
        return True
    bound = expansion_work(expr, 10**30)
    say_once("expansion", "note: an expression is left as it is, not multiplied out: "
              + exceeded("expansion", f"it would have up to {bound:,} terms"))
    return False


def bounded_expand(expr: se.Basic) -> se.Basic | None:
    """``se.expand(expr)``, or None when it would build more than
    :data:`lagsim.spec.limits.MAX_EXPANSION` terms (:func:`expandable`, which then says so once on
    stderr). The expansion runs where SIGTERM and SIGINT end the process (:func:`killable`):
    it is one C call that a Python signal handler cannot interrupt."""
    if not expandable(expr):
        return None
    with killable():
        return se.expand(expr)


def expands_to_zero(expr: se.Basic) -> bool | None:
    """Whether ``expr`` multiplies out to 0; None when that would pass the limit
    (:func:`bounded_expand`, which says so once): then nothing is proved either way."""
    out = bounded_expand(expr)
    return None if out is None else out == 0


def expanded(expr: se.Basic) -> se.Basic:
    """``expr`` multiplied out (:func:`bounded_expand`), or as it is past the limit."""
    out = bounded_expand(expr)
    return expr if out is None else out


_ENDING: list[bool] = []
"""Non-empty inside :func:`signals_end_process`."""


@contextmanager
def signals_end_process() -> Iterator[None]:
    """Within the block (a ``lagsim`` command), :func:`killable` blocks let SIGTERM, SIGINT and
    SIGHUP end the process. Outside one (a program or notebook using the API) they do nothing:
    Ctrl-C must not end a notebook's kernel."""
    _ENDING.append(True)
    try:
        yield
    finally:
        _ENDING.pop()


@contextmanager
def killable() -> Iterator[None]:
    """Within the block, inside :func:`signals_end_process`, SIGTERM, SIGINT and SIGHUP take
    their default action, ending the process at once (the shell sees 143, 130, 129), where they
    would otherwise wait for the block to end: Python runs its signal handlers between
    bytecodes, never inside one long C call such as a SymEngine expansion, differentiation or
    common-subexpression elimination (issue 32). A signal the caller ignores (``nohup``) stays
    ignored; outside the main thread nothing changes. A signal that came before the block is
    handled after it, by its handler. The handlers are swapped with the signals held
    (:func:`lagsim.errors.signals_blocked`), so that a signal arriving meanwhile is not lost."""
    if not _ENDING or threading.current_thread() is not threading.main_thread():
        yield
        return
    numbers = [n for n in (getattr(signal, name, None) for name in ("SIGTERM", "SIGINT",
                                                                     "SIGHUP")) if n is not None]
    saved: dict[int, Any] = {}
    try:
        with signals_blocked(numbers):
            for number in numbers:
                handler = signal.getsignal(number)
                if handler not in (None, signal.SIG_IGN, signal.SIG_DFL):
                    signal.signal(number, signal.SIG_DFL)
                    saved[number] = handler
        yield
    finally:
        with signals_blocked(numbers):
            for number, handler in saved.items():
                signal.signal(number, handler)
