"""The fixed cost of a run (issue 31, "per run" and "scale"), each part side by side in one run.

1. ``System.simulate`` of the double pendulum (bundled ``double_pendulum``, 10 s, 1001 samples,
   rtol = atol = TOL) against a hand-written C DOP853 of the same system
   (``bench/c/dop853_double_pendulum.c``: the right-hand side by hand, scipy's DOP853 step for
   step, the samples off the dense output) at TOL = 1e-10 and 1e-6. The C reference must take
   lagsim's steps: its accepted steps and right-hand-side calls are printed beside those of
   lagsim's C loop (:func:`lagsim.run.engines.cloop.loop_for`), with the largest difference of
   the end states. Each side is timed in turns, in batches; the figure is the fastest batch's
   time per run (a shared machine slows batches, never speeds them up).
2. A loop of RUNS calls of ``System.simulate(initial={"theta2": v})`` against ``lagsim sweep
   --scheduler synchronous`` of the same runs (:func:`lagsim.sweep.core.execute`), θ2(0) from 1
   to 2, in turns (API, sweep, API, sweep): the ratio of the faster of each.
3. The 32-chain's whole 10 s run (``System.simulate``) in child processes taking turns, with the
   BLAS threads the environment leaves (OpenBLAS: one per core) and with one, as ``lagsim``'s
   command line sets them (:func:`lagsim.cli.group.one_blas_thread`).

Ratios only: the load average is printed with each part. Speed is never asserted in tests.

    .venv/bin/python bench/fixed_cost.py            # RUNS = 2000, about 2 min on a quiet machine
    .venv/bin/python bench/fixed_cost.py --quick    # RUNS = 200
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import ratios

HERE = Path(__file__).resolve().parent
C_REFERENCE = HERE / "c" / "dop853_double_pendulum.c"
T_END = 10.0
SAMPLES = 1001
THETA0 = 2 * np.pi / 3
"""The bundled double_pendulum's start: both rods at 2π/3 from the downward vertical, at rest."""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} (2 cores)"


def _coefficients() -> str:
    """scipy's DOP853 tables, printed exactly (as lagsim prints them for its C loop)."""
    from scipy.integrate import DOP853 as d

    def array(name: str, values: object) -> str:
        flat = np.asarray(values, dtype=float).ravel()
        return f"static const double {name}[] = {{{', '.join(repr(float(v)) for v in flat)}}};"

    return "\n".join([
        f"#define DOP_S {d.n_stages}", f"#define DOP_SX {d.D.shape[1]}",
        array("DOP_A", d.A), array("DOP_B", d.B), array("DOP_C", d.C), array("DOP_E3", d.E3),
        array("DOP_E5", d.E5), array("DOP_AX", d.A_EXTRA), array("DOP_CX", d.C_EXTRA),
        array("DOP_D", d.D)])


class Reference:
    """The hand-written C run, compiled with gcc -O2 (IEEE arithmetic, no fast-math)."""

    def __init__(self, folder: Path) -> None:
        source = folder / "dop853_double_pendulum.c"
        source.write_text(_coefficients() + "\n" + C_REFERENCE.read_text(encoding="utf-8"),
                          encoding="utf-8")
        library = folder / "dop853_double_pendulum.so"
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(library), str(source), "-lm"],
                       check=True)
        self._run = ctypes.CDLL(str(library)).dp_run
        self._run.restype = ctypes.c_int
        self._run.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double, ctypes.c_double,
                              ctypes.c_double, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
        self.p = np.array([1.0, 1.0, 1.0, 1.0, 9.81])
        self.y0 = np.array([THETA0, THETA0, 0.0, 0.0])
        self.out = np.empty((SAMPLES, 5))
        self.stats = np.zeros(2, dtype=np.int64)

    def __call__(self, tol: float) -> np.ndarray:
        code = self._run(self.p.ctypes.data, self.y0.ctypes.data, T_END, tol, tol, SAMPLES,
                         self.out.ctypes.data, self.stats.ctypes.data)
        if code:
            raise RuntimeError("the C reference's step size fell below its minimum")
        return self.out


