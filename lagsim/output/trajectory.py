"""The result of one simulation: states, multipliers, constraint residuals and energy by sample.

The column order is the CSV layout of issue 3 (docs/architecture.md, "trajectory.py / io.py"):
``t``, each coordinate, each ``<q>_dot``, each ``lambda_<c>`` (the multipliers of
``M q̈ = F + Aᵀλ``, seed 001 §10.7), each ``residual_<c>`` (φ for a holonomic constraint, a·q̇ + c for
a velocity constraint), each ``residual_<c>_dot`` (φ̇, holonomic constraints only; seed 003's
c = 0 and ċ = 0), then ``energy`` (h = q̇·∂L/∂q̇ − L, seed 001); the names and the layout are
declared once, in :mod:`lagsim.naming`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from lagsim import naming
from lagsim.records import record

if TYPE_CHECKING:
    import pandas
    import xarray

@record
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


@dataclass(frozen=True, eq=False)
class ImpactEvents(Sequence[ImpactEvent]):
    """The :class:`ImpactEvent` s of a run as columns, one entry per event (issue 27: a run of
    a thousand impacts keeps them as arrays, and makes an :class:`ImpactEvent` only where one
    is asked for); ``contact`` indexes ``names``, ``qd_before`` and ``qd_after`` are
    (events × coordinates). A sequence of :class:`ImpactEvent` (equal to another with the same
    events); :meth:`rows` gives the table of ``simulate --events`` from the arrays."""

    names: tuple[str, ...]
    contact: np.ndarray
    t: np.ndarray
    impulse: np.ndarray
    tangential: np.ndarray
    rate_before: np.ndarray
    rate_after: np.ndarray
    qd_before: np.ndarray
    qd_after: np.ndarray
    loss: np.ndarray

    @classmethod
    def empty(cls) -> ImpactEvents:
        """No events (a run without unilateral constraints, a CSV read back): one object, of
        arrays without elements (read only), for every trajectory."""
        return NO_EVENTS

    def __len__(self) -> int:
        return len(self.t)

    @overload
    def __getitem__(self, index: int) -> ImpactEvent: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[ImpactEvent, ...]: ...

    def __getitem__(self, index: int | slice) -> ImpactEvent | tuple[ImpactEvent, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        i = range(len(self))[index]
        return ImpactEvent(float(self.t[i]), self.names[int(self.contact[i])],
                           float(self.impulse[i]), float(self.rate_before[i]),
                           float(self.rate_after[i]), tuple(self.qd_before[i].tolist()),
                           tuple(self.qd_after[i].tolist()), float(self.loss[i]),
                           float(self.tangential[i]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def rows(self) -> list[tuple[float | str, ...]]:
        """Every event's :meth:`ImpactEvent.row`, read from the columns."""
        numbers = np.column_stack((self.t, self.impulse, self.tangential, self.rate_before,
                                   self.rate_after, self.qd_before, self.qd_after,
                                   self.loss)).tolist()
        return [(cells[0], self.names[j], *cells[1:])
                for cells, j in zip(numbers, self.contact.tolist())]


def _no_events() -> ImpactEvents:
    none = np.zeros(0)
    arrays = (np.zeros(0, dtype=int), none, np.zeros((0, 0)), np.zeros((0, 0)))
    for array in arrays:
        array.setflags(write=False)
    return ImpactEvents((), arrays[0], none, none, none, none, none, arrays[2], arrays[3], none)


NO_EVENTS = _no_events()
"""The events of a trajectory without impacts (:meth:`ImpactEvents.empty`)."""


