"""The reduced formulation in the C step loop (lagsim.run.engines.cloop.RLoop) against the Python
loop it replaces (lagsim.run.driver.run_python, the reference): the same trajectories, multipliers,
switches of partition, stop events and failures.

Both loops take scipy's DOP853 steps of the same chart's ODE (002 §23.5, the chart's compiled
right-hand side), rebuild the full state by the same map (compiled by symengine for the Python
loop, to C for the C loop: they differ by rounding) and switch the partition at the same steps
(Reduced.after_step, Wehage and Haug's pivot test, decided in Python whenever the C check is
not clear), so they agree to rounding: 1e-12 of each quantity's scale.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from inline_systems import CUSP, FALL

from lagsim.errors import InputError, LagsimError
from lagsim.numeric import ccompile
from lagsim.run import driver
from lagsim.run.engines import cloop
from lagsim.run.problem import Problem
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import load_spec, parse_spec
from lagsim.symbolic.model import build_model

pytestmark = pytest.mark.skipif(ccompile.compiler() is None,
                                reason="the C loop needs a C compiler (LAGSIM_NO_CC is set)")
SYSTEMS = Path(__file__).resolve().parents[1] / "systems"
CONSTRAINED = sorted(p.stem for p in SYSTEMS.glob("*.yaml")
                     if "constraints:" in p.read_text(encoding="utf-8"))
REDUCED = ["a01_pendulum", "atwood", "double_pendulum_constrained", "flat_pendulum",
           "moving_pivot_pendulum", "pendulum_constrained", "pendulum_natural", "sho_table",
           "slider_crank", "spring_pendulum"]
"""The bundled constrained systems reduced runs on (the others have velocity constraints or a
redundant one, checked below); a02_four_bar runs on a numeric chart to its singular flat
position (tested on its own)."""
BRANCH_POINT = "a02_four_bar"


@cache
def model(name: str, initial: tuple = ()):
    spec = load_spec(name, initial=dict(initial)) if initial else load_spec(name)
    return spec, build_model(spec)


def problem(name: str, initial: tuple = (), spec_model=None, charts: int | None = None,
            **flags) -> Problem:
    """The problem of ``name`` (reduced unless told), at most ``charts`` symbolic charts."""
    spec, built = spec_model or model(name, initial)
    flags = {"formulation": "reduced", **flags}
    return Problem.build(spec, built, SimulateOptions.resolve(spec.simulate, flags),
                         max_symbolic_charts=charts)


def both(name: str, initial: tuple = (), spec_model=None, charts: int | None = None, **flags):
    """(Python loop, C loop, the C loop object) of one problem."""
    reference = problem(name, initial, spec_model, charts, **flags)
    pr = problem(name, initial, spec_model, charts, **flags)
    loop = cloop.loop_for(pr)
    assert isinstance(loop, cloop.RLoop)
    with driver._quiet():
        return driver.run_python(reference), loop.run(), loop


def assert_same(a, b, rel: float = 1e-12) -> None:
    assert a.t.shape == b.t.shape and a.stop_reason == b.stop_reason
    np.testing.assert_array_equal(a.t[:-1], b.t[:-1])
    assert abs(a.t[-1] - b.t[-1]) <= rel * max(1.0, abs(a.t[-1]))
    for x, y in ((a.q, b.q), (a.qd, b.qd), (a.lam, b.lam), (a.residual, b.residual)):
        np.testing.assert_allclose(y, x, rtol=0, atol=rel * max(1.0, np.abs(x).max()))


def test_the_list_of_reduced_systems_is_complete() -> None:
    """Every bundled constrained system not in REDUCED has a velocity constraint, which reduced
    refuses (or is the redundant pendulum, refused likewise), so the comparison below covers
    all that reduced runs on."""
    for name in CONSTRAINED:
        if name in REDUCED or name == BRANCH_POINT:
            continue
        kinds = {c.kind for c in load_spec(name).constraints}
        assert kinds != {"holonomic"} or name == "pendulum_redundant", name
    with pytest.raises(InputError):
        problem("pendulum_redundant")


@pytest.mark.parametrize("name", REDUCED)
def test_c_loop_equals_python_loop(name: str) -> None:
    a, b, _ = both(name, t_end=1.0, samples=51)
    assert_same(a, b)


def test_over_the_top_switches_alike(monkeypatch) -> None:
    """Issue 16 §2's run: from x = 0, y = −1 with ẋ = 5 the bob swings above the horizontal, the
    partition switching between x and y; both loops switch at the same steps and agree to 1e-12, and
    h = ½·25 − 9.81 = 2.69 holds to 1e-8 (rtol 1e-12). The C loop leaves to Python only the
    first switch (reported) and those to a chart not built yet: at most one Python call of
    after_step per chart built, plus one, of 15 switches in 10 s."""
    from lagsim.run.reduced import Reduced

    calls = []
    after_step = Reduced.after_step

    def counted(self, t, y):
        calls.append(t)
        return after_step(self, t, y)

    initial = (("x", 0.0), ("y", -1.0), ("x_dot", 5.0))
    reference = problem("pendulum_natural", initial, t_end=10.0, samples=101, rtol=1e-12,
                        atol=1e-12)
    pr = problem("pendulum_natural", initial, t_end=10.0, samples=101, rtol=1e-12, atol=1e-12)
    loop = cloop.loop_for(pr)
    with driver._quiet():
        a = driver.run_python(reference)
        monkeypatch.setattr(Reduced, "after_step", counted)
        b = loop.run()
    switches = pr.form.switches
    assert switches == reference.form.switches >= 10 and not loop.handed_over
    assert len(calls) <= len(pr.form._symbolic) + 1 < switches
    assert_same(a, b)
    assert np.abs(b.energy - 2.69).max() < 1e-8


def test_stop_event_found_alike() -> None:
    """--stop-when in the reduced C loop: the first sign change of x (a quarter period from the
    release at 30°, tests/reference/exact.py) and a condition on the rod's multiplier, which
    the C loop takes from the chart's map: same times to 1e-12, same rows."""
    import math

    from reference import exact

    a, b, _ = both("pendulum_natural", t_end=10.0, samples=101, stop_when="x")
    assert a.stop_reason == b.stop_reason == "stop_when"
    assert abs(b.t[-1] - exact.period(math.pi / 6) / 4) < 1e-9
    assert_same(a, b)
    a, b, _ = both("pendulum_natural", t_end=10.0, samples=101, stop_when="lambda_rod + 5.5")
    assert a.stop_reason == b.stop_reason == "stop_when" and 0.0 < b.t[-1] < 10.0
    assert_same(a, b)


