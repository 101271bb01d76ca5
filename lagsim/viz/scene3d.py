"""Pictures of systems with 3-D rigid bodies (issue 24): ``lagsim plot --kind path`` here, the
frames of ``lagsim animate`` in :func:`lagsim.viz.animate.animate_3d`, both on matplotlib's 3-D
axes (``mpl_toolkits.mplot3d``) from a chosen view (:mod:`lagsim.viz.views`).

What is drawn: each mass's centre-of-mass path; each body as its principal axes (three segments
from the centre of mass along a_k R V e_k, :class:`lagsim.analysis.kinematics.BodyFrames`) and as
the wireframe of the uniform box with the body's mass and principal moments (half-sides a_k); the
path of the tip of the body's symmetry axis (:func:`symmetry_axis`), so that a top's precession
and nutation can be read off; rods to the fixed origin or between masses; the origin (a top's
pivot) marked; an arrow along gravity. The three axes have equal scales (a cube), so that a top
looks like a top. z is drawn upwards, or downwards when gravity points along +z (the Whipple
bicycle's axes, z down), so that gravity points down the page; the title says from which view
(:func:`lagsim.viz.views.view_caption`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lagsim.records import record
from lagsim.viz.figures import plain, suptitle
from lagsim.viz.palette import AXIS_COLOURS, MASS_COLOURS, look
from lagsim.viz.views import view_caption

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from lagsim.analysis.kinematics import BodyFrames
    from lagsim.output.io import Table
    from lagsim.spec.system import SystemSpec
    from lagsim.symbolic.model import Model

__all__ = ["LEGEND_CORNER", "Scene", "body_box",
           "cube_limits", "gravity_arrow_3d", "legend_left", "path_figure", "scene", "show_path",
           "stage", "symmetry_axis", "tip_path", "triad", "z_down"]

LEGEND_CORNER = (0.995, 0.93)
"""The legend's top right corner in figure fractions: it ends inside the canvas, however long
the names (the animation's ``rear_wheel.contact`` was cut at the right edge)."""
ORIGIN_STYLE: Mapping[str, Any] = {"marker": "P", "color": "0.1", "markersize": 9,
                                   "linestyle": ""}
END_ON = 0.98
"""An axis within arccos(0.98) ≈ 11° of the line of sight is seen end-on: its ticks would pile up
in one spot (the front view's y ticks were one smudge), so :func:`stage` draws none, nor its
name."""
TICKS = 5
"""At most this many intervals between ticks on an axis: the front view's x ticks of the
heavy top ran into each other at seven."""
TICK_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
"""The tick spacings allowed, times a power of ten (matplotlib's 2-D default; its
``MaxNLocator`` would also take 1.5 and 3)."""
LABEL_PAD = 8.0
"""Points between an axis' tick labels and its name (matplotlib's 4 put the front view's z on its
0.50)."""
HEAD_ANGLE = np.radians(20.0)
"""Half the opening of the gravity arrow's head."""
_BOX_ALPHA = 0.35
_CORNERS = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=float)
_EDGES = [(a, b) for a in range(8) for b in range(a + 1, 8)
          if np.count_nonzero(_CORNERS[a] != _CORNERS[b]) == 1]


@record
class Scene:
    """What the 3-D pictures of a run draw: ``points`` maps each mass to its (N, 3) positions at
    the samples, ``bodies`` the 3-D bodies among them to their frames, ``rods`` the pairs (mass
    or ``"origin"``, mass) at a fixed distance, ``gravity`` the unit vector of gravity (None:
    no arrow)."""

    points: Mapping[str, np.ndarray]
    bodies: Mapping[str, BodyFrames]
    rods: tuple[tuple[str, str], ...]
    gravity: tuple[float, float, float] | None


def scene(spec: SystemSpec, model: Model, table: Table) -> Scene:
    """The :class:`Scene` of a run of ``spec`` (:mod:`lagsim.analysis.kinematics`)."""
    from lagsim.analysis.kinematics import body_frames, gravity_vector, mass_points, rods

    points = mass_points(model, table)
    links = rods(model, {name: tuple(r.T) for name, r in points.items()})
    return Scene(points, body_frames(spec, model, table), tuple(links), gravity_vector(spec))


