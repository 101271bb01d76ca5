"""Output files and the ends of a run (issue 15: "Output files", "No internal errors on ordinary
use", "Limits against hostile or huge input").

Devices are twins made in tmp_path with ``os.mknod`` (1, 3 is a null device, 1, 7 a full one);
nothing here writes to the machine's /dev/null or /dev/full.  Unwritable places that stop root
too: a path whose parent is a regular file (ENOTDIR), and a folder under /sys (sysfs refuses to
create files, EACCES).
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from lagsim.cli import main
from lagsim.cli.exits import EXIT_PIPE
from lagsim.cli.group import COMMANDS
from lagsim.errors import InputError
from lagsim.output import io as lagsim_io
from lagsim.output.io import Table, check_output, open_output, printable, read_csv, write_csv
from lagsim.viz import animate as lanimate

ROOT = Path(__file__).resolve().parents[1]
NULL_DEV = os.makedev(1, 3)
FULL_DEV = os.makedev(1, 7)
SHORT = ["--t-end", "0.2", "--samples", "5"]

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="os.mknod of a device needs root")


def _device(tmp_path: Path, name: str, device: int) -> Path:
    path = tmp_path / name
    os.mknod(path, stat.S_IFCHR | 0o666, device)
    return path


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def _lagsim(*args: str, stdout=None, cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lagsim", *args], stdout=stdout,
                            stderr=subprocess.PIPE, env=_env(), cwd=cwd or ROOT)


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stderr


def _commands_writing(out: str) -> list[list[str]]:
    return [
        ["simulate", "pendulum", *SHORT, "-o", out],
        ["plot", "pendulum", *SHORT, "--dpi", "20", "-o", out],
        ["animate", "pendulum", *SHORT, "--fps", "10", "--dpi", "20", "-o", out],
    ]


# --- where the bytes go ---------------------------------------------------------------------


@needs_root
@pytest.mark.parametrize("args", _commands_writing("{node}"), ids=lambda a: a[0])
def test_a_device_is_written_in_place_not_replaced(tmp_path: Path, args: list[str]) -> None:
    node = _device(tmp_path, "null", NULL_DEV)
    code, err = _invoke(*[a.format(node=node) for a in args])
    assert code == 0, err
    info = os.lstat(node)
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == NULL_DEV
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_a_fifo_is_written_in_place_and_its_reader_gets_the_csv(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, err = _invoke("simulate", "pendulum", *SHORT, "-o", str(fifo))
    reader.join(timeout=60)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    expected = CliRunner().invoke(main, ["simulate", "pendulum", *SHORT]).stdout
    assert received == [expected.encode()]
    assert expected.startswith("t,theta,theta_dot,energy\n") and expected.count("\n") == 6


def test_a_symlink_stays_and_its_target_is_replaced(tmp_path: Path) -> None:
    elsewhere = tmp_path / "data"
    here = tmp_path / "work"
    elsewhere.mkdir()
    here.mkdir()
    target = elsewhere / "run.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    link = here / "latest.csv"
    link.symlink_to(target)
    code, err = _invoke("simulate", "pendulum", *SHORT, "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert read_csv(target).columns == ("t", "theta", "theta_dot", "energy")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert [p.name for p in elsewhere.iterdir()] == ["run.csv"]
    assert [p.name for p in here.iterdir()] == ["latest.csv"]


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "new.csv")
    write_csv(["t", "x"], np.array([[0.0, 1.0], [1.0, 2.0]]), link)
    assert link.is_symlink()
    assert (tmp_path / "new.csv").read_text() == "t,x\n0.0,1.0\n1.0,2.0\n"


def test_a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    data = np.array([[0.0, 1.0], [1.0, 2.0]])
    old = tmp_path / "old.csv"
    old.write_text("old\n")
    old.chmod(0o604)
    mask = os.umask(0o027)
    try:
        write_csv(["t", "x"], data, old)
        write_csv(["t", "x"], data, tmp_path / "new.csv")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o604
    assert stat.S_IMODE(os.stat(tmp_path / "new.csv").st_mode) == 0o640
    assert old.read_text() == "t,x\n0.0,1.0\n1.0,2.0\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.csv", "old.csv"]


def test_open_output_binary_to_a_fifo_passes_the_bytes(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    target = check_output(fifo, binary=True)
    assert target.kind == "stream"
    with open_output(target, binary=True) as out:
        out.write(b"\x00\xff" * 70_000)
    reader.join(timeout=60)
    assert received == [b"\x00\xff" * 70_000]


# --- checks before the work -----------------------------------------------------------------


def _unwritable_places(tmp_path: Path) -> list[tuple[str, str]]:
    """(path, what the message says) for places no file can be created in, root included."""
    (tmp_path / "plain").write_text("a file, not a folder\n")
    places = [(str(tmp_path / "plain" / "out.csv"), f"{str(tmp_path / 'plain')!r} is not a folder")]
    try:
        tempfile.mkstemp(dir="/sys")
    except OSError as exc:
        places.append(("/sys/lagsim-out.csv", exc.strerror))
    return places


@pytest.mark.parametrize("command", ["simulate", "plot", "animate"])
def test_bad_outputs_are_input_errors_before_any_work(tmp_path: Path, command: str) -> None:
    """The input FILE does not exist: were -o checked after loading it, that would be the error."""
    (tmp_path / "folder").mkdir()
    ext = {"simulate": ".csv", "plot": ".png", "animate": ".gif"}[command]
    cases = [
        (str(tmp_path / "folder"), "it is a folder; give a file name inside it"),
        (str(tmp_path / "nodir" / f"x{ext}"), f"the folder {str(tmp_path / 'nodir')!r} does "
                                              "not exist"),
        *((p.replace(".csv", ext), why) for p, why in _unwritable_places(tmp_path)),
    ]
    if command == "plot":
        cases.append((str(tmp_path / "x.jpg"), "unknown extension '.jpg'; use .png, .svg, .pdf"))
    if command == "animate":
        cases.append((str(tmp_path / "x.avi"), "unknown extension '.avi'; use .gif, .mp4"))
    missing = str(tmp_path / "missing.yaml")
    for out, why in cases:
        code, err = _invoke(command, missing, "-o", out)
        assert (code, err) == (2, f"lagsim: error: -o: cannot write {out!r}: {why}"
                                  + (" (folder '/sys')" if out.startswith("/sys") else "") + "\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "plain"]


def test_simulate_into_a_folder_is_an_input_error_not_an_internal_one(tmp_path: Path) -> None:
    proc = _lagsim("simulate", "pendulum", *SHORT, "-o", str(tmp_path))
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2
    assert err.decode() == (f"lagsim: error: -o: cannot write {str(tmp_path)!r}: it is a folder; "
                            "give a file name inside it\n")


def test_a_read_only_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "keep.csv"
    path.write_text("precious\n")
    monkeypatch.setattr(os, "access", lambda p, mode: False)
    with pytest.raises(InputError, match="the file is read-only"):
        check_output(path)
    assert path.read_text() == "precious\n"


def test_a_failed_run_keeps_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "run.csv"
    out.write_text("old\n")
    code, err = _invoke("simulate", "pendulum", "--method", "Euler", "-o", str(out))
    assert code == 2 and "Euler" in err
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.csv"]


# --- interrupted runs ------------------------------------------------------------------------


def _stopped(proc: subprocess.Popen) -> bool:
    """Stop ``proc`` (SIGSTOP) and wait until it is stopped; False when it ended first (then
    left for ``proc`` to reap: WNOWAIT)."""
    proc.send_signal(signal.SIGSTOP)
    if proc.returncode is not None:
        return False
    info = os.waitid(os.P_PID, proc.pid, os.WSTOPPED | os.WEXITED | os.WNOWAIT)
    return info.si_code == os.CLD_STOPPED


def _writing(folder: Path, name: str) -> bool:
    """Whether lagsim's temporary file of ``name`` in ``folder`` holds data: its write has
    begun. One that only exists is not enough: ``check_output`` makes one of the same name and
    removes it at once, empty, to test the folder before any work."""
    for path in folder.iterdir():
        if path.name.startswith(f".{name}."):
            try:
                if path.stat().st_size > 0:
                    return True
            except FileNotFoundError:
                continue  # removed since listed: check_output's, or the write renamed
    return False


def _signal_while_writing(tmp_path: Path, args: list[str], name: str, signum: int
                          ) -> tuple[int, str]:
    """Start lagsim and send ``signum`` while it is provably writing ``name``: once its
    temporary file holds data (:func:`_writing`), lagsim is stopped (SIGSTOP), the file is seen
    to be there still (the write not renamed), the signal sent, and lagsim continued (SIGCONT),
    so that it cannot finish the write between the check and the signal."""
    proc = _lagsim(*args, cwd=tmp_path)
    deadline = time.monotonic() + 240
    while True:
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline
        if _writing(tmp_path, name):
            assert _stopped(proc), proc.stderr.read().decode()
            if _writing(tmp_path, name):
                break
            proc.send_signal(signal.SIGCONT)
        time.sleep(0.02)
    proc.send_signal(signum)
    proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err.decode()


@pytest.mark.parametrize(("signum", "code", "said"), [
    (signal.SIGINT, 130, "lagsim: interrupted\n"),
    (signal.SIGTERM, 143, "lagsim: terminated by SIGTERM\n"),
    (signal.SIGHUP, 129, "lagsim: terminated by SIGHUP\n"),
], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_while_animate_writes_leaves_the_old_file(
    tmp_path: Path, signum: int, code: int, said: str
) -> None:
    (tmp_path / "swing.gif").write_bytes(b"old")
    returncode, err = _signal_while_writing(
        tmp_path, ["animate", "pendulum", "--t-end", "60", "--dpi", "40", "-o", "swing.gif"],
        "swing.gif", signum)
    assert (returncode, err) == (code, said)
    assert [p.name for p in tmp_path.iterdir()] == ["swing.gif"]
    assert (tmp_path / "swing.gif").read_bytes() == b"old"


def test_sigterm_while_simulate_writes_leaves_the_old_file(tmp_path: Path) -> None:
    (tmp_path / "run.csv").write_text("old\n")
    returncode, err = _signal_while_writing(
        tmp_path, ["simulate", "pendulum", "--t-end", "20", "--samples", "200001", "-o",
                   "run.csv"], "run.csv", signal.SIGTERM)
    assert (returncode, err) == (143, "lagsim: terminated by SIGTERM\n")
    assert [p.name for p in tmp_path.iterdir()] == ["run.csv"]
    assert (tmp_path / "run.csv").read_text() == "old\n"


def _lose_a_signal(signum: int) -> None:
    """Send ``signum`` to this process from inside a finalizer: its handler runs there, and
    Python loses the exception it raises (it prints "Exception ignored in ..." and goes on), as
    when a signal lands while a finalizer or a weakref callback of the drawing runs."""

    class Finalized:
        def __del__(self) -> None:
            os.kill(os.getpid(), signum)

    Finalized()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("to_file", [True, False], ids=["file", "stdout"])
def test_a_signal_whose_exception_python_lost_still_ends_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, to_file: bool
) -> None:
    """SIGHUP lost in a finalizer just before simulate writes its table: the signal's record
    (lagsim.errors.note_signal) stops the rename of the written file, which keeps the old
    file with no temporary one beside it, and ends the command with SIGHUP's status 129 and
    its one line, to a file as to standard output (where nothing is renamed)."""
    real = lagsim_io.write_csv

    def losing(*args: object) -> None:
        _lose_a_signal(signal.SIGHUP)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(lagsim_io, "write_csv", losing)
    out = tmp_path / "run.csv"
    out.write_text("old\n")
    code, err = _invoke("simulate", "pendulum", *SHORT, *(["-o", str(out)] if to_file else []))
    assert (code, err.splitlines()[-1]) == (129, "lagsim: terminated by SIGHUP")
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.csv"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_error_after_a_signal_ends_with_the_signals_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM lost in a finalizer, then an unexpected exception (as when the signal's
    exception lands in a C extension's Python callback and comes out as a SystemError): the
    command ends as SIGTERM asked, 143 and its line, not as a bug of lagsim, and the old file
    stays."""

    def failing(*_args: object) -> None:
        _lose_a_signal(signal.SIGTERM)
        raise SystemError("a C call returned a result with an exception set")

    monkeypatch.setattr(lagsim_io, "write_csv", failing)
    out = tmp_path / "run.csv"
    out.write_text("old\n")
    code, err = _invoke("simulate", "pendulum", *SHORT, "-o", str(out))
    assert (code, err.splitlines()[-1]) == (143, "lagsim: terminated by SIGTERM")
    assert out.read_text() == "old\n"


