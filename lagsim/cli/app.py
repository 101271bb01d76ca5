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
import math
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from lagsim import __version__
from lagsim.cli.completion import complete_choices, complete_system
from lagsim.errors import InputError, LagsimError, Location, printable
from lagsim.viz.kinds import KIND_HELP, KINDS

EXAMPLES = {
    "derive": "lagsim derive pendulum --form matrix --format latex",
    "simulate": "lagsim simulate pendulum --t-end 10 | lagsim plot -o pendulum.png",
    "plot": "lagsim simulate pendulum_natural | lagsim plot --kind drift -o drift.png",
    "animate": "lagsim animate double_pendulum -o dp.gif --fps 25",
    "systems": "lagsim systems",
    "check": "lagsim check skate --format json",
    "equilibria": "lagsim equilibria double_pendulum --format json",
    "modes": "lagsim modes double_pendulum --at \"theta1=0, theta2=0\" --plot -o modes.png",
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
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``--debug`` anywhere before a ``--`` counts as the group's (``lagsim derive x
        --debug`` as well as ``lagsim --debug derive x``)."""
        end = args.index("--") if "--" in args else len(args)
        if "--debug" in args[:end]:
            args = ["--debug", *(a for a in args[:end] if a != "--debug"), *args[end:]]
        return super().parse_args(ctx, args)

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise exc if isinstance(exc, UsageError) else UsageError(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        from lagsim.errors import set_debugging
        from lagsim.numeric import stages
        from lagsim.symbolic.expansion import signals_end_process

        set_debugging(bool(ctx.params.get("debug")))
        try:
            with _signals_interrupt(), _stdout_present(), _warnings_routed(ctx), \
                    signals_end_process(), stages.shown():
                return self._invoke(ctx)
        finally:
            set_debugging(False)

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


def _show_warning(message: Warning | str, category: type[Warning], _filename: str,
                  _lineno: int, _file: Any = None, _line: str | None = None) -> None:
    """A library's warning (scipy, NumPy, matplotlib) as lagsim's one warning line, on one line
    and with control characters escaped, instead of Python's path, line and source."""
    text = " ".join(str(message).split())
    _warn(f"warning: {text} ({category.__name__})")


@contextlib.contextmanager
def _warnings_routed(ctx: click.Context) -> Iterator[None]:
    """Every warning a command raises goes through :func:`_show_warning` (not with --debug,
    which keeps Python's own format, source line included)."""
    if ctx.params.get("debug"):
        yield
        return
    shown = warnings.showwarning
    warnings.showwarning = _show_warning
    try:
        yield
    finally:
        warnings.showwarning = shown


def _stdin_hint(source: str, what: str, argument: str) -> None:
    """One line on stderr when a command is about to read a terminal (a bare `lagsim derive`):
    without it, waiting for input looks like a hang."""
    stdin = sys.stdin
    if source == "-" and stdin is not None and stdin.isatty():
        _warn(f"reading {what} from standard input; Ctrl-D to end, or give {argument}")


FORCE_HELP = "Write the output even when it is one of the inputs (the same file)."


def _inputs(force: bool, *given: tuple[str | None, str]) -> tuple[tuple[str, str], ...]:
    """The files a command reads, as (path, what it is) for :func:`lagsim.output.io.check_output`'s
    refusal of an output that is one of them; none with --force. A bundled system's name
    stands for its file in the package."""
    if force:
        return ()
    found = []
    for name, what in given:
        if name is None or name == "-":
            continue
        path = Path(name)
        if not path.exists() and path.parent == Path("."):
            path = Path(_bundled_file(name[:-5] if name.endswith(".yaml") else name))
        found.append((str(path), what))
    return tuple(found)


def _bundled_file(name: str) -> str:
    """The path of the bundled system ``name``'s file in the package (it may not exist)."""
    from importlib import resources

    return str(resources.files("lagsim.systems").joinpath(f"{name}.yaml"))


def _assignments(option: str) -> Callable[[click.Context, click.Parameter, Sequence[str]],
                                          dict[str, float]]:
    def parse(_ctx: click.Context, _param: click.Parameter, values: Sequence[str]
              ) -> dict[str, float]:
        from lagsim.spec.expressions import Source, parse_expression

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


def _example(name: str) -> str:
    return f"\b\nExample:\n  {EXAMPLES[name]}"


