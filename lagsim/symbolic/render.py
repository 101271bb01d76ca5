"""Print :class:`~lagsim.symbolic.forms.Form` objects as text (terminal), LaTeX (paper) or JSON
(scripts).

* ``text``: SymPy's unicode pretty printer, names by the one rule of :mod:`lagsim.symbolic.names`
  (``theta_dot`` is θ̇, ``theta_ddot`` θ̈, ``lambda_roll_x`` λ_roll_x).
  An item larger than :data:`PRETTY_MAX_NODES` nodes, or one that would not fit the terminal's
  width, is printed on lines instead (one line per matrix entry or equation row, sums broken
  between terms): SymPy's two-dimensional layout of such an item is slower than the whole
  derivation and, cut into strips at the terminal's width, unreadable.
* ``latex``: an ``align`` block; names by :func:`lagsim.symbolic.names.latex` (``\\dot{\\theta}``,
  ``\\lambda_{\\mathrm{roll\\_x}}``).
* ``json``: the model (``name``, ``coordinates``, ``parameters``, ``lagrangian``, ``mass_matrix``,
  ``forcing``, ``energy``, ``constraints``) and the form (``form``, ``items``, ``equations``), every
  expression a plain ``str()`` that ``sympy.sympify`` reads back with the plain names
  (``theta_dot``, ``lambda_rod``). Names SymPy would read as something else (``I``, ``E``,
  ``beta``, ``gamma``) read back as symbols with ``locals={n: Symbol(n) for n in doc["symbols"]}``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import sympy
from sympy import Number, Pow, Rational, S
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.pretty.pretty import PrettyPrinter
from sympy.printing.pretty.pretty_symbology import pretty_use_unicode
from sympy.printing.pretty.stringpict import prettyForm
from sympy.printing.str import StrPrinter

from lagsim.spec import choices
from lagsim.spec.options import WORDING
from lagsim.spec.references import REFERENCES, public_text
from lagsim.symbolic import names
from lagsim.symbolic.forms.base import Form, Item
from lagsim.symbolic.model import Model, to_sympy
from lagsim.symbolic.tidy import cheap

FORMATS = choices.REPORT_FORMATS

PRETTY_MAX_NODES = 300
"""Items up to this many nodes (symbols, numbers and operations) that fit the terminal's width
are laid out by SymPy's pretty printer; the others line by line (:class:`_Linear`). Expressions
longer than this are printed in SymPy's stored term order in every format (``order="none"``),
which skips sorting their terms."""


def _large(value: sympy.Basic, limit: int = PRETTY_MAX_NODES) -> bool:
    """Whether ``value`` (expression, matrix or equation) has more than ``limit`` nodes; stops
    counting there, so it costs at most ``limit`` steps."""
    if isinstance(value, sympy.MatrixBase):
        parts = list(value)
    elif isinstance(value, sympy.Eq):
        parts = [value.lhs, value.rhs]
    else:
        parts = [value]
    count = 0
    for part in parts:
        for _ in sympy.preorder_traversal(part):
            count += 1
            if count > limit:
                return True
    return False


def render(form_or_forms: Form | Sequence[Form], fmt: str, model: Model,
           width: int | None = None) -> str:
    """The forms of ``model`` in ``fmt`` (``text``, ``latex`` or ``json``), ending in a newline.

    ``width``: the text's line width (None: the terminal's, or 80 for a pipe or a file; 0: no
    wrapping, one line per equation or matrix entry)."""
    forms = [form_or_forms] if isinstance(form_or_forms, Form) else list(form_or_forms)
    if fmt == "text":
        return _text(forms, model, _width() if width is None else width)
    if fmt == "latex":
        return _latex(forms, model)
    if fmt == "json":
        return json.dumps(document(forms, model), indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def document(form_or_forms: Form | Sequence[Form], model: Model) -> dict[str, Any]:
    """The JSON document of ``--format json`` as Python values (dicts, lists, strings): what
    :func:`render` writes with ``json.dumps``."""
    forms = [form_or_forms] if isinstance(form_or_forms, Form) else list(form_or_forms)
    try:
        return _document(forms, model)
    finally:
        _PLAIN.memo.clear()


def untidied_lines(forms: Sequence[Form]) -> list[str]:
    """One line per expression of ``forms`` printed untidied (over its budget), for ``--debug``
    to show on stderr."""
    return [f"lagsim: debug: {form.name} form printed untidied: {reason}"
            for form in forms for reason in form.untidied]


def display_symbols(model: Model) -> dict[sympy.Symbol, str]:
    """Each symbol of the model (q, q̇, q̈, parameters, multipliers) → its text by the one names
    rule of :mod:`lagsim.symbolic.names` (``x_dot`` → ẋ, ``lambda_roll_x`` → λ_roll_x)."""
    plain = [*model.coordinates, *(str(v) for v in model.qd), *(str(a) for a in model.qdd),
             *model.parameters, *(c.multiplier for c in model.constraints)]
    return {sympy.Symbol(n): names.text(n) for n in plain}


_PIPE_WIDTH = 80


def _width() -> int:
    """The terminal's width when stdout is one, else 80 (what a pipe or a file gets)."""
    import shutil
    import sys

    return shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80


