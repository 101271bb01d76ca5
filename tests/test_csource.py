"""lagsim's C sources as files (issue 23): the status header and its Python mirror agree, the
result record's layout is the same in C and in ctypes, and no C source hides in a Python
string."""

from __future__ import annotations

import ast
import ctypes
import re
import subprocess
from pathlib import Path

import pytest

from lagsim.numeric import ccompile, csource
from lagsim.numeric.csource import LoopResult, Status, StepResult

ROOT = Path(__file__).resolve().parents[1]
C_DIR = ROOT / "lagsim" / "numeric" / "c"
HEADER = C_DIR / "status.h"
RECORDS = [(LoopResult, "lagsim_result"), (StepResult, "lagsim_step")]


def _header_enum() -> dict[str, int]:
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(encoding="utf-8"), flags=re.S)
    body = re.search(r"enum\s+lagsim_status\s*\{(.*?)\}", text, re.S)
    assert body is not None, "status.h has no enum lagsim_status"
    pairs = [item.split("=") for item in body.group(1).split(",") if item.strip()]
    return {name.strip(): int(value) for name, value in pairs}


def _header_struct(name: str) -> list[tuple[str, str]]:
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(encoding="utf-8"), flags=re.S)
    body = re.search(rf"typedef\s+struct\s*\{{([^}}]*)\}}\s*{name}\s*;", text, re.S)
    assert body is not None, f"status.h has no struct {name}"
    return [(decl.split()[-1], " ".join(decl.split()[:-1]))
            for decl in body.group(1).split(";") if decl.strip()]


def test_status_enum_agrees_with_the_header():
    assert _header_enum() == {member.name: member.value for member in Status}


def test_every_status_has_a_message():
    for member in Status:
        assert isinstance(member.message, str) and len(member.message) > 10, member.name
    assert Status(30).message == "Newton's method did not converge in the step"
    assert Status.RUN_PROJECTION.message.startswith("the projection onto the constraints")


def test_no_other_source_declares_the_codes():
    """One enum: the codes are declared in status.h only, and every source that uses them
    includes it."""
    codes = set(_header_enum())
    for path in sorted(C_DIR.glob("*.c")):
        text = path.read_text(encoding="utf-8")
        declared = [name for name in codes if re.search(rf"\b{name}\s*=", text)]
        assert not declared, f"{path.name} declares {declared}"
        used = [name for name in codes if re.search(rf"\b{name}\b", text)]
        if used:
            assert '#include "status.h"' in text, f"{path.name} uses {used[0]} without status.h"
            assert "enum lagsim_status" in csource.read(path.name)


@pytest.mark.parametrize("record, name", RECORDS)
def test_result_record_fields_are_those_of_the_header(record, name):
    ctypes_types = {ctypes.c_double: "double", ctypes.c_long: "long", ctypes.c_int: "int"}
    mirrored = [(field, ctypes_types[kind]) for field, kind in record._fields_]
    assert mirrored == _header_struct(name)


@pytest.mark.parametrize("record, name", RECORDS)
def test_result_record_layout_agrees_with_c(tmp_path, record, name):
    """sizeof and every offsetof of the record as the C compiler lays it out."""
    cc = ccompile.compiler()
    if cc is None:
        pytest.skip("no C compiler")
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "status.h"',
             'int main(void) {', f'    printf("size %zu\\n", sizeof({name}));']
    lines += [f'    printf("{field} %zu\\n", offsetof({name}, {field}));'
              for field, _ in record._fields_]
    lines += ["    return 0;", "}"]
    (tmp_path / "layout.c").write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run([cc, f"-I{C_DIR}", "-o", str(tmp_path / "layout"), str(tmp_path / "layout.c")],
                   check=True, capture_output=True)
    out = subprocess.run([str(tmp_path / "layout")], check=True, capture_output=True,
                         text=True).stdout
    got = dict(line.split() for line in out.splitlines())
    assert int(got.pop("size")) == ctypes.sizeof(record)
    assert {field: int(v) for field, v in got.items()} == {
        field: getattr(record, field).offset for field, _ in record._fields_}


