"""``lagsim export`` (issue 25): the standalone C built with the system compiler and the FMI 2.0
FMU run by FMPy agree with ``lagsim simulate`` of the same equations (a constrained system in
the index1 form with Baumgarte's stabilization, the form the export integrates)."""

from __future__ import annotations

import io
import subprocess
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from fmu_checks import (
    CC,
    SAMPLES,
    T_END,
    assert_runs_as_simulate,
    directional_and_differences,
    export_fmus,
    fmu_run,
    reference,
)

from lagsim import api
from lagsim.cli import main
from lagsim.errors import InputError
from lagsim.export.ccode import export_options, layout

needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")


def built_c(name: str, folder: Path) -> Path:
    system = api.load(name)
    written = system.export_c(folder / name)
    exe = folder / name / "run"
    subprocess.run([CC, "-O2", "-o", str(exe), str(written[2]), str(written[1]), "-lm"],
                   check=True, capture_output=True)
    return exe


@needs_cc
@pytest.mark.parametrize("name", ["pendulum", "double_pendulum", "pendulum_constrained"])
def test_c_matches_simulate(name: str, tmp_path: Path) -> None:
    """main.c integrates at rtol = atol = 1e-12 with the DOP853 of lagsim's C loop; the state,
    energy and multipliers agree with lagsim simulate at the same tolerances to 1e-10."""
    exe = built_c(name, tmp_path)
    done = subprocess.run([str(exe), str(T_END), str(SAMPLES), "1e-12", "1e-12"],
                          capture_output=True, text=True, check=True)
    header = done.stdout.splitlines()[0].split(",")
    data = np.loadtxt(io.StringIO(done.stdout), delimiter=",", skiprows=1)
    system, tr = reference(name, 1e-12)
    n, m = len(system.coordinates), system.model.m
    lay = layout(system.spec, system.model, export_options(system.spec))
    assert header == ["t", *lay.states, *lay.outputs]
    text = (exe.parent / f"{lay.prefix}.h").read_text()
    for i, state in enumerate(lay.states):
        assert f"#define {lay.prefix}_Y_{state} {i}\n" in text
    np.testing.assert_allclose(data[:, 0], tr.t, rtol=0, atol=1e-14)
    np.testing.assert_allclose(data[:, 1:1 + n], tr.q, rtol=0, atol=1e-10)
    np.testing.assert_allclose(data[:, 1 + n:1 + 2 * n], tr.qd, rtol=0, atol=1e-10)
    np.testing.assert_allclose(data[:, -1], tr.energy, rtol=0, atol=1e-10)
    if m:
        np.testing.assert_allclose(data[:, -1 - m:-1], tr.lam, rtol=0, atol=1e-9)


