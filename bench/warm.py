"""Cold and warm builds, and a warm run's whole process against the imports it cannot avoid
(issue 17 §1–2), measured side by side in one run.

    .venv/bin/python bench/warm.py [--sizes 8 16 32] [--reps 3]

For each chain size n (``python -m lagsim.cli.chains n``), in turns, each in a fresh process:
- cold build: ``load_spec`` → ``build_model`` → ``compile_model`` with an empty compile cache
  (the C compiler runs);
- warm build: the same with the cache filled by the cold build (no compiler, and no M, F or h
  derived: the code is looked up by the spec's structure);
- warm ``lagsim simulate`` (0.01 s, 2 samples; after one untimed run that builds the
  model-independent libraries, the C loop and the extension that calls the model): the whole
  process, and beside it a process that only imports numpy, symengine and scipy.integrate (what
  a run imported before the C loop made scipy.integrate unnecessary).
Figures are medians over ``--reps`` turns.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PYTHON = sys.executable
LAGSIM = str(Path(PYTHON).with_name("lagsim"))

BUILD = """
import sys, time
start = time.perf_counter()
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model
from lagsim.numeric.compile import compile_model
imported = time.perf_counter()
compile_model(build_model(load_spec(sys.argv[1])))
print(time.perf_counter() - imported)
"""
IMPORTS = "import numpy, scipy.integrate, symengine"


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def build_seconds(path: Path, env: dict[str, str]) -> float:
    done = subprocess.run([PYTHON, "-c", BUILD, str(path)], env=env, check=True,
                          capture_output=True, text=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in args.sizes:
            path = Path(folder) / f"chain_{n}.yaml"
            subprocess.run([PYTHON, "-m", "lagsim.cli.chains", str(n), "-o", str(path)],
                           check=True)
            cold, warm, run, bare = [], [], [], []
            for rep in range(args.reps):
                env = dict(os.environ, LAGSIM_CACHE=str(Path(folder) / f"cache_{n}_{rep}"))
                cold.append(build_seconds(path, env))
                warm.append(build_seconds(path, env))
                command = [LAGSIM, "simulate", str(path), "--t-end", "0.01", "--samples", "2"]
                timed(command, env)  # the model-independent libraries: the C loop, the caller
                run.append(timed(command, env))
                bare.append(timed([PYTHON, "-c", IMPORTS], env))
            row = {k: statistics.median(v) for k, v in
                   (("cold", cold), ("warm", warm), ("run", run), ("bare", bare))}
            rows.append((n, row))
            print(f"n={n}: cold build {row['cold']:.2f} s, warm build {row['warm']:.3f} s, "
                  f"warm simulate process {row['run']:.2f} s = {row['run'] / row['bare']:.2f}x "
                  f"the imports alone ({row['bare']:.2f} s)", file=sys.stderr)
    print("| n | cold build s | warm build s | warm/cold | warm simulate process s | "
          "imports only s | ratio |")
    print("|---|---|---|---|---|---|---|")
    for n, r in rows:
        print(f"| {n} | {r['cold']:.2f} | {r['warm']:.3f} | {r['warm'] / r['cold']:.3f} | "
              f"{r['run']:.2f} | {r['bare']:.2f} | {r['run'] / r['bare']:.2f} |")


if __name__ == "__main__":
    main()
