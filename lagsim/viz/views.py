"""The views of the 3-D pictures (``--view`` of ``lagsim plot --kind path`` and ``lagsim
animate`` for a system with 3-D bodies): declared once, here, for the drawing code
(:mod:`lagsim.viz.scene3d`), the flag's parsing and its ``--help`` (a module without numerics or
matplotlib, so that building the command line stays fast).

A view is matplotlib's (elevation, azimuth) of the camera in degrees (``Axes3D.view_init``): the
elevation above the x–y plane, the azimuth about the z axis from the +x axis, z drawn upwards
(downwards when gravity points along +z, so that it points down the page).

The plane of a 2-D picture of the masses (``lagsim plot --kind path`` and ``lagsim animate``
without 3-D bodies) is chosen from gravity too (issue 30, "What the pictures and equations show":
a spherical pendulum was drawn from the top, without saying so and without its gravity arrow):
:func:`choose_plane`. Both pictures say in their title what they show (:func:`view_caption`,
:attr:`Plane.name`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from lagsim.errors import InputError, Location
from lagsim.records import record

FLAG = "--view"

VIEWS: Mapping[str, tuple[float, float]] = {
    "iso": (35.26, -45.0),
    "front": (0.0, -90.0),
    "side": (0.0, 0.0),
    "top": (90.0, -90.0),
}
"""Each named view's (elevation, azimuth) in degrees: ``iso`` looks down the diagonal from
(+x, −y, +z) (35.26° = arctan(1/√2) to 0.01°, the isometric view); ``front`` looks along +y at the
x–z plane (x to the right); ``side`` looks along −x at the y–z plane (y to the right); ``top``
looks down −z at the x–y plane (x to the right, y up, as the 2-D pictures draw it)."""

DEFAULT = "iso"

AXIS_NAMES = ("x", "y", "z")
SIGHT = 0.98
"""|cos| of the angle within which gravity counts as along the line of sight (about 11°)."""

PLANES: Mapping[str, str] = {"front": "x–z plane", "side": "y–z plane", "top": "x–y plane"}
"""The plane each named view other than ``iso`` looks at squarely."""
PAGE_AXES: Mapping[str, tuple[int, int]] = {"front": (0, 2), "side": (1, 2), "top": (0, 1)}
"""The axes (across, up) each of those views shows, as :data:`VIEWS` documents them; the
pictures in a plane take these views."""

HELP = ("Camera of the 3-D picture (systems with 3-D bodies): "
        + ", ".join(f"{name} ({elev:g},{azim:g})" for name, (elev, azim) in VIEWS.items())
        + ", or ELEV,AZIM in degrees (elevation in [-90, 90]); z is drawn upwards (downwards "
        f"when gravity points along +z). [default: {DEFAULT}] Systems drawn in a plane: front, "
        "side or top, the plane they look at [default: the plane gravity points down in].")
"""The ``--help`` line of ``--view``."""


def parse_view(text: str | None) -> tuple[float, float]:
    """(elevation, azimuth) in degrees of ``text``: a name of :data:`VIEWS` (case folded) or
    ``ELEV,AZIM``, two finite numbers with the elevation in [−90, 90]; None is the default view.
    Anything else is an InputError naming ``--view`` and the choices."""
    if text is None:
        return VIEWS[DEFAULT]
    name = text.strip().lower()
    if name in VIEWS:
        return VIEWS[name]
    parts = name.split(",")
    numbers: list[float] = []
    for part in parts if len(parts) == 2 else ():
        try:
            numbers.append(float(part))
        except ValueError:
            break
    if len(numbers) == 2 and all(math.isfinite(v) for v in numbers) and -90 <= numbers[0] <= 90:
        return numbers[0], numbers[1]
    raise InputError(f"must be one of {', '.join(VIEWS)} or ELEV,AZIM in degrees (two finite "
                     f"numbers, elevation in [-90, 90], e.g. 20,-60); got {text!r}",
                     Location(FLAG))


def view_caption(view: tuple[float, float], z_down: bool = False,
                 gravity: Sequence[float] | None = None) -> str:
    """What a 3-D picture seen from ``view`` shows, for its title: the view's name and the plane
    it looks at squarely (``front view: x–z plane``), or its angles; then which way z is drawn;
    and gravity when the camera looks along it (its arrow is a dot: the gyroscope from the top)."""
    names = [name for name, angles in VIEWS.items() if angles == tuple(view)]
    if names:
        shown = f"{names[0]} view" + (f": {PLANES[names[0]]}" if names[0] in PLANES else "")
    else:
        shown = f"view from elevation {view[0]:g}°, azimuth {view[1]:g}°"
    elev, azim = math.radians(view[0]), math.radians(view[1])
    sight = (math.cos(elev) * math.cos(azim), math.cos(elev) * math.sin(azim), math.sin(elev))
    along = "" if gravity is None else next(
        (f", gravity along {'+' if gravity[k] > 0 else '−'}{AXIS_NAMES[k]} (normal to the page)"
         for k in range(3)
         if abs(sum(g * s for g, s in zip(gravity, sight, strict=True))) > SIGHT
         and abs(gravity[k]) > SIGHT), "")
    return f"{shown}, z {'down' if z_down else 'up'}{along}"


@record
class Plane:
    """The plane a 2-D picture draws of positions in space: ``across`` and ``up`` index the axes
    (0, 1, 2: x, y, z) drawn to the right and upwards; ``down``: the ``up`` axis grows
    downwards on the page (gravity along its + direction), so that gravity points down;
    ``gravity``: gravity's unit vector on the page, None without gravity or with gravity normal
    to the page."""

    across: int = 0
    up: int = 1
    down: bool = False
    gravity: tuple[float, float] | None = None

    @property
    def name(self) -> str:
        """``x–y plane``, the two axes in their order x, y, z."""
        a, b = sorted((self.across, self.up))
        return f"{AXIS_NAMES[a]}–{AXIS_NAMES[b]} plane"

    def project(self, point: Sequence[float]) -> tuple[float, float]:
        """``point`` (x, y or x, y, z; z = 0 when left out) on the page: its (across, up)."""
        padded = (*point, 0.0, 0.0)[:3]
        return float(padded[self.across]), float(padded[self.up])

    normal: str | None = None
    """Gravity's direction when it is normal to the page (``−z``): no arrow can show it."""

    @property
    def caption(self) -> str:
        """The title's line saying what is shown: the plane, the axis drawn downwards, and
        gravity when it is normal to the page."""
        return (self.name + (f", {AXIS_NAMES[self.up]} down" if self.down else "")
                + (f", gravity along {self.normal} (normal to the page)" if self.normal else ""))


