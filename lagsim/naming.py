"""Every column and derived name of lagsim, the CSV layout of a trajectory and its one parser
(issue 23, "Names once").

The names follow docs/architecture.md ("trajectory.py / io.py", issue 3): the velocity of a
coordinate ``x`` is ``x_dot`` and its acceleration ``x_ddot``; constraint ``c`` has the multiplier
``lambda_<c>`` (of ``M q̈ = F + Aᵀλ``, seed 001 §10.7), the residual ``residual_<c>`` (φ for a
holonomic constraint, a·q̇ + b for a velocity constraint) and, when holonomic, its rate
``residual_<c>_dot`` (φ̇; seed 003's c = 0 and ċ = 0); ``energy`` is h = q̇·∂L/∂q̇ − L (seed 001).
A run adds ``invariant_<name>`` and ``action`` after ``energy`` when asked; ``lagsim plot`` adds
``work_nonconservative``; a sweep table has ``max_residual_<c>``.

Every other module builds and reads these names through this one, which imports nothing of
lagsim but :mod:`lagsim.errors`, so that the spec's check of reserved names
(:func:`column_clash`), the writers and the readers of a CSV cannot drift apart.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from lagsim.errors import InputError, Location
from lagsim.records import record

TIME = "t"
"""The time column, the first of every trajectory."""
ENERGY = "energy"
"""The column of h = q̇·∂L/∂q̇ − L (seed 001), the last of the fixed layout."""
ACTION = "action"
"""The running action column (``simulate --action``)."""
WORK = "work_nonconservative"
"""The work of the non-conservative forces, a column ``lagsim plot`` adds (issue 29)."""
ENERGY_DRIFT = "energy_drift"
"""A sweep table's max |h − h0| / |h0| of a run whose h is conserved."""
ENERGY_CHANGE = "energy_change"
"""A sweep table's max |h − h0| of a run whose h is conserved."""
ENERGY_GAIN = "energy_gain"
"""A sweep table's h(t_end) − h(0) of a run whose h is not conserved (issue 29)."""
STOP_TIME = "stop_time"
"""A sweep table's time at which a run with ``stop_when`` stopped."""
RUN = "run"
"""A sweep table's first column: the run's index, 0, 1, ... in the order of the runs."""
ERROR = "error"
"""A sweep table's last column: why the run failed, empty for a run that succeeded."""
DATA = "data"
"""A sweep of fits' column after ``run``: the index of the data file each row fitted."""
IMPACT_LOSS = "impact_energy_loss"
"""A run with unilateral constraints: the energy h⁻ − h⁺ an impact took at its row, 0 elsewhere
(issue 27)."""

EVENT_CONTACT = "contact"
"""The column of an impact's contact in the table of ``simulate --events`` (issue 27)."""
EVENT_IMPULSE = "impulse"
"""The column of the contact's impulse Λ in the table of ``simulate --events``."""
EVENT_TANGENTIAL = "tangential_impulse"
"""The column of a rough contact's tangential impulse Λ_T (Coulomb) in ``simulate --events``."""
EVENT_RATE = "gap_rate"
"""The head of the columns ``gap_rate_before`` and ``gap_rate_after`` (ġ⁻, ġ⁺) of the table of
``simulate --events``."""
EVENT_LOSS = "energy_loss"
"""The column of the energy h⁻ − h⁺ the impact took (all its contacts together) in the table
of ``simulate --events``."""
_BEFORE = "_before"
_AFTER = "_after"

_DOT = "_dot"
_DDOT = "_ddot"
_MULTIPLIER = "lambda_"
_RESIDUAL = "residual_"
_INVARIANT = "invariant_"
_MAX = "max_"
_MOMENTUM = "p_"
_IMPULSE = "impulse_"
_CONTACT_FORCE = "contact_force_"
_SENSITIVITY = ("d(", ")/d(", ")")
_EXPONENT = "lyapunov_"

