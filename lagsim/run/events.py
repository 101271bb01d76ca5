"""Events: where an expression g(t, q, q̇, λ) of a run crosses zero (issue 23, "one event
mechanism for ``--stop-when`` and ``--section``").

An :class:`Event` is an expression with a direction and a terminal flag, in the manner of the
events of scipy's ``solve_ivp`` (an event function with the attributes ``direction``, +1 for a
crossing from negative to positive, -1 the other way, 0 both, and ``terminal``: the first
crossing ends the integration) and of diffrax's ``Event`` (a condition function whose change of
sign ends the solve, located by a root finder). ``--stop-when EXPR`` is a terminal event of
either direction; ``--section EXPR`` a non-terminal one in the direction of
``--section-direction`` (:mod:`lagsim.run.section`), whose crossings the run records instead of
its samples.

:func:`compile_events` compiles the events of a run in (t, q, q̇, λ) with the model's parameters
as run-time inputs, each expression once per model structure in this process
(:data:`FUNCTIONS`, a bounded :class:`lagsim.numeric.memo.Memo`): a sweep over a parameter an
expression uses, or a ``--stop-when`` and a ``--section`` of the same expression, share one
compiled function, and each run binds its own values
(:func:`lagsim.run.crossings.bound_evaluators`).

:class:`EventWatch` follows one compiled event through a run's accepted steps: it looks for the
sign changes of g inside each step on the step's dense output (:class:`lagsim.run.crossings.Scan`,
after Shampine and Thompson, "Event location for ordinary differential equations", Comput. Math.
Appl. 39 (2000) 43-54), locates each by Brent's method (:func:`locate`), keeps those in the
event's direction and, for a terminal event, ends the scan at the first.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.errors import IntegrationError, LagsimError, Location
from lagsim.numeric.compile import NumericSystem, lambdify
from lagsim.numeric.memo import Memo
from lagsim.records import record
from lagsim.run.crossings import RTOL, XTOL, Scan, bound_evaluators, clear, message, probes
from lagsim.run.formulations import Formulation
from lagsim.spec.expressions import Source, parse_expression
from lagsim.spec.options import BY_NAME
from lagsim.spec.system import SystemSpec

RISING, FALLING, EITHER = 1, -1, 0
"""The directions of a crossing, as scipy's ``event.direction``: g from negative to positive,
from positive to negative, or both."""


class OptionSource(Protocol):
    """What an event needs of the run's options (:class:`lagsim.spec.options.SimulateOptions`):
    where an option was given, and how a message names it."""

    def label(self, name: str) -> str: ...

    def file_location(self, name: str) -> Location | None: ...


@record
class Event:
    """An expression whose crossings of zero a run looks for.

    ``option`` is the option that gave it (``stop_when``, ``section``: its flag and its place
    name the event in messages), ``text`` the expression as written, ``direction`` one of
    :data:`RISING`, :data:`FALLING`, :data:`EITHER`; a ``terminal`` event ends the run at its
    first crossing. ``where`` is the expression's location (its place in the file, or the
    flag), ``what`` how a parse error names it and ``label`` how a message names the option
    (its ``simulate:`` key or its flag).
    """

    option: str
    text: str
    direction: int
    terminal: bool
    where: Location
    what: str
    label: str

    def __post_init__(self) -> None:
        if self.direction not in (RISING, FALLING, EITHER):
            raise ValueError(f"an event's direction is 1, -1 or 0, got {self.direction!r}")

    @classmethod
    def of_option(cls, options: OptionSource, option: str, text: str, direction: int,
                  terminal: bool) -> Event:
        """The event of ``option``'s expression ``text``, located where ``options`` got it."""
        in_file, label = options.file_location(option), options.label(option)
        return cls(option, text, direction, terminal, in_file or Location(label),
                   f"simulate.{option}" if in_file else "expression", label)

    @property
    def flag(self) -> str:
        """The option's flag; the label of an event no option gave (a contact's gap)."""
        return BY_NAME[self.option].flag if self.option in BY_NAME else self.label

    def wants(self, before: float) -> bool:
        """Whether a crossing that leaves the sign ``before`` is in the event's direction."""
        return self.direction == EITHER or before == -self.direction

    def stopped(self, t: float) -> str:
        """The message of a run this event stopped at ``t``."""
        how = {EITHER: "changed sign", RISING: "rose through 0", FALLING: "fell through 0"}
        return f"stopped at t = {t!r}: {self.text} {how[self.direction]} ({self.label})"


