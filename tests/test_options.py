"""The options of a run, declared once (issue 8 §2): the table makes the options object, the
``simulate:`` keys of a file and the flags; zero flags count; sizes that cannot be met are
refused up front with their size and time (issue 15, "Limits"). Through the CLI where the
issues say so."""

from __future__ import annotations

import math
import re
import typing
from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lagsim.cli import main
from lagsim.errors import Location
from lagsim.spec import system as spec_module
from lagsim.spec.options import (
    MAX_SAMPLES,
    OPTIONS,
    ROW_BYTES_PER_COLUMN,
    ROW_SECONDS_PER_COLUMN,
    SIMULATE_KEYS,
    SimulateOptions,
)

ROOT = Path(__file__).resolve().parents[1]

OSCILLATOR = """coordinates: [x]
kinetic: 1/2*x_dot**2
potential: 1/2*x**2
initial: {x: 1.0}
simulate:
  t_start: 1
  t_end: 2
"""
"""ẍ = −x from x = 1 at rest: x = cos(t − t_start)."""

OFF_CIRCLE = """parameters: {l: 1.0}
coordinates: [x, y]
kinetic: 1/2*(x_dot**2 + y_dot**2)
constraints:
  - name: rod
    holonomic: x**2 + y**2 - l**2
initial: {x: 1.1, y: 0.0}
simulate:
  strict_initial: true
  t_end: 0.5
"""


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def rows(output: str) -> np.ndarray:
    lines = output.strip().splitlines()
    return np.array([[float(x) for x in line.split(",")] for line in lines[1:]])


def test_the_table_makes_the_options_object_the_file_keys_and_the_flags() -> None:
    assert [f.name for f in fields(SimulateOptions)] == [o.name for o in OPTIONS] + [
        "locations", "naming"]
    assert spec_module.SIMULATE_KEYS is SIMULATE_KEYS
    assert SIMULATE_KEYS == tuple(o.name for o in OPTIONS)
    defaults = SimulateOptions()
    assert all(getattr(defaults, o.name) == o.default for o in OPTIONS)
    for command in ("simulate", "plot", "animate"):
        text = invoke(command, "--help").output
        assert all(o.flag in text for o in OPTIONS), command
    text = invoke("simulate", "--help").output
    assert "--method [RK45|RK23|DOP853|Radau|BDF|LSODA|rattle|variational]" in text
    assert "--formulation [auto|ode|index1|udwadia-kalaba|reduced]" in text
    assert "--stabilize [none|baumgarte|projection]" in text
    assert "End time. [default: 10, or the file's simulate.t_end]" in " ".join(text.split())
    assert "--strict-initial / --no-strict-initial" in text


def test_each_field_of_the_options_object_has_its_rows_type_and_default() -> None:
    """Issue 23, "Types": :class:`SimulateOptions` is written out as a frozen dataclass; each
    field is a row of the table with the row's type and default, in the table's order, and
    only ``locations`` (where each option was given) and ``naming`` (how messages write an
    option: flag or keyword) are not options."""
    hints = typing.get_type_hints(SimulateOptions)
    declared = {f.name: f for f in fields(SimulateOptions)}
    assert list(declared) == [o.name for o in OPTIONS] + ["locations", "naming"]
    for row in OPTIONS:
        assert hints[row.name] == row.type, row.name
        assert declared[row.name].default == row.default, row.name
    assert hints["locations"] == tuple[tuple[str, Location], ...]
    with pytest.raises(FrozenInstanceError):
        SimulateOptions().rtol = 1.0  # type: ignore[misc]


def test_every_option_in_a_file_is_validated_by_the_same_row(tmp_path) -> None:
    """A file's bad value is located at its value and labelled simulate.<key>, like the flag's
    message labelled --<flag>."""
    path = tmp_path / "osc.yaml"
    path.write_text(OSCILLATOR.replace("t_end: 2", "t_end: 2\n  rtol: 0"))
    result = invoke("simulate", str(path))
    assert result.exit_code == 2
    assert result.output == (f"lagsim: error: {path}:8:9: simulate.rtol must be positive, "
                             "got 0.0\n")


def test_a_zero_flag_wins_over_the_file(tmp_path) -> None:
    """--t-start 0 used to be dropped (0 taken for "not given"): the run started at the file's
    t_start = 1."""
    path = tmp_path / "osc.yaml"
    path.write_text(OSCILLATOR)
    result = invoke("simulate", str(path), "--t-start", "0", "--samples", "3")
    assert result.exit_code == 0, result.output
    data = rows(result.stdout)
    np.testing.assert_array_equal(data[:, 0], [0.0, 1.0, 2.0])
    np.testing.assert_allclose(data[:, 1], np.cos(data[:, 0]), rtol=0, atol=1e-8)
    from_file = rows(invoke("simulate", str(path), "--samples", "3").stdout)
    np.testing.assert_array_equal(from_file[:, 0], [1.0, 1.5, 2.0])


