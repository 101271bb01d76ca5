"""The energy column of a CSV against its system (issue 29, "Pictures and tables that mislead").

Two uses of h = q̇·∂L/∂q̇ − L (seed ``001_80d65b968ce3cb18.txt`` §10.6) and of its rate

    dh/dt = τ·q̇ + λ·(A q̇) − ∂L/∂t                                   (001 §10.6–10.7)

along a solution of d/dt ∂L/∂q̇ − ∂L/∂q = τ + Aᵀλ (the rate follows by differentiating h and
substituting the equations; A q̇ = −∂φ/∂t for a rheonomic holonomic constraint and −c for a
velocity constraint a·q̇ + c = 0, so the constraint forces work only when the constraints move):

* :func:`check_parameters`: a CSV carries no parameter values (its plain format is kept for
  pipelines), so a system given with ``--system`` is checked against the run instead: h, and the
  residual columns φ, a·q̇ + c and φ̇, are recomputed from the CSV's own states with the system's
  parameters and compared with the CSV's columns. A mismatch means the run was made with other
  values, and every figure drawn with the system's would be wrong: it is refused, naming --set.
* :func:`table_with_work`: when h is not conserved
(:func:`lagsim.symbolic.invariants.energy_conserved`),
  the work W(t) = ∫₀ᵗ (τ·q̇ + λ·(A q̇) − ∂L/∂t) dt of the non-conservative forces, the moving
  constraints and the explicit time dependence, so that a plot can show the energy balance
  h(t) − h(0) = W(t) instead of calling a physical energy change a drift.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, Location
from lagsim.output.io import Table
from lagsim.records import record

if TYPE_CHECKING:
    import symengine as se

    from lagsim.symbolic.model import Model

PARAMETER_TOL = 1e-8
"""A recomputed column agrees with the CSV's when |csv − model| ≤ PARAMETER_TOL × scale at every
sample, the scale being the largest :func:`magnitude` of the expression over the samples (the
size of the numbers that cancel in it) or of the column: the CSV stores exact doubles, so what
is left is the rounding of two evaluations of one expression, about 1e-15 of that scale."""

SHOWN_PARAMETERS = 8
"""A mismatch names at most this many of the system's parameter values (a chain has dozens)."""

@record
class Work:
    """W(t) at the table's samples; ``error`` bounds the quadrature error (see :func:`work`);
    ``why`` is why h is not conserved."""

    values: np.ndarray
    error: float
    why: str


def magnitude(expr: se.Basic) -> se.Basic:
    """The expression with every sum and product taken over absolute values (|a + b| → |a| + |b|,
    |a·b| → |a|·|b|, |aⁿ| → |a|ⁿ for an integer n, any other part |part|): at a point, the size of
    the numbers that cancel in it, to which its rounding error is proportional."""
    import symengine as se

    if isinstance(expr, (se.Add, se.Mul)):
        parts = [magnitude(a) for a in expr.args]
        return se.Add(*parts) if isinstance(expr, se.Add) else se.Mul(*parts)
    if isinstance(expr, se.Pow) and expr.args[1].is_Integer:
        return se.Pow(magnitude(expr.args[0]), expr.args[1])
    return se.Abs(expr)


def _evaluate(model: Model, exprs: Sequence[se.Basic], table: Table) -> np.ndarray:
    """The expressions (parameters at the model's values) at every sample: (N, len(exprs))."""
    import symengine as se

    values = model.substitutions()
    args = [model.t, *model.q, *model.qd]
    f = se.Lambdify(args, [se.sympify(e).subs(values) for e in exprs], backend="lambda")
    states = np.column_stack([table.time,
                              *(table.column(c) for c in model.coordinates),
                              *map(table.column, naming.velocities(model.coordinates))])
    with np.errstate(all="ignore"):
        return np.asarray(f(states), dtype=float).reshape(len(states), len(exprs))


def _checked_columns(model: Model, table: Table) -> list[tuple[str, se.Basic]]:
    """(column, its expression) of the parameter-dependent columns the table has."""
    pairs: list[tuple[str, se.Basic]] = [(naming.ENERGY, model.energy)]
    for c in model.constraints:
        pairs.append((naming.residual(c.name), c.expression))
        if c.kind == "holonomic":
            pairs.append((naming.residual_rate(c.name), c.velocity_form))
    return [(name, expr) for name, expr in pairs if table.has(name)]


