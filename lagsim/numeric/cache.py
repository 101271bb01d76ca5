"""The compile cache: shared libraries lagsim builds once and loads again (issues 5, 8 §1, 15).

The folder is ``$LAGSIM_CACHE``, else ``$XDG_CACHE_HOME/lagsim``, else ``~/.cache/lagsim``. What
is loaded from it is trusted as code, so (issue 15):

* the folder must be owned by the user and not writable by group or others; it is created 0700.
  A folder that fails this (a shared ``LAGSIM_CACHE=/tmp``, a group-writable folder) is not used
  itself: its private subfolder ``lagsim-<uid>`` is, created 0700 and checked the same way;
* an entry is ``lagsim_<key>.so`` with the sha256 of its bytes in ``lagsim_<key>.sha256``; it is
  loaded only when both are regular files owned by the user and not writable by group or others
  (looked at with ``lstat`` and opened with ``O_NOFOLLOW | O_NONBLOCK``, so that a FIFO or a
  symbolic link is refused without blocking), the bytes hash to the recorded sum, and the loaded
  library reports the key it was asked for (:func:`obtain`'s ``check``). The bytes that were
  hashed are the ones loaded: the file is loaded through ``/proc/self/fd`` of the descriptor
  that was read, where Linux has it. Anything else is rebuilt, never loaded;
* a build goes to a private temporary folder inside the cache, and the library and its sum are
  renamed into place; the build of an entry holds that entry's lock file
  (``lagsim_<key>.lock``, removed after), so that concurrent first runs of one model build it
  once while other models' runs go on;
* the cache keeps the :data:`KEEP` most recently used entries (each use touches the library's
  time stamp; each build prunes the oldest);
* a cache that cannot be used (read-only, a file, a full disk, untrusted) does not stop a run:
  the library is built in a private temporary folder that is removed once it is loaded, and
  lagsim says so once on stderr.

The same folder holds small blobs under the same rules (:func:`read_blob`, :func:`store_blob`):
``lagsim_<key><suffix>`` with its sha256 in ``lagsim_<key>.sha256``, read only when both are
regular files of the user that group and others may not write (``lstat``, then ``O_NOFOLLOW |
O_NONBLOCK``) and the bytes hash to the sum; written in a private folder inside the cache and
renamed into place, sum first; each kind pruned to a bound of its own, so that blobs never
push libraries out; a blob that fails the checks is not used, and one that cannot be written
does not stop a run and is said once, as for libraries. The one kind is the validated spec of a
system file (suffix :data:`SPEC`, :data:`SPEC_KEEP` kept; :func:`lagsim.api.open_system`), a
pickle: only bytes that passed these checks are ever unpickled.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from lagsim import errors
from lagsim.errors import DEBUG
from lagsim.records import record

T = TypeVar("T")

KEEP = 200
"""Entries kept: the least recently used beyond these are removed after each build."""
PREFIX = "lagsim_"
LIBRARY = ".so"
SPEC = ".spec"
"""The suffix of a validated spec's entry (:func:`store_blob`)."""
SPEC_KEEP = 500
"""Validated specs kept (a few kB each), apart from the :data:`KEEP` libraries."""
DIGEST = ".sha256"
LOCK = ".lock"
REBUILD = "rebuilding it"
"""What is done instead of loading a library that fails the checks (:func:`note_rejected`)."""
BUILD = ".build-"
STALE_BUILD_S = 24 * 3600.0
"""A build folder or an entry's lock file left this long (a killed run) is removed by the next
prune."""

_HELD: list[int] = []
"""Descriptors of loaded libraries, kept open: a loaded library is known to the dynamic loader
by its ``/proc/self/fd/N`` name, which must not be reused for another file."""


class Unusable(Exception):
    """The cache folder cannot be used; the message says why."""


class Foreign(Exception):
    """A library loaded but is not the one asked for (another model's key, or none)."""


class BuildFailed(Exception):
    """The compiler failed; the message holds its output."""


