"""The bundled systems' derived models against the seeds' own results (issue 2).

Each test writes the seed's result by hand in SymPy and compares lagsim's model with it, either
symbolically (the difference simplifies to 0) or at seeded random states on the constraint
manifold to 1e-10. Multipliers come from the augmented system [[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b]
(seed ``003_88d23709419132a0.txt``; ``M q̈ = F + Aᵀλ`` as in seed ``001_80d65b968ce3cb18.txt``
§10.7), solved with numpy at each state. Seeds: 001 Examples 10.1, 10.4, 10.5 and §10.7; 002
(``002_485a91571cac8ced.txt``) §23.6–23.9; 003; 004 (``004_2a8ddee2a66c9af0.txt``) Remarks.
Parameters are overridden with unequal values where a mix-up (m1 for m2, l1 for l2) could hide.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
import yaml

SYSTEMS = Path(__file__).resolve().parents[1] / "systems"
ISSUE_2 = (
    "free_mass_cartesian", "free_mass_polar", "pendulum", "pendulum_natural", "flat_pendulum",
    "sho_table", "pendulum_constrained", "double_pendulum_constrained", "spring_pendulum", "skate",
)
STATES = 6
TOL = 1e-10

m, g, l, L, k, l0, d, K = sp.symbols("m g l L k l0 d K")
x, y, z, r, theta, psi, beta = sp.symbols("x y z r theta psi beta")
x_dot, y_dot, z_dot, r_dot, theta_dot, psi_dot, beta_dot = sp.symbols(
    "x_dot y_dot z_dot r_dot theta_dot psi_dot beta_dot"
)
x_ddot, y_ddot, r_ddot, theta_ddot = sp.symbols("x_ddot y_ddot r_ddot theta_ddot")


@functools.cache
def _model(name: str, overrides: tuple[tuple[str, float], ...] = ()):
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import build_model

    return build_model(load_spec(SYSTEMS / f"{name}.yaml", dict(overrides) or None))


def model(name: str, **overrides: float):
    """The built model of a bundled system file, parameters optionally overridden."""
    return _model(name, tuple(sorted(overrides.items())))


def ssym(expr) -> sp.Basic:
    """A model expression or matrix as SymPy."""
    return sp.sympify(expr)


def full_state(mdl, values: Mapping[str, float], t: float = 0.0) -> dict[sp.Symbol, float]:
    """Every coordinate and velocity (0 when not given), t and the parameter values."""
    known = {f"{q}{suffix}" for q in mdl.coordinates for suffix in ("", "_dot")}
    unknown = set(values) - known
    assert not unknown, f"state names {unknown} are not coordinates or velocities of {mdl.name}"
    state = {sp.Symbol(p): float(v) for p, v in mdl.parameters.items()}
    state.update({sp.Symbol(name): float(values.get(name, 0.0)) for name in known})
    state[sp.Symbol("t")] = t
    return state


_COMPILED: dict[int, tuple[object, list[sp.Symbol], object]] = {}


def value(expr, state: Mapping[sp.Symbol, float]) -> np.ndarray:
    """The number (or array) of an expression at a full state (lambdified once per object; the
    cache keeps the object alive, so its id stays its own)."""
    if id(expr) not in _COMPILED:
        e = ssym(expr)
        symbols = sorted(e.free_symbols, key=str)
        _COMPILED[id(expr)] = (expr, symbols, sp.lambdify(symbols, e, "numpy"))
    _, symbols, f = _COMPILED[id(expr)]
    return np.array(f(*(state[s] for s in symbols)), dtype=float)


def on_manifold(mdl, state: Mapping[sp.Symbol, float]) -> None:
    """Every constraint holds at the state, at position and velocity level."""
    qd = [sp.Symbol(f"{q}_dot") for q in mdl.coordinates]
    for c in mdl.constraints:
        w = sum((ssym(a) * v for a, v in zip(c.row, qd)), ssym(c.offset))
        if c.kind == "holonomic":
            assert abs(value(c.expression, state)) < 1e-12, f"phi_{c.name} != 0 at the test state"
        assert abs(value(w, state)) < 1e-12, f"velocity form of {c.name} != 0 at the test state"


def solve_index1(mdl, state: Mapping[sp.Symbol, float]) -> tuple[dict, dict]:
    """q̈ and λ by name from [[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b] (seed 003)."""
    n, nc = len(mdl.coordinates), len(mdl.constraints)
    M = value(mdl.mass_matrix, state).reshape(n, n)
    F = value(mdl.forcing, state).reshape(n)
    A = value(mdl.A, state).reshape(nc, n)
    b = value(mdl.b, state).reshape(nc)
    K_aug = np.block([[M, -A.T], [A, np.zeros((nc, nc))]])
    sol = np.linalg.solve(K_aug, np.concatenate([F, b]))
    qdd = dict(zip(mdl.coordinates, sol[:n]))
    lam = {c.name: float(v) for c, v in zip(mdl.constraints, sol[n:])}
    return qdd, lam


def udwadia_kalaba(mdl, state: Mapping[sp.Symbol, float]) -> np.ndarray:
    """q̈ = a + M^{-1/2}(A M^{-1/2})⁺(b − A a) with a = M⁻¹F (seed 004, Statement)."""
    n, nc = len(mdl.coordinates), len(mdl.constraints)
    M = value(mdl.mass_matrix, state).reshape(n, n)
    F = value(mdl.forcing, state).reshape(n)
    A = value(mdl.A, state).reshape(nc, n)
    b = value(mdl.b, state).reshape(nc)
    w, V = np.linalg.eigh(M)
    m_inv_half = V @ np.diag(w**-0.5) @ V.T
    a = np.linalg.solve(M, F)
    return a + m_inv_half @ np.linalg.pinv(A @ m_inv_half) @ (b - A @ a)


def close(got: float, want: float, what: str) -> None:
    assert got == pytest.approx(want, rel=TOL, abs=TOL), f"{what}: lagsim {got!r}, seed {want!r}"


def pendulum_states(seed: int, length: float) -> list[dict[str, float]]:
    """Random (θ, θ̇) of a pendulum of the given length, also as Cartesian x, y (001 Ex. 10.5)."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(STATES):
        th, thd = rng.uniform(-3.0, 3.0), rng.uniform(-4.0, 4.0)
        states.append({
            "theta": th, "theta_dot": thd,
            "x": length * np.sin(th), "y": -length * np.cos(th),
            "x_dot": length * np.cos(th) * thd, "y_dot": length * np.sin(th) * thd,
        })
    return states


def cartesian(s: Mapping[str, float]) -> dict[str, float]:
    return {key: s[key] for key in ("x", "y", "x_dot", "y_dot")}


# --- every bundled file ------------------------------------------------------------------------


ALL_FILES = sorted(p.stem for p in SYSTEMS.glob("*.yaml"))


def test_every_issue_2_system_is_bundled() -> None:
    missing = sorted(set(ISSUE_2) - set(ALL_FILES))
    assert not missing, f"systems/ lacks {missing}"


@pytest.mark.parametrize("name", ALL_FILES)
def test_file_is_plain_yaml_with_named_constraints(name: str) -> None:
    """Each file is a safe-YAML mapping named as its file, with a description, numeric
    parameters, a ``simulate:`` block, and a name on every constraint (so λ has a meaning)."""
    doc = yaml.safe_load((SYSTEMS / f"{name}.yaml").read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    assert doc["name"] == name
    assert len(doc["description"].split()) >= 20, "the description should say what is shown"
    assert all(isinstance(v, float | int) for v in doc["parameters"].values())
    assert doc["simulate"]["t_end"] > 0
    for c in doc.get("constraints", []):
        assert isinstance(c, dict) and c.get("name"), f"unnamed constraint {c!r} in {name}"


@pytest.mark.parametrize("name", ISSUE_2)
def test_issue_2_descriptions_cite_their_seed(name: str) -> None:
    """Each description cites its source by the short name docs/references.md resolves to
    author, title and section (issue 14: what users see carries no seed file names)."""
    import re

    from lagsim.spec.references import SOURCES

    text = yaml.safe_load((SYSTEMS / f"{name}.yaml").read_text(encoding="utf-8"))["description"]
    assert not re.search(r"\d{3}_[0-9a-f]{16}", text), f"{name}: a seed file name"
    assert any(f"[{short}" in text for short in SOURCES.values()), \
        f"{name}: the description must cite its seed by short name"


@pytest.mark.parametrize("name", ALL_FILES)
def test_initial_state_is_on_the_constraint_manifold(name: str) -> None:
    """The file's q(0), q̇(0) satisfy every φ = 0 and φ̇ = 0 (or a·q̇ + b = 0) to 1e-12."""
    from lagsim.spec.system import load_spec

    spec = load_spec(SYSTEMS / f"{name}.yaml")
    mdl = model(name)
    q0, qd0 = spec.initial_state()
    values = dict(zip(mdl.coordinates, q0))
    values.update({f"{c}_dot": v for c, v in zip(mdl.coordinates, qd0)})
    t0 = float(doc_t_start(name))
    on_manifold(mdl, full_state(mdl, values, t0))
    M = value(mdl.mass_matrix, full_state(mdl, values, t0))
    assert np.linalg.matrix_rank(np.atleast_2d(M)) == len(mdl.coordinates)


def doc_t_start(name: str) -> float:
    doc = yaml.safe_load((SYSTEMS / f"{name}.yaml").read_text(encoding="utf-8"))
    return float(doc.get("simulate", {}).get("t_start", 0.0))


# --- 001, Examples 10.1 / 10.4: the free mass ---------------------------------------------------


def test_free_mass_cartesian_is_001_eq_10_7() -> None:
    """m q̈ + m g e2 = 0 (001 (10.7)); h = T + U with U = m g y (001 Ex. 10.1)."""
    mdl = model("free_mass_cartesian")
    assert sp.simplify(ssym(mdl.mass_matrix) - sp.diag(m, m)) == sp.zeros(2, 2)
    assert sp.simplify(ssym(mdl.forcing) - sp.Matrix([0, -m * g])) == sp.zeros(2, 1)
    h = m * (x_dot**2 + y_dot**2) / 2 + m * g * y
    assert sp.simplify(ssym(mdl.energy) - h) == 0


POLAR_CORRECT = sp.Matrix([
    m * r_ddot - m * r * theta_dot**2 - m * g * sp.cos(theta),
    m * r**2 * theta_ddot + 2 * m * r * r_dot * theta_dot + m * g * r * sp.sin(theta),
])
POLAR_PRINTED_10_8 = sp.Matrix([
    m * r_ddot + m * g * sp.sin(theta),
    m * r**2 * theta_ddot + 2 * m * r * r_dot * theta_dot + m * g * r * sp.cos(theta),
])


def polar_residual(mdl) -> sp.Matrix:
    return ssym(mdl.mass_matrix) * sp.Matrix([r_ddot, theta_ddot]) - ssym(mdl.forcing)


def test_free_mass_polar_has_the_centrifugal_term() -> None:
    """From 001 Ex. 10.1's T = ½m(ṙ² + r²θ̇²), U = −m g r cos θ the radial equation carries
    −m r θ̇² and the angular one m g r sin θ."""
    residual = polar_residual(model("free_mass_polar"))
    assert sp.simplify(residual - POLAR_CORRECT) == sp.zeros(2, 1), (
        "Euler-Lagrange equations of T = m(r_dot^2 + r^2 theta_dot^2)/2, U = -m g r cos(theta): "
        f"got {residual.T}, want {POLAR_CORRECT.T}"
    )


def test_free_mass_polar_differs_from_the_printed_10_8() -> None:
    """The seed's printed (10.8) drops −m r θ̇² and swaps sin and cos; lagsim must not follow."""
    residual = polar_residual(model("free_mass_polar"))
    at = {m: 1.3, g: 9.81, r: 0.7, theta: 0.4, r_dot: 0.2, theta_dot: 1.1,
          r_ddot: 0.3, theta_ddot: -0.5}
    gap = (residual - POLAR_PRINTED_10_8).subs(at).evalf()
    assert abs(float(gap[0])) > 1.0 and abs(float(gap[1])) > 1.0, (
        "seed 001 (10.8) as printed omits the centrifugal term -m r theta_dot^2 and mixes sin and "
        "cos; lagsim derives from the stated T and U and must disagree with the printed form"
    )


def test_free_mass_polar_is_the_cartesian_free_fall() -> None:
    """The polar q̈ mapped through x = r sin θ, y = −r cos θ is (ẍ, ÿ) = (0, −g) (001 Ex. 10.4:
    the same motion in both coordinates)."""
    mdl = model("free_mass_polar", m=1.7, g=9.81)
    rng = np.random.default_rng(104)
    for _ in range(STATES):
        rv, th = rng.uniform(0.3, 3.0), rng.uniform(-3.0, 3.0)
        rd, thd = rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)
        state = full_state(mdl, {"r": rv, "theta": th, "r_dot": rd, "theta_dot": thd})
        rdd, thdd = solve_index1(mdl, state)[0].values()
        xdd = (rdd - rv * thd**2) * np.sin(th) + (2 * rd * thd + rv * thdd) * np.cos(th)
        ydd = -(rdd - rv * thd**2) * np.cos(th) + (2 * rd * thd + rv * thdd) * np.sin(th)
        close(xdd, 0.0, "x_ddot from the polar equations")
        close(ydd, -9.81, "y_ddot from the polar equations")


# --- 001, Example 10.5 and §10.7; 003; 004: the pendulum ---------------------------------------


def test_pendulum_is_001_example_10_5() -> None:
    """m r² θ̈ + m g r sin θ = 0 with the seed's r written l; h = ½ m l² θ̇² − m g l cos θ."""
    mdl = model("pendulum")
    residual = ssym(mdl.mass_matrix)[0, 0] * theta_ddot - ssym(mdl.forcing)[0]
    assert sp.simplify(residual - (m * l**2 * theta_ddot + m * g * l * sp.sin(theta))) == 0
    h = m * l**2 * theta_dot**2 / 2 - m * g * l * sp.cos(theta)
    assert sp.simplify(ssym(mdl.energy) - h) == 0


def test_pendulum_natural_is_the_dae_of_001_section_10_7() -> None:
    """m q̈ + m g e2 = 2 q λ, φ = q·q − l² (001 Ex. 10.5); A q̈ = b with b = −2 q̇·q̇ (003)."""
    mdl = model("pendulum_natural")
    assert [c.name for c in mdl.constraints] == ["rod"]
    assert sp.simplify(ssym(mdl.mass_matrix) - sp.diag(m, m)) == sp.zeros(2, 2)
    assert sp.simplify(ssym(mdl.forcing) - sp.Matrix([0, -m * g])) == sp.zeros(2, 1)
    assert sp.simplify(ssym(mdl.A) - sp.Matrix([[2 * x, 2 * y]])) == sp.zeros(1, 2)
    assert sp.simplify(ssym(mdl.b)[0] + 2 * (x_dot**2 + y_dot**2)) == 0
    phi = ssym(mdl.constraints[0].expression)
    assert sp.simplify(phi - (x**2 + y**2 - l**2)) == 0


def test_pendulum_natural_tension_and_motion() -> None:
    """At random states: q̈ is the pendulum's θ̈ = −(g/l) sin θ in Cartesian form, and the rod
    tension −2 l λ_rod is m l θ̇² + m g cos θ (002 §23.7)."""
    mv, gv, lv = 0.8, 9.81, 1.3
    mdl = model("pendulum_natural", m=mv, g=gv, l=lv)
    for s in pendulum_states(105, lv):
        state = full_state(mdl, cartesian(s))
        on_manifold(mdl, state)
        qdd, lam = solve_index1(mdl, state)
        th, thd = s["theta"], s["theta_dot"]
        thdd = -gv / lv * np.sin(th)
        close(qdd["x"], lv * (np.cos(th) * thdd - np.sin(th) * thd**2), "x_ddot")
        close(qdd["y"], lv * (np.sin(th) * thdd + np.cos(th) * thd**2), "y_ddot")
        close(-2 * lv * lam["rod"], mv * lv * thd**2 + mv * gv * np.cos(th), "rod tension")


def test_pendulum_natural_udwadia_kalaba_gives_the_pendulum() -> None:
    """004 Remarks: with M = mI, a = (0, −g) and x ẍ + y ÿ = −(ẋ² + ẏ²) the formula returns the
    pendulum equation."""
    mdl = model("pendulum_natural", m=0.8, l=1.3)
    for s in pendulum_states(4, 1.3):
        state = full_state(mdl, cartesian(s))
        qdd = udwadia_kalaba(mdl, state)
        th, thd = s["theta"], s["theta_dot"]
        thdd = -9.81 / 1.3 * np.sin(th)
        close(qdd[0], 1.3 * (np.cos(th) * thdd - np.sin(th) * thd**2), "UK x_ddot")
        close(qdd[1], 1.3 * (np.sin(th) * thdd + np.cos(th) * thd**2), "UK y_ddot")


def test_pendulum_redundant_needs_udwadia_kalaba() -> None:
    """The rod listed twice: A has rank 1, [[M, −Aᵀ], [A, 0]] is singular, and 004's formula
    gives the same q̈ as the single constraint."""
    single = model("pendulum_natural")
    double = model("pendulum_redundant")
    assert [c.name for c in double.constraints] == ["rod", "rod_again"]
    for s in pendulum_states(7, 1.0):
        state = full_state(double, cartesian(s))
        A = value(double.A, state).reshape(2, 2)
        M = value(double.mass_matrix, state).reshape(2, 2)
        assert np.linalg.matrix_rank(A) == 1
        assert np.linalg.matrix_rank(np.block([[M, -A.T], [A, np.zeros((2, 2))]])) == 3
        want = udwadia_kalaba(single, full_state(single, cartesian(s)))
        got = udwadia_kalaba(double, state)
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)


