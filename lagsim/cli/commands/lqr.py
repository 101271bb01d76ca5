"""``lagsim lqr``: the linear-quadratic regulator of a file's inputs about an equilibrium,
through :meth:`lagsim.api.System.lqr` (the design: :mod:`lagsim.analysis.lqr`)."""

from __future__ import annotations

import click

from lagsim import api
from lagsim.cli.options import example, file_argument, report_format_option, set_option
from lagsim.cli.reports import report_out

AT_HELP = ("The equilibrium to hold, such as \"x=0, theta=0\" (other coordinates at their "
           "initial values; it must be an equilibrium to 1e-9 with the inputs at their "
           "defaults), or 'equilibrium' (the stable one nearest the initial state).")
Q_HELP = ("State weights, the diagonal of Q: one number per entry of the state in the order the "
          "report prints it (coordinates, then velocities; the independent ones of a "
          "constrained system), as 1,10,1,1, or name=value entries such as theta=10 (the "
          "others 1). [default: all 1]")
R_HELP = ("Input weights, the diagonal of R: one positive number per input in the file's order, "
          "or name=value entries. [default: all 1]")


@click.command("lqr", epilog=example("lagsim lqr cart_pole_lqr.yaml --at \"x=0, theta=0\" "
                                     "--Q theta=10"))
@file_argument
@click.option("--at", "at", default="equilibrium", metavar="POINT", help=AT_HELP)
@click.option("--Q", "Q", default=None, metavar="WEIGHTS", help=Q_HELP)
@click.option("--R", "R", default=None, metavar="WEIGHTS", help=R_HELP)
@report_format_option
@set_option
def command(file: str, at: str, Q: str | None, R: str | None, fmt: str,
            overrides: dict[str, float]) -> None:
    """Design a linear-quadratic regulator of FILE's inputs about an equilibrium: the gain K,
    the closed-loop eigenvalues and controllability.

    On the linearization ẋ = A x + B δu (x = (z, ż), z the independent coordinates), K
    minimizes ∫ xᵀQx + δuᵀRδu dt (scipy's continuous algebraic Riccati solver); the law is
    u = u* − K (x − x*). Controllability is the rank of the controllable subspace, with the
    uncontrollable modes and the states they move. `lagsim simulate FILE --controller lqr`
    runs the nonlinear system with the law.
    """
    system = api.open_system(file, overrides)
    report_out(system.lqr(at, Q, R), fmt)
