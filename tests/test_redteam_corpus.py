"""The red-team corpus (issue 32, "Measure"; the input and robustness reproducers of issue 29):
every reproducer of the issues as one row of CASES, run as a real ``python -m lagsim`` process.

Each case runs in a fresh folder of its own (its files written there, its command run there)
with the session's compile cache (tests/conftest.py sets LAGSIM_CACHE; the processes inherit
it) and these bounds:

* address space (RLIMIT_AS) of 1 GiB, the issue's "none takes more than 1 GB". Measured: a cold
  ``simulate pendulum`` through the C compiler (whose cc1 inherits the limit) and through
  symengine's LLVM path (LAGSIM_NO_CC) run under 384 MiB; every case here runs under 448 MiB
  (the largest, a plot with units, gets "OpenBLAS error: Memory allocation still failed" at
  384 MiB), with OpenBLAS and OpenMP held to one thread. They are held because OpenBLAS
  reserves address space for a buffer per thread, a thread per core by default: with it, the
  cases that load scipy needed up to 512 MiB on 2 cores (libgfortran "failed to map segment"
  at 384 MiB) and would need more on a larger machine, for reasons that are not lagsim's. So
  1 GiB is the issue's bound, over twice the measured need.
* CPU time (RLIMIT_CPU) of 10 s, the issue's "none takes more than 10 s", checked again on the
  whole process tree's CPU time (children that lagsim waited for, cc1 and sweep workers
  included). The bound is on CPU, not wall-clock time: the machine these run on is shared, and
  a cold C compile of 5 s of CPU took 6 to 9 s of wall time at a load of 2 to 4 on 2 cores, so
  a 10 s wall timeout would fail on load, not on lagsim. A wall timeout of 60 s still catches a
  process that sleeps or waits forever.

The limits are set in the child itself (a few lines of Python that set them and exec
``python -m lagsim``) rather than in a ``preexec_fn``: the cases run two at a time from a thread
pool, and ``preexec_fn`` is not safe in a process with threads (subprocess's documentation).

Every case asserts, beside its own expectation:

* exit status 2 with exactly one stderr line, ``lagsim: error: `` (then ``FILE:LINE:COL: `` where
  the case names a place in a file) and the expected message; or exit 0 (with the real values
  the fix makes right) and only lagsim's own lines on stderr;
* no "internal error", no "Traceback", no line on stderr that is not lagsim's (a library warning
  in Python's format), no raw control character (below U+0020 other than newline and tab) on
  stdout or stderr;
* a refused command leaves every file of its folder as it was and writes none (nothing half
  written, no file outside the folder).

Adding a reproducer is adding one row to CASES.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from inline_systems import SECANT
from PIL import Image

pytestmark = pytest.mark.subprocess  # every case is a real lagsim process under its own limits

ROOT = Path(__file__).resolve().parents[1]
MEMORY = 1 << 30
"""RLIMIT_AS of every case in bytes: 1 GiB."""
CPU_SECONDS = 10
"""RLIMIT_CPU of every case, and the bound on its process tree's CPU time."""
WALL_SECONDS = 60.0
"""The wall-clock bound: only a process that waits or sleeps reaches it before the CPU bound."""
WORKERS = 2
"""Cases run at once (the machine has 2 cores)."""

LIMITED = (
    "import os, resource, sys\n"
    "memory, cpu = int(sys.argv[1]), int(sys.argv[2])\n"
    "resource.setrlimit(resource.RLIMIT_AS, (memory, memory))\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'lagsim', *sys.argv[3:]])\n")
"""Set the limits in the child, then become ``python -m lagsim ARGS`` (same process)."""


@dataclass(frozen=True)
class Run:
    """What one case's process did."""

    status: int
    stdout: str
    stderr: str
    folder: Path
    cwd: Path
    cpu: float
    wall: float
    peak_rss_mib: float


@dataclass(frozen=True)
class Case:
    """One reproducer: files written in its folder (text; ``{tmp}`` is replaced by the folder's
    absolute path), folders, symbolic and hard links (name → target) made there, the lagsim
    command line (``{tmp}`` replaced too, and ``{silent}`` by HOST:PORT of a port that accepts
    connections and never answers), the folder it runs in (``cwd``), what it must do (exit
    ``status``; for 2, the one stderr line is ``lagsim: error: `` + ``where: `` when given + a
    match of the ``error`` pattern), and for a run that works a ``check`` of its real values and
    a pattern the whole of stderr must match (``notes``, empty by default). ``stdin`` is Python
    code of a producer process whose stdout is the command's standard input; ``xfail`` says why
    the case still fails (a strict xfail)."""

    id: str
    argv: tuple[str, ...]
    files: Mapping[str, str] = field(default_factory=dict)
    status: int = 2
    error: str = ""
    where: str = ""
    check: Callable[[Run], None] | None = None
    notes: str = ""
    folders: tuple[str, ...] = ()
    links: Mapping[str, str] = field(default_factory=dict)
    hard_links: Mapping[str, str] = field(default_factory=dict)
    stdin: str | None = None
    cwd: str = "."
    xfail: str = ""


