"""`lagsim sweep`'s engine without --scheduler (issue 31): a sweep too small to gain from worker
processes runs in this process and says so; --workers and --scheduler are always honoured."""

from __future__ import annotations

import concurrent.futures
import signal
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from lagsim.cli import main
from lagsim.sweep import core as sw

SMALL = ("sweep", "pendulum", "--grid", "theta=0.1:1:4", "--t-end", "0.1")
"""Four 0.1 s runs of the pendulum: 0.7 ms a run once the model is loaded."""


def test_a_few_milliseconds_of_work_stay_in_this_process():
    """Three runs of 0.7 ms (the small sweep above) against a pool that costs
    POOL_START_SECONDS before its first row."""
    assert sw.choose_engine(0.0007, 3, None, None) == sw.IN_PROCESS


def test_the_estimate_is_compared_with_the_pool_s_start():
    below = sw.POOL_START_SECONDS / 100 * 0.99
    assert sw.choose_engine(below, 100, None, None) == sw.IN_PROCESS
    assert sw.choose_engine(sw.POOL_START_SECONDS / 100, 100, None, None) == sw.POOL


def test_a_large_sweep_goes_to_the_pool():
    """Issue 31's sweep: 2,000 runs of 2 s of the double pendulum, a few ms each."""
    assert sw.choose_engine(0.005, 1999, None, None) == sw.POOL


@pytest.mark.parametrize(("scheduler", "workers", "engine"), [
    (None, 2, sw.POOL), (None, 1, sw.POOL), ("synchronous", None, "synchronous"),
    ("tcp://127.0.0.1:8786", None, sw.CLUSTER)])
def test_an_explicit_engine_is_honoured_however_small_the_sweep(scheduler, workers, engine):
    assert sw.choose_engine(0.0007, 3, scheduler, workers) == engine


class Pool:
    """A stand-in for ProcessPoolExecutor that records the pools made and runs their tasks
    here (the worker's initializer included, its Ctrl-C handler put back at shutdown)."""

    made: list[int] = []

    def __init__(self, workers: int, mp_context: Any, initializer: Callable[..., None],
                 initargs: tuple[Any, ...]) -> None:
        Pool.made.append(workers)
        self.handler = signal.getsignal(signal.SIGINT)
        initializer(*initargs)

    def submit(self, task: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_result(task(*args))
        return future

    def shutdown(self, wait: bool, cancel_futures: bool) -> None:
        signal.signal(signal.SIGINT, self.handler)


@pytest.fixture
def pools(monkeypatch):
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Pool)
    Pool.made = []
    return Pool.made


def test_a_small_sweep_starts_no_worker_and_says_why_with_debug(pools):
    """No pool is made; --debug shows the note; the table is --scheduler synchronous's."""
    runner = CliRunner()
    alone = runner.invoke(main, [*SMALL, "--scheduler", "synchronous"])
    chosen = runner.invoke(main, ["--debug", *SMALL])
    assert alone.exit_code == 0 and chosen.exit_code == 0, alone.output + chosen.output
    assert pools == []
    assert chosen.stdout == alone.stdout
    assert len(alone.stdout.splitlines()) == 5
    notes = [line for line in chosen.stderr.splitlines() if line.startswith("lagsim: note:")]
    assert len(notes) == 1
    assert notes[0].startswith("lagsim: note: the 3 runs after run 0 are about ")
    assert notes[0].endswith(f"less than starting worker processes (about "
                             f"{sw.POOL_START_SECONDS:g} s): they run in this process; "
                             "--workers N runs them on worker processes anyway")


def test_the_note_stays_off_a_script_s_stderr(pools):
    """stderr not a terminal and no --debug: the sweep's stderr is empty."""
    result = CliRunner().invoke(main, list(SMALL))
    assert result.exit_code == 0
    assert pools == []
    assert result.stderr == ""


def test_workers_asked_for_start_the_pool_however_small_the_sweep(pools):
    result = CliRunner().invoke(main, [*SMALL, "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert pools == [2]
    assert len(result.stdout.splitlines()) == 5
    assert result.stderr == ""


def test_the_api_makes_the_same_choice(pools):
    """``scheduler=None`` without ``workers``: no pool for the small sweep, and the frame is
    ``scheduler="synchronous"``'s; ``workers=2`` makes the pool."""
    import lagsim

    pendulum = lagsim.load("pendulum")
    grid = {"theta": (0.1, 1.0, 4)}
    chosen = pendulum.sweep(grid=grid, t_end=0.1, scheduler=None)
    assert pools == []
    alone = pendulum.sweep(grid=grid, t_end=0.1)
    assert chosen.equals(alone) and len(chosen) == 4
    pendulum.sweep(grid=grid, t_end=0.1, scheduler=None, workers=2)
    assert pools == [2]
