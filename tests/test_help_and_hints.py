"""Help and messages a student meets (issue 14, "Help and messages"): choices in --help, what
each plot kind draws, --debug anywhere, a hint before reading a terminal, hints for common
mistakes, a clean time column and a warning when the samples alias the motion."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lagsim.cli.app import main
from lagsim.errors import InputError
from lagsim.spec.times import clean_steps, clean_times
from lagsim.viz.kinds import KIND_HELP, KINDS

ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def flat(text: str) -> str:
    return " ".join(text.split())


def error_line(result) -> str:
    """The one line of a user error (exit 2)."""
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def system_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return str(path)


# --- help ----------------------------------------------------------------------------------------


def test_choices_are_listed_but_validated_by_the_table() -> None:
    """--method is a click choice for --help and completion, and still folds case and suggests
    through the options table, the one place that validates it for flags and files."""
    assert invoke("simulate", "pendulum", "--method", "dop853", "--t-end", "0.1").exit_code == 0
    line = error_line(invoke("simulate", "pendulum", "--method", "dopp", "--t-end", "0.1"))
    assert line == ("lagsim: error: --method must be one of RK45, RK23, DOP853, Radau, BDF, LSODA, "
                    "rattle, variational; "
                    "'dopp' is not a known method")


def test_plot_help_says_what_each_kind_draws_and_what_input_may_be() -> None:
    text = flat(invoke("plot", "--help").output)
    for kind in KINDS:
        assert f"{kind} {flat(KIND_HELP[kind])}" in text, kind
    assert "INPUT is a CSV file" in text and "or a system (a YAML path or a bundled name)" in text


def test_animate_help_says_what_input_may_be_and_what_is_drawn() -> None:
    text = flat(invoke("animate", "--help").output)
    assert "INPUT is a system (a YAML path or a bundled name)" in text
    assert "together with --system naming the system it came from" in text
    assert "an arrow along the file's gravity" in text and "springs:" in text


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_works_before_and_after_the_subcommand(tmp_path: Path, where: str) -> None:
    bad = system_file(tmp_path, "coordinates: [x]\nkinetic: x_dot**2 + L\n")
    args = ["--debug", "derive", bad] if where == "before" else ["derive", bad, "--debug"]
    result = CliRunner().invoke(main, args)
    assert isinstance(result.exception, InputError)
    assert "unknown symbol 'L'" in str(result.exception)
    plain = invoke("derive", bad)
    assert plain.exit_code == 2 and not isinstance(plain.exception, InputError)


@pytest.mark.parametrize(("command", "hint"), [
    ("derive", "reading YAML from standard input; Ctrl-D to end, or give FILE"),
    ("plot", "reading CSV from standard input; Ctrl-D to end, or give INPUT"),
])
def test_a_terminal_on_stdin_gets_a_one_line_hint(command: str, hint: str) -> None:
    """A real terminal (a pseudo-terminal) on stdin: the hint comes first on stderr, then the
    input typed and Ctrl-D are read as usual; in a pipe there is no hint."""
    import pty

    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    extra = ["-o", os.devnull] if command == "plot" else []
    proc = subprocess.Popen([sys.executable, "-m", "lagsim", command, *extra], stdin=slave,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    os.close(slave)
    typed = ("parameters: {m: 1}\ncoordinates: [x]\nkinetic: m*x_dot**2/2\n" if command == "derive"
             else "t,x,x_dot\n0,1,0\n1,0,-1\n")
    os.write(master, typed.encode() + b"\x04")
    out, err = proc.communicate(timeout=120)
    os.close(master)
    assert err.splitlines()[0].startswith(f"lagsim: {hint}"), err
    assert proc.returncode == 0, err
    if command == "derive":
        assert out.splitlines()[-2:] == ["x:", out.splitlines()[-1]] and out.endswith("= 0\n")
        piped = subprocess.run([sys.executable, "-m", "lagsim", "derive"], input=typed,
                               capture_output=True, text=True, env=env, timeout=120)
        assert piped.returncode == 0 and "reading YAML" not in piped.stderr


# --- hints for common mistakes -------------------------------------------------------------------

ROD = """\
parameters: {{m: 1, l: 1}}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - name: rod
    holonomic: {}
