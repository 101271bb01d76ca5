"""How the inputs u of a file (``inputs:``, issue 28) enter its linearization at rest.

The inputs appear only in the generalized forces τ (the spec refuses them elsewhere), so the
input matrix of M q̈ = F(q, q̇, u) + Aᵀλ linearized at (q*, 0, u*) is ∂F/∂u = ∂τ/∂u, an n × n_u
matrix T_u; the state space's B δτ (:meth:`lagsim.analysis.linearize.Linearization.state_space`,
seed ``001_80d65b968ce3cb18.txt`` §10.7) becomes B T_u δu.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import symengine as se

from lagsim.symbolic.model import Model


def input_matrix(model: Model, inputs: Sequence[str], q: Sequence[float] | np.ndarray
                 ) -> np.ndarray:
    """T_u = ∂τ/∂u (n × len(inputs)) of ``model`` (an autonomous one: t is set to 0) at rest at
    ``q`` (q̇ = 0), the parameters and the inputs at their values."""
    values: dict[se.Basic, se.Basic] = {se.Symbol(k): se.RealDouble(v)
                                         for k, v in model.parameters.items()}
    values.update({s: se.RealDouble(float(x)) for s, x in zip(model.q, q)})
    values.update({v: se.Integer(0) for v in model.qd})
    values[model.t] = se.Integer(0)
    out = np.zeros((model.n, len(inputs)))
    for j, name in enumerate(inputs):
        symbol = se.Symbol(name)
        for i in range(model.n):
            out[i, j] = float(se.diff(se.sympify(model.tau[i]), symbol).subs(values))
    return out
