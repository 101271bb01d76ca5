"""The safe expression parser (lagsim.spec.expressions): values, columns, and what it refuses.

Expressions are SymPy syntax with ``^`` as power, the functions and constants listed in issue 2,
and only the names the caller declares; nothing is evaluated by Python. Each test checks a value
(a closed form, a number to a stated tolerance) or the exact text and column of an error.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

from lagsim.errors import InputError, Location
from lagsim.spec.expressions import ARITY, CONSTANTS, FUNCTIONS, Source, parse_expression, suggest
from lagsim.spec.system import parse_spec

x, y, m = sympy.symbols("x y m")
NAMES = {"x": x, "y": y, "m": m, "x_dot": sympy.Symbol("x_dot")}
SRC = Source(Location("e.yaml", 3, 10))
FUNCS = "sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, exp, log, sqrt, Abs, sign"
PLAIN = f"only numbers, declared names, + - * / ** ^ and the functions {FUNCS}"
DECLARE = ("declare it under 'parameters' or 'coordinates' (velocities are written "
           "<coordinate>_dot, time is t)")


def parse(text, names=NAMES, source=SRC, what="expression"):
    return parse_expression(text, names, source, what)


def error(text, names=NAMES, source=SRC) -> InputError:
    with pytest.raises(InputError) as info:
        parse(text, names, source)
    return info.value


def test_function_table_is_the_issue_list() -> None:
    assert list(FUNCTIONS) == FUNCS.split(", ")
    assert {k for k, v in ARITY.items() if v == 2} == {"atan2"}
    assert set(CONSTANTS) == {"pi", "E"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sin(0.3)", math.sin(0.3)), ("cos(0.3)", math.cos(0.3)), ("tan(0.3)", math.tan(0.3)),
        ("asin(0.3)", math.asin(0.3)), ("acos(0.3)", math.acos(0.3)),
        ("atan(0.3)", math.atan(0.3)), ("atan2(-1, -2)", math.atan2(-1, -2)),
        ("sinh(0.3)", math.sinh(0.3)), ("cosh(0.3)", math.cosh(0.3)),
        ("tanh(0.3)", math.tanh(0.3)), ("exp(0.3)", math.exp(0.3)), ("log(0.3)", math.log(0.3)),
        ("sqrt(0.3)", math.sqrt(0.3)), ("Abs(-0.3)", 0.3), ("sign(-0.3)", -1.0),
        ("pi", math.pi), ("E", math.e), ("2**10", 1024.0), ("2^10", 1024.0),
        ("-(3)**2", -9.0), ("1_000 + 1e-3", 1000.001), ("7/2", 3.5),
    ],
)
def test_values(text: str, expected: float) -> None:
    assert float(parse(text)) == pytest.approx(expected, rel=1e-15, abs=1e-15)


def test_integers_stay_exact() -> None:
    assert parse("1/2") == sympy.Rational(1, 2)
    assert parse("1/2*m*x_dot**2") == m * sympy.Symbol("x_dot") ** 2 / 2
    assert parse(3) == sympy.Integer(3) and parse(2.5) == sympy.Float(2.5)


def test_declared_names_take_their_values() -> None:
    """A declared E or I is whatever the caller maps it to; an undeclared E is Euler's number."""
    I = sympy.Symbol("I")
    assert parse("E*I", {"E": sympy.Float(2.0), "I": I}) == 2.0 * I
    assert parse("E", {}) == sympy.E
    assert not parse("I**2", {"I": I}).has(sympy.I)
    assert parse("I**2", {"I": I}).subs(I, 3) == 9


def test_caret_is_power() -> None:
    assert parse("x^2") == x**2
    assert parse("(x + y)^(1/2)") == sympy.sqrt(x + y)


@pytest.mark.parametrize(("text", "expected"), [
    ("1/2*m*x^2", m * x**2 / 2),
    ("-x^2", -x**2),
    ("2*x^2 + y", 2 * x**2 + y),
    ("2^3^2", sympy.Integer(512)),
])
def test_caret_binds_like_power(text: str, expected: sympy.Expr) -> None:
    assert sympy.expand(parse(text) - expected) == 0


