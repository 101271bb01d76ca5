"""`lagsim derive` before and after, side by side: the same commands from two source trees,
alternating, fastest of ``--reps`` each (issue 16 §4). On a shared machine the ratio of the two
is what holds; each tree's absolute time moves with the load.

    git archive fcf9b95 | tar -x -C /tmp/before
    .venv/bin/python bench/derive_compare.py /tmp/before --reps 3

Each case runs ``python -m lagsim derive FILE ARGS`` with PYTHONPATH set to the tree (this
checkout for "after"); bench files are passed by absolute path, the chains are generated.
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

HERE = Path(__file__).resolve().parent
AFTER = HERE.parent
CASES = (
    ("pendulum",), ("a02_four_bar", "--form", "reduced"), ("chain8-natural", "--form", "reduced"),
    ("chain4-natural", "--form", "reduced"), ("moving_pivot_pendulum", "--form", "reduced"),
    ("slider_crank", "--form", "reduced"), ("double_pendulum_constrained", "--form", "reduced"),
    ("messy3", "--form", "hamilton"), ("uk2", "--form", "hamilton"),
    ("chain8", "--form", "hamilton"), ("pendulum_redundant", "--form", "udwadia-kalaba"),
    ("chain8", "--form", "matrix", "--format", "json"), ("messy3", "--form", "all"),
    ("uk2", "--form", "all"), ("chain8", "--form", "all"), ("chain8-natural", "--form", "all"),
    ("spring_pendulum", "--form", "all"), ("a02_four_bar", "--form", "all"),
)


def _file(name: str, folder: Path) -> str:
    """A bench file, a generated chain (chainN or chainN-natural) or a bundled name."""
    if name in ("messy3", "uk2"):
        return str(HERE / f"derive_{name}.yaml")
    if name.startswith("chain"):
        path = folder / f"{name}.yaml"
        size = name.removeprefix("chain").removesuffix("-natural")
        extra = ["--natural"] if name.endswith("natural") else []
        subprocess.run([sys.executable, "-m", "lagsim.cli.chains", size, *extra, "-o", str(path)],
                       check=True, capture_output=True)
        return str(path)
    return name


def _run(tree: Path, args: list[str]) -> tuple[float, float, int | str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        status: int | str = subprocess.run([sys.executable, "-m", "lagsim", "derive", *args],
                                           env=env, capture_output=True, timeout=60,
                                           cwd=tempfile.gettempdir()).returncode
    except subprocess.TimeoutExpired:
        status = "timeout"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="the source tree to compare with")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": AFTER}
    print("| case | before wall / CPU s | after wall / CPU s | CPU ratio |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="lagsim-compare-") as tmp:
        for case in CASES:
            argv_ = [_file(case[0], Path(tmp)), *case[1:]]
            runs: dict[str, list] = {k: [] for k in trees}
            for _ in range(args.reps):
                for name, tree in trees.items():
                    runs[name].append(_run(tree, argv_))
            wall = {k: min(r[0] for r in v) for k, v in runs.items()}
            cpu = {k: min(r[1] for r in v) for k, v in runs.items()}
            status = {k: v[-1][2] for k, v in runs.items()}
            note = "" if status["before"] == status["after"] == 0 else (
                f" (exit {status['before']} / {status['after']})")
            ratio = cpu["after"] / cpu["before"]
            print(f"| {' '.join(case)}{note} | {wall['before']:.2f} / {cpu['before']:.2f} | "
                  f"{wall['after']:.2f} / {cpu['after']:.2f} | {ratio:.2f} |", flush=True)
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