@record
class CompiledEvent:
    """An :class:`Event` compiled in (t, q, q̇, λ) at one run's parameter values:
    ``function(t, *q, *q̇, *λ)``, and ``rows(x)`` at each row (t, q, q̇, λ) of x at once.
    ``expression`` and ``arguments`` are the symbolic form and its argument symbols in that
    order, and ``parameters`` the parameter symbols it takes as run-time inputs, in the order of
    ``NumericSystem.parameters`` (the C step loop compiles them once per structure,
    :mod:`lagsim.run.engines.cloop`, and passes the run's values as the model's functions get
    them)."""

    event: Event
    function: Callable[..., float]
    rows: Callable[[np.ndarray], np.ndarray]
    uses_multipliers: bool
    expression: se.Basic
    arguments: tuple[se.Symbol, ...]
    parameters: tuple[se.Symbol, ...]

    @property
    def text(self) -> str:
        return self.event.text


FUNCTIONS: Memo[Callable[[np.ndarray], np.ndarray]] = Memo(16)
"""The event expressions lambdified in this process, by expression, arguments and parameters
(the values are bound per run): one function for every event of that expression and structure,
whichever option gave it."""


def compile_events(spec: SystemSpec, numeric: NumericSystem, events: tuple[Event, ...]
                   ) -> tuple[CompiledEvent, ...]:
    """``events`` compiled for ``numeric``'s structure with the parameters as run-time inputs
    (:data:`FUNCTIONS`), bound to its values; an unknown name is an
    :class:`lagsim.errors.InputError` at the event's ``where``."""
    if not events:
        return ()
    lambdas = tuple(se.Symbol(naming.multiplier(c)) for c in numeric.constraint_names)
    names = dict(spec.symbols())
    names.update({s.name: s for s in lambdas})
    hint = ("it may use t, the coordinates, their velocities <q>_dot, the parameters and the "
            f"multipliers {', '.join(s.name for s in lambdas) or '(none: no constraints)'}")
    args = (se.Symbol("t"), *(se.Symbol(c) for c in numeric.coordinates),
            *(se.Symbol(v) for v in naming.velocities(numeric.coordinates)), *lambdas)
    params = tuple(se.Symbol(k) for k in numeric.parameters)
    values = np.array(list(numeric.parameters.values()), dtype=float)
    compiled = []
    for event in events:
        expr = parse_expression(event.text, names, Source(event.where), event.what, hint)
        code = FUNCTIONS.get((expr, args, params), partial(lambdify, [*args, *params], [expr]))
        function, rows = bound_evaluators(code, len(args), values)
        compiled.append(CompiledEvent(event, function, rows, bool(set(lambdas)
                                                                  & expr.free_symbols),
                                      expr, args, params))
    return tuple(compiled)


class DenseStep(Protocol):
    """An accepted step as :class:`EventWatch` reads it (:class:`lagsim.run.driver.Step`): its
    ends, its end state, the solver (its ``y_old``, ``f`` and DOP853's stages ``K`` when it has
    them) and its dense output at one time or at many (columns)."""

    t_old: float
    t: float
    y: np.ndarray
    solver: Any

    def at(self, t: float) -> np.ndarray: ...

    def many(self, times: np.ndarray) -> np.ndarray: ...


def finite(g: float, event: Event, t: float) -> float:
    """``g``, the value of ``event``'s expression at t; an :class:`IntegrationError` when it is
    not finite."""
    if not math.isfinite(g):
        raise IntegrationError(f"the {event.flag} expression is {g}", time=t)
    return g


def locate(g: Callable[[float], float], u: float, gu: float, v: float, gv: float,
           b: float) -> float:
    """The crossing on the piece [u, v] whose end v has left the sign before it: v when g is 0
    there, u when g_u has the sign of g_v already (the projection at a step's start may move g
    across 0 by rounding), else Brent's method (scipy's ``brentq``, to
    :data:`lagsim.run.crossings.XTOL` at the step's end b)."""
    if gv == 0.0:
        return v
    if not gu * gv < 0.0:
        return u
    from scipy.optimize import brentq

    return float(brentq(g, u, v, xtol=XTOL * max(1.0, abs(b)), rtol=RTOL))


