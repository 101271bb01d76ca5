"""Issue 27: unilateral constraints with Newton's impact law, event-driven and exact
(:mod:`lagsim.run.contacts`, :mod:`lagsim.run.engines.impacts`).

Closed forms: the bouncing ball (Goebel, Sanfelice and Teel, *Hybrid Dynamical Systems* 2012,
Example 2.12): first impact at t₁ = sqrt(2h₀/g) with speed v₁ = g t₁, the n-th rebound at
eⁿv₁ rising to hₙ = e²ⁿh₀, impacts at tₙ = t₁ + Σ_{k<n} 2eᵏv₁/g accumulating at
t∞ = t₁ + 2v₁e/(g(1 − e)); then at rest, held by the force m g. A one-coordinate impact keeps the
position and multiplies the velocity by −e, so it keeps the fraction e² of the kinetic energy
(Pfeiffer and Glocker 1996, §4.3). Three equal balls in a row, the first hitting two at rest and
touching, under Newton's law per contact solved together (the complementarity problem of
:mod:`lagsim.run.contacts`) with e = 1: momentum m v and both rebound laws give
(v₁, v₂, v₃) = (−1/3, 2/3, 2/3) v, which also keeps the energy (Glocker, *Set-Valued Force Laws*,
Springer 2001, ch. 8, on the cradle under Newton's law).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from impact_runs import SYSTEMS, bouncing_ball, impact_rows, run
from inline_systems import CONSTRAINED_STOP, PENDULUM_AGAINST_A_WALL, named

from lagsim import naming
from lagsim.api import load
from lagsim.errors import InputError
from lagsim.output.trajectory import Trajectory
from lagsim.run.driver import ENGINES, choose
from lagsim.run.engines.base import UNILATERAL
from lagsim.run.problem import Problem
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

TIGHT = {"rtol": 1e-12, "atol": 1e-12}
G = 9.81


@pytest.fixture(scope="module")
def ball() -> Trajectory:
    return bouncing_ball(**TIGHT)


def test_ball_impact_times_and_apex_heights(ball: Trajectory) -> None:
    e, h0 = 0.5, 1.0
    t1 = math.sqrt(2 * h0 / G)
    v1 = G * t1
    rows = impact_rows(ball, "floor")[:12]
    n = np.arange(1, len(rows) + 1)
    expected_t = t1 + 2 * v1 / G * e * (1 - e ** (n - 1)) / (1 - e)
    assert np.max(np.abs(ball.t[rows] - expected_t)) < 1e-12
    speeds = ball["y_dot"][rows]
    assert np.max(np.abs(speeds - e ** n * v1)) < 1e-12
    apex = speeds ** 2 / (2 * G)
    assert np.max(np.abs(apex - e ** (2 * n) * h0)) < 1e-12


def test_ball_rows_keep_increasing_in_time(ball: Trajectory) -> None:
    """An impact's row is the state after it, one row per instant, also in the accumulation's
    tail of flights shorter than the sample step."""
    assert np.all(np.diff(ball.t) > 0.0)
    assert len(impact_rows(ball, "floor")) > 15


def test_ball_flight_between_impacts_is_the_parabola(ball: Trajectory) -> None:
    rows = impact_rows(ball, "floor")
    first, second = rows[0], rows[1]
    t_n, v_n = ball.t[first], ball["y_dot"][first]
    s = ball.t[first + 1:second] - t_n
    assert len(s) > 50
    assert np.max(np.abs(ball["y"][first + 1:second] - (v_n * s - G * s ** 2 / 2))) < 1e-12


def test_ball_impulse_and_energy_loss_per_impact(ball: Trajectory) -> None:
    e, m = 0.5, 2.0
    v1 = math.sqrt(2 * G)
    rows = impact_rows(ball, "floor")[:10]
    n = np.arange(1, len(rows) + 1)
    before = e ** (n - 1) * v1
    assert np.max(np.abs(ball["impulse_floor"][rows] - m * (1 + e) * before)) < 1e-11
    assert np.max(np.abs(ball[naming.IMPACT_LOSS][rows] - (1 - e * e) * m * before ** 2 / 2)
                  ) < 1e-11


def test_ball_comes_to_rest_at_the_accumulation_time(ball: Trajectory) -> None:
    e, m = 0.5, 2.0
    t1 = math.sqrt(2 / G)
    t_inf = t1 + 2 * (G * t1) * e / (G * (1 - e))
    last = impact_rows(ball, "floor")[-1]
    assert abs(ball.t[last] - t_inf) < 1e-9
    after = slice(last, None)
    assert np.max(np.abs(ball["y"][after])) < 1e-12
    assert np.max(np.abs(ball["y_dot"][after])) < 1e-12
    assert np.max(np.abs(ball["contact_force_floor"][after] - m * G)) < 1e-12
    assert np.all(ball["contact_force_floor"][:last] == 0.0)
    assert abs(ball.energy[-1]) < 1e-12


def test_pendulum_stop_elastic_keeps_energy_over_100_impacts() -> None:
    trajectory = run("pendulum_stop", parameters={"e": 1.0}, t_end=140.0, **TIGHT)
    rows = impact_rows(trajectory, "wall")
    assert len(rows) >= 100
    h0 = -G * math.cos(math.pi / 3)
    assert np.max(np.abs(trajectory.energy - h0)) / abs(h0) < 1e-10
    assert np.max(np.abs(trajectory[naming.IMPACT_LOSS])) < 1e-13
    assert np.max(np.abs(trajectory["theta"][rows] - math.pi / 12)) < 1e-12


@pytest.mark.parametrize("e", [0.9, 0.5])
def test_pendulum_stop_keeps_e_squared_of_the_kinetic_energy(e: float) -> None:
    trajectory = run("pendulum_stop", parameters={"e": e}, t_end=20.0, **TIGHT)
    rows = impact_rows(trajectory, "wall")
    assert len(rows) >= 3
    potential = -G * math.cos(math.pi / 12)
    loss = trajectory[naming.IMPACT_LOSS][rows]
    kinetic_before = trajectory.energy[rows] + loss - potential
    kinetic_after = trajectory.energy[rows] - potential
    assert np.max(np.abs(kinetic_after - e * e * kinetic_before)) < 1e-12 * abs(potential)
    assert kinetic_after[0] / kinetic_before[0] == pytest.approx(e * e, abs=1e-14)
    assert np.max(np.abs(trajectory["theta_dot"][rows] ** 2 / 2 - kinetic_after)) < 1e-12


def test_impact_keeps_the_bilateral_constraints() -> None:
    """The pendulum in Cartesian coordinates with its rod as a holonomic constraint: the
    impulse system's rows of the rod keep φ̇ = 0 across each impact, and the velocity along the
    circle flips with the factor e, as in the one-coordinate pendulum_stop."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(CONSTRAINED_STOP).simulate(t_end=8.0, formulation="index1", **TIGHT)
    rows = impact_rows(trajectory, "wall")
    assert len(rows) >= 3
    assert np.max(np.abs(trajectory["residual_rod_dot"][rows])) < 1e-12
    potential = G * trajectory["y"][rows]
    loss = trajectory[naming.IMPACT_LOSS][rows]
    after = trajectory.energy[rows] - potential
    assert np.max(np.abs(after / (after + loss) - 0.49)) < 1e-10


