"""Points of bodies (issue 24): loads at ``body.point``, ``torques``, springs with a stiffness,
``no_slip`` constraints, their located errors, and the bundled ``rolling_disk``.

References: Goldstein, Poole & Safko, *Classical Mechanics*, 3rd ed., §4.9 (v_P = ṙ_c + ω × ρ),
§5.5 (Euler's equations); Kane & Levinson, *Dynamics: Theory and Applications*, ch. 4
(generalized forces by virtual power); Neimark & Fufaev, *Dynamics of Nonholonomic Systems*
(AMS 1972) and O'Reilly, "The dynamics of rolling disks and sliding disks", Nonlinear Dynamics
10 (1996) 287–305 (the rolling disk, its steady motions and the stability of upright rolling).
The two disk relations used below are derived again here, in the docstrings of :func:`steady`
and of the stability test, and checked by simulation.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy
from bodies import PRECISE, angles_and_rates, euler_body, run, yml

from lagsim.analysis.check import check_system
from lagsim.errors import InputError
from lagsim.output.trajectory import Trajectory
from lagsim.spec.system import EULER_SEQUENCES, SystemSpec, load_spec, parse_spec
from lagsim.symbolic.bodies import euler_space_rates
from lagsim.symbolic.model import (
    Model,
    body_angular_velocity,
    build_model,
    rotation_matrix,
    to_sympy,
)

ROOT = Path(__file__).resolve().parents[1]
DISK = ROOT / "systems" / "rolling_disk.yaml"
LABEL = "points.yaml"


def spec_of(text: str) -> SystemSpec:
    return parse_spec(yml(text), LABEL)


def solve(model: Model, state: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """q̈ and λ of M q̈ = F + Aᵀλ, A q̈ = b at ``state`` (names → values), solved here with
    numpy from the model's M, F, A and b."""
    full = {**{s.name: 0.0 for s in (*model.q, *model.qd)}, **model.parameters, **state}
    subs = {se.Symbol(k): v for k, v in full.items()}
    subs[model.t] = state.get("t", 0.0)
    M = np.array(model.mass_matrix.subs(subs).tolist(), dtype=float)
    F = np.array(model.forcing.subs(subs).tolist(), dtype=float).ravel()
    n, m = model.n, model.m
    if m == 0:
        return np.linalg.solve(M, F), np.zeros(0)
    A = np.array(model.A.subs(subs).tolist(), dtype=float)
    b = np.array(model.b.subs(subs).tolist(), dtype=float).ravel()
    K = np.block([[M, -A.T], [A, np.zeros((m, m))]])
    x = np.linalg.solve(K, np.concatenate([F, b]))
    return x[:n], x[n:]


# --- rolling down an incline -------------------------------------------------------------------

ALPHA = 0.4
"""The incline's angle; gravity is turned by it, x points down the slope."""


def test_a_sphere_rolls_down_an_incline_at_five_sevenths_g_sin_alpha() -> None:
    """A uniform sphere (I = 2/5 m R²) rolling without slipping: ẍ = 5/7 g sin α, and the
    friction is the multiplier of contact_x, λ = m ẍ − m g sin α = −2/7 m g sin α (up the slope,
    M q̈ = F + Aᵀλ with A's row ẋ − R ω_y). Checked at rest and while rolling at 2 m/s, to
    1e-12 relative; the sideways row holds ÿ = 0."""
    spec = spec_of(f"""
        parameters: {{m: 2.0, R: 0.3, g: 9.81, alpha: {ALPHA}}}
        coordinates: [x, y, yaw, lean, spin]
        masses:
          ball:
            mass: m
            position: [x, y, R]
            orientation: {{euler: ZXY, angles: [yaw, lean, spin]}}
            inertia: [2/5*m*R**2, 2/5*m*R**2, 2/5*m*R**2]
            points:
              contact: {{space: [0, 0, -R]}}
        gravity: [g*sin(alpha), 0, -g*cos(alpha)]
        constraints:
          - {{name: contact, no_slip: ball.contact, directions: [x, y]}}
        """)
    model = build_model(spec)
    assert [c.name for c in model.constraints] == ["contact_x", "contact_y"]
    m, g, R = 2.0, 9.81, 0.3
    rest = {"x": 0.0, "y": 0.0, "yaw": 0.0, "lean": 0.0, "spin": 0.0}
    rolling = {**rest, "yaw": 0.2, "x_dot": 2.0 * math.cos(0.2), "y_dot": 2.0 * math.sin(0.2),
               "spin_dot": 2.0 / R}
    for state in (rest, rolling):
        qdd, lam = solve(model, state)
        heading = np.array([math.cos(state["yaw"]), math.sin(state["yaw"])])
        expected = 5 / 7 * g * math.sin(ALPHA)
        assert qdd[0] == pytest.approx(expected, rel=1e-12)
        assert abs(qdd[1]) < 1e-12
        assert lam[0] == pytest.approx(-2 / 7 * m * g * math.sin(ALPHA), rel=1e-12)
        assert abs(lam[1]) < 1e-12
        assert heading @ heading == pytest.approx(1.0)


