"""The Python API (issue 13): lagsim.load, System.derive/simulate, Trajectory, read_csv, plot.

Physics checks use closed forms: the pendulum's period 4K(sin²(θ₀/2))/√(g/l) and its small-angle
limit 2π√(l/g) (seed 001_80d65b968ce3cb18.txt, Example 10.5), the harmonic oscillator
x = x₀ cos(√(k/m) t), and the conservation of h = T + U (seed 001). Errors are compared with what
the command line prints for the same input.
"""

from __future__ import annotations

import inspect
import math
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from inline_systems import HARMONIC_OSCILLATOR, named
from scipy.special import ellipk

import lagsim
from lagsim.cli import main
from lagsim.spec.options import OPTIONS

OSCILLATOR = named("oscillator", HARMONIC_OSCILLATOR, "initial: {x: 0.1}\n").lstrip("\n")
"""m ẍ = −k x from x = 0.1 at rest: x = 0.1 cos(√(k/m) t), h = ½ k x₀² = 0.04."""

BLOW_UP = "coordinates: [x]\nkinetic: 1/2*x_dot**2\npotential: -x**4\ninitial: {x: 1.0}\n"
"""ẍ = 4x³ from rest at x = 1 blows up at t* = K(1/2)/2 ≈ 0.927 (tests/test_integrate.py)."""


def cli(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input)


def cli_error(*args: str, input: str | None = None) -> str:
    """The text after ``lagsim: error: `` of a failing command."""
    result = cli(*args, input=input)
    assert result.exit_code in (1, 2), result.output
    line = result.output.splitlines()[0]
    assert line.startswith("lagsim: error: ")
    return line[len("lagsim: error: "):]


def quarter_period(system: lagsim.System, **kwargs) -> float:
    """θ first reaches 0 a quarter period after a release from rest at θ₀ > 0."""
    traj = system.simulate(stop_when="theta", samples=2, **kwargs)
    assert traj.stop_reason == "stop_when"
    return float(traj.t[-1])


# --- the package -------------------------------------------------------------------------------


def test_import_lagsim_loads_no_numerics_and_exports_the_api() -> None:
    code = ("import sys, lagsim; print(sorted(m for m in ('numpy', 'sympy', 'symengine', "
            "'scipy', 'matplotlib', 'yaml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    assert set(lagsim.__all__) == {
        "InputError", "IntegrationError", "LagsimError", "LagsimWarning", "Location", "System",
        "Trajectory", "__version__", "load", "plot", "read_csv"}
    for name in lagsim.__all__:
        assert getattr(lagsim, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'simulate'"):
        lagsim.simulate  # noqa: B018


# --- load --------------------------------------------------------------------------------------


def test_load_takes_a_bundled_name_a_path_and_yaml_text(tmp_path) -> None:
    bundled = lagsim.load("pendulum")
    assert bundled.coordinates == ("theta",)
    assert bundled.parameters == {"m": 1.0, "g": 9.81, "l": 1.0}
    path = tmp_path / "osc.yaml"
    path.write_text(OSCILLATOR)
    for source in (path, str(path), OSCILLATOR):
        system = lagsim.load(source)
        assert system.name == "oscillator" and system.parameters == {"m": 2.0, "k": 8.0}
        assert system.initial == {"x": 0.1}
    flow = "{coordinates: [x], kinetic: 1/2*x_dot**2, potential: x**2}"
    assert lagsim.load(flow).coordinates == ("x",)
    assert lagsim.load("pendulum", l=2.5).parameters["l"] == 2.5
    # a file whose name looks like YAML text is still a file
    odd = tmp_path / "{odd}.yaml"
    odd.write_text(OSCILLATOR)
    assert lagsim.load(str(odd)).name == "oscillator"
    with pytest.raises(TypeError, match="not int"):
        lagsim.load(3)


def test_load_errors_are_the_cli_errors(tmp_path) -> None:
    bad = OSCILLATOR.replace("1/2*k*x**2", "1/2*k*x**2 +")
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load(bad)
    via_stdin = cli_error("simulate", "-", input=bad)
    assert via_stdin.startswith("<stdin>:5:12: ")
    assert str(err.value) == via_stdin.replace("<stdin>", "<string>", 1)
    assert err.value.location == lagsim.Location("<string>", 5, 12)

    path = tmp_path / "bad.yaml"
    path.write_text(bad)
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load(path)
    assert str(err.value) == cli_error("derive", str(path))

    with pytest.raises(lagsim.InputError) as err:
        lagsim.load("pendulm")
    assert str(err.value) == cli_error("derive", "pendulm")
    assert "did you mean 'pendulum'" in str(err.value)


def test_an_unknown_parameter_names_the_keyword_with_the_cli_message() -> None:
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load("pendulum", lenght=2.0)
    cli_message = cli_error("simulate", "pendulum", "--set", "lenght=2")
    assert cli_message.startswith("--set: no such parameter 'lenght'")
    assert str(err.value) == cli_message.replace("--set", "parameters", 1)
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load("pendulum").simulate(parameters={"lenght": 2.0})
    assert str(err.value) == cli_message.replace("--set", "parameters", 1)
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load("pendulum").simulate(initial={"thetta": 0.1})
    cli_message = cli_error("simulate", "pendulum", "--init", "thetta=0.1")
    assert str(err.value) == cli_message.replace("--init", "initial", 1)


# --- derive ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("form", "fmt"), [("lagrange", "text"), ("matrix", "latex"),
                                           ("index1", "json")])
