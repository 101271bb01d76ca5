"""Issue 27's goal: impacts cost no more than the steps around them. The bouncing ball with
e = 0.99 for 1,000 impacts (t_end between the 1,000th and the 1,001st impact time of the closed
form) with its flights and plain impacts in C (lagsim.run.engines.cimpacts) and, side by side,
with the flights in Python as before (C DOP853 steps, the gaps followed, the impacts located and
made in Python: the loop of impacts with its C flights switched off), against runs of the same
length without the floor (the C DOP853 loop, and the Python loop with RK45); the error of the
impact times and apex heights against the closed forms (tests/test_impacts.py's), and how far
apart the two paths' impact times are. Then the same for the pendulum against its wall
(pendulum_stop, e = 1), whose plain run (no wall) takes as many steps as its impacting run.

    PYTHONPATH=. .venv/bin/python bench/impacts.py [--reps N]   # writes bench/impacts_results.md
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from lagsim.api import load
from lagsim.output.trajectory import Trajectory
from lagsim.run.engines import impacts

HERE = Path(__file__).resolve().parent
BALL = (HERE.parent / "systems" / "bouncing_ball.yaml").read_text()
FLOOR = "  - {name: floor, unilateral: y, restitution: e}\n"
PENDULUM = (HERE.parent / "systems" / "pendulum_stop.yaml").read_text().replace("e: 0.9",
                                                                                 "e: 1.0")
WALL = "  - {name: wall, unilateral: alpha - theta, restitution: e}\n"
PENDULUM_T_END = 1000.0
G, E, IMPACTS = 9.81, 0.99, 1000
T1 = math.sqrt(2 / G)


def impact_time(n: np.ndarray | int) -> np.ndarray:
    """The n-th impact's time, t1 + 2 v1 e (1 − e^(n−1)) / (g (1 − e)) with v1 = g t1."""
    return T1 + 2 * T1 * E * (1 - E ** (np.asarray(n) - 1)) / (1 - E)


T_END = float(0.5 * (impact_time(IMPACTS) + impact_time(IMPACTS + 1)))


Times = tuple[float, float]
"""The least wall time and the least CPU time of this process over some runs."""


def best(run: Callable[[], object], reps: int) -> Times:
    """:data:`Times` of ``reps`` runs (warm: nothing is compiled in them). On a shared machine
    the wall time of a short run is partly the other processes'; the CPU time counts this
    process's threads (numpy's BLAS threads too)."""
    wall, cpu = [], []
    for _ in range(reps):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(wall), min(cpu)


def row(what: str, times: Times, plain: Times, impacts: int = 0) -> str:
    """A table row: the times, per impact, and the ratios to the plain run's."""
    per = f"{1e3 * times[0] / impacts:.3f} / {1e3 * times[1] / impacts:.3f}" if impacts else ""
    return (f"| {what} | {times[0]:.4f} | {times[1]:.4f} | {per} | {times[0] / plain[0]:.1f} | "
            f"{times[1] / plain[1]:.1f} |")


HEADER = ("| run | wall (s) | CPU (s) | ms per impact (wall / CPU) | ratio to the plain run "
          "(wall) | (CPU) |", "|---|---|---|---|---|---|")


