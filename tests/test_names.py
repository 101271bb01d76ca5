"""Declared names: Unicode look-alikes, control characters and names that read as CSV columns.

Issue 15 ("Names that look alike"): Python's parser normalizes identifiers in expressions to NFKC
(PEP 3131), so every declared name is compared in that form and two spellings of one name are an
error that shows both. Printed names and messages carry no raw control characters. Issue 8 §4: a
name that has the form of a CSV column (``t``, ``energy``, ``lambda_<c>``, ``residual_<c>``,
``<q>_dot``) is refused, while C keywords and libm names stay ordinary names. Each case goes
through the command line, as a user meets it.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lagsim.cli import main
from lagsim.errors import InputError, Location, printable
from lagsim.naming import COLUMNS
from lagsim.spec.system import parse_spec

MICRO, MU = "\u00b5", "\u03bc"
MATH_X = "\U0001d465"


def run(tmp_path: Path, text: str, *args: str):
    path = tmp_path / "sys.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return CliRunner().invoke(main, [*args[:1], str(path), *args[1:]])


def error_line(result) -> str:
    """The single stderr line of a refused input."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("lagsim: error: ")
    return lines[0]


def rows(result) -> tuple[list[str], np.ndarray]:
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    return lines[0].split(","), np.array([[float(v) for v in r.split(",")] for r in lines[1:]])


def test_micro_sign_and_greek_mu_are_one_name(tmp_path: Path) -> None:
    result = run(tmp_path, f"""
        parameters: {{{MICRO}: 1.0, {MU}: 2.0}}
        coordinates: [x]
        kinetic: {MU}*x_dot**2/2
        """, "simulate")
    line = error_line(result)
    where = str(tmp_path / "sys.yaml")
    assert line == (f"lagsim: error: {where}:1:22: parameter '{MU}' (U+03BC) and parameter "
                    f"'{MICRO}' (U+00B5) (at {where}:1:14) are the same name once "
                    f"Unicode-normalized (NFKC, as in expressions: '{MU}'); rename one of them")


def test_mathematical_x_parameter_is_the_coordinate_x(tmp_path: Path) -> None:
    result = run(tmp_path, f"""
        parameters: {{{MATH_X}: 1.0}}
        coordinates: [x]
        kinetic: x_dot**2/2
        """, "simulate")
    line = error_line(result)
    assert f"coordinate 'x' and parameter '{MATH_X}' (U+1D465)" in line
    assert "sys.yaml:2:15: " in line and "sys.yaml:1:14)" in line


def test_a_name_spelt_one_way_is_used_the_other_way(tmp_path: Path) -> None:
    """A parameter written with the micro sign and used as Greek mu is that parameter: the
    oscillator µ x'' = -x has period 2π sqrt(µ), so with µ = 4 it is back at x = 1 at t = 4π."""
    result = run(tmp_path, f"""
        parameters: {{{MICRO}: 4.0}}
        coordinates: [x]
        kinetic: {MU}*x_dot**2/2
        potential: x**2/2
        initial: {{x: 1}}
        """, "simulate", "--t-end", str(4 * math.pi), "--samples", "3")
    header, data = rows(result)
    assert header == ["t", "x", "x_dot", "energy"]
    assert data[1, 1] == pytest.approx(-1.0, abs=1e-8)
    assert data[2, 1] == pytest.approx(1.0, abs=1e-8)


def test_set_and_init_names_are_normalized_too(tmp_path: Path) -> None:
    """``--set`` with the other spelling changes the one parameter: µ = 1 makes the period 2π."""
    result = run(tmp_path, f"""
        parameters: {{{MU}: 4.0}}
        coordinates: [x]
        kinetic: {MU}*x_dot**2/2
        potential: x**2/2
        """, "simulate", "--set", f"{MICRO}=1", "--init", "x=1", "--t-end", str(math.pi),
        "--samples", "2")
    _, data = rows(result)
    assert data[-1, 1] == pytest.approx(-1.0, abs=1e-8)


def test_coordinates_spelt_two_ways(tmp_path: Path) -> None:
    line = error_line(run(tmp_path, f"""
        coordinates: [x, {MATH_X}]
        kinetic: x_dot**2/2
        """, "derive"))
    assert f"coordinate '{MATH_X}' (U+1D465) and coordinate 'x'" in line


