"""Forward sensitivities against a plain run, central differences and CasADi IDAS (issue 26,
"Goals, measured side by side in one run").

    .venv/bin/python bench/sensitivity.py            # double pendulum, 15 interleaved repeats
    .venv/bin/python bench/sensitivity.py --quick    # 3 repeats

1. Cost. The double pendulum (``systems/double_pendulum.yaml``, chaotic) over ``--t-end``
   (10 s, 201 samples, the default tolerances), through ``System.simulate`` as a fit pays it:
   a plain run, runs with p = 1, 2, 3 sensitivities (``l1``, ``m2``, ``theta1``) and the 2p + 1
   plain runs of central differences, each the median of interleaved repeats (wall time, and CPU
   time, which a loaded machine disturbs less), with each error control (``sensitivity_errors``:
   ``joint``, the sensitivities measured with the state, or ``state``, the state alone). The
   goal: sensitivities ≤ (1 + p) × the plain run and faster than the differences. The same for
   the C loop alone over 100 s (the run's fixed costs left out: the loop's own ratio), and for
   A01, the pendulum in natural coordinates (index1 with projection: the sensitivities projected
   onto the constraints' tangent each step).
2. Agreement. The sensitivities (rtol = atol = 1e-12, 2 s) against Richardson-extrapolated
   central differences of whole runs (tests/test_sensitivities.py's method): the largest
   difference relative to each column's size.
3. CasADi. The same double pendulum built in CasADi from its Lagrangian (M = ∂²T/∂q̇², the
   Euler–Lagrange right-hand side), integrated by IDAS with the parameters (l1, m2) as ``p``;
   its forward sensitivities are the Jacobian of the final state with respect to p (CasADi's
   forward sensitivity equations in IDAS, Hindmarsh et al., "SUNDIALS", ACM TOMS 31 (2005) §2).
   Times of a plain IDAS run and of the sensitivity run beside lagsim's at the same tolerance,
   and the agreement of the final sensitivities. Skipped with one line without casadi
   (``pip install -e '.[bench]'``).
4. CasADi on the natural-coordinate chain: A01 (``systems/a01_pendulum.yaml``) as CasADi's
   index-1 DAE for IDAS (the multiplier algebraic, the constraint at the acceleration level),
   forward sensitivities of (l, g) beside lagsim's index1 + projection run with each error
   control: times and the agreement of the final sensitivities.

Printed as Markdown (``make bench`` writes it to bench/sensitivity_results.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import warnings
from collections.abc import Callable

import numpy as np
from timing import interleaved

import lagsim
from lagsim import naming

NAMES = ("l1", "m2", "theta1")
ERRORS = ("joint", "state")


def timed(jobs: dict[str, Callable[[], object]], reps: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each job, the jobs interleaved repeat by repeat."""
    times = interleaved(jobs, reps)
    return {k: (statistics.median(v["wall"]), statistics.median(v["cpu"]))
            for k, v in times.items()}


def differences(system: lagsim.System, names: tuple[str, ...], **run: float) -> None:
    """The 2p + 1 plain runs of central differences (their values are not needed here)."""
    system.simulate(**run)
    for name in names:
        for sign in (1.0, -1.0):
            if name in system.parameters:
                value = system.parameters[name]
                system.simulate(parameters={name: value * (1 + sign * 1e-6)}, **run)
            else:
                initial = dict(system.initial)
                initial[name] = initial[name] + sign * 1e-6
                system.simulate(initial=initial, **run)


