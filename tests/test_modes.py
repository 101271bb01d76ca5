"""Equilibria and small oscillations (lagsim.analysis.equilibria, lagsim.analysis.modes; issue 10),
closed forms.

* Double pendulum (m1 = m2 = m, l1 = l2 = l): ω² = (g/l)(2 ∓ √2), the slow mode with
  θ2/θ1 = √2 and the fast one with θ2/θ1 = −√2 (textbook small oscillations, e.g. Goldstein,
  Classical Mechanics, §6.4 problem set; the same numbers in angles and in Cartesian coordinates
  with rods as holonomic constraints, seed 001_80d65b968ce3cb18.txt §10.7).
* Bead on a hoop turned at ω about the vertical (rheonomic constraint ϕ = ωt, reduced by seed
  002_485a91571cac8ced.txt §23.5): L̃ = ½mR²(θ̇² + ω² sin²θ) + mgR cos θ, off-axis equilibrium
  cos θ* = g/(Rω²), oscillating about it at Ω = ω sin θ*.
* Damped pendulum (Rayleigh dissipation ½cθ̇²): m l² θ̈ + c θ̇ + m g l θ = 0, ω₀ = √(g/l),
  ζ = c/(2 m l² ω₀).
* Skate with a spring (velocity constraint ẋ sin ψ − ẏ cos ψ = 0): at rest at the origin with
  ψ = 0, y is frozen to first order and x oscillates at √(k/m).
Expected values are computed here from these formulas, never taken from lagsim; 1e-10 relative.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from inline_systems import DOUBLE_PENDULUM_CARTESIAN, MOVING_PIVOT_PENDULUM, SPRING_SKATE, named

from lagsim.analysis.equilibria import find_equilibria
from lagsim.analysis.modes import normal_modes
from lagsim.cli import main
from lagsim.errors import InputError
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

G = 9.81
RTOL = 1e-10

ANGLES = """
name: dp_angles
parameters: {m1: 1.0, m2: 1.0, l1: 1.0, l2: 1.0, g: 9.81}
coordinates: [theta1, theta2]
masses:
  a: {mass: m1, position: [l1*sin(theta1), -l1*cos(theta1)]}
  b: {mass: m2, position: [l1*sin(theta1) + l2*sin(theta2), -l1*cos(theta1) - l2*cos(theta2)]}
gravity: [0, -g]
initial: {theta1: 0.2, theta2: 0.1}
"""

CARTESIAN = named("dp_cartesian", DOUBLE_PENDULUM_CARTESIAN,
                  "initial: {x1: 0.1, y1: -0.99, x2: 0.2, y2: -1.9}\n")

HOOP = """
name: hoop
parameters: {m: 1.0, R: 0.5, g: 9.81, w: 7.0}
coordinates: [theta, phi]
masses:
  bead:
    mass: m
    position: [R*sin(theta)*cos(phi), R*sin(theta)*sin(phi), -R*cos(theta)]
gravity: [0, 0, -g]
constraints:
  - name: spin
    holonomic: phi - w*t
