"""Parameters as inputs of the compiled code (issue 8 §1), measured on the 8-chain.

    .venv/bin/python bench/params.py [--n 8] [--values 20] [--reps 15] [--json]

(a) 20 ``--set`` values, each run as the CLI does it in one process (``load_spec`` with the
override → ``build_model`` → ``compile_model`` → ``simulate``) from an empty compile cache: the
number of compilations of the model (C compiler runs counted on
``lagsim.numeric.ccompile._compile``,
LLVM builds on ``lagsim.numeric.compile._llvm_code``; 1 is the goal) and the wall time of each run.

(b) The cost of a run with the parameters as inputs against the same run with the parameters
built into the code (the model's expressions with the numbers substituted before compiling, as
lagsim did before issue 8): ``reps`` timings of each, taken in turns in the same process (a
timing is the mean of :data:`BATCH` runs), 10 s, DOP853, rtol = atol = 1e-10, final sample only;
the same for a whole run as the CLI makes it (load, build, compile, simulate) and for one
right-hand-side call. The goal is a ratio of at most 1.2; the headline ratio is that of the
minima, the figure least disturbed by other work on a shared machine; medians are shown too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from lagsim.numeric import ccompile  # noqa: E402
from lagsim.numeric import compile as compiling  # noqa: E402
from lagsim.run.integrate import SimulateOptions, simulate  # noqa: E402
from lagsim.spec.chains import chain_yaml  # noqa: E402
from lagsim.spec.system import load_spec  # noqa: E402
from lagsim.symbolic.model import Model, build_model  # noqa: E402

BATCH = 5
"""Runs per timing (their mean); the ratio's headline is that of the minima over the
repetitions, the figure least disturbed by other work on a shared machine."""


def built_in(model: Model) -> Model:
    """``model`` with its parameter values substituted into every expression and no
    parameters left: what compile_model compiled before parameters became inputs."""
    subs = model.substitutions()

    def sub(e: Any) -> Any:
        return e.subs(subs)

    constraints = tuple(replace(c, expression=sub(c.expression), row=tuple(map(sub, c.row)),
                                offset=sub(c.offset), velocity_form=sub(c.velocity_form),
                                rhs=sub(c.rhs)) for c in model.constraints)
    positions = tuple((name, tuple(map(sub, p))) for name, p in model.mass_positions)
    return replace(model, parameters={}, param_symbols=(), kinetic=sub(model.kinetic),
                   potential=sub(model.potential), lagrangian=sub(model.lagrangian),
                   momenta=sub(model.momenta), tau=sub(model.tau), A=sub(model.A),
                   b=sub(model.b), constraints=constraints, mass_positions=positions,
                   structure_key=None)


def measure(n: int = 8, values: int = 20, reps: int = 15) -> dict[str, Any]:
    """The figures (a) and (b) of the module docstring, as a dict."""
    before = os.environ.get("LAGSIM_CACHE")
    try:
        return _measure(n, values, reps)
    finally:
        if before is None:
            os.environ.pop("LAGSIM_CACHE", None)
        else:
            os.environ["LAGSIM_CACHE"] = before


def _measure(n: int, values: int, reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="lagsim-bench-params-") as tmp:
        os.environ["LAGSIM_CACHE"] = str(Path(tmp) / "cache")
        path = Path(tmp) / f"chain_{n}.yaml"
        path.write_text(chain_yaml(n), encoding="utf-8")
        compiling.MEMO.clear()
        compiles = [0]
        real = ccompile._compile

        def counting(cc: str, source: str, options: tuple[str, ...], work: Path) -> Path:
            compiles[0] += "lagsim_dynamics" in source
            return real(cc, source, options, work)

        def counting_llvm(*args: Any) -> Any:
            compiles[0] += 1
            return real_llvm(*args)

        real_llvm = compiling._llvm_code
        ccompile._compile = counting
        compiling._llvm_code = counting_llvm
        options = SimulateOptions(t_end=10.0, samples=2)
        lengths = np.linspace(0.5, 1.5, values)
        run_s = []
        try:
            for length in lengths:
                start = time.perf_counter()
                spec = load_spec(path, {"l": float(length)})
                model = build_model(spec)
                simulate(spec, model, options, numeric=compiling.compile_model(model))
                run_s.append(time.perf_counter() - start)
        finally:
            ccompile._compile = real
            compiling._llvm_code = real_llvm

        spec = load_spec(path, {"l": 1.3})
        model = build_model(spec)
        inputs = compiling.compile_model(model)
        fixed = compiling.compile_model(built_in(model))
        q0, qd0 = spec.initial_state()
        y0 = np.array([*q0, *qd0], dtype=float)
        ends = {}
        labels = ("inputs", "built in")
        times: dict[str, list[float]] = {k: [] for k in labels}
        whole: dict[str, list[float]] = {k: [] for k in labels}
        rhs_us: dict[str, list[float]] = {k: [] for k in labels}

        def whole_run(label: str) -> float:
            """load, build, compile (a hit), simulate: one run as the CLI makes it; the
            built-in model is looked up in the compile cache as before issue 8."""
            start = time.perf_counter()
            s = load_spec(path, {"l": 1.3})
            m = build_model(s)
            if label == "built in":
                compiling.MEMO.clear()
                m = built_in(m)
            simulate(s, m, options, numeric=compiling.compile_model(m))
            return time.perf_counter() - start

        for rep in range(reps + 1):
            for label, numeric in (("inputs", inputs), ("built in", fixed)):
                start = time.perf_counter()
                for _ in range(BATCH):
                    traj = simulate(spec, model, options, numeric=numeric)
                elapsed = (time.perf_counter() - start) / BATCH
                rhs = numeric.ode_rhs()
                calls = 20000
                t0 = time.perf_counter()
                for _ in range(calls):
                    rhs(0.0, y0)
                per_call = (time.perf_counter() - t0) / calls * 1e6
                whole_s = sum(whole_run(label) for _ in range(BATCH)) / BATCH
                if rep:
                    times[label].append(elapsed)
                    rhs_us[label].append(per_call)
                    whole[label].append(whole_s)
                ends[label] = np.concatenate((traj.q[-1], traj.qd[-1]))
    def ratio(figures: dict[str, list[float]], how: Any) -> float:
        return how(figures["inputs"]) / how(figures["built in"])

    return {
        "n": n, "values": values, "compiles": compiles[0], "backend": inputs.backend,
        "run_s_first": run_s[0], "run_s_median_rest": statistics.median(run_s[1:]),
        "simulate_s": times, "whole_run_s": whole, "rhs_us": rhs_us,
        "ratios": {name: {"median": ratio(f, statistics.median), "min": ratio(f, min)}
                   for name, f in (("simulate", times), ("whole run", whole),
                                   ("rhs", rhs_us))},
        "end_state_difference": float(np.max(np.abs(ends["inputs"] - ends["built in"]))),
        "reps": reps,
    }


def report(row: dict[str, Any]) -> list[str]:
    """Markdown lines of the figures."""
    lines = [
        f"{row['values']} `--set l=…` values on the {row['n']}-chain, one process, empty "
        f"cache: **{row['compiles']} compilation(s)** of the model (backend "
        f"{row['backend']}); first run {row['run_s_first']:.3f} s, the others "
        f"{row['run_s_median_rest']:.3f} s (median).",
        "",
        f"| {row['reps']} repetitions, in turns | parameters as inputs: median (min) | built "
        "in: median (min) | ratio of medians (of minima) |",
        "|---|---|---|---|",
    ]
    for key, label, unit, scale in (("simulate_s", "simulate 10 s", "s", 1.0),
                                    ("whole_run_s", "whole run (load, build, compile, simulate)",
                                     "s", 1.0),
                                    ("rhs_us", "one RHS call", "µs", 1.0)):
        f = row[key]
        r = row["ratios"][{"simulate_s": "simulate", "whole_run_s": "whole run",
                           "rhs_us": "rhs"}[key]]
        lines.append(
            f"| {label} [{unit}] | {statistics.median(f['inputs']) * scale:.4g} "
            f"({min(f['inputs']) * scale:.4g}) | {statistics.median(f['built in']) * scale:.4g} "
            f"({min(f['built in']) * scale:.4g}) | {r['median']:.2f} ({r['min']:.2f}) |")
    lines += ["", f"Largest difference of the end states: {row['end_state_difference']:.2g}.",
              "", *targets(row)]
    return lines


def targets(row: dict[str, Any]) -> list[str]:
    """The two targets of issue 8 §1, met or not."""
    sim, whole = row["ratios"]["simulate"]["min"], row["ratios"]["whole run"]["min"]
    once = row["compiles"] == 1
    ok = max(sim, whole) <= 1.2
    return [f"- {row['values']} `--set` values on the {row['n']}-chain compile once "
            f"({row['compiles']}): {'met' if once else '**not met**'}",
            f"- each run ≤ 1.2× a run with its parameters built in (simulate {sim:.2f}×, "
            f"whole run {whole:.2f}×, ratios of minima): {'met' if ok else '**not met**'}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--values", type=int, default=20)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args(argv)
    row = measure(args.n, args.values, args.reps)
    print(json.dumps(row, indent=1) if args.json else "\n".join(report(row)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
