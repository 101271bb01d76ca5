"""The reduced form (``reduced``): Lagrange's recipe of seed 002 §23.5, the constrained
coordinates eliminated, or — when the symbolic solve does not finish, has no closed form or is
too long to print — the partitioned form with the dependent coordinates implicit in φ = 0.

Seeds: ``002_485a91571cac8ced.txt`` (§23.5 reduced coordinates, §23.7 the string's tension),
``003_88d23709419132a0.txt`` (the augmented system of the partitioned form).
"""

from __future__ import annotations

from collections.abc import Mapping

import symengine as se
import sympy

from lagsim.spec.references import SEED_002, SEED_003, cite
from lagsim.symbolic import tidy
from lagsim.symbolic.forms.base import (
    CLOSED_FORM_MAX_OPS,
    Form,
    Item,
    Symbols,
    column_of,
    constraint_forces,
    constraint_items,
    equation,
    matrix_of,
    sympy_of,
    tex_of,
    tidy_items,
    untidied_of,
    warnings_for,
)
from lagsim.symbolic.model import Model, to_sympy
from lagsim.symbolic.reduce import SOLVE_BUDGET, NoClosedForm, Reduction, partition, reduce_model

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
    on :data:`lagsim.symbolic.reduce.SOLVE_BUDGET`). When it does not finish, or SymPy has no closed
    form, or the reduced equations exceed :data:`CLOSED_FORM_MAX_OPS` (the natural 8-chain's were
    327 kB of text; ``simplify`` prints them anyway), the form is the partitioned one of
    :func:`_partitioned_form`, equal to L̃'s equations, with a note saying why.
    """
    s = Symbols(model)
    skips: list[str] = []
    b = tidy.active()
    reduction: Reduction | None
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
    entries = [Item(f"eliminated {name}", equation(sympy.Symbol(name), sympy.sympify(expr)),
                    tex_of(name)) for name, expr in reduction.eliminated]
    entries.append(Item("L̃", reduction.lagrangian, r"\tilde{L}"))
    entries += [Item(name, equation(to_sympy(eq), sympy.Integer(0)), tex_of(name))
                for name, eq in zip(reduction.free, equations)]
    multipliers = tidy.bounded(lambda: reduction.multipliers, skips, "reduced", "multipliers")
    if multipliers is not None:
        entries += [Item(name, equation(sympy.Symbol(name), sympy.sympify(expr)), tex_of(name))
                    for name, expr in multipliers]
    else:
        lam = column_of([sympy.Symbol(c.multiplier) for c in model.constraints])
        entries.append(Item("λ", equation(sympy.MatMul(to_sympy(reduction.A_e).T, lam,
                                                  evaluate=False),
                                     matrix_of(reduction.residual_e)), r"\lambda"))
    return Form(
        name="reduced", title="reduced (constrained) coordinates", formula=_REDUCED_FORMULA,
        citation=cite(SEED_002, "§23.5"), items=tidy_items(entries, simplify, skips, s.accel),
        warnings=warnings_for(model), untidied=untidied_of(skips),
        notes=(*integrated, _REDUCED_NOTE),
        formula_latex=(r"\tilde{L} = L\big|_{\phi = 0}, \quad \frac{d}{dt}"
                       r"\frac{\partial \tilde{L}}{\partial \dot{q}} - "
                       r"\frac{\partial \tilde{L}}{\partial q} - \tilde{\tau} = 0"),
    )


def _out_of_time(b: tidy.Budget | None, constraint: str) -> str:
    """Why the reduced form is partitioned when the symbolic solve ran out of time, and how to
    give it more."""
    seconds = b.seconds if b is not None else SOLVE_BUDGET
    on = f" (SymPy was solving constraint '{constraint}')" if constraint else ""
    return (f"the symbolic elimination did not finish within derive's budget of {seconds:g} s "
            f"CPU{on}, so the dependent coordinates stay implicit; --budget SECONDS (or "
            f"--simplify, {tidy.SIMPLIFY_SECONDS:g} s) gives SymPy time for the closed form")


def _partitioned_form(model: Model, q0: Mapping[str, float] | None, simplify: bool, why: str,
                      reduction: Reduction | None = None, notes: tuple[str, ...] = ()) -> Form:
    """The reduced equations without solving the constraints: the coordinates partitioned into
    dependent u and independent v (Wehage and Haug 1982, by pivoting on φ_q at the start:
    :func:`lagsim.symbolic.reduce.partition`, the partition ``simulate --formulation reduced``
    starts with), u defined implicitly by φ(u, v, t) = 0, u̇ by φ̇ = φ_u u̇ + φ_v v̇ + φ_t = 0, and
    v̈ (with ü and λ) from M q̈ − F = Aᵀλ, A q̈ = b (seed 003's augmented system, the index-1 DAE).
    Every item is the model's own M, F, A, b, φ: equal to the full derivation, and as cheap as the
    ``dae`` form. With a ``reduction`` (solved, but too long to print) its u and v, each eliminated
    coordinate and L̃ that stays within :data:`CLOSED_FORM_MAX_OPS` are printed too."""
    s = Symbols(model)
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
        entries += [Item(f"eliminated {name}", equation(sympy.Symbol(name), to_sympy(expr)),
                         tex_of(name)) for name, expr in reduction.eliminated
                    if se.count_ops(expr) <= CLOSED_FORM_MAX_OPS]
        if se.count_ops(reduction.reduced.lagrangian) <= CLOSED_FORM_MAX_OPS:
            entries.append(Item("L̃", reduction.lagrangian, r"\tilde{L}"))
    entries += constraint_items(model)
    entries += [Item(f"{c.name}, velocity", equation(sympy_of(c.velocity_form), sympy.Integer(0)),
                     rf"\dot{{\phi}}_{{\text{{{c.name}}}}}") for c in model.constraints]
    forces = constraint_forces(model, s)
    M, F = model.mass_matrix, model.forcing
    entries += [
        Item(name, equation(
            sympy_of(se.Add(*(M[i, j] * model.qdd[j] for j in range(model.n))) - F[i], s.accel),
            forces[i]), tex_of(name))
        for i, name in enumerate(model.coordinates)
    ]
    entries += [Item(f"{c.name}, acceleration",
                     equation(sympy_of(se.Add(*(a * x for a, x in zip(c.row, model.qdd))), s.accel),
                         sympy_of(c.rhs)), rf"\ddot{{\phi}}_{{\text{{{c.name}}}}}")
                for c in model.constraints]
    return Form(
        name="reduced", title="reduced coordinates, partitioned (u implicit in φ = 0)",
        formula=("φ(u, v, t) = 0 gives u;  φ_u u̇ + φ_v v̇ + φ_t = 0 gives u̇;  "
                 "M q̈ − F = Aᵀλ, A q̈ = b give v̈ (with ü, λ)"),
        citation=(cite(SEED_002, "§23.5") + " with the partition of [Wehage–Haug] and "
                  + cite(SEED_003)),
        items=tidy_items(entries, simplify, skips, s.accel), warnings=warnings_for(model),
        untidied=untidied_of(skips), notes=(why, *notes, _REDUCED_NOTE),
        formula_latex=(r"\phi(u, v, t) = 0, \quad \phi_u \dot{u} + \phi_v \dot{v} + \phi_t = 0,"
                       r" \quad M\ddot{q} - F = A^{T}\lambda, \quad A\ddot{q} = b"),
    )
