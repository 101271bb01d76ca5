"""Wrong answers of `equilibria`, `modes` and `--method rattle` (issue 29), through the CLI.

Closed forms, computed here from their formulas (never taken from lagsim):

* Bead on a hoop of radius R spun at ω about the vertical, written with the spin in the
  positions (x = R sin θ cos ωt, y = R sin θ sin ωt, z = −R cos θ): L = ½mR²(θ̇² + ω² sin²θ)
  + mgR cos θ has no t, its equilibria are θ = 0, π and ±θ* with cos θ* = g/(Rω²), and small
  oscillations about θ* have Ω = ω sin θ* (θ̈ = sin θ (ω² cos θ − g/R); its derivative at θ* is
  ω²(cos²θ* − 1)).
* Pendulum: M = m l² (constant). Double pendulum in angles: M₁₁ = (m₁ + m₂)l₁², M₂₂ = m₂l₂²
  constant, M₁₂ = m₂l₁l₂ cos(θ₁ − θ₂) varying.
"""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from inline_systems import SPRING_SKATE

from lagsim.cli import main

RTOL = 1e-10

R, G, W = 0.5, 9.81, 7.0
THETA_STAR = math.acos(G / (R * W**2))

SPUN_HOOP = f"""
name: spun_hoop
parameters: {{m: 1.0, R: {R}, g: {G}, w: {W}}}
coordinates: [theta]
masses:
  bead:
    mass: m
    position: [R*sin(theta)*cos(w*t), R*sin(theta)*sin(w*t), -R*cos(theta)]
gravity: [0, 0, -g]
initial: {{theta: 1.0}}
"""

DRIVEN = """
name: driven
parameters: {m: 1.0, l: 1.0, g: 1.0, c: 0.5, F0: 1.5, w: 0.7}
coordinates: [theta]
kinetic: 1/2*m*l**2*theta_dot**2
potential: -m*g*l*cos(theta)
dissipation: 1/2*c*theta_dot**2
forces:
  theta: F0*cos(w*t)
initial: {theta: 0.2}
"""


def run(args: list[str], text: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, args, input=text)
    return result.exit_code, result.output


def run_json(args: list[str], text: str | None = None) -> dict:
    code, out = run([*args, "--format", "json"], text)
    assert code == 0, out
    return json.loads(out)


def error_line(args: list[str], text: str | None = None) -> str:
    code, out = run(args, text)
    assert code == 2, out
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lagsim: error: "), out
    return lines[0]


# --- 1. time dependence that cancels --------------------------------------------------------


def test_spun_hoop_written_with_cos_wt_has_its_four_equilibria():
    report = run_json(["equilibria", "-"], SPUN_HOOP)
    found = sorted(e["q"]["theta"] for e in report["equilibria"])
    assert len(found) == 4, found
    expected = sorted([-THETA_STAR, 0.0, THETA_STAR, math.pi])
    for value, want in zip(found, expected):
        assert abs(value - want) <= RTOL * max(1.0, abs(want)), (found, expected)
    stable = sorted(e["q"]["theta"] for e in report["equilibria"]
                    if e["stability"] == "stable")
    assert stable == pytest.approx([-THETA_STAR, THETA_STAR], rel=RTOL)


def test_spun_hoop_written_with_cos_wt_oscillates_at_w_sin_theta_star():
    report = run_json(["modes", "-", "--at", "theta=acos(g/(R*w**2))"], SPUN_HOOP)
    (mode,) = report["modes"]
    assert mode["frequency_rad_s"] == pytest.approx(W * math.sin(THETA_STAR), rel=RTOL)
    assert report["stability"] == "stable"


def test_spun_hoop_written_with_cos_wt_runs_under_rattle_with_its_energy_kept():
    """M = m R² does not change with θ or t; RATTLE keeps the (conserved) Jacobi integral
    h = ½mR²(θ̇² − ω² sin²θ) − mgR cos θ to O(dt²)."""
    code, out = run(["simulate", "-", "--method", "rattle", "--dt", "0.001", "--t-end", "2"],
                    SPUN_HOOP)
    assert code == 0, out
    rows = [line.split(",") for line in out.strip().splitlines()]
    header, data = rows[0], [[float(x) for x in r] for r in rows[1:]]
    th, thd = header.index("theta"), header.index("theta_dot")

    def h(row: list[float]) -> float:
        return (0.5 * R**2 * (row[thd] ** 2 - W**2 * math.sin(row[th]) ** 2)
                - G * R * math.cos(row[th]))

    assert max(abs(h(r) - h(data[0])) for r in data) <= 1e-4 * abs(h(data[0]))


