"""The Lyapunov spectrum of a run (issue 28, ``lagsim lyapunov``).

Tangent vectors δy of y = (q, q̇) follow the linearized flow δẏ = J(t, y) δy, integrated with the
trajectory; J is the analytic Jacobian of the right-hand side (:class:`lagsim.numeric.jacobian.
RhsJacobian`'s implicit differentiation of the augmented system, the one the implicit methods
use). Every ``renormalize`` time units the k vectors are re-orthonormalized by QR, Φ = QR, and
log|R_ii| is added to the i-th sum; the exponents are the sums over the time since the transient,
λ_i = (1/T) Σ log|R_ii| (Benettin, Galgani, Giorgilli and Strelcyn, Meccanica 15 (1980) 9–20 and
21–30; Shimada and Nagashima, Prog. Theor. Phys. 61 (1979) 1605–1616). Their sum is the mean of
tr J (Liouville: log|det Φ| = ∫ tr J dt), which the tests hold it to: in the state (q, q̇) of a
Lagrangian system that is the change of −log det M along the run (the flow keeps the volume of
(q, p), p = M q̇), so the sum of a conservative system tends to 0 as 1/T, not at once.

**Constraints.** With m_h holonomic constraints φ(q, t) = 0 and m_v velocity constraints
A_v(q, t) q̇ + c_v = 0 the motion lives on the manifold

    𝓜 = {φ = 0, φ_q q̇ + φ_t = 0, A_v q̇ + c_v = 0}  ⊂ R^{2n},

of dimension d = 2n − 2m_h − m_v (for independent rows; the rank of G below in general). The
index-1 equations ([[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b], seed 003's augmented system, seed 001
§10.7) keep the acceleration-level constraints only, so φ and the velocity residuals w = A q̇ + c
are not restored but drift linearly: in R^{2n} their tangent flow has m_h + m extra directions
with exponent 0 that belong to no motion of the system. The tangent vectors are therefore kept
in the tangent space T_y𝓜 = null G(y), with the rows of

    G = [[φ_q, 0], [∂w/∂q, A]]

(the holonomic rows, then every constraint's velocity residual): Φ starts in null G
(:func:`first_frame`) and is projected onto it, Φ ← N Nᵀ Φ with N an orthonormal basis of null G
(the right singular vectors of G beyond its rank), before every QR; the base state is moved
back onto 𝓜 there as well (:func:`lagsim.run.formulations.project_state`). The index-1 flow
keeps 𝓜 invariant (φ̈ = 0 and ẇ = 0 hold along it), so its tangent flow maps T𝓜 into T𝓜 and
the projection only removes the integration's drift; the exponents are the d of the flow on 𝓜.
Their values do not depend on the coordinates (a change of coordinates moves a tangent vector's
length by a bounded factor, which vanishes in (1/T) log); the finite-T estimates do, by O(1/T).

The file's initial state is first moved onto 𝓜 (as the starts are). The trajectory first runs
``transient`` time units alone (to settle on its attractor), then the vectors start from the
identity (on 𝓜: the projected unit vectors, :func:`first_frame`). The spread of each exponent
is max − min of its running estimate over the last quarter of the run; with ``starts`` > 1 the
run is repeated from initial states moved by ``perturbation`` (independent normal deviates times
perturbation·(1 + |y_i|), from ``numpy.random.default_rng(seed)``, then projected onto 𝓜) and the
spread over starts is max − min of the final exponents over all starts. The exponents reported
are those of the file's own initial state. A system that depends on t is treated in the state
(q, q̇); the zero exponent of the time direction of its autonomous extension is not listed.

**Where it steps.** The tangent flow between renormalizations is the forward sensitivity of
the state to its initial value (:mod:`lagsim.run.sensitivity`, Φ(t) = ∂y(t)/∂y(t_i) · Φ(t_i)), so
the C DOP853 loop's sensitivity stepping (:meth:`lagsim.run.engines.cloop.CLoop.flow`,
``lagsim_loop_sensitive``) integrates [y, vec(Φ)] from the current orthonormal vectors
Φ(t_i) = Q over each interval, restarted at each as ``solve_ivp`` is, with the joint error
control (``--sensitivity-errors joint``: the step size watches the tangent vectors too, on whose
accuracy the exponents rest), the formulation ode, or with constraints index1 unstabilized (the
equations above; the projections onto 𝓜 and T𝓜 before each QR stay in Python). That is the
same ODE, method and error norm as the Python path, so the two agree to rounding and the
tolerances (tests/test_lyapunov.py). The transient runs in the same loop without sensitivities.
The Python path (scipy's ``solve_ivp`` on :class:`_Tangent`, ``loop=False``) remains for
constraint rows dependent at the start (index1's K is singular; :class:`_Tangent` takes the
least-squares solutions, which the C loop's index1 does not) and where the C loop cannot run at
all (no C compiler, a model without C code: :func:`lagsim.run.engines.cloop.loop_or_refusal`'s
reasons, as ``simulate`` falls back); :attr:`LyapunovReport.loop` says which ran.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, IntegrationError, Location
from lagsim.numeric.compile import NumericSystem
from lagsim.numeric.jacobian import RhsJacobian
from lagsim.records import record
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

MAX_STARTS = 1000
"""The most starts one call runs (each is a whole run)."""
RANK_TOLERANCE = 1e-10
"""A singular value of G counts (a constraint row is independent) above this times the largest."""
FRAME_TOLERANCE = 1e-6
"""A projected unit vector shorter than this after removing the earlier ones adds no direction
(:func:`first_frame`)."""


@record
class LyapunovReport:
    """The exponents (largest first), their spreads, the settings, and the running estimate
    ``trace`` (times, then one row of estimates per renormalization) of the first start."""

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
    dimension: int = 0
    """d, the dimension of the state manifold: 2n − 2m_h − m_v (module docstring)."""
    constraints: int = 0
    """The number of independent rows of G (m_h + m), 0 without constraints."""
    starts: int = 1
    seed: int = 0
    perturbation: float = 0.0
    spread_starts: tuple[float, ...] = ()
    """max − min of each exponent over the starts (empty with one start)."""
    by_start: tuple[tuple[float, ...], ...] = ()
    """The exponents of every start, the file's own first."""
    loop: bool = False
    """Whether the flows stepped in the C loop (module docstring, "Where it steps")."""

    def trace_columns(self) -> tuple[list[str], np.ndarray]:
        """The running estimates as a table: the columns ``t, lyapunov_1, …`` (named in
        :mod:`lagsim.naming`) and their rows, as ``--trace`` writes them and ``plot --kind
        lyapunov`` draws them."""
        columns = [naming.TIME, *(naming.exponent(k + 1) for k in range(len(self.exponents)))]
        rows = np.column_stack([np.array(self.trace_times, dtype=float),
                                np.array(self.trace, dtype=float).reshape(
                                    len(self.trace_times), len(self.exponents))])
        return columns, rows

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "system": self.system,
            "state": list(self.state),
            "dimension": self.dimension,
            "exponents": list(self.exponents),
            "spread": list(self.spread),
            "sum": math.fsum(self.exponents),
            "t_end": self.t_end,
            "transient": self.transient,
            "renormalize": self.renormalize,
            "starts": self.starts,
        }
        if self.starts > 1:
            out.update(seed=self.seed, perturbation=self.perturbation,
                       spread_starts=list(self.spread_starts),
                       by_start=[list(row) for row in self.by_start])
        return out

    def to_text(self) -> str:
        lines = [f"Lyapunov exponents of {self.system} over t = {self.transient:g} to "
                 f"{self.t_end:g} (renormalized every {self.renormalize:g}; Benettin et al. "
                 "1980)", f"state ({', '.join(self.state)})"]
        if self.constraints:
            lines.append(f"on the constraint manifold: dimension {self.dimension} = "
                         f"2·{len(self.state) // 2} − {self.constraints} independent rows of "
                         "[φ_q 0; ∂w/∂q A]")
        lines.append("")
        many = self.starts > 1
        head = f"{'':>4}  {'λ (1/time)':>16}  {'spread':>10}"
        lines.append(head + (f"  {'starts':>10}" if many else ""))
        for k, (value, spread) in enumerate(zip(self.exponents, self.spread), 1):
            row = f"{k:>4}  {value:>16.8g}  {spread:>10.2g}"
            lines.append(row + (f"  {self.spread_starts[k - 1]:>10.2g}" if many else ""))
        lines.append(f"sum {math.fsum(self.exponents):.10g} (" + (
            "the mean growth rate of volumes in the manifold's tangent space)" if self.constraints
            else "the mean of tr J)"))
        lines.append("spread: max − min of the running estimate over the last quarter of the run")
        if many:
            lines.append(f"starts: max − min over {self.starts} starts (the file's, and "
                         f"{self.starts - 1} moved by {self.perturbation:g}·(1 + |y_i|) normal "
                         f"deviates, seed {self.seed})")
        return "\n".join(lines) + "\n"


