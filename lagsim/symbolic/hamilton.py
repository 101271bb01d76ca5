"""Hamilton's form of a Lagrangian quadratic in the velocities (issue 10, `derive --form hamilton`).

For L = ½ q̇ᵀ M(q, t) q̇ + b(q, t)·q̇ + L₀(q, t) (seed ``001_80d65b968ce3cb18.txt`` §10.6: M is
∂²L/∂q̇², which then does not depend on q̇) the Legendre transform is

    p = ∂L/∂q̇ = M q̇ + b,    q̇ = M⁻¹(p − b),    H(q, p, t) = p·q̇ − L = ½ (p − b)ᵀ M⁻¹ (p − b) − L₀,

and Hamilton's equations, with the generalized forces τ and the constraint forces Aᵀλ of
M q̈ = F + Aᵀλ (§10.7) added to ṗ, are

    q̇ = ∂H/∂p,    ṗ = −∂H/∂q + τ + Aᵀλ.

H equals the energy function h = q̇·∂L/∂q̇ − L at the same state. M⁻¹ is written out only for
printing and only while small (n ≤ :data:`EXPLICIT_MAX_N`, or M diagonal); otherwise the form
is printed with q̇ defined by M q̇ = p − b and ṗ = ∂L/∂q + τ + Aᵀλ at that q̇ (the same
equations: ∂H/∂q = −∂L/∂q at fixed p). The numerical right-hand side (:func:`hamilton_rhs`)
solves M q̇ = p − b at run time and never inverts M symbolically.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import symengine as se
import sympy

from lagsim import naming
from lagsim.errors import InputError
from lagsim.spec.expressions import diff
from lagsim.spec.references import SEED_001, cite
from lagsim.symbolic.expansion import bounded_expand, expands_to_zero
from lagsim.symbolic.model import Model, to_sympy

EXPLICIT_MAX_N = 3


@dataclass(frozen=True)
class QuadraticParts:
    """L = ½ q̇ᵀ M q̇ + b·q̇ + L₀ (symengine): ``M`` (n×n), ``b`` (n×1), ``L0``."""

    M: se.DenseMatrix
    b: se.DenseMatrix
    L0: se.Basic


def quadratic_parts(model: Model) -> QuadraticParts:
    """M, b and L₀ of L; :class:`InputError` when L is not quadratic in q̇ (M = ∂²L/∂q̇²
    depends on q̇), naming the entry."""
    rest = {v: 0 for v in model.qd}
    velocities = set(model.qd)
    M = model.mass_matrix
    for i in range(model.n):
        for j in range(model.n):
            moving = velocities & se.sympify(M[i, j]).free_symbols
            if moving:
                raise InputError(
                    f"L is not quadratic in the velocities: ∂²L/∂q̇² depends on "
                    f"{', '.join(sorted(map(str, moving)))} (entry {model.coordinates[i]}, "
                    f"{model.coordinates[j]}), so p = ∂L/∂q̇ cannot be solved for q̇ in closed "
                    "form; the Hamiltonian form is printed only for L = ½ q̇ᵀM(q)q̇ + b·q̇ + L₀")
    b = se.DenseMatrix(model.n, 1, [se.sympify(model.momenta[i]).subs(rest)
                                    for i in range(model.n)])
    L0 = se.sympify(model.lagrangian).subs(rest)
    return QuadraticParts(M=M, b=b, L0=L0)


def momentum_names(model: Model) -> list[str]:
    """``p_<q>`` for each coordinate."""
    return [naming.momentum(name) for name in model.coordinates]


def hamilton_form(model: Model, simplify: bool = False):
    """``derive --form hamilton`` as a :class:`lagsim.symbolic.forms.Form` (module docstring)."""
    from lagsim.symbolic import tidy
    from lagsim.symbolic.forms import CLOSED_FORM_MAX_OPS, Form, Item

    parts = quadratic_parts(model)
    n = model.n
    q = [sympy.Symbol(str(s)) for s in model.q]
    qd = [sympy.Symbol(str(s)) for s in model.qd]
    p = [sympy.Symbol(name) for name in momentum_names(model)]
    pd = [sympy.Symbol(f"pdot_{name}") for name in model.coordinates]
    M = to_sympy(parts.M)
    b = to_sympy(parts.b)
    L0 = to_sympy(parts.L0)
    tau = to_sympy(model.tau)
    A = to_sympy(model.A) if model.m else sympy.zeros(0, n)
    lam = [sympy.Symbol(c.multiplier) for c in model.constraints]
    constraint = [sympy.Add(*(A[k, i] * lam[k] for k in range(model.m))) for i in range(n)]
    skips: list[str] = []
    diagonal = all(expands_to_zero(parts.M[i, j]) is True
                   for i in range(n) for j in range(n) if i != j)
    items = [Item(str(p[i]), sympy.Eq(p[i], to_sympy(model.momenta[i]), evaluate=False),
                  sympy.latex(p[i])) for i in range(n)]
    notes: list[str] = []
    P = sympy.Matrix(n, 1, [p[i] - b[i] for i in range(n)])
    Mse, bse = parts.M, parts.b
    P_se = [se.Symbol(str(p[i])) - bse[i] for i in range(n)]
    explicit = diagonal or n <= EXPLICIT_MAX_N
    if explicit:
        adj = (se.diag(*[1 / Mse[i, i] for i in range(n)]) if diagonal else adjugate(Mse))
        numer_se = [se.Add(*(adj[i, j] * P_se[j] for j in range(n))) for i in range(n)]
        multiplied = [bounded_expand(e) for e in numer_se]
        size = (None if any(e is None for e in multiplied)
                else max(se.count_ops(e) for e in multiplied))
        if size is None or size > CLOSED_FORM_MAX_OPS:
            explicit = False
            reach = ("pass the expansion limit (docs/format.md, \"Limits\")" if size is None
                     else f"reach {size} operations (more than {CLOSED_FORM_MAX_OPS})")
            notes.append(f"M⁻¹(p − b) written out would {reach}, so M⁻¹ is not written out; "
                         "q̇ is the "
                         "solution of M q̇ = p − b, and ṗ = ∂L/∂q + τ at that q̇ (equal to "
                         "−∂H/∂q at fixed p)")
    if explicit:
        D = sympy.Integer(1) if diagonal else tidy.light(Mse.det(), skips, "det M")
        numer = [_tidy(e, skips, f"q̇ of {q[i]}") for i, e in enumerate(numer_se)]
        velocity = [_over(e, D) for e in numer]
        energy = _tidy(se.Add(*(P_se[i] * numer_se[i] for i in range(n))), skips, "H")
        H = _over(energy, 2 * D) - L0
        items.append(Item("H", sympy.Eq(sympy.Symbol("H"), H, evaluate=False), "H"))
        for i in range(n):
            items.append(Item(f"d{q[i]}/dt", sympy.Eq(qd[i], velocity[i], evaluate=False),
                              sympy.latex(qd[i])))
        back = dict(zip(qd, velocity))
        for i in range(n):
            qi = model.q[i]
            dM = [[diff(Mse[j, k], qi) for k in range(n)] for j in range(n)]
            quadratic = _tidy(se.Add(*(numer_se[j] * dM[j][k] * numer_se[k] for j in range(n)
                                       for k in range(n))) / 2, skips, f"ṗ of {q[i]}")
            linear = _tidy(se.Add(*(diff(bse[j], qi) * numer_se[j] for j in range(n))),
                           skips, f"ṗ of {q[i]}")
            rate = (_over(quadratic, D**2) + _over(linear, D) + to_sympy(diff(parts.L0, qi))
                    + tau[i].subs(back) + constraint[i])
            items.append(Item(f"d{p[i]}/dt", sympy.Eq(pd[i], rate, evaluate=False),
                              sympy.latex(pd[i])))
        formula = "H = ½ (p − b)ᵀ M⁻¹ (p − b) − L₀;  q̇ = ∂H/∂p,  ṗ = −∂H/∂q + τ"
    else:
        if not notes:
            notes.append(f"n = {n} > {EXPLICIT_MAX_N} and M is not diagonal: M⁻¹ is not "
                         "written out; q̇ is the solution of M q̇ = p − b, and ṗ = ∂L/∂q + τ "
                         "at that q̇ (equal to −∂H/∂q at fixed p)")
        items.append(Item("M", sympy.ImmutableMatrix(M), "M"))
        items.append(Item("b", sympy.ImmutableMatrix(b), "b"))
        items.append(Item("L0", L0, "L_{0}"))
        items.append(Item("q̇", sympy.Eq(sympy.MatMul(sympy.ImmutableMatrix(M),
                                                        sympy.ImmutableMatrix(n, 1, qd),
                                                        evaluate=False),
                                        sympy.ImmutableMatrix(P), evaluate=False),
                          r"\dot{q}"))
        for i in range(n):
            rate = (tidy.cheap(diff(model.lagrangian, model.q[i]) + model.tau[i])
                    + constraint[i])
            items.append(Item(f"d{p[i]}/dt", sympy.Eq(pd[i], rate, evaluate=False),
                              sympy.latex(pd[i])))
        formula = "H = ½ (p − b)ᵀ M⁻¹ (p − b) − L₀;  M q̇ = p − b,  ṗ = ∂L/∂q + τ"
    if model.m:
        formula += " + Aᵀλ"
        notes.append("constraints as in the other forms; their forces Aᵀλ act on ṗ")
    return Form(
        name="hamilton", title="Hamilton's equations", formula=formula,
        citation=cite(SEED_001, "§10.6") + " (p = ∂L/∂q̇, h = q̇·p − L) and §10.7",
        items=tuple(items), notes=tuple(notes), untidied=tuple(dict.fromkeys(skips)),
        formula_latex=(r"H = \tfrac{1}{2}(p - b)^{T} M^{-1} (p - b) - L_{0}, \quad "
                       r"\dot{q} = \frac{\partial H}{\partial p}, \quad "
                       r"\dot{p} = -\frac{\partial H}{\partial q} + \tau"
                       + (r" + A^{T}\lambda" if model.m else "")),
    )


def _over(numerator: sympy.Expr, denominator: sympy.Expr) -> sympy.Expr:
    """numerator / denominator without SymPy's evaluation of the product, whose assumption
    queries on a long det M (is it finite, positive?) took 0.6 s of issue 8's messy3."""
    if denominator == 1:
        return numerator
    return sympy.Mul(numerator, sympy.Pow(denominator, -1, evaluate=False), evaluate=False)


