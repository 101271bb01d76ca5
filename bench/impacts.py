"""Issue 27's goals: impacts cost no more than the steps around them, and lagsim's exact
impacts side by side with MuJoCo's soft contact.

Cost: the bouncing ball with e = 0.99 for 1,000 impacts (t_end between the 1,000th and the
1,001st impact time of the closed form) with its flights and plain impacts in C
(lagsim.run.engines.cimpacts) and, side by side, with the flights in Python as before (C DOP853
steps, the gaps followed, the impacts located and made in Python: the loop of impacts with its
C flights switched off), against runs of the same length without the floor (the C DOP853 loop,
and the Python loop with RK45: the plain run of the same length, a parabola of a few steps, whose
time is a run's fixed cost) and against a plain run of the same number of steps (the free
pendulum of pendulum_stop, one coordinate as the ball, over the time in which its C DOP853 loop
takes as many steps as the ball's run; the steps counted in both); the ball's e set in its text
as the plain runs' parameters are, so that both pay the same fixed cost; the error of the impact
times and apex heights against the closed forms (tests/test_impacts.py's), and how far apart
the two paths' impact times are. Then the same for the pendulum against its wall
(pendulum_stop, e = 1), whose plain run (no wall) takes about as many steps as its impacting
run.

MuJoCo (:func:`mujoco_side`, when ``mujoco`` is installed): the bouncing ball (e = 0.5: apex
heights against e^(2n) h0 over the first 5 bounces, the deepest penetration; e = 1 over 10 s:
the largest energy error) and Housner's rocking block (amplitudes over the first 6 half cycles
against his recurrence, the energy above rest at those peaks, penetration of the corners, the
time of rest against t∞ from his impact times summed; tests/test_impacts_rest.py), each with its
wall time. MuJoCo's contact is a soft constraint stepped with RK4 at dt = 1 ms and 0.1 ms, the
state read after each mj_step in Python. The ball's is a spring and damper (solref = (−k, −b),
k = :data:`STIFFNESS`, b = 2ζ√k with e = exp(−ζπ/√(1 − ζ²)), ζ = 1e-9 for e = 1 since MuJoCo
takes no 0 there; solimp 0.9999 so that the impedance does not soften it further); the block's
is MuJoCo's stiffest stable setting for a plastic contact, solref = (2 dt, 1).

    PYTHONPATH=. .venv/bin/python bench/impacts.py [--reps N] [--quick]
    # writes bench/impacts_results.md
"""

from __future__ import annotations

import argparse
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from timing import interleaved, wall_and_cpu

from lagsim.api import load
from lagsim.output.trajectory import Trajectory
from lagsim.run.engines import cimpacts, cloop, impacts

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
    times = interleaved({"run": run}, reps, warmup=False)["run"]
    return min(times["wall"]), min(times["cpu"])


def counted(run: Callable[[], Trajectory]) -> tuple[Trajectory, int]:
    """``run``'s trajectory and the DOP853 steps its C loop or its C flights took (a plain run
    through :class:`lagsim.run.engines.cloop.CLoop`, a run with impacts through
    :class:`lagsim.run.engines.cimpacts.Flights`)."""
    steps: list[int] = []
    flights: list[cimpacts.Flights | None] = []
    real_loop, real_flights = cloop.CLoop._run_impl, impacts.flights_for

    def loop(self: cloop.CLoop, *args: Any) -> Trajectory:
        trajectory = real_loop(self, *args)
        steps.append(self.steps)
        return trajectory

    def made(*args: Any) -> cimpacts.Flights | None:
        flights.append(real_flights(*args))
        return flights[-1]

    cloop.CLoop._run_impl = loop  # type: ignore[method-assign]
    impacts.flights_for = made  # type: ignore[assignment]
    try:
        trajectory = run()
    finally:
        cloop.CLoop._run_impl = real_loop  # type: ignore[method-assign]
        impacts.flights_for = real_flights
    return trajectory, sum(steps) + sum(f.steps for f in flights if f is not None)


