"""``lagsim sweep FILE --fit NAMES --data 'runs/*.csv'``: one fit per data file on the sweep's
engine (issue 26, "``sweep`` can fit many data files on Dask").

Each data file is one run of the sweep (:mod:`lagsim.sweep.core`: the same chunks on this
machine's worker processes, a Dask cluster or Dask's synchronous scheduler, the model compiled
once per process): the fit of ``lagsim fit FILE DATA.csv --fit NAMES`` with the same options
(:func:`lagsim.analysis.fit.fit_spec`, each of its runs through the worker's session as a sweep
run is). The table has one row per file: ``run``, ``data`` (the file), the estimates, their
standard errors ``se_<name>`` (NaN where the data do not determine a value), the residual
variance (χ²/(N − p) with ``--sigma``), the rank and condition of JᵀJ, the fit's runs, and
``error``: a file whose fit fails (bad data, no convergence) says why there and the sweep goes
on (exit 1 at the end, as for failed runs).
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Mapping, Sequence
from glob import glob
from typing import Any

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, Location
from lagsim.records import record

SE_PREFIX = "se_"
"""The column of a value's standard error: ``se_<name>``."""
STATISTICS = ("residual_variance", "rank", "condition", "fit_runs")
"""The columns after the estimates and standard errors."""


@record
class FitTask:
    """What a worker needs to fit file ``files[i]``: the fitted names, the files (absolute
    paths), ``--observe``, ``--bounds`` as (name, low, high), the raw values of the fit options
    (:data:`lagsim.spec.options.FIT_OPTIONS`) and ``--max-runs``."""

    names: tuple[str, ...]
    files: tuple[str, ...]
    observe: tuple[str, ...] | None
    bounds: tuple[tuple[str, float, float], ...]
    options: tuple[tuple[str, Any], ...]
    max_runs: int = 200


def data_files(patterns: Sequence[str]) -> tuple[str, ...]:
    """The files ``--data`` names: each pattern's matches (a glob, sorted) or the file itself,
    as absolute paths (a worker elsewhere reads them by that path), in order, each once."""
    out: list[str] = []
    for pattern in patterns:
        found = sorted(glob(pattern)) if any(c in pattern for c in "*?[") else (
            [pattern] if os.path.isfile(pattern) else [])
        if not found:
            raise InputError(f"--data {pattern!r} matches no file", Location("--data"))
        out += [os.path.abspath(f) for f in found if os.path.abspath(f) not in out]
    return tuple(out)


def fit_columns(task: FitTask) -> list[str]:
    """The fit table's header."""
    return [naming.RUN, naming.DATA, *task.names, *(SE_PREFIX + n for n in task.names),
            *STATISTICS, naming.ERROR]


def fit_numbers(session: Any, task: FitTask, flags: Mapping[str, Any], index: int,
                notes: list[str]) -> tuple[float, ...]:
    """The estimates, standard errors and statistics of the fit of file ``index`` with the
    worker's ``session`` (:class:`lagsim.sweep.core.Session`: its spec, model and compiled
    system; each run of the fit is a sweep run with the fit's values)."""
    from lagsim.analysis.fit import fit_spec
    from lagsim.analysis.lqr import feedback
    from lagsim.run.session import run_spec
    from lagsim.spec.options import FLAGS

    def runner(params: Mapping[str, float], inits: Mapping[str, float],
               options: Mapping[str, Any], times: np.ndarray, say: Any) -> Any:
        spec = session.run_spec({**params, **inits})
        return run_spec(spec, lambda: (session.model, session.numeric), options, FLAGS,
                        report=say, controller=feedback, times=times)[0]

    report = fit_spec(session.spec, task.files[index], task.names, task.observe,
                      {n: (lo, hi) for n, lo, hi in task.bounds}, flags, FLAGS, runner,
                      report=notes.append, max_runs=task.max_runs,
                      fit_options=dict(task.options))
    errors = [math.nan if e is None else e for e in report.standard_errors]
    return (*report.estimates, *errors, report.residual_variance, float(report.rank),
            report.condition, float(report.runs))


def width(task: FitTask) -> int:
    """How many numbers a fit's row has (:func:`fit_numbers`)."""
    return 2 * len(task.names) + len(STATISTICS)


def write_fit_table(task: FitTask, numbers: np.ndarray, errors: Sequence[str], target: Any,
                    fmt: str) -> None:
    """The fit table as CSV (each number as ``repr`` of its float; ``run``, ``rank`` and
    ``fit_runs`` whole)
    or Parquet (``data`` and ``error`` text), through :func:`lagsim.output.io.open_output`."""
    from lagsim.output.io import open_output

    header = fit_columns(task)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        arrays = [pa.array(np.arange(len(task.files)), type=pa.int64()),
                  pa.array(list(task.files), type=pa.string()),
                  *(pa.array(numbers[:, k], type=pa.float64())
                    for k in range(numbers.shape[1])),
                  pa.array(list(errors), type=pa.string())]
        with open_output(target, binary=True) as out:
            pq.write_table(pa.table(arrays, names=header), out)
        return
    whole = {header.index(c) - 2 for c in ("rank", "fit_runs")}
    with open_output(target) as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        for i, (row, error) in enumerate(zip(numbers.tolist(), errors)):
            cells = [str(int(x)) if k in whole and math.isfinite(x) else repr(x)
                     for k, x in enumerate(row)]
            writer.writerow([i, task.files[i], *cells, error])
