"""Linearization about a steady motion (relative equilibrium; lagsim.analysis.steady, issue 24),
against closed forms computed here from the textbook formulas, never taken from lagsim.

* Sleeping top (a symmetric top on a fixed point, in XYZ Tait–Bryan angles a, b, c, not singular
  upright, spinning at ω3 about its upright symmetry axis z): with I1' = I1 + m l² about the
  pivot, the small tilts (a, b) obey I1' ä + I3ω3 ḃ − m g l a = 0, I1' b̈ − I3ω3 ȧ − m g l b = 0
  (Goldstein, Classical Mechanics, 3rd ed., §5.7; Maxwell's criterion), so the eigenvalues are
  the roots of I1' s² ∓ i I3ω3 s − m g l = 0: s = i(±I3ω3 ± √(I3²ω3² − 4 I1' m g l))/(2 I1'),
  and the top is stable iff I3²ω3² > 4 I1' m g l; the spin rate ċ adds one zero eigenvalue.
* Heavy top's steady precession (ZXZ, θ = 0.5, the bundled heavy_top): the precession rate φ̇
  solves (I1' − I3) cos θ φ̇² − I3 ψ̇ φ̇ + m g l = 0 (Goldstein §5.7 eq. 5.76 in these
  variables), and the nutation frequency is √(U_eff''(θ)/I1') of tests/test_rigid_bodies.py.
* Chaplygin sleigh moving straight at speed v (the bundled chaplygin_sleigh): with J = I + m a²
  its turning rate ω obeys J ω̇ = −m a u ω and u̇ = a ω² (Bloch, Nonholonomic Mechanics and
  Control, §1.7), so about u = v, ω = 0 the one non-zero eigenvalue is −m a v / J.
* Thin uniform coin rolling upright at speed v = RΩ (hand-written no-slip rows): with A = mR²/4
  about a diameter and C = mR²/2 about the axle, the lean θ and the heading rate ψ̇ obey
  (A + mR²) θ̈ = m g R θ − (C + mR²) Ω ψ̇ and A ψ̈ = C Ω θ̇ (O'Reilly, Nonlinear Dynamics 10
  (1996) 287–305, §4; Neimark and Fufaev, Dynamics of Nonholonomic Systems, ch. III), so
  λ [A(A + mR²) λ² + C(C + mR²) Ω² − A m g R] is the characteristic polynomial of (θ, θ̇, ψ̇):
  stable iff v² > A m g R³ / (C(C + mR²)) = gR/3.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sympy
from click.testing import CliRunner

from lagsim import api
from lagsim.cli import main
from lagsim.errors import InputError

RTOL = 1e-10

TOP = """
name: sleeping_top
parameters: {m: 1.0, g: 9.81, l: 0.5, I1: 0.2, I3: 0.3, w3: 30.0}
coordinates: [a, b, c]
masses:
  top:
    mass: m
    position: [l*sin(b), -l*sin(a)*cos(b), l*cos(a)*cos(b)]
    orientation: {euler: XYZ, angles: [a, b, c]}
    inertia: [I1, I1, I3]
gravity: [0, 0, -g]
steady: {a: 0, b: 0, c_dot: w3}
"""

COIN = """
name: coin
parameters: {m: 1.0, g: 9.81, R: 0.1, v: 1.0}
coordinates: [x, y, psi, theta, phi]
masses:
  coin:
    mass: m
    position: [x + R*sin(psi)*sin(theta), y - R*cos(psi)*sin(theta), R*cos(theta)]
    orientation: {euler: ZXY, angles: [psi, theta, phi]}
    inertia: [m*R**2/4, m*R**2/2, m*R**2/4]
gravity: [0, 0, -g]
constraints:
  - name: roll_x
    velocity: x_dot - R*cos(psi)*phi_dot
  - name: roll_y
    velocity: y_dot - R*sin(psi)*phi_dot
steady: {theta: 0, psi: 0, phi_dot: v/R}
"""

COIN_Z = """
name: coin_z
parameters: {m: 1.0, g: 9.81, R: 0.1, v: 1.0}
coordinates: [x, y, z, psi, theta, phi]
masses:
  coin:
    mass: m
    position: [x + R*sin(psi)*sin(theta), y - R*cos(psi)*sin(theta), z]
    orientation: {euler: ZXY, angles: [psi, theta, phi]}
    inertia: [m*R**2/4, m*R**2/2, m*R**2/4]
