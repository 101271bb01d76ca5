"""Radau's step loop in C (lagsim.run.engines.cradau) against the Python loop with scipy's Radau
(lagsim.run.driver.run_python, the reference), on unconstrained systems (formulation ode).

Both take scipy's Radau IIA steps (scipy/integrate/_ivp/radau.py; Hairer & Wanner, *Solving
ODEs II*, §IV.8) with the same analytic Jacobian (lagsim.numeric.jacobian), so they agree to
rounding; the simplified Newton iteration's stopping test may flip on a rounding difference and
change a step's iterate within the Newton tolerance, so the samples are held to 1e-9 relative to the
size of each quantity (measured: 1e-15 on the pendulum, 5e-11 on the stiff spring pendulum over 20
s). The double pendulum is chaotic, so it is compared over 2 s, before rounding grows.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from click.testing import CliRunner
from inline_systems import STIFF
from scipy.integrate import Radau
from scipy.special import ellipk

from lagsim.cli import main
from lagsim.errors import IntegrationError
from lagsim.numeric import ccompile
from lagsim.numeric.jacobian import rhs_jacobian
from lagsim.run import driver
from lagsim.run.engines import cradau
from lagsim.run.problem import Problem
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import load_spec, parse_spec
from lagsim.symbolic.model import build_model

pytestmark = pytest.mark.skipif(ccompile.compiler() is None,
                                reason="the C loop needs a C compiler (LAGSIM_NO_CC is set)")
BLOW_UP = "coordinates: [x]\nkinetic: 1/2*x_dot**2\npotential: -x**4\ninitial: {x: 1.0}\n"
"""ẍ = 4x³ from rest at x = 1 blows up at t* = K(1/2)/2 ≈ 0.927 (tests/test_integrate.py)."""


@cache
def model(name: str):
    spec = {"stiff": lambda: parse_spec(STIFF, "stiff.yaml"),
            "blow_up": lambda: parse_spec(BLOW_UP, "blow_up.yaml")}.get(
        name, lambda: load_spec(name))()
    return spec, build_model(spec)


def problem(name: str, **flags) -> Problem:
    spec, built = model(name)
    flags = {"method": "Radau", "rtol": 1e-10, "atol": 1e-10, **flags}
    return Problem.build(spec, built, SimulateOptions.resolve(spec.simulate, flags))


def both(name: str, **flags):
    """(Python loop, C loop, the C loop) of one problem."""
    pr = problem(name, **flags)
    loop = cradau.radau_loop_for(pr)
    assert loop is not None
    with driver._quiet():
        return driver.run_python(pr), loop.run(), loop


def close(a: np.ndarray, b: np.ndarray, rel: float) -> None:
    scale = max(float(np.max(np.abs(a))), 1e-300)
    assert float(np.max(np.abs(a - b))) <= rel * scale


@pytest.mark.parametrize(("name", "t_end"), [("pendulum", 10.0), ("double_pendulum", 2.0),
                                             ("stiff", 20.0)])
def test_the_c_loop_gives_the_python_loops_trajectory(name: str, t_end: float) -> None:
    python, c, _ = both(name, t_end=t_end)
    np.testing.assert_array_equal(python.t, c.t)
    close(python.q, c.q, 1e-9)
    close(python.qd, c.qd, 1e-9)
    close(python.energy, c.energy, 1e-9)


def test_the_c_loop_takes_scipys_steps() -> None:
    """Accepted steps, right-hand sides, Jacobians and LU factorizations counted as scipy's
    Radau counts them, driven here directly with the formulation's right-hand side."""
    pr = problem("pendulum", t_end=3.0)
    _, _, loop = both("pendulum", t_end=3.0)
    y0 = pr.form.initial(pr.t0, pr.q0, pr.qd0)
    solver = Radau(pr.form.rhs, pr.t0, y0, 3.0, rtol=1e-10, atol=1e-10,
                   jac=rhs_jacobian(pr.form, pr.model))
    steps = 0
    while solver.status == "running":
        solver.step()
        steps += 1
    assert (loop.steps, loop.njev, loop.nlu) == (steps, solver.njev, solver.nlu)
    assert loop.nfev == solver.nfev


