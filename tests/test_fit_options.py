"""``lagsim fit --weights/--sigma``, ``--starts`` and ``--plot`` (issue 26): weighted least
squares, several seeded starts within the bounds, and the figure of the data and the fitted
model."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import lagsim
from lagsim import api
from lagsim.analysis.fit import AGREE_RTOL
from lagsim.cli import main
from lagsim.errors import InputError
from lagsim.spec.options import FLAGS, WORDING

TRUE = dict(rtol=1e-12, atol=1e-12)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _data(path: Path, system: str, parameters: dict, noise: dict[str, float], t_end: float,
          samples: int, seed: int = 3) -> Path:
    run = lagsim.load(system).simulate(parameters=parameters, t_end=t_end, samples=samples,
                                       **TRUE)
    rng = np.random.default_rng(seed)
    columns = {"t": run["t"]}
    for c, sigma in noise.items():
        columns[c] = run[c] + sigma * rng.standard_normal(len(run))
    np.savetxt(path, np.column_stack(list(columns.values())), delimiter=",",
               header=",".join(columns), comments="", fmt="%.17g")
    return path


def test_a_column_weighted_out_leaves_the_fit_of_the_others(tmp_path):
    """θ̇ carries noise 100 times θ's: weighted by 1e-12 it leaves the fit of θ alone (the
    estimates of fitting θ only, to 1e-6), while at weight 1 it moves them."""
    data = _data(tmp_path / "d.csv", "driven_damped_pendulum", {"c": 0.4, "F0": 1.2},
                 {"theta": 1e-3, "theta_dot": 0.1}, 8.0, 81)
    system = lagsim.load("driven_damped_pendulum")
    alone = system.fit(data, "c,F0", observe="theta", **TRUE)
    weighted = system.fit(data, "c,F0", weights="theta_dot=1e-12", **TRUE)
    plain = system.fit(data, "c,F0", **TRUE)
    assert weighted.estimates == pytest.approx(alone.estimates, rel=1e-6)
    assert weighted.weighting == "weights"
    assert max(abs(a / b - 1) for a, b in zip(plain.estimates, alone.estimates)) > 1e-4


def test_sigma_gives_standard_errors_from_sigma_and_chi_square(tmp_path):
    """One column, σ given: the same estimates; the covariance σ²(JᵀJ)⁻¹ instead of
    s²(JᵀJ)⁻¹, so each standard error scales by σ/s; χ²/(N − p) = s²/σ²."""
    sigma = 2e-3
    data = _data(tmp_path / "d.csv", "driven_damped_pendulum", {"c": 0.4, "F0": 1.2},
                 {"theta": sigma}, 8.0, 81)
    system = lagsim.load("driven_damped_pendulum")
    plain = system.fit(data, "c,F0", **TRUE)
    known = system.fit(data, "c,F0", sigma={"theta": sigma}, **TRUE)
    assert known.estimates == pytest.approx(plain.estimates, rel=1e-8)  # each stops within xtol
    s = plain.residual_variance ** 0.5
    for a, b in zip(known.standard_errors, plain.standard_errors):
        assert a == pytest.approx(b * sigma / s, rel=1e-9)
    assert known.residual_variance == pytest.approx(plain.residual_variance / sigma**2,
                                                    rel=1e-9)
    assert 0.6 < known.residual_variance < 1.5  # σ is the noise's: χ²/(N − p) near 1
    assert "χ²/(N − p)" in known.to_text() and known.to_dict()["weighting"] == "sigma"
    text = known.to_text()
    assert "near 1 when sigma is right" in text and "--" not in text
    token = WORDING.set(FLAGS)  # as during a command of the command line
    try:
        assert known.to_text() == text.replace("when sigma is", "when --sigma is")
    finally:
        WORDING.reset(token)


@pytest.mark.parametrize(("given", "message"), [
    ({"weights": "x=2"}, "--weights names 'x', which is not an observed column"),
    ({"sigma": "theta=0"}, "--sigma theta must be positive"),
    ({"weights": "theta=1", "sigma": "theta=1"}, "not both"),
    ({"starts": "3"}, "--starts 3 draws starts within --bounds: give both bounds of c"),
])
def test_fit_option_errors_are_one_line(tmp_path, given, message):
    data = _data(tmp_path / "d.csv", "driven_damped_pendulum", {"c": 0.4, "F0": 1.2},
                 {"theta": 0.0}, 1.0, 11)
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        api.fit_system(lagsim.load("driven_damped_pendulum"), data, "c", None, {}, {},
                       keywords=False, fit_options=given)


def test_starts_find_the_global_minimum_a_single_start_misses(tmp_path):
    """θ(t) of a pendulum fitted for l from l = 2.8 within [0.2, 3]: the single start ends on
    the bound (a local minimum of the sum of squares), four seeded starts reach the truth l = 1
    (to the noise's standard errors), report how many agreed, and repeat exactly with the same
    seed."""
    data = _data(tmp_path / "d.csv", "pendulum", {"l": 1.0}, {"theta": 1e-3}, 4.0, 41, seed=1)
    system = lagsim.load("pendulum")
    run = dict(parameters={"l": 2.8}, bounds={"l": (0.2, 3.0)}, rtol=1e-8, atol=1e-8)
    single = system.fit(data, "l", **run)
    assert single.estimates[0] == pytest.approx(3.0, rel=1e-9)
    several = system.fit(data, "l", starts=4, seed=0, **run)
    (estimate,), (error,) = several.estimates, several.standard_errors
    assert abs(estimate - 1.0) < 4 * error and several.starts == 4 and several.failed == 0
    assert 1 <= several.agreed < 4  # the start at 2.8 did not agree
    assert f"starts: 4; {several.agreed} reached these estimates (to {AGREE_RTOL:g}" in (
        several.to_text())
    again = system.fit(data, "l", starts=4, seed=0, **run)
    assert again.estimates == several.estimates and again.runs == several.runs


def test_plot_overlays_the_data_and_the_fitted_run(tmp_path):
    """The figure's points are the CSV's columns, its curves the run at the estimates (501
    samples from the start to the data's last time), one panel per observed column; the CLI
    writes it (SVG) and still prints the report."""
    data = _data(tmp_path / "d.csv", "driven_damped_pendulum", {"c": 0.4, "F0": 1.2},
                 {"theta": 1e-3, "theta_dot": 1e-3}, 6.0, 31)
    system = lagsim.load("driven_damped_pendulum")
    report = system.fit(data, "c,F0", **TRUE)
    from lagsim.viz.fit_figures import fit_figure

    fig = fit_figure(report.data, api.fitted_run(system, report, dict(TRUE), keywords=True))
    csv = np.loadtxt(data, delimiter=",", skiprows=1)
    run = system.simulate(parameters=dict(zip(report.names, report.estimates)), t_end=6.0,
                          samples=501, **TRUE)
    assert len(fig.axes) == 2
    for k, (ax, column) in enumerate(zip(fig.axes, ("theta", "theta_dot"))):
        points, curve = ax.lines
        np.testing.assert_array_equal(points.get_xdata(), csv[:, 0])
        np.testing.assert_array_equal(points.get_ydata(), csv[:, 1 + k])
        np.testing.assert_allclose(curve.get_xdata(), run["t"], rtol=0, atol=1e-15)
        np.testing.assert_allclose(curve.get_ydata(), run[column], rtol=0, atol=1e-9)
    image = tmp_path / "fit.svg"
    out = CliRunner().invoke(main, ["fit", "driven_damped_pendulum", str(data), "--fit", "c,F0",
                                    "--plot", "-o", str(image)])
    assert out.exit_code == 0, out.output
    assert image.read_text(encoding="utf-8").count("<path") > 40
    assert out.stdout.startswith("fit of theta, theta_dot at 31 samples")
