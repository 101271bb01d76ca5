"""The loop of a system with unilateral constraints (issue 27): event-driven impacts, exact.

Free flight is the formulation's ODE stepped by scipy's ``OdeSolver`` as in the Python loop
(:mod:`lagsim.run.engines.python`). Each gap g_i(q, t) is a terminal event falling through 0
(:class:`lagsim.run.events.EventWatch`: Brent's method to rounding on the step's dense output);
at the first, the velocities jump by Newton's law (:meth:`lagsim.run.contacts.Contacts.impact`)
and the integration restarts from the new state. The run's row at an impact is the state after
it, with the impulses in ``impulse_<c>`` and the energy taken in ``impact_energy_loss``.

Touches. A gap that falls through 0 at a rate that is not closing
(:meth:`lagsim.run.contacts.Contacts.closing`: ġ⁻ ≥ −RESTING (1 + Σ_j |G_ij q̇_j| + |g_t|), its
rounding bound) takes no impulse, and makes no row: two bodies that left an impact together,
their gap at 0 and its rate 0 to rounding (the cradle's balls 2 and 3), cross 0 by rounding
only. The contact is held from there when free flight presses it (g̈ < 0, as a resting contact
below), else it stays open and the step goes on (that gap's later crossings in the same step are
not looked for: one that closes for real leaves the gap negative, which :meth:`ImpactLoop._through`
reports). Each gap's scan takes a piece within CLOSED (1 + max|q|) of 0 as 0 to rounding
(:func:`lagsim.run.crossings.rounding`), so such a gap is not said "could not be followed"; a
gap that leaves that band and cannot be followed still is.

Accumulation (Zeno). Under a gap acceleration a = −g̈ > 0 that is constant over the bounces,
the flight after an impact at rate ġ⁺ lasts 2ġ⁺/a and the next rate is e ġ⁺, so the impacts
accumulate at t∞ = t + 2ġ⁺/(a(1 − e)) (the bouncing ball: t∞ = t₁ + 2v₁e/(g(1 − e)); Goebel,
Sanfelice and Teel, *Hybrid Dynamical Systems*, Princeton 2012, Example 2.12). When the last
three flights of one contact shrink geometrically by its e (ratios within :data:`RATIO` of e) and
the rest of the series, 2ġ⁺/(a(1 − e)), is below :data:`ACCUMULATION` (1 + |t|), or as soon
as the next rebound's height ġ⁺²/(2a) is below the rounding of the gap (:data:`UNSEEN`: the
event machinery could not see that bounce, and the measured ratios are noise there), the run
passes it in one row at t∞: the remaining rate taken out by a plastic impulse, the state
carried to t∞ with the contact held closed (the motion along it), the impulse of the whole
tail, Λ_p (1 + 2/(1 − e)), in that row (the tail's momentum balance: Λ_p = ġ⁺/W removes
ġ⁺, a τ/W holds the contact against a during τ; W = G M_c⁻¹ Gᵀ, and −Λ_p is the impulse that
stops ġ⁺, :meth:`lagsim.run.contacts.Contacts.jump` with the target 0). What that leaves out is
the tangential motion's dependence on the bounces of the tail (their normal impulses act through
the coupling of M), zero for the ball and the flat floor.

Alternating accumulation. A body with two contacts that it strikes in turn (Housner's rocking
block: after each corner's impact it turns about that corner, the other lifts and falls back)
accumulates its impacts too, its flights shrinking by a ratio ρ < 1 that tends to a constant as
they shrink (the block's r = 1 − (3/2) sin²α: near rest the gap's acceleration is constant and
each impact multiplies the rate by r). When the last :data:`ALTERNATING` impacts alternate
between two contacts, the ratios ρ_k = d_{k+1}/d_k of their intervals agree within :data:`RATIO`
and are below 1, the rest of the series after the last interval d, T = d ρ/(1 − ρ), is known
to ACCUMULATION (1 + |t|) (the two values of T that the last two ratios give differ by less,
scaled by 1/(1 − ρ) for the ratios' own geometric convergence), the run passes it in one row at
t∞ = t + T: both contacts brought to rest together (:meth:`lagsim.run.contacts.Contacts.settle`:
the velocities with both rates 0, a rough contact sticking when the percussions allow it), the
positions of the last impact carried across (the tail's motion is a vanishing oscillation about
them), the row's impulses the percussions of the tail from the momentum balance over it,
M (q̇∞ − q̇⁺) − F T = Σ Gᵀ P + Wᵀ T_t (:meth:`lagsim.run.contacts.Contacts.percussions`), and
both contacts held from there while their forces push (:meth:`ImpactLoop._pushing`). The
rounding of the event times (about 1e-16/ġ) makes the ratios noisy at small rates; the test on
T absorbs that noise once d is small, well before the flights fall below what the event
machinery sees.

Held phases watch every open gap. A gap that is at 0 to rounding when a held phase starts takes
its sign from that rounding, and could sink without its event seeing a crossing: the first step
of a held phase is at most half the shortest flight of the contacts that open
(:meth:`ImpactLoop._held_first_step`), and a gap that ends a held step below −CLOSED (1 + max|q|)
without a crossing is located on the step's dense output, or stops the run with an
:class:`IntegrationError` when it cannot be (:meth:`ImpactLoop._sunk`): never a silent
penetration.

Persistent contact. From there (or after an impact that leaves a contact at rest, ġ⁺ ≈ 0, with
a > 0: a plastic impact) the contact is held closed as a bilateral constraint g̈ = 0
(:meth:`lagsim.run.contacts.Contacts.held`), its force in ``contact_force_<c>``, until that
force would pull (it falls through 0, located by Brent's method): then the contact is released
and free flight resumes (Pfeiffer and Glocker 1996, §7.1: the transitions contact → detachment
at λ = 0).

Friction. A rough contact (``friction: mu`` along ``tangent: s``) takes at an impact also a
tangential impulse Λ_T with Coulomb's law (:meth:`lagsim.run.contacts.Contacts.impact`), and
while held it sticks (s̈ = 0) as long as |λ_T| ≤ μλ_N, else slides with λ_T = −μλ_N sign(ṡ)
(:meth:`ImpactLoop._modes`; :meth:`lagsim.run.contacts.Contacts.held` with ``slide``). A
sliding contact whose slip ṡ falls through 0 sticks there if its cone holds it, else slides
the other way; a sticking one whose |λ_T| reaches μλ_N slides from there against λ_T
(:meth:`ImpactLoop._switch`, Brent's method; Pfeiffer and Glocker 1996, §7.1).

In C. With DOP853 and a C compiler the free flights and the plain impacts between them run in
C (:mod:`lagsim.run.engines.cimpacts`, through :meth:`ImpactLoop._flight`); everything else
here stays Python's, and a flight that needs it is stepped again by :meth:`ImpactLoop._fly`.

Not yet: accumulations at three contacts or more,
``--section``, held contacts in C,
the reduced formulation and the fixed-step methods, and a correction of the drift of the gaps
and of the bilateral constraints while a contact is held (no stabilizer acts there).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import ClassVar

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, IntegrationError
from lagsim.output.trajectory import Trajectory
from lagsim.run.contacts import CLOSED, RESTING, Contacts, Impact, Impacts
from lagsim.run.engines.base import Engine, Progress, StepLoop
from lagsim.run.engines.cimpacts import flights_for
from lagsim.run.engines.python import after_step, make_solver
from lagsim.run.events import FALLING, CompiledEvent, Event, EventWatch, compile_events
from lagsim.run.monitor import Step, Watch
from lagsim.run.problem import Problem
from lagsim.run.registry import SOLVERS

RATIO = 1e-2
"""Relative agreement of the last two ratios of flight times with e for one contact's
accumulation, and of the last ratios of intervals with each other for an alternating one."""
ACCUMULATION = 1e-9
"""The rest of an accumulating series of impacts, relative to 1 + |t|, below which it is passed
in one row."""
UNSEEN = 64 * 2.220446049250313e-16
"""A rebound whose height ġ⁺²/(2a) is below UNSEEN (1 + max|q|), the rounding of the gap, could
not be seen by the event machinery: the accumulation is passed there whatever the ratios."""
THROUGH = 1e-9
"""A gap below −THROUGH (1 + max|q|) at the end of a free step in which no crossing was located
stops the run (:meth:`ImpactLoop._through`; the C flights return to Python there)."""
ALTERNATING = 6
"""The number of last impacts that must alternate between two contacts for their accumulation
(five flights, four ratios)."""
FORMULATIONS = ("ode", "index1", "udwadia-kalaba")
"""The formulations whose state is (q, q̇), which the impacts change."""

Forces = Callable[[float, np.ndarray], np.ndarray]
"""The forces of the held contacts at (t, y)."""


def _force_at(forces: Forces, step: Step, j: int, s: float) -> float:
    """The force of the j-th held contact at s on ``step``'s dense output."""
    return float(forces(s, step.at(s))[j])


