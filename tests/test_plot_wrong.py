"""Pictures and tables that mislead (issue 29) and user text read as mathtext (issue 32): a
path drawn with other parameters than the run's, a physical energy change called drift, a heat
map of a swept column over itself, ``$`` in user text, and the matrix form's C(q, q̇)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from lagsim.cli import main

DAMPED = """\
name: damped
parameters: {m: 1.0, k: 4.0, c: 0.3}
coordinates: [x]
kinetic: 1/2*m*x_dot**2
potential: 1/2*k*x**2
dissipation: 1/2*c*x_dot**2
initial: {x: 1.0, x_dot: 0.0}
simulate: {t_end: 10}
"""


def plotted(monkeypatch, *args: str):
    """(result, figure) of `lagsim plot ARGS -o unused.png`, the figure caught at save_figure."""
    from lagsim.viz import figures as plotting

    made = {}
    monkeypatch.setattr(plotting, "save_figure", lambda fig, target, dpi: made.update(fig=fig))
    result = CliRunner().invoke(main, ["plot", *args, "-o", "unused.png"])
    return result, made.get("fig")


def run_csv(tmp_path, system: str, *args: str) -> str:
    out = tmp_path / "run.csv"
    result = CliRunner().invoke(main, ["simulate", system, *args, "-o", str(out)])
    assert result.exit_code == 0, result.output
    return str(out)


# --- 1. the parameters of the run, not the file's -----------------------------------------


def test_a_path_of_a_run_with_other_parameters_is_refused_with_a_hint(monkeypatch, tmp_path):
    """pendulum run with l = 2: h = ½ m l² θ̇² − m g l cos θ differs from the file's (l = 1) by a
    factor 2, so the CSV's energy column gives the mismatch away; exit 2, one line naming --set."""
    csv = run_csv(tmp_path, "pendulum", "--set", "l=2", "--t-end", "1", "--samples", "51")
    result, fig = plotted(monkeypatch, csv, "--kind", "path", "--system", "pendulum")
    assert result.exit_code == 2 and fig is None
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"lagsim: error: {csv}: the energy column is not that of "
                           "system 'pendulum'")
    assert "--set NAME=VALUE" in line and "l=1" in line


def test_the_path_is_drawn_at_the_run_s_radius_with_set(monkeypatch, tmp_path):
    csv = run_csv(tmp_path, "pendulum", "--set", "l=2", "--t-end", "1", "--samples", "51")
    result, fig = plotted(monkeypatch, csv, "--kind", "path", "--system", "pendulum",
                          "--set", "l=2")
    assert result.exit_code == 0, result.output
    (ax,) = fig.axes
    x, y = ax.lines[0].get_data()
    assert len(x) == 51
    assert np.hypot(x, y) == pytest.approx(2.0, abs=1e-12)


def test_a_residual_column_gives_a_constrained_run_away(monkeypatch, tmp_path):
    """pendulum_natural's h = ½ m (ẋ² + ẏ²) + m g y has no l: the rod's residual
    x² + y² − l² is what differs (0 in the run, 1 − 4 = −3 with the file's l = 1)."""
    csv = run_csv(tmp_path, "pendulum_natural", "--set", "l=2", "--t-end", "0.5",
                  "--samples", "11")
    result = CliRunner().invoke(main, ["animate", csv, "--system", "pendulum_natural",
                                       "-o", str(tmp_path / "a.gif"), "--fps", "2"])
    assert result.exit_code == 2
    assert "residual_rod column is not that of system 'pendulum_natural'" in result.output
    assert "with --set NAME=VALUE" in result.output
    ok = CliRunner().invoke(main, ["animate", csv, "--system", "pendulum_natural", "--set",
                                   "l=2", "-o", str(tmp_path / "a.gif"), "--fps", "2"])
    assert ok.exit_code == 0, ok.output


