"""``lagsim action``: the action S = ∫ L dt along a path, a run, or the stationary path
(:mod:`lagsim.analysis.action`)."""

from __future__ import annotations

import click

from lagsim import api
from lagsim.cli.exits import warn
from lagsim.cli.files import inputs
from lagsim.cli.options import (
    example,
    force_option,
    report_format_option,
    required_file_argument,
    set_option,
)
from lagsim.cli.reports import report_out
from lagsim.errors import InputError, Location


@click.command("action", epilog=example(
    "lagsim action seed_10_2.yaml --path \"q1=2, q2=t\" --t-start 0 --t-end 1",
    "lagsim simulate pendulum | lagsim action pendulum --csv -",
    "lagsim action free_mass_cartesian --stationary --from \"x=0, y=0\" --to \"x=1, y=0\" "
    "--t-end 1"))
@required_file_argument
@click.option("--path", "path", metavar="\"Q=EXPR, ...\"",
              help="A path q(t): every coordinate as an expression in t and the parameters.")
@click.option("--csv", "csv", metavar="CSV|-", help="A simulated trajectory of FILE (- for "
              "standard input): S along its samples.")
@click.option("--stationary", is_flag=True, help="Solve δS = 0 between --from and --to: the "
              "path as CSV (with its running action), S on stderr.")
@click.option("--from", "start", metavar="\"Q=VALUE, ...\"", help="Start of --stationary.")
@click.option("--to", "end", metavar="\"Q=VALUE, ...\"", help="End of --stationary.")
@click.option("--t-start", type=float, default=0.0, show_default=True)
@click.option("--t-end", type=float, default=1.0, show_default=True)
@click.option("--samples", type=click.IntRange(min=2, max=1_000_000), default=201,
              show_default=True, help="Rows of the --stationary path.")
@click.option("-o", "--output", default="-", metavar="FILE",
              help="CSV destination of --stationary, - for stdout.")
@report_format_option
@set_option
@force_option
def command(file: str, path: str | None, csv: str | None, stationary: bool, start: str | None,
            end: str | None, t_start: float, t_end: float, samples: int, output: str, fmt: str,
            overrides: dict[str, float], force: bool) -> None:
    """The action S = ∫ L dt of FILE along a path, a simulated run, or the stationary path.

    Along --path, exactly when SymPy integrates it (printed as a fraction and a float),
    numerically otherwise; along --csv by corrected trapezoids on the samples, with an error
    estimate; with --stationary the Euler–Lagrange boundary-value problem (scipy's solve_bvp):
    S on stderr first, then the path as CSV (stdout, or -o FILE).
    """
    chosen = [name for name, given in (("--path", path), ("--csv", csv),
                                       ("--stationary", stationary)) if given]
    if len(chosen) != 1:
        raise InputError("give one of --path, --csv and --stationary"
                         + (f" (not {' and '.join(chosen)})" if chosen else ""),
                         Location(chosen[1] if len(chosen) > 1 else "--path"))
    if file == "-" and csv == "-":
        raise InputError("FILE and --csv cannot both be standard input", Location("--csv"))
    system = api.open_system(file, overrides)
    spec, model = system.spec, system.model
    if path is not None:
        from lagsim.analysis.action import path_action

        report_out(path_action(spec, model, path, t_start, t_end), fmt)
        return
    if csv is not None:
        from lagsim.analysis.action import ActionReport, table_action
        from lagsim.output.io import read_csv

        table = read_csv(csv)
        running = table_action(model, table)
        t = table.time
        report_out(ActionReport(model.name, float(t[0]), float(t[-1]),
                                float(running.values[-1]), "",
                                f"corrected trapezoids on {len(t)} samples", running.error),
                   fmt)
        return
    from lagsim.analysis.action import stationary_path
    from lagsim.analysis.rest import parse_point
    from lagsim.output.io import check_output, write_csv

    if start is None or end is None:
        option = "--from" if start is None else "--to"
        raise InputError(f"--stationary needs {option} \"Q=VALUE, ...\"", Location(option))
    target = check_output(output, inputs=inputs(force, (file, "FILE")))
    found = stationary_path(spec, model, parse_point(start, spec, spec.coordinates, "--from"),
                            parse_point(end, spec, spec.coordinates, "--to"), t_start, t_end,
                            samples)
    warn(f"stationary path: S = {found.S:.15g} (quadrature error estimate {found.error:.1e}; "
         f"solve_bvp residual {found.residual:.1e})")
    write_csv(found.columns(), found.as_array(), target)
