"""``lagsim export``: a system as standalone C or as an FMI 2.0 or 3.0 FMU, through
:meth:`lagsim.api.System.export_c` and :meth:`lagsim.api.System.export_fmu`."""

from __future__ import annotations

import click

from lagsim import api
from lagsim.cli.exits import warn
from lagsim.cli.options import example, required_file_argument, set_option
from lagsim.errors import InputError, Location


@click.command("export", epilog=example("lagsim export pendulum --fmu -o pendulum.fmu",
                                        "lagsim export double_pendulum --c double_pendulum_c"))
@required_file_argument
@click.option("--c", "folder", metavar="DIR", default=None,
              help="Write standalone C (NAME.h, NAME.c, an example main.c) into the folder "
                   "DIR.")
@click.option("--fmu", is_flag=True, help="Write an FMU (Model Exchange and Co-Simulation).")
@click.option("-o", "--output", metavar="NAME.fmu", default=None,
              help="The FMU's file [default: the system's name .fmu here].")
@click.option("--fmi", type=click.Choice(("2", "3")), default="2", show_default=True,
              help="The FMI version of the FMU (2.0 or 3.0).")
@click.option("--formulation", metavar="NAME", default=None,
              help="index1 (or auto): the form of a constrained system that is exported.")
@click.option("--stabilize", metavar="NAME", default=None,
              help="baumgarte (the default of an export) or none.")
@click.option("--baumgarte", metavar="ALPHA,BETA", default=None,
              help="Baumgarte's gains, the start values of the parameters baumgarte_alpha "
                   "and baumgarte_beta [default: the file's, else 5,5].")
@click.option("--stop-when", "stop_when", metavar="EXPR", default=None,
              help="The FMU's event indicator in Model Exchange: the run ends where EXPR "
                   "changes sign [default: the file's].")
@click.option("--force", is_flag=True, help="Write over an existing FMU file or C folder.")
@set_option
def command(file: str, folder: str | None, fmu: bool, output: str | None, fmi: str,
            formulation: str | None, stabilize: str | None, baumgarte: str | None,
            stop_when: str | None, force: bool, overrides: dict[str, float]) -> None:
    """Export FILE as standalone C (--c DIR) or as an FMI 2.0 or 3.0 FMU (--fmu [--fmi 3]), to
    run it in other tools.

    The C needs no Python and no lagsim: a header documents the state, parameter and output
    layouts, the right-hand side, the outputs and the integrator; main.c shows its use and its
    build line. The FMU holds its sources and, when a C compiler is found, the binary for this
    platform. A constrained system is exported in the index1 form with Baumgarte's
    stabilization (lagsim simulate --formulation index1 --stabilize baumgarte integrates the
    same equations). See docs/export.md.
    """
    if (folder is None) == (not fmu):
        raise InputError("give one of --c DIR and --fmu", Location("--c" if folder else "--fmu"))
    if output is not None and not fmu:
        raise InputError("-o names the FMU's file; give --fmu with it", Location("-o"))
    system = api.open_system(file, overrides)
    flags = dict(formulation=formulation, stabilize=stabilize, baumgarte=baumgarte,
                 stop_when=stop_when)
    if folder is not None:
        written = system.export_c(folder, force=force, flags=flags)
        warn(f"wrote {', '.join(str(p) for p in written)}; build with: cc -O2 -o "
             f"{written[0].stem} {written[2]} {written[1]} -lm")
        return
    path = system.export_fmu(output or f"{system.name}.fmu", force=force, flags=flags,
                             report=lambda message: warn(f"warning: {message}"), fmi=int(fmi))
    warn(f"wrote {path}")
