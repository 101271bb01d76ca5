"""``lagsim modes``: the small oscillations about an equilibrium, through
:meth:`lagsim.api.System.modes`, and their shapes drawn with ``--plot``."""

from __future__ import annotations

import click

from lagsim import api
from lagsim.cli.files import plot_target
from lagsim.cli.options import (
    example,
    file_argument,
    force_option,
    plot_options,
    report_format_option,
    set_option,
)
from lagsim.cli.reports import report_out
from lagsim.errors import InputError, Location


@click.command("modes", epilog=example("lagsim modes double_pendulum --at \"theta1=0, "
                                       "theta2=0\" --plot -o modes.png"))
@file_argument
@click.option("--at", "at", default="equilibrium", show_default=True, metavar="POINT",
              help="'equilibrium' (the stable one nearest the initial state, else the "
                   "nearest; the report says which) or a point such as "
                   "\"theta1=0, theta2=pi\" (other coordinates at their initial values), which "
                   "must be an equilibrium to 1e-9.")
@click.option("--steady", "steady", default=None, metavar="POINT",
              help="Linearize about a steady motion (relative equilibrium) such as "
                   "\"theta=0.5, psi_dot=30\": coordinates' values and <coordinate>_dot rates "
                   "of ignorable coordinates, over the file's steady:; values and rates not "
                   "given are solved for.")
@report_format_option
@set_option
@plot_options("Draw each mode shape (systems with masses) to -o FILE.")
@force_option
def command(file: str, at: str, steady: str | None, fmt: str, overrides: dict[str, float],
            draw: bool, output: str | None, force: bool) -> None:
    """Print the small oscillations of FILE about an equilibrium or a steady motion.

    M0 δq̈ + D δq̇ + K δq = 0 on the tangent space of the constraints: natural frequencies
    (rad/s and Hz), damping ratios, stability and mode shapes in the file's coordinates.
    About a steady motion (--steady, or the file's steady:): the eigenvalues of the reduced
    state matrix and the modes they make.
    """
    target = plot_target(draw, output, force, (file, "FILE"))
    system = api.open_system(file, overrides)
    report = system.modes(at, steady)
    if target is not None and not hasattr(report, "M0"):
        raise InputError("--plot draws modes about rest; about a steady motion the report "
                         "gives the shapes δξ in numbers", Location("--plot"))
    if target is not None:
        from lagsim.viz.figures import save_figure
        from lagsim.viz.mode_figures import mode_figure

        save_figure(mode_figure(system.spec, system.model, report), target)
    report_out(report, fmt)