gravity: [0, 0, -g]
constraints:
  - name: height
    holonomic: z - R*cos(theta)
  - name: roll_x
    velocity: x_dot - R*cos(psi)*phi_dot
  - name: roll_y
    velocity: y_dot - R*sin(psi)*phi_dot
initial: {z: 0.1}
steady: {psi: 0, phi_dot: v/R}
"""
"""The same coin with its centre's height z a coordinate held by a holonomic constraint: the
steady motion solves θ (and z) and the tangent space includes δz = −R sin θ δθ."""


def nonzero(values: list[complex], scale: float) -> list[complex]:
    return sorted((s for s in values if abs(s) > 1e-9 * scale),
                  key=lambda s: (round(s.real, 6), s.imag))


def matches(got: list[complex], want: list[complex]) -> None:
    assert len(got) == len(want)
    for s in want:
        best = min(got, key=lambda g: abs(g - s))
        assert abs(best - s) <= RTOL * abs(s), (best, s)


def eigenvalues(report: object) -> list[complex]:
    return [complex(e["re"], e["im"]) for e in report.to_dict()["eigenvalues"]]  # type: ignore


def top_roots(w3: float) -> list[complex]:
    m, g, l, I1, I3 = 1.0, 9.81, 0.5, 0.2, 0.3
    I1p, mgl = I1 + m * l * l, m * g * l
    out = []
    for sign in (1.0, -1.0):
        out += [complex(r) for r in np.roots([I1p, -sign * 1j * I3 * w3, -mgl])]
    return out


@pytest.mark.parametrize("w3", [30.0, 12.0, 9.0, 5.0])
def test_sleeping_top_against_maxwells_criterion(w3: float) -> None:
    """Four eigenvalues against the closed-form roots to 1e-10 relative, one zero (the spin
    rate), and the verdict flips at I3²ω3² = 4 I1' m g l (ω3 = 9.905 here)."""
    report = api.load(TOP, w3=w3).modes()
    values = eigenvalues(report)
    want = top_roots(w3)
    assert len(values) == 5
    matches(nonzero(values, max(abs(s) for s in want)), want)
    assert sum(1 for s in values if s == 0) == 1
    stable = (0.3 * w3) ** 2 > 4 * 0.45 * 9.81 * 0.5
    assert report.stability.startswith("linearly stable") == stable
    assert (report.stability == "unstable") == (not stable)
    if stable:
        slow, fast = sorted(m.frequency for m in report.modes)
        root = math.sqrt((0.3 * w3) ** 2 - 4 * 0.45 * 4.905)
        assert fast == pytest.approx((0.3 * w3 + root) / 0.9, rel=RTOL)
        assert slow == pytest.approx((0.3 * w3 - root) / 0.9, rel=RTOL)


def top_values() -> tuple[float, float, float, float]:
    m, g, l, I1, I3 = 1.0, 9.81, 0.5, 0.2, 0.3
    return I1 + m * l * l, I3, m * g * l, I1


