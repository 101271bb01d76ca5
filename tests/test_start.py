"""A consistent start that keeps what the user set (issue 15, lagsim.run.start), through the command
line as a user meets it: the first CSV row, the lines on stderr, the exit code.

Closed forms: a disk of mass m and radius r rolling without slipping (ẋ = r θ̇) has
T = ½mẋ² + ½(½mr²)θ̇² = ¾ m r² θ̇², so 3 m r² for θ̇ = 2; a pendulum in natural coordinates with x
given has y = ±√(l² − x²).
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from inline_systems import DOUBLE_PENDULUM_CARTESIAN

from lagsim.cli import main
from lagsim.numeric.compile import compile_model
from lagsim.run.start import NO_INITIAL, consistent_start
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

M, R = 2.0, 0.5
DISK = f"""
parameters: {{m: {M}, r: {R}}}
coordinates: [x, theta]
kinetic: 1/2*m*x_dot**2 + 1/2*(1/2*m*r**2)*theta_dot**2
constraints:
  - name: roll
    velocity: x_dot - r*theta_dot
"""

L = 1.0
PENDULUM = f"""
parameters: {{m: 1.0, g: 9.81, l: {L}}}
coordinates: [x, y]
masses: {{bob: {{mass: m, position: [x, y]}}}}
gravity: [0, -g]
constraints:
  - name: rod
    holonomic: x**2 + y**2 - l**2
"""

CONFLICT = """
coordinates: [x, y]
kinetic: 1/2*(x_dot**2 + y_dot**2)
constraints:
  - name: left
    holonomic: x
  - name: right
    holonomic: x - 1