def test_derive_is_what_the_cli_prints(form: str, fmt: str) -> None:
    system = lagsim.load("pendulum_natural", l=2.0)
    result = cli("derive", "pendulum_natural", "--set", "l=2", "--form", form, "--format", fmt)
    assert result.exit_code == 0
    derived = system.derive(form, format=fmt)
    if fmt == "json":
        import json

        assert isinstance(derived, dict)
        derived = json.dumps(derived, indent=2, ensure_ascii=False) + "\n"
    assert derived == result.stdout


def test_derive_without_format_gives_the_form_with_the_pendulum_equation() -> None:
    import sympy

    form = lagsim.load("pendulum").derive(format=None)
    assert form.name == "lagrange"
    (equation,) = form.equations
    m, g, l, theta, theta_ddot = sympy.symbols("m g l theta theta_ddot")
    expected = m * l**2 * theta_ddot + m * g * l * sympy.sin(theta)
    assert sympy.simplify(equation.lhs - equation.rhs - expected) == 0
    forms = lagsim.load("pendulum_natural").derive("all", format=None)
    assert [f.name for f in forms][:2] == ["lagrange", "matrix"]
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load("pendulum").derive("matrx")
    assert str(err.value).startswith("form must be one of lagrange, matrix, dae, index1, ")
    assert str(err.value).endswith("'matrx' is not a known form (did you mean 'matrix'?)")
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load("pendulum").derive(format="html")
    assert str(err.value) == "format must be one of text, latex, json or None, not 'html'"


# --- simulate ----------------------------------------------------------------------------------


def test_simulate_the_oscillator_against_its_closed_form() -> None:
    system = lagsim.load(OSCILLATOR)
    traj = system.simulate(t_end=3.0, samples=301)
    assert len(traj) == 301 and traj.columns == ("t", "x", "x_dot", "energy")
    np.testing.assert_allclose(traj.t, np.linspace(0.0, 3.0, 301), rtol=0, atol=1e-15)
    omega = math.sqrt(8.0 / 2.0)
    np.testing.assert_allclose(traj["x"], 0.1 * np.cos(omega * traj.t), rtol=0, atol=1e-8)
    np.testing.assert_allclose(traj["x_dot"], -0.1 * omega * np.sin(omega * traj.t), rtol=0,
                               atol=1e-8)
    np.testing.assert_allclose(traj["energy"], 0.5 * 8.0 * 0.1**2, rtol=1e-8)


def test_the_pendulum_period_matches_the_elliptic_integral_and_the_small_angle_limit() -> None:
    pendulum = lagsim.load("pendulum")
    g, l = 9.81, 1.0
    for degrees in (2.0, 90.0, 160.0):
        a = math.radians(degrees)
        period = 4 * quarter_period(pendulum, initial={"theta": a})
        exact = 4 * ellipk(math.sin(a / 2) ** 2) / math.sqrt(g / l)
        assert period == pytest.approx(exact, rel=1e-8)
    small = 4 * quarter_period(pendulum, initial={"theta": 1e-3})
    assert small == pytest.approx(2 * math.pi * math.sqrt(l / g), rel=1e-7)