def row(what: str, times: Times, steps: int | str, references: list[Times],
        impacts: int = 0) -> str:
    """A table row: the times, the steps, the CPU time per impact, and the ratios (wall / CPU)
    to each of ``references``."""
    per = f"{1e6 * times[1] / impacts:.1f}" if impacts else ""
    ratios = " | ".join(f"{times[0] / r[0]:.1f} / {times[1] / r[1]:.1f}" for r in references)
    return f"| {what} | {times[0]:.4f} | {times[1]:.4f} | {steps} | {per} | {ratios} |"


def header(*references: str) -> tuple[str, str]:
    """The table's header, a ratio column for each of ``references``."""
    ratios = " | ".join(f"ratio to {r} (wall / CPU)" for r in references)
    return (f"| run | wall (s) | CPU (s) | DOP853 steps | CPU µs per impact | {ratios} |",
            "|---|---|---|---|---|" + "---|" * len(references))


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
    parser.add_argument("--quick", action="store_true",
                        help="one repetition, MuJoCo at dt = 1 ms only")
    args = parser.parse_args()
    reps = 1 if args.quick else args.reps
    warnings.simplefilter("ignore")
    ball = load(BALL.replace("e: 0.8", f"e: {E}"))
    free = load(BALL.replace("constraints:\n" + FLOOR, ""))
    wall = load(PENDULUM)
    swing = load(PENDULUM.replace("constraints:\n" + WALL, ""))

    def bounce() -> Trajectory:
        return ball.simulate(t_end=T_END)

    def plain() -> Trajectory:
        return free.simulate(t_end=T_END)

    def strike() -> Trajectory:
        return wall.simulate(t_end=PENDULUM_T_END)

    def swings(t_end: float) -> Callable[[], Trajectory]:
        return lambda: swing.simulate(t_end=t_end)

    c_run, ball_steps = counted(bounce)
    python_run = python_flights(bounce)()
    plain_steps = counted(plain)[1]
    swing_steps = counted(swings(PENDULUM_T_END))[1]
    same_t_end = PENDULUM_T_END * ball_steps / swing_steps
    same_steps = counted(swings(same_t_end))[1]
    rows = np.flatnonzero(c_run["impulse_floor"] != 0.0)
    count = len(rows)
    n = np.arange(1, count + 1)
    time_error = np.max(np.abs(c_run.t[rows] - impact_time(n)))
    apex_error = np.max(np.abs(c_run["y_dot"][rows[:20]] ** 2 / (2 * G) - E ** (2 * n[:20])))
    c_times, python_times = c_run.events.t, python_run.events.t
    apart = (np.max(np.abs(c_times - python_times)) if len(c_times) == len(python_times)
             else math.nan)
    c_time = best(bounce, reps)
    python_time = best(python_flights(bounce), min(reps, 2))
    plain_time = best(plain, reps)
    same_time = best(swings(same_t_end), reps)
    rk45_time = best(lambda: free.simulate(t_end=T_END, method="RK45"), reps)
    strike_run, strike_steps = counted(strike)
    strikes = len(strike_run.events)
    strike_time = best(strike, reps)
    strike_python_time = best(python_flights(strike), min(reps, 2))
    swing_time = best(swings(PENDULUM_T_END), reps)
    references = [plain_time, same_time]
    lines = [
        "# Impacts (issue 27): cost and accuracy", "",
        f"Bouncing ball, e = {E}, h0 = 1, t_end = {T_END:.6f} s (between the {IMPACTS}th and "
        f"the {IMPACTS + 1}st impact), default tolerances and samples; best of {reps} (of "
        f"{min(reps, 2)} for the Python flights); 2 shared cores, read the ratios. Two plain "
        "runs to compare with: the same length (the ball without the floor: a parabola, which "
        "DOP853 passes in a few steps, so its time is the fixed cost of a run) and the same "
        f"number of steps (the free pendulum of pendulum_stop, one coordinate as the ball, for "
        f"{same_t_end:.1f} s: as many C DOP853 steps as the ball's run).", "",
        *header("the same length", "the same steps"),
        row(f"with the floor, {count} impacts: flights and plain impacts in C (now)", c_time,
            ball_steps, references, count),
        row(f"with the floor, {len(python_times)} impacts: flights in Python (before)",
            python_time, "", references, count),
        row("without the floor, C DOP853 loop (the plain run of the same length)", plain_time,
            plain_steps, references),
        row("without the floor, Python loop (RK45)", rk45_time, "", references),
        row(f"the free pendulum for {same_t_end:.1f} s, C DOP853 loop (the plain run of the "
            "same steps)", same_time, same_steps, references), "",
        f"The pendulum against its wall (pendulum_stop) with e = 1 for {PENDULUM_T_END:g} s, "
        f"{strikes} impacts, against the same pendulum without the wall (a plain run of the "
        "same length that takes about as many steps as the swings between the impacts):", "",
        *header("the plain run"),
        row(f"with the wall, {strikes} impacts: flights and plain impacts in C (now)",
            strike_time, strike_steps, [swing_time], strikes),
        row("with the wall: flights in Python (before)", strike_python_time, "", [swing_time],
            strikes),
        row("without the wall, C DOP853 loop (the plain run)", swing_time, swing_steps,
            [swing_time]), "",
        f"All {count} impacts: max |t_n - closed form| = {time_error:.2g} s; first 20: max "
        f"|h_n - e^(2n) h0| = {apex_error:.2g}. The C and the Python flights' impact times are "
        f"at most {apart:.2g} s apart (rounding of the dense output, amplified by the ball's "
        "1/(1 - e) = 100: each impact's speed sets every later time).", "",
        "The C flights (lagsim.run.engines.cimpacts, lagsim/numeric/c/impacts.c) step, follow "
        "the gap, locate each crossing and make each plain impact in C, many flights per call; "
        "Python records each call's impacts as arrays (lagsim.run.contacts.Impacts; an "
        "ImpactEvent object is made only when one is asked for) and takes over only where its "
        "own law is needed (simultaneous contacts, friction, an accumulation, a held contact). "
        "Against the plain run of the same length the ratio is that of the impacts' cost (two "
        "DOP853 steps a flight, the crossing by Brent's method on the dense output, the jump) "
        "to a run's fixed cost; against the plain run of the same steps it is the cost of a "
        "step with its impact against a plain step's.", "",
        *mujoco_side(args.quick),
    ]
    text = "\n".join(lines)
    (HERE / "impacts_results.md").write_text(text)
    print(text)