def test_flat_pendulum_is_the_augmented_system_of_003() -> None:
    """003: [[m, 0, x], [0, m, y], [x, y, 0]] [ẍ; ÿ; z] = [0; 0; −ẋ² − ẏ²] with z = −λ_rod."""
    mdl = model("flat_pendulum")
    aug = sp.Matrix(sp.BlockMatrix([[ssym(mdl.mass_matrix), -ssym(mdl.A).T],
                                    [ssym(mdl.A), sp.zeros(1, 1)]]))
    aug[:, 2] = -aug[:, 2]
    seed_matrix = sp.Matrix([[m, 0, x], [0, m, y], [x, y, 0]])
    assert sp.simplify(aug - seed_matrix) == sp.zeros(3, 3)
    rhs = sp.Matrix([*ssym(mdl.forcing), *ssym(mdl.b)])
    assert sp.simplify(rhs - sp.Matrix([0, 0, -x_dot**2 - y_dot**2])) == sp.zeros(3, 1)


def test_flat_pendulum_closed_form_of_003() -> None:
    """003's closed form [ẍ; ÿ; z] = 1/(m(x²+y²)) [[y², −xy, mx], [−xy, x², my], [mx, my, −m²]]
    [0; 0; −ẋ² − ẏ²] at random states on the circle x² + y² = L²."""
    mv, Lv = 1.4, 0.9
    mdl = model("flat_pendulum", m=mv, L=Lv)
    for s in pendulum_states(3, Lv):
        state = full_state(mdl, cartesian(s))
        on_manifold(mdl, state)
        qdd, lam = solve_index1(mdl, state)
        xv, yv, v2 = s["x"], s["y"], s["x_dot"] ** 2 + s["y_dot"] ** 2
        inv = np.array([[yv**2, -xv * yv, mv * xv], [-xv * yv, xv**2, mv * yv],
                        [mv * xv, mv * yv, -mv**2]]) / (mv * (xv**2 + yv**2))
        want = inv @ np.array([0.0, 0.0, -v2])
        close(qdd["x"], want[0], "x_ddot")
        close(qdd["y"], want[1], "y_ddot")
        close(-lam["rod"], want[2], "003's z = -lambda_rod")


