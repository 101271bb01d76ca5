"""Issue 31's goals in one command: each measured by its bench, judged, written as one table.

    .venv/bin/python bench/goals.py                    # every goal (make bench-goals), ~15 min
    .venv/bin/python bench/goals.py --only startup,build-8   # some parts or goals
    .venv/bin/python bench/goals.py --quick            # smoke run: small sizes, writes nothing
    .venv/bin/python bench/goals.py --dry-run          # the commands, and the table saved
    .venv/bin/python bench/goals.py --from-json bench/goals.json   # the table again, no run

Each goal of issue 31 ("Goals, each in bench/ side by side in one run") is declared once in
:data:`GOALS`: its text, the bench run (:data:`PARTS`) that measures it, the ratios of that run
it is judged on, and its threshold and direction. The parts run one after another, each in its
own process with ``--json FILE`` (``bench/ratios.py``: the ratios the bench prints, as numbers);
the 1-minute load average is read before and after each. A goal is held when every one of its
ratios meets the threshold in that run ("narrowly" when the nearest is within 5 % of it); a goal
that asks for a quiet machine says so when the load was 1 or more. The raw figures go to
``bench/goals.json`` (with ``--only``, merged into the parts saved before) and the table into
``bench/RESULTS.md`` and ``bench/README.md`` between the markers of :data:`BEGIN` and
:data:`END` (``bench/run.py`` keeps the block when it rewrites RESULTS.md). Speed is never
asserted in tests; ``tests/test_bench_goals.py`` checks the judging and that every part's bench
accepts its flags.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SAVED = HERE / "goals.json"
RESULTS = HERE / "RESULTS.md"
README = HERE / "README.md"
BEGIN = "<!-- issue 31's goals: begin (written by bench/goals.py from bench/goals.json) -->"
END = "<!-- issue 31's goals: end -->"
NARROW = 0.05
"""Within this fraction of its threshold a goal is held (or missed) "narrowly"."""
QUIET_LOAD = 1.0
"""A 1-minute load average below this, before and after, is a quiet run of the 2 cores."""


@dataclass(frozen=True)
class Part:
    """One bench run: ``bench/SCRIPT`` with ``args``; ``quick`` its smoke form (None: left out of
    ``--quick``)."""

    name: str
    script: str
    args: tuple[str, ...]
    quick: tuple[str, ...] | None

    def arguments(self, quick: bool) -> tuple[str, ...]:
        return self.quick if quick and self.quick is not None else self.args

    def shown(self, quick: bool = False) -> str:
        return shlex.join([self.script, *self.arguments(quick)])


@dataclass(frozen=True)
class Goal:
    """One goal: ``text`` (issue 31's words), the part that measures it, the ratios it is judged
    on (label shown, name the bench records; every one must meet the threshold), ``threshold``
    and its direction (``at_least``: the ratio must be ≥ it; else ≤), whether the issue asks
    for it on a quiet machine, and ratios of the same run shown beside, not judged."""

    name: str
    text: str
    part: str
    ratios: tuple[tuple[str, str], ...]
    threshold: float
    at_least: bool
    quiet: bool = False
    beside: tuple[tuple[str, str], ...] = ()

    def bound(self) -> str:
        return f"{'≥' if self.at_least else '≤'} {self.threshold:.3g}"


PARTS = (
    Part("startup", "startup.py", (), ("--reps", "2")),
    Part("per-run", "fixed_cost.py", ("--clock", "cpu", "--part", "1"),
         ("--clock", "cpu", "--part", "1", "--quick")),
    Part("api-loop", "fixed_cost.py", ("--part", "2", "--runs", "200"),
         ("--part", "2", "--runs", "20")),
    Part("build-8", "build.py", ("--sizes", "8"), ("--sizes", "8", "--reps", "1")),
    Part("build-32", "build.py", ("--sizes", "32"), None),
    Part("peers", "peers.py", ("--sizes", "32", "64"), ("--sizes", "8", "--reps", "1")),
    Part("sweep-cluster", "sweep.py",
         ("--cluster-only", "--cluster", "2000", "--cluster-t-end", "2", "--workers", "2"),
         ("--cluster-only", "--cluster", "100", "--cluster-t-end", "2", "--workers", "2")),
)
"""The bench runs, in the order they run."""

SIM_C = "System.simulate / C ref"
LOOP_C = "C loop alone / C ref"
CASADI = "casadi SX + gcc / lagsim simulate"
GOALS = (
    Goal("per-run-1e-10", "`System.simulate` of the double pendulum ≤ 1.5× the hand-written C "
         "DOP853 at 1e-10 (CPU time)", "per-run", (("", f"{SIM_C} 1e-10"),), 1.5, False,
         beside=(("lagsim's C loop alone", f"{LOOP_C} 1e-10"),)),
    Goal("per-run-1e-6", "the same ≤ 2× at 1e-6 (CPU time)", "per-run",
         (("", f"{SIM_C} 1e-06"),), 2.0, False,
         beside=(("lagsim's C loop alone", f"{LOOP_C} 1e-06"),)),
    Goal("api-loop", "a loop of API runs ≤ 1.1× `sweep --scheduler synchronous`", "api-loop",
         (("", "API loop / synchronous sweep"),), 1.1, False),
    Goal("build-8", "whole-process cold `simulate` of the 8-chain within 1.5× of CasADi SX + gcc "
         "(CasADi's time / lagsim's ≥ 1/1.5)", "build-8",
         (("wall", f"{CASADI} wall n=8"), ("CPU", f"{CASADI} cpu n=8")), 1 / 1.5, True,
         beside=(("sympy Kane + lambdify / lagsim, wall",
                  "sympy Kane + lambdify / lagsim simulate wall n=8"),)),
    Goal("build-32", "the same for the 32-chain (keep the lead)", "build-32",
         (("wall", f"{CASADI} wall n=32"),), 1 / 1.5, True),
    Goal("rhs-32", "right-hand side at n = 32 ≥ 1.5× faster than Pinocchio's ABA and MuJoCo's "
         "`mj_forward`", "peers",
         (("Pinocchio", "pinocchio RHS / lagsim RHS n=32"),
          ("MuJoCo", "mujoco RHS / lagsim RHS n=32")), 1.5, True,
         beside=(("PyDy (Kane, cython)", "pydy RHS / lagsim RHS n=32"),)),
    Goal("rhs-64", "right-hand side at n = 64 no slower than either", "peers",
         (("Pinocchio", "pinocchio RHS / lagsim RHS n=64"),
          ("MuJoCo", "mujoco RHS / lagsim RHS n=64")), 1.0, True),
    Goal("trajectory-32", "whole 10 s trajectory at n = 32 ≥ 2× Pinocchio + DOP853", "peers",
         (("", "pinocchio+DOP853 / lagsim simulate n=32"),), 2.0, True,
         beside=(("n = 64", "pinocchio+DOP853 / lagsim simulate n=64"),
                 ("PyDy + DOP853", "pydy+DOP853 / lagsim simulate n=32"),
                 ("CasADi CVODES Adams", "casadi cvodes adams / lagsim simulate n=32"),
                 ("CasADi CVODES BDF", "casadi cvodes bdf / lagsim simulate n=32"))),
    Goal("startup-simulate", "`lagsim simulate pendulum` ≤ 1.5× `python -c 'import numpy, "
         "scipy'`", "startup",
         (("wall", "lagsim simulate pendulum / python -c 'import numpy, scipy' wall"),
          ("CPU", "lagsim simulate pendulum / python -c 'import numpy, scipy' cpu")), 1.5, False),
    Goal("startup-help", "`lagsim --help` ≤ 1.2× `python -c 'import click'`", "startup",
         (("wall", "lagsim --help / python -c 'import click' wall"),
          ("CPU", "lagsim --help / python -c 'import click' cpu")), 1.2, False),
    Goal("sweep-cluster", "2,000 runs of 2 s on a 2-worker LocalCluster ≥ 1.6× one process, on "
         "a quiet machine", "sweep-cluster", (("", "one process / cluster"),), 1.6, True,
         quiet=True),
)
"""Issue 31's goals, each once, in the issue's order."""


def part_named(name: str) -> Part:
    return next(p for p in PARTS if p.name == name)


def verdict(goal: Goal, measured: dict[str, float], lower_bounds: frozenset[str]) -> str:
    """``yes``/``no`` (", narrowly" when the nearest ratio is within :data:`NARROW` of the
    threshold), ``not measured`` when a ratio is missing, ``not known`` when a missing peer
    left only a lower bound that does not decide it."""
    margins = []
    for _, name in goal.ratios:
        if name not in measured:
            return "not measured"
        value = measured[name]
        margin = value / goal.threshold if goal.at_least else goal.threshold / value
        if name in lower_bounds and (margin < 1) == goal.at_least:
            return "not known (a peer was stopped)"
        margins.append(margin)
    worst = min(margins)
    if worst >= 1:
        return "yes, narrowly" if worst <= 1 + NARROW else "yes"
    missed = [m for m in margins if m < 1]
    return "no, narrowly" if min(missed) >= 1 - NARROW else "no"


def shown_ratios(goal: Goal, measured: dict[str, float], lower_bounds: frozenset[str]) -> str:
    """The judged ratios, the goal's bound, then the ratios beside it that were measured."""
    def figure(label: str, name: str) -> str:
        value = measured.get(name)
        shown = "–" if value is None else f"{'> ' if name in lower_bounds else ''}{value:.2f}"
        return f"{label} {shown}".strip()

    beside = [figure(label, name) for label, name in goal.beside if name in measured]
    return (", ".join(figure(label, name) for label, name in goal.ratios) + f" ({goal.bound()})"
            + "".join(f"; {cell}" for cell in beside))


def row(goal: Goal, saved: dict) -> str:
    """The table row of ``goal`` from the saved figures of its part."""
    part = part_named(goal.part)
    run = saved.get("parts", {}).get(part.name)
    if run is None:
        return f"| {goal.text} | `{part.shown()}` | – | – | not measured | – |"
    measured, bounds = run["ratios"], frozenset(run["lower_bounds"])
    held = verdict(goal, measured, bounds)
    if run["exit"] != 0:
        held += f" (the bench exited with {run['exit']})"
    before, after = run["load_before"][0], run["load_after"][0]
    if goal.quiet and held.startswith(("yes", "no")) and max(before, after) >= QUIET_LOAD:
        held += f" (not quiet: load ≥ {QUIET_LOAD:g})"
    return (f"| {goal.text} | `{run['command']}` | {shown_ratios(goal, measured, bounds)} "
            f"| {before:.2f} → {after:.2f} | {held} | "
            f"{run['started']}, {run['commit']} |")


def block(saved: dict) -> str:
    """The generated section: heading, how to read it, the table."""
    lines = [
        BEGIN,
        "## Issue 31's goals: where each stands",
        "",
        "Written by `make bench-goals` (`bench/goals.py`, where each goal is declared once: "
        "its bench, ratios, threshold) from `bench/goals.json`. Each bench ran in its own "
        f"process, one after another, on {saved.get('cores', os.cpu_count())} cores; every "
        "figure is a ratio measured side by side inside that run (for CasADi, Pinocchio, MuJoCo "
        "and the cluster the peer's time over lagsim's, above 1 when lagsim is faster; for the "
        "others lagsim's time over the reference's). Load: the 1-minute load average before → "
        "after the bench. Held: every ratio of the goal met its threshold in that run; "
        f"\"narrowly\": the nearest within {NARROW:.0%} of it.",
        "",
        "| goal | bench | measured (goal) | load | held | when (UTC), commit |",
        "|---|---|---|---|---|---|",
        *(row(goal, saved) for goal in GOALS),
        END,
    ]
    return "\n".join(lines)


def splice(text: str, generated: str) -> str:
    """``text`` with its block between :data:`BEGIN` and :data:`END` replaced by ``generated``
    (appended after a blank line when ``text`` has none)."""
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 and stop < 0:
        return text.rstrip("\n") + "\n\n" + generated + "\n"
    if start < 0 or stop < start:
        raise ValueError(f"the markers {BEGIN!r} and {END!r} are not in order")
    return text[:start] + generated + text[stop + len(END):]


def keep_block(old: str, new: str) -> str:
    """``new`` (a file rewritten by another bench) with the block ``old`` had, if it had one."""
    start, stop = old.find(BEGIN), old.find(END)
    return new if start < 0 or stop < start else splice(new, old[start:stop + len(END)])


class _Parsed(Exception):
    def __init__(self, namespace: argparse.Namespace) -> None:
        super().__init__("parsed")
        self.namespace = namespace


def parses(script: str, args: tuple[str, ...]) -> argparse.Namespace:
    """The namespace ``bench/SCRIPT``'s ``main`` parses from ``args`` (and ``--json``), without
    running the bench: its module is imported (registered in ``sys.modules`` meanwhile, as
    ``dataclasses`` needs) and ``main`` stopped right after parsing. An
    unknown flag or a bad value exits with argparse's status 2 (``SystemExit``)."""
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        raise _Parsed(original(self, args, namespace))

    spec = importlib.util.spec_from_file_location(f"_goals_{Path(script).stem}", HERE / script)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(HERE / script)
    module = importlib.util.module_from_spec(spec)
    with (mock.patch.object(sys, "argv", [script, *args, "--json", os.devnull]),
          mock.patch.object(sys, "path", [str(HERE), *sys.path]),
          mock.patch.object(argparse.ArgumentParser, "parse_args", parse_then_stop)):
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
            module.main()
        except _Parsed as parsed:
            return parsed.namespace
        finally:
            del sys.modules[spec.name]
    raise RuntimeError(f"bench/{script}'s main returned without parsing its arguments")


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("-dirty" if git("status", "--porcelain",
                                                                   "lagsim") else "")


def measure(part: Part, quick: bool, at: str) -> dict:
    """Run one part in a child process, its output shown as it comes; its saved figures."""
    with tempfile.TemporaryDirectory(prefix="lagsim-goals-") as folder:
        out = Path(folder) / "ratios.json"
        args = part.arguments(quick)
        print(f"\n=== bench/{part.shown(quick)}", flush=True)
        before = os.getloadavg()
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(HERE / part.script), *args, "--json",
                               str(out)], cwd=ROOT)
        seconds = time.perf_counter() - start
        after = os.getloadavg()
        got = json.loads(out.read_text()) if out.exists() else {"ratios": {},
                                                                 "lower_bounds": []}
    started = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=seconds)
    return {"command": part.shown(quick), "started": started.strftime("%Y-%m-%d %H:%M"),
            "commit": at, "seconds": round(seconds, 1),
            "load_before": [round(x, 2) for x in before],
            "load_after": [round(x, 2) for x in after], "exit": done.returncode, **got}


