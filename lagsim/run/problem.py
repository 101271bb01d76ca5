"""What one run needs, built and checked once before the first step (issue 8 §3).

:class:`Problem` holds the compiled system, the parameter values, the start time and the
consistent start state, the options, the formulation chosen for them, the compiled
events (``--stop-when``, ``--section``: :mod:`lagsim.run.events`) and a :class:`SourceMap` of
where each part stands in the user's file.
Every error found here is an :class:`InputError` that names FILE:LINE:COL of the part concerned
(the ``initial:`` entry, the constraint, the ``simulate:`` key), as README's "Errors" promises;
the driver (:mod:`lagsim.run.driver`) only steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, Location, Subject
from lagsim.numeric.compile import NumericSystem, compile_model
from lagsim.records import record
from lagsim.run.formulations import Formulation, Report, dependent_constraints
from lagsim.run.inertia import regular_inertia
from lagsim.run.registry import FORMULATIONS, check_combination, choose_formulation
from lagsim.run.section import check_direction, section_event
from lagsim.run.start import consistent_start
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

if TYPE_CHECKING:
    from lagsim.run.events import CompiledEvent, Event
    from lagsim.run.sensitivity import Sensitive


@record
class SourceMap:
    """Where the parts of a system stand in its file (read-only views of the spec's locations).

    ``initial`` maps each entry of ``initial:`` to its value's location (``--init`` when set on
    the command line); ``coordinates`` and ``constraints`` map names to their declarations.
    """

    coordinates: Mapping[str, Location]
    constraints: Mapping[str, Location]
    initial: Mapping[str, Location]

    @classmethod
    def of(cls, spec: SystemSpec) -> SourceMap:
        return cls(coordinates=dict(zip(spec.coordinates, spec.coordinate_locations)),
                   constraints={c.name: c.location for c in spec.constraints},
                   initial=dict(spec.initial_locations))

    def coordinate(self, name: str) -> Location | None:
        """The initial value of coordinate ``name`` where one was given, else its declaration."""
        return self.initial.get(name) or self.coordinates.get(name)

    def constraint(self, name: str) -> Location | None:
        return self.constraints.get(name)

    def locate(self, about: Subject | None) -> Location | None:
        """Where the part an error is ``about`` stands: a constraint's declaration, a
        coordinate's initial value or declaration (:meth:`coordinate`); None for no part."""
        if about is None:
            return None
        if about.kind == "constraint":
            return self.constraint(about.name)
        return self.coordinate(about.name)

    def place(self, error: InputError) -> InputError:
        """``error`` located at the part it is ``about`` (itself when it has a location or is
        about no part)."""
        if error.location is not None or error.about is None:
            return error
        return InputError(error.message, self.locate(error.about), error.about)


