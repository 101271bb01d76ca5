"""The immutable symbolic model of a system: L, M, F, h and the constraint rows.

Built with symengine (fast differentiation); convert to SymPy with :func:`to_sympy` for printing and
simplifying. Conventions (seed ``001_80d65b968ce3cb18.txt`` §10.6–10.7):

* L = T − U (10.1); the mass matrix M = ∂²L/∂q̇² (§10.6);
* M q̈ = F + Aᵀλ with F = ∂L/∂q − (∂²L/∂q̇∂q) q̇ − ∂²L/∂q̇∂t + τ, the Euler–Lagrange equations
  d/dt ∂L/∂q̇ − ∂L/∂q = τ + Aᵀλ written out (Theorem 10.4 and the forced form after it);
* every constraint has a velocity-level form w = a(q,t)·q̇ + c(q,t) (holonomic: w = φ̇) and an
  acceleration-level form a·q̈ = b with b = −(∂w/∂q)·q̇ − ∂w/∂t: the constraint differentiated twice
  (holonomic) or once (velocity), seed ``003_88d23709419132a0.txt``;
* the energy function h = q̇·∂L/∂q̇ − L.

The mass matrix is never inverted symbolically.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import field, fields, is_dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import symengine as se

from lagsim import naming
from lagsim.errors import InputError, Location
from lagsim.records import record
from lagsim.spec.expressions import exact_text, kinks, resolve_derivatives
from lagsim.spec.system import ConstraintSpec, End, Expr, MassSpec, Orientation, SystemSpec
from lagsim.symbolic.expansion import expanded, killable

if TYPE_CHECKING:  # bodies, rotations and vanishing for the systems that have them (issue 31)
    from lagsim.symbolic.bodies import Frame


@record
class Constraint:
    """One constraint: ``expression`` is φ (holonomic) or a·q̇ + c (velocity); ``row`` is a,
    ``offset`` is c, ``velocity_form`` is w = a·q̇ + c (φ̇ when holonomic) and ``rhs`` is b in
    a·q̈ = b."""

    name: str
    kind: str
    expression: se.Basic
    row: tuple[se.Basic, ...]
    offset: se.Basic
    velocity_form: se.Basic
    rhs: se.Basic

    @property
    def multiplier(self) -> str:
        return naming.multiplier(self.name)


@record
class Model:
    """The symbolic model of one system; every field is a symengine object.

    ``mass_matrix``, ``forcing`` and ``energy`` are derived from L and τ when first asked for
    (then kept): they are most of the symbolic work (the 32-chain: 2.3 s of 2.6 s), and a run
    whose compiled code is in the cache does not need them (issue 17 §2). ``structure_key``
    says what determines the model's expressions (:func:`spec_structure`), so that the compiled
    code can be looked up without them; None for a model made otherwise (then the expressions
    themselves are the key).
    """

    name: str
    description: str
    coordinates: tuple[str, ...]
    q: tuple[se.Symbol, ...]
    qd: tuple[se.Symbol, ...]
    qdd: tuple[se.Symbol, ...]
    t: se.Symbol
    parameters: dict[str, float]
    param_symbols: tuple[se.Symbol, ...]
    kinetic: se.Basic
    potential: se.Basic
    lagrangian: se.Basic
    momenta: se.DenseMatrix
    tau: se.DenseMatrix
    constraints: tuple[Constraint, ...]
    A: se.DenseMatrix
    b: se.DenseMatrix
    mass_positions: tuple[tuple[str, tuple[se.Basic, ...]], ...] = ()
    structure_key: str | None = None
    point_positions: tuple[tuple[str, tuple[se.Basic, ...]], ...] = ()
    """The position of each declared point of a body, named ``body.point``, for pictures."""
    rotations: tuple[tuple[se.Basic, ...], ...] = ()
    """For a system with 3-D bodies, the change δq of the coordinates under a rotation of
    everything about the space axis x, y and z (:func:`space_rotations`); an axis whose δq
    cannot be written is an empty tuple, and a system without 3-D bodies has none."""
    inputs: tuple[str, ...] = ()
    """The parameters that are inputs u (``inputs:``), in the file's order (issue 28)."""
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False,
                                     compare=False)
    _singular: list[tuple[str, ...]] = field(default_factory=list, init=False, repr=False,
                                             compare=False)
    """:meth:`singular_coordinates` once found (every run checks it; the 32-chain's momenta
    take tens of ms to scan)."""

    def _derive(self) -> dict[str, Any]:
        """M = ∂²L/∂q̇², F = ∂L/∂q − (∂²L/∂q̇∂q)q̇ − ∂²L/∂q̇∂t + τ, h = q̇·p − L (001 §10.6)."""
        if not self._derived:
            with killable():
                self._derived.update(self._differentiate())
        return self._derived

    def _differentiate(self) -> dict[str, Any]:
        """M, F and h of :meth:`_derive`."""
        n, q, qd, t = self.n, self.q, self.qd, self.t
        M = se.zeros(n, n)
        F = se.zeros(n, 1)
        for i in range(n):
            for j in range(n):
                M[i, j] = se.diff(self.momenta[i], qd[j])
            F[i] = (se.diff(self.lagrangian, q[i])
                    - time_derivative(self.momenta[i], q, qd, t) + self.tau[i])
        energy = se.Add(*(v * p for v, p in zip(qd, self.momenta))) - self.lagrangian
        if kinks(self.lagrangian, *self.tau):
            M = M.applyfunc(resolve_derivatives)
            F = F.applyfunc(resolve_derivatives)
        return dict(mass_matrix=M, forcing=F, energy=energy)

    @property
    def mass_matrix(self) -> se.DenseMatrix:
        return self._derive()["mass_matrix"]

    @property
    def forcing(self) -> se.DenseMatrix:
        return self._derive()["forcing"]

    @property
    def energy(self) -> se.Basic:
        return self._derive()["energy"]

    @property
    def n(self) -> int:
        return len(self.q)

    @property
    def m(self) -> int:
        return len(self.constraints)

    @property
    def holonomic(self) -> tuple[Constraint, ...]:
        return tuple(c for c in self.constraints if c.kind == "holonomic")

    @property
    def velocity_constraints(self) -> tuple[Constraint, ...]:
        return tuple(c for c in self.constraints if c.kind == "velocity")

    @property
    def is_time_dependent(self) -> bool:
        """Whether t appears in L, τ or a constraint: then h need not be conserved."""
        exprs = [self.lagrangian, *self.tau, *(c.expression for c in self.constraints)]
        return any(self.t in se.sympify(e).free_symbols for e in exprs)

    @property
    def is_conservative(self) -> bool:
        return all(e == 0 for e in self.tau) and not self.is_time_dependent

    def euler_lagrange(self) -> list[se.Basic]:
        """d/dt ∂L/∂q̇_i − ∂L/∂q_i − τ_i as expressions in q, q̇, q̈, t (001 Theorem 10.2)."""
        M, F = self.mass_matrix, self.forcing
        return [
            sum((M[i, j] * self.qdd[j] for j in range(self.n)), se.Integer(0)) - F[i]
            for i in range(self.n)
        ]

    def singular_coordinates(self) -> list[str]:
        """Coordinates whose velocity appears nowhere in T: a zero row of M = ∂p/∂q̇, that is a
        momentum p_i = ∂L/∂q̇_i free of every velocity (read from p, without building M)."""
        if not self._singular:
            velocities = set(self.qd)
            self._singular.append(tuple(name for name, p in zip(self.coordinates, self.momenta)
                                        if not (se.sympify(p).free_symbols & velocities)))
        return list(self._singular[0])

    def substitutions(self) -> dict[se.Symbol, float]:
        """Parameter symbols → their numbers."""
        return {se.Symbol(k): v for k, v in self.parameters.items()}


