"""Figures of a sweep (issue 12): ``lagsim plot sweep.csv --x theta0 --y period`` and
``lagsim plot --kind poincare --x q --y q_dot``.

- kind ``sweep`` (chosen by itself for a sweep's table, whose first column is ``run``): a
  summary column (``--y``) against a swept one (``--x``): a line for a 1-D sweep (one line per
  value of the other swept columns when there are a few), a heat map over (``--x``, the other
  swept column) for a 2-D grid, a scatter coloured by ``--y`` for scattered 2-D values (random
  draws). Failed runs (NaN) leave gaps.
- kind ``poincare``: the points (``--x``, ``--y``) of a ``--section`` run's CSV, or of every CSV
  of a folder (``sweep --section ... --save-trajectories DIR``), one colour per file: the
  sections of many starts on one figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, Location
from lagsim.spec.expressions import suggest
from lagsim.viz.figures import default_title, plain, suptitle, wrap_angle
from lagsim.viz.kinds import SWEEP_KINDS as KINDS  # noqa: F401  (cli.py reads plot_sweep.KINDS)


def is_sweep_table(source: str) -> bool:
    """Whether ``source`` is a file whose header starts with ``run,`` (a sweep's CSV) or a
    Parquet file."""
    path = Path(source)
    if source == "-" or not path.is_file():
        return False
    if path.suffix.lower() == ".parquet":
        return True
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read(4) == "run,"


def swept_columns(header: Sequence[str]) -> list[str]:
    """The swept columns of a sweep's table: between ``run`` and the final state, which is the
    coordinates followed by their ``_dot`` columns just before ``max_residual_*`` or
    ``energy_drift``, ``energy_change`` or ``energy_gain`` (lagsim.sweep.core.columns; a system that
    does not conserve h has no drift, only a gain)."""
    names = [h for h in header if h != naming.ERROR]
    energy = (naming.ENERGY_DRIFT, naming.ENERGY_CHANGE, naming.ENERGY_GAIN)
    end = next((k for k, h in enumerate(names) if naming.is_max_residual(h) or h in energy),
               len(names))
    k = end
    while k > 1 and naming.is_velocity(names[k - 1]):
        k -= 1
    n = end - k
    return names[1:k - n]


def _column(header: Sequence[str], data: np.ndarray, name: str, option: str) -> np.ndarray:
    names = [h for h in header if h != naming.ERROR]
    if name not in names:
        raise InputError(f"no column {name!r}{suggest(name, names)}; the columns are "
                         f"{', '.join(names)}", Location(option))
    return data[:, names.index(name)]


def sweep_figure(fig: Any, header: Sequence[str], data: np.ndarray, x: str | None,
                 y: str | None, title: str | None) -> None:
    """Draw ``--y`` against ``--x`` of a sweep's table on ``fig``."""
    swept = swept_columns(header)
    if x is None:
        if not swept:
            raise InputError("give --x, a swept column", Location("--x"))
        x = swept[0]
    if y is None:
        raise InputError(f"give --y, the column to draw against {x!r}, e.g. a --summary column",
                         Location("--y"))
    xs = _column(header, data, x, "--x")
    ys = _column(header, data, y, "--y")
    if y in swept:
        responses = [h for h in header if h not in (naming.RUN, naming.ERROR, *swept)]
        raise InputError(f"--y {y!r} is a swept column, an input of the runs: drawn over --x "
                         f"{x!r} it shows the grid, not a result; choose a column the runs "
                         f"computed: {', '.join(responses)}", Location("--y"))
    others = [s for s in swept if s != x]
    ax = fig.add_subplot()
    ax.set_xlabel(plain(x))
    if len(others) == 1:
        other = _column(header, data, others[0], "--x")
        ux, uo = np.unique(xs), np.unique(other)
        if len(ux) * len(uo) == len(xs) and len(uo) > 1 and len(ux) > 1:
            grid = np.full((len(uo), len(ux)), np.nan)
            grid[np.searchsorted(uo, other), np.searchsorted(ux, xs)] = ys
            mesh = ax.pcolormesh(ux, uo, grid, shading="nearest")
            fig.colorbar(mesh, ax=ax, label=plain(y))
            ax.set_ylabel(plain(others[0]))
            suptitle(fig, title or f"{y} over {x} and {others[0]}")
            return
        if len(uo) > 10:
            points = ax.scatter(xs, other, c=ys, s=12)
            fig.colorbar(points, ax=ax, label=plain(y))
            ax.set_ylabel(plain(others[0]))
            suptitle(fig, title or f"{y} over {x} and {others[0]}")
            return
    groups = _groups(header, data, others)
    for label, rows in groups:
        order = np.argsort(xs[rows], kind="stable")
        ax.plot(xs[rows][order], ys[rows][order], marker="." if len(rows) < 60 else None,
                label=plain(label) or None)
    if any(label for label, _ in groups):
        ax.legend(fontsize="small")
    ax.set_ylabel(plain(y))
    suptitle(fig, title or f"{y} against {x}")


def _groups(header: Sequence[str], data: np.ndarray, others: Sequence[str]
            ) -> list[tuple[str, np.ndarray]]:
    """Rows by the values of the other swept columns (one line each), or all rows as one."""
    if not others:
        return [("", np.arange(len(data)))]
    keys = np.column_stack([_column(header, data, o, "--x") for o in others])
    unique = np.unique(keys, axis=0)
    if len(unique) > 10:
        raise InputError(f"the other swept columns ({', '.join(others)}) take {len(unique)} "
                         "values: too many lines for one figure; choose --x among them",
                         Location("--x"))
    out = []
    for key in unique:
        rows = np.flatnonzero(np.all(keys == key, axis=1))
        out.append((", ".join(f"{o} = {v:g}" for o, v in zip(others, key)), rows))
    return out


def section_sources(source: str) -> list[Path]:
    """The CSV files of a Poincaré figure: ``source`` itself, or every ``*.csv`` (and
    ``*.parquet``) of a folder, in name order."""
    path = Path(source)
    if path.is_dir():
        files = sorted([*path.glob("*.csv"), *path.glob("*.parquet")])
        if not files:
            raise InputError("the folder has no .csv or .parquet files", Location(source))
        return files
    return [path]


def read_points(path: Path, x: str, y: str) -> tuple[np.ndarray, np.ndarray]:
    """Columns ``x`` and ``y`` of one section's CSV (or Parquet) file."""
    if path.suffix.lower() == ".parquet":
        from lagsim.sweep.core import PARQUET_MISSING, have_parquet

        if not have_parquet():
            raise InputError(PARQUET_MISSING, Location(str(path)))
        import pyarrow.parquet as pq

        data = pq.read_table(path)
        header = list(data.column_names)
        array = np.column_stack([data.column(n).to_numpy() for n in header]) if len(data) \
            else np.zeros((0, len(header)))
    else:
        from lagsim.output.io import read_csv

        table = read_csv(str(path))
        header, array = list(table.columns), table.data
    return (_column(header, array, x, "--x"), _column(header, array, y, "--y"))


DOT_AREA = 4000.0
"""The area in points² a Poincaré section's dots share (:func:`poincare_figure`)."""
DOT_SIZES = (2.5, 12.0)
"""The smallest and largest dot, in points²: 2.5 keeps a section of 10⁵ crossings a texture."""


def poincare_figure(fig: Any, sections: Sequence[tuple[np.ndarray, np.ndarray]],
                    x: str, y: str, title: str | None, name: str = "lagsim") -> int:
    """Draw the points (x, y) of each section on ``fig``, one colour each, the columns named by
    the names rule (θ̇ for theta_dot, as the other kinds name them), each point as large as
    :data:`DOT_AREA` shared among the points allows (a few dozen crossings were specks); the
    number of points. Without ``title`` the figure is titled with ``name``, the system or
    files drawn, as the other kinds are (:func:`lagsim.viz.figures.default_title`)."""
    from lagsim.symbolic.names import text

    ax = fig.add_subplot()
    total = sum(len(xs) for xs, _ in sections)
    size = float(np.clip(DOT_AREA / max(total, 1), *DOT_SIZES))
    count = 0
    for (xs, ys), colour in zip(sections, _colours(len(sections))):
        ax.scatter(xs, ys, s=size, color=colour, linewidths=0)
        count += len(xs)
    ax.set_xlabel(plain(text(x) if x.isidentifier() else x))
    ax.set_ylabel(plain(text(y) if y.isidentifier() else y))
    runs = len(sections)
    suptitle(fig, title or f"{name}: Poincaré section ({runs} run{'s' * (runs > 1)}, "
                  f"{count} crossings)")
    return count


def _needs_xy(x: str | None, y: str | None) -> tuple[str, str]:
    if x is None or y is None:
        raise InputError("--kind poincare needs --x and --y, the columns to draw (such as "
                         "theta2 and theta2_dot)", Location("--kind"))
    return x, y


def _colours(n: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["viridis" if n > 10 else "tab10"]
    return [cmap(k / max(n - 1, 1)) if n > 10 else cmap(k) for k in range(n)]


def make_figure(kind: str, source: str | None, x: str | None, y: str | None,
                title: str | None, table: Any = None, wrap: Sequence[str] = ()) -> Any:
    """The figure of ``kind`` (``sweep`` or ``poincare``) on an Agg canvas (:func:`draw`)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig, kind, source, x, y, title, table, wrap)
    return fig


def draw(fig: Any, kind: str, source: str | None, x: str | None, y: str | None,
         title: str | None, table: Any = None, wrap: Sequence[str] = ()) -> None:
    """Draw ``kind`` for the file or folder ``source``, or for a ``table``
    (:class:`lagsim.output.io.Table`) already read or simulated, on ``fig``; a Poincaré
    section's ``--x`` and ``--y`` wrapped to (−π, π] when ``wrap`` names them (a pendulum's
    section of θ spread over −65 … −5 without it). ``wrap`` naming anything else, or given for
    a sweep, is an InputError naming ``--wrap``."""
    if wrap and (kind != "poincare" or set(wrap) - {x, y}):
        raise InputError(f"wraps the --x and --y of --kind poincare here; got {', '.join(wrap)}"
                         + ("" if kind == "poincare" else f" for --kind {kind}"),
                         Location("--wrap"))
    if kind == "poincare":
        x, y = _needs_xy(x, y)
        if table is not None:
            header, array = list(table.columns), table.data
            sections = [(_column(header, array, x, "--x"), _column(header, array, y, "--y"))]
            name = default_title(table)
        else:
            assert source is not None
            sections = [read_points(path, x, y) for path in section_sources(source)]
            name = Path(source).stem
        sections = [(wrap_angle(xs) if x in wrap else xs, wrap_angle(ys) if y in wrap else ys)
                    for xs, ys in sections]
        poincare_figure(fig, sections, x, y, title, name)
    else:
        from lagsim.sweep.core import read_table

        assert source is not None
        header, data, _errors = read_table(source)
        sweep_figure(fig, header, data, x, y, title)


def show(kind: str, source: str | None, x: str | None, y: str | None, title: str | None,
         table: Any = None, wrap: Sequence[str] = ()) -> None:
    """Draw ``kind`` (:func:`draw`) in a window (pyplot)."""
    import matplotlib.pyplot as plt

    draw(plt.figure(layout="constrained"), kind, source, x, y, title, table, wrap)
    plt.show()
