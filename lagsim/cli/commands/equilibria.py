"""``lagsim equilibria``: the rest states, through :meth:`lagsim.api.System.equilibria`."""

from __future__ import annotations

import click

from lagsim import api
from lagsim.cli.options import example, file_argument, report_format_option, set_option
from lagsim.cli.reports import report_out


@click.command("equilibria", epilog=example("lagsim equilibria double_pendulum --format json"))
@file_argument
@report_format_option
@set_option
def command(file: str, fmt: str, overrides: dict[str, float]) -> None:
    """List the equilibria of FILE: rest states with F(q, 0) + Aᵀλ = 0 and the constraints.

    Found by Newton's method from the initial state, a seeded spread of starts and, from each
    equilibrium found, its images (an angle turned by π, a sign flipped), steps along each
    coordinate and midpoints to the others, until they give nothing new; deduplicated (angles
    modulo 2π), nearest to the initial state first, each with its residual, multipliers and
    stability from the linearization. A search, not a proof: an equilibrium that no start
    leads to is missed, and the output says when the search was cut short. A system that
    depends on time has none; one whose time dependence sits in holonomic constraints (a hoop
    turned at a prescribed rate) is treated through its reduced Lagrangian when that is
    autonomous.
    """
    report_out(api.open_system(file, overrides).equilibria(), fmt)
