"""Pictures of systems with 3-D bodies (issue 24): `plot --kind path` and `animate` on 3-D axes,
`--view`, each body as its principal axes scaled by the box of equal inertia (lagsim/viz/scene3d.py,
lagsim/analysis/kinematics.py body_frames).

The drawn axes are checked against R built here by hand with numpy: R = Rz(φ) Rx(θ) Rz(ψ) for the
heavy top's intrinsic ZXZ angles (Goldstein, Classical Mechanics, 3rd ed., §4.4), and the
Euler–Rodrigues matrix of a unit quaternion (Goldstein §4.5); the half-sides a_k of the box of mass
m with principal moments I_k from I₁ = m(a₂² + a₃²)/3 and cyclically (Goldstein §5.3)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

import lagsim
from lagsim.analysis.kinematics import body_frames
from lagsim.api import plot
from lagsim.cli import main
from lagsim.output.io import Table
from lagsim.viz.scene3d import path_figure, scene
from lagsim.viz.views import VIEWS, parse_view

DOCUMENTED_VIEWS = {"iso": (35.26, -45.0), "front": (0.0, -90.0), "side": (0.0, 0.0),
                    "top": (90.0, -90.0)}
"""The numbers docs/cli.md and lagsim/viz/views.py give for each named view."""

FREE_BODY = """
name: quaternion_box
parameters: {m: 2.0}
coordinates: [x, y, z, e0, e1, e2, e3]
masses:
  body:
    mass: m
    position: [x, y, z]
    orientation: {quaternion: [e0, e1, e2, e3]}
    inertia: [2, 3, 4]
initial: {e0: 1, e1: 0, e2: 0, e3: 0}
"""
"""A free body in a unit quaternion, its principal moments (2, 3, 4) about body axes."""


@pytest.fixture(scope="module")
def top() -> tuple[lagsim.System, lagsim.Trajectory]:
    system = lagsim.load("heavy_top")
    return system, system.simulate(t_end=2.0, samples=201)


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _lines(fig) -> dict[str, np.ndarray]:
    """The 3-D lines of ``fig`` that carry an id, as (n, 3) arrays of their points."""
    ax = fig.axes[0]
    return {line.get_gid(): np.column_stack(line.get_data_3d()) for line in ax.lines
            if line.get_gid()}


def test_the_top_is_drawn_on_3d_axes_and_the_pendulum_in_the_plane(top) -> None:
    system, traj = top
    fig = plot(traj, kind="path", system=system)
    ax = fig.axes[0]
    assert ax.name == "3d"
    spans = [hi - lo for lo, hi in (ax.get_xlim(), ax.get_ylim(), ax.get_zlim())]
    assert max(spans) - min(spans) < 1e-12 * max(spans)
    assert np.allclose(ax.get_box_aspect() / ax.get_box_aspect()[0], 1.0)
    pendulum = lagsim.load("pendulum")
    flat = plot(pendulum.simulate(t_end=1.0, samples=21), kind="path", system=pendulum)
    assert [a.name for a in flat.axes] == ["rectilinear"]


def test_the_drawn_axes_are_r_times_the_body_axes_scaled_by_the_box(top) -> None:
    """At the first and last sample each drawn principal axis k runs from the centre of mass
    l R e₃ to l R e₃ + a_k R e_k, with R = Rz(φ) Rx(θ) Rz(ψ) by hand, to 1e-12; a₃ of the top
    is √(3(2 I₁ − I₃)/(2m)), a₁ = a₂ = √(3 I₃/(2m))."""
    system, traj = top
    p = system.parameters
    m, l, i1, i3 = p["m"], p["l"], p["I1"], p["I3"]
    half = [math.sqrt(1.5 * i3 / m)] * 2 + [math.sqrt(1.5 * (2 * i1 - i3) / m)]
    lines = _lines(plot(traj, kind="path", system=system))
    for row, when in ((0, "start"), (-1, "end")):
        phi, theta, psi = (float(traj[q][row]) for q in ("phi", "theta", "psi"))
        R = _rz(phi) @ _rx(theta) @ _rz(psi)
        centre = l * R[:, 2]
        assert centre == pytest.approx([l * math.sin(theta) * math.sin(phi),
                                        -l * math.sin(theta) * math.cos(phi),
                                        l * math.cos(theta)], abs=1e-15)
        for k in range(3):
            start, end = lines[f"top:axis{k + 1}:{when}"]
            assert np.abs(start - centre).max() < 1e-12
            assert np.abs(end - start - half[k] * R[:, k]).max() < 1e-12


def test_the_box_the_pivot_the_rod_and_gravity(top) -> None:
    """The box's 8 corners are the centre ± a₁ R e₁ ± a₂ R e₂ ± a₃ R e₃ at the end; the origin
    (the pivot) is marked, a rod joins it to the centre of mass (|r| = l is held), and the
    gravity arrow points along −z, the file's gravity [0, 0, −g]."""
    system, traj = top
    p = system.parameters
    fig = plot(traj, kind="path", system=system)
    ax = fig.axes[0]
    lines = _lines(fig)
    collections = {c.get_gid(): c for c in ax.collections if c.get_gid()}
    phi, theta, psi = (float(traj[q][-1]) for q in ("phi", "theta", "psi"))
    R = _rz(phi) @ _rx(theta) @ _rz(psi)
    half = np.array([math.sqrt(1.5 * p["I3"] / p["m"])] * 2
                    + [math.sqrt(1.5 * (2 * p["I1"] - p["I3"]) / p["m"])])
    centre = p["l"] * R[:, 2]
    corners = {tuple(np.round(centre + R @ (half * np.array(signs)), 12))
               for signs in itertools.product((-1.0, 1.0), repeat=3)}
    edges = np.asarray(collections["top:box"]._segments3d)
    assert edges.shape == (12, 2, 3)
    assert {tuple(np.round(v, 12)) for v in edges.reshape(-1, 3)} == corners
    assert np.all(np.abs(np.linalg.norm(edges[:, 1] - edges[:, 0], axis=1)[:, None]
                         - 2 * half[None, :]).min(axis=1) < 1e-12)
    assert np.array_equal(lines["origin"], np.zeros((1, 3)))
    start, end = lines["rod:origin-top"]
    assert np.array_equal(start, np.zeros(3)) and np.abs(end - centre).max() < 1e-12
    tip, tail = np.asarray(collections["gravity"]._segments3d)[0]  # mplot3d's quiver shaft
    direction = (tip - tail) / np.linalg.norm(tip - tail)
    assert np.abs(direction - [0.0, 0.0, -1.0]).max() < 1e-12


