"""What the columns of a trajectory measure: each column's unit from a file's ``units:``, and
the dimensions and held coordinates that labels and scales of a figure use.

The units are a property of the CSV columns (a coordinate, its velocity, ``t``), read by analysis
(:func:`lagsim.analysis.kinematics.quantities`) and drawn by :mod:`lagsim.viz.figures`; so they
live with the output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from lagsim import naming
from lagsim.records import record
from lagsim.symbolic.names import text


@record
class Quantities:
    """What the columns measure, for labels and scales: ``units`` maps a column (a coordinate,
    a velocity, ``t``) to its unit text; ``dimensions`` maps a coordinate to ``"length"`` or
    ``"angle"`` where the system shows it; ``held`` are the coordinates a constraint holds at
    zero (None: find them in the data)."""

    units: Mapping[str, str] = field(default_factory=dict)
    dimensions: Mapping[str, str] = field(default_factory=dict)
    held: tuple[str, ...] | None = None
    energy_change: str | None = None
    """Why h is not conserved, when the system is known and it is not
    (:func:`lagsim.symbolic.invariants.energy_conserved`): its change is then physics, not drift."""
    floors: Mapping[str, Any] = field(default_factory=dict)
    """The round-off floor of each residual column at each sample, when the system is known
    (:func:`lagsim.analysis.roundoff.residual_floors`): a drift panel shades what lies below."""

    def label(self, name: str) -> str:
        """An axis label: the name by the names rule (:mod:`lagsim.symbolic.names`), then its
        unit."""
        unit = self.units.get(name)
        return f"{text(name)} [{unit}]" if unit else text(name)

    def same_scale(self, a: str, b: str) -> bool:
        """Whether two columns measure the same thing (equal axis scales make sense)."""
        if a in self.units or b in self.units:
            return self.units.get(a) == self.units.get(b)
        kind = self.dimensions.get(a)
        return kind is not None and kind == self.dimensions.get(b)


def unit_columns(units: Mapping[str, str], coordinates: Sequence[str]) -> dict[str, str]:
    """The units of the CSV columns from a file's ``units:``: each coordinate's, its velocity's
    (the coordinate's per unit of t; ``s`` unless ``t`` has a unit) and ``t``'s."""
    out = {name: unit for name, unit in units.items()
           if name in coordinates or name == naming.TIME}
    per = units.get(naming.TIME, "s")
    for q in coordinates:
        if q in units:
            out[naming.velocity(q)] = f"{units[q]}/{per}"
    return out