def test_a_csv_without_energy_or_residuals_is_drawn_with_a_note(monkeypatch, tmp_path):
    csv = tmp_path / "bare.csv"
    csv.write_text("t,theta,theta_dot\n0,0.5,0\n0.1,0.45,-0.9\n")
    result, fig = plotted(monkeypatch, str(csv), "--kind", "path", "--system", "pendulum")
    assert result.exit_code == 0 and fig is not None
    assert ("has no energy or residual column to check that system 'pendulum' has the run's "
            "parameter values") in result.output


# --- 2. the energy balance of a system that does not conserve h ---------------------------


def test_a_damped_oscillator_shows_the_energy_balance_not_a_drift(monkeypatch, tmp_path):
    """m ẍ = −k x − c ẋ from x = 1 at rest: h = ½ m ẋ² + ½ k x² falls from 2 by O(1) over
    t = 10, and dh/dt = −c ẋ² (the force's power) integrates to W with h − h0 − W within the
    integration's and quadrature's error, 1e-6 here (rtol 1e-9 and 1001 samples give ~1e-8)."""
    system = tmp_path / "damped.yaml"
    system.write_text(DAMPED)
    result, fig = plotted(monkeypatch, str(system))
    assert result.exit_code == 0, result.output
    (ax,) = [a for a in fig.axes if a.get_label() == "energy balance"]
    assert "drift" not in ax.get_ylabel() and ax.get_yscale() == "linear"
    change, work, rest = (line.get_ydata() for line in ax.lines)
    assert float(np.ptp(change)) > 1.0
    assert np.max(np.abs(change - work)) < 1e-6
    assert np.max(np.abs(rest)) < 1e-6
    assert not any(a.get_label() == "energy drift" for a in fig.axes)


def test_a_driven_csv_with_its_system_gets_the_balance_and_a_conservative_one_the_drift(
        monkeypatch, tmp_path):
    csv = run_csv(tmp_path, "driven_damped_pendulum", "--t-end", "20")
    result, fig = plotted(monkeypatch, csv, "--system", "driven_damped_pendulum",
                          "--kind", "energy")
    assert result.exit_code == 0, result.output
    energy, balance = fig.axes
    assert balance.get_label() == "energy balance" and balance.get_yscale() == "log"
    assert float(np.max(balance.lines[0].get_ydata())) < 1e-6
    result, fig = plotted(monkeypatch, "pendulum", "--t-end", "2")
    assert [a.get_label() for a in fig.axes][-1] == "energy drift"


# --- 3. a swept column is no response --------------------------------------------------------


def test_a_swept_column_on_y_is_refused_not_drawn_over_itself(tmp_path):
    """A 2-D grid over theta and l: `--x theta0 --y l` drew a heat map of l coloured by l
    ("l over theta0 and l"); it names the columns the runs computed instead."""
    table = tmp_path / "two.csv"
    rows = [f"{k},{th},{l},0.1,0.2,1e-12,1e-12,nan,{th / l},"
            for k, (th, l) in enumerate((th, l) for l in (1, 2) for th in (0.1, 0.5, 1.0))]
    table.write_text("run,theta0,l,theta,theta_dot,energy_drift,energy_change,stop_time,amp,"
                     "error\n" + "\n".join(rows) + "\n")
    result = CliRunner().invoke(main, ["plot", str(table), "--x", "theta0", "--y", "l",
                                       "-o", str(tmp_path / "s.png")])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("lagsim: error: --y: --y 'l' is a swept column, an input of the "
                           "runs: drawn over --x 'theta0' it shows the grid")
    assert line.endswith("energy_change, stop_time, amp") and "theta_dot" in line
    assert not (tmp_path / "s.png").exists()
    help_text = CliRunner().invoke(main, ["plot", "--help"]).output
    assert "(time, sweep and poincare" in " ".join(help_text.split())


def test_a_table_with_an_energy_gain_and_no_drift_column_keeps_its_swept_columns():
    from lagsim.viz.sweep_figures import swept_columns

    assert swept_columns(["run", "F0", "W", "theta", "theta_dot", "energy_gain",
                          "stop_time", "error"]) == ["F0", "W"]


# --- 4. user text is shown as written, never parsed as mathtext ----------------------------


