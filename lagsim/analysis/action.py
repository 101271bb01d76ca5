"""The action S = ∫ L dt (seed ``001_80d65b968ce3cb18.txt`` §10.2–10.3, issue 10).

* along a given path q(t) (:func:`path_action`): L(q(t), q̇(t), t) integrated exactly by SymPy
  when it can within :data:`EXACT_BUDGET` seconds of CPU (Example 10.2: q = (2, t), L = q1² + q2²
  on [0, 1] gives S = 13/3), else by adaptive Gauss–Kronrod quadrature (scipy's ``quad``) with its
  error estimate;
* along a simulated trajectory (:func:`lagsim.run.columns.running_action`, ``lagsim action
  --csv`` and ``simulate --action``): the running integral by the corrected trapezoidal rule
  h/2 (L_k + L_{k+1}) − h²/12 (L̇_{k+1} − L̇_k), the integral of the cubic Hermite interpolant of L
  (error O(h⁴)), with L̇ = ∂L/∂q·q̇ + ∂L/∂q̇·q̈ + ∂L/∂t and q̈ from M q̈ = F + Aᵀλ at each sample;
  its error is estimated by Richardson's rule from the same sum on every other sample;
* the stationary path between two configurations (:func:`stationary_path`): the boundary-value
  problem of the Euler–Lagrange equations M q̈ = F (Theorem 10.1/10.2) with q(t₀) and q(T) given,
  solved by scipy's ``solve_bvp`` from the straight line between the ends.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field
from typing import Any

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.errors import InputError, IntegrationError, Location
from lagsim.records import record
from lagsim.run.columns import RunningAction, running_action
from lagsim.spec.expressions import diff
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

EXACT_BUDGET = 2.0
"""CPU seconds SymPy may spend integrating L along a path exactly."""
QUAD_LIMIT = 200
"""Subintervals of the adaptive quadrature along a path; past them the value is flagged
uncertain with scipy's error estimate."""


@record
class ActionReport:
    """The action of one path: ``value`` (float), ``exact`` (SymPy's closed form as text, empty
    when computed numerically), the ``method`` and its ``error`` estimate."""

    system: str
    t_start: float
    t_end: float
    value: float
    exact: str
    method: str
    error: float
    path: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = field(default=())
    converged: bool = True
    """False when the quadrature stopped before its tolerance (the value is uncertain)."""

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "interval": [self.t_start, self.t_end],
                "S": self.value, "exact": self.exact or None, "how": self.method,
                "error_estimate": self.error, "converged": self.converged,
                "path": dict(self.path),
                "notes": list(self.notes)}

    def to_text(self) -> str:
        lines = [f"action of {self.system} on [{self.t_start:g}, {self.t_end:g}]"]
        if self.path:
            lines.append("path: " + ", ".join(f"{q} = {e}" for q, e in self.path))
        if self.exact:
            lines.append(f"S = {self.exact}")
            lines.append(f"S ≈ {self.value:.17g}")
        else:
            lines.append(f"S ≈ {self.value:.17g}  (± {self.error:.1e}, {self.method})")
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines) + "\n"


def parse_path(text: str, spec: SystemSpec, option: str = "--path") -> dict[str, Any]:
    """``"q1=2, q2=t"`` as coordinate → symengine expression in t and the parameters; every
    coordinate must be given."""
    from lagsim.spec.expressions import Source, parse_expression

    names: dict[str, Any] = {p.name: se.Symbol(p.name) for p in spec.parameters}
    names["t"] = se.Symbol("t")
    out: dict[str, Any] = {}
    for item in (part for part in _split(text) if part.strip()):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError(f"expected NAME=EXPRESSION, got {item.strip()!r}", Location(option))
        if name not in spec.coordinates:
            raise InputError(f"{name!r} is not a coordinate; the coordinates are "
                             f"{', '.join(spec.coordinates)}", Location(option))
        out[name] = parse_expression(value, names, Source(Location(option)),
                                     f"the path of {name}",
                                     "a path is an expression in t and the parameters")
    missing = [c for c in spec.coordinates if c not in out]
    if missing:
        raise InputError(f"the path gives no value for {', '.join(missing)}; give every "
                         "coordinate, e.g. " + ", ".join(f"{c}=..." for c in spec.coordinates),
                         Location(option))
    return out


def _split(text: str) -> list[str]:
    """Split at commas outside parentheses (``x=atan2(t, 1), y=t``)."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _along(model: Model, path: Mapping[str, Any]) -> se.Basic:
    """L(q(t), q̇(t), t) with the parameters' values."""
    t = model.t
    subs: dict[Any, Any] = {}
    for qi, vi, name in zip(model.q, model.qd, model.coordinates):
        subs[qi] = path[name]
        subs[vi] = diff(path[name], t)
    return se.sympify(model.lagrangian).subs(subs).subs(model.substitutions())


