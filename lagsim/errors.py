"""One exception root for lagsim; each concrete error also inherits the matching builtin.

The CLI decides the exit status in one place: :class:`InputError` (bad user input) exits 2,
:class:`IntegrationError` (a run that failed) exits 1. Every error prints as one line with its
control characters escaped (:func:`printable`), so a name or a file path with escape sequences
cannot drive the terminal (issue 15, "Names that look alike").
"""

from __future__ import annotations

import contextlib
import signal
import sys
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Literal

from lagsim.records import record

DEBUG: ContextVar[bool] = ContextVar("lagsim_debug", default=False)
"""Whether the running ``lagsim`` command was given ``--debug`` (set by the command line for the
length of a command, :meth:`lagsim.cli.group.LagsimGroup.invoke`; False for the Python API):
the stages then show the notes they keep for debugging, such as the symbolic engine's
fallbacks."""

_BIDI = frozenset(map(chr, (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                            *range(0x2066, 0x206A))))
"""The bidirectional-text controls, which reorder what a terminal shows (CVE-2021-42574)."""


def is_control(ch: str) -> bool:
    """Whether character ``ch`` acts on a terminal instead of showing: C0/C1 controls (escape,
    newline, ...), line and paragraph separators, and bidirectional controls."""
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI


def printable(text: str) -> str:
    """``text`` with each control character (:func:`is_control`) written as Python writes it in a
    string literal: ``\\x1b``, ``\\n``, ``\\u202e``."""
    if not any(map(is_control, text)):
        return text
    return "".join(repr(ch)[1:-1] if is_control(ch) else ch for ch in text)


SAID: set[str] = set()
"""The topics :func:`say_once` has spoken of in this process; ``SAID.clear()`` lets each be said
again."""


def say_once(topic: str, message: str, detail: str | None = None) -> None:
    """``lagsim: MESSAGE`` on stderr, once per process and topic, with ``detail`` on a second
    line (``  reason: …``) when given: the notes every stage may give (a fallback taken, a limit
    reached) without stopping."""
    if topic in SAID:
        return
    SAID.add(topic)
    line = f"lagsim: {printable(message)}"
    if detail:
        line += f"\n  reason: {detail.strip()}"
    print(line, file=sys.stderr, flush=True)


_NOTED: list[int] = []
"""The signals that asked the running ``lagsim`` command to end (:func:`note_signal`)."""


def note_signal(signum: int) -> None:
    """Record that signal ``signum`` asked the running command to end. Its handler raises an
    exception too, but Python loses an exception raised where a finalizer or a weakref callback
    runs (it prints "Exception ignored in ..." and goes on): the record still stops the commit
    of an output (:func:`lagsim.output.io.replacement`) and sets the exit status
    (:func:`lagsim.cli.exits.handled`)."""
    _NOTED.append(signum)


def noted_signal() -> int | None:
    """The first signal :func:`note_signal` recorded since :func:`forget_signals`, or None."""
    return _NOTED[0] if _NOTED else None


def forget_signals() -> None:
    """Clear the record of :func:`note_signal` (a command's start and end)."""
    _NOTED.clear()


@contextlib.contextmanager
def signals_blocked(numbers: Sequence[int]) -> Iterator[None]:
    """Hold the signals ``numbers`` pending in the kernel for the block (the calling thread's
    mask, POSIX ``pthread_sigmask``; nothing where there is none), then deliver them. A handler
    changed within the block cannot lose one: CPython drops a signal its C handler caught when,
    before the Python handler ran, the handler became SIG_DFL or SIG_IGN ("Signal N ignored due
    to race condition", Modules/signalmodule.c); held, the signal meets the new disposition."""
    if not numbers or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, numbers)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@record
class Location:
    """Where a value sits in a user's file: 1-based line and column."""

    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.line is None:
            return self.file
        if self.column is None:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.column}"


@record
class Subject:
    """The part of the user's system an error is about, for the caller that knows where the
    parts stand in the file (:class:`lagsim.run.problem.SourceMap`) when the code that raises does
    not: ``kind`` is ``"constraint"`` or ``"coordinate"``, ``name`` its name as declared."""

    kind: Literal["constraint", "coordinate"]
    name: str


class LagsimError(Exception):
    """Root of every error lagsim raises on purpose. ``location`` is where in the user's input
    the error stands; ``about`` the part it concerns when the raiser cannot locate it."""

    exit_code = 1

    def __init__(self, message: str, location: Location | None = None,
                 about: Subject | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.about = about

    def __str__(self) -> str:
        if self.location is None:
            return printable(self.message)
        return printable(f"{self.location}: {self.message}")

    def reworded(self, say: Callable[[str], str]) -> LagsimError:
        """This error, of the same class and with the same attributes, with ``say`` applied to
        its message and to a location that is no place in a file (a flag, ``--set``): how the
        Python API names its keywords where the command line names flags
        (:meth:`lagsim.spec.options.Naming.say`)."""
        made = type(self).__new__(type(self))
        made.__dict__.update(self.__dict__)
        made.message = say(self.message)
        where = self.location
        if where is not None and where.line is None:
            made.location = Location(say(where.file))
        made.args = (made.message, *self.args[1:])
        return made


class InputError(LagsimError, ValueError):
    """The user's file, flags or data are wrong; the message says how to mend them."""

    exit_code = 2


class IntegrationError(LagsimError, RuntimeError):
    """A simulation failed: step size underflow, NaN, a singular matrix mid-run."""

    exit_code = 1

    def __init__(self, message: str, time: float | None = None) -> None:
        super().__init__(message if time is None else f"at t = {time!r}: {message}")
        self.time = time
