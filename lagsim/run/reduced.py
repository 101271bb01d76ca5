"""The ``reduced`` formulation: minimal coordinates with generalized coordinate partitioning.

The coordinates are split into dependent ones u (one per holonomic constraint) and independent
ones v, and only v, v̇ are integrated (seed ``002_485a91571cac8ced.txt`` §23.5: Lagrange's
minimal coordinates; Wehage and Haug 1982, "Generalized coordinate partitioning for dimension
reduction in analysis of constrained dynamic systems", J. Mech. Des. 104: 247–255).

* The partition is chosen by pivoting on φ_q: Gaussian elimination with complete pivoting pairs
  each constraint with the coordinate of its largest pivot, and those coordinates become
  dependent (:func:`pivot_partition`); a symbolic chart solves the constraints for them in that
  order, so that no constraint is solved for a coordinate it barely depends on (the rod of a
  slider-crank solved for y2 while it lies flat).
* When the constraints can be solved for the chosen u symbolically within
  :data:`lagsim.symbolic.reduce.SOLVE_BUDGET` and a branch of that solution rebuilds the state (at
  the start the consistent start, issue 16 §1), the chart is 002's reduced Lagrangian, compiled
  (:class:`SymbolicChart`); the charts are kept, so a pendulum swinging through its partitions
  compiles each (partition, branch) once.
* Otherwise the chart is numeric (:class:`PartitionChart`): at each right-hand side
  φ(u, v, t) = 0 is solved for u by Newton from the last accepted u, u̇ from
  φ_u u̇ = −φ_v v̇ − φ_t, and v̈ is taken from the augmented system [[M, −Aᵀ], [A, 0]] [q̈; λ] =
  [F; b] of the full model (seed ``003_88d23709419132a0.txt``).
* After every accepted step (:meth:`Reduced.after_step`) the chart is checked: when its
  smallest pivot (:func:`quality`) falls below :data:`SWITCH_RATIO` times that of the best
  partition (the chart nears a branch point such as x = ℓ for y = −√(ℓ² − x²)), the partition is
  switched and the new y returned; when φ_q itself loses rank the run stops (exit 1) with the
  time and advice.

Where the run is stepped: with DOP853 the whole accepted-step loop runs in C
(:class:`lagsim.run.engines.cloop.RLoop`): a symbolic chart's compiled right-hand side and its map
to the full state (:func:`full_map`, compiled to C), a numeric chart's Newton solve, and
:meth:`Reduced.after_step`'s check, its switch to a symbolic chart already built or to a numeric
chart (where :meth:`Reduced._chart_for` would try no symbolic reduction), mirrored in C; this class
decides in Python only the first switch, a new symbolic chart, a check within rounding of its
threshold and rank loss. With the other methods the Python loop steps
(:mod:`lagsim.run.engines.python`).

The class is registered in :data:`lagsim.run.registry.FORMULATIONS`, which imports this module
when ``reduced`` is first looked up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import symengine as se
from scipy.integrate import DOP853

from lagsim.errors import InputError, IntegrationError, Subject
from lagsim.numeric.compile import NumericSystem
from lagsim.numeric.reduction import NumericReduction, compile_reduction
from lagsim.run.formulations import Formulation, solve_augmented
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model
from lagsim.symbolic.reduce import (
    START_TOLERANCE,
    Reduction,
    ReductionError,
    flat,
    reduce_model,
)

if TYPE_CHECKING:
    from lagsim.run.formulations import Stabilizer

SWITCH_RATIO = 0.5
"""Switch the partition when the chart's smallest pivot < SWITCH_RATIO · the best one's.

