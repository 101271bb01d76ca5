"""The equation forms `lagsim derive` prints: one function per form, registered in :data:`FORMS`.

Every form takes a :class:`~lagsim.symbolic.model.Model` (symengine) and returns an immutable
:class:`Form`
of SymPy values for :mod:`lagsim.symbolic.render`. Conventions are the project's
(docs/architecture.md):
A stacks φ_q of the holonomic constraints and the rows a of the velocity constraints, and

    M q̈ = F + Aᵀλ,   F = ∂L/∂q − (∂²L/∂q̇∂q) q̇ − ∂²L/∂q̇∂t + τ     (seed 001 §10.7),

with λ_c the multiplier of constraint c (symbol ``lambda_<c>``). Seed 003 writes L − zᵀc instead of
001's L + λᵀφ, so its multiplier is z = −λ and its augmented matrix shows +Aᵀ where ours shows −Aᵀ.

Printing stays fast for any system (issues 8 §5 and 16 §4): tidying runs within the operation
budgets of :mod:`lagsim.symbolic.tidy`, and the index1 and Udwadia–Kalaba forms are printed in their
structural shape — K, [F; b] and the system K [q̈; λ] = [F; b]; M a = F, A and b with the
formula — and get the solved closed form only when it stays within :data:`CLOSED_FORM_MAX_OPS`.
A closed form past that is pages of one fraction no student reads, and cancelling it took
minutes. What was left untidied is listed on :attr:`Form.untidied` (``--debug`` prints it).

Seeds: ``001_80d65b968ce3cb18.txt`` (Lagrangian, Theorem 10.2, matrix form 10.12–10.14, §10.7),
``002_485a91571cac8ced.txt`` (§23.5 reduced coordinates), ``003_88d23709419132a0.txt`` (index
reduction, augmented matrix), ``004_2a8ddee2a66c9af0.txt`` (Udwadia–Kalaba).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import symengine as se
import sympy

from lagsim.spec.expressions import diff
from lagsim.spec.references import (  # noqa: F401  (used here, and imported from forms elsewhere)
    REFERENCES,
    SEED_001,
    SEED_002,
    SEED_003,
    SEED_004,
    SOURCES,
    cite,
    public_text,
)
from lagsim.symbolic import names, tidy
from lagsim.symbolic.expansion import expanded
from lagsim.symbolic.model import Model, to_sympy

CLOSED_FORM_MAX_N = 3
"""Udwadia–Kalaba closed forms are tried for n ≤ this; index1's for n ≤ this + 1 and m = 1."""

CLOSED_FORM_MAX_OPS = 300
"""A closed form (q̈, λ or Q_c, before cancelling) longer than this many operations, or one whose
inputs are longer, is not printed: the structural pieces are (issue 16 §4). Deterministic, unlike
a time limit, so the printed form does not depend on the machine's load."""


@dataclass(frozen=True)
class Item:
    """One labelled value of a form: a SymPy expression, an immutable matrix or an equation.

    ``label`` is plain text (used by text and json); ``tex`` is its LaTeX, empty for ``\\text{}``.
    """

    label: str
    value: sympy.Basic
    tex: str = ""


@dataclass(frozen=True)
class Form:
    """A named way of writing the equations of motion of one model."""

    name: str
    title: str
    formula: str
    citation: str
    items: tuple[Item, ...]
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    formula_latex: str = ""
    untidied: tuple[str, ...] = ()
    """What was printed without tidying because it was over its budget (`--debug` says so)."""

    @property
    def equations(self) -> tuple[sympy.Eq, ...]:
        """The items that are equations, in order."""
        return tuple(item.value for item in self.items if isinstance(item.value, sympy.Eq))


class _Symbols:
    """The SymPy symbols of a model: q, q̇, q̈, λ and t."""

    def __init__(self, model: Model) -> None:
        self.q = [sympy.Symbol(str(s)) for s in model.q]
        self.qd = [sympy.Symbol(str(s)) for s in model.qd]
        self.qdd = [sympy.Symbol(str(s)) for s in model.qdd]
        self.lam = [sympy.Symbol(c.multiplier) for c in model.constraints]
        self.t = sympy.Symbol("t")
        self.accel = tuple(self.qdd + self.lam)
        """q̈ and λ: the symbols whose terms a printed equation gathers."""


def warnings_for(model: Model) -> tuple[str, ...]:
    """A singular mass matrix is a warning for `derive` (issue 2), naming the coordinates."""
    singular = model.singular_coordinates()
    if not singular:
        return ()
    names = ", ".join(singular)
    return (f"the mass matrix is singular: the velocity of {names} appears nowhere in the kinetic "
            f"energy, so these equations cannot be solved for q̈ (simulate will refuse)",)


