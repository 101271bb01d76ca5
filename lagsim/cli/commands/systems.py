"""``lagsim systems``: the bundled systems."""

from __future__ import annotations

import click

from lagsim.cli.completion import complete_system
from lagsim.cli.files import bundled_text
from lagsim.cli.options import example


@click.command("systems", epilog=example("lagsim systems"))
@click.option("--show", "show", metavar="NAME", shell_complete=complete_system,
              help="Print the file of the bundled system NAME instead of the list.")
def command(show: str | None) -> None:
    """List the bundled systems, with the first line of each description.

    Each works by name in every command (`lagsim derive pendulum`); `--show NAME` prints its
    file, and `lagsim new NAME -o my.yaml` copies it as a starting point of your own.
    """
    from lagsim.spec.references import public_text
    from lagsim.spec.system import bundled_systems, load_spec

    if show is not None:
        click.echo(bundled_text(show, "--show"), nl=False)
        return
    names = bundled_systems()
    width = max(map(len, names), default=0) + 2
    for name in names:
        spec = load_spec(name)
        summary = " ".join(public_text(spec.description).split())
        summary = summary.split(". ")[0].rstrip(".:")
        room = max(40, 96 - width)
        if len(summary) > room:
            summary = summary[:room - 1] + "…"
        click.echo(f"{name:{width}s}{summary}")
