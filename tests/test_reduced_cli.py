"""``lagsim simulate --formulation reduced`` through the CLI against ``--formulation index1``
(issue 16 §1–§3, issue 8 §4).

Both formulations integrate the same motion (seed 002 §23.5: minimal coordinates; seed 003: the
augmented index-1 system), so every CSV column must agree. Runs use --rtol/--atol 1e-13, where
the two differ by at most about 2e-10 of each column's scale over 10 s (measured; at 1e-12 a
pendulum thrown over the top differs by 1.2e-9); the tests allow 1e-9 of the scale,
max(1, max |column|). Residual columns are left out: they measure each
formulation's own drift, not the motion.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from inline_systems import CUSP
from reference import exact

from lagsim.cli import main

ROOT = Path(__file__).resolve().parents[1]

TIGHT = ("--rtol", "1e-13", "--atol", "1e-13")

BRANCH = """name: branch
parameters: {k: 1.0}
coordinates: [a, x]
kinetic: 1/2*a_dot**2 + 1/2*x_dot**2
potential: k*x + 1/2*a**2
constraints:
  - name: c
    holonomic: cos(x) - 0.5*sin(a) - 0.2
initial: {a: 0.1, x: -1.3114618315090418}
"""

BEAD = """name: bead_on_spun_wire
description: a bead on a straight wire spun at w about the origin, y cos(wt) = x sin(wt)
parameters: {m: 1.0, w: 1.0}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - name: wire
    holonomic: y*cos(w*t) - x*sin(w*t)
initial: {x: 1.0, y: 0.0, x_dot: 0.0, y_dot: 1.0}
"""

TRANSCENDENTAL = """name: transcendental
coordinates: [a1, y]
kinetic: 1/2*a1_dot**2 + 1/2*y_dot**2
potential: 1/2*a1**2
constraints:
  - name: c
    holonomic: 0.766*sin(y) - 0.2297*sin(2*a1)*cos(y) + 1.159*y*cos(y/2)
initial: {a1: 0.5, y: 0.1}
"""


REDUNDANT = """name: rod_twice
parameters: {m: 1.0, g: 9.81, l: 1.0}
coordinates: [x, y]
masses: {bob: {mass: m, position: [x, y]}}
gravity: [0, -g]
constraints:
  - {name: rod, holonomic: x**2 + y**2 - l**2}
  - {name: rod2, holonomic: sqrt(x**2 + y**2) - l}
initial: {x: 0.5, y: -0.8660254037844386}
"""


def _write(tmp_path: Path, text: str, name: str = "system.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def simulate(tmp_path: Path, system: str, formulation: str, *flags: str
             ) -> tuple[dict[str, np.ndarray], str]:
    """The CSV columns of one CLI run and its stderr; the run must succeed."""
    out = tmp_path / f"{formulation}.csv"
    result = CliRunner().invoke(main, ["simulate", system, "--formulation", formulation,
                                       "-o", str(out), *flags])
    assert result.exit_code == 0, result.output
    data = np.genfromtxt(out, delimiter=",", names=True)
    return {name: data[name] for name in data.dtype.names}, result.stderr


def assert_agree(a: dict[str, np.ndarray], b: dict[str, np.ndarray], tol: float = 1e-9) -> None:
    assert list(a) == list(b)
    for name in a:
        if name.startswith("residual"):
            continue
        scale = max(1.0, float(np.abs(b[name]).max()))
        diff = float(np.abs(a[name] - b[name]).max())
        assert diff <= tol * scale, (name, diff, scale)


def compare(tmp_path: Path, system: str, *flags: str) -> tuple[dict[str, np.ndarray], str]:
    reduced, stderr = simulate(tmp_path, system, "reduced", *TIGHT, *flags)
    index1, _ = simulate(tmp_path, system, "index1", *TIGHT, *flags)
    assert_agree(reduced, index1)
    return reduced, stderr


@pytest.mark.parametrize("x0", [-1.3114618315090418, 1.3114618315090418,
                                -1.3114618315090418 + 2 * math.pi])
def test_branch_through_the_consistent_start(tmp_path, x0):
    """Issue 16 §1: x = ±acos(0.5 sin a + 0.2) (+ 2πk); the branch kept passes through the
    consistent start (x = ∓1.3168 … after correcting a and x), on either side and one turn
    further; before the fix the run started at x = +1.3168 whatever the sign of x0."""
    system = _write(tmp_path, BRANCH)
    reduced, stderr = compare(tmp_path, system, "--init", f"x={x0!r}")
    assert "numerically" not in stderr
    assert abs(reduced["x"][0] - x0) < 0.01
    assert math.cos(reduced["x"][0]) - 0.5 * math.sin(reduced["a"][0]) - 0.2 == pytest.approx(
        0.0, abs=1e-14)


def test_square_root_branch_above_the_pivot(tmp_path):
    """y = +√(ℓ² − x²) for a pendulum started above the pivot, thrown over the top: the root
    through the start is kept, and the run follows index1 through the switches of partition."""
    system = str(ROOT / "systems" / "pendulum_natural.yaml")
    reduced, stderr = compare(tmp_path, system, "--init", "x=0.6", "--init", "y=0.8",
                              "--init", "x_dot=-4", "--init", "y_dot=3")
    assert "numerically" not in stderr
    assert reduced["y"][0] == pytest.approx(0.8, abs=1e-15)


def test_moving_pivot_started_at_t2_starts_where_index1_does(tmp_path):
    """Issue 8 §4: the branch of the rheonomic constraint is chosen at t_start = 2, from the
    consistent start there. With the pivot at A sin(w t) = 0.45 at t = 2, the bob at x = 1.3,
    y = 0.3 is above it; at t = 0 no real y fits x = 1.3, and the old code, which chose the
    branch at t = 0 from the file's values, started at y = −0.334 instead of +0.334."""
    system = str(ROOT / "systems" / "moving_pivot_pendulum.yaml")
    flags = ("--set", "A=0.5", "--set", "w=1", "--init", "x=1.3", "--init", "y=0.3",
             "--t-start", "2", "--t-end", "12")
    reduced, _ = compare(tmp_path, system, *flags)
    index1, _ = simulate(tmp_path, system, "index1", *flags, "--samples", "2")
    assert index1["y"][0] == pytest.approx(0.33444612426384945, rel=1e-12)
    for name in ("x", "y", "x_dot", "y_dot"):
        assert reduced[name][0] == pytest.approx(index1[name][0], abs=1e-12)


