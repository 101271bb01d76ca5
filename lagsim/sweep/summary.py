"""``--summary EXPR``: one number per run from the columns of its trajectory (issue 12).

An expression is written in the run's CSV columns (``t``, each coordinate, ``<q>_dot``,
``lambda_<c>``, ``residual_<c>``, ``energy``), the system's parameters, the constants ``pi`` and
``E``, the elementwise functions of system files (``sin`` … ``sqrt``, ``abs``) and the
reductions over the samples ``max``, ``min``, ``mean``, ``final`` and ``first``: for example
``max(abs(theta))``, or ``2*final(t)`` with ``--stop-when theta_dot`` for a period. A column
outside every reduction would be one value per sample, not per run: that is refused when the
expression is read, before any run. Parsing walks Python's AST with a whitelist, as
:mod:`lagsim.spec.expressions` does: nothing is evaluated by Python.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from lagsim.errors import InputError, Location
from lagsim.records import record
from lagsim.spec.expressions import suggest

ELEMENTWISE: Mapping[str, Callable[..., Any]] = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs, "Abs": np.abs,
    "sign": np.sign,
}


def _reduce(function: Callable[[np.ndarray], Any]) -> Callable[[Any], float]:
    def reduced(values: Any) -> float:
        array = np.atleast_1d(np.asarray(values, dtype=float))
        return float(function(array)) if array.size else float("nan")
    return reduced


REDUCTIONS: Mapping[str, Callable[[Any], float]] = {
    "max": _reduce(np.max), "min": _reduce(np.min), "mean": _reduce(np.mean),
    "final": _reduce(lambda a: a[-1]), "first": _reduce(lambda a: a[0]),
}
CONSTANTS: Mapping[str, float] = {"pi": float(np.pi), "E": float(np.e)}
_BINARY: Mapping[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide,
    ast.Pow: np.power,
}
_UNARY: Mapping[type, Callable[[Any], Any]] = {ast.USub: np.negative, ast.UAdd: np.positive}
MAX_CHARS = 2000


@record
class Summary:
    """One ``--summary``: the column ``name`` of the sweep's table and its expression ``text``."""

    name: str
    text: str

    def evaluate(self, columns: Mapping[str, np.ndarray], parameters: Mapping[str, float]
                 ) -> float:
        """The value for one run: ``columns`` are its trajectory's columns by CSV name."""
        tree = ast.parse(self.text.replace("^", "**"), mode="eval").body
        return float(_evaluate(tree, columns, parameters))


def parse_summary(raw: str, columns: Sequence[str], parameters: Sequence[str],
                  taken: Sequence[str] = ()) -> Summary:
    """Read ``NAME=EXPR`` or ``EXPR`` (named by its own text); check every name it uses against
    the trajectory's ``columns`` and the ``parameters``, and that it reduces to one number.
    ``taken`` are the sweep table's other column names. Errors are :class:`InputError` at
    ``--summary``."""
    where = Location("--summary")
    name, sep, text = raw.partition("=")
    if not sep:
        name, text = "".join(raw.split()), raw
    name, text = name.strip(), text.strip()
    if sep and not name.isidentifier():
        raise InputError(f"{raw!r}: the name before '=' must be a name such as period (letters, "
                         "digits, _)", where)
    if not text:
        raise InputError(f"{raw!r} has no expression; write e.g. --summary "
                         "'amplitude=max(abs(theta))'", where)
    if len(text) > MAX_CHARS:
        raise InputError(f"the expression is longer than {MAX_CHARS} characters", where)
    if "," in name or not name:
        raise InputError(f"{raw!r} cannot name a CSV column (it has a comma); name it: "
                         f"--summary 'NAME={text}'", where)
    if name in taken:
        raise InputError(f"the sweep's table has a column {name!r} already; name the summary "
                         f"otherwise: --summary 'OTHER={text}'", where)
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval").body
    except SyntaxError as exc:
        raise InputError(f"{text!r} does not parse ({exc.msg}); write e.g. max(abs(theta))",
                         where) from None
    per_sample = _check(tree, text, set(columns), set(parameters), where)
    if per_sample:
        raise InputError(f"{text!r} has one value per sample, not one per run; reduce it with "
                         f"{', '.join(REDUCTIONS)}, e.g. max({text})", where)
    return Summary(name, text)


def _check(node: ast.AST, text: str, columns: set[str], parameters: set[str],
           where: Location) -> bool:
    """Whether ``node`` has one value per sample; an :class:`InputError` for what is not
    allowed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return False
    if isinstance(node, ast.Name):
        if node.id in columns:
            return True
        if node.id in parameters or node.id in CONSTANTS:
            return False
        known = sorted(columns | parameters)
        raise InputError(f"{text!r} uses {node.id!r}, which is neither a column of the run nor "
                         f"a parameter{suggest(node.id, known)}; the columns are "
                         f"{', '.join(sorted(columns))}", where)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _check(node.left, text, columns, parameters, where)
        return _check(node.right, text, columns, parameters, where) or left
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check(node.operand, text, columns, parameters, where)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name = node.func.id
        arity = 2 if name == "atan2" else 1
        if name not in ELEMENTWISE and name not in REDUCTIONS:
            raise InputError(f"{text!r} calls {name!r}, which is not a known function"
                             f"{suggest(name, (*REDUCTIONS, *ELEMENTWISE))}; the reductions are "
                             f"{', '.join(REDUCTIONS)}, the functions "
                             f"{', '.join(ELEMENTWISE)}", where)
        if len(node.args) != arity:
            raise InputError(f"{text!r}: {name} takes {arity} argument{'s' * (arity > 1)}",
                             where)
        inner = [_check(a, text, columns, parameters, where) for a in node.args]
        return False if name in REDUCTIONS else any(inner)
    raise InputError(f"{text!r}: only numbers, names, + - * / ** and function calls are allowed "
                     "in a summary", where)


def _evaluate(node: ast.AST, columns: Mapping[str, np.ndarray],
              parameters: Mapping[str, float]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id in columns:
            return columns[node.id]
        if node.id in parameters:
            return parameters[node.id]
        return CONSTANTS[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_evaluate(node.left, columns, parameters),
                                      _evaluate(node.right, columns, parameters))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, columns, parameters))
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    args = [_evaluate(a, columns, parameters) for a in node.args]
    name = node.func.id
    return REDUCTIONS[name](*args) if name in REDUCTIONS else ELEMENTWISE[name](*args)