@click.group(cls=LagsimGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="\b\nExample:\n  lagsim simulate pendulum --t-end 10 | lagsim plot -o p.png")
@click.version_option(__version__, prog_name="lagsim")
@click.option("--debug", is_flag=True, help="Show tracebacks and symbolic-engine fallbacks "
              "(also accepted after the command: lagsim derive FILE --debug).")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Derive and simulate the equations of motion of constrained mechanical systems.

    FILE is a YAML system file, the name of a bundled system (see `lagsim systems`), or - for
    standard input.
    """
    ctx.obj = {"debug": debug}


@main.command(epilog=_example("systems"))
@click.option("--show", "show", metavar="NAME", shell_complete=complete_system,
              help="Print the file of the bundled system NAME instead of the list.")
def systems(show: str | None) -> None:
    """List the bundled systems, with the first line of each description.

    Each works by name in every command (`lagsim derive pendulum`); `--show NAME` prints its
    file, and `lagsim new NAME -o my.yaml` copies it as a starting point of your own.
    """
    from lagsim.spec.references import public_text
    from lagsim.spec.system import bundled_systems, load_spec

    if show is not None:
        click.echo(_bundled_text(show, "--show"), nl=False)
        return
    names = bundled_systems()
    width = max(map(len, names), default=0) + 2
    for name in names:
        spec = load_spec(name)
        summary = " ".join(public_text(spec.description).split())
        summary = summary.split(". ")[0].rstrip(".:")
        room = max(40, 96 - width)
        if len(summary) > room:
            summary = summary[:room - 1] + "…"
        click.echo(f"{name:{width}s}{summary}")


def _bundled_text(name: str, option: str) -> str:
    """The text of the bundled system ``name``, or an error naming ``option`` that lists the
    bundled names (a path is not a bundled system: it is already a file of the user's)."""
    from importlib import resources

    from lagsim.spec.expressions import suggest
    from lagsim.spec.system import bundled_systems

    names = bundled_systems()
    if name not in names:
        raise InputError(f"no bundled system {printable(repr(name))}{suggest(name, names)}; "
                         f"they are {', '.join(names)}", Location(option))
    return resources.files("lagsim.systems").joinpath(f"{name}.yaml").read_text("utf-8")


@main.command("new", epilog="\b\nExample:\n  lagsim new double_pendulum -o my_pendulum.yaml")
@click.argument("name", metavar="NAME", shell_complete=complete_system)
@click.option("-o", "--output", metavar="FILE", default=None,
              help="Where to write the copy [default: NAME.yaml here]; - for standard output.")
@click.option("--force", is_flag=True,
              help="Replace FILE if it exists (without it, an existing file is kept), even the "
                   "bundled file itself.")
def new(name: str, output: str | None, force: bool) -> None:
    """Copy the bundled system NAME into a file of your own, as a starting point.

    The copy's `name:` becomes the file's name (my_pendulum.yaml is named my_pendulum); the rest
    is the bundled file as `lagsim systems --show NAME` prints it. An existing FILE is never
    replaced without --force: it is most likely a system you have edited, and unlike a CSV or a
    picture it cannot be made again by running a command.
    """
    import re

    from lagsim.output.io import check_output, derived_path, open_output

    text = _bundled_text(name, "NAME")
    output = output if output is not None else derived_path(".", name, ".yaml")
    bundled = _bundled_file(name)
    target = check_output(output, "-o", inputs=_inputs(force, (bundled, "NAME")))
    if target.kind == "file" and target.path.exists() and not force:
        raise InputError(f"{printable(repr(output))} exists; give --force to replace it, or "
                         "another file name", Location("-o"))
    stem = Path(output).stem if target.kind == "file" else name
    if stem != name and stem.isidentifier():
        text = re.sub(r"^name:.*$", f"name: {stem}", text, count=1, flags=re.MULTILINE)
    with open_output(target) as out:
        out.write(text)
    if target.kind != "stdout":
        _warn(f"wrote {output} (a copy of {name}); try `lagsim derive {output}`")


def _finite_budget(value: float | None) -> float | None:
    if value is not None and value != value:
        raise click.BadParameter("nan is not a number of seconds; give one in 0..86400")
    return value



def form_choices() -> tuple[str, ...]:
    """The choices of ``derive --form``: the names of the form registry
    (:data:`lagsim.symbolic.forms.FORMS`) and ``all``."""
    from lagsim.symbolic.forms import FORMS

    return (*FORMS, "all")


class _RegistryChoice(click.Choice):
    """A choice whose names come from a registry, read only when shown, completed or checked
    (so that building the commands imports no registry: :mod:`lagsim.symbolic.forms` imports SymPy),
    listed in ``--help`` as ``[lagrange|matrix|...]``."""

    def __init__(self, names: Callable[[], tuple[str, ...]]) -> None:
        self.names = names
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.names())


@main.command(epilog=_example("derive"))
@click.argument("file", default="-", metavar="[FILE|-]", shell_complete=complete_system)
@click.option("--form", "form", type=_RegistryChoice(form_choices), default="lagrange",
              show_default=True, help="Which form of the equations of motion to print.")
@click.option("--format", "fmt", type=click.Choice(("text", "latex", "json")), default="text",
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
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              callback=_assignments("--set"), help="Override a parameter's value.")
def derive(file: str, form: str, fmt: str, simplify: bool, budget: float | None,
           width: int | None, overrides: dict[str, float]) -> None:
    """Print the equations of motion of FILE in the chosen form."""
    from lagsim.api import derive_forms, open_system
    from lagsim.symbolic.render import render, untidied_lines

    status = _Status()
    _stdin_hint(file, "YAML", "FILE")
    model, forms = derive_forms(open_system(file, overrides), form, simplify, status, _warn,
                                budget=budget)
    for line in untidied_lines(forms) if _debug() else ():
        click.echo(line, err=True)
    text = render(forms if len(forms) > 1 else forms[0], fmt, model, width)
    status.close()
    click.echo(text, nl=False)


