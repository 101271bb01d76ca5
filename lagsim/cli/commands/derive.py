"""``lagsim derive``: the equations of motion, through :func:`lagsim.api.derive_forms`."""

from __future__ import annotations

import click

from lagsim import api
from lagsim.cli.exits import warn
from lagsim.cli.files import stdin_hint
from lagsim.cli.options import RegistryChoice, example, file_argument, set_option
from lagsim.cli.progress import Status
from lagsim.spec import choices


def form_choices() -> tuple[str, ...]:
    """The choices of ``derive --form``: the names of the form registry
    (:data:`lagsim.symbolic.forms.FORMS`) and ``all``."""
    from lagsim.symbolic.forms import FORMS

    return (*FORMS, choices.ALL_FORMS)


def _finite_budget(value: float | None) -> float | None:
    if value is not None and value != value:
        raise click.BadParameter("nan is not a number of seconds; give one in 0..86400")
    return value


@click.command("derive", epilog=example("lagsim derive pendulum --form matrix --format latex"))
@file_argument
@click.option("--form", "form", type=RegistryChoice(form_choices), default="lagrange",
              show_default=True, help="Which form of the equations of motion to print.")
@click.option("--format", "fmt", type=click.Choice(choices.REPORT_FORMATS), default="text",
              show_default=True, help="text for a terminal, latex for a paper, json for scripts.")
@click.option("--simplify", is_flag=True,
              help="Also run SymPy's simplify on each expression, within --budget.")
@click.option("--budget", type=click.FloatRange(min=0.0, max=86400.0), default=None,
              metavar="SECONDS", callback=lambda _c, _p, v: _finite_budget(v),
              help="CPU seconds the tidying and the reduced form's solve may spend in SymPy "
                   "(default 0.3, 10 with --simplify); past it, expressions print as derived "
                   "and the reduced form partitioned, with a note.")
@click.option("--width", type=click.IntRange(min=0, max=100000), default=None, metavar="N",
              help="Text line width (default: the terminal's, 80 in a pipe or file); lines "
                   "break only between terms; 0: no wrapping.")
@click.option("--steady", "steady", default=None, metavar="POINT",
              help="For --form linear: linearize about a steady motion such as "
                   "\"theta=0.5, psi_dot=30\" (coordinates' values and <coordinate>_dot rates "
                   "over the file's steady:; the rest is solved for).")
@set_option
def command(file: str, form: str, fmt: str, simplify: bool, budget: float | None,
            width: int | None, steady: str | None, overrides: dict[str, float]) -> None:
    """Print the equations of motion of FILE in the chosen form."""
    from lagsim.errors import DEBUG
    from lagsim.symbolic.render import render, untidied_lines

    status = Status()
    stdin_hint(file, "YAML", "FILE")
    model, forms = api.derive_forms(api.open_system(file, overrides), form, simplify, status, warn,
                                budget=budget, steady=steady)
    for line in untidied_lines(forms) if DEBUG.get() else ():
        click.echo(line, err=True)
    text = render(forms if len(forms) > 1 else forms[0], fmt, model, width)
    status.close()
    click.echo(text, nl=False)