# --- 002 §23.6–23.9 ----------------------------------------------------------------------------


def test_sho_table_motion_and_normal_force() -> None:
    """002 §23.6: m ẍ + k x = 0 on the table, μ1 = λ_line = 0 and μ2 = λ_table = m g."""
    mv, kv, gv = 1.3, 4.5, 9.81
    mdl = model("sho_table", m=mv, k=kv, g=gv, l0=0.8)
    assert [c.name for c in mdl.constraints] == ["line", "table"]
    rng = np.random.default_rng(236)
    for _ in range(STATES):
        xv, xd = rng.uniform(-0.5, 0.5), rng.uniform(-2.0, 2.0)
        state = full_state(mdl, {"x": xv, "x_dot": xd})
        on_manifold(mdl, state)
        qdd, lam = solve_index1(mdl, state)
        close(mv * qdd["x"] + kv * xv, 0.0, "m x_ddot + k x")
        close(qdd["y"], 0.0, "y_ddot")
        close(qdd["z"], 0.0, "z_ddot")
        close(lam["line"], 0.0, "mu_1 = lambda_line")
        close(lam["table"], mv * gv, "normal force mu_2 = lambda_table")


def test_pendulum_constrained_lagrangians_of_002_23_7() -> None:
    """L = ½m(β̇² + (ℓ+β)²θ̇² + ż²) + m g (ℓ+β) cos θ, and L̃ = ½mℓ²θ̇² + m g ℓ cos θ on β = z = 0."""
    mdl = model("pendulum_constrained")
    lag = ssym(mdl.lagrangian)
    want = (m * (beta_dot**2 + (l + beta) ** 2 * theta_dot**2 + z_dot**2) / 2
            + m * g * (l + beta) * sp.cos(theta))
    assert sp.simplify(lag - want) == 0
    reduced = lag.subs({beta: 0, z: 0, beta_dot: 0, z_dot: 0})
    assert sp.simplify(reduced - (m * l**2 * theta_dot**2 / 2 + m * g * l * sp.cos(theta))) == 0


