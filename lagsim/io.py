"""CSV in and out for lagsim trajectories (docs/architecture.md, "trajectory.py / io.py").

The CSV layout is the one issue 3 fixes: ``t``, each coordinate, each ``<q>_dot``, each
``lambda_<c>`` (seed 001 §10.7, ``M q̈ = F + Aᵀλ``), each ``residual_<c>`` (φ for holonomic, a·q̇ + b
for velocity constraints), each ``residual_<c>_dot`` (φ̇, holonomic only; seed 003's c(q) = 0 and
ċ = 0), then ``energy`` (h = q̇·∂L/∂q̇ − L, seed 001).

Public API::

    write_csv(columns: Sequence[str], data: numpy.ndarray, dest: str | Path) -> None
    read_csv(src: str | Path) -> Table
    atomic_output(path: str | Path) -> ContextManager[Path]

Every float is written as ``repr(float(x))``, the shortest text that reads back to the same
double, so ``read_csv(write_csv(...))`` is bit-exact.  ``-`` means stdout / stdin.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lagsim.errors import InputError, Location

__all__ = ["Table", "atomic_output", "read_csv", "write_csv"]

STDIN_NAME = "<stdin>"
_CHUNK_ROWS = 4096


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds.

    The temporary name keeps the extension of ``path`` (writers that pick the format from the
    suffix, such as matplotlib and Pillow, see the right one).  On any exception the temporary
    file is removed, so a failed write never leaves a blank or half-written ``path``.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=f".tmp{target.suffix}", dir=folder
        )
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise InputError(
            f"cannot write {str(target)!r}: {reason} (folder {str(folder)!r})",
            Location(str(target)),
        ) from exc
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def _lines(columns: Sequence[str], data: np.ndarray) -> Iterator[str]:
    yield ",".join(columns) + "\n"
    for start in range(0, data.shape[0], _CHUNK_ROWS):
        block = data[start : start + _CHUNK_ROWS].tolist()
        yield "".join(",".join(map(repr, row)) + "\n" for row in block)


def _check_table(columns: Sequence[str], data: np.ndarray) -> np.ndarray:
    array = np.asarray(data, dtype=float)
    if array.ndim != 2 or array.shape[1] != len(columns):
        raise ValueError(
            f"data of shape {array.shape} does not match {len(columns)} columns {list(columns)}"
        )
    bad = [name for name in columns if not name or "," in name or "\n" in name]
    if bad:
        raise ValueError(f"column names must be non-empty and free of ',' and newlines: {bad}")
    return array


def _write_stdout(lines: Iterator[str]) -> None:
    """Write to stdout; a closed pipe (``| head``) ends quietly, as the Python docs advise."""
    try:
        for chunk in lines:
            sys.stdout.write(chunk)
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            sys.stdout = open(os.devnull, "w")
        return


def write_csv(columns: Sequence[str], data: np.ndarray, dest: str | Path) -> None:
    """Write a header line and one row per sample, each float as ``repr(float(x))``.

    ``dest == "-"`` writes to stdout; otherwise the file is written atomically (temporary file in
    the same folder, then ``os.replace``), so a failure leaves no file behind.
    """
    array = _check_table(columns, data)
    if str(dest) == "-":
        _write_stdout(_lines(columns, array))
        return
    with atomic_output(dest) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as out:
        out.writelines(_lines(columns, array))


@dataclass(frozen=True, eq=False)
class Table:
    """A CSV read back: column names, an (N, k) read-only float array, and where it came from."""

    columns: tuple[str, ...]
    data: np.ndarray
    source: str

    def __post_init__(self) -> None:
        if self.data.ndim != 2 or self.data.shape[1] != len(self.columns):
            raise ValueError(
                f"data of shape {self.data.shape} does not match {len(self.columns)} columns"
            )

    def has(self, name: str) -> bool:
        """True when the table has a column called ``name``."""
        return name in self.columns

    def column(self, name: str) -> np.ndarray:
        """The samples of column ``name``; an unknown name is an InputError listing the columns."""
        try:
            index = self.columns.index(name)
        except ValueError:
            raise InputError(
                f"unknown column {name!r}; the columns are: {', '.join(self.columns)}",
                Location(self.source),
            ) from None
        return self.data[:, index]

    @property
    def n_samples(self) -> int:
        return int(self.data.shape[0])

    @property
    def time(self) -> np.ndarray:
        return self.column("t")

    @property
    def coordinates(self) -> tuple[str, ...]:
        """Columns after ``t`` up to the first velocity, multiplier, residual or energy column."""
        start = self.columns.index("t") + 1
        names: list[str] = []
        for name in self.columns[start:]:
            if _is_derived(name):
                break
            names.append(name)
        return tuple(names)

    @property
    def velocities(self) -> tuple[str, ...]:
        """The ``<q>_dot`` columns of the coordinates, in coordinate order."""
        return tuple(f"{q}_dot" for q in self.coordinates if f"{q}_dot" in self.columns)

    @property
    def multipliers(self) -> tuple[str, ...]:
        """The ``lambda_<c>`` columns (seed 001 §10.7)."""
        return tuple(name for name in self.columns if name.startswith("lambda_"))

    @property
    def residuals(self) -> tuple[str, ...]:
        """The ``residual_<c>`` columns: φ of holonomic, a·q̇ + b of velocity constraints."""
        present = set(self.columns)
        return tuple(
            name
            for name in self.columns
            if name.startswith("residual_") and not _is_rate_of(name, present)
        )

    @property
    def residuals_dot(self) -> tuple[str, ...]:
        """The ``residual_<c>_dot`` columns (φ̇ of holonomic constraints, seed 003)."""
        present = set(self.columns)
        return tuple(
            name
            for name in self.columns
            if name.startswith("residual_") and _is_rate_of(name, present)
        )

    @property
    def position_residuals(self) -> tuple[str, ...]:
        """Position-level drift: ``residual_<c>`` of constraints that also have a ``_dot``."""
        present = set(self.columns)
        return tuple(name for name in self.residuals if f"{name}_dot" in present)

    @property
    def velocity_residuals(self) -> tuple[str, ...]:
        """Velocity-level drift: φ̇ of holonomic and a·q̇ + b of velocity constraints."""
        present = set(self.columns)
        own = tuple(name for name in self.residuals if f"{name}_dot" not in present)
        return self.residuals_dot + own

    @property
    def has_energy(self) -> bool:
        return self.has("energy")


def _is_rate_of(name: str, present: set[str]) -> bool:
    return name.endswith("_dot") and name[: -len("_dot")] in present


def _is_derived(name: str) -> bool:
    return name.endswith("_dot") or name.startswith(("lambda_", "residual_")) or name == "energy"


def _read_text(src: str | Path) -> tuple[str, str]:
    if str(src) == "-":
        return sys.stdin.read(), STDIN_NAME
    name = str(src)
    try:
        return Path(src).read_text(encoding="utf-8"), name
    except FileNotFoundError:
        raise InputError("no such file", Location(name)) from None
    except IsADirectoryError:
        raise InputError("is a folder, not a CSV file", Location(name)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not a text file ({exc.reason})", Location(name)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", Location(name)) from None


def _cells(line: str) -> list[tuple[str, int]]:
    """Split a CSV line on commas; each cell with the 1-based column where its text starts."""
    cells: list[tuple[str, int]] = []
    start = 0
    for piece in line.split(","):
        stripped = piece.lstrip()
        cells.append((stripped.rstrip(), start + 1 + len(piece) - len(stripped)))
        start += len(piece) + 1
    return cells


def _raise_row_error(line: str, columns: tuple[str, ...], where: Location) -> None:
    """Locate the first bad cell of a row that failed the fast parse, and raise there."""
    cells = _cells(line)
    width = len(columns)
    if len(cells) != width:
        col = cells[width][1] if len(cells) > width else len(line) + 1
        raise InputError(
            f"row has {len(cells)} cells, the header has {width}",
            Location(where.file, where.line, col),
        )
    for (cell, col), name in zip(cells, columns, strict=True):
        try:
            float(cell)
        except ValueError:
            raise InputError(
                f"not a number: {cell!r} in column {name!r}",
                Location(where.file, where.line, col),
            ) from None
    raise InputError("unreadable row", where)


def read_csv(src: str | Path) -> Table:
    """Read a lagsim CSV (``-`` is stdin) into a :class:`Table`.

    Errors are InputError at ``file:line:column``: empty input, duplicate or missing ``t``
    columns, a non-numeric cell, a row with the wrong number of cells, fewer than two samples.
    """
    text, source = _read_text(src)
    lines = [
        (number, line.rstrip("\r"))
        for number, line in enumerate(text.split("\n"), start=1)
        if line.strip()
    ]
    if not lines:
        raise InputError(
            "empty input: expected a CSV header line such as 't,x,x_dot'", Location(source)
        )
    header_line, header = lines[0]
    header_cells = [(name.strip('"'), col) for name, col in _cells(header)]
    seen: dict[str, int] = {}
    for index, (name, col) in enumerate(header_cells, start=1):
        if not name:
            raise InputError(f"header cell {index} is empty", Location(source, header_line, col))
        if name in seen:
            raise InputError(
                f"duplicate column name {name!r} (columns {seen[name]} and {index})",
                Location(source, header_line, col),
            )
        seen[name] = index
    columns = tuple(name for name, _ in header_cells)
    if "t" not in seen:
        raise InputError(
            f"no 't' column: a lagsim CSV starts with the time column 't' "
            f"(the header is {','.join(columns)})",
            Location(source, header_line, 1),
        )
    width = len(columns)
    rows: list[list[float]] = []
    for number, line in lines[1:]:
        parts = line.split(",")
        if len(parts) == width:
            try:
                rows.append(list(map(float, parts)))
                continue
            except ValueError:
                pass
        _raise_row_error(line, columns, Location(source, number))
    if len(rows) < 2:
        raise InputError(
            f"{len(rows)} row{'' if len(rows) == 1 else 's'} of data; "
            "a plot needs at least two samples",
            Location(source, lines[-1][0]),
        )
    data = np.array(rows, dtype=float)
    data.setflags(write=False)
    return Table(columns=columns, data=data, source=source)
