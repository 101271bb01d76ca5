"""Issue 27: the rocking block's alternating accumulation of impacts and its rest on both
corners, and no bundled contact system sinking into its obstacle
(:mod:`lagsim.run.engines.impacts`, "Alternating accumulation" and "Held phases").

Closed form (Housner, "The behavior of inverted pendulum structures during earthquakes", Bull.
Seismol. Soc. Am. 53(2), 1963): the block of half-width b, half-height h (R = √(b² + h²),
α = atan(b/h), I_O = (4/3) m R² about a corner, p² = 3g/(4R)) turns about one corner with
½ ω² + p² (... ) kept: ω² = 2p² (cos(α − φ) − cos(α − φ_max)) at the tilt φ towards that corner, so
the time from the tilt φ_max at rest down to 0 is ∫₀^φmax dφ/ω(φ) (a quadrature, its 1/√
singularity taken by QUADPACK's algebraic weight). Each impact at φ = 0 multiplies ω by
r = 1 − (3/2) sin²α, the next amplitude from cos(α − φ) − cos α = ω²/(2p²); the impacts are at
t₁ + Σ 2 t_down(φ_n), a series that converges (ratio → r) to the time of rest t∞. From there the
block stands on both corners: θ = 0, the centre over the midpoint of the corners (x = −b for
this start: the right corner at x = 0 is the first pivot, and the corners stick), y = h, each
corner carrying m g / 2 by symmetry.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad

from lagsim import naming
from lagsim.api import load
from lagsim.output.trajectory import Trajectory
from lagsim.run.contacts import Contacts
from lagsim.run.problem import Problem
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

SYSTEMS = Path(__file__).resolve().parents[1] / "systems"
TIGHT = {"rtol": 1e-12, "atol": 1e-12}
G, M, B, H, THETA0 = 9.81, 1.0, 0.2, 0.6, 0.1
R = math.hypot(B, H)
ALPHA = math.atan(B / H)
P2 = 3 * G / (4 * R)
RATIO = 1 - 1.5 * math.sin(ALPHA) ** 2


def down(amplitude: float) -> float:
    """The time from rest at the tilt ``amplitude`` about a corner down to θ = 0, with
    cos(α − φ_max) − cos(α − φ) = 2 sin(α − (φ_max + φ)/2) sin((φ_max − φ)/2) (no cancellation
    at small tilts)."""

    def smooth(phi: float) -> float:
        u = amplitude - phi
        return math.sqrt((u / math.sin(u / 2) if u > 0 else 2.0)
                         / (4 * P2 * math.sin(ALPHA - (amplitude + phi) / 2)))

    return quad(smooth, 0.0, amplitude, weight="alg", wvar=(0.0, -0.5), epsabs=0.0,
                epsrel=1e-13, limit=200)[0]


def impact_times() -> list[float]:
    """Housner's impact times, the series summed until its terms fall below 1e-18 s, its sum
    last."""
    times = [down(THETA0)]
    omega = math.sqrt(4 * P2 * math.sin(ALPHA - THETA0 / 2) * math.sin(THETA0 / 2))
    while times[-1] - (times[-2] if len(times) > 1 else 0.0) > 1e-18:
        omega *= RATIO
        c, amplitude = omega * omega / (2 * P2), 0.0
        for _ in range(60):
            amplitude = 2 * math.asin(c / (2 * math.sin(ALPHA - amplitude / 2)))
        times.append(times[-1] + 2 * down(amplitude))
    return times


@pytest.fixture(scope="module")
def block() -> Trajectory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load(str(SYSTEMS / "rocking_block.yaml")).simulate(t_end=3.0, samples=301,
                                                                   **TIGHT)


def test_rocking_block_impacts_alternate_and_accumulate_at_housners_time(block: Trajectory
                                                                           ) -> None:
    """The impacts follow Housner's times to 1e-9 s, alternate between the corners, and the
    run passes their accumulation at the closed form's t∞ to ACCUMULATION (1 + t∞), in one row
    where both corners take a percussion (together m g over the tail, less the block's
    vertical momentum, to 1e-12: the momentum balance over the tail)."""
    expected = impact_times()
    events = block.events
    *impacts, last_right, last_left = events
    assert [e.contact for e in impacts] == [("left", "right")[k % 2] for k in range(len(impacts))]
    assert len(impacts) > 20
    for event, t in zip(impacts, expected):
        assert abs(event.t - t) < 1e-9
    assert last_right.t == last_left.t
    assert {last_right.contact, last_left.contact} == {"left", "right"}
    assert abs(last_left.t - expected[-1]) < 4e-9
    tail = last_left.t - impacts[-1].t
    total = last_right.impulse + last_left.impulse
    assert last_right.impulse > 0 and last_left.impulse > 0
    assert abs(total - (M * G * tail - M * impacts[-1].qd_after[1])) < 1e-12


def test_rocking_block_rests_on_both_corners_each_carrying_half_its_weight(block: Trajectory
                                                                           ) -> None:
    """After t∞: θ = 0, x = −b, y = h and every velocity 0 to 1e-12, the contact forces
    m g / 2 each to 1e-9, to the end of the run (held on both corners, no release)."""
    rest = block.t > block.events[-1].t
    assert rest.sum() > 10
    assert np.max(np.abs(block["theta"][rest])) < 1e-12
    assert np.max(np.abs(block["x"][rest] + B)) < 1e-11
    assert np.max(np.abs(block["y"][rest] - H)) < 1e-12
    for v in ("x_dot", "y_dot", "theta_dot"):
        assert np.max(np.abs(block[v][rest])) < 1e-12
    for contact in ("left", "right"):
        assert np.max(np.abs(block[naming.contact_force(contact)][rest] - M * G / 2)) < 1e-9
    assert block.t[-1] == 3.0


@pytest.mark.parametrize("file", ["bouncing_ball.yaml", "pendulum_stop.yaml",
                                  "newtons_cradle.yaml", "rocking_block.yaml"])
def test_no_bundled_contact_system_sinks_into_its_obstacle(file: str) -> None:
    """Every gap g_i(q, t) ≥ −1e-9 on every row of each bundled contact system's own run (its
    file's t_end, default tolerances): a held phase watches the other gaps, so none sinks."""
    text = (SYSTEMS / file).read_text()
    spec = parse_spec(text, file, file.removesuffix(".yaml"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(str(SYSTEMS / file)).simulate()
    problem = Problem.build(spec, build_model(spec), SimulateOptions(t_end=1.0))
    contacts = Contacts(problem.spec, problem.numeric)
    coordinates = problem.numeric.coordinates
    q = np.column_stack([trajectory[c] for c in coordinates])
    qd = np.column_stack([trajectory[v] for v in naming.velocities(coordinates)])
    gaps = np.array([contacts.evaluate(t, q[k], qd[k])[0] for k, t in enumerate(trajectory.t)])
    assert trajectory.t[-1] == float(spec.simulate["t_end"].value)
    assert gaps.min() >= -1e-9


def test_a_held_phase_finds_a_sinking_gap_its_event_scan_missed(monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """With the gaps' event scans blinded (no crossing ever reported) the rocking block, always
    turning about one held corner, still strikes with the other at Housner's times to 1e-9 s:
    each held step that leaves the open gap below −CLOSED finds its zero on the dense output."""
    from lagsim.run.engines import impacts
    from lagsim.run.events import EventWatch

    monkeypatch.setattr(EventWatch, "crossings", lambda self, step: [])
    monkeypatch.setattr(impacts.ImpactLoop, "_held_first_step", lambda self, t, y, held: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(str(SYSTEMS / "rocking_block.yaml")).simulate(t_end=0.8, **TIGHT)
    expected = impact_times()
    assert [e.contact for e in trajectory.events] == ["left", "right"]
    for event, t in zip(trajectory.events, expected):
        assert abs(event.t - t) < 1e-9


def test_a_gap_below_zero_through_a_whole_held_step_stops_the_run() -> None:
    """A held step at whose every point the open gap is below 0 (it never opened: its crossing
    cannot be located) is an IntegrationError naming the gap and the held contact, never a run
    that goes on inside the floor."""
    from lagsim.errors import IntegrationError
    from lagsim.run.engines.impacts import ImpactLoop

    spec = parse_spec((SYSTEMS / "rocking_block.yaml").read_text(), "rocking_block.yaml",
                      "rocking_block")
    loop = ImpactLoop(Problem.build(spec, build_model(spec), SimulateOptions(t_end=1.0)))
    sunk = np.array([-B, H - 1e-6, 0.0, 0.0, 0.0, 0.0])

    class Held:
        t_old, t, y = 0.0, 0.01, sunk

        def at(self, s: float) -> np.ndarray:
            return sunk

    with pytest.raises(IntegrationError, match="the gap of 'left' is -1e-06 with 'right' held: "
                                               "its crossing was not located"):
        loop._sunk(Held(), 1, [0])  # type: ignore[arg-type]


def test_a_held_phase_that_starts_just_before_the_end_runs_to_it() -> None:
    """The first impact 1e-4 s before t_end: the held phase's first step, half the lifted
    corner's flight (about 0.2 s), is cut to the run's end, which the run reaches with the
    impact Housner's."""
    t_end = impact_times()[0] + 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(str(SYSTEMS / "rocking_block.yaml")).simulate(t_end=t_end, **TIGHT)
    (event,) = trajectory.events
    assert abs(event.t - impact_times()[0]) < 1e-12
    assert trajectory.t[-1] == t_end