def test_a_false_switch_wins_over_the_file(tmp_path) -> None:
    """strict_initial: true refuses (1.1, 0) off the unit circle; --no-strict-initial lets the
    start be corrected to (1, 0)."""
    path = tmp_path / "off.yaml"
    path.write_text(OFF_CIRCLE)
    strict = invoke("simulate", str(path))
    assert strict.exit_code == 2
    assert "--strict-initial forbids correcting it" in strict.output
    relaxed = invoke("simulate", str(path), "--no-strict-initial", "--samples", "2")
    assert relaxed.exit_code == 0, relaxed.output
    assert rows(relaxed.stdout)[0, 1:3].tolist() == pytest.approx([1.0, 0.0], abs=1e-14)


@pytest.mark.parametrize("flag", ["--rtol", "--atol", "--dt"])
def test_a_zero_tolerance_or_spacing_is_an_error_naming_the_flag(flag: str) -> None:
    """--rtol 0 and --dt 0 used to run with the defaults."""
    result = invoke("simulate", "pendulum", flag, "0")
    assert result.exit_code == 2
    assert result.output == f"lagsim: error: {flag} must be positive, got 0.0\n"


def test_a_bad_flag_value_is_named_by_the_table() -> None:
    result = invoke("simulate", "pendulum", "--samples", "many")
    assert result.exit_code == 2
    assert result.output == "lagsim: error: --samples must be a number, got 'many'\n"
    result = invoke("simulate", "pendulum", "--method", "rk4")
    assert result.output.startswith("lagsim: error: --method must be one of RK45, RK23, DOP853,")


def test_ten_million_samples_are_refused_with_their_size_and_time() -> None:
    """The pendulum writes 4 columns: 1e7 rows of 4 columns at the measured cost per column."""
    result = invoke("simulate", "pendulum", "--samples", "10000000")
    assert result.exit_code == 2
    size_mb = 1e7 * 4 * ROW_BYTES_PER_COLUMN / 1e6
    minutes = 1e7 * 4 * ROW_SECONDS_PER_COLUMN / 60
    assert result.output == (
        f"lagsim: error: --samples asks for 1e+07 samples: about {size_mb:.3g} MB of CSV and "
        f"about {minutes:.3g} minutes of sampling alone; lagsim writes at most {MAX_SAMPLES} "
        "samples per run: lower --samples, raise --dt, or split the run with "
        "--t-start/--t-end\n")


def test_a_tiny_dt_in_the_file_is_refused_at_its_place(tmp_path) -> None:
    path = tmp_path / "osc.yaml"
    path.write_text(OSCILLATOR + "  dt: 1e-9\n")
    result = invoke("simulate", str(path))
    assert result.exit_code == 2
    assert result.output.startswith(f"lagsim: error: {path}:8:7: simulate.dt asks for "
                                    "1e+09 samples: about ")


def _half_unit(printed: str) -> float:
    """The relative error of a number printed as ``printed`` (half a unit of its last digit)."""
    mantissa = printed.lower().partition("e")[0]
    digits = mantissa.replace(".", "").replace("-", "").lstrip("0") or "0"
    return 0.5 / max(float(digits), 1.0)


def test_an_end_time_out_of_reach_is_refused_with_the_time_it_would_take() -> None:
    """--t-end 1e308: after a second of stepping the pendulum has covered some 1e3 s; at that
    pace the run would take about 1e297 years."""
    result = invoke("simulate", "pendulum", "--t-end", "1e308")
    assert result.exit_code == 2
    match = re.fullmatch(r"lagsim: error: --t-end 1e\+308 is out of reach: after (\S+) s the run "
                         r"is at t = (\S+), and at that pace it would take about (\S+) years "
                         r"\(lagsim refuses runs of more than a day\); give a smaller --t-end\n",
                         result.output)
    assert match, result.output
    elapsed, reached, years = (float(g) for g in match.groups())
    rounding = sum(_half_unit(g) for g in match.groups())
    assert years == pytest.approx(elapsed * 1e308 / reached / 3.15e7, rel=0.01 + rounding)
    assert math.isfinite(years) and years > 1e250


def test_no_module_lists_the_option_names_again() -> None:
    """The table is the only list of the options: no other module of lagsim holds a literal
    tuple, list, set or dict with three or more of their names (issue 8 §2)."""
    import ast

    names = set(SIMULATE_KEYS)
    for path in sorted((ROOT / "lagsim").rglob("*.py")):
        if path.name == "options.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            items = (node.keys if isinstance(node, ast.Dict) else
                     node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [])
            strings = {e.value for e in items if isinstance(e, ast.Constant)}
            assert len(strings & names) < 3, f"{path.name}:{node.lineno}"


def test_the_format_documentation_shows_each_option_with_its_default() -> None:
    """docs/format.md's `simulate:` table is written by hand; it must agree with the table."""

    def shown(value) -> str:
        if value is None:
            return "—"
        if isinstance(value, bool):
            return f"`{str(value).lower()}`"
        if isinstance(value, tuple):
            return "`[" + ", ".join(f"{x:g}" for x in value) + "]`"
        return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"

    doc = (ROOT / "docs" / "format.md").read_text(encoding="utf-8")
    for row in OPTIONS:
        assert f"| `{row.name}` | {shown(row.default)} |" in doc, row.name