def python_flights(run: Callable[[], Trajectory]) -> Callable[[], Trajectory]:
    """``run`` with the loop of impacts' C flights switched off (its flights in Python, as
    before lagsim.run.engines.cimpacts)."""

    def wrapped() -> Trajectory:
        real = impacts.flights_for
        impacts.flights_for = lambda *_: None  # type: ignore[assignment]
        try:
            return run()
        finally:
            impacts.flights_for = real

    return wrapped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    reps = parser.parse_args().reps
    warnings.simplefilter("ignore")
    ball = load(BALL)
    free = load(BALL.replace("constraints:\n" + FLOOR, ""))

    def bounce() -> Trajectory:
        return ball.simulate(parameters={"e": E}, t_end=T_END)

    def plain() -> Trajectory:
        return free.simulate(t_end=T_END)

    c_run, python_run = bounce(), python_flights(bounce)()
    plain()
    rows = np.flatnonzero(c_run["impulse_floor"] != 0.0)
    count = len(rows)
    n = np.arange(1, count + 1)
    time_error = np.max(np.abs(c_run.t[rows] - impact_time(n)))
    apex_error = np.max(np.abs(c_run["y_dot"][rows[:20]] ** 2 / (2 * G) - E ** (2 * n[:20])))
    c_times = np.array([e.t for e in c_run.events])
    python_times = np.array([e.t for e in python_run.events])
    apart = (np.max(np.abs(c_times - python_times)) if len(c_times) == len(python_times)
             else math.nan)
    c_time = best(bounce, reps)
    python_time = best(python_flights(bounce), min(reps, 2))
    plain_time = best(plain, reps)
    rk45_time = best(lambda: free.simulate(t_end=T_END, method="RK45"), reps)
    wall = load(PENDULUM)
    swing = load(PENDULUM.replace("constraints:\n" + WALL, ""))

    def strike() -> Trajectory:
        return wall.simulate(t_end=PENDULUM_T_END)

    strikes = len(strike().events)
    swing.simulate(t_end=PENDULUM_T_END)
    strike_time = best(strike, reps)
    strike_python_time = best(python_flights(strike), min(reps, 2))
    swing_time = best(lambda: swing.simulate(t_end=PENDULUM_T_END), reps)
    lines = [
        "# Impacts (issue 27): cost and accuracy", "",
        f"Bouncing ball, e = {E}, h0 = 1, t_end = {T_END:.6f} s (between the {IMPACTS}th and "
        f"the {IMPACTS + 1}st impact), default tolerances and samples; best of {reps} (of "
        f"{min(reps, 2)} for the Python flights); 2 shared cores, read the ratios.", "",
        *HEADER,
        row(f"with the floor, {count} impacts: flights and plain impacts in C (now)", c_time,
            plain_time, count),
        row(f"with the floor, {len(python_times)} impacts: flights in Python (before)",
            python_time, plain_time, count),
        row("without the floor, C DOP853 loop (the plain run)", plain_time, plain_time),
        row("without the floor, Python loop (RK45)", rk45_time, plain_time), "",
        f"The pendulum against its wall (pendulum_stop) with e = 1 for {PENDULUM_T_END:g} s, "
        f"{strikes} impacts, against the same pendulum without the wall (a plain run that takes "
        "as many steps as the swings between the impacts):", "",
        *HEADER,
        row(f"with the wall, {strikes} impacts: flights and plain impacts in C (now)",
            strike_time, swing_time, strikes),
        row("with the wall: flights in Python (before)", strike_python_time, swing_time,
            strikes),
        row("without the wall, C DOP853 loop (the plain run)", swing_time, swing_time), "",
        f"All {count} impacts: max |t_n - closed form| = {time_error:.2g} s; first 20: max "
        f"|h_n - e^(2n) h0| = {apex_error:.2g}. The C and the Python flights' impact times are "
        f"at most {apart:.2g} s apart (rounding of the dense output, amplified by the ball's "
        "1/(1 - e) = 100: each impact's speed sets every later time).", "",
        "The C flights (lagsim.run.engines.cimpacts, lagsim/numeric/c/impacts.c) step, follow "
        "the gap, locate each crossing and make each plain impact in C, many flights per call; "
        "Python records the impacts and takes over only where its own law is needed "
        "(simultaneous contacts, friction, an accumulation, a held contact). The ball's plain "
        "run is a parabola, which DOP853 passes in a dozen steps: its time is the fixed cost of a "
        "run, and the ratio is that of the impacts' cost (a few microseconds of C for the two "
        "steps, the crossing and the jump, and the Python records of each impact: its row, "
        "its Impact and its ImpactEvent) to that fixed cost. The pendulum's plain run steps "
        "through the same swings, and there the impacts cost about as much as the steps around "
        "them.", "",
    ]
    text = "\n".join(lines)
    (HERE / "impacts_results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
