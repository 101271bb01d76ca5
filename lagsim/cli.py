"""The ``lagsim`` command: a thin click layer over the stages.

Data goes to stdout, diagnostics to stderr; the exit status is decided in one place
(:meth:`LagsimGroup.invoke`): 2 for bad input, 1 for a failed run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from lagsim import __version__
from lagsim.errors import InputError, LagsimError, Location

EXAMPLES = {
    "derive": "lagsim derive pendulum --form matrix --format latex",
    "simulate": "lagsim simulate pendulum --t-end 10 | lagsim plot -o pendulum.png",
    "plot": "lagsim simulate double_pendulum | lagsim plot --kind drift -o drift.png",
    "animate": "lagsim animate double_pendulum -o dp.gif --fps 25",
    "systems": "lagsim systems",
}


class UserError(click.ClickException):
    """A :class:`LagsimError` shown as one line, ``lagsim: error: FILE:LINE:COL: ...``."""

    def __init__(self, error: LagsimError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"lagsim: error: {self.format_message()}", err=True)


class LagsimGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LagsimError as exc:
            if ctx.params.get("debug"):
                raise
            raise UserError(exc) from None
        except KeyboardInterrupt:
            click.echo("lagsim: interrupted", err=True)
            ctx.exit(130)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except Exception as exc:
            if ctx.params.get("debug"):
                raise
            click.echo(f"lagsim: error: internal error ({type(exc).__name__}: {exc}); this is a "
                       "bug in lagsim: please report it with the output of --debug", err=True)
            ctx.exit(1)


def _warn(message: str) -> None:
    click.echo(f"lagsim: {message}", err=True)


def _assignments(option: str) -> Callable[[click.Context, click.Parameter, Sequence[str]],
                                          dict[str, float]]:
    def parse(_ctx: click.Context, _param: click.Parameter, values: Sequence[str]
              ) -> dict[str, float]:
        from lagsim.expressions import Source, parse_expression

        out: dict[str, float] = {}
        for item in values:
            name, sep, text = item.partition("=")
            if not sep or not name.strip():
                raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint=option)
            try:
                value = float(parse_expression(text, {}, Source(Location(option)), option))
            except (InputError, TypeError):
                raise click.BadParameter(f"{name.strip()}={text!r}: the value must be a number "
                                         "such as 1.5 or pi/4", param_hint=option) from None
            out[name.strip()] = value
        return out
    return parse


def _example(name: str) -> str:
    return f"\b\nExample:\n  {EXAMPLES[name]}"


@click.group(cls=LagsimGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="\b\nExample:\n  lagsim simulate pendulum --t-end 10 | lagsim plot -o p.png")
@click.version_option(__version__, prog_name="lagsim")
@click.option("--debug", is_flag=True, help="Show tracebacks and symbolic-engine fallbacks.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Derive and simulate the equations of motion of constrained mechanical systems.

    FILE is a YAML system file, the name of a bundled system (see `lagsim systems`), or - for
    standard input.
    """
    ctx.obj = {"debug": debug}


@main.command(epilog=_example("systems"))
def systems() -> None:
    """List the bundled systems, with the first line of each description."""
    from lagsim.spec import bundled_systems, load_spec

    for name in bundled_systems():
        spec = load_spec(name)
        summary = " ".join(spec.description.split())
        summary = summary.split(". ")[0].rstrip(".:")
        if len(summary) > 72:
            summary = summary[:71] + "…"
        click.echo(f"{name:24s} {summary}")


FORM_CHOICES = ("lagrange", "matrix", "dae", "index1", "udwadia-kalaba", "reduced", "all")


@main.command(epilog=_example("derive"))
@click.argument("file", default="-", metavar="[FILE|-]")
@click.option("--form", "form", type=click.Choice(FORM_CHOICES), default="lagrange",
              show_default=True, help="Which form of the equations of motion to print.")
