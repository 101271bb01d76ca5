"""The parts a run is made of: the ways of handling constraints (formulations), the stabilizers,
and the linear algebra and mass-matrix checks they share (issue 3, issue 8 §3).

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
* ``reduced``: 002's minimal coordinates (``lagsim.symbolic.reduce``), the eliminated coordinates
  and the multipliers rebuilt at each sample (seed ``002_485a91571cac8ced.txt`` §23.5), in
  :mod:`lagsim.run.reduced`, which builds on the contract written here.

Each formulation and stabilizer declares what it supports as class attributes (constraint
kinds, dependent constraint rows, rheonomic constraints, stabilizers, methods); the registry
(:mod:`lagsim.run.registry`) maps each name of :mod:`lagsim.spec.choices` to its class and
checks a requested combination in one place. Shaped like scipy's ``_ivp`` (one base class
whose subclass contract is written as numbered rules, the classes registered by name) and
diffrax (terms, solvers and controllers as small parts).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import ClassVar

import numpy as np

from lagsim.errors import InputError, IntegrationError, Location
from lagsim.numeric.compile import NumericSystem
from lagsim.numeric.memo import Memo
from lagsim.spec.choices import SOLVER_METHODS
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

RCOND = 1e-12
"""Relative cut-off of singular values in every pseudo-inverse (dependent constraint rows)."""
SINGULAR_RTOL = 1e-12
"""The mass matrix counts as singular when its weakest direction carries less than this fraction
of its largest diagonal entry (and, during a run, of the largest one at the start): a test
relative to the matrix's own scale, so a mass of 1e-30 or 1e308 is regular."""
KINDS = ("holonomic", "velocity")

Report = Callable[[str], None]


def _silent(_message: str) -> None:
    return None


Locate = Callable[[str], Location | None]


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


def matrix_rank(A: np.ndarray) -> int:
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > RCOND * max(s[0], 1.0)))


def _dependent_rows(A: np.ndarray) -> list[int]:
    """Rows of A that are combinations of the rows before them."""
    out = []
    rank = 0
    for k in range(A.shape[0]):
        r = matrix_rank(A[:k + 1])
        if r == rank:
            out.append(k)
        rank = r
    return out


# ---------------------------------------------------------------------------------------------
# the mass matrix


def weakest_direction(M: np.ndarray) -> tuple[float, int, str]:
    """(eigenvalue, index of the coordinate, kind) of the weakest direction of M: the eigenvalue
    relative to M's largest diagonal entry, the coordinate with the largest share of its
    eigenvector, and "singular", "not positive definite" or "" (regular). Scaled before the
    eigen-decomposition, so entries near 1e308 do not overflow."""
    scale = float(np.abs(np.diag(M)).max(initial=0.0))
    if scale == 0.0:
        return 0.0, 0, "singular"
    S = M / scale
    w, v = np.linalg.eigh(0.5 * (S + S.T))
    index = int(np.argmax(np.abs(v[:, 0])))
    if w[0] > SINGULAR_RTOL * max(w[-1], 0.0):
        return float(w[0] * scale), index, ""
    kind = "singular" if w[0] > -SINGULAR_RTOL * abs(w[-1]) else "not positive definite"
    return float(w[0] * scale), index, kind


def start_key(numeric: NumericSystem, t: float, q: np.ndarray, qd: np.ndarray
              ) -> Hashable | None:
    """What the model's values at a start depend on: the compiled code (by identity), the
    parameter values and (t, q, q̇) bit for bit; None for a system without compiled code. A
    memo by this key must hold the code itself, so that its ``id`` is not reused meanwhile."""
    if numeric.code is None:
        return None
    return (id(numeric.code), tuple(numeric.parameters.items()), float(t),
            np.asarray(q, dtype=float).tobytes(), np.asarray(qd, dtype=float).tobytes())


START_SCALES: Memo[tuple[object, float]] = Memo(64)
""":class:`MassWatch`'s scale at each start met (by :func:`start_key`), with the code."""


