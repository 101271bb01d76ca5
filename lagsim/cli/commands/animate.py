"""``lagsim animate``: the masses of a run drawn frame by frame (:mod:`lagsim.viz.animate`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from lagsim.cli.completion import complete_system
from lagsim.cli.exits import warn
from lagsim.cli.files import inputs
from lagsim.cli.options import example, flags, force_option, simulate_options, view_option
from lagsim.cli.progress import Progress
from lagsim.cli.runs import table_and_model
from lagsim.errors import InputError, Location

if TYPE_CHECKING:
    from lagsim.output.io import Output, Table
    from lagsim.spec.system import SystemSpec
    from lagsim.symbolic.model import Model


@click.command("animate", epilog=example("lagsim animate double_pendulum -o dp.gif --fps 25"))
@click.argument("source", default="-", metavar="[INPUT]", shell_complete=complete_system)
@click.option("--system", metavar="FILE", help="The system the CSV came from (needed for a CSV); "
              "its parameters must be the run's (give them with --set): the CSV's energy and "
              "residual columns are checked.")
@click.option("-o", "--output", required=True, metavar="FILE.gif|FILE.mp4",
              help="The animation; - writes a GIF to stdout.")
@click.option("--fps", type=click.IntRange(min=1, max=120), default=30, show_default=True)
@click.option("--frames", type=click.IntRange(min=2), default=None, metavar="N",
              help="Frames to draw, evenly over the run, shown at --fps (a time-lapse or a "
                   "slow motion) [default: --fps per simulated second].")
@click.option("--trail", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
              help="Seconds of fading trail behind each mass.")
@click.option("--dpi", type=click.IntRange(min=10, max=600), default=100, show_default=True,
              help="Resolution of the frames (lower makes a smaller file).")
@view_option
@force_option
@simulate_options
def command(source: str, system: str | None, output: str, fps: int, frames: int | None,
            trail: float, dpi: int, view: tuple[float, float] | None, force: bool,
            overrides: dict[str, float], initial: dict[str, float], **kwargs: Any) -> None:
    """Animate the masses of a system: dots, rods, a fading trail, a clock and gravity.

    INPUT is a system (a YAML path or a bundled name), simulated first with its own simulate:
    settings and the simulate options below; or a CSV file of `lagsim simulate` (- or nothing:
    on standard input) together with --system naming the system it came from.

    Each frame shows the masses as dots, a rod between two masses (or a mass and the origin)
    whose distance stays fixed, a spring where the file declares one (springs:) or its
    potential has a term k/2*(|r1 - r2| - l0)**2, the trail of the last --trail seconds through
    every sample, the clock, and an arrow along the file's gravity, in the plane gravity points
    down in (named under the title).

    A system with 3-D bodies (masses with an orientation) is drawn in 3-D, seen from --view:
    each body as its principal axes and its box of equal inertia, the trail of the tip of its
    symmetry axis (a top's precession and nutation), the origin marked.
    """
    from lagsim.analysis.kinematics import (
        gravity_vector,
        has_bodies,
        mass_points,
        rods,
        springs,
    )
    from lagsim.output.io import check_output
    from lagsim.viz.animate import animate, check_animation_output, check_frames, frame_count

    if frames is not None:
        check_frames(frames, fps)
    target = check_animation_output(check_output(
        output, binary=True, inputs=inputs(force, (source, "INPUT"), (system, "--system"))))

    def planned(options: Any) -> None:
        """Refuse too many frames before simulating (issue 32: `--t-end 20000` simulated
        20000 s, then was refused); a run that may stop early is counted after it ran."""
        if frames is None and options.stop_when is None:
            frame_count(options.t_start, options.t_end, fps)

    table, model, spec = table_and_model(source, system, flags(kwargs), overrides, initial,
                                         planned)
    if model is None or spec is None:
        raise InputError("animating a CSV needs the system it came from: add --system FILE",
                         Location("--system"))
    if has_bodies(spec):
        drawn = _animate_3d(table, model, spec, target, view, fps, trail, dpi, frames)
    else:
        from lagsim.viz.figures import plane_paths

        points = mass_points(model, table)
        plane, paths = plane_paths(points, gravity_vector(spec), view)
        links = rods(model, {name: tuple(r.T) for name, r in points.items()})
        coils = [(a if isinstance(a, str) else plane.project(a),
                  b if isinstance(b, str) else plane.project(b)) for a, b in springs(spec, model)]
        progress = Progress("animating")
        try:
            drawn = animate(table, paths, links, target, fps=fps, trail=trail,
                            title=model.name, dpi=dpi, gravity=plane.gravity,
                            springs=coils, progress=progress, frames=frames, plane=plane)
        finally:
            progress.close()
    warn(f"wrote {'standard output' if target.kind == 'stdout' else output} ({drawn} frames)")


def _animate_3d(table: Table, model: Model, spec: SystemSpec, target: Output,
                view: tuple[float, float] | None, fps: int, trail: float, dpi: int,
                frames: int | None) -> int:
    """The animation of a system with 3-D bodies (:func:`lagsim.viz.animate.animate_3d`); its
    springs are not drawn, which a line on stderr says."""
    from lagsim.analysis.kinematics import springs
    from lagsim.viz.animate import animate_3d
    from lagsim.viz.scene3d import scene
    from lagsim.viz.views import parse_view

    drawn = scene(spec, model, table)
    if springs(spec, model):
        warn("springs are drawn in the plane only; the 3-D animation leaves them out")
    progress = Progress("animating")
    try:
        return animate_3d(table, drawn, target, view or parse_view(None), fps=fps, trail=trail,
                          title=model.name, dpi=dpi, progress=progress, frames=frames)
    finally:
        progress.close()
