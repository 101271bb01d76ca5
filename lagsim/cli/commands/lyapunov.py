"""``lagsim lyapunov``: the Lyapunov spectrum of a run, through
:meth:`lagsim.api.System.lyapunov` (the computation: :mod:`lagsim.analysis.lyapunov`)."""

from __future__ import annotations

import click

from lagsim import api
from lagsim.cli.files import inputs
from lagsim.cli.options import (
    example,
    file_argument,
    force_option,
    report_format_option,
    set_option,
)
from lagsim.cli.reports import report_out


@click.command("lyapunov", epilog=example("lagsim lyapunov driven_damped_pendulum --t-end 2000 "
                                          "--transient 100"))
@file_argument
@click.option("--t-end", "t_end", type=float, default=1000.0, show_default=True, metavar="T",
              help="End of the run; the exponents average over [--transient, T].")
@click.option("--transient", type=float, default=0.0, show_default=True, metavar="T",
              help="Time the trajectory runs alone first, to settle on its attractor.")
@click.option("--renormalize", type=float, default=1.0, show_default=True, metavar="DT",
              help="Time between two QR re-orthonormalizations of the tangent vectors.")
@click.option("--largest", is_flag=True, help="Only the largest exponent (one tangent vector).")
@click.option("--trace", metavar="FILE.csv", default=None,
              help="Write the running estimate, one row per renormalization, as CSV "
                   "(t, lambda_1, ...), to judge convergence.")
@click.option("--starts", type=click.IntRange(1), default=1, show_default=True,
              metavar="N", help="Runs from N initial states (the file's and N−1 moved slightly); "
                                "prints the spread of each exponent over them.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True,
              help="Seed of the --starts perturbations.")
@click.option("--perturbation", type=float, default=1e-6, show_default=True, metavar="EPS",
              help="Size of the --starts perturbations: EPS·(1 + |y_i|) times a normal deviate.")
@report_format_option
@set_option
@force_option
def command(file: str, t_end: float, transient: float, renormalize: float, largest: bool,
            trace: str | None, starts: int, seed: int, perturbation: float, fmt: str,
            overrides: dict[str, float], force: bool) -> None:
    """Print the Lyapunov exponents of FILE's motion from its initial state (tangent dynamics
    with periodic QR).

    The tangent vectors follow δẏ = J δy with J the analytic Jacobian, re-orthonormalized by QR
    every --renormalize (Benettin et al. 1980); λ_i is the mean of log|R_ii|. A constrained
    system's vectors stay in the tangent space of its constraint manifold, which gives its
    2n − 2m_h − m_v exponents (m_h holonomic, m_v velocity constraints). The spread of each
    exponent over the last quarter of the run is printed beside it, and over --starts runs.
    """
    target = None
    if trace is not None:
        from lagsim.output.io import check_output

        target = check_output(trace, "--trace", inputs=inputs(force, (file, "FILE")))
    report = api.open_system(file, overrides).lyapunov(t_end, transient, renormalize, largest,
                                                       starts, seed, perturbation)
    if target is not None:
        from lagsim.output.io import write_csv

        columns, rows = report.trace_columns()
        write_csv(columns, rows, target)
    report_out(report, fmt)
