"""Safe parsing of expression strings into symengine, against a table of declared names.

Expressions use SymPy syntax (``^`` is accepted as power) with the functions in
:data:`FUNCTIONS` and the constants ``pi`` and ``E``. Parsing walks Python's AST with a whitelist
of node types and builds the expression itself: nothing is ever evaluated by Python, so
``__import__('os').system('...')`` is an error, not an action. Every declared name is a plain
symbol, whatever SymPy would make of it (``I``, ``S``, ``N``, ``beta``, ``gamma`` ...).
Expressions are symengine objects (fast, and SymPy is not imported on the way to a simulation);
``sympy.sympify`` converts them for printing.

Names are compared in Unicode NFKC form, as Python's own parser compares identifiers (PEP 3131):
``µ`` (micro sign) and ``μ`` (Greek mu) are one name (:func:`normal_name`). The size, nesting and
exponent limits of :mod:`lagsim.spec.limits` are checked before anything is built, so no expression
can make lagsim expand a huge power or recurse without end (issue 15).
"""

from __future__ import annotations

import ast
import math
import re
import sys
import unicodedata
from collections.abc import Callable, Mapping

import symengine as se

from lagsim import naming
from lagsim.errors import InputError, Location
from lagsim.records import record
from lagsim.spec.limits import (
    MAX_EXPONENT,
    MAX_EXPRESSION_CHARS,
    MAX_EXPRESSION_NODES,
    MAX_NESTING,
    exceeded,
)

FUNCTIONS: Mapping[str, Callable[..., se.Basic]] = {
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
_CHAINS = ((ast.Add, ast.Sub), (ast.Mult, ast.Div))
"""Left-associative operator families: a chain such as ``a + b - c + ...`` is one nesting level
and is built without recursion."""


def normal_name(name: str) -> str:
    """``name`` in Unicode NFKC form, the form Python's parser gives identifiers (PEP 3131)."""
    return unicodedata.normalize("NFKC", name)


@record
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
    import difflib

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


def _family(node: ast.AST) -> tuple[type, ...] | None:
    if isinstance(node, ast.BinOp):
        for family in _CHAINS:
            if isinstance(node.op, family):
                return family
    return None


def _measure(tree: ast.AST) -> tuple[int, int]:
    """(number of nodes, nesting depth) of ``tree``, walked without recursion; a left-associative
    chain of one operator family (:data:`_CHAINS`) counts as one level."""
    count, deepest = 0, 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        deepest = max(deepest, depth)
        family = _family(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.operator, ast.unaryop, ast.expr_context)):
                continue
            same = (family is not None and isinstance(node, ast.BinOp) and child is node.left
                    and _family(child) == family)
            stack.append((child, depth if same else depth + 1))
    return count, deepest


def _too_large(base: se.Basic, exponent: se.Basic) -> bool:
    """Whether the exact power base**exponent of two rationals would exceed :data:`MAX_BITS`."""
    if not (base.is_Rational and exponent.is_Integer) or abs(base) in (0, 1):
        return False
    p, q = (abs(int(v)) for v in base.as_numer_denom())
    return abs(int(exponent)) * max(p.bit_length(), q.bit_length()) > MAX_BITS


def _large_power(value: se.Basic) -> se.Basic | None:
    """A power past the exponent limit that ``value`` is, or has as a factor, once built
    (``(x+1)*(x+1)*...`` and ``((x+1)**50)**3`` are single powers to symengine)."""
    for factor in value.args if value.is_Mul else (value,):
        if factor.is_Pow and _symbolic_power_past_limit(*factor.args):
            return factor
    return None


def _negative_base(base: se.Basic) -> bool:
    """Whether ``base`` is a constant below zero (``-1``, ``-pi``, ``1 - E``)."""
    if base.free_symbols:
        return False
    try:
        return float(base) < 0
    except (TypeError, ValueError, RuntimeError, OverflowError):
        return False


