"""Golden outputs of lagsim recorded before the move into subpackages (issue 23, "Behaviour
unchanged"): after the move, every command here must give the same bytes.

Each command runs in-process through ``click.testing.CliRunner`` on ``lagsim.cli.main`` (an
import path the move keeps):

- ``simulate SYSTEM`` for every bundled system, with no option and under each ``--formulation``
  (ode, index1, udwadia-kalaba, reduced) with each ``--stabilize`` (none, baumgarte,
  projection), over ``--t-end 1 --samples 21``. A combination lagsim refuses is recorded too: its
  exit code and its one stderr line are behaviour as well. Then every ``--method`` on one
  unconstrained and one constrained system (rattle and variational with ``--dt 0.05``), and
  ``--action`` and ``--invariants`` once each.
- ``derive SYSTEM --form F --format text|latex|json --budget 100`` for every form of
  ``lagsim derive --help`` but ``all`` (their concatenation) and every bundled system.
- ``check SYSTEM`` for every bundled system.

What depends on the CPU's speed rather than on lagsim's code is given a budget it does not reach
(:data:`DERIVE_BUDGET`) or left out (:data:`LEFT_OUT`).

Each output goes to ``data/<command>__<system>__<options>.<ext>`` (stdout; ``.err`` beside it
when stderr is not empty) and ``data/MANIFEST.json`` lists, per command, its argv, file, sha256
and exit code. The list of commands is built from ``lagsim systems`` and the choices of the
``--help`` texts; ``--check`` runs what the manifest lists and fails if that list differs from
the one built now (a system or choice added or gone).

``python tests/golden/record.py --write`` records, ``--check`` reports every byte difference
(exit 1 on any). Byte identity holds on the machine that recorded them; tests/test_golden.py
compares the numbers of the CSVs within 1e-12 so that another CPU or libm passes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
MANIFEST = DATA / "MANIFEST.json"

WINDOW = ("--t-end", "1", "--samples", "21")
"""The span of every simulate run: short, so that the 500-odd runs take seconds."""

FORMULATIONS = ("ode", "index1", "udwadia-kalaba", "reduced")
STABILIZERS = ("none", "baumgarte", "projection")
METHOD_SYSTEMS = {"pendulum": None, "pendulum_natural": ("RK45", "Radau", "rattle",
                                                         "variational")}
"""Systems run under other methods (None: every ``--method``): the unconstrained pendulum
under each, the constrained one under a Python solver, Radau and the two fixed-step loops (the
other Python solvers take seconds on constrained systems)."""
FIXED_STEP = {"rattle": ("--dt", "0.05"), "variational": ("--dt", "0.05")}
EXTRA_FLAGS = (("spherical_pendulum", "--invariants"), ("pendulum", "--action"))
FORMATS = {"text": "txt", "latex": "tex", "json": "json"}

DERIVE_BUDGET = ("--budget", "100")
"""Given to every derive: under the default budget of 0.3 s of CPU time, what is printed depends
on the CPU's speed and load (rolling_disk_line's udwadia-kalaba form changed between runs, and
slider_crank's reduced form under a load of 5 on 2 cores). With 100 s no tidying stops early,
and every output but rolling_disk_line's udwadia-kalaba form (and a02_four_bar's reduced one,
left out) is the same as under the default budget."""

LEFT_OUT = {
    ("simulate", "a02_four_bar", "reduced", "none"):
        "the symbolic reduction runs out of its 3 s of CPU time (lagsim.reduce.SOLVE_BUDGET), "
        "so the output depends on the CPU's speed (and the run takes 3 s)",
    ("derive", "a02_four_bar", "reduced"):
        "over 3 s in each format with --budget 100 (the default budget runs out, so the output "
        "would depend on the CPU's speed)",
}
"""Commands left out, with the reason."""

LEFT_OUT_SYSTEMS = {
    "whipple_bicycle":
        "each derive form takes 5–55 s and every formulation a build of its own (the whole set "
        "would take most of an hour); tests/test_whipple_bicycle.py checks the model against "
        "the published benchmark instead; its check alone takes 48 s here, so only its "
        "default simulate is recorded",
}
"""Systems recorded only by their default ``simulate``, with the reason."""

SLOW_SECONDS = 2.0
"""A command over this is named while recording."""


@dataclass(frozen=True)
class Golden:
    """One recorded command: its argv after ``lagsim`` and the file its stdout goes to."""

    argv: tuple[str, ...]
    file: str


@dataclass(frozen=True)
class Outcome:
    """What a command gave: stdout, stderr, exit code."""

    stdout: bytes
    stderr: bytes
    exit_code: int


def run(argv: Sequence[str]) -> Outcome:
    """``lagsim ARGV`` in this process."""
    from click.testing import CliRunner

    from lagsim.cli import main

    result = CliRunner().invoke(main, list(argv), catch_exceptions=False)
    return Outcome(result.stdout_bytes, result.stderr_bytes, result.exit_code)


def _choices(command: str, option: str) -> tuple[str, ...]:
    """The choices ``lagsim COMMAND --help`` lists for ``option`` (``[a|b|c]``)."""
    text = run([command, "--help"]).stdout.decode()
    found = re.search(re.escape(option) + r"\s+\[([^\]]+)\]", text)
    if found is None:
        raise RuntimeError(f"lagsim {command} --help lists no choices for {option}")
    return tuple(found.group(1).split("|"))


def systems() -> tuple[str, ...]:
    """The bundled systems, as ``lagsim systems`` lists them."""
    return tuple(line.split()[0] for line in run(["systems"]).stdout.decode().splitlines())


def _simulate(system: str, *options: str, label: Sequence[str] = ()) -> Golden:
    name = "__".join(["simulate", system, *label] if label else ["simulate", system, "default"])
    return Golden(("simulate", system, *options, *WINDOW), name + ".csv")


def planned() -> tuple[Golden, ...]:
    """Every command to record, built from what lagsim offers now."""
    names = systems()
    methods = _choices("simulate", "--method")
    forms = [f for f in _choices("derive", "--form") if f != "all"]
    assert set(FORMULATIONS) | {"auto"} == set(_choices("simulate", "--formulation"))
    assert set(STABILIZERS) == set(_choices("simulate", "--stabilize"))
    found: list[Golden] = []
    for system in names:
        found.append(_simulate(system))
        for formulation in FORMULATIONS:
            for stabilizer in STABILIZERS:
                if (("simulate", system, formulation, stabilizer) in LEFT_OUT
                        or system in LEFT_OUT_SYSTEMS):
                    continue
                found.append(_simulate(system, "--formulation", formulation, "--stabilize",
                                       stabilizer, label=(formulation, stabilizer)))
    for system, chosen in METHOD_SYSTEMS.items():
        for method in chosen or methods:
            found.append(_simulate(system, "--method", method, *FIXED_STEP.get(method, ()),
                                   label=(f"method-{method}",)))
    for system, flag in EXTRA_FLAGS:
        found.append(_simulate(system, flag, label=(flag.lstrip("-"),)))
    for system in names:
        for form in forms:
            if ("derive", system, form) in LEFT_OUT or system in LEFT_OUT_SYSTEMS:
                continue
            for fmt, ext in FORMATS.items():
                found.append(Golden(("derive", system, "--form", form, "--format", fmt,
                                     *DERIVE_BUDGET),
                                    f"derive__{system}__{form}.{ext}"))
    for system in names:
        if system not in LEFT_OUT_SYSTEMS:
            found.append(Golden(("check", system), f"check__{system}.txt"))
    files = [g.file for g in found]
    assert len(set(files)) == len(files), "two commands would write one file"
    return tuple(found)


def recorded() -> tuple[tuple[Golden, dict[str, object]], ...]:
    """The commands of the manifest with their entries (sha256, exit code, stderr file)."""
    entries = json.loads(MANIFEST.read_text(encoding="utf-8"))["outputs"]
    return tuple((Golden(tuple(e["argv"]), e["file"]), e) for e in entries)


def sha256(data: bytes) -> str:
    """The hex sha256 of ``data``, as the manifest lists it."""
    return hashlib.sha256(data).hexdigest()


def _err_file(golden: Golden) -> str:
    return golden.file.rpartition(".")[0] + ".err"


def _entry(golden: Golden, outcome: Outcome) -> dict[str, object]:
    return {"argv": list(golden.argv), "file": golden.file, "sha256": sha256(outcome.stdout),
            "exit_code": outcome.exit_code,
            "stderr_file": _err_file(golden) if outcome.stderr else None,
            "stderr_sha256": sha256(outcome.stderr) if outcome.stderr else None}


def _timed(goldens: Sequence[Golden]) -> Iterator[tuple[Golden, Outcome, float]]:
    for golden in goldens:
        began = time.perf_counter()
        outcome = run(golden.argv)
        yield golden, outcome, time.perf_counter() - began


def write() -> int:
    """Record every planned command into :data:`DATA` and the manifest."""
    goldens = planned()
    DATA.mkdir(parents=True, exist_ok=True)
    for old in DATA.iterdir():
        old.unlink()
    began = time.perf_counter()
    entries = []
    for golden, outcome, seconds in _timed(goldens):
        (DATA / golden.file).write_bytes(outcome.stdout)
        if outcome.stderr:
            (DATA / _err_file(golden)).write_bytes(outcome.stderr)
        entries.append(_entry(golden, outcome))
        if seconds > SLOW_SECONDS:
            print(f"{seconds:.1f} s: lagsim {' '.join(golden.argv)}")
    manifest = {
        "recorded_on": {"machine": platform.machine(), "python": platform.python_version(),
                        "LAGSIM_NO_CC": os.environ.get("LAGSIM_NO_CC")},
        "left_out": {" ".join(key): why for key, why in LEFT_OUT.items()},
    }
    lines = ",\n".join(json.dumps(e, ensure_ascii=False) for e in entries)
    text = json.dumps(manifest, indent=1, ensure_ascii=False)[:-2]
    MANIFEST.write_text(f'{text},\n "outputs": [\n{lines}\n ]\n}}\n', encoding="utf-8")
    import lagsim

    print(f"recorded {len(entries)} commands of {Path(lagsim.__file__).parent} in "
          f"{time.perf_counter() - began:.1f} s into {DATA}")
    return 0


def check() -> int:
    """Run every command of the manifest and report each byte difference; 1 on any."""
    entries = recorded()
    problems: list[str] = []
    now = [g.argv for g in planned()]
    then = [g.argv for g, _ in entries]
    if now != then:
        problems += [f"no longer planned: lagsim {' '.join(a)}" for a in then if a not in now]
        problems += [f"not recorded: lagsim {' '.join(a)}" for a in now if a not in then]
        problems += ["the planned commands are in another order"] if not problems else []
    began = time.perf_counter()
    for (golden, entry), (_, outcome, _) in zip(entries, _timed([g for g, _ in entries])):
        problems += differences(golden, entry, outcome)
    import lagsim

    print(f"checked {len(entries)} commands of {Path(lagsim.__file__).parent} in "
          f"{time.perf_counter() - began:.1f} s: {len(problems)} differences")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


def differences(golden: Golden, entry: dict[str, object], outcome: Outcome) -> list[str]:
    """How ``outcome`` differs from the recorded bytes of ``golden``, one line a difference."""
    command = f"lagsim {' '.join(golden.argv)}"
    found = []
    if outcome.exit_code != entry["exit_code"]:
        found.append(f"{command}: exit code {outcome.exit_code}, recorded {entry['exit_code']}")
    pairs = [("stdout", (DATA / golden.file).read_bytes(), outcome.stdout)]
    err = entry["stderr_file"]
    pairs.append(("stderr", (DATA / str(err)).read_bytes() if err else b"", outcome.stderr))
    for stream, old, new in pairs:
        if old != new:
            found.append(f"{command}: {stream} differs {_first_difference(old, new)}")
    return found


def _first_difference(old: bytes, new: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    line = old[:at].count(b"\n") + 1
    return (f"from byte {at} (line {line}; {len(old)} bytes recorded, {len(new)} now): "
            f"recorded {old[at:at + 60]!r}, now {new[at:at + 60]!r}")


def cli(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="record the outputs")
    mode.add_argument("--check", action="store_true",
                      help="re-run and report byte differences (exit 1 on any)")
    args = parser.parse_args(argv)
    return write() if args.write else check()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.exit(cli())
