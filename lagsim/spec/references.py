"""The four seed texts by the short names users see (issue 14: no file hashes in the output).

docs/references.md gives each short name its author, title and sections; docstrings and tests
keep the seed file names for developers. A module of its own, without SymPy, so that listing the
bundled systems stays fast.
"""

from __future__ import annotations

import re

SEED_001 = "001_80d65b968ce3cb18.txt"
SEED_002 = "002_485a91571cac8ced.txt"
SEED_003 = "003_88d23709419132a0.txt"
SEED_004 = "004_2a8ddee2a66c9af0.txt"

SOURCES = {SEED_001: "DAE", SEED_002: "Lagrange", SEED_003: "Index reduction",
           SEED_004: "Udwadia–Kalaba"}
"""Each seed file → the short name that docs/references.md gives its author, title and sections;
what users see (issue 14: no file hashes in the output), while docstrings and tests keep the
seed file names for developers."""

REFERENCES = "docs/references.md"


def cite(source: str, where: str = "") -> str:
    """``[DAE §10.7]``: a seed's short name in docs/references.md and a place in it."""
    return f"[{SOURCES[source]}{' ' + where if where else ''}]"


_SEED_FILE = re.compile(
    r"(?:seeds?\s+)?(?:``(\d{3}_[0-9a-f]{16}\.txt)``|(\d{3}_[0-9a-f]{16}\.txt))")


def public_text(text: str) -> str:
    """``text`` (a bundled system's description) with each seed file name, and the word "seed"
    before it, replaced by its short name in docs/references.md: ``[DAE]``."""
    def short(m: re.Match) -> str:
        name = m[1] or m[2]
        return f"[{SOURCES[name]}]" if name in SOURCES else m[0]

    return _SEED_FILE.sub(short, text)