def _symbolic_power_past_limit(base: se.Basic, exponent: se.Basic) -> bool:
    """Whether base**exponent is a power of a non-constant base past :data:`MAX_EXPONENT`."""
    if not exponent.is_Number or base.is_Number:
        return False
    try:
        past = abs(float(exponent)) > MAX_EXPONENT
    except (TypeError, ValueError, RuntimeError):
        return False
    return past and bool(base.free_symbols)


_TOO_LARGE = (f"is too large for a float (at most {sys.float_info.max:.4g}); numbers must be "
              "finite")


def _number_problem(value: se.Basic) -> str | None:
    """Why the constant ``value`` is not a finite real number, or None when it is one."""
    if value.is_Integer or value.is_Rational:
        try:
            return None if math.isfinite(float(value)) else _TOO_LARGE
        except OverflowError:
            return _TOO_LARGE
    if value.has(se.nan):
        return "is nan, not a number"
    if value.has(se.zoo):
        return "is not a finite number (a division by zero, or a logarithm of 0)"
    try:
        number = complex(value if value.is_Number else value.n())
    except (TypeError, ValueError, RuntimeError, OverflowError):
        return None
    if math.isnan(number.real) or math.isnan(number.imag):
        return "is nan, not a finite number"
    if math.isinf(number.real) and value.is_Number:
        return "is inf, not a finite number"
    if number.imag != 0:
        sign = "+" if number.imag > 0 else "-"
        return f"is {number.real:.6g} {sign} {abs(number.imag):.6g}i, not a real number"
    return None