H0, R_BALL = 1.0, 0.05
STIFFNESS = 1e5
"""MuJoCo's ball contact stiffness k (N/m for its mass 1): a contact of π/√k ≈ 10 ms."""
B, HB, THETA0 = 0.2, 0.6, 0.1


def housner() -> tuple[list[float], float]:
    """The rocking block's first 6 amplitudes by Housner's recurrence and its time of rest t∞
    (tests/test_impacts_rest.py's quadrature)."""
    import sys

    sys.path.insert(0, str(HERE.parent / "tests"))
    from test_impacts_rest import impact_times

    alpha, r = math.atan(B / HB), 1 - 1.5 * math.sin(math.atan(B / HB)) ** 2
    amplitudes, theta = [], THETA0
    for _ in range(6):
        theta = alpha - math.acos(math.cos(alpha) + r * r * (math.cos(alpha - theta)
                                                             - math.cos(alpha)))
        amplitudes.append(theta)
    return amplitudes, impact_times()[-1]


def peaks(t: np.ndarray, theta: np.ndarray, count: int) -> list[float]:
    """The largest |θ| between consecutive sign changes, as the vertex of the parabola through
    the three samples about it."""
    change = np.flatnonzero(np.diff(np.sign(theta)) != 0)
    out = []
    for a, b in zip(change[:count], change[1:count + 1]):
        k = a + 1 + int(np.argmax(np.abs(theta[a + 1:b + 1])))
        y0, y1, y2 = np.abs(theta[k - 1:k + 2])
        out.append(float(y1 + (y2 - y0) ** 2 / (8 * (2 * y1 - y0 - y2))))
    return out


def block_energy_error(amplitudes: list[float], expected: list[float]) -> float:
    """The largest error of the energy above rest at the peaks, m g R (cos(α − θ) − cos α),
    relative to its start's."""
    alpha, radius = math.atan(B / HB), math.hypot(B, HB)

    def above(theta: float) -> float:
        return G * radius * (math.cos(alpha - theta) - math.cos(alpha))

    return max(abs(above(a) - above(e)) for a, e in zip(amplitudes, expected)) / above(THETA0)


