"""Make the pictures of docs/tour.md from the bundled systems (`make docs`).

Each picture but one is made by the `lagsim` command printed next to it in docs/tour.md, run
here in-process through the CLI (:data:`COMMANDS`), so the tour's commands are the ones that made
the files. The drift comparison puts three runs in one figure, which no single command does; it
is built from the Python API (:func:`drift_comparison`): the pendulum in natural coordinates
(seed 001_80d65b968ce3cb18.txt, §10.7) integrated by the augmented index-1 system (seed
003_88d23709419132a0.txt) for 100 s with each stabilizer, |φ|(t) of the rod constraint on a log
axis.

Usage: ``python docs/make_docs.py [OUTDIR]`` (default docs/img). PNGs at dpi 100 and a 5 s GIF at
15 frames per second (`lagsim animate` draws at dpi 100), so the files stay small enough to
commit (under 1 MB together).

Command outputs (issue 30, "docs that are tested"): every block of README.md and docs/tour.md
that a marker line ``<!-- make docs: lagsim ARGS -->`` (optionally ``[lines A-B]``, 1-based,
B open) precedes is what `lagsim ARGS` prints on stdout now (:func:`refresh`);
``python docs/make_docs.py --outputs`` rewrites those blocks and nothing else, and
tests/test_docs_outputs.py fails with a diff when a committed block differs.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import numpy as np

from lagsim.cli import main as lagsim_main

ROOT = Path(__file__).resolve().parent.parent
IMG = Path(__file__).resolve().parent / "img"
DOCS = (ROOT / "README.md", ROOT / "docs" / "tour.md")
"""The files whose marked blocks :func:`refresh` makes from the program."""
MARKER = re.compile(r"^<!-- make docs: lagsim (?P<args>.*?)"
                    r"(?: \[lines (?P<first>\d+)-(?P<last>\d*)\])? -->\n(?P<fence>```[\w-]*\n)(?P<body>.*?)^```$", re.M | re.S)
"""A marker line and the fenced block after it."""
DPI = 100
FLOOR = 1e-17
"""|φ| below this (exact zeros of a projected run) is drawn at this value on the log axis."""

COMMANDS: dict[str, list[str]] = {
    "double_pendulum_overview.png": [
        "plot", "double_pendulum", "--t-end", "10", "--dpi", str(DPI)],
    "driven_damped_pendulum_overview.png": [
        "plot", "driven_damped_pendulum", "--t-end", "30", "--dpi", str(DPI)],
    "double_pendulum_path.png": [
        "plot", "double_pendulum", "--kind", "path", "--system", "double_pendulum",
        "--t-end", "10", "--dpi", str(DPI)],
    "kepler_energy.png": [
        "plot", "kepler", "--kind", "energy", "--t-end", "100", "--dpi", str(DPI)],
    "heavy_top_path.png": [
        "plot", "heavy_top", "--kind", "path", "--t-end", "5", "--dpi", str(DPI)],
    "double_pendulum.gif": [
        "animate", "double_pendulum", "--t-end", "5", "--fps", "15", "--trail", "1"],
    "cart_pole_lqr.png": [
        "plot", str(ROOT / "tests" / "cart_pole_lqr.yaml"), "--controller", "lqr",
        "--at", "x=0, theta=0", "--Q", "theta=10", "--t-end", "10", "--kind", "time",
        "--columns", "x,theta", "--dpi", str(DPI)],
}
"""Image file name → `lagsim` arguments (``-o FILE`` is appended)."""

DRIFT = "drift_pendulum_natural.png"
LYAPUNOV = "lyapunov_driven_damped_pendulum.png"
LYAPUNOV_RUN = ["lyapunov", "driven_damped_pendulum", "--t-end", "1000", "--transient", "100"]
"""docs/analysis.md's run, whose --trace :data:`LYAPUNOV` draws with ``plot --kind lyapunov``."""
STABILIZERS = ("none", "baumgarte", "projection")


