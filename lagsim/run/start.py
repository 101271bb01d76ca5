"""A consistent start that keeps what the user set (issue 15).

The constrained equations hold the run on φ(q, t) = 0 and A q̇ + c = 0 only when the start lies on
them: index reduction replaces c(q) = 0 by c̈ = 0, which needs c(0) = 0 and ċ(0) = 0 (seed
``003_88d23709419132a0.txt``; the constraint rows of seed ``001_80d65b968ce3cb18.txt`` §10.7).
:func:`consistent_start` finds such a start from the user's values, with the fixed and free sets
of Modelica tools' ``fixed`` start values:

1. *Given* values (coordinates ``c`` and velocities ``c_dot`` the user set in ``initial:`` or with
   ``--init``) are kept; *unset* values (0) are solved for first. ``given=None`` treats every value
   as given: the M-orthogonal projection of every value (issue 3's behaviour).
2. Positions: Gauss–Newton on φ(q, t) = 0 from the given values with 0 for the unset ones, moving
   only unset coordinates, each step the least-change solution of the linearized constraints in
   the metric M_FF (the block of the mass matrix on those coordinates: the kinetic-energy metric
   of seed 001 §10.6; M is taken at the state as given), halved until ‖φ‖ decreases.
3. Where that start is a singular point of the constraints (a pendulum in natural coordinates
   given x only: ∂φ/∂y = 2y vanishes at y = 0, and y = ±√(l² − x²) are equally near), the unset
   coordinates fall along the acceleration at rest, M_FF⁻¹F_F (its part the constraint rows do
   not see), to the point of that line nearest to meeting the constraints, so the system starts
   on the side it would fall to (y = −√(l² − x²) under gravity −y). With no force at rest either
   side is as good and the user is asked to give a value.
4. Velocities: the least M_FF-norm solution of A q̇ + c = 0 in the unset velocities.
5. Only when the unset values cannot satisfy the constraints do given values move: the least
   change of the given values in the metric M_GG for which the unset ones can satisfy the
   constraints (the given step lies in the part of the constraint space the unset columns do not
   reach), the unset ones then taking their least-change solution. The report names the
   constraints left unsatisfied by the unset values.
6. ``strict`` (``--strict-initial``) allows computing unset values but forbids moving given ones:
   an :class:`InputError` lists the moves it would have made and the constraints that forced them.

Every value that changes by more than :data:`REPORT_THRESHOLD` is reported through ``report``:
``initial x_dot: 0.0 -> 1.0 (computed from constraint roll)`` for an unset value,
``initial theta_dot: 2.0 -> 0.667 (moved: constraint roll conflicts with the given values)`` for a
given one. A constrained system with no initial value at all is said first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, Subject
from lagsim.numeric.compile import NumericSystem

Report = Callable[[str], None]

REPORT_THRESHOLD = 1e-12
"""An initial value that changes by more than this is reported (and, when it was given, refused
under ``strict``)."""
CUTOFF = 1e-12
"""Relative cut-off of singular values in the start's solves: in a least-change solve relative to
the largest one of the whole constraint matrix in the metric (so a block of columns is judged on
the scale of all of them), in the singular-point test relative to the unset columns' own."""
TOLERANCE = 1e-10
"""A constraint residual counts as met below TOLERANCE · (1 + max|row| · (1 + max|value|))."""
NUDGE = 1e-3
"""First step of a fall off a singular start point, relative to 1 + max|q| (rule 3)."""
NO_INITIAL = ("no initial values given: every coordinate starts at 0 (set values in 'initial:' or "
              "with --init NAME=VALUE)")
NO_INITIAL_IDENTITY = ("no initial values given: every coordinate starts at 0, but a quaternion "
                       "at the identity, e0 = 1 (set values in 'initial:' or with "
                       "--init NAME=VALUE)")
"""What is said instead of :data:`NO_INITIAL` when the start is not all 0: a quaternion body
left out starts at the identity (:meth:`lagsim.spec.system.SystemSpec.identity_quaternions`)."""


