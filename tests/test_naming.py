"""Names once (issue 23): every column and derived name is built and read by lagsim/naming.py.

(a) a scan of lagsim/ finds no other module that formats a ``_dot``, ``lambda_`` or
``residual_`` name (f-strings, concatenation, ``%`` and ``.format``) or checks for one by a
literal (``endswith("_dot")``, ``len("lambda_")``, a regular expression); (b) the layout of a
constrained run with multipliers, residuals, invariants and the action survives layout → header
→ parse, through a CSV file and back; (c) the spec still refuses a declared name of the form of a
column with one located line.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import lagsim
from lagsim import naming
from lagsim.cli import main
from lagsim.errors import InputError
from lagsim.output.io import read_csv, write_csv
from lagsim.output.trajectory import Trajectory

PACKAGE = Path(lagsim.__file__).parent
SUFFIXES = ("_dot", "_ddot")
PREFIXES = ("lambda_", "residual_")
TOKENS = (*SUFFIXES, *PREFIXES)
STRING_METHODS = frozenset({
    "startswith", "endswith", "removeprefix", "removesuffix", "rstrip", "lstrip", "strip",
    "partition", "rpartition", "split", "rsplit", "index", "rindex", "find", "rfind", "replace",
    "count",
})
REGEX_FUNCTIONS = frozenset({"compile", "match", "fullmatch", "search", "sub", "subn",
                             "findall", "finditer", "split"})


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _has_token(node: ast.AST) -> bool:
    """Whether a string constant, or a tuple of them, holds a name token."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    return any(any(token in (_text(item) or "") for token in TOKENS) for item in items)