"""


def simulate(tmp_path: Path, text: str, *args: str) -> tuple[int, dict[str, float], list[str],
                                                              np.ndarray | None]:
    """(exit code, first CSV row by column, stderr lines, energy column) of `lagsim simulate`."""
    path = tmp_path / "system.yaml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["simulate", str(path), "--t-end", "1", "--samples", "11",
                                       *args])
    lines = [line.replace(f"lagsim: error: {path}:", "lagsim: error: ", 1)
             for line in result.stderr.splitlines()]
    lines = [re.sub(r"^lagsim: error: \d+:\d+: ", "lagsim: error: ", line) for line in lines]
    if result.exit_code:
        return result.exit_code, {}, lines, None
    rows = list(csv.reader(io.StringIO(result.stdout)))
    data = np.array(rows[1:], dtype=float)
    first = {name: float(v) for name, v in zip(rows[0], data[0])}
    return 0, first, lines, data[:, rows[0].index("energy")]


def test_rolling_disk_keeps_the_given_spin_and_computes_the_roll(tmp_path):
    """θ̇ = 2 given, ẋ left out: ẋ = r θ̇ = 1 and h = 3 m r² = 1.5 along the whole run (the old
    projection started at θ̇ = 2/3, ẋ = 1/3 and lost two thirds of the energy)."""
    code, first, notes, energy = simulate(tmp_path, DISK + "initial: {theta_dot: 2}\n")
    assert code == 0, notes
    assert first["theta_dot"] == 2.0
    assert abs(first["x_dot"] - R * 2.0) <= 1e-15
    np.testing.assert_allclose(energy, 3 * M * R**2, rtol=1e-12, atol=0)
    assert notes == ["lagsim: initial x_dot: 0.0 -> 1.0 (computed from constraint roll)"]


def test_rolling_disk_with_conflicting_given_values_moves_them_and_says_so(tmp_path):
    """ẋ = 0 and θ̇ = 2 both given: the least change in the kinetic metric diag(m, m r²/2) onto
    ẋ = r θ̇ is θ̇ = 2/3, ẋ = 2r/3 (a Lagrange multiplier μ: δẋ = μ/m, δθ̇ = −2μ/(m r))."""
    code, first, notes, _ = simulate(tmp_path, DISK + "initial: {x_dot: 0, theta_dot: 2}\n")
    assert code == 0, notes
    assert abs(first["theta_dot"] - 2 / 3) <= 1e-14
    assert abs(first["x_dot"] - 2 * R / 3) <= 1e-14
    assert [n.split(" -> ")[0] for n in notes] == ["lagsim: initial x_dot: 0.0",
                                                  "lagsim: initial theta_dot: 2.0"]
    assert all(n.endswith("(moved: constraint roll conflicts with the given values)")
               for n in notes)


def test_strict_initial_computes_unset_values_but_refuses_to_move_given_ones(tmp_path):
    code, first, notes, _ = simulate(tmp_path, DISK + "initial: {theta_dot: 2}\n",
                                     "--strict-initial")
    assert code == 0 and first["x_dot"] == 1.0 and first["theta_dot"] == 2.0
    code, _, notes, _ = simulate(tmp_path, DISK + "initial: {theta_dot: 2}\n",
                                 "--strict-initial", "--init", "x_dot=0")
    assert code == 2 and len(notes) == 1
    match = re.fullmatch(
        r"lagsim: error: the initial state is off the constraints and --strict-initial "
        r"forbids correcting it \(x_dot: 0\.0 -> (\S+); theta_dot: 2\.0 -> (\S+)\): "
        r"constraint roll conflicts with the given values; give consistent initial values or "
        r"leave out the ones the constraints should compute", notes[0])
    assert match, notes
    assert abs(float(match[1]) - 2 * R / 3) <= 1e-14 and abs(float(match[2]) - 2 / 3) <= 1e-14


@pytest.mark.parametrize("x", [0.6, -0.3, 0.999])
def test_pendulum_given_x_hangs_on_the_side_gravity_pulls_to(tmp_path, x):
    """Rule 3 of lagsim.run.start: from y = 0 the rod's gradient in y vanishes and both roots are
    equally near; the start takes the side the force at rest points to, y = −√(l² − x²)."""
    code, first, notes, _ = simulate(tmp_path, PENDULUM, "--init", f"x={x}")
    assert code == 0, notes
    assert first["x"] == x
    assert abs(first["y"] + math.sqrt(L**2 - x**2)) <= 1e-14
    assert notes == [f"lagsim: initial y: 0.0 -> {first['y']!r} (computed from constraint rod, "
                     "on the side the force at rest points to)"]


def test_gravity_upward_puts_the_bob_on_the_other_side(tmp_path):
    text = PENDULUM.replace("gravity: [0, -g]", "gravity: [0, g]")
    code, first, _, _ = simulate(tmp_path, text, "--init", "x=0.6")
    assert code == 0 and abs(first["y"] - 0.8) <= 1e-14


def test_without_a_force_the_side_is_asked_for(tmp_path):
    text = PENDULUM.replace("gravity: [0, -g]\n", "")
    code, _, notes, _ = simulate(tmp_path, text, "--init", "x=0.6")
    assert code == 2
    assert notes == [
        "lagsim: error: the constraint rod cannot decide y from y = 0.0: that is a singular "
        "point with starts on either side and no force at rest picks one; give y in 'initial:' "
        "or with --init"]
    code, first, _, _ = simulate(tmp_path, text, "--init", "x=0.6", "--init", "y=0.8")
    assert code == 0 and (first["x"], first["y"]) == (0.6, 0.8)


def test_a_given_value_the_constraint_cannot_reach_is_moved_and_strict_refuses(tmp_path):
    """x = 1.5 on a rod of length 1: no y helps, so x moves to the circle (y stays 0)."""
    code, first, notes, _ = simulate(tmp_path, PENDULUM, "--init", "x=1.5")
    assert code == 0, notes
    assert (first["x"], first["y"]) == (1.0, 0.0)
    assert notes == ["lagsim: initial x: 1.5 -> 1.0 (moved: constraint rod conflicts with the "
                     "given values)"]
    code, _, notes, _ = simulate(tmp_path, PENDULUM, "--init", "x=1.5", "--strict-initial")
    assert code == 2 and len(notes) == 1
    assert "--strict-initial forbids correcting it (x: 1.5 -> 1.0): constraint rod" in notes[0]


def test_no_initial_values_is_said_first_then_the_start_is_computed(tmp_path):
    """A natural-coordinate pendulum with no `initial:` hangs at rest: (0, −l), h = −m g l."""
    code, first, notes, energy = simulate(tmp_path, PENDULUM)
    assert code == 0
    assert notes[0] == f"lagsim: {NO_INITIAL}"
    assert notes[0].startswith("lagsim: no initial values given: every coordinate starts at 0")
    assert (first["x"], first["y"]) == (0.0, -L)
    np.testing.assert_allclose(energy, -9.81 * L, rtol=1e-12)


def test_no_initial_values_comes_before_the_conflict_error(tmp_path):
    code, _, notes, _ = simulate(tmp_path, CONFLICT)
    assert code == 2
    assert notes[0] == f"lagsim: {NO_INITIAL}"
    assert notes[1].startswith("lagsim: error: the initial positions cannot be made consistent: "
                               "the holonomic constraints left, right conflict")
    assert len(notes) == 2


def test_no_initial_values_comes_before_the_rank_message(tmp_path):
    """Two copies of one rod: the auto formulation's rank message follows the note."""
    text = PENDULUM + "  - name: again\n    holonomic: x**2 + y**2 - l**2\n"
    code, first, notes, _ = simulate(tmp_path, text)
    assert code == 0
    assert notes[0] == f"lagsim: {NO_INITIAL}"
    assert notes[-1].startswith("lagsim: auto: the constraint rows are dependent at the start")
    assert (first["x"], first["y"]) == (0.0, -L)


