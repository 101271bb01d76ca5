"""The free flights of a system with unilateral contacts in C (:mod:`lagsim.run.engines.cimpacts`)
against the same runs with the flights in Python (``ImpactLoop._fly``): the same rows and impacts
to 1e-12, the plain impacts made in C, the others (simultaneous contacts, the accumulation of the
ball's bounces, a held contact) left to Python's law at its own crossing, to the bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from impact_runs import SYSTEMS, bouncing_ball
from inline_systems import CONSTRAINED_STOP

from lagsim.api import load
from lagsim.output.trajectory import Trajectory
from lagsim.run.engines import cimpacts, impacts


def both(monkeypatch: pytest.MonkeyPatch, text: str, **options: object
         ) -> tuple[Trajectory, Trajectory, int]:
    """The run with the C flights, the same run with the Python flights, and the impacts the C
    flights made."""
    made = []
    fly = cimpacts.Flights.fly

    def counted(self: cimpacts.Flights, *args: object) -> tuple[cimpacts.Outcome,
                                                                 cimpacts.Plain]:
        outcome, plain = fly(self, *args)  # type: ignore[arg-type]
        made.extend(len(impacts.t) for impacts, _ in plain)
        return outcome, plain

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        monkeypatch.setattr(cimpacts.Flights, "fly", counted)
        in_c = load(text).simulate(**options)
        monkeypatch.setattr(impacts, "flights_for", lambda *_: None)
        in_python = load(text).simulate(**options)
    return in_c, in_python, sum(made)


def assert_same(a: Trajectory, b: Trajectory, tolerance: float) -> None:
    assert list(a.columns) == list(b.columns) and len(a.t) == len(b.t)
    for column in a.columns:
        x, y = np.asarray(a[column], dtype=float), np.asarray(b[column], dtype=float)
        assert np.max(np.abs(x - y) / np.maximum(1.0, np.abs(y)), initial=0.0) <= tolerance, column
    assert [e.contact for e in a.events] == [e.contact for e in b.events]
    for e, f in zip(a.events, b.events):
        x, y = np.array(e.row()[2:], dtype=float), np.array(f.row()[2:], dtype=float)
        assert abs(e.t - f.t) <= tolerance * max(1.0, abs(f.t))
        assert np.max(np.abs(x - y) / np.maximum(1.0, np.abs(y))) <= tolerance


def test_the_ball_bounces_in_c_and_rests_through_pythons_accumulation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundled ball (e = 0.8, to 4.5 s): its bounces are plain impacts, made in C (eight
    a call here, so that the log is read and filled again many times); the impact at which they
    accumulate is Python's, then the held contact; every row and impact as the Python flights
    give it."""
    monkeypatch.setattr(cimpacts, "LOG", 8)
    in_c, in_python, made = both(monkeypatch, str(SYSTEMS / "bouncing_ball.yaml"), t_end=4.5)
    bounces = len(in_python.events)
    assert bounces > 60 and made == bounces - 2
    assert_same(in_c, in_python, 1e-12)


def test_an_impact_keeping_a_rod_is_solved_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Cartesian pendulum with its rod a holonomic constraint: each impact on the wall
    solves the augmented matrix with the rod's rows in C."""
    in_c, in_python, made = both(monkeypatch, CONSTRAINED_STOP, t_end=8.0,
                                 formulation="index1", rtol=1e-12, atol=1e-12)
    assert made == len(in_python.events) >= 3
    assert_same(in_c, in_python, 1e-12)
    assert np.max(np.abs(in_c["residual_rod_dot"])) < 1e-10


def test_several_contacts_are_left_to_python_to_the_bit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Newton's cradle: two contacts, whose impacts may be simultaneous (the first ball hits
    the two touching ones) or alternate, which is Python's: no impact is made in C and the run
    is the Python flights'."""
    in_c, in_python, made = both(monkeypatch, str(SYSTEMS / "newtons_cradle.yaml"), t_end=2.0)
    assert made == 0 and len(in_python.events) == 2
    assert_same(in_c, in_python, 0.0)


def test_the_impacts_kept_as_arrays_read_as_the_ball_closed_form() -> None:
    """The ball (e = 0.5, m = 2) with its impacts made in C and kept as arrays
    (:class:`lagsim.output.trajectory.ImpactEvents`): the n-th event, made when asked for, is
    at tₙ = t₁ + 2v₁e(1 − eⁿ⁻¹)/(g(1 − e)) with Λₙ = m(1 + e)vₙ, vₙ = eⁿ⁻¹v₁ (Pfeiffer and
    Glocker 1996, §4.3), the rows of ``--events`` are the events' rows, and the impulse and
    loss columns hold each event's Λ and loss at its row."""
    g, e, m = 9.81, 0.5, 2.0
    run = bouncing_ball()
    events = run.events
    t1 = np.sqrt(2 / g)
    n = np.arange(1, 9)
    v = e ** (n - 1) * g * t1
    assert len(events) >= 8
    assert np.max(np.abs(np.array([x.t for x in events[:8]])
                         - (t1 + 2 * g * t1 * e * (1 - e ** (n - 1)) / (g * (1 - e))))) < 1e-9
    assert np.max(np.abs(np.array([x.impulse for x in events[:8]]) - m * (1 + e) * v)) < 1e-9
    assert events[-1] == events[len(events) - 1] and events == tuple(events)
    assert run.event_rows() == [x.row() for x in events]
    for x in events:
        (row,) = np.flatnonzero(run.t == x.t)
        assert run["impulse_floor"][row] == x.impulse
        assert run["impact_energy_loss"][row] == x.loss == pytest.approx(
            0.5 * (x.rate_before ** 2 - x.rate_after ** 2) * m, rel=1e-9)
