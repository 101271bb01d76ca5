"""The stages of a cold build, shown on a terminal (issue 29: the 32-chain's first run printed
nothing for 15 s, then its progress bar jumped from 0 to 100 %).

Deriving M and F, generating the C source and compiling it can take seconds to minutes for a
large model, before a run's progress bar has anything to count. Inside :func:`shown` (the
``lagsim`` command, :class:`lagsim.cli.group.LagsimGroup`), each :func:`stage` rewrites one status
line on stderr, ``lagsim: building <name>: <stage>… (<elapsed> s)``, when stderr is a terminal;
the line is erased when the build ends. In a pipe or a file, and for a program using the API,
nothing is written.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

_ON: list[bool] = []
"""Non-empty inside :func:`shown` when stderr is a terminal."""
_NAME: list[str] = []
"""What is being built, innermost last (:func:`building`)."""
_LINE: list[float] = []
"""When the status line was first written, while one is on the screen."""


def _terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):
        return False


@contextmanager
def shown() -> Iterator[None]:
    """Within the block, :func:`stage` writes to stderr when it is a terminal."""
    _ON.append(_terminal())
    try:
        yield
    finally:
        _ON.pop()
        done()


@contextmanager
def building(name: str) -> Iterator[None]:
    """The stages within the block are those of building ``name``; the status line is erased
    when the block ends."""
    _NAME.append(name)
    try:
        yield
    finally:
        _NAME.pop()
        done()


def stage(what: str) -> None:
    """Show that the build is at stage ``what`` (on a terminal, inside :func:`shown`)."""
    if not (_ON and _ON[-1]):
        return
    if not _LINE:
        _LINE.append(time.monotonic())
    elapsed = time.monotonic() - _LINE[0]
    name = _NAME[-1] if _NAME else "the model"
    sys.stderr.write(f"\r\033[Klagsim: building {name}: {what}… ({elapsed:.0f} s)")
    sys.stderr.flush()


def done() -> None:
    """Erase the status line, if one is shown."""
    if _LINE:
        _LINE.clear()
        if _terminal():
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
