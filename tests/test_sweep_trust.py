"""`lagsim sweep` against other users, careless input and real clusters (issues 29 and 32): the
local workers open no port, Dask's logging stays off stderr, --scheduler addresses are checked
and the connect is bounded, relative --save-trajectories folders mean the client's, axes are
checked before they are made, the save folder before the runs, and the table's columns are the
ones the run asks for (integer run numbers, stop_time with --stop-when, energy_gain when h is
not conserved)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lagsim.cli import main
from lagsim.sweep import core as sw

SYNC = ("--scheduler", "synchronous")
LAGSIM = (sys.executable, "-m", "lagsim")


def invoke(*args: str) -> object:
    return CliRunner().invoke(main, list(args))


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


# --- the local workers: no port, no dashboard, no log lines ----------------------------------


def _listening(process: Any) -> set[tuple[str, int]]:
    import psutil

    found = set()
    for p in (process, *process.children(recursive=True)):
        try:
            for c in p.net_connections(kind="inet"):
                if c.status == psutil.CONN_LISTEN:
                    found.add((c.laddr.ip, c.laddr.port))
        except psutil.Error:
            continue
    return found


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory):
    """One sweep on two local workers, watched while it runs: the ports its processes listen
    on, how many worker processes it had at once, its table and its stderr. Port 8787 is taken
    beforehand when free (as when another Dask dashboard runs), which made Dask's local cluster
    print "Port 8787 is already in use"."""
    psutil = pytest.importorskip("psutil")
    out = tmp_path_factory.mktemp("local") / "table.csv"
    blocker = socket.socket()
    try:
        blocker.bind(("127.0.0.1", 8787))
        blocker.listen(1)
    except OSError:
        blocker.close()
        blocker = None
    try:
        proc = subprocess.Popen([*LAGSIM, "sweep", "pendulum", "--grid", "theta=0.1:3:60",
                                 "--t-end", "5", "--workers", "2", "-o", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watched = psutil.Process(proc.pid)
        listening: set[tuple[str, int]] = set()
        workers = 0
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                listening |= _listening(watched)
                workers = max(workers, sum(1 for c in watched.children(recursive=True)
                                           if "spawn_main" in " ".join(c.cmdline())
                                           or "distributed" in " ".join(c.cmdline())))
            except psutil.Error:
                pass
            time.sleep(0.2)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if blocker is not None:
            blocker.close()
    return {"code": proc.returncode, "listening": listening, "workers": workers,
            "stderr": stderr, "table": rows(out.read_text()) if out.exists() else []}


def test_a_local_sweep_listens_on_no_port_so_no_client_can_reach_its_workers(local_sweep):
    """Issue 32: the local cluster's scheduler and workers listened on 127.0.0.1 without
    authentication (and a dashboard on 8787): a plain Dask client of another local user could
    submit code. Now the sweep's processes listen on nothing, and a plain client pointed at any
    port they would open is refused; the runs still go to two worker processes."""
    from distributed import Client

    assert local_sweep["code"] == 0, local_sweep["stderr"]
    assert len(local_sweep["table"]) == 60
    assert local_sweep["workers"] == 2
    for host, port in local_sweep["listening"]:
        with pytest.raises((OSError, TimeoutError)):
            Client(f"tcp://{host}:{port}", timeout=1).close()
    assert local_sweep["listening"] == set()
    assert ("127.0.0.1", 8787) not in local_sweep["listening"]


def test_a_local_sweep_prints_nothing_of_dask_on_stderr(local_sweep):
    """Issue 29: "Port 8787 is already in use" and heartbeat tracebacks from distributed's
    loggers on every local sweep. A clean sweep's stderr is empty."""
    assert local_sweep["code"] == 0
    assert local_sweep["stderr"] == ""


# --- --scheduler: checked addresses, a bounded connect, a real cluster ------------------------


