"""The action S = ∫ L dt (lagsim.analysis.action, `lagsim action`, `simulate --action`; issue 10).

Closed forms: seed 001_80d65b968ce3cb18.txt Example 10.2 (L = q1² + q2², q = (2, t) on [0, 1]:
S = 13/3); the harmonic oscillator x = A cos ωt, L = ½mẋ² − ½kx², whose running action is
S(t) = −(mA²ω/4) sin 2ωt; free fall from (0, 0) to (1, 0) in T = 1: x = t, y = (g/2) t (1 − t),
S = ½ − g²/24 (m = 1). Stationarity (Theorem 10.1): varied paths with the same ends change S only
at second order.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from inline_systems import HARMONIC_OSCILLATOR, NATURAL_PENDULUM, named
from scipy.integrate import simpson

from lagsim.analysis.action import lagrangian_values, path_action, stationary_path
from lagsim.cli import main
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

SEED_10_2 = """
name: seed_10_2
coordinates: [q1, q2]
lagrangian: q1**2 + q2**2
"""

OSCILLATOR = named("oscillator", HARMONIC_OSCILLATOR, "initial: {x: 0.7}\n")

FALL = """
name: fall
parameters: {m: 1.0, g: 9.81}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
potential: m*g*y
"""

PENDULUM = """
name: pendulum
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [theta]
masses:
  bob: {mass: m, position: [l*sin(theta), -l*cos(theta)]}
gravity: [0, -g]
initial: {theta: 0.5}
"""

NATURAL = named("pendulum_natural", NATURAL_PENDULUM,
                "initial: {x: l*sin(0.5), y: -l*cos(0.5)}\n")


def _run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def _system(text):
    spec = parse_spec(text, "inline.yaml", "inline")
    return spec, build_model(spec)


def _csv(text: str) -> tuple[list[str], np.ndarray]:
    lines = text.strip().splitlines()
    return lines[0].split(","), np.array([[float(x) for x in line.split(",")]
                                          for line in lines[1:]])


def test_seed_example_10_2_exact(tmp_path):
    path = tmp_path / "seed.yaml"
    path.write_text(SEED_10_2)
    result = _run("action", str(path), "--path", "q1=2, q2=t", "--t-start", "0", "--t-end", "1")
    assert result.exit_code == 0, result.output
    assert "S = 13/3" in result.output
    assert f"S ≈ {13 / 3!r}" in result.output
    doc = json.loads(_run("action", str(path), "--path", "q1=2, q2=t", "--format",
                          "json").output)
    assert doc["exact"] == "13/3" and doc["S"] == 13 / 3


def test_numeric_path_action_when_sympy_cannot():
    """L = ½ml²θ̇² + mgl cos θ along θ = sin t: cos(sin t) has no elementary antiderivative.
    Reference: mpmath's quadrature at 30 digits."""
    import mpmath

    report = path_action(*_system(PENDULUM), "theta=sin(t)", 0.0, 2.0, exact_budget=0)
    mpmath.mp.dps = 30
    reference = mpmath.quad(lambda t: mpmath.cos(t) ** 2 / 2 + 9.81 * mpmath.cos(mpmath.sin(t)),
                            [0, 2])
    assert report.exact == ""
    assert report.value == pytest.approx(float(reference), rel=1e-12)
    assert report.error < 1e-10


@pytest.mark.slow
def test_running_action_column_matches_the_oscillator():
    result = _run("simulate", "-", "--t-end", "3", "--samples", "3001", "--action",
                  "--rtol", "1e-12", "--atol", "1e-12", input=OSCILLATOR)
    assert result.exit_code == 0, result.output
    columns, data = _csv(result.stdout)
    assert columns[-1] == "action" and columns[-2] == "energy"
    m, k, A = 2.0, 8.0, 0.7
    w = math.sqrt(k / m)
    t = data[:, 0]
    exact = -(m * A**2 * w / 4) * np.sin(2 * w * t)
    scale = m * A**2 * w / 4
    assert np.max(np.abs(data[:, -1] - exact)) < 1e-10 * scale


def test_action_is_the_same_in_angles_and_with_a_rod():
    """S is a number of the motion: the pendulum in θ and in (x, y) with the rod constraint (q̈
    from M q̈ = F + Aᵀλ for the Hermite correction) agree."""
    values = []
    for text in (PENDULUM, NATURAL):
        result = _run("simulate", "-", "--t-end", "2", "--rtol", "1e-12", "--atol", "1e-12",
                      input=text)
        assert result.exit_code == 0, result.output
        spec, model = _system(text)
        from lagsim.output.io import Table

        columns, data = _csv(result.stdout)
        from lagsim.analysis.action import table_action

        values.append(table_action(model, Table(tuple(columns), data, "<run>")))
    assert values[0].values[-1] == pytest.approx(values[1].values[-1], rel=1e-9)
    assert values[0].error < 1e-9


