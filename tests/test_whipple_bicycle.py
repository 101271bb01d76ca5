"""The bundled ``whipple_bicycle`` against the benchmark of Meijaard, Papadopoulos, Ruina and
Schwab (2007, Proc. R. Soc. A 463, 1955–1982).

tests/reference/bicycle.py is the paper's linearized model (Appendix A) with its printed matrices
(eq. 5.4) and eigenvalues (Table 2); the tests here first hold that reference to the paper, then
the nonlinear four-body model of systems/whipple_bicycle.yaml to the reference: its geometry in
the upright configuration (Table 1's positions), its contacts (the lowest rim points), the
energy of a run (the rolling constraints do no work), and its eigenvalues about the upright
motion at speed v.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import symengine as se
from reference import bicycle as ref
from scipy.optimize import brentq

import lagsim
from lagsim.numeric.compile import NumericSystem, compile_model
from lagsim.output.trajectory import Trajectory
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.system import SystemSpec, load_spec
from lagsim.symbolic.model import Model, build_model, rotation_matrix

BICYCLE = Path(__file__).resolve().parents[1] / "systems" / "whipple_bicycle.yaml"
COORDINATES = ("x", "y", "yaw", "roll", "pitch", "steer", "rear", "front")


@cache
def bicycle() -> tuple[SystemSpec, Model, NumericSystem]:
    spec = load_spec(BICYCLE)
    model = build_model(spec)
    return spec, model, compile_model(model)


def upright(v: float, p: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """q and q̇ of the upright motion at speed v: rolling along x, wheels turning at −v/r."""
    return np.zeros(8), np.array([v, 0, 0, 0, 0, 0, -v / p["rR"], -v / p["rF"]])


def sort(values: np.ndarray) -> np.ndarray:
    """Complex values in a fixed order (real part, then imaginary part), rounded first so that
    a conjugate pair whose real parts differ by rounding keeps its order."""
    values = np.asarray(values, dtype=complex)
    return values[np.lexsort((values.imag, np.round(values.real, 8)))]


# --- the reference against the paper -----------------------------------------------------------


def test_appendix_a_gives_the_printed_matrices() -> None:
    """M, C1, K0, K2 from Table 1 by Appendix A equal eq. (5.4) to its 14 printed digits
    (measured 1.4e-14)."""
    got = ref.linear()
    for name in ("M", "C1", "K0", "K2"):
        assert np.abs(getattr(got, name) - getattr(ref.PUBLISHED, name)).max() < 5e-14, name


@pytest.mark.parametrize("v", sorted(ref.TABLE2))
def test_reference_eigenvalues_are_table_2(v: int) -> None:
    """The eigenvalues of eq. (5.3) equal Table 2(b) to 1e-12 (the table's 14 decimals;
    measured 6e-13 at v = 7, below 1e-13 elsewhere)."""
    got = sort(ref.eigenvalues(float(v)))
    want = sort(np.array(ref.TABLE2[v]))
    assert np.abs(got - want).max() < 1e-12


def test_reference_weave_and_capsize_speeds_are_table_2() -> None:
    """Re λ = 0 of the weave pair at 4.29238253634111 m/s, of the capsize mode at
    6.02426201538837 m/s, the weave's frequency there 3.43503384866144 rad/s (Table 2(a))."""
    weave, capsize = ref.critical_speeds()
    assert weave == pytest.approx(ref.WEAVE_SPEED, abs=1e-12)
    assert capsize == pytest.approx(ref.CAPSIZE_SPEED, abs=1e-12)
    assert ref.eigenvalues(weave).imag.max() == pytest.approx(ref.WEAVE_FREQUENCY, abs=1e-12)


# --- the nonlinear model: geometry -------------------------------------------------------------


def evaluate(expr: se.Basic, values: dict[str, float]) -> float:
    return float(se.sympify(expr).subs({se.Symbol(k): v for k, v in values.items()}))


def front_ground(spec: SystemSpec) -> se.Basic:
    (hol,) = [c.expression.expr for c in spec.constraints if c.kind == "holonomic"]
    return hol


def body(spec: SystemSpec, name: str) -> tuple[list[se.Basic], se.DenseMatrix]:
    (mass,) = [m for m in spec.masses if m.name == name]
    assert mass.orientation is not None
    return [e.expr for e in mass.position], rotation_matrix(mass.orientation)


