"""The views of the 3-D pictures (``--view`` of ``lagsim plot --kind path`` and ``lagsim
animate`` for a system with 3-D bodies): declared once, here, for the drawing code
(:mod:`lagsim.viz.scene3d`), the flag's parsing and its ``--help`` (a module without numerics or
matplotlib, so that building the command line stays fast).

A view is matplotlib's (elevation, azimuth) of the camera in degrees (``Axes3D.view_init``): the
elevation above the x–y plane, the azimuth about the z axis from the +x axis, z drawn upwards.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from lagsim.errors import InputError, Location

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

HELP = ("Camera of the 3-D picture (systems with 3-D bodies): "
        + ", ".join(f"{name} ({elev:g},{azim:g})" for name, (elev, azim) in VIEWS.items())
        + ", or ELEV,AZIM in degrees (elevation in [-90, 90]); z is drawn upwards. "
        f"[default: {DEFAULT}]")
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
