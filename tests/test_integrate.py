"""lagsim.run.integrate: options, the consistent start, the errors of issue 3, and the plumbing of
the run (fresh right-hand sides, progress, methods, rheonomic constraints and time-dependent forces
against closed forms); errors located in the file and mid-run failures (issues 8 and 15); the parts
of a run (Problem, after_step). Physics against the seeds is in test_simulate_physics.py.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ellipk

from lagsim.errors import InputError, IntegrationError, Location
from lagsim.numeric.compile import compile_model
from lagsim.run.integrate import (
    FORMULATIONS,
    STABILIZERS,
    SimulateOptions,
    Stabilizer,
    consistent_start,
    simulate,
)
from lagsim.spec.system import Setting, load_spec, parse_spec
from lagsim.symbolic.model import build_model

G = 9.81

NATURAL = """
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [x, y]
masses: {bob: {mass: m, position: [x, y]}}
gravity: [0, -g]
initial: {x: 0.6, y: -0.8}
constraints:
  - name: rod
    holonomic: x**2 + y**2 - l**2
"""


def system(text: str, **initial: float):
    spec = parse_spec(text, "test.yaml", initial=initial or None)
    return spec, build_model(spec)


def run_text(text: str, report=None, initial: dict | None = None, **flags):
    spec = parse_spec(text, "test.yaml", initial=initial)
    model = build_model(spec)
    return simulate(spec, model, SimulateOptions.resolve(spec.simulate, flags), report=report)


def settings(**values) -> dict[str, Setting]:
    return {k: Setting(v, Location("f.yaml", 3, 7)) for k, v in values.items()}


# --- options -----------------------------------------------------------------------------------


def test_defaults_are_those_of_issue_3() -> None:
    o = SimulateOptions.resolve({}, {})
    assert (o.t_start, o.t_end, o.samples, o.dt, o.method, o.rtol, o.atol) == (
        0.0, 10.0, 1001, None, "DOP853", 1e-10, 1e-10)
    assert (o.formulation, o.stabilize, o.baumgarte, o.stop_when, o.strict_initial) == (
        "auto", "projection", (5.0, 5.0), None, False)
    times = o.sample_times()
    assert len(times) == 1001 and times[0] == 0.0 and times[-1] == 10.0
    np.testing.assert_allclose(times, np.arange(1001) / 100, rtol=0, atol=4e-15)


def test_flags_win_over_the_file() -> None:
    file = settings(t_end=5, rtol="1e-8", method="rk45", baumgarte=[1, 2], samples=11)
    o = SimulateOptions.resolve(file, {"t_end": 3.0, "rtol": None, "dt": 0.25})
    assert (o.t_end, o.rtol, o.method, o.baumgarte) == (3.0, 1e-8, "RK45", (1.0, 2.0))
    assert o.samples is None and o.dt == 0.25
    assert list(o.sample_times()) == [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25,
                                      2.5, 2.75, 3.0]
    assert SimulateOptions.resolve({}, {"baumgarte": "3, 4"}).baumgarte == (3.0, 4.0)
    uneven = SimulateOptions.resolve({}, {"t_end": 1.0, "dt": 0.3}).sample_times()
    np.testing.assert_allclose(uneven, [0.0, 0.3, 0.6, 0.9, 1.0], rtol=0, atol=1e-15)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("rtol", -1, "must be positive, got -1"),
    ("atol", 0, "must be positive, got 0"),
    ("samples", 1, "must be a whole number of at least 2"),
    ("samples", 2.5, "must be a whole number of at least 2"),
    ("dt", -0.1, "must be positive"),
    ("method", "Euler", "must be one of RK45, RK23, DOP853, Radau, BDF, LSODA"),
    ("formulation", "index2", "must be one of auto, ode, index1, udwadia-kalaba, reduced"),
    ("stabilize", "projektion", "did you mean 'projection'?"),
    ("baumgarte", "5", "must be two numbers ALPHA,BETA"),
    ("baumgarte", [1, -2], "must be two non-negative numbers"),
    ("t_end", "soon", "must be a number, got 'soon'"),
    ("t_end", -1, "must leave t_end greater than t_start, got t_start = 0.0 and t_end = -1.0"),
])
def test_bad_options_name_the_option(key: str, value, message: str) -> None:
    with pytest.raises(InputError) as flag_error:
        SimulateOptions.resolve({}, {key: value})
    flag = "--" + key.replace("_", "-")
    assert str(flag_error.value).startswith(f"{flag} ") and message in str(flag_error.value)
    assert flag_error.value.exit_code == 2
    with pytest.raises(InputError) as file_error:
        SimulateOptions.resolve(settings(**{key: value}), {})
    assert str(file_error.value).startswith(f"f.yaml:3:7: simulate.{key} ")
    assert message in str(file_error.value)


def test_samples_and_dt_together_are_refused() -> None:
    with pytest.raises(InputError, match="either --samples or --dt, not both"):
        SimulateOptions.resolve({}, {"samples": 3, "dt": 0.1})
    with pytest.raises(InputError, match="either simulate.samples or simulate.dt"):
        SimulateOptions.resolve(settings(samples=3, dt=0.1), {})


def test_registries() -> None:
    assert set(FORMULATIONS) == {"ode", "index1", "udwadia-kalaba", "reduced"}
    assert set(STABILIZERS) == {"none", "baumgarte", "projection"}
    assert all(cls.name == key for key, cls in FORMULATIONS.items())


# --- errors of the run ---------------------------------------------------------------------------


def test_stop_when_with_an_unknown_symbol() -> None:
    with pytest.raises(InputError) as err:
        run_text(NATURAL, stop_when="lambda_rods")
    assert "unknown symbol 'lambda_rods' (did you mean 'lambda_rod'?)" in str(err.value)
    assert str(err.value).startswith("--stop-when: expression 'lambda_rods'")


def test_set_and_init_of_unknown_names() -> None:
    with pytest.raises(InputError, match="--set: no such parameter 'mass'") as err:
        load_spec("pendulum", overrides={"mass": 2.0})
    assert err.value.exit_code == 2
    with pytest.raises(InputError, match="--init: no such coordinate or velocity 'phi'"):
        load_spec("pendulum", initial={"phi": 0.1})


def test_ode_with_constraints_names_the_formulations_that_apply() -> None:
    with pytest.raises(InputError) as err:
        run_text(NATURAL, formulation="ode")
    assert ("formulation 'ode' is for unconstrained systems, and this one has the constraints "
            "rod; use index1, udwadia-kalaba, reduced (or auto)") in str(err.value)


def test_index1_refuses_a_constraint_listed_twice_and_suggests_udwadia_kalaba() -> None:
    text = NATURAL + "  - name: again\n    holonomic: x**2 + y**2 - l**2\n"
    with pytest.raises(InputError) as err:
        run_text(text, formulation="index1", t_end=1.0)
    assert "index1 cannot run" in str(err.value) and "again repeats" in str(err.value)
    assert "use --formulation udwadia-kalaba" in str(err.value)
    notes: list[str] = []
    traj = run_text(text, report=notes.append, t_end=1.0, samples=3)
    assert traj.formulation == "udwadia-kalaba"
    assert any("using udwadia-kalaba" in n for n in notes)
    assert np.abs(traj.residual).max() < 1e-10


def test_singular_mass_matrix_is_refused() -> None:
    """M = diag(m, m r²) of free_mass_polar is singular at r = 0 (no inertia along θ)."""
    spec = load_spec("free_mass_polar", initial={"r": 0.0})
    with pytest.raises(InputError) as err:
        simulate(spec, build_model(spec), SimulateOptions.resolve({}, {}))
    assert "the mass matrix is singular at the start (r = 0.0, theta = 0.5)" in str(err.value)
    assert "no inertia along theta" in str(err.value)
    massless = "coordinates: [x, y]\nkinetic: 1/2*x_dot**2\npotential: x**2 + y**2\n"
    with pytest.raises(InputError, match="the velocity of y appears nowhere in the kinetic"):
        run_text(massless)


def test_integrator_failure_reports_time_and_cause() -> None:
    """ẍ = 4x³ from rest at x = 1 blows up at t* = ∫₁^∞ dx/√(2x⁴ − 2) = K(1/2)/2 ≈ 0.927
    (K the complete elliptic integral); the run fails there, naming the time."""
    text = "coordinates: [x]\nkinetic: 1/2*x_dot**2\npotential: -x**4\ninitial: {x: 1.0}\n"
    with pytest.raises(IntegrationError) as err:
        run_text(text, t_end=2.0)
    assert err.value.exit_code == 1
    assert err.value.time == pytest.approx(float(ellipk(0.5)) / 2, abs=1e-6)
    assert "Required step size is less than spacing between numbers" in str(err.value)
    assert str(err.value).startswith(f"at t = {err.value.time!r}: ")


def test_projection_with_lsoda_is_refused_and_baumgarte_runs() -> None:
    with pytest.raises(InputError, match="--stabilize projection cannot be used with --method "
                       "LSODA"):
        run_text(NATURAL, method="LSODA", t_end=1.0)
    traj = run_text(NATURAL, method="LSODA", stabilize="baumgarte", t_end=1.0, samples=3,
                    rtol=1e-9, atol=1e-9)
    assert np.abs(traj.residual).max() < 1e-7


# --- the consistent start ------------------------------------------------------------------------


def test_inconsistent_start_is_corrected_and_reported() -> None:
    """(0.66, −0.88) lies 10% outside the circle: the least-change point is (0.6, −0.8); the
    velocity (1, 1) loses its radial part (0.6·1 − 0.8·1)·(0.6, −0.8) = −0.2·(0.6, −0.8)."""
    notes: list[str] = []
    traj = run_text(NATURAL, report=notes.append, initial={"x": 0.66, "y": -0.88, "x_dot": 1.0,
                                                           "y_dot": 1.0}, t_end=0.5, samples=2)
    np.testing.assert_allclose(traj.q[0], [0.6, -0.8], rtol=0, atol=1e-14)
    np.testing.assert_allclose(traj.qd[0], [1.12, 0.84], rtol=0, atol=1e-14)
    assert [n.split(":")[0] for n in notes] == ["initial x", "initial y", "initial x_dot",
                                                "initial y_dot"]
    assert notes[0].startswith("initial x: 0.66 -> 0.6")
    with pytest.raises(InputError) as err:
        run_text(NATURAL, initial={"x": 0.66}, strict_initial=True)
    assert "--strict-initial forbids correcting it (x: 0.66 -> " in str(err.value)


def test_consistent_start_leaves_a_consistent_state_alone() -> None:
    notes: list[str] = []
    traj = run_text(NATURAL, report=notes.append, strict_initial=True, t_end=0.1, samples=2)
    assert notes == [] and traj.q[0, 0] == 0.6


def test_conflicting_constraints_are_named() -> None:
    text = ("coordinates: [x, y]\nkinetic: 1/2*(x_dot**2 + y_dot**2)\n"
            "constraints:\n  - name: left\n    holonomic: x\n"
            "  - name: right\n    holonomic: x - 1\n  - name: free\n    holonomic: y\n")
    spec, model = system(text)
    numeric = compile_model(model)
    with pytest.raises(InputError) as err:
        consistent_start(numeric, 0.0, np.zeros(2), np.zeros(2))
    assert "the holonomic constraints left, right conflict" in str(err.value)


# --- the run ------------------------------------------------------------------------------------


def test_rheonomic_constraint_in_every_constrained_formulation() -> None:
    """x = sin t imposed on a mass under gravity: λ = m ẍ = −sin t, y = −g t²/2 (002 §23.5 with
    a moving constraint); the start velocity ẋ(0) = 1 is supplied by the consistent start."""
    text = ("parameters: {g: 9.81}\ncoordinates: [x, y]\nkinetic: 1/2*(x_dot**2 + y_dot**2)\n"
            "potential: g*y\nconstraints:\n  - name: drive\n    holonomic: x - sin(t)\n")
    runs = [(f, s) for f in ("index1", "udwadia-kalaba") for s in ("projection", "baumgarte",
                                                                    "none")]
    for formulation, stabilize in [*runs, ("reduced", "none")]:
        notes: list[str] = []
        traj = run_text(text, report=notes.append, formulation=formulation,
                        stabilize=stabilize, t_end=3.0, samples=31)
        assert notes[1:] == ["initial x_dot: 0.0 -> 1.0 (computed from constraint drive)"]
        np.testing.assert_allclose(traj.q[:, 0], np.sin(traj.t), rtol=0, atol=1e-8)
        np.testing.assert_allclose(traj.q[:, 1], -G * traj.t**2 / 2, rtol=0, atol=1e-8)
        np.testing.assert_allclose(traj.lam[:, 0], -np.sin(traj.t), rtol=0, atol=1e-7)


def test_time_dependent_force_and_every_method() -> None:
    """m ẍ = F0 cos t from rest: x = F0 (1 − cos t)/m."""
    text = ("parameters: {m: 2.0, F0: 3.0}\ncoordinates: [x]\nkinetic: 1/2*m*x_dot**2\n"
            "forces: {x: F0*cos(t)}\n")
    for method in ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"):
        traj = run_text(text, method=method, t_end=2.0, samples=21, rtol=1e-8, atol=1e-10)
        exact_x = 1.5 * (1 - np.cos(traj.t))
        assert np.abs(traj.q[:, 0] - exact_x).max() < 1e-5, method
        assert traj.formulation == "ode" and traj.stabilize == "none"


def test_projection_with_implicit_methods() -> None:
    for method in ("Radau", "BDF"):
        traj = run_text(NATURAL, method=method, t_end=2.0, samples=5, rtol=1e-8, atol=1e-10)
        assert np.abs(traj.residual).max() < 1e-12, method
        h = traj.energy
        assert np.abs(h - h[0]).max() < 1e-5 * abs(h[0]), method


def test_stop_when_starting_at_zero() -> None:
    """y starts at 0 and rises with ẏ = 5: the run stops when y returns to 0 at t = 2·5/g."""
    spec = load_spec("free_mass_cartesian")
    traj = simulate(spec, build_model(spec), SimulateOptions.resolve({}, {"stop_when": "y"}))
    assert traj.t[-1] == pytest.approx(10 / G, abs=1e-10)
    assert traj.stopped and traj.q[-1, 1] == pytest.approx(0.0, abs=1e-9)
    assert traj.q[-1, 0] == pytest.approx(10 / G, abs=1e-9)


def test_stop_when_a_multiplier_vanishes() -> None:
    """Started at the top with speed v0 = 1, the rod force −2ℓλ = m v²/ℓ − m g cos α (α from
    the top, v² = v0² + 2gℓ(1 − cos α)) changes sign where cos α = (2 + v0²/(gℓ))/3."""
    spec = parse_spec(NATURAL, initial={"x": 0.0, "y": 1.0, "x_dot": 1.0})
    traj = simulate(spec, build_model(spec),
                    SimulateOptions.resolve({}, {"stop_when": "lambda_rod", "t_end": 5.0}))
    x, y = traj.q[-1]
    assert traj.stopped and abs(traj.lam[-1, 0]) < 1e-8
    assert y == pytest.approx((2 + 1 / G) / 3, abs=1e-8)
    assert x > 0


def test_progress_and_fresh_arrays() -> None:
    spec, model = system(NATURAL)
    for method, calls in (("RK45", 5), ("DOP853", 0)):  # per step in Python, per call in C
        fractions: list[float] = []
        simulate(spec, model, SimulateOptions.resolve({}, {"t_end": 1.0, "samples": 2,
                                                           "method": method}),
                 progress=fractions.append)
        assert fractions[-1] == 1.0 and all(np.diff(fractions) > 0) and len(fractions) > calls
    numeric = compile_model(model)
    options = SimulateOptions()
    y = np.array([0.6, -0.8, 0.8, 0.6])
    for name in ("index1", "udwadia-kalaba"):
        form = FORMULATIONS[name](numeric, Stabilizer(numeric, options), spec, model)
        first = form.rhs(0.0, y)
        kept = first.copy()
        second = form.rhs(0.0, y + 0.01)
        assert second is not first and np.array_equal(first, kept)
        assert abs(float(numeric.phi(0.0, y[:2])[1][0] @ first[2:]) + 2.0) < 1e-12


def test_trajectory_columns_in_csv_order() -> None:
    """A velocity constraint x ẋ + y ẏ = 0 repeating the rod's φ̇: UK splits the force by the
    minimum norm: Aᵀλ = k (x, y) with k = −0.8 g at rest gives λ = k (2, 1)/5."""
    traj = run_text(NATURAL + "  - name: slide\n    velocity: x*x_dot + y*y_dot\n", t_end=0.1,
                    samples=3, formulation="udwadia-kalaba")
    assert traj.columns == ("t", "x", "y", "x_dot", "y_dot", "lambda_rod", "lambda_slide",
                            "residual_rod", "residual_slide", "residual_rod_dot", "energy")
    data = traj.as_array()
    assert data.shape == (3, 11)
    np.testing.assert_array_equal(data[:, 0], [0.0, 0.05, 0.1])
    np.testing.assert_array_equal(data[:, -1], traj.energy)
    k = -0.8 * G
    assert traj.column("lambda_rod")[0] == pytest.approx(2 * k / 5, abs=1e-12)
    assert traj.column("lambda_slide")[0] == pytest.approx(k / 5, abs=1e-12)
    assert math.isclose(traj.energy[0], -G * 0.8, rel_tol=1e-14)


# --- errors found after the spec point into the file (issue 8 §4) ------------------------------


def cli(*args: str):
    from click.testing import CliRunner

    from lagsim.cli import main

    return CliRunner().invoke(main, list(args))


def place(text: str, line_text: str, token: str, nth: int = 1) -> str:
    """LINE:COL of ``token`` on the ``nth`` line of ``text`` that contains ``line_text``."""
    found = [(number, line) for number, line in enumerate(text.splitlines(), start=1)
             if line_text in line]
    number, line = found[nth - 1]
    return f"{number}:{line.index(token, line.index(line_text)) + 1}"


POLAR = """parameters: {m: 1.0}
coordinates: [r, theta]
kinetic: 1/2*m*(r_dot**2 + r**2*theta_dot**2)
initial:
  r: 0.0
  theta: 0.5
