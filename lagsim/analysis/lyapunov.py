"""The Lyapunov spectrum of a run (issue 28, ``lagsim lyapunov``).

Tangent vectors δy of y = (q, q̇) follow the linearized flow δẏ = J(t, y) δy, integrated with the
trajectory; J is the analytic Jacobian of the right-hand side (:class:`lagsim.numeric.jacobian.
RhsJacobian`, the one the implicit methods use). Every ``renormalize`` time units the k vectors
are re-orthonormalized by QR, Φ = QR, and log|R_ii| is added to the i-th sum; the exponents are
the sums over the time since the transient, λ_i = (1/T) Σ log|R_ii| (Benettin, Galgani, Giorgilli
and Strelcyn, Meccanica 15 (1980) 9–20 and 21–30; Shimada and Nagashima, Prog. Theor. Phys. 61
(1979) 1605–1616). Their sum is the mean of tr J exactly (Liouville: log|det Φ| = ∫ tr J dt),
which the tests hold it to: in the state (q, q̇) of a Lagrangian system that is the change of
−log det M along the run (the flow keeps the volume of (q, p), p = M q̇: Liouville), so the
sum of a conservative system tends to 0 as 1/T, not at once.

The trajectory first runs ``transient`` time units alone (to settle on its attractor), then the
vectors start from the identity. The spread of each exponent is max − min of its running estimate
over the last quarter of the run. Unconstrained systems only: on a constrained one the tangent
vectors would have to stay on the constraint manifold, which is not done yet. A system that
depends on t is treated in the state (q, q̇); the zero exponent of the time direction of its
autonomous extension is not listed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lagsim.errors import InputError, Location
from lagsim.numeric.compile import NumericSystem
from lagsim.numeric.jacobian import RhsJacobian
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model


@dataclass(frozen=True)
class LyapunovReport:
    """The exponents (largest first), their spreads, the settings, and the running estimate
    ``trace`` (times, then one row of estimates per renormalization)."""

    system: str
    state: tuple[str, ...]
    exponents: tuple[float, ...]
    spread: tuple[float, ...]
    t_end: float
    transient: float
    renormalize: float
    trace_times: tuple[float, ...]
    trace: tuple[tuple[float, ...], ...]
    final: tuple[float, ...] = ()
    """The state y(t_end) the run reached."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "state": list(self.state),
            "exponents": list(self.exponents),
            "spread": list(self.spread),
            "sum": math.fsum(self.exponents),
            "t_end": self.t_end,
            "transient": self.transient,
            "renormalize": self.renormalize,
        }

    def to_text(self) -> str:
        lines = [f"Lyapunov exponents of {self.system} over t = {self.transient:g} to "
                 f"{self.t_end:g} (renormalized every {self.renormalize:g}; Benettin et al. "
                 "1980)", f"state ({', '.join(self.state)})", ""]
        lines.append(f"{'':>4}  {'λ (1/time)':>16}  {'spread':>10}")
        for k, (value, spread) in enumerate(zip(self.exponents, self.spread), 1):
            lines.append(f"{k:>4}  {value:>16.8g}  {spread:>10.2g}")
        lines.append(f"sum {math.fsum(self.exponents):.10g} (the mean of tr J)")
        lines.append("spread: max − min of the running estimate over the last quarter of the run")
        return "\n".join(lines) + "\n"