def test_pendulum_constrained_tension() -> None:
    """002 §23.7: θ̈ = −(g/ℓ) sin θ, μ1 = λ_string = −mℓθ̇² − m g cos θ, λ_plane = 0."""
    mv, gv, lv = 0.7, 9.81, 1.2
    mdl = model("pendulum_constrained", m=mv, g=gv, l=lv)
    assert [c.name for c in mdl.constraints] == ["string", "plane"]
    for s in pendulum_states(237, lv):
        th, thd = s["theta"], s["theta_dot"]
        state = full_state(mdl, {"theta": th, "theta_dot": thd})
        on_manifold(mdl, state)
        qdd, lam = solve_index1(mdl, state)
        close(qdd["theta"], -gv / lv * np.sin(th), "theta_ddot")
        close(qdd["beta"], 0.0, "beta_ddot")
        close(qdd["z"], 0.0, "z_ddot")
        close(-lam["string"], mv * lv * thd**2 + mv * gv * np.cos(th), "tension -lambda_string")
        close(lam["plane"], 0.0, "lambda_plane")


def _textbook_double_pendulum(m1, m2, l1, l2, gv, t1, t2, w1, w2):
    """M and F of the planar double pendulum in its angles from the downward vertical, from
    L = T − U of the two bobs (001 §10.1–10.6; e.g. Goldstein, Classical Mechanics §1.6):
    M = [[(m1+m2) l1², m2 l1 l2 cos(θ1−θ2)], [m2 l1 l2 cos(θ1−θ2), m2 l2²]],
    F = [−m2 l1 l2 sin(θ1−θ2) θ̇2² − (m1+m2) g l1 sin θ1,
         m2 l1 l2 sin(θ1−θ2) θ̇1² − m2 g l2 sin θ2]."""
    c, s = np.cos(t1 - t2), np.sin(t1 - t2)
    M = np.array([[(m1 + m2) * l1**2, m2 * l1 * l2 * c], [m2 * l1 * l2 * c, m2 * l2**2]])
    F = np.array([-m2 * l1 * l2 * s * w2**2 - (m1 + m2) * gv * l1 * np.sin(t1),
                  m2 * l1 * l2 * s * w1**2 - m2 * gv * l2 * np.sin(t2)])
    return M, F


