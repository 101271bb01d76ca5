"""Issue 23, "one event mechanism for --stop-when and --section (expression, direction, terminal,
in the manner of scipy's and diffrax's events), compiled once per structure with parameters as
run-time inputs" (:mod:`lagsim.run.events`).

Both options become :class:`Event` objects compiled by :func:`compile_events` through one
bounded memo and followed by one :class:`EventWatch`; the tests count compilations through the
memo, check the crossings' directions against the small oscillations of the pendulum,
θ(t) = θ₀ cos(ω t) with ω = sqrt(g/l) ([DAE], Example 10.5: θ̈ = −(g/l) sin θ), and tell a
terminal event from a non-terminal one on a clock sin(400 t) whose zeros are kπ/400.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from lagsim.api import load
from lagsim.errors import InputError, Location
from lagsim.run import driver
from lagsim.run.engines import cloop
from lagsim.run.events import (
    EITHER,
    FALLING,
    FUNCTIONS,
    RISING,
    Event,
    compile_events,
)
from lagsim.run.problem import Problem
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model

G = 9.81
OMEGA = math.sqrt(G)
THETA0 = 1e-4
SMALL_ANGLE = THETA0 ** 2 / 16 * 10 + 1e-9
"""How far a crossing of the pendulum released from θ₀ = 1e-4 may lie from θ₀ cos(ω t)'s
within t ≤ 10: its period is 2π/ω·(1 + θ₀²/16 + O(θ₀⁴)) (the first term of the complete
elliptic integral's series), so the k-th crossing moves by at most t·θ₀²/16 = 6.3e-9, and the
integration (rtol 1e-12, atol 1e-15) and Brent's method add well under 1e-9."""
TIGHT = {"rtol": 1e-12, "atol": 1e-15, "t_end": 10.0}

FALL = """\
name: events_fall
description: a point mass falling from rest, drop(t) = -g t^2 / 2
parameters:
  m: 1.0
  g: 9.81
  h: 1.0
coordinates: [drop]
masses:
  ball:
    mass: m
    position: [0, drop]
gravity: [0, -g]
initial:
  drop: 0
  drop_dot: 0
"""


def _problem(name: str, **flags: object) -> Problem:
    spec = load_spec(name, initial={"theta": THETA0})
    return Problem.build(spec, build_model(spec), SimulateOptions.resolve(spec.simulate, flags))


def _crossings(first: float, count: int) -> np.ndarray:
    """The times ωt = first + 2πk of θ₀ cos(ω t), k = 0..count-1."""
    return (first + 2 * math.pi * np.arange(count)) / OMEGA


def test_a_stop_and_a_section_of_one_expression_share_one_compiled_function() -> None:
    """--stop-when and --section of the same expression on one run: one compilation through
    the one memo, and both evaluate it alike (g = θ − l/7 at θ = 0.5, l = 1)."""
    before = FUNCTIONS.made
    problem = _problem("pendulum", stop_when="theta - l/7", section="theta - l/7")
    assert FUNCTIONS.made - before == 1
    stop, section = problem.stop, problem.section
    assert stop is not None and section is not None
    assert stop.event.terminal and not section.event.terminal
    assert stop.expression == section.expression
    for event in (stop, section):
        assert event.function(0.0, 0.5, 0.0) == pytest.approx(0.5 - 1 / 7, abs=1e-15)
        assert event.rows(np.array([[0.0, 0.5, 0.0], [1.0, -0.25, 3.0]])) == pytest.approx(
            [0.5 - 1 / 7, -0.25 - 1 / 7], abs=1e-15)


def test_a_four_value_sweep_of_a_parameter_dependent_stop_compiles_once(
        tmp_path: Path) -> None:
    """--stop-when 'drop + h' for four values of h: one compiled function for the four runs
    (the values are run-time inputs), each stopping when the mass has fallen h, at
    t = sqrt(2h/g), to 1e-9."""
    system = tmp_path / "fall.yaml"
    system.write_text(FALL)
    fall = load(system)
    before = FUNCTIONS.made
    for h in (0.5, 1.0, 2.0, 3.0):
        trajectory = fall.simulate(parameters={"h": h}, stop_when="drop + h", t_end=5.0)
        assert trajectory.stop_reason == "stop_when"
        assert abs(trajectory.t[-1] - math.sqrt(2 * h / G)) <= 1e-9
        assert abs(trajectory.q[-1, 0] + h) <= 1e-9
    assert FUNCTIONS.made - before == 1


@pytest.mark.parametrize(("direction", "first", "sign"), [("up", 1.5 * math.pi, 1.0),
                                                          ("down", 0.5 * math.pi, -1.0)])
def test_section_direction_picks_the_rising_or_the_falling_crossings(
        direction: str, first: float, sign: float) -> None:
    """θ₀ cos(ω t) rises through 0 at ω t = 3π/2 + 2πk and falls at π/2 + 2πk: the section's
    rows are those times (within :data:`SMALL_ANGLE`), with θ = 0 and θ̇ = ±θ₀ω there."""
    trajectory = load("pendulum").simulate(initial={"theta": THETA0}, section="theta",
                                           section_direction=direction, **TIGHT)
    expected = _crossings(first, 5)
    assert len(trajectory.t) == 5
    np.testing.assert_allclose(trajectory.t, expected, rtol=0, atol=SMALL_ANGLE)
    np.testing.assert_allclose(trajectory.q[:, 0], 0.0, rtol=0, atol=1e-13)
    np.testing.assert_allclose(trajectory.qd[:, 0], sign * THETA0 * OMEGA, rtol=1e-6)


def test_section_both_directions_is_every_crossing() -> None:
    """``both``: the ten zeros (π/2 + πk)/ω of θ₀ cos(ω t) below t = 10, alternately falling
    and rising."""
    trajectory = load("pendulum").simulate(initial={"theta": THETA0}, section="theta",
                                           **TIGHT)
    expected = (0.5 * math.pi + math.pi * np.arange(10)) / OMEGA
    np.testing.assert_allclose(trajectory.t, expected, rtol=0, atol=SMALL_ANGLE)
    assert list(np.sign(trajectory.qd[:, 0])) == [-1.0, 1.0] * 5


def test_a_terminal_event_with_a_direction_stops_at_its_first_crossing_that_way() -> None:
    """An event the options cannot write (terminal, rising): the run skips the falling
    crossing at π/(2ω) and stops at the rising one, 3π/(2ω); the C loop, whose stop takes
    either direction, declines it."""
    problem = _problem("pendulum", **TIGHT)
    rising = Event("stop_when", "theta", RISING, True, Location("--stop-when"), "expression",
                   "--stop-when")
    problem = dataclasses.replace(problem, events=compile_events(problem.spec, problem.numeric,
                                                                 (rising,)))
    assert cloop.loop_for(problem) is None
    trajectory = driver.run(problem)
    assert trajectory.stop_reason == "stop_when"
    assert abs(trajectory.t[-1] - 1.5 * math.pi / OMEGA) <= SMALL_ANGLE
    assert trajectory.qd[-1, 0] > 0
    assert "rose through 0 (--stop-when)" in trajectory.message


def test_terminal_stops_at_the_first_crossing_and_non_terminal_records_every_one() -> None:
    """sin(400 t) crosses 0 at kπ/400, a dozen times in one of the pendulum's steps. As a
    section (non-terminal) every crossing below t = 1 is a row, k = 1..127; the same
    expression also given as --stop-when (terminal) ends the run at the first, π/400, whose
    section row is the only one."""
    clock = "sin(400*t)"
    section = load("pendulum").simulate(section=clock, t_end=1.0)
    np.testing.assert_allclose(section.t, math.pi * np.arange(1, 128) / 400, rtol=0,
                               atol=1e-12)
    assert section.stop_reason == "t_end"
    both = load("pendulum").simulate(section=clock, stop_when=clock, t_end=1.0)
    assert both.stop_reason == "stop_when"
    np.testing.assert_allclose(both.t, [math.pi / 400], rtol=0, atol=1e-12)


def test_stop_when_is_terminal_of_either_direction_and_section_follows_its_option() -> None:
    """The options' events: --stop-when terminal, EITHER; --section non-terminal in the
    direction of --section-direction; an event's direction is one of three."""
    problem = _problem("pendulum", stop_when="theta", section="theta_dot",
                       section_direction="down")
    assert [(e.event.option, e.event.terminal, e.event.direction) for e in problem.events] == [
        ("stop_when", True, EITHER), ("section", False, FALLING)]
    assert problem.events[1].event.wants(1.0) and not problem.events[1].event.wants(-1.0)
    with pytest.raises(ValueError, match="1, -1 or 0"):
        Event("section", "theta", 2, False, Location("--section"), "expression", "--section")


def test_an_unknown_name_in_either_option_is_located_at_that_option() -> None:
    """The one compile names the option that gave the expression."""
    for flag, option in (("--stop-when", "stop_when"), ("--section", "section")):
        with pytest.raises(InputError) as caught:
            _problem("pendulum", **{option: "theta + bogus"})
        assert str(caught.value).startswith(f"{flag}: expression 'theta + bogus': unknown "
                                            "symbol 'bogus'; it may use t, the coordinates")
