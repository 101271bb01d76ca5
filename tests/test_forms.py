"""The equation forms of `lagsim derive` (lagsim.symbolic.forms) against hand derivations from the
seeds.

Seeds: 001_80d65b968ce3cb18.txt (Ex. 10.4/10.5, eqs 10.12–10.14, §10.7), 002_485a91571cac8ced.txt
(§23.5–23.7), 003_88d23709419132a0.txt (flat pendulum, augmented matrix), 004_2a8ddee2a66c9af0.txt
(Udwadia–Kalaba, Remarks). Expected values are written out by hand here, never taken from lagsim.
Sign convention (docs/architecture.md): M q̈ = F + Aᵀλ with A = φ_q, so the augmented matrix is
[[M, −Aᵀ], [A, 0]]; seed 003 uses L − zᵀc, i.e. z = −λ, and prints +Aᵀ.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy
from inline_systems import CONSTRAINED, FLAT, SINGULAR, SKATE
from sympy import Symbol, cos, sin

from lagsim.errors import InputError
from lagsim.spec.system import load_spec, parse_spec
from lagsim.symbolic.forms import FORMS, Form, Item
from lagsim.symbolic.model import build_model, tidy_model, to_sympy

S = Symbol
m, g, r, l, k = S("m"), S("g"), S("r"), S("l"), S("k")
theta, theta_dot, theta_ddot = S("theta"), S("theta_dot"), S("theta_ddot")
x, y, xd, yd, xdd, ydd = S("x"), S("y"), S("x_dot"), S("y_dot"), S("x_ddot"), S("y_ddot")

PENDULUM = """
parameters: {m: 1.0, g: 9.81, r: 1.0}
coordinates: [theta]
kinetic: 1/2*m*r**2*theta_dot**2
potential: -m*g*r*cos(theta)
"""

POLAR = """
description: free mass in polar coordinates, x = rho cos(phi), y = rho sin(phi), gravity -y
parameters: {m: 1.0, g: 9.81}
coordinates: [rho, phi]
kinetic: 1/2*m*(rho_dot**2 + rho**2*phi_dot**2)
potential: m*g*rho*sin(phi)
"""


NATURAL = """
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
potential: m*g*y
constraints:
  - name: rod
    holonomic: x**2 + y**2 - l**2
"""

DOUBLE = """
parameters: {m1: 1.0, m2: 1.0, l1: 1.0, l2: 1.0, g: 9.81, c: 0.1, A: 0.5, w: 2.0}
coordinates: [theta1, theta2]
masses:
  a: {mass: m1, position: [l1*sin(theta1), -l1*cos(theta1)]}
  b: {mass: m2, position: [l1*sin(theta1) + l2*sin(theta2), -l1*cos(theta1) - l2*cos(theta2)]}
gravity: [0, -g]
forces:
  theta1: -c*theta1_dot + A*cos(w*t)
