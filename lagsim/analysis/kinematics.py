"""Where the masses are along a trajectory, and which of them a rod ties together.

Used by ``lagsim plot --kind path`` and ``lagsim animate``: positions r_K(q, t) of the declared
masses evaluated at every sample of a CSV; a rod is drawn between two masses (or a mass and the
origin) whose distance the model keeps fixed: |r_i − r_j|² is a constant, or a constant plus a
multiple of one holonomic constraint φ (seed 001 §10.7, φ = x² + y² − r²).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import symengine as se
import sympy

from lagsim.errors import InputError, Location
from lagsim.numeric.compile import lambdify
from lagsim.output.io import Table
from lagsim.output.units import Quantities, unit_columns
from lagsim.records import record
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model, to_sympy

ORIGIN = "origin"


def mass_paths(model: Model, table: Table) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The (x, y) path of each declared mass, then of each body's declared point
    (``body.point``), over the table's samples (x–y projection in 3-d)."""
    return {name: (r[:, 0], r[:, 1]) for name, r in mass_points(model, table, 2).items()}


def mass_points(model: Model, table: Table, dims: int = 3) -> dict[str, np.ndarray]:
    """The position of each declared mass, then of each body's declared point (``body.point``),
    at the table's samples, an (N, ``dims``) array: its first ``dims`` components, a planar
    position padded with z = 0."""
    if not model.mass_positions:
        raise InputError(f"system '{model.name}' declares no 'masses', so there is no path to "
                         "draw; add masses with positions, or use --kind time")
    missing = [c for c in model.coordinates if not table.has(c)]
    if missing:
        raise InputError(f"the CSV has no column for coordinate(s) {', '.join(missing)} of "
                         f"system '{model.name}'; was it simulated from another system?",
                         None)
    subs = model.substitutions()
    places = (*model.mass_positions, *model.point_positions)
    exprs = [se.sympify(c).subs(subs) for _, r in places
             for c in (*r, se.Integer(0), se.Integer(0))[:dims]]
    values = _at_samples(model, table, exprs)
    return {name: values[:, dims * k:dims * (k + 1)] for k, (name, _) in enumerate(places)}


def _at_samples(model: Model, table: Table, exprs: list[se.Basic]) -> np.ndarray:
    """``exprs`` (in t, q and numbers) compiled and evaluated at every sample of ``table``: an
    (N, len(exprs)) array."""
    f = lambdify([model.t, *model.q], exprs)
    t = table.time
    q = np.column_stack([table.column(c) for c in model.coordinates])
    return np.array([f(np.concatenate(([ti], qi))) for ti, qi in zip(t, q)]).reshape(
        len(t), len(exprs))


def rods(model: Model, paths: Mapping[str, tuple[np.ndarray, ...]]
         ) -> list[tuple[str, str]]:
    """Pairs (origin or mass, mass) whose distance the model holds constant; ``paths`` are the
    masses' (x, y) paths, or their (x, y, z) paths for a picture in 3-D."""
    positions = {name: tuple(to_sympy(c) for c in r) for name, r in model.mass_positions}
    dim = len(next(iter(positions.values()))) if positions else 2
    positions_with_origin = {ORIGIN: (sympy.Integer(0),) * dim, **positions}
    on_manifold = _eliminations(model)
    phis = [to_sympy(c.expression).subs(on_manifold) for c in model.holonomic]
    coords = {to_sympy(s) for s in model.q}
    names = list(positions_with_origin)
    out = []
    for j, b in enumerate(names):
        for a in names[:j]:
            if not _nearly_constant(paths, a, b):
                continue
            d2 = sum((pa - pb) ** 2 for pa, pb in zip(positions_with_origin[a],
                                                     positions_with_origin[b]))
            if _fixed(d2.subs(on_manifold), phis, coords):
                out.append((a, b))
    return out


def _eliminations(model: Model) -> dict:
    """Coordinates that the constraints fix outright (β = 0, z = 0), to restrict |r_i − r_j|²."""
    fixed = {}
    for c in model.holonomic:
        phi = to_sympy(c.expression)
        if phi.is_Symbol:
            fixed[phi] = sympy.Integer(0)
    return fixed


def _nearly_constant(paths: Mapping, a: str, b: str) -> bool:
    pb = np.asarray(paths[b], dtype=float)
    pa = np.asarray(paths[a], dtype=float) if a != ORIGIN else np.zeros_like(pb)
    d = np.sqrt(np.sum((pb - pa) ** 2, axis=0))
    return bool(np.ptp(d) <= 1e-6 * max(float(np.max(d)), 1e-12))


