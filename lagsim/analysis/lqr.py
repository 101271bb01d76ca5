"""A linear-quadratic regulator about an equilibrium (issue 28, ``lagsim lqr``).

About the equilibrium (q*, 0) with the inputs at their values u* (``inputs:``), the linearization
(:mod:`lagsim.analysis.linearize`, seed ``001_80d65b968ce3cb18.txt`` §10.7) on the tangent space
of the holonomic constraints is ẋ = A x + B δu, x = (z, ż), δq = N z with z the independent
coordinates and B = B_τ ∂τ/∂u (:mod:`lagsim.analysis.inputs`). The gain K minimizes
∫ xᵀQx + δuᵀRδu dt under δu = −K x: K = R⁻¹BᵀP with P the stabilizing solution of the continuous
algebraic Riccati equation AᵀP + PA − PBR⁻¹BᵀP + Q = 0 (Kalman 1960; Anderson and Moore,
*Optimal Control: Linear Quadratic Methods*, 1990, §3.3), computed by
``scipy.linalg.solve_continuous_are``; the closed loop is ẋ = (A − BK) x.

Controllability is decided on the controllable subspace, the smallest A-invariant subspace
holding the range of B, built by the orthogonal staircase (Van Dooren 1981) rather than from the
ill-conditioned matrix [B, AB, …, Aⁿ⁻¹B], whose rank it equals. The uncontrollable modes are the
eigenvalues of A on the orthogonal complement Vu (A is block triangular in [Vc, Vu]); a gain that
stabilizes exists exactly when each has Re s < 0 (stabilizability).

**Velocity constraints** a(q) q̇ = 0 (nonholonomic: a knife edge, a rolling disk) restrict the
rates, not the configuration: the linearization's state is x = (z, u) with δq = N z and
δq̇ = N N_v u (:mod:`lagsim.analysis.linearize`), k coordinates but only k_v < k rates, so the
design is on the tangent space of the linearized constraints (holonomic rows on δq and δq̇, the
velocity rows a(q*) δq̇ = 0). At rest a velocity constraint exerts no force, so the states at
rest form a family: every q near q* with q̇ = 0 is an equilibrium of the unforced system, and the
linearization has zero roots along the k − k_v configuration directions that the allowed rates
cannot reach back (a knife edge's sideways position: the linearized constraint says its rate is
0). No input moves them, so (A, B) is not controllable and no gain makes them decay
(Brockett 1983: such a system has no smooth static feedback that is asymptotically stable). When
those are the only uncontrollable directions and they stay put (A restricted to Vu is 0:
each is an equilibrium, no rate drifts it), the gain is designed on the controllable subspace:
K = K_c Vcᵀ with K_c the LQR gain of (Vcᵀ A Vc, Vcᵀ B, Vcᵀ Q Vc, R); the closed loop's roots are
those of A_c − B_c K_c and the zeros of Vu, which stay (the loop holds the rest and leaves
those coordinates where the motion takes them). An uncontrollable rate (a glide no input
brakes) is a Jordan block of the zero root and still refuses the design.

The gain's columns are the entries of x = (z, u), which are entries of the full state (q, q̇):
with T = diag(N, N N_v) the map x ↦ δ(q, q̇), the selection P of those entries satisfies P T = I
(N and N_v are the identity on them, coordinate partitioning), so u = −K P δ(q, q̇) is the law
K T⁺ δ(q, q̇) on the tangent space, where the motion stays.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lagsim import naming
from lagsim.analysis.inputs import input_matrix
from lagsim.analysis.linearize import linearize
from lagsim.analysis.modes import equilibrium_point
from lagsim.analysis.rest import autonomous_model, snap, value_text
from lagsim.errors import InputError, Location
from lagsim.records import record
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.feedback import Feedback
from lagsim.symbolic.model import Model

RANK_TOLERANCE = 1e-9
"""A new direction of the staircase counts when its singular value exceeds this times the size of
the block it comes from (A times the last directions, or B)."""
STABLE_MARGIN = 1e-9
"""An eigenvalue with Re s ≥ −this (relative to the largest |s| of A, or 1) is not stable."""


def weights(raw: str | Sequence[float] | Mapping[str, float] | None, names: Sequence[str],
            option: str, positive: bool) -> np.ndarray:
    """The diagonal weight matrix of ``--Q`` or ``--R``: None or empty → the identity; a list of
    ``len(names)`` numbers (``"1,1,10,10"``) in the order of ``names``; or ``name=value`` entries
    (``"theta=10, theta_dot=1"``), the others 1. Entries must be ≥ 0 (Q) or > 0 (R,
    ``positive``)."""
    where = Location(option)
    values = np.ones(len(names))
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return np.diag(values)
    if isinstance(raw, str):
        parts = [p.strip() for p in raw.split(",") if p.strip()]
        named = [p for p in parts if "=" in p]
        if named and len(named) != len(parts):
            raise InputError(f"give either {len(names)} numbers or name=value entries, not both; "
                             f"got {raw!r}", where)
        entries: Any = ({k.strip(): v.strip() for k, v in (p.split("=", 1) for p in parts)}
                        if named else parts)
    else:
        entries = raw
    if isinstance(entries, Mapping):
        for name, text in entries.items():
            if name not in names:
                raise InputError(f"{name!r} is not one of {', '.join(names)} (the order of "
                                 f"{option})", where)
            values[list(names).index(name)] = _number(text, option)
    else:
        if len(entries) != len(names):
            raise InputError(f"needs {len(names)} numbers, one for each of "
                             f"{', '.join(names)}; got {len(entries)}", where)
        values = np.array([_number(x, option) for x in entries])
    bad = [v for v in values if (v <= 0 if positive else v < 0)]
    if bad:
        raise InputError(f"the weights must be {'positive' if positive else 'non-negative'}; "
                         f"got {bad[0]:g}", where)
    return np.diag(values)


def _number(text: Any, option: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise InputError(f"{text!r} is not a number", Location(option)) from None
    if not math.isfinite(value):
        raise InputError(f"{text!r} is not a finite number", Location(option))
    return value


def controllable_subspace(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """An orthonormal basis (columns) of the controllable subspace of (A, B) (module
    docstring)."""
    n = A.shape[0]
    basis = np.zeros((n, 0))
    new = B
    for _ in range(n):
        size = float(np.linalg.norm(new, 2)) if new.size else 0.0
        if size == 0.0:
            break
        projected = new - basis @ (basis.T @ new)
        u, sv, _ = np.linalg.svd(projected, full_matrices=False)
        keep = u[:, sv > RANK_TOLERANCE * size]
        if not keep.shape[1]:
            break
        basis = np.hstack([basis, keep])
        if basis.shape[1] == n:
            break
        new = A @ keep
    return basis


def _complement(basis: np.ndarray, n: int) -> np.ndarray:
    if not basis.shape[1]:
        return np.eye(n)
    u, _, _ = np.linalg.svd(basis, full_matrices=True)
    return u[:, basis.shape[1]:]


def _directions(Vu: np.ndarray, names: Sequence[str]) -> tuple[str, ...]:
    """The uncontrollable subspace in words: the state entries it is made of when it is spanned
    by them, else one combination per basis vector."""
    rows = np.linalg.norm(Vu, axis=1)
    if np.all((rows < 1e-9) | (np.abs(rows - 1.0) < 1e-9)):
        return tuple(name for name, r in zip(names, rows) if r > 0.5)
    out = []
    for v in Vu.T:
        v = v / v[int(np.argmax(np.abs(v)))]
        out.append(" + ".join(f"{c:.6g}·{name}" for c, name in zip(v, names)
                              if abs(c) > 1e-9).replace("+ -", "− "))
    return tuple(out)


def _roots(values: np.ndarray) -> tuple[complex, ...]:
    """Eigenvalues sorted by real part then imaginary part, with parts below 1e-12 of the
    largest |s| (or 1) set to 0."""
    scale = max(1.0, float(np.max(np.abs(values), initial=0.0)))
    out = [complex(0.0 if abs(s.real) < 1e-12 * scale else s.real,
                   0.0 if abs(s.imag) < 1e-12 * scale else s.imag) for s in values]
    return tuple(sorted(out, key=lambda s: (s.real, s.imag)))


def _root_text(s: complex) -> str:
    if s.imag == 0:
        return f"{s.real:.10g}"
    return f"{s.real:.10g} {'+' if s.imag > 0 else '−'} {abs(s.imag):.10g}i"


@record
class LqrReport:
    """The regulator about one equilibrium (module docstring): the state's names, A, B, Q, R,
    the gain K (None when no stabilizing gain exists, ``reason`` says why), the open- and
    closed-loop eigenvalues, the rank of controllability and the uncontrollable modes."""

    system: str
    coordinates: tuple[str, ...]
    q: tuple[float, ...]
    residual: float
    inputs: tuple[str, ...]
    u0: tuple[float, ...]
    state: tuple[str, ...]
    x0: tuple[float, ...]
    A: np.ndarray
    B: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    K: np.ndarray | None
    open_loop: tuple[complex, ...]
    closed_loop: tuple[complex, ...]
    rank: int
    uncontrollable: tuple[complex, ...]
    uncontrollable_directions: tuple[str, ...]
    reason: str = ""
    notes: tuple[str, ...] = ()

    @property
    def controllable(self) -> bool:
        return self.rank == len(self.state)

    def feedback(self, saturate: float | None = None) -> Feedback:
        """The law u = u* − K (x − x*) for :func:`lagsim.symbolic.feedback.closed_loop`;
        :class:`InputError` when there is no gain."""
        if self.K is None:
            raise InputError(f"no LQR gain for system '{self.system}': {self.reason}",
                             Location("--controller"))
        return Feedback(inputs=self.inputs, u0=self.u0, state=self.state, x0=self.x0,
                        gain=tuple(tuple(float(k) for k in row) for row in self.K),
                        saturate=saturate)

    def to_dict(self) -> dict[str, Any]:
        def roots(values: Sequence[complex]) -> list[dict[str, float]]:
            return [{"re": s.real, "im": s.imag} for s in values]

        return {
            "system": self.system,
            "equilibrium": dict(zip(self.coordinates, self.q)),
            "residual": self.residual,
            "inputs": dict(zip(self.inputs, self.u0)),
            "state": list(self.state),
            "A": self.A.tolist(),
            "B": self.B.tolist(),
            "Q": self.Q.tolist(),
            "R": self.R.tolist(),
            "K": None if self.K is None else self.K.tolist(),
            "open_loop_eigenvalues": roots(self.open_loop),
            "closed_loop_eigenvalues": roots(self.closed_loop),
            "controllability_rank": self.rank,
            "controllable": self.controllable,
            "uncontrollable_eigenvalues": roots(self.uncontrollable),
            "uncontrollable_directions": list(self.uncontrollable_directions),
            "reason": self.reason or None,
            "notes": list(self.notes),
        }

    def to_text(self) -> str:
        at = ", ".join(f"{c} = {value_text(v)}" for c, v in zip(self.coordinates, self.q))
        held = ", ".join(f"{u} = {v:g}" for u, v in zip(self.inputs, self.u0))
        lines = [f"LQR of {self.system} about {at} (residual {self.residual:.1e}); inputs at "
                 f"{held}",
                 f"state x − x* = ({', '.join(self.state)}); u = u* − K (x − x*)",
                 f"Q = diag({', '.join(f'{v:g}' for v in np.diag(self.Q))}), "
                 f"R = diag({', '.join(f'{v:g}' for v in np.diag(self.R))})"]
        lines += [f"note: {note}" for note in self.notes]
        n = len(self.state)
        if self.controllable:
            lines.append(f"controllable: rank {self.rank} of {n}")
        else:
            lines.append(f"not controllable: rank {self.rank} of {n}; uncontrollable modes s = "
                         f"{', '.join(_root_text(s) for s in self.uncontrollable)} along "
                         f"{'; '.join(self.uncontrollable_directions)}")
        lines.append("open-loop eigenvalues: " + ", ".join(map(_root_text, self.open_loop)))
        if self.K is None:
            lines.append(f"no stabilizing gain: {self.reason}")
            return "\n".join(lines) + "\n"
        width = max(14, *(len(s) + 2 for s in self.state))
        lines += ["", "K:", " " * max(len(u) for u in self.inputs)
                  + "".join(f"{s:>{width}}" for s in self.state)]
        for u, row in zip(self.inputs, self.K):
            lines.append(f"{u:<{max(len(v) for v in self.inputs)}}"
                         + "".join(f"{k:>{width}.8g}" for k in row))
        lines += ["", "closed-loop eigenvalues: "
                  + ", ".join(map(_root_text, self.closed_loop))]
        return "\n".join(lines) + "\n"


def design(spec: SystemSpec, model: Model, at: Mapping[str, float] | str | None = None,
           Q: str | Sequence[float] | Mapping[str, float] | None = None,
           R: str | Sequence[float] | Mapping[str, float] | None = None) -> LqrReport:
    """The LQR about the equilibrium ``at`` (as ``lagsim modes --at``) of ``spec``'s system with
    the weights ``Q`` and ``R`` (:func:`weights`; default the identities), module docstring."""
    from scipy.linalg import solve_continuous_are

    inputs = model.inputs
    if not inputs:
        raise InputError(f"system '{model.name}' has no inputs to control it with; declare "
                         "them under 'inputs:' and use them in 'forces', 'loads' or "
                         "'torques'", spec.location)
    point = equilibrium_point(spec, model, at)
    lin = linearize(point.eqs, point.q, point.lam)
    S, Btau = lin.state_space()
    auto = autonomous_model(model, spec)
    B = Btau @ input_matrix(auto.model, inputs, point.q)
    names = point.eqs.names
    state = (*lin.independent, *(naming.velocity(c) for c in lin.independent_rates))
    index = [names.index(c) for c in lin.independent]
    x0 = (*(float(point.q[i]) for i in index), *(0.0 for _ in lin.independent_rates))
    Qm = weights(Q, state, "--Q", positive=False)
    Rm = weights(R, inputs, "--R", positive=True)
    n = len(state)
    basis = controllable_subspace(S, B)
    Vu = _complement(basis, n)
    scale = max(1.0, float(np.max(np.abs(np.linalg.eigvals(S)), initial=0.0))) if n else 1.0
    hidden = _roots(np.linalg.eigvals(Vu.T @ S @ Vu)) if Vu.shape[1] else ()
    directions = _directions(Vu, state) if Vu.shape[1] else ()
    unstable = [s for s in hidden if s.real >= -STABLE_MARGIN * scale]
    family = (lin.velocity_constraints and bool(unstable)
              and float(np.max(np.abs(Vu.T @ S @ Vu))) <= STABLE_MARGIN * scale)
    notes = point.notes
    K: np.ndarray | None = None
    reason = ""
    closed: tuple[complex, ...] = ()
    if unstable and not family:
        reason = ("not stabilizable: the uncontrollable mode" + "s" * (len(unstable) > 1)
                  + f" s = {', '.join(map(_root_text, unstable))} "
                  + ("is" if len(unstable) == 1 else "are") + " not stable, and no feedback "
                  "moves " + ("it" if len(unstable) == 1 else "them"))
        if lin.velocity_constraints and all(abs(s) <= STABLE_MARGIN * scale for s in unstable):
            reason += (" (not only rest states the velocity constraints leave: a rate no input "
                       "reaches drifts them)")
    else:
        Vc = basis if family else np.eye(n)
        if family:
            notes = (*notes, "velocity constraints: the states at rest form a family, and "
                     f"{'; '.join(directions)} (s = 0) no input reaches; the gain is designed "
                     f"on the controllable subspace (dimension {basis.shape[1]}) and leaves "
                     f"{'it' if len(directions) == 1 else 'them'} where the motion takes "
                     f"{'it' if len(directions) == 1 else 'them'}")
        Sc, Bc = Vc.T @ S @ Vc, Vc.T @ B
        try:
            P = solve_continuous_are(Sc, Bc, Vc.T @ Qm @ Vc, Rm)
        except (np.linalg.LinAlgError, ValueError) as exc:
            reason = f"the Riccati equation has no stabilizing solution ({exc}); raise Q"
        else:
            Kc = np.linalg.solve(Rm, Bc.T @ P)
            K = Kc @ Vc.T
            if family:
                K[np.abs(K) < 1e-12 * float(np.max(np.abs(K), initial=0.0))] = 0.0
            closed = _roots(np.linalg.eigvals(S - B @ K))
            if any(s.real >= -STABLE_MARGIN * scale for s in np.linalg.eigvals(Sc - Bc @ Kc)):
                reason = ("the Riccati solution does not stabilize (closed-loop s = "
                          f"{', '.join(map(_root_text, closed))}); raise the weights Q of the "
                          "unstable states")
                K = None
    u0 = tuple(float(model.parameters[u]) for u in inputs)
    return LqrReport(
        system=model.name, coordinates=names, q=snap(point.q), residual=point.residual,
        inputs=inputs, u0=u0, state=state, x0=x0, A=S, B=B, Q=Qm, R=Rm, K=K,
        open_loop=_roots(np.linalg.eigvals(S)), closed_loop=closed, rank=basis.shape[1],
        uncontrollable=hidden, uncontrollable_directions=directions, reason=reason,
        notes=notes)


def feedback(spec: SystemSpec, model: Model, options: SimulateOptions) -> Feedback:
    """The law of ``--controller lqr`` (:class:`lagsim.run.session.Controller`): the gain of
    :func:`design` about ``options.at`` (required: the equilibrium a controller holds is not the
    stable one ``lagsim modes`` picks) with ``options.Q`` and ``options.R``, clipped to
    ``options.saturate``."""
    if options.at is None:
        raise InputError(f"{options.label('controller')} lqr needs the equilibrium to hold: "
                         "add --at, such as --at \"x=0, theta=0\"",
                         options.file_location("controller"))
    return design(spec, model, options.at, options.Q, options.R).feedback(options.saturate)
