"""Benchmark of ``lagsim sweep`` (issue 12, "Goals, measured in bench/").

The double pendulum (bundled ``double_pendulum``: two angles, unconstrained, DOP853 stepping
in C), 10 s per run, θ2(0) swept; three ways side by side in one run:

1. ``lagsim sweep`` as it runs by default (``lagsim.sweep.core.execute`` with no ``--scheduler``): a
   pool of ``--workers`` spawned processes reached through pipes (pool start-up included);
2. the same runs one after another in one process (``--scheduler synchronous``);
3. a shell loop of ``lagsim simulate`` (one process per run: start-up, parse, model, cache
   load), timed on ``--shell-runs`` runs and **extrapolated** to the sweep's count.

The overhead per run in the pool is ``wall × workers / runs − mean run time``, the run
time being measured inside each run (:attr:`lagsim.sweep.core.Row.seconds`): what a run costs beyond
its own work (scheduling, transfer, idle workers at the end). The load average is read before
and after, since the pool's speed-up over one process is bounded by the cores it gets. Speed is
never asserted in tests.

    .venv/bin/python bench/sweep.py --runs 10000        # the issue's figure (about an hour)
    .venv/bin/python bench/sweep.py --runs 200          # a quick look; per-run figures scale
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import ratios

from lagsim.spec.system import read_source
from lagsim.sweep import core as sw

ROOT = Path(__file__).resolve().parents[1]


def job_and_plan(runs: int, t_end: float = 10.0) -> tuple[sw.Job, sw.Plan]:
    text, label, stem = read_source("double_pendulum")
    plan = sw.Plan(("theta2",), np.linspace(1.0, 2.0, runs).reshape(runs, 1))
    job = sw.Job(text, label, stem, {"t_end": repr(t_end)}, {}, {}, plan.names,
                 runs=runs).keyed()
    return job, plan


def timed(job: sw.Job, plan: sw.Plan, scheduler: str | None, workers: int | None
          ) -> tuple[float, list[sw.Row]]:
    start = time.perf_counter()
    rows = sw.execute(job, plan, scheduler, workers)
    return time.perf_counter() - start, rows


def same_rows(a: list[sw.Row], b: list[sw.Row]) -> bool:
    """Both sweeps' rows in run order with the same numbers, digit for digit."""
    return all(x.index == y.index and list(map(repr, x.numbers)) == list(map(repr, y.numbers))
               for x, y in zip(a, b, strict=True))


def stream_figures(records: list[dict], wall: float) -> tuple[int, float, float, float]:
    """From Dask's task stream of one sweep's chunks: their count, the largest idle time of a
    worker (the sweep's wall time less the worker's compute time), the mean gap between the
    end of a worker's chunk and the start of its next (Dask's cost a task, seen by a worker),
    and the gap between the workers' last ends (how unevenly they finish)."""
    by_worker: dict[str, list[tuple[float, float]]] = {}
    for record in records:
        for part in record["startstops"]:
            if part["action"] == "compute":
                by_worker.setdefault(record["worker"], []).append((part["start"], part["stop"]))
    idle, gaps, ends = 0.0, [], []
    for spans in by_worker.values():
        spans.sort()
        idle = max(idle, wall - sum(b - a for a, b in spans))
        gaps += [b[0] - a[1] for a, b in zip(spans, spans[1:])]
        ends.append(spans[-1][1])
    return (sum(map(len, by_worker.values())), idle, float(np.mean(gaps)) if gaps else 0.0,
            max(ends) - min(ends))