def test_a_cylinder_rolls_at_two_thirds_g_sin_alpha_in_every_formulation() -> None:
    """A planar uniform cylinder (I = ½ m R²): ẍ = 2/3 g sin α and λ = −1/3 m g sin α
    (friction up the slope). Simulated from rest for 1 s in the formulations that take velocity
    constraints: x(1) = ⅓ g sin α to 1e-9 and the CSV's lambda_contact_x column equals the
    closed form to 1e-9."""
    spec = spec_of(f"""
        parameters: {{m: 1.5, R: 0.2, g: 9.81, alpha: {ALPHA}}}
        coordinates: [x, theta]
        masses:
          drum:
            mass: m
            position: [x, R]
            inertia: 1/2*m*R**2
            angle: theta
            points:
              contact: {{space: [0, -R]}}
        gravity: [g*sin(alpha), -g*cos(alpha)]
        constraints:
          - {{no_slip: drum.contact, directions: [x]}}
        initial: {{x: 0, theta: 0}}
        """)
    g, m = 9.81, 1.5
    qdd, lam = solve(build_model(spec), {"x": 0.3, "theta": -0.7, "x_dot": 0.4,
                                          "theta_dot": -2.0})
    assert qdd[0] == pytest.approx(2 / 3 * g * math.sin(ALPHA), rel=1e-12)
    assert lam[0] == pytest.approx(-1 / 3 * m * g * math.sin(ALPHA), rel=1e-12)
    for formulation in ("index1", "udwadia-kalaba"):
        tr = run(spec, t_end=1, formulation=formulation, samples=11, **PRECISE)
        assert tr["x"][-1] == pytest.approx(g * math.sin(ALPHA) / 3, rel=1e-9), formulation
        friction = tr["lambda_contact_x"]
        assert np.abs(friction + m * g * math.sin(ALPHA) / 3).max() < 1e-9, formulation


# --- loads at points and torques ---------------------------------------------------------------


def test_a_force_at_the_end_of_a_rod_gives_its_torque_r_cross_f() -> None:
    """A planar rod (centre (x, y), angle θ, half-length a) pushed by F = (Fx, Fy) at its end
    [a, 0] (body axes): Q = (Fx, Fy, a(−sin θ Fx + cos θ Fy)), the force and the torque r × F
    about the centre, exactly."""
    spec = spec_of("""
        parameters: {m: 1, a: 0.5, Fx: 0.3, Fy: -1.2}
        coordinates: [x, y, theta]
        masses:
          rod:
            mass: m
            position: [x, y]
            inertia: m*(2*a)**2/12
            angle: theta
            points:
              tip: [a, 0]
        loads:
          rod.tip: [Fx, Fy]
        """)
    tau = [to_sympy(e) for e in build_model(spec).tau]
    x, th, a, Fx, Fy = sympy.symbols("x theta a Fx Fy")
    assert [sympy.simplify(e) for e in (tau[0] - Fx, tau[1] - Fy)] == [0, 0]
    assert sympy.simplify(tau[2] - a * (-sympy.sin(th) * Fx + sympy.cos(th) * Fy)) == 0