def test_many_runs_with_other_parameters_compile_once(monkeypatch) -> None:
    from lagsim.numeric import compile as compile_module

    builds = []
    original = compile_module.compile_model

    def counting(model):
        builds.append(model.name)
        return original(model)

    monkeypatch.setattr(compile_module, "compile_model", counting)
    pendulum = lagsim.load("pendulum")
    lengths = (0.5, 1.0, 2.0, 4.0)
    periods = [4 * quarter_period(pendulum, parameters={"l": length}, initial={"theta": 1e-3})
               for length in lengths]
    assert builds == ["pendulum"]
    for length, period in zip(lengths, periods):
        assert period == pytest.approx(2 * math.pi * math.sqrt(length / 9.81), rel=1e-7)
    assert pendulum.parameters["l"] == 1.0          # a run's parameters are its own
    # a parameter defined from another follows it (the file is read again with the new value)
    derived = lagsim.load(OSCILLATOR.replace("k: 8.0", "k: 4*m"))
    traj = derived.simulate(t_end=1.0, samples=11, parameters={"m": 0.25})
    np.testing.assert_allclose(traj["x"], 0.1 * np.cos(2.0 * traj.t), rtol=0, atol=1e-8)
    assert builds == ["pendulum", "oscillator"]


def test_a_rerun_with_new_initial_values_is_a_fresh_load_without_reading_the_file_again(
        tmp_path, monkeypatch) -> None:
    """``simulate(initial=...)`` puts the values into the loaded spec (the file is not parsed
    again) and gives the CSV of a fresh load with those values, to the byte; the spec equals the
    parser's field for field (values, the ``--init`` locations and their order)."""
    from lagsim.api import open_system
    from lagsim.spec import system as spec_module

    system = lagsim.load("double_pendulum_constrained", m1=1.5)
    kept = system.simulate(t_end=0.5, samples=21, initial={"theta2": 0.3})   # compiles
    parses = []
    original = spec_module.parse_spec
    monkeypatch.setattr(spec_module, "parse_spec",
                        lambda *a, **k: parses.append(a[1]) or original(*a, **k))
    again = system.simulate(t_end=0.5, samples=21, initial={"theta2": 0.7, "theta1_dot": -0.2})
    assert parses == []
    monkeypatch.setattr(spec_module, "parse_spec", original)
    fresh = open_system("double_pendulum_constrained", {"m1": 1.5},
                               {"theta2": 0.7, "theta1_dot": -0.2}, api=True)
    assert spec_module.with_initial(system.spec, {"theta2": 0.7, "theta1_dot": -0.2}) \
        == fresh.spec
    expected = fresh.simulate(t_end=0.5, samples=21)
    again.to_csv(tmp_path / "again.csv")
    expected.to_csv(tmp_path / "fresh.csv")
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "fresh.csv").read_bytes()
    assert not np.array_equal(kept.to_numpy(), again.to_numpy())
    with pytest.raises(lagsim.InputError) as err:
        system.simulate(initial={"theta9": 1.0})
    assert str(err.value).startswith("initial: no such coordinate or velocity 'theta9'")


def test_residuals_and_energy_of_all_samples_are_those_of_each_sample() -> None:
    """The output columns computed for all samples in one compiled call equal the per-sample
    functions (:meth:`NumericSystem.velocity_residual`, ``phi``, ``energy``) to the bit, and
    the holonomic residuals are on the rods (|φ| small) while h is conserved (seed 001)."""
    from lagsim.numeric.compile import compile_model

    system = lagsim.load("double_pendulum_constrained")
    traj = system.simulate(t_end=1.0, samples=51)
    numeric = compile_model(system.model)
    hol = list(numeric.holonomic)
    assert hol
    for i in range(len(traj.t)):
        t, q, qd = traj.t[i], traj.q[i], traj.qd[i]
        w = numeric.velocity_residual(t, q, qd)
        assert np.array_equal(traj.residual_dot[i], w[hol])
        assert np.array_equal(traj.residual[i, hol], numeric.phi(t, q)[0])
        assert traj.energy[i] == numeric.energy(t, q, qd)
    assert np.max(np.abs(traj.residual)) < 1e-6
    assert np.ptp(traj.energy) < 1e-7     # h = T + U = 0 at the start (at rest, strings level)


