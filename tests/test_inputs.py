"""The ``inputs:`` key (issue 28): names only forces, loads and torques may use, parameters with
their defaults everywhere else, known to the spec, the model and the compiled system."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lagsim.cli import main
from lagsim.errors import InputError
from lagsim.numeric.compile import compile_model
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

CART_POLE_PATH = Path(__file__).parent / "cart_pole_lqr.yaml"
CART_POLE = CART_POLE_PATH.read_text(encoding="utf-8")


def test_an_input_is_a_parameter_with_its_default_and_is_named_as_an_input() -> None:
    spec = parse_spec(CART_POLE, "cp.yaml")
    assert spec.inputs == ("F",)
    assert spec.parameter_values == {"mc": 1.0, "mp": 0.1, "l": 0.5, "g": 9.81, "F": 0.0}
    model = build_model(spec)
    assert model.inputs == ("F",)
    numeric = compile_model(model)
    assert numeric.inputs == ("F",)
    q, qd = np.array([0.0, 0.0]), np.zeros(2)
    assert np.allclose(numeric.accelerations(0.0, q, qd), 0.0)
    pushed = numeric.with_parameters({"F": 1.1})
    # upright, at rest: (mc + mp) ẍ + mp l θ̈ = F and l θ̈ + ẍ = 0 give ẍ = F / mc
    assert pushed.accelerations(0.0, q, qd) == pytest.approx([1.1, -1.1 / 0.5], rel=1e-12)


def test_set_changes_an_inputs_default() -> None:
    spec = parse_spec(CART_POLE, "cp.yaml", overrides={"F": 2.5})
    assert spec.parameter_values["F"] == 2.5 and spec.inputs == ("F",)


def test_a_file_without_inputs_has_none() -> None:
    spec = parse_spec(CART_POLE.replace("inputs: {F: 0}\n", "").replace("x: F", "x: 0"), "c.yaml")
    assert spec.inputs == () and build_model(spec).inputs == ()


def test_an_inputs_default_may_use_parameters_and_loads_and_torques_may_use_inputs() -> None:
    spec = parse_spec(textwrap.dedent("""\
        parameters: {m: 2}
        inputs: {F: 0, M: 3*m}
        coordinates: [x, th]
        masses:
          bar: {mass: m, position: [x, 0], inertia: 1, angle: th}
        loads:
          bar: [F, 0]
        torques:
          bar: M
        """), "b.yaml")
    assert spec.inputs == ("F", "M") and spec.parameter_values["M"] == 6.0
    numeric = compile_model(build_model(spec)).with_parameters({"F": 4.0, "M": 0.5})
    assert numeric.accelerations(0.0, np.zeros(2), np.zeros(2)) == pytest.approx([2.0, 0.5])


@pytest.mark.parametrize(("edit", "marker"), [
    (("gravity: [0, -g]", "gravity: [0, -g]\npotential: F*x"), "F*x"),
    (("mass: mc,", "mass: mc + F,"), "F,"),
    (("initial: {theta: 0.3}", "initial: {theta: F}"), "F}"),
    (("forces:", "constraints: [x - F]\nforces:"), "F]"),
    (("mass: mc,", "mass: mc, position: [x + F, 0]}\n  bob: {mass: 1,"), "F, 0]}"),
])
def test_an_input_used_outside_forces_is_a_located_error(edit: tuple[str, str],
                                                          marker: str) -> None:
    """The error points at the input's own column (the marker's first character)."""
    text = CART_POLE.replace(*edit)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if marker in row)
    column = text.splitlines()[line - 1].index(marker) + 1
    with pytest.raises(InputError) as err:
        parse_spec(text, "cp.yaml")
    assert "'F' is an input, which only 'forces', 'loads' and 'torques' may use" in \
        err.value.message
    assert (err.value.location.line, err.value.location.column) == (line, column)


def test_an_input_may_not_also_be_a_parameter_or_a_coordinate() -> None:
    with pytest.raises(InputError, match="input 'g' is also a parameter") as err:
        parse_spec(CART_POLE.replace("{F: 0}", "{g: 0}"), "cp.yaml")
    assert err.value.location.line == CART_POLE.splitlines().index("inputs: {F: 0}") + 1
    with pytest.raises(InputError, match="coordinate 'x' is also a parameter"):
        parse_spec(CART_POLE.replace("{F: 0}", "{x: 0}"), "cp.yaml")


def test_derive_names_the_inputs() -> None:
    path = CART_POLE_PATH
    text = CliRunner().invoke(main, ["derive", str(path)])
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[0] == ("cart_pole_lqr: coordinates x, θ; parameters mc = 1, "
                                           "mp = 0.1, l = 0.5, g = 9.81; inputs F = 0")
    doc = json.loads(CliRunner().invoke(main, ["derive", str(path), "--format", "json"]).output)
    assert doc["inputs"] == ["F"] and doc["parameters"]["F"] == 0.0
    assert list(doc)[list(doc).index("parameters") + 1] == "inputs"
