"""The forms solved for the accelerations: the index-1 augmented system K [q̈; λ] = [F; b]
(``index1``, seed 003) and the Udwadia–Kalaba equation (``udwadia-kalaba``, seed 004).

Both are printed in their structural shape — K, [F; b] and the system; M a = F, A and b with the
formula — and get the solved closed form only when it stays within
:data:`lagsim.symbolic.forms.base.CLOSED_FORM_MAX_OPS` (issue 16 §4): a closed form past that is
pages of one fraction no student reads, and cancelling it took minutes.

Seeds: ``003_88d23709419132a0.txt`` (index reduction, augmented matrix),
``004_2a8ddee2a66c9af0.txt`` (Udwadia–Kalaba). Seed 003 writes L − zᵀc instead of 001's L + λᵀφ,
so its multiplier is z = −λ and its augmented matrix shows +Aᵀ where ours shows −Aᵀ.
"""

from __future__ import annotations

import random

import numpy as np
import symengine as se
import sympy

from lagsim.spec.references import SEED_003, SEED_004, cite
from lagsim.symbolic import tidy
from lagsim.symbolic.expansion import expands_to_zero
from lagsim.symbolic.forms.base import (
    CLOSED_FORM_MAX_N,
    CLOSED_FORM_MAX_OPS,
    Form,
    Item,
    Symbols,
    column_of,
    equation,
    matrix_of,
    tex_of,
    tidy_items,
    untidied_of,
    warnings_for,
)
from lagsim.symbolic.model import Model


def augmented_system(model: Model) -> tuple[sympy.ImmutableMatrix, sympy.ImmutableMatrix,
                                            sympy.ImmutableMatrix]:
    """K = [[M, −Aᵀ], [A, 0]], unknowns [q̈; λ] and right-hand side [F; b] (seed 003)."""
    s = Symbols(model)
    n, m = model.n, model.m
    M, F = matrix_of(model.mass_matrix), matrix_of(model.forcing)
    A, b = matrix_of(model.A), matrix_of(model.b)
    K = sympy.zeros(n + m, n + m)
    K[:n, :n] = M
    if m:
        K[:n, n:] = -A.T
        K[n:, :n] = A
    rhs = F.col_join(b) if m else F
    return sympy.ImmutableMatrix(K), column_of(s.qdd + s.lam), sympy.ImmutableMatrix(rhs)


def index1_form(model: Model, simplify: bool = False) -> Form:
    """[[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b]: the constraints differentiated to A q̈ = b (seed 003).

    Seed 003 (flat pendulum, L − z c) prints [[m, 0, x], [0, m, y], [x, y, 0]] [ẍ; ÿ; z] =
    [0; 0; −ẋ² − ẏ²]; with M q̈ = F + Aᵀλ the multiplier column carries −Aᵀ and λ = −z. For a
    single constraint the closed form [q̈; λ] is printed too when it stays within
    :data:`CLOSED_FORM_MAX_OPS` (solved by SymPy for display only; the numerical path never
    inverts M); otherwise the system above is the form to read, and a note says so.
    """
    K, x, rhs = augmented_system(model)
    warnings = list(warnings_for(model))
    skips: list[str] = []
    entries = [Item("K", K, "K"), Item("unknowns", x, r"\begin{bmatrix}\ddot{q}\\ \lambda"
                                        r"\end{bmatrix}"),
               Item("right-hand side", rhs, r"\begin{bmatrix}F\\ b\end{bmatrix}"),
               Item("system", equation(sympy.MatMul(K, x, evaluate=False), rhs), r"\text{system}")]
    notes = [f"{cite(SEED_003)}'s multiplier z (from L − zᵀc) is −λ, hence its +Aᵀ column"]
    if model.m == 1 and model.n <= CLOSED_FORM_MAX_N + 1:
        Kt, rt = _cheap(K), _cheap(rhs)
        solution, singular = None, False
        if _fits(Kt, rt, skips=skips, what="index1 closed form"):
            try:
                solution = tidy.bounded(lambda: Kt.LUsolve(rt), skips,
                                        "index1 closed form", "solve")
            except (ValueError, ZeroDivisionError):
                singular = True
                warnings.append("the augmented matrix is singular: no closed form")
        if solution is not None and not _fits(*solution, skips=skips, what="index1 closed form"):
            solution = None
        if solution is not None:
            solution = tidy.bounded(
                lambda: [_closed(v, skips, str(u)) for u, v in zip(x, solution)], skips,
                "index1 closed form", "tidying")
        if solution is not None:
            for unknown, value in zip(x, solution):
                entries.append(Item(str(unknown), equation(unknown, value), tex_of(str(unknown))))
        elif not singular:
            notes.append(_TOO_LONG)
    elif model.m == 1:
        notes.append(f"closed form printed only for n ≤ {CLOSED_FORM_MAX_N + 1}")
    return Form(
        name="index1", title="index-1 augmented system",
        formula="[[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b]",
        citation=cite(SEED_003) + " (augmented matrix)",
        items=tidy_items(entries, simplify, skips), warnings=tuple(warnings), notes=tuple(notes),
        formula_latex=(r"\begin{bmatrix} M & -A^{T} \\ A & 0 \end{bmatrix}"
                       r"\begin{bmatrix} \ddot{q} \\ \lambda \end{bmatrix} = "
                       r"\begin{bmatrix} F \\ b \end{bmatrix}"),
        untidied=untidied_of(skips),
    )