def cluster(runs: int, t_end: float, workers: int, turns: int = 3) -> list[str]:
    """Issue 31's sweep figure: ``runs`` runs of ``t_end`` s on a Dask ``LocalCluster`` of
    ``workers`` single-threaded worker processes, started once before the timing with the
    model warmed on its workers (:func:`lagsim.sweep.core.warm_workers`; both timed as the
    start), against one process (``--scheduler synchronous``), in ``turns`` turns each; the
    lines of the results. Beside the wall times, figures that do not depend on the CPU share
    the machine gives (read from Dask's task stream and the processes' CPU times): the chunks,
    the workers' idle time and the gap between a worker's chunks, the bytes of rows sent back,
    and the CPU time of the client's process (client, scheduler and nannies) against the
    workers'."""
    import pickle

    from distributed import Client, LocalCluster

    job, plan = job_and_plan(runs, t_end)
    sw.run_one(job, 0, plan.values[0])
    begin = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, host="127.0.0.1") as local, Client(local) as client:
        made = time.perf_counter() - begin
        client.gather(sw.warm_workers(client, job, plan.values[0]))
        started = time.perf_counter() - begin
        client.get_task_stream()
        serial, on_cluster, figures, cpu, alone = [], [], [], [], []
        for _ in range(turns):
            ours = time.process_time()
            t, rows_serial = timed(job, plan, "synchronous", None)
            alone.append(time.process_time() - ours)
            serial.append(t)
            ours, theirs = time.process_time(), sum(client.run(time.process_time).values())
            since = time.time()
            t, rows_cluster = timed(job, plan, local.scheduler_address, None)
            cpu.append((time.process_time() - ours,
                        sum(client.run(time.process_time).values()) - theirs))
            on_cluster.append(t)
            figures.append(stream_figures([r for r in client.get_task_stream(start=since)
                                           if r["key"].startswith("run_chunk")], t))
    same = same_rows(rows_serial, rows_cluster)
    ratios.record("one process / cluster", min(serial) / min(on_cluster))
    first = rows_cluster[1:1 + sw.TIMED_RUNS]
    seconds = min(r.seconds for r in first)
    parts = sw.chunks(list(range(1 + len(first), runs)), plan.values, seconds, workers)
    by_row = [[rows_cluster[i] for i, _ in part] for part in parts]
    as_rows = sum(len(pickle.dumps(part, protocol=5)) for part in by_row)
    as_blocks = sum(len(pickle.dumps(sw.Block.of(part), protocol=5)) for part in by_row)
    best = int(np.argmin(on_cluster))
    count, idle, gap, spread = figures[best]
    client_cpu, worker_cpu = cpu[best]
    return [
        f"## {runs} runs of {t_end:g} s on a {workers}-worker Dask LocalCluster (issue 31)",
        "",
        f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}; rows of the cluster and "
        f"of the one-process sweep identical and in run order: {same}.",
        "",
        f"| way | wall s (fastest of {turns}) | one process / this |",
        "| --- | ---: | ---: |",
        f"| one process (`--scheduler synchronous`) | {min(serial):.2f} | 1 |",
        f"| LocalCluster, {workers} workers, started and warmed | {min(on_cluster):.2f} | "
        f"{min(serial) / min(on_cluster):.2f}× |",
        "",
        f"The cluster's start (not in the figures above): {started:.1f} s, of which "
        f"{started - made:.2f} s warming the model on the workers "
        "(`lagsim.sweep.core.warm_workers`). Goal (issue 31): ≥ 1.6× on a quiet machine.",
        "",
        f"In the fastest cluster sweep (Dask's task stream; `lagsim.sweep.core.chunks` from the "
        f"least time of runs 1–{len(first)}, {seconds * 1e3:.2f} ms): {count} chunks, of "
        f"{len(parts[0])} runs down to {len(parts[-1])} in the last sweep; the most a worker "
        f"was idle {idle:.3f} s of {min(on_cluster):.2f} s; "
        f"{gap * 1e3:.1f} ms between a worker's chunks on average; the workers' last chunks "
        f"ended {spread * 1e3:.0f} ms apart. Rows sent back: {as_blocks / 1e3:.0f} kB as "
        f"blocks of arrays (`Block`), {as_rows / 1e3:.0f} kB as rows. CPU time: the client's "
        f"process (client, scheduler, nannies) {client_cpu:.2f} s, the workers "
        f"{worker_cpu:.2f} s; one process alone {min(alone):.2f} s.",
        "",
    ]


