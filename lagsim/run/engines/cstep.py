"""scipy's DOP853 with each step taken in C (issue 5): the integrator's overhead, not the model.

With the right-hand side compiled (:mod:`lagsim.numeric.ccompile`), scipy's Python stepper costs
more than the evaluations it makes (about 80 % of a run of the 8-chain). :class:`CDOP853` is
``scipy.integrate.DOP853`` whose ``_step_impl`` is one C call: the same stages, error norm and
step-size control (scipy's SAFETY 0.9, factors 0.2 … 10), so the same steps and evaluations; start,
dense output (three more stages, in Python), status and attributes are scipy's own, so
:func:`lagsim.run.integrate.simulate` drives it like any ``OdeSolver``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.integrate import DOP853

from lagsim.numeric.csource import Status

Step = Callable[..., tuple[int, np.ndarray, np.ndarray, float, float, float, int]]
"""``step(t, y, f, t_bound, direction, rtol, atol, max_step, K, h_abs) -> (code, y_new, f_new,
t_new, h, h_abs, nfev)``: one DOP853 step in C (:class:`lagsim.numeric.ccompile.CDop853Step`,
or a formulation's step that calls it)."""


class CDOP853(DOP853):
    """``DOP853(fun, t0, y0, t_bound, rtol=…, atol=…)`` stepping with ``step`` (a :data:`Step`
    of the same right-hand side as ``fun``)."""

    t: float
    y: np.ndarray
    f: np.ndarray
    h_abs: float
    K_extended: np.ndarray

    def __init__(self, fun: Callable, t0: float, y0: np.ndarray, t_bound: float,
                 step: Step, **options: float | np.ndarray | None) -> None:
        super().__init__(fun, t0, y0, t_bound, **options)
        self._c_step = step
        self._atol = np.ascontiguousarray(np.broadcast_to(self.atol, (self.n,)), dtype=float)
        self._K = np.ascontiguousarray(self.K_extended)
        self.K_extended = self._K
        self.K = self._K[:self.n_stages + 1]

    def _step_impl(self) -> tuple[bool, str | None]:
        y = np.ascontiguousarray(self.y, dtype=float)
        f = np.ascontiguousarray(self.f, dtype=float)
        code, y_new, f_new, t_new, h, h_abs, nfev = self._c_step(
            self.t, y, f, self.t_bound, float(self.direction), float(self.rtol), self._atol,
            float(self.max_step), self._K, self.h_abs)
        self.nfev += nfev
        if code == Status.RUN_SMALL:
            return False, self.TOO_SMALL_STEP
        if code == Status.RUN_SINGULAR:
            raise np.linalg.LinAlgError("Singular matrix")
        self.h_previous = h
        self.y_old = y
        self.t = t_new
        self.y = y_new
        self.h_abs = h_abs
        self.f = f_new
        return True, None
