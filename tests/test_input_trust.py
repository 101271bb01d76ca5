"""Input that must be refused where it stands, or must work (issue 32): YAML 1.1 numbers, numbers
that are not finite, huge integers, sample times that cannot increase, complex powers, the
derivatives of Abs and sign, the Python API's argument types, and library warnings on stderr."""

from __future__ import annotations

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
