"""Figures of a lagsim CSV: motion, constraint drift and energy drift (issue 4).

Signatures for the CLI::

    make_figure(table: Table, kind: str = "overview", columns: Sequence[str] | None = None,
                x: str | None = None, y: str | None = None, title: str | None = None,
                path_xy: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None) -> Figure
    save_figure(fig: Figure, path: str | Path | Output, dpi: int = 150) -> None
    show(table: Table, **same keywords as make_figure) -> None      # a pyplot window
    can_show_window() -> bool                                       # is there a display?
    KINDS = ("overview", "time", "phase", "drift", "energy", "forces", "invariants", "path")

``table`` comes from :func:`lagsim.output.io.read_csv`.  Bad user choices (unknown kind or column, a
kind whose columns are missing, an unsupported extension) raise :class:`InputError` naming the
valid choices.  Figures are built with matplotlib's object API on an Agg canvas; pyplot is only
imported by :func:`show`.

What is drawn (column names as in docs/architecture.md):

- ``overview``: stacked panels sharing the t axis: the coordinates; the velocities; the drift
  |residual_<c>| of every constraint on a log axis, position level (φ, seed 003's c(q) = 0) solid
  and velocity level (φ̇ and a·q̇ + b) dashed; the energy drift |h − h0| (relative to |h0|, see
  below) of h = q̇·∂L/∂q̇ − L (seed 001) on a log axis; the multipliers λ (seed 001 §10.7)
  when present.  Panels without data are left out.  For a system known not to conserve h
  (``Quantities.energy_change``: forces, explicit t, moving constraints) the energy panel is the
  energy balance instead: h − h0, the work W of the ``work_nonconservative`` column
  (:mod:`lagsim.analysis.balance`) and h − h0 − W on a linear axis; without W, |h − h0| named a
  change.
- ``time``: ``columns`` (or ``y``) against ``x`` (default ``t``); default columns: the coordinates.
- ``phase``: each coordinate (or each of ``columns``) against its ``_dot``, start and end marked.
- ``drift``: position-level and velocity-level drift, two log panels.
- ``energy``: h(t) and its relative drift (log); h − h0 with W, then |h − h0 − W| (log), when
  the table has the work column.
- ``forces``: the ``lambda_<c>`` columns.
- ``invariants``: the drift of each ``invariant_<name>`` column (``simulate --invariants``, issue
  10) on a log axis, relative |I − I₀| / |I₀| as for the energy, absolute where I₀ is no scale.
- Impacts (issue 27): on every panel whose horizontal axis is t, a dotted vertical line at
  each row where a contact's ``impulse_<c>`` column is not 0 (``simulate`` of a system with
  unilateral constraints), the time of an impact.
- ``path``: ``path_xy`` maps a mass name to its (x, y) arrays (computed by the caller from the
  system); equal axis scales, start (circle) and end (square) marked. With a ``plane``
  (:func:`plane_paths`: the plane chosen from gravity, :func:`lagsim.viz.views.choose_plane`)
  the arrays are that plane's axes, named on the axes and under the title, the vertical one
  turned over when gravity points along it, and an arrow shows gravity (issue 30: a spherical
  pendulum was drawn from the top without saying so, a pendulum hung sideways).

Log axes: |value| is drawn clipped at ``LOG_FLOOR`` = 1e-300 so that exact zeros (a consistent
start, t = 0 of a drift) drop to the bottom edge instead of breaking the line; the y range spans the
positive values but at most ``LOG_DECADES`` = 16 decades below the largest (the rest is round-off),
so neither the floor nor a stray 1e-290 squashes the scale.  A drift series with a round-off
floor (:mod:`lagsim.analysis.roundoff`: the residuals' when the system is known, the energy's
always) has it shaded, the range starting ``BELOW_FLOOR`` decade under the highest floor, and
"round-off only" in the legend when it never rises above it (the natural pendulum's residuals
were a comb of exact zeros and last bits over 16 decades).  A series that is exactly 0 throughout
is not drawn; the legend lists it as "≡ 0".  The energy panel shows |h − h0| / |h0| while the drift
stays below |h0|, otherwise (h0 = 0 or round-off) the absolute |h − h0|: dividing by
max(|h0|, tiny) would print drifts of 1e6 for a pendulum released from the horizontal.
Legends sit outside the axes, to
the right: on a short panel any inside position hides part of a curve, and constrained layout
keeps room for them.  A panel with more than ``MAX_LEGEND`` curves gets no legend (its y label
names the group and the count) and colours from a sequential colour map instead; up to
``MAX_LEGEND`` curves have distinct looks (:mod:`lagsim.viz.palette`).
"""

from __future__ import annotations

import math
import os
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lagsim import naming
from lagsim.analysis.roundoff import energy_floor
from lagsim.errors import InputError, Location
from lagsim.output.io import Output, Table, check_output, open_output
from lagsim.output.units import Quantities
from lagsim.records import record
from lagsim.viz.kinds import FIGURE_KINDS as KINDS
from lagsim.viz.palette import LINE_COLOURS, look, overlay_looks
from lagsim.viz.views import AXIS_NAMES, Plane, choose_plane, view_plane

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

__all__ = [
    "FORMATS",
    "KINDS",
    "held_coordinates",
    "gravity_arrow",
    "plane_paths",
    "quiet_corner",
    "wrap_angle",
    "LOG_DECADES",
    "LOG_FLOOR",
    "can_show_window",
    "check_choices",
    "plain",
    "make_figure",
    "suptitle",
    "default_title",
    "save_figure",
    "show",
]

FORMATS = ("png", "svg", "pdf")
LOG_FLOOR = 1e-300
LOG_DECADES = 16
BELOW_FLOOR = 1
"""Decades a log panel shows under the highest round-off floor of its series."""
ROUND_OFF_ALPHA = 0.18
ROUND_OFF_LABEL = "shaded: round-off floor"
"""The legend entry of the shading under each series' round-off floor
(:mod:`lagsim.analysis.roundoff`)."""
ROUND_OFF_ONLY = "round-off only"
"""The legend note of a series that never rises above its round-off floor."""
MAX_LEGEND = 20
FLAT = 1e-12
"""Values that vary by less than this share of their size vary by round-off only: a panel of
them is drawn as a constant (:func:`_flat_limits`)."""
NARROW = 1e-6
"""Values that vary by less than this share of their size (but more than :data:`FLAT`) get
ticks relative to a round value near them (:func:`_reference`)."""
HUGE = 1e300
"""Values past this size are drawn divided by a power of ten that the axis label names:
matplotlib's tick locator takes the difference of an axis' ends, which overflows near the
largest double (±1.8e308)."""
STACKED_T = ("overview", "drift", "energy", "forces", "invariants", "lyapunov")
"""The kinds drawn as stacked panels sharing the t axis."""
_SHORT_LABEL = 22
_PANEL_HEIGHT = 2.0
_WIDTH = 9.0


