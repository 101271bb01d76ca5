"""Files lagsim reads and writes, as an attacker or a careless user would use them (issue 32:
"-o replaces the system file itself", "A file written outside the current folder", the
temporary left by a SIGKILL, "-o ''", "read_csv/plot hold about ten times the CSV's size",
"animate draws fps × span frames with no bound", "traj.to_csv(3)").

Each command is run through click's CliRunner (in this process, so that ``lagsim.api.run`` and
``lagsim.sweep.core.execute`` can be replaced by a marker that fails the test if the work starts)
or, where a process has to die or run out of memory, as a subprocess.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

import lagsim
from lagsim.cli import main
from lagsim.errors import InputError
from lagsim.output import io as lio

ROOT = Path(__file__).resolve().parents[1]
SHORT = ["--t-end", "0.2", "--samples", "5"]
BLOW_UP = "coordinates: [x]\nkinetic: 1/2*x_dot**2\npotential: -x**4\ninitial: {x: 1.0}\n"
"""ẍ = 4x³ from rest at x = 1 blows up at t* = K(1/2)/2 ≈ 0.927 (tests/test_api.py)."""
SWEEP_TABLE = "l\n1.0\n2.0\n"
PENDULUM = CliRunner().invoke(main, ["systems", "--show", "pendulum"]).stdout


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stderr


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any simulation or sweep started fails the test: the checks must come first."""
    def started(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the work started before the output was checked")

    import lagsim.api
    import lagsim.sweep.core

    monkeypatch.setattr(lagsim.api, "run", started)
    monkeypatch.setattr(lagsim.sweep.core, "execute", started)


def _system(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(text if text is not None else PENDULUM)
    return path


# --- 1. an output that is an input -----------------------------------------------------------


def _spellings(tmp_path: Path, path: Path) -> dict[str, str]:
    """The same file named five ways: as given, through ./ and .., absolute, by a hard link and
    by a symbolic link."""
    hard = tmp_path / "hard.yaml"
    os.link(path, hard)
    soft = tmp_path / "soft.yaml"
    soft.symlink_to(path.name)
    (tmp_path / "sub").mkdir()
    return {"same": str(path), "dotted": str(tmp_path / "sub" / ".." / "." / path.name),
            "absolute": str(path.resolve()), "hard link": str(hard), "symlink": str(soft)}


@pytest.mark.parametrize("how", ["same", "dotted", "absolute", "hard link", "symlink"])
def test_simulate_refuses_to_write_its_system_file(tmp_path: Path, how: str,
                                                    no_work: None) -> None:
    system = _system(tmp_path)
    before = system.read_bytes()
    out = _spellings(tmp_path, system)[how]
    for option in ("-o", "--partial"):
        code, err = _invoke("simulate", system, option, out)
        assert code == 2, err
        named = "" if out == str(system) else f" {str(system)!r}"
        assert err == (f"lagsim: error: {option}: cannot write {out!r}: it is the input FILE"
                       f"{named} (the same file); give another file name, or --force to "
                       "replace the input\n")
        assert system.read_bytes() == before


def test_force_writes_over_the_input(tmp_path: Path) -> None:
    system = _system(tmp_path)
    code, err = _invoke("simulate", system, *SHORT, "-o", system, "--force")
    assert code == 0, err
    assert system.read_text().splitlines()[0] == "t,theta,theta_dot,energy"
    assert len(system.read_text().splitlines()) == 6


def test_partial_that_is_the_input_is_refused_before_the_failing_run(tmp_path: Path) -> None:
    """The issue's case: the run fails, and --partial mine.yaml replaced the system by the rows
    before the failure. Now refused before the run (exit 2, not the run's 1)."""
    system = _system(tmp_path, BLOW_UP)
    code, err = _invoke("simulate", system, "--t-end", "2", "--partial", system)
    assert code == 2 and "--partial: cannot write" in err and "it is the input FILE" in err
    assert system.read_text() == BLOW_UP


def _csv(tmp_path: Path, name: str = "run.csv") -> Path:
    """A pendulum's CSV (θ = 0.1 cos(πt), made here: no simulation)."""
    t = np.linspace(0.0, 1.0, 5)
    theta = 0.1 * np.cos(np.pi * t)
    path = tmp_path / name
    lio.write_csv(["t", "theta", "theta_dot", "energy"],
                  np.column_stack([t, theta, -0.1 * np.pi * np.sin(np.pi * t), 0 * t]), path)
    return path


def test_every_command_refuses_its_inputs_as_output(tmp_path: Path, no_work: None) -> None:
    system = _system(tmp_path)
    csv = _csv(tmp_path)
    table = tmp_path / "runs.csv"
    table.write_text(SWEEP_TABLE)
    link = tmp_path / "link.csv"
    link.symlink_to(csv)
    cases = [
        (["plot", csv, "-o", link], "INPUT", csv),
        (["plot", csv, "--system", system, "-o", system], "--system", system),
        (["plot", system, "-o", system], "INPUT", system),
        (["animate", csv, "--system", system, "-o", system], "--system", system),
        (["animate", system, "-o", system], "INPUT", system),
        (["sweep", system, "--table", table, "-o", table], "--table", table),
        (["sweep", system, "--values", "l=1,2", "-o", system], "FILE", system),
        (["action", system, "--stationary", "--from", "theta=0", "--to", "theta=1", "-o",
          system], "FILE", system),
        (["modes", system, "--plot", "-o", system], "FILE", system),
    ]
    for args, what, victim in cases:
        before = victim.read_bytes()
        code, err = _invoke(*args)
        assert code == 2, (args, err)
        assert f"it is the input {what}" in err and "--force" in err, (args, err)
        assert victim.read_bytes() == before


def test_plot_refuses_each_of_several_inputs(tmp_path: Path) -> None:
    first, second = _csv(tmp_path, "a.csv"), _csv(tmp_path, "b.csv")
    code, err = _invoke("plot", first, second, "-o", second)
    assert code == 2 and "it is the input INPUT" in err
    assert second.read_text().startswith("t,theta")


def test_sweep_refuses_a_run_file_that_is_its_table(tmp_path: Path, no_work: None) -> None:
    """--save-trajectories DIR writes DIR/run_<i>.csv: a --table that is DIR/run_1.csv would be
    replaced by run 1's trajectory."""
    runs = tmp_path / "runs"
    runs.mkdir()
    table = runs / "run_1.csv"
    table.write_text(SWEEP_TABLE)
    code, err = _invoke("sweep", "pendulum", "--table", table, "--save-trajectories", runs,
                        *SHORT, "-o", tmp_path / "out.csv")
    assert code == 2
    assert err.startswith(f"lagsim: error: --save-trajectories: cannot write "
                          f"{str(runs / 'run_1.csv')!r}: it is the input --table")
    assert table.read_text() == SWEEP_TABLE


def test_new_refuses_to_overwrite_the_bundled_file(tmp_path: Path) -> None:
    from importlib import resources

    bundled = Path(str(resources.files("lagsim.systems").joinpath("pendulum.yaml")))
    before = bundled.read_bytes()
    link = tmp_path / "p.yaml"
    link.symlink_to(bundled)
    code, err = _invoke("new", "pendulum", "-o", link)
    assert code == 2 and "it is the input NAME" in err
    assert bundled.read_bytes() == before


def test_a_bundled_name_is_an_input_too(tmp_path: Path, no_work: None) -> None:
    from importlib import resources

    bundled = Path(str(resources.files("lagsim.systems").joinpath("pendulum.yaml")))
    code, err = _invoke("simulate", "pendulum", "-o", bundled)
    assert code == 2 and "it is the input FILE" in err


def test_check_output_compares_devices_and_inodes(tmp_path: Path) -> None:
    a = tmp_path / "a.csv"
    a.write_text("x\n")
    b = tmp_path / "b.csv"
    b.write_text("x\n")
    os.link(a, tmp_path / "c.csv")
    assert lio.check_output(b, inputs=[(a, "FILE")]).path == b.resolve()
    with pytest.raises(InputError, match="it is the input FILE"):
        lio.check_output(tmp_path / "c.csv", inputs=[(a, "FILE")])
    assert lio.check_output(tmp_path / "new.csv", inputs=[(a, "FILE")]).kind == "file"


# --- 2. file names made from user text -----------------------------------------------------


HOSTILE = {
    "..": "is a folder's name",
    ".": "is a folder's name",
    "": "is empty",
    "../../escaped/owned": "contains '/', which separates folders",
    "/tmp/owned": "contains '/', which separates folders",
    "a\\b": "contains '\\\\', which separates folders",
    "nul\x00byte": "contains the control character '\\x00'",
    "esc\x1b[31m": "contains the control character '\\x1b'",
    "new\nline": "contains the control character '\\n'",
    "bidi\u202egnp.exe": "contains the control character '\\u202e'",
    "x" * 250: "makes a file name of 262 bytes, more than the 255 a file name may have",
    "é" * 125: "makes a file name of 262 bytes, more than the 255 a file name may have",
}


@pytest.mark.parametrize("stem", list(HOSTILE), ids=lambda s: repr(s)[:20])
def test_derived_path_refuses_hostile_names(stem: str) -> None:
    with pytest.raises(InputError) as err:
        lio.derived_path(".", stem, ".partial.csv", "--partial", "the system's name")
    assert err.value.location == lagsim.Location("--partial")
    assert f"it {HOSTILE[stem]}; give --partial a file name" in err.value.message


def test_derived_path_keeps_ordinary_names_in_their_folder(tmp_path: Path) -> None:
    for stem in ("pendulum", "Double pendulum (planar)", "..hidden", "-dash", "x" * 243,
                 "CON", "aux"):
        path = lio.derived_path(tmp_path, stem, ".partial.csv")
        assert Path(path).parent == tmp_path and Path(path).name == f"{stem}.partial.csv"
    assert lio.derived_path(".", "run", ".csv") == "run.csv"


def test_windows_reserved_names_are_refused_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """CON, PRN, AUX, NUL, COM1-9, LPT1-9 with any extension, and a trailing dot or space, name
    devices or vanish on Windows; elsewhere they are ordinary names (tested above)."""
    monkeypatch.setattr(lio, "_WINDOWS", True)
    for stem, why in (("CON", "is a device name Windows reserves"),
                      ("lpt1", "is a device name Windows reserves"),
                      ("c:evil", "names a drive")):
        with pytest.raises(InputError, match=why):
            lio.derived_path(".", stem, ".csv")
    with pytest.raises(InputError, match="ends with a dot or a space"):
        lio.derived_path(".", "x", ". ")


@pytest.mark.parametrize("hostile", ["../escaped/owned", "ABSOLUTE/escaped/owned"])
def test_partial_from_a_hostile_name_is_refused_before_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hostile: str) -> None:
    """The issue's case: `name: ../../escaped/owned` (or an absolute name) made --partial write
    outside the current folder."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    escaped = tmp_path / "a" / "escaped"
    escaped.mkdir()
    name = hostile.replace("ABSOLUTE", str(tmp_path / "a"))
    system = work / "sys.yaml"
    system.write_text(f"name: {name}\n{BLOW_UP}")
    monkeypatch.chdir(work)
    code, err = _invoke("simulate", system, "--t-end", "2", "--partial")
    assert code == 2
    assert err == (f"lagsim: error: --partial: the system's name {name!r} cannot make a file "
                   "name: it contains '/', which separates folders; give --partial a file "
                   "name\n")
    assert not list(escaped.iterdir())
    assert sorted(p.name for p in work.iterdir()) == ["sys.yaml"]


def test_partial_default_still_goes_beside_the_output_or_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    system = tmp_path / "sys.yaml"
    system.write_text(f"name: blow_up\n{BLOW_UP}")
    monkeypatch.chdir(tmp_path)
    code, err = _invoke("simulate", system, "--t-end", "2", "--partial")
    assert code == 1 and "kept the " in err and "blow_up.partial.csv" in err
    assert lio.read_csv(tmp_path / "blow_up.partial.csv").time[-1] == pytest.approx(0.92, abs=0.01)
    code, err = _invoke("simulate", system, "--t-end", "2", "--partial", "-o",
                        tmp_path / "out.csv")
    assert code == 1 and (tmp_path / "out.partial.csv").exists()


def test_plot_default_name_goes_through_derived_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lagsim.viz.figures

    monkeypatch.setattr(lagsim.viz.figures, "can_show_window", lambda: False)
    monkeypatch.chdir(tmp_path)
    csv = _csv(tmp_path)
    code, err = _invoke("plot", csv, "--dpi", "20")
    assert code == 0 and err == "lagsim: no display: writing run.png\n"
    assert Image.open(tmp_path / "run.png").format == "PNG"


def test_sweep_run_files_are_made_by_derived_path(tmp_path: Path) -> None:
    from lagsim.sweep import core as sweep

    assert sweep.run_file(str(tmp_path), 7, 12) == str(tmp_path / "run_07.csv")
    assert sweep.run_file("d.parquet", 3, 4) == os.path.join("d.parquet", "run_3.parquet")


# --- 3. temporaries a killed lagsim left ------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _temp_name(target: str, pid: int, host: str | None = None, suffix: str = ".csv") -> str:
    return f".{target}.lagsim-{host or lio._host()}-{pid}.abcd_123.tmp{suffix}"


def test_a_stale_temporary_of_a_dead_lagsim_is_removed_on_the_next_write(
        tmp_path: Path) -> None:
    dead = _dead_pid()
    stale = tmp_path / _temp_name("run.csv", dead)
    stale.write_bytes(b"1," * 1000)
    live = tmp_path / _temp_name("run.csv", os.getppid())
    other_host = tmp_path / _temp_name("run.csv", dead, host="0123abcd"
                                       if lio._host() != "0123abcd" else "fedcba98")
    unrelated = tmp_path / ".run.csv.abcd_123.tmp.csv"
    near_miss = tmp_path / (_temp_name("run.csv", dead) + ".bak")
    link = tmp_path / _temp_name("b.csv", dead)
    link.symlink_to(tmp_path / "elsewhere")
    for path in (live, other_host, unrelated, near_miss):
        path.write_text("keep")
    lio.write_csv(["t", "x"], np.array([[0.0, 1.0], [1.0, 2.0]]), tmp_path / "new.csv")
    assert not stale.exists()
    assert all(p.exists() for p in (live, other_host, unrelated, near_miss))
    assert link.is_symlink()
    assert lio.read_csv(tmp_path / "new.csv").n_samples == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_another_users_stale_temporary_is_kept(tmp_path: Path) -> None:
    theirs = tmp_path / _temp_name("x.csv", _dead_pid())
    theirs.write_text("theirs")
    os.chown(theirs, 65534, 65534)
    lio.write_csv(["t"], np.zeros((2, 1)), tmp_path / "mine.csv")
    assert theirs.exists()


def test_the_temporary_name_fits_and_carries_the_pid(tmp_path: Path) -> None:
    """A 250-byte output name was refused after the run (its temporary, 270 bytes, could not be
    made); now the temporary's copy of the name is shortened."""
    name = "x" * 246 + ".csv"
    seen: list[str] = []
    with lio.open_output(tmp_path / name) as out:
        out.write("t\n0\n")
        seen = [p.name for p in tmp_path.iterdir()]
    (temp,) = seen
    found = lio._TEMPORARY.fullmatch(temp)
    assert found is not None and int(found["pid"]) == os.getpid()
    assert len(temp.encode()) <= 255 and temp.endswith(".tmp.csv")
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_a_temporary_left_by_sigkill_is_removed_by_the_next_write(tmp_path: Path) -> None:
    """The issue's case, for real: lagsim killed while writing its GIF leaves the temporary;
    the next lagsim writing to that folder removes it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "lagsim", "animate", "pendulum", "--t-end",
                             "20", "--fps", "10", "--dpi", "20", "-o", "a.gif"], cwd=tmp_path,
                            env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(".a.gif.lagsim-") for p in tmp_path.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (left,) = [p for p in tmp_path.iterdir() if p.name.startswith(".a.gif.lagsim-")]
    assert lio._TEMPORARY.fullmatch(left.name)["pid"] == str(proc.pid)
    done = subprocess.run([sys.executable, "-m", "lagsim", "simulate", "pendulum", *SHORT, "-o",
                           "b.csv"], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.csv"]


# --- 4. empty and over-long names, checked before the work ------------------------------------


def test_an_empty_output_name_is_an_input_error(no_work: None) -> None:
    for command in (["simulate", "pendulum"], ["plot", "pendulum"], ["animate", "pendulum"]):
        code, err = _invoke(*command, "-o", "")
        assert (code, err) == (2, "lagsim: error: -o: the file name is empty; give a file "
                                  "name, or - for standard output\n")


def test_an_overlong_output_name_is_an_input_error_before_the_run(
        tmp_path: Path, no_work: None) -> None:
    name = str(tmp_path / ("x" * 256 + ".csv"))
    code, err = _invoke("simulate", "pendulum", "-o", name)
    assert (code, err) == (2, f"lagsim: error: -o: cannot write {name!r}: File name too long\n")


def test_an_output_name_near_the_limit_works(tmp_path: Path) -> None:
    out = tmp_path / ("x" * 247 + ".csv")
    code, err = _invoke("simulate", "pendulum", *SHORT, "-o", out)
    assert code == 0, err
    assert lio.read_csv(out).n_samples == 5


def test_a_save_folder_that_cannot_take_the_runs_is_refused_before_the_sweep(
        tmp_path: Path, no_work: None) -> None:
    runs = tmp_path / "runs"
    (runs / "run_0.csv").mkdir(parents=True)
    code, err = _invoke("sweep", "pendulum", "--values", "l=1,2", "--save-trajectories", runs,
                        *SHORT, "-o", tmp_path / "t.csv")
    assert (code, err) == (2, f"lagsim: error: --save-trajectories: cannot write "
                              f"{str(runs / 'run_0.csv')!r}: it is a folder; give a file name "
                              "inside it\n")


# --- 5. CSVs read within limits ---------------------------------------------------------------


def _limited(limit_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))


@pytest.mark.parametrize(("producer", "said"), [
    ("import sys\nsys.stdout.write('t,x\\n')\nwhile True: sys.stdout.write('1.0,2.0\\n' * 4096)",
     "<stdin>:1000002: more than 1,000,001 lines; lagsim reads a CSV of at most 1,000,001 lines "
     "(a header and the 1,000,000 rows `lagsim simulate` writes at most)"),
    ("import sys\nsys.stdout.write('t,x\\n')\nwhile True: sys.stdout.write('1.0,' * 4096)",
     "<stdin>:2: a line of more than 1,000,000 characters; lagsim reads a CSV of at most "
     "1,000,000 characters a line"),
], ids=["rows", "line"])
def test_an_endless_csv_on_stdin_is_refused_in_bounded_memory(
        tmp_path: Path, producer: str, said: str) -> None:
    """`producer | lagsim plot -` where the producer never stops: refused within the limits,
    in a process held to 2 GB of address space (the old reader grew until memory ran out)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    source = subprocess.Popen([sys.executable, "-c", producer], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        start = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "lagsim", "plot", "-", "-o",
                               str(tmp_path / "p.png")], stdin=source.stdout,
                              capture_output=True, text=True, env=env, timeout=120,
                              preexec_fn=lambda: _limited(2 * 1024**3))
        elapsed = time.monotonic() - start
    finally:
        source.kill()
        source.wait()
        source.stdout.close()
    assert (done.returncode, done.stderr) == (2, f"lagsim: error: {said}\n")
    assert elapsed < 60
    assert not (tmp_path / "p.png").exists()