def shown(text: str) -> str:
    """What matplotlib draws for a non-usetex text: mathtext when it holds an even number of
    unescaped $ (then the raw string), else the string with each \\$ drawn as $."""
    from matplotlib import cbook

    assert not cbook.is_math_text(text), text
    return text.replace(r"\$", "$")


def test_dollars_in_names_units_titles_and_labels_are_drawn_literally(monkeypatch, tmp_path):
    """`name: "a$b$c"` and a unit `$\\frac{$` were mathtext: the second an internal error at
    savefig (exit 1). Each is written now, and the figure's texts read back as given."""
    system = tmp_path / "dollar.yaml"
    system.write_text(DAMPED.replace("name: damped", 'name: "a$b$c"').replace(
        "simulate: {t_end: 10}", 'simulate: {t_end: 1}\nunits: {x: "$\\\\frac{$"}'))
    out = tmp_path / "out.png"
    written = CliRunner().invoke(main, ["plot", str(system), "--kind", "time", "-o", str(out)])
    assert written.exit_code == 0, written.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    titled = CliRunner().invoke(main, ["plot", "pendulum", "--t-end", "0.5", "--title",
                                       "$\\frac{$", "-o", str(tmp_path / "t.svg")])
    assert titled.exit_code == 0, titled.output
    result, fig = plotted(monkeypatch, str(system), "--kind", "time")
    assert shown(fig.get_suptitle()) == "a$b$c"
    assert shown(fig.axes[0].get_ylabel()) == "x [$\\frac{$]"
    one = run_csv(tmp_path, "pendulum", "--t-end", "0.5", "--samples", "11")
    result, fig = plotted(monkeypatch, one, one, "--label", "cost $5", "--label", "or $6",
                          "--title", "$x$ and $y$")
    assert result.exit_code == 0, result.output
    assert shown(fig.get_suptitle()) == "$x$ and $y$"
    legend = fig.axes[0].get_legend()
    assert [shown(t.get_text()) for t in legend.get_texts()] == ["cost $5", "or $6"]


