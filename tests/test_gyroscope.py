"""The bundled ``gyroscope`` (issue 24): one symmetric rotor pivoted at a point, in a unit
quaternion (the bundled file) and in yaw-pitch-roll ZYX Tait–Bryan angles (:data:`EULER`, the
same file with the orientation and position rewritten, kept here rather than bundled since its
default start runs into gimbal lock). Away from the lock the two agree; through it the Euler
version stops with the singular mass matrix named, the quaternion version runs on.

References: Goldstein, Poole & Safko, *Classical Mechanics*, 3rd ed., §4.4 and appendix A (the
Tait–Bryan angles and their singularity at pitch ±π/2), §4.5 (quaternions), §5.7 (the top and
the gyroscope: p_φ = −p_ψ takes the axis through the vertical); Landau & Lifshitz, *Mechanics*,
§35.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lagsim.analysis.check import check_system
from lagsim.errors import InputError
from lagsim.output.trajectory import Trajectory
from lagsim.run.columns import evaluate_invariants
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.system import SystemSpec, load_spec, parse_spec
from lagsim.symbolic.model import build_model

ROOT = Path(__file__).resolve().parents[1]
GYRO = ROOT / "systems" / "gyroscope.yaml"
QUATERNION = GYRO.read_text(encoding="utf-8")
EULER = QUATERNION.replace(
    "coordinates: [e0, e1, e2, e3]", "coordinates: [psi, theta, phi]").replace(
    "position: [l*(e0**2 + e1**2 - e2**2 - e3**2), 2*l*(e1*e2 + e0*e3), 2*l*(e1*e3 - e0*e2)]",
    "position: [l*cos(theta)*cos(psi), l*cos(theta)*sin(psi), -l*sin(theta)]").replace(
    "orientation: {quaternion: [e0, e1, e2, e3]}",
    "orientation: {euler: ZYX, angles: [psi, theta, phi]}").replace(
    "  e1_dot: w/2\n", "  phi_dot: w\n").replace(
    "  e3_dot: -Ia*w/(2*(It + m*l**2))\n", "  psi_dot: -Ia*w/(It + m*l**2)\n")
"""The gyroscope in R = R_z(ψ) R_y(θ) R_x(φ): the axis R e_x = (cos θ cos ψ, cos θ sin ψ,
−sin θ) carries the centre of mass; at ψ = θ = φ = 0 (e = 1) ω_b = (φ̇, θ̇, ψ̇), so φ̇ = w and
ψ̇ = 2 ė₃ is the same start as the file's ė = ½ (0, ω_b)."""
PRECISE = {"rtol": 1e-13, "atol": 1e-13}


def run(spec: SystemSpec, **flags: object) -> Trajectory:
    return simulate(spec, build_model(spec), SimulateOptions.resolve(spec.simulate, flags))


def quaternion_rotation(traj: Trajectory) -> np.ndarray:
    e0, e1, e2, e3 = (traj[f"e{i}"] for i in range(4))
    return np.stack([
        np.stack([e0**2 + e1**2 - e2**2 - e3**2, 2 * (e1 * e2 - e0 * e3),
                  2 * (e1 * e3 + e0 * e2)], -1),
        np.stack([2 * (e1 * e2 + e0 * e3), e0**2 - e1**2 + e2**2 - e3**2,
                  2 * (e2 * e3 - e0 * e1)], -1),
        np.stack([2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1),
                  e0**2 - e1**2 - e2**2 + e3**2], -1)], -2)


def _elementary(axis: int, a: np.ndarray) -> np.ndarray:
    i, j = (axis + 1) % 3, (axis + 2) % 3
    R = np.zeros((len(a), 3, 3))
    R[:, axis, axis] = 1.0
    R[:, i, i] = R[:, j, j] = np.cos(a)
    R[:, i, j], R[:, j, i] = -np.sin(a), np.sin(a)
    return R


def euler_rotation(traj: Trajectory) -> np.ndarray:
    return (_elementary(2, traj["psi"]) @ _elementary(1, traj["theta"])
            @ _elementary(0, traj["phi"]))


def test_the_euler_variant_is_the_same_system() -> None:
    """The rewriting took: the Euler file has the three angles, the ZYX body and the start in
    angle rates, and no quaternion coordinate is left."""
    assert "{quaternion" not in EULER and "e0" not in EULER and "e1_dot" not in EULER
    assert "phi_dot: w" in EULER and "psi_dot: -Ia*w/(It + m*l**2)" in EULER
    spec = parse_spec(EULER, "gyroscope_euler.yaml")
    assert spec.coordinates == ("psi", "theta", "phi")
    assert spec.masses[0].orientation is not None
    assert spec.masses[0].orientation.sequence.upper() == "ZYX"


def test_away_from_gimbal_lock_the_two_agree() -> None:
    """Started without the turn about the vertical (ψ̇ = ė₃ = 0), the fast rotor precesses and
    nods with its pitch below 0.26 rad; over 5 s at rtol = atol = 1e-13 the rotation matrices of
    the two runs agree to 1e-9 (measured 1.1e-10)."""
    quaternion = run(parse_spec(QUATERNION, "gyroscope.yaml", initial={"e3_dot": 0.0}),
                     t_end=5.0, samples=501, **PRECISE)
    euler = run(parse_spec(EULER, "gyroscope_euler.yaml", initial={"psi_dot": 0.0}),
                t_end=5.0, samples=501, **PRECISE)
    assert 0.2 < euler["theta"].max() < 0.3
    assert np.abs(quaternion_rotation(quaternion) - euler_rotation(euler)).max() < 1e-9


