"""`lagsim derive --form hamilton` (lagsim.symbolic.forms.hamilton; issue 10).

Checks: the pendulum's H = p²/(2ml²) − mgl cos θ (seed 001_80d65b968ce3cb18.txt Example 10.5
with p = ∂L/∂θ̇, §10.6); the printed H equals the `energy` column of a simulated double pendulum to
1e-12 (h = q̇·∂L/∂q̇ − L = H for L quadratic in q̇); the printed Hamilton's equations, integrated,
reproduce the Lagrangian run to 1e-10; a Lagrangian that is not quadratic in q̇ is refused.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy
from click.testing import CliRunner
from inline_systems import NATURAL_PENDULUM
from scipy.integrate import solve_ivp

from lagsim.cli import main
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.system import parse_spec
from lagsim.symbolic.forms import FORMS
from lagsim.symbolic.hamilton import numeric_hamiltonian
from lagsim.symbolic.model import build_model

ANGLES = """
name: dp_angles
parameters: {m1: 1.0, m2: 1.5, l1: 1.0, l2: 0.8, g: 9.81}
coordinates: [theta1, theta2]
masses:
  a: {mass: m1, position: [l1*sin(theta1), -l1*cos(theta1)]}
  b: {mass: m2, position: [l1*sin(theta1) + l2*sin(theta2), -l1*cos(theta1) - l2*cos(theta2)]}
