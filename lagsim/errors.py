"""One exception root for lagsim; each concrete error also inherits the matching builtin.

The CLI decides the exit status in one place: :class:`InputError` (bad user input) exits 2,
:class:`IntegrationError` (a run that failed) exits 1.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
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


class LagsimError(Exception):
    """Root of every error lagsim raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return self.message
        return f"{self.location}: {self.message}"


class InputError(LagsimError, ValueError):
    """The user's file, flags or data are wrong; the message says how to mend them."""

    exit_code = 2


class IntegrationError(LagsimError, RuntimeError):
    """A simulation failed: step size underflow, NaN, a singular matrix mid-run."""

    exit_code = 1

    def __init__(self, message: str, time: float | None = None) -> None:
        super().__init__(message if time is None else f"at t = {time!r}: {message}")
        self.time = time