def test_simultaneous_contacts_follow_newtons_law_per_contact() -> None:
    trajectory = run("newtons_cradle", t_end=1.0, **TIGHT)
    rows = impact_rows(trajectory, "left")
    assert len(rows) == 1
    row = rows[0]
    assert abs(trajectory.t[row] - 0.4) < 1e-12
    velocities = [trajectory[v][row] for v in ("x1_dot", "x2_dot", "x3_dot")]
    assert np.max(np.abs(np.array(velocities) - [-1 / 3, 2 / 3, 2 / 3])) < 1e-12
    assert abs(trajectory["impulse_left"][row] - 4 / 3) < 1e-12
    assert abs(trajectory["impulse_right"][row] - 2 / 3) < 1e-12
    assert np.max(np.abs(trajectory.energy - 0.5)) < 1e-12


def test_every_other_engine_refuses_a_unilateral_system() -> None:
    spec = parse_spec((SYSTEMS / "bouncing_ball.yaml").read_text(), "bouncing_ball.yaml",
                      "bouncing_ball")
    problem = Problem.build(spec, build_model(spec), SimulateOptions(t_end=1.0))
    assert choose(problem).name == "impacts"
    assert [engine.refusal(problem) for engine in ENGINES] == [UNILATERAL] * len(ENGINES)


