"""The engine of the fixed-step methods (issue 11): ``--method rattle`` and ``--method
variational`` run their own loop (:class:`lagsim.run.engines.rattle.FixedStepMethod`), imported
when one runs (issue 31, "Start-up": the driver asks this engine first for every run)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from lagsim.output.trajectory import Trajectory
from lagsim.run.engines.base import UNILATERAL, Engine, Progress
from lagsim.run.problem import Problem
from lagsim.run.registry import Lazy
from lagsim.spec import choices

if TYPE_CHECKING:
    from lagsim.run.engines.rattle import FixedStepMethod


def _method(name: str) -> type[FixedStepMethod]:
    from lagsim.run.engines.rattle import Rattle
    from lagsim.run.engines.variational import Variational

    method: type[FixedStepMethod] = {Rattle.name: Rattle, Variational.name: Variational}[name]
    return method


FIXED_STEP_METHODS: Mapping[str, type[FixedStepMethod]] = Lazy(choices.FIXED_STEP_METHODS,
                                                               _method)
"""The fixed-step methods by name (what each takes is declared under the same name in
:data:`lagsim.run.registry.FIXED_STEP`)."""


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
