"""The files a command reads: a bundled system's file and text, the inputs an output must not
overwrite, the image of ``--plot -o FILE`` checked before any work, and the hint on stderr when
a command waits on a terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lagsim.cli.exits import warn
from lagsim.errors import InputError, Location, printable

if TYPE_CHECKING:
    from lagsim.output.io import Output


def stdin_hint(source: str, what: str, argument: str) -> None:
    """One line on stderr when a command is about to read a terminal (a bare `lagsim derive`):
    without it, waiting for input looks like a hang."""
    stdin = sys.stdin
    if source == "-" and stdin is not None and stdin.isatty():
        warn(f"reading {what} from standard input; Ctrl-D to end, or give {argument}")


def inputs(force: bool, *given: tuple[str | None, str]) -> tuple[tuple[str, str], ...]:
    """The files a command reads, as (path, what it is) for :func:`lagsim.output.io.check_output`'s
    refusal of an output that is one of them; none with --force. A bundled system's name
    stands for its file in the package."""
    if force:
        return ()
    found = []
    for name, what in given:
        if name is None or name == "-":
            continue
        path = Path(name)
        if not path.exists() and path.parent == Path("."):
            path = Path(bundled_file(name[:-5] if name.endswith(".yaml") else name))
        found.append((str(path), what))
    return tuple(found)


def plot_target(draw: bool, output: str | None, force: bool,
                *given: tuple[str | None, str]) -> Output | None:
    """The image file of ``--plot -o FILE`` (:func:`lagsim.cli.options.plot_options`), checked
    before any work against the formats a figure is saved in and the files ``given`` the command
    reads (:func:`inputs`); None without ``--plot``. ``--plot`` without ``-o`` (or with ``-o -``)
    and ``-o`` without ``--plot`` are errors: standard output carries the report."""
    if not draw:
        if output is not None:
            raise InputError("-o is the image of --plot; add --plot, or drop -o",
                             Location("--output"))
        return None
    from lagsim.output.io import check_output
    from lagsim.viz import figures as plotting

    if output is None or output == "-":
        raise InputError("--plot needs -o FILE (png, svg or pdf); standard output carries "
                         "the report", Location("--plot"))
    return check_output(output, formats=plotting.FORMATS, binary=True,
                        inputs=inputs(force, *given))


def bundled_file(name: str) -> str:
    """The path of the bundled system ``name``'s file in the package (it may not exist)."""
    from lagsim.spec.system import bundled_folder

    return str(bundled_folder() / f"{name}.yaml")


def bundled_text(name: str, option: str) -> str:
    """The text of the bundled system ``name``, or an error naming ``option`` that lists the
    bundled names (a path is not a bundled system: it is already a file of the user's)."""
    from lagsim.spec.expressions import suggest
    from lagsim.spec.system import bundled_folder, bundled_systems

    names = bundled_systems()
    if name not in names:
        raise InputError(f"no bundled system {printable(repr(name))}{suggest(name, names)}; "
                         f"they are {', '.join(names)}", Location(option))
    return (bundled_folder() / f"{name}.yaml").read_text("utf-8")