@record
class _Series:
    label: str
    x: np.ndarray
    y: np.ndarray
    dashed: bool = False
    source: int | None = None
    """Which input of an overlay the series comes from (its colour); None for one input."""
    unit: str | None = None
    """The unit the legend shows after the label: set when the panel's lines have different
    units (one shared unit is the axis label's)."""
    floor: np.ndarray | None = None
    """The round-off floor of ``y`` at each x (:mod:`lagsim.analysis.roundoff`), shaded on a
    log panel: what lies below is the rounding of the numbers ``y`` is computed from."""


@record
class _Panel:
    key: str
    ylabel: str
    series: tuple[_Series, ...]
    log: bool = False
    xlabel: str = "t"
    mark_ends: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)
    """Legend lines for what is not drawn (a coordinate held at 0)."""
    equal: bool = False
    """Equal scales on both axes (two lengths: a circle stays round)."""
    impacts: tuple[float, ...] = ()
    """The times of the impacts, marked on a panel against t."""
    zero: bool = False
    """A thin line at y = 0 (the exponents' reference)."""


_PLAIN = Quantities()


def wrap_angle(values: np.ndarray) -> np.ndarray:
    """Angles wrapped to (−π, π]: θ − 2π·⌈(θ − π)/(2π)⌉."""
    values = np.asarray(values, dtype=float)
    return values - 2.0 * np.pi * np.ceil((values - np.pi) / (2.0 * np.pi))


def _broken(x: np.ndarray, y: np.ndarray, wrapped_x: bool, wrapped_y: bool
            ) -> tuple[np.ndarray, np.ndarray]:
    """x, y with a NaN between two samples where a wrapped angle jumps by more than π, so the
    line breaks there instead of crossing the panel."""
    jumps = np.zeros(max(len(x) - 1, 0), dtype=bool)
    if wrapped_x:
        jumps |= np.abs(np.diff(x)) > np.pi
    if wrapped_y:
        jumps |= np.abs(np.diff(y)) > np.pi
    if not jumps.any():
        return x, y
    at = np.flatnonzero(jumps) + 1
    return np.insert(x.astype(float), at, np.nan), np.insert(y.astype(float), at, np.nan)


def held_coordinates(table: Table) -> tuple[str, ...]:
    """Coordinates of a constrained run whose values and velocities stay within round-off of
    zero (1e-9 of the largest coordinate), as 002 §23.7's beta and z: a panel of them would show
    rounding noise only."""
    if not table.residuals:
        return ()
    coords = list(table.coordinates)
    scale = max((float(np.nanmax(np.abs(table.column(q)))) for q in coords), default=0.0)
    tiny = 1e-9 * max(scale, 1e-300)
    out = []
    for q in coords:
        values = [np.abs(table.column(q))]
        if table.has(naming.velocity(q)):
            values.append(np.abs(table.column(naming.velocity(q))))
        if all(float(np.nanmax(v)) <= tiny for v in values):
            out.append(q)
    return tuple(out)


def plain(text: str) -> str:
    """Text from the user (a name, unit, column, title or label) as matplotlib is to show it,
    literally: every ``$`` escaped as ``\\$``. Matplotlib parses a string with an even number of
    unescaped ``$`` as mathtext, where a malformed formula (``$\\frac{$``) fails at savefig
    (issue 32); an escaped one is drawn as a plain ``$``. Applied once, where a string is handed
    to matplotlib; lagsim's own symbols (θ̇, λ) are Unicode, not mathtext."""
    return str(text).replace("$", r"\$")


TITLE_MARGIN = 0.9
"""The share of a figure's width a title line may take (constrained layout pads the edges)."""