def test_showcase_double_pendulum_is_the_textbook_one() -> None:
    """The bundled double_pendulum (the README's showcase) hangs down with gravity −y, in its two
    angles: M and F at random states equal the textbook closed forms; at θ = 0 both bobs are
    straight below the pivot and U is least."""
    m1, m2, l1, l2, gv = 1.3, 0.7, 1.1, 0.8, 9.81
    mdl = model("double_pendulum", m1=m1, m2=m2, l1=l1, l2=l2, g=gv)
    assert mdl.coordinates == ("theta1", "theta2") and not mdl.constraints
    rng = np.random.default_rng(14)
    for _ in range(STATES):
        t1, t2, w1, w2 = rng.uniform(-3.0, 3.0, 4)
        state = full_state(mdl, {"theta1": t1, "theta2": t2, "theta1_dot": w1, "theta2_dot": w2})
        M, F = _textbook_double_pendulum(m1, m2, l1, l2, gv, t1, t2, w1, w2)
        np.testing.assert_allclose(value(mdl.mass_matrix, state).reshape(2, 2), M, rtol=TOL,
                                   atol=TOL)
        np.testing.assert_allclose(value(mdl.forcing, state).reshape(2), F, rtol=TOL, atol=TOL)
    down = full_state(mdl, {})
    assert value(mdl.potential, down) == pytest.approx(-gv * (m1 * l1 + m2 * (l1 + l2)), rel=TOL)


