"""``lagsim export --fmu --fmi 3`` (issue 25): the FMI 3.0 FMU, validated and run by FMPy as
Model Exchange and Co-Simulation, agrees with ``lagsim simulate`` of the same equations; the
start moved onto the constraints and the units as in the FMI 2.0 FMU (tests/test_export.py)."""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from fmu_checks import (
    CC,
    assert_runs_as_simulate,
    directional_and_differences,
    export_fmus,
    fmu_run,
    reference,
)

from lagsim import api
from lagsim.export.ccode import export_options, layout
from lagsim.export.fmu import platform_tuple

NAMES = ("pendulum", "double_pendulum", "slider_crank")


@pytest.fixture(scope="module")
def fmpy():
    return pytest.importorskip("fmpy")


@pytest.fixture(scope="module")
def fmus(fmpy, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return export_fmus(tmp_path_factory, NAMES, 3)


@pytest.mark.parametrize("name", NAMES)
def test_fmi3_validates_and_matches_simulate(name: str, fmpy, fmus: dict[str, Path]) -> None:
    """FMPy finds no problem in the FMI 3.0 FMU (its model description, the binary in
    binaries/<arch>-<os>/); Model Exchange (CVode, rtol 1e-12) and Co-Simulation (DOP853 at
    1e-10) agree with lagsim simulate (1e-10) at its sample times to 1e-8 in the coordinates
    and the energy (measured 3e-10 and 3e-9 on the double pendulum), the slider-crank's
    multipliers to 2e-8 of the largest."""
    from fmpy.validation import validate_fmu

    path = str(fmus[name])
    assert validate_fmu(path) == []
    md = fmpy.read_model_description(path)
    assert md.fmiVersion == "3.0" and md.modelExchange and md.coSimulation
    assert f"binaries/{platform_tuple()}/{md.coSimulation.modelIdentifier}.so" in \
        zipfile.ZipFile(path).namelist()
    assert_runs_as_simulate(fmpy, path, name)


def test_fmi3_start_values_and_consistent_start(fmpy, fmus: dict[str, Path]) -> None:
    """A parameter through start_values runs as --set (the pendulum at l = 2, 1e-8, and 0.1 rad
    from l = 1); a slider-crank state set off the constraints is moved onto them at
    fmi3ExitInitializationMode as simulate --init moves it (the start to 1e-10, the run to
    1e-8)."""
    _, long = reference("pendulum", 1e-10, parameters={"l": 2.0})
    _, short = reference("pendulum", 1e-10)
    system = api.load("slider_crank")
    lay = layout(system.spec, system.model, export_options(system.spec))
    _, tr = reference("slider_crank", 1e-10, initial={**dict(system.spec.initial), "x1": 0.3})
    for kind in ("ModelExchange", "CoSimulation"):
        theta = fmu_run(fmpy, str(fmus["pendulum"]), kind, ["theta"],
                        start_values={"l": 2.0})[:, 0]
        np.testing.assert_allclose(theta, long.q[:, 0], rtol=0, atol=1e-8, err_msg=kind)
        assert np.abs(theta - short.q[:, 0]).max() > 0.1
        got = fmu_run(fmpy, str(fmus["slider_crank"]), kind, list(lay.states),
                      start_values={"x1": 0.3})
        np.testing.assert_allclose(got[0], np.r_[tr.q[0], tr.qd[0]], rtol=0, atol=1e-10)
        np.testing.assert_allclose(got[:, :4], tr.q, rtol=0, atol=1e-8, err_msg=kind)


def test_fmi3_model_description(fmus: dict[str, Path]) -> None:
    """The FMI 3.0 model description: time is the independent variable, each derivative names
    its state's value reference, the parameters are tunable with the file's values, the
    constrained states are initial="approx" (the FMU moves them) and InitialUnknowns; the
    build description lists the C sources."""
    root = ElementTree.fromstring(zipfile.ZipFile(fmus["slider_crank"]).read(
        "modelDescription.xml"))
    variables = {v.get("name"): v for v in root.find("ModelVariables")}
    assert variables["time"].get("causality") == "independent"
    assert variables["der(x1)"].get("derivative") == variables["x1"].get("valueReference")
    system = api.load("slider_crank")
    params = {k: float(v.get("start")) for k, v in variables.items()
              if v.get("causality") == "parameter"}
    assert params == {**system.parameters, "baumgarte_alpha": 5.0, "baumgarte_beta": 5.0}
    assert variables["x1"].get("initial") == "approx"
    structure = root.find("ModelStructure")
    initial = {u.get("valueReference") for u in structure.iter("InitialUnknown")}
    assert variables["x1"].get("valueReference") in initial
    build = ElementTree.fromstring(zipfile.ZipFile(fmus["slider_crank"]).read(
        "sources/buildDescription.xml"))
    assert sorted(f.get("name") for f in build.iter("SourceFile")) == ["fmu3.c",
                                                                     "slider_crank.c"]


def test_fmi3_stop_when_is_an_event_indicator(fmpy, tmp_path: Path) -> None:
    """--stop-when theta is the FMI 3.0 FMU's event indicator (a variable listed under
    EventIndicator): Model Exchange (CVode's root finding, then terminateSimulation) and
    Co-Simulation (fmi3DoStep's bisection, terminateSimulation with an early return at the
    crossing, which FMPy allows with early_return_allowed) end where theta crosses 0, at
    simulate --stop-when theta's stop time to 1e-8, theta there 0 to 1e-10."""
    if CC is None:
        pytest.skip("no C compiler")
    from fmpy.validation import validate_fmu

    system = api.load("pendulum")
    path = str(system.export_fmu(tmp_path / "stop.fmu", flags={"stop_when": "theta"}, fmi=3))
    assert validate_fmu(path) == []
    assert len(fmpy.read_model_description(path).eventIndicators) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stopped = system.simulate(t_end=5.0, samples=501, stop_when="theta")
    for kind, extra in (("ModelExchange", {"relative_tolerance": 1e-12}),
                        ("CoSimulation", {"early_return_allowed": True})):
        result = fmpy.simulate_fmu(path, fmi_type=kind, stop_time=5.0, output_interval=0.01,
                                   output=["theta"], **extra)
        assert result["time"][-1] == pytest.approx(stopped.t[-1], abs=1e-8), kind
        assert abs(result["theta"][-1]) < 1e-10, kind


def test_fmi3_directional_derivatives_match_differences(fmpy, fmus: dict[str, Path]) -> None:
    """fmi3GetDirectionalDerivative of the state derivatives along a random direction of the
    slider-crank's states agrees with a central difference (step 1e-6) of
    fmi3GetContinuousStateDerivatives to 1e-7 relative. (The model description's
    providesDirectionalDerivatives is FMI 3.0's attribute, read from the XML: FMPy 0.3.32 reads
    FMI 2.0's singular name.)"""
    path = str(fmus["slider_crank"])
    root = ElementTree.fromstring(zipfile.ZipFile(path).read("modelDescription.xml"))
    assert root.find("ModelExchange").get("providesDirectionalDerivatives") == "true"
    exact, differences = directional_and_differences(fmpy, path, 3)
    np.testing.assert_allclose(exact, differences, rtol=0, atol=1e-7 * np.abs(exact).max())