def run_cli(args: list[str]) -> None:
    """Run one `lagsim` command in this process; a failure stops `make docs`."""
    lagsim_main(args, standalone_mode=False)


def command_output(args: list[str]) -> str:
    """What `lagsim ARGS` prints on stdout (a pipe: 80 columns), run in this process; a
    command that fails stops `make docs`."""
    from click.testing import CliRunner

    result = CliRunner().invoke(lagsim_main, args)
    if result.exit_code != 0:
        raise RuntimeError(f"lagsim {shlex.join(args)} exited {result.exit_code}: "
                           f"{result.stderr or result.output}")
    return result.stdout


def refresh(text: str) -> str:
    """``text`` with every marked block replaced by what its command prints now."""

    def block(match: re.Match[str]) -> str:
        lines = command_output(shlex.split(match["args"])).splitlines()
        if match["first"]:
            first = int(match["first"]) - 1
            lines = lines[first:int(match["last"])] if match["last"] else lines[first:]
        head = match.group(0)[:match.start("body") - match.start(0)]
        return head + "".join(f"{line}\n" for line in lines) + "```"

    return MARKER.sub(block, text)


def outputs() -> None:
    """Rewrite the marked blocks of :data:`DOCS` (``--outputs``), saying which changed."""
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        new = refresh(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"{path}: command outputs updated")


def drift_comparison(out: Path, t_end: float = 100.0) -> dict[str, float]:
    """|φ|(t) of pendulum_natural's rod under `none`, `baumgarte` and `projection` (index1).

    Returns the largest |φ| of each run (printed by :func:`main`, quoted in docs/tour.md).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from lagsim.run.integrate import SimulateOptions, simulate
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import build_model
    from lagsim.viz.figures import save_figure

    spec = load_spec("pendulum_natural")
    model = build_model(spec)
    fig = Figure(figsize=(7.0, 3.6), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    worst: dict[str, float] = {}
    for colour, stabilize in zip(("C3", "C1", "C0"), STABILIZERS, strict=True):
        flags = {"t_end": t_end, "samples": 2001, "formulation": "index1",
                 "stabilize": stabilize}
        traj = simulate(spec, model, SimulateOptions.resolve(spec.simulate, flags))
        phi = np.abs(traj.column("residual_rod"))
        worst[stabilize] = float(phi.max())
        ax.semilogy(traj.t, np.maximum(phi, FLOOR), color=colour, linewidth=1.0,
                    label=f"{stabilize} (max {phi.max():.1e})")
    ax.set_xlabel("t")
    ax.set_ylabel("|residual_rod| = |x² + y² − l²|")
    ax.set_xlim(0.0, t_end)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small",
              title="--stabilize")
    fig.suptitle(f"pendulum_natural, index1, {t_end:g} s: constraint drift")
    save_figure(fig, out, dpi=DPI)
    return worst


def main(argv: list[str] | None = None) -> int:
    """Write the command outputs of :data:`DOCS`, then every picture into OUTDIR, and print
    each file's size; ``--outputs``: the command outputs only."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--outputs"]:
        outputs()
        return 0
    outputs()
    outdir = Path(args[0]) if args else IMG
    outdir.mkdir(parents=True, exist_ok=True)
    for name, command in COMMANDS.items():
        run_cli([*command, "-o", str(outdir / name)])
    worst = drift_comparison(outdir / DRIFT)
    trace = outdir / "lyapunov_trace.csv"
    run_cli([*LYAPUNOV_RUN, "--trace", str(trace), "--force"])
    run_cli(["plot", str(trace), "--kind", "lyapunov", "--title", "driven_damped_pendulum",
             "--dpi", str(DPI), "-o", str(outdir / LYAPUNOV)])
    trace.unlink()
    for name in [*COMMANDS, DRIFT, LYAPUNOV]:
        print(f"{outdir / name}: {(outdir / name).stat().st_size / 1024:.0f} kB")
    print("largest |phi|: " + ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
