"""Issue 27's goals: what impacts cost, and lagsim's exact impacts side by side with MuJoCo's soft
contact.

Cost: the bouncing ball with e = 0.99 over 80 s (about 220 impacts, the loop of impacts: C
DOP853 steps, events and impulses in Python) against runs of the same length without the floor
(the C DOP853 loop, and the Python loop with RK45), and the error of its impact times and apex
heights against the closed forms (tests/test_impacts.py's).

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
    parser.add_argument("--quick", action="store_true",
                        help="one repetition, MuJoCo at dt = 1 ms only")
    args = parser.parse_args()
    reps = 1 if args.quick else args.reps
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


def mujoco_ball(dt: float, e: float, t_end: float) -> tuple[np.ndarray, np.ndarray, float]:
    """MuJoCo's ball on a plane (a slide joint along z): the gap and its rate after each step,
    and the wall time."""
    import mujoco

    zeta = max(-math.log(e) / math.sqrt(math.pi ** 2 + math.log(e) ** 2), 1e-9)
    solref = (f'solref="{-STIFFNESS} {-2 * zeta * math.sqrt(STIFFNESS)}" '
              'solimp="0.9999 0.9999 0.001"')
    xml = (f'<mujoco><option timestep="{dt}" gravity="0 0 -{G}" integrator="RK4"/><worldbody>'
           f'<geom type="plane" size="5 5 .1" {solref}/><body pos="0 0 {H0 + R_BALL}">'
           f'<joint type="slide" axis="0 0 1"/><geom type="sphere" size="{R_BALL}" mass="1" '
           f'{solref}/></body></worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    n = int(round(t_end / dt))
    gap, rate = np.empty(n), np.empty(n)
    start = time.perf_counter()
    for k in range(n):
        mujoco.mj_step(model, data)
        gap[k] = H0 + data.qpos[0]
        rate[k] = data.qvel[0]
    return gap, rate, time.perf_counter() - start


def mujoco_block(dt: float, t_end: float) -> tuple[np.ndarray, np.ndarray, float]:
    """MuJoCo's box (half sizes b, 0.1, h, mass 1, μ = 1, plastic: damping ratio 1) released
    on one bottom edge at the tilt θ0: its tilt about y and its lowest corner's height after
    each step, and the wall time."""
    import mujoco

    c, s = math.cos(THETA0), math.sin(THETA0)
    corner = min(((x * c - HB * s, -x * s - HB * c) for x in (B, -B)), key=lambda p: p[1])
    solref = f'solref="{2 * dt} 1" friction="1 0.005 0.0001"'
    xml = (f'<mujoco><option timestep="{dt}" gravity="0 0 -{G}" integrator="RK4" '
           f'cone="elliptic"/><worldbody><geom type="plane" size="5 5 .1" {solref}/>'
           f'<body pos="{-corner[0]} 0 {-corner[1]}" quat="{math.cos(THETA0 / 2)} 0 '
           f'{math.sin(THETA0 / 2)} 0"><freejoint/><geom type="box" size="{B} 0.1 {HB}" '
           f'mass="1" {solref}/></body></worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    n = int(round(t_end / dt))
    tilt, low = np.empty(n), np.empty(n)
    start = time.perf_counter()
    for k in range(n):
        mujoco.mj_step(model, data)
        tilt[k] = 2 * math.atan2(data.qpos[5], data.qpos[3])
        ct, st = math.cos(tilt[k]), math.sin(tilt[k])
        low[k] = min(data.qpos[2] - x * st - HB * ct for x in (B, -B))
    return tilt, low, time.perf_counter() - start


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
    start = time.perf_counter()
    trajectory = ball.simulate(parameters={"e": e}, t_end=2.0)
    wall = time.perf_counter() - start
    hit = np.flatnonzero(trajectory["impulse_floor"] != 0.0)[:5]
    apex = float(np.max(np.abs(trajectory["y_dot"][hit] ** 2 / (2 * G) - apexes)))
    depth = max(0.0, -float(trajectory["y"].min()))
    start = time.perf_counter()
    elastic = ball.simulate(parameters={"e": 1.0}, t_end=10.0)
    wall += time.perf_counter() - start
    energy = float(np.max(np.abs(elastic.energy - elastic.energy[0])) / elastic.energy[0])
    rows.append(("ball", "lagsim, exact impacts (DOP853, default tolerances)", apex, depth,
                 energy, wall))
    block = load(str(HERE.parent / "systems" / "rocking_block.yaml"))
    start = time.perf_counter()
    rocking = block.simulate(t_end=3.5, samples=3501)
    wall = time.perf_counter() - start
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
