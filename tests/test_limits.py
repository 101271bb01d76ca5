"""Limits against hostile or huge input (issue 15; docs/format.md, "Limits"; lagsim/spec/limits.py).

Each hostile file runs in its own ``lagsim`` process. The timeout only keeps a regression from
hanging the suite (nothing here asserts a speed): the assertion is exit status 2 and one stderr line
that names the limit, where before lagsim ran out of memory, recursed without end or ended in
"internal error".
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lagsim.errors import InputError
from lagsim.spec.limits import (
    LIMITS,
    MAX_COORDINATES,
    MAX_EXPONENT,
    MAX_EXPRESSION_CHARS,
    MAX_FILE_CHARS,
    MAX_NESTING,
)
from lagsim.spec.system import parse_spec

GUARD = 120
"""Seconds after which a run counts as hung (a guard, not a measurement)."""
DOCS = Path(__file__).resolve().parents[1] / "docs" / "format.md"


def lagsim(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "sys.yaml"
    path.write_text(text, encoding="utf-8")
    command = [sys.executable, "-m", "lagsim", *args[:1], str(path), *args[1:]]
    return subprocess.run(command, capture_output=True, text=True, timeout=GUARD)


def refused(result: subprocess.CompletedProcess, limit: str) -> str:
    """The one error line of a run refused by ``limit``, checked for exit status and form."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("lagsim: error: ")
    assert f"{limit} limit of {LIMITS[limit].value:,}" in lines[0]
    assert "internal error" not in lines[0]
    return lines[0]


def billion_laughs() -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return "\n".join(lines) + "\ncoordinates: [x]\nkinetic: x_dot**2\n"