def to_sympy(expr: se.Basic | se.DenseMatrix) -> Any:
    """A symengine expression or matrix as SymPy (imported here, not on the way to a run)."""
    import sympy

    if isinstance(expr, se.DenseMatrix):
        return sympy.Matrix(expr.rows, expr.cols, [sympy.sympify(e) for e in expr])
    return sympy.sympify(expr)


def time_derivative(
    expr: se.Basic, q: tuple[se.Symbol, ...], qd: tuple[se.Symbol, ...], t: se.Symbol
) -> se.Basic:
    """d/dt of an expression in q and t along q̇: Σ ∂e/∂q_i q̇_i + ∂e/∂t (one n-ary sum: adding
    term by term would rebuild the growing sum n times)."""
    return se.Add(*(se.diff(expr, qi) * vi for qi, vi in zip(q, qd)), se.diff(expr, t))


def rotation_matrix(orientation: Orientation) -> se.DenseMatrix:
    """R (body axes → space axes) of a 3-D body's orientation."""
    from lagsim.symbolic.rotations import euler_matrix, quaternion_matrix

    if orientation.sequence:
        return euler_matrix(orientation.sequence, tuple(a.expr for a in orientation.angles),
                            orientation.extrinsic)
    if orientation.quaternion:
        return quaternion_matrix(tuple(e.expr for e in orientation.quaternion))
    return se.DenseMatrix([[e.expr for e in row] for row in orientation.matrix])


