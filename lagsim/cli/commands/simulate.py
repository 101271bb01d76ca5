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
@force_option
def command(file: str, output: str, partial: str | None, force: bool,
            overrides: dict[str, float], initial: dict[str, float], **kwargs: Any) -> None:
    """Integrate FILE and write the trajectory as CSV.

    Columns: t, the coordinates, their velocities (<q>_dot), the multipliers (lambda_<c>), the
    constraint residuals (residual_<c>, and residual_<c>_dot for holonomic constraints) and the
    energy h = q_dot . dL/dq_dot - L, which need not be conserved when the system depends on time
    or has forces.
    """
    from lagsim.output.io import check_output, write_csv

    read = inputs(force, (file, "FILE"))
    target = check_output(output, inputs=read)
    _, _, trajectory = simulate_file(file, flags(kwargs), overrides, initial, partial, target,
                                     read)
    write_csv(trajectory.columns, trajectory.as_array(), target)
