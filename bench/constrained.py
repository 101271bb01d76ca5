"""Constrained runs at C speed (issue 9) and whole intervals in C (issue 17 §4), side by side.

Usage::

    .venv/bin/python bench/constrained.py [--reps 5] [--quick] [--no-plot]

Measured in one run, turns interleaved, medians (``bench/timing.py``):

1. IFToMM A01 (systems/a01_pendulum.yaml), 2000 s at the defaults (index1 + projection,
   DOP853, rtol = atol = 1e-10), whole process ``lagsim simulate a01_pendulum -o FILE``,
   against the pendulum in its angle over the same span at the same tolerances
   (``lagsim simulate pendulum --t-end 2000 --init theta=pi/2``); goal ≤ 1.5×. Also the run
   alone (``lagsim.run.driver.run``) of each, and A01's run with the Python loop
   (``run_python``) as it was before the C loop.
2. A01 at rtol = atol = 1e-12: the distance of the bob from the exact position at 2000 s
   (x = −0.8146030685890322, y = −0.5800188278369355; tests/reference/exact.py) and its
   whole-process time against the default run's; goals ≤ 1e-6 and ≤ 3×.
3. The natural-coordinate 8-chain (``python -m lagsim.cli.chains 8 --natural``) under index1 +
   projection, 10 s: cost per accepted step against the minimal-coordinate 8-chain's (goal
   ≤ 2×), and the whole run in C against the Python loop (goal ≥ 20×). Beside it CasADi's IDAS
   (when ``casadi`` imports: ``pip install -e '.[bench]'``) integrating the same chain as an
   index-1 DAE at the same tolerances in two forms: q' = v, v' = a with algebraic
   M a − Aᵀλ = F, A a = b (accelerations and λ algebraic), and the fair form q' = v,
   v' = M⁻¹(F + Aᵀλ) with only λ algebraic (A v' = b), with each run's bob-position error at
   10 s against a tight reference (the minimal chain at rtol = atol = 1e-13, positions
   x_k = Σ sin θ_i, y_k = −Σ cos θ_i).
4. The 2-chain in its angles (unconstrained), 10 s: ``simulate`` and the run alone against the
   same DOP853 steps driven from C with no Python at all (one C call); goal ≤ 3×.
1b. A01 under ``--formulation reduced``, rtol = atol = 1e-10 and 1e-12: the C loop against the
   Python loop (``run_python``) side by side, accepted steps, switches of partition and the
   error at 2000 s against the exact position; and 200 s on numeric charts only.
5. Work–precision of A01 over 2000 s: index1 + projection, udwadia-kalaba + projection,
   reduced, and the angle pendulum, rtol = atol = 1e-6 … 1e-12, error against the exact
   solution; written to ``bench/work_precision_a01.png``.

Results go to stdout and ``bench/constrained_results.md``.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
A01_EXACT = (-0.8146030685890322, -0.5800188278369355)
"""The benchmark's exact position at 2000 s (tests/reference/exact.py gives the same to 1e-12)."""
OUT: list[str] = []


def load() -> str:
    """The machine's load averages over 1, 5 and 15 minutes."""
    return " / ".join(f"{v:.2f}" for v in os.getloadavg())


def say(line: str = "") -> None:
    print(line, flush=True)
    OUT.append(line)