def test_the_tip_of_the_symmetry_axis_traces_precession_and_nutation(top) -> None:
    """The dashed path is (l + a₃) R e₃ at every sample: its polar angle is θ(t) (the nutation,
    between its turning points) and its azimuth φ(t) − π/2 (the precession)."""
    system, traj = top
    p = system.parameters
    a3 = math.sqrt(1.5 * (2 * p["I1"] - p["I3"]) / p["m"])
    tip = _lines(plot(traj, kind="path", system=system))["top:tip"]
    theta, phi = np.asarray(traj["theta"]), np.asarray(traj["phi"])
    radius = np.linalg.norm(tip, axis=1)
    assert np.abs(radius - (p["l"] + a3)).max() < 1e-12
    assert np.abs(np.arccos(tip[:, 2] / radius) - theta).max() < 1e-9
    azimuth = np.unwrap(np.arctan2(tip[:, 1], tip[:, 0]))
    assert np.abs(azimuth - (phi - math.pi / 2)).max() < 1e-9
    assert np.ptp(theta) > 1e-3 and np.ptp(phi) > 0.5


def _free_body(scale: float) -> tuple[lagsim.System, Table, np.ndarray]:
    """The free body at three states whose quaternion is a unit one times ``scale`` (what a run
    that drifts off |e| = 1 would give), and the unit quaternions."""
    system = lagsim.load(FREE_BODY)
    rng = np.random.default_rng(24)
    unit = rng.normal(size=(3, 4))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    positions = rng.normal(size=(3, 3))
    data = np.column_stack([[0.0, 0.5, 1.0], positions, scale * unit])
    return system, Table(("t", "x", "y", "z", "e0", "e1", "e2", "e3"), data, "<free>"), unit


def _euler_rodrigues(e: np.ndarray) -> np.ndarray:
    e0, e1, e2, e3 = e
    return np.array([
        [e0**2 + e1**2 - e2**2 - e3**2, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), e0**2 - e1**2 + e2**2 - e3**2, 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), e0**2 - e1**2 - e2**2 + e3**2]])


