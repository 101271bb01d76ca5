"""The systems bundled for issue 10's questions, simulated against closed forms.

- ``rod_two_particles``: a free rigid dumbbell (seed 002_485a91571cac8ced.txt §23.1, first
  question): the centre of mass moves uniformly, the rod turns at a constant rate w and its
  multiplier is λ = −m₁m₂/(m₁+m₂) w² (the centripetal force over the length);
- ``knife_edge`` and ``chaplygin_sleigh`` (seed 002 §23.1, second question): the Chaplygin sleigh's
  closed form u(t) = U tanh(kt + c₀), ω(t) = ω₀ cosh c₀ / cosh(kt + c₀), U = √(2E/m),
  k = m a U / J, tanh c₀ = u₀/U, from u̇ = a ω² and J ω̇ = −m a u ω (Bloch, *Nonholonomic Mechanics
  and Control*, §1.7), with E = ½ m u² + ½ J ω² conserved;
- ``rolling_disk_line``: φ̈ = τ/(I + mR²) with I = mR²/2, x − R cos α φ and y − R sin α φ constant.
"""

from __future__ import annotations

import math

import numpy as np

from lagsim.output.trajectory import Trajectory
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model

BUNDLED = ("rod_two_particles", "knife_edge", "chaplygin_sleigh", "rolling_disk_line")


def run(name: str, **flags) -> tuple[Trajectory, dict[str, float]]:
    spec = load_spec(name)
    traj = simulate(spec, build_model(spec), SimulateOptions.resolve(spec.simulate, flags))
    return traj, spec.parameter_values


def sleigh(t: np.ndarray, m: float, a: float, J: float, u0: float, w0: float
           ) -> tuple[np.ndarray, np.ndarray]:
    """The Chaplygin sleigh's forward speed u(t) and turning rate ω(t)."""
    U = math.sqrt((m * u0**2 + J * w0**2) / m)
    k = m * a * U / J
    c0 = math.atanh(u0 / U)
    return U * np.tanh(k * t + c0), w0 * math.cosh(c0) / np.cosh(k * t + c0)


def test_rod_two_particles_turns_uniformly_with_the_centripetal_tension() -> None:
    """Centre of mass at u t, the rod at angle w t, λ = −μ w² (all to 1e-7)."""
    traj, p = run("rod_two_particles", samples=101)
    m1, m2, w, u, length = p["m1"], p["m2"], p["w"], p["u"], p["l"]
    x1, y1, x2, y2 = traj.q.T
    centre = (m1 * x1 + m2 * x2) / (m1 + m2)
    assert np.allclose(centre, u * traj.t, atol=1e-7)
    assert np.allclose((m1 * y1 + m2 * y2) / (m1 + m2), 0.0, atol=1e-7)
    assert np.allclose(x1 - x2, length * np.cos(w * traj.t), atol=1e-7)
    assert np.allclose(y1 - y2, length * np.sin(w * traj.t), atol=1e-7)
    assert np.allclose(traj.column("lambda_rod"), -m1 * m2 / (m1 + m2) * w**2, rtol=1e-7)


def test_knife_edge_is_a_chaplygin_sleigh() -> None:
    """The edge's speed along the rod and the rod's turning rate follow the sleigh's closed form
    with m = m₁ + m₂, a = m₁l/m, J = m₁l² (to 1e-7)."""
    traj, p = run("knife_edge", samples=101)
    m1, m2, length = p["m1"], p["m2"], p["l"]
    x1, y1, x2, y2 = traj.q.T
    vx1, vy1, vx2, vy2 = traj.qd.T
    ex, ey = (x1 - x2) / length, (y1 - y2) / length
    speed = vx2 * ex + vy2 * ey
    turning = (ex * (vy1 - vy2) - ey * (vx1 - vx2)) / length
    m = m1 + m2
    u, w = sleigh(traj.t, m, m1 * length / m, m1 * length**2, p["u0"], p["w0"])
    assert np.allclose(speed, u, atol=1e-7)
    assert np.allclose(turning, w, atol=1e-7)
    assert np.abs(vx2 * ey - vy2 * ex).max() < 1e-9


def test_chaplygin_sleigh_closed_form() -> None:
    """u(t), ω(t) of the sleigh to 1e-7; it ends moving straight at the speed U."""
    traj, p = run("chaplygin_sleigh", samples=101)
    x, y, theta = traj.q.T
    vx, vy, w_run = traj.qd.T
    J = p["I"] + p["m"] * p["a"] ** 2
    u, w = sleigh(traj.t, p["m"], p["a"], J, p["u0"], p["w0"])
    assert np.allclose(vx * np.cos(theta) + vy * np.sin(theta), u, atol=1e-7)
    assert np.allclose(w_run, w, atol=1e-7)
    assert abs(w_run[-1]) < 0.01 * p["w0"]


def test_rolling_disk_line_rolls_with_constant_angular_acceleration() -> None:
    """φ = φ̇₀t + ½(τ/(I + mR²))t², the centre on its line, the ground's push m R φ̈ along it."""
    traj, p = run("rolling_disk_line", samples=51)
    m, R, alpha, tau = p["m"], p["R"], p["alpha"], p["tau"]
    x, y, phi = traj.q.T
    acceleration = tau / (0.5 * m * R**2 + m * R**2)
    assert np.allclose(phi, traj.t + 0.5 * acceleration * traj.t**2, rtol=1e-9, atol=1e-9)
    assert np.allclose(x - R * math.cos(alpha) * phi, 0.0, atol=1e-9)
    assert np.allclose(y - R * math.sin(alpha) * phi, 0.0, atol=1e-9)
    push = np.hypot(traj.column("lambda_roll_x"), traj.column("lambda_roll_y"))
    assert np.allclose(push, m * R * acceleration, rtol=1e-9)
