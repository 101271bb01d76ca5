"""The free flights of a system with unilateral contacts stepped in C, the plain impacts between
them made there too (issue 27's goal: impacts cost no more than the steps around them).

:class:`lagsim.run.engines.impacts.ImpactLoop` asks :meth:`Flights.fly` for each free flight
instead of stepping it with scipy's solver (``ImpactLoop._fly``). One C call
(``lagsim/numeric/c/impacts.c``, in the C loop's library after ``cloop.c``) steps many flights: the
C loop's DOP853 step, guard, samples and projection (:mod:`lagsim.run.engines.cloop`), each
gap followed by the scan of ``--stop-when`` (:mod:`lagsim.run.crossings`) as a falling event,
and the crossing found by Brent's method on the step's dense output; the gaps, their gradients
and drifts (:attr:`lagsim.run.contacts.Contacts.terms`) are compiled to C once per system. At a
crossing that closes, the impact of one frictionless contact is made in C (Newton's law through
the augmented matrix, solved by LU: :meth:`lagsim.run.contacts.Contacts.impact`'s solution to
rounding) unless the impacts accumulate or a contact comes to rest there; each is logged and
recorded by the loop as its own impacts are (the row after it, its impulse, its energy loss).
Anywhere else Python steps the current flight again from its start (``ImpactLoop._fly``):
where its law is needed (several contacts closed at once, friction, an accumulation, a contact
to hold), so that it takes that crossing exactly as it would have found it, and where the
flight fails in C (a singular solve, a non-finite value, the mass check, a piece the scan could
not resolve, a gap left negative), so that its error or message is the run's. All of these are
expected, and silent.

The C flights are not taken (silently: the Python flights run) where the C loop does not run
the problem (:func:`lagsim.run.engines.cloop.loop_or_refusal`: another method, no C compiler,
symengine's LLVM path, a C loop that cannot be built, which says so), with ``--stop-when``,
for a rough contact (each impact would be Python's) and for several contacts: their impacts may
be simultaneous or alternate, and what the loop does about alternating impacts is Python's
(``impacts.c`` follows any number of gaps, but only one contact's impacts are plain here).
Gaps that cannot be compiled to C are said on stderr once.
"""

from __future__ import annotations

import ctypes
import time
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from lagsim.numeric import cache, ccompile
from lagsim.numeric.csource import LoopResult, Status
from lagsim.numeric.memo import Memo
from lagsim.run.contacts import CLOSED, RESTING, Contacts, Impacts
from lagsim.run.engines.base import Progress
from lagsim.run.engines.ccommon import compiler, next_call
from lagsim.run.engines.cloop import STEPS_PER_CALL, CLoop, loop_or_refusal
from lagsim.run.monitor import Watch
from lagsim.run.problem import Problem

Outcome = tuple[str, float, np.ndarray, int, float | None]
"""What a flight ends in (``ImpactLoop._fly``): its kind ("end", "impact"), time, state,
contact and the next flight's first step."""
Fly = Callable[[Watch, float, np.ndarray, float | None, Progress | None], Outcome]
"""``ImpactLoop._fly``: a flight stepped in Python."""
Plain = list[tuple[Impacts, np.ndarray]]
"""The impacts made in C, a block per C call that made some: (the impacts, the contact of
each)."""

LOG = 2048
"""Impacts a C call logs at most (then it returns, and the next call goes on)."""

GAPS: Memo[tuple[ctypes.CDLL, int] | None] = Memo(16)
"""The gaps' C functions loaded in this process, by compiler and gaps (the parameters are
inputs: a sweep over them loads one)."""

_P, _I, _D = ctypes.c_void_p, ctypes.c_int, ctypes.c_double
_PROTOTYPES = {
    "new": ctypes.CFUNCTYPE(_P, _P, _P, _I, _P, _P, _P),
    "free": ctypes.CFUNCTYPE(None, _P),
    "history": ctypes.CFUNCTYPE(None, _P, _I, _P, _I),
    "start": ctypes.CFUNCTYPE(_I, _P, _D, _P, _D, _I),
    "run": ctypes.CFUNCTYPE(_I, _P, _P, _I, _P, _P, _I, ctypes.POINTER(LoopResult), _P, _P, _I,
                            _P),
}
"""The entry points ``lagsim_impacts_<name>`` of ``impacts.c`` (in the C loop's library)."""