@record
class Trajectory:
    """Samples of one run; arrays have one row per sample time.

    ``stop_reason`` is ``"t_end"`` when the run reached its end time and ``"stop_when"`` when the
    ``--stop-when`` expression changed sign (then the last row is that time and ``stop_message``
    says so). ``events`` are the impacts of a run with unilateral constraints, in order.
    ``units`` maps a column to its unit text, from the file's ``units:``
    (:func:`lagsim.output.units.unit_columns`; empty for a CSV read back).

    It behaves as a table of named columns: ``len(traj)`` samples, ``"theta" in traj``,
    ``list(traj)`` the column names, ``traj["theta"]`` a column, ``np.asarray(traj)`` the
    (samples × columns) array.
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
    events: ImpactEvents = field(default_factory=ImpactEvents.empty)
    units: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        n, m = len(self.coordinates), len(self.constraint_names)
        mh = len(self.holonomic_names) if m else 0
        rows = len(self.t)
        for field_name, values, shape in (
                ("q", self.q, (rows, n)), ("qd", self.qd, (rows, n)), ("lam", self.lam, (rows, m)),
                ("residual", self.residual, (rows, m)),
                ("residual_dot", self.residual_dot, (rows, mh)), ("energy", self.energy, (rows,))):
            actual = values.shape if type(values) is np.ndarray else np.shape(values)
            if actual != shape:
                raise ValueError(f"Trajectory.{field_name} has shape {actual}, expected {shape}")
        for name, values in self.extra:
            if np.shape(values) != (rows,):
                raise ValueError(f"extra column {name!r} has shape {np.shape(values)}, "
                                 f"expected {(rows,)}")

    def with_extra(self, name: str, values: np.ndarray) -> Trajectory:
        """A copy with one more column after ``energy`` (``invariant_<name>``, ``action`` ...)."""
        return self.with_extras(((name, values),))

    def with_extras(self, columns: Sequence[tuple[str, np.ndarray]], **changes: Any
                    ) -> Trajectory:
        """A copy with the ``columns`` (name, values) after ``energy`` in one copy (as
        :meth:`with_extra` one after the other), and the fields ``changes`` replaced."""
        taken = set(self.columns)
        for name, _ in columns:
            if name in taken:
                raise ValueError(f"the trajectory has a column {name!r} already")
            taken.add(name)
        return replace(self, extra=(*self.extra, *((name, np.asarray(values, dtype=float))
                                                   for name, values in columns)), **changes)

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

    @property
    def columns(self) -> tuple[str, ...]:
        """The CSV header, in issue 3's order."""
        return tuple(naming.Layout(self.coordinates, self.constraint_names,
                                   self.constraint_kinds,
                                   tuple(name for name, _ in self.extra)).columns())

    def as_array(self) -> np.ndarray:
        """All samples as one (N, len(columns)) float array, columns as in :attr:`columns`."""
        return np.column_stack([
            self.t, self.q, self.qd, self.lam, self.residual, self.residual_dot, self.energy,
            *(values for _, values in self.extra),
        ]).astype(float, copy=False)

    def column(self, name: str) -> np.ndarray:
        """One column by its CSV name (``theta``, ``lambda_rod``, ``energy`` ...)."""
        columns = self.columns
        if name not in columns:
            raise KeyError(f"no column {name!r}; the columns are {', '.join(columns)}")
        return self.as_array()[:, columns.index(name)]

    def __getitem__(self, name: str) -> np.ndarray:
        """One column by its CSV name: ``traj["theta"]``, ``traj["lambda_rod"]``."""
        columns = self.columns
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

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is a column: ``"theta" in traj``."""
        return name in self.columns

    def __iter__(self) -> Iterator[str]:
        """The column names, in order (as a mapping's keys)."""
        return iter(self.columns)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(traj)``: the (samples × columns) array of :meth:`as_array`."""
        array = self.as_array()
        return array if dtype is None else array.astype(dtype, copy=False)

    def keys(self) -> list[str]:
        """The column names, as :attr:`columns` (so ``dict(traj)`` maps names to columns)."""
        return list(self.columns)

    def _velocity_of(self) -> dict[str, str]:
        """Each coordinate column → its velocity column."""
        return {q: naming.velocity(q) for q in self.coordinates}

    def at(self, t: float | Sequence[float] | np.ndarray) -> dict[str, float | np.ndarray]:
        """Every column at time(s) ``t`` within the samples, interpolated from the samples (not
        the solver's dense output, which the trajectory does not keep).

        A coordinate is interpolated by the cubic Hermite polynomial through the two samples
        around ``t`` with the velocity columns as its slopes (exact for a cubic in t; error
        O(h⁴) for a smooth motion; de Boor, *A Practical Guide to Splines*, ch. IV);
        every other column (``t``, velocities, multipliers, residuals, energy, extras) linearly.
        A sample time gives that sample exactly. ``t`` outside [t₀, t_end] is a ValueError."""
        times = np.asarray(t, dtype=float)
        if len(self.t) == 0:
            raise ValueError("the trajectory has no samples")
        lo, hi = float(self.t[0]), float(self.t[-1])
        if not np.all(np.isfinite(times)) or np.any((times < lo) | (times > hi)):
            raise ValueError(f"t must lie within the samples, {lo:g} ≤ t ≤ {hi:g}; got {t!r}")
        flat = np.atleast_1d(times)
        k = np.clip(np.searchsorted(self.t, flat, side="right") - 1, 0, max(len(self.t) - 2, 0))
        if len(self.t) == 1:
            out1 = {name: np.full(flat.shape, self[name][0]) for name in self.columns}
        else:
            t0, t1 = self.t[k], self.t[k + 1]
            h = t1 - t0
            s = (flat - t0) / h
            velocity = self._velocity_of()
            out1 = {}
            for name in self.columns:
                y = self[name]
                y0, y1 = y[k], y[k + 1]
                if name in velocity:
                    v = self[velocity[name]]
                    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
                    h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
                    out1[name] = h00 * y0 + h10 * h * v[k] + h01 * y1 + h11 * h * v[k + 1]
                else:
                    out1[name] = y0 + s * (y1 - y0)
                exact = flat == t0
                out1[name] = np.where(exact, y0, np.where(flat == t1, y1, out1[name]))
        if times.ndim == 0:
            return {name: float(values[0]) for name, values in out1.items()}
        return {name: values.reshape(times.shape) for name, values in out1.items()}

    def between(self, t0: float, t1: float) -> Trajectory:
        """The samples with ``t0 ≤ t ≤ t1`` (no interpolation), as a Trajectory."""
        if not t0 <= t1:
            raise ValueError(f"between needs t0 ≤ t1, got {t0!r} and {t1!r}")
        keep = (self.t >= t0) & (self.t <= t1)
        return replace(self, t=self.t[keep], q=self.q[keep], qd=self.qd[keep],
                       lam=self.lam[keep], residual=self.residual[keep],
                       residual_dot=self.residual_dot[keep], energy=self.energy[keep],
                       extra=tuple((name, values[keep]) for name, values in self.extra))

    def _repr_html_(self) -> str:
        """Jupyter's view: the name, the span, the columns and the first rows as a table."""
        from html import escape

        head = self.as_array()[:5]
        unit = dict(self.units)
        cells = "".join(f"<th>{escape(c)}{' [' + escape(unit[c]) + ']' if c in unit else ''}"
                        "</th>" for c in self.columns)
        rows = "".join("<tr>" + "".join(f"<td>{x:.6g}</td>" for x in row) + "</tr>"
                       for row in head)
        span = (f"t = {self.t[0]:g} … {self.t[-1]:g}" if len(self.t) else "no samples")
        more = f"<p>… {len(self.t) - len(head)} more rows</p>" if len(self.t) > len(head) else ""
        return (f"<p><b>Trajectory {escape(self.name)}</b>: {len(self.t)} samples, {span}; "
                f"{len(self.columns)} columns</p><table><tr>{cells}</tr>{rows}</table>{more}")

    def __repr__(self) -> str:
        span = f"t = {self.t[0]:g} … {self.t[-1]:g}" if len(self.t) else "no samples"
        return (f"<Trajectory {self.name!r}: {len(self.t)} samples, {span}; columns "
                f"{', '.join(self.columns)}>")

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
        return pandas.DataFrame(self.as_array(), columns=list(self.columns))

    def to_xarray(self) -> xarray.Dataset:
        """An ``xarray.Dataset`` with one variable per column over the dimension ``t``; each
        variable's ``attrs["units"]`` is its unit where the file's ``units:`` gives one.

        xarray is an optional dependency (``pip install 'lagsim[xarray]'``); without it this
        raises ImportError saying so (:func:`lagsim.output.labelled.dataset`)."""
        from lagsim.output.labelled import dataset

        variables = {name: (("t",), self[name].copy()) for name in self.columns
                     if name != naming.TIME}
        return dataset("Trajectory.to_xarray", variables, {naming.TIME: (("t",), self.t.copy())},
                       dict(self.units), {"name": self.name},
                       "Trajectory.to_numpy() and traj['name'] need nothing more")

    def to_csv(self, path: str | Path) -> None:
        """Write the CSV of ``lagsim simulate`` to ``path`` (``-`` is stdout), through
        :func:`lagsim.output.io.write_csv`: a file is replaced atomically."""
        from lagsim.output.io import check_output, write_csv

        write_csv(self.columns, self.as_array(), check_output(path, option="path"))

    def event_columns(self) -> list[str]:
        """The header of the table of ``simulate --events`` (:func:`lagsim.naming.events`)."""
        return naming.events(self.coordinates)

    def event_rows(self) -> list[tuple[float | str, ...]]:
        """The rows of the table of ``simulate --events`` (:meth:`ImpactEvents.rows`)."""
        return self.events.rows()

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
