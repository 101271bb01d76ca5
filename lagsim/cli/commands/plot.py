"""``lagsim plot``: figures of a CSV, a system's run, a sweep's table or Poincaré sections
(:mod:`lagsim.viz.figures`, :mod:`lagsim.viz.sweep_figures`)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lagsim import naming
from lagsim.cli.completion import complete_system
from lagsim.cli.exits import warn
from lagsim.cli.files import inputs
from lagsim.cli.options import example, flags, force_option, simulate_options, view_option
from lagsim.cli.runs import looks_like_csv, table_and_model
from lagsim.errors import InputError, Location
from lagsim.viz.kinds import KIND_HELP, KINDS

if TYPE_CHECKING:
    from lagsim.output.io import Output, Table
    from lagsim.spec.system import SystemSpec
    from lagsim.symbolic.model import Model
    from lagsim.viz.figures import Quantities


def _kinds_help() -> str:
    """The kinds of ``plot --kind`` and what each draws, as a block click keeps as written."""
    width = max(map(len, KINDS)) + 4
    lines = []
    for kind in KINDS:
        lines += textwrap.wrap(KIND_HELP[kind], 76, initial_indent=f"  {kind:{width - 2}s}",
                               subsequent_indent=" " * width)
    return "\b\nKinds (--kind):\n" + "\n".join(lines)


@click.command("plot", epilog=f"{_kinds_help()}\n\n"
               + example("lagsim simulate pendulum_natural | lagsim plot --kind drift -o drift.png")
               + "\n  lagsim plot none.csv projection.csv --kind drift -o drift.png")
@click.argument("sources", nargs=-1, metavar="[INPUT]...", shell_complete=complete_system)
@click.option("-o", "--output", metavar="FILE", help="Image file; the type follows the extension "
              "(png, svg, pdf); - writes a PNG to stdout. Without it: a window if there is a "
              "display, else <name>.png.")
@click.option("--kind", type=click.Choice(KINDS), default="overview", show_default=True,
              help="What to draw; the kinds are listed below.")
@click.option("--system", metavar="FILE", help="The system the CSV came from (for --kind path "
              "and invariants, units, lengths and angles); its parameters must be the run's "
              "(give them with --set): the CSV's energy and residual columns are checked.")
@click.option("--columns", metavar="A,B,...", help="Columns to draw (time and phase kinds).")
@click.option("--x", "x", metavar="COL", help="Column on the x axis (time, sweep and poincare "
              "kinds); equal scales when it measures what --y does (two lengths).")
@click.option("--y", "y", metavar="COL", help="Column on the y axis (time, sweep and poincare "
              "kinds; for a sweep, a column the runs computed).")
@click.option("--wrap", is_flag=False, flag_value="", default=None, metavar="[A,B,...]",
              help="Draw angles wrapped to (-pi, pi]: the columns named, or without names the "
                   "angle coordinates of the system (those only inside sin and cos, or with a "
                   "unit rad).")
@click.option("--label", "labels", multiple=True, metavar="TEXT",
              help="Legend label of each INPUT, in order, when several are drawn over each "
                   "other [default: their file names].")
@click.option("--title", metavar="TEXT", help="Figure title [default: the system's name, or "
              "the CSV's file name].")
@click.option("--dpi", type=click.IntRange(min=10, max=2400), default=150, show_default=True)
@view_option
@force_option
@simulate_options
def command(sources: tuple[str, ...], output: str | None, kind: str, system: str | None,
            columns: str | None, x: str | None, y: str | None, wrap: str | None,
            labels: tuple[str, ...], title: str | None, dpi: int,
            view: tuple[float, float] | None, force: bool, overrides: dict[str, float],
            initial: dict[str, float], **kwargs: Any) -> None:
    """Draw the trajectory, constraint drift and energy drift of a CSV, or of a system.

    INPUT is a CSV file (the output of `lagsim simulate`), - or nothing for such a CSV on
    standard input, or a system (a YAML path or a bundled name), which is simulated first with
    its own simulate: settings and the simulate options below. Several INPUTs are drawn over
    each other, one colour each, with a legend of their file names (or --label).
    """
    from lagsim.output.io import check_output, derived_path
    from lagsim.viz import figures as plotting

    sources = sources or ("-",)
    if view is not None and kind != "path":
        raise InputError(f"applies to --kind path (and to animate), not to --kind {kind}",
                         Location("--view"))
    if labels and len(labels) != len(sources):
        raise InputError(f"--label is given {len(labels)} times for {len(sources)} INPUTs; give "
                         "one label per INPUT, in order", Location("--label"))
    if sources.count("-") > 1:
        raise InputError("standard input (-) can be read once; give the other INPUTs as files",
                         Location("INPUT"))
    target = None
    first = sources[0]
    if output is not None or not plotting.can_show_window():
        if output is None:
            stem = Path(first).stem if first != "-" else Path(system or "lagsim").stem
            output = derived_path(".", stem if stem not in ("", ".", "..") else "lagsim", ".png")
            warn(f"no display: writing {output}")
        target = check_output(output, formats=plotting.FORMATS, binary=True,
                              inputs=inputs(force, *((s, "INPUT") for s in sources),
                                            (system, "--system")))
    if len(sources) == 1 and _plot_sweep(sources[0], kind, x, y, title, target, dpi, system,
                                         kwargs, overrides, initial, wrap):
        return
    given = flags(kwargs)
    if kind == "invariants":
        given.setdefault("invariants", True)
    runs = [table_and_model(source, system, given, overrides, initial) for source in sources]
    if kind == "invariants":
        from lagsim.run.columns import table_with_invariants

        runs = [(table_with_invariants(t, m) if m is not None and not any(
                    naming.invariant_of(c) is not None for c in t.columns) else t, m, s)
                for t, m, s in runs]
    if kind in ("overview", "energy"):
        runs = [(_with_work(t, m), m, s) for t, m, s in runs]
    table, model, spec = runs[0]
    cols = [c.strip() for c in columns.split(",")] if columns else None
    path_xy = plane = None
    if kind == "path":
        if model is None:
            raise InputError("--kind path needs the system: give --system FILE, or plot the "
                             "system itself", Location("--kind"))
        from lagsim.analysis.kinematics import gravity_vector, has_bodies, mass_points

        if spec is not None and has_bodies(spec):
            plotting.check_choices(kind, cols, x, y, len(runs))
            _plot_3d(table, model, spec, view, title, target, dpi)
            return
        plane, path_xy = plotting.plane_paths(mass_points(model, table),
                                              None if spec is None else gravity_vector(spec), view)
    info = None
    if model is not None and spec is not None:
        from lagsim.analysis.kinematics import quantities
        from lagsim.symbolic.invariants import energy_conserved

        info = replace(quantities(spec, model),
                       energy_change=energy_conserved(model, model.substitutions()))
        if len(runs) == 1 and kind in ("overview", "drift"):
            from lagsim.analysis.roundoff import residual_floors

            info = replace(info, floors=residual_floors(model, table))
    if title is None and model is not None:
        title = model.name
    wrapped = _wrap_columns(wrap, info, table)
    drawn: Any = table
    if len(runs) > 1:
        names = labels or _input_labels(sources)
        drawn = [(name, run[0]) for name, run in zip(names, runs)]
    options: dict[str, Any] = {"kind": kind, "columns": cols, "x": x, "y": y, "title": title,
                               "path_xy": path_xy, "info": info, "wrap": wrapped,
                               "plane": plane}
    fig = plotting.make_figure(drawn, **options)
    if target is None:
        plotting.show(drawn, **options)
        return
    plotting.save_figure(fig, target, dpi)


def _plot_3d(table: Table, model: Model, spec: SystemSpec, view: tuple[float, float] | None,
             title: str | None, target: Output | None, dpi: int) -> None:
    """``--kind path`` of a system with 3-D bodies: the 3-D figure of
    :func:`lagsim.viz.scene3d.path_figure`, saved to ``target``, or in a window without one."""
    from lagsim.viz.figures import save_figure
    from lagsim.viz.scene3d import path_figure, scene, show_path
    from lagsim.viz.views import parse_view

    drawn = scene(spec, model, table)
    angles = view or parse_view(None)
    name = model.name if title is None else title
    if target is None:
        show_path(drawn, angles, name)
        return
    save_figure(path_figure(drawn, angles, name), target, dpi)


def _with_work(table: Table, model: Model | None) -> Table:
    """The table with the work of the non-conservative forces (:mod:`lagsim.analysis.balance`)
    when the system does not conserve h, for the energy balance; a line on stderr when it cannot
    be had."""
    if model is None:
        return table
    from lagsim.analysis.balance import table_with_work

    table, note = table_with_work(table, model)
    if note:
        warn(f"{note}; the energy panel shows its change, not the balance")
    return table


def _input_labels(sources: Sequence[str]) -> list[str]:
    """Legend labels of several INPUTs: their file names, made unique by their folders."""
    names = [Path(s).name if s != "-" else "stdin" for s in sources]
    if len(set(names)) < len(names):
        names = [s if s != "-" else "stdin" for s in sources]
    return names


def _wrap_columns(wrap: str | None, info: Quantities | None, table: Table) -> list[str]:
    """The columns ``--wrap`` wraps: those named, or the system's angle coordinates."""
    if wrap is None:
        return []
    if wrap.strip():
        names = [c.strip() for c in wrap.split(",") if c.strip()]
        for name in names:
            table.column(name)
        return names
    if info is None:
        raise InputError("--wrap without names needs the system to know which coordinates are "
                         "angles: give --system FILE, or name them (--wrap theta1,theta2)",
                         Location("--wrap"))
    angles = [q for q in table.coordinates if info.dimensions.get(q) == "angle"]
    if not angles:
        raise InputError("the system has no angle coordinates (none enters the mass "
                         "positions only through sin and cos); name the columns to wrap",
                         Location("--wrap"))
    return angles


