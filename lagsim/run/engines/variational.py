"""``--method variational``: the constrained discrete Euler–Lagrange equations of the midpoint
discrete Lagrangian (issue 11).

J. E. Marsden and M. West, "Discrete mechanics and variational integrators", *Acta Numerica* 10
(2001) 357–514: §3.4 (constrained variational integrators), §3.2 (discrete forces, the
discrete Lagrange–d'Alembert principle). The motion makes the action stationary (seed
``001_80d65b968ce3cb18.txt`` §10.2–10.4); the discrete action Σ L_d(q_k, q_{k+1}) with

    L_d(q_k, q_{k+1}) = h · L((q_k + q_{k+1})/2, (q_{k+1} − q_k)/h, t_k + h/2)

is made stationary under the holonomic constraints φ(q, t) = 0 (G = φ_q), and the forces τ enter
as the discrete forces f⁻ = f⁺ = ½h τ at the same midpoint. In position–momentum form, with the
multiplier of node k split between its two sides so that the momenta satisfy the velocity
constraint too (the RATTLE form of the constrained map; E. Hairer, C. Lubich, G. Wanner,
*Geometric Numerical Integration*, 2nd ed., §VII.1.4 and §VI.6.3), one step from (q_k, p_k) is

1. p_k + D₁L_d(q_k, q_{k+1}) + f⁻ + ½h G(q_k, t_k)ᵀ λ = 0 and φ(q_{k+1}, t_{k+1}) = 0: n + m
   equations in (q_{k+1}, λ), solved by Newton's method with the exact Jacobian
   [[D₂D₁L_d + ∂f⁻/∂q_{k+1}, ½h G_kᵀ], [G_{k+1}, 0]]. The unknown is the mean velocity
   v̄ = (q_{k+1} − q_k)/h, q_{k+1} = q_k + h v̄: the momenta then carry rounding errors of
   ε|p| a step rather than ε|q|/h (from the difference of two rounded positions), so a
   Noether momentum is kept to 1e-14 over 10⁴ steps rather than 1e-12;
2. P = D₂L_d(q_k, q_{k+1}) + f⁺, then v_{k+1} and μ from ∂L/∂q̇(q_{k+1}, v_{k+1}, t_{k+1}) =
   P + ½h G_{k+1}ᵀ μ and G_{k+1} v_{k+1} + φ_t = 0 (Newton; one iteration when L is quadratic in
   q̇), p_{k+1} = ∂L/∂q̇ at the new node.

D₁L_d = ½h L_q − L_q̇ and D₂L_d = ½h L_q + L_q̇ at the midpoint; the derivatives L_q, L_q̇, L_qq,
L_qq̇, L_q̇q̇, τ, τ_q, τ_q̇ are generated symbolically once and compiled with the step loop
(:class:`lagsim.run.engines.rattle.Compiled`). Works for any Lagrangian lagsim derives, M(q) and
rheonomic constraints included; order 2; for τ = 0 symplectic, and the momentum of a symmetry
of L_d (and of the constraints) is kept to rounding (the discrete Noether theorem, Marsden and
West §1.3).
"""

from __future__ import annotations

import numpy as np
import symengine as se

from lagsim.numeric.csource import Status
from lagsim.run.engines.rattle import (
    MAX_NEWTON,
    Compiled,
    FixedStepMethod,
    StepFailed,
    step_solve,
    step_source,
    symbols,
)
from lagsim.run.problem import Problem
from lagsim.spec.expressions import diff
from lagsim.symbolic.model import Model


def lagrangian_terms(model: Model) -> list[se.Basic]:
    """L_q, L_q̇, L_qq, L_qq̇, L_q̇q̇, τ, τ_q, τ_q̇ (row-major), the derivatives a step needs."""
    q, qd = model.q, model.qd
    Lq = [diff(model.lagrangian, qi) for qi in q]
    Lv = list(model.momenta)
    tau = list(model.tau)
    out = Lq + Lv
    out += [diff(a, b) for a in Lq for b in q]
    out += [diff(a, b) for a in Lq for b in qd]
    out += [model.mass_matrix[i, j] for i in range(model.n) for j in range(model.n)]
    out += tau
    out += [diff(a, b) for a in tau for b in q]
    out += [diff(a, b) for a in tau for b in qd]
    return out


