"""Every bundled system simulated, each checked against a closed form, not against lagsim.

The issue-4 systems (spherical pendulum, Atwood machine, cart-pole, driven damped pendulum,
Kepler orbit, moving-pivot pendulum, slider-crank, the generated chain) and the issue-2 systems
that tests/test_simulate_physics.py and tests/test_integrate.py do not run (free mass in polar
coordinates, flat pendulum, pendulum with a spring). References:

- conservation of h = q̇·∂L/∂q̇ − L for a scleronomic, conservative system and dh/dt = τ·q̇ − 2R
  otherwise (seed 001_80d65b968ce3cb18.txt, §10.5 generalized forces; h is computed here from
  the state by hand, as T + V of each system);
- the Atwood machine's constant acceleration and string tension (seed 001 §10.7, seed
  002_485a91571cac8ced.txt §23.2), the Kepler ellipse's energy −μm/2a and period 2π a^{3/2}/√μ,
  the flat pendulum's rod force z = m v²/L² (seed 003_88d23709419132a0.txt), the spring
  pendulum's string tension (seed 002 §23.9), the free fall parabola (seed 001 Ex. 10.1/10.4);
- the moving-pivot angle equation solved independently by scipy's solve_ivp;
- the chain of 3 in rod angles against the same chain in natural coordinates (seed 001 §10.7);
- IFToMM benchmark A01 against the pendulum's Jacobi-elliptic solution (tests/reference/exact.py)
  and A02 (the N-four-bar, N = 2) against its own reduced parallelogram equation solved by
  solve_ivp.

Every run is short; the whole file takes about ten seconds.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import cumulative_trapezoid, solve_ivp
from scipy.interpolate import CubicHermiteSpline
from scipy.optimize import brentq

from lagsim.output.trajectory import Trajectory
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.chains import chain_yaml
from lagsim.spec.system import SystemSpec, load_spec, parse_spec
from lagsim.symbolic.model import build_model

G = 9.81
SYSTEMS = Path(__file__).resolve().parents[1] / "systems"

SIMULATED_ELSEWHERE = {
    "pendulum", "pendulum_natural", "pendulum_constrained", "pendulum_redundant",
    "double_pendulum_constrained", "sho_table", "skate", "free_mass_cartesian",
}
"""Run against closed forms in tests/test_simulate_physics.py and tests/test_integrate.py."""

SIMULATED_IN_CHECK = {"rod_two_particles", "knife_edge", "chaplygin_sleigh", "rolling_disk_line"}
"""Issue 10's systems, run against closed forms in tests/test_check_systems.py."""

SIMULATED_IN_RIGID = {"heavy_top"}
"""Issue 24's rigid bodies, run against closed forms in tests/test_rigid_bodies.py."""

SIMULATED_IN_OWN_FILE = {"torque_free_body": "test_torque_free_body.py",
                         "gyroscope": "test_gyroscope.py", "rolling_disk": "test_body_points.py",
                         "whipple_bicycle": "test_whipple_bicycle.py",
                         **{name: "test_impacts.py" for name in (
                             "bouncing_ball", "pendulum_stop", "newtons_cradle",
                             "rocking_block")},
                         "ueda_oscillator": "test_lyapunov.py"}
"""Issues 24, 27 and 28's systems with a test file of their own, which names the system's file."""

SIMULATED_HERE = {
    "spherical_pendulum", "atwood", "cart_pole", "driven_damped_pendulum", "kepler",
    "moving_pivot_pendulum", "slider_crank", "free_mass_polar", "flat_pendulum",
    "spring_pendulum", "double_pendulum", "a01_pendulum", "a02_four_bar",
}


def _run(spec: SystemSpec, **flags) -> Trajectory:
    return simulate(spec, build_model(spec), SimulateOptions.resolve(spec.simulate, flags))


def run(name: str, overrides: dict | None = None, **flags) -> Trajectory:
    return _run(load_spec(name, overrides=overrides), **flags)


def relative_spread(values: np.ndarray) -> float:
    return float(np.abs(values / values[0] - 1.0).max())


