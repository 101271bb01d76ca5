"""The accepted-step loop of a run in C: whole sample intervals per call (issue 9, issue 17 §4).

The Python loop (:mod:`lagsim.run.engines.python`) steps a formulation's ODE with scipy's
``OdeSolver``, one Python round per accepted step (the step itself, the checks, the
``--stop-when`` search, the samples, the projection). With DOP853 (the default) and the
formulations ``ode``, ``index1`` and ``udwadia-kalaba`` under any stabilizer (``none``,
``baumgarte``, ``projection``), this module runs that same loop in C
(``lagsim/numeric/c/cloop.c``, compiled once per machine with :data:`OPTIMIZE` and kept in the
compile cache of :mod:`lagsim.numeric.cache`): the model's compiled functions are called through
their addresses; index1's augmented system is solved through its Schur complement (Cholesky of
M, factored once while M does not change, and of A M⁻¹ Aᵀ), by LU with partial pivoting of the
augmented matrix when that is ill-conditioned; the minimum-norm solves of Udwadia–Kalaba and of
the projection by the normal equations (Cholesky) when well conditioned, else by a one-sided
Jacobi SVD (the same cut-off :data:`lagsim.run.formulations.RCOND`); the dense linear algebra is
the model libraries' own (``lagsim/numeric/c/runtime.c``). The ``--stop-when`` expression is
compiled to C as well, its sign changes inside each step looked for as
:mod:`lagsim.run.crossings` does (the same pieces, the same constants) and the first found by
Brent's method on the step's dense output. Each part mirrors the Python code it replaces (named
in the C source), so both loops give the same trajectory to rounding (tests/test_cloop.py holds
them to 1e-12 on every bundled constrained system). Python runs once per call (the progress bar,
the pace check and Ctrl-C), about every :data:`lagsim.run.engines.ccommon.CALL_SECONDS` whatever
the size of the model, not once per step.

A run with ``--sensitivities`` (:class:`lagsim.run.sensitivity.Sensitive`, issue 26) steps in
the same loop (``lagsim_loop_sensitive``): the state is [y, vec(s)], DOP853's error norm covers
both (joint error control, as in the Python loop), the right-hand side adds ṡ = [s_q̇, dq̈] from
the compiled ∂R/∂q, ∂R/∂q̇, ∂R/∂θ and the loop's factor of M, the projection stabilizer projects
s onto the constraints' tangent, and each sample adds dλ (tests/test_sensitivities_c.py: the
Python loop's numbers to 1e-9).

The ``reduced`` formulation runs in C as well (:class:`RLoop`, the reduced section at the end
of this module and of ``lagsim/numeric/c/cloop.c``): the chart's ODE in the free coordinates is
stepped by the same DOP853 code, a symbolic chart's full state comes from its map (compiled to C), a
numeric chart's from Newton's method on the constraints (mirrored in C), and ``Reduced.after_step``
(the chart check, the switch to a symbolic chart already built or to a numeric chart where no
symbolic one is to be tried) is done in C; Python runs only where it decides (the first switch, a
new symbolic chart, a check within rounding of its threshold, rank loss)
(tests/test_cloop_reduced.py: 1e-12).

The Python loop stays the reference and the path for everything else: the other methods,
systems compiled without a C compiler (symengine's LLVM path). Those are expected, and silent;
a C loop that cannot be built or loaded says so on stderr, once, and the Python loop runs (a
reduced run that reaches a symbolic chart without C code goes on in it from there).
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import math
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from lagsim.errors import IntegrationError
from lagsim.numeric import cache, ccompile, csource
from lagsim.numeric.ccompile import CFunction
from lagsim.numeric.compile import NumericSystem, cold_build
from lagsim.numeric.csource import LoopResult, Status
from lagsim.numeric.memo import Memo
from lagsim.output.trajectory import Trajectory
from lagsim.run.crossings import message as missed_message
from lagsim.run.engines.base import LoopEngine, Progress, StepLoop
from lagsim.run.engines.ccommon import (
    c_function,
    compiler,
    failure,
    next_call,
    state_failure,
    too_small,
)
from lagsim.run.formulations import RCOND, SINGULAR_RTOL
from lagsim.run.monitor import MASS_CHECK_EVERY, At, Guard, Samples, Watch, assemble
from lagsim.run.problem import Problem
from lagsim.run.registry import FORMULATIONS, STABILIZERS
from lagsim.spec.options import BY_NAME, SimulateOptions
from lagsim.spec.system import SystemSpec

if TYPE_CHECKING:
    import numpy.typing as npt

    from lagsim.run.reduced import PartitionChart, Reduced, SymbolicChart
    from lagsim.run.sensitivity import Sensitive

STEPS_PER_CALL = 4096
"""Accepted steps of the first C call; later calls take as many as fit in
:data:`lagsim.run.engines.ccommon.CALL_SECONDS` at the pace measured (between 16 and 2**20)."""
FORMS = {"ode": 0, "index1": 1, "udwadia-kalaba": 2}
STABILIZE = {"none": 0, "baumgarte": 1, "projection": 2}
PATHS = ("cholesky", "svd", "lu")
"""The ways the C loop solves a constrained system: the normal equations by Cholesky (index1's
Schur complement, the minimum-norm solves when well conditioned), the Jacobi SVD (minimum-norm
solves of rank-deficient or ill-conditioned rows), LU of index1's augmented matrix."""
OPTIMIZE = "-O3"
"""The loop library's optimisation: -O3 vectorizes its elementwise loops (DOP853's stage sums
across the state, the products with a diagonal mass matrix), which -O2's cost model leaves
scalar; without fast-math no sum is reordered, so the numbers are those of -O2 (natural
8-chain: 10 % fewer instructions per step; compiled once per machine)."""

PLAIN_FLAGS = ("-fno-inline-functions-called-once",)
"""The plain loop's library (:func:`library`) is compiled with these too: without the reduced
block DOP853's step is called from one place, and gcc -O3 inlined it into ``lagsim_loop_run``
(4,612 instructions against 410 in the whole library); with this flag ``dop853_step``,
``dense``, ``rhs``, ``accelerations`` and ``scan_step`` are the whole library's machine code,
instruction for instruction (the double pendulum's 10 s run at 1e-10 took the same time with
either library, 1.08–1.11 ms, bench/build_results.md)."""
LIBRARIES: Memo[ctypes.CDLL | None] = Memo(4)
"""The step loop's libraries (model independent) by compiler and :func:`library`'s ``whole``, in
this process."""
STOP_LIBRARIES: Memo[tuple[ctypes.CDLL, int] | None] = Memo(16)
"""The ``--stop-when`` libraries loaded in this process, by compiler and C source (which holds
the parameters as inputs, not their values: a sweep over them loads one)."""


def _coefficients() -> str:
    """DOP853's tables as scipy's class ``scipy.integrate.DOP853`` holds them (sliced from its
    module of coefficients as the class slices them, without importing ``scipy.integrate``:
    half a second of a machine's first run), printed exactly."""

    def array(name: str, values: npt.ArrayLike) -> str:
        flat = np.asarray(values, dtype=float).ravel()
        return f"static const double {name}[] = {{{', '.join(repr(float(v)) for v in flat)}}};"

    d = ccompile.dop853_coefficients()
    s = d.N_STAGES
    return "\n".join([
        f"#define DOP_S {s}", f"#define DOP_SX {d.D.shape[1]}",
        array("DOP_A", d.A[:s, :s]), array("DOP_B", d.B), array("DOP_C", d.C[:s]),
        array("DOP_E3", d.E3), array("DOP_E5", d.E5), array("DOP_AX", d.A[s + 1:]),
        array("DOP_CX", d.C[s + 1:]), array("DOP_D", d.D)])


