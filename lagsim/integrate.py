"""Integrate a compiled system with one of the seeds' ways of handling constraints (issue 3).

Shaped like scipy's ``_ivp``: one base class, :class:`Formulation`, whose subclass contract is
written as numbered rules, the concrete classes registered by name in :data:`FORMULATIONS`; the
stabilizers in :data:`STABILIZERS`; every option validated up front by
:meth:`SimulateOptions.resolve`, with messages that name the option.

The equations are those of docs/architecture.md: ``M q̈ = F + Aᵀλ`` and ``A q̈ = b`` (seed
``001_80d65b968ce3cb18.txt`` §10.7, seed ``003_88d23709419132a0.txt``).

* ``ode``: M q̈ = F for unconstrained systems (001 eq. 10.12–10.14).
* ``index1``: [[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b], the augmented system of seed 003.
* ``udwadia-kalaba``: q̈ = a + M^{-1/2}(A M^{-1/2})⁺(b − A a) with a = M⁻¹F (seed
  ``004_2a8ddee2a66c9af0.txt``). M^{-1/2} is replaced by the Cholesky factor: with M = L Lᵀ,
  Gauss's principle min (q̈ − a)ᵀM(q̈ − a) subject to A q̈ = b is solved by z = Lᵀ(q̈ − a), the
  minimum-norm solution of (A L^{-T}) z = b − A a; this is the seed's formula with the square root
  L in place of M^{1/2} (any B with BBᵀ = M gives the same q̈). Q_c = L z, and λ is the
  minimum-norm solution of Aᵀλ = Q_c.
* ``reduced``: 002's minimal coordinates (``lagsim.reduce``), the eliminated coordinates and the
  multipliers rebuilt at each sample (seed ``002_485a91571cac8ced.txt`` §23.5).

Design of the run (why the solver is driven by hand): projection must change the state after
each accepted step, which ``solve_ivp`` cannot do. Restarting a solver after every step would
throw away its step-size control and, for multistep methods, its history. So
:func:`simulate` drives the ``OdeSolver`` object itself: after ``solver.step()`` it takes the
step's ``dense_output()`` (the interpolant from the step's start, which is the projected state of
the previous step, to its end) when a sample time or the ``--stop-when`` event falls inside the
step (only then: DOP853's interpolant costs three more evaluations per step; a sample at the
step's end is the step's end state), reads them from it, and only then replaces the solver's
state by the projected one (``y``; for the one-step methods also the stored derivative ``f``
that the next step reuses, for BDF the first row of its difference table). Samples taken inside
a step are projected the same way, so every row lies on the constraints. LSODA keeps its state in
Fortran and cannot be corrected in place, so projection with LSODA is refused. Events are
located by a sign change of the expression between the ends of a step and ``brentq`` on the
dense output.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import symengine as se
from scipy.integrate import BDF, DOP853, LSODA, RK23, RK45, OdeSolver, Radau
from scipy.optimize import brentq

from lagsim.compile import NumericSystem, compile_model, lambdify
from lagsim.errors import InputError, IntegrationError, Location
from lagsim.expressions import Source, parse_expression, suggest
from lagsim.model import Model, check_regular
from lagsim.spec import Setting, SystemSpec
from lagsim.trajectory import Trajectory

METHODS: Mapping[str, type[OdeSolver]] = {
    "RK45": RK45, "RK23": RK23, "DOP853": DOP853, "Radau": Radau, "BDF": BDF, "LSODA": LSODA,
}
RCOND = 1e-12
"""Relative cut-off of singular values in every pseudo-inverse (dependent constraint rows)."""
REPORT_THRESHOLD = 1e-12
"""A corrected initial value is reported (and refused under strict_initial) above this change."""

Report = Callable[[str], None]


# ---------------------------------------------------------------------------------------------
# options


def _default_baumgarte() -> tuple[float, float]:
    return (5.0, 5.0)


@dataclass(frozen=True)
class SimulateOptions:
    """The validated settings of one run; build it with :meth:`resolve`.

    ``samples`` equally spaced sample times including both ends, or a spacing ``dt`` (then
    ``samples`` is ``None``; the last row is ``t_end`` even when ``dt`` does not divide the span).
    ``baumgarte`` is (α, β) of the stabilizer −2α·φ̇ − β²·φ (holonomic) and −α·w (velocity).
    """

    t_start: float = 0.0
    t_end: float = 10.0
    samples: int | None = 1001
    dt: float | None = None
    method: str = "DOP853"
    rtol: float = 1e-10
    atol: float = 1e-10
    formulation: str = "auto"
    stabilize: str = "projection"
    baumgarte: tuple[float, float] = (5.0, 5.0)
    stop_when: str | None = None
    stop_when_location: Location | None = None
    strict_initial: bool = False

    KEYS: ClassVar[tuple[str, ...]] = (
        "t_start", "t_end", "samples", "dt", "method", "rtol", "atol", "formulation",
        "stabilize", "baumgarte", "stop_when", "strict_initial",
    )

    @classmethod
    def resolve(cls, settings: Mapping[str, Setting], flags: Mapping[str, Any]) -> SimulateOptions:
        """Merge the YAML ``simulate:`` settings and the command-line ``flags`` (a flag wins).

        ``flags`` maps the option names of :attr:`KEYS` (``t_end``, not ``--t-end``) to values,
        ``None`` meaning "not given". A bad value is an :class:`InputError` that names the option
        as the user wrote it (``--rtol`` or ``simulate.rtol`` with the file location).
        """
        unknown = [k for k in list(settings) + list(flags) if k not in cls.KEYS]
        if unknown:
            raise InputError(f"unknown simulate option '{unknown[0]}'"
                             f"{suggest(unknown[0], cls.KEYS)}; the options are "
                             f"{', '.join(cls.KEYS)}")
        given: dict[str, tuple[Any, str, Location | None]] = {}
        for key, setting in settings.items():
            given[key] = (setting.value, f"simulate.{key}", setting.location)
        flag_given = {k: v for k, v in flags.items() if v is not None}
        if "samples" in flag_given and "dt" in flag_given:
            raise InputError("give either --samples or --dt, not both")
        if "samples" in flag_given or "dt" in flag_given:
            given.pop("samples", None)
            given.pop("dt", None)
        elif "samples" in given and "dt" in given:
            raise InputError("give either simulate.samples or simulate.dt, not both",
                             given["dt"][2])
        for key, value in flag_given.items():
            given[key] = (value, "--" + key.replace("_", "-"), None)

        values: dict[str, Any] = {}
        for key, (raw, label, loc) in given.items():
            values[key] = _PARSERS[key](raw, label, loc)
        if "dt" in values:
            values["samples"] = None
        t_start = values.get("t_start", cls.t_start)
        t_end = values.get("t_end", cls.t_end)
        if not t_end > t_start:
            key = "t_end" if "t_end" in given else "t_start"
            _, label, loc = given[key]
            raise InputError(f"{label} must leave t_end greater than t_start, got t_start = "
                             f"{t_start!r} and t_end = {t_end!r}", loc)
        if "stop_when" in given:
            values["stop_when_location"] = given["stop_when"][2] or Location("--stop-when")
        return cls(**values)

    def sample_times(self) -> np.ndarray:
        """The sample times, both ends included."""
        t0, t1 = self.t_start, self.t_end
        if self.dt is None:
            return np.linspace(t0, t1, self.samples or 2)
        count = math.floor((t1 - t0) / self.dt * (1 + 1e-12))
        times = t0 + self.dt * np.arange(count + 1)
        if t1 - times[-1] > 1e-9 * self.dt:
            times = np.append(times, t1)
        times[-1] = min(times[-1], t1)
        return times


def _fail(label: str, message: str, loc: Location | None) -> InputError:
    return InputError(f"{label} {message}", loc)


def _number(raw: Any, label: str, loc: Location | None) -> float:
    if isinstance(raw, bool):
        raise _fail(label, f"must be a number, got {raw!r}", loc)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise _fail(label, f"must be a number, got {raw!r}", loc) from None
    if not math.isfinite(value):
        raise _fail(label, f"must be a finite number, got {raw!r}", loc)
    return value


def _positive(raw: Any, label: str, loc: Location | None) -> float:
    value = _number(raw, label, loc)
    if value <= 0:
        raise _fail(label, f"must be positive, got {raw!r}", loc)
    return value


def _samples(raw: Any, label: str, loc: Location | None) -> int:
    value = _number(raw, label, loc)
    if value != int(value) or value < 2:
        raise _fail(label, f"must be a whole number of at least 2 (both ends are samples), got "
                    f"{raw!r}", loc)
    return int(value)


def _choice(options: tuple[str, ...], what: str) -> Callable[[Any, str, Location | None], str]:
    def parse(raw: Any, label: str, loc: Location | None) -> str:
        text = str(raw).strip()
        folded = {o.lower(): o for o in options}
        if text.lower() in folded:
            return folded[text.lower()]
        raise _fail(label, f"must be one of {', '.join(options)}; {text!r} is not a known {what}"
                    f"{suggest(text, options)}", loc)
    return parse


def _baumgarte(raw: Any, label: str, loc: Location | None) -> tuple[float, float]:
    parts = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(parts, (list, tuple)) or len(parts) != 2:
        raise _fail(label, f"must be two numbers ALPHA,BETA (e.g. 5,5), got {raw!r}", loc)
    alpha, beta = (_number(p, label, loc) for p in parts)
    if alpha < 0 or beta < 0:
        raise _fail(label, f"must be two non-negative numbers ALPHA,BETA, got {raw!r}", loc)
    return alpha, beta


def _stop_when(raw: Any, label: str, loc: Location | None) -> str:
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)) or not str(raw).strip():
        raise _fail(label, f"must be an expression such as 'y' or 'lambda_table', got {raw!r}",
                    loc)
    return str(raw).strip()


def _flag(raw: Any, label: str, loc: Location | None) -> bool:
    if not isinstance(raw, bool):
        raise _fail(label, f"must be true or false, got {raw!r}", loc)
    return raw


# ---------------------------------------------------------------------------------------------
# linear algebra shared by the formulations, the projection and the consistent start


def _factor(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, W) with M = L Lᵀ (Cholesky) and W = L⁻¹, so M⁻¹ = WᵀW; raises LinAlgError unless M is
    positive definite. NumPy only: scipy's triangular solves cost milliseconds here."""
    L = np.linalg.cholesky(M)
    return L, np.linalg.inv(L)