def test_numeric_chart_after_a_switch_alike() -> None:
    """With one symbolic chart allowed, the first switch lands on a numeric chart (Newton for
    the dependent coordinates at each right-hand side, in C as well): the solver restarts there
    as in the reference (driver.after_step, the kind of chart changed), and the two agree to
    1e-12 through the later switches between numeric charts."""
    initial = (("x", 0.0), ("y", -1.0), ("x_dot", 5.0))
    a, b, loop = both("pendulum_natural", initial, charts=1, t_end=4.0, samples=41)
    assert loop.problem.form.switches >= 5 and not loop.handed_over
    assert_same(a, b)


@pytest.mark.parametrize("charts", ["none", "refused", "one"])
def test_switches_made_in_c(monkeypatch, charts: str) -> None:
    """Where Reduced._chart_for builds no chart, the C loop makes the switch itself: to a
    numeric chart where no symbolic one fits and none is to be tried (none allowed,
    max_symbolic_charts = 0; or the reduction failed for that partition before,
    Reduced._no_symbolic: here for both, at the start and at the first switch), to a symbolic
    chart built before that fits. Between charts of one kind the solver goes on; between kinds
    (one symbolic chart allowed: the pendulum goes from it to a numeric chart and back) it is
    restarted with the last step size, as driver.after_step does. Python's after_step runs only
    at the first switch (which it reports). The pendulum over the top switches x ↔ y; both loops
    agree to 1e-12."""
    from lagsim.errors import InputError as Refused

    if charts == "refused":
        def refuse(*_args, **_kwargs):
            raise Refused("no symbolic reduction in this test")

        monkeypatch.setattr("lagsim.run.reduced.reduce_model", refuse)
    allowed = {"none": 0, "refused": None, "one": 1}[charts]
    decided = []
    after_step = cloop.RLoop._after_step

    def counted(self, guard, state):
        decided.append(state.t)
        return after_step(self, guard, state)

    monkeypatch.setattr(cloop.RLoop, "_after_step", counted)
    initial = (("x", 0.0), ("y", -1.0), ("x_dot", 5.0))
    a, b, loop = both("pendulum_natural", initial, charts=allowed, t_end=4.0, samples=41)
    assert loop.problem.form.switches >= 5 and not loop.handed_over
    assert len(decided) == 1
    assert_same(a, b)


