"""Conserved quantities of a model: the energy, cyclic momenta and Noether momenta p·ξ.

Three sources (seed ``001_80d65b968ce3cb18.txt`` §10.5–10.7 for the equations
d/dt ∂L/∂q̇ − ∂L/∂q = τ + Aᵀλ they rest on):

* **energy** h = q̇·∂L/∂q̇ − L when ∂L/∂t = 0, the forces do no work (τ = 0, or τ·q̇ ≡ 0 as for a
  magnetic force) and every constraint is scleronomic (no t, and no offset c in a velocity
  constraint, so that the constraint forces do no work: λ·A q̇ = −λ·c = 0), since
  dh/dt = τ·q̇ + λ·A q̇ − ∂L/∂t;
* **cyclic coordinates**: ∂L/∂q_j = 0, τ_j = 0 and column j of A zero: p_j = ∂L/∂q̇_j is constant
  (d/dt p_j = ∂L/∂q_j + τ_j + (Aᵀλ)_j = 0);
* **Noether's theorem**: for ξ(q) = c + B q (constant c and B: translations, rotations and their
  combinations), d/dt (p·ξ) = δL + τ·ξ + λ·Aξ with δL = ∂L/∂q·ξ + ∂L/∂q̇·(B q̇). Where δL, τ·ξ and
  Aξ vanish identically, p·ξ is conserved (Arnold, *Mathematical Methods of Classical Mechanics*,
  §20; Goldstein, *Classical Mechanics*, §13.7). The three conditions are linear in the n + n²
  unknown coefficients of ξ: their coefficient expressions are built symbolically and evaluated
  at random states, the null space of that matrix (SVD) is the space of symmetries, a reduced
  echelon basis of it modulo the cyclic directions is rounded to small rationals, and each ξ
  found is checked again, symbolically (symengine's expansion to 0) or, failing that, at fresh
  random states to 1e-9.
* **rotations of a system with 3-D bodies**: the change δq of the coordinates under a rotation
  of everything about a space axis k (:func:`lagsim.symbolic.model.space_rotations`: ½ (0, e_k) ⊗
  e on a quaternion, the first angle of an Euler sequence about k, e_k × r on Cartesian
  positions), checked to turn every mass's position as e_k × r and then as a Noether ξ above:
  p·δq is the angular momentum about k (Marsden & Ratiu, *Introduction to Mechanics and
  Symmetry*, ch. 11 on momentum maps; for the free rigid body the spatial angular momentum
  R I ω_b, Landau & Lifshitz, *Mechanics*, §36). One that is the momentum of a cyclic
  coordinate (the top's φ) is that coordinate's, marked as the angular momentum about k, not
  reported twice; the affine symmetry search leaves the directions found so out.

Parameters are taken at their values (``--set``): a symmetry may hold only for some values.
The search is symbolic (it reads the model only), so it sits with the model: the run layer
adds the ``invariant_<name>`` columns of ``--invariants`` from it (:mod:`lagsim.run.columns`),
and ``lagsim check`` reports it (:mod:`lagsim.analysis.check`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any, cast

import numpy as np
import symengine as se

from lagsim import naming
from lagsim.records import record
from lagsim.spec.expressions import diff
from lagsim.symbolic.expansion import bounded_expand, expanded
from lagsim.symbolic.model import Model
from lagsim.symbolic.rotations import cross_axis
from lagsim.symbolic.vanishing import exact_values, magnitude

SEED = 7
NULL_TOL = 1e-9
"""Singular values below NULL_TOL × the largest count as zero in the symmetry solve."""
CHECK_TOL = 1e-9
"""A candidate's conditions must vanish to CHECK_TOL × their scale at fresh random states."""


@record
class Invariant:
    """One conserved quantity: ``expression`` in q, q̇, t (parameters by name); ``momentum`` the
    same written with p (``x*p_y - y*p_x``); ``xi`` the generator of a Noether symmetry;
    ``value`` at the start; ``verified`` how the conditions were checked."""

    name: str
    kind: str
    expression: str
    momentum: str
    xi: tuple[str, ...] | None
    value: float
    verified: str
    symbolic: se.Basic
    about: str = ""
    """The space axis (x, y or z) whose angular momentum this is, or ""."""

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "kind": self.kind, "expression": self.expression,
               "momentum": self.momentum, "xi": list(self.xi) if self.xi else None,
               "value": self.value if np.isfinite(self.value) else None,
               "verified": self.verified}
        if self.about:
            out["angular_momentum_about"] = self.about
        return out