_HOLONOMIC = "holonomic"
"""The kind of a constraint φ(q, t) = 0, the only kind with a ``residual_<c>_dot`` column."""


def velocity(name: str) -> str:
    """The velocity of ``name``: ``theta`` → ``theta_dot`` (also the rate of a residual)."""
    return name + _DOT


def acceleration(name: str) -> str:
    """The acceleration of coordinate ``name``: ``theta`` → ``theta_ddot``."""
    return name + _DDOT


def velocities(coordinates: Iterable[str]) -> tuple[str, ...]:
    """The velocity of each coordinate, in order."""
    return tuple(map(velocity, coordinates))


def state(coordinates: Iterable[str]) -> tuple[str, ...]:
    """The coordinates, then their velocities: the names of a state (q, q̇)."""
    names = tuple(coordinates)
    return (*names, *velocities(names))


def momentum(name: str) -> str:
    """The momentum p = ∂L/∂q̇ of coordinate ``name`` (seed 001): ``theta`` → ``p_theta``, the
    name of a cyclic coordinate's invariant."""
    return _MOMENTUM + name


def multiplier(constraint: str) -> str:
    """The multiplier column of a constraint: ``rod`` → ``lambda_rod``."""
    return _MULTIPLIER + constraint


def impulse(contact: str) -> str:
    """The column of a unilateral constraint's impulse Λ at an impact's row (0 elsewhere):
    ``floor`` → ``impulse_floor`` (issue 27)."""
    return _IMPULSE + contact


def is_impulse(name: str) -> bool:
    """Whether ``name`` has the form ``impulse_<c>`` of a contact's impulse column."""
    return name.startswith(_IMPULSE) and len(name) > len(_IMPULSE)


def contact_force(contact: str) -> str:
    """The column of a unilateral constraint's force while it is held closed (0 while open):
    ``floor`` → ``contact_force_floor`` (issue 27)."""
    return _CONTACT_FORCE + contact


def events(coordinates: Sequence[str]) -> list[str]:
    """The header of ``simulate --events``: one row per contact that took an impulse at an
    impact: t, contact, impulse, tangential_impulse, gap_rate_before, gap_rate_after, each
    ``<q>_dot_before``, each ``<q>_dot_after``, energy_loss (issue 27)."""
    dots = velocities(coordinates)
    return [TIME, EVENT_CONTACT, EVENT_IMPULSE, EVENT_TANGENTIAL, EVENT_RATE + _BEFORE,
            EVENT_RATE + _AFTER,
            *(v + _BEFORE for v in dots), *(v + _AFTER for v in dots), EVENT_LOSS]


def residual(constraint: str) -> str:
    """The residual column of a constraint: ``rod`` → ``residual_rod``."""
    return _RESIDUAL + constraint


def residual_rate(constraint: str) -> str:
    """The column of φ̇ of a holonomic constraint: ``rod`` → ``residual_rod_dot``."""
    return velocity(residual(constraint))


def max_residual(constraint: str) -> str:
    """The sweep table's column of the largest |residual| of a run: ``max_residual_rod``."""
    return _MAX + residual(constraint)


def invariant(name: str) -> str:
    """The column of a conserved quantity: ``p_x`` → ``invariant_p_x``."""
    return _INVARIANT + name


def exponent(k: int) -> str:
    """The column of the running estimate of the k-th Lyapunov exponent (``lagsim lyapunov
    --trace``, issue 28), counted from 1: ``lyapunov_1``. Not ``lambda_1``, which names a
    multiplier."""
    return f"{_EXPONENT}{k}"


def exponent_of(name: str) -> int | None:
    """k of a ``lyapunov_<k>`` column (:func:`exponent`), or None for another column."""
    tail = name[len(_EXPONENT):]
    return int(tail) if name.startswith(_EXPONENT) and tail.isdigit() else None