_TOO_LONG = (f"the closed form would exceed its budget of {CLOSED_FORM_MAX_OPS} operations, so it "
             "is not printed: the pieces above are the equations to read")


def _fits(*values: sympy.Basic, skips: list[str], what: str) -> bool:
    """Whether every value is at most :data:`CLOSED_FORM_MAX_OPS` operations (else recorded)."""
    return all(tidy.within(v, CLOSED_FORM_MAX_OPS, skips, what, "closed form") for v in values)


def _cheap(matrix: sympy.MatrixBase) -> sympy.Matrix:
    """A matrix entry by entry through :func:`lagsim.symbolic.tidy.combine_trig` (linear-time
    tidying)."""
    return sympy.Matrix(matrix).applyfunc(tidy.combine_trig)


def _closed(expr: sympy.Expr, skips: list[str], what: str) -> sympy.Expr:
    """A solved expression tidied (:func:`lagsim.symbolic.tidy.cheap`) and over one denominator, and
    simplified when deep (``--simplify``, or outside a budget), each within its budget."""
    out = tidy.cancelled(tidy.cheap(expr, skips, what), skips, what)
    b = tidy.active()
    return tidy.light(out, skips, what, deep=True) if b is None or b.deep else out


def _is_diagonal(M: sympy.MatrixBase) -> bool:
    return all(expands_to_zero(se.sympify(M[i, j])) is True
               for i in range(M.rows) for j in range(M.cols) if i != j)


def _generic_point(G: sympy.MatrixBase, seed: int) -> np.ndarray:
    """G at a seeded random point, each free symbol in (0.3, 1.3), as a complex array."""
    rng = random.Random(seed)
    point = {v: rng.uniform(0.3, 1.3) for v in sorted(G.free_symbols, key=str)}
    return np.array(G.evalf(subs=point).tolist(), dtype=complex)


def _generic_rank(G: sympy.MatrixBase) -> int:
    """The rank of G at two seeded random points (the larger): its rank for almost every state,
    without simplifying its determinant."""
    return max(int(np.linalg.matrix_rank(_generic_point(G, 20240 + k))) for k in range(2))