def test_a_quaternion_body_is_drawn_with_the_normalized_quaternion() -> None:
    """With e = 1.1 ê off the unit sphere R(e) would stretch by 1.21; the drawn R is R(ê):
    orthogonal to 1e-14 and the axes are a_k R(ê) e_k."""
    system, table, unit = _free_body(1.1)
    frames = body_frames(system.spec, system.model, table)["body"]
    for R, e in zip(frames.rotation, unit, strict=True):
        assert np.abs(R.T @ R - np.eye(3)).max() < 1e-14
        assert np.abs(R - _euler_rodrigues(e)).max() < 1e-14
    lines = _lines(path_figure(scene(system.spec, system.model, table), parse_view("iso")))
    a = [math.sqrt(1.5 * (4.0 + 3.0 - 2.0) / 2.0), math.sqrt(1.5 * (2.0 + 4.0 - 3.0) / 2.0),
         math.sqrt(1.5 * (2.0 + 3.0 - 4.0) / 2.0)]
    R = _euler_rodrigues(unit[-1])
    for k in range(3):
        start, end = lines[f"body:axis{k + 1}:end"]
        assert np.abs(start - table.data[-1, 1:4]).max() < 1e-12
        assert np.abs(end - start - a[k] * R[:, k]).max() < 1e-12


def test_the_axis_lengths_are_the_half_sides_of_the_box_of_equal_inertia() -> None:
    """Moments (2, 3, 4) and m = 2 give a² in the ratio 5 : 3 : 1, and the uniform box with those
    half-sides has the moments m(a₂² + a₃²)/3, ... back."""
    system, table, _ = _free_body(1.0)
    frames = body_frames(system.spec, system.model, table)["body"]
    a1, a2, a3 = frames.half_sides
    assert (a1 / a3, a2 / a3) == (pytest.approx(math.sqrt(5.0), rel=1e-14),
                                  pytest.approx(math.sqrt(3.0), rel=1e-14))
    m = 2.0
    assert [m * (a2**2 + a3**2) / 3, m * (a1**2 + a3**2) / 3, m * (a1**2 + a2**2) / 3] == \
        pytest.approx([2.0, 3.0, 4.0], rel=1e-14)
    lengths = np.linalg.norm(frames.axes()[1], axis=0)
    assert lengths == pytest.approx([a1, a2, a3], rel=1e-14)


def test_each_named_view_sets_the_documented_camera(top) -> None:
    system, traj = top
    assert dict(VIEWS) == DOCUMENTED_VIEWS
    for name, (elev, azim) in [*DOCUMENTED_VIEWS.items(), ("20,-60", (20.0, -60.0)),
                               (" Top ", DOCUMENTED_VIEWS["top"])]:
        ax = plot(traj, kind="path", system=system, view=name).axes[0]
        assert (ax.elev, ax.azim) == (elev, azim), name


@pytest.mark.parametrize(("name", "right", "up"), [("front", "x", "z"), ("side", "y", "z"),
                                                   ("top", "x", "y")])
def test_the_named_views_look_as_documented(top, name, right, up) -> None:
    """On screen the documented axis points right, the other one up, and the third at the
    viewer (only the perspective moves its tip, by a few per cent)."""
    from mpl_toolkits.mplot3d import proj3d

    system, traj = top
    fig = plot(traj, kind="path", system=system, view=name)
    fig.canvas.draw()
    ax = fig.axes[0]
    origin = np.array(proj3d.proj_transform(0.0, 0.0, 0.0, ax.M)[:2])
    screen = {axis: np.array(proj3d.proj_transform(*unit, ax.M)[:2]) - origin
              for axis, unit in zip("xyz", np.eye(3), strict=True)}
    scale = np.linalg.norm(screen[right])
    assert screen[right] / scale == pytest.approx([1.0, 0.0], abs=1e-9)
    assert screen[up] / scale == pytest.approx([0.0, 1.0], abs=1e-9)
    toward = screen[({"x", "y", "z"} - {right, up}).pop()]
    assert np.linalg.norm(toward) < 0.05 * scale


@pytest.mark.parametrize("args", [["--view", "sideways"], ["--view", "95,0"],
                                  ["--view", "nan,10"], ["--view", "1,2,3"]])
def test_a_bad_view_is_a_one_line_error_naming_the_option(tmp_path, args) -> None:
    out = tmp_path / "top.png"
    result = CliRunner().invoke(main, ["plot", "heavy_top", "--kind", "path", "-o", str(out),
                                       *args])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lagsim: error: --view: must be one of iso")
    assert not out.exists()


def test_view_is_refused_where_nothing_is_drawn_from_a_view(tmp_path) -> None:
    """--view is for the paths; a picture in the plane takes only the views that look squarely
    at a plane (tests/test_figures_plane.py draws those)."""
    for args, view, words in (
            (["plot", "pendulum", "--kind", "path"], "iso", "a picture in the plane"),
            (["animate", "pendulum", "--t-end", "0.2", "--frames", "2"], "20,-60",
             "a picture in the plane"),
            (["plot", "heavy_top"], "top", "applies to --kind path")):
        out = tmp_path / ("x.gif" if args[0] == "animate" else "x.png")
        result = CliRunner().invoke(main, [*args, "--view", view, "-o", str(out)])
        assert result.exit_code == 2, args
        assert result.output.startswith(f"lagsim: error: --view: {words}"), result.output
        assert len(result.output.strip().splitlines()) == 1
        assert not out.exists()