def _crossings() -> str:
    """The constants of :mod:`lagsim.run.crossings` for the C scan, printed exactly."""
    from lagsim.run import crossings as c

    return "\n".join(f"#define SCAN_{name} {value!r}" for name, value in (
        ("SPLIT", c.SPLIT), ("P", c.SPLIT_P), ("Q", c.SPLIT_Q), ("H00", c.H00), ("H10", c.H10),
        ("H01", c.H01), ("H11", c.H11), ("SMALLEST", c.SMALLEST), ("SLOPE_STEP", c.SLOPE_STEP),
        ("SLOPE_FLOOR", c.SLOPE_FLOOR), ("XTOL", c.XTOL), ("RTOL", c.RTOL)))


_BUILDING: dict[tuple[str, bool], threading.Lock] = {}
"""Held while one of :func:`library`'s libraries is loaded or built (by
:func:`library_ahead`'s thread or a run)."""


def library_ahead(spec: SystemSpec, options: SimulateOptions) -> None:
    """Start loading the loop library a run of ``spec`` with ``options`` will ask for (the whole
    one with the reduced formulation or unilateral contacts, else the plain one) in a
    background thread, when the run is DOP853's with a C compiler, this process has not
    loaded it, gcc has just compiled the run's model (:func:`lagsim.numeric.compile.
    cold_build`: a cold model, as on a machine's first run) and the compile cache has no file
    of it (:func:`lagsim.numeric.cache.holds`): gcc then builds the library (its few seconds
    the longest part of a first run) while the run is prepared and the runtime's other
    libraries are built (issue 31, "Build"). A run that asks for it meanwhile waits for the
    thread."""
    cc = compiler()
    if cc is None or options.method != "DOP853" or not cold_build():
        return
    whole = options.formulation == "reduced" or bool(spec.contacts)
    if (cc, whole) in LIBRARIES:
        return
    tag, template, flags = _template(whole)
    if cache.holds(ccompile.build_key(cc, tag, flags, template)):
        return
    threading.Thread(target=contextvars.copy_context().run, args=(library, cc, whole),
                     name="lagsim-runtime", daemon=True).start()


def library(cc: str, whole: bool = False) -> ctypes.CDLL | None:
    """The loop's shared library (model independent), built once per machine; None when it
    cannot be built or loaded (said on stderr). Plain (``whole`` false): ``cloop.c`` without its
    reduced block, what every other run needs; ``whole``: all of ``cloop.c`` and ``impacts.c``
    (the free flights of :mod:`lagsim.run.engines.cimpacts`), built at the first run that
    uses them. The two are separate libraries (a handle of one is never passed to the other):
    a first run on a machine compiles only the plain one (3.9–4.8 s of gcc's CPU at -O3
    against 4.9–6.3 s for the whole, bench/build_results.md)."""
    with _BUILDING.setdefault((cc, whole), threading.Lock()):
        return LIBRARIES.get((cc, whole), lambda: _load_library(cc, whole))


def _template(whole: bool) -> tuple[str, str, tuple[str, ...]]:
    """The loop library's tag, source without DOP853's tables (its key text) and options."""
    template = (csource.read("cloop.c").replace("@RUNTIME@", ccompile.RUNTIME)
                .replace("@CROSSINGS@", _crossings()))
    if whole:
        return ("cloop", template + "\n" + csource.read("impacts.c"),
                (OPTIMIZE, *ccompile.FLAGS))
    return ("cloop-plain", "#define LAGSIM_PLAIN_LOOP 1\n" + template,
            (OPTIMIZE, *ccompile.FLAGS, *PLAIN_FLAGS))


def _load_library(cc: str, whole: bool) -> ctypes.CDLL | None:
    tag, template, options = _template(whole)
    lib = None
    try:
        lib, _ = ccompile.build_and_load(
            cc, tag, lambda: template.replace("@COEFFICIENTS@", _coefficients()), options,
            key_text=template)
        _loop_argtypes(lib)
        if whole:
            _reduced_argtypes(lib)
    except Exception as exc:  # the Python loop still runs, and is slower: say so
        cache.say_once("cloop", "warning: the C step loop could not be built; stepping in "
                       "Python instead (slower)", f"{type(exc).__name__}: {exc}")
        lib = None
    return lib


def _loop_argtypes(lib: ctypes.CDLL) -> None:
    """Argument and result types of the loop's entry points (``lagsim_loop_*``)."""
    lib.lagsim_loop_new.restype = ctypes.c_void_p
    lib.lagsim_loop_new.argtypes = (ctypes.c_void_p,) * 9
    lib.lagsim_loop_sensitive.restype = ctypes.c_void_p
    lib.lagsim_loop_sensitive.argtypes = ((ctypes.c_void_p,) * 9
                                          + (ctypes.c_int, ctypes.c_int)
                                          + (ctypes.c_void_p,) * 3 + (ctypes.c_int,))
    lib.lagsim_loop_free.argtypes = (ctypes.c_void_p,)
    lib.lagsim_loop_free.restype = None
    lib.lagsim_loop_start.argtypes = (ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p,
                                      ctypes.c_double)
    lib.lagsim_loop_start.restype = ctypes.c_int
    lib.lagsim_loop_bound.argtypes = (ctypes.c_void_p, ctypes.c_double)
    lib.lagsim_loop_bound.restype = None
    lib.lagsim_loop_run.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                    ctypes.POINTER(LoopResult), ctypes.c_void_p,
                                    ctypes.c_void_p)
    lib.lagsim_loop_run.restype = ctypes.c_int
    lib.lagsim_loop_alias.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    lib.lagsim_loop_alias.restype = None
    lib.lagsim_loop_paths.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    lib.lagsim_loop_paths.restype = None
    lib.lagsim_loop_missed.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    lib.lagsim_loop_missed.restype = None
    lib.lagsim_loop_energy.argtypes = (ctypes.c_void_p,) * 4
    lib.lagsim_loop_energy.restype = None
    lib.lagsim_loop_columns.argtypes = ((ctypes.c_void_p,) * 3 + (ctypes.c_int,) * 3
                                        + (ctypes.c_void_p,))
    lib.lagsim_loop_columns.restype = None


def _symbol(lib: ctypes.CDLL, name: str) -> int:
    """The address of the function ``name`` of a loaded library."""
    return int(ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0)


