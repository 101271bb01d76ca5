"""Radau IIA's step loop in C for unconstrained systems (issue 9, "Stiff systems").

With ``--method Radau`` the Python loop (:mod:`lagsim.run.engines.python`) drives scipy's
``Radau`` one Python round per accepted step, and each step calls the right-hand side and
solves the Newton systems through Python: on a stiff system most of the run's time. For the
formulation ``ode`` this module runs the same loop in C (``lagsim/numeric/c/cradau.c``): scipy's
algorithm step for step (scipy/integrate/_ivp/radau.py — the collocation system solved by simplified
Newton in the eigenbasis of Radau IIA's matrix, its error estimate, the step-size factors of
``predict_factor`` and the rules for refreshing the Jacobian and the LU factors of MU_REAL/h·I − J
and MU_COMPLEX/h·I − J; Hairer & Wanner, *Solving Ordinary Differential Equations II*, §IV.8), with
scipy's constants printed exactly, the model's compiled dynamics and the compiled analytic Jacobian
of :mod:`lagsim.numeric.jacobian` called through their addresses, the checks of
:class:`lagsim.run.monitor.Guard` and the samples from the step's dense output
(``RadauDenseOutput``). Both loops give the same trajectory to rounding (tests/test_cradau.py: 1e-9
relative on the samples; the Newton iteration's stopping test may flip on rounding).

Python runs between calls (the progress bar, the pace check, Ctrl-C, and
:class:`lagsim.run.aliasing.AliasWatch`, replayed from the steps the call took). The other
formulations, ``--stop-when`` and ``--section`` stay on the Python loop (expected, silent); a
library that cannot be built says so on stderr, once, and the Python loop runs.
"""

from __future__ import annotations

import ctypes
import math
import time
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from lagsim.errors import IntegrationError
from lagsim.numeric import cache, ccompile, csource
from lagsim.numeric.ccompile import CFunction
from lagsim.numeric.compile import NumericSystem
from lagsim.numeric.csource import LoopResult, Status
from lagsim.numeric.jacobian import RhsJacobian, rhs_jacobian
from lagsim.numeric.memo import Memo
from lagsim.output.trajectory import Trajectory
from lagsim.run.aliasing import AliasWatch
from lagsim.run.engines.base import LoopEngine, Progress, StepLoop
from lagsim.run.engines.ccommon import (
    c_function,
    compiler,
    failure,
    next_call,
    state_failure,
)
from lagsim.run.formulations import SINGULAR_RTOL
from lagsim.run.monitor import MASS_CHECK_EVERY, At, Guard, Watch
from lagsim.run.problem import Problem
from lagsim.run.registry import FORMULATIONS

if TYPE_CHECKING:
    import numpy.typing as npt

STEPS_PER_CALL = 256
"""Accepted steps of the first C call; later calls take as many as fit in
:data:`lagsim.run.engines.ccommon.CALL_SECONDS` at the pace measured."""
OPTIMIZE = "-O2"

LIBRARIES: Memo[ctypes.CDLL | None] = Memo(4)
"""The Radau loop's library (model independent) by compiler, in this process."""


def _constants() -> str:
    """scipy's Radau constants (radau.py), printed exactly."""
    from scipy.integrate._ivp import radau as r

    def array(name: str, values: npt.ArrayLike) -> str:
        flat = np.asarray(values, dtype=float).ravel()
        return f"static const double {name}[] = {{{', '.join(repr(float(v)) for v in flat)}}};"

    return "\n".join([
        f"#define MU_REAL {float(r.MU_REAL)!r}",
        f"#define MU_COMPLEX_RE {float(np.real(r.MU_COMPLEX))!r}",
        f"#define MU_COMPLEX_IM {float(np.imag(r.MU_COMPLEX))!r}",
        array("C", r.C), array("E", r.E), array("T", r.T), array("TI", r.TI),
        array("TICR", np.real(r.TI_COMPLEX)), array("TICI", np.imag(r.TI_COMPLEX)),
        array("P", r.P)])


def _library(cc: str) -> ctypes.CDLL | None:
    """The Radau loop's shared library (model independent), built once per machine; None when
    it cannot be built or loaded (said on stderr)."""
    return LIBRARIES.get(cc, lambda: _load_library(cc))