def test_a_load_at_a_point_of_a_3d_body_is_the_load_at_its_centre_plus_r_cross_f() -> None:
    """τ = J_vᵀF with v_P = ṙ_c + ω × r equals the load F at the centre plus the torque r × F
    in space axes (written out here from R), at random states to 1e-12."""
    base = """
        parameters: {m: 1, Fx: 0.3, Fy: -1.2, Fz: 0.7}
        coordinates: [x, y, z, a, b, c]
        masses:
          body:
            mass: m
            position: [x, y, z]
            orientation: {euler: ZYX, angles: [a, b, c]}
            inertia: [1, 2, 2.5]
            points:
              tip: [0.4, -0.2, 0.1]
        """
    at_point = build_model(parse_spec(yml(base) + "loads:\n  body.tip: [Fx, Fy, Fz]\n", LABEL))
    spec = spec_of(base)
    orientation = spec.masses[0].orientation
    assert orientation is not None
    R = to_sympy(rotation_matrix(orientation))
    r = R * sympy.Matrix([0.4, -0.2, 0.1])
    F = sympy.Matrix(sympy.symbols("Fx Fy Fz"))
    M = r.cross(F)
    moment = ", ".join(f"'{sympy.sstr(e)}'" for e in M)
    split = build_model(parse_spec(yml(base) + "loads:\n  body: [Fx, Fy, Fz]\ntorques:\n"
                                   f"  body: [{moment}]\n", LABEL))
    rng = np.random.default_rng(7)
    values = {se.Symbol("Fx"): 0.3, se.Symbol("Fy"): -1.2, se.Symbol("Fz"): 0.7}
    for _ in range(5):
        state = {**values, **{se.Symbol(n): float(v) for n, v in
                              zip("xyzabc", rng.uniform(-1.2, 1.2, 6))}}
        one = [float(e.subs(state)) for e in at_point.tau]
        two = [float(e.subs(state)) for e in split.tau]
        assert np.abs(np.array(one) - np.array(two)).max() < 1e-12
        assert abs(one[0] - 0.3) < 1e-15 and abs(one[2] - 0.7) < 1e-15


@pytest.mark.parametrize("axes", ["space", "body_axes"])
def test_a_torque_on_a_body_at_rest_gives_omega_dot_i_inverse_m(axes: str) -> None:
    """From rest, Euler's equations give I ω̇ = M (Goldstein §5.5): in space axes ω̇_s =
    (R I_b Rᵀ)⁻¹ M, in body axes ω̇_b = I_b⁻¹ M_b. ω̇ = J_ω q̈ at rest, with q̈ from M q̈ = τ;
    to 1e-12 at a generic orientation."""
    spec = spec_of(f"""
        coordinates: [a, b, c]
        masses:
          body:
            mass: 1
            position: [0, 0, 0]
            orientation: {{euler: ZXZ, angles: [a, b, c]}}
            inertia: [1, 2, 2.5]
        torques:
          body: {{{axes}: [0.3, -0.5, 0.8]}}
        """)
    model = build_model(spec)
    angles = {"a": 0.4, "b": 1.1, "c": -0.7}
    qdd, _ = solve(model, angles)
    orientation = spec.masses[0].orientation
    assert orientation is not None
    q = model.q
    rates = tuple(se.Symbol(f"{n}_dot") for n in "abc")
    omega_b = body_angular_velocity(orientation, q, rates, model.t)
    subs = {se.Symbol(k): v for k, v in angles.items()}
    J = np.array([[float(se.diff(w, r).subs(subs)) for r in rates] for w in omega_b])
    R = np.array(rotation_matrix(orientation).subs(subs).tolist(), dtype=float)
    inertia = np.diag([1.0, 2.0, 2.5])
    moment = np.array([0.3, -0.5, 0.8])
    wdot_b = J @ qdd
    if axes == "body_axes":
        expected = np.linalg.solve(inertia, moment)
        assert np.abs(wdot_b - expected).max() < 1e-12
    else:
        expected = np.linalg.solve(R @ inertia @ R.T, moment)
        assert np.abs(R @ wdot_b - expected).max() < 1e-12


@pytest.mark.parametrize("extrinsic", [False, True])
@pytest.mark.parametrize("sequence", EULER_SEQUENCES)
def test_space_angular_velocity_is_r_omega_body(sequence: str, extrinsic: bool) -> None:
    """The short ω_s = ȧ e_A + ḃ R_A e_B + ċ R_A R_B e_C equals R ω_b for each sequence, at
    random states to 1e-12."""
    spec = parse_spec(euler_body(sequence, extrinsic), LABEL)
    orientation = spec.masses[0].orientation
    assert orientation is not None
    q, qd = angles_and_rates()
    R = rotation_matrix(orientation)
    body = body_angular_velocity(orientation, q, qd, se.Symbol("t"))
    space = euler_space_rates(sequence, q, qd, extrinsic)
    rng = np.random.default_rng(3)
    for _ in range(5):
        state = dict(zip((*q, *qd), (float(v) for v in rng.uniform(-2, 2, 6))))
        Rn = np.array(R.subs(state).tolist(), dtype=float)
        wb = np.array([float(w.subs(state)) for w in body])
        ws = np.array([float(w.subs(state)) for w in space])
        assert np.abs(Rn @ wb - ws).max() < 1e-12


