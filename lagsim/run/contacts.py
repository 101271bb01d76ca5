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
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.errors import IntegrationError
from lagsim.numeric.compile import NumericSystem, lambdify
from lagsim.spec.system import ContactSpec, SystemSpec

CLOSED = 1e-12
"""A gap within CLOSED·(1 + max|q|) of 0 counts as closed: that contact may take an impulse
with the one whose closing the event located."""
RESTING = 64 * 2.220446049250313e-16
"""A rate ġ⁺ ≤ RESTING·(1 + |ġ⁻|) after an impact is a contact at rest."""


@dataclass(frozen=True)
class Impact:
    """One impact: the time, the contacts' impulses Λ (0 for those that take none), their rates
    ġ before and after, the energy h before and after (seed 001's h = q̇·∂L/∂q̇ − L) and the
    velocities q̇ before and after."""

    t: float
    impulses: np.ndarray
    before: np.ndarray
    after: np.ndarray
    energy_before: float
    energy_after: float
    qd_before: np.ndarray
    qd_after: np.ndarray

    @property
    def loss(self) -> float:
        return self.energy_before - self.energy_after


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
        exprs: list[se.Basic] = []
        for c in self.specs:
            g = se.sympify(c.gap.expr)
            grad = [se.diff(g, x) for x in q]
            g_t = se.diff(g, t)
            rate = sum((a * v for a, v in zip(grad, qd)), g_t)
            drift = sum((se.diff(rate, x) * v for x, v in zip(q, qd)), se.diff(rate, t))
            exprs.extend([g, *grad, g_t, drift])
        self._f = lambdify([t, *q, *qd, *params], exprs)
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

    def rates(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        _, G, g_t, _ = self.evaluate(t, q, qd)
        return G @ qd + g_t

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
        for size in range(1, len(candidates) + 1):
            for push in combinations(candidates, size):
                after_qd, impulses = self.jump(t, q, qd, list(push), target)
                after = G @ after_qd + g_t
                if (impulses[list(push)].min() >= -1e-12 * scale
                        and all(after[i] - target[i] >= -1e-12 * scale for i in candidates)):
                    return after_qd, Impact(t, impulses, before, after, energy,
                                            numeric.energy(t, q, after_qd), qd.copy(),
                                            after_qd.copy())
        raise IntegrationError(f"no impulse satisfies Newton's law at the contacts "
                               f"{', '.join(self.names[i] for i in candidates)} (dependent "
                               "contacts?)", time=float(t))

    def jump(self, t: float, q: np.ndarray, qd: np.ndarray, S: list[int], target: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
        """q̇⁺ and the impulses Λ (k,) that bring the rates of the contacts S to ``target[S]``,
        the bilateral constraints' velocity rows kept (the module's augmented system)."""
        numeric = self.numeric
        M = numeric.dynamics(t, q, qd)[0]
        A, c = numeric.velocity_terms(t, q)
        _, G, g_t, _ = self.evaluate(t, q, qd)
        n, m, s = self.n, len(c), len(S)
        K = np.zeros((n + m + s, n + m + s))
        K[:n, :n] = M
        K[:n, n:n + m] = -A.T
        K[:n, n + m:] = -G[S].T
        K[n:n + m, :n] = A
        K[n + m:, :n] = G[S]
        x = np.linalg.lstsq(K, np.concatenate((M @ qd, -c, target[S] - g_t[S])), rcond=None)[0]
        impulses = np.zeros(self.k)
        impulses[S] = x[n + m:]
        return x[:n], impulses

    def held(self, t: float, q: np.ndarray, qd: np.ndarray, S: list[int]
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q̈, the bilateral multipliers λ and the contact forces of the contacts S held closed:
        [[M, −Aᵀ, −G_Sᵀ], [A, 0, 0], [G_S, 0, 0]] [q̈; λ; λ_S] = [F; b; −drift_S] (seed 001
        §10.7's augmented matrix with the rows g̈_S = 0)."""
        numeric = self.numeric
        M, F, A, b = numeric.dynamics(t, q, qd)
        _, G, _, drift = self.evaluate(t, q, qd)
        n, m, s = self.n, len(b), len(S)
        K = np.zeros((n + m + s, n + m + s))
        K[:n, :n] = M
        K[:n, n:n + m] = -A.T
        K[:n, n + m:] = -G[S].T
        K[n:n + m, :n] = A
        K[n + m:, :n] = G[S]
        x = np.linalg.solve(K, np.concatenate((F, b, -drift[S])))
        return x[:n], x[n:n + m], x[n + m:]
