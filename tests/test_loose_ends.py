"""Loose ends of issues 29 and 32 left by the merged fixes: expansions of user expressions that
bypassed the bound of :mod:`lagsim.symbolic.expansion`; equilibria and modes of a V-shaped well;
plots of values near the largest double; a quadrature that did not converge in `action`; the bounded
reader of `sweep --table`; workers of another lagsim version; `simulate --formulation reduced` with
an integrable velocity constraint."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BOMB_2 = "(x + y + 1)**100*(x - y + 2)**100"
"""26 million products multiplied out (lagsim.symbolic.expansion's module docstring)."""
BOMB_4 = "(x + y + z + w + 1)**100"
"""4.6 million terms multiplied out."""


def _system(coordinates: str, potential: str = "0", constraint: str = "") -> str:
    names = [c.strip() for c in coordinates.split(",")]
    kinetic = " + ".join(f"{c}_dot**2" for c in names)
    text = (f"name: bomb\nparameters: {{m: 1.0}}\ncoordinates: [{coordinates}]\n"
            f"kinetic: 1/2*m*({kinetic})\npotential: {potential}\n")
    if constraint:
        text += f"constraints:\n  - name: c\n    {constraint}\n"
    return text


def _lagsim(tmp_path, text: str, *args: str, timeout: float = 10.0
            ) -> subprocess.CompletedProcess:
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "lagsim", *args, str(path)], text=True,
                          capture_output=True, timeout=timeout, env=os.environ)


def _clean(run: subprocess.CompletedProcess) -> None:
    assert run.returncode in (0, 2), run.stderr
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    if run.returncode == 2:
        assert run.stderr.count("lagsim: error:") == 1, run.stderr


BOMBS = {
    "potential 2": _system("x, y", BOMB_2),
    "potential 4": _system("x, y, z, w", BOMB_4),
    "velocity 2": _system("x, y, z", constraint=f"velocity: {BOMB_2}*x_dot + y_dot"),
    "velocity 4": _system("x, y, z, w", constraint=f"velocity: {BOMB_4}*x_dot + y_dot"),
    "velocity offset": _system("x, y", constraint=f"velocity: x_dot + {BOMB_2}"),
    "holonomic": _system("x, y, z", "z", f"holonomic: z - {BOMB_2}"),
}


@pytest.mark.parametrize("command", [["check"], ["equilibria"], ["derive", "--form", "reduced"]])
@pytest.mark.parametrize("name", list(BOMBS))
def test_expansion_bombs_finish(tmp_path, name, command):
    """Every command that reads a user's expressions multiplies out through the bounded
    helpers: each finishes within 10 s (the velocity constraints took minutes in `check`'s
    Frobenius test and its search for the integral, the offset in `equilibria`'s rest
    equations), with a report or one located error."""
    _clean(_lagsim(tmp_path, BOMBS[name], *command))


def test_check_decides_a_bomb_row_numerically(tmp_path):
    """ω = a dx + dy with a = (x + y + z + w + 1)¹⁰⁰ is nonholonomic (ω ∧ dω has the
    component ω_y C_zx = ∂a/∂z, not 0); ω ∧ dω multiplied out passes the limit, so the numeric
    test decides, and the report says which limit was hit."""
    run = _lagsim(tmp_path, BOMBS["velocity 4"], "check")
    _clean(run)
    assert "c: nonholonomic [ω ∧ dω = 0: too large;" in run.stdout, run.stdout
    assert "expansion limit" in run.stdout
    assert run.stderr.count("expansion limit of 50,000 terms") == 1, run.stderr


def test_check_integrable_power_row(tmp_path):
    """(x + y + 1)⁶⁰ dx + dy on the plane (x, y) is integrable (every 1-form in two
    dimensions is, Frobenius): `check` says so within 10 s, where the search for its integral
    with SymPy's gcd and the integrating factors 1/ω_i² took minutes."""
    run = _lagsim(tmp_path, _system("x, y", constraint="velocity: (x+y+1)**60*x_dot + y_dot"),
                  "check")
    _clean(run)
    assert "c: holonomic (integrable) [ω ∧ dω = 0: zero;" in run.stdout, run.stdout