# --- systems of the corpus ---------------------------------------------------------------------

PENDULUM = """name: mine
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [theta]
masses:
  bob: {mass: m, position: [l*sin(theta), -l*cos(theta)]}
gravity: [0, -g]
initial: {theta: 0.5}
simulate: {t_end: 1, samples: 5}
"""
FREE = "coordinates: [x]\nkinetic: 1/2*x_dot**2\n"
BLOW_UP = "coordinates: [x]\nkinetic: 1/2*x_dot**2\npotential: -x**4\ninitial: {x: 1.0}\n"
"""ẍ = 4x³ from rest at x = 1 blows up at t ≈ 0.927: a run that fails (so --partial writes)."""
V_WELL = "parameters: {m: 2, k: 3}\n" + FREE.replace("1/2*", "1/2*m*") + (
    "potential: k*Abs(x)\ninitial: {x: 1.5}\n")
"""A V-shaped well: from rest at x0 the force k is constant towards 0, period 4 sqrt(2 m x0/k)."""
V_PERIOD = 4 * math.sqrt(2 * 2 * 1.5 / 3)
BLOCK = ("parameters: {m: 2, g: 9.81, mu: 0.5}\n" + FREE.replace("1/2*", "1/2*m*")
         + "initial: {x_dot: 3}\n")
"""A block sliding at 3 m/s; under Coulomb friction it decelerates at mu g and stops at
t = 3/(mu g)."""
PRODUCT_BOMB = ("name: product\nparameters: {m: 1.0}\ncoordinates: [x, y]\n"
                "masses:\n  p: {mass: m, position: [x, y]}\n"
                "potential: (x+y+1)**100*(x-y+2)**100\n"
                "initial: {x: 0.1, y: 0.1, x_dot: 0, y_dot: 0}\n")
SUM_BOMB = ("name: four_sum\nparameters: {m: 1.0}\ncoordinates: [x, y, z, w]\n"
            "masses:\n  p: {mass: m, position: [x, y, z]}\n  q: {mass: m, position: [w, 0, 0]}\n"
            "potential: (x+y+z+w+1)**100\n"
            "initial: {x: 0.1, y: 0.1, z: 0, w: 0, x_dot: 0, y_dot: 0, z_dot: 0, w_dot: 0}\n")


def _csv_of(rows: list[list[float]], header: str = "t,theta,theta_dot,energy") -> str:
    return header + "\n" + "".join(",".join(repr(v) for v in row) + "\n" for row in rows)


PENDULUM_L2 = _csv_of([[t, 0.1, 0.0, -9.81 * 2 * math.cos(0.1)] for t in (0.0, 0.5, 1.0)])
"""A pendulum at rest at θ = 0.1 with l = 2 (h = −m g l cos θ): not a run of l = 1."""
HUGE_VALUES = _csv_of([[0.0, 1e308], [1.0, -1e308], [2.0, 1e308]], header="t,x")
ESC_HEADER = "t,x\x1b[31mred\n0,1\n1,2\n"
NONHOLONOMIC_POWERS = """coordinates: [x, y, z]
kinetic: 1/2*(x_dot**2 + y_dot**2 + z_dot**2)
constraints:
  - velocity: (x+y+z+1)**100*x_dot + (x-y+2)**100*y_dot + z_dot
initial: {x: 0.1}
"""
"""Frobenius' test multiplies out the powers: check ran for minutes and ignored SIGTERM."""
ENDLESS_YAML = ("import sys\nsys.stdout.write('name: x\\n')\n"
                "while True: sys.stdout.write('#' + 'a' * 4000 + '\\n')\n")
ENDLESS_ROWS = ("import sys\nsys.stdout.write('t,x\\n')\n"
                "while True: sys.stdout.write('1.0,2.0\\n' * 4096)\n")
ENDLESS_LINE = ("import sys\nsys.stdout.write('t,x\\n')\n"
                "while True: sys.stdout.write('1.0,' * 4096)\n")


# --- checks of the runs that work --------------------------------------------------------------


def _table(text: str) -> tuple[list[str], np.ndarray]:
    """The header and the rows of a CSV."""
    header, *rows = text.splitlines()
    data = np.array([[float(v) for v in row.split(",")] for row in rows]).reshape(
        len(rows), len(header.split(",")))
    return header.split(","), data


def _column(text: str, name: str) -> np.ndarray:
    header, data = _table(text)
    return data[:, header.index(name)]


def _png(run: Run, name: str = "p.png") -> None:
    with Image.open(run.cwd / name) as image:
        assert image.format == "PNG" and image.size[0] >= 90 and image.size[1] >= 60


def _v_well_period(run: Run) -> None:
    """Samples at 0, T/4, T/2, 3T/4, T: x = x0, 0, −x0, 0, x0 and |v| = sqrt(2 k x0/m) at 0."""
    header, data = _table(run.stdout)
    assert header == ["t", "x", "x_dot", "energy"]
    speed = math.sqrt(2 * 3 * 1.5 / 2)
    np.testing.assert_allclose(data[:, 1], [1.5, 0, -1.5, 0, 1.5], atol=1e-6)
    np.testing.assert_allclose(data[:, 2], [0, -speed, 0, speed, 0], atol=1e-6)
    np.testing.assert_allclose(data[:, 3], 3 * 1.5, rtol=1e-7)