@record
class Invariants:
    """The conserved quantities found, and why the energy is not among them when it is not."""

    found: tuple[Invariant, ...]
    notes: tuple[str, ...]


def _zero(expr: se.Basic) -> bool:
    """Whether an expression expands to 0 (a float 0.0 from a parameter's value counts); False
    when it is too large to multiply out (:func:`lagsim.symbolic.expansion.bounded_expand`):
    nothing is then claimed conserved on its account."""
    e = bounded_expand(expr)
    return e is not None and (e == 0 or (e.is_Number and float(e) == 0.0))


def energy_conserved(model: Model, values: dict[se.Symbol, float]) -> str | None:
    """None when h is conserved, else why not."""
    if not _zero(diff(model.lagrangian.subs(values), model.t)):
        return "L depends on t explicitly"
    forced = [q for q, tau in zip(model.coordinates, model.tau) if not _zero(tau.subs(values))]
    power = sum((tau.subs(values) * v for tau, v in zip(model.tau, model.qd)), se.Integer(0))
    if forced and not _zero(power):
        return f"forces act on {', '.join(forced)}"
    for c in model.constraints:
        if model.t in se.sympify(c.expression.subs(values)).free_symbols:
            return f"constraint {c.name} depends on t"
        if c.kind == "velocity" and not _zero(c.offset.subs(values)):
            return f"velocity constraint {c.name} has a term without velocities"
    return None


def readable(expr: se.Basic) -> str:
    """The expression expanded, with sin² + cos² = 1 applied where it shortens it, for printing
    (symengine only: ``check`` stays fast without SymPy)."""
    e = bounded_expand(expr)
    if e is None:
        return str(expr)
    for c in sorted({a for a in e.atoms(se.cos)}, key=str):
        (arg,) = c.args
        trial = bounded_expand(e.subs({c**2: 1 - se.sin(arg)**2}))
        if trial is not None and _terms(trial) < _terms(e):
            e = trial
    return str(e)


def _terms(expr: se.Basic) -> int:
    return len(expr.args) if isinstance(expr, se.Add) else 1


def _random_states(model: Model, q0: np.ndarray, qd0: np.ndarray, t0: float, count: int,
                   rng: np.random.Generator) -> np.ndarray:
    n = model.n
    q = q0 + 0.5 * (1 + np.abs(q0)) * rng.uniform(-1, 1, (count, n))
    qd = qd0 + (1 + np.abs(qd0)) * rng.uniform(-1, 1, (count, n))
    t = t0 + rng.uniform(0, 1, (count, 1))
    return np.hstack([q, qd, t])


def _conditions(model: Model, values: dict[se.Symbol, float]) -> list[list[se.Basic]]:
    """Per condition (δL, τ·ξ, each row of Aξ): the coefficient of each unknown, unknowns
    ordered B_00, B_01, …, B_nn, then c_0 … c_n."""
    n = model.n
    L = model.lagrangian.subs(values)
    dLdq = [diff(L, q) for q in model.q]
    p = [diff(L, v) for v in model.qd]
    tau = [e.subs(values) for e in model.tau]
    rows = [
        [dLdq[i] * model.q[j] + p[i] * model.qd[j] for i in range(n) for j in range(n)] + dLdq,
        [tau[i] * model.q[j] for i in range(n) for j in range(n)] + tau,
    ]
    for k in range(model.m):
        a = [model.A[k, i].subs(values) for i in range(n)]
        rows.append([a[i] * model.q[j] for i in range(n) for j in range(n)] + a)
    return rows


def evaluate_states(model: Model, exprs: Sequence[se.Basic], states: np.ndarray) -> np.ndarray:
    """``exprs`` in (q, q̇, t) at each row (q, q̇, t) of ``states``: an array (rows, len(exprs)),
    NaN where an expression is undefined."""
    f = se.Lambdify([*model.q, *model.qd, model.t], list(exprs), backend="lambda")
    with np.errstate(all="ignore"):
        return np.asarray(f(states), dtype=float).reshape(len(states), len(exprs))


