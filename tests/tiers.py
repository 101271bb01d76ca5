"""Which tests start another process or send signals, read from the test files' syntax (``ast``).

A test *uses a process* when its definition (decorators and parameters included) calls
``subprocess.run``/``Popen``/``call``/``check_call``/``check_output`` or reads ``sys.executable``;
it *uses signals* when it names the ``signal`` module's members, ``os.kill``/``os.killpg`` or
``send_signal``. Both count through the file's module-level names the test refers to, followed
transitively: helper functions, constants such as ``LAGSIM = [sys.executable, "-m", "lagsim"]``,
and fixtures the test requests by name. What the scan cannot see is a process started inside
lagsim itself (the C compiler, Dask workers) or by a helper imported from another file; such
tests carry their marker by hand (``pytestmark`` or ``@pytest.mark...``). tests/conftest.py marks
tests with this scan and tests/test_tiers.py checks the quick tier against it.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PROCESS_CALLS = frozenset({"run", "Popen", "call", "check_call", "check_output"})
"""``subprocess`` functions that start a process (``subprocess.PIPE`` and the like do not)."""

OUT_OF_QUICK = ("subprocess", "signals", "cache", "slow")
"""Markers of the tests ``make test-quick`` (``pytest --quick``) leaves out (pyproject declares
them)."""


def _direct_kinds(node: ast.AST) -> set[str]:
    kinds: set[str] = set()
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Attribute):
            continue
        owner = sub.value.id if isinstance(sub.value, ast.Name) else None
        if (owner == "subprocess" and sub.attr in PROCESS_CALLS) or (
            owner == "sys" and sub.attr == "executable"
        ):
            kinds.add("subprocess")
        elif owner == "signal" or sub.attr == "send_signal" or (
            owner == "os" and sub.attr in ("kill", "killpg")
        ):
            kinds.add("signals")
    return kinds


def _names(node: ast.AST) -> set[str]:
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        found |= {a.arg for a in node.args.args + node.args.kwonlyargs}
    return found


def _top_level(tree: ast.Module) -> dict[str, ast.AST]:
    named: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            named[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        named[sub.id] = node
    return named


@cache
def module_kinds(path: Path) -> dict[str, frozenset[str]]:
    """For each module-level name of the test file at ``path`` (functions, classes, constants;
    methods as ``Class.method``), the kinds (``subprocess``, ``signals``) it reaches."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    named = _top_level(tree)
    direct = {name: _direct_kinds(node) for name, node in named.items()}
    uses = {name: _names(node) & named.keys() - {name} for name, node in named.items()}
    reach = {name: set(kinds) for name, kinds in direct.items()}
    changed = True
    while changed:
        changed = False
        for name, used in uses.items():
            for other in used:
                if not reach[other] <= reach[name]:
                    reach[name] |= reach[other]
                    changed = True
    result = {name: frozenset(kinds) for name, kinds in reach.items()}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    kinds = set(_direct_kinds(method))
                    for other in _names(method) & named.keys():
                        kinds |= reach[other]
                    result[f"{node.name}.{method.name}"] = frozenset(kinds)
    return result


def kinds_of(path: Path, name: str, cls: str | None = None) -> frozenset[str]:
    """The kinds the test function ``name`` (a method of ``cls`` if given) of ``path`` reaches."""
    return module_kinds(path).get(f"{cls}.{name}" if cls else name, frozenset())