def chosen(only: str | None) -> tuple[tuple[Part, ...], tuple[Goal, ...]]:
    """The parts to run and goals to judge for ``--only`` (part or goal names)."""
    if not only:
        return PARTS, GOALS
    names = set(only.split(","))
    unknown = names - {p.name for p in PARTS} - {g.name for g in GOALS}
    if unknown:
        raise SystemExit(f"goals.py: no part or goal {', '.join(sorted(unknown))}; parts: "
                         f"{', '.join(p.name for p in PARTS)}; goals: "
                         f"{', '.join(g.name for g in GOALS)}")
    goals = tuple(g for g in GOALS if g.name in names or g.part in names)
    parts = tuple(p for p in PARTS if p.name in {g.part for g in goals})
    return parts, goals


def write(saved: dict, results: Path, readme: Path) -> None:
    generated = block(saved)
    for path in (results, readme):
        path.write_text(splice(path.read_text(encoding="utf-8"), generated), encoding="utf-8")
        print(f"wrote the table into {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated parts or goals: "
                        + ", ".join(p.name for p in PARTS) + "; "
                        + ", ".join(g.name for g in GOALS))
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: each part's short form; the table is printed, nothing "
                        "written unless --save")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands and the table of the saved figures; run and "
                        "write nothing")
    parser.add_argument("--from-json", type=Path, metavar="FILE",
                        help="write the table from FILE's saved figures, without running")
    parser.add_argument("--save", type=Path, metavar="FILE",
                        help=f"where the figures go (default {SAVED.relative_to(ROOT)}; none "
                        "with --quick)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    parts, _ = chosen(args.only)
    if args.from_json is not None:
        write(json.loads(args.from_json.read_text()), args.results, args.readme)
        return 0
    save = args.save or (None if args.quick else SAVED)
    previous = save if save is not None and save.exists() else SAVED
    saved = json.loads(previous.read_text()) if previous.exists() else {"parts": {}}
    if args.dry_run:
        for part in parts:
            print(f"bench/{part.shown(args.quick)}")
        print(block(saved))
        return 0
    for part in parts:
        parses(part.script, part.arguments(args.quick))
    at = commit()
    runs = {p.name: measure(p, args.quick, at) for p in parts
            if not (args.quick and p.quick is None)}
    saved = {"cores": os.cpu_count(), "parts": {**({} if args.quick else saved["parts"]),
                                                **runs}}
    print()
    print(block(saved))
    if save is not None:
        save.write_text(json.dumps(saved, indent=1) + "\n", encoding="utf-8")
        print(f"\nsaved the figures in {save}")
    if not args.quick:
        write(saved, args.results, args.readme)
    return 1 if any(r["exit"] for r in runs.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