def test_bad_options_and_oversized_runs_are_refused_before_compiling(monkeypatch) -> None:
    from lagsim.numeric import compile as compile_module

    def refuse(_model):
        raise AssertionError("compiled before the options were checked")

    monkeypatch.setattr(compile_module, "compile_model", refuse)
    system = lagsim.load("pendulum_natural")
    with pytest.raises(lagsim.InputError, match="rtol must be positive"):
        system.simulate(rtol=-1)
    with pytest.raises(lagsim.InputError) as err:
        system.simulate(samples=2_000_000)
    message = cli_error("simulate", "pendulum_natural", "--samples", "2000000")
    flags = {"--samples": "samples", "--dt": "dt", "--t-start": "t_start", "--t-end": "t_end"}
    for flag, keyword in flags.items():
        message = message.replace(flag, keyword)
    assert str(err.value) == message
    assert "lower samples, raise dt, or split the run with t_start/t_end" in message
    assert str(err.value).startswith("samples asks for 2e+06 samples: about 324 MB of CSV")


def test_simulate_is_the_cli_run_bit_for_bit(tmp_path) -> None:
    traj = lagsim.load("pendulum_natural").simulate(
        t_end=1.0, samples=11, parameters={"l": 2.0}, initial={"x": 1.2, "y": -1.6},
        stabilize="baumgarte")
    result = cli("simulate", "pendulum_natural", "--t-end", "1", "--samples", "11", "--set",
                 "l=2", "--init", "x=1.2", "--init", "y=-1.6", "--stabilize", "baumgarte")
    assert result.exit_code == 0
    path = tmp_path / "cli.csv"
    path.write_text(result.stdout)
    from_cli = lagsim.read_csv(path)
    assert from_cli.columns == traj.columns
    assert np.array_equal(from_cli.to_numpy(), traj.to_numpy())
    # on the rod x² + y² = l² (seed 001 §10.7): x = 1.2, y = −1.6 is on it for l = 2
    np.testing.assert_allclose(traj["x"] ** 2 + traj["y"] ** 2, 4.0, rtol=1e-8)


def test_the_commands_run_through_the_api_functions(monkeypatch) -> None:
    """One path, not two: `simulate` (and `plot`/`animate` of a system) and `derive` call
    api.open_system, api.run and api.derive_forms."""
    from lagsim import api

    calls = []

    def spy(name):
        original = getattr(api, name)

        def wrapper(*args, **kwargs):
            calls.append(name)
            return original(*args, **kwargs)
        monkeypatch.setattr(api, name, wrapper)

    for name in ("open_system", "run", "derive_forms"):
        spy(name)
    result = cli("simulate", "-", "--t-end", "1", "--samples", "3", input=OSCILLATOR)
    assert result.exit_code == 0 and calls == ["open_system", "run"]
    x = [float(line.split(",")[1]) for line in result.stdout.splitlines()[1:]]
    np.testing.assert_allclose(x, 0.1 * np.cos(2.0 * np.array([0.0, 0.5, 1.0])), atol=1e-9)
    calls.clear()
    assert cli("derive", "pendulum").exit_code == 0
    assert calls == ["open_system", "derive_forms"]


@pytest.mark.parametrize(("options", "flags"), [
    ({"rtol": -1}, ["--rtol", "-1"]),
    ({"stabilize": "baumgart"}, ["--stabilize", "baumgart"]),
    ({"method": "RK44"}, ["--method", "RK44"]),
    ({"t_end": -1.0}, ["--t-end", "-1"]),
    ({"samples": 11, "dt": 0.1}, ["--samples", "11", "--dt", "0.1"]),
])
def test_option_errors_are_the_cli_messages_naming_the_keyword(options, flags) -> None:
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load("pendulum").simulate(**options)
    message = cli_error("simulate", "pendulum", *flags)
    for name in options:
        message = message.replace("--" + name.replace("_", "-"), name)
    assert str(err.value) == message
    assert not re.search(r"--(rtol|samples|method|t-end|dt|stabilize)\b", str(err.value))


