"""Rigid bodies in three dimensions (issue 24): the ``orientation`` + list ``inertia`` form of a
mass, its located errors, and the bundled ``heavy_top`` against closed forms.

References: Goldstein, Poole & Safko, *Classical Mechanics*, 3rd ed., §4.4 and appendix A (the
Euler and Tait–Bryan sequences), §4.8 (ω from Rᵀ Ṙ), §5.7 (the heavy symmetric top); Landau &
Lifshitz, *Mechanics*, §32 (the triangle inequality of principal moments), §35 (Euler angles and
the top).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy
from bodies import PRECISE, angles_and_rates, euler_body, g_matrix, run, yml

from lagsim.analysis.check import check_system
from lagsim.errors import InputError, Location
from lagsim.spec.system import EULER_SEQUENCES, SystemSpec, load_spec, parse_spec
from lagsim.symbolic.model import body_angular_velocity, build_model, rotation_matrix, to_sympy

TOP = Path(__file__).resolve().parents[1] / "systems" / "heavy_top.yaml"
LABEL = "body.yaml"
def top_values() -> dict[str, float]:
    return load_spec(TOP).parameter_values


# --- the kinetic energy -----------------------------------------------------------------------


def test_heavy_top_kinetic_energy_is_goldsteins() -> None:
    """T = ½ I1' (θ̇² + φ̇² sin²θ) + ½ I3 (ψ̇ + φ̇ cos θ)², I1' = I1 + m l² (Goldstein §5.7, eq.
    5.63 with the parallel-axis moment about the pivot)."""
    model = build_model(load_spec(TOP))
    th, phd, thd, psd, m, l, I1, I3 = sympy.symbols(
        "theta phi_dot theta_dot psi_dot m l I1 I3")
    I1p = I1 + m * l**2
    textbook = (I1p * (thd**2 + phd**2 * sympy.sin(th) ** 2) / 2
                + I3 * (psd + phd * sympy.cos(th)) ** 2 / 2)
    assert model.kinetic is not None
    assert sympy.simplify(sympy.expand(to_sympy(model.kinetic) - textbook)) == 0


def test_principal_six_and_matrix_inertia_give_one_kinetic_energy() -> None:
    """[a, b, c], [a, b, c, 0, 0, 0] and diag(a, b, c) are one tensor; an off-diagonal Ixy adds
    Ixy (ω₁ω₂ + ω₂ω₁)/2 = Ixy ω₁ω₂ to T."""
    def kinetic(inertia: str) -> sympy.Expr:
        spec = parse_spec(yml(f"""
            parameters: {{a: 1, b: 2, c: 2.5, d: 0.1}}
            coordinates: [x, y, z]
            masses:
              body:
                mass: 1
                position: [0, 0, 0]
                orientation: {{euler: XYZ, angles: [x, y, z]}}
                inertia: {inertia}
            """), LABEL)
        kin = build_model(spec).kinetic
        assert kin is not None
        return to_sympy(kin)

    principal = kinetic("[a, b, c]")
    assert sympy.expand(principal - kinetic("[a, b, c, 0, 0, 0]")) == 0
    assert sympy.expand(principal - kinetic("[[a, 0, 0], [0, b, 0], [0, 0, c]]")) == 0
    spec = parse_spec(yml("""
        coordinates: [x, y, z]
        masses:
          body:
            mass: 1
            position: [0, 0, 0]
            orientation: {euler: XYZ, angles: [x, y, z]}
            inertia: [1, 1, 1]
        """), LABEL)
    mass = spec.masses[0]
    assert mass.orientation is not None
    q = tuple(se.Symbol(n) for n in "xyz")
    qd = tuple(se.Symbol(f"{n}_dot") for n in "xyz")
    w = [to_sympy(e) for e in body_angular_velocity(mass.orientation, q, qd, se.Symbol("t"))]
    coupled = kinetic("[a, b, c, d, 0, 0]")
    assert sympy.simplify(sympy.expand(coupled - principal - sympy.Symbol("d") * w[0] * w[1])) == 0


# --- every sequence ---------------------------------------------------------------------------


def _axis(letter: str, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return {"X": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
            "Y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
            "Z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[letter]


def _axis_rate(letter: str, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return {"X": np.array([[0, 0, 0], [0, -s, -c], [0, c, -s]]),
            "Y": np.array([[-s, 0, c], [0, 0, 0], [-c, 0, -s]]),
            "Z": np.array([[-s, -c, 0], [c, -s, 0], [0, 0, 0]])}[letter]


@pytest.mark.parametrize("extrinsic", [False, True])
@pytest.mark.parametrize("sequence", EULER_SEQUENCES)
def test_every_sequence_is_a_rotation_with_omega_from_rt_rdot(sequence: str,
                                                            extrinsic: bool) -> None:
    """R of each of the 12 sequences is orthogonal with det 1 and equals the product of the
    elementary rotations written out here (intrinsic: R_A(a) R_B(b) R_C(c); extrinsic about the
    fixed axes: R_C(c) R_B(b) R_A(a), Goldstein §4.4); lagsim's ω_b is the axial vector of the
    numerical Rᵀ Ṙ (Goldstein §4.8), Ṙ by the product rule, at random states to 1e-12."""
    spec = parse_spec(euler_body(sequence, extrinsic), LABEL)
    orientation = spec.masses[0].orientation
    assert orientation is not None
    q, qd = angles_and_rates()
    R = rotation_matrix(orientation)
    omega = body_angular_velocity(orientation, q, qd, se.Symbol("t"))
    order = [2, 1, 0] if extrinsic else [0, 1, 2]
    letters = [sequence[k] for k in order]
    rng = np.random.default_rng(24)
    for _ in range(20):
        angles, rates = rng.uniform(-math.pi, math.pi, 3), rng.normal(size=3)
        state = {**dict(zip(q, angles)), **dict(zip(qd, rates))}
        numeric = np.array([[float(R[i, j].subs(state)) for j in range(3)] for i in range(3)])
        factors = [_axis(x, angles[k]) for x, k in zip(letters, order)]
        expected = factors[0] @ factors[1] @ factors[2]
        assert np.abs(numeric - expected).max() < 1e-13
        assert np.abs(numeric.T @ numeric - np.eye(3)).max() < 1e-13
        assert abs(np.linalg.det(numeric) - 1.0) < 1e-13
        rdot = sum(rates[k] * np.linalg.multi_dot(
            [(_axis_rate if j == i else _axis)(x, angles[kk])
             for j, (x, kk) in enumerate(zip(letters, order))])
            for i, k in enumerate(order))
        W = expected.T @ rdot
        assert np.abs(W + W.T).max() < 1e-12
        axial = np.array([W[2, 1], W[0, 2], W[1, 0]])
        got = np.array([float(e.subs(state)) for e in omega])
        assert np.abs(got - axial).max() < 1e-12


# --- conservation and steady motion of the top ------------------------------------------------


def test_check_finds_p_phi_p_psi_and_h() -> None:
    """φ and ψ are cyclic (Goldstein §5.7): p_φ and p_ψ are conserved, and so is h (L has no t)."""
    spec = load_spec(TOP)
    report = check_system(spec, build_model(spec))
    kinds = {inv.name: inv.kind for inv in report.invariants}
    assert {"p_phi", "p_psi", "energy"} <= set(kinds)
    p = {inv.name: inv.value for inv in report.invariants}
    v = spec.parameter_values
    th, phd, psd = 0.5, 1.0, 30.0
    assert p["p_psi"] == pytest.approx(v["I3"] * (psd + phd * math.cos(th)), rel=1e-12)
    I1p = v["I1"] + v["m"] * v["l"] ** 2
    assert p["p_phi"] == pytest.approx(I1p * phd * math.sin(th) ** 2
                                       + v["I3"] * (psd + phd * math.cos(th)) * math.cos(th),
                                       rel=1e-12)
    assert report.degrees_of_freedom == 3


def test_simulation_conserves_h_p_phi_p_psi() -> None:
    """Over 10 s at rtol 1e-12, h, p_φ = I1' φ̇ sin²θ + I3 ω3 cos θ and p_ψ = I3 ω3 (ω3 = ψ̇ + φ̇
    cos θ, Goldstein §5.7) stay at their initial values to 1e-9 relative."""
    spec = load_spec(TOP)
    v = spec.parameter_values
    traj = run(spec, t_end=10.0, samples=501, **PRECISE)
    th, phd, thd, psd = traj["theta"], traj["phi_dot"], traj["theta_dot"], traj["psi_dot"]
    I1p = v["I1"] + v["m"] * v["l"] ** 2
    w3 = psd + phd * np.cos(th)
    p_psi = v["I3"] * w3
    p_phi = I1p * phd * np.sin(th) ** 2 + v["I3"] * w3 * np.cos(th)
    h = (I1p * (thd**2 + phd**2 * np.sin(th) ** 2) / 2 + v["I3"] * w3**2 / 2
         + v["m"] * v["g"] * v["l"] * np.cos(th))
    assert np.ptp(th) > 0.01, "the top nutates: the test is not run at a rest state"
    for series in (h, p_phi, p_psi, traj["energy"]):
        assert np.abs(series / series[0] - 1.0).max() < 1e-9


@pytest.mark.parametrize("root", ["slow", "fast"])
def test_steady_precession_keeps_theta(root: str) -> None:
    """The θ equation of the top (Goldstein §5.7; Landau & Lifshitz §35, problem 1) is
    I1' θ̈ = m g l sin θ + I1' φ̇² sin θ cos θ − I3 ω3 φ̇ sin θ, ω3 = ψ̇ + φ̇ cos θ. With θ̇ = 0 it
    stays θ̈ = 0 when, for sin θ ≠ 0, I1' cos θ φ̇² − I3 ω3 φ̇ + m g l = 0; with ψ̇ given,
    (I1' − I3) cos θ φ̇² − I3 ψ̇ φ̇ + m g l = 0, a quadratic in φ̇ whose two real roots (ψ̇
    large) are the slow and the fast precession. θ then stays at θ0 to 1e-9 over 10 s."""
    v = top_values()
    th0, psd = 0.5, 30.0
    I1p = v["I1"] + v["m"] * v["l"] ** 2
    a, b, c = (I1p - v["I3"]) * math.cos(th0), -v["I3"] * psd, v["m"] * v["g"] * v["l"]
    roots = sorted(np.roots([a, b, c]), key=abs)
    phd = float(np.real(roots[0] if root == "slow" else roots[1]))
    assert abs(a * phd**2 + b * phd + c) < 1e-9 * c
    spec = load_spec(TOP, initial={"theta": th0, "theta_dot": 0.0, "phi_dot": phd,
                                   "psi_dot": psd})
    traj = run(spec, t_end=10.0, samples=201, **PRECISE)
    assert np.abs(traj["theta"] - th0).max() < 1e-9
    assert traj["phi"][-1] == pytest.approx(10.0 * phd, rel=1e-9)


def test_the_matrix_form_of_the_top_runs_as_its_euler_form() -> None:
    """The same top with R = R_Z(φ) R_X(θ) R_Z(ψ) written out as a matrix (Goldstein eq. 4.46,
    transposed: lagsim's R maps body to space) gives the Euler form's trajectory to 1e-9."""
    euler = load_spec(TOP)
    text = TOP.read_text(encoding="utf-8").replace(
        "orientation: {euler: ZXZ, angles: [phi, theta, psi]}",
        "orientation:\n      matrix:\n"
        "        - [cos(phi)*cos(psi) - sin(phi)*cos(theta)*sin(psi),"
        " -cos(phi)*sin(psi) - sin(phi)*cos(theta)*cos(psi), sin(phi)*sin(theta)]\n"
        "        - [sin(phi)*cos(psi) + cos(phi)*cos(theta)*sin(psi),"
        " -sin(phi)*sin(psi) + cos(phi)*cos(theta)*cos(psi), -cos(phi)*sin(theta)]\n"
        "        - [sin(theta)*sin(psi), sin(theta)*cos(psi), cos(theta)]")
    assert "matrix:" in text
    matrix = parse_spec(text, "heavy_top_matrix.yaml")
    a = run(euler, t_end=10.0, samples=101, **PRECISE)
    b = run(matrix, t_end=10.0, samples=101, **PRECISE)
    for name in ("phi", "theta", "psi", "phi_dot", "theta_dot", "psi_dot"):
        assert np.abs(a[name] - b[name]).max() < 1e-9 * max(1.0, np.abs(a[name]).max())


# --- located errors ---------------------------------------------------------------------------

BODY = """
parameters: {I1: 1, I2: 2, I3: 2.5}
coordinates: [a, b, c]
masses:
  body:
    mass: 1
    position: [0, 0, 0]
    orientation: {euler: ZXZ, angles: [a, b, c]}
    inertia: [I1, I2, I3]
"""


def error(old: str, new: str) -> InputError:
    text = yml(BODY)
    assert old in text
    with pytest.raises(InputError) as info:
        parse_spec(text.replace(old, new), LABEL)
    return info.value


@pytest.mark.parametrize("old, new, line, col, message", [
    ("ZXZ", "ZZX", 7, 26, "the orientation of 'body': unknown Euler sequence 'ZZX'; the "
     "sequences are " + ", ".join(EULER_SEQUENCES)),
    ("[a, b, c]}", "[a, b]}", 7, 39, "the angles of 'body' are 2; ZXZ takes 3"),
    ("[I1, I2, I3]", "[I1, I2, I3, 0]", 8, 14, "the inertia of 'body' has 4 components; give "
     "[I1, I2, I3] (principal), [Ixx, Iyy, Izz, Ixy, Iyz, Izx] or a 3×3 matrix"),
    ("[I1, I2, I3]", "[[I1, 0.1, 0], [0, I2, 0], [0, 0, I3]]", 8, 14,
     "the inertia of 'body' is not symmetric: entry (1,2) is 0.1 but (2,1) is 0"),
    ("[I1, I2, I3]", "[I1, -I2, I3]", 8, 14, "the inertia of 'body' is not positive at the "
     "parameter values: its principal moments are -2, 1, 2.5"),
    ("[I1, I2, I3]", "[I1, I1, 3]", 8, 14, "the inertia of 'body' violates the triangle "
     "inequality at the parameter values: the principal moments 1, 1, 3 need the largest ≤ the "
     "sum of the other two"),
    ("[0, 0, 0]", "[0, 0]", 6, 15, "the position of 'body' has 2 components; a body with an "
     "'orientation' needs 3"),
    ("    inertia: [I1, I2, I3]\n", "", 5, 5, "mass 'body' has an 'orientation' and needs "
     "'inertia': [I1, I2, I3], [Ixx, Iyy, Izz, Ixy, Iyz, Izx] or a 3×3 matrix, about its centre "
     "of mass in body axes"),
    ("    orientation: {euler: ZXZ, angles: [a, b, c]}\n", "", 7, 14, "mass 'body': a list "
     "'inertia' is a 3-D body's and needs 'orientation' ({euler: ZXZ, angles: [...]} or "
     "{matrix: [[...], [...], [...]]}); a planar body gives one moment and 'angle'"),
    ("{euler: ZXZ, angles: [a, b, c]}", "{euler: ZXZ, angels: [a, b, c]}", 7, 31,
     "unknown key 'angels' in the orientation of 'body' (did you mean 'angles'?); the keys "
     "are euler, angles, extrinsic, matrix, quaternion"),
    ("{euler: ZXZ, angles: [a, b, c]}", "{quaternion: [a, b, c]}", 7, 31,
     "the quaternion of 'body' has 3 components; give 4, [e0, e1, e2, e3] (scalar first)"),
    ("{euler: ZXZ, angles: [a, b, c]}", "{euler: ZXZ, matrix: [[1, 0, 0]]}", 7, 18,
     "the orientation of 'body' needs exactly one of 'euler' (with 'angles'), 'matrix' and "
     "'quaternion'"),
    ("{euler: ZXZ, angles: [a, b, c]}", "{euler: ZXZ, angles: [a, b, c], extrinsic: 1}", 7, 61,
     "the orientation of 'body': 'extrinsic' is true or false, not 1"),
])
def test_located_errors(old: str, new: str, line: int, col: int, message: str) -> None:
    err = error(old, new)
    assert err.message == message
    assert err.location == Location(LABEL, line, col)
    assert str(err) == f"{LABEL}:{line}:{col}: {message}"
    assert err.exit_code == 2


def test_a_matrix_that_is_not_a_rotation_is_refused_at_a_random_state() -> None:
    """R = [[cos a, -sin a, 0], [sin a, cos a, 0], [0, 0, 1 + b]] is orthogonal only at b = 0;
    a random state (seeded) finds it, and the message gives the state and the tolerance."""
    err = error("{euler: ZXZ, angles: [a, b, c]}",
                "{matrix: [[cos(a), -sin(a), 0], [sin(a), cos(a), 0], [0, 0, 1 + b]]}")
    assert err.location == Location(LABEL, 7, 27)
    assert err.message.startswith("the orientation matrix of 'body' is not a rotation: at a=")
    assert err.message.endswith("(allowed 1e-09)")
    reflection = error("{euler: ZXZ, angles: [a, b, c]}",
                       "{matrix: [[cos(a), -sin(a), 0], [sin(a), cos(a), 0], [0, 0, -1]]}")
    assert "det R = -1 " in reflection.message


def test_the_planar_body_is_unchanged() -> None:
    """A scalar inertia with an angle stays the planar body: T = ½ m |ṙ|² + ½ J θ̇²."""
    spec = parse_spec(yml("""
        parameters: {m: 2, l: 1, J: 0.5}
        coordinates: [theta]
        masses:
          rod:
            mass: m
            position: [l*sin(theta), -l*cos(theta)]
            inertia: J
            angle: theta
        """), LABEL)
    (rod,) = spec.masses
    assert rod.orientation is None and rod.body_inertia is None
    kin = build_model(spec).kinetic
    assert kin is not None
    m, l, J, w = sympy.symbols("m l J theta_dot")
    assert sympy.simplify(to_sympy(kin) - (m * l**2 + J) * w**2 / 2) == 0


# --- quaternions ------------------------------------------------------------------------------

QUATERNION_TOP = TOP.read_text(encoding="utf-8").split("initial:")[0].replace(
    "coordinates: [phi, theta, psi]", "coordinates: [e0, e1, e2, e3]").replace(
    "position: [l*sin(theta)*sin(phi), -l*sin(theta)*cos(phi), l*cos(theta)]",
    "position: [2*l*(e1*e3 + e0*e2), 2*l*(e2*e3 - e0*e1), l*(e0**2 - e1**2 - e2**2 + e3**2)]"
).replace("orientation: {euler: ZXZ, angles: [phi, theta, psi]}",
          "orientation: {quaternion: [e0, e1, e2, e3]}")
"""The heavy top in a unit quaternion: the centre of mass is l R e₃, the third column of R(e)."""


def quaternion_top(theta: float, phi_dot: float, psi_dot: float) -> SystemSpec:
    """The quaternion top at the state of the Euler top with φ = ψ = 0, θ̇ = 0: e = (cos θ/2,
    sin θ/2, 0, 0) (Goldstein eq. 4.67), ω_b = (0, φ̇ sin θ, φ̇ cos θ + ψ̇) (Goldstein eq. 4.87)
    and ė = ½ Gᵀ ω_b (Schaub & Junkins §3.5: G Gᵀ = 1 for |e| = 1)."""
    e = np.array([math.cos(theta / 2), math.sin(theta / 2), 0.0, 0.0])
    w = np.array([0.0, phi_dot * math.sin(theta), phi_dot * math.cos(theta) + psi_dot])
    ed = 0.5 * g_matrix(e).T @ w
    initial = {**{f"e{i}": float(e[i]) for i in range(4)},
               **{f"e{i}_dot": float(ed[i]) for i in range(4)}}
    return parse_spec(QUATERNION_TOP, "heavy_top_quaternion.yaml", initial=initial)


def test_quaternion_top_runs_as_the_euler_top() -> None:
    """cos θ = R₃₃ = e0² − e1² − e2² + e3² of the quaternion top follows the Euler top's θ to
    1e-9 over 10 s; |e| = 1 holds to 1e-12 with projection, and h is conserved to 1e-9."""
    spec = quaternion_top(0.5, 1.0, 30.0)
    traj = run(spec, t_end=10.0, samples=101, stabilize="projection", **PRECISE)
    euler = run(load_spec(TOP), t_end=10.0, samples=101, **PRECISE)
    e = np.array([traj[f"e{i}"] for i in range(4)])
    assert np.abs(e[0]**2 - e[1]**2 - e[2]**2 + e[3]**2 - np.cos(euler["theta"])).max() < 1e-9
    assert np.abs((e**2).sum(axis=0) - 1.0).max() < 1e-12
    h = traj["energy"]
    assert np.abs(h / h[0] - 1.0).max() < 1e-9
    assert h[0] == pytest.approx(euler["energy"][0], rel=1e-12)


def test_check_shows_the_unit_constraint_and_three_degrees_of_freedom() -> None:
    spec = quaternion_top(0.5, 1.0, 30.0)
    (unit,) = spec.constraints
    assert unit.name == "top_unit" and unit.kind == "holonomic"
    assert se.expand(unit.expression.expr - (sum(se.Symbol(f"e{i}") ** 2 for i in range(4))
                                             - 1)) == 0
    report = check_system(spec, build_model(spec))
    assert [c.name for c in report.constraints] == ["top_unit"]
    assert report.degrees_of_freedom == 3


def test_quaternion_omega_is_the_axial_vector_of_rt_rdot() -> None:
    """At random unit e and ė ⊥ e, R(e) is orthogonal with det 1 and lagsim's ω_b = 2 G ė is the
    axial vector of Rᵀ Ṙ, Ṙ = Σ ∂R/∂eᵢ ėᵢ from the same symbolic R (to 1e-12)."""
    spec = quaternion_top(0.5, 1.0, 30.0)
    orientation = spec.masses[0].orientation
    assert orientation is not None
    q = tuple(se.Symbol(f"e{i}") for i in range(4))
    qd = tuple(se.Symbol(f"e{i}_dot") for i in range(4))
    R = rotation_matrix(orientation)
    Rdot = [[sum((R[i, j].diff(x) * v for x, v in zip(q, qd)), se.Integer(0))
             for j in range(3)] for i in range(3)]
    omega = body_angular_velocity(orientation, q, qd, se.Symbol("t"))
    rng = np.random.default_rng(4)
    for _ in range(20):
        e = rng.normal(size=4)
        e /= np.linalg.norm(e)
        ed = rng.normal(size=4)
        ed -= e * (e @ ed)
        state = {**dict(zip(q, e)), **dict(zip(qd, ed))}
        Rn = np.array([[float(R[i, j].subs(state)) for j in range(3)] for i in range(3)])
        Rd = np.array([[float(Rdot[i][j].subs(state)) for j in range(3)] for i in range(3)])
        assert np.abs(Rn.T @ Rn - np.eye(3)).max() < 1e-13
        assert abs(np.linalg.det(Rn) - 1.0) < 1e-13
        W = Rn.T @ Rd
        axial = np.array([W[2, 1], W[0, 2], W[1, 0]])
        got = np.array([float(x.subs(state)) for x in omega])
        assert np.abs(got - axial).max() < 1e-12


def test_a_constraint_named_as_the_unit_constraint_is_refused() -> None:
    text = QUATERNION_TOP + "constraints:\n  - {name: top_unit, holonomic: e0 - 1}\n"
    with pytest.raises(InputError) as info:
        parse_spec(text, LABEL)
    line = text.splitlines().index("  - {name: top_unit, holonomic: e0 - 1}") + 1
    assert str(info.value) == (f"{LABEL}:{line}:33: constraint name 'top_unit' is lagsim's for "
                               "the unit quaternion of 'top'; rename the constraint")


def test_nutation_frequency_of_a_fast_top() -> None:
    """With p_φ and p_ψ conserved, θ moves in U_eff(θ) = (p_φ − p_ψ cos θ)² / (2 I1' sin²θ)
    + m g l cos θ with inertia I1' (Goldstein §5.7 eq. 5.71; Landau & Lifshitz §35 problem 1); a
    small nutation about its minimum θ* has ω_n = √(U_eff''(θ*) / I1'), and a fast top's is
    ≈ I3 ω3 / I1' (Landau & Lifshitz §35). Started at a steady precession with θ̇ = 1e-4, the
    simulated θ oscillates at ω_n to 1e-7 (measured 2.5e-9), and ω_n is within 5 % of
    I3 ω3 / I1' (4.7 % here: ψ̇ = 30 is only moderately fast)."""

    from scipy.optimize import minimize_scalar

    v = top_values()
    th0, psd, thd = 0.5, 30.0, 1e-4
    I1p, I3, mgl = v["I1"] + v["m"] * v["l"] ** 2, v["I3"], v["m"] * v["g"] * v["l"]
    a, b = (I1p - I3) * math.cos(th0), -I3 * psd
    phd = float(np.real(sorted(np.roots([a, b, mgl]), key=abs)[0]))
    w3 = psd + phd * math.cos(th0)
    p_psi = I3 * w3
    p_phi = I1p * phd * math.sin(th0) ** 2 + p_psi * math.cos(th0)
    th = sympy.Symbol("theta")
    u_eff = ((p_phi - p_psi * sympy.cos(th)) ** 2 / (2 * I1p * sympy.sin(th) ** 2)
             + mgl * sympy.cos(th))
    lowest = minimize_scalar(sympy.lambdify(th, u_eff), bounds=(0.3, 0.7), method="bounded",
                             options={"xatol": 1e-12})
    stiffness = float(sympy.diff(u_eff, th, 2).subs(th, lowest.x))
    omega_n = math.sqrt(stiffness / I1p)
    assert omega_n == pytest.approx(I3 * w3 / I1p, rel=0.05)

    spec = load_spec(TOP, initial={"theta": th0, "theta_dot": thd, "phi_dot": phd,
                                   "psi_dot": psd})
    traj = run(spec, t_end=3.0, samples=30001, **PRECISE)
    t, rate = traj["t"], traj["theta_dot"]
    down = np.nonzero((rate[:-1] > 0) & (rate[1:] <= 0))[0]
    crossings = t[down] + (t[down + 1] - t[down]) * rate[down] / (rate[down] - rate[down + 1])
    period = (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    assert len(crossings) >= 8
    assert 2 * math.pi / period == pytest.approx(omega_n, rel=1e-7)


def test_check_of_a_quaternion_body_at_the_zero_start_says_why_instead_of_crashing() -> None:
    """A quaternion left at e = 0 has M = 0 there (T = ½ωᵀIω + ½·4Ī(e·ė)² vanishes with e): the
    consistent start cannot measure a least change in M's metric. `check` reports that as a
    note and still lists the unit constraint (it raised numpy's LinAlgError as an internal
    error); `simulate` refuses the same start with a located error. (Left out of ``initial``
    entirely, the quaternion starts at the identity instead: tests/test_torque_free_body.py.)"""
    spec = parse_spec(yml("""
        coordinates: [e0, e1, e2, e3]
        parameters: {m: 1.0, I1: 1.0, I3: 0.5}
        masses:
          body:
            mass: m
            position: [0, 0, 0]
            orientation: {quaternion: [e0, e1, e2, e3]}
            inertia: [I1, I1, I3]
        initial: {e0: 0}
        """), "<zero quaternion>")
    report = check_system(spec, build_model(spec))
    text = report.to_text()
    assert "body_unit" in text
    assert "no consistent start (the mass matrix is singular at the start" in text
    with pytest.raises(InputError, match="mass matrix is singular at the start"):
        run(spec, t_end=0.1)
