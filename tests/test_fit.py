"""``lagsim fit`` and ``System.fit`` (issue 26): parameters and initial values recovered from
synthetic data of known values, the identifiability report, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import lagsim
from lagsim.analysis.fit import FitError
from lagsim.errors import InputError

TRUE = dict(rtol=1e-12, atol=1e-12)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _write(path: Path, columns: dict[str, np.ndarray]) -> Path:
    np.savetxt(path, np.column_stack(list(columns.values())), delimiter=",",
               header=",".join(columns), comments="", fmt="%.17g")
    return path


def _track(tmp_path, system, parameters, noise=0.0, seed=0, t_end=10.0, samples=101,
           columns=("theta",), initial=None, times=None):
    run = lagsim.load(system).simulate(parameters=parameters, initial=initial, t_end=t_end,
                                       samples=samples, **TRUE)
    rng = np.random.default_rng(seed)
    rows = np.arange(len(run)) if times is None else times
    data = {"t": run["t"][rows]}
    for c in columns:
        data[c] = run[c][rows] + noise * rng.standard_normal(len(rows))
    return _write(tmp_path / "data.csv", data)


def test_damped_driven_pendulum_recovered_exactly_from_exact_data(tmp_path):
    data = _track(tmp_path, "driven_damped_pendulum", {"c": 0.4, "F0": 1.2})
    report = lagsim.load("driven_damped_pendulum").fit(data, ["c", "F0"], **TRUE)
    assert report.estimates == pytest.approx((0.4, 1.2), rel=1e-8)
    assert report.rank == 2 and report.undetermined == ()


def test_noisy_estimates_lie_within_their_standard_errors(tmp_path):
    """σ = 1e-3 Gaussian noise, seeded: each estimate within 4 standard errors of the truth,
    and s² within 30 % of σ² (101 residuals: s²/σ² has a relative spread of √(2/99) = 14 %)."""
    data = _track(tmp_path, "driven_damped_pendulum", {"c": 0.4, "F0": 1.2}, noise=1e-3,
                  seed=7)
    report = lagsim.load("driven_damped_pendulum").fit(data, "c,F0", **TRUE)
    for value, error, truth in zip(report.estimates, report.standard_errors, (0.4, 1.2)):
        assert error is not None and 0 < error < 1e-2
        assert abs(value - truth) < 4 * error
    assert report.residual_variance == pytest.approx(1e-6, rel=0.3)
    assert -1 <= report.correlation[0][1] <= 1


def test_pendulum_theta_fixes_g_over_l_not_m(tmp_path):
    data = _track(tmp_path, "pendulum", {"l": 1.3}, t_end=5.0, samples=51)
    report = lagsim.load("pendulum").fit(data, ["l", "g", "m"], **TRUE)
    assert report.rank == 1
    assert report.standard_errors == (None, None, None)
    assert report.estimates[2] == 1.0
    assert len(report.determined) == 1
    text, value, _ = report.determined[0]
    if text == "l^1 g^-1":
        value = 1 / value
    else:
        assert text == "l^-1 g^1"
    assert value == pytest.approx(9.81 / 1.3, rel=1e-8)
    assert any(u.startswith("m (the observed columns do not depend on it") for u in
               report.undetermined)
    assert "not determined" in report.to_text()


def test_uneven_samples_and_an_initial_value(tmp_path):
    rng = np.random.default_rng(3)
    rows = np.sort(rng.choice(np.arange(1, 201), 40, replace=False))
    data = _track(tmp_path, "pendulum", {"l": 1.3}, initial={"theta": 0.4, "theta_dot": 0.0},
                  t_end=4.0, samples=201, times=rows)
    report = lagsim.load("pendulum").fit(data, ["l", "theta"], **TRUE)
    assert report.estimates == pytest.approx((1.3, 0.4), rel=1e-7)


def test_natural_coordinates_fit_the_rod_length(tmp_path):
    data = _track(tmp_path, "pendulum_natural", {"l": 1.2}, t_end=3.0, samples=61,
                  columns=("x", "y"))
    report = lagsim.load("pendulum_natural").fit(data, ["l"], **TRUE)
    assert report.estimates[0] == pytest.approx(1.2, rel=1e-8)


def test_json_report(tmp_path):
    data = _track(tmp_path, "pendulum", {"l": 1.3}, t_end=5.0, samples=51)
    done = subprocess.run([sys.executable, "-m", "lagsim", "fit", "pendulum", str(data), "--fit",
                           "l", "--bounds", "l=0.5:3", "--rtol", "1e-12", "--atol", "1e-12",
                           "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["estimates"]["l"]["value"] == pytest.approx(1.3, rel=1e-8)
    assert out["identifiability"]["rank"] == 1


@pytest.mark.parametrize("columns, message", [
    ({"t": [0, 1, 2], "phi": [0, 1, 2]},
     "data column 'phi' is not a coordinate, velocity or multiplier of the model"),
    ({"t": [0, 1, 1], "theta": [0, 1, 2]},
     "the time column does not increase: data row 3 has t = 1.0 after 1.0"),
    ({"t": [0, 1, 2], "theta": [0, np.nan, 2]}, "data row 2, column 'theta': nan"),
    ({"t": [0, 1], "theta": [0, 1]}, "2 data values cannot fit 2 unknowns"),
])
def test_bad_data_is_one_line_exit_2(tmp_path, columns, message):
    data = _write(tmp_path / "bad.csv", {k: np.array(v, dtype=float) for k, v in columns.items()})
    done = subprocess.run([sys.executable, "-m", "lagsim", "fit", "pendulum", str(data), "--fit",
                           "l,g"], capture_output=True, text=True)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lagsim: error: ") and message in lines[0]


def test_unknown_fit_name_and_bad_bounds(tmp_path):
    data = _track(tmp_path, "pendulum", {"l": 1.3}, t_end=1.0, samples=11)
    with pytest.raises(InputError, match="'lenght' is neither a parameter"):
        lagsim.load("pendulum").fit(data, ["lenght"])
    done = subprocess.run([sys.executable, "-m", "lagsim", "fit", "pendulum", str(data), "--fit",
                           "l", "--bounds", "g=1:2"], capture_output=True, text=True)
    assert done.returncode == 2 and "--bounds names 'g', which is not fitted" in done.stderr


def test_no_convergence_exit_1_with_the_best_point(tmp_path):
    data = _track(tmp_path, "driven_damped_pendulum", {"c": 0.4, "F0": 1.2})
    with pytest.raises(FitError, match="did not converge after 2 runs .*best point so far: c ="):
        lagsim.load("driven_damped_pendulum").fit(data, ["c", "F0"], max_runs=2, **TRUE)
    done = subprocess.run([sys.executable, "-m", "lagsim", "fit", "driven_damped_pendulum",
                           str(data), "--fit", "c,F0", "--max-runs", "2"],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "best point so far" in done.stderr