def _tidy(value: sympy.Basic, skips: list[str], what: str, deep: bool = False,
          collect: tuple[sympy.Symbol, ...] = ()) -> sympy.Basic:
    """``value`` (expression, matrix, equation, matrix product) tidied entry by entry:
    :func:`lagsim.symbolic.tidy.cheap` (like terms combined, sin² + cos² = 1, ``collect`` gathered,
    common
    factors out; issue 14), and with ``deep`` (``--simplify``) :func:`lagsim.symbolic.tidy.light`'s
    bounded ``sympy.simplify`` too."""
    def one(e: sympy.Expr) -> sympy.Expr:
        e = tidy.cheap(e, skips, what, collect)
        return tidy.light(e, skips, what, deep=True) if deep else e

    if isinstance(value, sympy.Eq):
        return sympy.Eq(_tidy(value.lhs, skips, what, deep, collect),
                        _tidy(value.rhs, skips, what, deep, collect), evaluate=False)
    if isinstance(value, sympy.MatrixBase):
        return sympy.ImmutableMatrix(value.applyfunc(one))
    if isinstance(value, sympy.MatMul):
        return sympy.MatMul(*(_tidy(a, skips, what, deep, collect) for a in value.args),
                            evaluate=False)
    if isinstance(value, sympy.Expr):
        return one(value)
    return value


def _items(entries: list[Item], simplify: bool, skips: list[str],
           collect: tuple[sympy.Symbol, ...] = ()) -> tuple[Item, ...]:
    """The entries tidied (:func:`_tidy`): cheaply by default, deeper with ``simplify``."""
    return tuple(Item(e.label, _tidy(e.value, skips, e.label, simplify, collect), e.tex)
                 for e in entries)


def _untidied(skips: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(skips))


def _eq(lhs: sympy.Basic, rhs: sympy.Basic) -> sympy.Eq:
    return sympy.Eq(lhs, rhs, evaluate=False)


def _tex(name: str) -> str:
    return names.latex(name)


EXPAND_MAX_TERMS = 2000
"""An expression is printed expanded (by SymEngine, before the conversion to SymPy) when that
gives at most this many terms: the 32-chain's Euler–Lagrange equations are 1.2 MB of nested
sums as derived and about 130 terms each expanded, which the tidying then combines."""


def _sy(expr: se.Basic, collect: tuple[sympy.Symbol, ...] = ()) -> sympy.Expr:
    """A SymEngine expression as SymPy, tidied on the way (:func:`lagsim.symbolic.tidy.cheap`, in
    SymEngine where it can), else expanded first when that stays within
    :data:`EXPAND_MAX_TERMS` terms and does not raise a power of a sum."""
    from lagsim.symbolic.model import _expands_small

    fast = tidy.cheap(expr, collect=collect)
    if isinstance(fast, sympy.Basic):
        return fast
    if _expands_small(expr):
        multiplied = expanded(expr)
        if len(multiplied.args) <= EXPAND_MAX_TERMS:
            expr = multiplied
    return to_sympy(expr)


def _matrix(expr: se.DenseMatrix | sympy.MatrixBase) -> sympy.ImmutableMatrix:
    if isinstance(expr, se.DenseMatrix):
        expr = sympy.Matrix(expr.rows, expr.cols, [_sy(e) for e in expr])
    return sympy.ImmutableMatrix(expr)


def _column(values: list[sympy.Basic]) -> sympy.ImmutableMatrix:
    return sympy.ImmutableMatrix(len(values), 1, values)


def _euler_lagrange_lhs(model: Model) -> list[se.Basic]:
    """d/dt ∂L/∂q̇_i − ∂L/∂q_i along q̇, q̈, without τ (001 Theorem 10.2): M q̈ − F + τ, since
    F = ∂L/∂q − (∂²L/∂q̇∂q) q̇ − ∂²L/∂q̇∂t + τ and d/dt ∂L/∂q̇ = M q̈ + (∂²L/∂q̇∂q) q̇ +
    ∂²L/∂q̇∂t (the model's M and F, not differentiated again)."""
    M, F, tau = model.mass_matrix, model.forcing, model.tau
    return [se.Add(*(M[i, j] * model.qdd[j] for j in range(model.n))) - F[i] + tau[i]
            for i in range(model.n)]


