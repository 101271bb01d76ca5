"""The analytic Jacobian of the right-hand side given to Radau, BDF and LSODA (issue 9).

Reference: central differences of the right-hand side itself (the Jacobian is ∂y'/∂y of the
ODE each formulation integrates: seed 001 §10.7 and seed 003's augmented system, seed 004 for
Udwadia–Kalaba); and a stiff system integrated by the implicit methods agrees with DOP853.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from inline_systems import STIFF

from lagsim.cli import main
from lagsim.numeric import jacobian as jacobian_module
from lagsim.numeric.jacobian import rhs_jacobian
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.run.problem import Problem
from lagsim.spec.system import load_spec, parse_spec
from lagsim.symbolic.model import build_model


def _central(f, t: float, y: np.ndarray) -> np.ndarray:
    J = np.zeros((len(y), len(y)))
    for j in range(len(y)):
        e = np.zeros(len(y))
        e[j] = 1e-6 * max(1.0, abs(y[j]))
        J[:, j] = (f(t, y + e) - f(t, y - e)) / (2 * e[j])
    return J


CASES = [
    ("pendulum", "ode", "none"),
    ("double_pendulum", "auto", "none"),
    ("spring_pendulum", "index1", "none"),
    ("spring_pendulum", "index1", "baumgarte"),
    ("slider_crank", "index1", "projection"),
    ("skate", "index1", "baumgarte"),
    ("moving_pivot_pendulum", "index1", "none"),
    ("pendulum_redundant", "udwadia-kalaba", "baumgarte"),
]


@pytest.mark.parametrize(("name", "formulation", "stabilize"), CASES)
def test_analytic_jacobian_matches_central_differences(name: str, formulation: str,
                                                       stabilize: str) -> None:
    """At a state off the start (and off the constraints), every entry agrees with central
    differences of the same right-hand side to 1e-7 of the largest entry (the differences'
    own error is about 1e-9 here)."""
    spec = load_spec(name)
    model = build_model(spec)
    options = SimulateOptions.resolve(spec.simulate, {
        "formulation": formulation, "stabilize": stabilize, "method": "Radau"})
    problem = Problem.build(spec, model, options)
    form = problem.form
    jac = rhs_jacobian(form, model)
    assert jac is not None
    rng = np.random.default_rng(7)
    y = form.initial(problem.t0, problem.q0, problem.qd0)
    y = y + 0.05 * rng.standard_normal(len(y))
    J = jac(0.37, y)
    reference = _central(form.rhs, 0.37, y)
    assert J.shape == reference.shape
    assert np.abs(J - reference).max() <= 1e-7 * np.abs(reference).max()


def test_reduced_has_no_analytic_jacobian_and_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [
        "simulate", "pendulum_natural", "--formulation", "reduced", "--method", "Radau",
        "--t-end", "0.2", "--samples", "3"])
    assert result.exit_code == 0, result.output
    assert ("note: --formulation reduced has no analytic Jacobian; Radau estimates it by "
            "finite differences (slower)") in result.stderr


@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA"])
def test_implicit_methods_use_the_jacobian_on_a_stiff_system(method: str, monkeypatch) -> None:
    """The stiff damped spring pendulum by each implicit method agrees with DOP853 at t = 2 s
    (tolerances 1e-9: agreement to 1e-5 in θ and 1e-7 in r, whose motion is slaved to the swing),
    and the analytic Jacobian was evaluated (Radau in the Python loop here: the C loop of
    lagsim.run.engines.cradau calls the compiled Jacobian directly, tests/test_cradau.py counts
    it)."""
    from lagsim.run.engines import cradau

    monkeypatch.setattr(cradau, "loop_or_refusal", lambda problem: "the Python loop here")
    calls = []
    original = jacobian_module.RhsJacobian.__call__

    def counted(self, t, y):
        calls.append(t)
        return original(self, t, y)

    monkeypatch.setattr(jacobian_module.RhsJacobian, "__call__", counted)
    spec = parse_spec(STIFF, "stiff.yaml")
    model = build_model(spec)

    def run(name: str):
        options = SimulateOptions.resolve(spec.simulate, {
            "method": name, "t_end": 2.0, "samples": 5, "rtol": 1e-9, "atol": 1e-9})
        return simulate(spec, model, options)

    reference = run("DOP853")
    assert not calls
    result = run(method)
    assert calls
    assert abs(result.q[-1, 1] - reference.q[-1, 1]) < 1e-5
    assert abs(result.q[-1, 0] - reference.q[-1, 0]) < 1e-7
    assert abs(result.q[-1, 0] - 1.0) < 1e-6
