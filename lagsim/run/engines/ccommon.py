"""What the C step loops share (:mod:`lagsim.run.engines.cloop`, :mod:`lagsim.run.engines.cradau`):
the compiler and the addresses of the model's compiled functions, the rows a C call made, the
pace of the calls, and the errors of the C loops' failure codes, made as the Python loop makes
them (:mod:`lagsim.run.monitor`)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

from lagsim.errors import IntegrationError
from lagsim.numeric import ccompile
from lagsim.numeric.ccompile import CFunction
from lagsim.numeric.csource import Status
from lagsim.run.monitor import At, Guard, Watch, first_nonfinite
from lagsim.run.problem import Problem
from lagsim.spec.options import BY_NAME

CALL_SECONDS = 0.05
"""A C call after the first takes as many accepted steps as fit in this time at the pace
measured (:func:`next_call`)."""

_COMPILER: dict[tuple[str | None, ...], str | None] = {}


def compiler() -> str | None:
    """:func:`lagsim.numeric.ccompile.compiler`, looked up once per environment (a PATH search
    costs 0.4 ms, a tenth of a short run)."""
    key = tuple(os.environ.get(k) for k in ("CC", "LAGSIM_NO_CC", "PATH"))
    if key not in _COMPILER:
        _COMPILER[key] = ccompile.compiler()
    return _COMPILER[key]


def c_function(function: Callable) -> CFunction | None:
    """``function`` when it is compiled to C (:class:`lagsim.numeric.ccompile.CFunction`, whose
    address the C loops call), else None (symengine's LLVM path)."""
    return function if isinstance(function, CFunction) else None


def too_small() -> str:
    """scipy's message for DOP853's step size too small."""
    from scipy.integrate import DOP853

    return DOP853.TOO_SMALL_STEP


def next_call(watch: Watch, t: float, taken: int, clock: float,
              progress: Callable[[float], None] | None, most: int = 2**20) -> int:
    """Between two C calls of a step loop (the last one began at ``clock``, took ``taken``
    accepted steps and ended at t): the pace check, the progress, and the steps of the next
    call, as many as fit in :data:`CALL_SECONDS` at the pace measured (16 to ``most``)."""
    elapsed = time.perf_counter() - clock
    watch.advance(t, progress)
    return int(min(max(max(taken, 1) * CALL_SECONDS / max(elapsed, 1e-6), 16), most))


def failure(code: int, problem: Problem, guard: Guard, value: float | None, state: At,
            when: float, regular_at: float) -> IntegrationError:
    """The error the Python loop raises for the C loop's failure ``code`` (the same messages,
    made by the same :class:`lagsim.run.monitor.Guard`); ``value`` is the --stop-when expression's
    non-finite value of :attr:`~lagsim.numeric.csource.Status.RUN_STOP_NONFINITE`."""
    form, numeric = problem.form, problem.numeric
    n = numeric.n
    if code == Status.RUN_SMALL:
        return guard.failure(state, too_small())
    if code == Status.RUN_SINGULAR:
        why = ("Matrix is not positive definite"
               if form.name == "udwadia-kalaba" or form.stabilizer.projects else "Singular matrix")
        return guard.singular(state, np.linalg.LinAlgError(why))
    return state_failure(code, problem, guard, value, state.y[:n], state.y[n:], when,
                         regular_at)


def state_failure(code: int, problem: Problem, guard: Guard, value: float | None,
                  q: np.ndarray, qd: np.ndarray, when: float, regular_at: float
                  ) -> IntegrationError:
    """The error of a failure found at the state (q, q̇) at ``when`` (either C loop's), as the
    Python loop's :class:`lagsim.run.monitor.Guard` and stop event make it."""
    numeric = problem.numeric
    if code == Status.RUN_NONFINITE:
        return IntegrationError(first_nonfinite(numeric, q, qd), time=when)
    if code == Status.RUN_MASS:
        guard.mass(when, q, qd, regular_at)
        guard.mass.fail(when, q, numeric.dynamics(when, q, qd)[0], regular_at)
    if code == Status.RUN_PROJECTION:
        return IntegrationError(Status.RUN_PROJECTION.message, time=when)
    if code == Status.RUN_STOP_NONFINITE:
        return IntegrationError(f"the {BY_NAME['stop_when'].flag} expression is "
                                f"{value}", time=when)
    return IntegrationError(f"the C step loop failed (code {code})", time=when)