class EventWatch:
    """One compiled event followed through a run: the sign of g before the next crossing
    (``sign``; a start at exactly 0 takes its sign from the first nonzero value), and the
    crossings inside each accepted step (:meth:`crossings`). ``band``: g within
    band·(1 + max|q|) of 0 is 0 to rounding (:func:`lagsim.run.crossings.rounding`; a gap's
    :data:`lagsim.run.contacts.CLOSED`), 0 for none."""

    def __init__(self, event: CompiledEvent, form: Formulation, t0: float, y0: np.ndarray,
                 band: float = 0.0) -> None:
        self.compiled = event
        self.form = form
        self.band = band
        self.plain = not event.uses_multipliers and type(form).unpack is Formulation.unpack
        """Whether the state is (q, q̇) and λ is not used: the arguments at many states are
        made at once."""
        self.step: DenseStep | None = None
        self.scan = Scan(self.many)
        self.last: tuple[float, np.ndarray, float] | None = None
        self.found: list[float] = []
        self.sign = float(np.sign(self.value(t0, y0)))

    @property
    def event(self) -> Event:
        return self.compiled.event

    @classmethod
    def start(cls, event: CompiledEvent | None, form: Formulation, t0: float, y0: np.ndarray
              ) -> EventWatch | None:
        """``event`` followed from the run's start (t0, y0) in ``form``'s state; None for no
        event."""
        return None if event is None else cls(event, form, t0, y0)

    def resume(self, sign: float, missed: tuple[float, float, float] | None) -> None:
        """Go on from a run stepped so far elsewhere (the C loop): the sign g had there, and the
        first piece its scan could not resolve (already said)."""
        self.sign = sign
        if missed is not None:
            self.scan.carry(missed)

    def _arguments(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        form = self.form
        q, qd = form.unpack(t, y)
        lam = form.multipliers(t, q, qd) if self.compiled.uses_multipliers else np.zeros(form.m)
        return q, qd, lam

    def value(self, t: float, y: np.ndarray) -> float:
        q, qd, lam = self._arguments(t, y)
        return float(self.compiled.function(t, *q, *qd, *lam))

    def at(self, s: float) -> float:
        """g at s on the current step's dense output (for Brent's method)."""
        assert self.step is not None
        return finite(self.value(s, self.step.at(s)), self.event, s)

    def _rows(self, times: np.ndarray, ys: np.ndarray) -> np.ndarray:
        """g at each of ``times`` with the states ``ys`` (columns)."""
        if self.plain:
            x = np.zeros((len(times), 1 + len(ys) + self.form.m))
            x[:, 0] = times
            x[:, 1:1 + len(ys)] = ys.T
        else:
            x = np.array([np.concatenate(([t], *self._arguments(t, ys[:, i])))
                          for i, t in enumerate(times)])
        return self.compiled.rows(x)

    def many(self, times: np.ndarray) -> np.ndarray:
        """g at ``times`` on the current step's dense output (for the scan)."""
        assert self.step is not None
        values = self._rows(times, self.step.many(times))
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            finite(float(values[bad[0]]), self.event, float(times[bad[0]]))
        return values

    def crossings(self, step: DenseStep) -> list[float]:
        """The times of the crossings inside ``step`` in the event's direction, in time order
        (for a terminal event the first only, the scan ending there). The step's end value is
        checked; the whole step is one piece when :func:`lagsim.run.crossings.clear` finds it
        clear of zero, else it is scanned (the start's value reused when the step starts from the
        state the last one ended in); what the scan could not resolve is said once."""
        self.found = []
        a, b, solver = step.t_old, step.t, step.solver
        event = self.event
        g = finite(self.value(b, step.y), event, b)
        self.step = step
        seen = self.scan.missed
        start, ga = getattr(solver, "y_old", None), None
        if start is not None:
            ga = (self.last[2] if self.last is not None and self.last[0] == a
                  and start is self.last[1] else finite(self.value(a, start), event, a))
        stages = getattr(solver, "K", None)
        if (start is not None and ga is not None and stages is not None
                and self._clear(a, ga, start, stages[0], b, g, step.y, solver.f)):
            self._visit(a, ga, b, g)
        else:
            zero = (self.band * (1.0 + float(np.abs(self.form.unpack(b, step.y)[0]).max(
                initial=0.0))) if self.band else 0.0)
            self.scan.step(a, b, g, self._visit, ga, zero)
        self.last = (b, step.y, g)
        if seen is None and self.scan.missed is not None:
            self.form.report(message(event.flag, event.text, self.scan.missed))
        return self.found

    def _visit(self, u: float, gu: float, v: float, gv: float) -> bool:
        """The piece [u, v] (:data:`lagsim.run.crossings.Visit`): a crossing when g leaves the
        sign it had, kept when in the event's direction; True (the scan ends) at a terminal
        event's crossing."""
        before, self.sign = self.sign, float(np.sign(gv))
        if before == 0.0 or gv * before > 0.0:
            return False
        assert self.step is not None
        t = locate(self.at, u, gu, v, gv, self.step.t)
        if not self.event.wants(before):
            return False
        self.found.append(t)
        return self.event.terminal

    def _clear(self, a: float, ga: float, ya: np.ndarray, fa: np.ndarray, b: float,
               gb: float, yb: np.ndarray, fb: np.ndarray) -> bool:
        """:func:`lagsim.run.crossings.clear` on the step (an expression that cannot be
        evaluated or is not finite at a probe only means "not clear")."""
        if not ga * gb > 0.0:
            return False
        times, states = probes(a, ya, fa, b, yb, fb)
        try:
            values = self._rows(times, states)
        except (LagsimError, ArithmeticError, ValueError, np.linalg.LinAlgError):
            return False
        return clear(a, ga, b, gb, times, values)
