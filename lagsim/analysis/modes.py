"""Small oscillations about an equilibrium (issue 10): the modes of ``lagsim modes`` and the
numbers of ``lagsim derive --form linear``.

The equilibrium is the one asked for with ``--at`` or the one chosen among those of
:func:`lagsim.analysis.rest.solve_equilibria` (:func:`choose_equilibrium`); the linearization
M₀ δq̈ + D δq̇ + K δq = 0 on the tangent space of the constraints and its modes are
:mod:`lagsim.analysis.linearize` (seed ``001_80d65b968ce3cb18.txt`` §10.7).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np

from lagsim import naming
from lagsim.analysis.inputs import input_matrix
from lagsim.analysis.linearize import Linearization, Mode, linearize
from lagsim.analysis.rest import (
    RestEquations,
    autonomous_model,
    family_dimension,
    kinked_note,
    parse_point,
    point_state,
    snap,
    solve_equilibria,
    value_text,
)
from lagsim.analysis.steady import SteadyModesReport, steady_modes, wants_steady
from lagsim.errors import InputError, Location
from lagsim.records import record
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.forms.linear import RestLinearization
from lagsim.symbolic.model import Model

AT_TOLERANCE = 1e-9
"""A point given with ``--at`` is an equilibrium when max |R| of its rest equations is at most
this (absolute, in the file's units)."""


@record
class ModesReport:
    """The modes of one system about one equilibrium."""

    system: str
    coordinates: tuple[str, ...]
    constraints: tuple[str, ...]
    q: tuple[float, ...]
    lam: tuple[float, ...]
    residual: float
    dof: int
    stability: str
    modes: tuple[Mode, ...]
    M0: tuple[tuple[float, ...], ...]
    D: tuple[tuple[float, ...], ...]
    K: tuple[tuple[float, ...], ...]
    notes: tuple[str, ...] = ()
    eliminated: tuple[tuple[str, str], ...] = field(default=())
    frozen: tuple[Mode, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "coordinates": list(self.coordinates),
            "eliminated": dict(self.eliminated),
            "equilibrium": dict(zip(self.coordinates, self.q)),
            "multipliers": {naming.multiplier(c): v for c, v in zip(self.constraints, self.lam)},
            "residual": self.residual,
            "degrees_of_freedom": self.dof,
            "stability": self.stability,
            "modes": [m.to_dict(self.coordinates) for m in self.modes],
            "frozen": [m.to_dict(self.coordinates) for m in self.frozen],
            "M0": [list(r) for r in self.M0],
            "D": [list(r) for r in self.D],
            "K": [list(r) for r in self.K],
            "notes": list(self.notes),
        }

    def to_text(self) -> str:
        at = ", ".join(f"{c} = {value_text(v)}" for c, v in zip(self.coordinates, self.q))
        lines = [f"modes of {self.system} about {at} (residual {self.residual:.1e})",
                 f"{self.dof} degree{'s' * (self.dof != 1)} of freedom; {self.stability}"]
        lines += [f"note: {note}" for note in self.notes]
        if not self.modes:
            return "\n".join(lines) + "\n"
        lines.append("")
        lines.append(f"{'mode':>4}  {'ω_n (rad/s)':>14}  {'f_n (Hz)':>14}  {'ω_d (rad/s)':>14}  "
                     f"{'ζ':>10}  {'ω²':>14}  kind")
        for k, m in enumerate(self.modes, 1):
            zeta = "—" if m.damping_ratio is None else f"{m.damping_ratio + 0.0:.6g}"
            w2 = "—" if m.omega_squared is None else f"{m.omega_squared:.10g}"
            lines.append(f"{k:>4}  {m.frequency:>14.10g}  {m.hertz:>14.10g}  "
                         f"{m.damped_frequency:>14.10g}  {zeta:>10}  {w2:>14}  "
                         f"{m.kind}{m.rates()}")
        lines.append("ω_n = |s| natural frequency (√(s₁s₂) for two real roots s), ω_d = Im s "
                     "damped frequency")
        lines.append("(the oscillation seen), f_n = ω_n/2π; s: roots of the state matrix, a "
                     "complex pair given once")
        lines.append("")
        shown = (*self.modes, *self.frozen)
        lines.append("mode shapes δq (largest component 1):")
        width = max(len(c) for c in self.coordinates)
        labels = [f"mode {k}" for k in range(1, len(self.modes) + 1)]
        labels += [f"frozen {k}" for k in range(1, len(self.frozen) + 1)]
        lines.append(" " * width + "".join(f"  {label:>12}" for label in labels))
        for i, name in enumerate(self.coordinates):
            cells = "".join(f"  {_cell(m.shape[i]):>12}" for m in shown)
            lines.append(f"{name:<{width}}{cells}")
        return "\n".join(lines) + "\n"


def _cell(x: Any) -> str:
    if isinstance(x, complex):
        return f"{abs(x):.4g}∠{math.degrees(math.atan2(x.imag, x.real)):.0f}°"
    return f"{x:.6g}"


def _rows(matrix: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(x) for x in row) for row in matrix)


