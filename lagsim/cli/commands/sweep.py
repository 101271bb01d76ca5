"""``lagsim sweep``: many runs of one system, on this machine's cores or a Dask cluster
(issue 12; :mod:`lagsim.sweep.core`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from lagsim import naming
from lagsim.cli.exits import warn
from lagsim.cli.files import inputs
from lagsim.cli.options import (
    example,
    flags,
    force_option,
    required_file_argument,
    simulate_options,
)
from lagsim.cli.progress import SweepProgress
from lagsim.errors import DEBUG, InputError, IntegrationError, Location


def _fit_options(func: Any) -> Any:
    """The options of a sweep of fits: ``lagsim fit``'s, the data files instead of the swept
    values (the fit options' flags from :data:`lagsim.spec.options.FIT_OPTIONS`; their seed is
    the sweep's --seed)."""
    from lagsim.spec.options import FIT_OPTIONS

    for row in reversed([r for r in FIT_OPTIONS if r.name != "seed"]):
        shown = "" if row.default is None else f" [default: {row.default}]"
        func = click.option(row.flag, f"fit_{row.name}", type=str, default=None,
                            metavar=row.metavar, help=f"With --fit: {row.help}{shown}")(func)
    for decorator in reversed((
            click.option("--fit", "fit_names", metavar="NAMES",
                         help="Fit these parameters and initial values to each --data file "
                              "(as lagsim fit): one row per file with the estimates and their "
                              "standard errors."),
            click.option("--data", "data_patterns", multiple=True, metavar="GLOB",
                         help="With --fit: the data files, e.g. 'runs/*.csv' (repeatable)."),
            click.option("--observe", "fit_observe", metavar="COLUMNS",
                         help="With --fit: the data columns to fit [default: all but t]."),
            click.option("--bounds", "fit_bounds", multiple=True, metavar="NAME=LO:HI",
                         help="With --fit: bounds of a fitted value (repeatable)."),
            click.option("--max-runs", "fit_max_runs", type=click.IntRange(1, 100_000),
                         default=None, metavar="N",
                         help="With --fit: runs each start of a fit may make [default: 200]."))):
        func = decorator(func)
    return func


@click.command("sweep", epilog=example(
    "lagsim sweep pendulum --grid theta=0.1:3:50 --stop-when theta_dot --summary "
    "'period=2*final(t)' -o period.csv",
    "lagsim sweep driven_damped_pendulum --fit c,F0 --data 'tracks/*.csv' -o fits.csv"))
@required_file_argument
@click.option("--grid", "grids", multiple=True, metavar="NAME=START:STOP:COUNT",
              help="COUNT equally spaced values of a parameter or initial value (ends included).")
@click.option("--values", "value_lists", multiple=True, metavar="NAME=V1,V2,...",
              help="The listed values of a parameter or initial value.")
@click.option("--random", "randoms", multiple=True, metavar="NAME=LOW:HIGH",
              help="--runs uniform draws in [LOW, HIGH), reproducible from --seed.")
@click.option("--runs", type=int, default=None, metavar="N", help="How many --random draws.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --random draws.")
@click.option("--table", "table_file", metavar="FILE.csv",
              help="A CSV of runs: a header of names, one run per row.")
@click.option("--summary", "summaries", multiple=True, metavar="[NAME=]EXPR",
              help="A column of the table: an expression in the run's CSV columns reduced with "
                   "max, min, mean, final or first, e.g. 'amp=max(abs(theta))'.")
@click.option("--scheduler", metavar="ADDRESS",
              help="A Dask scheduler (tcp://HOST:8786, or tls://HOST:PORT with Dask's "
                   "distributed.comm.tls settings), or 'synchronous' for this process alone "
                   "[default: --workers processes of this machine, which open no port].")
@click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker processes on this machine [default: one per core].")
@click.option("--save-trajectories", "save", metavar="DIR",
              help="Write each run's CSV as DIR/run_<index>.csv (DIR ending .parquet: one "
                   "Parquet file per run, a dataset).")
@_fit_options
@simulate_options
@click.option("-o", "--output", default="-", metavar="FILE",
              help="The table: CSV (- for stdout), or Parquet when FILE ends .parquet.")
@force_option
def command(file: str, grids: tuple[str, ...], value_lists: tuple[str, ...],
            randoms: tuple[str, ...], runs: int | None, seed: int, table_file: str | None,
            summaries: tuple[str, ...], scheduler: str | None, workers: int | None,
            save: str | None, output: str, force: bool, overrides: dict[str, float],
            initial: dict[str, float], **kwargs: Any) -> None:
    """Simulate FILE once for every combination of the swept values, on this machine's cores
    or a Dask cluster, and write one row per run: the values, the final state, the largest
    constraint residuals, the energy drift (or, when h is not conserved, its change), the stop
    time of --stop-when and each --summary.

    Every run is `lagsim simulate` with its values (bit for bit). A run that fails is recorded
    in the error column and the sweep goes on; then the exit status is 1.
    """
    from lagsim.output.io import check_output
    from lagsim.spec.system import read_source
    from lagsim.sweep import core as sw
    from lagsim.sweep.setup import prepare

    fit_given = {k: kwargs.pop(k) for k in list(kwargs) if k.startswith(("fit_", "data_"))}
    read = inputs(force, (file, "FILE"), (table_file, "--table"))
    if fit_given["fit_names"] is not None:
        read = (*read, *inputs(force, *((p, "--data") for p in fit_given["data_patterns"])))
    target = check_output(output, formats=sw.FORMATS, inputs=read)
    fmt = target.format(sw.FORMATS)
    if fmt == "parquet" and not sw.have_parquet():
        raise InputError(sw.PARQUET_MISSING, Location("-o"))
    if fit_given["fit_names"] is not None or fit_given["data_patterns"]:
        swept = grids or value_lists or randoms or table_file or summaries or save
        _fit_sweep(file, fit_given, swept, seed, scheduler, workers, target, fmt, overrides,
                   initial, flags(kwargs))
        return
    unused = [f"--{k[4:].replace('_', '-')}" for k, v in fit_given.items()
              if k.startswith("fit_") and v not in (None, ())]
    if unused:
        raise InputError(f"{unused[0]} belongs to a sweep of fits; add --fit and --data",
                         Location(unused[0]))
    if runs is not None and not randoms:
        raise InputError("--runs counts the --random draws; give --random NAME=LOW:HIGH too",
                         Location("--runs"))
    if scheduler is not None and workers is not None:
        alone = scheduler in sw.LOCAL_SCHEDULERS
        raise InputError(f"--workers sizes the local cluster; --scheduler {scheduler} "
                         f"{'runs in this process alone' if alone else 'has its own workers'}",
                         Location("--workers"))
    if scheduler is not None and scheduler not in sw.LOCAL_SCHEDULERS:
        sw.scheduler_address(scheduler)
    text, label, stem = read_source(file)

    def axes() -> list[sw.Axis]:
        made = [*(sw.grid_axis(g) for g in grids), *(sw.values_axis(v) for v in value_lists)]
        if randoms or runs is not None:
            made.append(sw.random_axis(randoms, runs, seed))
        if table_file is not None:
            made.append(sw.table_axis(table_file))
        return made

    prepared = prepare(text, label, stem, overrides, initial, flags(kwargs), axes, summaries)
    plan = prepared.plan
    if save is not None:
        save = sw.check_save_folder(save)
        _check_run_files(save, len(plan), read)
    job = replace(prepared.job, save=save).keyed()
    bar = SweepProgress(len(plan))
    try:
        rows = sw.execute(job, plan, scheduler, workers, bar, quiet=not DEBUG.get())
    finally:
        bar.close()
    notes = [(i, r.notes) for i, r in enumerate(rows) if r.notes]
    if notes:
        for note in notes[0][1]:
            warn(f"run {notes[0][0]}: {note}")
        if len(notes) > 1:
            warn(f"({len(notes) - 1} more runs had notes like these)")
    header, data, errors = prepared.table(job, rows)
    sw.write_table(header, data, errors, target, fmt)
    failed = [(i, e) for i, e in enumerate(errors) if e]
    if failed:
        first, why = failed[0]
        raise IntegrationError(f"{len(failed)} of {len(plan)} runs failed; their rows say why "
                               f"in the error column (run {first}: {why})")


def _check_run_files(folder: str, runs: int, read: Sequence[tuple[str, str]]) -> None:
    """Before any run: the folder of --save-trajectories takes a file (the name of run 0 is
    probed), and no input is one of the run files it will get."""
    from lagsim.output.io import check_output
    from lagsim.sweep import core as sw

    check_output(sw.run_file(folder, 0, runs), "--save-trajectories")
    for path, what in read:
        found = re.fullmatch(r"run_([0-9]+)\.(?:csv|parquet)", Path(path).name)
        if found is not None and int(found[1]) < runs:
            check_output(sw.run_file(folder, int(found[1]), runs), "--save-trajectories",
                         inputs=((path, what),))


def _fit_sweep(file: str, given: dict[str, Any], swept: Any, seed: int, scheduler: str | None,
               workers: int | None, target: Any, fmt: str, overrides: dict[str, float],
               initial: dict[str, float], run_flags: dict[str, Any]) -> None:
    """``--fit NAMES --data GLOB``: one fit per data file on the sweep's engine, one row each
    (:mod:`lagsim.sweep.fits`)."""
    import numpy as np

    from lagsim.analysis.fit import parse_bounds
    from lagsim.spec.options import BY_NAME
    from lagsim.spec.system import parse_spec, read_source
    from lagsim.sweep import core as sw
    from lagsim.sweep import fits

    if given["fit_names"] is None:
        raise InputError("--data gives the files of a sweep of fits; add --fit NAMES",
                         Location("--data"))
    if not given["data_patterns"]:
        raise InputError("--fit in a sweep fits each --data file; add --data 'runs/*.csv'",
                         Location("--fit"))
    if swept:
        raise InputError("a sweep of fits takes its runs from the --data files; drop --grid, "
                         "--values, --random, --table, --summary and --save-trajectories",
                         Location("--fit"))
    refused = [k for k, v in run_flags.items() if v is not None and not BY_NAME[k].fit]
    if refused:
        raise InputError(f"{BY_NAME[refused[0]].flag} is not an option of a fit (the data set "
                         "the times)", Location(BY_NAME[refused[0]].flag))
    names = tuple(n.strip() for n in given["fit_names"].split(","))
    if not all(names):
        raise InputError(f"--fit must name parameters or initial values, got "
                         f"{given['fit_names']!r}", Location("--fit"))
    bounds = parse_bounds(given["fit_bounds"], names)
    observe = (tuple(n.strip() for n in given["fit_observe"].split(","))
               if given["fit_observe"] else None)
    options = {k[4:]: v for k, v in given.items()
               if k in ("fit_weights", "fit_sigma", "fit_starts") and v is not None}
    options["seed"] = seed
    task = fits.FitTask(names, fits.data_files(given["data_patterns"]), observe,
                        tuple((n, lo, hi) for n, (lo, hi) in bounds.items()),
                        tuple(sorted(options.items())), given["fit_max_runs"] or 200)
    text, label, stem = read_source(file)
    parse_spec(text, label, stem, overrides, initial)
    job = sw.Job(text, label, stem, run_flags, dict(overrides), dict(initial), (naming.DATA,),
                 runs=len(task.files), fit=task).keyed()
    plan = sw.Plan((naming.DATA,), np.arange(len(task.files), dtype=float).reshape(-1, 1))
    bar = SweepProgress(len(plan))
    try:
        rows = sw.execute(job, plan, scheduler, workers, bar, quiet=not DEBUG.get())
    finally:
        bar.close()
    numbers = np.array([r.numbers for r in rows], dtype=float).reshape(len(rows), -1)
    errors = [r.error for r in rows]
    fits.write_fit_table(task, numbers, errors, target, fmt)
    failed = [(i, e) for i, e in enumerate(errors) if e]
    if failed:
        first, why = failed[0]
        raise IntegrationError(f"{len(failed)} of {len(plan)} fits failed; their rows say why "
                               f"in the error column (run {first}: {why})")