def check_mass_matrix(numeric: NumericSystem, t: float, q: np.ndarray, qd: np.ndarray,
                      locate: Locate | None = None, euler: Mapping[str, str] | None = None
                      ) -> None:
    """Refuse a mass matrix that is singular or not positive definite at the start, naming the
    coordinate along which it fails (the largest entry of the weakest eigenvector) and, through
    ``locate(coordinate)``, pointing at the part of the file concerned; ``euler`` as for
    :class:`MassWatch`."""
    M = numeric.dynamics(t, q, qd)[0]
    if not np.all(np.isfinite(M)):
        raise InputError(f"the mass matrix is not finite at the start (t = {t!r})")
    eigenvalue, index, kind = weakest_direction(M)
    if not kind:
        return
    coordinate = numeric.coordinates[index]
    state = ", ".join(f"{c} = {float(x)!r}" for c, x in zip(numeric.coordinates, q))
    raise InputError(
        f"the mass matrix is {kind} at the start ({state}): the kinetic energy gives no "
        f"inertia along {coordinate} (eigenvalue {eigenvalue:.3g}); "
        + (gimbal_lock(coordinate, euler or {})
           or f"start elsewhere or give {coordinate} a mass or inertia"),
        locate(coordinate) if locate else None)


def euler_angles(spec: SystemSpec) -> dict[str, str]:
    """Each coordinate that is, by itself, an Euler angle of a 3-D body → that body's name."""
    out = {}
    for mass in spec.masses:
        if mass.orientation is not None and mass.orientation.sequence:
            for angle in mass.orientation.angles:
                if str(angle.expr) in spec.coordinates:
                    out[str(angle.expr)] = mass.name
    return out


def gimbal_lock(coordinate: str, euler: Mapping[str, str]) -> str:
    """The advice for a mass matrix singular along ``coordinate`` when it is an Euler angle of
    a body (``euler``: coordinate → body, :func:`euler_angles`), else ""."""
    body = euler.get(coordinate)
    if body is None:
        return ""
    return (f"{coordinate} is an Euler angle of '{body}', whose angles lock here (gimbal lock: "
            f"the sequence's first and third axes aligned); give '{body}' a quaternion "
            "orientation, {quaternion: [e0, e1, e2, e3]}, which has no such point")


class MassWatch:
    """Stops a run whose mass matrix becomes singular (issue 15, "Mid-run failures").

    Called after accepted steps (see :class:`lagsim.run.monitor.Guard` for how often): the Cholesky
    factor M = L Lᵀ is taken at the step's end; a failure, or a smallest pivot L_kk² below
    :data:`SINGULAR_RTOL` times the largest diagonal entry of M (now or at the start), is an
    :class:`IntegrationError` with the time and the coordinate of the weakest direction. The
    pivots bound the smallest eigenvalue from above, so this costs one Cholesky factor of an
    n×n matrix, not an eigen-decomposition. ``euler`` maps each coordinate that is an Euler
    angle of a 3-D body to that body's name: a weakest direction along one is the sequence's
    gimbal lock (its first and third axes aligned, Goldstein §4.4), and the message says so.
    """

    def __init__(self, numeric: NumericSystem, t0: float, q0: np.ndarray, qd0: np.ndarray,
                 euler: Mapping[str, str] | None = None) -> None:
        self.numeric = numeric
        self.euler = dict(euler or {})
        key = start_key(numeric, t0, q0, qd0)

        def scale() -> float:
            return float(numeric.dynamics(t0, q0, qd0)[0].diagonal().max(initial=0.0))

        self.scale = (scale() if key is None
                      else START_SCALES.get(key, lambda: (numeric.code, scale()))[1])

    def __call__(self, t: float, q: np.ndarray, qd: np.ndarray, regular_at: float | None = None
                 ) -> None:
        """Raise unless M is regular at (t, q, q̇); ``regular_at`` is when it last was, for the
        message."""
        M = self.numeric.dynamics(t, q, qd)[0]
        try:
            weakest = float(np.linalg.cholesky(M).diagonal().min())
        except np.linalg.LinAlgError:
            weakest = 0.0
        if weakest * weakest > SINGULAR_RTOL * max(self.scale, float(M.diagonal().max())):
            return
        self.fail(t, q, M, regular_at)

    def fail(self, t: float, q: np.ndarray, M: np.ndarray, regular_at: float | None = None
             ) -> None:
        """Raise the error for a mass matrix found singular at (t, q)."""
        coordinates = self.numeric.coordinates
        state = ", ".join(f"{c} = {float(x):.6g}" for c, x in zip(coordinates, q))
        if not np.all(np.isfinite(M)):
            raise IntegrationError(f"the mass matrix is no longer finite ({state})",
                                   time=float(t))
        eigenvalue, index, kind = weakest_direction(M)
        since = f"; it was regular at t = {regular_at:.6g}" if regular_at is not None else ""
        advice = (gimbal_lock(coordinates[index], self.euler)
                  or "choose coordinates that stay regular along the motion")
        raise IntegrationError(
            f"the mass matrix became {kind or 'nearly singular'} ({state}{since}): the kinetic "
            f"energy gives almost no inertia along {coordinates[index]} (eigenvalue "
            f"{eigenvalue:.3g}, largest diagonal entry {self.scale:.3g} at the start); {advice}",
            time=float(t))


