"""The columns a run adds to its samples: ``invariant_<name>`` (``--invariants``) and ``action``
(``--action``), computed along the trajectory by the one run of :mod:`lagsim.run.session`, so
that ``lagsim simulate``, the API and each ``lagsim sweep`` run add them alike (issue 23).

* ``invariant_<name>``: each conserved quantity found at the consistent start
  (:func:`lagsim.symbolic.invariants.find_invariants`: the energy h, cyclic momenta, Noether
  momenta p·ξ; seed ``001_80d65b968ce3cb18.txt`` §10.5–10.7) evaluated at every sample.
* ``action``: the running action S(t_k) = ∫_{t_0}^{t_k} L dt (seed 001 §10.2–10.3, issue 10) by
  the corrected trapezoidal rule h/2 (L_k + L_{k+1}) − h²/12 (L̇_{k+1} − L̇_k), the integral of the
  cubic Hermite interpolant of L (error O(h⁴)), with L̇ = ∂L/∂q·q̇ + ∂L/∂q̇·q̈ + ∂L/∂t and q̈ from
  M q̈ = F + Aᵀλ at each sample; its error is estimated by Richardson's rule from the same sum on
  every other sample. ``lagsim action`` uses the same sum on a CSV and on the stationary path
  (:mod:`lagsim.analysis.action`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.errors import IntegrationError
from lagsim.output.io import Table
from lagsim.output.trajectory import Trajectory
from lagsim.records import record
from lagsim.spec.expressions import diff
from lagsim.symbolic.model import Model

if TYPE_CHECKING:
    from lagsim.symbolic.invariants import Invariant


def evaluate_invariants(model: Model, invariants: Sequence[Invariant], t: np.ndarray,
                        q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """The invariants along samples (N, len(invariants)), parameters at the model's values."""
    from lagsim.symbolic.invariants import evaluate_states

    values = model.substitutions()
    exprs = [se.sympify(inv.symbolic).subs(values) for inv in invariants]
    states = np.hstack([q, qd, np.asarray(t, dtype=float)[:, None]])
    return evaluate_states(model, exprs, states) if exprs else np.zeros((len(t), 0))


def with_invariants(trajectory: Trajectory, model: Model) -> Trajectory:
    """The trajectory with a column ``invariant_<name>`` per conserved quantity (found at its
    first sample, the consistent start), after ``energy`` (:meth:`Trajectory.with_extra`)."""
    from lagsim.symbolic.invariants import find_invariants  # a run without them never imports it

    found = find_invariants(model, trajectory.q[0], trajectory.qd[0], float(trajectory.t[0]))
    values = evaluate_invariants(model, found.found, trajectory.t, trajectory.q, trajectory.qd)
    for k, invariant in enumerate(found.found):
        trajectory = trajectory.with_extra(naming.invariant(invariant.name), values[:, k])
    return trajectory


def table_with_invariants(table: Table, model: Model) -> Table:
    """A CSV table (:class:`lagsim.output.io.Table`) of a run of ``model`` with its
    ``invariant_<name>`` columns added, computed from its coordinates and velocities (for
    ``plot --kind invariants --system FILE`` on a CSV written without ``--invariants``). A
    column the table lacks is an :class:`InputError` naming it."""
    t = table.time
    q = np.column_stack([table.column(c) for c in model.coordinates])
    qd = np.column_stack([table.column(v) for v in naming.velocities(model.coordinates)])
    from lagsim.symbolic.invariants import find_invariants

    found = find_invariants(model, q[0], qd[0], float(t[0]))
    values = evaluate_invariants(model, found.found, t, q, qd)
    names = tuple(naming.invariant(i.name) for i in found.found)
    data = np.column_stack([table.data, values])
    data.setflags(write=False)
    return Table(columns=(*table.columns, *names), data=data, source=table.source)


class _Rates:
    """L, dL/dt along a trajectory (with q̈ from M q̈ = F + Aᵀλ) from compiled expressions."""

    def __init__(self, model: Model) -> None:
        n, m = model.n, model.m
        subs = model.substitutions()
        L = se.sympify(model.lagrangian)
        exprs = [L]
        exprs += [diff(L, qi) for qi in model.q]
        exprs += [diff(L, vi) for vi in model.qd]
        exprs += [diff(L, model.t)]
        exprs += [model.mass_matrix[i, j] for i in range(n) for j in range(n)]
        exprs += [model.forcing[i] for i in range(n)]
        exprs += [model.A[k, i] for k in range(m) for i in range(n)]
        exprs = [se.sympify(e).subs(subs) for e in exprs]
        self.n, self.m = n, m
        self._f = se.Lambdify([model.t, *model.q, *model.qd], exprs, cse=True, backend="lambda")

    def __call__(self, t: float, q: np.ndarray, qd: np.ndarray, lam: np.ndarray
                 ) -> tuple[float, float]:
        n, m = self.n, self.m
        out = np.asarray(self._f(np.concatenate([[t], q, qd])), dtype=float).reshape(-1)
        L = out[0]
        Lq, Lv, Lt = out[1:1 + n], out[1 + n:1 + 2 * n], out[1 + 2 * n]
        k = 2 + 2 * n
        M = out[k:k + n * n].reshape(n, n)
        F = out[k + n * n:k + n * n + n]
        A = out[k + n * n + n:].reshape(m, n)
        rhs = F + A.T @ lam if m else F
        if np.any(Lv):
            qdd = np.linalg.solve(M, rhs)
        else:
            qdd = np.zeros(n)
        return float(L), float(Lq @ qd + Lv @ qdd + Lt)


def _hermite_sum(t: np.ndarray, L: np.ndarray, Ld: np.ndarray) -> np.ndarray:
    """The running corrected-trapezoid integral, 0 at t[0]."""
    h = np.diff(t)
    steps = h / 2 * (L[:-1] + L[1:]) - h**2 / 12 * (Ld[1:] - Ld[:-1])
    return np.concatenate([[0.0], np.cumsum(steps)])


@record
class RunningAction:
    """The running action at each sample and the estimated error of its last value."""

    values: np.ndarray
    error: float


def running_action(model: Model, t: np.ndarray, q: np.ndarray, qd: np.ndarray,
                   lam: np.ndarray | None = None) -> RunningAction:
    """S(t_k) = ∫_{t_0}^{t_k} L dt over samples of a trajectory (module docstring): corrected
    trapezoids (cubic Hermite interpolation of L), error by Richardson's rule against every
    other sample (the O(h⁴) rule: |S_h − S_2h| / 15)."""
    rates = _Rates(model)
    lam = np.zeros((len(t), model.m)) if lam is None else lam
    values = np.array([rates(ti, qi, vi, li) for ti, qi, vi, li in zip(t, q, qd, lam)])
    if not np.all(np.isfinite(values)):
        raise IntegrationError("the Lagrangian is not finite along the trajectory")
    S = _hermite_sum(t, values[:, 0], values[:, 1])
    error = math.nan
    if len(t) >= 5:
        last = len(t) - 1 if (len(t) - 1) % 2 == 0 else len(t) - 2
        coarse = _hermite_sum(t[:last + 1:2], values[:last + 1:2, 0], values[:last + 1:2, 1])
        error = abs(S[last] - coarse[-1]) / 15.0
    return RunningAction(S, error)


def trajectory_action(model: Model, trajectory: Trajectory) -> RunningAction:
    """:func:`running_action` of a :class:`lagsim.output.trajectory.Trajectory`."""
    return running_action(model, trajectory.t, trajectory.q, trajectory.qd, trajectory.lam)