def lowest_rim_height(spec: SystemSpec, wheel: str, radius: str, values: dict[str, float]
                      ) -> float:
    """max over the rim of its z (down): the rim is c + r (R e_x cos s + R e_z sin s), the wheel's
    plane spanned by its body x and z axes, so the lowest point is c_z + r |(R_zx, R_zz)|."""
    centre, R = body(spec, wheel)
    r = values[radius]
    return evaluate(centre[2], values) + r * math.hypot(evaluate(R[2, 0], values),
                                                         evaluate(R[2, 2], values))


def test_upright_configuration_is_table_1() -> None:
    """With every coordinate 0 the front wheel touches the ground (the pitch solved from
    front_ground is 0 to 1e-15) and the centres of mass sit where Table 1 puts them: rear wheel
    (0, 0, −rR), rear frame (xB, 0, zB), front frame (xH, 0, zH), front wheel (w, 0, −rF)."""
    spec, _, _ = bicycle()
    p = spec.parameter_values
    at = {**p, **dict.fromkeys(COORDINATES, 0.0)}
    assert abs(evaluate(front_ground(spec), at)) < 1e-15
    where = {"rear_wheel": (0, 0, -p["rR"]), "rear_frame": (p["xB"], 0, p["zB"]),
             "front_frame": (p["xH"], 0, p["zH"]), "front_wheel": (p["w"], 0, -p["rF"])}
    for name, want in where.items():
        centre, R = body(spec, name)
        assert [evaluate(e, at) for e in centre] == pytest.approx(want, abs=1e-15), name
        assert np.allclose([[evaluate(R[i, j], at) for j in range(3)] for i in range(3)],
                           np.eye(3), atol=1e-15), name


@pytest.mark.parametrize("roll, steer", [(0.3, 0.0), (0.0, 0.8), (-0.4, 0.6), (0.2, -1.2)])
def test_both_wheels_touch_the_ground_where_the_pitch_is_solved(roll: float, steer: float
                                                                 ) -> None:
    """Leaned and steered, the pitch solved from front_ground puts the lowest rim point of each
    wheel (from its centre and orientation, not from the constraint's formula) at height 0."""
    spec, _, _ = bicycle()
    at = {**spec.parameter_values, **dict.fromkeys(COORDINATES, 0.0),
          "x": 0.4, "y": -0.7, "yaw": 2.1, "roll": roll, "steer": steer, "rear": 1.3,
          "front": -0.5}
    hol = front_ground(spec)
    at["pitch"] = brentq(lambda th: evaluate(hol, {**at, "pitch": th}), -0.5, 0.5, xtol=1e-15)
    assert abs(lowest_rim_height(spec, "front_wheel", "rF", at)) < 1e-13
    assert abs(lowest_rim_height(spec, "rear_wheel", "rR", at)) < 1e-13
    if steer == 0.0:
        assert abs(at["pitch"]) < 1e-13   # leaned without steer, the bicycle stays in its plane


# --- the nonlinear model: its motion -----------------------------------------------------------