# ---------------------------------------------------------------------------------------------
# stabilizers


class Stabilizer:
    """Keeps a constrained run on its constraints.

    1. ``name`` is the registry key in :data:`STABILIZERS`.
    2. ``adjust(t, q, qd, A, b)`` returns the right-hand side b of A q̈ = b the formulation
       solves with (fresh or the same array; never modifies ``b`` in place).
    3. ``projects`` says whether the formulation's ``after_step`` and the samples move the state
       onto the constraints (:func:`project_state`).
    4. ``methods`` are the integration methods it works with; ``method_note`` says why others
       do not.
    """

    name: ClassVar[str] = "none"
    projects: ClassVar[bool] = False
    methods: ClassVar[frozenset[str]] = frozenset(SOLVER_METHODS)
    method_note: ClassVar[str] = ""

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
    methods = frozenset(SOLVER_METHODS) - {"LSODA"}
    method_note = "its state lives in Fortran and cannot be corrected after a step"


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



def solve_augmented(K: np.ndarray, M: np.ndarray, F: np.ndarray, A: np.ndarray, b: np.ndarray
                    ) -> np.ndarray:
    """[q̈; λ] from [[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b] (seed 001 §10.7, seed 003's augmented
    matrix), assembled in the preallocated ``K`` of size n + m."""
    n = len(F)
    K[:n, :n] = M
    K[:n, n:] = -A.T
    K[n:, :n] = A
    return np.linalg.solve(K, np.concatenate((F, b)))


class Formulation:
    """One way of turning the constrained equations into an ODE y' = f(t, y).

    Subclass contract (the engines, :mod:`lagsim.run.engines`, rely on each rule):

    1. ``name`` is the key in :data:`FORMULATIONS`. What it supports is declared in class
       attributes that :func:`check_combination` reads before anything is built: ``kinds``
       (constraint kinds it handles; empty: unconstrained systems only), ``needs_constraints``,
       ``dependent_rows`` (constraint rows that repeat earlier ones), ``rheonomic``
       (constraints that depend on t), ``stabilizers`` and ``methods``.
    2. ``__init__(numeric, stabilizer, spec, model, *, report)`` prepares buffers (and, for
       ``reduced``, the reduction); it may raise :class:`InputError` when the formulation cannot
       apply. ``report(message)`` is where it says what it chose during a run (stderr in the
       CLI); :meth:`note_once` says a thing once per run.
    3. ``check(t, q, qd)`` raises :class:`InputError` when it cannot run from this (consistent)
       start, with a message that says which formulation can.
    4. ``initial(t, q, qd)`` gives the solver's y0; ``unpack(t, y)`` gives the full (q, q̇) back.
    5. ``rhs(t, y)`` returns a fresh array y' (the solver keeps references to it); it makes one
       compiled call (``numeric.dynamics``) and one linear solve, plus what the stabilizer adds.
    6. ``multipliers(t, q, qd)`` returns λ (m,) recomputed from the state (zeros without
       constraints).
    7. ``project(t, y)`` returns the projected y, or None when the formulation has nothing to
       project; it may raise :class:`IntegrationError`. Samples are projected with it when the
       stabilizer ``projects``.
    8. ``after_step(t, y)`` is called after every accepted step, after that step's samples were
       taken; a non-None result replaces the solver's state. If it also replaces ``rhs`` or
       ``c_step`` (a new chart), or the method is LSODA (state in Fortran), the driver restarts
       the solver from the new state; a restart costs the solver its history, so it should be
       rare (projection, which returns a state every step, is refused with LSODA).
    """

    name: ClassVar[str] = ""
    constrained: ClassVar[bool] = True
    kinds: ClassVar[frozenset[str]] = frozenset(KINDS)
    needs_constraints: ClassVar[bool] = False
    dependent_rows: ClassVar[bool] = False
    rheonomic: ClassVar[bool] = True
    stabilizers: ClassVar[frozenset[str]] = frozenset(("none", "baumgarte", "projection"))
    methods: ClassVar[frozenset[str]] = frozenset(SOLVER_METHODS)
    c_step: Callable | None = None
    """DOP853's step in C for ``rhs`` (:mod:`lagsim.run.engines.cstep`), when the formulation has
    one."""
    report: Report
    """Where the formulation says what it chose during a run (stderr in the CLI), given by
    :class:`lagsim.run.problem.Problem`; silent by default."""

    def __init__(self, numeric: NumericSystem, stabilizer: Stabilizer,
                 spec: SystemSpec | None = None, model: Model | None = None, *,
                 report: Report | None = None) -> None:
        self.numeric = numeric
        self.stabilizer = stabilizer
        self.n = numeric.n
        self.m = numeric.m
        self.report = report or _silent
        self.noted: set[str] = set()
        """The topics :meth:`note_once` has reported."""

    extra_columns: tuple[str, ...] = ()
    """Columns the samples add after the fixed layout (:meth:`extra_row`; a run with
    sensitivities, :mod:`lagsim.run.sensitivity`)."""

    def extra_row(self, t: float, y: np.ndarray) -> np.ndarray:
        """The values of :attr:`extra_columns` at the (projected) state y."""
        return np.zeros(0)

    def jacobian(self, model: Model) -> Callable[[float, np.ndarray], np.ndarray] | None:
        """The Jacobian of :meth:`rhs` for the implicit methods
        (:func:`lagsim.numeric.jacobian.rhs_jacobian`), or None when there is none."""
        from lagsim.numeric.jacobian import rhs_jacobian  # implicit methods only (issue 31)

        return rhs_jacobian(self, model)

    def note_once(self, topic: str, message: str) -> None:
        """``report(message)`` the first time ``topic`` is noted in this formulation's run."""
        if topic not in self.noted:
            self.noted.add(topic)
            self.report(message)

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

    def project(self, t: float, y: np.ndarray) -> np.ndarray | None:
        if not self.stabilizer.projects or not self.m:
            return None
        q, qd, converged = project_state(self.numeric, t, y[:self.n], y[self.n:])
        if not converged:
            raise IntegrationError("the projection onto the constraints did not converge; "
                                   "the constraints may be singular here", time=float(t))
        return np.concatenate((q, qd))

    def after_step(self, t: float, y: np.ndarray) -> np.ndarray | None:
        return self.project(t, y) if self.stabilizer.projects else None


