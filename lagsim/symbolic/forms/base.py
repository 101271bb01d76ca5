"""What every form of :mod:`lagsim.symbolic.forms` is made of: the :class:`Form` and its
:class:`Item` values, the model's symbols, and the pieces the families share (the Euler–Lagrange
left-hand sides, the constraint rows and forces, tidying within the derive budget).

Conventions are the project's (docs/architecture.md): A stacks φ_q of the holonomic constraints
and the rows a of the velocity constraints, and

    M q̈ = F + Aᵀλ,   F = ∂L/∂q − (∂²L/∂q̇∂q) q̇ − ∂²L/∂q̇∂t + τ     (seed 001 §10.7),

with λ_c the multiplier of constraint c (symbol ``lambda_<c>``). Seed:
``001_80d65b968ce3cb18.txt`` (Theorem 10.2, §10.7).
"""

from __future__ import annotations

import symengine as se
import sympy

from lagsim.records import record
from lagsim.symbolic import names, tidy
from lagsim.symbolic.expansion import expanded
from lagsim.symbolic.model import Model, expands_small, to_sympy

CLOSED_FORM_MAX_N = 3
"""Udwadia–Kalaba closed forms are tried for n ≤ this; index1's for n ≤ this + 1 and m = 1."""

CLOSED_FORM_MAX_OPS = 300
"""A closed form (q̈, λ or Q_c, before cancelling) longer than this many operations, or one whose
inputs are longer, is not printed: the structural pieces are (issue 16 §4). Deterministic, unlike
a time limit, so the printed form does not depend on the machine's load."""


@record
class Item:
    """One labelled value of a form: a SymPy expression, an immutable matrix or an equation.

    ``label`` is plain text (used by text and json); ``tex`` is its LaTeX, empty for ``\\text{}``.
    """

    label: str
    value: sympy.Basic
    tex: str = ""


@record
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


class Symbols:
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
    common factors out; issue 14), and with ``deep`` (``--simplify``)
    :func:`lagsim.symbolic.tidy.light`'s bounded ``sympy.simplify`` too."""
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


def tidy_items(entries: list[Item], simplify: bool, skips: list[str],
           collect: tuple[sympy.Symbol, ...] = ()) -> tuple[Item, ...]:
    """The entries tidied (:func:`_tidy`): cheaply by default, deeper with ``simplify``."""
    return tuple(Item(e.label, _tidy(e.value, skips, e.label, simplify, collect), e.tex)
                 for e in entries)


def untidied_of(skips: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(skips))


def equation(lhs: sympy.Basic, rhs: sympy.Basic) -> sympy.Eq:
    return sympy.Eq(lhs, rhs, evaluate=False)


def tex_of(name: str) -> str:
    return names.latex(name)


EXPAND_MAX_TERMS = 2000
"""An expression is printed expanded (by SymEngine, before the conversion to SymPy) when that
gives at most this many terms: the 32-chain's Euler–Lagrange equations are 1.2 MB of nested
sums as derived and about 130 terms each expanded, which the tidying then combines."""


def sympy_of(expr: se.Basic, collect: tuple[sympy.Symbol, ...] = ()) -> sympy.Expr:
    """A SymEngine expression as SymPy, tidied on the way (:func:`lagsim.symbolic.tidy.cheap`, in
    SymEngine where it can), else expanded first when that stays within
    :data:`EXPAND_MAX_TERMS` terms and does not raise a power of a sum."""
    fast = tidy.cheap(expr, collect=collect)
    if isinstance(fast, sympy.Basic):
        return fast
    if expands_small(expr):
        multiplied = expanded(expr)
        if len(multiplied.args) <= EXPAND_MAX_TERMS:
            expr = multiplied
    return to_sympy(expr)


def matrix_of(expr: se.DenseMatrix | sympy.MatrixBase) -> sympy.ImmutableMatrix:
    if isinstance(expr, se.DenseMatrix):
        expr = sympy.Matrix(expr.rows, expr.cols, [sympy_of(e) for e in expr])
    return sympy.ImmutableMatrix(expr)


def column_of(values: list[sympy.Basic]) -> sympy.ImmutableMatrix:
    return sympy.ImmutableMatrix(len(values), 1, values)


def euler_lagrange_lhs(model: Model) -> list[se.Basic]:
    """d/dt ∂L/∂q̇_i − ∂L/∂q_i along q̇, q̈, without τ (001 Theorem 10.2): M q̈ − F + τ, since
    F = ∂L/∂q − (∂²L/∂q̇∂q) q̇ − ∂²L/∂q̇∂t + τ and d/dt ∂L/∂q̇ = M q̈ + (∂²L/∂q̇∂q) q̇ +
    ∂²L/∂q̇∂t (the model's M and F, not differentiated again)."""
    M, F, tau = model.mass_matrix, model.forcing, model.tau
    return [se.Add(*(M[i, j] * model.qdd[j] for j in range(model.n))) - F[i] + tau[i]
            for i in range(model.n)]


def constraint_items(model: Model) -> list[Item]:
    """φ = 0 for holonomic constraints, a·q̇ + c = 0 for velocity constraints (001 §10.7)."""
    return [Item(c.name, equation(to_sympy(c.expression), sympy.Integer(0)), rf"\text{{{c.name}}}")
            for c in model.constraints]


def constraint_forces(model: Model, s: Symbols) -> list[sympy.Expr]:
    """(Aᵀλ)_i for each coordinate."""
    A = to_sympy(model.A)
    return [sympy.Add(*(A[k, i] * s.lam[k] for k in range(model.m))) for i in range(model.n)]