@click.option("--format", "fmt", type=click.Choice(("text", "latex", "json")), default="text",
              show_default=True, help="text for a terminal, latex for a paper, json for scripts.")
@click.option("--simplify", is_flag=True, help="Simplify every expression (slower).")
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              callback=_assignments("--set"), help="Override a parameter's value.")
def derive(file: str, form: str, fmt: str, simplify: bool, overrides: dict[str, float]) -> None:
    """Print the equations of motion of FILE in the chosen form."""
    from lagsim.forms import FORMS
    from lagsim.model import build_model, tidy_model
    from lagsim.render import render
    from lagsim.spec import load_spec

    status = _Status()
    spec = load_spec(file, overrides)
    status(f"deriving {spec.name} ({len(spec.coordinates)} coordinates)")
    model = build_model(spec) if simplify else tidy_model(build_model(spec))
    for name in model.singular_coordinates():
        _warn(f"warning: the mass matrix is singular: the velocity of {name} appears nowhere "
              "in the kinetic energy; `lagsim simulate` will refuse this system")
    names = [f for f in FORM_CHOICES if f != "all"] if form == "all" else [form]
    forms = []
    q0 = dict(zip(spec.coordinates, spec.initial_state()[0]))
    for name in names:
        status(f"forming the {name} form")
        try:
            forms.append(FORMS[name](model, simplify, q0=q0) if name == "reduced"
                         else FORMS[name](model, simplify))
        except InputError as exc:
            if form != "all":
                raise
            _warn(f"note: form {name} skipped: {exc.message}")
    status("printing")
    text = render(forms if len(forms) > 1 else forms[0], fmt, model)
    status.close()
    click.echo(text, nl=False)