"""


def model_of(text: str):
    return build_model(parse_spec(text, "<test>", "system"))


def form_of(text: str, name: str, simplify: bool = False) -> Form:
    return FORMS[name](model_of(text), simplify)


def item(form: Form, label: str) -> Item:
    matches = [i for i in form.items if i.label == label]
    assert len(matches) == 1, [i.label for i in form.items]
    return matches[0]


def residual(eq: sympy.Eq) -> sympy.Expr:
    return eq.lhs - eq.rhs


def is_zero(expr: sympy.Expr) -> bool:
    return sympy.simplify(sympy.expand(expr)) == 0


def numerically_equal(a: sympy.Expr, b: sympy.Expr, trials: int = 5, tol: float = 1e-12) -> bool:
    """a = b at random points in (0.2, 1.4) for every free symbol, to tol relative."""
    rng = random.Random(7)
    a, b = sympy.sympify(a), sympy.sympify(b)
    names = sorted(a.free_symbols | b.free_symbols, key=str)
    for _ in range(trials):
        point = {s: rng.uniform(0.2, 1.4) for s in names}
        va, vb = complex(a.evalf(subs=point)), complex(b.evalf(subs=point))
        if abs(va - vb) > tol * max(1.0, abs(va), abs(vb)):
            return False
    return True


def _cites_a_reference(citation: str) -> bool:
    """The citation opens with [short name …] of a row of docs/references.md (issue 14: no seed
    file names in what users see)."""
    table = (Path(__file__).resolve().parents[1] / "docs" / "references.md").read_text()
    shorts = {line.split("|")[1].strip() for line in table.splitlines()
              if line.startswith("| ") and not line.startswith("| short")}
    return (citation.startswith("[") and ".txt" not in citation
            and any(citation[1:].startswith(s) for s in shorts))


def test_registry_names_and_signature() -> None:
    assert list(FORMS) == ["lagrange", "matrix", "dae", "index1", "udwadia-kalaba", "reduced",
                           "linear", "hamilton"]
    model = model_of(PENDULUM)
    for name in ["lagrange", "matrix", "dae", "index1", "udwadia-kalaba"]:
        form = FORMS[name](model, False)
        assert form.name == name and form.formula and _cites_a_reference(form.citation)
        assert all(isinstance(i.value, sympy.Basic) for i in form.items)


def test_lagrange_pendulum_001_example_10_5() -> None:
    """001 Ex. 10.5: m r² θ̈ + m g r sin θ = 0."""
    form = form_of(PENDULUM, "lagrange")
    eq = item(form, "theta").value
    assert is_zero(residual(eq) - (m * r**2 * theta_ddot + m * g * r * sin(theta)))
    assert eq.rhs == 0
    assert form.equations == (eq,)


def test_lagrange_polar_keeps_the_centrifugal_term() -> None:
    """001 Ex. 10.4 from the stated T and U: the radial equation has −m ρ φ̇² (10.8 drops it)."""
    rho, phi = S("rho"), S("phi")
    rd, pd, rdd, pdd = S("rho_dot"), S("phi_dot"), S("rho_ddot"), S("phi_ddot")
    form = form_of(POLAR, "lagrange")
    radial = residual(item(form, "rho").value)
    angular = residual(item(form, "phi").value)
    assert is_zero(radial - (m * rdd - m * rho * pd**2 + m * g * sin(phi)))
    assert is_zero(angular - (m * rho**2 * pdd + 2 * m * rho * rd * pd + m * g * rho * cos(phi)))
    assert sympy.expand(radial).coeff(pd, 2) == -m * rho


def test_lagrange_with_constraint_natural_pendulum_001_10_7() -> None:
    """001 §10.7: m q̈ + m g e₂ = 2 q λ and φ = q·q − r² = 0."""
    lam = S("lambda_rod")
    form = form_of(NATURAL, "lagrange")
    assert is_zero(residual(item(form, "x").value) - (m * xdd - 2 * x * lam))
    assert is_zero(residual(item(form, "y").value) - (m * ydd + m * g - 2 * y * lam))
    assert is_zero(residual(item(form, "rod").value) - (x**2 + y**2 - l**2))
    assert len(form.equations) == 3


def test_lagrange_velocity_constraint_row_enters_like_phi_q() -> None:
    """Skate: m ẍ = λ sin ψ, m ÿ = −λ cos ψ, J ψ̈ = 0, ẋ sin ψ − ẏ cos ψ = 0."""
    lam, psi, J = S("lambda_skate"), S("psi"), S("J")
    form = form_of(SKATE, "lagrange")
    assert is_zero(residual(item(form, "x").value) - (m * xdd - lam * sin(psi)))
    assert is_zero(residual(item(form, "y").value) - (m * ydd + lam * cos(psi)))
    assert is_zero(residual(item(form, "psi").value) - J * S("psi_ddot"))
    assert is_zero(residual(item(form, "skate").value) - (xd * sin(psi) - yd * cos(psi)))


def test_matrix_form_pendulum() -> None:
    form = form_of(PENDULUM, "matrix")
    assert item(form, "M(q)").value == sympy.Matrix([[m * r**2]])
    assert item(form, "C(q, q̇)").value == sympy.Matrix([[0]])
    assert is_zero(item(form, "g(q)").value[0] - m * g * r * sin(theta))
    assert all(i.label != "r(q, q̇, t)" for i in form.items)


def test_matrix_form_polar_coriolis_christoffel_and_from_h_ijk() -> None:
    """M = diag(m, m ρ²), by hand: the Christoffel C = [[0, −m ρ φ̇], [m ρ φ̇, m ρ ρ̇]] (printed,
    Spong–Hutchinson–Vidyasagar §7.3), the seed's h_ijk C = [[0, −m ρ φ̇], [0, 2 m ρ ρ̇]] (001
    10.13, coriolis="seed"); both give the same C q̇."""
    rho, rd, pd = S("rho"), S("rho_dot"), S("phi_dot")
    form = form_of(POLAR, "matrix")
    C = item(form, "C(q, q̇)").value
    expected = sympy.Matrix([[0, -m * rho * pd], [m * rho * pd, m * rho * rd]])
    assert (sympy.Matrix(C) - expected).applyfunc(sympy.expand) == sympy.zeros(2, 2)
    assert form.notes[0].startswith("C(q, q̇) is the Christoffel form")
    seed = FORMS["matrix"](model_of(POLAR), False, coriolis="seed")
    expected = sympy.Matrix([[0, -m * rho * pd], [0, 2 * m * rho * rd]])
    assert (sympy.Matrix(item(seed, "C(q, q̇)").value) - expected).applyfunc(
        sympy.expand) == sympy.zeros(2, 2)
    assert seed.notes[0].startswith("C(q, q̇) is the factorization of [DAE eqs 10.13–10.14]")
    Cqd = item(form, "C(q, q̇) q̇").value
    assert is_zero(Cqd[0] + m * rho * pd**2) and is_zero(Cqd[1] - 2 * m * rho * rd * pd)


def test_matrix_form_double_pendulum_against_textbook() -> None:
    """Double pendulum: M, g and the Coriolis vector (Cq̇)₁ = m₂l₁l₂ sin(θ₁−θ₂) θ̇₂²,
    (Cq̇)₂ = −m₂l₁l₂ sin(θ₁−θ₂) θ̇₁², and the Christoffel C worked by hand: only
    Γ₁₂₂ = cs and Γ₂₁₁ = −cs are nonzero, so C = [[0, cs θ̇₂], [−cs θ̇₁, 0]], cs = m₂l₁l₂ sin(θ₁−θ₂).
    """
    m1, m2, l1, l2 = S("m1"), S("m2"), S("l1"), S("l2")
    t1, t2, d1, d2 = S("theta1"), S("theta2"), S("theta1_dot"), S("theta2_dot")
    form = form_of(DOUBLE, "matrix")
    M = item(form, "M(q)").value
    M_expected = sympy.Matrix([[(m1 + m2) * l1**2, m2 * l1 * l2 * cos(t1 - t2)],
                               [m2 * l1 * l2 * cos(t1 - t2), m2 * l2**2]])
    assert all(is_zero(a - b) for a, b in zip(M, M_expected))
    cs = m2 * l1 * l2 * sin(t1 - t2)
    C_expected = sympy.Matrix([[0, cs * d2], [-cs * d1, 0]])
    assert all(is_zero(a - b) for a, b in zip(item(form, "C(q, q̇)").value, C_expected))
    Cqd = item(form, "C(q, q̇) q̇").value
    assert is_zero(Cqd[0] - cs * d2**2) and is_zero(Cqd[1] + cs * d1**2)
    gv = item(form, "g(q)").value
    assert is_zero(gv[0] - (m1 + m2) * g * l1 * sin(t1)) and is_zero(gv[1] - m2 * g * l2 * sin(t2))
    tau = item(form, "τ").value
    assert is_zero(tau[0] - (-S("c") * d1 + S("A") * cos(S("w") * S("t")))) and tau[1] == 0


@pytest.mark.parametrize("text", [PENDULUM, POLAR, DOUBLE, NATURAL])
def test_matrix_identity_equals_euler_lagrange(text: str) -> None:
    """Σ_j M_ij q̈_j + Σ_j C_ij q̇_j + g_i − τ_i − (Aᵀλ)_i, built here from the printed M, C, g, τ,
    equals d/dt ∂L/∂q̇_i − ∂L/∂q_i − τ_i − (Aᵀλ)_i of the lagrange form (001 Thm 10.2, 10.14)."""
    model = model_of(text)
    lagrange, matrix = FORMS["lagrange"](model, False), FORMS["matrix"](model, False)
    M, C = item(matrix, "M(q)").value, item(matrix, "C(q, q̇)").value
    gv, tau = item(matrix, "g(q)").value, item(matrix, "τ").value
    qd = [S(f"{c}_dot") for c in model.coordinates]
    qdd = [S(f"{c}_ddot") for c in model.coordinates]
    A = sympy.Matrix([[sympy.sympify(str(a)) for a in c.row] for c in model.constraints])
    lam = [S(c.multiplier) for c in model.constraints]
    for i, name in enumerate(model.coordinates):
        row = sum(M[i, j] * qdd[j] + C[i, j] * qd[j] for j in range(model.n)) + gv[i] - tau[i]
        row -= sum((A[k, i] * lam[k] for k in range(model.m)), sympy.Integer(0))
        assert is_zero(sympy.expand_trig(row - residual(item(lagrange, name).value)))
        assert is_zero(sympy.expand_trig(residual(item(matrix, name).value)
                                         - residual(item(lagrange, name).value)))


def test_matrix_remainder_gyroscopic() -> None:
    """L = ½m(ẋ²+ẏ²) + ½B(xẏ − yẋ): m ẍ − B ẏ = 0, m ÿ + B ẋ = 0, so r = (−Bẏ, Bẋ), C = g = 0."""
    text = """
