"""The forward sensitivities stepped in the C loop (``lagsim_loop_sensitive``, issue 26) against
the Python loop that steps the same augmented ODE [y, vec(s)] (:class:`lagsim.run.sensitivity.
Sensitive`, the reference held to differences of whole runs by tests/test_sensitivities.py).

Both take scipy's DOP853 steps on the whole state with one error norm over y and s (joint error
control), and solve the same K dz = −r (Hindmarsh et al., "SUNDIALS", ACM TOMS 31 (2005) §2):
the Python loop by K⁻¹ (its pseudo-inverse with dependent rows), the C loop by the Cholesky
factor of M and the minimum-norm constraint step it uses for q̈ (seed 004's Udwadia–Kalaba
solve), so the two agree to rounding, amplified by a chaotic double pendulum over its run.
"""

from __future__ import annotations

import numpy as np
import pytest

from lagsim.numeric import ccompile
from lagsim.run import driver
from lagsim.run.engines import cloop
from lagsim.run.problem import Problem
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model

pytestmark = pytest.mark.skipif(ccompile.compiler() is None,
                                reason="the C loop needs a C compiler (LAGSIM_NO_CC is set)")
REL = 1e-9


def both(name: str, **flags):
    """(Python loop, C loop) trajectories of one problem with sensitivities."""
    spec = load_spec(name)
    pr = Problem.build(spec, build_model(spec), SimulateOptions.resolve(spec.simulate, flags))
    loop = cloop.loop_for(pr)
    assert loop is not None and loop.sensitive is not None
    with driver._quiet():
        return driver.run_python(pr), loop.run()


def assert_same(a, b) -> None:
    """Every column, the sensitivities included, to REL relative to its largest value."""
    assert a.columns == b.columns and a.t.shape == b.t.shape
    assert any(c.startswith("d(") for c in a.columns)
    for c in a.columns:
        x, y = np.asarray(a[c]), np.asarray(b[c])
        np.testing.assert_allclose(y, x, rtol=0, atol=REL * max(1.0, np.abs(x).max()),
                                   err_msg=c)


@pytest.mark.parametrize(("name", "flags"), [
    ("double_pendulum", {"sensitivities": ("l1", "m2", "theta1"), "t_end": 0.3}),
    ("driven_damped_pendulum", {"sensitivities": ("c", "F0")}),
    ("a01_pendulum", {"sensitivities": ("l", "g"), "stabilize": "baumgarte"}),
    ("a01_pendulum", {"sensitivities": ("l", "x_dot"), "stabilize": "projection"}),
    ("pendulum_redundant", {"sensitivities": ("l",), "stabilize": "projection"}),
    ("slider_crank", {"sensitivities": ("l", "w0"), "stabilize": "none"}),
])
def test_c_sensitivities_equal_python(name: str, flags: dict) -> None:
    a, b = both(name, **{"t_end": 1.0, "samples": 21, **flags})
    assert_same(a, b)


def test_c_sensitivities_stop_event() -> None:
    """A --stop-when row carries the sensitivities at the event, as the Python loop's."""
    a, b = both("pendulum", t_end=5.0, samples=11, sensitivities=("l",),
                stop_when="theta")
    assert a.stop_reason == b.stop_reason == "stop_when"
    assert_same(a, b)
