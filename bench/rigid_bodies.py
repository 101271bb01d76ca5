"""Rigid bodies in 3-D (issue 24, "Goals, measured in bench/"): lagsim beside
sympy.physics.mechanics + scipy on the same models, side by side in one run.

    .venv/bin/python bench/rigid_bodies.py            # 5 repetitions of each figure
    .venv/bin/python bench/rigid_bodies.py --quick    # 3 repetitions, shorter runs

Three measures (about 1 minute on 2 shared cores; printed, and written by ``make bench`` to
bench/rigid_bodies_results.md):

1. Whole-process time of ``lagsim derive heavy_top`` against the 1 s goal, taking turns with
   ``lagsim derive heavy_top --form all`` (every form: the linear one searches the equilibrium
   nearest the start numerically), ``lagsim derive pendulum`` (the same imports, the smallest
   system), ``python -c "import
   sympy"`` and ``python -c "import sympy, symengine; x + y + z"`` (the floor of any command
   that imports both and builds one SymPy sum: SymPy 1.14 imports ``sympy.tensor.tensor``, and
   with it ``sympy.combinatorics``, inside the first ``Add`` with more than two terms, sympy
   issue #17658 for the polyhedra it builds). Bytecode is cached as for an installed lagsim: the
   children run without ``PYTHONDONTWRITEBYTECODE``, their bytecode in a temporary
   ``PYTHONPYCACHEPREFIX``, after one warm-up round. The table gives the median and fastest
   wall time, the median CPU time (user + system) of the process and the median wall time over
   that of ``import sympy``: on a shared machine read the ratios, not the absolute times.
2. Simulation at rtol = atol = 1e-10 (DOP853) of the torque-free body
   (bench/rigid_torque_free.yaml: quaternions, I = (1, 2, 3), spun near its intermediate axis, so
   it flips) and of the heavy top (systems/heavy_top.yaml), by ``lagsim.api`` (its compiled
   right-hand side and loop, the code cached after a warm-up run) and by the same models built
   with sympy.physics.mechanics and integrated by ``scipy.integrate.solve_ivp(DOP853)`` with the
   full mass matrix solved by ``numpy.linalg.solve`` at each evaluation (the PyDy pattern,
   ``lambdify(cse=True)``). The top is ``LagrangesMethod`` in the same ZXZ Euler angles; the
   free body is ``KanesMethod`` with the quaternion as coordinates and the body rates ω as
   generalized speeds, q̇ = ½ G(q)ᵀ ω (Schaub & Junkins §3.5), its usual form there (lagsim
   integrates e, ė with the constraint |e| = 1 and projection). Agreement: the largest
   difference of the state at the end (top), of the rotation matrix R and of ω in body axes
   (free body). The time is the median of the repetitions of each, taken in turns; lagsim's
   compile cache is a temporary folder (``LAGSIM_CACHE``), filled by the untimed warm-up run.
3. Operation count of the heavy top's M and F after common subexpressions: lagsim's, as its C
   code is generated (``Model.mass_matrix`` and ``forcing`` through ``symengine.cse``, as
   lagsim.numeric.ccompile does), those of the tidied model that ``derive`` prints, and
   sympy.physics.mechanics' ``LagrangesMethod`` and
   ``KanesMethod`` (u = q̇) M and F, each through ``symengine.cse`` and ``sympy.cse``, counted by
   ``sympy.count_ops`` over the replacements and the reduced expressions.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TOL = 1e-10
BUDGET_S = 1.0
FREE_BODY = HERE / "rigid_torque_free.yaml"
FREE_OMEGA = (0.1, 1.0, 0.2)
"""ω in body axes at the start, e = (1, 0, 0, 0): ė = ½ Gᵀ ω of the YAML file's initial rates."""
FREE_INERTIA = (1.0, 2.0, 3.0)