parameters: {m: 1.0, B: 0.5}
coordinates: [x, y]
lagrangian: 1/2*m*(x_dot**2 + y_dot**2) + 1/2*B*(x*y_dot - y*x_dot)
"""
    B = S("B")
    form = form_of(text, "matrix")
    rem = item(form, "r(q, q̇, t)").value
    assert is_zero(rem[0] + B * yd) and is_zero(rem[1] - B * xd)
    assert item(form, "C(q, q̇)").value == sympy.zeros(2, 2)
    assert is_zero(residual(item(form, "x").value) - (m * xdd - B * yd))
    assert "r(q, q̇, t)" in form.formula


def test_matrix_remainder_time_dependent_mass() -> None:
    """L = ½ m e^{ct} ẋ² − ½ k x²: d/dt(m e^{ct} ẋ) + k x = 0, so r = c m e^{ct} ẋ."""
    text = """
parameters: {m: 1.0, c: 0.2, k: 2.0}
coordinates: [x]
lagrangian: 1/2*m*exp(c*t)*x_dot**2 - 1/2*k*x**2
"""
    c, t = S("c"), S("t")
    form = form_of(text, "matrix")
    assert is_zero(item(form, "r(q, q̇, t)").value[0] - c * m * sympy.exp(c * t) * xd)
    assert is_zero(residual(item(form, "x").value)
                   - (m * sympy.exp(c * t) * xdd + c * m * sympy.exp(c * t) * xd + k * x))


def test_dae_natural_pendulum() -> None:
    """001 §10.7 explicitly: m x'' = 2xλ, m y'' = 2yλ − mg, x² + y² = r²."""
    lam = S("lambda_rod")
    form = form_of(NATURAL, "dae")
    assert is_zero(residual(item(form, "x").value) - (m * xdd - 2 * x * lam))
    assert is_zero(residual(item(form, "y").value) - (m * ydd + m * g - 2 * y * lam))
    assert item(form, "x").value.rhs == 2 * x * lam
    assert is_zero(residual(item(form, "rod").value) - (x**2 + y**2 - l**2))


def test_index1_flat_pendulum_seed_003() -> None:
    """003: K = [[m,0,x],[0,m,y],[x,y,0]] for (ẍ, ÿ, z) with z = −λ; ours has −Aᵀ for λ."""
    form = form_of(FLAT, "index1")
    K = item(form, "K").value
    seed = sympy.Matrix([[m, 0, x], [0, m, y], [x, y, 0]])
    assert K == sympy.Matrix([[m, 0, -x], [0, m, -y], [x, y, 0]])
    assert K * sympy.diag(1, 1, -1) == seed
    assert item(form, "right-hand side").value == sympy.Matrix([0, 0, -xd**2 - yd**2])
    assert list(item(form, "unknowns").value) == [xdd, ydd, S("lambda_rod")]


def test_index1_flat_pendulum_closed_form_seed_003() -> None:
    """003: [ẍ; ÿ; z] = 1/(m(x²+y²)) [[y²,−xy,mx],[−xy,x²,my],[mx,my,−m²]] [0; 0; −v²]."""
    form = form_of(FLAT, "index1")
    v2 = xd**2 + yd**2
    seed = sympy.Matrix([[y**2, -x * y, m * x], [-x * y, x**2, m * y], [m * x, m * y, -m**2]])
    xdd_s, ydd_s, z_s = seed * sympy.Matrix([0, 0, -v2]) / (m * (x**2 + y**2))
    assert is_zero(item(form, "x_ddot").value.rhs - xdd_s)
    assert is_zero(item(form, "y_ddot").value.rhs - ydd_s)
    assert is_zero(item(form, "lambda_rod").value.rhs + z_s)


def test_index1_skate_multiplier() -> None:
    """Skate: A = [sin ψ, −cos ψ, 0], b = −ψ̇(ẋ cos ψ + ẏ sin ψ), λ = m b."""
    psi, pd = S("psi"), S("psi_dot")
    form = form_of(SKATE, "index1")
    b = -pd * (xd * cos(psi) + yd * sin(psi))
    assert is_zero(item(form, "right-hand side").value[3] - b)
    assert is_zero(item(form, "lambda_skate").value.rhs - m * b)
    assert is_zero(item(form, "psi_ddot").value.rhs)


def test_udwadia_kalaba_natural_pendulum_seed_004() -> None:
    """004 Remarks: M = mI, a = (0, −g), x² + y² = ℓ²; on x = ℓ sin θ, y = −ℓ cos θ the
    tangential part is θ̈ = −(g/ℓ) sin θ, the radial part ℓθ̇², and Q_c the rod tension
    m(ℓθ̇² + g cos θ) pulling toward the pivot."""
    form = form_of(NATURAL, "udwadia-kalaba")
    a = item(form, "a").value
    assert list(a.rhs) == [0, -g]
    on_circle = {x: l * sin(theta), y: -l * cos(theta),
                 xd: l * cos(theta) * theta_dot, yd: l * sin(theta) * theta_dot}
    ax = item(form, "x_ddot").value.rhs.subs(on_circle)
    ay = item(form, "y_ddot").value.rhs.subs(on_circle)
    assert is_zero((ax * cos(theta) + ay * sin(theta)) / l + g / l * sin(theta))
    assert is_zero(-ax * sin(theta) + ay * cos(theta) - l * theta_dot**2)
    Qc = item(form, "Q_c").value.subs(on_circle)
    tension = m * (l * theta_dot**2 + g * cos(theta))
    assert is_zero(Qc[0] + tension * sin(theta)) and is_zero(Qc[1] - tension * cos(theta))
    assert any("full row rank" in n for n in form.notes)


def test_udwadia_kalaba_redundant_constraint_uses_pseudo_inverse() -> None:
    """004: dependent rows (φ and 2φ) give the same motion as φ alone."""
    redundant = NATURAL + "  - name: twice\n    holonomic: 2*(x**2 + y**2 - l**2)\n"
    single = form_of(NATURAL, "udwadia-kalaba")
    double = form_of(redundant, "udwadia-kalaba")
    for label in ("x_ddot", "y_ddot"):
        assert is_zero(item(single, label).value.rhs - item(double, label).value.rhs)
    assert any("rank-deficient" in n for n in double.notes)


def test_udwadia_kalaba_equals_index1_closed_form() -> None:
    """For a full-row-rank A both routes solve the same linear problem."""
    for text in (FLAT, SKATE):
        uk, ix = form_of(text, "udwadia-kalaba"), form_of(text, "index1")
        for label in [i.label for i in uk.items if i.label.endswith("_ddot")]:
            assert is_zero(sympy.expand_trig(item(uk, label).value.rhs - item(ix, label).value.rhs))


def test_udwadia_kalaba_large_system_prints_pieces() -> None:
    """n > 3: no closed form, the pieces a (as M a = F), A and b are printed."""
    text = """
