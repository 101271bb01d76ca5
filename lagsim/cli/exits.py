"""Exit codes, the one-line error printer, signals and ``--debug`` of the ``lagsim`` command.

Data goes to stdout, diagnostics to stderr; the exit status is decided in one place
(:func:`handled`, called by :meth:`lagsim.cli.group.LagsimGroup.invoke`): 2 for bad input, 1
for a failed run or a failed write (a full disk: one line, no traceback), 130 for Ctrl-C, 143
for SIGTERM and 129 for SIGHUP (each cleans up like Ctrl-C: no temporary file stays), and 141
(128 + SIGPIPE, what a shell reports for ``yes | head``) when the reader of stdout went away:
``lagsim systems | head -1`` ends quietly, nothing on stderr.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TextIO

import click

from lagsim.errors import (
    LagsimError,
    forget_signals,
    note_signal,
    noted_signal,
    printable,
    signals_blocked,
)

EXIT_PIPE = 128 + 13

WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS, errno.EBADF}
"""The errors of a failed write to stdout (no file name): "cannot write standard output"."""


class UserError(click.ClickException):
    """A :class:`LagsimError` shown as one line, ``lagsim: error: FILE:LINE:COL: ...``."""

    def __init__(self, error: LagsimError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]

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
    note_signal(signum)
    raise Terminated(signum)


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise :class:`Terminated` for the length of a command, and
    are recorded (:func:`lagsim.errors.note_signal`) so that one whose exception Python lost
    still ends the command (:func:`handled`); a signal the caller ignores (``nohup``) stays
    ignored. The handlers are swapped with the signals held
    (:func:`lagsim.errors.signals_blocked`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = ("SIGINT", "SIGTERM", "SIGHUP")
    numbers = [getattr(signal, n) for n in names if hasattr(signal, n)]
    old = {s: signal.getsignal(s) for s in numbers}
    forget_signals()
    with signals_blocked(numbers):
        for s, handler in old.items():
            if handler is not signal.SIG_IGN:
                signal.signal(s, _terminate)
    try:
        yield
    finally:
        with signals_blocked(numbers):
            for s, handler in old.items():
                if handler is not signal.SIG_IGN:
                    signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        forget_signals()


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
def stdout_present() -> Iterator[None]:
    """``sys.stdout`` is a :class:`_ClosedStdout` for the length of a command when Python set
    it to None (descriptor 1 closed)."""
    if sys.stdout is not None:
        yield
        return
    sys.stdout = _ClosedStdout()
    try:
        yield
    finally:
        sys.stdout = None


def _flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


def _flush_or_silence() -> None:
    """Flush what stdout holds; if that fails (closed pipe, full disk), drop it quietly: the
    error being reported matters more."""
    try:
        _flush_stdout()
    except (OSError, ValueError):
        _silence_stdout()


def _end_by_signal(ctx: click.Context, signum: int) -> None:
    """``lagsim: interrupted`` (SIGINT) or ``lagsim: terminated by NAME`` on stderr, exit
    128 + ``signum``."""
    name = "interrupted" if signum == signal.SIGINT else \
        f"terminated by {signal.Signals(signum).name}"
    _flush_or_silence()
    click.echo(f"lagsim: {name}", err=True)
    ctx.exit(128 + signum)


def _end_if_signalled(ctx: click.Context) -> None:
    """End by the signal noted during the command (:func:`lagsim.errors.note_signal`), if one
    came: an error that follows it is its consequence (its exception turned into another by
    the extension it was raised in, such as a SystemError of a C call whose Python callback it
    interrupted), not a bug of lagsim."""
    signum = noted_signal()
    if signum is not None:
        _end_by_signal(ctx, signum)


def handled(ctx: click.Context, command: Callable[[], Any]) -> Any:
    """Run ``command`` (the group's invocation of a command), turning what it raises into
    lagsim's one line on stderr and exit status (the module's docstring); with ``--debug``
    (``ctx.params``) a LagsimError, an OSError or a bug raises with its traceback."""
    try:
        result = command()
        _flush_stdout()
        signum = noted_signal()
        if signum is not None:
            raise Terminated(signum)
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
        _end_by_signal(ctx, getattr(exc, "signum", signal.SIGINT))
    except click.UsageError as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(exc) from None
    except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
        raise
    except OSError as exc:
        if ctx.params.get("debug"):
            raise
        _end_if_signalled(ctx)
        _flush_or_silence()
        reason = exc.strerror or str(exc)
        if exc.filename:
            message = f"{exc.filename!r}: {reason}"
        elif exc.errno in WRITE_ERRORS:
            message = f"cannot write standard output: {reason}"
        else:
            message = reason
        click.echo(printable(f"lagsim: error: {message}"), err=True)
        ctx.exit(1)
    except Exception as exc:
        if ctx.params.get("debug"):
            raise
        _end_if_signalled(ctx)
        _flush_or_silence()
        click.echo(printable(f"lagsim: error: internal error ({type(exc).__name__}: {exc}); "
                             "this is a bug in lagsim: please report it with the output of "
                             "--debug"), err=True)
        ctx.exit(1)


def warn(message: str) -> None:
    """One ``lagsim: MESSAGE`` line on stderr, control characters escaped."""
    click.echo(f"lagsim: {printable(message)}", err=True)


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    """A library's warning (scipy, NumPy, matplotlib) as lagsim's one warning line, on one line
    and with control characters escaped, instead of Python's path, line and source."""
    text = " ".join(str(message).split())
    warn(f"warning: {text} ({category.__name__})")


@contextlib.contextmanager
def warnings_routed(ctx: click.Context) -> Iterator[None]:
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