def test_natural_pendulum_released_horizontally(tmp_path):
    """Issue 8 §4: at x = ℓ, y = 0 the pivot ∂φ/∂y vanishes; pivoting eliminates x instead (it
    used to fail with "the mass matrix is not finite at the start"), and the partition switches
    on the way down; the bob at rest at the horizontal has h = 0 throughout."""
    system = str(ROOT / "systems" / "pendulum_natural.yaml")
    reduced, stderr = compare(tmp_path, system, "--init", "x=1", "--init", "y=0")
    assert "switching to eliminating y" in stderr
    assert np.abs(reduced["energy"]).max() < 1e-9


def test_natural_pendulum_swings_over_the_top(tmp_path):
    """Issue 16 §2: from x = 0, y = −1 with ẋ = 5 the bob passes x = ℓ and rises; at t = 0.5
    y = +0.189 (the old run fell back to −0.054), and h = ½·25 − 9.81 = 2.69 stays to 1e-6."""
    system = str(ROOT / "systems" / "pendulum_natural.yaml")
    reduced, _ = compare(tmp_path, system, "--init", "x=0", "--init", "y=-1",
                         "--init", "x_dot=5")
    half = int(np.argmin(np.abs(reduced["t"] - 0.5)))
    assert reduced["y"][half] == pytest.approx(0.189, abs=1e-3)
    assert np.abs(reduced["energy"] - 2.69).max() < 1e-6


def test_slider_crank_three_constraints(tmp_path):
    """Three constraints, one degree of freedom: complete pivoting pairs rod–x2, crank–y1,
    rail–y2 at the start (crank upright) and switches as the crank turns; the run follows index1
    (largest difference measured 6.4e-10 of a column's scale, in λ_crank)."""
    system = str(ROOT / "systems" / "slider_crank.yaml")
    reduced, stderr = compare(tmp_path, system)
    assert "numerically" not in stderr
    assert "switching to eliminating" in stderr
    assert np.abs(reduced["y2"]).max() == 0.0


