"""The command line as a user meets it: exit codes, one-line errors, stdin/stdout, bundled names.

Real subprocesses where the process boundary matters (exit status, stderr, broken pipes, running
from another folder); click's CliRunner elsewhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy
from click.testing import CliRunner

from lagsim import __version__
from lagsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
BAD = """parameters: {m: 1, l: 1}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - name: rod
    holonomic: x**2 + y**2 - L**2
"""


def run(*args: str, stdin: str | None = None, cwd: Path | None = None
        ) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "lagsim", *args], input=stdin,
                          capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=300)


def test_input_error_is_one_line_exit_2_without_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    proc = run("derive", str(path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        f"lagsim: error: {path}:6:30: constraint 'rod' 'x**2 + y**2 - L**2': unknown symbol 'L' "
        "(did you mean 'l'?); declare it under 'parameters' or 'coordinates' (velocities are "
        "written <coordinate>_dot, time is t)\n")


def test_debug_shows_the_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    proc = run("--debug", "derive", str(path))
    assert proc.returncode != 0
    assert "Traceback (most recent call last)" in proc.stderr
    assert "InputError" in proc.stderr


def test_bundled_system_by_name_from_another_folder(tmp_path):
    proc = run("derive", "pendulum", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["coordinates"] == ["theta"]
    th, thd, thdd, m, g, l = sympy.symbols("theta theta_dot theta_ddot m g l")
    (equation,) = data["equations"]
    lhs, rhs = (sympy.sympify(side) for side in equation.split("="))
    expected = m * l**2 * thdd + m * g * l * sympy.sin(th)
    assert sympy.simplify(lhs - rhs - expected) == 0


def test_path_that_exists_wins_over_bundled_name(tmp_path):
    (tmp_path / "pendulum").write_text("coordinates: [q]\nkinetic: q_dot**2\n")
    proc = run("derive", "pendulum", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["coordinates"] == ["q"]


def test_yaml_on_stdin():
    result = CliRunner().invoke(main, ["derive", "-", "--format", "json"],
                                input="coordinates: [x]\nparameters: {k: 2}\n"
                                      "kinetic: 1/2*x_dot**2\npotential: 1/2*k*x**2\n")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["mass_matrix"] == [["1"]]
    assert sympy.sympify(data["forcing"][0]) == -sympy.Symbol("k") * sympy.Symbol("x")


def test_unknown_system_name_suggests_a_bundled_one():
    result = CliRunner().invoke(main, ["derive", "pendulm"])
    assert result.exit_code == 2
    assert "did you mean 'pendulum'?" in result.output


def test_set_overrides_a_parameter_and_rejects_unknown_ones():
    runner = CliRunner()
    ok = runner.invoke(main, ["derive", "pendulum", "--format", "json", "--set", "l=2.5"])
    assert ok.exit_code == 0
    assert json.loads(ok.output)["parameters"]["l"] == 2.5
    bad = runner.invoke(main, ["derive", "pendulum", "--set", "length=2"])
    assert bad.exit_code == 2
    assert "--set length: no such parameter" in bad.output


def test_singular_mass_matrix_warns_in_derive():
    result = CliRunner().invoke(main, ["derive", "-"],
                                input="coordinates: [x, y]\nkinetic: 1/2*x_dot**2\n"
                                      "potential: y**2 + x**2\n")
    assert result.exit_code == 0
    assert "the mass matrix is singular: the velocity of y appears nowhere" in result.output


@pytest.mark.parametrize("command", ["derive", "simulate", "plot", "animate", "systems"])
def test_every_command_has_help_with_an_example(command):
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output
    assert "lagsim " + command in result.output


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_systems_lists_every_bundled_file():
    result = CliRunner().invoke(main, ["systems"])
    assert result.exit_code == 0
    listed = {line.split()[0] for line in result.output.splitlines()}
    assert listed == {p.stem for p in (ROOT / "systems").glob("*.yaml")}


@pytest.mark.parametrize("form", ["lagrange", "matrix", "dae", "index1", "udwadia-kalaba",
                                  "reduced"])
@pytest.mark.parametrize("fmt", ["text", "latex", "json"])
def test_every_form_and_format_of_a_constrained_system(form, fmt):
    result = CliRunner().invoke(main, ["derive", "pendulum_constrained", "--form", form,
                                       "--format", fmt])
    assert result.exit_code == 0, result.output
    if fmt == "json":
        data = json.loads(result.output)
        assert [c["name"] for c in data["constraints"]] == ["string", "plane"]
    elif fmt == "latex":
        assert "\\dot{\\theta}" in result.output or "\\ddot{\\theta}" in result.output
    else:
        assert "θ" in result.output