@pytest.mark.parametrize(("address", "message"), [
    ("threads", "'threads' is one of Dask's own schedulers, not an address lagsim uses; give "
     "tcp://HOST:PORT (a `dask scheduler`), tls://HOST:PORT, or 'synchronous'; leave "
     "--scheduler out for this machine's cores"),
    ("processes", "'processes' is one of Dask's own schedulers"),
    ("", "'' is not a scheduler address; give tcp://HOST:PORT"),
    ("tcp://", "'tcp://' is not a scheduler address (it needs a host and nothing after the "
     "port)"),
    ("ucx://127.0.0.1:1", "'ucx://127.0.0.1:1': lagsim reaches a scheduler by tcp:// or "
     "tls://, not ucx://"),
    ("inproc://x", "'inproc://x': lagsim reaches a scheduler by tcp:// or tls://, not "
     "inproc://"),
    ("tcp://h:99999", "'tcp://h:99999' is not a scheduler address (Port out of range"),
    ("tcp://h:1/path", "'tcp://h:1/path' is not a scheduler address (it needs a host"),
    ("tls://127.0.0.1:1", "a tls:// scheduler needs Dask's TLS settings: "
     "distributed.comm.tls.ca-file, distributed.comm.tls.client.cert"),
])
def test_a_bad_scheduler_address_is_refused_at_once(address, message, monkeypatch):
    """Issue 32: these took 20 s, then printed a Client.__del__ traceback or an internal
    error. Now: one located line, exit 2, before the file is read."""
    for name in list(os.environ):
        if name.startswith("DASK_"):
            monkeypatch.delenv(name)
    start = time.monotonic()
    result = invoke("sweep", "pendulum", "--values", "theta=0.1,0.2", "--scheduler", address)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"lagsim: error: --scheduler: {message}")
    assert result.stderr.count("\n") == 1
    assert result.stdout == ""
    assert time.monotonic() - start < 5


