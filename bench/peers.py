"""lagsim against Pinocchio, MuJoCo, PyDy and CasADi's CVODES on the planar n-pendulum chain
(issues 17 and 31), side by side.

    .venv/bin/python bench/peers.py [--sizes 2 8 32] [--reps 5] [--pydy-max 32] [--casadi-max 32]

Needs the optional peers (``pip install -e '.[bench]'``: ``pin``, ``mujoco``, ``pydy``,
``casadi``); a peer that is not installed is left out of the tables and named. The chain is
``lagsim.spec.chains``' (n point masses m = 1 on massless rods l = 1, g = 9.81, every rod at
0.5 rad, at rest). Pinocchio gets the same chain as revolute joints about z with the point masses
at the rod ends (relative angles φ_k = θ_k − θ_{k−1}); MuJoCo as hinge bodies with the masses at
the rod ends and a negligible rotational inertia (1e-9, MuJoCo requires one). PyDy gets
``bench/anchor_sympy.py``'s ``KanesMethod`` of the chain (absolute angles, u = q̇, the sympy Kane
anchor) through ``pydy.codegen.ode_function_generators.generate_ode_function`` with its fastest
backend here, ``cython`` (M and F generated as C, ``numpy.linalg.solve`` in the RHS; ``lambdify``
when Cython is not installed, and the tables say which). CasADi gets the chain's Lagrangian in SX,
M = ∂²T/∂v², F = ∂L/∂q − (∂²L/∂v∂q) v, q̈ = ``casadi.solve(M, F)`` (SX's own symbolic solve, as
``bench/build.py``'s CasADi run) and ``integrator("chain", "cvodes", ...)`` evaluating it in
CasADi's SX virtual machine (no code generation), once with CVODES' default BDF + Newton and once
with Adams + functional iteration (the usual choice for a non-stiff problem). PyDy and CasADi's
symbolic builds grow fast with n (Kane + Cython about 15 s at n = 16, CasADi's SX solve 10 s and
0.5 GB at n = 32): beyond ``--pydy-max`` and ``--casadi-max`` they are not built (a line says so).

Measured in turns, each figure the minimum over batches (the least disturbed by other work on the
machine; the right-hand sides in 3 × 10 × ``--reps`` short batches of about a millisecond, so that
some batch runs between the other processes of a loaded machine):
- RHS from Python: y' = [v, q̈] of one state, lagsim's compiled right-hand side against
  ``pinocchio.aba`` + the concatenation and ``mujoco.mj_forward`` + the concatenation;
- RHS from Python: also PyDy's generated ``rhs(y, t, p)`` called as ``solve_ivp`` calls it;
- simulate 10 s at rtol = atol = 1e-10: ``lagsim.run.integrate.simulate`` (DOP853, 2 samples)
  against ``scipy.integrate.solve_ivp(DOP853)`` on Pinocchio's ABA and on PyDy's RHS, and
  against CasADi's CVODES integrator (BDF and Adams), the runs taking turns, each the fastest of
  its turns after an untimed one; the distance of each peer's last bob at 10 s from lagsim's is
  printed, so the runs are seen to agree (CVODES' error at the same tolerances is its own: a
  multistep method).

Ratios are the peer's time over lagsim's (above 1: lagsim is faster), recorded for
``bench/goals.py`` (``--json``); wall time as before, the trajectories' CPU-time ratio printed
beside; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

try:
    import anchor_sympy
    import ratios
except ImportError:  # imported as bench.peers (tests)
    from bench import anchor_sympy, ratios

from lagsim.numeric.compile import compile_model  # noqa: E402
from lagsim.run.integrate import SimulateOptions, simulate  # noqa: E402
from lagsim.spec.chains import chain_yaml  # noqa: E402
from lagsim.spec.system import parse_spec  # noqa: E402
from lagsim.symbolic.model import build_model  # noqa: E402

ANGLE, T_END, TOL = 0.5, 10.0, 1e-10


def best(call, batch: int, reps: int) -> float:
    """Seconds per call: the minimum over ``reps`` batches of ``batch`` calls."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(batch):
            call()
        times.append((time.perf_counter() - start) / batch)
    return min(times)


def pinocchio_chain(n: int):
    import pinocchio as pin

    model = pin.Model()
    parent = 0
    for k in range(n):
        placement = pin.SE3.Identity() if k == 0 else pin.SE3(np.eye(3), np.array([0.0, -1, 0]))
        joint = model.addJoint(parent, pin.JointModelRZ(), placement, f"j{k + 1}")
        model.appendBodyToJoint(joint, pin.Inertia(1.0, np.array([0.0, -1, 0]),
                                                   np.zeros((3, 3))), pin.SE3.Identity())
        parent = joint
    model.gravity.linear = np.array([0.0, -9.81, 0.0])
    data = model.createData()
    tau = np.zeros(n)

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        return np.concatenate((y[n:], pin.aba(model, data, y[:n], y[n:], tau)))

    return rhs


