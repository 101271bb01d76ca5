"""How the analysis commands (``check``, ``equilibria``, ``modes``, ``action``) print a report:
text for a terminal, JSON for scripts."""

from __future__ import annotations

import json
from typing import Any

import click


def report_out(report: Any, fmt: str) -> None:
    """Print ``report`` (``to_text()``, ``to_dict()``) in ``fmt``, ``text`` or ``json``."""
    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(report.to_text(), nl=False)