FIXED_MAX_TERMS = 200
"""A squared distance that multiplies out past this many terms
(:func:`lagsim.symbolic.expansion.expansion_work`) is not simplified to see whether it is fixed:
SymPy's expansion and ``trigsimp`` of it would take minutes; no rod is then drawn for the pair."""


def _fixed(d2: sympy.Expr, phis: list[sympy.Expr], coords: set) -> bool:
    from lagsim.symbolic.expansion import expansion_work

    if expansion_work(se.sympify(d2), FIXED_MAX_TERMS) > FIXED_MAX_TERMS:
        return False
    simple = sympy.trigsimp(sympy.expand(d2))
    if not (simple.free_symbols & coords):
        return True
    for phi in phis:
        ratio = sympy.simplify(sympy.diff(simple, next(iter(simple.free_symbols & coords)))
                               / sympy.diff(phi, next(iter(simple.free_symbols & coords))))
        if ratio.free_symbols & coords:
            continue
        if not (sympy.simplify(simple - ratio * phi).free_symbols & coords):
            return True
    return False


def gravity_direction(spec: SystemSpec) -> tuple[float, float] | None:
    """The unit vector of the file's ``gravity:`` in the x–y plane of the pictures, or None when
    there is no gravity, it has no x–y part, or it depends on q or t (no one arrow shows it)."""
    if spec.gravity is None:
        return None
    values = {se.Symbol(k): v for k, v in spec.parameter_values.items()}
    parts = []
    for component in spec.gravity[:2]:
        value = se.sympify(component.expr).subs(values)
        if value.free_symbols:
            return None
        parts.append(float(value))
    norm = float(np.hypot(parts[0], parts[1]))
    if not np.isfinite(norm) or norm == 0.0:
        return None
    return parts[0] / norm, parts[1] / norm


def gravity_vector(spec: SystemSpec) -> tuple[float, float, float] | None:
    """The unit vector of the file's ``gravity:`` in space (a planar one padded with z = 0), for
    the 3-D pictures; None as :func:`gravity_direction` says."""
    if spec.gravity is None:
        return None
    values = {se.Symbol(k): v for k, v in spec.parameter_values.items()}
    parts = []
    for component in (*spec.gravity, *(None,) * 3)[:3]:
        value = se.Integer(0) if component is None else se.sympify(component.expr).subs(values)
        if value.free_symbols:
            return None
        parts.append(float(value))
    norm = float(np.linalg.norm(parts))
    if not np.isfinite(norm) or norm == 0.0:
        return None
    return parts[0] / norm, parts[1] / norm, parts[2] / norm


def has_bodies(spec: SystemSpec) -> bool:
    """Whether ``spec`` has a 3-D rigid body (a mass with an ``orientation``): its pictures are
    then drawn in 3-D."""
    return any(mass.orientation is not None for mass in spec.masses)


@record
class BodyFrames:
    """A 3-D body along a trajectory, as the pictures draw it.

    ``rotation`` is R(q, t) at each sample, an (N, 3, 3) array (body axes → space axes, columns
    the body axes; :func:`lagsim.symbolic.model.rotation_matrix`), of the normalized quaternion
    e/|e| for a quaternion body (off the constraint |e| = 1 by the run's drift, R(e) would scale
    as well as turn). ``principal`` holds the principal axes of the inertia in body components
    (columns; the body axes themselves for a diagonal inertia), ``moments`` the principal moments
    about the centre of mass, ``half_sides`` the half-sides (a₁, a₂, a₃) of the uniform box of the
    body's mass m with those moments: I₁ = m(a₂² + a₃²)/3 and cyclically, so
    a₁² = 3(I₂ + I₃ − I₁)/(2m) (Goldstein, *Classical Mechanics*, 3rd ed., §5.3, the moments of a
    rectangular parallelepiped)."""

    name: str
    rotation: np.ndarray
    principal: np.ndarray
    moments: tuple[float, float, float]
    half_sides: tuple[float, float, float]

    def axes(self) -> np.ndarray:
        """The principal axes in space scaled by the half-sides, at each sample: an (N, 3, 3)
        array whose [:, :, k] is a_k R V e_k."""
        return self.rotation @ self.principal * np.asarray(self.half_sides)


