"""Figures of a lagsim CSV: motion, constraint drift and energy drift (issue 4).

Signatures for the CLI::

    make_figure(table: Table, kind: str = "overview", columns: Sequence[str] | None = None,
                x: str | None = None, y: str | None = None, title: str | None = None,
                path_xy: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None) -> Figure
    save_figure(fig: Figure, path: str | Path | Output, dpi: int = 150) -> None
    show(table: Table, **same keywords as make_figure) -> None      # a pyplot window
    can_show_window() -> bool                                       # is there a display?
    KINDS = ("overview", "time", "phase", "drift", "energy", "forces", "path")

``table`` comes from :func:`lagsim.io.read_csv`.  Bad user choices (unknown kind or column, a
kind whose columns are missing, an unsupported extension) raise :class:`InputError` naming the
valid choices.  Figures are built with matplotlib's object API on an Agg canvas; pyplot is only
imported by :func:`show`.

What is drawn (column names as in docs/architecture.md):

- ``overview``: stacked panels sharing the t axis: the coordinates; the velocities; the drift
  |residual_<c>| of every constraint on a log axis, position level (φ, seed 003's c(q) = 0) solid
  and velocity level (φ̇ and a·q̇ + b) dashed; the energy drift |h − h0| (relative to |h0|, see
  below) of h = q̇·∂L/∂q̇ − L (seed 001) on a log axis; the multipliers λ (seed 001 §10.7)
  when present.  Panels without data are left out.
- ``time``: ``columns`` (or ``y``) against ``x`` (default ``t``); default columns: the coordinates.
- ``phase``: each coordinate (or each of ``columns``) against its ``_dot``, start and end marked.
- ``drift``: position-level and velocity-level drift, two log panels.
- ``energy``: h(t) and its relative drift (log).
- ``forces``: the ``lambda_<c>`` columns.
- ``path``: ``path_xy`` maps a mass name to its (x, y) arrays (computed by the caller from the
  system); equal axis scales, start (circle) and end (square) marked.

Log axes: |value| is drawn clipped at ``LOG_FLOOR`` = 1e-300 so that exact zeros (a consistent
start, t = 0 of a drift) drop to the bottom edge instead of breaking the line; the y range spans the
positive values but at most ``LOG_DECADES`` = 16 decades below the largest (the rest is round-off),
so neither the floor nor a stray 1e-290 squashes the scale.  A series that is exactly 0 throughout
is not drawn; the legend lists it as "≡ 0".  The energy panel shows |h − h0| / |h0| while the drift
stays below |h0|, otherwise (h0 = 0 or round-off) the absolute |h − h0|: dividing by
max(|h0|, tiny) would print drifts of 1e6 for a pendulum released from the horizontal.
Legends sit outside the axes, to
the right: on a short panel any inside position hides part of a curve, and constrained layout
keeps room for them.  A panel with more than ``MAX_LEGEND`` curves gets no legend (its y label
names the group and the count) and colours from a sequential colour map instead.
"""

from __future__ import annotations

import math
import os
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lagsim.errors import InputError, Location
from lagsim.io import Output, Table, check_output, open_output

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

__all__ = [
    "FORMATS",
    "KINDS",
    "LOG_DECADES",
    "LOG_FLOOR",
    "can_show_window",
    "make_figure",
    "save_figure",
    "show",
]

KINDS = ("overview", "time", "phase", "drift", "energy", "forces", "path")
FORMATS = ("png", "svg", "pdf")
LOG_FLOOR = 1e-300
LOG_DECADES = 16
MAX_LEGEND = 20
_SHORT_LABEL = 22
_PANEL_HEIGHT = 2.0
_WIDTH = 9.0


@dataclass(frozen=True)
class _Series:
    label: str
    x: np.ndarray
    y: np.ndarray
    dashed: bool = False


@dataclass(frozen=True)
class _Panel:
    key: str
    ylabel: str
    series: tuple[_Series, ...]
    log: bool = False
    xlabel: str = "t"
    mark_ends: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


def _group_label(names: Sequence[str], group: str) -> str:
    """The column names (shown by the one names rule of :mod:`lagsim.names`: θ̇, λ_roll_x) when
    they fit a small panel's height (two short lines), else ``group``."""
    from lagsim.names import text

    names = [text(n) for n in names]
    lines = textwrap.wrap(", ".join(names), _SHORT_LABEL, break_long_words=False)
    if len(lines) <= 2 and all(len(line) <= _SHORT_LABEL for line in lines):
        return "\n".join(lines)
    if len(names) > MAX_LEGEND:
        return f"{group}\n({names[0]} … {names[-1]})"
    return group


def _columns_panel(table: Table, key: str, names: Sequence[str], group: str) -> _Panel | None:
    if not names:
        return None
    t = table.time
    series = tuple(_Series(name, t, table.column(name)) for name in names)
    return _Panel(key, _group_label(names, group), series)