def name_formats(source: str) -> list[tuple[int, str]]:
    """(line, what) of each place in ``source`` that builds or recognizes a velocity,
    multiplier or residual name by its literal parts."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            for before, after in zip(node.values, node.values[1:]):
                tail, head = _text(after), _text(before)
                if isinstance(before, ast.FormattedValue) and tail is not None \
                        and tail.startswith(SUFFIXES):
                    found.append((node.lineno, f"f-string appends {tail[:5]!r}"))
                if isinstance(after, ast.FormattedValue) and head is not None \
                        and head.endswith(PREFIXES):
                    found.append((node.lineno, f"f-string prefixes {head[-9:]!r}"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = _text(node.left), _text(node.right)
            if (right is not None and right.startswith(SUFFIXES)) \
                    or (left is not None and left.endswith(PREFIXES)):
                found.append((node.lineno, "concatenation"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            if "%" in (_text(node.left) or "") and _has_token(node.left):
                found.append((node.lineno, "% formatting"))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else \
                func.id if isinstance(func, ast.Name) else ""
            literal = [a for a in node.args if _has_token(a)]
            if isinstance(func, ast.Attribute) and name == "format" and _has_token(func.value):
                found.append((node.lineno, ".format of a name template"))
            elif literal and name in STRING_METHODS:
                found.append((node.lineno, f".{name}() with a literal name part"))
            elif literal and name == "len":
                found.append((node.lineno, "len() of a literal name part"))
            elif literal and name in REGEX_FUNCTIONS and isinstance(func, ast.Attribute) \
                    and isinstance(func.value, ast.Name) and func.value.id in ("re", "regex"):
                found.append((node.lineno, "regular expression with a name part"))
    return found


BAD = [
    'f"{q}_dot"', 'f"{q}_ddot"', 'f"lambda_{c}"', 'f"residual_{c.name}_dot"',
    'f"{q + \'_dot\'!r}"', '"lambda_" + c', 'q + "_dot"', '"%s_dot" % q',
    '"{q}_dot".format(q=q)', 'name.endswith("_dot")', 'name.startswith(("lambda_", "x"))',
    'name.removesuffix("_dot")', 'name[len("residual_"):]', 're.compile(r"(\\w+)_dot")',
    'name.split("_dot")',
]
GOOD = [
    '"""The ``<q>_dot`` columns."""', '"(the layout is t, coordinates, <q>_dot, lambda_<c>)"',
    'f"the CSV has no column for {q} (or its _dot) of"', 'naming.velocity(q)',
    'f"{naming.multiplier(c)} became {x}"', '"lambda_*"', 'name.endswith(".yaml")',
]


@pytest.mark.parametrize("snippet", BAD)
def test_the_scan_finds_each_way_of_building_a_name(snippet: str) -> None:
    assert name_formats(snippet), snippet


@pytest.mark.parametrize("snippet", GOOD)
def test_the_scan_leaves_texts_that_only_mention_a_name(snippet: str) -> None:
    assert name_formats(snippet) == []


def test_only_naming_formats_or_parses_derived_names() -> None:
    """Every module of lagsim/ but naming.py builds ``x_dot``, ``lambda_c``, ``residual_c``
    through :mod:`lagsim.naming` (issue 23, "Names once")."""
    modules = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "naming.py"
                     or p.parent != PACKAGE)
    assert len(modules) > 50
    offences = [f"{path.relative_to(PACKAGE.parent)}:{line}: {what}"
                for path in modules
                for line, what in name_formats(path.read_text(encoding="utf-8"))]
    assert offences == []


# --- (b) layout → header → parse ----------------------------------------------------------------

KNIFE = naming.Layout(
    coordinates=("x1", "y1", "x2", "y2"), constraints=("rod", "knife"),
    kinds=("holonomic", "velocity"), extra=("invariant_energy", "action"))
KNIFE_HEADER = ["t", "x1", "y1", "x2", "y2", "x1_dot", "y1_dot", "x2_dot", "y2_dot",
                "lambda_rod", "lambda_knife", "residual_rod", "residual_knife",
                "residual_rod_dot", "energy", "invariant_energy", "action"]


def test_the_layout_of_a_constrained_run_is_issue_3s_order() -> None:
    assert KNIFE.columns() == KNIFE_HEADER
    assert KNIFE.widths == (1, 4, 4, 2, 2, 1, 1)
    assert sum(KNIFE.widths) == len(KNIFE.fixed()) == len(KNIFE_HEADER) - 2


def test_layout_header_parse_round_trip() -> None:
    assert naming.parse(KNIFE.columns()) == KNIFE
    assert naming.read(KNIFE.columns()) == KNIFE
    swapped = KNIFE_HEADER[:9] + ["lambda_knife", "lambda_rod"] + KNIFE_HEADER[11:]
    with pytest.raises(InputError) as err:
        naming.parse(swapped, "run.csv")
    assert str(err.value) == ("run.csv:1: not a lagsim trajectory: column 12 should be "
                              "'residual_knife' (the layout is t, coordinates, <q>_dot, "
                              "lambda_<c>, residual_<c>, residual_<c>_dot, energy), found "
                              "'residual_rod'")
    with pytest.raises(InputError, match="column 'energy_gain' after energy is not one of"):
        naming.parse([*KNIFE.fixed(), "energy_gain"])


def test_a_simulated_run_reads_back_with_its_layout(tmp_path: Path) -> None:
    """The knife edge (a holonomic rod and a velocity constraint) run with --invariants and
    --action: the CSV's header parses to the layout that wrote it, the values come back
    bit-exact, and the table's reading of the header agrees with it."""
    with pytest.warns(lagsim.LagsimWarning, match="action S ="):
        run = lagsim.load("knife_edge").simulate(t_end=0.5, samples=11, invariants=True,
                                                 action=True)
    assert list(run.columns) == KNIFE_HEADER
    path = tmp_path / "run.csv"
    run.to_csv(path)
    table = read_csv(path)
    assert naming.parse(table.columns) == KNIFE
    back = Trajectory.from_columns(table.columns, table.data, "run", table.source)
    assert (back.coordinates, back.constraint_names, back.constraint_kinds) == \
        (KNIFE.coordinates, KNIFE.constraints, KNIFE.kinds)
    assert list(back.columns) == KNIFE_HEADER
    assert np.array_equal(back.as_array(), run.as_array())
    assert table.coordinates == KNIFE.coordinates
    assert table.velocities == naming.velocities(KNIFE.coordinates)
    assert table.multipliers == ("lambda_rod", "lambda_knife")
    assert table.position_residuals == ("residual_rod",)
    assert table.velocity_residuals == ("residual_rod_dot", "residual_knife")


def test_the_size_check_counts_the_columns_of_the_layout() -> None:
    """simulate's refusal of a huge run states the CSV size from the header's width (the knife
    edge writes 15 columns), not from a count of its own."""
    from lagsim.spec.options import SimulateOptions

    options = SimulateOptions.resolve({}, {"samples": 10**9})
    width = len(naming.layout(KNIFE.coordinates, KNIFE.constraints, KNIFE.kinds))
    assert width == 15
    said = {}
    for columns in (width - 1, width):
        with pytest.raises(InputError) as err:
            options.check_size(columns)
        said[columns] = str(err.value).partition(" asks for ")[2]
    assert said[width - 1] != said[width]
    result = CliRunner().invoke(main, ["simulate", "knife_edge", "--samples", "1000000000"])
    assert result.exit_code == 2
    assert said[width] in result.stderr


