"""Helpers of the export tests (tests/test_export.py, test_export_fmi3.py): lagsim simulate in the
form the export integrates, the FMUs of bundled systems, FMPy's runs of an FMU at simulate's
samples, and its directional derivatives beside central differences."""

from __future__ import annotations

import ctypes
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from lagsim import api
from lagsim.export.ccode import export_options, layout

CC = shutil.which("cc") or shutil.which("gcc")
T_END, SAMPLES = 2.0, 41


def reference(name: str, tol: float, **given: object):
    """``lagsim simulate`` of the bundled ``name`` in the form the export integrates (index1,
    or the file's udwadia-kalaba, with Baumgarte when constrained)."""
    system = api.load(name)
    options: dict[str, object] = dict(t_end=T_END, samples=SAMPLES, rtol=tol, atol=tol)
    if system.model.m:
        form = layout(system.spec, system.model, export_options(system.spec)).formulation
        options.update(formulation=form, stabilize="baumgarte")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return system, system.simulate(**options, **given)


def export_fmus(factory: pytest.TempPathFactory, names: tuple[str, ...],
                fmi: int) -> dict[str, Path]:
    """The FMI ``fmi`` FMU of each bundled system of ``names`` in a fresh folder; the test is
    skipped without a C compiler."""
    if CC is None:
        pytest.skip("no C compiler")
    folder = factory.mktemp(f"fmu{fmi}")
    return {name: api.load(name).export_fmu(folder / f"{name}.fmu", fmi=fmi) for name in names}


def fmu_run(fmpy, path: str, kind: str, names: list[str], **options: object):
    """FMPy's run of ``path`` over [0, T_END] at simulate's samples, the columns ``names``
    (rows: samples; ``time`` the sample times)."""
    result = fmpy.simulate_fmu(path, fmi_type=kind, stop_time=T_END,
                               output_interval=T_END / (SAMPLES - 1),
                               relative_tolerance=1e-12 if kind == "ModelExchange" else 1e-10,
                               output=[c for c in names if c != "time"], **options)
    return np.column_stack([result[c] for c in names])


def assert_runs_as_simulate(fmpy, path: str, name: str) -> None:
    """FMPy's Model Exchange (CVode, rtol 1e-12) and Co-Simulation (DOP853 inside, tolerance
    1e-10) runs of the FMU ``path`` of the bundled ``name`` agree with lagsim simulate (rtol =
    atol = 1e-10, lagsim's default) at its sample times (1e-12): the coordinates and the energy
    to 1e-8, the multipliers to 2e-8 of the largest one."""
    system, tr = reference(name, 1e-10)
    coords = list(system.coordinates)
    lam = [f"lambda_{c}" for c in tr.constraint_names]
    for kind in ("ModelExchange", "CoSimulation"):
        got = fmu_run(fmpy, path, kind, ["time", *coords, "energy", *lam])
        np.testing.assert_allclose(got[:, 0], tr.t, rtol=0, atol=1e-12, err_msg=kind)
        np.testing.assert_allclose(got[:, 1:1 + len(coords)], tr.q, rtol=0, atol=1e-8,
                                   err_msg=kind)
        np.testing.assert_allclose(got[:, 1 + len(coords)], tr.energy, rtol=0, atol=1e-8,
                                   err_msg=kind)
        if lam:
            np.testing.assert_allclose(got[:, 2 + len(coords):], tr.lam, rtol=0,
                                       atol=2e-8 * max(1.0, np.abs(tr.lam).max()),
                                       err_msg=kind)


def directional_and_differences(fmpy, path: str, fmi: int) -> tuple[np.ndarray, np.ndarray]:
    """At the consistent start of the FMI ``fmi`` FMU ``path`` in Model Exchange: its
    directional derivative (fmi2GetDirectionalDerivative, fmi3GetDirectionalDerivative) of the
    state derivatives along a random direction v of the states (seed 0), and the central
    difference (step 1e-6) of its state derivatives along v."""
    from fmpy.fmi2 import FMU2Model
    from fmpy.fmi3 import FMU3Model

    md = fmpy.read_model_description(path)
    folder = fmpy.extract(path)
    model = FMU2Model if fmi == 2 else FMU3Model
    fmu = model(guid=md.guid if fmi == 2 else md.instantiationToken, unzipDirectory=folder,
                modelIdentifier=md.modelExchange.modelIdentifier, instanceName="jac")
    fmu.instantiate()
    if fmi == 2:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
    else:
        fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    fmu.enterContinuousTimeMode()
    ny = len(md.derivatives)
    ders = [u.variable.valueReference for u in md.derivatives]
    states = [u.variable.derivative.valueReference for u in md.derivatives]
    get_derivatives = (fmu.getDerivatives if fmi == 2
                       else fmu.getContinuousStateDerivatives)

    def read(function) -> np.ndarray:
        buffer = np.zeros(ny)
        function(buffer.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ny)
        return buffer

    def derivatives(y: np.ndarray) -> np.ndarray:
        y = np.ascontiguousarray(y)
        fmu.setContinuousStates(y.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ny)
        return read(get_derivatives)

    try:
        x = read(fmu.getContinuousStates)
        v = np.random.default_rng(0).standard_normal(ny)
        exact = np.array(fmu.getDirectionalDerivative(ders, states, list(v)))
        h = 1e-6
        return exact, (derivatives(x + h * v) - derivatives(x - h * v)) / (2 * h)
    finally:
        fmu.terminate()
        fmu.freeInstance()
        shutil.rmtree(folder, ignore_errors=True)
