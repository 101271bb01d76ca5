"""``lagsim check``: what a system is, through :meth:`lagsim.api.System.check`."""

from __future__ import annotations

import click

from lagsim import api
from lagsim.cli.options import example, file_argument, report_format_option, set_option


@click.command("check", epilog=example("lagsim check skate --format json"))
@file_argument
@report_format_option
@set_option
def command(file: str, fmt: str, overrides: dict[str, float]) -> None:
    """Report what FILE is: coordinates, constraints, rank and degrees of freedom, redundant
    constraints, whether each velocity constraint is holonomic (Frobenius' test) and what is
    conserved (energy, cyclic and Noether momenta)."""
    report = api.open_system(file, overrides).check()
    click.echo(report.to_json() if fmt == "json" else report.to_text(), nl=False)
