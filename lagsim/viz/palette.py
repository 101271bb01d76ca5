"""The looks (colour and line style) of a figure's lines, so that no two legend entries look
alike (issue 30: the Whipple bicycle's path drew 13 entries with matplotlib's 10-colour cycle,
and both wheels' axis tips were the same green dashes).

Colours are matplotlib's qualitative ``tab20`` (its ``tab10`` cycle, then the lighter tone of
each hue) without the light tones closest to another entry: light cyan is 0.098 in RGB from light
blue, light grey 0.106 from light purple. Past the palette, the line style changes: solid lines
go on dash-dotted, dashed ones dotted, so a figure has twice the palette's length of distinct
solid looks and as many dashed.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["AXIS_COLOURS", "LINE_COLOURS", "MASS_COLOURS", "Style", "look"]

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