def _derive_sign(run: Run) -> None:
    assert "k*sign(x)" in run.stdout.replace(" ", "") and "Derivative" not in run.stdout


def _check_v_well(run: Run) -> None:
    assert "energy: h = k*abs(x) + (1/2)*m*x_dot**2 = 4.5" in run.stdout, run.stdout


def _coulomb_stop(run: Run) -> None:
    """Stops at t = v0/(mu g) after v0²/(2 mu g)."""
    t, x, v, _energy = _table(run.stdout)[1][-1]
    assert t == pytest.approx(3 / (0.5 * 9.81), rel=1e-6)
    assert x == pytest.approx(9 / (2 * 0.5 * 9.81), rel=1e-6)
    assert abs(v) < 1e-6


def _coulomb_radau(run: Run) -> None:
    """Before the stop: x = v0 t − mu g t²/2, v = v0 − mu g t."""
    t, x, v, _energy = _table(run.stdout)[1][-1]
    assert t == 0.6
    assert x == pytest.approx(3 * 0.6 - 0.5 * 9.81 * 0.36 / 2, rel=1e-6)
    assert v == pytest.approx(3 - 0.5 * 9.81 * 0.6, rel=1e-6)


def _section_rows(run: Run) -> None:
    """sin(2πt) rises through 0 at t = 1, …, 100 (t = 0, on the section, is not a crossing):
    100 rows, each the free mass's state x = t, y = 5t − g t²/2."""
    t = _column(run.stdout, "t")
    assert len(t) == 100
    np.testing.assert_allclose(t, np.arange(1, 101), rtol=0, atol=1e-9)
    np.testing.assert_allclose(_column(run.stdout, "y"), 5 * t - 9.81 / 2 * t**2, rtol=1e-9)


def _stops_at_half(run: Run) -> None:
    """sin(2πt) first changes sign at t = 0.5 (RK45 stopped at 4.5)."""
    assert abs(_column(run.stdout, "t")[-1] - 0.5) <= 1e-9
    assert abs(_column(run.stdout, "y")[-1] - (2.5 - 9.81 / 8)) <= 1e-9


def _bomb_derived(run: Run) -> None:
    assert "m⋅ẍ + 100⋅" in run.stdout and "99" in run.stdout


def _bomb_checked(run: Run) -> None:
    assert "energy: h = " in run.stdout and ")**100" in run.stdout


def _secant(run: Run) -> None:
    assert "c: holonomic (integrable)" in run.stdout


def _local_sweep(run: Run) -> None:
    """Two runs of l = 1 and 2, the run column integers."""
    header, *rows = run.stdout.splitlines()
    assert header.split(",")[:2] == ["run", "l"] and header.endswith(",error")
    assert [row.split(",")[:2] for row in rows] == [["0", "1.0"], ["1", "2.0"]]
    assert all(row.endswith(",") for row in rows), "a run failed"


def _shortest_span(run: Run) -> None:
    assert list(_column(run.stdout, "t")) == [0.0, 5e-301, 1e-300]


def _v_well_rest(run: Run) -> None:
    """x = 0 is the V-well's bottom (sign(0) = 0: no force there)."""
    assert "no equilibrium found" not in run.stdout and "(0 found" not in run.stdout, run.stdout


def _action_of_a_chirp(run: Run) -> None:
    """θ = sin(1000 t²) on [0, 10] (no closed form): S within the printed error of the
    trapezoid rule on 4·10⁶ intervals of L = ½ m l² θ̇² + m g l cos θ (m = l = 1)."""
    found = re.search(r"S ≈ (\S+)  \(± (\S+), adaptive", run.stdout)
    assert found, run.stdout
    value, error = float(found[1]), float(found[2])
    t = np.linspace(0.0, 10.0, 4_000_001)
    theta = np.sin(1000 * t**2)
    lagrangian = 0.5 * (2000 * t * np.cos(1000 * t**2)) ** 2 + 9.81 * np.cos(theta)
    exact = float(np.sum((lagrangian[1:] + lagrangian[:-1]) / 2) * (t[1] - t[0]))
    assert abs(value - exact) <= error and error <= 0.2 * abs(exact), (value, error, exact)


def _forced_over_input(run: Run) -> None:
    assert (run.cwd / "mine.yaml").read_text().splitlines()[0] == "t,theta,theta_dot,energy"


SHORT = ("--t-end", "0.2", "--samples", "5")
REPEAT = "so the sample times would repeat"
FINITE = r"; numbers must be finite and real, at most 1\.798e\+308 in size \(docs/format\.md\)$"
SAME = r"it is the input (FILE|INPUT).* \(the same file\); give another file name, or --force"
LEADING = r"has a leading zero: it is octal \(\d+\) to YAML 1\.1 and decimal \(\d+\) to YAML 1\.2"
SCHEDULER = ("sweep", "pendulum", "--values", "theta=0.1,0.2", "--scheduler")
DOLLARS = r"$\frac{1}{$ and $x^$"
"""Malformed mathtext: matplotlib's parser raised at savefig."""