def tangent_basis(G: np.ndarray, size: int) -> np.ndarray:
    """An orthonormal basis (size, d) of null G: the right singular vectors beyond G's rank."""
    if not G.shape[0]:
        return np.eye(size)
    _, s, Vt = np.linalg.svd(G)
    rank = int(np.sum(s > RANK_TOLERANCE * max(1.0, float(s[0]))))
    return Vt[rank:].T


def first_frame(N: np.ndarray) -> np.ndarray:
    """The start of the tangent vectors: the projections N Nᵀ e_1, N Nᵀ e_2, … of the state's
    unit vectors in turn, orthonormalized (Gram–Schmidt), each one that lies within
    :data:`FRAME_TOLERANCE` of the span of those before skipped. The projector N Nᵀ does not
    depend on which basis N of null G the SVD returned, so neither does the frame: the same
    manifold written with repeated constraint rows starts from the same vectors. Without
    constraints it is the identity."""
    size, d = N.shape
    P = N @ N.T
    frame: list[np.ndarray] = []
    for i in range(size):
        v = P[:, i].copy()
        for u in frame:
            v -= (u @ v) * u
        norm = float(np.linalg.norm(v))
        if norm > FRAME_TOLERANCE:
            frame.append(v / norm)
        if len(frame) == d:
            break
    return np.column_stack(frame)