def body_frames(spec: SystemSpec, model: Model, table: Table) -> dict[str, BodyFrames]:
    """The :class:`BodyFrames` of each 3-D body of ``spec`` (``model`` gives the parameter
    values, possibly overridden) at the samples of ``table``."""
    from lagsim.symbolic.model import rotation_matrix
    from lagsim.symbolic.rotations import quaternion_matrix

    subs = model.substitutions()
    out = {}
    for mass in spec.masses:
        if mass.orientation is None or mass.body_inertia is None:
            continue
        orientation = mass.orientation
        if orientation.quaternion:
            parts = [se.sympify(e.expr).subs(subs) for e in orientation.quaternion]
            e = _at_samples(model, table, parts)
            norm = np.linalg.norm(e, axis=1, keepdims=True)
            if not np.all(norm > 0):
                row = int(np.argmin(norm[:, 0]))
                raise InputError(f"the quaternion of body '{mass.name}' is 0 at t = "
                                 f"{table.time[row]!r}, so it has no orientation to draw",
                                 mass.location)
            symbols = [se.Symbol(f"e{i}") for i in range(4)]
            matrix = quaternion_matrix(tuple(symbols))
            f = lambdify(symbols, [matrix[i, j] for i in range(3) for j in range(3)])
            unit = e / norm
            rotation = np.array([f(row) for row in unit]).reshape(len(unit), 3, 3)
        else:
            matrix = rotation_matrix(orientation)
            flat = [se.sympify(matrix[i, j]).subs(subs) for i in range(3) for j in range(3)]
            rotation = _at_samples(model, table, flat).reshape(-1, 3, 3)
        inertia = np.array([[float(se.sympify(c.expr).subs(subs)) for c in row]
                            for row in mass.body_inertia])
        m = float(se.sympify(mass.mass.expr).subs(subs))
        out[mass.name] = _frames(mass.name, rotation, inertia, m, mass.location)
    return out


def _frames(name: str, rotation: np.ndarray, inertia: np.ndarray, m: float,
            location: Location) -> BodyFrames:
    if not m > 0:
        raise InputError(f"body '{name}' has mass {m!r}: the box of equal inertia that the 3-D "
                         "pictures draw needs a positive mass", location)
    if np.count_nonzero(inertia - np.diag(np.diag(inertia))) == 0:
        moments, principal = np.diag(inertia).copy(), np.eye(3)
    else:
        moments, principal = np.linalg.eigh(0.5 * (inertia + inertia.T))
        principal = principal * np.sign(principal[np.argmax(np.abs(principal), axis=0),
                                                  np.arange(3)])
    a1, a2, a3 = (math.sqrt(max(1.5 * (moments[(k + 1) % 3] + moments[(k + 2) % 3]
                                      - moments[k]) / m, 0.0)) for k in range(3))
    i1, i2, i3 = (float(v) for v in moments)
    return BodyFrames(name, rotation, principal, (i1, i2, i3), (a1, a2, a3))


def coordinate_dimensions(model: Model) -> dict[str, str]:
    """``"angle"`` for a coordinate that enters the mass positions only inside sin, cos and tan,
    ``"length"`` for one that enters them elsewhere too; coordinates in no position are left
    out."""
    out: dict[str, str] = {}
    trig = (sympy.sin, sympy.cos, sympy.tan)
    for _, r in model.mass_positions:
        for component in r:
            expr = to_sympy(component)
            calls = expr.atoms(*trig)
            bare = expr.subs({call: sympy.Dummy() for call in calls}).free_symbols
            inside = set().union(*(call.free_symbols for call in calls)) if calls else set()
            for name in model.coordinates:
                symbol = sympy.Symbol(name)
                if symbol in bare:
                    out[name] = "length"
                elif symbol in inside and out.get(name) != "length":
                    out[name] = "angle"
    return out


def held_by_constraints(model: Model) -> tuple[str, ...]:
    """Coordinates that a holonomic constraint φ = q (times a constant) holds at zero (002
    §23.7's beta and z)."""
    out = []
    for c in model.holonomic:
        phi = to_sympy(c.expression)
        symbols = phi.free_symbols
        if len(symbols) == 1 and sympy.simplify(phi / next(iter(symbols))).is_number:
            name = str(next(iter(symbols)))
            if name in model.coordinates:
                out.append(name)
    return tuple(out)


def quantities(spec: SystemSpec, model: Model) -> Quantities:
    """What the CSV columns of ``spec`` measure, for :mod:`lagsim.plot`: the file's units,
    lengths and angles from the mass positions, and the coordinates constraints hold at 0."""
    units = dict(spec.units)
    dimensions = coordinate_dimensions(model)
    for name, unit in units.items():
        if unit in ("rad", "deg", "°", "degree", "degrees", "radian", "radians"):
            dimensions[name] = "angle"
    return Quantities(unit_columns(units, model.coordinates), dimensions,
                      held_by_constraints(model))


