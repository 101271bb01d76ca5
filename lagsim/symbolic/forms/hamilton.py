"""Hamilton's form (``hamilton``, issue 10): the Legendre transform of a Lagrangian quadratic in
the velocities, L = ½ q̇ᵀ M q̇ + b·q̇ + L₀ (:func:`lagsim.symbolic.hamilton.quadratic_parts`),

    p = M q̇ + b,    H = ½ (p − b)ᵀ M⁻¹ (p − b) − L₀,    q̇ = ∂H/∂p,    ṗ = −∂H/∂q + τ + Aᵀλ.

M⁻¹ is written out only for printing and only while small (n ≤ :data:`EXPLICIT_MAX_N`, or M
diagonal, and within :data:`lagsim.symbolic.forms.base.CLOSED_FORM_MAX_OPS`); otherwise q̇ is
defined by M q̇ = p − b and ṗ = ∂L/∂q + τ + Aᵀλ at that q̇ (the same equations).

Seed: ``001_80d65b968ce3cb18.txt`` §10.6 (p = ∂L/∂q̇, h = q̇·p − L) and §10.7.
"""

from __future__ import annotations

import symengine as se
import sympy

from lagsim import naming
from lagsim.spec.expressions import diff
from lagsim.spec.references import SEED_001, cite
from lagsim.symbolic import tidy
from lagsim.symbolic.expansion import bounded_expand, expands_to_zero
from lagsim.symbolic.forms.base import CLOSED_FORM_MAX_OPS, Form, Item, tex_of
from lagsim.symbolic.hamilton import adjugate, momentum_names, quadratic_parts
from lagsim.symbolic.model import Model, to_sympy

EXPLICIT_MAX_N = 3
"""M⁻¹ is written out for n ≤ this (and for a diagonal M of any size)."""


def hamilton_form(model: Model, simplify: bool = False) -> Form:
    """``derive --form hamilton`` as a :class:`lagsim.symbolic.forms.Form` (module docstring)."""
    parts = quadratic_parts(model)
    n = model.n
    q = [sympy.Symbol(str(s)) for s in model.q]
    qd = [sympy.Symbol(str(s)) for s in model.qd]
    p = [sympy.Symbol(name) for name in momentum_names(model)]
    pd = [sympy.Symbol(naming.velocity(str(momentum))) for momentum in p]
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
                  tex_of(str(p[i]))) for i in range(n)]
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
            items.append(Item(str(qd[i]), sympy.Eq(qd[i], velocity[i], evaluate=False),
                              tex_of(str(qd[i]))))
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
            items.append(Item(str(pd[i]), sympy.Eq(pd[i], rate, evaluate=False),
                              tex_of(str(pd[i]))))
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
            items.append(Item(str(pd[i]), sympy.Eq(pd[i], rate, evaluate=False),
                              tex_of(str(pd[i]))))
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
    """numerator / denominator as one fraction with the factors they share cancelled (the
    rational coefficients and each power of one base: l1²l2²m2²(…)/(l1⁴l2⁴m2²(…)²) is
    (…)/(l1²l2²(…)²), and ((p_x² + p_y²)/m)/2 is (p_x² + p_y²)/(2m); issue 30), without SymPy's
    evaluation of the product, whose assumption queries on a long det M (is it finite,
    positive?) took 0.6 s of issue 8's messy3."""
    if numerator == 0 or denominator == 1:
        return numerator
    a, top, under = _powers(numerator)
    b, bottom, over = _powers(denominator)
    for base, exponent in over.items():
        top[base] = top.get(base, 0) + exponent
    for base, exponent in under.items():
        bottom[base] = bottom.get(base, 0) + exponent
    for base in set(top) & set(bottom):
        shared = min(top[base], bottom[base])
        top[base] -= shared
        bottom[base] -= shared
    ratio = a / b
    numerator = sympy.Mul(ratio.p, *(f**e for f, e in top.items() if e))
    denominator = sympy.Mul(ratio.q, *(f**e for f, e in bottom.items() if e))
    if denominator == 1:
        return numerator
    return sympy.Mul(numerator, sympy.Pow(denominator, -1, evaluate=False), evaluate=False)


def _powers(product: sympy.Expr
            ) -> tuple[sympy.Rational, dict[sympy.Expr, int], dict[sympy.Expr, int]]:
    """The rational coefficient of ``product``, its factors with positive integer exponents
    (base → exponent; a factor with a symbolic or fractional exponent is its own base) and
    those with negative ones (base → −exponent)."""
    coefficient, rest = product.as_coeff_Mul()
    if not coefficient.is_Rational:
        coefficient, rest = sympy.Integer(1), product
    up: dict[sympy.Expr, int] = {}
    down: dict[sympy.Expr, int] = {}
    for factor in sympy.Mul.make_args(rest):
        if factor == 1:
            continue
        base, exponent = factor.as_base_exp()
        if not exponent.is_Integer:
            base, exponent = factor, sympy.Integer(1)
        side = up if exponent > 0 else down
        side[base] = side.get(base, 0) + abs(int(exponent))
    return sympy.Rational(coefficient), up, down


def _tidy(expr: se.Basic, skips: list[str], name: str) -> sympy.Expr:
    """A SymEngine expression as SymPy, tidied by :func:`lagsim.symbolic.tidy.cheap` (expanded,
    sin² + cos² and angle sums combined, common factors out; in SymEngine where it can) within
    the derive budget of :func:`lagsim.symbolic.tidy.bounded` (issue 16 §4): past it ``expr`` as it
    is, equal and only longer, and a note in ``skips``."""
    done = tidy.bounded(lambda: tidy.cheap(expr, skips, f"hamilton {name}"), skips, "hamilton",
                        name)
    return to_sympy(expr) if done is None else done
