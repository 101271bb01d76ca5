"""The API as numpy, pandas, xarray and Jupyter users expect it (issue 30).

Physics checks use closed forms: the harmonic oscillator x = x₀ cos(ωt), ω = √(k/m)
(seed 001), whose cubic Hermite interpolation between samples h apart errs by at most
h⁴/384 · max|x⁗| = h⁴ ω⁴ x₀ / 384 (de Boor, *A Practical Guide to Splines*, ch. IV).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from inline_systems import HARMONIC_OSCILLATOR, named

import lagsim
from lagsim.cli import main
from lagsim.spec.options import FLAGS, KEYWORDS, SimulateOptions

OSCILLATOR = named("oscillator", HARMONIC_OSCILLATOR,
                   "initial: {x: 0.1}\nunits: {x: m, t: s}\n").lstrip("\n")
"""m ẍ = −k x from x = 0.1 at rest: x = 0.1 cos(√(k/m) t)."""


def omega() -> float:
    params = lagsim.load(OSCILLATOR).parameters
    return math.sqrt(params["k"] / params["m"])


@pytest.fixture(scope="module")
def traj() -> lagsim.Trajectory:
    return lagsim.load(OSCILLATOR).simulate(t_end=2.0, samples=21, rtol=1e-12, atol=1e-14)


# --- a system wherever the API takes one -------------------------------------------------------


def test_plot_takes_a_bundled_name_for_the_system() -> None:
    """Issue 30: ``plot(traj, kind="path", system="pendulum")`` raised AttributeError. The
    pendulum's mass stays on the circle of radius l about the pivot."""
    pendulum = lagsim.load("pendulum")
    run = pendulum.simulate(t_end=1.0, samples=11)
    by_name = lagsim.plot(run, kind="path", system="pendulum")
    by_object = lagsim.plot(run, kind="path", system=pendulum)
    lines = [line for line in by_name.axes[0].get_lines() if len(line.get_xdata()) == 11]
    assert lines, "the path of the mass is drawn"
    x, y = lines[0].get_xdata(), lines[0].get_ydata()
    assert np.allclose(np.hypot(x, y), pendulum.parameters["l"], rtol=1e-9)
    assert [line.get_xdata().tolist() for line in by_object.axes[0].get_lines()] == \
        [line.get_xdata().tolist() for line in by_name.axes[0].get_lines()]


def test_a_system_of_another_type_is_a_type_error() -> None:
    run = lagsim.load("pendulum").simulate(t_end=0.1, samples=2)
    with pytest.raises(TypeError, match="system must be a lagsim.System, a path, a bundled "
                                        "system's name or YAML text, not int"):
        lagsim.plot(run, kind="path", system=3)  # type: ignore[arg-type]


# --- warnings name keywords ---------------------------------------------------------------------