def _min_norm(B: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The minimum-norm least-squares solution B⁺r, singular values below RCOND·σ_max cut."""
    if B.size == 0:
        return np.zeros(B.shape[1])
    U, s, Vt = np.linalg.svd(B, full_matrices=False)
    keep = s > RCOND * s[0] if s.size else s > 0
    return Vt[keep].T @ ((U[:, keep].T @ r) / s[keep])


def _metric_step(W: np.ndarray, J: np.ndarray, r: np.ndarray) -> np.ndarray:
    """δ of least M-norm (M⁻¹ = WᵀW) with J δ = r in the least-squares sense."""
    return W.T @ _min_norm(J @ W.T, r)


def _rank(A: np.ndarray) -> int:
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > RCOND * max(s[0], 1.0)))


def _dependent_rows(A: np.ndarray) -> list[int]:
    """Rows of A that are combinations of the rows before them."""
    out = []
    rank = 0
    for k in range(A.shape[0]):
        r = _rank(A[:k + 1])
        if r == rank:
            out.append(k)
        rank = r
    return out


# ---------------------------------------------------------------------------------------------
# stabilizers


class Stabilizer:
    """Keeps a constrained run on its constraints.

    1. ``name`` is the registry key in :data:`STABILIZERS`.
    2. ``adjust(t, q, qd, A, b)`` returns the right-hand side b of A q̈ = b the formulation
       solves with (fresh or the same array; never modifies ``b`` in place).
    3. ``projects`` says whether the driver calls :func:`project_state` after each step.
    """

    name: ClassVar[str] = "none"
    projects: ClassVar[bool] = False

    def __init__(self, numeric: NumericSystem, options: SimulateOptions) -> None:
        self.numeric = numeric

    def adjust(self, t: float, q: np.ndarray, qd: np.ndarray, A: np.ndarray, b: np.ndarray
               ) -> np.ndarray:
        return b


class Baumgarte(Stabilizer):
    """b − 2α·φ̇ − β²·φ for holonomic rows and b − α·(a·q̇ + c) for velocity rows (issue 3).

    Two more compiled calls per right-hand side (φ and the velocity offsets c)."""

    name = "baumgarte"

    def __init__(self, numeric: NumericSystem, options: SimulateOptions) -> None:
        super().__init__(numeric, options)
        self.alpha, self.beta = options.baumgarte
        m = numeric.m
        self.hol = np.array(numeric.holonomic, dtype=int)
        gain = np.full(m, self.alpha)
        gain[self.hol] = 2 * self.alpha
        self.gain = gain

    def adjust(self, t: float, q: np.ndarray, qd: np.ndarray, A: np.ndarray, b: np.ndarray
               ) -> np.ndarray:
        _, c = self.numeric.velocity_terms(t, q)
        out = b - self.gain * (A @ qd + c)
        if len(self.hol):
            phi, _ = self.numeric.phi(t, q)
            out[self.hol] -= self.beta**2 * phi
        return out


class Projection(Stabilizer):
    """After each accepted step, q onto φ = 0 and q̇ onto A q̇ + c = 0 (:func:`project_state`)."""

    name = "projection"
    projects = True


STABILIZERS: Mapping[str, type[Stabilizer]] = {
    "none": Stabilizer, "baumgarte": Baumgarte, "projection": Projection,
}


def project_state(numeric: NumericSystem, t: float, q: np.ndarray, qd: np.ndarray,
                  max_iter: int = 8) -> tuple[np.ndarray, np.ndarray, bool]:
    """The state moved onto the constraints: (q, q̇, converged).

    Positions by Gauss–Newton on φ(q, t) = 0, each step the least M-norm correction
    δ = −M⁻¹Φ_qᵀ(Φ_q M⁻¹ Φ_qᵀ)⁺φ; velocities by the M-orthogonal projection onto A q̇ + c = 0
    (M = M(q) at the incoming state: the kinetic-energy metric, seed 001 §10.6).
    """
    _, W = _factor(numeric.dynamics(t, q, qd)[0])
    q = np.array(q, dtype=float)
    converged = True
    if numeric.holonomic:
        converged = False
        for _ in range(max_iter):
            phi, phi_q = numeric.phi(t, q)
            scale = 1.0 + np.abs(phi_q).max(initial=0.0) * (1.0 + np.abs(q).max())
            if np.abs(phi).max() <= 1e-15 * scale:
                converged = True
                break
            delta = _metric_step(W, phi_q, -phi)
            q += delta
            if np.abs(delta).max() <= 4e-16 * (1.0 + np.abs(q).max()):
                converged = True
                break
    A, c = numeric.velocity_terms(t, q)
    qd = np.array(qd, dtype=float)
    if len(c):
        qd += _metric_step(W, A, -(A @ qd + c))
    return q, qd, converged


# ---------------------------------------------------------------------------------------------
# formulations


class Formulation:
    """One way of turning the constrained equations into an ODE y' = f(t, y).

    Subclass contract (the driver, :func:`simulate`, relies on each rule):

    1. ``name`` is the key in :data:`FORMULATIONS`; ``constrained`` is False only for ``ode``.
    2. ``__init__(numeric, stabilizer, spec, model)`` prepares buffers only; it raises
       :class:`InputError` when the formulation cannot apply to the system at all.
    3. ``check(t, q, qd)`` raises :class:`InputError` when it cannot run from this (consistent)
       start, with a message that says which formulation can.
    4. ``initial(t, q, qd)`` gives the solver's y0; ``unpack(t, y)`` gives the full (q, q̇) back.
    5. ``rhs(t, y)`` returns a fresh array y' (the solver keeps references to it); it makes one
       compiled call (``numeric.dynamics``) and one linear solve, plus what the stabilizer adds.
    6. ``multipliers(t, q, qd)`` returns λ (m,) recomputed from the state (zeros without
       constraints).
    7. ``project(t, y)`` returns the projected y, or None when the formulation has nothing to
       project; it may raise :class:`IntegrationError`.
    8. ``after_step(t, y)`` is called after every accepted step, after that step's samples were
       taken (and unpacked); a non-None result replaces the solver's state (projection, or
       ``reduced``'s switch of coordinate partition, whose y then has a new meaning).
    """

    name: ClassVar[str] = ""
    constrained: ClassVar[bool] = True
    c_step: Callable | None = None
    """DOP853's step in C for ``rhs`` (:mod:`lagsim.cstep`), when the formulation has one."""

    def __init__(self, numeric: NumericSystem, stabilizer: Stabilizer,
                 spec: SystemSpec | None = None, model: Model | None = None) -> None:
        self.numeric = numeric
        self.stabilizer = stabilizer
        self.n = numeric.n
        self.m = numeric.m

    def check(self, t: float, q: np.ndarray, qd: np.ndarray) -> None:
        return None

    def initial(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return np.concatenate((q, qd))

    def unpack(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return y[:self.n].copy(), y[self.n:].copy()

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def multipliers(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def after_step(self, t: float, y: np.ndarray) -> np.ndarray | None:
        return self.project(t, y) if self.stabilizer.projects else None

    def project(self, t: float, y: np.ndarray) -> np.ndarray | None:
        if not self.stabilizer.projects or not self.m:
            return None
        q, qd, converged = project_state(self.numeric, t, y[:self.n], y[self.n:])
        if not converged:
            raise IntegrationError("the projection onto the constraints did not converge; "
                                   "the constraints may be singular here", time=float(t))
        return np.concatenate((q, qd))


class OdeFormulation(Formulation):
    """M(q) q̈ = F solved numerically at each call (seed 001 eq. 10.12–10.14)."""

    name = "ode"
    constrained = False

    def __init__(self, numeric: NumericSystem, stabilizer: Stabilizer,
                 spec: SystemSpec | None = None, model: Model | None = None) -> None:
        super().__init__(numeric, stabilizer, spec, model)
        if numeric.m:
            others = "index1, udwadia-kalaba"
            if all(k == "holonomic" for k in numeric.constraint_kinds):
                others += ", reduced"
            raise InputError(
                f"formulation 'ode' is for unconstrained systems, and this one has the "
                f"constraints {', '.join(numeric.constraint_names)}; use {others} (or auto)")
        self.rhs = numeric.ode_rhs()
        self.c_step = numeric.dop853_step()

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """Replaced in ``__init__`` by ``numeric.ode_rhs()`` (one compiled call)."""
        return self.numeric.ode_rhs()(t, y)

    def multipliers(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return np.zeros(0)


class Index1(Formulation):
    """[[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b] (seed 001 §10.7, seed 003's augmented matrix)."""

    name = "index1"

    def __init__(self, numeric: NumericSystem, stabilizer: Stabilizer,
                 spec: SystemSpec | None = None, model: Model | None = None) -> None:
        super().__init__(numeric, stabilizer, spec, model)
        size = self.n + self.m
        self._K = np.zeros((size, size))

    def check(self, t: float, q: np.ndarray, qd: np.ndarray) -> None:
        _, _, A, _ = self.numeric.dynamics(t, q, qd)
        dependent = _dependent_rows(A)
        if dependent:
            names = self.numeric.constraint_names
            which = ", ".join(names[k] for k in dependent)
            raise InputError(
                f"formulation index1 cannot run: the rows of A are dependent at the start "
                f"(rank {_rank(A)} for {self.m} constraints; {which} repeats earlier "
                f"constraints), so the augmented matrix [[M, -A^T], [A, 0]] is singular; use "
                f"--formulation udwadia-kalaba, which needs no independence of the constraints")

    def _solve(self, t: float, q: np.ndarray, qd: np.ndarray, stabilized: bool) -> np.ndarray:
        n = self.n
        M, F, A, b = self.numeric.dynamics(t, q, qd)
        if stabilized:
            b = self.stabilizer.adjust(t, q, qd, A, b)
        K = self._K
        K[:n, :n] = M
        K[:n, n:] = -A.T
        K[n:, :n] = A
        return np.linalg.solve(K, np.concatenate((F, b)))

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        n = self.n
        x = self._solve(t, y[:n], y[n:], True)
        return np.concatenate((y[n:], x[:n]))

    def multipliers(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return self._solve(t, q, qd, False)[self.n:]


class UdwadiaKalaba(Formulation):
    """q̈ = a + M^{-1/2}(A M^{-1/2})⁺(b − A a), a = M⁻¹F (seed 004), via M = L Lᵀ.

    Works with dependent constraint rows: the pseudo-inverse (cut-off :data:`RCOND`) returns the
    least-norm z = Lᵀ(q̈ − a), and λ is the minimum-norm solution of Aᵀλ = Q_c = L z."""

    name = "udwadia-kalaba"

    def _solve(self, t: float, q: np.ndarray, qd: np.ndarray, stabilized: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        M, F, A, b = self.numeric.dynamics(t, q, qd)
        if stabilized:
            b = self.stabilizer.adjust(t, q, qd, A, b)
        L, W = _factor(M)
        a = W.T @ (W @ F)
        if not self.m:
            return a, a, L, A
        z = _min_norm(A @ W.T, b - A @ a)
        return a + W.T @ z, z, L, A

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        n = self.n
        return np.concatenate((y[n:], self._solve(t, y[:n], y[n:], True)[0]))

    def multipliers(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        if not self.m:
            return np.zeros(0)
        _, z, L, A = self._solve(t, q, qd, False)
        return _min_norm(A.T, L @ z)


from lagsim.reduced import Reduced  # noqa: E402  (it subclasses Formulation, above)

FORMULATIONS: Mapping[str, type[Formulation]] = {
    "ode": OdeFormulation, "index1": Index1, "udwadia-kalaba": UdwadiaKalaba, "reduced": Reduced,
}

_PARSERS: Mapping[str, Callable[[Any, str, Location | None], Any]] = {
    "t_start": _number,
    "t_end": _number,
    "samples": _samples,
    "dt": _positive,
    "method": _choice(tuple(METHODS), "method"),
    "rtol": _positive,
    "atol": _positive,
    "formulation": _choice(("auto", *FORMULATIONS), "formulation"),
    "stabilize": _choice(tuple(STABILIZERS), "stabilizer"),
    "baumgarte": _baumgarte,
    "stop_when": _stop_when,
    "strict_initial": _flag,
}


def choose_formulation(requested: str, numeric: NumericSystem, t: float, q: np.ndarray,
                       qd: np.ndarray, report: Report) -> str:
    """``auto``: ode without constraints, else index1, or udwadia-kalaba when A is
    rank-deficient at the start (said through ``report``)."""
    if requested != "auto":
        return requested
    if not numeric.m:
        return "ode"
    A = numeric.dynamics(t, q, qd)[2]
    if _rank(A) < numeric.m:
        report(f"auto: the constraint rows are dependent at the start (rank {_rank(A)} for "
               f"{numeric.m} constraints), so index1's matrix is singular; using udwadia-kalaba")
        return "udwadia-kalaba"
    return "index1"


# ---------------------------------------------------------------------------------------------
# the start


def check_mass_matrix(numeric: NumericSystem, t: float, q: np.ndarray, qd: np.ndarray) -> None:
    """Refuse a mass matrix that is singular or not positive definite at the start, naming the
    coordinate along which it fails (the largest entry of the weakest eigenvector)."""
    M = numeric.dynamics(t, q, qd)[0]
    if not np.all(np.isfinite(M)):
        raise InputError(f"the mass matrix is not finite at the start (t = {t!r})")
    w, v = np.linalg.eigh(0.5 * (M + M.T))
    if w[0] > 1e-12 * max(1.0, abs(w[-1])):
        return
    coordinate = numeric.coordinates[int(np.argmax(np.abs(v[:, 0])))]
    state = ", ".join(f"{c} = {float(x)!r}" for c, x in zip(numeric.coordinates, q))
    kind = "singular" if w[0] > -1e-12 * max(1.0, abs(w[-1])) else "not positive definite"
    raise InputError(
        f"the mass matrix is {kind} at the start ({state}): the kinetic energy gives no "
        f"inertia along {coordinate} (eigenvalue {w[0]:.3g}); start elsewhere or give "
        f"{coordinate} a mass or inertia")


def consistent_start(numeric: NumericSystem, t: float, q: np.ndarray, qd: np.ndarray,
                     report: Report | None = None, strict: bool = False
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) moved onto φ(q, t) = 0 and A q̇ + c = 0 with the least M-norm change (issue 3).

    Gauss–Newton for the positions, then the M-orthogonal projection of q̇. Every value that
    moves by more than :data:`REPORT_THRESHOLD` is reported (``name: old -> new``); with
    ``strict`` such a move is an :class:`InputError`. When no state satisfies the constraints
    the error names the constraints left unsatisfied.
    """
    q = np.array(q, dtype=float)
    qd = np.array(qd, dtype=float)
    names = numeric.constraint_names
    if not numeric.m:
        return q, qd
    _, W = _factor(numeric.dynamics(t, q, qd)[0])
    q_new = q.copy()
    hol = numeric.holonomic
    if hol:
        for _ in range(50):
            phi, phi_q = numeric.phi(t, q_new)
            delta = _metric_step(W, phi_q, -phi)
            q_new += delta
            if np.abs(delta).max() <= 1e-15 * (1.0 + np.abs(q_new).max()):
                break
        phi, phi_q = numeric.phi(t, q_new)
        scale = 1.0 + np.abs(phi_q).max(axis=1, initial=0.0) * (1.0 + np.abs(q_new).max())
        bad = [names[hol[i]] for i in range(len(hol)) if abs(phi[i]) > 1e-10 * scale[i]]
        if bad or not np.all(np.isfinite(q_new)):
            values = ", ".join(f"{names[h]} = {p:.3g}" for h, p in zip(hol, phi))
            raise InputError(
                f"the initial positions cannot be made consistent: the holonomic constraints "
                f"{', '.join(bad) or ', '.join(names[h] for h in hol)} conflict at t = {t!r} "
                f"(closest residuals {values}); check the constraints and the initial values")
    A, c = numeric.velocity_terms(t, q_new)
    qd_new = qd + _metric_step(W, A, -(A @ qd + c))
    w = A @ qd_new + c
    scale = 1.0 + np.abs(A).max(axis=1, initial=0.0) * (1.0 + np.abs(qd_new).max())
    bad = [names[i] for i in range(numeric.m) if abs(w[i]) > 1e-10 * scale[i]]
    if bad:
        raise InputError(
            f"the initial velocities cannot be made consistent: the constraints {', '.join(bad)} "
            f"conflict at t = {t!r} (velocity residuals "
            f"{', '.join(f'{n} = {x:.3g}' for n, x in zip(names, w))})")
    labels = list(numeric.coordinates) + [f"{c}_dot" for c in numeric.coordinates]
    old = np.concatenate((q, qd))
    new = np.concatenate((q_new, qd_new))
    moved = [(labels[i], float(old[i]), float(new[i])) for i in range(len(old))
             if abs(new[i] - old[i]) > REPORT_THRESHOLD]
    if moved and strict:
        changes = "; ".join(f"{name}: {a!r} -> {b!r}" for name, a, b in moved)
        raise InputError(f"the initial state is off the constraints and --strict-initial forbids "
                         f"correcting it ({changes}); give consistent initial values")
    if report is not None:
        for name, a, b in moved:
            report(f"initial {name}: {a!r} -> {b!r} (corrected onto the constraints)")
    return q_new, qd_new


# ---------------------------------------------------------------------------------------------
# the run


def _stop_function(spec: SystemSpec, numeric: NumericSystem, options: SimulateOptions
                   ) -> tuple[Callable[..., float], bool] | None:
    """The --stop-when expression compiled in (t, q, q̇, λ), and whether it uses λ."""
    if options.stop_when is None:
        return None
    names = dict(spec.symbols())
    lambdas = [se.Symbol(f"lambda_{c}") for c in numeric.constraint_names]
    names.update({s.name: s for s in lambdas})
    where = options.stop_when_location or Location("--stop-when")
    label = "expression" if where.line is None else "simulate.stop_when"
    hint = ("it may use t, the coordinates, their velocities <q>_dot, the parameters and the "
            f"multipliers {', '.join(s.name for s in lambdas) or '(none: no constraints)'}")
    expr = parse_expression(options.stop_when, names, Source(where), label, hint)
    params = {se.Symbol(k): v for k, v in numeric.parameters.items()}
    expr = expr.subs(params)
    args = [se.Symbol("t"), *(se.Symbol(c) for c in numeric.coordinates),
            *(se.Symbol(f"{c}_dot") for c in numeric.coordinates), *lambdas]
    compiled = lambdify(args, [expr])

    def func(*values: float) -> float:
        return float(compiled(np.array(values, dtype=float))[0])

    uses_lambda = bool(set(lambdas) & expr.free_symbols)
    return func, uses_lambda


def _set_state(solver: OdeSolver, y: np.ndarray) -> None:
    """Replace an accepted step's end state by ``y`` (see the module docstring)."""
    solver.y = y
    if isinstance(solver, BDF):
        solver.D[0] = y
    else:
        solver.f = solver.fun(solver.t, y)


def simulate(spec: SystemSpec, model: Model, options: SimulateOptions,
             report: Report | None = None, progress: Callable[[float], None] | None = None,
             numeric: NumericSystem | None = None) -> Trajectory:
    """Run ``model`` from the spec's initial state with ``options`` (issue 3).

    ``report(message)`` receives what the CLI prints to stderr (corrected initial values, the
    auto formulation's switch); where a --stop-when stopped the run is the returned trajectory's
    ``message``. ``progress(fraction)`` is
    called after each step. ``numeric`` may pass an already compiled model. Raises
    :class:`InputError` for inputs that cannot run and :class:`IntegrationError` for a run that
    fails (with the time and the cause).
    """
    say: Report = report or (lambda _message: None)
    numeric = numeric or compile_model(model)
    check_regular(model, spec)
    t0 = options.t_start
    q0 = np.array(spec.initial_state()[0], dtype=float)
    qd0 = np.array(spec.initial_state()[1], dtype=float)
    stop = _stop_function(spec, numeric, options)
    check_mass_matrix(numeric, t0, q0, qd0)
    name = choose_formulation(options.formulation, numeric, t0, q0, qd0, say)
    form_class = FORMULATIONS[name]
    stabilize = options.stabilize if numeric.m and name not in ("ode", "reduced") else "none"
    if stabilize == "projection" and options.method == "LSODA":
        raise InputError("--stabilize projection cannot be used with --method LSODA (its state "
                         "lives in Fortran and cannot be corrected after a step); use another "
                         "method or --stabilize baumgarte")
    stabilizer = STABILIZERS[stabilize](numeric, options)
    q0, qd0 = consistent_start(numeric, t0, q0, qd0, say, options.strict_initial)
    form = form_class(numeric, stabilizer, spec, model)
    form.report = say
    form.check(t0, q0, qd0)

    def stop_value(t: float, y: np.ndarray) -> float:
        func, uses_lambda = stop
        q, qd = form.unpack(t, y)
        lam = form.multipliers(t, q, qd) if uses_lambda else np.zeros(numeric.m)
        return float(func(t, *q, *qd, *lam))

    times = options.sample_times()
    y0 = form.initial(t0, q0, qd0)
    rows_t: list[float] = []
    rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def take(t: float, y: np.ndarray) -> None:
        q, qd = form.unpack(t, y)
        rows_t.append(float(t))
        rows.append((q, qd, form.multipliers(t, q, qd) if numeric.m else np.zeros(0)))

    take(t0, y0)
    k = 1
    stop_reason, stop_message = "t_end", ""
    sign_ref = 0.0
    if stop is not None:
        sign_ref = float(np.sign(stop_value(t0, y0)))

    if options.method == "DOP853" and form.c_step is not None and not stabilizer.projects:
        from lagsim.cstep import CDOP853

        solver: OdeSolver = CDOP853(form.rhs, t0, y0, options.t_end, form.c_step,
                                    rtol=options.rtol, atol=options.atol)
    else:
        solver = METHODS[options.method](form.rhs, t0, y0, options.t_end, rtol=options.rtol,
                                         atol=options.atol)
    span = options.t_end - t0
    while solver.status == "running":
        try:
            message = solver.step()
            if solver.status == "failed":
                raise IntegrationError(f"the integrator failed ({options.method}): {message}",
                                       time=float(solver.t))
            t_new = solver.t
            if not np.all(np.isfinite(solver.y)):
                raise IntegrationError("the state became NaN or infinite", time=float(t_new))
            dense = None
            end = t_new
            stopped = False
            if stop is not None:
                g_new = stop_value(t_new, solver.y)
                if not math.isfinite(g_new):
                    raise IntegrationError(f"the --stop-when expression is {g_new}",
                                           time=float(t_new))
                if sign_ref == 0.0:
                    sign_ref = float(np.sign(g_new))
                elif g_new * sign_ref <= 0.0:
                    t_old = solver.t_old
                    dense = solver.dense_output()
                    end = t_new if g_new == 0.0 else brentq(
                        lambda s, d=dense: stop_value(s, d(s)), t_old, t_new,
                        xtol=1e-14 * max(1.0, abs(t_new)), rtol=4 * np.finfo(float).eps)
                    stopped = True
            while k < len(times) and times[k] <= end and not (stopped and times[k] == end):
                if times[k] == t_new:
                    y = solver.y.copy()
                else:
                    dense = dense or solver.dense_output()
                    y = dense(times[k])
                take(times[k], form.project(times[k], y) if stabilizer.projects else y)
                k += 1
            if stopped:
                y = dense(end)
                take(end, form.project(end, y) if stabilizer.projects else y)
                stop_reason = "stop_when"
                stop_message = (f"stopped at t = {end!r}: {options.stop_when} changed sign "
                                f"(--stop-when)")
                break
            new_y = form.after_step(t_new, solver.y)
            if new_y is not None:
                if isinstance(solver, (BDF, LSODA)) and not stabilizer.projects:
                    solver = METHODS[options.method](form.rhs, t_new, new_y, options.t_end,
                                                     rtol=options.rtol, atol=options.atol)
                else:
                    _set_state(solver, new_y)
        except np.linalg.LinAlgError as exc:
            hint = ("; the constraints may have become dependent, try --formulation "
                    "udwadia-kalaba" if name == "index1" else "")
            raise IntegrationError(f"singular matrix ({exc}){hint}", time=float(solver.t)) from None
        if progress is not None:
            progress(min(1.0, (solver.t - t0) / span))

    return _trajectory(numeric, name, stabilize, np.array(rows_t), rows, stop_reason,
                       stop_message)


def _trajectory(numeric: NumericSystem, name: str, stabilize: str, t: np.ndarray,
                rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]], stop_reason: str,
                stop_message: str) -> Trajectory:
    """Residuals and energy recomputed from each sample's full (q, q̇, λ)."""
    N, n, m = len(t), numeric.n, numeric.m
    hol = list(numeric.holonomic)
    q = np.empty((N, n))
    qd = np.empty((N, n))
    lam = np.zeros((N, m))
    residual = np.zeros((N, m))
    residual_dot = np.zeros((N, len(hol)))
    energy = np.empty(N)
    for i, (ti, (qi, qdi, lami)) in enumerate(zip(t, rows)):
        q[i], qd[i] = qi, qdi
        if m:
            lam[i] = lami
            w = numeric.velocity_residual(ti, qi, qdi)
            residual[i] = w
            if hol:
                residual[i, hol] = numeric.phi(ti, qi)[0]
                residual_dot[i] = w[hol]
        energy[i] = numeric.energy(ti, qi, qdi)
    return Trajectory(
        name=numeric.name, coordinates=numeric.coordinates,
        constraint_names=numeric.constraint_names, constraint_kinds=numeric.constraint_kinds,
        t=t, q=q, qd=qd, lam=lam, residual=residual, residual_dot=residual_dot, energy=energy,
        formulation=name, stabilize=stabilize, stop_reason=stop_reason, stop_message=stop_message,
    )