def _load_library(cc: str) -> ctypes.CDLL | None:
    text = csource.read("cradau.c").replace("@RUNTIME@", ccompile.RUNTIME)
    lib = None
    try:
        lib, _ = ccompile.build_and_load(cc, "cradau",
                                         lambda: text.replace("@CONSTANTS@", _constants()),
                                         (OPTIMIZE, *ccompile.FLAGS), key_text=text)
        vp = ctypes.c_void_p
        lib.lagsim_radau_new.restype = vp
        lib.lagsim_radau_new.argtypes = (vp,) * 7
        lib.lagsim_radau_free.argtypes = (vp,)
        lib.lagsim_radau_free.restype = None
        lib.lagsim_radau_start.argtypes = (vp, ctypes.c_double, vp, ctypes.c_double)
        lib.lagsim_radau_start.restype = ctypes.c_int
        lib.lagsim_radau_run.argtypes = (vp, vp, ctypes.c_int, vp, vp, ctypes.c_int,
                                         ctypes.POINTER(LoopResult), vp, vp)
        lib.lagsim_radau_run.restype = ctypes.c_int
    except Exception as exc:  # the Python loop still runs, and is slower: say so
        cache.say_once("cradau", "warning: the C Radau loop could not be built; stepping in "
                       "Python instead (slower)", f"{type(exc).__name__}: {exc}")
        lib = None
    return lib