def sensitivity(column: str, name: str) -> str:
    """The column of ∂(column)/∂(name), ``name`` a parameter or an initial value (``simulate
    --sensitivities``, issue 26): ``theta``, ``l`` → ``d(theta)/d(l)``."""
    head, middle, tail = _SENSITIVITY
    return f"{head}{column}{middle}{name}{tail}"


def sensitivity_of(name: str) -> tuple[str, str] | None:
    """``(column, name)`` of a sensitivity column ``d(<column>)/d(<name>)``, or None."""
    head, middle, tail = _SENSITIVITY
    if not (name.startswith(head) and name.endswith(tail) and middle in name):
        return None
    column, _, wrt = name[len(head):-len(tail)].rpartition(middle)
    return (column, wrt) if column and wrt else None


def rate_of(name: str) -> str | None:
    """The name whose rate ``name`` is (``x_dot`` → ``x``, ``residual_rod_dot`` →
    ``residual_rod``), or None when ``name`` is no rate (``x``, ``x_ddot``, ``_dot``)."""
    if name.endswith(_DOT) and len(name) > len(_DOT):
        return name[: -len(_DOT)]
    return None


def is_velocity(name: str) -> bool:
    """Whether ``name`` has the form of a velocity, ``<name>_dot`` (a CSV reader's test)."""
    return name.endswith(_DOT)


def is_acceleration(name: str) -> bool:
    """Whether ``name`` has the form of an acceleration, ``<name>_ddot``."""
    return name.endswith(_DDOT)


def is_multiplier(name: str) -> bool:
    """Whether ``name`` has the form ``lambda_<c>`` of a multiplier column."""
    return name.startswith(_MULTIPLIER)


def is_residual(name: str) -> bool:
    """Whether ``name`` has the form ``residual_<c>`` (or its rate ``residual_<c>_dot``)."""
    return name.startswith(_RESIDUAL)


def is_max_residual(name: str) -> bool:
    """Whether ``name`` has the form ``max_residual_<c>`` of a sweep table."""
    return name.startswith(_MAX + _RESIDUAL)


def invariant_of(name: str) -> str | None:
    """The conserved quantity of an ``invariant_<name>`` column, or None for another column."""
    return name[len(_INVARIANT):] if name.startswith(_INVARIANT) else None


def is_derived(name: str) -> bool:
    """Whether a column has the form of a velocity, multiplier, residual or the energy, which
    end the coordinates in a header."""
    return is_velocity(name) or is_multiplier(name) or is_residual(name) or name == ENERGY


def dots(name: str) -> tuple[str, int]:
    """``(base, dots)`` for showing a name: ``theta_ddot`` → ``("theta", 2)``, ``theta_dot`` →
    ``("theta", 1)``, ``x`` → ``("x", 0)``."""
    for suffix, count in ((_DDOT, 2), (_DOT, 1)):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], count
    return name, 0


COLUMNS: tuple[tuple[str, str], ...] = (
    (TIME, "time"),
    ("{q}", "a coordinate"),
    ("{q}" + _DOT, "a velocity"),
    (_MULTIPLIER + "{c}", "a multiplier"),
    (_RESIDUAL + "{c}", "a constraint residual"),
    (_RESIDUAL + "{h}" + _DOT, "the rate of a holonomic constraint's residual"),
    (ENERGY, "the energy"),
)
"""The CSV columns in order, as templates: ``{q}`` stands for each coordinate, ``{c}`` for each
constraint and ``{h}`` for each holonomic constraint. The spec refuses a name that one of these
would produce for something else (:func:`column_clash`, issue 8 §4)."""

