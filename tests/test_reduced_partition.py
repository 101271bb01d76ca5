"""Generalized coordinate partitioning (Wehage and Haug 1982) in ``lagsim.run.reduced``: the pivoted
choice of dependent coordinates, the chart built from the consistent start (issue 8 §4,
issue 16 §1) and the switch of partition in ``after_step`` (issue 16 §2)."""

from __future__ import annotations

import numpy as np
import pytest

import lagsim.run.integrate  # noqa: F401  (defines Formulation before lagsim.run.reduced needs it)
from lagsim.numeric.compile import compile_model
from lagsim.run.integrate import SimulateOptions, Stabilizer
from lagsim.run.reduced import (
    PartitionChart,
    Reduced,
    SymbolicChart,
    complete_pivoting,
    pivot_partition,
    pivots_along,
)
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model


def test_pivoting_makes_the_largest_pivot_dependent():
    """φ_q = (2x, 2y) of the rod: at x = ℓ, y = 0 only x can be solved for."""
    dependent, independent = pivot_partition(np.array([[2.0, 0.0]]))
    assert list(dependent) == [0] and list(independent) == [1]
    dependent, _ = pivot_partition(np.array([[0.6, -1.6]]))
    assert list(dependent) == [1]


def test_complete_pivoting_pairs_the_flat_rod_with_x2():
    """Slider-crank with the crank pin at (−r, 0) and the slider at (l − r, 0): φ_q rows crank
    (2x1, 2y1, 0, 0), rod (−2d, 2y1, 2d, −2y1) with d = x2 − x1, rail (0, 0, 0, 1). The flat rod
    has no pivot in y1 or y2, so it is paired with x2 (|2d|, the later of the tie with x1), the
    crank with x1 and the rail with y2; solving the rod for y2 (pivot 0 here) would be the
    degenerate order that made the old symbolic chart singular at this point."""
    r, l = 0.5, 1.5
    phi_q = np.array([[-2 * r, 0.0, 0.0, 0.0], [-2 * l, 0.0, 2 * l, 0.0], [0.0, 0.0, 0.0, 1.0]])
    pairs, pivots = complete_pivoting(phi_q)
    assert pairs[0] == (1, 2) and (2, 3) in pairs and (0, 0) in pairs
    assert pivots.min() > 0.0
    assert pivots_along(phi_q, [(0, 0), (1, 3), (2, 2)])[1] == 0.0


def _reduced_at(x: float, y: float, xd: float, yd: float) -> tuple[Reduced, np.ndarray]:
    spec = load_spec("pendulum_natural")
    model = build_model(spec)
    numeric = compile_model(model)
    stabilizer = Stabilizer(numeric, SimulateOptions())
    q, qd = np.array([x, y]), np.array([xd, yd])
    return Reduced(numeric, stabilizer, spec, model, start=(0.0, q, qd)), np.concatenate((q, qd))


def test_the_factory_builds_the_symbolic_chart_through_the_given_start():
    """Released horizontally, x = +√(ℓ² − y²) is eliminated, on the branch x > 0 of the start;
    the free y, ẏ rebuild the start exactly."""
    form, state = _reduced_at(1.0, 0.0, 0.0, 0.0)
    assert isinstance(form.chart, SymbolicChart)
    assert list(form.chart.dependent) == [0]
    y = form.initial(0.0, state[:2], state[2:])
    q, qd = form.unpack(0.0, y)
    np.testing.assert_allclose(np.concatenate((q, qd)), state, atol=1e-15)


def test_after_step_switches_the_partition_near_the_branch_point():
    """At 20° below the horizontal, σ_min(φ_x) = 2|x| is more than twice σ_min(φ_y) = 2|y| when
    y is eliminated: after_step returns the state in the new chart (free y), which rebuilds the
    same full state."""
    angle = np.radians(20.0)
    x, y = np.cos(angle), -np.sin(angle)
    speed = 1.5
    xd, yd = -speed * y, speed * x
    form, state = _reduced_at(0.5, -np.sqrt(0.75), 0.0, 0.0)
    assert list(form.chart.dependent) == [1]
    y_old = form.chart.pack(np.array([x, y]), np.array([xd, yd]))
    y_new = form.after_step(0.0, y_old)
    assert y_new is not None
    assert list(form.chart.dependent) == [0]
    q, qd = form.unpack(0.0, y_new)
    np.testing.assert_allclose(q, [x, y], atol=1e-14)
    np.testing.assert_allclose(qd, [xd, yd], atol=1e-14)
    assert form.after_step(0.0, y_new) is None


def test_numeric_chart_solves_the_constraint_by_newton():
    """The numeric chart of the rod with y dependent: y = −√(1 − x²), ẏ = −x ẋ / y."""
    spec = load_spec("pendulum_natural")
    numeric = compile_model(build_model(spec))
    chart = PartitionChart(numeric, np.array([1]), np.array([0]), 0.0,
                           np.array([0.5, -np.sqrt(0.75)]))
    q, qd, lam = chart.full(0.0, np.array([0.6, 0.7]))
    assert q[1] == pytest.approx(-0.8, abs=1e-15)
    assert qd[1] == pytest.approx(-0.6 * 0.7 / -0.8, abs=1e-14)
    g = spec.parameter_values["g"]
    speed2 = qd @ qd
    assert -2.0 * lam[0] == pytest.approx(speed2 + g * 0.8, rel=1e-12)


def test_c_stepper_continues_in_python_on_a_numeric_chart():
    """With one symbolic chart allowed, the run starts on it and goes on over the top on numeric
    charts (all in the C loop since issue 9; tests/test_cloop_reduced.py holds it to the Python
    loop); it follows index1 to 1e-9."""
    from lagsim.run.integrate import simulate

    spec = load_spec("pendulum_natural", initial={"x": 0.0, "y": -1.0, "x_dot": 5.0})
    model = build_model(spec)
    runs = {}
    for formulation in ("reduced", "index1"):
        options = SimulateOptions.resolve(spec.simulate, {
            "formulation": formulation, "t_end": 3.0, "rtol": 1e-13, "atol": 1e-13})
        runs[formulation] = simulate(spec, model, options, max_symbolic_charts=1)
    for name in ("q", "qd", "lam"):
        a, b = getattr(runs["reduced"], name), getattr(runs["index1"], name)
        assert np.abs(a - b).max() <= 1e-9 * max(1.0, np.abs(b).max()), name
    assert np.ptp(runs["reduced"].energy) < 1e-9