def lagsim_loop(tol: float) -> tuple[int, int, np.ndarray, object]:
    """Accepted steps, right-hand-side calls and the end state of lagsim's C loop, and a call
    that runs that loop alone: the C calls of one run (``lagsim_loop_new``, ``_start``, ``_run``,
    ``_free``) with buffers made once, without the Python around them (the problem's build, the
    engine's choice, the samples' trajectory, the energy rows)."""
    import ctypes

    from lagsim.numeric.csource import LoopResult, Status
    from lagsim.run.engines.cloop import loop_for
    from lagsim.run.monitor import Guard
    from lagsim.run.problem import Problem
    from lagsim.spec.options import SimulateOptions
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import build_model

    spec = load_spec("double_pendulum")
    options = SimulateOptions.resolve(spec.simulate, {"t_end": T_END, "rtol": tol, "atol": tol})
    problem = Problem.build(spec, build_model(spec), options)
    loop = loop_for(problem)
    assert loop is not None, "no C loop for the double pendulum"
    traj = loop.run()
    lib, scale = loop.lib, Guard(problem).mass.scale
    y0 = np.concatenate([problem.q0, problem.qd0])
    atol = np.full(len(y0), tol)
    times = np.ascontiguousarray(options.sample_times(), dtype=float)
    rows, last, event = np.zeros((len(times), len(y0))), np.zeros(len(y0)), np.zeros(len(y0))
    rows[0] = y0
    result = LoopResult()
    pointers = (times.ctypes.data, rows.ctypes.data, last.ctypes.data, event.ctypes.data)

    def alone() -> None:
        handle = loop.new_handle(scale, atol)
        lib.lagsim_loop_start(handle, 0.0, y0.ctypes.data, 0.0)
        k = ctypes.c_int(1)
        code = lib.lagsim_loop_run(handle, pointers[0], len(times), ctypes.byref(k), pointers[1],
                                   1 << 30, ctypes.byref(result), pointers[2], pointers[3])
        lib.lagsim_loop_free(handle)
        if code != Status.RUN_DONE or not np.array_equal(rows[-1], last):
            raise RuntimeError(f"the C loop alone ended with code {code}")

    alone()
    if not np.array_equal(rows, np.column_stack([traj.q, traj.qd])):
        raise RuntimeError("the C loop alone did not give the run's rows")
    return loop.steps, loop.nfev, np.concatenate([traj.q[-1], traj.qd[-1]]), alone


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
"""The clocks of part 1: wall time (the default), or this process's CPU time (all its threads),
which a machine loaded by other processes disturbs less (``--clock cpu``)."""
CLOCK = ["wall"]


def fastest(calls: dict[str, object], batch: int, rounds: int) -> dict[str, float]:
    """Seconds per call of each of ``calls``: batches of ``batch`` calls taken in turns,
    ``rounds`` times; the fastest batch of each (on the clock ``--clock`` chose)."""
    clock = CLOCKS[CLOCK[0]]
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, call in calls.items():
            start = clock()
            for _ in range(batch):
                call()  # type: ignore[operator]
            best[name] = min(best[name], (clock() - start) / batch)
    return best


