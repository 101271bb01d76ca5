"""The ratios a bench measured, also written as JSON (``--json FILE``) for ``bench/goals.py``.

A bench calls :func:`add_option` on its parser, :func:`record` where it prints a ratio (the same
number, under a name that says what over what), and :func:`write` at the end of ``main``. Its
printed output stays as it was; the JSON file holds ``{"ratios": {NAME: value},
"lower_bounds": [NAME, ...]}``, a lower bound being a ratio whose peer was stopped at a timeout
(the true ratio is larger). ``bench/goals.py`` reads the file of each bench it runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

RECORDED: dict[str, float] = {}
"""This process's ratios, by name, in the order they were measured."""
LOWER_BOUNDS: list[str] = []
"""The names in :data:`RECORDED` whose value is only a lower bound."""


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="also write the ratios measured to FILE as JSON (bench/goals.py)")


def record(name: str, value: float, lower_bound: bool = False) -> None:
    if name in RECORDED:
        raise ValueError(f"ratio {name!r} recorded twice")
    RECORDED[name] = float(value)
    if lower_bound:
        LOWER_BOUNDS.append(name)


def write(path: Path | None) -> None:
    """Write the ratios recorded so far to ``path`` (nothing when it is None)."""
    if path is not None:
        path.write_text(json.dumps({"ratios": RECORDED, "lower_bounds": LOWER_BOUNDS},
                                   indent=1) + "\n", encoding="utf-8")