@main.command(epilog=_example("check"))
@click.argument("file", default="-", metavar="[FILE|-]", shell_complete=complete_system)
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text",
              show_default=True, help="text for a terminal, json for scripts.")
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              callback=_assignments("--set"), help="Override a parameter's value.")
def check(file: str, fmt: str, overrides: dict[str, float]) -> None:
    """Report what FILE is: coordinates, constraints, rank and degrees of freedom, redundant
    constraints, whether each velocity constraint is holonomic (Frobenius' test) and what is
    conserved (energy, cyclic and Noether momenta)."""
    from lagsim.analysis.check import check_system
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import build_model

    spec = load_spec(file, overrides)
    report = check_system(spec, build_model(spec))
    click.echo(report.to_json() if fmt == "json" else report.to_text(), nl=False)


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

    def __init__(self, label: str = "simulating") -> None:
        self.label = label
        self.enabled = sys.stderr.isatty()
        self.start = time.monotonic()
        self.bar: Any = None

    def __call__(self, fraction: float) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < 1.0:
                return
            self.bar = click.progressbar(length=1000, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(int(1000 * min(max(fraction, 0.0), 1.0)) - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def _simulate(file: str, flags: dict[str, Any], overrides: dict[str, float],
              initial: dict[str, float], partial: str | None = None, output: Any = None,
              inputs: Sequence[tuple[str, str]] = (),
              planned: Callable[[Any], None] | None = None) -> tuple[Any, Any, Any]:
    """Run FILE; with ``partial`` (``""`` for the default place) the rows before a failure are
    kept there, a place checked, like ``output``, before the run; ``planned`` is called with the
    run's resolved options before the run, to refuse what the run's result would be refused
    for."""
    from lagsim.api import open_system, run
    from lagsim.output.io import check_output
    from lagsim.run.driver import FailedRun

    _stdin_hint(file, "YAML", "FILE")
    system = open_system(file, overrides, initial)
    spec = system.spec
    kept = None
    if partial is not None:
        kept = check_output(partial or _partial_path(output, spec.name), "--partial",
                            inputs=inputs)
    if planned is not None:
        from lagsim.spec.options import SimulateOptions

        planned(SimulateOptions.resolve(spec.simulate, flags))
    progress = _Progress()
    failed: FailedRun | None = None
    try:
        trajectory = run(system, flags, report=_warn, progress=progress)
    except FailedRun as failure:
        failed = failure
    finally:
        progress.close()
    if failed is not None:
        if kept is not None:
            _keep_partial(failed.partial, kept)
        raise failed
    if trajectory.message:
        _warn(trajectory.message)
    return spec, system.model, trajectory


def _partial_path(output: Any, name: str) -> str:
    """--partial's default: beside -o FILE as FILE's stem + .partial.csv when -o is a regular
    file, else <system name>.partial.csv in the current folder (lagsim.output.io.derived_path: a
    name
    such as ../x or /x is refused, not followed)."""
    from lagsim.output.io import derived_path

    if output is not None and output.kind == "file":
        path = Path(output.name)
        return derived_path(path.parent, path.stem, ".partial.csv", "--partial",
                            "the -o file's name")
    return derived_path(".", name, ".partial.csv", "--partial", "the system's name")


def _keep_partial(trajectory: Any, target: Any) -> None:
    from lagsim.output.io import write_csv

    write_csv(trajectory.columns(), trajectory.as_array(), target)
    _warn(f"kept the {len(trajectory.t)} rows before the failure in {target.name}")


class _TableOption(click.Option):
    """A flag of the options table (:mod:`lagsim.spec.options`); its help line is filled in only
    when shown, so that listing the choices does not import the numerics."""

    def __init__(self, *args: Any, row: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.row = row

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.row.help_text()
        return super().get_help_record(ctx)


class _RowChoice(_RegistryChoice):
    """The choices of a row of the options table (``--method``, ``--formulation``,
    ``--stabilize``), read from their registry only when shown or completed (so that building
    the commands imports no numerics), listed in ``--help`` as ``[DOP853|RK45|...]``.

    The value is passed on as given: the table validates it, in one place for flags and files,
    folding case and suggesting the closest name (:mod:`lagsim.spec.options`)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        return value


def simulate_options(func: Callable) -> Callable:
    """The flags of `lagsim simulate`, shared by `plot` and `animate` when they simulate: one per
    row of the options table, each passed on as given (None when absent), validated by the
    table; then --set and --init."""
    from lagsim.spec.options import OPTIONS

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
    from lagsim.spec.options import OPTIONS

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
@click.option("--force", is_flag=True, help=FORCE_HELP)
def simulate(file: str, output: str, partial: str | None, force: bool,
             overrides: dict[str, float], initial: dict[str, float], **kwargs: Any) -> None:
    """Integrate FILE and write the trajectory as CSV.

    Columns: t, the coordinates, their velocities (<q>_dot), the multipliers (lambda_<c>), the
    constraint residuals (residual_<c>, and residual_<c>_dot for holonomic constraints) and the
    energy h = q_dot . dL/dq_dot - L, which need not be conserved when the system depends on time
    or has forces.
    """
    from lagsim.output.io import check_output, write_csv

    inputs = _inputs(force, (file, "FILE"))
    target = check_output(output, inputs=inputs)
    _, _, trajectory = _simulate(file, _flags(kwargs), overrides, initial, partial, target,
                                 inputs)
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
            return handle.read(2) == "t,"
    return False


def _table_and_model(source: str, system: str | None, flags: dict[str, Any],
                     overrides: dict[str, float], initial: dict[str, float],
                     planned: Callable[[Any], None] | None = None) -> tuple[Any, Any, Any]:
    """A CSV table from a CSV source, or by simulating a system (``planned`` as in
    :func:`_simulate`); the system's model and spec if known (``--system`` wins over the
    simulated one)."""
    from lagsim.output.io import Table, read_csv
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import build_model

    if _looks_like_csv(source):
        _stdin_hint(source, "CSV", "INPUT (a CSV file or a system)")
        table = read_csv(source)
        spec = load_spec(system, overrides) if system else None
        model = build_model(spec) if spec else None
    else:
        spec, model, trajectory = _simulate(source, flags, overrides, initial, planned=planned)
        table = Table(tuple(trajectory.columns()), trajectory.as_array(), spec.source)
        if system:
            spec = load_spec(system, overrides)
            model = build_model(spec)
    if system:
        from lagsim.analysis.balance import check_parameters

        note = check_parameters(table, model)
        if note:
            _warn(note)
    return table, model, spec


def _kinds_help() -> str:
    """The kinds of ``plot --kind`` and what each draws, as a block click keeps as written."""
    import textwrap

    width = max(map(len, KINDS)) + 4
    lines = []
    for kind in KINDS:
        lines += textwrap.wrap(KIND_HELP[kind], 76, initial_indent=f"  {kind:{width - 2}s}",
                               subsequent_indent=" " * width)
    return "\b\nKinds (--kind):\n" + "\n".join(lines)


@main.command(epilog=f"{_kinds_help()}\n\n{_example('plot')}\n"
                    "  lagsim plot none.csv projection.csv --kind drift -o drift.png")
@click.argument("sources", nargs=-1, metavar="[INPUT]...", shell_complete=complete_system)
@click.option("-o", "--output", metavar="FILE", help="Image file; the type follows the extension "
              "(png, svg, pdf); - writes a PNG to stdout. Without it: a window if there is a "
              "display, else <name>.png.")
@click.option("--kind", type=click.Choice(KINDS), default="overview", show_default=True,
              help="What to draw; the kinds are listed below.")
@click.option("--system", metavar="FILE", help="The system the CSV came from (for --kind path "
              "and invariants, units, lengths and angles); its parameters must be the run's "
              "(give them with --set): the CSV's energy and residual columns are checked.")
@click.option("--columns", metavar="A,B,...", help="Columns to draw (time and phase kinds).")
@click.option("--x", "x", metavar="COL", help="Column on the x axis (time, sweep and poincare "
              "kinds); equal scales when it measures what --y does (two lengths).")
@click.option("--y", "y", metavar="COL", help="Column on the y axis (time, sweep and poincare "
              "kinds; for a sweep, a column the runs computed).")
@click.option("--wrap", is_flag=False, flag_value="", default=None, metavar="[A,B,...]",
              help="Draw angles wrapped to (-pi, pi]: the columns named, or without names the "
                   "angle coordinates of the system (those only inside sin and cos, or with a "
                   "unit rad).")
@click.option("--label", "labels", multiple=True, metavar="TEXT",
              help="Legend label of each INPUT, in order, when several are drawn over each "
                   "other [default: their file names].")
@click.option("--title", metavar="TEXT", help="Figure title [default: the system's name, or "
              "the CSV's file name].")
@click.option("--dpi", type=click.IntRange(min=10, max=2400), default=150, show_default=True)
@click.option("--force", is_flag=True, help=FORCE_HELP)
@simulate_options
def plot(sources: tuple[str, ...], output: str | None, kind: str, system: str | None,
         columns: str | None, x: str | None, y: str | None, wrap: str | None,
         labels: tuple[str, ...], title: str | None, dpi: int, force: bool,
         overrides: dict[str, float], initial: dict[str, float], **kwargs: Any) -> None:
    """Draw the trajectory, constraint drift and energy drift of a CSV, or of a system.

    INPUT is a CSV file (the output of `lagsim simulate`), - or nothing for such a CSV on
    standard input, or a system (a YAML path or a bundled name), which is simulated first with
    its own simulate: settings and the simulate options below. Several INPUTs are drawn over
    each other, one colour each, with a legend of their file names (or --label).
    """
    from lagsim.output.io import check_output, derived_path
    from lagsim.viz import figures as plotting

    sources = sources or ("-",)
    if labels and len(labels) != len(sources):
        raise InputError(f"--label is given {len(labels)} times for {len(sources)} INPUTs; give "
                         "one label per INPUT, in order", Location("--label"))
    if sources.count("-") > 1:
        raise InputError("standard input (-) can be read once; give the other INPUTs as files",
                         Location("INPUT"))
    target = None
    first = sources[0]
    if output is not None or not plotting.can_show_window():
        if output is None:
            stem = Path(first).stem if first != "-" else Path(system or "lagsim").stem
            output = derived_path(".", stem if stem not in ("", ".", "..") else "lagsim", ".png")
            _warn(f"no display: writing {output}")
        target = check_output(output, formats=plotting.FORMATS, binary=True,
                              inputs=_inputs(force, *((s, "INPUT") for s in sources),
                                             (system, "--system")))
    if len(sources) == 1 and _plot_sweep(sources[0], kind, x, y, title, target, dpi, system,
                                         kwargs, overrides, initial):
        return
    flags = _flags(kwargs)
    if kind == "invariants":
        flags.setdefault("invariants", True)
    runs = [_table_and_model(source, system, flags, overrides, initial) for source in sources]
    if kind == "invariants":
        from lagsim.run.columns import table_with_invariants

        runs = [(table_with_invariants(t, m) if m is not None and not any(
                    c.startswith("invariant_") for c in t.columns) else t, m, s)
                for t, m, s in runs]
    if kind in ("overview", "energy"):
        runs = [(_with_work(t, m), m, s) for t, m, s in runs]
    table, model, spec = runs[0]
    path_xy = None
    if kind == "path":
        if model is None:
            raise InputError("--kind path needs the system: give --system FILE, or plot the "
                             "system itself", Location("--kind"))
        from lagsim.analysis.kinematics import mass_paths

        path_xy = mass_paths(model, table)
    info = None
    if model is not None:
        from lagsim.analysis.kinematics import quantities
        from lagsim.symbolic.invariants import energy_conserved

        info = replace(quantities(spec, model),
                       energy_change=energy_conserved(model, model.substitutions()))
    if title is None and model is not None:
        title = model.name
    cols = [c.strip() for c in columns.split(",")] if columns else None
    wrapped = _wrap_columns(wrap, info, table)
    inputs: Any = table
    if len(runs) > 1:
        names = labels or _input_labels(sources)
        inputs = [(name, run[0]) for name, run in zip(names, runs)]
    options = {"kind": kind, "columns": cols, "x": x, "y": y, "title": title,
               "path_xy": path_xy, "info": info, "wrap": wrapped}
    fig = plotting.make_figure(inputs, **options)
    if target is None:
        plotting.show(inputs, **options)
        return
    plotting.save_figure(fig, target, dpi)


def _with_work(table: Any, model: Any) -> Any:
    """The table with the work of the non-conservative forces (:mod:`lagsim.analysis.balance`) when
    the
    system does not conserve h, for the energy balance; a line on stderr when it cannot be had."""
    if model is None:
        return table
    from lagsim.analysis.balance import table_with_work

    table, note = table_with_work(table, model)
    if note:
        _warn(f"{note}; the energy panel shows its change, not the balance")
    return table


def _input_labels(sources: Sequence[str]) -> list[str]:
    """Legend labels of several INPUTs: their file names, made unique by their folders."""
    names = [Path(s).name if s != "-" else "stdin" for s in sources]
    if len(set(names)) < len(names):
        names = [s if s != "-" else "stdin" for s in sources]
    return names


def _wrap_columns(wrap: str | None, info: Any, table: Any) -> list[str]:
    """The columns ``--wrap`` wraps: those named, or the system's angle coordinates."""
    if wrap is None:
        return []
    if wrap.strip():
        names = [c.strip() for c in wrap.split(",") if c.strip()]
        for name in names:
            table.column(name)
        return names
    if info is None:
        raise InputError("--wrap without names needs the system to know which coordinates are "
                         "angles: give --system FILE, or name them (--wrap theta1,theta2)",
                         Location("--wrap"))
    angles = [q for q in table.coordinates if info.dimensions.get(q) == "angle"]
    if not angles:
        raise InputError("--wrap: the system has no angle coordinates (none enters the mass "
                         "positions only through sin and cos); name the columns to wrap",
                         Location("--wrap"))
    return angles


def _plot_sweep(source: str, kind: str, x: str | None, y: str | None, title: str | None,
                target: Any, dpi: int, system: str | None, kwargs: dict[str, Any],
                overrides: dict[str, float], initial: dict[str, float]) -> bool:
    """The kinds of :mod:`lagsim.viz.sweep_figures` (issue 12): a sweep's table (chosen by itself
    for
    a table whose first column is run), or Poincaré sections of a file, a folder of runs, or a
    system simulated with --section. False when the plot is none of these."""
    from lagsim.viz import sweep_figures as plot_sweep

    if kind not in plot_sweep.KINDS and not (kind == "overview"
                                             and plot_sweep.is_sweep_table(source)):
        return False
    from lagsim.viz.figures import save_figure

    table = None
    if kind == "poincare" and not Path(source).is_dir() and (
            source == "-" or not _looks_like_csv(source)):
        table = _table_and_model(source, system, _flags(kwargs), overrides, initial)[0]
    kind = "poincare" if kind == "poincare" else "sweep"
    if target is None:
        import matplotlib.pyplot as plt

        plot_sweep.draw(plt.figure(layout="constrained"), kind, source, x, y, title, table)
        plt.show()
        return True
    save_figure(plot_sweep.make_figure(kind, source, x, y, title, table), target, dpi)
    return True


@main.command(epilog=_example("animate"))
@click.argument("source", default="-", metavar="[INPUT]", shell_complete=complete_system)
@click.option("--system", metavar="FILE", help="The system the CSV came from (needed for a CSV); "
              "its parameters must be the run's (give them with --set): the CSV's energy and "
              "residual columns are checked.")
@click.option("-o", "--output", required=True, metavar="FILE.gif|FILE.mp4",
              help="The animation; - writes a GIF to stdout.")
@click.option("--fps", type=click.IntRange(min=1, max=120), default=30, show_default=True)
@click.option("--frames", type=click.IntRange(min=2), default=None, metavar="N",
              help="Frames to draw, evenly over the run, shown at --fps (a time-lapse or a "
                   "slow motion) [default: --fps per simulated second].")
@click.option("--trail", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
              help="Seconds of fading trail behind each mass.")
@click.option("--dpi", type=click.IntRange(min=10, max=600), default=100, show_default=True,
              help="Resolution of the frames (lower makes a smaller file).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@simulate_options
def animate(source: str, system: str | None, output: str, fps: int, frames: int | None,
            trail: float, dpi: int, force: bool, overrides: dict[str, float],
            initial: dict[str, float], **kwargs: Any) -> None:
    """Animate the masses of a system: dots, rods, a fading trail, a clock and gravity.

    INPUT is a system (a YAML path or a bundled name), simulated first with its own simulate:
    settings and the simulate options below; or a CSV file of `lagsim simulate` (- or nothing:
    on standard input) together with --system naming the system it came from.

    Each frame shows the masses as dots, a rod between two masses (or a mass and the origin)
    whose distance stays fixed, a spring where the file declares one (springs:) or its
    potential has a term k/2*(|r1 - r2| - l0)**2, the trail of the last --trail seconds through
    every sample, the clock, and an arrow along the file's gravity.
    """
    from lagsim.analysis.kinematics import gravity_direction, mass_paths, rods, springs
    from lagsim.output.io import check_output
    from lagsim.viz.animate import animate as make_animation
    from lagsim.viz.animate import check_animation_output, check_frames, frame_count

    if frames is not None:
        check_frames(frames, fps)
    target = check_animation_output(check_output(
        output, binary=True, inputs=_inputs(force, (source, "INPUT"), (system, "--system"))))
    def planned(options: Any) -> None:
        """Refuse too many frames before simulating (issue 32: `--t-end 20000` simulated
        20000 s, then was refused); a run that may stop early is counted after it ran."""
        if frames is None and options.stop_when is None:
            frame_count(options.t_start, options.t_end, fps)

    table, model, spec = _table_and_model(source, system, _flags(kwargs), overrides, initial,
                                          planned)
    if model is None:
        raise InputError("animating a CSV needs the system it came from: add --system FILE",
                         Location("--system"))
    paths = mass_paths(model, table)
    progress = _Progress("animating")
    try:
        drawn = make_animation(table, paths, rods(model, paths), target, fps=fps, trail=trail,
                               title=model.name, dpi=dpi, gravity=gravity_direction(spec),
                               springs=springs(spec, model), progress=progress, frames=frames)
    finally:
        progress.close()
    _warn(f"wrote {'standard output' if target.kind == 'stdout' else output} ({drawn} frames)")


# --- analysis (issue 10): `lagsim equilibria`, `lagsim modes` ---------------------------------


def _analysis_spec(file: str, overrides: dict[str, float]) -> tuple[Any, Any]:
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import build_model

    spec = load_spec(file, overrides)
    return spec, build_model(spec)


def _report_out(report: Any, fmt: str) -> None:
    import json

    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(report.to_text(), nl=False)


@main.command(epilog=_example("equilibria"))
@click.argument("file", default="-", metavar="[FILE|-]", shell_complete=complete_system)
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text",
              show_default=True, help="text for a terminal, json for scripts.")
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              callback=_assignments("--set"), help="Override a parameter's value.")
def equilibria(file: str, fmt: str, overrides: dict[str, float]) -> None:
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
    from lagsim.analysis.equilibria import find_equilibria

    spec, model = _analysis_spec(file, overrides)
    _report_out(find_equilibria(spec, model), fmt)


@main.command(epilog=_example("modes"))
@click.argument("file", default="-", metavar="[FILE|-]", shell_complete=complete_system)
@click.option("--at", "at", default="equilibrium", show_default=True, metavar="POINT",
              help="'equilibrium' (the stable one nearest the initial state, else the "
                   "nearest; the report says which) or a point such as "
                   "\"theta1=0, theta2=pi\" (other coordinates at their initial values), which "
                   "must be an equilibrium to 1e-9.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text",
              show_default=True, help="text for a terminal, json for scripts.")
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              callback=_assignments("--set"), help="Override a parameter's value.")
@click.option("--plot", "draw", is_flag=True,
              help="Draw each mode shape (systems with masses) to -o FILE.")
