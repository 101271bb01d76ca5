"""Timing helpers shared by the benchmark's anchors and lagsim side (issue 5).

Every figure is the median of at least ``reps`` repetitions after one warm-up; a stage whose
single run is too long for that within ``budget_s`` gets fewer repetitions, and says so. Where a
bench compares jobs on a shared machine, :func:`interleaved` times them repeat by repeat with
their CPU time beside the wall time (:func:`wall_and_cpu`).
"""

from __future__ import annotations

import gc
import statistics
import time
import timeit
from collections.abc import Callable, Mapping
from typing import Any


def median_time(
    fn: Callable[[], Any],
    reps: int = 5,
    warmup: bool = True,
    budget_s: float | None = None,
    before: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """Median wall time in seconds of ``fn()`` over ``reps`` runs after a warm-up.

    ``before`` runs untimed before every call (e.g. ``sympy.core.cache.clear_cache``).
    With ``budget_s``, the number of timed runs is cut so that they fit in the budget
    (at least one); the returned ``note`` says when that happened. ``result`` is the last
    return value of ``fn``.
    """
    result = None
    planned = reps
    first = None
    if warmup:
        if before is not None:
            before()
        start = time.perf_counter()
        result = fn()
        first = time.perf_counter() - start
        if budget_s is not None and first * reps > budget_s:
            reps = max(1, int(budget_s // first))
    times: list[float] = []
    for _ in range(reps):
        if before is not None:
            before()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    note = ""
    if reps < planned:
        note = f"{reps} reps (each run {times[0]:.1f} s) instead of {planned}"
    return {
        "median": statistics.median(times),
        "min": min(times),
        "reps": reps,
        "warmup_s": first,
        "note": note,
        "result": result,
    }


def per_call_us(fn: Callable[..., Any], *args: Any, reps: int = 5, target_s: float = 0.2) -> dict:
    """Median microseconds per call of ``fn(*args)``; each repetition loops for about ``target_s``.

    Uses :mod:`timeit` (garbage collection off during a loop), the same way for every side.
    """
    timer = timeit.Timer(lambda: fn(*args))
    number, _ = timer.autorange()
    number = max(1, int(number * target_s / 0.2))
    timer.timeit(number)
    runs = [t / number * 1e6 for t in timer.repeat(repeat=reps, number=number)]
    gc.collect()
    return {"median": statistics.median(runs), "min": min(runs), "reps": reps, "number": number}


def wall_and_cpu(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """One call of ``fn``: its wall seconds, this process's CPU seconds over it
    (``time.process_time``: every thread of the process, numpy's BLAS threads too, and less
    disturbed than the wall time by the other processes of a loaded machine) and its result."""
    start, start_cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - start, time.process_time() - start_cpu, result


def interleaved(jobs: Mapping[str, Callable[[], Any]], reps: int,
                warmup: bool = True) -> dict[str, dict[str, list[float]]]:
    """The wall and the CPU seconds (:func:`wall_and_cpu`) of ``reps`` runs of each job, as
    ``{name: {"wall": [...], "cpu": [...]}}``; the jobs interleaved repeat by repeat, so that a
    load that comes and goes falls on all of them alike. With ``warmup``, one untimed run of
    each job first."""
    if warmup:
        for job in jobs.values():
            job()
    times: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []} for k in jobs}
    for _ in range(reps):
        for key, job in jobs.items():
            wall, cpu, _ = wall_and_cpu(job)
            times[key]["wall"].append(wall)
            times[key]["cpu"].append(cpu)
    return times
