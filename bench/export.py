"""Export time and FMU size for the n-chain, and the FMU's Co-Simulation run against ``lagsim
simulate`` in-process (issue 25, "Measure").

    .venv/bin/python bench/export.py              # the 8-chain, 3 runs each
    .venv/bin/python bench/export.py --reps 1 --size 4

``lagsim export chain_n.yaml --fmu`` is timed as a user runs it (a fresh process: deriving,
generating C, compiling the FMU's binary); the FMU's size is the zip's. Then the same 10 s run
(samples 1001, tolerance 1e-10) through FMPy's Co-Simulation (DOP853 inside the FMU) and through
``lagsim.load(...).simulate`` in this process after a warm-up (the compiled model reused); the
FMPy part is skipped with one line when FMPy is not installed (``pip install -e '.[test]'``).
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    n, reps = args.size, args.reps
    print(f"# lagsim export: the {n}-chain\n")
    print(f"load average before: {os.getloadavg()[0]:.2f}\n")
    with tempfile.TemporaryDirectory() as folder:
        system = Path(folder) / f"chain_{n}.yaml"
        subprocess.run([sys.executable, "-m", "lagsim.cli.chains", str(n), "-o", str(system)],
                       check=True, capture_output=True)
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
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
