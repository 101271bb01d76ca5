"""Validation of the YAML system format, version 1 (issue 2; docs/format.md).

Every input error of issue 2 is checked here for its exact text, ``FILE:LINE:COL: message``, and
its location (the 1-based line and column of the offending value in the file), so a message that
drifts, or a mark that points at the wrong place, fails a test. The positive cases check the
values the validated spec holds: plain symbols for names SymPy treats specially, ``^`` as power,
parameter expressions, initial values, the default constraint names (``lambda_c`` is the
multiplier of constraint ``c``, seed 001_80d65b968ce3cb18.txt §10.7) and the linear form of a
velocity constraint a(q, t)·q̇ + b(q, t) = 0 (seed 003_88d23709419132a0.txt).
"""

from __future__ import annotations

import math
import random
import textwrap
from pathlib import Path

import pytest
import sympy

from lagsim.errors import InputError, Location
from lagsim.spec.system import TOP_KEYS, load_spec, parse_spec

LABEL = "sys.yaml"
FUNCS = "sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, exp, log, sqrt, Abs, sign"
DECLARE = ("declare it under 'parameters' or 'coordinates' (velocities are written "
           "<coordinate>_dot, time is t)")
PLAIN = f"only numbers, declared names, + - * / ** ^ and the functions {FUNCS}"