class _Status:
    """One status line on stderr naming the stage of a long derivation, only on a terminal and
    only once the work has taken about a second; erased when done."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self.start = time.monotonic()
        self.shown = False

    def __call__(self, stage: str) -> None:
        if self.enabled and time.monotonic() - self.start >= 1.0:
            sys.stderr.write(f"\r\033[Klagsim: {stage}…")
            sys.stderr.flush()
            self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


class _Progress:
    """A progress bar on stderr once a run has taken about a second, only on a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self.start = time.monotonic()
        self.bar: Any = None

    def __call__(self, fraction: float) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < 1.0:
                return
            self.bar = click.progressbar(length=1000, label="simulating", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(int(1000 * min(max(fraction, 0.0), 1.0)) - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _simulate(file: str, flags: dict[str, Any], overrides: dict[str, float],
              initial: dict[str, float], partial: str | None = None, output: str = "-"
              ) -> tuple[Any, Any, Any]:
    from lagsim.driver import FailedRun
    from lagsim.integrate import SimulateOptions, simulate
    from lagsim.model import build_model
    from lagsim.spec import load_spec

    spec = load_spec(file, overrides, initial)
    options = SimulateOptions.resolve(spec.simulate, flags)
    model = build_model(spec)
    progress = _Progress()
    failed: FailedRun | None = None
    try:
        trajectory = simulate(spec, model, options, report=_warn, progress=progress)
    except FailedRun as failure:
        failed = failure
    finally:
        progress.close()
    if failed is not None:
        if partial is not None:
            _keep_partial(failed.partial, partial or _partial_path(output, spec.name))
        raise failed
    if trajectory.message:
        _warn(trajectory.message)
    return spec, model, trajectory


def _partial_path(output: str, name: str) -> str:
    """--partial's default: beside -o FILE as FILE's stem + .partial.csv, else
    <system name>.partial.csv in the current folder."""
    if output != "-":
        path = Path(output)
        return str(path.with_name(f"{path.stem}.partial.csv"))
    return f"{name}.partial.csv"


def _keep_partial(trajectory: Any, path: str) -> None:
    from lagsim.io import write_csv

    write_csv(trajectory.columns(), trajectory.as_array(), path)
    _warn(f"kept the {len(trajectory.t)} rows before the failure in {path}")


class _TableOption(click.Option):
    """A flag of the options table (:mod:`lagsim.options`); its help line is filled in only
    when shown, so that listing the choices does not import the numerics."""

    def __init__(self, *args: Any, row: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.row = row

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.row.help_text()
        return super().get_help_record(ctx)


def simulate_options(func: Callable) -> Callable:
    """The flags of `lagsim simulate`, shared by `plot` and `animate` when they simulate: one per
    row of the options table, each passed on as given (None when absent), validated by the
    table; then --set and --init."""
    from lagsim.options import OPTIONS

    options = []
    for row in OPTIONS:
        if row.switch:
            declaration = f"{row.flag}/--no-{row.flag[2:]}"
            options.append(click.option(declaration, row.name, cls=_TableOption, row=row,
                                        default=None))
        else:
            options.append(click.option(row.flag, row.name, cls=_TableOption, row=row,
                                        type=str, metavar=row.metavar))
    options += [
        click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
                     callback=_assignments("--set"), help="Override a parameter's value."),
        click.option("--init", "initial", multiple=True, metavar="NAME=VALUE",
                     callback=_assignments("--init"),
                     help="Override an initial value (a coordinate or <coordinate>_dot)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _flags(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The simulate flags the user gave, by option name (a flag given, even 0, wins over the
    file's simulate: block); ``None`` means not given."""
    from lagsim.options import OPTIONS

    return {row.name: kwargs[row.name] for row in OPTIONS if kwargs.get(row.name) is not None}


@main.command(epilog=_example("simulate"))
@click.argument("file", default="-", metavar="[FILE|-]")
@simulate_options
@click.option("-o", "--output", default="-", metavar="FILE",
              help="CSV destination, - for stdout (written atomically).")
@click.option("--partial", is_flag=False, flag_value="", default=None, metavar="[PATH]",
              help="When the run fails, keep the rows up to the failure (and the last state "
                   "reached) in PATH [default PATH: FILE.partial.csv beside -o FILE, else "
                   "<system name>.partial.csv].")
def simulate(file: str, output: str, partial: str | None, overrides: dict[str, float],
             initial: dict[str, float], **kwargs: Any) -> None:
    """Integrate FILE and write the trajectory as CSV.

    Columns: t, the coordinates, their velocities (<q>_dot), the multipliers (lambda_<c>), the
    constraint residuals (residual_<c>, and residual_<c>_dot for holonomic constraints) and the
    energy h = q_dot . dL/dq_dot - L, which need not be conserved when the system depends on time
    or has forces.
    """
    from lagsim.io import write_csv

    _, _, trajectory = _simulate(file, _flags(kwargs), overrides, initial, partial, output)
    write_csv(trajectory.columns(), trajectory.as_array(), output)


def _looks_like_csv(source: str) -> bool:
    if source == "-":
        return True
    path = Path(source)
    if path.suffix.lower() in (".yaml", ".yml"):
        return False
    if path.suffix.lower() in (".csv", ".txt"):
        return True
    if path.is_file():
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().startswith("t,")
    return False


def _table_and_model(source: str, system: str | None, flags: dict[str, Any],
                     overrides: dict[str, float], initial: dict[str, float]) -> tuple[Any, Any]:
    """A CSV table from a CSV source, or by simulating a system; the system's model if known."""
    from lagsim.io import Table, read_csv
    from lagsim.model import build_model
    from lagsim.spec import load_spec

    if _looks_like_csv(source):
        table = read_csv(source)
        model = build_model(load_spec(system, overrides)) if system else None
        return table, model
    spec, model, trajectory = _simulate(source, flags, overrides, initial)
    if system:
        model = build_model(load_spec(system, overrides))
    data = trajectory.as_array()
    return Table(tuple(trajectory.columns()), data, spec.source), model


KINDS = ("overview", "time", "phase", "drift", "energy", "forces", "path")


@main.command(epilog=_example("plot"))
@click.argument("source", default="-", metavar="[INPUT]")
@click.option("-o", "--output", metavar="FILE", help="Image file; the type follows the extension "
              "(png, svg, pdf). Without it: a window if there is a display, else <name>.png.")
@click.option("--kind", type=click.Choice(KINDS), default="overview", show_default=True)
@click.option("--system", metavar="FILE", help="The system the CSV came from (for --kind path).")
@click.option("--columns", metavar="A,B,...", help="Columns to draw (time and phase kinds).")
@click.option("--x", "x", metavar="COL", help="Column on the x axis (time kind).")
@click.option("--y", "y", metavar="COL", help="Column on the y axis (time kind).")
@click.option("--title", metavar="TEXT", help="Figure title [default: the system's name].")
@click.option("--dpi", type=click.IntRange(min=10, max=2400), default=150, show_default=True)
@simulate_options
def plot(source: str, output: str | None, kind: str, system: str | None, columns: str | None,
         x: str | None, y: str | None, title: str | None, dpi: int,
         overrides: dict[str, float], initial: dict[str, float], **kwargs: Any) -> None:
    """Draw the trajectory, constraint drift and energy drift of a CSV, or of a system.

    INPUT is a CSV file, - or nothing for CSV on standard input, or a system (YAML path or bundled
    name), which is simulated first with its own simulate: settings.
    """
    from lagsim import plot as plotting

    table, model = _table_and_model(source, system, _flags(kwargs), overrides, initial)
    path_xy = None
    if kind == "path":
        if model is None:
            raise InputError("--kind path needs the system: give --system FILE, or plot the "
                             "system itself", Location("--kind"))
        from lagsim.kinematics import mass_paths

        path_xy = mass_paths(model, table)
    if title is None and model is not None:
        title = model.name
    cols = [c.strip() for c in columns.split(",")] if columns else None
    fig = plotting.make_figure(table, kind=kind, columns=cols, x=x, y=y, title=title,
                               path_xy=path_xy)
    if output is None:
        if plotting.can_show_window():
            plotting.show(table, kind=kind, columns=cols, x=x, y=y, title=title, path_xy=path_xy)
            return
        stem = Path(source).stem if source != "-" else (model.name if model else "lagsim")
        output = f"{stem or 'lagsim'}.png"
        _warn(f"no display: writing {output}")
    plotting.save_figure(fig, output, dpi)


@main.command(epilog=_example("animate"))
@click.argument("source", default="-", metavar="[INPUT]")
@click.option("--system", metavar="FILE", help="The system the CSV came from (needed for a CSV).")
@click.option("-o", "--output", required=True, metavar="FILE.gif|FILE.mp4")
@click.option("--fps", type=click.IntRange(min=1, max=120), default=30, show_default=True)
@click.option("--trail", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
              help="Seconds of fading trail behind each mass.")
@click.option("--dpi", type=click.IntRange(min=10, max=600), default=100, show_default=True,
              help="Resolution of the frames (lower makes a smaller file).")
@simulate_options
def animate(source: str, system: str | None, output: str, fps: int, trail: float, dpi: int,
            overrides: dict[str, float], initial: dict[str, float], **kwargs: Any) -> None:
    """Animate the masses of a system: dots, rods, a fading trail and a clock."""
    from lagsim.animate import animate as make_animation
    from lagsim.kinematics import mass_paths, rods

    table, model = _table_and_model(source, system, _flags(kwargs), overrides, initial)
    if model is None:
        raise InputError("animating a CSV needs the system it came from: add --system FILE",
                         Location("--system"))
    paths = mass_paths(model, table)
    frames = make_animation(table, paths, rods(model, paths), output, fps=fps, trail=trail,
                            title=model.name, dpi=dpi)
    _warn(f"wrote {output} ({frames} frames)")


if __name__ == "__main__":
    main()