BALL = (SYSTEMS / "bouncing_ball.yaml").read_text()
CONTACT = "  - {name: floor, unilateral: y, restitution: e}"


@pytest.mark.parametrize(("item", "column", "message"), [
    ("{name: floor, unilateral: y, restitution: 2*e}", 47,
     "the restitution of 'floor' is 1.6 at the parameters' values; Newton's coefficient lies in "
     "[0, 1]"),
    ("{name: floor, unilateral: y_dot, restitution: e}", 31,
     "the gap of unilateral constraint 'floor' may not depend on velocities"),
    ("{name: floor, unilateral: y, holonomic: y, restitution: e}", 34,
     "constraint 'floor' is unilateral: 'holonomic:' cannot be combined with 'unilateral:'"),
    ("{name: floor, unilateral: y, velocity: y_dot, restitution: e}", 34,
     "'velocity:' cannot be combined with 'unilateral:'"),
    ("{name: floor, unilateral: y}", 5,
     "unilateral constraint 'floor' needs 'restitution: e'"),
    ("{name: floor, unilateral: y, restitution: e, friction: 0.3}", 50,
     "'friction:' in constraint 'floor' needs both 'friction: mu' (Coulomb's coefficient) and "
     "'tangent: s'"),
    ("{name: floor, unilateral: y, restitution: e, friction: -1, tangent: x}", 60,
     "the friction of 'floor' is -1; Coulomb's coefficient is >= 0"),
    ("{name: floor, restitution: e}", 19,
     "'restitution:' in constraint 'floor' belongs to a unilateral constraint"),
    ("{name: floor, unilateral: y, restitution: y}", 47,
     "the restitution of 'floor' may use only parameters, not y"),
    ("{name: floor, unilateral: y, restitution: e, stiffness: 3}", 50,
     "unknown key 'stiffness' in constraint 1"),
])
def test_bad_unilateral_constraints_are_located(item: str, column: int, message: str) -> None:
    line = BALL.splitlines().index(CONTACT) + 1
    with pytest.raises(InputError) as caught:
        parse_spec(BALL.replace(CONTACT, f"  - {item}"), "ball.yaml", "ball")
    error = caught.value
    assert message in error.message
    assert (error.location.line, error.location.column) == (line, column)


@pytest.mark.parametrize(("options", "message"), [
    ({"method": "rattle", "dt": 0.01},
     ": method='rattle' does not run unilateral constraints yet"),
    ({"section": "y_dot"}, ": section does not run with unilateral constraints yet"),
])
def test_options_the_impacts_engine_cannot_run_are_refused(options: dict[str, object],
                                                           message: str) -> None:
    with pytest.raises(InputError, match=message):
        run("bouncing_ball", t_end=1.0, **options)


def test_a_start_inside_the_obstacle_is_refused() -> None:
    with pytest.raises(InputError, match="the gap of unilateral constraint 'floor' is -0.5 at "
                                         "the start"):
        run("bouncing_ball", t_end=1.0, initial={"y": -0.5})


def test_a_start_closing_into_the_obstacle_is_refused() -> None:
    with pytest.raises(InputError, match="unilateral constraint 'floor' is closed at the start "
                                         "and its gap's rate is -1 < 0"):
        run("bouncing_ball", t_end=1.0, initial={"y": 0.0, "y_dot": -1.0})


def test_a_plastic_impact_leaves_the_ball_resting_on_the_floor() -> None:
    """e = 0: the first impact, at t₁ = sqrt(2h₀/g), takes all the speed (impulse m v₁) and the
    ball rests from there, held by m g."""
    trajectory = run("bouncing_ball", parameters={"e": 0.0}, t_end=2.0, **TIGHT)
    rows = impact_rows(trajectory, "floor")
    t1 = math.sqrt(2 / G)
    assert len(rows) == 1 and abs(trajectory.t[rows[0]] - t1) < 1e-12
    assert abs(trajectory["impulse_floor"][rows[0]] - G * t1) < 1e-12
    after = slice(rows[0], None)
    assert np.max(np.abs(trajectory["y"][after])) < 1e-12
    assert np.max(np.abs(trajectory["contact_force_floor"][after] - G)) < 1e-12


