"""The registry of a run's parts: each name declared in :mod:`lagsim.spec.choices` mapped to its
implementation, and the one check of a requested combination (issue 8 §3, issue 23).

``--method`` names scipy's solvers (:data:`SOLVERS`, imported only when a run steps with one in
Python) and the fixed-step methods (:data:`FIXED_STEP`, issue 11); ``--formulation`` names the
formulations of :mod:`lagsim.run.formulations` and :mod:`lagsim.run.reduced`; ``--stabilize``
the stabilizers. The names are declared once, below the run layer, so that the options table
reads them without importing this module; tests/test_choices.py holds each registry to its
declared names, in order. :func:`check_combination` reads what each part declares it supports
and, when a combination does not apply, says what would; shaped like scipy's ``solve_ivp``
(a table of method names beside the solver classes, ``scipy/integrate/_ivp/ivp.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from lagsim.errors import InputError
from lagsim.numeric.compile import NumericSystem
from lagsim.records import record
from lagsim.run.formulations import (
    Baumgarte,
    Formulation,
    Index1,
    Locate,
    OdeFormulation,
    Projection,
    Report,
    Stabilizer,
    UdwadiaKalaba,
    dependent_constraints,
    matrix_rank,
)
from lagsim.spec import choices

if TYPE_CHECKING:
    from scipy.integrate import OdeSolver


class Lazy(Mapping[str, Any]):
    """Name → class, each made by ``load(name)`` when looked up: scipy.integrate, a third
    of a run's start-up, is imported only when a run steps with one of its solvers in Python
    (the C loop and the fixed-step methods do not), and a fixed-step method's loop only when it
    runs (:data:`lagsim.run.engines.fixed.FIXED_STEP_METHODS`)."""

    def __init__(self, names: tuple[str, ...], load: Callable[[str], Any]) -> None:
        self._names = names
        self._load = load

    def __getitem__(self, name: str) -> Any:
        if name not in self._names:
            raise KeyError(name)
        return self._load(name)

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is one of the names, without loading its class."""
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _solver(name: str) -> type[OdeSolver]:
    import scipy.integrate

    solver: type[OdeSolver] = getattr(scipy.integrate, name)
    return solver


SOLVERS: Mapping[str, type[OdeSolver]] = Lazy(choices.SOLVER_METHODS, _solver)
"""scipy's adaptive solvers: they integrate the ODE a formulation makes."""


@record
class FixedStep:
    """What a fixed-step ``--method`` takes (issue 11), declared here so that
    :func:`check_combination` reads it before anything is built; the method itself, which runs
    its own loop, is :class:`lagsim.run.engines.rattle.FixedStepMethod` of the same ``name``
    (:data:`lagsim.run.engines.fixed.FIXED_STEP_METHODS`)."""

    name: str
    kinds: frozenset[str] = frozenset(("holonomic",))
    dependent_rows: bool = False
    fixed_step: bool = True
    velocity_note: str = (
        "structure-preserving integrators for velocity (nonholonomic) constraints are a "
        "different family (nonholonomic integrators: J. Cortés and S. Martínez 2001; R. I. "
        "McLachlan and M. Perlmutter 2006) that lagsim does not offer; use --method DOP853")


FIXED_STEP: Mapping[str, FixedStep] = {
    name: FixedStep(name) for name in choices.FIXED_STEP_METHODS}
"""The fixed-step methods (:mod:`lagsim.run.engines.rattle`,
:mod:`lagsim.run.engines.variational`): what each takes."""
METHODS: Mapping[str, type[OdeSolver] | FixedStep] = Lazy(
    choices.METHODS, lambda name: FIXED_STEP[name] if name in FIXED_STEP else _solver(name))
"""Every ``--method``: scipy's solvers, and the fixed-step structure-preserving methods
(:class:`lagsim.run.engines.rattle.FixedStepMethod`, issue 11), which need no formulation or
stabilizer and declare what they support (:class:`FixedStep`; the symbolic checks are the
method's ``misfit``)."""
_NUMERIC: Mapping[str, type[Formulation]] = {
    form.name: form for form in (OdeFormulation, Index1, UdwadiaKalaba)}


