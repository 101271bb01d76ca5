"""``lagsim simulate``: one run written as CSV (the run: :func:`lagsim.cli.runs.simulate_file`,
which is :func:`lagsim.api.open_system` and :func:`lagsim.api.run`)."""

from __future__ import annotations

from typing import Any

import click

from lagsim.cli.files import inputs
from lagsim.cli.options import example, file_argument, flags, force_option, simulate_options
from lagsim.cli.runs import simulate_file


@click.command("simulate",
               epilog=example("lagsim simulate pendulum --t-end 10 | lagsim plot -o pendulum.png"))
@file_argument
@simulate_options
@click.option("-o", "--output", default="-", metavar="FILE",
              help="CSV destination, - for stdout. A file is replaced atomically (an "
                   "interrupted run keeps the old one); a device or FIFO is written in place.")
@click.option("--partial", is_flag=False, flag_value="", default=None, metavar="[PATH]",
              help="When the run fails, keep the rows up to the failure (and the last state "
                   "reached) in PATH [default PATH: FILE.partial.csv beside -o FILE, else "
                   "<system name>.partial.csv].")
@click.option("--events", default=None, metavar="FILE",
              help="Also write one row per impact of a system with unilateral constraints, "
                   "per contact that took an impulse: t, contact, impulse, tangential_impulse, "
                   "gap_rate_before/after, <q>_dot_before/after, energy_loss. Replaced "
                   "atomically after the run succeeds; a failed run writes nothing there.")
@force_option
def command(file: str, output: str, partial: str | None, events: str | None, force: bool,
            overrides: dict[str, float], initial: dict[str, float], **kwargs: Any) -> None:
    """Integrate FILE and write the trajectory as CSV.

    Columns: t, the coordinates, their velocities (<q>_dot), the multipliers (lambda_<c>), the
    constraint residuals (residual_<c>, and residual_<c>_dot for holonomic constraints) and the
    energy h = q_dot . dL/dq_dot - L, which need not be conserved when the system depends on time
    or has forces.
    """
    from lagsim.errors import InputError, Location
    from lagsim.output.io import check_output, write_csv, write_rows

    read = inputs(force, (file, "FILE"))
    target = check_output(output, inputs=read)
    table = check_output(events, "--events", inputs=read) if events is not None else None
    if table is not None and (table.kind == target.kind == "stdout" or (
            table.kind == target.kind == "file" and table.path.resolve() == target.path.resolve())):
        raise InputError("--events names the place of -o; give the impacts a file of their own",
                         Location("--events"))
    spec, _, trajectory = simulate_file(file, flags(kwargs), overrides, initial, partial, target,
                                        read)
    if table is not None and not spec.contacts:
        raise InputError(f"system '{spec.name}' has no unilateral constraints, so "
                         "no impacts", Location("--events"))
    write_csv(trajectory.columns, trajectory.as_array(), target)
    if table is not None:
        write_rows(trajectory.event_columns(), trajectory.event_rows(), table)