def test_stop_when_ends_a_bouncing_run() -> None:
    trajectory = run("bouncing_ball", t_end=3.0, stop_when="y - 0.5", **TIGHT)
    assert trajectory.stop_reason == "stop_when"
    assert abs(trajectory.t[-1] - math.sqrt(2 * 0.5 / G)) < 1e-12


LIFTED = """
name: lifted
parameters: {m: 2.0, g: 9.81, F0: 4.0}
coordinates: [y]
masses:
  ball: {mass: m, position: [0, y]}
gravity: [0, -g]
forces: {y: F0*t}
constraints:
  - {name: floor, unilateral: y, restitution: 0.5}
initial: {y: 0}
"""


def test_a_resting_contact_is_held_until_its_force_would_pull() -> None:
    """A ball at rest on the floor, pulled up by F0 t: held, the contact force is m g − F0 t,
    until it reaches 0 at t_l = m g/F0; from there the ball flies, y = F0 (t − t_l)³/(6m)."""
    m, f0 = 2.0, 4.0
    t_lift = m * G / f0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(LIFTED).simulate(t_end=6.0, **TIGHT)
    held = trajectory.t < t_lift
    force = trajectory["contact_force_floor"]
    assert np.max(np.abs(force[held] - (m * G - f0 * trajectory.t[held]))) < 1e-12
    assert np.max(np.abs(trajectory["y"][held])) < 1e-12
    release = int(np.flatnonzero(~held)[0])
    assert abs(trajectory.t[release] - t_lift) < 1e-12
    s = trajectory.t[release:] - t_lift
    assert np.all(force[release + 1:] == 0.0)
    assert np.max(np.abs(trajectory["y"][release:] - f0 * s ** 3 / (6 * m))) < 1e-10


def test_check_names_each_contact_and_what_its_impacts_do() -> None:
    from lagsim.analysis.check import check_system

    spec = parse_spec((SYSTEMS / "bouncing_ball.yaml").read_text(), "bouncing_ball.yaml",
                      "bouncing_ball")
    report = check_system(spec, build_model(spec))
    assert [n for n in report.notes if n.startswith("unilateral")] == [
        "unilateral constraint 'floor': y >= 0, restitution e = 0.8; the rank, the degrees of "
        "freedom and the conserved quantities above are those of free flight; its impacts keep "
        "the fraction e^2 = 0.64 of the kinetic energy of the motion along the gap, and change "
        "the momenta that free flight conserves"]
    assert report.degrees_of_freedom == 1


LEANING = named("leaning", PENDULUM_AGAINST_A_WALL.replace("alpha: pi/12, e: 0.7",
                                                          "alpha: -pi/12, e: 0.5"),
                "initial: {x: -0.7071067811865476, y: -0.7071067811865476}\n")


@pytest.mark.parametrize("formulation", ["index1", "udwadia-kalaba"])
def test_a_pendulum_comes_to_rest_against_a_wall_with_its_rod_kept(formulation: str) -> None:
    """The Cartesian pendulum released at 45° beside a wall at α = −15° that gravity pushes it
    into: the bounces accumulate, then it leans on the wall, the bilateral rod kept, with the
    wall's force m g tan|α| and the rod's multiplier −m g/cos α (the tension m g/cos α: at rest
    the weight, the rod and the wall balance)."""
    alpha = -math.pi / 12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(LEANING).simulate(t_end=8.0, formulation=formulation, **TIGHT)
    force = trajectory["contact_force_wall"]
    resting = np.flatnonzero(force != 0.0)
    assert len(resting) > 100 and resting[-1] == len(trajectory.t) - 1
    rest = resting[1:]
    assert np.max(np.abs(force[rest] - G * math.tan(-alpha))) < 1e-9
    assert np.max(np.abs(trajectory["lambda_rod"][rest] + G / math.cos(alpha))) < 1e-9
    assert np.max(np.abs(trajectory["x"][rest] - math.sin(alpha))) < 1e-12
    assert np.max(np.abs(trajectory["residual_rod"])) < 1e-10
    assert np.max(np.abs(trajectory["x_dot"][rest])) < 1e-12


