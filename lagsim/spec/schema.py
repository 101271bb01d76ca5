"""A JSON Schema (draft 2020-12) of the system file, format version 1, for editors (issue 13).

An editor with a YAML language server validates and completes a system file against it
(``# yaml-language-server: $schema=...`` at the top of the file; docs/format.md, "Editor
support"). The key sets come from the loader's declarations in :mod:`lagsim.spec.system`
(:data:`~lagsim.spec.system.TOP_KEYS`, :data:`~lagsim.spec.system.MASS_KEYS`,
:data:`~lagsim.spec.system.SIMULATE_KEYS`) and the choices of ``method``, ``formulation`` and
``stabilize`` from the registries of :mod:`lagsim.run.integrate`, so a key added there without a
schema part here is a ``KeyError``, not a silent gap. Descriptions are quoted from
docs/format.md (tests/test_schema.py checks each one against it).

The schema checks structure: keys, types, list lengths, which keys need or exclude which.
What needs the system's own names or the expression parser (an unknown symbol, a force on a name
that is not a coordinate, a velocity in a potential, names that clash) is left to the loader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from lagsim.spec.system import (
    EULER_SEQUENCES,
    MASS_KEYS,
    NO_SLIP_KEYS,
    SIMULATE_KEYS,
    SPACE_AXES,
    SPRING_KEYS,
    TOP_KEYS,
)

DIALECT = "https://json-schema.org/draft/2020-12/schema"
_DIGITS = r"\d(?:_?\d)*"
_NUMBER = rf"(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][-+]?{_DIGITS})?"
NUMBER_TEXT = rf"^\s*[-+]?{_NUMBER}\s*$"
"""Text that Python's ``float`` reads as a number: YAML 1.1 reads ``1e3`` as text, and the
simulate options accept it."""
UNSIGNED_TEXT = rf"^\s*\+?{_NUMBER}\s*$"
POSITIVE_TEXT = rf"^\s*\+?(?=[\d_.]*[1-9]){_NUMBER}\s*$"
PAIR_TEXT = rf"^\s*\+?{_NUMBER}\s*,\s*\+?{_NUMBER}\s*$"
"""Two non-negative numbers ``ALPHA,BETA`` as text (``baumgarte: 5,5``)."""

CONSTRAINT_KEYS = ("name", "holonomic", "velocity")
"""The keys of a constraint given as a mapping; spec.py writes them in its check, not in a
declaration, so tests/test_schema.py tries the schema and the loader on the same files."""

EXPRESSION = {"anyOf": [{"type": "number"}, {"type": "string", "pattern": r"\S"}]}
"""An expression: a number, or a string in SymPy syntax that is not blank."""
NUMBER = {"anyOf": [{"type": "number"}, {"type": "string", "pattern": NUMBER_TEXT}]}


def _positive() -> dict[str, Any]:
    return {"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                      {"type": "string", "pattern": POSITIVE_TEXT}]}


def _vector() -> dict[str, Any]:
    """A position, a load or gravity: 2 (planar) or 3 expressions."""
    return {"type": "array", "items": EXPRESSION, "minItems": 2, "maxItems": 3}


def _any_case(word: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else
                   c if c.isdigit() or c in "-_" else re.escape(c) for c in word)


def _choice(names: Iterable[str]) -> dict[str, Any]:
    """One of ``names``; the loader folds case, so ``dop853`` is ``DOP853``."""
    names = tuple(names)
    return {"anyOf": [{"enum": list(names)},
                      {"type": "string",
                       "pattern": "^(?:" + "|".join(_any_case(n) for n in names) + ")$"}]}


def _needs(key: str, then: dict[str, Any]) -> dict[str, Any]:
    """``then`` holds when ``key`` is given: ``if``/``then``, which draft-07 validators (most
    editors') read as 2020-12 does, unlike ``dependentRequired``."""
    return {"if": {"required": [key]}, "then": then}


def _described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


def _orientation() -> dict[str, Any]:
    euler = {
        "type": "object",
        "properties": {
            "euler": _described(_choice(EULER_SEQUENCES), "three angles of one of the 12 "
                                "sequences"),
            "angles": _described({"type": "array", "items": EXPRESSION, "minItems": 3,
                                  "maxItems": 3}, "three angles"),
            "extrinsic": _described({"type": "boolean"}, "With `extrinsic: true` the rotations "
                                    "are about the fixed space axes in the order written"),
        },
        "additionalProperties": False,
        "required": ["euler", "angles"],
    }
    row = {"type": "array", "items": EXPRESSION, "minItems": 3, "maxItems": 3}
    matrix = {
        "type": "object",
        "properties": {"matrix": _described(
            {"type": "array", "items": row, "minItems": 3, "maxItems": 3},
            "R written out, three rows of three expressions in parameters, coordinates and `t`")},
        "additionalProperties": False,
        "required": ["matrix"],
    }
    quaternion = {
        "type": "object",
        "properties": {"quaternion": _described(
            {"type": "array", "items": EXPRESSION, "minItems": 4, "maxItems": 4},
            "a unit quaternion, scalar first")},
        "additionalProperties": False,
        "required": ["quaternion"],
    }
    return {"anyOf": [euler, matrix, quaternion]}


def _body_inertia() -> dict[str, Any]:
    """The list forms of a 3-D body's inertia: 3 principal moments, 6 components, a 3×3."""
    row = {"type": "array", "items": EXPRESSION, "minItems": 3, "maxItems": 3}
    return {"anyOf": [
        {"type": "array", "items": EXPRESSION, "minItems": 3, "maxItems": 3},
        {"type": "array", "items": EXPRESSION, "minItems": 6, "maxItems": 6},
        {"type": "array", "items": row, "minItems": 3, "maxItems": 3},
    ]}


def _space(key: str, vector: dict[str, Any]) -> dict[str, Any]:
    """``{key: vector}``, the one-key mapping of a point or torque in named axes."""
    return {"type": "object", "properties": {key: vector}, "additionalProperties": False,
            "required": [key]}


def _points() -> dict[str, Any]:
    """A body's ``points:``: name → offset in body axes, or ``{space: [...]}``."""
    return {"type": "object", "additionalProperties": {"anyOf": [_vector(),
                                                                 _space("space", _vector())]}}


def _mass() -> dict[str, Any]:
    parts = {
        "mass": (EXPRESSION, "an expression, usually a parameter."),
        "position": (_vector(), "2 components (planar) or 3, expressions in parameters, "
                     "coordinates and `t`."),
        "inertia": ({"anyOf": [EXPRESSION, _body_inertia()]},
                    "a planar body's moment of inertia about its centre of mass"),
        "angle": (EXPRESSION, "its orientation angle"),
        "orientation": (_orientation(), "the rotation R that takes the body's axes to the "
                        "space axes"),
        "points": (_points(), "named points of a body, each its offset from the centre of "
                   "mass"),
    }
    planar = {"required": ["inertia"], "not": {"required": ["orientation"]}}
    body = {"required": ["inertia"], "not": {"required": ["angle"]},
            "properties": {"inertia": _body_inertia(), "position": {"minItems": 3}}}
    return {
        "type": "object",
        "properties": {key: _described(*parts[key]) for key in MASS_KEYS},
        "additionalProperties": False,
        "required": ["mass", "position"],
        "allOf": [{"if": planar, "then": {"required": ["angle"],
                                          "properties": {"inertia": EXPRESSION}}},
                  _needs("angle", {"required": ["inertia"]}),
                  _needs("orientation", body)],
    }


def _constraint() -> dict[str, Any]:
    parts: dict[str, tuple[dict[str, Any], str]] = {
        "name": ({"type": "string"}, "The multiplier of constraint `c` is `lambda_c`."),
        "holonomic": (EXPRESSION, "the expression is φ; it may not use velocities (write such "
                      "a constraint under `velocity:`)."),
        "velocity": (EXPRESSION, "the expression must be linear in the velocities and use at "
                     "least one of them."),
    }
    no_slip = {
        "name": {"type": "string"},
        "no_slip": _described({"type": "string"}, "a mass (its centre of mass) or "
                              "`body.point`"),
        "directions": {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": True,
                       "items": {"enum": list(SPACE_AXES)}},
    }
    return {
        "anyOf": [
            _described(EXPRESSION, "a string, a holonomic constraint"),
            {"type": "object",
             "description": "a mapping with an optional `name` and exactly one of `holonomic:` "
                            "or `velocity:`",
             "properties": {key: _described(*parts[key]) for key in CONSTRAINT_KEYS},
             "additionalProperties": False,
             "oneOf": [{"required": ["holonomic"]}, {"required": ["velocity"]}]},
            {"type": "object",
             "description": "a mapping `{name: N, no_slip: P, directions: [x, y]}`",
             "properties": {key: no_slip[key] for key in NO_SLIP_KEYS},
             "additionalProperties": False,
             "required": ["no_slip"]},
        ],
    }


def _spring() -> dict[str, Any]:
    """A spring: a pair of ends drawn only, or a mapping with a stiffness that acts."""
    drawn = {"type": "array", "minItems": 2, "maxItems": 2,
             "items": {"anyOf": [{"type": "string"},
                                 {"type": "array", "items": EXPRESSION,
                                  "minItems": 2, "maxItems": 2}]}}
    end = {"anyOf": [{"type": "string"}, _vector()]}
    parts = {"ends": {"type": "array", "items": end, "minItems": 2, "maxItems": 2},
             "stiffness": EXPRESSION, "length": EXPRESSION, "damping": EXPRESSION}
    acting = {
        "type": "object",
        "description": "a mapping `{ends: [A, B], stiffness: k, length: L0, damping: c}`",
        "properties": {key: parts[key] for key in SPRING_KEYS},
        "additionalProperties": False,
        "required": ["ends", "stiffness"],
    }
    return {"anyOf": [drawn, acting]}


def _torque() -> dict[str, Any]:
    three = {"type": "array", "items": EXPRESSION, "minItems": 3, "maxItems": 3}
    return {"anyOf": [EXPRESSION, three, _space("space", three), _space("body_axes", three)]}


def _simulate_parts() -> dict[str, tuple[dict[str, Any], str]]:
    """The ``simulate:`` keys, their types and meanings, from the option table
    (:data:`lagsim.spec.options.OPTIONS`): a key, its description or its choices are declared
    there only."""
    from lagsim.spec import options

    pair = {"anyOf": [
        {"type": "array", "minItems": 2, "maxItems": 2,
         "items": {"anyOf": [{"type": "number", "minimum": 0},
                             {"type": "string", "pattern": UNSIGNED_TEXT}]}},
        {"type": "string", "pattern": PAIR_TEXT},
    ]}
    by_parser: dict[Any, dict[str, Any]] = {
        options.parse_number: NUMBER,
        options.parse_positive: _positive(),
        options.parse_samples: {"anyOf": [{"type": "integer", "minimum": 2},
                                     {"type": "string", "pattern": UNSIGNED_TEXT}]},
        options.parse_gains: pair,
        options.parse_condition: EXPRESSION,
        options.parse_switch: {"type": "boolean"},
    }
    return {o.name: (_choice(o.choices()) if o.choices else by_parser[o.parse], o.doc)
            for o in options.OPTIONS}


def _top_parts() -> dict[str, tuple[dict[str, Any], str]]:
    text = {"type": ["string", "number", "boolean", "null"]}
    simulate = _simulate_parts()
    return {
        "name": (text, "the system's name in output and titles"),
        "description": (text, "free text; `lagsim systems` shows its first sentence"),
        "parameters": ({"type": ["object", "null"], "additionalProperties": EXPRESSION},
                       "constants of the system; each one can be changed with "
                       "`--set NAME=VALUE`"),
        "coordinates": ({"type": "array", "items": {"type": "string"}, "minItems": 1,
                         "uniqueItems": True}, "the generalized coordinates q, in order"),
        "kinetic": (EXPRESSION, "the kinetic energy T(q, q̇, t)"),
        "potential": (EXPRESSION, "the potential energy U(q, t); it may not use velocities"),
        "lagrangian": (EXPRESSION, "L(q, q̇, t) given directly; then `kinetic`, `potential`, "
                       "`masses` and `gravity` are not allowed"),
        "masses": ({"type": "object", "additionalProperties": _mass()},
                   "point masses, planar bodies and rigid bodies in three dimensions; their "
                   "kinetic energy is added to T"),
        "gravity": (_vector(), "a uniform field g acting on the `masses`: adds "
                    "−Σ mass·(g · position) to U"),
        "forces": ({"type": "object", "additionalProperties": EXPRESSION},
                   "non-conservative generalized forces τᵢ, by coordinate"),
        "loads": ({"type": "object", "additionalProperties": _vector()},
                  "force vectors on named masses, projected onto the coordinates"),
        "dissipation": (EXPRESSION, "a Rayleigh function R(q, q̇, t); adds −∂R/∂q̇ᵢ to τᵢ"),
        "constraints": ({"type": "array", "items": _constraint()},
                        "holonomic constraints φ(q, t) = 0 and velocity constraints "
                        "a(q, t)·q̇ + b(q, t) = 0"),
        "initial": ({"type": ["object", "null"], "additionalProperties": EXPRESSION},
                    "q(t_start) and q̇(t_start)"),
        "simulate": ({"type": "object",
                      "properties": {key: _described(*simulate[key]) for key in SIMULATE_KEYS},
                      "additionalProperties": False,
                      "not": {"required": ["samples", "dt"]}},
                     "default settings of `lagsim simulate`"),
        "units": ({"type": "object", "additionalProperties": {"type": "string",
                                                                "pattern": r"\S"}},
                  "optional units of coordinates, parameters and `t`, shown in axis labels"),
        "springs": ({"type": "array", "items": _spring()},
                    "pairs of ends that `lagsim animate` draws as springs, or springs with a "
                    "stiffness that add to U"),
        "torques": ({"type": "object", "additionalProperties": _torque()},
                    "moments on bodies, in space axes or body axes, projected onto the "
                    "coordinates"),
        "steady": ({"type": ["object", "null"], "additionalProperties": EXPRESSION},
                   "a steady motion (relative equilibrium) for `lagsim modes` and `derive "
                   "--form linear`: coordinates' values and `<coordinate>_dot` rates"),
    }


def system_schema() -> dict[str, Any]:
    """The JSON Schema of a system file (docs/format.md), keys in the loader's order."""
    top = _top_parts()
    some_masses = {"required": ["masses"], "properties": {"masses": {"minProperties": 1}}}
    return {
        "$schema": DIALECT,
        "title": "lagsim system file, format version 1",
        "description": "A system file is one YAML mapping. It describes a mechanical system: its "
                       "generalized coordinates, its parameters, its kinetic and potential "
                       "energy (or its Lagrangian, or point masses and a gravity field), its "
                       "constraints and forces, and where it starts.",
        "type": "object",
        "properties": {key: _described(*top[key]) for key in TOP_KEYS},
        "additionalProperties": False,
        "required": ["coordinates"],
        "anyOf": [{"required": ["kinetic"]}, some_masses, {"required": ["lagrangian"]}],
        "allOf": [
            _needs("lagrangian", {"not": {"anyOf": [{"required": [key]} for key in
                                                    ("kinetic", "potential", "masses",
                                                     "gravity")]}}),
            _needs("gravity", some_masses),
        ],
    }


def schema_text() -> str:
    """:func:`system_schema` as indented JSON, what ``lagsim schema`` prints."""
    return json.dumps(system_schema(), indent=2, ensure_ascii=False) + "\n"
