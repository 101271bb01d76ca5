"""Start-up (issue 31, "Start-up"): whole processes side by side in one run, with ratios.

- ``lagsim simulate pendulum`` with a warm compile cache (one untimed run first) against
  ``python -c 'import numpy, scipy'`` (goal: ≤ 1.5×);
- ``lagsim --help`` against ``python -c 'import click'`` (goal: ≤ 1.2×).

The processes run in turns, ``--reps`` times each; the figure of each is its fastest run, on two
clocks: wall time, and the child's CPU time (user + system, from ``os.wait4``), which a machine
loaded by other processes disturbs less. Both ratios are printed with the load average; speed
is never asserted in tests. The children run without ``PYTHONDONTWRITEBYTECODE``, so that the
untimed first runs leave the bytecode an installed package has (without it each run compiles
every module of lagsim from source, 0.6 s). ``--before DIR`` adds the same two lagsim
processes run from another checkout's ``DIR`` (a ``git archive`` of an earlier commit), taking
turns with the others. ``python -X importtime -m lagsim simulate pendulum`` shows what a run
imports.

    .venv/bin/python bench/startup.py [--reps 10] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_once(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run of ``command``."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=env or ENV)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10, help="runs of each process (default 10)")
    parser.add_argument("--before", type=Path, default=None,
                        help="also run lagsim from this checkout (PYTHONPATH=DIR)")
    args = parser.parse_args()
    envs: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="lagsim-startup-") as folder:
        out = str(Path(folder) / "pendulum.csv")
        commands = {
            "lagsim simulate pendulum": [PYTHON, "-m", "lagsim", "simulate", "pendulum", "-o",
                                         out, "--force"],
            "python -c 'import numpy, scipy'": [PYTHON, "-c", "import numpy, scipy"],
            "lagsim --help": [PYTHON, "-m", "lagsim", "--help"],
            "python -c 'import click'": [PYTHON, "-c", "import click"],
        }
        if args.before is not None:
            before = {**ENV, "PYTHONPATH": str(args.before.resolve())}
            for name in ("lagsim simulate pendulum", "lagsim --help"):
                envs[f"{name} (before)"] = before
                commands[f"{name} (before)"] = commands[name]
        for name, command in commands.items():  # the compile cache warm, the bytecode written
            run_once(command, envs.get(name))
        best = {name: [float("inf"), float("inf")] for name in commands}
        print("# Start-up (issue 31)")
        print()
        print(f"fastest of {args.reps} runs each, in turns; {load()}")
        print()
        for _ in range(args.reps):
            for name, command in commands.items():
                wall, cpu = run_once(command, envs.get(name))
                best[name][0] = min(best[name][0], wall)
                best[name][1] = min(best[name][1], cpu)
    print("| process | wall ms | CPU ms |")
    print("|---|---|---|")
    for name, (wall, cpu) in best.items():
        print(f"| `{name}` | {wall * 1e3:.0f} | {cpu * 1e3:.0f} |")
    print()
    print("| ratio | wall | CPU | goal |")
    print("|---|---|---|---|")
    pairs = [("lagsim simulate pendulum", "python -c 'import numpy, scipy'", "1.5"),
             ("lagsim --help", "python -c 'import click'", "1.2")]
    if args.before is not None:
        pairs += [(f"{a} (before)", b, goal) for a, b, goal in pairs]
    for a, b, goal in pairs:
        print(f"| `{a}` / `{b}` | {best[a][0] / best[b][0]:.2f} | {best[a][1] / best[b][1]:.2f} "
              f"| ≤ {goal} |")
    print()
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
