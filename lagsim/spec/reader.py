"""YAML system file → validated, immutable :class:`~lagsim.spec.validated.SystemSpec`.

Every check of user input happens here, once, and every error names the file, line and column of
the offending value and says how to mend it. The format (version 1) is documented in
``docs/format.md``.

Declared names are kept in Unicode NFKC form, the form Python's parser gives the names inside
expressions, and two spellings of one name are refused (issue 15). A name of the form of a CSV
column (:data:`lagsim.naming.COLUMNS`) is refused (issue 8 §4). The file is held to the
limits of :mod:`lagsim.spec.limits` before anything walks it.

Imported only when a file is read (:func:`lagsim.spec.system.parse_spec`): PyYAML's import
compiles regular expressions, some 17 ms of a run's start-up, which a run whose spec is in the
validated-spec cache does without (issue 31).
"""

from __future__ import annotations

import keyword
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import symengine as se
import yaml

from lagsim import naming
from lagsim.errors import InputError, Location, is_control, printable
from lagsim.spec.expressions import (
    DECLARE_HINT,
    FUNCTIONS,
    RESERVED,
    Source,
    diff,
    normal_name,
    parse_expression,
    suggest,
)
from lagsim.spec.limits import (
    MAX_CONSTRAINTS,
    MAX_COORDINATES,
    MAX_FILE_CHARS,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    exceeded,
)
from lagsim.spec.options import SIMULATE_KEYS
from lagsim.spec.validated import (
    CONTACT_KEYS,
    EULER_SEQUENCES,
    FINITE,
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
    finite_values,
    put_initial,
    symbol_table,
)

ORTHOGONAL_TOLERANCE = 1e-9
"""Largest |RᵀR − I| entry, and |det R − 1|, allowed for a ``matrix`` orientation at a state."""
ORTHOGONAL_STATES = 5
"""How many random states (coordinates in [−π, π], t in [0, 10]) a ``matrix`` orientation is
checked at."""
PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
PARAMETER_HINT = ("a parameter is a number or an expression in numbers, pi, E and the "
                  "parameters above it")
INPUT_HINT = ("an input's default is a number or an expression in numbers, pi, E and the "
              "parameters")
INPUT_ONLY = ("is an input, which only 'forces', 'loads' and 'torques' may use (an input is a "
              "force a controller sets); for a constant here, declare a parameter")
"""Why an expression other than a force refuses an input (issue 28)."""
INITIAL_HINT = ("an initial value is a number or an expression in numbers, pi, E and the "
                "parameters")



_CSV_HINT = ("this looks like a CSV (a trajectory of `lagsim simulate`, first column t), not a "
             "system; derive and simulate read a YAML system file: give that, or plot the CSV "
             "with `lagsim plot`")


def _looks_like_csv(text: str) -> bool:
    """Whether ``text`` starts like lagsim's CSV: a header ``t,<name>,...`` then numbers."""
    lines = text.lstrip("\ufeff").splitlines()
    if len(lines) < 1 or not lines[0].startswith("t,"):
        return False
    return all(name.strip().isidentifier() for name in lines[0].split(","))


def _alias_value(text: str, exc: yaml.MarkedYAMLError) -> str | None:
    """The line of a YAML error at a value that starts with ``*`` (read as an alias), written
    with that value quoted; None when the error is elsewhere."""
    mark = exc.context_mark if "alias" in str(exc.context or "") else exc.problem_mark
    if mark is None or mark.buffer is None:
        return None
    lines = text.splitlines()
    if not 0 <= mark.line < len(lines):
        return None
    line = lines[mark.line]
    key, colon, value = line.partition(": ")
    if not colon:
        key, colon, value = line.rpartition("- ")
    if not colon or not value.strip().startswith("*"):
        return None
    return f"{key}{colon}'{value.strip()}'".strip()


def _unkeyword(name: str) -> str:
    """A name close to the Python keyword ``name`` that is not one (lambda → lam)."""
    return {"lambda": "lam"}.get(name, f"{name}_")


def spelled(name: str) -> str:
    """``name`` quoted, with the code points of its non-ASCII characters, so that two spellings
    that look alike can be told apart."""
    wide = [f"U+{ord(ch):04X}" for ch in name if ord(ch) > 127]
    return f"'{name}'" + (f" ({' '.join(wide)})" if wide else "")


def _gradient(expr: se.Basic, params: tuple[Parameter, ...]) -> tuple[tuple[str, float], ...]:
    """(name, ∂expr/∂name) of each parameter ``expr`` depends on, at the parameters' values."""
    at = {se.Symbol(p.name): se.RealDouble(p.value) for p in params}
    free = {str(s) for s in expr.free_symbols}
    return tuple((p.name, float(se.diff(expr, se.Symbol(p.name)).xreplace(at)))
                 for p in params if p.name in free)


def _not_finite(value: Any, written: str) -> str | None:
    """Why the YAML number ``value``, written ``written``, is not a finite float (``.nan``,
    ``.inf``, ``1.0e+400``, an integer past the largest float), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return None if abs(value) <= sys.float_info.max else "too large for a float"
    if math.isnan(value):
        return "not a number (nan)"
    if math.isfinite(value):
        return None
    return ("not a finite number" if "inf" in written.lower()
            else "too large for a float (it overflows to inf)")


class _TooLarge(Exception):
    """A YAML file past a limit; ``mark`` is where."""

    def __init__(self, message: str, mark: yaml.Mark | None) -> None:
        super().__init__(message)
        self.message = message
        self.mark = mark


YAML11_NUMBER = "tag:lagsim,2026:yaml-1.1-number"
"""The tag :class:`Yaml12Loader` gives a plain scalar that YAML 1.1 reads as a number and YAML
1.2 does not read as that number (``010``, ``1:30``): :meth:`_Reader.scalar` refuses it."""
_YAML11_NUMBER = re.compile(r"^(?:[-+]?0[0-9_]+|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)$")
_YAML12_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_YAML12_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_YAML12_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                           r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_REPLACED = ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with the booleans and numbers of YAML 1.2's core schema (YAML 1.2.2,
    §10.3.2) instead of YAML 1.1's: ``yes``, ``no``, ``on``, ``off`` are text, ``010`` is not
    octal and ``1:30`` not base 60. A plain scalar that the two versions read as different
    numbers is tagged :data:`YAML11_NUMBER` so that it can be refused, not guessed (issue 32)."""


_YAML12_RESOLVERS = (
    (YAML11_NUMBER, _YAML11_NUMBER, "-+0123456789"),
    ("tag:yaml.org,2002:bool", _YAML12_BOOL, "tTfF"),
    ("tag:yaml.org,2002:int", _YAML12_INT, "-+0123456789"),
    ("tag:yaml.org,2002:float", _YAML12_FLOAT, "-+0123456789."),
)
"""Tried in this order, before PyYAML's other resolvers (null, timestamp, merge ...)."""
Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx, chars in _YAML12_RESOLVERS if first in chars]
    + [(tag, rx) for tag, rx in yaml.SafeLoader.yaml_implicit_resolvers.get(first, [])
       if tag not in _REPLACED]
    for first in {*yaml.SafeLoader.yaml_implicit_resolvers, *"-+0123456789.tTfF"}}


def _yaml11_number(text: str) -> str:
    """Why the plain scalar ``text`` (tagged :data:`YAML11_NUMBER`) is refused, and how to write
    it."""
    digits = text.replace("_", "")
    sign = "-" if digits.startswith("-") else ""
    digits = digits.lstrip("+-")
    if ":" in digits:
        value = 0.0
        for part in digits.split(":"):
            value = value * 60 + float(part)
        shown = f"{sign}{value:g}"
        return (f"{text} is a base-60 number ({shown}) to YAML 1.1 and text to YAML 1.2, so "
                f"lagsim does not guess: write the number itself, such as {shown}, or quote "
                "the text")
    decimal = f"{sign}{int(digits)}"
    octal = (f"octal ({sign}{int(digits, 8)}) to YAML 1.1 and "
             if set(digits) <= set("01234567") else "")
    return (f"{text} has a leading zero: it is {octal}decimal ({decimal}) to YAML 1.2, so "
            f"lagsim does not guess: write {decimal} for the decimal number, or quote the text")


class _BoundedLoader(Yaml12Loader):
    """The YAML 1.2 composer (:class:`Yaml12Loader`), refusing nesting deeper than
    :data:`MAX_YAML_DEPTH` before it recurses further."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.depth += 1
        try:
            if self.depth > MAX_YAML_DEPTH:
                found = f"values nested more than {MAX_YAML_DEPTH} deep"
                raise _TooLarge(exceeded("YAML depth", found), self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


_COMPOSED: dict[str, yaml.Node | None] = {}
"""The node trees of the last few texts composed (:func:`_compose`)."""
COMPOSED_KEEP = 4
"""How many texts' trees :data:`_COMPOSED` keeps (0: none)."""


