"""Timing helpers shared by the benchmark's anchors and lagsim side (issue 5).

Every figure is the median of at least ``reps`` repetitions after one warm-up; a stage whose
single run is too long for that within ``budget_s`` gets fewer repetitions, and says so.
"""

from __future__ import annotations

import gc
import statistics
import time
import timeit
from collections.abc import Callable
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