def mujoco_chain(n: int):
    import mujoco

    body = ""
    for k in reversed(range(n)):
        pos = "0 0 0" if k == 0 else "0 -1 0"
        body = (f'<body name="b{k + 1}" pos="{pos}"><joint name="j{k + 1}" type="hinge" '
                f'axis="0 0 1"/><inertial pos="0 -1 0" mass="1" '
                f'diaginertia="1e-9 1e-9 1e-9"/>{body}</body>')
    xml = (f'<mujoco><option gravity="0 -9.81 0"><flag contact="disable"/></option>'
           f'<worldbody>{body}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        data.qpos[:] = y[:n]
        data.qvel[:] = y[n:]
        mujoco.mj_forward(model, data)
        return np.concatenate((y[n:], data.qacc))

    return rhs


PYDY_MAX = CASADI_MAX = 32
"""The largest n PyDy and CasADi are built for by default (their symbolic builds grow fast)."""
CVODES = {"bdf": {}, "adams": {"linear_multistep_method": "adams",
                              "nonlinear_solver_iteration": "functional"}}
"""CVODES' methods timed: its default (BDF, Newton) and Adams with functional iteration."""


def pydy_generator() -> str:
    """PyDy's fastest backend installed here: ``cython`` when Cython imports, else ``lambdify``
    (``theano`` is not maintained for Python 3.11)."""
    return "cython" if importlib.util.find_spec("Cython") is not None else "lambdify"


def pydy_chain(n: int, generator: str) -> Callable[[float, np.ndarray], np.ndarray]:
    """PyDy's right-hand side of the n-chain in absolute angles (lagsim's coordinates), from
    ``anchor_sympy``'s ``KanesMethod``: ``generate_ode_function(forcing, q, u, constants,
    mass_matrix=M, coordinate_derivatives=u)`` (PyDy's own way from a ``KanesMethod``; the
    constants m, l, g in that order), called as ``solve_ivp`` calls it. PyDy's function returns
    one array that it overwrites at every call (made for ``odeint``, which copies it);
    ``solve_ivp`` keeps the arrays it is given (DOP853's stages), so the result is copied: without
    the copy the run takes 5× the calls and ends 3e-8 away."""
    import sympy
    from pydy.codegen.ode_function_generators import generate_ode_function

    problem = anchor_sympy.setup(n, "kane")
    kane = anchor_sympy.form(problem)
    ode = generate_ode_function(kane.forcing, problem.q, problem.u, problem.constants,
                                mass_matrix=kane.mass_matrix,
                                coordinate_derivatives=sympy.Matrix(problem.u),
                                generator=generator)
    values = np.array([anchor_sympy.PARAMS[str(c)] for c in problem.constants])

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        return ode(y, t, values).copy()

    return rhs


def casadi_chain(n: int):
    """The n-chain's ODE in CasADi SX, as a CasADi user writes it: the Lagrangian of the
    point masses, M = ∂²T/∂v², F = ∂L/∂q − (∂²L/∂v∂q) v and q̈ = ``solve(M, F)`` (SX's symbolic
    solve); ``(x, ode)`` with x = (q, v), q the absolute angles."""
    import casadi as ca

    q = ca.SX.sym("q", n)
    v = ca.SX.sym("v", n)
    m, length, g = (anchor_sympy.PARAMS[k] for k in ("m", "l", "g"))
    x = y = 0
    kinetic = potential = 0
    for k in range(n):
        x = x + length * ca.sin(q[k])
        y = y - length * ca.cos(q[k])
        xd, yd = ca.jtimes(x, q, v), ca.jtimes(y, q, v)
        kinetic = kinetic + 0.5 * m * (xd**2 + yd**2)
        potential = potential + m * g * y
        lagrangian = kinetic - potential
    mass = ca.hessian(kinetic, v)[0]
    force = ca.gradient(lagrangian, q) - ca.mtimes(ca.jacobian(ca.gradient(lagrangian, v), q), v)
    return ca.vertcat(q, v), ca.vertcat(v, ca.solve(mass, force))


def cvodes_chain(n: int, method: str) -> Callable[[np.ndarray], np.ndarray]:
    """CasADi's CVODES over 10 s at rtol = atol = 1e-10 on :func:`casadi_chain`, with the
    options of ``CVODES[method]``: y(0) → y(10 s)."""
    import casadi as ca

    x, ode = casadi_chain(n)
    integ = ca.integrator("chain", "cvodes", {"x": x, "ode": ode}, 0.0, T_END,
                          {"abstol": TOL, "reltol": TOL, "max_num_steps": 10**7,
                           **CVODES[method]})

    def run(y0: np.ndarray) -> np.ndarray:
        return np.array(integ(x0=y0)["xf"]).ravel()

    return run


def relative(theta: np.ndarray) -> np.ndarray:
    return np.diff(np.concatenate(([0.0], theta)))


def last_bob(absolute: np.ndarray) -> np.ndarray:
    return np.array([np.sin(absolute).sum(), -np.cos(absolute).sum()])


@dataclass(frozen=True)
class Peer:
    """A peer's right-hand side ``rhs(t, y)`` and its angles: absolute (lagsim's) or relative
    (joint angles φ_k = θ_k − θ_{k−1})."""

    name: str
    rhs: Callable[[float, np.ndarray], np.ndarray]
    absolute: bool

    def start(self, theta: np.ndarray) -> np.ndarray:
        return np.concatenate((theta if self.absolute else relative(theta),
                               np.zeros(theta.size)))

    def angles(self, y: np.ndarray, n: int) -> np.ndarray:
        """The absolute angles of state ``y``."""
        return y[:n] if self.absolute else np.cumsum(y[:n])


def installed() -> tuple[dict[str, Callable[[int], Peer]], bool, str]:
    """The right-hand-side peers that import, whether CasADi does, and PyDy's backend; a line on
    stderr names each one missing."""
    def missing(name: str, why: object) -> None:
        print(f"{name} is not installed ({why}); pip install -e '.[bench]'", file=sys.stderr)

    makers: dict[str, Callable[[int], Peer]] = {}
    for name, make in (("pinocchio", pinocchio_chain), ("mujoco", mujoco_chain)):
        try:
            make(1)
            makers[name] = lambda n, make=make, name=name: Peer(name, make(n), False)
        except ImportError as exc:
            missing(name, exc)
    generator = pydy_generator()
    if importlib.util.find_spec("pydy") is None:
        missing("pydy", "no module named 'pydy'")
    else:
        makers["pydy"] = lambda n: Peer("pydy", pydy_chain(n, generator), True)
    has_casadi = importlib.util.find_spec("casadi") is not None
    if not has_casadi:
        missing("casadi", "no module named 'casadi'")
    return makers, has_casadi, generator


def trajectories(spec, model, peers: dict[str, Peer],
                 cvodes: dict[str, Callable[[np.ndarray], np.ndarray]], turns: int
                 ) -> tuple[dict[str, float], dict[str, float], dict[str, np.ndarray]]:
    """Wall and CPU seconds of each whole 10 s run, each the least of ``turns`` turns after an
    untimed one (lagsim's first ``simulate`` loads its C loop, CVODES allocates its memory), and
    its last bob: lagsim's ``simulate``, ``solve_ivp(DOP853)`` on Pinocchio's and PyDy's
    right-hand sides, CasADi's CVODES."""
    from scipy.integrate import solve_ivp

    n = model.n
    theta0 = np.full(n, ANGLE)
    options = SimulateOptions.resolve(spec.simulate, {"t_end": T_END, "samples": 2,
                                                      "rtol": TOL, "atol": TOL})
    runs: dict[str, Callable[[], np.ndarray]] = {
        "lagsim simulate": lambda: simulate(spec, model, options).q[-1]}
    for name in ("pinocchio", "pydy"):
        if name in peers:
            peer = peers[name]
            runs[f"{name}+DOP853"] = (lambda peer=peer: peer.angles(solve_ivp(
                peer.rhs, (0.0, T_END), peer.start(theta0), method="DOP853", rtol=TOL,
                atol=TOL).y[:, -1], n))
    start_state = np.concatenate((theta0, np.zeros(n)))
    for method, run in cvodes.items():
        runs[f"casadi cvodes {method}"] = lambda run=run: run(start_state)[:n]
    seconds = {k: float("inf") for k in runs}
    cpu = dict(seconds)
    ends = {}
    for turn in range(turns + 1):
        for name, run in runs.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            ends[name] = last_bob(run())
            if turn:
                seconds[name] = min(seconds[name], time.perf_counter() - start)
                cpu[name] = min(cpu[name], time.process_time() - start_cpu)
    return seconds, cpu, ends


def load() -> str:
    return " / ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 8, 32])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--pydy-max", type=int, default=PYDY_MAX,
                        help="largest n PyDy is built for (Kane + code generation)")
    parser.add_argument("--casadi-max", type=int, default=CASADI_MAX,
                        help="largest n CasADi's CVODES is built for (SX solve)")
    ratios.add_option(parser)
    args = parser.parse_args()
    makers, has_casadi, generator = installed()
    print(f"Load average (1 / 5 / 15 min) before: {load()} ({os.cpu_count()} cores)\n")
    skipped: list[str] = []
    rhs_rows, sim_rows = [], []
    for n in args.sizes:
        spec = parse_spec(chain_yaml(n, angle=ANGLE), f"chain_{n}.yaml")
        model = build_model(spec)
        ours = compile_model(model).ode_rhs()
        theta0 = np.full(n, ANGLE)
        y_ours = np.concatenate((theta0, np.zeros(n)))
        peers = {}
        for name, make in makers.items():
            if name == "pydy" and n > args.pydy_max:
                skipped.append(f"PyDy not built at n = {n} (> --pydy-max {args.pydy_max})")
                continue
            start = time.perf_counter()
            peers[name] = make(n)
            if name == "pydy":
                print(f"(PyDy, {generator}, built in {time.perf_counter() - start:.1f} s at "
                      f"n = {n})", flush=True)
        cvodes = {}
        if has_casadi and n > args.casadi_max:
            skipped.append(f"CasADi CVODES not built at n = {n} (> --casadi-max "
                           f"{args.casadi_max})")
        elif has_casadi:
            start = time.perf_counter()
            cvodes = {method: cvodes_chain(n, method) for method in CVODES}
            print(f"(CasADi SX chain and CVODES built in {time.perf_counter() - start:.1f} s at "
                  f"n = {n})", flush=True)
        batch = max(20, 2000 // n)
        times: dict[str, list[float]] = {"lagsim": [], **{p: [] for p in peers}}
        for _ in range(3):
            times["lagsim"].append(best(lambda f=ours, y=y_ours: f(0.0, y), batch,
                                        10 * args.reps))
            for name, peer in peers.items():
                y_peer = peer.start(theta0)
                times[name].append(best(lambda f=peer.rhs, y=y_peer: f(0.0, y), batch,
                                        10 * args.reps))
        rhs_us = {k: min(v) * 1e6 for k, v in times.items()}
        rhs_rows.append((n, rhs_us))
        for name in peers:
            ratios.record(f"{name} RHS / lagsim RHS n={n}", rhs_us[name] / rhs_us["lagsim"])

        seconds, cpu, ends = trajectories(spec, model, peers, cvodes, max(1, args.reps // 2))
        ours_s = seconds["lagsim simulate"]
        for name in seconds:
            if name != "lagsim simulate":
                distance = float(np.linalg.norm(ends[name] - ends["lagsim simulate"]))
                sim_rows.append((n, ours_s, name, seconds[name], distance,
                                 cpu[name] / cpu["lagsim simulate"]))
                ratios.record(f"{name} / lagsim simulate n={n}", seconds[name] / ours_s)
        print(f"(n = {n} measured)", flush=True)

    names = list(makers)
    backend = f" (PyDy's backend: {generator})" if "pydy" in makers else ""
    print(f"\nRight-hand side, one call from Python{backend}:\n")
    print("| n | lagsim RHS µs | " + " | ".join(f"{p} RHS µs | ratio" for p in names) + " |")
    print("|---" * (2 + 2 * len(names)) + "|")
    for n, rhs_us in rhs_rows:
        row = [str(n), f"{rhs_us['lagsim']:.2f}"]
        for name in names:
            row += ([f"{rhs_us[name]:.2f}", f"{rhs_us[name] / rhs_us['lagsim']:.2f}"]
                    if name in rhs_us else ["–", "–"])
        print("| " + " | ".join(row) + " |")
    print(f"\nWhole trajectory, {T_END:g} s at rtol = atol = {TOL:g}:\n")
    print("| n | lagsim simulate s | peer | peer s | ratio | CPU ratio | end distance |")
    print("|---|---|---|---|---|---|---|")
    for n, ours_s, name, peer_s, distance, cpu_ratio in sim_rows:
        print(f"| {n} | {ours_s:.3f} | {name} | {peer_s:.3f} | {peer_s / ours_s:.2f} | "
              f"{cpu_ratio:.2f} | {distance:.1e} |")
    print("\nratio = the peer's time / lagsim's (above 1: lagsim is faster); wall time, the one "
          "recorded; CPU ratio: the same runs' CPU time of this process (all its threads).")
    print(f"Chain released at rest, rods at {ANGLE} rad; end distance: between the peer's last bob "
          f"and lagsim's at t = {T_END:g} s." + (
              " CasADi's CVODES evaluates its SX function in CasADi's virtual machine (bdf: "
              "CVODES' default, BDF + Newton; adams: Adams + functional iteration)."
              if has_casadi else ""))
    for name in ("pinocchio", "mujoco", "pydy"):
        if name not in makers:
            print(f"- {name} is not installed: not measured (pip install -e '.[bench]')")
    if not has_casadi:
        print("- casadi is not installed: CVODES not measured (pip install -e '.[bench]')")
    for line in skipped:
        print(f"- {line}")
    print(f"Load average (1 / 5 / 15 min) after: {load()}")
    ratios.write(args.json)


if __name__ == "__main__":
    main()
