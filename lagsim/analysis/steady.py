"""Linearization about a steady motion, a relative equilibrium (issue 24): the sleeping top, the
top's steady precession, the coin or the bicycle rolling upright at speed v.

A steady motion turns some coordinates at constant rates while the others stay constant. It is
only possible when every coordinate that turns is *ignorable*: absent from M, F, the constraint
rows A, their right-hand sides b, the holonomic φ and the velocity offsets c (then the equations
do not change as it turns; Routh's steady motions, Goldstein, *Classical Mechanics*, 3rd ed.,
§5.7 and §8.3; Meijaard et al. 2007, Proc. R. Soc. A 463, §4, for the bicycle). A steady motion
(q*, q̇*) is a solution with q̈ = 0 of the index-reduced equations (seed
``001_80d65b968ce3cb18.txt`` §10.7, seed ``003_88d23709419132a0.txt`` for the constraints
differentiated to the level of accelerations)

    [M  Aᵀ] [ q̈ ]   [F(q, q̇)]
    [A  0 ] [−λ ] = [b(q, q̇)],          φ(q) = 0,   w = A q̇ + c = 0,

so it solves F + Aᵀλ = 0, b = 0, φ = 0, w = 0 with λ its multipliers. What the user does not
give is solved for by Newton's method (least-squares steps, from the ``initial`` values and rates
0: the values of the coordinates not given, the rates of the ignorable coordinates not given,
which the constraints or the equations fix, such as the top's precession rate or the wheels'
rates of a bicycle at speed v), and the result is checked: max |q̈| and the constraints' residuals
must be at most :data:`STEADY_TOLERANCE`.

The linear equations are exact to rounding: with S = [M Aᵀ; A 0], r = [F; b] and z = S⁻¹r,

    dz/dx = S⁻¹ (∂r/∂x − (∂S/∂x) z)

for every state variable x, the derivatives ∂r/∂x and ∂S/∂x symbolic (symengine), compiled once,
the solves numerical (M is never inverted symbolically). The state is ξ = (q_s, q̇): the positions
of the non-ignorable coordinates and every rate; the positions of the ignorable coordinates drop
out (nothing depends on them). ξ̇ = L ξ is restricted to the tangent space of the constraint
manifold, Φ δq_s = 0 and A δq̇ + (∂w/∂q_s) δq_s = 0, whose basis N comes from coordinate
partitioning (Wehage and Haug 1982, :func:`lagsim.analysis.linearize.null_space`): ξ = N η with
η the independent components, and η̇ = L[η rows] N η is the reduced state matrix. Its eigenvalues
decide stability. Directions that change nothing (a zero column: the heading of a coin rolling
straight) or that nothing changes (a zero row) give exact zero eigenvalues and are set aside
before the eigenvalues are computed, so that a zero eigenvalue that belongs to a Jordan block
(the heading driven by a steady turn rate) does not scatter by √ε.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.analysis.linearize import SINGULAR_RCOND, Mode, null_space
from lagsim.analysis.rest import (
    autonomous_model,
    parse_point,
    snap,
    time_sources,
    value_text,
)
from lagsim.errors import InputError, Location
from lagsim.numeric.compile import lambdify
from lagsim.records import record
from lagsim.spec.expressions import diff
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.forms.linear import SteadyLinearization
from lagsim.symbolic.model import Model

STEADY_TOLERANCE = 1e-8
"""A steady motion is a relative equilibrium when max |q̈| (and max |φ|, |A q̇ + c|) is at most
this, in the file's units."""

NEWTON_ITERATIONS = 60

ZERO = 1e-12
"""An entry of the reduced state matrix below this fraction of its largest is 0 (rounding), for
setting aside the exact zero eigenvalues."""

ROUNDING = 1e-12
"""A real or imaginary part of an eigenvalue below this fraction of the largest |s| is rounding
(of parts that are 0: the real part of an undamped pair, ~1e-16 of |s| here) and printed as 0."""

ROOT_TOLERANCE = 1e-9
"""An eigenvalue (or its real part) below this fraction of the largest |s| counts as 0."""


def parse_steady(text: str, spec: SystemSpec, coordinates: Sequence[str],
                 option: str = "--steady") -> dict[str, float]:
    """``"phi_dot=1.2, psi_dot=30, theta=0.5"`` as name → value (the syntax of ``--at``, with
    rates ``<coordinate>_dot`` as well as coordinates)."""
    return parse_point(text, spec, naming.state(coordinates), option,
                       ("coordinate or velocity", "coordinates and velocities"))


