"""What a long command shows on a terminal's stderr while it works: a status line naming the
stage of a derivation, a progress bar of a run or an animation, a bar of a sweep's runs. Each
appears only on a terminal, once the work has taken about a second."""

from __future__ import annotations

import sys
import time
from typing import Any

import click


class Status:
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


class Progress:
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


class SweepProgress:
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
