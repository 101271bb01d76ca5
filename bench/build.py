"""Build time (issue 31, "Build"): whole processes, cold cache, side by side, with ratios.

For the planar n-chain of ``lagsim.spec.chains`` (minimal coordinates) at each ``--sizes`` n:

- ``lagsim simulate``: ``python -m lagsim simulate chain_n.yaml`` (10 s at 1e-10, 1001 samples)
  with a cold model cache: each run gets a fresh copy of a cache that holds only the C runtime
  (built once before the timing by a 1-chain run), so the model is derived, generated and
  compiled by gcc in every run but the runtime is not (the very first run on a machine compiles
  that too; its cost is the ``runtime`` row, a 1-chain run in an empty cache, in turns);
- ``casadi SX + gcc``: the chain's Lagrangian in CasADi SX, M = ∂²T/∂v², the forcing
  f = ∂L/∂q − (∂²L/∂v∂q) v, the SX function q̈ = solve(M, f) (CasADi's symbolic QR), C code by
  ``Function.generate`` compiled by ``gcc -O1 -shared`` and loaded by ``casadi.external``, then
  called once (the process does what a user does to get a compiled right-hand side, not a
  trajectory);
- ``sympy Kane + lambdify``: ``sympy.physics.mechanics.KanesMethod`` (u = q̇), then
  ``mass_matrix_full`` and ``forcing_full`` lambdified with ``cse=True`` and called once.

Each process runs ``--reps`` times in turns (a run past ``--timeout`` is stopped and reported as
such, and that tool is not run again at that n); the figure is the fastest, on two clocks: wall
time and the child's CPU time (user + system of the process and its children, gcc included, from
``os.wait4``). Ratios are the peer's over lagsim's (above 1: lagsim builds faster). Goal (issue
31): lagsim within 1.5× of CasADi SX + gcc at n = 8 and 32, i.e. a ratio ≥ 0.67.

lagsim is the tree this file is in (``PYTHONPATH`` set to it). ``--before DIR`` adds another
lagsim tree (e.g. ``git archive main | tar -x -C DIR``) as the tool ``lagsim before``, run in
the same turns with its own runtime cache, and its runtime's first build beside this tree's.

    .venv/bin/python bench/build.py [--sizes 8 32] [--reps 3] [--timeout 120] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ratios  # noqa: E402

from lagsim.spec.chains import chain_yaml  # noqa: E402

PYTHON = sys.executable
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
OURS = "lagsim simulate"
BEFORE = "lagsim before"

CASADI = r"""
import sys, os, subprocess, tempfile
import casadi as ca
n = int(sys.argv[1])
q = ca.SX.sym("q", n)
v = ca.SX.sym("v", n)
m, l, g = 1.0, 1.0, 9.81
x = y = 0
T = U = 0
for k in range(n):
    x = x + l * ca.sin(q[k])
    y = y - l * ca.cos(q[k])
    xd = ca.jtimes(x, q, v)
    yd = ca.jtimes(y, q, v)
    T = T + 0.5 * m * (xd**2 + yd**2)
    U = U + m * g * y
L = T - U
M = ca.hessian(T, v)[0]
f = ca.gradient(L, q) - ca.mtimes(ca.jacobian(ca.gradient(L, v), q), v)
rhs = ca.Function("rhs", [q, v], [ca.solve(M, f)])
folder = tempfile.mkdtemp()
source = rhs.generate("rhs.c", {"with_header": False})
os.replace(source, os.path.join(folder, "rhs.c"))
lib = os.path.join(folder, "rhs.so")
subprocess.run(["gcc", "-O1", "-shared", "-fPIC", os.path.join(folder, "rhs.c"), "-o", lib],
               check=True)
compiled = ca.external("rhs", lib)
print(compiled([0.5] * n, [0.0] * n))
"""
"""CasADi SX + gcc on the n-chain, as a user writes it (argv[1] = n)."""

KANE = r"""
import sys
import numpy as np
import sympy
from sympy.physics.mechanics import KanesMethod, Particle, Point, ReferenceFrame, dynamicsymbols
n = int(sys.argv[1])
q = dynamicsymbols(f"q1:{n + 1}")
u = dynamicsymbols(f"u1:{n + 1}")
m, l, g = sympy.symbols("m l g")
N = ReferenceFrame("N")
O = Point("O")
O.set_vel(N, 0)
particles, forces = [], []
r = 0 * N.x
for k in range(n):
    r = r + l * sympy.sin(q[k]) * N.x - l * sympy.cos(q[k]) * N.y
    P = O.locatenew(f"P{k + 1}", r)
    P.set_vel(N, r.dt(N).subs({qi.diff(): ui for qi, ui in zip(q, u)}))
    particles.append(Particle(f"pa{k + 1}", P, m))
    forces.append((P, -m * g * N.y))
kane = KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u)])
kane.kanes_equations(particles, forces)
args = [q, u, [m, l, g]]
mass = sympy.lambdify(args, kane.mass_matrix_full, modules="numpy", cse=True)
forcing = sympy.lambdify(args, kane.forcing_full, modules="numpy", cse=True)
y = [0.5] * n
print(np.linalg.solve(mass(y, [0.0] * n, [1.0, 1.0, 9.81]),
                      forcing(y, [0.0] * n, [1.0, 1.0, 9.81])).ravel()[:2])
