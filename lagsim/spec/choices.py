"""The names a run may choose from, declared once below everything that implements them (issue 23).

``--method``, ``--formulation`` and ``--stabilize`` take these names; the options table
(:mod:`lagsim.spec.options`) validates them, the command line offers them, and the JSON Schema
(:mod:`lagsim.spec.schema`) lists them, all from here, without importing the numerics. The
run layer maps each name to its implementation (:mod:`lagsim.run.registry`), and a test holds the
two to the same names in the same order (tests/test_choices.py), as scipy's ``solve_ivp`` keeps
its ``METHODS`` table of names beside the solver classes (``scipy/integrate/_ivp/ivp.py``).
"""

from __future__ import annotations

SOLVER_METHODS: tuple[str, ...] = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")
"""scipy's adaptive solvers: they integrate the ODE a formulation makes."""
FIXED_STEP_METHODS: tuple[str, ...] = ("rattle", "variational")
"""The structure-preserving methods that take fixed steps of ``dt`` and keep the constraints
themselves (issue 11): no formulation or stabilizer applies to them."""
METHODS: tuple[str, ...] = (*SOLVER_METHODS, *FIXED_STEP_METHODS)
"""Every ``--method``, in the order ``--help`` lists them."""

AUTO = "auto"
"""``--formulation auto``: the first of :data:`AUTO_ORDER` that applies to the system."""
FORMULATIONS: tuple[str, ...] = ("ode", "index1", "udwadia-kalaba", "reduced")
"""Every formulation: how the constraints enter the ODE."""
AUTO_ORDER: tuple[str, ...] = ("ode", "index1", "udwadia-kalaba")
"""What ``auto`` tries, in order."""
FORMULATION_CHOICES: tuple[str, ...] = (AUTO, *FORMULATIONS)
"""Every ``--formulation``."""

STABILIZERS: tuple[str, ...] = ("none", "baumgarte", "projection")
"""Every ``--stabilize``: how a constrained run keeps to its constraints."""

SENSITIVITY_ERRORS: tuple[str, ...] = (AUTO, "joint", "state")
"""Every ``--sensitivity-errors``: what the step-size control of a run with sensitivities
measures (the state and the sensitivities, or the state alone; ``auto`` the state alone where
the method can, the explicit ones, else both)."""

FORMS: tuple[str, ...] = ("lagrange", "matrix", "dae", "index1", "udwadia-kalaba", "reduced",
                          "linear", "hamilton")
"""Every form ``derive --form`` (``System.derive(form)``) writes, in the order ``--form all``
prints them; :data:`lagsim.symbolic.forms.FORMS` maps each to what builds it."""
ALL_FORMS = "all"
"""``--form all``: every form that applies to the system."""

PLOT_KINDS: tuple[str, ...] = ("overview", "time", "phase", "drift", "energy", "forces",
                               "invariants", "lyapunov", "sweep", "poincare", "path")
"""Every ``plot --kind`` (``lagsim.plot(kind=...)``), in the order ``--help`` lists them;
:data:`lagsim.viz.kinds.KIND_HELP` says what each draws."""

REPORT_FORMATS: tuple[str, ...] = ("text", "latex", "json")
"""Every ``--format`` a report or a derived form is written in (``derive``'s, in this order)."""
TEXT_FORMATS: tuple[str, ...] = ("text", "json")
"""The ``--format`` of a report (``check``, ``action``, ``modes``, ``fit``, ...): text for a
terminal, json for scripts; no latex, which only the derived forms write."""

LOCAL_SCHEDULERS: tuple[str, ...] = ("synchronous",)
"""The ``sweep --scheduler`` that is a name rather than a cluster's address: every run in this
process, one after another."""
