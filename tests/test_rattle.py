"""``--method rattle`` (issue 11; Andersen 1983, docs/references.md): order, constraints kept
to rounding, bounded energy error, a Noether momentum, and the refusals through the CLI.

Reference values never come from lagsim itself: the pendulum's exact Jacobi-elliptic motion
(tests/reference/exact.py, seed 001 Ex. 10.5), the order 2 of a symmetric method seen in a
step-halving series, conservation of h (seed 001) and of the constraint φ = 0 (seed 001
§10.7), the vertical angular momentum of the spherical pendulum (its rotational symmetry), the
rod tension of seed 002 §23.7. Systems are written inline (the bundled files may change).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner
from inline_systems import (
    A01,
    DOUBLE_PENDULUM_CARTESIAN,
    MOVING_PIVOT_PENDULUM,
    SPHERICAL_CARTESIAN,
    named,
)
from reference import exact

from lagsim.cli import main
from lagsim.numeric.compile import compile_model
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

DOUBLE_NATURAL = named("double_natural", DOUBLE_PENDULUM_CARTESIAN, """\
initial:
  x1: l1*sin(1)
  y1: -l1*cos(1)
  x2: l1*sin(1) + l2*sin(2)
  y2: -l1*cos(1) - l2*cos(2)
  x1_dot: 0
  y1_dot: 0
  x2_dot: 0
  y2_dot: 0
""")


SPHERICAL_ANGLES = """
name: spherical_angles
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [theta, phi]
masses:
  bob:
    mass: m
    position: [l*sin(theta)*cos(phi), l*sin(theta)*sin(phi), -l*cos(theta)]
gravity: [0, 0, -g]
initial: {theta: 1.0, phi: 0, theta_dot: 0, phi_dot: 3.0}
"""
"""M(q) = m l² diag(1, sin²θ): refused by rattle, taken by variational."""

DAMPED = """
name: damped
parameters: {m: 1.0, l: 1.0, g: 9.81, c: 0.5, F0: 1.5, w: 2.0}
coordinates: [theta]
kinetic: 1/2*m*l**2*theta_dot**2
potential: -m*g*l*cos(theta)
dissipation: 1/2*c*theta_dot**2
forces:
  theta: F0*cos(w*t)
initial: {theta: 1.0, theta_dot: 0}
"""

MOVING_PIVOT = named("moving_pivot", MOVING_PIVOT_PENDULUM,
                     "initial: {x: l*sin(0.3), y: -l*cos(0.3), x_dot: A*w, y_dot: 0}\n")

SKATE = """
name: skate
parameters: {m: 1.0, J: 0.1}
coordinates: [x, y, psi]
kinetic: 1/2*m*(x_dot**2 + y_dot**2) + 1/2*J*psi_dot**2
constraints:
  - name: blade
    velocity: x_dot*sin(psi) - y_dot*cos(psi)
