"""The API's sweep as an array (issue 30): ``System.sweep(...).to_xarray()`` has one dimension
per swept name, its cells are the flat table's rows, failed runs are NaN cells, the file's units
are attributes, and the frame stays a pandas DataFrame."""

from __future__ import annotations

import math
import pickle
import sys
from pathlib import Path

import numpy as np
import pandas
import pytest

import lagsim
from lagsim.sweep.frame import SweepFrame

xarray = pytest.importorskip("xarray")

G = 9.81
PENDULUM = (Path(lagsim.__file__).parents[1] / "systems" / "pendulum.yaml").read_text()
WITH_UNITS = PENDULUM + "units: {theta: rad, l: m, t: s}\n"
"""The bundled pendulum (g = 9.81, θ̈ = −(g/l) sin θ; seed 001, Example 10.5) with units."""


@pytest.fixture(scope="module")
def periods() -> SweepFrame:
    """Length × amplitude, each run from rest at θ0 to the first θ̇ = 0, half a period."""
    return lagsim.load(WITH_UNITS).sweep(grid={"l": (0.5, 2.0, 4), "theta": (0.05, 0.1, 3)},
                                         stop_when="theta_dot", summary=["period=2*final(t)"],
                                         rtol=1e-12, atol=1e-12, samples=2, t_end=20)


def test_a_grid_is_one_dimension_per_swept_name_and_each_cell_is_its_row(
        periods: SweepFrame) -> None:
    ds = periods.to_xarray()
    assert dict(ds.sizes) == {"l": 4, "theta0": 3} and tuple(ds.dims) == ("l", "theta0")
    assert ds["l"].values.tolist() == np.linspace(0.5, 2.0, 4).tolist()
    assert ds["theta0"].values.tolist() == np.linspace(0.05, 0.1, 3).tolist()
    assert set(ds.data_vars) == {"theta", "theta_dot", "energy_drift", "energy_change",
                                 "stop_time", "period"}
    row = periods.iloc[7]                                   # l = 1.5 (index 2), θ0 = 0.075 (1)
    cell = ds.sel(l=row["l"], theta0=row["theta0"])
    assert int(cell["run"]) == 7 and str(cell["error"].item()) == ""
    for name in ds.data_vars:
        assert cell[name].item() == row[name]
        assert np.array_equal(ds[name].values.ravel(), periods[name].to_numpy())
    assert ds.attrs["name"] == "pendulum"


def test_the_small_amplitude_period_across_the_length_dimension(periods: SweepFrame) -> None:
    """T = 2π√(l/g)(1 + θ0²/16 + 11θ0⁴/3072 + …) (Landau and Lifshitz, Mechanics §11 problem 1,
    expanded): read per length through ``ds.sel(l=...)``, T/(2π√(l/g)) − 1 − θ0²/16 is within
    the next term, 11θ0⁴/3072 (3.6e-7 at θ0 = 0.1), and T/√l is the same at every length to
    1e-9."""
    ds = periods.to_xarray()
    theta0 = ds["theta0"].values
    for length in ds["l"].values:
        ratio = ds["period"].sel(l=length).values / (2 * math.pi * math.sqrt(length / G))
        assert np.all(np.abs(ratio - 1 - theta0 ** 2 / 16) < 11 * theta0 ** 4 / 3072 + 1e-9)
        assert np.all(ratio - 1 > theta0 ** 2 / 16)         # the θ0⁴ term is positive
    scaled = ds["period"] / np.sqrt(ds["l"])
    assert float(np.abs(scaled / scaled.isel(l=0) - 1).max()) < 1e-9


def test_the_units_of_the_file_are_attributes(periods: SweepFrame) -> None:
    ds = periods.to_xarray()
    assert ds["l"].attrs == {"units": "m"} and ds["theta0"].attrs == {"units": "rad"}
    assert ds["theta"].attrs == {"units": "rad"} and ds["theta_dot"].attrs == {"units": "rad/s"}
    assert ds["stop_time"].attrs == {"units": "s"}
    assert ds["period"].attrs == {} and ds["energy_change"].attrs == {}


