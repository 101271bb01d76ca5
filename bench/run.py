"""The benchmark of issue 5: lagsim and its anchors measured in one run, written to RESULTS.md.

    .venv/bin/python bench/run.py            # full run (the first of make bench), 10-20 min
    .venv/bin/python bench/run.py --quick    # smoke run: n up to 4, 3 repetitions

Workloads (see bench/README.md): 1 the n-chain in minimal coordinates (build, RHS, simulate,
integrator overhead), 2 the chain in natural coordinates (index1 / udwadia-kalaba, projection
against none), 3 whole-process cold start, 4 work–precision of the pendulum released from the
horizontal against its exact solution (tests/reference/exact.py), 5 the anchors
(bench/anchor_sympy.py: sympy's LagrangesMethod and KanesMethod, side by side in table 1b;
bench/anchor_numpy.py). Raw figures also go to bench/results.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
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
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))
sys.path.insert(2, str(ROOT / "tests"))

import anchor_numpy  # noqa: E402
import anchor_sympy  # noqa: E402
import derive_time  # noqa: E402
import goals  # noqa: E402
import lagsim_side  # noqa: E402
import params  # noqa: E402
from reference import exact  # noqa: E402
from timing import median_time  # noqa: E402

FULL = {
    "minimal": (1, 2, 4, 8, 16, 24, 32),
    "natural": (1, 2, 4, 8, 16),
    "anchor": (1, 2, 4, 8),
    "tols": (1e-6, 1e-8, 1e-10, 1e-12),
    "reps": 5,
    "wp_reps": 5,
    "wp_t_end": 100.0,
}
QUICK = {
    "minimal": (1, 2, 4),
    "natural": (1, 2, 4),
    "anchor": (1, 2, 4),
    "tols": (1e-6, 1e-9),
    "reps": 3,
    "wp_reps": 1,
    "wp_t_end": 100.0,
}
FORMULATIONS = ("index1", "udwadia-kalaba")
STABILIZERS = ("none", "baumgarte", "projection")
THETA0 = math.pi / 2
COLD_REPS = 11
"""Cold-start repetitions: whole processes vary by ±10 % from one run to the next."""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def machine() -> dict[str, str]:
    """CPU model, core count, OS, and the versions that matter."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    facts = {"cpu": cpu, "cores": str(os.cpu_count()), "os": platform.platform(),
             "python": platform.python_version()}
    for module in ("numpy", "scipy", "sympy", "symengine", "lagsim"):
        try:
            facts[module] = __import__(module).__version__
        except Exception as exc:
            facts[module] = f"not importable ({type(exc).__name__})"
    try:
        import symengine

        facts["symengine llvm"] = str(getattr(symengine, "have_llvm", False))
    except ImportError:
        pass
    try:
        facts["commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
            check=False).stdout.strip()
    except OSError:
        facts["commit"] = "unknown"
    facts["date"] = dt.datetime.now().isoformat(timespec="seconds")
    if hasattr(os, "getloadavg"):
        facts["load average at start (1, 5, 15 min)"] = ", ".join(
            f"{x:.2f}" for x in os.getloadavg())
    return facts


def workload_chain(cfg: dict, folder: Path) -> dict[str, Any]:
    """Workloads 1 and 5: the minimal-coordinate chain, lagsim and the anchors."""
    out: dict[str, Any] = {"anchor": [], "lagsim": [], "numpy": None}
    out["numpy"] = anchor_numpy.measure(reps=max(cfg["reps"], 5))
    log(f"numpy double pendulum RHS: {out['numpy']['rhs_us']:.2f} us")
    ok, why = lagsim_side.available()
    if ok:
        for n in cfg["minimal"]:
            row = lagsim_side.measure_chain(n, reps=cfg["reps"], folder=folder)
            out["lagsim"].append(row)
            s = row["stabilizers"]["none"]
            log(f"lagsim chain n={n}: build {row['build_s']:.3g} s, rhs {s['rhs_us']:.3g} us, "
                f"simulate {s['simulate_s']:.3g} s")
    else:
        out["lagsim_missing"] = why
    out["anchor"] = anchor_sympy.run(cfg["anchor"], reps=cfg["reps"], log=log)
    out["kane"] = anchor_sympy.run(cfg["anchor"], reps=cfg["reps"], log=log, method="kane")
    return out


