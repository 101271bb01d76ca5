"""The one run every way into lagsim goes through (issue 23, "one run path"): ``lagsim simulate``,
``System.simulate`` of the API and each ``lagsim sweep`` run call :func:`run_spec`, so every
option of the table (:mod:`lagsim.spec.options`), the added columns of ``invariants`` and
``action`` included (:mod:`lagsim.run.columns`), reaches each of them the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from lagsim.errors import DEBUG, InputError, Location
from lagsim.naming import ACTION, layout
from lagsim.numeric.compile import NumericSystem, compile_model
from lagsim.numeric.memo import Memo
from lagsim.output.trajectory import Trajectory
from lagsim.run.driver import prepare, step
from lagsim.run.engines.cloop import library_ahead
from lagsim.spec.options import BY_NAME, FLAGS, OPTIONS, Naming, SimulateOptions
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

if TYPE_CHECKING:
    from lagsim.run.engines.base import Engine, StepLoop
    from lagsim.run.problem import Problem
    from lagsim.symbolic.feedback import Feedback

Report = Callable[[str], None]
Controller = Callable[[SystemSpec, Model, SimulateOptions], "Feedback"]
"""The design of ``--controller`` (above this layer: :func:`lagsim.analysis.lqr.feedback`)."""

RUNS_KEPT = 4
"""The prepared runs a :class:`Runs` keeps (the least recently used dropped first)."""


class Notes:
    """What the build of a problem says (corrected initial values, auto's choice of
    formulation), passed on to ``report`` and recorded while :attr:`recording`, so that a run
    of the same problem kept for later says it again (:class:`Runs`). Plain classes here, not
    dataclasses: making a dataclass costs start-up (issue 31, "Start-up")."""

    __slots__ = ("report", "said", "recording")

    def __init__(self, report: Report | None) -> None:
        self.report = report
        self.said: list[str] = []
        self.recording = True

    def __call__(self, message: str) -> None:
        if self.recording:
            self.said.append(message)
        if self.report is not None:
            self.report(message)


class Prepared:
    """A run built once and stepped again (:class:`Runs`): the objects its key names by
    identity (held, so that no other object takes their ``id`` while it is kept), the model it
    ran, the problem, its engine and reusable loop, and the notes its build said. Read only
    (its slots are set once, by :meth:`__init__`)."""

    __slots__ = ("spec", "options", "report", "model", "problem", "engine", "loop", "notes")

    def __init__(self, spec: SystemSpec, options: SimulateOptions, report: Report | None,
                 model: Model, problem: Problem, engine: Engine, loop: StepLoop,
                 notes: tuple[str, ...]) -> None:
        self.spec, self.options, self.report, self.model = spec, options, report, model
        self.problem, self.engine, self.loop, self.notes = problem, engine, loop, notes


class Runs:
    """The runs of one :class:`lagsim.System` kept for the next call of ``System.simulate``
    with the same inputs (issue 31, "fixed cost per run"): a second run only starts the loop
    from the problem's start and steps it, without building the problem (its start's checks,
    the formulation, the compiled events), choosing the engine or making the loop again.

    A run is kept by the identities of its spec (a System's own spec, the same object for
    every run without ``parameters`` or ``initial``: another spec is another key, so values
    set for one run never reach another), of its resolved options
    (:meth:`SimulateOptions.resolve` gives the same object for the same plain options, and
    only then) and of ``report``; the model and compiled code are those of the first run of
    the key, which the System's compiled model (one per System) makes the same. Only a loop that
    says it gives the same result when run again (:meth:`StepLoop.reusable`) is kept, never
    under ``--debug`` (which says each engine's refusal), with ``--controller`` or sample times
    of a fit. At most :data:`RUNS_KEPT` per :class:`Runs`, least recently used dropped first;
    a run in use is taken out (:meth:`Memo.take`) and put back when it ends, so two runs at a
    time never share a loop. The notes of the build are said again at each run."""

    def __init__(self) -> None:
        self.kept: Memo[Prepared] = Memo(RUNS_KEPT)
        self._resolved: Memo[tuple[SystemSpec, Naming, SimulateOptions]] = Memo(4 * RUNS_KEPT)

    def options(self, spec: SystemSpec, given: Mapping[str, Any], naming: Naming
                ) -> SimulateOptions:
        """:meth:`SimulateOptions.resolve` of the spec's ``simulate:`` block and ``given``: the
        options it gave for the same spec (this object) and the same values given (numbers,
        strings, bools or None, told apart by type and ``repr`` as ``resolve`` tells them) and
        the same ``naming`` (this object), without building ``resolve``'s key of the whole
        block again (the spec and naming are held, so no other object takes their ``id``)."""
        if not all(v is None or type(v) in (int, float, str, bool) for v in given.values()):
            return SimulateOptions.resolve(spec.simulate, given, naming)
        key = (id(spec), id(naming), tuple((k, type(v), repr(v)) for k, v in given.items()))
        found = self._resolved.get(
            key, lambda: (spec, naming, SimulateOptions.resolve(spec.simulate, given, naming)))
        if found[0] is not spec or found[1] is not naming:
            found = (spec, naming, SimulateOptions.resolve(spec.simulate, given, naming))
            self._resolved.put(key, found)
        return found[2]

    def take(self, spec: SystemSpec, options: SimulateOptions, report: Report | None
             ) -> Prepared | None:
        found = self.kept.take((id(spec), id(options), id(report)))
        if found is None or found.spec is not spec or found.options is not options \
                or found.report is not report:
            return None
        return found

    def put(self, prepared: Prepared) -> None:
        self.kept.put((id(prepared.spec), id(prepared.options), id(prepared.report)), prepared)


def run_spec(spec: SystemSpec, compiled: Callable[[], tuple[Model, NumericSystem]],
             given: Mapping[str, Any], naming: Naming = FLAGS,
             report: Report | None = None, progress: Callable[[float], None] | None = None,
             controller: Controller | None = None, times: np.ndarray | None = None,
             runs: Runs | None = None) -> tuple[Trajectory, SimulateOptions]:
    """One run of ``spec`` with the options ``given`` (by option name, None meaning not given)
    merged over its file's ``simulate:`` block; ``naming`` says how an option is written in
    errors and notes (its flag by default; the API passes its keyword,
    :meth:`SimulateOptions.resolve`).

    ``compiled()`` gives the model and its compiled form at any parameter values; it is called
    after the options and the size of the output are checked, and the model's expressions hold
    the parameters as symbols (:func:`lagsim.spec.system.symbol_table`), so the run's values
    change only ``Model.parameters`` and rebind the compiled model
    (:meth:`~lagsim.numeric.compile.NumericSystem.with_parameters`): nothing is compiled again.
    ``report`` receives the notes the command line prints on stderr; ``times`` are sample times
    other than the options' (:attr:`lagsim.run.problem.Problem.times`). With ``--controller``,
    ``controller`` designs the feedback on the inputs (issue 28), which
    :func:`lagsim.symbolic.feedback.closed_loop` puts into τ: the run is of the closed loop.
    ``runs`` keeps the prepared run for the next call with the same spec, options and
    ``report`` (:class:`Runs`: ``System.simulate``'s)."""
    options = (SimulateOptions.resolve(spec.simulate, given, naming) if runs is None
               else runs.options(spec, given, naming))
    keep = runs is not None and times is None and not DEBUG.get()
    # the checks below passed for a kept run: they depend on the spec and options alone
    kept = runs.take(spec, options, report) if runs is not None and keep else None
    if kept is not None:
        for note in kept.notes:
            if report is not None:
                report(note)
        trajectory = step(kept.problem, kept.engine, kept.loop, progress)
        assert runs is not None
        runs.put(kept)
        return _added(trajectory, kept.model, options, report), options
    options.check_size(len(layout(spec.coordinates, [c.name for c in spec.constraints],
                                  [c.kind for c in spec.constraints])))
    if options.sensitivities:
        from lagsim.run.sensitivity import refusal

        why = refusal(options)
        if why is not None:
            raise InputError(why, options.file_location("sensitivities"))
    elif options.sensitivity_errors != BY_NAME["sensitivity_errors"].default:
        raise InputError(f"{options.label('sensitivity_errors')} applies only with "
                         f"{options.label('sensitivities')}",
                         options.file_location("sensitivity_errors"))
    model, numeric = compiled()
    library_ahead(spec, options)
    values = spec.parameter_values
    if values != model.parameters:
        model = replace(model, parameters=values)
        numeric = numeric.with_parameters(values)
    if options.controller is None:
        stray = [row.name for row in OPTIONS
                 if row.needs == "controller" and getattr(options, row.name) is not None]
        if stray:
            raise InputError(f"{options.label(stray[0])} applies only with "
                             f"{BY_NAME['controller'].flag}", options.file_location(stray[0]))
    else:
        if controller is None:
            raise InputError(f"{options.label('controller')} is not available on this path",
                             Location(options.label("controller")))
        from lagsim.symbolic.feedback import closed_loop

        model = closed_loop(model, controller(spec, model, options))
        numeric = compile_model(model)
    notes = Notes(report)
    problem, engine, loop = prepare(spec, model, options, notes, numeric, times=times)
    notes.recording = False
    trajectory = step(problem, engine, loop, progress)
    if runs is not None and keep and loop is not None and loop.reusable() \
            and options.controller is None:
        runs.put(Prepared(spec, options, report, model, problem, engine, loop,
                          tuple(notes.said)))
    return _added(trajectory, model, options, report), options


def _added(trajectory: Trajectory, model: Model, options: SimulateOptions,
           report: Report | None) -> Trajectory:
    """The columns ``invariants`` and ``action`` add to a run's trajectory (and the notes they
    say)."""
    if options.invariants or options.action:
        # With their dataclasses, only for a run that asks (issue 31, "Start-up").
        from lagsim.run.columns import trajectory_action, with_invariants
    if options.invariants:
        trajectory = with_invariants(trajectory, model)
        if not trajectory.extra and report is not None:
            report(f"{options.label('invariants')}: no conserved quantity found (`lagsim check` "
                   "says why)")
    if options.action:
        running = trajectory_action(model, trajectory)
        trajectory = trajectory.with_extra(ACTION, running.values)
        if report is not None:
            report(f"action S = {running.values[-1]:.15g} (error estimate {running.error:.1e}, "
                   "corrected trapezoids on the samples)")
    return trajectory