# --- springs between points --------------------------------------------------------------------

HUNG = """
    parameters: {{m: 2.0, k: 50.0, g: 9.81, a: 0.3, L0: 0.4, c: {c}}}
    coordinates: [x, y, theta]
    masses:
      plate:
        mass: m
        position: [x, y]
        inertia: 0.05
        angle: theta
        points:
          hook: [0, a]
    gravity: [0, -g]
    springs:
      - {{ends: [[0, 0], plate.hook], stiffness: k, length: L0{damping}}}
    initial: {{x: 0, y: {y0}, theta: 0}}
    """


def test_a_body_hung_by_a_spring_at_a_point_bounces_at_sqrt_k_over_m() -> None:
    """A plate hung from (0, 0) by a spring (k, rest length L0) at its point [0, a] above the
    centre, released upright 0.05 below equilibrium: it stays upright and y(t) = y_eq − 0.05
    cos(√(k/m) t), y_eq = −(L0 + mg/k) − a, to 1e-9 over 2 s; h (with the spring's U) is
    conserved to 1e-9. With a damper c: y − y_eq = −0.05 e^{−βt}(cos ω_d t + β/ω_d sin ω_d t),
    β = c/2m, ω_d = √(k/m − β²)."""
    m, k, g, a, L0 = 2.0, 50.0, 9.81, 0.3, 0.4
    y_eq = -(L0 + m * g / k) - a
    w = math.sqrt(k / m)
    spec = spec_of(HUNG.format(c=0, damping="", y0=y_eq - 0.05))
    tr = run(spec, t_end=2, samples=201, **PRECISE)
    t = tr["t"]
    assert np.abs(tr["y"] - (y_eq - 0.05 * np.cos(w * t))).max() < 1e-9
    assert np.abs(tr["theta"]).max() < 1e-12 and np.abs(tr["x"]).max() < 1e-12
    assert np.abs(tr["energy"] - tr["energy"][0]).max() < 1e-9
    c = 1.2
    beta = c / (2 * m)
    wd = math.sqrt(k / m - beta**2)
    damped = run(spec_of(HUNG.format(c=c, damping=", damping: c", y0=y_eq - 0.05)),
                 t_end=2, samples=201, **PRECISE)
    closed = y_eq - 0.05 * np.exp(-beta * t) * (np.cos(wd * t) + beta / wd * np.sin(wd * t))
    assert np.abs(damped["y"] - closed).max() < 1e-9


def test_a_spring_at_a_point_is_drawn_from_the_points_path() -> None:
    """``lagsim animate`` draws the spring with a stiffness between its ends, and the point's
    path is there to draw it from: plate.hook at (x − a sin θ, y + a cos θ), exactly."""
    from lagsim.analysis.kinematics import springs

    spec = spec_of(HUNG.format(c=0, damping="", y0=-1.0))
    model = build_model(spec)
    assert springs(spec, model) == [((0.0, 0.0), "plate.hook")]
    (name, hook), = model.point_positions
    x, y, th, a = sympy.symbols("x y theta a")
    assert name == "plate.hook"
    assert [sympy.simplify(to_sympy(e) - w) for e, w in
            zip(hook, (x - a * sympy.sin(th), y + a * sympy.cos(th)))] == [0, 0]


