"""Lagrange's recipe of minimal coordinates (seed 002_485a91571cac8ced.txt §23.5) against the
seed's own results: the constrained Lagrangians, the reduced equations and the tensions of §23.7,
§23.8 and §23.9, and the normal force of §23.6."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from lagsim.errors import InputError
from lagsim.numeric.reduction import compile_reduction
from lagsim.spec.system import load_spec, parse_spec
from lagsim.symbolic.model import build_model
from lagsim.symbolic.reduce import ReductionError, reduce_model

m, g, l, d, K, l0, m1, m2, l1, l2 = sp.symbols("m g l d K l0 m1 m2 l1 l2")
th, thd, thdd = sp.symbols("theta theta_dot theta_ddot")
t1, t2, t1d, t2d, t1dd, t2dd = sp.symbols(
    "theta1 theta2 theta1_dot theta2_dot theta1_ddot theta2_ddot")


def _reduce(name: str):
    spec = load_spec(name)
    return reduce_model(build_model(spec), dict(zip(spec.coordinates, spec.initial_state()[0])))


def _zero(expr) -> bool:
    return sp.simplify(sp.expand_trig(sp.expand(expr))) == 0


def test_simple_pendulum_tension_23_7():
    """§23.7: L̃ = ½mℓ²θ̇² + mgℓ cos θ, θ̈ + (g/ℓ) sin θ = 0, μ1 = −mℓθ̇² − mg cos θ."""
    red = _reduce("pendulum_constrained")
    assert red.free == ("theta",)
    assert dict(red.eliminated) == {"beta": 0, "z": 0}
    assert _zero(red.lagrangian - (m * l**2 * thd**2 / 2 + m * g * l * sp.cos(th)))
    (eq,) = red.equations
    assert _zero(eq - (m * l**2 * thdd + m * g * l * sp.sin(th)))
    lam = dict(red.multipliers)
    assert _zero(lam["lambda_string"] - (-m * l * thd**2 - m * g * sp.cos(th)))
    assert lam["lambda_plane"] == 0


def test_double_pendulum_tensions_23_8():
    """§23.8: the two reduced equations and μ1, μ2ℓ2 with θ̈ from the equations of motion."""
    red = _reduce("double_pendulum_constrained")
    assert red.free == ("theta1", "theta2")
    eq1, eq2 = red.equations
    c, s = sp.cos(t2 - t1), sp.sin(t2 - t1)
    seed1 = ((m1 + m2) * l1**2 * t1dd + m2 * l1 * l2 * (t2dd * c - t2d**2 * s)
             + (m1 + m2) * g * l1 * sp.sin(t1))
    seed2 = (m2 * l2**2 * t2dd + m2 * l1 * l2 * (t1dd * c + t1d**2 * s)
             + m2 * g * l2 * sp.sin(t2))
    assert _zero(eq1 - seed1)
    assert _zero(eq2 - seed2)
    lam = dict(red.multipliers)
    mu1 = (-(m1 + m2) * (l1 * t1d**2 + g * sp.cos(t1))
           + m2 * l2 * (t2dd * sp.sin(t1 - t2) - t2d**2 * sp.cos(t1 - t2)))
    mu2l2 = -m2 * (g * sp.cos(t2) + l2 * t2d**2 + l1 * t1dd * sp.sin(t1 - t2)
                   + l1 * t1d**2 * sp.cos(t1 - t2))
    rng = np.random.default_rng(3)
    params = {m1: 1.3, m2: 0.7, l1: 0.9, l2: 1.4, g: 9.81}
    for _ in range(5):
        point = dict(zip((t1, t2, t1d, t2d, t1dd, t2dd), rng.uniform(-2, 2, 6)))
        point.update(params)
        assert float(lam["lambda_string1"].subs(point)) == pytest.approx(
            float(mu1.subs(point)), abs=1e-10)
        assert float(lam["lambda_string2"].subs(point)) == pytest.approx(
            float(mu2l2.subs(point)), abs=1e-10)


def test_spring_pendulum_tension_23_9():
    """§23.9: T_s = mdθ̇² + mg cos θ − K(d√(2 − 2 sin θ) − ℓ0)√((1 − sin θ)/2) = −λ_string."""
    red = _reduce("spring_pendulum")
    lam = dict(red.multipliers)["lambda_string"]
    tension = (m * d * thd**2 + m * g * sp.cos(th)
               - K * (d * sp.sqrt(2 - 2 * sp.sin(th)) - l0) * sp.sqrt((1 - sp.sin(th)) / 2))
    for theta, rate in ((0.3, 0.5), (-1.0, 2.0), (2.5, -1.0)):
        point = {th: theta, thd: rate, m: 1.1, g: 9.81, d: 0.8, K: 20.0, l0: 0.5}
        assert float(-lam.subs(point)) == pytest.approx(float(tension.subs(point)), abs=1e-10)


def test_sho_normal_force_is_weight_23_6():
    """§23.6: on the table the normal force is μ2 = mg and the line force μ1 = 0."""
    spec = load_spec("sho_table")
    red = _reduce("sho_table")
    numeric = compile_reduction(red)
    qf, qfd = np.array([0.2]), np.array([0.3])
    qfdd = numeric.numeric.accelerations(0.0, qf, qfd)
    k, mass = spec.parameter_values["k"], spec.parameter_values["m"]
    assert qfdd[0] == pytest.approx(-k / mass * 0.2, rel=1e-12)
    q, qd, lam = numeric.to_full(0.0, qf, qfd, qfdd)
    names = [c.name for c in spec.constraints]
    weight = mass * spec.parameter_values["g"]
    assert lam[names.index("table")] == pytest.approx(weight, rel=1e-12)
    assert lam[names.index("line")] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(q, [0.2, 0.0, 0.0], atol=1e-15)


def test_branch_through_the_initial_state_is_kept():
    """x² + y² = ℓ² solved for y has two branches; the one through q0 (below the pivot) wins,
    and the reconstructed multiplier is the rod tension −2ℓλ = m v²/ℓ + m g cos θ."""
    text = """