class Variational(FixedStepMethod):
    """``--method variational``: the midpoint discrete Lagrangian's constrained discrete
    Euler–Lagrange equations (Marsden and West 2001, §3.4), any Lagrangian; see the module
    docstring."""

    name = "variational"

    @classmethod
    def prepare(cls, problem: Problem) -> tuple[Compiled, np.ndarray, np.ndarray]:
        model, numeric = problem.model, problem.numeric
        state_args, pos_args, params = symbols(model)
        hol = model.holonomic
        con = ([c.expression for c in hol] + [r for c in hol for r in c.row]
               + [c.offset for c in hol])
        n, m = model.n, len(hol)
        body = step_source("variational.c", n, m)
        values = np.array([numeric.parameters[str(s)] for s in params], dtype=float)
        compiled = Compiled((("lag", state_args, lagrangian_terms(model)),
                             ("con", pos_args, con)), params, values, body, 3 * n,
                            f"memcpy(row, x, {n} * sizeof(double)); "
                            f"memcpy(row + {n}, x + {2 * n}, {n} * sizeof(double));", n, m,
                            "variational")
        q0, v0 = problem.q0, problem.qd0
        p0 = _terms(compiled, problem.t0, q0, v0, n)[1]
        state = np.ascontiguousarray(np.concatenate((q0, p0, v0)), dtype=float)
        return compiled, np.zeros(1), state

    @staticmethod
    def row(x: np.ndarray, n: int) -> np.ndarray:
        return np.concatenate((x[:n], x[2 * n:]))

    @classmethod
    def step(cls, compiled: Compiled, aux: np.ndarray, t: float, h: float,
             x: np.ndarray) -> np.ndarray:
        """One step in NumPy (the C path's ``fs_step``)."""
        n, m = len(x) // 3, compiled.m
        q, pk, v = x[:n], x[n:2 * n], x[2 * n:]
        con = compiled.functions["con"]
        Gk = con(np.concatenate(([t], q)))[m:m + m * n].reshape(m, n)
        vb, lam = v.copy(), np.zeros(m)
        q1 = q + h * vb
        K = np.zeros((n + m, n + m))
        for it in range(MAX_NEWTON + 2):
            if it > MAX_NEWTON:
                raise StepFailed(Status.STEP_NEWTON)
            Lq, Lv, Lqq, Lqv, Lvv, tau, tq, tv = _terms(compiled, t + 0.5 * h, q + 0.5 * h * vb,
                                                        vb, n)
            r = np.empty(n + m)
            r[:n] = -(pk + 0.5 * h * (Lq + tau) - Lv + 0.5 * h * (Gk.T @ lam))
            K[:n, :n] = 0.25 * h * (Lqq + tq) + 0.5 * (Lqv - Lqv.T + tv) - Lvv / h
            K[:n, n:] = 0.5 * h * Gk.T
            if m:
                out = con(np.concatenate(([t + h], q1)))
                r[n:] = -out[:m]
                K[n:, :n] = out[m:m + m * n].reshape(m, n)
            dz = step_solve(K, r)
            vb = vb + dz[:n] / h
            q1 = q + h * vb
            lam = lam + dz[n:]
            step = np.abs(dz[:n]).max()
            if not np.isfinite(step):
                raise StepFailed(Status.STEP_NONFINITE)
            if it > 0 and step <= 1e-14 * (1.0 + np.abs(q1).max()):
                break
        Lq, Lv, *_, tau, _, _ = _terms(compiled, t + 0.5 * h, q + 0.5 * h * vb, vb, n)
        P = 0.5 * h * (Lq + tau) + Lv
        v1 = vb
        out = con(np.concatenate(([t + h], q1)))
        G1, phit = out[m:m + m * n].reshape(m, n), out[m + m * n:]
        mu = np.zeros(m)
        for it in range(MAX_NEWTON + 2):
            if it > MAX_NEWTON:
                raise StepFailed(Status.STEP_NEWTON)
            _, Lv, _, _, Lvv, *_ = _terms(compiled, t + h, q1, v1, n)
            r = np.concatenate((-(Lv - P - 0.5 * h * (G1.T @ mu)), -(G1 @ v1 + phit)))
            K[:n, :n] = Lvv
            K[:n, n:] = -0.5 * h * G1.T
            K[n:, :n] = G1
            K[n:, n:] = 0.0
            dz = step_solve(K, r)
            v1 = v1 + dz[:n]
            mu = mu + dz[n:]
            step = np.abs(dz[:n]).max()
            if not np.isfinite(step):
                raise StepFailed(Status.STEP_NONFINITE)
            if step <= 1e-14 * (1.0 + np.abs(v1).max()):
                break
        p1 = _terms(compiled, t + h, q1, v1, n)[1]
        return np.concatenate((q1, p1, v1))


def _terms(compiled: Compiled, t: float, q: np.ndarray, v: np.ndarray, n: int
           ) -> list[np.ndarray]:
    """:func:`lagrangian_terms` at (t, q, v), split and shaped (C or NumPy path)."""
    args = np.concatenate(([t], q, v))
    if compiled.lib is not None:
        out = np.zeros(5 * n * n + 5 * n)
        compiled.lib.lagsim_fs_lag(args.ctypes.data, compiled.params.ctypes.data,
                                   out.ctypes.data)
    else:
        out = compiled.functions["lag"](args)
    parts, k = [], 0
    for shape in ((n,), (n,), (n, n), (n, n), (n, n), (n,), (n, n), (n, n)):
        size = int(np.prod(shape))
        parts.append(out[k:k + size].reshape(shape))
        k += size
    return parts
