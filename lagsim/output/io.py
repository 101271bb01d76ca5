"""CSV in and out for lagsim trajectories (docs/architecture.md, "trajectory.py / io.py").

The CSV layout is the one issue 3 fixes: ``t``, each coordinate, each ``<q>_dot``, each
``lambda_<c>`` (seed 001 §10.7, ``M q̈ = F + Aᵀλ``), each ``residual_<c>`` (φ for holonomic, a·q̇ + b
for velocity constraints), each ``residual_<c>_dot`` (φ̇, holonomic only; seed 003's c(q) = 0 and
ċ = 0), then ``energy`` (h = q̇·∂L/∂q̇ − L, seed 001).

Public API::

    write_csv(columns: Sequence[str], data: numpy.ndarray, dest: str | Path | Output) -> None
    read_csv(src: str | Path) -> Table
    check_output(dest, option="-o", formats=None, binary=False, inputs=()) -> Output  # before
    derived_path(folder, stem, suffix, option="-o") -> str   # a file name made from user text
    open_output(dest: Output | str | Path, binary=False) -> ContextManager[IO]  # the one writer
    output_path(dest) -> ContextManager[Path]         # for writers that open a path (ffmpeg)
    printable(text: str) -> str                       # control characters escaped

Every float is written as ``repr(float(x))``, the shortest text that reads back to the same
double, so ``read_csv(write_csv(...))`` is bit-exact.  ``-`` means stdout / stdin.

Every command that writes ``-o`` (simulate's CSV, plot's image, animate's GIF) checks it with
:func:`check_output` before simulating and writes it through :func:`open_output` (issue 15,
"Output files"): a device or FIFO is written in place, a regular file is replaced atomically.
An output that is one of the command's inputs (the same file through any path or link) is
refused (issue 32, "-o replaces the system file itself"); a file name lagsim makes from user text
(a system's ``name:``, a run index) is built by :func:`derived_path` alone, which keeps it in the
folder it is meant for (issue 32, "A file written outside the current folder").

The temporary file of a write is named ``.<name>.lagsim-<host>-<pid>.<random>.tmp<ext>``; one
that a killed lagsim left behind (its process on this host is gone, the file is the user's) is
removed by the first write to that folder in each process (issue 32, "Smaller").

:func:`read_csv` reads line by line and holds at most :data:`MAX_CSV_LINES` lines of at most
:data:`MAX_CSV_LINE_CHARS` characters and :data:`MAX_CSV_CELLS` numbers (issue 32, "Hangs and
unbounded resources": a producer that never stops is refused, not read until memory runs out).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import signal
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from lagsim import naming
from lagsim.errors import (
    InputError,
    LagsimError,
    Location,
    is_control,
    noted_signal,
    printable,
    signals_blocked,
)
from lagsim.records import record
from lagsim.spec.options import MAX_SAMPLES

__all__ = [
    "Output",
    "OutputError",
    "Table",
    "atomic_output",
    "check_output",
    "derived_path",
    "open_output",
    "output_path",
    "printable",
    "read_csv",
    "replacement",
    "write_csv",
    "write_rows",
]

STDIN_NAME = "<stdin>"
STDOUT_NAME = "-"
_CHUNK_ROWS = 4096
_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)

MAX_CSV_LINES = MAX_SAMPLES + 1
"""Lines of a CSV that lagsim reads, blank ones included: the header and the most rows
``simulate`` writes (:data:`lagsim.spec.options.MAX_SAMPLES`)."""
MAX_CSV_LINE_CHARS = 1_000_000
"""Characters in one line of a CSV (a line of the widest lagsim CSV has some 20,000)."""
MAX_CSV_CELLS = 100_000_000
"""Numbers in a CSV (800 MB as floats), so that a wide file is bounded as a long one is."""



@record
class CsvLimits:
    """What a CSV reader holds at most: ``lines`` (blank ones included), ``line_chars``
    characters in one line, ``cells`` numbers; ``lines_are`` says what the line limit counts,
    for the message."""

    lines: int = MAX_CSV_LINES
    line_chars: int = MAX_CSV_LINE_CHARS
    cells: int = MAX_CSV_CELLS
    lines_are: str = (f"lines (a header and the {MAX_SAMPLES:,} rows `lagsim simulate` writes "
                      "at most)")


CSV_LIMITS = CsvLimits()
"""The limits of every CSV lagsim reads (:func:`read_csv`, :func:`csv_lines`)."""

NAME_MAX = 255
"""Bytes in one file name (POSIX's NAME_MAX on Linux and the BSDs, 255 UTF-16 units on NTFS)."""
_WINDOWS = os.name == "nt"
_WINDOWS_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                               *(f"LPT{i}" for i in range(1, 10))})
"""Device names Windows reserves with any extension (Microsoft's "Naming Files, Paths, and
Namespaces"); ordinary names elsewhere (a system may well be called ``aux``)."""