def mujoco_steps(xml: str, dt: float, t_end: float,
                 read: Callable[[Any], tuple[float, float]]) -> tuple[np.ndarray, np.ndarray,
                                                                     float]:
    """MuJoCo's model ``xml`` stepped over ``t_end`` in steps of ``dt``: the two values ``read``
    takes from its data after each step, and the wall time of the steps (the model's building
    left out)."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    n = int(round(t_end / dt))
    first, second = np.empty(n), np.empty(n)

    def steps() -> None:
        for k in range(n):
            mujoco.mj_step(model, data)
            first[k], second[k] = read(data)

    wall, _, _ = wall_and_cpu(steps)
    return first, second, wall


def mujoco_ball(dt: float, e: float, t_end: float) -> tuple[np.ndarray, np.ndarray, float]:
    """MuJoCo's ball on a plane (a slide joint along z): the gap and its rate after each step,
    and the wall time."""
    zeta = max(-math.log(e) / math.sqrt(math.pi ** 2 + math.log(e) ** 2), 1e-9)
    solref = (f'solref="{-STIFFNESS} {-2 * zeta * math.sqrt(STIFFNESS)}" '
              'solimp="0.9999 0.9999 0.001"')
    xml = (f'<mujoco><option timestep="{dt}" gravity="0 0 -{G}" integrator="RK4"/><worldbody>'
           f'<geom type="plane" size="5 5 .1" {solref}/><body pos="0 0 {H0 + R_BALL}">'
           f'<joint type="slide" axis="0 0 1"/><geom type="sphere" size="{R_BALL}" mass="1" '
           f'{solref}/></body></worldbody></mujoco>')
    return mujoco_steps(xml, dt, t_end, lambda data: (H0 + data.qpos[0], data.qvel[0]))


def mujoco_block(dt: float, t_end: float) -> tuple[np.ndarray, np.ndarray, float]:
    """MuJoCo's box (half sizes b, 0.1, h, mass 1, μ = 1, plastic: damping ratio 1) released
    on one bottom edge at the tilt θ0: its tilt about y and its lowest corner's height after
    each step, and the wall time."""
    c, s = math.cos(THETA0), math.sin(THETA0)
    corner = min(((x * c - HB * s, -x * s - HB * c) for x in (B, -B)), key=lambda p: p[1])
    solref = f'solref="{2 * dt} 1" friction="1 0.005 0.0001"'
    xml = (f'<mujoco><option timestep="{dt}" gravity="0 0 -{G}" integrator="RK4" '
           f'cone="elliptic"/><worldbody><geom type="plane" size="5 5 .1" {solref}/>'
           f'<body pos="{-corner[0]} 0 {-corner[1]}" quat="{math.cos(THETA0 / 2)} 0 '
           f'{math.sin(THETA0 / 2)} 0"><freejoint/><geom type="box" size="{B} 0.1 {HB}" '
           f'mass="1" {solref}/></body></worldbody></mujoco>')

    def tilt_and_low(data: Any) -> tuple[float, float]:
        tilt = 2 * math.atan2(data.qpos[5], data.qpos[3])
        ct, st = math.cos(tilt), math.sin(tilt)
        return tilt, min(data.qpos[2] - x * st - HB * ct for x in (B, -B))

    return mujoco_steps(xml, dt, t_end, tilt_and_low)


def rest_time(t: np.ndarray, theta: np.ndarray) -> float:
    """The first time from which |θ| stays below 1e-6."""
    moving = np.flatnonzero(np.abs(theta) >= 1e-6)
    return float(t[moving[-1] + 1]) if moving.size else float(t[0])


def mujoco_side(quick: bool) -> list[str]:
    """The table of lagsim against MuJoCo on the ball and the block (the module's docstring)."""
    import importlib.util

    if importlib.util.find_spec("mujoco") is None:
        return ["MuJoCo is not installed (pip install -e '.[bench]'): no side by side.", ""]
    e, n = 0.5, np.arange(1, 6)
    apexes = H0 * e ** (2 * n)
    expected, t_rest = housner()
    rows = []
    ball = load(BALL)
    wall, _, trajectory = wall_and_cpu(lambda: ball.simulate(parameters={"e": e}, t_end=2.0))
    hit = np.flatnonzero(trajectory["impulse_floor"] != 0.0)[:5]
    apex = float(np.max(np.abs(trajectory["y_dot"][hit] ** 2 / (2 * G) - apexes)))
    depth = max(0.0, -float(trajectory["y"].min()))
    elastic_wall, _, elastic = wall_and_cpu(
        lambda: ball.simulate(parameters={"e": 1.0}, t_end=10.0))
    energy = float(np.max(np.abs(elastic.energy - elastic.energy[0])) / elastic.energy[0])
    rows.append(("ball", "lagsim, exact impacts (DOP853, default tolerances)", apex, depth,
                 energy, wall + elastic_wall))
    block = load(str(HERE.parent / "systems" / "rocking_block.yaml"))
    wall, _, rocking = wall_and_cpu(lambda: block.simulate(t_end=3.5, samples=3501))
    amplitudes = peaks(rocking.t, rocking["theta"], 6)
    depth = max(0.0, -float(min((rocking["y"] + s * B * np.sin(rocking["theta"])
                                 - HB * np.cos(rocking["theta"])).min() for s in (1, -1))))
    rest = abs(rocking.events[-1].t - t_rest)
    rows.append(("block", "lagsim, exact impacts (DOP853, default tolerances)",
                 max(abs(a - x) for a, x in zip(amplitudes, expected)), depth,
                 block_energy_error(amplitudes, expected), wall, rest))
    for dt in (1e-3,) if quick else (1e-3, 1e-4):
        gap, rate, wall = mujoco_ball(dt, e, 2.0)
        top = np.flatnonzero((gap[:-1] > 0) & (rate[:-1] > 0) & (rate[1:] <= 0))[:5]
        heights = gap[top] + rate[top] ** 2 / (2 * G)
        apex = float(np.max(np.abs(heights - apexes[:len(heights)])))
        depth = max(0.0, -float(gap.min()))
        gap1, rate1, wall1 = mujoco_ball(dt, 1.0, 10.0)
        flight = gap1 > 0
        energy = float(np.max(np.abs(gap1[flight] + rate1[flight] ** 2 / (2 * G) - H0)) / H0)
        rows.append(("ball", f"MuJoCo soft contact, RK4, dt = {dt:g} s", apex, depth, energy,
                     wall + wall1))
        tilt, low, wall = mujoco_block(dt, 3.5)
        t = dt * np.arange(1, len(tilt) + 1)
        amplitudes = peaks(t, tilt, 6)
        rows.append(("block", f"MuJoCo soft contact, RK4, dt = {dt:g} s",
                     max(abs(a - x) for a, x in zip(amplitudes, expected)),
                     max(0.0, -float(low.min())), block_energy_error(amplitudes, expected),
                     wall, abs(rest_time(t, tilt) - t_rest)))
    lines = ["## Side by side with MuJoCo's soft contact", "",
             "Ball: h0 = 1 m; apex error = max |h_n - e^(2n) h0| over the first 5 bounces at "
             "e = 0.5 (2 s); energy error = max |E - E0| / E0 at e = 1 over 10 s (MuJoCo's "
             "energy m (g gap + v^2/2) on its samples in flight, gap > 0). Block: "
             "Housner's block of tests/test_impacts_rest.py (b = 0.2, h = 0.6, "
             f"theta0 = {THETA0}, mu = 1, e = 0) over 3.5 s; apex error = max |theta_n - "
             "Housner's| over the first 6 amplitudes (rad); energy error = max error of the "
             "energy above rest at those peaks over its start's; rest = |t_rest - t_inf| "
             f"(t_inf = {t_rest:.10f} s; MuJoCo's t_rest: |theta| < 1e-6 from there). Wall "
             "times include the sampling (lagsim) and the Python loop over mj_step (MuJoCo).",
             "",
             "| system | run | apex error | penetration (m) | energy error | rest error (s) "
             "| wall time (s) |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        rest_text = f"{row[6]:.2g}" if len(row) > 6 else ""
        lines.append(f"| {row[0]} | {row[1]} | {row[2]:.2g} | {row[3]:.2g} | {row[4]:.2g} | "
                     f"{rest_text} | {row[5]:.3f} |")
    lines.append("")
    return lines


if __name__ == "__main__":
    main()