@click.option("-o", "--output", metavar="FILE", help="Image file for --plot (png, svg, pdf).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
def modes(file: str, at: str, fmt: str, overrides: dict[str, float], draw: bool,
          output: str | None, force: bool) -> None:
    """Print the small oscillations of FILE about an equilibrium.

    M0 δq̈ + D δq̇ + K δq = 0 on the tangent space of the constraints: natural frequencies
    (rad/s and Hz), damping ratios, stability and mode shapes in the file's coordinates.
    """
    from lagsim.analysis.modes import normal_modes

    target = None
    if draw:
        from lagsim.output.io import check_output
        from lagsim.viz import figures as plotting

        if output is None or output == "-":
            raise InputError("--plot needs -o FILE (png, svg or pdf); standard output carries "
                             "the report", Location("--plot"))
        target = check_output(output, formats=plotting.FORMATS, binary=True,
                              inputs=_inputs(force, (file, "FILE")))
    elif output is not None:
        raise InputError("-o is the image of --plot; add --plot, or drop -o",
                         Location("--output"))
    spec, model = _analysis_spec(file, overrides)
    report = normal_modes(spec, model, at)
    if target is not None:
        from lagsim.viz.figures import save_figure
        from lagsim.viz.mode_figures import mode_figure

        save_figure(mode_figure(spec, model, report), target)
    _report_out(report, fmt)


def _point(text: str, spec: Any, option: str) -> dict[str, float]:
    from lagsim.analysis.rest import parse_point

    return parse_point(text, spec, spec.coordinates, option)


@main.command(epilog="\b\nExamples:\n  lagsim action seed_10_2.yaml --path \"q1=2, q2=t\" "
              "--t-start 0 --t-end 1\n  lagsim simulate pendulum | lagsim action pendulum --csv -"
              "\n  lagsim action free_mass_cartesian --stationary --from \"x=0, y=0\" "
              "--to \"x=1, y=0\" --t-end 1")
@click.argument("file", metavar="FILE", shell_complete=complete_system)
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
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text",
              show_default=True)
