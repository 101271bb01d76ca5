"""What watches a run step by step, whichever engine steps it (issue 15, issue 23): the parts
every step loop shares, so that the Python loop (:mod:`lagsim.run.engines.python`) and the C
loops (:mod:`lagsim.run.engines.cloop`, :mod:`lagsim.run.engines.cradau`) make the same rows and
the same errors.

For each accepted step:

1. :class:`Guard` checks the new state (finite, mass matrix regular: issue 15, "Mid-run
   failures");
2. the ``--stop-when`` event (:class:`lagsim.run.events.EventWatch`) looks for the first sign
   change of its expression inside the step (:class:`lagsim.run.crossings.Scan` on the step's
   dense output, ``brentq`` on the piece); the ``--section`` event takes every crossing;
3. :class:`Samples` takes the sample times that fall in the step from its :class:`Step` (the
   dense output is made only when a sample lies strictly inside: DOP853's interpolant costs three
   more evaluations), projected onto the constraints when the stabilizer projects, and unpacked
   at once into full q, q̇ and λ (a formulation's layout of y may change during a run);
4. :class:`Pace` refuses, after the first second, a run that would take more than a day.

A failed run raises :class:`FailedRun`, which carries the trajectory up to the failure.
:class:`Watch` holds the parts of one run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, IntegrationError, LagsimError
from lagsim.numeric.compile import NumericSystem
from lagsim.output.trajectory import Trajectory
from lagsim.records import record
from lagsim.run.formulations import Formulation, MassWatch, euler_angles
from lagsim.run.problem import Problem
from lagsim.run.registry import FORMULATIONS
from lagsim.spec.options import BY_NAME, duration

if TYPE_CHECKING:
    from scipy.integrate import OdeSolver

    from lagsim.run.events import CompiledEvent, EventWatch


def scipy_integrate() -> Any:
    """scipy.integrate, imported when the Python loop first needs it (a third of a run's
    start-up; the C loop and the fixed-step methods do without)."""
    import scipy.integrate

    return scipy.integrate


PACE_PROBE_SECONDS = 1.0
MAX_RUN_SECONDS = 86400.0
"""A run that, at the pace of its first second, would take longer than this is refused."""
MASS_CHECK_EVERY = 8
"""The mass matrix is checked at least every this many accepted steps (:class:`Guard`)."""


class FailedRun(IntegrationError):
    """A run that failed (exit 1); ``partial`` is the trajectory up to the failure."""

    def __init__(self, error: IntegrationError, partial: Trajectory) -> None:
        LagsimError.__init__(self, error.message, error.location)
        self.time = error.time
        self.partial = partial


@record
class At:
    """A state a C loop accepted (what the parts read of a scipy ``OdeSolver``): the time, the
    state and the next step size (None before the first step)."""

    t: float
    y: np.ndarray
    h_abs: float | None = None


def _followed(event: CompiledEvent | None, form: Formulation, t0: float, y0: np.ndarray
              ) -> EventWatch | None:
    """:meth:`lagsim.run.events.EventWatch.start`, whose module only a run with an event imports
    (issue 31, "Start-up")."""
    if event is None:
        return None
    from lagsim.run.events import EventWatch

    return EventWatch.start(event, form, t0, y0)


@dataclass
class Watch:
    """The parts that watch one run (the samples, the guard, the ``--stop-when`` event, the
    pace check) and the ``--section`` event, whose rows replace the samples."""

    samples: Samples
    guard: Guard
    stop: EventWatch | None
    pace: Pace
    section: EventWatch | None = None

    @classmethod
    def start(cls, problem: Problem, y0: np.ndarray) -> Watch:
        """The parts at the start y0 (the formulation's state): the first row is the start,
        unless ``--section`` takes the rows."""
        form = problem.form
        samples = Samples(problem)
        section = _followed(problem.section, form, problem.t0, y0)
        if section is None:
            samples.add(problem.t0, y0, project=False)
        guard = Guard(problem)
        stop = _followed(problem.stop, form, problem.t0, y0)
        return cls(samples, guard, stop, Pace(problem), section)

    def advance(self, t: float, progress: Callable[[float], None] | None) -> None:
        """The run has reached t: the pace check, and the fraction done to ``progress``."""
        self.pace(t)
        if progress is not None:
            t0 = self.pace.problem.t0
            progress(min(1.0, (t - t0) / (self.pace.problem.options.t_end - t0)))


class Step:
    """One accepted step: its end state, and its dense output made only when asked for."""

    def __init__(self, solver: OdeSolver) -> None:
        self.solver = solver
        self.t_old = float(solver.t_old)
        self.t = float(solver.t)
        self.y = solver.y
        self._dense: Callable | None = None

    def at(self, t: float) -> np.ndarray:
        if t == self.t:
            return self.y.copy()
        if self._dense is None:
            self._dense = self.solver.dense_output()
        return self._dense(t)

    def many(self, times: np.ndarray) -> np.ndarray:
        """The states at ``times`` as columns (the step's end itself is its state)."""
        if self._dense is None:
            self._dense = self.solver.dense_output()
        ys = np.array(self._dense(times), dtype=float).reshape(len(self.y), len(times))
        ys[:, times == self.t] = self.y[:, None]
        return ys


NO_MULTIPLIERS = np.zeros(0)
"""λ of a row of a system without constraints (read only: a row is a copy)."""
NO_MULTIPLIERS.setflags(write=False)


class Samples:
    """The output rows: full t, q, q̇, λ taken when each sample time is passed."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.form: Formulation = problem.form
        self.times = (problem.options.sample_times() if problem.times is None
                      else problem.times)
        self.k = 1
        self._blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []
        """The rows so far, in blocks (times, rows [q, q̇, λ], their energies or None): one per
        :meth:`add`, one per :meth:`extend`, joined once by :meth:`trajectory`."""
        self.last_time = -np.inf
        """The time of the last row."""
        self.count = 0
        """The number of rows so far."""
        self.extra: list[np.ndarray] = []
        """The extra columns of each row :meth:`add` made (the formulation's
        ``extra_columns``, e.g. sensitivities, or a C loop's :meth:`extend` gave)."""

    def add(self, t: float, y: np.ndarray, project: bool = True) -> None:
        """One row from the formulation's state y at t (projected when the stabilizer
        projects)."""
        form = self.form
        if project and form.stabilizer.projects:
            projected = form.project(t, y)
            y = y if projected is None else projected
        q, qd = form.unpack(t, y)
        lam = form.multipliers(t, q, qd) if form.m else NO_MULTIPLIERS
        if form.m and not np.isfinite(lam).all():
            i = int(np.flatnonzero(~np.isfinite(lam))[0])
            column = naming.multiplier(self.problem.numeric.constraint_names[i])
            raise IntegrationError(f"{column} became "
                                   f"{lam[i]} ({state_text(self.problem.numeric, q, qd)})",
                                   time=float(t))
        if form.extra_columns:
            self.extra.append(form.extra_row(t, y))
        self._blocks.append((np.array([float(t)]), np.concatenate((q, qd, lam))[None, :], None))
        self.count += 1
        self.last_time = float(t)

    def extend(self, t: np.ndarray, rows: np.ndarray, k: int | None = None,
               extra: np.ndarray | None = None, energy: np.ndarray | None = None) -> None:
        """Append the rows [q, q̇, λ] a C loop made at the times t (then the next sample time is
        the ``k``-th, when given), with their extra columns ``extra`` (one row each) when the
        formulation has some and their energies ``energy`` when the loop computed them (else
        :meth:`trajectory` does); a non-finite λ stops the run as in :meth:`add`."""
        n = self.problem.numeric.n
        if len(t) and rows.shape[1] == 2 * n:
            self._blocks.append((np.array(t, dtype=float), np.array(rows, dtype=float),
                                 None if energy is None else np.array(energy, dtype=float)))
            if extra is not None:
                self.extra.extend(np.array(extra, dtype=float))
            self.count += len(t)
            self.last_time = float(t[-1])
        elif len(t):
            q, qd, lam = rows[:, :n], rows[:, n:2 * n], rows[:, 2 * n:]
            bad = np.flatnonzero(~np.all(np.isfinite(lam), axis=1))
            count = int(bad[0]) if bad.size else len(t)
            if count:
                self._blocks.append((np.array(t[:count], dtype=float),
                                     np.array(rows[:count], dtype=float),
                                     None if energy is None
                                     else np.array(energy[:count], dtype=float)))
                if extra is not None:
                    self.extra.extend(np.array(extra[:count], dtype=float))
                self.count += count
                self.last_time = float(t[count - 1])
            if bad.size:
                numeric = self.problem.numeric
                i = int(np.flatnonzero(~np.isfinite(lam[count]))[0])
                raise IntegrationError(f"{naming.multiplier(numeric.constraint_names[i])} became "
                                       f"{lam[count, i]} "
                                       f"({state_text(numeric, q[count], qd[count])})",
                                       time=float(t[count]))
        if k is not None:
            self.k = k

    def take(self, step: Step, end: float | None) -> None:
        """The sample times in the step (up to the stop event's time ``end``, which is a row of
        its own)."""
        times = self.times
        last = step.t if end is None else end
        while self.k < len(times) and (times[self.k] <= last if end is None
                                       else times[self.k] < last):
            self.add(times[self.k], step.at(times[self.k]))
            self.k += 1
        if end is not None:
            self.add(end, step.at(end))

    def last(self, solver: OdeSolver | At) -> None:
        """After a failure: the last state the solver accepted, as a final row, when it is
        later than the last sample and finite."""
        y = np.asarray(solver.y, dtype=float)
        if solver.t > self.last_time and np.all(np.isfinite(y)):
            try:
                self.add(float(solver.t), y.copy())
            except (LagsimError, ArithmeticError, ValueError, np.linalg.LinAlgError):
                pass

    def stopped(self, end: float) -> Trajectory:
        """The rows so far, of a run that ``--stop-when`` stopped at ``end``."""
        stop = self.problem.stop
        assert stop is not None
        return self.trajectory("stop_when", stop.event.stopped(end))

    def trajectory(self, stop_reason: str, stop_message: str) -> Trajectory:
        """The rows so far, with residuals recomputed from each sampled state, and the energy
        where the loop that made the rows did not compute it."""
        numeric = self.problem.numeric
        n, m = numeric.n, numeric.m
        blocks = self._blocks or [(np.zeros(0), np.zeros((0, 2 * n + m)), np.zeros(0))]
        if len(blocks) == 1:
            t, rows, energy = blocks[0]
            q, qd, lam = rows[:, :n].copy(), rows[:, n:2 * n].copy(), rows[:, 2 * n:].copy()
        else:
            t = np.concatenate([block[0] for block in blocks])
            q, qd, lam = (np.concatenate([block[1][:, part] for block in blocks])
                          for part in (slice(0, n), slice(n, 2 * n), slice(2 * n, None)))
            energy = None
            if any(block[2] is not None for block in blocks):
                energy = np.concatenate([
                    e if e is not None
                    else np.array([numeric.energy(times[0], rows[0, :n], rows[0, n:2 * n])])
                    if len(times) == 1
                    else numeric.energies(times, rows[:, :n], rows[:, n:2 * n])
                    for times, rows, e in blocks])
        if energy is None:
            energy = numeric.energies(t, q, qd) if len(t) else np.zeros(0)
        out = assemble(numeric, self.form.name, self.form.stabilizer.name, t, q, qd, lam,
                       stop_reason, stop_message, energy)
        names = self.form.extra_columns
        if names:
            extra = np.array(self.extra, dtype=float).reshape(len(t), len(names))
            out = replace(out, extra=(*out.extra, *((name, extra[:, k].copy())
                                                    for k, name in enumerate(names))))
        return out


class Guard:
    """Watches the run for what the solver does not report well (issue 15): a non-finite value
    (the right-hand side is wrapped to note the first non-finite evaluation of the step being
    tried) and a mass matrix that becomes singular (:class:`MassWatch`)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.form = problem.form
        self.mass = MassWatch(problem.numeric, problem.t0, problem.q0, problem.qd0,
                              euler_angles(problem.spec))
        self.bad: tuple[float, np.ndarray, np.ndarray] | None = None
        self.unchecked = 0
        self.h = math.inf
        self.regular_at = problem.t0

    def resume(self, h: float, unchecked: int, regular_at: float) -> None:
        """Go on from a loop that watched the run so far (the reduced C loop handing over to
        the Python loop): its last step size, steps since the mass check, and the last time the
        mass matrix was regular."""
        self.h, self.unchecked, self.regular_at = h, unchecked, regular_at

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        f = self.form.rhs(t, y)
        if self.bad is None and not math.isfinite(f @ f) and not np.all(np.isfinite(f)):
            self.bad = (float(t), np.array(y, dtype=float), np.array(f, dtype=float))
        return f

    def accepted(self, step: Step) -> None:
        """Check the state at the end of an accepted step: finite, and (every
        :data:`MASS_CHECK_EVERY` steps, and whenever the step size falls to less than half the
        last one, as it does when a mass matrix degenerates) a regular mass matrix."""
        self.bad = None
        if not math.isfinite(step.y @ step.y) and not np.all(np.isfinite(step.y)):
            q, qd = self.form.unpack(step.t, step.y)
            raise IntegrationError(first_nonfinite(self.problem.numeric, q, qd), time=step.t)
        h, self.h = self.h, step.t - step.t_old
        self.unchecked += 1
        if self.unchecked >= MASS_CHECK_EVERY or self.h < 0.5 * h:
            self.unchecked = 0
            self.mass(step.t, *self.form.unpack(step.t, step.y), self.regular_at)
            self.regular_at = step.t

    def singular(self, solver: OdeSolver | At, exc: Exception) -> IntegrationError:
        """A linear solve failed inside a step: say whether the mass matrix did."""
        q, qd = self.form.unpack(solver.t, solver.y)
        self.mass(float(solver.t), q, qd, self.regular_at)
        others = [name for name, form in FORMULATIONS.items() if form.dependent_rows and form.kinds]
        hint = (f"; the constraints may have become dependent, try "
                f"{BY_NAME['formulation'].flag} {' or '.join(others)}"
                if self.form.m and not self.form.dependent_rows and others else "")
        return IntegrationError(f"singular matrix ({exc}){hint}", time=float(solver.t))

    def start(self, t: float, y: np.ndarray) -> None:
        """Refuse a start whose right-hand side is not finite: scipy's choice of the first step
        is then NaN, and its step loop never ends."""
        self.rhs(t, y)
        if self.bad is not None:
            raise IntegrationError(self.describe(*self.bad), time=self.bad[0])

    def failure(self, solver: OdeSolver | At, message: str | None) -> IntegrationError:
        """The solver gave up: name the first non-finite quantity when that is why."""
        if self.bad is None and not isinstance(solver, scipy_integrate().LSODA):
            self._probe(solver)
        if self.bad is not None:
            return IntegrationError(self.describe(*self.bad), time=self.bad[0])
        return integrator_failed(self.problem.options.method, message, float(solver.t))

    def _probe(self, solver: OdeSolver | At) -> None:
        """Retry the failed step with scipy's DOP853 in Python, whose every evaluation passes
        through :meth:`rhs` (the C stepper's do not)."""
        options = self.problem.options
        try:
            probe = scipy_integrate().DOP853(self.rhs, solver.t, solver.y, options.t_end,
                                        rtol=options.rtol, atol=options.atol,
                                        first_step=getattr(solver, "h_abs", None) or None)
            for _ in range(3):
                if self.bad is not None or probe.status != "running":
                    break
                probe.step()
        except (np.linalg.LinAlgError, ValueError):
            pass

    def describe(self, t: float, y: np.ndarray, f: np.ndarray) -> str:
        """The first non-finite quantity at a trial state: a coordinate or rate, then a force,
        a mass-matrix entry or a constraint term, then a multiplier, then an acceleration."""
        numeric, form = self.problem.numeric, self.form
        why = "(an overflow or an invalid operation such as the root of a negative number)"
        try:
            q, qd = form.unpack(t, y)
        except (ArithmeticError, ValueError, np.linalg.LinAlgError):
            return f"the state became non-finite {why}"
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            return f"{first_nonfinite(numeric, q, qd)} {why}"
        state = state_text(numeric, q, qd)
        names = numeric.coordinates
        M, F, A, b = numeric.dynamics(t, q, qd)
        parts = [(F, lambda i: f"the generalized force on {names[i]}"),
                 (M.ravel(), lambda i: f"the mass matrix entry ({names[i // len(names)]}, "
                                       f"{names[i % len(names)]})"),
                 (b, lambda i: f"the acceleration term of constraint "
                               f"{numeric.constraint_names[i]}")]
        if form.m:
            try:
                parts.append((form.multipliers(t, q, qd),
                              lambda i: naming.multiplier(numeric.constraint_names[i])))
            except (ArithmeticError, ValueError, np.linalg.LinAlgError):
                pass
        for values, name in parts:
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                return f"{name(int(bad[0]))} became {values[bad[0]]} at {state} {why}"
        bad = np.flatnonzero(~np.isfinite(f))
        what = (f"the acceleration of {names[int(bad[0]) - len(names)]}"
                if len(f) == 2 * len(names) and bad.size and bad[0] >= len(names)
                else "the right-hand side")
        return f"{what} became {f[bad[0]] if bad.size else 'non-finite'} at {state} {why}"


class Pace:
    """Refuses a run that, at the pace of its first :data:`PACE_PROBE_SECONDS`, would take
    more than :data:`MAX_RUN_SECONDS` (``--t-end 1e308``: issue 15, "Limits")."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.start = time.monotonic()
        self.done = False

    def __call__(self, t: float) -> None:
        if self.done:
            return
        elapsed = time.monotonic() - self.start
        if elapsed < PACE_PROBE_SECONDS:
            return
        self.done = True
        options, t0 = self.problem.options, self.problem.t0
        fraction = (t - t0) / (options.t_end - t0)
        projected = elapsed / fraction if fraction > 0 else math.inf
        if projected > MAX_RUN_SECONDS:
            raise InputError(
                f"{options.label('t_end')} {options.t_end!r} is out of reach: after "
                f"{elapsed:.1f} s the run is at t = {t:.6g}, and at that pace it would take "
                f"{duration(projected)} (lagsim refuses runs of more than a day); give a "
                f"smaller {options.label('t_end')}", options.file_location("t_end"))


def integrator_failed(method: str, message: str | None, t: float) -> IntegrationError:
    """The error of an integrator that gave up at t (its step size underflowed, as a finite-time
    blow-up makes it): a failed simulation, whichever loop stepped (the Python and C loops of
    ``simulate``, and :mod:`lagsim.analysis.lyapunov`'s scipy path and C tangent flow)."""
    return IntegrationError(f"the integrator failed ({method}): {message}", time=t)


def state_text(numeric: NumericSystem, q: np.ndarray, qd: np.ndarray) -> str:
    values = zip(naming.state(numeric.coordinates), (*q, *qd))
    return ", ".join(f"{name} = {float(x):.6g}" for name, x in values)


def first_nonfinite(numeric: NumericSystem, q: np.ndarray, qd: np.ndarray) -> str:
    names = naming.state(numeric.coordinates)
    values = np.concatenate((q, qd))
    bad = np.flatnonzero(~np.isfinite(values))
    return f"{names[bad[0]]} became {values[bad[0]]}" if bad.size else "the state became non-finite"


def assemble(numeric: NumericSystem, name: str, stabilize: str, t: np.ndarray,
                q: np.ndarray, qd: np.ndarray, lam: np.ndarray, stop_reason: str,
                stop_message: str, energy: np.ndarray | None = None) -> Trajectory:
    """Residuals recomputed from the sampled states, all samples in one compiled call of each
    function, and the energy unless given (a C loop computes it with the samples, each value
    that of :meth:`NumericSystem.energy`)."""
    N, m = len(t), numeric.m
    hol = list(numeric.holonomic)
    residual = np.zeros((N, m))
    residual_dot = np.zeros((N, len(hol)))
    if m and N:
        residual = numeric.velocity_residuals(t, q, qd)
        if hol:
            residual_dot = residual[:, hol]
            residual[:, hol] = numeric.phis(t, q)
    if energy is None:
        energy = numeric.energies(t, q, qd) if N else np.empty(0)
    return Trajectory(
        name=numeric.name, coordinates=numeric.coordinates,
        constraint_names=numeric.constraint_names, constraint_kinds=numeric.constraint_kinds,
        t=t, q=q, qd=qd, lam=lam, residual=residual, residual_dot=residual_dot, energy=energy,
        formulation=name, stabilize=stabilize, stop_reason=stop_reason, stop_message=stop_message,
    )