def _nice(x: float) -> Fraction | float:
    f = Fraction(x).limit_denominator(1000)
    return f if abs(float(f) - x) < 1e-7 * max(1.0, abs(x)) else x


def _echelon(vectors: np.ndarray) -> np.ndarray:
    """Reduced row echelon form of the rows of ``vectors`` (partial pivoting)."""
    R = vectors.copy()
    rows, cols = R.shape
    r = 0
    for c in range(cols):
        if r == rows:
            break
        p = r + int(np.argmax(np.abs(R[r:, c])))
        if abs(R[p, c]) < 1e-8:
            continue
        R[[r, p]] = R[[p, r]]
        R[r] /= R[r, c]
        for i in range(rows):
            if i != r:
                R[i] -= R[i, c] * R[r]
        r += 1
    return R[:r]


MAX_ROTATION_N = 20
"""Past this many coordinates only translations ξ = c are searched (n + n² unknowns would make the
solve slow); a note says so."""


def _symmetries(model: Model, values: dict[se.Symbol, float], cyclic: list[int],
                q0: np.ndarray, qd0: np.ndarray, t0: float,
                known: Sequence[np.ndarray] = ()) -> list[np.ndarray]:
    """Coefficient vectors (B row-major, then c) of the Noether symmetries beyond the cyclic
    translations and the ``known`` ones (coefficient vectors of symmetries found otherwise)."""
    n = model.n
    linear = n <= MAX_ROTATION_N
    unknowns = n * n + n if linear else n
    conditions = _conditions(model, values)
    if not linear:
        conditions = [row[n * n:] for row in conditions]
    rng = np.random.default_rng(SEED)
    blocks = []
    states = _random_states(model, q0, qd0, t0, unknowns + 16, rng)
    for coefficients in conditions:
        block = evaluate_states(model, coefficients, states)
        blocks.append(block[np.all(np.isfinite(block), axis=1)])
    matrix = np.vstack(blocks)
    scale = np.abs(matrix).max(axis=1, keepdims=True)
    matrix = matrix[scale[:, 0] > 0] / scale[scale[:, 0] > 0]
    if len(matrix) < unknowns:
        return []
    if len(matrix) > 2 * unknowns:
        matrix = cast(np.ndarray, np.linalg.qr(matrix, mode="r"))
    _, s, Vt = np.linalg.svd(matrix, full_matrices=False)
    null = Vt[np.sum(s > NULL_TOL * s[0]):]
    if not len(null):
        return []
    if not linear:
        null = np.hstack([np.zeros((len(null), n * n)), null])
    for j in cyclic:
        null[:, n * n + j] = 0.0
    if known:
        units = [np.eye(n * n + n)[n * n + j] for j in cyclic]
        basis, _ = np.linalg.qr(np.array([*units, *known]).T)
        null = null - (null @ basis) @ basis.T
        if np.abs(null).max() < 1e-8:
            return []
    if not np.any(null):
        return []
    _, s2, V2 = np.linalg.svd(null, full_matrices=False)
    basis = V2[: int(np.sum(s2 > 1e-8 * s2[0]))]
    return list(_echelon(basis))


def _xi(model: Model, coefficients: Sequence[float | Fraction]) -> list[se.Basic]:
    n = model.n
    out = []
    for i in range(n):
        constant = coefficients[n * n + i]
        expr = se.Rational(constant.numerator, constant.denominator) \
            if isinstance(constant, Fraction) else se.Float(constant)
        for j in range(n):
            value = coefficients[i * n + j]
            if value:
                number = se.Rational(value.numerator, value.denominator) \
                    if isinstance(value, Fraction) else se.Float(value)
                expr += number * model.q[j]
        out.append(expr)
    return out