def test_plain_derive_of_the_showcase_prints_the_textbook_equations() -> None:
    """`lagsim derive double_pendulum` with no options: its two printed equations (the JSON
    format of the same command) evaluate to M q̈ − F of the textbook at random states."""
    import json

    from click.testing import CliRunner

    from lagsim.cli import main

    result = CliRunner().invoke(main, ["derive", "double_pendulum", "--format", "json"])
    assert result.exit_code == 0, result.output
    equations = json.loads(result.output)["equations"]
    assert len(equations) == 2
    names = "theta1 theta2 theta1_dot theta2_dot theta1_ddot theta2_ddot m1 m2 l1 l2 g"
    symbols = sp.symbols(names)
    residuals = [sp.lambdify(symbols, sp.sympify(e.split("=")[0]) - sp.sympify(e.split("=")[1]))
                 for e in equations]
    rng = np.random.default_rng(141)
    for _ in range(STATES):
        t1, t2, w1, w2, a1, a2 = rng.uniform(-3.0, 3.0, 6)
        M, F = _textbook_double_pendulum(1.0, 1.0, 1.0, 1.0, 9.81, t1, t2, w1, w2)
        want = M @ [a1, a2] - F
        got = [f(t1, t2, w1, w2, a1, a2, 1.0, 1.0, 1.0, 1.0, 9.81) for f in residuals]
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)


def test_double_pendulum_equations_and_tensions() -> None:
    """002 §23.8 at random states: q̈ satisfies the seed's two equations of motion, and
    λ_string1 = μ1, λ_string2 = μ2ℓ2 are the seed's closed forms with θ̈ from those equations."""
    m1, m2, l1, l2, gv = 1.3, 0.7, 1.1, 0.8, 9.81
    mdl = model("double_pendulum_constrained", m1=m1, m2=m2, l1=l1, l2=l2, g=gv)
    assert [c.name for c in mdl.constraints] == ["string1", "string2", "plane1", "plane2"]
    rng = np.random.default_rng(238)
    for _ in range(STATES):
        t1, t2 = rng.uniform(-3.0, 3.0, 2)
        w1, w2 = rng.uniform(-3.0, 3.0, 2)
        state = full_state(mdl, {"theta1": t1, "theta2": t2, "theta1_dot": w1, "theta2_dot": w2})
        on_manifold(mdl, state)
        qdd, lam = solve_index1(mdl, state)
        a1, a2 = qdd["theta1"], qdd["theta2"]
        eq1 = ((m1 + m2) * l1**2 * a1
               + m2 * l1 * l2 * (a2 * np.cos(t2 - t1) - w2**2 * np.sin(t2 - t1))
               + (m1 + m2) * gv * l1 * np.sin(t1))
        eq2 = (m2 * l2**2 * a2 + m2 * l1 * l2 * (a1 * np.cos(t2 - t1) + w1**2 * np.sin(t2 - t1))
               + m2 * gv * l2 * np.sin(t2))
        close(eq1, 0.0, "002 §23.8 equation for theta1")
        close(eq2, 0.0, "002 §23.8 equation for theta2")
        mu1 = (-(m1 + m2) * (l1 * w1**2 + gv * np.cos(t1))
               + m2 * l2 * (a2 * np.sin(t1 - t2) - w2**2 * np.cos(t1 - t2)))
        mu2_l2 = -m2 * (gv * np.cos(t2) + l2 * w2**2 + l1 * a1 * np.sin(t1 - t2)
                        + l1 * w1**2 * np.cos(t1 - t2))
        close(lam["string1"], mu1, "mu_1 = lambda_string1")
        close(lam["string2"], mu2_l2, "mu_2 l2 = lambda_string2")
        for name in ("beta", "gamma", "z1", "z2"):
            close(qdd[name], 0.0, f"{name}_ddot")
        close(lam["plane1"], 0.0, "lambda_plane1")
        close(lam["plane2"], 0.0, "lambda_plane2")


def test_spring_pendulum_equation_and_tension() -> None:
    """002 §23.9: m d² θ̈ + m g d sin θ − K d cos θ (d√(2−2 sin θ) − ℓ0)/√(2−2 sin θ) = 0 and
    μ1 = λ_string = −m d θ̇² − m g cos θ + K (d√(2−2 sin θ) − ℓ0) √((1 − sin θ)/2)."""
    mv, gv, dv, Kv, l0v = 1.2, 9.81, 0.9, 15.0, 0.4
    mdl = model("spring_pendulum", m=mv, g=gv, d=dv, K=Kv, l0=l0v)
    rng = np.random.default_rng(239)
    for _ in range(STATES):
        th, thd = rng.uniform(-2.5, 1.2), rng.uniform(-3.0, 3.0)
        state = full_state(mdl, {"theta": th, "theta_dot": thd})
        on_manifold(mdl, state)
        qdd, lam = solve_index1(mdl, state)
        root = np.sqrt(2 - 2 * np.sin(th))
        eom = (mv * dv**2 * qdd["theta"] + mv * gv * dv * np.sin(th)
               - Kv * dv * np.cos(th) * (dv * root - l0v) / root)
        close(eom, 0.0, "002 §23.9 equation of motion")
        mu1 = (-mv * dv * thd**2 - mv * gv * np.cos(th)
               + Kv * (dv * root - l0v) * np.sqrt((1 - np.sin(th)) / 2))
        close(lam["string"], mu1, "mu_1 = lambda_string")
        close(lam["plane"], 0.0, "lambda_plane")


# --- the skate (knife edge) --------------------------------------------------------------------