def test_caret_error_columns_refer_to_the_text_as_written() -> None:
    err = error("x^2 + foo")
    assert err.location == Location("e.yaml", 3, 16)
    assert err.message == f"expression 'x^2 + foo': unknown symbol 'foo'; {DECLARE}"


@pytest.mark.parametrize(
    ("text", "col", "message"),
    [
        ("x + foo", 14, f"expression 'x + foo': unknown symbol 'foo'; {DECLARE}"),
        ("  sin(xx)", 16,
         f"expression 'sin(xx)': unknown symbol 'xx' (did you mean 'x'?); {DECLARE}"),
        ("x_dto", 10,
         f"expression 'x_dto': unknown symbol 'x_dto' (did you mean 'x_dot'?); {DECLARE}"),
        ("x +* 2", 13,
         "expression 'x +* 2' does not parse (invalid syntax); use SymPy syntax such as "
         "'1/2*m*x_dot**2'"),
        ("sin(x", 13,
         "expression 'sin(x' does not parse ('(' was never closed); use SymPy syntax such as "
         "'1/2*m*x_dot**2'"),
        ("x; y", 11,
         "expression 'x; y' does not parse (invalid syntax); use SymPy syntax such as "
         "'1/2*m*x_dot**2'"),
        ("", 10, "expression is empty: write an expression such as 'm*g*y'"),
        ("   ", 10, "expression is empty: write an expression such as 'm*g*y'"),
        ("1j", 10, "expression '1j': 1j is not a number"),
        ("True", 10, "expression 'True': True is not a number"),
        ("None", 10, "expression 'None': None is not a number"),
        ("'x'", 10, "expression \"'x'\": 'x' is not a number"),
        ("x % 2", 10, f"expression 'x % 2': BinOp is not allowed; {PLAIN}"),
        ("x // 2", 10, f"expression 'x // 2': BinOp is not allowed; {PLAIN}"),
        ("x if y else 1", 10, f"expression 'x if y else 1': IfExp is not allowed; {PLAIN}"),
        ("[x for x in ()]", 10, f"expression '[x for x in ()]': ListComp is not allowed; {PLAIN}"),
        ("(y := 1)", 11, f"expression '(y := 1)': NamedExpr is not allowed; {PLAIN}"),
        ("f'{x}'", 10, f"expression \"f'{{x}}'\": JoinedStr is not allowed; {PLAIN}"),
        ("x.real", 10, f"expression 'x.real': Attribute is not allowed; {PLAIN}"),
        ("().__class__", 10, f"expression '().__class__': Attribute is not allowed; {PLAIN}"),
        ("x[0]", 10, f"expression 'x[0]': Subscript is not allowed; {PLAIN}"),
        ("lambda: x", 10, f"expression 'lambda: x': Lambda is not allowed; {PLAIN}"),
        ("x < y", 10, f"expression 'x < y': Compare is not allowed; {PLAIN}"),
        ("eval('1')", 10,
         f"expression \"eval('1')\": 'eval' is not a known function; the functions are {FUNCS}"),
        ("globals()", 10,
         f"expression 'globals()': 'globals' is not a known function; the functions are {FUNCS}"),
        ("x.conjugate()", 10,
         f"expression 'x.conjugate()': 'x.conjugate' is not a known function; the functions "
         f"are {FUNCS}"),
        ("cosh(x, y)", 10, "expression 'cosh(x, y)': cosh() takes 1 argument, got 2"),
        ("atan2(x)", 10, "expression 'atan2(x)': atan2() takes 2 arguments, got 1"),
        ("exp(x=1)", 10, "expression 'exp(x=1)': exp() takes no keyword arguments"),
        ("exp(*x)", 14, f"expression 'exp(*x)': Starred is not allowed; {PLAIN}"),
        ("log", 10, "expression 'log': 'log' is a function: call it, as in 'log(x)'"),
        ("2*cos(x) + Sin(y)", 21,
         f"expression '2*cos(x) + Sin(y)': 'Sin' is not a known function (did you mean "
         f"'sin'?); the functions are {FUNCS}"),
    ],
)
def test_errors(text: str, col: int, message: str) -> None:
    err = error(text)
    assert err.message == message
    assert err.location == Location("e.yaml", 3, col)
    assert str(err) == f"e.yaml:3:{col}: {message}"


