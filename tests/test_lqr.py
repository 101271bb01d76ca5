"""``lagsim lqr`` and ``simulate --controller lqr`` (issue 28): the gain against scipy on
hand-written linear models, the closed loop's own linearization, the nonlinear cart-pole brought
back upright, the actuator limit, and controllability (Kalman's rank, uncontrollable modes);
a knife edge (a velocity constraint) designed on the tangent space of its linearized constraint.

The linear models are written from the equations of motion (seed ``001_80d65b968ce3cb18.txt``
§10.7): the cart-pole about upright has M = [[mc + mp, mp l], [mp l, mp l²]] and the stiffness
diag(0, −mp g l); a point mass on a rod of length l in natural coordinates, upright, moves along
x with m ẍ = (m g/l) x + F.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.linalg import solve_continuous_are

from lagsim import api
from lagsim.analysis.linearize import linearize
from lagsim.analysis.lqr import design, weights
from lagsim.analysis.modes import equilibrium_point
from lagsim.cli import main
from lagsim.errors import InputError
from lagsim.numeric.compile import compile_model
from lagsim.spec.system import parse_spec
from lagsim.symbolic.feedback import closed_loop
from lagsim.symbolic.model import build_model

MC, MP, L, G = 1.0, 0.1, 0.5, 9.81
CART_POLE = textwrap.dedent(f"""\
    name: cart_pole_lqr
    parameters: {{mc: {MC}, mp: {MP}, l: {L}, g: {G}}}
    inputs: {{F: 0}}
    coordinates: [x, theta]
    masses:
      cart: {{mass: mc, position: [x, 0]}}
      tip: {{mass: mp, position: [x + l*sin(theta), l*cos(theta)]}}
    gravity: [0, -g]
    forces:
      x: F
    initial: {{theta: 0.3}}
    """)
UPRIGHT = "x=0, theta=0"


def cart_pole_linear() -> tuple[np.ndarray, np.ndarray]:
    """A and B of the cart-pole about upright in x = (x, θ, ẋ, θ̇), written by hand."""
    M = np.array([[MC + MP, MP * L], [MP * L, MP * L ** 2]])
    stiffness = np.array([[0.0, 0.0], [0.0, -MP * G * L]])
    A = np.zeros((4, 4))
    A[:2, 2:] = np.eye(2)
    A[2:, :2] = -np.linalg.solve(M, stiffness)
    B = np.zeros((4, 1))
    B[2:, 0] = np.linalg.solve(M, [1.0, 0.0])
    return A, B


def lqr_gain(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray) -> np.ndarray:
    return np.linalg.solve(R, B.T @ solve_continuous_are(A, B, Q, R))


@pytest.fixture(scope="module")
def cart_pole() -> api.System:
    return api.open_system(CART_POLE, api=True)


@pytest.mark.parametrize(("Q", "R", "Qm", "Rm"), [
    (None, None, np.eye(4), np.eye(1)),
    ("1,10,1,1", "0.5", np.diag([1.0, 10.0, 1.0, 1.0]), np.diag([0.5])),
    ("theta=100, x_dot=2", "F=0.1", np.diag([1.0, 100.0, 2.0, 1.0]), np.diag([0.1])),
])
def test_the_cart_poles_gain_is_scipys_on_the_hand_written_model(
        cart_pole: api.System, Q: str | None, R: str | None, Qm: np.ndarray,
        Rm: np.ndarray) -> None:
    report = cart_pole.lqr(UPRIGHT, Q, R)
    A, B = cart_pole_linear()
    assert report.state == ("x", "theta", "x_dot", "theta_dot")
    assert np.allclose(report.A, A, rtol=1e-12, atol=1e-12)
    assert np.allclose(report.B, B, rtol=1e-12, atol=1e-12)
    expected = lqr_gain(A, B, Qm, Rm)
    assert report.K is not None
    assert np.max(np.abs(report.K - expected)) <= 1e-10 * np.max(np.abs(expected))
    assert report.controllable and report.rank == 4 and report.uncontrollable == ()
    assert all(s.real < 0 for s in report.closed_loop)


def test_the_closed_loops_linearization_has_the_printed_eigenvalues(
        cart_pole: api.System) -> None:
    report = cart_pole.lqr(UPRIGHT, "1,10,1,1", "0.5")
    closed = closed_loop(cart_pole.model, report.feedback())
    point = equilibrium_point(cart_pole.spec, closed, UPRIGHT)
    S, _ = linearize(point.eqs, point.q, point.lam).state_space()
    found = sorted(np.linalg.eigvals(S), key=lambda s: (s.real, s.imag))
    assert np.allclose(found, report.closed_loop, rtol=1e-9, atol=1e-12)


def test_the_cart_pole_started_0_3_rad_from_upright_comes_back_and_stays(
        cart_pole: api.System) -> None:
    report = cart_pole.lqr(UPRIGHT)
    slowest = max(s.real for s in report.closed_loop)
    assert -1.0 < slowest < -0.5
    run = cart_pole.simulate(controller="lqr", at=UPRIGHT, t_end=40, samples=401)
    theta, x = run["theta"], run["x"]
    assert run["theta"][0] == 0.3
    later = run.t >= 20
    assert np.max(np.abs(theta[later])) < 1e-5 and np.max(np.abs(x[later])) < 1e-4
    assert abs(theta[-1]) < 1e-6 and abs(x[-1]) < 1e-6
    free = cart_pole.simulate(t_end=2, samples=201)
    assert abs(free["theta"][-1]) > 1.0


def test_the_law_of_the_closed_loop_is_clipped_by_saturate(cart_pole: api.System) -> None:
    report = cart_pole.lqr(UPRIGHT)
    state = np.array([0.1, 0.3, -0.2, 0.4])
    assert report.K is not None
    law = float(-(report.K @ state)[0])
    assert abs(law) > 3.0
    plant = compile_model(cart_pole.model)
    q, qd = state[:2], state[2:]
    for limit, applied in ((None, law), (3.0, np.sign(law) * 3.0), (50.0, law)):
        closed = compile_model(closed_loop(cart_pole.model, report.feedback(limit)))
        expected = plant.with_parameters({"F": applied}).accelerations(0.0, q, qd)
        assert np.allclose(closed.accelerations(0.0, q, qd), expected, rtol=1e-12, atol=1e-12)


def test_simulate_controller_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "cp.yaml"
    path.write_text(CART_POLE)
    out = CliRunner().invoke(main, ["simulate", str(path), "--controller", "lqr", "--at",
                                    UPRIGHT, "--Q", "theta=10", "--saturate", "20",
                                    "--t-end", "30", "--samples", "3"])
    assert out.exit_code == 0, out.output
    last = [float(v) for v in out.stdout.strip().splitlines()[-1].split(",")]
    assert abs(last[2]) < 1e-6
    for args, message in ((["--at", UPRIGHT], "--at applies only with --controller"),
                          (["--controller", "lqr"], "needs the equilibrium to hold")):
        bad = CliRunner().invoke(main, ["simulate", str(path), *args])
        assert bad.exit_code == 2 and message in bad.stderr


def test_lqr_on_the_command_line_text_and_json(tmp_path: Path) -> None:
    path = tmp_path / "cp.yaml"
    path.write_text(CART_POLE)
    out = CliRunner().invoke(main, ["lqr", str(path), "--at", UPRIGHT, "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    A, B = cart_pole_linear()
    assert np.max(np.abs(np.array(doc["K"]) - lqr_gain(A, B, np.eye(4), np.eye(1)))) < 1e-9
    assert doc["controllable"] is True and doc["controllability_rank"] == 4
    text = CliRunner().invoke(main, ["lqr", str(path), "--at", UPRIGHT]).stdout
    assert "controllable: rank 4 of 4" in text and "closed-loop eigenvalues:" in text


def test_a_constrained_pendulum_is_designed_on_its_tangent_space() -> None:
    """Upright on a rod in natural coordinates the state is (x, ẋ) with m ẍ = (m g/l) x + F."""
    m, g, length = 2.0, 9.81, 1.5
    system = api.open_system(textwrap.dedent(f"""\
        parameters: {{m: {m}, g: {g}, l: {length}}}
        inputs: {{F: 0}}
        coordinates: [x, y]
        masses:
          bob: {{mass: m, position: [x, y]}}
        gravity: [0, -g]
        loads:
          bob: [F, 0]
        constraints:
          - x**2 + y**2 - l**2
        initial: {{x: 0.1, y: sqrt(l**2 - 0.01)}}
        """), api=True)
    report = system.lqr("x=0, y=l", "3,1", "0.5")
    assert report.state == ("x", "x_dot")
    A = np.array([[0.0, 1.0], [g / length, 0.0]])
    B = np.array([[0.0], [1.0 / m]])
    assert report.K is not None
    assert np.allclose(report.K, lqr_gain(A, B, np.diag([3.0, 1.0]), np.diag([0.5])),
                       rtol=1e-10, atol=1e-12)
    run = system.simulate(controller="lqr", at="x=0, y=l", Q="3,1", R="0.5", t_end=20,
                          samples=3)
    assert abs(run["x"][-1]) < 1e-6 and abs(run["y"][-1] - length) < 1e-9


UNCOUPLED = textwrap.dedent("""\
    parameters: {k: 4, c: 0}
    inputs: {F: 0}
    coordinates: [x, y]
    kinetic: 1/2*(x_dot**2 + y_dot**2)
    potential: 1/2*k*x**2 - 1/2*y**2
    forces:
      y: F
      x: -c*x_dot
    """)


def test_an_input_on_a_decoupled_coordinate_leaves_the_other_uncontrollable() -> None:
    """F drives the unstable y only; the oscillator x (ω = 2) is out of its reach: rank 2 of 4,
    modes ±2i along x and x_dot, which no gain stabilizes; damped (c = 1) they decay, s = −1/2 ±
    i√15/2, and a gain exists that leaves them where they are."""
    report = api.open_system(UNCOUPLED, api=True).lqr("x=0, y=0")
    assert report.rank == 2 and not report.controllable
    assert np.allclose(report.uncontrollable, [-2j, 2j], atol=1e-12)
    assert report.uncontrollable_directions == ("x", "x_dot")
    assert report.K is None and "not stabilizable" in report.reason
    text = report.to_text()
    assert "not controllable: rank 2 of 4; uncontrollable modes s = 0 − 2i, 0 + 2i along x; " \
           "x_dot" in text
    with pytest.raises(InputError, match="no LQR gain"):
        report.feedback()
    damped = api.open_system(UNCOUPLED, {"c": 1.0}, api=True).lqr("x=0, y=0")
    assert damped.rank == 2 and damped.K is not None
    assert np.allclose(damped.uncontrollable, [-0.5 - 15 ** 0.5 / 2 * 1j,
                                               -0.5 + 15 ** 0.5 / 2 * 1j], atol=1e-12)
    assert np.allclose(damped.K[0, :2:], [0.0, lqr_gain(np.array([[0.0, 1.0], [1.0, 0.0]]),
                                                        np.array([[0.0], [1.0]]), np.eye(2),
                                                        np.eye(1))[0, 0]], atol=1e-10)
    assert np.any(np.isclose(damped.closed_loop, damped.uncontrollable[0], atol=1e-9))


def test_weights_are_checked_against_the_state() -> None:
    names = ("x", "theta", "x_dot", "theta_dot")
    assert np.array_equal(weights("theta=5", names, "--Q", False), np.diag([1, 5, 1, 1]))
    for raw, message in (("1,2", "needs 4 numbers"), ("phi=1", "'phi' is not one of"),
                         ("1,-1,1,1", "non-negative"), ("x=1, 2", "not both"),
                         ("a,b,c,d", "is not a number")):
        with pytest.raises(InputError, match=message):
            weights(raw, names, "--Q", False)
    with pytest.raises(InputError, match="positive"):
        weights("0", ("F",), "--R", True)


def test_a_file_without_inputs_has_no_regulator() -> None:
    spec = parse_spec(CART_POLE.replace("inputs: {F: 0}\n", "").replace("x: F", "x: 0"), "c")
    with pytest.raises(InputError, match="has no inputs"):
        design(spec, build_model(spec), UPRIGHT)


def test_derive_linear_prints_the_input_matrix(tmp_path: Path) -> None:
    """``derive --form linear`` of a file with inputs adds B_u = B ∂τ/∂u, the hand-written B."""
    path = tmp_path / "cp.yaml"
    path.write_text(CART_POLE.replace("initial: {theta: 0.3}", "initial: {theta: 0.01}"))
    out = CliRunner().invoke(main, ["derive", str(path), "--form", "linear", "--format", "json"])
    assert out.exit_code == 0, out.output
    items = {item["label"]: np.array(item["value"], dtype=float)
             for item in json.loads(out.stdout)["items"]}
    A, B = cart_pole_linear()
    assert np.allclose(items["A"], A, rtol=1e-12, atol=1e-12)
    assert np.allclose(items["B_u"], B, rtol=1e-12, atol=1e-12)


SKATE = textwrap.dedent("""\
    parameters: {m: 1.0, J: 0.1}
    inputs: {tau: 0}
    coordinates: [x, y, psi]
    kinetic: 1/2*m*(x_dot**2 + y_dot**2) + 1/2*J*psi_dot**2
    forces: {psi: tau}
    constraints:
      - {name: skate, velocity: x_dot*sin(psi) - y_dot*cos(psi)}
    """)


def test_a_skate_steered_by_a_torque_alone_cannot_be_stabilized() -> None:
    """The skate (x_dot sin ψ − y_dot cos ψ = 0) at rest, ψ = 0: the linearized constraint is
    δẏ = 0, so the state is (x, y, ψ, ẋ, ψ̇) and, with the constraint force 0 at rest,
    m δẍ = 0, J δψ̈ = τ. The torque reaches ψ and ψ̇ only: rank 2 of 5; x, y and ẋ have s = 0,
    and ẋ is a glide no gain brakes (a Jordan block: x drifts), so there is no gain, said in the
    report and by --controller in one located line."""
    report = api.open_system(SKATE, api=True).lqr("x=0, y=0, psi=0")
    assert report.state == ("x", "y", "psi", "x_dot", "psi_dot")
    assert report.rank == 2 and report.uncontrollable == (0j, 0j, 0j)
    assert report.uncontrollable_directions == ("x", "y", "x_dot")
    assert report.K is None and "not stabilizable" in report.reason
    assert "a rate no input reaches drifts them" in report.reason
    out = CliRunner().invoke(main, ["simulate", "-", "--controller", "lqr", "--at",
                                    "x=0, y=0, psi=0"], input=SKATE)
    assert out.exit_code == 2
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("lagsim: error: ") and "no LQR gain" in line


KNIFE = Path(__file__).parent / "driven_knife_edge.yaml"
REST = "x=0, y=0, theta=0"


@pytest.fixture(scope="module")
def knife() -> api.System:
    return api.open_system(KNIFE)


def test_a_driven_knife_edge_is_designed_on_its_tangent_space(knife: api.System) -> None:
    """A knife edge pushed along its heading by F and turned by T, linearized at rest: the
    linearized constraint is δẏ = 0, so the state is (x, y, θ, ẋ, θ̇) and m δẍ = F, J δθ̈ = T
    (the constraint force is 0 at rest, cos θ ≈ 1, sin θ ≈ 0). By hand: F reaches x, ẋ and T
    reaches θ, θ̇, rank 4 of 5; y, the sideways position, has s = 0 and no input moves it in
    the linearization (the nonlinear system reaches it by turning and driving, which no linear
    gain does). On the controllable part each pair is a double integrator ẍ = u/m with
    Q = I, R = 1, whose Riccati solution gives K = [1, √(2m + 1)] (p₁₂ = m, p₂₂ = m√(2m + 1)),
    closed-loop roots of m s² + √(2m + 1) s + 1; y's s = 0 stays. The closed loop's own
    linearization on the tangent space has the printed roots."""
    report = knife.lqr(REST)
    m, J = (float(knife.model.parameters[p]) for p in ("m", "J"))
    assert report.state == ("x", "y", "theta", "x_dot", "theta_dot")
    assert report.rank == 4 and report.uncontrollable == (0j,)
    assert report.uncontrollable_directions == ("y",)
    assert any("no input reaches" in note for note in report.notes)
    K = np.zeros((2, 5))
    K[0, [0, 3]] = 1.0, np.sqrt(2 * m + 1)
    K[1, [2, 4]] = 1.0, np.sqrt(2 * J + 1)
    assert report.K is not None
    assert np.max(np.abs(report.K - K)) < 1e-10
    roots = [0.0, *np.roots([m, np.sqrt(2 * m + 1), 1.0]),
             *np.roots([J, np.sqrt(2 * J + 1), 1.0])]
    assert np.allclose(sorted(roots, key=lambda s: (s.real, s.imag)), report.closed_loop,
                       rtol=1e-10, atol=1e-12)
    closed = closed_loop(knife.model, report.feedback())
    point = equilibrium_point(knife.spec, closed, REST)
    S, _ = linearize(point.eqs, point.q, point.lam).state_space()
    found = sorted(np.linalg.eigvals(S), key=lambda s: (s.real, s.imag))
    assert np.allclose(found, report.closed_loop, rtol=1e-9, atol=1e-12)
    text = report.to_text()
    assert "not controllable: rank 4 of 5; uncontrollable modes s = 0 along y" in text


def test_the_driven_knife_edge_comes_back_to_rest_and_keeps_its_constraint(
        knife: api.System) -> None:
    """Started at x = 0.3, θ = 0.4 turning at 0.2 rad/s, the nonlinear closed loop brings the
    heading, the forward position and both rates back (the slowest closed-loop root is
    Re s = −0.559: e^{−0.559·30} ≈ 5e-8), with the knife's constraint held to 1e-9 all along;
    the sideways position y, out of the linear gain's reach, settles wherever the transient took
    it and stays."""
    run = knife.simulate(controller="lqr", at=REST, t_end=30, samples=301)
    for name in ("x", "theta", "x_dot", "theta_dot"):
        assert abs(run[name][-1]) < 1e-6, name
    assert np.max(np.abs(-np.sin(run["theta"]) * run["x_dot"]
                         + np.cos(run["theta"]) * run["y_dot"])) < 1e-9
    assert abs(run["y"][-1]) > 1e-3
    assert abs(run["y"][-1] - run["y"][200]) < 1e-6