class _Tangent:
    """The right-hand side [f(t, y); J Φ] of the index-1 equations and their tangent flow, and
    G(t, y) (module docstring). K = [[M, −Aᵀ], [A, 0]] is factored once per call:
    ∂(q̈, λ)/∂x = −K⁻¹ ∂R/∂x (:mod:`lagsim.numeric.jacobian`)."""

    def __init__(self, numeric: NumericSystem, model: Model) -> None:
        self.numeric = numeric
        self.n, self.m = model.n, model.m
        self.derivatives = RhsJacobian(numeric, model, None, False).function
        self.args = np.empty(1 + 3 * self.n + self.m)
        self.hol = np.array(numeric.holonomic, dtype=int)
        self.J = np.zeros((2 * self.n, 2 * self.n))
        self.J[:self.n, self.n:] = np.eye(self.n)
        self.solve: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.linalg.solve

    def dependent_rows(self, t: float, y: np.ndarray) -> None:
        """With rows of A that repeat others at (t, y) (Udwadia–Kalaba's redundant constraints,
        seed 004) K is singular but K [q̈; λ] = r and the system for ∂q̈ stay consistent: the
        least-squares solutions give the unique q̈ and ∂q̈ (as :class:`RhsJacobian`)."""
        from lagsim.run.formulations import dependent_constraints

        if dependent_constraints(self.numeric, t, y[:self.n], y[self.n:]):
            self.solve = _least_squares

    def _solve(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """z = [q̈; λ] and K at (t, y)."""
        n, m = self.n, self.m
        M, F, A, b = self.numeric.dynamics(t, y[:n], y[n:])
        K = np.zeros((n + m, n + m))
        K[:n, :n] = M
        K[:n, n:] = -A.T
        K[n:, :n] = A
        return self.solve(K, np.concatenate((F, b))), K

    def _parts(self, t: float, y: np.ndarray, z: np.ndarray) -> np.ndarray:
        """[∂R/∂q, ∂R/∂q̇, ∂w/∂q] (flat) at (t, y) and z."""
        args = self.args
        args[0] = t
        args[1:1 + 2 * self.n] = y
        args[1 + 2 * self.n:] = z
        return self.derivatives(args)

    def base(self, t: float, y: np.ndarray) -> np.ndarray:
        return np.concatenate((y[self.n:], self._solve(t, y)[0][:self.n]))

    def augmented(self, k: int) -> Callable[[float, np.ndarray], np.ndarray]:
        n, m, size = self.n, self.m, 2 * self.n
        rows = (n + m) * n

        def rhs(t: float, Y: np.ndarray) -> np.ndarray:
            z, K = self._solve(t, Y[:size])
            parts = self._parts(t, Y[:size], z)
            D = -self.solve(K, np.hstack((parts[:rows].reshape(n + m, n),
                                               parts[rows:2 * rows].reshape(n + m, n))))
            self.J[n:] = D[:n]
            out = np.empty_like(Y)
            out[:n] = Y[n:size]
            out[n:size] = z[:n]
            out[size:] = (self.J @ Y[size:].reshape(size, k)).reshape(-1)
            return out

        return rhs

    def constraint_rows(self, t: float, y: np.ndarray) -> np.ndarray:
        """G(t, y) = [[φ_q, 0], [∂w/∂q, A]] ((m_h + m), 2n)."""
        n, m = self.n, self.m
        if not m:
            return np.zeros((0, 2 * n))
        parts = self._parts(t, y, self._solve(t, y)[0])
        rows = (n + m) * n
        w_q = parts[2 * rows:].reshape(m, n)
        A, _ = self.numeric.velocity_terms(t, y[:n])
        G = np.zeros((len(self.hol) + m, 2 * n))
        if len(self.hol):
            G[:len(self.hol), :n] = self.numeric.phi(t, y[:n])[1]
        G[len(self.hol):, :n] = w_q
        G[len(self.hol):, n:] = A
        return G


def _least_squares(K: np.ndarray, r: np.ndarray) -> np.ndarray:
    return np.linalg.lstsq(K, r, rcond=None)[0]


def spectrum(spec: SystemSpec, model: Model, numeric: NumericSystem, t_end: float,
             transient: float = 0.0, renormalize: float = 1.0, largest: bool = False,
             rtol: float = 1e-10, atol: float = 1e-10, starts: int = 1, seed: int = 0,
             perturbation: float = 1e-6, loop: bool = True) -> LyapunovReport:
    """The spectrum (module docstring) from the file's initial state at t = 0, over
    [``transient``, ``t_end``]; only the largest exponent with ``largest``; with ``starts`` > 1
    also from ``starts`` − 1 nearby initial states (``seed``, ``perturbation``). ``loop``: step
    in the C loop where it can (module docstring, "Where it steps"); False keeps to scipy."""
    for value, flag in ((t_end, "--t-end"), (renormalize, "--renormalize")):
        if not (math.isfinite(value) and value > 0):
            raise InputError(f"must be a positive number, got {value!r}", Location(flag))
    if not (math.isfinite(transient) and 0 <= transient < t_end):
        raise InputError(f"must be at least 0 and below --t-end, got {transient!r}",
                         Location("--transient"))
    if isinstance(starts, bool) or not isinstance(starts, int) or not 1 <= starts <= MAX_STARTS:
        raise InputError(f"must be a whole number from 1 to {MAX_STARTS}, got {starts!r}",
                         Location("--starts"))
    if not (math.isfinite(perturbation) and perturbation > 0):
        raise InputError(f"must be a positive number, got {perturbation!r}",
                         Location("--perturbation"))
    flow = _Tangent(numeric, model)
    q0, qd0 = spec.initial_state()
    y0 = _on_manifold(numeric, 0.0, np.array([*q0, *qd0], dtype=float))
    flow.dependent_rows(0.0, y0)
    rng = np.random.default_rng(seed)
    stepper = _Stepper(spec, model, numeric, flow, t_end, rtol, atol, loop)
    runs = []
    try:
        for index in range(starts):
            y = y0 if index == 0 else _on_manifold(
                numeric, 0.0,
                y0 + perturbation * (1.0 + np.abs(y0)) * rng.standard_normal(y0.size))
            runs.append(_run(spec, flow, stepper, y, t_end, transient, renormalize, largest))
    finally:
        stepper.close()
    times, trace, final, rank = runs[0]
    tail = trace[len(trace) - max(1, len(trace) // 4):]
    spread = tuple(float(x) for x in tail.max(axis=0) - tail.min(axis=0))
    finals = np.array([run[1][-1] for run in runs])
    names = (*model.coordinates, *(str(v) for v in model.qd))
    return LyapunovReport(
        system=model.name, state=names, exponents=tuple(float(x) for x in trace[-1]),
        spread=spread, t_end=t_end, transient=transient, renormalize=renormalize,
        trace_times=tuple(times), trace=tuple(tuple(float(x) for x in row) for row in trace),
        final=tuple(float(x) for x in final), dimension=2 * model.n - rank, constraints=rank,
        starts=starts, seed=seed, perturbation=perturbation,
        spread_starts=(tuple(float(x) for x in finals.max(axis=0) - finals.min(axis=0))
                       if starts > 1 else ()),
        by_start=tuple(tuple(float(x) for x in row) for row in finals),
        loop=stepper.c)


def _on_manifold(numeric: NumericSystem, t: float, y: np.ndarray) -> np.ndarray:
    if not numeric.m:
        return y
    from lagsim.run.formulations import project_state

    n = numeric.n
    q, qd, _ = project_state(numeric, t, y[:n], y[n:])
    return np.concatenate((q, qd))


class _Stepper:
    """The base flow y(t0) → y(t1) and the tangent flow [y, Φ](t0) → [y, Φ](t1) (k columns):
    the C loops (:meth:`lagsim.run.engines.cloop.CLoop.flow`, one per k, made when first
    needed), else scipy's DOP853 on :class:`_Tangent` (module docstring, "Where it steps")."""

    def __init__(self, spec: SystemSpec, model: Model, numeric: NumericSystem, flow: _Tangent,
                 t_end: float, rtol: float, atol: float, loop: bool) -> None:
        self.spec, self.model, self.flow = spec, model, flow
        self.t_end, self.rtol, self.atol = t_end, rtol, atol
        self.loops: dict[int, Any] = {}
        self.rhs: dict[int, Callable[[float, np.ndarray], np.ndarray]] = {}
        self.c = (loop and flow.solve is not _least_squares
                  and _c_loop(spec, model, numeric, t_end, 0, rtol, atol, self.loops))

    def failed(self, message: str, t: float) -> IntegrationError:
        """scipy's DOP853 gave up at t: the error the C loop raises for it (a failed run, exit
        status 1, not an input error)."""
        from lagsim.run.monitor import integrator_failed

        return integrator_failed("DOP853", message, t)

    def base(self, t0: float, y: np.ndarray, t1: float) -> np.ndarray:
        if self.c:
            return np.asarray(self.loops[0].flow(t0, y, t1))
        from scipy.integrate import solve_ivp

        sol = solve_ivp(self.flow.base, (t0, t1), y, method="DOP853", rtol=self.rtol,
                        atol=self.atol)
        if not sol.success:
            raise self.failed(sol.message, float(sol.t[-1]))
        return np.asarray(sol.y[:, -1])

    def tangent(self, t0: float, y: np.ndarray, Phi: np.ndarray, t1: float
                ) -> tuple[np.ndarray, np.ndarray]:
        size, k = Phi.shape
        Y0 = np.concatenate([y, Phi.reshape(-1)])
        if self.c:
            if k not in self.loops:
                _c_loop(self.spec, self.model, self.flow.numeric, self.t_end, k, self.rtol,
                        self.atol, self.loops)
            Y = np.asarray(self.loops[k].flow(t0, Y0, t1))
        else:
            from scipy.integrate import solve_ivp

            if k not in self.rhs:
                self.rhs[k] = self.flow.augmented(k)
            sol = solve_ivp(self.rhs[k], (t0, t1), Y0, method="DOP853", rtol=self.rtol,
                            atol=self.atol)
            if not sol.success:
                raise self.failed(sol.message, float(sol.t[-1]))
            Y = sol.y[:, -1]
        return Y[:size], Y[size:].reshape(size, k)

    def close(self) -> None:
        for loop in self.loops.values():
            loop.close()


def _c_loop(spec: SystemSpec, model: Model, numeric: NumericSystem, t_end: float, k: int,
            rtol: float, atol: float, into: dict[int, Any]) -> bool:
    """The C loop of the run with the sensitivities to k initial values (none: the plain run;
    :meth:`CLoop.flow` starts them from any Φ), DOP853, joint error control, the formulation
    index1 unstabilized (ode without constraints), put in ``into[k]``; False where the C loop
    cannot run (no C compiler, no C code of the model, a loop that could not be built, which
    :func:`lagsim.run.engines.cloop.library` says on stderr); any other refusal is a bug here,
    not a reason to step in Python."""
    from lagsim import naming
    from lagsim.run.engines.cloop import CLoop, loop_or_refusal
    from lagsim.run.problem import Problem
    from lagsim.spec.options import SimulateOptions

    flags: dict[str, Any] = dict(t_end=t_end, method="DOP853", rtol=rtol, atol=atol,
                                 formulation="index1" if numeric.m else "ode", stabilize="none")
    if k:
        flags.update(sensitivities=naming.state(numeric.coordinates)[:k],
                     sensitivity_errors="joint")
    options = SimulateOptions.resolve({}, flags)
    loop = loop_or_refusal(Problem.build(spec, model, options, numeric=numeric))
    if isinstance(loop, str):
        if "C code" in loop or "C compiler" in loop or "could not be built" in loop:
            return False
        raise RuntimeError(f"the C loop refused the tangent flow: {loop}")
    if not isinstance(loop, CLoop):
        raise RuntimeError(f"the C loop of the tangent flow is a {type(loop).__name__}")
    into[k] = loop
    return True


def _run(spec: SystemSpec, flow: _Tangent, stepper: _Stepper, y: np.ndarray, t_end: float,
         transient: float, renormalize: float, largest: bool
         ) -> tuple[list[float], np.ndarray, np.ndarray, int]:
    """One start: the times, the running estimates (rows), y(t_end), and rank G."""
    numeric = flow.numeric
    size = y.size
    if transient > 0:
        y = _on_manifold(numeric, transient, stepper.base(0.0, y, transient))
    N = tangent_basis(flow.constraint_rows(transient, y), size)
    rank = size - N.shape[1]
    k = 1 if largest else N.shape[1]
    Phi = first_frame(N)[:, :k]
    sums = np.zeros(k)
    t = transient
    times: list[float] = []
    rows: list[np.ndarray] = []
    steps = max(1, math.ceil((t_end - transient) / renormalize - 1e-9))
    for step in range(steps):
        t_next = transient + min((step + 1) * renormalize, t_end - transient)
        y, Phi = stepper.tangent(t, y, Phi, t_next)
        if numeric.m:
            y = _on_manifold(numeric, t_next, y)
            N = tangent_basis(flow.constraint_rows(t_next, y), size)
            Phi = N @ (N.T @ Phi)
        Q, R = np.linalg.qr(Phi)
        signs = np.sign(np.diag(R))
        signs[signs == 0] = 1.0
        Phi = Q * signs
        sums += np.log(np.abs(np.diag(R)))
        t = t_next
        times.append(t)
        rows.append(sums / (t - transient))
    return times, np.array(rows), y, rank
