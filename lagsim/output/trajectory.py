"""The result of one simulation: states, multipliers, constraint residuals and energy by sample.

The column order is the CSV layout of issue 3 (docs/architecture.md, "trajectory.py / io.py"):
``t``, each coordinate, each ``<q>_dot``, each ``lambda_<c>`` (the multipliers of
``M q̈ = F + Aᵀλ``, seed 001 §10.7), each ``residual_<c>`` (φ for a holonomic constraint, a·q̇ + c for
a velocity constraint), each ``residual_<c>_dot`` (φ̇, holonomic constraints only; seed 003's
c = 0 and ċ = 0), then ``energy`` (h = q̇·∂L/∂q̇ − L, seed 001).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lagsim.errors import InputError, Location

if TYPE_CHECKING:
    import pandas

COLUMNS: tuple[tuple[str, str], ...] = (
    ("t", "time"),
    ("{q}", "a coordinate"),
    ("{q}_dot", "a velocity"),
    ("lambda_{c}", "a multiplier"),
    ("residual_{c}", "a constraint residual"),
    ("residual_{h}_dot", "the rate of a holonomic constraint's residual"),
    ("energy", "the energy"),
)
"""The CSV columns in order, as templates: ``{q}`` stands for each coordinate, ``{c}`` for each
constraint and ``{h}`` for each holonomic constraint. The spec refuses a name that one of these
would produce for something else (lagsim/spec/system.py, issue 8 §4)."""

EXTRA_COLUMNS: tuple[tuple[str, str], ...] = (
    ("invariant_{i}", "a conserved quantity (simulate --invariants)"),
    ("action", "the running action (simulate --action)"),
)
"""Columns a run adds after ``energy`` only when asked (:attr:`Trajectory.extra`, in the order
they were added); ``{i}`` stands for a conserved quantity's name. Declared names may not have
these forms either."""


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
    extra: tuple[tuple[str, np.ndarray], ...] = ()

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
        return (layout(self.coordinates, self.constraint_names, self.constraint_kinds)
                + [name for name, _ in self.extra])

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

    @classmethod
    def from_columns(cls, columns: Sequence[str], data: np.ndarray, name: str = "",
                     source: str = "<input>") -> Trajectory:
        """The trajectory of a CSV with the columns of :data:`COLUMNS` (then any of
        :data:`EXTRA_COLUMNS`), as ``lagsim simulate`` writes it; the coordinates are the columns
        between ``t`` and the first ``_dot``, the constraints those of the ``lambda_`` columns,
        holonomic when a ``residual_<c>_dot`` column follows. A CSV of other columns is an
        :class:`InputError` naming the first column that differs. Formulation and stabilizer
        are not in a CSV: they read ``""``."""
        columns = list(columns)
        data = np.asarray(data, dtype=float)
        coordinates: list[str] = []
        for column in columns[1:]:
            if column.endswith("_dot") or column.startswith(("lambda_", "residual_")) \
                    or column == "energy":
                break
            coordinates.append(column)
        constraints = [c[len("lambda_"):] for c in columns if c.startswith("lambda_")]
        kinds = ["holonomic" if f"residual_{c}_dot" in columns else "velocity"
                 for c in constraints]
        n, m = len(coordinates), len(constraints)
        mh = kinds.count("holonomic")
        widths = (1, n, n, m, m, mh, 1)
        expected = layout(coordinates, constraints, kinds)
        for i, want in enumerate(expected):
            got = columns[i] if i < len(columns) else None
            if got != want:
                found = f"{got!r}" if got is not None else "the end of the header"
                raise InputError(f"not a lagsim trajectory: column {i + 1} should be {want!r} "
                                 f"(the layout is t, coordinates, <q>_dot, lambda_<c>, "
                                 f"residual_<c>, residual_<c>_dot, energy), found {found}",
                                 Location(source, 1))
        extra_names = columns[len(expected):]
        for extra in extra_names:
            if not any(extra == t or ("{" in t and extra.startswith(t.partition("{")[0]))
                       for t, _ in EXTRA_COLUMNS):
                raise InputError(f"not a lagsim trajectory: column {extra!r} after energy is "
                                 "not one of invariant_<name>, action", Location(source, 1))
        parts = np.split(data[:, :len(expected)], np.cumsum(widths)[:-1], axis=1)
        t, q, qd, lam, residual, residual_dot, energy = parts
        extra = tuple((c, data[:, len(expected) + i]) for i, c in enumerate(extra_names))
        return cls(name=name, coordinates=tuple(coordinates), constraint_names=tuple(constraints),
                   constraint_kinds=tuple(kinds), t=t[:, 0], q=q, qd=qd, lam=lam,
                   residual=residual, residual_dot=residual_dot, energy=energy[:, 0],
                   formulation="", stabilize="", extra=extra)


def layout(coordinates: Sequence[str], constraints: Sequence[str], kinds: Sequence[str]
            ) -> list[str]:
    """The CSV columns of :data:`COLUMNS` for these coordinates and constraints."""
    holonomic = [c for c, k in zip(constraints, kinds) if k == "holonomic"]
    fill = {"q": coordinates, "c": constraints, "h": holonomic}
    out: list[str] = []
    for template, _meaning in COLUMNS:
        keys = [k for k in fill if f"{{{k}}}" in template]
        out.extend([template] if not keys else
                   (template.format(**{keys[0]: x}) for x in fill[keys[0]]))
    return out

_EXACT = 2**53
"""Integers below this are exact doubles, so their quotient is correctly rounded (IEEE 754)."""
_SLOW_ROWS = 200_000
"""Up to this many rows, times whose integers pass 2**53 are divided exactly in Python (about
0.3 µs a row)."""


def _decimal(x: float) -> tuple[int, int]:
    """(m, s) with x = m / 10**s exactly for the shortest decimal that reads back as ``x``
    (``repr``), s ≥ 0."""
    sign, digits, exponent = Decimal(repr(float(x))).as_tuple()
    mantissa = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    if not isinstance(exponent, int):
        raise ValueError(f"{x!r} is not finite")
    return (mantissa * 10**exponent, 0) if exponent >= 0 else (mantissa, -exponent)


def _common(*values: float) -> tuple[list[int], int]:
    """The decimals of ``values`` as integers over one power of ten: ([m...], s)."""
    parts = [_decimal(v) for v in values]
    scale = max(s for _, s in parts)
    return [m * 10 ** (scale - s) for m, s in parts], scale


def clean_times(t0: float, t1: float, n: int) -> np.ndarray:
    """n equally spaced times from t0 to t1, both ends included: t_k = t0 + k (t1 − t0)/(n − 1)
    computed exactly from the decimals t0 and t1 as written, then rounded once, so that each t_k
    is the double nearest its decimal value (0.15 prints as 0.15, not 0.15000000000000002 as from
    ``np.linspace``). Where the integers involved pass 2**53 the quotients are Python's exact
    integer divisions (also correctly rounded), up to :data:`_SLOW_ROWS` rows; beyond that
    ``np.linspace``'s values, within an ulp of these."""
    if n < 2:
        return np.array([t0], dtype=float)
    (a, b), scale = _common(t0, t1)
    steps = n - 1
    denominator = steps * 10**scale
    if max(abs(a), abs(b)) * steps >= _EXACT or denominator >= _EXACT:
        if n > _SLOW_ROWS:
            return np.linspace(t0, t1, n)
        return np.array([(a * steps + k * (b - a)) / denominator for k in range(n)])
    k = np.arange(n, dtype=np.int64)
    numerator = a * steps + k * (b - a)
    return numerator.astype(float) / float(denominator)


def clean_steps(t0: float, dt: float, n: int) -> np.ndarray:
    """t_k = t0 + k·dt for k < n, each the double nearest its exact decimal value (as
    :func:`clean_times`, with the same limits)."""
    (a, c), scale = _common(t0, dt)
    denominator = 10**scale
    if abs(a) + abs(c) * max(n - 1, 0) >= _EXACT or denominator >= _EXACT:
        if n > _SLOW_ROWS:
            return t0 + dt * np.arange(n)
        return np.array([(a + k * c) / denominator for k in range(n)], dtype=float)
    k = np.arange(n, dtype=np.int64)
    return (a + k * c).astype(float) / float(denominator)