def choose_plane(gravity: Sequence[float] | None, spread: Sequence[float]) -> Plane:
    """The plane of a 2-D picture of masses whose positions span ``spread`` (max − min along x,
    y, z): with ``gravity`` (a unit vector in space), the axis gravity lies most along drawn
    vertically, gravity pointing down, and across it the other axis along which the masses
    move more (the first on a tie: x before y before z); without gravity, the two axes of the
    widest spread in their order (x–y for a planar system)."""
    order = sorted(range(3), key=lambda i: (-spread[i], i))
    if gravity is None:
        across, up = sorted(order[:2])
        return Plane(across, up)
    up = max(range(3), key=lambda i: (abs(gravity[i]), -i))
    return _with_gravity(next(i for i in order if i != up), up, gravity)


def _with_gravity(across: int, up: int, gravity: Sequence[float] | None) -> Plane:
    """The plane of axes ``across`` and ``up``, ``up`` drawn downwards when gravity points along
    it more than along ``across``, with gravity's direction on the page (or normal to it)."""
    if gravity is None:
        return Plane(across, up)
    down = gravity[up] > abs(gravity[across])
    page = (gravity[across], -gravity[up] if down else gravity[up])
    norm = math.hypot(*page)
    if norm < NORMAL:
        k = 3 - across - up
        return Plane(across, up, down, None, f"{'+' if gravity[k] > 0 else '−'}{AXIS_NAMES[k]}")
    return Plane(across, up, down, (page[0] / norm, page[1] / norm))


NORMAL = 1e-9
"""Gravity's share in the page's plane below which it counts as normal to the page."""


def view_plane(view: tuple[float, float], gravity: Sequence[float] | None) -> Plane:
    """The plane a picture in the plane shows from ``view`` (:func:`parse_view`): the axes of
    :data:`PAGE_AXES`, the vertical one drawn downwards when gravity points along it; only the
    views that look squarely at a plane (front, side, top), else an InputError naming
    ``--view``."""
    names = [name for name, angles in VIEWS.items() if angles == tuple(view)]
    if not names or names[0] not in PAGE_AXES:
        got = names[0] if names else f"{view[0]:g},{view[1]:g}"
        raise InputError("a picture in the plane (no mass has an orientation) is seen from "
                         + ", ".join(f"{n} ({PLANES[n]})" for n in PAGE_AXES) + f"; got {got}",
                         Location(FLAG))
    return _with_gravity(*PAGE_AXES[names[0]], gravity)