def test_some_values_given_or_no_constraints_say_nothing_about_missing_values(tmp_path):
    code, _, notes, _ = simulate(tmp_path, DISK + "initial: {theta_dot: 0}\n")
    assert code == 0 and notes == []
    code, _, notes, _ = simulate(tmp_path, "coordinates: [x]\nkinetic: 1/2*x_dot**2\n")
    assert code == 0 and notes == []


def test_given_none_is_the_m_orthogonal_projection_of_every_value():
    """The old behaviour for callers that pass no ``given``: every value moves (disk: θ̇ = 2/3)."""
    spec = parse_spec(DISK, "disk.yaml")
    numeric = compile_model(build_model(spec))
    q, qd = consistent_start(numeric, 0.0, np.zeros(2), np.array([0.0, 2.0]))
    np.testing.assert_allclose(qd, [2 * R / 3, 2 / 3], rtol=0, atol=1e-14)
    q, qd = consistent_start(numeric, 0.0, np.zeros(2), np.array([0.0, 2.0]),
                             given={"theta_dot"})
    np.testing.assert_allclose(qd, [R * 2, 2.0], rtol=0, atol=1e-15)


def test_slider_crank_given_the_crank_asks_for_the_slider_side(tmp_path):
    """The rod reaches the rail at x2 = ±√(l² − r²): gravity is across the rail, so it does not
    choose and the user is asked; given x2, the velocities follow: ẏ1 = 0, ẋ2 = ẋ1, ẏ2 = 0."""
    root = Path(__file__).resolve().parents[1]
    text = (root / "systems" / "slider_crank.yaml").read_text()
    text = text[:text.index("initial:")] + "initial: {x1: 0, y1: r, x1_dot: -2.5}\n"
    code, _, notes, _ = simulate(tmp_path, text)
    assert code == 2 and "cannot decide x2 from x2 = 0.0" in notes[0]
    text = text.replace("initial: {", "initial: {x2: sqrt(l**2 - r**2), ")
    code, first, notes, energy = simulate(tmp_path, text)
    assert code == 0, notes
    assert abs(first["x2"] - math.sqrt(1.5**2 - 0.5**2)) <= 1e-14
    assert first["x1"] == 0.0 and first["y1"] == 0.5 and abs(first["y2"]) <= 1e-15
    assert first["x1_dot"] == -2.5 and abs(first["x2_dot"] + 2.5) <= 1e-14
    assert np.ptp(energy) <= 1e-7 * abs(energy[0])


def test_double_pendulum_without_initial_values_hangs_straight_down(tmp_path):
    """Two singular points in a row (both rods have no gradient at the origin, then the second
    none at the first bob): each nudge along gravity settles one rod. At rest hanging,
    h = −g (m1 l1 + m2 (l1 + l2)) = −9.81·(1 + 2·1.5) all along the run."""
    text = DOUBLE_PENDULUM_CARTESIAN.replace("m2: 1.0", "m2: 2.0").replace("l2: 1.0", "l2: 0.5")
    code, first, notes, energy = simulate(tmp_path, text)
    assert code == 0, notes
    assert [first[c] for c in ("x1", "y1", "x2", "y2")] == [0.0, -1.0, 0.0, -1.5]
    np.testing.assert_allclose(energy, -9.81 * 4.0, rtol=1e-12)
    assert notes == [f"lagsim: {NO_INITIAL}",
                     "lagsim: initial y1: 0.0 -> -1.0 (computed from constraints rod1, rod2, on "
                     "the side the force at rest points to)",
                     "lagsim: initial y2: 0.0 -> -1.5 (computed from constraint rod2, on the side "
                     "the force at rest points to)"]