def workload_natural(cfg: dict, folder: Path) -> dict[str, Any]:
    """Workload 2: natural coordinates, index1 and udwadia-kalaba, projection against none."""
    ok, why = lagsim_side.available()
    if not ok:
        return {"missing": why, "rows": []}
    rows = []
    for formulation in FORMULATIONS:
        for n in cfg["natural"]:
            row = lagsim_side.measure_chain(n, natural=True, formulation=formulation,
                                            stabilizers=("none", "projection"),
                                            reps=cfg["reps"], folder=folder)
            rows.append(row)
            log(f"lagsim natural n={n} {formulation}: "
                + ", ".join(f"{k} {v['simulate_s']:.3g} s"
                            for k, v in row["stabilizers"].items()))
    return {"rows": rows}


def workload_cold_start(cfg: dict) -> dict[str, Any]:
    """Workload 3: whole processes as a shell user starts them.

    The compiled-model cache starts empty: the probe run of each command compiles (its time is
    not in the table), the warm-up and the timed runs find the cache as a user's second run
    does. The commands take turns (a round of all three, :data:`COLD_REPS` times after a
    warm-up round), so that a passing disturbance of the machine falls on all of them."""
    bindir = Path(sys.executable).parent
    lagsim_cmd = [str(bindir / "lagsim")] if (bindir / "lagsim").exists() else [
        sys.executable, "-m", "lagsim"]
    out_csv = Path(tempfile.gettempdir()) / "p.csv"
    commands = {
        "python -c 'import numpy, scipy.integrate'": [
            sys.executable, "-c", "import numpy, scipy.integrate"],
        "lagsim derive pendulum": [*lagsim_cmd, "derive", "pendulum"],
        "lagsim simulate pendulum --t-end 10 -o /tmp/p.csv": [
            *lagsim_cmd, "simulate", "pendulum", "--t-end", "10", "-o", str(out_csv)],
    }
    os.environ["LAGSIM_CACHE"] = tempfile.mkdtemp(prefix="lagsim-bench-cold-")
    rows: dict[str, Any] = {}
    ready = {}
    for label, cmd in commands.items():
        probe = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if probe.returncode != 0:
            rows[label] = {"missing": (probe.stderr.strip().splitlines() or ["failed"])[-1]}
            log(f"cold start {label}: not available")
        else:
            ready[label] = cmd
    times: dict[str, list[float]] = {label: [] for label in ready}
    first: dict[str, float] = {}
    for rep in range(COLD_REPS + 1):
        for label, cmd in ready.items():
            start = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True)
            elapsed = time.perf_counter() - start
            if rep == 0:
                first[label] = elapsed
            else:
                times[label].append(elapsed)
    for label in ready:
        rows[label] = {"median_s": statistics.median(times[label]), "first_s": first[label],
                       "reps": COLD_REPS}
        log(f"cold start {label}: {rows[label]['median_s']:.3f} s")
    return {label: rows[label] for label in commands if label in rows}


def workload_precision(cfg: dict, folder: Path) -> dict[str, Any]:
    """Workload 4: final-position error against run time over ``wp_t_end`` seconds."""
    t_end = cfg["wp_t_end"]
    xe, ye = (float(v) for v in exact.position(t_end, THETA0))
    out: dict[str, Any] = {"t_end": t_end, "theta0": THETA0, "exact": [xe, ye], "series": {}}
    anchor = anchor_sympy.chain_functions(1)
    series = {}
    for tol in cfg["tols"]:
        def run_anchor(tol: float = tol) -> Any:
            return anchor_sympy.solve_ivp(anchor.rhs, (0.0, t_end), [THETA0, 0.0],
                                          method="DOP853", rtol=tol, atol=tol)
        timed = median_time(run_anchor, cfg["wp_reps"])
        th = timed["result"].y[0, -1]
        series.setdefault("sympy anchor (minimal)", []).append(
            {"tol": tol, "time_s": timed["median"],
             "error": math.hypot(math.sin(th) - xe, -math.cos(th) - ye)})
    ok, why = lagsim_side.available()
    if not ok:
        out["missing"] = why
    else:
        configs = [("ode", "none")] + [(f, s) for f in FORMULATIONS for s in STABILIZERS]
        for formulation, stabilize in configs:
            label = "lagsim ode (minimal)" if formulation == "ode" else (
                f"lagsim {formulation} + {stabilize}")
            points = []
            for tol in cfg["tols"]:
                try:
                    r = lagsim_side.work_precision_run(formulation, stabilize, tol, t_end,
                                                       folder, cfg["wp_reps"], THETA0)
                except Exception as exc:  # a failed run is a result to report, not a crash
                    out.setdefault("missing_series", {})[label] = (
                        f"rtol {tol:.0e}: {type(exc).__name__}: {exc}")
                    break
                r.update(tol=tol, error=math.hypot(r["x"] - xe, r["y"] - ye))
                points.append(r)
            if points:
                series[label] = points
                log(f"work-precision {label}: " + ", ".join(
                    f"{p['tol']:.0e}: {p['error']:.1e} in {p['time_s']:.2f} s" for p in points))
    out["series"] = series
    return out