class _Pretty(PrettyPrinter):
    """SymPy's unicode pretty printer with names by :func:`lagsim.symbolic.names.text` (not SymPy's
    subscript guesses), and without the import of ``sympy.physics.units`` that its
    ``_print_Mul`` makes on its first product (0.45–0.6 s of every `lagsim derive`, half the
    1 s budget of issue 16 §4): physical quantities, which it sorts last, never occur here."""

    def _print_Symbol(self, e: sympy.Symbol, bold_name: bool = False) -> prettyForm:
        return prettyForm(names.text(e.name))

    def _print_Mul(self, product: sympy.Mul) -> prettyForm:
        args = product.args
        if args[0] is S.One or any(isinstance(arg, Number) for arg in args[1:]):
            strargs = list(map(self._print, args))
            negone = strargs[0] == "-1"
            if negone:
                strargs[0] = prettyForm("1", 0, 0)
            obj = prettyForm.__mul__(*strargs)
            if negone:
                obj = prettyForm("-" + obj.s, obj.baseline, obj.binding)
            return obj
        args = product.as_ordered_factors() if self.order not in ("old", "none") else list(args)
        a, b = [], []
        for item in args:
            if (item.is_commutative and item.is_Pow and item.exp.is_Rational
                    and item.exp.is_negative):
                b.append(Pow(item.base, -item.exp, evaluate=item.exp == -1))
            elif item.is_Rational and item is not S.Infinity:
                if item.p != 1:
                    a.append(Rational(item.p))
                if item.q != 1:
                    b.append(Rational(item.q))
            else:
                a.append(item)
        pa = [self._print(x) for x in a]
        if not b:
            return prettyForm.__mul__(*pa)
        pb = [self._print(x) for x in b]
        return prettyForm.__mul__(*(pa or [self._print(S.One)])) / prettyForm.__mul__(*pb)


def pretty(value: sympy.Basic, width: int) -> str:
    """``sympy.pretty(value, use_unicode=True, num_columns=width)`` by :class:`_Pretty`."""
    flag = pretty_use_unicode(True)
    try:
        return _Pretty({"use_unicode": True, "num_columns": width}).doprint(value)
    finally:
        pretty_use_unicode(flag)


def _pretty(value: sympy.Basic, width: int) -> str:
    """SymPy's layout of ``value`` if it is small and fits the width (SymPy marks a cut with ↪;
    width 0: the width of a pipe, 80), else :func:`_lines` (width 0: unwrapped). A layout that
    cannot fit (:func:`_too_wide`) is not tried: the failed attempts took 0.1–0.2 s of the
    8-chains' and uk2's ``--form all`` (issue 16 §4)."""
    columns = width or _PIPE_WIDTH
    if not _large(value) and not _too_wide(value, columns):
        out = pretty(value, columns)
        if "↪" not in out:
            return out
    return _lines(value, width)


