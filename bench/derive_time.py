"""Whole-process time of `lagsim derive` per form and format against the 1 s budget.

Issue 8 §5 and issue 16 §4: derive of any system with n ≤ 8 prints every form in every format
in at most 1 s, measured as a user runs it (`time lagsim derive FILE --form X`). Systems: issue
8's messy3 (bench/derive_messy3.yaml), issue 16's mass with the constraint v − 0.21
(bench/derive_uk2.yaml), the 8-chain in minimal and natural coordinates (lagsim.spec.chains) and a
few bundled systems.

    .venv/bin/python bench/derive_time.py            # every form in text, all forms in latex/json
    .venv/bin/python bench/derive_time.py --quick    # one run each, fewer systems

Each command runs once as a warm-up, then ``--reps`` times; the table shows the median and the
fastest wall time and the median CPU time (user + system) of the process. The verdict against
the budget uses the fastest run: on a shared machine the median also measures the other work.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BUDGET_S = 1.0
TIMEOUT_S = 30.0
FORMS = ("lagrange", "matrix", "dae", "index1", "udwadia-kalaba", "reduced", "linear",
         "hamilton", "all")
FORMATS = ("text", "latex", "json")
CHAINS = tuple(f"chain{n}{kind}" for n in (2, 4, 8) for kind in ("", "-natural"))
QUICK_SYSTEMS = ("messy3", "uk2", "chain8", "chain8-natural", "double_pendulum", "slider_crank",
                 "spring_pendulum", "a02_four_bar", "moving_pivot_pendulum")


def full_systems() -> tuple[str, ...]:
    """Every bundled system, the two bench files and the chains."""
    from lagsim.spec.system import bundled_systems

    return ("messy3", "uk2", *CHAINS, *bundled_systems())


def _lagsim() -> list[str]:
    bindir = Path(sys.executable).parent
    return [str(bindir / "lagsim")] if (bindir / "lagsim").exists() else [
        sys.executable, "-m", "lagsim"]


def system_files(names: tuple[str, ...], folder: Path) -> dict[str, str]:
    """The FILE argument of each system: bench YAML, a generated chain or a bundled name."""
    out = {}
    for name in names:
        if name in ("messy3", "uk2"):
            out[name] = str(HERE / f"derive_{name}.yaml")
        elif name.startswith("chain"):
            path = folder / f"{name}.yaml"
            size = name.removeprefix("chain").removesuffix("-natural")
            extra = ["--natural"] if name.endswith("natural") else []
            subprocess.run([sys.executable, "-m", "lagsim.cli.chains", size, *extra,
                            "-o", str(path)], check=True, capture_output=True)
            out[name] = str(path)
        else:
            out[name] = name
    return out


PROBE = r"""
import sys, time
import numpy, symengine, sympy
import lagsim.cli, lagsim.cli.commands.derive, lagsim.symbolic.forms, lagsim.symbolic.render
start = time.process_time()
try:
    lagsim.cli.main(sys.argv[1:], prog_name="lagsim")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