def workload_profiles(folder: Path) -> dict[str, Any]:
    """Where the time goes, for the targets' report: cProfile of one cold build of the n = 8
    and n = 24 chains (stages by cumulative time) and of one n = 8 simulate (functions by own
    time). Profiled times are inflated by the profiler; the shares are what matters."""
    import cProfile
    import pstats

    out: dict[str, Any] = {}
    stages = {"load_spec": "spec.py", "build_model": "model.py", "compile_model": "compile.py",
              "c_function (cse + C text)": "ccompile.py", "_library (C compiler)": "ccompile.py",
              "lambdify (LLVM)": "compile.py"}
    for n in (8, 24):
        path = lagsim_side.write_chain(n, False, folder)
        lagsim_side._cold_build_before()
        prof = cProfile.Profile()
        prof.enable()
        lagsim_side.build(path)
        prof.disable()
        stats = pstats.Stats(prof).stats
        rows = {}
        for label, file in stages.items():
            name = label.split(" ")[0]
            total = sum(v[3] for k, v in stats.items() if k[2] == name and k[0].endswith(file))
            rows[label] = total
        rows["total"] = sum(v[2] for v in stats.values())
        out[f"build n={n}"] = rows
    path = lagsim_side.write_chain(8, False, folder)
    built = lagsim_side.build(path)
    lagsim_side.lagsim_simulate(built)
    prof = cProfile.Profile()
    prof.enable()
    lagsim_side.lagsim_simulate(built)
    prof.disable()
    stats = pstats.Stats(prof).stats
    total = sum(v[2] for v in stats.values())
    top = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:10]
    out["simulate n=8"] = {
        "total": total,
        "top": [{"function": f"{Path(k[0]).name}:{k[1]}({k[2]})", "calls": v[1],
                 "tottime": v[2], "cumtime": v[3]} for k, v in top]}
    return out


def render_profiles(profiles: dict[str, Any]) -> list[str]:
    lines = ["", "## Profiles (where the time goes)", "",
             "cProfile, one run each; the profiler inflates every figure, the shares are what "
             "matters.", ""]
    for key, rows in profiles.items():
        if key.startswith("build"):
            lines += [f"**{key}** (cold: empty compiled-model cache), cumulative seconds: "
                      + ", ".join(f"{k} {v:.3f}" for k, v in rows.items()), ""]
    sim = profiles.get("simulate n=8")
    if sim:
        lines += [f"**simulate n=8** (total {sim['total']:.3f} s), by own time:", "",
                  "| function | calls | own [s] | share | cumulative [s] |",
                  "|---|---|---|---|---|"]
        for r in sim["top"]:
            lines.append(f"| `{r['function']}` | {r['calls']} | {r['tottime']:.4f} | "
                         f"{r['tottime'] / sim['total']:.0%} | {r['cumtime']:.4f} |")
    return lines


def plot_work_precision(wp: dict[str, Any], path: Path) -> bool:
    """Draw error against run time, one line per formulation × stabilizer."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 5))
    for label, points in wp["series"].items():
        times = [p["time_s"] for p in points]
        errors = [max(p["error"], 1e-16) for p in points]
        ax.loglog(times, errors, "o-" if "anchor" not in label else "k--", label=label)
    ax.set_xlabel("run time [s]")
    ax.set_ylabel(f"final position error at t = {wp['t_end']:g} s")
    ax.set_title("pendulum released from the horizontal, DOP853, rtol = atol", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _f(value: Any, fmt: str = ".3g") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return format(value, fmt)


def _ratio(slow: Any, fast: Any) -> str:
    if not slow or not fast:
        return "—"
    return f"{slow / fast:.1f}×"


def growth_exponent(rows: list[dict[str, Any]], key: str = "build_s", n_min: int = 4) -> float:
    """Least-squares slope of log(time) against log(n) for n >= n_min."""
    pts = [(r["n"], r[key]) for r in rows if r["n"] >= n_min and r.get(key)]
    if len(pts) < 2:
        return float("nan")
    x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def anchor_build(row: dict[str, Any]) -> float | None:
    """An anchor's build: setup + forming + lambdify (None when not measured)."""
    return row["setup_s"] + row["forming_s"] + row["lambdify_s"] if row else None