def test_hoop_spun_up_is_still_refused_since_its_lagrangian_changes_with_t():
    """Spin angle w t²: L = ½mR²(θ̇² + 4w²t² sin²θ) + mgR cos θ depends on t."""
    text = SPUN_HOOP.replace("w*t)", "w*t**2)")
    assert text.count("w*t**2") == 2
    message = error_line(["equilibria", "-"], text)
    assert "is not autonomous: t appears in the Lagrangian" in message


# --- 2. parameters set on the command line count everywhere ---------------------------------


def test_driven_system_with_its_drive_set_to_zero_has_equilibria():
    message = error_line(["equilibria", "-"], DRIVEN)
    assert "not autonomous: t appears in the force on theta" in message
    report = run_json(["equilibria", "-", "--set", "F0=0"], DRIVEN)
    found = sorted(e["q"]["theta"] for e in report["equilibria"])
    assert found == pytest.approx([0.0, math.pi], abs=1e-12)


def test_driven_system_with_its_drive_set_to_zero_has_modes():
    """m l² θ̈ + c θ̇ + m g l θ = 0: ω_n = √(g/l) = 1, ζ = c/(2 m l² ω_n) = 0.25."""
    report = run_json(["modes", "-", "--set", "F0=0"], DRIVEN)
    (mode,) = report["modes"]
    assert mode["damping_ratio"] == pytest.approx(0.25, rel=RTOL)
    assert report["equilibrium"]["theta"] == 0.0


# --- 3. rattle names the entry of M that varies ---------------------------------------------


def test_rattle_takes_the_pendulum_whose_mass_matrix_is_constant():
    code, out = run(["simulate", "pendulum", "--method", "rattle", "--dt", "0.01",
                     "--t-end", "0.5"])
    assert code == 0, out
    assert out.splitlines()[0].startswith("t,theta,theta_dot")


def test_rattle_names_the_off_diagonal_entry_of_the_double_pendulum():
    message = error_line(["simulate", "double_pendulum", "--method", "rattle", "--dt", "0.01"])
    assert ("the entry (theta1, theta2) depends on theta1, theta2; use --method variational"
            in message), message


# --- 5. the README's modes line is true -----------------------------------------------------


def readme_command(start: str) -> list[str]:
    """The README's command line ``start`` (then its comment), as arguments."""
    readme = Path(__file__).resolve().parents[1] / "README.md"
    (line,) = [ln for ln in readme.read_text().splitlines()
               if ln.split("#")[0].strip() == start]
    return shlex.split(line.split("#")[0])[1:]


def test_readme_modes_of_the_double_pendulum_give_its_hanging_frequencies():
    """m1 = m2, l1 = l2 (the bundled file): ω² = (g/l)(2 ∓ √2) to 1e-9, though the bundled start
    (120°, 120°) is nearest the upright equilibrium."""
    args = readme_command("lagsim modes double_pendulum")
    assert args == ["modes", "double_pendulum"]
    report = run_json(args)
    omega2 = [m["omega_squared"] for m in report["modes"]]
    expected = [G * (2 - math.sqrt(2)), G * (2 + math.sqrt(2))]
    assert omega2 == pytest.approx(expected, rel=1e-9)
    assert report["equilibrium"] == {"theta1": 0.0, "theta2": 0.0}
    assert "about the stable equilibrium nearest the initial state" in report["notes"][-1]


# --- 6. damped modes: one line per mode, natural and damped frequency -------------------------

DAMPED_1 = """
name: damped1
parameters: {m: 2.0, k: 8.0, c: 1.2}
coordinates: [x]
kinetic: 1/2*m*x_dot**2
potential: 1/2*k*x**2
dissipation: 1/2*c*x_dot**2
initial: {x: 0.1}
"""

DAMPED_2 = """
name: damped2
parameters: {m: 1.5, k: 3.0, c: 0.4}
coordinates: [x1, x2]
kinetic: 1/2*m*(x1_dot**2 + x2_dot**2)
potential: 1/2*k*x1**2 + 1/2*k*(x2 - x1)**2
dissipation: 1/2*c*(x1_dot**2 + x2_dot**2)
initial: {x1: 0.1}
"""

