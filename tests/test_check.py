"""`lagsim check` (issue 10): rank and degrees of freedom, redundant rows, Frobenius' test and the
conserved quantities, each against a closed form.

References: seed 002_485a91571cac8ced.txt §23.1 (the rod between two particles is holonomic, the
knife edge v₂·e₂ = 0 is not; Frobenius' criterion); Frobenius' theorem ω ∧ dω = 0 for one form
(Arnold, *Mathematical Methods of Classical Mechanics*, appendix 4); Noether's theorem (Arnold
§20): p_θ = m r² θ̇ for Kepler in polar coordinates, x p_y − y p_x in Cartesian ones, L_z of the
spherical pendulum; seed 001_80d65b968ce3cb18.txt §10.5: forces and time-dependent constraints
break the conservation of h.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner
from inline_systems import NATURAL_PENDULUM, SPHERICAL_PENDULUM_CARTESIAN, named

from lagsim.analysis.check import CheckReport, check_system
from lagsim.cli import main
from lagsim.run.columns import with_invariants
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.system import load_spec, parse_spec, read_source
from lagsim.symbolic.model import build_model

KEPLER_CARTESIAN = """
name: kepler_cartesian
parameters: {m: 1.0, mu: 1.0}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
potential: -mu*m/sqrt(x**2 + y**2)
initial: {x: 1.0, y: 0.2, x_dot: -0.1, y_dot: 1.2}
simulate: {t_end: 20}
"""

SPHERICAL_CARTESIAN = named(
    "spherical_cartesian", SPHERICAL_PENDULUM_CARTESIAN,
    "initial: {x: 0.6, y: 0, z: -0.8, x_dot: 0, y_dot: 2.0, z_dot: 0}\nsimulate: {t_end: 5}\n")

DAMPED_FREE = """
name: damped_free
parameters: {m: 1.0, c: 0.3}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
dissipation: 1/2*c*(x_dot**2 + y_dot**2)
initial: {x: 1, y_dot: 1}
"""

FREE_3D = """
name: free
parameters: {m: 2.0}
coordinates: [x, y, z]
kinetic: 1/2*m*(x_dot**2 + y_dot**2 + z_dot**2)
initial: {x: 1, y_dot: 1}
"""

INTEGRATING_FACTOR = """
name: factor
parameters: {m: 1.0}
coordinates: [x, y, z]
kinetic: 1/2*m*(x_dot**2 + y_dot**2 + z_dot**2)
constraints:
  - name: ratio
    velocity: y*x_dot - x*y_dot
initial: {x: 1, y: 2}
"""

ON_A_SURFACE = """
name: surface
parameters: {m: 1.0}
coordinates: [x, y, z]
kinetic: 1/2*m*(x_dot**2 + y_dot**2 + z_dot**2)
constraints:
  - name: plane
    holonomic: z
  - name: tilt
    velocity: x_dot + z*y_dot
initial: {x: 1, y: 2}
"""

TILT_ALONE = """
name: tilt
parameters: {m: 1.0}
coordinates: [x, y, z]
kinetic: 1/2*m*(x_dot**2 + y_dot**2 + z_dot**2)
constraints:
  - name: tilt
    velocity: x_dot + z*y_dot
initial: {x: 1, y: 2, z: 0.5}
"""

DRIVEN_SLIDER = """
name: driven
parameters: {m: 1.0}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - name: drive
    velocity: x_dot - cos(t)
initial: {x: 0.5, x_dot: 1}
"""

TURNING_BLADE = """
name: blade
parameters: {m: 1.0, w: 2.0}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - name: blade
    velocity: sin(w*t)*x_dot - cos(w*t)*y_dot