def test_plot_path_of_the_top_writes_a_png(tmp_path) -> None:
    out = tmp_path / "top.png"
    result = CliRunner().invoke(main, ["plot", "heavy_top", "--kind", "path", "--view", "side",
                                       "--t-end", "1", "--dpi", "40", "-o", str(out)])
    assert result.exit_code == 0, result.output
    with Image.open(out) as image:
        assert image.format == "PNG" and image.size == (300, 260)


def test_animate_the_top_writes_the_frames_it_reports(tmp_path) -> None:
    """As test_cli's animate test: the GIF has the frames asked for; the top moves between
    the first and the last."""
    out = tmp_path / "top.gif"
    result = CliRunner().invoke(main, ["animate", "heavy_top", "--t-end", "0.5", "--frames", "4",
                                       "--dpi", "40", "--view", "30,-60", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "(4 frames)" in result.output
    with Image.open(out) as gif:
        assert gif.n_frames == 4
        first = np.asarray(gif.convert("RGB"), dtype=int)
        gif.seek(3)
        last = np.asarray(gif.convert("RGB"), dtype=int)
    assert np.abs(first - last).sum() > 0


def test_the_title_names_the_view_and_the_plane_it_shows(top) -> None:
    """Issue 30: a 3-D picture says from where it is seen (the plane, for a squarely seen one)."""
    from lagsim.viz.views import view_caption

    system, traj = top
    fig = plot(traj, kind="path", system=system, view="front")
    assert fig.axes[0].get_title() == "front view: x–z plane, z up"
    captions = {name: view_caption(parse_view(name)) for name in ("iso", "side", "top", "20,-60")}
    assert captions == {"iso": "iso view, z up", "side": "side view: y–z plane, z up",
                        "top": "top view: x–y plane, z up",
                        "20,-60": "view from elevation 20°, azimuth -60°, z up"}
    assert view_caption(parse_view("iso"), z_down=True) == "iso view, z down"
    assert view_caption(parse_view("top"), False, (0.0, 0.0, -1.0)) == (
        "top view: x–y plane, z up, gravity along −z (normal to the page)")
    assert view_caption(parse_view("iso"), False, (0.0, 0.0, -1.0)) == "iso view, z up"


def test_gravity_along_plus_z_draws_z_downwards_and_the_arrow_down_the_page() -> None:
    """The Whipple bicycle's axes have z down (gravity [0, 0, g]): its picture turns z over so
    that gravity points down the page, as the heavy top's (gravity [0, 0, -g]) does unturned."""
    from mpl_toolkits.mplot3d import proj3d

    from lagsim.viz.scene3d import z_down

    assert z_down((0.0, 0.0, 1.0)) and not z_down((0.0, 0.0, -1.0)) and not z_down(None)
    assert not z_down((0.8, 0.0, 0.6))
    points = {"m": np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])}
    for g, turned in (((0.0, 0.0, 1.0), True), ((0.0, 0.0, -1.0), False)):
        fig = path_figure(scene_of(points, g), DOCUMENTED_VIEWS["iso"])
        fig.canvas.draw()
        ax = fig.axes[0]
        assert bool(ax.zaxis_inverted()) == turned
        assert ax.get_title().endswith("z down" if turned else "z up")
        tip = np.array(proj3d.proj_transform(*g, ax.M)[:2])
        base = np.array(proj3d.proj_transform(0.0, 0.0, 0.0, ax.M)[:2])
        assert (tip - base)[1] < 0.0


def scene_of(points, gravity):
    from lagsim.viz.scene3d import Scene

    return Scene(points, {}, (), gravity)


def test_an_axis_seen_end_on_has_no_ticks_and_the_legend_covers_no_axis() -> None:
    """The front view's y ticks piled up in one smudge; the legend sat on the z axis' name."""
    points = {"a_mass_with_a_long_name.contact": np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])}
    fig = path_figure(scene_of(points, (0.0, 0.0, -1.0)), DOCUMENTED_VIEWS["front"], "t")
    fig.canvas.draw()
    ax = fig.axes[0]
    assert len(ax.get_yticks()) == 0 and ax.get_ylabel() == ""
    assert len(ax.get_xticks()) > 1 and len(ax.get_zticks()) > 1
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    assert legend.x1 <= fig.bbox.width
    words = [ax.zaxis.label, *ax.zaxis.get_ticklabels(), *ax.xaxis.get_ticklabels()]
    assert all(not t.get_window_extent(renderer).overlaps(legend) for t in words if t.get_text())
