"""`lagsim sweep` (issue 12): the exact pendulum period, bit-for-bit equality with `lagsim
simulate` on every engine, failures recorded, the table's formats, and the input errors."""

from __future__ import annotations

import csv
import io
import math
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.special import ellipk

from lagsim.cli import main
from lagsim.sweep import core as sw

SYNC = ("--scheduler", "synchronous")


def invoke(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def last_row(simulate_csv: str) -> dict[str, str]:
    return rows(simulate_csv)[-1]


def test_period_of_the_pendulum_against_the_elliptic_integral():
    """T(θ0) = 4 K(k) / √(g/l), k = sin(θ0/2) (the large-amplitude pendulum, e.g. Landau and
    Lifshitz, Mechanics §11 problem 1; the equation θ̈ = −(g/l) sin θ of seed 001 Example 10.5):
    half a period from rest at θ0 is the first zero of θ̇, so 2·final(t) with --stop-when
    theta_dot is the period. 50 amplitudes, to 1e-9 relative."""
    result = invoke("sweep", "pendulum", "--grid", "theta=0.05:3.05:50", "--stop-when",
                    "theta_dot", "--summary", "period=2*final(t)", "--samples", "2",
                    "--rtol", "1e-13", "--atol", "1e-13", "--t-end", "20", *SYNC)
    assert result.exit_code == 0, result.output
    table = rows(result.stdout)
    assert len(table) == 50
    g, length = 9.81, 1.0
    for row in table:
        theta0 = float(row["theta0"])
        exact = 4 * ellipk(math.sin(theta0 / 2) ** 2) / math.sqrt(g / length)
        assert float(row["period"]) == pytest.approx(exact, rel=1e-9, abs=0)
        assert float(row["stop_time"]) == pytest.approx(exact / 2, rel=1e-9, abs=0)
        # at the half period the bob is at the other turning point, -θ0 (energy conservation)
        assert float(row["theta"]) == pytest.approx(-theta0, abs=1e-9)
        assert row["error"] == ""


@pytest.mark.subprocess  # the sweep starts its two worker processes itself
def test_the_same_bits_as_simulate_on_a_local_cluster_and_in_one_process():
    """A constrained system (index-1 with projection): every row of a 2-process LocalCluster
    equals the synchronous sweep's, and two of them equal `lagsim simulate` run by run."""
    args = ("sweep", "pendulum_natural", "--grid", "l=0.5:2:3", "--values", "x_dot=0,0.5",
            "--t-end", "2", "--samples", "51", "--summary", "top=max(y)")
    cluster = invoke(*args, "--workers", "2")
    alone = invoke(*args, *SYNC)
    assert cluster.exit_code == 0 and alone.exit_code == 0, cluster.output + alone.output
    assert cluster.stdout == alone.stdout
    table = rows(alone.stdout)
    assert len(table) == 6 and [r["run"] for r in table] == [str(i) for i in range(6)]
    for row in (table[1], table[4]):
        single = invoke("simulate", "pendulum_natural", "--set", f"l={row['l']}", "--init",
                        f"x_dot={row['x_dot0']}", "--t-end", "2", "--samples", "51")
        assert single.exit_code == 0
        final = last_row(single.stdout)
        for name in ("x", "y", "x_dot", "y_dot"):
            assert row[name] == final[name]
        ys = [float(r["y"]) for r in rows(single.stdout)]
        assert float(row["top"]) == max(ys)
        assert float(row["max_residual_rod"]) == max(abs(float(r["residual_rod"]))
                                                     for r in rows(single.stdout))


def test_a_failing_run_is_recorded_and_the_sweep_goes_on():
    """l = 0 makes the mass matrix singular: that run's row has the error, the others are
    computed, and the exit status is 1 with the count on stderr."""
    result = invoke("sweep", "pendulum", "--values", "l=1,0,2", "--t-end", "1", "--samples",
                    "3", *SYNC)
    assert result.exit_code == 1
    table = rows(result.stdout)
    assert [bool(r["error"]) for r in table] == [False, True, False]
    assert "mass matrix" in table[1]["error"]
    assert math.isnan(float(table[1]["theta"]))
    assert math.isfinite(float(table[2]["theta"]))
    assert "lagsim: error: 1 of 3 runs failed" in result.stderr


def test_random_draws_are_reproducible_and_in_range():
    a = sw.random_axis(["theta=0.1:0.2", "l=1:3"], 40, 7)
    b = sw.random_axis(["theta=0.1:0.2", "l=1:3"], 40, 7)
    c = sw.random_axis(["theta=0.1:0.2", "l=1:3"], 40, 8)
    assert a == b and a != c
    values = np.array(a.rows)
    assert values.shape == (40, 2)
    assert np.all((values[:, 0] >= 0.1) & (values[:, 0] < 0.2))
    assert np.all((values[:, 1] >= 1) & (values[:, 1] < 3))


def test_axes_combine_as_a_product_and_the_table_reads_runs(tmp_path):
    runs = tmp_path / "runs.csv"
    runs.write_text("theta,l\n0.1,1\n0.2,2\n")
    axes = [sw.values_axis("m=1,2,3"), sw.table_axis(str(runs))]
    plan = sw.plan(axes, ["m", "g", "l"], ["theta"])
    assert plan.names == ("m", "theta", "l")
    assert plan.values.tolist() == [[1, 0.1, 1], [1, 0.2, 2], [2, 0.1, 1], [2, 0.2, 2],
                                    [3, 0.1, 1], [3, 0.2, 2]]
    result = invoke("sweep", "pendulum", "--table", str(runs), "--t-end", "0.5", "--samples",
                    "2", *SYNC)
    table = rows(result.stdout)
    assert [(r["theta0"], r["l"]) for r in table] == [("0.1", "1.0"), ("0.2", "2.0")]


def test_parquet_table_and_saved_trajectories(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "sweep.parquet"
    saved = tmp_path / "runs"
    args = ("sweep", "pendulum", "--values", "theta=0.1,0.2", "--t-end", "1", "--samples",
            "11", *SYNC)
    assert invoke(*args, "-o", str(out), "--save-trajectories", str(saved)).exit_code == 0
    text = invoke(*args).stdout
    data = pq.read_table(out)
    assert data.column_names == list(rows(text)[0])
    for k, row in enumerate(rows(text)):
        for name in ("theta", "theta_dot", "energy_drift"):
            assert repr(data.column(name)[k].as_py()) == row[name]
    single = invoke("simulate", "pendulum", "--init", "theta=0.2", "--t-end", "1", "--samples",
                    "11").stdout
    assert (saved / "run_1.csv").read_text() == single
    assert sorted(p.name for p in saved.iterdir()) == ["run_0.csv", "run_1.csv"]


def test_parquet_without_pyarrow_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    result = CliRunner().invoke(main, ["sweep", "pendulum", "--values", "theta=0.1,0.2", "-o",
                                       str(tmp_path / "s.parquet"), *SYNC])
    assert result.exit_code == 2
    assert result.stderr == ("lagsim: error: -o: Parquet output needs pyarrow, which is not "
                             "installed: pip install 'lagsim[parquet]' (or pyarrow), or write "
                             "CSV\n")
    assert not (tmp_path / "s.parquet").exists()


@pytest.mark.parametrize(("args", "message"), [
    (("--grid", "thet=0:1:5"), "--grid: no parameter or initial value 'thet' (did you mean "
     "'theta'?); a sweep varies m, g, l, theta, theta_dot"),
    (("--grid", "theta=0:1:1"), "--grid: theta: the count must be a whole number of at least 2 "
     "(both ends are values), got '1'; for one value use --set or --init"),
    (("--grid", "theta=0:1"), "--grid: expected NAME=START:STOP:COUNT (e.g. theta=0.1:3:50), got "
     "'theta=0:1'"),
    (("--grid", "theta=1:1:4"), "--grid: theta: the start and the stop are both 1.0; give a "
     "range"),
    (("--grid", "theta=0:x:4"), "--grid: the stop of theta 'x': unknown symbol 'x'; a value is a "
     "number or an expression in numbers, such as 1.5 or pi/4"),
    (("--values", "l=1,2", "--grid", "l=1:2:3"), "--values: 'l' is swept twice (--grid and "
     "--values); sweep each name once"),
    (("--values", "theta=1,2", "--init", "theta=0.5"), "--values: 'theta' is swept and also set "
     "with --init; drop one"),
    (("--random", "theta=1:0", "--runs", "3"), "--random: theta: the high end must be greater "
     "than the low end, got 1.0:0.0"),
    (("--random", "theta=0:1"), "--random: --random needs --runs N, the number of draws"),
    (("--runs", "4",), "--runs: --runs counts the --random draws; give --random NAME=LOW:HIGH "
     "too"),
    ((), "lagsim sweep: nothing to sweep"),
    (("--values", "theta=1,2", "--summary", "max(thta)"), "--summary: 'max(thta)' uses 'thta', "
     "which is neither a column of the run nor a parameter (did you mean 'theta'?)"),
    (("--values", "theta=1,2", "--summary", "2*theta"), "--summary: '2*theta' has one value per "
     "sample, not one per run; reduce it with max, min, mean, final, first, e.g. max(2*theta)"),
    (("--values", "theta=1,2", "--summary", "amp=maxx(theta)"), "--summary: 'maxx(theta)' calls "
     "'maxx', which is not a known function (did you mean 'max'?)"),
    (("--values", "theta=1,2", "--summary", "theta=max(theta)"), "--summary: the sweep's table "
     "has a column 'theta' already"),
    (("--values", "theta=1,2", "--workers", "2", "--scheduler", "synchronous"), "--workers: "
     "--workers sizes the local cluster; --scheduler synchronous runs in this process alone"),
    (("--values", "theta=1,2", "--workers", "2", "--scheduler", "tcp://h:8786"), "--workers: "
     "--workers sizes the local cluster; --scheduler tcp://h:8786 has its own workers"),
])
def test_input_errors_are_one_line_exit_2(args, message, tmp_path):
    result = CliRunner().invoke(main, ["sweep", "pendulum", *args])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith(f"lagsim: error: {message}")
    assert result.stderr.count("\n") == 1


def test_table_errors_name_the_line(tmp_path):
    runs = tmp_path / "runs.csv"
    runs.write_text("theta\n0.1\nabc\n")
    result = CliRunner().invoke(main, ["sweep", "pendulum", "--table", str(runs)])
    assert result.exit_code == 2
    assert result.stderr == f"lagsim: error: {runs}:3: the value of theta 'abc' is not a number\n"


def test_an_unreachable_scheduler_is_an_input_error(monkeypatch):
    monkeypatch.setattr(sw, "CONNECT_SECONDS", 0.5)
    result = CliRunner().invoke(main, ["sweep", "pendulum", "--values", "theta=0.1,0.2",
                                       "--t-end", "0.1", "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2
    assert result.stderr.startswith("lagsim: error: --scheduler: cannot reach the Dask "
                                    "scheduler 'tcp://127.0.0.1:9'")


def test_summaries_see_each_run_s_own_parameters(tmp_path):
    """sqrt(g/l) per run, and the small-angle period 2π√(l/g) within the amplitude's
    correction (T ≈ T0 (1 + θ0²/16), Landau and Lifshitz §11 problem 1) for θ0 = 0.01."""
    result = invoke("sweep", "pendulum", "--values", "l=0.5,2", "--init", "theta=0.01",
                    "--stop-when", "theta_dot", "--samples", "2", "--summary", "omega=sqrt(g/l)",
                    "--summary", "period=2*final(t)", *SYNC)
    assert result.exit_code == 0, result.output
    for row in rows(result.stdout):
        length = float(row["l"])
        assert float(row["omega"]) == math.sqrt(9.81 / length)
        small = 2 * math.pi * math.sqrt(length / 9.81) * (1 + 0.01**2 / 16)
        assert float(row["period"]) == pytest.approx(small, rel=1e-8)


def test_trajectories_as_one_parquet_dataset(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    folder = tmp_path / "runs.parquet"
    result = invoke("sweep", "pendulum", "--values", "theta=0.1,0.2,0.3", "--t-end", "1",
                    "--samples", "11", "--save-trajectories", str(folder), *SYNC)
    assert result.exit_code == 0
    data = pq.read_table(folder)
    assert sorted(set(data.column("run").to_pylist())) == [0.0, 1.0, 2.0]
    first = data.filter(data.column("run").to_numpy() == 2.0)
    single = rows(invoke("simulate", "pendulum", "--init", "theta=0.3", "--t-end", "1",
                         "--samples", "11").stdout)
    assert [repr(x) for x in first.column("theta").to_pylist()] == [r["theta"] for r in single]


@pytest.mark.parametrize(("system", "values"), [
    ("pendulum_natural", {"x": 0.3, "y_dot": 0.1}),
    ("pendulum_natural", {"l": 2.0, "x_dot": 0.5}),
    ("double_pendulum", {"theta2": 1.0, "theta1_dot": 0.2}),
])
def test_a_run_s_spec_is_the_parser_s_with_set_and_init(system, values):
    """The session re-parses only when parameters change; otherwise it puts initial values in
    itself: the spec must be the one ``parse_spec`` makes from --set/--init (every field,
    locations included), with fixed --set/--init values kept."""
    from lagsim.spec.system import parse_spec, read_source

    text, label, stem = read_source(system)
    job = sw.Job(text, label, stem, {}, {"g": 9.0}, {"y": -0.5} if "x" in values else {},
                 tuple(values)).keyed()
    state = sw.Session(job)
    parameters = {k: v for k, v in values.items() if k in state.parameters}
    initial = {k: v for k, v in values.items() if k not in state.parameters}
    expected = parse_spec(text, label, stem, {**job.overrides, **parameters},
                          {**job.initial, **initial})
    assert state.run_spec(values) == expected
    assert state.run_spec(values) == expected  # the second time from the kept parse
