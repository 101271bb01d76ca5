"""lagsim gives the outputs recorded in tests/golden/data before the move into subpackages (issue
23, "Behaviour unchanged"); tests/golden/record.py says which commands and how they were chosen.

- ``derive`` and ``check``: stdout, stderr and the exit code identical to the byte.
- ``simulate``: the exit code identical; the CSV's header line identical and every number in it
  equal within a relative 1e-12 (absolute 1e-12 near zero), the same rows and columns; stderr
  the same text with its numbers within the same tolerance (``--action`` prints S, a reduced run
  the time of a chart switch).

The tolerance lets a machine whose compiler and libm round differently pass: byte identity of
every output, CSVs included, is what ``python tests/golden/record.py --check`` checks on the
machine that recorded them (the recording's machine and Python are in MANIFEST.json). The
outputs come from the C loops, so the module is skipped without a C compiler (``LAGSIM_NO_CC``,
``make test-nocc``), where the symengine path rounds differently.

The commands of one system share its :class:`lagsim.System` (:func:`opened`): the file is
read and validated once, and its symbolic model and the model tidied for printing, which the
System keeps, are built once for its 13 simulate, 24 derive and one check commands instead of
once a command, as a notebook reusing ``lagsim.load(name)`` would. Every command still runs
whole through the command line (options, formulation, forms, printing, the C loops); that each
command reads its file itself is checked by the other CLI tests.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from collections.abc import Iterator, Mapping

import pytest
from golden import record

import lagsim.api
from lagsim.api import System

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("LAGSIM_NO_CC")) or not (
        os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")),
    reason="the golden outputs are those of the C loops; this run has no C compiler")

RTOL = 1e-12
ATOL = 1e-12
ENTRIES = record.recorded()
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _close(old: str, new: str) -> bool:
    if old == new:
        return True
    try:
        a, b = float(old), float(new)
    except ValueError:
        return False
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)


def csv_differences(old: str, new: str) -> list[str]:
    """Where the CSV ``new`` differs from ``old``: the header, the shape, or a number past the
    tolerance (each as ``row, column: old != new``)."""
    if old == new:
        return []
    a, b = old.splitlines(), new.splitlines()
    if not a or not b or a[0] != b[0]:
        return [f"header {b[:1]} != recorded {a[:1]}"]
    if len(a) != len(b):
        return [f"{len(b) - 1} rows, recorded {len(a) - 1}"]
    columns = a[0].split(",")
    found = []
    for row, (x, y) in enumerate(zip(a[1:], b[1:]), start=1):
        xs, ys = x.split(","), y.split(",")
        if len(xs) != len(ys):
            found.append(f"row {row}: {len(ys)} fields, recorded {len(xs)}")
            continue
        found += [f"row {row}, {col}: {v} != recorded {u}"
                  for col, u, v in zip(columns, xs, ys) if not _close(u, v)]
    return found


def text_differences(old: str, new: str) -> list[str]:
    """Where ``new`` differs from ``old`` other than in its numbers, within the tolerance."""
    if NUMBER.sub("#", old) != NUMBER.sub("#", new):
        return [f"{new!r} != recorded {old!r}"]
    return [f"{v} != recorded {u}" for u, v in zip(NUMBER.findall(old), NUMBER.findall(new))
            if not _close(u, v)]


def test_csv_comparison_holds_the_tolerance_and_nothing_more() -> None:
    """The comparison of simulate outputs passes rounding in the last digits and fails a
    change in the 12th digit, a column, a row or the text around a number."""
    old = "t,x,x_dot\n0.0,1.0,0.0\n0.5,0.12345678901234,-1e-15\n"
    assert csv_differences(old, old.replace("0.12345678901234", "0.12345678901235")) == []
    assert csv_differences(old, old.replace("-1e-15", "3e-13")) == []
    assert csv_differences(old, old.replace("0.12345678901234", "0.12345678911234")) == [
        "row 2, x: 0.12345678911234 != recorded 0.12345678901234"]
    assert csv_differences(old, old.replace("x_dot", "v")) != []
    assert csv_differences(old, old + "1.0,2.0,3.0\n") == ["3 rows, recorded 2"]
    assert csv_differences(old, old.replace(",0.0\n0.5", ",0.0,1\n0.5")) != []
    said = "lagsim: action S = 9.82524327059912 (error estimate 2.9e-07)\n"
    assert text_differences(said, said.replace("9.82524327059912", "9.825243270599121")) == []
    assert text_differences(said, said.replace("9.82524327059912", "9.825243271")) != []
    assert text_differences(said, said.replace("action", "actions")) != []


def test_the_manifest_lists_what_record_plans_now() -> None:
    """Every bundled system and every choice of --formulation, --stabilize, --method and
    --form is recorded (a system or a choice added or removed since needs a new recording),
    and each recorded file exists with the sha256 in the manifest."""
    assert [g.argv for g in record.planned()] == [g.argv for g, _ in ENTRIES]
    for golden, entry in ENTRIES:
        assert record.sha256((record.DATA / golden.file).read_bytes()) == entry["sha256"]


def _tier(golden: record.Golden) -> list[pytest.MarkDecorator]:
    """The latex and json derive outputs (about 30 s of the 65 s) run in ``make test`` only, so
    that the quick tier (every simulate and check, the text of every derive) takes about 35 s."""
    fmt = golden.argv[golden.argv.index("--format") + 1] if "--format" in golden.argv else None
    return [pytest.mark.slow] if fmt in ("latex", "json") else []


@pytest.fixture(scope="module")
def opened() -> Iterator[dict[tuple[object, ...], System]]:
    """``lagsim.api.open_system`` keeping the System of each (source, --set, --init) for the
    module's commands."""
    systems: dict[tuple[object, ...], System] = {}
    reader = lagsim.api.open_system

    def shared(source: str | os.PathLike[str], parameters: Mapping[str, float] | None = None,
               initial: Mapping[str, float] | None = None, api: bool = False) -> System:
        key = (os.fspath(source), tuple(sorted((parameters or {}).items())),
               tuple(sorted((initial or {}).items())), api)
        if key not in systems:
            systems[key] = reader(source, parameters, initial, api)
        return systems[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lagsim.api, "open_system", shared)
        yield systems


@pytest.mark.parametrize(("golden", "entry"), [
    pytest.param(g, e, marks=_tier(g), id=g.file) for g, e in ENTRIES])
def test_output_is_the_recorded_one(golden: record.Golden, entry: dict[str, object],
                                    opened: dict[tuple[object, ...], System]) -> None:
    outcome = record.run(golden.argv)
    stdout = (record.DATA / golden.file).read_bytes()
    err = entry["stderr_file"]
    stderr = (record.DATA / str(err)).read_bytes() if err else b""
    assert outcome.exit_code == entry["exit_code"], outcome.stderr.decode()
    if golden.argv[0] == "simulate":
        assert csv_differences(stdout.decode(), outcome.stdout.decode()) == []
        assert text_differences(stderr.decode(), outcome.stderr.decode()) == []
    else:
        assert outcome.stdout == stdout
        assert outcome.stderr == stderr