def test_a_malformed_formula_in_the_name_is_drawn_by_animate_and_modes(tmp_path):
    """The system's name reaches the animation's title and the mode figure's: both were an
    internal error (exit 1) at the first frame or savefig with `name: "p$\\frac{$"`."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "systems" / "pendulum.yaml").read_text()
    system = tmp_path / "p.yaml"
    system.write_text(text.replace("name: pendulum", 'name: "p$\\\\frac{$"'))
    gif = tmp_path / "p.gif"
    result = CliRunner().invoke(main, ["animate", str(system), "--t-end", "0.5", "--fps", "4",
                                       "-o", str(gif)])
    assert result.exit_code == 0, result.output
    assert gif.read_bytes()[:6] == b"GIF89a"
    png = tmp_path / "m.png"
    result = CliRunner().invoke(main, ["modes", str(system), "--at", "theta=0", "--plot",
                                       "-o", str(png)])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:4] == b"\x89PNG"


# --- 5. the matrix form's C(q, q̇) is the Christoffel one -----------------------------------


def derived(system: str, form: str) -> dict:
    import json

    result = CliRunner().invoke(main, ["derive", system, "--form", form, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("system", ["double_pendulum", "spherical_pendulum"])
def test_the_printed_coriolis_matrix_makes_mdot_minus_2c_skew_symmetric(system):
    """Spong–Hutchinson–Vidyasagar §7.3: with C_ij = Σ_k Γ_ijk q̇_k, Ṁ − 2C is skew-symmetric
    (the seed's h_ijk gave the double pendulum Ṁ − 2C = [[−cs θ̇₂, …]], not skew); and
    M q̈ + C q̇ + g − τ, built from the printed pieces, equals the lagrange form's
    d/dt ∂L/∂q̇ − ∂L/∂q − τ at random states to 1e-12."""
    import sympy

    matrix, lagrange = derived(system, "matrix"), derived(system, "lagrange")
    items = {i["label"]: i["value"] for i in matrix["items"]}
    parse = sympy.sympify
    M, C = (sympy.Matrix([[parse(e) for e in row] for row in items[k]])
            for k in ("M(q)", "C(q, q̇)"))
    g, tau = (sympy.Matrix([parse(row[0]) for row in items[k]]) for k in ("g(q)", "τ"))
    q = [sympy.Symbol(c) for c in matrix["coordinates"]]
    qd = [sympy.Symbol(v) for v in matrix["velocities"]]
    qdd = [sympy.Symbol(f"{c}_ddot") for c in matrix["coordinates"]]
    Mdot = sum((M.diff(qi) * vi for qi, vi in zip(q, qd)), sympy.zeros(len(q), len(q)))
    S = Mdot - 2 * C
    assert (S + S.T).applyfunc(lambda e: sympy.simplify(sympy.expand_trig(e))) == \
        sympy.zeros(len(q), len(q))
    assert "Christoffel form" in matrix["notes"][0]
    assert "Spong–Hutchinson–Vidyasagar" in matrix["citation"]
    rows = M * sympy.Matrix(qdd) + C * sympy.Matrix(qd) + g - tau
    equations = {i["label"]: i["value"] for i in lagrange["items"] if i["kind"] == "equation"}
    symbols = [*q, *qd, *qdd, *(sympy.Symbol(p) for p in matrix["parameters"])]
    rng = np.random.default_rng(29)
    for i, name in enumerate(matrix["coordinates"]):
        lhs, rhs = (parse(side) for side in equations[name].split(" = "))
        gap = sympy.lambdify(symbols, rows[i] - (lhs - rhs))
        for _ in range(5):
            point = rng.uniform(-2, 2, len(symbols))
            point[3 * len(q):] = np.abs(point[3 * len(q):]) + 0.5
            scale = max(1.0, abs(sympy.lambdify(symbols, lhs - rhs)(*point)))
            assert abs(gap(*point)) < 1e-12 * scale


def test_the_api_plot_checks_the_system_and_shows_the_balance():
    """lagsim.viz.figures(traj, system=...) draws with the system's parameters too: a run with l = 2
    against the file's l = 1 is an InputError naming load's keywords; a driven system gets the
    energy balance panel."""
    import lagsim

    pendulum = lagsim.load("pendulum")
    run = pendulum.simulate(t_end=0.5, samples=11, parameters={"l": 2})
    with pytest.raises(lagsim.InputError, match=r"in the system: load\(FILE, NAME=VALUE\)"):
        lagsim.plot(run, kind="path", system=pendulum)
    fig = lagsim.plot(run, kind="path", system=lagsim.load("pendulum", l=2))
    x, y = fig.axes[0].lines[0].get_data()
    assert np.hypot(x, y) == pytest.approx(2.0, abs=1e-12)
    driven = lagsim.load("driven_damped_pendulum")
    fig = lagsim.plot(driven.simulate(t_end=5), system=driven)
    assert [a.get_label() for a in fig.axes][-1] == "energy balance"


def test_the_work_s_quadrature_error_estimate_shrinks_as_the_sample_spacing_squared(tmp_path):
    """balance.work on the damped oscillator: W = −c ∫ ẋ² dt by Simpson on the samples, with
    error max|W_Simpson − W_trapezoid| ~ Δt²; ten times the samples, about 1/100 of it (between
    1/200 and 1/50 here), and h − h0 − W within 10 × that estimate + 1e-7 (the integration)."""
    import lagsim
    from lagsim.analysis.balance import work
    from lagsim.output.io import Table

    system = tmp_path / "damped.yaml"
    system.write_text(DAMPED)
    damped = lagsim.load(str(system))
    found = []
    for samples in (101, 1001):
        run = damped.simulate(samples=samples)
        table = Table(tuple(run.columns), run.as_array(), "<run>")
        w = work(table, damped.model)
        assert w.why == "forces act on x"
        h = table.column("energy")
        assert np.ptp(h) > 1.0
        assert np.max(np.abs(h - h[0] - w.values)) < 10 * w.error + 1e-7
        found.append(w.error)
    assert 1 / 200 < found[1] / found[0] < 1 / 50
