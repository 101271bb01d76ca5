"""Hints that need the compiled model: which parameter value makes the mass matrix singular
(issue 14, "Help and messages": ``--set l=0`` on the pendulum).

The mass matrix M(q) of T = ½ q̇ᵀ M q̇ (seed 001_80d65b968ce3cb18.txt, eqs 10.12–10.14) is
checked at the start (:func:`lagsim.run.formulations.check_mass_matrix`); when it is singular and a
parameter is 0, M is evaluated again with that parameter at 1 (the same compiled code,
:meth:`lagsim.numeric.compile.NumericSystem.with_parameters`): if M is then regular, that value is
the cause, and the message says so and where it was given.
"""

from __future__ import annotations

import numpy as np

from lagsim.errors import InputError, Location
from lagsim.numeric.compile import NumericSystem
from lagsim.run.formulations import weakest_direction
from lagsim.spec.system import SystemSpec


def parameters_making_singular(numeric: NumericSystem, t: float, q: np.ndarray,
                               qd: np.ndarray) -> list[str]:
    """The parameters equal to 0 whose change to 1 alone makes M(q) regular at (t, q, q̇)."""
    out = []
    for name, value in numeric.parameters.items():
        if value != 0.0:
            continue
        M = numeric.with_parameters({name: 1.0}).dynamics(t, q, qd)[0]
        if np.all(np.isfinite(M)) and not weakest_direction(M)[2]:
            out.append(name)
    return out


def singular_cause(error: InputError, numeric: NumericSystem, spec: SystemSpec, t: float,
                   q: np.ndarray, qd: np.ndarray) -> InputError:
    """``error`` (a singular mass matrix at the start), naming the parameter value that causes
    it when there is one: located at ``--set`` when it was given there, else at the file's
    value; ``error`` itself otherwise."""
    causes = parameters_making_singular(numeric, t, q, qd)
    if not causes:
        return error
    where = {p.name: p.location for p in spec.parameters}
    name = causes[0]
    given = where.get(name)
    if given is not None and given.file == "--set":
        detail = error.message.split("): ", 1)[-1].split("; ")[0]
        return InputError(f"{name} = 0 makes the mass matrix singular at the start ({detail}); "
                          f"give {name} a non-zero value", Location("--set"))
    return InputError(f"{error.message}; the parameter {name} = 0 causes it (give it a "
                      "non-zero value)", given or error.location)
