"""The round-off floor of a run's drift columns: the size below which a constraint residual or
an energy drift is the rounding of the numbers it is computed from, not an error of the run.

A double holds a number to a relative error of at most u = ε/2 (ε = 2⁻⁵² ≈ 2.2e-16, the
spacing of doubles at 1; Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
§2.1, eq. (2.4)). A function f of stored values x_j therefore is only determined to its
condition there, Σ_j |∂f/∂x_j|·|x_j|·u (Higham §1.6 and §3.1: the first-order change of f when
each x_j moves by its own rounding). The floors below are ε times that sum (twice u, as the
result is itself rounded):

- the residual φ(q) of a holonomic constraint: ε·Σ_j |∂φ/∂q_j|·|q_j|;
- a velocity residual A(q)q̇ + c: ε·(Σ_j |A_ij q̇_j| + |c_i|), the terms of the sum;
- the energy drift h − h₀: ε·(|h| + |h₀|)/2 (each value rounded once).

A drift panel marks these (:mod:`lagsim.viz.figures`): the double pendulum in natural
coordinates keeps |φ| ≤ 2e-15, a comb of exact zeros and one-ulp values over 16 decades that is
the rounding of x² + y² − l² and nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lagsim import naming

if TYPE_CHECKING:
    from lagsim.output.io import Table
    from lagsim.symbolic.model import Model

EPSILON = float(np.finfo(float).eps)
"""ε = 2⁻⁵², the spacing of doubles at 1."""


def energy_floor(h: np.ndarray) -> np.ndarray:
    """The round-off floor of |h − h₀| at each sample of the energy ``h``:
    ε·(|h| + |h₀|)/2, halved before the sum (energies near the largest double stay finite)."""
    h = np.asarray(h, dtype=float)
    return EPSILON * (0.5 * np.abs(h) + 0.5 * abs(float(h[0])))


def residual_floors(model: Model, table: Table) -> dict[str, np.ndarray]:
    """The round-off floor of each residual column of ``table`` (a run of ``model``) at each
    sample: ``residual_<c>`` of a holonomic constraint ε·Σ_j |∂φ/∂q_j|·|q_j|, its
    ``residual_<c>_dot`` and a velocity constraint's ``residual_<c>`` ε·(Σ_j |A_ij q̇_j| + |c_i|)
    (module docstring). Columns the table lacks are left out."""
    from lagsim.numeric.compile import compile_model

    numeric = compile_model(model)
    if not numeric.m:
        return {}
    t = table.time
    q = np.column_stack([table.column(c) for c in numeric.coordinates])
    qd = np.column_stack([table.column(naming.velocity(c)) for c in numeric.coordinates])
    holonomic = numeric.holonomic
    position = np.zeros((len(t), len(holonomic)))
    velocity = np.zeros((len(t), numeric.m))
    for k in range(len(t)):
        if holonomic:
            _, jacobian = numeric.phi(float(t[k]), q[k])
            position[k] = np.abs(jacobian) @ np.abs(q[k])
        a, c = numeric.velocity_terms(float(t[k]), q[k])
        velocity[k] = np.abs(a) @ np.abs(qd[k]) + np.abs(c)
    floors: dict[str, np.ndarray] = {}
    for i, name in enumerate(numeric.constraint_names):
        if i in holonomic:
            floors[naming.residual(name)] = EPSILON * position[:, holonomic.index(i)]
            floors[naming.residual_rate(name)] = EPSILON * velocity[:, i]
        else:
            floors[naming.residual(name)] = EPSILON * velocity[:, i]
    return {name: floor for name, floor in floors.items() if table.has(name)}
