"""Drift panels say where round-off lies (issue 30: "several drift panels are dense combs of
round-off over the designed 16 decades"). The pendulum in natural coordinates keeps
φ = x² + y² − l² to a few ulps: its drift panel drew exact zeros and last bits as a comb from
1e-19 to 2e-15. Each series now carries its round-off floor (lagsim.analysis.roundoff: ε times
the condition of the residual at the stored state, Higham §1.6), shaded; the y range starts one
decade under the highest floor; a series never above its floor is said to be round-off only.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import lagsim
from lagsim.analysis.roundoff import EPSILON, energy_floor, residual_floors
from lagsim.output.io import Table
from lagsim.viz.figures import BELOW_FLOOR, ROUND_OFF_LABEL, ROUND_OFF_ONLY


@pytest.fixture(scope="module")
def pendulum() -> lagsim.System:
    return lagsim.load("pendulum_natural")


def table_of(run: lagsim.Trajectory) -> Table:
    return Table(tuple(run.columns), run.as_array(), "run.csv")


def axes_named(fig, key: str):
    (ax,) = [ax for ax in fig.axes if ax.get_label() == key]
    return ax


def legend_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_the_floors_of_a_rod_are_its_condition_in_closed_form(pendulum) -> None:
    """φ = x² + y² − l²: Σ|φ_q|·|q| = 2x² + 2y² = 2l² (l = 1); φ̇ = 2xẋ + 2yẏ:
    Σ|A q̇| = 2|xẋ| + 2|yẏ|. The energy's floor is ε(|h| + |h₀|)/2."""
    run = pendulum.simulate(t_end=2.0)
    table = table_of(run)
    floors = residual_floors(pendulum.model, table)
    assert set(floors) == {"residual_rod", "residual_rod_dot"}
    x, y, xd, yd = (table.column(c) for c in ("x", "y", "x_dot", "y_dot"))
    np.testing.assert_allclose(floors["residual_rod"], 2 * EPSILON * (x**2 + y**2), rtol=1e-12)
    np.testing.assert_allclose(floors["residual_rod"], 2 * EPSILON, rtol=1e-9)
    np.testing.assert_allclose(floors["residual_rod_dot"],
                               2 * EPSILON * (np.abs(x * xd) + np.abs(y * yd)), rtol=1e-12)
    h = table.column("energy")
    np.testing.assert_allclose(energy_floor(h), EPSILON * (np.abs(h) + abs(h[0])) / 2)


def test_the_drift_panel_of_a_round_off_run_is_shaded_and_a_few_decades(pendulum) -> None:
    run = pendulum.simulate()
    floors = residual_floors(pendulum.model, table_of(run))
    velocity = np.abs(table_of(run).column("residual_rod_dot"))
    assert np.all(velocity <= floors["residual_rod_dot"])
    fig = lagsim.plot(run, kind="drift", system=pendulum)
    ax = axes_named(fig, "velocity drift")
    assert [c for c in ax.collections if c.get_gid() == "round-off"]
    assert legend_texts(ax) == ["|residual_rod_dot|", ROUND_OFF_LABEL,
                                f"|residual_rod_dot|: {ROUND_OFF_ONLY}"]
    bottom, top = ax.get_ylim()
    highest = float(floors["residual_rod_dot"].max())
    assert math.log10(bottom) == math.floor(math.log10(highest)) - BELOW_FLOOR
    assert math.log10(top / bottom) <= 3
    position = axes_named(fig, "position drift")
    assert f"|residual_rod|: {ROUND_OFF_ONLY}" not in legend_texts(position)
    assert ROUND_OFF_LABEL in legend_texts(position)
    assert position.get_ylim()[0] == 10.0 ** (math.floor(math.log10(2 * EPSILON)) - BELOW_FLOOR)


def test_a_real_drift_stands_above_its_floor_and_is_not_called_round_off(pendulum) -> None:
    """Without a stabilizer at rtol 1e-4 the rod's residual grows by truncation to ≈1e-4,
    twelve decades above its floor 2ε; the panel keeps the floor's band in view below it."""
    run = pendulum.simulate(stabilize="none", rtol=1e-4, atol=1e-4, t_end=5.0)
    residual = np.abs(table_of(run).column("residual_rod"))
    assert residual.max() > 1e6 * 2 * EPSILON
    fig = lagsim.plot(run, kind="drift", system=pendulum)
    ax = axes_named(fig, "position drift")
    assert f"|residual_rod|: {ROUND_OFF_ONLY}" not in legend_texts(ax)
    bottom, top = ax.get_ylim()
    assert bottom <= 2 * EPSILON < residual.max() <= top


def test_an_energy_drift_far_above_round_off_keeps_the_floor_in_view(pendulum) -> None:
    """The relative energy drift's floor is ε(|h|/|h₀| + 1)/2 ≈ ε; drawn without the system
    too (it needs only the energy column)."""
    run = pendulum.simulate()
    fig = lagsim.plot(run, kind="energy")
    ax = axes_named(fig, "energy drift")
    (band,) = [c for c in ax.collections if c.get_gid() == "round-off"]
    bottom, _ = ax.get_ylim()
    assert bottom == 10.0 ** (math.floor(math.log10(EPSILON)) - BELOW_FLOOR)
    assert np.max(band.get_paths()[0].vertices[:, 1]) == pytest.approx(EPSILON, rel=1e-6)