def _constraint_items(model: Model) -> list[Item]:
    """φ = 0 for holonomic constraints, a·q̇ + c = 0 for velocity constraints (001 §10.7)."""
    return [Item(c.name, _eq(to_sympy(c.expression), sympy.Integer(0)), rf"\text{{{c.name}}}")
            for c in model.constraints]


def _constraint_forces(model: Model, s: _Symbols) -> list[sympy.Expr]:
    """(Aᵀλ)_i for each coordinate."""
    A = to_sympy(model.A)
    return [sympy.Add(*(A[k, i] * s.lam[k] for k in range(model.m))) for i in range(model.n)]


def lagrange_form(model: Model, simplify: bool = False) -> Form:
    """d/dt ∂L/∂q̇_i − ∂L/∂q_i = τ_i + (Aᵀλ)_i for each coordinate, and the constraints.

    Seed 001 Theorem 10.2 (unconstrained), the forced form after 10.8, and §10.7 with multipliers
    λ_c (``lambda_<c>``) when there are constraints: φ(q, t) = 0, or a·q̇ + c = 0 for a velocity
    constraint, whose row a takes the place of φ_q.
    """
    s = _Symbols(model)
    tau = _matrix(model.tau)
    lhs = _euler_lagrange_lhs(model)
    forces = _constraint_forces(model, s)
    entries = [
        Item(name, _eq(_sy(lhs[i], s.accel), tau[i] + forces[i]), _tex(name))
        for i, name in enumerate(model.coordinates)
    ]
    entries += _constraint_items(model)
    formula = "d/dt ∂L/∂q̇ − ∂L/∂q = τ" + (" + Aᵀλ,  φ(q, t) = 0" if model.m else "")
    tex = (r"\frac{d}{dt}\frac{\partial L}{\partial \dot{q}} - \frac{\partial L}{\partial q} = "
           r"\tau" + (r" + A^{T}\lambda, \quad \phi(q, t) = 0" if model.m else ""))
    skips: list[str] = []
    return Form(
        name="lagrange", title="Euler–Lagrange equations", formula=formula,
        citation=cite(SEED_001, "Theorem 10.2" + (", §10.7" if model.m else "")),
        items=_items(entries, simplify, skips, s.accel), warnings=warnings_for(model),
        formula_latex=tex,
        untidied=_untidied(skips),
    )


CORIOLIS = ("christoffel", "seed")
"""The factorizations of the velocity terms C(q, q̇) q̇ that :func:`coriolis_matrix` builds."""

CHRISTOFFEL_NOTE = ("C(q, q̇) is the Christoffel form C_ij = Σ_k Γ_ijk q̇_k, Γ_ijk = ½(∂M_ij/∂q_k "
                    "+ ∂M_ik/∂q_j − ∂M_jk/∂q_i), for which Ṁ − 2C is skew-symmetric "
                    "[Spong–Hutchinson–Vidyasagar §7.3]; [DAE eqs 10.13–10.14] factor the same "
                    "C(q, q̇) q̇ with h_ijk = ∂M_ij/∂q_k − ½ ∂M_jk/∂q_i instead")
SEED_NOTE = ("C(q, q̇) is the factorization of [DAE eqs 10.13–10.14], C_ij = Σ_k h_ijk q̇_k with "
             "h_ijk = ∂M_ij/∂q_k − ½ ∂M_jk/∂q_i: C q̇ is the Christoffel form's, but Ṁ − 2C is "
             "not skew-symmetric")


def coriolis_matrix(model: Model, factorization: str = "christoffel") -> se.DenseMatrix:
    """C(q, q̇) with C(q, q̇) q̇ = (∂²L/∂q̇∂q) q̇ − ∂T/∂q for T = ½ q̇ᵀM(q)q̇; C is not unique.

    ``"christoffel"``: C_ij = Σ_k Γ_ijk q̇_k with the Christoffel symbols of the first kind
    Γ_ijk = ½(∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i), the one for which Ṁ − 2C is skew-symmetric
    (M. W. Spong, S. Hutchinson, M. Vidyasagar, *Robot Modeling and Control*, §7.3; R. M.
    Murray, Z. Li, S. S. Sastry, *A Mathematical Introduction to Robotic Manipulation*, ch. 4),
    which passivity-based control relies on. ``"seed"``: C_ij = Σ_k h_ijk q̇_k with
    h_ijk = ∂m_ij/∂q_k − ½ ∂m_jk/∂q_i (001 eqs 10.13–10.14)."""
    if factorization not in CORIOLIS:
        raise ValueError(f"factorization must be one of {', '.join(CORIOLIS)}, not "
                         f"{factorization!r}")
    M, q, qd, n = model.mass_matrix, model.q, model.qd, model.n
    dM = [[[diff(M[i, j], q[k]) for k in range(n)] for j in range(n)] for i in range(n)]
    C = se.zeros(n, n)
    half = se.Rational(1, 2)
    for i in range(n):
        for j in range(n):
            if factorization == "christoffel":
                terms = (half * (dM[i][j][k] + dM[i][k][j] - dM[j][k][i]) * qd[k]
                         for k in range(n))
            else:
                terms = ((dM[i][j][k] - half * dM[j][k][i]) * qd[k] for k in range(n))
            C[i, j] = se.Add(*terms)
    return C