@record
class Point:
    """The equilibrium the modes are taken about, with what was said about how it was chosen."""

    eqs: RestEquations
    q: np.ndarray
    lam: np.ndarray
    residual: float
    notes: tuple[str, ...]
    eliminated: tuple[tuple[str, str], ...]
    system: str


CHOICE = ("the stable equilibrium nearest the initial state",
          "the linearly stable equilibrium nearest the initial state (no stable one was found)",
          "the equilibrium nearest the initial state (no stable one was found)")


def choose_equilibrium(eqs: RestEquations, solutions: Sequence[tuple[Any, ...]]
                       ) -> tuple[tuple[Any, ...], str]:
    """The equilibrium to linearize about by default, of ``solutions`` (nearest the initial
    state first), and how it was chosen (:data:`CHOICE`): the stable one nearest the initial
    state (small oscillations are about a stable rest state: the double pendulum's
    ω² = (g/l)(2 ∓ √2) hang down, though its bundled start is nearer the upright one), else the
    linearly stable one (undamped modes, nonlinear stability undecided), else the nearest."""
    def rank(k: int) -> tuple[int, int]:
        q, lam, *_ = solutions[k]
        stability = linearize(eqs, q, lam).stability()
        if stability in ("stable", "asymptotically stable"):
            return 0, k
        return (1 if stability.startswith("linearly stable") else 2), k

    kind, best = min(rank(k) for k in range(len(solutions)))
    return solutions[best], CHOICE[kind]


def equilibrium_point(spec: SystemSpec, model: Model,
                      at: Mapping[str, float] | str | None = None) -> Point:
    """The equilibrium to linearize about: :func:`choose_equilibrium` (``at`` None or
    ``"equilibrium"``), or the point ``at`` (coordinate → value, or ``"theta=0, ..."``), which
    must be an equilibrium to :data:`AT_TOLERANCE` (refused with its residual otherwise)."""
    auto = autonomous_model(model, spec)
    eqs = RestEquations(auto.model)
    if eqs.kinked:
        raise InputError(f"system '{model.name}' has no small oscillations to compute: "
                         f"{kinked_note(eqs)}, and its linearization, which is made of those "
                         "derivatives, says nothing about the motion (in a V-shaped well the "
                         "period depends on the amplitude); `lagsim simulate` shows the motion",
                         spec.location)
    notes = list(auto.notes())
    if isinstance(at, str) and at.strip() != "equilibrium":
        at = parse_point(at, spec, auto.model.coordinates)
    if at is None or isinstance(at, str):
        initial = dict(zip(spec.coordinates, spec.initial_state()[0]))
        q0 = np.array([initial[c] for c in auto.model.coordinates], dtype=float)
        search = solve_equilibria(eqs, q0)
        solutions, count = search.solutions, search.starts
        if not solutions:
            raise InputError(f"system '{model.name}' has no equilibrium near any of {count} "
                             "starts, so there is nothing to linearize about",
                             spec.location)
        (q, lam, residual, family), which = choose_equilibrium(eqs, solutions)
        notes.append(f"about {which}; `lagsim equilibria` lists all")
        if family:
            notes.append(f"this equilibrium lies on a {family}-dimensional family of equilibria")
        if eqs.pinned:
            names = ", ".join(auto.model.coordinates[i] for i in eqs.pinned)
            notes.append(f"{names} appear{'s' * (len(eqs.pinned) == 1)} in no rest equation "
                         "(taken at the initial value)")
    else:
        q = point_state(eqs, at, spec)
        lam = eqs.multipliers(q)
        x = np.concatenate([q, lam])
        residual = float(np.max(np.abs(eqs.residual(x)), initial=0.0))
        if not residual <= AT_TOLERANCE:
            raise InputError(f"{', '.join(f'{c}={v:g}' for c, v in zip(eqs.names, q))} is not "
                             f"an equilibrium: the residual of F(q, 0) + Aᵀλ = 0 and the "
                             f"constraints is {residual:.3g} > {AT_TOLERANCE:g}; `lagsim "
                             "equilibria` lists the equilibria", Location("--at"))
        family = family_dimension(eqs, q, lam, eqs.pinned)
        if family:
            notes.append(f"this equilibrium lies on a {family}-dimensional family of equilibria")
    return Point(eqs, q, lam, residual, tuple(notes), auto.eliminated, model.name)