def _once(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, timeout=120)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def derive_times(reps: int) -> None:
    """Section 1: whole-process times, the commands taking turns."""
    py = sys.executable
    floor = ("import sympy, symengine; x, y, z = sympy.symbols('x y z'); x + y + z")
    commands = {
        "lagsim derive heavy_top": [py, "-m", "lagsim", "derive", "heavy_top"],
        "lagsim derive heavy_top --form all": [py, "-m", "lagsim", "derive", "heavy_top",
                                               "--form", "all"],
        "lagsim derive pendulum": [py, "-m", "lagsim", "derive", "pendulum"],
        'python -c "import sympy"': [py, "-c", "import sympy"],
        'python -c "import sympy, symengine; x + y + z"': [py, "-c", floor],
    }
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(HERE.parent), os.environ.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory() as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        for argv in commands.values():
            _once(argv, env)
        runs: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
        for _ in range(reps):
            for label, argv in commands.items():
                runs[label].append(_once(argv, env))
    base = statistics.median(w for w, _ in runs['python -c "import sympy"'])
    print(f"## 1. Whole-process time of derive (median of {reps}, taking turns, after a "
          "warm-up round)\n")
    print("| command | median wall s | fastest wall s | median CPU s | wall / import sympy |")
    print("|---|---:|---:|---:|---:|")
    for label, values in runs.items():
        walls = [w for w, _ in values]
        cpu = statistics.median(c for _, c in values)
        print(f"| `{label}` | {statistics.median(walls):.3f} | {min(walls):.3f} | {cpu:.3f} | "
              f"{statistics.median(walls) / base:.2f} |")
    heavy = [w for w, _ in runs["lagsim derive heavy_top"]]
    heavy_cpu = statistics.median(c for _, c in runs["lagsim derive heavy_top"])
    pendulum = statistics.median(w for w, _ in runs["lagsim derive pendulum"])
    floor_cpu = statistics.median(
        c for _, c in runs['python -c "import sympy, symengine; x + y + z"'])
    met = {label: "met" if value <= BUDGET_S else "not met"
           for label, value in (("wall", statistics.median(heavy)), ("cpu", heavy_cpu))}
    print(f"\nGoal `derive heavy_top` ≤ {BUDGET_S:g} s whole process: {met['wall']} by the median "
          f"wall time ({statistics.median(heavy):.3f} s; fastest {min(heavy):.3f} s), "
          f"{met['cpu']} by the median CPU time ({heavy_cpu:.3f} s); at a load average above "
          f"the {os.cpu_count()} cores every process here is slowed alike, and the ratios hold. "
          f"heavy_top / pendulum = {statistics.median(heavy) / pendulum:.2f} (wall). CPU of "
          f"heavy_top − CPU of the floor (import sympy and symengine, one sum) = "
          f"{heavy_cpu - floor_cpu:.3f} s: lagsim's own part, its modules, click and PyYAML, "
          "reading the file, the derivation, tidying and printing.\n")


def _median_time(run: Callable[[], Any], reps: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(reps):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def _lagsim_run(source: str, t_end: float) -> Callable[[], Any]:
    from lagsim import api

    system = api.open_system(source)

    def run() -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", api.LagsimWarning)
            return system.simulate(t_end=t_end, rtol=TOL, atol=TOL, method="DOP853", samples=2)

    return run


def _solve_ivp(mass: Callable, forcing: Callable, values: list[float], y0: Sequence[float],
               t_end: float) -> Callable[[], Any]:
    from scipy.integrate import solve_ivp

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        return np.linalg.solve(mass(y, values), forcing(y, values).ravel())

    def run() -> Any:
        return solve_ivp(rhs, (0.0, t_end), y0, method="DOP853", rtol=TOL, atol=TOL)

    return run


def mechanics_top() -> dict[str, Any]:
    """The heavy top of systems/heavy_top.yaml in sympy.physics.mechanics: body B turned from N
    by ZXZ (φ, θ, ψ), pivot O fixed, centre of mass at l along B.z, principal inertia
    (I1, I1, I3) about it, gravity −g N.z; ``LagrangesMethod`` and ``KanesMethod`` (u = q̇)."""
    import sympy as sm
    import sympy.physics.mechanics as me

    start = time.perf_counter()
    q = me.dynamicsymbols("phi theta psi")
    qd = [me.dynamicsymbols(f"{s}", 1) for s in ("phi", "theta", "psi")]
    m, g, l, I1, I3 = sm.symbols("m g l I1 I3")
    N = me.ReferenceFrame("N")
    B = me.ReferenceFrame("B")
    B.orient_body_fixed(N, q, "ZXZ")
    O = me.Point("O")
    O.set_vel(N, 0)
    G = O.locatenew("G", l * B.z)
    G.v2pt_theory(O, N, B)
    top = me.RigidBody("top", G, B, m, (me.inertia(B, I1, I1, I3), G))
    top.potential_energy = m * g * l * sm.cos(q[1])
    lm = me.LagrangesMethod(me.Lagrangian(N, top), q)
    lm.form_lagranges_equations()
    derive_s = time.perf_counter() - start
    u = me.dynamicsymbols("u1:4")
    B2 = me.ReferenceFrame("B2")
    B2.orient_body_fixed(N, q, "ZXZ")
    G2 = O.locatenew("G2", l * B2.z)
    G2.v2pt_theory(O, N, B2)
    top2 = me.RigidBody("top2", G2, B2, m, (me.inertia(B2, I1, I1, I3), G2))
    km = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[a - b for a, b in zip(qd, u)])
    km.kanes_equations([top2], [(G2, -m * g * N.z)])
    params = [m, g, l, I1, I3]
    plain = {v: sm.Symbol(f"{s}_dot") for v, s in zip(qd, ("phi", "theta", "psi"))}
    plain |= {c: sm.Symbol(str(c.func)) for c in (*q, *u)}
    state = [plain[c] for c in (*q, *qd)]
    M = lm.mass_matrix_full.xreplace(plain)
    F = lm.forcing_full.xreplace(plain)
    return {
        "derive_s": derive_s,
        "mass": sm.lambdify((state, params), M, cse=True),
        "forcing": sm.lambdify((state, params), F, cse=True),
        "lagrange": (lm.mass_matrix.xreplace(plain), lm.forcing.xreplace(plain)),
        "kane": (km.mass_matrix.xreplace(plain), km.forcing.xreplace(plain)),
    }