def render_symbolic_anchors(chain: dict[str, Any]) -> list[str]:
    """Both sympy anchors beside lagsim, measured in the same run: build, RHS and simulate,
    each anchor's time over lagsim's, and how far each anchor's final state is from lagsim's."""
    ours = {r["n"]: r for r in chain["lagsim"]}
    by_method = {"LagrangesMethod": {r["n"]: r for r in chain["anchor"]},
                 "KanesMethod": {r["n"]: r for r in chain.get("kane", [])}}
    sizes = sorted(set(ours) & {n for rows in by_method.values() for n in rows})
    if not sizes:
        return []
    lines = ["", "### 1b. The symbolic anchors side by side: sympy `LagrangesMethod` and "
             "`KanesMethod`", "",
             "Same run, same chain as table 1 (build: setup + forming + lambdify against "
             "lagsim's cold build; RHS: one call; simulate: 10 s DOP853 at 1e-10). Each "
             "figure is the anchor's time over lagsim's (above 1: lagsim is faster); Δ: the "
             "largest difference of the final state from lagsim's.", "",
             "| n | anchor | build | RHS | simulate | Δ final state |", "|---|---|---|---|---|---|"]
    for n in sizes:
        o = ours[n]
        s = o.get("stabilizers", {}).get("none", {})
        for label, rows in by_method.items():
            a = rows.get(n)
            if a is None:
                continue
            diff = (float(np.max(np.abs(np.subtract(s["final_state"], a["final_state"]))))
                    if s.get("final_state") else None)
            lines.append(
                f"| {n} | {label} | {_ratio(anchor_build(a), o.get('build_s'))} | "
                f"{_ratio(a.get('rhs_us'), s.get('rhs_us'))} | "
                f"{_ratio(a.get('simulate_s'), s.get('simulate_s'))} | {_f(diff, '.1e')} |")
    return lines