def _drift_panel(
    table: Table, key: str, solid: Sequence[str], dashed: Sequence[str], group: str
) -> _Panel | None:
    if not solid and not dashed:
        return None
    t = table.time
    series = tuple(
        _Series(f"|{name}|", t, np.abs(table.column(name)), dashed=name in dashed)
        for name in (*solid, *dashed)
    )
    return _Panel(key, _group_label([s.label for s in series], group), series, log=True)


def _energy_drift_panel(table: Table) -> _Panel | None:
    """Relative drift |h − h0| / |h0|, or the absolute |h − h0| when h0 is (numerically) zero.

    Dividing by max(|h0|, tiny) would turn a start at h0 = 0 (a pendulum released from the
    horizontal) into drifts of 1e6 or 1e300: the ratio is only drawn while the drift stays below
    |h0|; otherwise h0 is no scale and the drift is shown in the energy's own units.
    """
    if not table.has_energy:
        return None
    h = table.column("energy")
    h0 = float(h[0])
    drift = np.abs(h - h0)
    finite = drift[np.isfinite(drift)]
    largest = float(finite.max()) if finite.size else 0.0
    if math.isfinite(h0) and abs(h0) > 0.0 and largest <= abs(h0):
        drift, label = drift / abs(h0), "|energy − energy₀|\n/ |energy₀|"
    else:
        label = "|energy − energy₀|"
    return _Panel("energy drift", label, (_Series("energy drift", table.time, drift),), log=True)