def _stop_function(cc: str, problem: Problem) -> tuple[ctypes.CDLL, int] | None:
    """The ``--stop-when`` expression as C ``lagsim_stop(in, p, out)`` with in = (t, q, q̇, λ)
    and p the model's parameters (the array the loop passes to the model's functions), so one
    library serves every parameter value: (the library, the function's address); None when it
    cannot be compiled (said on stderr)."""
    stop = problem.stop
    assert stop is not None
    try:
        body = ccompile.c_function("stop", stop.arguments, [stop.expression], stop.parameters)
    except Exception as exc:  # an expression C cannot print: the Python loop evaluates it
        cache.say_once("cloop-stop", f"warning: the {BY_NAME['stop_when'].flag} expression "
                       "could not be written as C; stepping in Python instead (slower)",
                       f"{type(exc).__name__}: {exc}")
        return None
    text = body + ("\nvoid lagsim_stop(const double *in, const double *p, double *out) "
                   "{ stop(in, p, out); }\n")
    source = "#include <math.h>\n" + text

    def build() -> tuple[ctypes.CDLL, int] | None:
        try:
            lib, _ = ccompile.build_and_load(cc, "stop", source, ccompile.flags())
            return lib, _symbol(lib, "lagsim_stop")
        except Exception as exc:
            cache.say_once("cloop-stop", f"warning: the {BY_NAME['stop_when'].flag} expression "
                           "could not be compiled to C; stepping in Python instead (slower)",
                           f"{type(exc).__name__}: {exc}")
            return None

    return STOP_LIBRARIES.get((cc, source), build)


class Buffers:
    """The arrays one run's C calls read and write (sample times, rows, the last state, the
    event's row, the energy of each row and of the event's, the output of a run again as
    ``lagsim_loop_columns`` writes it) and their addresses, taken once: each ``.ctypes.data``
    costs about a ctypes call, and a loop run again (:meth:`StepLoop.reusable`) takes the same
    buffers. The rows a call wrote are copied out (:meth:`Samples.extend`,
    :meth:`CLoop._run_again`), so no trajectory holds a buffer."""

    __slots__ = ("times", "rows", "last", "event", "energy", "out", "addresses",
                 "energy_address", "out_address")

    def __init__(self, times: np.ndarray, width: int, size: int) -> None:
        self.times = np.array(times, dtype=float)
        self.rows = np.zeros((len(self.times), max(width, 1)))
        self.last = np.zeros(size)
        self.event = np.zeros(max(width, 1))
        self.energy = np.zeros(len(self.times) + 1)
        self.out = np.zeros(len(self.times) * (self.rows.shape[1] + 2))
        self.addresses = (self.times.ctypes.data, self.rows.ctypes.data, self.last.ctypes.data,
                          self.event.ctypes.data)
        self.energy_address = self.energy.ctypes.data
        self.out_address = self.out.ctypes.data

    def fits(self, times: np.ndarray, width: int, size: int) -> bool:
        """Whether these are the buffers of a run of these sample times, row width and state
        size (then cleared as new ones would be: the rows are written before they are read)."""
        if (self.rows.shape[1] != max(width, 1) or len(self.last) != size
                or not np.array_equal(self.times, times)):
            return False
        self.last.fill(0.0)
        self.event.fill(0.0)
        return True


class Again:
    """What a run of a plain problem leaves for the next run of the same problem
    (:meth:`CLoop._run_again`): ``lagsim_loop_new``'s arguments and the arrays behind their
    addresses (held, whatever handle the loop makes later), the start state passed to
    ``lagsim_loop_start`` (held) and its address, the first row's [q, q̇, λ] and energy."""

    __slots__ = ("args", "arrays", "y0", "address", "row", "energy")

    def __init__(self, made: tuple[str, bytes, tuple[object, ...], tuple[np.ndarray, ...]],
                 y0: np.ndarray, row: np.ndarray, energy: float) -> None:
        self.args, self.arrays = made[2], made[3]
        self.y0, self.address = y0, y0.ctypes.data
        self.row, self.energy = row, energy