parameters: {m: 1.0}
coordinates: [x1, x2, x3, x4]
kinetic: 1/2*m*(x1_dot**2 + x2_dot**2 + x3_dot**2 + x4_dot**2) + 1/2*m*x1_dot*x2_dot
constraints:
  - x1 + x2 + x3 + x4
"""
    form = form_of(text, "udwadia-kalaba")
    assert [i.label for i in form.items] == ["a", "A", "b"]
    assert item(form, "A").value == sympy.Matrix([[1, 1, 1, 1]])
    assert any("n = 4 > 3" in n for n in form.notes)


def test_singular_mass_matrix_warns_naming_the_coordinate() -> None:
    text = SINGULAR
    for name in ("lagrange", "matrix", "dae", "index1", "udwadia-kalaba"):
        form = form_of(text, name)
        assert len(form.warnings) == 1 and "velocity of z" in form.warnings[0]
    assert form_of(PENDULUM, "lagrange").warnings == ()


def test_default_and_simplify_tidy_without_changing_values() -> None:
    """T from a mass position gives m l²(sin² + cos²) in the raw model; the default tidying
    (issue 14) and --simplify both print m l², equal to the raw entry at random points."""
    text = """
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [theta]
masses:
  bob: {mass: m, position: [l*sin(theta), -l*cos(theta)]}
gravity: [0, -g]
"""
    raw = to_sympy(model_of(text).mass_matrix)[0]
    default = item(form_of(text, "matrix"), "M(q)").value[0]
    deep = item(form_of(text, "matrix", simplify=True), "M(q)").value[0]
    assert default == deep == m * l**2
    assert raw != default and numerically_equal(raw, default)


def test_reduced_pendulum_constrained_coordinates_002_23_7() -> None:
    """002 §23.7: L̃ = ½mℓ²θ̇² + mgℓ cos θ, θ̈ + (g/ℓ) sin θ = 0, μ₁ = λ_string = −mℓθ̇² − mg cos θ,
    λ_plane = 0."""
    form = form_of(CONSTRAINED, "reduced")
    assert is_zero(item(form, "L̃").value - (m * l**2 * theta_dot**2 / 2 + m * g * l * cos(theta)))
    eq = residual(item(form, "theta").value)
    assert is_zero(eq / (m * l**2) - (theta_ddot + g / l * sin(theta)))
    assert is_zero(item(form, "lambda_string").value.rhs
                   - (-m * l * theta_dot**2 - m * g * cos(theta)))
    assert is_zero(item(form, "lambda_plane").value.rhs)
    assert item(form, "eliminated beta").value.rhs == 0


def test_reduced_sho_on_table_normal_force_002_23_6() -> None:
    """002 §23.6: m ẍ + k x = 0 and the table's normal force μ₂ = m g."""
    text = """
parameters: {m: 1.0, g: 9.81, k: 4.0}
coordinates: [x, y, z]
kinetic: 1/2*m*(x_dot**2 + y_dot**2 + z_dot**2)
potential: 1/2*k*x**2 + m*g*z
constraints:
  - name: line
    holonomic: y
  - name: table
    holonomic: z
"""
    form = form_of(text, "reduced")
    assert is_zero(residual(item(form, "x").value) - (m * xdd + k * x))
    assert is_zero(item(form, "lambda_table").value.rhs - m * g)
    assert is_zero(item(form, "lambda_line").value.rhs)


def test_reduced_refuses_velocity_constraints() -> None:
    with pytest.raises(InputError, match="velocity constraint 'skate'"):
        form_of(SKATE, "reduced")


# --- budgets (issue 8 §5, issue 16 §4): what is printed equals the untidied model -------------

BENCH = Path(__file__).resolve().parents[1] / "bench"
BUDGET_SYSTEMS = {
    "messy3": BENCH / "derive_messy3.yaml", "uk2": BENCH / "derive_uk2.yaml",
    "pendulum": "pendulum", "double_pendulum": "double_pendulum_constrained",
    "spring_pendulum": "spring_pendulum", "flat_pendulum": "flat_pendulum",
    "slider_crank": "slider_crank", "skate": "skate",
}
DPS = 30


def _evaluator(expr: sympy.Basic, names: list[Symbol]):
    return sympy.lambdify(names, expr, "mpmath")


def _random_point(model, rng: random.Random) -> dict[Symbol, object]:
    """Random q, q̇, q̈, λ, t and parameter values in (0.2, 1.4)."""
    names = [*model.coordinates, *(str(v) for v in model.qd), *(str(a) for a in model.qdd),
             *model.parameters, *(c.multiplier for c in model.constraints), "t"]
    return {S(n): mpmath.mpf(rng.uniform(0.2, 1.4)) for n in names}