initial: {x_dot: 1}
"""


def check(source: str, **overrides: float) -> CheckReport:
    spec = parse_spec(source) if "\n" in source else load_spec(source, overrides)
    return check_system(spec, build_model(spec))


def integral(text: str) -> tuple[sp.Expr, float]:
    lhs, rhs = text.rsplit(" = ", 1)
    return sp.sympify(lhs), float(rhs)


# --- rank, degrees of freedom, redundant constraints ---------------------------------------------


def test_redundant_rod_is_named_with_the_row_it_repeats() -> None:
    """pendulum_redundant lists x² + y² − l² twice: rank 1, one degree of freedom, and
    rod_again = 1·rod."""
    report = check("pendulum_redundant")
    assert (report.rank, report.degrees_of_freedom) == (1, 1)
    (redundant,) = report.redundant
    assert redundant.name == "rod_again"
    ((name, coefficient),) = redundant.depends_on
    assert name == "rod" and coefficient == pytest.approx(1.0, abs=1e-12)


def test_double_pendulum_has_two_degrees_of_freedom() -> None:
    """Six coordinates (two angles, two string lengths, two heights) and four independent
    holonomic constraints."""
    report = check("double_pendulum_constrained")
    assert (report.n, report.rank, report.degrees_of_freedom, report.redundant) == (6, 4, 2, ())


# --- Frobenius --------------------------------------------------------------------------------


def test_rod_between_two_particles_is_holonomic_and_integrates_to_the_rod() -> None:
    """Seed 002 §23.1, first question: (r₁ − r₂)·(v₁ − v₂) = 0 is d(|r₁ − r₂|²/2) = 0, so the
    constraint is |r₁ − r₂|²/2 = l²/2."""
    report = check("rod_two_particles")
    (test,) = report.integrability
    assert test.holonomic is True and test.symbolic == "zero"
    assert test.numeric_curvature < 1e-12
    f, value = integral(test.integral)
    x1, y1, x2, y2 = sp.symbols("x1 y1 x2 y2")
    assert sp.simplify(f - ((x1 - x2) ** 2 + (y1 - y2) ** 2) / 2) == 0
    assert value == pytest.approx(0.5, rel=1e-12)


def test_knife_edge_is_nonholonomic() -> None:
    """Seed 002 §23.1, second question: the knife edge on the rod's second particle is not
    integrable on the rod's surface; the two tests agree."""
    report = check("knife_edge")
    (test,) = report.integrability
    assert test.constraints == ("rod", "knife")
    assert test.holonomic is False and test.symbolic == "nonzero"
    assert test.numeric_curvature > 1e-2
    assert (report.rank, report.degrees_of_freedom, report.configuration_dimension) == (2, 2, 3)


@pytest.mark.parametrize("name", ["skate", "chaplygin_sleigh"])
def test_skate_and_sleigh_are_nonholonomic(name: str) -> None:
    """ω = sin ψ dx − cos ψ dy: ω ∧ dω = −dx∧dy∧dψ ≠ 0 (seed 002 §23.1's knife edge)."""
    (test,) = check(name).integrability
    assert test.method == "ω ∧ dω = 0"
    assert test.holonomic is False and test.numeric_curvature > 0.1
    assert test.integral is None


def test_disk_rolling_on_a_line_is_holonomic() -> None:
    """ẋ = R cos α φ̇ and ẏ = R sin α φ̇ integrate to x − R cos α φ and y − R sin α φ."""
    report = check("rolling_disk_line")
    roll_x, roll_y, both = report.integrability
    assert all(t.holonomic for t in (roll_x, roll_y, both))
    assert both.subject == "all constraints together"
    x, y, phi, R, alpha = sp.symbols("x y phi R alpha")
    for test, expected in ((roll_x, x - R * sp.cos(alpha) * phi),
                           (roll_y, y - R * sp.sin(alpha) * phi)):
        f, value = integral(test.integral)
        assert sp.simplify(f - expected) == 0 and value == 0.0
    assert report.degrees_of_freedom == 1


def test_integrating_factor_is_found() -> None:
    """y dx − x dy is not exact but 1/y² makes it d(x/y): the constraint x/y = 1/2."""
    (test,) = check(INTEGRATING_FACTOR).integrability
    assert test.holonomic is True
    f, value = integral(test.integral)
    x, y = sp.symbols("x y")
    assert sp.simplify(sp.diff(f, x) * (-x) - sp.diff(f, y) * y) == 0
    assert value == pytest.approx(float(f.subs({x: 1, y: 2})), rel=1e-12)


def test_a_constraint_is_judged_on_the_holonomic_constraints_surface() -> None:
    """dx + z dy is nonholonomic in space (ω ∧ dω = dx∧dz∧dy) but on the plane z = 0 it is dx:
    holonomic there."""
    (on_plane,) = check(ON_A_SURFACE).integrability
    assert on_plane.constraints == ("plane", "tilt") and on_plane.holonomic is True
    (alone,) = check(TILT_ALONE).integrability
    assert alone.holonomic is False


