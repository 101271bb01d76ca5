"""The result of one simulation: states, multipliers, constraint residuals and energy by sample.

The column order is the CSV layout of issue 3 (docs/architecture.md, "trajectory.py / io.py"):
``t``, each coordinate, each ``<q>_dot``, each ``lambda_<c>`` (the multipliers of
``M q̈ = F + Aᵀλ``, seed 001 §10.7), each ``residual_<c>`` (φ for a holonomic constraint, a·q̇ + c for
a velocity constraint), each ``residual_<c>_dot`` (φ̇, holonomic constraints only; seed 003's
c = 0 and ċ = 0), then ``energy`` (h = q̇·∂L/∂q̇ − L, seed 001).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Trajectory:
    """Samples of one run; arrays have one row per sample time.

    ``stop_reason`` is ``"t_end"`` when the run reached its end time and ``"stop_when"`` when the
    ``--stop-when`` expression changed sign (then the last row is that time and ``stop_message``
    says so).
    """

    name: str
    coordinates: tuple[str, ...]
    constraint_names: tuple[str, ...]
    constraint_kinds: tuple[str, ...]
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    lam: np.ndarray
    residual: np.ndarray
    residual_dot: np.ndarray
    energy: np.ndarray
    formulation: str
    stabilize: str
    stop_reason: str = "t_end"
    stop_message: str = ""

    def __post_init__(self) -> None:
        n, m, mh = len(self.coordinates), len(self.constraint_names), len(self.holonomic_names)
        rows = len(self.t)
        expected = {
            "q": (rows, n), "qd": (rows, n), "lam": (rows, m), "residual": (rows, m),
            "residual_dot": (rows, mh), "energy": (rows,),
        }
        for field_name, shape in expected.items():
            actual = np.shape(getattr(self, field_name))
            if actual != shape:
                raise ValueError(f"Trajectory.{field_name} has shape {actual}, expected {shape}")

    @property
    def holonomic_names(self) -> tuple[str, ...]:
        return tuple(c for c, k in zip(self.constraint_names, self.constraint_kinds)
                     if k == "holonomic")

    @property
    def message(self) -> str:
        """What stderr should say about how the run ended (empty when it reached t_end)."""
        return self.stop_message

    @property
    def stopped(self) -> bool:
        return self.stop_reason == "stop_when"

    def columns(self) -> list[str]:
        """The CSV header, in issue 3's order."""
        return [
            "t",
            *self.coordinates,
            *(f"{q}_dot" for q in self.coordinates),
            *(f"lambda_{c}" for c in self.constraint_names),
            *(f"residual_{c}" for c in self.constraint_names),
            *(f"residual_{c}_dot" for c in self.holonomic_names),
            "energy",
        ]

    def as_array(self) -> np.ndarray:
        """All samples as one (N, len(columns())) float array, columns as in :meth:`columns`."""
        return np.column_stack([
            self.t, self.q, self.qd, self.lam, self.residual, self.residual_dot, self.energy,
        ]).astype(float, copy=False)

    def column(self, name: str) -> np.ndarray:
        """One column by its CSV name (``theta``, ``lambda_rod``, ``energy`` ...)."""
        columns = self.columns()
        if name not in columns:
            raise KeyError(f"no column {name!r}; the columns are {', '.join(columns)}")
        return self.as_array()[:, columns.index(name)]