def render(results: dict[str, Any]) -> str:
    """RESULTS.md text."""
    lines = ["# lagsim benchmark results", "",
             f"Written by `bench/run.py{' --quick' if results['quick'] else ''}` "
             f"in {results['wall_s'] / 60:.1f} min. Every figure is the median of "
             f"{results['reps']} repetitions after a warm-up unless a note says otherwise; "
             "lagsim and its anchors are measured in the same run. Ratios are anchor / lagsim "
             "(above 1: lagsim is faster).", "", "## Machine", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in results["machine"].items()]

    chain = results["chain"]
    anchors = {r["n"]: r for r in chain["anchor"]}
    ours = {r["n"]: r for r in chain["lagsim"]}
    lines += ["", "## 1. Chain of n pendulums, minimal coordinates (with anchor 5a)", ""]
    if chain.get("lagsim_missing"):
        lines += [f"lagsim part not available yet: {chain['lagsim_missing']}", ""]
    lines += ["build: lagsim = YAML loaded + model + compiled; anchor = Lagrangian + "
              "`form_lagranges_equations` + `mass_matrix_full`/`forcing_full` + "
              "`lambdify(cse=True)`. simulate: 10 s from all angles 0.5 rad, DOP853, "
              "rtol = atol = 1e-10. overhead: "
              "share of simulate time outside the RHS (1 − nfev · RHS time / simulate time). "
              "build lagsim starts from an empty compiled-model cache (the ratio uses it); "
              "'cache warm' is a second build of the same file. Compiled backend of lagsim: "
              + ", ".join(sorted({str(o.get('backend')) for o in ours.values()}) or ["—"])
              + " (c: lagsim.numeric.ccompile through the system C compiler; llvm: symengine).", "",
              "| n | build lagsim [s] | build lagsim, cache warm [s] | build anchor [s] | ratio |"
              " RHS lagsim [µs] | "
              "RHS anchor [µs] | ratio | simulate lagsim [s] | simulate anchor [s] | ratio | "
              "overhead lagsim | overhead anchor | RHS calls lagsim / anchor | "
              "max abs Δ final state |",
              "|" + "---|" * 15]
    for n in sorted(set(anchors) | set(ours)):
        a, o = anchors.get(n, {}), ours.get(n, {})
        s = o.get("stabilizers", {}).get("none", {})
        a_build = anchor_build(a)
        diff = (float(np.max(np.abs(np.subtract(s["final_state"], a["final_state"]))))
                if a and s.get("final_state") else None)
        lines.append(
            f"| {n} | {_f(o.get('build_s'))} | {_f(o.get('build_cached_s'))} | {_f(a_build)} | "
            f"{_ratio(a_build, o.get('build_s'))}"
            f" | {_f(s.get('rhs_us'))} | {_f(a.get('rhs_us'))} | "
            f"{_ratio(a.get('rhs_us'), s.get('rhs_us'))} | {_f(s.get('simulate_s'))} | "
            f"{_f(a.get('simulate_s'))} | {_ratio(a.get('simulate_s'), s.get('simulate_s'))} | "
            f"{_f(s.get('overhead_fraction'), '.0%')} | {_f(a.get('overhead_fraction'), '.0%')} |"
            f" {s.get('nfev', '—')} / {a.get('nfev', '—')} | {_f(diff, '.1e')} |")
    if ours:
        lines += ["", f"Fitted growth exponent of lagsim's build time in n (n ≥ 4): "
                  f"{growth_exponent(list(ours.values())):.2f}."]
        calls = [f"n={n}: {_f(o.get('compiled_call_us'))} µs" for n, o in ours.items()]
        lines += ["", "One compiled `dynamics` call alone (M, F, A, b): " + ", ".join(calls) + "."]

    lines += render_symbolic_anchors(chain)
    lines += ["", "### 5. Anchors in detail", "",
              "sympy.physics.mechanics `LagrangesMethod` (setup: the Lagrangian) and "
              "`KanesMethod` (setup: the particles and their weights), sympy's cache cleared "
              "before each repetition. `RHS without cse` is the same RHS lambdified with "
              "`cse=False` (for comparison with older anchor figures).", "",
              "| n | method | setup [s] | forming [s] | "
              "mass_matrix_full + forcing_full + lambdify [s] | RHS [µs] | RHS without cse [µs] | "
              "simulate [s] | nfev | end to end [s] | "
              "energy error | notes |", "|" + "---|" * 12]
    for a in [*chain["anchor"], *chain.get("kane", [])]:
        lines.append(
            f"| {a['n']} | {a.get('method', 'lagrange')} | {_f(a['setup_s'])} | "
            f"{_f(a['forming_s'])} | "
            f"{_f(a['lambdify_s'])} | {_f(a['rhs_us'])} | {_f(a['rhs_us_without_cse'])} | "
            f"{_f(a['simulate_s'])} | {a['nfev']} | {_f(a['end_to_end_s'])} | "
            f"{_f(a['energy_error'], '.1e')} | {'; '.join(a['notes']) or ''} |")
    npy = chain["numpy"]
    o2 = ours.get(2, {}).get("stabilizers", {}).get("none", {})
    lines += ["", f"Hand-written double-pendulum RHS (bench/anchor_numpy.py, seed 002 §23.8): "
              f"{npy['rhs_us']:.2f} µs a call; lagsim's n = 2 RHS: {_f(o2.get('rhs_us'))} µs "
              f"(lagsim / hand-written = "
              f"{_ratio(o2.get('rhs_us'), npy['rhs_us']) if o2 else '—'})."]

    nat = results["natural"]
    lines += ["", "## 2. Chain in natural coordinates", ""]
    if nat.get("missing"):
        lines += [f"lagsim part not available yet: {nat['missing']}"]
    else:
        lines += ["| n | formulation | RHS none [µs] | simulate none [s] | RHS projection [µs] | "
                  "simulate projection [s] | projection / none | max abs φ at 10 s none / "
                  "projection | energy error none / projection |",
                  "|" + "---|" * 9]
        for row in nat["rows"]:
            none, proj = row["stabilizers"]["none"], row["stabilizers"]["projection"]
            lines.append(
                f"| {row['n']} | {row['formulation']} | {_f(none['rhs_us'])} | "
                f"{_f(none['simulate_s'])} | {_f(proj['rhs_us'])} | {_f(proj['simulate_s'])} | "
                f"{proj['simulate_s'] / none['simulate_s']:.2f}× | "
                f"{_f(none.get('constraint_error'), '.1e')} / "
                f"{_f(proj.get('constraint_error'), '.1e')} | "
                f"{_f(none['energy_error'], '.1e')} / {_f(proj['energy_error'], '.1e')} |")

    lines += ["", "## 3. Cold start (whole process)", "",
              f"Median of {COLD_REPS} runs after a warm-up; the three commands take turns. The "
              "compiled-model cache starts empty and an untimed probe run of each command fills "
              "it, as a user's first run does.", "",
              "| command | median [s] | first run [s] | / bare import |", "|---|---|---|---|"]
    cold = results["cold"]
    bare = next(iter(cold.values())).get("median_s")
    for label, row in cold.items():
        if "missing" in row:
            lines.append(f"| `{label}` | not available: {row['missing']} | | |")
        else:
            ratio = f"{row['median_s'] / bare:.2f}" if bare else "—"
            lines.append(f"| `{label}` | {row['median_s']:.3f} | {_f(row['first_s'], '.3f')} |"
                         f" {ratio} |")

    wp = results["precision"]
    lines += ["", "## 4. Work–precision", "",
              f"Pendulum released at rest from θ0 = π/2 (horizontal), {wp['t_end']:g} s, DOP853, "
              "rtol = atol; error = distance of the final bob position from the exact solution "
              "(Jacobi elliptic functions, tests/reference/exact.py); median of "
              f"{results['wp_reps']} runs per point. Plot: "
              "[work_precision.png](work_precision.png).", ""]
    if wp.get("missing"):
        lines += [f"lagsim part not available yet: {wp['missing']}", ""]
    for label, why in wp.get("missing_series", {}).items():
        lines.append(f"- {label}: not available ({why})")
    tols = sorted({p["tol"] for pts in wp["series"].values() for p in pts}, reverse=True)
    lines += ["", "| series | " + " | ".join(f"{t:.0e}" for t in tols) + " |",
              "|---|" + "---|" * len(tols)]
    for label, points in wp["series"].items():
        by_tol = {p["tol"]: p for p in points}
        cells = [f"{by_tol[t]['error']:.1e} in {by_tol[t]['time_s']:.3f} s" if t in by_tol
                 else "—" for t in tols]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    if results.get("params"):
        lines += ["", "## 6. Parameters as inputs of the compiled code (issue 8 §1, "
                  "bench/params.py)", "", *params.report(results["params"])]
    lines += ["", "## Targets (issue 5)", ""] + targets(results)
    if results.get("profiles"):
        lines += render_profiles(results["profiles"])

    return "\n".join(lines) + "\n"