class Entries:
    """The entry points of ``impacts.c`` in the C loop's library ``lib`` (typed by
    :data:`_PROTOTYPES`)."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        self.new, self.free, self.history, self.start, self.run = (
            prototype((f"lagsim_impacts_{name}", lib)) for name, prototype in _PROTOTYPES.items())


_ENTRIES: weakref.WeakKeyDictionary[ctypes.CDLL, Entries] = weakref.WeakKeyDictionary()


def _entries(lib: ctypes.CDLL) -> Entries:
    """:class:`Entries` of ``lib``, made once per library."""
    if lib not in _ENTRIES:
        _ENTRIES[lib] = Entries(lib)
    return _ENTRIES[lib]


def _gaps(cc: str, contacts: Contacts) -> tuple[ctypes.CDLL, int] | None:
    """The gaps' rows as C ``lagsim_gaps(in, p, out)``, in = (t, q, q̇), p the model's
    parameters: (the library, the function's address); None when they cannot be compiled (said
    on stderr). Held by compiler and gaps (:attr:`lagsim.run.contacts.Contacts.terms`): a run
    neither prints nor compiles them again."""
    arguments, parameters, terms = contacts.terms

    def build() -> tuple[ctypes.CDLL, int] | None:
        try:
            body = ccompile.c_function("gaps", arguments, terms, parameters)
        except Exception as exc:  # a gap C cannot print: the flights run in Python
            cache.say_once("cimpacts-gaps", "warning: the gaps of the unilateral constraints "
                           "could not be written as C; stepping the flights in Python instead "
                           "(slower)", f"{type(exc).__name__}: {exc}")
            return None
        source = ("#include <math.h>\n" + body + "\nvoid lagsim_gaps(const double *in, "
                  "const double *p, double *out) { gaps(in, p, out); }\n")
        try:
            lib, _ = ccompile.build_and_load(cc, "gaps", source, ccompile.flags())
            return lib, int(ctypes.cast(lib.lagsim_gaps, ctypes.c_void_p).value or 0)
        except Exception as exc:
            cache.say_once("cimpacts-gaps", "warning: the gaps of the unilateral constraints "
                           "could not be compiled to C; stepping the flights in Python instead "
                           "(slower)", f"{type(exc).__name__}: {exc}")
            return None

    return GAPS.get((cc, arguments, parameters, terms), build)


def flights_for(problem: Problem, contacts: Contacts, bounds: Sequence[float]
                ) -> Flights | None:
    """The C flights of ``problem``, or None where the Python flights run (the module's
    docstring); ``bounds``: UNSEEN, RATIO and ACCUMULATION of
    :mod:`lagsim.run.engines.impacts` and THROUGH, ``ImpactLoop._through``'s bound on a gap
    left negative (``impacts.c``'s B_UNSEEN … B_THROUGH)."""
    if problem.stop is not None or contacts.k != 1 or not np.isnan(contacts.friction[0]):
        return None
    loop = loop_or_refusal(problem, whole=True)
    cc = compiler()
    if isinstance(loop, str) or cc is None:
        return None
    gaps = _gaps(cc, contacts)
    if gaps is None:
        return None
    return Flights(problem, contacts, loop, gaps, bounds)


def _free(entries: Entries, handles: list[int]) -> None:
    if handles:
        entries.free(handles[1])
        entries.lib.lagsim_loop_free(handles[0])


class Flights:
    """The C flights of one run (:meth:`fly`); the C work space lives as long as this object."""

    def __init__(self, problem: Problem, contacts: Contacts, loop: CLoop,
                 gaps: tuple[ctypes.CDLL, int], bounds: Sequence[float]) -> None:
        self.problem = problem
        self.contacts = contacts
        self.loop = loop
        self.entries = _entries(loop.lib)
        self.gaps = gaps
        self.handles: list[int] = []
        """The C loop's work space and the flights' (made by the first :meth:`fly`)."""
        self.keep = (np.ascontiguousarray(contacts.restitution, dtype=float),
                     np.ascontiguousarray(~np.isnan(contacts.friction), dtype=np.intc),
                     np.array([CLOSED, RESTING, *bounds], dtype=float))
        """The restitutions, which contacts are rough, and the bounds (``impacts.c``'s
        B_CLOSED … B_THROUGH), kept while C reads them."""
        self.buffers: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        """The sample times, the rows C writes, its log of impacts and its state out (made by
        the first :meth:`fly`, for every call of the run)."""
        self.steps = 0
        """The DOP853 steps the C flights took so far in the run (bench/impacts.py)."""
        weakref.finalize(self, _free, self.entries, self.handles)

    def _start(self, watch: Watch, t: float, y: np.ndarray) -> int:
        """The work space, made at the first flight; the guard starts there."""
        if self.handles:
            return self.handles[1]
        entries, problem = self.entries, self.problem
        atol = np.empty(2 * problem.numeric.n)
        atol[:] = problem.options.atol
        loop = self.loop.new_handle(watch.guard.mass.scale, atol)
        restitution, rough, bounds = self.keep
        flights = entries.new(loop, self.gaps[1], self.contacts.k, restitution.ctypes.data,
                              rough.ctypes.data, bounds.ctypes.data)
        if not flights:
            entries.lib.lagsim_loop_free(loop)
            raise MemoryError("the C flights could not allocate their work space")
        self.handles[:] = [loop, int(flights)]
        entries.lib.lagsim_loop_start(loop, t, np.ascontiguousarray(y, dtype=float).ctypes.data,
                                      0.0)
        return int(flights)

    def fly(self, watch: Watch, t: float, y: np.ndarray, h: float | None,
            progress: Progress | None, history: Sequence[Sequence[float]], python: Fly
            ) -> tuple[Outcome, Plain]:
        """The flights from (t, y) with the first step h (None: scipy's initial step), the
        impacts of each contact so far in ``history``, until the run ends or Python is needed
        (``python`` steps a flight again): what ``ImpactLoop._fly`` returns, and the impacts
        made on the way."""
        entries, numeric, samples = self.entries, self.problem.numeric, watch.samples
        n, k = numeric.n, self.contacts.k
        N, W = 2 * n, 2 * n + numeric.m
        handle = self._start(watch, t, y)
        for i, times_i in enumerate(history):
            past = np.ascontiguousarray(times_i[-4:], dtype=float)
            entries.history(handle, i, past.ctypes.data, len(past))
        y0 = np.ascontiguousarray(y, dtype=float)
        plain: Plain = []
        if entries.start(handle, t, y0.ctypes.data, h or 0.0, samples.k):
            return python(watch, t, y, h, progress), plain
        if self.buffers is None:
            self.buffers = (np.ascontiguousarray(samples.times, dtype=float),
                            np.zeros((len(samples.times), max(W, 1))),
                            np.zeros((LOG, 6 + 2 * k + n + W)), np.zeros(N + 3))
        times, rows, log, state = self.buffers
        result = LoopResult()
        kc, logged = ctypes.c_int(samples.k), ctypes.c_int(0)
        pos, chunk = samples.k, STEPS_PER_CALL
        while True:
            clock, steps = time.perf_counter(), result.nsteps
            code = entries.run(handle, times.ctypes.data, len(times), ctypes.byref(kc),
                               rows.ctypes.data, chunk, ctypes.byref(result), state.ctypes.data,
                               log.ctypes.data, LOG, ctypes.byref(logged))
            self.steps = result.nsteps
            pos = self._record(watch, times, rows, log[:logged.value].copy(), pos, plain)
            if code == Status.IMP_REDO:
                samples.extend(np.empty(0), np.empty((0, 0)), int(state[1 + N]))
                h0 = float(state[2 + N])
                return python(watch, float(state[0]), state[1:1 + N].copy(), h0 or None,
                              progress), plain
            if code == Status.RUN_DONE:
                samples.extend(times[pos:kc.value], rows[pos:kc.value], kc.value)
                watch.advance(result.t, progress)
                return ("end", result.t, np.zeros(0), -1, None), plain
            chunk = next_call(watch, result.t, result.nsteps - steps, clock, progress)

    def _record(self, watch: Watch, times: np.ndarray, rows: np.ndarray, log: np.ndarray,
                pos: int, plain: Plain) -> int:
        """The sample rows up to the last logged impact with the row after each impact in its
        place (``ImpactLoop._row``: a sample at an impact's time is left out), in one block;
        the impacts with their energies (one block of :class:`lagsim.run.contacts.Impacts` to
        ``plain``): the first sample row not yet taken."""
        if not len(log):
            return pos
        numeric, samples, k = self.problem.numeric, watch.samples, self.contacts.k
        n = numeric.n
        t = log[:, 2]
        after = log[:, 6 + 2 * k + n:]
        q, qd_before, qd_after = after[:, :n], log[:, 6 + 2 * k:6 + 2 * k + n], after[:, n:2 * n]
        before_at, next_at = log[:, 0].astype(int), log[:, 1].astype(int)
        end = int(next_at[-1])
        inside = np.zeros(end - pos + 1, dtype=int)
        np.add.at(inside, before_at - pos, 1)
        np.add.at(inside, next_at - pos, -1)
        kept = np.cumsum(inside[:-1]) == 0
        index = np.flatnonzero(kept) + pos
        at = np.searchsorted(index, before_at)
        block_t = np.insert(times[index], at, t)
        block = np.insert(rows[index], at, after, axis=0)
        first_row = samples.count
        samples.extend(block_t, block, end)
        energy_before = numeric.energies(t, q, qd_before)
        energy_after = numeric.energies(t, q, qd_after)
        impulses = np.zeros((len(log), k))
        contact = log[:, 3].astype(int)
        impulses[np.arange(len(log)), contact] = log[:, 4]
        plain.append((Impacts(first_row + at + np.arange(len(log)), t, impulses,
                              log[:, 6:6 + k], log[:, 6 + k:6 + 2 * k], energy_before,
                              energy_after, qd_before, qd_after, np.zeros((len(log), k))),
                      contact))
        return end