def test_the_pendulum_keeps_its_period_and_energy() -> None:
    """θ(t) of the pendulum from rest at 30° returns to 30° at rest after the exact period
    4 K(sin²(θ₀/2)) / √(g/l) (the complete elliptic integral; [DAE] Example 10.5's pendulum),
    and its energy stays that of the start: both to 1e-8 at tolerances 1e-10."""
    a, g, l = math.pi / 6, 9.81, 1.0
    period = 4 * float(ellipk(math.sin(a / 2) ** 2)) / math.sqrt(g / l)
    pr = problem("pendulum", t_end=3 * period, samples=4)
    loop = cradau.radau_loop_for(pr)
    assert loop is not None
    with driver._quiet():
        result = loop.run()
    np.testing.assert_allclose(result.t, [0, period, 2 * period, 3 * period], rtol=1e-15)
    np.testing.assert_allclose(result.q[:, 0], a, atol=1e-8)
    np.testing.assert_allclose(result.qd[:, 0], 0.0, atol=1e-8)
    np.testing.assert_allclose(result.energy, -g * l * math.cos(a), rtol=1e-8)


@pytest.mark.slow
def test_a_blow_up_fails_alike_in_both_loops() -> None:
    """ẍ = 4x³ escapes to infinity at t* = K(1/2)/2: both loops fail with the same message at
    the same time (to 1e-9: the last steps before t* are near the step-size floor), with the
    same partial trajectory; the CLI says it with exit 1."""
    pr = problem("blow_up", t_end=2.0, samples=21)
    loop = cradau.radau_loop_for(pr)
    assert loop is not None
    errors = []
    for run in (lambda: driver.run_python(pr), loop.run):
        with driver._quiet(), pytest.raises(IntegrationError) as err:
            run()
        errors.append(err.value)
    python, c = errors
    assert str(python).split(": ", 1)[1] == str(c).split(": ", 1)[1]
    assert c.time == pytest.approx(float(ellipk(0.5)) / 2, abs=1e-6)
    assert c.time == pytest.approx(python.time, rel=1e-9)
    np.testing.assert_array_equal(python.partial.t[:-1], c.partial.t[:-1])
    close(python.partial.q[:-1], c.partial.q[:-1], 1e-9)
    result = CliRunner().invoke(main, ["simulate", "-", "--method", "Radau", "--t-end", "2"],
                                input=BLOW_UP)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == f"lagsim: error: {c}"


def test_other_formulations_and_stop_events_stay_on_the_python_loop() -> None:
    assert cradau.radau_loop_for(problem("pendulum", method="BDF")) is None
    assert cradau.radau_loop_for(problem("pendulum", stop_when="theta")) is None
    assert cradau.radau_loop_for(problem("pendulum_constrained")) is None


@pytest.mark.slow
def test_the_aliasing_warning_is_the_python_loops() -> None:
    """Samples 30 s apart on the pendulum (period 2.04 s): both loops warn once, with the same
    words and the same estimate of the period (lagsim.run.aliasing, replayed from the C loop's
    steps), and it is near the pendulum's period 2π√(l/g)(1 + θ0²/16)."""
    spec, built = model("pendulum")
    messages: dict[str, list[str]] = {"python": [], "c": []}
    for which in messages:
        options = SimulateOptions.resolve(spec.simulate, {"method": "Radau", "t_end": 60.0,
                                                          "dt": 30.0, "rtol": 1e-8})
        pr = Problem.build(spec, built, options, messages[which].append)
        with driver._quiet():
            if which == "python":
                driver.run_python(pr)
            else:
                loop = cradau.radau_loop_for(pr)
                assert loop is not None
                loop.run()
    warnings = {k: [m for m in v if "aliases the motion" in m] for k, v in messages.items()}
    assert len(warnings["c"]) == 1 and warnings["c"] == warnings["python"]
    period = float(warnings["c"][0].split("period of about ")[1].split(")")[0])
    assert period == pytest.approx(2 * math.pi / math.sqrt(9.81) * (1 + (math.pi / 6) ** 2 / 16),
                                   rel=0.03)