def _num(expr: sympy.Basic, point: dict) -> object:
    names = sorted(sympy.sympify(expr).free_symbols, key=str)
    return _evaluator(expr, names)(*(point[s] for s in names))


def _agree(got, want, what: str) -> None:
    """got = want to 1e-12 relative (to max(1, |got|, |want|))."""
    assert abs(got - want) <= 1e-12 * max(1, abs(got), abs(want)), f"{what}: {got} != {want}"


def _reference(raw, point: dict) -> dict:
    """M, F, A, b of the untidied model at the point, q̈ and λ of index1 and q̈ of seed 004's
    formula for full-row-rank A, all in 30-digit arithmetic."""
    M = mpmath.matrix(_num(to_sympy(raw.mass_matrix), point).tolist())
    F = mpmath.matrix(_num(to_sympy(raw.forcing), point).tolist())
    ref = {"M": M, "F": F, "a": mpmath.lu_solve(M, F)}
    ref["uk"] = ref["a"]
    if raw.m:
        A = mpmath.matrix(_num(to_sympy(raw.A), point).tolist())
        b = mpmath.matrix(_num(to_sympy(raw.b), point).tolist())
        n, m = raw.n, raw.m
        K = mpmath.zeros(n + m, n + m)
        for i in range(n):
            for j in range(n):
                K[i, j] = M[i, j]
            for k in range(m):
                K[i, n + k], K[n + k, i] = -A[k, i], A[k, i]
        ref.update(A=A, b=b, index1=mpmath.lu_solve(K, mpmath.matrix([*F, *b])))
        W = mpmath.zeros(n, m)
        for k in range(m):
            column = mpmath.lu_solve(M, A.T[:, k])
            for i in range(n):
                W[i, k] = column[i]
        y = mpmath.lu_solve(A * W, b - A * ref["a"])
        ref["uk"], ref["Qc"] = ref["a"] + W * y, A.T * y
    return ref


def _check_form(form: Form, raw, point: dict, ref: dict) -> int:
    """Every checkable item of a printed form against the untidied model; how many were."""
    n, m = raw.n, raw.m
    qdd = [point[S(str(a))] for a in raw.qdd]
    lam = [point[S(c.multiplier)] for c in raw.constraints]
    residual_ref = [sum(ref["M"][i, j] * qdd[j] for j in range(n)) - ref["F"][i]
                    - sum((ref["A"][k, i] * lam[k] for k in range(m)), 0) for i in range(n)]
    checked = 0
    for it in form.items:
        label, value = it.label, it.value
        if label in raw.coordinates and isinstance(value, sympy.Eq):
            _agree(_num(value.lhs - value.rhs, point), residual_ref[raw.coordinates.index(label)],
                   f"{form.name} {label}")
        elif label == "M(q)":
            got = _num(value, point)
            for i in range(n):
                for j in range(n):
                    _agree(got[i, j], ref["M"][i, j], f"{form.name} M[{i},{j}]")
        elif label.endswith("_ddot") and form.name in ("index1", "udwadia-kalaba"):
            i = [str(a) for a in raw.qdd].index(label)
            want = ref["index1"][i] if form.name == "index1" else ref["uk"][i]
            _agree(_num(value.rhs, point), want, f"{form.name} {label}")
        elif label.startswith("lambda_") and form.name == "index1":
            k = [c.multiplier for c in raw.constraints].index(label)
            _agree(_num(value.rhs, point), ref["index1"][n + k], f"{form.name} {label}")
        elif label == "Q_c":
            got = _num(value, point)
            for i in range(n):
                _agree(got[i, 0], ref["Qc"][i], f"Q_c[{i}]")
        elif label in ("a", "a = M⁻¹F"):
            if isinstance(value.lhs, sympy.MatMul):
                got = _num(value.lhs.doit() - value.rhs, {**point, **_a_point(raw, ref)})
                for i in range(n):
                    _agree(got[i, 0], 0, f"M a - F [{i}]")
            else:
                got = _num(value.rhs, point)
                for i in range(n):
                    _agree(got[i, 0], ref["a"][i], f"a[{i}]")
        else:
            continue
        checked += 1
    return checked


def _a_point(raw, ref: dict) -> dict:
    return {S(f"a_{c}"): ref["a"][i] for i, c in enumerate(raw.coordinates)}


@pytest.mark.parametrize("name", list(BUDGET_SYSTEMS))
def test_printed_forms_equal_the_untidied_model_at_random_states(name: str) -> None:
    """Each form of the tidied model (what `lagsim derive` prints, budgets applied) evaluated at
    random q, q̇, q̈, λ and parameter values equals the untidied model's M q̈ − F − Aᵀλ, its
    index1 solution, seed 004's q̈ and Q_c and a = M⁻¹F, to 1e-12 relative (30 digits)."""
    mpmath.mp.dps = DPS
    raw = build_model(load_spec(BUDGET_SYSTEMS[name]))
    model = tidy_model(raw)
    rng = random.Random(sum(map(ord, name)))
    forms = [FORMS[f](model, False) for f in ("lagrange", "matrix", "dae", "index1",
                                              "udwadia-kalaba")]
    checked = 0
    for _ in range(3):
        point = _random_point(raw, rng)
        ref = _reference(raw, point)
        for form in forms:
            checked += _check_form(form, raw, point, ref)
    assert checked >= 3 * (3 * raw.n + (2 if raw.m else 1))  # no UK items without constraints


def test_udwadia_kalaba_over_budget_prints_the_pieces() -> None:
    """Issue 16 §4 (over 150 s before): the closed form of the u, v mass with v − 0.21 exceeds
    CLOSED_FORM_MAX_OPS, so M a = F, A and b are printed with a note, and Form.untidied says
    which step was skipped; the flat pendulum, within the budget, keeps its closed form."""
    from lagsim.symbolic.forms import CLOSED_FORM_MAX_OPS

    form = FORMS["udwadia-kalaba"](tidy_model(build_model(load_spec(BUDGET_SYSTEMS["uk2"]))))
    assert [i.label for i in form.items] == ["a", "A", "b"]
    assert isinstance(item(form, "a").value.lhs, sympy.MatMul)
    assert item(form, "A").value == sympy.Matrix([[0, 1]])
    assert any(f"budget of {CLOSED_FORM_MAX_OPS} operations" in n for n in form.notes)
    assert any("closed form skipped" in u for u in form.untidied)
    flat = form_of(FLAT, "udwadia-kalaba")
    assert "x_ddot" in [i.label for i in flat.items] and flat.untidied == ()