def _vanishes(expr: se.Basic, model: Model) -> bool:
    """Whether expr ≡ 0: expanded symbolically, else at three random points to 1e-10."""
    expr = expanded(expr)
    if expr == 0:
        return True
    rng = random.Random(20240)
    names = sorted(expr.free_symbols, key=str)
    for _ in range(3):
        point = {v: se.Float(rng.uniform(0.3, 1.3)) for v in names}
        try:
            value = complex(se.sympify(expr.subs(point)).n())
        except (RuntimeError, TypeError, ValueError):
            return False
        if not abs(value) < 1e-10:
            return False
    return True


def matrix_form(model: Model, simplify: bool = False,
                coriolis: str = "christoffel") -> Form:
    """M(q) q̈ + C(q, q̇) q̇ + g(q) = τ (001 eqs 10.12–10.14 and the matrix formulation after).

    M = ∂²L/∂q̇², C by :func:`coriolis_matrix` (the Christoffel form by default, the seed's h_ijk
    with ``coriolis="seed"``; a note says which), g = ∂U/∂q with U = −L(q, 0, t). When L is
    not ½q̇ᵀM(q)q̇ − U(q, t) (gyroscopic terms linear in q̇, M depending on t or q̇) a remainder
    r = d/dt ∂L/∂q̇ − ∂L/∂q − M q̈ − C q̇ − g is added, so that M q̈ + C q̇ + g + r = τ holds
    exactly. Constraint forces Aᵀλ join the right-hand side as in §10.7.
    """
    s = _Symbols(model)
    n = model.n
    M = model.mass_matrix
    C = coriolis_matrix(model, coriolis)
    U = -model.lagrangian.subs({v: 0 for v in model.qd})
    g = se.DenseMatrix(n, 1, [diff(U, qi) for qi in model.q])
    Cqd = C * se.DenseMatrix(n, 1, list(model.qd))
    lhs = _euler_lagrange_lhs(model)
    remainder = [
        lhs[i] - sum((M[i, j] * model.qdd[j] for j in range(n)), se.Integer(0)) - Cqd[i] - g[i]
        for i in range(n)
    ]
    has_remainder = not all(_vanishes(r, model) for r in remainder)
    Ms, Cs, gs, tau = (_matrix(x) for x in (M, C, g, model.tau))
    Cqds = _matrix(Cqd)
    rs = _column([to_sympy(expanded(r)) for r in remainder]) if has_remainder else None
    entries = [
        Item("M(q)", Ms, r"M(q)"), Item("C(q, q̇)", Cs, r"C(q, \dot{q})"),
        Item("C(q, q̇) q̇", Cqds, r"C(q, \dot{q})\,\dot{q}"), Item("g(q)", gs, r"g(q)"),
        Item("τ", tau, r"\tau"),
    ]
    if rs is not None:
        entries.append(Item("r(q, q̇, t)", rs, r"r(q, \dot{q}, t)"))
    forces = _constraint_forces(model, s)
    for i, name in enumerate(model.coordinates):
        row = se.Add(*(M[i, j] * model.qdd[j] for j in range(n))) + Cqd[i] + g[i]
        if rs is not None:
            row += remainder[i]
        entries.append(Item(name, _eq(_sy(row, s.accel), tau[i] + forces[i]), _tex(name)))
    entries += _constraint_items(model)
    extra = " + r(q, q̇, t)" if rs is not None else ""
    lam = " + Aᵀλ" if model.m else ""
    notes: tuple[str, ...] = (CHRISTOFFEL_NOTE if coriolis == "christoffel" else SEED_NOTE,)
    if rs is not None:
        notes += ("L is not of the form ½ q̇ᵀM(q)q̇ − U(q, t) (gyroscopic, time- or velocity-"
                  "dependent inertia); r collects what M q̈ + C q̇ + g misses",)
    skips: list[str] = []
    return Form(
        name="matrix", title="matrix form", formula=f"M(q) q̈ + C(q, q̇) q̇ + g(q){extra} = τ{lam}",
        citation=cite(SEED_001, "eqs 10.12–10.14") + (
            "; C: [Spong–Hutchinson–Vidyasagar §7.3]" if coriolis == "christoffel"
            else " (h_ijk = ∂m_ij/∂q_k − ½ ∂m_jk/∂q_i)"),
        items=_items(entries, simplify, skips, s.accel), warnings=warnings_for(model), notes=notes,
        untidied=_untidied(skips),
        formula_latex=(r"M(q)\ddot{q} + C(q, \dot{q})\dot{q} + g(q)"
                       + (r" + r(q, \dot{q}, t)" if rs is not None else "") + r" = \tau"
                       + (r" + A^{T}\lambda" if model.m else "")),
    )