@record
class Problem:
    """One run, ready to step: build it with :meth:`build`.

    ``q0``, ``qd0`` are the consistent start at ``t0``; ``form`` is the formulation object (its
    ``name`` the formulation chosen, ``auto`` resolved) with its stabilizer; ``events`` the
    compiled ``--stop-when`` and ``--section`` (:func:`run_events`); ``given`` are the state names
    the user set (``initial:`` and ``--init``).
    """

    spec: SystemSpec
    model: Model
    numeric: NumericSystem
    options: SimulateOptions
    parameters: Mapping[str, float]
    t0: float
    q0: np.ndarray
    qd0: np.ndarray
    form: Formulation
    events: tuple[CompiledEvent, ...]
    sources: SourceMap
    given: frozenset[str]
    times: np.ndarray | None = None
    """The sample times when not the options' equally spaced ones (``lagsim fit`` samples the
    model at the data's times), increasing, the first ``t0``."""

    @property
    def formulation(self) -> str:
        return self.form.name

    @property
    def stabilize(self) -> str:
        return self.form.stabilizer.name

    @property
    def stop(self) -> CompiledEvent | None:
        """The terminal event (``--stop-when``), or None."""
        return next((e for e in self.events if e.event.terminal), None)

    @property
    def section(self) -> CompiledEvent | None:
        """The event whose crossings are the rows (``--section``), or None."""
        return next((e for e in self.events if not e.event.terminal), None)

    @property
    def sensitive_form(self) -> Sensitive | None:
        """The form when it carries sensitivities (:class:`lagsim.run.sensitivity.Sensitive`,
        only with ``--sensitivities``, whose run alone imports that module: issue 31,
        "Start-up"), else None."""
        if not self.options.sensitivities:
            return None
        from lagsim.run.sensitivity import Sensitive

        return self.form if isinstance(self.form, Sensitive) else None

    @classmethod
    def build(cls, spec: SystemSpec, model: Model, options: SimulateOptions,
              report: Report | None = None, numeric: NumericSystem | None = None,
              max_symbolic_charts: int | None = None, times: np.ndarray | None = None
              ) -> Problem:
        """Compile (unless ``numeric`` is given), check and prepare a run; ``report`` receives
        the notes the CLI prints (corrected initial values, auto's choice); a ``reduced`` run
        builds at most ``max_symbolic_charts`` symbolic charts (default
        :data:`lagsim.run.reduced.SYMBOLIC_CHARTS`); ``times`` are sample times other than the
        options' (:attr:`times`). Raises
        :class:`InputError` located in the user's file."""
        sources = SourceMap.of(spec)
        try:
            problem = cls._build(spec, model, options, report or (lambda _m: None), numeric,
                                 sources, max_symbolic_charts)
        except InputError as error:
            if error.location is not None:
                raise
            raise sources.place(error) from None
        if times is None:
            return problem
        times = np.array(times, dtype=float)
        if times[0] != problem.t0 or not np.all(np.diff(times) > 0):
            raise ValueError("sample times must increase from the start time")
        times.setflags(write=False)
        return replace(problem, times=times)

    @classmethod
    def _build(cls, spec: SystemSpec, model: Model, options: SimulateOptions, say: Report,
               numeric: NumericSystem | None, sources: SourceMap,
               max_symbolic_charts: int | None) -> Problem:
        options.check_size(len(naming.layout(spec.coordinates, [c.name for c in spec.constraints],
                                             [c.kind for c in spec.constraints])))
        check_direction(options)
        t0 = options.t_start
        start = spec.initial_state()
        q0 = np.array(start[0], dtype=float)
        qd0 = np.array(start[1], dtype=float)
        if options.formulation == "reduced" and model.velocity_constraints:
            model = _integrated(model, dict(zip(model.coordinates, q0)), t0, say)
            numeric = None
        numeric = numeric or compile_model(model)
        model, numeric = regular_inertia(model, numeric, spec, t0, q0, qd0, sources.coordinate,
                                         say)
        events: tuple[CompiledEvent, ...] = ()
        wanted = run_events(options)
        if wanted:
            from lagsim.run.events import compile_events

            events = compile_events(spec, numeric, wanted)
        if options.formulation != "auto":
            check_combination(options.formulation, options, numeric, (), sources.constraint)
        given = frozenset(name for name, _ in spec.initial)
        q0, qd0 = consistent_start(numeric, t0, q0, qd0, say, options.strict_initial,
                                    given=given)
        dependent = dependent_constraints(numeric, t0, q0, qd0)
        name = choose_formulation(options.formulation, numeric, t0, q0, qd0, say)
        stabilizer = check_combination(name, options, numeric, dependent, sources.constraint)
        if name == "reduced" and max_symbolic_charts is not None:
            from lagsim.run.reduced import Reduced

            form: Formulation = Reduced(numeric, stabilizer(numeric, options), spec, model,
                                        report=say, max_symbolic_charts=max_symbolic_charts)
        else:
            form = FORMULATIONS[name](numeric, stabilizer(numeric, options), spec, model,
                                      report=say)
        form.check(t0, q0, qd0)
        if options.sensitivities:
            from lagsim.run.sensitivity import sensitive

            form = sensitive(form, spec, model, options, t0, q0, qd0, given, say)
        q0.setflags(write=False)
        qd0.setflags(write=False)
        return cls(spec=spec, model=model, numeric=numeric, options=options,
                   parameters=dict(numeric.parameters), t0=t0, q0=q0, qd0=qd0, form=form,
                   events=events, sources=sources, given=given)


def _integrated(model: Model, q0: dict[str, float], t0: float, say: Report) -> Model:
    """``model`` with its velocity constraints replaced by the holonomic constraints they
    integrate to at the start, as ``derive --form reduced`` eliminates them
    (:func:`lagsim.symbolic.reduce.integrate_velocity_constraints`, which refuses one that does not
    integrate in closed form), each said through ``say``. SymPy is imported here, for a reduced
    run only: it would double a run's start-up."""
    from lagsim.symbolic.reduce import integrate_velocity_constraints

    model, integrated = integrate_velocity_constraints(model, q0, t0)
    for name, integral in integrated:
        say(f"reduced: velocity constraint '{name}' integrates to the holonomic constraint "
            f"{integral} (Frobenius' test, as `lagsim check` finds), which eliminates a "
            "coordinate")
    return model


def run_events(options: SimulateOptions) -> tuple[Event, ...]:
    """The events of a run: ``--stop-when EXPR``, a terminal event of either direction (the run
    stops at EXPR's first change of sign), then ``--section``'s
    (:func:`lagsim.run.section.section_event`). A run with neither imports no
    :mod:`lagsim.run.events` (issue 31, "Start-up")."""
    stop = None
    if options.stop_when is not None:
        from lagsim.run.events import EITHER, Event

        stop = Event.of_option(options, "stop_when", options.stop_when, EITHER, terminal=True)
    return tuple(e for e in (stop, section_event(options)) if e is not None)
