"""``lagsim lyapunov`` (issue 28): the spectrum by tangent dynamics and periodic QR (Benettin et
al. 1980) held to what linear algebra and Liouville's theorem say exactly, at finite T:

- Σ λ_i (T − t₀) = log|det Φ(T)| = ∫ tr J dt: for a Lagrangian system in (q, q̇), whose flow keeps
  the volume of (q, p) with p = M(q) q̇, that is log det M(q(t₀)) − log det M(q(T)); with
  constant M and a damping c it is −c (T − t₀)/m l²;
- on a constraint manifold of dimension d = 2n − 2m_h − m_v only d exponents come out, the same as
  in independent coordinates: the pendulum in (x, y) with x² + y² = l² gives two, both within the
  shear bound of an integrable motion like the pendulum in θ, and the double pendulum in the four
  Cartesian coordinates of its bobs is as chaotic as in its two angles;
- for a linear system the tangent flow is e^{At}: the harmonic oscillator ẍ = −ω²x stretches by
  at most max(ω, 1/ω), so every running estimate is within log(max(ω, 1/ω))/t of 0, and the
  damped ẍ + 3ẋ + 2x = 0 gives s = −1, −2 up to O(1/T).
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lagsim import api
from lagsim.cli import main
from lagsim.errors import InputError


def system(text: str) -> api.System:
    return api.open_system(textwrap.dedent(text), api=True)


def test_the_harmonic_oscillators_exponents_are_zero_within_its_bounded_stretch() -> None:
    omega = 2.0
    osc = system(f"""\
        coordinates: [x]
        kinetic: 1/2*x_dot**2
        potential: 1/2*{omega ** 2}*x**2
        initial: {{x: 1}}
        """)
    report = osc.lyapunov(t_end=60.0, renormalize=0.5)
    bound = math.log(omega)
    for t, row in zip(report.trace_times, report.trace):
        assert all(abs(x) <= bound / t + 1e-9 for x in row), (t, row)
    assert abs(sum(report.exponents)) < 1e-9


@pytest.mark.parametrize(("c", "k", "expected"), [(3.0, 2.0, (-1.0, -2.0)),
                                                  (0.2, 4.0, (-0.1, -0.1))])
def test_a_damped_linear_system_gives_the_real_parts_of_its_eigenvalues(
        c: float, k: float, expected: tuple[float, float]) -> None:
    damped = system(f"""\
        coordinates: [x]
        kinetic: 1/2*x_dot**2
        potential: 1/2*{k}*x**2
        dissipation: 1/2*{c}*x_dot**2
        initial: {{x: 1}}
        """)
    report = damped.lyapunov(t_end=400.0, renormalize=2.0)
    assert report.exponents == pytest.approx(expected, abs=0.01)
    assert sum(report.exponents) == pytest.approx(-c, rel=1e-9)


def test_the_double_pendulums_volume_and_pairs() -> None:
    """Chaotic from its bundled start: λ₁ > 1, the exponents in ± pairs within their spreads,
    their sum the change of −log det M, M = [[2, cos Δ], [cos Δ, 1]] (m = l = 1)."""
    pendulum = api.open_system("double_pendulum")
    report = pendulum.lyapunov(t_end=40.0, renormalize=0.5)
    lam = report.exponents
    assert lam[0] > 1.0 and lam == tuple(sorted(lam, reverse=True))

    def log_det_m(q: tuple[float, ...]) -> float:
        return math.log(2.0 - math.cos(q[0] - q[1]) ** 2)

    q0, _ = pendulum.spec.initial_state()
    volume = log_det_m(tuple(q0)) - log_det_m(report.final[:2])
    assert sum(lam) * 40.0 == pytest.approx(volume, abs=1e-6)
    assert abs(lam[0] + lam[3]) <= report.spread[0] + report.spread[3] + 0.05
    assert abs(lam[1] + lam[2]) <= report.spread[1] + report.spread[2] + 0.05
    assert abs(lam[1]) < 0.1 and abs(lam[2]) < 0.1


def test_the_driven_damped_pendulum_is_chaotic_and_contracts_at_its_damping() -> None:
    """c = 0.5, F0 = 1.5, ω = 2/3 (the bundled set of Baker and Gollub, *Chaotic Dynamics*):
    λ₁ > 0, and λ₁ + λ₂ = −c exactly (tr J = −c/(m l²)); the largest alone (one vector, other
    steps, so another trajectory after 250 chaotic time units) agrees to 0.01."""
    report = api.open_system("driven_damped_pendulum").lyapunov(t_end=250.0, transient=50.0,
                                                               renormalize=1.0)
    assert report.exponents[0] > 0.03
    assert sum(report.exponents) == pytest.approx(-0.5, rel=1e-8)
    largest = api.open_system("driven_damped_pendulum").lyapunov(
        t_end=250.0, transient=50.0, renormalize=1.0, largest=True)
    assert len(largest.exponents) == 1
    assert abs(largest.exponents[0] - report.exponents[0]) < 0.01


CHAOTIC_PENDULUM = {"c": 0.1, "F0": 2.5, "w": 1.0}
"""θ̈ + 0.1θ̇ + sin θ = 2.5 cos t as parameters of the bundled driven_damped_pendulum: the time
shift t → t + π/2 of ẍ + 0.1ẋ + sin x = 2.5 sin t, whose exponents (0.160, −0.262) are quoted
for arXiv:physics/0303077 in https://mathematica.stackexchange.com/questions/185364 (a secondary
source; a reproduction there gives 0.1606, −0.2606), the same attractor and exponents."""


def test_the_chaotic_pendulum_agrees_with_the_published_exponent_in_distribution() -> None:
    """The 2-digit check is bench/lyapunov.py's (``--pendulum-starts 16``: 16 starts × 10⁴
    time units give λ₁ = 0.1602 ± 0.0009, the published 0.160 0.2 standard errors away;
    bench/lyapunov_results.md). Here the short form of it: three starts of 600 time units after
    100 (≈1 s); the finite-time exponent over 600 has σ ≈ 0.019 (the bench's blocks:
    σ(L) = 0.046 for L = 100, 0.020 for L = 500, 0.0096 for L = 2000, ∝ 1/√L), so the mean of
    three lies within 0.03 (3σ/√3) of 0.160 (measured: 0.117, 0.192, 0.158, mean 0.156), and
    each is positive by more than 5σ; λ₁ + λ₂ = −c = −0.1 exactly (tr J = −c) for each."""
    pendulum = api.open_system("driven_damped_pendulum", parameters=CHAOTIC_PENDULUM)
    report = pendulum.lyapunov(t_end=700.0, transient=100.0, renormalize=1.0, starts=3)
    largest = [row[0] for row in report.by_start]
    assert all(x > 0.05 for x in largest), largest
    assert abs(sum(largest) / 3 - 0.160) < 0.03, largest
    for row in report.by_start:
        assert sum(row) == pytest.approx(-0.1, abs=1e-8)


def test_the_command_writes_the_trace_and_checks_its_options(tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    out = CliRunner().invoke(main, ["lyapunov", "pendulum", "--t-end", "5", "--trace",
                                    str(trace)])
    assert out.exit_code == 0, out.output
    rows = trace.read_text().splitlines()
    assert rows[0] == "t,lyapunov_1,lyapunov_2" and len(rows) == 6
    assert "sum" in out.stdout
    with pytest.raises(InputError, match="^transient: must be at least 0 and below t_end"):
        api.open_system("pendulum").lyapunov(t_end=5.0, transient=6.0)
    assert np.isfinite(float(rows[-1].split(",")[1]))


def test_the_pendulum_on_its_constraint_manifold_has_the_exponents_of_theta() -> None:
    """(x, y) with x² + y² = l²: d = 2·2 − 2·1 = 2 exponents, not 4 (the drift of φ and φ̇ under
    the index-1 equations would add two zeros). The pendulum is integrable: a tangent vector
    grows at most linearly (the shear between neighbouring orbits), so every exponent is within
    log(c T)/T of 0; both coordinates agree to that bound, and λ₁ + λ₂ is O(1/T)."""
    T = 40.0
    angle = api.open_system("pendulum").lyapunov(t_end=T, renormalize=1.0)
    natural = api.open_system("pendulum_natural").lyapunov(t_end=T, renormalize=1.0)
    assert natural.dimension == 2 and len(natural.exponents) == 2 and natural.constraints == 2
    bound = math.log(10.0 * T) / T
    for report in (angle, natural):
        assert all(abs(x) < bound for x in report.exponents), report.exponents
        assert abs(sum(report.exponents)) < 2.0 / T
    assert abs(natural.exponents[0] - angle.exponents[0]) < bound
    assert "dimension 2" in natural.to_text()


def test_the_constrained_pendulums_sum_is_the_area_change_of_its_chart() -> None:
    """In θ the pendulum keeps areas (tr J = 0); (θ, θ̇) ↦ (x, y, ẋ, ẏ) = l(sin θ, −cos θ,
    θ̇ cos θ, θ̇ sin θ) has the Jacobian D with DᵀD = diag(l²(1 + θ̇²), l²), so the areas of T𝓜
    in (x, y, ẋ, ẏ) are l² √(1 + θ̇²) times those in (θ, θ̇): Σλ·T = ½ log(1 + θ̇(T)²) for a
    start at rest (l = 1, θ̇² = ẋ² + ẏ²). An exact check of the projected tangent flow."""
    T = 40.0
    natural = api.open_system("pendulum_natural").lyapunov(t_end=T, renormalize=1.0)
    x, y, xd, yd = natural.final
    assert x * x + y * y == pytest.approx(1.0, abs=1e-12)
    assert sum(natural.exponents) * T == pytest.approx(0.5 * math.log(1 + xd * xd + yd * yd),
                                                       abs=1e-7)


def test_a_repeated_constraint_row_changes_nothing() -> None:
    """pendulum_redundant is pendulum_natural with its rod written twice: K is singular (solved
    by least squares), G has rank 2 of 4 rows, and the frame starts from the projected unit
    vectors, which do not depend on the rows: the same exponents to rounding."""
    natural = api.open_system("pendulum_natural").lyapunov(t_end=5.0)
    redundant = api.open_system("pendulum_redundant").lyapunov(t_end=5.0)
    assert redundant.dimension == 2 and redundant.constraints == 2
    assert redundant.exponents == pytest.approx(natural.exponents, abs=1e-9)


DOUBLE_NATURAL = """\
    name: double_pendulum_natural
    parameters: {m1: 1.0, m2: 1.0, l1: 1.0, l2: 1.0, g: 9.81}
    coordinates: [x1, y1, x2, y2]
    masses:
      bob1: {mass: m1, position: [x1, y1]}
      bob2: {mass: m2, position: [x2, y2]}
    gravity: [0, -g]
    constraints:
      - {name: rod1, holonomic: x1**2 + y1**2 - l1**2}
      - {name: rod2, holonomic: (x2 - x1)**2 + (y2 - y1)**2 - l2**2}
    initial:
      x1: l1*sin(2*pi/3)
      y1: -l1*cos(2*pi/3)
      x2: (l1 + l2)*sin(2*pi/3)
      y2: -(l1 + l2)*cos(2*pi/3)
    """


def test_the_double_pendulum_in_cartesian_coordinates_is_as_chaotic_as_in_angles() -> None:
    """double_pendulum's start in the bobs' (x, y): d = 8 − 4 = 4 exponents; λ₁ > 1 as in the
    angles, and each exponent within 2.5/T of the angles' over T = 12 (the finite-T estimates
    of one motion in two metrics are O(1/T) apart: |Δλ₁| = 0.12 at T = 12, 0.08 at T = 20;
    bench/lyapunov.py compares long runs), the ± pairs summing to 0 within their spreads (over
    T = 300: λ₁ = 1.31 here and 1.38 in the angles, each within its spread of 0.06 and 0.12)."""
    T = 12.0
    natural = system(DOUBLE_NATURAL).lyapunov(t_end=T, renormalize=1.0)
    angle = api.open_system("double_pendulum").lyapunov(t_end=T, renormalize=1.0)
    lam, spread = natural.exponents, natural.spread
    assert natural.dimension == 4 and len(lam) == 4
    assert lam[0] > 1.0
    assert all(abs(a - b) < 2.5 / T for a, b in zip(lam, angle.exponents)), (lam, angle)
    assert abs(lam[0] + lam[3]) <= spread[0] + spread[3] + 0.05
    assert abs(lam[1] + lam[2]) <= spread[1] + spread[2] + 0.05


def test_the_spread_over_starts_is_reproducible_and_follows_the_dynamics() -> None:
    """A linear system's tangent flow e^{At} does not depend on the start: its spread over
    starts is rounding; the pendulum's does (the shear grows with the amplitude), a little for a
    1e-6 move; one seed draws the same starts, another seed others."""
    damped = system("""\
        coordinates: [x]
        kinetic: 1/2*x_dot**2
        potential: 1/2*2*x**2
        dissipation: 1/2*3*x_dot**2
        initial: {x: 1}
        """).lyapunov(t_end=4.0, starts=3)
    assert len(damped.by_start) == 3 and max(damped.spread_starts) < 1e-9
    pendulum = api.open_system("pendulum")
    one = pendulum.lyapunov(t_end=4.0, starts=3, seed=1)
    again = pendulum.lyapunov(t_end=4.0, starts=3, seed=1)
    other = pendulum.lyapunov(t_end=4.0, starts=3, seed=2)
    assert one.by_start == again.by_start and one.by_start[1:] != other.by_start[1:]
    assert one.by_start[0] == other.by_start[0] == one.exponents
    assert 0 < max(one.spread_starts) < 1e-3
    assert one.to_dict()["spread_starts"] == list(one.spread_starts)
    out = CliRunner().invoke(main, ["lyapunov", "pendulum", "--t-end", "4", "--starts", "3",
                                    "--seed", "1"])
    assert out.exit_code == 0, out.output
    assert "over 3 starts" in out.stdout and f"{one.spread_starts[0]:.2g}" in out.stdout
    with pytest.raises(InputError, match="starts must be between 1 and"):
        pendulum.lyapunov(t_end=1.0, starts=0)


def test_plot_kind_lyapunov_draws_the_traces_columns(tmp_path: Path) -> None:
    """``plot --kind lyapunov``: one line per ``lyapunov_k`` column of the --trace CSV, its y
    data that column and its x data t, and the 0 line; a CSV without them is a located error."""
    from lagsim.output.io import read_csv
    from lagsim.viz.figures import make_figure

    trace = tmp_path / "trace.csv"
    out = CliRunner().invoke(main, ["lyapunov", "driven_damped_pendulum", "--t-end", "6",
                                    "--renormalize", "0.5", "--trace", str(trace)])
    assert out.exit_code == 0, out.output
    table = read_csv(trace)
    (ax,) = make_figure(table, kind="lyapunov").axes
    lines = [line for line in ax.lines if line.get_gid() != "zero"]
    assert [line.get_label() for line in lines] == ["λ1", "λ2"]
    for k, line in enumerate(lines, 1):
        assert np.array_equal(line.get_ydata(), table.column(f"lyapunov_{k}"))
        assert np.array_equal(line.get_xdata(), table.column("t"))
    (zero,) = [line for line in ax.lines if line.get_gid() == "zero"]
    assert list(zero.get_ydata()) == [0.0, 0.0]
    assert np.allclose(lines[0].get_ydata() + lines[1].get_ydata(), -0.5, atol=1e-8)
    png = tmp_path / "trace.png"
    drawn = CliRunner().invoke(main, ["plot", str(trace), "--kind", "lyapunov", "-o", str(png)])
    assert drawn.exit_code == 0, drawn.output
    assert png.read_bytes()[:4] == b"\x89PNG"
    plain = tmp_path / "run.csv"
    plain.write_text("t,x\n0,1\n1,2\n")
    bad = CliRunner().invoke(main, ["plot", str(plain), "--kind", "lyapunov", "-o",
                                    str(tmp_path / "bad.png")])
    assert bad.exit_code == 2 and "lyapunov_*" in bad.stderr


UEDA = Path(__file__).parents[1] / "systems" / "ueda_oscillator.yaml"


def test_uedas_oscillator_is_chaotic_and_contracts_at_its_damping() -> None:
    """ẍ + Kẋ + x³ = B cos t, B = 7.5, K = 0.05 (Ueda 1979): the "Lyapunov spectrum" pages give
    λ = 0.0999 and −0.1499; bench/lyapunov.py's mean over 16 starts × 6000 time units is
    0.1046 ± 0.0008 (lagsim) and 0.1020 ± 0.0013 (an independent RK4), bench/lyapunov_results.md.
    Here, over 40 time units after 20, λ₁ > 0 and λ₁ + λ₂ = −K to 1e-8 (tr J = −K)."""
    report = api.open_system(UEDA).lyapunov(t_end=60.0, transient=20.0, renormalize=2.0)
    assert report.exponents[0] > 0.03
    assert sum(report.exponents) == pytest.approx(-0.05, abs=1e-8)


@pytest.mark.parametrize(("name", "n", "holonomic", "velocity"),
                         [("chaplygin_sleigh", 3, 0, 1), ("knife_edge", 4, 1, 1)])
def test_a_velocity_constraint_removes_one_dimension(name: str, n: int, holonomic: int,
                                                     velocity: int) -> None:
    """d = 2n − 2m_h − m_v: the sleigh (3 coordinates, one knife edge) has 5 exponents, the
    knife-edge rod (4 coordinates, a rod and a knife edge) 8 − 2 − 1 = 5."""
    report = api.open_system(name).lyapunov(t_end=3.0)
    d = 2 * n - 2 * holonomic - velocity
    assert report.dimension == d == len(report.exponents)
    assert report.constraints == 2 * holonomic + velocity
    assert all(math.isfinite(x) for x in report.exponents)


@pytest.mark.parametrize(("name", "t_end", "transient", "largest", "dimension"), [
    ("damped", 20.0, 0.0, False, 2), ("driven_damped_pendulum", 20.0, 5.0, False, 2),
    ("driven_damped_pendulum", 20.0, 5.0, True, 2), ("pendulum_natural", 10.0, 1.0, False, 2),
    ("knife_edge", 3.0, 0.0, False, 5), ("cartesian", 4.0, 0.0, False, 4)])
def test_the_c_loops_tangent_flow_gives_scipys_exponents(name: str, t_end: float,
                                                         transient: float, largest: bool,
                                                         dimension: int) -> None:
    """The tangent flow steps in the C loop as the sensitivities to the initial state, started
    from the current vectors, with joint error control (on a constraint manifold: index1 left
    unstabilized, the vectors projected onto T𝓜 before each QR as before): the same ODE, method
    and error norm as scipy's path, so the same exponents and end state to 1e-8; the damped
    ẍ + 3ẋ + 2x = 0's sum is exactly tr J = −3."""
    from lagsim.analysis.lyapunov import spectrum
    from lagsim.numeric.compile import compile_model

    target = system("""\
        coordinates: [x]
        kinetic: 1/2*x_dot**2
        potential: 1/2*2.0*x**2
        dissipation: 1/2*3.0*x_dot**2
        initial: {x: 1}
        """) if name == "damped" else (system(DOUBLE_NATURAL) if name == "cartesian"
                                       else api.open_system(name))
    model = target.model
    numeric = compile_model(model)
    c, py = (spectrum(target.spec, model, numeric, t_end, transient, 1.0, largest, loop=loop)
             for loop in (True, False))
    assert c.loop and not py.loop
    assert len(c.exponents) == (1 if largest else dimension) and c.dimension == dimension
    assert np.allclose(c.exponents, py.exponents, rtol=0.0, atol=1e-8)
    assert np.allclose(c.final, py.final, rtol=0.0, atol=1e-8)
    if name == "damped":
        assert sum(c.exponents) == pytest.approx(-3.0, rel=1e-9)