def suptitle(fig: Figure, text: str, **kwargs: Any) -> None:
    """``fig``'s title, escaped (:func:`plain`) and broken at spaces into lines that fit
    :data:`TITLE_MARGIN` of the figure's width, each measured as the glyphs' outline at the
    title's font size: a long title of a narrow figure (``modes slider_crank --plot``: one
    4-inch panel) was clipped at both edges."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    size = FontProperties(size=kwargs.get("fontsize", rcParams["figure.titlesize"]),
                          weight=rcParams["figure.titleweight"])
    room = TITLE_MARGIN * float(fig.get_figwidth()) * 72.0

    def width(line: str) -> float:
        return float(TextPath((0.0, 0.0), plain(line), prop=size).get_extents().width)

    lines: list[str] = []
    for paragraph in str(text).split("\n"):
        line = ""
        for word in paragraph.split(" "):
            longer = f"{line} {word}" if line else word
            if line and width(longer) > room:
                lines.append(line)
                line = word
            else:
                line = longer
        lines.append(line)
    fig.suptitle(plain("\n".join(lines)), **kwargs)


GRAVITY_CORNER = (0.91, 0.86)
"""Where the gravity arrow's middle sits by default, in axes fractions (top right; an animation's
clock is top left)."""
GRAVITY_CORNERS = (GRAVITY_CORNER, (0.91, 0.14), (0.09, 0.14), (0.09, 0.86))
"""The corners :func:`quiet_corner` tries for the arrow, in this order."""
QUIET = (0.1, 0.14)
"""Half the width and height, in axes fractions, of the box about a corner the arrow takes: the
points inside it are what the arrow would cover (the double pendulum's start sat under it)."""
GRAVITY_INCHES = 0.45
"""The gravity arrow's length; in inches, so that its direction on the page is gravity's whatever
the axes' width and height."""


def quiet_corner(fractions: np.ndarray, corners: Sequence[tuple[float, float]] = GRAVITY_CORNERS
                 ) -> tuple[float, float]:
    """The first of ``corners`` with the fewest of the points ``fractions`` (an (N, 2) array in
    axes fractions) within :data:`QUIET` of it: where the gravity arrow covers least."""
    points = np.asarray(fractions, dtype=float).reshape(-1, 2)
    counts = [int(np.count_nonzero((np.abs(points[:, 0] - cx) < QUIET[0])
                                   & (np.abs(points[:, 1] - cy) < QUIET[1])))
              for cx, cy in corners]
    return corners[counts.index(min(counts))]


def gravity_arrow(ax: Axes, direction: tuple[float, float],
                  corner: tuple[float, float] = GRAVITY_CORNER) -> Any:
    """Draw an arrow labelled g along the unit vector ``direction`` (on the page) about
    ``corner`` of ``ax`` (axes fractions) and return the annotation: its head and tail are
    ``corner`` moved by ± half :data:`GRAVITY_INCHES` along ``direction``."""
    from matplotlib.transforms import ScaledTranslation

    def moved(along: float, across: float) -> Any:
        dx = 0.5 * GRAVITY_INCHES * (along * direction[0] - across * direction[1])
        dy = 0.5 * GRAVITY_INCHES * (along * direction[1] + across * direction[0])
        return ax.transAxes + ScaledTranslation(dx, dy, ax.figure.dpi_scale_trans)

    arrow = ax.annotate("", xy=corner, xycoords=moved(1.0, 0.0), xytext=corner,
                        textcoords=moved(-1.0, 0.0),
                        arrowprops={"arrowstyle": "-|>", "color": "0.3", "linewidth": 1.5})
    ax.text(*corner, "g", transform=moved(0.0, 0.5), ha="center", va="center", color="0.3",
            fontstyle="italic")
    return arrow


def plane_paths(points: Mapping[str, np.ndarray], gravity: Sequence[float] | None,
                view: tuple[float, float] | None = None
                ) -> tuple[Plane, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The plane to draw masses at ``points`` (each an (N, 3) array) in, chosen from
    ``gravity`` (a unit vector in space, :func:`lagsim.viz.views.choose_plane`) or the one
    ``view`` looks at (:func:`lagsim.viz.views.view_plane`), and each mass's path in it: its
    (across, up) arrays."""
    stacked = np.concatenate([np.asarray(r, dtype=float).reshape(-1, 3) for r in points.values()])
    finite = stacked[np.all(np.isfinite(stacked), axis=1)]
    spread = np.ptp(finite, axis=0) if len(finite) else np.zeros(3)
    plane = (choose_plane(gravity, [float(v) for v in spread]) if view is None
             else view_plane(view, gravity))
    return plane, {name: (np.asarray(r)[:, plane.across], np.asarray(r)[:, plane.up])
                   for name, r in points.items()}


def _legend(label: str) -> str:
    """A legend label: a column name by the names rule of :mod:`lagsim.symbolic.names` (θ̇1, λ_rod),
    any other text as it is; escaped (:func:`plain`)."""
    from lagsim.symbolic.names import text

    return plain(text(label) if label.isidentifier() else label)


def _group_label(names: Sequence[str], group: str, info: Quantities = _PLAIN) -> str:
    """The column names (shown by the one names rule of :mod:`lagsim.symbolic.names`: θ̇, λ_roll_x)
    when they fit a small panel's height (two short lines), else ``group``; with their unit when
    they share one."""
    from lagsim.symbolic.names import text

    units = {info.units.get(n) for n in names}
    suffix = f" [{units.pop()}]" if len(units) == 1 and None not in units else ""
    names = [text(n) for n in names]
    lines = textwrap.wrap(", ".join(names) + suffix, _SHORT_LABEL, break_long_words=False)
    if len(lines) <= 2 and all(len(line) <= _SHORT_LABEL for line in lines):
        return "\n".join(lines)
    if len(names) > MAX_LEGEND:
        return f"{group}\n({names[0]} … {names[-1]}){suffix}"
    return group + suffix


def _line_units(names: Sequence[str], info: Quantities) -> list[str | None]:
    """Each column's unit for its legend line when the columns of one panel do not share a unit
    (one unit for all, or none, is the axis label's business: :func:`_group_label`)."""
    units = [info.units.get(n) for n in names]
    return units if len(set(units)) > 1 else [None] * len(names)


def _columns_panel(table: Table, key: str, names: Sequence[str], group: str,
                   info: Quantities = _PLAIN, notes: tuple[str, ...] = ()) -> _Panel | None:
    if not names:
        return None
    t = table.time
    series = tuple(_Series(name, t, table.column(name), unit=unit)
                   for name, unit in zip(names, _line_units(names, info), strict=True))
    return _Panel(key, _group_label(names, group, info), series, xlabel=info.label(naming.TIME),
                  notes=notes)


def _drift_panel(
    table: Table, key: str, solid: Sequence[str], dashed: Sequence[str], group: str,
    floors: Mapping[str, Any] = {},
) -> _Panel | None:
    if not solid and not dashed:
        return None
    t = table.time
    series = tuple(
        _Series(f"|{name}|", t, np.abs(table.column(name)), dashed=name in dashed,
                floor=floors.get(name))
        for name in (*solid, *dashed)
    )
    return _Panel(key, _group_label([s.label for s in series], group), series, log=True)


def _energy_drift_panel(table: Table, info: Quantities = _PLAIN) -> _Panel | None:
    """Relative drift |h − h0| / |h0|, or the absolute |h − h0| when h0 is (numerically) zero;
    for a system that does not conserve h, the energy balance (:func:`_balance_panel`), or the
    change |h − h0| named as such when the work W is not known. A drift past the largest double
    (energies near ±1e308) is infinite and not drawn.

    Dividing by max(|h0|, tiny) would turn a start at h0 = 0 (a pendulum released from the
    horizontal) into drifts of 1e6 or 1e300: the ratio is only drawn while the drift stays below
    |h0|; otherwise h0 is no scale and the drift is shown in the energy's own units. The label
    says which, and why. A run with impacts (issue 27) is labelled a change, not a drift: an
    impact with restitution below 1 takes energy away by the law of the contact (the bouncing
    ball's "relative drift" rose to 1).
    """
    if not table.has_energy:
        return None
    if table.has(naming.WORK):
        return _balance_panel(table)
    h = table.column(naming.ENERGY)
    h0 = float(h[0])
    with np.errstate(over="ignore"):
        drift = np.abs(h - h0)
    floor = energy_floor(h)
    if info.energy_change is not None:
        label = f"energy change\n|energy − energy₀|\n(not conserved:\n{info.energy_change})"
        return _Panel("energy change", label, (_Series("energy change", table.time, drift,
                                                       floor=floor),), log=True)
    finite = drift[np.isfinite(drift)]
    largest = float(finite.max()) if finite.size else 0.0
    word, why = ("change", "\n(impacts)") if _impact_times(table) else ("drift", "")
    if math.isfinite(h0) and abs(h0) > 0.0 and largest <= abs(h0):
        drift, label = drift / abs(h0), f"relative {word}\n|energy − energy₀|\n/ |energy₀|{why}"
        floor = floor / abs(h0)
    elif math.isfinite(h0) and abs(h0) > 0.0:
        label = f"absolute {word}\n|energy − energy₀|\n(energy₀ = {h0:.2g} < {word}){why}"
    else:
        label = f"absolute {word}\n|energy − energy₀|\n(energy₀ = 0){why}"
    return _Panel("energy drift", label, (_Series("energy drift", table.time, drift,
                                                  floor=floor),), log=True)


def _balance_panel(table: Table) -> _Panel:
    """The energy balance of a system that does not conserve h: h − h0 against the work W of
    the non-conservative forces, moving constraints and explicit time dependence (the
    ``work_nonconservative`` column, :mod:`lagsim.analysis.balance`), and what is left, h − h0 − W:
    the integration and quadrature error, the drift proper."""
    t, h, w = table.time, table.column(naming.ENERGY), table.column(naming.WORK)
    change = h - h[0]
    series = (_Series("energy − energy₀", t, change), _Series("W (work done)", t, w, dashed=True),
              _Series("energy − energy₀ − W", t, change - w))
    return _Panel("energy balance", "energy balance\nenergy − energy₀ = W", series)


def _shown(table: Table, info: Quantities) -> tuple[list[str], list[str], tuple[str, ...]]:
    """(coordinates, velocities) worth a curve, and the held ones left out (their note)."""
    held = held_coordinates(table) if info.held is None else info.held
    coords = [q for q in table.coordinates if q not in held]
    velocities = [v for v in table.velocities if naming.rate_of(v) not in held]
    from lagsim.symbolic.names import text

    notes = tuple(f"{text(q)} ≡ 0 (a constraint)" for q in table.coordinates if q in held)
    return coords, velocities, notes


def _overview(table: Table, info: Quantities = _PLAIN) -> list[_Panel]:
    coords, velocities, notes = _shown(table, info)
    panels = [
        _columns_panel(table, "coordinates", coords, "coordinates", info, notes),
        _columns_panel(table, "velocities", velocities, "velocities", info),
        _drift_panel(
            table,
            "drift",
            table.position_residuals,
            table.velocity_residuals,
            "constraint drift\n|residual|",
            info.floors,
        ),
        _energy_drift_panel(table, info),
        _columns_panel(table, "multipliers", table.multipliers, "multipliers λ"),
    ]
    return [p for p in panels if p is not None]


def _missing(table: Table, what: str, why: str) -> InputError:
    return InputError(
        f"the CSV has no {what} columns, {why}; its columns are: {', '.join(table.columns)}",
        Location(table.source),
    )


def _checked(table: Table, names: Sequence[str]) -> list[str]:
    for name in names:
        table.column(name)
    return list(names)


def _time(table: Table, columns: Sequence[str] | None, x: str | None, y: str | None,
          info: Quantities = _PLAIN) -> _Panel:
    xname = x or naming.TIME
    names = _checked(table, [*(columns or ()), *([y] if y else [])])
    notes: tuple[str, ...] = ()
    if not names:
        shown, _, notes = _shown(table, info)
        names = shown or [c for c in table.columns if c != xname]
    _checked(table, [xname, *names])
    xdata = table.column(xname)
    series = tuple(_Series(name, xdata, table.column(name), unit=unit)
                   for name, unit in zip(names, _line_units(names, info), strict=True))
    equal = xname != naming.TIME and len(names) == 1 and info.same_scale(xname, names[0])
    return _Panel(
        "time", _group_label(names, "values", info), series, xlabel=info.label(xname),
        mark_ends=xname != naming.TIME, notes=notes, equal=equal,
    )


def _phase(table: Table, columns: Sequence[str] | None, info: Quantities = _PLAIN
           ) -> list[_Panel]:
    coords = _checked(table, columns) if columns else _shown(table, info)[0]
    panels = []
    for q in coords:
        if not table.has(naming.velocity(q)):
            if columns:
                raise InputError(
                    f"no column {naming.velocity(q)!r} to pair with {q!r} in a phase plot; "
                    f"coordinates with velocities: {', '.join(table.velocities) or 'none'}",
                    Location(table.source),
                )
            continue
        series = (_Series(q, table.column(q), table.column(naming.velocity(q))),)
        panels.append(_Panel(f"phase {q}", info.label(naming.velocity(q)), series,
                             xlabel=info.label(q), mark_ends=True))
    if not panels:
        raise _missing(table, "coordinate/velocity", "so there is no phase plot")
    return panels


def _drift(table: Table, info: Quantities = _PLAIN) -> list[_Panel]:
    panels = [
        _drift_panel(table, "position drift", table.position_residuals, (), "position drift |φ|",
                     info.floors),
        _drift_panel(
            table, "velocity drift", (), table.velocity_residuals, "velocity drift\n|residual|",
            info.floors,
        ),
    ]
    found = [p for p in panels if p is not None]
    if not found:
        raise _missing(table, "residual_*", "so the system has no constraints to drift from")
    return found


def _energy(table: Table, info: Quantities = _PLAIN) -> list[_Panel]:
    """energy − energy₀ (its value at the start in the label: no offset on the axis), then the
    drift panel; for a system that does not conserve h, energy − energy₀ beside the work W, then
    the balance's error |energy − energy₀ − W| (log). A change past the largest double is
    infinite and not drawn."""
    drift = _energy_drift_panel(table, info)
    if drift is None:
        raise _missing(table, "energy", "so there is no energy to plot")
    h = table.column(naming.ENERGY)
    with np.errstate(over="ignore"):
        change = _Series("energy − energy₀", table.time, h - h[0])
    label = f"energy − energy₀\n(energy₀ = {float(h[0]):.10g})"
    if drift.key == "energy balance":
        change, w, rest = drift.series
        error = _Series("|energy − energy₀ − W|", rest.x, np.abs(rest.y))
        return [_Panel("energy", f"{label}\nand the work W", (change, w)),
                _Panel("energy balance", "energy balance\n|energy − energy₀ − W|", (error,),
                       log=True)]
    return [_Panel("energy", label, (change,)), drift]


def _forces(table: Table) -> list[_Panel]:
    panel = _columns_panel(table, "multipliers", table.multipliers, "multipliers λ")
    if panel is None:
        raise _missing(table, "lambda_*", "so there are no constraint forces to plot")
    return [panel]


def _invariants(table: Table) -> list[_Panel]:
    """|I − I₀| / |I₀| of each ``invariant_<name>`` column, or |I − I₀| where I₀ = 0 or the
    drift exceeds |I₀| (the rule of :func:`_energy_drift_panel`)."""
    names = [c for c in table.columns if naming.invariant_of(c) is not None]
    if not names:
        raise _missing(table, "invariant_*", "so there are no invariants to plot: simulate with "
                       "--invariants, or plot the system itself")
    series = []
    for name in names:
        values = table.column(name)
        drift = np.abs(values - values[0])
        finite = drift[np.isfinite(drift)]
        scale = abs(float(values[0]))
        if math.isfinite(scale) and scale > 0 and (finite.max() if finite.size else 0) <= scale:
            series.append(_Series(f"{naming.invariant_of(name)} (relative)", table.time,
                                  drift / scale))
        else:
            series.append(_Series(f"{naming.invariant_of(name)} (absolute)", table.time, drift))
    return [_Panel("invariants", "invariant drift\n|I − I₀| (/ |I₀|)", tuple(series), log=True)]


def _lyapunov(table: Table) -> list[_Panel]:
    """The ``lyapunov_<k>`` columns of ``lagsim lyapunov --trace`` against t, in order of k."""
    names = sorted((c for c in table.columns if naming.exponent_of(c) is not None),
                   key=lambda c: naming.exponent_of(c) or 0)
    if not names:
        raise _missing(table, "lyapunov_*", "so there are no Lyapunov exponents to plot: write "
                       "them with lagsim lyapunov --trace FILE.csv")
    series = tuple(_Series(f"λ{naming.exponent_of(name)}", table.time, table.column(name))
                   for name in names)
    return [_Panel("lyapunov", "running estimate\nof λ_k (1/time)", series, zero=True)]


def _path(table: Table, path_xy: Mapping[str, tuple[ArrayLike, ArrayLike]] | None) -> _Panel:
    if not path_xy:
        raise InputError(
            "--kind path needs the system (--system FILE) to locate the masses",
            Location(table.source),
        )
    series = []
    for name, (xs, ys) in path_xy.items():
        xa, ya = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        if xa.ndim != 1 or xa.shape != ya.shape or xa.size == 0:
            raise ValueError(f"path of {name!r}: x and y must be 1-d arrays of equal length")
        series.append(_Series(name, xa, ya))
    return _Panel("path", "y", tuple(series), xlabel="x", mark_ends=True)


def _log_limits(ax: Axes, drawn: Sequence[_Series]) -> None:
    """Decades around the positive values, at most ``LOG_DECADES`` of them below the top; with
    round-off floors (:attr:`_Series.floor`), from :data:`BELOW_FLOOR` decades under the
    highest floor up: the floor's band shows even under a drift far above it, and what lies
    further down (exact zeros and last bits where the floor itself dips, a pendulum's velocity
    residual at its turning points) is round-off's own comb, cut at the bottom edge rather than
    drawn over 16 decades."""
    values = np.concatenate([s.y for s in drawn]) if drawn else np.zeros(0)
    positive = values[np.isfinite(values) & (values > 0)]
    floors = np.concatenate([s.floor for s in drawn if s.floor is not None] or [np.zeros(0)])
    floors = floors[np.isfinite(floors) & (floors > 0)]
    if positive.size == 0:
        ax.set_ylim(1e-17, 1e-15)
        ax.text(
            0.5, 0.5, "all values are exactly 0", transform=ax.transAxes, ha="center", va="center"
        )
        return
    top = math.floor(math.log10(max(positive.max(), floors.max(initial=0.0)))) + 1
    bottom = max(math.floor(math.log10(positive.min())), top - LOG_DECADES)
    if floors.size:
        bottom = max(math.floor(math.log10(floors.max())) - BELOW_FLOOR, top - LOG_DECADES)
    ax.set_ylim(10.0**bottom, 10.0 ** max(top, bottom + 1))


def _within_floor(series: _Series) -> bool:
    """Whether every value of ``series`` is at most its round-off floor (rounding alone)."""
    assert series.floor is not None
    finite = np.isfinite(series.y)
    return bool(np.all(series.y[finite] <= series.floor[finite]))


def _flat_limits(ax: Axes, drawn: Sequence[_Series]) -> None:
    """A linear panel whose values vary by round-off only (less than :data:`FLAT` of their
    size) gets the y range matplotlib gives a constant, ±5 % of it: zoomed to its round-off,
    rod_two_particles' λ_rod ≈ −8/3 had ticks −2.666666666666664 … −2.666666666666669."""
    values = np.concatenate([s.y for s in drawn]) if drawn else np.zeros(0)
    values = values[np.isfinite(values)]
    size = float(np.max(np.abs(values))) if values.size else 0.0
    if size > 0.0 and float(np.ptp(values)) <= FLAT * size:
        middle = 0.5 * float(values.min() + values.max())
        ax.set_ylim(middle - 0.05 * size, middle + 0.05 * size)


def _reference(ax: Axes, drawn: Sequence[_Series]) -> float | None:
    """For a linear panel whose values vary, but by less than :data:`NARROW` of their size: a
    round value c near them (four digits of their size), the ticks labelled y − c and c named
    in the axis label (returned); None for any other panel. Without it the ticks of skate's
    λ_skate ≈ −0.5, varying by 1e-10, read −0.500000000025 …; matplotlib's own offset text in
    the corner is what issue 14 took away."""
    from matplotlib.ticker import FuncFormatter

    values = np.concatenate([s.y for s in drawn]) if drawn else np.zeros(0)
    values = values[np.isfinite(values)]
    size = float(np.max(np.abs(values))) if values.size else 0.0
    spread = float(np.ptp(values)) if values.size else 0.0
    if not FLAT * size < spread <= NARROW * size:
        return None
    step = 10.0 ** (math.floor(math.log10(size)) - 3)
    reference = round(float(np.mean(values)) / step) * step
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _: f"{v - reference:.3g}".replace("-", "−")))
    return reference


def _looks(drawn: Sequence[_Series]) -> list[tuple[Any, str]]:
    """The colour and line style of each of ``drawn``: distinct looks from
    :data:`~lagsim.viz.palette.LINE_COLOURS` for a panel with a legend (a 12-link chain's
    coordinates were shades of a sequential map that a reader could not tell apart), a
    sequential map past :data:`MAX_LEGEND`, where the order is all a reader can see."""
    from matplotlib import colormaps

    if len(drawn) <= MAX_LEGEND:
        return [look(i, LINE_COLOURS, s.dashed) for i, s in enumerate(drawn)]
    colours = colormaps["viridis"](np.linspace(0.0, 0.9, len(drawn)))
    return [(c, "--" if s.dashed else "-") for c, s in zip(colours, drawn, strict=True)]


def _markers(marker: str) -> dict[str, Any]:
    """The keywords of a line's ``marker`` (none for ""), spaced a tenth of the axes apart."""
    return {"marker": marker, "markevery": 0.1, "markersize": 5} if marker else {}


def _draw_panel(ax: Axes, panel: _Panel, legend: bool) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    zero = [s for s in panel.series if panel.log and bool(np.all(s.y == 0.0))]
    drawn = [s for s in panel.series if not any(s is z for z in zero)]
    overlay = any(s.source is not None for s in drawn)
    bands: list[Any] = []
    looks = (overlay_looks([s.source or 0 for s in drawn]) if overlay
             else [(c, s, "") for c, s in _looks(drawn)])
    for series, (colour, style, marker) in zip(drawn, looks, strict=True):
        y = np.maximum(series.y, LOG_FLOOR) if panel.log else series.y
        ax.plot(
            series.x,
            y,
            color=colour,
            label=_legend(series.label) + (f" [{plain(series.unit)}]" if series.unit else ""),
            linestyle=style,
            linewidth=1.2,
            **_markers(marker),
        )
        if panel.mark_ends:
            ax.plot(series.x[:1], y[:1], "o", color=colour, markersize=6)
            ax.plot(series.x[-1:], y[-1:], "s", color=colour, markersize=6)
        if panel.log and series.floor is not None:
            bands.append(colour)
            ax.fill_between(series.x, LOG_FLOOR, np.maximum(series.floor, LOG_FLOOR),
                            color=colour, alpha=ROUND_OFF_ALPHA, linewidth=0, gid="round-off")
    if panel.zero:
        ax.axhline(0.0, color="0.6", linewidth=0.8, gid="zero")
    if panel.impacts:
        ax.vlines(panel.impacts, 0.0, 1.0, transform=ax.get_xaxis_transform(), colors="0.45",
                  linestyles=":", linewidth=0.8, label="impacts", gid="impacts")
    if panel.log:
        ax.set_yscale("log")
        _log_limits(ax, drawn)
    else:
        ax.ticklabel_format(axis="y", useOffset=False)
        _flat_limits(ax, drawn)
    if ax.get_xscale() == "linear":
        ax.ticklabel_format(axis="x", useOffset=False)
    if panel.equal:
        ax.set_aspect("equal", adjustable="datalim")
    reference = None if panel.log else _reference(ax, drawn)
    if reference is None:
        ax.set_ylabel(plain(panel.ylabel))
    else:
        minus = f"− ({reference:g})".replace("-", "−")
        ax.set_ylabel(plain(f"{panel.ylabel} {minus}" if len(drawn) == 1
                            else f"{panel.ylabel}\n(each {minus})"))
    ax.set_label(panel.key)
    ax.grid(True, which="major", alpha=0.3)
    floored = [s for s in drawn if panel.log and s.floor is not None]
    count = len(panel.series) + len(panel.notes)
    if legend and (1 < count <= MAX_LEGEND or overlay or floored):
        handles: list[Any] = [line for line in ax.lines
                              if not str(line.get_label()).startswith("_")]
        shade = bands[0] if len(set(map(str, bands))) == 1 else "0.5"
        handles += [Patch(color=shade, alpha=ROUND_OFF_ALPHA, linewidth=0,
                          label=ROUND_OFF_LABEL)] if floored else []
        handles += [Line2D([], [], linestyle="none", label=f"{_legend(s.label)}: "
                           f"{ROUND_OFF_ONLY}") for s in floored if _within_floor(s)]
        if panel.impacts:
            handles.append(Line2D([], [], color="0.45", linestyle=":", label="impacts"))
        handles += [Line2D([], [], linestyle="none", label=f"{_legend(s.label)} ≡ 0")
                    for s in zero]
        handles += [Line2D([], [], linestyle="none", label=plain(note)) for note in panel.notes]
        _outside_legend(ax, handles, ncols=1 if count <= 10 else 2)


def _power(arrays: Sequence[np.ndarray]) -> int:
    """The power of ten to divide ``arrays`` by to draw them: that of their largest finite
    magnitude when it is past :data:`HUGE`, else 0."""
    largest = max((float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0)) for a in arrays),
                  default=0.0)
    return math.floor(math.log10(largest)) if largest > HUGE else 0


