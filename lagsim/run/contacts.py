"""Unilateral contacts: gaps g(q, t) ≥ 0 and Newton's impact law (issue 27).

:class:`Contacts` compiles the gaps of a system's ``unilateral:`` constraints
(:class:`lagsim.spec.system.ContactSpec`) with their gradients, so that at a state it gives
g, G = ∂g/∂q, g_t, the rates ġ = G q̇ + g_t and the acceleration terms g̈ − G q̈ = (∂ġ/∂q) q̇ + ∂ġ/∂t.

:meth:`Contacts.impact` is the impulsive jump of the velocities at a closing contact:

    M (q̇⁺ − q̇⁻) = Aᵀ μ + G_Sᵀ Λ_S,   A q̇⁺ + c = 0,   G_S q̇⁺ + g_t,S = −e_S ġ⁻_S,

the augmented matrix of the bilateral constraints (seed 001 §10.7, seed 003) bordered by the rows
of the contacts S that take an impulse; the bilateral constraints' velocity rows are kept. Several
contacts at once follow Newton's law per contact as a linear complementarity problem (Pfeiffer and
Glocker, *Multibody Dynamics with Unilateral Contacts*, Wiley 1996, §7.2; Glocker, *Set-Valued
Force Laws*, Springer 2001, ch. 8): for each candidate i (gap closed, not separating)

    Λ_i ≥ 0,   ġ⁺_i + e_i ġ⁻_i ≥ 0,   Λ_i (ġ⁺_i + e_i ġ⁻_i) = 0,

solved exactly by enumerating the sets S of contacts that push (smallest sets first; the problem's
matrix G M_c⁻¹ Gᵀ is positive definite for independent contacts, so the solution is unique:
Cottle, Pang and Stone, *The Linear Complementarity Problem*, 1992, Thm 3.3.7).

A rough contact (``friction: mu``, ``tangent: s``) adds Coulomb's law for the tangential impulse
Λ_T along W = ∂s/∂q, the planar impact law of Glocker and Pfeiffer (Pfeiffer and Glocker 1996,
§7.2; Glocker 2001, ch. 8) with tangential restitution 0:

    M (q̇⁺ − q̇⁻) = Aᵀ μ + G_Sᵀ Λ_N + W_Sᵀ Λ_T,
    stick: ṡ⁺ = W q̇⁺ + s_t = 0 and |Λ_T| ≤ μ Λ_N;   slide: Λ_T = −σ μ Λ_N with σ ṡ⁺ ≥ 0,

enumerated, per set S, over the modes (stick, slide +, slide −) of its rough contacts (the
sticking mode first), the first that satisfies every inequality taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from functools import partial
from itertools import combinations, product

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.errors import IntegrationError
from lagsim.numeric.compile import NumericSystem, lambdify
from lagsim.output.trajectory import ImpactEvents
from lagsim.records import record
from lagsim.run.events import FUNCTIONS
from lagsim.spec.system import ContactSpec, SystemSpec

CLOSED = 1e-12
"""A gap within CLOSED·(1 + max|q|) of 0 counts as closed: that contact may take an impulse
with the one whose closing the event located."""
RESTING = 64 * 2.220446049250313e-16
"""A rate ġ⁺ ≤ RESTING·(1 + |ġ⁻|) after an impact is a contact at rest."""
DEPENDENT = 1e-9
"""Rows of held constraints whose smallest singular value is below DEPENDENT times the largest
are dependent: :meth:`Contacts.held_friction` then takes the forces of least norm."""


def dependent(rows: np.ndarray, held: int) -> bool:
    """Whether ``rows`` (the velocity rows of the bilateral and held constraints, ``held`` of
    them the contacts') are dependent (:data:`DEPENDENT`): more rows than coordinates, or, with
    two contacts held or more, a singular value below DEPENDENT times the largest (the two
    corners of a flat face resting on the floor share their tangent). One contact's rows are
    taken as independent (a contact dependent on the bilateral constraints alone is a modelling
    error that the solve reports)."""
    if len(rows) > rows.shape[1]:
        return True
    if held < 2:
        return False
    sigma = np.linalg.svd(rows, compute_uv=False)
    return bool(sigma[-1] <= DEPENDENT * sigma[0])


@record
class Impact:
    """One impact: the time, the contacts' impulses Λ (0 for those that take none), their rates
    ġ before and after, the energy h before and after (seed 001's h = q̇·∂L/∂q̇ − L), the
    velocities q̇ before and after and the tangential impulses Λ_T of the rough contacts (0
    elsewhere)."""

    t: float
    impulses: np.ndarray
    before: np.ndarray
    after: np.ndarray
    energy_before: float
    energy_after: float
    qd_before: np.ndarray
    qd_after: np.ndarray
    tangential: np.ndarray

    @property
    def loss(self) -> float:
        return self.energy_before - self.energy_after


@record
class Impacts:
    """Impacts as columns (issue 27: the thousand impacts of a run in C are kept as the arrays
    C logged them in, never one object each): ``rows`` the run's row after each, the other
    fields :class:`Impact`'s stacked, one entry per impact ((impacts × contacts) for the
    impulses, the rates and the tangential impulses, (impacts × coordinates) for q̇)."""

    rows: np.ndarray
    t: np.ndarray
    impulses: np.ndarray
    before: np.ndarray
    after: np.ndarray
    energy_before: np.ndarray
    energy_after: np.ndarray
    qd_before: np.ndarray
    qd_after: np.ndarray
    tangential: np.ndarray

    @classmethod
    def of(cls, row: int, impact: Impact) -> Impacts:
        """The one ``impact`` whose row is ``row``."""
        return cls(np.array([row]), np.array([impact.t], dtype=float),
                   *(np.asarray(v, dtype=float)[None] for v in (
                       impact.impulses, impact.before, impact.after, impact.energy_before,
                       impact.energy_after, impact.qd_before, impact.qd_after,
                       impact.tangential)))

    @classmethod
    def join(cls, blocks: Sequence[Impacts], k: int, n: int) -> Impacts:
        """``blocks`` one after the other (``k`` contacts, ``n`` coordinates)."""
        if not blocks:
            return cls(np.zeros(0, dtype=int), np.zeros(0), np.zeros((0, k)), np.zeros((0, k)),
                       np.zeros((0, k)), np.zeros(0), np.zeros(0), np.zeros((0, n)),
                       np.zeros((0, n)), np.zeros((0, k)))
        if len(blocks) == 1:
            return blocks[0]
        return cls(*(np.concatenate([getattr(b, f.name) for b in blocks])
                     for f in fields(cls)))

    @property
    def loss(self) -> np.ndarray:
        """The energy h⁻ − h⁺ each impact took."""
        return self.energy_before - self.energy_after

    def events(self, names: Sequence[str], until: float) -> ImpactEvents:
        """The events of the impacts up to ``until``: one per contact that took an impulse
        (Λ ≠ 0), in order of impacts then of contacts."""
        kept = self.t <= until
        at, j = np.nonzero(self.impulses[kept])
        index = np.flatnonzero(kept)[at]
        return ImpactEvents(tuple(names), j, self.t[index], self.impulses[index, j],
                            self.tangential[index, j], self.before[index, j],
                            self.after[index, j], self.qd_before[index], self.qd_after[index],
                            self.loss[index])


def _rows(g: se.Basic, t: se.Symbol, q: list[se.Symbol], qd: list[se.Symbol]) -> list[se.Basic]:
    """g, ∂g/∂q, ∂g/∂t and the drift (∂ġ/∂q) q̇ + ∂ġ/∂t of a function g(q, t)."""
    grad = [se.diff(g, x) for x in q]
    g_t = se.diff(g, t)
    rate = sum((a * v for a, v in zip(grad, qd)), g_t)
    drift = sum((se.diff(rate, x) * v for x, v in zip(q, qd)), se.diff(rate, t))
    return [g, *grad, g_t, drift]


class Contacts:
    """The compiled gaps of ``spec.contacts`` for ``numeric``'s coordinates and parameters."""

    def __init__(self, spec: SystemSpec, numeric: NumericSystem) -> None:
        self.specs: tuple[ContactSpec, ...] = spec.contacts
        self.names = tuple(c.name for c in spec.contacts)
        self.k = len(self.specs)
        self.n = numeric.n
        self.numeric = numeric
        t = se.Symbol("t")
        q = [se.Symbol(c) for c in numeric.coordinates]
        qd = [se.Symbol(v) for v in naming.velocities(numeric.coordinates)]
        params = [se.Symbol(p) for p in numeric.parameters]
        values = {p: v for p, v in zip(params, numeric.parameters.values())}
        self.restitution = np.array([float(se.sympify(c.restitution.expr).xreplace(values))
                                     for c in self.specs])
        self.friction = np.array([np.nan if c.friction is None else c.friction
                                  for c in self.specs])
        exprs: list[se.Basic] = []
        tangents: list[se.Basic] = []
        for c in self.specs:
            exprs.extend(_rows(se.sympify(c.gap.expr), t, q, qd))
            tangents.extend(_rows(se.sympify(c.tangent.expr) if c.tangent is not None
                                  else se.Integer(0), t, q, qd))
        arguments = (t, *q, *qd, *params)
        self._f = FUNCTIONS.get((tuple(exprs), arguments), partial(lambdify, arguments, exprs))
        self._tangent = FUNCTIONS.get((tuple(tangents), arguments),
                                      partial(lambdify, arguments, tangents))
        self.terms: tuple[tuple[se.Basic, ...], tuple[se.Basic, ...], tuple[se.Basic, ...]] = (
            (t, *q, *qd), tuple(params), tuple(exprs))
        """(arguments, parameters, expressions) of the gaps' rows [g, G, g_t, drift] per
        contact, as :meth:`evaluate` computes them (the C flights compile them:
        :mod:`lagsim.run.engines.cimpacts`)."""
        self._x = np.empty(1 + 2 * self.n + len(params))
        self._x[1 + 2 * self.n:] = list(numeric.parameters.values())

    def evaluate(self, t: float, q: np.ndarray, qd: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """g (k,), G (k, n), g_t (k,) and the drift (∂ġ/∂q) q̇ + ∂ġ/∂t (k,)."""
        n, x = self.n, self._x
        x[0] = t
        x[1:1 + n] = q
        x[1 + n:1 + 2 * n] = qd
        out = np.asarray(self._f(x), dtype=float).reshape(self.k, n + 3)
        return out[:, 0].copy(), out[:, 1:1 + n].copy(), out[:, 1 + n].copy(), out[:, 2 + n].copy()

    def tangents(self, t: float, q: np.ndarray, qd: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """W = ∂s/∂q (k, n), s_t (k,) and the drift of ṡ (k,) of the tangents (0 for a
        frictionless contact)."""
        n, x = self.n, self._x
        x[0] = t
        x[1:1 + n] = q
        x[1 + n:1 + 2 * n] = qd
        out = np.asarray(self._tangent(x), dtype=float).reshape(self.k, n + 3)
        return out[:, 1:1 + n].copy(), out[:, 1 + n].copy(), out[:, 2 + n].copy()

    def slips(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The slip velocities ṡ = W q̇ + s_t of the tangents (0 for a frictionless contact)."""
        W, s_t, _ = self.tangents(t, q, qd)
        return W @ qd + s_t

    def rates(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        _, G, g_t, _ = self.evaluate(t, q, qd)
        return G @ qd + g_t

    def closing(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Which rates ġ_i are below −RESTING·(1 + Σ_j |G_ij q̇_j| + |g_t,i|), 64 ε times the
        size of ġ_i's terms: the contacts that close. Newton's law acts only at a closing
        contact (ġ⁻ < 0 at g = 0: Pfeiffer and Glocker 1996, §7.2; Glocker 2001, ch. 8); a gap
        at 0 whose rate is within that rounding bound of 0 or above it touches at relative rest
        or separates, and takes no impulse."""
        _, G, g_t, _ = self.evaluate(t, q, qd)
        return G @ qd + g_t < -RESTING * (1.0 + self.sizes(t, q, qd))

    def sizes(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Σ_j |G_ij q̇_j| + |g_t,i|, the size of the terms of each rate ġ_i (its rounding is
        a few ε times this)."""
        _, G, g_t, _ = self.evaluate(t, q, qd)
        return np.abs(G * qd).sum(axis=1) + np.abs(g_t)

    def closed(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Which gaps are closed (:data:`CLOSED`)."""
        g = self.evaluate(t, q, qd)[0]
        return g <= CLOSED * (1.0 + float(np.abs(q).max(initial=0.0)))

    def impact(self, t: float, q: np.ndarray, qd: np.ndarray, hit: int,
               restitution: np.ndarray | None = None) -> tuple[np.ndarray, Impact]:
        """q̇⁺ and the :class:`Impact` at (t, q, q̇⁻) when contact ``hit`` closes: the
        complementarity problem of the module's docstring over the closed, non-separating
        contacts (``restitution`` replaces the contacts' e, as 0 for a plastic impact)."""
        e = self.restitution if restitution is None else restitution
        numeric = self.numeric
        _, G, g_t, _ = self.evaluate(t, q, qd)
        before = G @ qd + g_t
        closed = self.closed(t, q, qd)
        closed[hit] = True
        candidates = [i for i in range(self.k) if closed[i] and before[i] <= 0.0]
        if hit not in candidates:
            candidates.append(hit)
        target = -e * before
        scale = 1.0 + float(np.abs(before).max(initial=0.0))
        energy = numeric.energy(t, q, qd)
        W, s_t, _ = self.tangents(t, q, qd)
        for size in range(1, len(candidates) + 1):
            for push in combinations(candidates, size):
                rough = [i for i in push if not np.isnan(self.friction[i])]
                for modes in product((0, 1, -1), repeat=len(rough)):
                    slip = dict(zip(rough, modes))
                    after_qd, impulses, tangential = self.jump(t, q, qd, list(push), target,
                                                               slip)
                    after = G @ after_qd + g_t
                    if not (impulses[list(push)].min() >= -1e-12 * scale
                            and all(after[i] - target[i] >= -1e-12 * scale
                                    for i in candidates)
                            and self._coulomb(slip, impulses, tangential,
                                              W @ after_qd + s_t, scale)):
                        continue
                    return after_qd, Impact(t, impulses, before, after, energy,
                                            numeric.energy(t, q, after_qd), qd.copy(),
                                            after_qd.copy(), tangential)
        raise IntegrationError(f"no impulse satisfies Newton's law at the contacts "
                               f"{', '.join(self.names[i] for i in candidates)} (dependent "
                               "contacts?)", time=float(t))

    def _coulomb(self, slip: dict[int, int], normal: np.ndarray, tangential: np.ndarray,
                 slips: np.ndarray, scale: float) -> bool:
        """Coulomb's law at each rough contact of ``slip``: sticking (0) with |Λ_T| ≤ μΛ_N, or
        sliding (±1) with the slip velocity ṡ⁺ of that sign (Λ_T = ∓μΛ_N opposes it)."""
        for i, mode in slip.items():
            bound = self.friction[i] * normal[i]
            if mode == 0 and abs(tangential[i]) > bound + 1e-12 * scale:
                return False
            if mode != 0 and mode * slips[i] < -1e-12 * scale:
                return False
        return True

    def jump(self, t: float, q: np.ndarray, qd: np.ndarray, S: list[int], target: np.ndarray,
             slip: dict[int, int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q̇⁺, the normal impulses Λ_N (k,) and the tangential ones Λ_T (k,) that bring the
        rates of the contacts S to ``target[S]``, the bilateral constraints' velocity rows kept
        (the module's augmented system). ``slip`` gives each rough contact of S its mode:
        0 sticks (ṡ⁺ = 0, Λ_T free), ±1 slides with Λ_T = ∓μΛ_N."""
        numeric = self.numeric
        slip = slip or {}
        M = numeric.dynamics(t, q, qd)[0]
        A, c = numeric.velocity_terms(t, q)
        _, G, g_t, _ = self.evaluate(t, q, qd)
        W, s_t, _ = self.tangents(t, q, qd)
        stick = [i for i in S if slip.get(i) == 0]
        forces = np.array([G[i] - slip.get(i, 0) * self.friction[i] * W[i] if slip.get(i)
                           else G[i] for i in S] + [W[i] for i in stick]).reshape(-1, self.n)
        rows = np.concatenate((G[S], W[stick])).reshape(-1, self.n)
        rhs = np.concatenate((target[S] - g_t[S], -s_t[stick]))
        n, m, s = self.n, len(c), len(rows)
        K = np.zeros((n + m + s, n + m + s))
        K[:n, :n] = M
        K[:n, n:n + m] = -A.T
        K[:n, n + m:] = -forces.T
        K[n:n + m, :n] = A
        K[n + m:, :n] = rows
        x = np.linalg.lstsq(K, np.concatenate((M @ qd, -c, rhs)), rcond=None)[0]
        impulses = np.zeros(self.k)
        impulses[S] = x[n + m:n + m + len(S)]
        tangential = np.zeros(self.k)
        tangential[stick] = x[n + m + len(S):]
        for i in S:
            if slip.get(i):
                tangential[i] = -slip[i] * self.friction[i] * impulses[i]
        return x[:n], impulses, tangential

    def settle(self, t: float, q: np.ndarray, qd: np.ndarray, S: list[int], duration: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The end of an accumulation of impacts at the contacts S lasting ``duration`` from
        (t, q, q̇): the velocities with every contact of S at rest (ġ_S = 0, the bilateral rows
        kept; :meth:`jump` with the target 0) and the normal and tangential percussions of the
        contacts over it (:meth:`percussions`). A rough contact sticks (ṡ = 0) unless no set of
        sticking modes keeps the percussions pushing and within Coulomb's cone |T| ≤ μP; then
        it slides (the modes enumerated as in :meth:`impact`, the sticking ones first)."""
        _, G, g_t, _ = self.evaluate(t, q, qd)
        W, s_t, _ = self.tangents(t, q, qd)
        scale = 1.0 + float(np.abs(G @ qd + g_t).max(initial=0.0))
        rough = [i for i in S if not np.isnan(self.friction[i])]
        for modes in product((0, 1, -1), repeat=len(rough)):
            slip = dict(zip(rough, modes))
            after_qd = self.jump(t, q, qd, S, np.zeros(self.k), slip)[0]
            normal, tangential = self.percussions(t, q, qd, after_qd, duration, S, slip)
            if (normal[S].min() >= -1e-12 * scale
                    and self._coulomb(slip, normal, tangential, W @ after_qd + s_t, scale)):
                return after_qd, normal, tangential
        raise IntegrationError(f"the contacts {', '.join(self.names[i] for i in S)} cannot come "
                               "to rest together under Coulomb's law", time=float(t))

    def percussions(self, t: float, q: np.ndarray, qd: np.ndarray, qd_end: np.ndarray,
                    duration: float, S: list[int], slip: dict[int, int]
                    ) -> tuple[np.ndarray, np.ndarray]:
        """The normal (k,) and tangential (k,) percussions of the contacts S over ``duration``
        from (t, q, q̇) to the velocities ``qd_end``, the positions q kept: the momentum balance
        M (q̇_end − q̇) − F duration = Aᵀ μ + Σ_S (G_iᵀ P_i + W_iᵀ T_i) (impulses and forces of
        the contacts together, Pfeiffer and Glocker 1996, §7.1), of least norm where the rows
        are dependent; a sliding contact's T_i = −σ_i μ_i P_i."""
        numeric = self.numeric
        M, F, A, _ = numeric.dynamics(t, q, qd)
        _, G, _, _ = self.evaluate(t, q, qd)
        W = self.tangents(t, q, qd)[0]
        stick = [i for i in S if slip.get(i) == 0]
        forces = np.array([G[i] - slip.get(i, 0) * self.friction[i] * W[i] for i in S]
                          + [W[i] for i in stick]).reshape(-1, self.n)
        C = np.concatenate((A.reshape(-1, self.n), forces))
        x = np.linalg.lstsq(C.T, M @ (qd_end - qd) - F * duration, rcond=None)[0]
        m = len(C) - len(forces)
        normal, tangential = np.zeros(self.k), np.zeros(self.k)
        normal[S] = x[m:m + len(S)]
        tangential[stick] = x[m + len(S):]
        for i in S:
            if slip.get(i):
                tangential[i] = -slip[i] * self.friction[i] * normal[i]
        return normal, tangential

    def held(self, t: float, q: np.ndarray, qd: np.ndarray, S: list[int],
             slide: dict[int, int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q̈, the bilateral multipliers λ and the contact forces of the contacts S held closed:
        [[M, −Aᵀ, −G_Sᵀ], [A, 0, 0], [G_S, 0, 0]] [q̈; λ; λ_S] = [F; b; −drift_S] (seed 001
        §10.7's augmented matrix with the rows g̈_S = 0); a rough contact of S also sticks,
        s̈ = 0 with its tangential force λ_T, unless ``slide`` gives it the sign σ of its slip
        velocity ṡ: then it slides, its tangential force −σ μ λ_N (Coulomb; Pfeiffer and Glocker
        1996, §7.1, the sliding contact's force direction G − σ μ W with the one row G)
        (:meth:`held_friction`). Dependent rows (:func:`dependent`) take the forces of least
        norm: λ = (C M⁻¹ Dᵀ)⁺ (r − C M⁻¹ F) with the rows C, the force directions D, the right
        sides r, the pseudo-inverse dropping singular values below :data:`DEPENDENT` of the
        largest."""
        qdd, lam, normal, _ = self.held_friction(t, q, qd, S, slide)
        return qdd, lam, normal

    def held_friction(self, t: float, q: np.ndarray, qd: np.ndarray, S: list[int],
                      slide: dict[int, int] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`held` with the tangential forces of the rough contacts of S (sticking or
        sliding), in the order of those contacts."""
        numeric = self.numeric
        slide = slide or {}
        M, F, A, b = numeric.dynamics(t, q, qd)
        _, G, _, drift = self.evaluate(t, q, qd)
        rough = [i for i in S if not np.isnan(self.friction[i])]
        stick = [i for i in rough if i not in slide]
        rows, directions, drifts = G[S], G[S].copy(), drift[S]
        if rough:
            W, _, tdrift = self.tangents(t, q, qd)
            for j, i in enumerate(S):
                if i in slide:
                    directions[j] = G[i] - slide[i] * self.friction[i] * W[i]
            rows = np.concatenate((rows, W[stick]))
            directions = np.concatenate((directions, W[stick]))
            drifts = np.concatenate((drifts, tdrift[stick]))
        n, m, s = self.n, len(b), len(rows)
        C = np.concatenate((A.reshape(m, n), rows))
        if dependent(C, len(S)):
            Minv = np.linalg.inv(M)
            D = np.concatenate((A.reshape(m, n), directions))
            x = np.linalg.pinv(C @ Minv @ D.T, rcond=DEPENDENT, hermitian=not slide) @ (
                np.concatenate((b, -drifts)) - C @ Minv @ F)
            qdd = Minv @ (F + D.T @ x)
        else:
            K = np.zeros((n + m + s, n + m + s))
            K[:n, :n] = M
            K[:n, n:n + m] = -A.T
            K[:n, n + m:] = -directions.T
            K[n:n + m, :n] = A
            K[n + m:, :n] = rows
            x = np.linalg.solve(K, np.concatenate((F, b, -drifts)))
            qdd, x = x[:n], x[n:]
        normal = x[m:m + len(S)]
        sticking = dict(zip(stick, x[m + len(S):]))
        tangential = np.array([sticking[i] if i in sticking
                               else -slide[i] * self.friction[i] * normal[S.index(i)]
                               for i in rough])
        return qdd, x[:m], normal, tangential