def z_down(gravity: Sequence[float] | None) -> bool:
    """Whether the 3-D pictures draw z downwards: gravity lies most along z and points along
    +z."""
    return gravity is not None and gravity[2] > max(abs(gravity[0]), abs(gravity[1]))


def symmetry_axis(moments: Sequence[float], rtol: float = 1e-9) -> int:
    """The index (0, 1 or 2) of a body's symmetry axis: the axis whose principal moment differs
    from the two equal others (a top's I3 when I1 = I2); the third axis when no two are
    equal, or all three are."""
    for k in range(3):
        i, j = moments[(k + 1) % 3], moments[(k + 2) % 3]
        if abs(i - j) <= rtol * max(abs(i), abs(j)) and abs(moments[k] - i) > rtol * abs(i):
            return k
    return 2


def triad(centre: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """The three principal-axis segments of a body at one instant, a (3, 2, 3) array: segment k
    runs from ``centre`` to ``centre + axes[:, k]`` (``axes``: :meth:`BodyFrames.axes` at that
    instant, the axes scaled by the half-sides)."""
    centre = np.asarray(centre, dtype=float)
    return np.stack([np.stack([centre, centre + axes[:, k]]) for k in range(3)])


def body_box(centre: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """The 12 edges of the body's box at one instant, a (12, 2, 3) array: corners
    centre ± axes[:, 0] ± axes[:, 1] ± axes[:, 2]."""
    corners = np.asarray(centre, dtype=float) + _CORNERS @ axes.T
    return np.array([[corners[a], corners[b]] for a, b in _EDGES])


def tip_path(centres: np.ndarray, body: BodyFrames) -> np.ndarray:
    """The path of the tip of ``body``'s symmetry axis, an (N, 3) array: centre + a_k R V e_k at
    each sample."""
    k = symmetry_axis(body.moments)
    return np.asarray(centres, dtype=float) + body.axes()[:, :, k]


def cube_limits(points: Sequence[np.ndarray]) -> np.ndarray:
    """A cube around the finite ``points`` (arrays of shape (…, 3)), 8 % of its side as margin:
    a (3, 2) array of (low, high) per axis, the same span on each so the axes have equal
    scales."""
    stacked = np.concatenate([np.asarray(p, dtype=float).reshape(-1, 3) for p in points])
    finite = stacked[np.all(np.isfinite(stacked), axis=1)]
    if finite.size == 0:
        return np.array([[-1.0, 1.0]] * 3)
    low, high = finite.min(axis=0), finite.max(axis=0)
    half = 0.5 * max(float(np.max(high - low)), 1e-9) * 1.08
    middle = 0.5 * (low + high)
    return np.column_stack([middle - half, middle + half])


def stage(fig: Figure, view: tuple[float, float], limits: np.ndarray, rect: Any = None,
          down: bool = False) -> Any:
    """A 3-D axes of ``fig`` seen from ``view`` (elevation, azimuth in degrees), with the cube
    ``limits`` and equal scales, z growing downwards when ``down``; at ``rect`` (figure
    fractions) when given."""
    from matplotlib.ticker import MaxNLocator

    ax: Any = (fig.add_subplot(projection="3d") if rect is None
               else fig.add_axes(rect, projection="3d"))
    ax.view_init(elev=view[0], azim=view[1])
    ax.set_xlim(*limits[0])
    ax.set_ylim(*limits[1])
    ax.set_zlim(*limits[2])
    if down:
        ax.invert_zaxis()
    ax.set_box_aspect((1.0, 1.0, 1.0))
    elev, azim = np.radians(view)
    sight = (np.cos(elev) * np.cos(azim), np.cos(elev) * np.sin(azim), np.sin(elev))
    for axis, name, along in zip((ax.xaxis, ax.yaxis, ax.zaxis), "xyz", sight, strict=True):
        if abs(along) > END_ON:
            axis.set_ticks([])
        else:
            axis.set_major_locator(MaxNLocator(TICKS, steps=TICK_STEPS))
            getattr(ax, f"set_{name}label")(name, labelpad=LABEL_PAD)
    return ax


LABEL_ROOM = 0.07
"""The figure's width left between the 3-D axes' box and the legend: matplotlib draws the z axis'
tick labels and name outside the box (the Whipple bicycle's z sat on the legend)."""


def legend_left(fig: Figure, legend: Any) -> float:
    """Where the 3-D axes' box ends, in figure fractions: the left edge of ``legend`` less
    :data:`LABEL_ROOM`, so that the legend covers no tick label nor the z axis' name."""
    return float(legend.get_window_extent().x0 / fig.bbox.width) - LABEL_ROOM


def gravity_arrow_3d(ax: Any, direction: Sequence[float], limits: np.ndarray,
                     down: bool = False) -> Any:
    """An arrow labelled g along the unit vector ``direction``, a fifth of the cube's side long,
    centred in the top corner of the cube at (x high, y high, z high; z low when z is drawn
    ``down``) pulled in by a sixth, its label beside it on the screen (across the arrow as seen
    from ``ax``'s view); the arrow (a Line3DCollection: the shaft from head to tail, then the
    head's two strokes, in the plane of the arrow and the screen's direction across it, so that
    no view sees them edge-on) has the id ``"gravity"``."""
    from mpl_toolkits.mplot3d.art3d import Line3DCollection  # type: ignore[import-untyped]

    side = float(limits[0, 1] - limits[0, 0])
    d = np.asarray(direction, dtype=float)
    corner = np.array([limits[0, 1], limits[1, 1], limits[2, 0] if down else limits[2, 1]])
    centre = corner - np.array([1.0, 1.0, -1.0 if down else 1.0]) * side / 6.0
    length = side / 5.0
    head, tail = centre + 0.5 * length * d, centre - 0.5 * length * d
    elev, azim = np.radians([ax.elev, ax.azim])
    right = np.array([-np.sin(azim), np.cos(azim), 0.0])
    up = np.array([-np.sin(elev) * np.cos(azim), -np.sin(elev) * np.sin(azim),
                   -np.cos(elev) if down else np.cos(elev)])
    across = -(d @ up) * right + (d @ right) * up
    norm = float(np.linalg.norm(across))
    beside = across / norm if norm > 1e-6 else right
    wings = [[head, head - 0.3 * length * (np.cos(HEAD_ANGLE) * d + sign * np.sin(HEAD_ANGLE)
                                           * beside)] for sign in (1.0, -1.0)]
    arrow = Line3DCollection([[head, tail], *wings], colors="0.3", linewidths=1.5)
    arrow.set_gid("gravity")
    ax.add_collection3d(arrow, autolim=False)
    label = centre + 0.08 * side * beside
    ax.text(*label, "g", color="0.3", fontstyle="italic", ha="center", va="center")
    return arrow


def path_figure(drawn: Scene, view: tuple[float, float], title: str | None = None,
                window: bool = False) -> Figure:
    """The 3-D ``path`` figure of ``drawn``: each mass's path, start
    (circle) and end (square) marked; each body of ``bodies`` as its principal axes at the start
    (faint) and at the end, its box at the end, and the path of its symmetry axis's tip
    (dashed, in the body's colour: :func:`lagsim.viz.palette.look`); the ``rods`` at the end;
    the origin; the gravity arrow. On an Agg canvas, or a pyplot figure for a window
    (``window``).

    Artists carry ids (``get_gid``) for tests and scripts: ``"<body>:axis<k>:start|end"`` for
    the principal axes (k = 1, 2, 3), ``"<body>:box"`` (at the end), ``"<body>:tip"`` for the
    tip's path, ``"<mass>:path"``, ``"rod:<a>-<b>"``, ``"origin"``, ``"gravity"``. The axes'
    title says from which view, and which way z is drawn (:func:`z_down`)."""
    from matplotlib.lines import Line2D
    from mpl_toolkits.mplot3d.art3d import Line3DCollection

    if window:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(7.5, 6.5))
    else:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7.5, 6.5))
        FigureCanvasAgg(fig)
    points, bodies = drawn.points, drawn.bodies
    tips = {name: tip_path(points[name], body) for name, body in bodies.items()}
    ends = {name: [(i, body.axes()[i]) for i in (0, -1)] for name, body in bodies.items()}
    boxes = {name: body_box(points[name][-1], ends[name][-1][1]) for name in bodies}
    limits = cube_limits([*points.values(), *tips.values(), *boxes.values(), np.zeros(3)])
    down = z_down(drawn.gravity)
    ax = stage(fig, view, limits, down=down)
    ax.set_title(view_caption(view, down, drawn.gravity), fontsize="small")
    handles = []
    for index, (name, r) in enumerate(points.items()):
        colour, style = look(index, MASS_COLOURS)
        ax.plot(r[:, 0], r[:, 1], r[:, 2], color=colour, linestyle=style, linewidth=1.2,
                gid=f"{name}:path")
        ax.plot(*r[0], "o", color=colour, markersize=6)
        ax.plot(*r[-1], "s", color=colour, markersize=6)
        handles.append(Line2D([], [], color=colour, linestyle=style, label=plain(name)))
        if name not in bodies:
            continue
        tip, (_, dashes) = tips[name], look(index, MASS_COLOURS, dashed=True)
        ax.plot(tip[:, 0], tip[:, 1], tip[:, 2], color=colour, linewidth=0.9, linestyle=dashes,
                gid=f"{name}:tip")
        handles.append(Line2D([], [], color=colour, linestyle=dashes,
                              label=plain(f"{name}: axis tip")))
        for (i, axes), when in zip(ends[name], ("start", "end"), strict=True):
            faint = when == "start"
            for k, segment in enumerate(triad(points[name][i], axes)):
                ax.plot(*segment.T, color=AXIS_COLOURS[k], linewidth=1.2 if faint else 2.2,
                        alpha=0.35 if faint else 1.0, gid=f"{name}:axis{k + 1}:{when}")
        edges = Line3DCollection(boxes[name], colors=[colour], linewidths=0.8, alpha=_BOX_ALPHA)
        edges.set_gid(f"{name}:box")
        ax.add_collection3d(edges)
    for a, b in drawn.rods:
        pa = np.zeros(3) if a == "origin" else points[a][-1]
        pb = np.zeros(3) if b == "origin" else points[b][-1]
        ax.plot(*np.stack([pa, pb]).T, color="0.25", linewidth=2.0, gid=f"rod:{a}-{b}")
    ax.plot([0.0], [0.0], [0.0], gid="origin", **ORIGIN_STYLE)
    if drawn.gravity is not None:
        gravity_arrow_3d(ax, drawn.gravity, limits, down)
    handles += [Line2D([], [], color=c, label=f"principal axis {k + 1}")
                for k, c in enumerate(AXIS_COLOURS)] if bodies else []
    handles += [Line2D([], [], label="origin (fixed)", **ORIGIN_STYLE),
                Line2D([], [], marker="o", linestyle="", color="0.3", label="start"),
                Line2D([], [], marker="s", linestyle="", color="0.3", label="end")]
    legend = fig.legend(handles=handles, loc="upper right", bbox_to_anchor=LEGEND_CORNER,
                        frameon=False, fontsize="small")
    fig.subplots_adjust(left=0.0, right=legend_left(fig, legend), bottom=0.04, top=0.93)
    if title:
        suptitle(fig, title)
    return fig


def show_path(drawn: Scene, view: tuple[float, float], title: str | None = None) -> None:
    """:func:`path_figure` in a pyplot window, until it is closed."""
    import matplotlib.pyplot as plt

    path_figure(drawn, view, title, window=True)
    plt.show()