def _plot_sweep(source: str, kind: str, x: str | None, y: str | None, title: str | None,
                target: Output | None, dpi: int, system: str | None, kwargs: dict[str, Any],
                overrides: dict[str, float], initial: dict[str, float], wrap: str | None) -> bool:
    """The kinds of :mod:`lagsim.viz.sweep_figures` (issue 12): a sweep's table (chosen by
    itself for a table whose first column is run), or Poincaré sections of a file, a folder of
    runs, or a system simulated with --section, the columns ``--wrap`` names wrapped. False
    when the plot is none of these."""
    from lagsim.viz import sweep_figures as plot_sweep

    if kind not in plot_sweep.KINDS and not (kind == "overview"
                                             and plot_sweep.is_sweep_table(source)):
        return False
    from lagsim.viz.figures import save_figure

    table = None
    if kind == "poincare" and not Path(source).is_dir() and (
            source == "-" or not looks_like_csv(source)):
        table = table_and_model(source, system, flags(kwargs), overrides, initial)[0]
    kind = "poincare" if kind == "poincare" else "sweep"
    if wrap is not None and not wrap.strip():
        raise InputError(f"name the columns to wrap for --kind {kind} (--wrap {x or 'theta'})",
                         Location("--wrap"))
    wrapped = [c.strip() for c in (wrap or "").split(",") if c.strip()]
    if target is None:
        plot_sweep.show(kind, source, x, y, title, table, wrapped)
        return True
    save_figure(plot_sweep.make_figure(kind, source, x, y, title, table, wrapped), target, dpi)
    return True
