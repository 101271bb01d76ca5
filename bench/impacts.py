"""Issue 27's goal: what impacts cost. The bouncing ball with e = 0.99 over 80 s (about 220
impacts, the loop of impacts: C DOP853 steps, events and impulses in Python) against runs of the
same length without the floor (the C DOP853 loop, and the Python loop with RK45), and the error of
its impact times and apex heights against the closed forms (tests/test_impacts.py's).

    PYTHONPATH=. .venv/bin/python bench/impacts.py [--reps N]   # writes bench/impacts_results.md
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np

from lagsim.api import load

HERE = Path(__file__).resolve().parent
BALL = (HERE.parent / "systems" / "bouncing_ball.yaml").read_text()
FLOOR = "  - {name: floor, unilateral: y, restitution: e}\n"
G, E, T_END = 9.81, 0.99, 80.0


def best(run: object, reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    reps = parser.parse_args().reps
    warnings.simplefilter("ignore")
    ball = load(BALL)
    free = load(BALL.replace("constraints:\n" + FLOOR, ""))
    trajectory = ball.simulate(parameters={"e": E}, t_end=T_END)
    free.simulate(t_end=1.0)
    rows = np.flatnonzero(trajectory["impulse_floor"] != 0.0)
    impacts = len(rows)
    t1 = math.sqrt(2 / G)
    n = np.arange(1, 21)
    time_error = np.max(np.abs(trajectory.t[rows[:20]]
                               - (t1 + 2 * t1 * E * (1 - E ** (n - 1)) / (1 - E))))
    apex_error = np.max(np.abs(trajectory["y_dot"][rows[:20]] ** 2 / (2 * G) - E ** (2 * n)))
    impact_time = best(lambda: ball.simulate(parameters={"e": E}, t_end=T_END), reps)
    c_time = best(lambda: free.simulate(t_end=T_END), reps)
    python_time = best(lambda: free.simulate(t_end=T_END, method="RK45"), reps)
    lines = [
        "# Impacts (issue 27): cost and accuracy", "",
        f"Bouncing ball, e = {E}, h0 = 1, t_end = {T_END:g} s, default tolerances; best of "
        f"{reps}; 2 shared cores, read the ratios.", "",
        "| run | wall time (s) | ratio to the C loop |", "|---|---|---|",
        f"| with the floor: {impacts} impacts (loop of impacts) | {impact_time:.3f} | "
        f"{impact_time / c_time:.0f} |",
        f"| without the floor, C DOP853 loop | {c_time:.3f} | 1 |",
        f"| without the floor, Python loop (RK45) | {python_time:.3f} | "
        f"{python_time / c_time:.0f} |", "",
        f"First 20 impacts: max |t_n - closed form| = {time_error:.2g} s, max |h_n - e^(2n) h0| "
        f"= {apex_error:.2g}.", "",
        "The loop of impacts steps in C (DOP853's step, lagsim.run.engines.cstep) but follows "
        "the gaps, locates the impacts and restarts in Python: about "
        f"{1e3 * impact_time / max(impacts, 1):.1f} ms per impact here. The C loops "
        "(cloop, cradau) refuse unilateral systems for now.", "",
    ]
    text = "\n".join(lines)
    (HERE / "impacts_results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