WIDTH_FACTOR = 4
"""SymPy's two-dimensional layout of an expression with a quotient or a root is at least
1/WIDTH_FACTOR as wide as its one-line form: stacking a fraction at most halves a quotient's
width, and a quotient inside a stacked fraction halves it again (deeper stacks are the rare case
in which an item that would have fit is printed on lines instead); without either, at least
1/:data:`PLAIN_FACTOR` (a raised exponent drops its ``^(`` and ``)``)."""

PLAIN_FACTOR = 1.5


def _least_width(text: str) -> float:
    """A lower bound on the 2-D width of an expression whose one-line form is ``text``."""
    stacked = "/" in text or "sqrt" in text
    return len(text) / (WIDTH_FACTOR if stacked else PLAIN_FACTOR)


def _too_wide(value: sympy.Basic, width: int) -> bool:
    """Whether the 2-D layout of ``value`` is sure to exceed ``width`` (:func:`_least_width` of
    its one-line form; for a matrix, of each column's entries, plus two spaces between
    columns)."""
    line = _Fast()
    if isinstance(value, sympy.MatrixBase):
        if not value.rows or not value.cols:
            return False
        least = sum(max(_least_width(line(value[i, j])) for i in range(value.rows))
                    for j in range(value.cols))
        return least + 2 * (value.cols - 1) > width
    if isinstance(value, sympy.Eq):
        if not all(isinstance(v, sympy.Expr) and not isinstance(v, sympy.MatrixExpr)
                   for v in (value.lhs, value.rhs)):
            return False
        return _least_width(line(value.lhs)) + _least_width(line(value.rhs)) + 3 > width
    if isinstance(value, sympy.Expr):
        return _least_width(line(value)) > width
    return False


_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


class _Linear(StrPrinter):
    """One-line unicode: θ̇₁ for the display symbols, x² for small powers, ⋅ for products."""

    def __init__(self) -> None:
        super().__init__({"order": "none"})

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return names.text(expr.name)

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        e = expr.exp
        if e.is_Integer and 1 < e < 10:
            return self.parenthesize(expr.base, PRECEDENCE["Pow"]) + str(e).translate(_SUPERSCRIPTS)
        return super()._print_Pow(expr, rational)

    def doprint(self, expr: sympy.Basic) -> str:
        return super().doprint(expr).replace("**", "^").replace("*", "⋅")


_ADD, _MUL, _POW, _ATOM = 10, 20, 30, 1000
_FLOATS = StrPrinter({"full_prec": False})


class _OnePass:
    """What the one-pass printers share: each distinct subexpression shown once (``memo`` of
    (text, precedence)), parentheses where a precedence asks for them."""

    OPEN, CLOSE = "(", ")"
    memo: dict[sympy.Basic, tuple[str, int]]

    def __call__(self, expr: sympy.Basic) -> str:
        return self.show(expr)[0]

    def paren(self, expr: sympy.Basic, level: int) -> str:
        text, prec = self.show(expr)
        return f"{self.OPEN}{text}{self.CLOSE}" if prec <= level else text

    def show(self, expr: sympy.Basic) -> tuple[str, int]:
        """(text, precedence) of ``expr``."""
        out = self.memo.get(expr)
        if out is None:
            out = self._show(expr)
            self.memo[expr] = out
        return out

    def _show(self, e: sympy.Basic) -> tuple[str, int]:
        raise NotImplementedError