Right after a switch the ratio is 1, so a chart is kept until it has lost half its conditioning:
the hysteresis keeps the partition from flickering, and the chart in use is never worse than
half as well conditioned as the best one, far from the branch point where σ_min(φ_u) = 0
(Wehage and Haug re-partition when the dependent Jacobian becomes ill-conditioned)."""
Pairs = list[tuple[int, int]]
RANK_TOLERANCE = 1e-10
"""φ_q has lost rank when its best σ_min is below this times its largest entry."""
NEWTON_ITERATIONS = 30
SYMBOLIC_CHARTS = 8
"""At most this many compiled symbolic charts per run (a coordinate eliminated through acos that
keeps turning needs a new branch, + 2πk, at every turn; later charts are numeric)."""

Report = Callable[[str], None]


def complete_pivoting(phi_q: np.ndarray, columns: Sequence[int] | np.ndarray | None = None
                      ) -> tuple[Pairs, np.ndarray]:
    """Gaussian elimination with complete pivoting on φ_q (m × n), restricted to ``columns``
    when given: the (constraint row, coordinate column) pairs in the order of elimination and the
    absolute pivots. Eliminating a coordinate from the other rows is the linearization of
    substituting the constraint solved for it into the other constraints. Of equal pivots the
    last coordinate is taken (as ``derive`` does; the slider-crank's rod is then solved for the
    slider x2 rather than the crank pin x1, which keeps sympy's work small)."""
    S = np.array(phi_q, dtype=float)
    rows = list(range(S.shape[0]))
    cols = list(range(S.shape[1])) if columns is None else [int(c) for c in columns]
    pairs: Pairs = []
    pivots = []
    for _ in range(S.shape[0]):
        sub = np.abs(S[np.ix_(rows, cols)])
        ties = np.argwhere(sub >= (1.0 - 1e-12) * sub.max())
        i, j = max(ties, key=lambda ij: (cols[ij[1]], -rows[ij[0]]))
        r, c = rows.pop(int(i)), cols.pop(int(j))
        pairs.append((r, c))
        pivots.append(abs(S[r, c]))
        if S[r, c] != 0.0:
            for other in rows:
                S[other] -= S[other, c] / S[r, c] * S[r]
    return pairs, np.array(pivots)


def pivots_along(phi_q: np.ndarray, pairs: Pairs) -> np.ndarray:
    """The absolute pivots of φ_q eliminated in the order of ``pairs``, without pivoting: how
    well conditioned each step of a symbolic chart's sequence of solutions is here."""
    S = np.array(phi_q, dtype=float)
    pivots = np.zeros(len(pairs))
    for k, (r, c) in enumerate(pairs):
        pivots[k] = abs(S[r, c])
        if S[r, c] == 0.0:
            break
        for other, _ in pairs[k + 1:]:
            S[other] -= S[other, c] / S[r, c] * S[r]
    return pivots


def pivot_partition(phi_q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dependent, independent) column indices of φ_q: the dependent ones in the order of
    :func:`complete_pivoting`, the independent ones sorted."""
    pairs, _ = complete_pivoting(phi_q)
    dependent = [c for _, c in pairs]
    independent = [c for c in range(phi_q.shape[1]) if c not in dependent]
    return np.array(dependent, dtype=int), np.array(independent, dtype=int)


def quality(phi_q: np.ndarray, chart: SymbolicChart | PartitionChart) -> float:
    """The smallest pivot of ``chart`` at φ_q: along its order of solution for a symbolic chart,
    with complete pivoting within its dependent coordinates for a numeric one (Newton solves
    for them together)."""
    if isinstance(chart, SymbolicChart):
        return float(pivots_along(phi_q, chart.pairs).min())
    return float(complete_pivoting(phi_q, chart.dependent)[1].min())


def full_map(reduction: Reduction) -> tuple[list, list]:
    """The arguments (t, free q, q̇, q̈) and expressions (full q, q̇, A_e, (M q̈ − F)_e, the
    parameters substituted) of the map back to the full state, as
    :func:`lagsim.numeric.reduction.compile_reduction` compiles them;
    :mod:`lagsim.run.engines.cloop` compiles them to C for the reduced C loop."""
    red = reduction.reduced
    subs = red.substitutions()
    exprs = list(reduction.full_q) + list(reduction.full_qd) + flat(reduction.A_e) + flat(
        reduction.residual_e)
    exprs = [se.sympify(e).subs(subs) if subs else se.sympify(e) for e in exprs]
    return [red.t, *red.q, *red.qd, *red.qdd], exprs


class SymbolicChart:
    """002's reduced Lagrangian, compiled; y = (free q, free q̇) (seed 002 §23.5)."""

    def __init__(self, reduction: NumericReduction, n: int, pairs: Pairs,
                 source: Reduction | None = None) -> None:
        self.numeric = reduction.numeric
        self.reduction = reduction
        self.source = source
        """The symbolic reduction compiled (for the C loop's map, :func:`full_map`)."""
        self.pairs = pairs
        self.independent = np.array(reduction.free_indices, dtype=int)
        self.dependent = np.array([i for i in range(n) if i not in reduction.free_indices],
                                  dtype=int)
        self.k = len(self.independent)
        self.rhs = reduction.numeric.ode_rhs()

    def pack(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return np.concatenate((q[self.independent], qd[self.independent]))

    def full(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k = self.k
        qdd = self.reduction.numeric.accelerations(t, y[:k], y[k:])
        return self.reduction.to_full(t, y[:k], y[k:], qdd)

    def multipliers(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return self.full(t, self.pack(q, qd))[2]

    def accept(self, t: float, q: np.ndarray) -> None:
        return None

    def fits(self, t: float, q: np.ndarray, qd: np.ndarray) -> bool:
        """Whether this chart rebuilds the full state (q, q̇) from its free part to
        :data:`lagsim.symbolic.reduce.START_TOLERANCE` (it is on the state's branch)."""
        q2, qd2, _ = self.full(t, self.pack(q, qd))
        return bool(np.all(np.abs(q2 - q) <= START_TOLERANCE * max(1.0, np.abs(q).max()))
                    and np.all(np.abs(qd2 - qd) <= START_TOLERANCE * max(1.0,
                                                                          np.abs(qd).max())))


class PartitionChart:
    """Generalized coordinate partitioning, numerically (Wehage and Haug 1982): y = (v, v̇)."""

    def __init__(self, numeric: NumericSystem, dependent: np.ndarray, independent: np.ndarray,
                 t: float, q: np.ndarray) -> None:
        self.numeric = numeric
        self.dependent = dependent
        self.independent = independent
        self.k = len(independent)
        n, m = numeric.n, numeric.m
        self._K = np.zeros((n + m, n + m))
        self.accept(t, q)

    def pack(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return np.concatenate((q[self.independent], qd[self.independent]))

    def positions(self, t: float, v: np.ndarray) -> np.ndarray:
        """q with q_v = v and q_u solving φ(u, v, t) = 0: Newton from the last accepted u moved
        along the tangent, u − φ_u⁻¹(φ_v Δv + φ_t Δt). A correction below 1e-9 is the last one
        (Newton converges quadratically: the next would be about its square)."""
        q = self.q_last.copy()
        dv = v - q[self.independent]
        q[self.independent] = v
        dep = self.dependent
        q[dep] -= self.tangent @ np.concatenate((dv, [t - self.t_last]))
        for _ in range(NEWTON_ITERATIONS):
            phi, phi_q = self.numeric.phi(t, q)
            du = np.linalg.solve(phi_q[:, dep], -phi)
            q[dep] += du
            if np.abs(du).max() <= 1e-9 * (1.0 + np.abs(q[dep]).max()):
                return q
        raise self.newton_failure(t)

    def newton_failure(self, t: float) -> IntegrationError:
        """The error of :meth:`positions` when Newton's method does not converge at t."""
        return IntegrationError(
            "reduced: Newton's method on the constraints for the dependent coordinates "
            f"{', '.join(self.numeric.coordinates[i] for i in self.dependent)} did not converge "
            "(the step left the chart); use --formulation index1", time=float(t))

    def velocities(self, t: float, q: np.ndarray, vd: np.ndarray) -> np.ndarray:
        """q̇ with q̇_v = v̇ and φ_u u̇ = −φ_v v̇ − φ_t (A q̇ + c = 0, c = φ_t)."""
        A, c = self.numeric.velocity_terms(t, q)
        qd = np.zeros(self.numeric.n)
        qd[self.independent] = vd
        qd[self.dependent] = np.linalg.solve(A[:, self.dependent],
                                             -(A[:, self.independent] @ vd + c))
        return qd

    def _augmented(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        M, F, A, b = self.numeric.dynamics(t, q, qd)
        return solve_augmented(self._K, M, F, A, b)

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        k = self.k
        q = self.positions(t, y[:k])
        qd = self.velocities(t, q, y[k:])
        qdd = self._augmented(t, q, qd)[:self.numeric.n]
        return np.concatenate((y[k:], qdd[self.independent]))

    def full(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k = self.k
        q = self.positions(t, y[:k])
        qd = self.velocities(t, q, y[k:])
        return q, qd, self._augmented(t, q, qd)[self.numeric.n:]

    def multipliers(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return self._augmented(t, q, qd)[self.numeric.n:]

    def accept(self, t: float, q: np.ndarray) -> None:
        self.t_last = float(t)
        self.q_last = np.array(q, dtype=float)
        A, c = self.numeric.velocity_terms(t, q)
        self.tangent = np.linalg.solve(A[:, self.dependent],
                                       np.column_stack((A[:, self.independent], c)))

    def restore(self, dependent: np.ndarray, independent: np.ndarray, t: float, q: np.ndarray,
                tangent: np.ndarray) -> None:
        """Take over the partition, the last accepted state and its tangent from the reduced C
        loop (:class:`lagsim.run.engines.cloop.RLoop`), which keeps them in step with
        :meth:`accept`."""
        self.dependent, self.independent = dependent, independent
        self.t_last, self.q_last, self.tangent = t, q, tangent


class Reduced(Formulation):
    """Integrate independent coordinates only (002 §23.5, Wehage–Haug partitioning).

    The chart (symbolic or numeric, see the module docstring) is prepared from the consistent
    start by :meth:`prepare`, which :meth:`check` calls (rule 3 of the Formulation contract gives
    it that start); :meth:`after_step` switches the partition during the run. The eliminated
    coordinates satisfy the constraints by construction, so stabilizers do not apply.
    ``report`` receives one line when the symbolic reduction is not used and at the first switch.
    At most ``max_symbolic_charts`` (default :data:`SYMBOLIC_CHARTS`) symbolic charts are built
    in a run; later charts are numeric.
    """

    name = "reduced"
    kinds = frozenset(("holonomic",))
    needs_constraints = True
    stabilizers = frozenset(("none",))

    def __init__(self, numeric: NumericSystem, stabilizer: Stabilizer,
                 spec: SystemSpec | None = None, model: Model | None = None,
                 start: tuple[float, np.ndarray, np.ndarray] | None = None,
                 report: Report | None = None,
                 max_symbolic_charts: int = SYMBOLIC_CHARTS) -> None:
        super().__init__(numeric, stabilizer, spec, model)
        if not numeric.m:
            raise InputError("formulation 'reduced' eliminates constrained coordinates, and this "
                             "system has no constraints; use ode (or auto)")
        for name, kind in zip(numeric.constraint_names, numeric.constraint_kinds):
            if kind != "holonomic":
                raise InputError(f"velocity constraint '{name}' cannot be eliminated by "
                                 "formulation 'reduced', which takes holonomic constraints only "
                                 "(`lagsim check` says whether it integrates to one); use index1 "
                                 "or udwadia-kalaba")
        self.model = model
        self.report: Report = report or (lambda _message: None)
        self.max_symbolic_charts = max_symbolic_charts
        self.chart: SymbolicChart | PartitionChart | None = None
        self.switches = 0
        self._symbolic: list[SymbolicChart] = []
        self._no_symbolic: set[tuple[int, ...]] = set()
        self._t_accepted = -np.inf
        self._stepper: DOP853 | None = None
        if start is not None:
            self.prepare(*start)

    def prepare(self, t: float, q: np.ndarray, qd: np.ndarray) -> None:
        """Choose the partition by pivoting on φ_q at the consistent start (t, q, q̇) and build
        its chart: 002's symbolic reduction when one fits this start, else the numeric one."""
        phi_q = self.numeric.phi(t, q)[1]
        self._check_rank(t, phi_q, start=True)
        self._t_accepted = float(t)
        self.chart = self._chart_for(t, q, qd, phi_q, at_start=True)

    def _chart_for(self, t: float, q: np.ndarray, qd: np.ndarray, phi_q: np.ndarray,
                   at_start: bool = False) -> SymbolicChart | PartitionChart:
        """The chart of the pivoted partition at (t, q, q̇): a compiled symbolic one on this
        state's branch when there is one (cached, or reduced now), else the numeric one."""
        numeric = self.numeric
        pairs, _ = complete_pivoting(phi_q)
        dependent = np.array([c for _, c in pairs], dtype=int)
        independent = np.array([c for c in range(numeric.n) if c not in dependent], dtype=int)
        key = tuple(sorted(int(i) for i in dependent))
        for chart in self._symbolic:
            if tuple(sorted(chart.dependent)) == key and chart.fits(t, q, qd):
                return chart
        numeric_chart = PartitionChart(numeric, dependent, independent, t, q)
        if self.model is None or key in self._no_symbolic or len(
                self._symbolic) >= self.max_symbolic_charts:
            return numeric_chart
        names = [numeric.coordinates[i] for i in dependent]
        order = [(numeric.constraint_names[r], numeric.coordinates[c]) for r, c in pairs]
        try:
            reduction = reduce_model(self.model, start=(t, q.tolist(), qd.tolist()),
                                     eliminate=order)
        except InputError as exc:
            self._no_symbolic.add(key)
            if at_start:
                reason = exc.reason if isinstance(exc, ReductionError) else exc.message
                self.report(f"reduced: {reason}; solving the constraints for "
                            f"{', '.join(names)} numerically at each step instead")
            return numeric_chart
        chart = SymbolicChart(compile_reduction(reduction), numeric.n, pairs, reduction)
        if tuple(sorted(chart.dependent)) != key:
            return numeric_chart
        self._symbolic.append(chart)
        return chart

    def _check_rank(self, t: float, phi_q: np.ndarray, start: bool = False) -> None:
        s = np.linalg.svd(phi_q, compute_uv=False)
        scale = max(float(np.abs(phi_q).max(initial=0.0)), 1e-300)
        if s[-1] > RANK_TOLERANCE * scale:
            return
        names = self.numeric.constraint_names
        rank = 0
        for k in range(len(names)):
            sk = np.linalg.svd(phi_q[:k + 1], compute_uv=False)
            r = int(np.sum(sk > RANK_TOLERANCE * scale))
            if r == rank:
                break
            rank = r
        before = ", ".join(names[:k])
        here = " at the start" if start else ""
        if np.abs(phi_q[k]).max() <= RANK_TOLERANCE * scale or not before:
            what = (f"the gradient of constraint '{names[k]}' vanishes{here} (a singular point "
                    "of the constraint, where it determines no coordinate)")
            advice = "start elsewhere, or use udwadia-kalaba"
        else:
            what = (f"constraint '{names[k]}' is redundant{here}: its row of the constraint "
                    f"Jacobian is a combination of those of {before}, so it determines no "
                    f"coordinate ({self.n - rank} degree(s) of freedom remain)")
            advice = "remove it, or use udwadia-kalaba, which accepts redundant constraints"
        if start:
            raise InputError(f"{what}; {advice}", about=Subject("constraint", names[k]))
        raise IntegrationError(f"reduced: {what}, and no partition of the coordinates can "
                               "continue; use --formulation udwadia-kalaba", time=float(t))

    @property
    def c_step(self) -> Callable | None:  # type: ignore[override]
        """DOP853's step for the driver's C stepper (:class:`lagsim.run.engines.cstep.CDOP853`)
        when the run starts on a compiled symbolic chart: each step is the current chart's step in
        C, or scipy's step in Python on a chart without one (a numeric chart after a switch)."""
        chart = self.chart
        if isinstance(chart, SymbolicChart) and chart.numeric.dop853_step() is not None:
            return self._step
        return None

    def _step(self, t: float, y: np.ndarray, f: np.ndarray, t_bound: float, direction: float,
              rtol: float, atol: np.ndarray, max_step: float, K: np.ndarray, h_abs: float
              ) -> tuple:
        chart = self._chart()
        step = chart.numeric.dop853_step() if isinstance(chart, SymbolicChart) else None
        if step is not None:
            out = step(t, y, f, t_bound, direction, rtol, atol, max_step, K, h_abs)
        else:
            out = self._python_step(t, y, f, t_bound, direction, rtol, atol, max_step, K, h_abs)
        if out[0] != 0:
            raise IntegrationError(self.singular(), time=float(t))
        return out

    def _python_step(self, t: float, y: np.ndarray, f: np.ndarray, t_bound: float,
                     direction: float, rtol: float, atol: np.ndarray, max_step: float,
                     K: np.ndarray, h_abs: float) -> tuple:
        """scipy's own DOP853 step of :meth:`rhs`, with the C step's calling convention."""
        solver = self._stepper
        if solver is None:
            solver = self._stepper = DOP853(self.rhs, t, y, t_bound, rtol=rtol, atol=atol)
        solver.t, solver.y, solver.f = t, np.array(y), np.array(f)
        solver.t_bound, solver.direction, solver.max_step = t_bound, direction, max_step
        solver.rtol, solver.atol, solver.h_abs = rtol, atol, h_abs
        nfev = solver.nfev
        accepted, _ = solver._step_impl()
        if not accepted:
            return 1, y, f, t, 0.0, h_abs, solver.nfev - nfev
        K[:] = solver.K_extended
        return (0, solver.y, solver.f, solver.t, solver.h_previous, solver.h_abs,
                solver.nfev - nfev)

    def _chart(self) -> SymbolicChart | PartitionChart:
        if self.chart is None:
            raise RuntimeError("Reduced.prepare (or check) must run before integrating")
        return self.chart

    def current_chart(self) -> SymbolicChart | PartitionChart:
        """The chart in use (after :meth:`prepare`)."""
        return self._chart()

    @property
    def symbolic_charts(self) -> tuple[SymbolicChart, ...]:
        """The symbolic charts built so far, in the order :meth:`_chart_for` tries them."""
        return tuple(self._symbolic)

    @property
    def numeric_partitions(self) -> frozenset[tuple[int, ...]]:
        """The dependent coordinates (sorted) of the partitions that have no symbolic chart."""
        return frozenset(self._no_symbolic)

    def adopt(self, chart: SymbolicChart | PartitionChart, switches: int,
              t_accepted: float | None) -> None:
        """Take over the state the reduced C loop reached (what :meth:`after_step` sets when it
        runs in Python): its chart, the switches it made, the time of its last accepted step
        (None when it took none)."""
        self.chart = chart
        self.switches += switches
        if t_accepted is not None:
            self._t_accepted = t_accepted

    def check(self, t: float, q: np.ndarray, qd: np.ndarray) -> None:
        if self.chart is None:
            self.prepare(t, q, qd)

    def initial(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        if self.chart is None:
            self.prepare(t, q, qd)
        return self._chart().pack(q, qd)

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """The chart's y'; NaN where the chart does not reach (beyond a branch point, Newton
        lost), which makes the solver reject the step and retry a shorter one. Only when even a
        step of 1e-9 (relative) leaves the chart does the run stop, with the time and advice."""
        try:
            out = self._chart().rhs(t, y)
        except (np.linalg.LinAlgError, IntegrationError):
            out = np.full(len(y), np.nan)
        if not np.all(np.isfinite(out)) and abs(t - self._t_accepted) <= 1e-9 * max(1.0,
                                                                                   abs(t)):
            raise IntegrationError(self.singular(), time=float(t))
        return out

    def singular(self) -> str:
        """The message of a run stopped where the current chart is singular."""
        dep = ", ".join(self.numeric.coordinates[i] for i in self._chart().dependent)
        return (f"reduced: the chart that eliminates {dep} is singular here (a branch point of "
                "the constraints where no partition of the coordinates applies, reached within "
                "a step); use --formulation index1")

    def _full(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        try:
            q, qd, lam = self._chart().full(t, y)
        except np.linalg.LinAlgError:
            raise IntegrationError(self.singular(), time=float(t)) from None
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd)) and np.all(np.isfinite(lam))):
            raise IntegrationError(self.singular(), time=float(t))
        return q.copy(), qd.copy(), lam.copy()

    def unpack(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q, qd, _ = self._full(t, y)
        return q, qd

    def multipliers(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        try:
            lam = self._chart().multipliers(t, q, qd)
        except np.linalg.LinAlgError:
            raise IntegrationError(self.singular(), time=float(t)) from None
        if not np.all(np.isfinite(lam)):
            raise IntegrationError(self.singular(), time=float(t))
        return lam

    def project(self, t: float, y: np.ndarray) -> np.ndarray | None:
        return None

    def after_step(self, t: float, y: np.ndarray) -> np.ndarray | None:
        """Keep the chart, or switch the partition when its pivots have degenerated (the new y
        holds the new independent coordinates and their rates); stop when φ_q loses rank."""
        chart = self._chart()
        q, qd, _ = self._full(t, y)
        chart.accept(t, q)
        self._t_accepted = float(t)
        phi_q = self.numeric.phi(t, q)[1]
        self._check_rank(t, phi_q)
        best = complete_pivoting(phi_q)[1].min()
        if quality(phi_q, chart) >= SWITCH_RATIO * best:
            return None
        self.chart = self._chart_for(t, q, qd, phi_q)
        if self.switches == 0:
            names = self.numeric.coordinates
            self.report(f"reduced: at t = {t:.6g} the chart eliminating "
                        f"{', '.join(names[i] for i in chart.dependent)} nears a branch point; "
                        "switching to eliminating "
                        f"{', '.join(names[i] for i in self.chart.dependent)} "
                        "(later switches are not reported)")
        self.switches += 1
        return self.chart.pack(q, qd)
