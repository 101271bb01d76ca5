"""The ``lagsim`` command: a thin click layer over the Python API (the entry point is
:func:`lagsim.cli.group.main`; the commands are :mod:`lagsim.cli.commands`)."""

from lagsim.cli.group import main

__all__ = ["main"]
