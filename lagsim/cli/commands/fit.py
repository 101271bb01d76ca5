"""``lagsim fit``: parameters and initial values fitted to measured columns, through
:func:`lagsim.api.fit_system` (the computation: :mod:`lagsim.analysis.fit`), the data and the
fitted model drawn with ``--plot`` (:mod:`lagsim.viz.fit_figures`)."""

from __future__ import annotations

from typing import Any

import click

from lagsim import api
from lagsim.cli.exits import warn
from lagsim.cli.files import plot_target, stdin_hint
from lagsim.cli.options import (
    assignments,
    example,
    file_argument,
    force_option,
    plot_options,
    report_format_option,
    set_option,
)
from lagsim.cli.reports import report_out
from lagsim.spec.options import FIT_OPTIONS, OPTIONS


def _run_options(func: Any) -> Any:
    """The flags of the options of a run that ``fit`` takes (:attr:`Option.fit`), validated by
    the table as ``simulate``'s are."""
    for row in reversed([row for row in OPTIONS if row.fit]):
        if row.switch:
            option = click.option(f"{row.flag}/--no-{row.flag[2:]}", row.name, default=None,
                                  help=row.help_text())
        else:
            option = click.option(row.flag, row.name, type=str, default=None,
                                  metavar=row.metavar, help=row.help_text())
        func = option(func)
    return func


def _fit_options(func: Any) -> Any:
    """The flags of :data:`lagsim.spec.options.FIT_OPTIONS` (parsed by their rows in
    :func:`lagsim.analysis.fit.fit_settings`)."""
    for row in reversed(FIT_OPTIONS):
        shown = "" if row.default is None else f" [default: {row.default}]"
        func = click.option(row.flag, f"fit_{row.name}", type=str, default=None,
                            metavar=row.metavar, help=row.help + shown)(func)
    return func


@click.command("fit", epilog=example(
    "lagsim fit driven_damped_pendulum track.csv --fit c,F0 --observe theta",
    "lagsim fit pendulum track.csv --fit l,g --bounds l=0.1:5 --format json",
    "lagsim fit pendulum track.csv --fit l --bounds l=0.2:3 --starts 8 --plot -o fit.png"))
@file_argument
@click.argument("data", metavar="DATA.csv")
@click.option("--fit", "names", required=True, metavar="NAMES",
              help="The parameters and initial values (theta, theta_dot) to fit, e.g. l,c.")
@click.option("--observe", default=None, metavar="COLUMNS",
              help="The data columns to fit [default: every column but t].")
@click.option("--bounds", multiple=True, metavar="NAME=LO:HI",
              help="Bounds of a fitted value (repeatable; an empty end is no bound).")
@click.option("--max-runs", default=200, show_default=True, type=click.IntRange(1, 100_000),
              help="Runs each start may make before it gives up (exit 1, with the best "
                   "point).")
@_fit_options
@report_format_option
@set_option
@click.option("--init", "initial", multiple=True, metavar="NAME=VALUE",
              callback=assignments("--init"),
              help="Override an initial value (the start of a fitted one).")
@plot_options("Draw the data and the fitted model, one panel per observed column, to -o FILE.")
@force_option
@_run_options
def command(file: str, data: str, names: str, observe: str | None, bounds: tuple[str, ...],
            max_runs: int, fmt: str, overrides: dict[str, float], initial: dict[str, float],
            draw: bool, output: str | None, force: bool, **flags: Any) -> None:
    """Fit parameters and initial values of FILE to the columns of DATA.csv.

    DATA.csv has a time column t (increasing, not necessarily uniform) and any of the model's
    coordinates, velocities and multipliers. Least squares (scipy's least_squares) with the
    exact sensitivities of simulate --sensitivities as the Jacobian; prints the estimates with
    standard errors, the residual variance, the correlation matrix and what the data
    determine (rank and condition of JᵀJ, and the combinations fixed where single values are
    not). Exit 1 when the fit does not converge, with the best point so far.
    """
    from lagsim.analysis.fit import parse_bounds

    stdin_hint(file, "YAML", "FILE")
    target = plot_target(draw, output, force, (file, "FILE"), (data, "DATA.csv"))
    fit_raw = {k[4:]: flags.pop(k) for k in list(flags) if k.startswith("fit_")}
    system = api.open_system(file, overrides, initial)
    fitted = [n.strip() for n in names.split(",")]
    given = {k: v for k, v in flags.items() if v is not None}
    report = api.fit_system(system, data, names, observe, parse_bounds(bounds, fitted), given,
                            keywords=False, report=warn, max_runs=max_runs,
                            fit_options=fit_raw)
    if target is not None:
        from lagsim.viz.figures import save_figure
        from lagsim.viz.fit_figures import fit_figure

        save_figure(fit_figure(report.data, api.fitted_run(system, report, given)), target)
    report_out(report, fmt)