def check_parameters(table: Table, model: Model, how: str = "with --set NAME=VALUE"
                     ) -> str | None:
    """Refuse a CSV whose energy or residual columns disagree with ``model`` at its parameter
    values (an :class:`InputError` ending with ``how`` to give the run's values); a note when the
    CSV has none of those columns to check against, else None. The comparison rule is
    :data:`PARAMETER_TOL`'s."""
    import symengine as se

    missing = [c for c in model.coordinates
               if not (table.has(c) and table.has(naming.velocity(c)))]
    if missing:
        raise InputError(f"the CSV has no column for {', '.join(missing)} (or its _dot) of "
                         f"system '{model.name}'; was it simulated from another system?",
                         Location(table.source))
    pairs = _checked_columns(model, table)
    shown = [f"{k}={v:g}" for k, v in model.parameters.items()]
    values = ", ".join(shown[:SHOWN_PARAMETERS]) + (
        f", … ({len(shown)} parameters)" if len(shown) > SHOWN_PARAMETERS else "")
    if not pairs:
        return (f"{table.source} has no energy or residual column to check that system "
                f"'{model.name}' has the run's parameter values ({values}); the figure uses them")
    exprs = [se.sympify(e) for _, e in pairs]
    result = _evaluate(model, [*exprs, *(magnitude(e) for e in exprs)], table)
    finite = np.all(np.isfinite(table.data), axis=1)
    for index, (name, _) in enumerate(pairs):
        stored, computed = table.column(name), result[:, index]
        sizes = result[:, len(pairs) + index]
        rows = finite & np.isfinite(computed) & np.isfinite(sizes)
        if not rows.any():
            continue
        scale = max(float(np.max(sizes[rows])), float(np.max(np.abs(stored[rows]))),
                    math.ulp(1.0))
        gap = np.abs(stored - computed)
        worst = int(np.argmax(np.where(rows, gap, -1.0)))
        if gap[worst] > PARAMETER_TOL * scale:
            raise InputError(
                f"the {name} column is not that of system '{model.name}' with its parameter "
                f"values ({values}): at t = {table.time[worst]:.6g} it has "
                f"{stored[worst]:.10g}, the system gives {computed[worst]:.10g} (allowed: "
                f"{PARAMETER_TOL:g} x {scale:.3g}); the run was made with other values: give "
                f"them as they were simulated, {how}",
                Location(table.source))
    return None


def power_expression(model: Model) -> tuple[se.Basic, list[tuple[str, se.Basic]]]:
    """(τ·q̇ − ∂L/∂t, [(multiplier column, a_c·q̇) per constraint]): dh/dt is the first plus
    Σ λ_c a_c·q̇ (the module docstring)."""
    import symengine as se

    from lagsim.spec.expressions import diff

    free = se.Add(*(tau * v for tau, v in zip(model.tau, model.qd))) \
        - diff(model.lagrangian, model.t)
    rows = [(c.multiplier, se.Add(*(a * v for a, v in zip(c.row, model.qd))))
            for c in model.constraints]
    return free, rows


def _moving(model: Model) -> list[str]:
    """Constraints whose forces can work: rheonomic, or a velocity constraint with an offset."""
    import symengine as se

    from lagsim.symbolic.expansion import bounded_expand

    values = model.substitutions()
    out = []
    for c in model.constraints:
        if c.kind == "velocity":
            offset = bounded_expand(c.offset.subs(values))
            if offset is None or not (offset == 0 or (offset.is_Number
                                                      and float(offset) == 0.0)):
                out.append(c.name)
        elif model.t in se.sympify(c.expression.subs(values)).free_symbols:
            out.append(c.name)
    return out


def work(table: Table, model: Model) -> Work | str | None:
    """W(t) along the table's samples when h is not conserved; None when it is; a sentence saying
    why W cannot be computed when a moving constraint's multiplier column is missing.

    The power P = dh/dt is evaluated exactly at the samples and integrated on the sample times
    by the cumulative composite Simpson rule (scipy's ``cumulative_simpson``; the trapezoid rule
    below three samples). ``error`` is max|W_Simpson − W_trapezoid|: the trapezoid's error is
    (t − t₀)·Δt²/12·P̈ to leading order and Simpson's O(Δt⁴), so this difference bounds the
    quadrature error of W to leading order."""
    from lagsim.symbolic.invariants import energy_conserved

    why = energy_conserved(model, model.substitutions())
    if why is None:
        return None
    free, rows = power_expression(model)
    needed = [name for name in _moving(model) if not table.has(naming.multiplier(name))]
    if needed:
        return (f"h is not conserved ({why}), and the CSV has no multiplier column of the "
                f"moving constraint(s) {', '.join(needed)} to compute the work of their forces")
    present = [(lam, expr) for lam, expr in rows if table.has(lam)]
    parts = _evaluate(model, [free, *(expr for _, expr in present)], table)
    power = parts[:, 0] + sum((table.column(lam) * parts[:, 1 + k]
                               for k, (lam, _) in enumerate(present)), np.zeros(len(parts)))
    t = table.time
    trapezoid = np.concatenate(([0.0], np.cumsum(np.diff(t) * (power[1:] + power[:-1]) / 2)))
    if len(t) < 3:
        return Work(trapezoid, math.inf if len(t) == 2 else 0.0, why)
    from scipy.integrate import cumulative_simpson

    simpson = cumulative_simpson(power, x=t, initial=0.0)
    gap = np.abs(simpson - trapezoid)
    return Work(simpson, float(np.max(gap[np.isfinite(gap)], initial=0.0)), why)


def table_with_work(table: Table, model: Model) -> tuple[Table, str | None]:
    """The table with a column :data:`lagsim.naming.WORK`, W(t) in the energy's units, when h
    is not conserved and the table has an ``energy`` column, and a note when W cannot be
    computed (the table unchanged)."""
    if not table.has(naming.ENERGY) or table.has(naming.WORK):
        return table, None
    found = work(table, model)
    if found is None:
        return table, None
    if isinstance(found, str):
        return table, found
    data = np.column_stack([table.data, found.values])
    data.setflags(write=False)
    return Table((*table.columns, naming.WORK), data, table.source), None