# --- closed pipes, full devices: every command ----------------------------------------------


def _every_command() -> list[list[str]]:
    """Arguments that make each command write to stdout; a command not known here (a group added
    later) is run with --help, which writes to stdout too."""
    known = {
        "systems": ["systems"],
        "derive": ["derive", "pendulum"],
        "simulate": ["simulate", "pendulum", *SHORT],
        "plot": ["plot", "pendulum", *SHORT, "--dpi", "20", "-o", "-"],
        "animate": ["animate", "pendulum", *SHORT, "--fps", "10", "--dpi", "20", "-o", "-"],
    }
    return [known.get(name, [name, "--help"]) for name in sorted(COMMANDS)]


@pytest.mark.parametrize("args", _every_command(), ids=lambda a: a[0])
def test_every_command_ends_quietly_on_a_closed_pipe(args: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = _lagsim(*args, stdout=write_end)
    finally:
        os.close(write_end)
    _, err = proc.communicate(timeout=300)
    assert (proc.returncode, err.decode()) == (EXIT_PIPE, "")


@pytest.mark.parametrize("args", _every_command(), ids=lambda a: a[0])
def test_every_command_with_stdout_closed_says_so_in_one_line(args: list[str]) -> None:
    """``lagsim ... >&-``: descriptor 1 is closed, Python's sys.stdout is None."""
    proc = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "lagsim",
                           *args], capture_output=True, text=True, env=_env(), cwd=ROOT,
                          timeout=300)
    assert (proc.returncode, proc.stderr) == (
        1, "lagsim: error: cannot write standard output: it is closed\n")