def _uk_closed(M: sympy.MatrixBase, F: sympy.MatrixBase, A: sympy.MatrixBase,
               b: sympy.MatrixBase, skips: list[str]):
    """(a, Q_c, q̈, full_rank) of seed 004 in closed form, or None past the budget.

    M⁻¹F and M⁻¹Aᵀ are LU solves (for display only), and M^{-1/2}(AM^{-1/2})⁺ is written as
    M⁻¹Aᵀ(AM⁻¹Aᵀ)⁺, since B⁺ = Bᵀ(BBᵀ)⁺ for B = AM^{-1/2}.
    """
    what = "Udwadia–Kalaba closed form"
    Mt, Ft, At, bt = (_cheap(v) for v in (M, F, A, b))
    if not _fits(Mt, Ft, At, bt, skips=skips, what=what):
        return None
    n, m = Mt.rows, At.rows
    if _is_diagonal(Mt):
        a = sympy.Matrix(n, 1, [Ft[i] / Mt[i, i] for i in range(n)])
        W = sympy.Matrix(n, m, [At[k, i] / Mt[i, i] for i in range(n) for k in range(m)])
    else:
        solved = tidy.bounded(lambda: (Mt.LUsolve(Ft), Mt.LUsolve(At.T) if m else
                                       sympy.zeros(n, 0)), skips, what, "solve")
        if solved is None:
            return None
        a, W = solved
    if not _fits(*a, *W, skips=skips, what=what):
        return None
    a = a.applyfunc(lambda e: _closed(e, skips, "a"))
    if not m:
        return a, None, a, True
    G = (At * W).applyfunc(lambda e: _closed(e, skips, "A M⁻¹ Aᵀ"))
    full_rank = _generic_rank(G) == m
    if not _fits(G, skips=skips, what=what):
        return None
    Ginv = tidy.bounded(lambda: _inverse(G, full_rank), skips, what, "inverse")
    if Ginv is None:
        return None
    r = bt - At * a
    Qc, qdd = At.T * Ginv * r, a + W * Ginv * r
    if not _fits(*Qc, *qdd, skips=skips, what=what):
        return None
    return (a, Qc.applyfunc(lambda e: _closed(e, skips, "Q_c")),
            qdd.applyfunc(lambda e: _closed(e, skips, "q̈")), full_rank)


def _inverse(G: sympy.Matrix, full_rank: bool) -> sympy.Matrix:
    """G⁻¹ (1/g for 1×1, else by LU solves, whose pivoting tests only structural zeros:
    Gauss–Jordan's pivot search simplified a 1×1 G for 21 s, and ``inv(method="LU")`` first
    checks det G ≠ 0 by ``equals``, whose simplify imports sympy.physics.units; the generic rank
    has told already) or G⁺ when G is rank-deficient (:func:`pseudo_inverse`)."""
    if not full_rank:
        return pseudo_inverse(G)
    if G.shape == (1, 1):
        return sympy.Matrix([[1 / G[0, 0]]])
    return G.LUsolve(sympy.eye(G.rows))


def pseudo_inverse(G: sympy.Matrix) -> sympy.Matrix:
    """G⁺ = F⁺C⁺ = Fᵀ(FFᵀ)⁻¹(CᵀC)⁻¹Cᵀ from the full-rank factorization G = CF, C the columns
    of G that are independent at a random point (as many as its generic rank) and
    F = (CᵀC)⁻¹CᵀG, by LU solves only. SymPy's ``pinv`` row-reduces symbolically and calls
    ``simplify`` to decide its pivots, whose first call imports sympy.physics.units (0.5 s of
    the redundant pendulum's Udwadia–Kalaba form, issue 16 §4)."""
    values = _generic_point(G, 20240)
    rank = int(np.linalg.matrix_rank(values))
    cols: list[int] = []
    for j in range(G.cols):
        if np.linalg.matrix_rank(values[:, cols + [j]]) > len(cols):
            cols.append(j)
        if len(cols) == rank:
            break
    C = G[:, cols]
    CtC = C.T * C
    F = CtC.LUsolve(C.T * G)
    return F.T * (F * F.T).LUsolve(CtC.LUsolve(C.T))


NOTHING_TO_CONSTRAIN = ("no constraints, so the Udwadia–Kalaba equation is M q̈ = F itself: "
                        "see --form matrix or lagrange")


