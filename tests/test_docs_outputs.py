"""Docs that cannot go stale (issue 30): every command output shown in README.md and
docs/tour.md under a ``<!-- make docs: lagsim ARGS -->`` marker is what the program prints now
(docs/make_docs.py's :func:`refresh`; ``make docs`` rewrites them), and the README's system
file is the bundled one's start.
"""

from __future__ import annotations

import difflib
import importlib.util
import math
import re
from pathlib import Path

import pytest

import lagsim

ROOT = Path(__file__).resolve().parents[1]


def make_docs():
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "docs" / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def docs():
    return make_docs()


@pytest.mark.parametrize("name", ["README.md", "docs/tour.md"])
def test_committed_outputs_are_what_the_program_prints(docs, name: str) -> None:
    path = ROOT / name
    assert path in docs.DOCS
    text = path.read_text(encoding="utf-8")
    assert docs.MARKER.search(text), f"{name} has no generated output"
    now = docs.refresh(text)
    if now != text:
        diff = "".join(difflib.unified_diff(text.splitlines(True), now.splitlines(True),
                                            f"{name} (committed)", f"{name} (program now)"))
        pytest.fail(f"{name} is stale; `python docs/make_docs.py --outputs` updates it:\n{diff}")


def test_refresh_replaces_a_stale_block_and_keeps_the_rest(docs) -> None:
    stale = ("before\n<!-- make docs: lagsim simulate pendulum --t-end 1 --samples 2 -->\n"
             "```\nt,theta\n0.0,1.0\n```\nafter\n"
             "<!-- make docs: lagsim derive pendulum [lines 1-1] -->\n```text\nold\n```\n")
    new = docs.refresh(stale)
    csv_block, derive_block = re.findall(r"```\w*\n(.*?)```", new, re.S)
    assert new.startswith("before\n") and "\nafter\n" in new and "```text\n" in new
    rows = csv_block.splitlines()
    assert rows[0] == "t,theta,theta_dot,energy" and len(rows) == 3
    assert float(rows[1].split(",")[1]) == pytest.approx(math.pi / 6)
    assert derive_block == ("pendulum: coordinates θ; parameters m = 1, g = 9.81, l = 1\n")
    assert docs.refresh(new) == new


def readme_system(name: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```yaml\n(name: " + re.escape(name) + r"\n.*?)```", text, re.S)
    assert match, f"README shows no YAML of {name}"
    return match.group(1)


def test_the_readme_pendulum_natural_starts_where_the_bundled_one_does() -> None:
    """Issue 30: the README's pendulum_natural started at π/4, the bundled file at π/6."""
    shown, bundled = lagsim.load(readme_system("pendulum_natural")), lagsim.load(
        "pendulum_natural")
    assert shown.parameters == bundled.parameters
    assert shown.spec.initial_state()[0] == pytest.approx(bundled.spec.initial_state()[0],
                                                          abs=1e-15)
    assert shown.spec.initial_state()[0][0] == pytest.approx(math.sin(math.pi / 6))
