"""Animation of a simulated system: masses as dots, rods as lines, a fading trail, a clock.

Issue 4.

Signature for the CLI::

    animate(table: Table, positions: Mapping[str, tuple[ArrayLike, ArrayLike]],
            rods: Sequence[tuple[str, str]], out_path: str | Path | Output, fps: float = 30,
            trail: float = 1.0, title: str | None = None, dpi: int = 100) -> int

``table`` is :func:`lagsim.output.io.read_csv`'s result; ``positions`` maps a mass name to its (x,
y) arrays at the table's samples (the caller evaluates the system's position expressions); ``rods``
are pairs of mass names or ``"origin"`` that a holonomic constraint |r_i − r_j| = const ties
together (seed 002 §23.6–23.8 writes the pendulum's string this way). The return value is the number
of frames written: ``frames``, or else ``max(2, round(fps * (t_end − t_start)))``, at equally spaced
times, positions linearly interpolated between samples; more than :data:`MAX_FRAMES` is refused
before anything is drawn (issue 32: ``--t-end 20000`` at 30 fps asked for 600,000 frames, a CSV
spanning 1e12 s for more than memory holds).

``.gif`` is streamed frame by frame (:class:`_GifStream`: memory does not grow with the number
of frames); ``.mp4`` pipes the frames to ffmpeg, which must be on PATH, otherwise an InputError
says so before any work (:func:`check_animation_output`).  The output goes through
:func:`lagsim.output.io.open_output`: a file is replaced atomically, a device or FIFO written in
place.
"""

from __future__ import annotations

import math
import shutil
import struct
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from lagsim.errors import InputError, Location
from lagsim.output.io import Output, Table, check_output, open_output, output_path
from lagsim.viz.figures import GRAVITY_CORNERS, gravity_arrow, plain, quiet_corner, suptitle
from lagsim.viz.palette import AXIS_COLOURS, LINE_COLOURS, MASS_COLOURS, dot_look
from lagsim.viz.views import AXIS_NAMES, Plane, view_caption

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike
    from PIL import Image

    from lagsim.viz.scene3d import Scene

__all__ = ["FORMATS", "MAX_FRAMES", "ORIGIN", "animate", "animate_3d", "check_animation_output",
           "check_frames",
           "frame_count",
           "gravity_arrow", "spring_width", "trail_points", "zigzag"]

FORMATS = ("gif", "mp4")

ORIGIN = "origin"
End = str | tuple[float, float]
"""An end of a rod or a spring: a mass name, ``"origin"``, or a fixed point (x, y)."""
_TRAIL_ALPHA = 0.8


MAX_FRAMES = 10_000
"""Frames of one animation (5.5 minutes at 30 fps; each frame costs some 20 ms to draw and tens
of kilobytes of GIF)."""


def frame_count(t_start: float, t_end: float, fps: float, frames: int | None = None) -> int:
    """Frames of an animation of [t_start, t_end] at ``fps`` frames per simulated second, or
    ``frames`` when given; an InputError past :data:`MAX_FRAMES` (:func:`check_frames`)."""
    wanted = fps * (t_end - t_start) if frames is None else frames
    return max(2, round(check_frames(wanted, fps, t_end - t_start if frames is None else None)))


def check_frames(frames: float, fps: float, span: float | None = None) -> float:
    """``frames`` if within :data:`MAX_FRAMES`, else an InputError naming the count and the
    options that change it (``span``: the seconds that made the count at ``fps``)."""
    if not frames <= MAX_FRAMES:
        count = f"{frames:,.0f}" if math.isfinite(frames) else "more than can be counted"
        made = (f" (--fps {fps:g} × {span:.6g} s of simulated time)"
                if span is not None else "")
        raise InputError(f"the animation would have {count} frames{made}, more than lagsim's "
                         f"limit of {MAX_FRAMES:,}; give --frames N (at most {MAX_FRAMES:,}) to "
                         "draw N frames over the whole run, a lower --fps, or a shorter --t-end",
                         Location("--frames" if span is None else "--fps"))
    return frames


def _check_time(table: Table) -> np.ndarray:
    t = table.time
    if not np.all(np.isfinite(t)):
        raise InputError("column 't' has non-finite values; cannot animate", Location(table.source))
    if not np.all(np.diff(t) > 0):
        row = int(np.argmax(np.diff(t) <= 0)) + 3
        raise InputError(
            "column 't' must increase strictly to animate", Location(table.source, row)
        )
    return t