EXTRA_COLUMNS: tuple[tuple[str, str], ...] = (
    (_INVARIANT + "{i}", "a conserved quantity (simulate --invariants)"),
    (ACTION, "the running action (simulate --action)"),
    (_SENSITIVITY[0] + "{y}" + _SENSITIVITY[1] + "{s}" + _SENSITIVITY[2],
     "a sensitivity (simulate --sensitivities)"),
    (_IMPULSE + "{c}", "a contact's impulse (a unilateral constraint's)"),
    (_CONTACT_FORCE + "{c}", "a contact's force (a unilateral constraint's)"),
    (IMPACT_LOSS, "the energy an impact took"),
)
"""Columns a run adds after ``energy`` when asked, or (``{c}`` a unilateral constraint) when the
system has contacts, in the order they were added; ``{i}`` stands for a conserved quantity's
name, ``{y}`` for a coordinate, velocity or multiplier column and ``{s}`` for a parameter or
initial value (:func:`sensitivity`). Declared names may not have these forms either."""


def _fills(coordinates: Sequence[str], constraints: Sequence[str], kinds: Sequence[str]
           ) -> list[tuple[str, Sequence[str] | None]]:
    """Each template of :data:`COLUMNS` with the names it is written for (None: once, as is)."""
    holonomic = [c for c, k in zip(constraints, kinds) if k == _HOLONOMIC]
    fill = {"q": coordinates, "c": constraints, "h": holonomic}
    out: list[tuple[str, Sequence[str] | None]] = []
    for template, _meaning in COLUMNS:
        keys = [k for k in fill if f"{{{k}}}" in template]
        out.append((template, fill[keys[0]] if keys else None))
    return out


def layout(coordinates: Sequence[str], constraints: Sequence[str], kinds: Sequence[str]
           ) -> list[str]:
    """The CSV columns of :data:`COLUMNS` for these coordinates and constraints (``kinds`` are
    ``"holonomic"`` or ``"velocity"``, one a constraint)."""
    return list(_layout(tuple(coordinates), tuple(constraints), tuple(kinds)))


@functools.lru_cache(maxsize=64)
def _layout(coordinates: tuple[str, ...], constraints: tuple[str, ...], kinds: tuple[str, ...]
            ) -> tuple[str, ...]:
    """:func:`layout`, made once in a process for each system (every run asks for it)."""
    out: list[str] = []
    for template, names in _fills(coordinates, constraints, kinds):
        out.extend([template] if names is None else (_format(template, x) for x in names))
    return tuple(out)


def _format(template: str, name: str) -> str:
    head, _, rest = template.partition("{")
    return head + name + rest.partition("}")[2]


@record
class Layout:
    """The columns of one trajectory: the fixed layout of :data:`COLUMNS` for its coordinates
    and constraints, then the ``extra`` columns of :data:`EXTRA_COLUMNS` by name."""

    coordinates: tuple[str, ...]
    constraints: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()

    def fixed(self) -> list[str]:
        """The columns of :data:`COLUMNS`, without the extra ones."""
        return layout(self.coordinates, self.constraints, self.kinds)

    def columns(self) -> list[str]:
        """The CSV header."""
        return [*self.fixed(), *self.extra]

    @property
    def widths(self) -> tuple[int, ...]:
        """How many columns each template of :data:`COLUMNS` gives, in order."""
        return tuple(1 if names is None else len(names)
                     for _, names in _fills(self.coordinates, self.constraints, self.kinds))


def _header_coordinates(columns: Sequence[str]) -> tuple[str, ...]:
    """The coordinates a header names: the columns after ``t`` up to the first velocity,
    multiplier, residual or energy column (from the first column when there is no ``t``)."""
    start = list(columns).index(TIME) + 1 if TIME in columns else 0
    names: list[str] = []
    for name in columns[start:]:
        if is_derived(name):
            break
        names.append(name)
    return tuple(names)


