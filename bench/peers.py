"""lagsim against Pinocchio and MuJoCo on the planar n-pendulum chain (issue 17), side by side.

    .venv/bin/python bench/peers.py [--sizes 2 8 32] [--reps 5]

Needs the optional peers (``pip install -e '.[bench]'``: ``pin``, ``mujoco``); a peer that is not
installed is left out of the table and named. The chain is ``lagsim.spec.chains``' (n point masses
m = 1 on massless rods l = 1, g = 9.81, every rod at 0.5 rad, at rest). Pinocchio gets the same
chain as revolute joints about z with the point masses at the rod ends (relative angles
φ_k = θ_k − θ_{k−1}); MuJoCo as hinge bodies with the masses at the rod ends and a negligible
rotational inertia (1e-9, MuJoCo requires one).

Measured in turns, each figure the minimum over batches (the least disturbed by other work on the
machine; the right-hand sides in 3 × 10 × ``--reps`` short batches of about a millisecond, so that
some batch runs between the other processes of a loaded machine):
- RHS from Python: y' = [v, q̈] of one state, lagsim's compiled right-hand side against
  ``pinocchio.aba`` + the concatenation and ``mujoco.mj_forward`` + the concatenation;
- simulate 10 s at rtol = atol = 1e-10: ``lagsim.run.integrate.simulate`` (DOP853, 2 samples)
  against ``scipy.integrate.solve_ivp(DOP853)`` on Pinocchio's ABA; both end positions of the
  last bob are printed, and their distance, so the two runs are seen to agree.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ratios  # noqa: E402

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


def relative(theta: np.ndarray) -> np.ndarray:
    return np.diff(np.concatenate(([0.0], theta)))


def last_bob(absolute: np.ndarray) -> np.ndarray:
    return np.array([np.sin(absolute).sum(), -np.cos(absolute).sum()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 8, 32])
    parser.add_argument("--reps", type=int, default=5)
    ratios.add_option(parser)
    args = parser.parse_args()
    from scipy.integrate import solve_ivp

    peers = {}
    for name, make in (("pinocchio", pinocchio_chain), ("mujoco", mujoco_chain)):
        try:
            make(1)
            peers[name] = make
        except ImportError as exc:
            print(f"{name} is not installed ({exc}); pip install -e '.[bench]'", file=sys.stderr)
    print("| n | lagsim RHS µs | " + " | ".join(f"{p} RHS µs | ratio" for p in peers)
          + " | lagsim simulate s | pinocchio+DOP853 s | ratio | end distance |")
    print("|---" * (2 + 2 * len(peers) + 4) + "|")
    for n in args.sizes:
        spec = parse_spec(chain_yaml(n, angle=ANGLE), f"chain_{n}.yaml")
        model = build_model(spec)
        ours = compile_model(model).ode_rhs()
        theta0 = np.full(n, ANGLE)
        y_ours = np.concatenate((theta0, np.zeros(n)))
        y_rel = np.concatenate((relative(theta0), np.zeros(n)))
        rhs = {name: make(n) for name, make in peers.items()}
        batch = max(20, 2000 // n)
        times = {"lagsim": [], **{p: [] for p in rhs}}
        for _ in range(3):
            times["lagsim"].append(best(lambda f=ours, y=y_ours: f(0.0, y), batch,
                                        10 * args.reps))
            for name, f in rhs.items():
                times[name].append(best(lambda f=f, y=y_rel: f(0.0, y), batch,
                                          10 * args.reps))
        rhs_us = {k: min(v) * 1e6 for k, v in times.items()}
        options = SimulateOptions.resolve(spec.simulate, {"t_end": T_END, "samples": 2,
                                                          "rtol": TOL, "atol": TOL})
        sim, peer_sim, ends = [], [], None
        for _ in range(max(1, args.reps // 2)):
            start = time.perf_counter()
            trajectory = simulate(spec, model, options)
            sim.append(time.perf_counter() - start)
            if "pinocchio" in rhs:
                start = time.perf_counter()
                done = solve_ivp(rhs["pinocchio"], (0.0, T_END), y_rel, method="DOP853",
                                 rtol=TOL, atol=TOL)
                peer_sim.append(time.perf_counter() - start)
                ends = (last_bob(trajectory.q[-1]), last_bob(np.cumsum(done.y[:n, -1])))
        row = [str(n), f"{rhs_us['lagsim']:.2f}"]
        for name in rhs:
            row += [f"{rhs_us[name]:.2f}", f"{rhs_us[name] / rhs_us['lagsim']:.2f}"]
            ratios.record(f"{name} RHS / lagsim RHS n={n}", rhs_us[name] / rhs_us["lagsim"])
        if peer_sim:
            distance = float(np.linalg.norm(ends[0] - ends[1]))
            row += [f"{min(sim):.3f}", f"{min(peer_sim):.3f}", f"{min(peer_sim) / min(sim):.2f}",
                    f"{distance:.1e}"]
            ratios.record(f"pinocchio+DOP853 / lagsim simulate n={n}", min(peer_sim) / min(sim))
        else:
            row += [f"{min(sim):.3f}", "-", "-", "-"]
        print("| " + " | ".join(row) + " |", flush=True)
    print("\nratio = the peer's time / lagsim's (above 1: lagsim is faster).")
    print(f"Chain released at rest, rods at {ANGLE} rad; simulate {T_END} s at rtol = atol = "
          f"{TOL:g}; end distance: between the two runs' last bobs at t = {T_END:g} s.")
    ratios.write(args.json)


if __name__ == "__main__":
    main()