def test_rheonomic_constraints_use_time_as_a_coordinate() -> None:
    """ẋ = cos t integrates to x − sin t = x₀; a blade turning at the rate w,
    sin(wt) ẋ − cos(wt) ẏ = 0, is nonholonomic (ω ∧ dω = −w dt∧dx∧dy)."""
    report = check(DRIVEN_SLIDER)
    (driven,) = report.integrability
    assert report.constraints[0].rheonomic
    f, value = integral(driven.integral)
    x, t = sp.symbols("x t")
    assert sp.simplify(f - (x - sp.sin(t))) == 0 and value == pytest.approx(0.5)
    (blade,) = check(TURNING_BLADE).integrability
    assert blade.holonomic is False


# --- conserved quantities ---------------------------------------------------------------------


def names(report: CheckReport) -> set[str]:
    return {i.name for i in report.invariants}


def test_kepler_polar_conserves_energy_and_p_theta() -> None:
    """h = ½m(ṙ² + r²θ̇²) − μm/r = −0.28 and p_θ = m r² θ̇ = 1.2 at the file's start."""
    report = check("kepler")
    assert names(report) == {"energy", "p_theta"}
    by = {i.name: i for i in report.invariants}
    assert by["p_theta"].value == pytest.approx(1.2, rel=1e-14)
    assert by["energy"].value == pytest.approx(0.5 * 1.2**2 - 1.0, rel=1e-14)
    r, theta_dot, m = sp.symbols("r theta_dot m")
    assert sp.simplify(sp.sympify(by["p_theta"].expression) - m * r**2 * theta_dot) == 0


def test_kepler_cartesian_conserves_x_p_y_minus_y_p_x() -> None:
    """The rotation ξ = (−y, x) is found by the linear solve: p·ξ = x p_y − y p_x."""
    report = check(KEPLER_CARTESIAN)
    assert names(report) == {"energy", "L_x_y"}
    (rotation,) = [i for i in report.invariants if i.name == "L_x_y"]
    x, y, p_x, p_y = sp.symbols("x y p_x p_y")
    assert sp.expand(sp.sympify(rotation.momentum) - (x * p_y - y * p_x)) == 0
    assert rotation.xi == ("-y", "x")
    assert rotation.value == pytest.approx(1.0 * 1.2 - 0.2 * (-0.1), rel=1e-14)


def test_spherical_pendulum_conserves_lz_in_angles_and_in_cartesian_coordinates() -> None:
    """p_φ = m l² sin²θ φ̇ (cyclic φ); with a rod in x, y, z the rotation about z is a Noether
    symmetry (Aξ = 2x(−y) + 2y x = 0) but the translations are not."""
    report = check("spherical_pendulum")
    assert names(report) == {"energy", "p_phi"}
    (lz,) = [i for i in report.invariants if i.name == "p_phi"]
    theta, phi_dot, m, length = sp.symbols("theta phi_dot m l")
    expected = m * length**2 * sp.sin(theta) ** 2 * phi_dot
    assert sp.simplify(sp.sympify(lz.expression) - expected) == 0
    cartesian = check(SPHERICAL_CARTESIAN)
    assert names(cartesian) == {"energy", "L_x_y"}
    (rotation,) = [i for i in cartesian.invariants if i.name == "L_x_y"]
    assert rotation.value == pytest.approx(0.6 * 2.0, rel=1e-12)


def test_free_particle_has_seven_invariants() -> None:
    """Energy, three momenta, three angular momenta."""
    assert names(check(FREE_3D)) == {"energy", "p_x", "p_y", "p_z", "L_x_y", "L_x_z", "L_y_z"}


@pytest.mark.parametrize("source", ["driven_damped_pendulum", DAMPED_FREE,
                                    "moving_pivot_pendulum"])
def test_damped_driven_or_rheonomic_systems_conserve_nothing(source: str) -> None:
    """No false positives: friction on a free particle kills its momenta; a driving torque and a
    moving pivot the energy."""
    report = check(source)
    assert report.invariants == ()
    assert any("energy h is not conserved" in n for n in report.notes)


def test_skate_conserves_energy_and_its_spin() -> None:
    """x and y are cyclic but the blade pushes along them; ψ is cyclic and free: p_ψ = J ψ̇."""
    report = check("skate")
    assert names(report) == {"energy", "p_psi"}
    torque = check("skate", tau=0.5)
    assert names(torque) == set()


@pytest.mark.parametrize("source", ["kepler", KEPLER_CARTESIAN, "spherical_pendulum",
                                    SPHERICAL_CARTESIAN, "knife_edge", "rod_two_particles"])
