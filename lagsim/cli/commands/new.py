"""``lagsim new``: a bundled system copied as a starting point."""

from __future__ import annotations

import re
from pathlib import Path

import click

from lagsim.cli.completion import complete_system
from lagsim.cli.exits import warn
from lagsim.cli.files import bundled_file, bundled_text, inputs
from lagsim.cli.options import example
from lagsim.errors import InputError, Location, printable


@click.command("new", epilog=example("lagsim new double_pendulum -o my_pendulum.yaml"))
@click.argument("name", metavar="NAME", shell_complete=complete_system)
@click.option("-o", "--output", metavar="FILE", default=None,
              help="Where to write the copy [default: NAME.yaml here]; - for standard output.")
@click.option("--force", is_flag=True,
              help="Replace FILE if it exists (without it, an existing file is kept), even the "
                   "bundled file itself.")
def command(name: str, output: str | None, force: bool) -> None:
    """Copy the bundled system NAME into a file of your own, as a starting point.

    The copy's `name:` becomes the file's name (my_pendulum.yaml is named my_pendulum); the rest
    is the bundled file as `lagsim systems --show NAME` prints it. An existing FILE is never
    replaced without --force: it is most likely a system you have edited, and unlike a CSV or a
    picture it cannot be made again by running a command.
    """
    from lagsim.output.io import check_output, derived_path, open_output

    text = bundled_text(name, "NAME")
    output = output if output is not None else derived_path(".", name, ".yaml")
    bundled = bundled_file(name)
    target = check_output(output, "-o", inputs=inputs(force, (bundled, "NAME")))
    if target.kind == "file" and target.path.exists() and not force:
        raise InputError(f"{printable(repr(output))} exists; give --force to replace it, or "
                         "another file name", Location("-o"))
    stem = Path(output).stem if target.kind == "file" else name
    if stem != name and stem.isidentifier():
        text = re.sub(r"^name:.*$", f"name: {stem}", text, count=1, flags=re.MULTILINE)
    with open_output(target) as out:
        out.write(text)
    if target.kind != "stdout":
        warn(f"wrote {output} (a copy of {name}); try `lagsim derive {output}`")