def spectrum(spec: SystemSpec, model: Model, numeric: NumericSystem, t_end: float,
             transient: float = 0.0, renormalize: float = 1.0, largest: bool = False,
             rtol: float = 1e-10, atol: float = 1e-10) -> LyapunovReport:
    """The spectrum (module docstring) from the file's initial state at t = 0, over
    [``transient``, ``t_end``]; only the largest exponent with ``largest``."""
    from scipy.integrate import solve_ivp

    if model.m:
        raise InputError(f"system '{model.name}' has constraints; lagsim lyapunov handles "
                         "unconstrained systems only so far (write it in independent "
                         "coordinates)", spec.location)
    for value, flag in ((t_end, "--t-end"), (renormalize, "--renormalize")):
        if not (math.isfinite(value) and value > 0):
            raise InputError(f"must be a positive number, got {value!r}", Location(flag))
    if not (math.isfinite(transient) and 0 <= transient < t_end):
        raise InputError(f"must be at least 0 and below --t-end, got {transient!r}",
                         Location("--transient"))
    n = model.n
    size = 2 * n
    k = 1 if largest else size
    f = numeric.ode_rhs()
    jac = RhsJacobian(numeric, model, None, False)
    q0, qd0 = spec.initial_state()
    y = np.array([*q0, *qd0], dtype=float)

    def failed(message: str, t: float) -> InputError:
        return InputError(f"the run failed at t = {t:.6g}: {message}", spec.location)

    if transient > 0:
        sol = solve_ivp(f, (0.0, transient), y, method="DOP853", rtol=rtol, atol=atol)
        if not sol.success:
            raise failed(sol.message, float(sol.t[-1]))
        y = sol.y[:, -1]

    derivatives = jac.function
    args = np.empty(1 + 3 * n)
    out_J = np.zeros((size, size))
    out_J[:n, n:] = np.eye(n)

    def augmented(t: float, Y: np.ndarray) -> np.ndarray:
        """[f(t, y); J Φ] with M factored once: q̈ = M⁻¹F, ∂q̈/∂(q, q̇) = −M⁻¹ ∂R/∂(q, q̇)
        (:mod:`lagsim.numeric.jacobian` without constraints)."""
        q, qd = Y[:n], Y[n:size]
        M, F, _, _ = numeric.dynamics(t, q, qd)
        qdd = np.linalg.solve(M, F)
        args[0] = t
        args[1:1 + n] = q
        args[1 + n:1 + size] = qd
        args[1 + size:] = qdd
        parts = derivatives(args)
        out_J[n:] = -np.linalg.solve(M, np.hstack((parts[:n * n].reshape(n, n),
                                                   parts[n * n:2 * n * n].reshape(n, n))))
        out = np.empty_like(Y)
        out[:n] = qd
        out[n:size] = qdd
        out[size:] = (out_J @ Y[size:].reshape(size, k)).reshape(-1)
        return out

    Phi = np.eye(size)[:, :k]
    sums = np.zeros(k)
    t = transient
    times: list[float] = []
    rows: list[tuple[float, ...]] = []
    steps = max(1, math.ceil((t_end - transient) / renormalize - 1e-9))
    for step in range(steps):
        t_next = transient + min((step + 1) * renormalize, t_end - transient)
        sol = solve_ivp(augmented, (t, t_next), np.concatenate([y, Phi.reshape(-1)]),
                        method="DOP853", rtol=rtol, atol=atol)
        if not sol.success:
            raise failed(sol.message, float(sol.t[-1]))
        Y = sol.y[:, -1]
        y = Y[:size]
        Q, R = np.linalg.qr(Y[size:].reshape(size, k))
        signs = np.sign(np.diag(R))
        signs[signs == 0] = 1.0
        Phi = Q * signs
        sums += np.log(np.abs(np.diag(R)))
        t = t_next
        times.append(t)
        rows.append(tuple(sums / (t - transient)))
    trace = np.array(rows)
    tail = trace[len(trace) - max(1, len(trace) // 4):]
    spread = tuple(float(x) for x in tail.max(axis=0) - tail.min(axis=0))
    names = (*model.coordinates, *(str(v) for v in model.qd))
    return LyapunovReport(system=model.name, state=names,
                          exponents=tuple(float(x) for x in trace[-1]), spread=spread,
                          t_end=t_end, transient=transient, renormalize=renormalize,
                          trace_times=tuple(times), trace=tuple(rows),
                          final=tuple(float(x) for x in y))
