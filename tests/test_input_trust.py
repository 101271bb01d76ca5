"""Input that must be refused where it stands, or must work (issue 32): YAML 1.1 numbers, numbers
that are not finite, huge integers, sample times that cannot increase, complex powers, the
derivatives of Abs and sign, the Python API's argument types, and library warnings on stderr."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from lagsim.cli import main

FREE = "coordinates: [x]\nkinetic: 1/2*x_dot**2\n"


def simulate(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str, Path]:
    """(exit code, stdout, stderr, path) of `lagsim simulate` on the system ``text``."""
    path = tmp_path / "system.yaml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["simulate", str(path), *args])
    return result.exit_code, result.stdout, result.stderr, path


def refused(tmp_path: Path, text: str, *args: str) -> str:
    """The one stderr line of a run of ``text`` refused as bad input (exit 2), without
    ``lagsim: error: FILE:``."""
    code, _out, err, path = simulate(tmp_path, text, *args)
    assert code == 2, err
    (line,) = err.splitlines()
    head = f"lagsim: error: {path}:"
    assert line.startswith(head), line
    return line[len(head):]


# --- YAML 1.1 numbers (issue 32: `l: 010` was 8, `t_end: 1:30` 90, `samples: 0101` 65) ---

@pytest.mark.parametrize(("line", "where", "message"), [
    ("parameters: {l: 010}\n", "1:17",
     "parameter 'l': 010 has a leading zero: it is octal (8) to YAML 1.1 and decimal (10) to "
     "YAML 1.2, so lagsim does not guess: write 10 for the decimal number, or quote the text"),
    ("simulate: {t_end: '1', samples: 0101}\n", "1:33",
     "simulate.samples: 0101 has a leading zero: it is octal (65) to YAML 1.1 and decimal "
     "(101) to YAML 1.2, so lagsim does not guess: write 101 for the decimal number, or quote "
     "the text"),
    ("simulate: {t_end: 1:30}\n", "1:19",
     "simulate.t_end: 1:30 is a base-60 number (90) to YAML 1.1 and text to YAML 1.2, so lagsim "
     "does not guess: write the number itself, such as 90, or quote the text"),
    ("initial: {x: -09}\n", "1:14",
     "the initial value of 'x': -09 has a leading zero: it is decimal (-9) to YAML 1.2, so "
     "lagsim does not guess: write -9 for the decimal number, or quote the text"),
])
def test_yaml_1_1_numbers_are_refused_where_they_stand(tmp_path, line, where, message):
    assert refused(tmp_path, line + FREE) == f"{where}: {message}"


def test_numbers_are_read_as_yaml_1_2_reads_them(tmp_path):
    """``1e1`` is a float in YAML 1.2 (text in 1.1), ``0x10`` and ``1_0`` are expressions
    (Python's literals), ``on`` is a name, not true; an on/off option still takes yes."""
    text = ("parameters: {on: 1e1, k: 0x10, c: 1_0}\ncoordinates: [x]\n"
            "kinetic: 1/2*x_dot**2\npotential: on*k*c*x\n"
            "simulate: {samples: 3, t_end: 1, invariants: yes}\n")
    code, out, err, _ = simulate(tmp_path, text)
    assert code == 0, err
    header, _, _, last = out.splitlines()
    assert header.split(",")[-1] == "invariant_energy"
    t, x, v, energy, _h = map(float, last.split(","))
    force = 10 * 16 * 10
    assert (t, v) == (1.0, pytest.approx(-force, rel=1e-9))
    assert x == pytest.approx(-force / 2, rel=1e-9)
    assert energy == pytest.approx(0.0, abs=1e-6)


# --- numbers that are not finite (docs/format.md: "numbers must be finite and real") ---

FINITE = "numbers must be finite and real, at most 1.798e+308 in size (docs/format.md)"


@pytest.mark.parametrize(("text", "where", "message"), [
    (FREE + "potential: .nan\n", "3:12", "'potential' is .nan, not a number (nan)"),
    (FREE + "forces: {x: .inf}\n", "3:13", "the force on 'x' is .inf, not a finite number"),
    (FREE + "forces: {x: -.Inf}\n", "3:13", "the force on 'x' is -.Inf, not a finite number"),
    ("parameters: {m: 1.0e+400}\n" + FREE, "1:17",
     "parameter 'm' is 1.0e+400, too large for a float (it overflows to inf)"),
    (FREE + "initial: {x_dot: .NaN}\n", "3:18",
     "the initial value of 'x_dot' is .NaN, not a number (nan)"),
    (FREE + "simulate: {rtol: .nan}\n", "3:18", "simulate.rtol is .nan, not a number (nan)"),
    ("coordinates: [x]\nmasses:\n  b: {mass: .inf, position: [x, 0]}\n", "3:13",
     "the mass of 'b' is .inf, not a finite number"),
    (FREE + "constraints: [.inf]\n", "3:15", "constraint 'c1' is .inf, not a finite number"),
    (FREE + "simulate: {t_end: " + "1" * 400 + "}\n", "3:19",
     "simulate.t_end is 11111111111111111111... (400 characters), too large for a float"),
    ("parameters: {k: " + "7" * 5000 + "}\n" + FREE, "1:17",
     "parameter 'k' is an integer of 5,000 digits, too large for a float"),
])
def test_numbers_that_are_not_finite_are_refused_at_the_spec(tmp_path, text, where, message):
    assert refused(tmp_path, text) == f"{where}: {message}; {FINITE}"


@pytest.mark.parametrize(("expression", "column", "message"), [
    ("2*" + "1" * 400 + "*x", 14,
     "the number of 400 digits is too large for a float (at most 1.798e+308); numbers must be "
     "finite"),
    ("10**200*10**200*x", 12,
     "10**200*10**200 is too large for a float (at most 1.798e+308); numbers must be finite"),
    ("1e400*x", 12, "the number 1e400 is inf, not a finite number"),
])
def test_numbers_inside_expressions_must_be_finite_doubles(tmp_path, expression, column,
                                                            message):
    """The 400-digit coefficient used to reach the compiled code and give finite, wrong
    numbers."""
    line = refused(tmp_path, FREE + f"potential: {expression}\n")
    assert line == f"3:{column}: 'potential' {expression!r}: {message}"


def test_a_huge_integer_from_the_api_names_the_keyword():
    import lagsim

    system = lagsim.load("pendulum")
    with pytest.raises(lagsim.InputError, match="^t_end must be a finite number, got an "
                       "integer of 401 digits, too large for a float$"):
        system.simulate(t_end=10**400)


# --- sample times that cannot increase ---

@pytest.mark.parametrize(("args", "message"), [
    (("--t-end", "5e-324"),
     "--t-end: 1001 samples from t_start = 0.0 to t_end = 5e-324 are 0.0 apart, which is below "
     "the resolution of floating-point times near 5e-324 (4.94e-324)"),
    (("--dt", "1e-320"),
     "--dt: the step dt = 1e-320 is below the resolution of floating-point times near 10.0 "
     "(1.78e-15)"),
    (("--t-start", "1e20", "--t-end", "1.00000000001e20", "--samples", "1000000"),
     "--samples: 1000000 samples from t_start = 1e+20 to t_end = 1.00000000001e+20 are "
     "999.99843999844 apart, which is below the resolution of floating-point times near "
     "1.00000000001e+20 (1.64e+04)"),
])
def test_sample_times_that_would_repeat_are_refused(args, message):
    result = CliRunner().invoke(main, ["simulate", "pendulum", *args])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (f"lagsim: error: {message}, so the sample times would repeat; "
                             "lengthen the span, or use fewer samples or a larger step\n")


def test_the_shortest_span_that_still_increases_runs():
    """1e-300 in 3 samples: the times are distinct doubles, strictly increasing."""
    result = CliRunner().invoke(main, ["simulate", "pendulum", "--t-end", "1e-300",
                                       "--samples", "3"])
    assert result.exit_code == 0, result.stderr
    times = [float(row.split(",")[0]) for row in result.stdout.splitlines()[1:]]
    assert times == [0.0, 5e-301, 1e-300]


# --- complex powers ---

@pytest.mark.parametrize(("expression", "shown"), [
    ("(-1)**x", "(-1)**x"), ("(1 - E)^(x + 1)", "(1 - E)**(x + 1)"), ("(-2.5)**t", "(-2.5)**t")])
def test_a_negative_base_with_a_variable_exponent_is_refused(tmp_path, expression, shown):
    line = refused(tmp_path, FREE + f"potential: {expression}\n")
    assert line == (f"3:12: 'potential' {expression!r}: the power {shown} has a negative base "
                    "and a variable exponent, so it is complex (not real) wherever the exponent "
                    "is not a whole number; write the real quantity meant, such as cos(pi*n) "
                    "for (-1)**n")


# --- Abs and sign are differentiated (d|u|/dx = sign(u) u', d sign(u)/dx = 0) ---

V_WELL = """parameters: {m: 2, k: 3}
coordinates: [x]
kinetic: 1/2*m*x_dot**2
potential: k*Abs(x)
initial: {x: 1.5}
"""


def test_a_v_shaped_well_swings_with_its_closed_form_period_and_keeps_its_energy(tmp_path):
    """From rest at x0 the force is the constant k towards 0: x0 = (k/m) (T/4)²/2, so the period
    is T = 4 sqrt(2 m x0 / k) = 4*sqrt(2) s here; samples at T/4, T/2, 3T/4 and T."""
    period = 4 * (2 * 2 * 1.5 / 3) ** 0.5
    code, out, err, _ = simulate(tmp_path, V_WELL, "--t-end", repr(period), "--samples", "5")
    assert code == 0, err
    assert err == ""
    rows = [list(map(float, line.split(","))) for line in out.splitlines()[1:]]
    speed = (2 * 3 * 1.5 / 2) ** 0.5
    expected = [(1.5, 0.0), (0.0, -speed), (-1.5, 0.0), (0.0, speed), (1.5, 0.0)]
    for (_t, x, v, energy), (x_exact, v_exact) in zip(rows, expected):
        assert x == pytest.approx(x_exact, abs=1e-6)
        assert v == pytest.approx(v_exact, abs=1e-6)
        assert energy == pytest.approx(4.5, rel=1e-7)


def test_derive_writes_the_derivative_of_abs_as_sign(tmp_path):
    path = tmp_path / "well.yaml"
    path.write_text(V_WELL)
    result = CliRunner().invoke(main, ["derive", str(path), "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert "k*sign(x)" in result.stdout.replace(" ", "")
    assert "Derivative" not in result.stdout


FRICTION = "dissipation: mu*m*g*Abs(x_dot)"
COULOMB = """parameters: {m: 2, g: 9.81, mu: 0.5}
coordinates: [x]
kinetic: 1/2*m*x_dot**2
FRICTION
initial: {x_dot: 3}
"""


def test_a_block_under_coulomb_friction_stops_at_the_closed_form_time(tmp_path):
    """Deceleration mu g: the block stops at t = v0/(mu g) after sliding v0²/(2 mu g)."""
    code, out, err, _ = simulate(tmp_path, COULOMB.replace("FRICTION", FRICTION),
                                 "--stop-when", "x_dot", "--t-end", "2", "--samples", "3")
    assert code == 0, err
    t, x, v, _energy = map(float, out.splitlines()[-1].split(","))
    assert t == pytest.approx(3 / (0.5 * 9.81), rel=1e-6)
    assert x == pytest.approx(9 / (2 * 0.5 * 9.81), rel=1e-6)
    assert abs(v) < 1e-6
    assert err == f"lagsim: stopped at t = {t!r}: x_dot changed sign (--stop-when)\n"


@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA"])
def test_a_sign_force_runs_with_a_jacobian_method_and_warns_once(tmp_path, method):
    """Before the stop the block slides as x = v0 t - mu g t²/2; the implicit methods get the
    Jacobian with d sign/dx_dot = 0 (it was an internal error), and one warning that it is wrong
    at the kink."""
    text = COULOMB.replace("FRICTION", "forces: {x: -mu*m*g*sign(x_dot)}")
    code, out, err, _ = simulate(tmp_path, text, "--method", method, "--t-end", "0.6",
                                 "--samples", "3")
    assert code == 0, err
    t, x, v, _energy = map(float, out.splitlines()[-1].split(","))
    assert (t, x, v) == (0.6, pytest.approx(3 * 0.6 - 0.5 * 9.81 * 0.36 / 2, rel=1e-6),
                         pytest.approx(3 - 0.5 * 9.81 * 0.6, rel=1e-6))
    assert err == (
        "lagsim: warning: the equations of motion are not smooth where the argument of "
        "sign(x_dot) is 0 (abs bends there, sign jumps); there the analytic Jacobian of "
        "Radau, BDF and LSODA is wrong, so they may take tiny steps or fail: an explicit "
        "method (DOP853, RK45) is more reliable across such points\n")


@pytest.mark.parametrize("command", [["check"], ["simulate", "--invariants", "--samples", "3"],
                                     ["simulate", "--method", "variational", "--dt", "0.01",
                                      "--samples", "3"]])
def test_the_other_commands_take_abs_too(tmp_path, command):
    path = tmp_path / "well.yaml"
    path.write_text(V_WELL)
    result = CliRunner().invoke(main, [*command, str(path)])
    assert result.exit_code == 0, result.stderr
    assert "internal error" not in result.stderr


# --- the Python API checks its arguments as the command line does ---

@pytest.fixture(scope="module")
def pendulum():
    import lagsim

    return lagsim.load("pendulum")


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda lagsim, s: lagsim.load("pendulum", l="abc"), "InputError",
     "parameters: the value of l 'abc': unknown symbol 'abc'; a value is a number or an "
     "expression in numbers, such as 1.5 or pi/4"),
    (lambda lagsim, s: lagsim.load("pendulum", l=[1]), "InputError",
     "parameters: l=[1]: the value must be a number such as 1.5"),
    (lambda lagsim, s: s.derive(form=3), "TypeError", "form must be a string, not int"),
    (lambda lagsim, s: s.derive(budget=-1), "InputError",
     "budget must be a finite number between 0 and 86400 seconds of CPU, not -1"),
    (lambda lagsim, s: s.derive(budget=float("nan")), "InputError",
     "budget must be a finite number between 0 and 86400 seconds of CPU, not nan"),
    (lambda lagsim, s: s.derive(budget="x"), "TypeError", "budget must be a number, not str"),
    (lambda lagsim, s: s.derive(width=-3), "InputError",
     "width must be between 0 and 100000 characters (0: no wrap), not -3"),
    (lambda lagsim, s: s.derive(simplify="yes"), "TypeError",
     "simplify must be True or False, not 'yes'"),
    (lambda lagsim, s: s.modes(at=3), "TypeError",
     "at must be a mapping of coordinate to value, a text such as 'theta=0', or None, not int"),
    (lambda lagsim, s: s.modes(at={"theta": "x"}), "TypeError",
     "at['theta'] must be a number, not str"),
    (lambda lagsim, s: s.simulate(parameters=3), "TypeError",
     "parameters must be a mapping of name to value, not int"),
    (lambda lagsim, s: s.simulate(initial={"theta": None}), "InputError",
     "initial: theta=None: the value must be a number such as 1.5"),
])
def test_api_arguments_of_the_wrong_type_or_value_name_their_keyword(pendulum, call, error,
                                                                     message):
    import lagsim

    with pytest.raises((TypeError, ValueError)) as caught:
        call(lagsim, pendulum)
    assert type(caught.value).__name__ == error
    assert str(caught.value) == message