@pytest.mark.slow
def test_natural_pendulum_for_2000_seconds(tmp_path):
    """Issue 8 §4: 2000 s (about 790 periods, 1600 switches of partition) from the horizontal.
    At rtol 1e-12 the phase error of DOP853 grows with the number of periods; measured against
    the exact elliptic solution (tests/reference/exact.py, seed 001 Ex. 10.5) reduced is off by
    3e-6 and index1 by 3e-7 at t = 2000. The bound 2e-5 on positions (2e-5·max|q̇| on velocities)
    leaves a factor 7; h = 0 holds to 1e-6."""
    system = str(ROOT / "systems" / "pendulum_natural.yaml")
    flags = ("--init", "x=1", "--init", "y=0", "--t-end", "2000", "--samples", "5",
             "--rtol", "1e-12", "--atol", "1e-12")
    reduced, _ = simulate(tmp_path, system, "reduced", *flags)
    index1, _ = simulate(tmp_path, system, "index1", *flags)
    theta, w = exact.angle(reduced["t"], math.pi / 2)
    exact_q = {"x": np.sin(theta), "y": -np.cos(theta),
               "x_dot": np.cos(theta) * w, "y_dot": np.sin(theta) * w}
    speed = math.sqrt(2 * 9.81)
    for name, value in exact_q.items():
        tol = 2e-5 * (speed if name.endswith("_dot") else 1.0)
        assert np.abs(reduced[name] - value).max() < tol, name
        assert np.abs(reduced[name] - index1[name]).max() < tol, name
    assert np.abs(reduced["energy"]).max() < 1e-6


def test_bead_on_a_spun_wire_switches_partition(tmp_path):
    """Issue 16 §2: y = x·tan(ωt) is singular at ωt = π/2; the partition switches to x = y·cot(ωt)
    and back, and the run follows index1; on the wire r̈ = ω²r, so r = cosh t (ṙ(0) = 0)."""
    system = _write(tmp_path, BEAD)
    reduced, stderr = compare(tmp_path, system)
    assert "switching to eliminating x" in stderr
    r = np.hypot(reduced["x"], reduced["y"])
    np.testing.assert_allclose(r, np.cosh(reduced["t"]), rtol=1e-8)


def test_a_branch_point_no_partition_passes_stops_with_the_time(tmp_path):
    """y² = x³ has a cusp at the origin where φ_q = 0: no partition continues, so the run stops
    with exit 1, the time and the advice to use index1 (never a silent wrong sheet)."""
    system = _write(tmp_path, CUSP)
    result = CliRunner().invoke(main, ["simulate", system, "--formulation", "reduced",
                                       "-o", str(tmp_path / "out.csv")])
    assert result.exit_code == 1
    assert "lagsim: error: at t = 0.8" in result.stderr
    assert "branch point" in result.stderr and "use --formulation index1" in result.stderr
    assert "the integrator failed" not in result.stderr


def test_redundant_constraint_is_named(tmp_path):
    """Issue 16 §3: rod2 = √(x² + y²) − ℓ repeats rod; one degree of freedom is left, and the
    message says which constraint is redundant (it used to say rod2 "cannot be solved"); the
    check of the requested combination names it before any reduction is tried."""
    system = _write(tmp_path, REDUNDANT)
    result = CliRunner().invoke(main, ["simulate", system, "--formulation", "reduced",
                                       "-o", str(tmp_path / "out.csv")])
    assert result.exit_code == 2
    assert "the rows of A are dependent at the start (rod2 repeats earlier constraints)" \
        in result.stderr
    assert "use --formulation udwadia-kalaba" in result.stderr


def test_transcendental_constraint_does_not_hang(tmp_path):
    """Issue 16 §3: sympy.solve on this constraint runs for minutes; the symbolic reduction
    stops after its budget and the run integrates the partitioned coordinates numerically (said
    on stderr), agreeing with index1; derive prints the partitioned form within its own budget
    (issue 16 §4). Real processes, each under a time limit, so a hang fails the test instead of
    stalling the suite."""
    system = _write(tmp_path, TRANSCENDENTAL)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = {}
    for formulation in ("reduced", "index1"):
        out = tmp_path / f"{formulation}.csv"
        proc = subprocess.run(
            [sys.executable, "-m", "lagsim", "simulate", system, "--formulation", formulation,
             *TIGHT, "-o", str(out)], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        data = np.genfromtxt(out, delimiter=",", names=True)
        runs[formulation] = ({n: data[n] for n in data.dtype.names}, proc.stderr)
    assert "the symbolic reduction did not finish within 3 s" in runs["reduced"][1]
    assert "solving the constraints for y numerically" in runs["reduced"][1]
    assert_agree(runs["reduced"][0], runs["index1"][0])
    proc = subprocess.run([sys.executable, "-m", "lagsim", "derive", system, "--form", "reduced"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "reduced coordinates, partitioned" in proc.stdout
    assert "did not finish within derive's budget of 0.3 s CPU" in proc.stdout