class _Fast(_OnePass):
    """The one-line format of :class:`_Linear` in time linear in the size of the expression
    (issue 17 §3): one pass, each distinct subexpression printed once (memo), signs read from
    numeric coefficients instead of negating SymPy objects, no precedence queries through
    SymPy. Anything but numbers, symbols, sums, products, powers and functions of them goes to
    :class:`_Linear`. ``plain``: SymPy's syntax with the plain names (``x_dot**2``), for JSON;
    10× faster than ``sympy.sstr`` on the natural 8-chain's reduced form (327 kB)."""

    def __init__(self, plain: bool = False) -> None:
        self.memo: dict[sympy.Basic, tuple[str, int]] = {}
        self.slow = StrPrinter({"order": "none"}) if plain else _Linear()
        self.plain = plain
        self.times = "*" if plain else "⋅"

    def _show(self, e: sympy.Basic) -> tuple[str, int]:
        if e.is_Symbol:
            return (e.name if self.plain else names.text(e.name)), _ATOM
        if e.is_Integer:
            return str(e), (_ATOM if e >= 0 else _MUL)
        if e.is_Rational:
            return f"{e.p}/{e.q}", _MUL
        if e.is_Number:
            text = _FLOATS.doprint(e)
            return text, (_MUL if text.startswith("-") else _ATOM)
        if e.is_Add:
            return self._add(e), _ADD
        if e.is_Mul:
            sign, body, prec = self._mul(e)
            return (f"-{body}", _MUL) if sign else (body, prec)
        if e.is_Pow:
            return self._pow(e)
        if isinstance(e, sympy.Function) and e.args:
            return f"{type(e).__name__}({', '.join(self.show(a)[0] for a in e.args)})", _ATOM
        return self.slow.doprint(e), _ADD

    def _add(self, e: sympy.Add) -> str:
        parts: list[str] = []
        for i, term in enumerate(e.args):
            negative, body = self._term(term)
            if i == 0:
                parts.append(f"-{body}" if negative else body)
            else:
                parts.append(f" - {body}" if negative else f" + {body}")
        return "".join(parts)

    def _term(self, term: sympy.Basic) -> tuple[bool, str]:
        """(whether the term has a negative numeric coefficient, its text without the sign)."""
        if term.is_Mul:
            sign, body, prec = self._mul(term)
            return sign, (body if prec > _ADD else f"({body})")
        if term.is_Number and term.is_negative:
            return True, self.show(-term)[0]
        return False, self.paren(term, _ADD)

    def _mul(self, e: sympy.Mul) -> tuple[bool, str, int]:
        """(negative, text of |e|, precedence) of a product: c⋅a⋅b/(d⋅f)."""
        coeff, rest = e.as_coeff_Mul()
        negative = bool(coeff.is_negative)
        coeff = -coeff if negative else coeff
        num: list[str] = []
        den: list[str] = []
        if coeff.is_Rational:
            if coeff.p != 1:
                num.append(str(coeff.p))
            if coeff.q != 1:
                den.append(str(coeff.q))
        elif coeff != 1:
            num.append(self.paren(coeff, _MUL))
        for f in sympy.Mul.make_args(rest):
            if f.is_Pow and f.exp.is_Rational and f.exp.is_negative:
                inverse = f.base if f.exp == -1 else sympy.Pow(f.base, -f.exp, evaluate=False)
                den.append(self.paren(inverse, _MUL))
            elif f is not sympy.S.One:
                num.append(self.paren(f, _MUL))
        text = self.times.join(num) if num else "1"
        if den:
            text += "/" + (den[0] if len(den) == 1 else f"({self.times.join(den)})")
        return negative, text, _MUL

    def _pow(self, e: sympy.Pow) -> tuple[str, int]:
        base, exp = e.args
        if exp is sympy.S.Half:
            return f"sqrt({self.show(base)[0]})", _ATOM
        if exp.is_Rational and exp.is_negative:
            inverse = base if exp == -1 else sympy.Pow(base, -exp, evaluate=False)
            return f"1/{self.paren(inverse, _MUL)}", _MUL
        if exp.is_Integer and 1 < exp < 10 and not self.plain:
            return self.paren(base, _POW) + str(exp).translate(_SUPERSCRIPTS), _POW
        power = "**" if self.plain else "^"
        return f"{self.paren(base, _POW)}{power}{self.paren(exp, _ATOM - 1)}", _POW


