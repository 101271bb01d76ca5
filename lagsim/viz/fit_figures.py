"""``lagsim fit --plot``: the data and the fitted model, one panel per observed column (issue
26)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lagsim.analysis.fit import Data
from lagsim.output.trajectory import Trajectory
from lagsim.viz.figures import plain

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def fit_figure(data: Data, fitted: Trajectory) -> Figure:
    """One panel per observed column of ``data``: its samples as points (the panel's first
    line) and the run at the estimates ``fitted`` as a curve (the second), on one time axis."""
    from matplotlib.figure import Figure

    count = len(data.columns)
    fig = Figure(figsize=(7.0, 2.4 * count + 0.6), layout="constrained")
    axes = fig.subplots(count, 1, sharex=True, squeeze=False)[:, 0]
    for k, (ax, column) in enumerate(zip(axes, data.columns)):
        ax.plot(data.t, data.values[:, k], "o", markersize=3, color="0.35", label="data")
        ax.plot(np.asarray(fitted.t), np.asarray(fitted[column]), "-", color="C0",
                label="fitted model")
        ax.set_ylabel(plain(column))
        ax.grid(True, alpha=0.3)
        if k == 0:
            ax.legend(loc="best")
    axes[-1].set_xlabel("t")
    fig.suptitle(plain(f"fit of {', '.join(data.columns)} ({data.source})"))
    return fig