class RadauLoop(StepLoop):
    """The C Radau loop for one problem: :meth:`run` gives the trajectory the Python loop with
    scipy's Radau would."""

    def __init__(self, problem: Problem, lib: ctypes.CDLL, dynamics: CFunction,
                 jacobian: CFunction) -> None:
        super().__init__(problem)
        self.lib = lib
        self.dynamics = dynamics.address
        self.jacobian = jacobian
        self.params = dynamics.params
        self.steps = 0
        """Accepted steps of the last :meth:`run` (``nfev``, ``njev``, ``nlu`` its right-hand
        sides, Jacobians and LU factorizations, counted as scipy counts them)."""
        self.nfev = self.njev = self.nlu = 0
        self._handle: int | None = None

    def _begin(self) -> tuple[Watch, np.ndarray | None]:
        problem = self.problem
        y0 = np.ascontiguousarray(problem.form.initial(problem.t0, problem.q0, problem.qd0),
                                  dtype=float)
        return Watch.start(problem, y0), y0

    def _run_impl(self, watch: Watch, y0: np.ndarray | None, progress: Progress | None
                  ) -> Trajectory:
        """Step the problem from its start to ``t_end`` in C calls of many steps each (as
        :class:`lagsim.run.engines.python.PythonLoop` with scipy's Radau)."""
        assert y0 is not None
        problem = self.problem
        form, options, numeric = problem.form, problem.options, problem.numeric
        n = numeric.n
        samples, guard = watch.samples, watch.guard
        alias = AliasWatch(form.unpack, samples.times, numeric.coordinates, form.report,
                           problem.qd0, options.naming)
        rtol = options.rtol
        atol = np.empty(2 * n)
        atol[:] = options.atol
        ints = np.array([n, MASS_CHECK_EVERY], dtype=np.intc)
        eps = np.finfo(float).eps
        doubles = np.array([rtol, options.t_end, max(10 * eps / rtol, min(0.03, rtol**0.5)),
                            SINGULAR_RTOL, guard.mass.scale])
        handle = self.lib.lagsim_radau_new(
            ints.ctypes.data, doubles.ctypes.data, atol.ctypes.data, self.dynamics,
            self.jacobian.address, self.params.ctypes.data, self.jacobian.params.ctypes.data)
        if not handle:
            raise MemoryError("the C Radau loop could not allocate its work space")
        self._handle = handle
        if self.lib.lagsim_radau_start(handle, problem.t0, y0.ctypes.data, 0.0):
            raise failure(Status.RUN_SINGULAR, problem, guard, None, At(problem.t0, y0),
                          problem.t0, problem.t0)
        times = np.ascontiguousarray(samples.times, dtype=float)
        rows = np.zeros((len(times), 2 * n))
        result = LoopResult()
        last = np.zeros(2 * n)
        k = ctypes.c_int(samples.k)
        chunk = STEPS_PER_CALL
        trace = np.zeros((chunk, 1 + 2 * n))
        while True:
            before, clock = k.value, time.perf_counter()
            if len(trace) < chunk:
                trace = np.zeros((chunk, 1 + 2 * n))
            code = self.lib.lagsim_radau_run(handle, times.ctypes.data, len(times),
                                             ctypes.byref(k), rows.ctypes.data, chunk,
                                             ctypes.byref(result), last.ctypes.data,
                                             trace.ctypes.data)
            state = self.at = At(result.t, last.copy(), result.h_abs)
            self.nfev, self.steps = result.nfev, result.nsteps
            self.njev, self.nlu = result.njev, result.nlu
            taken = result.taken
            for i in range(taken if not alias.done else 0):
                alias.accepted(float(trace[i, 0]), trace[i, 1:])
            samples.extend(times[before:k.value], rows[before:k.value], k.value)
            if code == Status.RUN_SMALL:
                raise guard.failure(state, _too_small())
            if code not in (Status.RUN_MORE, Status.RUN_DONE):
                raise _failure_at(code, problem, guard, state, result.when,
                                  result.regular_at)
            if code == Status.RUN_DONE:
                break
            chunk = next_call(watch, state.t, taken, clock, progress, 2**16)
        if progress is not None:
            progress(1.0)
        return samples.trajectory("t_end", "")

    def _free(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            self.lib.lagsim_radau_free(handle)


def _too_small() -> str:
    from scipy.integrate import Radau

    return Radau.TOO_SMALL_STEP


def _failure_at(code: int, problem: Problem, guard: Guard, state: At, when: float,
                regular_at: float) -> IntegrationError:
    """The error the Python loop raises for the C loop's failure ``code``."""
    if code == Status.RUN_SINGULAR:
        return failure(Status.RUN_SINGULAR, problem, guard, None, state, when, regular_at)
    n = problem.numeric.n
    return state_failure(code, problem, guard, None, state.y[:n], state.y[n:], when,
                         regular_at)


def loop_or_refusal(problem: Problem) -> RadauLoop | str:
    """The C Radau loop for ``problem``, or why the Python loop is to run: a method other
    than Radau, a formulation other than ``ode`` (or a subclass of it), ``--stop-when``,
    ``--section``, a model or Jacobian without C code (all expected, and silent), or a library
    that cannot be built (said on stderr)."""
    numeric, form, options = problem.numeric, problem.form, problem.options
    if options.method != "Radau":
        return f"--method {options.method} is not Radau"
    if form.name != "ode" or numeric.m:
        return f"formulation {form.name} has no C Radau loop (ode only)"
    if type(form) is not FORMULATIONS["ode"]:
        return "the formulation is a subclass of ode's class"
    if problem.stop is not None:
        return "--stop-when is looked for in Python"
    if options.section is not None:
        return "--section is taken in Python"
    if not isinstance(numeric, NumericSystem):
        return "the compiled system is a stand-in, not a NumericSystem"
    if not options.t_end > problem.t0 or not math.isfinite(options.t_end):
        return "the span is not finite and positive"
    dynamics = c_function(numeric.compiled()[0])
    if dynamics is None:
        return "the model has no C code (symengine's LLVM path)"
    jac = rhs_jacobian(form, problem.model)
    function = c_function(jac.function) if isinstance(jac, RhsJacobian) else None
    if function is None:
        return "the analytic Jacobian has no C code"
    cc = compiler()
    if cc is None:
        return "no C compiler"
    lib = _library(cc)
    if lib is None:
        return "the C Radau loop could not be built"
    return RadauLoop(problem, lib, dynamics, function)


def radau_loop_for(problem: Problem) -> RadauLoop | None:
    """The C Radau loop for ``problem``, or None when the Python loop is to run
    (:func:`loop_or_refusal`)."""
    loop = loop_or_refusal(problem)
    return None if isinstance(loop, str) else loop


class CRadauEngine(LoopEngine):
    """Radau IIA with the formulation ode, stepped in C (:class:`RadauLoop`)."""

    name: ClassVar[str] = "C Radau"

    def loop_for(self, problem: Problem) -> StepLoop | str:
        return loop_or_refusal(problem)