def dae_form(model: Model, simplify: bool = False) -> Form:
    """The index-3 DAE M q̈ − F = Aᵀλ, φ(q, t) = 0, a(q, t)·q̇ + c(q, t) = 0 (001 §10.7).

    F includes τ (001's forced form: d/dt ∂L/∂q̇ − ∂L/∂q = φ_qᵀλ + τ); velocity constraints enter
    A with their row a, like φ_q.
    """
    s = _Symbols(model)
    forces = _constraint_forces(model, s)
    entries = [
        Item(name, _eq(_sy(se.Add(*(model.mass_matrix[i, j] * model.qdd[j]
                                    for j in range(model.n))) - model.forcing[i], s.accel),
                       forces[i]), _tex(name))
        for i, name in enumerate(model.coordinates)
    ]
    entries += _constraint_items(model)
    notes = () if model.m else ("no constraints: the DAE is the ODE M q̈ = F",)
    skips: list[str] = []
    return Form(
        name="dae", title="index-3 differential-algebraic equations",
        formula="M(q) q̈ − F(q, q̇, t) = Aᵀλ,  φ(q, t) = 0,  a(q, t)·q̇ + c(q, t) = 0",
        citation=cite(SEED_001, "§10.7"), items=_items(entries, simplify, skips, s.accel),
        warnings=warnings_for(model), notes=notes, untidied=_untidied(skips),
        formula_latex=(r"M(q)\ddot{q} - F(q, \dot{q}, t) = A^{T}\lambda, \quad \phi(q, t) = 0, "
                       r"\quad a(q, t)\cdot\dot{q} + c(q, t) = 0"),
    )