def cli_cluster(runs: int, t_end: float, workers: int, turns: int = 2) -> list[str]:
    """``lagsim sweep --scheduler ADDRESS`` as a user runs it, a fresh client process each time
    (its own run 0 loads the model), on a ``LocalCluster`` of ``workers`` started once, against
    ``--scheduler synchronous``, in ``turns`` turns after one untimed sweep on the cluster (the
    workers' one-time costs). The command and the workers run the lagsim this process imports
    (the command inherits ``PYTHONPATH``, the workers ``sys.path``): run this with another
    tree's ``PYTHONPATH`` to compare two versions. Beside wall times, the Dask tasks of the
    fastest cluster sweep and the CPU time of the command, of this process (the scheduler,
    the nannies) and of the workers."""
    import resource

    from distributed import Client, LocalCluster

    tree = Path(sw.__file__).resolve().parents[2]
    command = [sys.executable, "-m", "lagsim", "sweep", "double_pendulum", "--grid",
               f"theta2=1:2:{runs}", "--t-end", f"{t_end:g}", "-o", os.devnull, "--scheduler"]

    def child_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, host="127.0.0.1") as local, Client(local) as client:
        client.get_task_stream()
        subprocess.run([*command, local.scheduler_address], check=True)
        alone, on_cluster = [], []
        for _ in range(turns):
            start = time.perf_counter()
            subprocess.run([*command, "synchronous"], check=True)
            alone.append(time.perf_counter() - start)
            before = (child_cpu(), time.process_time(),
                      sum(client.run(time.process_time).values()))
            since = time.time()
            start = time.perf_counter()
            subprocess.run([*command, local.scheduler_address], check=True)
            wall = time.perf_counter() - start
            after = (child_cpu(), time.process_time(),
                     sum(client.run(time.process_time).values()))
            tasks = [r for r in client.get_task_stream(start=since)
                     if r["key"].startswith("run_chunk")]
            on_cluster.append((wall, len(tasks), *(b - a for a, b in zip(before, after))))
    wall, tasks, command_cpu, ours, theirs = min(on_cluster)
    return [
        f"### `lagsim sweep --scheduler ADDRESS`, a fresh client process ({tree.name})",
        "",
        f"{runs} runs of {t_end:g} s of double_pendulum, {workers} workers, load average (1 min) "
        f"at the end {os.getloadavg()[0]:.1f}; fastest of {turns}, each command a new "
        "process (Python's start, imports, run 0 loading the model):",
        "",
        "| way | wall s | one process / this |",
        "| --- | ---: | ---: |",
        f"| `--scheduler synchronous` | {min(alone):.2f} | 1 |",
        f"| `--scheduler` a LocalCluster | {wall:.2f} | {min(alone) / wall:.2f}× |",
        "",
        f"The cluster sweep: {tasks} Dask tasks; CPU time of the command {command_cpu:.2f} s, of "
        f"the scheduler's process (scheduler, nannies) {ours:.2f} s, of the workers "
        f"{theirs:.2f} s.",
        "",
    ]


def shell_loop(count: int, values: np.ndarray) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    for value in values[:count]:
        subprocess.run([sys.executable, "-m", "lagsim", "simulate", "double_pendulum",
                        "--t-end", "10", "--init", f"theta2={float(value)!r}", "-o", os.devnull],
                       check=True, env=env)
    return (time.perf_counter() - start) / count


