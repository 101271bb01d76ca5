"""Errors raised where the file is unknown point at the part they are about (issue 15, README
"Errors"): the consistent start (:mod:`lagsim.run.start`), the formulation checks and the reduction
carry the constraint or coordinate as :class:`lagsim.errors.Subject`, and
:class:`lagsim.run.problem.SourceMap` locates it. Each message here also names a constraint whose
name is a word or coordinate appearing earlier in the text, so only the structured subject can
point at the constraint meant."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from lagsim.cli import main
from lagsim.errors import Location, Subject
from lagsim.run.problem import SourceMap
from lagsim.spec.system import parse_spec


def place(text: str, line_text: str, token: str) -> str:
    """LINE:COL of ``token`` on the first line of ``text`` that contains ``line_text``."""
    number, line = next((n, line) for n, line in enumerate(text.splitlines(), start=1)
                        if line_text in line)
    return f"{number}:{line.index(token, line.index(line_text)) + 1}"


def simulate(tmp_path: Path, text: str, *args: str) -> tuple[int, str, Path]:
    """(exit code, last stderr line, path) of `lagsim simulate` on ``text``."""
    path = tmp_path / "system.yaml"
    path.write_text(text)
    result = CliRunner().invoke(main, ["simulate", str(path), "--samples", "3", *args])
    return result.exit_code, result.stderr.splitlines()[-1], path


# A bead on a rod in the plane z = 0: the constraint fixing z is named x, like a coordinate.
ROD = """parameters: {l: 1.0}
coordinates: [x, y, z]
kinetic: 1/2*(x_dot**2 + y_dot**2 + z_dot**2)
constraints:
  - name: x
    holonomic: z
  - name: rod
    holonomic: x**2 + y**2 - l**2
"""


def test_strict_initial_points_at_the_conflicting_constraint_not_the_one_named_like_x(tmp_path):
    """The message lists the move "x: 1.5 -> 1.0" before naming rod; x = 1.5 is off the unit
    circle whatever y is, so rod conflicts with the given x."""
    code, error, path = simulate(tmp_path, ROD, "--init", "x=1.5", "--strict-initial")
    assert code == 2
    assert error == (
        f"lagsim: error: {path}:{place(ROD, 'holonomic: x**2', 'x**2')}: the initial state is "
        "off the constraints and --strict-initial forbids correcting it (x: 1.5 -> 1.0): "
        "constraint rod conflicts with the given values; give consistent initial values or "
        "leave out the ones the constraints should compute")


CONFLICT = """coordinates: [x, y, z]
kinetic: 1/2*(x_dot**2 + y_dot**2 + z_dot**2)
constraints:
  - name: initial
    holonomic: z
  - name: left
    holonomic: x
  - name: right
    holonomic: x - 1
"""


def test_a_position_conflict_points_at_its_first_culprit_not_a_constraint_named_initial(
        tmp_path):
    """x = 0 and x = 1 cannot both hold; the constraint named "initial" (z = 0) is met."""
    code, error, path = simulate(tmp_path, CONFLICT)
    assert code == 2
    assert error.startswith(
        f"lagsim: error: {path}:{place(CONFLICT, 'holonomic: x', 'x')}: the initial positions "
        "cannot be made consistent: the holonomic constraints left, right conflict at t = 0.0")


VELOCITIES = """coordinates: [x, y]
kinetic: 1/2*(x_dot**2 + y_dot**2)
constraints:
  - name: initial
    holonomic: y
  - name: slow
    velocity: x_dot - 1
  - name: fast
    velocity: x_dot - 2
