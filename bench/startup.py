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
turns with the others. ``--instructions N`` adds a third figure that a loaded machine does not
disturb: the instructions each process executes in user space (valgrind's callgrind, "Collected"),
the median of N runs with ``PYTHONHASHSEED`` 1..N (the hash seed moves it by a few per cent); it
counts neither the kernel's work (page faults, file reads) nor waiting, and the spinning of
OpenBLAS's threads at ``import numpy`` only as valgrind serialises them. ``python -X importtime -m
lagsim simulate pendulum`` shows what a run imports.

    .venv/bin/python bench/startup.py [--reps 10] [--before DIR] [--instructions 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ratios

PYTHON = sys.executable


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
if ENV.get("PYTHONPATH"):
    ENV["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve())
                                        for p in ENV["PYTHONPATH"].split(os.pathsep))


def imported_from(env: dict[str, str], cwd: str) -> Path:
    """The folder of the lagsim package a child with ``env`` in ``cwd`` imports. The children
    run in a folder of their own: ``python -m lagsim`` puts the working folder first on
    ``sys.path``, so run in a checkout every child would import that checkout's lagsim, the
    ``--before`` ones too."""
    done = subprocess.run([PYTHON, "-c", "import lagsim; print(lagsim.__file__)"], env=env,
                          cwd=cwd, capture_output=True, text=True, check=True)
    return Path(done.stdout.strip()).parent


def run_once(command: list[str], env: dict[str, str] | None, cwd: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run of ``command`` in ``cwd``."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=env or ENV, cwd=cwd)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def instructions(command: list[str], env: dict[str, str], cwd: str, seed: int) -> int:
    """The user-space instructions ``command`` executes in ``cwd`` (valgrind's callgrind), with
    ``PYTHONHASHSEED`` = ``seed``."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *command], capture_output=True, text=True, cwd=cwd,
                          env={**env, "PYTHONHASHSEED": str(seed)}, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from valgrind: {done.stderr[-300:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10, help="runs of each process (default 10)")
    parser.add_argument("--before", type=Path, default=None,
                        help="also run lagsim from this checkout (PYTHONPATH=DIR)")
    parser.add_argument("--instructions", type=int, default=0, metavar="N",
                        help="also count instructions under valgrind, median of N hash seeds")
    ratios.add_option(parser)
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
        after_from = imported_from(ENV, folder)
        print("# Start-up (issue 31)")
        print()
        print(f"lagsim from {after_from}")
        if args.before is not None:
            before_from = imported_from(before, folder)
            if before_from == after_from:
                raise SystemExit(f"--before {args.before} imports the same lagsim, {after_from}")
            print(f"lagsim (before) from {before_from}")
        for name, command in commands.items():  # the compile cache warm, the bytecode written
            run_once(command, envs.get(name), folder)
        best = {name: [float("inf"), float("inf")] for name in commands}
        print()
        print(f"fastest of {args.reps} runs each, in turns; {load()}")
        print()
        for _ in range(args.reps):
            for name, command in commands.items():
                wall, cpu = run_once(command, envs.get(name), folder)
                best[name][0] = min(best[name][0], wall)
                best[name][1] = min(best[name][1], cpu)
        counted = {name: statistics.median(instructions(command, envs.get(name, ENV), folder,
                                                        seed)
                                           for seed in range(1, args.instructions + 1))
                   for name, command in commands.items()} if args.instructions else {}
    extra = " instructions (M) |" if counted else ""
    print("| process | wall ms | CPU ms |" + extra)
    print("|---|---|---|" + "---|" * bool(counted))
    for name, (wall, cpu) in best.items():
        count = f" {counted[name] / 1e6:.0f} |" if counted else ""
        print(f"| `{name}` | {wall * 1e3:.0f} | {cpu * 1e3:.0f} |{count}")
    print()
    print("| ratio | wall | CPU |" + extra.replace(" (M)", "") + " goal |")
    print("|---|---|---|---|" + "---|" * bool(counted))
    pairs = [("lagsim simulate pendulum", "python -c 'import numpy, scipy'", "1.5"),
             ("lagsim --help", "python -c 'import click'", "1.2")]
    if args.before is not None:
        pairs += [(f"{a} (before)", b, goal) for a, b, goal in pairs]
    for a, b, goal in pairs:
        count = f" {counted[a] / counted[b]:.2f} |" if counted else ""
        ratios.record(f"{a} / {b} wall", best[a][0] / best[b][0])
        ratios.record(f"{a} / {b} cpu", best[a][1] / best[b][1])
        if counted:
            ratios.record(f"{a} / {b} instructions", counted[a] / counted[b])
        print(f"| `{a}` / `{b}` | {best[a][0] / best[b][0]:.2f} | {best[a][1] / best[b][1]:.2f} "
              f"|{count} ≤ {goal} |")
    print()
    print(f"after: {load()}")
    ratios.write(args.json)


if __name__ == "__main__":
    main()