def check_animation_output(dest: str | Path | Output, option: str = "-o") -> Output:
    """Check ``dest`` before any work: a ``.gif`` (``-``, a device or a FIFO get a GIF too) or an
    ``.mp4`` where ffmpeg is installed, in a place that can be written."""
    target = dest if isinstance(dest, Output) else check_output(dest, option, binary=True)
    if target.format(FORMATS) == "mp4":
        if shutil.which("ffmpeg") is None:
            raise target.error("mp4 needs ffmpeg, which is not installed; use .gif")
        if target.kind == "stdout":
            raise target.error("an mp4 cannot go to standard output; give -o FILE.mp4 or use .gif")
    return target


def _pixels(fig: Figure) -> np.ndarray:
    """The RGBA pixels of ``fig`` as last drawn, on the Agg canvas :func:`_figure` gives it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas
    if not isinstance(canvas, FigureCanvasAgg):
        raise TypeError("an animation's figure draws on an Agg canvas")
    return np.asarray(canvas.buffer_rgba())


class _GifStream:
    """A GIF written frame by frame, holding only the previous frame (issue 15: the Pillow writer
    of matplotlib keeps every frame until the end, about 1.85 MB each).

    Each frame gets its own 256-colour palette (a local colour table) and is cropped to the box
    that changed since the previous frame; pixels outside it stay, as in Pillow's own optimised
    GIFs.  An unchanged frame is a 1×1 patch, so the file has exactly one image per frame.
    The delays (whole centiseconds) are rounded so that their sum is the animation's length.
    Layout: GIF89a header without a global colour table, the NETSCAPE2.0 loop extension, then per
    frame a graphic control extension (delay), an image descriptor with its colour table and the
    LZW data (Pillow's ``GifImagePlugin.getdata``), then the trailer ``;``.
    """

    def __init__(self, out: IO[bytes], size: tuple[int, int], fps: float) -> None:
        self.out = out
        self.size = size
        self.fps = fps
        self.count = 0
        self.previous: Image.Image | None = None
        width, height = size
        out.write(b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0))
        out.write(b"!\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", 0) + b"\x00")

    def add(self, rgba: np.ndarray) -> None:
        from PIL import GifImagePlugin, Image, ImageChops

        frame = Image.fromarray(np.ascontiguousarray(rgba[..., :3]))
        if frame.size != self.size:
            raise ValueError(f"frame of size {frame.size}, the animation is {self.size}")
        if self.previous is None:
            box: tuple[int, int, int, int] | None = (0, 0, *self.size)
        else:
            box = ImageChops.difference(frame, self.previous).getbbox()
        box = box or (0, 0, 1, 1)
        patch = frame.crop(box).convert("P", palette=Image.Palette.ADAPTIVE, colors=256)
        for chunk in GifImagePlugin.getdata(
            patch, offset=box[:2], duration=10 * self._delay_cs(), include_color_table=True
        ):
            self.out.write(chunk)
        self.previous = frame
        self.count += 1

    def _delay_cs(self) -> int:
        """This frame's delay in GIF's centiseconds, rounded so that the delays add up to the
        true running time (a fixed ``int(100 / fps)`` plays 30 fps 10 % fast); at least 1, since
        viewers take a delay of 0 as "as fast as you like" (over 100 fps plays at 100)."""
        exact = round(100 * (self.count + 1) / self.fps) - round(100 * self.count / self.fps)
        return max(1, exact)

    def close(self) -> None:
        self.out.write(b";")


def _resampled(
    t: np.ndarray, positions: Mapping[str, tuple[ArrayLike, ArrayLike]], frames: np.ndarray
) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for name, (xs, ys) in positions.items():
        xa, ya = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        if xa.shape != t.shape or ya.shape != t.shape:
            raise ValueError(
                f"positions of {name!r} have shapes {xa.shape}, {ya.shape}; expected {t.shape}"
            )
        out[name] = np.column_stack([np.interp(frames, t, xa), np.interp(frames, t, ya)])
    return out


def _limits(points: list[np.ndarray]) -> tuple[float, float, float, float]:
    stacked = np.concatenate(points)
    finite = stacked[np.all(np.isfinite(stacked), axis=1)]
    if finite.size == 0:
        return -1.0, 1.0, -1.0, 1.0
    (x0, y0), (x1, y1) = finite.min(axis=0), finite.max(axis=0)
    span = max(x1 - x0, y1 - y0, 1e-9)
    pad = 0.08 * span
    cx, cy = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
    half = 0.5 * span + pad
    return cx - half, cx + half, cy - half, cy + half


def _clock_format(dt: float) -> str:
    decimals = max(2, math.ceil(-math.log10(dt)) + 1) if dt > 0 else 2
    return f"t = {{:.{decimals}f}}"


def _free_corner(ax: Axes, drawn: np.ndarray | None) -> tuple[float, float]:
    """The corner of ``ax`` (the clock's top left left out) where the gravity arrow covers the
    fewest of the points ``drawn`` (data coordinates) (:func:`lagsim.viz.figures.quiet_corner`):
    the spring pendulum's spring was fixed under the top right one."""
    if drawn is None or len(drawn) == 0:
        return GRAVITY_CORNERS[0]
    fractions = ax.transAxes.inverted().transform(ax.transData.transform(drawn))
    return quiet_corner(fractions, GRAVITY_CORNERS[:3])


def _stage(
    xmin: float,
    xmax: float,
    ymin: float,
    ymax: float,
    names: Sequence[str],
    colours: Sequence[tuple[float, float, float, float]],
    markers: Sequence[str],
    uses_origin: bool,
    title: str | None,
    dpi: int,
    gravity: tuple[float, float] | None = None,
    plane: Plane | None = None,
    drawn: np.ndarray | None = None,
) -> tuple[Figure, Axes]:
    """A figure whose static part (axes, grid, labels, legend) is one pre-rendered image.

    Only the moving artists are drawn per frame, on a transparent axes laid exactly over the
    rendered one: drawing ticks and labels again for every frame would cost most of the time.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fig = Figure(figsize=(6.4, 6.0), dpi=dpi)
    fig.subplots_adjust(left=0.11, right=0.84, bottom=0.09, top=0.93)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_aspect("equal")
    plane = plane or Plane()
    ax.set_xlabel(AXIS_NAMES[plane.across])
    ax.set_ylabel(AXIS_NAMES[plane.up])
    if plane.down:
        ax.invert_yaxis()
    ax.grid(True, alpha=0.3)
    ax.set_title("\n".join(filter(None, (plain(title or ""), plane.caption))))
    if uses_origin:
        ax.plot([0.0], [0.0], marker="+", color="0.2", markersize=10)
    if gravity is not None:
        gravity_arrow(ax, gravity, _free_corner(ax, drawn))
    if len(names) <= 12:
        handles = [
            Line2D([], [], marker=marker, linestyle="", color=c, markersize=8, label=plain(name))
            for name, c, marker in zip(names, colours, markers, strict=True)
        ]
        ax.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            borderaxespad=0.0,
            frameon=False,
            fontsize="small",
        )
    fig.canvas.draw()
    background = _pixels(fig).copy()
    box = ax.get_position()
    ax.set_visible(False)
    live = fig.add_axes(box.bounds)
    live.set_xlim(ax.get_xlim())
    live.set_ylim(ax.get_ylim())
    live.set_axis_off()
    fig.figimage(background, xo=0, yo=0, origin="upper", zorder=-1)
    return fig, live


def animate(
    table: Table,
    positions: Mapping[str, tuple[ArrayLike, ArrayLike]],
    rods: Sequence[tuple[str, str]],
    out_path: str | Path | Output,
    fps: float = 30,
    trail: float = 1.0,
    title: str | None = None,
    dpi: int = 100,
    gravity: tuple[float, float] | None = None,
    springs: Sequence[tuple[End, End]] = (),
    progress: Callable[[float], None] | None = None,
    frames: int | None = None,
    plane: Plane | None = None,
) -> int:
    """Write an animation of ``positions`` to ``out_path`` and return the number of frames.

    ``positions`` and the fixed ends of ``springs`` lie in ``plane`` (default the x–y plane;
    :func:`lagsim.viz.figures.plane_paths` chooses it from gravity), which the axes and the
    title name. ``gravity``, a unit vector on the page (:attr:`Plane.gravity`), is drawn as an
    arrow so that "down" can be read off every frame;
    ``springs`` are pairs of ends (a mass, ``"origin"`` or a fixed point (x, y)) drawn as
    zigzags (:func:`lagsim.analysis.kinematics.springs`); ``progress(fraction)`` is called after
    each frame. The trail of each mass runs through every sample of ``table`` in the last ``trail``
    seconds (:func:`trail_points`), not only through the frames' positions. ``frames`` draws that
    many frames over the run instead of ``fps`` per simulated second (:func:`frame_count`, at most
    :data:`MAX_FRAMES`), still shown at ``fps``."""
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_rgba

    if not fps or fps <= 0 or not math.isfinite(fps):
        raise InputError(f"--fps must be a positive number, not {fps!r}")
    if trail < 0 or not math.isfinite(trail):
        raise InputError(f"--trail must be a number of seconds ≥ 0, not {trail!r}")
    if not positions:
        raise InputError("nothing to animate: the system names no masses", Location(table.source))
    target = check_animation_output(out_path)
    fmt = target.format(FORMATS)
    for a, b in [*rods, *springs]:
        for end in (a, b):
            if isinstance(end, str) and end != ORIGIN and end not in positions:
                raise ValueError(f"end {end!r} is neither a mass nor {ORIGIN!r}")

    t = _check_time(table)
    n = frame_count(float(t[0]), float(t[-1]), fps, frames)
    moments = np.linspace(t[0], t[-1], n)
    xy = _resampled(t, positions, moments)
    uses_origin = any(ORIGIN in rod for rod in [*rods, *springs])
    fixed = [np.array([end], dtype=float) for pair in springs for end in pair
             if not isinstance(end, str)]
    samples = {name: np.column_stack([np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)])
               for name, (xs, ys) in positions.items()}
    extent = [*samples.values(), *fixed, *([np.zeros((1, 2))] if uses_origin else [])]
    xmin, xmax, ymin, ymax = _limits(extent)

    names = list(xy)
    looks = [dot_look(i, LINE_COLOURS) for i in range(len(names))]
    colours = [to_rgba(colour) for colour, _ in looks]
    markers = [marker for _, marker in looks]
    covered = np.concatenate([*samples.values(), *(np.repeat(p, len(t), axis=0) for p in fixed),
                              *([np.zeros((len(t), 2))] if uses_origin else [])])
    fig, live = _stage(xmin, xmax, ymin, ymax, names, colours, markers, uses_origin, title, dpi,
                       gravity,
                       plane, covered)
    rod_lines = [live.plot([], [], color="0.25", linewidth=2.0, zorder=2)[0] for _ in rods]
    spring_lines = [live.plot([], [], color="0.35", linewidth=1.2, zorder=2)[0]
                    for _ in springs]
    def point(end: End, i: int) -> np.ndarray:
        if not isinstance(end, str):
            return np.asarray(end, dtype=float)
        return np.zeros(2) if end == ORIGIN else xy[end][i]

    widths = [spring_width([float(np.hypot(*(point(b, i) - point(a, i)))) for i in range(n)])
              for a, b in springs]
    trails = []
    for colour in colours:
        collection = LineCollection([], linewidths=1.5, zorder=1)
        collection.set_color([colour])
        live.add_collection(collection)
        trails.append(collection)
    dots = [live.plot([], [], marker, color=c, markersize=9, zorder=3)[0]
            for c, marker in zip(colours, markers, strict=True)]
    clock_format = _clock_format(float(moments[1] - moments[0]))
    clock = live.text(0.02, 0.97, "", transform=live.transAxes, va="top", family="monospace")
    def draw(i: int) -> None:
        for line, (a, b) in zip(rod_lines, rods, strict=True):
            pa, pb = point(a, i), point(b, i)
            line.set_data([pa[0], pb[0]], [pa[1], pb[1]])
        for line, (start, end), width in zip(spring_lines, springs, widths, strict=True):
            path = zigzag(point(start, i), point(end, i), width=width)
            line.set_data(path[:, 0], path[:, 1])
        for name, dot, collection, colour in zip(names, dots, trails, colours, strict=True):
            p = xy[name]
            dot.set_data([p[i, 0]], [p[i, 1]])
            points, times = trail_points(t, samples[name], moments[i], p[i], trail)
            if len(points) > 1:
                segments = np.stack([points[:-1], points[1:]], axis=1)
                age = moments[i] - 0.5 * (times[:-1] + times[1:])
                rgba = np.tile(colour, (len(segments), 1))
                rgba[:, 3] = _TRAIL_ALPHA * np.clip(1.0 - age / trail, 0.0, 1.0)
                collection.set_segments(list(segments))
                collection.set_color(rgba)  # type: ignore[arg-type]
            else:
                collection.set_segments([])
        clock.set_text(clock_format.format(moments[i]))

    def drawn(i: int) -> None:
        draw(i)
        if progress is not None:
            progress((i + 1) / n)

    _write(fig, target, fmt, fps, dpi, n, drawn)
    return n


def _write(fig: Figure, target: Output, fmt: str, fps: float, dpi: int, n: int,
           drawn: Callable[[int], None]) -> None:
    """Draw the ``n`` frames (``drawn(i)`` sets the artists of frame i) and write them: a GIF
    streamed frame by frame, or an mp4 through ffmpeg."""
    if fmt == "mp4":
        _write_mp4(fig, target, fps, dpi, n, drawn)
        return
    with open_output(target, binary=True) as out:
        gif = _GifStream(out, fig.canvas.get_width_height(physical=True), fps)
        for i in range(n):
            drawn(i)
            fig.canvas.draw()
            gif.add(_pixels(fig))
        gif.close()


def trail_points(t: np.ndarray, path: np.ndarray, now: float, here: np.ndarray, span: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The trail of a mass at time ``now``: its position at ``now − span`` (interpolated), every
    sample of ``path`` (an (N, 2) array at times ``t``, (N, 3) in 3-D) in between, and ``here``,
    its position at ``now``; with their times. A trail through the samples follows the motion
    between frames (a fast swing drawn at 15 frames per second is a curve, not a few
    chords)."""
    if span <= 0.0 or now <= t[0]:
        return here[None, :], np.array([now])
    start = max(float(t[0]), now - span)
    lo = int(np.searchsorted(t, start, side="right"))
    hi = int(np.searchsorted(t, now, side="left"))
    first = np.array([np.interp(start, t, path[:, k]) for k in range(path.shape[1])])
    points = np.vstack([first, path[lo:hi], here])
    times = np.concatenate([[start], t[lo:hi], [now]])
    return points, times


SPRING_COILS = 5
"""The zigzags of a drawn spring."""
SPRING_ANGLE = math.radians(60.0)
"""The angle between a zigzag's segments and the spring's axis at its median length: the
spring symbol of equilateral teeth."""


def spring_width(lengths: Sequence[float], coils: int = SPRING_COILS) -> float:
    """The half-width of a spring drawn over frames of ``lengths``: its teeth cross the axis at
    :data:`SPRING_ANGLE` at the median length (a half-coil advances 0.8 L/(2 coils) along the
    axis while crossing twice the half-width). Eight coils of a width fixed in the picture's
    units drew the spring_pendulum's spring as a staircase of teeth 2.7 times their pitch."""
    pitch = 0.8 * float(np.median(lengths)) / (2 * coils)
    return 0.5 * pitch * math.tan(SPRING_ANGLE)


def zigzag(a: np.ndarray, b: np.ndarray, width: float, coils: int = SPRING_COILS
           ) -> np.ndarray:
    """A spring from ``a`` to ``b``: straight ends of a tenth of the length each, and ``coils``
    zigzags of half-width ``width`` across the line between them; an (m, 2) array from a to
    b."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = b - a
    length = float(np.hypot(*d))
    if length == 0.0:
        return np.array([a, b])
    normal = np.array([-d[1], d[0]]) / length
    s = np.linspace(0.1, 0.9, 2 * coils + 1)
    side = np.zeros_like(s)
    side[1:-1] = np.where(np.arange(1, len(s) - 1) % 2 == 1, 1.0, -1.0)
    middle = a + np.outer(s, d) + np.outer(side * width, normal)
    return np.vstack([a, middle, b])


def _write_mp4(
    fig: Figure, target: Output, fps: float, dpi: int, n: int, draw: Callable[[int], None]
) -> None:
    """Pipe the frames to ffmpeg, which writes the file (a temporary one renamed at the end, or
    a device or FIFO in place, then as fragmented MP4, which needs no seeking)."""
    from matplotlib.animation import FFMpegWriter

    extra = ["-pix_fmt", "yuv420p"]
    if target.kind == "stream":
        extra += ["-movflags", "frag_keyframe+empty_moov", "-f", "mp4"]
    writer = FFMpegWriter(fps=fps, extra_args=extra)  # type: ignore[arg-type]
    with output_path(target) as path, writer.saving(fig, str(path), dpi):
        for i in range(n):
            draw(i)
            writer.grab_frame()


def _rotations_at(t: np.ndarray, rotation: np.ndarray, moments: np.ndarray) -> np.ndarray:
    """R at the frames' ``moments``: each entry interpolated linearly between the samples, then
    the nearest rotation matrix to that (the orthogonal factor U Vᵀ of its singular value
    decomposition; Higham, *Functions of Matrices*, §8.1, the polar decomposition)."""
    flat = rotation.reshape(len(t), 9)
    mixed = np.column_stack([np.interp(moments, t, flat[:, k]) for k in range(9)])
    u, _, vt = np.linalg.svd(mixed.reshape(-1, 3, 3))
    return u @ vt


def animate_3d(
    table: Table,
    drawn: Scene,
    out_path: str | Path | Output,
    view: tuple[float, float],
    fps: float = 30,
    trail: float = 1.0,
    title: str | None = None,
    dpi: int = 100,
    progress: Callable[[float], None] | None = None,
    frames: int | None = None,
) -> int:
    """Write an animation of a system with 3-D bodies to ``out_path`` (as :func:`animate`, which
    draws planar systems) and return the number of frames.

    ``drawn`` (:func:`lagsim.viz.scene3d.scene`) has each mass's (N, 3) positions at the table's
    samples; its bodies are drawn as their principal axes and box (:mod:`lagsim.viz.scene3d`),
    R between two samples interpolated and made orthogonal again (:func:`_rotations_at`); each
    mass gets a fading trail of ``trail`` seconds, each body a second one of the tip of its
    symmetry axis, to show a top's precession and nutation. Seen from ``view`` (elevation,
    azimuth in degrees, :mod:`lagsim.viz.views`), with equal scales, the origin marked and an
    arrow along gravity; z drawn downwards when gravity points along +z
    (:func:`lagsim.viz.scene3d.z_down`), the view named under the title."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_rgba
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from mpl_toolkits.mplot3d.art3d import Line3DCollection  # type: ignore[import-untyped]

    from lagsim.viz import scene3d

    if not fps or fps <= 0 or not math.isfinite(fps):
        raise InputError(f"--fps must be a positive number, not {fps!r}")
    if trail < 0 or not math.isfinite(trail):
        raise InputError(f"--trail must be a number of seconds ≥ 0, not {trail!r}")
    points, bodies, rods, gravity = drawn.points, drawn.bodies, drawn.rods, drawn.gravity
    if not points:
        raise InputError("nothing to animate: the system names no masses", Location(table.source))
    target = check_animation_output(out_path)
    fmt = target.format(FORMATS)
    for a, b in rods:
        for end in (a, b):
            if end != ORIGIN and end not in points:
                raise ValueError(f"end {end!r} is neither a mass nor {ORIGIN!r}")

    t = _check_time(table)
    n = frame_count(float(t[0]), float(t[-1]), fps, frames)
    moments = np.linspace(t[0], t[-1], n)
    samples = {name: np.asarray(r, dtype=float) for name, r in points.items()}
    xyz = {name: np.column_stack([np.interp(moments, t, r[:, k]) for k in range(3)])
           for name, r in samples.items()}
    axes = {name: _rotations_at(t, body.rotation, moments) @ body.principal
            * np.asarray(body.half_sides) for name, body in bodies.items()}
    tips = {name: scene3d.tip_path(samples[name], body) for name, body in bodies.items()}
    tip_now = {name: xyz[name] + axes[name][:, :, scene3d.symmetry_axis(body.moments)]
               for name, body in bodies.items()}
    boxes = {name: np.array([scene3d.body_box(xyz[name][i], axes[name][i]) for i in range(n)])
             for name in bodies}
    limits = scene3d.cube_limits([*samples.values(), *tips.values(), *boxes.values(),
                                  np.zeros(3)])

    names = list(xyz)
    looks = [dot_look(i, MASS_COLOURS) for i in range(len(names))]
    colours = [to_rgba(colour) for colour, _ in looks]
    markers = [marker for _, marker in looks]
    fig = Figure(figsize=(6.4, 6.0), dpi=dpi)
    FigureCanvasAgg(fig)
    handles = [Line2D([], [], marker=marker, linestyle="", color=c, markersize=8,
                      label=plain(name))
               for name, c, marker in zip(names, colours, markers, strict=True)][:12]
    if bodies:
        handles += [Line2D([], [], color=c, label=f"principal axis {k + 1}")
                    for k, c in enumerate(AXIS_COLOURS)]
    handles.append(Line2D([], [], label="origin (fixed)", **scene3d.ORIGIN_STYLE))
    legend = fig.legend(handles=handles, loc="upper right",
                        bbox_to_anchor=(scene3d.LEGEND_CORNER[0], 0.9), frameon=False,
                        fontsize="small")
    rect = (0.0, 0.02, scene3d.legend_left(fig, legend), 0.9)
    down = scene3d.z_down(gravity)
    ax = scene3d.stage(fig, view, limits, rect, down)
    ax.set_title(view_caption(view, down, gravity), fontsize="small")
    if title:
        suptitle(fig, title)
    ax.plot([0.0], [0.0], [0.0], **scene3d.ORIGIN_STYLE)
    if gravity is not None:
        scene3d.gravity_arrow_3d(ax, gravity, limits, down)
    fig.canvas.draw()
    background = _pixels(fig).copy()
    ax.set_visible(False)
    live = scene3d.stage(fig, view, limits, rect, down)
    live.set_axis_off()
    live.patch.set_visible(False)
    fig.figimage(background, xo=0, yo=0, origin="upper", zorder=-1)

    rod_lines = [live.plot([], [], [], color="0.25", linewidth=2.0)[0] for _ in rods]
    trails = {name: Line3DCollection([], linewidths=2.0) for name in names}
    tip_trails = {name: Line3DCollection([], linewidths=2.0) for name in bodies}
    tip_colours = {name: to_rgba(AXIS_COLOURS[scene3d.symmetry_axis(body.moments)])
                   for name, body in bodies.items()}
    for collection in [*trails.values(), *tip_trails.values()]:
        live.add_collection3d(collection, autolim=False)
    box_lines = {name: Line3DCollection([], linewidths=0.8) for name in bodies}
    for name, collection in box_lines.items():
        collection.set_color([colours[names.index(name)][:3] + (0.35,)])
        live.add_collection3d(collection, autolim=False)
    triads = {name: [live.plot([], [], [], color=c, linewidth=2.2)[0]
                     for c in AXIS_COLOURS] for name in bodies}
    dots = {name: live.plot([], [], [], marker, color=c, markersize=8)[0]
            for name, c, marker in zip(names, colours, markers, strict=True)}
    clock_format = _clock_format(float(moments[1] - moments[0]))
    clock = live.text2D(0.02, 0.97, "", transform=live.transAxes, va="top", family="monospace")

    def fading(collection: Any, path: np.ndarray, here: np.ndarray, i: int,
               colour: tuple[float, ...]) -> None:
        trace, times = trail_points(t, path, moments[i], here, trail)
        if len(trace) < 2:
            collection.set_segments([])
            return
        age = moments[i] - 0.5 * (times[:-1] + times[1:])
        rgba = np.tile(colour, (len(trace) - 1, 1))
        rgba[:, 3] = _TRAIL_ALPHA * np.clip(1.0 - age / trail, 0.0, 1.0)
        collection.set_segments(list(np.stack([trace[:-1], trace[1:]], axis=1)))
        collection.set_color(rgba)

    def point(end: str, i: int) -> np.ndarray:
        return np.zeros(3) if end == ORIGIN else xyz[end][i]

    def frame(i: int) -> None:
        for line, (a, b) in zip(rod_lines, rods, strict=True):
            line.set_data_3d(*np.stack([point(a, i), point(b, i)]).T)
        for name, colour in zip(names, colours, strict=True):
            here = xyz[name][i]
            dots[name].set_data_3d([here[0]], [here[1]], [here[2]])
            fading(trails[name], samples[name], here, i, colour)
            if name in bodies:
                fading(tip_trails[name], tips[name], tip_now[name][i], i, tip_colours[name])
                for line, segment in zip(triads[name], scene3d.triad(here, axes[name][i]),
                                         strict=True):
                    line.set_data_3d(*segment.T)
                box_lines[name].set_segments(list(boxes[name][i]))
        clock.set_text(clock_format.format(moments[i]))
        if progress is not None:
            progress((i + 1) / n)

    _write(fig, target, fmt, fps, dpi, n, frame)
    return n
