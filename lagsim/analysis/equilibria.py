"""Equilibria of a system (issue 10): the rest states found by :mod:`lagsim.analysis.rest`,
each with its residual and its stability from the linearization (:mod:`lagsim.analysis.linearize`),
nearest to the initial state first.

Seeds: ``001_80d65b968ce3cb18.txt`` §10.7 (the rest equations F(q, 0) + Aᵀλ = 0 with the
constraints), ``002_485a91571cac8ced.txt`` §23.5 (relative equilibria of rheonomic systems).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Any

import numpy as np

from lagsim import naming
from lagsim.analysis.linearize import linearize
from lagsim.analysis.rest import (
    MAX_STARTS,
    STARTS,
    RestEquations,
    autonomous_model,
    kinked_note,
    snap,
    solve_equilibria,
    value_text,
)
from lagsim.records import record
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model

MAX_REPORTED = 64
"""At most this many equilibria are listed (a family of equilibria gives one per start)."""


@record
class Equilibrium:
    """One rest state: ``q`` in the model's coordinates, the multipliers ``lam``, the residual
    ``max |R|`` of the rest equations, its ``stability`` (from the linearization) and the
    dimension of the family of equilibria through it (0: isolated)."""

    q: tuple[float, ...]
    lam: tuple[float, ...]
    residual: float
    stability: str
    family: int = 0

    def to_dict(self, coordinates: Sequence[str], constraints: Sequence[str]) -> dict[str, Any]:
        return {
            "q": dict(zip(coordinates, self.q)),
            "multipliers": {naming.multiplier(c): v for c, v in zip(constraints, self.lam)},
            "residual": self.residual,
            "stability": self.stability,
            "family_dimension": self.family,
        }


@record
class EquilibriaReport:
    """The equilibria of one system, nearest to the initial state first."""

    system: str
    coordinates: tuple[str, ...]
    constraints: tuple[str, ...]
    equilibria: tuple[Equilibrium, ...]
    starts: int
    pinned: tuple[str, ...] = ()
    periodic: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    eliminated: tuple[tuple[str, str], ...] = field(default=())
    closed: bool = True
    """Whether the search ran every continuation start (:class:`Search`)."""
    kinked: tuple[str, ...] = ()
    """Coordinates Newton's method cannot move (:func:`kinked_note`)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "coordinates": list(self.coordinates),
            "constraints": list(self.constraints),
            "eliminated": dict(self.eliminated),
            "starts": self.starts,
            "search_closed": self.closed,
            "free_coordinates": list(self.pinned),
            "non_smooth_coordinates": list(self.kinked),
            "periodic_coordinates": list(self.periodic),
            "equilibria": [e.to_dict(self.coordinates, self.constraints)
                           for e in self.equilibria],
            "notes": list(self.notes),
        }

    def to_text(self) -> str:
        lines = [f"equilibria of {self.system} ({len(self.equilibria)} found by Newton from "
                 f"{self.starts} starts: the initial state, angle corners, images, random "
                 "points and continuation from each equilibrium found; nearest to the initial "
                 "state first)"]
        lines += [f"note: {note}" for note in self.notes]
        if not self.equilibria and self.kinked:
            lines.append(f"no equilibrium found by Newton's method, which cannot move "
                         f"{', '.join(self.kinked)} (see the note)")
        elif not self.equilibria:
            lines.append("no equilibrium found: F(q, 0) + Aᵀλ = 0 with the constraints has no "
                         "solution near any start")
            return "\n".join(lines) + "\n"
        width = max(len(c) for c in self.coordinates)
        for k, e in enumerate(self.equilibria, 1):
            family = f", a {e.family}-dimensional family" if e.family else ""
            lines.append(f"\n{k}. {e.stability}{family} (residual {e.residual:.1e})")
            for name, value in zip(self.coordinates, e.q):
                lines.append(f"   {name:<{width}} = {value_text(value)}")
            for name, value in zip(self.constraints, e.lam):
                lines.append(f"   {naming.multiplier(name)} = {value_text(value)}")
        return "\n".join(lines) + "\n"


def find_equilibria(spec: SystemSpec, model: Model, starts: int = STARTS,
                    max_starts: int = MAX_STARTS) -> EquilibriaReport:
    """The equilibria of the system of ``spec`` (built as ``model``): rest states found by
    :func:`solve_equilibria` (``starts`` seeded random starts among its starts, at most
    ``max_starts`` Newton runs; what it guarantees is said there), each with its residual and
    stability (module docstring; seed 001 §10.7, seed 002 §23.5 for rheonomic systems)."""
    auto = autonomous_model(model, spec)
    eqs = RestEquations(auto.model)
    initial = dict(zip(spec.coordinates, spec.initial_state()[0]))
    q0 = np.array([initial[c] for c in auto.model.coordinates], dtype=float)
    search = solve_equilibria(eqs, q0, starts, max_starts)
    solutions, periodic, count = search.solutions, search.periodic, search.starts
    notes = list(auto.notes())
    if not search.closed:
        notes.append(f"the search may be incomplete: it stopped at {count} Newton starts "
                     "with continuation starts of the equilibria found still untried")
    pinned = tuple(auto.model.coordinates[i] for i in eqs.pinned)
    if pinned:
        notes.append(f"{', '.join(pinned)} appear{'s' * (len(pinned) == 1)} in no rest "
                     "equation: held at the initial value (any other value gives the same "
                     "equations)")
    if eqs.kinked:
        notes.append(kinked_note(eqs) + "; an equilibrium where such a term jumps (x = 0 of a "
                     "V-shaped well k*Abs(x)) is found only from a start that lies on it (the "
                     "search starts where the argument of such a term, linear in one "
                     "coordinate, vanishes), and its stability is not decided by a "
                     "linearization")
    on_family = [k for k, (*_, f) in enumerate(solutions) if f]
    if len(on_family) > 1:
        notes.append(f"{len(on_family)} of the points found lie on families of equilibria (not "
                     "isolated); the one nearest the initial state stands for them")
        solutions = [s for k, s in enumerate(solutions) if k not in set(on_family[1:])]
    elif on_family:
        notes.append("an equilibrium lies on a family of equilibria (not isolated)")
    if len(solutions) > MAX_REPORTED:
        notes.append(f"{len(solutions)} found; the {MAX_REPORTED} nearest to the initial state "
                     "are listed")
    equilibria = []
    kinked = tuple(auto.model.coordinates[i] for i in eqs.kinked)
    for q, lam, residual, family in solutions[:MAX_REPORTED]:
        stability = (linearize(eqs, q, lam).stability() if not eqs.kinked else
                     f"undetermined (not differentiable in {', '.join(kinked)}: no "
                     "linearization)")
        equilibria.append(Equilibrium(snap(q), snap(lam), residual, stability, family))
    return EquilibriaReport(
        system=model.name, coordinates=auto.model.coordinates,
        constraints=tuple(c.name for c in auto.model.constraints),
        equilibria=tuple(equilibria), starts=count, pinned=pinned,
        periodic=tuple(auto.model.coordinates[i] for i in periodic), notes=tuple(notes),
        eliminated=auto.eliminated, closed=search.closed,
        kinked=kinked)
