"""The set-up of a sweep, shared by ``lagsim sweep`` and the API's :func:`lagsim.api.sweep`
(issue 30): from the system's text, the fixed values, the options and the axes to the job, the
plan of runs and, once they have run, the table (:mod:`lagsim.sweep.core`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from lagsim import naming
from lagsim.output.units import unit_columns
from lagsim.records import record
from lagsim.spec.options import FLAGS, Naming, SimulateOptions
from lagsim.spec.system import parse_spec
from lagsim.sweep import core
from lagsim.sweep.summary import parse_summary


@record
class Sweep:
    """A sweep ready to run: the parsed system (with the fixed values), the job every worker
    gets (summaries parsed, not yet keyed: the command line adds the folder of saved runs),
    the plan of runs, whether the runs stop at ``stop_when`` and the constraints' names."""

    spec: Any
    job: core.Job
    plan: core.Plan
    stops: bool
    constraints: tuple[str, ...]

    def table(self, job: core.Job, rows: Sequence[core.Row]
              ) -> tuple[list[str], np.ndarray, list[str]]:
        """The header, numbers and error texts of the table of ``rows`` run as ``job``."""
        return core.table(job, self.plan, rows, self.spec.coordinates, self.constraints,
                          core.energy_conserved(job), self.stops)

    def units(self, header: Sequence[str]) -> dict[str, str]:
        """The unit of each column of the table ``header`` (:meth:`table`) that the file's
        ``units:`` gives: a swept value's (a parameter's, a coordinate's or its velocity's),
        the final state's (:func:`lagsim.output.units.unit_columns`) and ``stop_time``'s
        (``t``'s)."""
        given = dict(self.spec.units)
        known = {**given, **unit_columns(given, self.spec.coordinates)}
        swept = zip(self.plan.names, header[1:1 + len(self.plan.names)])
        out = {column: known[name] for name, column in swept if name in known}
        out.update((name, known[name]) for name in naming.state(self.spec.coordinates)
                   if name in known)
        if naming.STOP_TIME in header and naming.TIME in known:
            out[naming.STOP_TIME] = known[naming.TIME]
        return out


def prepare(text: str, label: str, stem: str, parameters: Mapping[str, float],
            initial: Mapping[str, float], given: Mapping[str, Any],
            axes: Callable[[], Sequence[core.Axis]], summaries: Sequence[str],
            naming: Naming = FLAGS) -> Sweep:
    """Parse the system with the fixed ``parameters`` and ``initial`` values, check the options
    ``given`` (worded as ``naming`` says), plan the runs over the axes ``axes()`` makes (after
    those checks, so that a sweep's errors come in one order), refusing a name swept and also
    fixed (naming ``--set``/``--init``, or the keyword ``parameters``/``initial``), and parse
    each summary against the table's columns."""
    spec = parse_spec(text, label, stem, parameters, initial)
    stops = SimulateOptions.resolve(spec.simulate, given, naming).stop_when is not None
    setters = (naming.flag("--set"), naming.flag("--init"))
    fixed = {**{k: setters[0] for k in parameters}, **{k: setters[1] for k in initial}}
    names = [p.name for p in spec.parameters]
    plan = core.plan(axes(), names, spec.coordinates, fixed)
    job = core.Job(text, label, stem, dict(given), dict(parameters), dict(initial), plan.names,
                   runs=len(plan))
    constraints = tuple(c.name for c in spec.constraints)
    taken = core.columns(job, spec.coordinates, constraints)
    parsed: list[Any] = []
    for raw in summaries:
        parsed.append(parse_summary(raw, core.trajectory_columns(spec), names,
                                    taken + [s.name for s in parsed]))
    return Sweep(spec, replace(job, summaries=tuple(parsed)), plan, stops, constraints)