def base_dir() -> Path:
    """``$LAGSIM_CACHE``, else ``$XDG_CACHE_HOME/lagsim``, else ``~/.cache/lagsim``."""
    if os.environ.get("LAGSIM_CACHE"):
        return Path(os.environ["LAGSIM_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lagsim"


def debug() -> bool:
    """Whether the running ``lagsim`` command was given ``--debug`` (:data:`lagsim.errors.DEBUG`,
    set by the command group)."""
    return DEBUG.get()


def say_once(topic: str, message: str, reason: str | None = None) -> None:
    """:func:`lagsim.errors.say_once`, with ``reason`` shown under --debug."""
    errors.say_once(topic, message, reason if reason and debug() else None)


def _uid() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None


def untrusted(st: os.stat_result) -> str | None:
    """Why a file or folder with this status may not hold code we load, or None."""
    uid = _uid()
    if uid is not None and st.st_uid != uid:
        return f"it belongs to user {st.st_uid}, not to the current user {uid}"
    if st.st_mode & 0o022:
        return f"group or others may write to it (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _open_dir(path: Path, follow: bool) -> int:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    return os.open(path, flags)


def open_folder(create: bool = True) -> tuple[Path, int]:
    """The cache folder to use and an open descriptor of it; raises :class:`Unusable`."""
    base = base_dir()
    try:
        if create:
            base.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = _open_dir(base, follow=True)
    except OSError as exc:
        raise Unusable(f"{base}: {exc.strerror or exc}") from None
    why = untrusted(os.fstat(fd))
    if why is None:
        return base, fd
    os.close(fd)
    uid = _uid()
    sub = base / f"lagsim-{uid}"
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(sub, 0o700)
        fd = _open_dir(sub, follow=False)
    except OSError as exc:
        raise Unusable(f"{base} is shared ({why}) and its private subfolder {sub.name} cannot "
                       f"be opened: {exc.strerror or exc}") from None
    why_sub = untrusted(os.fstat(fd))
    if why_sub is not None:
        os.close(fd)
        raise Unusable(f"{base} is shared ({why}) and its subfolder {sub.name} is not private: "
                       f"{why_sub}")
    return sub, fd


def _read_trusted(folder: int, name: str, limit: int) -> tuple[int, bytes] | str:
    """An open descriptor and the bytes of ``name`` in ``folder`` when it is a trusted regular
    file, else why not (a missing file says "missing")."""
    try:
        before = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return "missing"
    if not stat.S_ISREG(before.st_mode):
        return f"{name} is not a regular file"
    why = untrusted(before)
    if why:
        return f"{name}: {why}"
    flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
    fd = os.open(name, flags, dir_fd=folder)
    try:
        st = os.fstat(fd)
        if (st.st_ino, st.st_dev) != (before.st_ino, before.st_dev) or not stat.S_ISREG(
                st.st_mode) or untrusted(st) or st.st_size > limit:
            raise OSError(errno.EPERM, f"{name} changed or is too large")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    except BaseException:
        os.close(fd)
        raise
    return fd, b"".join(chunks)


MAX_HELD = 512
"""Past this many loaded libraries in one process, they are loaded by their path (in the
checked folder) and their descriptors closed, so as not to run out of descriptors."""


def _load(fd: int, path: Path, check: Callable[[str], T]) -> T:
    """``check(name)`` loads the library open as ``fd``, through ``/proc/self/fd`` (the bytes
    that were checked) where Linux has it; that descriptor then stays open."""
    proc = f"/proc/self/fd/{fd}"
    if len(_HELD) < MAX_HELD and os.path.exists(proc):
        _HELD.append(fd)
        return check(proc)
    try:
        return check(str(path))
    finally:
        os.close(fd)


def _verified(folder: Path, dfd: int, key: str, suffix: str, limit: int, redo: str
              ) -> tuple[int, bytes] | None:
    """An open descriptor and the bytes of entry ``key`` (``lagsim_<key><suffix>``) when it
    and its sum are trusted regular files and the bytes hash to the sum, else None (``redo``
    says what is done instead, in the warning or note :func:`note_rejected` gives)."""
    name = f"{PREFIX}{key}{suffix}"
    try:
        digest = _read_trusted(dfd, f"{PREFIX}{key}{DIGEST}", 1024)
        if isinstance(digest, tuple):
            os.close(digest[0])
            found = _read_trusted(dfd, name, limit)
    except OSError as exc:
        note_rejected(folder / name, f"cannot be read: {exc.strerror or exc}", redo)
        return None
    if isinstance(digest, str):
        if digest != "missing":
            note_rejected(folder / name, digest, redo)
        return None
    if isinstance(found, str):
        if found != "missing":
            note_rejected(folder / name, found, redo)
        return None
    fd, data = found
    if hashlib.sha256(data).hexdigest() != digest[1].decode("ascii", "replace").strip():
        os.close(fd)
        note_rejected(folder / name, "its bytes do not match the recorded sha256", redo)
        return None
    return fd, data


def _lookup(folder: Path, dfd: int, key: str, check: Callable[[str], T]) -> T | None:
    """The checked entry ``key``, or None when it is missing or not to be trusted."""
    found = _verified(folder, dfd, key, LIBRARY, 1 << 30, REBUILD)
    if found is None:
        return None
    fd, _ = found
    name = f"{PREFIX}{key}{LIBRARY}"
    try:
        value = _load(fd, folder / name, check)
    except (OSError, ImportError, Foreign) as exc:
        note_rejected(folder / name, str(exc) or type(exc).__name__)
        return None
    with contextlib.suppress(OSError):
        os.utime(fd)
    return value


def note_rejected(path: Path, why: str, redo: str = REBUILD) -> None:
    """Say that the entry at ``path`` was not used, why, and what is done instead (``redo``):
    a warning once when it is not to be trusted, else a note under --debug."""
    if "belongs to user" in why or "may write" in why:
        say_once(f"untrusted {path}", f"warning: not loading {path}: {why}; {redo}")
    elif DEBUG.get():
        say_once(f"rejected {path}", f"note: not loading {path}: {why}; {redo}")


def read_blob(key: str, suffix: str, redo: str) -> tuple[Path, bytes] | None:
    """Where entry ``key`` of the kind ``suffix`` is and its bytes, when it is there and passes
    the checks (module docstring); else None, a rejected entry said as for libraries with
    ``redo`` (what is done instead). A missing or unusable folder is None too: it is said when
    an entry is written (:func:`store_blob`). A use counts as one for pruning."""
    try:
        folder, dfd = open_folder(create=False)
    except Unusable:
        return None
    try:
        found = _verified(folder, dfd, key, suffix, 1 << 26, redo)
        if found is None:
            return None
        fd, data = found
        with contextlib.suppress(OSError):
            os.utime(fd)
        os.close(fd)
        return folder / f"{PREFIX}{key}{suffix}", data
    finally:
        os.close(dfd)


def store_blob(key: str, suffix: str, data: bytes, keep: int) -> None:
    """Store ``data`` as entry ``key`` of the kind ``suffix`` (written in a private folder in
    the cache and renamed into place, its sum first), then prune that kind to ``keep``
    entries. A cache that cannot be used or written to is said once (as for libraries) and
    the run goes on."""
    try:
        folder, dfd = open_folder()
    except Unusable as exc:
        _say_unusable(str(exc))
        return
    work = folder / f"{BUILD}{os.getpid()}-{os.urandom(6).hex()}"
    try:
        os.mkdir(work, 0o700)
        blob = _write_new(work / "blob", data)
        name = f"{PREFIX}{key}"
        os.replace(_write_digest(work, hashlib.sha256(data).hexdigest()), name + DIGEST,
                   dst_dir_fd=dfd)
        os.replace(blob, name + suffix, dst_dir_fd=dfd)
        prune(folder, dfd, keep, suffix)
    except OSError as exc:
        _say_unusable(f"{folder}: {exc.strerror or exc}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        os.close(dfd)


@contextlib.contextmanager
def _lock(dfd: int, name: str) -> Iterator[None]:
    """An exclusive lock on the lock file ``name`` of one entry (not of the whole folder: the
    build of a large model, minutes of symbolic work, must not hold up another model's first
    run, issue 32), or nothing where that cannot be had. The file is removed when the lock is
    let go; a process that was waiting for it then finds the name gone (or another file
    there) and locks afresh, so that two processes never both hold the lock of one entry."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    while True:
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0), 0o600,
                         dir_fd=dfd)
        except OSError:
            yield
            return
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            yield
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            now = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError:
            now = None
        if now is not None and (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev):
            break
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dfd)
        os.close(fd)


def holds(key: str) -> bool:
    """Whether the cache folder has a library file of ``key``: a hint only (whether to build it
    ahead, :func:`lagsim.numeric.ccompile.runtime_ahead`), nothing is read or loaded; loading it
    goes through :func:`obtain` and its checks."""
    try:
        _, dfd = open_folder(create=False)
    except Unusable:
        return False
    try:
        os.stat(f"{PREFIX}{key}{LIBRARY}", dir_fd=dfd, follow_symlinks=False)
    except OSError:
        return False
    finally:
        os.close(dfd)
    return True


def lock_name(key: str) -> str:
    """The lock file of entry ``key`` in the cache folder, held while it is built."""
    return f"{PREFIX}{key}{LOCK}"


def _own_build(work: Path, built: Path) -> tuple[int, str]:
    """The open descriptor and sha256 of a library just built in the private folder ``work``;
    its mode is made at most 0755 first (the compiler follows the umask, which may let the
    group write)."""
    mode = stat.S_IMODE(os.stat(built, follow_symlinks=False).st_mode)
    if mode & 0o022:
        os.chmod(built, mode & ~0o022)
    wfd = _open_dir(work, follow=False)
    try:
        found = _read_trusted(wfd, built.name, 1 << 30)
    finally:
        os.close(wfd)
    if isinstance(found, str):
        raise OSError(errno.EPERM, f"the library just built is not to be trusted: {found}")
    fd, data = found
    return fd, hashlib.sha256(data).hexdigest()


def _write_new(path: Path, data: bytes) -> Path:
    """``data`` written to the new file ``path`` (mode 0644: not writable by group or
    others)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0), 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return path


def _write_digest(work: Path, digest: str) -> Path:
    return _write_new(work / "digest", (digest + "\n").encode("ascii"))


def _build_here(folder: Path, dfd: int, key: str, build: Callable[[Path], Path],
                check: Callable[[str], T], keep: int | None) -> tuple[T, Path]:
    """Build ``key`` in a private folder inside the cache, load it, and rename it into place."""
    import tempfile  # for a build only, not a warm run's start-up (issue 31)

    work = Path(tempfile.mkdtemp(prefix=BUILD, dir=folder))
    try:
        built = build(work)
        fd, digest = _own_build(work, built)
        value = _load(fd, built, check)
        name = f"{PREFIX}{key}"
        try:
            os.replace(_write_digest(work, digest), name + DIGEST, dst_dir_fd=dfd)
            os.replace(built, name + LIBRARY, dst_dir_fd=dfd)
            prune(folder, dfd, keep)
        except OSError as exc:
            say_once("store", f"warning: could not store the compiled model in the cache "
                     f"{folder} ({exc.strerror or exc}); the next run compiles it again")
        return value, folder / (name + LIBRARY)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _build_private(build: Callable[[Path], Path], check: Callable[[str], T]) -> tuple[T, Path]:
    """Build in a private temporary folder, load, and remove the folder."""
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="lagsim-build-"))
    try:
        built = build(work)
        fd, _ = _own_build(work, built)
        return _load(fd, built, check), built
    finally:
        shutil.rmtree(work, ignore_errors=True)