def _ends_of(model: Model) -> dict[str, tuple]:
    """Each mass's position expressions (sympy), and the origin's."""
    positions = {name: tuple(to_sympy(c) for c in r) for name, r in model.mass_positions}
    dim = len(next(iter(positions.values()))) if positions else 2
    return {**positions, ORIGIN: (sympy.Integer(0),) * dim}


def _spring_terms(potential: sympy.Expr) -> list[sympy.Expr]:
    """The S of each term c·(√S − l0)² of ``potential`` (c and l0 free of S's symbols)."""
    out = []
    for term in sympy.Add.make_args(potential):
        for factor in sympy.Mul.make_args(term):
            if not (factor.is_Pow and factor.exp == 2 and factor.base.is_Add):
                continue
            roots = [a for a in factor.base.args if a.is_Pow and a.exp == sympy.Rational(1, 2)]
            if len(roots) == 1:
                S = roots[0].base
                rest = factor.base - roots[0]
                if not (rest.free_symbols & S.free_symbols):
                    out.append(S)
    return out


def _tidy(point: np.ndarray) -> tuple[float, float]:
    """A least-squares point without its round-off (1e-17 → 0, 1.0000000000000004 → 1): ten
    decimals of its size."""
    digits = 10 - math.floor(math.log10(max(float(np.abs(point[:2]).max()), 1e-300)))
    return tuple(round(float(v), digits) + 0.0 for v in point[:2])  # type: ignore[return-value]


def springs(spec: SystemSpec, model: Model, samples: int = 6
            ) -> list[tuple[str | tuple[float, float], str | tuple[float, float]]]:
    """The springs ``lagsim animate`` draws: the file's ``springs:`` (pairs, then the ends of
    those with a stiffness, a fixed end in its x–y projection), then each potential term
    k/2·(|r_a − r_b| − l0)² between two masses, a mass and the origin, or a mass and a fixed
    point P (seed 002 §23.9's spring to B). S under the root is compared with |r_a − r_b|² at
    seeded random states; for a fixed point, S − |r_a|² = −2 P·r_a + |P|² is solved for P by
    least squares and checked."""
    found: list = list(spec.springs)
    for spring in spec.spring_forces:
        pair = tuple(end if isinstance(end, str) else (end[0], end[1]) for end in spring.ends)
        if pair not in found:
            found.append(pair)
    if spec.potential is None or not model.mass_positions:
        return found
    potential = to_sympy(se.sympify(spec.potential.expr).subs(model.substitutions()))
    terms = _spring_terms(potential)
    if not terms:
        return found
    ends = _ends_of(model)
    values = {sympy.Symbol(k): v for k, v in model.parameters.items()}
    symbols = [sympy.Symbol("t"), *(sympy.Symbol(q) for q in model.coordinates)]
    rng = np.random.default_rng(14)
    states = rng.uniform(-1.0, 1.0, (samples, len(symbols)))

    def at(expr: sympy.Expr) -> np.ndarray:
        f = sympy.lambdify(symbols, sympy.sympify(expr).subs(values), "numpy")
        return np.array([float(f(*s)) for s in states])

    points = {name: np.column_stack([at(c) for c in r]) for name, r in ends.items()}
    for S in terms:
        s_values = at(S)
        match: tuple[str, str | tuple[float, float]] | None = None
        names = list(points)
        for j, b in enumerate(names):
            for a in names[:j]:
                d2 = np.sum((points[a] - points[b]) ** 2, axis=1)
                if np.allclose(s_values, d2, rtol=1e-9, atol=1e-12):
                    match = (b, a) if a == ORIGIN else (a, b)
        if match is None:
            for name in names:
                if name == ORIGIN:
                    continue
                r = points[name]
                lhs = s_values - np.sum(r**2, axis=1)
                design = np.column_stack([-2.0 * r, np.ones(len(r))])
                solution, *_ = np.linalg.lstsq(design, lhs, rcond=None)
                p, c = solution[:-1], solution[-1]
                if (np.allclose(design @ solution, lhs, rtol=1e-9, atol=1e-9)
                        and math.isclose(c, float(p @ p), rel_tol=1e-9, abs_tol=1e-9)):
                    match = (name, _tidy(p))
                    break
        if match is not None and match not in found:
            found.append(match)
    return found