@needs_root
@pytest.mark.parametrize("args", _every_command(), ids=lambda a: a[0])
def test_every_command_on_a_full_device_says_so_in_one_line(tmp_path: Path, args: list[str]
                                                           ) -> None:
    full = _device(tmp_path, "full", FULL_DEV)
    with open(full, "wb") as stdout:
        proc = _lagsim(*args, stdout=stdout)
        _, err = proc.communicate(timeout=300)
    assert (proc.returncode, err.decode()) == (
        1, "lagsim: error: cannot write standard output: No space left on device\n")


@needs_root
@pytest.mark.parametrize("args", _commands_writing("{node}"), ids=lambda a: a[0])
def test_output_to_a_full_device_is_one_line_exit_1(tmp_path: Path, args: list[str]) -> None:
    full = _device(tmp_path, "full", FULL_DEV)
    code, err = _invoke(*[a.format(node=full) for a in args])
    assert (code, err) == (1, f"lagsim: error: -o: cannot write {str(full)!r}: "
                              "No space left on device\n")
    assert stat.S_ISCHR(os.lstat(full).st_mode)


@pytest.mark.parametrize("args", _commands_writing("{out}"), ids=lambda a: a[0])
def test_every_writing_command_into_an_unwritable_folder(tmp_path: Path, args: list[str]) -> None:
    for out, why in _unwritable_places(tmp_path):
        code, err = _invoke(*[a.format(out=out) for a in args])
        suffix = " (folder '/sys')" if out.startswith("/sys") else ""
        assert (code, err) == (2, f"lagsim: error: -o: cannot write {out!r}: {why}{suffix}\n")