def test_a_scheduler_that_accepts_and_never_answers_is_given_up_in_time(tmp_path):
    """Issue 32: a port that accepts TCP and never answers hung the sweep for 90 s and more
    (Dask waits for the handshake without limit), then a traceback. The whole connect is
    bounded by CONNECT_SECONDS (2 s here)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    code = ("import sys, lagsim.sweep.core as sw; sw.CONNECT_SECONDS = 2.0\n"
            "from lagsim.cli import main\n"
            f"main(['sweep', 'pendulum', '--values', 'theta=0.1,0.2', '--t-end', '0.1', "
            f"'--scheduler', 'tcp://127.0.0.1:{port}'], prog_name='lagsim')\n")
    try:
        start = time.monotonic()
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=60)
        elapsed = time.monotonic() - start
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        server.close()
    assert accepted, "the sweep never connected"
    assert result.returncode == 2
    assert result.stderr == (f"lagsim: error: --scheduler: cannot reach the Dask scheduler "
                             f"'tcp://127.0.0.1:{port}': no answer within 2 s (is it a Dask "
                             "scheduler?); start one with `dask scheduler` and workers with `dask "
                             "worker ADDRESS`, or leave --scheduler out for this machine's "
                             "cores\n")
    assert elapsed < 2.0 + 8.0  # the bound, plus the start-up of Python and lagsim


def _dask(*args: str, cwd: Path) -> subprocess.Popen:
    dask = Path(sys.executable).with_name("dask")
    return subprocess.Popen([str(dask), *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


@contextlib.contextmanager
def _cluster(folder: Path, workers: int, tls: tuple[str, ...] = ()) -> Iterator[str]:
    """A scheduler and ``workers`` single-threaded workers started as separate processes on
    127.0.0.1 with ``folder`` as their working folder (``tls``: their --tls-* flags); its
    address; every process killed at the end."""
    if not Path(sys.executable).with_name("dask").exists():
        pytest.skip("the dask command is not installed beside this Python")
    info = folder / "scheduler.json"
    started = [_dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(info), *(("--protocol", "tls") if tls else ()),
                     *tls, cwd=folder)]
    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert info.exists(), "the scheduler did not start"
        time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        for _ in range(workers):
            started.append(_dask("worker", address, "--nthreads", "1", "--no-nanny",
                                 "--no-dashboard", "--host", "127.0.0.1", *tls, cwd=folder))
        yield address
    finally:
        for process in reversed(started):
            process.kill()
        for process in started:
            process.wait(timeout=30)


@pytest.fixture()
def external_cluster(tmp_path):
    """Two workers in a working folder of their own."""
    from distributed import Client

    elsewhere = tmp_path / "workers_cwd"
    elsewhere.mkdir()
    with _cluster(elsewhere, 2) as address:
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, elsewhere


def test_a_relative_save_folder_is_the_client_s_on_an_external_cluster(external_cluster,
                                                                       tmp_path):
    """Issue 29: with a relative --save-trajectories DIR, each worker wrote (or failed to
    write) in its own working folder. The client resolves the folder: every run's file lands
    in the client's DIR, none in the workers' folder, and Dask prints nothing on stderr."""
    address, elsewhere = external_cluster
    here = tmp_path / "client_cwd"
    here.mkdir()
    result = subprocess.run([*LAGSIM, "sweep", "pendulum", "--values",
                             "theta=0.1,0.2,0.3,0.4,0.5,0.6", "--t-end", "0.5", "--samples",
                             "6", "--scheduler", address, "--save-trajectories", "runs"],
                            cwd=here, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert sorted(p.name for p in (here / "runs").iterdir()) == [f"run_{i}.csv"
                                                                 for i in range(6)]
    assert not (elsewhere / "runs").exists()
    single = subprocess.run([*LAGSIM, "simulate", "pendulum", "--init", "theta=0.4", "--t-end",
                             "0.5", "--samples", "6"], capture_output=True, text=True,
                            timeout=60).stdout
    assert (here / "runs" / "run_3.csv").read_text() == single


def test_a_tls_cluster_is_used_with_dask_s_tls_settings(tmp_path):
    """Issue 32: a tls:// address was an internal error, so a TLS-secured cluster could not be
    used. With Dask's distributed.comm.tls settings (here from the environment) the sweep runs
    on it, bit for bit the synchronous sweep; the same scheduler as tcp:// is refused."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=lagsim-test"],
                   check=True, capture_output=True, timeout=60)
    tls = ("--tls-ca-file", str(cert), "--tls-cert", str(cert), "--tls-key", str(key))
    env = dict(os.environ, DASK_DISTRIBUTED__COMM__TLS__CA_FILE=str(cert),
               DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT=str(cert),
               DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY=str(key))
    args = ("sweep", "pendulum", "--values", "theta=0.1,0.2,0.3", "--t-end", "0.5",
            "--samples", "3")
    with _cluster(tmp_path, 1, tls) as address:
        assert address.startswith("tls://127.0.0.1:")
        result = subprocess.run([*LAGSIM, *args, "--scheduler", address], env=env,
                                capture_output=True, text=True, timeout=120)
        plain = subprocess.run([*LAGSIM, *args, "--scheduler",
                                address.replace("tls://", "tcp://")],
                               capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == invoke(*args, *SYNC).stdout
    assert plain.returncode == 2
    assert plain.stderr.startswith("lagsim: error: --scheduler: cannot reach the Dask "
                                   "scheduler 'tcp://127.0.0.1:")


# --- checks before the work ------------------------------------------------------------------


def test_a_huge_bogus_axis_is_refused_before_it_is_made():
    """Issue 32: every --grid axis was built (10⁷ values: about 1 GB) before its name was
    checked. Under a 600 MB address-space limit the refusal names the axis, quickly."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20))

    start = time.monotonic()
    result = subprocess.run([*LAGSIM, "sweep", "pendulum", "--grid", "bogus=0:1:10000000",
                             "--random", "theta=0:1", "--runs", "10000000"],
                            capture_output=True, text=True, preexec_fn=limit, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("lagsim: error: --grid: no parameter or initial value "
                                    "'bogus'; a sweep varies m, g, l, theta, theta_dot")
    assert time.monotonic() - start < 10


def test_the_product_is_made_in_run_order_without_building_tuples():
    """The plan's values in the order of itertools.product (the last axis fastest), the
    draws bit for bit those of one NumPy call."""
    import itertools

    import numpy as np

    axes = [sw.grid_axis("theta=0:1:3"), sw.random_axis(["l=1:2", "m=3:4"], 2, 5),
            sw.values_axis("g=9,10")]
    plan = sw.plan(axes, ["m", "g", "l"], ["theta"])
    draws = np.random.default_rng(5).uniform([1, 3], [2, 4], size=(2, 2))
    expected = [[a, *b, c] for a, b, c in itertools.product([0.0, 0.5, 1.0], draws.tolist(),
                                                           [9.0, 10.0])]
    assert plan.names == ("theta", "l", "m", "g")
    assert plan.values.tolist() == expected


@pytest.fixture()
def read_only(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    immutable = False
    if os.geteuid() == 0:  # root writes through permissions: make the folder immutable
        chattr = shutil.which("chattr")
        immutable = chattr is not None and subprocess.run(
            [chattr, "+i", str(folder)], capture_output=True).returncode == 0
        if not immutable:
            folder.chmod(0o755)
            pytest.skip("running as root without chattr: no folder is read-only")
    yield folder
    if immutable:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    folder.chmod(0o755)


def test_a_read_only_save_folder_is_refused_before_any_run(read_only, tmp_path):
    """Issue 32: a folder the runs cannot write in was found only after every run (each run
    failed on its save, exit 1). Now one located line before the work, and no table."""
    table = tmp_path / "table.csv"
    result = invoke("sweep", "pendulum", "--values", "theta=0.1,0.2", "--t-end", "0.5",
                    "--save-trajectories", str(read_only), "-o", str(table), *SYNC)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"lagsim: error: --save-trajectories: cannot write in the "
                                    f"folder {str(read_only)!r}: ")
    assert result.stderr.endswith("; give a folder you can write in\n")
    assert not table.exists()
    assert list(read_only.iterdir()) == []


# --- the table's columns ----------------------------------------------------------------------


def test_the_run_column_is_integers_and_stop_time_only_with_stop_when(tmp_path):
    """Issue 29: `run` was written 0.0, 1.0, …; `stop_time` appeared, all NaN, without
    --stop-when."""
    plain = invoke("sweep", "pendulum", "--values", "theta=0.1,0.2,0.3", "--t-end", "0.5",
                   "--samples", "3", *SYNC)
    assert plain.exit_code == 0, plain.output
    lines = plain.stdout.splitlines()
    assert lines[0] == "run,theta0,theta,theta_dot,energy_drift,energy_change,error"
    assert [line.split(",")[0] for line in lines[1:]] == ["0", "1", "2"]
    stopped = invoke("sweep", "pendulum", "--values", "theta=0.1,0.2", "--stop-when",
                     "theta_dot", "--samples", "2", *SYNC)
    assert stopped.exit_code == 0, stopped.output
    assert stopped.stdout.splitlines()[0] == ("run,theta0,theta,theta_dot,energy_drift,"
                                              "energy_change,stop_time,error")
    assert all(float(r["stop_time"]) > 0 for r in rows(stopped.stdout))


def test_the_parquet_table_has_an_integer_run_column(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = tmp_path / "t.parquet"
    result = invoke("sweep", "pendulum", "--values", "theta=0.1,0.2", "--t-end", "0.5",
                    "--samples", "3", "-o", str(out), *SYNC)
    assert result.exit_code == 0, result.output
    data = pq.read_table(out)
    assert data.schema.field("run").type == pa.int64()
    assert data.column("run").to_pylist() == [0, 1]
    assert "stop_time" not in data.column_names


def test_a_system_whose_energy_is_not_conserved_has_energy_gain_not_drift():
    """Issue 29: a driven, damped system's change of h was called relative drift. When
    `lagsim check`'s test finds h not conserved, the table has `energy_gain` = h(t_end) −
    h(0), exactly the difference of the energy column of `lagsim simulate`; with the forcing
    off, the damping alone takes energy out: h(t_end) − h(0) = −∫ c θ̇² dt < 0."""
    result = invoke("sweep", "driven_damped_pendulum", "--values", "F0=0,1.5", "--t-end", "5",
                    "--samples", "51", *SYNC)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "run,F0,theta,theta_dot,energy_gain,error"
    table = rows(result.stdout)
    for row in table:
        single = rows(invoke("simulate", "driven_damped_pendulum", "--set", f"F0={row['F0']}",
                             "--t-end", "5", "--samples", "51").stdout)
        h0, h1 = float(single[0]["energy"]), float(single[-1]["energy"])
        assert float(row["energy_gain"]) == h1 - h0
    assert float(table[0]["energy_gain"]) < 0
    from lagsim.viz import sweep_figures as plot_sweep

    assert plot_sweep.swept_columns(result.stdout.splitlines()[0].split(",")) == ["F0"]


def test_the_energy_columns_follow_the_swept_parameters():
    """The test keeps swept parameters as symbols: damping off and forcing swept is not
    conserved (energy_gain); damping and forcing both off is, whatever the swept angle
    (energy_drift, energy_change as max |h − h0|, tiny)."""
    forced = invoke("sweep", "driven_damped_pendulum", "--set", "c=0", "--values", "F0=0,1",
                    "--t-end", "1", "--samples", "3", *SYNC)
    assert forced.stdout.splitlines()[0] == "run,F0,theta,theta_dot,energy_gain,error"
    free = invoke("sweep", "driven_damped_pendulum", "--set", "c=0", "--set", "F0=0",
                  "--values", "theta=0.1,1", "--t-end", "1", "--samples", "3", *SYNC)
    assert free.stdout.splitlines()[0] == ("run,theta0,theta,theta_dot,energy_drift,"
                                           "energy_change,error")
    assert all(float(r["energy_drift"]) < 1e-6 for r in rows(free.stdout))