class OdeFormulation(Formulation):
    """M(q) q̈ = F solved numerically at each call (seed 001 eq. 10.12–10.14)."""

    name = "ode"
    constrained = False
    kinds = frozenset()
    dependent_rows = True
    stabilizers = frozenset(("none",))

    def __init__(self, numeric: NumericSystem, stabilizer: Stabilizer,
                 spec: SystemSpec | None = None, model: Model | None = None, *,
                 report: Report | None = None) -> None:
        super().__init__(numeric, stabilizer, spec, model, report=report)
        self._ode_rhs: Callable[[float, np.ndarray], np.ndarray] = self._first_rhs
        self.c_step = numeric.dop853_step()

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """``numeric.ode_rhs()`` (one compiled call), made once."""
        return self._ode_rhs(t, y)

    def _first_rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """:meth:`rhs` at its first call (the check of the start), which a run the C loop takes
        makes alone: ``numeric.ode_rhs(once=True)`` (issue 31, "Start-up")."""
        self._ode_rhs = self._second_rhs
        return self.numeric.ode_rhs(once=True)(t, y)

    def _second_rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        self._ode_rhs = self.numeric.ode_rhs()
        return self._ode_rhs(t, y)

    def multipliers(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return np.zeros(0)


class Index1(Formulation):
    """[[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b] (seed 001 §10.7, seed 003's augmented matrix)."""

    name = "index1"

    def __init__(self, numeric: NumericSystem, stabilizer: Stabilizer,
                 spec: SystemSpec | None = None, model: Model | None = None, *,
                 report: Report | None = None) -> None:
        super().__init__(numeric, stabilizer, spec, model, report=report)
        size = self.n + self.m
        self._K = np.zeros((size, size))

    def _solve(self, t: float, q: np.ndarray, qd: np.ndarray, stabilized: bool) -> np.ndarray:
        M, F, A, b = self.numeric.dynamics(t, q, qd)
        if stabilized:
            b = self.stabilizer.adjust(t, q, qd, A, b)
        return solve_augmented(self._K, M, F, A, b)

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
    dependent_rows = True

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


def dependent_constraints(numeric: NumericSystem, t: float, q: np.ndarray, qd: np.ndarray
                          ) -> tuple[str, ...]:
    """The constraints whose rows of A repeat earlier ones at (t, q)."""
    if not numeric.m:
        return ()
    A = numeric.dynamics(t, q, qd)[2]
    return tuple(numeric.constraint_names[k] for k in _dependent_rows(A))