def test_cli_csv_on_stdin_agrees_with_the_column(tmp_path):
    path = tmp_path / "osc.yaml"
    path.write_text(OSCILLATOR)
    run = _run("simulate", str(path), "--t-end", "1", "--action")
    _, data = _csv(run.stdout)
    result = _run("action", str(path), "--csv", "-", "--format", "json", input=run.stdout)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["S"] == pytest.approx(data[-1, -1], rel=1e-14)
    m, k, A = 2.0, 8.0, 0.7
    w = math.sqrt(k / m)
    assert doc["S"] == pytest.approx(-(m * A**2 * w / 4) * math.sin(2 * w), rel=1e-8)


def test_stationary_free_fall_is_the_parabola(tmp_path):
    result = _run("action", "-", "--stationary", "--from", "x=0, y=0", "--to", "x=1, y=0",
                  "--t-end", "1", "--samples", "11", input=FALL)
    assert result.exit_code == 0, result.output
    columns, data = _csv(result.stdout)
    assert columns == ["t", "x", "y", "x_dot", "y_dot", "action"]
    t = data[:, 0]
    g = 9.81
    assert np.allclose(data[:, 1], t, atol=1e-10)
    assert np.allclose(data[:, 2], g / 2 * t * (1 - t), atol=1e-10)
    assert data[-1, -1] == pytest.approx(0.5 - g**2 / 24, rel=1e-10)
    assert "stationary path: S = " in result.stderr


@pytest.mark.slow
def test_varied_paths_change_the_action_only_at_second_order():
    """Pendulum from θ = 0 to θ = 1 in T = 0.5 (before the first conjugate point, π/ω ≈ 1 s):
    S(q* + εη) with η = sin(πt/T)·(1 + t), the same ends. The first-order part
    (S(ε) − S(−ε))/2 vanishes to the solver's accuracy while the second-order part
    (S(ε) + S(−ε))/2 − S(0) scales as ε² and is positive (a minimum). The varied paths are not
    motions, so their action is Simpson's rule on L at 4001 samples (error ~h⁴ ≈ 1e-16)."""
    spec, model = _system(PENDULUM)
    T = 0.5
    path = stationary_path(spec, model, {"theta": 0.0}, {"theta": 1.0}, 0.0, T, samples=4001)

    def varied(eps):
        eta = np.sin(np.pi * path.t / T) * (1 + path.t)
        eta_dot = (np.pi / T) * np.cos(np.pi * path.t / T) * (1 + path.t) + np.sin(
            np.pi * path.t / T)
        q = path.q + eps * eta[:, None]
        qd = path.qd + eps * eta_dot[:, None]
        return simpson(lagrangian_values(model, path.t, q, qd), x=path.t)

    S0 = varied(0.0)
    assert S0 == pytest.approx(path.S, rel=1e-10)
    eps = 1e-2
    odd = [(varied(e) - varied(-e)) / 2 for e in (eps, eps / 2)]
    even = [(varied(e) + varied(-e)) / 2 - S0 for e in (eps, eps / 2)]
    # odd part = a ε + b ε³: the first variation a (zero on a stationary path) is
    # (8 odd(ε/2) − odd(ε)) / (3ε); the second-order part c ε² is positive and scales as ε²
    first_variation = (8 * odd[1] - odd[0]) / (3 * eps)
    second_variation = even[0] / eps**2
    assert abs(first_variation) < 1e-7 * second_variation
    assert second_variation > 0
    assert even[0] / even[1] == pytest.approx(4.0, rel=1e-3)
    # a path that is not stationary (the straight line) has a first variation of order 1
    line_q = (path.t / T)[:, None]
    line = simpson(lagrangian_values(model, path.t, line_q + 1e-3 * np.sin(np.pi * path.t / T)[
        :, None], np.full_like(line_q, 1 / T) + 1e-3 * (np.pi / T) * np.cos(
            np.pi * path.t / T)[:, None]), x=path.t)
    base = simpson(lagrangian_values(model, path.t, line_q, np.full_like(line_q, 1 / T)),
                   x=path.t)
    assert abs(line - base) / 1e-3 > 1e3 * abs(first_variation)


def test_errors_are_one_line_with_exit_2(tmp_path):
    path = tmp_path / "seed.yaml"
    path.write_text(SEED_10_2)
    result = _run("action", str(path))
    assert result.exit_code == 2 and "give one of --path, --csv and --stationary" in result.output
    result = _run("action", str(path), "--path", "q1=2")
    assert result.exit_code == 2 and "no value for q2" in result.output
    result = _run("action", str(path), "--path", "q1=2, q3=t")
    assert result.exit_code == 2 and "'q3' is not a coordinate" in result.output
    result = _run("action", "-", "--stationary", "--from", "x=0", "--to", "x=1, y=0",
                  input=FALL)
    assert result.exit_code == 2 and "--from gives no value for y" in result.output
    natural = tmp_path / "natural.yaml"
    natural.write_text(NATURAL)
    result = _run("action", str(natural), "--stationary", "--from", "x=0, y=-1", "--to",
                  "x=1, y=0")
    assert result.exit_code == 2 and "unconstrained system" in result.output
    csv = tmp_path / "run.csv"
    csv.write_text("t,z,z_dot,energy\n0,1,0,0\n1,1,0,0\n")
    result = _run("action", str(path), "--csv", str(csv))
    assert result.exit_code == 2 and "the CSV has no column q1, q2" in result.output
    for lines in (result.output.splitlines(),):
        assert len(lines) == 1
