"""The JSON Schema of the system file (issue 13, "JSON Schema for the system format").

The schema and the loader are tried on one corpus: every file the loader accepts (the bundled
systems, the doc's examples, a few more) validates, and every file that is wrong in structure
(the structural cases of tests/test_spec.py's ERRORS, and bad ``simulate:`` values) fails
validation AND is refused by the loader, which is :func:`lagsim.spec.system.parse_spec` followed by
:meth:`SimulateOptions.resolve` (where ``lagsim simulate`` checks the ``simulate:`` values).
The schema's key sets are the loader's declarations, and its descriptions are quoted from
docs/format.md.
"""

from __future__ import annotations

import json
import re
import textwrap
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner
from test_spec import ERRORS

from lagsim.cli import main
from lagsim.errors import InputError
from lagsim.run.integrate import FORMULATIONS, METHODS, STABILIZERS, SimulateOptions
from lagsim.spec.schema import CONSTRAINT_KEYS, schema_text, system_schema
from lagsim.spec.system import MASS_KEYS, SIMULATE_KEYS, TOP_KEYS, bundled_systems, parse_spec

DOC = Path(__file__).resolve().parent.parent / "docs" / "format.md"
SCHEMA = system_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def schema_errors(text: str) -> list[str]:
    return [e.message for e in VALIDATOR.iter_errors(yaml.safe_load(text))]


def loader_error(text: str) -> InputError | None:
    """What the loader says of ``text``: the spec, then the simulate: values; None if it
    accepts the file."""
    try:
        spec = parse_spec(text, "sys.yaml")
        SimulateOptions.resolve(spec.simulate, {})
    except InputError as exc:
        return exc
    return None


def bundled_text(name: str) -> str:
    return resources.files("lagsim.systems").joinpath(f"{name}.yaml").read_text("utf-8")


def doc_blocks() -> list[str]:
    """The complete systems among docs/format.md's YAML blocks."""
    blocks = DOC.read_text(encoding="utf-8").split("```yaml\n")[1:]
    return [b.split("```", 1)[0] for b in blocks
            if b.startswith("name: ") and "\ncoordinates:" in b.split("```", 1)[0]]


def test_schema_is_valid_draft_2020_12() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_lagsim_schema_prints_it() -> None:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0, result.output
    assert result.output == schema_text()
    assert json.loads(result.output) == SCHEMA


# --- the key sets are the loader's ---------------------------------------------------------------

def test_key_sets_come_from_the_loader() -> None:
    props = SCHEMA["properties"]
    assert list(props) == list(TOP_KEYS)
    assert SCHEMA["additionalProperties"] is False
    mass = props["masses"]["additionalProperties"]
    assert list(mass["properties"]) == list(MASS_KEYS) and mass["additionalProperties"] is False
    assert list(props["simulate"]["properties"]) == list(SIMULATE_KEYS)
    assert props["simulate"]["additionalProperties"] is False
    constraint = props["constraints"]["items"]["anyOf"][1]
    assert list(constraint["properties"]) == list(CONSTRAINT_KEYS)


@pytest.mark.parametrize(("key", "registry"), [
    ("method", tuple(METHODS)), ("formulation", ("auto", *FORMULATIONS)),
    ("stabilize", tuple(STABILIZERS)),
])
def test_choices_come_from_the_registries(key: str, registry: tuple[str, ...]) -> None:
    choice = SCHEMA["properties"]["simulate"]["properties"][key]
    assert choice["anyOf"][0]["enum"] == list(registry)


def test_an_unknown_mass_or_constraint_key_is_named_by_the_loader_too() -> None:
    """The constraint keys are written in spec.py's message; the schema's are the same."""
    err = loader_error("coordinates: [x]\nkinetic: x_dot**2\nconstraints:\n  - zzz: x\n")
    assert err is not None
    assert "use name:, and one of holonomic: or velocity:" in err.message
    assert set(CONSTRAINT_KEYS) == {"name", "holonomic", "velocity"}


# --- descriptions are quoted from docs/format.md -------------------------------------------------

