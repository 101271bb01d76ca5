"""The result of one simulation: states, multipliers, constraint residuals and energy by sample.

The column order is the CSV layout of issue 3 (docs/architecture.md, "trajectory.py / io.py"):
``t``, each coordinate, each ``<q>_dot``, each ``lambda_<c>`` (the multipliers of
``M q̈ = F + Aᵀλ``, seed 001 §10.7), each ``residual_<c>`` (φ for a holonomic constraint, a·q̇ + c for
a velocity constraint), each ``residual_<c>_dot`` (φ̇, holonomic constraints only; seed 003's
c = 0 and ċ = 0), then ``energy`` (h = q̇·∂L/∂q̇ − L, seed 001); the names and the layout are
declared once, in :mod:`lagsim.naming`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lagsim import naming

if TYPE_CHECKING:
    import pandas

@dataclass(frozen=True)
class ImpactEvent:
    """One contact's share of one impact (issue 27), a row of ``simulate --events``
    (:func:`lagsim.naming.events`): the time, the contact, its impulse Λ, its gap's rate ġ before
    and after, the velocities q̇ before and after, and the energy h⁻ − h⁺ the whole impact took
    (shared by the contacts of a simultaneous impact), and the tangential impulse Λ_T of a rough
    contact (0 for a frictionless one)."""

    t: float
    contact: str
    impulse: float
    rate_before: float
    rate_after: float
    qd_before: tuple[float, ...]
    qd_after: tuple[float, ...]
    loss: float
    tangential: float = 0.0

    def row(self) -> tuple[float | str, ...]:
        """The row's cells in the order of :func:`lagsim.naming.events`."""
        return (self.t, self.contact, self.impulse, self.tangential, self.rate_before,
                self.rate_after, *self.qd_before, *self.qd_after, self.loss)


@dataclass(frozen=True)
class Trajectory:
    """Samples of one run; arrays have one row per sample time.

    ``stop_reason`` is ``"t_end"`` when the run reached its end time and ``"stop_when"`` when the
    ``--stop-when`` expression changed sign (then the last row is that time and ``stop_message``
    says so). ``events`` are the impacts of a run with unilateral constraints, in order.
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
    extra: tuple[tuple[str, np.ndarray], ...] = ()
    events: tuple[ImpactEvent, ...] = ()

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
        for name, values in self.extra:
            if np.shape(values) != (rows,):
                raise ValueError(f"extra column {name!r} has shape {np.shape(values)}, "
                                 f"expected {(rows,)}")

    def with_extra(self, name: str, values: np.ndarray) -> Trajectory:
        """A copy with one more column after ``energy`` (``invariant_<name>``, ``action`` ...)."""
        if name in self.columns():
            raise ValueError(f"the trajectory has a column {name!r} already")
        return replace(self, extra=(*self.extra, (name, np.asarray(values, dtype=float))))

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
        return naming.Layout(self.coordinates, self.constraint_names, self.constraint_kinds,
                             tuple(name for name, _ in self.extra)).columns()

    def as_array(self) -> np.ndarray:
        """All samples as one (N, len(columns())) float array, columns as in :meth:`columns`."""
        return np.column_stack([
            self.t, self.q, self.qd, self.lam, self.residual, self.residual_dot, self.energy,
            *(values for _, values in self.extra),
        ]).astype(float, copy=False)

    def column(self, name: str) -> np.ndarray:
        """One column by its CSV name (``theta``, ``lambda_rod``, ``energy`` ...)."""
        columns = self.columns()
        if name not in columns:
            raise KeyError(f"no column {name!r}; the columns are {', '.join(columns)}")
        return self.as_array()[:, columns.index(name)]

    def __getitem__(self, name: str) -> np.ndarray:
        """One column by its CSV name: ``traj["theta"]``, ``traj["lambda_rod"]``."""
        columns = self.columns()
        if not isinstance(name, str) or name not in columns:
            raise KeyError(f"no column {name!r}; the columns are {', '.join(columns)}")
        index = columns.index(name)
        for block in self._blocks():
            if index < block.shape[1]:
                return block[:, index]
            index -= block.shape[1]
        raise AssertionError("columns() and _blocks() disagree")

    def __len__(self) -> int:
        """The number of samples."""
        return len(self.t)

    def keys(self) -> list[str]:
        """The column names, as :meth:`columns` (so ``dict(traj)`` maps names to columns)."""
        return self.columns()

    def __repr__(self) -> str:
        span = f"t = {self.t[0]:g} … {self.t[-1]:g}" if len(self.t) else "no samples"
        return (f"<Trajectory {self.name!r}: {len(self.t)} samples, {span}; columns "
                f"{', '.join(self.columns())}>")

    def _blocks(self) -> list[np.ndarray]:
        """The arrays of :meth:`as_array`, each two-dimensional, in column order."""
        return [self.t[:, None], self.q, self.qd, self.lam, self.residual, self.residual_dot,
                self.energy[:, None], *(values[:, None] for _, values in self.extra)]

    def to_numpy(self) -> np.ndarray:
        """All samples as one (N, len(columns())) float array (:meth:`as_array`)."""
        return self.as_array()

    def to_pandas(self) -> pandas.DataFrame:
        """A ``pandas.DataFrame`` with one column per CSV column, ``t`` first.

        pandas is an optional dependency (``pip install 'lagsim[pandas]'``); without it this
        raises ImportError saying so."""
        try:
            import pandas
        except ImportError as exc:
            raise ImportError("Trajectory.to_pandas needs pandas, which is not installed: "
                              "pip install 'lagsim[pandas]' (or pip install pandas); "
                              "Trajectory.to_numpy() and traj['name'] need nothing more") from exc
        return pandas.DataFrame(self.as_array(), columns=self.columns())

    def to_csv(self, path: str | Path) -> None:
        """Write the CSV of ``lagsim simulate`` to ``path`` (``-`` is stdout), through
        :func:`lagsim.output.io.write_csv`: a file is replaced atomically."""
        from lagsim.output.io import check_output, write_csv

        write_csv(self.columns(), self.as_array(), check_output(path, option="path"))

    def event_columns(self) -> list[str]:
        """The header of the table of ``simulate --events`` (:func:`lagsim.naming.events`)."""
        return naming.events(self.coordinates)

    @classmethod
    def from_columns(cls, columns: Sequence[str], data: np.ndarray, name: str = "",
                     source: str = "<input>") -> Trajectory:
        """The trajectory of a CSV with the columns of :data:`lagsim.naming.COLUMNS` (then any
        of :data:`lagsim.naming.EXTRA_COLUMNS`), as ``lagsim simulate`` writes it, read by
        :func:`lagsim.naming.parse`; a CSV of other columns is an :class:`InputError` naming the
        first column that differs. Formulation and stabilizer are not in a CSV: they read
        ``""``."""
        found = naming.parse(list(columns), source)
        data = np.asarray(data, dtype=float)
        width = len(found.fixed())
        parts = np.split(data[:, :width], np.cumsum(found.widths)[:-1], axis=1)
        t, q, qd, lam, residual, residual_dot, energy = parts
        extra = tuple((c, data[:, width + i]) for i, c in enumerate(found.extra))
        return cls(name=name, coordinates=found.coordinates, constraint_names=found.constraints,
                   constraint_kinds=found.kinds, t=t[:, 0], q=q, qd=qd, lam=lam,
                   residual=residual, residual_dot=residual_dot, energy=energy[:, 0],
                   formulation="", stabilize="", extra=extra)