def normal_modes(spec: SystemSpec, model: Model, at: Mapping[str, float] | str | None = None,
                 steady: Mapping[str, float] | str | None = None
                 ) -> ModesReport | SteadyModesReport:
    """The modes of the system about an equilibrium (``at``: see :func:`equilibrium_point`):
    frequencies in rad/s and Hz, damping ratios, stability and shapes (module docstring). With
    ``steady`` (``--steady``) or a ``steady:`` in the file, about that steady motion instead
    (:func:`lagsim.analysis.steady.steady_modes`, ``at`` giving coordinates' values over it)."""
    if wants_steady(spec, steady):
        return steady_modes(spec, model, steady, at)
    point = equilibrium_point(spec, model, at)
    lin = linearize(point.eqs, point.q, point.lam)
    notes = list(point.notes)
    if lin.singular:
        notes.append("the mass matrix is singular here (a singular point of the coordinates): "
                     "no modes; linearize in other coordinates")
    frozen = lin.frozen()
    if lin.velocity_constraints:
        notes.append("velocity constraints: first-order linearization on their rates "
                     f"(state of dimension {lin.dof + lin.Nv.shape[1]})")
    if frozen:
        notes.append(f"{len(frozen)} zero root{'s' * (len(frozen) != 1)} of the state matrix "
                     f"{'are' if len(frozen) != 1 else 'is'} no mode: a displacement along the "
                     "shapes 'frozen' stays where it is (the velocity constraints allow no "
                     "motion that undoes it)")
    names = point.eqs.model
    return ModesReport(
        system=point.system, coordinates=names.coordinates,
        constraints=tuple(c.name for c in names.constraints),
        q=snap(point.q), lam=snap(point.lam),
        residual=point.residual, dof=lin.Nv.shape[1], stability=lin.stability(),
        modes=lin.modes(), M0=_rows(lin.M0), D=_rows(lin.D), K=_rows(lin.K),
        notes=tuple(notes), eliminated=point.eliminated, frozen=frozen)


def rest_linearization(model: Model, q0: Mapping[str, float] | None = None) -> RestLinearization:
    """What ``derive --form linear`` prints (:func:`lagsim.symbolic.forms.linear.linear_form`):
    M₀, D, K, the tangent basis N and the state space ẋ = S x + B δτ about the equilibrium
    nearest ``q0`` (the initial configuration), found numerically (seed 001 §10.7)."""
    auto = autonomous_model(model, q0=q0)
    eqs = RestEquations(auto.model)
    start = np.array([float((q0 or {}).get(c, 0.0)) for c in auto.model.coordinates])
    search = solve_equilibria(eqs, start)
    solutions, count = search.solutions, search.starts
    if not solutions:
        raise InputError(f"system '{model.name}' has no equilibrium near any of {count} starts, "
                         "so there is no linearization to print")
    q, lam, residual, _ = solutions[0]
    lin: Linearization = linearize(eqs, q, lam)
    S, B = lin.state_space()
    return RestLinearization(
        coordinates=auto.model.coordinates, q=snap(q), residual=residual, M0=lin.M0, D=lin.D,
        K=lin.K, N=lin.N, S=S, B=B, independent=lin.independent,
        constrained=bool(auto.model.m), velocity_constraints=lin.velocity_constraints,
        notes=auto.notes(), inputs=model.inputs,
        Bu=B @ input_matrix(auto.model, model.inputs, q) if model.inputs else None)
