"""Units of an exported model's variables (issue 25): the file's ``units:`` texts read as SI
units (FMI 2.0 §2.2.2 and FMI 3.0 §2.4.3 ``<Unit>``/``<BaseUnit>``: exponents of kg, m, s, A,
K, mol, cd, rad and a factor), and the units of the outputs found by dimensional analysis of
their expressions: a mass position's and the energy's from the symbols they are made of, a
multiplier's as energy over the constraint's residual times time (λ·w·dt is work: the virtual
work of the constraint force, seed 001 §10.7). A text that is not a known unit is its own
dimension (it stays a name, without a ``<BaseUnit>``); a sum whose terms disagree, or any part
whose unit is unknown, leaves the output without a unit rather than guessing one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction

import symengine as se

from lagsim import naming
from lagsim.records import record
from lagsim.symbolic.model import Model

BASES = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")
"""The exponents FMI's ``<BaseUnit>`` takes, in its order."""
_SI: dict[str, tuple[dict[str, int], float]] = {
    "kg": ({"kg": 1}, 1.0), "g": ({"kg": 1}, 1e-3), "m": ({"m": 1}, 1.0),
    "s": ({"s": 1}, 1.0), "min": ({"s": 1}, 60.0), "h": ({"s": 1}, 3600.0),
    "A": ({"A": 1}, 1.0), "K": ({"K": 1}, 1.0), "mol": ({"mol": 1}, 1.0), "cd": ({"cd": 1}, 1.0),
    "rad": ({"rad": 1}, 1.0), "deg": ({"rad": 1}, math.pi / 180.0),
    "N": ({"kg": 1, "m": 1, "s": -2}, 1.0), "J": ({"kg": 1, "m": 2, "s": -2}, 1.0),
    "W": ({"kg": 1, "m": 2, "s": -3}, 1.0), "Pa": ({"kg": 1, "m": -1, "s": -2}, 1.0),
    "Hz": ({"s": -1}, 1.0)}
_PREFIXES = {"G": 1e9, "M": 1e6, "k": 1e3, "c": 1e-2, "m": 1e-3, "u": 1e-6, "µ": 1e-6,
             "n": 1e-9}
_TOKEN = re.compile(r"^([A-Za-zµ]+)(?:\^|\*\*)?(-?\d+)?$")


@record
class Dimension:
    """A unit as exponents of named dimensions (the SI bases, or an unknown unit's own text)
    and a factor to the SI unit of those exponents. ``rad`` is kept for ``<BaseUnit>`` but an
    angle counts as a number in sums and in functions (:meth:`plain`)."""

    exponents: tuple[tuple[str, Fraction], ...]
    factor: float = 1.0

    @staticmethod
    def of(exponents: Mapping[str, Fraction | int], factor: float = 1.0) -> Dimension:
        return Dimension(tuple(sorted((k, Fraction(v)) for k, v in exponents.items() if v)),
                         factor)

    def times(self, other: Dimension, power: Fraction = Fraction(1)) -> Dimension:
        out = dict(self.exponents)
        for k, v in other.exponents:
            out[k] = out.get(k, Fraction(0)) + v * power
        return Dimension.of(out, self.factor * other.factor ** float(power))

    def plain(self) -> Dimension:
        """This dimension with angles counted as numbers."""
        return Dimension.of({k: v for k, v in self.exponents if k != "rad"}, self.factor)

    def base_unit(self) -> dict[str, str] | None:
        """FMI's ``<BaseUnit>`` attributes, or None when an exponent is not an SI base or not
        an integer."""
        exps = dict(self.exponents)
        if any(k not in BASES or v.denominator != 1 for k, v in exps.items()):
            return None
        attrs = {k: str(int(exps[k])) for k in BASES if k in exps}
        if self.factor != 1.0:
            attrs["factor"] = repr(self.factor)
        return attrs

    def text(self) -> str:
        """The unit in Modelica's syntax (``kg.m2/s2``); a factor other than 1 has no text
        here (the caller names such a unit by the file's own text)."""
        up = [f"{k}{_power(v)}" for k, v in self.exponents if v > 0]
        down = [f"{k}{_power(-v)}" for k, v in self.exponents if v < 0]
        return (".".join(up) or "1") + (f"/{'.'.join(down)}" if down else "")


def _power(v: Fraction) -> str:
    return "" if v == 1 else str(v)