def test_every_bundled_system_has_a_simulation_test() -> None:
    """A new file in systems/ needs a test here; the others are run by name in those files."""
    bundled = {path.stem for path in SYSTEMS.glob("*.yaml")}
    assert bundled == (SIMULATED_ELSEWHERE | SIMULATED_HERE | SIMULATED_IN_CHECK
                       | SIMULATED_IN_RIGID | set(SIMULATED_IN_OWN_FILE))
    tests = Path(__file__).resolve().parent
    check = (tests / "test_check_systems.py").read_text(encoding="utf-8")
    assert all(f'"{name}"' in check for name in SIMULATED_IN_CHECK)
    rigid = (tests / "test_rigid_bodies.py").read_text(encoding="utf-8")
    assert all(f'"{name}' in rigid for name in SIMULATED_IN_RIGID)
    assert all(f'"{name}.yaml"' in (tests / f).read_text(encoding="utf-8")
               for name, f in SIMULATED_IN_OWN_FILE.items())
    text = "".join((tests / f).read_text(encoding="utf-8")
                   for f in ("test_simulate_physics.py", "test_integrate.py"))
    assert all(f'"{name}"' in text for name in SIMULATED_ELSEWHERE)


def test_spherical_pendulum_conserves_energy_and_lz() -> None:
    """h = ½ml²(θ̇² + sin²θ φ̇²) − mgl cos θ and L_z = ml² sin²θ φ̇ are constant (rel 1e-8;
    measured 3e-10 and 1e-10); the bob stays between two latitudes below the start θ = 1."""
    traj = run("spherical_pendulum", samples=201)
    theta, _ = traj.q.T
    theta_dot, phi_dot = traj.qd.T
    h = 0.5 * (theta_dot**2 + np.sin(theta) ** 2 * phi_dot**2) - G * np.cos(theta)
    lz = np.sin(theta) ** 2 * phi_dot
    assert h[0] == pytest.approx(0.5 * math.sin(1.0) ** 2 * 9.0 - G * math.cos(1.0), rel=1e-14)
    assert relative_spread(h) < 1e-8
    assert lz[0] == pytest.approx(math.sin(1.0) ** 2 * 3.0, rel=1e-14)
    assert relative_spread(lz) < 1e-8
    np.testing.assert_allclose(traj.energy, h, rtol=0, atol=1e-12)
    assert 0.6 < theta.min() < 0.8 and theta.max() == pytest.approx(1.0, abs=1e-9)


def test_atwood_machine_accelerates_uniformly() -> None:
    """y1 = y1(0) + ½at², a = (m1 − m2)g/(m1 + m2), y2 = l − y1, and the tension
    −λ_string = 2 m1 m2 g/(m1 + m2), to 1e-9 (measured 3e-15)."""
    traj = run("atwood", samples=101)
    m1, m2 = 1.1, 1.0
    a = (m1 - m2) * G / (m1 + m2)
    np.testing.assert_allclose(traj.q[:, 0], 2.0 + 0.5 * a * traj.t**2, rtol=0, atol=1e-9)
    np.testing.assert_allclose(traj.q[:, 1], 2.0 - 0.5 * a * traj.t**2, rtol=0, atol=1e-9)
    np.testing.assert_allclose(-traj.column("lambda_string"), 2 * m1 * m2 * G / (m1 + m2),
                               rtol=1e-9)
    assert traj.t[-1] == 2.5 and traj.q[-1, 1] > 0.1


def cart_pole_energy(traj: Trajectory, mc: float = 1.0, mp: float = 0.1, l: float = 0.5
                     ) -> np.ndarray:
    """T + V: the cart and the pole's tip mass, θ from the upward vertical."""
    _, theta = traj.q.T
    x_dot, theta_dot = traj.qd.T
    kinetic = (0.5 * (mc + mp) * x_dot**2 + mp * l * x_dot * theta_dot * np.cos(theta)
               + 0.5 * mp * l**2 * theta_dot**2)
    return kinetic + mp * G * l * np.cos(theta)


def test_cart_pole_without_the_force_conserves_energy() -> None:
    """F0 = 0: h = T + V constant to rel 1e-8 (measured 5e-10) while the pole falls over."""
    traj = run("cart_pole", overrides={"F0": 0.0}, samples=201)
    h = cart_pole_energy(traj)
    assert relative_spread(h) < 1e-8
    np.testing.assert_allclose(traj.energy, h, rtol=0, atol=1e-12)
    assert np.abs(traj.q[:, 1]).max() > 2.0