@needs_cc
def test_c_parameter_argument_is_set(tmp_path: Path) -> None:
    """main.c's NAME=VALUE sets a parameter as --set does: l = 2 runs as simulate with l = 2
    (1e-10), and the swing differs from l = 1 by more than 0.1 rad."""
    exe = built_c("pendulum", tmp_path)
    done = subprocess.run([str(exe), str(T_END), str(SAMPLES), "1e-12", "1e-12", "l=2"],
                          capture_output=True, text=True, check=True)
    data = np.loadtxt(io.StringIO(done.stdout), delimiter=",", skiprows=1)
    _, tr2 = reference("pendulum", 1e-12, parameters={"l": 2.0})
    _, tr1 = reference("pendulum", 1e-12)
    np.testing.assert_allclose(data[:, 1], tr2.q[:, 0], rtol=0, atol=1e-10)
    assert np.abs(data[:, 1] - tr1.q[:, 0]).max() > 0.1
    bad = subprocess.run([str(exe), "1", "3", "1e-8", "1e-8", "nosuch=1"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and bad.stderr.strip().endswith("no parameter nosuch=1")


@needs_cc
def test_c_parameter_argument_moves_the_start(tmp_path: Path) -> None:
    """main.c's w0=2 on the slider-crank re-evaluates the start the file writes in w0
    (x1_dot: -r*w0) and makes it consistent, as --set w0=2: the run agrees with simulate to
    1e-10 (scaled by the largest state), its start velocities differing from w0 = 5's by more
    than 1."""
    exe = built_c("slider_crank", tmp_path)
    done = subprocess.run([str(exe), str(T_END), str(SAMPLES), "1e-12", "1e-12", "w0=2"],
                          capture_output=True, text=True, check=True)
    data = np.loadtxt(io.StringIO(done.stdout), delimiter=",", skiprows=1)
    system, tr = reference("slider_crank", 1e-12, parameters={"w0": 2.0})
    _, tr5 = reference("slider_crank", 1e-12)
    n = len(system.coordinates)
    expected = np.column_stack([tr.q, tr.qd])
    assert np.abs(tr.qd[0] - tr5.qd[0]).max() > 1.0
    np.testing.assert_allclose(data[:, 1:1 + 2 * n], expected, rtol=0,
                               atol=1e-10 * max(1.0, np.abs(expected).max()))


@pytest.fixture(scope="module")
def fmpy():
    """FMPy, the FMI importer; its tests are skipped where it is not installed (the test extra
    installs it)."""
    return pytest.importorskip("fmpy")


@pytest.fixture(scope="module")
def fmus(fmpy, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return export_fmus(tmp_path_factory, ("pendulum", "double_pendulum", "a01_pendulum",
                                          "slider_crank", "pendulum_redundant"), 2)


@pytest.mark.parametrize("name", ["pendulum", "double_pendulum", "a01_pendulum",
                                  "slider_crank", "pendulum_redundant"])
def test_fmu_validates_and_matches_simulate(name: str, fmpy, fmus: dict[str, Path]) -> None:
    """FMPy finds no problem in the FMU; as Model Exchange (CVode, rtol 1e-12) and as
    Co-Simulation (DOP853 inside, tolerance 1e-10) the coordinates and the energy agree with
    lagsim simulate (rtol = atol = 1e-10, lagsim's default) to 1e-8 (pendulum_redundant: its
    dependent rows in the Udwadia-Kalaba form the file asks for), the multipliers to 2e-8 of
    the largest one (the slider-crank's reach 100)."""
    from fmpy.validation import validate_fmu

    path = str(fmus[name])
    assert validate_fmu(path) == []
    assert_runs_as_simulate(fmpy, path, name)


def test_fmu_start_values_act_as_set(fmpy, fmus: dict[str, Path]) -> None:
    """A parameter given through FMPy's start_values runs as --set: l = 2 agrees with simulate
    --set l=2 to 1e-8 in both interfaces, and is 0.1 rad away from l = 1."""
    _, tr2 = reference("pendulum", 1e-10, parameters={"l": 2.0})
    _, tr1 = reference("pendulum", 1e-10)
    for kind in ("ModelExchange", "CoSimulation"):
        theta = fmu_run(fmpy, str(fmus["pendulum"]), kind, ["theta"],
                        start_values={"l": 2.0})[:, 0]
        np.testing.assert_allclose(theta, tr2.q[:, 0], rtol=0, atol=1e-8)
        assert np.abs(theta - tr1.q[:, 0]).max() > 0.1


def test_fmu_outputs_positions_and_multipliers(fmpy, fmus: dict[str, Path]) -> None:
    """A01's outputs: the bob's position is its coordinates' values (natural coordinates:
    x, y are the coordinates), the multiplier agrees with simulate's lambda to 1e-7."""
    system, tr = reference("a01_pendulum", 1e-10)
    lay = layout(system.spec, system.model, export_options(system.spec))
    lam = [o for o in lay.outputs if o.startswith("lambda_")]
    got = fmu_run(fmpy, str(fmus["a01_pendulum"]), "CoSimulation", [*lam, *lay.positions])
    np.testing.assert_allclose(got[:, :len(lam)], tr.lam, rtol=0, atol=1e-7)
    assert len(lay.positions) == 2


def test_fmu_declares_units_and_parameters(fmpy, fmus: dict[str, Path],
                                          tmp_path: Path) -> None:
    """Every parameter of the file is a tunable parameter with its value as start; a
    constrained system adds Baumgarte's two gains with --baumgarte's defaults (5, 5). The
    file's units: reach the states, their derivatives and the parameters."""
    md = fmpy.read_model_description(str(fmus["a01_pendulum"]))
    system = api.load("a01_pendulum")
    params = {v.name: float(v.start) for v in md.modelVariables if v.causality == "parameter"}
    assert params == {**system.parameters, "baumgarte_alpha": 5.0, "baumgarte_beta": 5.0}
    assert all(v.variability == "tunable" for v in md.modelVariables
               if v.causality == "parameter")
    assert len(md.derivatives) == 2 * len(system.coordinates)
    units = "units: {x: m, l: m, t: s, theta: rad, mc: kg, mp: kg, g: m/s2}"
    text = CART_POLE_INPUT.read_text(encoding="utf-8").replace("inputs: {F: 0}", units)
    path = str(api.load(text.replace("x: F", "x: 0")).export_fmu(tmp_path / "u.fmu"))
    from fmpy.validation import validate_fmu

    assert validate_fmu(path) == []
    md = fmpy.read_model_description(path)
    units = {v.name: v.unit for v in md.modelVariables}
    assert (units["x"], units["x_dot"], units["der(x)"], units["der(x_dot)"], units["l"],
            units["theta"], units["theta_dot"], units["g"]) == (
        "m", "m/s", "m/s", "m/s2", "m", "rad", "rad/s", "m/s2")
    assert (units["cart_x"], units["tip_x"], units["tip_y"], units["energy"]) == (
        "m", "m", "m", "kg.m2/s2")
    base = {u.name: {k: getattr(u.baseUnit, k) for k in ("kg", "m", "s", "rad")
                     if getattr(u.baseUnit, k)} for u in md.unitDefinitions}
    assert base == {"kg": {"kg": 1}, "m": {"m": 1}, "m/s": {"m": 1, "s": -1},
                    "m/s2": {"m": 1, "s": -2}, "rad": {"rad": 1}, "rad/s": {"rad": 1, "s": -1},
                    "rad/s2": {"rad": 1, "s": -2},
                    "kg.m2/s2": {"kg": 1, "m": 2, "s": -2}}
    a01 = api.load(A01_TEXT + "units: {x: m, y: m, m: kg, l: m, g: m/s2, t: s}\n")
    lay = layout(a01.spec, a01.model, export_options(a01.spec))
    assert dict(zip(lay.outputs, lay.output_units)) == {
        "bob_x": "m", "bob_y": "m", "lambda_rod": "kg/s2", "energy": "kg.m2/s2"}
    assert lay.parameter_units[-2:] == ("1/s", "1/s")


def test_unit_texts_are_si_units() -> None:
    """The units: texts FMI's BaseUnit needs: products, quotients and powers of SI units with
    prefixes (cm is 0.01 m, N*m is J), another text its own dimension without a BaseUnit; a
    sum of a length and an angle-free number has no unit, sin of an angle is a number."""
    from fractions import Fraction

    import symengine as se

    from lagsim.export.units import Dimension, dimension, parse

    assert parse("cm") == Dimension.of({"m": 1}, 0.01)
    assert parse("N*m") == parse("J") == parse("kg.m2/s2") == parse("kg m^2 s^-2")
    assert parse("m/s/s") == parse("m/s2")
    assert parse("deg").base_unit() == {"rad": "1", "factor": repr(np.pi / 180)}
    assert parse("ft") == Dimension.of({"ft": 1}) and parse("ft").base_unit() is None
    x, theta, g = se.symbols("x theta g")
    table = {"x": parse("m"), "theta": parse("rad"), "g": parse("m/s2")}
    assert dimension(x * se.sin(theta) + 2 * x, table) == parse("m")
    assert dimension(x + 1, table) is None
    assert dimension(se.sqrt(x * g), table) == Dimension.of(
        {"m": 1, "s": -1}) == Dimension.of({"m": Fraction(1), "s": Fraction(-1)})


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_existing_outputs_are_kept(tmp_path: Path) -> None:
    """An existing FMU file or C folder is kept without --force, with a one-line error (exit
    2), and written with it."""
    fmu = tmp_path / "p.fmu"
    fmu.write_text("mine")
    result = invoke("export", "pendulum", "--fmu", "-o", str(fmu))
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "give --force" in result.output
    assert fmu.read_text() == "mine"
    folder = tmp_path / "c"
    folder.mkdir()
    result = invoke("export", "pendulum", "--c", str(folder))
    assert result.exit_code == 2 and "give --force" in result.output
    assert list(folder.iterdir()) == []
    if CC is not None:
        result = invoke("export", "pendulum", "--fmu", "-o", str(fmu), "--force")
        assert result.exit_code == 0, result.output
        assert zipfile.is_zipfile(fmu)


def test_missing_compiler_gives_source_fmu(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a compiler ($CC names none, no cc on the PATH) the FMU holds its sources and no
    binaries, and one warning line says how to build them."""
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("PATH", str(tmp_path))
    notes: list[str] = []
    path = api.load("pendulum").export_fmu(tmp_path / "p.fmu", report=notes.append)
    names = zipfile.ZipFile(path).namelist()
    assert not any(n.startswith("binaries/") for n in names)
    assert {"modelDescription.xml", "sources/pendulum.c", "sources/fmu.c"} <= set(names)
    assert len(notes) == 1 and "\n" not in notes[0] and "no C compiler" in notes[0]


def test_unsupported_formulation_is_refused() -> None:
    """A constrained system exported in a formulation the C does not integrate is an
    InputError that says what works (every stabilizer is exported: projection in the C
    integrator, test_fmu_projection_in_co_simulation)."""
    with pytest.raises(InputError, match="index1"):
        export_options(api.load("a01_pendulum").spec, {"formulation": "reduced"})
    result = invoke("export", "pendulum")
    assert result.exit_code == 2 and "give one of --c DIR and --fmu" in result.output


A01_TEXT = (Path(__file__).parents[1] / "systems" / "a01_pendulum.yaml").read_text()

CART_POLE_INPUT = Path(__file__).parent / "cart_pole_lqr.yaml"


def test_fmu_input_drives_the_model(fmpy, tmp_path: Path) -> None:
    """The file's input F is an FMI input (causality input, start 0): driven with F = 1.1
    through FMPy it runs as simulate --set F=1.1 (1e-8, both interfaces), and moves the cart
    by more than 0.1 against F = 0."""
    if CC is None:
        pytest.skip("no C compiler")
    system = api.load(CART_POLE_INPUT)
    path = str(system.export_fmu(tmp_path / "cp.fmu"))
    from fmpy.validation import validate_fmu

    assert validate_fmu(path) == []
    md = fmpy.read_model_description(path)
    assert [(v.name, float(v.start)) for v in md.modelVariables if v.causality == "input"] == [
        ("F", 0.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pushed = system.simulate(t_end=1.0, samples=21, parameters={"F": 1.1})
        free = system.simulate(t_end=1.0, samples=21)
    signal = np.array([(0.0, 1.1), (1.0, 1.1)], dtype=[("time", float), ("F", float)])
    for kind, tol in (("ModelExchange", 1e-12), ("CoSimulation", 1e-10)):
        result = fmpy.simulate_fmu(path, fmi_type=kind, stop_time=1.0, output_interval=0.05,
                                   relative_tolerance=tol, input=signal, output=["x", "theta"])
        q = np.column_stack([result["x"], result["theta"]])
        np.testing.assert_allclose(q, pushed.q, rtol=0, atol=1e-8, err_msg=kind)
        assert np.abs(q[:, 0] - free.q[:, 0]).max() > 0.1


@needs_cc
@pytest.mark.parametrize("name", ["double_pendulum", "slider_crank", "knife_edge"])
def test_c_jacobian_is_lagsims(name: str, tmp_path: Path) -> None:
    """The header's NAME_jacobian is the Jacobian lagsim's implicit methods use
    (:class:`lagsim.numeric.jacobian.RhsJacobian`, with Baumgarte's default gains when
    constrained) to 1e-12 relative, at a state off the start (knife_edge: a velocity
    constraint)."""
    import ctypes

    from lagsim.numeric.compile import compile_model
    from lagsim.numeric.jacobian import RhsJacobian
    from lagsim.run.formulations import Baumgarte
    from lagsim.spec.options import SimulateOptions

    system = api.load(name)
    written = system.export_c(tmp_path / name)
    lib_path = tmp_path / "model.so"
    subprocess.run([CC, "-shared", "-fPIC", "-O2", "-o", str(lib_path), str(written[1]),
                    "-lm"], check=True, capture_output=True)
    lib = ctypes.CDLL(str(lib_path))
    lay = layout(system.spec, system.model, export_options(system.spec))
    ny = 2 * lay.n
    y = np.array(lay.state_start) + 0.01 * np.random.default_rng(1).standard_normal(ny)
    p = np.array(lay.parameter_start)
    J = np.zeros(ny * ny)
    func = getattr(lib, f"{lay.prefix}_jacobian")
    func.argtypes = [ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    assert func(0.3, y.ctypes.data, p.ctypes.data, J.ctypes.data) == 0
    numeric = compile_model(system.model)
    stabilizer = Baumgarte(numeric, SimulateOptions()) if numeric.m else None
    expected = RhsJacobian(numeric, system.model, stabilizer, False)(0.3, y)
    np.testing.assert_allclose(J.reshape(ny, ny), expected, rtol=0,
                               atol=1e-12 * np.abs(expected).max())


def test_fmu_directional_derivatives_match_differences(fmpy, fmus: dict[str, Path]) -> None:
    """fmi2GetDirectionalDerivative of the derivatives along a random direction of the states
    agrees with a central difference (step 1e-6) of fmi2GetDerivatives to 1e-7 relative."""
    path = str(fmus["slider_crank"])
    assert fmpy.read_model_description(path).modelExchange.providesDirectionalDerivative
    exact, differences = directional_and_differences(fmpy, path, 2)
    np.testing.assert_allclose(exact, differences, rtol=0, atol=1e-7 * np.abs(exact).max())


@pytest.mark.parametrize("name, start, parameters", [
    ("a01_pendulum", {"x": 0.7, "y_dot": 0.4}, {}),
    ("a01_pendulum", {}, {"l": 2.0}),
    ("slider_crank", {"x1": 0.3, "y1_dot": 0.5}, {}),
])
def test_fmu_moves_a_start_onto_the_constraints(name: str, start: dict[str, float],
                                                parameters: dict[str, float], fmpy,
                                                fmus: dict[str, Path]) -> None:
    """A start off the constraints through FMPy's start_values (a state set, or a parameter
    the constraints depend on) is moved onto them at fmi2ExitInitializationMode as lagsim
    simulate moves it: the set states given as --init gives them, the others from the file's
    values. The FMU's first row is simulate's consistent start to 1e-10 (measured 1e-16), the
    coordinates agree to 1e-8 over the run in both interfaces, and the start moved by more
    than 0.05. An initial value the file writes in parameters follows them as under --set."""
    system = api.load(name)
    lay = layout(system.spec, system.model, export_options(system.spec))
    initial = {**dict(system.spec.initial), **start}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = system.simulate(t_end=T_END, samples=SAMPLES, formulation=lay.formulation,
                             stabilize="baumgarte", rtol=1e-10, atol=1e-10, initial=start,
                             parameters=parameters)
    expected = np.column_stack([tr.q, tr.qd])
    raw = np.array([initial.get(s, 0.0) for s in lay.states])
    assert np.abs(expected[0] - raw).max() > 0.05
    for kind in ("ModelExchange", "CoSimulation"):
        got = fmu_run(fmpy, str(fmus[name]), kind, list(lay.states),
                      start_values={**start, **parameters})
        np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=1e-10, err_msg=kind)
        n = len(system.coordinates)
        np.testing.assert_allclose(got[:, :n], expected[:, :n], rtol=0, atol=1e-8,
                                   err_msg=kind)


NATURAL_X_ONLY = """\
name: natural_x_only
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [x, y]
masses:
  bob: {mass: m, position: [x, y]}
gravity: [0, -g]
constraints:
  - name: rod
    holonomic: x**2 + y**2 - l**2
initial: {x: 0.5}
"""


def test_fmu_falls_off_a_singular_start_as_simulate(fmpy, tmp_path: Path) -> None:
    """A natural pendulum given x only: y = 0 is a singular point of the rod (∂φ/∂y = 0), and
    the FMU, as lagsim simulate, lets y fall to the side the force at rest points to (rule 3 of
    lagsim.run.start): y = -0.866, the start equal to simulate's to 1e-10 and the run to 1e-8
    in both interfaces. Without gravity (g = 0 through start_values) no force picks a side:
    simulate refuses, and the FMU's initialization fails with one logged message naming the
    rod and y."""
    if CC is None:
        pytest.skip("no C compiler")
    system = api.load(NATURAL_X_ONLY)
    path = str(system.export_fmu(tmp_path / "natural.fmu"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = system.simulate(t_end=T_END, samples=SAMPLES, formulation="index1",
                             stabilize="baumgarte")
    assert tr.q[0, 1] == pytest.approx(-np.sqrt(0.75), abs=1e-12)
    for kind in ("ModelExchange", "CoSimulation"):
        got = fmu_run(fmpy, path, kind, ["x", "y", "x_dot", "y_dot"])
        np.testing.assert_allclose(got[0], np.r_[tr.q[0], tr.qd[0]], rtol=0, atol=1e-10)
        np.testing.assert_allclose(got[:, :2], tr.q, rtol=0, atol=1e-8, err_msg=kind)
    with pytest.raises(InputError, match="singular point"):
        system.simulate(t_end=1.0, parameters={"g": 0.0})
    messages: list[str] = []

    def logger(_env, _name, _status, _category, message) -> None:
        messages.append(message.decode())

    with pytest.raises(fmpy.fmi1.FMICallException, match="fmi2ExitInitializationMode"):
        fmpy.simulate_fmu(path, stop_time=1.0, start_values={"g": 0.0}, logger=logger)
    assert len(messages) == 1
    assert "singular point" in messages[0] and "rod" in messages[0]
    assert messages[0].endswith("give y a start value")


def test_fmu_stop_when_is_an_event_indicator(fmpy, tmp_path: Path) -> None:
    """--stop-when theta is the FMU's one event indicator: Model Exchange (CVode's root
    finding) and Co-Simulation (fmi2DoStep's bisection, then fmi2Discard with fmi2Terminated)
    end where theta crosses 0, at simulate --stop-when theta's stop time to 1e-8 (the quarter
    swing), theta there 0 to 1e-10."""
    if CC is None:
        pytest.skip("no C compiler")
    system = api.load("pendulum")
    path = str(system.export_fmu(tmp_path / "stop.fmu", flags={"stop_when": "theta"}))
    from fmpy.validation import validate_fmu

    assert validate_fmu(path) == []
    assert fmpy.read_model_description(path).numberOfEventIndicators == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stopped = system.simulate(t_end=5.0, samples=501, stop_when="theta")
    assert stopped.stop_reason == "stop_when"
    for kind, tol in (("ModelExchange", 1e-12), ("CoSimulation", 1e-10)):
        result = fmpy.simulate_fmu(path, fmi_type=kind, stop_time=5.0,
                                   relative_tolerance=tol, output_interval=0.01,
                                   output=["theta"])
        assert result["time"][-1] == pytest.approx(stopped.t[-1], abs=1e-8), kind
        assert abs(result["theta"][-1]) < 1e-10, kind


def test_fmu_projection_in_co_simulation(fmpy, tmp_path: Path) -> None:
    """--stabilize projection: Co-Simulation steps the index-1 equations and projects after
    each step as simulate --stabilize projection does (the slider-crank's coordinates to 1e-8,
    its rod constraints met to 1e-12 at every communication point, where Baumgarte's run leaves
    1e-10); Model Exchange keeps Baumgarte's terms and runs as simulate --stabilize baumgarte
    (1e-8)."""
    if CC is None:
        pytest.skip("no C compiler")
    system = api.load("slider_crank")
    path = str(system.export_fmu(tmp_path / "projected.fmu",
                                 flags={"stabilize": "projection"}))
    from fmpy.validation import validate_fmu

    assert validate_fmu(path) == []
    coords = list(system.coordinates)
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for stabilize in ("projection", "baumgarte"):
            runs[stabilize] = system.simulate(t_end=T_END, samples=SAMPLES,
                                              formulation="index1", stabilize=stabilize)
    cs = fmu_run(fmpy, path, "CoSimulation", coords)
    np.testing.assert_allclose(cs, runs["projection"].q, rtol=0, atol=1e-8)
    from lagsim.numeric.compile import compile_model

    numeric = compile_model(system.model)
    worst = max(np.abs(numeric.phi(t, q)[0]).max() for t, q in zip(runs["projection"].t, cs))
    assert worst < 1e-12
    me = fmu_run(fmpy, path, "ModelExchange", coords)
    np.testing.assert_allclose(me, runs["baumgarte"].q, rtol=0, atol=1e-8)


PARAMETRIC_START = """\
name: parametric_start
parameters:
  m: 1.0
  l: 1.5
  g: 9.81
  theta0: 0.4
  I: m*l**2
  k: I/10
coordinates: [theta]
kinetic: 1/2*I*theta_dot**2
potential: -m*g*l*cos(theta) + 1/2*k*theta**2
initial:
  theta: theta0
  theta_dot: theta0/l
"""


@pytest.fixture(scope="module")
def parametric(fmpy, tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    if CC is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("parametric")
    system = api.load(PARAMETRIC_START)
    return {fmi: system.export_fmu(folder / f"fmi{fmi}.fmu", fmi=fmi) for fmi in (2, 3)}


@pytest.mark.parametrize("fmi", [2, 3])
def test_fmu_start_values_reevaluate_the_files_definitions(fmi: int, fmpy,
                                                           parametric: dict[int, Path]) -> None:
    """Parameters defined from others (I: m*l**2, k: I/10) are calculated parameters, and an
    initial value written in parameters (theta: theta0, theta_dot: theta0/l) is computed at
    initialization: start_values {theta0: 0.9, l: 2} runs as simulate --set theta0=0.9 --set
    l=2 (1e-8, Model Exchange and Co-Simulation, FMI 2.0 and 3.0), starting at theta = 0.9,
    theta_dot = 0.45 with I = 4, k = 0.4, and 0.3 rad away from the file's run. Setting the
    calculated I is refused with one logged message (a logger of the test's own: FMPy keeps
    the last one it was given)."""
    from fmpy.validation import validate_fmu

    path = str(parametric[fmi])
    assert validate_fmu(path) == []
    md = fmpy.read_model_description(path)
    kinds = {v.name: (v.causality, v.initial) for v in md.modelVariables}
    assert kinds["I"] == kinds["k"] == ("calculatedParameter", "calculated")
    assert kinds["theta"] == kinds["theta_dot"] == ("local", "approx")
    changed = {"theta0": 0.9, "l": 2.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = api.load(PARAMETRIC_START).simulate(t_end=T_END, samples=SAMPLES, rtol=1e-12,
                                                 atol=1e-12, parameters=changed)
        tr1 = api.load(PARAMETRIC_START).simulate(t_end=T_END, samples=SAMPLES)
    names = ["theta", "theta_dot", "I", "k"]
    for kind in ("ModelExchange", "CoSimulation"):
        got = fmu_run(fmpy, path, kind, names, start_values=changed)
        assert got[0].tolist() == pytest.approx([0.9, 0.45, 4.0, 0.4], abs=1e-15)
        np.testing.assert_allclose(got[:, :2], np.column_stack([tr.q, tr.qd]), rtol=0,
                                   atol=1e-8, err_msg=kind)
        assert np.abs(got[:, 0] - tr1.q[:, 0]).max() > 0.3
    messages: list[str] = []

    def logger(*args: object) -> None:
        messages.append(args[-1].decode())  # type: ignore[attr-defined]

    with pytest.raises(fmpy.fmi1.FMICallException, match="fmi2SetReal|fmi3SetFloat64"):
        fmpy.simulate_fmu(path, stop_time=1.0, start_values={"I": 3.0}, logger=logger)
    assert messages == ["a calculated parameter is computed from the other parameters; set "
                        "those"]


def test_fmu_constrained_start_follows_a_parameter(fmpy, fmus: dict[str, Path]) -> None:
    """The slider-crank's start velocities are written in w0 (x1_dot: -r*w0): start_values
    {w0: 2} runs as simulate --set w0=2 (1e-8, both interfaces), the crank's start rate 2 where
    the file's is 5."""
    system = api.load("slider_crank")
    lay = layout(system.spec, system.model, export_options(system.spec))
    _, tr = reference("slider_crank", 1e-10, parameters={"w0": 2.0})
    _, tr5 = reference("slider_crank", 1e-10)
    expected = np.column_stack([tr.q, tr.qd])
    assert np.abs(tr.qd[0] - tr5.qd[0]).max() > 1.0
    for kind in ("ModelExchange", "CoSimulation"):
        got = fmu_run(fmpy, str(fmus["slider_crank"]), kind, list(lay.states),
                      start_values={"w0": 2.0})
        np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=1e-10, err_msg=kind)
        np.testing.assert_allclose(got, expected, rtol=0,
                                   atol=1e-8 * max(1, np.abs(expected).max()), err_msg=kind)