def parse(text: str) -> Dimension:
    """The dimension of a unit text: ``.``, ``*`` or spaces multiply, ``/`` divides (``a/b/c``
    is a over b·c), an exponent follows a name (``m2``, ``s^-2``, ``m**2``), SI prefixes apply
    to the SI units; any other text is a dimension of its own."""
    parts = text.strip().split("/")
    out = Dimension.of({})
    for k, part in enumerate(parts):
        tokens = [t for t in re.split(r"[.*\s·]+", part.strip()) if t]
        if not tokens or (tokens == ["1"] and k == 0):
            if tokens == ["1"]:
                continue
            return Dimension.of({text: 1})
        for token in tokens:
            match = _TOKEN.match(token)
            found = _lookup(match.group(1)) if match else None
            if found is None:
                return Dimension.of({text: 1})
            power = Fraction(int(match.group(2) or 1)) if match else Fraction(1)
            out = out.times(found, power if k == 0 else -power)
    return out


def _lookup(name: str) -> Dimension | None:
    if name in _SI:
        exps, factor = _SI[name]
        return Dimension.of(exps, factor)
    if len(name) > 1 and name[0] in _PREFIXES and name[1:] in _SI and name[1:] != "kg":
        exps, factor = _SI[name[1:]]
        return Dimension.of(exps, factor * _PREFIXES[name[0]])
    return None


def _number(d: Dimension) -> bool:
    """Whether ``d`` is a pure number (an angle in radians counts as one)."""
    return not d.plain().exponents and d.plain().factor == 1.0


_FUNCTIONS = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log")


def dimension(expr: se.Basic, table: Mapping[str, Dimension]) -> Dimension | None:
    """The dimension of ``expr`` from its symbols' (``table``), or None when a symbol has none,
    the terms of a sum disagree, or a function's argument is not a number."""
    if expr.is_Number or not expr.free_symbols:
        return Dimension.of({})
    if expr.is_Symbol:
        return table.get(str(expr))
    if expr.is_Add:
        dims = [dimension(a, table) for a in expr.args]
        if any(d is None for d in dims):
            return None
        plain = {d.plain() for d in dims if d is not None}
        return dims[0] if len(plain) == 1 else None
    if expr.is_Mul:
        out: Dimension | None = Dimension.of({})
        for a in expr.args:
            d = dimension(a, table)
            out = None if d is None or out is None else out.times(d)
        return out
    if expr.is_Pow:
        base, power = expr.args
        d = dimension(base, table)
        if d is None:
            return None
        if power.is_Number and power.is_rational:
            return Dimension.of({}).times(d, Fraction(str(power)))
        return Dimension.of({}) if _number(d) else None
    name = type(expr).__name__.lower()
    if name in _FUNCTIONS and len(expr.args) == 1:
        d = dimension(expr.args[0], table)
        return Dimension.of({}) if d is not None and _number(d) else None
    if name == "abs" and len(expr.args) == 1:
        return dimension(expr.args[0], table)
    return None


def output_units(units: Mapping[str, str], model: Model,
                 positions: tuple[tuple[str, tuple[se.Basic, ...]], ...]) -> dict[str, str]:
    """The unit of each output a dimensional analysis finds (mass positions ``<mass>_<axis>``,
    ``lambda_<c>``, ``energy``), angles counted as numbers (an energy is ``kg.m2/s2`` with
    angular velocities too), named by the file's text where a file unit has that dimension,
    else in Modelica's syntax (SI units only); outputs without one are left out."""
    texts = {name: parse(text) for name, text in units.items()}
    time = texts.get(naming.TIME)
    table = dict(texts)
    if time is not None:
        table.update({naming.velocity(q): texts[q].times(time, Fraction(-1))
                      for q in model.coordinates if q in texts})
    names = {d.plain(): text for text, d in ((t, parse(t)) for t in units.values())
             if not _number(d)}

    def name(found: Dimension | None) -> str:
        if found is None or _number(found):
            return ""
        d = found.plain()
        if d in names:
            return names[d]
        return d.text() if d.factor == 1.0 and d.base_unit() is not None else ""

    axes = ("x", "y", "z")
    out = {f"{mass}_{axes[k]}": name(dimension(se.sympify(x), table))
           for mass, r in positions for k, x in enumerate(r)}
    energy = dimension(se.sympify(model.energy), table)
    out["energy"] = name(energy)
    for c in model.constraints:
        terms = [c.offset, *(a * se.Symbol(naming.velocity(q))
                             for a, q in zip(c.row, model.coordinates))]
        dims = [dimension(se.sympify(w), table) for w in terms if w != 0]
        residual = dims[0] if dims and all(d is not None for d in dims) else None
        out[naming.multiplier(c.name)] = name(
            None if energy is None or residual is None or time is None
            else energy.times(residual.times(time), Fraction(-1)))
    return {k: v for k, v in out.items() if v}
