"""Common factors taken out of sums before C is generated, for large models (issue 31, "Scale").

A sum whose terms share a factor is written as that factor times the sum of the quotients,
greedily (the factor found in most terms first, then again in the quotients and in the terms
left), the multivariate Horner scheme of code optimisers such as FORM's (J. Kuipers, T. Ueda,
J. A. M. Vermaseren, "Code optimization in FORM", Comput. Phys. Commun. 189 (2015) 1–19, §3:
greedy Horner schemes before common-subexpression elimination). A term that is a product
with a sum of two terms among its factors is first opened into two products, so that the
factors inside that sum count too: the chain's ∂L/∂θ_i holds, for every j, a product
w_ij l² (2 sin θ_i cos θ_j − 2 sin θ_j cos θ_i) θ̇_j², whose sin θ_i and cos θ_i are common to
the row only once opened. The n-link chain's forcing term F_i, a sum over the bobs k ≥ i of
½ m (2 l v_x,k cos θ_i θ̇_i − 2 l v_y,k sin θ_i θ̇_i) and of those products, gets from 7,164
multiplications in the 32-chain's C to 713. The value is the same expression in exact
arithmetic; in floating point the operations are associated differently, so results change at
rounding level only (tests/test_scale.py holds them to 1e-12 relative on random states).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import symengine as se

_UNITS = frozenset((se.Integer(1), se.Integer(-1)))
_REBUILT = (se.Mul, se.Pow, se.Function)
"""What is rewritten inside: products, powers and functions of arguments (sin, abs, atan2, a
user's f(x)); anything else (a piecewise expression and its conditions, a derivative) is kept
as it is, sums inside it included."""
_KEPT = (se.Piecewise, se.Derivative, se.Subs)


def _factors(term: se.Basic) -> frozenset[se.Basic]:
    """The factors of a product (the term itself when it is not one), without ±1."""
    return frozenset(term.args if isinstance(term, se.Mul) else (term,)) - _UNITS


def _without(term: se.Basic, factor: se.Basic) -> se.Basic:
    """``term`` with one occurrence of ``factor`` removed from its product."""
    if term == factor:
        return se.Integer(1)
    args = list(term.args)
    args.remove(factor)
    return se.Mul(*args)


def _opened(term: se.Basic) -> list[se.Basic]:
    """A product with a sum of two terms among its factors as the two products (the terms' own
    factors then count among the sum's); any other term as it is."""
    if isinstance(term, se.Mul):
        for k, f in enumerate(term.args):
            if isinstance(f, se.Add) and len(f.args) == 2:
                rest = term.args[:k] + term.args[k + 1:]
                return [se.Mul(*rest, a) for a in f.args]
    return [term]


class _Gather:
    def __init__(self) -> None:
        self.memo: dict[se.Basic, se.Basic] = {}

    def __call__(self, e: se.Basic) -> se.Basic:
        done = self.memo.get(e)
        if done is not None:
            return done
        if isinstance(e, se.Add):
            done = self._add(list(e.args))
        elif isinstance(e, _REBUILT) and not isinstance(e, _KEPT):
            done = e.func(*[self(a) for a in e.args])
        else:
            done = e
        self.memo[e] = done
        return done

    def _add(self, terms: list[se.Basic]) -> se.Basic:
        """The sum of ``terms`` gathered: the factor in most terms (the first met among equals)
        taken out, then the next among the terms left, each taken out of its terms' quotients
        again; a heap of the factors' counts, which only fall, keeps this O(N log N) in the
        size N of the terms (a sum of thousands of terms sharing factors pairwise stays
        quick)."""
        terms = [u for t in terms for u in _opened(t)]
        sets = [_factors(t) for t in terms]
        where: dict[se.Basic, list[int]] = {}
        for k, s in enumerate(sets):
            for f in s:
                where.setdefault(f, []).append(k)
        order = {f: i for i, f in enumerate(where)}
        counts = {f: len(ks) for f, ks in where.items()}
        heap = [(-c, order[f]) for f, c in counts.items() if c > 1]
        heapq.heapify(heap)
        factors = list(where)
        alive = [True] * len(terms)
        out: list[se.Basic] = []
        while heap:
            c, i = heapq.heappop(heap)
            factor = factors[i]
            if -c != counts[factor]:
                if counts[factor] > 1:
                    heapq.heappush(heap, (-counts[factor], i))
                continue
            inside = []
            for k in where[factor]:
                if alive[k]:
                    alive[k] = False
                    inside.append(_without(terms[k], factor))
                    for f in sets[k]:
                        counts[f] -= 1
            out.append(se.Mul(factor, self(se.Add(*inside))))
        out += [self(t) for t, kept in zip(terms, alive) if kept]
        return se.Add(*out)


def gather_factors(exprs: Sequence[se.Basic]) -> list[se.Basic]:
    """``exprs`` with the common factors of every sum taken out (see the module docstring);
    subexpressions shared between them are rewritten once and stay shared."""
    gather = _Gather()
    return [gather(se.sympify(e)) for e in exprs]