@pytest.mark.parametrize("given", ["theta=0.5, psi_dot=30", "theta=0.5, phi_dot=PHD"])
def test_heavy_top_steady_precession_and_nutation(given: str) -> None:
    """Given θ and ψ̇ the solved φ̇ is the slow root of the textbook quadratic (given φ̇, ψ̇ comes
    back as 30); the nutation frequency is √(U_eff''/I1') to 1e-9; two zero eigenvalues whose
    directions are tangent to the family of steady precessions, the surface
    g(θ, φ̇, ψ̇) = (I1' − I3) cos θ φ̇² − I3 ψ̇ φ̇ + m g l = 0 (∇g · d = 0)."""
    I1p, I3, mgl, _ = top_values()
    th0, psd = 0.5, 30.0
    a, b = (I1p - I3) * math.cos(th0), -I3 * psd
    phd = float(np.real(sorted(np.roots([a, b, mgl]), key=abs)[0]))
    report = api.load("heavy_top").modes(steady=given.replace("PHD", repr(phd)))
    rates = report.to_dict()["steady"]["rates"]
    assert rates["phi_dot"] == pytest.approx(phd, rel=1e-9)
    assert rates["psi_dot"] == pytest.approx(psd, rel=1e-9)
    assert abs(a * rates["phi_dot"] ** 2 + b * rates["phi_dot"] + mgl) < 1e-9 * mgl
    w3 = psd + phd * math.cos(th0)
    p_psi = I3 * w3
    p_phi = I1p * phd * math.sin(th0) ** 2 + p_psi * math.cos(th0)
    th = sympy.Symbol("theta")
    u_eff = ((p_phi - p_psi * sympy.cos(th)) ** 2 / (2 * I1p * sympy.sin(th) ** 2)
             + mgl * sympy.cos(th))
    assert abs(float(sympy.diff(u_eff, th).subs(th, th0))) < 1e-9
    omega_n = math.sqrt(float(sympy.diff(u_eff, th, 2).subs(th, th0)) / I1p)
    (mode,) = report.modes
    assert mode.kind == "oscillatory"
    assert mode.frequency == pytest.approx(omega_n, rel=1e-9)
    values = eigenvalues(report)
    assert sorted(v.imag for v in values) == pytest.approx([-omega_n, 0, 0, omega_n], rel=1e-9)
    zeros = report.to_dict()["zero_eigenvalues"]
    assert zeros["count"] == 2 and len(zeros["null_directions"]) == 2
    grad = {"theta": -(I1p - I3) * math.sin(th0) * phd ** 2,
            "phi_dot": 2 * a * phd + b, "psi_dot": -I3 * phd}
    for direction in zeros["null_directions"]:
        assert abs(sum(grad[k] * direction[k] for k in grad)) < 1e-9 * sum(map(abs,
                                                                              grad.values()))


@pytest.mark.parametrize("v", [1.0, 2.5, -1.0])
def test_chaplygin_sleigh_moving_straight(v: float) -> None:
    """Nonholonomic: the one non-zero eigenvalue is −m a v/(I + m a²) (forward: decaying, the
    sleigh straightens; backward: unstable), the others zero."""
    m, I, a = 1.0, 0.5, 0.5
    report = api.load("chaplygin_sleigh").modes(steady={"theta": 0.0, "x_dot": v})
    values = eigenvalues(report)
    want = -m * a * v / (I + m * a * a)
    (got,) = nonzero(values, abs(want))
    assert got.imag == 0 and got.real == pytest.approx(want, rel=RTOL)
    assert len(values) == 3
    assert report.stability.startswith("asymptotically stable" if v > 0 else "unstable")


def coin_root(v: float) -> complex:
    """The lean root √(−ω²) of the upright coin (module docstring), Im ≥ 0 or Re > 0."""
    m, g, R = 1.0, 9.81, 0.1
    A, C = m * R * R / 4, m * R * R / 2
    omega = v / R
    w2 = (C * (C + m * R * R) * omega ** 2 - A * m * g * R) / (A * (A + m * R * R))
    return complex(0.0, math.sqrt(w2)) if w2 > 0 else complex(math.sqrt(-w2), 0.0)


@pytest.mark.parametrize("text", [COIN, COIN_Z], ids=["coin", "coin_z"])
@pytest.mark.parametrize("v", [1.0, 0.6, 0.5, 0.2])
def test_upright_rolling_coin_stable_iff_v_squared_above_gR_over_3(v: float, text: str) -> None:
    """The coin with hand-written no-slip rows: the lean pair ±s against the closed form to
    1e-10, three zero eigenvalues (heading, speed, the family of tilted circles), stable iff
    v² > gR/3 (0.327 m²/s² here: v = 0.6 stable, 0.5 not)."""
    report = api.load(text, v=v).modes()
    assert report.to_dict()["steady"]["coordinates"]["theta"] == 0.0
    values = eigenvalues(report)
    s = coin_root(v)
    matches(nonzero(values, abs(s)), [s, -s] if s.real else [s, s.conjugate()])
    assert sum(1 for x in values if x == 0) == 3
    stable = v * v > 9.81 * 0.1 / 3
    assert (report.stability == "unstable") == (not stable)