def _scaled(panel: _Panel) -> _Panel:
    """``panel`` with values past :data:`HUGE` divided by a power of ten, named in the axis
    label ("x / 1e308"); both axes by the same power on an equal-scale panel; the y values of
    a log-scale panel as they are (its locator takes logarithms)."""
    ky = 0 if panel.log else _power([s.y for s in panel.series])
    kx = _power([s.x for s in panel.series])
    if panel.equal:
        kx = ky = max(kx, ky)
    if not (kx or ky):
        return panel
    series = tuple(replace(s, x=s.x / 10.0**kx if kx else s.x, y=s.y / 10.0**ky if ky else s.y)
                   for s in panel.series)
    return replace(panel, series=series,
                   impacts=tuple(t / 10.0**kx for t in panel.impacts) if kx else panel.impacts,
                   ylabel=f"{panel.ylabel} / 1e{ky}" if ky else panel.ylabel,
                   xlabel=f"{panel.xlabel} / 1e{kx}" if kx else panel.xlabel)


def _outside_legend(ax: Axes, handles: list, ncols: int = 1) -> None:
    """A legend to the right of the axes, where it can cover no curve of a small panel."""
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              fontsize="small", frameon=False, ncols=ncols)


def _stacked(fig: Figure, panels: Sequence[_Panel], share_t: bool) -> None:
    fig.set_size_inches(_WIDTH, 1.0 + _PANEL_HEIGHT * len(panels))
    axes = fig.subplots(len(panels), 1, sharex=share_t, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels, strict=True):
        _draw_panel(ax, panel, legend=True)
        if not share_t:
            ax.set_xlabel(plain(panel.xlabel))
    if share_t:
        axes[-1].set_xlabel(plain(panels[-1].xlabel))