def test_a_sweep_reports_the_energy_an_inelastic_contact_takes_as_a_gain() -> None:
    """With e < 1 the energy h is not conserved: the sweep's column is ``energy_gain`` =
    h(t_end) − h(0) (the ball ends at rest on the floor: −m g h₀), not a drift; with e = 1 it is
    the drift, an integration error."""
    import csv
    import io

    from click.testing import CliRunner

    from lagsim.cli import main

    def table(*args: str) -> list[dict[str, str]]:
        result = CliRunner().invoke(main, ["sweep", *args, "--scheduler", "synchronous"],
                                    catch_exceptions=False)
        return list(csv.DictReader(io.StringIO(result.stdout)))

    ball = table(str(SYSTEMS / "bouncing_ball.yaml"), "--values", "m=1,2")
    assert [float(r["energy_gain"]) for r in ball] == pytest.approx([-G, -2 * G], abs=1e-12)
    stop = table(str(SYSTEMS / "pendulum_stop.yaml"), "--values", "m=1,2", "--set", "e=1",
                 "--t-end", "5")
    assert max(float(r["energy_drift"]) for r in stop) < 1e-8


def test_a_misspelt_contact_key_is_suggested_and_a_name_clash_is_located() -> None:
    line = BALL.splitlines().index(CONTACT) + 1
    with pytest.raises(InputError, match=r"unknown key 'restitusion' in constraint 1 \(did you "
                                         r"mean 'restitution'\?\)"):
        parse_spec(BALL.replace(CONTACT, "  - {name: floor, unilateral: y, restitusion: e}"),
                   "ball.yaml", "ball")
    twice = BALL.replace(CONTACT, CONTACT + "\n  - {name: floor, holonomic: y - 2}")
    with pytest.raises(InputError, match="constraint name 'floor' is used twice") as caught:
        parse_spec(twice, "ball.yaml", "ball")
    assert caught.value.location.line == line + 1


def test_stop_when_on_a_velocity_stops_at_the_impact_that_flips_it() -> None:
    """y_dot jumps from −v₁ to e v₁ at the first impact: the jump changes the sign of the
    --stop-when expression, so the run stops there, its last row the state after the impact."""
    trajectory = run("bouncing_ball", t_end=3.0, stop_when="y_dot", **TIGHT)
    t1 = math.sqrt(2 / G)
    assert trajectory.stop_reason == "stop_when"
    assert abs(trajectory.t[-1] - t1) < 1e-12
    assert abs(trajectory["y_dot"][-1] - 0.8 * G * t1) < 1e-12
    assert trajectory["impulse_floor"][-1] > 0.0


SLIDING = """
name: sliding
parameters: {m: 1.0, g: 9.81, e: 0.5}
coordinates: [x, y]
masses:
  ball: {mass: m, position: [x, y]}
gravity: [0, -g]
constraints:
  - {name: floor, unilateral: y, restitution: e}
initial: {x: 0, x_dot: 1, y: 1}
"""


