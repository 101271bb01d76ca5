"""A sweep on a Dask cluster (issue 31's sweeps goal): the rows come back as one compact block
a chunk, equal number for number; the chunks shrink towards the end so that the workers finish
together; the workers are warmed while the client does its first runs, and the chunks are sized
from the timed runs after run 0 (run 0's time is the client's one-time costs); the rows are
those of one process, in run order."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from lagsim.spec.system import read_source
from lagsim.sweep import core as sw


def rows_of(block: sw.Block) -> list[tuple[int, list[str], str, tuple[str, ...], float]]:
    return [(r.index, list(map(repr, r.numbers)), r.error, r.notes, r.seconds)
            for r in block.rows()]


def test_a_block_gives_the_rows_back_number_for_number_in_fewer_bytes():
    """NaN, ±inf, −0.0 and the last bit of a float survive; errors and notes stay with their
    runs; 250 rows of eight numbers (issue 31's chunk of the double pendulum) pickle to fewer
    bytes as one block than as 250 rows."""
    tricky = (math.nan, math.inf, -math.inf, -0.0, 0.1 + 0.2, 5e-324, 1.7976931348623157e308,
              -1.0)
    rows = [sw.Row(7, tricky, "", (), 0.25),
            sw.Row(8, (math.nan,) * 8, "the mass matrix is singular", ("note a", "note b"),
                   1e-3),
            sw.Row(9, tuple(np.linspace(0, 1, 8).tolist()), "", ("only a note",), 2.5e-4)]
    block = pickle.loads(pickle.dumps(sw.Block.of(rows), protocol=5))
    assert rows_of(block) == [(r.index, list(map(repr, r.numbers)), r.error, r.notes,
                               r.seconds) for r in rows]
    many = [sw.Row(i, tuple(np.random.default_rng(i).normal(size=8).tolist()), "", (), 1e-3)
            for i in range(250)]
    assert len(pickle.dumps(sw.Block.of(many), protocol=5)) < \
        0.8 * len(pickle.dumps(many, protocol=5))


def finish_times(sizes: list[int], workers: int) -> list[int]:
    """Each worker takes the next chunk when it is free (Dask's queue, a pool's): the runs each
    has done when the chunks run out, the runs all taking equal time."""
    ends = [0] * workers
    for size in sizes:
        k = ends.index(min(ends))
        ends[k] += size
    return ends


@pytest.mark.parametrize(("runs", "seconds", "workers"),
                         [(1999, 1e-3, 2), (1000, 0.01, 2), (5000, 1e-3, 8), (37, 0.05, 2),
                          (3, 1e-3, 2)])
def test_chunks_cover_the_runs_in_order_and_the_workers_finish_together(runs, seconds,
                                                                         workers):
    """In run order, no chunk more than CHUNK_SECONDS of work, none but the last less than
    MIN_CHUNK_SECONDS (unless a worker would have no chunk: three runs of 1 ms on two workers
    are two chunks), smaller and smaller but for the last (a rest joins it), and the workers
    end within one smallest chunk of each other (with chunks of one size, 1999 runs in chunks
    of 250 on two workers end 250 runs apart)."""
    indices = list(range(1, runs + 1))
    parts = sw.chunks(indices, np.arange(runs + 1.0).reshape(-1, 1), seconds, workers)
    assert [i for p in parts for i, _ in p] == indices
    assert all(v == [float(i)] for p in parts for i, v in p)
    sizes = [len(p) for p in parts]
    most = int(sw.CHUNK_SECONDS / seconds)
    least = min(max(1, int(sw.MIN_CHUNK_SECONDS / seconds)), math.ceil(runs / workers))
    assert max(sizes) <= most
    assert min(sizes[:-1], default=least) >= least
    assert sizes[:-1] == sorted(sizes[:-1], reverse=True)
    assert len(sizes) == 1 or sizes[-1] < 2 * least
    assert len(parts) >= min(runs, workers)
    ends = finish_times(sizes, workers)
    assert max(ends) - min(ends) <= max(least, sizes[-1])


def pendulum(runs: int) -> tuple[sw.Job, sw.Plan]:
    text, label, stem = read_source("pendulum")
    plan = sw.Plan(("theta",), np.linspace(0.1, 3.0, runs).reshape(runs, 1))
    return sw.Job(text, label, stem, {"t_end": "0.5"}, {}, {}, plan.names,
                  runs=runs).keyed(), plan


def test_a_dask_cluster_gives_the_rows_of_one_process_in_run_order(monkeypatch):
    """A LocalCluster of two single-threaded workers (threads of this process: no second
    process to start): each worker warmed before its first chunk (Dask's task stream), the
    chunks sized from the least time of the runs after run 0 that the client timed (not run
    0's, which in a fresh client is the model's loading: 0.7 s for a 1 ms run, which made one
    task a run), and every row equal to the synchronous sweep's, in run order."""
    distributed = pytest.importorskip("distributed")
    job, plan = pendulum(60)
    sized: list[tuple[list[int], float]] = []
    chunks = sw.chunks

    def spy_chunks(indices, values, seconds, workers):
        sized.append((list(indices), seconds))
        return chunks(indices, values, seconds, workers)

    monkeypatch.setattr(sw, "chunks", spy_chunks)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  protocol="tcp", dashboard_address=None,
                                  host="127.0.0.1") as cluster, \
            distributed.Client(cluster) as client:
        client.get_task_stream()
        on_cluster = sw.execute(job, plan, cluster.scheduler_address, None)
        stream = client.get_task_stream()
        workers = list(cluster.scheduler_info["workers"])
    first: dict[str, str] = {}
    for record in sorted(stream, key=lambda r: r["startstops"][0]["start"]):
        first.setdefault(record["worker"], record["key"].split("-")[0])
    assert len(workers) == 2 and first == dict.fromkeys(workers, "warm")
    (rest, seconds), = sized
    assert sum(r["key"].startswith("run_chunk") for r in stream) == len(
        chunks(rest, plan.values, seconds, 2))
    alone = sw.execute(job, plan, "synchronous", None)
    assert [r.index for r in on_cluster] == list(range(60))
    assert [list(map(repr, r.numbers)) for r in on_cluster] == \
        [list(map(repr, r.numbers)) for r in alone]
    assert not any(r.error for r in on_cluster)
    timed = on_cluster[1:rest[0]]
    assert 1 <= len(timed) <= sw.TIMED_RUNS and rest == list(range(rest[0], 60))
    assert seconds == min(r.seconds for r in timed)
    assert sum(r.seconds for r in timed[:-1]) < sw.MIN_CHUNK_SECONDS
