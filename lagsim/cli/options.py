"""The click adapter of the options table (:mod:`lagsim.spec.options`): one flag per row for
``simulate``, ``plot``, ``animate`` and ``sweep``, passed on as given and validated by the table;
and the arguments and options several commands share (FILE, ``--set``, ``--force``,
``--format``, ``--plot`` with ``-o``), declared once."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from lagsim.cli.completion import complete_choices, complete_system
from lagsim.errors import InputError, Location
from lagsim.spec import choices
from lagsim.spec.options import OPTIONS, Option

F = TypeVar("F", bound=Callable[..., Any])


def assignments(option: str) -> Callable[[click.Context, click.Parameter, Sequence[str]],
                                         dict[str, float]]:
    """The callback of ``option`` (``--set``, ``--init``): its NAME=VALUE items as a dict,
    each value a finite number or an expression in numbers (``pi/4``)."""
    def parse(_ctx: click.Context, _param: click.Parameter, values: Sequence[str]
              ) -> dict[str, float]:
        from lagsim.spec.expressions import Source, parse_expression  # SymEngine: when given

        out: dict[str, float] = {}
        for item in values:
            name, sep, text = item.partition("=")
            if not sep or not name.strip():
                raise InputError(f"expected NAME=VALUE, got {item!r}", Location(option))
            _finite_number(name.strip(), text.strip(), option)
            try:
                value = float(parse_expression(
                    text, {}, Source(Location(option)), f"the value of {name.strip()}",
                    "a value is a number or an expression in numbers, such as 1.5 or pi/4"))
            except InputError as error:
                raise InputError(error.message, Location(option)) from None
            except TypeError:
                raise InputError(f"{name.strip()}={text!r}: the value must be a number such as "
                                 "1.5 or pi/4", Location(option)) from None
            out[name.strip()] = value
        return out
    return parse


def _finite_number(name: str, text: str, option: str) -> None:
    """Refuse a plain number that is not a finite float (``l=1e400`` overflows to inf, ``nan``),
    naming the value and what the largest float is."""
    try:
        number = float(text)
    except ValueError:
        return
    if math.isnan(number):
        raise InputError(f"the value of {name} {text!r}: {text} is not a number (nan); give a "
                         "finite value such as 1.5", Location(option))
    if math.isinf(number):
        why = ("is infinite" if text.lstrip("+-").lower().startswith("inf")
               else "is too large for a floating-point number (it overflows to inf)")
        raise InputError(f"the value of {name} {text!r}: {text} {why}; give a finite value, at "
                         f"most {sys.float_info.max:.4g} in size", Location(option))


file_argument = click.argument("file", default="-", metavar="[FILE|-]",
                               shell_complete=complete_system)
"""FILE of the commands that read one system, standard input by default."""

required_file_argument = click.argument("file", metavar="FILE", shell_complete=complete_system)
"""FILE of the commands that need it named (``action``, ``sweep``)."""

set_option = click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
                          callback=assignments("--set"), help="Override a parameter's value.")
"""``--set NAME=VALUE``, passed on as ``overrides``."""

force_option = click.option("--force", is_flag=True, help="Write the output even when it is "
                            "one of the inputs (the same file).")
"""``--force``: write over an input (:func:`lagsim.cli.files.inputs`)."""

report_format_option = click.option("--format", "fmt", type=click.Choice(choices.TEXT_FORMATS),
                                    default="text", show_default=True,
                                    help="text for a terminal, json for scripts.")
"""``--format`` of the commands that print a report (``check``, ``equilibria``, ``modes``,
``action``, ...): :data:`lagsim.spec.choices.TEXT_FORMATS`."""


def plot_options(plot_help: str) -> Callable[[F], F]:
    """``--plot`` (``plot_help`` its help) and ``-o FILE``, its image, of the commands whose
    standard output carries their report (``modes``, ``fit``), passed on as ``draw`` and
    ``output``; :func:`lagsim.cli.files.plot_target` checks them."""
    def decorate(func: F) -> F:
        func = click.option("-o", "--output", metavar="FILE",
                            help="Image file for --plot (png, svg, pdf).")(func)
        return click.option("--plot", "draw", is_flag=True, help=plot_help)(func)
    return decorate


def _view(_ctx: click.Context, _param: click.Parameter, value: str | None
          ) -> tuple[float, float] | None:
    from lagsim.viz.views import parse_view

    return None if value is None else parse_view(value)


def view_option(func: F) -> F:
    """``--view`` of the 3-D pictures (``plot --kind path``, ``animate``), parsed as soon as it
    is read (:func:`lagsim.viz.views.parse_view`): passed on as (elevation, azimuth), None when
    not given. :mod:`lagsim.viz.views` is imported by the commands that take it, not by every
    command (issue 31, "Start-up")."""
    from lagsim.viz import views

    return click.option(views.FLAG, "view", metavar="NAME|ELEV,AZIM", callback=_view,
                        help=views.HELP,
                        shell_complete=complete_choices(lambda: views.VIEWS))(func)


class RegistryChoice(click.Choice):
    """A choice whose names come from a registry, read only when shown, completed or checked
    (so that building the commands imports no registry: :mod:`lagsim.symbolic.forms` imports
    SymPy), listed in ``--help`` as ``[lagrange|matrix|...]``."""

    def __init__(self, names: Callable[[], tuple[str, ...]]) -> None:
        self.names = names
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.names())


class _TableOption(click.Option):
    """A flag of the options table; its help line is filled in only when shown, so that
    listing the choices does not import the numerics."""

    def __init__(self, *args: Any, row: Option, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.row = row

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.row.help_text()
        return super().get_help_record(ctx)


class _RowChoice(RegistryChoice):
    """The choices of a row of the options table (``--method``, ``--formulation``,
    ``--stabilize``), read from their registry only when shown or completed (so that building
    the commands imports no numerics), listed in ``--help`` as ``[DOP853|RK45|...]``.

    The value is passed on as given: the table validates it, in one place for flags and files,
    folding case and suggesting the closest name (:mod:`lagsim.spec.options`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        return value


def simulate_options(func: F) -> F:
    """The flags of `lagsim simulate`, shared by `plot`, `animate` and `sweep`: one per row of
    the options table, each passed on as given (None when absent), validated by the table; then
    --set and --init."""
    options = []
    for row in OPTIONS:
        if row.switch:
            declaration = f"{row.flag}/--no-{row.flag[2:]}"
            options.append(click.option(declaration, row.name, cls=_TableOption, row=row,
                                        default=None))
        elif row.choices:
            options.append(click.option(row.flag, row.name, cls=_TableOption, row=row,
                                        type=_RowChoice(row.choices),
                                        shell_complete=complete_choices(row.choices)))
        else:
            options.append(click.option(row.flag, row.name, cls=_TableOption, row=row,
                                        type=str, metavar=row.metavar))
    options += [
        set_option,
        click.option("--init", "initial", multiple=True, metavar="NAME=VALUE",
                     callback=assignments("--init"),
                     help="Override an initial value (a coordinate or <coordinate>_dot)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def flags(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The simulate flags the user gave, by option name (a flag given, even 0, wins over the
    file's simulate: block); ``None`` means not given."""
    return {row.name: kwargs[row.name] for row in OPTIONS if kwargs.get(row.name) is not None}


def example(*lines: str) -> str:
    """The epilog of a command's help: its example command lines, kept as written."""
    return f"\b\nExample{'s' * (len(lines) > 1)}:\n" + "\n".join(f"  {line}" for line in lines)