def test_combine_trig_identities_are_exact() -> None:
    """Pythagoras and the four angle sums, inside a root too; the result equals the input
    at random points and is shorter; unequal coefficients (0.3 sin² + 0.7 cos²) are kept."""
    from lagsim.symbolic.tidy import combine_trig

    a, b, c = S("a"), S("b"), S("c")
    cases = {
        c * sin(a)**2 + c * cos(a)**2: c,
        m * (sin(a) * sin(b) + cos(a) * cos(b)): m * cos(a - b),
        m * (cos(a) * cos(b) - sin(a) * sin(b)): m * cos(a + b),
        2 * (sin(a) * cos(b) + cos(a) * sin(b)): 2 * sin(a + b),
        sin(a) * cos(b) - cos(a) * sin(b): sin(a - b),
        sympy.sqrt(l**2 * sin(a)**2 + l**2 * cos(a)**2 + c): sympy.sqrt(l**2 + c),
        sin(a)**2 * sin(b)**2 + sin(a)**2 * cos(b)**2 + cos(a)**2: sympy.Integer(1),
    }
    for given, want in cases.items():
        got = combine_trig(given)
        assert sympy.expand(got - want) == 0, (given, got)
        assert numerically_equal(got, given) and sympy.count_ops(got) < sympy.count_ops(given)
    odd = 0.3 * sin(a)**2 + 0.7 * cos(a)**2
    assert combine_trig(odd) == odd


# --- the CPU-time budget (issue 16 §4): fallbacks are equal, nothing hangs ---------------------

@pytest.mark.parametrize("name", ["flat_pendulum", "uk2", "slider_crank", "double_pendulum"])
def test_forms_past_an_exhausted_budget_equal_the_untidied_model(name: str) -> None:
    """With the tidying budget used up before it starts (every SymPy step skipped: solves,
    inverses, cancel, simplify), every form still equals the untidied model at random states to
    1e-12 (the fallback prints the structural pieces, unsimplified), and says what it skipped."""
    from lagsim.symbolic import tidy

    mpmath.mp.dps = DPS
    raw = build_model(load_spec(BUDGET_SYSTEMS[name]))
    model = tidy_model(raw)
    with tidy.budget(0.0, deep=True) as spent:
        forms = [FORMS[f](model, True) for f in ("lagrange", "matrix", "dae", "index1",
                                                 "udwadia-kalaba")]
    rng = random.Random(sum(map(ord, name)) + 1)
    checked = 0
    for _ in range(2):
        point = _random_point(raw, rng)
        ref = _reference(raw, point)
        for form in forms:
            checked += _check_form(form, raw, point, ref)
    assert checked >= 2 * 3 * raw.n
    assert spent.stopped > 0
    assert any("budget was used up" in u for f in forms for u in f.untidied)


def test_a_step_past_the_budget_is_interrupted() -> None:
    """A step that would never end (a busy loop) returns None once the 0.2 s CPU budget runs
    out, and the skip is recorded; the next step finds the budget used up."""
    from lagsim.symbolic import tidy

    def forever() -> sympy.Basic:
        while True:
            pass

    skips: list[str] = []
    with tidy.budget(0.2) as spent:
        assert tidy.bounded(forever, skips, "busy", "loop") is None
        assert tidy.bounded(lambda: sympy.Integer(1), skips, "next", "step") is None
    assert spent.stopped == 2
    assert "stopped when the 0.2 s budget ran out" in skips[0] and "used up" in skips[1]


def _run_derive(*args: str) -> subprocess.CompletedProcess:
    """`lagsim derive` in a fresh process, stopped after 300 s: generous for a loaded 2-core
    machine, so that only a hang (the u, v mass took over 150 s, issue 16 §4) fails it."""
    return subprocess.run([sys.executable, "-m", "lagsim", "derive", *args], capture_output=True,
                          text=True, timeout=300, check=False)


TRANSCENDENTAL = """
name: trans
parameters: {k: 1.0}
coordinates: [a1, y]
kinetic: 1/2*a1_dot**2 + 1/2*y_dot**2
potential: k*y + 1/2*a1**2
constraints:
  - name: c
    holonomic: 0.766*sin(y) - 0.2297*sin(2*a1)*cos(y) + 1.159*y*cos(y/2)
initial: {a1: 0.1, y: 0.0}
"""


def test_derive_past_its_budget_returns_with_a_note(tmp_path: Path) -> None:
    """Issue 16 §3's transcendental constraint (its 1×1 Udwadia–Kalaba inverse simplified for
    21 s, sympy.solve for minutes): `--form all` returns, reduced is printed partitioned with
    the reason (it was skipped), and with --budget 0 the closed forms fall back to the pieces
    with a note on stderr."""
    path = tmp_path / "trans.yaml"
    path.write_text(TRANSCENDENTAL)
    every = _run_derive(str(path), "--form", "all")
    assert every.returncode == 0, every.stderr
    for name in ("lagrange", "matrix", "dae", "index1", "udwadia-kalaba", "reduced"):
        assert f"[{name}]" in every.stdout
    assert "reduced coordinates, partitioned" in every.stdout
    assert "form reduced skipped" not in every.stderr
    zero = _run_derive(str(path), "--form", "udwadia-kalaba", "--simplify", "--budget", "0")
    assert zero.returncode == 0, zero.stderr
    assert "note: tidying stopped after its budget of 0 s CPU" in zero.stderr
    assert "M⋅a = F" not in zero.stdout and "\na:\n" in zero.stdout


def test_derive_of_the_uk_case_returns() -> None:
    """bench/derive_uk2.yaml, whose Udwadia–Kalaba form took over 150 s, prints every form."""
    done = _run_derive(str(BUDGET_SYSTEMS["uk2"]), "--form", "all", "--format", "json")
    assert done.returncode == 0, done.stderr
    import json

    doc = json.loads(done.stdout)
    assert [f["form"] for f in doc["forms"]] == ["lagrange", "matrix", "dae", "index1",
                                                 "udwadia-kalaba", "reduced", "hamilton"]
    assert "note: form linear skipped" in done.stderr   # the mass moves at the start: no rest