def test_the_motion_along_the_floor_goes_on_across_the_accumulation() -> None:
    """A ball thrown along a frictionless floor: x = t throughout, across every impact, the
    accumulation at t∞ and the rest on the floor (the passage carries the motion along it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(SLIDING).simulate(t_end=3.0, **TIGHT)
    t_inf = math.sqrt(2 / G) * 3
    last = impact_rows(trajectory, "floor")[-1]
    assert abs(trajectory.t[last] - t_inf) < 1e-9
    assert np.max(np.abs(trajectory["x"] - trajectory.t)) < 1e-12
    assert np.max(np.abs(trajectory["x_dot"] - 1.0)) < 1e-12
    assert np.max(np.abs(trajectory["y"][last:])) < 1e-12


def simulate_cli(*args: str) -> tuple[int, str]:
    from click.testing import CliRunner

    from lagsim.cli import main

    result = CliRunner().invoke(main, ["simulate", *args])
    return result.exit_code, result.output


def test_events_file_rows_are_the_ball_impacts_in_closed_form(tmp_path: Path) -> None:
    """``simulate --events``: the n-th row of the ball (e = 0.5, m = 2) is at
    tₙ = t₁ + 2v₁e(1 − eⁿ⁻¹)/(g(1 − e)) with Λₙ = m(1 + e)vₙ, vₙ = eⁿ⁻¹v₁, ẏ⁻ = −vₙ, ẏ⁺ = e vₙ
    and the loss ½ m vₙ²(1 − e²) (Pfeiffer and Glocker 1996, §4.3)."""
    events, out = tmp_path / "events.csv", tmp_path / "out.csv"
    code, text = simulate_cli(str(SYSTEMS / "bouncing_ball.yaml"), "--set", "e=0.5", "--set", "m=2",
                              "--t-end", "2", "--rtol", "1e-12", "--atol", "1e-12",
                              "--events", str(events), "-o", str(out))
    assert code == 0, text
    header = events.read_text().splitlines()[0].split(",")
    assert header == naming.events(["y"])
    lines = [line.split(",") for line in events.read_text().splitlines()[1:]]
    assert {cells[1] for cells in lines} == {"floor"}
    e, m = 0.5, 2.0
    t1 = math.sqrt(2 / G)
    v1 = G * t1
    column = {name: np.array([float(cells[i]) for cells in lines])
              for i, name in enumerate(header) if name != "contact"}
    rows = slice(0, 12)
    n = np.arange(1, 13)
    v = e ** (n - 1) * v1
    assert np.max(np.abs(column["t"][rows] - (t1 + 2 * v1 * e * (1 - e ** (n - 1))
                                              / (G * (1 - e))))) < 1e-12
    assert np.max(np.abs(column["impulse"][rows] - m * (1 + e) * v)) < 1e-12
    assert np.max(np.abs(column["y_dot_before"][rows] + v)) < 1e-12
    assert np.max(np.abs(column["y_dot_after"][rows] - e * v)) < 1e-12
    assert np.max(np.abs(column["gap_rate_after"][rows] - e * v)) < 1e-12
    assert np.max(np.abs(column["energy_loss"][rows] - m * v ** 2 * (1 - e * e) / 2)) < 1e-12
    assert np.all(column["tangential_impulse"] == 0.0)
    trajectory = Trajectory.from_columns(*_csv(out))
    hits = impact_rows(trajectory, "floor")
    assert np.array_equal(trajectory.t[hits], column["t"])
    assert np.array_equal(trajectory["impulse_floor"][hits], column["impulse"])


def test_cradle_balls_leaving_together_take_no_further_impact(tmp_path: Path) -> None:
    """Newton's law per contact at t = (x2 − d − x1)/v = 0.4 (the system's description): impulses
    (4/3, 2/3) m v at 'left' and 'right', velocities (−1/3, 2/3, 2/3) v. Then 'left' opens at
    rate v and 'right' stays at g = 0 with ġ = 0 and no force: a touch, never closing, so the
    events file holds exactly those two rows, at the default tolerances over 20 s (the gap of
    'right' crosses 0 by rounding many times there)."""
    m, v = 1.0, 1.0
    events, out = tmp_path / "events.csv", tmp_path / "out.csv"
    code, text = simulate_cli("newtons_cradle", "--t-end", "20", "--events", str(events),
                              "-o", str(out))
    assert code == 0, text
    header = events.read_text().splitlines()[0].split(",")
    lines = [line.split(",") for line in events.read_text().splitlines()[1:]]
    assert [cells[1] for cells in lines] == ["left", "right"]
    column = {name: np.array([float(cells[i]) for cells in lines])
              for i, name in enumerate(header) if name != "contact"}
    assert np.max(np.abs(column["t"] - 0.4)) < 1e-12
    assert np.max(np.abs(column["impulse"] - np.array([4 / 3, 2 / 3]) * m * v)) < 1e-12
    trajectory = Trajectory.from_columns(*_csv(out))
    impulses = np.stack([trajectory["impulse_left"], trajectory["impulse_right"]])
    assert np.array_equal(np.flatnonzero(np.any(impulses != 0.0, axis=0)),
                          impact_rows(trajectory, "left"))
    assert len(impact_rows(trajectory, "left")) == 1
    assert np.all((impulses == 0.0) | (np.abs(impulses) > 1e-12 * m * v))
    final = [trajectory[name][-1] for name in ("x1_dot", "x2_dot", "x3_dot")]
    assert np.max(np.abs(np.array(final) - np.array([-1 / 3, 2 / 3, 2 / 3]) * v)) < 1e-12
    assert np.max(np.abs(trajectory.energy - m * v * v / 2)) < 1e-12
    assert abs(trajectory[naming.IMPACT_LOSS].sum()) < 1e-12


def _csv(path: Path) -> tuple[tuple[str, ...], np.ndarray]:
    from lagsim.output.io import read_csv

    table = read_csv(path)
    return table.columns, np.asarray(table.data)


def test_events_file_is_left_untouched_by_a_failed_run_and_refused_without_contacts(
        tmp_path: Path) -> None:
    events = tmp_path / "events.csv"
    events.write_text("old\n")
    code, text = simulate_cli(str(SYSTEMS / "bouncing_ball.yaml"), "--init", "y=-1",
                              "--events", str(events), "-o", str(tmp_path / "out.csv"))
    assert code == 2 and "must be >= 0 there" in text
    assert events.read_text() == "old\n"
    code, text = simulate_cli(str(SYSTEMS / "pendulum.yaml"), "--events", str(events),
                              "-o", str(tmp_path / "out.csv"))
    assert code == 2 and "has no unilateral constraints" in text
    assert events.read_text() == "old\n"
    code, text = simulate_cli(str(SYSTEMS / "bouncing_ball.yaml"), "--events", str(events),
                              "-o", str(events))
    assert code == 2 and "--events names the place of -o" in text


def test_plot_marks_each_impact_at_its_time(tmp_path: Path, ball: Trajectory) -> None:
    """``lagsim plot`` of a run with contacts: a vertical mark on every panel against t at each
    row whose impulse_<c> is not 0, and none on a panel against another column."""
    from lagsim.output.io import read_csv
    from lagsim.viz.figures import make_figure

    out = tmp_path / "ball.csv"
    ball.to_csv(out)
    table = read_csv(out)
    expected = ball.t[impact_rows(ball, "floor")]
    assert len(expected) > 15
    for kind in ("overview", "time", "energy"):
        fig = make_figure(table, kind=kind)
        for ax in fig.axes:
            marks = [c for c in ax.collections if c.get_gid() == "impacts"]
            assert len(marks) == 1
            xs = np.array([segment[0][0] for segment in marks[0].get_segments()])
            assert np.array_equal(xs, expected)
    fig = make_figure(table, kind="time", x="y", columns=["y_dot"])
    assert not [c for ax in fig.axes for c in ax.collections if c.get_gid() == "impacts"]


ROUGH = """
name: rough_ball
parameters: {m: 2.0, g: 9.81, e: 0.5, mu: 0.1}
coordinates: [x, y]
masses:
  ball: {mass: m, position: [x, y]}