def derived_path(folder: str | Path, stem: str, suffix: str, option: str = "-o",
                 what: str = "the name") -> str:
    """``folder/<stem><suffix>``, the one place that makes a file name from user text (a
    system's ``name:``, a run index), or an InputError at ``option`` when that text cannot be a
    file name in ``folder``.

    Refused: an empty name, ``.`` and ``..``, a folder separator (``/``, and ``\\`` which is one
    on Windows) or drive, a control character (NUL, escape, newline, bidirectional controls:
    :func:`lagsim.errors.is_control`), ``-`` (standard output), more than :data:`NAME_MAX` bytes,
    and on Windows its reserved device names and a trailing dot or space.  So the file is always
    directly inside ``folder``.
    """
    name = f"{stem}{suffix}"
    why = _bad_name(stem, name)
    if why is not None:
        raise InputError(f"{what} {printable(repr(stem))} cannot make a file name: it {why}; "
                         f"give {option} a file name", Location(option))
    return name if str(folder) in ("", ".") else os.path.join(folder, name)


def _bad_name(stem: str, name: str) -> str | None:
    if not stem:
        return "is empty"
    if stem in (".", ".."):
        return "is a folder's name"
    for sep in ("/", "\\"):
        if sep in stem:
            return f"contains {sep!r}, which separates folders"
    control = next((ch for ch in stem if is_control(ch)), None)
    if control is not None:
        return f"contains the control character {control!r}"
    if name == STDOUT_NAME:
        return "means standard output"
    size = len(os.fsencode(name))
    if size > NAME_MAX:
        return f"makes a file name of {size} bytes, more than the {NAME_MAX} a file name may have"
    if _WINDOWS:
        if os.path.splitdrive(stem)[0] or ":" in stem:
            return "names a drive"
        if stem.split(".")[0].rstrip(" ").upper() in _WINDOWS_RESERVED:
            return "is a device name Windows reserves"
        if name.endswith((".", " ")):
            return "ends with a dot or a space, which Windows drops"
    return None
class OutputError(LagsimError):
    """Writing the output failed (a full disk, an I/O error): the run is lost, exit 1."""

    exit_code = 1