def body_angular_velocity(orientation: Orientation, q: tuple[se.Symbol, ...],
                          qd: tuple[se.Symbol, ...], t: se.Symbol) -> list[se.Basic]:
    """ω_b, the axial vector of Rᵀ Ṙ (Goldstein §4.8): for Euler angles in the short exact form
    of :func:`lagsim.symbolic.rotations.euler_body_rates`, for a written matrix from Rᵀ Ṙ."""
    from lagsim.symbolic.rotations import body_rates, euler_body_rates, quaternion_body_rates

    if orientation.sequence:
        angles = tuple(a.expr for a in orientation.angles)
        rates = tuple(time_derivative(a, q, qd, t) for a in angles)
        return euler_body_rates(orientation.sequence, angles, rates, orientation.extrinsic)
    if orientation.quaternion:
        parts = tuple(e.expr for e in orientation.quaternion)
        return quaternion_body_rates(parts, tuple(time_derivative(e, q, qd, t) for e in parts))
    R = rotation_matrix(orientation)
    Rdot = se.DenseMatrix(3, 3, [time_derivative(e, q, qd, t) for e in R])
    return body_rates(R, Rdot)


def quaternion_regularizer(orientation: Orientation, inertia: list[list[se.Basic]],
                           q: tuple[se.Symbol, ...], qd: tuple[se.Symbol, ...], t: se.Symbol
                           ) -> se.Basic:
    """½·4Ī·(e·ė)², Ī = tr I / 3: ½ ωᵀIω = 2 ėᵀGᵀIGė leaves ė ∥ e without kinetic energy (G e
    = 0), a singular M; this term fills that direction. It is 0 where |e| = 1 holds (e·ė = 0
    there), and its Euler–Lagrange term k (ė·ė + e·ë) e is the second time derivative of ½|e|²
    along e, 0 on every motion that keeps the constraint: the motion, h and λ are unchanged
    (Nikravesh, *Computer-Aided Analysis of Mechanical Systems*, §11.2 uses the same device)."""
    parts = tuple(e.expr for e in orientation.quaternion)
    along = se.Add(*(e * time_derivative(e, q, qd, t) for e in parts))
    mean = (inertia[0][0] + inertia[1][1] + inertia[2][2]) / 3
    return 2 * mean * along**2


def space_rotations(spec: SystemSpec) -> tuple[tuple[se.Basic, ...], ...]:
    """δq of a rotation of everything about each space axis k (x, y, z), for a system with 3-D
    bodies: a quaternion body's four coordinates change by ½ (0, e_k) ⊗ e
    (:func:`lagsim.symbolic.rotations.quaternion_rotation`); an Euler body whose intrinsic
    sequence starts with the axis k turns by its first angle (R = R_k(a) R' gives ∂R/∂a = [e_k×]
    R); a component of a position that is a coordinate by itself (x in [x, y, R cos θ]) changes
    by that component of e_k × r; every other coordinate stays. An axis is empty when a body's
    orientation is not of those forms in bare coordinates (a matrix, an Euler sequence about
    another first axis, a quaternion of expressions) or when two of them ask different changes
    of one coordinate. Positions written otherwise are checked to turn as e_k × r by the search
    that uses these (:func:`lagsim.symbolic.invariants.find_invariants`)."""
    if not any(m.orientation is not None for m in spec.masses):
        return ()
    return tuple(_axis_rotation(spec, k) for k in range(3))


def _bare(parts: tuple[Expr, ...], coordinates: tuple[str, ...]) -> list[str] | None:
    """The coordinate names of ``parts`` when each is a coordinate by itself, else None."""
    names = [str(p.expr) for p in parts]
    return names if all(n in coordinates for n in names) else None


