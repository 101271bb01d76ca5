"""Every benchmark in one go (``make bench``): each bench in its own process, one after another.

    .venv/bin/python bench/all.py                     # full run (make bench), about 1 h on 2 cores
    .venv/bin/python bench/all.py --quick             # smoke run: each bench's short form
    .venv/bin/python bench/all.py --only modes,stiff  # some of them

Each bench writes its results file (see :data:`BENCHES`; a bench that only prints has its
standard output written, as printed, to ``bench/<name>_results.md`` under the command and the
load average). A bench that fails is reported and the others still run; the exit status is 1 when
any failed. A bench whose optional peers (``pip install -e '.[bench]'``) are all missing is skipped
with one line saying so. ``params.py`` and ``derive_time.py`` run inside ``run.py`` (their tables
are in ``RESULTS.md``). The summary at the end gives each bench's status, wall time, load average
before and after, and results file: on a shared machine, read the ratios measured side by side
inside each bench rather than its absolute times.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass(frozen=True)
class Bench:
    """One bench script: its arguments for the full and the quick run, the files it writes
    itself, whether its standard output is the results (then written to
    ``bench/<name>_results.md``), and the optional modules of which at least one must be
    installed for it to run."""

    name: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ("--quick",)
    writes: tuple[str, ...] = ()
    prints: bool = True
    needs: tuple[str, ...] = ()

    def printed(self) -> Path:
        return HERE / f"{self.name}_results.md"

    def results(self) -> tuple[Path, ...]:
        return (*((self.printed(),) if self.prints else ()), *(ROOT / w for w in self.writes))


BENCHES = (
    Bench("run", writes=("bench/RESULTS.md", "bench/results.json", "bench/work_precision.png"),
          prints=False),
    Bench("constrained", writes=("bench/constrained_results.md",
                                 "bench/work_precision_a01.png"), prints=False),
    Bench("symplectic", writes=("docs/img/symplectic_energy.png",)),
    Bench("peers", quick=("--sizes", "2", "8", "--reps", "2"), needs=("pinocchio", "mujoco")),
    Bench("warm", quick=("--sizes", "8", "--reps", "1")),
    Bench("stiff", quick=("--span", "0.05")),
    Bench("sweep", quick=("--runs", "100", "--shell-runs", "2", "--machinery-runs", "20",
                                "--cluster", "200"),
          writes=("bench/sweep_results.md",), prints=False),
    Bench("analysis", full=("-o", "bench/analysis_results.md"),
          quick=("--quick", "-o", "bench/analysis_results.md"),
          writes=("bench/analysis_results.md",), prints=False),
    Bench("modes", quick=("--reps", "1"), writes=("bench/modes_results.md",), prints=False),
    Bench("architecture", full=("--mypy",), quick=()),
    Bench("rigid_bodies"),
    Bench("export", quick=("--reps", "1")),
    Bench("fixed_cost"),
    Bench("build"),
    Bench("impacts", writes=("bench/impacts_results.md",), prints=False),
    Bench("lyapunov"),
    Bench("sensitivity"),
    Bench("fit_coverage"),
    Bench("pool_start", quick=("--reps", "1")),
)
"""Every bench, in the order they run (the issue-5 benchmark first)."""


@dataclass(frozen=True)
class Outcome:
    """How one bench went: ``ok``, ``failed (exit N)`` or ``skipped: why``; its wall time, the
    1-minute load average before and after it, and its results files."""

    name: str
    status: str
    seconds: float
    load: tuple[float, float]
    results: tuple[Path, ...]


def missing_peers(bench: Bench) -> str | None:
    """Why ``bench`` cannot run: none of its optional modules is installed (None when it can)."""
    if not bench.needs or any(importlib.util.find_spec(m) for m in bench.needs):
        return None
    return (f"{' and '.join(bench.needs)} not installed; "
            "pip install -e '.[bench]' to measure them")


def run(bench: Bench, quick: bool) -> Outcome:
    """Run one bench, its output shown as it comes; a bench that only prints has that output
    written to its results file."""
    args = bench.quick if quick else bench.full
    command = [sys.executable, str(HERE / f"{bench.name}.py"), *args]
    shown = shlex.join(["python", f"bench/{bench.name}.py", *args])
    print(f"\n=== {shown}", flush=True)
    before = os.getloadavg()[0]
    start = time.perf_counter()
    lines: list[str] = []
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            lines.append(line)
    seconds = time.perf_counter() - start
    load = (before, os.getloadavg()[0])
    status = "ok" if process.returncode == 0 else f"failed (exit {process.returncode})"
    if bench.prints and process.returncode == 0:
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        head = (f"# `{shown}`\n\nMeasured {stamp}, {seconds:.0f} s, load average "
                f"{load[0]:.1f} before and {load[1]:.1f} after ({os.cpu_count()} cores).\n\n")
        bench.printed().write_text(f"{head}```text\n{''.join(lines)}```\n", encoding="utf-8")
    return Outcome(bench.name, status, seconds, load, bench.results())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="each bench's short form (a smoke run; the figures are rough)")
    parser.add_argument("--only", help="comma-separated benches to run: "
                        + ", ".join(b.name for b in BENCHES))
    args = parser.parse_args(argv)
    chosen = BENCHES
    if args.only:
        names = args.only.split(",")
        unknown = sorted(set(names) - {b.name for b in BENCHES})
        if unknown:
            parser.error(f"no bench {', '.join(unknown)}; the benches are "
                         + ", ".join(b.name for b in BENCHES))
        chosen = tuple(b for b in BENCHES if b.name in names)
    outcomes = []
    for bench in chosen:
        why = missing_peers(bench)
        if why is not None:
            print(f"\n=== bench/{bench.name}.py skipped: {why}", flush=True)
            outcomes.append(Outcome(bench.name, f"skipped: {why}", 0.0, (0.0, 0.0), ()))
            continue
        outcomes.append(run(bench, args.quick))
    print("\n| bench | status | wall s | load before / after | results |")
    print("|---|---|---:|---|---|")
    for o in outcomes:
        files = ", ".join(str(p.relative_to(ROOT)) for p in o.results)
        load = f"{o.load[0]:.1f} / {o.load[1]:.1f}" if o.results else ""
        print(f"| {o.name} | {o.status} | {o.seconds:.0f} | {load} | {files} |")
    if args.quick:
        written = " ".join(str(p.relative_to(ROOT)) for o in outcomes for p in o.results
                           if p.exists())
        print(f"\nThe quick run's rough figures are now in: {written}\n"
              "Restore the committed results with git checkout -- FILE (and remove the "
              "files git does not track) before committing.")
    return 1 if any(o.status.startswith("failed") for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