"""
"""sympy.physics.mechanics KanesMethod + lambdify on the n-chain (argv[1] = n)."""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


def run_once(command: list[str], env: dict[str, str], timeout: float
             ) -> tuple[float, float] | None:
    """(wall s, CPU s of the child and its children) of one run, None when it timed out. It runs
    in the temporary folder: ``python -m`` puts the working folder first on ``sys.path``, which
    would run the lagsim of the folder the script was started in whatever ``PYTHONPATH`` says."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=env, start_new_session=True, cwd=tempfile.gettempdir())
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - start > timeout:
            os.killpg(child.pid, signal.SIGKILL)
            os.wait4(child.pid, 0)
            return None
        time.sleep(0.005)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {code}: "
                           f"{child.stderr.read().decode()[-2000:] if child.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--quick", action="store_true", help="n = 8 only, one run each")
    parser.add_argument("--before", type=Path, default=None,
                        help="another lagsim tree to time in the same turns")
    ratios.add_option(parser)
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.reps = [8], 1
    trees = {OURS: str(HERE.parent)}
    if args.before is not None:
        trees[BEFORE] = str(args.before.resolve())
    tools = {**dict.fromkeys(trees), "casadi SX + gcc": "casadi", "sympy Kane + lambdify": None}
    try:
        import casadi  # noqa: F401
    except ImportError:
        print("casadi is not installed: pip install -e '.[bench]'", file=sys.stderr)
        del tools["casadi SX + gcc"]
    print("# Build time (issue 31): whole process, cold model cache")
    print()
    print(f"fastest of {args.reps} runs each, in turns; before: {load()}")
    print()
    with tempfile.TemporaryDirectory(prefix="lagsim-build-") as tmp:
        folder = Path(tmp)
        one = folder / "chain_1.yaml"
        one.write_text(chain_yaml(1))
        simulate = [PYTHON, "-m", "lagsim", "simulate"]
        runtime: dict[str, tuple[float, float] | None] = {}
        for _ in range(args.reps):
            for tool, tree in trees.items():
                empty = folder / f"runtime-{tool}"
                shutil.rmtree(empty, ignore_errors=True)
                got = run_once([*simulate, str(one), "-o", str(folder / "out.csv"), "--force"],
                               {**ENV, "PYTHONPATH": tree, "LAGSIM_CACHE": str(empty)},
                               args.timeout)
                if got is not None:
                    was = runtime.get(tool) or (float("inf"),) * 2
                    runtime[tool] = (min(was[0], got[0]), min(was[1], got[1]))
        rows = []
        for n in args.sizes:
            path = folder / f"chain_{n}.yaml"
            path.write_text(chain_yaml(n))
            commands = {
                **{tool: [*simulate, str(path), "-o", str(folder / "out.csv"), "--force"]
                   for tool in trees},
                "casadi SX + gcc": [PYTHON, "-c", CASADI, str(n)],
                "sympy Kane + lambdify": [PYTHON, "-c", KANE, str(n)],
            }
            best: dict[str, list[float] | None] = {t: [float("inf")] * 2 for t in tools}
            for rep in range(args.reps):
                for tool in tools:
                    if best[tool] is None:
                        continue
                    env = dict(ENV)
                    if tool in trees:
                        cache = folder / f"cache-{tool}-{n}-{rep}"
                        shutil.copytree(folder / f"runtime-{tool}", cache)
                        env["LAGSIM_CACHE"] = str(cache)
                        env["PYTHONPATH"] = trees[tool]
                    got = run_once(commands[tool], env, args.timeout)
                    current = best[tool]
                    if got is None:
                        best[tool] = None
                    elif current is not None:
                        best[tool] = [min(current[0], got[0]), min(current[1], got[1])]
            rows.append((n, best))
    head = " | ".join(f"{t} wall s | CPU s" for t in tools)
    print(f"| n | {head} |")
    print("|---" * (1 + 2 * len(tools)) + "|")
    for n, best in rows:
        cells = []
        for tool in tools:
            got = best[tool]
            cells += [f"> {args.timeout:.0f} (stopped)", "–"] if got is None else [
                f"{got[0]:.2f}", f"{got[1]:.2f}"]
        print(f"| {n} | " + " | ".join(cells) + " |")
    print()
    print("| n | peer | ratio wall (peer / lagsim) | ratio CPU |")
    print("|---|---|---|---|")
    for n, best in rows:
        ours = best[OURS]
        for tool in tools:
            got = best[tool]
            if tool == OURS or ours is None:
                continue
            if got is None:
                print(f"| {n} | {tool} | > {args.timeout / ours[0]:.2f} | – |")
                ratios.record(f"{tool} / {OURS} wall n={n}", args.timeout / ours[0],
                              lower_bound=True)
            else:
                print(f"| {n} | {tool} | {got[0] / ours[0]:.2f} | {got[1] / ours[1]:.2f} |")
                ratios.record(f"{tool} / {OURS} wall n={n}", got[0] / ours[0])
                ratios.record(f"{tool} / {OURS} cpu n={n}", got[1] / ours[1])
    print()
    for tool, got in runtime.items():
        if got is not None:
            print(f"The C runtime's own first build ({tool}: a 1-chain run in an empty cache, "
                  f"fastest of {args.reps}): {got[0]:.2f} s wall, {got[1]:.2f} s CPU.")
    print("Goal: lagsim within 1.5× of CasADi SX + gcc (ratio ≥ 0.67) at n = 8 and n = 32.")
    print()
    print(f"after: {load()}")
    ratios.write(args.json)


if __name__ == "__main__":
    main()