def _axis_rotation(spec: SystemSpec, k: int) -> tuple[se.Basic, ...]:
    """δq of a rotation about the space axis k (:func:`space_rotations`), () when it cannot be
    written."""
    from lagsim.symbolic.rotations import cross_axis, intrinsic, quaternion_rotation

    changes: list[tuple[str, se.Basic]] = []
    for mass in spec.masses:
        orientation = mass.orientation
        if orientation is not None and orientation.quaternion:
            names = _bare(orientation.quaternion, spec.coordinates)
            if names is None:
                return ()
            parts = tuple(se.Symbol(n) for n in names)
            changes += zip(names, quaternion_rotation(parts, k))
        elif orientation is not None and orientation.sequence:
            seq, angles = intrinsic(orientation.sequence, tuple(orientation.angles),
                                    orientation.extrinsic)
            names = _bare(angles, spec.coordinates)
            if names is None or "XYZ"[k] != seq[0].upper():
                return ()
            changes += [(n, se.Integer(int(i == 0))) for i, n in enumerate(names)]
        elif orientation is not None:
            return ()
        if len(mass.position) == 3:
            turned = cross_axis(k, tuple(c.expr for c in mass.position))
            changes += [(str(c.expr), d) for c, d in zip(mass.position, turned)
                        if str(c.expr) in spec.coordinates]
    change: dict[str, se.Basic] = {}
    for name, value in changes:
        if name in change and se.expand(change[name] - value) != 0:
            return ()
        change[name] = value
    return tuple(change.get(c, se.Integer(0)) for c in spec.coordinates)


def build_model(spec: SystemSpec) -> Model:
    """The symbolic model of a validated spec (seed 001 §10.6–10.7, 002 §23.3, 003)."""
    q = tuple(se.Symbol(name) for name in spec.coordinates)
    qd = tuple(se.Symbol(v) for v in naming.velocities(spec.coordinates))
    t = se.Symbol("t")

    kinetic = spec.kinetic.expr if spec.kinetic else se.Integer(0)
    potential = spec.potential.expr if spec.potential else se.Integer(0)
    positions = []
    for mass in spec.masses:
        r = tuple(c.expr for c in mass.position)
        v = [time_derivative(ri, q, qd, t) for ri in r]
        mval = mass.mass.expr
        kinetic += se.Rational(1, 2) * mval * sum((vi**2 for vi in v), se.Integer(0))
        if mass.inertia is not None and mass.angle is not None:
            w = time_derivative(mass.angle.expr, q, qd, t)
            kinetic += se.Rational(1, 2) * mass.inertia.expr * w**2
        if mass.orientation is not None and mass.body_inertia is not None:
            omega = body_angular_velocity(mass.orientation, q, qd, t)
            inertia = [[e.expr for e in row] for row in mass.body_inertia]
            kinetic += se.Rational(1, 2) * se.Add(*(
                omega[i] * inertia[i][j] * omega[j]
                for i in range(3) for j in range(3) if inertia[i][j] != 0))
            if mass.orientation.quaternion:
                kinetic += quaternion_regularizer(mass.orientation, inertia, q, qd, t)
        if spec.gravity is not None:
            gvec = [g.expr for g in spec.gravity]
            potential -= mval * sum((gi * ri for gi, ri in zip(gvec, r)), se.Integer(0))
        positions.append((mass.name, r))
    points = Points(spec, q, qd, t)
    if spec.spring_forces:
        from lagsim.symbolic.bodies import spring_energy
    for spring in spec.spring_forces:
        potential += spring_energy(spring.stiffness.expr,
                                   spring.length.expr if spring.length else None,
                                   points.separation(spring.ends))
    if spec.lagrangian is not None:
        lagrangian = spec.lagrangian.expr
        kinetic = potential = None
    else:
        lagrangian = kinetic - potential

    tau = _generalized_forces(spec, q, qd, t, positions)
    tau += points.generalized_forces()
    constraints = tuple(points.constraint(c) for c in spec.constraints)
    return assemble_model(
        name=spec.name, description=spec.description, coordinates=spec.coordinates,
        lagrangian=lagrangian, tau=tau, constraints=constraints,
        parameters=spec.parameter_values, kinetic=kinetic, potential=potential,
        mass_positions=tuple(positions), structure_key=spec_structure(spec),
        point_positions=tuple((ref, points.position(ref)) for ref in
                              (f"{m.name}.{p.name}" for m in spec.masses for p in m.points)),
        rotations=space_rotations(spec),
        inputs=spec.inputs,
    )