def test_constraint_names_spelt_two_ways(tmp_path: Path) -> None:
    line = error_line(run(tmp_path, """
        coordinates: [x, y]
        kinetic: (x_dot**2 + y_dot**2)/2
        constraints:
          - {name: rod, holonomic: x}
          - {name: "\uff52\uff4f\uff44", holonomic: y}
        """, "derive"))
    assert "constraint name 'ｒｏｄ' (U+FF52 U+FF4F U+FF44) and constraint name 'rod'" in line


def test_control_characters_in_the_name_are_refused(tmp_path: Path) -> None:
    result = run(tmp_path, r"""
        name: "pendulum\e[2J\e[31m"
        coordinates: [x]
        kinetic: x_dot**2/2
        """, "derive")
    line = error_line(result)
    assert "\x1b" not in result.stderr
    assert line.endswith("sys.yaml:1:7: 'name' contains the control character \\x1b, which "
                         "would act on the terminal; remove it")


def test_bidirectional_override_in_the_description_is_refused(tmp_path: Path) -> None:
    line = error_line(run(tmp_path, """
        description: "a \u202eevil"
        coordinates: [x]
        kinetic: x_dot**2/2
        """, "derive"))
    assert "\\u202e" in line and "\u202e" not in line


def test_control_characters_in_an_unknown_key_are_escaped(tmp_path: Path) -> None:
    """Any message that quotes the user's text shows its control characters escaped."""
    result = run(tmp_path, r"""
        "kinetic\e]0;owned\a": x_dot**2
        coordinates: [x]
        """, "derive")
    line = error_line(result)
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "unknown key 'kinetic\\x1b]0;owned\\x07'" in line


def test_printable_escapes_only_controls() -> None:
    assert printable("θ̇ µ x_dot") == "θ̇ µ x_dot"
    assert printable("a\tb\nc\x1b\x9b\u2028") == "a\\tb\\nc\\x1b\\x9b\\u2028"
    error = InputError("bad\x1b[31m", Location("f\ny.yaml", 1, 2))
    assert str(error) == "f\\ny.yaml:1:2: bad\\x1b[31m"


COLUMN_NAMES = [
    ("coordinates: [energy]\nkinetic: energy_dot**2", "coordinate 'energy' is the CSV column of "
     "the energy, so the output would be misread; rename it (e.g. 'energy1')"),
    ("coordinates: [lambda_rod]\nkinetic: lambda_rod_dot**2", "coordinate 'lambda_rod' has the "
     "form lambda_<constraint> of the CSV column of a multiplier, so the output would be "
     "misread; rename it (e.g. 'lambdarod')"),
    ("coordinates: [residual_a]\nkinetic: residual_a_dot**2", "coordinate 'residual_a' has the "
     "form residual_<constraint> of the CSV column of a constraint residual, so the output "
     "would be misread; rename it (e.g. 'residuala')"),
    ("coordinates: [theta_dot]\nkinetic: theta_dot_dot**2", "coordinate 'theta_dot' has the form "
     "<coordinate>_dot of the CSV column of a velocity, so the output would be misread; rename "
     "it (e.g. 'thetadot')"),
    ("parameters: {energy: 1}\ncoordinates: [x]\nkinetic: x_dot**2", "parameter 'energy' is the "
     "CSV column of the energy"),
    ("coordinates: [x]\nkinetic: x_dot**2\nconstraints:\n  - {name: residual_x, holonomic: x}",
     "constraint name 'residual_x' has the form residual_<constraint> of the CSV column of a "
     "constraint residual"),
    ("coordinates: [x, y]\nkinetic: x_dot**2 + y_dot**2\nconstraints:\n"
     "  - {name: rod_dot, holonomic: x}", "constraint name 'rod_dot' has the form "
     "<coordinate>_dot of the CSV column of a velocity"),
    ("coordinates: [t]\nkinetic: t_dot**2", "coordinate 't' is reserved (time); rename it"),
    ("coordinates: [action]\nkinetic: action_dot**2", "coordinate 'action' is the CSV column of "
     "the running action (simulate --action)"),
    ("coordinates: [invariant_h]\nkinetic: invariant_h_dot**2", "coordinate 'invariant_h' has "
     "the form invariant_<name> of the CSV column of a conserved quantity"),
]


@pytest.mark.parametrize(("text", "message"), COLUMN_NAMES)
def test_names_of_csv_columns_are_refused(tmp_path: Path, text: str, message: str) -> None:
    result = run(tmp_path, text, "simulate")
    line = error_line(result)
    assert message in line
    assert line.startswith(f"lagsim: error: {tmp_path / 'sys.yaml'}:")