class _FastTex(_OnePass):
    """LaTeX of a long expression (sum, product, power, function, number, symbol) in one pass,
    each distinct subexpression once, names by :func:`lagsim.symbolic.names.latex`: ``sympy.latex``
    took 1.6 s for the natural 8-chain's reduced form (issue 16 §4). Other nodes go to it."""

    def __init__(self) -> None:
        self.memo: dict[sympy.Basic, tuple[str, int]] = {}

    OPEN, CLOSE = r"\left(", r"\right)"

    def _show(self, e: sympy.Basic) -> tuple[str, int]:
        if e.is_Symbol:
            return names.latex(e.name), _ATOM
        if e.is_Rational and not e.is_Integer:
            sign = "- " if e < 0 else ""
            return rf"{sign}\frac{{{abs(e.p)}}}{{{e.q}}}", _MUL
        if e.is_Number:
            text = sympy.latex(e)
            return text, (_MUL if text.startswith("-") else _ATOM)
        if e.is_Add:
            parts = []
            for i, term in enumerate(e.args):
                negative, body = self._term(term)
                parts.append(("- " if negative else "") + body if i == 0
                             else (" - " if negative else " + ") + body)
            return "".join(parts), _ADD
        if e.is_Mul:
            negative, body = self._mul(e)
            return ("- " + body if negative else body), _MUL
        if e.is_Pow:
            base, exp = e.args
            if exp is sympy.S.Half:
                return rf"\sqrt{{{self.show(base)[0]}}}", _ATOM
            if exp.is_Rational and exp.is_negative:
                inverse = base if exp == -1 else sympy.Pow(base, -exp, evaluate=False)
                return rf"\frac{{1}}{{{self.show(inverse)[0]}}}", _MUL
            return f"{self.paren(base, _POW)}^{{{self.show(exp)[0]}}}", _POW
        if isinstance(e, sympy.Function) and e.args and type(e).__name__.isalpha():
            args = ", ".join(self.show(a)[0] for a in e.args)
            return rf"\{type(e).__name__}{{\left({args} \right)}}", _ATOM
        return sympy.latex(e, symbol_names={s: names.latex(s.name) for s in e.free_symbols
                                            if isinstance(s, sympy.Symbol)}), _ADD

    def _term(self, term: sympy.Basic) -> tuple[bool, str]:
        if term.is_Mul:
            return self._mul(term)
        if term.is_Number and term.is_negative:
            return True, self.show(-term)[0]
        return False, self.paren(term, _ADD)

    def _mul(self, e: sympy.Mul) -> tuple[bool, str]:
        coeff, rest = e.as_coeff_Mul()
        negative = bool(coeff.is_negative)
        coeff = -coeff if negative else coeff
        num, den = [], []
        if coeff.is_Rational:
            if coeff.p != 1:
                num.append(str(coeff.p))
            if coeff.q != 1:
                den.append(str(coeff.q))
        elif coeff != 1:
            num.append(self.paren(coeff, _MUL))
        for f in sympy.Mul.make_args(rest):
            if f.is_Pow and f.exp.is_Rational and f.exp.is_negative:
                inverse = f.base if f.exp == -1 else sympy.Pow(f.base, -f.exp, evaluate=False)
                den.append(self.paren(inverse, _MUL) if len(sympy.Mul.make_args(rest)) > 1
                           else self.show(inverse)[0])
            elif f is not sympy.S.One:
                num.append(self.paren(f, _MUL))
        top = " ".join(num) if num else "1"
        if den:
            return negative, rf"\frac{{{top}}}{{{' '.join(den)}}}"
        return negative, top


_MIN_SPLIT_GROUP = 40
"""A parenthesized group shorter than this many characters is never broken across lines."""


def _wrap(text: str, width: int, indent: str = "    ") -> list[str]:
    """``text`` broken before a binary `` + `` or `` - `` so that lines fit ``width`` where they
    can; never inside a function's argument (sin(θ₁ - θ₂)) or a short group ((L + x)⋅(L - x))."""
    close, stack = {}, []
    for i, ch in enumerate(text):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            close[stack.pop()] = i
    pieces, start, open_groups = [], 0, []
    for i, ch in enumerate(text):
        if ch == "(":
            call = i > 0 and text[i - 1].isalnum()
            open_groups.append(call or close.get(i, len(text)) - i < _MIN_SPLIT_GROUP)
        elif ch == ")" and open_groups:
            open_groups.pop()
        elif (ch == " " and i > start and text[i + 1:i + 3] in ("+ ", "- ")
              and not any(open_groups)):
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    lines = [pieces[0]]
    for piece in pieces[1:]:
        if len(lines[-1]) + 1 + len(piece) > width:
            lines.append(indent + piece)
        else:
            lines[-1] += " " + piece
    return lines