_NOT_STRUCTURE = frozenset(("source", "name", "description", "initial", "simulate", "location",
                            "initial_locations", "coordinate_locations", "value", "steady",
                            "steady_locations", "initial_gradients", "parameter_gradients",
                            "parameter_definitions", "initial_definitions"))
"""Fields of a spec (and of its parts) that do not enter the model's expressions: values of
parameters and initial conditions, run settings, names and places in the file."""


def _canonical(obj: Any) -> Any:
    if isinstance(obj, Location):
        return None
    if isinstance(obj, Expr):
        return exact_text(obj.expr)
    if is_dataclass(obj):
        return (type(obj).__name__, tuple((f.name, _canonical(getattr(obj, f.name)))
                                          for f in fields(obj) if f.name not in _NOT_STRUCTURE))
    if isinstance(obj, (tuple, list)):
        return tuple(_canonical(x) for x in obj)
    if isinstance(obj, Mapping):
        return tuple(sorted((str(k), _canonical(v)) for k, v in obj.items()))
    return repr(obj)


def spec_structure(spec: SystemSpec) -> str:
    """A key for what determines a spec's model: every field of the spec and of its parts but
    :data:`_NOT_STRUCTURE` (so not the parameters' values, issue 8 §1), the expressions as
    parsed, and the source of the modules that derive and compile the model. Two specs with the
    same key give the same expressions, so one compiled code serves both (issue 17 §2)."""
    if not _SOURCES:
        package = Path(__file__).parent.parent
        _SOURCES.append(hashlib.sha256(b"".join(
            (package / name).read_bytes()
            for name in ("symbolic/model.py", "symbolic/bodies.py",
                         "numeric/compile.py"))).hexdigest())
    return hashlib.sha256((repr(_canonical(spec)) + _SOURCES[0]).encode()).hexdigest()


_SOURCES: list[str] = []


def assemble_model(
    name: str,
    description: str,
    coordinates: tuple[str, ...],
    lagrangian: se.Basic,
    tau: se.DenseMatrix,
    constraints: tuple[Constraint, ...],
    parameters: dict[str, float],
    kinetic: se.Basic | None = None,
    potential: se.Basic | None = None,
    mass_positions: tuple[tuple[str, tuple[se.Basic, ...]], ...] = (),
    structure_key: str | None = None,
    point_positions: tuple[tuple[str, tuple[se.Basic, ...]], ...] = (),
    rotations: tuple[tuple[se.Basic, ...], ...] = (),
    inputs: tuple[str, ...] = (),
) -> Model:
    """The model of a Lagrangian L(q, q̇, t) with forces τ and constraint rows (001 §10.6–10.7)."""
    q = tuple(se.Symbol(c) for c in coordinates)
    qd = tuple(se.Symbol(naming.velocity(c)) for c in coordinates)
    qdd = tuple(se.Symbol(naming.acceleration(c)) for c in coordinates)
    t = se.Symbol("t")
    n = len(q)
    if potential is None:
        potential = -lagrangian.subs({v: 0 for v in qd})
    if kinetic is None:
        kinetic = lagrangian + potential
    momenta = [se.diff(lagrangian, v) for v in qd]
    if kinks(lagrangian, *tau, *(c.expression for c in constraints)):
        lagrangian, kinetic, potential = map(resolve_derivatives, (lagrangian, kinetic, potential))
        momenta = [resolve_derivatives(p) for p in momenta]
        tau = se.DenseMatrix(n, 1, [resolve_derivatives(x) for x in tau])
        constraints = tuple(_resolved(c) for c in constraints)
    m = len(constraints)
    A = se.zeros(m, n)
    b = se.zeros(m, 1)
    for k, c in enumerate(constraints):
        for j in range(n):
            A[k, j] = c.row[j]
        b[k] = c.rhs
    return Model(
        name=name, description=description, coordinates=tuple(coordinates), q=q, qd=qd,
        qdd=qdd, t=t, parameters=dict(parameters),
        param_symbols=tuple(se.Symbol(p) for p in parameters), kinetic=kinetic,
        potential=potential, lagrangian=lagrangian, momenta=se.DenseMatrix(n, 1, momenta),
        tau=tau, constraints=constraints, A=A, b=b, mass_positions=mass_positions,
        point_positions=point_positions,
        structure_key=structure_key, rotations=rotations, inputs=tuple(inputs),
    )