gravity: [0, -g]
constraints:
  - {name: floor, unilateral: y, restitution: e, friction: mu, tangent: x}
initial: {y: 1, x_dot: 1}
"""


@pytest.mark.parametrize("mu", [0.1, 1.0])
def test_a_rough_floor_takes_a_tangential_impulse_under_coulombs_law(mu: float) -> None:
    """A ball thrown along a rough floor at u = 1 hits it at v₁ = sqrt(2 g h₀): Λ_N = m(1 + e)v₁;
    it sticks (ẋ⁺ = 0, |Λ_T| = m u) when m u ≤ μΛ_N, else slides with Λ_T = −μΛ_N, ẋ⁺ =
    u − μΛ_N/m (Coulomb's law for the impulse, Pfeiffer and Glocker 1996, §7.2)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(ROUGH.replace("mu: 0.1", f"mu: {mu}")).simulate(t_end=0.6, **TIGHT)
    m, e, u = 2.0, 0.5, 1.0
    v1 = math.sqrt(2 * G)
    (event,) = trajectory.events
    normal = m * (1 + e) * v1
    assert abs(event.impulse - normal) < 1e-12
    slide = u - mu * normal / m
    expected = slide if slide > 0 else 0.0
    assert abs(event.qd_after[0] - expected) < 1e-12
    assert abs(event.qd_after[1] - e * v1) < 1e-12
    assert abs(event.tangential - m * (expected - u)) < 1e-12
    assert abs(event.tangential) <= mu * event.impulse + 1e-12


@pytest.fixture(scope="module")
def rocking() -> Trajectory:
    return run("rocking_block", t_end=2.0, samples=40001, **TIGHT)


def test_rocking_block_ratio_of_angular_velocities_is_housners(rocking: Trajectory) -> None:
    """Housner 1963 (Bull. Seismol. Soc. Am. 53(2)): the impact about the new corner keeps the
    angular momentum about it, so θ̇⁺/θ̇⁻ = 1 − (3/2) sin²α for a rectangular block
    (I_O = (4/3) m R²), α = atan(b/h); the corners take turns, the new one does not bounce and
    sticks: at θ = 0 its velocity ẋ + h θ̇ is 0 after the impact."""
    trajectory = rocking
    alpha = math.atan(0.2 / 0.6)
    r = 1 - 1.5 * math.sin(alpha) ** 2
    events = trajectory.events
    assert len(events) == 7
    assert [e.contact for e in events[:4]] == ["left", "right", "left", "right"]
    for event in events:
        assert abs(event.qd_after[2] / event.qd_before[2] - r) < 1e-10
        assert abs(event.rate_after) < 1e-12
        assert abs(event.qd_after[0] + 0.6 * event.qd_after[2]) < 1e-10


def test_rocking_block_amplitudes_decay_as_housners_closed_form(rocking: Trajectory) -> None:
    """Between impacts the block turns about one corner with its energy kept, so the n-th
    amplitude θₙ follows cos(α − θₙ₊₁) − cos α = r² (cos(α − θₙ) − cos α) (Housner 1963, with
    r = 1 − (3/2) sin²α); the amplitudes are read as the vertex of the parabola through the
    three samples about each largest |θ|."""
    trajectory = rocking
    b, h, theta0 = 0.2, 0.6, 0.1
    alpha = math.atan(b / h)
    r = 1 - 1.5 * math.sin(alpha) ** 2
    t = trajectory.t
    theta = np.abs(trajectory["theta"])
    impacts = [e.t for e in trajectory.events]
    expected = theta0
    for start, end in zip(impacts[:6], impacts[1:7]):
        expected = alpha - math.acos(math.cos(alpha) + r * r * (math.cos(alpha - expected)
                                                                - math.cos(alpha)))
        inside = np.flatnonzero((t > start) & (t < end))
        k = inside[np.argmax(theta[inside])]
        y0, y1, y2 = theta[k - 1:k + 2]
        vertex = y1 + (y2 - y0) ** 2 / (8 * (2 * y1 - y0 - y2))
        assert abs(vertex - expected) < 1e-9


@pytest.mark.parametrize("file", ["bouncing_ball.yaml", "pendulum_stop.yaml",
                                  "newtons_cradle.yaml", "rocking_block.yaml"])
def test_every_bundled_impact_system_loses_no_energy_it_does_not_report(file: str) -> None:
    """Over a short run of each bundled system with contacts, h falls by exactly the energy the
    impacts report (h is conserved in flight and while held, 0 ≤ e ≤ 1 takes, never gives)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(str(SYSTEMS / file)).simulate(t_end=1.0, **TIGHT)
    loss = trajectory[naming.IMPACT_LOSS]
    assert np.all(loss >= -1e-12)
    assert abs(trajectory.energy[0] - trajectory.energy[-1] - loss.sum()) < 1e-8


def test_check_notes_the_friction_of_a_rough_contact() -> None:
    from lagsim.analysis.check import check_system

    spec = parse_spec((SYSTEMS / "rocking_block.yaml").read_text(), "rocking_block.yaml",
                      "rocking_block")
    notes = [n for n in check_system(spec, build_model(spec)).notes
             if n.startswith("unilateral")]
    assert len(notes) == 2
    assert notes[1].endswith("; Coulomb friction mu = 1 along x - b*cos(theta) + h*sin(theta) "
                             "takes energy too when it acts")