def test_every_csv_column_form_is_refused() -> None:
    """The refused forms come from the one declaration of the columns: a name made from each
    template (with a placeholder filled by a plain name) is refused as a coordinate."""
    assert [template for template, _ in COLUMNS][0] == "t"
    for template, _meaning in COLUMNS:
        name = template.format(q="a", c="a", h="a")
        if name == "a":
            continue
        with pytest.raises(InputError):
            parse_spec(f"coordinates: [{name}]\nkinetic: {name}_dot**2\n", "s.yaml")


def test_c_keywords_and_libm_names_are_ordinary_names(tmp_path: Path) -> None:
    """Coordinates named like C keywords and libm functions give exact results: each is a unit
    oscillator x'' = -k x with k = 4, so x(t) = x0 cos(2t) and x_dot(t) = -2 x0 sin(2t)."""
    names = ["double", "int", "main", "pow", "fabs", "char", "hypot"]
    starts = [1.0, 0.5, 0.25, -0.5, 2.0, 0.1, -1.0]
    result = run(tmp_path, f"""
        parameters: {{k: 4.0, static: 1.0}}
        coordinates: [{', '.join(names)}]
        kinetic: static*({' + '.join(f'{n}_dot**2' for n in names)})/2
        potential: k*({' + '.join(f'{n}**2' for n in names)})/2
        initial: {{{', '.join(f'{n}: {x}' for n, x in zip(names, starts))}}}
        """, "simulate", "--t-end", "1", "--samples", "3")
    header, data = rows(result)
    assert header == ["t", *names, *(f"{n}_dot" for n in names), "energy"]
    t = data[:, 0]
    for i, x0 in enumerate(starts):
        np.testing.assert_allclose(data[:, 1 + i], x0 * np.cos(2 * t), atol=1e-8)
        np.testing.assert_allclose(data[:, 1 + len(names) + i], -2 * x0 * np.sin(2 * t),
                                   atol=1e-8)


def test_a_file_name_with_escape_sequences_is_escaped_in_the_error() -> None:
    """The label of a missing file is the user's text: printed escaped, never raw."""
    result = CliRunner().invoke(main, ["derive", "no\x1b]0;title\x07such.yaml"])
    line = error_line(result)
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert line.startswith("lagsim: error: no\\x1b]0;title\\x07such.yaml: no such file")


def test_output_uses_the_normalized_name(tmp_path: Path) -> None:
    """A coordinate written 𝑥 is the column x, and its velocity 𝑥_dot is x_dot."""
    result = run(tmp_path, f"""
        coordinates: [{MATH_X}]
        kinetic: {MATH_X}_dot**2/2
        initial: {{{MATH_X}_dot: 2}}
        """, "simulate", "--t-end", "1", "--samples", "2")
    header, data = rows(result)
    assert header == ["t", "x", "x_dot", "energy"]
    assert data[-1, 1] == pytest.approx(2.0, abs=1e-12)
    assert data[-1, 3] == pytest.approx(2.0, abs=1e-12)


def test_extra_columns_follow_energy_in_the_order_added() -> None:
    """simulate --invariants / --action add columns after ``energy`` (trajectory.EXTRA_COLUMNS);
    a name already present is refused rather than written twice."""
    from lagsim.output.trajectory import Trajectory

    rows = 3
    base = Trajectory(name="s", coordinates=("x",), constraint_names=(), constraint_kinds=(),
                      t=np.arange(rows, dtype=float), q=np.ones((rows, 1)),
                      qd=np.zeros((rows, 1)), lam=np.zeros((rows, 0)),
                      residual=np.zeros((rows, 0)), residual_dot=np.zeros((rows, 0)),
                      energy=np.full(rows, 2.0), formulation="ode", stabilize="none")
    grown = base.with_extra("invariant_p_x", np.array([1.0, 2.0, 3.0])).with_extra(
        "action", np.array([0.0, 0.5, 1.5]))
    assert grown.columns == ("t", "x", "x_dot", "energy", "invariant_p_x", "action")
    assert grown.as_array()[:, -1].tolist() == [0.0, 0.5, 1.5]
    assert grown.column("invariant_p_x").tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="column 'energy' already"):
        grown.with_extra("energy", np.zeros(rows))
    with pytest.raises(ValueError, match="expected"):
        base.with_extra("action", np.zeros(rows + 1))
