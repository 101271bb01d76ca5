"""The engine of the fixed-step methods (issue 11): ``--method rattle`` and ``--method
variational`` run their own loop (:class:`lagsim.run.engines.rattle.FixedStepMethod`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from lagsim.output.trajectory import Trajectory
from lagsim.run.engines.base import UNILATERAL, Engine, Progress
from lagsim.run.engines.rattle import FixedStepMethod, Rattle
from lagsim.run.engines.variational import Variational
from lagsim.run.problem import Problem

FIXED_STEP_METHODS: Mapping[str, type[FixedStepMethod]] = {
    method.name: method for method in (Rattle, Variational)}
"""The fixed-step methods by name (what each takes is declared under the same name in
:data:`lagsim.run.formulations.FIXED_STEP`)."""


class FixedStepEngine(Engine):
    """Runs a fixed-step ``--method``; refuses the adaptive ones."""

    name: ClassVar[str] = "fixed-step"

    def refusal(self, problem: Problem) -> str | None:
        if problem.spec.contacts:
            return UNILATERAL
        method = problem.options.method
        if method in FIXED_STEP_METHODS:
            return None
        return f"--method {method} does not take fixed steps"

    def run(self, problem: Problem, progress: Progress | None = None) -> Trajectory:
        return FIXED_STEP_METHODS[problem.options.method].run(problem, progress)
