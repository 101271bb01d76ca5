"""The run: the engine that steps a problem, chosen from an ordered table (issue 23).

:func:`simulate` builds the :class:`~lagsim.run.problem.Problem` and :func:`run` steps it with
the first engine of :data:`ENGINES` that accepts it (:class:`lagsim.run.engines.base.Engine`):

0. (before the table, :func:`impact_engine`) a system with unilateral constraints runs in the
   loop of impacts (:mod:`lagsim.run.engines.impacts`), which refuses what it cannot run yet;
1. the fixed-step methods ``rattle`` and ``variational`` run their own loop
   (:mod:`lagsim.run.engines.fixed`);
2. DOP853 with ode, index1, udwadia-kalaba or reduced steps in C, Python once per few
   thousand steps (:mod:`lagsim.run.engines.cloop`);
3. Radau with ode steps in C (:mod:`lagsim.run.engines.cradau`);
4. everything else in the Python loop, scipy's ``OdeSolver`` driven by hand
   (:mod:`lagsim.run.engines.python`), the reference the C loops are tested against.

Each engine that declines says why on stderr under ``--debug``. The parts that watch every
step loop (samples, guard, stop event, pace; :class:`FailedRun` for a failed run) are in
:mod:`lagsim.run.monitor`.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager

import numpy as np

from lagsim.errors import DEBUG
from lagsim.numeric.compile import NumericSystem
from lagsim.output.trajectory import Trajectory
from lagsim.run.engines.base import Engine, LoopEngine, Progress, StepLoop
from lagsim.run.engines.cloop import CDop853Engine
from lagsim.run.engines.fixed import FixedStepEngine
from lagsim.run.formulations import Report
from lagsim.run.monitor import FailedRun
from lagsim.run.problem import Problem
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

__all__ = ["ENGINES", "FailedRun", "choose", "impact_engine", "prepare", "run", "run_python",
           "simulate", "step"]

class _Table(Collection[Engine]):
    """Engines in order, each made by its maker when the table is first iterated up to it: a
    run the C DOP853 loop takes imports neither the Radau loop's module nor the Python loop's
    (issue 31, "Start-up"); each engine's refusal stays in its class."""

    def __init__(self, *makers: Callable[[], Engine]) -> None:
        self._makers = tuple(functools.cache(make) for make in makers)

    def __iter__(self) -> Iterator[Engine]:
        return (make() for make in self._makers)

    def __len__(self) -> int:
        return len(self._makers)

    def __contains__(self, engine: object) -> bool:
        return any(engine is made for made in self)


def _c_radau() -> Engine:
    from lagsim.run.engines.cradau import CRadauEngine

    return CRadauEngine()


def _python() -> Engine:
    from lagsim.run.engines.python import PythonEngine

    return PythonEngine()


ENGINES: Collection[Engine] = _Table(FixedStepEngine, CDop853Engine, _c_radau, _python)
"""The engines in the order they are asked: the first that accepts a problem runs it."""


def run_python(problem: Problem, progress: Progress | None = None) -> Trajectory:
    """Step ``problem`` in the Python loop (:func:`lagsim.run.engines.python.run_python`), the
    reference the C loops are tested against."""
    from lagsim.run.engines.python import run_python as python_loop

    return python_loop(problem, progress)


@functools.cache
def impact_engine() -> Engine:
    """The loop of impacts (issue 27), asked before the table: it takes every system with
    unilateral constraints (which each engine of the table refuses) and no other
    (:meth:`lagsim.run.engines.impacts.ImpactEngine.refusal`), so that the table, and what
    ``--debug`` says of it, are those of before for every other system. Its module, with
    :mod:`lagsim.run.contacts`, is imported only for a system that has unilateral constraints
    (issue 31, "Start-up")."""
    from lagsim.run.engines.impacts import ImpactEngine

    return ImpactEngine()


def simulate(spec: SystemSpec, model: Model, options: SimulateOptions,
             report: Report | None = None, progress: Callable[[float], None] | None = None,
             numeric: NumericSystem | None = None,
             max_symbolic_charts: int | None = None, times: np.ndarray | None = None
             ) -> Trajectory:
    """Run ``model`` from the spec's initial state with ``options`` (issue 3, issue 8 §3).

    ``report(message)`` receives what the CLI prints to stderr (corrected initial values, the
    auto formulation's choice); where a --stop-when stopped the run is the returned trajectory's
    ``message``. ``progress(fraction)`` is called after each step. ``numeric`` may pass an
    already compiled model; ``max_symbolic_charts`` and ``times`` are :meth:`Problem.build`'s.
    Raises
    :class:`InputError` for inputs that cannot run (located in the file) and
    :class:`FailedRun` for a run that fails (with the time and the cause).
    """
    problem, engine, loop = prepare(spec, model, options, report, numeric, max_symbolic_charts,
                                    times)
    return step(problem, engine, loop, progress)


def prepare(spec: SystemSpec, model: Model, options: SimulateOptions,
            report: Report | None = None, numeric: NumericSystem | None = None,
            max_symbolic_charts: int | None = None, times: np.ndarray | None = None
            ) -> tuple[Problem, Engine, StepLoop | None]:
    """What :func:`simulate` does before the first step: the problem built
    (:meth:`Problem.build`, its errors), the engine chosen (:func:`choose`) and the loop it made
    for the problem (None for an engine without one)."""
    with _quiet():
        problem = Problem.build(spec, model, options, report, numeric, max_symbolic_charts,
                                times)
        engine = choose(problem)
    return problem, engine, engine.taken(problem) if isinstance(engine, LoopEngine) else None


def step(problem: Problem, engine: Engine, loop: StepLoop | None,
         progress: Callable[[float], None] | None = None) -> Trajectory:
    """Step a problem :func:`prepare` made: its loop (run again, :meth:`StepLoop.again`, when
    it can), else its engine."""
    if loop is not None:
        trajectory = loop.again(progress)
        if trajectory is not None:
            return trajectory
    with _quiet():
        return engine.run(problem, progress) if loop is None else loop.run(progress)


@contextmanager
def _quiet() -> Iterator[None]:
    """NumPy's and scipy's floating-point warnings off: a non-finite value is reported once, by
    :class:`lagsim.run.monitor.Guard`, naming the quantity."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def choose(problem: Problem, engines: Collection[Engine] = ENGINES) -> Engine:
    """The first of ``engines`` that accepts ``problem``; under ``--debug`` each one before it
    says on stderr why it did not."""
    if problem.spec.contacts:
        return impact_engine()
    for engine in engines:
        why = engine.refusal(problem)
        if why is None:
            return engine
        if DEBUG.get():
            print(f"lagsim: debug: engine {engine.name} declined: {why}", file=sys.stderr)
    raise ValueError(f"no engine runs --method {problem.options.method}")


def run(problem: Problem, progress: Progress | None = None) -> Trajectory:
    """Step ``problem`` from its start to ``t_end`` or its stop event with the first engine of
    :data:`ENGINES` that accepts it."""
    return choose(problem).run(problem, progress)