initial: {theta: 1.0, phi_dot: w}
"""

DAMPED = """
name: damped
parameters: {m: 2.0, l: 0.7, g: 9.81, c: 0.3}
coordinates: [theta]
kinetic: 1/2*m*l**2*theta_dot**2
potential: -m*g*l*cos(theta)
dissipation: 1/2*c*theta_dot**2
initial: {theta: 0.1}
"""


DRIVEN = """
name: driven
parameters: {m: 1.0, l: 1.0, g: 9.81, F: 0.5}
coordinates: [theta]
kinetic: 1/2*m*l**2*theta_dot**2
potential: -m*g*l*cos(theta)
forces: {theta: F*cos(t)}
"""


def _system(text: str):
    spec = parse_spec(text, "inline.yaml", "inline")
    return spec, build_model(spec)


def _double_pendulum_w2() -> list[float]:
    return [G * (2 - math.sqrt(2)), G * (2 + math.sqrt(2))]


@pytest.mark.parametrize("text", [ANGLES, CARTESIAN], ids=["angles", "cartesian"])
def test_double_pendulum_frequencies_in_every_coordinate_choice(text):
    report = normal_modes(*_system(text))
    assert report.dof == 2
    assert report.stability == "stable"
    w2 = [mode.omega_squared for mode in report.modes]
    assert w2 == pytest.approx(_double_pendulum_w2(), rel=RTOL)
    for mode, expected in zip(report.modes, _double_pendulum_w2()):
        assert mode.frequency == pytest.approx(math.sqrt(expected), rel=RTOL)
        assert mode.hertz == pytest.approx(math.sqrt(expected) / (2 * math.pi), rel=RTOL)


def test_double_pendulum_mode_shapes_agree_between_coordinates():
    """θ2/θ1 = ±√2 in angles; in Cartesian coordinates δx1 = l δθ1 and δx2 = l(δθ1 + δθ2), so
    δx2/δx1 = 1 ± √2, and the bobs do not move vertically to first order."""
    angles = normal_modes(*_system(ANGLES))
    cartesian = normal_modes(*_system(CARTESIAN))
    for k, sign in enumerate((1, -1)):
        a = angles.modes[k].shape
        assert a[1] / a[0] == pytest.approx(sign * math.sqrt(2), rel=RTOL)
        c = dict(zip(cartesian.coordinates, cartesian.modes[k].shape))
        assert c["x2"] / c["x1"] == pytest.approx(1 + sign * math.sqrt(2), rel=RTOL)
        assert abs(c["y1"]) < 1e-12 and abs(c["y2"]) < 1e-12


def test_double_pendulum_equilibria_and_their_stability():
    report = find_equilibria(*_system(ANGLES))
    points = {tuple(round(abs(v) / math.pi, 9) for v in e.q): e for e in report.equilibria}
    assert set(points) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert points[(0, 0)].stability == "stable"
    assert all(points[p].stability == "unstable" for p in ((0, 1), (1, 0), (1, 1)))
    assert all(e.residual < 1e-12 for e in report.equilibria)
    assert report.periodic == ("theta1", "theta2")


def test_cartesian_equilibria_carry_the_rod_tensions():
    """Hanging down at rest (y1 = −l, y2 = −2l), the y rows of F + Aᵀλ = 0 with
    φ1 = x1² + y1² − l², φ2 = (x2 − x1)² + (y2 − y1)² − l²:
    y2: −m2 g + 2λ2 (y2 − y1) = −g − 2λ2 = 0, so λ2 = −g/2;
    y1: −m1 g + 2λ1 y1 − 2λ2 (y2 − y1) = −g − 2λ1 + 2λ2 = 0, so λ1 = −g."""
    report = find_equilibria(*_system(CARTESIAN))
    down = report.equilibria[0]
    assert down.q == pytest.approx((0.0, -1.0, 0.0, -2.0), abs=1e-12)
    assert down.lam == pytest.approx((-G, -G / 2), rel=RTOL)
    assert down.stability == "stable"


def test_bead_on_rotating_hoop_through_its_reduced_form():
    spec, model = _system(HOOP)
    R, w = 0.5, 7.0
    theta_star = math.acos(G / (R * w * w))
    report = normal_modes(spec, model)
    assert report.coordinates == ("theta",)
    assert report.q[0] == pytest.approx(theta_star, rel=RTOL)
    assert report.modes[0].frequency == pytest.approx(w * math.sin(theta_star), rel=RTOL)
    assert report.stability == "stable"
    assert any("rheonomic" in note for note in report.notes)
    equilibria = find_equilibria(spec, model)
    found = sorted(round(e.q[0], 9) for e in equilibria.equilibria)
    assert found == pytest.approx(sorted([0.0, math.pi, theta_star, -theta_star]), abs=1e-9)
    stable = sorted(e.q[0] for e in equilibria.equilibria if e.stability == "stable")
    assert stable == pytest.approx([-theta_star, theta_star], rel=RTOL)


def test_hoop_turning_slowly_has_only_the_bottom_stable():
    """Below ω² = g/R the off-axis equilibrium does not exist: θ = 0 is stable, θ = π not."""
    spec = parse_spec(HOOP, "inline.yaml", "inline", overrides={"w": 3.0})
    report = find_equilibria(spec, build_model(spec))
    assert sorted(abs(round(e.q[0], 9)) for e in report.equilibria) == pytest.approx(
        [0.0, math.pi])
    bottom = next(e for e in report.equilibria if abs(e.q[0]) < 1e-9)
    assert bottom.stability == "stable"
    omega = normal_modes(spec, build_model(spec), at={"theta": 0.0}).modes[0].frequency
    assert omega == pytest.approx(math.sqrt(G / 0.5 - 9.0), rel=RTOL)


def test_damped_pendulum_damping_ratio():
    m, l, c = 2.0, 0.7, 0.3
    report = normal_modes(*_system(DAMPED))
    w0 = math.sqrt(G / l)
    zeta = c / (2 * m * l * l * w0)
    (mode,) = report.modes
    assert mode.frequency == pytest.approx(w0, rel=RTOL)
    assert mode.damping_ratio == pytest.approx(zeta, rel=RTOL)
    assert mode.eigenvalue.imag == pytest.approx(w0 * math.sqrt(1 - zeta**2), rel=RTOL)
    assert report.stability == "asymptotically stable"
    assert report.D[0][0] == pytest.approx(c, rel=RTOL)


def test_velocity_constraint_freezes_the_sideways_direction():
    report = normal_modes(*_system(SPRING_SKATE), at={"x": 0.0, "y": 0.0, "psi": 0.0})
    oscillating = [m for m in report.modes if m.kind == "oscillatory"]
    assert len(oscillating) == 1
    assert oscillating[0].frequency == pytest.approx(math.sqrt(6.0 / 1.5), rel=RTOL)
    shape = dict(zip(report.coordinates, oscillating[0].shape))
    assert shape["x"] == pytest.approx(1.0) and shape["y"] == 0.0


def test_not_autonomous_is_refused_naming_the_force():
    with pytest.raises(InputError, match="not autonomous: t appears in the force on theta"):
        find_equilibria(*_system(DRIVEN))


def test_point_that_is_not_an_equilibrium_is_refused_with_its_residual():
    """At θ1 = 0.5, θ2 = 0 the generalized force on θ1 is −(m1 + m2) g l1 sin θ1 = −9.406."""
    assert f"{2 * G * math.sin(0.5):.3g}" == "9.41"
    with pytest.raises(InputError, match=r"is not an equilibrium: the residual .* is 9\.41 >"):
        normal_modes(*_system(ANGLES), at="theta1=0.5, theta2=0")


def test_upright_double_pendulum_is_unstable_with_the_right_rates():
    """About θ1 = θ2 = π gravity changes sign: ω² = −(g/l)(2 ± √2)."""
    report = normal_modes(*_system(ANGLES), at="theta1=pi, theta2=pi")
    w2 = sorted(mode.omega_squared for mode in report.modes)
    assert w2 == pytest.approx(sorted(-v for v in _double_pendulum_w2()), rel=RTOL)
    assert report.stability == "unstable"


def _run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def test_cli_modes_json_from_stdin_with_set(tmp_path):
    result = _run("modes", "-", "--format", "json", "--set", "g=4", input=ANGLES)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    w2 = [mode["omega_squared"] for mode in doc["modes"]]
    assert w2 == pytest.approx([4 * (2 - math.sqrt(2)), 4 * (2 + math.sqrt(2))], rel=RTOL)
    assert doc["stability"] == "stable"
    assert set(doc["equilibrium"]) == {"theta1", "theta2"}


def test_cli_equilibria_text_and_json(tmp_path):
    path = tmp_path / "hoop.yaml"
    path.write_text(HOOP)
    text = _run("equilibria", str(path))
    assert text.exit_code == 0, text.output
    assert "relative equilibria" in text.output and "stable" in text.output
    doc = json.loads(_run("equilibria", str(path), "--format", "json").output)
    thetas = sorted(e["q"]["theta"] for e in doc["equilibria"])
    star = math.acos(G / (0.5 * 49.0))
    assert thetas == pytest.approx(sorted([-star, 0.0, star, math.pi]), abs=1e-9)


def test_cli_errors_are_one_line_with_exit_2(tmp_path):
    path = tmp_path / "driven.yaml"
    path.write_text(DRIVEN)
    result = _run("equilibria", str(path))
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert result.output.startswith(f"lagsim: error: {path}:2:1: system 'driven' is not "
                                    "autonomous")
    result = _run("modes", "-", "--at", "theta1=0.5", input=ANGLES)
    assert result.exit_code == 2
    assert result.output.startswith("lagsim: error: --at: theta1=0.5, theta2=0.1 is not an "
                                    "equilibrium")
    result = _run("modes", "-", "--at", "psi=0", input=ANGLES)
    assert result.exit_code == 2 and "'psi' is not a coordinate here" in result.output
    result = _run("modes", "-", "-o", str(tmp_path / "m.png"), input=ANGLES)
    assert result.exit_code == 2 and "add --plot" in result.output
    result = _run("modes", "-", "--plot", "-o", "-", input=ANGLES)
    assert result.exit_code == 2 and "standard output carries the report" in result.output
    free = "parameters: {m: 1.0, g: 9.81}\ncoordinates: [y]\nkinetic: 1/2*m*y_dot**2\n" \
           "potential: m*g*y\n"
    result = _run("modes", "-", input=free)
    assert result.exit_code == 2 and "has no equilibrium" in result.output
    assert "no equilibrium found" in _run("equilibria", "-", input=free).output


def test_equilibrium_residuals_are_at_rounding():
    report = find_equilibria(*_system(CARTESIAN))
    assert len(report.equilibria) == 4
    for e in report.equilibria:
        q = np.array(e.q)
        assert e.residual < 1e-12
        assert abs(q[0] ** 2 + q[1] ** 2 - 1) < 1e-12


def test_modes_plot_draws_one_panel_per_mode(tmp_path):
    from lagsim.viz.mode_figures import mode_figure

    spec, model = _system(CARTESIAN)
    report = normal_modes(spec, model)
    fig = mode_figure(spec, model, report)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 2
    # the slow mode moves both bobs to the same side, the fast one to opposite sides
    for ax, same_side in zip(panels, (True, False)):
        plus = [line for line in ax.lines if line.get_marker() == "o"][1]
        xs = plus.get_xdata()
        assert (xs[0] * xs[1] > 0) == same_side
    out = tmp_path / "modes.png"
    result = _run("modes", "-", "--plot", "-o", str(out), input=CARTESIAN)
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_modes_plot_needs_masses(tmp_path):
    result = _run("modes", "-", "--plot", "-o", str(tmp_path / "m.png"), input=DAMPED)
    assert result.exit_code == 2
    assert "declares no 'masses'" in result.output
    assert not (tmp_path / "m.png").exists()


def test_derive_linear_prints_the_stiffness_of_the_rods_and_the_state_space():
    """Cartesian double pendulum hanging down: K = −Σ λ_k ∂²φ_k with λ1 = −g, λ2 = −g/2, so
    K[x1,x1] = 2g + g = 3g, K[x1,x2] = −g, K[x2,x2] = g (the y block the same); the state
    matrix has eigenvalues ±iω with ω² = g(2 ∓ √2); B feeds forces through M_r⁻¹."""
    result = _run("derive", "-", "--form", "linear", "--format", "json", input=CARTESIAN)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    items = {item["label"]: np.array(item["value"], dtype=float) for item in doc["items"]}
    K = items["K"]
    expected = np.array([[3 * G, 0, -G, 0], [0, 3 * G, 0, -G], [-G, 0, G, 0], [0, -G, 0, G]])
    assert np.allclose(K, expected, rtol=RTOL, atol=1e-12)
    assert np.allclose(items["M0"], np.eye(4), atol=0)
    assert np.allclose(items["q*"].ravel(), [0, -1, 0, -2], atol=1e-12)
    A, B = items["A"], items["B"]
    assert A.shape == (4, 4) and B.shape == (4, 4)
    w = np.sort(np.abs(np.linalg.eigvals(A).imag))
    assert w[::2] == pytest.approx(np.sqrt(_double_pendulum_w2()), rel=RTOL)
    # a force on x1 accelerates z1 = x1 at 1/m1 = 1 and nothing else
    assert np.allclose(B[:, 0], [0, 0, 1, 0], atol=1e-12)
    assert any("z = (x1, x2)" in note for note in doc["notes"])


def test_derive_linear_refuses_a_driven_system():
    result = _run("derive", "-", "--form", "linear", input=DRIVEN)
    assert result.exit_code == 2 and "not autonomous" in result.output


SPRING_LINE = """
name: spring_line
parameters: {m: 2.0, k: 5.0, l0: 1.0, g: 9.81}
coordinates: [x, y, z]
kinetic: 1/2*m*(x_dot**2 + y_dot**2 + z_dot**2)
potential: 1/2*k*(sqrt((x + l0)**2 + y**2 + z**2) - l0)**2 + m*g*z
constraints:
  - name: line
    holonomic: y
  - name: table
    holonomic: z
