"""Safe parsing of expression strings into symengine, against a table of declared names.

Expressions use SymPy syntax (``^`` is accepted as power) with the functions in
:data:`FUNCTIONS` and the constants ``pi`` and ``E``. Parsing walks Python's AST with a whitelist
of node types and builds the expression itself: nothing is ever evaluated by Python, so
``__import__('os').system('...')`` is an error, not an action. Every declared name is a plain
symbol, whatever SymPy would make of it (``I``, ``S``, ``N``, ``beta``, ``gamma`` ...).
Expressions are symengine objects (fast, and SymPy is not imported on the way to a simulation);
``sympy.sympify`` converts them for printing.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping
from dataclasses import dataclass

import symengine as se

from lagsim.errors import InputError, Location

FUNCTIONS: Mapping[str, object] = {
    "sin": se.sin,
    "cos": se.cos,
    "tan": se.tan,
    "asin": se.asin,
    "acos": se.acos,
    "atan": se.atan,
    "atan2": se.atan2,
    "sinh": se.sinh,
    "cosh": se.cosh,
    "tanh": se.tanh,
    "exp": se.exp,
    "log": se.log,
    "sqrt": se.sqrt,
    "Abs": se.Abs,
    "sign": se.sign,
}
ARITY: Mapping[str, int] = {name: (2 if name == "atan2" else 1) for name in FUNCTIONS}
CONSTANTS: Mapping[str, se.Basic] = {"pi": se.pi, "E": se.E}
RESERVED = frozenset(FUNCTIONS) | {"pi", "t"}
MAX_BITS = 10_000
"""The largest exact rational power computed, in bits (about 3000 digits: it still prints)."""
DECLARE_HINT = ("declare it under 'parameters' or 'coordinates' (velocities are written "
                "<coordinate>_dot, time is t)")

_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
_UNARY = {ast.USub: lambda a: -a, ast.UAdd: lambda a: a}


@dataclass(frozen=True)
class Source:
    """Where an expression string starts in its file, to point errors at the offending column."""

    location: Location
    column_offset: int = 0
    positions: tuple[tuple[int, int], ...] = ()

    def at(self, col: int | None) -> Location:
        """The location of 0-based column ``col`` inside the expression string.

        ``positions``, when given, holds the file's (line, column) of each character of a value
        that spans lines."""
        loc = self.location
        if col is not None and 0 <= col < len(self.positions):
            return Location(loc.file, *self.positions[col])
        if col is None or loc.column is None or loc.line is None:
            return loc
        return Location(loc.file, loc.line, loc.column + self.column_offset + col)


def suggest(name: str, candidates: list[str] | tuple[str, ...]) -> str:
    """A " (did you mean ...?)" hint, or an empty string."""
    same_case = [c for c in candidates if c.lower() == name.lower() and c != name]
    close = same_case or difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _caret_to_power(text: str) -> tuple[str, list[int]]:
    """``text`` with each ``^`` written ``**``, and for each column of the result the column of
    ``text`` it comes from (plus one past the end)."""
    out: list[str] = []
    back: list[int] = []
    for i, ch in enumerate(text):
        out.append("**" if ch == "^" else ch)
        back.extend((i, i) if ch == "^" else (i,))
    back.append(len(text))
    return "".join(out), back


def _too_large(base: se.Basic, exponent: se.Basic) -> bool:
    """Whether the exact power base**exponent of two rationals would exceed :data:`MAX_BITS`."""
    if not (base.is_Rational and exponent.is_Integer) or abs(base) in (0, 1):
        return False
    p, q = (abs(int(v)) for v in base.as_numer_denom())
    return abs(int(exponent)) * max(p.bit_length(), q.bit_length()) > MAX_BITS


def parse_expression(
    text: str | int | float,
    names: Mapping[str, se.Basic],
    source: Source,
    what: str = "expression",
    hint: str = DECLARE_HINT,
) -> se.Basic:
    """Parse ``text`` into a symengine expression whose free names all come from ``names``.

    ``names`` maps every symbol the expression may use to its value; the constants ``pi``
    and ``E`` are known unless ``names`` declares them. Raises :class:`InputError` pointing at the
    offending column. ``hint`` says, after an unknown symbol, which names may be used.
    """
    if text is None:
        text = ""
    if isinstance(text, bool):
        raise InputError(f"{what} must be a number or an expression string, not {text!r}",
                         source.location)
    if isinstance(text, (int, float)):
        return se.Integer(text) if isinstance(text, int) else se.RealDouble(text)
    if not isinstance(text, str):
        raise InputError(
            f"{what} must be a number or an expression string, not a {type(text).__name__}",
            source.location,
        )
    stripped = text.strip()
    if not stripped:
        raise InputError(f"{what} is empty: write an expression such as 'm*g*y'", source.location)
    lead = len(text) - len(text.lstrip())
    python, back = _caret_to_power(stripped.replace("\n", " "))
    try:
        tree = ast.parse(python, mode="eval")
    except SyntaxError as exc:
        col = (back[min(exc.offset - 1, len(back) - 1)] + lead) if exc.offset else None
        raise InputError(
            f"{what} {stripped!r} does not parse ({exc.msg}); use SymPy syntax such as "
            "'1/2*m*x_dot**2'",
            source.at(col),
        ) from None
    return _Builder(names, source, what, stripped, lead, back, hint).build(tree.body)


class _Builder:
    def __init__(
        self, names: Mapping[str, se.Basic], source: Source, what: str, text: str, lead: int,
        back: list[int], hint: str,
    ) -> None:
        self.names = names
        self.source = source
        self.what = what
        self.text = text
        self.lead = lead
        self.back = back
        self.hint = hint

    def fail(self, node: ast.AST, message: str) -> InputError:
        col = getattr(node, "col_offset", None)
        return InputError(f"{self.what} {self.text!r}: {message}",
                          self.source.at(None if col is None else self.back[col] + self.lead))

    def build(self, node: ast.AST) -> se.Basic:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(node, f"{value!r} is not a number")
            return se.Integer(value) if isinstance(value, int) else se.RealDouble(value)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.build(node.left), self.build(node.right)
            if isinstance(node.op, ast.Pow) and _too_large(left, right):
                raise self.fail(node, f"the number {ast.unparse(node)} is too large to compute "
                                "exactly; write a decimal base (such as 2.0 instead of 2) for a "
                                "floating-point value")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.build(node.operand))
        if isinstance(node, ast.Call):
            return self.call(node)
        kind = type(node).__name__
        raise self.fail(
            node,
            f"{kind} is not allowed; only numbers, declared names, + - * / ** ^ and the functions "
            f"{', '.join(FUNCTIONS)}",
        )

    def name(self, node: ast.Name) -> se.Basic:
        ident = node.id
        if ident in self.names:
            return self.names[ident]
        if ident in CONSTANTS:
            return CONSTANTS[ident]
        if ident in FUNCTIONS:
            raise self.fail(node, f"'{ident}' is a function: call it, as in '{ident}(x)'")
        known = sorted(set(self.names) | set(CONSTANTS))
        raise self.fail(
            node,
            f"unknown symbol '{ident}'{suggest(ident, known)}; {self.hint}",
        )

    def call(self, node: ast.Call) -> se.Basic:
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in FUNCTIONS or func.id in self.names:
            label = func.id if isinstance(func, ast.Name) else ast.unparse(func)
            raise self.fail(
                node,
                f"'{label}' is not a known function{suggest(label, list(FUNCTIONS))}; "
                f"the functions are {', '.join(FUNCTIONS)}",
            )
        if node.keywords:
            raise self.fail(node, f"{func.id}() takes no keyword arguments")
        arity = ARITY[func.id]
        if len(node.args) != arity:
            raise self.fail(
                node, f"{func.id}() takes {arity} argument{'s' if arity > 1 else ''}, "
                f"got {len(node.args)}"
            )
        return FUNCTIONS[func.id](*(self.build(arg) for arg in node.args))