@click.option("--set", "overrides", multiple=True, metavar="NAME=VALUE",
              callback=_assignments("--set"), help="Override a parameter's value.")
@click.option("--force", is_flag=True, help=FORCE_HELP)
def action(file: str, path: str | None, csv: str | None, stationary: bool, start: str | None,
           end: str | None, t_start: float, t_end: float, samples: int, output: str, fmt: str,
           overrides: dict[str, float], force: bool) -> None:
    """The action S = ∫ L dt of FILE along a path, a simulated run, or the stationary path.

    Along --path, exactly when SymPy integrates it (printed as a fraction and a float),
    numerically otherwise; along --csv by corrected trapezoids on the samples, with an error
    estimate; with --stationary the Euler–Lagrange boundary-value problem (scipy's solve_bvp).
    """
    chosen = [name for name, given in (("--path", path), ("--csv", csv),
                                       ("--stationary", stationary)) if given]
    if len(chosen) != 1:
        raise InputError("give one of --path, --csv and --stationary"
                         + (f" (not {' and '.join(chosen)})" if chosen else ""),
                         Location(chosen[1] if len(chosen) > 1 else "--path"))
    if file == "-" and csv == "-":
        raise InputError("FILE and --csv cannot both be standard input", Location("--csv"))
    spec, model = _analysis_spec(file, overrides)
    if path is not None:
        from lagsim.analysis.action import path_action

        _report_out(path_action(spec, model, path, t_start, t_end), fmt)
        return
    if csv is not None:
        from lagsim.analysis.action import ActionReport, table_action
        from lagsim.output.io import read_csv

        table = read_csv(csv)
        running = table_action(model, table)
        t = table.column("t")
        _report_out(ActionReport(model.name, float(t[0]), float(t[-1]),
                                 float(running.values[-1]), "",
                                 f"corrected trapezoids on {len(t)} samples", running.error),
                    fmt)
        return
    from lagsim.analysis.action import stationary_path
    from lagsim.output.io import check_output, write_csv

    for option, value in (("--from", start), ("--to", end)):
        if value is None:
            raise InputError(f"--stationary needs {option} \"Q=VALUE, ...\"", Location(option))
    target = check_output(output, inputs=_inputs(force, (file, "FILE")))
    found = stationary_path(spec, model, _point(start, spec, "--from"),
                            _point(end, spec, "--to"), t_start, t_end, samples)
    write_csv(found.columns(), found.as_array(), target)
    _warn(f"stationary path: S = {found.S:.15g} (quadrature error estimate {found.error:.1e}; "
          f"solve_bvp residual {found.residual:.1e})")


