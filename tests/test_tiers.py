"""The test tiers of issue 23: ``make test-quick`` (``pytest --quick``) runs no test that starts a
process or sends a signal, and every test module either has tests in the quick tier or says with
a marker why not.

The scan is tests/tiers.py (``ast``); the first test checks it on a small file written here, the
last one against what pytest really collects with ``--quick``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from tiers import OUT_OF_QUICK, kinds_of, module_kinds

TESTS = Path(__file__).resolve().parent

SAMPLE = '''
import os, signal, subprocess, sys
import pytest

LAGSIM = [sys.executable, "-m", "lagsim"]

def run(*args):
    return subprocess.run([*LAGSIM, *args])

def indirect():
    return run("systems")

@pytest.fixture
def child():
    return subprocess.Popen(["true"])

def test_helper_two_levels_down():
    assert indirect()

def test_constant_only():
    assert LAGSIM

def test_fixture(child):
    assert child

@pytest.mark.parametrize("sig", [signal.SIGINT])
def test_signal_in_parameters(sig):
    assert sig

def test_kill():
    os.kill(1, 0)

def test_pipe_constant_is_no_process():
    assert subprocess.PIPE

def test_plain():
    assert run

class TestGroup:
    def test_method(self):
        indirect()

    def test_method_plain(self):
        assert 1
'''


def test_scan_follows_helpers_constants_fixtures_and_parameters(tmp_path) -> None:
    path = tmp_path / "test_sample.py"
    path.write_text(SAMPLE)
    kinds = {name: kinds_of(path, name) for name in [
        "test_helper_two_levels_down", "test_constant_only", "test_fixture",
        "test_signal_in_parameters", "test_kill", "test_pipe_constant_is_no_process"]}
    assert kinds == {
        "test_helper_two_levels_down": {"subprocess"},
        "test_constant_only": {"subprocess"},
        "test_fixture": {"subprocess"},
        "test_signal_in_parameters": {"signals"},
        "test_kill": {"signals"},
        "test_pipe_constant_is_no_process": set(),
    }
    # naming the helper is enough: the scan cannot tell a call from a reference, so it errs
    # towards leaving a test out of the quick tier
    assert kinds_of(path, "test_plain") == {"subprocess"}
    assert kinds_of(path, "test_method", "TestGroup") == {"subprocess"}
    assert kinds_of(path, "test_method_plain", "TestGroup") == set()


def _tier_marks(node: ast.AST) -> set[str]:
    """Markers out of the quick tier named as ``pytest.mark.NAME`` anywhere in ``node``."""
    return {sub.attr for sub in ast.walk(node)
            if isinstance(sub, ast.Attribute) and sub.attr in OUT_OF_QUICK
            and isinstance(sub.value, ast.Attribute) and sub.value.attr == "mark"}


def _tests(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """The test functions of a module as (``name`` or ``Class.name``, definition)."""
    found: list[tuple[str, ast.AST]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            found += [(f"{node.name}.{sub.name}", sub) for sub in node.body
                      if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [(key, node) for key, node in found if key.rpartition(".")[2].startswith("test_")]


def test_every_module_is_in_the_quick_tier_or_says_why(pytestconfig) -> None:
    """A module with no test left for the quick tier names its reason in ``pytestmark``; every
    marker that leaves tests out of the quick tier is declared (with its meaning) in pyproject."""
    declared = {line.split(":")[0].strip() for line in pytestconfig.getini("markers")}
    assert set(OUT_OF_QUICK) <= declared
    silent = []
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        said = [node for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)]
        if any(_tier_marks(node) for node in said):
            continue
        quick = [key for key, node in _tests(tree)
                 if not _tier_marks(node) and not module_kinds(path).get(key)]
        if not quick:
            silent.append(path.name)
    assert silent == []


def test_the_quick_tier_leaves_out_every_process_and_signal_test() -> None:
    """What ``pytest --quick`` collects (the tests ``make test-quick`` runs) against the scan of
    each test file: none of them reaches a process or a signal, none is in a module marked out
    of the quick tier, and some tests but not most are left out."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-o", "addopts=", "--quick", str(TESTS)],
        capture_output=True, text=True, timeout=900, cwd=TESTS.parent)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    quick = [line for line in done.stdout.splitlines() if "::" in line]
    counts = re.search(r"^(\d+)/(\d+) tests collected \((\d+) deselected\)", done.stdout, re.M)
    assert counts is not None, done.stdout[-500:]
    kept, total, left = map(int, counts.groups())
    assert kept == len(quick) and kept + left == total and 0.05 < left / total < 0.5
    wrong = []
    for nodeid in quick:
        path, *parts = nodeid.split("::")
        name = parts[-1].split("[")[0]
        cls = parts[0] if len(parts) == 2 else None
        if kinds_of(TESTS.parent / path, name, cls):
            wrong.append(nodeid)
    assert wrong == []
    files = {nodeid.split("::")[0] for nodeid in quick}
    assert "tests/test_cache.py" not in files and "tests/test_simulate_physics.py" in files