CASES: list[Case] = [
    # -o and --partial replace the input (issue 32, "-o replaces the system file itself")
    Case("o-is-input", ("simulate", "mine.yaml", "-o", "mine.yaml"), {"mine.yaml": PENDULUM},
         error=f"-o: cannot write 'mine.yaml': {SAME}"),
    Case("o-dotted-path", ("simulate", "mine.yaml", "-o", "sub/../mine.yaml"),
         {"mine.yaml": PENDULUM}, folders=("sub",), error=f"-o: cannot write .*{SAME}"),
    Case("o-absolute", ("simulate", "mine.yaml", "-o", "{tmp}/mine.yaml"),
         {"mine.yaml": PENDULUM}, error=f"-o: cannot write .*{SAME}"),
    Case("o-symlink", ("simulate", "mine.yaml", "-o", "link.yaml"), {"mine.yaml": PENDULUM},
         links={"link.yaml": "mine.yaml"}, error=f"-o: cannot write 'link.yaml': {SAME}"),
    Case("o-symlink-input", ("simulate", "link.yaml", "-o", "mine.yaml"),
         {"mine.yaml": PENDULUM}, links={"link.yaml": "mine.yaml"},
         error=f"-o: cannot write 'mine.yaml': {SAME}"),
    Case("o-hard-link", ("simulate", "mine.yaml", "-o", "hard.yaml"), {"mine.yaml": PENDULUM},
         hard_links={"hard.yaml": "mine.yaml"}, error=f"-o: cannot write 'hard.yaml': {SAME}"),
    Case("plot-o-is-system", ("plot", "mine.yaml", "-o", "mine.yaml"), {"mine.yaml": PENDULUM},
         error=f"-o: cannot write 'mine.yaml': {SAME}"),
    Case("sweep-o-is-system", ("sweep", "mine.yaml", "--values", "l=1,2", "-o", "mine.yaml"),
         {"mine.yaml": PENDULUM}, error=f"-o: cannot write 'mine.yaml': {SAME}"),
    Case("partial-is-input", ("simulate", "blow.yaml", "--t-end", "2", "--partial", "blow.yaml"),
         {"blow.yaml": BLOW_UP}, error=f"--partial: cannot write 'blow.yaml': {SAME}"),
    Case("plot-o-is-csv", ("plot", "run.csv", "-o", "run.csv"), {"run.csv": PENDULUM_L2},
         error=f"-o: cannot write 'run.csv': {SAME}"),
    Case("o-force-works", ("simulate", "mine.yaml", *SHORT, "-o", "mine.yaml", "--force"),
         {"mine.yaml": PENDULUM}, status=0, check=_forced_over_input),
    # --partial with a hostile name: (issue 32, "A file written outside the current folder")
    Case("partial-name-dotdot", ("simulate", "sys.yaml", "--t-end", "2", "--partial"),
         {"work/sys.yaml": "name: ../escaped/owned\n" + BLOW_UP}, folders=("escaped",),
         cwd="work", error=r"--partial: the system's name '\.\./escaped/owned' cannot make a "
                           "file name: it contains '/'"),
    Case("partial-name-absolute", ("simulate", "sys.yaml", "--t-end", "2", "--partial"),
         {"sys.yaml": "name: {tmp}/escaped/owned\n" + BLOW_UP}, folders=("escaped",),
         error=r"--partial: the system's name '/.*/escaped/owned' cannot make a file name"),
    Case("partial-name-dotdot-alone", ("simulate", "sys.yaml", "--t-end", "2", "--partial"),
         {"sys.yaml": "name: '..'\n" + BLOW_UP}, error=r"--partial: the system's name '\.\.'"),
    Case("partial-name-nul", ("simulate", "sys.yaml", "--t-end", "2", "--partial"),
         {"sys.yaml": 'name: "a\\0b"\n' + BLOW_UP}, where="sys.yaml:1:7",
         error=r"'name' contains the control character \\x00, which would act on the terminal"),
    Case("partial-name-escape", ("simulate", "sys.yaml", "--t-end", "2", "--partial"),
         {"sys.yaml": 'name: "\\e[31mred"\n' + BLOW_UP}, where="sys.yaml:1:7",
         error=r"'name' contains the control character \\x1b, which would act on the terminal"),
    Case("partial-name-long", ("simulate", "sys.yaml", "--t-end", "2", "--partial"),
         {"sys.yaml": f"name: {'x' * 300}\n" + BLOW_UP},
         error=r"--partial: the system's name 'x+' cannot make a file name: it makes a file name "
               "of 312 bytes, more than the 255"),
    # YAML 1.1 numbers (issue 32)
    Case("yaml11-octal", ("simulate", "s.yaml"), {"s.yaml": "parameters: {l: 010}\n" + FREE},
         where="s.yaml:1:17", error=f"parameter 'l': 010 {LEADING}"),
    Case("yaml11-sexagesimal", ("simulate", "s.yaml"),
         {"s.yaml": "simulate: {t_end: 1:30}\n" + FREE}, where="s.yaml:1:19",
         error=r"simulate\.t_end: 1:30 is a base-60 number \(90\) to YAML 1\.1"),
    Case("yaml11-samples", ("simulate", "s.yaml"),
         {"s.yaml": "simulate: {t_end: 1, samples: 0101}\n" + FREE}, where="s.yaml:1:31",
         error=f"simulate\\.samples: 0101 {LEADING}"),
    # .nan, .inf and overflowing floats (issue 32)
    Case("nan-potential", ("simulate", "s.yaml"), {"s.yaml": FREE + "potential: .nan\n"},
         where="s.yaml:3:12", error=r"'potential' is \.nan, not a number \(nan\)" + FINITE),
    Case("inf-force", ("simulate", "s.yaml"), {"s.yaml": FREE + "forces: {x: .inf}\n"},
         where="s.yaml:3:13", error=r"the force on 'x' is \.inf, not a finite number" + FINITE),
    Case("overflow-parameter", ("simulate", "s.yaml"),
         {"s.yaml": "parameters: {m: 1.0e+400}\n" + FREE}, where="s.yaml:1:17",
         error=r"parameter 'm' is 1\.0e\+400, too large for a float \(it overflows to inf\)"
               + FINITE),
    Case("nan-initial", ("simulate", "s.yaml"), {"s.yaml": FREE + "initial: {x_dot: .NaN}\n"},
         where="s.yaml:3:18",
         error=r"the initial value of 'x_dot' is \.NaN, not a number \(nan\)" + FINITE),
    Case("nan-rtol", ("simulate", "s.yaml"), {"s.yaml": FREE + "simulate: {rtol: .nan}\n"},
         where="s.yaml:3:18", error=r"simulate\.rtol is \.nan, not a number \(nan\)" + FINITE),
    Case("inf-mass", ("simulate", "s.yaml"),
         {"s.yaml": "coordinates: [x]\nmasses:\n  b: {mass: .inf, position: [x, 0]}\n"},
         where="s.yaml:3:13", error=r"the mass of 'b' is \.inf, not a finite number" + FINITE),
    Case("inf-constraint", ("check", "s.yaml"), {"s.yaml": FREE + "constraints: [.inf]\n"},
         where="s.yaml:3:15", error=r"constraint 'c1' is \.inf, not a finite number" + FINITE),
    Case("inf-in-expression", ("derive", "s.yaml"), {"s.yaml": FREE + "potential: 1e400*x\n"},
         where="s.yaml:3:12", error=r"'potential' '1e400\*x': the number 1e400 is inf"),
    # huge integers (issue 32: OverflowError, and ValueError past Python's 4,300 digits)
    Case("integer-400-digits-simulate", ("simulate", "s.yaml"),
         {"s.yaml": FREE + "simulate: {t_end: " + "1" * 400 + "}\n"}, where="s.yaml:3:19",
         error=r"simulate\.t_end is 1{20}\.\.\. \(400 characters\), too large for a float"
               + FINITE),
    Case("integer-5000-digits-parameter", ("simulate", "s.yaml"),
         {"s.yaml": "parameters: {k: " + "7" * 5000 + "}\n" + FREE}, where="s.yaml:1:17",
         error=r"parameter 'k' is an integer of 5,000 digits, too large for a float" + FINITE),
    Case("integer-400-digits-expression", ("simulate", "s.yaml"),
         {"s.yaml": FREE + "potential: 2*" + "1" * 400 + "*x\n"}, where="s.yaml:3:14",
         error=r"'potential' .*the number of 400 digits is too large for a float"),
    # sample times that cannot increase (issue 32: 5e-324 exited 0, 1e-320 OverflowError)
    Case("t-end-5e-324", ("simulate", "pendulum", "--t-end", "5e-324"),
         error=f"--t-end: 1001 samples .* {REPEAT}"),
    Case("dt-1e-320", ("simulate", "pendulum", "--dt", "1e-320"),
         error=f"--dt: the step dt = 1e-320 is below the resolution .* {REPEAT}"),
    Case("dt-1e-9", ("simulate", "pendulum", "--dt", "1e-9"),
         error=r"--dt asks for 1e\+10 samples: about 720 GB of CSV"),
    Case("t-end-1e-300-works", ("simulate", "pendulum", "--t-end", "1e-300", "--samples", "3"),
         status=0, check=_shortest_span),
    # Abs and sign (issue 32: "internal error (RuntimeError: Derivative(abs(...)))")
    Case("abs-potential-period", ("simulate", "w.yaml", "--t-end", repr(V_PERIOD),
                                  "--samples", "5"), {"w.yaml": V_WELL}, status=0,
         check=_v_well_period),
    Case("abs-potential-derive", ("derive", "w.yaml", "--format", "json"), {"w.yaml": V_WELL},
         status=0, check=_derive_sign),
    Case("abs-potential-check", ("check", "w.yaml"), {"w.yaml": V_WELL}, status=0,
         check=_check_v_well),
    Case("abs-dissipation", ("simulate", "b.yaml", "--stop-when", "x_dot", "--t-end", "2",
                             "--samples", "3"),
         {"b.yaml": BLOCK + "dissipation: mu*m*g*Abs(x_dot)\n"}, status=0, check=_coulomb_stop,
         notes=r"lagsim: stopped at t = [0-9.]+: x_dot changed sign \(--stop-when\)\n"),
    Case("sign-force-radau", ("simulate", "b.yaml", "--method", "Radau", "--t-end", "0.6",
                              "--samples", "3"),
         {"b.yaml": BLOCK + "forces: {x: -mu*m*g*sign(x_dot)}\n"}, status=0,
         check=_coulomb_radau,
         notes=r"lagsim: warning: the equations of motion are not smooth where the argument of "
               r"sign\(x_dot\) is 0 .*\n"),
    # complex powers (issue 32: "internal error (RuntimeError: -I)")
    Case("negative-base-power", ("simulate", "s.yaml"), {"s.yaml": FREE + "potential: (-1)**x\n"},
         where="s.yaml:3:12", error=r"'potential' '\(-1\)\*\*x': the power \(-1\)\*\*x has a "
                                    "negative base and a variable exponent"),
    # mathtext in user text (issue 32: an internal error at savefig)
    Case("dollars-in-name", ("plot", "s.yaml", *SHORT, "--dpi", "30", "-o", "p.png"),
         {"s.yaml": PENDULUM.replace("name: mine", f"name: '{DOLLARS}'")}, status=0,
         check=_png),
    Case("dollars-in-units", ("plot", "s.yaml", *SHORT, "--dpi", "30", "-o", "p.png"),
         {"s.yaml": PENDULUM + f"units: {{theta: '{DOLLARS}', l: '$^$'}}\n"}, status=0,
         check=_png),
    Case("dollars-in-title", ("plot", "pendulum", *SHORT, "--dpi", "30", "--title", DOLLARS,
                              "-o", "p.png"), status=0, check=_png),
    Case("dollars-in-label", ("plot", "pendulum", "mine.yaml", *SHORT, "--dpi", "30",
                              "--label", DOLLARS, "--label", "$_$", "-o", "p.png"),
         {"mine.yaml": PENDULUM}, status=0, check=_png),
    # --scheduler (issue 32: a clean line after 20 s, then a Client.__del__ traceback)
    Case("scheduler-threads", (*SCHEDULER, "threads"),
         error=r"--scheduler: 'threads' is one of Dask's own schedulers"),
    Case("scheduler-processes", (*SCHEDULER, "processes"),
         error=r"--scheduler: 'processes' is one of Dask's own schedulers"),
    Case("scheduler-empty", (*SCHEDULER, ""), error=r"--scheduler: '' is not a scheduler address"),
    Case("scheduler-tcp-bare", (*SCHEDULER, "tcp://"),
         error=r"--scheduler: 'tcp://' is not a scheduler address"),
    Case("scheduler-ucx", (*SCHEDULER, "ucx://127.0.0.1:1"),
         error=r"--scheduler: 'ucx://127\.0\.0\.1:1': lagsim reaches a scheduler by tcp:// or "
               r"tls://, not ucx://"),
    Case("scheduler-tls-unset", (*SCHEDULER, "tls://127.0.0.1:1"),
         error=r"--scheduler: a tls:// scheduler needs Dask's TLS settings"),
    Case("scheduler-silent", (*SCHEDULER, "tcp://{silent}"),
         error=r"--scheduler: cannot reach the Dask scheduler 'tcp://127\.0\.0\.1:\d+': no answer "
               r"within 10 s"),
    Case("sweep-local-quiet", ("sweep", "pendulum", "--values", "l=1,2", *SHORT,
                               "--workers", "2"), status=0, check=_local_sweep),
    # expansion bombs (issue 32: derive and check ran for minutes, 4.6 million terms)
    Case("bomb-product-derive", ("derive", "b.yaml"), {"b.yaml": PRODUCT_BOMB}, status=0,
         check=_bomb_derived, notes=r"lagsim: note: an expression is left as it is, not "
                                    r"multiplied out: .*expansion limit.*\n"),
    Case("bomb-product-check", ("check", "b.yaml"), {"b.yaml": PRODUCT_BOMB}, status=0,
         check=_bomb_checked, notes=r"lagsim: note: an expression is left as it is, not "
                                    r"multiplied out: .*expansion limit.*\n"),
    Case("bomb-sum-derive", ("derive", "b.yaml"), {"b.yaml": SUM_BOMB}, status=0,
         check=_bomb_derived, notes=r"lagsim: note: an expression is left as it is, not "
                                    r"multiplied out: .*expansion limit.*\n"),
    Case("bomb-sum-check", ("check", "b.yaml"), {"b.yaml": SUM_BOMB}, status=0,
         check=_bomb_checked, notes=r"lagsim: note: an expression is left as it is, not "
                                    r"multiplied out: .*expansion limit.*\n"),
    # unbounded input (issue 32: a CSV on stdin that never ends grew until memory ran out)
    Case("endless-csv-rows", ("plot", "-", "-o", "p.png"), stdin=ENDLESS_ROWS,
         error=r"<stdin>:1000002: more than 1,000,001 lines"),
    Case("endless-csv-line", ("plot", "-", "-o", "p.png"), stdin=ENDLESS_LINE,
         error=r"<stdin>:2: a line of more than 1,000,000 characters"),
    Case("animate-20000s", ("animate", "pendulum", "--t-end", "20000", "-o", "a.gif"),
         error=r"--fps: the animation would have 600,000 frames \(--fps 30 × 20000 s"),
    Case("animate-csv-1e12s", ("animate", "long.csv", "--system", "pendulum", "-o", "a.gif"),
         {"long.csv": _csv_of([[t, 0.1, 0.0, -9.81 * math.cos(0.1)] for t in (0.0, 1e12)])},
         error=r"--fps: the animation would have 30,000,000,000,000 frames"),
    Case("sweep-bogus-axis", ("sweep", "pendulum", "--grid", "bogus=0:1:10000000"),
         error=r"--grid: no parameter or initial value 'bogus'"),
    Case("sweep-huge-axes", ("sweep", "pendulum", "--grid", "l=1:2:10000000", "--grid",
                             "g=1:2:10000000"),
         error=r"--grid: the sweep has 100,000,000,000,000 runs, more than the 10,000,000"),
    # output names (issue 32: exit 1 instead of 2)
    Case("o-empty-simulate", ("simulate", "pendulum", "-o", ""),
         error=r"-o: the file name is empty; give a file name, or - for standard output$"),
    Case("o-empty-plot", ("plot", "pendulum", "-o", ""), error=r"-o: the file name is empty"),
    Case("o-empty-animate", ("animate", "pendulum", "-o", ""), error=r"-o: the file name is empty"),
    Case("o-too-long", ("simulate", "pendulum", "-o", "x" * 256 + ".csv"),
         error=r"-o: cannot write 'x+\.csv': File name too long$"),
    Case("save-folder-blocked", ("sweep", "pendulum", "--values", "l=1,2", "--save-trajectories",
                                 "runs", *SHORT, "-o", "t.csv"), folders=("runs/run_0.csv",),
         error=r"--save-trajectories: cannot write '/.*/runs/run_0\.csv': it is a folder"),
    # --section and --stop-when (issue 32: 2 rows of 100, none with RK45; a stop at 4.5)
    Case("section-clock-dop853", ("simulate", "free_mass_cartesian", "--section", "sin(2*pi*t)",
                                  "--section-direction", "up", "--t-end", "100.5"),
         status=0, check=_section_rows),
    Case("section-clock-rk45", ("simulate", "free_mass_cartesian", "--section", "sin(2*pi*t)",
                                "--section-direction", "up", "--t-end", "100.5",
                                "--method", "RK45"), status=0, check=_section_rows),
    Case("stop-when-clock-rk45", ("simulate", "free_mass_cartesian", "--stop-when",
                                  "sin(2*pi*t)", "--method", "RK45", "--t-end", "10"),
         status=0, check=_stops_at_half, notes=r"lagsim: stopped at t = 0\.5.*\n"),
    # library warnings and control characters (issue 32, "Messages")
    Case("csv-header-escape", ("plot", "h.csv", "--dpi", "30", "-o", "p.png"),
         {"h.csv": ESC_HEADER}, status=0, check=_png, notes=r"(lagsim: [^\n]*\n)*"),
    Case("plot-1e308", ("plot", "big.csv", "--dpi", "30", "-o", "p.png"), {"big.csv": HUGE_VALUES},
         status=0, check=_png, notes=r"(lagsim: [^\n]*\n)*"),
    Case("endless-yaml-stdin", ("simulate", "-"), stdin=ENDLESS_YAML,
         error=r"<stdin>: more than 1,000,000 characters, past lagsim's file size limit"),
    Case("sweep-table-wide-field", ("sweep", "pendulum", "--table", "wide.csv", *SHORT),
         {"wide.csv": "l\n" + "1" * 3_000_000 + "\n"}, error=r".*(--table|wide\.csv)"),
    # the analyses on non-smooth and large expressions
    Case("equilibria-v-well", ("equilibria", "w.yaml"), {"w.yaml": V_WELL}, status=0,
         check=_v_well_rest, notes=r"(lagsim: [^\n]*\n)*"),
    Case("check-nonholonomic-powers", ("check", "n.yaml"), {"n.yaml": NONHOLONOMIC_POWERS},
         status=0, notes=r"(lagsim: [^\n]*\n)*"),
    Case("action-chirp-path", ("action", "pendulum", "--path", "theta=sin(1000*t**2)",
                               "--t-end", "10"), status=0, check=_action_of_a_chirp,
         notes=r"(lagsim: [^\n]*\n)*"),
    # issue 29's robustness reproducers
    Case("check-secant-constraint", ("check", "s.yaml"), {"s.yaml": SECANT}, status=0,
         check=_secant),
    Case("plot-path-other-parameters", ("plot", "run.csv", "--kind", "path", "--system",
                                        "pendulum", "-o", "p.png"), {"run.csv": PENDULUM_L2},
         error=r"run\.csv: the energy column is not that of system 'pendulum' with its "
               r"parameter values \(m=1, g=9\.81, l=1\)"),
]