def _verify(model: Model, values: dict[se.Symbol, float], xi: list[se.Basic],
            q0: np.ndarray, qd0: np.ndarray, t0: float) -> str | None:
    """"symbolic" or "numeric" when δL, τ·ξ and Aξ vanish for this ξ, None when they do not.

    Symbolic: they expand to 0 with the parameters at their exact decimal values
    (:func:`lagsim.symbolic.vanishing.exact_values`); numeric: at fresh random states each is within
    CHECK_TOL of its rounding scale (:func:`lagsim.symbolic.vanishing.magnitude`, taken with the
    parameters as symbols, before their numbers fold into one float)."""
    n = model.n
    L = model.lagrangian
    Bqd = [sum((diff(xi[i], model.q[j]) * model.qd[j] for j in range(n)), se.Integer(0))
           for i in range(n)]
    delta = sum((diff(L, model.q[i]) * xi[i] + diff(L, model.qd[i]) * Bqd[i]
                 for i in range(n)), se.Integer(0))
    exprs = [delta, sum((model.tau[i] * xi[i] for i in range(n)), se.Integer(0))]
    exprs += [sum((model.A[k, i] * xi[i] for i in range(n)), se.Integer(0))
              for k in range(model.m)]
    exact = exact_values(values)
    if all(_zero(se.sympify(e).subs(exact)) for e in exprs):
        return "symbolic"
    states = _random_states(model, q0, qd0, t0, 24, np.random.default_rng(SEED + 1))
    sizes = [magnitude(e) for e in exprs]
    got = np.abs(evaluate_states(model, [se.sympify(e).subs(values) for e in exprs + sizes],
                                 states))
    vals, scale = got[:, :len(exprs)], got[:, len(exprs):]
    ok = np.all(np.isfinite(got), axis=1)
    if ok.sum() < 8 or np.any(vals[ok] > CHECK_TOL * np.maximum(scale[ok], 1e-300)):
        return None
    return "numeric"


def _affine(model: Model, xi: Sequence[se.Basic]) -> np.ndarray | None:
    """The coefficient vector (B row-major, then c) of ξ = c + B q, None when ξ is not affine
    with numeric coefficients."""
    n = model.n
    zero = {q: 0 for q in model.q}
    out = []
    for i in range(n):
        for j in range(n):
            out.append(se.sympify(diff(xi[i], model.q[j])))
    out += [se.sympify(x).subs(zero) for x in xi]
    if not all(x.is_Number for x in out):
        return None
    return np.array([float(x) for x in out])


AXES = "xyz"


def _turns_positions(model: Model, xi: Sequence[se.Basic], axis: int) -> bool:
    """Whether every mass's position r changes by e_k × r along ξ (expanded to 0)."""
    for _, r in model.mass_positions:
        if len(r) != 3:
            return False
        along = [se.Add(*(diff(ri, q) * x for q, x in zip(model.q, xi))) for ri in r]
        if not all(_zero(a - b) for a, b in zip(along, cross_axis(axis, r))):
            return False
    return True


def _rotations(model: Model, values: dict[se.Symbol, float], found: list[Invariant],
               cyclic: list[int], p_names: list[se.Symbol], q0: np.ndarray, qd0: np.ndarray,
               t0: float, value: Callable[[se.Basic], float]) -> list[np.ndarray]:
    """Add to ``found`` the angular momentum about each space axis whose rotation
    (``model.rotations``) is a symmetry, or mark the cyclic momentum it equals; return the
    coefficient vectors of the affine ones, for the general search to leave out."""
    known = []
    for k, xi in enumerate(model.rotations):
        if not xi or not _turns_positions(model, xi, k):
            continue
        how = _verify(model, values, list(xi), q0, qd0, t0)
        if how is None:
            continue
        vector = _affine(model, xi)
        if vector is not None:
            known.append(vector)
        ones = [i for i, x in enumerate(xi) if x != 0]
        if len(ones) == 1 and xi[ones[0]] == 1 and ones[0] in cyclic:
            name = naming.momentum(model.coordinates[ones[0]])
            index = next(i for i, inv in enumerate(found) if inv.name == name)
            found[index] = replace(found[index], about=AXES[k])
            continue
        charge = expanded(se.Add(*(model.momenta[i] * xi[i] for i in range(model.n))))
        momentum = expanded(se.Add(*(p_names[i] * xi[i] for i in range(model.n))))
        found.append(Invariant(f"angular_momentum_{AXES[k]}", "rotation", readable(charge),
                               str(momentum), tuple(str(x) for x in xi), value(charge), how,
                               charge, AXES[k]))
    return known