V_WELL = """\
name: v_well
parameters: {m: 1.0, k: 2.0}
coordinates: [x]
kinetic: 1/2*m*x_dot**2
potential: k*Abs(x)
initial: {x: 0.5, x_dot: 0}
"""
"""A V-shaped well: the force −k sign(x) has derivative 0 wherever it has one."""


def test_equilibria_of_a_v_well_say_newton_cannot_move_x(tmp_path):
    """x does appear in the rest equation −k sign(x) = 0 (it was reported as appearing in none,
    from the zero Jacobian column); the report says Newton's method cannot move it and does
    not claim that the rest equations have no solution: x = 0, where the argument of Abs
    vanishes, is a start, and is found, its stability undecided."""
    run = _lagsim(tmp_path, V_WELL, "equilibria")
    _clean(run)
    assert "appears in no rest equation" not in run.stdout
    assert ("note: x enters the rest equations only through non-smooth terms whose derivative "
            "is 0 where it exists") in run.stdout, run.stdout
    assert "(1 found by Newton" in run.stdout, run.stdout
    assert "1. undetermined (not differentiable in x: no linearization) (residual 0.0e+00)\n" \
           "   x = 0\n" in run.stdout, run.stdout
    assert "has no solution near any start" not in run.stdout
    data = _lagsim(tmp_path, V_WELL, "equilibria", "--format", "json")
    report = json.loads(data.stdout)
    assert report["free_coordinates"] == [] and report["non_smooth_coordinates"] == ["x"]


@pytest.mark.parametrize("at", [[], ["--at", "x=0"]])
def test_modes_of_a_v_well_refuse_clearly(tmp_path, at):
    """There are no small oscillations in a V-shaped well (the period grows as √amplitude):
    `modes` refuses in one located line, also at x = 0 where the residual −k sign(0) is 0 and
    the linearization would have said "neutral" with K = 0."""
    run = _lagsim(tmp_path, V_WELL, "modes", *at)
    assert run.returncode == 2, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lagsim: error: "), run.stderr
    assert "no small oscillations to compute: x enters the rest equations only through" in lines[0]
    assert run.stdout == ""


HUGE_CSV = ("t,x,x_dot,energy\n0,1e308,0,1e308\n1e308,-1e308,1,-1e308\n"
            "1.7e308,1.7e308,-1.7e308,1.5e308\n")
"""Values near ±1e308: matplotlib's tick locator overflowed on the difference of the ends."""


