"""What starting ``lagsim sweep``'s worker processes costs (issue 31,
:data:`lagsim.sweep.core.POOL_START_SECONDS`), beside the same runs in this process.

The pendulum, 0.1 s per run, ``--runs`` runs after run 0 (done and timed in this process first,
compiling the model, as :func:`lagsim.sweep.core.execute` does): their wall time in this process,
then on pools of 1 and 2 spawned workers (their start, imports and model load included), each
``--reps`` times, the fastest kept. A pool's excess over this process is what it costs before
its first row; the constant should be no more than the smallest excess measured, so that a
sweep kept in this process is one no pool could have finished sooner. The load average is read
before and after (on a shared machine, read the ratios).

    .venv/bin/python bench/pool_start.py
"""

from __future__ import annotations

import argparse
import os
import time

from lagsim.spec.system import read_source
from lagsim.sweep import core as sw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    text, label, stem = read_source("pendulum")
    count = args.runs + 1
    plan = sw.plan([sw.grid_axis(f"theta=0.1:1:{count}")], ("g", "l", "m"), ("theta",))
    job = sw.Job(text, label, stem, {"t_end": "0.1"}, {}, {}, plan.names, runs=count).keyed()
    first = sw.run_one(job, 0, plan.values[0])
    rest = list(range(1, count))
    one_run = sw.run_one(job, 1, plan.values[1]).seconds

    def best(engine: str, workers: int) -> float:
        times = []
        for _ in range(args.reps):
            parts = sw.chunks(rest, plan.values, one_run, workers)
            start = time.perf_counter()
            if engine == sw.IN_PROCESS:
                for part in parts:
                    sw.run_chunk(job, part)
            else:
                list(sw._processes(job, parts, workers))  # noqa: SLF001 - the pool itself
            times.append(time.perf_counter() - start)
        return min(times)

    here = best(sw.IN_PROCESS, 1)
    pools = {w: best(sw.POOL, w) for w in (1, 2)}
    print("# The cost of starting the sweep's worker processes (bench/pool_start.py)\n")
    print(f"pendulum, 0.1 s per run, {args.runs} runs after run 0 (run 0 took {first.seconds:.3f}"
          f" s with the model's compile or load and this process's imports, run 1 "
          f"{one_run * 1e3:.2f} ms); fastest of {args.reps}; {os.cpu_count()} cores, load "
          f"average (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after.\n")
    print("| way | wall s | excess over this process, s |")
    print("| --- | ---: | ---: |")
    print(f"| this process | {here:.4f} | 0 |")
    for workers, wall in pools.items():
        print(f"| pool of {workers} spawned worker(s) | {wall:.3f} | {wall - here:.3f} |")
    print(f"\nPOOL_START_SECONDS = {sw.POOL_START_SECONDS:g} s; smallest excess measured "
          f"{min(pools.values()) - here:.3f} s.")


if __name__ == "__main__":
    main()