def test_wrong_python_types() -> None:
    for value, shown in ((True, "not True"), ([1, 2], "not a list"), ({"a": 1}, "not a dict")):
        err = error(value)
        assert err.message == f"expression must be a number or an expression string, {shown}"
        assert err.location == SRC.location


def test_what_names_the_value() -> None:
    with pytest.raises(InputError) as info:
        parse("q", what="'potential'")
    assert info.value.message.startswith("'potential' 'q': unknown symbol 'q'")


def test_source_columns() -> None:
    quoted = Source(Location("f", 2, 10), column_offset=1)
    assert quoted.at(0) == Location("f", 2, 11) and quoted.at(4) == Location("f", 2, 15)
    assert quoted.at(None) == Location("f", 2, 10)
    assert Source(Location("f")).at(3) == Location("f")
    with pytest.raises(InputError) as info:
        parse_expression("x + zz", NAMES, quoted)
    assert info.value.location == Location("f", 2, 15)


def test_suggest() -> None:
    assert suggest("thta", ["theta", "phi"]) == " (did you mean 'theta'?)"
    assert suggest("q", ["theta", "phi"]) == ""
    assert suggest("x", []) == ""


@pytest.mark.parametrize("text", [
    "__import__('os').system('touch {marker}')",
    "exp(__import__('os').system('touch {marker}'))",
    "eval(\"__import__('os').system('touch {marker}')\")",
    "(lambda: __import__('os').system('touch {marker}'))()",
    "[__import__('os').system('touch {marker}') for _ in (1,)]",
])
def test_nothing_is_evaluated(text: str, tmp_path: Path) -> None:
    marker = tmp_path / "hacked"
    with pytest.raises(InputError):
        parse(text.format(marker=marker))
    assert not marker.exists()