MIXED_2 = """
name: mixed2
parameters: {m1: 1.0, k1: 2.0, c1: 5.0, m2: 3.0, k2: 12.0, c2: 0.6}
coordinates: [x1, x2]
kinetic: 1/2*m1*x1_dot**2 + 1/2*m2*x2_dot**2
potential: 1/2*k1*x1**2 + 1/2*k2*x2**2
dissipation: 1/2*c1*x1_dot**2 + 1/2*c2*x2_dot**2
initial: {x1: 0.1}
"""


def mode_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.lstrip().startswith("mode ")) + 1
    out = []
    for line in lines[start:]:
        if not line.strip() or not line.split()[0].isdigit():
            break
        out.append(line)
    return out


def test_damped_oscillator_prints_natural_and_damped_frequency():
    m, k, c = 2.0, 8.0, 1.2
    wn = math.sqrt(k / m)
    zeta = c / (2 * math.sqrt(m * k))
    (mode,) = run_json(["modes", "-"], DAMPED_1)["modes"]
    assert mode["frequency_rad_s"] == pytest.approx(wn, rel=RTOL)
    assert mode["damped_frequency_rad_s"] == pytest.approx(wn * math.sqrt(1 - zeta**2), rel=RTOL)
    assert mode["damping_ratio"] == pytest.approx(zeta, rel=RTOL)
    code, text = run(["modes", "-"], DAMPED_1)
    assert code == 0 and "ω_n (rad/s)" in text and "ω_d (rad/s)" in text
    (line,) = mode_lines(text)
    assert float(line.split()[3]) == pytest.approx(wn * math.sqrt(1 - zeta**2), rel=1e-9)


def test_classically_damped_two_dof_oscillator_has_two_modes_with_both_frequencies():
    """M = m I, C = c I, K = k [[2, −1], [−1, 1]]: ω_n² = (k/m)(3 ∓ √5)/2, ζ = c/(2 m ω_n)."""
    m, k, c = 1.5, 3.0, 0.4
    report = run_json(["modes", "-"], DAMPED_2)
    assert report["degrees_of_freedom"] == 2 and len(report["modes"]) == 2
    for mode, sign in zip(report["modes"], (-1, 1)):
        wn = math.sqrt(k / m * (3 + sign * math.sqrt(5)) / 2)
        zeta = c / (2 * m * wn)
        assert mode["frequency_rad_s"] == pytest.approx(wn, rel=RTOL)
        assert mode["damping_ratio"] == pytest.approx(zeta, rel=RTOL)
        assert mode["damped_frequency_rad_s"] == pytest.approx(wn * math.sqrt(1 - zeta**2),
                                                               rel=RTOL)


def test_an_overdamped_and_a_damped_dof_give_two_lines_not_three():
    """x1 overdamped (c1² > 4 m1 k1): roots (−c1 ± √(c1² − 4m1k1))/2m1 make one mode with
    ω_n = √(k1/m1), ζ = c1/(2√(m1k1)); x2 damped at ω_d = ω_n √(1 − ζ²)."""
    code, text = run(["modes", "-"], MIXED_2)
    assert code == 0, text
    assert "2 degrees of freedom" in text
    assert len(mode_lines(text)) == 2, text
    modes = {m["kind"]: m for m in run_json(["modes", "-"], MIXED_2)["modes"]}
    slow = modes["overdamped"]
    assert slow["frequency_rad_s"] == pytest.approx(math.sqrt(2.0), rel=RTOL)
    assert slow["damping_ratio"] == pytest.approx(5.0 / (2 * math.sqrt(2.0)), rel=RTOL)
    root = math.sqrt(25.0 - 8.0)
    assert sorted(-s["re"] for s in slow["eigenvalues"]) == pytest.approx(
        [(5.0 - root) / 2, (5.0 + root) / 2], rel=RTOL)
    wn, zeta = 2.0, 0.6 / (2 * math.sqrt(36.0))
    assert modes["damped"]["damped_frequency_rad_s"] == pytest.approx(
        wn * math.sqrt(1 - zeta**2), rel=RTOL)


# --- 7. mode shapes respect velocity constraints ----------------------------------------------


