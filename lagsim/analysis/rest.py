"""Rest states of a system: the rest equations and Newton's search for their solutions (issue 10).

At rest the equations of motion M q̈ = F + Aᵀλ (seed ``001_80d65b968ce3cb18.txt`` §10.7) and the
constraints read

    F(q, 0) + A(q)ᵀλ = 0,   φ(q) = 0,   c(q) = 0,

with c the offset of each velocity constraint a·q̇ + c = 0 (zero for the usual ones). These are
n + m_h (+ the non-zero offsets) equations in q and λ; they are solved by Newton's method with a
least-squares step (so redundant constraints and families of equilibria do not stop it), from the
initial state and from a deterministic spread of starts, and the solutions are deduplicated
(2π-periodic coordinates compared modulo 2π). :mod:`lagsim.analysis.equilibria` lists them with
their stability, :mod:`lagsim.analysis.linearize` linearizes about one, and
:mod:`lagsim.analysis.modes` takes its modes.

Equilibria are defined for autonomous systems only. A system whose time dependence sits in its
holonomic constraints alone (a bead on a hoop turned at a prescribed rate, φ = ϕ − ωt) is treated
through its reduced Lagrangian L̃ (seed ``002_485a91571cac8ced.txt`` §23.5): when L̃ does not
depend on t, its rest states are the relative equilibria of the system (the eliminated
coordinates keep following the prescribed motion). Any other time dependence is refused, naming
where t appears.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import symengine as se

from lagsim.errors import InputError, Location
from lagsim.records import record
from lagsim.spec.expressions import Source, diff, kinks, parse_expression
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.dependence import depends
from lagsim.symbolic.expansion import expanded, expands_to_zero
from lagsim.symbolic.model import Model, assemble_model, make_constraint

STARTS = 64
"""Random starts besides the initial state (and the 0/π corners of the periodic coordinates)."""

SEED = 20261202

NEWTON_ITERATIONS = 50

STALL = 8
"""A start is abandoned when its residual has not halved in this many Newton steps."""

MAX_STARTS = 2000
"""Newton runs after which the search stops, continuation starts left or not."""

TWO_PI = 2.0 * math.pi


@record
class AutonomousModel:
    """The model whose rest states are the equilibria: the system's own when it is autonomous,
    else its reduced form (``eliminated`` gives each eliminated coordinate in the free ones and
    t, e.g. ``phi = w*t``). ``cancelled`` names where t is written but cancels (a spun hoop's
    sin²(ωt) + cos²(ωt), a drive whose amplitude is set to 0): there t is set to 0."""

    model: Model
    full: Model
    eliminated: tuple[tuple[str, str], ...] = ()
    cancelled: tuple[str, ...] = ()

    @property
    def reduced(self) -> bool:
        return bool(self.eliminated)

    def notes(self) -> tuple[str, ...]:
        out = []
        if self.cancelled:
            out.append(f"t is written in {', '.join(self.cancelled)} but cancels there (at the "
                       "parameters' values): the equations do not change with time")
        if self.reduced:
            moving = ", ".join(f"{name} = {expr}" for name, expr in self.eliminated)
            out.append(f"rheonomic system: equilibria of its reduced Lagrangian in "
                       f"{', '.join(self.model.coordinates)} (seed 002 §23.5), relative "
                       f"equilibria of the system, with {moving}")
        return tuple(out)


def time_sources(model: Model) -> tuple[list[str], list[str]]:
    """Where t is written in L, the forces τ and the constraints: (where the expression truly
    changes with t at the parameters' values, where t is written but cancels), decided by
    :func:`lagsim.symbolic.dependence.depends`."""
    t = model.t
    values = model.substitutions()
    places = [("the Lagrangian", model.lagrangian)]
    places += [(f"the force on {name}", f) for name, f in zip(model.coordinates, model.tau)]
    places += [(f"constraint '{c.name}'", c.expression) for c in model.constraints]
    true: list[str] = []
    cancelled: list[str] = []
    for where, expr in places:
        if t in se.sympify(expr).free_symbols:
            (true if depends(expr, [t], values) else cancelled).append(where)
    return true, cancelled


def autonomous_model(model: Model, spec: SystemSpec | None = None,
                     q0: Mapping[str, float] | None = None) -> AutonomousModel:
    """The autonomous model of ``model``: itself when t appears nowhere; with t set to 0 when t
    is written but cancels (at the parameters' values, :mod:`lagsim.symbolic.dependence`); when t
    appears only in holonomic constraints that prescribe one coordinate each (q_k = f(t)), the
    model with those coordinates substituted (seed 002 §23.5, Lagrange's recipe for such a
    constraint) if its Lagrangian and forces then do not change with t; else
    :class:`InputError` naming where t appears. (``spec`` and ``q0`` are accepted for callers
    that pass the start; the reduction here has a single branch.)"""
    sources, cancelled = time_sources(model)
    if not sources:
        if not cancelled:
            return AutonomousModel(model, model)
        return AutonomousModel(_frozen(model), model, cancelled=tuple(cancelled))
    where = spec.location if spec is not None else None
    refuse = (f"system '{model.name}' is not autonomous: t appears in {', '.join(sources)}, so "
              "it has no equilibria (rest states need equations that do not change with time)")
    if any(not s.startswith("constraint") for s in sources):
        raise InputError(refuse, where)
    values = model.substitutions()
    moving = [c for c in model.constraints if depends(c.expression, [model.t], values)]
    for c in moving:
        if c.kind != "holonomic" or not _prescribes_one(c, model):
            raise InputError(f"{refuse}; a rheonomic constraint is reduced here only when it "
                             f"prescribes one coordinate (q = f(t)), and '{c.name}' does not",
                             where)
    reduced, eliminated = _prescribe(model, moving)
    later, _ = time_sources(reduced)
    if later:
        raise InputError(f"{refuse}; with {', '.join(f'{k} = {v}' for k, v in eliminated)} "
                         "substituted its Lagrangian still depends on t", where)
    return AutonomousModel(_frozen(reduced), model, eliminated,
                           tuple(c for c in cancelled if not c.startswith("constraint")))


def _prescribe(model: Model, moving: Sequence[Any]) -> tuple[Model, tuple[tuple[str, str], ...]]:
    """``model`` with each coordinate that a constraint of ``moving`` prescribes replaced by its
    motion q_k = f(t) (and q̇_k by f'(t)) in L, τ (projected on the remaining coordinates: the
    prescribed one takes no virtual displacement), the other constraints and the masses."""
    t = model.t
    subs: dict[Any, Any] = {}
    eliminated = []
    for c in moving:
        k = next(i for i, a in enumerate(c.row) if se.sympify(a) != 0)
        coefficient = se.sympify(c.row[k])
        motion = expanded(model.q[k] - se.sympify(c.expression) / coefficient)
        subs[model.q[k]] = motion
        subs[model.qd[k]] = diff(motion, t)
        eliminated.append((model.coordinates[k], str(motion)))
    keep = [i for i, qi in enumerate(model.q) if qi not in subs]
    names = tuple(model.coordinates[i] for i in keep)
    q = tuple(model.q[i] for i in keep)
    qd = tuple(model.qd[i] for i in keep)
    tau = se.DenseMatrix(len(keep), 1, [se.sympify(model.tau[i]).subs(subs) for i in keep])
    constraints = tuple(
        make_constraint(c.name, c.kind, se.sympify(c.expression).subs(subs), q, qd, t)
        for c in model.constraints if c not in moving)
    reduced = assemble_model(
        name=model.name, description=model.description, coordinates=names,
        lagrangian=se.sympify(model.lagrangian).subs(subs), tau=tau, constraints=constraints,
        parameters=model.parameters,
        mass_positions=tuple((name, tuple(se.sympify(r).subs(subs) for r in rs))
                             for name, rs in model.mass_positions))
    return reduced, tuple(eliminated)


def _prescribes_one(constraint: Any, model: Model) -> bool:
    """Whether φ = c q_k − f(t): one coordinate with a constant coefficient (a prescribed
    motion such as ϕ = ωt), the case whose reduced Lagrangian can be autonomous cheaply."""
    rows = [se.sympify(a) for a in constraint.row]
    used = [a for a in rows if a != 0]
    if len(used) != 1:
        return False
    return not depends(used[0], [*model.q, model.t], model.substitutions())


def _frozen(model: Model) -> Model:
    """``model`` at t = 0, for a model whose L, τ and constraints do not change with t (t
    written in them cancels): the same equations, with no t left to read."""
    t = model.t
    frozen = {t: se.Integer(0)}
    tau = se.DenseMatrix(model.n, 1, [se.sympify(f).subs(frozen) for f in model.tau])
    constraints = tuple(
        make_constraint(c.name, c.kind, se.sympify(c.expression).subs(frozen), model.q,
                        model.qd, t)
        for c in model.constraints)
    return assemble_model(
        name=model.name, description=model.description, coordinates=model.coordinates,
        lagrangian=se.sympify(model.lagrangian).subs(frozen), tau=tau,
        constraints=constraints, parameters=model.parameters,
        mass_positions=tuple((name, tuple(se.sympify(r).subs(frozen) for r in rs))
                             for name, rs in model.mass_positions))


class RestEquations:
    """The rest equations R(q, λ) = [F(q, 0) + Aᵀλ; φ(q); c(q)] of an autonomous model, their
    Jacobian and the matrices of the linearization, with the parameters' values substituted
    (symbolic derivatives, compiled once by symengine)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        n, m = model.n, model.m
        self.n, self.m = n, m
        subs: dict[Any, Any] = {se.Symbol(k): v for k, v in model.parameters.items()}
        rest = {v: 0 for v in model.qd}
        lam = [se.Symbol(f"_lagsim_lam{k}") for k in range(m)]
        self.lam_symbols = lam
        F = [se.sympify(model.forcing[i]) for i in range(n)]
        F0 = [f.subs(rest) for f in F]
        rows = [F0[i] + sum((model.A[k, i] * lam[k] for k in range(m)), se.Integer(0))
                for i in range(n)]
        rows += [c.expression for c in model.constraints if c.kind == "holonomic"]
        offsets = [c.offset for c in model.constraints if c.kind == "velocity"]
        rows += [o for o in offsets if expands_to_zero(o) is not True]
        rows = [se.sympify(r).subs(subs) for r in rows]
        self.size = len(rows)
        unknowns = list(model.q) + lam
        jac = [diff(r, u) for r in rows for u in unknowns]
        present = set().union(*(r.free_symbols for r in rows))
        self.pinned = tuple(i for i in range(n) if model.q[i] not in present)
        self.kinked: tuple[int, ...] = tuple(
            i for i in range(n) if i not in self.pinned
            and all(jac[r * (n + m) + i] == 0 for r in range(self.size)))
        self.kink_points = _kink_points(rows, model.q, self.kinked)
        mass = [se.sympify(model.mass_matrix[i, j]).subs(subs) for i in range(n)
                for j in range(n)]
        damping = [diff(F[i], model.qd[j]).subs(rest).subs(subs) for i in range(n)
                   for j in range(n)]
        A = [se.sympify(model.A[k, i]).subs(subs) for k in range(m) for i in range(n)]
        c_q = [diff(o, qi).subs(subs) for o in offsets for qi in model.q]
        self.n_offsets = len(offsets)
        exprs = rows + jac + mass + damping + A + c_q
        self._f = se.Lambdify(unknowns, exprs, cse=True, backend="lambda")
        self._r = se.Lambdify(unknowns, rows, cse=True, backend="lambda")
        self._rj = se.Lambdify(unknowns, rows + jac, cse=True, backend="lambda")
        self.names = model.coordinates

    def force_scale(self, q0: np.ndarray) -> float:
        """The largest |F(q, 0)| at the initial configuration and at seeded random points
        around it: the size of the forces, against which a multiplier or stiffness counts as
        rounding (0 for a system without forces, whose every rest state is an equilibrium)."""
        rng = np.random.default_rng(SEED)
        points = [q0] + [q0 + rng.uniform(-1.0, 1.0, self.n) for _ in range(4)]
        largest = 0.0
        for q in points:
            values = self._all(np.concatenate([q, np.zeros(self.m)]))[:self.n]
            if np.all(np.isfinite(values)):
                largest = max(largest, float(np.max(np.abs(values), initial=0.0)))
        return largest

    def residual_and_jacobian(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = np.asarray(self._rj(x), dtype=float).reshape(-1)
        return out[:self.size], out[self.size:].reshape(self.size, self.n + self.m)

    def residual(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self._r(x), dtype=float).reshape(-1)

    def evaluate(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """R, J (size × (n+m)), M (n×n), ∂F/∂q̇ at rest (n×n), A (m×n), ∂c/∂q at ``x``."""
        n, m, s = self.n, self.m, self.size
        out = np.asarray(self._f(x), dtype=float).reshape(-1)
        parts = {}
        k = 0
        for name, shape in (("R", (s,)), ("J", (s, n + m)), ("M", (n, n)), ("DF", (n, n)),
                            ("A", (m, n)), ("c_q", (self.n_offsets, n))):
            size = int(np.prod(shape))
            parts[name] = out[k:k + size].reshape(shape)
            k += size
        return parts

    def multipliers(self, q: np.ndarray) -> np.ndarray:
        """λ minimising |F(q, 0) + Aᵀλ| (least squares) at configuration q."""
        if not self.m:
            return np.zeros(0)
        x = np.concatenate([q, np.zeros(self.m)])
        parts = self.evaluate(x)
        F0 = parts["R"][:self.n]
        lam, *_ = np.linalg.lstsq(parts["A"].T, -F0, rcond=None)
        return lam

    def periodic(self) -> tuple[int, ...]:
        """Coordinates in which R, M and ∂F/∂q̇ are 2π-periodic (angles), tested at random
        points: these are compared and wrapped modulo 2π."""
        rng = np.random.default_rng(SEED)
        points = [rng.uniform(-1.0, 1.0, self.n + self.m) for _ in range(2)]
        out = []
        for i in range(self.n):
            same = True
            for x in points:
                y = x.copy()
                y[i] += TWO_PI
                a, b = self._all(x), self._all(y)
                if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
                    same = False
                    break
                if np.max(np.abs(a - b), initial=0.0) > 1e-9 * (1.0 + np.max(np.abs(a),
                                                                              initial=0.0)):
                    same = False
                    break
            if same:
                out.append(i)
        return tuple(out)

    def _all(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(self._f(x), dtype=float).reshape(-1)


def value_text(value: float) -> str:
    """A coordinate's value, with its multiple of π when it is one (to 1e-12)."""
    text = f"{value:.12g}"
    if value != 0.0:
        ratio = value / math.pi
        for den in (1, 2, 3, 4, 6):
            if abs(ratio * den - round(ratio * den)) < 1e-12 * max(1.0, abs(ratio * den)):
                num = round(ratio * den)
                if num == 0:
                    break
                frac = "π" if num == 1 else "-π" if num == -1 else f"{num}π"
                text += f"  ({frac}{'' if den == 1 else f'/{den}'})"
                break
    return text


def snap(values: np.ndarray) -> tuple[float, ...]:
    """Values below rounding next to the largest (1e-15 of it, or of 1) printed as 0."""
    scale = max(1.0, float(np.max(np.abs(values), initial=0.0)))
    return tuple(0.0 if abs(v) < 1e-15 * scale else float(v) for v in values)


def _wrap(q: np.ndarray, periodic: Sequence[int]) -> np.ndarray:
    out = q.copy()
    for i in periodic:
        out[i] = math.remainder(out[i], TWO_PI)
        if out[i] <= -math.pi + 1e-12:
            out[i] += TWO_PI
    return out


def distance(a: np.ndarray, b: np.ndarray, periodic: Sequence[int]) -> np.ndarray:
    """Componentwise |a − b|, modulo 2π in the periodic coordinates."""
    d = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    for i in periodic:
        d[i] = abs(math.remainder(d[i], TWO_PI))
    return d


def newton(eqs: RestEquations, q: np.ndarray, fixed: Sequence[int] = ()
           ) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """Solve R(q, λ) = 0 from ``q`` (λ by least squares) with damped least-squares Newton
    steps, keeping the coordinates ``fixed`` at their values. Returns (q, λ, max |R|,
    converged); converged means the residual is at the level of rounding (relative to the
    Jacobian's scale) and the last step was small next to the solution, or no step lowers the
    residual further (a start on an equilibrium, whose residual is rounding already)."""
    n, m = eqs.n, eqs.m
    free = [i for i in range(n + m) if i not in set(fixed)]
    x = np.concatenate([q, eqs.multipliers(q)])
    with np.errstate(all="ignore"):
        r = eqs.residual(x)
        norm = float(np.linalg.norm(r))
        last = math.inf
        stuck = False
        history = [norm]
        for _ in range(NEWTON_ITERATIONS):
            if not math.isfinite(norm):
                return x[:n], x[n:], math.inf, False
            J = eqs.residual_and_jacobian(x)[1][:, free]
            dx, *_ = np.linalg.lstsq(J, -r, rcond=None)
            step = 1.0
            while step >= 2.0**-10:
                trial = x.copy()
                trial[free] += step * dx
                rt = eqs.residual(trial)
                nt = float(np.linalg.norm(rt))
                if math.isfinite(nt) and (nt < (1.0 - 1e-4 * step) * norm or nt == 0.0):
                    break
                step *= 0.5
            else:
                stuck = True
                break
            x, r, norm = trial, rt, nt
            last = float(np.max(np.abs(step * dx), initial=0.0))
            if norm == 0.0 or last <= 1e-15 * (1.0 + float(np.max(np.abs(x)))):
                break
            history.append(norm)
            if len(history) > STALL and history[-1] > 0.5 * history[-1 - STALL]:
                break
        J = eqs.evaluate(x)["J"]
        scale = max(1.0, float(np.max(np.abs(J), initial=0.0))) * max(
            1.0, float(np.max(np.abs(x), initial=0.0)))
        residual = float(np.max(np.abs(r), initial=0.0))
        rounding = 1e-9 * max(1.0, float(np.max(np.abs(J), initial=0.0)))
        converged = (residual <= 1e-9 * scale
                     and (last <= 1e-7 * (1.0 + float(np.max(np.abs(x)))) or norm == 0.0
                          or (stuck and residual <= rounding)))
    return x[:n], x[n:], residual, converged


def family_dimension(eqs: RestEquations, q: np.ndarray, lam: np.ndarray,
                     fixed: Sequence[int] = ()) -> int:
    """The dimension of the set of equilibria through (q, λ), to first order: the rank of the
    q-parts of the null space of the Jacobian of R (pure-λ directions, from redundant
    constraints, do not count)."""
    n = eqs.n
    J = eqs.evaluate(np.concatenate([q, lam]))["J"]
    J = np.delete(J, list(fixed), axis=1) if fixed else J
    keep = [i for i in range(n) if i not in set(fixed)]
    if J.size == 0:
        return len(keep)
    u, s, vt = np.linalg.svd(J)
    tol = 1e-9 * max(float(s.max(initial=0.0)), 1e-300)
    rank = int(np.sum(s > tol))
    null = vt[rank:].T
    if null.size == 0:
        return 0
    qpart = null[:len(keep)]
    if not qpart.size:
        return 0
    sq = np.linalg.svd(qpart, compute_uv=False)
    return int(np.sum(sq > 1e-6))


def _kink_points(rows: Sequence[se.Basic], q: Sequence[se.Symbol],
                 kinked: Sequence[int]) -> tuple[tuple[int, float], ...]:
    """(i, value): where the argument u of an Abs or sign term of the rest equations, linear in
    the kinked coordinate q_i alone, vanishes (x = 0 of k*Abs(x)). Newton's method cannot move
    a kinked coordinate (its derivative is 0 where it exists), so such points are starts."""
    points = []
    for term in kinks(*rows):
        u = se.sympify(term.args[0])
        inside = [i for i in kinked if q[i] in u.free_symbols]
        if len(inside) != 1 or u.free_symbols & (set(q) - {q[inside[0]]}):
            continue
        i = inside[0]
        slope = diff(u, q[i])
        if slope.free_symbols or diff(slope, q[i]) != 0 or slope == 0:
            continue
        at_zero = u.subs({q[i]: 0})
        if at_zero.free_symbols:
            continue
        points.append((i, -float(at_zero) / float(slope)))
    return tuple(sorted(set(points)))


def _starts(q0: np.ndarray, periodic: Sequence[int], count: int) -> list[np.ndarray]:
    """The initial state; its periodic coordinates at 0 and π (up to 16 corners); its mirror
    images (the signs of up to four other coordinates flipped: a pendulum in Cartesian
    coordinates upside down); and ``count`` seeded random points around it: ±π in the periodic
    coordinates, ±2 max(1, |q0|) in the others."""
    out = [q0.copy()]
    if len(periodic) <= 4:
        for corner in range(2 ** len(periodic)):
            q = q0.copy()
            for k, i in enumerate(periodic):
                q[i] = math.pi if corner >> k & 1 else 0.0
            out.append(q)
    rng = np.random.default_rng(SEED)
    others = [i for i in range(len(q0)) if i not in set(periodic)]
    for k in range(1, min(2 ** len(others), 16)):
        q = q0.copy()
        for bit, i in enumerate(others[:4]):
            if k >> bit & 1:
                q[i] = -q[i]
        out.append(q)
    scale = 2.0 * np.maximum(1.0, np.abs(q0))
    for i in periodic:
        scale[i] = math.pi
    for _ in range(count):
        out.append(q0 + rng.uniform(-1.0, 1.0, len(q0)) * scale)
    return out


def _singular_point(eqs: RestEquations, q: np.ndarray, lam: np.ndarray) -> bool:
    """Whether (q, λ) sits where the rest equations are not differentiable (a spring of zero
    length, |r| at r = 0): their Jacobian is not finite there, or a thousand times larger than at
    every one of four points 1e-6 away (a smooth Jacobian changes by about that distance)."""
    x = np.concatenate([q, lam])
    with np.errstate(all="ignore"):
        here = eqs.evaluate(x)["J"]
        if not np.all(np.isfinite(here)):
            return True
        size = float(np.max(np.abs(here), initial=0.0))
        rng = np.random.default_rng(SEED)
        nearby = []
        for _ in range(4):
            step = np.zeros_like(x)
            step[:eqs.n] = rng.uniform(-1.0, 1.0, eqs.n) * 1e-6 * (1.0 + np.abs(q))
            J = eqs.evaluate(x + step)["J"]
            nearby.append(float(np.max(np.abs(J), initial=0.0)) if np.all(np.isfinite(J))
                          else math.inf)
    return size > 1e3 * max(nearby)


@record
class Search:
    """What :func:`solve_equilibria` found: ``solutions`` (q, λ, residual, family dimension),
    nearest to the initial state first; the ``periodic`` coordinates; the number of Newton
    ``starts``; and whether the search is ``closed``: every continuation start of every
    equilibrium found was tried (False when the limit of Newton runs stopped it first)."""

    solutions: list[tuple[np.ndarray, np.ndarray, float, int]]
    periodic: tuple[int, ...]
    starts: int
    closed: bool


def _continuations(q: np.ndarray, others: Sequence[np.ndarray], periodic: Sequence[int],
                   pinned: Sequence[int]) -> list[np.ndarray]:
    """Starts derived from the equilibrium ``q``: its images (an angle turned by π, another
    coordinate's sign flipped, all signs flipped: the symmetric equilibria of a pendulum or a
    double well), a step of ±max(1, |q_i|)/2 (±π/2 for an angle) along each coordinate, and the
    midpoints between q and the equilibria found before (``others``: a saddle lies between two
    wells)."""
    out = []
    free = [i for i in range(len(q)) if i not in set(pinned)]
    for i in free:
        image = q.copy()
        image[i] = image[i] + math.pi if i in set(periodic) else -image[i]
        out.append(image)
        step = math.pi / 2 if i in set(periodic) else 0.5 * max(1.0, abs(q[i]))
        for sign in (1.0, -1.0):
            moved = q.copy()
            moved[i] += sign * step
            out.append(moved)
    out.append(-q)
    for other in others:
        middle = q + 0.5 * _difference(other, q, periodic)
        out.append(middle)
    return out


def _difference(a: np.ndarray, b: np.ndarray, periodic: Sequence[int]) -> np.ndarray:
    """a − b, the periodic coordinates' part the shorter way round."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    for i in periodic:
        d[i] = math.remainder(d[i], TWO_PI)
    return d


def solve_equilibria(eqs: RestEquations, q0: np.ndarray, starts: int = STARTS,
                     max_starts: int = MAX_STARTS) -> Search:
    """Every distinct equilibrium reached by Newton's method (module docstring) from: the
    initial state; the 0/π corners of up to four periodic coordinates; the mirror images of
    the initial state; ``starts`` seeded random points around it; and, for each isolated
    equilibrium found, its continuation starts (:func:`_continuations`), until no new
    equilibrium comes from them or ``max_starts`` (default :data:`MAX_STARTS`) Newton runs were
    made.

    What it guarantees: each equilibrium listed solves the rest equations to rounding (its
    residual is printed), and the set is closed under the continuations: every image, step
    and midpoint of every isolated equilibrium found was a start (``closed``). It does not
    guarantee that every equilibrium is found: one whose basin of attraction under Newton's
    method contains none of these starts is missed (far away along an unbounded coordinate, or
    isolated from the others)."""
    periodic = eqs.periodic()
    pinned = eqs.pinned
    found: list[tuple[np.ndarray, np.ndarray, float, int]] = []
    queue = list(_starts(q0, periodic, starts))
    for i, value in eqs.kink_points:
        on_kink = np.array(q0, dtype=float)
        on_kink[i] = value
        queue.insert(0, on_kink)
    tried = 0
    while queue and tried < max_starts:
        start = queue.pop(0)
        for i in pinned:
            start[i] = q0[i]
        if any(np.all(distance(start, other[0], periodic) <= 1e-9 * (1.0 + np.abs(start)))
               for other in found):
            continue
        tried += 1
        q, lam, residual, ok = newton(eqs, start, pinned)
        if not ok:
            continue
        q = _wrap(q, periodic)
        if _singular_point(eqs, q, lam):
            continue
        tol = 1e-7 * (1.0 + np.abs(q))
        if any(np.all(distance(q, other[0], periodic) <= tol) for other in found):
            continue
        family = family_dimension(eqs, q, lam, (*pinned, *eqs.kinked))
        if not family:
            queue += _continuations(q, [f[0] for f in found if not f[3]], periodic, pinned)
        found.append((q, lam, residual, family))
    found.sort(key=lambda item: float(np.linalg.norm(distance(item[0], q0, periodic))))
    return Search(found, periodic, tried, not queue)


def kinked_note(eqs: RestEquations) -> str:
    """What :attr:`RestEquations.kinked` means, naming its coordinates: they enter the rest
    equations only through terms whose derivative is 0 wherever it exists (sign(x), the force
    of a potential |x|), so Newton's method, which follows the derivative, cannot move them."""
    names = ", ".join(eqs.names[i] for i in eqs.kinked)
    return (f"{names} enter{'s' * (len(eqs.kinked) == 1)} the rest equations only through "
            "non-smooth terms whose derivative is 0 where it exists (such as sign, the force of "
            "an Abs in the potential): Newton's method cannot move "
            f"{'it' if len(eqs.kinked) == 1 else 'them'}")


def parse_point(text: str, spec: SystemSpec, coordinates: Sequence[str],
                option: str = "--at", kind: tuple[str, str] = ("coordinate", "coordinates")
                ) -> dict[str, float]:
    """``"theta1=0, theta2=pi/2"`` as coordinate → value; values are expressions in numbers and
    the parameters. A name that is not one of ``coordinates`` (what they are: ``kind``, singular
    and plural) is an input error."""
    names: dict[str, Any] = {p.name: se.Float(p.value) for p in spec.parameters}
    out: dict[str, float] = {}
    for item in (part for part in text.split(",") if part.strip()):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"expected NAME=VALUE, got {item.strip()!r}", Location(option))
        if name not in coordinates:
            raise InputError(f"{name!r} is not a {kind[0]} here; the {kind[1]} are "
                             f"{', '.join(coordinates)}", Location(option))
        expr = parse_expression(value, names, Source(Location(option)), f"the value of {name}",
                                "a value is a number or an expression in numbers and the "
                                "parameters, such as pi/2 or l*sin(0.3)")
        try:
            out[name] = float(expr)
        except (TypeError, RuntimeError):
            raise InputError(f"{name}={value.strip()!r}: the value must be a number",
                             Location(option)) from None
    return out


def point_state(eqs: RestEquations, values: Mapping[str, float], spec: SystemSpec
                ) -> np.ndarray:
    """The configuration with ``values`` set and the other coordinates at their initial
    values."""
    initial = dict(zip(spec.coordinates, spec.initial_state()[0]))
    return np.array([values.get(c, initial.get(c, 0.0)) for c in eqs.names], dtype=float)