def _grid(fig: Figure, panels: Sequence[_Panel]) -> None:
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig.set_size_inches(3.4 * ncols + 0.5, 3.0 * nrows + 0.8)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, panel in zip(axes, panels, strict=False):
        _draw_panel(ax, panel, legend=False)
        ax.set_xlabel(plain(panel.xlabel))
    for ax in axes[len(panels) :]:
        fig.delaxes(ax)


def _fractions(panel: _Panel, down: bool) -> np.ndarray:
    """The points of ``panel``'s series as fractions of their bounding box with matplotlib's 5 %
    margins (the axes' fractions before equal scales widen one axis), y from the top when the
    axis is turned ``down``."""
    points = np.concatenate([np.column_stack([s.x, s.y]) for s in panel.series])
    points = points[np.all(np.isfinite(points), axis=1)]
    if len(points) == 0:
        return points
    low, span = points.min(axis=0), np.ptp(points, axis=0)
    fractions = 0.05 + 0.9 * np.divide(points - low, span, out=np.full_like(points, 0.5),
                                       where=span > 0)
    if down:
        fractions[:, 1] = 1.0 - fractions[:, 1]
    return fractions


def _path_figure(fig: Figure, panel: _Panel, plane: Plane | None = None) -> None:
    from matplotlib.lines import Line2D

    fig.set_size_inches(7.5, 6.5)
    ax = fig.subplots()
    _draw_panel(ax, panel, legend=False)
    ax.set_xlabel(plain(panel.xlabel))
    ax.set_aspect("equal", adjustable="datalim")
    if plane is not None:
        ax.set_xlabel(AXIS_NAMES[plane.across])
        ax.set_ylabel(AXIS_NAMES[plane.up])
        ax.set_title(plane.caption, fontsize="small")
        if plane.down:
            ax.invert_yaxis()
        if plane.gravity is not None:
            gravity_arrow(ax, plane.gravity, quiet_corner(_fractions(panel, plane.down)))
    handles = [
        Line2D([], [], color=line.get_color(), linestyle=line.get_linestyle(),
               label=line.get_label()) for line in ax.lines[::3]
    ]
    handles += [
        Line2D([], [], marker="o", linestyle="", color="0.3", label="start"),
        Line2D([], [], marker="s", linestyle="", color="0.3", label="end"),
    ]
    if len(handles) <= MAX_LEGEND + 2:
        _outside_legend(ax, handles)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InputError(f"unknown plot kind {kind!r}; choose one of: {', '.join(KINDS)}")