def yml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def input_error(text: str, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        parse_spec(yml(text), LABEL, **kwargs)
    return info.value


def check(err: InputError, line: int | None, col: int | None, message: str) -> None:
    """The message, the location and their join ``FILE:LINE:COL: message``."""
    assert err.message == message
    assert err.location == Location(LABEL, line, col)
    where = LABEL if line is None else f"{LABEL}:{line}:{col}"
    assert str(err) == f"{where}: {message}"
    assert err.exit_code == 2


# (id, YAML, line, column, message) of every input error the validator reports today.
ERRORS = [
    ("bad-indentation", """
        coordinates: [x]
         kinetic: x_dot**2
        """, 2, 2,
     "malformed YAML: expected <block end>, but found '<block mapping start>'; check "
     "indentation, colons and quotes"),
    ("bad-indentation-in-mapping", """
        parameters:
          m: 1
           g: 2
        coordinates: [x]
        """, 3, 5,
     "malformed YAML: mapping values are not allowed here; check indentation, colons and quotes"),
    ("unclosed-bracket", """
        coordinates: [x, y
        kinetic: x_dot**2
        """, 2, 8,
     "malformed YAML: expected ',' or ']', but got ':'; check indentation, colons and quotes"),
    ("unclosed-bracket-at-end", """
        kinetic: x_dot**2
        coordinates: [x, y
        """, 3, 1,
     "malformed YAML: expected ',' or ']', but got '<stream end>'; check indentation, colons "
     "and quotes"),
    ("tag-on-scalar", """
        coordinates: [x]
        kinetic: !!python/name:os.system ''
        """, 2, 10,
     "'kinetic': could not determine a constructor for the tag "
     "'tag:yaml.org,2002:python/name:os.system'; lagsim reads plain YAML only (no tags)"),
    ("tag-on-mapping", """
        coordinates: [x]
        kinetic: x_dot**2
        parameters: !!python/object:collections.OrderedDict {}
        """, 3, 13,
     "'parameters': tag tag:yaml.org,2002:python/object:collections.OrderedDict is not "
     "allowed; lagsim reads plain YAML"),
    ("tag-on-list", """
        coordinates: !!python/tuple [x]
        kinetic: x_dot**2
        """, 1, 14,
     "'coordinates': tag tag:yaml.org,2002:python/tuple is not allowed; lagsim reads plain YAML"),
    ("tag-on-file", """
        !!python/object:argparse.Namespace
        coordinates: [x]
        kinetic: x_dot**2
        """, 1, 1,
     "the system file: tag tag:yaml.org,2002:python/object:argparse.Namespace is not allowed; "
     "lagsim reads plain YAML"),
    ("local-tag", """
        coordinates: [x]
        kinetic: !energy x_dot**2
        """, 2, 10,
     "'kinetic': could not determine a constructor for the tag '!energy'; lagsim reads plain "
     "YAML only (no tags)"),
    ("file-is-a-list", """
        - x
        - y
        """, 1, 1,
     "a system file must be a mapping of keys (coordinates:, kinetic:, ...), not a list"),
    ("file-is-a-scalar", """
        pendulum
        """, 1, 1,
     "a system file must be a mapping of keys (coordinates:, kinetic:, ...), not a text"),
    ("unknown-top-key", """
        coordinates: [x]
        kinetc: x_dot**2
        """, 2, 1,
     f"unknown key 'kinetc' (did you mean 'kinetic'?); the keys are {', '.join(TOP_KEYS)}"),
    ("unknown-top-key-no-hint", """
        coordinates: [x]
        kinetic: x_dot**2
        zzz: 1
        """, 3, 1,
     f"unknown key 'zzz'; the keys are {', '.join(TOP_KEYS)}"),
    ("coordinates-not-a-list", """
        coordinates: x
        kinetic: x_dot**2
        """, 1, 14, "'coordinates' must be a list, not a text"),
    ("coordinates-empty", """
        coordinates: []
        kinetic: x_dot**2
        """, 1, 14, "'coordinates' is empty; list at least one coordinate"),
    ("coordinate-not-a-name", """
        coordinates: [1]
        kinetic: x_dot**2
        """, 1, 15,
     "coordinate 1 is not a valid name; use letters, digits and _ starting with a letter "
     "(e.g. theta1)"),
    ("coordinate-is-time", """
        coordinates: [t]
        kinetic: t_dot**2
        """, 1, 15, "coordinate 't' is reserved (time); rename it"),
    ("coordinate-is-pi", """
        coordinates: [pi]
        kinetic: pi_dot**2
        """, 1, 15, "coordinate 'pi' is reserved (the constant pi); rename it"),
    ("parameters-not-a-mapping", """
        parameters: [m, g]
        coordinates: [x]
        kinetic: x_dot**2
        """, 1, 13, "'parameters' must be a mapping of name: value, not a list"),
    ("parameter-is-a-bool", """
        parameters:
          m: true
        coordinates: [x]
        kinetic: x_dot**2
        """, 2, 6, "parameter 'm' must be a number or an expression string, not True"),
    ("parameter-yes-is-text", """
        parameters:
          m: yes
        coordinates: [x]
        kinetic: x_dot**2
        """, 2, 6, "parameter 'm' 'yes': unknown symbol 'yes'; a parameter is a number or an "
     "expression in numbers, pi, E and the parameters above it"),
    ("parameter-is-a-list", """
        parameters:
          m: [1, 2]
        coordinates: [x]
        kinetic: x_dot**2
        """, 2, 6, "parameter 'm' must be a single value, not a list"),
    ("parameter-infinite", """
        parameters:
          m: .inf
        coordinates: [x]
        kinetic: x_dot**2
        """, 2, 6, "parameter 'm' is .inf, not a finite number; numbers must be finite and real, "
     "at most 1.798e+308 in size (docs/format.md)"),
    ("parameter-python-keyword", """
        parameters:
          lambda: 1
        coordinates: [x]
        kinetic: x_dot**2
        """, 2, 3,
     "parameter 'lambda' is a Python keyword, which expressions cannot use as a name; rename it "
     "(e.g. 'lam')"),
    ("parameter-ends-in-dot", """
        parameters:
          x_dot: 2
        coordinates: [x]
        kinetic: x_dot**2
        """, 2, 3, "parameter 'x_dot' has the form <coordinate>_dot of the CSV column of a "
     "velocity, so the output would be misread; rename it (e.g. 'xdot')"),
    ("position-with-4-components", """
        coordinates: [x]
        masses:
          bob:
            mass: 1
            position: [x, 0, 0, 0]
        """, 5, 15, "the position of 'bob' has 4 components; give 2 (planar) or 3"),
    ("position-not-a-list", """
        coordinates: [x]
        masses:
          bob:
            mass: 1
            position: x
        """, 5, 15, "the position of 'bob' must be a list, not a text"),
    ("mass-without-position", """
        coordinates: [x]
        masses:
          bob:
            mass: 1
        """, 4, 5, "mass 'bob' needs 'position'"),
    ("inertia-without-angle", """
        coordinates: [x]
        masses:
          bar:
            mass: 1
            position: [x, 0]
            inertia: 1
        """, 4, 5,
     "mass 'bar': 'inertia' and 'angle' go together (a planar body's moment of inertia and its "
     "orientation)"),
    ("masses-of-mixed-dimension", """
        coordinates: [x]
        masses:
          a:
            mass: 1
            position: [x, 0]
          b:
            mass: 1
            position: [x, 0, 0]
        """, 3, 3,
     "all masses must have positions of the same dimension (2 or 3 components)"),
    ("missing-coordinates", """
        parameters:
          m: 1
        kinetic: 1/2*m*x_dot**2
        """, 1, 1,
     "missing 'coordinates': list the generalized coordinates, e.g. coordinates: [theta]"),
    ("no-energy", """
        coordinates: [x]
        potential: x**2
        """, 1, 1,
     "no energy given: add 'kinetic' (with 'potential'), 'masses', or 'lagrangian'"),
    ("lagrangian-with-kinetic", """
        coordinates: [x]
        lagrangian: x_dot**2
        kinetic: x_dot**2
        """, 3, 1,
     "'kinetic' cannot be combined with 'lagrangian'; give either L directly or T and U"),
    ("lagrangian-with-masses", """
        coordinates: [x]
        lagrangian: x_dot**2
        masses:
          bob:
            mass: 1
            position: [x, 0]
        """, 3, 1,
     "'masses' cannot be combined with 'lagrangian'; give either L directly or T and U"),
    ("expression-does-not-parse", """
        coordinates: [x]
        kinetic: x_dot**2 + * 3
        """, 2, 21,
     "'kinetic' 'x_dot**2 + * 3' does not parse (invalid syntax); use SymPy syntax such as "
     "'1/2*m*x_dot**2'"),
    ("quoted-expression-unclosed-parenthesis", """
        coordinates: [x]
        kinetic: '1/2*(x_dot**2'
        """, 2, 15,
     "'kinetic' '1/2*(x_dot**2' does not parse ('(' was never closed); use SymPy syntax such "
     "as '1/2*m*x_dot**2'"),
    ("expression-empty-string", """
        coordinates: [x]
        kinetic: ''
        """, 2, 10, "'kinetic' is empty: write an expression such as 'm*g*y'"),
    ("unknown-symbol-did-you-mean", """
        parameters:
          mass: 1
        coordinates: [x]
        kinetic: 1/2*mas*x_dot**2
        """, 4, 14,
     f"'kinetic' '1/2*mas*x_dot**2': unknown symbol 'mas' (did you mean 'mass'?); {DECLARE}"),
    ("unknown-velocity-did-you-mean", """
        coordinates: [theta]
        kinetic: 1/2*theta_dto**2
        """, 2, 14,
     f"'kinetic' '1/2*theta_dto**2': unknown symbol 'theta_dto' (did you mean 'theta_dot'?); "
     f"{DECLARE}"),
    ("double-quoted-column", """
        coordinates: [x]
        kinetic: "1/2*x_dot**2 + foo"
        """, 2, 26, f"'kinetic' '1/2*x_dot**2 + foo': unknown symbol 'foo'; {DECLARE}"),
    ("leading-blanks-column", """
        coordinates: [x]
        kinetic: '  foo + 1'
        """, 2, 13, f"'kinetic' 'foo + 1': unknown symbol 'foo'; {DECLARE}"),
    ("attribute-access", """
        coordinates: [x]
        kinetic: x.real
        """, 2, 10, f"'kinetic' 'x.real': Attribute is not allowed; {PLAIN}"),
    ("dunder-attribute", """
        coordinates: [x]
        kinetic: x.__class__
        """, 2, 10, f"'kinetic' 'x.__class__': Attribute is not allowed; {PLAIN}"),
    ("lambda", """
        coordinates: [x]
        kinetic: 'lambda: 1'
        """, 2, 11, f"'kinetic' 'lambda: 1': Lambda is not allowed; {PLAIN}"),
    ("lambda-called", """
        coordinates: [x]
        kinetic: '(lambda y: y)(x)'
        """, 2, 11,
     f"'kinetic' '(lambda y: y)(x)': 'lambda y: y' is not a known function; the functions are "
     f"{FUNCS}"),
    ("subscript", """
        coordinates: [x]
        kinetic: x[0]
        """, 2, 10, f"'kinetic' 'x[0]': Subscript is not allowed; {PLAIN}"),
    ("comparison", """
        coordinates: [x]
        kinetic: x < 1
        """, 2, 10, f"'kinetic' 'x < 1': Compare is not allowed; {PLAIN}"),
    ("string-literal", """
        coordinates: [x]
        kinetic: "'a'"
        """, 2, 11, "'kinetic' \"'a'\": 'a' is not a number"),
    ("keyword-argument", """
        coordinates: [x]
        kinetic: sin(x=1)
        """, 2, 10, "'kinetic' 'sin(x=1)': sin() takes no keyword arguments"),
    ("arity-atan2", """
        coordinates: [x]
        kinetic: atan2(x)
        """, 2, 10, "'kinetic' 'atan2(x)': atan2() takes 2 arguments, got 1"),
    ("arity-sin", """
        coordinates: [x]
        kinetic: sin(x, x)
        """, 2, 10, "'kinetic' 'sin(x, x)': sin() takes 1 argument, got 2"),
    ("unknown-function", """
        coordinates: [x]
        kinetic: sinn(x)
        """, 2, 10,
     f"'kinetic' 'sinn(x)': 'sinn' is not a known function (did you mean 'sin'?); the "
     f"functions are {FUNCS}"),
    ("function-used-as-a-name", """
        coordinates: [x]
        kinetic: sin*x
        """, 2, 10, "'kinetic' 'sin*x': 'sin' is a function: call it, as in 'sin(x)'"),
    ("parameter-shadows-function", """
        parameters:
          sin: 1
        coordinates: [x]
        kinetic: x_dot**2
        """, 2, 3, "parameter 'sin' shadows the function sin(); rename it (e.g. 'sin_')"),
    ("coordinate-shadows-function", """
        coordinates: [exp]
        kinetic: exp_dot**2
        """, 1, 15, "coordinate 'exp' shadows the function exp(); rename it (e.g. 'exp_')"),
    ("parameter-is-a-coordinate", """
        parameters:
          x: 1
        coordinates: [x]
        kinetic: x_dot**2
        """, 3, 15, "coordinate 'x' is also a parameter; rename one"),
    ("coordinate-listed-twice", """
        coordinates: [x, x]
        kinetic: x_dot**2
        """, 1, 18, "coordinate 'x' is listed twice; keep one"),
    ("coordinate-is-a-velocity", """
        coordinates: [x, x_dot]
        kinetic: x_dot**2
        """, 1, 18, "coordinate 'x_dot' has the form <coordinate>_dot of the CSV column of a "
     "velocity, so the output would be misread; rename it (e.g. 'xdot')"),
    ("duplicated-top-key", """
        coordinates: [x]
        kinetic: x_dot**2
        kinetic: 2*x_dot**2
        """, 3, 1, "'kinetic' appears twice in the system file (first on line 2); keep one"),
    ("duplicated-parameter", """
        parameters:
          m: 1
          m: 2
        coordinates: [x]
        kinetic: x_dot**2
        """, 3, 3, "'m' appears twice in 'parameters' (first on line 2); keep one"),
    ("duplicated-mass", """
        coordinates: [x]
        masses:
          bob: {mass: 1, position: [x, 0]}
          bob: {mass: 2, position: [x, 0]}
        """, 4, 3, "'bob' appears twice in 'masses' (first on line 3); keep one"),
    ("constraint-name-twice", """
        coordinates: [x, y]
        kinetic: x_dot**2 + y_dot**2
        constraints:
          - name: a
            holonomic: x
          - name: a
            holonomic: y
        """, 7, 16,
     "constraint name 'a' is used twice; names must be unique (they name the multipliers "
     "lambda_<name>)"),
    ("constraint-name-equals-a-default", """
        coordinates: [x, y]
        kinetic: x_dot**2 + y_dot**2
        constraints:
          - x
          - name: c1
            holonomic: y
        """, 6, 16,
     "constraint name 'c1' is used twice; names must be unique (they name the multipliers "
     "lambda_<name>)"),
    ("constraint-with-both-kinds", """
        coordinates: [x]
        kinetic: x_dot**2
        constraints:
          - name: a
            holonomic: x
            velocity: x_dot
        """, 4, 5,
     "constraint 'a' needs exactly one of 'holonomic:' (phi(q, t) = 0) or 'velocity:' "
     "(a(q, t).q_dot + b(q, t) = 0)"),
    ("constraint-with-no-kind", """
        coordinates: [x]
        kinetic: x_dot**2
        constraints:
          - name: a
        """, 4, 5,
     "constraint 'a' needs exactly one of 'holonomic:' (phi(q, t) = 0) or 'velocity:' "
     "(a(q, t).q_dot + b(q, t) = 0)"),
    ("constraint-unknown-key", """
        coordinates: [x]
        kinetic: x_dot**2
        constraints:
          - nme: a
            holonomic: x
        """, 4, 5,
     "unknown key 'nme' in constraint 1 (did you mean 'name'?); use name:, and one of "
     "holonomic: or velocity: (or no_slip:, with directions:, or unilateral: with "
     "restitution:)"),
    ("constraints-not-a-list", """
        coordinates: [x]
        kinetic: x_dot**2
        constraints: x - 1
        """, 3, 14, "'constraints' must be a list, not a text"),
    ("velocity-constraint-not-linear", """
        coordinates: [x, y]
        kinetic: x_dot**2 + y_dot**2
        constraints:
          - name: speed
            velocity: x_dot**2 + y_dot**2 - 1
        """, 5, 15,
     "velocity constraint 'speed' is not linear in the velocities; lagsim needs "
     "a(q, t).q_dot + b(q, t) = 0"),
    ("velocity-constraint-product-of-velocities", """
        coordinates: [x, y]
        kinetic: x_dot**2 + y_dot**2
        constraints:
          - velocity: x_dot*y_dot
        """, 4, 15,
     "velocity constraint 'c1' is not linear in the velocities; lagsim needs "
     "a(q, t).q_dot + b(q, t) = 0"),
    ("velocity-constraint-without-velocity", """
        coordinates: [x]
        kinetic: x_dot**2
        constraints:
          - velocity: x - 1
        """, 4, 15,
     "velocity constraint 'c1' uses no velocity; if it restricts positions, write it as a "
     "holonomic constraint"),
    ("holonomic-constraint-uses-velocity", """
        coordinates: [x, y]
        kinetic: x_dot**2 + y_dot**2
        constraints:
          - x_dot - y
        """, 4, 5,
     "holonomic constraint 'c1' may not depend on velocities, but uses x_dot; write it under "
     "'velocity:' if it is a velocity constraint"),
    ("named-holonomic-constraint-uses-velocity", """
        coordinates: [x, y]
        kinetic: x_dot**2 + y_dot**2
        constraints:
          - name: rod
            holonomic: x*y_dot + x_dot
        """, 5, 16,
     "holonomic constraint 'rod' may not depend on velocities, but uses x_dot, y_dot; write it "
     "under 'velocity:' if it is a velocity constraint"),
    ("potential-uses-velocity", """
        coordinates: [x]
        kinetic: x_dot**2
        potential: x*x_dot
        """, 3, 12, "'potential' U(q, t) may not depend on velocities, but uses x_dot"),
    ("unknown-simulate-key", """
        coordinates: [x]
        kinetic: x_dot**2
        simulate:
          t_ned: 3
        """, 4, 3,
     "unknown key 't_ned' in 'simulate' (did you mean 't_end'?); the keys are t_start, t_end, "
     "samples, dt, method, rtol, atol, formulation, stabilize, baumgarte, stop_when, "
     "section, section_direction, strict_initial, invariants, action, "
     "controller, at, Q, R, saturate, sensitivities, sensitivity_errors"),
    ("unknown-mass-key", """
        coordinates: [x]
        masses:
          bob:
            mass: 1
            positon: [x, 0]
        """, 5, 5,
     "unknown key 'positon' in mass 'bob' (did you mean 'position'?); the keys are mass, "
     "position, inertia, angle, orientation, points"),
    ("gravity-without-masses", """
        coordinates: [x]
        kinetic: x_dot**2
        gravity: [0, -9.81]
        """, 3, 10,
     "'gravity' acts on 'masses', and none are declared; write the potential under "
     "'potential' instead"),
    ("gravity-of-wrong-dimension", """
        coordinates: [x]
        masses:
          bob:
            mass: 1
            position: [x, 0]
        gravity: [0, 0, -9.81]
        """, 6, 10, "'gravity' has 3 components but the mass positions have 2"),
    ("loads-on-unknown-mass", """
        coordinates: [x]
        masses:
          bob:
            mass: 1
            position: [x, 0]
        loads:
          bib: [1, 0]
        """, 7, 3,
     "'loads' names 'bib', which is not a mass (did you mean 'bob'?); declare it under "
     "'masses'"),
    ("load-of-wrong-dimension", """
        coordinates: [x]
        masses:
          bob:
            mass: 1
            position: [x, 0]
        loads:
          bob: [1, 0, 0]
        """, 7, 8, "the load on 'bob' has 3 components but its position has 2"),
    ("force-on-unknown-coordinate", """
        coordinates: [theta]
        kinetic: theta_dot**2
        forces:
          thetta: 1
        """, 4, 3,
     "'forces' names 'thetta', which is not a coordinate (did you mean 'theta'?); forces are "
     "given by coordinate"),
    ("initial-of-unknown-coordinate", """
        coordinates: [x]
        kinetic: x_dot**2
        initial:
          x_dto: 1
        """, 4, 3,
     "'initial' names 'x_dto', which is not a coordinate or velocity (did you mean 'x_dot'?)"),
]


@pytest.mark.parametrize(("text", "line", "col", "message"),
                         [pytest.param(*case[1:], id=case[0]) for case in ERRORS])
def test_input_error(text: str, line: int, col: int, message: str) -> None:
    check(input_error(text), line, col, message)


def test_empty_file_and_comments_only() -> None:
    message = ("the file is empty; a system needs at least 'coordinates' and an energy "
               "(see docs/format.md)")
    for text in ("", "\n\n", "# a comment, nothing else\n"):
        check(input_error(text), None, None, message)


@pytest.mark.parametrize(
    "text",
    [
        "coordinates: [x]\nkinetic: !!python/object/apply:os.system ['touch {marker}']\n",
        "coordinates: [x]\nkinetic: !!python/object/apply:os.system 'touch {marker}'\n",
        "!!python/object/apply:os.system ['touch {marker}']\n",
        "coordinates: [x]\nkinetic: x_dot**2\n"
        "name: !!python/object/new:os.system ['touch {marker}']\n",
        "coordinates: [x]\nkinetic: \"__import__('os').system('touch {marker}')\"\n",
        "coordinates: [x]\nkinetic: \"exp(__import__('os').system('touch {marker}'))\"\n",
    ],
    ids=["tag-apply-list", "tag-apply-scalar", "tag-file", "tag-new", "import", "import-nested"],
)
def test_nothing_runs(text: str, tmp_path: Path) -> None:
    """A python tag or an ``__import__`` is an input error, and no command runs."""
    marker = tmp_path / "hacked"
    with pytest.raises(InputError) as info:
        parse_spec(text.format(marker=marker), LABEL)
    assert info.value.location.file == LABEL and info.value.location.line is not None
    assert not marker.exists()


def test_import_is_an_error_that_names_the_call(tmp_path: Path) -> None:
    marker = tmp_path / "hacked"
    err = input_error(f"""
        coordinates: [x]
        kinetic: "__import__('os').system('touch {marker}')"
        """)
    text = f"__import__('os').system('touch {marker}')"
    check(err, 2, 11, f"'kinetic' {text!r}: '__import__('os').system' is not a known function; "
          f"the functions are {FUNCS}")
    assert not marker.exists()
    check(input_error("""
        coordinates: [x]
        kinetic: __import__('os')
        """), 2, 10, f"'kinetic' \"__import__('os')\": '__import__' is not a known function; "
          f"the functions are {FUNCS}")




def test_tagged_list_as_a_value_names_the_tag() -> None:
    check(input_error("""
        coordinates: [x]
        kinetic: !!python/object/apply:os.system ['echo hacked']
        """), 2, 10,
        "'kinetic': tag tag:yaml.org,2002:python/object/apply:os.system is not allowed; lagsim "
        "reads plain YAML")


def test_tagged_list_as_the_file_names_the_tag() -> None:
    check(input_error("""
        !!python/object/apply:os.system ['echo hacked']
        """), 1, 1,
        "the system file: tag tag:yaml.org,2002:python/object/apply:os.system is not allowed; "
        "lagsim reads plain YAML")


def test_tagged_scalar_as_the_file_names_the_tag() -> None:
    check(input_error("""
        !!python/name:os.system ''
        """), 1, 1,
        "the system file: could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/name:os.system'; lagsim reads plain YAML only (no tags)")


def test_null_expression_says_it_is_empty() -> None:
    check(input_error("""
        coordinates: [x]
        kinetic:
        """), 2, 9, "'kinetic' is empty: write an expression such as 'm*g*y'")


PARAM_HINT = ("a parameter is a number or an expression in numbers, pi, E and the parameters "
              "above it")


def test_parameter_that_is_text() -> None:
    check(input_error("""
        parameters:
          m: heavy
        coordinates: [x]
        kinetic: x_dot**2
        """), 2, 6, f"parameter 'm' 'heavy': unknown symbol 'heavy'; {PARAM_HINT}")


def test_parameter_using_a_later_parameter() -> None:
    check(input_error("""
        parameters:
          a: 2*b
          b: 1
        coordinates: [x]
        kinetic: x_dot**2
        """), 2, 8, f"parameter 'a' '2*b': unknown symbol 'b'; {PARAM_HINT}")


def test_initial_value_using_a_coordinate() -> None:
    check(input_error("""
        coordinates: [x]
        kinetic: x_dot**2
        initial:
          x_dot: x
        """), 4, 10, "the initial value of 'x_dot' 'x': unknown symbol 'x'; an initial value is "
          "a number or an expression in numbers, pi, E and the parameters")


def test_position_using_a_velocity() -> None:
    check(input_error("""
        coordinates: [x]
        masses:
          bob:
            mass: 1
            position: [x_dot, 0]
        """), 5, 16, "a component of the position of 'bob' may not depend on velocities, but "
          "uses x_dot")




def test_folded_block_expression_points_at_the_symbol() -> None:
    check(input_error("""
        coordinates: [x]
        kinetic: >
          1/2*x_dot**2
          + foo
        """), 4, 5, f"'kinetic' '1/2*x_dot**2 + foo': unknown symbol 'foo'; {DECLARE}")


def test_multiline_plain_expression_points_at_the_symbol() -> None:
    check(input_error("""
        coordinates: [x]
        kinetic: 1/2*x_dot**2
          + foo
        """), 3, 5, f"'kinetic' '1/2*x_dot**2 + foo': unknown symbol 'foo'; {DECLARE}")


def test_set_of_unknown_parameter() -> None:
    err = input_error("""
        parameters:
          m: 1
        coordinates: [x]
        kinetic: 1/2*m*x_dot**2
        """, overrides={"mm": 2.0})
    assert isinstance(err, InputError) and err.location == Location("--set")
    assert "no such parameter 'mm'" in str(err) or "--set mm: no such parameter" in str(err)
    assert str(err).endswith("(did you mean 'm'?); the parameters are m")


def test_init_of_unknown_coordinate() -> None:
    err = input_error("""
        coordinates: [x]
        kinetic: x_dot**2
        """, initial={"y": 1.0})
    assert err.location == Location("--init")
    assert str(err).endswith("; they are x, x_dot")
    assert "'y'" in str(err) or "--init y:" in str(err)




def test_set_of_unknown_parameter_message() -> None:
    err = input_error("""
        parameters:
          m: 1
        coordinates: [x]
        kinetic: 1/2*m*x_dot**2
        """, overrides={"mm": 2.0})
    assert str(err) == "--set: no such parameter 'mm' (did you mean 'm'?); the parameters are m"


def test_init_of_unknown_coordinate_message() -> None:
    err = input_error("""
        coordinates: [x]
        kinetic: x_dot**2
        """, initial={"y": 1.0})
    assert str(err) == "--init: no such coordinate or velocity 'y'; they are x, x_dot"


# --- files: load_spec ---------------------------------------------------------------------------

def test_load_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_spec(path)
    assert str(info.value) == (f"{path}: the file is empty; a system needs at least "
                               "'coordinates' and an energy (see docs/format.md)")


def test_load_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_spec(tmp_path)
    assert str(info.value) == f"{tmp_path}: is a folder; give a system file (.yaml)"


def test_load_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nosuch.yaml"
    with pytest.raises(InputError) as info:
        load_spec(path)
    assert str(info.value) == (f"{path}: no such file, and no bundled system of that name; "
                               "`lagsim systems` lists the bundled ones")


def test_load_misspelt_bundled_name() -> None:
    with pytest.raises(InputError) as info:
        load_spec("pendulm")
    assert str(info.value) == ("pendulm: no such file, and no bundled system of that name "
                               "(did you mean 'pendulum'?); `lagsim systems` lists the bundled "
                               "ones")


def test_load_file_error_carries_the_path(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("coordinates: [x]\nkinetc: x_dot**2\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_spec(path)
    assert info.value.location == Location(str(path), 2, 1)
    assert str(info.value).startswith(f"{path}:2:1: unknown key 'kinetc'")


def test_load_bundled_pendulum_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found from any folder; theta(0) = pi/6 as the file says (seed 001 Example 10.5)."""
    monkeypatch.chdir(tmp_path)
    spec = load_spec("pendulum")
    assert spec.name == "pendulum" and spec.source == "pendulum.yaml"
    assert spec.coordinates == ("theta",)
    assert spec.parameter_values == {"m": 1.0, "g": 9.81, "l": 1.0}
    q, qd = spec.initial_state()
    assert q == [pytest.approx(math.pi / 6, abs=1e-15)] and qd == [0.0]
    theta, theta_dot, m, g, l = sympy.symbols("theta theta_dot m g l")
    from lagsim.symbolic.model import build_model, to_sympy

    model = build_model(spec)
    assert sympy.simplify(to_sympy(model.kinetic) - m * l**2 * theta_dot**2 / 2) == 0
    assert sympy.simplify(to_sympy(model.potential) + m * g * l * sympy.cos(theta)) == 0


def test_existing_path_wins_over_bundled_name(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pendulum.yaml").write_text("coordinates: [z]\nkinetic: z_dot**2\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    spec = load_spec("pendulum.yaml")
    assert spec.coordinates == ("z",) and spec.name == "pendulum"
    assert load_spec("pendulum").coordinates == ("theta",)


def test_load_with_overrides(tmp_path: Path) -> None:
    path = tmp_path / "spring.yaml"
    path.write_text(yml("""
        parameters:
          k: 4
          w: sqrt(k)
        coordinates: [x]
        kinetic: 1/2*x_dot**2
        potential: 1/2*k*x**2
        initial:
          x: 1
        """), encoding="utf-8")
    spec = load_spec(path, overrides={"k": 9.0}, initial={"x_dot": 2.0})
    assert spec.parameter_values == {"k": 9.0, "w": 3.0}
    assert spec.initial_state() == ([1.0], [2.0])
    assert spec.name == "spring" and spec.source == str(path)


# --- positive cases ------------------------------------------------------------------------------

def test_inertia_named_I_is_a_real_symbol() -> None:
    """T = 1/2 I theta_dot^2 with I = 2 is 1.0 at theta_dot = 1, not the imaginary i/2."""
    spec = parse_spec(yml("""
        parameters:
          I: 2.0
        coordinates: [theta]
        kinetic: 1/2*I*theta_dot**2
        """), LABEL)
    T = spec.kinetic.value
    assert T.free_symbols == {sympy.Symbol("I"), sympy.Symbol("theta_dot")}
    assert not T.has(sympy.I)
    value = T.subs({sympy.Symbol("I"): 2.0, sympy.Symbol("theta_dot"): 1.0})
    assert value.is_real and float(value) == 1.0


@pytest.mark.parametrize("name", ["I", "E", "S", "N", "Q", "O", "beta", "gamma", "zeta", "lambda_"])
def test_special_sympy_names_are_plain_symbols(name: str) -> None:
    spec = parse_spec(yml(f"""
        parameters:
          {name}: 3.0
        coordinates: [q]
        kinetic: 1/2*q_dot**2
        potential: {name}*q**2 + {name}
        """), LABEL)
    s = sympy.Symbol(name)
    q = sympy.Symbol("q")
    assert spec.potential.value.free_symbols == {s, q}
    assert spec.potential.value.subs({s: 3.0, q: 2.0}) == pytest.approx(15.0, abs=1e-14)
    assert spec.parameter_values == {name: 3.0}


def test_special_names_as_coordinates() -> None:
    spec = parse_spec(yml("""
        coordinates: [S, N, Q, beta, gamma]
        kinetic: 1/2*(S_dot**2 + N_dot**2 + Q_dot**2 + beta_dot**2 + gamma_dot**2)
        potential: S*N*Q*beta*gamma
        """), LABEL)
    names = ["S", "N", "Q", "beta", "gamma"]
    assert spec.coordinates == tuple(names)
    assert spec.potential.value == sympy.Mul(*sympy.symbols(names))
    assert spec.kinetic.value.subs({f"{n}_dot": 1 for n in names}) == sympy.Rational(5, 2)


def test_E_is_euler_unless_declared() -> None:
    undeclared = parse_spec("coordinates: [x]\nkinetic: x_dot**2\npotential: E*x\n", LABEL)
    x = sympy.Symbol("x")
    assert undeclared.potential.value == sympy.E * x
    assert float(undeclared.potential.value.subs(x, 1)) == pytest.approx(math.e, rel=1e-15)
    declared = parse_spec("parameters:\n  E: 200.0\ncoordinates: [x]\nkinetic: x_dot**2\n"
                          "potential: E*x\n", LABEL)
    assert declared.potential.value == sympy.Symbol("E") * x
    assert declared.parameter_values == {"E": 200.0}


def test_caret_is_power() -> None:
    spec = parse_spec(yml("""
        parameters:
          k: 2^3
        coordinates: [x]
        kinetic: x_dot^2
        potential: k*(x^2)
        """), LABEL)
    x, xd, k = sympy.symbols("x x_dot k")
    assert spec.parameter_values == {"k": 8.0}
    assert spec.kinetic.value == xd**2
    assert spec.potential.value == k * x**2


def test_caret_binds_like_power() -> None:
    """T = 1/2 m x_dot^2 must be the kinetic energy, not m^2 x_dot^2 / 4."""
    spec = parse_spec(yml("""
        parameters:
          m: 3
        coordinates: [x]
        kinetic: 1/2*m*x_dot^2
        potential: -x^2 + 2^3^2
        """), LABEL)
    x, xd, m = sympy.symbols("x x_dot m")
    assert sympy.expand(spec.kinetic.value - m * xd**2 / 2) == 0
    assert sympy.expand(spec.potential.value - (-x**2 + 512)) == 0


def test_initial_values_are_expressions_in_parameters_and_constants() -> None:
    spec = parse_spec(yml("""
        parameters:
          l: 2.0
        coordinates: [theta, x]
        kinetic: 1/2*theta_dot**2 + 1/2*x_dot**2
        initial:
          theta: pi/6
          x: l*sin(pi/6)
          x_dot: sqrt(l)*E
        """), LABEL)
    q, qd = spec.initial_state()
    assert q[0] == pytest.approx(math.pi / 6, abs=1e-15)
    assert q[1] == pytest.approx(1.0, abs=1e-15)
    assert qd == [0.0, pytest.approx(math.sqrt(2) * math.e, rel=1e-15)]
    assert dict(spec.initial) == {"theta": q[0], "x": q[1], "x_dot": qd[1]}


def test_init_overrides_file_values() -> None:
    text = "coordinates: [x]\nkinetic: x_dot**2\ninitial:\n  x: 1\n  x_dot: 2\n"
    spec = parse_spec(text, LABEL, initial={"x": 0.25})
    assert spec.initial_state() == ([0.25], [2.0])


def test_parameters_use_earlier_parameters_and_follow_set() -> None:
    text = yml("""
        parameters:
          a: 2
          b: a**2 + 1
          c: sqrt(b - 1) + pi - pi
        coordinates: [x]
        kinetic: 1/2*a*x_dot**2
        """)
    assert parse_spec(text, LABEL).parameter_values == {"a": 2.0, "b": 5.0, "c": 2.0}
    over = parse_spec(text, LABEL, overrides={"a": 3.0}).parameter_values
    assert over == {"a": 3.0, "b": 10.0, "c": pytest.approx(3.0, abs=1e-15)}
    assert parse_spec(text, LABEL, overrides={"b": 17.0}).parameter_values["c"] == 4.0


def test_parameter_locations_point_at_values() -> None:
    spec = parse_spec("parameters:\n  m: 1.5\n  g: 9.81\ncoordinates: [x]\nkinetic: x_dot**2\n",
                      LABEL)
    assert [(p.name, p.value, p.location) for p in spec.parameters] == [
        ("m", 1.5, Location(LABEL, 2, 6)), ("g", 9.81, Location(LABEL, 3, 6))]
    assert spec.coordinate_locations == (Location(LABEL, 4, 15),)


def test_constraint_default_names_by_position() -> None:
    """Unnamed constraints are c<k> by position; a velocity constraint keeps its linear form."""
    spec = parse_spec(yml("""
        parameters:
          l: 1
        coordinates: [x, y, psi]
        kinetic: 1/2*(x_dot**2 + y_dot**2 + psi_dot**2)
        constraints:
          - x**2 + y**2 - l**2
          - name: skate
            velocity: x_dot*sin(psi) - y_dot*cos(psi)
          - holonomic: psi - t
          - velocity: x_dot - y*psi_dot + t
        """), LABEL)
    assert [(c.name, c.kind) for c in spec.constraints] == [
        ("c1", "holonomic"), ("skate", "velocity"), ("c3", "holonomic"), ("c4", "velocity")]
    x, y, psi, l = sympy.symbols("x y psi l")
    assert sympy.expand(spec.constraints[0].expression.value - (x**2 + y**2 - l**2)) == 0
    assert spec.constraints[0].location == Location(LABEL, 6, 5)
    assert spec.constraints[1].location == Location(LABEL, 8, 15)
    assert spec.constraints[2].expression.value == psi - sympy.Symbol("t")


def test_masses_gravity_loads_forces_dissipation() -> None:
    spec = parse_spec(yml("""
        parameters: {m: 2, g: 9.81, c: 0.5, F0: 1, w: 3, J: 0.1}
        coordinates: [theta]
        masses:
          bob:
            mass: m
            position: [sin(theta), -cos(theta)]
            inertia: J
            angle: theta
        gravity: [0, -g]
        forces:
          theta: -c*theta_dot
        loads:
          bob: [F0*cos(w*t), 0]
        dissipation: 1/2*c*theta_dot**2
        """), LABEL)
    (bob,) = spec.masses
    assert bob.name == "bob" and len(bob.position) == 2 and bob.location == Location(LABEL, 4, 3)
    assert str(bob.inertia.value) == "J" and str(bob.angle.value) == "theta"
    assert [str(g.value) for g in spec.gravity] == ["0", "-g"]
    assert [(k, str(v.value)) for k, v in spec.forces] == [("theta", "-c*theta_dot")]
    assert [(k, [str(c.value) for c in v]) for k, v in spec.loads] == [
        ("bob", ["F0*cos(t*w)", "0"])]
    assert str(spec.dissipation.value) == "c*theta_dot**2/2"
    assert spec.kinetic is None and spec.potential is None and spec.lagrangian is None


def test_lagrangian_alone_and_defaults() -> None:
    spec = parse_spec("coordinates: [x]\nlagrangian: 1/2*x_dot**2 - 1/2*x**2\n", LABEL, "osc")
    assert spec.name == "osc" and spec.description == ""
    assert spec.kinetic is None and spec.masses == () and spec.constraints == ()
    assert spec.simulate == {} and spec.initial_state() == ([0.0], [0.0])
    named = parse_spec("name: other\ndescription: a spring\ncoordinates: [x]\n"
                       "lagrangian: x_dot**2\n", LABEL, "osc")
    assert (named.name, named.description) == ("other", "a spring")


def test_simulate_settings_keep_values_and_locations() -> None:
    spec = parse_spec(yml("""
        coordinates: [x]
        kinetic: x_dot**2
        simulate:
          t_end: 20
          baumgarte: [5, 5]
          method: Radau
          stop_when: x
        """), LABEL)
    sim = {k: (s.value, s.location) for k, s in spec.simulate.items()}
    assert sim == {
        "t_end": (20, Location(LABEL, 4, 10)),
        "baumgarte": ([5, 5], Location(LABEL, 5, 14)),
        "method": ("Radau", Location(LABEL, 6, 11)),
        "stop_when": ("x", Location(LABEL, 7, 14)),
    }


def test_safe_loader_reads_plain_yaml_features() -> None:
    """Anchors, aliases, flow style and standard tags are plain YAML and are accepted."""
    spec = parse_spec(yml("""
        parameters:
          m: &mass !!float 2
          M: *mass
        coordinates: !!seq [x]
        kinetic: !!str 1/2*(m + M)*x_dot**2
        """), LABEL)
    assert spec.parameter_values == {"m": 2.0, "M": 2.0}
    m, M, xd = sympy.symbols("m M x_dot")
    assert sympy.expand(spec.kinetic.value - (m + M) * xd**2 / 2) == 0


@pytest.mark.parametrize("name", ["pendulum", "pendulum_natural", "skate", "double_pendulum",
                                  "double_pendulum_constrained", "sho_table", "spring_pendulum",
                                  "pendulum_constrained"])
def test_bundled_systems_validate(name: str) -> None:
    spec = load_spec(name)
    assert spec.name == name and spec.coordinates
    q, qd = spec.initial_state()
    assert len(q) == len(qd) == len(spec.coordinates)
    assert all(math.isfinite(v) for v in q + qd)


# --- docs/format.md stays true -------------------------------------------------------------------

DOC = Path(__file__).resolve().parent.parent / "docs" / "format.md"


def doc_systems() -> dict[str, str]:
    """The complete systems (blocks with a name and coordinates) among the doc's YAML blocks."""
    blocks = DOC.read_text(encoding="utf-8").split("```yaml\n")[1:]
    texts = [b.split("```", 1)[0] for b in blocks]
    return {parse_spec(t, "format.md").name: t for t in texts
            if t.startswith("name: ") and "\ncoordinates:" in t}


def test_doc_examples_validate() -> None:
    assert set(doc_systems()) == {"pendulum_natural", "driven_damped_pendulum", "skate", "coin"}


def test_doc_pendulum_in_natural_coordinates() -> None:
    """M = m·1, F = (0, −m g), A = (2x, 2y), b = −2(ẋ² + ẏ²) (seed 001 §10.7; seed 003)."""
    from lagsim.symbolic.model import build_model, to_sympy

    spec = parse_spec(doc_systems()["pendulum_natural"], "format.md")
    assert [c.name for c in spec.constraints] == ["rod"]
    assert spec.parameter_values["theta0"] == pytest.approx(math.pi / 6, abs=1e-15)
    q, qd = spec.initial_state()
    assert q == [pytest.approx(0.5, abs=1e-15), pytest.approx(-math.sqrt(3) / 2, abs=1e-15)]
    assert qd == [0.0, 0.0]
    model = build_model(spec)
    x, y, xd, yd, m, g = sympy.symbols("x y x_dot y_dot m g")
    assert to_sympy(model.mass_matrix) == sympy.Matrix([[m, 0], [0, m]])
    assert sympy.expand(to_sympy(model.forcing) - sympy.Matrix([0, -m * g])) == sympy.zeros(2, 1)
    assert sympy.expand(to_sympy(model.A) - sympy.Matrix([[2 * x, 2 * y]])) == sympy.zeros(1, 2)
    assert sympy.expand(to_sympy(model.b)[0] + 2 * xd**2 + 2 * yd**2) == 0


def test_doc_driven_damped_pendulum() -> None:
    """m l² θ̈ = −m g l sin θ + F0 l cos θ cos(wt) − c θ̇, checked at random states to 1e-12."""
    from lagsim.symbolic.model import build_model, to_sympy

    spec = parse_spec(doc_systems()["driven_damped_pendulum"], "format.md")
    model = build_model(spec)
    th, thd, t = sympy.symbols("theta theta_dot t")
    p = spec.parameter_values
    values = {sympy.Symbol(k): v for k, v in p.items()}
    M = to_sympy(model.mass_matrix).subs(values)
    F = to_sympy(model.forcing).subs(values)
    rng = random.Random(2)
    for _ in range(5):
        state = {th: rng.uniform(-3, 3), thd: rng.uniform(-3, 3), t: rng.uniform(0, 10)}
        expected = (-p["m"] * p["g"] * p["l"] * math.sin(state[th])
                    + p["F0"] * p["l"] * math.cos(state[th]) * math.cos(p["w"] * state[t])
                    - p["c"] * state[thd])
        assert float(M[0, 0].subs(state)) == pytest.approx(p["m"] * p["l"] ** 2, rel=1e-12)
        assert float(F[0].subs(state)) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_doc_skate_row() -> None:
    from lagsim.symbolic.model import build_model, to_sympy

    spec = parse_spec(doc_systems()["skate"], "format.md")
    (blade,) = spec.constraints
    assert (blade.name, blade.kind) == ("blade", "velocity")
    psi = sympy.Symbol("psi")
    row = to_sympy(build_model(spec).A)
    assert sympy.simplify(row - sympy.Matrix([[sympy.sin(psi), -sympy.cos(psi), 0]])) == \
        sympy.zeros(1, 3)
    assert spec.initial_state() == ([0.0, 0.0, 0.0], [1.0, 0.0, 0.5])


def test_doc_lists_every_key() -> None:
    from lagsim.spec.system import MASS_KEYS, SIMULATE_KEYS

    doc = DOC.read_text(encoding="utf-8")
    for key in (*TOP_KEYS, *MASS_KEYS, *SIMULATE_KEYS):
        assert f"| `{key}` |" in doc or f"`{key}`" in doc, key
    for key in SIMULATE_KEYS:
        assert f"| `{key}` |" in doc, key


# --- numbers that are not finite and real (issue 15, "No internal errors on ordinary use") -----

NON_FINITE = [
    ("1/0", "1/0 is not a finite number (a division by zero, or a logarithm of 0)"),
    ("0/0", "0/0 is nan, not a number"),
    ("log(0)", "log(0) is not a finite number (a division by zero, or a logarithm of 0)"),
    ("1e400", "the number 1e400 is inf, not a finite number"),
    ("1e308*10", "1e308*10 is inf, not a finite number"),
    ("sqrt(-1)", "sqrt(-1) is 0 + 1i, not a real number"),
    ("asin(2)", "asin(2) is 1.5708 + 1.31696i, not a real number"),
]


def cli_file(tmp_path: Path, text: str, *args: str):
    from click.testing import CliRunner

    from lagsim.cli import main

    path = tmp_path / "sys.yaml"
    path.write_text(yml(text), encoding="utf-8")
    return CliRunner().invoke(main, [args[0], str(path), *args[1:]])


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], lines
    return lines[0]


@pytest.mark.parametrize(("value", "message"), NON_FINITE)
def test_non_finite_parameter_is_an_input_error(tmp_path: Path, value: str, message: str
                                                ) -> None:
    line = one_error_line(cli_file(tmp_path, f"""
        parameters:
          k: "{value}"
        coordinates: [x]
        kinetic: x_dot**2/2
        potential: k*x**2
        """, "derive"))
    assert line == (f"lagsim: error: {tmp_path / 'sys.yaml'}:2:7: parameter 'k' '{value}': "
                    f"{message}")


@pytest.mark.parametrize(("value", "message"), NON_FINITE)
def test_non_finite_initial_value_is_an_input_error(tmp_path: Path, value: str, message: str
                                                    ) -> None:
    line = one_error_line(cli_file(tmp_path, f"""
        coordinates: [x]
        kinetic: x_dot**2/2
        initial:
          x_dot: "{value}"
        """, "simulate"))
    assert line == (f"lagsim: error: {tmp_path / 'sys.yaml'}:4:11: the initial value of "
                    f"'x_dot' '{value}': {message}")


def test_non_finite_number_inside_an_expression_points_at_it() -> None:
    check(input_error("""
        coordinates: [x]
        kinetic: x_dot**2/2 + x/(1 - 1)
        """), 2, 23, "'kinetic' 'x_dot**2/2 + x/(1 - 1)': x/(1 - 1) is not a finite number (a "
          "division by zero, or a logarithm of 0)")


@pytest.mark.parametrize("option", ["--set", "--init"])
@pytest.mark.parametrize("value", ["1e400", "nan", "1/0", "sqrt(-1)"])
def test_non_finite_flag_is_an_input_error(option: str, value: str) -> None:
    """Through a real process: exit 2, one line in lagsim's error style (not click's "Invalid
    value") naming the option, the name and the value."""
    import subprocess
    import sys

    name = "g" if option == "--set" else "theta_dot"
    result = subprocess.run([sys.executable, "-m", "lagsim", "simulate", "pendulum", option,
                             f"{name}={value}", "--t-end", "0.1"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"lagsim: error: {option}: the value of {name} '{value}': "), line


@pytest.mark.parametrize(("key", "option"), [("overrides", "--set"), ("initial", "--init")])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_override_is_refused_by_the_spec(key: str, option: str, value: float) -> None:
    name = "m" if key == "overrides" else "x_dot"
    err = input_error("""
        parameters: {m: 1}
        coordinates: [x]
        kinetic: m*x_dot**2/2
        """, **{key: {name: value}})
    assert err.location == Location(option)
    assert err.message == (f"{name}={value}: the value is {value}, not a finite number; give a "
                           "finite value such as 1.5")
