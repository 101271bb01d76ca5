"""The ``lagsim`` command: a thin click layer over the stages.

Data goes to stdout, diagnostics to stderr; the exit status is decided in one place
(:meth:`LagsimGroup.invoke`): 2 for bad input, 1 for a failed run or a failed write (a full disk:
one line, no traceback), 130 for Ctrl-C, 143 for SIGTERM and 129 for SIGHUP (each cleans up like
Ctrl-C: no temporary file stays), and 141 (128 + SIGPIPE, what a shell reports for ``yes | head``)
when the reader of stdout went away: ``lagsim systems | head -1`` ends quietly, nothing on stderr.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from lagsim import __version__
from lagsim.completion import complete_choices, complete_system
from lagsim.errors import InputError, LagsimError, Location, printable

EXAMPLES = {
    "derive": "lagsim derive pendulum --form matrix --format latex",
    "simulate": "lagsim simulate pendulum --t-end 10 | lagsim plot -o pendulum.png",
    "plot": "lagsim simulate double_pendulum | lagsim plot --kind drift -o drift.png",
    "animate": "lagsim animate double_pendulum -o dp.gif --fps 25",
    "systems": "lagsim systems",
}

EXIT_PIPE = 128 + 13


class UserError(click.ClickException):
    """A :class:`LagsimError` shown as one line, ``lagsim: error: FILE:LINE:COL: ...``."""

    def __init__(self, error: LagsimError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"lagsim: error: {printable(self.format_message())}", err=True)


class UsageError(click.UsageError):
    """click's usage errors (an unknown option or command, a value not among the choices) in
    lagsim's style: one ``lagsim: error:`` line, then where to find help; exit 2."""

    def __init__(self, error: click.UsageError) -> None:
        super().__init__(error.format_message(), error.ctx)

    def show(self, file: Any = None) -> None:
        click.echo(f"lagsim: error: {printable(self.format_message())}", err=True)
        if self.ctx is not None:
            command = self.ctx.command_path
            click.echo(f"Try '{command} --help' for help.", err=True)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like Ctrl-C so every cleanup (temporary files) runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminate(signum: int, _frame: Any) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Terminated` for the length of a command; a signal
    the caller ignores (``nohup``) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = ("SIGTERM", "SIGHUP")
    numbers = [getattr(signal, n) for n in names if hasattr(signal, n)]
    old = {s: signal.getsignal(s) for s in numbers}
    for s, handler in old.items():
        if handler is not signal.SIG_IGN:
            signal.signal(s, _terminate)
    try:
        yield
    finally:
        for s, handler in old.items():
            if handler is not signal.SIG_IGN:
                signal.signal(s, handler if handler is not None else signal.SIG_DFL)


def _silence_stdout() -> None:
    """Point stdout at the null device so the flush at exit cannot fail a second time
    (the Python docs' advice for SIGPIPE)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


class _ClosedStdout(io.TextIOBase):
    """Stands in for a closed descriptor 1 (``lagsim systems >&-``), where Python sets
    ``sys.stdout`` to None: writing fails as on a closed descriptor, so every command says
    "cannot write standard output: it is closed" in one line instead of some printing nothing
    and others failing on ``None``."""

    encoding = "utf-8"
    errors = "strict"

    @property
    def buffer(self) -> _ClosedStdout:
        return self

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "it is closed")

    def write(self, _data: Any) -> int:
        raise OSError(errno.EBADF, "it is closed")


@contextlib.contextmanager
def _stdout_present() -> Iterator[None]:
    if sys.stdout is not None:
        yield
        return
    sys.stdout = _ClosedStdout()
    try:
        yield
    finally:
        sys.stdout = None  # type: ignore[assignment]


def _flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


class LagsimGroup(click.Group):
    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise exc if isinstance(exc, UsageError) else UsageError(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        with _signals_interrupt(), _stdout_present():
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            _flush_stdout()
            return result
        except BrokenPipeError:
            _silence_stdout()
            ctx.exit(EXIT_PIPE)
        except LagsimError as exc:
            if ctx.params.get("debug"):
                raise
            _flush_or_silence()
            raise UserError(exc) from None
        except KeyboardInterrupt as exc:
            signum = getattr(exc, "signum", signal.SIGINT)
            name = "interrupted" if signum == signal.SIGINT else \
                f"terminated by {signal.Signals(signum).name}"
            _flush_or_silence()
            click.echo(f"lagsim: {name}", err=True)
            ctx.exit(128 + signum)
        except click.UsageError as exc:
            if isinstance(exc, UsageError):
                raise
            raise UsageError(exc) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except OSError as exc:
            if ctx.params.get("debug"):
                raise
            _flush_or_silence()
            reason = exc.strerror or str(exc)
            if exc.filename:
                message = f"{exc.filename!r}: {reason}"
            elif exc.errno in _WRITE_ERRORS:
                message = f"cannot write standard output: {reason}"
            else:
                message = reason
            click.echo(printable(f"lagsim: error: {message}"), err=True)
            ctx.exit(1)
        except Exception as exc:
            if ctx.params.get("debug"):
                raise
            _flush_or_silence()
            click.echo(printable(f"lagsim: error: internal error ({type(exc).__name__}: {exc}); "
                                  "this is a bug in lagsim: please report it with the output of "
                                  "--debug"), err=True)
            ctx.exit(1)


_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS, errno.EBADF}


def _flush_or_silence() -> None:
    """Flush what stdout holds; if that fails (closed pipe, full disk), drop it quietly: the
    error being reported matters more."""
    try:
        _flush_stdout()
    except (OSError, ValueError):
        _silence_stdout()


def _warn(message: str) -> None:
    click.echo(f"lagsim: {printable(message)}", err=True)


def _assignments(option: str) -> Callable[[click.Context, click.Parameter, Sequence[str]],
                                          dict[str, float]]:
    def parse(_ctx: click.Context, _param: click.Parameter, values: Sequence[str]
              ) -> dict[str, float]:
        from lagsim.expressions import Source, parse_expression

        out: dict[str, float] = {}
        for item in values:
            name, sep, text = item.partition("=")
            if not sep or not name.strip():
                raise InputError(f"expected NAME=VALUE, got {item!r}", Location(option))
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


def _finite_budget(value: float | None) -> float | None:
    if value is not None and value != value:
        raise click.BadParameter("nan is not a number of seconds; give one in 0..86400")
    return value


FORM_CHOICES = ("lagrange", "matrix", "dae", "index1", "udwadia-kalaba", "reduced", "all")


@main.command(epilog=_example("derive"))
@click.argument("file", default="-", metavar="[FILE|-]", shell_complete=complete_system)
@click.option("--form", "form", type=click.Choice(FORM_CHOICES), default="lagrange",
              show_default=True, help="Which form of the equations of motion to print.")
@click.option("--format", "fmt", type=click.Choice(("text", "latex", "json")), default="text",
              show_default=True, help="text for a terminal, latex for a paper, json for scripts.")
@click.option("--simplify", is_flag=True,
              help="Also run SymPy's simplify on each expression, within --budget.")
@click.option("--budget", type=click.FloatRange(min=0.0, max=86400.0), default=None,
              metavar="SECONDS", callback=lambda _c, _p, v: _finite_budget(v),
              help="CPU seconds the tidying may spend in SymPy (default 0.3, 10 with "
                   "--simplify); past it, expressions print as derived, with a note.")
@click.option("--width", type=click.IntRange(min=0, max=100000), default=None, metavar="N",
              help="Text line width (default: the terminal's, 80 in a pipe or file); lines "
                   "break only between terms; 0: no wrapping.")
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              callback=_assignments("--set"), help="Override a parameter's value.")
def derive(file: str, form: str, fmt: str, simplify: bool, budget: float | None,
           width: int | None, overrides: dict[str, float]) -> None:
    """Print the equations of motion of FILE in the chosen form."""
    from lagsim import tidy
    from lagsim.forms import FORMS
    from lagsim.model import build_model, tidy_model
    from lagsim.render import render
    from lagsim.spec import load_spec

    status = _Status()
    spec = load_spec(file, overrides)
    status(f"deriving {spec.name} ({len(spec.coordinates)} coordinates)")
    model = tidy_model(build_model(spec))
    for name in model.singular_coordinates():
        _warn(f"warning: the mass matrix is singular: the velocity of {name} appears nowhere "
              "in the kinetic energy; `lagsim simulate` will refuse this system")
    names = [f for f in FORM_CHOICES if f != "all" and (model.m or f != "udwadia-kalaba")
             ] if form == "all" else [form]
    forms = []
    q0 = dict(zip(spec.coordinates, spec.initial_state()[0]))
    seconds = budget if budget is not None else (
        tidy.SIMPLIFY_SECONDS if simplify else tidy.DEFAULT_SECONDS)
    with tidy.budget(seconds, deep=simplify) as spent:
        for name in names:
            status(f"forming the {name} form")
            try:
                forms.append(FORMS[name](model, simplify, q0=q0) if name == "reduced"
                             else FORMS[name](model, simplify))
            except InputError as exc:
                if form != "all":
                    raise
                _warn(f"note: form {name} skipped: {exc.message}")
    if spent.stopped:
        _warn(f"note: tidying stopped after its budget of {seconds:g} s CPU: {spent.stopped} "
              "step(s) left expressions as derived (equal, only longer)"
              + "; --budget SECONDS allows more")
    status("printing")
    text = render(forms if len(forms) > 1 else forms[0], fmt, model, width)
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
                                        type=str, metavar=row.metavar,
                                        shell_complete=complete_choices(row.choices)
                                        if row.choices else None))
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
@click.argument("file", default="-", metavar="[FILE|-]", shell_complete=complete_system)
@simulate_options
@click.option("-o", "--output", default="-", metavar="FILE",
              help="CSV destination, - for stdout. A file is replaced atomically (an "
                   "interrupted run keeps the old one); a device or FIFO is written in place.")
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
    from lagsim.io import check_output, write_csv

    target = check_output(output)
    _, _, trajectory = _simulate(file, _flags(kwargs), overrides, initial, partial, output)
    write_csv(trajectory.columns(), trajectory.as_array(), target)


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
@click.argument("source", default="-", metavar="[INPUT]", shell_complete=complete_system)
@click.option("-o", "--output", metavar="FILE", help="Image file; the type follows the extension "
              "(png, svg, pdf); - writes a PNG to stdout. Without it: a window if there is a "
              "display, else <name>.png.")
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
    from lagsim.io import check_output

    target = None
    if output is not None or not plotting.can_show_window():
        if output is None:
            stem = Path(source).stem if source != "-" else Path(system or "lagsim").stem
            output = f"{stem or 'lagsim'}.png"
            _warn(f"no display: writing {output}")
        target = check_output(output, formats=plotting.FORMATS, binary=True)
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
    if target is None:
        plotting.show(table, kind=kind, columns=cols, x=x, y=y, title=title, path_xy=path_xy)
        return
    plotting.save_figure(fig, target, dpi)


@main.command(epilog=_example("animate"))
@click.argument("source", default="-", metavar="[INPUT]", shell_complete=complete_system)
@click.option("--system", metavar="FILE", help="The system the CSV came from (needed for a CSV).")
@click.option("-o", "--output", required=True, metavar="FILE.gif|FILE.mp4",
              help="The animation; - writes a GIF to stdout.")
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
    from lagsim.animate import check_animation_output
    from lagsim.kinematics import mass_paths, rods

    target = check_animation_output(output)
    table, model = _table_and_model(source, system, _flags(kwargs), overrides, initial)
    if model is None:
        raise InputError("animating a CSV needs the system it came from: add --system FILE",
                         Location("--system"))
    paths = mass_paths(model, table)
    frames = make_animation(table, paths, rods(model, paths), target, fps=fps, trail=trail,
                            title=model.name, dpi=dpi)
    _warn(f"wrote {'standard output' if target.kind == 'stdout' else output} ({frames} frames)")


# --- editor and shell support (issue 13): `lagsim schema`, `lagsim completion` -------------------


@main.command(epilog="\b\nExample:\n  lagsim schema > lagsim-system.schema.json")
def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of the system file, for editors.

    Save it, and name it on the first line of a system file for a YAML language server
    (docs/format.md, "Editor support"):

    \b
    # yaml-language-server: $schema=lagsim-system.schema.json
    """
    from lagsim.schema import schema_text

    click.echo(schema_text(), nl=False)


COMPLETION_SHELLS = ("bash", "zsh", "fish")
"""The shells of click's completion mechanism that ``lagsim completion`` prints a script for."""


@main.command()
@click.argument("shell", type=click.Choice(COMPLETION_SHELLS))
def completion(shell: str) -> None:
    """Print the completion script of lagsim for SHELL (bash, zsh or fish).

    \b
    bash: eval "$(lagsim completion bash)" in ~/.bashrc
    zsh:  eval "$(lagsim completion zsh)" in ~/.zshrc, after compinit
    fish: lagsim completion fish > ~/.config/fish/completions/lagsim.fish
    """
    from click.shell_completion import BashComplete, FishComplete, ZshComplete

    complete = {"bash": BashComplete, "zsh": ZshComplete, "fish": FishComplete}[shell]
    click.echo(complete(main, {}, "lagsim", "_LAGSIM_COMPLETE").source())


@main.group("cache")
def cache_group() -> None:
    """Show or clear the compile cache of compiled models."""


def _cache_folder_error(exc: Exception) -> InputError:
    return InputError(f"the compile cache cannot be used: {exc}; set LAGSIM_CACHE to a folder "
                      "of your own", Location("LAGSIM_CACHE"))


@cache_group.command("info")
def cache_info() -> None:
    """Print the cache folder, its number of compiled models and their size."""
    from lagsim import cache

    try:
        found = cache.info()
    except cache.Unusable as exc:
        raise _cache_folder_error(exc) from None
    size = next((f"{found.size / scale:.1f} {unit}" for scale, unit in
                 ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")) if found.size >= scale),
                f"{found.size} bytes")
    click.echo(f"folder: {found.folder}\nentries: {found.entries} (the {cache.KEEP} most "
               f"recently used are kept)\nsize: {size}")


@cache_group.command("clear")
def cache_clear() -> None:
    """Remove lagsim's compiled models from the cache folder (nothing else there)."""
    from lagsim import cache

    try:
        folder, removed = cache.clear()
    except cache.Unusable as exc:
        raise _cache_folder_error(exc) from None
    click.echo(f"removed {removed} compiled model{'s' * (removed != 1)} from {folder}")


if __name__ == "__main__":
    main()
