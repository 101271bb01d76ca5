"""``lagsim sweep``: many runs of one system on Dask, from a laptop to a cluster (issue 12).

The runs: each ``--grid``, ``--values``, the ``--random`` draws (one block of ``--runs`` rows)
and the rows of ``--table`` is an axis; the runs are their product, in order (the last axis
varies fastest). A NAME is a parameter or an initial value (``theta``, ``theta_dot``).

Every run is ``lagsim simulate`` with its values: its spec is the one ``--set`` / ``--init``
give (:meth:`Session.run_spec`: the file is parsed again when the parameters change, so values
written as expressions of a swept parameter follow it as on the command line); the model is
derived and compiled once per process (:class:`Session`) and bound to
the run's parameter values with :meth:`NumericSystem.with_parameters` (nothing is compiled)
by :func:`lagsim.run.session.run_spec`, the run of ``lagsim simulate``: every option
(``--action`` and ``--invariants`` included) reaches a sweep run as it reaches ``simulate``.
So a run's row is bit for bit the one ``lagsim simulate`` gives, whatever the number of workers
and the order in which runs finish (each run is placed by its index).

The engine: without ``--scheduler`` one single-threaded worker process per core
(``--workers N``), reached through pipes (a process pool: no port for other users to reach,
issue 32); ``--scheduler tcp://HOST:PORT`` or ``tls://HOST:PORT`` the user's Dask cluster (whose
workers need lagsim installed and, for ``--save-trajectories``, the folder, named to them by its
absolute path); ``--scheduler synchronous`` every run in this process, one after another (Dask's
synchronous scheduler). Without ``--scheduler`` and ``--workers`` a sweep too small to gain from
the worker processes (its runs after run 0 less work than :data:`POOL_START_SECONDS`) runs in
this process (:func:`choose_engine`, issue 31). The client does the first runs itself: run 0
compiles the model (so that the workers find it in the compile cache) and pays this process's
one-time costs; runs 1, 2, … are timed, and from their least time the other runs are grouped
in chunks that shrink towards the end (:func:`chunks`), so that the workers finish together.
On a cluster the job (file text, options, summaries) is sent to each worker once
(``scatter``) and each worker pays its own one-time costs (:func:`warm`) while the client does
its runs; a chunk carries only its runs' indices and values, and returns their rows as one
:class:`Block` of arrays.

A run that fails is recorded (its row's ``error`` column says why, its numbers are NaN) and the
sweep goes on; the command then exits 1 and says how many failed.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, IntegrationError, LagsimError, Location
from lagsim.numeric.memo import Memo
from lagsim.records import record
from lagsim.spec import choices
from lagsim.spec.expressions import Source, parse_expression, suggest
from lagsim.sweep.fits import FitTask, fit_numbers
from lagsim.sweep.fits import width as fit_width
from lagsim.sweep.summary import Summary

if TYPE_CHECKING:
    from lagsim.output.io import CsvLimits

CHUNK_SECONDS = 0.3
"""The most work a chunk sent to a worker holds: a progress step, and the rows a failed worker
takes with it."""
MIN_CHUNK_SECONDS = 0.05
"""The least work a chunk holds (when there are runs enough): a Dask task costs a worker 2–5 ms
between chunks on a quiet machine (10–18 ms at load 12) and the client's process (client,
scheduler, nannies) about 5 ms of CPU time, which on two cores it takes from the workers
(bench/sweep.py's cluster part; 64 chunks against 8 of the same 2,000 runs); the workers'
finish is uneven by about the last chunk, so a smaller one gains less than its task costs."""
TIMED_RUNS = 5
"""The most runs the client times before the others are sent out (:func:`execute`)."""
SHARES = 2
"""A chunk is the work left divided by this many times the workers (:func:`chunks`). Guided
self-scheduling as published divides by the workers alone (9 chunks of 2,000 runs of 1 ms, 13
with 2), but on a shared machine (load 4.7) one worker took 2.6 s over a chunk of 461 runs while
the other did 461 and three small ones in 1.4 s: smaller chunks early leave less to such a
straggler, for a few more tasks (about 5 ms of CPU each)."""
MAX_RUNS = 10_000_000
"""A sweep of more runs than this is refused before any work."""
LOCAL_SCHEDULERS = choices.LOCAL_SCHEDULERS


# --- the runs ----------------------------------------------------------------------------------


@record
class Axis:
    """One factor of the sweep: ``names`` swept together at ``size`` points. The values are
    listed (``--values``, ``--table``) or a recipe (``grid``: start and stop of a ``--grid``;
    ``draws``: lows, highs and seed of ``--random``) made into numbers by :meth:`array` only
    after :func:`plan` has checked the names and the run count (issue 32: a bogus axis of 10⁷
    values cost a gigabyte before its name was checked)."""

    names: tuple[str, ...]
    option: str
    size: int
    listed: tuple[tuple[float, ...], ...] = ()
    grid: tuple[float, float] | None = None
    draws: tuple[tuple[float, ...], tuple[float, ...], int] | None = None

    def array(self) -> np.ndarray:
        """The values, one row per point: ``np.linspace`` for a grid, NumPy's PCG64 from the
        seed for draws (one (size, names) array in one call)."""
        if self.grid is not None:
            return np.linspace(self.grid[0], self.grid[1], self.size).reshape(self.size, 1)
        if self.draws is not None:
            lows, highs, seed = self.draws
            return np.random.default_rng(seed).uniform(lows, highs,
                                                       size=(self.size, len(self.names)))
        return np.array(self.listed, dtype=float).reshape(self.size, len(self.names))

    @property
    def rows(self) -> tuple[tuple[float, ...], ...]:
        return tuple(map(tuple, self.array().tolist()))


@record
class Plan:
    """The runs: ``values[i]`` are run i's values of ``names``; ``axes`` the factors whose
    product they are, in order (empty for a sweep of fits, one run per data file): a table of
    the runs is an array of ``tuple(a.size for a in axes)`` cells (:mod:`lagsim.sweep.frame`)."""

    names: tuple[str, ...]
    values: np.ndarray
    axes: tuple[Axis, ...] = ()

    def __len__(self) -> int:
        return len(self.values)

    def run(self, i: int) -> dict[str, float]:
        return dict(zip(self.names, self.values[i].tolist()))


def _number(text: str, option: str, what: str) -> float:
    where = Location(option)
    try:
        value = float(parse_expression(text, {}, Source(where), what,
                                       "a value is a number or an expression in numbers, such "
                                       "as 1.5 or pi/4"))
    except InputError as error:
        raise InputError(error.message, where) from None
    except (TypeError, ValueError):
        raise InputError(f"{what} {text!r} must be a number such as 1.5 or pi/4",
                         where) from None
    if not math.isfinite(value):
        raise InputError(f"{what} must be finite, got {text!r}", where)
    return value


def _split(item: str, option: str, form: str) -> tuple[str, str]:
    name, sep, text = item.partition("=")
    if not sep or not name.strip() or not text.strip():
        raise InputError(f"expected {form}, got {item!r}", Location(option))
    return name.strip(), text.strip()


def grid_axis(item: str) -> Axis:
    """``NAME=START:STOP:COUNT``: COUNT equally spaced values, both ends included."""
    form = "NAME=START:STOP:COUNT (e.g. theta=0.1:3:50)"
    name, text = _split(item, "--grid", form)
    parts = text.split(":")
    if len(parts) != 3:
        raise InputError(f"expected {form}, got {item!r}", Location("--grid"))
    start = _number(parts[0], "--grid", f"the start of {name}")
    stop = _number(parts[1], "--grid", f"the stop of {name}")
    count = _number(parts[2], "--grid", f"the count of {name}")
    if count != int(count) or count < 2:
        raise InputError(f"{name}: the count must be a whole number of at least 2 (both ends "
                         f"are values), got {parts[2]!r}; for one value use --set or --init",
                         Location("--grid"))
    if count > MAX_RUNS:
        raise InputError(f"{name}: {int(count)} values is more than the {MAX_RUNS} runs a sweep "
                         "may have", Location("--grid"))
    if start == stop:
        raise InputError(f"{name}: the start and the stop are both {start!r}; give a range",
                         Location("--grid"))
    return Axis((name,), "--grid", int(count), grid=(start, stop))


def values_axis(item: str) -> Axis:
    """``NAME=v1,v2,...``."""
    name, text = _split(item, "--values", "NAME=v1,v2,... (e.g. l=0.5,1,2)")
    values = [_number(v, "--values", f"a value of {name}") for v in text.split(",")]
    return Axis((name,), "--values", len(values), listed=tuple((v,) for v in values))


def random_axis(items: Sequence[str], runs: int | None, seed: int) -> Axis:
    """``NAME=LOW:HIGH`` for each item: ``runs`` draws, uniform in [LOW, HIGH), reproducible
    from ``seed`` (NumPy's PCG64, one (runs, names) array in one call)."""
    if runs is None:
        raise InputError("--random needs --runs N, the number of draws", Location("--random"))
    if runs < 1 or runs > MAX_RUNS:
        raise InputError(f"--runs must be between 1 and {MAX_RUNS}, got {runs}",
                         Location("--runs"))
    names, lows, highs = [], [], []
    for item in items:
        form = "NAME=LOW:HIGH (e.g. theta=0:1)"
        name, text = _split(item, "--random", form)
        parts = text.split(":")
        if len(parts) != 2:
            raise InputError(f"expected {form}, got {item!r}", Location("--random"))
        low = _number(parts[0], "--random", f"the low end of {name}")
        high = _number(parts[1], "--random", f"the high end of {name}")
        if not high > low:
            raise InputError(f"{name}: the high end must be greater than the low end, got "
                             f"{low!r}:{high!r}", Location("--random"))
        names.append(name)
        lows.append(low)
        highs.append(high)
    return Axis(tuple(names), "--random", runs, draws=(tuple(lows), tuple(highs), seed))


def table_axis(path: str, limits: CsvLimits | None = None) -> Axis:
    """``--table FILE``: a CSV whose header names the swept names, one run per row, read a line
    at a time within ``limits`` (:func:`lagsim.output.io.csv_lines`; by default the header and a
    line for each of :data:`MAX_RUNS` runs, in the characters a line and cells of every CSV)."""
    from lagsim.output.io import CsvLimits, csv_lines

    if limits is None:
        limits = CsvLimits(lines=MAX_RUNS + 1, lines_are=f"lines (a header and {MAX_RUNS:,} runs)")
    rows: list[tuple[int, list[str]]] = []
    for line, text, source in csv_lines(path, limits):
        try:
            row = next(csv.reader([text]), [])
        except csv.Error as exc:
            raise InputError(f"not a CSV line: {exc}", Location(source, line)) from None
        if any(cell.strip() for cell in row):
            rows.append((line, row))
    if len(rows) < 2:
        raise InputError("the table needs a header line of names and at least one row of "
                         "values", Location(path, 1))
    names = tuple(cell.strip() for cell in rows[0][1])
    out = []
    for line, row in rows[1:]:
        if len(row) != len(names):
            raise InputError(f"this row has {len(row)} values but the header names "
                             f"{len(names)}", Location(path, line))
        values = []
        for cell, name in zip(row, names):
            try:
                value = float(cell)
            except ValueError:
                raise InputError(f"the value of {name} {cell.strip()!r} is not a number",
                                 Location(path, line)) from None
            if not math.isfinite(value):
                raise InputError(f"the value of {name} must be finite, got {cell.strip()!r}",
                                 Location(path, line))
            values.append(value)
        out.append(tuple(values))
    return Axis(names, "--table", len(out), listed=tuple(out))


def plan(axes: Sequence[Axis], parameters: Sequence[str], coordinates: Sequence[str],
         fixed: Mapping[str, str] = {}) -> Plan:
    """The product of ``axes`` (the last varies fastest, as ``itertools.product``); every name
    must be a parameter or an initial value, swept once and not also given in ``fixed`` (name →
    the flag that sets it: ``--set``, ``--init``). Names and the run count are checked before
    any value is made."""
    if not axes:
        raise InputError("nothing to sweep: give --grid NAME=START:STOP:COUNT, --values "
                         "NAME=v1,v2,..., --random NAME=LOW:HIGH --runs N or --table FILE",
                         Location("lagsim sweep"))
    known = (*parameters, *naming.state(coordinates))
    seen: dict[str, str] = {}
    for axis in axes:
        for name in axis.names:
            if name not in known:
                raise InputError(f"no parameter or initial value '{name}'"
                                 f"{suggest(name, known)}; a sweep varies "
                                 f"{', '.join(known)}", Location(axis.option))
            if name in seen:
                raise InputError(f"'{name}' is swept twice ({seen[name]} and {axis.option}); "
                                 "sweep each name once", Location(axis.option))
            if name in fixed:
                raise InputError(f"'{name}' is swept and also set with {fixed[name]}; drop one",
                                 Location(axis.option))
            seen[name] = axis.option
    total = math.prod(a.size for a in axes)
    if total > MAX_RUNS:
        raise InputError(f"the sweep has {total:,} runs, more than the {MAX_RUNS:,} allowed; "
                         "use fewer values", Location(axes[0].option))
    names = tuple(n for a in axes for n in a.names)
    values = np.empty((total, len(names)))
    column, before = 0, 1
    for k, axis in enumerate(axes):
        after = math.prod(a.size for a in axes[k + 1:])
        block = np.repeat(axis.array(), after, axis=0)
        values[:, column:column + len(axis.names)] = np.tile(block, (before, 1))
        column += len(axis.names)
        before *= axis.size
    return Plan(names, values, tuple(axes))


# --- one run, in whichever process ------------------------------------------------------------


@record
class Job:
    """What every worker needs, sent once: the system file's text, the flags of ``simulate``
    (as given), the fixed ``--set``/``--init`` values, the swept names, the summaries, and where
    to save trajectories."""

    text: str
    label: str
    stem: str
    flags: Mapping[str, Any]
    overrides: Mapping[str, float]
    initial: Mapping[str, float]
    names: tuple[str, ...]
    summaries: tuple[Summary, ...] = ()
    save: str | None = None
    runs: int = 0
    key: str = field(default="", compare=False)
    fit: FitTask | None = None
    """A sweep of fits (:mod:`lagsim.sweep.fits`): run i fits data file i."""

    def keyed(self) -> Job:
        blob = json.dumps([self.text, self.label, self.stem, dict(self.flags),
                           dict(self.overrides), dict(self.initial), self.names,
                           [(s.name, s.text) for s in self.summaries], self.save, self.runs,
                           self.fit],
                          sort_keys=True, default=str)
        return replace(self, key=hashlib.sha256(blob.encode()).hexdigest())


class Session:
    """The parsed spec, model and compiled system of a job, made once per process."""

    def __init__(self, job: Job) -> None:
        from lagsim.numeric.compile import compile_model
        from lagsim.spec.system import parse_spec
        from lagsim.symbolic.model import build_model

        self.job = job
        self.spec = parse_spec(job.text, job.label, job.stem, job.overrides, job.initial)
        self.model = build_model(self.spec)
        self.numeric = compile_model(self.model)
        self.parameters = {p.name for p in self.spec.parameters}
        self._parsed: tuple[tuple[tuple[str, float], ...], Any] | None = None

    def run_spec(self, values: Mapping[str, float]) -> Any:
        """The spec of one run: what ``parse_spec`` gives with the run's parameters as
        ``--set`` and its initial values as ``--init``. The file is parsed again only when the
        parameters change (values derived from them must follow); initial values alone are put
        in as the parser puts an ``--init`` (value replaced, location ``--init``, coordinate
        order), which the tests check against ``parse_spec``."""
        from lagsim.spec.system import parse_spec, with_initial

        job = self.job
        run_parameters = {k: v for k, v in values.items() if k in self.parameters}
        run_initial = {k: float(v) for k, v in values.items() if k not in self.parameters}
        key = tuple(run_parameters.items())
        if self._parsed is None or self._parsed[0] != key:
            base = parse_spec(job.text, job.label, job.stem,
                              {**job.overrides, **run_parameters}, job.initial)
            self._parsed = (key, base)
        base = self._parsed[1]
        return with_initial(base, run_initial) if run_initial else base

    def simulate(self, values: Mapping[str, float], notes: list[str]) -> tuple[Any, Any, Any]:
        """The trajectory, options and spec of one run: ``lagsim simulate --set/--init`` with
        ``values``, through the run of ``simulate`` (:func:`lagsim.run.session.run_spec`)."""
        from lagsim.analysis.lqr import feedback
        from lagsim.run.session import run_spec

        spec = self.run_spec(values)
        trajectory, options = run_spec(spec, lambda: (self.model, self.numeric), self.job.flags,
                                       report=notes.append, controller=feedback)
        return trajectory, options, spec


SESSIONS: Memo[Session] = Memo(1)
"""This process's session: that of the last job it ran."""


def session(job: Job) -> Session:
    """This process's :class:`Session` of ``job`` (kept for the next chunk of the same job)."""
    return SESSIONS.get(job.key, lambda: Session(job))


def columns(job: Job, coordinates: Sequence[str], constraints: Sequence[str],
            conserved: bool = True, stops: bool = True) -> list[str]:
    """The sweep table's header: ``run``, the swept values (an initial value ``theta`` as
    ``theta0``), the final state, ``max_residual_<c>``, the energy columns, ``stop_time`` (only
    when ``stops``: a ``--stop-when`` is set), the summaries, ``error``.

    The energy h = q̇·∂L/∂q̇ − L: when h is ``conserved`` (``lagsim check``'s test,
    :func:`energy_conserved`), ``energy_drift`` = max |h − h0| / |h0| and ``energy_change`` =
    max |h − h0|, both integration errors; when it is not (forces that do work, t in L or in a
    constraint), a change of h is physics, not drift (issue 29): one column ``energy_gain`` =
    h(t_end) − h(0), signed (negative for a damped run), in the units of h. Each name has one
    meaning whatever the system."""
    swept = [name if name not in naming.state(coordinates) else f"{name}0"
             for name in job.names]
    energy = [naming.ENERGY_DRIFT, naming.ENERGY_CHANGE] if conserved else [naming.ENERGY_GAIN]
    return [naming.RUN, *swept, *naming.state(coordinates),
            *map(naming.max_residual, constraints), *energy,
            *([naming.STOP_TIME] if stops else []), *(s.name for s in job.summaries),
            naming.ERROR]


def energy_conserved(job: Job) -> bool:
    """Whether h is conserved in every run of ``job``: :func:`lagsim.symbolic.invariants.
    energy_conserved` (what ``lagsim check`` reports) on this process's model, the swept
    parameters kept as symbols and the others at their values. A unilateral constraint whose
    restitution is not 1, or depends on a swept name, takes energy at its impacts (issue 27)."""
    from lagsim.symbolic.invariants import energy_conserved as why_not

    spec = session(job).spec
    if any(c.value != 1.0 or {str(s) for s in c.restitution.expr.free_symbols} & set(job.names)
           for c in spec.contacts):
        return False
    model = session(job).model
    values = {k: v for k, v in model.substitutions().items() if str(k) not in job.names}
    return why_not(model, values) is None


@record
class Row:
    """One run's numbers (after ``run`` and the swept values), its error, its notes."""

    index: int
    numbers: tuple[float, ...]
    error: str
    notes: tuple[str, ...]
    seconds: float


def run_one(job: Job, index: int, values: Sequence[float]) -> Row:
    """Run ``index`` of ``job`` with ``values`` of ``job.names`` (or, in a sweep of fits, the
    fit of data file ``index``); a failure is recorded."""
    start = time.perf_counter()
    state = session(job)
    numeric = state.numeric
    width = 2 * numeric.n + numeric.m + 4 + len(job.summaries)
    notes: list[str] = []
    if job.fit is not None:
        try:
            return Row(index, fit_numbers(state, job.fit, job.flags, index, notes), "",
                       tuple(notes), time.perf_counter() - start)
        except LagsimError as exc:
            error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a fit's failure is recorded, the sweep goes on
            error = f"internal error ({type(exc).__name__}: {exc})"
        return Row(index, (math.nan,) * fit_width(job.fit), error, tuple(notes),
                   time.perf_counter() - start)
    values_by_name = dict(zip(job.names, map(float, values)))
    try:
        trajectory, options, spec = state.simulate(values_by_name, notes)
        numbers = _numbers(job, trajectory, spec, options.section is None)
        if job.save is not None:
            save_trajectory(trajectory, job.save, index, job.runs)
        error = ""
    except LagsimError as exc:
        numbers, error = (math.nan,) * width, str(exc)
    except Exception as exc:  # noqa: BLE001 - a run's failure is recorded, the sweep goes on
        numbers = (math.nan,) * width
        error = f"internal error ({type(exc).__name__}: {exc})"
    return Row(index, numbers, error, tuple(notes), time.perf_counter() - start)


def _numbers(job: Job, trajectory: Any, spec: Any, sampled: bool) -> tuple[float, ...]:
    """Final state, residuals, energy drift, largest energy change, h(t_end) − h(0), stop time
    (the last two known from the last row of a sampled run; NaN with --section, whose rows are
    crossings) and summaries of one run: every column :func:`table` may keep."""
    with np.errstate(all="ignore"):
        final = (*trajectory.q[-1], *trajectory.qd[-1]) if len(trajectory.t) else \
            (math.nan,) * (2 * len(trajectory.coordinates))
        residual = np.abs(trajectory.residual).max(axis=0) if len(trajectory.t) else \
            np.full(len(trajectory.constraint_names), math.nan)
        h = trajectory.energy
        change = float(np.max(np.abs(h - h[0]))) if len(h) else math.nan
        drift = change / abs(h[0]) if len(h) and h[0] != 0 else (0.0 if change == 0 else math.inf)
        end = float(h[-1] - h[0]) if len(h) and sampled else math.nan
        stop = float(trajectory.t[-1]) if trajectory.stopped and sampled else math.nan
        table = dict(zip(trajectory.columns, trajectory.as_array().T))
        parameters = {**spec.parameter_values}
        summaries = [s.evaluate(table, parameters) for s in job.summaries]
    return tuple(float(x) for x in (*final, *residual, drift, change, end, stop, *summaries))


@record
class Block:
    """The rows of a chunk as a worker returns them: the runs' indices, numbers and times as
    three arrays (pickled as buffers, protocol 5: one block of bytes a chunk instead of a
    Python object for each row and number), the errors and notes only of the runs that have
    them, by position in the chunk. :meth:`rows` gives the rows back, equal number for number
    (float64 both ways)."""

    indices: np.ndarray
    numbers: np.ndarray
    seconds: np.ndarray
    errors: tuple[tuple[int, str], ...]
    notes: tuple[tuple[int, tuple[str, ...]], ...]

    @classmethod
    def of(cls, rows: Sequence[Row]) -> Block:
        """The block of ``rows`` (of one job: all of one width)."""
        width = len(rows[0].numbers) if rows else 0
        return cls(np.array([r.index for r in rows], dtype=np.int64),
                   np.array([r.numbers for r in rows], dtype=np.float64).reshape(len(rows),
                                                                                   width),
                   np.array([r.seconds for r in rows], dtype=np.float64),
                   tuple((k, r.error) for k, r in enumerate(rows) if r.error),
                   tuple((k, r.notes) for k, r in enumerate(rows) if r.notes))

    def rows(self) -> list[Row]:
        errors, notes = dict(self.errors), dict(self.notes)
        return [Row(index, tuple(numbers), errors.get(k, ""), notes.get(k, ()), seconds)
                for k, (index, numbers, seconds) in enumerate(zip(
                    self.indices.tolist(), self.numbers.tolist(), self.seconds.tolist()))]


def run_chunk(job: Job, chunk: Sequence[tuple[int, Sequence[float]]]) -> Block:
    """The rows of a chunk of runs as one :class:`Block` (what a Dask task or a worker process
    does)."""
    return Block.of([run_one(job, index, values) for index, values in chunk])


def warm(job: Job, values: Sequence[float]) -> float:
    """Make this process's :class:`Session` of ``job`` and do run 0 with ``values``, its row
    dropped: a worker's one-time costs (the model parsed, derived and loaded from the compile
    cache, the first run's lazy loading: 0.65–0.85 s before the double pendulum's first 1 ms
    run) paid before its first chunk; the seconds it took."""
    start = time.perf_counter()
    run_one(job, 0, values)
    return time.perf_counter() - start


def run_file(folder: str, index: int, runs: int) -> str:
    """The file of run ``index`` of ``runs``: ``run_<index>.csv`` in ``folder`` (zero-padded to
    the width of the last index), ``run_<index>.parquet`` in a folder named ``*.parquet``."""
    from lagsim.output.io import derived_path

    width = len(str(max(runs - 1, 0)))
    suffix = ".parquet" if folder.endswith(".parquet") else ".csv"
    return derived_path(folder, f"run_{index:0{width}d}", suffix, "--save-trajectories")


def save_trajectory(trajectory: Any, folder: str, index: int, runs: int) -> None:
    """Run ``index``'s trajectory in its :func:`run_file`; as Parquet with a ``run`` column:
    the folder is one Parquet dataset."""
    from lagsim.output.io import write_csv

    path = run_file(folder, index, runs)
    if folder.endswith(".parquet"):
        data = trajectory.as_array()
        names = [naming.RUN, *trajectory.columns]
        rows = np.column_stack([np.full(len(data), float(index)), data])
        write_parquet(names, rows, [], path)
        return
    write_csv(trajectory.columns, trajectory.as_array(), path)


# --- the engine --------------------------------------------------------------------------------


def chunks(indices: Sequence[int], values: np.ndarray, seconds: float, workers: int
           ) -> list[list[tuple[int, list[float]]]]:
    """Runs grouped in chunks, in run order, each the work left shared by
    :data:`SHARES` × ``workers`` (guided self-scheduling, Polychronopoulos and Kuck, IEEE
    Trans. Computers 36 (1987) 1425): large chunks first, then smaller and smaller ones, so
    that the workers, each taking the next chunk when it is free, finish within about a
    small chunk of one another. A run took ``seconds``; a chunk is at most
    :data:`CHUNK_SECONDS` and at least :data:`MIN_CHUNK_SECONDS` of work (one run at least),
    unless that would leave a worker without a chunk; a rest smaller than that joins the last
    chunk."""
    most = max(1, int(CHUNK_SECONDS / max(seconds, 1e-6)))
    least = min(most, max(1, int(MIN_CHUNK_SECONDS / max(seconds, 1e-6))),
                max(1, math.ceil(len(indices) / max(workers, 1))))
    runs = [(i, values[i].tolist()) for i in indices]
    out: list[list[tuple[int, list[float]]]] = []
    start = 0
    while start < len(runs):
        left = len(runs) - start
        size = min(most, max(least, math.ceil(left / (SHARES * max(workers, 1)))))
        if left - size < least and len(out) + 1 >= workers:
            size = left
        out.append(runs[start:start + size])
        start += size
    return out


POOL_START_SECONDS = 1.0
"""What starting this machine's worker processes costs before their first run, measured on the
2-core development machine by bench/pool_start.py (bench/pool_start_results.md): a pool of one
``spawn``-ed worker that imports lagsim, reads the job and loads the pendulum's model from the
compile cache returned its first chunk (three 0.1 s runs of about 1 ms each) 0.97 s after it was
made at load 1.7 and 1.46 s at load 3.7, a pool of two 2.2 s and 2.9 s (they start at once on
two busy cores). At most the smallest model's cost on the fewest workers, so that a sweep kept
in this process is one the pool could not have finished sooner."""
IN_PROCESS = "this process"
"""The engine of a sweep too small to gain from worker processes (:func:`choose_engine`)."""
POOL = "processes"
CLUSTER = "cluster"


def choose_engine(seconds: float, runs: int, scheduler: str | None, workers: int | None
                  ) -> str:
    """The engine of the ``runs`` runs after run 0, one of which took ``seconds`` once this
    process had paid its one-time costs (the least time of runs 1, 2, …: run 0's includes
    compiling or loading the model and the imports of the first run, 1.06 s against 0.7 ms
    for a 0.1 s run of the pendulum, which would have sent every sweep to the pool):
    ``scheduler`` as given (``synchronous`` or :data:`CLUSTER`) and :data:`POOL` when
    ``workers`` are asked for (an explicit request is always honoured); otherwise
    :data:`IN_PROCESS` when the estimated work, ``seconds × runs``, is below
    :data:`POOL_START_SECONDS` (the pool's start would cost more than it saves), and
    :data:`POOL` when it is not (issue 31)."""
    if scheduler in LOCAL_SCHEDULERS:
        return scheduler
    if scheduler is not None:
        return CLUSTER
    if workers is not None:
        return POOL
    return IN_PROCESS if seconds * runs < POOL_START_SECONDS else POOL


def execute(job: Job, plan: Plan, scheduler: str | None, workers: int | None,
            progress: Callable[[int], None] | None = None, quiet: bool = True,
            note: Callable[[str], None] | None = None) -> list[Row]:
    """Every run of ``plan``, in run order: the engine is reached first (a wrong address fails
    before any work; a cluster's workers start on their one-time costs), then run 0 is done
    here (compiling the model), the others on the engine. ``quiet``: Dask's own log lines are
    kept off stderr (``--debug`` shows them).

    Runs 1, 2, … are done here too, timed (:data:`TIMED_RUNS` at most, half the runs after
    run 0 at most, until they add up to :data:`MIN_CHUNK_SECONDS`): the least of their times
    sizes the chunks (run 0's is this process's one-time costs: in a fresh process 0.7 s for a
    1 ms run of the double pendulum, which made one task a run; one run's time on a loaded
    machine can be ten times another's). Without ``scheduler`` and ``workers`` it also decides
    the engine
    (:func:`choose_engine`): a sweep whose runs after run 0 are less work than starting the
    worker processes runs in this process (no process is started), and
    ``note`` (when given) is told so in one line. It is a note, not a warning: the rows are the
    same (each run is placed by its index, :func:`run_chunk` wherever it runs) and come sooner;
    the command line shows it where it shows its progress (stderr a terminal) and always with
    ``--debug``, so that a user who expected the cores busy learns why they are not, while a
    script's stderr keeps only warnings and errors; the API passes none (its default engine is
    ``synchronous``; ``workers=`` asks for the pool)."""
    say = progress or (lambda _n: None)
    with _engine(scheduler, workers, len(plan) > 1, quiet) as (engine, begin):
        begin(job, plan.values[0])
        first = run_one(job, 0, plan.values[0])
        rows: dict[int, Row] = {0: first}
        say(1)
        rest = list(range(1, len(plan)))
        after, timed = len(rest), []
        for index in rest[:min(TIMED_RUNS, max(1, after // 2))]:
            timed.append(run_one(job, index, plan.values[index]))
            rows[index] = timed[-1]
            say(1)
            if sum(r.seconds for r in timed) >= MIN_CHUNK_SECONDS:
                break
        rest = rest[len(timed):]
        seconds = min((r.seconds for r in timed), default=first.seconds)
        if after and choose_engine(seconds, after, scheduler, workers) == IN_PROCESS:
            if note is not None:
                note(f"note: the {after} runs after run 0 are about {seconds * after:.2g} "
                     f"s of work, less than starting worker processes (about "
                     f"{POOL_START_SECONDS:g} s): they run in this process; --workers N runs "
                     "them on worker processes anyway")
            engine = _in_process
        if rest:
            for batch in engine(job, plan.values, rest, seconds):
                for row in batch:
                    rows[row.index] = row
                say(len(batch))
    return [rows[i] for i in range(len(plan))]


Engine = Callable[[Job, np.ndarray, list[int], float], Iterator[list[Row]]]
Begin = Callable[[Job, np.ndarray], None]
"""What an engine does before run 0 is done in this process (given the job and run 0's
values): a cluster's workers start on their one-time costs (:func:`warm`)."""


def _nothing(job: Job, values: np.ndarray) -> None:
    """No work before run 0 (an engine whose workers, if any, start later)."""


@contextlib.contextmanager
def _engine(scheduler: str | None, workers: int | None, needed: bool, quiet: bool
            ) -> Iterator[tuple[Engine, Begin]]:
    if scheduler in LOCAL_SCHEDULERS or not needed:
        yield (lambda job, values, rest, seconds: _local(
            job, chunks(rest, values, seconds, 1), scheduler or "synchronous")), _nothing
        return
    if scheduler is None:
        count = workers or default_workers()
        yield (lambda job, values, rest, seconds: _processes(
            job, chunks(rest, values, seconds, count), count)), _nothing
        return
    address = scheduler_address(scheduler)
    with _quiet_dask(quiet), _client(address) as client:
        _same_lagsim(client, address)
        cluster = _Cluster(client)
        yield cluster.run, cluster.begin


def _in_process(job: Job, values: np.ndarray, rest: list[int], seconds: float
                ) -> Iterator[list[Row]]:
    """The runs in this process, a chunk at a time (no Dask: its import alone is a tenth of
    :data:`POOL_START_SECONDS`)."""
    for part in chunks(rest, values, seconds, 1):
        yield run_chunk(job, part).rows()


def _local(job: Job, parts: list[list[tuple[int, list[float]]]], scheduler: str
           ) -> Iterator[list[Row]]:
    """Dask's synchronous scheduler, one chunk at a time in this process."""
    import dask

    for part in parts:
        (block,) = dask.compute(dask.delayed(run_chunk)(job, part), scheduler=scheduler)
        yield block.rows()


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


# --- this machine's cores: worker processes reached through pipes -----------------------------


_WORKER_JOB: list[Job] = []


def _worker_start(job: Job) -> None:
    """A local worker's start: it keeps the job (sent once, as an argument of the pool's
    initializer) and leaves Ctrl-C to the sweep, which stops the workers itself."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER_JOB[:] = [job]


def _worker_chunk(chunk: Sequence[tuple[int, Sequence[float]]]) -> Block:
    return run_chunk(_WORKER_JOB[0], chunk)


def _processes(job: Job, parts: list[list[tuple[int, list[float]]]], workers: int
               ) -> Iterator[list[Row]]:
    """The chunks on ``workers`` single-threaded processes of this machine (started by
    ``spawn``, as Dask's ``LocalCluster`` starts its workers), each keeping its
    :class:`Session` from chunk to chunk. Tasks and rows travel through the pipes of
    :class:`concurrent.futures.ProcessPoolExecutor`: no port is opened, so no other user of
    the machine can reach the workers (issue 32: a local Dask cluster listens on TCP without
    authentication, and its scheduler serves HTTP on 8787). A worker that dies (a crash in
    compiled code, the out-of-memory killer) ends the sweep with that reason."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(min(workers, len(parts)),
                               mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_start, initargs=(job,))
    done = False
    try:
        pending = {pool.submit(_worker_chunk, part) for part in parts}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                try:
                    block = future.result()
                except BrokenProcessPool:
                    raise IntegrationError(
                        "a worker process of the sweep stopped abruptly (a crash or the "
                        "system's out-of-memory killer); no table was written. Run the sweep "
                        "with --scheduler synchronous to find the run that fails") from None
                yield block.rows()
        done = True
    finally:
        if not done:
            _stop(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def _stop(pool: Any) -> None:
    """End a pool's worker processes at once (the sweep was interrupted or failed)."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list(getattr(pool, "_processes", {}).values()):
        process.terminate()


# --- a Dask cluster of the user's: --scheduler ADDRESS ------------------------------------------


JOB_FORMAT = 1
"""The layout of :class:`Job` and :class:`Row` that a worker reads and returns: raised when
either changes, so that a worker and a client of one lagsim version with different layouts (a
development tree) are told apart too."""
CONNECT_SECONDS = 10.0
"""How long to try to reach a ``--scheduler`` (connection and first answer) before giving up."""
PROTOCOLS = ("tcp", "tls")
DASK_SCHEDULER_NAMES = ("threads", "threading", "processes", "multiprocessing", "sync",
                        "single-threaded", "distributed")


@record
class Address:
    """A checked ``--scheduler`` address: ``url`` as Dask reads it, ``protocol`` tcp or tls."""

    url: str
    protocol: str


def scheduler_address(text: str) -> Address:
    """``--scheduler``: ``tcp://HOST[:PORT]`` (or ``HOST:PORT``), or ``tls://HOST[:PORT]``
    with Dask's TLS settings (``distributed.comm.tls.ca-file``, ``…client.cert``, ``…client.key``
    in the Dask configuration). Anything else — Dask's own local scheduler names, an empty
    address, a missing host, another transport — is refused here, before any work."""
    from urllib.parse import urlsplit

    where = Location("--scheduler")
    form = ("give tcp://HOST:PORT (a `dask scheduler`), tls://HOST:PORT, or 'synchronous'; "
            "leave --scheduler out for this machine's cores")
    stripped = text.strip()
    if stripped.lower() in DASK_SCHEDULER_NAMES:
        raise InputError(f"{text!r} is one of Dask's own schedulers, not an address lagsim "
                         f"uses; {form}", where)
    scheme, sep, rest = stripped.partition("://")
    if not sep:
        scheme, rest = "tcp", stripped
        if ":" not in rest:
            raise InputError(f"{text!r} is not a scheduler address; {form}", where)
    if scheme.lower() not in PROTOCOLS:
        raise InputError(f"{text!r}: lagsim reaches a scheduler by tcp:// or tls://, not "
                         f"{scheme}://; {form}", where)
    try:
        parts = urlsplit(f"{scheme.lower()}://{rest}")
        port = parts.port
    except ValueError as exc:
        raise InputError(f"{text!r} is not a scheduler address ({exc}); {form}", where) from None
    if not parts.hostname or parts.path or parts.query or parts.fragment or parts.username:
        raise InputError(f"{text!r} is not a scheduler address (it needs a host and nothing "
                         f"after the port); {form}", where)
    if port == 0:
        raise InputError(f"{text!r}: port 0 is not a scheduler's port; {form}", where)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    url = f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
    if parts.scheme == "tls":
        _tls_security()
    return Address(url, parts.scheme)


def _tls_security() -> Any:
    """Dask's ``Security`` from its configuration, which a tls:// address needs."""
    from distributed.security import Security

    where = Location("--scheduler")
    try:
        security = Security()
        args = security.get_connection_args("client")
    except (OSError, ValueError) as exc:
        raise InputError(f"Dask's TLS settings cannot be used: {exc}; check "
                         "distributed.comm.tls in the Dask configuration", where) from None
    if args.get("ssl_context") is None:
        raise InputError("a tls:// scheduler needs Dask's TLS settings: distributed.comm.tls."
                         "ca-file, distributed.comm.tls.client.cert and (unless in the cert) "
                         "distributed.comm.tls.client.key, in a Dask configuration file or as "
                         "DASK_DISTRIBUTED__COMM__TLS__CA_FILE, "
                         "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT and "
                         "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY", where)
    return security


@contextlib.contextmanager
def _quiet_dask(quiet: bool) -> Iterator[None]:
    """Dask's log lines (heartbeats, reconnections, ports) kept off stderr while it runs:
    lagsim reports what matters itself; ``--debug`` shows them."""
    if not quiet:
        yield
        return
    before = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(before)


def _unreachable(address: Address, why: str) -> InputError:
    return InputError(f"cannot reach the Dask scheduler {address.url!r}: {why}; start one with "
                      "`dask scheduler` and workers with `dask worker ADDRESS`, or leave "
                      "--scheduler out for this machine's cores", Location("--scheduler"))


def _reach(address: Address, security: Any) -> None:
    """Connect to the scheduler and ask who it is, all within :data:`CONNECT_SECONDS` (Dask's
    own connect waits for the handshake without limit: a port that accepts and never answers
    would hang the sweep)."""
    import asyncio

    from distributed.comm import connect

    args = security.get_connection_args("client") if security is not None else {}

    async def ask() -> Any:
        comm = await connect(address.url, timeout=CONNECT_SECONDS, **args)
        try:
            await comm.write({"op": "identity"})
            return await comm.read()
        finally:
            comm.abort()

    try:
        answer = asyncio.run(asyncio.wait_for(ask(), CONNECT_SECONDS))
    except TimeoutError:
        raise _unreachable(address, f"no answer within {CONNECT_SECONDS:g} s (is it a Dask "
                                    "scheduler?)") from None
    except (OSError, ValueError, TypeError) as exc:
        raise _unreachable(address, str(exc) or type(exc).__name__) from None
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        raise _unreachable(address, "what answers there is not a Dask scheduler")


@contextlib.contextmanager
def _client(address: Address) -> Iterator[Any]:
    """A Dask client of the user's cluster at ``address``, closed at the end."""
    from distributed import Client

    security = _tls_security() if address.protocol == "tls" else None
    _reach(address, security)
    try:
        client = Client(address.url, timeout=CONNECT_SECONDS, set_as_default=False,
                        **({"security": security} if security is not None else {}))
    except (OSError, TimeoutError, ValueError) as exc:
        raise _unreachable(address, str(exc)) from None
    try:
        yield client
    finally:
        client.close(timeout=CONNECT_SECONDS)


def worker_identity() -> tuple[str, int]:
    """(lagsim's version, :data:`JOB_FORMAT`) where this runs: on a worker, its own."""
    from lagsim import __version__

    return __version__, JOB_FORMAT


def _same_lagsim(client: Any, address: Address) -> None:
    """Refuse a cluster whose workers run another lagsim (version or :data:`JOB_FORMAT`) than
    this client: their rows would not be this client's rows (a table of rows of different
    widths). Asked of every worker with ``client.run`` before any run is sent; a worker whose
    lagsim has no :func:`worker_identity`, or none at all, is another lagsim too."""
    ours = worker_identity()
    try:
        answers = client.run(worker_identity, on_error="return")
    except (OSError, TimeoutError) as exc:
        raise _unreachable(address, f"its workers did not say their lagsim version ({exc})"
                           ) from None
    theirs: dict[str, str] = {}
    for worker, answer in answers.items():
        if isinstance(answer, BaseException) or not (
                isinstance(answer, (tuple, list)) and len(answer) == 2):
            found = f"a lagsim without sweep.worker_identity ({type(answer).__name__})"
        else:
            if tuple(answer) == ours:
                continue
            found = f"lagsim {answer[0]} (job format {answer[1]})"
        theirs.setdefault(found, worker)
    if theirs:
        found, worker = next(iter(theirs.items()))
        more = f" and {len(theirs) - 1} other version(s)" if len(theirs) > 1 else ""
        raise InputError(f"the worker {worker} of {address.url} runs {found}{more}, and this "
                         f"client lagsim {ours[0]} (job format {ours[1]}); install the same "
                         "lagsim on the workers as here, and restart them", Location("--scheduler"))


def warm_workers(client: Any, job: Any, values: np.ndarray) -> list[Any]:
    """:func:`warm` of ``job`` (a :class:`Job`, or its future scattered to the workers) with
    run 0's ``values`` on each worker of ``client``'s cluster, one task meant for each (run
    elsewhere if that worker leaves, rather than wait for it): their futures, to be held
    while the sweep runs (a task whose future is dropped is forgotten)."""
    workers = list(client.scheduler_info(n_workers=-1)["workers"])
    return [client.submit(warm, job, values.tolist(), workers=[worker], allow_other_workers=True,
                          pure=False) for worker in workers]


class _Cluster:
    """The runs on the Dask cluster of ``client``: the job sent to each worker once
    (``scatter``), the workers warmed (:func:`warm_workers`) while this process does its first
    runs, then the chunks submitted at once (one message to the scheduler) and their
    blocks (:class:`Block`) gathered as they finish, a batch at a time."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.shared: Any = None
        self.warming: list[Any] = []

    def begin(self, job: Job, values: np.ndarray) -> None:
        """The job sent to the workers; they are warmed when this process has not run the job
        yet (a client that has, a notebook's second sweep, most likely ran it on this cluster
        too: warming again would cost each worker a run and a task, and a cluster started
        for the sweeps is warmed with :func:`warm_workers` as it starts)."""
        fresh = job.key not in SESSIONS
        self.shared = self.client.scatter(job, broadcast=True, hash=False)
        if fresh:
            self.warming = warm_workers(self.client, self.shared, values)

    def run(self, job: Job, values: np.ndarray, rest: list[int], seconds: float
            ) -> Iterator[list[Row]]:
        from distributed import as_completed

        count = len(self.client.scheduler_info(n_workers=-1)["workers"]) or 1
        parts = chunks(rest, values, seconds, count)
        futures = self.client.map(run_chunk, [self.shared] * len(parts), parts, pure=False)
        for batch in as_completed(futures, loop=self.client.loop).batches():
            for block in self.client.gather(batch):
                yield block.rows()


# --- the table ---------------------------------------------------------------------------------


FORMATS = ("csv", "parquet")


def table(job: Job, plan: Plan, rows: Sequence[Row], coordinates: Sequence[str],
          constraints: Sequence[str], conserved: bool = True, stops: bool = True
          ) -> tuple[list[str], np.ndarray, list[str]]:
    """The header, the numbers (one row per run) and the error texts; the columns of
    :func:`columns` with ``conserved`` and ``stops``."""
    header = columns(job, coordinates, constraints, conserved, stops)
    numbers = np.array([r.numbers for r in rows], dtype=float).reshape(len(rows), -1)
    k = 2 * len(coordinates) + len(constraints)
    keep = [*range(k), *((k, k + 1) if conserved else (k + 2,)), *((k + 3,) if stops else ()),
            *range(k + 4, numbers.shape[1])]
    data = np.column_stack([np.arange(len(plan), dtype=float), plan.values, numbers[:, keep]])
    return header, data, [r.error for r in rows]


def write_table(header: Sequence[str], data: np.ndarray, errors: Sequence[str],
                target: Any, fmt: str) -> None:
    """The sweep table as CSV (``run`` as an integer, each other number as ``repr`` of its
    float, the ``error`` column quoted as CSV needs) or Parquet, through
    :func:`lagsim.output.io.open_output`."""
    if fmt == "parquet":
        write_parquet(header, data, errors, target)
        return
    from lagsim.output.io import open_output

    with open_output(target) as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        for numbers, error in zip(data.tolist(), errors):
            writer.writerow([int(numbers[0]), *(repr(x) for x in numbers[1:]), error])


PARQUET_MISSING = ("Parquet output needs pyarrow, which is not installed: pip install "
                   "'lagsim[parquet]' (or pyarrow), or write CSV")


def have_parquet() -> bool:
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def write_parquet(header: Sequence[str], data: np.ndarray, errors: Sequence[str],
                  target: Any) -> None:
    """A Parquet file of float64 columns (``run`` int64, ``error`` text when ``errors``),
    through :func:`lagsim.output.io.open_output`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lagsim.output.io import open_output

    names = list(header[:len(header) - 1] if errors else header)
    arrays = [pa.array(data[:, k].astype(np.int64), type=pa.int64()) if name == naming.RUN else
              pa.array(data[:, k], type=pa.float64()) for k, name in enumerate(names)]
    if errors:
        arrays.append(pa.array(list(errors), type=pa.string()))
        names.append(header[-1])
    with open_output(target, binary=True) as out:
        pq.write_table(pa.table(arrays, names=names), out)


def read_table(source: str) -> tuple[list[str], np.ndarray, list[str]]:
    """A sweep table (CSV or Parquet) back: header, numbers, errors."""
    if source.endswith(".parquet"):
        if not have_parquet():
            raise InputError(PARQUET_MISSING, Location(source))
        import pyarrow.parquet as pq

        data = pq.read_table(source)
        names = list(data.column_names)
        errors = data.column(naming.ERROR).to_pylist() if naming.ERROR in names else []
        numeric = [n for n in names if n != naming.ERROR]
        return (numeric + ([naming.ERROR] if errors else []),
                np.column_stack([data.column(n).to_numpy() for n in numeric]), errors)
    from lagsim.output.io import read_text

    text, label = read_text(source)
    rows = list(csv.reader(text.splitlines()))
    if not rows or rows[0][:1] != [naming.RUN]:
        raise InputError(f"not a sweep table: its first column is not '{naming.RUN}'",
                         Location(label, 1))
    header = rows[0]
    has_error = header[-1] == naming.ERROR
    width = len(header) - has_error
    data = np.empty((len(rows) - 1, width))
    errors = []
    for k, row in enumerate(rows[1:]):
        if len(row) != len(header):
            raise InputError(f"this row has {len(row)} cells but the header {len(header)}",
                             Location(label, k + 2))
        try:
            data[k] = [float(x) for x in row[:width]]
        except ValueError as exc:
            raise InputError(f"a cell is not a number ({exc})", Location(label, k + 2)) from None
        errors.append(row[-1] if has_error else "")
    return header, data, errors


def check_save_folder(folder: str) -> str:
    """``--save-trajectories DIR``: made if missing (its parent must exist), a folder this
    process can write in (a file is made and removed there, before any run: issue 32), as an
    absolute path, so that workers elsewhere do not read it against their own working folder
    (issue 29)."""
    path = Path(os.path.abspath(folder))
    if folder.endswith(".parquet") and not have_parquet():
        raise InputError(PARQUET_MISSING, Location("--save-trajectories"))
    if path.exists() and not path.is_dir():
        raise InputError(f"{folder!r} is not a folder; give a folder for the runs' files",
                         Location("--save-trajectories"))
    try:
        path.mkdir(exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot make the folder {folder!r}: {exc.strerror or exc}",
                         Location("--save-trajectories")) from None
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise InputError(f"cannot write in the folder {folder!r}: {exc.strerror or exc}; give "
                         "a folder you can write in", Location("--save-trajectories")) from None
    return str(path)


def trajectory_columns(spec: Any) -> list[str]:
    """The CSV columns a run of ``spec`` writes (what a summary may use)."""
    return naming.layout(spec.coordinates, [c.name for c in spec.constraints],
                         [c.kind for c in spec.constraints])