def _write(case: Case, folder: Path) -> None:
    for name in case.folders:
        (folder / name).mkdir(parents=True, exist_ok=True)
    for name, text in case.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text.replace("{tmp}", str(folder)), encoding="utf-8")
    for name, target in case.links.items():
        (folder / name).symlink_to(target)
    for name, target in case.hard_links.items():
        os.link(folder / target, folder / name)


def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder``: a file's bytes, None for a folder or a link."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() and not p.is_symlink()
                                         else None)
            for p in sorted(folder.rglob("*"))}


def _run(case: Case, folder: Path, silent: str) -> tuple[Run, dict[str, bytes | None]]:
    """Run ``case`` in ``folder`` under the limits (``{silent}`` in its command line is the
    address ``silent``); its result and the folder before it ran."""
    _write(case, folder)
    before = _snapshot(folder)
    argv = [a.replace("{tmp}", str(folder)).replace("{silent}", silent) for a in case.argv]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    producer = None
    if case.stdin is not None:
        producer = subprocess.Popen([sys.executable, "-c", case.stdin], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL)
    out_path, err_path = folder.parent / f"{folder.name}.out", folder.parent / f"{folder.name}.err"
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", LIMITED, str(MEMORY), str(CPU_SECONDS), *argv],
            stdin=producer.stdout if producer else subprocess.DEVNULL, stdout=out, stderr=err,
            cwd=folder / case.cwd, env=env, start_new_session=True)
        timer = threading.Timer(WALL_SECONDS, os.killpg, (proc.pid, signal.SIGKILL))
        timer.start()
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # what the case left running in its session
            if producer is not None:
                producer.kill()
                producer.wait()
                producer.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    run = Run(proc.returncode, out_path.read_text("utf-8", "replace"),
              err_path.read_text("utf-8", "replace"), folder, folder / case.cwd,
              usage.ru_utime + usage.ru_stime, time.monotonic() - start, usage.ru_maxrss / 1024)
    return run, before