def _formulation(name: str) -> type[Formulation]:
    """The class of formulation ``name``; ``reduced`` (:mod:`lagsim.run.reduced`) is imported
    on first lookup, as it imports SymPy and scipy.integrate, which would triple the start-up
    of every other run."""
    if name in _NUMERIC:
        return _NUMERIC[name]
    from lagsim.run.reduced import Reduced

    return Reduced


FORMULATIONS: Mapping[str, type[Formulation]] = Lazy(choices.FORMULATIONS, _formulation)
"""Every ``--formulation`` but ``auto``."""
STABILIZERS: Mapping[str, type[Stabilizer]] = {
    stabilizer.name: stabilizer for stabilizer in (Stabilizer, Baumgarte, Projection)}
"""Every ``--stabilize``."""


def _or_list(names: Collection[str]) -> str:
    names = list(names)
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


def _misfit(form: type[Formulation], numeric: NumericSystem, dependent: Collection[str]
            ) -> tuple[str, str | None] | None:
    """Why ``form`` cannot integrate this system and the constraint that shows it (None when
    it can)."""
    names = numeric.constraint_names
    if not form.kinds and numeric.m:
        return (f"formulation '{form.name}' is for unconstrained systems, and this one has the "
                f"constraints {', '.join(names)}", names[0])
    if form.needs_constraints and not numeric.m:
        return (f"formulation '{form.name}' eliminates constrained coordinates, and this system "
                f"has no constraints", None)
    other = [n for n, k in zip(names, numeric.constraint_kinds) if k not in form.kinds]
    if form.kinds and other:
        return (f"formulation '{form.name}' handles {_or_list(sorted(form.kinds))} constraints "
                f"only, and {other[0]} is a {numeric.constraint_kinds[names.index(other[0])]} "
                f"constraint", other[0])
    if dependent and not form.dependent_rows:
        return (f"formulation {form.name} cannot run: the rows of A are dependent at the start "
                f"({', '.join(dependent)} repeats earlier constraints), so its equations are "
                f"singular", next(iter(dependent)))
    if numeric.m and numeric.time_dependent and not form.rheonomic:
        return f"formulation '{form.name}' needs constraints that do not depend on t", None
    return None


def check_combination(requested: str, options: Any, numeric: NumericSystem,
                      dependent: Collection[str] = (), locate: Locate | None = None
                      ) -> type[Stabilizer]:
    """Check that formulation ``requested``, ``options.stabilize`` and ``options.method`` apply to
    this system and to each other; return the stabilizer that runs.

    ``dependent`` names the constraints whose rows of A repeat earlier ones at the start. A
    stabilizer the formulation has no use for (``ode``, ``reduced``, or no constraints) becomes
    ``none`` when it was the default and is an error when the user asked for it. Each refusal is
    an :class:`InputError` that says what would apply, located at the option in the file (or
    at the constraint concerned through ``locate(constraint name)``).
    """
    if options.method in FIXED_STEP:
        return _check_fixed_step(FIXED_STEP[options.method], options, numeric, dependent, locate)
    form = FORMULATIONS[requested]
    misfit = _misfit(form, numeric, dependent)
    if misfit:
        why, concerned = misfit
        fits = [n for n, f in FORMULATIONS.items() if _misfit(f, numeric, dependent) is None]
        hint = f"; use {', '.join(fits)} (or auto)" if fits else ""
        tolerant = [n for n in fits if FORMULATIONS[n].dependent_rows]
        if dependent and not form.dependent_rows and tolerant:
            hint = (f"; use {options.give('formulation', _or_list(tolerant))}, which needs no "
                    "independence of the constraints")
        where = options.file_location("formulation")
        if where is None and concerned is not None and locate is not None:
            where = locate(concerned)
        raise InputError(why + hint, where)
    stabilize = options.stabilize
    if stabilize not in form.stabilizers or not numeric.m:
        if options.where("stabilize") is not None and stabilize != "none":
            why = ("the system has no constraints to keep" if not numeric.m else
                   f"formulation {form.name} keeps the constraints by construction")
            users = [n for n, f in FORMULATIONS.items() if stabilize in f.stabilizers
                     and _misfit(f, numeric, dependent) is None]
            hint = f", or use {_or_list(users)} with it" if users and numeric.m else ""
            raise InputError(f"{options.label('stabilize')} {stabilize} does not apply: {why}; "
                             f"leave it out{hint}", options.file_location("stabilize"))
        stabilize = "none"
    stabilizer = STABILIZERS[stabilize]
    if options.method not in stabilizer.methods:
        others = [s for s, c in STABILIZERS.items()
                  if options.method in c.methods and s in form.stabilizers]
        methods = [m for m in SOLVERS if m in stabilizer.methods]
        raise InputError(
            f"{options.label('stabilize')} {stabilize} cannot be used with "
            f"{options.label('method')} {options.method} ({stabilizer.method_note}); use "
            f"{options.give('method', _or_list(methods))}, or "
            f"{options.give('stabilize', _or_list(others))}",
            options.file_location("stabilize") or options.file_location("method"))
    if options.method not in form.methods:
        raise InputError(f"formulation {form.name} cannot be used with "
                         f"{options.label('method')} {options.method}; use "
                         f"{options.give('method', _or_list(sorted(form.methods)))}",
                         options.file_location("method"))
    return stabilizer


