"""Issue 23, "one run path": ``lagsim simulate``, ``System.simulate`` of the API and each
``lagsim sweep`` run go through one function (:func:`lagsim.run.session.run_spec`), so a sweep
run and an API run are ``lagsim simulate`` with their values.

Every row of the options table (:data:`lagsim.spec.options.OPTIONS`) that changes the CSV has a
representative value in :data:`VALUES`; the rows that do not are in :data:`NOT_IN_CSV` with the
reason, and a test holds every row to one of the two. The values are run in a few groups (one
``simulate`` and one single-value ``sweep --save-trajectories`` each, in-process through click's
CliRunner, short runs, and once through ``lagsim.load(...).simulate(...)``), and the CSVs must
agree to the byte. Before the fix the sweep
accepted ``--action`` and ``--invariants`` and dropped their columns.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import lagsim
from lagsim.cli import main
from lagsim.spec.options import OPTIONS

VALUES: dict[str, str] = {
    "t_start": "0.5",
    "t_end": "1.25",
    "samples": "7",
    "dt": "0.25",
    "method": "RK45",
    "rtol": "1e-6",
    "atol": "1e-7",
    "formulation": "udwadia-kalaba",
    "stabilize": "baumgarte",
    "baumgarte": "2,3",
    "stop_when": "theta",
    "section": "theta",
    "section_direction": "up",
    "invariants": "",
    "action": "",
    "controller": "lqr",
    "at": "x=0, theta=0",
    "Q": "1,10,1,1",
    "R": "0.5",
    "saturate": "5",
    "sensitivities": "l,theta",
    "sensitivity_errors": "joint",
}
"""A representative value of each option that changes the CSV ("" for an on/off switch)."""

NOT_IN_CSV: dict[str, str] = {
    "strict_initial": "it refuses a start that would be moved onto the constraints (an error); "
                      "a run that goes has the same rows with it or without",
}
"""The options that never change the CSV of a run that succeeds, and why."""

GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pendulum", ("t_start", "t_end", "samples", "method", "rtol", "atol", "invariants",
                  "action")),
    ("pendulum", ("dt", "stop_when")),
    ("pendulum", ("section", "section_direction")),
    ("pendulum_constrained", ("formulation", "stabilize", "baumgarte", "samples")),
    (str(Path(__file__).with_name("cart_pole_lqr.yaml")),
     ("controller", "at", "Q", "R", "saturate")),
    ("pendulum", ("sensitivities", "samples")),
    ("pendulum", ("sensitivities", "sensitivity_errors")),
)
"""The options run together: one group per system and set of options that go together (``dt``
or ``samples``, ``section_direction`` with ``section``, ``baumgarte`` with its stabilizer)."""


def _flags(names: tuple[str, ...]) -> list[str]:
    row = {o.name: o for o in OPTIONS}
    out: list[str] = []
    for name in names:
        flag = row[name].flag
        out += [flag] if row[name].switch else [flag, VALUES[name]]
    if "t_end" not in names:
        out += ["--t-end", "3" if "section" in names else "1"]
    return out


def test_every_option_is_tabled_or_excused() -> None:
    """Every row of the options table is compared here, or said not to change the CSV."""
    names = {o.name for o in OPTIONS}
    assert set(VALUES) | set(NOT_IN_CSV) == names
    assert not set(VALUES) & set(NOT_IN_CSV)
    assert {n for _, group in GROUPS for n in group} == set(VALUES)


@pytest.mark.parametrize(("system", "names"), GROUPS,
                         ids=["+".join(g) for _, g in GROUPS])
def test_sweep_run_is_simulate_to_the_byte(tmp_path: Path, system: str,
                                           names: tuple[str, ...]) -> None:
    """``simulate --set g=9.5`` and ``sweep --values g=9.5 --save-trajectories DIR`` with the
    same options write the same bytes."""
    runner = CliRunner()
    flags = _flags(names)
    alone = tmp_path / "simulate.csv"
    done = runner.invoke(main, ["simulate", system, "--set", "g=9.5", *flags, "-o", str(alone)])
    assert done.exit_code == 0, done.output
    swept = runner.invoke(main, ["sweep", system, "--values", "g=9.5", *flags,
                                 "--scheduler", "synchronous", "--save-trajectories",
                                 str(tmp_path / "runs"), "-o", str(tmp_path / "table.csv")])
    assert swept.exit_code == 0, swept.output
    expected = alone.read_bytes()
    header = expected.splitlines()[0].decode()
    if "invariants" in names:
        assert "invariant_energy" in header.split(",")
    if "action" in names:
        assert header.split(",")[-1] == "action"
    assert (tmp_path / "runs" / "run_0.csv").read_bytes() == expected


@pytest.mark.parametrize(("system", "names"), GROUPS,
                         ids=["+".join(g) for _, g in GROUPS])
def test_api_run_is_simulate_to_the_byte(tmp_path: Path, system: str,
                                         names: tuple[str, ...]) -> None:
    """``System.simulate`` with the same options, each as its keyword and parsed value, writes
    the bytes of ``lagsim simulate``, the added columns included."""
    flags = _flags(names)
    alone = tmp_path / "simulate.csv"
    done = CliRunner().invoke(main, ["simulate", system, "--set", "g=9.5", *flags,
                                     "-o", str(alone)])
    assert done.exit_code == 0, done.output
    row = {o.name: o for o in OPTIONS}
    keywords = {name: True if row[name].switch else row[name].parse(VALUES[name], name, None)
                for name in names}
    keywords.setdefault("t_end", 3.0 if "section" in names else 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", lagsim.LagsimWarning)
        trajectory = lagsim.load(system).simulate(parameters={"g": 9.5}, **keywords)
    trajectory.to_csv(tmp_path / "api.csv")
    assert (tmp_path / "api.csv").read_bytes() == alone.read_bytes()
