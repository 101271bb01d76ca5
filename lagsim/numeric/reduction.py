"""The compiled reduced system: a :class:`~lagsim.symbolic.reduce.Reduction` (seed
``002_485a91571cac8ced.txt`` §23.5) turned into numbers, with the map back to the full state.
Compiling is numeric work, so it lives here and not beside the symbolic reduction."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import symengine as se

from lagsim.numeric.compile import NumericSystem, compile_model, lambdify
from lagsim.records import record
from lagsim.symbolic.reduce import Reduction, flat


@record
class NumericReduction:
    """The compiled reduced system (002 §23.5) and the map back to the full state.

    ``numeric`` integrates the free coordinates; ``to_full(t, qf, qfd, qfdd)`` returns the full
    q, q̇ and the multipliers λ from (A_e)ᵀλ = (M q̈ − F)_e on the constraint manifold
    (the minimum-norm solution, which stays defined where a branch such as y = −√(ℓ² − x²)
    makes A_e singular).
    """

    numeric: NumericSystem
    free_indices: tuple[int, ...]
    _full: Callable
    n_full: int
    m: int

    def to_full(self, t: float, qf: np.ndarray, qfd: np.ndarray, qfdd: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k = len(qf)
        x = np.empty(1 + 3 * k)
        x[0] = t
        x[1:k + 1] = qf
        x[k + 1:2 * k + 1] = qfd
        x[2 * k + 1:] = qfdd
        out = self._full(x)
        n, m = self.n_full, self.m
        q = out[:n]
        qd = out[n:2 * n]
        A_e = out[2 * n:2 * n + m * m].reshape(m, m)
        r = out[2 * n + m * m:]
        if not (np.all(np.isfinite(A_e)) and np.all(np.isfinite(r))):
            return q, qd, np.full(m, np.nan)
        lam = np.linalg.lstsq(A_e.T, r, rcond=None)[0] if m else np.zeros(0)
        return q, qd, lam


def compile_reduction(reduction: Reduction) -> NumericReduction:
    """Compile a :class:`~lagsim.symbolic.reduce.Reduction` with its parameter values
    substituted."""
    red = reduction.reduced
    subs = red.substitutions()
    exprs = list(reduction.full_q) + list(reduction.full_qd) + flat(reduction.A_e) + flat(
        reduction.residual_e)
    exprs = [se.sympify(e).subs(subs) if subs else se.sympify(e) for e in exprs]
    args = [red.t, *red.q, *red.qd, *red.qdd]
    full_names = reduction.full.coordinates
    return NumericReduction(
        numeric=compile_model(red),
        free_indices=tuple(full_names.index(name) for name in red.coordinates),
        _full=lambdify(args, exprs),
        n_full=reduction.full.n,
        m=reduction.full.m,
    )