def per_run(reference: Reference, rounds: int) -> None:
    import lagsim

    system = lagsim.load("double_pendulum")
    print("## 1. One run: System.simulate against the hand-written C DOP853")
    print()
    print(f"double_pendulum, {T_END:g} s, {SAMPLES} samples, rtol = atol = TOL, {CLOCK[0]} "
          f"time; {load()}")
    print()
    print("| TOL | C ref steps / RHS calls | lagsim steps / RHS calls | end states, max diff "
          "| C ref ms | lagsim C loop alone ms | System.simulate ms | loop alone / ref "
          "| ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for tol in (1e-10, 1e-6):
        traj = system.simulate(t_end=T_END, rtol=tol, atol=tol)
        out = reference(tol)
        steps, nfev, end, alone = lagsim_loop(tol)
        ref_end = out[-1, 1:]
        api_end = np.concatenate([traj.q[-1], traj.qd[-1]])
        diff = max(np.max(np.abs(ref_end - api_end)), np.max(np.abs(ref_end - end)))
        times = fastest({"ref": lambda tol=tol: reference(tol), "alone": alone,
                         "api": lambda tol=tol: system.simulate(t_end=T_END, rtol=tol, atol=tol)},
                        batch=20, rounds=rounds)
        print(f"| {tol:g} | {reference.stats[0]} / {reference.stats[1]} | {steps} / {nfev} | "
              f"{diff:.1e} | {times['ref'] * 1e3:.3f} | {times['alone'] * 1e3:.3f} | "
              f"{times['api'] * 1e3:.3f} | {times['alone'] / times['ref']:.2f} | "
              f"{times['api'] / times['ref']:.2f} |")
        ratios.record(f"C loop alone / C ref {tol:g}", times["alone"] / times["ref"])
        ratios.record(f"System.simulate / C ref {tol:g}", times["api"] / times["ref"])
    print()
    print(f"after: {load()}")
    print()


def api_loop_against_sweep(runs: int) -> None:
    import lagsim
    from lagsim.spec.system import read_source
    from lagsim.sweep import core as sw

    values = np.linspace(1.0, 2.0, runs)
    text, label, stem = read_source("double_pendulum")
    plan = sw.Plan(("theta2",), values.reshape(runs, 1))
    job = sw.Job(text, label, stem, {"t_end": "10"}, {}, {}, plan.names, runs=runs).keyed()
    system = lagsim.load("double_pendulum")
    system.simulate(t_end=T_END, initial={"theta2": 1.0})
    sw.run_one(job, 0, plan.values[0])

    def api() -> None:
        for value in values:
            system.simulate(t_end=T_END, initial={"theta2": float(value)})

    def sweep() -> None:
        sw.execute(job, plan, "synchronous", None)

    print(f"## 2. {runs} runs: a loop over System.simulate(initial=...) against "
          "`lagsim sweep --scheduler synchronous`")
    print()
    print(f"double_pendulum, {T_END:g} s each, θ2(0) from 1 to 2; {load()}")
    print()
    seconds: dict[str, list[float]] = {"api": [], "sweep": []}
    for _ in range(2):
        for name, call in (("api", api), ("sweep", sweep)):
            start = time.perf_counter()
            call()
            seconds[name].append(time.perf_counter() - start)
    api_s, sweep_s = min(seconds["api"]), min(seconds["sweep"])
    ratios.record("API loop / synchronous sweep", api_s / sweep_s)
    print("| way | s (faster of 2) | ms per run |")
    print("|---|---|---|")
    print(f"| loop over System.simulate | {api_s:.2f} | {api_s / runs * 1e3:.3f} |")
    print(f"| sweep --scheduler synchronous | {sweep_s:.2f} | {sweep_s / runs * 1e3:.3f} |")
    print()
    print(f"API loop / synchronous sweep: {api_s / sweep_s:.2f} (each pair's spread: API "
          f"{statistics.pstdev(seconds['api']) / api_s:.0%}, sweep "
          f"{statistics.pstdev(seconds['sweep']) / sweep_s:.0%}); after: {load()}")
    print()


CHILD = """
import sys, time
import lagsim
system = lagsim.load(sys.argv[1])
system.simulate(t_end=10.0)
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    system.simulate(t_end=10.0)
    times.append(time.perf_counter() - start)
print(min(times))
"""
"""A child process: the fastest of REPS whole 10 s runs of the system FILE (after one)."""


def blas_threads(reps: int, rounds: int) -> None:
    """The 32-chain's whole 10 s trajectory in child processes taking turns: BLAS threads as
    the environment leaves them (OpenBLAS: one per core) against one thread, what ``lagsim``'s
    command line sets (:func:`lagsim.cli.group.one_blas_thread`)."""
    from lagsim.cli.group import BLAS_THREADS
    from lagsim.spec.chains import chain_yaml

    print("## 3. BLAS threads: the 32-chain, one whole 10 s run")
    print()
    print(f"{load()}")
    print()
    with tempfile.TemporaryDirectory(prefix="lagsim-fixed-cost-") as folder:
        path = Path(folder) / "chain_32.yaml"
        path.write_text(chain_yaml(32, natural=False, angle=0.5), encoding="utf-8")
        unset = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}
        envs = {"default": unset, "one": {**unset, **dict.fromkeys(BLAS_THREADS, "1")}}
        best = dict.fromkeys(envs, float("inf"))
        for _ in range(rounds):
            for name, env in envs.items():
                done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(reps)],
                                      env=env, capture_output=True, text=True, check=True)
                best[name] = min(best[name], float(done.stdout.split()[-1]))
    print("| BLAS threads | ms per run (fastest) |")
    print("|---|---|")
    print(f"| as the environment leaves them | {best['default'] * 1e3:.1f} |")
    print(f"| one (lagsim's command line) | {best['one'] * 1e3:.1f} |")
    print()
    print(f"default / one: {best['default'] / best['one']:.2f}; after: {load()}")
    ratios.record("BLAS threads default / one", best["default"] / best["one"])
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 runs, fewer rounds")
    parser.add_argument("--runs", type=int, default=None, help="runs of part 2 (default 2000)")
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                        help="part 1's clock: wall time, or this process's CPU time (steadier "
                        "on a loaded machine)")
    parser.add_argument("--part", type=int, choices=(1, 2, 3), action="append",
                        help="run only these parts (default all)")
    ratios.add_option(parser)
    args = parser.parse_args()
    CLOCK[0] = args.clock
    parts = set(args.part or (1, 2, 3))
    runs = args.runs or (200 if args.quick else 2000)
    print("# Fixed cost per run (issue 31)")
    print()
    if 1 in parts:
        with tempfile.TemporaryDirectory(prefix="lagsim-fixed-cost-") as folder:
            per_run(Reference(Path(folder)), rounds=3 if args.quick else 10)
    if 2 in parts:
        api_loop_against_sweep(runs)
    if 3 in parts:
        blas_threads(reps=3 if args.quick else 5, rounds=2 if args.quick else 4)
    ratios.write(args.json)


if __name__ == "__main__":
    main()