sys.stderr.write(f"\nLAGSIM-WORK {time.process_time() - start!r}\n")
sys.exit(code)
"""
"""`lagsim derive ARGS` after the modules it needs are imported (Python, NumPy, SymEngine, SymPy
and lagsim's own): the CPU seconds of the derivation itself, reported on stderr's last line."""


def run_once(cmd: list[str], probe: bool = False
             ) -> tuple[float, float, int | str, float | None]:
    """(wall s, CPU s of the child, exit status or "timeout", CPU s after the imports) of one
    process, stopped after :data:`TIMEOUT_S`; with ``probe`` the last is measured in a second
    process through :data:`PROBE` (``cmd`` a ``lagsim derive`` command), else None (also when
    it timed out)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        status: int | str = subprocess.run(cmd, capture_output=True, check=False,
                                           timeout=TIMEOUT_S).returncode
    except subprocess.TimeoutExpired:
        status = "timeout"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    work = None
    if probe and status != "timeout":
        try:
            second = subprocess.run([sys.executable, "-c", PROBE, *cmd[cmd.index("derive"):]],
                                    capture_output=True, check=False, timeout=TIMEOUT_S,
                                    text=True)
        except subprocess.TimeoutExpired:
            return wall, cpu, status, None
        last = second.stderr.rstrip().rsplit("\n", 1)[-1]
        if last.startswith("LAGSIM-WORK "):
            work = float(last.split()[1])
    return wall, cpu, status, work


def measure(quick: bool = False, reps: int = 3) -> dict[str, Any]:
    """The fastest wall and its CPU seconds of `lagsim derive FILE --form F --format X` per case
    (one run, up to ``reps`` for a case over the budget)."""
    systems = QUICK_SYSTEMS if quick else full_systems()
    rows = []
    with tempfile.TemporaryDirectory(prefix="lagsim-derive-") as tmp:
        os.environ.setdefault("LAGSIM_CACHE", str(Path(tmp) / "cache"))
        files = system_files(systems, Path(tmp))
        for system in systems:
            for form in FORMS:
                for fmt in FORMATS:
                    cmd = [*_lagsim(), "derive", files[system], "--form", form, "--format", fmt]
                    runs = [run_once(cmd, probe=True)]
                    while (len(runs) < reps and runs[-1][2] != "timeout"
                           and min(r[0] for r in runs) > BUDGET_S):
                        runs.append(run_once(cmd, probe=True))
                    best = min(runs, key=lambda r: r[0])
                    works = [r[3] for r in runs if r[3] is not None]
                    row = {"system": system, "form": form, "format": fmt, "wall_s": best[0],
                           "cpu_s": best[1], "exit": runs[-1][2], "runs": len(runs),
                           "work_s": min(works) if works else None}
                    rows.append(row)
                    print(f"[{time.strftime('%H:%M:%S')}] {system} {form} {fmt}: "
                          f"{best[0]:.2f} s wall, {best[1]:.2f} s CPU, "
                          f"{row['work_s'] if works else float('nan'):.2f} s CPU after imports, "
                          f"exit {row['exit']}",
                          file=sys.stderr, flush=True)
    return {"budget_s": BUDGET_S, "reps": reps, "rows": rows,
            "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}


def render(result: dict[str, Any]) -> list[str]:
    """A markdown section: per system and form the largest time over the formats, the maximum
    over everything, and the cases over the budget."""
    budget = result["budget_s"]
    rows = result["rows"]
    over = [r for r in rows if r["exit"] == "timeout" or r["exit"] == 0 and r["wall_s"] > budget]
    lines = ["## `lagsim derive` whole-process time (issue 8 §5, issue 16 §4)", "",
             f"Fastest of up to {result['reps']} runs (more runs only for a case over the budget) "
             "of `lagsim derive FILE --form F --format X` for X in text, latex, json; each cell "
             "is the largest over the three formats: wall s / CPU s (user + system). Budget "
             f"{budget:g} s for n ≤ 8. Exit 2 (–) is a form that does not apply (reduced without "
             "holonomic constraints or with a velocity constraint, linear without a rest state, "
             f"hamilton with a velocity-dependent M); timeout is {TIMEOUT_S:g} s."
             + (f" Load average at the end: {result['load']:.1f} on "
                f"{os.cpu_count()} cores." if result.get("load") is not None else ""), "",
             "| system | " + " | ".join(FORMS) + " |", "|---" * (len(FORMS) + 1) + "|"]
    systems = list(dict.fromkeys(r["system"] for r in rows))
    for system in systems:
        cells = []
        for form in FORMS:
            these = [r for r in rows if r["system"] == system and r["form"] == form]
            ok = [r for r in these if r["exit"] == 0 or r["exit"] == "timeout"]
            if not ok:
                cells.append("–")
                continue
            wall = max(r["wall_s"] for r in ok)
            cpu = max(r["cpu_s"] for r in ok)
            mark = "**" if any(r in over for r in these) else ""
            cells.append(f"{mark}{wall:.2f} / {cpu:.2f}{mark}")
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    done = [r for r in rows if r["exit"] == 0]
    if done:
        top = max(done, key=lambda r: r["wall_s"])
        top_cpu = max(done, key=lambda r: r["cpu_s"])
        lines += ["", f"Maximum wall {top['wall_s']:.2f} s ({top['system']} {top['form']} "
                  f"{top['format']}); maximum CPU {top_cpu['cpu_s']:.2f} s ({top_cpu['system']} "
                  f"{top_cpu['form']} {top_cpu['format']}) over {len(rows)} cases."]
    over_cpu = [r for r in rows if r["exit"] == "timeout"
                or r["exit"] == 0 and r["cpu_s"] > budget]
    lines += ["", f"{len(over)} of {len(rows)} cases over the budget in wall time (fastest run)."
              + (" Over: " + ", ".join(f"{r['system']} {r['form']} {r['format']} "
                                       f"({r['wall_s']:.2f} s)" for r in over) if over else ""),
              "", f"{len(over_cpu)} of {len(rows)} cases over the budget in CPU time (the "
              "process's own work, less sensitive to a shared machine's load)."
              + (" Over: " + ", ".join(f"{r['system']} {r['form']} {r['format']} "
                                       f"({r['cpu_s']:.2f} s)" for r in over_cpu)
                 if over_cpu else ""), ""]
    works = [r for r in rows if r["exit"] == 0 and r.get("work_s") is not None]
    if works:
        over_work = [r for r in works if r["work_s"] > budget]
        top = max(works, key=lambda r: r["work_s"])
        lines += [f"The derivation itself, after the imports every `lagsim derive` pays (Python, "
                  "NumPy, SymEngine, SymPy, lagsim; measured in a second process, CPU s): "
                  f"maximum {top['work_s']:.2f} s ({top['system']} {top['form']} "
                  f"{top['format']}); {len(over_work)} of {len(works)} cases over the budget"
                  + (": " + ", ".join(f"{r['system']} {r['form']} {r['format']} "
                                      f"({r['work_s']:.2f} s)" for r in over_work)
                     if over_work else "") + ".", ""]
    return lines


SCALING_SIZES = (8, 16, 32)
STAGES = r"""
import sys, time
T = time.process_time
t0 = T()
from lagsim.symbolic import tidy
from lagsim.symbolic.forms import FORMS
from lagsim.symbolic.model import build_model, tidy_model
from lagsim.symbolic.render import render
from lagsim.spec.system import load_spec
t1 = T()
model = tidy_model(build_model(load_spec(sys.argv[1])))
t2 = T()
with tidy.budget(tidy.DEFAULT_SECONDS):
    form = FORMS["lagrange"](model, False)
t3 = T()
text = render(form, "text", model, 80)
t4 = T()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, len(text))
"""


def scaling(reps: int = 3) -> dict[str, Any]:
    """Issue 17 §3: `lagsim derive chain_n` (the lagrange form, text) for n = 8, 16, 32 —
    whole-process wall and CPU (fastest of ``reps``) and, in a second process, the CPU seconds
    of each stage (import, model, form with its tidying, text rendering) and the output size."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="lagsim-chains-") as tmp:
        for n in SCALING_SIZES:
            path = Path(tmp) / f"chain{n}.yaml"
            subprocess.run([sys.executable, "-m", "lagsim.cli.chains", str(n), "-o", str(path)],
                           check=True, capture_output=True)
            runs = [run_once([*_lagsim(), "derive", str(path)]) for _ in range(reps)]
            best = min(runs, key=lambda r: r[0])
            stages = subprocess.run([sys.executable, "-c", STAGES, str(path)], check=True,
                                    capture_output=True, text=True).stdout.split()
            rows.append({"n": n, "wall_s": best[0], "cpu_s": best[1], "exit": best[2],
                         "import_s": float(stages[0]), "model_s": float(stages[1]),
                         "form_s": float(stages[2]), "render_s": float(stages[3]),
                         "chars": int(stages[4])})
            print(f"[{time.strftime('%H:%M:%S')}] chain {n}: {best[0]:.2f} s wall, "
                  f"{best[1]:.2f} s CPU", file=sys.stderr, flush=True)
    return {"reps": reps, "rows": rows,
            "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}


def render_scaling(result: dict[str, Any]) -> list[str]:
    """A markdown table of :func:`scaling`, with the goal of issue 17 §3 (n = 32 in ≤ 3 s)."""
    lines = ["## `lagsim derive chain_n` at scale (issue 17 §3: n = 32 in ≤ 3 s)", "",
             f"Fastest of {result['reps']} whole-process runs of `lagsim derive chain_n.yaml` "
             "(lagrange form, text); stage CPU seconds from one more process."
             + (f" Load average at the end: {result['load']:.1f} on {os.cpu_count()} cores."
                if result.get("load") is not None else ""), "",
             "| n | wall s | CPU s | import | model | form + tidying | text | output chars |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['n']} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['import_s']:.2f} "
                     f"| {r['model_s']:.2f} | {r['form_s']:.2f} | {r['render_s']:.2f} "
                     f"| {r['chars']} |")
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the known slow systems only")
    parser.add_argument("--reps", type=int, default=3,
                        help="most runs of a case over the budget (its fastest counts)")
    parser.add_argument("--chains", action="store_true",
                        help="only the n-chain scaling of issue 17 §3 (n = 8, 16, 32)")
    args = parser.parse_args(argv)
    if args.chains:
        print("\n".join(render_scaling(scaling(args.reps))))
        return 0
    print("\n".join(render(measure(args.quick, args.reps))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