def read(columns: Sequence[str]) -> Layout:
    """The layout a header declares, read without checking it (:func:`parse` checks): the
    coordinates (the columns after ``t`` up to the first derived one), the constraints of the
    ``lambda_<c>`` columns, each holonomic when a ``residual_<c>_dot`` column is present, and as
    extra columns whatever follows the fixed layout."""
    present = set(columns)
    constraints = tuple(c[len(_MULTIPLIER):] for c in columns if is_multiplier(c))
    kinds = tuple(_HOLONOMIC if residual_rate(c) in present else "velocity" for c in constraints)
    coordinates = _header_coordinates(columns)
    fixed = layout(coordinates, constraints, kinds)
    return Layout(coordinates, constraints, kinds, tuple(columns[len(fixed):]))


def _extra_forms() -> str:
    """The forms of :data:`EXTRA_COLUMNS` as a reader sees them: ``invariant_<name>, action,
    ...``."""
    shown = {"{i}": "<name>", "{y}": "<column>", "{s}": "<name>", "{c}": "<c>"}
    forms = []
    for template, _ in EXTRA_COLUMNS:
        for key, text in shown.items():
            template = template.replace(key, text)
        forms.append(template)
    return ", ".join(forms)


def is_extra(name: str) -> bool:
    """Whether ``name`` has the form of a column of :data:`EXTRA_COLUMNS`."""
    return any(name == t or ("{" in t and name.startswith(t.partition("{")[0]))
               for t, _ in EXTRA_COLUMNS)


def parse(columns: Sequence[str], source: str = "<input>") -> Layout:
    """The layout of the header of a CSV of ``lagsim simulate`` (:func:`read`), checked: a
    header of other columns is an :class:`InputError` at line 1 of ``source`` naming the first
    column that differs, or the first extra column that is not one of :data:`EXTRA_COLUMNS`."""
    found = read(columns)
    for i, want in enumerate(found.fixed()):
        got = columns[i] if i < len(columns) else None
        if got != want:
            shown = f"{got!r}" if got is not None else "the end of the header"
            raise InputError(f"not a lagsim trajectory: column {i + 1} should be {want!r} "
                             "(the layout is t, coordinates, <q>_dot, lambda_<c>, "
                             f"residual_<c>, residual_<c>_dot, energy), found {shown}",
                             Location(source, 1))
    for extra in found.extra:
        if not is_extra(extra):
            raise InputError(f"not a lagsim trajectory: column {extra!r} after energy is "
                             f"not one of {_extra_forms()}", Location(source, 1))
    return found


def _column_forms() -> tuple[tuple[str, str | None, str, str], ...]:
    """(head, tail, label, meaning) of each column of :data:`COLUMNS` and
    :data:`EXTRA_COLUMNS` other than the declared name itself: ``tail`` is None for a fixed
    column (``energy``), else the column is ``head + <name> + tail``."""
    out = []
    placeholders = {"q": "<coordinate>", "i": "<name>", "y": "<column>", "s": "<name>"}
    for template, meaning in COLUMNS + EXTRA_COLUMNS:
        head, brace, rest = template.partition("{")
        tail = rest.partition("}")[2] if brace else None
        if head or tail:
            label = "".join(placeholders.get(part, "<constraint>") if i % 2 else part
                            for i, part in enumerate(template.replace("}", "{").split("{")))
            out.append((head, tail, label, meaning))
    return tuple(out)


COLUMN_FORMS = _column_forms()
"""The forms of the CSV columns that no declared name may have (issue 8 §4)."""


def column_clash(name: str) -> str | None:
    """Why a declared ``name`` would be misread as a CSV column, with a rename that avoids it;
    or None."""
    for head, tail, label, meaning in COLUMN_FORMS:
        if tail is None:
            clash, better, form = name == head, f"{name}1", "is"
        else:
            form = f"has the form {label} of"
            clash = (name.startswith(head) and name.endswith(tail)
                     and len(name) > len(head) + len(tail))
            better = (head.rstrip("_") + name[len(head):] if head
                      else name[: -len(tail)] + tail.lstrip("_"))
        if clash:
            return (f"{form} the CSV column of {meaning}, so the output would be misread; "
                    f"rename it (e.g. '{better}')")
    return None
