"""The table of the API's sweep (:func:`lagsim.api.sweep`, issue 30): a ``pandas.DataFrame``
whose :meth:`SweepFrame.to_xarray` gives the sweep as an array, one dimension per swept name.

Why a DataFrame subclass and not a table class of our own: the sweep returned a plain
DataFrame, and callers index it, ``drop`` columns, test ``isinstance(frame, pandas.DataFrame)``
and write it with pandas; a wrapper would have to forward all of that, or break it. The
subclass follows pandas' own recipe ("Subclassing pandas data structures", pandas user guide,
Extending pandas: ``_constructor`` and ``_metadata``) with one deliberate choice: its
``_constructor`` is the plain ``pandas.DataFrame``, so every frame derived from it (a
selection, ``copy()``, ``assign``, ``merge``) is a plain DataFrame with pandas' own
``to_xarray`` (one ``index`` dimension), because its rows are no longer known to be the
sweep's product. Only the frame the sweep returned knows its layout (:class:`Layout`,
``_metadata``, so it survives pickling); a change made to it in place that breaks the layout
(rows dropped or reordered, a swept column overwritten) makes :meth:`SweepFrame.to_xarray`
raise, never reshape wrong rows. pandas is imported by this module: it is imported only when
pandas is there (:func:`lagsim.api.sweep` checks).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas

from lagsim import naming
from lagsim.records import record
from lagsim.sweep.core import Plan

if TYPE_CHECKING:
    import xarray

LISTED = ("--grid", "--values")
"""The axes that list one name's values: each is a dimension named by its column."""
DIMENSIONS = {"--random": "draw", "--table": "row"}
"""The dimension of each other axis, numbered 0, 1, ..., with its names as coordinates along
it: the ``random`` draws are not a product of their names' values."""


@record
class Dimension:
    """One dimension of a sweep's array: its ``name``, ``size``, and the table's ``columns``
    that are coordinates along it (the column itself, for a ``grid`` or ``values`` axis)."""

    name: str
    size: int
    columns: tuple[str, ...]


@record
class Layout:
    """A sweep table's shape: its rows are the cells of an array over ``dims`` (the last varies
    fastest, as :func:`lagsim.sweep.core.plan` makes them); ``units`` are the columns' units
    from the file (:meth:`lagsim.sweep.setup.Sweep.units`), ``name`` the system's."""

    dims: tuple[Dimension, ...]
    units: tuple[tuple[str, str], ...]
    name: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(d.size for d in self.dims)


def layout(plan: Plan, header: Sequence[str], units: Mapping[str, str], name: str) -> Layout:
    """The :class:`Layout` of the table ``header`` of the runs of ``plan`` (its swept columns
    follow ``run`` in the order of ``plan.names``)."""
    column = dict(zip(plan.names, header[1:]))
    dims = []
    for axis in plan.axes:
        columns = tuple(column[n] for n in axis.names)
        dim = columns[0] if axis.option in LISTED else DIMENSIONS[axis.option]
        dims.append(Dimension(dim, axis.size, columns))
    return Layout(tuple(dims), tuple(units.items()), name)


class SweepFrame(pandas.DataFrame):
    """The sweep's table (:func:`lagsim.api.sweep`): a ``pandas.DataFrame`` in every way, one
    row per run, whose :meth:`to_xarray` gives one dimension per swept name."""

    _metadata = ["sweep_layout"]

    @property
    def _constructor(self) -> type[pandas.DataFrame]:
        return pandas.DataFrame

    def to_xarray(self) -> xarray.Dataset:
        """The sweep as an ``xarray.Dataset`` over one dimension per axis, in the order the
        axes were given (``grid``, then ``values``, then ``random``): a ``grid`` or ``values``
        name is a dimension named by its column (``l``; an initial value ``theta`` as
        ``theta0``), its coordinate the values in the order given; the ``random`` draws are one
        dimension ``draw`` (0 … runs − 1) with each drawn name as a coordinate along it (a
        sweep of ``random`` alone: ``draw`` is ``run``). Every other numeric column is a data
        variable over all the dimensions (a failed run's cells are NaN); ``run`` and ``error``
        are coordinates over all of them, so that the data variables stay numbers. A column's
        unit from the file's ``units:`` is its ``attrs["units"]``
        (:func:`lagsim.output.labelled.dataset`, as :meth:`Trajectory.to_xarray`).

        Raises ValueError when the rows are no longer the sweep's (dropped, reordered, a swept
        column changed in place): ``frame.set_index([...]).to_xarray()`` is pandas' way for a
        table of another shape. xarray is an optional dependency
        (``pip install 'lagsim[xarray]'``)."""
        from lagsim.output.labelled import dataset

        shape = self.sweep_layout.shape
        dims = tuple(d.name for d in self.sweep_layout.dims)
        self._check_rows(shape)
        coords: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
        for k, dim in enumerate(self.sweep_layout.dims):
            for column in dim.columns:
                coords[column] = ((dim.name,), self._along(column, k, shape))
            if dim.name not in dim.columns:
                coords[dim.name] = ((dim.name,), np.arange(dim.size))
        coords[naming.RUN] = (dims, self[naming.RUN].to_numpy().reshape(shape))
        if naming.ERROR in self.columns:
            coords[naming.ERROR] = (dims, self[naming.ERROR].to_numpy(dtype=str).reshape(shape))
        variables = {str(c): (dims, self[c].to_numpy().reshape(shape)) for c in self.columns
                     if c not in coords}
        return dataset("SweepFrame.to_xarray", variables, coords, dict(self.sweep_layout.units),
                       {"name": self.sweep_layout.name}, "the frame itself needs nothing more")

    def _check_rows(self, shape: tuple[int, ...]) -> None:
        """Raise ValueError unless the rows are the sweep's runs, all, in order."""
        if naming.RUN not in self.columns or len(self) != math.prod(shape) or not np.array_equal(
                self[naming.RUN].to_numpy(), np.arange(len(self))):
            raise ValueError(f"to_xarray: the frame no longer holds the sweep's {math.prod(shape)} "
                             f"runs in order in its column {naming.RUN!r} (rows dropped or "
                             "reordered in place); use frame.set_index([...]).to_xarray()")

    def _along(self, column: str, k: int, shape: tuple[int, ...]) -> np.ndarray:
        """The values of ``column`` along dimension ``k``, which must not vary along the
        others."""
        if column not in self.columns:
            raise ValueError(f"to_xarray: the swept column {column!r} was removed from the frame")
        cells = self[column].to_numpy().reshape(shape)
        along = cells[tuple(slice(None) if j == k else 0 for j in range(len(shape)))]
        line = [1] * len(shape)
        line[k] = shape[k]
        if not np.array_equal(np.broadcast_to(along.reshape(line), shape), cells):
            raise ValueError(f"to_xarray: the swept column {column!r} was changed in place; its "
                             "values no longer follow the sweep's grid")
        return along


def sweep_frame(header: Sequence[str], data: np.ndarray, errors: Sequence[str],
                shape: Layout) -> SweepFrame:
    """The :class:`SweepFrame` of a sweep's table (:meth:`lagsim.sweep.setup.Sweep.table`):
    ``run`` as integers, ``error`` as text."""
    frame = SweepFrame(data, columns=list(header[:-1]))
    frame[naming.RUN] = frame[naming.RUN].astype(int)
    frame[naming.ERROR] = list(errors)
    frame.sweep_layout = shape
    return frame