def process_times(commands: dict[str, list[str]], reps: int) -> dict[str, float]:
    """Median wall time of each whole process, the commands taking turns (one untimed round
    first, which fills the compile cache as a user's first run does)."""
    times: dict[str, list[float]] = {k: [] for k in commands}
    for rnd in range(reps + 1):
        for name, cmd in commands.items():
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
            if rnd:
                times[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def last_row(path: Path) -> np.ndarray:
    with open(path, encoding="utf-8") as f:
        *_, line = f.read().split()
    return np.array([float(v) for v in line.split(",")])


def problem(spec_or_name: Any, initial: dict | None = None, **flags) -> Any:
    from lagsim.run.problem import Problem
    from lagsim.spec.options import SimulateOptions
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import build_model

    spec = load_spec(spec_or_name, initial=initial) if isinstance(spec_or_name, str | Path) \
        else spec_or_name
    return Problem.build(spec, build_model(spec), SimulateOptions.resolve(spec.simulate, flags))


CLOCK = time.process_time
"""In-process runs are timed in CPU time of this process, the fastest of several: on a shared
2-core machine the wall time of a millisecond run swings by 3× with other sessions' load, the
CPU time it takes much less."""


def timed(fn: Any, reps: int) -> tuple[float, Any]:
    """CPU seconds of ``fn()``, the fastest of ``reps`` runs after one warm-up, and its last
    result."""
    from lagsim.run.driver import _quiet

    with _quiet():
        result = fn()
        times = []
        for _ in range(reps):
            start = CLOCK()
            result = fn()
            times.append(CLOCK() - start)
    return min(times), result


def interleaved(fns: dict[str, Any], reps: int) -> dict[str, float]:
    """The fastest of ``reps`` runs of each function, the functions taking turns (so that the
    machine's load falls on all alike)."""
    from lagsim.run.driver import _quiet

    best = {k: math.inf for k in fns}
    with _quiet():
        for fn in fns.values():
            fn()
        for _ in range(reps):
            for k, fn in fns.items():
                start = CLOCK()
                fn()
                best[k] = min(best[k], CLOCK() - start)
    return best


def python_steps(pr: Any, reps: int = 1) -> tuple[float, int, Any]:
    """The Python loop's time (the fastest of ``reps`` runs) and accepted steps (its progress
    is called once a step)."""
    from lagsim.run.driver import _quiet, run_python

    best = math.inf
    with _quiet():
        for _ in range(reps):
            calls: list[float] = []
            start = CLOCK()
            traj = run_python(pr, progress=calls.append)
            best = min(best, CLOCK() - start)
    return best, len(calls), traj


def c_run(pr: Any, reps: int) -> tuple[float, int, Any]:
    """The C loop's median time, accepted steps and trajectory."""
    from lagsim.run.engines.cloop import loop_for

    loop = loop_for(pr)
    assert loop is not None, "no C loop for this problem"
    seconds, traj = timed(loop.run, reps)
    return seconds, loop.steps, traj


def section_a01(reps: int, folder: Path) -> dict[str, float]:
    say("## 1–2. IFToMM A01, 2000 s")
    say()
    exe = [sys.executable, "-m", "lagsim", "simulate"]
    outs = {k: folder / f"{k}.csv" for k in ("a01", "angle", "a01_tight")}
    commands = {
        "a01": [*exe, "a01_pendulum", "-o", str(outs["a01"])],
        "angle": [*exe, "pendulum", "--t-end", "2000", "--init", "theta=pi/2", "-o",
                  str(outs["angle"])],
        "a01_tight": [*exe, "a01_pendulum", "--rtol", "1e-12", "--atol", "1e-12", "-o",
                      str(outs["a01_tight"])],
        "import": [sys.executable, "-c", "import numpy, scipy.integrate"],
    }
    wall = process_times(commands, reps)
    err = {k: math.hypot(*(last_row(outs[k])[1:3] - A01_EXACT)) for k in ("a01", "a01_tight")}
    theta = last_row(outs["angle"])[1]
    err["angle"] = math.hypot(math.sin(theta) - A01_EXACT[0], -math.cos(theta) - A01_EXACT[1])
    pa = problem("a01_pendulum")
    pt = problem("a01_pendulum", rtol=1e-12, atol=1e-12)
    pp = problem("pendulum", initial={"theta": math.pi / 2}, t_end=2000.0)
    run_a, steps_a, _ = c_run(pa, reps)
    run_t, steps_t, _ = c_run(pt, reps)
    run_p, steps_p, _ = c_run(pp, reps)
    py_a, py_steps, _ = python_steps(pa)
    say("| run | whole process s | run alone s | accepted steps | error at 2000 s |")
    say("|---|---|---|---|---|")
    say(f"| A01 defaults (index1 + projection, 1e-10) | {wall['a01']:.3f} | {run_a:.3f} | "
        f"{steps_a} | {err['a01']:.2e} |")
    say(f"| angle pendulum, same span and tolerances | {wall['angle']:.3f} | {run_p:.3f} | "
        f"{steps_p} | {err['angle']:.2e} |")
    say(f"| A01, rtol = atol = 1e-12 | {wall['a01_tight']:.3f} | {run_t:.3f} | {steps_t} | "
        f"{err['a01_tight']:.2e} |")
    say(f"| A01 defaults, Python loop (before) | – | {py_a:.3f} | {py_steps} | – |")
    say(f"| `python -c 'import numpy, scipy.integrate'` | {wall['import']:.3f} | – | – | – |")
    say()
    r1 = wall["a01"] / wall["angle"]
    r2 = wall["a01_tight"] / wall["a01"]
    say(f"- A01 / angle pendulum, whole process: **{r1:.2f}×** (goal ≤ 1.5×: "
        f"{'met' if r1 <= 1.5 else 'not met'}); the runs alone: {run_a / run_p:.2f}×.")
    say(f"- A01 at 1e-12: error **{err['a01_tight']:.2e}** (goal ≤ 1e-6: "
        f"{'met' if err['a01_tight'] <= 1e-6 else 'not met'}) at **{r2:.2f}×** the default "
        f"run's whole process (goal ≤ 3×: {'met' if r2 <= 3 else 'not met'}).")
    say(f"- A01's run alone, C loop against the Python loop: {py_a / run_a:.0f}× faster.")
    say()
    return {"a01_vs_angle": r1, "tight_error": err["a01_tight"], "tight_ratio": r2}


def section_reduced(reps: int) -> dict[str, float]:
    """A01 under ``--formulation reduced`` (symbolic charts, about 1600 switches of partition in
    2000 s): the C loop against the Python loop, side by side, with the error at 2000 s."""
    say("## 1b. IFToMM A01, 2000 s, reduced: C loop against Python loop")
    say()
    say("| tolerances | C loop s | Python loop s | Python / C | accepted steps | switches | "
        "error at 2000 s |")
    say("|---|---|---|---|---|---|---|")
    out = {}
    from lagsim.run.driver import _quiet, run_python
    from lagsim.run.engines.cloop import loop_for

    for tol in (1e-10, 1e-12):
        run_c = math.inf
        for _ in range(reps + 1):  # a fresh problem each run: the form keeps its chart
            pr = problem("a01_pendulum", formulation="reduced", samples=2, rtol=tol, atol=tol)
            loop = loop_for(pr)
            assert loop is not None, "no C loop for reduced A01"
            with _quiet():
                start = CLOCK()
                traj = loop.run()
                run_c = min(run_c, CLOCK() - start)
        steps, switches = loop.steps, pr.form.switches
        pr = problem("a01_pendulum", formulation="reduced", samples=2, rtol=tol, atol=tol)
        run_py, py_steps, ref = python_steps(pr)
        err = math.hypot(*(traj.q[-1, :2] - A01_EXACT))
        same = float(np.abs(traj.q[-1] - ref.q[-1]).max())
        say(f"| {tol:g} | {run_c:.3f} | {run_py:.3f} | {run_py / run_c:.0f}× | {steps} "
            f"({py_steps} in Python) | {switches} | {err:.2e} (C − Python {same:.1e}) |")
        out[f"reduced_{tol:g}"] = run_py / run_c
    import lagsim.run.reduced

    charts = lagsim.run.reduced.SYMBOLIC_CHARTS
    lagsim.run.reduced.SYMBOLIC_CHARTS = 0  # numeric charts only (Newton at each right-hand side)
    try:
        runs = []
        for c in (True, False):
            pr = problem("a01_pendulum", formulation="reduced", samples=2, t_end=200.0)
            loop = loop_for(pr) if c else None
            with _quiet():
                start = CLOCK()
                traj = loop.run() if loop is not None else run_python(pr)
                runs.append((CLOCK() - start, traj, pr.form.switches))
    finally:
        lagsim.run.reduced.SYMBOLIC_CHARTS = charts
    (run_c, traj, switches), (run_py, ref, _) = runs
    same = float(np.abs(traj.q[-1] - ref.q[-1]).max())
    say(f"| 1e-10, numeric charts only, 200 s | {run_c:.3f} | {run_py:.3f} | "
        f"{run_py / run_c:.0f}× | – | {switches} | (C − Python {same:.1e}) |")
    out["reduced_numeric"] = run_py / run_c
    say()
    return out


def tight_chain_reference(n: int) -> np.ndarray:
    """Bob positions at 10 s of the minimal chain at rtol = atol = 1e-13 (x_k, y_k)."""
    from lagsim.spec.chains import chain_yaml
    from lagsim.spec.system import parse_spec

    pr = problem(parse_spec(chain_yaml(n)), t_end=10.0, samples=2, rtol=1e-13, atol=1e-13)
    _, _, traj = c_run(pr, 1)
    th = traj.q[-1]
    return np.column_stack((np.cumsum(np.sin(th)), -np.cumsum(np.cos(th))))


CASADI_FORMS = {"wide": "accelerations and λ algebraic", "fair": "only λ algebraic"}
"""The two index-1 DAEs CasADi's IDAS integrates the natural chain as."""


def casadi_chain(n: int, tol: float, form: str) -> tuple[float, np.ndarray] | None:
    """CasADi IDAS on the natural chain (unit masses, so M = I) as an index-1 DAE, the
    constraints φ = 0 replaced by φ̈ = A a − b = 0 with b = −(∂(A v)/∂q) v (seed 003: "it is
    easier to solve the system if q̈ appears in the constraint", c = 0 ↔ c̈ = 0 with c(0) = 0,
    ċ(0) = 0; the start is consistent); (seconds, bob positions at 10 s). ``form`` (a key of
    :data:`CASADI_FORMS`): ``wide``, differential q, v and algebraic a and λ (a − F − Aᵀλ = 0,
    A a − b = 0: 3n algebraic unknowns); ``fair``, differential q, v with v' = F + Aᵀλ and only
    λ algebraic (A (F + Aᵀλ) − b = 0: n unknowns, as ``bench/sensitivity.py`` writes A01).
    No projection: IDAS drifts off φ = 0 by its tolerance."""
    try:
        import casadi as ca
    except ImportError:
        return None
    from lagsim.spec.chains import natural_positions

    q = ca.SX.sym("q", 2 * n)
    v = ca.SX.sym("v", 2 * n)
    lam = ca.SX.sym("lam", n)
    phi = []
    for k in range(n):
        x0, y0 = (q[2 * k - 2], q[2 * k - 1]) if k else (0, 0)
        phi.append((q[2 * k] - x0) ** 2 + (q[2 * k + 1] - y0) ** 2 - 1.0)
    phi = ca.vertcat(*phi)
    A = ca.jacobian(phi, q)
    b = -ca.mtimes(ca.jacobian(ca.mtimes(A, v), q), v)
    F = ca.vertcat(*[val for _ in range(n) for val in (0.0, -9.81)])
    if form == "wide":
        a = ca.SX.sym("a", 2 * n)
        z, acc = ca.vertcat(a, lam), a
        alg = ca.vertcat(a - F - ca.mtimes(A.T, lam), ca.mtimes(A, a) - b)
    else:
        z, acc = lam, F + ca.mtimes(A.T, lam)
        alg = ca.mtimes(A, acc) - b
    dae = {"x": ca.vertcat(q, v), "z": z, "ode": ca.vertcat(v, acc), "alg": alg}
    integ = ca.integrator(f"chain_{form}", "idas", dae, 0.0, 10.0,
                          {"abstol": tol, "reltol": tol, "max_num_steps": 10**7})
    x0 = np.concatenate([np.ravel(natural_positions(n, 0.5)), np.zeros(2 * n)])
    z0 = np.zeros(z.numel())
    integ(x0=x0, z0=z0)
    times = []
    for _ in range(5):
        start = CLOCK()
        res = integ(x0=x0, z0=z0)
        times.append(CLOCK() - start)
    xf = np.array(res["xf"]).ravel()[:2 * n]
    return min(times), xf.reshape(n, 2)


def section_chain(reps: int, n: int = 8) -> dict[str, float]:
    from lagsim.spec.chains import chain_yaml
    from lagsim.spec.system import parse_spec

    say(f"## 3. The {n}-chain, 10 s, rtol = atol = 1e-10")
    say()
    natural = problem(parse_spec(chain_yaml(n, natural=True)), t_end=10.0, samples=2,
                      formulation="index1", stabilize="projection")
    minimal = problem(parse_spec(chain_yaml(n)), t_end=10.0, samples=2)
    from lagsim.run.engines.cloop import loop_for

    loops = {"natural": loop_for(natural), "minimal": loop_for(minimal)}
    best = interleaved({k: loop.run for k, loop in loops.items()}, 10 * reps)
    c_nat, c_min = best["natural"], best["minimal"]
    traj_nat, traj_min = loops["natural"].run(), loops["minimal"].run()
    steps_nat, steps_min = loops["natural"].steps, loops["minimal"].steps
    py_nat, py_steps, _ = python_steps(natural, 3)
    ref = tight_chain_reference(n)
    th = traj_min.q[-1]
    err_min = np.abs(np.column_stack((np.cumsum(np.sin(th)), -np.cumsum(np.cos(th)))) - ref).max()
    err_nat = np.abs(traj_nat.q[-1].reshape(n, 2) - ref).max()
    say("| run | s | accepted steps | µs per step | bob error at 10 s |")
    say("|---|---|---|---|---|")
    say(f"| natural, index1 + projection, C loop | {c_nat:.4f} | {steps_nat} | "
        f"{1e6 * c_nat / steps_nat:.1f} | {err_nat:.1e} |")
    say(f"| natural, index1 + projection, Python loop | {py_nat:.4f} | {py_steps} | "
        f"{1e6 * py_nat / py_steps:.1f} | (same steps) |")
    say(f"| minimal coordinates (ode), C loop | {c_min:.4f} | {steps_min} | "
        f"{1e6 * c_min / steps_min:.1f} | {err_min:.1e} |")
    peers = {form: casadi_chain(n, 1e-10, form) for form in CASADI_FORMS}
    for form, peer in peers.items():
        if peer is None:
            say(f"| CasADi IDAS (index-1 DAE, {CASADI_FORMS[form]}) | not installed "
                "(`pip install -e '.[bench]'`) | | | |")
        else:
            sec, pos = peer
            say(f"| CasADi IDAS, index-1 DAE, {CASADI_FORMS[form]}, same tolerances | "
                f"{sec:.4f} | – | – | {np.abs(pos - ref).max():.1e} |")
    say()
    per = (c_nat / steps_nat) / (c_min / steps_min)
    speed = py_nat / c_nat
    say(f"- cost per accepted step, natural / minimal: **{per:.2f}×** (goal ≤ 2×: "
        f"{'met' if per <= 2 else 'not met'}), the two runs taking turns in this process "
        f"(load average {load()}).")
    paths = ", ".join(f"{k} {v}" for k, v in loops["natural"].paths.items())
    say(f"- the natural chain's constrained solves by path: {paths} (index1's Schur complement "
        "and the projection's minimum-norm steps by Cholesky, the constant mass matrix "
        "factored once).")
    say(f"- whole 10 s run, C loop against the Python loop: **{speed:.0f}×** (goal ≥ 20×: "
        f"{'met' if speed >= 20 else 'not met'}).")
    for form, peer in peers.items():
        if peer is not None:
            say(f"- CasADi IDAS ({CASADI_FORMS[form]}) / lagsim natural C loop: "
                f"{peer[0] / c_nat:.1f}× the CPU time, the runs one after the other in this "
                f"process (load average {load()}; IDAS is a variable-order BDF method: its error "
                "at the same tolerances differs).")
    say()
    return {"per_step": per, "speedup": speed}


def bare_c_steps(pr: Any, reps: int) -> float:
    """The run's DOP853 steps in one C call (with the start: f(t0, y0) and the first step
    size), nothing else (no samples but the end)."""
    from lagsim.run.engines.cloop import loop_for

    loop = loop_for(pr)
    n = pr.numeric.n
    y0 = np.ascontiguousarray(pr.form.initial(pr.t0, pr.q0, pr.qd0), dtype=float)
    atol = np.full(2 * n, pr.options.atol)
    times = np.array([pr.options.t_end])
    width = 2 * n + pr.numeric.m
    rows = np.zeros((1, width))
    info, last, event = np.zeros(6), np.zeros(2 * n), np.zeros(width)
    out = []
    for _ in range(reps + 1):
        handle = loop._new(1.0, atol)
        k = ctypes.c_int(0)
        start = CLOCK()
        loop.lib.lagsim_loop_start(handle, pr.t0, y0.ctypes.data, 0.0)
        code = loop.lib.lagsim_loop_run(handle, times.ctypes.data, 1, ctypes.byref(k),
                                        rows.ctypes.data, 10**9, info.ctypes.data,
                                        last.ctypes.data, event.ctypes.data)
        out.append(CLOCK() - start)
        loop.lib.lagsim_loop_free(handle)
        assert code == 1
    return min(out[1:])


def section_n2(reps: int) -> dict[str, float]:
    from lagsim.numeric.compile import compile_model
    from lagsim.run.driver import simulate
    from lagsim.spec.chains import chain_yaml
    from lagsim.spec.options import SimulateOptions
    from lagsim.spec.system import parse_spec
    from lagsim.symbolic.model import build_model

    say("## 4. The 2-chain in its angles (unconstrained), 10 s, 1e-10")
    say()
    spec = parse_spec(chain_yaml(2))
    model = build_model(spec)
    numeric = compile_model(model)
    options = SimulateOptions.resolve(spec.simulate, {"t_end": 10.0, "samples": 2})
    pr = problem(spec, t_end=10.0, samples=2)
    from lagsim.run.engines.cloop import loop_for

    loop = loop_for(pr)
    best = interleaved({"simulate": lambda: simulate(spec, model, options, numeric=numeric),
                        "run": loop.run, "bare": lambda: bare_c_steps(pr, 1)}, 20 * reps)
    sim, run_s = best["simulate"], best["run"]
    bare = bare_c_steps(pr, 20 * reps)
    steps = loop.steps
    say("| what | ms |")
    say("|---|---|")
    say(f"| `simulate` (checks, consistent start, run, trajectory) | {1e3 * sim:.3f} |")
    say(f"| the run alone (`lagsim.run.driver.run`, C loop) | {1e3 * run_s:.3f} |")
    say(f"| the same {steps} DOP853 steps in one C call | {1e3 * bare:.3f} |")
    say()
    ratio = sim / bare
    say(f"- `simulate` / bare C steps: **{ratio:.2f}×** (goal ≤ 3×: "
        f"{'met' if ratio <= 3 else 'not met'}); the run alone {run_s / bare:.2f}×.")
    say()
    return {"n2_ratio": ratio}


def section_precision(quick: bool, plot: bool) -> None:
    say("## 5. Work–precision, A01 over 2000 s (error against the exact position)")
    say()
    tols = (1e-6, 1e-8, 1e-10) if quick else (1e-6, 1e-8, 1e-10, 1e-12)
    curves: dict[str, list[tuple[float, float, float]]] = {}
    runs = {
        "index1 + projection": ("a01_pendulum", {"formulation": "index1",
                                                 "stabilize": "projection"}),
        "udwadia-kalaba + projection": ("a01_pendulum", {"formulation": "udwadia-kalaba",
                                                         "stabilize": "projection"}),
        "reduced": ("a01_pendulum", {"formulation": "reduced"}),
        "angle (ode)": ("pendulum", {"t_end": 2000.0}),
    }
    say("| run | tol | s | error |")
    say("|---|---|---|---|")
    for label, (name, flags) in runs.items():
        for tol in tols:
            pr = problem(name, {"theta": math.pi / 2} if name == "pendulum" else None,
                         samples=2, rtol=tol, atol=tol, **flags)
            from lagsim.run.driver import _quiet, run

            with _quiet():
                start = CLOCK()
                traj = run(pr)
                sec = CLOCK() - start
            if name == "pendulum":
                pos = (math.sin(traj.q[-1, 0]), -math.cos(traj.q[-1, 0]))
            else:
                pos = tuple(traj.q[-1, :2])
            err = math.hypot(pos[0] - A01_EXACT[0], pos[1] - A01_EXACT[1])
            curves.setdefault(label, []).append((tol, sec, err))
            say(f"| {label} | {tol:g} | {sec:.3f} | {err:.2e} |")
    say()
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for label, pts in curves.items():
            ax.loglog([p[1] for p in pts], [max(p[2], 1e-16) for p in pts], "o-", label=label)
        ax.set_xlabel("run time (s)")
        ax.set_ylabel("position error at 2000 s (m)")
        ax.set_title("IFToMM A01, 2000 s: work–precision")
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(HERE / "work_precision_a01.png", dpi=120)
        say("Plot: [work_precision_a01.png](work_precision_a01.png)")
        say()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="3 repetitions, fewer tolerances")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--only", default="a01,reduced,chain,n2,precision")
    args = parser.parse_args(argv)
    reps = 3 if args.quick else args.reps
    only = set(args.only.split(","))
    say("# Constrained runs in C (issues 9, 17 §4)")
    say()
    say(f"{os.cpu_count()} cores (shared with other sessions), Python "
        f"{sys.version.split()[0]}. Whole processes: medians of {reps} runs, the commands taking "
        "turns. Runs in the process: CPU time, the fastest of several, the runs taking turns (the "
        f"load of other sessions swings the wall time of millisecond runs by 3×). Load average "
        f"at the start: {load()}.")
    say()
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, str(ROOT / "tests"))
        from reference import exact

        theta = float(exact.angle(2000.0, math.pi / 2)[0])
        say("Exact A01 position from tests/reference/exact.py: "
            f"({math.sin(theta)!r}, {-math.cos(theta)!r})"
            f"; the benchmark's: {A01_EXACT}.")
        say()
        if "a01" in only:
            section_a01(reps, Path(tmp))
        if "reduced" in only:
            section_reduced(reps)
        if "chain" in only:
            section_chain(reps)
        if "n2" in only:
            section_n2(reps)
        if "precision" in only:
            section_precision(args.quick, not args.no_plot)
    say(f"Load average at the end: {load()}.")
    (HERE / "constrained_results.md").write_text("\n".join(OUT) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