"""


def test_a_velocity_conflict_points_at_its_first_culprit_not_a_constraint_named_initial(
        tmp_path):
    """ẋ = 1 and ẋ = 2 cannot both hold; "initial" (y = 0, ẏ = 0) is met."""
    code, error, path = simulate(tmp_path, VELOCITIES)
    assert code == 2
    assert error.startswith(
        f"lagsim: error: {path}:{place(VELOCITIES, 'velocity: x_dot - 1', 'x_dot')}: the "
        "initial velocities cannot be made consistent: the constraints slow, fast conflict")


SKATE = """coordinates: [x, y, z, psi]
kinetic: 1/2*(x_dot**2 + y_dot**2 + z_dot**2 + psi_dot**2)
initial: {psi: 0.3}
constraints:
  - name: reduced
    holonomic: z
  - name: blade
    velocity: x_dot*sin(psi) - y_dot*cos(psi)
"""


def test_a_formulation_from_the_command_line_points_at_the_constraint_it_cannot_handle(
        tmp_path):
    """The message names blade, which the reduced formulation cannot eliminate (it is
    nonholonomic), and points at blade, not at the constraint named reduced."""
    code, error, path = simulate(tmp_path, SKATE, "--formulation", "reduced")
    assert code == 2
    assert error == (
        f"lagsim: error: {path}:{place(SKATE, 'velocity: x_dot', 'x_dot')}: velocity "
        "constraint 'blade' cannot be eliminated by Lagrange's recipe: it is nonholonomic "
        "(Frobenius' test, as `lagsim check` reports); use index1 or udwadia-kalaba")


def test_the_source_map_locates_a_subject_by_kind():
    """A coordinate is located at its initial value when one is given, else at its
    declaration; a constraint at its expression; an unknown name nowhere."""
    spec = parse_spec(SKATE, "skate.yaml")
    sources = SourceMap.of(spec)
    at = {name: Location("skate.yaml", *map(int, place(SKATE, line, token).split(":")))
          for name, line, token in (("psi", "initial: {psi", "0.3"), ("x", "coordinates", "x"),
                                    ("blade", "velocity:", "x_dot"))}
    assert sources.locate(Subject("coordinate", "psi")) == at["psi"]
    assert sources.locate(Subject("coordinate", "x")) == at["x"]
    assert sources.locate(Subject("constraint", "blade")) == at["blade"]
    assert sources.locate(Subject("constraint", "x")) is None
    assert sources.locate(None) is None


@pytest.mark.parametrize("name", ["x", "rod"])
def test_a_reduction_error_carries_the_constraint_it_is_about(name):
    """A constraint in no coordinate (φ = t − 1) cannot be solved for one: the refusal names
    it, as its subject too, also when it is named like a coordinate (seed 002 §23.5)."""
    from lagsim.symbolic.model import build_model
    from lagsim.symbolic.reduce import ReductionError, reduce_model

    text = ("coordinates: [x, y]\nkinetic: 1/2*(x_dot**2 + y_dot**2)\nconstraints:\n"
            f"  - name: {name}\n    holonomic: t - 1\n")
    with pytest.raises(ReductionError) as err:
        reduce_model(build_model(parse_spec(text, "t.yaml")), {"x": 0.0, "y": 0.0})
    assert err.value.about == Subject("constraint", name)
    assert f"constraint '{name}'" in err.value.message


REDUNDANT = """coordinates: [x, y, z]
kinetic: 1/2*(x_dot**2 + y_dot**2 + z_dot**2)
initial: {x: 0.5, y: 0.5, z: 0.1}
constraints:
  - name: c
    holonomic: x - y
  - name: y
    holonomic: 2*x - 2*y
"""


def test_derive_points_a_refused_reduction_at_its_constraint(tmp_path):
    """2x − 2y = 0 repeats x − y = 0: its row of φ_q is twice the other's, so it eliminates no
    coordinate and the reduced form of seed 002 §23.5 is refused at that constraint, named y
    like a coordinate, not at the coordinate y's initial value."""
    path = tmp_path / "redundant.yaml"
    path.write_text(REDUNDANT)
    result = CliRunner().invoke(main, ["derive", str(path), "--form", "reduced"])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"lagsim: error: {path}:{place(REDUNDANT, 'holonomic: 2', '2*x')}: constraint 'y' is "
        "redundant at the start: its row of the constraint Jacobian is a combination of those "
        "of c")