def _descriptions(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [d for v in node.values() for d in _descriptions(v)]
    if isinstance(node, list):
        return [d for v in node for d in _descriptions(v)]
    return []


def _table(heading: str) -> dict[str, str]:
    """key → meaning (the last cell) of the table under ``heading`` in docs/format.md."""
    section = DOC.read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \|.*\| (.*) \|$", section, re.MULTILINE)
    return dict(rows)


def test_every_description_is_quoted_from_the_format_doc() -> None:
    doc = " ".join(DOC.read_text(encoding="utf-8").split())
    found = _descriptions(SCHEMA)
    assert len(found) > 30
    for text in found:
        assert " ".join(text.split()) in doc, text


def test_key_descriptions_are_the_doc_tables_meanings() -> None:
    top = _table("## The keys")
    simulate = _table("## `simulate:`")
    assert set(top) == set(TOP_KEYS) and set(simulate) == set(SIMULATE_KEYS)
    for key in TOP_KEYS:
        assert SCHEMA["properties"][key]["description"] == top[key]
    for key in SIMULATE_KEYS:
        assert SCHEMA["properties"]["simulate"]["properties"][key]["description"] == simulate[key]


# --- one corpus: files the loader accepts validate ----------------------------------------------

BASE = "coordinates: [x]\nkinetic: 1/2*x_dot**2\n"

GOOD = {
    "empty-parameters-and-initial": "parameters:\n" + BASE + "initial:\n",
    "lagrangian-alone": "coordinates: [x]\nlagrangian: 1/2*x_dot**2 - 1/2*x**2\n",
    "number-as-name-and-expression": "name: 3\n" + BASE + "potential: 0\n",
    "empty-masses-beside-kinetic": BASE + "masses: {}\n",
    "three-dimensional-body": textwrap.dedent("""\
        parameters: {m: 1, g: 9.81}
        coordinates: [x, z]
        masses:
          bar: {mass: m, position: [x, 0, z], inertia: 1, angle: x}
        gravity: [0, 0, -g]
        loads:
          bar: [0, 0, 1]
        forces: {x: -x_dot}
        dissipation: 1/2*z_dot**2
        """),
    "every-kind-of-constraint": textwrap.dedent("""\
        coordinates: [x, y, z]
        kinetic: 1/2*(x_dot**2 + y_dot**2 + z_dot**2)
        constraints:
          - x - y
          - name: roll
            velocity: x_dot - z_dot
          - holonomic: z - sin(t)
        """),
    "simulate-as-the-loader-reads-it": BASE + textwrap.dedent("""\
        simulate:
          t_start: -1
          t_end: 1e3
          samples: 11.0
          method: dop853
          rtol: 1.0e-8
          atol: 1e-9
          formulation: Index1
          stabilize: NONE
          baumgarte: 5,2.5
          stop_when: x
          strict_initial: true
        """),
    "simulate-dt-and-a-list-of-gains": BASE + "simulate:\n  dt: .5\n  baumgarte: [10, 0]\n",
    "rigid-bodies-in-every-form": textwrap.dedent("""\
        parameters: {I1: 1, I3: 1.5}
        coordinates: [a, b, c]
        masses:
          top:
            mass: 1
            position: [0, 0, b]
            orientation: {euler: zxz, angles: [a, b, c]}
            inertia: [I1, I1, I3]
          turned:
            mass: 1
            position: [0, 0, 0]
            orientation: {euler: XYZ, angles: [a, 0, c], extrinsic: true}
            inertia: [1, 1, 1, 0.1, 0, 0]
          written:
            mass: 1
            position: [a, 0, 0]
            orientation: {matrix: [[cos(a), -sin(a), 0], [sin(a), cos(a), 0], [0, 0, 1]]}
            inertia: [[1, 0, 0], [0, 1, 0], [0, 0, 1.5]]
        gravity: [0, 0, -9.81]
        """),
    "points-torques-springs-and-no-slip": textwrap.dedent("""\
        parameters: {m: 1, R: 0.1, k: 10}
        coordinates: [x, y, yaw, lean, spin, u, th]
        masses:
          disk:
            mass: m
            position: [x, y, R*cos(lean)]
            orientation: {euler: ZXY, angles: [yaw, lean, spin]}
            inertia: [m*R**2/4, m*R**2/2, m*R**2/4]
            points:
              rim: [0, 0, -R]
              contact: {space: [-R*sin(lean)*sin(yaw), R*sin(lean)*cos(yaw), -R*cos(lean)]}
          plate: {mass: 1, position: [u, 1, 0], inertia: 1, angle: th}
        loads:
          disk.rim: [0, 0, -1]
        torques:
          disk: {body_axes: [0, 0.1, 0]}
          plate: -0.1*th_dot
        springs:
          - {ends: [disk.rim, [0, 0, 1]], stiffness: k, length: R, damping: 0.1}
          - [plate, origin]
        constraints:
          - {name: contact, no_slip: disk.contact, directions: [x, y]}
        """),
    "a-body-in-a-quaternion": textwrap.dedent("""\
        coordinates: [e0, e1, e2, e3]
        masses:
          body:
            mass: 1
            position: [0, 0, 0]
            orientation: {quaternion: [e0, e1, e2, e3]}
            inertia: [1, 2, 3]
        initial: {e0: 1}
        """),
}


def good_corpus() -> list[Any]:
    cases = [pytest.param(bundled_text(n), id=f"bundled-{n}") for n in bundled_systems()]
    cases += [pytest.param(t, id=f"doc-{yaml.safe_load(t)['name']}") for t in doc_blocks()]
    cases += [pytest.param(t, id=k) for k, t in GOOD.items()]
    return cases


def test_the_corpus_holds_every_bundled_system_and_the_doc_examples() -> None:
    assert len(bundled_systems()) >= 18
    assert len(doc_blocks()) == 4


@pytest.mark.parametrize("text", good_corpus())
def test_accepted_files_validate(text: str) -> None:
    assert loader_error(text) is None
    assert schema_errors(text) == []


def test_the_editor_line_is_a_comment_to_the_loader() -> None:
    text = "# yaml-language-server: $schema=lagsim-system.schema.json\n" + bundled_text("skate")
    with_line, without = parse_spec(text, "skate.yaml"), parse_spec(bundled_text("skate"))
    assert (with_line.name, with_line.coordinates) == ("skate", ("x", "y", "psi"))
    assert with_line.parameter_values == without.parameter_values
    assert with_line.initial == without.initial
    assert with_line.constraints[0].location.line == without.constraints[0].location.line + 1
    assert schema_errors(text) == []


# --- one corpus: files wrong in structure fail both ----------------------------------------------

STRUCTURAL = (
    "file-is-a-list", "file-is-a-scalar", "unknown-top-key", "unknown-top-key-no-hint",
    "coordinates-not-a-list", "coordinates-empty", "coordinate-not-a-name",
    "coordinate-listed-twice", "parameters-not-a-mapping", "parameter-is-a-bool",
    "parameter-yes-is-text", "parameter-is-a-list", "position-with-4-components",
    "position-not-a-list", "mass-without-position", "inertia-without-angle", "missing-coordinates",
    "no-energy", "lagrangian-with-kinetic", "lagrangian-with-masses", "expression-empty-string",
    "constraint-with-both-kinds", "constraint-with-no-kind", "constraint-unknown-key",
    "constraints-not-a-list", "unknown-simulate-key", "unknown-mass-key", "gravity-without-masses",
)
"""The cases of tests/test_spec.py's ERRORS that are wrong in structure."""

BEYOND_THE_SCHEMA = (
    # not YAML that becomes JSON: malformed, tagged, or a key given twice (the YAML reader keeps
    # the last; editors' YAML servers flag duplicates themselves)
    "bad-indentation", "bad-indentation-in-mapping", "unclosed-bracket", "unclosed-bracket-at-end",
    "tag-on-scalar", "tag-on-mapping", "tag-on-list", "tag-on-file", "local-tag",
    "duplicated-top-key", "duplicated-parameter", "duplicated-mass",
    # names: what a name may be and which names clash
    "coordinate-is-time", "coordinate-is-pi", "parameter-python-keyword", "parameter-ends-in-dot",
    "function-used-as-a-name", "parameter-shadows-function", "coordinate-shadows-function",
    "parameter-is-a-coordinate", "coordinate-is-a-velocity", "constraint-name-twice",
    "constraint-name-equals-a-default",
    # values and expressions
    "parameter-infinite", "expression-does-not-parse", "quoted-expression-unclosed-parenthesis",
    "unknown-symbol-did-you-mean", "unknown-velocity-did-you-mean", "double-quoted-column",
    "leading-blanks-column", "attribute-access", "dunder-attribute", "lambda", "lambda-called",
    "subscript", "comparison", "string-literal", "keyword-argument", "arity-atan2", "arity-sin",
    "unknown-function", "velocity-constraint-not-linear",
    "velocity-constraint-product-of-velocities", "velocity-constraint-without-velocity",
    "holonomic-constraint-uses-velocity", "named-holonomic-constraint-uses-velocity",
    "potential-uses-velocity",
    # one part against another: dimensions, and names that must be declared elsewhere
    "masses-of-mixed-dimension", "gravity-of-wrong-dimension", "load-of-wrong-dimension",
    "loads-on-unknown-mass", "force-on-unknown-coordinate", "initial-of-unknown-coordinate",
)
"""The other cases: what only the loader can see (it needs the file's names or the parser)."""

SPEC_ERRORS = {case[0]: textwrap.dedent(case[1]).lstrip("\n") for case in ERRORS}


def test_every_bad_input_of_test_spec_is_classified() -> None:
    assert set(STRUCTURAL).isdisjoint(BEYOND_THE_SCHEMA)
    assert set(SPEC_ERRORS) == set(STRUCTURAL) | set(BEYOND_THE_SCHEMA)


BOB = "masses:\n  bob: {mass: 1, position: [x, 0]}\n"
TOP = "coordinates: [x]\nmasses:\n  top: {mass: 1, position: [x, 0, 0], "

SHAPE_BAD = {
    "name-a-list": "name: [a]\n" + BASE,
    "description-a-mapping": "description: {a: 1}\n" + BASE,
    "potential-a-list": BASE + "potential: [x]",
    "lagrangian-a-mapping": "coordinates: [x]\nlagrangian: {L: x_dot**2}",
    "dissipation-a-list": BASE + "dissipation: [x_dot**2]",
    "masses-a-list": BASE + "masses: [bob]",
    "empty-masses-are-no-energy": "coordinates: [x]\nmasses: {}",
    "mass-a-list": "coordinates: [x]\nmasses:\n  bob: [1, [x, 0]]",
    "mass-of-a-list": "coordinates: [x]\nmasses:\n  bob: {mass: [1], position: [x, 0]}",
    "mass-with-an-unknown-key": "coordinates: [x]\nmasses:\n"
                                "  bob: {mass: 1, position: [x, 0], colour: red}",
    "position-of-one-component": "coordinates: [x]\nmasses:\n  bob: {mass: 1, position: [x]}",
    "inertia-a-list": "coordinates: [x]\nmasses:\n"
                      "  bar: {mass: 1, position: [x, 0], inertia: [1], angle: x}",
    "angle-a-mapping": "coordinates: [x]\nmasses:\n"
                       "  bar: {mass: 1, position: [x, 0], inertia: 1, angle: {a: x}}",
    "angle-without-inertia": "coordinates: [x]\nmasses:\n  bar: {mass: 1, position: [x, 0], "
                             "angle: x}",
    "unknown-euler-sequence": TOP
        + "orientation: {euler: ZZX, angles: [x, 0, 0]}, inertia: [1, 1, 1]}",
    "two-euler-angles": TOP
        + "orientation: {euler: ZXZ, angles: [x, 0]}, inertia: [1, 1, 1]}",
    "orientation-with-angle": TOP
        + "orientation: {euler: ZXZ, angles: [x, 0, 0]}, inertia: [1, 1, 1], "
          "angle: x}",
    "orientation-without-inertia": TOP
        + "orientation: {euler: ZXZ, angles: [x, 0, 0]}}",
    "scalar-inertia-with-orientation": TOP
        + "orientation: {euler: ZXZ, angles: [x, 0, 0]}, inertia: 1}",
    "four-inertia-components": TOP
        + "orientation: {euler: ZXZ, angles: [x, 0, 0]}, "
          "inertia: [1, 1, 1, 0]}",
    "extrinsic-a-word": TOP
        + "orientation: {euler: ZXZ, angles: [x, 0, 0], extrinsic: maybe}, "
          "inertia: [1, 1, 1]}",
    "quaternion-of-three": TOP
        + "orientation: {quaternion: [x, 0, 0]}, inertia: [1, 1, 1]}",
    "quaternion-with-angles": TOP
        + "orientation: {quaternion: [x, 0, 0, 1], angles: [x, 0, 0]}, inertia: [1, 1, 1]}",
    "matrix-of-two-rows": TOP
        + "orientation: {matrix: [[1, 0, 0], [0, 1, 0]]}, inertia: [1, 1, 1]}",
    "body-in-a-plane": "coordinates: [x]\nmasses:\n  top: {mass: 1, position: [x, 0], "
                       "orientation: {euler: ZXZ, angles: [x, 0, 0]}, inertia: [1, 1, 1]}",
    "gravity-a-mapping": "coordinates: [x]\n" + BOB + "gravity: {y: -9.81}",
    "gravity-of-one-component": "coordinates: [x]\n" + BOB + "gravity: [-9.81]",
    "gravity-of-four-components": "coordinates: [x]\n" + BOB + "gravity: [0, 0, 0, -9.81]",
    "gravity-on-empty-masses": BASE + "masses: {}\ngravity: [0, -9.81]",
    "forces-a-list": BASE + "forces: [1]",
    "force-a-list": BASE + "forces: {x: [1]}",
    "loads-a-list": "coordinates: [x]\n" + BOB + "loads: [1, 0]",
    "load-a-mapping": "coordinates: [x]\n" + BOB + "loads: {bob: {x: 1}}",
    "load-of-one-component": "coordinates: [x]\n" + BOB + "loads: {bob: [1]}",
    "load-of-four-components": "coordinates: [x]\n" + BOB + "loads: {bob: [1, 0, 0, 0]}",
    "constraint-a-list": BASE + "constraints:\n  - [x, 1]",
    "constraint-name-a-list": BASE + "constraints:\n  - {name: [a], holonomic: x}",
    "holonomic-a-list": BASE + "constraints:\n  - {holonomic: [x]}",
    "velocity-a-mapping": BASE + "constraints:\n  - {velocity: {v: x_dot}}",
    "initial-a-list": BASE + "initial: [1]",
    "initial-value-a-list": BASE + "initial: {x: [1]}",
}
"""More files wrong in structure, so that each part of the schema meets a file it must refuse."""

SIMULATE_BAD = {
    "simulate-not-a-mapping": "simulate: [t_end]",
    "t-end-a-list": "simulate: {t_end: [1, 2]}",
    "t-end-a-mapping": "simulate: {t_end: {value: 3}}",
    "t-start-text": "simulate: {t_start: soon}",
    "samples-text": "simulate: {samples: many}",
    "samples-one": "simulate: {samples: 1}",
    "samples-fractional": "simulate: {samples: 10.5}",
    "samples-and-dt": "simulate: {samples: 11, dt: 0.1}",
    "simulate-empty": "simulate:",
    "dt-zero": "simulate: {dt: 0}",
    "dt-a-word": "simulate: {dt: fast}",
    "dt-negative-text": "simulate: {dt: '-1'}",
    "rtol-zero": "simulate: {rtol: 0}",
    "rtol-a-word": "simulate: {rtol: small}",
    "atol-negative": "simulate: {atol: -1.0}",
    "atol-a-word": "simulate: {atol: small}",
    "rtol-negative-text": "simulate: {rtol: -1e-8}",
    "atol-zero-text": "simulate: {atol: 0e-3}",
    "method-unknown": "simulate: {method: RK99}",
    "method-a-number": "simulate: {method: 45}",
    "formulation-unknown": "simulate: {formulation: magic}",
    "formulation-a-number": "simulate: {formulation: 3}",
    "stabilize-unknown": "simulate: {stabilize: always}",
    "stabilize-a-number": "simulate: {stabilize: 0}",
    "baumgarte-three-gains": "simulate: {baumgarte: [1, 2, 3]}",
    "baumgarte-one-gain": "simulate: {baumgarte: [1]}",
    "baumgarte-a-word-in-the-list": "simulate: {baumgarte: [fast, 1]}",
    "baumgarte-negative-text-in-the-list": "simulate: {baumgarte: ['-1', 2]}",
    "baumgarte-negative": "simulate: {baumgarte: [-1, 2]}",
    "baumgarte-negative-text": "simulate: {baumgarte: '5,-1'}",
    "baumgarte-word": "simulate: {baumgarte: fast}",
    "stop-when-blank": "simulate: {stop_when: ' '}",
    "stop-when-a-switch": "simulate: {stop_when: true}",
    "strict-initial-a-word": "simulate: {strict_initial: sometimes}",
    "strict-initial-a-number": "simulate: {strict_initial: 1}",
}
"""Bad ``simulate:`` values (the loader's checks of them live in SimulateOptions.resolve)."""


def bad_corpus() -> list[Any]:
    cases = [pytest.param(SPEC_ERRORS[k], id=k) for k in STRUCTURAL]
    cases += [pytest.param(v + "\n", id=k) for k, v in SHAPE_BAD.items()]
    cases += [pytest.param(BASE + v + "\n", id=k) for k, v in SIMULATE_BAD.items()]
    return cases


@pytest.mark.parametrize("text", bad_corpus())
def test_structural_mistakes_fail_both(text: str) -> None:
    assert loader_error(text) is not None
    assert schema_errors(text) != []


@pytest.mark.parametrize("text", good_corpus() + bad_corpus())
def test_a_draft_07_validator_gives_the_same_verdict(text: str) -> None:
    """yaml-language-server implements draft-07; the schema uses no keyword whose meaning
    changed since (docs/format.md, "Editor support")."""
    data = yaml.safe_load(text)
    draft7 = jsonschema.Draft7Validator(SCHEMA)
    assert draft7.is_valid(data) == VALIDATOR.is_valid(data)


def test_the_keywords_are_those_of_draft_07_too() -> None:
    keywords: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                keywords.add(key)
                for sub in value.values() if key == "properties" else [value]:
                    walk(sub)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(SCHEMA)
    draft7 = set(jsonschema.Draft7Validator.META_SCHEMA["properties"])
    assert keywords <= draft7 | {"$schema"}
    assert keywords.isdisjoint({"$defs", "dependentRequired", "dependentSchemas", "prefixItems",
                                "unevaluatedProperties", "$dynamicRef"})


@pytest.mark.parametrize("case", BEYOND_THE_SCHEMA)
def test_what_only_the_loader_sees_passes_the_schema(case: str) -> None:
    """The line between the two is where the doc draws it: the schema does not second-guess
    names and expressions (it would need the file's own names)."""
    text = SPEC_ERRORS[case]
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    assert loader_error(text) is not None
    assert list(VALIDATOR.iter_errors(data)) == []


def test_the_schema_names_the_wrong_key() -> None:
    """An editor marks the key: the error's path leads to it."""
    errors = list(VALIDATOR.iter_errors(yaml.safe_load(SPEC_ERRORS["unknown-mass-key"])))
    assert [list(e.absolute_path) for e in errors] == [["masses", "bob"]] * 2
    assert sorted(e.validator for e in errors) == ["additionalProperties", "required"]
    assert any("'positon'" in e.message for e in errors)
    (error,) = VALIDATOR.iter_errors(yaml.safe_load(BASE + "simulate: {method: RK99}"))
    assert list(error.absolute_path) == ["simulate", "method"]