def test_chart_without_c_code_goes_on_in_python(monkeypatch) -> None:
    """A symbolic chart whose map could not be compiled to C (here: any but the first) hands the
    rest of the run to the Python loop at the switch to it (driver.Resume: its solver starts
    with the C solver's next step size, which the reference keeps through the switch), and the
    whole run equals the reference to 1e-12."""
    parts, first = cloop._chart_parts, []

    def only_first(cc, chart):
        if not first:
            first.append(chart)
        return parts(cc, chart) if chart is first[0] else None

    monkeypatch.setattr(cloop, "_chart_parts", only_first)
    initial = (("x", 0.0), ("y", -1.0), ("x_dot", 5.0))
    a, b, loop = both("pendulum_natural", initial, t_end=2.0, samples=41)
    assert loop.handed_over and loop.problem.form.switches >= 3
    assert_same(a, b)


def test_numeric_chart_from_the_start_alike() -> None:
    """No symbolic chart at all (as for A02's four-bar, which has none within the solve
    budget): the numeric chart runs in the C loop from the start and equals the Python loop to
    1e-12; h = 0 for the bob released at rest from the horizontal holds to 1e-9."""
    from lagsim.run.reduced import PartitionChart

    pr = problem("pendulum_natural", charts=0)
    assert isinstance(pr.form.chart, PartitionChart)
    a, b, _ = both("pendulum_natural", charts=0, t_end=2.0, samples=41)
    assert_same(a, b)


def test_four_bar_stops_at_its_flat_position() -> None:
    """IFToMM A02's four-bar (systems/a02_four_bar.yaml) on its numeric chart reaches the flat
    position at t ≈ 0.714, where φ_q loses rank: both loops stop there with exit 1 (within
    1e-6 s; which check fires first, a chart singular within a step or φ_q's rank after one,
    depends on rounding at the singular point) and agree to 1e-12 up to t = 0.7. (Its symbolic
    reduction runs out of its budget; not trying it here saves that time and gives the same
    numeric chart.)"""
    errors = []
    for c in (False, True):
        pr = problem(BRANCH_POINT, charts=0, t_end=1.0, samples=101)
        with driver._quiet(), pytest.raises(LagsimError) as info:
            if c:
                loop = cloop.loop_for(pr)
                assert isinstance(loop, cloop.RLoop)
                loop.run()
            else:
                driver.run_python(pr)
        errors.append(info.value)
    a, b = errors
    assert abs(a.time - 0.71436) < 1e-4 and abs(a.time - b.time) < 1e-6
    for error in errors:
        assert str(error).startswith(f"at t = {error.time!r}: reduced: ")
        assert "use --formulation" in str(error)
    rows = a.partial.t <= 0.7 + 1e-12
    for x, y in ((a.partial.q, b.partial.q), (a.partial.qd, b.partial.qd),
                 (a.partial.lam, b.partial.lam)):
        np.testing.assert_allclose(y[rows], x[rows], rtol=0,
                                   atol=1e-12 * np.abs(x[rows]).max())


def test_branch_point_stops_alike() -> None:
    """A branch point no partition passes (the cusp y² = x³ at the origin, as in
    test_reduced_cli): both loops stop with the same message and time (to 1e-12) and the same
    rows before it."""
    spec = parse_spec(CUSP)
    spec_model = (spec, build_model(spec))
    errors = []
    for c in (False, True):
        pr = problem("cusp", spec_model=spec_model)
        with driver._quiet(), pytest.raises(LagsimError) as info:
            if c:
                loop = cloop.loop_for(pr)
                assert isinstance(loop, cloop.RLoop)
                loop.run()
            else:
                driver.run_python(pr)
        errors.append(info.value)
    a, b = errors
    assert str(a) == str(b) and "branch point" in str(b)
    assert abs(a.time - 0.8) < 0.1 and abs(a.time - b.time) <= 1e-12
    assert_same(a.partial, b.partial)


def test_failure_reported_alike() -> None:
    """A mass on the slant y = x pulled by −1/x falls into x = 0 at t = π/2 (the radial Kepler
    fall of μ = ½ from rest at 1, as in test_cloop): in the chart y = x the acceleration blows
    up there, and both loops stop with the same message and time (to 1e-12) and the same rows
    before it."""
    import math

    spec = parse_spec(FALL)
    spec_model = (spec, build_model(spec))
    errors = []
    for runner in (driver.run_python, lambda pr: cloop.loop_for(pr).run()):
        pr = problem("fall", spec_model=spec_model, t_end=2.0, samples=21)
        with driver._quiet(), pytest.raises(LagsimError) as info:
            runner(pr)
        errors.append(info.value)
    a, b = errors
    assert str(a) == str(b)
    assert abs(a.time - math.pi / 2) < 1e-9 and abs(b.time - a.time) <= 1e-12
    assert len(b.partial.t) == 17
    assert_same(a.partial, b.partial)