def _check_fixed_step(method: FixedStep, options: Any, numeric: NumericSystem,
                      dependent: Collection[str], locate: Locate | None) -> type[Stabilizer]:
    """The checks of a fixed-step method (issue 11): a step ``--dt``, no formulation,
    stabilizer, stop condition or section (the method handles the constraints itself; its loop
    looks for no crossings), and the constraint kinds and rows it declares; returns the
    ``none`` stabilizer."""
    label, at = options.label("method"), options.file_location("method")
    if options.dt is None:
        raise InputError(f"{label} {method.name} takes fixed steps: give the step with "
                         f"{options.label('dt')} (e.g. {options.give('dt', 0.01)})", at)
    for name, idle in (("formulation", choices.AUTO), ("stabilize", "none")):
        value = getattr(options, name)
        if options.where(name) is not None and value != idle:
            raise InputError(f"{options.label(name)} {value} does not apply to {label} "
                             f"{method.name}, which keeps the constraints itself; leave it out "
                             f"(or give {options.give(name, idle)})",
                             options.file_location(name) or at)
    for name, purpose in (("stop_when", "stops on a condition"),
                          ("section", "writes a section")):
        if getattr(options, name) is not None:
            raise InputError(f"{options.label(name)} is not available with {label} "
                             f"{method.name}; use {options.give('method', 'DOP853')} for a run "
                             f"that {purpose}", options.file_location(name) or at)
    kinds = numeric.constraint_kinds
    other = [c for c, k in zip(numeric.constraint_names, kinds) if k not in method.kinds]
    if other:
        raise InputError(f"{label} {method.name} handles holonomic constraints only, and "
                         f"{other[0]} is a velocity constraint; {method.velocity_note}",
                         at or (locate(other[0]) if locate else None))
    if dependent and not method.dependent_rows:
        raise InputError(f"{label} {method.name} cannot run: the rows of A are dependent at "
                         f"the start ({', '.join(dependent)} repeats earlier constraints); use "
                         f"{options.give('method', 'DOP853')} "
                         f"{options.give('formulation', 'udwadia-kalaba')}",
                         at or (locate(next(iter(dependent))) if locate else None))
    return STABILIZERS["none"]


def choose_formulation(requested: str, numeric: NumericSystem, t: float, q: np.ndarray,
                       qd: np.ndarray, report: Report) -> str:
    """``auto``: the first of :data:`lagsim.spec.choices.AUTO_ORDER` that applies (ode without
    constraints, else index1, or udwadia-kalaba when A is rank-deficient at the start, said
    through ``report``)."""
    if requested != choices.AUTO:
        return requested
    dependent = dependent_constraints(numeric, t, q, qd)
    for name in choices.AUTO_ORDER:
        if _misfit(FORMULATIONS[name], numeric, dependent) is None:
            passed = [n for n in choices.AUTO_ORDER[:choices.AUTO_ORDER.index(name)]
                      if _misfit(FORMULATIONS[n], numeric, ()) is None]
            if passed:
                found = matrix_rank(numeric.dynamics(t, q, qd)[2])
                report(f"auto: the constraint rows are dependent at the start (rank {found} "
                       f"for {numeric.m} constraints), so {_or_list(passed)} cannot run; using "
                       f"{name}")
            return name
    raise InputError("no formulation applies to this system")