# --- (c) the spec refuses names of the form of a column ----------------------------------------

def _refusal(tmp_path: Path, text: str) -> str:
    path = tmp_path / "sys.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    result = CliRunner().invoke(main, ["simulate", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0].removeprefix(f"lagsim: error: {path}:")


@pytest.mark.parametrize(("coordinate", "line", "message"), [
    ("energy", "1:15", "coordinate 'energy' is the CSV column of the energy, so the output "
     "would be misread; rename it (e.g. 'energy1')"),
    ("x_dot", "1:15", "coordinate 'x_dot' has the form <coordinate>_dot of the CSV column of a "
     "velocity, so the output would be misread; rename it (e.g. 'xdot')"),
    ("action", "1:15", "coordinate 'action' is the CSV column of the running action (simulate "
     "--action), so the output would be misread; rename it (e.g. 'action1')"),
])
def test_a_coordinate_named_like_a_column_is_refused(tmp_path: Path, coordinate: str,
                                                     line: str, message: str) -> None:
    text = f"coordinates: [{coordinate}]\nkinetic: {naming.velocity(coordinate)}**2\n"
    assert _refusal(tmp_path, text) == f"{line}: {message}"


def test_every_form_of_naming_is_refused_by_the_spec() -> None:
    """Each template of naming.COLUMNS and EXTRA_COLUMNS filled with a plain name gives a name
    the spec refuses, and a plain name is accepted: the spec reads its reserved forms from
    naming, not from a list of its own."""
    from lagsim.spec.system import parse_spec

    made = [t.replace("{q}", "a").replace("{c}", "a").replace("{h}", "a").replace("{i}", "a")
            .replace("{y}", "a").replace("{s}", "a")
            for t, _ in naming.COLUMNS + naming.EXTRA_COLUMNS]
    assert [name for name in made if not name.isidentifier()] == ["d(a)/d(a)"]
    refused = [name for name in made if name not in ("a", "t") and name.isidentifier()]
    assert refused == ["a_dot", "lambda_a", "residual_a", "residual_a_dot", "energy",
                       "invariant_a", "action", "impulse_a", "contact_force_a",
                       "impact_energy_loss"]
    for name in refused:
        assert naming.column_clash(name) is not None
        with pytest.raises(InputError, match=f"coordinate '{name}'"):
            parse_spec(f"coordinates: [{name}]\nkinetic: {naming.velocity(name)}**2\n", "s.yaml")
    assert naming.column_clash("lambdaa") is None
    assert parse_spec("coordinates: [a]\nkinetic: a_dot**2\n", "s.yaml").coordinates == ("a",)


# --- the names themselves -------------------------------------------------------------------------

def test_names_and_their_readings_are_inverse() -> None:
    assert naming.velocity("theta") == "theta_dot"
    assert naming.acceleration("theta") == "theta_ddot"
    assert naming.rate_of(naming.velocity("theta")) == "theta"
    assert naming.rate_of(naming.residual_rate("rod")) == naming.residual("rod") == "residual_rod"
    assert [naming.rate_of(n) for n in ("theta", "theta_ddot", "_dot")] == [None, None, None]
    assert naming.dots("theta_ddot") == ("theta", 2) and naming.dots("x_dot") == ("x", 1)
    assert naming.dots("_dot") == ("_dot", 0)
    assert naming.invariant_of(naming.invariant("p_x")) == "p_x"
    assert naming.invariant_of("action") is None
    assert naming.state(("x", "y")) == ("x", "y", "x_dot", "y_dot")
    assert naming.max_residual("rod") == "max_residual_rod"
    assert naming.invariant(naming.momentum("phi")) == "invariant_p_phi"
    assert naming.is_max_residual("max_residual_rod") and not naming.is_max_residual("rod")


def test_a_table_without_lagsim_columns_reads_as_before(tmp_path: Path) -> None:
    """A CSV of ``t`` and plain columns: all are coordinates, there are no constraints."""
    path = tmp_path / "plain.csv"
    write_csv(["t", "a", "b"], np.array([[0.0, 1.0, 2.0], [1.0, 3.0, 4.0]]), path)
    table = read_csv(path)
    assert table.coordinates == ("a", "b")
    assert table.velocities == () and table.multipliers == () and table.residuals == ()