"""


@pytest.mark.parametrize(("rod", "column", "message"), [
    ("x**2 + y**2 = l**2", 28, "constraint 'rod' 'x**2 + y**2 = l**2' does not parse: it is an "
     "equation; lagsim wants the expression phi with phi = 0, here 'x**2 + y**2 - l**2'"),
    ("x = l - y", 18, "constraint 'rod' 'x = l - y' does not parse: it is an equation; lagsim "
     "wants the expression phi with phi = 0, here 'x - (l - y)'"),
    ("x**2 + y**2 == l**2", 16, "constraint 'rod' 'x**2 + y**2 == l**2': it is an equation; "
     "lagsim wants the expression phi with phi = 0, here 'x**2 + y**2 - l**2'"),
])
def test_an_equation_gets_the_zero_expression(tmp_path: Path, rod: str, column: int,
                                              message: str) -> None:
    path = system_file(tmp_path, ROD.format(rod))
    assert error_line(invoke("derive", path)) == f"lagsim: error: {path}:6:{column}: {message}"


@pytest.mark.parametrize(("text", "where", "message"), [
    ("parameters: {m: 1, lambda: 1}\ncoordinates: [x]\nkinetic: 1/2*m*x_dot**2\n", "1:20",
     "parameter 'lambda' is a Python keyword, which expressions cannot use as a name; rename it "
     "(e.g. 'lam')"),
    ("parameters: {m: 1}\ncoordinates: [x]\nkinetic: 1/2*m*x_dot**2\npotential: ln(x)\n", "4:12",
     "'potential' 'ln(x)': 'ln' is not a known function (did you mean 'log'? log is the natural "
     "logarithm); the functions are sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, "
     "exp, log, sqrt, Abs, sign"),
    ("parameters: {m: 1}\ncoordinates: [x]\nkinetic: 1/2*m*x'**2\n", "3:17",
     "'kinetic' \"1/2*m*x'**2\" does not parse: the velocity of x is written x_dot, not x' (and "
     "its acceleration x_ddot)"),
    ("parameters: {m: 1}\ncoordinates: [x]\nkinetic: 1/2 m x_dot**2\n", "3:13",
     "'kinetic' '1/2 m x_dot**2' does not parse: put * between factors, as in '1/2*m*x_dot**2'"),
    ("parameters: {m: 1}\ncoordinates: [x]\nkinetic: m*x_dot**2\npotential: *m*x\n", "4:14",
     "malformed YAML: expected alphabetic or numeric character, but found '*': a value that "
     "starts with * is a YAML alias (*name); if it is an expression, quote it, as in "
     "potential: '*m*x'"),
    ("parameters: {m: 1}\ncoordinates: [x]\nkinetic: m*x_dot**2\npotential: '*m*x'\n", "4:13",
     "'potential' '*m*x' does not parse: it starts with '*', which multiplies nothing; remove "
     "it, or put the factor it multiplies in front"),
])
def test_common_mistakes_get_a_hint(tmp_path: Path, text: str, where: str, message: str) -> None:
    path = system_file(tmp_path, text)
    assert error_line(invoke("derive", path)) == f"lagsim: error: {path}:{where}: {message}"


def test_a_value_that_overflows_is_named() -> None:
    line = error_line(invoke("simulate", "pendulum", "--set", "l=1e400"))
    assert line == ("lagsim: error: --set: the value of l '1e400': 1e400 is too large for a "
                    "floating-point number (it overflows to inf); give a finite value, at most "
                    f"{sys.float_info.max:.4g} in size")


def test_a_parameter_set_to_zero_that_makes_m_singular_is_named() -> None:
    """The pendulum's M = m l² (001 Example 10.5) vanishes with l = 0 or m = 0; g = 0 is
    harmless (the run goes)."""
    for name in ("l", "m"):
        line = error_line(invoke("simulate", "pendulum", "--set", f"{name}=0"))
        assert line == (f"lagsim: error: --set: {name} = 0 makes the mass matrix singular at the "
                        "start (the kinetic energy gives no inertia along theta (eigenvalue 0)); "
                        f"give {name} a non-zero value")
    assert invoke("simulate", "pendulum", "--set", "g=0", "--t-end", "0.1").exit_code == 0


def test_a_zero_in_the_file_is_named_at_its_value(tmp_path: Path) -> None:
    path = system_file(tmp_path, "parameters: {m: 0}\ncoordinates: [x]\nkinetic: m*x_dot**2/2\n")
    line = error_line(invoke("simulate", path))
    assert line.startswith(f"lagsim: error: {path}:1:17: the mass matrix is singular")
    assert line.endswith("; the parameter m = 0 causes it (give it a non-zero value)")


@pytest.mark.parametrize("command", ["derive", "simulate"])
def test_a_csv_given_for_a_system_says_so(tmp_path: Path, command: str) -> None:
    csv = tmp_path / "run.csv"
    assert invoke("simulate", "pendulum", "--t-end", "0.1", "-o", str(csv)).exit_code == 0
    line = error_line(invoke(command, str(csv)))
    assert line == (f"lagsim: error: {csv}:1:1: this looks like a CSV (a trajectory of `lagsim "
                    "simulate`, first column t), not a system; derive and simulate read a YAML "
                    "system file: give that, or plot the CSV with `lagsim plot`")


# --- the time column -----------------------------------------------------------------------------


def test_the_time_column_prints_the_decimals() -> None:
    """t_k = t0 + k (t1 − t0)/(N − 1) is written as its decimal: 0.15, 0.45, 1.35, where
    np.linspace gives 0.44999999999999996 and 1.3499999999999999."""
    result = CliRunner().invoke(main, ["simulate", "pendulum", "--t-end", "1.5", "--samples",
                                       "11"])
    column = [row.split(",")[0] for row in result.stdout.splitlines()[1:]]
    assert column == ["0.0", "0.15", "0.3", "0.45", "0.6", "0.75", "0.9", "1.05", "1.2", "1.35",
                      "1.5"]
    assert repr(float(np.linspace(0.0, 1.5, 11)[3])) != "0.45"
    dt = CliRunner().invoke(main, ["simulate", "pendulum", "--t-start", "0.1", "--t-end", "0.4",
                                   "--dt", "0.03"])
    assert [row.split(",")[0] for row in dt.stdout.splitlines()[1:]] == [
        "0.1", "0.13", "0.16", "0.19", "0.22", "0.25", "0.28", "0.31", "0.34", "0.37", "0.4"]


def test_clean_times_are_the_doubles_nearest_the_exact_values() -> None:
    rng = np.random.default_rng(14)
    for _ in range(50):
        t0 = round(float(rng.uniform(-5, 5)), int(rng.integers(0, 4)))
        t1 = t0 + round(float(rng.uniform(0.01, 100)), int(rng.integers(0, 4)))
        n = int(rng.integers(2, 400))
        a, b = Fraction(repr(t0)), Fraction(repr(t1))
        exact = [float(a + k * (b - a) / (n - 1)) for k in range(n)]
        assert clean_times(t0, t1, n).tolist() == exact
        dt = round(float(rng.uniform(0.001, 1)), int(rng.integers(1, 4)))
        d = Fraction(repr(dt))
        assert clean_steps(t0, dt, n).tolist() == [float(a + k * d) for k in range(n)]
    far = clean_times(0.1, 1e300, 5)
    assert far.tolist() == [float(Fraction("0.1") + k * (Fraction("1e300") - Fraction("0.1")) / 4)
                            for k in range(5)]


# --- aliasing ------------------------------------------------------------------------------------

PERIOD = 2 * math.pi / math.sqrt(9.81) * (1 + (math.pi / 6) ** 2 / 16)
"""The pendulum's period at amplitude π/6 to second order, 2π√(l/g)(1 + θ0²/16) = 2.040 s."""


def test_samples_far_apart_warn_once_with_the_period() -> None:
    result = CliRunner().invoke(main, ["simulate", "pendulum", "--t-end", "300", "--dt", "100"])
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if "aliases the motion" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("lagsim: warning: the samples are 100 apart, but theta turns "
                                  "back ")
    period = float(warnings[0].split("period of about ")[1].split(")")[0])
    assert period == pytest.approx(PERIOD, rel=0.03)


@pytest.mark.parametrize(("name", "flags"), [
    ("pendulum", ["--dt", "0.5"]),                          # 4 samples per period: no aliasing
    ("pendulum_constrained", []),                           # beta, z: velocities of round-off
    ("double_pendulum_constrained", ["--t-end", "5"]),
    ("double_pendulum", ["--t-end", "5"]),
])
def test_dense_enough_samples_do_not_warn(name: str, flags: list[str]) -> None:
    result = CliRunner().invoke(main, ["simulate", name, *flags])
    assert result.exit_code == 0
    assert "aliases" not in result.stderr
