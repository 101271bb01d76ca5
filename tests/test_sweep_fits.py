"""``lagsim sweep FILE --fit NAMES --data GLOB`` (issue 26): one fit per data file on the
sweep's Dask engine, one row each with the estimates and their standard errors."""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest
from click.testing import CliRunner

import lagsim
from lagsim.cli import main

TRUTHS = ((0.3, 1.1), (0.45, 1.25), (0.6, 1.4))
"""(c, F0) of each synthetic file."""


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _tracks(folder, noise=0.0):
    system = lagsim.load("driven_damped_pendulum")
    rng = np.random.default_rng(5)
    for k, (c, f0) in enumerate(TRUTHS):
        run = system.simulate(parameters={"c": c, "F0": f0}, t_end=4.0, samples=41,
                              rtol=1e-12, atol=1e-12)
        theta = run["theta"] + noise * rng.standard_normal(len(run))
        np.savetxt(folder / f"track_{k}.csv", np.column_stack([run["t"], theta]),
                   delimiter=",", header="t,theta", comments="", fmt="%.17g")


def _sweep(args):
    out = CliRunner().invoke(main, ["sweep", "driven_damped_pendulum", *args])
    return out


def test_three_files_fitted_one_row_each(tmp_path):
    """Exact synthetic tracks of three known (c, F0): each row's estimates recover its file's
    values to 1e-7, in the order of the files, with finite standard errors and rank 2; the
    fit of one file equals ``lagsim fit`` of that file."""
    _tracks(tmp_path)
    table = tmp_path / "fits.csv"
    out = _sweep(["--fit", "c,F0", "--data", str(tmp_path / "track_*.csv"), "--rtol", "1e-11",
                  "--atol", "1e-11", "--scheduler", "synchronous", "-o", str(table)])
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(table.open()))
    assert list(rows[0]) == ["run", "data", "c", "F0", "se_c", "se_F0", "residual_variance",
                             "rank", "condition", "fit_runs", "error"]
    assert [r["data"] for r in rows] == [str(tmp_path / f"track_{k}.csv") for k in range(3)]
    for row, (c, f0) in zip(rows, TRUTHS):
        assert float(row["c"]) == pytest.approx(c, rel=1e-7)
        assert float(row["F0"]) == pytest.approx(f0, rel=1e-7)
        assert np.isfinite(float(row["se_c"])) and row["rank"] == "2"
        assert row["error"] == ""
    alone = lagsim.load("driven_damped_pendulum").fit(tmp_path / "track_1.csv", "c,F0",
                                                      rtol=1e-11, atol=1e-11)
    assert float(rows[1]["c"]) == alone.estimates[0]
    assert float(rows[1]["se_F0"]) == alone.standard_errors[1]


def test_a_bad_file_is_its_rows_error_and_exit_1(tmp_path):
    _tracks(tmp_path)
    (tmp_path / "track_9.csv").write_text("t,theta\n0,0.1\n1,nan\n", encoding="utf-8")
    table = tmp_path / "fits.csv"
    out = _sweep(["--fit", "c,F0", "--data", str(tmp_path / "track_*.csv"), "--scheduler",
                  "synchronous", "-o", str(table)])
    assert out.exit_code == 1
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 4 and "not a finite number" in rows[3]["error"]
    assert all(r["error"] == "" for r in rows[:3]) and rows[3]["c"] == "nan"


@pytest.mark.parametrize(("args", "message"), [
    (["--fit", "c"], "add --data"),
    (["--data", "x.csv"], "add --fit"),
    (["--fit", "c", "--data", "nothing_*.csv"], "matches no file"),
    (["--weights", "theta=2"], "--weights belongs to a sweep of fits"),
])
def test_fit_sweep_refusals_are_one_line(tmp_path, args, message):
    out = _sweep([*args, "--scheduler", "synchronous", "-o", str(tmp_path / "o.csv")])
    assert out.exit_code == 2 and message in out.output