def check_choices(kind: str, columns: Sequence[str] | None, x: str | None, y: str | None,
                  inputs: int) -> None:
    """Refuse options that do not go with ``kind`` (``--columns``, ``--x``, ``--y``) and more
    than one input for ``path``, as InputErrors naming them; also for the 3-D path of
    :mod:`lagsim.viz.scene3d`."""
    _check_kind(kind)
    if kind not in ("time", "phase") and (columns or x or y):
        raise InputError(
            f"--columns, --x and --y apply to --kind time (and --columns to phase), not {kind!r}"
        )
    if kind == "phase" and (x or y):
        raise InputError("--x and --y apply to --kind time; --kind phase takes --columns")
    if kind == "path" and inputs > 1:
        raise InputError("--kind path draws one input; give one CSV or system")


Inputs = Table | Sequence[tuple[str, Table]]
"""One table, or (label, table) pairs drawn over each other in one figure."""


def _inputs(table: Inputs) -> list[tuple[str | None, Table]]:
    if isinstance(table, Table):
        return [(None, table)]
    pairs: list[tuple[str | None, Table]] = [(label, t) for label, t in table]
    if not pairs:
        raise ValueError("no table to draw")
    return pairs if len(pairs) > 1 else [(None, pairs[0][1])]


def _wrapped(table: Table, names: Sequence[str]) -> Table:
    """``table`` with the columns ``names`` wrapped to (−π, π]."""
    if not names:
        return table
    data = np.array(table.data, dtype=float)
    for name in names:
        table.column(name)
        index = table.columns.index(name)
        data[:, index] = wrap_angle(data[:, index])
    return Table(table.columns, data, table.source)


