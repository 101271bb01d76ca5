"""The ``lagsim`` command: a thin click layer over the Python API (the entry point is
:func:`lagsim.cli.app.main`)."""

from lagsim.cli.app import main

__all__ = ["main"]