def test_the_coin_threshold_is_gR_over_3() -> None:
    """The closed form's threshold v² = A m g R³/(C(C + mR²)) is gR/3 for a thin uniform disk."""
    m, g, R = sympy.symbols("m g R", positive=True)
    A, C = m * R ** 2 / 4, m * R ** 2 / 2
    assert sympy.simplify(A * m * g * R ** 3 / (C * (C + m * R ** 2)) - g * R / 3) == 0


def test_cli_json_eigenvalues_follow_set_and_are_sorted() -> None:
    """`lagsim modes FILE --set v=... --format json` about the file's steady: gives every
    eigenvalue as {re, im}, real part descending, then imaginary; --set v moves the steady
    motion (the coin at v = 0.5 is unstable, at 1 stable)."""
    out = {}
    for v in (0.5, 1.0):
        code, text = run(["modes", "system.yaml", "--set", f"v={v}", "--format", "json"])
        assert code == 0, text
        out[v] = json.loads(text)
    for v, data in out.items():
        values = [complex(e["re"], e["im"]) for e in data["eigenvalues"]]
        assert values == sorted(values, key=lambda s: (-s.real, -s.imag))
        assert data["steady"]["rates"]["phi_dot"] == pytest.approx(v / 0.1, rel=1e-15)
        s = coin_root(v)
        assert min(abs(x - s) for x in values) <= RTOL * abs(s)
    assert out[0.5]["stability"] == "unstable"
    assert out[1.0]["stability"].startswith("linearly stable")


def test_derive_linear_about_the_steady_motion() -> None:
    """`derive --form linear` about the file's steady: its reduced state matrix A has the
    sleeping top's eigenvalues."""
    form = api.load(TOP).derive("linear", format=None)
    items = {item.label: item for item in form.items}
    A = np.array(items["A"].value.tolist(), dtype=float)
    matches(nonzero([complex(s) for s in np.linalg.eigvals(A)], 20.0), top_roots(30.0))


def run(args: list[str], text: str = COIN) -> tuple[int, str]:
    """Exit code and output of ``lagsim ARGS`` with ``text`` as system.yaml in the current
    folder (each test below runs in its own ``tmp_path``)."""
    with open("system.yaml", "w") as handle:
        handle.write(text)
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]


def test_a_rate_of_a_coordinate_that_is_not_ignorable_is_refused() -> None:
    code, out = run(["modes", "system.yaml", "--steady", "psi_dot=1"])
    assert code == 2
    assert "--steady: 'psi_dot' = 1 turns psi, but psi is not ignorable" in out
    code, out = run(["modes", "system.yaml"], COIN.replace("phi_dot: v/R", "theta_dot: 2"))
    assert code == 2
    assert "system.yaml:17:39: 'theta_dot' = 2 turns theta, but theta is not ignorable" in out


def test_an_unknown_name_in_steady_is_refused() -> None:
    code, out = run(["modes", "system.yaml", "--steady", "phi_dto=3"])
    assert code == 2
    assert "--steady: 'phi_dto' is not a coordinate or velocity here" in out
    code, out = run(["modes", "system.yaml"], COIN.replace("theta: 0,", "tehta: 0,"))
    assert code == 2 and "system.yaml:17:10: 'steady' names 'tehta'" in out


def test_a_motion_that_is_not_a_relative_equilibrium_names_its_largest_residual() -> None:
    """A coin leaning 0.1 rad at speed 1 falls: θ̈ = (m g R sin θ ...)/(A + mR²) ≠ 0."""
    code, out = run(["modes", "system.yaml", "--steady", "theta=0.1"])
    assert code == 2
    assert "is not a relative equilibrium: the largest residual is theta_ddot = 7.83" in out
    with pytest.raises(InputError, match="largest residual is b_ddot"):
        api.load(TOP).modes(steady={"b": 0.2})


def test_a_time_dependent_system_is_refused() -> None:
    with pytest.raises(InputError, match=r"explicitly time-dependent \(t appears in the force "
                                         r"on theta\)"):
        api.load("driven_damped_pendulum").modes(steady={"theta": 0.0})


