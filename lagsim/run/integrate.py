"""Integrate a compiled system (issue 3; rebuilt from parts in issue 8 §3).

The public names live here for the rest of lagsim and for users; the parts live in:

* :mod:`lagsim.spec.options`: the table of the options of a run and :class:`SimulateOptions`;
* :mod:`lagsim.run.formulations`: the formulations and stabilizers (each declares what it
  supports), the shared linear algebra and the mass-matrix checks;
* :mod:`lagsim.run.registry`: each name of :mod:`lagsim.spec.choices` mapped to its part, and
  :func:`check_combination`;
* :mod:`lagsim.run.problem`: :class:`Problem`, what a run needs, built and checked once;
* :mod:`lagsim.run.driver`: :func:`simulate`, the loop over accepted steps and its small parts.

:func:`consistent_start` (the start state moved onto the constraints) lives in
:mod:`lagsim.run.start`.
"""

from __future__ import annotations

from lagsim.run.driver import FailedRun, run, simulate
from lagsim.run.formulations import (
    RCOND,
    Baumgarte,
    Formulation,
    Index1,
    MassWatch,
    OdeFormulation,
    Projection,
    Stabilizer,
    UdwadiaKalaba,
    check_mass_matrix,
    project_state,
)
from lagsim.run.problem import Problem
from lagsim.run.reduced import Reduced
from lagsim.run.registry import (
    FORMULATIONS,
    METHODS,
    STABILIZERS,
    check_combination,
    choose_formulation,
)
from lagsim.run.start import consistent_start
from lagsim.spec.choices import AUTO_ORDER
from lagsim.spec.options import OPTIONS, SimulateOptions

__all__ = [
    "AUTO_ORDER", "FORMULATIONS", "METHODS", "OPTIONS", "RCOND",
    "STABILIZERS", "Baumgarte", "FailedRun", "Formulation", "Index1", "MassWatch",
    "OdeFormulation", "Problem", "Projection", "Reduced", "Stabilizer", "SimulateOptions",
    "UdwadiaKalaba", "check_combination", "check_mass_matrix", "choose_formulation",
    "consistent_start", "project_state", "run", "simulate",
]