def _name(model: Model, coefficients: Sequence[float | Fraction], used: set[str],
          index: int) -> str:
    n = model.n
    B = [[coefficients[i * n + j] for j in range(n)] for i in range(n)]
    c = coefficients[n * n:]
    nonzero = [(i, j) for i in range(n) for j in range(n) if B[i][j]]
    if not any(c) and len(nonzero) == 2:
        (i, j), (k, m) = nonzero
        if (i, j) == (m, k) and B[i][j] == -B[k][m]:
            name = f"L_{model.coordinates[min(i, j)]}_{model.coordinates[max(i, j)]}"
            if name not in used:
                return name
    return f"noether_{index}"


def _oriented(model: Model, coefficients: np.ndarray) -> list[float | Fraction]:
    """Rounded, with a rotation turning from the earlier coordinate to the later one
    (ξ = (−y, x): p·ξ = x p_y − y p_x), otherwise the first nonzero entry positive."""
    n = model.n
    out = [_nice(float(x)) for x in coefficients]
    for i in range(n):
        for j in range(i + 1, n):
            if out[j * n + i]:
                sign = 1 if float(out[j * n + i]) > 0 else -1
                return [sign * x for x in out]
    first = next((x for x in out if x), 1)
    sign = 1 if float(first) > 0 else -1
    return [sign * x for x in out]


def find_invariants(model: Model, q0: np.ndarray, qd0: np.ndarray, t0: float) -> Invariants:
    """The energy (when conserved), cyclic momenta and Noether momenta of affine symmetries."""
    values = model.substitutions()
    found: list[Invariant] = []
    notes: list[str] = []
    p_names = [se.Symbol(naming.momentum(q)) for q in model.coordinates]
    start = dict(zip([*model.q, *model.qd, model.t], [*q0, *qd0, t0]))
    start.update(values)

    def value(expr: se.Basic) -> float:
        return float(se.sympify(expr).subs(start))

    why = energy_conserved(model, values)
    if why is None:
        found.append(Invariant("energy", "energy", readable(model.energy), "h", None,
                               value(model.energy), "symbolic", model.energy))
    else:
        notes.append(f"the energy h is not conserved: {why}")
    cyclic = []
    forced, held = [], []
    for j, q in enumerate(model.coordinates):
        if not _zero(diff(model.lagrangian.subs(values), model.q[j])):
            continue
        if not _zero(model.tau[j].subs(values)):
            forced.append(q)
            continue
        if any(not _zero(model.A[k, j].subs(values)) for k in range(model.m)):
            held.append(q)
            continue
        cyclic.append(j)
        p = model.momenta[j]
        found.append(Invariant(naming.momentum(q), "cyclic", readable(p), naming.momentum(q),
                               tuple(str(int(i == j)) for i in range(model.n)), value(p),
                               "symbolic", p))
    for names, what in ((forced, "a force acts"), (held, "a constraint acts")):
        if names:
            notes.append(f"cyclic but {what} on {', '.join(names)}: "
                         f"{', '.join('p_' + q for q in names)} not conserved")
    used = {inv.name for inv in found}
    if model.n > MAX_ROTATION_N:
        notes.append(f"with {model.n} coordinates (more than {MAX_ROTATION_N}) only translations "
                     "are searched for Noether symmetries, not rotations")
    known = _rotations(model, values, found, cyclic, p_names, q0, qd0, t0, value)
    for index, vector in enumerate(_symmetries(model, values, cyclic, q0, qd0, t0, known),
                                   start=1):
        coefficients = _oriented(model, vector)
        xi = _xi(model, coefficients)
        how = _verify(model, values, xi, q0, qd0, t0)
        if how is None:
            notes.append(f"a symmetry candidate ξ = ({', '.join(map(str, xi))}) failed its "
                         "check and is left out")
            continue
        charge = expanded(sum((model.momenta[i] * xi[i] for i in range(model.n)),
                              se.Integer(0)))
        momentum = expanded(sum((p_names[i] * xi[i] for i in range(model.n)), se.Integer(0)))
        name = _name(model, coefficients, used, index)
        used.add(name)
        found.append(Invariant(name, "noether", readable(charge), str(momentum),
                               tuple(str(x) for x in xi), value(charge), how, charge))
    return Invariants(tuple(found), tuple(notes))
