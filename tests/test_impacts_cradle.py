"""Newton's cradle (the bundled ``newtons_cradle``: three equal balls on a line, the first
arriving at speed v on two at rest and touching) against an independent computation: scipy's
``solve_ivp`` with the gaps as terminal events, and at each event Newton's law per contact
solved together as a linear complementarity problem by enumeration (Pfeiffer and Glocker,
*Multibody Dynamics with Unilateral Contacts*, Wiley 1996, §7.2; Glocker, *Set-Valued Force
Laws*, Springer 2001, ch. 8; Brogliato, *Nonsmooth Mechanics*, 3rd ed., Springer 2016, on
multiple impacts, the cradle among them): Λ_i ≥ 0, ġ⁺_i + e ġ⁻_i ≥ 0, Λ_i (ġ⁺_i + e ġ⁻_i) = 0
over the closed contacts that do not separate, m (q̇⁺ − q̇⁻) = Gᵀ Λ.

With the balls 2 and 3 touching (gap 0) both contacts take part in the impact at
t = (0.5 − 0.1 − 0)/v = 0.4, and with e = 1 that law gives (−1/3, 2/3, 2/3) v, impulses
(4/3, 2/3) m v: the only impact of the run (nothing brings the balls back: no walls, no
pendulums), the balls 2 and 3 leaving together, their gap 0 with rate 0. The familiar
"one ball in, one ball out", (0, 0, v), is the sequential law: with a small gap between the
balls 2 and 3 the same law makes two two-ball impacts, (0, v, 0) at 0.4, then (0, 0, v).
"""

from __future__ import annotations

import warnings
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from lagsim import naming
from lagsim.api import load
from lagsim.output.trajectory import Trajectory
from lagsim.run.crossings import Scan
from lagsim.run.engines import impacts

SYSTEMS = Path(__file__).resolve().parents[1] / "systems"
CRADLE = SYSTEMS / "newtons_cradle.yaml"
D = 0.1
G_ROWS = np.array([[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]])
"""The gradients of the gaps x2 − x1 − d ('left') and x3 − x2 − d ('right')."""
MISSED = "could not be followed"