class CLoop(StepLoop):
    """The C loop for one problem: :meth:`run` gives the trajectory the Python loop would."""

    def __init__(self, problem: Problem, lib: ctypes.CDLL, stop: tuple[ctypes.CDLL, int] | None,
                 functions: tuple[CFunction, CFunction, CFunction],
                 sensitive: tuple[Sensitive, CFunction] | None = None,
                 energy: CFunction | None = None) -> None:
        super().__init__(problem)
        self.lib = lib
        self.stop = stop
        self.energy = energy
        """The compiled energy the C loop evaluates at each sample it writes (issue 31: the
        output quantities computed with the samples); None: :meth:`Samples.trajectory` does."""
        self._energy_params = 0 if energy is None else energy.params.ctypes.data
        self._again: Again | None = None
        self._y0: np.ndarray | None = None
        self.sensitive = sensitive
        """The run's sensitivities (issue 26) and their compiled derivatives, stepped in the
        same C loop as the state, the error control joint or of the state alone
        (``lagsim_loop_sensitive``)."""
        self._pick = np.zeros(1)
        self.params = functions[0].params
        self.addresses = [f.address for f in functions]
        self.steps = 0
        """Accepted steps of the last :meth:`run` (and ``nfev`` its evaluations)."""
        self.nfev = 0
        self.calls = 0
        """The C calls of the last :meth:`run` (one while it takes at most
        :data:`STEPS_PER_CALL` steps)."""
        self.paths = dict.fromkeys(PATHS, 0)
        """How the last :meth:`run` solved its constrained systems: solves of each path."""
        self._said_missed = False
        self._handle: int | None = None
        self._guard: Guard | None = None
        self._made: tuple[str, bytes, tuple[object, ...], tuple[np.ndarray, ...]] | None = None
        """The arguments of the last handle made (:meth:`new_handle`): the mass scale and atol
        they were made for, the addresses, and the arrays behind them."""
        self._buffers: Buffers | None = None
        self._out = np.zeros(7)
        self._out_address = self._out.ctypes.data

    def reusable(self) -> bool:
        """A run makes its own handle (:meth:`_start`) and frees it (:meth:`_free`); the
        reduced loop's charts and a sensitive form are not kept across runs."""
        return type(self) is CLoop and self.sensitive is None

    def run(self, progress: Progress | None = None) -> Trajectory:
        """:meth:`StepLoop.run`, noting what a run again takes from it (:meth:`_again_of`)."""
        self._again = None
        trajectory = super().run(progress)
        self._again = self._again_of(trajectory)
        return trajectory

    def again(self, progress: Progress | None = None) -> Trajectory | None:
        """:meth:`_run_again` when the last run was plain (:meth:`_again_of`), else None."""
        again, self._again = self._again, None
        if again is None:
            return None
        trajectory = self._run_again(again, progress)
        if trajectory is not None:
            self._again = again
        return trajectory

    def _again_of(self, trajectory: Trajectory) -> Again | None:
        """What :meth:`_run_again` takes from this plain run (None for another): a run of the
        plain loop to ``t_end`` in one C call, every sample time a row and the energy computed
        in C, without ``--stop-when`` (whose scan's report is said once per run), sensitivities
        or extra columns."""
        buffers, made, y0 = self._buffers, self._made, self._y0
        if (type(self) is not CLoop or self.sensitive is not None or self.stop is not None
                or self.energy is None or trajectory.stop_reason != "t_end" or self.calls != 1
                or buffers is None or made is None or y0 is None or trajectory.extra
                or len(trajectory.t) != len(buffers.times)
                or trajectory.t[0] != self.problem.t0 or buffers.times[0] != self.problem.t0):
            return None
        row = np.concatenate((trajectory.q[0], trajectory.qd[0], trajectory.lam[0]))
        if row.shape != buffers.rows.shape[1:]:
            return None
        return Again(made, y0, row, float(trajectory.energy[0]))

    def _run_again(self, again: Again, progress: Progress | None) -> Trajectory | None:
        """The run of :meth:`StepLoop.run` again, for a problem whose last run was plain
        (:meth:`_again_of`). The problem is the same object (immutable) and the C loop keeps
        nothing between runs, so the run takes the same steps as the last: its start, already
        checked (:meth:`Guard.start`), is not checked again, its first row and energy are the
        last run's, and the rows of the one C call are the trajectory: copied out of the
        buffers in one C pass (``lagsim_loop_columns``) and one copy into a fresh array whose
        parts are its t, q, q̇, λ and energy (no trajectory holds a buffer, none another's
        array), with the residuals of :func:`lagsim.run.monitor.assemble`. None if the C call
        did not end as the last run's (then :meth:`run` steps it as a first run)."""
        problem, lib, buffers = self.problem, self.lib, self._buffers
        assert buffers is not None and self.energy is not None
        handle = lib.lagsim_loop_new(*again.args)
        if not handle:
            raise MemoryError("the C step loop could not allocate its work space")
        self._handle = handle
        count = len(buffers.times)
        k = ctypes.c_int(1)
        result = LoopResult()
        try:
            lib.lagsim_loop_energy(handle, self.energy.address, self._energy_params,
                                   buffers.energy_address)
            if lib.lagsim_loop_start(handle, problem.t0, again.address, 0.0):
                return None
            times, rows, last, event = buffers.addresses
            code = lib.lagsim_loop_run(handle, times, count, ctypes.byref(k), rows,
                                       STEPS_PER_CALL, ctypes.byref(result), last, event)
            if code != Status.RUN_DONE or k.value != count:
                return None
            self.nfev, self.steps, self.calls = result.nfev, result.nsteps, 1
            self._said_missed = False
            self._alias(handle, buffers.times)
        finally:
            self._free()
        numeric, form = problem.numeric, problem.form
        n = numeric.n
        width = buffers.rows.shape[1]
        buffers.rows[0] = again.row
        buffers.energy[0] = again.energy
        lib.lagsim_loop_columns(times, rows, buffers.energy_address, count, width, n,
                                buffers.out_address)
        fresh = buffers.out.copy()
        a, b, c = count * (1 + n), count * (1 + 2 * n), count * (1 + width)
        with np.errstate(all="ignore") if numeric.m else contextlib.nullcontext():
            trajectory = assemble(numeric, form.name, form.stabilizer.name, fresh[:count],
                                  fresh[count:a].reshape(count, n), fresh[a:b].reshape(count, n),
                                  fresh[b:c].reshape(count, width - 2 * n), "t_end", "",
                                  fresh[c:])
        if progress is not None:
            progress(1.0)
        return trajectory

    def _next_call(self, watch: Watch, t: float, steps_before: int, clock: float,
                   progress: Progress | None) -> int:
        """Between two C calls (the last one began at ``clock`` after ``steps_before`` steps and
        ended at t): :func:`lagsim.run.engines.ccommon.next_call`."""
        return next_call(watch, t, self.steps - steps_before, clock, progress)

    def new_handle(self, mass_scale: float, atol: np.ndarray) -> int:
        """The C loop's work space for this problem (``lagsim_loop_new``), freed by
        ``lagsim_loop_free``."""
        made = self._made
        if made is None or made[0] != float(mass_scale).hex() or made[1] != atol.tobytes():
            made = self._made = self._arguments(mass_scale, atol)
        args = made[2]
        if self.sensitive is None:
            handle = self.lib.lagsim_loop_new(*args)
        else:
            form, sens = self.sensitive
            self._pick = np.ascontiguousarray(form.pick, dtype=float)
            handle = self.lib.lagsim_loop_sensitive(
                *args, form.P, self._pick.shape[0], sens.address, sens.params.ctypes.data,
                self._pick.ctypes.data, int(form.joint))
        if not handle:
            raise MemoryError("the C step loop could not allocate its work space")
        return int(handle)

    def _arguments(self, mass_scale: float, atol: np.ndarray
                   ) -> tuple[str, bytes, tuple[object, ...], tuple[np.ndarray, ...]]:
        """``lagsim_loop_new``'s arguments for this problem (:attr:`_made`)."""
        problem, numeric = self.problem, self.problem.numeric
        form, options = problem.form, problem.options
        stabilizer = form.stabilizer
        alpha, beta = getattr(stabilizer, "alpha", 0.0), getattr(stabilizer, "beta", 0.0)
        uses_lam = bool(problem.stop is not None and problem.stop.uses_multipliers)
        ints = np.array([numeric.n, numeric.m, len(numeric.holonomic), FORMS[form.name],
                         STABILIZE[stabilizer.name], problem.stop is not None, uses_lam,
                         MASS_CHECK_EVERY], dtype=np.intc)
        doubles = np.array([alpha, beta, options.rtol, math.inf, options.t_end, 1.0,
                            SINGULAR_RTOL, mass_scale, RCOND], dtype=np.float64)
        hol = np.array(numeric.holonomic or (0,), dtype=np.intc)
        kept = np.array(atol, dtype=np.float64)
        args = (ints.ctypes.data, doubles.ctypes.data, hol.ctypes.data, kept.ctypes.data,
                *self.addresses, self.stop[1] if self.stop else None, self.params.ctypes.data)
        return float(mass_scale).hex(), kept.tobytes(), args, (ints, doubles, hol, kept)

    def _run_impl(self, watch: Watch, y0: np.ndarray | None, progress: Progress | None
                  ) -> Trajectory:
        """Step the problem from its start to ``t_end`` or its stop event in C calls of many
        steps each (as :class:`lagsim.run.engines.python.PythonLoop`): the loop's handles are
        made and started by :meth:`_start`, each call is :meth:`_call`, a code the call
        returns is first seen by :meth:`_code` (the reduced loop's check of its chart)."""
        assert y0 is not None
        numeric = self.problem.numeric
        n, m = numeric.n, numeric.m
        width = 2 * n + (m if self.problem.form.name != "ode" else 0)
        if self.sensitive is not None:
            width = len(y0) + m * (1 + self.sensitive[0].P)
        samples, guard = watch.samples, watch.guard
        self._start(watch, y0)
        buffers = self._buffers
        if buffers is None or not buffers.fits(samples.times, width, len(y0)):
            buffers = self._buffers = Buffers(samples.times, width, len(y0))
        times, rows, last, event = buffers.times, buffers.rows, buffers.last, buffers.event
        energy = None
        if self.energy is not None:
            energy = buffers.energy
            self.lib.lagsim_loop_energy(self._handle, self.energy.address, self._energy_params,
                                        buffers.energy_address)
        result = LoopResult()
        k = ctypes.c_int(samples.k)
        chunk = STEPS_PER_CALL
        self.steps = self.nfev = self.calls = 0
        self._said_missed = False
        while True:
            before, steps_before, clock = k.value, self.steps, time.perf_counter()
            code = self._call(buffers, k, chunk, result)
            self.calls += 1
            state = self.at = At(result.t, last.copy(), result.h_abs)
            self.nfev, self.steps = result.nfev, result.nsteps
            self._sync(result)
            self._extend(samples, times[before:k.value], rows[before:k.value], k.value,
                         None if energy is None else energy[before:k.value])
            if code == Status.RUN_STOP:
                self._alias(self._watch_handle(), times)
                self._extend(samples, np.array([result.when]), event[None, :], None,
                             None if energy is None else energy[len(times):])
                return samples.stopped(result.when)
            seen = self._code(code, watch, state, result, times, progress)
            if isinstance(seen, Trajectory):
                return seen
            code = seen
            if code not in (Status.RUN_MORE, Status.RUN_DONE):
                raise self._failure(code, guard, float(event[0]), state, result.when,
                                    result.regular_at)
            if code == Status.RUN_DONE:
                self._alias(self._watch_handle(), times)
                break
            chunk = self._next_call(watch, state.t, steps_before, clock, progress)
        if progress is not None:
            progress(1.0)
        return samples.trajectory("t_end", "")

    def _extend(self, samples: Samples, times: np.ndarray, rows: np.ndarray,
                k: int | None = None, energy: np.ndarray | None = None) -> None:
        """The rows a call made into ``samples`` with their energies when the loop computed them
        (with sensitivities: [y, s, λ, dλ] split into [q, q̇, λ] and the extra columns,
        :meth:`Sensitive.split_rows`)."""
        if self.sensitive is None:
            samples.extend(times, rows, k, None, energy)
        else:
            base, extra = self.sensitive[0].split_rows(rows)
            samples.extend(times, base, k, extra, energy)

    def _start(self, watch: Watch, y0: np.ndarray) -> None:
        """Make the loop's handle and start it at the problem's start y0."""
        problem, guard, stop = self.problem, watch.guard, watch.stop
        atol = np.empty(len(y0))
        atol[:] = problem.options.atol
        self._handle = handle = self.new_handle(guard.mass.scale, atol)
        y = self._y0 = np.ascontiguousarray(y0, dtype=float)
        if self.lib.lagsim_loop_start(handle, problem.t0, y.ctypes.data,
                                      stop.sign if stop is not None else 0.0):
            raise failure(Status.RUN_SINGULAR, problem, guard, math.nan, At(problem.t0, y0),
                          problem.t0, problem.t0)

    def _call(self, buffers: Buffers, k: ctypes.c_int, chunk: int, result: LoopResult) -> int:
        """One C call of at most ``chunk`` accepted steps: its status code."""
        times, rows, last, event = buffers.addresses
        return int(self.lib.lagsim_loop_run(self._handle, times, len(buffers.times),
                                            ctypes.byref(k), rows, chunk, ctypes.byref(result),
                                            last, event))

    def flow(self, t0: float, y0: np.ndarray, t1: float) -> np.ndarray:
        """The state at t1 > t0 of the run from the full state y0 at t0 (with sensitivities
        [y, vec(s)], s any 2n-by-P start, not only the problem's own), stepped from a fresh
        start as scipy's ``solve_ivp`` over (t0, t1) would (:mod:`lagsim.analysis.lyapunov`'s
        tangent map between renormalizations). The handle is kept for the next call
        (:meth:`close` frees it). Raises :class:`IntegrationError` as :meth:`run` does."""
        problem = self.problem
        y = np.ascontiguousarray(y0, dtype=float)
        if self._handle is None or self._guard is None:
            self._guard = Guard(problem)
            self._handle = self.new_handle(self._guard.mass.scale,
                                           np.full(len(y), problem.options.atol))
        handle, guard = self._handle, self._guard
        self.lib.lagsim_loop_bound(handle, t1)
        if self.lib.lagsim_loop_start(handle, t0, y.ctypes.data, 0.0):
            raise failure(Status.RUN_SINGULAR, problem, guard, math.nan, At(t0, y), t0, t0)
        k = ctypes.c_int(0)
        result = LoopResult()
        buffers = Buffers(np.zeros(0), 1, len(y))
        last, event = buffers.last, buffers.event
        while True:
            code = self._call(buffers, k, STEPS_PER_CALL, result)
            if code == Status.RUN_DONE:
                return last
            if code != Status.RUN_MORE:
                raise self._failure(code, guard, float(event[0]),
                                    At(result.t, last.copy(), result.h_abs), result.when,
                                    result.regular_at)

    def close(self) -> None:
        """Free the handle :meth:`flow` keeps."""
        self._free()
        self._guard = None

    def _watch_handle(self) -> int | None:
        """The handle whose aliasing watch saw the full state."""
        return self._handle

    def _sync(self, result: LoopResult) -> None:
        """After each call: bring the formulation up to the C loop's state (nothing to do
        here)."""
        return None

    def _code(self, code: int, watch: Watch, state: At, result: LoopResult, times: np.ndarray,
              progress: Progress | None) -> int | Trajectory:
        """What a call's code means before it is read as the end, a failure or more steps:
        itself here."""
        return code

    def _failure(self, code: int, guard: Guard, value: float, state: At, when: float,
                 regular_at: float) -> IntegrationError:
        """The error the Python loop raises for the failure ``code``."""
        return failure(code, self.problem, guard, value, state, when, regular_at)

    def _read(self) -> int:
        """The address of the small array the C loop's reports are written to (seven values,
        cleared), read at once by the caller."""
        self._out.fill(0.0)
        return self._out_address

    def _free(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            if self.stop is not None:
                self._missed(self.lib.lagsim_loop_missed, handle)
            self.lib.lagsim_loop_paths(handle, self._read())
            self.paths = dict(zip(PATHS, map(int, self._out[:len(PATHS)])))
            self.lib.lagsim_loop_free(handle)

    def _missed(self, function: Callable[..., None], handle: int
                ) -> tuple[float, float, float] | None:
        """The first piece the C loop's --stop-when scan could not resolve (u, v, step length;
        ``function`` reads it from ``handle``), said once on stderr
        (:func:`lagsim.run.crossings.message`)."""
        function(handle, self._read())
        out = self._out
        if not out[0]:
            return None
        missed = (float(out[1]), float(out[2]), float(out[3]))
        if not self._said_missed:
            self._said_missed = True
            self.problem.form.report(missed_message(BY_NAME["stop_when"].flag,
                                                    str(self.problem.options.stop_when), missed))
        return missed

    def _alias(self, handle: int | None, times: np.ndarray) -> None:
        """Say what the C loop's aliasing watch found (:mod:`lagsim.run.aliasing`), once."""
        self.lib.lagsim_loop_alias(handle, self._read())
        out = self._out
        if out[0]:
            from lagsim.run.aliasing import message as alias_message

            i, k = int(out[2]), int(out[6])
            self.problem.form.report(alias_message(float(times[k] - times[k - 1]),
                                                   self.problem.numeric.coordinates[i],
                                                   int(out[3]),
                                                   2.0 * (out[1] - out[5]) / out[4],
                                                   self.problem.options.naming))



def loop_or_refusal(problem: Problem, whole: bool = False) -> CLoop | str:
    """The C loop for ``problem`` (in the whole library, :func:`library`, with ``whole`` or for
    the reduced formulation), or why the Python loop is to run: a method other than
    DOP853, ``--section`` (its crossings are taken in Python), ``reduced`` on a symbolic chart
    without C code, a formulation or stabilizer class other than the registered ones (a subclass
    may change any step), a stand-in for the :class:`~lagsim.numeric.compile.NumericSystem`, a
    model without C code (all expected, and silent), or a C loop that cannot be built (said on
    stderr)."""
    numeric, form, options = problem.numeric, problem.form, problem.options
    if options.method != "DOP853":
        return f"--method {options.method} is not DOP853"
    if form.name not in (*FORMS, "reduced"):
        return f"formulation {form.name} has no C loop"
    if options.section is not None:
        return "--section is taken in Python"
    if problem.stop is not None:
        from lagsim.run.events import EITHER

        if problem.stop.event.direction != EITHER:
            return "a --stop-when with a direction is looked for in Python"
    if not isinstance(numeric, NumericSystem):
        return "the compiled system is a stand-in, not a NumericSystem"
    sensitive = None
    base = form
    carrying = problem.sensitive_form
    if carrying is not None:
        base = carrying.base
        derivatives = c_function(carrying.terms.function)
        if derivatives is None:
            return "the sensitivities have no C code (symengine's LLVM path)"
        if form.name == "ode" and numeric.m:
            return "ode's sensitivities with constraints are taken in Python"
        sensitive = (carrying, derivatives)
    if type(base) is not FORMULATIONS[form.name]:
        return f"the formulation is a subclass of {form.name}'s class"
    if type(form.stabilizer) is not STABILIZERS.get(form.stabilizer.name):
        return f"the stabilizer is a subclass of {form.stabilizer.name}'s class"
    functions = tuple(c_function(f) for f in numeric.compiled())
    dynamics, phi, velocity = functions
    if dynamics is None or phi is None or velocity is None:
        return "the model has no C code (symengine's LLVM path)"
    cc = compiler()
    if cc is None:
        return "no C compiler"
    lib = library(cc, whole or form.name == "reduced")
    if lib is None:
        return "the C step loop could not be built"
    stop = None
    if problem.stop is not None:
        stop = _stop_function(cc, problem)
        if stop is None:
            return "the --stop-when expression has no C code"
    if form.name == "reduced":
        return _reduced_loop(problem, cc, lib, stop, (dynamics, phi, velocity))
    return CLoop(problem, lib, stop, (dynamics, phi, velocity), sensitive,
                 c_function(numeric.compiled_energy()))


def loop_for(problem: Problem) -> CLoop | None:
    """The C loop for ``problem``, or None when the Python loop is to run
    (:func:`loop_or_refusal`)."""
    loop = loop_or_refusal(problem)
    return None if isinstance(loop, str) else loop


class CDop853Engine(LoopEngine):
    """DOP853 with ode, index1, udwadia-kalaba or reduced, stepped in C (:class:`CLoop`,
    :class:`RLoop`)."""

    name: ClassVar[str] = "C DOP853"

    def loop_for(self, problem: Problem) -> StepLoop | str:
        return loop_or_refusal(problem)


# ---- reduced ----------------------------------------------------------------------------------
# The reduced formulation in the C loop (issue 9): the current chart's ODE in the free
# coordinates is stepped in C (a symbolic chart's compiled dynamics, a numeric chart's Newton
# solve), and after each accepted step the C code does what the Python loop does
# around it (the guard, --stop-when, the samples and the aliasing watch on the full state; a
# symbolic chart's map to it is compiled to C here; Reduced.after_step's check of the chart, its
# switch to a symbolic chart already built or to a numeric chart where no symbolic one is to be
# tried). When that is not clear-cut the C call returns
# RED_CHECK at that step and Python runs Reduced.after_step itself: it keeps the chart, switches
# it (the C loop goes on in the new chart with the same step size, or restarted when the kind of
# chart changes, as the Python loop's solver) or stops the run. Only a symbolic chart without C
# code hands the rest of the run to the Python loop.

MAPS: Memo[tuple[ctypes.CDLL, int] | None] = Memo(16)
"""The reduced charts' maps to the full state compiled in this process, by C source."""


def _reduced_argtypes(lib: ctypes.CDLL) -> None:
    """Argument types of the reduced block's entry points (``lagsim/numeric/c/cloop.c``, at its
    end)."""
    p, i, d = ctypes.c_void_p, ctypes.c_int, ctypes.c_double
    lib.lagsim_reduced_new.restype = p
    lib.lagsim_reduced_new.argtypes = (p,) * 7
    lib.lagsim_reduced_free.argtypes = (p,)
    lib.lagsim_reduced_free.restype = None
    lib.lagsim_reduced_chart.argtypes = (p, i, p, p, p, p, p, p)
    lib.lagsim_reduced_chart.restype = None
    lib.lagsim_reduced_switch.argtypes = (p, i, p, p, i, d)
    lib.lagsim_reduced_switch.restype = None
    lib.lagsim_reduced_partition.argtypes = (p, p, p, p, p, p, i, d)
    lib.lagsim_reduced_partition.restype = None
    lib.lagsim_reduced_partition_state.argtypes = (p, p, p, p)
    lib.lagsim_reduced_partition_state.restype = None
    lib.lagsim_reduced_numeric.argtypes = (p, i, i, p)
    lib.lagsim_reduced_numeric.restype = None
    lib.lagsim_reduced_start.argtypes = (p, d, p, d, p)
    lib.lagsim_reduced_start.restype = i
    lib.lagsim_reduced_run.argtypes = (p, p, i, p, p, i, ctypes.POINTER(LoopResult), p, p)
    lib.lagsim_reduced_run.restype = i
    lib.lagsim_reduced_missed.argtypes = (p, p)
    lib.lagsim_reduced_missed.restype = None


_CHART_MAPS: weakref.WeakKeyDictionary[SymbolicChart, tuple[ctypes.CDLL, int] | None] = (
    weakref.WeakKeyDictionary())
"""Each symbolic chart's map compiled to C in this process (:func:`_map_function`)."""


def _map_function(cc: str, chart: SymbolicChart) -> int | None:
    """The address of the chart's map (t, v, v̇, v̈) → (q, q̇, A_e, r_e) compiled to C
    (:func:`lagsim.run.reduced.full_map`), or None when it cannot be (said on stderr)."""
    from lagsim.run.reduced import full_map

    cached = _CHART_MAPS.get(chart)
    if cached is not None:
        return cached[1]
    if chart.source is None:
        return None
    try:
        args, exprs = full_map(chart.source)
        text = ccompile.c_function("full", args, exprs) + (
            "\nvoid lagsim_full(const double *in, const double *p, double *out) "
            "{ full(in, p, out); }\n")
    except Exception as exc:
        cache.say_once("cloop-map", "warning: the reduced chart's map to the full state could "
                       "not be written as C; stepping in Python instead (slower)",
                       f"{type(exc).__name__}: {exc}")
        return None
    source = "#include <math.h>\n" + text

    def build() -> tuple[ctypes.CDLL, int] | None:
        try:
            lib, _ = ccompile.build_and_load(cc, "reduced-map", source, ccompile.flags())
            return lib, _symbol(lib, "lagsim_full")
        except Exception as exc:
            cache.say_once("cloop-map", "warning: the reduced chart's map to the full state "
                           "could not be compiled to C; stepping in Python instead (slower)",
                           f"{type(exc).__name__}: {exc}")
            return None

    found = MAPS.get((cc, source), build)
    _CHART_MAPS[chart] = found
    return None if found is None else found[1]


ChartParts = tuple[int, np.ndarray, int, np.ndarray]
"""(dynamics address, its parameters, map address, pairs) of a chart the C loop steps."""


def _chart_parts(cc: str, chart: SymbolicChart | PartitionChart | None) -> ChartParts | None:
    """(dynamics address, its parameters, map address, pairs) of a chart the C loop can step:
    a :class:`~lagsim.run.reduced.SymbolicChart` compiled to C; None for any other."""
    from lagsim.run.reduced import SymbolicChart

    if not isinstance(chart, SymbolicChart):
        return None
    dyn = c_function(chart.numeric.compiled()[0])
    if dyn is None:
        return None
    address = _map_function(cc, chart)
    if address is None:
        return None
    pairs = np.ascontiguousarray(np.array(chart.pairs, dtype=np.intc).reshape(-1))
    return dyn.address, dyn.params, address, pairs


def _reduced_loop(problem: Problem, cc: str, lib: ctypes.CDLL,
                  stop: tuple[ctypes.CDLL, int] | None,
                  functions: tuple[CFunction, CFunction, CFunction]) -> RLoop | str:
    """The C loop of a ``reduced`` run that starts on a numeric chart or on a symbolic one
    compiled to C; else why not (a symbolic chart without C code: the Python loop)."""
    from lagsim.run.reduced import PartitionChart, Reduced

    form = problem.form
    assert isinstance(form, Reduced)
    form.check(problem.t0, problem.q0, problem.qd0)
    if not isinstance(form.chart, PartitionChart) and _chart_parts(cc, form.chart) is None:
        return "reduced starts on a symbolic chart without C code"
    return RLoop(problem, form, lib, stop, functions, cc)


class RLoop(CLoop):
    """The C loop of the ``reduced`` formulation: :meth:`run` gives the trajectory
    :class:`lagsim.run.engines.python.PythonLoop` would."""

    def __init__(self, problem: Problem, form: Reduced, lib: ctypes.CDLL,
                 stop: tuple[ctypes.CDLL, int] | None,
                 functions: tuple[CFunction, CFunction, CFunction], cc: str) -> None:
        super().__init__(problem, lib, stop, functions)
        self.form = form
        self.cc = cc
        self.handed_over = False
        """Whether the last :meth:`run` went on in the Python loop (a chart without C code)."""
        self._aliased = False
        self._keep: list[np.ndarray] = []
        self._numeric_keys = np.zeros(1, dtype=np.intc)
        self._registered = self._c_switches = 0
        self._handles: tuple[int | None, int | None, int | None] = (None, None, None)

    def _alias(self, handle: int | None, times: np.ndarray) -> None:
        out = np.zeros(7)
        self.lib.lagsim_loop_alias(handle, out.ctypes.data)
        self._aliased = bool(out[0])
        super()._alias(handle, times)

    def _new_handles(self, chart_parts: ChartParts | None, mass_scale: float
                     ) -> tuple[int, int, int]:
        """The C loop's three parts: the chart's solver (a loop of the chart's ODE, k free
        coordinates, no constraints), the full model's (its φ, velocity terms, augmented solve,
        mass check and aliasing watch) and the reduced loop over both; freed by :meth:`_free`."""
        from lagsim.run.reduced import (
            RANK_TOLERANCE,
            START_TOLERANCE,
            SWITCH_RATIO,
        )

        problem, numeric, options = self.problem, self.problem.numeric, self.problem.options
        n, m, k = numeric.n, numeric.m, self.form.current_chart().k
        dyn, params, address, pairs = chart_parts or (None, np.zeros(1), None,
                                                      np.zeros(2 * m, dtype=np.intc))
        every = MASS_CHECK_EVERY
        self._keep = [params, pairs]
        handles: list[int] = []
        parts: tuple[tuple[list[int], list[float], int, tuple[int, ...],
                           Sequence[int | None], np.ndarray], ...] = (
            ([k, 0, 0, FORMS["ode"], 0, 0, 0, every],
             [0.0, 0.0, options.rtol, math.inf, options.t_end, 1.0, SINGULAR_RTOL,
              mass_scale, np.finfo(float).eps * m], 2 * k, (0,), (dyn, None, None), params),
            ([n, m, len(numeric.holonomic), FORMS["index1"], 0, 0, 0, every],
             [0.0, 0.0, options.rtol, math.inf, options.t_end, 1.0, SINGULAR_RTOL,
              mass_scale, RCOND], 2 * n, numeric.holonomic or (0,), self.addresses,
             self.params))
        for ints, doubles, atol, hol, functions, p in parts:
            a = np.empty(atol)
            a[:] = options.atol
            i = np.array(ints, dtype=np.intc)
            dd = np.array(doubles, dtype=float)
            h = np.array(hol, dtype=np.intc)
            handle = self.lib.lagsim_loop_new(i.ctypes.data, dd.ctypes.data, h.ctypes.data,
                                              a.ctypes.data, *functions, None, p.ctypes.data)
            if not handle:
                for made in handles:
                    self.lib.lagsim_loop_free(made)
                raise MemoryError("the C step loop could not allocate its work space")
            handles.append(int(handle))
        uses_lam = bool(problem.stop is not None and problem.stop.uses_multipliers)
        ints_r = np.array([k, n, m, problem.stop is not None, uses_lam, every,
                           self.form.max_symbolic_charts], dtype=np.intc)
        doubles_r = np.array([SWITCH_RATIO, RANK_TOLERANCE, START_TOLERANCE])
        r = self.lib.lagsim_reduced_new(handles[0], handles[1], ints_r.ctypes.data,
                                        doubles_r.ctypes.data, address, pairs.ctypes.data,
                                        self.stop[1] if self.stop else None)
        if not r:
            for made in handles:
                self.lib.lagsim_loop_free(made)
            raise MemoryError("the C step loop could not allocate its work space")
        return handles[0], handles[1], int(r)

    def _start(self, watch: Watch, y0: np.ndarray) -> None:
        """Make the three handles (:meth:`_new_handles`), register the charts and start at the
        problem's start y0 (a singular chart there stops the run)."""
        problem, form, stop = self.problem, self.form, watch.stop
        self.handed_over = False
        parts = _chart_parts(self.cc, form.chart)
        self._handles = _, _, r = self._new_handles(parts, watch.guard.mass.scale)
        self._registered, self._c_switches = 0, 0
        self._register(r)
        y = np.ascontiguousarray(y0, dtype=float)
        qd0 = np.ascontiguousarray(problem.qd0, dtype=float)
        if self.lib.lagsim_reduced_start(r, problem.t0, y.ctypes.data,
                                         stop.sign if stop is not None else 0.0,
                                         qd0.ctypes.data):
            raise IntegrationError(form.singular(), time=float(problem.t0))

    def _reduced(self) -> int:
        r = self._handles[2]
        assert r is not None
        return r

    def _call(self, buffers: Buffers, k: ctypes.c_int, chunk: int, result: LoopResult) -> int:
        times, rows, last, event = buffers.addresses
        return int(self.lib.lagsim_reduced_run(self._reduced(), times, len(buffers.times),
                                               ctypes.byref(k), rows, chunk,
                                               ctypes.byref(result), last, event))

    def _watch_handle(self) -> int | None:
        return self._handles[1]

    def _code(self, code: int, watch: Watch, state: At, result: LoopResult, times: np.ndarray,
              progress: Progress | None) -> int | Trajectory:
        """RED_CHECK: Reduced.after_step in Python at the step the C loop could not decide;
        the C loop goes on in the chart it keeps or switches to, or the Python loop takes the
        rest of the run on a chart without C code (:meth:`_hand_over`)."""
        from lagsim.run.reduced import PartitionChart

        if code != Status.RED_CHECK:
            return code
        form, guard, r = self.form, watch.guard, self._reduced()
        t_end = self.problem.options.t_end
        before_chart = form.current_chart()
        y_new = self._after_step(guard, state)
        if y_new is not None and state.t != t_end:
            chart = form.current_chart()
            restart = type(chart) is not type(before_chart)
            if not isinstance(chart, PartitionChart) and _chart_parts(self.cc, chart) is None:
                self._alias(self._watch_handle(), times)
                missed = self._missed(self.lib.lagsim_reduced_missed, r)
                return self._hand_over(watch, state, y_new, result, restart, missed, progress)
            f = np.ascontiguousarray(guard.rhs(state.t, y_new), dtype=float)
            self._register(r, y_new, f, min(result.guard_h, t_end - state.t) if restart
                           else 0.0)
        else:
            self._register(r)
        return Status.RUN_MORE

    def _free(self) -> None:
        (chart_d, full_d, r), self._handles = self._handles, (None, None, None)
        if r is not None:
            self._missed(self.lib.lagsim_reduced_missed, r)
            self.lib.lagsim_reduced_free(r)
        for handle in (chart_d, full_d):
            if handle is not None:
                self.lib.lagsim_loop_free(handle)

    def _after_step(self, guard: Guard, state: At) -> np.ndarray | None:
        """Reduced.after_step at the accepted step, as the Python loop calls it (a failed linear
        solve reported by the guard)."""
        try:
            return self.form.after_step(state.t, state.y)
        except np.linalg.LinAlgError as exc:
            raise guard.singular(state, exc) from None

    def _register(self, r: int, y: np.ndarray | None = None, f: np.ndarray | None = None,
                  restart: float = 0.0) -> None:
        """Give the C loop the symbolic charts built since the last call (in the order in which
        Reduced looks for a chart) and the current chart (a numeric one with its last accepted
        state and tangent); with y and f the state goes on from y in it with the derivative f,
        the solver restarted with first step ``restart`` when > 0 (as the Python loop's
        after_step). The C loop is told where Reduced would build a numeric chart without trying
        a symbolic one, so that it switches between numeric charts itself."""
        from lagsim.run.reduced import PartitionChart

        form = self.form
        charts = form.symbolic_charts
        for j in range(self._registered, len(charts)):
            chart = charts[j]
            parts = _chart_parts(self.cc, chart)
            dep = np.ascontiguousarray(np.sort(chart.dependent), dtype=np.intc)
            ind = np.ascontiguousarray(chart.independent, dtype=np.intc)
            if parts is None:
                self.lib.lagsim_reduced_chart(r, j, None, None, None, None, None,
                                              dep.ctypes.data)
                continue
            dyn, params, address, pairs = parts
            self._keep.append(params)
            self.lib.lagsim_reduced_chart(r, j, dyn, params.ctypes.data, address,
                                          pairs.ctypes.data, ind.ctypes.data, dep.ctypes.data)
        self._registered = len(charts)
        self._numeric_keys = np.ascontiguousarray(
            sorted(form.numeric_partitions) or np.zeros((0, form.numeric.m)), dtype=np.intc)
        numeric_only = form.model is None or len(charts) >= form.max_symbolic_charts
        self.lib.lagsim_reduced_numeric(r, numeric_only, len(self._numeric_keys),
                                        self._numeric_keys.ctypes.data)
        state = [np.ascontiguousarray(v, dtype=float) for v in (y, f) if v is not None]
        yp, fp = (state[0].ctypes.data, state[1].ctypes.data) if state else (None, None)
        allow = int(form.switches > 0)
        current = form.current_chart()
        if isinstance(current, PartitionChart):
            dep = np.ascontiguousarray(current.dependent, dtype=np.intc)
            ind = np.ascontiguousarray(current.independent, dtype=np.intc)
            st = np.ascontiguousarray(np.concatenate(([current.t_last], current.q_last,
                                                      current.tangent.ravel())), dtype=float)
            self.lib.lagsim_reduced_partition(r, dep.ctypes.data, ind.ctypes.data,
                                              st.ctypes.data, yp, fp, allow, restart)
        else:
            self.lib.lagsim_reduced_switch(r, charts.index(current), yp, fp, allow, restart)

    def _sync(self, result: LoopResult) -> None:
        """Bring the form up to the C loop's state: its chart (a numeric one's partition, last
        accepted state and tangent), switches and last accepted time (what Reduced.after_step
        sets when it runs in Python)."""
        from lagsim.run.reduced import PartitionChart

        form, r = self.form, self._reduced()
        chart: SymbolicChart | PartitionChart
        if result.chart >= 0:
            chart = form.symbolic_charts[result.chart]
        else:
            numeric, k = form.numeric, form.current_chart().k
            n, m = numeric.n, numeric.m
            st = np.zeros(1 + n + m * (k + 1))
            dep = np.zeros(m, dtype=np.intc)
            ind = np.zeros(k, dtype=np.intc)
            self.lib.lagsim_reduced_partition_state(r, st.ctypes.data, dep.ctypes.data,
                                                    ind.ctypes.data)
            dep, ind, t_last, q_last = dep.astype(int), ind.astype(int), float(st[0]), st[1:1 + n]
            current = form.current_chart()
            chart = (current if isinstance(current, PartitionChart)  # else the C loop switched
                     else PartitionChart(numeric, dep, ind, t_last, q_last))
            chart.restore(dep, ind, t_last, q_last.copy(), st[1 + n:].reshape(m, k + 1).copy())
        form.adopt(chart, result.switches - self._c_switches,
                   result.t if self.steps else None)
        self._c_switches = result.switches

    def _hand_over(self, watch: Watch, state: At, y: np.ndarray, result: LoopResult,
                   restart: bool, missed: tuple[float, float, float] | None,
                   progress: Progress | None) -> Trajectory:
        """The rest of the run in the Python loop, from the state the switch gave: its solver
        starts there with the C solver's next step size (what the Python loop's solver keeps
        through a switch), or with the last step's size when the kind of chart changed (where
        the Python loop's after_step restarts it)."""
        problem = self.problem
        self.handed_over = True
        watch.guard.resume(result.guard_h, result.unchecked, result.regular_at)
        if watch.stop is not None:
            watch.stop.resume(result.stop_sign, missed)
        from lagsim.run.aliasing import AliasWatch  # a hand-over only (issue 31, start-up)
        from lagsim.run.engines.python import Resume, run_python

        alias = AliasWatch(problem.form.unpack, watch.samples.times, problem.numeric.coordinates,
                           problem.form.report, problem.qd0, problem.options.naming)
        alias.resume(state.t, self._aliased)
        first = min(result.guard_h if restart else result.h_abs,
                    problem.options.t_end - state.t)
        return run_python(problem, progress, Resume(watch, alias, state.t, y, first))

    def _failure(self, code: int, guard: Guard, value: float, state: At, when: float,
                 regular_at: float) -> IntegrationError:
        """The error the Python loop raises for the reduced C loop's failure ``code``."""
        from lagsim.run.reduced import PartitionChart

        form = self.form
        if code == Status.RED_SINGULAR:
            return IntegrationError(form.singular(), time=when)
        if code == Status.RED_NEWTON:
            chart = form.current_chart()
            assert isinstance(chart, PartitionChart)
            return chart.newton_failure(when)
        if code == Status.RUN_SMALL:
            return guard.failure(state, too_small())
        try:
            q, qd = form.unpack(when, state.y)
        except IntegrationError as error:
            return error
        return state_failure(code, self.problem, guard, value, q, qd, when, regular_at)