def _breaks(panel: _Panel, wrap: frozenset[str], x: str | None) -> _Panel:
    """The panel with its lines broken where a wrapped angle jumps by more than π."""
    if not wrap:
        return panel
    phase = panel.key.startswith("phase ")
    series = []
    for s in panel.series:
        name = s.label.rsplit(": ", 1)[-1]
        wrap_x = (name in wrap) if phase else (x is not None and x in wrap)
        wrap_y = (not phase) and name in wrap
        xs, ys = _broken(s.x, s.y, wrap_x, wrap_y)
        series.append(replace(s, x=xs, y=ys))
    return replace(panel, series=tuple(series))


def _panels(table: Table, kind: str, columns: Sequence[str] | None, x: str | None,
            y: str | None, path_xy: Mapping[str, tuple[ArrayLike, ArrayLike]] | None,
            info: Quantities) -> list[_Panel]:
    if kind == "overview":
        panels = _overview(table, info)
        if not panels:
            raise _missing(table, "coordinate, drift or energy", "so there is no overview")
        return panels
    if kind == "time":
        return [_time(table, columns, x, y, info)]
    if kind == "phase":
        return _phase(table, columns, info)
    if kind == "drift":
        return _drift(table, info)
    if kind == "energy":
        return _energy(table, info)
    if kind == "forces":
        return _forces(table)
    if kind == "invariants":
        return _invariants(table)
    if kind == "lyapunov":
        return _lyapunov(table)
    return [_path(table, path_xy)]