def udwadia_kalaba_form(model: Model, simplify: bool = False) -> Form:
    """q̈ = a + M^{-1/2}(A M^{-1/2})⁺(b − A a) with a = M⁻¹F and A q̈ = b (seed 004).

    The pieces are printed: a (in closed form when M is diagonal, else as the solve M a = F), A
    and b. For n ≤ 3 with a regular M the closed form q̈ and the constraint force
    Q_c = Aᵀ(AM⁻¹Aᵀ)⁺(b − A a) (seed 004) are printed too when they stay within
    :data:`CLOSED_FORM_MAX_OPS` (see :func:`_uk_closed`); otherwise a note says the pieces are
    the form to read. Without constraints there is nothing to add to M q̈ = F: the form has no
    items, only a note saying so (issue 14).
    """
    if not model.m:
        return Form(name="udwadia-kalaba", title="Udwadia–Kalaba equation",
                    formula="q̈ = a + M^{-1/2}(A M^{-1/2})⁺(b − A a),  M a = F,  A q̈ = b",
                    citation=cite(SEED_004) + " (Statement)", items=(),
                    notes=(NOTHING_TO_CONSTRAIN,), warnings=warnings_for(model))
    s = Symbols(model)
    n, m = model.n, model.m
    M, F = matrix_of(model.mass_matrix), matrix_of(model.forcing)
    A, b = matrix_of(model.A), matrix_of(model.b)
    warnings = list(warnings_for(model))
    notes: list[str] = []
    skips: list[str] = []
    a_syms = column_of([sympy.Symbol(f"a_{name}") for name in model.coordinates])
    regular = not warnings
    closed = _uk_closed(M, F, A, b, skips) if regular and n <= CLOSED_FORM_MAX_N else None
    diagonal = regular and _is_diagonal(M)
    if closed is None and diagonal:
        a_raw = [F[i] / M[i, i] for i in range(n)]
        a_value = (column_of([_closed(e, skips, "a") for e in a_raw])
                   if _fits(*a_raw, skips=skips, what="a") else None)
    else:
        a_value = closed[0] if closed is not None and diagonal else None
    entries: list[Item] = []
    if a_value is not None:
        entries.append(Item("a", equation(a_syms, a_value), "a"))
    else:
        entries.append(Item("a", equation(sympy.MatMul(M, a_syms, evaluate=False), F), "a"))
    if m:
        entries += [Item("A", A, "A"), Item("b", b, "b")]
    if closed is not None:
        a, Qc, qdd, full_rank = closed
        if a_value is None:
            entries.append(Item("a = M⁻¹F", equation(a_syms, column_of(list(a))), r"a = M^{-1}F"))
        if m:
            entries.append(Item("Q_c", column_of(list(Qc)), "Q_{c}"))
            notes.append("closed form via M^{-1/2}(AM^{-1/2})⁺ = M⁻¹Aᵀ(AM⁻¹Aᵀ)"
                         + ("⁻¹ (A has full row rank)" if full_rank else "⁺ (A is rank-deficient)"))
        entries += [Item(str(s.qdd[i]), equation(s.qdd[i], qdd[i]), tex_of(str(s.qdd[i])))
                    for i in range(n)]
    elif regular and n <= CLOSED_FORM_MAX_N:
        notes.append(_TOO_LONG)
    elif regular:
        notes.append(f"n = {n} > {CLOSED_FORM_MAX_N}: the pieces are printed, not the closed form")
    return Form(
        name="udwadia-kalaba", title="Udwadia–Kalaba equation",
        formula="q̈ = a + M^{-1/2}(A M^{-1/2})⁺(b − A a),  M a = F,  A q̈ = b",
        citation=cite(SEED_004) + " (Statement)", items=tidy_items(entries, simplify, skips),
        warnings=tuple(warnings), notes=tuple(notes),
        formula_latex=(r"\ddot{q} = a + M^{-1/2}\left(A M^{-1/2}\right)^{+}(b - A a), \quad "
                       r"M a = F, \quad A\ddot{q} = b"),
        untidied=untidied_of(skips),
    )
