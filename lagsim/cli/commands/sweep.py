"""``lagsim sweep``: many runs of one system, on this machine's cores or a Dask cluster
(issue 12; :mod:`lagsim.sweep.core`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

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


@click.command("sweep", epilog=example(
    "lagsim sweep pendulum --grid theta=0.1:3:50 --stop-when theta_dot --summary "
    "'period=2*final(t)' -o period.csv"))
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

    read = inputs(force, (file, "FILE"), (table_file, "--table"))
    target = check_output(output, formats=sw.FORMATS, inputs=read)
    fmt = target.format(sw.FORMATS)
    if fmt == "parquet" and not sw.have_parquet():
        raise InputError(sw.PARQUET_MISSING, Location("-o"))
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