def section_cost(system: lagsim.System, reps: int, t_end: float) -> None:
    run = dict(t_end=t_end, samples=201)
    jobs: dict[str, Callable[[], object]] = {"plain": lambda: system.simulate(**run)}
    for p in (1, 2, 3):
        names = NAMES[:p]
        for mode in ERRORS:
            jobs[f"sens{p}{mode}"] = (lambda names=names, mode=mode: system.simulate(
                sensitivities=list(names), sensitivity_errors=mode, **run))
        jobs[f"diff{p}"] = lambda names=names: differences(system, names, **run)
    got = timed(jobs, reps)
    plain_wall, plain_cpu = got["plain"]
    print(f"## 1. Cost: double pendulum, {t_end:g} s, 201 samples, System.simulate\n")
    print(f"Median of {reps} interleaved repeats; plain run {plain_wall * 1e3:.2f} ms wall, "
          f"{plain_cpu * 1e3:.2f} ms CPU.\n")
    print("| p | error control | sensitivities ms (CPU) | ÷ plain (CPU) | goal 1 + p | central "
          "differences ms (CPU) | sensitivities ÷ differences (CPU) |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for p in (1, 2, 3):
        dw, dc = got[f"diff{p}"]
        for mode in ERRORS:
            sw, sc = got[f"sens{p}{mode}"]
            print(f"| {p} | {mode} | {sw * 1e3:.2f} ({sc * 1e3:.2f}) | {sw / plain_wall:.2f} "
                  f"({sc / plain_cpu:.2f}) | {1 + p} | {dw * 1e3:.2f} ({dc * 1e3:.2f}) | "
                  f"{sw / dw:.2f} ({sc / dc:.2f}) |")
    print()


def section_loop(reps: int, t_end: float, name: str = "double_pendulum",
                 names: tuple[str, ...] = NAMES) -> None:
    from lagsim.run.engines import cloop
    from lagsim.run.problem import Problem
    from lagsim.spec.options import SimulateOptions
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import build_model

    spec = load_spec(name)
    model = build_model(spec)
    loops: dict[str, Callable[[], object]] = {}
    steps: dict[str, int] = {}
    keys = ["0"] + [f"{p}{mode}" for p in (1, 2, 3) for mode in ERRORS]
    for key in keys:
        p = int(key[0])
        flags: dict[str, object] = {"t_end": t_end, "samples": 201}
        if p:
            flags["sensitivities"] = names[:p]
            flags["sensitivity_errors"] = key[1:]
        problem = Problem.build(spec, model, SimulateOptions.resolve(spec.simulate, flags))

        def job(problem: Problem = problem, key: str = key) -> None:
            loop = cloop.loop_for(problem)
            assert loop is not None
            loop.run()
            steps[key] = loop.steps

        loops[key] = job
    got = timed(loops, reps)
    base = got["0"]
    print(f"## The C loop alone: {name}, {t_end:g} s, sensitivities of "
          f"{', '.join(names)} in turn\n")
    print("| p | error control | loop ms (CPU) | ÷ plain (CPU) | goal 1 + p | accepted steps |")
    print("|---:|---|---:|---:|---:|---:|")
    print(f"| 0 | — | {base[0] * 1e3:.2f} ({base[1] * 1e3:.2f}) | 1.00 (1.00) | 1 | "
          f"{steps['0']} |")
    for key in keys[1:]:
        w, c = got[key]
        print(f"| {key[0]} | {key[1:]} | {w * 1e3:.2f} ({c * 1e3:.2f}) | {w / base[0]:.2f} "
              f"({c / base[1]:.2f}) | {1 + int(key[0])} | {steps[key]} |")
    print("\njoint: the error norm covers the sensitivities too (CVODES's default), so the run "
          "takes the steps they need; state: the norm covers the state alone (CVODES's errconS "
          "off), the steps of the plain run.\n")


def section_agreement(system: lagsim.System) -> None:
    run = dict(t_end=2.0, samples=11, rtol=1e-12, atol=1e-12)
    exact = system.simulate(sensitivities=list(NAMES), **run)
    columns = [c for c in exact.columns if c in ("theta1", "theta2", "theta1_dot",
                                                  "theta2_dot")]
    print("## 2. Agreement with Richardson central differences (rtol = atol = 1e-12, 2 s)\n")
    print("| name | largest difference ÷ column size |")
    print("|---|---:|")
    for name in NAMES:
        h = 1e-3 * max(1.0, abs(system.parameters.get(name, 0.0)))

        def runs(step: float, name: str = name) -> dict[str, np.ndarray]:
            if name in system.parameters:
                v = system.parameters[name]
                up = system.simulate(parameters={name: v + step}, **run)
                down = system.simulate(parameters={name: v - step}, **run)
            else:
                v = dict(system.initial)[name]
                up = system.simulate(initial={**system.initial, name: v + step}, **run)
                down = system.simulate(initial={**system.initial, name: v - step}, **run)
            return {c: (np.asarray(up[c]) - np.asarray(down[c])) / (2 * step) for c in columns}

        wide, narrow = runs(h), runs(h / 2)
        worst = 0.0
        for c in columns:
            want = (4 * narrow[c] - wide[c]) / 3
            got = np.asarray(exact[naming.sensitivity(c, name)])
            worst = max(worst, float(np.abs(got - want).max() / np.abs(want).max()))
        print(f"| {name} | {worst:.1e} |")
    print()


def casadi_pendulum(t_end: float, tol: float) -> tuple[Callable[[], np.ndarray],
                                                         Callable[[], np.ndarray]] | None:
    """(plain run → final state, sensitivity run → d(final state)/d(l1, m2)) by CasADi IDAS."""
    try:
        import casadi as ca
    except ImportError:
        return None
    q, qd = ca.SX.sym("q", 2), ca.SX.sym("qd", 2)
    p = ca.SX.sym("p", 2)
    l1, m2 = p[0], p[1]
    m1, l2, g = 1.0, 1.0, 9.81
    x1, y1 = l1 * ca.sin(q[0]), -l1 * ca.cos(q[0])
    x2, y2 = x1 + l2 * ca.sin(q[1]), y1 - l2 * ca.cos(q[1])
    v1 = ca.jtimes(ca.vertcat(x1, y1), q, qd)
    v2 = ca.jtimes(ca.vertcat(x2, y2), q, qd)
    T = 0.5 * m1 * ca.dot(v1, v1) + 0.5 * m2 * ca.dot(v2, v2)
    U = g * (m1 * y1 + m2 * y2)
    L = T - U
    M = ca.hessian(T, qd)[0]
    dLdqd = ca.gradient(L, qd)
    F = ca.gradient(L, q) - ca.jtimes(dLdqd, q, qd)
    qdd = ca.solve(M, F)
    ode = {"x": ca.vertcat(q, qd), "p": p, "ode": ca.vertcat(qd, qdd)}
    opts = {"abstol": tol, "reltol": tol, "max_num_steps": 10**7}
    integ = ca.integrator("dp", "idas", ode, 0.0, t_end, opts)
    x0 = np.array([2 * np.pi / 3, 2 * np.pi / 3, 0.0, 0.0])
    p0 = np.array([1.0, 1.0])
    jac = integ.factory("sens", ["x0", "p"], ["jac:xf:p"])

    def plain() -> np.ndarray:
        return np.array(integ(x0=x0, p=p0)["xf"]).ravel()

    def sens() -> np.ndarray:
        return np.array(jac(x0, p0)).reshape(4, 2)

    return plain, sens


def section_casadi(system: lagsim.System, reps: int, t_end: float, tol: float) -> None:
    made = casadi_pendulum(t_end, tol)
    print(f"## 3. CasADi IDAS: double pendulum, {t_end:g} s, rtol = atol = {tol:g}\n")
    if made is None:
        print("casadi is not installed: not measured (pip install -e '.[bench]').\n")
        return
    plain, sens = made
    run = dict(t_end=t_end, samples=2, rtol=tol, atol=tol)
    names = ["l1", "m2"]
    got = timed({
        "lagsim plain": lambda: system.simulate(**run),
        "lagsim sens": lambda: system.simulate(sensitivities=names, **run),
        "idas plain": plain,
        "idas sens": sens,
    }, reps)
    ours = system.simulate(sensitivities=names, **run)
    states = ("theta1", "theta2", "theta1_dot", "theta2_dot")
    mine = np.array([[ours[naming.sensitivity(c, s)][-1] for s in names] for c in states])
    theirs = sens()
    worst = float(np.abs(mine - theirs).max() / np.abs(theirs).max())
    final = float(np.abs(np.array([ours[c][-1] for c in states]) - plain()).max())
    print("| what | wall ms (CPU) | ÷ its plain run (CPU) |")
    print("|---|---:|---:|")
    for tool in ("lagsim", "idas"):
        pw, pc = got[f"{tool} plain"]
        sw, sc = got[f"{tool} sens"]
        label = "lagsim (C DOP853)" if tool == "lagsim" else "CasADi IDAS"
        print(f"| {label}, plain | {pw * 1e3:.2f} ({pc * 1e3:.2f}) | 1 |")
        print(f"| {label}, 2 sensitivities | {sw * 1e3:.2f} ({sc * 1e3:.2f}) | "
              f"{sw / pw:.2f} ({sc / pc:.2f}) |")
    lw, lc = got["lagsim sens"]
    iw, ic = got["idas sens"]
    print(f"\nlagsim's sensitivity run ÷ CasADi IDAS's: {lw / iw:.2f} wall ({lc / ic:.2f} CPU).")
    print(f"Final state, lagsim − IDAS: {final:.1e} (absolute); final sensitivities d(state)/d"
          f"(l1, m2): largest difference ÷ largest value {worst:.1e}.\n")


def casadi_a01(t_end: float, tol: float) -> tuple[Callable[[], np.ndarray],
                                                   Callable[[], np.ndarray]] | None:
    """A01 in natural coordinates as CasADi's index-1 DAE for IDAS: x = (x, y, ẋ, ẏ), the
    algebraic λ of the rod, m ẍ = 2xλ, m ÿ = −m g + 2yλ and the constraint at the acceleration
    level x ẍ + y ÿ + ẋ² + ẏ² = 0 (φ = x² + y² − l², seed 001 §10.7), started at (l, 0) at rest;
    p = (l, g), the start depending on l. (plain run → final state, sensitivity run →
    d(final state)/d(l, g)); no projection, so IDAS drifts off φ = 0 by its tolerance."""
    try:
        import casadi as ca
    except ImportError:
        return None
    q, v, lam = ca.SX.sym("q", 2), ca.SX.sym("v", 2), ca.SX.sym("lam")
    p = ca.SX.sym("p", 2)
    g, m = p[1], 1.0
    acc = ca.vertcat(2 * q[0] * lam / m, -g + 2 * q[1] * lam / m)
    dae = {"x": ca.vertcat(q, v), "z": lam, "p": p, "ode": ca.vertcat(v, acc),
           "alg": q[0] * acc[0] + q[1] * acc[1] + ca.dot(v, v)}
    integ = ca.integrator("a01", "idas", dae, 0.0, t_end,
                          {"abstol": tol, "reltol": tol, "max_num_steps": 10**7})
    P = ca.MX.sym("P", 2)
    xf = integ(x0=ca.vertcat(P[0], 0, 0, 0), z0=0, p=P)["xf"]
    plain_f = ca.Function("plain", [P], [xf])
    sens_f = ca.Function("sens", [P], [ca.jacobian(xf, P)])
    p0 = np.array([1.0, 9.81])

    def plain() -> np.ndarray:
        return np.array(plain_f(p0)).ravel()

    def sens() -> np.ndarray:
        return np.array(sens_f(p0)).reshape(4, 2)

    return plain, sens


def section_casadi_a01(reps: int, t_end: float, tol: float) -> None:
    made = casadi_a01(t_end, tol)
    print(f"## 4. CasADi IDAS on A01 in natural coordinates (a DAE), {t_end:g} s, rtol = atol = "
          f"{tol:g}, sensitivities of l and g\n")
    if made is None:
        print("casadi is not installed: not measured (pip install -e '.[bench]').\n")
        return
    plain, sens = made
    system = lagsim.load("a01_pendulum")
    run = dict(t_end=t_end, samples=2, rtol=tol, atol=tol)
    names = ["l", "g"]
    jobs: dict[str, Callable[[], object]] = {"lagsim plain": lambda: system.simulate(**run)}
    for mode in ERRORS:
        jobs[f"lagsim {mode}"] = (lambda mode=mode: system.simulate(
            sensitivities=names, sensitivity_errors=mode, **run))
    jobs["idas plain"] = plain
    jobs["idas sens"] = sens
    got = timed(jobs, reps)
    states = ("x", "y", "x_dot", "y_dot")
    theirs = sens()
    print("| what | wall ms (CPU) | ÷ its plain run (CPU) | final d(state)/d(l, g) − IDAS's, "
          "÷ largest |")
    print("|---|---:|---:|---:|")
    pw, pc = got["lagsim plain"]
    print(f"| lagsim (C DOP853, index1 + projection), plain | {pw * 1e3:.2f} ({pc * 1e3:.2f}) | "
          "1 | |")
    for mode in ERRORS:
        ours = system.simulate(sensitivities=names, sensitivity_errors=mode, **run)
        mine = np.array([[ours[naming.sensitivity(c, s)][-1] for s in names] for c in states])
        worst = float(np.abs(mine - theirs).max() / np.abs(theirs).max())
        sw, sc = got[f"lagsim {mode}"]
        print(f"| lagsim, 2 sensitivities, {mode} error control | {sw * 1e3:.2f} "
              f"({sc * 1e3:.2f}) | {sw / pw:.2f} ({sc / pc:.2f}) | {worst:.1e} |")
    iw, ic = got["idas plain"]
    sw, sc = got["idas sens"]
    print(f"| CasADi IDAS (index-1 DAE), plain | {iw * 1e3:.2f} ({ic * 1e3:.2f}) | 1 | |")
    print(f"| CasADi IDAS, 2 sensitivities | {sw * 1e3:.2f} ({sc * 1e3:.2f}) | {sw / iw:.2f} "
          f"({sc / ic:.2f}) | 0 |")
    ours = system.simulate(**run)
    final = float(np.abs(np.array([ours[c][-1] for c in states]) - plain()).max())
    lw = min(got[f"lagsim {mode}"][0] for mode in ERRORS)
    print(f"\nlagsim's faster sensitivity run ÷ CasADi IDAS's: {lw / sw:.2f} wall. Final state, "
          f"lagsim − IDAS: {final:.1e} (absolute).\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--t-end", type=float, default=10.0)
    args = parser.parse_args()
    reps = 3 if args.quick else args.reps
    warnings.simplefilter("ignore")
    print("# Forward sensitivities: cost and agreement (issue 26)\n")
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)\n")
    system = lagsim.load("double_pendulum")
    section_cost(system, reps, args.t_end)
    section_loop(reps, 10 * args.t_end)
    section_loop(reps, 10 * args.t_end, "a01_pendulum", ("l", "g", "m"))
    section_agreement(system)
    section_casadi(system, reps, 5.0, 1e-10)
    section_casadi_a01(reps, 5.0, 1e-10)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