def _merged(runs: list[tuple[str | None, list[_Panel]]]) -> list[_Panel]:
    """The panels of several inputs, one panel per key in order of first appearance, each series
    labelled with its input's label and coloured by input."""
    if len(runs) == 1:
        return runs[0][1]
    order: list[str] = []
    merged: dict[str, _Panel] = {}
    for index, (label, panels) in enumerate(runs):
        for panel in panels:
            series = tuple(replace(s, label=f"{label}: {s.label}" if len(panel.series) > 1
                                   else str(label), source=index) for s in panel.series)
            if panel.key not in merged:
                order.append(panel.key)
                merged[panel.key] = replace(panel, series=series)
            else:
                old = merged[panel.key]
                merged[panel.key] = replace(old, series=old.series + series,
                                            notes=tuple(dict.fromkeys(old.notes + panel.notes)),
                                            impacts=tuple(sorted(set(old.impacts
                                                                     + panel.impacts))))
    return [merged[key] for key in order]


def _draw(
    fig: Figure,
    table: Inputs,
    kind: str,
    columns: Sequence[str] | None,
    x: str | None,
    y: str | None,
    title: str | None,
    path_xy: Mapping[str, tuple[ArrayLike, ArrayLike]] | None,
    info: Quantities | None = None,
    wrap: Sequence[str] = (),
    plane: Plane | None = None,
) -> None:
    info = info or _PLAIN
    inputs = _inputs(table)
    check_choices(kind, columns, x, y, len(inputs))
    against_t = kind in STACKED_T or (
        kind == "time" and (x is None or x == naming.TIME))
    runs = [(label, [replace(_breaks(p, frozenset(wrap), x),
                             impacts=_impact_times(t) if against_t else ())
                     for p in _panels(_wrapped(t, wrap), kind, columns, x, y, path_xy, info)])
            for label, t in inputs]
    panels = [_scaled(p) for p in _merged(runs)]
    if kind in STACKED_T:
        _stacked(fig, panels, share_t=True)
    elif kind == "time":
        _stacked(fig, panels, share_t=False)
    elif kind == "phase":
        _grid(fig, panels)
    else:
        _path_figure(fig, panels[0], plane)
    if title is None:
        title = ", ".join(dict.fromkeys(default_title(t) for _, t in inputs))
    suptitle(fig, title)


def _impact_times(table: Table) -> tuple[float, ...]:
    """The times of the rows where an ``impulse_<c>`` column is not 0 (issue 27)."""
    impulses = [table.column(c) for c in table.columns if naming.is_impulse(c)]
    if not impulses or not table.has(naming.TIME):
        return ()
    rows = np.any(np.column_stack(impulses) != 0.0, axis=1)
    return tuple(float(t) for t in table.column(naming.TIME)[rows])


def default_title(table: Table) -> str:
    """What a figure of ``table`` is titled when the user gives no title: the system or file it
    came from (its source's stem), or ``lagsim`` for a table with no file."""
    return "lagsim" if table.source.startswith("<") else Path(table.source).stem


def make_figure(
    table: Inputs,
    kind: str = "overview",
    columns: Sequence[str] | None = None,
    x: str | None = None,
    y: str | None = None,
    title: str | None = None,
    path_xy: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
    info: Quantities | None = None,
    wrap: Sequence[str] = (),
    plane: Plane | None = None,
) -> Figure:
    """Build the figure of ``kind`` for ``table`` on an Agg canvas (see the module docstring).

    ``table`` may be a list of (label, table) pairs, drawn over each other with a legend of the
    labels; ``info`` says what the columns measure (units, lengths, angles, held coordinates);
    ``wrap`` names angle columns drawn wrapped to (−π, π]; ``plane`` (:func:`plane_paths`) the
    plane ``path_xy`` lies in."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _check_kind(kind)
    fig = Figure(layout="constrained")
    FigureCanvasAgg(fig)
    _draw(fig, table, kind, columns, x, y, title, path_xy, info, wrap, plane)
    return fig


def save_figure(fig: Figure, path: str | Path | Output, dpi: int = 150) -> None:
    """Write ``fig`` to ``path`` (png, svg or pdf, by extension) through
    :func:`lagsim.output.io.open_output`: ``-`` or a nameless device gets a PNG, a device or FIFO is
    written in place, a file is replaced atomically (the old one stays on failure)."""
    target = path if isinstance(path, Output) else check_output(path, formats=FORMATS, binary=True)
    fmt = target.format(FORMATS)
    if not dpi or dpi <= 0:
        raise InputError(f"--dpi must be a positive number, not {dpi!r}")
    with open_output(target, binary=True) as out:
        fig.savefig(out, format=fmt, dpi=dpi)


def can_show_window() -> bool:
    """True where a plot window can open: a GUI platform or an X11/Wayland display."""
    backend = os.environ.get("MPLBACKEND", "").lower()
    if backend in ("agg", "pdf", "svg", "ps", "cairo", "template"):
        return False
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def show(table: Table, **kwargs: Any) -> None:
    """Draw ``make_figure(table, **kwargs)`` into a pyplot window and block until it is closed."""
    import matplotlib.pyplot as plt

    _check_kind(kwargs.get("kind", "overview"))
    fig = plt.figure(layout="constrained")
    try:
        _draw(
            fig,
            table,
            kwargs.pop("kind", "overview"),
            kwargs.pop("columns", None),
            kwargs.pop("x", None),
            kwargs.pop("y", None),
            kwargs.pop("title", None),
            kwargs.pop("path_xy", None),
            kwargs.pop("info", None),
            kwargs.pop("wrap", ()),
            kwargs.pop("plane", None),
        )
    except BaseException:
        plt.close(fig)
        raise
    if kwargs:
        plt.close(fig)
        raise TypeError(f"unexpected keywords: {sorted(kwargs)}")
    plt.show()