def test_a_spring_between_two_bodies_points_conserves_energy() -> None:
    """Two free planar plates joined by a spring between off-centre points, tumbling: h = T +
    U (the spring's ½k(|d| − L0)² included) is conserved to 1e-9 over 3 s, and the spring's U
    is in the model's potential."""
    spec = spec_of("""
        parameters: {k: 30.0, L0: 0.5}
        coordinates: [x1, y1, t1, x2, y2, t2]
        masses:
          one: {mass: 1, position: [x1, y1], inertia: 0.1, angle: t1, points: {p: [0.2, 0.1]}}
          two: {mass: 2, position: [x2, y2], inertia: 0.3, angle: t2, points: {p: [-0.1, 0.3]}}
        springs:
          - {ends: [one.p, two.p], stiffness: k, length: L0}
          - [one, two]
        initial: {x1: 0, y1: 0, t1: 0.3, x2: 1.0, y2: 0.2, t2: -0.5, t1_dot: 2.0, y2_dot: 1.0}
        """)
    model = build_model(spec)
    d2 = ((sympy.Symbol("x1") + 0.2 * sympy.cos(sympy.Symbol("t1"))
           - 0.1 * sympy.sin(sympy.Symbol("t1")))
          - (sympy.Symbol("x2") - 0.1 * sympy.cos(sympy.Symbol("t2"))
             - 0.3 * sympy.sin(sympy.Symbol("t2"))))
    assert sympy.Symbol("k") in to_sympy(model.potential).free_symbols
    assert d2.free_symbols <= to_sympy(model.potential).free_symbols
    tr = run(spec, t_end=3, samples=31, **PRECISE)
    assert np.abs(tr["energy"] - tr["energy"][0]).max() < 1e-9
    assert np.ptp(tr["t1"]) > 1.0
    assert spec.springs == (("one", "two"),) and len(spec.spring_forces) == 1


# --- errors ------------------------------------------------------------------------------------

BODY = """
    parameters: {m: 1, R: 0.1}
    coordinates: [x, y, a, b, c]
    masses:
      disk:
        mass: m
        position: [x, y, R]
        orientation: {euler: ZXY, angles: [a, b, c]}
        inertia: [1, 2, 1]
        points:
          contact: {space: [0, 0, -R]}
      bead: {mass: m, position: [x, 0, 0]}
    """


@pytest.mark.parametrize(("extra", "where", "words"), [
    ("loads:\n  dsk.contact: [0, 0, 1]\n", (13, 3), "did you mean 'disk'"),
    ("loads:\n  disk.contcat: [0, 0, 1]\n", (13, 3), "did you mean 'contact'"),
    ("torques:\n  bead: [0, 0, 1]\n", (13, 3), "point mass"),
    ("constraints:\n  - {no_slip: disk.rim}\n", (13, 15), "no point 'rim'"),
    ("springs:\n  - {ends: [origin, bead.tip], stiffness: 1}\n", (13, 21),
     "'bead' declares no 'points'"),
    ("torques:\n  disk: [0, 1]\n", (13, 9), "has 2 components; give 3"),
    ("constraints:\n  - {no_slip: disk.contact, directions: [x, w]}\n", (13, 45),
     "not a space axis"),
])
def test_a_wrong_reference_is_one_located_line(extra: str, where: tuple[int, int],
                                                words: str) -> None:
    """Each mistake is one line at its FILE:LINE:COL, saying what is wrong and how to mend it."""
    with pytest.raises(InputError) as err:
        spec_of(BODY.rstrip(" ") + textwrap.indent(extra, "    "))
    message = str(err.value)
    assert "\n" not in message and words in message, message
    assert (err.value.location.line, err.value.location.column) == where, message


@pytest.mark.parametrize(("points", "words"), [
    ("[0, 0]", "has 2 components; the position of 'disk' has 3"),
    ("[0, 0, -R*a_dot]", "may not depend on velocities"),
    ("{space: [0, 0, -R], body: 1}", "the only key is 'space'"),
])
def test_a_wrong_point_is_located(points: str, words: str) -> None:
    text = BODY.replace("contact: {space: [0, 0, -R]}", f"rim: {points}")
    with pytest.raises(InputError) as err:
        spec_of(text)
    assert words in str(err.value) and err.value.location.line == 10, str(err.value)


def test_points_on_a_point_mass_are_refused() -> None:
    with pytest.raises(InputError) as err:
        spec_of(BODY.replace("bead: {mass: m, position: [x, 0, 0]}",
                             "bead: {mass: m, position: [x, 0, 0], points: {p: [0, 0, 1]}}"))
    assert "point mass, which has no points" in str(err.value)
    assert (err.value.location.line, err.value.location.column) == (11, 48)


