"""``lagsim lyapunov`` (issue 28): the spectrum by tangent dynamics and periodic QR (Benettin et
al. 1980) held to what linear algebra and Liouville's theorem say exactly, at finite T:

- Σ λ_i (T − t₀) = log|det Φ(T)| = ∫ tr J dt: for a Lagrangian system in (q, q̇), whose flow keeps
  the volume of (q, p) with p = M(q) q̇, that is log det M(q(t₀)) − log det M(q(T)); with
  constant M and a damping c it is −c (T − t₀)/m l²;
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


def test_the_command_writes_the_trace_and_refuses_constraints(tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    out = CliRunner().invoke(main, ["lyapunov", "pendulum", "--t-end", "5", "--trace",
                                    str(trace)])
    assert out.exit_code == 0, out.output
    rows = trace.read_text().splitlines()
    assert rows[0] == "t,lyapunov_1,lyapunov_2" and len(rows) == 6
    assert "sum" in out.stdout
    bad = CliRunner().invoke(main, ["lyapunov", "pendulum_constrained", "--t-end", "5"])
    assert bad.exit_code == 2 and "unconstrained systems only" in bad.stderr
    with pytest.raises(InputError, match="--transient"):
        api.open_system("pendulum").lyapunov(t_end=5.0, transient=6.0)
    assert np.isfinite(float(rows[-1].split(",")[1]))