def accelerations(system: NumericSystem, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """q̈ of M q̈ = F + Aᵀλ, A q̈ = b (the index-1 form, seed 001 §10.7)."""
    M, F, A, b = system.dynamics(0.0, q, qd)
    n, m = len(q), len(b)
    kkt = np.block([[M, A.T], [A, np.zeros((m, m))]])
    return np.linalg.solve(kkt, np.concatenate([F, b]))[:n]


def linearized_eigenvalues(v: float, h: float = 1e-5) -> np.ndarray:
    """The eigenvalues of the Jacobian of (q, q̇) → (q̇, q̈) about the upright motion, by central
    differences of lagsim's compiled M, F, A, b, largest modulus first. Of its 16, 4 are the
    lean and steer modes; the others vanish (x, y, yaw and the wheel angles are ignorable, the
    speed is free, and the constraints add zero modes across the constraint manifold)."""
    _, _, system = bicycle()
    system = system.with_parameters({"v": v})
    q0, qd0 = upright(v, system.parameters)
    x0 = np.concatenate([q0, qd0])
    J = np.zeros((16, 16))
    J[:8, 8:] = np.eye(8)
    for j in range(16):
        e = np.zeros(16)
        e[j] = h
        up, down = x0 + e, x0 - e
        J[8:, j] = (accelerations(system, up[:8], up[8:])
                    - accelerations(system, down[:8], down[8:])) / (2 * h)
    lams = np.linalg.eigvals(J)
    return lams[np.argsort(-np.abs(lams))]


@pytest.mark.parametrize("v", [0, 1, 3, 5, 6, 10])
def test_linearized_nonlinear_model_has_table_2s_eigenvalues(v: int) -> None:
    """The four largest eigenvalues of the numerically linearized nonlinear model are Table 2's
    to 1e-9 (central differences, h = 1e-5; measured 1.7e-10), and the other twelve are below
    1e-5 (measured 1.7e-6: the holonomic constraint's zero pair is a Jordan block, which a
    perturbation of size δ splits by √δ)."""
    lams = linearized_eigenvalues(float(v))
    assert np.abs(sort(lams[:4]) - sort(np.array(ref.TABLE2[v]))).max() < 1e-9
    assert np.abs(lams[4:]).max() < 1e-5


def run(**flags: object) -> Trajectory:
    spec, model, _ = bicycle()
    return simulate(spec, model, SimulateOptions.resolve(spec.simulate, flags))


def test_rolling_conserves_energy_and_weaves_down_at_a_stable_speed() -> None:
    """From upright at v = 4.6 m/s (between the weave and capsize speeds, 4.29 and 6.02) with a
    lean rate of 0.5 rad/s: the energy h is constant to 1e-10 relative (the rolling constraints
    do no work; measured 5e-12 over 2 s), the constraints hold to 1e-12, and the lean, which
    overshoots and oscillates at the weave frequency, swings less in its second second."""
    traj = run(t_end=2.0, samples=201)
    assert np.abs(traj.energy / traj.energy[0] - 1).max() < 1e-10
    assert np.abs(traj.residual).max() < 1e-12
    roll = traj.q[:, COORDINATES.index("roll")]
    first, second = np.abs(roll[traj.t <= 1.0]).max(), np.abs(roll[traj.t > 1.0]).max()
    assert 0.05 < second < first


# --- lagsim modes about the upright motion (issue 24: the steady-motion linearization) ----------


@cache
def api_bicycle() -> lagsim.System:
    return lagsim.load(str(BICYCLE))


def steady_eigenvalues(v: float) -> tuple[np.ndarray, int]:
    """(the eigenvalues not set aside as exact zeros, the number set aside) of
    ``System.modes`` about the upright motion at speed v (the file's steady: with the rear
    wheel's rate −v/rR; the rest solved for). lagsim compiles the linearization once per model
    structure, so a sweep of v compiles once."""
    system = api_bicycle()
    report = system.modes(steady={"rear_dot": -v / system.parameters["rR"]})
    assert report.residual < 1e-10
    lams = np.array(report.eigenvalues, dtype=complex)
    return lams[lams != 0], len(report.zeros)


@pytest.mark.slow
def test_modes_command_gives_table_2_at_5_m_s() -> None:
    """``lagsim modes whipple_bicycle --set v=5 --format json``: two exact zeros set aside (the
    lateral speed and the rear wheel's rate: a change of either moves nothing else), and the
    other four eigenvalues are Table 2's at 5 m/s to 1e-10."""
    out = subprocess.run([sys.executable, "-m", "lagsim", "modes", str(BICYCLE), "--set", "v=5",
                          "--format", "json"], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    lams = np.array([complex(e["re"], e["im"]) for e in report["eigenvalues"]])
    zero = lams == 0
    assert zero.sum() == report["zero_eigenvalues"]["count"] == 2
    assert np.abs(sort(lams[~zero]) - sort(np.array(ref.TABLE2[5]))).max() < 1e-10


@pytest.mark.slow
def test_steady_modes_are_table_2_and_give_the_weave_and_capsize_speeds() -> None:
    """About the upright motion at v = 0, 1, …, 10 m/s the four eigenvalues of lagsim's
    linearization are Table 2's to 1e-10 (measured 5.7e-13); the weave and capsize speeds,
    where the weave pair's and the capsize eigenvalue's real parts vanish (brentq in [3, 5] and
    [5.5, 7] m/s), are 4.29238253634111 and 6.02426201538837 m/s to 1e-8 (measured 1e-12 and
    9.8e-11)."""
    for v, want in ref.TABLE2.items():
        lams, zeros = steady_eigenvalues(float(v))
        assert zeros == 2 and len(lams) == 4, v
        assert np.abs(sort(lams) - sort(np.array(want))).max() < 1e-10, v
    weave, capsize = ref.critical_speeds(lambda v: steady_eigenvalues(v)[0])
    assert weave == pytest.approx(ref.WEAVE_SPEED, abs=1e-8)
    assert capsize == pytest.approx(ref.CAPSIZE_SPEED, abs=1e-8)
