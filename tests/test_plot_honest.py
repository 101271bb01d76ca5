"""Plots that do not mislead (issue 14): equal scales for two lengths, units in labels, no
panels of rounding noise, wrapped angles, energy labels that say what they show, no offset
labels, titles, and several CSVs drawn over each other."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lagsim.analysis.kinematics import held_by_constraints, quantities
from lagsim.cli import main
from lagsim.output.io import Table, read_csv
from lagsim.output.units import Quantities, unit_columns
from lagsim.spec.system import load_spec, parse_spec
from lagsim.symbolic.model import build_model
from lagsim.viz.figures import held_coordinates, make_figure, wrap_angle

T = np.linspace(0.0, 10.0, 201)


def figure_of(monkeypatch, *args: str):
    """The figure `lagsim plot ARGS` builds (caught at save_figure), and the CLI result."""
    from lagsim.viz import figures as plotting

    made = {}

    def keep(fig, target, dpi):
        made["fig"] = fig

    monkeypatch.setattr(plotting, "save_figure", keep)
    result = CliRunner().invoke(main, ["plot", *args, "-o", "unused.png"])
    assert result.exit_code == 0, result.output
    return made["fig"]


def test_two_lengths_get_equal_scales_and_a_circle_stays_round(monkeypatch) -> None:
    """pendulum_natural: x² + y² = l² (001 Ex. 10.5); with --x x --y y one data unit is as long
    on both axes, so the arc has its true shape; x against theta-like columns does not."""
    fig = figure_of(monkeypatch, "pendulum_natural", "--t-end", "1", "--kind", "time",
                    "--x", "x", "--y", "y")
    (ax,) = fig.axes
    assert ax.get_aspect() == 1.0
    fig.canvas.draw()
    box = ax.get_window_extent()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert box.width / (x1 - x0) == pytest.approx(box.height / (y1 - y0), rel=1e-6)
    mixed = figure_of(monkeypatch, "pendulum_natural", "--t-end", "1", "--kind", "time",
                      "--x", "x", "--y", "x_dot")
    assert mixed.axes[0].get_aspect() == "auto"


def test_lengths_and_angles_come_from_the_mass_positions() -> None:
    spec = load_spec("cart_pole")
    info = quantities(spec, build_model(spec))
    assert info.dimensions == {"x": "length", "theta": "angle"}
    assert not info.same_scale("x", "theta") and info.same_scale("x", "x")


def test_units_are_validated_and_carried_into_labels() -> None:
    spec = parse_spec("parameters: {m: 1}\ncoordinates: [x, theta]\n"
                      "kinetic: m*(x_dot**2 + theta_dot**2)/2\n"
                      "units: {x: m, theta: rad, m: kg, t: ms}\n")
    assert spec.units == (("x", "m"), ("theta", "rad"), ("m", "kg"), ("t", "ms"))
    columns = unit_columns(dict(spec.units), spec.coordinates)
    assert columns == {"x": "m", "theta": "rad", "t": "ms", "x_dot": "m/ms",
                       "theta_dot": "rad/ms"}
    table = Table(("t", "x", "theta", "x_dot", "theta_dot"),
                  np.column_stack([T, T, np.sin(T), np.ones_like(T), np.cos(T)]), "<test>")
    fig = make_figure(table, "phase", info=Quantities(columns))
    assert [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes] == [
        ("x [m]", "ẋ [m/ms]"), ("θ [rad]", "θ̇ [rad/ms]")]   # lagsim.symbolic.names' rule
    time = make_figure(table, "time", columns=["x"], info=Quantities(columns))
    assert time.axes[0].get_xlabel() == "t [ms]" and time.axes[0].get_ylabel() == "x [m]"


def test_a_panel_mixing_units_gives_each_line_its_unit_in_the_legend() -> None:
    """Issue 30: x in m and θ in rad share the coordinates panel, so no axis unit fits both;
    each legend line carries its own, and a shared unit stays on the axis alone."""
    table = Table(("t", "x", "theta", "y", "x_dot", "theta_dot", "y_dot"),
                  np.column_stack([T, T, np.sin(T), T, np.ones_like(T), np.cos(T),
                                   np.ones_like(T)]), "<test>")
    mixed = Quantities(unit_columns({"x": "m", "theta": "rad", "t": "s"}, ("x", "theta", "y")))
    fig = make_figure(table, "overview", info=mixed)
    coordinates, velocities = fig.axes[:2]
    legend = [text.get_text() for text in coordinates.get_legend().get_texts()]
    assert legend == ["x [m]", "θ [rad]", "y"] and "[" not in coordinates.get_ylabel()
    assert [text.get_text() for text in velocities.get_legend().get_texts()] == [
        "ẋ [m/s]", "θ̇ [rad/s]", "ẏ"]
    time = make_figure(table, "time", columns=["x", "theta"], info=mixed)
    assert [line.get_label() for line in time.axes[0].lines] == ["x [m]", "θ [rad]"]
    assert time.axes[0].get_xlabel() == "t [s]"
    shared = Quantities(unit_columns({"x": "m", "y": "m"}, ("x", "theta", "y")))
    same = make_figure(table, "time", columns=["x", "y"], info=shared)
    assert same.axes[0].get_ylabel() == "x, y [m]"
    assert [line.get_label() for line in same.axes[0].lines] == ["x", "y"]


@pytest.mark.parametrize(("units", "message"), [
    ("{q: m}", "'units' names 'q', which is not a coordinate, a parameter or t"),
    ("{x: ''}", "the unit of 'x' must be one line of text such as m, rad or kg"),
])
def test_bad_units_are_input_errors(units: str, message: str) -> None:
    from lagsim.errors import InputError

    with pytest.raises(InputError) as caught:
        parse_spec(f"coordinates: [x]\nkinetic: x_dot**2/2\nunits: {units}\n")
    assert message in caught.value.message


def test_coordinates_held_at_zero_get_no_panel_but_a_note(monkeypatch) -> None:
    """002 §23.8's beta, gamma, z1, z2 (the double pendulum in constrained coordinates) are held
    at 0 by its constraints: the overview and the phase plot draw theta1 and theta2 only."""
    spec = load_spec("double_pendulum_constrained")
    assert held_by_constraints(build_model(spec)) == ("beta", "gamma", "z1", "z2")
    fig = figure_of(monkeypatch, "double_pendulum_constrained", "--t-end", "1")
    coords, velocities = fig.axes[0], fig.axes[1]
    assert [line.get_label() for line in coords.lines] == ["θ1", "θ2"]   # the names rule
    assert [line.get_label() for line in velocities.lines] == ["θ̇1", "θ̇2"]
    notes = [t.get_text() for t in coords.get_legend().get_texts()]
    assert notes[2:] == [f"{q} ≡ 0 (a constraint)" for q in ("β", "γ", "z1", "z2")]
    phase = figure_of(monkeypatch, "double_pendulum_constrained", "--t-end", "1", "--kind",
                      "phase")
    assert [ax.get_xlabel() for ax in phase.axes] == ["θ1", "θ2"]


def test_held_coordinates_are_found_in_a_csv_too(tmp_path: Path) -> None:
    csv = tmp_path / "run.csv"
    CliRunner().invoke(main, ["simulate", "pendulum_constrained", "--t-end", "1", "-o", str(csv)])
    assert held_coordinates(read_csv(csv)) == ("beta", "z")
    free = Table(("t", "x", "x_dot"), np.column_stack([T, 0 * T, 0 * T]), "<free>")
    assert held_coordinates(free) == ()


def test_wrap_puts_angles_in_the_half_open_interval(monkeypatch) -> None:
    theta = np.array([-3 * math.pi, -math.pi, -1.0, 0.0, math.pi, 3 * math.pi, 7.5, -7.5])
    wrapped = wrap_angle(theta)
    assert np.all(wrapped > -math.pi) and np.all(wrapped <= math.pi)
    np.testing.assert_allclose(np.cos(wrapped), np.cos(theta), atol=1e-12)
    np.testing.assert_allclose(np.sin(wrapped), np.sin(theta), atol=1e-12)
    assert wrapped[1] == math.pi and wrapped[4] == math.pi
    fig = figure_of(monkeypatch, "double_pendulum", "--t-end", "10", "--kind", "phase",
                    "--wrap")
    breaks = []
    for ax in fig.axes:
        x = ax.lines[0].get_xdata()
        drawn = x[np.isfinite(x)]
        assert drawn.min() > -math.pi and drawn.max() <= math.pi
        breaks.append(bool(np.isnan(x).any()))
    assert breaks == [False, True]   # theta2 goes over the top: its line breaks at the jump
    named = figure_of(monkeypatch, "double_pendulum", "--t-end", "10", "--kind", "time",
                      "--wrap", "theta2", "--columns", "theta1,theta2")
    theta1, theta2 = (line.get_ydata() for line in named.axes[0].lines)
    assert np.nanmax(np.abs(theta2)) <= math.pi and not np.isnan(theta1).any()


def test_wrap_without_names_needs_the_system(tmp_path: Path) -> None:
    csv = tmp_path / "run.csv"
    CliRunner().invoke(main, ["simulate", "pendulum", "--t-end", "1", "-o", str(csv)])
    result = CliRunner().invoke(main, ["plot", str(csv), "--wrap", "-o", str(tmp_path / "p.png")])
    assert result.exit_code == 2
    assert "--wrap without names needs the system" in result.output


def test_energy_panels_say_what_they_show_and_have_no_offset() -> None:
    """h = -0.28 + 1e-10 t: the top panel is h − h0 with h0 in its label (matplotlib would
    otherwise print an offset such as 1e-10-2.8e-1), the drift panel says relative."""
    h = -0.28 + 1e-10 * T
    table = Table(("t", "x", "energy"), np.column_stack([T, T, h]), "<test>")
    fig = make_figure(table, "energy")
    fig.canvas.draw()
    top, drift = fig.axes
    assert top.get_ylabel() == "energy − energy₀\n(energy₀ = -0.28)"
    np.testing.assert_allclose(top.lines[0].get_ydata(), 1e-10 * T, rtol=1e-5, atol=1e-16)
    assert drift.get_ylabel() == "relative drift\n|energy − energy₀|\n/ |energy₀|"
    for ax in fig.axes:   # at most a power of ten, never an added offset such as 1e−10−2.8e−1
        assert re.fullmatch(r"(1e[−-]?\d+)?", ax.yaxis.get_offset_text().get_text())
        assert ax.xaxis.get_offset_text().get_text() == ""


def test_the_title_is_the_system_or_given(monkeypatch) -> None:
    assert figure_of(monkeypatch, "pendulum", "--t-end", "1")._suptitle.get_text() == "pendulum"
    given = figure_of(monkeypatch, "pendulum", "--t-end", "1", "--title", "my run")
    assert given._suptitle.get_text() == "my run"


def test_several_csvs_overlay_with_a_legend_of_their_names(tmp_path: Path, monkeypatch) -> None:
    """Two runs of the rod drift (001 §10.7): without a stabilizer |φ| grows; with projection
    it stays at round-off. Each run has one colour, named by its file or by --label."""
    paths = []
    for stabilize in ("none", "projection"):
        path = tmp_path / f"{stabilize}.csv"
        CliRunner().invoke(main, ["simulate", "pendulum_natural", "--t-end", "5",
                                  "--stabilize", stabilize, "-o", str(path)])
        paths.append(str(path))
    fig = figure_of(monkeypatch, *paths, "--kind", "drift")
    position = fig.axes[0]
    labels = [t.get_text() for t in position.get_legend().get_texts()]
    assert labels == ["none.csv", "projection.csv"]
    none, projection = position.lines
    assert none.get_color() != projection.get_color()
    assert np.max(none.get_ydata()) > 1e3 * np.max(projection.get_ydata())
    assert fig._suptitle.get_text() == "none, projection"
    named = figure_of(monkeypatch, *paths, "--kind", "drift", "--label", "free",
                      "--label", "projected")
    assert [t.get_text() for t in named.axes[0].get_legend().get_texts()] == ["free",
                                                                             "projected"]
    wrong = CliRunner().invoke(main, ["plot", *paths, "--label", "one", "-o",
                                      str(tmp_path / "x.png")])
    assert wrong.exit_code == 2 and "--label is given 1 times for 2 INPUTs" in wrong.output


def test_an_energy_lost_at_impacts_is_a_change_not_a_drift() -> None:
    """The bouncing ball's overview called the energy its impacts take away (restitution 0.8)
    a "relative drift" rising to 1; with an impact in the run it is a change, and says why. The
    same run without the impact keeps the drift's name."""
    t = np.linspace(0.0, 1.0, 11)
    energy = np.where(t < 0.45, 9.81, 9.81 * 0.64)
    impulse = np.where(np.isclose(t, 0.5), 1.2, 0.0)
    for kick, word in ((impulse, "change"), (0.0 * impulse, "drift")):
        table = Table(("t", "y", "energy", "impulse_floor"),
                      np.column_stack([t, 1.0 - t, energy, kick]), "run.csv")
        axes = {ax.get_label(): ax for ax in make_figure(table).axes}
        label = axes["energy drift"].get_ylabel()
        assert label.startswith(f"relative {word}\n")
        assert label.endswith("(impacts)") == (word == "change")
