"""docs/api.md run as a Jupyter notebook (issue 30): each ```python block becomes a code cell, in
order, executed headless by nbclient in an IPython kernel, as a user pasting the manual into a
notebook would run it. Every cell must run without an error (their asserts are the checks: the
pendulum's period 4K(sin²(θ₀/2))/√(g/l), seed 001_80d65b968ce3cb18.txt, Example 10.5, the
oscillator x₀ cos(√(k/m) t), ...), and where the manual shows what a cell prints (a ```text block
right after the ```python block), the cell's output is that text.

nbclient, nbformat and ipykernel are in the ``test`` extra; the test is skipped without them. It
starts a kernel (a process), so ``make test-quick`` leaves it out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"

BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```\n(?:\s*^```text\n(?P<output>.*?)^```$)?",
                   re.S | re.M)
"""A python block and the text block that may follow it (blank lines between, nothing else)."""


@dataclass(frozen=True)
class Cell:
    """One code cell of the manual: its source, the output the manual shows (None: none shown)
    and the line of the manual where the block starts."""

    source: str
    shown: str | None
    line: int


def cells(markdown: str) -> tuple[Cell, ...]:
    """The python blocks of ``markdown`` in order, each with the output shown after it."""
    return tuple(Cell(m["code"].rstrip("\n"), m["output"],
                      markdown.count("\n", 0, m.start()) + 1)
                 for m in BLOCK.finditer(markdown))


def notebook(blocks: tuple[Cell, ...]):
    """An nbformat v4 notebook of ``blocks``, one code cell each."""
    import nbformat

    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(cell.source) for cell in blocks],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}})


def printed(cell) -> str:
    """What an executed code cell shows as text: its stdout, then its result's text/plain."""
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream" and output.name == "stdout":
            parts.append(output.text)
        elif output.output_type == "execute_result":
            parts.append(output.data["text/plain"] + "\n")
    return "".join(parts)


def same_text(a: str, b: str) -> bool:
    """Equal but for blanks at the end of a line or of the text (which a Markdown block does not
    keep)."""
    return [line.rstrip() for line in a.rstrip().splitlines()] == [
        line.rstrip() for line in b.rstrip().splitlines()]


def test_the_converter_pairs_each_block_with_the_output_shown_after_it() -> None:
    text = ("# t\n\n```python\nx = 1\n```\n\n```python\nprint(x)\n```\n\n```text\n1\n```\n"
            "prose\n```yaml\na: 1\n```\n```python\nx\n```\nprose\n```text\nnot shown\n```\n")
    found = cells(text)
    assert [(c.source, c.shown, c.line) for c in found] == [
        ("x = 1", None, 3), ("print(x)", "1\n", 7), ("x", None, 18)]


@pytest.mark.subprocess
def test_docs_api_runs_as_a_notebook(tmp_path) -> None:
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    blocks = cells(DOCS.read_text(encoding="utf-8"))
    assert len(blocks) >= 10 and sum(c.shown is not None for c in blocks) >= 2
    nb = notebook(blocks)
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    for block, cell in zip(blocks, nb.cells, strict=True):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, (f"docs/api.md line {block.line}: {errors[0].ename}: "
                            f"{errors[0].evalue}")
        assert cell.execution_count is not None
        if block.shown is not None:
            assert same_text(printed(cell), block.shown), (
                f"docs/api.md line {block.line} shows\n{block.shown}but the cell printed\n"
                f"{printed(cell)}")
