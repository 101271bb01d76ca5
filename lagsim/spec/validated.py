"""The validated, immutable system: :class:`SystemSpec` and its parts, the keys of the format
(version 1, ``docs/format.md``) and the values ``--set`` and ``--init`` put in.

Nothing here reads YAML: :mod:`lagsim.spec.reader` makes a :class:`SystemSpec` from a file's text,
:mod:`lagsim.spec.system` is where the rest of lagsim reads one. A spec unpickled from the
validated-spec cache (:func:`lagsim.api.open_system`) imports this module and not the reader, nor
PyYAML (issue 31, "Start-up").
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import field, replace
from typing import Any

import symengine as se

from lagsim import naming
from lagsim.errors import InputError, Location
from lagsim.records import record
from lagsim.spec.expressions import Source, normal_name, parse_expression, suggest

TOP_KEYS = (
    "name", "description", "parameters", "coordinates", "kinetic", "potential", "lagrangian",
    "masses", "gravity", "forces", "loads", "dissipation", "constraints", "initial", "simulate",
    "units", "springs", "torques", "steady", "inputs",
)
MASS_KEYS = ("mass", "position", "inertia", "angle", "orientation", "points")
SPACE_AXES = ("x", "y", "z")
"""The names of the space axes, in order: the suffixes of a ``no_slip`` constraint's rows."""
NO_SLIP_KEYS = ("name", "no_slip", "directions")
SPRING_KEYS = ("ends", "stiffness", "length", "damping")
ORIENTATION_KEYS = ("euler", "angles", "extrinsic", "matrix", "quaternion")
EULER_SEQUENCES = ("XZX", "XYX", "YXY", "YZY", "ZYZ", "ZXZ",
                   "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
"""The 6 proper Euler and the 6 Tait–Bryan sequences (Goldstein, *Classical Mechanics*, 3rd ed.,
§4.4 and appendix A)."""
TIME = se.Symbol("t")
NUMBER_HINT = "a value is a number or an expression in numbers, such as 1.5 or pi/4"


@record
class Expr:
    """An expression of the user's file: its text, its symengine value and where it stands."""

    text: str
    expr: se.Basic
    location: Location

    @property
    def value(self) -> Any:
        """The expression as SymPy (imported only when asked for, e.g. for printing)."""
        import sympy

        return sympy.sympify(self.expr)


@record
class Parameter:
    name: str
    value: float
    location: Location


@record
class Orientation:
    """A 3-D body's orientation R (body axes → space axes): three angles of an Euler or
    Tait–Bryan ``sequence`` (intrinsic, about the body's moving axes, unless ``extrinsic``), a
    rotation ``matrix`` written out, or a unit ``quaternion`` (e0, e1, e2, e3), scalar first;
    exactly one of ``sequence``, ``matrix`` and ``quaternion`` is not empty."""

    sequence: str
    extrinsic: bool
    angles: tuple[Expr, ...]
    matrix: tuple[tuple[Expr, ...], ...]
    quaternion: tuple[Expr, ...] = ()


@record
class Point:
    """A named point of a body, given by its ``offset`` from the centre of mass: in body axes
    (it turns with the body: 3 components, or 2 turned by a planar body's angle) or, when
    ``space``, in space axes (a point that need not be fixed in the body, such as a contact
    point)."""

    name: str
    offset: tuple[Expr, ...]
    space: bool
    location: Location


@record
class MassSpec:
    """A point mass, a planar body when ``inertia`` and ``angle`` are given, or a 3-D body when
    ``orientation`` and ``body_inertia`` (3×3, about the centre of mass, body axes) are."""

    name: str
    mass: Expr
    position: tuple[Expr, ...]
    inertia: Expr | None
    angle: Expr | None
    location: Location
    orientation: Orientation | None = None
    body_inertia: tuple[tuple[Expr, ...], ...] | None = None
    points: tuple[Point, ...] = ()

    @property
    def rotates(self) -> bool:
        """Whether the mass is a body (planar or 3-D), which has an angular velocity."""
        return self.orientation is not None or self.angle is not None


@record
class ConstraintSpec:
    """A holonomic constraint φ(q, t) = 0 or a velocity constraint a(q,t)·q̇ + b(q,t) = 0.

    A row of a ``no_slip`` entry has no ``expression``: it is the velocity constraint v_P·e_k = 0
    of the material point ``point`` (``body.point`` or a mass) along the space axis
    ``direction`` (0, 1, 2), which :class:`lagsim.symbolic.model.Points` writes out."""

    name: str
    kind: str
    expression: Expr | None
    location: Location
    point: str = ""
    direction: int = -1


@record
class ContactSpec:
    """A unilateral constraint g(q, t) ≥ 0 with Newton's impact law ġ⁺ = −e ġ⁻ (issue 27;
    Pfeiffer and Glocker, *Multibody Dynamics with Unilateral Contacts*, Wiley 1996, §4.3):
    ``gap`` is g, ``restitution`` e, an expression in the parameters checked to lie in [0, 1]
    at their values. With ``friction`` μ (a parameter expression ≥ 0) the contact also takes a
    tangential impulse bounded by μΛ (Coulomb), along the rate of ``tangent`` s(q, t), the
    position of the contact point along the obstacle (its rate is the slip velocity)."""

    name: str
    gap: Expr
    restitution: Expr
    value: float
    location: Location
    friction: float | None = None
    tangent: Expr | None = None


CONTACT_KEYS = ("name", "unilateral", "restitution", "friction", "tangent")
"""The keys of a unilateral item of ``constraints:``; ``friction: mu`` needs ``tangent: s``."""


SpringEnd = str | tuple[float, float]
"""An end of a spring: a mass name, ``"origin"``, or a fixed point (x, y)."""

End = str | tuple[float, ...]
"""An end of a spring with a stiffness: a mass name (its centre of mass), ``body.point``,
``"origin"``, or a fixed point (x, y) or (x, y, z)."""


@record
class SpringSpec:
    """A spring of ``springs:`` given as a mapping: it adds ½k(|r_A − r_B| − L0)² to U and, with
    a ``damping`` c, ½c(d|r_A − r_B|/dt)² to the dissipation function."""

    ends: tuple[End, End]
    stiffness: Expr
    length: Expr | None
    damping: Expr | None
    location: Location


@record
class TorqueSpec:
    """A torque on a body: M in space axes (3 components, or the one component about z of a
    planar body), or in the body's own axes when ``body_axes``."""

    body: str
    moment: tuple[Expr, ...]
    body_axes: bool
    location: Location


@record
class Setting:
    value: Any
    location: Location


@record
class SystemSpec:
    """A validated system file. Symbols are plain SymPy symbols named as in the file."""

    source: str
    name: str
    description: str
    parameters: tuple[Parameter, ...]
    coordinates: tuple[str, ...]
    coordinate_locations: tuple[Location, ...]
    kinetic: Expr | None
    potential: Expr | None
    lagrangian: Expr | None
    masses: tuple[MassSpec, ...]
    gravity: tuple[Expr, ...] | None
    forces: tuple[tuple[str, Expr], ...]
    loads: tuple[tuple[str, tuple[Expr, ...]], ...]
    dissipation: Expr | None
    constraints: tuple[ConstraintSpec, ...]
    initial: tuple[tuple[str, float], ...]
    simulate: Mapping[str, Setting] = field(default_factory=dict)
    location: Location = field(default_factory=lambda: Location("<input>"))
    initial_locations: tuple[tuple[str, Location], ...] = ()
    """Where each entry of ``initial`` was set: its value in the file, or ``--init``."""
    initial_gradients: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()
    """∂(initial value)/∂(parameter) of each entry of ``initial`` written as an expression in
    parameters (``x: l*sin(pi/6)``), at the parameters' values: the start's dependence on the
    parameters, which ``simulate --sensitivities`` differentiates (issue 26), through the
    parameters defined from others (:attr:`parameter_gradients`)."""
    parameter_gradients: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()
    """d(parameter)/d(earlier parameter) of each parameter defined from others (``I: m*l**2``),
    followed through the chain: a run at another value of ``l`` re-reads ``I`` (issue 26)."""
    parameter_definitions: tuple[tuple[str, se.Basic], ...] = ()
    """Each parameter the file defines from earlier ones (``I: m*l**2``), by its expression in
    the parameters that are numbers in the file (the chain followed): what a run at another
    value of ``l`` re-reads, and what an export computes from the tunable parameters
    (issue 25)."""
    initial_definitions: tuple[tuple[str, se.Basic], ...] = ()
    """Each entry of ``initial`` the file writes as an expression in parameters
    (``theta: theta0``), by that expression in the parameters that are numbers in the file
    (:attr:`parameter_definitions` put in): the start an export re-evaluates when a parameter
    is changed (issue 25)."""
    units: tuple[tuple[str, str], ...] = ()
    """``units:``: a coordinate, parameter or ``t`` → its unit as text, for axis labels."""
    springs: tuple[tuple[SpringEnd, SpringEnd], ...] = ()
    """``springs:``: pairs of ends (a mass name, ``origin``, or a fixed point (x, y)) that
    ``lagsim animate`` draws as springs."""
    steady: tuple[tuple[str, float], ...] = ()
    """``steady:``: a steady motion (relative equilibrium) to linearize about, coordinate →
    value and ``<coordinate>_dot`` → rate, at the parameters' values (``lagsim modes``,
    ``derive --form linear``; :mod:`lagsim.analysis.steady`)."""
    steady_locations: tuple[tuple[str, Location], ...] = ()
    """Where each entry of ``steady`` was set in the file."""
    spring_forces: tuple[SpringSpec, ...] = ()
    """``springs:`` entries given as mappings (with a stiffness): they add to U (and R)."""
    torques: tuple[TorqueSpec, ...] = ()
    """``torques:``: moments on bodies, projected onto the coordinates by ∂ω/∂q̇."""
    inputs: tuple[str, ...] = ()
    """``inputs:``: the names, in the file's order, of the parameters that are inputs u (used
    only in forces, loads and torques; their values are the defaults), for B = ∂f/∂u and a
    controller (issue 28)."""

    def mass(self, name: str) -> MassSpec:
        """The mass (or body) called ``name``."""
        return next(m for m in self.masses if m.name == name)
    contacts: tuple[ContactSpec, ...] = ()
    """The ``unilateral:`` items of ``constraints:`` (issue 27), kept out of ``constraints``:
    the equations of motion are those of free flight."""

    @property
    def parameter_values(self) -> dict[str, float]:
        return {p.name: p.value for p in self.parameters}

    @property
    def velocities(self) -> tuple[str, ...]:
        return naming.velocities(self.coordinates)

    def identity_quaternions(self) -> tuple[str, ...]:
        """The scalar part e0 of each quaternion body whose four components are coordinates none
        of which ``initial`` sets: such a body starts at the identity, e = (1, 0, 0, 0), not at
        the singular e = 0."""
        given = {name for name, _ in self.initial}
        out = []
        for mass in self.masses:
            parts = mass.orientation.quaternion if mass.orientation is not None else ()
            names = [str(e.expr) for e in parts]
            if (parts and all(n in self.coordinates for n in names)
                    and not given.intersection(names)):
                out.append(names[0])
        return tuple(out)

    def initial_state(self) -> tuple[list[float], list[float]]:
        """q(t0) and q̇(t0) in coordinate order; missing entries are 0, except the scalar part of
        a quaternion left out entirely (:meth:`identity_quaternions`), which is 1."""
        values = {**{name: 1.0 for name in self.identity_quaternions()}, **dict(self.initial)}
        q = [values.get(name, 0.0) for name in self.coordinates]
        qd = [values.get(naming.velocity(name), 0.0) for name in self.coordinates]
        return q, qd

    def symbols(self) -> dict[str, se.Symbol]:
        """The symbol table: parameters, coordinates, velocities and ``t`` (symengine)."""
        return symbol_table([p.name for p in self.parameters], self.coordinates)


def symbol_table(parameters: list[str] | tuple[str, ...],
                 coordinates: list[str] | tuple[str, ...]) -> dict[str, se.Symbol]:
    """Every name an expression may use: parameters, coordinates, their ``_dot`` and ``t``."""
    table = {name: se.Symbol(name) for name in parameters}
    for q in coordinates:
        table[q] = se.Symbol(q)
        table[naming.velocity(q)] = se.Symbol(naming.velocity(q))
    table["t"] = TIME
    return table


def put_initial(values: dict[str, float], locations: dict[str, Location], valid: list[str],
                 override: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    """``--init`` put over the initial ``values`` (and their ``locations``, both changed in
    place): each value replaced or added, located at ``--init``; the initial values in state
    order."""
    for key, value in finite_values(override, "--init").items():
        if key not in valid:
            raise InputError(f"no such coordinate or velocity '{key}'"
                             f"{suggest(key, valid)}; they are {', '.join(valid)}",
                             Location("--init"))
        values[key] = value
        locations[key] = Location("--init")
    return tuple((k, values[k]) for k in valid if k in values)


def with_initial(spec: SystemSpec, initial: Mapping[str, float]) -> SystemSpec:
    """``spec`` with ``initial`` put over its initial values as ``--init`` puts them: the spec
    :func:`parse_spec` gives for the same file with these initial values added, field for field,
    without reading the file again (its parameters, hence the file's initial values, are
    unchanged)."""
    values = dict(spec.initial)
    locations = dict(spec.initial_locations)
    state = put_initial(values, locations, list(naming.state(spec.coordinates)), initial)
    given = finite_values(initial, "--init")
    return replace(spec, initial=state, initial_locations=tuple(locations.items()),
                   initial_gradients=tuple((k, g) for k, g in spec.initial_gradients
                                           if k not in given),
                   initial_definitions=tuple((k, e) for k, e in spec.initial_definitions
                                             if k not in given))


def finite_values(values: Mapping[str, float], option: str) -> dict[str, float]:
    """``values`` of ``--set`` or ``--init`` by NFKC-normalized name, each a finite float."""
    out = {}
    for name, value in values.items():
        if isinstance(value, str):
            value = parse_expression(value, {}, Source(Location(option)),
                                     f"the value of {name}", NUMBER_HINT)
        if isinstance(value, bool) or not isinstance(value, (int, float, se.Basic)):
            raise InputError(f"{name}={value!r}: the value must be a number such as 1.5",
                             Location(option))
        try:
            number = float(value)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            shown = (f"an integer of about {int(value.bit_length() * math.log10(2)) + 1:,} "
                     "digits" if isinstance(value, int) else repr(value))
            raise InputError(f"{name}: the value, {shown}, is not a finite number; "
                             f"{FINITE}", Location(option)) from None
        if not math.isfinite(number):
            raise InputError(f"{name}={value}: the value is {number}, not a finite number; give a "
                             "finite value such as 1.5", Location(option))
        out[normal_name(name)] = number
    return out


FINITE = (f"numbers must be finite and real, at most {sys.float_info.max:.4g} in size "
           "(docs/format.md)")
