"""The Lagrangian family of forms: the Euler–Lagrange equations (``lagrange``), the matrix form
M q̈ + C q̇ + g = τ (``matrix``) and the index-3 DAE (``dae``).

Seed: ``001_80d65b968ce3cb18.txt`` (Theorem 10.2, matrix form 10.12–10.14, §10.7); C in the
Christoffel form of Spong–Hutchinson–Vidyasagar §7.3.
"""

from __future__ import annotations

import random

import symengine as se

from lagsim.spec.expressions import diff
from lagsim.spec.references import SEED_001, cite
from lagsim.symbolic.expansion import expanded
from lagsim.symbolic.forms.base import (
    Form,
    Item,
    Symbols,
    column_of,
    constraint_forces,
    constraint_items,
    equation,
    euler_lagrange_lhs,
    matrix_of,
    sympy_of,
    tex_of,
    tidy_items,
    untidied_of,
    warnings_for,
)
from lagsim.symbolic.model import Model, to_sympy


def lagrange_form(model: Model, simplify: bool = False) -> Form:
    """d/dt ∂L/∂q̇_i − ∂L/∂q_i = τ_i + (Aᵀλ)_i for each coordinate, and the constraints.

    Seed 001 Theorem 10.2 (unconstrained), the forced form after 10.8, and §10.7 with multipliers
    λ_c (``lambda_<c>``) when there are constraints: φ(q, t) = 0, or a·q̇ + c = 0 for a velocity
    constraint, whose row a takes the place of φ_q.
    """
    s = Symbols(model)
    tau = matrix_of(model.tau)
    lhs = euler_lagrange_lhs(model)
    forces = constraint_forces(model, s)
    entries = [
        Item(name, equation(sympy_of(lhs[i], s.accel), tau[i] + forces[i]), tex_of(name))
        for i, name in enumerate(model.coordinates)
    ]
    entries += constraint_items(model)
    formula = "d/dt ∂L/∂q̇ − ∂L/∂q = τ" + (" + Aᵀλ,  φ(q, t) = 0" if model.m else "")
    tex = (r"\frac{d}{dt}\frac{\partial L}{\partial \dot{q}} - \frac{\partial L}{\partial q} = "
           r"\tau" + (r" + A^{T}\lambda, \quad \phi(q, t) = 0" if model.m else ""))
    skips: list[str] = []
    return Form(
        name="lagrange", title="Euler–Lagrange equations", formula=formula,
        citation=cite(SEED_001, "Theorem 10.2" + (", §10.7" if model.m else "")),
        items=tidy_items(entries, simplify, skips, s.accel), warnings=warnings_for(model),
        formula_latex=tex,
        untidied=untidied_of(skips),
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
    s = Symbols(model)
    n = model.n
    M = model.mass_matrix
    C = coriolis_matrix(model, coriolis)
    U = -model.lagrangian.subs({v: 0 for v in model.qd})
    g = se.DenseMatrix(n, 1, [diff(U, qi) for qi in model.q])
    Cqd = C * se.DenseMatrix(n, 1, list(model.qd))
    lhs = euler_lagrange_lhs(model)
    remainder = [
        lhs[i] - sum((M[i, j] * model.qdd[j] for j in range(n)), se.Integer(0)) - Cqd[i] - g[i]
        for i in range(n)
    ]
    has_remainder = not all(_vanishes(r, model) for r in remainder)
    Ms, Cs, gs, tau = (matrix_of(x) for x in (M, C, g, model.tau))
    Cqds = matrix_of(Cqd)
    rs = column_of([to_sympy(expanded(r)) for r in remainder]) if has_remainder else None
    entries = [
        Item("M(q)", Ms, r"M(q)"), Item("C(q, q̇)", Cs, r"C(q, \dot{q})"),
        Item("C(q, q̇) q̇", Cqds, r"C(q, \dot{q})\,\dot{q}"), Item("g(q)", gs, r"g(q)"),
        Item("τ", tau, r"\tau"),
    ]
    if rs is not None:
        entries.append(Item("r(q, q̇, t)", rs, r"r(q, \dot{q}, t)"))
    forces = constraint_forces(model, s)
    for i, name in enumerate(model.coordinates):
        row = se.Add(*(M[i, j] * model.qdd[j] for j in range(n))) + Cqd[i] + g[i]
        if rs is not None:
            row += remainder[i]
        entries.append(Item(name, equation(sympy_of(row, s.accel), tau[i] + forces[i]),
                            tex_of(name)))
    entries += constraint_items(model)
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
        items=tidy_items(entries, simplify, skips, s.accel), warnings=warnings_for(model),
        notes=notes,
        untidied=untidied_of(skips),
        formula_latex=(r"M(q)\ddot{q} + C(q, \dot{q})\dot{q} + g(q)"
                       + (r" + r(q, \dot{q}, t)" if rs is not None else "") + r" = \tau"
                       + (r" + A^{T}\lambda" if model.m else "")),
    )


def dae_form(model: Model, simplify: bool = False) -> Form:
    """The index-3 DAE M q̈ − F = Aᵀλ, φ(q, t) = 0, a(q, t)·q̇ + c(q, t) = 0 (001 §10.7).

    F includes τ (001's forced form: d/dt ∂L/∂q̇ − ∂L/∂q = φ_qᵀλ + τ); velocity constraints enter
    A with their row a, like φ_q.
    """
    s = Symbols(model)
    forces = constraint_forces(model, s)
    entries = [
        Item(name, equation(sympy_of(se.Add(*(model.mass_matrix[i, j] * model.qdd[j]
                                    for j in range(model.n))) - model.forcing[i], s.accel),
                       forces[i]), tex_of(name))
        for i, name in enumerate(model.coordinates)
    ]
    entries += constraint_items(model)
    notes = () if model.m else ("no constraints: the DAE is the ODE M q̈ = F",)
    skips: list[str] = []
    return Form(
        name="dae", title="index-3 differential-algebraic equations",
        formula="M(q) q̈ − F(q, q̇, t) = Aᵀλ,  φ(q, t) = 0,  a(q, t)·q̇ + c(q, t) = 0",
        citation=cite(SEED_001, "§10.7"), items=tidy_items(entries, simplify, skips, s.accel),
        warnings=warnings_for(model), notes=notes, untidied=untidied_of(skips),
        formula_latex=(r"M(q)\ddot{q} - F(q, \dot{q}, t) = A^{T}\lambda, \quad \phi(q, t) = 0, "
                       r"\quad a(q, t)\cdot\dot{q} + c(q, t) = 0"),
    )
