"""Integrate a compiled system (issue 3; rebuilt from parts in issue 8 §3).

The public names live here for the rest of lagsim and for users; the parts live in:

* :mod:`lagsim.options`: the table of the options of a run and :class:`SimulateOptions`;
* :mod:`lagsim.formulations`: the formulations and stabilizers (each declares what it supports),
  :func:`check_combination`, the shared linear algebra and the mass-matrix checks;
* :mod:`lagsim.problem`: :class:`Problem`, what a run needs, built and checked once;
* :mod:`lagsim.driver`: :func:`simulate`, the loop over accepted steps and its small parts.

:func:`consistent_start` (the start state moved onto the constraints) is defined here.
"""

from __future__ import annotations

import numpy as np

from lagsim.compile import NumericSystem
from lagsim.driver import FailedRun, run, simulate
from lagsim.errors import InputError
from lagsim.formulations import (
    AUTO_ORDER,
    FORMULATIONS,
    METHODS,
    RCOND,
    STABILIZERS,
    Baumgarte,
    Formulation,
    Index1,
    MassWatch,
    OdeFormulation,
    Projection,
    Reduced,
    Report,
    Stabilizer,
    UdwadiaKalaba,
    _dependent_rows,
    _factor,
    _metric_step,
    _min_norm,
    _rank,
    check_combination,
    check_mass_matrix,
    choose_formulation,
    project_state,
)
from lagsim.options import OPTIONS, SimulateOptions
from lagsim.problem import Problem

__all__ = [
    "AUTO_ORDER", "FORMULATIONS", "METHODS", "OPTIONS", "RCOND", "REPORT_THRESHOLD",
    "STABILIZERS", "Baumgarte", "FailedRun", "Formulation", "Index1", "MassWatch",
    "OdeFormulation", "Problem", "Projection", "Reduced", "Stabilizer", "SimulateOptions",
    "UdwadiaKalaba", "_dependent_rows", "_factor", "_metric_step", "_min_norm", "_rank",
    "check_combination", "check_mass_matrix", "choose_formulation", "consistent_start",
    "project_state", "run", "simulate",
]

REPORT_THRESHOLD = 1e-12
"""A corrected initial value is reported (and refused under strict_initial) above this change."""


def consistent_start(numeric: NumericSystem, t: float, q: np.ndarray, qd: np.ndarray,
                     report: Report | None = None, strict: bool = False
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) moved onto φ(q, t) = 0 and A q̇ + c = 0 with the least M-norm change (issue 3).

    Gauss–Newton for the positions, then the M-orthogonal projection of q̇. Every value that
    moves by more than :data:`REPORT_THRESHOLD` is reported (``name: old -> new``); with
    ``strict`` such a move is an :class:`InputError`. When no state satisfies the constraints
    the error names the constraints left unsatisfied.
    """
    q = np.array(q, dtype=float)
    qd = np.array(qd, dtype=float)
    names = numeric.constraint_names
    if not numeric.m:
        return q, qd
    _, W = _factor(numeric.dynamics(t, q, qd)[0])
    q_new = q.copy()
    hol = numeric.holonomic
    if hol:
        for _ in range(50):
            phi, phi_q = numeric.phi(t, q_new)
            delta = _metric_step(W, phi_q, -phi)
            q_new += delta
            if np.abs(delta).max() <= 1e-15 * (1.0 + np.abs(q_new).max()):
                break
        phi, phi_q = numeric.phi(t, q_new)
        scale = 1.0 + np.abs(phi_q).max(axis=1, initial=0.0) * (1.0 + np.abs(q_new).max())
        bad = [names[hol[i]] for i in range(len(hol)) if abs(phi[i]) > 1e-10 * scale[i]]
        if bad or not np.all(np.isfinite(q_new)):
            values = ", ".join(f"{names[h]} = {p:.3g}" for h, p in zip(hol, phi))
            raise InputError(
                f"the initial positions cannot be made consistent: the holonomic constraints "
                f"{', '.join(bad) or ', '.join(names[h] for h in hol)} conflict at t = {t!r} "
                f"(closest residuals {values}); check the constraints and the initial values")
    A, c = numeric.velocity_terms(t, q_new)
    qd_new = qd + _metric_step(W, A, -(A @ qd + c))
    w = A @ qd_new + c
    scale = 1.0 + np.abs(A).max(axis=1, initial=0.0) * (1.0 + np.abs(qd_new).max())
    bad = [names[i] for i in range(numeric.m) if abs(w[i]) > 1e-10 * scale[i]]
    if bad:
        raise InputError(
            f"the initial velocities cannot be made consistent: the constraints {', '.join(bad)} "
            f"conflict at t = {t!r} (velocity residuals "
            f"{', '.join(f'{n} = {x:.3g}' for n, x in zip(names, w))})")
    labels = list(numeric.coordinates) + [f"{c}_dot" for c in numeric.coordinates]
    old = np.concatenate((q, qd))
    new = np.concatenate((q_new, qd_new))
    moved = [(labels[i], float(old[i]), float(new[i])) for i in range(len(old))
             if abs(new[i] - old[i]) > REPORT_THRESHOLD]
    if moved and strict:
        changes = "; ".join(f"{name}: {a!r} -> {b!r}" for name, a, b in moved)
        raise InputError(f"the initial state is off the constraints and --strict-initial forbids "
                         f"correcting it ({changes}); give consistent initial values")
    if report is not None:
        for name, a, b in moved:
            report(f"initial {name}: {a!r} -> {b!r} (corrected onto the constraints)")
    return q_new, qd_new