parameters: {m: 1.0, g: 9.81, l: 2.0}
coordinates: [x, y]
masses: {bob: {mass: m, position: [x, y]}}
gravity: [0, -g]
constraints: [{name: rod, holonomic: x**2 + y**2 - l**2}]
initial: {x: 1.0, y: -1.7320508075688772}
"""
    spec = parse_spec(text)
    red = reduce_model(build_model(spec), dict(zip(spec.coordinates, spec.initial_state()[0])))
    ((name, expr),) = red.eliminated
    assert name == "y"
    assert float(sp.sympify(expr).subs({sp.Symbol("x"): 1.0, sp.Symbol("l"): 2.0})) < 0
    numeric = compile_reduction(red)
    qf, qfd = np.array([1.0]), np.array([0.5])
    q, qd, lam = numeric.to_full(0.0, qf, qfd, numeric.numeric.accelerations(0.0, qf, qfd))
    assert q[1] == pytest.approx(-np.sqrt(3.0), rel=1e-14)
    assert q @ qd == pytest.approx(0.0, abs=1e-14)
    speed2 = qd @ qd
    tension = speed2 / 2.0 + 9.81 * np.sqrt(3.0) / 2.0
    assert -2 * 2.0 * lam[0] == pytest.approx(tension, rel=1e-12)


def test_velocity_constraints_cannot_be_reduced():
    with pytest.raises(InputError, match="velocity constraint 'skate' cannot be eliminated"):
        reduce_model(build_model(load_spec("skate")))


def test_unconstrained_system_has_no_reduced_form():
    with pytest.raises(InputError, match="needs holonomic constraints"):
        reduce_model(build_model(load_spec("pendulum")))


def test_a_redundant_constraint_is_named_as_such():
    with pytest.raises(InputError, match="constraint 'rod_again' is redundant at the start: its "
                                         "row of the constraint Jacobian is a combination of "
                                         "those of rod"):
        _reduce("pendulum_redundant")


def test_rheonomic_constraint_reduces_through_the_initial_branch():
    """(x − A sin wt)² + y² = ℓ² solved for y keeps the branch below the pivot at t0; the reduced
    run follows index1's to 1e-7 at t = 10 (001 §10.7 with φ(q, t))."""
    from lagsim.run.integrate import SimulateOptions, simulate

    spec = load_spec("moving_pivot_pendulum")
    model = build_model(spec)
    runs = {}
    for formulation in ("reduced", "index1"):
        options = SimulateOptions.resolve(spec.simulate, {"formulation": formulation,
                                                          "samples": 3})
        runs[formulation] = simulate(spec, model, options)
    np.testing.assert_allclose(runs["reduced"].q[-1], runs["index1"].q[-1], atol=1e-7)
    np.testing.assert_allclose(runs["reduced"].lam[-1], runs["index1"].lam[-1], atol=1e-6)


BRANCH = """
parameters: {k: 1.0}
coordinates: [a, x]
kinetic: 1/2*a_dot**2 + 1/2*x_dot**2
potential: k*x + 1/2*a**2
constraints: [{name: c, holonomic: cos(x) - 0.5*sin(a) - 0.2}]
"""


