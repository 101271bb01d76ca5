"""Figures and animations of lagsim CSVs (issue 4 "Tests").

The CSVs are synthetic with known closed forms: x = cos t, x_dot = −sin t (so x² + x_dot² = 1, the
harmonic oscillator's phase circle), residual_c1 = 1e-12·t (position-level drift φ, seed 003's
c(q) = 0), residual_c1_dot = 1e-12 (φ̇), lambda_c1 = sin 2t (seed 001 §10.7), and
energy = 0.5 + 1e-10·t (h of seed 001, drifting by 2e-10·t relative to h0 = 0.5).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from lagsim.errors import InputError
from lagsim.output.io import Table, read_csv, write_csv
from lagsim.viz import animate as lanimate
from lagsim.viz import figures as lplot
from lagsim.viz.animate import animate, frame_count
from lagsim.viz.figures import LOG_FLOOR, make_figure, save_figure

T = np.linspace(0.0, 2.0 * np.pi, 121)


def _table(tmp_path: Path, columns: dict[str, np.ndarray], name: str = "run.csv") -> Table:
    path = tmp_path / name
    write_csv(list(columns), np.column_stack(list(columns.values())), path)
    return read_csv(path)


@pytest.fixture
def constrained(tmp_path: Path) -> Table:
    return _table(
        tmp_path,
        {
            "t": T,
            "x": np.cos(T),
            "x_dot": -np.sin(T),
            "lambda_c1": np.sin(2.0 * T),
            "residual_c1": 1e-12 * T,
            "residual_c1_dot": np.full_like(T, 1e-12),
            "energy": 0.5 + 1e-10 * T,
        },
    )


@pytest.fixture
def free(tmp_path: Path) -> Table:
    return _table(
        tmp_path,
        {
            "t": T,
            "x": np.cos(T),
            "y": np.sin(T),
            "x_dot": -np.sin(T),
            "y_dot": np.cos(T),
            "energy": np.full_like(T, 0.5),
        },
        name="free.csv",
    )


def _panels(fig: Figure) -> list[str]:
    return [ax.get_label() for ax in fig.axes]


def _axes(fig: Figure, key: str):
    (ax,) = [a for a in fig.axes if a.get_label() == key]
    return ax


def test_overview_has_the_expected_panels(constrained: Table) -> None:
    fig = make_figure(constrained)
    assert _panels(fig) == ["coordinates", "velocities", "drift", "energy drift", "multipliers"]
    assert [ax.get_ylabel() for ax in fig.axes] == [
        "x",
        "ẋ",  # names by lagsim.symbolic.names (issue 14)
        "|residual_c1|,\n|residual_c1_dot|",
        "relative drift\n|energy − energy₀|\n/ |energy₀|",
        "λ_c1",
    ]
    assert [ax.get_yscale() for ax in fig.axes] == ["linear", "linear", "log", "log", "linear"]
    assert fig.axes[-1].get_xlabel() == "t"
    shared = fig.axes[0].get_shared_x_axes()
    assert all(shared.joined(fig.axes[0], ax) for ax in fig.axes)
    assert fig.get_suptitle() == "run"


def test_overview_lines_carry_the_csv_columns(constrained: Table) -> None:
    fig = make_figure(constrained)
    (line,) = _axes(fig, "coordinates").lines
    assert np.array_equal(line.get_xdata(), constrained.column("t"))
    assert np.array_equal(line.get_ydata(), constrained.column("x"))
    (line,) = _axes(fig, "multipliers").lines
    assert np.array_equal(line.get_ydata(), np.sin(2.0 * T))


def test_drift_panel_is_absolute_residual_with_zero_clipped(constrained: Table) -> None:
    ax = _axes(make_figure(constrained), "drift")
    position, velocity = ax.lines
    assert position.get_label() == "|residual_c1|"
    assert position.get_linestyle() == "-" and velocity.get_linestyle() == "--"
    y = position.get_ydata()
    assert y[0] == LOG_FLOOR
    assert np.array_equal(y[1:], 1e-12 * T[1:])
    low, high = ax.get_ylim()
    assert 1e-15 <= low <= 1e-12 * T[1] and high >= 1e-12 * T[-1]


def test_relative_energy_drift(constrained: Table) -> None:
    (line,) = _axes(make_figure(constrained), "energy drift").lines
    y = line.get_ydata()
    assert y[0] == LOG_FLOOR
    np.testing.assert_allclose(y[1:], 2e-10 * T[1:], rtol=1e-5)


def test_panels_without_data_are_left_out(free: Table, tmp_path: Path) -> None:
    fig = make_figure(free)
    assert _panels(fig) == ["coordinates", "velocities", "energy drift"]
    assert [line.get_label() for line in fig.axes[0].lines] == ["x", "y"]
    bare = _table(tmp_path, {"t": T, "q": T**2}, name="bare.csv")
    assert _panels(make_figure(bare)) == ["coordinates"]


def test_constant_energy_panel_has_no_positive_values(free: Table) -> None:
    ax = _axes(make_figure(free), "energy drift")
    assert len(ax.lines) == 0
    assert [text.get_text() for text in ax.texts] == ["all values are exactly 0"]


def test_energy_starting_at_zero_is_shown_absolute(tmp_path: Path) -> None:
    h = 1e-16 + 1e-13 * np.sin(T)
    table = _table(tmp_path, {"t": T, "x": T, "energy": h})
    ax = _axes(make_figure(table, "energy"), "energy drift")
    assert ax.get_ylabel() == "absolute drift\n|energy − energy₀|\n(energy₀ = 1e-16 < drift)"
    np.testing.assert_allclose(ax.lines[0].get_ydata()[1:], np.abs(h[1:] - h[0]), rtol=0, atol=0)


def test_exact_zero_residual_is_listed_not_drawn(tmp_path: Path) -> None:
    tiny = np.where(np.arange(T.size) % 2 == 0, 1e-290, 1e-11)
    columns = {
        "t": T,
        "z": np.zeros_like(T),
        "z_dot": np.zeros_like(T),
        "residual_plane": np.zeros_like(T),
        "residual_string": tiny,
        "residual_plane_dot": np.zeros_like(T),
        "residual_string_dot": np.full_like(T, 3e-12),
    }
    ax = _axes(make_figure(_table(tmp_path, columns)), "drift")
    assert [line.get_label() for line in ax.lines] == [
        "|residual_string|",
        "|residual_string_dot|",
    ]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "|residual_string|",
        "|residual_string_dot|",
        "|residual_plane| ≡ 0",
        "|residual_plane_dot| ≡ 0",
    ]
    assert ax.get_ylim() == pytest.approx((1e-26, 1e-10), rel=1e-12)


def test_legend_sits_outside_the_data_area(free: Table) -> None:
    fig = make_figure(free)
    fig.canvas.draw()
    ax = _axes(fig, "coordinates")
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["x", "y"]
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    assert legend.get_window_extent().x1 <= fig.bbox.x1 + 1.0


def test_time_kind_with_x_and_y(constrained: Table) -> None:
    fig = make_figure(constrained, "time", x="x", y="x_dot")
    (ax,) = fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x", "ẋ")
    line = ax.lines[0]
    assert np.array_equal(line.get_xdata(), np.cos(T))
    assert np.array_equal(line.get_ydata(), -np.sin(T))


def test_time_kind_columns(constrained: Table) -> None:
    (ax,) = make_figure(constrained, "time", columns=["x", "lambda_c1"]).axes
    assert [line.get_label() for line in ax.lines] == ["x", "λ_c1"]   # the names rule
    assert ax.get_xlabel() == "t"


def test_phase_portrait_is_the_unit_circle(free: Table) -> None:
    fig = make_figure(free, "phase")
    assert _panels(fig) == ["phase x", "phase y"]
    for ax, q in zip(fig.axes, ["x", "y"], strict=True):
        assert (ax.get_xlabel(), ax.get_ylabel()) == (q, {"x": "ẋ", "y": "ẏ"}[q])   # names rule
        line = ax.lines[0]
        radius = np.hypot(line.get_xdata(), line.get_ydata())
        np.testing.assert_allclose(radius, 1.0, atol=1e-12)


def test_drift_energy_forces_kinds(constrained: Table) -> None:
    drift = make_figure(constrained, "drift")
    assert _panels(drift) == ["position drift", "velocity drift"]
    assert all(ax.get_yscale() == "log" for ax in drift.axes)
    assert np.array_equal(drift.axes[1].lines[0].get_ydata(), np.full_like(T, 1e-12))
    energy = make_figure(constrained, "energy")
    assert _panels(energy) == ["energy", "energy drift"]
    assert [ax.get_yscale() for ax in energy.axes] == ["linear", "log"]
    forces = make_figure(constrained, "forces")
    assert _panels(forces) == ["multipliers"]


def test_path_has_equal_scales_and_marked_ends(free: Table) -> None:
    r = 2.0 + np.cos(3.0 * T)
    fig = make_figure(free, "path", path_xy={"m1": (r * np.cos(T), 0.5 * r * np.sin(T))})
    (ax,) = fig.axes
    assert ax.get_aspect() == 1.0
    path, start, end = ax.lines
    assert np.array_equal(path.get_xdata(), r * np.cos(T))
    assert (start.get_marker(), end.get_marker()) == ("o", "s")
    assert (start.get_xdata()[0], start.get_ydata()[0]) == (3.0, 0.0)
    assert end.get_xdata()[0] == pytest.approx(3.0) and end.get_ydata()[0] == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"kind": "bogus"},
            "unknown plot kind 'bogus'; choose one of: "
            "overview, time, phase, drift, energy, forces, invariants, lyapunov, path",
        ),
        (
            {"kind": "time", "columns": ["z"]},
            "unknown column 'z'; the columns are: t, x, y, x_dot, y_dot, energy",
        ),
        ({"kind": "time", "x": "w"}, "unknown column 'w'; the columns are:"),
        ({"kind": "drift"}, "has no residual_* columns, so the system has no constraints"),
        ({"kind": "forces"}, "has no lambda_* columns"),
        ({"kind": "path"}, "--kind path needs the system (--system FILE)"),
        ({"kind": "energy", "columns": ["x"]}, "--columns, --x and --y apply to --kind time"),
    ],
)
def test_bad_choices_are_input_errors(free: Table, kwargs: dict, message: str) -> None:
    with pytest.raises(InputError) as err:
        make_figure(free, **kwargs)
    assert message in err.value.message
    assert err.value.exit_code == 2


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_saved_files_are_real_images(constrained: Table, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"fig.{suffix}"
    fig = make_figure(constrained)
    save_figure(fig, path, dpi=40)
    data = path.read_bytes()
    if suffix == "png":
        with Image.open(path) as image:
            assert image.format == "PNG"
            width, height = fig.get_size_inches() * 40
            assert image.size == (round(width), round(height))
            colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
            assert colours is not None and len(colours) > 10
    elif suffix == "svg":
        assert data.startswith(b"<?xml") and b"<svg" in data[:2000]
    else:
        assert data.startswith(b"%PDF")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig." + suffix, "run.csv"]


def test_unknown_extension_writes_nothing(constrained: Table, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"use \.png, \.svg, \.pdf"):
        save_figure(make_figure(constrained), tmp_path / "fig.jpg", dpi=50)
    assert not (tmp_path / "fig.jpg").exists()


def test_failed_save_leaves_no_file(
    constrained: Table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fig = make_figure(constrained)

    def half_written(out, **kwargs):
        out.write(b"\x89PNG partial")
        raise RuntimeError("renderer crashed")

    monkeypatch.setattr(fig, "savefig", half_written)
    with pytest.raises(RuntimeError, match="renderer crashed"):
        save_figure(fig, tmp_path / "fig.png", dpi=50)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv"]


def _pendulum(tmp_path: Path, t_end: float = 2.0) -> tuple[Table, dict]:
    t = np.linspace(0.0, t_end, 41)
    theta = 0.5 * np.cos(2.0 * t)
    table = _table(tmp_path, {"t": t, "theta": theta, "theta_dot": -np.sin(2.0 * t)})
    return table, {"bob": (np.sin(theta), -np.cos(theta))}


def test_frame_count() -> None:
    assert frame_count(0.0, 10.0, 30) == 300
    assert frame_count(1.0, 1.1, 30) == 3
    assert frame_count(0.0, 0.01, 30) == 2


def test_animate_writes_gif_with_requested_frames(tmp_path: Path) -> None:
    table, positions = _pendulum(tmp_path)
    out = tmp_path / "swing.gif"
    n = animate(table, positions, [("origin", "bob")], out, fps=6, trail=0.5, title="pendulum")
    assert n == 12
    with Image.open(out) as gif:
        assert gif.format == "GIF"
        assert gif.n_frames == 12
        gif.seek(0)
        first = np.asarray(gif.convert("RGB"), dtype=int)
        gif.seek(6)
        middle = np.asarray(gif.convert("RGB"), dtype=int)
    assert len(np.unique(first.reshape(-1, 3), axis=0)) > 2
    assert np.count_nonzero(np.any(first != middle, axis=2)) > 50
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "swing.gif"]


def test_mp4_without_ffmpeg_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table, positions = _pendulum(tmp_path)
    monkeypatch.setattr(lanimate.shutil, "which", lambda name: None)
    with pytest.raises(InputError) as err:
        animate(table, positions, [], tmp_path / "swing.mp4")
    assert err.value.message.endswith("mp4 needs ffmpeg, which is not installed; use .gif")
    assert not (tmp_path / "swing.mp4").exists()


def test_animation_extension_and_flags_are_checked(tmp_path: Path) -> None:
    table, positions = _pendulum(tmp_path)
    with pytest.raises(InputError, match=r"unknown extension '\.avi'; use \.gif, \.mp4"):
        animate(table, positions, [], tmp_path / "swing.avi")
    with pytest.raises(InputError, match="--fps must be a positive number"):
        animate(table, positions, [], tmp_path / "swing.gif", fps=0)
    with pytest.raises(InputError, match="--trail must be"):
        animate(table, positions, [], tmp_path / "swing.gif", trail=-1.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv"]


def test_failed_animation_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table, positions = _pendulum(tmp_path)
    calls = []
    add = lanimate._GifStream.add

    def failing_add(self, rgba):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("out of memory")
        add(self, rgba)

    monkeypatch.setattr(lanimate._GifStream, "add", failing_add)
    with pytest.raises(RuntimeError, match="out of memory"):
        animate(table, positions, [("origin", "bob")], tmp_path / "swing.gif", fps=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv"]


def test_many_columns_drop_the_legend_and_name_the_range(tmp_path: Path) -> None:
    n = 32
    columns = {"t": T} | {f"theta{i}": np.sin((1.0 + 0.1 * i) * T) for i in range(1, n + 1)}
    fig = make_figure(_table(tmp_path, columns, name="chain.csv"))
    (ax,) = fig.axes
    assert ax.get_legend() is None
    assert ax.get_ylabel() == "coordinates\n(θ1 … θ32)"
    assert len(ax.lines) == n
    assert len({tuple(line.get_color()) for line in ax.lines}) == n


def test_can_show_window_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lplot.sys, "platform", "linux")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    assert lplot.can_show_window() is False
    monkeypatch.setenv("DISPLAY", ":0")
    assert lplot.can_show_window() is True
    monkeypatch.setenv("MPLBACKEND", "Agg")
    assert lplot.can_show_window() is False


def test_show_draws_the_same_panels_into_pyplot(
    constrained: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    import matplotlib.pyplot as plt

    shown: list[list[str]] = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(_panels(plt.gcf())))
    lplot.show(constrained, kind="drift", title="pendulum (index1)")
    plt.close("all")
    assert shown == [["position drift", "velocity drift"]]