def test_up_to_the_lock_the_two_agree() -> None:
    """From the file's start the axis reaches the downward vertical (pitch π/2) at t ≈ 0.1115;
    up to t = 0.1 (pitch 1.34) the two runs agree to 1e-9 (measured 2.6e-12)."""
    quaternion = run(load_spec(GYRO), t_end=0.1, samples=101, **PRECISE)
    euler = run(parse_spec(EULER, "gyroscope_euler.yaml"), t_end=0.1, samples=101, **PRECISE)
    assert euler["theta"][-1] == pytest.approx(1.336, abs=1e-3)
    assert np.abs(quaternion_rotation(quaternion) - euler_rotation(euler)).max() < 1e-9


def test_through_the_lock_the_euler_version_stops_naming_the_singular_mass_matrix(
        tmp_path: Path) -> None:
    """`lagsim simulate` of the Euler version exits 1 with one line: the mass matrix became
    singular at pitch π/2 (to 1e-4), gimbal lock of the rotor's angles, use a quaternion."""
    path = tmp_path / "gyroscope_euler.yaml"
    path.write_text(EULER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "lagsim", "simulate", str(path), "-o",
                           str(tmp_path / "out.csv")], capture_output=True, text=True, env=env)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    (line,) = lines
    assert line.startswith("lagsim: error: at t = 0.111")
    assert "the mass matrix became singular" in line
    assert "gimbal lock" in line and "give 'rotor' a quaternion orientation" in line
    theta = float(line.split("theta = ")[1].split(",")[0])
    assert theta == pytest.approx(np.pi / 2, abs=1e-4)


def test_through_the_lock_the_quaternion_version_runs_on() -> None:
    """Angular momentum about the vertical −Ia w = −p_ψ: the axis passes through the downward
    vertical (Goldstein §5.7); sampled every 1e-5 s near it, the axis comes within 1e-6 of −z
    (measured 1 − 3e-9 below), the run goes on to 0.5 s with |e| = 1 to 1e-13, h to 1e-10 and
    check's angular momentum about z, −Ia w = −0.4, to 1e-10; the other momentum check finds is
    the spin about the rotor's axis (ξ = e ⊗ (0, 1, 0, 0), p·ξ = 2 Ia ω₁ = 0.8)."""
    spec = load_spec(GYRO)
    traj = run(spec, t_end=0.5, samples=50001)
    R = quaternion_rotation(traj)
    axis_z = R[:, 2, 0]
    assert traj["t"][-1] == pytest.approx(0.5)
    assert axis_z.min() < -1 + 1e-6
    assert 0.11 < traj["t"][np.argmin(axis_z)] < 0.113
    e = np.column_stack([traj[f"e{i}"] for i in range(4)])
    assert np.abs(np.linalg.norm(e, axis=1) - 1).max() < 1e-13
    assert np.abs(traj["energy"] / traj["energy"][0] - 1).max() < 1e-10
    model = build_model(spec)
    found = {i.name: i for i in check_system(spec, model).invariants}
    assert set(found) == {"energy", "angular_momentum_z", "noether_1"}
    assert found["noether_1"].xi == ("e1", "-e0", "-e3", "e2") or \
        found["noether_1"].xi == ("-e1", "e0", "e3", "-e2")
    assert abs(found["noether_1"].value) == pytest.approx(0.8, abs=1e-12)
    Lz = evaluate_invariants(model, [found["angular_momentum_z"]], traj["t"], traj.q, traj.qd)
    assert np.abs(Lz + 0.4).max() < 1e-10


def test_the_euler_versions_check_marks_p_psi_as_the_angular_momentum_about_z() -> None:
    """In ZYX angles the rotation about z is the yaw ψ: p_ψ is cyclic, marked about z, and has
    the quaternion version's value −Ia w = −0.4; the roll φ (the spin) is cyclic too, p_φ =
    Ia ω₁ = 0.4."""
    spec = parse_spec(EULER, "gyroscope_euler.yaml")
    report = check_system(spec, build_model(spec))
    found = {i.name: i for i in report.invariants}
    assert set(found) == {"energy", "p_psi", "p_phi"}
    assert found["p_psi"].about == "z" and found["p_phi"].about == ""
    assert found["p_phi"].value == pytest.approx(0.4, abs=1e-12)
    assert found["p_psi"].value == pytest.approx(-0.4, abs=1e-12)


def test_a_start_at_the_lock_is_refused_with_the_same_advice() -> None:
    """Started at pitch π/2 the Euler version's mass matrix is singular at once: the located
    error names the yaw ψ as an angle of 'rotor' in gimbal lock and suggests a quaternion."""
    spec = parse_spec(EULER, "gyroscope_euler.yaml", initial={"theta": float(np.pi / 2)})
    with pytest.raises(InputError) as info:
        run(spec, t_end=0.1)
    message = str(info.value)
    assert message.startswith("gyroscope_euler.yaml:")
    assert "the mass matrix is singular at the start" in message
    assert "is an Euler angle of 'rotor', whose angles lock here (gimbal lock" in message
    assert "give 'rotor' a quaternion orientation" in message