def test_a_failed_run_is_a_nan_cell_with_its_error() -> None:
    """l = 0 makes the mass matrix singular: both of its cells are NaN with the error, the
    four others are computed, and no cell is dropped."""
    frame = lagsim.load("pendulum").sweep(grid={"theta": (0.1, 0.2, 2)},
                                          values={"l": [1.0, 0.0, 2.0]}, t_end=0.5, samples=3)
    ds = frame.to_xarray()
    assert dict(ds.sizes) == {"theta0": 2, "l": 3}
    assert ds["l"].values.tolist() == [1.0, 0.0, 2.0]       # the order given, not sorted
    failed = ds.sel(l=0.0)
    assert np.isnan(failed["theta"].values).all() and np.isnan(failed["energy_drift"]).all()
    assert all("mass matrix" in text for text in failed["error"].values.tolist())
    good = ds.drop_sel(l=0.0)
    assert np.isfinite(good["theta"].values).all()
    assert (good["error"].values == "").all()
    assert ds["theta"].isnull().sum().item() == (frame["error"] != "").sum() == 2


def test_random_draws_are_one_draw_dimension_with_the_names_along_it() -> None:
    """A grid × random sweep: (l, draw), the drawn initial values coordinates along draw, each
    cell its row; the energy of a run from (θ0, θ̇0) is conserved, so its final state has
    ½ l² θ̇² − g l cos θ of its start (seed 001's h) to 1e-6."""
    frame = lagsim.load("pendulum").sweep(grid={"l": (0.5, 1.0, 2)},
                                          random={"theta": (0, 0.5), "theta_dot": (0, 0.5)},
                                          runs=3, seed=4, t_end=0.5, samples=3, rtol=1e-10,
                                          atol=1e-10)
    ds = frame.to_xarray()
    assert tuple(ds.dims) == ("l", "draw") and ds["draw"].values.tolist() == [0, 1, 2]
    assert ds["theta0"].dims == ("draw",) and ds["theta_dot0"].dims == ("draw",)
    assert ds["theta0"].values.tolist() == frame["theta0"].to_numpy()[:3].tolist()
    assert ds["theta0"].values.tolist() == frame["theta0"].to_numpy()[3:].tolist()
    assert ((0 <= ds["theta0"]) & (ds["theta0"] < 0.5)).all()
    cell = ds.isel(l=1, draw=2)
    assert int(cell["run"]) == 5 and cell["theta"].item() == frame["theta"].iloc[5]

    def h(theta: xarray.DataArray, omega: xarray.DataArray) -> xarray.DataArray:
        return 0.5 * ds["l"] ** 2 * omega ** 2 - G * ds["l"] * np.cos(theta)

    drift = np.abs(h(ds["theta"], ds["theta_dot"]) - h(ds["theta0"], ds["theta_dot0"]))
    assert float(drift.max()) < 1e-6
    alone = lagsim.load("pendulum").sweep(random={"theta": (0, 0.5)}, runs=4, t_end=0.2,
                                          samples=2).to_xarray()
    assert tuple(alone.dims) == ("draw",)
    assert alone["run"].values.tolist() == alone["draw"].values.tolist() == [0, 1, 2, 3]


def test_the_frame_is_a_dataframe_and_refuses_rows_that_are_no_longer_the_grid(
        periods: SweepFrame) -> None:
    assert isinstance(periods, pandas.DataFrame)
    derived = periods[periods["l"] > 1.0]
    assert type(derived) is pandas.DataFrame and type(periods.copy()) is pandas.DataFrame
    assert "index" in derived.to_xarray().dims                # pandas' own, one row dimension
    again = pickle.loads(pickle.dumps(periods))
    assert again.to_xarray().identical(periods.to_xarray())
    reordered = pickle.loads(pickle.dumps(periods))
    reordered.loc[:, :] = reordered.iloc[::-1].to_numpy()  # every row reversed, in place
    with pytest.raises(ValueError, match="no longer holds the sweep's 12 runs in order"):
        reordered.to_xarray()
    changed = pickle.loads(pickle.dumps(periods))
    changed["l"] = changed["theta0"]
    with pytest.raises(ValueError, match="swept column 'l' was changed in place"):
        changed.to_xarray()
    added = pickle.loads(pickle.dumps(periods))
    added["ratio"] = added["period"] / added["stop_time"]
    assert np.allclose(added.to_xarray()["ratio"], 2.0, rtol=1e-12)


def test_without_xarray_the_error_names_the_extra(periods: SweepFrame,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(ImportError, match=r"SweepFrame.to_xarray needs xarray, which is not "
                                          r"installed: pip install 'lagsim\[xarray\]'"):
        periods.to_xarray()
    traj = lagsim.load("pendulum").simulate(t_end=0.1, samples=2)
    with pytest.raises(ImportError, match=r"Trajectory.to_xarray needs xarray.*"
                                          r"'lagsim\[xarray\]'.*need nothing more"):
        traj.to_xarray()