initial: {x: 0, y: 0, psi: 0, x_dot: 1, y_dot: 0, psi_dot: 1}
"""

_NUMERIC: dict[str, object] = {}


def run(text: str, method: str = "rattle", **flags):
    """Simulate inline YAML ``text`` with ``method`` and the simulate ``flags``."""
    spec = parse_spec(text, "<test>")
    model = build_model(spec)
    options = SimulateOptions.resolve(spec.simulate, {"method": method, **flags})
    if text not in _NUMERIC:
        _NUMERIC[text] = compile_model(model)
    return simulate(spec, model, options, numeric=_NUMERIC[text])


def end_state(text: str, method: str, h: float, t_end: float = 1.0) -> np.ndarray:
    traj = run(text, method, dt=h, t_end=t_end, samples=2)
    return np.concatenate((traj.q[-1], traj.qd[-1]))


def halving_order(text: str, method: str, h: float, t_end: float = 1.0) -> float:
    """The observed order from three runs with h, h/2, h/4 (Richardson: the differences of
    successive end states shrink by 2^p)."""
    a, b, c = (end_state(text, method, h / k, t_end) for k in (1, 2, 4))
    return math.log2(np.abs(a - b).max() / np.abs(b - c).max())


def energy_per_tenth(traj) -> np.ndarray:
    """max |h − h(0)| over each tenth of the run."""
    error = np.abs(traj.energy - traj.energy[0])
    return np.array([part.max() for part in np.array_split(error[1:], 10)])


# ---------------------------------------------------------------------------------------------
# order


def test_order_two_against_the_exact_pendulum() -> None:
    """The error at t = 1 against the Jacobi-elliptic solution (tests/reference/exact.py) falls
    by 4 when the step halves: order 2.00 ± 0.05."""
    theta = float(exact.angle(1.0, math.pi / 2)[0])
    errors = []
    for h in (0.01, 0.005, 0.0025):
        x, y = end_state(A01, "rattle", h)[:2]
        errors.append(abs(math.atan2(x, -y) - theta))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2.0) <= 0.05), orders


@pytest.mark.parametrize("text", [A01, DOUBLE_NATURAL], ids=["pendulum", "double_pendulum"])
def test_order_two_in_natural_coordinates(text: str) -> None:
    assert abs(halving_order(text, "rattle", 0.01) - 2.0) <= 0.05


def test_velocity_dependent_forces_keep_order_two() -> None:
    """Dissipation and a driving torque as explicit half-kicks, the second at the extrapolated
    velocity 2v_{n+½} − v_n: still order 2 (a kick at v_{n+½} alone would give order 1)."""
    assert abs(halving_order(DAMPED, "rattle", 0.01) - 2.0) <= 0.05


# ---------------------------------------------------------------------------------------------
# what is kept


@pytest.fixture(scope="module")
def a01_run():
    """A01 over 100 s (about 42 periods) at h = 0.01."""
    return run(A01, dt=0.01, t_end=100.0, samples=2001)


def test_constraint_kept_to_rounding(a01_run) -> None:
    """|φ| ≤ 1e-13 and |φ̇| ≤ 1e-13 at every sample (SHAKE and the velocity stage)."""
    assert np.abs(a01_run.residual).max() <= 1e-13
    assert np.abs(a01_run.residual_dot).max() <= 1e-13


def test_energy_error_is_bounded(a01_run) -> None:
    """The largest energy error of each tenth of the run is within 10 % of every other tenth's
    (no drift), and it is of the size h² predicts (between 1e-4 and 1e-2 at h = 0.01)."""
    tenths = energy_per_tenth(a01_run)
    assert tenths.max() <= 1.1 * tenths.min(), tenths
    assert 1e-4 < tenths.max() < 1e-2


def test_energy_error_falls_with_h_squared() -> None:
    """Ten times smaller a step gives a hundred times smaller energy error (within 10 %)."""
    runs = [run(A01, dt=h, t_end=10.0, samples=1001) for h in (0.01, 0.001)]
    errors = [np.abs(traj.energy - traj.energy[0]).max() for traj in runs]
    assert 90 <= errors[0] / errors[1] <= 110, errors


def test_tension_matches_the_closed_form(a01_run) -> None:
    """The multiplier at each sample is the rod's: −2lλ = m l θ̇² + m g cos θ (seed 002 §23.7,
    the pendulum_natural description)."""
    x, y = a01_run.q.T
    xd, yd = a01_run.qd.T
    tension = (xd**2 + yd**2) + 9.81 * (-y)
    assert np.allclose(-2.0 * a01_run.lam[:, 0], tension, rtol=0, atol=1e-9)


def test_spherical_pendulum_keeps_the_vertical_angular_momentum() -> None:
    """L_z = m(x ẏ − y ẋ) is the Noether momentum of the rotations about z; RATTLE keeps it to
    rounding (1e-13 over 5·10³ steps; bench/symplectic.py: 10⁵ steps)."""
    traj = run(SPHERICAL_CARTESIAN, dt=0.01, t_end=50.0, samples=2001)
    x, y, _ = traj.q.T
    xd, yd, _ = traj.qd.T
    lz = x * yd - y * xd
    assert abs(lz[0] - 3.0 * math.sin(1) ** 2) < 1e-12
    assert np.abs(lz - lz[0]).max() <= 1e-13


# ---------------------------------------------------------------------------------------------
# samples


def test_samples_between_steps_are_partial_steps() -> None:
    """Sample times that are not multiples of the step are reached by one partial step: they
    keep the constraint, and agree with the sample grid of the step to O(h²)."""
    between = run(A01, dt=0.01, t_end=1.0, samples=7)
    on_grid = run(A01, dt=0.001, t_end=1.0, samples=7)
    assert between.t.tolist() == [k / 6 for k in range(7)]   # each the double nearest k/6
    assert np.abs(between.residual).max() <= 1e-13
    assert np.abs(between.q - on_grid.q).max() < 2e-3


def test_dt_alone_gives_a_row_every_step() -> None:
    traj = run(A01, dt=0.01, t_end=1.0)
    assert len(traj.t) == 101
    assert traj.t[-1] == 1.0


def test_numpy_path_agrees_with_c(monkeypatch) -> None:
    """Without a C compiler the same step runs in NumPy: the same numbers to rounding."""
    c = end_state(DOUBLE_NATURAL, "rattle", 0.01)
    monkeypatch.setenv("LAGSIM_NO_CC", "1")
    numpy = end_state(DOUBLE_NATURAL, "rattle", 0.01)
    assert np.abs(c - numpy).max() <= 1e-12


def test_progress_reaches_the_end() -> None:
    seen: list[float] = []
    spec = parse_spec(A01, "<test>")
    model = build_model(spec)
    options = SimulateOptions.resolve({}, {"method": "rattle", "dt": 0.01, "t_end": 20.0,
                                           "samples": 11})
    simulate(spec, model, options, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0


# ---------------------------------------------------------------------------------------------
# refusals, through the CLI


def refuse(text: str, *args: str) -> str:
    result = CliRunner().invoke(main, ["simulate", "-", *args], input=text)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lagsim: error: "), result.output
    return lines[0]


def test_mass_matrix_depending_on_q_names_variational() -> None:
    message = refuse(SPHERICAL_ANGLES, "--method", "rattle", "--dt", "0.01")
    assert "constant mass matrix" in message and "theta" in message
    assert "--method variational" in message


def test_rheonomic_constraint_names_variational() -> None:
    message = refuse(MOVING_PIVOT, "--method", "rattle", "--dt", "0.01")
    assert "depend on t" in message and "--method variational" in message
    assert message.startswith("lagsim: error: <stdin>:10:16: ")  # the constraint rod


def test_velocity_constraint_is_refused_with_the_literature() -> None:
    message = refuse(SKATE, "--method", "rattle", "--dt", "0.01")
    assert "blade is a velocity constraint" in message
    assert "Cortés" in message and "McLachlan" in message


def test_a_step_is_required() -> None:
    message = refuse(A01, "--method", "rattle")
    assert "--dt" in message


@pytest.mark.parametrize("args, named", [
    (("--stabilize", "projection"), "--stabilize projection"),
    (("--formulation", "index1"), "--formulation index1"),
    (("--stop-when", "y"), "--stop-when"),
])
def test_options_that_do_not_apply_are_refused(args: tuple[str, ...], named: str) -> None:
    message = refuse(A01, "--method", "rattle", "--dt", "0.01", *args)
    assert named in message


def test_csv_through_the_cli() -> None:
    result = CliRunner().invoke(main, ["simulate", "-", "--method", "rattle", "--dt", "0.01",
                                       "--t-end", "1", "--samples", "3"], input=A01)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0] == "t,x,y,x_dot,y_dot,lambda_rod,residual_rod,residual_rod_dot,energy"
    assert [float(line.split(",")[0]) for line in lines[1:]] == [0.0, 0.5, 1.0]


def test_dependent_constraints_are_refused_naming_udwadia_kalaba() -> None:
    """The same rod twice: SHAKE's Newton matrix would be singular."""
    text = A01.replace("initial:", "  - name: again\n    holonomic: 2*(x**2 + y**2 - l**2)\n"
                       "initial:")
    result = CliRunner().invoke(main, ["simulate", "-", "--method", "rattle", "--dt", "0.01"],
                                input=text)
    assert result.exit_code == 2, result.output
    message = result.output.strip().splitlines()[-1]
    assert message.startswith("lagsim: error: <stdin>:")
    assert "dependent" in message and "udwadia-kalaba" in message


def test_tolerances_are_said_not_to_apply() -> None:
    """--rtol has no effect on a fixed-step method: said on stderr, the run goes on."""
    result = CliRunner().invoke(main, ["simulate", "-", "--method", "rattle", "--dt", "0.01",
                                       "--t-end", "0.1", "--rtol", "1e-3"], input=A01)
    assert result.exit_code == 0, result.output
    assert "--rtol does not apply to --method rattle" in result.stderr
    assert result.stdout.startswith("t,x,y")
