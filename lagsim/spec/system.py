"""Where lagsim reads a system file: a path, a bundled system's name or ``-`` (:func:`read_source`)
to a validated, immutable :class:`SystemSpec` (:func:`load_spec`, :func:`parse_spec`).

The spec and its parts are declared in :mod:`lagsim.spec.validated` and the YAML reader in
:mod:`lagsim.spec.reader`; this module names both for the rest of lagsim, and imports the reader
(and PyYAML) only when a text is parsed, so that a run whose spec comes from the validated-spec
cache (:func:`lagsim.api.open_system`) does without them (issue 31, "Start-up").
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path

from lagsim.errors import InputError, Location
from lagsim.spec.expressions import suggest
from lagsim.spec.limits import MAX_FILE_CHARS
from lagsim.spec.options import SIMULATE_KEYS
from lagsim.spec.validated import (
    CONTACT_KEYS,
    EULER_SEQUENCES,
    MASS_KEYS,
    NO_SLIP_KEYS,
    ORIENTATION_KEYS,
    SPACE_AXES,
    SPRING_KEYS,
    TIME,
    TOP_KEYS,
    ConstraintSpec,
    ContactSpec,
    End,
    Expr,
    MassSpec,
    Orientation,
    Parameter,
    Point,
    Setting,
    SpringEnd,
    SpringSpec,
    SystemSpec,
    TorqueSpec,
    symbol_table,
    with_initial,
)

__all__ = [
    "CONTACT_KEYS", "EULER_SEQUENCES", "MASS_KEYS", "NO_SLIP_KEYS", "ORIENTATION_KEYS",
    "SIMULATE_KEYS", "SPACE_AXES", "SPRING_KEYS", "TIME", "TOP_KEYS", "ConstraintSpec",
    "ContactSpec", "End", "Expr", "MassSpec", "Orientation", "Parameter", "Point", "Setting",
    "SpringEnd", "SpringSpec", "SystemSpec", "TorqueSpec", "bundled_folder", "bundled_systems",
    "load_spec", "parse_spec", "read_source", "symbol_table", "with_initial",
]


def bundled_folder() -> Path:
    """The folder of the systems shipped with lagsim: the package ``lagsim.systems``'s own
    (package data of a regular package, as :func:`importlib.resources.files` finds it for a
    package on the file system, without importing :mod:`importlib.resources` and zipfile: a few
    ms of every run's start-up, issue 31)."""
    package = importlib.import_module("lagsim.systems")
    if package.__file__ is None:
        raise RuntimeError("lagsim.systems is not a package on the file system")
    return Path(package.__file__).parent


def bundled_systems() -> list[str]:
    """Names of the systems shipped with lagsim."""
    return sorted(p.name[:-5] for p in bundled_folder().iterdir() if p.name.endswith(".yaml"))


def read_source(source: str | Path) -> tuple[str, str, str]:
    """(text, label for messages, default name) of a path, a bundled system's name, or ``-``."""
    if str(source) == "-":
        return sys.stdin.read(MAX_FILE_CHARS + 1), "<stdin>", "stdin"
    path = Path(source)
    if path.is_file():
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.read(MAX_FILE_CHARS + 1), str(source), path.stem
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the file: {exc}", Location(str(source))) from None
    if path.is_dir():
        raise InputError("is a folder; give a system file (.yaml)", Location(str(source)))
    stem = path.name[:-5] if path.name.endswith(".yaml") else path.name
    if path.parent == Path(".") and stem in bundled_systems():
        text = (bundled_folder() / f"{stem}.yaml").read_text("utf-8")
        return text, f"{stem}.yaml", stem
    raise InputError(
        f"no such file, and no bundled system of that name{suggest(stem, bundled_systems())}; "
        "`lagsim systems` lists the bundled ones",
        Location(str(source)),
    )


def load_spec(
    source: str | Path,
    overrides: Mapping[str, float] | None = None,
    initial: Mapping[str, float] | None = None,
) -> SystemSpec:
    """Read and validate a system file.

    ``overrides`` replaces parameter values (``--set``), ``initial`` replaces initial values of
    coordinates and velocities (``--init``); an unknown name in either is an error.
    """
    text, label, stem = read_source(source)
    return parse_spec(text, label, stem, overrides, initial)


def parse_spec(
    text: str,
    label: str = "<input>",
    stem: str = "system",
    overrides: Mapping[str, float] | None = None,
    initial: Mapping[str, float] | None = None,
) -> SystemSpec:
    """Validate YAML ``text``; ``label`` names the file in messages.

    A pure function of its arguments: the same text, label, stem, overrides and initial values
    give an equal spec, or the same error, whatever ran before in the process and whatever the
    environment (it reads no file, variable, clock or random source: the one random check,
    of a ``matrix`` orientation, is seeded; it warns nothing; its memo of composed texts and of
    expressions only saves work). The validated-spec cache (:func:`lagsim.api.open_system`)
    relies on this, with the sources of this package in its key."""
    from lagsim.spec.reader import read

    return read(text, label, stem, overrides or {}, initial or {})