def test_rolling_disk_mode_shape_rolls_without_slipping():
    """rolling_disk_line at rest (τ = 0): ẋ = R cos α φ̇, ẏ = R sin α φ̇. Its one mode is
    rolling, δq ∝ (R cos α, R sin α, 1); every printed mode shape satisfies a·δq = 0."""
    radius, alpha = 0.5, 0.5235987755982988
    report = run_json(["modes", "rolling_disk_line", "--set", "tau=0"])
    assert report["degrees_of_freedom"] == 1 and len(report["modes"]) == 1
    for mode in report["modes"]:
        shape = mode["shape"]
        assert abs(shape["x"] - radius * math.cos(alpha) * shape["phi"]) <= 1e-12
        assert abs(shape["y"] - radius * math.sin(alpha) * shape["phi"]) <= 1e-12
        assert max(abs(v) for v in shape.values()) == pytest.approx(1.0, abs=1e-15)


def test_skate_with_a_spring_freezes_the_sideways_direction_and_moves_by_its_rates():
    """The skate (ẋ sin ψ − ẏ cos ψ = 0) with a spring k on x and y, at ψ = 0: x oscillates
    at √(k/m), ψ turns freely (a neutral mode, δq = (0, 0, 1), allowed since ẏ = 0), and a
    sideways displacement y stays: a frozen direction, not a mode."""
    skate = SPRING_SKATE
    report = run_json(["modes", "-", "--at", "x=0, y=0, psi=0"], skate)
    kinds = sorted(m["kind"] for m in report["modes"])
    assert kinds == ["neutral", "oscillatory"]
    for mode in report["modes"]:
        assert abs(mode["shape"]["y"]) <= 1e-12
    (frozen,) = report["frozen"]
    assert frozen["shape"] == {"x": 0.0, "y": 1.0, "psi": 0.0}


# --- 8. inertia on the motions the constraints allow ------------------------------------------

ROD = """
name: rod_body
parameters: {m: 1.0, L: 1.0, g: 9.81}
coordinates: [x1, y1, x2, y2]
masses:
  rod:
    mass: m
    position: [(x1 + x2)/2, (y1 + y2)/2]
    inertia: m*L**2/12
    angle: atan2(y2 - y1, x2 - x1)
gravity: [0, -g]
constraints:
  - name: length
    holonomic: (x2 - x1)**2 + (y2 - y1)**2 - L**2
initial: {x1: 0, y1: 0, x2: 1, y2: 0, y2_dot: 1}
"""

PULLEY = """
name: pulley
parameters: {m1: 1.0, m2: 3.0, g: 9.81, l: 4.0, d: 0.5}
coordinates: [y1, yp, y2]
masses:
  a: {mass: m1, position: [0, y1]}
  b: {mass: m2, position: [1, y2]}
gravity: [0, -g]
constraints:
  - name: rope
    holonomic: -y1 - 2*yp - l
  - name: hanger
    holonomic: y2 - yp + d
initial: {y1: -1, yp: -1.5, y2: -2}
"""


def last_row(out: str) -> dict[str, float]:
    lines = out.strip().splitlines()
    return dict(zip(lines[0].split(","), (float(x) for x in lines[-1].split(","))))


def test_rod_written_as_one_body_over_its_ends_flies_as_a_rigid_body():
    """No stretch in T (the constraint removes it): the free rod's centre falls from (1/2, 0)
    with velocity (0, 1/2) and it turns at 1 rad/s: x1,2 = 1/2 ∓ ½cos t,
    y1,2 = t/2 − g t²/2 ∓ ½ sin t."""
    result = CliRunner().invoke(
        main, ["simulate", "-", "--t-end", "1"], input=ROD)
    assert result.exit_code == 0, result.output + result.stderr
    assert "singular at the start along δq = (x1: 1, x2: -1)" in result.stderr
    row = last_row(result.stdout)
    t = row["t"]
    centre_y = t / 2 - G * t * t / 2
    expected = {"x1": 0.5 - 0.5 * math.cos(t), "x2": 0.5 + 0.5 * math.cos(t),
                "y1": centre_y - 0.5 * math.sin(t), "y2": centre_y + 0.5 * math.sin(t)}
    for name, value in expected.items():
        assert row[name] == pytest.approx(value, abs=1e-6), name