def test_invariant_columns_stay_constant(source: str) -> None:
    """Every invariant_<name> column stays at its start value to 1e-7 (rtol = atol = 1e-10)."""
    spec = parse_spec(source) if "\n" in source else load_spec(source)
    model = build_model(spec)
    options = SimulateOptions.resolve(spec.simulate, {"samples": 101, "t_end": 5})
    trajectory = with_invariants(simulate(spec, model, options), model)
    assert trajectory.extra
    for name, values in trajectory.extra:
        assert name.startswith("invariant_")
        scale = max(1.0, abs(values[0]))
        assert np.abs(values - values[0]).max() < 1e-7 * scale, name
    assert trajectory.columns[-len(trajectory.extra):] == tuple(n for n, _ in trajectory.extra)


# --- the command ------------------------------------------------------------------------------


def invoke(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, list(args), input=stdin)


def test_check_text_names_what_matters() -> None:
    result = invoke("check", "knife_edge")
    assert result.exit_code == 0, result.output
    assert "degrees of freedom: 4 − 2 = 2" in result.output
    assert "knife: nonholonomic" in result.output
    assert "energy: h = " in result.output


def test_check_json_from_stdin_with_set() -> None:
    """--set m=2 doubles p_θ = m r² θ̇; the file comes on stdin."""
    yaml_text = read_source("kepler")[0]
    result = invoke("check", "-", "--format", "json", "--set", "m=2", stdin=yaml_text)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    by = {i["name"]: i for i in data["invariants"]}
    assert by["p_theta"]["value"] == pytest.approx(2.4, rel=1e-14)
    assert data["degrees_of_freedom"] == 2 and data["integrability"] == []


def test_check_unknown_parameter_is_one_line_exit_2() -> None:
    result = invoke("check", "kepler", "--set", "nosuch=1")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lagsim: error:") and "nosuch" in lines[0]


def test_simulate_invariants_adds_the_columns() -> None:
    result = invoke("simulate", "kepler", "--invariants", "--samples", "3")
    assert result.exit_code == 0, result.output
    header, *rows = result.stdout.strip().splitlines()
    assert header.endswith(",energy,invariant_energy,invariant_p_theta")
    values = np.array([[float(x) for x in row.split(",")] for row in rows])
    assert np.allclose(values[:, -1], 1.2, rtol=1e-8)
    assert math.isclose(values[0, -2], values[0, -3])