def test_cart_pole_force_does_the_work() -> None:
    """dh/dt = F·ẋ with F = F0 cos(wt): h(t) − h(0) = ∫F ẋ dt by the trapezoid rule on 4001
    samples (step 2.5e-3, rule error measured 1.4e-6) to 5e-6, while h changes by 0.09."""
    traj = run("cart_pole", samples=4001)
    h = cart_pole_energy(traj)
    work = cumulative_trapezoid(np.cos(2.0 * traj.t) * traj.qd[:, 0], traj.t, initial=0.0)
    assert np.abs(h - h[0] - work).max() < 5e-6
    assert np.abs(h - h[0]).max() > 0.05


def test_driven_damped_pendulum_dissipates() -> None:
    """Drive off: h = ½θ̇² − cos θ never rises (steps ≤ 1e-12; measured < −1e-13), drops from
    −0.980 towards the bottom −1, and h(t) − h(0) = −∫cθ̇² dt (trapezoid on dt = 0.01, to 1e-6;
    measured 1e-7). Drive on: h(t) − h(0) = ∫(F0 cos wt − cθ̇)θ̇ dt to 1e-4 (measured 4e-5)."""
    off = run("driven_damped_pendulum", overrides={"F0": 0.0}, t_end=20.0, samples=2001)
    w = off.qd[:, 0]
    h = 0.5 * w**2 - np.cos(off.q[:, 0])
    np.testing.assert_allclose(off.energy, h, rtol=0, atol=1e-12)
    assert np.diff(h).max() <= 1e-12
    assert h[0] == pytest.approx(-math.cos(0.2), rel=1e-14) and h[-1] < -0.99999
    dissipated = cumulative_trapezoid(-0.5 * w**2, off.t, initial=0.0)
    assert np.abs(h - h[0] - dissipated).max() < 1e-6

    on = run("driven_damped_pendulum", t_end=20.0, samples=2001)
    w = on.qd[:, 0]
    h = 0.5 * w**2 - np.cos(on.q[:, 0])
    power = (1.5 * np.cos(2.0 / 3.0 * on.t) - 0.5 * w) * w
    assert np.abs(h - h[0] - cumulative_trapezoid(power, on.t, initial=0.0)).max() < 1e-4
    assert h.max() > 0.0


def test_kepler_orbit_energy_momentum_and_period() -> None:
    """r0 = 1, v0 = 1.2, μ = m = 1: a = 1/(2/r0 − v0²/μ) = 1/0.56, h = −μm/2a and
    L = m r² θ̇ = 1.2 to 1e-8 (measured 2e-10, 4e-10); the periapsis returns (ṙ from − to +,
    located on the cubic Hermite interpolant of ṙ with r̈ = rθ̇² − μ/r²) at k·2π a^{3/2}/√μ to
    rel 1e-9 (measured 4e-11)."""
    traj = run("kepler", dt=0.01)
    r, _ = traj.q.T
    r_dot, theta_dot = traj.qd.T
    a = 1.0 / 0.56
    h = 0.5 * (r_dot**2 + r**2 * theta_dot**2) - 1.0 / r
    np.testing.assert_allclose(h, -1.0 / (2.0 * a), rtol=1e-8)
    np.testing.assert_allclose(traj.energy, h, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r**2 * theta_dot, 1.2, rtol=1e-8)
    spline = CubicHermiteSpline(traj.t, r_dot, r * theta_dot**2 - 1.0 / r**2)
    rising = np.nonzero((r_dot[:-1] < 0.0) & (r_dot[1:] >= 0.0))[0]
    returns = [brentq(spline, traj.t[i], traj.t[i + 1], xtol=1e-14) for i in rising]
    period = 2 * math.pi * a**1.5
    assert len(returns) == 2
    for k, time in enumerate(returns, start=1):
        assert time == pytest.approx(k * period, rel=1e-9)
    assert r.max() == pytest.approx(2 * a - 1.0, rel=1e-8)