def _resolved(constraint: Constraint) -> Constraint:
    """``constraint`` with the derivatives of its Abs and sign terms evaluated
    (:func:`lagsim.spec.expressions.resolve_derivatives`)."""
    return replace(constraint, row=tuple(map(resolve_derivatives, constraint.row)),
                   **{name: resolve_derivatives(getattr(constraint, name))
                      for name in ("offset", "velocity_form", "rhs")})


class Points:
    """The frames of a spec's bodies (:class:`lagsim.symbolic.bodies.Frame`), made when first
    needed, and what acts at their points: loads at ``body.point``, torques, springs with a
    stiffness and ``no_slip`` rows."""

    def __init__(self, spec: SystemSpec, q: tuple[se.Symbol, ...], qd: tuple[se.Symbol, ...],
                 t: se.Symbol) -> None:
        self.spec, self.q, self.qd, self.t = spec, q, qd, t
        self.frames: dict[str, Frame] = {}

    def frame(self, name: str) -> Frame:
        if name not in self.frames:
            self.frames[name] = body_frame(self.spec.mass(name), self.q, self.qd, self.t)
        return self.frames[name]

    def offset(self, ref: str) -> tuple[Frame, tuple[se.Basic, ...]]:
        """The frame of ``ref``'s body and d = r_P − r_c in space axes (zero for a mass)."""
        body, _, name = ref.partition(".")
        frame = self.frame(body)
        if not name:
            return frame, tuple(se.Integer(0) for _ in frame.position)
        point = next(p for p in self.spec.mass(body).points if p.name == name)
        from lagsim.symbolic.bodies import offset

        return frame, offset(frame, [c.expr for c in point.offset], point.space)

    def position(self, end: End) -> tuple[se.Basic, ...]:
        """r of a spring's end: a mass, ``body.point``, the origin or a fixed point."""
        dim = len(self.spec.masses[0].position)
        if isinstance(end, tuple):
            return tuple(se.RealDouble(x) for x in end)
        if end == "origin":
            return tuple(se.Integer(0) for _ in range(dim))
        frame, d = self.offset(end)
        return tuple(r + x for r, x in zip(frame.position, d))

    def velocity(self, ref: str) -> tuple[se.Basic, ...]:
        """v_P of the material point at ``ref`` (:func:`lagsim.symbolic.bodies.point_velocity`)."""
        from lagsim.symbolic.bodies import point_velocity

        frame, d = self.offset(ref)
        return point_velocity(frame, d)

    def separation(self, ends: tuple[End, End]) -> tuple[se.Basic, ...]:
        return tuple(a - b for a, b in zip(self.position(ends[0]), self.position(ends[1])))

    def generalized_forces(self) -> se.DenseMatrix:
        """τ of the loads at points (F·∂v_P/∂q̇), the torques (M·∂ω/∂q̇) and the dampers of the
        springs (−∂R/∂q̇)."""
        if self.spec.loads or self.spec.torques or self.spec.spring_forces:
            from lagsim.symbolic.bodies import projected, spring_dissipation
        n = len(self.q)
        total = [se.Integer(0)] * n
        acting: list[list[se.Basic]] = []
        for ref, vector in self.spec.loads:
            if "." in ref:
                acting.append(projected([c.expr for c in vector], self.velocity(ref), self.qd))
        for torque in self.spec.torques:
            frame = self.frame(torque.body)
            omega = frame.omega_body if torque.body_axes else frame.omega
            acting.append(projected([c.expr for c in torque.moment], omega, self.qd))
        for spring in self.spec.spring_forces:
            if spring.damping is None:
                continue
            d = self.separation(spring.ends)
            rate = [time_derivative(x, self.q, self.qd, self.t) for x in d]
            R = spring_dissipation(spring.damping.expr, d, rate)
            acting.append([-se.diff(R, v) for v in self.qd])
        for q_force in acting:
            total = [a + b for a, b in zip(total, q_force)]
        return se.DenseMatrix(n, 1, total)

    def constraint(self, c: ConstraintSpec) -> Constraint:
        """The model's constraint of ``c``; a ``no_slip`` row is v_P·e_k, refused when it
        vanishes identically (the coordinates already hold it)."""
        if c.expression is not None:
            return make_constraint(c.name, c.kind, c.expression.expr, self.q, self.qd, self.t)
        expr = self.velocity(c.point)[c.direction]
        if vanishes(expr, self.spec, self.q, self.qd, self.t):
            axis = c.name.rpartition("_")[2]
            raise InputError(f"no_slip row '{c.name}' is identically zero: the velocity of "
                             f"{c.point} along {axis} vanishes for every motion the coordinates "
                             "allow; leave it out with 'directions' (e.g. directions: [x, y])",
                             c.location)
        return make_constraint(c.name, "velocity", expr, self.q, self.qd, self.t)