def test_a_csv_past_the_cell_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text("t,a,b,c,d\n" + "0,1,2,3,4\n" * 7)
    with pytest.raises(InputError) as err:
        lio.read_csv(path, max_cells=30)
    assert str(err.value) == (f"{path}:8: more than 6 rows of 5 columns; lagsim reads a CSV of "
                              "at most 30 numbers")
    path.write_text("t,a,b,c,d\n" + "0,1,2,3,4\n" * 6)
    assert lio.read_csv(path, max_cells=30).data.shape == (6, 5)


def test_read_csv_holds_floats_not_python_objects(tmp_path: Path) -> None:
    """The rows are kept as blocks of float arrays: the table is 8 bytes a number, and every
    value reads back bit for bit across block boundaries."""
    rows = lio._BLOCK_ROWS * 2 + 5
    data = np.random.default_rng(1).standard_normal((rows, 3))
    lio.write_csv(["t", "x", "y"], data, tmp_path / "r.csv")
    table = lio.read_csv(tmp_path / "r.csv")
    assert table.data.dtype == np.float64 and table.data.nbytes == rows * 3 * 8
    np.testing.assert_array_equal(table.data, data)
    assert not table.data.flags.writeable


# --- 6. animate's frame cap -------------------------------------------------------------------


def test_animate_refuses_a_run_of_too_many_frames(tmp_path: Path) -> None:
    start = time.monotonic()
    code, err = _invoke("animate", "pendulum", "--t-end", "20000", "--samples", "101", "-o",
                        tmp_path / "a.gif")
    assert time.monotonic() - start < 30
    assert code == 2
    assert err.splitlines()[-1] == (
        "lagsim: error: --fps: the animation would have 600,000 frames (--fps 30 × 20000 s of "
        "simulated time), more than lagsim's limit of 10,000; give --frames N (at most 10,000) "
        "to draw N frames over the whole run, a lower --fps, or a shorter --t-end")
    assert not list(tmp_path.iterdir())


