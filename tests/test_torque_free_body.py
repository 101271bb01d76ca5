"""The bundled ``torque_free_body`` (issue 24): a free rigid body in a unit quaternion, I = (1, 2,
3), spun near its intermediate axis; its conservation laws, its flip period against the Jacobi
elliptic solution of Euler's equations, the angular momentum `check` finds by Noether's theorem,
and the identity start of a quaternion left out of ``initial``.

References: Landau & Lifshitz, *Mechanics*, 3rd ed., §36 (Euler's equations), §37 (the
asymmetrical top: ω(t) in Jacobi's elliptic functions, the period 4K(k)/ν); Goldstein, Poole &
Safko, *Classical Mechanics*, 3rd ed., §4.5 (quaternions), §5.6 (the torque-free body); Schaub &
Junkins, *Analytical Mechanics of Space Systems*, §3.5 (ω_b = 2 G(e) ė); Marsden & Ratiu,
*Introduction to Mechanics and Symmetry*, ch. 15 (the spatial angular momentum R I ω_b is the
momentum map of rotations).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from bodies import g_matrix, rotation, run
from scipy.special import ellipj, ellipk

from lagsim.analysis.check import check_system
from lagsim.errors import InputError
from lagsim.output.trajectory import Trajectory
from lagsim.run.columns import evaluate_invariants
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.run.start import NO_INITIAL_IDENTITY
from lagsim.spec.system import SystemSpec, load_spec, parse_spec
from lagsim.symbolic.model import build_model

ROOT = Path(__file__).resolve().parents[1]
BODY = ROOT / "systems" / "torque_free_body.yaml"
TOP = ROOT / "systems" / "heavy_top.yaml"
INERTIA = np.array([1.0, 2.0, 3.0])


def motion(traj: Trajectory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(e, ω_b, L = R I ω_b) along a run, from its CSV columns alone."""
    e = np.column_stack([traj[f"e{i}"] for i in range(4)])
    ed = np.column_stack([traj[f"e{i}_dot"] for i in range(4)])
    w = 2 * np.einsum("nij,nj->ni", g_matrix(e), ed)
    L = np.einsum("nij,nj->ni", rotation(e), INERTIA * w)
    return e, w, L


def spun(w: tuple[float, float, float]) -> SystemSpec:
    """The body from the identity with ω_b = w: ė = ½ e ⊗ (0, w) = ½ (0, w) at e = (1, 0, 0, 0)."""
    return load_spec(BODY, initial={"e1_dot": w[0] / 2, "e2_dot": w[1] / 2,
                                    "e3_dot": w[2] / 2})


def test_energy_and_angular_momentum_are_conserved_over_100_s() -> None:
    """At the file's settings (projection, rtol = atol = 1e-12, 100 s) the energy ½ ω·Iω, |L| and
    the vector L = R I ω_b stay at their start values to 1e-10 relative (measured 4.3e-11,
    3.3e-11, 4.1e-11), |e| = 1 to 1e-13 (measured 2.2e-15), and the body does flip: ω₂ goes
    from +1 to below −0.99."""
    spec = load_spec(BODY)
    traj = run(spec, samples=2001)
    assert traj["t"][-1] == pytest.approx(100.0)
    e, w, L = motion(traj)
    energy = 0.5 * (INERTIA * w**2).sum(axis=1)
    size = np.linalg.norm(L, axis=1)
    assert np.abs(energy / energy[0] - 1).max() < 1e-10
    assert np.abs(traj["energy"] / energy - 1).max() < 1e-12
    assert np.abs(size / size[0] - 1).max() < 1e-10
    assert np.abs(L - L[0]).max() < 1e-10 * size[0]
    assert np.abs(np.linalg.norm(e, axis=1) - 1).max() < 1e-13
    assert w[0, 1] == pytest.approx(1.0, rel=1e-12) and w[:, 1].min() < -0.99
    assert L[0] == pytest.approx([0.1, 2.0, 0.0], abs=1e-12)