def test_hamilton_form_of_a_messy_system_returns_within_the_budget() -> None:
    """The Hamiltonian form within derive's budget (issue 16 §4): messy3's ran for minutes when
    `--form all` first included it, then 1.7 s; its M⁻¹(p − b) reaches 1773 operations, so it
    prints M q̇ = p − b instead of the explicit inverse, with the note saying why."""
    done = _run_derive(str(BUDGET_SYSTEMS["messy3"]), "--form", "hamilton")
    assert done.returncode == 0, done.stderr
    assert "Hamilton's equations [hamilton]" in done.stdout
    assert "M⁻¹(p − b) written out would reach 1773 operations (more than 300)" in done.stdout
    assert "M q̇ = p − b" in done.stdout


def test_an_interruption_swallowed_by_a_bare_except_comes_again() -> None:
    """SymPy's bare ``except:`` clauses can swallow one OutOfTime (solve then ran on for
    minutes in the suite); past the budget SIGPROF repeats, so the next one gets out."""
    import time

    from lagsim.symbolic import tidy

    if not tidy.can_interrupt():
        pytest.skip("no POSIX interval timers here")
    swallowed = 0
    start = time.process_time()
    with pytest.raises(tidy.OutOfTime):
        with tidy.time_budget(0.05):
            while time.process_time() - start < 5.0:
                try:
                    sum(i * i for i in range(20_000))
                except BaseException:  # noqa: BLE001, as SymPy's bare except does
                    if swallowed:
                        raise
                    swallowed += 1
    assert swallowed == 1
    assert time.process_time() - start < 0.05 + 10 * tidy.REPEAT


# --- the reduced form within the budget (issue 16 §4): partitioned when no closed form fits ----

def _time_derivative(expr: sympy.Expr, raw) -> sympy.Expr:
    """d/dt of an expression in q, q̇, t along q̇, q̈ (independent of lagsim's own)."""
    q = [S(c) for c in raw.coordinates]
    qd = [S(str(v)) for v in raw.qd]
    qdd = [S(str(a)) for a in raw.qdd]
    return (sum(sympy.diff(expr, a) * b for a, b in zip(q + qd, qd + qdd))
            + sympy.diff(expr, S("t")))


def _check_partitioned(items: list[Item], raw, q0: dict[str, float], seed: int) -> set[str]:
    """Every item of a partitioned reduced form against the untidied model at random states, to
    1e-12 relative (30 digits): the coordinates' rows are M q̈ − F − Aᵀλ, each constraint is φ,
    its velocity row φ̇ and its acceleration row φ̈ (differentiated here by SymPy), each
    eliminated coordinate solves every constraint once substituted, L̃ is L on the constraint
    manifold; u and v partition the coordinates with φ_u regular at the file's start. Returns
    the labels checked; every item must be one of them."""
    mpmath.mp.dps = DPS
    names = {c.name: c for c in raw.constraints}
    rng = random.Random(seed)
    by_label = {it.label: it.value for it in items}
    eliminated = {S(label.removeprefix("eliminated ")): value.rhs for label, value in
                  by_label.items() if label.startswith("eliminated ")}
    checked: set[str] = set()
    u = [str(s) for s in by_label["dependent u"]]
    v = [str(s) for s in by_label["independent v"]]
    assert sorted(u + v) == sorted(raw.coordinates) and len(u) == raw.m
    phi_u = sympy.Matrix([[sympy.diff(to_sympy(c.expression), S(n)) for n in u]
                          for c in raw.constraints])
    at_start = {S(k): val for k, val in q0.items()}
    at_start.update({S(k): val for k, val in raw.parameters.items()})
    at_start[S("t")] = 0
    assert abs(complex(phi_u.subs(at_start).evalf().det())) > 1e-9
    checked |= {"dependent u", "independent v"}
    for _ in range(3):
        point = _random_point(raw, rng)
        ref = _reference(raw, point)
        for label, value in by_label.items():
            if label in raw.coordinates:
                assert _check_form(Form("dae", "", "", "", (Item(label, value),)), raw, point,
                                   ref) == 1
                checked.add(label)
            elif label in names:
                _agree(_num(residual(value), point), _num(to_sympy(names[label].expression),
                                                          point), label)
                checked.add(label)
            elif label.endswith(", velocity") or label.endswith(", acceleration"):
                name, kind = label.split(", ")
                want = _time_derivative(to_sympy(names[name].expression), raw)
                if kind == "acceleration":
                    want = _time_derivative(want, raw)
                _agree(_num(residual(value), point), _num(want, point), label)
                checked.add(label)
        if eliminated:
            free = {s: val for s, val in point.items() if s not in eliminated}
            on = {s: _num(e, free) for s, e in eliminated.items()}
            for c in raw.constraints:
                _agree(_num(to_sympy(c.expression), {**free, **on}), 0, f"{c.name} solved")
            checked |= {f"eliminated {s}" for s in eliminated}
            if "L̃" in by_label:
                velocity = {S(f"{s}_dot"): _time_derivative(e, raw) for s, e in eliminated.items()}
                full = {**free, **on, **{k: _num(e, free) for k, e in velocity.items()}}
                _agree(_num(by_label["L̃"], free), _num(to_sympy(raw.lagrangian), full), "L̃")
                checked.add("L̃")
    return checked


def _partitioned(form: Form) -> bool:
    return form.title.startswith("reduced coordinates, partitioned")


PARTITIONED = {  # system → the budget of the tidying: 0 forces the symbolic solve out of time
    "a02_four_bar": 0.0, "slider_crank": 0.0, "moving_pivot_pendulum": None,
    "chain2-natural": None, "trans": None,
}


def _system_text(name: str) -> str:
    from lagsim.spec.chains import chain_yaml

    if name == "chain2-natural":
        return chain_yaml(2, natural=True)
    if name == "trans":
        return TRANSCENDENTAL
    return (Path(__file__).resolve().parents[1] / "systems" / f"{name}.yaml").read_text()