@record
class Output:
    """A checked ``-o`` destination.

    ``kind`` is ``"stdout"`` (the name ``-``), ``"stream"`` (an existing character or block device
    or FIFO, written in place: renaming a file over ``/dev/null`` would replace the device) or
    ``"file"`` (a regular file, new or replaced atomically).  ``path`` is where the bytes go: for a
    file, symbolic links are followed, so the link stays and its target is replaced.
    """

    name: str
    kind: Literal["stdout", "stream", "file"]
    path: Path
    option: str = "-o"

    @property
    def suffix(self) -> str:
        """The extension of the name the user gave, lower case, without the dot."""
        return Path(self.name).suffix.lower().lstrip(".") if self.kind != "stdout" else ""

    def format(self, formats: Sequence[str]) -> str:
        """The file type among ``formats`` (by extension; the first one for a nameless stream)."""
        if self.suffix in formats:
            return self.suffix
        if self.kind != "file" and not self.suffix:
            return formats[0]
        given = Path(self.name).suffix
        what = f"unknown extension {printable(repr(given))}" if given else "no extension"
        raise self.error(f"{what}; use {', '.join('.' + f for f in formats)}")

    def error(self, reason: str) -> InputError:
        """An InputError ``-o: cannot write 'NAME': reason``."""
        return InputError(f"cannot write {printable(repr(self.name))}: {reason}",
                          Location(self.option))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def check_output(
    dest: str | Path,
    option: str = "-o",
    formats: Sequence[str] | None = None,
    binary: bool = False,
    inputs: Sequence[tuple[str | Path, str]] = (),
) -> Output:
    """Check that ``dest`` can be written, before any work, and say how it will be written.

    An empty name, a missing folder, a folder given as the file, a place where no file can be
    created (tried with a probe file named as the write's temporary file will be, which works
    for root too), a read-only file, a socket, an extension not in ``formats``, binary output to
    a terminal, and a file that is one of ``inputs`` (pairs of a path and what it is, such as
    ``("mine.yaml", "FILE")``: the same file by device and inode, through any path, hard or
    symbolic link) are InputErrors naming ``option`` and the path.
    """
    name = file_name(dest, option)
    if name == STDOUT_NAME:
        target = Output(name, "stdout", Path(name), option)
        if binary and sys.stdout is not None and sys.stdout.isatty():
            raise target.error("standard output is a terminal; redirect it to a file or a pipe")
    elif not name:
        raise InputError("the file name is empty; give a file name, or - for standard output",
                         Location(option))
    else:
        target = _classify(name, option)
    if target.kind == "file":
        _refuse_inputs(target, inputs)
    if formats is not None:
        target.format(formats)
    return target


def file_name(value: object, argument: str) -> str:
    """``value`` as a file name, or a TypeError naming ``argument``: an API caller's ``3`` is not
    the file ``3`` (nor, opened, file descriptor 3), ``b"x"`` not a name (issue 32)."""
    if isinstance(value, str | os.PathLike):
        name = os.fspath(value)
        if isinstance(name, str):
            return name
    raise TypeError(f"{argument} must be a file name, a str or a path-like object, not "
                    f"{type(value).__name__} {value!r:.60}")


def _refuse_inputs(target: Output, inputs: Sequence[tuple[str | Path, str]]) -> None:
    """An InputError when ``target`` is the same file as one of ``inputs`` (st_dev and st_ino:
    a hard link or a symbolic link is caught as well as another spelling of the path)."""
    try:
        mine = os.stat(target.path)
    except OSError:
        return
    for path, what in inputs:
        if str(path) == STDOUT_NAME:
            continue
        try:
            other = os.stat(path)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (mine.st_dev, mine.st_ino):
            same = "" if os.fspath(path) == target.name else \
                f" {printable(repr(os.fspath(path)))}"
            raise target.error(f"it is the input {what}{same} (the same file); give another "
                               "file name, or --force to replace the input")


def _classify(name: str, option: str) -> Output:
    given = Output(name, "file", Path(name), option)
    try:
        info = os.stat(name)
    except FileNotFoundError:
        info = None
    except NotADirectoryError:
        raise given.error(f"{printable(repr(_first_non_folder(name)))} is not a folder") from None
    except OSError as exc:
        raise given.error(_reason(exc)) from None
    if info is None:
        path = Path(os.path.realpath(name))
        folder = os.path.dirname(name) or "."
        if not os.path.isdir(path.parent):
            if os.path.lexists(name):
                raise given.error(f"it is a link to {str(path)!r}, whose folder does not exist")
            raise given.error(f"the folder {printable(repr(folder))} does not exist")
        _probe(given, path)
        return Output(name, "file", path, option)
    if stat.S_ISDIR(info.st_mode):
        raise given.error("it is a folder; give a file name inside it")
    if stat.S_ISSOCK(info.st_mode):
        raise given.error("it is a socket; lagsim writes files, devices and FIFOs")
    if not stat.S_ISREG(info.st_mode):
        return Output(name, "stream", Path(name), option)
    path = Path(os.path.realpath(name))
    if not os.access(path, os.W_OK):
        raise given.error("the file is read-only")
    _probe(given, path)
    return Output(name, "file", path, option)


