"""``simulate --sensitivities`` (issue 26): the forward sensitivities against differences of whole
runs and a closed form, the consistent start's tangent, and the refusals.

The differences are Richardson-extrapolated central differences, (4 D(h/2) − D(h))/3 with
D(h) = (y(θ + h) − y(θ − h))/(2h), of runs at rtol = atol = 1e-12: their truncation error is
O(h⁴) (a plain central difference at h = 1e-4 is off by 6e-7 relative on the chaotic double
pendulum, its third derivative being large), their rounding error about 1e-12/h ≈ 1e-9.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import lagsim
from lagsim import naming
from lagsim.errors import InputError

RUN = dict(samples=11, rtol=1e-12, atol=1e-12)
H = 1e-3
RTOL = 1e-7


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _columns(trajectory):
    return [c for c in trajectory.columns
            if c != naming.TIME and not naming.is_residual(c) and c != naming.ENERGY
            and naming.sensitivity_of(c) is None]


def _difference(system, name, column_names, h, **run):
    """Richardson-extrapolated central difference of each column with respect to ``name``."""
    def runs(step):
        if name in system.parameters:
            value = system.parameters[name]
            up = system.simulate(parameters={name: value + step}, **run)
            down = system.simulate(parameters={name: value - step}, **run)
        else:
            value = dict(system.initial).get(name, 0.0)
            up = system.simulate(initial={**system.initial, name: value + step}, **run)
            down = system.simulate(initial={**system.initial, name: value - step}, **run)
        return {c: (up[c] - down[c]) / (2 * step) for c in column_names}

    wide, narrow = runs(h), runs(h / 2)
    return {c: (4 * narrow[c] - wide[c]) / 3 for c in column_names}


def _compare(name, names, t_end, errors="joint", **options):
    system = lagsim.load(name)
    run = dict(RUN, t_end=t_end, **options)
    exact = system.simulate(sensitivities=list(names), sensitivity_errors=errors, **run)
    columns = _columns(exact)
    worst = 0.0
    for s in names:
        scale = max(1.0, abs(system.parameters.get(s, 0.0)))
        differences = _difference(system, s, columns, H * scale, **run)
        for c in columns:
            got = exact[naming.sensitivity(c, s)]
            want = differences[c]
            size = np.abs(want).max()
            assert size > 1e-6, (c, s)
            worst = max(worst, float(np.abs(got - want).max() / size))
    assert worst < RTOL
    return exact


def test_pendulum_against_differences():
    exact = _compare("pendulum", ("l", "g", "theta", "theta_dot"), 2.0)
    assert exact["d(theta)/d(theta)"][0] == 1.0 and exact["d(theta_dot)/d(theta)"][0] == 0.0


def test_pendulum_angle_does_not_depend_on_the_mass():
    exact = lagsim.load("pendulum").simulate(sensitivities=["m"], t_end=2.0, **RUN)
    for c in ("theta", "theta_dot"):
        assert np.abs(exact[naming.sensitivity(c, "m")]).max() < 1e-12


def test_double_pendulum_against_differences():
    _compare("double_pendulum", ("l1", "m2", "theta1", "theta2_dot"), 1.0)


def test_a01_natural_coordinates_against_differences():
    exact = _compare("a01_pendulum", ("l", "g", "y_dot"), 2.0)
    assert "d(lambda_rod)/d(l)" in exact.columns


@pytest.mark.parametrize("options", [dict(formulation="udwadia-kalaba"),
                                     dict(stabilize="baumgarte"), dict(stabilize="none")])
def test_natural_pendulum_formulations_and_stabilizers(options):
    _compare("pendulum_natural", ("l", "g"), 2.0, **options)


@pytest.mark.parametrize("name, names, method", [
    ("driven_damped_pendulum", ("c", "theta"), "Radau"),
    ("pendulum_natural", ("l",), "BDF"),
])
def test_implicit_methods_against_differences(name, names, method):
    """Radau and BDF with the block-diagonal Jacobian diag(f_y, …) of the sensitivity system."""
    _compare(name, names, 2.0, method=method)


def test_driven_damped_pendulum_against_differences():
    _compare("driven_damped_pendulum", ("c", "F0", "w", "theta"), 5.0)


def test_sensitivities_stay_tangent_to_the_constraint():
    """φ = x² + y² − l² = 0 along the run, so 2x ∂x/∂l + 2y ∂y/∂l − 2l = 0 at every sample; the
    start x = l sin(π/6) depends on l and the consistent start is differentiated."""
    exact = lagsim.load("pendulum_natural").simulate(sensitivities=["l"], t_end=3.0, **RUN)
    tangent = (2 * exact["x"] * exact["d(x)/d(l)"] + 2 * exact["y"] * exact["d(y)/d(l)"] - 2.0)
    assert np.abs(tangent).max() < 1e-9
    assert exact["d(x)/d(l)"][0] == pytest.approx(0.5, abs=1e-15)


def test_small_amplitude_pendulum_closed_form():
    """θ = θ₀ cos(ωt), ω = √(g/l), so ∂θ/∂l = θ₀ t ω sin(ωt)/(2l). The nonlinear pendulum's
    frequency is ω(1 − θ₀²/16 + …), so the closed form is off by about ωT·θ₀²/16 relative over
    [0, T] (1.96e-6 at θ₀ = 1e-3, T = 10; measured 2.03e-6): tolerance twice that."""
    theta0, T, g, l = 1e-3, 10.0, 9.81, 1.0
    exact = lagsim.load("pendulum").simulate(initial={"theta": theta0, "theta_dot": 0.0},
                                             sensitivities=["l"], t_end=T, samples=201,
                                             rtol=1e-12, atol=1e-14)
    w = np.sqrt(g / l)
    t = exact["t"]
    closed = theta0 * t * w * np.sin(w * t) / (2 * l)
    error = np.abs(exact["d(theta)/d(l)"] - closed).max() / np.abs(closed).max()
    assert error < 2 * w * T * theta0**2 / 16


@pytest.mark.parametrize("name, names", [
    ("double_pendulum", ("l1", "m2", "theta1", "theta2_dot")),
    ("a01_pendulum", ("l", "g", "y_dot")),
])
def test_state_error_control_against_differences(name, names):
    """``sensitivity_errors: state`` (the step size controlled by the state alone, CVODES's
    errconS off): the sensitivities integrated on the state's steps still agree with differences
    of whole runs to 1e-7 relative."""
    _compare(name, names, 1.0, errors="state")


def test_state_error_control_keeps_the_plain_runs_steps():
    """With the error of the state alone (``auto``'s choice with DOP853), the state's steps
    (first step included) are the plain run's, so adding sensitivities leaves the trajectory as
    it was, to the rounding of the two solves of M q̈ = F (a Cholesky and lagsim_solve) over 3 s
    of the chaotic double pendulum (measured: 0); joint control takes other steps and moves it
    (measured 5.7e-10)."""
    system = lagsim.load("double_pendulum")
    run = dict(t_end=3.0, samples=31)
    plain = system.simulate(**run)
    state = system.simulate(sensitivities=["l1", "m2"], **run)
    joint = system.simulate(sensitivities=["l1", "m2"], sensitivity_errors="joint", **run)
    moved = {c: float(np.abs(state[c] - plain[c]).max()) for c in ("theta1", "theta2")}
    assert max(moved.values()) < 1e-12, moved
    assert max(float(np.abs(joint[c] - plain[c]).max()) for c in moved) > 1e-11


def test_plain_run_unchanged_by_the_option_absent():
    system = lagsim.load("pendulum_natural")
    plain = system.simulate(t_end=1.0, **RUN)
    assert not any(naming.sensitivity_of(c) for c in plain.columns)


@pytest.mark.parametrize("names, message", [
    (["lenght"], "'lenght' is neither a parameter nor a coordinate or velocity"),
    (["l", "l"], "names 'l' twice"),
])
def test_bad_names(names, message):
    with pytest.raises(InputError, match=message):
        lagsim.load("pendulum").simulate(sensitivities=names, t_end=0.1)


@pytest.mark.parametrize("options, message", [
    (dict(formulation="reduced"), ": formulation='reduced' has no sensitivities"),
    (dict(method="variational", dt=0.01), ": method='variational' has no sensitivities yet"),
    (dict(method="rattle", dt=0.01), ": method='rattle' has no sensitivities yet"),
    (dict(method="Radau", sensitivity_errors="state"),
     "sensitivity_errors state: method Radau controls the error of its whole state"),
])
def test_refused_formulation_or_method(options, message):
    with pytest.raises(InputError, match=message):
        lagsim.load("pendulum_natural").simulate(sensitivities=["l"], t_end=0.1, **options)


def test_sensitivity_errors_without_sensitivities_is_refused():
    with pytest.raises(InputError, match="sensitivity_errors applies only with sensitivities"):
        lagsim.load("pendulum").simulate(sensitivity_errors="state", t_end=0.1)


def test_cli_one_line_error_and_columns():
    bad = subprocess.run([sys.executable, "-m", "lagsim", "simulate", "pendulum",
                          "--sensitivities", "l,q"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "lagsim: error: --sensitivities: 'q' is neither a parameter nor a coordinate or "
        "velocity; they are m, g, l, theta, theta_dot"]
    good = subprocess.run([sys.executable, "-m", "lagsim", "simulate", "pendulum", "--t-end",
                           "0.5", "--samples", "2", "--sensitivities", "l,theta"],
                          capture_output=True, text=True)
    assert good.returncode == 0
    assert good.stdout.splitlines()[0] == (
        "t,theta,theta_dot,energy,d(theta)/d(l),d(theta_dot)/d(l),d(theta)/d(theta),"
        "d(theta_dot)/d(theta)")
    assert good.stderr == ""  # DOP853 steps the sensitivities in the C loop: no note


DERIVED = """
name: derived
parameters:
  m: 2
  l: 1.5
  I: m*l**2/12
  c: 0.3*I
coordinates: [theta]
kinetic: 1/2*(I + m*l**2/4)*theta_dot**2
potential: -m*9.81*l/2*cos(theta)
dissipation: 1/2*c*theta_dot**2
initial:
  theta: l/3
"""


def test_parameters_defined_from_others_follow_the_chain_rule():
    """I = m l²/12 and c = 0.3 I are re-read when l or m changes (``--set``), so ∂/∂l goes
    through them, and θ(t) does not depend on m at all: (I + m l²/4) θ̈ = −m g l/2 sin θ − c θ̇
    with I, c ∝ m has m divided out, which holds only when ∂/∂m follows I and c (with I and c
    held, m's terms do not cancel)."""
    system = lagsim.load(DERIVED)
    run = dict(RUN, t_end=2.0)
    exact = system.simulate(sensitivities=["l", "m", "I"], **run)
    assert np.abs(exact["d(theta)/d(m)"]).max() < 1e-12
    assert exact["d(theta)/d(l)"][0] == pytest.approx(1 / 3, rel=1e-15)
    for name in ("l", "I"):
        want = _difference(system, name, ["theta", "theta_dot"], H, **run)
        for c in ("theta", "theta_dot"):
            got = exact[naming.sensitivity(c, name)]
            assert np.abs(got - want[c]).max() < RTOL * np.abs(want[c]).max()