initial: {x: 0.3}
"""


def test_spring_on_a_line_rests_at_its_length_on_either_side_not_at_zero_length():
    """The spring's stretch |r + l0 E_x| − l0 vanishes at x = 0 and at x = −2 l0 (ω² = k/m at
    both); at x = −l0 (zero length) the force is not differentiable and is no equilibrium."""
    report = find_equilibria(*_system(SPRING_LINE))
    xs = sorted(e.q[0] for e in report.equilibria)
    assert xs == pytest.approx([-2.0, 0.0], abs=1e-12)
    assert all(e.stability == "stable" for e in report.equilibria)
    for x in xs:
        modes = normal_modes(*_system(SPRING_LINE), at={"x": x, "y": 0.0, "z": 0.0})
        assert [m.omega_squared for m in modes.modes] == pytest.approx([5.0 / 2.0], rel=RTOL)


OVERDAMPED = """
name: overdamped
parameters: {m: 1.0, k: 2.0, c: 5.0}
coordinates: [x]
kinetic: 1/2*m*x_dot**2
potential: 1/2*k*x**2
dissipation: 1/2*c*x_dot**2
initial: {x: 0.1}
"""


def test_overdamped_oscillator_has_two_decay_rates():
    """m ẍ + c ẋ + k x = 0 with c² > 4mk: s = (−c ± √(c² − 4mk)) / 2m, both real and negative."""
    m, k, c = 1.0, 2.0, 5.0
    report = normal_modes(*_system(OVERDAMPED))
    (mode,) = report.modes  # one degree of freedom: one mode with both roots (issue 29)
    rates = sorted(-s.real for s in mode.eigenvalues)
    root = math.sqrt(c * c - 4 * m * k)
    assert rates == pytest.approx(sorted([(c - root) / (2 * m), (c + root) / (2 * m)]), rel=RTOL)
    assert mode.kind == "overdamped"
    assert mode.frequency == pytest.approx(math.sqrt(k / m), rel=RTOL)
    assert mode.damping_ratio == pytest.approx(c / (2 * math.sqrt(m * k)), rel=RTOL)
    assert report.stability == "asymptotically stable"
    assert "decay rates" in report.to_text()


HOOP_WITH_RADIUS = """
name: hoop_r
parameters: {m: 1.0, R: 0.5, g: 9.81, w: 7.0}
coordinates: [theta, phi, r]
masses:
  bead:
    mass: m
    position: [r*sin(theta)*cos(phi), r*sin(theta)*sin(phi), -r*cos(theta)]