def test_api_parameters_may_be_expressions_as_with_set():
    import lagsim

    assert lagsim.load("pendulum", l="pi/2").parameters["l"] == pytest.approx(math.pi / 2,
                                                                              rel=1e-15)


# --- library warnings reach stderr as lagsim's one escaped warning line ---

def test_a_warning_raised_during_a_command_prints_as_one_escaped_line(monkeypatch):
    """What scipy's IntegrationWarning looks like (several lines), with an escape sequence in
    it: one line, the escape written out, no path, line number or source."""
    import warnings

    from scipy.integrate import IntegrationWarning

    import lagsim.spec.system

    def warn_then_list() -> list[str]:
        warnings.warn("The maximum number of subdivisions (200)\n  has been achieved.\x1b[2J",
                      IntegrationWarning, stacklevel=1)
        return []

    monkeypatch.setattr(lagsim.spec.system, "bundled_systems", warn_then_list)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        result = CliRunner().invoke(main, ["systems"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ("lagsim: warning: The maximum number of subdivisions (200) has been "
                             "achieved.\\x1b[2J (IntegrationWarning)\n")


def test_matplotlib_warnings_about_a_control_character_reach_no_terminal_raw(tmp_path):
    """A CSV column named with an ESC: matplotlib's missing-glyph warning used to print the raw
    byte, with Python's path and source line."""
    import subprocess
    import sys

    csv = tmp_path / "esc.csv"
    csv.write_bytes(b"t,x\x1by\n0,1\n1,2\n")
    done = subprocess.run([sys.executable, "-m", "lagsim", "plot", str(csv), "-o",
                           str(tmp_path / "esc.png")], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stderr
    lines = done.stderr.decode().splitlines()
    assert lines and all(line.startswith("lagsim: warning: ") for line in lines), lines
    assert any("\\x1b" in line and line.endswith("(UserWarning)") for line in lines), lines
