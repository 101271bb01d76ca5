"""The analytic Jacobian ∂y'/∂y of the right-hand side, for the implicit methods (issue 9).

Radau, BDF and LSODA solve a nonlinear system at every step with the Jacobian of y' = f(t, y);
without one, scipy estimates it by finite differences, one right-hand side per column, in Python.
lagsim has the symbolic model, so it differentiates instead.

For y = [q, q̇] and the accelerations from the augmented system (seed 001 §10.7, seed 003's
augmented matrix) write the residual

    R(q, q̇, q̈, λ, t) = [M(q,t) q̈ − F(q,q̇,t) − A(q,t)ᵀλ ;  A(q,t) q̈ − b(q,q̇,t)],

so that K [q̈; λ] = [F; b] with K = ∂R/∂(q̈, λ) = [[M, −Aᵀ], [A, 0]]. Differentiating R = 0,

    ∂(q̈, λ)/∂x = −K⁻¹ ∂R/∂x,   x = q or q̇,

and ∂y'/∂y = [[0, I], [∂q̈/∂q, ∂q̈/∂q̇]]. Only ∂R/∂q and ∂R/∂q̇ at given (q̈, λ) are symbolic
(compiled like the model's functions, with the parameters as run-time inputs); K is factored
numerically at run time, never inverted symbolically. Without constraints K = M (seed 001 eq.
10.12–10.14). Baumgarte's b − gain·(A q̇ + c) − β²φ adds gain·∂w/∂q + β²φ_q and gain·A to the
constraint rows (w = A q̇ + c, the velocity residual). With dependent rows (Udwadia–Kalaba,
seed 004) K is singular but the system for ∂q̈ stays consistent; the least-squares solution gives
the unique ∂q̈.

The symbolic derivatives cost O(n³) differentiations, so they are built only when an implicit
method is asked for, once per model structure per process (the compile memo).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Protocol

import numpy as np
import symengine as se

from lagsim.numeric.compile import NumericSystem, compile_functions, function_binder
from lagsim.numeric.memo import Memo
from lagsim.spec.expressions import diff, kinks
from lagsim.symbolic.model import Model

IMPLICIT = frozenset(("Radau", "BDF", "LSODA"))
"""The methods that take a Jacobian (scipy's ``jac`` argument)."""


def _residual_rows(model: Model) -> tuple[list[se.Symbol], list[se.Basic], list[se.Basic]]:
    """The multiplier symbols λ, the rows of R(q, q̇, q̈, λ, t) and the velocity residuals w."""
    n, m = model.n, model.m
    lam = [se.Symbol(f"_lagsim_lambda{k}") for k in range(m)]
    M, F, A, b = model.mass_matrix, model.forcing, model.A, model.b
    rows = []
    for i in range(n):
        expr = sum((M[i, j] * model.qdd[j] for j in range(n)), -F[i])
        rows.append(expr - sum((A[k, i] * lam[k] for k in range(m)), se.Integer(0)))
    for k in range(m):
        rows.append(sum((A[k, j] * model.qdd[j] for j in range(n)), -b[k]))
    return lam, rows, [c.velocity_form for c in model.constraints]


def residual_derivatives(model: Model) -> tuple[list[se.Symbol], list[se.Basic]]:
    """Arguments (t, q, q̇, q̈, λ) and the flat list [∂R/∂q, ∂R/∂q̇, ∂w/∂q] (row-major)."""
    lam, rows, w = _residual_rows(model)
    d = diff if kinks(*rows, *w) else se.diff
    d_q = [d(r, x) for r in rows for x in model.q]
    d_qd = [d(r, x) for r in rows for x in model.qd]
    d_w = [d(wk, x) for wk in w for x in model.q]
    args = [model.t, *model.q, *model.qd, *model.qdd, *lam]
    return args, d_q + d_qd + d_w


class RhsJacobian:
    """``jac(t, y) -> (2n, 2n)`` of the right-hand side of ``ode``, ``index1`` or
    ``udwadia-kalaba`` (y = [q, q̇]) with the stabilizer ``stabilizer`` (none, projection, or
    Baumgarte, whose gains enter the constraint rows)."""

    def __init__(self, numeric: NumericSystem, model: Model, stabilizer: object,
                 dependent_rows: bool) -> None:
        self.numeric = numeric
        self.n, self.m = numeric.n, numeric.m
        args, exprs = residual_derivatives(model)
        params = list(model.substitutions())
        values = [numeric.parameters[str(p)] for p in params]
        self.function = compile_functions(self.n, self.m, (("jacobian", args, exprs),),
                                          params, values)["jacobian"]
        """The compiled derivatives of the residual (the C Radau loop calls it by address)."""
        self._x = np.empty(len(args))
        self.gain = getattr(stabilizer, "gain", None)
        self.beta = getattr(stabilizer, "beta", 0.0)
        self.hol = np.array(numeric.holonomic, dtype=int)
        self.dependent_rows = dependent_rows

    def __call__(self, t: float, y: np.ndarray) -> np.ndarray:
        n, m = self.n, self.m
        q, qd = y[:n], y[n:]
        M, F, A, b = self.numeric.dynamics(t, q, qd)
        K = np.zeros((n + m, n + m))
        K[:n, :n] = M
        K[:n, n:] = -A.T
        K[n:, :n] = A
        if self.gain is not None and m:
            _, c = self.numeric.velocity_terms(t, q)
            b = b - self.gain * (A @ qd + c)
            if len(self.hol):
                b[self.hol] -= self.beta**2 * self.numeric.phi(t, q)[0]
        solve = self._lstsq if self.dependent_rows else np.linalg.solve
        z = solve(K, np.concatenate((F, b)))
        x = self._x
        x[0] = t
        x[1:1 + n] = q
        x[1 + n:1 + 2 * n] = qd
        x[1 + 2 * n:] = z
        out = self.function(x)
        size = (n + m) * n
        R_q = out[:size].reshape(n + m, n)
        R_qd = out[size:2 * size].reshape(n + m, n)
        if self.gain is not None and m:
            w_q = out[2 * size:].reshape(m, n)
            R_q[n:] += self.gain[:, None] * w_q
            R_qd[n:] += self.gain[:, None] * A
            if len(self.hol):
                R_q[n + self.hol] += self.beta**2 * self.numeric.phi(t, q)[1]
        D = -solve(K, np.hstack((R_q, R_qd)))
        J = np.zeros((2 * n, 2 * n))
        J[:n, n:] = np.eye(n)
        J[n:] = D[:n]
        return J

    @staticmethod
    def _lstsq(K: np.ndarray, r: np.ndarray) -> np.ndarray:
        return np.linalg.lstsq(K, r, rcond=None)[0]


class ParameterDerivatives:
    """The compiled ∂R/∂q, ∂R/∂q̇, ∂w/∂q (as :class:`RhsJacobian`'s) and ∂R/∂p, ∂w/∂p, ∂φ/∂p
    for the parameters ``names`` (issue 26's forward sensitivities ṡ = f_y s + f_p, Hindmarsh et
    al., "SUNDIALS", ACM TOMS 31 (2005) §2 (CVODES); f_p through the same implicit
    differentiation of R = 0 as f_y, module docstring). ``__call__(t, q, qd, z)`` at
    z = [q̈; λ] returns (R_q, R_qd, w_q, R_p, w_p, φ_p) with shapes (n+m, n), (n+m, n), (m, n),
    (n+m, P), (m, P), (m_h, P); the rows of φ_p are the holonomic constraints in order."""

    def __init__(self, numeric: NumericSystem, model: Model, names: tuple[str, ...]) -> None:
        self.n, self.m, self.P = numeric.n, numeric.m, len(names)
        key: tuple[object, ...] = (("spec", model.structure_key, tuple(model.parameters), names)
                                   if model.structure_key is not None else (id(model), names))
        made = _DERIVATIVES.get(key, lambda: _derivatives(model, names))
        if model.structure_key is None and made[0]() is not model:  # an id reused
            _DERIVATIVES.clear()
            made = _DERIVATIVES.get(key, lambda: _derivatives(model, names))
        _, self.mh, params, bind, size = made
        values = np.array([numeric.parameters[str(p)] for p in params], dtype=float)
        self.function = bind(values)["sensitivity"]
        self._x = np.empty(size)

    def __call__(self, t: float, q: np.ndarray, qd: np.ndarray, z: np.ndarray
                 ) -> tuple[np.ndarray, ...]:
        n, m, P, mh = self.n, self.m, self.P, self.mh
        x = self._x
        x[0] = t
        x[1:1 + n] = q
        x[1 + n:1 + 2 * n] = qd
        x[1 + 2 * n:] = z
        out = self.function(x)
        sizes = ((n + m, n), (n + m, n), (m, n), (n + m, P), (m, P), (mh, P))
        parts = []
        k = 0
        for rows_, cols in sizes:
            parts.append(out[k:k + rows_ * cols].reshape(rows_, cols))
            k += rows_ * cols
        return tuple(parts)


def _derivatives(model: Model, names: tuple[str, ...]) -> Derivatives:
    """The symbolic part of :class:`ParameterDerivatives` (module docstring)."""
    lam, rows, w = _residual_rows(model)
    phis = [c.expression for c in model.holonomic]
    d = diff if kinks(*rows, *w) else se.diff
    ps = [se.Symbol(name) for name in names]
    exprs = ([d(r, x) for r in rows for x in model.q]
             + [d(r, x) for r in rows for x in model.qd]
             + [d(wk, x) for wk in w for x in model.q] + [d(r, p) for r in rows for p in ps]
             + [d(wk, p) for wk in w for p in ps] + [d(f, p) for f in phis for p in ps])
    args = [model.t, *model.q, *model.qd, *model.qdd, *lam]
    params = tuple(model.substitutions())
    bind = function_binder(model.n, model.m, (("sensitivity", args, exprs),), params)
    return weakref.ref(model), len(phis), params, bind, len(args)


Derivatives = tuple[weakref.ref, int, tuple[se.Symbol, ...],
                    Callable[[np.ndarray], dict[str, Callable[[np.ndarray], np.ndarray]]], int]
"""(the model, m_h, its parameters, the binder of the compiled derivatives, the inputs)."""
_DERIVATIVES: Memo[Derivatives] = Memo(16)
"""The symbolic derivatives of :class:`ParameterDerivatives` by model structure (a model built
from a spec: its :attr:`~lagsim.symbolic.model.Model.structure_key` and parameter names, which
determine the expressions, as :func:`lagsim.numeric.compile.compile_model` keys the model's
code; another model: its id, checked against the weak reference held) and names: a fit's runs
at new parameter values, each with a model of its own, bind them again instead of
differentiating and hashing the model for each run."""


class Formulated(Protocol):
    """What :func:`rhs_jacobian` reads of a formulation
    (:class:`lagsim.run.formulations.Formulation`, which lives above this module)."""

    @property
    def name(self) -> str: ...
    @property
    def numeric(self) -> NumericSystem: ...
    @property
    def stabilizer(self) -> object: ...
    @property
    def dependent_rows(self) -> bool: ...
    def report(self, message: str, /) -> None: ...


_MADE: weakref.WeakKeyDictionary[Formulated, RhsJacobian] = weakref.WeakKeyDictionary()
"""The Jacobian made for each formulation object (once per run, where the warning is said)."""


def rhs_jacobian(form: Formulated, model: Model
                 ) -> Callable[[float, np.ndarray], np.ndarray] | None:
    """The analytic Jacobian of ``form``'s right-hand side, or None when the formulation has no
    y = [q, q̇] state (``reduced`` integrates its independent coordinates only)."""
    if form.name not in ("ode", "index1", "udwadia-kalaba"):
        return None
    cached = _MADE.get(form)
    if cached is None:
        rough = kinks(model.lagrangian, *model.tau, *(c.expression for c in model.constraints))
        if rough:
            form.report(f"warning: the equations of motion are not smooth where the argument "
                        f"of {', '.join(map(str, rough[:3]))}{' ...' if len(rough) > 3 else ''} "
                        "is 0 (abs bends there, sign jumps); there the analytic Jacobian of "
                        "Radau, BDF and LSODA is wrong, so they may take tiny steps or fail: an "
                        "explicit method (DOP853, RK45) is more reliable across such points")
        cached = RhsJacobian(form.numeric, model, form.stabilizer, form.dependent_rows)
        _MADE[form] = cached
    return cached