def _inverse_factor(M: np.ndarray) -> np.ndarray:
    """W with M⁻¹ = WᵀW (W = L⁻¹, M = L Lᵀ)."""
    if not M.size:
        return np.zeros((0, 0))
    try:
        return np.linalg.inv(np.linalg.cholesky(M))
    except np.linalg.LinAlgError:
        raise InputError(
            "the mass matrix is singular at the start, so no least change of the initial values "
            "can be measured in its metric: give initial values where the kinetic energy gives "
            "every coordinate inertia (for a quaternion, a unit one such as e0 = 1)") from None


def _least_change(J: np.ndarray, r: np.ndarray, W: np.ndarray, ref: float) -> np.ndarray:
    """δ of least norm in the metric (WᵀW)⁻¹ with J δ = r in the least-squares sense; singular
    values of J Wᵀ below CUTOFF·ref are cut."""
    if not J.shape[1] or not J.shape[0]:
        return np.zeros(J.shape[1])
    B = J @ W.T
    U, s, Vt = np.linalg.svd(B, full_matrices=False)
    keep = s > CUTOFF * ref
    return W.T @ (Vt[keep].T @ ((U[:, keep].T @ r) / s[keep]))


def _range(J: np.ndarray, W: np.ndarray, ref: float) -> np.ndarray:
    """An orthonormal basis of the range of J (as columns)."""
    if not J.shape[1]:
        return np.zeros((J.shape[0], 0))
    U, s, _ = np.linalg.svd(J @ W.T, full_matrices=False)
    return U[:, s > CUTOFF * ref]