def targets(results: dict[str, Any]) -> list[str]:
    """One line per target of issue 5: the measured figure and whether it is met."""
    chain = results["chain"]
    anchors = {r["n"]: r for r in chain["anchor"]}
    ours = {r["n"]: r for r in chain["lagsim"]}
    out = []

    def line(text: str, value: float | None, ok: bool | None) -> None:
        mark = "not measured" if value is None else ("met" if ok else "**not met**")
        out.append(f"- {text}: {mark}")

    a8, o8 = anchors.get(8), ours.get(8)
    s8 = o8["stabilizers"]["none"] if o8 else {}
    if a8 and o8:
        r = (a8["forming_s"] + a8["lambdify_s"]) / o8["build_s"]
        line(f"build at n = 8 ≥ 100× faster than forming + lambdify ({r:.0f}×)", r, r >= 100)
    else:
        line("build at n = 8 ≥ 100× faster than forming + lambdify", None, None)
    o24 = ours.get(24)
    line(f"build at n = 24 ≤ 1.5 s ({_f(o24['build_s'] if o24 else None)} s)",
         o24["build_s"] if o24 else None, bool(o24 and o24["build_s"] <= 1.5))
    k = growth_exponent(list(ours.values())) if ours else float("nan")
    line(f"build growth exponent ≤ 3 ({k:.2f})", None if math.isnan(k) else k, k <= 3)
    for key, factor, label in (("rhs_us", 30, "RHS"), ("simulate_s", 10, "simulate")):
        if a8 and s8.get(key):
            r = a8[key] / s8[key]
            line(f"{label} at n = 8 ≥ {factor}× faster than the anchor ({r:.1f}×)", r, r >= factor)
        else:
            line(f"{label} at n = 8 ≥ {factor}× faster than the anchor", None, None)
    o2 = ours.get(2, {}).get("stabilizers", {}).get("none", {})
    if o2.get("rhs_us"):
        r = o2["rhs_us"] / chain["numpy"]["rhs_us"]
        line(f"RHS at n = 2 within 3× of the hand-written numpy ({r:.1f}×)", r, r <= 3)
    else:
        line("RHS at n = 2 within 3× of the hand-written numpy", None, None)
    over = [(n, o["stabilizers"]["none"].get("overhead_fraction")) for n, o in ours.items()]
    over = [(n, f) for n, f in over if f is not None]
    if over:
        worst = max(over, key=lambda p: p[1])
        line(f"integrator overhead reported; largest {worst[1]:.0%} at n = {worst[0]} "
             "(cut where over half)", worst[1], worst[1] <= 0.5)
    nat8 = [r for r in results["natural"].get("rows", []) if r["n"] == 8]
    for row in nat8:
        none, proj = row["stabilizers"]["none"], row["stabilizers"]["projection"]
        if proj.get("simulate_s") and none.get("simulate_s"):
            r = proj["simulate_s"] / none["simulate_s"]
            line(f"projection ≤ 2× of none at n = 8, {row['formulation']} ({r:.2f}×)", r, r <= 2)
        else:
            line(f"projection ≤ 2× of none at n = 8, {row['formulation']}", None, None)
    cold = results["cold"]
    bare = cold.get("python -c 'import numpy, scipy.integrate'", {}).get("median_s")
    sim = cold.get("lagsim simulate pendulum --t-end 10 -o /tmp/p.csv", {}).get("median_s")
    if bare and sim:
        line(f"cold start of `lagsim simulate pendulum` ≤ 1.5× the bare import "
             f"({sim / bare:.2f}×)", sim / bare, sim / bare <= 1.5)
    else:
        line("cold start of `lagsim simulate pendulum` ≤ 1.5× the bare import", None, None)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n up to 4, 3 repetitions")
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--only", default="chain,natural,cold,precision,profile,params,derive",
                        help="comma-separated workloads to run (for development)")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    only = set(args.only.split(","))
    start = time.perf_counter()
    results: dict[str, Any] = {"quick": args.quick, "reps": cfg["reps"],
                               "wp_reps": cfg["wp_reps"], "machine": machine()}
    with tempfile.TemporaryDirectory(prefix="lagsim-bench-") as tmp:
        folder = Path(tmp)
        os.environ["LAGSIM_CACHE"] = str(folder / "cache")
        empty_chain = {"anchor": [], "lagsim": [], "numpy": anchor_numpy.measure()}
        results["chain"] = workload_chain(cfg, folder) if "chain" in only else empty_chain
        results["natural"] = (workload_natural(cfg, folder) if "natural" in only
                              else {"missing": "skipped (--only)", "rows": []})
        results["cold"] = workload_cold_start(cfg) if "cold" in only else {
            "python -c 'import numpy, scipy.integrate'": {"missing": "skipped (--only)"}}
        results["precision"] = (workload_precision(cfg, folder) if "precision" in only
                                else {"t_end": cfg["wp_t_end"], "series": {},
                                      "missing": "skipped (--only)"})
        if "profile" in only:
            results["profiles"] = workload_profiles(folder)
        if "params" in only:
            results["params"] = params.measure(reps=cfg["reps"] * 3)
        if "derive" in only:
            results["derive"] = derive_time.measure(args.quick)
    results["wall_s"] = time.perf_counter() - start
    if hasattr(os, "getloadavg"):
        results["machine"]["load average at end (1, 5, 15 min)"] = ", ".join(
            f"{x:.2f}" for x in os.getloadavg())
    if results["precision"]["series"]:
        plot_work_precision(results["precision"], args.output.parent / "work_precision.png")
    derive = derive_time.render(results["derive"]) if "derive" in results else []
    old = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
    args.output.write_text(goals.keep_block(old, render(results) + "\n".join(["", *derive])),
                           encoding="utf-8")
    (args.output.parent / "results.json").write_text(
        json.dumps(results, indent=1, default=str), encoding="utf-8")
    log(f"wrote {args.output} ({results['wall_s'] / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