def mechanics_free_body() -> dict[str, Any]:
    """The torque-free body in sympy.physics.mechanics: B turned from N by the quaternion q
    (``orient_quaternion``, scalar first, the same R as lagsim's), ω = u₁B.x + u₂B.y + u₃B.z,
    q̇ = ½ G(q)ᵀ u, inertia (I1, I2, I3) about the fixed centre of mass; ``KanesMethod``."""
    import sympy as sm
    import sympy.physics.mechanics as me

    q = me.dynamicsymbols("q0:4")
    u = me.dynamicsymbols("u1:4")
    I1, I2, I3, m = sm.symbols("I1 I2 I3 m")
    N = me.ReferenceFrame("N")
    B = me.ReferenceFrame("B")
    B.orient_quaternion(N, q)
    B.set_ang_vel(N, u[0] * B.x + u[1] * B.y + u[2] * B.z)
    G = sm.Matrix([[-q[1], q[0], q[3], -q[2]], [-q[2], -q[3], q[0], q[1]],
                   [-q[3], q[2], -q[1], q[0]]])
    rates = G.T * sm.Matrix(u) / 2
    kde = [qi.diff(me.dynamicsymbols._t) - rates[i] for i, qi in enumerate(q)]
    O = me.Point("O")
    O.set_vel(N, 0)
    body = me.RigidBody("body", O, B, m, (me.inertia(B, I1, I2, I3), O))
    km = me.KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=kde)
    km.kanes_equations([body], [])
    plain = {c: sm.Symbol(str(c.func)) for c in (*q, *u)}
    state = [plain[c] for c in (*q, *u)]
    params = [I1, I2, I3, m]
    return {
        "mass": sm.lambdify((state, params), km.mass_matrix_full.xreplace(plain), cse=True),
        "forcing": sm.lambdify((state, params), km.forcing_full.xreplace(plain), cse=True),
        "R": sm.lambdify([state[:4]], N.dcm(B).xreplace(plain), cse=True),
    }


def quaternion_matrix(e: np.ndarray) -> np.ndarray:
    """R(e), body axes → space axes (Goldstein §4.5, the Euler–Rodrigues parameters)."""
    e0, e1, e2, e3 = e
    return np.array([
        [e0**2 + e1**2 - e2**2 - e3**2, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), e0**2 - e1**2 + e2**2 - e3**2, 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), e0**2 - e1**2 - e2**2 + e3**2]])


def body_rates(e: np.ndarray, ed: np.ndarray) -> np.ndarray:
    """ω = 2 G(e) ė in body axes (Schaub & Junkins §3.5)."""
    e0, e1, e2, e3 = e
    G = np.array([[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]])
    return 2 * G @ ed