def _lines(value: sympy.Basic, width: int) -> str:
    """A long item line by line: matrix entries by index (zeros left out), equations by row;
    width 0: each on one line."""
    _linear = _Fast()
    width = width or 10**9
    if isinstance(value, sympy.Eq):
        lhs, rhs = value.lhs, value.rhs
        if isinstance(lhs, sympy.MatrixExpr) and not isinstance(lhs, sympy.MatrixBase):
            lhs = lhs.doit()
        if isinstance(lhs, sympy.MatrixBase):
            out = []
            for i, (a, b) in enumerate(zip(lhs, rhs), 1):
                out += _wrap(f"[{i}] {_linear(a)} = {_linear(b)}", width)
            return "\n".join(out)
        return "\n".join(_wrap(f"{_linear(lhs)} = {_linear(rhs)}", width))
    if isinstance(value, sympy.MatrixBase):
        out = []
        for i in range(value.rows):
            for j in range(value.cols):
                if value[i, j] != 0:
                    index = f"[{i + 1}]" if value.cols == 1 else f"[{i + 1}, {j + 1}]"
                    out += _wrap(f"{index} {_linear(value[i, j])}", width)
        shape = f"{value.rows}×{value.cols}"
        return "\n".join([f"({shape}; entries not listed are 0)", *out])
    return "\n".join(_wrap(_linear(value), width))


def _text(forms: list[Form], model: Model, width: int) -> str:
    coords = ", ".join(names.text(c) for c in model.coordinates)
    params = ", ".join(f"{k} = {v:g}" for k, v in model.parameters.items()
                       if k not in model.inputs)
    inputs = ", ".join(f"{k} = {model.parameters[k]:g}" for k in model.inputs)
    lines = [f"{model.name}: coordinates {coords}" + (f"; parameters {params}" if params else "")
             + (f"; inputs {inputs}" if inputs else "")]
    printed: dict[tuple[str, sympy.Basic], str] = {}
    for form in forms:
        if not form.items and form.notes:
            lines += ["", f"{form.title} [{form.name}]: {WORDING.get().say(form.notes[0])}"]
            continue
        lines += ["", f"{form.title} [{form.name}]: {form.formula}",
                  f"  (source: {form.citation}; see {REFERENCES})"]
        lines += [f"warning: {WORDING.get().say(w)}" for w in form.warnings]
        lines += [f"note: {WORDING.get().say(n)}" for n in form.notes]
        for item in form.items:
            label = _text_label(item)
            first = printed.setdefault((item.label, item.value), form.name)
            if first != form.name:
                lines += ["", f"{label}: as in [{first}] above"]
            elif isinstance(item.value, sympy.MatrixBase) and all(e == 0 for e in item.value):
                lines += ["", f"{label}: 0 ({item.value.rows}×{item.value.cols})"]
            else:
                lines += ["", f"{label}:", _pretty(item.value, width)]
    return "\n".join(lines) + "\n"


def _text_label(item: Item) -> str:
    return names.text(item.label) if item.label.isidentifier() else item.label


def _latex(forms: list[Form], model: Model) -> str:
    fast = _FastTex()

    def tex(value: sympy.Basic) -> str:
        if _large(value) and isinstance(value, sympy.Expr) and not isinstance(
                value, sympy.MatrixExpr):
            return fast(value)
        order = "none" if _large(value) else None
        shown = {s: names.latex(s.name) for s in value.free_symbols if isinstance(s, sympy.Symbol)}
        return sympy.latex(value, symbol_names=shown, mat_str="bmatrix", mat_delim="",
                           order=order)

    out = [f"% {model.name}: generated by lagsim derive"]
    for form in forms:
        out += [f"% {form.title} [{form.name}]: {form.formula}",
                f"% source: {form.citation}; see {REFERENCES}"]
        out += [f"% warning: {WORDING.get().say(w)}" for w in form.warnings]
        out += [f"% note: {WORDING.get().say(n)}" for n in form.notes]
        if form.formula_latex:
            out.append(rf"\[ {form.formula_latex} \]")
        rows = []
        for item in form.items:
            label = item.tex or rf"\text{{{item.label}}}"
            if isinstance(item.value, sympy.Eq):
                rows.append(f"% {item.label}\n  {tex(item.value.lhs)} &= {tex(item.value.rhs)}")
            else:
                rows.append(f"% {item.label}\n  {label} &= {tex(item.value)}")
        if rows:
            out += [r"\begin{align}", " \\\\\n".join(rows), r"\end{align}"]
    return "\n".join(out) + "\n"