def _branch_start(x_sign: float, turns: int = 0, a: float = 0.1, a_dot: float = 0.3):
    """A start on cos x = 0.5 sin a + 0.2 with x = ±acos(…) + 2π·turns and ẋ from φ̇ = 0."""
    x = x_sign * np.arccos(0.5 * np.sin(a) + 0.2) + 2 * np.pi * turns
    x_dot = -0.5 * np.cos(a) * a_dot / np.sin(x)
    return 0.0, np.array([a, x]), np.array([a_dot, x_dot])


@pytest.mark.parametrize(("sign", "turns"), [(-1.0, 0), (1.0, 0), (-1.0, 1), (1.0, -2)])
def test_branch_rebuilds_the_start(sign, turns):
    """Issue 16 §1: of x = ±acos(0.5 sin a + 0.2) + 2πk the branch kept rebuilds the start's x
    and ẋ from a, ȧ to 1e-12."""
    model = build_model(parse_spec(BRANCH))
    start = _branch_start(sign, turns)
    red = reduce_model(model, start=start, eliminate=[("c", "x")])
    numeric = compile_reduction(red)
    qf, qfd = start[1][:1], start[2][:1]
    q, qd, _ = numeric.to_full(0.0, qf, qfd, numeric.numeric.accelerations(0.0, qf, qfd))
    np.testing.assert_allclose(q, start[1], rtol=1e-13)
    np.testing.assert_allclose(qd, start[2], rtol=1e-13)


def test_a_start_off_every_branch_is_refused_with_advice():
    """A velocity that no branch rebuilds (ẋ off φ̇ = 0) is refused, naming the coordinate."""
    model = build_model(parse_spec(BRANCH))
    t, q, qd = _branch_start(-1.0)
    with pytest.raises(ReductionError, match="rebuilt from the free coordinates gives the "
                                             "velocity .* use index1"):
        reduce_model(model, start=(t, q, qd + np.array([0.0, 0.1])), eliminate=[("c", "x")])
    with pytest.raises(ReductionError, match="no branch of constraint 'c' solved for a "
                                             "coordinate passes through the start .* use index1"):
        reduce_model(model, start=(t, q + np.array([0.0, 0.05]), qd), eliminate=[("c", "x")])


def test_symbolic_reduction_has_a_cpu_budget():
    """Issue 16 §3: sympy.solve on this constraint runs for minutes; the budget stops it."""
    text = """
coordinates: [a1, y]
kinetic: 1/2*a1_dot**2 + 1/2*y_dot**2
constraints: [{name: c, holonomic: 0.766*sin(y) - 0.2297*sin(2*a1)*cos(y) + 1.159*y*cos(y/2)}]
"""
    with pytest.raises(ReductionError, match="did not finish within 0.5 s of CPU time"):
        reduce_model(build_model(parse_spec(text)), {"a1": 0.5, "y": 0.1}, budget=0.5)


@pytest.mark.parametrize("x0", [-1.3114618315090418, 1.3114618315090418, 7.6])
def test_derive_prints_the_branch_nearest_the_file(x0):
    """What ``derive --form reduced`` prints: of acos(…), 2π − acos(…) and their 2πk shifts, the
    branch nearest the file's x (issue 16 §1; it printed +acos for x0 < 0)."""
    model = build_model(parse_spec(BRANCH))
    red = reduce_model(model, {"a": 0.1, "x": x0})
    ((name, expr),) = red.eliminated
    value = float(sp.sympify(expr).subs({sp.Symbol("a"): 0.1}))
    assert name == "x"
    assert value == pytest.approx(x0, abs=0.01)


@pytest.mark.parametrize("name", ["a02_four_bar", "slider_crank", "pendulum_natural",
                                  "double_pendulum_constrained", "moving_pivot_pendulum"])
def test_derive_partition_is_the_one_a_run_starts_with(name):
    """``derive``'s partitioned reduced form (issue 16 §4) names the dependent coordinates that
    ``simulate --formulation reduced`` starts with: complete pivoting on φ_q at the start
    (Wehage–Haug), reduce.partition (NumPy only) against reduced.pivot_partition."""
    from lagsim.run.reduced import pivot_partition
    from lagsim.symbolic.reduce import _phi_q, partition

    spec = load_spec(name)
    model = build_model(spec)
    q0 = dict(zip(spec.coordinates, spec.initial_state()[0]))
    dependent, independent = partition(model, q0)
    want_dep, want_ind = pivot_partition(_phi_q(model, q0, 0.0))
    assert dependent == tuple(model.coordinates[i] for i in want_dep)
    assert independent == tuple(model.coordinates[i] for i in want_ind)
    assert len(dependent) == model.m