def test_skate_constraint_rows() -> None:
    """a = (sin ψ, −cos ψ, 0) and, differentiated once, b = −(ẋ cos ψ + ẏ sin ψ) ψ̇."""
    mdl = model("skate")
    (c,) = mdl.constraints
    assert (c.name, c.kind) == ("skate", "velocity")
    row = sp.Matrix([ssym(a) for a in c.row])
    assert sp.simplify(row - sp.Matrix([sp.sin(psi), -sp.cos(psi), 0])) == sp.zeros(3, 1)
    want_b = -(x_dot * sp.cos(psi) + y_dot * sp.sin(psi)) * psi_dot
    assert sp.simplify(ssym(mdl.b)[0] - want_b) == 0


def test_skate_turns_on_a_circle() -> None:
    """Moving at speed v along the blade: q̈ = (−vψ̇ sin ψ, vψ̇ cos ψ, τ/J), centripetal
    acceleration vψ̇ (a circle of radius v/ψ̇), and the sideways force λ_skate = −m v ψ̇."""
    mv, Jv, tv = 1.5, 0.2, 0.3
    mdl = model("skate", m=mv, J=Jv, tau=tv)
    rng = np.random.default_rng(231)
    for _ in range(STATES):
        ps, v, w = rng.uniform(-3.0, 3.0), rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)
        values = {"x": rng.uniform(-1, 1), "y": rng.uniform(-1, 1), "psi": ps,
                  "x_dot": v * np.cos(ps), "y_dot": v * np.sin(ps), "psi_dot": w}
        state = full_state(mdl, values)
        on_manifold(mdl, state)
        qdd, lam = solve_index1(mdl, state)
        close(qdd["x"], -v * w * np.sin(ps), "x_ddot")
        close(qdd["y"], v * w * np.cos(ps), "y_ddot")
        close(qdd["psi"], tv / Jv, "psi_ddot")
        close(lam["skate"], -mv * v * w, "lambda_skate")


# --- issue 4 systems ---------------------------------------------------------------------------


def test_atwood_acceleration_and_tension() -> None:
    """ÿ1 = (m1 − m2) g/(m1 + m2) and the tension −λ_string = 2 m1 m2 g/(m1 + m2)."""
    m1, m2, gv, lv = 1.7, 0.6, 9.81, 3.0
    mdl = model("atwood", m1=m1, m2=m2, g=gv, l=lv)
    rng = np.random.default_rng(8)
    for _ in range(STATES):
        y1, v1 = rng.uniform(0.5, 2.5), rng.uniform(-2.0, 2.0)
        state = full_state(mdl, {"y1": y1, "y2": lv - y1, "y1_dot": v1, "y2_dot": -v1})
        on_manifold(mdl, state)
        qdd, lam = solve_index1(mdl, state)
        close(qdd["y1"], (m1 - m2) * gv / (m1 + m2), "y1_ddot")
        close(qdd["y2"], -(m1 - m2) * gv / (m1 + m2), "y2_ddot")
        close(-lam["string"], 2 * m1 * m2 * gv / (m1 + m2), "string tension")


def test_spherical_pendulum_equations() -> None:
    """θ̈ = sin θ cos θ φ̇² − (g/l) sin θ and φ̈ = −2 cot θ θ̇ φ̇."""
    gv, lv = 9.81, 0.7
    mdl = model("spherical_pendulum", m=1.3, l=lv)
    rng = np.random.default_rng(9)
    for _ in range(STATES):
        th, ph = rng.uniform(0.2, 2.9), rng.uniform(-3.0, 3.0)
        thd, phd = rng.uniform(-3.0, 3.0, 2)
        state = full_state(mdl, {"theta": th, "phi": ph, "theta_dot": thd, "phi_dot": phd})
        qdd, _ = solve_index1(mdl, state)
        close(qdd["theta"], np.sin(th) * np.cos(th) * phd**2 - gv / lv * np.sin(th), "theta_ddot")
        close(qdd["phi"], -2 * thd * phd / np.tan(th), "phi_ddot")


def test_cart_pole_equations_with_the_driving_force() -> None:
    """(mc + mp) ẍ + mp l (θ̈ cos θ − θ̇² sin θ) = F0 cos(w t) and
    mp l² θ̈ + mp l ẍ cos θ − mp g l sin θ = 0, at random states and times."""
    mc, mp, lv, gv, F0, wv = 1.2, 0.3, 0.6, 9.81, 2.0, 1.7
    mdl = model("cart_pole", mc=mc, mp=mp, l=lv, g=gv, F0=F0, w=wv)
    rng = np.random.default_rng(10)
    for _ in range(STATES):
        tv, th = rng.uniform(0, 10), rng.uniform(-3, 3)
        xd, thd = rng.uniform(-2, 2), rng.uniform(-3, 3)
        state = full_state(mdl, {"x": rng.uniform(-1, 1), "theta": th, "x_dot": xd,
                                 "theta_dot": thd}, t=tv)
        qdd, _ = solve_index1(mdl, state)
        a, b = qdd["x"], qdd["theta"]
        close((mc + mp) * a + mp * lv * (b * np.cos(th) - thd**2 * np.sin(th)),
              F0 * np.cos(wv * tv), "cart equation")
        close(mp * lv**2 * b + mp * lv * a * np.cos(th) - mp * gv * lv * np.sin(th), 0.0,
              "pole equation")