def test_rod_without_rotational_inertia_blames_the_turning_not_the_stretch():
    """A point mass at the centre: the allowed motion without inertia is the rod turning,
    δq ∝ (y1: 1, y2: −1) at the horizontal start, not x1 (the stretch, which the rod removes)."""
    text = ROD.replace("    inertia: m*L**2/12\n", "").replace(
        "    angle: atan2(y2 - y1, x2 - x1)\n", "")
    message = error_line(["simulate", "-", "--t-end", "1"], text)
    assert ("on the motions the constraints allow: the kinetic energy gives no inertia to "
            "δq = (y1: 1, y2: -1)" in message), message
    assert "give y1 a mass or inertia" in message


def test_massless_movable_pulley_runs_with_the_reduced_formulation():
    """Rope −y1 − 2yp = l, m2 hanging at yp − d: ÿp = −g(m2 − 2m1)/(4m1 + m2), ÿ1 = −2ÿp."""
    m1, m2 = 1.0, 3.0
    acc = -G * (m2 - 2 * m1) / (4 * m1 + m2)
    result = CliRunner().invoke(
        main, ["simulate", "-", "--t-end", "1", "--formulation", "reduced"], input=PULLEY)
    assert result.exit_code == 0, result.output + result.stderr
    row = last_row(result.stdout)
    t = row["t"]
    assert row["yp"] == pytest.approx(-1.5 + acc * t * t / 2, abs=1e-9)
    assert row["y1"] == pytest.approx(-1.0 - acc * t * t, abs=1e-9)
    assert row["y2"] == pytest.approx(-2.0 + acc * t * t / 2, abs=1e-9)


# --- 4. the equilibrium search: continuation, images, and saying when it may be incomplete ----

CHAIN5 = """
name: chain5
parameters: {m: 1.0, l: 1.0, g: 9.81}
coordinates: [a, b, c, d, e]
masses:
  p1: {mass: m, position: [l*sin(a), -l*cos(a)]}
  p2: {mass: m, position: [l*sin(a) + l*sin(b), -l*cos(a) - l*cos(b)]}
  p3: {mass: m, position: [l*sin(a) + l*sin(b) + l*sin(c), -l*cos(a) - l*cos(b) - l*cos(c)]}
  p4:
    mass: m
    position: [l*sin(a) + l*sin(b) + l*sin(c) + l*sin(d),
               -l*cos(a) - l*cos(b) - l*cos(c) - l*cos(d)]
  p5:
    mass: m
    position: [l*sin(a) + l*sin(b) + l*sin(c) + l*sin(d) + l*sin(e),
               -l*cos(a) - l*cos(b) - l*cos(c) - l*cos(d) - l*cos(e)]
gravity: [0, -g]
initial: {a: 0.1}
"""


def test_five_link_chain_has_all_thirty_two_equilibria():
    """Each link hangs down or stands up (sin θ_k = 0 for every k): 2⁵ = 32 equilibria, only
    the hanging one stable; the search found 26 and listed 24 before continuation."""
    report = run_json(["equilibria", "-"], CHAIN5)
    assert report["search_closed"] is True
    points = {tuple(round(v / math.pi) % 2 for v in e["q"].values())
              for e in report["equilibria"]}
    assert len(report["equilibria"]) == 32 and len(points) == 32
    for e in report["equilibria"]:
        for v in e["q"].values():
            assert min(abs(v), abs(abs(v) - math.pi)) <= 1e-12
    stable = [e for e in report["equilibria"] if e["stability"] == "stable"]
    assert len(stable) == 1 and all(v == 0.0 for v in stable[0]["q"].values())


def test_double_pendulum_has_its_four_equilibria():
    report = run_json(["equilibria", "double_pendulum"])
    found = sorted((round(e["q"]["theta1"], 12), round(e["q"]["theta2"], 12))
                   for e in report["equilibria"])
    pi = round(math.pi, 12)
    assert found == [(0.0, 0.0), (0.0, pi), (pi, 0.0), (pi, pi)]


def test_a_search_cut_short_says_it_may_be_incomplete():
    from lagsim.analysis.equilibria import find_equilibria
    from lagsim.spec.system import parse_spec
    from lagsim.symbolic.model import build_model

    spec = parse_spec(CHAIN5)
    report = find_equilibria(spec, build_model(spec), max_starts=20).to_dict()
    assert report["search_closed"] is False
    assert report["starts"] == 20
    assert any(note.startswith("the search may be incomplete: it stopped at 20 Newton starts")
               for note in report["notes"])
