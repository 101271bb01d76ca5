"""Poincaré sections, ``--section`` (issue 12), against the pendulum's closed forms: at θ = 0 the
speed follows from the energy, and successive crossings in one direction are one exact period
apart, T = 4 K(sin(θ0/2)) / √(g/l) (the large-amplitude pendulum, e.g. Landau and Lifshitz,
Mechanics §11 problem 1; the equation of motion of seed 001 Example 10.5)."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.special import ellipk

from lagsim.cli import main

G, L, M = 9.81, 1.0, 1.0
THETA0 = math.pi / 6
PERIOD = 4 * ellipk(math.sin(THETA0 / 2) ** 2) / math.sqrt(G / L)
TIGHT = ("--rtol", "1e-12", "--atol", "1e-12")


def table(*args: str) -> dict[str, np.ndarray]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.stdout)))
    data = np.array(rows[1:], dtype=float).reshape(len(rows) - 1, len(rows[0]))
    return {name: data[:, k] for k, name in enumerate(rows[0])}


def test_crossings_upward_are_one_period_apart_at_the_speed_energy_gives():
    """From rest at θ0 the bob first passes θ = 0 going down at T/4, going up at 3T/4; at
    θ = 0, ½ m l² θ̇² − m g l = −m g l cos θ0."""
    out = table("simulate", "pendulum", "--section", "theta", "--section-direction", "up",
                "--t-end", "10", *TIGHT)
    t = out["t"]
    assert len(t) == math.floor((10 - 0.75 * PERIOD) / PERIOD) + 1
    np.testing.assert_allclose(t, 0.75 * PERIOD + PERIOD * np.arange(len(t)), rtol=1e-9,
                               atol=0)
    np.testing.assert_allclose(np.diff(t), PERIOD, rtol=1e-9)
    speed = math.sqrt(2 * G / L * (1 - math.cos(THETA0)))
    np.testing.assert_allclose(out["theta_dot"], speed, rtol=1e-9)
    np.testing.assert_allclose(out["theta"], 0.0, atol=1e-12)


@pytest.mark.parametrize(("direction", "first", "spacing", "sign"),
                         [("down", 0.25, 1.0, -1.0), ("both", 0.25, 0.5, None)])
def test_the_other_directions(direction, first, spacing, sign):
    out = table("simulate", "pendulum", "--section", "theta", "--section-direction", direction,
                "--t-end", "6", *TIGHT)
    t = out["t"]
    np.testing.assert_allclose(t, PERIOD * (first + spacing * np.arange(len(t))), rtol=1e-9)
    speed = math.sqrt(2 * G / L * (1 - math.cos(THETA0)))
    expected = (sign * speed * np.ones(len(t)) if sign is not None
                else speed * (-1.0) ** (np.arange(len(t)) + 1))
    np.testing.assert_allclose(out["theta_dot"], expected, rtol=1e-9)


def test_a_section_of_a_constrained_system_keeps_to_the_constraint():
    """The pendulum in natural coordinates (index-1 with projection): at x = 0 going up (the
    bob moving right at the bottom) y = −l and x_dot = √(2 g l (1 − cos θ0)); the rod's
    tension −lambda·2l there is m g + m v²/l (λ of the constraint x² + y² − l²)."""
    out = table("simulate", "pendulum_natural", "--section", "x", "--section-direction", "up",
                "--t-end", "5", *TIGHT)
    assert len(out["t"]) == 2
    np.testing.assert_allclose(np.diff(out["t"]), PERIOD, rtol=1e-9)
    np.testing.assert_allclose(out["y"], -L, rtol=1e-10)
    v = math.sqrt(2 * G * L * (1 - math.cos(THETA0)))
    np.testing.assert_allclose(out["x_dot"], v, rtol=1e-9)
    np.testing.assert_allclose(-2 * L * out["lambda_rod"], M * G + M * v**2 / L, rtol=1e-8)
    assert np.all(np.abs(out["residual_rod"]) < 1e-12)


def test_section_with_stop_when_keeps_the_crossings_before_the_stop():
    out = table("simulate", "pendulum", "--section", "theta", "--stop-when", f"t - {PERIOD}",
                "--t-end", "10", *TIGHT)
    np.testing.assert_allclose(out["t"], [0.25 * PERIOD, 0.75 * PERIOD], rtol=1e-9)


@pytest.mark.parametrize(("args", "message"), [
    (("--section", "thetta"), "lagsim: error: --section: expression 'thetta': unknown symbol "
     "'thetta' (did you mean 'theta'?)"),
    (("--section", "theta", "--section-direction", "sideways"), "lagsim: error: "
     "--section-direction must be one of both, up, down; 'sideways' is not a known direction"),
    (("--section-direction", "up"), "lagsim: error: --section-direction: --section-direction "
     "chooses the crossings of --section; give --section EXPR too"),
])
def test_section_errors(args, message):
    result = CliRunner().invoke(main, ["simulate", "pendulum", *args])
    assert result.exit_code == 2
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1