gravity: [0, 0, -g]
constraints:
  - name: wire
    holonomic: r - R
  - name: spin
    holonomic: phi - w*t
initial: {theta: 1.0, r: R, phi_dot: w}
"""


def test_prescribed_rotation_with_an_ordinary_constraint_beside_it():
    """The hoop with the radius as a coordinate held by r − R = 0: the prescribed ϕ = ωt is
    substituted, the wire stays a constraint (its multiplier is the normal force), and the
    off-axis equilibrium and its frequency are those of the reduced hoop."""
    report = normal_modes(*_system(HOOP_WITH_RADIUS))
    R, w = 0.5, 7.0
    theta_star = math.acos(G / (R * w * w))
    assert report.coordinates == ("theta", "r")
    assert report.q == pytest.approx((theta_star, R), rel=RTOL)
    assert [m.frequency for m in report.modes] == pytest.approx([w * math.sin(theta_star)],
                                                                rel=RTOL)


def test_a_moving_pivot_is_not_reduced_and_says_why():
    text = "\n" + MOVING_PIVOT_PENDULUM
    with pytest.raises(InputError, match="t appears in constraint 'rod'.*'rod' does not"):
        find_equilibria(*_system(text))


def test_kepler_has_no_equilibrium_even_far_away():
    """F_r = −μm/r² at rest never vanishes; Newton drifts to r → ∞ where the residual becomes
    small but its steps do not, which must not count as an equilibrium."""
    text = """
parameters: {m: 1.0, mu: 1.0}
coordinates: [r, theta]
kinetic: 1/2*m*(r_dot**2 + r**2*theta_dot**2)
potential: -mu*m/r
initial: {r: 1.0}
"""
    report = find_equilibria(*_system(text))
    assert report.equilibria == ()
    assert report.pinned == ("theta",)
    assert "no equilibrium found" in report.to_text()