class ImpactEngine(Engine):
    """Runs every problem with unilateral constraints; refuses the others."""

    name: ClassVar[str] = "impacts"

    def refusal(self, problem: Problem) -> str | None:
        return None if problem.spec.contacts else "the system has no unilateral constraints"

    def run(self, problem: Problem, progress: Progress | None = None) -> Trajectory:
        return ImpactLoop(problem).run(progress)


def refusal(problem: Problem) -> str | None:
    """Why :class:`ImpactLoop` cannot run ``problem``, or None."""
    options = problem.options
    if options.method not in SOLVERS:
        return (f"--method {options.method} does not run unilateral constraints yet; use one "
                "of scipy's adaptive methods (DOP853, RK45, Radau, ...)")
    if problem.form.name not in FORMULATIONS:
        return (f"--formulation {problem.form.name} does not run unilateral constraints yet; "
                f"use {', '.join(FORMULATIONS)}")
    if problem.section is not None:
        return "--section does not run with unilateral constraints yet"
    if problem.stop is not None and problem.stop.uses_multipliers:
        return ("a --stop-when expression with multipliers does not run with unilateral "
                "constraints yet")
    return None


class ImpactLoop(StepLoop):
    """Free flight, impacts, accumulations and held contacts, one phase after the other."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        first = problem.spec.contacts[0]
        why = refusal(problem)
        if why is not None:
            raise InputError(f"unilateral constraint '{first.name}': {why}", first.location)
        self.contacts = Contacts(problem.spec, problem.numeric)
        self.gaps: tuple[CompiledEvent, ...] = compile_events(problem.spec, problem.numeric, tuple(
            Event("unilateral", c.gap.text, FALLING, True, c.location, f"contact '{c.name}'",
                  f"the gap of '{c.name}'") for c in problem.spec.contacts))
        self.log: list[Impacts] = []
        """The run's impacts in blocks, in order: each Python impact one, each C call's plain
        impacts one (:meth:`_flight`)."""
        self.forces: dict[int, np.ndarray] = {}
        self.history: list[list[float]] = [[] for _ in problem.spec.contacts]
        self.order: list[tuple[float, int]] = []
        self.slide: dict[int, int] = {}
        """The held rough contacts that slide, with the sign σ of their slip velocity."""
        self.hint: dict[int, int] = {}
        """The mode (0 sticks, ±1 slides) a contact takes at the start of the next held
        phase, set where it changed its mode."""
        self.flights = flights_for(problem, self.contacts, (UNSEEN, RATIO, ACCUMULATION,
                                                              THROUGH))
        """The free flights in C (:mod:`lagsim.run.engines.cimpacts`), or None."""

    def _run_impl(self, watch: Watch, y0: np.ndarray | None, progress: Progress | None
                  ) -> Trajectory:
        problem, contacts = self.problem, self.contacts
        form = problem.form
        assert y0 is not None
        t, y = problem.t0, y0
        q, qd = form.unpack(t, y)
        g = contacts.evaluate(t, q, qd)[0]
        bad = np.flatnonzero(g < -1e-12 * (1.0 + float(np.abs(q).max(initial=0.0))))
        if bad.size:
            c = problem.spec.contacts[int(bad[0])]
            raise InputError(f"the gap of unilateral constraint '{c.name}' is {g[bad[0]]:.6g} "
                             "at the start; it must be >= 0 there", c.location)
        rate = contacts.rates(t, q, qd)
        closing = np.flatnonzero(contacts.closed(t, q, qd) & (rate < 0.0))
        if closing.size:
            c = problem.spec.contacts[int(closing[0])]
            raise InputError(f"unilateral constraint '{c.name}' is closed at the start and its "
                             f"gap's rate is {rate[closing[0]]:.6g} < 0 (into the obstacle); "
                             "start with the gap > 0 or its rate >= 0", c.location)
        held = self._resting(t, q, qd, np.zeros(contacts.k))
        h: float | None = None
        kind = ""
        while True:
            if held:
                outcome = self._hold(watch, t, y, held, progress, kind == "mode")
            else:
                outcome = self._flight(watch, t, y, h, progress)
            kind, t, y, hit, h = outcome
            if kind == "end":
                trajectory = watch.samples.trajectory("t_end", "")
                break
            if kind == "stop":
                trajectory = watch.samples.stopped(t)
                break
            if kind == "mode":
                continue
            if kind == "release":
                held = [i for i in held if i != hit]
                self._row(watch, t, y, None)
                continue
            q, qd = form.unpack(t, y)
            if not contacts.closing(t, q, qd)[hit]:
                held = [*held, hit]
                continue
            before = self._stop_sign(t, y)
            y, held = self._impact(watch, t, y, hit)
            t = watch.samples.last_time
            if before * self._stop_sign(t, y) < 0.0:
                trajectory = watch.samples.stopped(t)
                break
            h = self._first_step(t, y, hit, h)
        impacts = Impacts.join(self.log, self.contacts.k, self.contacts.n)
        self._say(impacts)
        return self._columns(trajectory, impacts)

    def _flight(self, watch: Watch, t: float, y: np.ndarray, h: float | None,
                progress: Progress | None
                ) -> tuple[str, float, np.ndarray, int, float | None]:
        """:meth:`_fly` in C when :attr:`flights` runs the problem, the plain impacts it made on
        the way recorded as :meth:`_impact` records them."""
        if self.flights is None:
            return self._fly(watch, t, y, h, progress)
        outcome, plain = self.flights.fly(watch, t, y, h, progress, self.history, self._fly)
        for impacts, hits in plain:
            self.log.append(impacts)
            times = impacts.t.tolist()
            for i, history in enumerate(self.history):
                history.extend(impacts.t[hits == i].tolist())
            self.order.extend(zip(times, hits.tolist()))
        return outcome

    def _stop_sign(self, t: float, y: np.ndarray) -> float:
        """The sign of the ``--stop-when`` expression at (t, y) (0 without one): an impact that
        changes it stops the run at the impact (the row after it is the last)."""
        stop = self.problem.stop
        if stop is None:
            return 0.0
        q, qd = self.problem.form.unpack(t, y)
        return float(np.sign(stop.function(t, *q, *qd)))

    def _impact(self, watch: Watch, t: float, y: np.ndarray, hit: int
                ) -> tuple[np.ndarray, list[int]]:
        """The jump at contact ``hit`` at t: the row after it, an accumulation passed, and the
        contacts to hold closed from there."""
        form, contacts = self.problem.form, self.contacts
        q, qd = form.unpack(t, y)
        qd_after, impact = contacts.impact(t, q, qd, hit)
        y = form.initial(t, q, qd_after)
        self._row(watch, t, y, impact)
        times = self.history[hit]
        times.append(t)
        self.order.append((t, hit))
        alternation = self._alternation(t)
        if alternation is not None:
            return self._rest(watch, t, q, qd_after, impact, *alternation)
        tail = self._accumulation(t, q, qd_after, hit)
        if tail is not None:
            t_inf, factor = tail
            qd_rest, pull, slide = contacts.jump(t, q, qd_after, [hit], np.zeros(contacts.k))
            q_inf, qd_inf = self._across(t, t_inf, q, qd_rest, [hit])
            stop = Impact(t_inf, -pull * factor, contacts.rates(t, q, qd_after),
                          contacts.rates(t_inf, q_inf, qd_inf), impact.energy_after,
                          contacts.numeric.energy(t_inf, q_inf, qd_inf), qd_after.copy(),
                          qd_inf.copy(), -slide * factor)
            y = form.initial(t_inf, q_inf, qd_inf)
            self._row(watch, t_inf, y, stop, fill=True)
            form.report(f"contact '{contacts.names[hit]}': the impacts accumulate at "
                        f"t = {float(t_inf)!r} (after {len(times)}); held closed from there")
            return y, self._resting(t_inf, q_inf, qd_inf, stop.before)
        return y, self._resting(t, q, qd_after, impact.before)

    def _alternation(self, t: float) -> tuple[float, list[int]] | None:
        """(t∞, the two contacts) when the last impacts alternate between two contacts and
        accumulate (the module's "Alternating accumulation"), else None."""
        last = self.order[-ALTERNATING:]
        if len(last) < ALTERNATING:
            return None
        pair = [last[-1][1], last[-2][1]]
        if pair[0] == pair[1] or any(c != pair[k % 2] for k, (_, c) in enumerate(last[::-1])):
            return None
        d = np.diff([s for s, _ in last])
        if not d.min() > 0.0:
            return None
        rho = d[1:] / d[:-1]
        if not (rho.max() < 1.0 and float(np.ptp(rho)) <= RATIO * rho[-1]):
            return None
        tail = d[-1] * rho[-1] / (1.0 - rho[-1])
        spread = abs(tail - d[-1] * rho[-2] / (1.0 - rho[-2])) / (1.0 - rho[-1])
        if spread > ACCUMULATION * (1.0 + abs(t)):
            return None
        return t + tail, pair

    def _rest(self, watch: Watch, t: float, q: np.ndarray, qd: np.ndarray, impact: Impact,
              t_inf: float, pair: list[int]) -> tuple[np.ndarray, list[int]]:
        """The alternating accumulation at the contacts ``pair`` passed from the impact at
        (t, q, q̇⁺) to its end t∞: the row there with both at rest, the percussions of the tail
        (:meth:`lagsim.run.contacts.Contacts.settle`); the contacts to hold from there."""
        form, contacts = self.problem.form, self.contacts
        qd_rest, normal, tangential = contacts.settle(t, q, qd, pair, t_inf - t)
        q_inf, qd_inf = self._across(t, t_inf, q, qd_rest, pair)
        stop = Impact(t_inf, normal, contacts.rates(t, q, qd), contacts.rates(t_inf, q_inf, qd_inf),
                      impact.energy_after, contacts.numeric.energy(t_inf, q_inf, qd_inf),
                      qd.copy(), qd_inf.copy(), tangential)
        y = form.initial(t_inf, q_inf, qd_inf)
        self._row(watch, t_inf, y, stop, fill=True)
        form.report(f"contacts {' and '.join(repr(contacts.names[i]) for i in pair)}: the "
                    f"alternating impacts accumulate at t = {float(t_inf)!r} (after "
                    f"{len(self.order)}); both held closed from there")
        return y, self._pushing(t_inf, q_inf, qd_inf, pair)

    def _pushing(self, t: float, q: np.ndarray, qd: np.ndarray, S: list[int]) -> list[int]:
        """The contacts of S to hold at (t, q, q̇): S less, one at a time, the one whose held
        force pulls most (Pfeiffer and Glocker 1996, §7.1: a contact with λ < 0 detaches)."""
        S = list(S)
        while S:
            f = self.contacts.held(t, q, qd, S)[2]
            if f.min() >= 0.0:
                return S
            S.pop(int(np.argmin(f)))
        return S

    def _across(self, t: float, t_inf: float, q: np.ndarray, qd: np.ndarray, held: list[int]
                ) -> tuple[np.ndarray, np.ndarray]:
        """The state at t∞ from (t, q, q̇) with ``held`` closed: the motion along the contact
        during the tail of flights, whose normal part is the bounces passed."""
        contacts, options, n = self.contacts, self.problem.options, self.contacts.n
        if not t_inf > t:
            return q, qd

        def rhs(s: float, z: np.ndarray) -> np.ndarray:
            return np.concatenate((z[n:], contacts.held(s, z[:n], z[n:], held)[0]))

        solver = SOLVERS[options.method](rhs, t, np.concatenate((q, qd)), t_inf,
                                         rtol=options.rtol, atol=options.atol)
        while solver.status == "running":
            solver.step()
        if solver.status == "failed":
            raise IntegrationError(f"the motion along '{contacts.names[held[0]]}' across its "
                                   "accumulation of impacts failed", time=float(t))
        return solver.y[:n].copy(), solver.y[n:].copy()

    def _accumulation(self, t: float, q: np.ndarray, qd: np.ndarray, hit: int
                      ) -> tuple[float, float] | None:
        """(t∞, the tail's impulse over the plastic one) when the impacts of ``hit``
        accumulate (the module's docstring), else None."""
        contacts = self.contacts
        e = float(contacts.restitution[hit])
        if not 0.0 < e < 1.0:
            return None
        rate = float(contacts.rates(t, q, qd)[hit])
        a = -self._free_gap_acceleration(t, q, qd)[hit]
        if not (a > 0.0 and rate >= 0.0):
            return None
        tau = 2.0 * rate / (a * (1.0 - e))
        unseen = rate * rate / (2.0 * a) <= UNSEEN * (1.0 + float(np.abs(q).max(initial=0.0)))
        times = self.history[hit]
        if len(times) < 4 and not unseen:
            return None
        d = np.diff(times[-4:])
        geometric = len(d) == 3 and all(abs(r / e - 1.0) <= RATIO for r in d[1:] / d[:-1])
        if not (unseen or geometric and tau <= ACCUMULATION * (1.0 + abs(t))):
            return None
        return t + tau, 1.0 + 2.0 / (1.0 - e)

    def _first_step(self, t: float, y: np.ndarray, hit: int, h: float | None) -> float | None:
        """The first step after an impact: at most half the flight 2ġ⁺/a it starts when the
        gap's acceleration −a pulls it back, so that the scan of the next crossing sees it
        inside a step of its own size rather than at the start of a step tuned to the last
        flight."""
        form = self.problem.form
        q, qd = form.unpack(t, y)
        rate = float(self.contacts.rates(t, q, qd)[hit])
        a = -float(self._free_gap_acceleration(t, q, qd)[hit])
        if not (a > 0.0 and rate > 0.0):
            return h
        flight = 2.0 * rate / a
        return min(h or math.inf, 0.5 * flight)

    def _free_gap_acceleration(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        form, n = self.problem.form, self.contacts.n
        qdd = form.rhs(t, form.initial(t, q, qd))[n:2 * n]
        _, G, _, drift = self.contacts.evaluate(t, q, qd)
        return G @ qdd + drift

    def _open(self, t: float, y: np.ndarray, i: int) -> bool:
        """Whether the gap i, fallen through 0 at (t, y), only touches there and stays open:
        it does not close (:meth:`lagsim.run.contacts.Contacts.closing`) and free flight does
        not press it (the module's "Touches")."""
        contacts = self.contacts
        q, qd = self.problem.form.unpack(t, y)
        return not (contacts.closing(t, q, qd)[i]
                    or i in self._resting(t, q, qd, contacts.sizes(t, q, qd)))

    def _resting(self, t: float, q: np.ndarray, qd: np.ndarray, before: np.ndarray
                 ) -> list[int]:
        """The closed contacts at rest (|ġ| ≤ RESTING (1 + |before|),
        :data:`lagsim.run.contacts.RESTING`; ``before`` the rates before an impact, or the sizes
        of the rates' terms at a touch) that free flight would push into the obstacle (g̈ < 0):
        those to hold closed."""
        contacts = self.contacts
        closed = contacts.closed(t, q, qd)
        if not closed.any():
            return []
        rate = contacts.rates(t, q, qd)
        gdd = self._free_gap_acceleration(t, q, qd)
        return [i for i in range(contacts.k) if closed[i]
                and abs(rate[i]) <= RESTING * (1.0 + abs(before[i])) and gdd[i] < 0.0]

    def _row(self, watch: Watch, t: float, y: np.ndarray, impact: Impact | None,
             fill: bool = False) -> None:
        """The row at t with the state y (after an impact, or at a release), the sample times
        up to t passed (``fill``: each given the state y, the positions of an accumulation)."""
        samples = watch.samples
        times, k = samples.times, samples.k
        while k < len(times) and times[k] <= t:
            if fill and times[k] < t:
                samples.add(float(times[k]), y, project=False)
            k += 1
        samples.extend(np.empty(0), np.empty((0, 0)), k)
        samples.add(t, y, project=False)
        if impact is not None:
            self.log.append(Impacts.of(samples.count - 1, impact))

    def _sample_until(self, watch: Watch, step: Step, end: float) -> None:
        """The sample times of ``step`` before ``end``."""
        samples = watch.samples
        times, k = samples.times, samples.k
        while k < len(times) and times[k] < end:
            samples.add(float(times[k]), step.at(float(times[k])))
            k += 1
        samples.extend(np.empty(0), np.empty((0, 0)), k)

    def _fly(self, watch: Watch, t: float, y: np.ndarray, h: float | None,
             progress: Progress | None
             ) -> tuple[str, float, np.ndarray, int, float | None]:
        problem = self.problem
        form = problem.form
        solver = make_solver(problem, watch.guard.rhs, t, y, first_step=h)
        gaps = [EventWatch(e, form, t, y, CLOSED) for e in self.gaps]
        stop = EventWatch.start(problem.stop, form, t, y)
        self.at = solver
        while solver.status == "running":
            try:
                message = solver.step()
                if solver.status == "failed":
                    raise watch.guard.failure(solver, message)
                step = Step(solver)
                watch.guard.accepted(step)
                hit: tuple[float, int] | None = None
                for i, gap in enumerate(gaps):
                    found = gap.crossings(step)
                    if (found and (hit is None or found[0] < hit[0])
                            and not self._open(found[0], step.at(found[0]), i)):
                        hit = (found[0], i)
                end = next(iter(stop.crossings(step)), None) if stop is not None else None
                if end is not None and (hit is None or end <= hit[0]):
                    watch.samples.take(step, end)
                    return "stop", end, step.y, -1, None
                if hit is not None:
                    self._sample_until(watch, step, hit[0])
                    size = min(solver.step_size or math.inf, problem.options.t_end - hit[0])
                    return "impact", hit[0], step.at(hit[0]), hit[1], size or None
                self._through(step)
                watch.samples.take(step, None)
                solver = after_step(problem, solver, watch.guard)
                self.at = solver
            except np.linalg.LinAlgError as exc:
                raise watch.guard.singular(solver, exc) from None
            watch.advance(solver.t, progress)
        return "end", solver.t, solver.y, -1, None

    def _through(self, step: Step) -> None:
        """An :class:`IntegrationError` when a gap is negative at the end of a step in which no
        crossing was located (the scan could not follow it): the run would go on inside the
        obstacle."""
        q, qd = self.problem.form.unpack(step.t, step.y)
        g = self.contacts.evaluate(step.t, q, qd)[0]
        bad = np.flatnonzero(g < -THROUGH * (1.0 + float(np.abs(q).max(initial=0.0))))
        if bad.size:
            raise IntegrationError(f"the gap of '{self.contacts.names[int(bad[0])]}' is "
                                   f"{g[bad[0]]:.6g}: a crossing was not located; give a smaller "
                                   "--rtol", time=step.t)

    def _hold(self, watch: Watch, t: float, y: np.ndarray, held: list[int],
              progress: Progress | None, switched: bool = False
              ) -> tuple[str, float, np.ndarray, int, float | None]:
        """The contacts ``held`` closed (g̈ = 0) from (t, y), their rough ones sticking or
        sliding (:meth:`_modes`), until one's force falls through 0 (its release), a rough one
        changes its mode (:meth:`_switch`: ``"mode"``), another contact closes, ``--stop-when``
        or the end. ``switched``: the phase goes on after a change of mode, its last row not
        the one at t (no contact force written there)."""
        problem, contacts = self.problem, self.contacts
        form, options, n = problem.form, problem.options, contacts.n

        slide = self.slide = self._modes(t, y, held)

        def rhs(s: float, z: np.ndarray) -> np.ndarray:
            return np.concatenate((z[n:], contacts.held(s, z[:n], z[n:], held, slide)[0]))

        def forces(s: float, z: np.ndarray) -> np.ndarray:
            return contacts.held(s, z[:n], z[n:], held, slide)[2]

        first = self._held_first_step(t, y, held)
        solver = SOLVERS[options.method](rhs, t, y, options.t_end, rtol=options.rtol,
                                         atol=options.atol,
                                         **({} if first is None else {"first_step": first}))
        others = [(i, EventWatch(e, form, t, y, CLOSED)) for i, e in enumerate(self.gaps)
                  if i not in held]
        stop = EventWatch.start(problem.stop, form, t, y)
        if not switched:
            self._force_row(watch, t, y, held)
        self.at = solver
        while solver.status == "running":
            message = solver.step()
            if solver.status == "failed":
                raise watch.guard.failure(solver, message)
            step = Step(solver)
            hit: tuple[float, int] | None = None
            for i, gap in others:
                found = gap.crossings(step) or self._sunk(step, i, held)
                if (found and (hit is None or found[0] < hit[0])
                        and not self._open(found[0], step.at(found[0]), i)):
                    hit = (found[0], i)
            switch = self._switch(step, held, slide)
            if switch is not None and (hit is None or switch[0] < hit[0]):
                hit = None
            else:
                switch = None
            f = forces(step.t, step.y)
            pulling = [j for j in range(len(held)) if f[j] < 0.0]
            if pulling:
                from scipy.optimize import brentq

                j = pulling[0]
                release = float(brentq(partial(_force_at, forces, step, j), step.t_old, step.t,
                                       xtol=1e-14 * max(1.0, abs(step.t))))
                if (hit is None or release < hit[0]) and (switch is None or release < switch[0]):
                    hit, switch = (release, -1 - held[j]), None
            end = next(iter(stop.crossings(step)), None) if stop is not None else None
            first_event = hit[0] if hit is not None else switch[0] if switch is not None else None
            if end is not None and (first_event is None or end <= first_event):
                self._held_samples(watch, step, end, held, last=True)
                return "stop", end, step.at(end), -1, None
            if switch is not None:
                self._held_samples(watch, step, switch[0], held)
                self.hint = {switch[1]: switch[2]}
                return "mode", switch[0], step.at(switch[0]), switch[1], None
            if hit is not None:
                self._held_samples(watch, step, hit[0], held)
                if hit[1] < 0:
                    return "release", hit[0], step.at(hit[0]), -1 - hit[1], None
                return "impact", hit[0], step.at(hit[0]), hit[1], None
            self._held_samples(watch, step, step.t, held, upto=True)
            watch.advance(solver.t, progress)
        return "end", solver.t, solver.y, -1, None

    def _held_first_step(self, t: float, y: np.ndarray, held: list[int]) -> float | None:
        """The first step of a held phase: at most half the shortest flight 2ġ/a of the other
        closed contacts that open (ġ > 0) while the held ones pull them back (g̈ = −a < 0 with
        ``held`` closed), so that their return is seen inside a step of its own size (as
        :meth:`_first_step` after an impact in free flight), and within the run's end; None
        when none opens (the solver's own choice)."""
        contacts, n = self.contacts, self.contacts.n
        q, qd = y[:n], y[n:2 * n]
        closed = contacts.closed(t, q, qd)
        _, G, g_t, drift = contacts.evaluate(t, q, qd)
        rate = G @ qd + g_t
        a = -(G @ contacts.held(t, q, qd, held, self.slide)[0] + drift)
        flights = [2.0 * rate[i] / a[i] for i in range(contacts.k)
                   if i not in held and closed[i] and rate[i] > 0.0 and a[i] > 0.0]
        if not flights:
            return None
        first = min(0.5 * min(flights), self.problem.options.t_end - t)
        return first if first > 0.0 else None

    def _sunk(self, step: Step, i: int, held: list[int]) -> list[float]:
        """The crossing of the open gap i through 0 inside a held ``step`` that the event's scan
        did not report (the gap started the phase at 0 to rounding, its sign taken from the
        rounding), when the gap ends the step below −CLOSED (1 + max|q|): the last zero before
        the step's end, found on 64 points of the dense output and refined by Brent's method;
        an :class:`IntegrationError` when the gap is below that at every point (it never
        opened: a crossing that cannot be located). Empty when the gap ends the step open."""
        contacts, n = self.contacts, self.contacts.n

        def gap(s: float) -> float:
            z = step.at(s)
            return float(contacts.evaluate(s, z[:n], z[n:2 * n])[0][i])

        def sunk(s: float, z: np.ndarray) -> bool:
            return gap(s) < -CLOSED * (1.0 + float(np.abs(z[:n]).max(initial=0.0)))

        if not sunk(step.t, step.y):
            return []
        times = np.linspace(step.t_old, step.t, 65)
        values = np.array([gap(float(s)) for s in times])
        above = np.flatnonzero(values >= 0.0)
        if not above.size or above[-1] == len(times) - 1:
            names = ", ".join(repr(contacts.names[j]) for j in held)
            raise IntegrationError(f"the gap of '{contacts.names[i]}' is {values[-1]:.6g} with "
                                   f"{names} held: its crossing was not located; give a smaller "
                                   "--rtol", time=float(step.t))
        from scipy.optimize import brentq

        k = int(above[-1])
        return [float(brentq(gap, float(times[k]), float(times[k + 1]),
                             xtol=1e-14 * max(1.0, abs(step.t))))]

    def _modes(self, t: float, y: np.ndarray, held: list[int]) -> dict[int, int]:
        """The sliding contacts among the rough ones of ``held`` at (t, y), with the sign σ of
        their slip: the mode :attr:`hint` gives (the one a contact changed to), else sliding
        where the slip velocity ṡ exceeds its rounding (RESTING times the size of its terms),
        else sticking; then, one at a time, a sticking contact whose tangential force leaves
        Coulomb's cone |λ_T| ≤ μ λ_N slides against that force, σ = −sign λ_T (Pfeiffer and
        Glocker 1996, §7.1: the transition stick → slip)."""
        contacts, n = self.contacts, self.contacts.n
        q, qd = y[:n], y[n:2 * n]
        rough = [i for i in held if not np.isnan(contacts.friction[i])]
        if not rough:
            self.hint = {}
            return {}
        W, s_t, _ = contacts.tangents(t, q, qd)
        slip = W @ qd + s_t
        size = np.abs(W * qd).sum(axis=1) + np.abs(s_t)
        slide: dict[int, int] = {}
        for i in rough:
            mode = self.hint.get(i)
            if mode is None and abs(slip[i]) > RESTING * (1.0 + size[i]):
                mode = int(np.sign(slip[i]))
            if mode:
                slide[i] = mode
        self.hint = {}
        while True:
            _, _, normal, tangential = contacts.held_friction(t, q, qd, held, slide)
            out = [(abs(tangential[j]) - contacts.friction[i] * normal[held.index(i)], i, j)
                   for j, i in enumerate(rough) if i not in slide]
            worst = max(out, default=None)
            if worst is None or worst[0] <= 1e-12 * (1.0 + abs(tangential[worst[2]])):
                return slide
            slide[worst[1]] = -int(np.sign(tangential[worst[2]]))

    def _switch(self, step: Step, held: list[int], slide: dict[int, int]
                ) -> tuple[float, int, int] | None:
        """The first change of mode of a held rough contact inside ``step``: (time, contact,
        its new mode). A sliding contact whose slip velocity ṡ falls through 0 stops there and
        sticks (mode 0; :meth:`_modes` makes it slide on, either way, when its cone does not hold
        it); a sticking one whose tangential force reaches the cone's edge, μ λ_N − |λ_T| falling
        through 0, slides from there against that force. Both times by Brent's method on the
        step's dense output."""
        contacts, n = self.contacts, self.contacts.n
        rough = [i for i in held if not np.isnan(contacts.friction[i])]
        if not rough:
            return None
        from scipy.optimize import brentq

        def slip(i: int, s: float) -> float:
            z = step.at(s)
            return float(slide[i] * contacts.slips(s, z[:n], z[n:2 * n])[i])

        def margin(i: int, s: float) -> float:
            z = step.at(s)
            _, _, normal, tangential = contacts.held_friction(s, z[:n], z[n:2 * n], held, slide)
            j = rough.index(i)
            return float(contacts.friction[i] * normal[held.index(i)] - abs(tangential[j]))

        xtol = 1e-14 * max(1.0, abs(step.t))
        first: tuple[float, int, int] | None = None
        for i in rough:
            if i in slide:
                if slip(i, step.t) > 0.0 or slip(i, step.t_old) <= 0.0:
                    continue
                s = float(brentq(partial(slip, i), step.t_old, step.t, xtol=xtol))
                mode = 0
            else:
                if margin(i, step.t) >= 0.0:
                    continue
                s = (float(brentq(partial(margin, i), step.t_old, step.t, xtol=xtol))
                     if margin(i, step.t_old) > 0.0 else step.t_old)
                z = step.at(s)
                tangential = contacts.held_friction(s, z[:n], z[n:2 * n], held, slide)[3]
                mode = -int(np.sign(tangential[rough.index(i)])) or 1
            if first is None or s < first[0]:
                first = (s, i, mode)
        return first

    def _force_row(self, watch: Watch, t: float, y: np.ndarray, held: list[int]) -> None:
        """The contact forces at the last row, at (t, y) with ``held`` closed."""
        q, qd = self.problem.form.unpack(t, y)
        f = np.zeros(self.contacts.k)
        f[held] = self.contacts.held(t, q, qd, held, self.slide)[2]
        self.forces[watch.samples.count - 1] = f

    def _held_samples(self, watch: Watch, step: Step, end: float, held: list[int],
                      last: bool = False, upto: bool = False) -> None:
        """The rows at the sample times of a held step before ``end`` (``upto``: up to and
        including it; ``last``: and a row at ``end``), in one block: the bilateral multipliers
        and the contact forces of :meth:`lagsim.run.contacts.Contacts.held`."""
        samples, contacts = watch.samples, self.contacts
        times, k = samples.times, samples.k
        chosen: list[float] = []
        while k < len(times) and (times[k] <= end if upto else times[k] < end):
            chosen.append(float(times[k]))
            k += 1
        if last:
            chosen.append(end)
        rows, forces = [], []
        for s in chosen:
            q, qd = self.problem.form.unpack(s, step.at(s))
            _, lam, f = contacts.held(s, q, qd, held, self.slide)
            rows.append(np.concatenate((q, qd, lam)))
            row = np.zeros(contacts.k)
            row[held] = f
            forces.append(row)
        first = samples.count
        samples.extend(np.array(chosen), np.array(rows) if rows else np.empty((0, 0)), k)
        for j, f in enumerate(forces):
            self.forces[first + j] = f

    def _columns(self, trajectory: Trajectory, impacts: Impacts) -> Trajectory:
        """``trajectory`` with the columns ``impulse_<c>``, ``contact_force_<c>`` and
        ``impact_energy_loss`` and the events of ``impacts``, read from their arrays."""
        rows, names = len(trajectory.t), self.contacts.names
        impulse = np.zeros((rows, len(names)))
        force = np.zeros((rows, len(names)))
        loss = np.zeros(rows)
        impulse[impacts.rows] = impacts.impulses
        loss[impacts.rows] = impacts.loss
        for row, values in self.forces.items():
            force[row] = values
        return trajectory.with_extras(
            [*((naming.impulse(name), impulse[:, j]) for j, name in enumerate(names)),
             *((naming.contact_force(name), force[:, j]) for j, name in enumerate(names)),
             (naming.IMPACT_LOSS, loss)], events=impacts.events(names, trajectory.t[-1]))

    def _say(self, impacts: Impacts) -> None:
        if not len(impacts.t):
            return
        lost = sum(impacts.loss.tolist())
        self.problem.form.report(f"impacts: {len(impacts.t)}, energy lost {lost:.6g}")