def test_animate_refuses_a_csv_spanning_a_trillion_seconds(tmp_path: Path) -> None:
    csv = tmp_path / "long.csv"
    csv.write_text("t,theta,theta_dot\n0,0.1,0\n1e12,0.1,0\n")
    code, err = _invoke("animate", csv, "--system", "pendulum", "-o", tmp_path / "a.gif")
    assert code == 2
    assert err.splitlines()[-1].startswith(
        "lagsim: error: --fps: the animation would have 30,000,000,000,000 frames (--fps 30 × "
        "1e+12 s of simulated time)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.csv"]


def test_animate_frames_draws_that_many_and_is_capped(tmp_path: Path) -> None:
    code, err = _invoke("animate", "pendulum", "--t-end", "100", "--samples", "201", "--frames",
                        "4", "--dpi", "20", "-o", tmp_path / "a.gif")
    assert code == 0, err
    assert err.endswith("(4 frames)\n")
    assert Image.open(tmp_path / "a.gif").n_frames == 4
    code, err = _invoke("animate", "pendulum", "--frames", "10001", "-o", tmp_path / "b.gif")
    assert (code, err) == (2, "lagsim: error: --frames: the animation would have 10,001 frames, "
                              "more than lagsim's limit of 10,000; give --frames N (at most "
                              "10,000) to draw N frames over the whole run, a lower --fps, or a "
                              "shorter --t-end\n")


# --- 7. path arguments of the API -------------------------------------------------------------


def test_api_path_arguments_of_the_wrong_type_are_type_errors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    traj = lagsim.load("pendulum").simulate(t_end=0.2, samples=3)
    for bad, shown in ((3, "int 3"), (b"run.csv", "bytes b'run.csv'"), (None, "NoneType None")):
        with pytest.raises(TypeError) as err:
            traj.to_csv(bad)
        assert str(err.value) == f"path must be a file name, a str or a path-like object, " \
                                 f"not {shown}"
        with pytest.raises(TypeError, match=r"^path must be a file name"):
            lagsim.read_csv(bad)
    assert not list(tmp_path.iterdir())
    with pytest.raises(lagsim.InputError, match="the file name is empty"):
        traj.to_csv("")
    traj.to_csv(tmp_path / "ok.csv")
    assert lagsim.read_csv(tmp_path / "ok.csv")["t"].tolist() == [0.0, 0.1, 0.2]