def adjugate(M: se.DenseMatrix) -> se.DenseMatrix:
    """The adjugate (transposed cofactors) of a small square matrix, by SymEngine's
    determinants of the minors: for display only (M⁻¹ = adj M / det M, never used to compute).
    SymPy's berkowitz det and adjugate took 2.3 s of issue 8's messy3 (their dotprodsimp)."""
    n = M.rows
    adj = se.zeros(n, n)
    for i in range(n):
        for j in range(n):
            rows = [r for r in range(n) if r != j]
            cols = [c for c in range(n) if c != i]
            minor = se.DenseMatrix(n - 1, n - 1, [M[r, c] for r in rows for c in cols])
            adj[i, j] = (-1) ** (i + j) * (minor.det() if n > 1 else se.Integer(1))
    return adj


def _tidy(expr: se.Basic, skips: list[str], name: str) -> sympy.Expr:
    """A SymEngine expression as SymPy, tidied by :func:`lagsim.symbolic.tidy.cheap` (expanded,
    sin² + cos² and angle sums combined, common factors out; in SymEngine where it can) within
    the derive budget of :func:`lagsim.symbolic.tidy.bounded` (issue 16 §4): past it ``expr`` as it
    is,
    equal and only longer, and a note in ``skips``."""
    from lagsim.symbolic import tidy

    done = tidy.bounded(lambda: tidy.cheap(expr, skips, f"hamilton {name}"), skips, "hamilton",
                        name)
    return to_sympy(expr) if done is None else done


