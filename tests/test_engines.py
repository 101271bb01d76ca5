"""The engines as parts (issue 23): the driver's table, each engine's refusal, and the step
loop skeleton that every loop over accepted steps shares (lagsim.run.engines.base)."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from lagsim.errors import IntegrationError
from lagsim.numeric import ccompile
from lagsim.output.trajectory import Trajectory
from lagsim.run import driver
from lagsim.run.engines import cloop, cradau
from lagsim.run.engines.base import Progress, StepLoop
from lagsim.run.engines.cloop import CDop853Engine
from lagsim.run.engines.cradau import CRadauEngine
from lagsim.run.engines.fixed import FIXED_STEP_METHODS, FixedStepEngine
from lagsim.run.engines.python import PythonEngine
from lagsim.run.monitor import At, FailedRun, Watch
from lagsim.run.problem import Problem
from lagsim.run.registry import FIXED_STEP
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model

SYSTEMS = Path(__file__).resolve().parents[1] / "systems"
needs_cc = pytest.mark.skipif(ccompile.compiler() is None,
                              reason="the C loops need a C compiler (LAGSIM_NO_CC is set)")


@cache
def _model(name: str):
    spec = load_spec(name)
    return spec, build_model(spec)


def problem(name: str, **flags) -> Problem:
    spec, built = _model(name)
    return Problem.build(spec, built, SimulateOptions.resolve(spec.simulate, flags))


def test_the_table_asks_the_engines_in_the_order_of_before() -> None:
    """Fixed-step methods first, then the C DOP853 loop, the C Radau loop, the Python loop:
    the order the driver used to try them in (a Radau run asked the C DOP853 loop first)."""
    assert [e.name for e in driver.ENGINES] == ["fixed-step", "C DOP853", "C Radau", "python"]


@needs_cc
@pytest.mark.parametrize(("name", "flags", "engine"), [
    ("pendulum", {}, "C DOP853"),
    ("pendulum_constrained", {"formulation": "udwadia-kalaba", "stabilize": "projection"},
     "C DOP853"),
    ("pendulum_constrained", {"formulation": "reduced"}, "C DOP853"),
    ("pendulum", {"method": "Radau"}, "C Radau"),
    ("pendulum", {"method": "rattle", "dt": 0.01}, "fixed-step"),
    ("pendulum_constrained", {"method": "variational", "dt": 0.01}, "fixed-step"),
    ("pendulum", {"method": "RK45"}, "python"),
    ("pendulum_constrained", {"method": "Radau"}, "python"),
    ("pendulum", {"method": "Radau", "stop_when": "theta"}, "python"),
    ("pendulum", {"section": "theta_dot"}, "python"),
])
def test_the_driver_picks_the_engine_that_ran_before(name: str, flags: dict, engine: str
                                                     ) -> None:
    """The engine chosen is the loop the driver ran before the table (the fixed-step method's
    own loop, cloop.loop_for, cradau.radau_loop_for, else the Python loop)."""
    pr = problem(name, **flags)
    assert driver.choose(pr).name == engine
    if engine == "C DOP853":
        loop = cloop.loop_for(pr)
        assert type(loop) is (cloop.RLoop if pr.form.name == "reduced" else cloop.CLoop)
    if engine == "C Radau":
        assert isinstance(cradau.radau_loop_for(pr), cradau.RadauLoop)


@needs_cc
def test_each_engine_says_why_it_declines() -> None:
    """The refusals name the reason, not just a None."""
    rk45, stop = problem("pendulum", method="RK45"), problem("pendulum", method="Radau",
                                                              stop_when="theta")
    rattle, index1 = (problem("pendulum", method="rattle", dt=0.01),
                      problem("pendulum_constrained", method="Radau"))
    assert FixedStepEngine().refusal(rk45) == "--method RK45 does not take fixed steps"
    assert CDop853Engine().refusal(rk45) == "--method RK45 is not DOP853"
    assert CDop853Engine().refusal(problem("pendulum", section="theta_dot")) == (
        "--section is taken in Python")
    assert CRadauEngine().refusal(rk45) == "--method RK45 is not Radau"
    assert CRadauEngine().refusal(stop) == "--stop-when is looked for in Python"
    assert CRadauEngine().refusal(index1) == (
        "formulation index1 has no C Radau loop (ode only)")
    assert PythonEngine().refusal(rattle) == "--method rattle is not one of scipy's solvers"
    assert PythonEngine().refusal(rk45) is None
    assert FixedStepEngine().refusal(rattle) is None


def test_the_fixed_step_declarations_name_the_methods_that_run() -> None:
    """What check_combination reads (registry.FIXED_STEP) and what runs
    (engines.fixed.FIXED_STEP_METHODS) are the same methods."""
    assert list(FIXED_STEP) == list(FIXED_STEP_METHODS) == ["rattle", "variational"]
    assert all(FIXED_STEP_METHODS[name].name == name for name in FIXED_STEP)


def test_declines_are_said_under_debug_only() -> None:
    """``--debug`` prints each engine's refusal before the one that runs; without it stderr
    has none of them."""
    env = dict(os.environ)
    args = [sys.executable, "-m", "lagsim", "simulate", str(SYSTEMS / "pendulum.yaml"),
            "--method", "RK45", "--t-end", "0.5"]
    plain = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
    debug = subprocess.run([*args[:3], "--debug", *args[3:]], capture_output=True, text=True,
                           env=env, check=True)
    said = [line for line in debug.stderr.splitlines() if "debug: engine" in line]
    assert said == [
        "lagsim: debug: engine fixed-step declined: --method RK45 does not take fixed steps",
        "lagsim: debug: engine C DOP853 declined: --method RK45 is not DOP853",
        "lagsim: debug: engine C Radau declined: --method RK45 is not Radau"]
    assert "debug:" not in plain.stderr
    assert plain.stdout == debug.stdout


class _Fails(StepLoop):
    """A loop that accepts one state at t = 0.25 and then fails (or raises ``error``)."""

    def __init__(self, problem: Problem, error: Exception) -> None:
        super().__init__(problem)
        self.error = error
        self.freed = 0

    def _run_impl(self, watch: Watch, y0: np.ndarray | None, progress: Progress | None
                  ) -> Trajectory:
        assert y0 is not None
        self.at = At(0.25, y0 + 1.0, 0.1)
        raise self.error

    def _free(self) -> None:
        self.freed += 1


def test_the_skeleton_ends_a_failed_run_with_its_last_state_and_frees_it() -> None:
    """An IntegrationError inside a loop becomes a FailedRun whose partial trajectory holds the
    start row and the last accepted state (t = 0.25, the state given), and the loop's handle is
    freed once."""
    pr = problem("pendulum", method="RK45", t_end=1.0)
    loop = _Fails(pr, IntegrationError("broken", time=0.25))
    with pytest.raises(FailedRun) as info:
        loop.run()
    partial = info.value.partial
    assert (partial.stop_reason, partial.stop_message) == ("failed", "at t = 0.25: broken")
    np.testing.assert_array_equal(partial.t, [pr.t0, 0.25])
    np.testing.assert_array_equal(partial.q[1], pr.q0 + 1.0)
    np.testing.assert_array_equal(partial.qd[1], pr.qd0 + 1.0)
    assert loop.freed == 1


def test_the_skeleton_passes_a_failed_run_through_and_frees_it() -> None:
    """A FailedRun from a loop that handed over (the reduced C loop to the Python loop) is
    raised as it is, with its own partial trajectory."""
    pr = problem("pendulum", method="RK45", t_end=1.0)
    inner = FailedRun(IntegrationError("inner", time=0.5), driver.run(pr))
    loop = _Fails(pr, inner)
    with pytest.raises(FailedRun) as info:
        loop.run()
    assert info.value is inner and loop.freed == 1


def test_the_python_loop_steps_with_one_blas_thread_and_restores_the_count() -> None:
    """lagsim.run.threads: inside a run in Python every BLAS library loaded has one thread,
    whatever it had before (here 2, set through threadpoolctl); after the run the count is
    back."""
    from threadpoolctl import threadpool_info, threadpool_limits

    spec, model = _model("double_pendulum")
    options = SimulateOptions.resolve(spec.simulate, {"t_end": 0.05, "method": "BDF"})
    seen: list[set[int]] = []

    def progress(_t: float) -> None:
        seen.append({lib["num_threads"] for lib in threadpool_info()
                     if lib["user_api"] == "blas"})

    with threadpool_limits(limits=2, user_api="blas"):
        before = {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}
        driver.run_python(Problem.build(spec, model, options), progress)
        after = {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}
    assert before == after == {2}
    assert seen and all(counts == {1} for counts in seen)
