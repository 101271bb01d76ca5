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

from lagsim.errors import InputError, Location
from lagsim.naming import ACTION, layout
from lagsim.numeric.compile import NumericSystem, compile_model
from lagsim.output.trajectory import Trajectory
from lagsim.run.driver import simulate
from lagsim.run.sensitivity import refusal
from lagsim.spec.options import BY_NAME, FLAGS, OPTIONS, Naming, SimulateOptions
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

if TYPE_CHECKING:
    from lagsim.symbolic.feedback import Feedback

Report = Callable[[str], None]
Controller = Callable[[SystemSpec, Model, SimulateOptions], "Feedback"]
"""The design of ``--controller`` (above this layer: :func:`lagsim.analysis.lqr.feedback`)."""


def run_spec(spec: SystemSpec, compiled: Callable[[], tuple[Model, NumericSystem]],
             given: Mapping[str, Any], naming: Naming = FLAGS,
             report: Report | None = None, progress: Callable[[float], None] | None = None,
             controller: Controller | None = None, times: np.ndarray | None = None
             ) -> tuple[Trajectory, SimulateOptions]:
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
    :func:`lagsim.symbolic.feedback.closed_loop` puts into τ: the run is of the closed loop."""
    options = SimulateOptions.resolve(spec.simulate, given, naming)
    options.check_size(len(layout(spec.coordinates, [c.name for c in spec.constraints],
                                  [c.kind for c in spec.constraints])))
    if options.sensitivities:
        why = refusal(options)
        if why is not None:
            raise InputError(why, options.file_location("sensitivities"))
    elif options.sensitivity_errors != BY_NAME["sensitivity_errors"].default:
        raise InputError(f"{options.label('sensitivity_errors')} applies only with "
                         f"{options.label('sensitivities')}",
                         options.file_location("sensitivity_errors"))
    model, numeric = compiled()
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
    trajectory = simulate(spec, model, options, report=report, progress=progress,
                          numeric=numeric, times=times)
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
    return trajectory, options