def simulations(reps: int, t_free: float, t_top: float) -> dict[str, Any]:
    """Section 2; returns the peer's heavy-top model for section 3."""
    from lagsim import api

    rows = []
    top = mechanics_top()
    system = api.open_system("heavy_top")
    init = system.initial
    names = ("phi", "theta", "psi")
    y0 = [init[n] for n in names] + [init[f"{n}_dot"] for n in names]
    p = system.parameters
    ours = _lagsim_run("heavy_top", t_top)
    theirs = _solve_ivp(top["mass"], top["forcing"], [p[k] for k in ("m", "g", "l", "I1", "I3")],
                        y0, t_top)
    ours()
    theirs()
    a, b = [], []
    for _ in range(reps):
        a.append(_median_time(ours, 1))
        b.append(_median_time(theirs, 1))
    trajectory, solution = a[-1][1], b[-1][1]
    end = np.array([trajectory[c][-1] for c in (*names, *(f"{n}_dot" for n in names))])
    rows.append(("heavy top, ZXZ Euler angles", t_top, statistics.median(t for t, _ in a),
                 statistics.median(t for t, _ in b), solution.nfev,
                 f"state at the end: {np.max(np.abs(end - solution.y[:, -1])):.1e}"))

    free = mechanics_free_body()
    fsys = api.open_system(str(FREE_BODY))
    y0 = [1.0, 0.0, 0.0, 0.0, *FREE_OMEGA]
    start = fsys.initial
    e0 = np.array([start[f"e{i}"] for i in range(4)])
    ed0 = np.array([start[f"e{i}_dot"] for i in range(4)])
    assert np.allclose(body_rates(e0, ed0), FREE_OMEGA, atol=1e-15), "YAML start ≠ FREE_OMEGA"
    ours = _lagsim_run(str(FREE_BODY), t_free)
    theirs = _solve_ivp(free["mass"], free["forcing"], [*FREE_INERTIA, 1.0], y0, t_free)
    ours()
    theirs()
    a, b = [], []
    for _ in range(reps):
        a.append(_median_time(ours, 1))
        b.append(_median_time(theirs, 1))
    trajectory, solution = a[-1][1], b[-1][1]
    e = np.array([trajectory[f"e{i}"][-1] for i in range(4)])
    ed = np.array([trajectory[f"e{i}_dot"][-1] for i in range(4)])
    dR = np.max(np.abs(quaternion_matrix(e) - np.array(free["R"](solution.y[:4, -1]))))
    dw = np.max(np.abs(body_rates(e, ed) - solution.y[4:, -1]))
    rows.append(("torque-free body, quaternions", t_free, statistics.median(t for t, _ in a),
                 statistics.median(t for t, _ in b), solution.nfev,
                 f"R at the end: {dR:.1e}; ω: {dw:.1e}"))

    print(f"## 2. Simulation at rtol = atol = {TOL:g}, DOP853 (median of {reps}, taking turns)\n")
    print("| system | t_end | lagsim s | sympy.physics.mechanics + solve_ivp s | "
          "lagsim / peer | peer's RHS evaluations | largest difference |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for label, t_end, ta, tb, nfev, agree in rows:
        print(f"| {label} | {t_end:g} | {ta:.3f} | {tb:.3f} | {ta / tb:.3f} | {nfev} | "
              f"{agree} |")
    print(f"\nsympy.physics.mechanics derived the top's Lagrange equations in "
          f"{top['derive_s']:.2f} s in this process (SymPy already imported).\n")
    return top


def _ops(exprs: Sequence[Any], method: str) -> int:
    import symengine as se
    import sympy

    if method == "symengine":
        replacements, reduced = se.cse([se.sympify(x) for x in exprs])
        pieces = [sympy.sympify(v) for _, v in replacements] + [sympy.sympify(r) for r in reduced]
    else:
        replacements, reduced = sympy.cse([sympy.sympify(x) for x in exprs])
        pieces = [v for _, v in replacements] + list(reduced)
    return sum(sympy.count_ops(x) for x in pieces)


def operation_counts(top: dict[str, Any]) -> None:
    """Section 3."""
    from lagsim import api
    from lagsim.symbolic.model import tidy_model

    model = api.open_system("heavy_top").model
    tidy = tidy_model(model)
    sets = {
        "lagsim (M, F as compiled)": [*model.mass_matrix, *model.forcing],
        "lagsim, M, F of the tidied L that derive prints (not compiled today)": [
            *tidy.mass_matrix, *tidy.forcing],
        "sympy.physics.mechanics LagrangesMethod": [*top["lagrange"][0], *top["lagrange"][1]],
        "sympy.physics.mechanics KanesMethod (u = q̇)": [*top["kane"][0], *top["kane"][1]],
    }
    print("## 3. Operation count of the heavy top's M (3×3) and F (3) after common "
          "subexpressions\n")
    print("| model | ops without CSE | after symengine.cse | after sympy.cse |")
    print("|---|---:|---:|---:|")
    import sympy

    for label, exprs in sets.items():
        raw = sum(sympy.count_ops(sympy.sympify(x)) for x in exprs)
        print(f"| {label} | {raw} | {_ops(exprs, 'symengine')} | {_ops(exprs, 'sympy')} |")
    print("\nlagsim generates its C code from the symengine.cse column of its first row "
          "(lagsim.numeric.ccompile.c_function, on the model as derived); the second row is "
          "the same system after lagsim.symbolic.model.tidy_model (sin² + cos² = 1, angle "
          "sums), which `derive` prints. `sympy.count_ops` counts each + − × ÷, power and "
          "function call.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=None,
                        help="repetitions of each figure (default 5, 3 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="3 repetitions, the free body over 20 s instead of 100 s")
    args = parser.parse_args()
    reps = args.reps or (3 if args.quick else 5)
    load = os.getloadavg()
    print(f"Load average {load[0]:.1f} at the start ({os.cpu_count()} cores).\n")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["LAGSIM_CACHE"] = cache
        derive_times(reps)
        top = simulations(reps, t_free=20.0 if args.quick else 100.0, t_top=10.0)
        operation_counts(top)
    print(f"Load average {os.getloadavg()[0]:.1f} at the end.")


if __name__ == "__main__":
    main()