def test_plot_invariants(tmp_path) -> None:
    """From a system (it simulates with --invariants) a PNG; from a CSV without invariant
    columns one error line, exit 2."""
    out = tmp_path / "inv.png"
    result = invoke("plot", "kepler", "--kind", "invariants", "--t-end", "2", "--samples", "50",
                    "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:4] == b"\x89PNG"
    csv = invoke("simulate", "pendulum", "--samples", "3").stdout
    result = invoke("plot", "-", "--kind", "invariants", "-o", str(out), stdin=csv)
    assert result.exit_code == 2
    assert "no invariant_* columns" in result.output


def test_invariants_of_a_csv_from_its_system(tmp_path) -> None:
    """A CSV written without --invariants, with --system: the columns are computed from q, q̇;
    p_θ = m r² θ̇ stays 1.2."""
    from lagsim.output.io import read_csv
    from lagsim.run.columns import table_with_invariants

    csv = tmp_path / "kepler.csv"
    assert invoke("simulate", "kepler", "--samples", "50", "-o", str(csv)).exit_code == 0
    table = table_with_invariants(read_csv(csv), build_model(load_spec("kepler")))
    assert table.columns[-2:] == ("invariant_energy", "invariant_p_theta")
    assert np.allclose(table.column("invariant_p_theta"), 1.2, rtol=1e-8)
    out = tmp_path / "inv.png"
    result = invoke("plot", str(csv), "--kind", "invariants", "--system", "kepler", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_check_help_has_an_example() -> None:
    result = invoke("check", "--help")
    assert result.exit_code == 0
    assert "Example:" in result.output and "lagsim check " in result.output
    assert "--invariants" in invoke("simulate", "--help").output


TRIG_EXACT = """
name: trig
parameters: {m: 1.0}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
constraints:
  - name: slope
    velocity: cos(x)*x_dot + y_dot
initial: {x: 0.5, y: 1}
"""

MAGNETIC = """
name: magnetic
parameters: {m: 1.0, e: 1.0, B: 2.0}
coordinates: [x, y]
kinetic: 1/2*m*(x_dot**2 + y_dot**2)
forces:
  x: e*B*y_dot
  y: -e*B*x_dot
initial: {x_dot: 1}
"""


def test_an_exact_form_beyond_powers_is_integrated_by_sympy() -> None:
    """cos x dx + dy = d(sin x + y): the constraint y + sin x = 1 + sin ½."""
    (test,) = check(TRIG_EXACT).integrability
    f, value = integral(test.integral)
    x, y = sp.symbols("x y")
    assert sp.simplify(f - (y + sp.sin(x))) == 0
    assert value == pytest.approx(1 + math.sin(0.5), rel=1e-12)


def test_a_force_that_does_no_work_keeps_the_energy() -> None:
    """The Lorentz force e B (ẏ, −ẋ) has τ·q̇ = 0: h = ½m(ẋ² + ẏ²) is conserved; p_x and p_y
    are not (the force acts along x and y)."""
    report = check(MAGNETIC)
    assert names(report) == {"energy"}
    assert report.invariants[0].value == pytest.approx(0.5)


ROD_TWICE = named("rod_twice", NATURAL_PENDULUM, """\
  - name: rod_rate
    velocity: x*x_dot + y*y_dot
initial: {x: 0.6, y: -0.8}
""")
"""The natural pendulum with the rod's rate as a second, velocity constraint."""


def test_a_velocity_row_implied_by_a_holonomic_one() -> None:
    """x ẋ + y ẏ = ½ d/dt(x² + y² − l²): the row is ½ of the rod's (redundant), holonomic, and
    integrates to (x² + y²)/2 = l²/2."""
    report = check(ROD_TWICE)
    (redundant,) = report.redundant
    assert redundant.name == "rod_rate"
    assert dict(redundant.depends_on)["rod"] == pytest.approx(0.5, rel=1e-12)
    (test,) = report.integrability
    assert test.holonomic is True
    f, value = integral(test.integral)
    x, y = sp.symbols("x y")
    assert sp.simplify(f - (x**2 + y**2) / 2) == 0 and value == pytest.approx(0.5)


TURNING_DISK = """
name: turning_disk
parameters: {m: 1.0, R: 0.5, J: 0.1, K: 0.05}
coordinates: [x, y, theta, phi]
kinetic: 1/2*m*(x_dot**2 + y_dot**2) + 1/2*J*phi_dot**2 + 1/2*K*theta_dot**2
constraints:
  - name: roll_x
    velocity: x_dot - R*cos(theta)*phi_dot
  - name: roll_y
    velocity: y_dot - R*sin(theta)*phi_dot
initial: {phi_dot: 1, x_dot: 0.5}
"""


def test_a_rolling_disk_that_turns_is_nonholonomic() -> None:
    """The vertical disk free to turn (heading θ): dx − R cos θ dφ has ω ∧ dω =
    R sin θ dx∧dθ∧dφ ≠ 0, and the pair brackets out of the distribution: nonholonomic, unlike
    rolling_disk_line. It keeps its energy, its spin p_θ = K θ̇ but no translation momentum."""
    report = check(TURNING_DISK)
    roll_x, roll_y, both = report.integrability
    assert roll_x.holonomic is False and roll_y.holonomic is False and both.holonomic is False
    assert both.method == "Lie brackets of a null-space basis" and both.numeric_curvature > 1e-2
    assert report.degrees_of_freedom == 2
    assert names(report) == {"energy", "p_theta"}
    data = json.loads(report.to_json())
    assert [t["verdict"] for t in data["integrability"]] == ["nonholonomic"] * 3


@pytest.mark.parametrize(("row", "holonomic"), [
    ("(y4 - y3)*x4_dot - (x4 - x3)*y4_dot", False),
    ("x4_dot - x3_dot", True),
])
def test_many_rows_are_judged_by_the_numeric_curvature(row: str, holonomic: bool) -> None:
    """The 4-chain in natural coordinates plus a fifth, velocity row: past four rows only the
    numeric test runs, and says so. A blade on the last mass along the last rod is not
    integrable; keeping the last rod's ends at one horizontal distance is (x₄ − x₃ = const)."""
    import yaml

    from lagsim.spec.chains import chain_yaml

    doc = yaml.safe_load(chain_yaml(4, natural=True))
    doc["constraints"].append({"name": "extra", "velocity": row})
    (test,) = check(yaml.safe_dump(doc)).integrability
    assert test.symbolic == "skipped" and "numeric test decides" in test.note
    assert test.holonomic is holonomic
    if holonomic:
        assert test.integral.startswith("-x3 + x4 = ")
