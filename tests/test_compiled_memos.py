"""Issue 23, "one event mechanism ... compiled once per structure with parameters as run-time
inputs; every memo of compiled code is bounded".

A ``--stop-when`` expression that uses a swept parameter was compiled to one C library per value
(the values were put into the expression before the code was generated) and kept in a memo that
never shrank. Now the parameters are inputs of the stop function, as of the model's functions and
``--section``'s: a 4-value sweep builds one stop library, and each run still stops at its own
closed-form time. The memos of compiled code are :class:`lagsim.numeric.memo.Memo` of a declared
size.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from lagsim.api import load
from lagsim.cli import main
from lagsim.numeric import ccompile
from lagsim.numeric.compile import compile_model
from lagsim.numeric.memo import Memo
from lagsim.run.events import FUNCTIONS, compile_events
from lagsim.run.problem import run_events
from lagsim.spec.options import SimulateOptions

FALL = """\
name: fall_{tag}
description: a point mass falling from rest, y(t) = -g t^2 / 2
parameters:
  m: 1.0
  g: 9.81
  h: 1.0
coordinates: [y]
masses:
  ball:
    mass: m
    position: [0, y]
gravity: [0, -g]
initial:
  y: 0
  y_dot: 0
"""
HEIGHTS = (0.5, 1.0, 2.0, 3.0)


def _stop_libraries(folder: Path) -> list[Path]:
    """The libraries of the compile cache ``folder`` that hold a ``--stop-when`` function."""
    return [p for p in folder.rglob("lagsim_*.so") if b"lagsim_stop" in p.read_bytes()]


@pytest.mark.cache
@pytest.mark.skipif(ccompile.compiler() is None, reason="needs a C compiler")
def test_sweep_over_a_stop_parameter_builds_one_stop_library(tmp_path: Path) -> None:
    """``--stop-when 'y + h'`` over four values of h: one stop library in the (fresh) cache,
    and each run stops when the ball has fallen h, at t = sqrt(2h/g), to 1e-9. The process's
    memo of loaded stop libraries is emptied first: its C source names no symbol, so an earlier
    test's stop of the same structure (another fall) would be found there and nothing built."""
    from lagsim.run.engines import cloop

    cloop.STOP_LIBRARIES.clear()
    system = tmp_path / "fall.yaml"
    system.write_text(FALL.format(tag=tmp_path.name.replace("-", "_")))
    folder = tmp_path / "cache"
    table = tmp_path / "table.csv"
    done = CliRunner().invoke(
        main, ["sweep", str(system), "--values", "h=" + ",".join(map(str, HEIGHTS)),
               "--stop-when", "y + h", "--t-end", "5", "--scheduler", "synchronous",
               "-o", str(table)], env={"LAGSIM_CACHE": str(folder)})
    assert done.exit_code == 0, done.output
    assert len(_stop_libraries(folder)) == 1
    rows = list(csv.DictReader(table.open()))
    assert [float(r["h"]) for r in rows] == list(HEIGHTS)
    for row in rows:
        h = float(row["h"])
        assert abs(float(row["stop_time"]) - math.sqrt(2 * h / 9.81)) < 1e-9
        assert abs(float(row["y"]) + h) < 1e-9


def test_memo_keeps_its_bound_and_drops_the_least_recently_used() -> None:
    memo: Memo[int] = Memo(3)
    for key in range(5):
        assert memo.get(key, lambda key=key: key * key) == key * key
    assert len(memo) == 3 and memo.made == 5
    assert 0 not in memo and 1 not in memo
    assert memo.get(2, lambda: -1) == 4
    memo.get(5, lambda: 25)
    assert 2 in memo and 3 not in memo
    assert memo.get(0, lambda: 0) == 0 and memo.made == 7
    with pytest.raises(ValueError, match="at least one value"):
        Memo(0)


def test_stop_functions_stay_within_their_bound() -> None:
    """More distinct ``--stop-when`` expressions than the memo holds: it keeps its size, and the
    functions bound to each run's parameters give the expression's value."""
    system = load("pendulum")
    numeric = compile_model(system.model)
    before = FUNCTIONS.made
    count = FUNCTIONS.size + 4
    for k in range(count):
        options = SimulateOptions.resolve(system.spec.simulate,
                                          {"stop_when": f"theta - {k + 1}*l/1000"})
        (stop,) = compile_events(system.spec, numeric.with_parameters({"l": 2.0}),
                                 run_events(options))
        assert stop.function(0.0, 0.5, 0.0) == pytest.approx(0.5 - (k + 1) * 2.0 / 1000,
                                                             abs=1e-15)
        assert len(FUNCTIONS) <= FUNCTIONS.size
    assert FUNCTIONS.made - before == count


def test_the_memos_of_compiled_code_are_bounded() -> None:
    """Each memo of compiled code or loaded libraries in the process is a :class:`Memo` of a
    declared size (a plain dict there grew with every expression, chart or structure met)."""
    from lagsim.run import events
    from lagsim.run.engines import cloop, cradau, rattle
    from lagsim.sweep import core as sweep

    memos = (events.FUNCTIONS, cloop.STOP_LIBRARIES, cloop.LIBRARIES, cloop.MAPS,
             cradau.LIBRARIES, rattle.CODE, sweep.SESSIONS)
    for memo in memos:
        assert isinstance(memo, Memo)
        assert 1 <= memo.size <= 16
        assert len(memo) <= memo.size