def _overview(table: Table) -> list[_Panel]:
    panels = [
        _columns_panel(table, "coordinates", table.coordinates, "coordinates"),
        _columns_panel(table, "velocities", table.velocities, "velocities"),
        _drift_panel(
            table,
            "drift",
            table.position_residuals,
            table.velocity_residuals,
            "constraint drift\n|residual|",
        ),
        _energy_drift_panel(table),
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


def _time(table: Table, columns: Sequence[str] | None, x: str | None, y: str | None) -> _Panel:
    xname = x or "t"
    names = _checked(table, [*(columns or ()), *([y] if y else [])])
    if not names:
        names = list(table.coordinates) or [c for c in table.columns if c != xname]
    _checked(table, [xname, *names])
    xdata = table.column(xname)
    series = tuple(_Series(name, xdata, table.column(name)) for name in names)
    return _Panel(
        "time", _group_label(names, "values"), series, xlabel=xname, mark_ends=xname != "t"
    )


def _phase(table: Table, columns: Sequence[str] | None) -> list[_Panel]:
    coords = _checked(table, columns) if columns else list(table.coordinates)
    panels = []
    for q in coords:
        if not table.has(f"{q}_dot"):
            if columns:
                raise InputError(
                    f"no column {q + '_dot'!r} to pair with {q!r} in a phase plot; "
                    f"coordinates with velocities: {', '.join(table.velocities) or 'none'}",
                    Location(table.source),
                )
            continue
        series = (_Series(q, table.column(q), table.column(f"{q}_dot")),)
        panels.append(_Panel(f"phase {q}", f"{q}_dot", series, xlabel=q, mark_ends=True))
    if not panels:
        raise _missing(table, "coordinate/velocity", "so there is no phase plot")
    return panels


def _drift(table: Table) -> list[_Panel]:
    panels = [
        _drift_panel(table, "position drift", table.position_residuals, (), "position drift |φ|"),
        _drift_panel(
            table, "velocity drift", (), table.velocity_residuals, "velocity drift\n|residual|"
        ),
    ]
    found = [p for p in panels if p is not None]
    if not found:
        raise _missing(table, "residual_*", "so the system has no constraints to drift from")
    return found


def _energy(table: Table) -> list[_Panel]:
    drift = _energy_drift_panel(table)
    if drift is None:
        raise _missing(table, "energy", "so there is no energy to plot")
    return [_columns_panel(table, "energy", ["energy"], "energy"), drift]  # type: ignore[list-item]


def _forces(table: Table) -> list[_Panel]:
    panel = _columns_panel(table, "multipliers", table.multipliers, "multipliers λ")
    if panel is None:
        raise _missing(table, "lambda_*", "so there are no constraint forces to plot")
    return [panel]


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
    """Decades around the positive values, at most ``LOG_DECADES`` of them below the top."""
    values = np.concatenate([s.y for s in drawn]) if drawn else np.zeros(0)
    positive = values[np.isfinite(values) & (values > 0)]
    if positive.size == 0:
        ax.set_ylim(1e-17, 1e-15)
        ax.text(
            0.5, 0.5, "all values are exactly 0", transform=ax.transAxes, ha="center", va="center"
        )
        return
    top = math.floor(math.log10(positive.max())) + 1
    bottom = max(math.floor(math.log10(positive.min())), top - LOG_DECADES)
    ax.set_ylim(10.0**bottom, 10.0 ** max(top, bottom + 1))


def _colours(n: int) -> list[Any]:
    from matplotlib import colormaps

    if n <= 10:
        return [f"C{i}" for i in range(n)]
    return list(colormaps["viridis"](np.linspace(0.0, 0.9, n)))


def _draw_panel(ax: Axes, panel: _Panel, legend: bool) -> None:
    from matplotlib.lines import Line2D

    zero = [s for s in panel.series if panel.log and bool(np.all(s.y == 0.0))]
    drawn = [s for s in panel.series if not any(s is z for z in zero)]
    for series, colour in zip(drawn, _colours(len(drawn)), strict=True):
        y = np.maximum(series.y, LOG_FLOOR) if panel.log else series.y
        ax.plot(
            series.x,
            y,
            color=colour,
            label=series.label,
            linestyle="--" if series.dashed else "-",
            linewidth=1.2,
        )
        if panel.mark_ends:
            ax.plot(series.x[:1], y[:1], "o", color=colour, markersize=6)
            ax.plot(series.x[-1:], y[-1:], "s", color=colour, markersize=6)
    if panel.log:
        ax.set_yscale("log")
        _log_limits(ax, drawn)
    ax.set_ylabel(panel.ylabel)
    ax.set_label(panel.key)
    ax.grid(True, which="major", alpha=0.3)
    if legend and 1 < len(panel.series) <= MAX_LEGEND:
        handles = [line for line in ax.lines if not line.get_label().startswith("_")]
        handles += [Line2D([], [], linestyle="none", label=f"{s.label} ≡ 0") for s in zero]
        _outside_legend(ax, handles, ncols=1 if len(panel.series) <= 10 else 2)


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
            ax.set_xlabel(panel.xlabel)
    if share_t:
        axes[-1].set_xlabel(panels[-1].xlabel)


def _grid(fig: Figure, panels: Sequence[_Panel]) -> None:
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig.set_size_inches(3.4 * ncols + 0.5, 3.0 * nrows + 0.8)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, panel in zip(axes, panels, strict=False):
        _draw_panel(ax, panel, legend=False)
        ax.set_xlabel(panel.xlabel)
    for ax in axes[len(panels) :]:
        fig.delaxes(ax)


def _path_figure(fig: Figure, panel: _Panel) -> None:
    from matplotlib.lines import Line2D

    fig.set_size_inches(7.5, 6.5)
    ax = fig.subplots()
    _draw_panel(ax, panel, legend=False)
    ax.set_xlabel(panel.xlabel)
    ax.set_aspect("equal", adjustable="datalim")
    handles = [
        Line2D([], [], color=line.get_color(), label=line.get_label()) for line in ax.lines[::3]
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


def _draw(
    fig: Figure,
    table: Table,
    kind: str,
    columns: Sequence[str] | None,
    x: str | None,
    y: str | None,
    title: str | None,
    path_xy: Mapping[str, tuple[ArrayLike, ArrayLike]] | None,
) -> None:
    _check_kind(kind)
    if kind not in ("time", "phase") and (columns or x or y):
        raise InputError(
            f"--columns, --x and --y apply to --kind time (and --columns to phase), not {kind!r}"
        )
    if kind == "phase" and (x or y):
        raise InputError("--x and --y apply to --kind time; --kind phase takes --columns")
    if kind == "overview":
        panels = _overview(table)
        if not panels:
            raise _missing(table, "coordinate, drift or energy", "so there is no overview")
        _stacked(fig, panels, share_t=True)
    elif kind == "time":
        _stacked(fig, [_time(table, columns, x, y)], share_t=False)
    elif kind == "phase":
        _grid(fig, _phase(table, columns))
    elif kind == "drift":
        _stacked(fig, _drift(table), share_t=True)
    elif kind == "energy":
        _stacked(fig, _energy(table), share_t=True)
    elif kind == "forces":
        _stacked(fig, _forces(table), share_t=True)
    else:
        _path_figure(fig, _path(table, path_xy))
    fig.suptitle(title if title is not None else _default_title(table))


def _default_title(table: Table) -> str:
    return "lagsim" if table.source.startswith("<") else Path(table.source).stem


def make_figure(
    table: Table,
    kind: str = "overview",
    columns: Sequence[str] | None = None,
    x: str | None = None,
    y: str | None = None,
    title: str | None = None,
    path_xy: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
) -> Figure:
    """Build the figure of ``kind`` for ``table`` on an Agg canvas (see the module docstring)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _check_kind(kind)
    fig = Figure(layout="constrained")
    FigureCanvasAgg(fig)
    _draw(fig, table, kind, columns, x, y, title, path_xy)
    return fig


def save_figure(fig: Figure, path: str | Path | Output, dpi: int = 150) -> None:
    """Write ``fig`` to ``path`` (png, svg or pdf, by extension) through
    :func:`lagsim.io.open_output`: ``-`` or a nameless device gets a PNG, a device or FIFO is
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
        )
    except BaseException:
        plt.close(fig)
        raise
    if kwargs:
        plt.close(fig)
        raise TypeError(f"unexpected keywords: {sorted(kwargs)}")
    plt.show()
