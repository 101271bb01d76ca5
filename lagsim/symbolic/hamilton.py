"""Hamilton's form of a Lagrangian quadratic in the velocities (issue 10, `derive --form hamilton`).

For L = ½ q̇ᵀ M(q, t) q̇ + b(q, t)·q̇ + L₀(q, t) (seed ``001_80d65b968ce3cb18.txt`` §10.6: M is
∂²L/∂q̇², which then does not depend on q̇) the Legendre transform is

    p = ∂L/∂q̇ = M q̇ + b,    q̇ = M⁻¹(p − b),    H(q, p, t) = p·q̇ − L = ½ (p − b)ᵀ M⁻¹ (p − b) − L₀,

and Hamilton's equations, with the generalized forces τ and the constraint forces Aᵀλ of
M q̈ = F + Aᵀλ (§10.7) added to ṗ, are

    q̇ = ∂H/∂p,    ṗ = −∂H/∂q + τ + Aᵀλ.

H equals the energy function h = q̇·∂L/∂q̇ − L at the same state. This module holds the parts
(M, b, L₀) and the numerical Hamiltonian (:func:`numeric_hamiltonian`), which solves
M q̇ = p − b at run time and never inverts M symbolically; the printed form is
:mod:`lagsim.symbolic.forms.hamilton`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.errors import InputError
from lagsim.records import record
from lagsim.spec.expressions import diff
from lagsim.symbolic.model import Model


@record
class QuadraticParts:
    """L = ½ q̇ᵀ M q̇ + b·q̇ + L₀ (symengine): ``M`` (n×n), ``b`` (n×1), ``L0``."""

    M: se.DenseMatrix
    b: se.DenseMatrix
    L0: se.Basic


def quadratic_parts(model: Model) -> QuadraticParts:
    """M, b and L₀ of L; :class:`InputError` when L is not quadratic in q̇ (M = ∂²L/∂q̇²
    depends on q̇), naming the entry."""
    rest = {v: 0 for v in model.qd}
    velocities = set(model.qd)
    M = model.mass_matrix
    for i in range(model.n):
        for j in range(model.n):
            moving = velocities & se.sympify(M[i, j]).free_symbols
            if moving:
                raise InputError(
                    f"L is not quadratic in the velocities: ∂²L/∂q̇² depends on "
                    f"{', '.join(sorted(map(str, moving)))} (entry {model.coordinates[i]}, "
                    f"{model.coordinates[j]}), so p = ∂L/∂q̇ cannot be solved for q̇ in closed "
                    "form; the Hamiltonian form is printed only for L = ½ q̇ᵀM(q)q̇ + b·q̇ + L₀")
    b = se.DenseMatrix(model.n, 1, [se.sympify(model.momenta[i]).subs(rest)
                                    for i in range(model.n)])
    L0 = se.sympify(model.lagrangian).subs(rest)
    return QuadraticParts(M=M, b=b, L0=L0)


def momentum_names(model: Model) -> list[str]:
    """``p_<q>`` for each coordinate."""
    return [naming.momentum(name) for name in model.coordinates]


def adjugate(M: se.DenseMatrix) -> se.DenseMatrix:
    """The adjugate (transposed cofactors) of a small square matrix, by SymEngine's
    determinants of the minors: for display only (M⁻¹ = adj M / det M, never used to compute).
    SymPy's berkowitz det and adjugate took 2.3 s of issue 8's messy3 (their dotprodsimp)."""
    n = M.rows
    adj = se.zeros(n, n)
    for i in range(n):
        for j in range(n):
            rows = [r for r in range(n) if r != j]
            cols = [c for c in range(n) if c != i]
            minor = se.DenseMatrix(n - 1, n - 1, [M[r, c] for r in rows for c in cols])
            adj[i, j] = (-1) ** (i + j) * (minor.det() if n > 1 else se.Integer(1))
    return adj


@record
class NumericHamiltonian:
    """Numeric H(t, q, p), the momenta p(t, q, q̇) and the right-hand side of Hamilton's
    equations for y = (q, p) of an unconstrained model (M q̇ = p − b solved at run time)."""

    n: int
    _parts: Callable
    _rates: Callable

    def _split(self, t: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        n = self.n
        out = np.asarray(self._parts(np.concatenate([[t], q])), dtype=float).reshape(-1)
        return out[:n * n].reshape(n, n), out[n * n:n * n + n], float(out[-1])

    def velocities(self, t: float, q: np.ndarray, p: np.ndarray) -> np.ndarray:
        M, b, _ = self._split(t, q)
        return np.linalg.solve(M, p - b)

    def momenta(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        M, b, _ = self._split(t, q)
        return M @ qd + b

    def hamiltonian(self, t: float, q: np.ndarray, p: np.ndarray) -> float:
        """H = ½ (p − b)ᵀ M⁻¹ (p − b) − L₀."""
        M, b, L0 = self._split(t, q)
        v = np.linalg.solve(M, p - b)
        return 0.5 * float((p - b) @ v) - L0

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """(q̇, ṗ) = (M⁻¹(p − b), ∂L/∂q + τ at that q̇)."""
        n = self.n
        q, p = y[:n], y[n:]
        qd = self.velocities(t, q, p)
        pd = np.asarray(self._rates(np.concatenate([[t], q, qd])), dtype=float).reshape(-1)
        return np.concatenate([qd, pd])


def numeric_hamiltonian(model: Model) -> NumericHamiltonian:
    """The compiled Hamiltonian of an unconstrained model quadratic in q̇ (parameters
    substituted); :class:`InputError` for a constrained one or one not quadratic in q̇."""
    if model.m:
        raise InputError("the numeric Hamiltonian is for systems without constraints")
    parts = quadratic_parts(model)
    subs = model.substitutions()
    n = model.n
    flat = [parts.M[i, j] for i in range(n) for j in range(n)] + list(parts.b) + [parts.L0]
    flat = [se.sympify(e).subs(subs) for e in flat]
    rates = [(diff(model.lagrangian, model.q[i]) + model.tau[i]).subs(subs) for i in range(n)]
    args_q = [model.t, *model.q]
    return NumericHamiltonian(
        n=n,
        _parts=se.Lambdify(args_q, flat, cse=True, backend="lambda"),
        _rates=se.Lambdify([*args_q, *model.qd], rates, cse=True, backend="lambda"),
    )