def test_an_identically_zero_no_slip_row_says_use_directions_and_exits_2(tmp_path: Path
                                                                          ) -> None:
    """The coin's contact point cannot move vertically while its height is R cos(lean): the z
    row is 0 for every motion, which lagsim refuses (no silent drop), pointing at the entry;
    through the CLI it is one line `lagsim: error: FILE:LINE:COL: ...` and exit status 2."""
    text = DISK.read_text(encoding="utf-8").replace(", directions: [x, y]", "")
    path = tmp_path / "coin.yaml"
    path.write_text(text, encoding="utf-8")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "no_slip: disk" in row)
    with pytest.raises(InputError) as err:
        build_model(load_spec(path))
    assert "contact_z" in str(err.value) and "directions" in str(err.value)
    assert err.value.location.line == line
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "lagsim", "check", str(path)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    col = text.splitlines()[line - 1].index("disk.contact") + 1
    assert lines == [f"lagsim: error: {path}:{line}:{col}: {err.value.message}"]


# --- the bundled rolling disk ------------------------------------------------------------------

M_DISK, G, R_DISK = 1.0, 9.81, 0.1


def disk_run(initial: dict[str, float], **flags: object) -> Trajectory:
    spec = load_spec(DISK, initial=initial)
    return run(spec, **flags)


def test_rolling_disk_is_the_textbook_coin() -> None:
    """Parameters and rows as the description says: 5 coordinates, 2 nonholonomic rows, 3
    degrees of freedom; the contact point is on the rim (|d| = R, d ⟂ the disk's axis) and at
    height 0 at random states."""
    spec = load_spec(DISK)
    assert spec.parameter_values == {"m": M_DISK, "g": G, "R": R_DISK}
    report = check_system(spec, build_model(spec))
    assert [c.name for c in build_model(spec).constraints] == ["contact_x", "contact_y"]
    text = report.to_text()
    assert "degrees of freedom: 5 − 2 = 3" in text and "nonholonomic" in text
    disk = spec.masses[0]
    assert disk.orientation is not None
    R = rotation_matrix(disk.orientation)
    rng = np.random.default_rng(5)
    for _ in range(5):
        state = {se.Symbol(n): float(v) for n, v in
                 zip(("yaw", "lean", "spin"), rng.uniform(-1.4, 1.4, 3))}
        state[se.Symbol("R")] = R_DISK
        d = np.array([float(c.expr.subs(state)) for c in disk.points[0].offset])
        axis = np.array(R.subs(state).tolist(), dtype=float)[:, 1]
        z = float(disk.position[2].expr.subs(state))
        assert abs(np.linalg.norm(d) - R_DISK) < 1e-15 and abs(d @ axis) < 1e-15
        assert abs(z + d[2]) < 1e-15


def test_rolling_disk_conserves_energy() -> None:
    """The rolling constraints do no work (ideal, nonholonomic): h is conserved to 1e-9 over
    5 s of the bundled wobbling start, while the lean moves."""
    tr = disk_run({}, t_end=5, samples=101, **PRECISE)
    assert np.abs(tr["energy"] - tr["energy"][0]).max() < 1e-9
    assert np.ptp(tr["lean"]) > 1e-3


def steady(lean: float, spin_rate: float) -> tuple[float, float]:
    """The yaw rate Ω and the radius of the centre's circle of steady rolling at ``lean`` with
    spin ``spin_rate`` = ω₂ about the disk's axis. Euler's equation about the centre in the frame
    turning with Ω, with the contact force m a_c + m g e_z at −R e₃. In the frame e₁ (along
    the ground track), e₂ (the axis), e₃ (centre above contact), ω = ω₂ e₂ + Ω e_z, H = I₂ ω₂ e₂ +
    I₁ Ω cos φ e₃, dH/dt = Ω e_z × H, a_c = R ω₂ Ω (cos φ e₂ − sin φ e₃); the e₁ component of
    dH/dt = −R e₃ × (m a_c + m g e_z) is
    I₁ Ω² sin φ cos φ − (I₂ + m R²) ω₂ Ω cos φ − m g R sin φ = 0; the centre moves at R ω₂.
    The root of small |Ω| is the slow circle."""
    I1, I2 = M_DISK * R_DISK**2 / 4, M_DISK * R_DISK**2 / 2
    s, c = math.sin(lean), math.cos(lean)
    roots = np.roots([I1 * s * c, -(I2 + M_DISK * R_DISK**2) * spin_rate * c,
                      -M_DISK * G * R_DISK * s])
    omega = float(min(roots.real, key=abs))
    return omega, R_DISK * spin_rate / abs(omega)