def _unmet(residual: np.ndarray, J: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Which rows of ``residual`` (of the constraint rows J at ``values``) are not met."""
    scale = 1.0 + np.abs(J).max(axis=1, initial=0.0) * (1.0 + np.abs(values).max(initial=0.0))
    return ~(np.abs(residual) <= TOLERANCE * scale)


class _Split:
    """The unset (free) and given columns of one level (positions or velocities) and their
    metrics: W_F, W_G with M_FF⁻¹ = W_FᵀW_F and M_GG⁻¹ = W_GᵀW_G (W of the whole M sets the
    scale against which singular values are cut)."""

    def __init__(self, M: np.ndarray, given: np.ndarray) -> None:
        self.free = np.flatnonzero(~given)
        self.given = np.flatnonzero(given)
        self.W = _inverse_factor(M)
        self.WF = _inverse_factor(M[np.ix_(self.free, self.free)])
        self.WG = _inverse_factor(M[np.ix_(self.given, self.given)])

    def reference(self, J: np.ndarray) -> float:
        return float(np.linalg.norm(J @ self.W.T, 2)) if J.size else 0.0

    def free_step(self, J: np.ndarray, r: np.ndarray) -> np.ndarray:
        """The least M_FF-change of the unset values toward J δ = r (rules 2 and 4)."""
        delta = np.zeros(J.shape[1])
        ref = self.reference(J)
        delta[self.free] = _least_change(J[:, self.free], r, self.WF, ref)
        return delta

    def step(self, J: np.ndarray, r: np.ndarray) -> np.ndarray:
        """Rule 5: the given values move by the least M_GG-change that leaves a residual the
        unset values can take up; the unset values then take their least-change solution."""
        ref = self.reference(J)
        JF, JG = J[:, self.free], J[:, self.given]
        basis = _range(JF, self.WF, ref)
        P = np.eye(J.shape[0]) - basis @ basis.T
        delta = np.zeros(J.shape[1])
        delta[self.given] = _least_change(P @ JG, P @ r, self.WG, ref)
        delta[self.free] = _least_change(JF, r - JG @ delta[self.given], self.WF, ref)
        return delta


def _descend(residual: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
             step: Callable[[np.ndarray, np.ndarray], np.ndarray], q: np.ndarray,
             max_iter: int = 50) -> np.ndarray:
    """Damped Gauss–Newton on φ(q) = 0: each step ``step(φ_q, −φ)``, halved until ‖φ‖ decreases;
    stops when no step decreases it or the step is at rounding level."""
    phi, J = residual(q)
    for _ in range(max_iter):
        if not np.any(phi):
            break
        delta = step(J, -phi)
        if not np.all(np.isfinite(delta)) or not np.any(delta):
            break
        norm, s = float(np.linalg.norm(phi)), 1.0
        for _ in range(60):
            trial = q + s * delta
            phi_t, J_t = residual(trial)
            if np.all(np.isfinite(phi_t)) and np.linalg.norm(phi_t) < norm:
                break
            s /= 2
        else:
            break
        q, phi, J = trial, phi_t, J_t
        if np.abs(s * delta).max() <= 4e-16 * (1.0 + np.abs(q).max()):
            break
    return q


def _about(names: Sequence[str]) -> Subject | None:
    """The first of the constraints ``names`` as the subject of an error (None for none)."""
    return Subject("constraint", names[0]) if names and names[0] else None


def _names(rows: Sequence[int], names: Sequence[str]) -> str:
    label = "constraint" if len(rows) == 1 else "constraints"
    return f"{label} {', '.join(names[k] for k in rows)}"


def _why(i: int, J: np.ndarray, rows: np.ndarray) -> list[int]:
    """The rows among ``rows`` (a mask) that involve column i, or all of them if none does."""
    marked = [int(k) for k in np.flatnonzero(rows)]
    return [k for k in marked if J[k, i] != 0] or marked


class _Level:
    """Positions or velocities: the values before and after, and why each one moved."""

    def __init__(self, labels: Sequence[str], given: np.ndarray, before: np.ndarray) -> None:
        self.labels = labels
        self.given = given
        self.before = before.copy()
        self.after = before.copy()
        self.reasons: dict[int, str] = {}
        self.concerned: dict[int, str] = {}

    def explain(self, J: np.ndarray, violated: np.ndarray, conflict: np.ndarray,
                names: Sequence[str], fallen: Collection[int] = ()) -> None:
        for i in map(int, np.flatnonzero(np.abs(self.after - self.before) > REPORT_THRESHOLD)):
            if self.given[i]:
                rows = _why(i, J, conflict)
                verb = "conflicts" if len(rows) == 1 else "conflict"
                self.reasons[i] = f"moved: {_names(rows, names)} {verb} with the given values"
            else:
                rows = _why(i, J, violated)
                where = ", on the side the force at rest points to" if i in fallen else ""
                self.reasons[i] = f"computed from {_names(rows, names)}{where}"
            if rows:
                self.concerned[i] = names[rows[0]]

    def moves(self) -> list[tuple[str, float, float, str, str]]:
        """(value, before, after, why, the first constraint concerned) of each change."""
        return [(self.labels[i], float(self.before[i]), float(self.after[i]), self.reasons[i],
                 self.concerned.get(i, "")) for i in sorted(self.reasons)]


def _positions(numeric: NumericSystem, t: float, level: _Level, split: _Split, M: np.ndarray
               ) -> None:
    """Rules 2, 3 and 5 for φ(q, t) = 0; sets ``level.after`` and the reasons."""
    hol = numeric.holonomic
    names = [numeric.constraint_names[h] for h in hol]

    def residual(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return numeric.phi(t, q)

    q0 = level.before
    phi0, J0 = residual(q0)
    violated = _unmet(phi0, J0, q0)
    q = _descend(residual, split.free_step, q0)
    fallen: set[int] = set()
    phi, J = residual(q)
    if _unmet(phi, J, q).any() and len(split.free):
        q, fallen = _off_singular_point(numeric, t, residual, split, q, M, names)
        phi, J = residual(q)
    conflict = _unmet(phi, J, q)
    if conflict.any():
        q = _descend(residual, split.step, q)
        phi, J = residual(q)
        bad = _unmet(phi, J, q)
        if bad.any() or not np.all(np.isfinite(q)):
            values = ", ".join(f"{n} = {p:.3g}" for n, p in zip(names, phi))
            culprits = [n for n, b in zip(names, bad) if b] or names
            raise InputError(
                f"the initial positions cannot be made consistent: the holonomic constraints "
                f"{', '.join(culprits)} conflict at t = {t!r} (closest residuals {values}); "
                f"check the constraints and the initial values", about=_about(culprits))
    level.after = q
    level.explain(J, violated, conflict, names, fallen)


def _fall(residual: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], q: np.ndarray,
          d: np.ndarray) -> np.ndarray:
    """q + s·d at the least ‖φ‖ along the ray s > 0, found by doubling s from NUDGE·(1 + max|q|)
    while ‖φ‖ falls, then golden-section search on the last bracket down to rounding level (a
    fall is followed by Gauss–Newton only in the directions the constraints see, so the line's
    point must be exact); q itself when the first step already raises ‖φ‖."""
    def f(s: float) -> float:
        value = float(np.linalg.norm(residual(q + s * d)[0]))
        return value if np.isfinite(value) else np.inf

    low, s = 0.0, NUDGE * (1.0 + np.abs(q).max())
    f_s = f(s)
    if not f_s < f(0.0):
        return q
    for _ in range(64):
        f_next = f(2 * s)
        if not f_next < f_s:
            break
        low, s, f_s = s, 2 * s, f_next
    a, b = low, 2 * s
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(200):
        if b - a <= 4e-16 * (1.0 + b):
            break
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - ratio * (b - a)
            f1 = f(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + ratio * (b - a)
            f2 = f(x2)
    best, f_best = (x1, f1) if f1 <= f2 else (x2, f2)
    return q + (best if f_best < f_s else s) * d


def _off_singular_point(numeric: NumericSystem, t: float,
                        residual: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                        split: _Split, q: np.ndarray, M: np.ndarray, names: Sequence[str]
                        ) -> tuple[np.ndarray, set[int]]:
    """Rule 3 at a point q where Gauss–Newton in the unset coordinates stalled: the directions
    the constraint rows do not see there (the null space N of φ_q's unset columns) are where the
    start may lie on either side. The unset coordinates fall along the acceleration at rest
    projected onto N to the least ‖φ‖ on that line (:func:`_fall`), then Gauss–Newton again;
    repeated while each round lowers ‖φ‖ (a double pendulum hanging from the origin needs two:
    both bobs fall to the first rod's length, then the second bob below the first). Returns
    (q', the coordinates moved along a fall) when that meets the constraints, else (q unchanged,
    no coordinates). Raises when the force at rest has no part along N but a fall along N lowers
    ‖φ‖ (the side is then the user's to choose)."""
    free = split.free
    start = q
    fallen: set[int] = set()
    for _ in range(len(free)):
        phi, J = residual(q)
        _, s, Vt = np.linalg.svd(J[:, free], full_matrices=True)
        rank = int(np.sum(s > CUTOFF * s.max(initial=0.0))) if s.size else 0
        N = Vt[rank:].T
        if not N.shape[1]:
            break
        F = numeric.dynamics(t, q, np.zeros_like(q))[1]
        accel = N @ (N.T @ np.linalg.solve(M[np.ix_(free, free)], F[free]))
        forced = np.linalg.norm(accel) > 1e-8 * np.linalg.norm(F[free])
        direction = accel if forced else N @ np.ones(N.shape[1])
        direction = direction / np.linalg.norm(direction)
        d = np.zeros_like(q)
        d[free] = direction
        trial = _descend(residual, split.free_step, _fall(residual, q, d))
        phi_t, J_t = residual(trial)
        if not np.linalg.norm(phi_t) < (1.0 - 1e-6) * np.linalg.norm(phi):
            break
        if not forced:
            undecided = [i for i, k in zip(free, np.abs(N).max(axis=1) > 1e-8) if k]
            coords = [numeric.coordinates[i] for i in undecided]
            at = ", ".join(f"{numeric.coordinates[i]} = {float(q[i])!r}" for i in undecided)
            unmet = [int(k) for k in np.flatnonzero(_unmet(phi, J, q))]
            raise InputError(
                f"the {_names(unmet, names)} cannot decide "
                f"{', '.join(coords)} from {at}: that is a singular point with starts on either "
                f"side and no force at rest picks one; give {' or '.join(coords)} in "
                f"'initial:' or with --init", about=_about([names[k] for k in unmet]))
        q = trial
        fallen.update(int(i) for i, x in zip(free, direction) if abs(x) > 1e-8)
        if not _unmet(phi_t, J_t, q).any():
            return q, fallen
    return start, set()


def _velocities(numeric: NumericSystem, t: float, q: np.ndarray, level: _Level, split: _Split
                ) -> None:
    """Rules 4 and 5 for A q̇ + c = 0 (linear: one least-change solve per stage)."""
    names = numeric.constraint_names
    A, c = numeric.velocity_terms(t, q)
    qd0 = level.before
    violated = _unmet(A @ qd0 + c, A, qd0)
    qd = qd0 + split.free_step(A, -(A @ qd0 + c))
    conflict = _unmet(A @ qd + c, A, qd)
    if conflict.any():
        qd = qd0 + split.step(A, -(A @ qd0 + c))
    w = A @ qd + c
    bad = _unmet(w, A, qd)
    if bad.any():
        culprits = [n for n, b in zip(names, bad) if b]
        raise InputError(
            f"the initial velocities cannot be made consistent: the constraints "
            f"{', '.join(culprits)} conflict at t = {t!r} (velocity "
            f"residuals {', '.join(f'{n} = {x:.3g}' for n, x in zip(names, w))})",
            about=_about(culprits))
    level.after = qd
    level.explain(A, violated, conflict, names)


def consistent_start(numeric: NumericSystem, t: float, q: np.ndarray, qd: np.ndarray,
                     report: Report | None = None, strict: bool = False,
                     given: Collection[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) on φ(q, t) = 0 and A q̇ + c = 0, keeping the values named in ``given`` where the
    constraints allow (the module's rules 1–6; seed 003, seed 001 §10.6–10.7).

    ``given`` holds coordinate names and ``<coordinate>_dot`` names the user set; None treats
    every value as given. Each changed value is reported through ``report`` with whether it was
    computed (unset) or moved (given) and the constraints concerned. With ``strict`` a move of a
    given value is an :class:`InputError`. When no state satisfies the constraints the error
    names the constraints left unsatisfied. A constrained system with an empty ``given`` is said
    through ``report`` before anything else.
    """
    say: Report = report or (lambda _message: None)
    q = np.array(q, dtype=float)
    qd = np.array(qd, dtype=float)
    if not numeric.m:
        return q, qd
    if given is not None and not given:
        say(NO_INITIAL if not np.any(q) else NO_INITIAL_IDENTITY)
    coords = numeric.coordinates
    velocities = naming.velocities(coords)
    given_q = np.array([given is None or c in given for c in coords], dtype=bool)
    given_qd = np.array([given is None or v in given for v in velocities], dtype=bool)
    M = numeric.dynamics(t, q, qd)[0]
    pos = _Level(coords, given_q, q)
    if numeric.holonomic:
        _positions(numeric, t, pos, _Split(M, given_q), M)
    vel = _Level(velocities, given_qd, qd)
    _velocities(numeric, t, pos.after, vel, _Split(M, given_qd))
    moves = pos.moves() + vel.moves()
    refused = [move for move in moves if move[3].startswith("moved")]
    if refused and strict:
        changes = "; ".join(f"{name}: {a!r} -> {b!r}" for name, a, b, _, _ in refused)
        why = refused[0][3].removeprefix("moved: ")
        raise InputError(
            f"the initial state is off the constraints and --strict-initial forbids correcting it "
            f"({changes}): {why}; give consistent initial values or leave out the ones the "
            f"constraints should compute", about=_about(refused[0][4:]))
    for name, a, b, why, _ in moves:
        say(f"initial {name}: {a!r} -> {b!r} ({why})")
    return pos.after, vel.after
