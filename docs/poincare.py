"""Make docs/img/double_pendulum_poincare.png: the double pendulum's Poincaré section at one
energy, the classic picture of regular and chaotic motion side by side (issue 12).

The bundled ``double_pendulum`` (m1 = m2 = 1, l1 = l2 = 1, g = 9.81; angles from the downward
vertical; seed 002_485a91571cac8ced.txt §23.8) has, in its two angles, the energy
h = θ̇1² + cos(θ1 − θ2) θ̇1 θ̇2 + ½ θ̇2² − g (2 cos θ1 + cos θ2). Every start lies on the section
θ1 = 0 with θ̇1 > 0, at the energy :data:`ENERGY`: θ2 and θ̇2 are chosen on a line of the
section and θ̇1 solves h = ENERGY. `lagsim sweep` runs them (``--table``) with ``--section theta1
--section-direction up`` and saves each run's crossings; `lagsim plot --kind poincare` draws
(θ2, θ̇2) of all of them on one figure.

Usage: ``python docs/poincare.py [--t-end T] [OUTFILE]`` (default 250 s and
docs/img/double_pendulum_poincare.png).
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

from lagsim.cli import main as lagsim_main

G = 9.81
ENERGY = -15.0
"""Between the rest energy −3g and −g, where the second rod can turn over: regular islands in a
chaotic sea."""
IMG = Path(__file__).resolve().parent / "img" / "double_pendulum_poincare.png"


def starts(count: int = 30) -> list[tuple[float, float, float]]:
    """(θ2, θ̇1, θ̇2) at θ1 = 0 on the energy surface: θ2 across the allowed range, θ̇2 = 0 and
    ±1.5, θ̇1 > 0 the larger root of θ̇1² + cos θ2 θ̇2 θ̇1 + ½θ̇2² − g(2 + cos θ2) − E = 0."""
    out = []
    for rate in (0.0, 1.5, -1.5):
        for k in range(count // 3):
            theta2 = -2.0 + 4.0 * (k + 0.5) / (count // 3)
            c = math.cos(theta2)
            const = 0.5 * rate**2 - G * (2 + c) - ENERGY
            disc = (c * rate) ** 2 - 4 * const
            if disc > 0:
                out.append((theta2, (-c * rate + math.sqrt(disc)) / 2, rate))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(IMG))
    parser.add_argument("--t-end", default="250")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "starts.csv"
        table.write_text("theta1,theta2,theta1_dot,theta2_dot\n" + "".join(
            f"0,{a!r},{b!r},{c!r}\n" for a, b, c in starts()))
        runs = Path(tmp) / "sections"
        lagsim_main(["sweep", "double_pendulum", "--table", str(table), "--section", "theta1",
                     "--section-direction", "up", "--t-end", args.t_end, "--rtol", "1e-9",
                     "--atol", "1e-9", "--save-trajectories", str(runs), "-o",
                     str(Path(tmp) / "summary.csv")], standalone_mode=False)
        lagsim_main(["plot", str(runs), "--kind", "poincare", "--x", "theta2", "--y",
                     "theta2_dot", "--dpi", "100", "--title",
                     f"double pendulum, section θ1 = 0 (θ̇1 > 0), energy {ENERGY:g}", "-o",
                     args.out], standalone_mode=False)


if __name__ == "__main__":
    main()