def test_dependent_constraint_rows_keep_to_scipys_path() -> None:
    """A repeated constraint row makes index1's K singular; the C loop has no least-squares
    tangent flow, so the run stays in scipy (said by ``loop``), with the exponents of the
    pendulum written once."""
    once = api.open_system("pendulum_natural").lyapunov(t_end=3.0)
    twice = api.open_system("pendulum_redundant").lyapunov(t_end=3.0)
    assert once.loop and not twice.loop
    assert np.allclose(once.exponents, twice.exponents, rtol=0.0, atol=1e-6)


def test_a_blow_up_is_the_same_failed_run_in_both_paths(tmp_path: Path) -> None:
    """ẍ = x³ from x = 1 at rest (V = −x⁴/4, energy −1/4) reaches x = ∞ at
    t* = √2 ∫₀¹ du/√(1 − u⁴) = Γ(1/4)²/(4√π) = K(m = ½) = 1.8540747 (as ẍ = 4x³ in
    tests/test_integrate.py, in another time scale):
    the C tangent flow and scipy's path both give up there with the same
    :class:`IntegrationError` (a failed run, exit status 1), not an input error."""
    from lagsim.analysis.lyapunov import spectrum
    from lagsim.errors import IntegrationError
    from lagsim.numeric.compile import compile_model

    text = """\
        coordinates: [x]
        kinetic: 1/2*x_dot**2
        potential: -1/4*x**4
        initial: {x: 1}
        """
    target = system(text)
    numeric = compile_model(target.model)
    t_star = math.gamma(0.25) ** 2 / (4.0 * math.sqrt(math.pi))
    messages = []
    for loop in (True, False):
        with pytest.raises(IntegrationError) as caught:
            spectrum(target.spec, target.model, numeric, 5.0, 0.0, 1.0, loop=loop)
        assert not isinstance(caught.value, InputError)
        assert caught.value.time == pytest.approx(t_star, abs=1e-6)
        messages.append(str(caught.value).split(": ", 1)[1])
    assert messages[0] == messages[1] and "the integrator failed (DOP853)" in messages[0]
    path = tmp_path / "blow_up.yaml"
    path.write_text(textwrap.dedent(text))
    out = CliRunner().invoke(main, ["lyapunov", str(path), "--t-end", "5"])
    assert out.exit_code == 1 and "the integrator failed" in out.stderr