def _compose(text: str) -> yaml.Node | None:
    """``text`` composed to YAML nodes, within :data:`MAX_YAML_DEPTH` and
    :data:`MAX_YAML_NODES`; the tree of a text read before is the one kept from then (the reader
    only reads nodes: a fit re-reads its file at each new parameter value, issue 26, and half of
    that was composing the same text again)."""
    if text in _COMPOSED:
        return _COMPOSED[text]
    root = yaml.compose(text, Loader=_BoundedLoader)
    if root is not None and _expanded_size(root) > MAX_YAML_NODES:
        raise _TooLarge(exceeded("YAML size", f"more than {MAX_YAML_NODES:,} values with the "
                                 "aliases expanded"), root.start_mark)
    while _COMPOSED and len(_COMPOSED) >= COMPOSED_KEEP:
        del _COMPOSED[next(iter(_COMPOSED))]
    if COMPOSED_KEEP:
        _COMPOSED[text] = root
    return root


def _expanded_size(root: yaml.Node) -> int:
    """The number of nodes of ``root`` with every alias expanded, counted without expanding (each
    shared node once, times its uses); refuses an alias that contains itself."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        if done:
            open_nodes.discard(key)
            sizes[key] = min(1 + sum(sizes[id(c)] for c in children), MAX_YAML_NODES + 1)
            continue
        if key in open_nodes:
            raise _TooLarge("an alias (*name) refers to a value that contains it; YAML "
                            "recursion is not allowed", node.start_mark)
        open_nodes.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise _TooLarge("an alias (*name) refers to a value that contains it; YAML "
                                "recursion is not allowed", child.start_mark)
            stack.append((child, False))
    return sizes[id(root)]


def _loc(label: str, node: yaml.Node) -> Location:
    return Location(label, node.start_mark.line + 1, node.start_mark.column + 1)


def _type_name(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "mapping"
    if isinstance(node, yaml.SequenceNode):
        return "list"
    return "text" if node.tag.endswith(":str") else node.tag.rsplit(":", 1)[-1]


def _positions(node: yaml.ScalarNode) -> tuple[tuple[int, int], ...]:
    """The file's 1-based (line, column) of each character of a scalar that spans lines, found by
    matching its non-blank characters in order; empty when they cannot all be matched."""
    start, end = node.start_mark, node.end_mark
    buf = start.buffer
    if buf is None or start.line == end.line:
        return ()
    i, line, col = start.pointer, start.line, start.column
    if node.style in ("|", ">"):
        while i < end.pointer and buf[i] != "\n":
            i, col = i + 1, col + 1
    out: list[tuple[int, int]] = []
    last = (line + 1, col + 1)
    for ch in node.value:
        if not ch.isspace():
            while i < end.pointer and buf[i] != ch:
                line, col = (line + 1, 0) if buf[i] == "\n" else (line, col + 1)
                i += 1
            if i >= end.pointer:
                return ()
            last = (line + 1, col + 1)
            i, col = i + 1, col + 1
        out.append(last)
    return tuple(out)


class _Reader:
    def __init__(self, label: str) -> None:
        self.label = label
        self.constructor = Yaml12Loader("")
        self.spellings: dict[str, dict[str, tuple[str, str, Location]]] = {}
        self.refused: dict[str, str] = {}

    def loc(self, node: yaml.Node) -> Location:
        return _loc(self.label, node)

    def error(self, node: yaml.Node | None, message: str) -> InputError:
        return InputError(message, self.loc(node) if node is not None else Location(self.label))

    def plain_tag(self, node: yaml.Node, what: str) -> None:
        if not isinstance(node, yaml.ScalarNode) and node.tag not in PLAIN_COLLECTIONS:
            raise self.error(node, f"{what}: tag {node.tag} is not allowed; lagsim reads "
                             "plain YAML")

    def scalar(self, node: yaml.Node, what: str) -> Any:
        self.plain_tag(node, what)
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, f"{what} must be a single value, not a {_type_name(node)}")
        if node.tag == YAML11_NUMBER:
            raise self.error(node, f"{what}: {_yaml11_number(node.value)}")
        try:
            value = self.constructor.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            raise self.error(
                node, f"{what}: {exc.problem}; lagsim reads plain YAML only (no tags)"
            ) from None
        except ValueError:
            raise self.error(node, f"{what} is an integer of {len(node.value):,} digits, too "
                             f"large for a float; {FINITE}") from None
        problem = _not_finite(value, node.value)
        if problem:
            shown = (node.value if len(node.value) <= 40
                     else f"{node.value[:20]}... ({len(node.value):,} characters)")
            raise self.error(node, f"{what} is {shown}, {problem}; {FINITE}")
        return value

    def mapping(self, node: yaml.Node, what: str, item: str = "key"
                ) -> list[tuple[str, yaml.Node, yaml.Node]]:
        """The (key, key node, value node) of a mapping; a key given twice, also in two spellings
        that are one name in NFKC form, is an error; ``item`` names a key in that message."""
        self.plain_tag(node, what)
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, f"{what} must be a mapping of name: value, not a "
                             f"{_type_name(node)}")
        seen: dict[str, tuple[str, yaml.Node]] = {}
        items = []
        for key_node, value_node in node.value:
            key = self.scalar(key_node, f"a key of {what}")
            if not isinstance(key, str):
                raise self.error(key_node, f"a key of {what} must be a name, not {key!r}")
            normal = normal_name(key)
            if normal in seen:
                first_key, first_node = seen[normal]
                if first_key != key:
                    raise self.alike(key_node, item, key,
                                     (first_key, item, self.loc(first_node)))
                raise self.error(key_node, f"'{key}' appears twice in {what} (first on line "
                                 f"{first_node.start_mark.line + 1}); keep one")
            seen[normal] = (key, key_node)
            items.append((key, key_node, value_node))
        return items

    def fields(self, node: yaml.Node, what: str, keys: tuple[str, ...],
               required: tuple[str, ...] = (), *, hint: str | None = None,
               needs: str | None = None) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """The (key node, value node) of each key of the mapping ``node`` (``what`` in
        messages, as :meth:`mapping`): a key not among ``keys`` is an error ending in ``hint``
        (default: the list of ``keys``), and so is a key of ``required`` left out (``needs``
        names the item in that message, default ``what``)."""
        found: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key, key_node, value_node in self.mapping(node, what):
            if key not in keys:
                raise self.error(key_node, f"unknown key '{key}' in {what}{suggest(key, keys)}; "
                                 f"{hint or 'the keys are ' + ', '.join(keys)}")
            found[key] = (key_node, value_node)
        for key in required:
            if key not in found:
                raise self.error(node, f"{needs or what} needs '{key}'")
        return found

    def sequence(self, node: yaml.Node, what: str) -> list[yaml.Node]:
        self.plain_tag(node, what)
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, f"{what} must be a list, not a {_type_name(node)}")
        return list(node.value)

    def source_of(self, node: yaml.ScalarNode) -> Source:
        quoted = 1 if node.style in ("'", '"') else 0
        return Source(self.loc(node), quoted, _positions(node))

    def expr(self, node: yaml.Node, names: Mapping[str, se.Basic], what: str,
             hint: str = DECLARE_HINT) -> Expr:
        raw = self.scalar(node, what)
        assert isinstance(node, yaml.ScalarNode), "scalar() refuses any other node"
        refused = {n: why for n, why in self.refused.items() if n not in names}
        value = parse_expression(raw, names, self.source_of(node), what, hint, refused)
        return Expr(str(raw), value, self.loc(node))

    def number(self, node: yaml.Node, names: Mapping[str, se.Basic], what: str,
               hint: str) -> float:
        expr = self.expr(node, names, what, hint)
        try:
            value = float(expr.expr)
        except (TypeError, ValueError, RuntimeError):
            raise self.error(node, f"{what} must be a number or an expression in numbers and "
                             f"earlier parameters, got {expr.text!r}") from None
        if not math.isfinite(value):
            raise self.error(node, f"{what} is {value}, not a finite number")
        return value

    def alike(self, node: yaml.Node, what: str, raw: str, first: tuple[str, str, Location]
              ) -> InputError:
        """The error for ``raw`` at ``node``, which is ``first`` spelt another way."""
        other_raw, other_what, where = first
        return self.error(node, f"{what} {spelled(raw)} and {other_what} {spelled(other_raw)} "
                          f"(at {where}) are the same name once Unicode-normalized (NFKC, as in "
                          f"expressions: '{normal_name(raw)}'); rename one of them")

    def declare(self, space: str, node: yaml.Node, raw: str, what: str) -> str:
        """Record the name ``raw`` declared at ``node`` in namespace ``space`` and return its NFKC
        form; refuse a name declared before in another spelling with the same NFKC form."""
        name = normal_name(raw)
        seen = self.spellings.setdefault(space, {})
        if name in seen and seen[name][0] != raw:
            raise self.alike(node, what, raw, seen[name])
        seen.setdefault(name, (raw, what, self.loc(node)))
        return name

    def identifier(self, node: yaml.Node, what: str, space: str = "symbols") -> str:
        """A declared name, NFKC-normalized (:meth:`declare`), checked against Python keywords,
        the functions, ``t``, ``pi`` and the CSV columns."""
        raw = self.scalar(node, what)
        name = normal_name(raw) if isinstance(raw, str) else raw
        if isinstance(raw, str) and keyword.iskeyword(name):
            raise self.error(node, f"{what} '{name}' is a Python keyword, which expressions "
                             f"cannot use as a name; rename it (e.g. '{_unkeyword(name)}')")
        if (not isinstance(raw, str) or not raw.isidentifier() or not name.isidentifier()):
            raise self.error(node, f"{what} {raw!r} is not a valid name; use letters, digits and "
                             "_ starting with a letter (e.g. theta1)")
        if name in FUNCTIONS:
            raise self.error(node, f"{what} '{name}' shadows the function {name}(); rename it "
                             f"(e.g. '{name}_')")
        if name in RESERVED:
            meaning = "time" if name == "t" else "the constant pi"
            raise self.error(node, f"{what} '{name}' is reserved ({meaning}); rename it")
        clash = naming.column_clash(name)
        if clash:
            raise self.error(node, f"{what} '{name}' {clash}")
        return self.declare(space, node, raw, what)

    def text(self, node: yaml.Node, what: str, allowed: str) -> str:
        """A text value with no control characters (escape sequences) but those in ``allowed``:
        it is printed to terminals."""
        value = str(self.scalar(node, what))
        bad = sorted({ch for ch in value if is_control(ch) and ch not in allowed})
        if bad:
            raise self.error(node, f"{what} contains the control character"
                             f"{'s' if len(bad) > 1 else ''} {printable(''.join(bad))}, which "
                             "would act on the terminal; remove "
                             f"{'them' if len(bad) > 1 else 'it'}")
        return value

    def read(self, text: str, stem: str, overrides: Mapping[str, float],
             initial_over: Mapping[str, float]) -> SystemSpec:
        if len(text) > MAX_FILE_CHARS:
            raise InputError(exceeded("file size", f"more than {MAX_FILE_CHARS:,} "
                                      "characters"), Location(self.label))
        try:
            root = _compose(text)
        except _TooLarge as exc:
            loc = (Location(self.label, exc.mark.line + 1, exc.mark.column + 1) if exc.mark
                   else Location(self.label))
            raise InputError(exc.message, loc) from None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            loc = (Location(self.label, mark.line + 1, mark.column + 1) if mark
                   else Location(self.label))
            if _looks_like_csv(text):
                raise InputError(_CSV_HINT, Location(self.label, 1, 1)) from None
            alias = _alias_value(text, exc)
            if alias is not None:
                raise InputError(f"malformed YAML: {exc.problem}: a value that starts with * is "
                                 "a YAML alias (*name); if it is an expression, quote it, as in "
                                 f"{alias}", loc) from None
            raise InputError(f"malformed YAML: {exc.problem or exc.context}; check indentation, "
                             "colons and quotes", loc) from None
        except yaml.YAMLError as exc:
            raise InputError(f"malformed YAML: {exc}", Location(self.label)) from None
        if root is None:
            raise InputError("the file is empty; a system needs at least 'coordinates' and an "
                             "energy (see docs/format.md)", Location(self.label))
        if isinstance(root, yaml.ScalarNode):
            self.scalar(root, "the system file")
        self.plain_tag(root, "the system file")
        if not isinstance(root, yaml.MappingNode):
            if _looks_like_csv(text):
                raise InputError(_CSV_HINT, Location(self.label, 1, 1))
            raise self.error(root, f"a system file must be a mapping of keys (coordinates:, "
                             f"kinetic:, ...), not a {_type_name(root)}")
        top = {}
        top_nodes = {}
        for key, key_node, value_node in self.mapping(root, "the system file"):
            if key not in TOP_KEYS:
                raise self.error(key_node, f"unknown key '{key}'{suggest(key, TOP_KEYS)}; the "
                                 f"keys are {', '.join(TOP_KEYS)}")
            top[key] = value_node
            top_nodes[key] = key_node

        name = stem
        if "name" in top:
            name = self.text(top["name"], "'name'", "")
        description = ""
        if "description" in top:
            description = self.text(top["description"], "'description'", "\n\t")

        every, declared, inputs = self.parameters(top.get("parameters"), overrides,
                                                  top.get("inputs"))
        coords, coord_locs = self.coordinates(top.get("coordinates"), root, declared)
        params = tuple(p for p in every if p.name not in inputs)
        self.refused = dict.fromkeys(inputs, INPUT_ONLY)

        symbols: dict[str, se.Basic] = symbol_table([p.name for p in params], coords)
        driven: dict[str, se.Basic] = {**symbols, **{u: se.Symbol(u) for u in inputs}}

        def opt_expr(key: str, names: Mapping[str, se.Basic], what: str) -> Expr | None:
            return self.expr(top[key], names, what) if key in top else None

        lagrangian = opt_expr("lagrangian", symbols, "'lagrangian'")
        kinetic = opt_expr("kinetic", symbols, "'kinetic'")
        potential = opt_expr("potential", symbols, "'potential'")
        if potential is not None:
            self.no_velocity(potential, coords, top["potential"], "'potential' U(q, t)")
        masses = self.masses(top.get("masses"), symbols, coords,
                             {p.name: p.value for p in params})
        gravity = None
        if "gravity" in top:
            gravity = tuple(self.positional(n, symbols, coords, "a component of 'gravity'")
                            for n in self.sequence(top["gravity"], "'gravity'"))
            self.check_gravity(top["gravity"], gravity, masses)
        if lagrangian is not None:
            for key in ("kinetic", "potential", "masses", "gravity"):
                if key in top:
                    raise self.error(top_nodes[key], f"'{key}' cannot be combined with "
                                     "'lagrangian'; give either L directly or T and U")
        elif kinetic is None and not masses:
            raise self.error(root, "no energy given: add 'kinetic' (with 'potential'), "
                             "'masses', or 'lagrangian'")

        forces = []
        if "forces" in top:
            for raw, key_node, value_node in self.mapping(top["forces"], "'forces'", "coordinate"):
                key = normal_name(raw)
                if key not in coords:
                    raise self.error(key_node, f"'forces' names '{key}', which is not a "
                                     f"coordinate{suggest(key, coords)}; forces are given by "
                                     "coordinate")
                forces.append((key, self.expr(value_node, driven, f"the force on '{key}'")))
        loads = self.loads(top["loads"], masses, driven) if "loads" in top else ()
        torques = self.torques(top.get("torques"), masses, driven)
        dissipation = opt_expr("dissipation", symbols, "'dissipation'")

        self.contacts: list[ContactSpec] = []
        self.parameter_values = {p.name: p.value for p in params}
        constraints = self.constraints(top.get("constraints"), symbols, coords, masses)
        constraints += self.unit_constraints(masses, constraints)
        initial = self.initial(top.get("initial"), params, coords, initial_over)
        simulate = self.simulate(top.get("simulate"))
        units = self.units(top.get("units"), every, coords)
        springs, spring_forces = self.springs(top.get("springs"), masses, params, symbols,
                                              coords)
        steady, steady_locations = self.steady(top.get("steady"), params, coords)

        return SystemSpec(
            source=self.label, name=name, description=description, parameters=every,
            coordinates=coords, coordinate_locations=coord_locs, kinetic=kinetic,
            potential=potential, lagrangian=lagrangian, masses=masses, gravity=gravity,
            forces=tuple(forces), loads=loads, dissipation=dissipation,
            constraints=constraints, initial=initial, simulate=simulate,
            location=self.loc(root), initial_locations=tuple(self.initial_locations.items()),
            initial_gradients=tuple(self.initial_gradients.items()),
            parameter_gradients=tuple(self.parameter_gradients.items()),
            parameter_definitions=tuple(self.parameter_definitions.items()),
            initial_definitions=tuple(self.initial_definitions.items()),
            units=units, springs=springs, spring_forces=spring_forces, torques=torques,
            steady=steady, steady_locations=steady_locations, contacts=tuple(self.contacts),
            inputs=inputs,
        )

    def parameters(self, node: yaml.Node | None, given: Mapping[str, float],
                   inputs_node: yaml.Node | None = None
                   ) -> tuple[tuple[Parameter, ...], set[str], tuple[str, ...]]:
        """The parameters, then the inputs (parameters whose defaults ``--set`` may change, that
        only forces may use), the set of their names, and the inputs' names."""
        overrides = finite_values(given, "--set")
        self.parameter_gradients: dict[str, tuple[tuple[str, float], ...]] = {}
        self.parameter_definitions: dict[str, se.Basic] = {}
        params: list[Parameter] = []
        names: dict[str, se.Basic] = {}
        inputs: list[str] = []
        for kind, part in (("parameter", node), ("input", inputs_node)):
            if part is None or (isinstance(part, yaml.ScalarNode) and part.value == ""):
                continue
            constants = dict(names)
            for _key, key_node, value_node in self.mapping(part, f"'{kind}s'", kind):
                pname = self.identifier(key_node, kind)
                if naming.is_acceleration(pname):
                    raise self.error(key_node, f"{kind} '{pname}' ends in _ddot, which lagsim "
                                     "keeps for accelerations; rename it")
                if kind == "input" and pname in names:
                    raise self.error(key_node, f"input '{pname}' is also a parameter; rename "
                                     "one")
                value = (overrides[pname] if pname in overrides
                         else self.number(value_node, names if kind == "parameter" else
                                          constants, f"{kind} '{pname}'",
                                          PARAMETER_HINT if kind == "parameter" else
                                          INPUT_HINT))
                if pname not in overrides:
                    self.chain(pname, self.expr(value_node, {p.name: se.Symbol(p.name)
                                                             for p in params},
                                                f"{kind} '{pname}'", PARAMETER_HINT).expr,
                               tuple(params))
                names[pname] = se.RealDouble(value)
                where = Location("--set") if pname in overrides else self.loc(value_node)
                params.append(Parameter(pname, value, where))
                if kind == "input":
                    inputs.append(pname)
        unknown = [k for k in overrides if k not in names]
        if unknown:
            raise InputError(f"no such parameter '{unknown[0]}'"
                             f"{suggest(unknown[0], list(names))}; the parameters are "
                             f"{', '.join(names) or '(none)'}", Location("--set"))
        return tuple(params), set(names), tuple(inputs)

    def chain(self, name: str, expr: se.Basic, params: tuple[Parameter, ...]) -> None:
        """Record d(name)/d(earlier parameter) of a value ``expr`` of earlier parameters, through
        the parameters defined from others (:attr:`SystemSpec.parameter_gradients`)."""
        gradient = self.total(_gradient(expr, params))
        if gradient:
            self.parameter_gradients[name] = gradient
        if expr.free_symbols:
            self.parameter_definitions[name] = self.defined(expr)

    def defined(self, expr: se.Basic) -> se.Basic:
        """``expr`` in the parameters that are numbers in the file: each parameter defined from
        others replaced by its definition (:attr:`SystemSpec.parameter_definitions`)."""
        return se.sympify(expr).xreplace({se.Symbol(k): v for k, v in
                                          self.parameter_definitions.items()})

    def total(self, direct: tuple[tuple[str, float], ...]) -> tuple[tuple[str, float], ...]:
        """A gradient in the parameters it names, with each one defined from others followed to
        those (the chain rule, in the order the parameters are declared)."""
        out = dict(direct)
        for name, value in direct:
            for other, d in self.parameter_gradients.get(name, ()):
                out[other] = out.get(other, 0.0) + value * d
        return tuple(out.items())

    def coordinates(self, node: yaml.Node | None, root: yaml.Node, declared: set[str]
                    ) -> tuple[tuple[str, ...], tuple[Location, ...]]:
        if node is None:
            raise self.error(root, "missing 'coordinates': list the generalized coordinates, "
                             "e.g. coordinates: [theta]")
        items = self.sequence(node, "'coordinates'")
        if not items:
            raise self.error(node, "'coordinates' is empty; list at least one coordinate")
        if len(items) > MAX_COORDINATES:
            raise self.error(node, exceeded("coordinates", f"{len(items):,} coordinates"))
        names: list[str] = []
        locs = []
        for item in items:
            qname = self.identifier(item, "coordinate")
            if qname in declared:
                raise self.error(item, f"coordinate '{qname}' is also a parameter; rename one")
            if qname in names:
                raise self.error(item, f"coordinate '{qname}' is listed twice; keep one")
            names.append(qname)
            locs.append(self.loc(item))
        return tuple(names), tuple(locs)

    def no_velocity(self, expr: Expr, coords: tuple[str, ...], node: yaml.Node, what: str,
                    hint: str = "") -> None:
        used = sorted(s.name for s in expr.expr.free_symbols
                      if naming.rate_of(s.name) in coords)
        if used:
            raise self.error(node, f"{what} may not depend on velocities, but uses "
                             f"{', '.join(used)}{hint}")

    def positional(self, node: yaml.Node, names: Mapping[str, se.Basic],
                   coords: tuple[str, ...], what: str) -> Expr:
        """An expression in q and t only (a mass, a position, an angle, gravity)."""
        expr = self.expr(node, names, what)
        self.no_velocity(expr, coords, node, what)
        return expr

    def masses(self, node: yaml.Node | None, names: Mapping[str, se.Basic],
               coords: tuple[str, ...], values: Mapping[str, float]) -> tuple[MassSpec, ...]:
        if node is None:
            return ()
        masses = []
        for raw, key_node, value_node in self.mapping(node, "'masses'", "mass"):
            mname = normal_name(raw)
            if not raw.isidentifier() or not mname.isidentifier():
                raise self.error(key_node, f"mass name {raw!r} is not a valid name; use letters, "
                                 "digits and _ starting with a letter (e.g. bob)")
            fields = {key: v for key, (_, v) in self.fields(
                value_node, f"mass '{mname}'", MASS_KEYS, ("mass", "position")).items()}
            mass = self.positional(fields["mass"], names, coords, f"the mass of '{mname}'")
            items = self.sequence(fields["position"], f"the position of '{mname}'")
            if len(items) not in (2, 3):
                raise self.error(fields["position"], f"the position of '{mname}' has "
                                 f"{len(items)} components; give 2 (planar) or 3")
            position = tuple(self.positional(n, names, coords,
                                             f"a component of the position of '{mname}'")
                             for n in items)
            points = self.points(mname, fields, names, coords, len(position))
            if "orientation" in fields:
                masses.append(replace(self.body(mname, fields, value_node, names, coords,
                                                position, key_node, values, mass),
                                      points=points))
                continue
            if "inertia" in fields and not isinstance(fields["inertia"], yaml.ScalarNode):
                raise self.error(fields["inertia"], f"mass '{mname}': a list 'inertia' is a 3-D "
                                 "body's and needs 'orientation' ({euler: ZXZ, angles: [...]} "
                                 "or {matrix: [[...], [...], [...]]}); a planar body gives one "
                                 "moment and 'angle'")
            inertia = angle = None
            if ("inertia" in fields) != ("angle" in fields):
                raise self.error(value_node, f"mass '{mname}': 'inertia' and 'angle' go together "
                                 "(a planar body's moment of inertia and its orientation)")
            if "inertia" in fields:
                inertia = self.positional(fields["inertia"], names, coords,
                                          f"the inertia of '{mname}'")
                angle = self.positional(fields["angle"], names, coords,
                                        f"the angle of '{mname}'")
            masses.append(MassSpec(mname, mass, position, inertia, angle, self.loc(key_node),
                                   points=points))
        dims = {len(m.position) for m in masses}
        if len(dims) > 1:
            raise self.error(node, "all masses must have positions of the same dimension "
                             "(2 or 3 components)")
        return tuple(masses)

    def points(self, mname: str, fields: Mapping[str, yaml.Node],
               names: Mapping[str, se.Basic], coords: tuple[str, ...], dim: int
               ) -> tuple[Point, ...]:
        """A body's ``points:``: name → offset from the centre of mass, a list in body axes or
        ``{space: [...]}`` in space axes, ``dim`` components each, in parameters, coordinates
        and t."""
        node = fields.get("points")
        if node is None:
            return ()
        if "orientation" not in fields and "angle" not in fields:
            raise self.error(node, f"mass '{mname}' is a point mass, which has no points of its "
                             "own; give it 'orientation' and 'inertia' (3-D) or 'angle' and "
                             "'inertia' (planar), or declare another mass")
        out: list[Point] = []
        for raw, key_node, value_node in self.mapping(node, f"the points of '{mname}'", "point"):
            pname = normal_name(raw)
            if not raw.isidentifier() or not pname.isidentifier():
                raise self.error(key_node, f"point name {raw!r} is not a valid name; use "
                                 "letters, digits and _ starting with a letter (e.g. rim)")
            what = f"point '{mname}.{pname}'"
            space = False
            offset = value_node
            if isinstance(value_node, yaml.MappingNode):
                entries = self.mapping(value_node, what)
                if len(entries) != 1 or entries[0][0] != "space":
                    bad = next((k for k in entries if k[0] != "space"), entries[0] if entries
                               else None)
                    raise self.error(bad[1] if bad else value_node, f"{what} is a list [..] in "
                                     "body axes or {space: [..]} in space axes; the only key is "
                                     "'space'")
                space, offset = True, entries[0][2]
            items = self.sequence(offset, what)
            if len(items) != dim:
                raise self.error(offset, f"{what} has {len(items)} components; the position "
                                 f"of '{mname}' has {dim}, give {dim}")
            parts = tuple(self.positional(n, names, coords, f"a component of {what}")
                          for n in items)
            out.append(Point(pname, parts, space, self.loc(key_node)))
        return tuple(out)

    def point_ref(self, node: yaml.Node, masses: tuple[MassSpec, ...], what: str,
                  extra: tuple[str, ...] = ()) -> str:
        """A mass name (its centre of mass) or ``body.point`` (or one of ``extra``), checked
        against the declared masses and their points."""
        text = normal_name(str(self.scalar(node, what)))
        if text in extra:
            return text
        body, dot, point = text.partition(".")
        names = [m.name for m in masses]
        if body not in names and not dot:
            raise self.error(node, f"{what} '{text}', which is not a mass"
                             f"{suggest(body, [*names, *extra])}; declare it under 'masses'")
        if body not in names:
            raise self.error(node, f"{what} '{text}': '{body}' is not a mass"
                             f"{suggest(body, names)}; a point is body.point, a point "
                             "declared under a body's 'points'")
        if not dot:
            return text
        mass = next(m for m in masses if m.name == body)
        points = [p.name for p in mass.points]
        if point not in points:
            known = (f"its points are {', '.join(points)}" if points else
                     f"'{body}' declares no 'points'")
            raise self.error(node, f"{what} '{text}': '{body}' has no point '{point}'"
                             f"{suggest(point, points)}; {known}")
        return text

    def loads(self, node: yaml.Node, masses: tuple[MassSpec, ...],
              symbols: Mapping[str, se.Basic]) -> tuple[tuple[str, tuple[Expr, ...]], ...]:
        """``loads:``: a force in space axes on a mass's centre or on ``body.point``."""
        out = []
        for _raw, key_node, value_node in self.mapping(node, "'loads'", "mass"):
            key = self.point_ref(key_node, masses, "'loads' names")
            dim = len(next(m for m in masses if m.name == key.partition(".")[0]).position)
            vector = tuple(self.expr(n, symbols, f"a component of the load on '{key}'")
                           for n in self.sequence(value_node, f"the load on '{key}'"))
            if len(vector) != dim:
                raise self.error(value_node, f"the load on '{key}' has {len(vector)} "
                                 f"components but its position has {dim}")
            out.append((key, vector))
        return tuple(out)

    def torques(self, node: yaml.Node | None, masses: tuple[MassSpec, ...],
                symbols: Mapping[str, se.Basic]) -> tuple[TorqueSpec, ...]:
        """``torques:``: body → [Mx, My, Mz] in space axes, {body_axes: [..]} in the body's
        axes, or one number (about z) for a planar body."""
        if node is None:
            return ()
        out = []
        for _raw, key_node, value_node in self.mapping(node, "'torques'", "body"):
            body = self.point_ref(key_node, masses, "'torques' names")
            if "." in body:
                raise self.error(key_node, f"a torque acts on a body, not on a point: write "
                                 f"'{body.partition('.')[0]}' (a force at a point goes under "
                                 "'loads')")
            mass = next(m for m in masses if m.name == body)
            what = f"the torque on '{body}'"
            if not mass.rotates:
                raise self.error(key_node, f"{what}: '{body}' is a point mass, which has no "
                                 "orientation for a torque to turn; give it 'orientation' and "
                                 "'inertia' (or 'angle' and 'inertia')")
            body_axes = False
            items_node = value_node
            if isinstance(value_node, yaml.MappingNode):
                entries = self.mapping(value_node, what)
                if len(entries) != 1 or entries[0][0] not in ("space", "body_axes"):
                    raise self.error(value_node, f"{what} is [Mx, My, Mz] (space axes), "
                                     "{space: [..]} or {body_axes: [..]}")
                body_axes, items_node = entries[0][0] == "body_axes", entries[0][2]
            if mass.orientation is None:
                if not isinstance(value_node, yaml.ScalarNode):
                    raise self.error(value_node, f"{what}: '{body}' is a planar body; its "
                                     "torque is one expression, the moment about the axis "
                                     "normal to the plane")
                out.append(TorqueSpec(body, (self.expr(value_node, symbols, what),), False,
                                      self.loc(key_node)))
                continue
            if isinstance(items_node, yaml.ScalarNode):
                raise self.error(items_node, f"{what}: '{body}' is a 3-D body; its torque is "
                                 "[Mx, My, Mz]")
            moment = tuple(self.expr(n, symbols, f"a component of {what}")
                           for n in self.sequence(items_node, what))
            if len(moment) != 3:
                raise self.error(items_node, f"{what} has {len(moment)} components; give 3")
            out.append(TorqueSpec(body, moment, body_axes, self.loc(key_node)))
        return tuple(out)

    def body(self, mname: str, fields: Mapping[str, yaml.Node], value_node: yaml.Node,
             names: Mapping[str, se.Basic], coords: tuple[str, ...],
             position: tuple[Expr, ...], key_node: yaml.Node, values: Mapping[str, float],
             mass: Expr) -> MassSpec:
        """A 3-D rigid body: ``orientation`` with a list ``inertia`` and a 3-component
        ``position`` of its centre of mass."""
        if "angle" in fields:
            raise self.error(fields["angle"], f"mass '{mname}': 'angle' is a planar body's; a "
                             "3-D body's orientation is given by 'orientation' alone")
        if "inertia" not in fields:
            raise self.error(value_node, f"mass '{mname}' has an 'orientation' and needs "
                             "'inertia': [I1, I2, I3], [Ixx, Iyy, Izz, Ixy, Iyz, Izx] or a 3×3 "
                             "matrix, about its centre of mass in body axes")
        if len(position) != 3:
            raise self.error(fields["position"], f"the position of '{mname}' has "
                             f"{len(position)} components; a body with an 'orientation' needs 3")
        orientation = self.orientation(mname, fields["orientation"], names, coords, values)
        inertia = self.body_inertia(mname, fields["inertia"], names, values)
        return MassSpec(mname, mass, position, None, None, self.loc(key_node), orientation,
                        inertia)

    def orientation(self, mname: str, node: yaml.Node, names: Mapping[str, se.Basic],
                    coords: tuple[str, ...], values: Mapping[str, float]) -> Orientation:
        what = f"the orientation of '{mname}'"
        fields = {key: v for key, (_, v) in self.fields(node, what, ORIENTATION_KEYS).items()}
        if sum(k in fields for k in ("euler", "matrix", "quaternion")) != 1:
            raise self.error(node, f"{what} needs exactly one of 'euler' (with 'angles'), "
                             "'matrix' and 'quaternion'")
        if "quaternion" in fields:
            for key in ("angles", "extrinsic"):
                if key in fields:
                    raise self.error(fields[key], f"{what}: '{key}' goes with 'euler', not "
                                     "with 'quaternion'")
            items = self.sequence(fields["quaternion"], f"the quaternion of '{mname}'")
            if len(items) != 4:
                raise self.error(fields["quaternion"], f"the quaternion of '{mname}' has "
                                 f"{len(items)} components; give 4, [e0, e1, e2, e3] (scalar "
                                 "first)")
            parts = tuple(self.positional(n, names, coords,
                                          f"a component of the quaternion of '{mname}'")
                          for n in items)
            return Orientation("", False, (), (), parts)
        if "matrix" in fields:
            for key in ("angles", "extrinsic"):
                if key in fields:
                    raise self.error(fields[key], f"{what}: '{key}' goes with 'euler', not "
                                     "with 'matrix'")
            rows = self.square(fields["matrix"], f"the orientation matrix of '{mname}'",
                               names, coords)
            self.check_rotation(fields["matrix"], rows, coords, values, mname)
            return Orientation("", False, (), rows)
        seq_node = fields["euler"]
        sequence = str(self.scalar(seq_node, f"{what}: 'euler'")).upper()
        if sequence not in EULER_SEQUENCES:
            raise self.error(seq_node, f"{what}: unknown Euler sequence "
                             f"{seq_node.value!r}; the sequences are "
                             f"{', '.join(EULER_SEQUENCES)}")
        if "angles" not in fields:
            raise self.error(node, f"{what} needs 'angles': [a, b, c], the three angles of "
                             f"{sequence}")
        items = self.sequence(fields["angles"], f"the angles of '{mname}'")
        if len(items) != 3:
            raise self.error(fields["angles"], f"the angles of '{mname}' are {len(items)}; "
                             f"{sequence} takes 3")
        angles = tuple(self.positional(n, names, coords, f"an angle of '{mname}'")
                       for n in items)
        extrinsic = False
        if "extrinsic" in fields:
            flag = self.scalar(fields["extrinsic"], f"{what}: 'extrinsic'")
            if not isinstance(flag, bool):
                raise self.error(fields["extrinsic"], f"{what}: 'extrinsic' is true or false, "
                                 f"not {flag!r}")
            extrinsic = flag
        return Orientation(sequence, extrinsic, angles, ())

    def square(self, node: yaml.Node, what: str, names: Mapping[str, se.Basic],
               coords: tuple[str, ...]) -> tuple[tuple[Expr, ...], ...]:
        """A 3×3 matrix of expressions in q and t, given as three rows."""
        rows = self.sequence(node, what)
        if len(rows) != 3:
            raise self.error(node, f"{what} has {len(rows)} rows; give 3 rows of 3")
        out = []
        for row in rows:
            items = self.sequence(row, f"a row of {what}")
            if len(items) != 3:
                raise self.error(row, f"a row of {what} has {len(items)} entries; give 3")
            out.append(tuple(self.positional(n, names, coords, f"an entry of {what}")
                             for n in items))
        return tuple(out)

    def check_rotation(self, node: yaml.Node, rows: tuple[tuple[Expr, ...], ...],
                       coords: tuple[str, ...], values: Mapping[str, float], mname: str) -> None:
        """RᵀR = I and det R = 1 at :data:`ORTHOGONAL_STATES` random states (seeded: the same
        file gives the same verdict) to :data:`ORTHOGONAL_TOLERANCE`."""
        import numpy as np

        rng = np.random.default_rng(0)
        for _ in range(ORTHOGONAL_STATES):
            state: dict[se.Basic, float] = {se.Symbol(k): v for k, v in values.items()}
            state.update({se.Symbol(q): float(rng.uniform(-math.pi, math.pi)) for q in coords})
            state[TIME] = float(rng.uniform(0.0, 10.0))
            try:
                R = np.array([[float(e.expr.subs(state)) for e in row] for row in rows])
            except (RuntimeError, TypeError, ValueError):
                raise self.error(node, f"the orientation matrix of '{mname}' does not evaluate "
                                 "to numbers at a state; its entries may use parameters, "
                                 "coordinates and t") from None
            error = float(np.max(np.abs(R.T @ R - np.eye(3))))
            det = float(np.linalg.det(R))
            if error > ORTHOGONAL_TOLERANCE or abs(det - 1.0) > ORTHOGONAL_TOLERANCE:
                shown = ", ".join(f"{q}={float(state[se.Symbol(q)]):.6g}" for q in coords)
                raise self.error(node, f"the orientation matrix of '{mname}' is not a rotation: "
                                 f"at {shown}, t={float(state[TIME]):.6g} max|RᵀR − I| = "
                                 f"{error:.3g} and det R = {det:.6g} (allowed "
                                 f"{ORTHOGONAL_TOLERANCE:g})")

    def body_inertia(self, mname: str, node: yaml.Node, names: Mapping[str, se.Basic],
                     values: Mapping[str, float]) -> tuple[tuple[Expr, ...], ...]:
        """The 3×3 inertia about the centre of mass in body axes, from 3 principal moments, 6
        components or a matrix; symmetric, and at the parameter values positive definite with
        principal moments obeying the triangle inequality (Landau & Lifshitz, *Mechanics*, §32)."""
        import numpy as np

        what = f"the inertia of '{mname}'"
        params = {k: v for k, v in names.items() if k in values}
        items = self.sequence(node, what)
        zero = Expr("0", se.Integer(0), self.loc(node))
        if items and all(isinstance(n, yaml.SequenceNode) for n in items):
            rows = self.square(node, what, params, ())
            for i, j in ((0, 1), (1, 2), (0, 2)):
                if se.expand(rows[i][j].expr - rows[j][i].expr) != 0:
                    raise self.error(node, f"{what} is not symmetric: entry ({i + 1},{j + 1}) "
                                     f"is {rows[i][j].text} but ({j + 1},{i + 1}) is "
                                     f"{rows[j][i].text}")
        else:
            entries = tuple(self.expr(n, params, f"a component of {what}",
                                      "an inertia component is an expression in parameters")
                            for n in items)
            if len(entries) == 3:
                a, b, c = entries
                rows = ((a, zero, zero), (zero, b, zero), (zero, zero, c))
            elif len(entries) == 6:
                xx, yy, zz, xy, yz, zx = entries
                rows = ((xx, xy, zx), (xy, yy, yz), (zx, yz, zz))
            else:
                raise self.error(node, f"{what} has {len(entries)} components; give [I1, I2, I3] "
                                 "(principal), [Ixx, Iyy, Izz, Ixy, Iyz, Izx] or a 3×3 matrix")
        subs = {se.Symbol(k): v for k, v in values.items()}
        matrix = np.array([[float(e.expr.subs(subs)) for e in row] for row in rows])
        moments = np.linalg.eigvalsh(matrix)
        shown = ", ".join(f"{m:.6g}" for m in moments)
        scale = float(np.max(np.abs(moments)))
        if moments[0] <= 1e-12 * scale or scale == 0.0:
            raise self.error(node, f"{what} is not positive at the parameter values: its "
                             f"principal moments are {shown}")
        if moments[2] > moments[0] + moments[1] + 1e-12 * scale:
            raise self.error(node, f"{what} violates the triangle inequality at the parameter "
                             f"values: the principal moments {shown} "
                             "need the largest ≤ the sum of the other two")
        return rows

    def check_gravity(self, node: yaml.Node, gravity: tuple[Expr, ...],
                      masses: tuple[MassSpec, ...]) -> None:
        if not masses:
            raise self.error(node, "'gravity' acts on 'masses', and none are declared; "
                             "write the potential under 'potential' instead")
        dim = len(masses[0].position)
        if len(gravity) != dim:
            raise self.error(node, f"'gravity' has {len(gravity)} components but the mass "
                             f"positions have {dim}")

    def constraints(self, node: yaml.Node | None, symbols: Mapping[str, se.Basic],
                    coords: tuple[str, ...], masses: tuple[MassSpec, ...] = ()
                    ) -> tuple[ConstraintSpec, ...]:
        if node is None:
            return ()
        out: list[ConstraintSpec] = []
        items = self.sequence(node, "'constraints'")
        if len(items) > MAX_CONSTRAINTS:
            raise self.error(node, exceeded("constraints", f"{len(items):,} constraints"))
        keys = ("name", "holonomic", "velocity", *NO_SLIP_KEYS[1:], *CONTACT_KEYS[1:])
        for index, item in enumerate(items, start=1):
            name = f"c{index}"
            if isinstance(item, yaml.MappingNode):
                fields = self.fields(item, f"constraint {index}", keys, hint=(
                    "use name:, and one of holonomic: or velocity: (or no_slip:, with "
                    "directions:, or unilateral: with restitution:)"))
                if "name" in fields:
                    name = self.identifier(fields["name"][1], "constraint name", "constraints")
                if "no_slip" in fields or "directions" in fields:
                    for row in self.no_slip(item, fields, name if "name" in fields else "",
                                            masses, MAX_CONSTRAINTS - len(out)):
                        if any(c.name == row.name for c in out):
                            raise InputError(f"constraint name '{row.name}' is used twice; "
                                             "names must be unique (they name the multipliers "
                                             "lambda_<name>)", row.location)
                        out.append(row)
                    continue
                if any(k in fields for k in CONTACT_KEYS[1:]):
                    self.contact(name, item, fields, symbols, coords,
                                 [c.name for c in out] + [c.name for c in self.contacts])
                    continue
                kinds = [k for k in ("holonomic", "velocity") if k in fields]
                if len(kinds) != 1:
                    raise self.error(item, f"constraint '{name}' needs exactly one of "
                                     "'holonomic:' (phi(q, t) = 0) or 'velocity:' "
                                     "(a(q, t).q_dot + b(q, t) = 0)")
                kind = kinds[0]
                expr_node = fields[kind][1]
            else:
                kind = "holonomic"
                expr_node = item
            expr = self.expr(expr_node, symbols, f"constraint '{name}'")
            if kind == "holonomic":
                self.no_velocity(expr, coords, expr_node, f"holonomic constraint '{name}'",
                                 "; write it under 'velocity:' if it is a velocity constraint")
            else:
                self.check_linear(expr, coords, expr_node, name)
            if name in [c.name for c in out] + [c.name for c in self.contacts]:
                raise self.error(expr_node, f"constraint name '{name}' is used twice; names "
                                 "must be unique (they name the multipliers lambda_<name>)")
            out.append(ConstraintSpec(name, kind, expr, self.loc(expr_node)))
        return tuple(out)

    def no_slip(self, item: yaml.Node, fields: Mapping[str, tuple[yaml.Node, yaml.Node]],
                name: str, masses: tuple[MassSpec, ...], room: int
                ) -> list[ConstraintSpec]:
        """The rows v_P·e_k = 0 of ``{name: N, no_slip: P, directions: [x, y]}``: one per space
        axis (or per direction given), named ``N_x``, ``N_y``, ``N_z``."""
        if "no_slip" not in fields:
            raise self.error(fields["directions"][0], "'directions' goes with 'no_slip'")
        for key in ("holonomic", "velocity"):
            if key in fields:
                raise self.error(fields[key][0], f"a constraint has one of 'holonomic', "
                                 f"'velocity' and 'no_slip'; '{key}' and 'no_slip' are both "
                                 "given")
        if not masses:
            raise self.error(fields["no_slip"][1], "'no_slip' names a point of a mass, and no "
                             "'masses' are declared")
        point = self.point_ref(fields["no_slip"][1], masses, "'no_slip' names")
        dim = len(masses[0].position)
        axes = SPACE_AXES[:dim]
        chosen: list[int] = list(range(dim))
        if "directions" in fields:
            d_node = fields["directions"][1]
            chosen = []
            for n in self.sequence(d_node, "'directions'"):
                axis = str(self.scalar(n, "a direction")).lower()
                if axis not in axes:
                    raise self.error(n, f"direction {axis!r} is not a space axis; the axes "
                                     f"are {', '.join(axes)}")
                if axes.index(axis) in chosen:
                    raise self.error(n, f"direction '{axis}' is given twice; keep one")
                chosen.append(axes.index(axis))
            if not chosen:
                raise self.error(d_node, "'directions' is empty; give at least one of "
                                 f"{', '.join(axes)}")
        if len(chosen) > room:
            raise self.error(item, exceeded("constraints", "more constraint rows"))
        base = name or point.rpartition(".")[2]
        rows = []
        for k in chosen:
            row = f"{base}_{axes[k]}"
            clash = naming.column_clash(row)
            if clash:
                raise self.error(item, f"constraint name '{row}' {clash}")
            rows.append(ConstraintSpec(row, "velocity", None, self.loc(fields["no_slip"][1]),
                                       point, k))
        return rows

    def contact(self, name: str, item: yaml.Node, fields: Mapping[str, tuple[yaml.Node, yaml.Node]],
                symbols: Mapping[str, se.Basic], coords: tuple[str, ...], taken: list[str]
                ) -> None:
        """A ``unilateral:`` item of ``constraints:`` (issue 27), appended to ``self.contacts``."""
        for key in ("holonomic", "velocity"):
            if key in fields:
                raise self.error(fields[key][0], f"constraint '{name}' is unilateral: '{key}:' "
                                 "cannot be combined with 'unilateral:'; give a bilateral "
                                 "constraint as an item of its own")
        if "unilateral" not in fields:
            key = next(k for k in CONTACT_KEYS[2:] if k in fields)
            raise self.error(fields[key][0], f"'{key}:' in constraint '{name}' belongs to a "
                             "unilateral constraint; add 'unilateral: g' (the gap g(q, t) >= 0)")
        if ("friction" in fields) != ("tangent" in fields):
            key = "friction" if "friction" in fields else "tangent"
            raise self.error(fields[key][0], f"'{key}:' in constraint '{name}' needs both "
                             "'friction: mu' (Coulomb's coefficient) and 'tangent: s' (the "
                             "position of the contact point along the obstacle, a function of "
                             "the coordinates and t)")
        if "restitution" not in fields:
            raise self.error(item, f"unilateral constraint '{name}' needs 'restitution: e' "
                             "(Newton's coefficient, 0 <= e <= 1)")
        gap_node = fields["unilateral"][1]
        gap = self.expr(gap_node, symbols, f"unilateral constraint '{name}'")
        self.no_velocity(gap, coords, gap_node, f"the gap of unilateral constraint '{name}'",
                         "; the gap g(q, t) >= 0 is a function of the coordinates and t")
        e_node = fields["restitution"][1]
        e = self.expr(e_node, symbols, f"the restitution of '{name}'")
        free = {str(s) for s in e.expr.free_symbols} - set(self.parameter_values)
        if free:
            raise self.error(e_node, f"the restitution of '{name}' may use only parameters, "
                             f"not {', '.join(sorted(free))}")
        try:
            value = float(e.expr.subs({se.Symbol(k): v
                                       for k, v in self.parameter_values.items()}))
        except (TypeError, ValueError, RuntimeError):
            raise self.error(e_node, f"the restitution of '{name}' is not a real number at the "
                             "parameters' values") from None
        if not 0.0 <= value <= 1.0:
            raise self.error(e_node, f"the restitution of '{name}' is {value:g} at the "
                             "parameters' values; Newton's coefficient lies in [0, 1]")
        if name in taken:
            raise self.error(gap_node, f"constraint name '{name}' is used twice; names "
                             "must be unique (they name the multipliers lambda_<name>)")
        mu: float | None = None
        tangent: Expr | None = None
        if "friction" in fields:
            mu_node, s_node = fields["friction"][1], fields["tangent"][1]
            mu_expr = self.expr(mu_node, symbols, f"the friction of '{name}'")
            try:
                mu = float(mu_expr.expr.subs({se.Symbol(k): v
                                              for k, v in self.parameter_values.items()}))
            except (TypeError, ValueError, RuntimeError):
                raise self.error(mu_node, f"the friction of '{name}' must be a number at the "
                                 "parameters' values") from None
            if not mu >= 0.0:
                raise self.error(mu_node, f"the friction of '{name}' is {mu:g}; Coulomb's "
                                 "coefficient is >= 0")
            tangent = self.expr(s_node, symbols, f"the tangent of '{name}'")
            self.no_velocity(tangent, coords, s_node, f"the tangent of '{name}'",
                             "; s(q, t) is a position along the obstacle")
        self.contacts.append(ContactSpec(name, gap, e, value, self.loc(gap_node), mu, tangent))

    def unit_constraints(self, masses: tuple[MassSpec, ...],
                         given: tuple[ConstraintSpec, ...]) -> tuple[ConstraintSpec, ...]:
        """The holonomic constraint e0² + e1² + e2² + e3² − 1 = 0, named ``<mass>_unit``, of
        each body whose orientation is a quaternion."""
        out = []
        for mass in masses:
            if mass.orientation is None or not mass.orientation.quaternion:
                continue
            name = f"{mass.name}_unit"
            clash = next((c for c in given if c.name == name), None)
            if clash is not None:
                raise InputError(f"constraint name '{name}' is lagsim's for the unit "
                                 f"quaternion of '{mass.name}'; rename the constraint",
                                 clash.location)
            parts = mass.orientation.quaternion
            expr = se.Add(*(e.expr**2 for e in parts)) - 1
            text = " + ".join(f"({e.text})**2" for e in parts) + " - 1"
            out.append(ConstraintSpec(name, "holonomic", Expr(text, expr, mass.location),
                                      mass.location))
        return tuple(out)

    def check_linear(self, expr: Expr, coords: tuple[str, ...], node: yaml.Node, name: str
                     ) -> None:
        velocities = [se.Symbol(v) for v in naming.velocities(coords)]
        if not any(v in expr.expr.free_symbols for v in velocities):
            raise self.error(node, f"velocity constraint '{name}' uses no velocity; if it "
                             "restricts positions, write it as a holonomic constraint")
        for v in velocities:
            d = diff(expr.expr, v)
            if any(w in d.free_symbols for w in velocities):
                raise self.error(node, f"velocity constraint '{name}' is not linear in the "
                                 "velocities; lagsim needs a(q, t).q_dot + b(q, t) = 0")

    def initial(self, node: yaml.Node | None, params: tuple[Parameter, ...],
                coords: tuple[str, ...], override: Mapping[str, float]
                ) -> tuple[tuple[str, float], ...]:
        names = {p.name: se.RealDouble(p.value) for p in params}
        valid = list(naming.state(coords))
        values: dict[str, float] = {}
        self.initial_locations: dict[str, Location] = {}
        self.initial_gradients: dict[str, tuple[tuple[str, float], ...]] = {}
        self.initial_definitions: dict[str, se.Basic] = {}
        if node is not None and not (isinstance(node, yaml.ScalarNode) and node.value == ""):
            entries = self.mapping(node, "'initial'", "coordinate or velocity")
            for raw, key_node, value_node in entries:
                key = normal_name(raw)
                if key not in valid:
                    raise self.error(key_node, f"'initial' names '{key}', which is not a "
                                     f"coordinate or velocity{suggest(key, valid)}")
                values[key] = self.number(value_node, names, f"the initial value of '{key}'",
                                          INITIAL_HINT)
                self.initial_locations[key] = self.loc(value_node)
                written = self.expr(value_node, {p.name: se.Symbol(p.name) for p in params},
                                    f"the initial value of '{key}'", INITIAL_HINT).expr
                self.initial_gradients[key] = self.total(_gradient(written, params))
                if written.free_symbols:
                    self.initial_definitions[key] = self.defined(written)
        for key in finite_values(override, "--init"):
            self.initial_gradients.pop(key, None)
            self.initial_definitions.pop(key, None)
        return put_initial(values, self.initial_locations, valid, override)

    def steady(self, node: yaml.Node | None, params: tuple[Parameter, ...],
               coords: tuple[str, ...]
               ) -> tuple[tuple[tuple[str, float], ...], tuple[tuple[str, Location], ...]]:
        """``steady:``, a mapping of coordinates (values) and velocities (rates) to expressions
        in numbers and the parameters (with ``--set`` applied)."""
        if node is None or (isinstance(node, yaml.ScalarNode) and node.value == ""):
            return (), ()
        names = {p.name: se.RealDouble(p.value) for p in params}
        valid = list(naming.state(coords))
        values: dict[str, float] = {}
        where: dict[str, Location] = {}
        for raw, key_node, value_node in self.mapping(node, "'steady'", "coordinate or velocity"):
            key = normal_name(raw)
            if key not in valid:
                raise self.error(key_node, f"'steady' names '{key}', which is not a coordinate "
                                 f"or velocity{suggest(key, valid)}; a steady motion gives "
                                 "coordinates' values and <coordinate>_dot rates")
            values[key] = self.number(value_node, names, f"the steady value of '{key}'",
                                      INITIAL_HINT.replace("an initial", "a steady"))
            where[key] = self.loc(value_node)
        order = [k for k in valid if k in values]
        return tuple((k, values[k]) for k in order), tuple((k, where[k]) for k in order)

    def units(self, node: yaml.Node | None, params: tuple[Parameter, ...],
              coords: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """``units:``, a mapping of coordinates, parameters and ``t`` to unit text."""
        if node is None:
            return ()
        known = [*coords, *(p.name for p in params), "t"]
        out = []
        for raw, key_node, value_node in self.mapping(node, "'units'", "name"):
            key = normal_name(raw)
            if key not in known:
                raise self.error(key_node, f"'units' names '{key}', which is not a coordinate, "
                                 f"a parameter or t{suggest(key, known)}; velocities take the "
                                 "unit of their coordinate per unit of t")
            unit = self.text(value_node, f"the unit of '{key}'", "")
            if not unit.strip() or "\n" in unit:
                raise self.error(value_node, f"the unit of '{key}' must be one line of text such "
                                 "as m, rad or kg")
            out.append((key, unit.strip()))
        return tuple(out)

    def springs(self, node: yaml.Node | None, masses: tuple[MassSpec, ...],
                params: tuple[Parameter, ...], symbols: Mapping[str, se.Basic],
                coords: tuple[str, ...]
                ) -> tuple[tuple[tuple[SpringEnd, SpringEnd], ...], tuple[SpringSpec, ...]]:
        """``springs:``: [end, end] pairs to draw (an end is a mass, ``origin`` or a point
        [x, y] in numbers and parameters), and mappings {ends: [A, B], stiffness: k, length:
        L0, damping: c} that also act (an end is then also ``body.point`` or [x, y, z])."""
        if node is None:
            return (), ()
        names = [m.name for m in masses]
        values = {p.name: se.RealDouble(p.value) for p in params}
        out = []
        acting = []
        for item in self.sequence(node, "'springs'"):
            if isinstance(item, yaml.MappingNode):
                acting.append(self.spring(item, masses, values, symbols, coords))
                continue
            ends = self.sequence(item, "a spring")
            if len(ends) != 2:
                raise self.error(item, f"a spring has two ends, not {len(ends)}: write "
                                 "[mass, mass], [mass, origin] or [mass, [x, y]]")
            pair: list[SpringEnd] = []
            for end in ends:
                if isinstance(end, yaml.SequenceNode):
                    point = tuple(self.number(n, values, "a coordinate of a spring's end",
                                              PARAMETER_HINT) for n in end.value)
                    if len(point) != 2:
                        raise self.error(end, "a spring's fixed end is a point [x, y]")
                    pair.append((point[0], point[1]))
                    continue
                name = normal_name(str(self.scalar(end, "a spring's end")))
                if name != "origin" and name not in names:
                    raise self.error(end, f"a spring's end '{name}' is not a mass"
                                     f"{suggest(name, names)}; an end is a mass, origin or a "
                                     "point [x, y]")
                pair.append(name)
            out.append((pair[0], pair[1]))
        return tuple(out), tuple(acting)

    def spring(self, item: yaml.Node, masses: tuple[MassSpec, ...],
               values: Mapping[str, se.Basic], symbols: Mapping[str, se.Basic],
               coords: tuple[str, ...]) -> SpringSpec:
        """One ``{ends: [A, B], stiffness: k, length: L0, damping: c}``."""
        fields = {key: v for key, (_, v) in self.fields(
            item, "a spring", SPRING_KEYS, ("ends", "stiffness"),
            needs="a spring given as a mapping").items()}
        if not masses:
            raise self.error(item, "a spring acts on 'masses', and none are declared")
        dim = len(masses[0].position)
        ends_node = fields["ends"]
        ends = self.sequence(ends_node, "the ends of a spring")
        if len(ends) != 2:
            raise self.error(ends_node, f"a spring has two ends, not {len(ends)}")
        pair: list[End] = []
        for end in ends:
            if isinstance(end, yaml.SequenceNode):
                point = tuple(self.number(n, values, "a coordinate of a spring's end",
                                          PARAMETER_HINT) for n in end.value)
                if len(point) != dim:
                    raise self.error(end, f"a spring's fixed end has {len(point)} coordinates; "
                                     f"the mass positions have {dim}")
                pair.append(point)
                continue
            pair.append(self.point_ref(end, masses, "a spring's end", ("origin",)))
        if not any(isinstance(e, str) and e != "origin" for e in pair):
            raise self.error(ends_node, "a spring needs a mass or a body's point at one end at "
                             "least")
        stiffness = self.positional(fields["stiffness"], symbols, coords,
                                    "the stiffness of a spring")
        length = (self.positional(fields["length"], symbols, coords, "the length of a spring")
                  if "length" in fields else None)
        damping = (self.positional(fields["damping"], symbols, coords,
                                   "the damping of a spring") if "damping" in fields else None)
        return SpringSpec((pair[0], pair[1]), stiffness, length, damping, self.loc(item))

    def simulate(self, node: yaml.Node | None) -> dict[str, Setting]:
        if node is None:
            return {}
        out = {}
        for key, (_, value_node) in self.fields(node, "'simulate'", SIMULATE_KEYS).items():
            if isinstance(value_node, yaml.SequenceNode):
                value = [self.scalar(n, f"simulate.{key}") for n in value_node.value]
            else:
                value = self.scalar(value_node, f"simulate.{key}")
            out[key] = Setting(value, self.loc(value_node))
        return out


def read(text: str, label: str, stem: str, overrides: Mapping[str, float],
         initial: Mapping[str, float]) -> SystemSpec:
    """The :class:`SystemSpec` of YAML ``text`` (:func:`lagsim.spec.system.parse_spec`)."""
    return _Reader(label).read(text, stem, overrides, initial)
