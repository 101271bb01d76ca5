"""``lagsim modes --plot``: each mode shape drawn as the masses at the equilibrium and displaced
along the mode (issue 10).

The masses' positions r_K(q) (``masses:``) are evaluated at q*, q* + ε δq and q* − ε δq with δq
the mode's shape (its real part for a damped mode) and ε chosen so that the largest mass moves by
a fifth of the configuration's size; rods (:func:`lagsim.analysis.kinematics.rods`) join the masses
the model keeps at fixed distance. They are drawn in the plane gravity points down in, as by
``plot --kind path`` (:func:`lagsim.viz.views.choose_plane`; the spring pendulum, whose file has
gravity along +x, hung sideways in the x–y plane), the plane named in the title.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.analysis.kinematics import ORIGIN, gravity_vector, mass_paths, rods
from lagsim.analysis.modes import ModesReport
from lagsim.analysis.rest import autonomous_model
from lagsim.errors import InputError, Location
from lagsim.output.io import Table
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model
from lagsim.viz.figures import suptitle
from lagsim.viz.views import AXIS_NAMES, choose_plane

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DISPLACEMENT = 0.2
"""The largest mass moves by this fraction of the configuration's size."""


def _positions(model: Model) -> tuple[list[str], Callable[[np.ndarray], Any]]:
    subs = model.substitutions()
    subs[model.t] = se.Integer(0)
    exprs = [se.sympify(c).subs(subs) for _, r in model.mass_positions
             for c in (*r, se.Integer(0), se.Integer(0))[:3]]
    f = se.Lambdify(list(model.q), exprs, backend="lambda")
    names = [name for name, _ in model.mass_positions]
    return names, f


def mode_figure(spec: SystemSpec, model: Model, report: ModesReport) -> Figure:
    """One panel per mode: the equilibrium in grey, the configurations displaced by ±ε along the
    mode in colour (solid +, dashed −)."""
    from matplotlib.figure import Figure

    used = autonomous_model(model, spec).model
    if not used.mass_positions:
        raise InputError(f"system '{model.name}' declares no 'masses', so its mode shapes "
                         "cannot be drawn; drop --plot (the shapes are printed)",
                         Location("--plot"))
    if not report.modes:
        raise InputError("there is no mode to draw", Location("--plot"))
    names, f = _positions(used)
    q0 = np.array(report.q)
    at_rest = np.asarray(f(q0), dtype=float).reshape(-1, 3)
    table = Table((naming.TIME, *used.coordinates), np.array([[0.0, *q0]]), "<modes>")
    links = rods(used, mass_paths(used, table))
    size = max(float(np.max(np.abs(at_rest), initial=0.0)), 1e-9)
    count = len(report.modes)
    cols = min(count, 3)
    rows = math.ceil(count / cols)
    fig = Figure(figsize=(4.0 * cols, 4.0 * rows), layout="constrained")
    shapes = []
    for mode in report.modes:
        shape = np.real(np.array(mode.shape, dtype=complex))
        move = (np.asarray(f(q0 + 1e-6 * shape), dtype=float).reshape(-1, 3) - at_rest) / 1e-6
        largest = float(np.max(np.linalg.norm(move, axis=1), initial=0.0))
        eps = DISPLACEMENT * size / largest if largest > 0 else 0.0
        shapes.append([np.asarray(f(q), dtype=float).reshape(-1, 3)
                       for q in (q0, q0 + eps * shape, q0 - eps * shape)])
    every = np.concatenate([np.zeros((1, 3)), *(p for drawn in shapes for p in drawn)])
    plane = choose_plane(gravity_vector(spec), [float(v) for v in np.ptp(every, axis=0)])
    for k, (mode, drawn) in enumerate(zip(report.modes, shapes, strict=True)):
        ax = fig.add_subplot(rows, cols, k + 1)
        for points, style, colour in zip(drawn, ("-", "-", "--"), ("0.6", "C0", "C3"),
                                         strict=True):
            xy = points[:, [plane.across, plane.up]]
            where = {ORIGIN: (0.0, 0.0), **{n: tuple(p) for n, p in zip(names, xy)}}
            for a, b in links:
                ax.plot([where[a][0], where[b][0]], [where[a][1], where[b][1]], style,
                        color=colour, lw=1.5)
            ax.plot(xy[:, 0], xy[:, 1], "o", color=colour, ms=7)
        if mode.omega_squared is not None and mode.omega_squared < 0:
            label = f"unstable, growth {mode.eigenvalue.real:.4g} 1/s"
        else:
            label = f"ω = {mode.frequency:.4g} rad/s ({mode.hertz:.4g} Hz)"
        ax.set_title(f"mode {k + 1}: {label}", fontsize=10)
        ax.set_aspect("equal", adjustable="datalim")
        ax.plot([0.0], [0.0], "k+", ms=8)
        ax.set_xlabel(AXIS_NAMES[plane.across])
        ax.set_ylabel(AXIS_NAMES[plane.up])
        if plane.down:
            ax.invert_yaxis()
    suptitle(fig, f"{report.system}: mode shapes in the {plane.caption} (grey: equilibrium; "
                  "solid/dashed: ±)")
    return fig
