"""xarray Datasets of lagsim's tables with each variable's unit in its ``attrs`` (issue 30):
the one place that imports xarray, for :meth:`lagsim.output.trajectory.Trajectory.to_xarray`
(over ``t``) and a sweep's table (:mod:`lagsim.sweep.frame`, one dimension per swept name).

The units follow the CF conventions' ``units`` attribute (CF Conventions 1.11, §3.1 "Units"),
the attribute xarray, pint-xarray and netCDF readers look for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import xarray

Variables = Mapping[str, tuple[tuple[str, ...], np.ndarray]]
"""Name → (dimensions, values) of the variables or coordinates of :func:`dataset`."""


def dataset(user: str, variables: Variables, coords: Variables, units: Mapping[str, str],
            attrs: Mapping[str, Any], instead: str = "") -> xarray.Dataset:
    """An ``xarray.Dataset`` of ``variables`` with ``coords``; each variable or coordinate
    named in ``units`` gets ``attrs["units"]``.

    xarray is an optional dependency (``pip install 'lagsim[xarray]'``): without it this raises
    ImportError naming ``user`` (what needed it), the extra, and ``instead`` (what works without
    it)."""
    try:
        import xarray
    except ImportError as exc:
        raise ImportError(f"{user} needs xarray, which is not installed: pip install "
                          f"'lagsim[xarray]' (or pip install xarray)"
                          f"{'; ' + instead if instead else ''}") from exc

    def labelled(named: Variables) -> dict[str, tuple[tuple[str, ...], np.ndarray,
                                                        dict[str, str]]]:
        return {name: (dims, values, {"units": units[name]} if name in units else {})
                for name, (dims, values) in named.items()}

    return xarray.Dataset(labelled(variables), coords=labelled(coords), attrs=dict(attrs))