@pytest.fixture(scope="module")
def corpus(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future]:
    """The selected cases, started at once on a pool of WORKERS threads (each its own process
    with its own limits); a test waits for its own. A port that accepts TCP connections (the
    kernel completes them into the listen backlog) and never answers is ``{silent}``."""
    chosen = {item.callspec.params["case"].id for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")}
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    silent = f"127.0.0.1:{server.getsockname()[1]}"
    pool = ThreadPoolExecutor(WORKERS)
    futures = {case.id: pool.submit(_run, case, tmp_path_factory.mktemp(case.id), silent)
               for case in CASES if case.id in chosen}
    yield futures
    pool.shutdown(wait=True)
    server.close()
    if request.config.getoption("verbose") > 1:
        for name, future in futures.items():
            run = future.result()[0]
            said = run.stderr.splitlines()[-1][:110] if run.stderr else ""
            print(f"{name:32} exit {run.status}  cpu {run.cpu:5.2f} s  wall {run.wall:5.2f} s  "
                  f"peak {run.peak_rss_mib:6.1f} MiB  {said}")


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")


@pytest.mark.parametrize("case", [
    pytest.param(case, id=case.id, marks=[pytest.mark.xfail(strict=True, reason=case.xfail)]
                 if case.xfail else []) for case in CASES])
def test_reproducer(case: Case, corpus: dict[str, Future]) -> None:
    run, before = corpus[case.id].result()
    shown = f"exit {run.status}, stderr {run.stderr!r}, stdout {run.stdout[-500:]!r}"
    assert run.status != -signal.SIGXCPU, f"more than {CPU_SECONDS} s of CPU: {shown}"
    assert run.wall < WALL_SECONDS, f"killed after {WALL_SECONDS} s: {shown}"
    assert run.cpu <= CPU_SECONDS, f"{run.cpu:.1f} s of CPU: {shown}"
    for stream in (run.stdout, run.stderr):
        assert "internal error" not in stream and "Traceback" not in stream, shown
        assert not CONTROL.search(stream), f"a raw control character: {shown}"
    assert all(line.startswith("lagsim: ") for line in run.stderr.splitlines()), shown
    assert run.status == case.status, shown
    if case.status == 2:
        (line,) = run.stderr.splitlines()
        head = "lagsim: error: " + (f"{case.where}: " if case.where else "")
        assert line.startswith(head), shown
        assert re.match(case.error, line[len(head):]), shown
        assert _snapshot(run.folder) == before, "the folder changed"
    else:
        assert re.fullmatch(case.notes, run.stderr, re.DOTALL), shown
        if case.check is not None:
            case.check(run)
