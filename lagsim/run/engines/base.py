"""The engine contract and the step loop's skeleton (issue 23, "Engines as parts").

An engine steps a :class:`~lagsim.run.problem.Problem` from its start to ``t_end`` (or its stop
event). :func:`lagsim.run.driver.run` holds the engines in an ordered table and runs the first
that accepts the problem: each says why it does not (:meth:`Engine.refusal`, shown on stderr
under ``--debug``), so the choice of the loop that runs is visible and tested in one place.

The loops that sample a formulation's ODE (the Python loop, the C DOP853 loop, its reduced
form, the C Radau loop) share one skeleton, :meth:`StepLoop.run`, in the manner of scipy's
``OdeSolver.step``/``_step_impl`` split (scipy/integrate/_ivp/base.py): the skeleton makes the
parts that watch the run (:class:`lagsim.run.monitor.Watch`: samples, guard, stop event, pace),
checks the start, turns an :class:`IntegrationError` into a :class:`FailedRun` carrying the rows
so far and the last accepted state, and frees what the loop holds; a subclass gives
:meth:`StepLoop._run_impl`, the stepping itself, and :meth:`StepLoop._free`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from lagsim.errors import IntegrationError
from lagsim.output.trajectory import Trajectory
from lagsim.run.monitor import At, FailedRun, Watch
from lagsim.run.problem import Problem

if TYPE_CHECKING:
    from scipy.integrate import OdeSolver

Progress = Callable[[float], None]

UNILATERAL = "unilateral constraints run in the impacts engine (lagsim.run.engines.impacts)"
"""Why every other engine refuses a system with unilateral constraints (issue 27): it would step
through the obstacles."""


class Engine(ABC):
    """One way of stepping a problem.

    1. ``name`` says which engine ran (``--debug`` prints it with each refusal).
    2. ``refusal(problem)`` is None when the engine runs ``problem``, else why not (a method,
       formulation or option it does not take, code it cannot build); it has no effect on the
       problem beyond what a run would do anyway (a C library built, a chart prepared), and a
       library that cannot be built says so on stderr itself.
    3. ``run(problem, progress)`` steps an accepted problem: the trajectory, a
       :class:`FailedRun` with the rows so far, or an :class:`InputError` for a run that cannot
       finish (the pace check).
    """

    name: ClassVar[str] = ""

    @abstractmethod
    def refusal(self, problem: Problem) -> str | None:
        """None when this engine runs ``problem``, else the reason it does not."""

    @abstractmethod
    def run(self, problem: Problem, progress: Progress | None = None) -> Trajectory:
        """Step ``problem`` (accepted by :meth:`refusal`)."""


class LoopEngine(Engine):
    """An engine whose run is a loop object built for the problem (:meth:`loop_for` gives the
    loop, or the reason it cannot be built): its refusal and its run are that one answer."""

    _accepted: tuple[Problem, StepLoop] | None = None
    """The loop :meth:`refusal` made for the problem it accepted last, which :meth:`run` of
    that same problem object takes instead of making it again (once)."""

    @abstractmethod
    def loop_for(self, problem: Problem) -> StepLoop | str:
        """The loop that steps ``problem``, or why this engine does not."""

    def refusal(self, problem: Problem) -> str | None:
        if problem.spec.contacts:
            return UNILATERAL
        loop = self.loop_for(problem)
        if isinstance(loop, str):
            return loop
        self._accepted = (problem, loop)
        return None

    def taken(self, problem: Problem) -> StepLoop | None:
        """The loop :meth:`refusal` made for ``problem`` (that object), handed to the caller
        to run (:meth:`StepLoop.run`) instead of :meth:`run`; None when there is none."""
        accepted, self._accepted = self._accepted, None
        return accepted[1] if accepted is not None and accepted[0] is problem else None

    def run(self, problem: Problem, progress: Progress | None = None) -> Trajectory:
        accepted, self._accepted = self._accepted, None
        if accepted is not None and accepted[0] is problem:
            return accepted[1].run(progress)
        loop = UNILATERAL if problem.spec.contacts else self.loop_for(problem)
        if isinstance(loop, str):
            raise ValueError(f"the {self.name} engine does not run this problem: {loop}")
        return loop.run(progress)


class StepLoop(ABC):
    """One run of a loop over accepted steps: :meth:`run` is the skeleton, :meth:`_run_impl`
    the stepping of the subclass."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.at: OdeSolver | At | None = None
        """The last state the loop accepted (the final row of a failed run, when later than the
        last sample); set by :meth:`_run_impl` as it goes."""

    def reusable(self) -> bool:
        """Whether :meth:`run` may be called again for another run of the same problem, with
        the same result: the loop keeps nothing of a run but what the next one sets again
        (not the case of a loop whose formulation changes as it runs, ``reduced``'s charts)."""
        return False

    def again(self, progress: Progress | None = None) -> Trajectory | None:
        """The run of :meth:`run` again without what only a first run needs (the start's
        checks, the parts that watch each step), when the loop can tell that this run takes
        the steps of the last; None when it cannot (then :meth:`run` steps it)."""
        return None

    def _begin(self) -> tuple[Watch, np.ndarray | None]:
        """The parts that watch the run and the start state to check (None when the run goes
        on from a state already checked)."""
        problem = self.problem
        y0 = problem.form.initial(problem.t0, problem.q0, problem.qd0)
        return Watch.start(problem, y0), y0

    @abstractmethod
    def _run_impl(self, watch: Watch, y0: np.ndarray | None, progress: Progress | None
                  ) -> Trajectory:
        """Step from the start (or where the run goes on) to the end; keep :attr:`at`."""

    def _free(self) -> None:
        """Release what the loop holds (a C handle); called once the run has ended, however."""
        return None

    def run(self, progress: Progress | None = None) -> Trajectory:
        """Step the problem from its start to ``t_end`` or its stop event; a failure is a
        :class:`FailedRun` carrying the samples so far and the last accepted state."""
        problem = self.problem
        watch, y0 = self._begin()
        self.at = None
        try:
            if y0 is not None:
                watch.guard.start(problem.t0, y0)
            return self._run_impl(watch, y0, progress)
        except FailedRun:
            raise
        except IntegrationError as error:
            if self.at is not None:
                watch.samples.last(self.at)
            raise FailedRun(error, watch.samples.trajectory("failed", str(error))) from None
        finally:
            self._free()