@pytest.mark.parametrize("kind", ["overview", "time", "phase", "energy"])
def test_plot_draws_values_near_the_largest_double(tmp_path, kind):
    """`plot` draws a CSV whose values reach 1.7e308 (it ended in "internal error (ValueError:
    arange ...)"): the axes show the values divided by a power of ten (below 10 once divided)
    and say so in their labels (1e308 for x)."""
    from lagsim.output.io import read_csv
    from lagsim.viz.figures import make_figure

    source = tmp_path / "huge.csv"
    source.write_text(HUGE_CSV)
    run = subprocess.run([sys.executable, "-m", "lagsim", "plot", str(source), "--kind", kind,
                          "-o", str(tmp_path / "huge.png")], text=True, capture_output=True,
                         timeout=60)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert (tmp_path / "huge.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig = make_figure(read_csv(str(source)), kind=kind)
    fig.canvas.draw()
    labels = [ax.get_ylabel() for ax in fig.axes] + [ax.get_xlabel() for ax in fig.axes]
    assert any(label.endswith(" / 1e308") for label in labels), labels
    for ax in fig.axes:
        for line in ax.lines:
            y = np.asarray(line.get_ydata(), dtype=float)
            y = y[np.isfinite(y)]
            if ax.get_yscale() == "linear" and y.size:
                assert np.max(np.abs(y)) < 10.0


OSCILLATOR = """\
name: osc
parameters: {m: 1.0, k: 1.0}
coordinates: [x]
kinetic: 1/2*m*x_dot**2
potential: 1/2*k*x**2
"""


def test_action_flags_a_quadrature_that_did_not_converge(tmp_path):
    """Along x = sin(e^{4t}) e^{sin 10t} on [0, 3] (a chirp up to 4e5 rad/s) the quadrature
    stops at its 200 subintervals with an error estimate near 10 % of S: the report says so in
    one note and flags the value, where scipy's IntegrationWarning went to stderr as one long
    line with its class name, beside a value printed as if it were good."""
    from click.testing import CliRunner

    from lagsim.cli import main

    source = tmp_path / "osc.yaml"
    source.write_text(OSCILLATOR)
    path = "x=sin(exp(4*t))*exp(sin(10*t))"
    result = CliRunner().invoke(main, ["action", str(source), "--path", path, "--t-end", "3"])
    assert result.exit_code == 0, result.output
    assert "IntegrationWarning" not in result.stderr and "warning" not in result.stderr
    lines = result.stdout.splitlines()
    value = next(line for line in lines if line.startswith("S ≈ "))
    assert value.endswith("adaptive Gauss–Kronrod quadrature, not converged: uncertain)")
    notes = [line for line in lines if "did not converge" in line]
    assert notes == [next(line for line in lines if line.startswith(
        "note: the quadrature did not converge (the maximum number of subdivisions (200) has "
        "been achieved): S is uncertain, its estimated error is "))], lines
    from lagsim.analysis.action import path_action
    from lagsim.spec.system import parse_spec
    from lagsim.symbolic.model import build_model

    spec = parse_spec(OSCILLATOR, "osc.yaml")
    data = path_action(spec, build_model(spec), path, 0.0, 3.0, exact_budget=0).to_dict()
    assert data["converged"] is False and data["error_estimate"] > 1e-3 * abs(data["S"])


def test_sweep_table_is_read_within_limits(tmp_path):
    """`sweep --table` reads through the bounded CSV reader of lagsim.output.io: past the limits it
    is given (here 4 lines, 3 cells) it stops at the line that passes them, where it read
    the whole file into a list first."""
    from lagsim.errors import InputError
    from lagsim.output.io import CsvLimits
    from lagsim.sweep import core as sw

    table = tmp_path / "runs.csv"
    table.write_text("m\n1\n2\n3\n4\n5\n6\n")
    assert sw.table_axis(str(table)).listed == tuple((float(k),) for k in range(1, 7))
    with pytest.raises(InputError) as lines:
        sw.table_axis(str(table), CsvLimits(lines=4, lines_are="lines (a header and 3 runs)"))
    assert str(lines.value) == (f"{table}:5: more than 4 lines; lagsim reads a CSV of at most "
                                "4 lines (a header and 3 runs)")
    with pytest.raises(InputError) as cells:
        sw.table_axis(str(table), CsvLimits(cells=3))
    assert str(cells.value) == (f"{table}:4: more than 3 cells; lagsim reads a CSV of at most "
                                "3 numbers")


def test_sweep_table_with_a_line_past_the_limit(tmp_path):
    """A table line of a million and one characters is refused in one located line (it ended
    in "internal error (Error: field larger than field limit (131072))")."""
    table = tmp_path / "wide.csv"
    table.write_text("m\n" + "1" * 1_000_001 + "\n")
    run = subprocess.run([sys.executable, "-m", "lagsim", "sweep", "pendulum", "--table",
                          str(table)], text=True, capture_output=True, timeout=60)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == (f"lagsim: error: {table}:2: a line of more than 1,000,000 "
                          "characters; lagsim reads a CSV of at most 1,000,000 characters a "
                          "line\n")


def test_sweep_refuses_workers_of_another_lagsim(tmp_path, monkeypatch):
    """Workers that import another lagsim (here a copy of this one whose version says 0.0.9)
    made rows of another layout, and the sweep ended in an internal error; it now asks each
    worker its lagsim version and job format before sending any run, and refuses in one line
    naming both versions."""
    from distributed import Client
    from test_sweep_trust import _cluster

    import lagsim
    from lagsim.sweep.core import JOB_FORMAT

    fake = tmp_path / "fake"
    shutil.copytree(Path(lagsim.__file__).parent, fake / "lagsim",
                    ignore=shutil.ignore_patterns("__pycache__"))
    init = fake / "lagsim" / "__init__.py"
    init.write_text(init.read_text().replace(f'__version__ = "{lagsim.__version__}"',
                                             '__version__ = "0.0.9"'))
    folder = tmp_path / "workers"
    folder.mkdir()
    with monkeypatch.context() as patched:
        patched.setenv("PYTHONPATH", str(fake))
        cluster = _cluster(folder, 1)
        address = cluster.__enter__()
    try:
        with Client(address, timeout=30) as client:
            client.wait_for_workers(1, timeout=60)
        run = subprocess.run([sys.executable, "-m", "lagsim", "sweep", "pendulum", "--values",
                              "theta=0.1,0.2,0.3", "--t-end", "0.2", "--samples", "3",
                              "--scheduler", address], text=True, capture_output=True,
                             timeout=120)
    finally:
        cluster.__exit__(None, None, None)
    assert run.returncode == 2 and run.stdout == "", run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("lagsim: error: --scheduler: the worker tcp://127.0.0.1:")
    assert lines[0].endswith(
        f" of {address} runs lagsim 0.0.9 (job format {JOB_FORMAT}), and this client lagsim "
        f"{lagsim.__version__} (job format {JOB_FORMAT}); install the same lagsim on the "
        "workers as here, and restart them")


ROLLING_DISK = """\
name: disk
parameters: {m: 2.0, R: 0.5, tau: 0.3}
coordinates: [x, phi]
masses:
  disk:
    mass: m
    position: [x, 0]
    inertia: 1/2*m*R**2
    angle: phi
forces:
  phi: tau
constraints:
  - name: roll
    velocity: x_dot - R*phi_dot
initial: {x: 0, phi: 0, x_dot: 0, phi_dot: 0}
"""
"""A uniform disk rolling on a line under a torque τ: x = Rφ, so (m + I/R²) ẍ = τ/R with
I = mR²/2, i.e. (3/2) m ẍ = τ/R; the ground's push is λ = m ẍ = 2τ/(3R)."""


def test_simulate_reduced_eliminates_an_integrable_velocity_constraint(tmp_path):
    """`simulate --formulation reduced` refused x_dot − R φ_dot = 0 as a velocity constraint,
    while `derive --form reduced` eliminates it through its integral x − Rφ = 0: simulate now
    integrates it the same way, says so, and follows the closed form x = τ t²/(3 m R)."""
    from click.testing import CliRunner

    from lagsim.cli import main

    source = tmp_path / "disk.yaml"
    source.write_text(ROLLING_DISK)
    result = CliRunner().invoke(main, ["simulate", str(source), "--formulation", "reduced",
                                       "--t-end", "2", "--samples", "21"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ("lagsim: reduced: velocity constraint 'roll' integrates to the "
                             "holonomic constraint x - R*phi = 0.0 (Frobenius' test, as `lagsim "
                             "check` finds), which eliminates a coordinate\n")
    data = np.genfromtxt(result.stdout.splitlines(), delimiter=",", names=True)
    m, R, tau = 2.0, 0.5, 0.3
    t = data["t"]
    assert t[-1] == 2.0
    np.testing.assert_allclose(data["x"], tau * t**2 / (3 * m * R), rtol=0, atol=1e-9)
    np.testing.assert_allclose(data["x_dot"], 2 * tau * t / (3 * m * R), rtol=0, atol=1e-9)
    np.testing.assert_allclose(data["phi"], data["x"] / R, rtol=0, atol=1e-12)
    np.testing.assert_allclose(data["lambda_roll"], 2 * tau / (3 * R), rtol=1e-9)


def test_an_equilibrium_on_the_kink_is_isolated_and_undecided(tmp_path):
    """k|x| + y²/2 started at x = 0: the equilibrium (0, 0) is found from that start; x's
    zero Jacobian column made it "a 1-dimensional family" and "neutral" (K = 0 in x), where it
    is isolated and its stability is not a linearization's to decide."""
    text = V_WELL.replace("coordinates: [x]", "coordinates: [x, y]").replace(
        "kinetic: 1/2*m*x_dot**2", "kinetic: 1/2*m*(x_dot**2 + y_dot**2)").replace(
        "potential: k*Abs(x)", "potential: k*Abs(x) + y**2/2").replace(
        "initial: {x: 0.5, x_dot: 0}", "initial: {x: 0, y: 0.3}")
    run = _lagsim(tmp_path, text, "equilibria", "--format", "json")
    _clean(run)
    (found,) = json.loads(run.stdout)["equilibria"]
    assert found["q"] == {"x": 0.0, "y": 0.0}
    assert found["family_dimension"] == 0
    assert found["stability"] == "undetermined (not differentiable in x: no linearization)"
