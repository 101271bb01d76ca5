"""Figures of a sweep (issue 12): the drawn data are the table's, on the axes the user named."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from click.testing import CliRunner

from lagsim.cli import main
from lagsim.sweep.core import read_table
from lagsim.viz import sweep_figures as plot_sweep

SYNC = ("--scheduler", "synchronous")


def invoke(*args: str) -> object:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def test_swept_columns_are_read_from_the_header():
    assert plot_sweep.swept_columns(["run", "theta0", "l", "theta", "theta_dot", "energy_drift",
                                     "energy_change", "stop_time", "error"]) == ["theta0", "l"]
    assert plot_sweep.swept_columns(["run", "x_dot0", "x", "y", "x_dot", "y_dot",
                                     "max_residual_rod", "energy_drift", "error"]) == ["x_dot0"]


def test_a_1d_sweep_is_a_line_of_the_table_and_a_2d_grid_a_heat_map(tmp_path):
    one = tmp_path / "one.csv"
    two = tmp_path / "two.csv"
    common = ("--t-end", "0.5", "--samples", "5", "--summary", "amp=max(abs(theta))", *SYNC)
    assert invoke("sweep", "pendulum", "--grid", "theta=0.1:1:4", *common, "-o",
                  str(one)).exit_code == 0
    assert invoke("sweep", "pendulum", "--grid", "theta=0.1:1:4", "--values", "l=1,2,3",
                  *common, "-o", str(two)).exit_code == 0
    header, data, _ = read_table(str(one))
    fig = plot_sweep.make_figure("sweep", str(one), "theta0", "amp", None)
    (line,) = fig.axes[0].get_lines()
    np.testing.assert_array_equal(line.get_xdata(), data[:, header.index("theta0")])
    np.testing.assert_array_equal(line.get_ydata(), data[:, header.index("amp")])
    header, data, _ = read_table(str(two))
    fig = plot_sweep.make_figure("sweep", str(two), "theta0", "amp", None)
    mesh = fig.axes[0].collections[0]
    grid = np.asarray(mesh.get_array()).reshape(3, 4)  # rows: l, columns: theta0
    expected = data[:, header.index("amp")].reshape(4, 3).T
    np.testing.assert_array_equal(grid, expected)
    out = tmp_path / "two.png"
    result = invoke("plot", str(two), "--x", "theta0", "--y", "amp", "-o", str(out))
    assert result.exit_code == 0 and out.read_bytes()[:4] == b"\x89PNG"


def test_poincare_sections_of_many_runs_on_one_figure(tmp_path):
    runs = tmp_path / "runs"
    result = invoke("sweep", "pendulum", "--values", "theta=0.2,0.4,0.6", "--section", "theta",
                    "--section-direction", "up", "--t-end", "6", "--save-trajectories",
                    str(runs), *SYNC)
    assert result.exit_code == 0
    counts = []
    for path in sorted(runs.iterdir()):
        rows = list(csv.reader(io.StringIO(path.read_text())))
        counts.append(len(rows) - 1)
    fig = plot_sweep.make_figure("poincare", str(runs), "theta", "theta_dot", None)
    drawn = [len(c.get_offsets()) for c in fig.axes[0].collections]
    assert drawn == counts and all(c >= 2 for c in counts)
    assert fig.get_suptitle() == f"runs: Poincaré section (3 runs, {sum(counts)} crossings)"
    out = tmp_path / "p.png"
    assert invoke("plot", str(runs), "--kind", "poincare", "--x", "theta", "--y", "theta_dot",
                  "-o", str(out)).exit_code == 0
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_poincare_of_a_system_simulated_with_a_section(tmp_path):
    out = tmp_path / "p.png"
    result = invoke("plot", "pendulum", "--kind", "poincare", "--section", "theta", "--x",
                    "theta", "--y", "theta_dot", "--t-end", "10", "-o", str(out))
    assert result.exit_code == 0 and out.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("args", "message"), [
    (("--x", "theta0", "--y", "perod"), "lagsim: error: --y: no column 'perod' (did you mean "
     "'period'?)"),
    (("--x", "theta0"), "lagsim: error: --y: give --y, the column to draw against 'theta0'"),
])
def test_plot_errors(args, message, tmp_path):
    table = tmp_path / "s.csv"
    assert invoke("sweep", "pendulum", "--values", "theta=0.1,0.2", "--stop-when", "theta_dot",
                  "--summary", "period=2*final(t)", "--samples", "2", *SYNC, "-o",
                  str(table)).exit_code == 0
    result = CliRunner().invoke(main, ["plot", str(table), *args, "-o",
                                       str(tmp_path / "x.png")])
    assert result.exit_code == 2
    assert result.stderr.startswith(message)


def test_a_poincare_section_wraps_the_angles_wrap_names(tmp_path):
    """--wrap was ignored by --kind poincare: a pendulum's section of θ spread over −65 … −5.
    The crossings of a CSV drawn wrapped to (−π, π] when --wrap names --x, as they are without,
    the axes named θ and θ̇; a name that is neither --x nor --y is refused."""
    from lagsim.viz.figures import wrap_angle

    theta = np.array([-64.9, -40.1, -12.3, -5.2])
    path = tmp_path / "section.csv"
    path.write_text("t,theta,theta_dot\n" + "".join(f"{i},{a},{0.1 * i}\n"
                                                     for i, a in enumerate(theta)))
    for wrap, expected in (((), theta), (("theta",), wrap_angle(theta))):
        ax = plot_sweep.make_figure("poincare", str(path), "theta", "theta_dot", None,
                                    wrap=wrap).axes[0]
        assert np.array_equal(ax.collections[0].get_offsets()[:, 0], expected)
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("θ", "θ̇")
    assert np.all(np.abs(wrap_angle(theta)) <= np.pi)
    out = tmp_path / "p.png"
    result = invoke("plot", str(path), "--kind", "poincare", "--x", "theta", "--y", "theta_dot",
                    "--wrap", "phi", "-o", str(out))
    assert result.exit_code == 2 and not out.exists()
    assert result.output.startswith("lagsim: error: --wrap: wraps the --x and --y")
