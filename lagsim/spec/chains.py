"""Generate the YAML of the planar chain of n pendulums (the benchmark system of issue 5).

n point masses ``m`` on massless rods of length ``l`` hang from the origin under gravity
``[0, -g]``. Two descriptions of the same system are produced:

- minimal coordinates: the rod angles ``th1..thn`` from the downward vertical, with the bob
  positions ``x_k = sum_{i<=k} l*sin(th_i)``, ``y_k = -sum_{i<=k} l*cos(th_i)``; for n = 2 this is
  the double pendulum of seed 002 §23.8 (there with gravity along E_x, same angles);
- natural coordinates: the Cartesian positions ``x1, y1, .., xn, yn`` with one holonomic rod
  constraint per link (seed 001 §10.7, the pendulum in natural coordinates generalised to a chain),
  ``rod1: x1**2 + y1**2 - l**2`` and ``rodk: (xk - x(k-1))**2 + (yk - y(k-1))**2 - l**2``.

The text follows the YAML format version 1 of issue 2. Usage::

    python -m lagsim.cli.chains 8 [--natural] [--angle 0.5] [-o chain_8.yaml]
"""

from __future__ import annotations

import math

from lagsim import naming

PARAMETERS: dict[str, float] = {"m": 1.0, "l": 1.0, "g": 9.81}


def natural_positions(
    n: int, angle: float, l: float = PARAMETERS["l"]
) -> list[tuple[float, float]]:
    """Bob positions ``(x_k, y_k)`` of the chain with every rod at ``angle`` from the vertical."""
    s, c = l * math.sin(angle), l * math.cos(angle)
    positions: list[tuple[float, float]] = []
    x = y = 0.0
    for _ in range(n):
        x, y = x + s, y - c
        positions.append((x, y))
    return positions


def _minimal(n: int, angle: float) -> list[str]:
    lines = [f"coordinates: [{', '.join(f'th{k}' for k in range(1, n + 1))}]", "masses:"]
    for k in range(1, n + 1):
        x = " + ".join(f"l*sin(th{i})" for i in range(1, k + 1))
        y = " - ".join(f"l*cos(th{i})" for i in range(1, k + 1))
        lines += [f"  p{k}:", "    mass: m", f"    position: [{x}, -{y}]"]
    lines += ["gravity: [0, -g]", "initial:"]
    for k in range(1, n + 1):
        lines += [f"  th{k}: {angle!r}", f"  {naming.velocity(f'th{k}')}: 0"]
    return lines


def _natural(n: int, angle: float) -> list[str]:
    names = ", ".join(f"x{k}, y{k}" for k in range(1, n + 1))
    lines = [f"coordinates: [{names}]", "masses:"]
    for k in range(1, n + 1):
        lines += [f"  p{k}:", "    mass: m", f"    position: [x{k}, y{k}]"]
    lines += ["gravity: [0, -g]", "constraints:"]
    for k in range(1, n + 1):
        if k == 1:
            phi = "(x1)**2 + (y1)**2 - l**2"
        else:
            phi = f"(x{k} - x{k - 1})**2 + (y{k} - y{k - 1})**2 - l**2"
        lines += [f"  - name: rod{k}", f"    holonomic: {phi}"]
    lines.append("initial:")
    for k, (x, y) in enumerate(natural_positions(n, angle), start=1):
        lines += [f"  x{k}: {x!r}", f"  y{k}: {y!r}", f"  {naming.velocity(f'x{k}')}: 0",
                  f"  {naming.velocity(f'y{k}')}: 0"]
    return lines


def chain_yaml(n: int, natural: bool = False, angle: float = 0.5) -> str:
    """YAML text (format version 1, issue 2) of the planar n-pendulum chain released at rest.

    ``natural`` selects Cartesian coordinates with n rod constraints instead of the n angles;
    ``angle`` is the initial angle of every rod from the downward vertical, in radians.
    """
    if n < 1:
        raise ValueError(f"a chain needs at least one link, got n = {n}")
    kind = "natural (Cartesian) coordinates with rod constraints" if natural else "rod angles"
    lines = [
        f"name: chain_{n}_natural" if natural else f"name: chain_{n}",
        f"description: planar chain of {n} point masses on massless rods under gravity, "
        f"{kind}; released at rest with every rod at {angle!r} rad (lagsim.spec.chains)",
        "parameters:",
        *(f"  {name}: {value!r}" for name, value in PARAMETERS.items()),
    ]
    lines += _natural(n, angle) if natural else _minimal(n, angle)
    lines += ["simulate:", "  t_end: 10"]
    return "\n".join(lines) + "\n"
