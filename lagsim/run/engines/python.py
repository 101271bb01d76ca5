"""The Python loop: scipy's ``OdeSolver`` driven by hand, one Python round per accepted step.

Why the solver is driven by hand: a formulation may change the state after each accepted step
(projection onto the constraints, a new chart of ``reduced``), which ``solve_ivp`` cannot do;
restarting a solver after every step would throw away its step-size control and, for multistep
methods, its history. So :class:`PythonLoop` drives the ``OdeSolver`` itself. For each accepted
step the parts of :mod:`lagsim.run.monitor` check it, look for the ``--stop-when`` and
``--section`` crossings in it and take its samples; then the formulation's ``after_step`` hook
may replace the solver's state (``y``; for the one-step methods also the stored derivative ``f``
the next step reuses, for BDF the first row of its difference table); when it also replaced
``rhs`` or ``c_step``, or the method keeps its state out of reach (LSODA, in Fortran), the
solver restarts from the new state.

This loop is the reference the C loops are tested against and the path of every method and
formulation they do not cover (also the rest of a reduced run that reaches a chart without C
code, from a :class:`Resume`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from lagsim.numeric.jacobian import IMPLICIT
from lagsim.output.trajectory import Trajectory
from lagsim.run.aliasing import AliasWatch
from lagsim.run.engines.base import UNILATERAL, Engine, Progress, StepLoop
from lagsim.run.monitor import Guard, Step, Watch, scipy_integrate
from lagsim.run.problem import Problem
from lagsim.run.registry import SOLVERS
from lagsim.run.threads import single_blas_thread

if TYPE_CHECKING:
    from scipy.integrate import OdeSolver


@dataclass
class Resume:
    """A run that goes on in the Python loop from a mid-way state (the reduced C loop on
    reaching a symbolic chart without C code, :class:`lagsim.run.engines.cloop.RLoop`): its parts
    so far and the state at t, from which the solver restarts with ``first_step``."""

    watch: Watch
    alias: AliasWatch
    t: float
    y: np.ndarray
    first_step: float


class PythonLoop(StepLoop):
    """scipy's ``OdeSolver`` stepped from Python, from the start or from ``resume``."""

    def __init__(self, problem: Problem, resume: Resume | None = None) -> None:
        super().__init__(problem)
        self.resume = resume

    def _begin(self) -> tuple[Watch, np.ndarray | None]:
        if self.resume is not None:
            return self.resume.watch, None
        return super()._begin()

    def _run_impl(self, watch: Watch, y0: np.ndarray | None, progress: Progress | None
                  ) -> Trajectory:
        problem, resume = self.problem, self.resume
        form = problem.form
        samples, guard, stop, section = watch.samples, watch.guard, watch.stop, watch.section
        if resume is not None:
            alias = resume.alias
            solver = make_solver(problem, guard.rhs, resume.t, resume.y,
                                 first_step=resume.first_step)
        else:
            assert y0 is not None
            alias = AliasWatch(form.unpack, samples.times, problem.numeric.coordinates,
                               form.report, problem.qd0, problem.options.naming)
            solver = make_solver(problem, guard.rhs, problem.t0, y0)
        self.at = solver
        while solver.status == "running":
            try:
                message = solver.step()
                if solver.status == "failed":
                    raise guard.failure(solver, message)
                step = Step(solver)
                guard.accepted(step)
                end = next(iter(stop.crossings(step)), None) if stop is not None else None
                if section is None:
                    samples.take(step, end)
                else:
                    for t in section.crossings(step):
                        if end is None or t <= end:
                            samples.add(t, step.at(t))
                alias.accepted(step.t, step.y)
                if end is not None:
                    return samples.stopped(end)
                solver = after_step(problem, solver, guard)
                self.at = solver
            except np.linalg.LinAlgError as exc:
                raise guard.singular(solver, exc) from None
            watch.advance(solver.t, progress)
        return samples.trajectory("t_end", "")


def run_python(problem: Problem, progress: Progress | None = None,
               resume: Resume | None = None) -> Trajectory:
    """Step ``problem`` from its start (or ``resume``) to ``t_end`` or its stop event with
    scipy's ``OdeSolver`` driven from Python, one round per accepted step (the reference the C
    loop is tested against, and the path of the methods and formulations it does not cover),
    with one BLAS thread (:func:`lagsim.run.threads.single_blas_thread`)."""
    with single_blas_thread():
        return PythonLoop(problem, resume).run(progress)