def path_action(spec: SystemSpec, model: Model, path: Mapping[str, Any] | str,
                t_start: float = 0.0, t_end: float = 1.0,
                exact_budget: float = EXACT_BUDGET) -> ActionReport:
    """S = ∫ L dt along ``path`` (module docstring; seed 001 Example 10.2); SymPy may try the
    exact integral for ``exact_budget`` CPU seconds (0: numeric at once)."""
    import sympy

    from lagsim.symbolic.reduce import time_budget
    from lagsim.symbolic.tidy import OutOfTime

    if isinstance(path, str):
        path = parse_path(path, spec)
    if not (math.isfinite(t_start) and math.isfinite(t_end)) or t_end <= t_start:
        raise InputError(f"--t-end ({t_end:g}) must be a finite time after --t-start "
                         f"({t_start:g})", Location("--t-end"))
    L = _along(model, path)
    notes = _constraint_notes(model, path, t_start, t_end)
    if any(se.sympify(f) != 0 for f in model.tau):
        notes.append("the system has forces τ; the action is ∫L dt, which does not include them")
    exact = ""
    value = math.nan
    try:
        if exact_budget <= 0:
            raise OutOfTime
        with time_budget(exact_budget):
            expr = sympy.nsimplify(sympy.sympify(L), rational=True)
            t = sympy.Symbol("t")
            a, b = (sympy.nsimplify(x, rational=True) for x in (t_start, t_end))
            result = sympy.integrate(expr, (t, a, b))
            if not result.has(sympy.Integral) and result.is_finite:
                exact = str(result)
                value = float(result)
    except OutOfTime:
        if exact_budget > 0:
            notes.append(f"SymPy did not integrate within {exact_budget:g} s of CPU; numeric "
                         "quadrature instead")
    except (TypeError, ValueError, NotImplementedError, ZeroDivisionError):
        pass
    if exact:
        return ActionReport(model.name, t_start, t_end, value, exact, "exact (SymPy)", 0.0,
                            tuple((k, str(v)) for k, v in path.items()), tuple(notes))
    from scipy.integrate import quad

    f = se.Lambdify([model.t], [L], backend="lambda")
    value, error, _, *failed = quad(lambda s: float(f(np.array([s]))[0]), t_start, t_end,
                                    limit=QUAD_LIMIT, epsabs=1e-13, epsrel=1e-13,
                                    full_output=1)
    if not math.isfinite(value):
        raise IntegrationError("the Lagrangian is not finite along the path")
    method = "adaptive Gauss–Kronrod quadrature"
    if failed:
        method += ", not converged: uncertain"
        notes.append(f"the quadrature did not converge ({_first_sentence(failed[0])}): S is "
                     f"uncertain, its estimated error is {error:.2g}")
    return ActionReport(model.name, t_start, t_end, float(value), "", method, float(error),
                        tuple((k, str(v)) for k, v in path.items()), tuple(notes),
                        converged=not failed)


def _first_sentence(message: str) -> str:
    """The first sentence of scipy's message, without its full stop, lower-case first."""
    first = " ".join(message.split()).split(". ")[0].rstrip(".")
    return first[:1].lower() + first[1:]


def _constraint_notes(model: Model, path: Mapping[str, Any], t0: float, t1: float
                      ) -> list[str]:
    """A note for each holonomic constraint the path leaves (checked at 11 times)."""
    notes = []
    subs = dict(zip(model.q, (path[c] for c in model.coordinates)))
    for c in model.holonomic:
        phi = se.sympify(c.expression).subs(subs).subs(model.substitutions())
        f = se.Lambdify([model.t], [phi], backend="lambda")
        worst = max(abs(float(f(np.array([s]))[0])) for s in np.linspace(t0, t1, 11))
        if worst > 1e-9:
            notes.append(f"the path leaves constraint '{c.name}' (|φ| up to {worst:.3g}); the "
                         "action is that of the unconstrained Lagrangian along it")
    return notes