def newton_lcp(qd: np.ndarray, closed: list[int], m: float, e: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """q̇⁺ and Λ of Newton's law per contact over the ``closed`` contacts (equal masses m), by
    enumerating the sets of contacts that push, smallest first."""
    before = G_ROWS @ qd
    candidates = [i for i in closed if before[i] <= 0.0]
    for size in range(1, len(candidates) + 1):
        for push in combinations(candidates, size):
            S = list(push)
            W = G_ROWS[S] @ G_ROWS[S].T / m
            lam_s = np.linalg.solve(W, -(1.0 + e) * before[S])
            lam = np.zeros(2)
            lam[S] = lam_s
            after = qd + G_ROWS.T @ lam / m
            rates = G_ROWS @ after
            if lam_s.min() >= -1e-14 and all(rates[i] + e * before[i] >= -1e-14
                                             for i in candidates):
                return after, lam
    raise AssertionError("no solution")


class Gap:
    """The gap i as solve_ivp's terminal event falling through 0."""

    terminal = True
    direction = -1

    def __init__(self, i: int) -> None:
        self.i = i

    def __call__(self, s: float, z: np.ndarray) -> float:
        return float(G_ROWS[self.i] @ z[:3] - D)


def independent(x0: list[float], v: float, t_end: float, m: float = 1.0, e: float = 1.0
                ) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """The impacts (t, Λ, q̇⁺) of the three balls from positions ``x0``, ball 1 at speed v:
    free flight by solve_ivp, each gap that is open or closing a terminal falling event."""
    t, y = 0.0, np.array([*x0, v, 0.0, 0.0])
    out: list[tuple[float, np.ndarray, np.ndarray]] = []
    while t < t_end:
        gaps = G_ROWS @ y[:3] - D
        rates = G_ROWS @ y[3:]
        watched = [i for i in range(2) if gaps[i] > 1e-12 or rates[i] < -1e-12]

        events = [Gap(i) for i in watched]
        sol = solve_ivp(lambda s, z: np.concatenate((z[3:], np.zeros(3))), (t, t_end), y,
                        events=events, rtol=1e-13, atol=1e-13)
        if sol.status != 1:
            break
        t = float(min(te[0] for te in sol.t_events if len(te)))
        y = sol.y[:, -1]
        closed = [i for i in range(2) if abs(G_ROWS[i] @ y[:3] - D) <= 1e-9]
        after, lam = newton_lcp(y[3:], closed, m, e)
        out.append((t, lam, after))
        y = np.concatenate((y[:3], after))
    return out


def simulate(path: Path | str, **options: object) -> tuple[Trajectory, list[str]]:
    """The run and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trajectory = load(path).simulate(**options)
    return trajectory, [str(w.message) for w in caught]


def lagsim_impacts(trajectory: Trajectory) -> list[tuple[float, np.ndarray, np.ndarray]]:
    impulses = np.stack([trajectory[naming.impulse(c)] for c in ("left", "right")], axis=1)
    rows = np.flatnonzero(np.any(impulses != 0.0, axis=1))
    return [(float(trajectory.t[r]), impulses[r],
             np.array([trajectory[f"x{k}_dot"][r] for k in (1, 2, 3)])) for r in rows]


def assert_same_impacts(got: list, reference: list, count: int) -> None:
    """``count`` impacts in each list, their times, impulses and velocities after equal to
    1e-12."""
    assert len(reference) == len(got) == count
    for (t_ref, lam_ref, qd_ref), (t, lam, qd) in zip(reference, got):
        assert abs(t - t_ref) < 1e-12
        assert np.max(np.abs(lam - lam_ref)) < 1e-12
        assert np.max(np.abs(qd - qd_ref)) < 1e-12


def test_bundled_cradle_one_simultaneous_impact_as_the_independent_computation() -> None:
    """To t = 5: one impact (both contacts, t = 0.4), q̇⁺ = (−1/3, 2/3, 2/3) v and
    Λ = (4/3, 2/3) m v as solve_ivp with the enumerated law gives them, to 1e-12; the energy
    ½ m v² kept to 1e-12 (e = 1); and no warning that a gap could not be followed (the gap of
    'right' is 0 to rounding after the impact: its sign changes are rounding's)."""
    trajectory, said = simulate(CRADLE, t_end=5.0)
    reference = independent([0.0, 0.5, 0.6], 1.0, 5.0)
    got = lagsim_impacts(trajectory)
    assert_same_impacts(got, reference, 1)
    assert np.max(np.abs(got[0][2] - [-1 / 3, 2 / 3, 2 / 3])) < 1e-12
    assert np.max(np.abs(trajectory.energy - 0.5)) < 1e-12
    assert abs(float(np.sum(trajectory[naming.IMPACT_LOSS]))) < 1e-12
    assert not [s for s in said if MISSED in s]
    gap = trajectory["x3"] - trajectory["x2"] - D
    assert np.max(np.abs(gap[trajectory.t > 0.4])) < 1e-12


def test_a_small_gap_passes_the_momentum_ball_to_ball() -> None:
    """Ball 3 at 0.61 (a gap of 0.01 to ball 2): two two-ball impacts, at 0.4 ('left':
    (0, v, 0), Λ = m v) and 0.41 ('right': (0, 0, v)), one ball in, one ball out; as the
    independent computation to 1e-12, the energy kept to 1e-12, no warning."""
    trajectory, said = simulate(CRADLE, t_end=5.0, initial={"x3": 0.61})
    reference = independent([0.0, 0.5, 0.61], 1.0, 5.0)
    got = lagsim_impacts(trajectory)
    assert_same_impacts(got, reference, 2)
    assert np.max(np.abs(got[0][2] - [0.0, 1.0, 0.0])) < 1e-12
    assert np.max(np.abs(got[1][2] - [0.0, 0.0, 1.0])) < 1e-12
    assert np.max(np.abs(trajectory.energy - 0.5)) < 1e-12
    assert not [s for s in said if MISSED in s]


SLIDE = """
name: slide
parameters: {m: 1.0, s: 0.3, e: 1}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - {name: ramp, unilateral: y - s*x, restitution: e}
initial: {x: 0.1, y: 0.03, x_dot: 1.0, y_dot: 0.3}
"""
"""A free particle moving along the line of its gap: the gap 0 to rounding the whole run."""

MISS = """
name: miss
parameters: {m: 1.0, e: 1}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - {name: wall, unilateral: y + 1e-10*(1 + sin(1e9*t)), restitution: e}
initial: {x: 0, y: 0, x_dot: 1.0, y_dot: 0}
"""
"""A gap that grazes 0 a billion times a second, 2e-10 deep: far outside the rounding band
(1e-12), and far faster than any step follows."""


@pytest.mark.parametrize("in_c", [True, False])
def test_a_gap_at_zero_to_rounding_is_quiet_and_a_real_graze_still_warns(
        monkeypatch: pytest.MonkeyPatch, in_c: bool) -> None:
    """In the C flights and in the Python ones: the particle sliding along its gap's line
    takes no impact, its gap stays within 1e-14 of 0 and nothing is said; the gap grazing 0
    at 1e9 rad/s is said not to be followed."""
    if not in_c:
        monkeypatch.setattr(impacts, "flights_for", lambda *_: None)
    trajectory, said = simulate(SLIDE, t_end=2.0)
    assert not np.any(trajectory[naming.impulse("ramp")] != 0.0)
    assert np.max(np.abs(trajectory["y"] - 0.3 * trajectory["x"])) < 1e-14
    assert not [s for s in said if MISSED in s]
    _, said = simulate(MISS, t_end=0.1)
    missed = [s for s in said if MISSED in s]
    assert len(missed) == 1 and "the gap of 'wall'" in missed[0]


def _noise(times: np.ndarray) -> np.ndarray:
    """A chirp 1e-15 deep, far too fast for any piece to follow: the stand-in for the rounding
    noise of the cradle's gap x3 − x2 − d after its impact."""
    return 1e-15 * np.sin(1e7 * np.asarray(times) ** 2 + 12345.678 * np.asarray(times))


@pytest.mark.parametrize(("depth", "zero", "said"), [
    (1.0, 0.0, True), (1.0, 1e-12, False), (1e4, 1e-12, True)])
def test_scan_takes_a_g_within_its_band_as_zero(depth: float, zero: float, said: bool) -> None:
    """:class:`lagsim.run.crossings.Scan` over a step of 1 of noise 1e-15 deep: unresolved
    without a band, 0 to rounding within a band of 1e-12; the same noise 1e-11 deep (out of
    the band) unresolved still."""
    scan = Scan(lambda times: depth * _noise(times))
    scan.step(0.0, 1.0, float(depth * _noise(np.array([1.0]))[0]), lambda u, gu, v, gv: False,
              zero=zero)
    assert (scan.missed is not None) == said