def test_driven_damped_pendulum_equation() -> None:
    """m l² θ̈ + c θ̇ + m g l sin θ = F0 cos(w t): R = ½ c θ̇² and the torque enter τ."""
    c, F0, w, t = sp.symbols("c F0 w t")
    mdl = model("driven_damped_pendulum")
    residual = ssym(mdl.mass_matrix)[0, 0] * theta_ddot - ssym(mdl.forcing)[0]
    want = m * l**2 * theta_ddot + c * theta_dot + m * g * l * sp.sin(theta) - F0 * sp.cos(w * t)
    assert sp.simplify(residual - want) == 0


def test_kepler_equations() -> None:
    """m r̈ − m r θ̇² + μ m / r² = 0 and m r² θ̈ + 2 m r ṙ θ̇ = 0 (angular momentum conserved)."""
    mu = sp.Symbol("mu")
    mdl = model("kepler")
    residual = ssym(mdl.mass_matrix) * sp.Matrix([r_ddot, theta_ddot]) - ssym(mdl.forcing)
    want = sp.Matrix([m * r_ddot - m * r * theta_dot**2 + mu * m / r**2,
                      m * r**2 * theta_ddot + 2 * m * r * r_dot * theta_dot])
    assert sp.simplify(residual - want) == sp.zeros(2, 1)
    h = m * (r_dot**2 + r**2 * theta_dot**2) / 2 - mu * m / r
    assert sp.simplify(ssym(mdl.energy) - h) == 0


def test_moving_pivot_pendulum_follows_the_shaken_pendulum() -> None:
    """With the pivot at A sin(w t): θ̈ = −(g/l) sin θ + (A w²/l) sin(w t) cos θ, mapped to x, y."""
    gv, lv, Av, wv = 9.81, 0.9, 0.15, 2.5
    mdl = model("moving_pivot_pendulum", g=gv, l=lv, A=Av, w=wv, m=0.8)
    rng = np.random.default_rng(11)
    for _ in range(STATES):
        tv, th, thd = rng.uniform(0, 10), rng.uniform(-3, 3), rng.uniform(-3, 3)
        xp, vp, ap = Av * np.sin(wv * tv), Av * wv * np.cos(wv * tv), -Av * wv**2 * np.sin(wv * tv)
        values = {"x": xp + lv * np.sin(th), "y": -lv * np.cos(th),
                  "x_dot": vp + lv * np.cos(th) * thd, "y_dot": lv * np.sin(th) * thd}
        state = full_state(mdl, values, t=tv)
        on_manifold(mdl, state)
        qdd, _ = solve_index1(mdl, state)
        thdd = -gv / lv * np.sin(th) - ap / lv * np.cos(th)
        close(qdd["x"], ap + lv * (np.cos(th) * thdd - np.sin(th) * thd**2), "x_ddot")
        close(qdd["y"], lv * (np.sin(th) * thdd + np.cos(th) * thd**2), "y_ddot")


def test_slider_crank_matches_its_minimal_coordinate() -> None:
    """The natural-coordinate linkage (index1 and 004's formula) moves as the Lagrangian of the
    crank angle φ alone, with B = r(cos φ, sin φ) and the slider at r cos φ + √(l² − r² sin² φ)."""
    m1, m2, rv, lv, gv = 0.7, 1.3, 0.4, 1.1, 9.81
    mdl = model("slider_crank", m1=m1, m2=m2, r=rv, l=lv, g=gv)
    ph, phd, phdd = sp.symbols("ph ph_dot ph_ddot")
    xb, yb = rv * sp.cos(ph), rv * sp.sin(ph)
    xc = xb + sp.sqrt(lv**2 - (rv * sp.sin(ph)) ** 2)
    vel = {e: sp.diff(e, ph) * phd for e in (xb, yb, xc)}
    lag = m1 * (vel[xb] ** 2 + vel[yb] ** 2) / 2 + m2 * vel[xc] ** 2 / 2 - m1 * gv * yb
    p = sp.diff(lag, phd)
    accel = (sp.diff(lag, ph) - sp.diff(p, ph) * phd) / sp.diff(p, phd)
    kinematics = sp.lambdify((ph, phd, phdd), [
        xb, yb, xc, vel[xb], vel[yb], vel[xc],
        *(sp.diff(e, ph) * phdd + sp.diff(e, ph, 2) * phd**2 for e in (xb, yb, xc)),
    ])
    crank_accel = sp.lambdify((ph, phd), accel)
    rng = np.random.default_rng(12)
    for _ in range(STATES):
        angle, rate = rng.uniform(-3, 3), rng.uniform(-5, 5)
        x1, y1, x2, v1, w1, v2, *want = kinematics(angle, rate, crank_accel(angle, rate))
        values = {"x1": x1, "y1": y1, "x2": x2, "x1_dot": v1, "y1_dot": w1, "x2_dot": v2}
        state = full_state(mdl, values)
        on_manifold(mdl, state)
        qdd, _ = solve_index1(mdl, state)
        uk = udwadia_kalaba(mdl, state)
        want = [*want, 0.0]
        for got in ([qdd[q] for q in ("x1", "y1", "x2", "y2")], list(uk)):
            for q, gq, wq in zip(mdl.coordinates, got, want):
                close(gq, wq, f"{q}_ddot")