gravity: [0, -g]
initial: {theta1: 1.2, theta2: -0.4, theta2_dot: 1.0}
"""

PENDULUM = """
name: pendulum
parameters: {m: 2.0, l: 0.5, g: 9.81}
coordinates: [theta]
kinetic: 1/2*m*l**2*theta_dot**2
potential: -m*g*l*cos(theta)
"""

RELATIVISTIC = """
name: relativistic
parameters: {m: 1.0, c: 3.0}
coordinates: [x]
lagrangian: -m*c**2*sqrt(1 - x_dot**2/c**2)
"""


def _run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def _system(text):
    spec = parse_spec(text, "inline.yaml", "inline")
    return spec, build_model(spec)


def test_pendulum_hamiltonian_from_json():
    result = _run("derive", "-", "--form", "hamilton", "--format", "json", input=PENDULUM)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    names = {n: sympy.Symbol(n) for n in doc["symbols"] + ["p_theta", "H"]}
    equations = [sympy.sympify(e.replace(" = ", "-(") + ")", locals=names)
                 for e in doc["equations"]]
    H = next(sympy.solve(e, names["H"])[0] for e in equations if e.has(names["H"]))
    m, l, g = 2.0, 0.5, 9.81
    p, theta = names["p_theta"], names["theta"]
    expected = p**2 / (2 * m * l**2) - m * g * l * sympy.cos(theta)
    assert sympy.simplify(H.subs({names["m"]: m, names["l"]: l, names["g"]: g}) - expected) == 0


def _printed(form, model):
    """The printed H, q̇(q, p) and ṗ(q, p) of the form as numeric functions."""
    subs = {sympy.Symbol(k): v for k, v in model.parameters.items()}
    q = [sympy.Symbol(c) for c in model.coordinates]
    p = [sympy.Symbol(f"p_{c}") for c in model.coordinates]
    rhs = {item.label: item.value.rhs.subs(subs) for item in form.items
           if isinstance(item.value, sympy.Eq)}
    H = sympy.lambdify([q, p], rhs["H"])
    qd = sympy.lambdify([q, p], [rhs[f"{c}_dot"] for c in model.coordinates])
    pd = sympy.lambdify([q, p], [rhs[f"p_{c}_dot"] for c in model.coordinates])
    return H, qd, pd


def test_printed_hamiltonian_equals_energy_and_its_equations_reproduce_the_run():
    spec, model = _system(ANGLES)
    options = SimulateOptions.resolve({}, {"t_end": "2", "rtol": "1e-13", "atol": "1e-13",
                                           "samples": "21"})
    run = simulate(spec, model, options)
    form = FORMS["hamilton"](model)
    H, qd, pd = _printed(form, model)
    numeric = numeric_hamiltonian(model)
    p_samples = np.array([numeric.momenta(t, q, v) for t, q, v in zip(run.t, run.q, run.qd)])
    for q, p, energy in zip(run.q, p_samples, run.energy):
        assert H(q, p) == pytest.approx(energy, rel=1e-12, abs=1e-12)
        assert numeric.hamiltonian(0.0, q, p) == pytest.approx(energy, rel=1e-12, abs=1e-12)
    y0 = np.concatenate([run.q[0], p_samples[0]])

    def printed_rhs(_t, y):
        return np.concatenate([qd(y[:2], y[2:]), pd(y[:2], y[2:])])

    for rhs in (printed_rhs, numeric.rhs):
        sol = solve_ivp(rhs, (0.0, 2.0), y0, method="DOP853", rtol=1e-13, atol=1e-13,
                        t_eval=run.t)
        assert sol.success
        assert np.max(np.abs(sol.y[:2].T - run.q)) < 1e-10
        assert np.max(np.abs(sol.y[2:].T - p_samples)) < 1e-10


def test_not_quadratic_is_refused():
    result = _run("derive", "-", "--form", "hamilton", input=RELATIVISTIC)
    assert result.exit_code == 2
    assert "L is not quadratic in the velocities" in result.output
    assert result.output.count("\n") == 1


def test_large_non_diagonal_mass_matrix_keeps_m_inverse_written_as_such():
    """A 4-link chain in angles: M is full, so M⁻¹ is not expanded; ṗ_i = ∂L/∂q_i (+ τ), printed
    with the angle sums combined (sin(θ1 − θ4)), hence compared with the sums expanded."""
    from lagsim.spec.chains import chain_yaml

    spec = parse_spec(chain_yaml(4), "chain.yaml", "chain")
    model = build_model(spec)
    form = FORMS["hamilton"](model)
    labels = [item.label for item in form.items]
    assert "M" in labels and "H" not in labels
    assert any("not written out" in note for note in form.notes)
    L = sympy.sympify(model.lagrangian)
    rates = {item.label: item.value.rhs for item in form.items
             if item.label.startswith("p_") and item.label.endswith("_dot")}
    assert len(rates) == 4
    for name in model.coordinates:
        assert sympy.expand(sympy.expand_trig(
            rates[f"p_{name}_dot"] - sympy.diff(L, sympy.Symbol(name)))) == 0


def test_latex_output():
    result = _run("derive", "-", "--form", "hamilton", "--format", "latex", input=PENDULUM)
    assert result.exit_code == 0
    assert r"\frac{\partial H}{\partial p}" in result.output
    assert "p_{theta}" in result.output or r"p_{\theta}" in result.output


def test_constraint_forces_act_on_the_momenta():
    """The pendulum in (x, y) with φ = x² + y² − l²: p = m q̇, H = (p_x² + p_y²)/2m + m g y, and
    ṗ_x = 2 x λ_rod, ṗ_y = −m g + 2 y λ_rod (Aᵀλ with A = φ_q, seed 001 §10.7)."""
    text = NATURAL_PENDULUM
    form = FORMS["hamilton"](_system(text)[1])
    eqs = {item.label: item.value.rhs for item in form.items if isinstance(item.value, sympy.Eq)}
    x, y, lam, m, g = sympy.symbols("x y lambda_rod m g")
    px, py = sympy.symbols("p_x p_y")
    assert sympy.simplify(eqs["H"] - ((px**2 + py**2) / (2 * m) + m * g * y)) == 0
    assert sympy.simplify(eqs["p_x_dot"] - 2 * x * lam) == 0
    assert sympy.simplify(eqs["p_y_dot"] - (-m * g + 2 * y * lam)) == 0


@pytest.mark.slow
def test_hamilton_form_past_an_exhausted_budget_is_the_same_hamiltonian() -> None:
    """With derive's budget used up (issue 16 §4) the form skips its tidying; every printed
    right-hand side (H, q̇, ṗ) still equals the tidied one at random states to 1e-12."""
    import random

    import sympy

    from lagsim.spec.system import load_spec
    from lagsim.symbolic import tidy
    from lagsim.symbolic.forms.hamilton import hamilton_form
    from lagsim.symbolic.model import build_model

    model = build_model(load_spec("double_pendulum"))
    tidied = hamilton_form(model)
    with tidy.budget(0.0):
        raw = hamilton_form(model)
    assert any("budget was used up" in u for u in raw.untidied)
    rng = random.Random(3)
    for a, b in zip(tidied.items, raw.items, strict=True):
        if not isinstance(a.value, sympy.Eq):
            continue
        free = sorted(a.value.rhs.free_symbols | b.value.rhs.free_symbols, key=str)
        for _ in range(3):
            point = {s: rng.uniform(0.5, 1.5) for s in free}
            x, y = float(a.value.rhs.subs(point)), float(b.value.rhs.subs(point))
            assert abs(x - y) <= 1e-12 * max(1.0, abs(x)), a.name


def test_a_long_inverse_prints_m_qdot_equal_p_minus_b_equal_to_the_model() -> None:
    """Issue 8's messy3 (three coordinates, M full): M⁻¹(p − b) would reach 1773 operations, so
    the form prints M, b, L₀, M q̇ = p − b and ṗ = ∂L/∂q + τ + Aᵀλ (issue 16 §4: it took 1.7 s
    to write out and tidy); each equals the untidied model at random states to 1e-12, with
    ∂L/∂q differentiated here by SymPy and p = M q̇ + b."""
    from pathlib import Path

    from lagsim.spec.system import load_spec
    from lagsim.symbolic import tidy
    from lagsim.symbolic.model import tidy_model, to_sympy

    raw = build_model(load_spec(Path(__file__).resolve().parents[1] / "bench"
                                / "derive_messy3.yaml"))
    with tidy.budget(tidy.DEFAULT_SECONDS):
        form = FORMS["hamilton"](tidy_model(raw))
    assert any("1773 operations (more than 300)" in note for note in form.notes)
    items = {item.label: item.value for item in form.items}
    assert "H" not in items and {"M", "b", "L0", "q̇"} <= set(items)
    L = to_sympy(raw.lagrangian)
    q = [sympy.Symbol(c) for c in raw.coordinates]
    qd = [sympy.Symbol(str(v)) for v in raw.qd]
    lam = [sympy.Symbol(c.multiplier) for c in raw.constraints]
    A, tau = to_sympy(raw.A), to_sympy(raw.tau)
    M_ref = sympy.Matrix([[sympy.diff(L, a, b) for b in qd] for a in qd])
    b_ref = sympy.Matrix([sympy.diff(L, v) for v in qd]) - M_ref * sympy.Matrix(qd)
    rng = np.random.default_rng(16)
    for _ in range(3):
        point = {s: float(v) for s, v in zip(
            [*q, *qd, *lam, *(sympy.Symbol(k) for k in raw.parameters)],
            rng.uniform(0.2, 1.4, 2 * raw.n + raw.m + len(raw.parameters)))}
        M = np.array(M_ref.evalf(subs=point), dtype=float)
        b = np.array(b_ref.evalf(subs=point), dtype=float).ravel()
        p = M @ np.array([point[v] for v in qd]) + b
        point.update({sympy.Symbol(f"p_{c}"): float(x) for c, x in zip(raw.coordinates, p)})
        np.testing.assert_allclose(np.array(items["M"].evalf(subs=point), dtype=float), M,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.array(items["b"].evalf(subs=point), dtype=float).ravel(),
                                   b, rtol=1e-12, atol=1e-12)
        velocity = items["q̇"]
        gap = np.array((velocity.lhs.doit() - velocity.rhs).evalf(subs=point), dtype=float)
        np.testing.assert_allclose(gap, 0.0, atol=1e-12 * max(1.0, np.abs(p).max()))
        for i, c in enumerate(raw.coordinates):
            want = (sympy.diff(L, q[i]) + tau[i]
                    + sum(A[k, i] * lam[k] for k in range(raw.m))).evalf(subs=point)
            got = items[f"p_{c}_dot"].rhs.evalf(subs=point)
            assert abs(float(got) - float(want)) <= 1e-12 * max(1.0, abs(float(want)))


def test_one_notation_and_no_common_factor_left_in_the_double_pendulum():
    """Issue 30: the headings said ``dp_theta1/dt`` over ``pdot_θ1 = ...``, and ṗ carried
    l1²l2²m2² over l1⁴l2⁴m2². Each label is the name its equation defines (shown by the one
    names rule: ṗ_θ1 is p_theta1_dot), and no fraction keeps a power of a parameter in both its
    numerator and its denominator."""
    import lagsim

    form = lagsim.load("double_pendulum").derive("hamilton", format=None)
    labels = [item.label for item in form.items]
    assert labels == ["p_theta1", "p_theta2", "H", "theta1_dot", "theta2_dot",
                      "p_theta1_dot", "p_theta2_dot"]
    for item in form.items:
        assert str(item.value.lhs) == item.label
    parameters = set(sympy.symbols("m1 m2 l1 l2 g"))
    for item in form.items[2:]:
        for term in sympy.Add.make_args(item.value.rhs):
            num, den = sympy.fraction(term)
            bases = [{f.as_base_exp()[0] for f in sympy.Mul.make_args(side)} & parameters
                     for side in (num, den)]
            assert not (bases[0] & bases[1]), (item.label, term)
    text = lagsim.load("double_pendulum").derive("hamilton")
    assert "ṗ_θ1:\nṗ_θ1 = " in text and "dp_" not in text and "pdot" not in text
    assert "l1⁴" not in text


def test_a_common_denominator_factor_comes_out_of_a_sum():
    """Issue 30: pendulum_natural's rod multiplier printed 2(x²/m + y²/m) below the line; the
    factor 1/m common to both terms comes out as the common m of m x² + m y² does, and λ_rod of
    the index-1 form is m(g y − ẋ² − ẏ²)/(2(x² + y²)) (seed 001 §10.7's pendulum)."""
    import lagsim
    from lagsim.symbolic.tidy import common_factor

    x, y, m, g = sympy.symbols("x y m g")
    assert str(common_factor(x**2 / m + y**2 / m)) == "(x**2 + y**2)/m"
    assert str(common_factor(x**2 / m + y**2 / m**2)) == "(x**2 + y**2/m)/m"
    assert common_factor(x**2 / m + y**2 * m) == x**2 / m + y**2 * m
    form = lagsim.load("pendulum_natural").derive("index1", format=None)
    (rod,) = [item.value for item in form.items if item.label == "lambda_rod"]
    xd, yd = sympy.symbols("x_dot y_dot")
    num, den = sympy.fraction(rod.rhs)
    assert sympy.expand(den) == sympy.expand(2 * (x**2 + y**2))
    assert sympy.expand(num - m * (g * y - xd**2 - yd**2)) == 0