def test_a_number_option_takes_numbers() -> None:
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load("pendulum").simulate(samples=1)
    assert str(err.value) == ("samples must be a whole number of at least 2 (both ends are "
                              "samples), got 1")


def test_option_errors_in_the_file_keep_their_location() -> None:
    text = OSCILLATOR + "simulate:\n  rtol: -1\n"
    with pytest.raises(lagsim.InputError) as err:
        lagsim.load(text).simulate()
    assert err.value.location == lagsim.Location("<string>", 8, 9)
    assert str(err.value) == cli_error("simulate", "-", input=text).replace("<stdin>",
                                                                             "<string>", 1)
    with pytest.raises(lagsim.InputError, match=r"unknown simulate option 't_edn' \(did you "
                       r"mean 't_end'\?\)"):
        lagsim.load(text).simulate(t_edn=1.0)


def test_a_failed_run_raises_the_cli_error_with_the_partial_trajectory() -> None:
    with pytest.raises(lagsim.IntegrationError) as err:
        lagsim.load(BLOW_UP).simulate(t_end=2.0, samples=21)
    assert err.value.time == pytest.approx(float(ellipk(0.5)) / 2, abs=1e-6)
    result = cli("simulate", "-", "--t-end", "2", "--samples", "21", input=BLOW_UP)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == f"lagsim: error: {err.value}"
    partial = err.value.partial
    assert 0.9 < partial.t[-1] < 0.93 and len(partial) == 11
    # energy h = ½ẋ² − x⁴ = −1 is conserved while x stays moderate (x(0.7) ≈ 2.3)
    np.testing.assert_allclose(partial["energy"][:8], -1.0, rtol=1e-8)