def jacobi(w0: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(period, ω(t), the axis order used) of Landau & Lifshitz §37.

    With 2E = Σ Iᵢωᵢ², M² = Σ Iᵢ²ωᵢ² and I1 < I2 < I3, for M² > 2EI2
    ω1 = √((2EI3 − M²)/(I1(I3 − I1))) cn τ, ω2 = √((2EI3 − M²)/(I2(I3 − I2))) sn τ,
    ω3 = √((M² − 2EI1)/(I3(I3 − I1))) dn τ, τ = ν t, ν = √((I3 − I2)(M² − 2EI1)/(I1I2I3)),
    k² = (I2 − I1)(2EI3 − M²)/((I3 − I2)(M² − 2EI1)); for M² < 2EI2 the indices 1 and 3 trade
    places. sn and cn have the real period 4K(k) in τ, so ω has the period 4K(k)/ν. Our starts
    have ω on the cn axis zero and ω2 = √(...) > 0, that is τ(0) = K."""
    order = np.array([0, 1, 2])
    I = INERTIA
    twice_e, m2 = float((I * w0**2).sum()), float((I**2 * w0**2).sum())
    if m2 < twice_e * I[1]:
        order = order[::-1]
    I1, I2, I3 = I[order]
    nu = math.sqrt((I3 - I2) * (m2 - twice_e * I1) / (I1 * I2 * I3))
    k2 = (I2 - I1) * (twice_e * I3 - m2) / ((I3 - I2) * (m2 - twice_e * I1))
    K = float(ellipk(k2))
    sn, cn, dn, _ = ellipj(nu * t + K, k2)
    amplitude = [math.sqrt((twice_e * I3 - m2) / (I1 * (I3 - I1))),
                 math.sqrt((twice_e * I3 - m2) / (I2 * (I3 - I2))),
                 math.sqrt((m2 - twice_e * I1) / (I3 * (I3 - I1)))]
    w = np.column_stack([amplitude[0] * cn, amplitude[1] * sn, amplitude[2] * dn])
    return 4 * K / nu, w[:, np.argsort(order)], order


@pytest.mark.parametrize("w0", [(0.1, 1.0, 0.0), (0.0, 1.0, 0.1)],
                         ids=["M2_below_2EI2", "M2_above_2EI2"])
def test_the_flip_period_is_jacobis(w0: tuple[float, float, float]) -> None:
    """ω₂ crosses 0 upward once per period; the mean spacing of its crossings over 100 s (four
    of them, linear interpolation between samples 0.005 s apart) is 4K(k)/ν to 1e-8 relative
    (measured 6.1e-10 and 2.8e-10; 4K/ν = 25.511 s and 21.642 s); the whole ω(t) follows
    Landau & Lifshitz's elliptic functions to 1e-7 (measured 2.7e-8 and 1.3e-8, a phase drift
    at rtol 1e-12). The default start (M² < 2EI2: the polhode encircles the axis of least
    moment) and a start with the small part along the axis of greatest moment (M² > 2EI2: the
    polhode encircles that axis) take the two branches of the solution."""
    traj = run(spun(w0), samples=20001)
    t = traj["t"]
    _, w, _ = motion(traj)
    period, expected, _ = jacobi(np.array(w0), t)
    x = w[:, 1]
    up = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    crossings = t[up] - (t[up + 1] - t[up]) * x[up] / (x[up + 1] - x[up])
    assert len(crossings) >= 3
    measured = (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    assert measured == pytest.approx(period, rel=1e-8)
    assert 20.0 < period < 30.0
    assert np.abs(w - expected).max() < 1e-7


# --- check: Noether's angular momentum --------------------------------------------------------


def test_check_finds_the_three_components_of_the_spatial_angular_momentum() -> None:
    """`check` reports the angular momentum about x, y and z (p·δq with δe = ½ (0, e_k) ⊗ e),
    each equal at the start to L = I ω_b = (0.1, 2, 0) (R = 1), and no other Noether momentum
    (I1 ≠ I2 ≠ I3: no rotation about a body axis is a symmetry); along a 100 s run each stays
    at its start value to 1e-10 relative to |L| (measured 4e-11)."""
    spec = load_spec(BODY)
    model = build_model(spec)
    report = check_system(spec, model)
    found = {inv.name: inv for inv in report.invariants}
    assert set(found) == {"energy", "angular_momentum_x", "angular_momentum_y",
                          "angular_momentum_z"}
    for axis, value in zip("xyz", (0.1, 2.0, 0.0)):
        inv = found[f"angular_momentum_{axis}"]
        assert inv.kind == "rotation" and inv.about == axis and inv.verified == "symbolic"
        assert inv.value == pytest.approx(value, abs=1e-13)
    text = report.to_text()
    assert "the angular momentum about y" in text
    invariants = [found[f"angular_momentum_{a}"] for a in "xyz"]
    traj = run(spec, samples=501)
    values = evaluate_invariants(model, invariants, traj["t"], traj.q, traj.qd)
    _, _, L = motion(traj)
    assert np.abs(values - L).max() < 1e-12
    assert np.abs(values - values[0]).max() < 1e-10 * np.linalg.norm(values[0])


def test_check_json_names_the_axis() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "lagsim", "check", str(BODY), "--format", "json"],
                         capture_output=True, text=True, env=env, check=True).stdout
    invariants = {i["name"]: i for i in json.loads(out)["invariants"]}
    assert invariants["angular_momentum_z"]["angular_momentum_about"] == "z"
    assert invariants["angular_momentum_y"]["value"] == pytest.approx(2.0, abs=1e-13)


def test_the_heavy_top_gets_only_the_z_component_as_its_cyclic_p_phi() -> None:
    """Gravity along −z breaks the rotations about x and y; the one about z is φ → φ + ε, so
    its momentum is p_φ, found as cyclic and marked as the angular momentum about z, not
    reported a second time."""
    spec = load_spec(TOP)
    report = check_system(spec, build_model(spec))
    names = [inv.name for inv in report.invariants]
    assert names == ["energy", "p_phi", "p_psi"]
    about = {inv.name: inv.about for inv in report.invariants}
    assert about == {"energy": "", "p_phi": "z", "p_psi": ""}
    assert "p_phi: p_phi = " in report.to_text()
    assert "[cyclic coordinate; the angular momentum about z; checked symbolic]" \
        in report.to_text()


def test_cartesian_positions_and_a_quaternion_turn_together() -> None:
    """A body with its centre at [x, y, z] in a quaternion, and a point fixed to it at R e₃,
    under gravity −z: the rotation about z is x p_y − y p_x + ½(e0 p_e3 + e1 p_e2 − e2 p_e1 −
    e3 p_e0); its value at the start is the total L_z = Σ m (r × v)_z + (R I ω_b)_z, computed
    here by hand (to 1e-12); x and y are cyclic (p_x, p_y), and no rotation about x or y."""
    spec = parse_spec(textwrap.dedent("""
        parameters: {m: 2.0, g: 9.81}
        coordinates: [x, y, z, e0, e1, e2, e3]
        masses:
          body:
            mass: m
            position: [x, y, z]
            orientation: {quaternion: [e0, e1, e2, e3]}
            inertia: [1, 2, 3]
          ball:
            mass: 1
            position: [x + 2*e1*e3 + 2*e0*e2, y + 2*e2*e3 - 2*e0*e1,
                       z + e0**2 - e1**2 - e2**2 + e3**2]
        gravity: [0, 0, -g]
        initial: {x: 1, y: 0.5, x_dot: 0.3, z_dot: 1, e1_dot: 0.1, e2_dot: 0.5, e3_dot: 0.2}
        """), "<body and ball>")
    report = check_system(spec, build_model(spec))
    found = {inv.name: inv for inv in report.invariants}
    assert set(found) == {"energy", "p_x", "p_y", "angular_momentum_z"}
    assert found["angular_momentum_z"].momentum == (
        "(1/2)*e0*p_e3 + (1/2)*e1*p_e2 + (-1/2)*e2*p_e1 + (-1/2)*e3*p_e0 + x*p_y - y*p_x")
    r, v = np.array([1.0, 0.5, 0.0]), np.array([0.3, 0.0, 1.0])
    w = np.array([0.2, 1.0, 0.4])
    ball, ball_v = r + np.array([0.0, 0.0, 1.0]), v + np.cross(w, [0.0, 0.0, 1.0])
    Lz = (2.0 * np.cross(r, v) + np.cross(ball, ball_v) + INERTIA * w)[2]
    assert found["angular_momentum_z"].value == pytest.approx(Lz, abs=1e-12)


def test_euler_angles_and_cartesian_positions_turn_together() -> None:
    """A free body at [x, y, z] in ZXZ angles (I1 = I2): the rotation about z is φ → φ + ε with
    r → e_z × r, so its momentum is p_φ + x p_y − y p_x (reported once, as angular_momentum_z,
    with the orbital L_x_y left out of the general search since it is that minus the cyclic p_φ);
    no rotation about x or y is a rotation of the ZXZ angles' first axis, so those two are the
    orbital L_x_z and L_y_z the affine search finds (the spin is separately conserved)."""
    spec = parse_spec(textwrap.dedent("""
        parameters: {m: 2.0}
        coordinates: [x, y, z, phi, theta, psi]
        masses:
          body:
            mass: m
            position: [x, y, z]
            orientation: {euler: ZXZ, angles: [phi, theta, psi]}
            inertia: [1, 1, 1.5]
        initial: {x: 1, y: 0.5, x_dot: 0.3, z_dot: 1, theta: 0.4, phi_dot: 0.2, psi_dot: 3}
        """), "<free body in angles>")
    report = check_system(spec, build_model(spec))
    found = {inv.name: inv for inv in report.invariants}
    assert set(found) == {"energy", "p_x", "p_y", "p_z", "p_phi", "p_psi", "angular_momentum_z",
                          "L_x_z", "L_y_z"}
    assert found["angular_momentum_z"].momentum == "p_phi + x*p_y - y*p_x"
    assert found["angular_momentum_z"].value == pytest.approx(
        found["p_phi"].value + 1.0 * 0.0 - 0.5 * 2.0 * 0.3, abs=1e-12)


def test_a_top_gliding_on_a_table_turns_its_free_position_components() -> None:
    """A top on a frictionless table, its centre at [x, y, l cos θ]: only x and y are coordinates
    by themselves, and they turn as (−y, x) with φ → φ + ε; l cos θ does not change, which is the
    z component of e_z × r. Its angular momentum about z is p_φ + x p_y − y p_x, at the start
    p_φ − 0.5 · 0.3 (to 1e-12); gravity leaves no rotation about x or y."""
    spec = parse_spec(textwrap.dedent("""
        parameters: {m: 1.0, g: 9.81, l: 0.5, I1: 0.2, I3: 0.3}
        coordinates: [x, y, phi, theta, psi]
        masses:
          top:
            mass: m
            position: [x, y, l*cos(theta)]
            orientation: {euler: ZXZ, angles: [phi, theta, psi]}
            inertia: [I1, I1, I3]
        gravity: [0, 0, -g]
        initial: {x: 1, y: 0.5, x_dot: 0.3, theta: 0.5, phi_dot: 1, psi_dot: 30}
        """), "<gliding top>")
    found = {inv.name: inv for inv in check_system(spec, build_model(spec)).invariants}
    assert set(found) == {"energy", "p_x", "p_y", "p_phi", "p_psi", "angular_momentum_z"}
    assert found["angular_momentum_z"].momentum == "p_phi + x*p_y - y*p_x"
    assert found["angular_momentum_z"].value == pytest.approx(found["p_phi"].value - 0.5 * 0.3,
                                                              abs=1e-12)


# --- the identity start of a quaternion left out ----------------------------------------------

FREE = textwrap.dedent("""
    coordinates: [e0, e1, e2, e3]
    parameters: {m: 1.0, I1: 1.0, I3: 0.5}
    masses:
      body:
        mass: m
        position: [0, 0, 0]
        orientation: {quaternion: [e0, e1, e2, e3]}
        inertia: [I1, I1, I3]
    """)


def test_a_quaternion_left_out_starts_at_the_identity() -> None:
    """No e in ``initial``: q(0) = (1, 0, 0, 0), not the singular e = 0, and the note on a file
    without initial values says so; the run keeps it (no velocity: the body rests, e(t) = (1,
    0, 0, 0) to 1e-15)."""
    spec = parse_spec(FREE, "<free body>")
    assert spec.initial_state()[0] == [1.0, 0.0, 0.0, 0.0]
    notes: list[str] = []
    traj = simulate(spec, build_model(spec),
                    SimulateOptions.resolve(spec.simulate, {"t_end": 1.0, "samples": 11}),
                    report=notes.append)
    assert notes == [NO_INITIAL_IDENTITY]
    assert np.abs(traj["e0"] - 1).max() < 1e-15
    assert np.abs(np.column_stack([traj[f"e{i}"] for i in (1, 2, 3)])).max() < 1e-15
    assert "no consistent start" not in check_system(spec, build_model(spec)).to_text()


@pytest.mark.parametrize("given,start,note", [
    ({"e0": 0.6, "e1": 0.8}, [0.6, 0.8, 0.0, 0.0], ""),
    ({"e1": 1.0}, [0.0, 1.0, 0.0, 0.0], ""),
    ({"e0": 1.0, "e1": 1.0}, [2**-0.5, 2**-0.5, 0.0, 0.0],
     "(moved: constraint body_unit conflicts with the given values)"),
])
def test_some_components_given_the_others_start_at_0(given: dict[str, float],
                                                      start: list[float], note: str) -> None:
    """Some components given: the others start at 0 and the consistent start does the rest
    (docs/format.md): a unit e is kept, a non-unit one is scaled to |e| = 1 along e (the least
    change in M's metric, since M e ∥ e) and reported."""
    notes: list[str] = []
    spec = parse_spec(FREE, "<free body>", initial=given)
    traj = simulate(spec, build_model(spec),
                    SimulateOptions.resolve(spec.simulate, {"t_end": 0.1, "samples": 2}),
                    report=notes.append)
    assert [float(traj[f"e{i}"][0]) for i in range(4)] == pytest.approx(start, abs=1e-15)
    if note:
        assert [n.startswith("initial e") and n.endswith(note) for n in notes] == [True, True]
    else:
        assert not notes


def test_one_component_that_leaves_the_axis_open_is_an_error() -> None:
    """e0 = 0.6 alone fixes the angle of rotation, not its axis: the start asks for another
    component rather than pick one."""
    spec = parse_spec(FREE, "<free body>", initial={"e0": 0.6})
    with pytest.raises(InputError, match=r"cannot decide e1, e2, e3 .* give e1 or e2 or e3"):
        run(spec, t_end=0.1)