# --- many runs (issue 12): `lagsim sweep` -------------------------------------------------------


def _debug() -> bool:
    """Whether ``--debug`` was given (the group's flag, kept in the root context's ``obj``)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and (ctx.find_root().obj or {}).get("debug"))


@main.command(epilog="\b\nExample:\n  lagsim sweep pendulum --grid theta=0.1:3:50 --stop-when "
              "theta_dot --summary 'period=2*final(t)' -o period.csv")
@click.argument("file", metavar="FILE", shell_complete=complete_system)
@click.option("--grid", "grids", multiple=True, metavar="NAME=START:STOP:COUNT",
              help="COUNT equally spaced values of a parameter or initial value (ends included).")
@click.option("--values", "value_lists", multiple=True, metavar="NAME=V1,V2,...",
              help="The listed values of a parameter or initial value.")
@click.option("--random", "randoms", multiple=True, metavar="NAME=LOW:HIGH",
              help="--runs uniform draws in [LOW, HIGH), reproducible from --seed.")
@click.option("--runs", type=int, default=None, metavar="N", help="How many --random draws.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --random draws.")
@click.option("--table", "table_file", metavar="FILE.csv",
              help="A CSV of runs: a header of names, one run per row.")
@click.option("--summary", "summaries", multiple=True, metavar="[NAME=]EXPR",
              help="A column of the table: an expression in the run's CSV columns reduced with "
                   "max, min, mean, final or first, e.g. 'amp=max(abs(theta))'.")
@click.option("--scheduler", metavar="ADDRESS",
              help="A Dask scheduler (tcp://HOST:8786, or tls://HOST:PORT with Dask's "
                   "distributed.comm.tls settings), or 'synchronous' for this process alone "
                   "[default: --workers processes of this machine, which open no port].")
@click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker processes on this machine [default: one per core].")
@click.option("--save-trajectories", "save", metavar="DIR",
              help="Write each run's CSV as DIR/run_<index>.csv (DIR ending .parquet: one "
                   "Parquet file per run, a dataset).")
@simulate_options
@click.option("-o", "--output", default="-", metavar="FILE",
              help="The table: CSV (- for stdout), or Parquet when FILE ends .parquet.")
@click.option("--force", is_flag=True, help=FORCE_HELP)
def sweep(file: str, grids: tuple[str, ...], value_lists: tuple[str, ...],
          randoms: tuple[str, ...], runs: int | None, seed: int, table_file: str | None,
          summaries: tuple[str, ...], scheduler: str | None, workers: int | None,
          save: str | None, output: str, force: bool, overrides: dict[str, float],
          initial: dict[str, float], **kwargs: Any) -> None:
    """Simulate FILE once for every combination of the swept values, on this machine's cores
    or a Dask cluster, and write one row per run: the values, the final state, the largest
    constraint residuals, the energy drift (or, when h is not conserved, its change), the stop
    time of --stop-when and each --summary.

    Every run is `lagsim simulate` with its values (bit for bit). A run that fails is recorded
    in the error column and the sweep goes on; then the exit status is 1.
    """
    from lagsim.errors import IntegrationError
    from lagsim.output.io import check_output
    from lagsim.spec.options import SimulateOptions
    from lagsim.spec.system import parse_spec, read_source
    from lagsim.sweep import core as sw
    from lagsim.sweep.summary import parse_summary

    inputs = _inputs(force, (file, "FILE"), (table_file, "--table"))
    target = check_output(output, formats=sw.FORMATS, inputs=inputs)
    fmt = target.format(sw.FORMATS)
    if fmt == "parquet" and not sw.have_parquet():
        raise InputError(sw.PARQUET_MISSING, Location("-o"))
    if runs is not None and not randoms:
        raise InputError("--runs counts the --random draws; give --random NAME=LOW:HIGH too",
                         Location("--runs"))
    if scheduler is not None and workers is not None:
        alone = scheduler in sw.LOCAL_SCHEDULERS
        raise InputError(f"--workers sizes the local cluster; --scheduler {scheduler} "
                         f"{'runs in this process alone' if alone else 'has its own workers'}",
                         Location("--workers"))
    if scheduler is not None and scheduler not in sw.LOCAL_SCHEDULERS:
        sw.scheduler_address(scheduler)
    text, label, stem = read_source(file)
    spec = parse_spec(text, label, stem, overrides, initial)
    flags = _flags(kwargs)
    stops = SimulateOptions.resolve(spec.simulate, flags).stop_when is not None
    axes = [*(sw.grid_axis(g) for g in grids), *(sw.values_axis(v) for v in value_lists)]
    if randoms or runs is not None:
        axes.append(sw.random_axis(randoms, runs, seed))
    if table_file is not None:
        axes.append(sw.table_axis(table_file))
    fixed = {**{k: "--set" for k in overrides}, **{k: "--init" for k in initial}}
    plan = sw.plan(axes, [p.name for p in spec.parameters], spec.coordinates, fixed)
    job = sw.Job(text, label, stem, flags, dict(overrides), dict(initial), plan.names,
                 runs=len(plan))
    coordinates = spec.coordinates
    constraints = [c.name for c in spec.constraints]
    taken = sw.columns(job, coordinates, constraints)
    parsed: list[Any] = []
    for raw in summaries:
        parsed.append(parse_summary(raw, sw.trajectory_columns(spec),
                                       [p.name for p in spec.parameters],
                                       taken + [s.name for s in parsed]))
    if save is not None:
        save = sw.check_save_folder(save)
        _check_run_files(save, len(plan), inputs)
    job = replace(job, summaries=tuple(parsed), save=save).keyed()
    bar = _SweepProgress(len(plan))
    try:
        rows = sw.execute(job, plan, scheduler, workers, bar, quiet=not _debug())
    finally:
        bar.close()
    notes = [(i, r.notes) for i, r in enumerate(rows) if r.notes]
    if notes:
        for note in notes[0][1]:
            _warn(f"run {notes[0][0]}: {note}")
        if len(notes) > 1:
            _warn(f"({len(notes) - 1} more runs had notes like these)")
    header, data, errors = sw.table(job, plan, rows, coordinates, constraints,
                                    sw.energy_conserved(job), stops)
    sw.write_table(header, data, errors, target, fmt)
    failed = [(i, e) for i, e in enumerate(errors) if e]
    if failed:
        first, why = failed[0]
        raise IntegrationError(f"{len(failed)} of {len(plan)} runs failed; their rows say why "
                               f"in the error column (run {first}: {why})")


def _check_run_files(folder: str, runs: int, inputs: Sequence[tuple[str, str]]) -> None:
    """Before any run: the folder of --save-trajectories takes a file (the name of run 0 is
    probed), and no input is one of the run files it will get."""
    import re

    from lagsim.output.io import check_output
    from lagsim.sweep import core as sw

    check_output(sw.run_file(folder, 0, runs), "--save-trajectories")
    for path, what in inputs:
        found = re.fullmatch(r"run_([0-9]+)\.(?:csv|parquet)", Path(path).name)
        if found is not None and int(found[1]) < runs:
            check_output(sw.run_file(folder, int(found[1]), runs), "--save-trajectories",
                         inputs=((path, what),))


class _SweepProgress:
    """A bar of runs done on stderr, only on a terminal, once the sweep has taken a second."""

    def __init__(self, total: int) -> None:
        self.enabled = sys.stderr.isatty()
        self.start = time.monotonic()
        self.total = total
        self.done = 0
        self.bar: Any = None

    def __call__(self, count: int) -> None:
        self.done += count
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < 1.0:
                return
            self.bar = click.progressbar(length=self.total, label="runs", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(self.done - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


# --- editor and shell support (issue 13): `lagsim schema`, `lagsim completion` -------------------


@main.command(epilog="\b\nExample:\n  lagsim schema > lagsim-system.schema.json")
def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of the system file, for editors.

    Save it, and name it on the first line of a system file for a YAML language server
    (docs/format.md, "Editor support"):

    \b
    # yaml-language-server: $schema=lagsim-system.schema.json
    """
    from lagsim.spec.schema import schema_text

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
    from lagsim.numeric import cache

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
    from lagsim.numeric import cache

    try:
        folder, removed = cache.clear()
    except cache.Unusable as exc:
        raise _cache_folder_error(exc) from None
    click.echo(f"removed {removed} compiled model{'s' * (removed != 1)} from {folder}")


if __name__ == "__main__":
    main()