def parse_expression(
    text: str | int | float,
    names: Mapping[str, se.Basic],
    source: Source,
    what: str = "expression",
    hint: str = DECLARE_HINT,
    refused: Mapping[str, str] | None = None,
) -> se.Basic:
    """Parse ``text`` into a symengine expression whose free names all come from ``names``.

    ``names`` maps every symbol the expression may use to its value; the constants ``pi``
    and ``E`` are known unless ``names`` declares them. Raises :class:`InputError` pointing at the
    offending column. ``hint`` says, after an unknown symbol, which names may be used;
    ``refused`` maps names declared elsewhere that this expression may not use to why not.
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
    if len(stripped) > MAX_EXPRESSION_CHARS:
        raise InputError(f"{what}: {exceeded('expression length', f'{len(stripped):,} characters')}"
                         "; split it with parameters or masses", source.location)
    python, back = _caret_to_power(stripped.replace("\n", " "))
    try:
        tree = ast.parse(python, mode="eval")
    except (MemoryError, RecursionError):
        raise InputError(f"{what} is nested too deeply or chained too long for the parser; "
                         f"lagsim's expression nesting limit is {MAX_NESTING} levels and its "
                         f"expression size limit {MAX_EXPRESSION_NODES:,} nodes (docs/format.md, "
                         "\"Limits\")", source.location) from None
    except SyntaxError as exc:
        col = (back[min(exc.offset - 1, len(back) - 1)] + lead) if exc.offset else None
        found = syntax_hint(stripped)
        if found is not None:
            hint, at = found
            raise InputError(f"{what} {stripped!r} does not parse: {hint}",
                             source.at(at + lead)) from None
        raise InputError(
            f"{what} {stripped!r} does not parse ({exc.msg}); use SymPy syntax such as "
            "'1/2*m*x_dot**2'",
            source.at(col),
        ) from None
    builder = _Builder(names, source, what, stripped, lead, back, hint, python, refused or {})
    nodes, depth = _measure(tree.body)
    if nodes > MAX_EXPRESSION_NODES:
        raise InputError(f"{what}: {exceeded('expression size', f'{nodes:,} nodes')}; split it "
                         "with parameters or masses", source.location)
    if depth > MAX_NESTING:
        raise InputError(f"{what}: {exceeded('expression nesting', f'{depth:,} levels')}; "
                         "write it flatter", source.location)
    return builder.build(tree.body)


_EQUALS = r"(?<![<>=!])=(?!=)"
_PRIME = r"([^\W\d]\w*)\s*'"
_GAP = r"(?<=[\w.)\]])\s+(?=[^\W\d]|[(\d])"
"""The mistakes :func:`syntax_hint` looks for (with the two above), compiled by :mod:`re`
(which keeps what it compiled) for an expression that does not parse, not at every start-up
(issue 31, "Start-up")."""
FUNCTION_ALIASES: Mapping[str, str] = {
    "ln": "log", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "abs": "Abs",
    "sgn": "sign", "Sqrt": "sqrt", "Exp": "exp", "Log": "log", "sen": "sin", "tg": "tan",
}
"""Other names of lagsim's functions (other languages, NumPy, Mathematica): their hint names
the function meant."""


def _operand(text: str) -> str:
    """``text`` as the right side of a minus sign: in parentheses when it is a sum."""
    text = text.strip()
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        if depth == 0 and i > 0 and ch in "+-" and text[i - 1] not in "eE*/(":
            return f"({text})"
    return text


def syntax_hint(text: str) -> tuple[str, int] | None:
    """What a common mistake in an expression that does not parse means, and the column to
    point at: an equation instead of the zero expression, ``x'`` for a velocity, factors
    without ``*`` between them, a leading ``*``; None for any other syntax error."""
    equals = re.search(_EQUALS, text)
    if equals:
        left, right = text[:equals.start()].strip(), text[equals.end():].strip()
        zero = f"{left} - {_operand(right)}" if left and right else "the expression that is 0"
        return (f"it is an equation; lagsim wants the expression phi with phi = 0, here "
                f"'{zero}'", equals.start())
    prime = re.search(_PRIME, text)
    if prime:
        name = prime.group(1)
        return (f"the velocity of {name} is written {naming.velocity(name)}, not {name}' (and "
                f"its acceleration {naming.acceleration(name)})", prime.end() - 1)
    if text.startswith("*"):
        return ("it starts with '*', which multiplies nothing; remove it, or put the factor "
                "it multiplies in front", 0)
    gap = re.search(_GAP, text)
    if gap:
        fixed = re.sub(_GAP, "*", text)
        try:
            ast.parse(fixed, mode="eval")
        except SyntaxError:
            return None
        return f"put * between factors, as in '{fixed}'", gap.start()
    return None


class _Builder:
    def __init__(
        self, names: Mapping[str, se.Basic], source: Source, what: str, text: str, lead: int,
        back: list[int], hint: str, python: str, refused: Mapping[str, str],
    ) -> None:
        self.names = names
        self.refused = refused
        self.source = source
        self.what = what
        self.text = text
        self.lead = lead
        self.back = back
        self.hint = hint
        self.python = python

    def segment(self, node: ast.AST) -> str:
        """The text of ``node`` as written (``**`` for ``^``)."""
        return ast.get_source_segment(self.python, node) or ast.unparse(node)

    def fail(self, node: ast.AST, message: str) -> InputError:
        col = getattr(node, "col_offset", None)
        return InputError(f"{self.what} {self.text!r}: {message}",
                          self.source.at(None if col is None else self.back[col] + self.lead))

    def build(self, node: ast.AST) -> se.Basic:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(node, f"{value!r} is not a number")
            if isinstance(value, float) and not math.isfinite(value):
                raise self.fail(node, f"the number {self.segment(node)} is inf, not a finite "
                                "number")
            if isinstance(value, int) and abs(value) > sys.float_info.max:
                raise self.fail(node, f"the number of {len(self.segment(node)):,} digits "
                                f"{_TOO_LARGE}")
            return se.Integer(value) if isinstance(value, int) else se.RealDouble(value)
        if isinstance(node, ast.Name):
            return self.name(node)
        family = _family(node)
        if family is not None and isinstance(node, ast.BinOp):
            return self.chain(node, family)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            left, right = self.build(node.left), self.build(node.right)
            if _too_large(left, right):
                raise self.fail(node, f"the number {ast.unparse(node)} is too large to compute "
                                "exactly; write a decimal base (such as 2.0 instead of 2) for a "
                                "floating-point value")
            if _negative_base(left) and right.free_symbols:
                raise self.fail(node, f"the power {self.segment(node)} has a negative base and a "
                                "variable exponent, so it is complex (not real) wherever the "
                                "exponent is not a whole number; write the real quantity meant, "
                                "such as cos(pi*n) for (-1)**n")
            if _symbolic_power_past_limit(left, right):
                raise self.fail(node, f"the power {self.segment(node)}: "
                                f"{exceeded('exponent', f'the exponent {right}')}")
            value = left**right
            large = _large_power(value)
            if large is not None:
                raise self.fail(node, f"the power {self.segment(node)} is {large}: "
                                f"{exceeded('exponent', f'the exponent {large.args[1]}')}")
            return self.checked(node, value)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.build(node.operand))
        if isinstance(node, ast.Call):
            return self.checked(node, self.call(node))
        if (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.ops[0], ast.Eq)):
            left, right = self.segment(node.left), self.segment(node.comparators[0])
            raise self.fail(node, "it is an equation; lagsim wants the expression phi with "
                            f"phi = 0, here '{left} - {_operand(right)}'")
        kind = type(node).__name__
        raise self.fail(
            node,
            f"{kind} is not allowed; only numbers, declared names, + - * / ** ^ and the functions "
            f"{', '.join(FUNCTIONS)}",
        )

    def chain(self, node: ast.BinOp, family: tuple[type, ...]) -> se.Basic:
        """A left-associative chain ``a + b - c ...`` or ``a * b / c ...``, built without
        recursing along the chain (a sum of thousands of terms is one level)."""
        links: list[ast.BinOp] = []
        head: ast.AST = node
        while isinstance(head, ast.BinOp) and _family(head) == family:
            links.append(head)
            head = head.left
        value = self.build(head)
        if family is _CHAINS[0]:
            terms = [value]
            for link in reversed(links):
                term = self.build(link.right)
                terms.append(-term if isinstance(link.op, ast.Sub) else term)
            return self.checked(node, se.Add(*terms))
        for link in reversed(links):
            value = self.checked(link, _BINARY[type(link.op)](value, self.build(link.right)))
        large = _large_power(value)
        if large is not None:
            raise self.fail(node, f"the product {self.segment(node)} is the power {large}: "
                            f"{exceeded('exponent', f'the exponent {large.args[1]}')}")
        return value

    def checked(self, node: ast.AST, value: se.Basic) -> se.Basic:
        """``value``, refused when it is a number that is not finite and real (``1/0``,
        ``0/0``, ``log(0)``, ``sqrt(-1)``, ``1e308*10``)."""
        if value.is_Number:
            problem = _number_problem(value)
        elif isinstance(node, ast.Call) or (isinstance(node, ast.BinOp)
                                            and isinstance(node.op, ast.Pow)):
            problem = None if value.free_symbols else _number_problem(value)
        else:
            return value
        if problem:
            raise self.fail(node, f"{self.segment(node)} {problem}")
        return value

    def name(self, node: ast.Name) -> se.Basic:
        ident = normal_name(node.id)
        if ident in self.names:
            return self.names[ident]
        if ident in CONSTANTS:
            return CONSTANTS[ident]
        if ident in self.refused:
            raise self.fail(node, f"'{ident}' {self.refused[ident]}")
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
            meant = FUNCTION_ALIASES.get(label)
            natural = " log is the natural logarithm" if meant == "log" else ""
            hint = (f" (did you mean '{meant}'?{natural})" if meant and meant not in self.names
                    else suggest(label, list(FUNCTIONS)))
            raise self.fail(
                node,
                f"'{label}' is not a known function{hint}; "
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


KINKS = (se.Abs, type(se.sign(se.Symbol("x"))))
"""The documented functions that are not differentiable everywhere: Abs and sign."""


def kinks(*exprs: se.Basic) -> list[se.Basic]:
    """The Abs and sign terms of ``exprs``, sorted by their text: where a derivative jumps."""
    found: set[se.Basic] = set()
    for expr in exprs:
        found |= expr.atoms(*KINKS)
    return sorted(found, key=str)


def resolve_derivatives(expr: se.Basic) -> se.Basic:
    """``expr`` with symengine's unevaluated derivatives of Abs and sign evaluated:
    d|u|/dx = sign(u)·du/dx and d sign(u)/dx = 0, true wherever u ≠ 0 (almost everywhere; at
    u = 0 neither has a derivative, and these are the values of its one-sided mean). Symengine
    leaves ``Derivative(abs(u), x)`` and ``Subs(Derivative(sign(ξ), ξ), ξ, u)`` in place, which
    neither the C code nor LLVM can evaluate (issue 32)."""
    found = expr.atoms(se.Derivative, se.Subs)
    if not found:
        return expr
    return expr.xreplace({node: _evaluated(node) for node in found})


def _evaluated(node: se.Basic) -> se.Basic:
    """The value of one unevaluated ``Derivative`` or ``Subs`` node (:func:`resolve_derivatives`);
    the node itself when it is not about Abs or sign."""
    if isinstance(node, se.Subs):
        inner, *pairs = node.args
        value = resolve_derivatives(inner)
        if value == inner:
            return node
        half = len(pairs) // 2
        return value.subs(dict(zip(pairs[:half], pairs[half:])))
    function, *variables = node.args
    if isinstance(function, KINKS[1]):
        return se.Integer(0)
    if not isinstance(function, KINKS[0]):
        return node
    (inner,) = function.args
    value = se.sign(inner) * se.diff(inner, variables[0])
    for variable in variables[1:]:
        value = resolve_derivatives(se.diff(value, variable))
    return resolve_derivatives(value)


_ROUGH: dict[se.Basic, bool] = {}
"""Whether an expression differentiated before has Abs or sign terms: an expression is usually
differentiated by each coordinate in turn, and finding them walks it."""
_ROUGH_SIZE = 4096


def diff(expr: se.Basic, variable: se.Basic) -> se.Basic:
    """∂expr/∂variable, with the derivatives of Abs and sign evaluated
    (:func:`resolve_derivatives`) when ``expr`` has such terms."""
    value = se.diff(expr, variable)
    rough = _ROUGH.get(expr)
    if rough is None:
        if len(_ROUGH) >= _ROUGH_SIZE:
            _ROUGH.clear()
        rough = _ROUGH[expr] = bool(expr.atoms(*KINKS))
    return resolve_derivatives(value) if rough else value


_FLOATY = re.compile(r"(?<![\w.])(\d+\.\d*|\d+[eE][+-]?\d+|inf\.0|nan\.0)")
"""How SymEngine prints a floating-point number (``0.1``, ``1e+300``, ``inf.0``): an expression
whose text has none holds none, and is not searched (``atoms`` walks shared subexpressions once
per expression: 0.3 s for the 32-chain's)."""


def exact_text(expr: se.Basic) -> str:
    """``str(expr)`` followed by its floating-point numbers written exactly: ``str`` prints 15
    significant digits, so two expressions whose numbers differ past the 15th would print the
    same (and share a compiled library)."""
    text = str(expr)
    if not _FLOATY.search(text):
        return text
    floats = se.sympify(expr).atoms(se.RealDouble)
    if not floats:
        return text
    return text + " [" + " ".join(sorted(repr(float(f)) for f in floats)) + "]"