# --- animate streams its frames --------------------------------------------------------------

_PEAK = """
import resource, sys, tempfile
from pathlib import Path
import numpy as np
from lagsim.output.io import Table
from lagsim.viz.animate import animate
frames = int(sys.argv[1])
t = np.linspace(0.0, frames / 10.0, 401)
theta = 0.5 * np.cos(2.0 * t)
table = Table(("t", "theta"), np.column_stack([t, theta]), "run.csv")
out = Path(tempfile.mkdtemp()) / "a.gif"
n = animate(table, {"bob": (np.sin(theta), -np.cos(theta))}, [("origin", "bob")], out, fps=10)
out.unlink()
out.parent.rmdir()
print(n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_kib(frames: int) -> int:
    proc = subprocess.run([sys.executable, "-c", _PEAK, str(frames)], capture_output=True,
                          text=True, env=_env(), timeout=300, check=True)
    n, peak = map(int, proc.stdout.split())
    assert n == frames
    return peak


def test_animate_memory_does_not_grow_with_the_frames() -> None:
    """Holding every frame costs about 1.85 MB each: 60 more frames would add about 110 MB."""
    assert _peak_kib(120) < 1.3 * _peak_kib(60)


def test_streamed_gif_frames_are_the_drawn_frames(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    t = np.linspace(0.0, 1.0, 41)
    theta = 0.8 * np.cos(3.0 * t)
    table = Table(("t", "theta"), np.column_stack([t, theta]), "run.csv")
    drawn: list[np.ndarray] = []
    add = lanimate._GifStream.add

    def keep(self, rgba):
        drawn.append(np.array(rgba[..., :3], dtype=int))
        add(self, rgba)

    monkeypatch.setattr(lanimate._GifStream, "add", keep)
    out = tmp_path / "swing.gif"
    n = lanimate.animate(table, {"bob": (np.sin(theta), -np.cos(theta))}, [("origin", "bob")],
                         out, fps=12, dpi=40)
    assert n == len(drawn) == 12
    with Image.open(out) as gif:
        assert gif.n_frames == n
        assert gif.info["loop"] == 0
        delays = []
        for i, expected in enumerate(drawn):
            gif.seek(i)
            delays.append(gif.info["duration"])
            shown = np.asarray(gif.convert("RGB"), dtype=int)
            error = np.abs(shown - expected)
            assert error.mean() < 1.0, i
            assert np.mean(error.max(axis=2) > 24) < 0.002, i
    assert sum(delays) == 1000 and set(delays) == {80, 90}
    assert [p.name for p in tmp_path.iterdir()] == ["swing.gif"]


def test_gif_to_stdout_pipe(tmp_path: Path) -> None:
    proc = _lagsim("animate", "pendulum", *SHORT, "--fps", "10", "--dpi", "20", "-o", "-",
                   stdout=subprocess.PIPE)
    data, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    (tmp_path / "a.gif").write_bytes(data)
    with Image.open(tmp_path / "a.gif") as gif:
        assert gif.n_frames == 2


# --- control characters never reach the terminal --------------------------------------------


def test_printable_escapes_control_characters() -> None:
    assert printable("a\x1b[2Jb\r\n\x07\u202ec\x9b") == "a\\x1b[2Jb\\r\\n\\x07\\u202ec\\x9b"
    assert printable("θ̇ ≥ 0, ok") == "θ̇ ≥ 0, ok"


def test_csv_header_escapes_are_escaped_in_errors(tmp_path: Path) -> None:
    csv = tmp_path / "evil.csv"
    csv.write_text("t,\x1b[2Jx\x07\n0,1\n1,2\n")
    code, err = _invoke("plot", str(csv), "--kind", "time", "--y", "z", "-o",
                        str(tmp_path / "p.png"))
    assert code == 2
    assert "\x1b" not in err and "\x07" not in err
    assert "\\x1b[2Jx\\x07" in err
    headless = tmp_path / "headless.csv"
    headless.write_text("\x1b]0;owned\x07,x\n0,1\n1,2\n")
    code, err = _invoke("plot", str(headless), "-o", str(tmp_path / "p.png"))
    assert code == 2
    assert err == (f"lagsim: error: {headless}:1:1: no 't' column: a lagsim CSV starts with the "
                   "time column 't' (the header is \\x1b]0;owned\\x07,x)\n")


def _fake_ffmpeg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ``ffmpeg`` that copies the raw frames it is fed to its last argument, the output."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ffmpeg"
    script.write_text('#!/bin/sh\nfor last; do :; done\ncat > "$last"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.parametrize("kind", ["file", "fifo"])
def test_mp4_goes_through_the_same_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          kind: str) -> None:
    _fake_ffmpeg(tmp_path, monkeypatch)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "swing.mp4"
    received: list[bytes] = []
    if kind == "fifo":
        os.mkfifo(out)
        reader = threading.Thread(target=lambda: received.append(out.read_bytes()), daemon=True)
        reader.start()
    else:
        out.write_bytes(b"old")
    t = np.linspace(0.0, 0.5, 11)
    table = Table(("t", "theta"), np.column_stack([t, np.cos(t)]), "run.csv")
    n = lanimate.animate(table, {"bob": (np.sin(t), -np.cos(t))}, [], out, fps=10, dpi=20)
    if kind == "fifo":
        reader.join(timeout=60)
        assert stat.S_ISFIFO(os.lstat(out).st_mode)
        data = received[0]
    else:
        data = out.read_bytes()
    assert n == 5
    assert len(data) == n * 128 * 120 * 4
    assert [p.name for p in out_dir.iterdir()] == ["swing.mp4"]


@needs_root
def test_the_chain_generator_writes_through_the_same_writer(tmp_path: Path) -> None:
    from lagsim.cli.chains import main as chains_main
    from lagsim.spec.chains import chain_yaml

    node = _device(tmp_path, "null", NULL_DEV)
    assert chains_main(["2", "-o", str(node)]) == 0
    assert stat.S_ISCHR(os.lstat(node).st_mode) and os.lstat(node).st_rdev == NULL_DEV
    (tmp_path / "folder").mkdir()
    assert chains_main(["2", "-o", str(tmp_path / "folder")]) == 2
    link = tmp_path / "chain.yaml"
    link.symlink_to(tmp_path / "folder" / "real.yaml")
    assert chains_main(["2", "-o", str(link)]) == 0
    assert link.is_symlink()
    assert (tmp_path / "folder" / "real.yaml").read_text() == chain_yaml(2)
