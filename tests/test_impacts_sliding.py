"""Issue 27: Coulomb friction in a held contact, sticking and sliding
(:meth:`lagsim.run.engines.impacts.ImpactLoop._modes` and ``_switch``,
:meth:`lagsim.run.contacts.Contacts.held` with ``slide``).

Closed forms (Coulomb's law for a contact held closed, Pfeiffer and Glocker, *Multibody Dynamics
with Unilateral Contacts*, Wiley 1996, §7.1: sticking while |λ_T| ≤ μ λ_N, else sliding with
λ_T = −μ λ_N sign(ṡ)): a block of mass m thrown at v₀ along a level floor slides with the
deceleration μ g, stops at t = v₀/(μ g) after v₀²/(2 μ g) and sticks there; on an incline of
angle α it sticks from rest when tan α ≤ μ (friction m g sin α, normal force m g cos α) and
slides down at g (sin α − μ cos α) when tan α > μ; thrown up the incline at v₀ it decelerates at
g (sin α + μ cos α), stops, and slides back at g (sin α − μ cos α). A uniform disk (I = m ρ²/2)
rolls down the incline at (2/3) g sin α, its friction m g sin α/3, when tan α ≤ 3μ, else slips
(the classical rolling-versus-slipping condition; its contact point's slip is ẋ − ρ φ̇).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from lagsim.api import load
from lagsim.output.trajectory import Trajectory

TIGHT = {"rtol": 1e-12, "atol": 1e-12}
G, M, MU = 9.81, 1.5, 0.5
INCLINE = """
name: incline
parameters: {m: 1.5, g: 9.81, mu: 0.5, alpha: 0.3, v0: 0}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
potential: m*g*(y*cos(alpha) - x*sin(alpha))
constraints:
  - {name: slope, unilateral: y, restitution: 0, friction: mu, tangent: x}
initial: {x: 0, y: 0, x_dot: -v0}
simulate: {t_end: 1}
"""


def incline(alpha: float, v0: float = 0.0, t_end: float = 1.0) -> Trajectory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(INCLINE).simulate(parameters={"alpha": alpha, "v0": v0}, t_end=t_end,
                                      samples=201, **TIGHT)


def test_a_block_thrown_along_a_rough_floor_stops_after_v0_squared_over_2_mu_g() -> None:
    """α = 0: x = v₀ t − μ g t²/2 until t_s = v₀/(μ g), then x = v₀²/(2 μ g) at rest, to 1e-12;
    the floor's force m g throughout and y = 0."""
    v0 = 3.0
    trajectory = incline(0.0, v0=-v0, t_end=1.2)
    t = trajectory.t
    stop = v0 / (MU * G)
    x = np.where(t < stop, v0 * t - MU * G * t * t / 2, v0 * v0 / (2 * MU * G))
    x_dot = np.where(t < stop, v0 - MU * G * t, 0.0)
    assert t[-1] > stop
    assert np.max(np.abs(trajectory["x"] - x)) < 1e-12
    assert np.max(np.abs(trajectory["x_dot"] - x_dot)) < 1e-12
    assert np.max(np.abs(trajectory["contact_force_slope"] - M * G)) < 1e-12
    assert np.max(np.abs(trajectory["y"])) < 1e-12


@pytest.mark.parametrize("alpha", [0.3, 0.45, 0.7])
def test_a_block_on_a_rough_incline_sticks_when_tan_alpha_is_at_most_mu(alpha: float) -> None:
    """From rest: x = 0 when tan α ≤ μ (0.3 and 0.45 rad), else x = g (sin α − μ cos α) t²/2
    (0.7 rad), to 1e-12; the normal force m g cos α either way."""
    trajectory = incline(alpha)
    a = G * (math.sin(alpha) - MU * math.cos(alpha)) if math.tan(alpha) > MU else 0.0
    assert (a > 0.0) == (alpha == 0.7)
    assert np.max(np.abs(trajectory["x"] - a * trajectory.t ** 2 / 2)) < 1e-12
    assert np.max(np.abs(trajectory["contact_force_slope"] - M * G * math.cos(alpha))) < 1e-12


def test_a_block_thrown_up_a_steep_incline_stops_and_slides_back() -> None:
    """tan α > μ, thrown up at v₀: decelerates at g (sin α + μ cos α) until t₁ = v₀/that, then
    slides down at g (sin α − μ cos α) (the slip velocity falls through 0, the cone cannot hold
    the block, it slides the other way); x(t) to 1e-12."""
    alpha, v0 = 0.7, 2.0
    trajectory = incline(alpha, v0=v0)
    up = G * (math.sin(alpha) + MU * math.cos(alpha))
    down = G * (math.sin(alpha) - MU * math.cos(alpha))
    t = trajectory.t
    t1 = v0 / up
    x1 = -v0 * t1 + up * t1 * t1 / 2
    x = np.where(t < t1, -v0 * t + up * t * t / 2, x1 + down * (t - t1) ** 2 / 2)
    assert t[-1] > 2 * t1
    assert np.max(np.abs(trajectory["x"] - x)) < 1e-12


DISK = """
name: disk_on_incline
parameters: {m: 2.0, g: 9.81, mu: 0.2, alpha: 0.5, rho: 0.3}
coordinates: [x, y, phi]
kinetic: 1/2*m*(x_dot**2 + y_dot**2) + 1/4*m*rho**2*phi_dot**2
potential: m*g*(y*cos(alpha) - x*sin(alpha))
constraints:
  - {name: slope, unilateral: y, restitution: 0, friction: mu, tangent: x - rho*phi}
initial: {x: 0, y: 0, phi: 0}
simulate: {t_end: 1}
"""


@pytest.mark.parametrize("alpha", [0.5, 0.7])
def test_a_disk_on_a_rough_incline_rolls_when_tan_alpha_is_at_most_3_mu(alpha: float) -> None:
    """A uniform disk (I = m ρ²/2) from rest, its contact point's slip ẋ − ρ φ̇: it rolls,
    ẍ = (2/3) g sin α with the friction m g sin α / 3, while that stays within μ m g cos α,
    tan α ≤ 3μ (0.5 rad with μ = 0.2); else it slips, ẍ = g (sin α − μ cos α) and
    φ̈ = 2 μ g cos α / ρ (0.7 rad); x and φ to 1e-12."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(DISK).simulate(parameters={"alpha": alpha}, samples=101, **TIGHT)
    mu, rho = 0.2, 0.3
    t = trajectory.t
    if math.tan(alpha) <= 3 * mu:
        a = 2 / 3 * G * math.sin(alpha)
        spin = a / rho
    else:
        a = G * (math.sin(alpha) - mu * math.cos(alpha))
        spin = 2 * mu * G * math.cos(alpha) / rho
    assert (math.tan(alpha) <= 3 * mu) == (alpha == 0.5)
    assert np.max(np.abs(trajectory["x"] - a * t * t / 2)) < 1e-12
    assert np.max(np.abs(trajectory["phi"] - spin * t * t / 2)) < 1e-12