def test_read_expands_the_header_once():
    text = csource.read("cloop.c")
    assert '#include "status.h"' not in text
    assert text.count("enum lagsim_status") == 1
    assert "@RUNTIME@" in text and "@CROSSINGS@" in text  # the loop's own slots stay


def test_read_expands_only_an_include_that_starts_a_line(monkeypatch):
    """An include is a line of its own (what ``^`` of a multi-line pattern means): one after
    other text, or in a comment, stays as written; one at the file's start or after a newline,
    with spaces or tabs after it, is expanded."""
    files = {"top.c": '#include "a.h"\nx; // #include "a.h"\n  #include "a.h"\n'
                      '#include "a.h" \t\ny;',
             "a.h": "A"}
    monkeypatch.setattr(csource, "raw", files.__getitem__)
    assert csource.read("top.c") == 'A\nx; // #include "a.h"\n  #include "a.h"\nA\ny;'


def test_fill_names_a_missing_or_unknown_slot():
    assert csource.fill("int x[@N@];", N=3) == "int x[3];"
    with pytest.raises(KeyError, match="@M@ was not filled"):
        csource.fill("int x[@N@][@M@];", N=3)
    with pytest.raises(KeyError, match="no slot @K@"):
        csource.fill("int x[@N@];", N=3, K=1)


def test_every_c_file_is_package_data():
    """pyproject's package-data patterns cover each file of lagsim/numeric/c/ (a non-editable
    install has them)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    line = re.search(r'^"lagsim.numeric"\s*=\s*\[(.*)\]\s*$', section, re.M)
    assert line is not None, "pyproject.toml gives no package data of lagsim.numeric"
    patterns = re.findall(r'"([^"]+)"', line.group(1))
    files = sorted(p.name for p in C_DIR.iterdir() if p.is_file())
    assert {"status.h", "cloop.c", "cradau.c", "runtime.c"} <= set(files)
    globs = [re.compile("[^/]*".join(map(re.escape, pattern.split("*"))) + "$")
             for pattern in patterns]  # setuptools' glob: * does not cross a folder
    for name in files:
        assert any(glob.match(f"c/{name}") for glob in globs), name


def test_no_c_source_in_python_strings():
    """No string literal of lagsim's modules holds a C text of more than a few lines (a
    function body, an #include): those are files of lagsim/numeric/c/. Generated code is made by
    f-strings of a line or two."""
    c_like = re.compile(r"#include\s*[<\"]|^\s*(static\s+)?(int|void|double)\s+\w+\s*\(",
                        re.M)
    found = []
    for path in sorted((ROOT / "lagsim").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        for node in ast.walk(tree):
            if id(node) in docstrings:
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            elif isinstance(node, ast.JoinedStr):
                text = "".join(v.value for v in node.values
                               if isinstance(v, ast.Constant) and isinstance(v.value, str))
            else:
                continue
            if text.count("\n") >= 6 and c_like.search(text):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, f"C source in Python strings: {found}"


@pytest.mark.parametrize("method, dt", [("rattle", "1.5"), ("variational", "2.5")])
def test_a_failed_fixed_step_says_its_status_message(method, dt):
    """A step of the C loop that returns STEP_NEWTON is reported with that code's message
    (the pendulum's step of 1.5 or 2.5 s is far beyond Newton's reach)."""
    from click.testing import CliRunner

    from lagsim.cli import main

    result = CliRunner().invoke(main, ["simulate", "pendulum_natural", "--method", method,
                                       "--dt", dt, "-o", "-"])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines()[-1] == (
        f"lagsim: error: at t = {dt}: {method}: {Status.STEP_NEWTON.message} at step size "
        f"{dt}; try a smaller --dt")
