"""Crossings of ``--section`` and ``--stop-when`` inside an accepted step (issue 32, "crossings
missed"; :mod:`lagsim.run.crossings`), against closed forms.

A free mass moves polynomially, so DOP853 and RK45 take steps of many seconds: the clock event
sin(2πt) crosses zero many times inside one step, upward at t = 1, 2, … (the start t = 0 lies on
the section and is not a crossing: a run takes its side from the first nonzero value). On the
pendulum (steps of about 0.05 s at lagsim's tolerances) sin(30 t) − 0.8 is positive on windows
of (π − 2 asin 0.8)/30 = 0.043 s, so one step holds both ends of a window.
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.integrate import solve_ivp

from lagsim.cli import main
from lagsim.numeric import ccompile
from lagsim.run import driver
from lagsim.run.crossings import SMALLEST, Scan
from lagsim.run.engines import cloop
from lagsim.run.problem import Problem
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model

G = 9.81
FAST = "sin(30*t)-0.8"
ASIN = math.asin(0.8)


def run(*args: str) -> tuple[dict[str, np.ndarray], str]:
    """The CSV columns and stderr of ``lagsim simulate ARGS`` (exit 0)."""
    result = CliRunner().invoke(main, ["simulate", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.stdout)))
    data = np.array(rows[1:], dtype=float).reshape(len(rows) - 1, len(rows[0]))
    return {name: data[:, k] for k, name in enumerate(rows[0])}, result.stderr


def fast_crossings(t_end: float) -> np.ndarray:
    """The zeros of sin(30 t) − 0.8 in (0, t_end]: 30 t = asin 0.8 + 2πk and π − asin 0.8 + 2πk."""
    k = np.arange(0, int(30 * t_end / (2 * math.pi)) + 2)
    t = np.sort(np.concatenate(((ASIN + 2 * math.pi * k) / 30,
                                (math.pi - ASIN + 2 * math.pi * k) / 30)))
    return t[t <= t_end]


@pytest.mark.parametrize("method", ["DOP853", "RK45"])
def test_section_of_a_clock_finds_every_upward_crossing(method: str) -> None:
    """sin(2πt) rises through 0 at t = 1, …, 100 in (0, 100.5]: 100 rows, each the free mass's
    state there (x = t, y = 5t − g t²/2, ẏ = 5 − g t). Before, 2 rows with DOP853, none with
    RK45."""
    out, err = run("free_mass_cartesian", "--section", "sin(2*pi*t)", "--section-direction",
                   "up", "--t-end", "100.5", "--method", method)
    t = out["t"]
    assert len(t) == 100
    np.testing.assert_allclose(t, np.arange(1, 101), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out["x"], t, rtol=1e-9)
    np.testing.assert_allclose(out["y"], 5 * t - G / 2 * t**2, rtol=1e-9)
    np.testing.assert_allclose(out["y_dot"], 5 - G * t, rtol=1e-9)
    assert "warning" not in err


def test_stop_when_of_a_clock_stops_at_its_first_crossing_with_rk45() -> None:
    """sin(2πt) first changes sign at t = 0.5 (before: at 4.5, RK45's steps are seconds
    long)."""
    out, err = run("free_mass_cartesian", "--stop-when", "sin(2*pi*t)", "--method", "RK45",
                   "--t-end", "10")
    assert abs(out["t"][-1] - 0.5) <= 1e-9
    assert abs(out["y"][-1] - (2.5 - G / 8)) <= 1e-9
    assert "lagsim: stopped at t = 0.5" in err


def _problem(name: str, **flags: object) -> Problem:
    spec = load_spec(name)
    return Problem.build(spec, build_model(spec), SimulateOptions.resolve(spec.simulate, flags))


@pytest.mark.skipif(ccompile.compiler() is None, reason="the C loop needs a C compiler")
@pytest.mark.parametrize(("name", "flags"), [("pendulum", {}), ("pendulum_natural", {}),
                                             ("pendulum_natural", {"formulation": "reduced"})])
def test_c_and_python_loops_stop_at_the_first_of_two_crossings_in_a_step(
        name: str, flags: dict) -> None:
    """sin(30 t) − 0.8 first changes sign at asin(0.8)/30 and back 0.043 s later, inside the
    first accepted step: both loops stop at the first (before: at 0.24, the third)."""
    python_run = driver.run_python(_problem(name, stop_when=FAST, **flags))
    loop = cloop.loop_for(_problem(name, stop_when=FAST, **flags))
    assert loop is not None
    with driver._quiet():
        c_run = loop.run()
    for trajectory in (python_run, c_run):
        assert trajectory.stop_reason == "stop_when"
        assert abs(trajectory.t[-1] - ASIN / 30) <= 1e-9
    assert abs(c_run.t[-1] - python_run.t[-1]) <= 1e-12
    np.testing.assert_allclose(c_run.q[-1], python_run.q[-1], rtol=0, atol=1e-10)


def test_default_stop_when_stops_at_the_first_of_two_crossings_in_a_step() -> None:
    """Through the CLI with the default method (the C loop): the stop at asin(0.8)/30."""
    out, err = run("pendulum", "--stop-when", FAST, "--t-end", "10")
    assert abs(out["t"][-1] - ASIN / 30) <= 1e-9
    assert "warning" not in err


def test_section_finds_both_crossings_inside_one_step() -> None:
    """Every zero of sin(30 t) − 0.8 in (0, 2], 20 of them, though DOP853's steps on the
    pendulum hold two at a time (before: 2 of the 20)."""
    out, err = run("pendulum", "--section", FAST, "--t-end", "2")
    expected = fast_crossings(2.0)
    assert len(expected) == 20
    steps = solve_ivp(lambda _t, y: [y[1], -G * math.sin(y[0])], (0.0, 2.0),
                      [math.pi / 6, 0.0], method="DOP853", rtol=1e-10, atol=1e-10).t
    per_step = np.histogram(expected, bins=steps)[0]
    assert per_step.max() >= 2
    assert len(out["t"]) == 20
    np.testing.assert_allclose(out["t"], expected, rtol=0, atol=1e-9)
    assert "warning" not in err


def test_section_direction_keeps_the_crossings_of_one_side() -> None:
    """``down``: sin(30 t) − 0.8 falls through 0 at (π − asin 0.8 + 2πk)/30."""
    out, _ = run("pendulum", "--section", FAST, "--section-direction", "down", "--t-end", "2")
    expected = fast_crossings(2.0)[1::2]
    np.testing.assert_allclose(out["t"], expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("option", ["--section", "--stop-when"])
@pytest.mark.parametrize("method", ["DOP853", "RK45"])
def test_an_event_too_fast_to_follow_is_said(option: str, method: str) -> None:
    """sin(1e9 t) turns in nanoseconds, steps are milliseconds: the run warns, once, that
    crossings may be missed, naming the option and where."""
    _, err = run("free_mass_cartesian", option, "sin(1e9*t)", "--t-end", "1", "--method",
                 method)
    lines = [line for line in err.splitlines() if "could not be followed" in line]
    assert len(lines) == 1
    assert lines[0].startswith(f"lagsim: warning: {option} sin(1e9*t) could not be followed "
                               "between t = ")
    assert "it changes too fast there, or grazes zero): crossings there may be missed" in lines[0]
    u, v = (float(x) for x in lines[0].split("between t = ")[1].split(" (")[0].split(" and t = "))
    assert 0.0 <= u < v <= 1e-4


def test_a_fixed_step_method_refuses_a_section() -> None:
    """The fixed-step loops look for no crossings: ``--section`` with one is refused (exit 2),
    as ``--stop-when`` is, where before it was ignored and the samples written."""
    result = CliRunner().invoke(main, ["simulate", "pendulum", "--method", "variational",
                                       "--dt", "0.01", "--section", "theta"])
    assert result.exit_code == 2
    assert result.stderr == ("lagsim: error: --section is not available with --method "
                             "variational; use --method DOP853 for a run that writes a "
                             "section\n")
    assert result.stdout == ""


@pytest.mark.parametrize("method", ["DOP853", "RK45"])
def test_a_start_on_the_section_is_not_a_crossing(method: str) -> None:
    """The free mass starts at y = 0 rising: its only crossing of y = 0 is the fall through it
    at t = 2·5/g; t² leaves 0 with zero slope and never comes back: no row, and no warning
    (a piece that starts on an exact zero of g is not an unresolved one)."""
    out, err = run("free_mass_cartesian", "--section", "y", "--t-end", "2", "--method", method)
    np.testing.assert_allclose(out["t"], [10 / G], rtol=0, atol=1e-9)
    assert err == ""
    out, err = run("free_mass_cartesian", "--section", "t**2", "--t-end", "2", "--method",
                   method)
    assert len(out["t"]) == 0
    assert err == ""


@pytest.mark.parametrize("omega", [3.0, 50.0, 400.0, 3000.0])
def test_scan_sees_each_zero_of_a_sine_it_can_resolve(omega: float) -> None:
    """:class:`lagsim.run.crossings.Scan` over one step [0, 1] of sin(ω t + 0.1): a sign change on
    one piece for each zero (ω t + 0.1 = kπ), none unresolved, up to thousands in a step."""
    scan = Scan(lambda times: np.sin(omega * times + 0.1))
    changes: list[tuple[float, float]] = []

    def visit(u: float, gu: float, v: float, gv: float) -> bool:
        if gu * gv < 0.0:
            changes.append((u, v))
        return False

    scan.step(0.0, 1.0, math.sin(omega + 0.1), visit)
    zeros = (np.pi * np.arange(1, int((omega + 0.1) / np.pi) + 1) - 0.1) / omega
    assert scan.missed is None
    assert len(changes) == len(zeros)
    assert all(u <= z <= v for (u, v), z in zip(changes, zeros))


def test_scan_says_what_it_cannot_resolve() -> None:
    """sin(1e6 t) over a step of 1 cannot be followed with pieces of 1/4096 of it: the scan
    marks the first piece it could not resolve, from the start."""
    scan = Scan(lambda times: np.sin(1e6 * times + 0.1))
    scan.step(0.0, 1.0, math.sin(1e6 + 0.1), lambda u, gu, v, gv: False)
    assert scan.missed is not None
    u, v, h = scan.missed
    assert (u, h) == (0.0, 1.0) and 0.0 < v <= SMALLEST