"""


def test_a_singular_mass_matrix_at_the_start_points_at_the_initial_value(tmp_path) -> None:
    """M = diag(m, m r²) is singular at r = 0, along θ; θ's initial value is the part of the
    file concerned."""
    path = tmp_path / "polar.yaml"
    path.write_text(POLAR)
    result = cli("simulate", str(path))
    assert result.exit_code == 2
    assert result.output.startswith(
        f"lagsim: error: {path}:{place(POLAR, 'theta: 0.5', '0.5')}: the mass matrix is "
        "singular at the start (r = 0.0, theta = 0.5): the kinetic energy gives no inertia "
        "along theta")
    by_flag = cli("simulate", str(path), "--init", "theta=1", "--init", "r=0")
    assert by_flag.output.startswith("lagsim: error: --init: the mass matrix is singular")


def test_an_inconsistent_start_points_at_a_constraint(tmp_path) -> None:
    text = ("coordinates: [x, y]\nkinetic: 1/2*(x_dot**2 + y_dot**2)\n"
            "constraints:\n  - name: left\n    holonomic: x\n"
            "  - name: right\n    holonomic: x - 1\n")
    path = tmp_path / "conflict.yaml"
    path.write_text(text)
    result = cli("simulate", str(path))
    assert result.exit_code == 2
    where = {place(text, "holonomic: x", "x"), place(text, "holonomic: x - 1", "x")}
    error = result.output.splitlines()[-1]
    assert result.output.startswith("lagsim: no initial values given")
    assert any(error.startswith(f"lagsim: error: {path}:{w}: ") for w in where), result.output
    assert "consistent" in error


def test_a_formulation_that_cannot_apply_points_at_the_option_or_the_constraint(tmp_path
                                                                               ) -> None:
    text = NATURAL + "simulate:\n  formulation: ode\n"
    path = tmp_path / "natural.yaml"
    path.write_text(text)
    result = cli("simulate", str(path))
    assert result.exit_code == 2
    assert result.output == (
        f"lagsim: error: {path}:{place(text, 'formulation: ode', 'ode')}: formulation 'ode' is "
        "for unconstrained systems, and this one has the constraints rod; use index1, "
        "udwadia-kalaba, reduced (or auto)\n")
    twice = NATURAL + "  - name: again\n    holonomic: x**2 + y**2 - l**2\n"
    path.write_text(twice)
    result = cli("simulate", str(path), "--formulation", "index1")
    assert result.exit_code == 2
    assert result.output == (
        f"lagsim: error: {path}:{place(twice, 'holonomic: x**2 + y**2 - l**2', 'x', 2)}: "
        "formulation index1 cannot run: the rows of A are dependent at the start (again "
        "repeats earlier constraints), so its equations are singular; use --formulation "
        "udwadia-kalaba, which needs no independence of the constraints\n")


def test_a_stop_when_in_the_file_points_into_its_text(tmp_path) -> None:
    text = NATURAL + "simulate:\n  stop_when: lambda_rods\n"
    path = tmp_path / "natural.yaml"
    path.write_text(text)
    result = cli("simulate", str(path))
    assert result.exit_code == 2
    assert result.output.startswith(
        f"lagsim: error: {path}:{place(text, 'lambda_rods', 'lambda_rods')}: simulate.stop_when "
        "'lambda_rods': unknown symbol 'lambda_rods' (did you mean 'lambda_rod'?)")


def test_each_refused_combination_says_what_would_apply() -> None:
    with pytest.raises(InputError) as err:
        run_text(NATURAL, method="LSODA")
    assert str(err.value) == (
        "--stabilize projection cannot be used with --method LSODA (its state lives in Fortran "
        "and cannot be corrected after a step); use --method RK45, RK23, DOP853, Radau or BDF, "
        "or --stabilize none or baumgarte")
    with pytest.raises(InputError) as err:
        run_text(NATURAL, formulation="reduced", stabilize="baumgarte")
    assert str(err.value) == (
        "--stabilize baumgarte does not apply: formulation reduced keeps the constraints by "
        "construction; leave it out, or use index1 or udwadia-kalaba with it")
    skate = ("coordinates: [x, y, psi]\nkinetic: 1/2*(x_dot**2 + y_dot**2 + psi_dot**2)\n"
             "constraints:\n  - name: blade\n    velocity: x_dot*sin(psi) - y_dot*cos(psi)\n")
    with pytest.raises(InputError) as err:
        run_text(skate, formulation="reduced")
    assert str(err.value) == ("test.yaml:5:15: velocity constraint 'blade' cannot be "
                              "eliminated by Lagrange's recipe: it is nonholonomic (Frobenius' "
                              "test, as `lagsim check` reports); use index1 or udwadia-kalaba")
    assert [cls.stabilizers for cls in FORMULATIONS.values()].count(frozenset({"none"})) == 2
    assert "LSODA" not in STABILIZERS["projection"].methods


# --- mid-run failures (issue 15) --------------------------------------------------------------


COS2 = """coordinates: [x, y]
kinetic: 1/2*cos(x)**2*x_dot**2 + 1/2*y_dot**2
potential: 1/2*y**2
initial: {x: 0.0, x_dot: 1.0, y: 1.0}
"""
"""d/dt(cos x · ẋ) = 0 with cos x · ẋ = 1: sin x = t, so x reaches π/2, where M = cos²x
vanishes, at t = 1."""

SHRINK = """coordinates: [x, y]
kinetic: 1/2*(2 - t)*x_dot**2 + 1/2*y_dot**2
potential: 1/2*x**2 + 1/2*y**2
initial: {y: 1.0}
"""
"""M = diag(2 − t, 1) is singular at t = 2 and indefinite after; x stays 0, so the solver alone
integrated straight through (exit 0)."""


def test_a_mass_matrix_that_becomes_singular_stops_the_run_at_its_time() -> None:
    with pytest.raises(IntegrationError) as err:
        run_text(COS2, t_end=3.0)
    assert err.value.time == pytest.approx(1.0, abs=1e-6)
    assert "the mass matrix became singular (x = 1.5708" in str(err.value)
    assert "no inertia along x" in str(err.value)


def test_a_mass_matrix_that_turns_indefinite_is_not_integrated_through(tmp_path) -> None:
    path = tmp_path / "shrink.yaml"
    path.write_text(SHRINK)
    result = cli("simulate", str(path), "--t-end", "3")
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    time = float(re.match(r"lagsim: error: at t = (\S+): ", line).group(1))
    assert 2.0 <= time <= 3.0
    assert "the mass matrix became not positive definite" in line and "along x" in line


def test_a_huge_mass_is_not_singular(tmp_path) -> None:
    """m = 1e308 on a spring of stiffness m: x = cos t, h = m/2."""
    text = ("parameters: {m: 1e308}\ncoordinates: [x]\nkinetic: 1/2*m*x_dot**2\n"
            "potential: 1/2*m*x**2\ninitial: {x: 1.0}\n")
    path = tmp_path / "heavy.yaml"
    path.write_text(text)
    result = cli("simulate", str(path), "--t-end", "3", "--samples", "4")
    assert result.exit_code == 0, result.output
    data = np.array([[float(v) for v in r.split(",")] for r in result.stdout.split()[1:]])
    np.testing.assert_allclose(data[:, 1], np.cos(data[:, 0]), rtol=0, atol=1e-8)
    np.testing.assert_allclose(data[:, 3], 0.5e308, rtol=1e-8)


NAN = "coordinates: [x]\nkinetic: 1/2*x_dot**2\nforces: {x: sqrt(1 - t)}\n"
"""ẍ = √(1 − t) from rest: x = 2t/3 − 4/15·(1 − (1 − t)^{5/2}); the force is NaN after t = 1."""


def nan_exact(t: np.ndarray) -> np.ndarray:
    return 2 * t / 3 - 4 / 15 * (1 - (1 - t) ** 2.5)


@pytest.mark.parametrize("backend", ["c", "llvm"])
def test_a_nan_stops_the_run_with_one_message_naming_it(tmp_path, backend: str) -> None:
    import os
    import subprocess
    import sys

    path = tmp_path / "nan.yaml"
    path.write_text(NAN)
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONWARNINGS="default")
    if backend == "llvm":
        env["LAGSIM_NO_CC"] = "1"
    proc = subprocess.run([sys.executable, "-m", "lagsim", "simulate", str(path), "--t-end",
                           "3"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1
    (line,) = proc.stderr.splitlines()
    assert line.startswith("lagsim: error: at t = 1.0")
    assert "the generalized force on x became nan at x = 0.4, x_dot = 0.666667" in line


@pytest.mark.parametrize("method", ["DOP853", "RK45", "Radau"])
def test_a_start_whose_forces_are_nan_stops_at_once(tmp_path, method: str) -> None:
    """U = x**0.5 at x = -1: the force is NaN at the start, so scipy's first step would be NaN
    and its loop would never end (it hung, ignoring SIGTERM in the C stepper); now one message
    naming the force, exit 1. A subprocess with a timeout, since the failure mode is a hang."""
    import os
    import subprocess
    import sys

    path = tmp_path / "sqrt.yaml"
    path.write_text("coordinates: [x]\nkinetic: 1/2*x_dot**2\npotential: x**0.5\n"
                    "initial: {x: -1}\n")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    proc = subprocess.run([sys.executable, "-m", "lagsim", "simulate", str(path), "--method",
                           method], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    (line,) = proc.stderr.splitlines()
    assert line.startswith("lagsim: error: at t = 0.0: the generalized force on x became nan "
                           "at x = -1"), line


def test_an_overflow_is_named(tmp_path) -> None:
    """ẍ = exp(exp(t)) overflows at t = ln ln(max float) = 6.565 at the latest (the solver's
    trial stages overshoot first, so a rate may become infinite a little earlier)."""
    text = "coordinates: [x]\nkinetic: 1/2*x_dot**2\nforces: {x: exp(exp(t))}\n"
    with pytest.raises(IntegrationError) as err:
        run_text(text, t_end=8.0)
    assert 6.5 < err.value.time <= math.log(math.log(np.finfo(float).max))
    assert re.search(r": (x_dot|the generalized force on x) became -?inf", str(err.value))


def test_partial_keeps_the_rows_before_a_failure(tmp_path, monkeypatch) -> None:
    path = tmp_path / "nan.yaml"
    path.write_text(NAN)
    out = tmp_path / "run.csv"
    result = cli("simulate", str(path), "--t-end", "3", "--samples", "31", "-o", str(out),
                 "--partial")
    assert result.exit_code == 1
    kept = tmp_path / "run.partial.csv"
    assert not out.exists() and kept.exists()
    assert f"kept the 11 rows before the failure in {kept}" in result.output
    from lagsim.output.io import read_csv

    table = read_csv(kept)
    t = table.column("t")
    np.testing.assert_allclose(t[:10], np.arange(10) / 10, rtol=0, atol=1e-15)
    assert 1 - 1e-9 < t[-1] <= 1.0
    np.testing.assert_allclose(table.column("x"), nan_exact(t), rtol=0, atol=1e-9)
    chosen = tmp_path / "chosen.csv"
    result = cli("simulate", str(path), "--t-end", "3", "--partial", str(chosen))
    assert result.exit_code == 1 and chosen.exists()
    monkeypatch.chdir(tmp_path)
    result = cli("simulate", str(path), "--t-end", "3", "--partial")
    assert result.exit_code == 1 and result.stdout == ""
    assert 1 - 1e-9 < read_csv(tmp_path / "nan.partial.csv").column("t")[-1] <= 1.0


# --- the parts of a run (issue 8 §3) ----------------------------------------------------------


OSCILLATOR = "coordinates: [x]\nkinetic: 1/2*x_dot**2\npotential: 1/2*x**2\ninitial: {x: 1.0}\n"
"""ẍ = −x from x = 1 at rest: x = cos t."""


def test_a_problem_is_built_once_and_immutable() -> None:
    import dataclasses

    from lagsim.run.integrate import Problem

    spec, model = system(NATURAL, x=0.66, y=-0.88)
    options = SimulateOptions.resolve({}, {"t_start": 0.5})
    problem = Problem.build(spec, model, options)
    assert (problem.formulation, problem.stabilize, problem.t0) == ("index1", "projection", 0.5)
    np.testing.assert_allclose(problem.q0, [0.6, -0.8], rtol=0, atol=1e-14)
    assert problem.parameters == {"m": 1.0, "g": 9.81, "l": 1.0}
    assert problem.given == {"x", "y"}
    assert problem.sources.constraint("rod") == spec.constraints[0].location
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.t0 = 0.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        problem.q0[0] = 1.0


@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau", "BDF", "LSODA"])
def test_after_step_may_replace_the_state_with_every_method(method: str) -> None:
    """A formulation whose ``after_step`` hands back the state now and then (as a change of
    chart would): the solver takes it over (LSODA, whose state is in Fortran, restarts from it)
    and the run still follows x = cos t."""
    import dataclasses

    from lagsim.run.integrate import OdeFormulation, Problem, run

    class HandsBack(OdeFormulation):
        handed: list[float] = []

        def after_step(self, t: float, y: np.ndarray) -> np.ndarray | None:
            if t < 0.5 * (len(self.handed) + 1):
                return None
            self.handed.append(t)
            return y.copy()

    spec, model = system(OSCILLATOR)
    options = SimulateOptions.resolve({}, {"method": method, "t_end": 2.0, "samples": 5,
                                           "rtol": 1e-8, "atol": 1e-10})
    problem = Problem.build(spec, model, options)
    form = HandsBack(problem.numeric, problem.form.stabilizer, spec, model)
    traj = run(dataclasses.replace(problem, form=form))
    assert len(HandsBack.handed) >= 3
    np.testing.assert_allclose(traj.q[:, 0], np.cos(traj.t), rtol=0, atol=1e-5)