_PLAIN = _Fast(plain=True)


@functools.lru_cache(maxsize=4096)
def _s(expr: sympy.Basic) -> str:
    """The JSON string of an expression; cached, since forms repeat expressions (M in matrix,
    dae and index1; each equation in ``items`` and ``equations``)."""
    return _PLAIN(expr) if _large(expr) else str(expr)


def _rows(matrix: sympy.MatrixBase) -> list[list[str]]:
    return [[_s(matrix[i, j]) for j in range(matrix.cols)] for i in range(matrix.rows)]


def _equation_strings(eq: sympy.Eq) -> list[str]:
    """``lhs = rhs``, one string per component when the sides are matrices."""
    lhs, rhs = eq.lhs, eq.rhs
    if isinstance(lhs, sympy.MatrixExpr) and not isinstance(lhs, sympy.MatrixBase):
        lhs = lhs.doit()
    if isinstance(lhs, sympy.MatrixBase):
        return [f"{_s(a)} = {_s(b)}" for a, b in zip(lhs, rhs)]
    return [f"{_s(lhs)} = {_s(rhs)}"]


def _item(item: Item) -> dict:
    value = item.value
    if isinstance(value, sympy.Eq):
        strings = _equation_strings(value)
        if len(strings) == 1 and not isinstance(value.lhs, (sympy.MatrixBase, sympy.MatrixExpr)):
            return {"label": item.label, "kind": "equation", "value": strings[0]}
        return {"label": item.label, "kind": "equations", "value": strings}
    if isinstance(value, sympy.MatrixBase):
        return {"label": item.label, "kind": "matrix", "value": _rows(value)}
    return {"label": item.label, "kind": "expression", "value": _s(value)}


def _form(form: Form) -> dict:
    equations = [s for eq in form.equations for s in _equation_strings(eq)]
    return {
        "form": form.name, "title": form.title, "formula": form.formula,
        "citation": form.citation, "warnings": [WORDING.get().say(w) for w in form.warnings],
        "notes": [WORDING.get().say(n) for n in form.notes],
        "items": [_item(i) for i in form.items], "equations": equations,
    }


def _document(forms: list[Form], model: Model) -> dict:
    """The JSON document: the model, then the (first) form; all forms under ``forms``."""
    M = to_sympy(model.mass_matrix)
    symbols = [*model.coordinates, *(str(v) for v in model.qd), *(str(a) for a in model.qdd),
               *model.parameters, *(c.multiplier for c in model.constraints), "t"]
    doc = {
        "name": model.name,
        "description": public_text(model.description),
        "coordinates": list(model.coordinates),
        "velocities": [str(v) for v in model.qd],
        "parameters": dict(model.parameters),
        **({"inputs": list(model.inputs)} if model.inputs else {}),
        "symbols": symbols,
        "lagrangian": _s(cheap(model.lagrangian)),
        "kinetic": _s(cheap(model.kinetic)),
        "potential": _s(cheap(model.potential)),
        "energy": _s(cheap(model.energy)),
        "mass_matrix": _rows(M),
        "forcing": [_s(e) for e in to_sympy(model.forcing)],
        "tau": [_s(e) for e in to_sympy(model.tau)],
        "constraints": [
            {"name": c.name, "kind": c.kind, "multiplier": c.multiplier,
             "expression": _s(to_sympy(c.expression)),
             "A": [_s(to_sympy(a)) for a in c.row], "b": _s(to_sympy(c.rhs))}
            for c in model.constraints
        ],
    }
    parts = [_form(f) for f in forms]
    if parts:
        doc.update(parts[0])
    if len(parts) > 1:
        doc["forms"] = parts
    return doc