def test_what_the_cli_prints_on_stderr_comes_as_a_warning() -> None:
    system = lagsim.load("pendulum_natural")
    with pytest.warns(lagsim.LagsimWarning) as caught:
        traj = system.simulate(t_end=0.5, samples=3, initial={"x": 0.8})
    assert [str(w.message).split(":")[0] for w in caught] == ["initial x", "initial y"]
    assert all("(moved: constraint rod conflicts" in str(w.message) for w in caught)
    assert all(w.filename == __file__ for w in caught)
    np.testing.assert_allclose(traj["x"][0] ** 2 + traj["y"][0] ** 2, 1.0, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        system.simulate(t_end=0.5, samples=3)


def test_simulate_lists_every_option_of_the_table() -> None:
    signature = inspect.signature(lagsim.System.simulate)
    names = [row.name for row in OPTIONS]
    assert list(signature.parameters)[1:] == ["parameters", "initial", *names]
    for name in names:
        assert f"    {name}: " in lagsim.System.simulate.__doc__


# --- trajectory --------------------------------------------------------------------------------


def test_trajectory_columns_by_name_numpy_and_csv_round_trip(tmp_path) -> None:
    traj = lagsim.load("pendulum_natural").simulate(t_end=1.0, samples=21)
    table = traj.to_numpy()
    assert table.shape == (21, len(traj.columns))
    for i, name in enumerate(traj.columns):
        assert np.array_equal(traj[name], table[:, i])
    assert np.array_equal(traj["t"], traj.t)
    with pytest.raises(KeyError, match="no column 'z'; the columns are t, x, y"):
        traj["z"]  # noqa: B018
    path = tmp_path / "run.csv"
    traj.to_csv(path)
    back = lagsim.read_csv(path)
    assert back.columns == traj.columns == (
        "t", "x", "y", "x_dot", "y_dot", "lambda_rod", "residual_rod", "residual_rod_dot",
        "energy")
    assert back.constraint_names == ("rod",) and back.constraint_kinds == ("holonomic",)
    assert np.array_equal(back.to_numpy(), table)
    assert repr(back) == ("<Trajectory 'run': 21 samples, t = 0 … 1; columns t, x, y, x_dot, "
                          "y_dot, lambda_rod, residual_rod, residual_rod_dot, energy>")
    assert dict(back)["lambda_rod"] is not None and len(dict(back)) == 9
    # columns a run adds after energy (trajectory.EXTRA_COLUMNS) come back as such
    radius = np.hypot(traj["x"], traj["y"])
    extended = traj.with_extra("invariant_radius", radius).with_extra("action", traj.t)
    extended.to_csv(path)
    back = lagsim.read_csv(path)
    assert [name for name, _ in back.extra] == ["invariant_radius", "action"]
    assert np.array_equal(back["invariant_radius"], radius)
    path.write_text(path.read_text().replace("action", "other", 1))
    with pytest.raises(lagsim.InputError, match="column 'other' after energy is not one of"):
        lagsim.read_csv(path)
    # released at rest at 30°, the rod pulls with m g cos 30°: the constraint force is
    # Aᵀλ = λ (2x, 2y) (seed 001 §10.7), of size 2|λ| l
    x, y = back["x"][0], back["y"][0]
    assert abs(2 * back["lambda_rod"][0] * math.hypot(x, y)) == pytest.approx(
        9.81 * math.cos(math.pi / 6), rel=1e-9)


def test_to_csv_checks_its_path_as_the_cli_checks_its_output(tmp_path) -> None:
    traj = lagsim.load(OSCILLATOR).simulate(t_end=1.0, samples=3)
    missing = tmp_path / "no" / "run.csv"
    with pytest.raises(lagsim.InputError) as err:
        traj.to_csv(missing)
    message = cli_error("simulate", "-", "--t-end", "1", "--samples", "3", "-o", str(missing),
                        input=OSCILLATOR)
    assert str(err.value) == message.replace("-o", "path", 1)
    assert str(err.value).endswith(f"the folder {str(missing.parent)!r} does not exist")


def test_read_csv_refuses_a_csv_of_other_columns(tmp_path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("t,x,y_dot,energy\n0,1,0,0\n1,1,0,0\n")
    with pytest.raises(lagsim.InputError) as err:
        lagsim.read_csv(path)
    assert str(err.value) == (f"{path}:1: not a lagsim trajectory: column 3 should be 'x_dot' "
                              "(the layout is t, coordinates, <q>_dot, lambda_<c>, residual_<c>, "
                              "residual_<c>_dot, energy), found 'y_dot'")
    path.write_text("t,x\n0,1\n")
    with pytest.raises(lagsim.InputError, match="1 row of data"):
        lagsim.read_csv(path)


def test_to_pandas_gives_the_columns(monkeypatch) -> None:
    pandas = pytest.importorskip("pandas")
    traj = lagsim.load(OSCILLATOR).simulate(t_end=1.0, samples=5)
    frame = traj.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert tuple(frame.columns) == traj.columns
    np.testing.assert_array_equal(frame["x"].to_numpy(), traj["x"])


def test_to_pandas_without_pandas_says_how_to_install_it(monkeypatch) -> None:
    traj = lagsim.load(OSCILLATOR).simulate(t_end=1.0, samples=5)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"needs pandas, which is not installed: pip install "
                       r"'lagsim\[pandas\]'"):
        traj.to_pandas()


# --- plot --------------------------------------------------------------------------------------


def test_plot_returns_the_figure_of_the_cli(tmp_path) -> None:
    from matplotlib.figure import Figure

    pendulum = lagsim.load("pendulum")
    traj = pendulum.simulate(t_end=2.0, samples=51)
    fig = lagsim.plot(traj, kind="phase")
    assert isinstance(fig, Figure)
    line = fig.axes[0].lines[0]
    assert np.array_equal(line.get_xdata(), traj["theta"])
    assert np.array_equal(line.get_ydata(), traj["theta_dot"])
    path = lagsim.plot(traj, kind="path", system=pendulum)
    xs, ys = path.axes[0].lines[0].get_data()
    # the bob stays on the circle of radius l = 1 (seed 001, Example 10.5)
    np.testing.assert_allclose(np.hypot(xs, ys), 1.0, rtol=1e-12)
    with pytest.raises(lagsim.InputError, match="kind='path' needs the system"):
        lagsim.plot(traj, kind="path")
    with pytest.raises(lagsim.InputError, match="unknown plot kind 'phse'"):
        lagsim.plot(traj, kind="phse")
    from lagsim.api import plot

    assert lagsim.plot is plot
