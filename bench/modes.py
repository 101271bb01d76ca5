"""Whole-process time of `lagsim equilibria` and `lagsim modes` of every bundled system against
the 1 s budget (issue 10, "Done when").

    .venv/bin/python bench/modes.py              # 3 runs each after a warm-up
    .venv/bin/python bench/modes.py --reps 5

Measured as a user runs it (`time lagsim modes NAME`); the table shows the fastest and median
wall time and the median CPU time (user + system) of the process, and the exit status (2: the
system has no equilibria, e.g. a driven one, which the command says in one line). In the same
run, `lagsim --version` (the interpreter and lagsim's start) and `lagsim derive pendulum` (the
same imports of symengine) are measured as anchors, so the ratio to them can be read on a
loaded machine. The verdict uses the CPU time of the process: on a shared machine the wall time
also measures the other sessions' work (the load average is printed). Results are written to
bench/modes_results.md.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUDGET_S = 1.0
COMMANDS = ("equilibria", "modes")


def _lagsim() -> list[str]:
    bindir = Path(sys.executable).parent
    return [str(bindir / "lagsim")] if (bindir / "lagsim").exists() else [
        sys.executable, "-m", "lagsim"]


def _once(args: list[str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, timeout=60)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    from lagsim.spec.system import bundled_systems

    rows = []
    anchors = []
    for label, extra in (("lagsim --version", ["--version"]),
                         ("lagsim derive pendulum", ["derive", "pendulum"])):
        argv = [*_lagsim(), *extra]
        _once(argv)
        runs = [_once(argv) for _ in range(args.reps)]
        anchors.append((label, min(w for w, _, _ in runs),
                        statistics.median(c for _, c, _ in runs)))
    for name in bundled_systems():
        for command in COMMANDS:
            argv = [*_lagsim(), command, name]
            _once(argv)
            runs = [_once(argv) for _ in range(args.reps)]
            walls = [w for w, _, _ in runs]
            cpus = [c for _, c, _ in runs]
            rows.append((name, command, min(walls), statistics.median(walls),
                         statistics.median(cpus), runs[-1][2]))
            print(f"{name:24s} {command:10s} min {min(walls):.2f} s  median "
                  f"{statistics.median(walls):.2f} s  cpu {statistics.median(cpus):.2f} s  "
                  f"exit {runs[-1][2]}", flush=True)
    over = [r for r in rows if r[4] > BUDGET_S]
    import os

    load = os.getloadavg()[0]
    lines = ["# `lagsim equilibria` / `lagsim modes`: whole-process time per bundled system", "",
             f"Budget {BUDGET_S:g} s (issue 10), judged on the process's CPU time. "
             f"{args.reps} runs after a warm-up; min and median wall, median CPU (user + "
             "system). Exit 2: no equilibria (not autonomous, or none found), said in one line. "
             f"Load average during the run: {load:.1f} on {os.cpu_count()} cores.", "",
             "| anchor | min wall (s) | median CPU (s) |", "| --- | ---: | ---: |",
             *(f"| {label} | {w:.2f} | {c:.2f} |" for label, w, c in anchors), "",
             "| system | command | min wall (s) | median wall (s) | median CPU (s) | exit |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {n} | {c} | {w:.2f} | {m:.2f} | {cpu:.2f} | {code} |"
              for n, c, w, m, cpu, code in rows]
    lines += ["", f"Over budget (CPU): {', '.join(f'{n} {c}' for n, c, *_ in over)}"
              if over else "All within budget (CPU time of the process)."]
    (HERE / "modes_results.md").write_text("\n".join(lines).rstrip() + "\n")


if __name__ == "__main__":
    main()
