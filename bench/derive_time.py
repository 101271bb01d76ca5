"""Whole-process time of `lagsim derive` per form and format against the 1 s budget.

Issue 8 §5 and issue 16 §4: derive of any system with n ≤ 8 prints every form in every format
in at most 1 s, measured as a user runs it (`time lagsim derive FILE --form X`). Systems: issue
8's messy3 (bench/derive_messy3.yaml), issue 16's mass with the constraint v − 0.21
(bench/derive_uk2.yaml), the 8-chain in minimal and natural coordinates (lagsim.chains) and a few
bundled systems.

    .venv/bin/python bench/derive_time.py            # every form in text, all forms in latex/json
    .venv/bin/python bench/derive_time.py --quick    # one run each, fewer systems

Each command runs once as a warm-up, then ``--reps`` times; the table shows the median and the
fastest wall time and the median CPU time (user + system) of the process. The verdict against
the budget uses the fastest run: on a shared machine the median also measures the other work.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BUDGET_S = 1.0
TIMEOUT_S = 30.0
FORMS = ("lagrange", "matrix", "dae", "index1", "udwadia-kalaba", "reduced", "all")
FULL_SYSTEMS = ("messy3", "uk2", "chain8", "chain8-natural", "pendulum", "double_pendulum",
                "spring_pendulum", "slider_crank")
QUICK_SYSTEMS = ("messy3", "uk2", "chain8", "chain8-natural")


def _lagsim() -> list[str]:
    bindir = Path(sys.executable).parent
    return [str(bindir / "lagsim")] if (bindir / "lagsim").exists() else [
        sys.executable, "-m", "lagsim"]


def system_files(names: tuple[str, ...], folder: Path) -> dict[str, str]:
    """The FILE argument of each system: bench YAML, a generated chain or a bundled name."""
    out = {}
    for name in names:
        if name in ("messy3", "uk2"):
            out[name] = str(HERE / f"derive_{name}.yaml")
        elif name.startswith("chain8"):
            path = folder / f"{name}.yaml"
            extra = ["--natural"] if name.endswith("natural") else []
            subprocess.run([sys.executable, "-m", "lagsim.chains", "8", *extra, "-o", str(path)],
                           check=True, capture_output=True)
            out[name] = str(path)
        else:
            out[name] = name
    return out


def run_once(cmd: list[str]) -> tuple[float, float, int | str]:
    """(wall s, CPU s of the child, exit status or "timeout") of one process, stopped after
    :data:`TIMEOUT_S`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        status: int | str = subprocess.run(cmd, capture_output=True, check=False,
                                           timeout=TIMEOUT_S).returncode
    except subprocess.TimeoutExpired:
        status = "timeout"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, status


def measure(quick: bool = False, reps: int = 3) -> dict[str, Any]:
    """Median wall and CPU seconds of `lagsim derive FILE --form F --format X` per case."""
    systems = QUICK_SYSTEMS if quick else FULL_SYSTEMS
    reps = 1 if quick else reps
    rows = []
    with tempfile.TemporaryDirectory(prefix="lagsim-derive-") as tmp:
        os.environ.setdefault("LAGSIM_CACHE", str(Path(tmp) / "cache"))
        files = system_files(systems, Path(tmp))
        cases = [(s, f, "text") for s in systems for f in FORMS]
        cases += [(s, "all", fmt) for s in systems for fmt in ("latex", "json")]
        for system, form, fmt in cases:
            cmd = [*_lagsim(), "derive", files[system], "--form", form, "--format", fmt]
            warm = None if quick else run_once(cmd)
            runs = [warm] if warm and warm[2] == "timeout" else [
                run_once(cmd) for _ in range(reps)]
            row = {"system": system, "form": form, "format": fmt,
                   "wall_s": statistics.median(r[0] for r in runs),
                   "min_wall_s": min(r[0] for r in runs),
                   "cpu_s": statistics.median(r[1] for r in runs),
                   "exit": runs[-1][2], "reps": reps}
            rows.append(row)
            print(f"[{time.strftime('%H:%M:%S')}] derive {system} --form {form} --format {fmt}: "
                  f"{row['wall_s']:.2f} s wall, {row['cpu_s']:.2f} s CPU, exit {row['exit']}",
                  file=sys.stderr, flush=True)
    return {"budget_s": BUDGET_S, "reps": reps, "warmup": not quick, "rows": rows}


def render(result: dict[str, Any]) -> list[str]:
    """A markdown section: one row per case, with the verdict against the budget."""
    budget = result["budget_s"]
    rows = result["rows"]
    over = [r for r in rows
            if r["exit"] == "timeout" or r["exit"] == 0 and r["min_wall_s"] > budget]
    lines = ["## `lagsim derive` whole-process time (issue 8 §5, issue 16 §4)", "",
             f"Median of {result['reps']} runs"
             + (" (after a warm-up run)" if result.get("warmup") else "")
             + f" of `lagsim derive FILE --form F --format X`; budget {budget:g} s for n ≤ 8. "
             "Exit 2 is a form that does "
             "not apply (reduced with a velocity constraint); timeout is a run stopped after "
             f"{TIMEOUT_S:g} s. CPU = user + system time of the process (median). The verdict "
             "uses the fastest run: on a machine shared with other work the median also "
             "measures the others.", "",
             "| system | form | format | wall s (median) | wall s (min) | CPU s | exit | ≤ 1 s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = "**no**" if r in over else "yes" if r["exit"] == 0 else "–"
        lines.append(f"| {r['system']} | {r['form']} | {r['format']} | {r['wall_s']:.2f} | "
                     f"{r['min_wall_s']:.2f} | {r['cpu_s']:.2f} | {r['exit']} | {verdict} |")
    lines += ["", f"{len(over)} of {len(rows)} cases over the budget (fastest run)."
              + (" Over: " + ", ".join(f"{r['system']} {r['form']} {r['format']}"
                                       for r in over) if over else ""), ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one run each, fewer systems")
    parser.add_argument("--reps", type=int, default=3, help="timed runs per case")
    args = parser.parse_args(argv)
    print("\n".join(render(measure(args.quick, args.reps))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