class PythonEngine(Engine):
    """The Python loop: takes every problem of scipy's solvers (the last entry of the driver's
    table)."""

    name: ClassVar[str] = "python"

    def refusal(self, problem: Problem) -> str | None:
        if problem.spec.contacts:
            return UNILATERAL
        method = problem.options.method
        return None if method in SOLVERS else f"--method {method} is not one of scipy's solvers"

    def run(self, problem: Problem, progress: Progress | None = None) -> Trajectory:
        return run_python(problem, progress)


def make_solver(problem: Problem, fun: Callable[[float, np.ndarray], np.ndarray], t0: float,
                y0: np.ndarray, first_step: float | None = None) -> OdeSolver:
    """The ``OdeSolver`` of ``options.method``; DOP853 steps in C (:mod:`lagsim.run.engines.cstep`)
    when the formulation has a C step and nothing changes the state between steps."""
    options, form = problem.options, problem.form
    tolerances: dict[str, Any] = {"rtol": options.rtol, "atol": options.atol,
                                  "first_step": first_step}
    c_step = form.c_step
    if options.method == "DOP853" and c_step is not None and not form.stabilizer.projects:
        from lagsim.run.engines.cstep import CDOP853

        return CDOP853(fun, t0, y0, options.t_end, c_step, **tolerances)
    if options.method in IMPLICIT:
        jac = form.jacobian(problem.model)
        if jac is not None:
            tolerances["jac"] = jac
        else:
            form.note_once("jacobian", f"note: --formulation {form.name} has no analytic "
                           f"Jacobian; {options.method} estimates it by finite differences "
                           "(slower)")
    solver = SOLVERS[options.method]
    sensitive = problem.sensitive_form
    if sensitive is not None and not sensitive.joint:
        solver = state_errors(solver, 2 * form.n)
    return solver(fun, t0, y0, options.t_end, **tolerances)


def state_errors(solver: type[OdeSolver], k: int) -> type[OdeSolver]:
    """An explicit Runge–Kutta ``solver`` whose error norm and first step cover the first
    ``k`` components of the state alone (``--sensitivity-errors state``: the sensitivities after
    them are integrated with the same steps but not measured; CVODES's ``errconS`` off,
    Hindmarsh et al., "SUNDIALS", ACM TOMS 31 (2005) §2). The first k components of f do not
    depend on the others, so the first step is scipy's for the state alone."""
    from scipy.integrate._ivp.common import select_initial_step

    class StateErrors(solver):
        def __init__(self, fun: Callable[[float, np.ndarray], np.ndarray], t0: float,
                     y0: np.ndarray, t_bound: float, first_step: float | None = None,
                     **tolerances: Any) -> None:
            super().__init__(fun, t0, y0, t_bound, first_step=first_step, **tolerances)
            if first_step is None:
                rest = np.zeros(len(self.y) - k)

                def state(t: float, y: np.ndarray) -> np.ndarray:
                    return np.asarray(self.fun(t, np.concatenate((y, rest))))[:k]

                atol = np.broadcast_to(self.atol, self.y.shape)[:k]
                self.h_abs = select_initial_step(
                    state, self.t, self.y[:k], t_bound, self.max_step, self.f[:k],
                    self.direction, self.error_estimator_order, self.rtol, atol)

        def _estimate_error_norm(self, K: np.ndarray, h: float, scale: np.ndarray) -> float:
            return super()._estimate_error_norm(K[:, :k], h, scale[:k])

    return StateErrors


def after_step(problem: Problem, solver: OdeSolver, guard: Guard) -> OdeSolver:
    """Call the formulation's ``after_step`` hook; put its state into the solver (or restart
    the solver from it, with the last step size as its first)."""
    form = problem.form
    parts = (form.rhs, form.c_step)
    y = form.after_step(solver.t, solver.y)
    if y is None or solver.status != "running":
        return solver
    if ((form.rhs, form.c_step) != parts or isinstance(solver, scipy_integrate().LSODA)
            or (isinstance(solver, scipy_integrate().BDF) and not form.stabilizer.projects)):
        h = min(solver.step_size or math.inf, problem.options.t_end - solver.t)
        return make_solver(problem, guard.rhs, solver.t, y, first_step=h)
    solver.y = y
    if isinstance(solver, scipy_integrate().BDF):
        solver.D[0] = y
    else:
        solver.f = solver.fun(solver.t, y)
    return solver