def test_moving_pivot_pendulum_follows_the_angle_equation() -> None:
    """The rheonomic rod (x − A sin wt)² + y² = l² holds to 1e-9 (measured 1.4e-15), and
    θ = atan2(x − A sin wt, −y) agrees to 1e-7 (measured 4e-10) with solve_ivp of
    θ̈ = −(g/l) sin θ + (A w²/l) sin(wt) cos θ, θ(0) = 0.3, θ̇(0) = 0."""
    traj = run("moving_pivot_pendulum", samples=501)
    A, w, l = 0.1, 3.0, 1.0
    assert np.abs(traj.residual).max() < 1e-9
    assert np.abs(traj.residual_dot).max() < 1e-9
    theta = np.arctan2(traj.q[:, 0] - A * np.sin(w * traj.t), -traj.q[:, 1])

    def angle(t: float, y: np.ndarray) -> list[float]:
        return [y[1], -G / l * math.sin(y[0]) + A * w**2 / l * math.sin(w * t) * math.cos(y[0])]

    reference = solve_ivp(angle, (0.0, 10.0), [0.3, 0.0], method="DOP853", t_eval=traj.t,
                          rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(theta, reference.y[0], rtol=0, atol=1e-7)
    assert np.abs(theta - 0.3 * np.cos(math.sqrt(G) * traj.t)).max() > 0.01


def test_showcase_double_pendulum_hangs_down_and_follows_the_textbook() -> None:
    """The README's double pendulum: θ agrees to 1e-7 with solve_ivp of the textbook equations
    M(θ) θ̈ = F(θ, θ̇) (see test_systems_derive.py) over 3 s, before chaos separates them;
    h = T + U with U = g (m1 y1 + m2 y2) by hand is constant to rel 1e-8 (measured 1.1e-9);
    released from rest the lower bob first falls (its y decreases): gravity points down."""
    traj = run("double_pendulum", t_end=3.0, samples=301)
    th1, th2 = traj.q.T

    def textbook(_t: float, y: np.ndarray) -> list[float]:
        a, b, wa, wb = y
        c, s = math.cos(a - b), math.sin(a - b)
        M = np.array([[2.0, c], [c, 1.0]])
        F = np.array([-s * wb**2 - 2 * G * math.sin(a), s * wa**2 - G * math.sin(b)])
        return [wa, wb, *np.linalg.solve(M, F)]

    q0 = [2 * math.pi / 3, 2 * math.pi / 3, 0.0, 0.0]
    reference = solve_ivp(textbook, (0.0, 3.0), q0, method="DOP853", t_eval=traj.t,
                          rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(traj.q, reference.y[:2].T, rtol=0, atol=1e-7)
    w1, w2 = traj.qd.T
    y1, y2 = -np.cos(th1), -np.cos(th1) - np.cos(th2)
    kinetic = 0.5 * (2 * w1**2 + w2**2) + w1 * w2 * np.cos(th1 - th2)
    assert relative_spread(kinetic + G * (y1 + y2)) < 1e-8
    assert y2[5] < y2[0]


def slider_crank_energy(traj: Trajectory, m1: float = 0.5, m2: float = 1.0) -> np.ndarray:
    v = traj.qd
    return (0.5 * m1 * (v[:, 0]**2 + v[:, 1]**2) + 0.5 * m2 * (v[:, 2]**2 + v[:, 3]**2)
            + m1 * G * traj.q[:, 1] + m2 * G * traj.q[:, 3])


def test_slider_crank_closed_loop_index1_and_udwadia_kalaba() -> None:
    """Crank, rod and rail hold to 1e-9 (measured 5e-15), h = T + V is constant to rel 1e-8
    (measured 2e-10) in both formulations, which agree on q to 1e-8 (measured 5e-14) and on λ to
    1e-6 (measured 2e-11, with |λ| up to 106); the crank turns round (θ passes through 2π)."""
    runs = {form: run("slider_crank", formulation=form, t_end=4.0, samples=161)
            for form in ("index1", "udwadia-kalaba")}
    for form, traj in runs.items():
        assert traj.formulation == form
        assert np.abs(traj.residual).max() < 1e-9, form
        assert np.abs(traj.residual_dot).max() < 1e-9, form
        assert relative_spread(slider_crank_energy(traj)) < 1e-8, form
    index1, uk = runs["index1"], runs["udwadia-kalaba"]
    np.testing.assert_allclose(uk.q, index1.q, rtol=0, atol=1e-8)
    np.testing.assert_allclose(uk.lam, index1.lam, rtol=0, atol=1e-6)
    crank = np.unwrap(np.arctan2(index1.q[:, 1], index1.q[:, 0]))
    assert crank[-1] - crank[0] > 2 * math.pi


def test_a01_pendulum_follows_the_exact_solution() -> None:
    """IFToMM A01: released at rest from x = l, y = 0 (θ0 = π/2), the natural-coordinate run
    (defaults: index1 + projection) follows the Jacobi-elliptic θ(t) of tests/reference/exact.py
    (seed 001 Ex. 10.5) to 1e-8 over 20 s (measured 5e-9), on the rod to 1e-12."""
    from reference import exact

    traj = run("a01_pendulum", t_end=20.0, samples=41)
    assert (traj.formulation, traj.stabilize) == ("index1", "projection")
    theta = exact.angle(traj.t, math.pi / 2)[0]
    np.testing.assert_allclose(traj.q[:, 0], np.sin(theta), rtol=0, atol=1e-8)
    np.testing.assert_allclose(traj.q[:, 1], -np.cos(theta), rtol=0, atol=1e-8)
    assert np.abs(traj.residual).max() < 1e-12


def four_bar_reduced(t: np.ndarray, n_windows: int = 2, v0: float = 1.0) -> np.ndarray:
    """The crank angle θ(t) of A02's parallelogram motion from its own equation: all B_i move
    alike, B_0 = (cos θ, sin θ); N + 1 cranks (I = m l²/3 each) and N translating couplers
    (m l² each) give T = ½ I θ̇², I = (N + 1)/3 + N, and U = g sin θ ((N + 1)/2 + N), so
    I θ̈ = −g cos θ ((N + 1)/2 + N) (m = l = 1); θ(0) = π/2, θ̇(0) = −v0."""
    inertia = (n_windows + 1) / 3 + n_windows
    weight = G * ((n_windows + 1) / 2 + n_windows)
    sol = solve_ivp(lambda _t, y: [y[1], -weight * math.cos(y[0]) / inertia], (0.0, t[-1]),
                    [math.pi / 2, -v0], method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    return sol.y[0]


def test_a02_four_bar_passes_its_singular_positions() -> None:
    """IFToMM A02 (N = 2): B0 follows the reduced parallelogram motion θ(t) through the flat
    positions (y = 0, where the five constraint rows have rank 4) to 1e-6 (measured 3e-8), the
    rank drop is visited (some |y0| < 0.05, measured 3e-3, and θ turns past 2π), and h = T + V
    is constant to rel 1e-8 (measured 7e-10)."""
    traj = run("a02_four_bar", samples=201)
    assert traj.formulation == "udwadia-kalaba"
    theta = four_bar_reduced(traj.t)
    np.testing.assert_allclose(traj.q[:, 0], np.cos(theta), rtol=0, atol=1e-6)
    np.testing.assert_allclose(traj.q[:, 1], np.sin(theta), rtol=0, atol=1e-6)
    np.testing.assert_allclose(traj.q[:, 2:4], traj.q[:, 0:2] + [1.0, 0.0], rtol=0, atol=1e-6)
    assert np.abs(theta[0] - theta[-1]) > 2 * math.pi
    assert np.abs(traj.q[:, 1]).min() < 0.05
    assert relative_spread(traj.energy) < 1e-8
    assert traj.energy[0] == pytest.approx(1.5 + 3.5 * G, rel=1e-14)


def test_chain_of_three_minimal_and_natural_agree() -> None:
    """Bob positions at t = 2 from the rod angles (x_k = Σ l sin θ_i, y_k = −Σ l cos θ_i) and
    from the natural coordinates with three rod constraints, to 1e-7 (measured 3e-11)."""
    minimal = _run(parse_spec(chain_yaml(3)), t_end=2.0, samples=3)
    natural = _run(parse_spec(chain_yaml(3, natural=True)), t_end=2.0, samples=3)
    assert (minimal.formulation, natural.formulation) == ("ode", "index1")
    angles = minimal.q[-1]
    np.testing.assert_allclose(natural.q[-1, 0::2], np.cumsum(np.sin(angles)), rtol=0, atol=1e-7)
    np.testing.assert_allclose(natural.q[-1, 1::2], -np.cumsum(np.cos(angles)), rtol=0, atol=1e-7)
    assert np.abs(angles - 0.5).min() > 0.5


@pytest.mark.slow
def test_chain_of_thirty_two_keeps_its_rods_and_energy() -> None:
    """chain_yaml(32, natural=True), 0.5 s: 32 rods hold to 1e-9 and h = Σ ½m|v|² + m g y_k is
    constant to rel 1e-8 (measured 4e-11 absolute, h0 ≈ −4.4e3)."""
    traj = _run(parse_spec(chain_yaml(32, natural=True)), t_end=0.5, samples=3)
    assert np.abs(traj.residual).max() < 1e-9 and np.abs(traj.residual_dot).max() < 1e-9
    h = 0.5 * (traj.qd**2).sum(axis=1) + G * traj.q[:, 1::2].sum(axis=1)
    assert h[0] == pytest.approx(-G * math.cos(0.5) * 32 * 33 / 2, rel=1e-12)
    assert relative_spread(h) < 1e-8
    assert np.abs(traj.qd[-1]).max() > 0.1


def test_free_mass_in_polar_coordinates_falls_on_a_parabola() -> None:
    """x = r sin θ, y = −r cos θ from (r, θ) = (1, 0.5), (ṙ, θ̇) = (0.5, 1): x = x0 + vx t,
    y = y0 + vy t − ½gt² to 1e-8 (measured 1e-9), the polar equations with the centrifugal term
    (seed 001 Ex. 10.4; the printed 10.8 omits it)."""
    traj = run("free_mass_polar", samples=101)
    r, theta = traj.q.T
    s, c = math.sin(0.5), math.cos(0.5)
    vx, vy = 0.5 * s + c, -0.5 * c + s
    t = traj.t
    np.testing.assert_allclose(r * np.sin(theta), s + vx * t, rtol=0, atol=1e-8)
    np.testing.assert_allclose(-r * np.cos(theta), -c + vy * t - 0.5 * G * t**2, rtol=0,
                               atol=1e-8)


def test_flat_pendulum_turns_uniformly() -> None:
    """Seed 003, started tangentially at v = 1 on L = 1: (x, y) = L(cos vt/L, sin vt/L) to 1e-8
    (measured 3e-10), and the rod force z = m v²/L² = 1, that is λ_rod = −z, to 1e-8."""
    traj = run("flat_pendulum", samples=101)
    np.testing.assert_allclose(traj.q[:, 0], np.cos(traj.t), rtol=0, atol=1e-8)
    np.testing.assert_allclose(traj.q[:, 1], np.sin(traj.t), rtol=0, atol=1e-8)
    np.testing.assert_allclose(traj.column("lambda_rod"), -1.0, rtol=0, atol=1e-8)


def test_spring_pendulum_energy_and_string_tension() -> None:
    """Seed 002 §23.9 with d = 1, K = 20, ℓ0 = 0.5: h = ½md²θ̇² − mgd cos θ
    + ½K(d√(2 − 2 sin θ) − ℓ0)² constant to rel 1e-8 (measured 7e-10), and
    T_s = mdθ̇² + mg cos θ − K(d√(2 − 2 sin θ) − ℓ0)√((1 − sin θ)/2) = −λ_string to 1e-8."""
    traj = run("spring_pendulum", samples=201)
    theta, w = traj.q[:, 0], traj.qd[:, 0]
    K, l0 = 20.0, 0.5
    stretch = np.sqrt(2.0 - 2.0 * np.sin(theta)) - l0
    h = 0.5 * w**2 - G * np.cos(theta) + 0.5 * K * stretch**2
    assert relative_spread(h) < 1e-8
    tension = w**2 + G * np.cos(theta) - K * stretch * np.sqrt((1.0 - np.sin(theta)) / 2.0)
    np.testing.assert_allclose(-traj.column("lambda_string"), tension, rtol=0, atol=1e-8)
    assert theta.max() - theta.min() > 0.5