HOSTILE = [
    ("constraint-power", "coordinates: [x, y]\nkinetic: (x_dot**2 + y_dot**2)/2\n"
     "constraints: ['(x+y+1)**1000000 - 1']\n", "simulate", "exponent"),
    ("derive-power-of-power", "coordinates: [x]\nkinetic: x_dot**2/2\n"
     "potential: (x+1)**(10**6)\n", "derive", "exponent"),
    ("negative-power", "coordinates: [x]\nkinetic: x_dot**2/2\npotential: (x+1)**-100000\n",
     "derive", "exponent"),
    ("billion-laughs", billion_laughs(), "derive", "YAML size"),
    ("deep-yaml-lists", "coordinates: " + "[" * 10_000 + "x" + "]" * 10_000 + "\n", "derive",
     "YAML depth"),
    ("deep-yaml-mappings", "coordinates: [x]\nkinetic: " + "{a: " * 10_000 + "1" + "}" * 10_000
     + "\n", "derive", "YAML depth"),
    ("huge-file", "coordinates: [x]\nkinetic: x_dot**2\ndescription: " + "a" * MAX_FILE_CHARS
     + "\n", "derive", "file size"),
    ("long-expression", "coordinates: [x]\nkinetic: x_dot**2/2\npotential: "
     + "x+" * (MAX_EXPRESSION_CHARS // 2) + "x\n", "derive", "expression length"),
    ("many-nodes", "coordinates: [x]\nkinetic: x_dot**2/2\npotential: "
     + " + ".join("(" + "+".join(["x"] * 500) + ")" for _ in range(50)) + "\n", "derive",
     "expression size"),
    ("power-tower", "coordinates: [x]\nkinetic: x_dot**2/2\npotential: "
     + "x**" * (MAX_NESTING + 50) + "x\n", "derive", "expression nesting"),
    ("nested-calls", "coordinates: [x]\nkinetic: x_dot**2/2\npotential: "
     + "sin(" * (MAX_NESTING + 1) + "x" + ")" * (MAX_NESTING + 1) + "\n", "derive",
     "expression nesting"),
    ("many-coordinates", f"coordinates: [{', '.join(f'q{i}' for i in range(MAX_COORDINATES + 1))}]"
     "\nkinetic: q0_dot**2\n", "derive", "coordinates"),
]


@pytest.mark.parametrize(("text", "command", "limit"), [h[1:] for h in HOSTILE],
                         ids=[h[0] for h in HOSTILE])
def test_hostile_input_is_refused_by_its_limit(tmp_path: Path, text: str, command: str,
                                               limit: str) -> None:
    line = refused(lagsim(tmp_path, text, command), limit)
    assert "sys.yaml" in line


def test_the_exponent_error_points_at_the_power() -> None:
    with pytest.raises(InputError) as info:
        parse_spec("coordinates: [x, y]\nkinetic: (x_dot**2 + y_dot**2)/2\n"
                   "constraints: ['(x+y+1)**1000000 - 1']\n", "sys.yaml")
    assert str(info.value) == (
        "sys.yaml:3:16: constraint 'c1' '(x+y+1)**1000000 - 1': the power (x+y+1)**1000000: the "
        f"exponent 1000000, past lagsim's exponent limit of {MAX_EXPONENT} for the exponent n of "
        "a power base**n of a symbolic base (docs/format.md, \"Limits\")")


def test_a_chain_too_long_for_pythons_parser_is_refused(tmp_path: Path) -> None:
    """Python's own parser gives up on 3,000 unary minus signs or a chain of 6,000 terms; that is
    an input error naming the nesting and size limits, not an internal one."""
    for body in ("-" * 3000 + "x", "+".join(["x"] * 6000)):
        result = lagsim(tmp_path, f"coordinates: [x]\nkinetic: x_dot**2/2\npotential: {body}\n",
                        "derive")
        assert result.returncode == 2, result.stderr
        assert "expression nesting limit is 100 levels" in result.stderr
        assert "internal error" not in result.stderr


def test_a_self_referring_alias_is_refused() -> None:
    with pytest.raises(InputError) as info:
        parse_spec("coordinates: &a [x, *a]\nkinetic: x_dot**2\n", "sys.yaml")
    assert str(info.value) == ("sys.yaml:1:14: an alias (*name) refers to a value that contains "
                               "it; YAML recursion is not allowed")


def test_a_sum_of_a_thousand_terms_works(tmp_path: Path) -> None:
    """U = Σ_{k=1}^{1000} x²/2000 = x²/2: a unit oscillator, at x = -1 after half a period."""
    terms = " + ".join(f"{k % 7 + 1}*x**2/{2000 * (k % 7 + 1)}" for k in range(1000))
    result = lagsim(tmp_path, f"coordinates: [x]\nkinetic: x_dot**2/2\npotential: {terms}\n"
                    "initial: {x: 1}\n", "simulate", "--t-end", str(math.pi), "--samples", "2")
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1].split(",")
    assert float(last[1]) == pytest.approx(-1.0, abs=1e-8)
    assert float(last[3]) == pytest.approx(0.5, abs=1e-9)


def test_powers_up_to_the_limit_work(tmp_path: Path) -> None:
    """φ = (x + y + 1)^n - 1 at the exponent limit: the start x = y = 0 is on it, and at rest with
    no force it stays there (φ and its rows stay finite and small)."""
    result = lagsim(tmp_path, "coordinates: [x, y]\nkinetic: (x_dot**2 + y_dot**2)/2\n"
                    f"constraints: ['(x+y+1)**{MAX_EXPONENT} - 1']\n", "simulate",
                    "--t-end", "1", "--samples", "2")
    assert result.returncode == 0, result.stderr
    header, last = (line.split(",") for line in result.stdout.strip().splitlines()[::2])
    assert header[:3] == ["t", "x", "y"]
    assert [float(v) for v in last[1:3]] == [0.0, 0.0]


def test_limits_are_documented() -> None:
    """docs/format.md's "Limits" table lists every limit of lagsim/spec/limits.py with its value."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Limits"):]
    for name, limit in LIMITS.items():
        assert re.search(rf"\| {re.escape(name)} \| {limit.value:,} ", section), name