VANISH_STATES = 4
"""Seeded random states at which a ``no_slip`` row is evaluated to tell it is identically 0."""


def vanishes(expr: se.Basic, spec: SystemSpec, q: tuple[se.Symbol, ...],
             qd: tuple[se.Symbol, ...], t: se.Symbol) -> bool:
    """Whether ``expr`` (in q, q̇, t and the parameters) is 0 at :data:`VANISH_STATES` random
    states, each value within 1e-12 of the rounding scale of its evaluation
    (:func:`lagsim.symbolic.vanishing.magnitude`)."""
    import numpy as np

    from lagsim.symbolic.vanishing import magnitude

    if expr == 0:
        return True
    rng = np.random.default_rng(24)
    scale = magnitude(expr)
    params = {se.Symbol(k): v for k, v in spec.parameter_values.items()}
    for _ in range(VANISH_STATES):
        state = dict(params)
        state.update({s: float(rng.uniform(-1.5, 1.5)) for s in (*q, *qd, t)})
        value = abs(complex(expr.subs(state)))
        if value > 1e-12 * max(abs(complex(scale.subs(state))), 1e-300):
            return False
    return True


def body_frame(mass: MassSpec, q: tuple[se.Symbol, ...], qd: tuple[se.Symbol, ...],
               t: se.Symbol) -> Frame:
    """The :class:`lagsim.symbolic.bodies.Frame` of a mass: ω in space axes short for Euler
    angles (:func:`lagsim.symbolic.bodies.euler_space_rates`), R ω_b otherwise."""
    from lagsim.symbolic.bodies import Frame, euler_space_rates, planar_rotation

    r = tuple(c.expr for c in mass.position)
    v = tuple(time_derivative(x, q, qd, t) for x in r)
    if mass.orientation is not None:
        o = mass.orientation
        R = rotation_matrix(o)
        omega_b = body_angular_velocity(o, q, qd, t)
        if o.sequence:
            angles = tuple(a.expr for a in o.angles)
            rates = tuple(time_derivative(a, q, qd, t) for a in angles)
            omega = euler_space_rates(o.sequence, angles, rates, o.extrinsic)
        else:
            omega = [se.Add(*(R[i, j] * omega_b[j] for j in range(3))) for i in range(3)]
        return Frame(r, v, R, tuple(omega), tuple(omega_b))
    if mass.angle is not None:
        return Frame(r, v, planar_rotation(mass.angle.expr),
                     (time_derivative(mass.angle.expr, q, qd, t),))
    return Frame(r, v, None, ())


def _generalized_forces(spec: SystemSpec, q, qd, t, positions) -> se.DenseMatrix:
    """τ: forces by coordinate, loads projected Q_i = F·∂r/∂q_i (002 §23.3), minus ∂R/∂q̇."""
    n = len(q)
    tau = se.zeros(n, 1)
    index = {name: i for i, name in enumerate(spec.coordinates)}
    for name, expr in spec.forces:
        tau[index[name]] = tau[index[name]] + expr.expr
    where = dict(positions)
    for mass_name, vector in spec.loads:
        if "." in mass_name:
            continue
        r = where[mass_name]
        f = [c.expr for c in vector]
        for i in range(n):
            tau[i] = tau[i] + sum((fk * se.diff(rk, q[i]) for fk, rk in zip(f, r)), se.Integer(0))
    if spec.dissipation is not None:
        R = spec.dissipation.expr
        for i in range(n):
            tau[i] = tau[i] - se.diff(R, qd[i])
    return tau


