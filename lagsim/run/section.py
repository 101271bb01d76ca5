"""Poincaré sections: ``--section EXPR`` (issue 12).

A run with a section writes, instead of its samples, the state at every crossing of EXPR = 0 in
the chosen direction (``--section-direction``: ``up``, EXPR rising through 0; ``down``; ``both``),
each crossing located like ``--stop-when``'s: the sign changes of EXPR inside each accepted
step, looked for on the step's dense output at a resolution tied to EXPR's own rate and each
found by ``brentq`` (:mod:`lagsim.run.crossings`, :class:`lagsim.run.driver.Section`), so a step
that
crosses twice or more gives every crossing; an EXPR that changes faster than pieces of 1/4096
of a step can follow is said on stderr. The section of the double pendulum at θ1 = 0 going
up, plotted as (θ2, θ̇2) for many starts at one energy, is the classic picture of its mixed
regular and chaotic motion (``lagsim plot --kind poincare``).

The expression is compiled once per process with the parameters as inputs (so a sweep over
parameter values compiles it once), from the same names as ``--stop-when``: t, the coordinates,
their velocities, the parameters and the multipliers ``lambda_<c>``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.errors import InputError, Location
from lagsim.numeric.compile import NumericSystem, lambdify
from lagsim.numeric.memo import Memo
from lagsim.run.crossings import bound_evaluators
from lagsim.spec.expressions import Source, parse_expression
from lagsim.spec.options import SimulateOptions
from lagsim.spec.system import SystemSpec


@dataclass(frozen=True)
class SectionFunction:
    """The ``--section`` expression compiled in (t, q, q̇, λ) at one run's parameter values:
    ``function(t, *q, *q̇, *λ)``, and ``rows(x)`` at each row (t, q, q̇, λ) of x at once."""

    text: str
    function: Callable[..., float]
    uses_multipliers: bool
    direction: str
    rows: Callable[[np.ndarray], np.ndarray]


FUNCTIONS: Memo[tuple[Callable, bool]] = Memo(16)
"""The ``--section`` expressions compiled in this process, by expression and structure."""


def check_direction(options: SimulateOptions) -> None:
    """Refuse ``--section-direction`` without ``--section`` (before any work: every run checks
    it, whichever loop steps it)."""
    if options.section is None and options.where("section_direction") is not None:
        raise InputError(f"{options.label('section_direction')} chooses the crossings of "
                         "--section; give --section EXPR too",
                         options.file_location("section_direction")
                         or Location(options.label("section_direction")))


def compile_section(spec: SystemSpec, numeric: NumericSystem, options: SimulateOptions
                    ) -> SectionFunction | None:
    """The ``--section`` expression of ``options``, or None; an unknown name is an
    :class:`InputError` at the option (its file location, or ``--section``)."""
    if options.section is None:
        check_direction(options)
        return None
    lambdas = [naming.multiplier(c) for c in numeric.constraint_names]
    params = list(numeric.parameters)
    key = (options.section, numeric.coordinates, tuple(lambdas), tuple(params))
    compiled, uses = FUNCTIONS.get(key, lambda: _compile(spec, numeric, options, lambdas,
                                                         params))
    values = np.array(list(numeric.parameters.values()), dtype=float)
    function, rows = bound_evaluators(compiled, 1 + 2 * numeric.n + numeric.m, values)
    return SectionFunction(options.section, function, uses, options.section_direction, rows)


def _compile(spec: SystemSpec, numeric: NumericSystem, options: SimulateOptions,
             lambdas: list[str], params: list[str]) -> tuple[Callable, bool]:
    names = dict(spec.symbols())
    names.update({name: se.Symbol(name) for name in lambdas})
    in_file = options.file_location("section")
    where = in_file or Location(options.label("section"))
    label = "simulate.section" if in_file else "expression"
    hint = ("it may use t, the coordinates, their velocities <q>_dot, the parameters and the "
            f"multipliers {', '.join(lambdas) or '(none: no constraints)'}")
    expr = parse_expression(options.section, names, Source(where), label, hint)
    args = [se.Symbol("t"), *(se.Symbol(c) for c in numeric.coordinates),
            *(se.Symbol(v) for v in naming.velocities(numeric.coordinates)),
            *(se.Symbol(name) for name in lambdas), *(se.Symbol(p) for p in params)]
    uses = bool({se.Symbol(name) for name in lambdas} & expr.free_symbols)
    return lambdify(args, [expr]), uses