def machinery(runs: int) -> tuple[float, float]:
    """Seconds per run of the pendulum (10 s, default samples) by the sweep's synchronous
    engine, and by bare ``driver.simulate`` calls on one spec, model and compiled system with
    only θ(0) replaced: the difference is what the sweep adds to a run in a process (parsing
    the file again, options, summaries, the row)."""
    from dataclasses import replace

    from lagsim.numeric.compile import compile_model
    from lagsim.run.driver import simulate
    from lagsim.spec.options import SimulateOptions
    from lagsim.spec.system import parse_spec
    from lagsim.symbolic.model import build_model

    text, label, stem = read_source("pendulum")
    values = np.linspace(0.1, 3.0, runs)
    plan = sw.Plan(("theta",), values.reshape(runs, 1))
    job = sw.Job(text, label, stem, {}, {}, {}, plan.names, runs=runs).keyed()
    sw.run_one(job, 0, plan.values[0])
    start = time.perf_counter()
    sw.execute(job, plan, "synchronous", None)
    swept = (time.perf_counter() - start) / runs
    spec = parse_spec(text, label, stem)
    model = build_model(spec)
    numeric = compile_model(model)
    options = SimulateOptions.resolve(spec.simulate, {})
    start = time.perf_counter()
    for value in values:
        simulate(replace(spec, initial=(("theta", float(value)), ("theta_dot", 0.0))), model,
                 options, numeric=numeric)
    bare = (time.perf_counter() - start) / runs
    return swept, bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=sw.default_workers())
    parser.add_argument("--shell-runs", type=int, default=5)
    parser.add_argument("--machinery-runs", type=int, default=200)
    parser.add_argument("--cluster", type=int, default=2000, metavar="RUNS",
                        help="runs of --cluster-t-end s on a LocalCluster (0: none)")
    parser.add_argument("--cluster-t-end", type=float, default=2.0)
    parser.add_argument("--out", default=str(ROOT / "bench" / "sweep_results.md"))
    parser.add_argument("--cluster-only", action="store_true",
                        help="only the LocalCluster part (issue 31): printed, --out not written")
    ratios.add_option(parser)
    args = parser.parse_args()
    if args.cluster_only:
        print("\n".join(cluster(args.cluster, args.cluster_t_end, args.workers)))
        ratios.write(args.json)
        return
    load_before = os.getloadavg()[0]
    job, plan = job_and_plan(args.runs)
    sw.run_one(job, 0, plan.values[0])  # compile once (fills the cache), untimed
    serial, rows_serial = timed(job, plan, "synchronous", None)
    print(f"one process: {serial:.1f} s", flush=True)
    pool, rows_pool = timed(job, plan, None, args.workers)
    print(f"process pool: {pool:.1f} s", flush=True)
    same = same_rows(rows_serial, rows_pool)
    per_shell = shell_loop(args.shell_runs, plan.values[:, 0])
    swept, bare = machinery(args.machinery_runs)
    run_time = float(np.mean([r.seconds for r in rows_pool]))
    overhead = pool * args.workers / args.runs - run_time
    failed = sum(bool(r.error) for r in rows_pool)
    lines = [
        "# lagsim sweep benchmark (bench/sweep.py)",
        "",
        f"double_pendulum, 10 s per run, {args.runs} runs, {args.workers} workers, "
        f"{os.cpu_count()} cores, shared with other work while measured: load average (1 min) "
        f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} at the end; {failed} runs failed; "
        f"rows of the pool and of the one-process sweep identical: {same}.",
        "",
        "| way | wall s | s per run | wall / the pool's |",
        "| --- | ---: | ---: | ---: |",
        f"| `lagsim sweep` default: process pool on pipes, {args.workers} processes (start-up "
        f"included) | {pool:.1f} | {pool / args.runs:.4f} | 1 |",
        f"| one process, one run after another (`--scheduler synchronous`) | {serial:.1f} | "
        f"{serial / args.runs:.4f} | {serial / pool:.2f}× |",
        f"| shell loop of `lagsim simulate` (extrapolated from {args.shell_runs} runs) | "
        f"{per_shell * args.runs:.0f} | {per_shell:.3f} | {per_shell * args.runs / pool:.1f}× |",
        "",
        f"Mean time of a run inside a worker: {run_time * 1e3:.1f} ms; overhead per run in the "
        f"pool (wall × workers / runs − run time): {overhead * 1e3:.2f} ms = "
        f"{100 * overhead / run_time:.1f} % of a run.",
        "",
        f"What the sweep adds to a run inside a process (pendulum, 10 s, 1001 samples, "
        f"{args.machinery_runs} runs, synchronous): {swept * 1e3:.2f} ms per run against "
        f"{bare * 1e3:.2f} ms for bare `driver.simulate` calls, "
        f"{100 * (swept - bare) / bare:.1f} % more.",
        "",
    ]
    if args.cluster:
        lines += cluster(args.cluster, args.cluster_t_end, args.workers)
        lines += cli_cluster(args.cluster, args.cluster_t_end, args.workers)
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")
    ratios.write(args.json)


if __name__ == "__main__":
    main()