def test_rest_modes_are_unchanged_without_steady() -> None:
    """Without steady: (file or argument) `modes` is about rest as before: the heavy top has no
    steady: and its report is the rest one (M0, K), not the steady one."""
    report = api.load("pendulum").modes()
    assert hasattr(report, "M0") and not hasattr(report, "eigenvalues")


def test_steady_is_refused_by_a_form_that_does_not_linearize() -> None:
    code, out = run(["derive", "system.yaml", "--form", "matrix", "--steady", "theta=0"])
    assert code == 2 and "--steady: --steady is the steady motion of the linear form" in out


def test_a_singular_point_of_the_coordinates_is_refused() -> None:
    """ZXZ Euler angles are singular at θ = 0 (φ and ψ turn about the same axis): M is singular
    there, and the sleeping heavy_top cannot be linearized in them."""
    with pytest.raises(InputError, match="the mass matrix is singular at the steady motion"):
        api.load("heavy_top").modes(steady="theta=0, psi_dot=30")


def test_plot_of_steady_modes_is_refused_and_at_overrides_the_file() -> None:
    """--plot draws rest modes only (said, not ignored); --at gives coordinates' values over the
    file's steady: (a coin leaning 0.1 rad does not roll steadily: the residual names θ̈)."""
    code, out = run(["modes", "system.yaml", "--plot", "-o", "m.png"])
    assert code == 2 and "--plot: --plot draws modes about rest" in out
    code, out = run(["modes", "system.yaml", "--at", "theta=0.1"])
    assert code == 2 and "--at: the steady motion psi=0, theta=0.1, phi_dot=10 is not a" in out


@pytest.mark.parametrize("text", [COIN_Z, TOP], ids=["coin_z", "top"])
def test_the_exact_map_agrees_with_differences_of_the_simulators_accelerations(text: str
                                                                                ) -> None:
    """An independent path: q̈(q, q̇) from the compiled model `simulate` uses
    (lagsim.numeric.compile, [M Aᵀ; A 0] solved numerically), differenced centrally at the
    steady motion along each state variable, agrees with the exact map L to the differences'
    own error (h = 1e-5: ~1e-8 of the largest entry)."""
    from lagsim.analysis.steady import reduce, steady_motion
    from lagsim.numeric.compile import compile_model

    system = api.load(text)
    spec, model = system.spec, system.model
    motion = steady_motion(model, dict(spec.steady), dict(spec.steady_locations), spec,
                           dict(zip(spec.coordinates, spec.initial_state()[0])))
    reduced = reduce(motion)
    numeric = compile_model(model)
    n = model.n

    def qdd(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        M, F, A, b = numeric.dynamics(0.0, q, qd)
        S = np.block([[M, A.T], [A, np.zeros((len(b), len(b)))]])
        return np.linalg.lstsq(S, np.concatenate([F, b]), rcond=None)[0][:n]

    shape = motion.eqs.shape
    h = 1e-5
    L = reduced.L
    for j in range(len(shape) + n):
        step_q, step_v = np.zeros(n), np.zeros(n)
        if j < len(shape):
            step_q[shape[j]] = h
        else:
            step_v[j - len(shape)] = h
        column = (qdd(motion.q + step_q, motion.qd + step_v)
                  - qdd(motion.q - step_q, motion.qd - step_v)) / (2 * h)
        assert np.max(np.abs(column - L[len(shape):, j])) < 1e-6 * np.max(np.abs(L))


@pytest.mark.parametrize("v", [1.0, 0.5])
def test_the_bundled_rolling_disk_with_no_slip_rows_agrees(v: float) -> None:
    """The bundled rolling_disk (its no-slip rows written by `no_slip`, its x, y the centre) has
    the same upright lean roots as the hand-written coin: the closed form to 1e-10."""
    report = api.load("rolling_disk").modes(steady={"lean": 0.0, "yaw": 0.0,
                                                    "spin_dot": v / 0.1})
    s = coin_root(v)
    matches(nonzero(eigenvalues(report), abs(s)), [s, -s] if s.real else [s, s.conjugate()])
