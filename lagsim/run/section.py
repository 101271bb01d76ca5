"""Poincaré sections: ``--section EXPR`` (issue 12).

A run with a section writes, instead of its samples, the state at every crossing of EXPR = 0 in
the chosen direction (``--section-direction``: ``up``, EXPR rising through 0; ``down``; ``both``).
The section is a non-terminal :class:`lagsim.run.events.Event` (:func:`section_event`), compiled
and followed as ``--stop-when``'s terminal one is (:func:`lagsim.run.events.compile_events`,
:class:`lagsim.run.events.EventWatch`): the sign changes of EXPR inside each accepted step,
looked for on the step's dense output at a resolution tied to EXPR's own rate and each found by
``brentq`` (:mod:`lagsim.run.crossings`), so a step that crosses twice or more gives every
crossing; an EXPR that changes faster than pieces of 1/4096 of a step can follow is said on
stderr. The section of the double pendulum at θ1 = 0 going up, plotted as (θ2, θ̇2) for many
starts at one energy, is the classic picture of its mixed regular and chaotic motion
(``lagsim plot --kind poincare``).

The expression is compiled once per process with the parameters as inputs (so a sweep over
parameter values compiles it once), from the same names as ``--stop-when``: t, the coordinates,
their velocities, the parameters and the multipliers ``lambda_<c>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from lagsim.errors import InputError, Location

if TYPE_CHECKING:  # lagsim.run.events only for a run with a section (issue 31, start-up)
    from lagsim.run.events import Event, OptionSource

    class SectionOptions(OptionSource, Protocol):
        """What a section needs of the run's options
        (:class:`lagsim.spec.options.SimulateOptions`)."""

        @property
        def section(self) -> str | None: ...

        @property
        def section_direction(self) -> str: ...

        def where(self, name: str) -> Location | None: ...


def check_direction(options: SectionOptions) -> None:
    """Refuse ``--section-direction`` without ``--section`` (before any work: every run checks
    it, whichever loop steps it)."""
    if options.section is None and options.where("section_direction") is not None:
        raise InputError(f"{options.label('section_direction')} chooses the crossings of "
                         "--section; give --section EXPR too",
                         options.file_location("section_direction")
                         or Location(options.label("section_direction")))


def section_event(options: SectionOptions) -> Event | None:
    """The ``--section`` of ``options`` as a non-terminal event in its direction, or None."""
    if options.section is None:
        return None
    from lagsim.run.events import EITHER, FALLING, RISING, Event

    directions = {"up": RISING, "down": FALLING, "both": EITHER}
    return Event.of_option(options, "section", options.section,
                           directions[options.section_direction], terminal=False)