class SteadyEquations:
    """M, F, A, b, φ, w = A q̇ + c of an autonomous model and their derivatives by every
    position and rate, compiled into one function of (q, q̇, parameters)
    (:func:`lagsim.numeric.compile.lambdify`) and kept by the model's structure key, so that a
    sweep of a parameter (a bicycle's speed v) compiles once. ``shape`` are the non-ignorable
    coordinates, whose positions are state variables."""

    def __init__(self, model: Model, shape: Sequence[int]) -> None:
        self.model = model
        self.n, self.m, self.shape = model.n, model.m, tuple(shape)
        self.holonomic = tuple(k for k, c in enumerate(model.constraints)
                               if c.kind == "holonomic")
        self._f, self._layout = _compiled(model, self.shape)
        self._params = np.array([model.parameters[str(p)] for p in model.param_symbols],
                                dtype=float)

    def evaluate(self, q: np.ndarray, qd: np.ndarray) -> dict[str, np.ndarray]:
        """Every group at (q, q̇): M, F, A, b, φ, w, c and their derivatives by the positions
        of ``shape`` (``dM``, ``dA``, ``dFq``, ``dbq``, ``dwq``) and by every rate."""
        with np.errstate(all="ignore"):
            out = np.asarray(self._f(np.concatenate([q, qd, self._params])),
                             dtype=float).reshape(-1)
        parts, k = {}, 0
        for name, shape in self._layout:
            size = int(np.prod(shape))
            parts[name] = out[k:k + size].reshape(shape)
            k += size
        return parts

    def augmented(self, parts: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """S = [M Aᵀ; A 0] and r = [F; b] (seed 001 §10.7; 003 for b)."""
        n, m = self.n, self.m
        S = np.zeros((n + m, n + m))
        S[:n, :n] = parts["M"]
        S[:n, n:] = parts["A"].T
        S[n:, :n] = parts["A"]
        return S, np.concatenate([parts["F"], parts["b"]])

    def accelerations(self, parts: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(q̈, λ) of the augmented system (least squares: redundant constraints leave q̈
        unique)."""
        S, r = self.augmented(parts)
        z, *_ = np.linalg.lstsq(S, r, rcond=None)
        return z[:self.n], -z[self.n:]

    def steady_residual(self, parts: Mapping[str, np.ndarray], lam: np.ndarray) -> np.ndarray:
        """[F + Aᵀλ; φ; w; b]: zero at a relative equilibrium with multipliers λ."""
        return np.concatenate([parts["F"] + parts["A"].T @ lam, parts["phi"], parts["w"],
                               parts["b"]])

    def steady_jacobian(self, parts: Mapping[str, np.ndarray], lam: np.ndarray) -> np.ndarray:
        """∂[F + Aᵀλ; φ; w; b]/∂(q_s, q̇, λ)."""
        n, m, ns = self.n, self.m, len(self.shape)
        A, mh = parts["A"], len(self.holonomic)
        J = np.zeros((n + mh + 2 * m, ns + n + m))
        J[:n, :ns] = parts["dFq"] + np.einsum("k,skj->js", lam, parts["dA"])
        J[:n, ns:ns + n] = parts["dFv"]
        J[:n, ns + n:] = A.T
        J[n:n + mh, :ns] = A[list(self.holonomic)][:, list(self.shape)]
        J[n + mh:n + mh + m, :ns] = parts["dwq"]
        J[n + mh:n + mh + m, ns:ns + n] = A
        J[n + mh + m:, :ns] = parts["dbq"]
        J[n + mh + m:, ns:ns + n] = parts["dbv"]
        return J

    def state_matrix(self, parts: Mapping[str, np.ndarray]) -> np.ndarray:
        """L of ξ̇ = L ξ, ξ = (δq_s, δq̇): dz/dx = S⁻¹(∂r/∂x − (∂S/∂x) z) for x in (q_s, q̇)
        (module docstring)."""
        n, m, ns = self.n, self.m, len(self.shape)
        S, r = self.augmented(parts)
        z, *_ = np.linalg.lstsq(S, r, rcond=None)
        rhs = np.zeros((n + m, ns + n))
        for j in range(ns):
            dS = np.zeros((n + m, n + m))
            dS[:n, :n] = parts["dM"][j]
            dS[:n, n:] = parts["dA"][j].T
            dS[n:, :n] = parts["dA"][j]
            rhs[:n, j] = parts["dFq"][:, j]
            rhs[n:, j] = parts["dbq"][:, j]
            rhs[:, j] -= dS @ z
        rhs[:n, ns:] = parts["dFv"]
        rhs[n:, ns:] = parts["dbv"]
        dz, *_ = np.linalg.lstsq(S, rhs, rcond=None)
        L = np.zeros((ns + n, ns + n))
        for k, i in enumerate(self.shape):
            L[k, ns + i] = 1.0
        L[ns:, :] = dz[:n]
        return L

    def tangent(self, parts: Mapping[str, np.ndarray]) -> np.ndarray:
        """C with C ξ = 0 on the tangent space: [Φ_s 0; ∂w/∂q_s A]."""
        n, m, ns = self.n, self.m, len(self.shape)
        mh = len(self.holonomic)
        C = np.zeros((mh + m, ns + n))
        C[:mh, :ns] = parts["A"][list(self.holonomic)][:, list(self.shape)]
        C[mh:, :ns] = parts["dwq"]
        C[mh:, ns:] = parts["A"]
        return C


MEMO_SIZE = 8
"""Compiled steady-motion equations kept, by structure key and non-ignorable coordinates."""

_MEMO: dict[tuple[str, tuple[int, ...] | None], tuple[Any, list[tuple[str, tuple[int, ...]]]]]
_MEMO = {}


def _compiled(model: Model, shape: Sequence[int] | None
              ) -> tuple[Any, list[tuple[str, tuple[int, ...]]]]:
    """:func:`_compile` of ``model``, kept by its structure key (a model without one is
    compiled each time)."""
    if model.structure_key is None:
        return _compile(model, shape)
    key = (model.structure_key, None if shape is None else tuple(shape))
    if key not in _MEMO:
        _MEMO[key] = _compile(model, shape)
        while len(_MEMO) > MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
    return _MEMO[key]


def _compile(model: Model, shape: Sequence[int] | None
             ) -> tuple[Any, list[tuple[str, tuple[int, ...]]]]:
    """The compiled function of (q, q̇, parameters) and the layout of its output: M, F, A, b, φ,
    w = A q̇ + c, c, and (unless ``shape`` is None) their derivatives by the positions of the
    ``shape`` coordinates and by every rate, symbolic (symengine)."""
    n, m = model.n, model.m
    qd = model.qd
    qs = [model.q[i] for i in shape] if shape is not None else []
    ns = len(qs)
    M = [se.sympify(model.mass_matrix[i, j]) for i in range(n) for j in range(n)]
    F = [se.sympify(model.forcing[i]) for i in range(n)]
    A = [se.sympify(model.A[k, i]) for k in range(m) for i in range(n)]
    b = [se.sympify(model.b[k]) for k in range(m)]
    phi = [se.sympify(c.expression) for c in model.constraints if c.kind == "holonomic"]
    w = [se.sympify(c.velocity_form) for c in model.constraints]
    offsets = [se.sympify(c.offset) for c in model.constraints]
    groups: list[tuple[str, tuple[int, ...], list[se.Basic]]] = [
        ("M", (n, n), M), ("F", (n,), F), ("A", (m, n), A), ("b", (m,), b),
        ("phi", (len(phi),), phi), ("w", (m,), w), ("c", (m,), offsets)]
    if shape is not None:
        groups += [
            ("dM", (ns, n, n), [diff(e, x) for x in qs for e in M]),
            ("dA", (ns, m, n), [diff(e, x) for x in qs for e in A]),
            ("dFq", (n, ns), [diff(e, x) for e in F for x in qs]),
            ("dFv", (n, n), [diff(e, v) for e in F for v in qd]),
            ("dbq", (m, ns), [diff(e, x) for e in b for x in qs]),
            ("dbv", (m, n), [diff(e, v) for e in b for v in qd]),
            ("dwq", (m, ns), [diff(e, x) for e in w for x in qs]),
        ]
    layout = [(name, shape_) for name, shape_, _ in groups]
    f = lambdify([*model.q, *qd, *model.param_symbols], [e for _, _, es in groups for e in es])
    return f, layout


IGNORABLE_POINTS = 4
"""Pairs of states at which a coordinate's absence is tested."""
IGNORABLE_TOLERANCE = 1e-9
"""A change below this fraction of the size of the values is rounding (of an identity such as
sin² + cos² = 1)."""
SEED = 20261203


def ignorable_coordinates(model: Model, q0: np.ndarray, qd0: np.ndarray) -> tuple[int, ...]:
    """The coordinates absent from M, F, A, b, the holonomic φ and the velocity offsets c at the
    parameters' values: these do not change when the coordinate alone moves (by 0.5 to 1.5),
    from (q0, q̇0) and from seeded random states near it, beyond :data:`IGNORABLE_TOLERANCE` of
    their size. This is :mod:`lagsim.symbolic.dependence`'s numerical identity test
    (J. T. Schwartz, J. ACM 27 (1980) 701–717) in double precision on the compiled expressions,
    since a bicycle's mass matrix is too large for its 100-bit evaluation; it sees through
    sin² + cos² = 1 (a symmetric wheel's angle)."""
    f, layout = _compiled(model, None)
    params = np.array([model.parameters[str(p)] for p in model.param_symbols], dtype=float)
    sizes = {name: int(np.prod(shape)) for name, shape in layout}
    offsets = np.cumsum([0] + [sizes[name] for name, _ in layout])
    keep = np.concatenate([np.arange(offsets[k], offsets[k + 1])
                           for k, (name, _) in enumerate(layout) if name != "w"])
    rng = np.random.default_rng(SEED)
    n = model.n

    def values(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = np.asarray(f(np.concatenate([q, qd, params])), dtype=float).reshape(-1)
        return out[keep]

    varies = np.zeros(n, dtype=bool)
    tested = np.zeros(n, dtype=int)
    for k in range(IGNORABLE_POINTS):
        q = q0 + (rng.uniform(-0.5, 0.5, n) if k else 0.0)
        qd = qd0 + (rng.uniform(-0.5, 0.5, n) if k else 0.0)
        here = values(q, qd)
        if not np.all(np.isfinite(here)):
            continue
        for i in range(n):
            moved = q.copy()
            moved[i] += rng.uniform(0.5, 1.5)
            there = values(moved, qd)
            if not np.all(np.isfinite(there)):
                continue
            tested[i] += 1
            scale = max(1.0, float(np.max(np.abs(here))), float(np.max(np.abs(there))))
            if np.any(np.abs(there - here) > IGNORABLE_TOLERANCE * scale):
                varies[i] = True
    return tuple(i for i in range(n) if tested[i] and not varies[i])


@record
class SteadyMotion:
    """A relative equilibrium (q, q̇, λ) of ``eqs`` with max |q̈| ``residual``; ``given``,
    ``solved`` and ``free`` name the entries (coordinates and ``_dot`` rates) given, solved for,
    and left undetermined by the equations (taken where Newton's method from the initial values
    ended)."""

    eqs: SteadyEquations
    q: np.ndarray
    qd: np.ndarray
    lam: np.ndarray
    residual: float
    given: tuple[str, ...]
    solved: tuple[str, ...]
    free: tuple[str, ...]
    notes: tuple[str, ...]


def _refuse_time(model: Model, spec: SystemSpec | None) -> Model:
    """The autonomous model (t written but cancelling is set to 0), or an error naming where t
    appears: a steady motion of an explicitly time-dependent system is not defined here."""
    sources, _ = time_sources(model)
    if sources:
        raise InputError(f"system '{model.name}' is explicitly time-dependent (t appears in "
                         f"{', '.join(sources)}): steady motions (relative equilibria) are "
                         "solutions of equations that do not change with time, so there is "
                         "none to linearize about; `lagsim simulate` shows the motion",
                         spec.location if spec is not None else None)
    return autonomous_model(model, spec).model


def steady_motion(model: Model, given: Mapping[str, float],
                  where: Mapping[str, Location], spec: SystemSpec | None = None,
                  start: Mapping[str, float] | None = None) -> SteadyMotion:
    """The relative equilibrium with the entries ``given`` (coordinate → value, ``c_dot`` →
    rate; ``where`` locates each for messages) and the rest solved for (module docstring),
    Newton's method starting from ``start`` (the initial values) and rates 0."""
    model = _refuse_time(model, spec)
    names, n, m = model.coordinates, model.n, model.m
    start = start or {}
    q0 = np.array([given.get(c, start.get(c, 0.0)) for c in names], dtype=float)
    qd0 = np.array([given.get(naming.velocity(c), 0.0) for c in names], dtype=float)
    ignorable = ignorable_coordinates(model, q0, qd0)
    for name, value in given.items():
        coordinate = naming.rate_of(name) if naming.is_velocity(name) else None
        if coordinate is None or value == 0.0:
            continue
        if names.index(coordinate) not in ignorable:
            raise InputError(f"'{name}' = {value:g} turns {coordinate}, but {coordinate} is not "
                             "ignorable (it appears in the mass matrix, the forces or the "
                             "constraints), so it cannot turn at a constant rate while the "
                             "equations stay the same: a steady motion turns only ignorable "
                             "coordinates", where.get(name))
    shape = tuple(i for i in range(n) if i not in ignorable)
    eqs = SteadyEquations(model, shape)
    q, qd = q0, qd0
    unknown_q = [k for k, i in enumerate(shape) if names[i] not in given]
    unknown_v = [i for i in ignorable if naming.velocity(names[i]) not in given]
    ns = len(shape)
    columns = ([k for k in unknown_q] + [ns + i for i in unknown_v]
               + list(range(ns + n, ns + n + m)))
    lam = np.zeros(m)
    parts = eqs.evaluate(q, qd)
    residual = eqs.steady_residual(parts, lam)
    for _ in range(NEWTON_ITERATIONS):
        J = eqs.steady_jacobian(parts, lam)[:, columns]
        step, *_ = np.linalg.lstsq(J, -residual, rcond=None)
        norm = float(np.linalg.norm(residual))
        scale = 1.0
        while scale >= 2.0 ** -12:
            tq, tv, tl = _moved(q, qd, lam, shape, unknown_q, unknown_v, scale * step)
            tparts = eqs.evaluate(tq, tv)
            tres = eqs.steady_residual(tparts, tl)
            tnorm = float(np.linalg.norm(tres))
            if math.isfinite(tnorm) and tnorm <= (1.0 - 1e-4 * scale) * norm:
                break
            scale *= 0.5
        else:
            break
        q, qd, lam, parts, residual = tq, tv, tl, tparts, tres
        if float(np.max(np.abs(scale * step), initial=0.0)) <= 1e-15 * (
                1.0 + float(np.max(np.abs(np.concatenate([q, qd])), initial=0.0))):
            break
    if _singular(parts):
        shown = ", ".join(f"{c}={v:.6g}" for c, v in zip(names, q))
        raise InputError(f"the mass matrix is singular at the steady motion ({shown}), on the "
                         "motions the constraints allow: a singular point of the coordinates "
                         "(such as θ = 0 of ZXZ Euler angles); linearize in other coordinates "
                         "(a Tait–Bryan sequence such as XYZ is regular upright)",
                         _blame(where))
    qdd, lam_star = eqs.accelerations(parts)
    checks = [(f"{naming.acceleration(c)}", float(x)) for c, x in zip(names, qdd)]
    checks += [(f"constraint '{model.constraints[k].name}'", float(x))
               for k, x in zip(eqs.holonomic, parts["phi"])]
    checks += [(f"the velocity form of constraint '{c.name}'", float(x))
               for c, x in zip(model.constraints, parts["w"])]
    worst = max(checks, key=lambda item: abs(item[1]) if math.isfinite(item[1]) else math.inf,
                default=("", 0.0))
    if not abs(worst[1]) <= STEADY_TOLERANCE:
        shown = ", ".join(f"{k}={v:g}" for k, v in given.items())
        raise InputError(f"the steady motion {shown or '(nothing given)'} is not a relative "
                         f"equilibrium: the largest residual is {worst[0]} = {worst[1]:.3g} "
                         f"(tolerance {STEADY_TOLERANCE:g}); give the coordinates' values that "
                         "keep it steady, or leave them out to have them solved for",
                         _blame(where))
    J = eqs.steady_jacobian(parts, lam_star)[:, columns]
    labels = ([names[shape[k]] for k in unknown_q]
              + [naming.velocity(names[i]) for i in unknown_v])
    free = _free(J, len(labels), labels)
    notes = []
    if free:
        notes.append(f"the steady-motion equations leave {', '.join(free)} free (a family of "
                     "steady motions): taken where Newton's method from the initial values "
                     "(rates from 0) ended")
    return SteadyMotion(eqs, q, qd, lam_star, float(np.max(np.abs(qdd), initial=0.0)),
                        tuple(given), tuple(labels), tuple(free), tuple(notes))


def _singular(parts: Mapping[str, np.ndarray]) -> bool:
    """Whether M is singular on the null space of the constraint rows A (then q̈ is not
    determined: the augmented system has no unique solution)."""
    M, A = parts["M"], parts["A"]
    N, _ = null_space(A, M.shape[0])
    Mr = N.T @ M @ N
    return bool(Mr.size) and (not np.all(np.isfinite(Mr))
                              or np.linalg.cond(Mr) > 1.0 / SINGULAR_RCOND)


def _blame(where: Mapping[str, Location]) -> Location | None:
    """Where to point for a steady motion as a whole: the command line if it gave an entry,
    else the file's first entry."""
    places = list(where.values())
    given = [p for p in places if p.line is None]
    chosen = given or places
    return chosen[0] if chosen else None


def _moved(q: np.ndarray, qd: np.ndarray, lam: np.ndarray, shape: Sequence[int],
           unknown_q: Sequence[int], unknown_v: Sequence[int], step: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, qd = q.copy(), qd.copy()
    a, b = len(unknown_q), len(unknown_v)
    for k, d in zip(unknown_q, step[:a]):
        q[shape[k]] += d
    for i, d in zip(unknown_v, step[a:a + b]):
        qd[i] += d
    return q, qd, lam + step[a + b:]


def _free(J: np.ndarray, count: int, labels: Sequence[str]) -> list[str]:
    """The unknowns (of the first ``count`` columns of ``J``) that move along its null space."""
    if not count:
        return []
    _, sv, vt = np.linalg.svd(J) if J.size else (None, np.zeros(0), np.eye(J.shape[1]))
    rank = int(np.sum(sv > 1e-9 * max(float(sv.max(initial=0.0)), 1e-300)))
    null = vt[rank:, :count]
    return [labels[k] for k in range(count) if np.any(np.abs(null[:, k]) > 1e-6)]


@record
class Reduced:
    """The linearization about a steady motion: the full map ``L`` on ξ (``state`` names its
    entries), the tangent basis ``N`` (ξ = N η, η the ``independent`` entries), the reduced
    state matrix ``R`` (η̇ = R η), its eigenvalues (sorted by real part descending, then
    imaginary part descending; parts below :data:`ROUNDING` of the largest |s| are 0), and the
    entries of η set aside with an exact zero eigenvalue
    (``zeros``: label and why)."""

    state: tuple[str, ...]
    L: np.ndarray
    N: np.ndarray
    independent: tuple[str, ...]
    R: np.ndarray
    eigenvalues: tuple[complex, ...]
    zeros: tuple[tuple[str, str], ...]
    roots: tuple[complex, ...]
    """The eigenvalues of the part of R left after the exact zeros were set aside."""


def reduce(motion: SteadyMotion) -> Reduced:
    """The reduced linear system about ``motion`` and its eigenvalues (module docstring)."""
    eqs = motion.eqs
    names = eqs.model.coordinates
    state = (*(names[i] for i in eqs.shape), *naming.velocities(names))
    parts = eqs.evaluate(motion.q, motion.qd)
    L = eqs.state_matrix(parts)
    N, independent = null_space(eqs.tangent(parts), len(state))
    R = L[independent] @ N
    keep = list(range(R.shape[0]))
    zeros: list[tuple[str, str]] = []
    big = max(float(np.max(np.abs(R), initial=0.0)), 1e-300)
    changed = True
    while changed and keep:
        changed = False
        sub = R[np.ix_(keep, keep)]
        for k, i in enumerate(keep):
            label = state[independent[i]]
            if np.all(np.abs(sub[:, k]) <= ZERO * big):
                zeros.append((label, f"δ{label} changes nothing else"))
            elif np.all(np.abs(sub[k, :]) <= ZERO * big):
                zeros.append((label, f"δ{label} stays constant"))
            else:
                continue
            keep.remove(i)
            changed = True
            break
    raw = np.linalg.eigvals(R[np.ix_(keep, keep)]) if keep else np.zeros(0)
    floor = ROUNDING * float(np.max(np.abs(raw), initial=0.0))
    roots = tuple(complex(s.real if abs(s.real) > floor else 0.0,
                          s.imag if abs(s.imag) > floor else 0.0) for s in raw)
    values = sorted([*roots, *(0j for _ in zeros)], key=lambda s: (-s.real, -s.imag))
    return Reduced(state=state, L=L, N=N, independent=tuple(state[i] for i in independent),
                   R=R, eigenvalues=tuple(values), zeros=tuple(zeros), roots=roots)


def _shape(reduced: Reduced, s: complex, labels_index: Sequence[int]) -> tuple[Any, ...]:
    """The eigenvector of R for ``s`` (the right singular vector of R − sI with the smallest
    singular value) as δξ = N η on the entries ``labels_index`` of ξ, largest component 1."""
    k = reduced.R.shape[0]
    _, _, vt = np.linalg.svd(reduced.R - s * np.eye(k))
    v = reduced.N @ np.conj(vt[-1])
    v = v[list(labels_index)]
    big = v[int(np.argmax(np.abs(v)))] if v.size else 0
    if big == 0:
        return tuple(float(x) for x in np.real(v))
    v = v / big
    v = np.where(np.abs(v) < 1e-13, 0.0, v)
    if np.all(np.abs(np.imag(v)) <= 1e-12):
        return tuple(float(x) for x in np.real(v))
    return tuple(complex(x) for x in v)


def zero_directions(reduced: Reduced, labels: Sequence[str], labels_index: Sequence[int]
                    ) -> list[dict[str, float]]:
    """An orthonormal basis of the null space of the reduced state matrix as δξ on ``labels``
    (the directions of the zero eigenvalues that have eigenvectors: a conserved momentum's
    rate, a family of steady motions, a position that changes nothing), components below 1e-12
    printed as 0."""
    basis = _null_basis(reduced.R)
    out = []
    for v in basis.T:
        x = (reduced.N @ v)[list(labels_index)]
        size = float(np.max(np.abs(x), initial=0.0))
        if size == 0.0:
            continue
        x = x / x[int(np.argmax(np.abs(x)))]
        out.append({name: (float(c) if abs(c) > 1e-12 else 0.0) for name, c in zip(labels, x)})
    return out


def _null_basis(matrix: np.ndarray) -> np.ndarray:
    if not matrix.size:
        return np.zeros((matrix.shape[1], 0))
    _, sv, vt = np.linalg.svd(matrix)
    rank = int(np.sum(sv > ROOT_TOLERANCE * max(float(sv.max(initial=0.0)), 1e-300)))
    return vt[rank:].T


def steady_modes_of(reduced: Reduced, labels_index: Sequence[int]
                    ) -> tuple[tuple[Mode, ...], str, int]:
    """(modes, stability, number of zero eigenvalues): a complex pair s, s̄ is one mode
    (ω_n = |s|, ω_d = Im s, ζ = −Re s/|s|), a non-zero real root one mode (unstable or
    decaying); zero eigenvalues are no mode (the notes say where they come from)."""
    roots = reduced.eigenvalues
    scale = max((abs(s) for s in roots), default=0.0)
    tol = ROOT_TOLERANCE * max(scale, 1e-300)
    modes = []
    zero = 0
    for s in roots:
        if abs(s) <= tol:
            zero += 1
            continue
        if s.imag < -tol:
            continue
        if s.imag > tol:
            re = s.real if abs(s.real) > tol else 0.0
            kind = "unstable" if re > 0 else "oscillatory" if re == 0 else "damped"
            modes.append(Mode(eigenvalues=(s,), omega_squared=None, frequency=abs(s),
                              damped_frequency=s.imag, damping_ratio=-s.real / abs(s),
                              kind=kind, shape=_shape(reduced, s, labels_index)))
        else:
            r = complex(s.real, 0.0)
            modes.append(Mode(eigenvalues=(r,), omega_squared=None, frequency=0.0,
                              damped_frequency=0.0, damping_ratio=None,
                              kind="unstable" if s.real > 0 else "decaying",
                              shape=_shape(reduced, r, labels_index)))
    modes.sort(key=lambda mode: (mode.frequency, mode.eigenvalue.real))
    nonzero = [s for s in roots if abs(s) > tol]
    aside = (f"; {zero} zero eigenvalue{'s' * (zero != 1)} (conserved quantities, ignorable "
             "directions and the family of steady motions: the linearization does not "
             "decide along them)") if zero else ""
    if not roots:
        stability = "stable (no degree of freedom)"
    elif any(s.real > tol for s in nonzero):
        stability = "unstable"
    elif nonzero and all(s.real < -tol for s in nonzero):
        stability = "asymptotically stable" + aside
    elif nonzero:
        stability = "linearly stable (undamped modes: nonlinear stability not decided)" + aside
    else:
        stability = "neutral (all eigenvalues zero: the linearization does not decide)"
    return tuple(modes), stability, zero


@record
class SteadyModesReport:
    """The modes of one system about one steady motion."""

    system: str
    coordinates: tuple[str, ...]
    constraints: tuple[str, ...]
    q: tuple[float, ...]
    qd: tuple[float, ...]
    lam: tuple[float, ...]
    residual: float
    ignorable: tuple[str, ...]
    labels: tuple[str, ...]
    dof: int
    stability: str
    modes: tuple[Mode, ...]
    eigenvalues: tuple[complex, ...]
    zero_count: int
    zeros: tuple[tuple[str, str], ...]
    null: tuple[dict[str, float], ...]
    state: tuple[str, ...]
    independent: tuple[str, ...]
    R: tuple[tuple[float, ...], ...]
    given: tuple[str, ...]
    solved: tuple[str, ...]
    free: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "coordinates": list(self.coordinates),
            "steady": {"coordinates": dict(zip(self.coordinates, self.q)),
                       "rates": dict(zip(naming.velocities(self.coordinates), self.qd)),
                       "given": list(self.given), "solved": list(self.solved),
                       "free": list(self.free)},
            "ignorable": list(self.ignorable),
            "multipliers": {naming.multiplier(c): v for c, v in zip(self.constraints, self.lam)},
            "residual": self.residual,
            "degrees_of_freedom": self.dof,
            "stability": self.stability,
            "eigenvalues": [{"re": s.real, "im": s.imag} for s in self.eigenvalues],
            "zero_eigenvalues": {"count": self.zero_count,
                                 "set_aside": [{"direction": d, "why": w}
                                               for d, w in self.zeros],
                                 "null_directions": [dict(d) for d in self.null]},
            "modes": [m.to_dict(self.labels) for m in self.modes],
            "state": list(self.state),
            "independent": list(self.independent),
            "state_matrix": [list(r) for r in self.R],
            "notes": list(self.notes),
        }

    def to_text(self) -> str:
        at = ", ".join([*(f"{c} = {value_text(v)}" for c, v in zip(self.coordinates, self.q)
                          if c not in self.ignorable),
                        *(f"{naming.velocity(c)} = {v:.12g}"
                          for c, v in zip(self.coordinates, self.qd) if v != 0.0)])
        lines = [f"modes of {self.system} about the steady motion {at} (max |q̈| "
                 f"{self.residual:.1e})",
                 f"{self.dof} independent state variable{'s' * (self.dof != 1)} "
                 f"({', '.join(self.independent)}); {self.stability}"]
        lines += [f"note: {note}" for note in self.notes]
        lines.append("")
        lines.append("eigenvalues s of the reduced state matrix (real part descending):")
        for s in self.eigenvalues:
            lines.append(f"  {s.real:>+22.15e} {s.imag:>+22.15e}i")
        if self.modes:
            lines.append("")
            lines.append(f"{'mode':>4}  {'ω_n (rad/s)':>14}  {'f_n (Hz)':>14}  "
                         f"{'ω_d (rad/s)':>14}  {'ζ':>10}  kind")
            for k, m in enumerate(self.modes, 1):
                zeta = "—" if m.damping_ratio is None else f"{m.damping_ratio + 0.0:.6g}"
                lines.append(f"{k:>4}  {m.frequency:>14.10g}  {m.hertz:>14.10g}  "
                             f"{m.damped_frequency:>14.10g}  {zeta:>10}  {m.kind}{m.rates()}")
            lines.append("")
            lines.append("mode shapes δξ (largest component 1):")
            width = max(len(c) for c in self.labels)
            lines.append(" " * width + "".join(f"  {f'mode {k}':>12}"
                                               for k in range(1, len(self.modes) + 1)))
            for i, name in enumerate(self.labels):
                cells = "".join(f"  {_cell(m.shape[i]):>12}" for m in self.modes)
                lines.append(f"{name:<{width}}{cells}")
        return "\n".join(lines) + "\n"


def _cell(x: Any) -> str:
    if isinstance(x, complex):
        return f"{abs(x):.4g}∠{math.degrees(math.atan2(x.imag, x.real)):.0f}°"
    return f"{x:.6g}"


def _given(spec: SystemSpec, coordinates: Sequence[str], steady: Mapping[str, float] | str | None,
           at: Mapping[str, float] | str | None
           ) -> tuple[dict[str, float], dict[str, Location]]:
    """The file's ``steady:`` overridden by ``steady`` (``--steady``) and by the coordinate
    values of ``at`` (``--at``), with where each entry was set."""
    given = dict(spec.steady)
    where = dict(spec.steady_locations)
    if isinstance(steady, str):
        steady = parse_steady(steady, spec, coordinates)
    for name, value in (steady or {}).items():
        if name not in naming.state(coordinates):
            raise InputError(f"{name!r} is not a coordinate or velocity here; the coordinates "
                             f"and velocities are {', '.join(naming.state(coordinates))}",
                             Location("--steady"))
        given[name] = float(value)
        where[name] = Location("--steady")
    if isinstance(at, str) and at.strip() != "equilibrium":
        at = parse_point(at, spec, coordinates)
    if isinstance(at, Mapping):
        for name, value in at.items():
            given[name] = float(value)
            where[name] = Location("--at")
    return given, where


def wants_steady(spec: SystemSpec, steady: Mapping[str, float] | str | None) -> bool:
    """Whether to linearize about a steady motion: ``steady`` given, or the file's ``steady:``."""
    return bool(spec.steady) or (steady is not None and (not isinstance(steady, str)
                                                         or bool(steady.strip())))


def steady_modes(spec: SystemSpec, model: Model, steady: Mapping[str, float] | str | None = None,
                 at: Mapping[str, float] | str | None = None) -> SteadyModesReport:
    """The modes about the steady motion of the file's ``steady:`` with ``steady`` and ``at``
    over it (module docstring)."""
    given, where = _given(spec, model.coordinates, steady, at)
    start = dict(zip(spec.coordinates, spec.initial_state()[0]))
    motion = steady_motion(model, given, where, spec, start)
    reduced = reduce(motion)
    eqs = motion.eqs
    names = eqs.model.coordinates
    ignorable = tuple(names[i] for i in range(len(names)) if i not in eqs.shape)
    labels_index = [*range(len(eqs.shape)),
                    *(len(eqs.shape) + i for i in range(len(names)) if i not in eqs.shape)]
    labels = tuple(reduced.state[i] for i in labels_index)
    modes, stability, zero = steady_modes_of(reduced, labels_index)
    notes = list(motion.notes)
    if ignorable:
        notes.append(f"ignorable: {', '.join(ignorable)} (their positions drop out of the "
                     "linearization; their rates are state variables)")
    if reduced.zeros:
        notes.append("exact zero eigenvalues set aside: " + "; ".join(w for _, w in reduced.zeros))
    return SteadyModesReport(
        system=model.name, coordinates=names,
        constraints=tuple(c.name for c in eqs.model.constraints), q=snap(motion.q),
        qd=snap(motion.qd), lam=snap(motion.lam), residual=motion.residual,
        ignorable=ignorable, labels=labels, dof=len(reduced.independent), stability=stability,
        modes=modes, eigenvalues=reduced.eigenvalues, zero_count=zero, zeros=reduced.zeros,
        null=tuple(zero_directions(reduced, labels, labels_index)),
        state=reduced.state, independent=reduced.independent,
        R=tuple(tuple(float(x) for x in row) for row in reduced.R), given=motion.given,
        solved=motion.solved, free=motion.free, notes=tuple(notes))


def steady_linearization(model: Model, spec: SystemSpec,
                         steady: Mapping[str, float] | str | None = None
                         ) -> SteadyLinearization:
    """What ``derive --form linear`` prints about a steady motion
    (:func:`lagsim.symbolic.forms.linear.linear_form`)."""
    given, where = _given(spec, model.coordinates, steady, None)
    start = dict(zip(spec.coordinates, spec.initial_state()[0]))
    motion = steady_motion(model, given, where, spec, start)
    reduced = reduce(motion)
    names = motion.eqs.model.coordinates
    return SteadyLinearization(
        coordinates=names, q=snap(motion.q), qd=snap(motion.qd), residual=motion.residual,
        state=reduced.state, L=reduced.L, N=reduced.N, independent=reduced.independent,
        S=reduced.R, eigenvalues=reduced.eigenvalues,
        ignorable=tuple(names[i] for i in range(len(names)) if i not in motion.eqs.shape),
        notes=motion.notes)