def _first_non_folder(name: str) -> str:
    path = Path(name)
    for parent in reversed(path.parents):
        if str(parent) not in ("", ".") and parent.exists() and not parent.is_dir():
            return str(parent)
    return str(path.parent)


def _probe(given: Output, path: Path) -> None:
    """Create and remove in ``path``'s folder the temporary file a write of ``path`` makes: the
    only test of writability that root obeys, and one of the temporary name's length too."""
    try:
        with _signals_held():
            _temporary(path.parent, path.name, path.suffix).unlink()
    except OSError as exc:
        where = os.path.dirname(given.name) or "."
        raise given.error(f"{_reason(exc)} (folder {printable(repr(where))})") from None


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Defer SIGINT/SIGTERM/SIGHUP to the end of the block, then deliver them to the handlers.

    Python runs signal handlers in the main thread only, so recording them there is exact even
    with other threads (a signal mask of the main thread is not: the kernel may hand the signal
    to a BLAS thread, and Python still runs the handler in the main thread). The handlers are
    swapped with the signals held (:func:`lagsim.errors.signals_blocked`), so that one arriving
    meanwhile is not lost to a handler restored to SIG_DFL.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    with signals_blocked(_SIGNALS):
        old = {s: signal.signal(s, lambda signum, _frame: pending.append(signum))
               for s in _SIGNALS}
    try:
        yield
    finally:
        with signals_blocked(_SIGNALS):
            for s, handler in old.items():
                signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        for signum in pending:
            signal.raise_signal(signum)


_TEMPORARY = re.compile(r"\.(?P<name>.*)\.lagsim-(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)"
                        r"\.[a-z0-9_]{8}\.tmp(?:\.[^.]*)?", re.DOTALL)
"""The name of a temporary file of :func:`_temporary` (its random part: 8 characters of
:data:`TEMPORARY_CHARACTERS`)."""
_MAX_TEMP_SUFFIX = 16
_swept: set[str] = set()


def _host() -> str:
    """8 hex digits naming this machine, so that a folder shared between machines (NFS) is
    cleaned only of temporaries whose process this machine can see. The host name is
    ``uname``'s node name where there is one (what ``socket.gethostname`` returns on POSIX,
    without importing socket, a tenth of a run's start-up)."""
    if hasattr(os, "uname"):
        name = os.uname().nodename
    else:
        import socket

        name = socket.gethostname()
    return hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]


def _temporary(folder: Path, name: str, suffix: str) -> Path:
    """A new temporary file (:func:`make_temporary`) in ``folder`` for a write of
    ``folder/name``, with the signals held off until the name is known, so an interrupt cannot
    leave a temporary file nobody knows about.

    The name (:data:`_TEMPORARY`) carries this process's id and host, and keeps the extension
    (writers that pick the format from it see the right one); ``name`` is shortened so that the
    whole stays within :data:`NAME_MAX` bytes.  Stale temporaries of dead processes in ``folder``
    are removed first (:func:`_sweep_stale`)."""
    _sweep_stale(folder)
    if len(os.fsencode(suffix)) > _MAX_TEMP_SUFFIX:
        suffix = ""
    tag = f".lagsim-{_host()}-{os.getpid()}."
    room = NAME_MAX - len(os.fsencode(f".{tag}XXXXXXXX.tmp{suffix}"))
    short = os.fsdecode(os.fsencode(name)[:room])
    with _signals_held():
        return make_temporary(folder, f".{short}{tag}", f".tmp{suffix}")


TEMPORARY_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"
"""The characters of a temporary name's random part (those of ``tempfile.mkstemp``)."""
TEMPORARY_TRIES = 10_000
"""Names drawn before giving up when every one is taken (``tempfile.TMP_MAX``)."""


