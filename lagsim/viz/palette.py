"""The looks (colour and line style) of a figure's lines, so that no two legend entries look
alike (issue 30: the Whipple bicycle's path drew 13 entries with matplotlib's 10-colour cycle,
and both wheels' axis tips were the same green dashes).

Colours are matplotlib's qualitative ``tab20`` (its ``tab10`` cycle, then the lighter tone of
each hue) without the light tones closest to another entry: light cyan is 0.098 in RGB from light
blue, light grey 0.106 from light purple. Past the palette, the line style changes: solid lines
go on dash-dotted, dashed ones dotted, so a figure has twice the palette's length of distinct
solid looks and as many dashed. Runs drawn over each other (:func:`overlay_looks`) are told apart
by colour and their lines by style, then by marker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = ["AXIS_COLOURS", "DOT_MARKERS", "LINE_COLOURS", "MARKERS", "MASS_COLOURS",
           "OVERLAY_STYLES", "Style", "dot_look", "look", "overlay_looks"]

Style = Literal["-", "--", "-.", ":"]
"""A line style matplotlib names: solid, dashed, dash-dotted, dotted."""

LINE_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                "#7f7f7f", "#bcbd22", "#17becf",
                "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
                "#dbdb8d")
"""The colours of a plot's lines in turn: matplotlib's ten (``C0`` … ``C9``), then eight lighter
tones of them."""
AXIS_COLOURS = ("tab:red", "tab:green", "tab:purple")
"""The colours of a body's principal axes 1, 2, 3."""
MASS_COLOURS = ("#1f77b4", "#ff7f0e", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
                "#aec7e8", "#ffbb78", "#c49c94", "#f7b6d2", "#dbdb8d")
"""The colours of a 3-D scene's masses in turn: :data:`LINE_COLOURS` without the hues of
:data:`AXIS_COLOURS` (red, green, purple) and grey (the rods, the start and end marks), so that no
mass shares a colour with a principal axis (the bicycle's front frame's axis tip was the red of
axis 1)."""
SOLID: tuple[Style, Style] = ("-", "-.")
DASHED: tuple[Style, Style] = ("--", ":")


def look(index: int, palette: tuple[str, ...], dashed: bool = False) -> tuple[str, Style]:
    """The colour and line style of line ``index`` of a figure drawn from ``palette``: the
    palette's colours in turn, solid (or ``dashed``) in the first round, dash-dotted (dotted) in
    the next."""
    rounds = DASHED if dashed else SOLID
    return palette[index % len(palette)], rounds[(index // len(palette)) % len(rounds)]


OVERLAY_STYLES: tuple[Style, ...] = ("-", "--", ":", "-.")
"""The line styles of one run's lines in a figure of several runs, in turn."""
MARKERS: tuple[str, ...] = ("", "^", "v", "D", "x", "+", "*", "<", ">", "1")
"""The markers of further rounds of :data:`OVERLAY_STYLES` (none in the first); not ``o`` and
``s``, which mark a line's start and end."""


def overlay_looks(sources: Sequence[int]) -> list[tuple[str, Style, str]]:
    """The colour, line style and marker of each line of a figure of several runs, ``sources``
    the run of each line in drawing order: a run's lines in its colour of :data:`LINE_COLOURS`,
    its k-th line in style k of :data:`OVERLAY_STYLES` (so the same quantity has the same style
    in every run); a run's fifth line and on (a 3-link chain's six coordinates in natural form
    repeated the first four looks) and runs past the palette's colours take the next marker
    of :data:`MARKERS`. No two lines alike up to ``len(MARKERS)`` rounds of four lines and
    colours."""
    rounds = -(-max((list(sources).count(s) for s in set(sources)), default=1)
               // len(OVERLAY_STYLES))
    seen: dict[int, int] = {}
    looks = []
    for source in sources:
        k = seen.get(source, 0)
        seen[source] = k + 1
        mark = (source // len(LINE_COLOURS)) * rounds + k // len(OVERLAY_STYLES)
        looks.append((LINE_COLOURS[source % len(LINE_COLOURS)],
                      OVERLAY_STYLES[k % len(OVERLAY_STYLES)], MARKERS[mark % len(MARKERS)]))
    return looks


DOT_MARKERS: tuple[str, ...] = ("o", "D", "^", "v")
"""The markers of an animation's masses in turn, one round of the palette each."""


def dot_look(index: int, palette: tuple[str, ...]) -> tuple[str, str]:
    """The colour and marker of mass ``index`` of an animation: the palette's colours in turn,
    a circle in the first round, a diamond in the next (a 3-D scene's twelfth mass was the
    first's blue circle again, :data:`MASS_COLOURS` having eleven)."""
    return (palette[index % len(palette)],
            DOT_MARKERS[(index // len(palette)) % len(DOT_MARKERS)])
