"""Export time and FMU size for the n-chain, and the FMU's Co-Simulation run against ``lagsim
simulate`` in-process (issue 25, "Measure").

    .venv/bin/python bench/export.py              # the 8-chain, 3 runs each
    .venv/bin/python bench/export.py --reps 1 --size 4

``lagsim export chain_n.yaml --fmu`` is timed as a user runs it (a fresh process: deriving,
generating C, compiling the FMU's binary); the FMU's size is the zip's. Then the same 10 s run
(samples 1001, tolerance 1e-10) through FMPy's Co-Simulation (DOP853 inside the FMU) and through
``lagsim.load(...).simulate`` in this process after a warm-up (the compiled model reused); the
FMPy part is skipped with one line when FMPy is not installed (``pip install -e '.[test]'``).
Then the peer comparison of the right-hand side y' = [q̇, M⁻¹F] in C: lagsim's exported
``NAME_rhs`` (``lagsim export --c``: M and F as generated straight-line C, then an L D Lᵀ
solve) against the same equations through CasADi (its SX graph of M and F from lagsim's
expressions, ``solve(M, F)`` and CasADi's C code generation), both built with ``cc -O2`` and
called in one C loop over the same states, ns per call side by side (their results checked to
agree first), and CasADi's own virtual machine from Python for scale. Skipped with one line when
CasADi or a C compiler is missing. Then the peer exporter the issue names, pythonfmu (a Python
class wrapped as an FMI 2.0 Co-Simulation FMU): the pendulum and the double pendulum written as
pythonfmu slaves (a numpy right-hand side, scipy's DOP853 inside) against lagsim's FMUs of the
bundled systems, both through FMPy's Co-Simulation for 10 s, times and differences side by
side; skipped with one line when pythonfmu is missing (the ``bench`` extra installs it). No
Modelica tool is in Debian's packages.
Printed as Markdown (``make bench`` writes it to bench/export_results.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _lagsim() -> list[str]:
    bindir = Path(sys.executable).parent
    return [str(bindir / "lagsim")] if (bindir / "lagsim").exists() else [
        sys.executable, "-m", "lagsim"]


HARNESS = """
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
%(include)s
int main(int argc, char **argv)
{
    double y[%(ny)d], dy[%(ny)d], p[%(np)d] = {%(p)s}, sum = 0.0;
    long k, calls = %(calls)d;
    struct timespec a, b;
    int i;
    %(setup)s
    for (i = 0; i < %(ny)d; i++) y[i] = 0.5 - 0.01 * i;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (k = 0; k < calls; k++) {
        y[k %% %(ny)d] += 1e-9;
        %(call)s
        sum += dy[%(ny)d - 1];
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    for (i = 0; i < %(ny)d; i++) y[i] = 0.5 - 0.01 * i;
    %(call)s
    printf("%%.6f", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / calls);
    for (i = 0; i < %(ny)d; i++) printf(" %%.17g", dy[i]);
    printf(" %%g\\n", sum);
    (void)argc; (void)argv;
    return 0;
}
"""


def _timed(cc: str, folder: Path, name: str, sources: list[Path], **fill: object
           ) -> tuple[float, list[float]]:
    """Build HARNESS (``fill`` its slots) with ``sources`` and run it: (ns per call, y' at the
    check state)."""
    main_c = folder / f"{name}_main.c"
    main_c.write_text(HARNESS % fill)
    exe = folder / name
    subprocess.run([cc, "-O2", f"-I{folder}", "-o", str(exe), str(main_c),
                    *map(str, sources), "-lm"], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), [float(x) for x in out[1:-1]]


def rhs_peers(system: Path, folder: Path, calls: int = 200_000) -> None:
    """The right-hand side per call: lagsim's exported C against CasADi's generated C."""
    import shutil

    try:
        import casadi as ca
        import sympy
    except ImportError:
        print("\nCasADi is not installed: the peer comparison of the right-hand side is "
              "skipped.")
        return
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("\nNo C compiler: the peer comparison of the right-hand side is skipped.")
        return
    import lagsim

    loaded = lagsim.load(str(system))
    model = loaded.model
    n = model.n
    names = [str(s) for s in model.substitutions()]
    values = [float(model.parameters[k]) for k in names]
    written = loaded.export_c(folder / "lagsim_c")
    prefix = written[1].stem
    start = time.perf_counter()
    q = ca.SX.sym("q", n)
    qd = ca.SX.sym("qd", n)
    p = ca.SX.sym("p", len(names))
    table = {str(s): q[i] for i, s in enumerate(model.q)}
    table.update({str(s): qd[i] for i, s in enumerate(model.qd)})
    table.update({k: p[i] for i, k in enumerate(names)})
    symbols = [sympy.Symbol(k) for k in table]
    functions = {"sin": ca.sin, "cos": ca.cos, "tan": ca.tan, "exp": ca.exp, "log": ca.log,
                 "sqrt": ca.sqrt, "Abs": ca.fabs}

    def to_sx(expr: object) -> object:
        f = sympy.lambdify(symbols, sympy.sympify(str(expr)), modules=[functions, "math"])
        return f(*table.values())

    M = ca.SX(n, n)
    F = ca.SX(n, 1)
    for i in range(n):
        F[i] = to_sx(model.forcing[i, 0])
        for j in range(n):
            M[i, j] = to_sx(model.mass_matrix[i, j])
    y = ca.vertcat(q, qd)
    rhs = ca.Function("casadi_rhs", [y, p], [ca.vertcat(qd, ca.solve(M, F))])
    generator = ca.CodeGenerator("casadi_rhs.c", {"with_header": True})
    generator.add(rhs)
    generator.generate(f"{folder}{os.sep}")
    build = time.perf_counter() - start
    common = dict(ny=2 * n, np=len(names), p=", ".join(map(repr, values)), calls=calls)
    own, own_dy = _timed(cc, folder, "lagsim_rhs", [written[1]],
                         include=f'#include "lagsim_c/{prefix}.h"', setup="",
                         call=f"{prefix}_rhs(0.0, y, p, dy);", **common)
    peer, peer_dy = _timed(
        cc, folder, "casadi_rhs", [folder / "casadi_rhs.c"], include='#include "casadi_rhs.h"',
        setup="const double *arg[2] = {y, p}; double *res[1] = {dy}; "
              "casadi_int sz_arg, sz_res, sz_iw, sz_w, *iw; double *w; "
              "casadi_rhs_work(&sz_arg, &sz_res, &sz_iw, &sz_w); "
              "iw = malloc((sz_iw + 1) * sizeof *iw); w = malloc((sz_w + 1) * sizeof *w);",
        call="casadi_rhs(arg, res, iw, w, 0);", **common)
    agree = max(abs(a - b) for a, b in zip(own_dy, peer_dy))
    state = [0.5 - 0.01 * i for i in range(2 * n)]
    rhs(state, values)
    vm_calls = 2000
    start = time.perf_counter()
    for _ in range(vm_calls):
        rhs(state, values)
    vm = (time.perf_counter() - start) / vm_calls * 1e9
    print(f"\n## The right-hand side per call, {n}-chain ({calls} calls in C, cc -O2)\n")
    print("| implementation | ns per call | ratio to lagsim |\n| --- | --- | --- |")
    print(f"| lagsim export --c (`{prefix}_rhs`) | {own:.0f} | 1.00 |")
    print(f"| CasADi {ca.__version__} SX, `solve(M, F)`, generated C | {peer:.0f} | "
          f"{peer / own:.2f} |")
    print(f"| CasADi's virtual machine from Python (`Function.__call__`) | {vm:.0f} | "
          f"{vm / own:.1f} |")
    print(f"\nThe two C right-hand sides agree to {agree:.1e} at the check state; CasADi's "
          f"graph and code took {build:.2f} s from lagsim's expressions (the derivation not "
          f"counted).")


SLAVE = '''"""{name} as a pythonfmu Co-Simulation slave (bench/export.py): the textbook
equations as a numpy right-hand side, scipy's DOP853 inside at the experiment's tolerance."""
import numpy as np
from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real
from scipy.integrate import DOP853


class {name}_py(Fmi2Slave):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.rtol = 1e-10
        self.solver = None
{values}
        for name in {parameters!r}:
            self.register_variable(Real(name, causality=Fmi2Causality.parameter,
                                        variability=Fmi2Variability.tunable))
        for name in {states!r}:
            self.register_variable(Real(name, causality=Fmi2Causality.output))

    def setup_experiment(self, start_time, stop_time, tolerance):
        if tolerance:
            self.rtol = tolerance

    def rhs(self, t, y):
{rhs}

    def do_step(self, current_time, step_size):
        end = current_time + step_size
        if self.solver is None:
            y0 = [getattr(self, name) for name in {states!r}]
            self.solver = DOP853(self.rhs, current_time, y0, t_bound=np.inf, rtol=self.rtol,
                                 atol=self.rtol)
        while self.solver.t < end:
            self.solver.step()
        y = self.solver.dense_output()(end) if self.solver.t > end else self.solver.y
        for name, value in zip({states!r}, y):
            setattr(self, name, float(value))
        return True
'''
PEER_MODELS = {
    "pendulum": (dict(m=1.0, g=9.81, l=1.0, theta=0.5235987755982988, theta_dot=0.0),
                 ("theta", "theta_dot"), """\
        theta, theta_dot = y
        return np.array([theta_dot, -self.g / self.l * np.sin(theta)])"""),
    "double_pendulum": (
        dict(m1=1.0, m2=1.0, l1=1.0, l2=1.0, g=9.81, theta1=2.0943951023931953,
             theta2=2.0943951023931953, theta1_dot=0.0, theta2_dot=0.0),
        ("theta1", "theta2", "theta1_dot", "theta2_dot"), """\
        a, b, ad, bd = y
        m1, m2, l1, l2, g = self.m1, self.m2, self.l1, self.l2, self.g
        c, s = np.cos(a - b), np.sin(a - b)
        M = np.array([[(m1 + m2) * l1 ** 2, m2 * l1 * l2 * c],
                      [m2 * l1 * l2 * c, m2 * l2 ** 2]])
        F = np.array([-m2 * l1 * l2 * s * bd ** 2 - (m1 + m2) * g * l1 * np.sin(a),
                      m2 * l1 * l2 * s * ad ** 2 - m2 * g * l2 * np.sin(b)])
        return np.concatenate([[ad, bd], np.linalg.solve(M, F)])"""),
}
"""The bundled systems the pythonfmu peer is built for: the values of the file (parameters,
then the start), the states in lagsim's order, and the right-hand side written by hand from
the equations in the file's description."""


def pythonfmu_peer(folder: Path, reps: int) -> None:
    """The FMU's Co-Simulation against pythonfmu's (a Python slave wrapped as an FMI 2.0 FMU),
    both run through FMPy for 10 s (output every 0.01 s, tolerance 1e-10), with lagsim simulate
    in-process for scale: median wall times and how far apart the states are."""
    import numpy as np

    try:
        import fmpy
        import pythonfmu
    except ImportError:
        print("\npythonfmu (or FMPy) is not installed: the pythonfmu peer is skipped "
              "(`pip install -e '.[bench]'`).")
        return
    import lagsim

    print(f"\n## The FMU's Co-Simulation against pythonfmu {pythonfmu.__version__} "
          f"(10 s, output every 0.01 s, tolerance 1e-10, median of {reps})\n")
    print("| system | lagsim FMU | pythonfmu FMU | ratio | `simulate` in-process | "
          "lagsim FMU − pythonfmu | lagsim FMU − simulate | pythonfmu − simulate |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, (values, states, rhs) in PEER_MODELS.items():
        script = folder / f"{name}_py.py"
        script.write_text(SLAVE.format(
            name=name, parameters=tuple(k for k in values if k not in states),
            states=states, rhs=rhs,
            values="\n".join(f"        self.{k} = {v!r}" for k, v in values.items())))
        subprocess.run([sys.executable, "-m", "pythonfmu", "build", "-f", str(script), "-d",
                        str(folder)], check=True, capture_output=True)
        loaded = lagsim.load(name)
        own = loaded.export_fmu(folder / f"{name}.fmu", force=True)
        runs: dict[str, list[float]] = {}
        results = {}
        for label, path in (("lagsim", own), ("pythonfmu", folder / f"{name}_py.fmu")):
            for _ in range(reps):
                start = time.perf_counter()
                results[label] = fmpy.simulate_fmu(
                    str(path), fmi_type="CoSimulation", stop_time=10.0, output_interval=0.01,
                    relative_tolerance=1e-10, output=list(states))
                runs.setdefault(label, []).append(time.perf_counter() - start)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded.simulate(t_end=0.1)
            sim = []
            for _ in range(reps):
                start = time.perf_counter()
                tr = loaded.simulate(t_end=10.0, samples=1001, rtol=1e-10, atol=1e-10)
                sim.append(time.perf_counter() - start)
        a, b = (np.column_stack([results[k][s] for s in states]) for k in ("lagsim",
                                                                             "pythonfmu"))
        early = results["lagsim"]["time"] <= 2.0 + 1e-12
        reference = np.column_stack([tr.q, tr.qd])
        own_t, peer_t = statistics.median(runs["lagsim"]), statistics.median(runs["pythonfmu"])
        gaps = [np.abs(x - y) for x, y in ((a, b), (a, reference), (b, reference))]
        print(f"| {name} | {own_t * 1000:.0f} ms | {peer_t * 1000:.0f} ms | "
              f"{peer_t / own_t:.1f} | {statistics.median(sim) * 1000:.0f} ms | "
              + " | ".join(f"{g[early].max():.1e}; {g.max():.1e}" for g in gaps) + " |")
    print("\nThe differences are the largest over the states, up to t = 2 s; up to t = 10 s. "
          "Both FMUs are loaded, run and freed by FMPy inside each timing; pythonfmu's binary "
          "runs the slave's Python (numpy, scipy) in the running interpreter. lagsim's FMU "
          "integrates to each communication point exactly (DOP853 in C, the step size carried "
          "over), pythonfmu's slave and lagsim simulate step freely and interpolate (scipy's "
          "dense output, lagsim's C loop): the double pendulum is chaotic from this start, so "
          "the 1e-10 tolerance's differences grow over the 10 s.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--peers-only", action="store_true",
                        help="only the right-hand side's peer comparison")
    args = parser.parse_args()
    n, reps = args.size, args.reps
    print(f"# lagsim export: the {n}-chain\n")
    print(f"load average before: {os.getloadavg()[0]:.2f}\n")
    with tempfile.TemporaryDirectory() as folder:
        system = Path(folder) / f"chain_{n}.yaml"
        subprocess.run([sys.executable, "-m", "lagsim.cli.chains", str(n), "-o", str(system)],
                       check=True, capture_output=True)
        if args.peers_only:
            rhs_peers(system, Path(folder))
            pythonfmu_peer(Path(folder), reps)
            return
        fmu = Path(folder) / f"chain_{n}.fmu"
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            subprocess.run([*_lagsim(), "export", str(system), "--fmu", "-o", str(fmu),
                            "--force"], check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        print("| what | value |\n| --- | --- |")
        print(f"| `lagsim export --fmu` wall time, median of {reps} | "
              f"{statistics.median(times):.2f} s (fastest {min(times):.2f} s) |")
        print(f"| FMU size | {fmu.stat().st_size / 1024:.0f} KiB |")
        import lagsim

        loaded = lagsim.load(str(system))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded.simulate(t_end=0.1)
            start = time.perf_counter()
            loaded.simulate(t_end=10.0, samples=1001)
            own = time.perf_counter() - start
        print(f"| `lagsim simulate` 10 s in-process (warm) | {own * 1000:.0f} ms |")
        try:
            import fmpy
        except ImportError:
            print("\nFMPy is not installed: the FMU's Co-Simulation run is not measured.")
            return
        start = time.perf_counter()
        fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=10.0,
                          output_interval=0.01, relative_tolerance=1e-10)
        cs = time.perf_counter() - start
        print(f"| FMU Co-Simulation 10 s through FMPy (extract, load, run) | "
              f"{cs * 1000:.0f} ms |")
        rhs_peers(system, Path(folder))
        pythonfmu_peer(Path(folder), reps)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