def lagrangian_values(model: Model, t: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """L at each sample (t_k, q_k, q̇_k): for any path, not only a trajectory."""
    subs = model.substitutions()
    f = se.Lambdify([model.t, *model.q, *model.qd], [se.sympify(model.lagrangian).subs(subs)],
                    cse=True, backend="lambda")
    return np.array([float(f(np.concatenate([[ti], qi, vi]))[0])
                     for ti, qi, vi in zip(t, q, qd)])


def table_action(model: Model, table: Any) -> RunningAction:
    """:func:`running_action` of a CSV table (``lagsim action FILE --csv run.csv``)."""
    missing = [c for c in naming.state(model.coordinates) if not table.has(c)]
    if missing:
        raise InputError(f"the CSV has no column {', '.join(missing)} of system "
                         f"'{model.name}'; was it simulated from another system?",
                         Location(table.source))
    t = table.column(naming.TIME)
    q = np.column_stack([table.column(c) for c in model.coordinates])
    qd = np.column_stack([table.column(v) for v in naming.velocities(model.coordinates)])
    lam = None
    if model.m:
        names = [c.multiplier for c in model.constraints]
        if not all(table.has(n) for n in names):
            raise InputError(f"the CSV has no multiplier columns ({', '.join(names)}), needed "
                             "for q̈ of a constrained system", Location(table.source))
        lam = np.column_stack([table.column(n) for n in names])
    if len(t) < 2 or np.any(np.diff(t) <= 0):
        raise InputError("the CSV's times must increase, with at least two rows",
                         Location(table.source))
    return running_action(model, t, q, qd, lam)


@record
class StationaryPath:
    """The path of δS = 0 between two configurations: samples ``t``, ``q``, ``qd``, the running
    ``action`` and its final value ``S`` with the quadrature's error estimate."""

    coordinates: tuple[str, ...]
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    action: np.ndarray
    S: float
    error: float
    residual: float

    def columns(self) -> list[str]:
        return [naming.TIME, *naming.state(self.coordinates), naming.ACTION]

    def as_array(self) -> np.ndarray:
        return np.column_stack([self.t, self.q, self.qd, self.action])


def stationary_path(spec: SystemSpec, model: Model, start: Mapping[str, float],
                    end: Mapping[str, float], t_start: float, t_end: float,
                    samples: int = 201, guess: Any = None) -> StationaryPath:
    """Solve M q̈ = F with q(t_start) = ``start`` and q(t_end) = ``end`` by ``solve_bvp``
    (module docstring); unconstrained systems only."""
    from scipy.integrate import solve_bvp

    if model.m:
        raise InputError("--stationary solves the Euler–Lagrange equations of an "
                         "unconstrained system; this one has constraints (use coordinates "
                         "that satisfy them, e.g. the reduced form)", Location("--stationary"))
    if not (math.isfinite(t_start) and math.isfinite(t_end)) or t_end <= t_start:
        raise InputError(f"--t-end ({t_end:g}) must be a finite time after --t-start "
                         f"({t_start:g})", Location("--t-end"))
    for option, given in (("--from", start), ("--to", end)):
        missing = [c for c in model.coordinates if c not in given]
        if missing:
            raise InputError(f"{option} gives no value for {', '.join(missing)}",
                             Location(option))
    n = model.n
    subs = model.substitutions()
    exprs = [se.sympify(model.mass_matrix[i, j]).subs(subs) for i in range(n)
             for j in range(n)] + [se.sympify(model.forcing[i]).subs(subs) for i in range(n)]
    f = se.Lambdify([model.t, *model.q, *model.qd], exprs, cse=True, backend="lambda")
    a = np.array([start[c] for c in model.coordinates], dtype=float)
    b = np.array([end[c] for c in model.coordinates], dtype=float)

    def rhs(t: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = np.empty_like(y)
        for k in range(y.shape[1]):
            values = np.asarray(f(np.concatenate([[t[k]], y[:, k]])), dtype=float)
            M = values[:n * n].reshape(n, n)
            F = values[n * n:]
            out[:n, k] = y[n:, k]
            out[n:, k] = np.linalg.solve(M, F)
        return out

    def bc(ya: np.ndarray, yb: np.ndarray) -> np.ndarray:
        return np.concatenate([ya[:n] - a, yb[:n] - b])

    mesh = np.linspace(t_start, t_end, 41)
    if guess is None:
        s = (mesh - t_start) / (t_end - t_start)
        y0 = np.vstack([a[:, None] + (b - a)[:, None] * s[None, :],
                        np.repeat(((b - a) / (t_end - t_start))[:, None], len(mesh), axis=1)])
    else:
        y0 = guess(mesh)
    with np.errstate(all="ignore"):
        try:
            sol = solve_bvp(rhs, bc, mesh, y0, tol=1e-10, max_nodes=100000)
        except np.linalg.LinAlgError:
            raise IntegrationError("the boundary-value problem met a singular mass matrix"
                                   ) from None
    if not sol.success:
        raise IntegrationError(f"no stationary path found: solve_bvp says {sol.message!r}; "
                               "try another --t-end (a conjugate point may lie between the ends)")
    t = np.linspace(t_start, t_end, samples)
    y = sol.sol(t)
    q, qd = y[:n].T, y[n:].T
    fine = np.linspace(t_start, t_end, 8 * (samples - 1) + 1)
    yf = sol.sol(fine)
    running = running_action(model, fine, yf[:n].T, yf[n:].T)
    action = running.values[::8]
    return StationaryPath(model.coordinates, t, q, qd, action, float(action[-1]),
                          running.error, float(np.max(sol.rms_residuals)))