def test_steady_circular_rolling_keeps_its_lean_on_the_closed_form_circle() -> None:
    """Lean 0.3, spin 30 rad/s about the axis: started at the closed-form yaw rate (with ẋ, ẏ
    from the rolling rows), the lean stays at 0.3 to 1e-8 over 4 s and the centre stays on the
    circle of radius R ω₂/|Ω| (4.45 m) to 1e-8, turning through more than 2.5 rad."""
    lean, w2 = 0.3, 30.0
    omega, radius = steady(lean, w2)
    start = {"lean": lean, "x_dot": R_DISK * w2, "y_dot": 0.0, "yaw_dot": omega,
             "lean_dot": 0.0, "spin_dot": w2 - omega * math.sin(lean)}
    tr = disk_run(start, t_end=4, samples=401, **PRECISE)
    assert np.abs(tr["lean"] - lean).max() < 1e-8
    centre = np.array([0.0, math.copysign(radius, omega)])
    distance = np.hypot(tr["x"] - centre[0], tr["y"] - centre[1])
    assert np.abs(distance - radius).max() < 1e-8
    assert abs(tr["yaw"][-1]) > 2.5
    assert radius == pytest.approx(4.4536, abs=1e-4)


@pytest.mark.parametrize(("factor", "upright"), [(1.1, True), (1.5, True), (0.9, False),
                                                  (0.6, False)])
def test_the_upright_coin_stays_up_above_the_critical_speed(factor: float, upright: bool
                                                            ) -> None:
    """Linearized about upright rolling at ω₂ = v/R, the lean obeys (I₁ + mR²) φ̈ = (m g R −
    (I₂ + mR²) I₂ ω₂²/I₁) φ (with ψ̇ = (I₂/I₁) ω₂ φ from the yaw equation), stable when v² >
    m g R³ I₁/(I₂(I₂ + mR²)) = g R/3 for the thin disk (I₁ = mR²/4, I₂ = mR²/2). Nudged
    by lean_dot = 0.001 rad/s and run 10 s: at 1.1 and 1.5 times the critical speed the lean
    stays below 0.001 rad; at 0.9 and 0.6 it passes 0.1 rad (the coin falls)."""
    v = factor * math.sqrt(G * R_DISK / 3)
    start = {"x_dot": v, "y_dot": -R_DISK * 0.001, "lean_dot": 0.001, "spin_dot": v / R_DISK}
    tr = disk_run(start, t_end=10, samples=501, rtol=1e-11, atol=1e-12)
    peak = float(np.abs(tr["lean"]).max())
    assert (peak < 1e-3) if upright else (peak > 0.1), peak


@pytest.mark.parametrize("factor", [1.5, 3.0])
def test_the_upright_coin_wobbles_at_the_linearized_frequency(factor: float) -> None:
    """Above the critical speed the lean oscillates at ω_w² = ((I₂ + mR²) I₂ ω₂²/I₁ − m g R) /
    (I₁ + mR²) (the linearization of the test above, whose sign change is the threshold v² = gR/3):
    from a 1e-6 rad/s nudge, the mean period between upward zero crossings of the lean over 3 s
    gives ω_w to 1e-6 relative (9.9045 rad/s at 1.5 times the critical speed)."""
    I1, I2 = M_DISK * R_DISK**2 / 4, M_DISK * R_DISK**2 / 2
    v = factor * math.sqrt(G * R_DISK / 3)
    w2 = v / R_DISK
    expected = math.sqrt(((I2 + M_DISK * R_DISK**2) * I2 * w2**2 / I1 - M_DISK * G * R_DISK)
                         / (I1 + M_DISK * R_DISK**2))
    start = {"x_dot": v, "y_dot": -R_DISK * 1e-6, "lean_dot": 1e-6, "spin_dot": w2}
    tr = disk_run(start, t_end=3, samples=30001, rtol=1e-12, atol=1e-14)
    lean, t = tr["lean"], tr["t"]
    up = np.where((lean[:-1] < 0) & (lean[1:] >= 0))[0]
    crossings = t[up] - lean[up] * (t[up + 1] - t[up]) / (lean[up + 1] - lean[up])
    assert len(crossings) >= 4
    assert 2 * math.pi / np.diff(crossings).mean() == pytest.approx(expected, rel=1e-6)
