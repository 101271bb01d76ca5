"""The limits on what a system file may ask for, declared once (docs/format.md, "Limits").

Each limit keeps one hostile or mistaken file from hanging lagsim or exhausting memory (issue 15,
"Limits against hostile or huge input"); a file past one is refused with exit 2 and a message that
names the limit. The values leave room for every system lagsim is meant for: the largest bundled
chain is a few kilobytes, and the C solver holds up to :data:`MAX_COORDINATES` coordinates.
"""

from __future__ import annotations

from lagsim.records import record


@record
class Limit:
    """One limit: its value, what it counts, and the section of docs/format.md that lists it."""

    value: int
    counts: str


MAX_FILE_CHARS = 1_000_000
"""Characters in a system file (about 1 MB)."""
MAX_YAML_DEPTH = 32
"""Nesting of YAML mappings and lists; the format itself needs 4 levels."""
MAX_YAML_NODES = 200_000
"""YAML values in a file, counted with every alias expanded (a "billion laughs" file is refused
before anything walks it)."""
MAX_EXPRESSION_CHARS = 100_000
"""Characters in one expression."""
MAX_EXPRESSION_NODES = 20_000
"""Numbers, names, operators and calls in one expression (a sum of 1,000 terms of the form
``c*x**2`` has about 5,000)."""
MAX_NESTING = 100
"""Levels of one expression's tree: each operand of an operator or argument of a call is one level
deeper, except that a chain of ``+``/``-`` or of ``*``/``/`` is one level, however long."""
MAX_EXPONENT = 100
"""The largest integer exponent |n| of a power of a symbolic base, such as ``(x + y)**n``: lagsim
expands small right-hand sides, and ``(x + y + 1)**n`` has (n + 1)(n + 2)/2 terms."""
MAX_COORDINATES = 128
"""Generalized coordinates in a system; the generated C solver keeps arrays of this size on the
stack (lagsim/numeric/ccompile.py)."""
MAX_CONSTRAINTS = MAX_COORDINATES
"""Constraints in a system."""
MAX_EXPANSION = 50_000
"""Terms that multiplying out one expression may build, bounded before expanding
(:func:`lagsim.symbolic.expansion.expansion_work`: a product of sums multiplies their terms, a sum
of k terms to the power n gives C(n + k − 1, k − 1)): ``(x + y + 1)**100`` has 5,151, ``(x + y + z +
w + 1)**100`` 4.6 million; the bound of the 32-chain's largest is 35,376. Past it an expression is
printed and tidied as it is, unexpanded (issue 32: such an expansion ran for minutes, deaf to
SIGTERM)."""

LIMITS: dict[str, Limit] = {
    "file size": Limit(MAX_FILE_CHARS, "characters in a system file"),
    "YAML depth": Limit(MAX_YAML_DEPTH, "levels of nested YAML mappings and lists"),
    "YAML size": Limit(MAX_YAML_NODES, "YAML values, with every alias (*name) expanded"),
    "expression length": Limit(MAX_EXPRESSION_CHARS, "characters in one expression"),
    "expression size": Limit(MAX_EXPRESSION_NODES,
                             "numbers, names, operators and calls in one expression"),
    "expression nesting": Limit(MAX_NESTING, "levels of operators and calls"),
    "exponent": Limit(MAX_EXPONENT, "for the exponent n of a power base**n of a symbolic base"),
    "coordinates": Limit(MAX_COORDINATES, "generalized coordinates"),
    "constraints": Limit(MAX_CONSTRAINTS, "constraints"),
    "expansion": Limit(MAX_EXPANSION, "terms of one expression multiplied out"),
}
"""Every limit by its name in messages and in docs/format.md's table."""


def exceeded(name: str, found: int | str) -> str:
    """The message part that says limit ``name`` was passed: what was found and what is allowed."""
    limit = LIMITS[name]
    return (f"{found}, past lagsim's {name} limit of {limit.value:,} {limit.counts} "
            "(docs/format.md, \"Limits\")")