def test_huge_power_is_refused_quickly() -> None:
    code = (
        "from lagsim.spec.expressions import parse_expression, Source\n"
        "from lagsim.errors import InputError, Location\n"
        "for text in ('9**9**9', '(10**999)**9999'):\n"
        "    try:\n"
        "        parse_expression(text, {}, Source(Location('e', 1, 1)))\n"
        "    except InputError as e:\n"
        "        print(e)\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=5).stdout
    except subprocess.TimeoutExpired:
        pytest.fail("parsing 9**9**9 took more than 5 s")
    tail = ("is too large to compute exactly; write a decimal base (such as 2.0 instead of 2) for "
            "a floating-point value")
    assert out.splitlines() == [
        f"e:1:1: expression '9**9**9': the number 9 ** 9 ** 9 {tail}",
        "e:1:2: expression '(10**999)**9999': 10**999 is too large for a float (at most "
        "1.798e+308); numbers must be finite",
    ]


def test_moderate_powers_stay_exact() -> None:
    assert parse("2**1000") == sympy.Integer(2) ** 1000
    assert float(parse("9.0**9**2")) == pytest.approx(9.0**81, rel=1e-15)
    assert parse("(-1)**(10**20)") == 1 and parse("0**10**100") == 0


def test_a_decimal_power_beyond_double_range_is_not_a_finite_parameter() -> None:
    """Decimal numbers are doubles: 9.0**9**9 overflows, and a parameter must be finite."""
    with pytest.raises(InputError, match="is inf, not a finite number"):
        parse_spec("parameters: {big: 9.0**9**9}\ncoordinates: [x]\nkinetic: x_dot**2\n")


# --- chains, nesting and Unicode names (issue 15) -------------------------------------------------

def test_a_long_sum_is_exact() -> None:
    """Σ_{k=1}^{2000} k·x = 2001000·x, built as one chain (a left-deep tree 2000 levels deep)."""
    text = " + ".join(f"{k}*x" for k in range(1, 2001))
    assert sympy.sympify(parse(text)) == 2001000 * x


def test_mixed_chains_keep_their_signs_and_order() -> None:
    assert sympy.sympify(parse("x - y + 3 - x*2 - -y")) == 3 - x
    assert sympy.sympify(parse("x/2/3*4")) == sympy.Rational(2, 3) * x
    assert sympy.sympify(parse("1 - (x - y) - 2^2")) == -3 - x + y
    assert sympy.sympify(parse("2/x/y")) == 2 / (x * y)


def test_nesting_counts_levels_of_the_tree_with_chains_as_one() -> None:
    """``x*(1 + x*(1 + ...))`` alternates products and sums: two levels per parenthesis, while a
    chain of any length is one. The polynomial built within the limit evaluates exactly."""
    from lagsim.spec.limits import MAX_NESTING

    def horner(k: int) -> str:
        return "x" + "*(1 + x" * k + ")" * k

    k = (MAX_NESTING - 1) // 2
    assert sympy.sympify(parse(horner(k))).subs(x, 2) == sum(2**j for j in range(1, k + 2))
    err = error(horner(k + 1))
    assert err.message.startswith(f"expression: {2 * k + 3} levels, past lagsim's expression "
                                  f"nesting limit of {MAX_NESTING}")
    assert sympy.sympify(parse(" - ".join(["x"] * 2000))) == -1998 * x


def test_names_in_expressions_are_nfkc() -> None:
    """The micro sign, the mathematical italic x and a fullwidth name each mean the declared
    NFKC name (PEP 3131)."""
    mu = sympy.Symbol("\u03bc")
    names = {"\u03bc": mu, "x": x, "rod": sympy.Symbol("rod")}
    assert sympy.sympify(parse("\u00b5*2", names)) == 2 * mu
    assert sympy.sympify(parse("\U0001d465 + \u03bc", names)) == x + mu
    assert sympy.sympify(parse("\uff52\uff4f\uff44", names)) == sympy.Symbol("rod")


@pytest.mark.parametrize(("text", "col", "message"), [
    ("x/0", 0, "x/0 is not a finite number (a division by zero, or a logarithm of 0)"),
    ("1 + 0**-1", 4, "0**-1 is not a finite number (a division by zero, or a logarithm of 0)"),
    ("x*log(-1)", 2, "log(-1) is 0 + 3.14159i, not a real number"),
    ("(-8)^(1/3)*x", 0, "(-8)**(1/3) is 1 + 1.73205i, not a real number"),
    ("x + 1e999", 4, "the number 1e999 is inf, not a finite number"),
])
def test_numbers_that_are_not_finite_and_real(text: str, col: int, message: str) -> None:
    import symengine

    err = error(text, {"x": symengine.Symbol("x")})
    assert err.message == f"expression {text!r}: {message}"
    assert err.location == Location("e.yaml", 3, 10 + col)


def test_exponent_limit_applies_to_symbolic_bases_only() -> None:
    from lagsim.spec.limits import MAX_EXPONENT

    assert sympy.sympify(parse(f"(x + 1)**{MAX_EXPONENT}")) == (x + 1)**MAX_EXPONENT
    assert sympy.sympify(parse(f"(x + 1)**-{MAX_EXPONENT}")) == (x + 1)**-MAX_EXPONENT
    assert sympy.sympify(parse("2**1000")) == 2**1000
    assert float(parse("pi**300")) == pytest.approx(math.pi**300, rel=1e-12)
    for text in (f"(x + 1)**{MAX_EXPONENT + 1}", f"x^-{MAX_EXPONENT + 1}", "(x+y)**(10**6)",
                 "(x+y)**1e6"):
        assert "exponent limit of 100" in error(text).message


def test_a_product_that_combines_into_a_large_power_is_refused() -> None:
    """``(x+y+1)*(x+y+1)*...`` is one power once built: the limit applies to it too."""
    import symengine

    names = {"x": symengine.Symbol("x"), "y": symengine.Symbol("y")}
    product = "*".join(["(x+y+1)"] * 101)
    with pytest.raises(InputError) as info:
        parse_expression(f"2*{product}*x", names, SRC)
    assert info.value.message.startswith(f"expression '2*{product}*x': the product 2*{product}*x "
                                         "is the power (1 + x + y)**101: the exponent 101, past")
    assert info.value.location == SRC.location
    tower = r"the power \(\(x\+1\)\*\*50\)\*\*3 is \(1 \+ x\)\*\*150: the exponent 150"
    with pytest.raises(InputError, match=tower):
        parse_expression("((x+1)**50)**3", names, SRC)
    hundred = parse_expression("*".join(["(x+y+1)"] * 100), names, SRC)
    assert sympy.sympify(hundred) == (x + y + 1)**100