def test_the_aliasing_warning_names_keywords_in_the_api_and_flags_on_the_command_line() -> None:
    """Samples 100 s apart on a pendulum of period ≈ 2 s: the API says ``dt=0.1``, the command
    line ``--dt 0.1``, with the same advised step."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lagsim.load("pendulum").simulate(t_end=300, dt=100)
    said = [str(w.message) for w in caught if "aliases the motion" in str(w.message)]
    assert len(said) == 1
    assert "give dt=0.1 or more samples" in said[0] and "--" not in said[0]
    result = CliRunner().invoke(main, ["simulate", "pendulum", "--t-end", "300", "--dt", "100"])
    assert "give --dt 0.1 or more --samples" in result.stderr


def test_a_fixed_step_method_without_dt_is_refused_by_keyword() -> None:
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load("pendulum").simulate(method="rattle")
    assert str(err.value).endswith("give the step with dt (e.g. dt=0.01)")


def test_the_two_namings_write_an_option_as_flag_or_keyword() -> None:
    assert FLAGS.give("t_end", 5) == "--t-end 5"
    assert KEYWORDS.give("t_end", 5) == "t_end=5"
    options = SimulateOptions.resolve({}, {"rtol": 1e-9}, KEYWORDS)
    assert options.label("rtol") == "rtol" and options.label("atol") == "atol"
    assert SimulateOptions.resolve({}, {}).label("atol") == "--atol"


# --- the trajectory as a table ------------------------------------------------------------------


def test_a_trajectory_is_a_table_of_named_columns(traj: lagsim.Trajectory) -> None:
    assert traj.columns == ("t", "x", "x_dot", "energy")
    assert list(traj) == list(traj.columns)
    assert len(traj) == 21
    assert "x" in traj and "theta" not in traj and 0 not in traj
    array = np.asarray(traj)
    assert array.shape == (21, 4)
    assert np.array_equal(array[:, 1], traj["x"])
    assert np.asarray(traj, dtype=np.float32).dtype == np.float32
    assert dict(traj).keys() == set(traj.columns)


def test_at_interpolates_the_oscillator_within_the_hermite_bound(traj: lagsim.Trajectory) -> None:
    w, x0, h = omega(), 0.1, 0.1
    times = np.linspace(0.0, 2.0, 37)
    row = traj.at(times)
    bound = h**4 * w**4 * x0 / 384
    assert np.max(np.abs(row["x"] - x0 * np.cos(w * times))) < 1.5 * bound
    linear = np.interp(times, traj.t, traj["x"])
    assert np.max(np.abs(linear - x0 * np.cos(w * times))) > 10 * bound
    assert np.array_equal(row["t"], times)
    single = traj.at(0.5)
    assert isinstance(single["x"], float)
    assert single["x"] == traj["x"][5]
    with pytest.raises(ValueError, match="within the samples"):
        traj.at(2.5)


def test_between_keeps_the_samples_of_the_interval(traj: lagsim.Trajectory) -> None:
    part = traj.between(0.5, 1.0)
    assert part.t.tolist() == traj.t[5:11].tolist()
    assert np.array_equal(np.asarray(part), np.asarray(traj)[5:11])
    with pytest.raises(ValueError):
        traj.between(1.0, 0.5)


def test_to_xarray_has_the_units_of_the_file(traj: lagsim.Trajectory) -> None:
    pytest.importorskip("xarray")
    data = traj.to_xarray()
    assert list(data.data_vars) == ["x", "x_dot", "energy"]
    assert data["x"].attrs["units"] == "m"
    assert data["x_dot"].attrs["units"] == "m/s"
    assert data["t"].attrs["units"] == "s"
    assert "units" not in data["energy"].attrs
    assert np.array_equal(data["x"].sel(t=1.0).item(), traj["x"][10])


def test_trajectory_html_shows_the_head_and_the_columns(traj: lagsim.Trajectory) -> None:
    html = traj._repr_html_()
    assert "<th>x [m]</th>" in html and "<th>energy</th>" in html
    assert html.count("<tr>") == 6 and "16 more rows" in html
    assert f"<td>{traj['x'][1]:.6g}</td>" in html


# --- derive's json is a structure; display in a notebook ---------------------------------------


def test_derive_json_is_the_document_the_cli_prints() -> None:
    system = lagsim.load("pendulum")
    document = system.derive("matrix", format="json")
    assert isinstance(document, dict)
    assert document["coordinates"] == ["theta"]
    result = CliRunner().invoke(main, ["derive", "pendulum", "--form", "matrix",
                                       "--format", "json"])
    assert json.dumps(document, indent=2, ensure_ascii=False) + "\n" == result.stdout


def test_derived_text_is_a_string_that_a_notebook_typesets() -> None:
    text = lagsim.load("pendulum").derive("lagrange")
    assert isinstance(text, str)
    latex = text._repr_latex_()
    assert r"g l m \sin{\left(\theta \right)} + l^{2} m \ddot{\theta} &= 0" in latex
    assert not any(line.startswith("%") for line in latex.splitlines())


def test_system_html_is_the_check_summary() -> None:
    system = lagsim.load("pendulum")
    html = system._repr_html_()
    summary = CliRunner().invoke(main, ["check", "pendulum"]).stdout
    from html import escape

    assert escape(summary.strip()) in html


# --- plot: units and every kind -----------------------------------------------------------------


def test_plot_labels_the_units_of_the_file_with_or_without_the_system(traj) -> None:
    """As ``lagsim plot``: ``units: {x: m, t: s}`` gives ``x [m]`` on the axis."""
    for system in (None, lagsim.load(OSCILLATOR)):
        fig = lagsim.plot(traj, kind="time", columns=["x"], system=system)
        assert fig.axes[0].get_ylabel() == "x [m]"


def test_plot_poincare_draws_the_crossings_of_a_section() -> None:
    """The oscillator crosses x = 0 upward once a period 2π/ω: over 10 s, ⌊10ω/2π⌋ points, each
    at x_dot = x₀ω."""
    system = lagsim.load(OSCILLATOR)
    run = system.simulate(t_end=10.0, section="x", section_direction="up", rtol=1e-10,
                          atol=1e-12)
    fig = lagsim.plot(run, kind="poincare", x="x", y="x_dot")
    (points,) = fig.axes[0].collections
    xy = points.get_offsets()
    assert len(xy) == math.floor(10 * omega() / (2 * math.pi)) == len(run)
    assert np.allclose(xy[:, 1], 0.1 * omega(), rtol=1e-6)
    named = lagsim.plot(run, kind="time", columns=["x"]).get_suptitle()
    assert named == "oscillator"  # the system, as every kind names it
    assert fig.get_suptitle() == f"{named}: Poincaré section (1 run, {len(run)} crossings)"
    assert np.allclose(xy[:, 0], 0.0, atol=1e-9)


def test_the_api_manual_names_every_plot_kind() -> None:
    from pathlib import Path

    from lagsim.viz.kinds import KINDS

    text = (Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text(encoding="utf-8")
    section = text[text.index("## Plotting"):text.index("## Errors")]
    assert [k for k in KINDS if f"`{k}`" not in section] == []


# --- sweep --------------------------------------------------------------------------------------


def test_sweep_is_the_table_of_lagsim_sweep_with_the_pendulum_period() -> None:
    """Half a period from rest at θ₀ to θ̇ = 0 again: T = 4K(sin²(θ₀/2))/√(g/l) (seed 001,
    Ex. 10.5); the DataFrame holds the numbers the command line writes, bit for bit."""
    import io

    import pandas
    from scipy.special import ellipk

    frame = lagsim.load("pendulum").sweep(grid={"theta": (0.2, 1.0, 3)},
                                          stop_when="theta_dot",
                                          summary=["period=2*final(t)"], rtol=1e-12,
                                          atol=1e-12)
    assert isinstance(frame, pandas.DataFrame)
    assert frame["run"].tolist() == [0, 1, 2] and frame["error"].tolist() == ["", "", ""]
    theta0 = frame["theta0"].to_numpy()
    assert theta0.tolist() == np.linspace(0.2, 1.0, 3).tolist()
    exact = 4 * ellipk(np.sin(theta0 / 2) ** 2) / math.sqrt(9.81)
    assert np.allclose(frame["period"], exact, rtol=1e-9)
    result = CliRunner().invoke(main, ["sweep", "pendulum", "--grid", "theta=0.2:1.0:3",
                                       "--stop-when", "theta_dot", "--summary",
                                       "period=2*final(t)", "--rtol", "1e-12", "--atol",
                                       "1e-12", "--scheduler", "synchronous"])
    assert result.exit_code == 0, result.output
    cli = pandas.read_csv(io.StringIO(result.stdout), keep_default_na=False)
    assert list(cli.columns) == list(frame.columns)
    assert np.array_equal(cli.drop(columns="error").to_numpy(),
                          frame.drop(columns="error").to_numpy())


def test_sweep_names_its_keywords_in_errors() -> None:
    with pytest.raises(lagsim.InputError) as err:
        lagsim.api.sweep("pendulum", grid={"theta": (1.0, 1.0, 3)})
    assert err.value.location.file == "grid"
    with pytest.raises(lagsim.InputError, match="give either samples or dt"):
        lagsim.api.sweep("pendulum", values={"l": [1, 2]}, samples=3, dt=0.1)
    with pytest.raises(TypeError, match="grid must be a mapping"):
        lagsim.api.sweep("pendulum", grid=[("theta", 0, 1, 2)])
    with pytest.raises(lagsim.InputError,
                       match="'theta' is swept and also set with initial; drop one"):
        lagsim.api.sweep("pendulum", grid={"theta": (0.1, 1.0, 3)}, initial={"theta": 0.2})
    with pytest.raises(lagsim.InputError,
                       match="'l' is swept and also set with parameters; drop one"):
        lagsim.load("pendulum", l=2.0).sweep(values={"l": [1, 2]})
    result = CliRunner().invoke(main, ["sweep", "pendulum", "--values", "l=1,2", "--set", "l=2"])
    assert result.exit_code == 2
    assert "'l' is swept and also set with --set; drop one" in result.stderr