@pytest.mark.parametrize("name", list(PARTITIONED))
def test_reduced_fallbacks_equal_the_full_derivation(name: str) -> None:
    """Issue 16 §4: when the symbolic solve runs out of derive's budget (a02, the slider-crank
    with none left), SymPy has no closed form (issue 16 §3's transcendental constraint) or the
    reduced equations exceed CLOSED_FORM_MAX_OPS (the moving pivot's, the natural 2-chain's),
    ``--form reduced`` is the partitioned form, which equals the full derivation item by item at
    random states to 1e-12, and one note says why."""
    from lagsim.symbolic import tidy
    from lagsim.symbolic.forms import CLOSED_FORM_MAX_OPS

    spec = parse_spec(_system_text(name), "<test>", name)
    raw = build_model(spec)
    q0 = dict(zip(spec.coordinates, spec.initial_state()[0]))
    seconds = PARTITIONED[name]
    with tidy.budget(tidy.DEFAULT_SECONDS if seconds is None else seconds):
        form = FORMS["reduced"](tidy_model(raw), False, q0=q0)
    assert _partitioned(form), form.title
    checked = _check_partitioned(list(form.items), raw, q0, sum(map(ord, name)))
    assert checked == {it.label for it in form.items}
    assert all(c.name in checked and f"{c.name}, velocity" in checked
               and f"{c.name}, acceleration" in checked for c in raw.constraints)
    why = form.notes[0]
    if seconds == 0.0:
        assert "did not finish within derive's budget of 0 s CPU" in why and "--budget" in why
    elif name == "trans":
        assert "budget" in why or "no closed form" in why
    else:
        assert f"more than {CLOSED_FORM_MAX_OPS}" in why
        assert any(it.label.startswith("eliminated ") for it in form.items)


def _json_items(form: dict) -> list[Item]:
    """The items of a form of ``lagsim derive --format json`` read back by SymPy."""
    def read(text: str) -> sympy.Expr:
        return sympy.sympify(text, locals=locals_)

    locals_: dict = {}
    items = []
    for it in form["items"]:
        if it["kind"] == "equation":
            lhs, rhs = it["value"].split(" = ")
            items.append(Item(it["label"], sympy.Eq(read(lhs), read(rhs), evaluate=False)))
        elif it["kind"] == "matrix":
            items.append(Item(it["label"], sympy.Matrix([[read(e) for e in row]
                                                         for row in it["value"]])))
        else:
            items.append(Item(it["label"], read(it["value"])))
    return items


def _derive_json(*args: str) -> tuple[dict, str]:
    import json

    from click.testing import CliRunner

    from lagsim.cli.app import main

    result = CliRunner().invoke(main, ["derive", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_derive_reduced_respects_a_tiny_budget() -> None:
    """`derive --form reduced --budget 0.001`: the slider-crank's symbolic solve (about 0.2 s)
    stops at once, and the partitioned form printed instead equals the full derivation, with the
    note saying why and how to get the closed form; the default budget prints the closed form
    (y2 = 0 for the rail, the crank pin's √(r² − x1²))."""
    spec = load_spec("slider_crank")
    raw = build_model(spec)
    q0 = dict(zip(spec.coordinates, spec.initial_state()[0]))
    doc, _ = _derive_json("slider_crank", "--form", "reduced", "--budget", "0.001")
    assert doc["title"].startswith("reduced coordinates, partitioned")
    assert "did not finish within derive's budget of 0.001 s CPU" in doc["notes"][0]
    assert "--budget SECONDS" in doc["notes"][0]
    items = _json_items(doc)
    assert _check_partitioned(items, raw, q0, 11) == {it.label for it in items}
    closed, _ = _derive_json("slider_crank", "--form", "reduced", "--budget", "5")
    assert closed["title"] == "reduced (constrained) coordinates"
    assert "eliminated y2" in [it["label"] for it in closed["items"]]


def test_derive_reduced_of_the_four_bar_with_the_default_budget() -> None:
    """IFToMM A02 (its reduced form took 3.1 s, then 3.7 s and 1.2 MB): with derive's default
    budget `--form reduced` prints the partitioned description, one dependent coordinate per bar
    and x0 free, equal to the full derivation at random states, with the note."""
    spec = load_spec("a02_four_bar")
    raw = build_model(spec)
    q0 = dict(zip(spec.coordinates, spec.initial_state()[0]))
    doc, _ = _derive_json("a02_four_bar", "--form", "reduced")
    assert doc["title"].startswith("reduced coordinates, partitioned")
    items = _json_items(doc)
    assert _check_partitioned(items, raw, q0, 2) == {it.label for it in items}
    assert [str(s) for s in item(Form("", "", "", "", tuple(items)), "independent v").value] \
        == ["x0"]
    assert "budget" in doc["notes"][0] or "operations" in doc["notes"][0]


@pytest.mark.slow
def test_pseudo_inverse_meets_the_penrose_conditions() -> None:
    """Seed 004's (AM⁻¹Aᵀ)⁺ for dependent rows, by the full-rank factorization (no symbolic
    row reduction, whose simplify imported sympy.physics.units): G G⁺ G = G, G⁺ G G⁺ = G⁺ and
    G G⁺, G⁺ G symmetric, at random points to 1e-12, for symbolic G of rank 1 and 2."""
    from lagsim.symbolic.forms.augmented import pseudo_inverse

    a, b, c = S("a"), S("b"), S("c")
    u = sympy.Matrix([a, b, 1])
    v = sympy.Matrix([1, 0, c])
    for G in (u * u.T, u * u.T + v * v.T):
        P = sympy.lambdify((a, b, c), pseudo_inverse(sympy.Matrix(G)), "numpy")
        rng = random.Random(4)
        for _ in range(3):
            point = {s: rng.uniform(0.3, 1.3) for s in (a, b, c)}
            g = np.array(G.evalf(subs=point), dtype=float)
            p = np.array(P(*point.values()), dtype=float)
            scale = max(1.0, np.abs(g).max(), np.abs(p).max())
            np.testing.assert_allclose(g @ p @ g, g, atol=1e-12 * scale**3)
            np.testing.assert_allclose(p @ g @ p, p, atol=1e-12 * scale**3)
            np.testing.assert_allclose(g @ p, (g @ p).T, atol=1e-12 * scale**2)
            np.testing.assert_allclose(p @ g, (p @ g).T, atol=1e-12 * scale**2)
