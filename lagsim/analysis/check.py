"""``lagsim check``: what a system is, in a short report (issue 10).

:func:`check_system` is a pure function of ``(spec, model)``: coordinates; constraints by kind;
the rank of A (φ_q rows of the holonomic constraints, rows a of the velocity constraints, seed
``001_80d65b968ce3cb18.txt`` §10.7) at the consistent start
(:func:`lagsim.run.start.consistent_start`)
and the degrees of freedom n − rank; the redundant constraints with the rows they depend on; the
Frobenius test of each velocity constraint (with the holonomic ones) and of the whole set
(:mod:`lagsim.symbolic.integrability`, seed ``002_485a91571cac8ced.txt`` §23.1), and the dimension
of the configuration manifold: n − rank of the rows of the holonomic constraints and of the velocity
constraints found integrable; and the conserved quantities (:mod:`lagsim.symbolic.invariants`).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from lagsim.errors import InputError
from lagsim.records import record
from lagsim.spec.options import WORDING
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.integrability import Integrability, frobenius
from lagsim.symbolic.invariants import Invariant, find_invariants
from lagsim.symbolic.model import Model

RANK_TOL = 1e-10
"""A singular value of A below RANK_TOL × the largest (or × 1) counts as zero."""


@record
class ConstraintInfo:
    name: str
    kind: str
    rheonomic: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "rheonomic": self.rheonomic}


@record
class Redundancy:
    """A constraint whose row of A is a combination of earlier ones at the start."""

    name: str
    depends_on: tuple[tuple[str, float], ...]

    def text(self) -> str:
        terms = " + ".join(f"{c:.6g}·{n}" for n, c in self.depends_on) or "0"
        return f"{self.name} = {terms}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "depends_on": {n: c for n, c in self.depends_on}}


@record
class CheckReport:
    """The report of :func:`check_system`; ``to_text()`` for a terminal, ``to_dict()`` for JSON."""

    name: str
    coordinates: tuple[str, ...]
    constraints: tuple[ConstraintInfo, ...]
    t0: float
    q0: tuple[float, ...]
    qd0: tuple[float, ...]
    rank: int
    holonomic_rank: int
    integrable: tuple[str, ...]
    redundant: tuple[Redundancy, ...]
    integrability: tuple[Integrability, ...]
    invariants: tuple[Invariant, ...]
    notes: tuple[str, ...]

    @property
    def n(self) -> int:
        return len(self.coordinates)

    @property
    def degrees_of_freedom(self) -> int:
        """n − rank A: independent velocities at the start."""
        return self.n - self.rank

    @property
    def configuration_dimension(self) -> int:
        """n − rank of the rows of the holonomic constraints and of the velocity constraints
        found integrable (``integrable``): the dimension of the configuration manifold."""
        return self.n - self.holonomic_rank

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "coordinates": list(self.coordinates),
            "constraints": [c.to_dict() for c in self.constraints],
            "start": {"t": self.t0, "q": dict(zip(self.coordinates, self.q0)),
                      "q_dot": dict(zip(self.coordinates, self.qd0))},
            "rank": self.rank, "holonomic_rank": self.holonomic_rank,
            "integrable_velocity_constraints": list(self.integrable),
            "degrees_of_freedom": self.degrees_of_freedom,
            "configuration_dimension": self.configuration_dimension,
            "redundant": [r.to_dict() for r in self.redundant],
            "integrability": [i.to_dict() for i in self.integrability],
            "invariants": [i.to_dict() for i in self.invariants],
            "notes": [WORDING.get().say(n) for n in self.notes],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def to_text(self) -> str:
        lines = [f"system: {self.name}",
                 f"coordinates ({self.n}): {', '.join(self.coordinates)}"]
        kinds: dict[str, list[str]] = {}
        for c in self.constraints:
            kinds.setdefault(c.kind, []).append(c.name + (" (rheonomic)" * c.rheonomic))
        if kinds:
            lines.append("constraints: " + "; ".join(
                f"{len(v)} {k}: {', '.join(v)}" for k, v in kinds.items()))
        else:
            lines.append("constraints: none")
        lines.append(f"rank of A at the start (t = {self.t0:g}): {self.rank}")
        counted = (f", counting the integrable velocity constraint"
                   f"{'s' * (len(self.integrable) > 1)} {', '.join(self.integrable)} as holonomic"
                   if self.integrable else "")
        lines.append(f"degrees of freedom: {self.n} − {self.rank} = {self.degrees_of_freedom}"
                     + (f" (configuration manifold of dimension {self.configuration_dimension}"
                        f"{counted})"
                        if self.configuration_dimension != self.degrees_of_freedom
                        or self.integrable else ""))
        if self.redundant:
            lines.append("redundant constraints (rows of A at the start):")
            lines += [f"  {r.text()}" for r in self.redundant]
        elif self.constraints:
            lines.append("redundant constraints: none")
        if self.integrability:
            lines.append("integrability (Frobenius):")
            for i in self.integrability:
                lines.append(f"  {i.subject}: {i.verdict()} [{i.method}: {i.symbolic}; "
                             f"numeric curvature {i.numeric_curvature:.2g} at {i.states} "
                             "random states]")
                if i.integral:
                    lines.append(f"    integrates to the holonomic constraint {i.integral}")
                elif i.holonomic and len(i.constraints) == 1:
                    lines.append("    (no closed form of the integral found)")
                if i.note:
                    lines.append(f"    note: {i.note}")
        if self.invariants:
            lines.append("conserved quantities (value at the start):")
            for inv in self.invariants:
                noether = f"Noether, ξ = ({', '.join(inv.xi or ())})"
                label = {"energy": "energy", "cyclic": "cyclic coordinate", "noether": noether,
                         "rotation": noether}[inv.kind]
                if inv.about:
                    label += f"; the angular momentum about {inv.about}"
                lines.append(f"  {inv.name}: {inv.momentum} = {_short(inv.expression)} = "
                             f"{inv.value:.12g}  [{label}; checked {inv.verified}]")
        else:
            lines.append("conserved quantities: none found")
        lines += [f"note: {WORDING.get().say(n)}" for n in self.notes]
        return "\n".join(lines) + "\n"


TEXT_WIDTH = 160
"""Longer expressions are cut in the text report (``--format json``, the API's ``to_dict()``,
has them whole)."""


def _short(text: str) -> str:
    if len(text) <= TEXT_WIDTH:
        return text
    whole = "to_dict() has" if WORDING.get().keywords else "--format json prints"
    return f"{text[:TEXT_WIDTH]}… ({len(text)} characters; {whole} it whole)"


def _start(spec: SystemSpec, model: Model, notes: list[str]
           ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """(t₀, q₀, q̇₀, A(q₀, t₀)): the file's values when they meet the constraints, else the
    run's own consistent start (:mod:`lagsim.run.start`, which compiles the model), or the file's
    values with a note when there is none."""
    from lagsim.spec.options import BY_NAME

    setting = spec.simulate.get("t_start")
    row = BY_NAME["t_start"]
    t0 = row.default if setting is None else row.parse(setting.value, row.key, setting.location)
    q0 = np.array(spec.initial_state()[0], dtype=float)
    qd0 = np.array(spec.initial_state()[1], dtype=float)
    if not model.constraints:
        return t0, q0, qd0, np.zeros((0, model.n))
    A, residual = _rows(model, t0, q0, qd0)
    scale = 1.0 + np.abs(A).max(initial=0.0) * (1.0 + np.abs(np.concatenate([q0, qd0])).max())
    if np.all(np.isfinite(residual)) and np.abs(residual).max() <= START_TOL * scale:
        return t0, q0, qd0, A
    from lagsim.numeric.compile import compile_model
    from lagsim.run.start import consistent_start

    numeric = compile_model(model)
    given = frozenset(name for name, _ in spec.initial)
    try:
        q0, qd0 = consistent_start(numeric, t0, q0, qd0, notes.append, given=given)
    except InputError as error:
        notes.append(f"no consistent start ({error.message}); A is taken at the file's values")
    return t0, q0, qd0, _rows(model, t0, q0, qd0)[0]


START_TOL = 1e-10
"""The file's start is used as it is when every φ and a·q̇ + c is below START_TOL × its scale
(the tolerance of :mod:`lagsim.run.start`)."""


def _rows(model: Model, t0: float, q0: np.ndarray, qd0: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """A (m, n) and the residuals (φ of holonomic constraints, w = a·q̇ + c of all) at a state."""
    import symengine as se

    values = model.substitutions()
    exprs = [model.A[k, j] for k in range(model.m) for j in range(model.n)]
    exprs += [c.expression for c in model.holonomic] + [c.velocity_form for c in model.constraints]
    f = se.Lambdify([model.t, *model.q, *model.qd], [se.sympify(e).subs(values) for e in exprs],
                    backend="lambda")
    with np.errstate(all="ignore"):
        out = np.asarray(f(np.array([t0, *q0, *qd0], dtype=float)), dtype=float).ravel()
    cut = model.m * model.n
    return out[:cut].reshape(model.m, model.n), out[cut:]


def _rank(A: np.ndarray, names: tuple[str, ...]) -> tuple[int, tuple[Redundancy, ...]]:
    """Rank of A, and each row that does not raise the rank (in file order) written as a
    combination of the independent rows before it."""
    if not A.size:
        return 0, ()
    tol = RANK_TOL * max(1.0, float(np.linalg.svd(A, compute_uv=False).max()))
    kept: list[int] = []
    redundant = []
    for i in range(len(A)):
        if np.linalg.matrix_rank(A[[*kept, i]], tol=tol) > len(kept):
            kept.append(i)
            continue
        coefficients = np.linalg.lstsq(A[kept].T, A[i], rcond=None)[0] if kept else np.zeros(0)
        terms = tuple((names[k], float(c)) for k, c in zip(kept, coefficients)
                      if abs(c) > 1e-9 * max(1.0, float(np.abs(coefficients).max())))
        redundant.append(Redundancy(names[i], terms))
    return len(kept), tuple(redundant)


def check_system(spec: SystemSpec, model: Model) -> CheckReport:
    """The check report of a system (module docstring)."""
    notes: list[str] = []
    t0, q0, qd0, A = _start(spec, model, notes)
    names = tuple(c.name for c in model.constraints)
    kinds = tuple(c.kind for c in model.constraints)
    A = np.asarray(A, dtype=float).reshape(len(names), model.n)
    rank, redundant = _rank(A, names)
    infos = tuple(ConstraintInfo(c.name, c.kind, _rheonomic(model, c))
                  for c in model.constraints)
    tests: list[Integrability] = []
    velocity = model.velocity_constraints
    if velocity:
        holonomic = list(model.holonomic)
        for c in velocity:
            tests.append(frobenius(model, c.name, [*holonomic, c], q0, t0))
        if len(velocity) > 1:
            tests.append(frobenius(model, "all constraints together", list(model.constraints),
                                   q0, t0))
    integrable = _integrable(tests, tuple(c.name for c in velocity))
    rows = [i for i, (name, kind) in enumerate(zip(names, kinds))
            if kind == "holonomic" or name in integrable]
    holonomic_rank, _ = _rank(A[rows], tuple(names[i] for i in rows))
    found = find_invariants(model, q0, qd0, t0)
    notes += [_contact_note(c.name, c.gap.text, c.value, c.friction,
                            c.tangent.text if c.tangent is not None else "")
              for c in spec.contacts]
    return CheckReport(
        name=spec.name, coordinates=model.coordinates, constraints=infos, t0=t0,
        q0=tuple(map(float, q0)), qd0=tuple(map(float, qd0)), rank=rank,
        holonomic_rank=holonomic_rank, integrable=integrable, redundant=redundant,
        integrability=tuple(tests),
        invariants=found.found, notes=(*notes, *found.notes))


def _contact_note(name: str, gap: str, e: float, mu: float | None = None, tangent: str = ""
                  ) -> str:
    """What ``check`` says of a unilateral constraint (issue 27): the report above is of free
    flight, which its impacts interrupt; a rough contact's friction takes energy as well."""
    law = ("keep the energy" if e == 1.0 else
           f"keep the fraction e^2 = {e * e:g} of the kinetic energy of the motion along the gap")
    rough = ("" if mu is None else
             f"; Coulomb friction mu = {mu:g} along {tangent} takes energy too when it acts")
    return (f"unilateral constraint '{name}': {gap} >= 0, restitution e = {e:g}; the rank, the "
            "degrees of freedom and the conserved quantities above are those of free flight; "
            f"its impacts {law}, and change the momenta that free flight conserves{rough}")


def _integrable(tests: list[Integrability], velocity: tuple[str, ...]) -> tuple[str, ...]:
    """The velocity constraints that restrict the configuration, not only the velocities: each
    one whose own test (with the holonomic constraints) is holonomic, or all of them when the
    test of the whole set is. Constraints that integrate one by one integrate together (their
    leaves are the common level sets of their integrals); a set can integrate when none of its
    members does alone (a distribution of rank 1 is always involutive)."""
    if len(tests) > len(velocity) and tests[-1].holonomic:
        return velocity
    return tuple(t.subject for t in tests[:len(velocity)] if t.holonomic)


def _rheonomic(model: Model, constraint: Any) -> bool:
    from lagsim.symbolic.integrability import needs_time

    if constraint.kind == "holonomic":
        import symengine as se

        return model.t in se.sympify(constraint.expression).free_symbols
    return needs_time(model, [constraint])