def augmented_system(model: Model) -> tuple[sympy.ImmutableMatrix, sympy.ImmutableMatrix,
                                            sympy.ImmutableMatrix]:
    """K = [[M, −Aᵀ], [A, 0]], unknowns [q̈; λ] and right-hand side [F; b] (seed 003)."""
    s = _Symbols(model)
    n, m = model.n, model.m
    M, F = _matrix(model.mass_matrix), _matrix(model.forcing)
    A, b = _matrix(model.A), _matrix(model.b)
    K = sympy.zeros(n + m, n + m)
    K[:n, :n] = M
    if m:
        K[:n, n:] = -A.T
        K[n:, :n] = A
    rhs = F.col_join(b) if m else F
    return sympy.ImmutableMatrix(K), _column(s.qdd + s.lam), sympy.ImmutableMatrix(rhs)


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
               Item("system", _eq(sympy.MatMul(K, x, evaluate=False), rhs), r"\text{system}")]
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
                entries.append(Item(str(unknown), _eq(unknown, value), _tex(str(unknown))))
        elif not singular:
            notes.append(_TOO_LONG)
    elif model.m == 1:
        notes.append(f"closed form printed only for n ≤ {CLOSED_FORM_MAX_N + 1}")
    return Form(
        name="index1", title="index-1 augmented system",
        formula="[[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b]",
        citation=cite(SEED_003) + " (augmented matrix)",
        items=_items(entries, simplify, skips), warnings=tuple(warnings), notes=tuple(notes),
        formula_latex=(r"\begin{bmatrix} M & -A^{T} \\ A & 0 \end{bmatrix}"
                       r"\begin{bmatrix} \ddot{q} \\ \lambda \end{bmatrix} = "
                       r"\begin{bmatrix} F \\ b \end{bmatrix}"),
        untidied=_untidied(skips),
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
    from lagsim.symbolic.expansion import expands_to_zero

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
    has told already) or G⁺ when G is rank-deficient (:func:`_pseudo_inverse`)."""
    if not full_rank:
        return _pseudo_inverse(G)
    if G.shape == (1, 1):
        return sympy.Matrix([[1 / G[0, 0]]])
    return G.LUsolve(sympy.eye(G.rows))


def _pseudo_inverse(G: sympy.Matrix) -> sympy.Matrix:
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
    s = _Symbols(model)
    n, m = model.n, model.m
    M, F = _matrix(model.mass_matrix), _matrix(model.forcing)
    A, b = _matrix(model.A), _matrix(model.b)
    warnings = list(warnings_for(model))
    notes: list[str] = []
    skips: list[str] = []
    a_syms = _column([sympy.Symbol(f"a_{name}") for name in model.coordinates])
    regular = not warnings
    closed = _uk_closed(M, F, A, b, skips) if regular and n <= CLOSED_FORM_MAX_N else None
    diagonal = regular and _is_diagonal(M)
    if closed is None and diagonal:
        a_raw = [F[i] / M[i, i] for i in range(n)]
        a_value = (_column([_closed(e, skips, "a") for e in a_raw])
                   if _fits(*a_raw, skips=skips, what="a") else None)
    else:
        a_value = closed[0] if closed is not None and diagonal else None
    entries: list[Item] = []
    if a_value is not None:
        entries.append(Item("a", _eq(a_syms, a_value), "a"))
    else:
        entries.append(Item("a", _eq(sympy.MatMul(M, a_syms, evaluate=False), F), "a"))
    if m:
        entries += [Item("A", A, "A"), Item("b", b, "b")]
    if closed is not None:
        a, Qc, qdd, full_rank = closed
        if a_value is None:
            entries.append(Item("a = M⁻¹F", _eq(a_syms, _column(list(a))), r"a = M^{-1}F"))
        if m:
            entries.append(Item("Q_c", _column(list(Qc)), "Q_{c}"))
            notes.append("closed form via M^{-1/2}(AM^{-1/2})⁺ = M⁻¹Aᵀ(AM⁻¹Aᵀ)"
                         + ("⁻¹ (A has full row rank)" if full_rank else "⁺ (A is rank-deficient)"))
        entries += [Item(str(s.qdd[i]), _eq(s.qdd[i], qdd[i]), _tex(str(s.qdd[i])))
                    for i in range(n)]
    elif regular and n <= CLOSED_FORM_MAX_N:
        notes.append(_TOO_LONG)
    elif regular:
        notes.append(f"n = {n} > {CLOSED_FORM_MAX_N}: the pieces are printed, not the closed form")
    return Form(
        name="udwadia-kalaba", title="Udwadia–Kalaba equation",
        formula="q̈ = a + M^{-1/2}(A M^{-1/2})⁺(b − A a),  M a = F,  A q̈ = b",
        citation=cite(SEED_004) + " (Statement)", items=_items(entries, simplify, skips),
        warnings=tuple(warnings), notes=tuple(notes),
        formula_latex=(r"\ddot{q} = a + M^{-1/2}\left(A M^{-1/2}\right)^{+}(b - A a), \quad "
                       r"M a = F, \quad A\ddot{q} = b"),
        untidied=_untidied(skips),
    )


_REDUCED_FORMULA = ("L̃ = L on φ = 0;  d/dt ∂L̃/∂q̇ − ∂L̃/∂q − τ̃ = 0;  "
                    "λ from (M q̈ − F)_e = (Aᵀλ)_e on φ = 0")
_REDUCED_NOTE = ("λ_c is the multiplier of M q̈ = F + Aᵀλ; a string's tension is −λ "
                 f"{cite(SEED_002, '§23.7')}")


def reduced_form(model: Model, simplify: bool = False,
                 q0: Mapping[str, float] | None = None) -> Form:
    """Lagrange's recipe (seed 002 §23.5): eliminate constrained coordinates, print L̃, the
    reduced equations d/dt ∂L̃/∂q̇ − ∂L̃/∂q = 0 for the free coordinates and each multiplier from
    the unconstrained equations evaluated on the constraint (step 5).

    λ_c is the multiplier of M q̈ = F + Aᵀλ, so for a constraint β = 0 it is the seed's μ (§23.7:
    λ_string = −mℓθ̇² − mg cos θ, the tension is −λ). ``q0`` picks the branch of a constraint
    solved for a coordinate. Raises InputError when no reduction applies (velocity or redundant
    constraints, none at all).

    Within derive's budget (issue 16 §4): the symbolic solve draws on the active
    :func:`lagsim.symbolic.tidy.budget` through :func:`lagsim.symbolic.tidy.bounded` (outside one,
    on
    :data:`lagsim.symbolic.reduce.SOLVE_BUDGET`). When it does not finish, or SymPy has no closed
    form,
    or the reduced equations exceed :data:`CLOSED_FORM_MAX_OPS` (the natural 8-chain's were
    327 kB of text; ``simplify`` prints them anyway), the form is the partitioned one of
    :func:`_partitioned_form`, equal to L̃'s equations, with a note saying why.
    """
    from lagsim.symbolic.reduce import SOLVE_BUDGET, NoClosedForm, reduce_model

    s = _Symbols(model)
    skips: list[str] = []
    b = tidy.active()
    try:
        if b is None:
            reduction = reduce_model(model, q0, budget=SOLVE_BUDGET)
        else:
            reduction = tidy.bounded(lambda: reduce_model(model, q0, budget=None), skips,
                                     "reduced", "symbolic elimination")
    except NoClosedForm as exc:
        if exc.timed_out:
            return _partitioned_form(model, q0, simplify, _out_of_time(b, exc.constraint))
        return _partitioned_form(
            model, q0, simplify, f"SymPy has no closed form for constraint '{exc.constraint}' "
            "solved for a single coordinate, so the dependent coordinates stay implicit")
    if reduction is None:
        return _partitioned_form(model, q0, simplify, _out_of_time(b, ""))
    integrated = tuple(f"velocity constraint '{name}' integrates (Frobenius' test, as `lagsim "
                       f"check` finds) to the holonomic constraint {integral}, which eliminates "
                       "a coordinate" for name, integral in reduction.integrated)
    equations = reduction.reduced.euler_lagrange()
    size = max(se.count_ops(e) for e in (*equations, *reduction.residual_e))
    if size > CLOSED_FORM_MAX_OPS and not simplify:
        return _partitioned_form(
            reduction.full, q0, simplify,
            f"the reduced equations in closed form reach {size} operations (more than "
            f"{CLOSED_FORM_MAX_OPS}: pages of one expression), so they are printed partitioned; "
            "--simplify prints the closed form however long", reduction, integrated)
    entries = [Item(f"eliminated {name}", _eq(sympy.Symbol(name), sympy.sympify(expr)),
                    _tex(name)) for name, expr in reduction.eliminated]
    entries.append(Item("L̃", reduction.lagrangian, r"\tilde{L}"))
    entries += [Item(name, _eq(to_sympy(eq), sympy.Integer(0)), _tex(name))
                for name, eq in zip(reduction.free, equations)]
    multipliers = tidy.bounded(lambda: reduction.multipliers, skips, "reduced", "multipliers")
    if multipliers is not None:
        entries += [Item(name, _eq(sympy.Symbol(name), sympy.sympify(expr)), _tex(name))
                    for name, expr in multipliers]
    else:
        lam = _column([sympy.Symbol(c.multiplier) for c in model.constraints])
        entries.append(Item("λ", _eq(sympy.MatMul(to_sympy(reduction.A_e).T, lam,
                                                  evaluate=False),
                                     _matrix(reduction.residual_e)), r"\lambda"))
    return Form(
        name="reduced", title="reduced (constrained) coordinates", formula=_REDUCED_FORMULA,
        citation=cite(SEED_002, "§23.5"), items=_items(entries, simplify, skips, s.accel),
        warnings=warnings_for(model), untidied=_untidied(skips),
        notes=(*integrated, _REDUCED_NOTE),
        formula_latex=(r"\tilde{L} = L\big|_{\phi = 0}, \quad \frac{d}{dt}"
                       r"\frac{\partial \tilde{L}}{\partial \dot{q}} - "
                       r"\frac{\partial \tilde{L}}{\partial q} - \tilde{\tau} = 0"),
    )


def _out_of_time(b: tidy.Budget | None, constraint: str) -> str:
    """Why the reduced form is partitioned when the symbolic solve ran out of time, and how to
    give it more."""
    from lagsim.symbolic.reduce import SOLVE_BUDGET

    seconds = b.seconds if b is not None else SOLVE_BUDGET
    on = f" (SymPy was solving constraint '{constraint}')" if constraint else ""
    return (f"the symbolic elimination did not finish within derive's budget of {seconds:g} s "
            f"CPU{on}, so the dependent coordinates stay implicit; --budget SECONDS (or "
            f"--simplify, {tidy.SIMPLIFY_SECONDS:g} s) gives SymPy time for the closed form")


def _partitioned_form(model: Model, q0: Mapping[str, float] | None, simplify: bool, why: str,
                      reduction: object | None = None, notes: tuple[str, ...] = ()) -> Form:
    """The reduced equations without solving the constraints: the coordinates partitioned into
    dependent u and independent v (Wehage and Haug 1982, by pivoting on φ_q at the start:
    :func:`lagsim.symbolic.reduce.partition`, the partition ``simulate --formulation reduced``
    starts
    with), u defined implicitly by φ(u, v, t) = 0, u̇ by φ̇ = φ_u u̇ + φ_v v̇ + φ_t = 0, and
    v̈ (with ü and λ) from M q̈ − F = Aᵀλ, A q̈ = b (seed 003's augmented system, the index-1
    DAE). Every item is the model's own M, F, A, b, φ: equal to the full derivation, and as cheap
    as the ``dae`` form. With a ``reduction`` (solved, but too long to print) its u and v, each
    eliminated coordinate and L̃ that stays within :data:`CLOSED_FORM_MAX_OPS` are printed
    too."""
    from lagsim.symbolic.reduce import partition

    s = _Symbols(model)
    skips: list[str] = []
    entries: list[Item] = []
    if reduction is not None:
        dependent = tuple(name for name, _ in reduction.eliminated)
        independent = reduction.free
    else:
        dependent, independent = partition(model, q0)
    entries += [Item(label, sympy.ImmutableMatrix([[sympy.Symbol(n) for n in names]]), tex)
                for label, names, tex in (("dependent u", dependent, "u"),
                                          ("independent v", independent, "v"))]
    if reduction is not None:
        entries += [Item(f"eliminated {name}", _eq(sympy.Symbol(name), to_sympy(expr)),
                         _tex(name)) for name, expr in reduction.eliminated
                    if se.count_ops(expr) <= CLOSED_FORM_MAX_OPS]
        if se.count_ops(reduction.reduced.lagrangian) <= CLOSED_FORM_MAX_OPS:
            entries.append(Item("L̃", reduction.lagrangian, r"\tilde{L}"))
    entries += _constraint_items(model)
    entries += [Item(f"{c.name}, velocity", _eq(_sy(c.velocity_form), sympy.Integer(0)),
                     rf"\dot{{\phi}}_{{\text{{{c.name}}}}}") for c in model.constraints]
    forces = _constraint_forces(model, s)
    M, F = model.mass_matrix, model.forcing
    entries += [
        Item(name, _eq(_sy(se.Add(*(M[i, j] * model.qdd[j] for j in range(model.n))) - F[i],
                           s.accel), forces[i]), _tex(name))
        for i, name in enumerate(model.coordinates)
    ]
    entries += [Item(f"{c.name}, acceleration",
                     _eq(_sy(se.Add(*(a * x for a, x in zip(c.row, model.qdd))), s.accel),
                         _sy(c.rhs)), rf"\ddot{{\phi}}_{{\text{{{c.name}}}}}")
                for c in model.constraints]
    return Form(
        name="reduced", title="reduced coordinates, partitioned (u implicit in φ = 0)",
        formula=("φ(u, v, t) = 0 gives u;  φ_u u̇ + φ_v v̇ + φ_t = 0 gives u̇;  "
                 "M q̈ − F = Aᵀλ, A q̈ = b give v̈ (with ü, λ)"),
        citation=(cite(SEED_002, "§23.5") + " with the partition of [Wehage–Haug] and "
                  + cite(SEED_003)),
        items=_items(entries, simplify, skips, s.accel), warnings=warnings_for(model),
        untidied=_untidied(skips), notes=(why, *notes, _REDUCED_NOTE),
        formula_latex=(r"\phi(u, v, t) = 0, \quad \phi_u \dot{u} + \phi_v \dot{v} + \phi_t = 0,"
                       r" \quad M\ddot{q} - F = A^{T}\lambda, \quad A\ddot{q} = b"),
    )


FORMS: dict[str, Callable[..., Form]] = {
    "lagrange": lagrange_form,
    "matrix": matrix_form,
    "dae": dae_form,
    "index1": index1_form,
    "udwadia-kalaba": udwadia_kalaba_form,
    "reduced": reduced_form,
    "linear": lambda model, simplify=False, q0=None: _linear(model, simplify, q0),
    "hamilton": lambda model, simplify=False: _hamilton(model, simplify),
}


def _hamilton(model: Model, simplify: bool = False) -> Form:
    """``--form hamilton`` (issue 10), defined in :func:`lagsim.symbolic.hamilton.hamilton_form`."""
    from lagsim.symbolic.hamilton import hamilton_form

    return hamilton_form(model, simplify)


def _linear(model: Model, simplify: bool = False, q0: Mapping[str, float] | None = None) -> Form:
    """``--form linear`` (issue 10), defined in :func:`lagsim.analysis.modes.linear_form`."""
    from lagsim.analysis.modes import linear_form

    return linear_form(model, simplify, q0)