def make_constraint(name: str, kind: str, expr: se.Basic, q, qd, t) -> Constraint:
    """The rows of one constraint; holonomic: a = φ_q, c = φ_t (003: differentiate twice)."""
    if kind == "holonomic":
        row = tuple(se.diff(expr, qi) for qi in q)
        offset = se.diff(expr, t)
    else:
        row = tuple(se.diff(expr, v) for v in qd)
        offset = expanded(expr.subs({v: 0 for v in qd}))
    w = sum((a * v for a, v in zip(row, qd)), offset)
    rhs = -time_derivative(w, q, qd, t)
    rhs = expanded(rhs) if _small(rhs) else rhs
    return Constraint(name, kind, expr, row, offset, w, rhs)


EXPAND_MAX_TERMS = 400
"""A constraint's right-hand side b is expanded (for readable output) only when its powers of sums
expand to at most this many terms together: ``(x + y + 1)**100`` alone has 5,151."""


def _small(expr: se.Basic) -> bool:
    """Whether ``expr`` is short (under 400 characters) and expands to a bounded size."""
    return len(str(expr)) < 400 and expands_small(expr)


def expands_small(expr: se.Basic) -> bool:
    """Whether the powers of sums in ``expr`` expand to at most :data:`EXPAND_MAX_TERMS` terms
    together (an upper bound on what expanding them adds)."""
    terms = 1
    for power in expr.atoms(se.Pow):
        base, exponent = power.args
        if base.is_Add and exponent.is_Integer and int(exponent) > 1:
            terms *= math.comb(int(exponent) + len(base.args) - 1, len(base.args) - 1)
            if terms > EXPAND_MAX_TERMS:
                return False
    return True


def check_regular(model: Model, spec: SystemSpec | None = None) -> None:
    """Refuse a model whose mass matrix has a zero row, naming the coordinate (and, given the
    spec, pointing at it in the file)."""
    singular = model.singular_coordinates()
    if singular:
        names = ", ".join(singular)
        where = None
        if spec is not None and singular[0] in spec.coordinates:
            where = spec.coordinate_locations[spec.coordinates.index(singular[0])]
        raise InputError(
            f"the mass matrix is singular: the velocity of {names} appears nowhere in the kinetic "
            f"energy; give {names} a mass or inertia, or remove it from 'coordinates'", where
        )


TIDY_MAX_OPS = 2000
"""Lagrangians up to this many operations are tidied before printing (:func:`tidy_model`)."""


def tidy_model(model: Model) -> Model:
    """The same model re-derived from a tidied L (expanded, sin² + cos² = 1, angle sums), with
    T and V tidied alike (issue 14: the JSON energy), for printing.

    Mass positions give T as sums of squares of sines and cosines; tidying the one scalar L
    before differentiating makes M, F and every printed form read like the seeds, at a cost
    linear in its terms (:func:`lagsim.symbolic.tidy.combine_trig`; trigsimp took 15 s on issue 8's
    messy3). Large Lagrangians are left as they are.
    """
    import sympy

    if not expands_small(model.lagrangian):
        return model
    from lagsim.symbolic.tidy import combine_trig, expand, tidy_lagrangian

    lagrangian = to_sympy(model.lagrangian)
    if sympy.count_ops(lagrangian) > TIDY_MAX_OPS:
        return model
    tidy = tidy_lagrangian(lagrangian)
    if sympy.count_ops(tidy) >= sympy.count_ops(expand(lagrangian)):
        return model
    tau = se.DenseMatrix(model.n, 1, [se.sympify(combine_trig(to_sympy(x))) for x in model.tau])
    kinetic, potential = (se.sympify(tidy_lagrangian(to_sympy(e)))
                          for e in (model.kinetic, model.potential))
    return assemble_model(
        name=model.name, description=model.description, coordinates=model.coordinates,
        lagrangian=se.sympify(tidy), tau=tau, constraints=model.constraints,
        parameters=model.parameters, mass_positions=model.mass_positions,
        point_positions=model.point_positions,
        kinetic=kinetic, potential=potential, rotations=model.rotations,
        inputs=model.inputs,
    )