@dataclass(frozen=True)
class NumericHamiltonian:
    """Numeric H(t, q, p), the momenta p(t, q, q̇) and the right-hand side of Hamilton's
    equations for y = (q, p) of an unconstrained model (M q̇ = p − b solved at run time)."""

    n: int
    _parts: Callable
    _rates: Callable

    def _split(self, t: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        n = self.n
        out = np.asarray(self._parts(np.concatenate([[t], q])), dtype=float).reshape(-1)
        return out[:n * n].reshape(n, n), out[n * n:n * n + n], float(out[-1])

    def velocities(self, t: float, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        M, b, _ = self._split(t, q)
        return np.linalg.solve(M, p - b)

    def momenta(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        M, b, _ = self._split(t, q)
        return M @ qd + b

    def hamiltonian(self, t: float, q: np.ndarray, p: np.ndarray) -> float:
        """H = ½ (p − b)ᵀ M⁻¹ (p − b) − L₀."""
        M, b, L0 = self._split(t, q)
        v = np.linalg.solve(M, p - b)
        return 0.5 * float((p - b) @ v) - L0

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """(q̇, ṗ) = (M⁻¹(p − b), ∂L/∂q + τ at that q̇)."""
        n = self.n
        q, p = y[:n], y[n:]
        qd = self.velocities(t, q, p)
        pd = np.asarray(self._rates(np.concatenate([[t], q, qd])), dtype=float).reshape(-1)
        return np.concatenate([qd, pd])


def numeric_hamiltonian(model: Model) -> NumericHamiltonian:
    """The compiled Hamiltonian of an unconstrained model quadratic in q̇ (parameters
    substituted); :class:`InputError` for a constrained one or one not quadratic in q̇."""
    if model.m:
        raise InputError("the numeric Hamiltonian is for systems without constraints")
    parts = quadratic_parts(model)
    subs = model.substitutions()
    n = model.n
    flat = [parts.M[i, j] for i in range(n) for j in range(n)] + list(parts.b) + [parts.L0]
    flat = [se.sympify(e).subs(subs) for e in flat]
    rates = [(diff(model.lagrangian, model.q[i]) + model.tau[i]).subs(subs) for i in range(n)]
    args_q = [model.t, *model.q]
    return NumericHamiltonian(
        n=n,
        _parts=se.Lambdify(args_q, flat, cse=True, backend="lambda"),
        _rates=se.Lambdify([*args_q, *model.qd], rates, cse=True, backend="lambda"),
    )
