"""Stiff systems and the analytic Jacobian (issue 9, "Stiff systems"), measured side by side.

    .venv/bin/python bench/stiff.py [--span 1.0] [--json]

Three systems, every method run in turns in one process through ``lagsim.run.integrate.simulate``
(rtol = atol = 1e-10, final sample only), each error against DOP853 at 1e-13:

(a) the issue's case: the bundled ``spring_pendulum`` with K = 1e6 over ``--span`` seconds
    (the issue's 2000 s extrapolated linearly: the motion is periodic), ``--stabilize none``
    (its constraints β = 0, z = 0 are linear; LSODA takes no projection). Its fast mode, the
    swing of θ in the stiff spring's well, is undamped and excited by the start (θ̇ reaches
    about 600 rad/s): every method must resolve it at 1e-10, so this system is oscillatory,
    not stiff.
(a') the same pendulum in θ alone (β = 0 and z = 0 substituted: unconstrained, formulation
    ``ode``), so that the C Radau loop applies to the issue's case.
(b) a stiff system: a pendulum on a critically damped stiff spring (K = 1e8, c = 2e4, radial
    eigenvalues about −10⁴, the swing about ±3i) over 20 s.

Each implicit method runs twice: with lagsim's analytic Jacobian and with scipy's finite
differences (``lagsim.numeric.jacobian.rhs_jacobian`` patched to return None), so the Jacobian's
share of the cost is measured rather than assumed. Radau with the analytic Jacobian runs once more:
in the C loop of ``lagsim.run.engines.cradau`` where it applies (formulation ``ode``: system (b);
(a) is constrained and stays in the Python loop), and in the Python loop (``radau_loop_for`` patched
to return None); the ``loop`` column says which ran. Steps and Jacobian evaluations are printed
beside the times.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from inline_systems import STIFF  # noqa: E402

from lagsim.run.engines import cradau, python  # noqa: E402
from lagsim.run.integrate import SimulateOptions, simulate  # noqa: E402
from lagsim.spec.system import load_spec, parse_spec  # noqa: E402
from lagsim.symbolic.model import build_model  # noqa: E402

ANGLE = """\
name: spring_pendulum_angle
parameters: {m: 1.0, g: 9.81, d: 1.0, K: 1.0e6, l0: 0.5}
coordinates: [theta]
masses:
  bob:
    mass: m
    position: [d*cos(theta), d*sin(theta), 0]
gravity: [g, 0, 0]
potential: 1/2*K*(sqrt((d*cos(theta))**2 + (d*sin(theta) - d)**2) - l0)**2
initial: {theta: 0.3}
"""
"""systems/spring_pendulum.yaml with its constraints β = 0, z = 0 substituted (system (a'))."""

RUNS = (("DOP853", True, True), ("Radau", True, True), ("Radau", True, False),
        ("Radau", False, False), ("BDF", True, False), ("BDF", False, False),
        ("LSODA", True, False), ("LSODA", False, False))
"""(method, analytic Jacobian, C Radau loop allowed): Radau with the analytic Jacobian runs
twice, in lagsim.run.engines.cradau's C loop (where the formulation is ode) and in the Python
loop."""


def run(spec: Any, model: Any, method: str, analytic: bool, c_radau: bool, t_end: float,
        tol: float = 1e-10) -> dict[str, Any]:
    """One run: wall time, final state, accepted steps (rows of a dense run are not taken)."""
    options = SimulateOptions.resolve(spec.simulate, {
        "method": method, "t_end": t_end, "samples": 2, "rtol": tol, "atol": tol,
        "stabilize": "none"})
    original, original_loop = python.rhs_jacobian, cradau.loop_or_refusal
    used = []

    def loop_or_refusal(problem: Any) -> Any:
        loop = original_loop(problem) if c_radau else "not allowed in this run"
        used.append(not isinstance(loop, str))
        return loop

    cradau.loop_or_refusal = loop_or_refusal
    if not analytic:
        python.rhs_jacobian = lambda form, model: None
    try:
        start = time.perf_counter()
        trajectory = simulate(spec, model, options)
        seconds = time.perf_counter() - start
    finally:
        python.rhs_jacobian, cradau.loop_or_refusal = original, original_loop
    label = ("analytic" if analytic else "differences") if method != "DOP853" else "-"
    loop = "C" if method == "DOP853" or any(used) else "Python"
    return {"method": method, "jacobian": label, "loop": loop,
            "seconds": seconds, "final": [*trajectory.q[-1], *trajectory.qd[-1]]}


def measure(name: str, spec: Any, t_end: float, scale: float) -> dict[str, Any]:
    model = build_model(spec)
    for method, analytic, c_radau in RUNS:  # warm-up: compile the model and Jacobian once
        run(spec, model, method, analytic, c_radau, min(t_end, 0.01))
    reference = run(spec, model, "DOP853", True, True, t_end, 1e-13)["final"]
    rows = []
    for method, analytic, c_radau in RUNS:
        row = run(spec, model, method, analytic, c_radau, t_end)
        row["error"] = max(abs(a - b) for a, b in zip(row["final"], reference))
        row["extrapolated_s"] = row["seconds"] * scale
        rows.append(row)
    base = rows[0]["seconds"]
    for row in rows:
        row["vs_dop853"] = base / row["seconds"]
    return {"system": name, "t_end": t_end, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--span", type=float, default=1.0,
                        help="seconds of the K = 1e6 spring pendulum to run (default 1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    oscillatory = load_spec("spring_pendulum", {"K": 1e6})
    results = [
        measure("spring_pendulum K=1e6 (undamped fast mode)", oscillatory, args.span,
                2000.0 / args.span),
        measure("spring_pendulum K=1e6 in theta alone (unconstrained)",
                parse_spec(ANGLE, "spring_pendulum_angle.yaml"), args.span, 2000.0 / args.span),
        measure("damped stiff spring pendulum K=1e8, c=2e4", parse_spec(STIFF, "stiff.yaml"),
                20.0, 1.0),
    ]
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for result in results:
        print(f"\n{result['system']}, {result['t_end']} s, rtol = atol = 1e-10")
        print(f"{'method':8} {'Jacobian':12} {'loop':6} {'time s':>9} {'×DOP853 speed':>14} "
              f"{'2000 s est.':>12} {'error':>9}")
        for row in result["rows"]:
            print(f"{row['method']:8} {row['jacobian']:12} {row['loop']:6} {row['seconds']:9.3f} "
                  f"{row['vs_dop853']:14.2f} {row['extrapolated_s']:12.0f} {row['error']:9.2e}")


if __name__ == "__main__":
    main()