def obtain(key: str, build: Callable[[Path], Path], check: Callable[[str], T],
           private: bool = True, keep: int | None = None) -> tuple[T, Path]:
    """The library ``key``, loaded and checked: from the cache when a trusted entry is there,
    else built by ``build(folder) -> path of the library`` (which raises :class:`BuildFailed`).
    ``check(name)`` loads the library by that name and raises :class:`Foreign` when it is not
    ``key``. Returns what ``check`` returned and where the library is (or was). When the cache
    cannot be used, the library is built in a private temporary folder, or, without
    ``private``, :class:`Unusable` is raised. A build in the cache prunes it to ``keep`` entries
    (:func:`prune`)."""
    try:
        folder, dfd = open_folder()
    except Unusable as exc:
        _say_unusable(str(exc))
        if not private:
            raise
        return _build_private(build, check)
    try:
        found = _lookup(folder, dfd, key, check)
        if found is not None:
            return found, folder / f"{PREFIX}{key}{LIBRARY}"
        with _lock(dfd, lock_name(key)):
            found = _lookup(folder, dfd, key, check)
            if found is not None:
                return found, folder / f"{PREFIX}{key}{LIBRARY}"
            try:
                return _build_here(folder, dfd, key, build, check, keep)
            except OSError as exc:
                _say_unusable(f"{folder}: {exc.strerror or exc}")
                if not private:
                    raise Unusable(str(exc)) from None
        return _build_private(build, check)
    finally:
        os.close(dfd)