def make_temporary(folder: Path, prefix: str, suffix: str) -> Path:
    """A new empty file ``folder/prefix + 8 random characters + suffix`` made as
    ``tempfile.mkstemp`` makes it (created exclusively, a symbolic link not followed, mode 0600,
    another name drawn while the name is taken), its absolute path; without the tempfile
    module, which a warm run would import for this alone with ``random`` (issue 31,
    "Start-up")."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(TEMPORARY_TRIES):
        drawn = "".join(TEMPORARY_CHARACTERS[byte % len(TEMPORARY_CHARACTERS)]
                        for byte in os.urandom(8))
        path = os.path.abspath(os.path.join(folder, f"{prefix}{drawn}{suffix}"))
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            continue
        os.close(fd)
        return Path(path)
    raise FileExistsError(errno.EEXIST, "no temporary file name is free", str(folder))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts; when unsure, it does)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True
    return True


def _sweep_stale(folder: Path) -> None:
    """Remove the temporary files that a lagsim on this host, now dead (killed mid-write), left
    in ``folder``: regular files of this user whose name is exactly :data:`_TEMPORARY` with this
    host and a process id that no longer exists.  Once per folder and process (a sweep writes
    thousands of files into one folder); anything unreadable is left alone."""
    key = os.path.realpath(folder)
    if key in _swept:
        return
    _swept.add(key)
    host, me = _host(), os.geteuid() if hasattr(os, "geteuid") else None
    try:
        entries = os.scandir(folder)
    except OSError:
        return
    with entries:
        for entry in entries:
            found = _TEMPORARY.fullmatch(entry.name)
            if found is None or found["host"] != host or _alive(int(found["pid"])):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and (me is None or info.st_uid == me):
                    os.unlink(os.path.join(folder, entry.name))
            except OSError:
                continue


@contextlib.contextmanager
def _write_errors(target: Output) -> Iterator[None]:
    """Turn an OSError while writing (a full disk, an I/O error) into one OutputError line.

    A closed pipe (BrokenPipeError) passes through: the CLI ends quietly on it.
    """
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        if target.kind == "stdout":
            raise OutputError(f"cannot write standard output: {_reason(exc)}") from exc
        raise OutputError(
            f"cannot write {printable(repr(target.name))}: {_reason(exc)}", Location(target.option)
        ) from exc


def _as_output(dest: Output | str | Path, binary: bool) -> Output:
    return dest if isinstance(dest, Output) else check_output(dest, binary=binary)


@contextlib.contextmanager
def replacement(target: Output) -> Iterator[Path]:
    """Yield a temporary path beside ``target.path``; rename it onto it if the block succeeds.

    The temporary name keeps the extension (writers that pick the format from the suffix see the
    right one).  A file replaced keeps its permission bits (and, where allowed, its owner); a new
    one gets the umask's.  On any exception, Ctrl-C and SIGTERM included, the temporary file is
    removed and the old file is left as it was; so too when a signal asked the command to end
    but Python lost its exception (:func:`lagsim.errors.note_signal`): it is raised again, to
    its handler, before the rename.
    """
    folder = target.path.parent
    try:
        old: os.stat_result | None = os.stat(target.path)
    except FileNotFoundError:
        old = None
    tmp: Path | None = None
    try:
        with _signals_held():
            try:
                tmp = _temporary(folder, target.path.name, target.path.suffix)
            except OSError as exc:
                raise target.error(f"{_reason(exc)} (folder {str(folder)!r})") from exc
        yield tmp
        signum = noted_signal()
        if signum is not None:
            signal.raise_signal(signum)
        with _write_errors(target):
            if old is None:
                os.chmod(tmp, 0o666 & ~_umask())
            else:
                os.chmod(tmp, stat.S_IMODE(old.st_mode))
                mine = os.stat(tmp)
                if (mine.st_uid, mine.st_gid) != (old.st_uid, old.st_gid):
                    with contextlib.suppress(PermissionError):
                        os.chown(tmp, old.st_uid, old.st_gid)
            os.replace(tmp, target.path)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        raise


def atomic_output(path: str | Path | Output) -> contextlib.AbstractContextManager[Path]:
    """:func:`replacement` of a regular file (kept for callers that need a path)."""
    target = _as_output(path, binary=True)
    if target.kind != "file":
        raise target.error("needs a regular file")
    return replacement(target)


@contextlib.contextmanager
def output_path(dest: Output | str | Path) -> Iterator[Path]:
    """A path for writers that open it themselves (ffmpeg): a temporary file renamed onto a
    regular file, or the device/FIFO itself.  Standard output has no path: an InputError."""
    target = _as_output(dest, binary=True)
    if target.kind == "stdout":
        raise target.error("this type cannot be written to standard output; give -o FILE")
    if target.kind == "stream":
        with _write_errors(target):
            yield target.path
        return
    with replacement(target) as tmp, _write_errors(target):
        yield tmp


@contextlib.contextmanager
def open_output(dest: Output | str | Path, binary: bool = False) -> Iterator[IO[Any]]:
    """The one writer of every ``-o``: yield an open file; the output is complete when the block
    ends without an exception.

    ``-`` is stdout; an existing device or FIFO is opened and written in place (no temporary
    file, no rename); a regular file (a symbolic link's target) is written to a temporary file in
    its folder and renamed over it at the end (:func:`replacement`), so a failed or interrupted
    run leaves the old file and no temporary one.  Text is UTF-8 with ``\\n`` line ends.  An
    OSError while writing becomes an :class:`OutputError`; BrokenPipeError passes through.
    """
    target = _as_output(dest, binary)
    mode = "wb" if binary else "w"
    encoding = None if binary else "utf-8"
    newline = None if binary else "\n"
    if target.kind == "stdout":
        if sys.stdout is None:
            raise OutputError("cannot write standard output: it is closed")
        stream = sys.stdout.buffer if binary else sys.stdout
        with _write_errors(target):
            yield stream
            stream.flush()
        return
    if target.kind == "stream":
        with _write_errors(target), open(target.path, mode, encoding=encoding,
                                         newline=newline) as out:
            yield out
        return
    with replacement(target) as tmp, _write_errors(target), open(
        tmp, mode, encoding=encoding, newline=newline
    ) as out:
        yield out


def _lines(columns: Sequence[str], data: np.ndarray) -> Iterator[str]:
    """The header, then the rows in blocks, each float as ``repr``: one ``%`` formatting of a
    block's values (``%r`` is ``repr`` of a float), a quarter faster than joining each row's
    (3.2 → 2.5 ms for 1,001 rows of 4 columns; issue 31, "Start-up")."""
    yield ",".join(columns) + "\n"
    row = ",".join(["%r"] * data.shape[1]) + "\n"
    for start in range(0, data.shape[0], _CHUNK_ROWS):
        block = data[start : start + _CHUNK_ROWS]
        yield (row * block.shape[0]) % tuple(block.ravel().tolist())


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


def write_csv(columns: Sequence[str], data: np.ndarray, dest: str | Path | Output) -> None:
    """Write a header line and one row per sample, each float as ``repr(float(x))``.

    ``dest`` goes through :func:`open_output`: ``-`` is stdout, a device or FIFO is written in
    place, a regular file is replaced atomically, so a failure leaves the old file.
    """
    array = _check_table(columns, data)
    with open_output(dest) as out:
        for chunk in _lines(columns, array):
            out.write(chunk)


def write_rows(columns: Sequence[str], rows: Sequence[Sequence[float | str]],
               dest: str | Path | Output) -> None:
    """Write a header line and the ``rows``, each float as ``repr(float(x))`` and each text as
    it is (free of ',', '"' and newlines), through :func:`open_output` as :func:`write_csv`: a
    regular file is replaced atomically, so a failure leaves the old file."""
    _check_table(columns, np.empty((0, len(columns))))
    lines = [",".join(columns) + "\n"]
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(f"a row of {len(row)} cells does not match {len(columns)} columns")
        cells = []
        for cell in row:
            if isinstance(cell, str):
                if not cell or any(c in cell for c in ',"\n\r'):
                    raise ValueError(f"a text cell must be non-empty and free of ',', '\"' and "
                                     f"newlines: {cell!r}")
                cells.append(cell)
            else:
                cells.append(repr(float(cell)))
        lines.append(",".join(cells) + "\n")
    with open_output(dest) as out:
        out.write("".join(lines))


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
                printable(f"unknown column {name!r}; the columns are: {', '.join(self.columns)}"),
                Location(self.source),
            ) from None
        return self.data[:, index]

    @property
    def n_samples(self) -> int:
        return int(self.data.shape[0])

    @property
    def time(self) -> np.ndarray:
        return self.column(naming.TIME)

    @property
    def coordinates(self) -> tuple[str, ...]:
        """Columns after ``t`` up to the first velocity, multiplier, residual or energy column
        (:func:`lagsim.naming.read`)."""
        return naming.read(self.columns).coordinates

    @property
    def velocities(self) -> tuple[str, ...]:
        """The ``<q>_dot`` columns of the coordinates, in coordinate order."""
        return tuple(v for v in naming.velocities(self.coordinates) if v in self.columns)

    @property
    def multipliers(self) -> tuple[str, ...]:
        """The ``lambda_<c>`` columns (seed 001 §10.7)."""
        return tuple(map(naming.multiplier, naming.read(self.columns).constraints))

    @property
    def residuals(self) -> tuple[str, ...]:
        """The ``residual_<c>`` columns: φ of holonomic, a·q̇ + b of velocity constraints."""
        present = set(self.columns)
        return tuple(
            name
            for name in self.columns
            if naming.is_residual(name) and naming.rate_of(name) not in present
        )

    @property
    def residuals_dot(self) -> tuple[str, ...]:
        """The ``residual_<c>_dot`` columns (φ̇ of holonomic constraints, seed 003)."""
        present = set(self.columns)
        return tuple(
            name
            for name in self.columns
            if naming.is_residual(name) and naming.rate_of(name) in present
        )

    @property
    def position_residuals(self) -> tuple[str, ...]:
        """Position-level drift: ``residual_<c>`` of constraints that also have a ``_dot``."""
        present = set(self.columns)
        return tuple(name for name in self.residuals if naming.velocity(name) in present)

    @property
    def velocity_residuals(self) -> tuple[str, ...]:
        """Velocity-level drift: φ̇ of holonomic and a·q̇ + b of velocity constraints."""
        present = set(self.columns)
        own = tuple(name for name in self.residuals if naming.velocity(name) not in present)
        return self.residuals_dot + own

    @property
    def has_energy(self) -> bool:
        return self.has(naming.ENERGY)


@contextlib.contextmanager
def _opened(src: str | Path) -> Iterator[tuple[IO[str], str]]:
    """The text stream of ``src`` (``-``: stdin) and its name for messages."""
    src = file_name(src, "path")
    if src == "-":
        if sys.stdin is None:
            raise InputError("standard input is closed", Location(STDIN_NAME))
        yield sys.stdin, STDIN_NAME
        return
    name = str(src)
    try:
        handle = open(src, encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", Location(name)) from None
    except IsADirectoryError:
        raise InputError("is a folder, not a CSV file", Location(name)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", Location(name)) from None
    with handle:
        yield handle, name


def _csv_limit(found: str, limit: int, counts: str) -> str:
    return f"{found}; lagsim reads a CSV of at most {limit:,} {counts}"


def _numbered_lines(stream: IO[str], source: str, limits: CsvLimits = CSV_LIMITS
                    ) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of ``stream`` without its line end, read one at a
    time and refused past ``limits.lines`` lines or ``limits.line_chars`` characters in a line
    (a producer that never stops, a line that never ends)."""
    number = 0
    while True:
        try:
            line = stream.readline(limits.line_chars + 1)
        except UnicodeDecodeError as exc:
            raise InputError(f"not a text file ({exc.reason})",
                             Location(source, number + 1)) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", Location(source)) from None
        if not line:
            return
        number += 1
        text = line.rstrip("\n").rstrip("\r")
        if len(text) > limits.line_chars:
            raise InputError(_csv_limit(f"a line of more than {limits.line_chars:,} characters",
                                        limits.line_chars, "characters a line"),
                             Location(source, number))
        if number > limits.lines:
            raise InputError(_csv_limit(f"more than {limits.lines:,} lines", limits.lines,
                                        limits.lines_are), Location(source, number))
        yield number, text


def csv_lines(src: str | Path, limits: CsvLimits = CSV_LIMITS) -> Iterator[tuple[int, str, str]]:
    """``(line number, text, source name)`` of each line of ``src`` (``-``: stdin), read one at
    a time within ``limits``: its lines and characters a line (:func:`_numbered_lines`) and
    its cells."""
    with _opened(src) as (stream, source):
        cells = 0
        for number, line in _numbered_lines(stream, source, limits):
            cells += line.count(",") + 1
            if cells > limits.cells:
                raise InputError(_csv_limit(f"more than {limits.cells:,} cells", limits.cells,
                                            "numbers"), Location(source, number))
            yield number, line, source


def read_text(src: str | Path) -> tuple[str, str]:
    """The whole text of ``src`` (``-``: stdin), within the limits of :func:`csv_lines`, and
    its name for messages."""
    lines = [line for _, line, _ in csv_lines(src)]
    return "\n".join(lines), STDIN_NAME if str(src) == "-" else str(src)


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


_BLOCK_ROWS = 8192


def read_csv(src: str | Path, *, max_cells: int = MAX_CSV_CELLS) -> Table:
    """Read a lagsim CSV (``-`` is stdin) into a :class:`Table`.

    Errors are InputError at ``file:line:column``: empty input, duplicate or missing ``t``
    columns, a non-numeric cell, a row with the wrong number of cells, fewer than two samples,
    and a CSV past :data:`MAX_CSV_LINES` lines, :data:`MAX_CSV_LINE_CHARS` characters in a line
    or ``max_cells`` numbers (default :data:`MAX_CSV_CELLS`).  The rows are read a line at a
    time and kept as floats in blocks of :data:`_BLOCK_ROWS` rows, so memory is about 8 bytes a
    number (issue 32).
    """
    with _opened(src) as (stream, source):
        lines = ((n, line) for n, line in _numbered_lines(stream, source) if line.strip())
        first = next(lines, None)
        if first is None:
            raise InputError(
                "empty input: expected a CSV header line such as 't,x,x_dot'", Location(source)
            )
        header_line, header = first
        columns = _header(header, header_line, source)
        width = len(columns)
        most = max_cells // width
        blocks: list[np.ndarray] = []
        block: list[list[float]] = []
        count = 0
        last = header_line
        for number, line in lines:
            last = number
            count += 1
            if count > most:
                raise InputError(_csv_limit(f"more than {most:,} rows of {width} columns",
                                            max_cells, "numbers"), Location(source, number))
            parts = line.split(",")
            if len(parts) == width:
                try:
                    block.append(list(map(float, parts)))
                except ValueError:
                    _raise_row_error(line, columns, Location(source, number))
            else:
                _raise_row_error(line, columns, Location(source, number))
            if len(block) == _BLOCK_ROWS:
                blocks.append(np.array(block, dtype=float))
                block = []
    if block or not blocks:
        blocks.append(np.array(block, dtype=float).reshape(len(block), width))
    if count < 2:
        raise InputError(
            f"{count} row{'' if count == 1 else 's'} of data; "
            "a plot needs at least two samples",
            Location(source, last),
        )
    data = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
    data.setflags(write=False)
    return Table(columns=columns, data=data, source=source)


def _header(header: str, line: int, source: str) -> tuple[str, ...]:
    """The column names of a header line, each non-empty and unique, ``t`` among them."""
    header_cells = [(name.strip('"'), col) for name, col in _cells(header)]
    seen: dict[str, int] = {}
    for index, (name, col) in enumerate(header_cells, start=1):
        if not name:
            raise InputError(f"header cell {index} is empty", Location(source, line, col))
        if name in seen:
            raise InputError(
                f"duplicate column name {name!r} (columns {seen[name]} and {index})",
                Location(source, line, col),
            )
        seen[name] = index
    columns = tuple(name for name, _ in header_cells)
    if naming.TIME not in seen:
        raise InputError(
            printable(f"no 't' column: a lagsim CSV starts with the time column 't' "
                      f"(the header is {','.join(columns)})"),
            Location(source, line, 1),
        )
    return columns
