"""Every figure keeps its words on the canvas (issue 30: the title of ``modes slider_crank --plot``
was clipped at both edges): each visible text of a drawn figure (titles, axis and tick labels,
legends, colour bars, notes) lies inside the figure's window extent, for each plot kind, the
mode shapes, a sweep's table and a 3-D path."""

from __future__ import annotations

from typing import Any
from unittest import mock

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

import lagsim
from lagsim.viz.kinds import FIGURE_KINDS

SLACK = 1.0
"""Pixels a text may pass the edge by (antialiasing of the outline)."""


def outside(fig: Figure) -> list[tuple[str, tuple[float, float, float, float]]]:
    """The texts drawn on ``fig`` (an Agg canvas at the figure's dpi) whose window extent is not
    inside the figure's, measured as it is drawn. Only what a draw really draws counts (an axis
    keeps labels of ticks past its limits that it does not draw), and where (a 3-D text has its
    place on the canvas only while it is drawn)."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    drawn = []
    original = Text.draw

    def recording(self: Text, renderer) -> None:
        if self.get_visible() and self.get_text().strip():
            drawn.append((self, self.get_window_extent(renderer)))
        original(self, renderer)

    with mock.patch.object(Text, "draw", recording):
        fig.canvas.draw()
    box = fig.bbox
    found = []
    for text, extent in drawn:
        if (extent.x0 < box.x0 - SLACK or extent.x1 > box.x1 + SLACK
                or extent.y0 < box.y0 - SLACK or extent.y1 > box.y1 + SLACK):
            found.append((text.get_text(), tuple(np.round(extent.extents, 1))))
    return found


def test_the_check_sees_a_clipped_title() -> None:
    fig = Figure(figsize=(2.0, 2.0))
    fig.suptitle("a title much too long for a figure two inches wide")
    assert [text for text, _ in outside(fig)] == [
        "a title much too long for a figure two inches wide"]
    from lagsim.viz.figures import suptitle

    fig = Figure(figsize=(2.0, 2.0))
    suptitle(fig, "a title much too long for a figure two inches wide")
    assert outside(fig) == [] and fig.get_suptitle().count("\n") >= 2


@pytest.fixture(scope="module")
def natural() -> tuple[lagsim.System, lagsim.Trajectory]:
    system = lagsim.load("pendulum_natural")
    return system, system.simulate(t_end=2.0, samples=101, invariants=True)


@pytest.fixture(scope="module")
def trace() -> Any:
    """A Lyapunov report (the lyapunov kind's input), its trace of 9 rows."""
    report = lagsim.load("driven_damped_pendulum").lyapunov(t_end=4.0, renormalize=0.5)
    assert len(report.trace_times) >= 8
    return report


@pytest.mark.parametrize("kind", FIGURE_KINDS)
def test_every_plot_kind_stays_on_the_canvas(natural, trace, kind: str) -> None:
    system, run = natural
    fig = lagsim.plot(trace if kind == "lyapunov" else run, kind=kind,
                      system=system if kind == "path" else None,
                      title="pendulum_natural in natural coordinates, a rod held by a multiplier")
    assert outside(fig) == []


def test_a_poincare_section_and_a_sweep_table_stay_on_the_canvas(natural) -> None:
    from lagsim.viz.sweep_figures import sweep_figure

    system, _ = natural
    run = system.simulate(t_end=5.0, section="x")
    assert len(run) >= 4 and outside(lagsim.plot(run, kind="poincare", x="x", y="x_dot")) == []
    theta, length = np.meshgrid(np.linspace(0.1, 1.0, 4), [0.5, 1.0, 2.0])
    period = 2 * np.pi * np.sqrt(length.ravel() / 9.81)
    zeros = np.zeros(12)
    data = np.column_stack([np.arange(12), theta.ravel(), length.ravel(), zeros, zeros, zeros,
                            zeros, period])
    header = ["run", "theta0", "l", "theta", "theta_dot", "energy_drift", "energy_change",
              "period_of_the_small_swing", "error"]
    fig = Figure(layout="constrained")
    sweep_figure(fig, header, data, "theta0", "period_of_the_small_swing", None)
    assert len(fig.axes) == 2                     # the heat map and its colour bar
    assert outside(fig) == []


@pytest.mark.parametrize("name", ["slider_crank", "double_pendulum"])
def test_mode_shapes_stay_on_the_canvas(name: str) -> None:
    from lagsim.viz.mode_figures import mode_figure

    system = lagsim.load(name)
    fig = mode_figure(system.spec, system.model, system.modes())
    assert "mode shapes" in fig.get_suptitle() and outside(fig) == []


def test_a_3d_path_stays_on_the_canvas() -> None:
    top = lagsim.load("heavy_top")
    fig = lagsim.plot(top.simulate(t_end=0.5, samples=51), kind="path", system=top)
    assert outside(fig) == []