def _say_unusable(why: str) -> None:
    say_once("unusable", "warning: the compile cache cannot be used, so each run reads its "
             f"file and compiles its model again: {why}")


def _entries(dfd: int, suffix: str = LIBRARY) -> list[tuple[str, os.stat_result]]:
    out = []
    for name in os.listdir(dfd):
        if name.startswith(PREFIX) and name.endswith(suffix):
            with contextlib.suppress(OSError):
                out.append((name, os.stat(name, dir_fd=dfd, follow_symlinks=False)))
    return out


def prune(folder: Path, dfd: int, keep: int | None = None, suffix: str = LIBRARY) -> int:
    """Remove the least recently used entries of the kind ``suffix`` (default: libraries)
    beyond ``keep`` (default :data:`KEEP`), stale build folders and lock files; returns the
    number of entries removed."""
    keep = KEEP if keep is None else keep
    entries = sorted(_entries(dfd, suffix), key=lambda e: e[1].st_mtime, reverse=True)
    removed = 0
    for name, _ in entries[keep:]:
        stem = name[:-len(suffix)]
        for victim in (name, stem + DIGEST):
            with contextlib.suppress(OSError):
                os.unlink(victim, dir_fd=dfd)
        removed += 1
    now = time.time()
    for name in os.listdir(dfd):
        stale = name.startswith(BUILD) or (name.startswith(PREFIX) and name.endswith(LOCK))
        if stale:
            with contextlib.suppress(OSError):
                if now - os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mtime > (
                        STALE_BUILD_S):
                    if name.endswith(LOCK):
                        os.unlink(name, dir_fd=dfd)
                    else:
                        shutil.rmtree(folder / name, ignore_errors=True)
    return removed


