"""Forward sensitivities of a run (issue 26, ``simulate --sensitivities``).

For y = [q, q̇] and y' = f(t, y, p), the sensitivity s = ∂y/∂θ of a parameter or an initial value
θ obeys the forward sensitivity equations

    ṡ = f_y s + f_θ,   s(t0) = ∂y0/∂θ

(Hairer, Nørsett and Wanner, "Solving Ordinary Differential Equations I", §I.14; Hindmarsh et
al., "SUNDIALS", ACM TOMS 31 (2005) §2, CVODES's simultaneous corrector: the sensitivities are
integrated with the state as one system, the error control covering both). f_y and f_θ come from
the residual R = [M q̈ − F − Aᵀλ ; A q̈ − b] of seed 001 §10.7 (:mod:`lagsim.numeric.jacobian`):
with K = ∂R/∂(q̈, λ) = [[M, −Aᵀ], [A, 0]] and z = [q̈; λ],

    dz = −K⁻¹ (R_q s_q + R_q̇ s_q̇ + R_θ),

so q̈'s sensitivity drives ṡ_q̇ and λ's sensitivity is the multiplier column's (the derivative of
the solve for λ; with dependent constraint rows, Udwadia–Kalaba's, the least-squares solution).
R_q, R_q̇, R_θ are symbolic and compiled like the model; K is factored numerically. Baumgarte's
terms enter R's constraint rows as in the Jacobian. A constrained start is differentiated as the
consistent start is made (:func:`lagsim.run.start.start_tangent`), so s(t0) is tangent to the
constraints (Φ_q s_q + φ_θ = 0, A s_q̇ + w_q s_q + w_θ = 0); the projection stabilizer projects s
onto that tangent after each step, as it projects y onto the constraints (the derivative of the
projection at a point on the constraints).

The state of a run with P sensitivities is [y, vec(s)] of 2n(1 + P) values, one ODE. Its error
control covers y alone (``--sensitivity-errors state``, CVODES's ``errconS`` off; ``auto``'s
choice with the explicit methods): the steps, the first included, are the plain run's, so y is
the plain run's, and s, integrated by the same steps, is about as accurate as y (measured:
bench/sensitivity.py, docs/fit.md). ``joint`` (CVODES's default, ``auto``'s with the implicit
methods, whose error estimates cover their whole state) covers s as well as y. With DOP853 it
steps in the C loop (:mod:`lagsim.run.engines.cloop`, ``lagsim_loop_sensitive``: the compiled
R_q, R_q̇, R_θ, K's solve by the loop's own factorization, the projection of s in C), else in the
Python loop with scipy's methods; both give the same numbers to rounding
(tests/test_sensitivities_c.py). A row of ``--stop-when`` or ``--section`` carries s at its time
held fixed (no event-time correction).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, Location
from lagsim.numeric.compile import NumericSystem
from lagsim.numeric.jacobian import ParameterDerivatives
from lagsim.records import record
from lagsim.run.formulations import RCOND, Formulation, Report
from lagsim.run.start import start_tangent
from lagsim.spec.choices import AUTO
from lagsim.spec.expressions import suggest
from lagsim.spec.options import BY_NAME, SimulateOptions
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

FORMULATIONS = ("ode", "index1", "udwadia-kalaba")
"""The formulations whose sensitivities a run integrates (y = [q, q̇])."""
METHODS = ("DOP853", "RK45", "RK23", "Radau", "BDF", "LSODA")
"""The methods that step a run with sensitivities: scipy's (the implicit ones with the
block-diagonal Jacobian of :meth:`Sensitive.jacobian`), not the fixed-step ones."""
STATE_ERRORS = ("DOP853", "RK45", "RK23")
"""The methods that can control the error of the state alone (``--sensitivity-errors state``):
the explicit Runge–Kutta pairs, whose error norm is taken over the first 2n components
(:func:`lagsim.run.engines.python.make_solver`, the C loop's ``d->ne``)."""


@record
class Target:
    """One name of ``--sensitivities``: a parameter, or the initial value of a coordinate or
    velocity (``state`` its index in [q, q̇])."""

    name: str
    parameter: bool
    state: int = -1


def refusal(options: SimulateOptions) -> str | None:
    """Why ``options`` cannot carry sensitivities (a formulation or method that cannot), or
    None."""
    flag = options.label("sensitivities")
    if options.formulation not in (*FORMULATIONS, "auto"):
        return (f"{flag}: --formulation {options.formulation} has no sensitivities (it changes "
                f"coordinates during a run); use {', '.join(FORMULATIONS)}")
    if options.method not in METHODS:
        return (f"{flag}: --method {options.method} has no sensitivities yet; use "
                f"{', '.join(METHODS)}")
    if options.sensitivity_errors == "state" and options.method not in STATE_ERRORS:
        return (f"{options.label('sensitivity_errors')} state: {options.label('method')} "
                f"{options.method} controls the error of its whole state; use "
                f"{', '.join(STATE_ERRORS)}, or joint")
    return None


def targets(names: tuple[str, ...], numeric: NumericSystem, where: Location | None
            ) -> tuple[Target, ...]:
    """Each name as a parameter or an initial value. A file keeps the two apart (a parameter may
    not share a coordinate's name, nor have the form ``<name>_dot``), so a name is one or the
    other; anything else is an :class:`InputError`."""
    state = naming.state(numeric.coordinates)
    out = []
    for name in names:
        if name in numeric.parameters:
            out.append(Target(name, True))
        elif name in state:
            out.append(Target(name, False, state.index(name)))
        else:
            known = (*numeric.parameters, *state)
            raise InputError(f"{BY_NAME['sensitivities'].flag}: '{name}' is neither a parameter "
                             f"nor a coordinate or velocity{suggest(name, known)}; they are "
                             f"{', '.join(known)}", where)
    return tuple(out)


def columns(numeric: NumericSystem, names: tuple[str, ...]) -> tuple[str, ...]:
    """The sensitivity columns in order: for each name, each coordinate, velocity and
    multiplier."""
    of = (*naming.state(numeric.coordinates), *map(naming.multiplier, numeric.constraint_names))
    return tuple(naming.sensitivity(c, s) for s in names for c in of)


class Sensitive(Formulation):
    """``base``'s run with the sensitivities of ``targets`` carried along (module docstring)."""

    def __init__(self, base: Formulation, model: Model, spec: SystemSpec, found: tuple[Target, ...],
                 t0: float, q0: np.ndarray, qd0: np.ndarray, given: frozenset[str],
                 joint: bool = True) -> None:
        super().__init__(base.numeric, base.stabilizer, spec, model, report=base.report)
        self.base = base
        self.name = base.name  # type: ignore[misc]
        self.kinds = base.kinds  # type: ignore[misc]
        self.dependent_rows = base.dependent_rows  # type: ignore[misc]
        self.c_step = None
        self.targets = found
        self.P = len(found)
        self.joint = joint
        """Whether the step-size control measures the sensitivities with the state (else the
        state alone, ``--sensitivity-errors state``)."""
        self.extra_columns = columns(self.numeric, tuple(s.name for s in found))
        chain = dict(spec.parameter_gradients)
        weights = [{s.name: 1.0, **{p: dict(g).get(s.name, 0.0) for p, g in chain.items()
                                    if s.name in dict(g)}} if s.parameter else {}
                   for s in found]
        params = tuple(p for p in self.numeric.parameters if any(p in w for w in weights))
        self.terms = ParameterDerivatives(self.numeric, model, params)
        self.pick = np.array([[w.get(p, 0.0) for w in weights] for p in params]
                             ).reshape(len(params), self.P)
        """d(compiled parameter)/d(target): 1 for the target itself, the chain rule for the
        parameters defined from it (:attr:`SystemSpec.parameter_gradients`)."""
        self.gain = getattr(self.stabilizer, "gain", None)
        self.beta = getattr(self.stabilizer, "beta", 0.0)
        self.hol = np.array(self.numeric.holonomic, dtype=int)
        self.s0 = self._start(spec, t0, q0, qd0, given)

    def _start(self, spec: SystemSpec, t0: float, q0: np.ndarray, qd0: np.ndarray,
               given: frozenset[str]) -> np.ndarray:
        """s(t0): the derivative of the consistent start (:func:`start_tangent`), of the
        initial values as written (``x: l*sin(pi/6)`` depends on l) and of a named one (1)."""
        n = self.n
        state = naming.state(self.numeric.coordinates)
        gradients = dict(spec.initial_gradients)
        _, _, w_q, _, w_p, phi_p = self.terms(t0, q0, qd0, np.zeros(n + self.m))
        out = np.zeros((2 * n, self.P))
        for j, s in enumerate(self.targets):
            raw = np.zeros(2 * n)
            if s.parameter:
                for k, name in enumerate(state):
                    raw[k] = dict(gradients.get(name, ())).get(s.name, 0.0)
            else:
                raw[s.state] = 1.0
            keep = given | ({s.name} if not s.parameter else set())
            col = self.pick[:, j]
            s_q, s_qd = start_tangent(self.numeric, t0, q0, qd0, keep, raw[:n, None],
                                      raw[n:, None], phi_p @ col[:, None], w_q,
                                      w_p @ col[:, None])
            out[:n, j], out[n:, j] = s_q[:, 0], s_qd[:, 0]
        return out

    def _solve(self, t: float, q: np.ndarray, qd: np.ndarray, stabilized: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K⁻¹, z = [q̈; λ], A) at the state, b with the stabilizer's terms when
        ``stabilized``; K⁻¹ is the pseudo-inverse with dependent rows (one factorization serves
        z and the sensitivities)."""
        n, m = self.n, self.m
        M, F, A, b = self.numeric.dynamics(t, q, qd)
        if stabilized:
            b = self.stabilizer.adjust(t, q, qd, A, b)
        K = np.zeros((n + m, n + m))
        K[:n, :n] = M
        K[:n, n:] = -A.T
        K[n:, :n] = A
        inverse = (np.linalg.pinv(K, rcond=RCOND) if self.m and self.dependent_rows
                   else np.linalg.inv(K))
        return inverse, inverse @ np.concatenate((F, b)), A

    def _dz(self, t: float, q: np.ndarray, qd: np.ndarray, s: np.ndarray, stabilized: bool
            ) -> tuple[np.ndarray, np.ndarray]:
        """z = [q̈; λ] and dz = −K⁻¹(R_q s_q + R_q̇ s_q̇ + R_θ), (n + m, P)."""
        n = self.n
        inverse, z, A = self._solve(t, q, qd, stabilized)
        R_q, R_qd, w_q, R_p, w_p, phi_p = self.terms(t, q, qd, z)
        R_p = R_p @ self.pick
        if stabilized and self.gain is not None and self.m:
            R_q[n:] += self.gain[:, None] * w_q
            R_qd[n:] += self.gain[:, None] * A
            R_p[n:] += self.gain[:, None] * (w_p @ self.pick)
            if len(self.hol):
                R_q[n + self.hol] += self.beta**2 * self.numeric.phi(t, q)[1]
                R_p[n + self.hol] += self.beta**2 * (phi_p @ self.pick)
        return z, -(inverse @ (R_q @ s[:n] + R_qd @ s[n:] + R_p))

    def _split(self, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = 2 * self.n
        return Y[:k], Y[k:].reshape(k, self.P)

    def split_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The C loop's rows [y, vec(s), λ, vec(dλ)] (s row-major 2n-by-P, dλ m-by-P) as the
        rows [q, q̇, λ] and the values of :attr:`extra_columns`."""
        k, m, P = 2 * self.n, self.m, self.P
        count = len(rows)
        s = rows[:, k:k * (1 + P)].reshape(count, k, P)
        lam = rows[:, k * (1 + P):k * (1 + P) + m]
        dlam = rows[:, k * (1 + P) + m:].reshape(count, m, P)
        extra = np.concatenate((s, dlam), axis=1).transpose(0, 2, 1).reshape(count, -1)
        return np.hstack((rows[:, :k], lam)), extra

    def check(self, t: float, q: np.ndarray, qd: np.ndarray) -> None:
        self.base.check(t, q, qd)

    def initial(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return np.concatenate((self.base.initial(t, q, qd), self.s0.ravel()))

    def unpack(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.base.unpack(t, y[:2 * self.n])

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        n = self.n
        x, s = self._split(y)
        z, dz = self._dz(t, x[:n], x[n:], s, True)
        return np.concatenate((x[n:], z[:n], s[n:].ravel(), dz[:n].ravel()))

    def multipliers(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return self.base.multipliers(t, q, qd)

    def project(self, t: float, y: np.ndarray) -> np.ndarray | None:
        """y onto the constraints (the base's projection) and s onto their tangent there, each
        column by its least M-norm change."""
        if not self.stabilizer.projects or not self.m:
            return None
        n = self.n
        x, s = self._split(y)
        projected = self.base.project(t, x)
        x = x if projected is None else projected
        q, qd = x[:n], x[n:]
        _, _, w_q, _, w_p, phi_p = self.terms(t, q, qd, np.zeros(n + self.m))
        M = self.numeric.dynamics(t, q, qd)[0]
        s = s.copy()
        if len(self.hol):
            phi_q = self.numeric.phi(t, q)[1]
            s[:n] += _metric_steps(M, phi_q, -(phi_q @ s[:n] + phi_p @ self.pick))
        A = self.numeric.velocity_terms(t, q)[0]
        s[n:] += _metric_steps(M, A, -(A @ s[n:] + w_q @ s[:n] + w_p @ self.pick))
        return np.concatenate((x, s.ravel()))

    def after_step(self, t: float, y: np.ndarray) -> np.ndarray | None:
        return self.project(t, y) if self.stabilizer.projects else None

    def jacobian(self, model: Model) -> Callable[[float, np.ndarray], np.ndarray] | None:
        """diag(f_y, …, f_y) (1 + P blocks) for the implicit methods' Newton iteration: the
        block-diagonal approximation of the sensitivity system's Jacobian, whose neglected
        blocks ∂(f_y s + f_θ)/∂y slow the Newton iteration but leave the solution and its error
        control as they are (CVODES's simultaneous corrector, Hindmarsh et al. 2005)."""
        inner = self.base.jacobian(model)
        if inner is None:
            return None
        k, blocks = 2 * self.n, 1 + self.P

        def jac(t: float, y: np.ndarray) -> np.ndarray:
            return np.kron(np.eye(blocks), inner(t, y[:k]))

        return jac

    def extra_row(self, t: float, y: np.ndarray) -> np.ndarray:
        """The sensitivity columns at the state y: s, and λ's from the unstabilized solve (the
        multiplier column's own)."""
        n = self.n
        x, s = self._split(y)
        rows = [s]
        if self.m:
            rows.append(self._dz(t, x[:n], x[n:], s, False)[1][n:])
        return np.vstack(rows).T.ravel()


def _metric_steps(M: np.ndarray, J: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Columns δ of least M-norm with J δ = r (least squares): δ = M⁻¹Jᵀ(J M⁻¹ Jᵀ)⁺ r."""
    W = np.linalg.inv(np.linalg.cholesky(M))
    B = J @ W.T
    return W.T @ (np.linalg.pinv(B, rcond=RCOND) @ r)


def sensitive(form: Formulation, spec: SystemSpec, model: Model, options: SimulateOptions,
              t0: float, q0: np.ndarray, qd0: np.ndarray, given: frozenset[str], say: Report
              ) -> Formulation:
    """``form`` carrying the sensitivities of ``options.sensitivities`` (itself when none are
    asked for); says on ``say`` that the run steps in Python where a C loop would have run."""
    names = options.sensitivities
    if not names:
        return form
    why = refusal(options)
    if why is None and form.name not in FORMULATIONS:
        why = (f"{options.label('sensitivities')}: formulation {form.name} has no "
               f"sensitivities; use {', '.join(FORMULATIONS)}")
    if why is not None:
        raise InputError(why, options.file_location("sensitivities"))
    found = targets(names, form.numeric, options.file_location("sensitivities"))
    if options.method == "Radau":
        say(f"note: {options.label('sensitivities')}: the run steps in Python, not in the C "
            "Radau loop (which carries no sensitivities)")
    return Sensitive(form, model, spec, found, t0, q0, qd0, given, joint(options))


def joint(options: SimulateOptions) -> bool:
    """Whether the error control of the run covers the sensitivities (``--sensitivity-errors``:
    ``auto`` is ``state`` with the methods of :data:`STATE_ERRORS`, else ``joint``)."""
    errors = options.sensitivity_errors
    return errors == "joint" or (errors == AUTO and options.method not in STATE_ERRORS)