@record
class Info:
    """What ``lagsim cache info`` prints."""

    folder: Path
    entries: int
    size: int


def info() -> Info:
    """The cache folder, its number of libraries and the total size in bytes of its entries
    (libraries, validated specs and their sums); raises :class:`Unusable`."""
    folder, dfd = open_folder()
    try:
        size = 0
        for suffix in (LIBRARY, SPEC):
            for name, st in _entries(dfd, suffix):
                size += st.st_size
                with contextlib.suppress(OSError):
                    size += os.stat(name[:-len(suffix)] + DIGEST, dir_fd=dfd,
                                    follow_symlinks=False).st_size
        return Info(folder, len(_entries(dfd)), size)
    finally:
        os.close(dfd)


def clear() -> tuple[Path, int]:
    """Remove lagsim's own files from the cache folder (entries, their sums, lock files,
    build folders); nothing else there is touched. Returns the folder and the number of
    entries removed; raises :class:`Unusable`."""
    folder, dfd = open_folder()
    try:
        removed = 0
        for name in os.listdir(dfd):
            own = name.startswith(PREFIX) and name.endswith((LIBRARY, SPEC, DIGEST, LOCK))
            if own or name == LOCK:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=dfd)
                    removed += name.endswith(LIBRARY)
            elif name.startswith(BUILD):
                shutil.rmtree(folder / name, ignore_errors=True)
        return folder, removed
    finally:
        os.close(dfd)
