"""Frobenius' integrability test of velocity constraints: holonomic or nonholonomic?

Seed ``002_485a91571cac8ced.txt`` §23.1 names the criterion ("Frobenius' integrability criteria may
be used to determine definitely if a constraint or a system of constraints is holonomic or not")
and leaves it out; this module does it. A constraint ``a(q, t)·q̇ + c(q, t) = 0`` is the Pfaffian
form ω = a·dq + c dt on the configuration space, with ``t`` as one more coordinate when some row
depends on time or has an offset c (a rheonomic constraint). The constraints are holonomic (their
rows integrate to functions φ(q, t) = const) exactly when the distribution D they annihilate is
involutive: the Lie bracket of two fields of D stays in D (Frobenius' theorem; e.g. Bloch,
*Nonholonomic Mechanics and Control*, §1.5, or Arnold, *Mathematical Methods of Classical
Mechanics*, appendix 4). With ω([X, Y]) = X ω(Y) − Y ω(X) − dω(X, Y), for X, Y in D:

    D involutive  ⇔  dω_k(X_i, X_j) = 0 for every row k and every pair of a basis X of D.

Two independent tests, as issue 10 asks:

* **symbolic**: for one form alone, ω ∧ dω = 0 (its components ω_i C_jk + ω_j C_ki + ω_k C_ij with
  C = ∂_j ω_k − ∂_k ω_j); for several rows, the curvature dω_k(X_i, X_j) on the basis
  X_j = det(B) e_{F_j} − adj(B) A_{F_j} of the null space of the rows (B the columns of A chosen
  by pivoting at the start, F the others: no division, so the expressions stay polynomial in the
  entries). An expression is declared zero when symengine's expansion reduces it to 0, nonzero
  when it evaluates clearly away from 0 at a state relative to its rounding scale
  (:func:`lagsim.symbolic.vanishing.magnitude`: a proof that it is not identically 0), else zero
  when SymPy's ``simplify`` reduces it; past :data:`MAX_SYMBOLIC_ROWS` independent rows, or when an
  expression would multiply out past the expansion limit (:mod:`lagsim.symbolic.expansion`), it is
  skipped and the numeric test decides;
* **numeric**: at random states (projected onto the holonomic constraints of the set), an
  orthonormal basis N of the null space of the rows from an SVD, and max |Nᵀ C_k N| / |C_k|.

An integrable constraint is integrated where SymPy can: μ·ω = df for μ among 1, 1/gcd(ω),
1/ω_i, 1/ω_i², 1/(ω_i ω_j) (an exact form after an integrating factor), f found by integrating
coordinate by coordinate, checked (df = μω), made real at the start and confirmed (∇f parallel
to ω at random real states); the holonomic constraint is then f(q, t) = f(q₀, t₀).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import symengine as se

from lagsim.records import record
from lagsim.spec.expressions import diff
from lagsim.symbolic.expansion import bounded_expand, expandable, expands_to_zero, expansion_work
from lagsim.symbolic.model import Constraint, Model
from lagsim.symbolic.vanishing import magnitude

STATES = 8
"""Random states of the numeric cross-check (and of the evaluation that proves a nonzero)."""
NONZERO = 1e-7
"""An expression is clearly nonzero when |value| exceeds NONZERO × the scale of its terms."""
MAX_SYMBOLIC_ROWS = 4
"""Past this many independent rows the symbolic bracket test (determinants and adjugates of the
pivot block) is skipped and the numeric curvature decides, with a note."""
SEED = 20230
"""The random states are reproducible: the same report every time."""
SYMPY_MAX_TERMS = 500
"""SymPy's polynomial gcd multiplies its arguments out, about a thousand times slower than
SymEngine: past this many terms (:func:`lagsim.symbolic.expansion.expansion_work`) in an entry of
the row, the common factor of the entries is not among the integrating factors tried."""


@record
class Integrability:
    """The Frobenius test of one velocity constraint (with the holonomic ones) or of the set.

    ``holonomic`` is True (involutive), False (not) or None (the two tests disagree or the
    symbolic one could not decide). ``function`` f(q, t) and ``level`` (its value at the start)
    give the holonomic constraint f = level it integrates to, when one is found
    (:func:`integrate_form`); ``integral`` writes it ``f = level``.
    """

    subject: str
    constraints: tuple[str, ...]
    holonomic: bool | None
    method: str
    symbolic: str
    numeric_curvature: float
    states: int
    function: se.Basic | None = None
    level: float | None = None
    note: str = ""

    @property
    def integral(self) -> str | None:
        return None if self.function is None else f"{self.function} = {self.level!r}"

    def verdict(self) -> str:
        if self.holonomic is None:
            return "undecided"
        return "holonomic (integrable)" if self.holonomic else "nonholonomic"

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject, "constraints": list(self.constraints),
            "holonomic": self.holonomic, "verdict": self.verdict(), "method": self.method,
            "symbolic": self.symbolic,
            "numeric_curvature": self.numeric_curvature
            if np.isfinite(self.numeric_curvature) else None,
            "states": self.states, "integral": self.integral, "note": self.note,
        }


def _forms(model: Model, constraints: Sequence[Constraint], extended: bool
           ) -> list[list[se.Basic]]:
    """The rows a·dq (+ c dt) of the constraints."""
    return [list(c.row) + ([c.offset] if extended else []) for c in constraints]


def needs_time(model: Model, constraints: Sequence[Constraint]) -> bool:
    """Whether the forms live on (q, t): some row depends on t or has an offset c ≠ 0."""
    for c in constraints:
        if expands_to_zero(c.offset) is not True:
            return True
        if any(model.t in se.sympify(a).free_symbols for a in c.row):
            return True
    return False


def _curl(form: Sequence[se.Basic], X: Sequence[se.Symbol]) -> list[list[se.Basic]]:
    """C_jk = ∂_j ω_k − ∂_k ω_j (dω as an antisymmetric matrix)."""
    N = len(X)
    C = [[se.Integer(0)] * N for _ in range(N)]
    for j in range(N):
        for k in range(j + 1, N):
            C[j][k] = diff(form[k], X[j]) - diff(form[j], X[k])
            C[k][j] = -C[j][k]
    return C


class _Evaluator:
    """Numbers for symbolic expressions at states: parameters at their values."""

    def __init__(self, model: Model, X: Sequence[se.Symbol]) -> None:
        self.X = list(X)
        self.values = model.substitutions()
        self.compiled: dict[tuple[se.Basic, ...], Any] = {}

    def __call__(self, exprs: Sequence[se.Basic], points: np.ndarray) -> np.ndarray:
        if not exprs:
            return np.zeros((len(points), 0))
        key = tuple(exprs)
        f = self.compiled.get(key)
        if f is None:
            bound = [se.sympify(e).subs(self.values) for e in exprs]
            f = self.compiled[key] = se.Lambdify(self.X, bound, backend="lambda")
        with np.errstate(all="ignore"):
            return np.asarray(f(points), dtype=float).reshape(len(points), len(exprs))


def _states(model: Model, X: Sequence[se.Symbol], q0: np.ndarray, t0: float,
            holonomic: Sequence[Constraint], evaluate: _Evaluator, count: int) -> np.ndarray:
    """``count`` random points of (q[, t]) near the start, moved onto the holonomic constraints by
    Gauss–Newton (only q moves); points that do not converge or give non-finite values are
    replaced."""
    rng = np.random.default_rng(SEED)
    n = model.n
    extended = len(X) > n
    phi = [c.expression for c in holonomic]
    jac = [a for c in holonomic for a in c.row]
    out: list[np.ndarray] = []
    for _attempt in range(20 * count):
        if len(out) == count:
            break
        spread = 0.5 * (1.0 + np.abs(q0))
        point = np.concatenate([q0 + spread * rng.uniform(-1, 1, n),
                                [t0 + rng.uniform(0, 1)] if extended else []])
        for _ in range(50 if phi else 0):
            values = evaluate(phi + jac, point[None, :])[0]
            r, J = values[:len(phi)], values[len(phi):].reshape(len(phi), n)
            if not np.all(np.isfinite(values)):
                break
            if np.max(np.abs(r)) < 1e-13 * (1 + np.max(np.abs(point[:n]))):
                break
            point[:n] -= np.linalg.lstsq(J, r, rcond=None)[0]
        else:
            if phi:
                continue
        if phi:
            r = evaluate(phi, point[None, :])[0]
            if not np.all(np.isfinite(r)) or np.max(np.abs(r)) > 1e-9 * (
                    1 + np.max(np.abs(point[:n]))):
                continue
        out.append(point)
    return np.array(out).reshape(len(out), len(X))


def _independent(rows: np.ndarray) -> list[int]:
    """Indices of rows that raise the rank, in order (a redundant row is left out)."""
    kept: list[int] = []
    scale = max(float(np.abs(rows).max()) if rows.size else 0.0, 1e-300)
    for i in range(len(rows)):
        trial = rows[[*kept, i]]
        if np.linalg.matrix_rank(trial, tol=1e-10 * scale) > len(kept):
            kept.append(i)
    return kept


def _null_basis(rows: list[list[se.Basic]], start: np.ndarray) -> list[list[se.Basic]]:
    """det(B) e_F − adj(B) A_F: fields spanning the null space of the rows wherever the pivot
    minor B (chosen by column pivoting at ``start``) is regular."""
    r, N = len(rows), len(rows[0])
    P = _pivots(start, r)
    F = [j for j in range(N) if j not in P]
    B = se.DenseMatrix(r, r, [rows[i][j] for i in range(r) for j in P])
    det = B.det()
    adj = _adjugate(B)
    fields = []
    for f in F:
        X = [se.Integer(0)] * N
        X[f] = det
        for a, p in enumerate(P):
            X[p] = -sum((adj[a, b] * rows[b][f] for b in range(r)), se.Integer(0))
        fields.append(X)
    return fields


def _pivots(rows: np.ndarray, r: int) -> list[int]:
    """``r`` columns chosen by column pivoting (the largest remaining column after removing the
    chosen ones' span, as in QR with pivoting)."""
    R = np.array(rows, dtype=float)
    chosen: list[int] = []
    for _ in range(r):
        norms = np.linalg.norm(R, axis=0)
        norms[chosen] = -1.0
        j = int(np.argmax(norms))
        chosen.append(j)
        u = R[:, j] / np.linalg.norm(R[:, j])
        R = R - np.outer(u, u @ R)
    return sorted(chosen)


def _adjugate(B: se.DenseMatrix) -> se.DenseMatrix:
    r = B.rows
    if r == 1:
        return se.DenseMatrix(1, 1, [1])
    adj = se.zeros(r, r)
    for i in range(r):
        for j in range(r):
            minor = se.DenseMatrix([[B[a, b] for b in range(r) if b != j]
                                    for a in range(r) if a != i])
            adj[j, i] = (-1) ** (i + j) * minor.det()
    return adj


def _decide(exprs: list[se.Basic], points: np.ndarray, evaluate: _Evaluator) -> str:
    """"zero" (each expression expands to 0 in symengine, or SymPy's ``simplify`` reduces it to
    0: a proof), "nonzero" (a value clearly off 0 at some point: above NONZERO × its rounding
    scale, :func:`lagsim.symbolic.vanishing.magnitude` of the unexpanded expression, and an
    expansion that is not 0), "unknown" (numerically 0 but not reduced) or "too large" (one would
    multiply out past the expansion limit, :func:`_is_zero`: nothing is proved). The expressions
    that look nonzero are expanded first, so that a nonholonomic form costs one expansion."""
    if not exprs:
        return "zero"
    values = np.abs(evaluate(exprs, points))
    sizes = np.abs(evaluate([magnitude(e) for e in exprs], points))
    clear = np.isfinite(values) & np.isfinite(sizes) & (
        values > NONZERO * np.maximum(sizes, 1e-300))
    order = sorted(range(len(exprs)), key=lambda i: not clear[:, i].any())
    rest = []
    for i in order:
        zero = expands_to_zero(exprs[i])
        if zero is None:
            return "too large"
        if not zero and clear[:, i].any():
            return "nonzero"
        if not zero:
            rest.append(exprs[i])
    if not rest:
        return "zero"
    import sympy

    if all(sympy.simplify(sympy.sympify(e)) == 0 for e in rest):
        return "zero"
    return "unknown"


def _numeric_curvature(forms: list[list[se.Basic]], curls: list[list[list[se.Basic]]],
                       points: np.ndarray, evaluate: _Evaluator) -> float:
    """max over states and rows of |Nᵀ C_k N| / max|C_k|, N an orthonormal null-space basis."""
    if not len(points):
        return float("nan")
    N = len(forms[0])
    flat = [e for f in forms for e in f] + [e for C in curls for row in C for e in row]
    values = evaluate(flat, points)
    worst = 0.0
    for v in values:
        if not np.all(np.isfinite(v)):
            continue
        rows = v[:len(forms) * N].reshape(len(forms), N)
        Cs = v[len(forms) * N:].reshape(len(curls), N, N)
        _, s, Vt = np.linalg.svd(rows)
        rank = int(np.sum(s > 1e-10 * max(s.max(initial=0.0), 1e-300)))
        basis = Vt[rank:].T
        for C in Cs:
            size = np.abs(C).max()
            if size > 0 and basis.shape[1] > 1:
                worst = max(worst, float(np.abs(basis.T @ C @ basis).max() / size))
    return worst


def frobenius(model: Model, subject: str, constraints: Sequence[Constraint],
                     q0: np.ndarray, t0: float) -> Integrability:
    """The Frobenius test of the distribution annihilated by ``constraints`` (holonomic ones
    included: their rows dφ are closed, so only the velocity rows' dω can fail)."""
    extended = needs_time(model, constraints)
    X = list(model.q) + ([model.t] if extended else [])
    evaluate = _Evaluator(model, X)
    start = np.concatenate([q0, [t0] if extended else []])
    forms = _forms(model, constraints, extended)
    rows0 = evaluate([e for f in forms for e in f], start[None, :]).reshape(len(forms), len(X))
    keep = _independent(rows0)
    names = tuple(c.name for c in constraints)
    dropped = [constraints[i].name for i in range(len(constraints)) if i not in keep]
    note = (f"left out as dependent at the start: {', '.join(dropped)}; " if dropped else "")
    forms = [forms[i] for i in keep]
    used = [constraints[i] for i in keep]
    velocity = [i for i, c in enumerate(used) if c.kind == "velocity"]
    holonomic = [c for c in used if c.kind == "holonomic"]
    points = _states(model, X, q0, t0, holonomic, evaluate, STATES)
    curls = [_curl(forms[k], X) for k in velocity]
    numeric = _numeric_curvature(forms, curls, points, evaluate)
    if not velocity:
        given = [c for c in constraints if c.kind == "velocity"]
        found = integrate_form(model, given[0], q0, t0) if len(given) == 1 else None
        function, level = found or (None, None)
        return Integrability(subject, names, True, "holonomic rows", "zero", 0.0, len(points),
                             function, level,
                             note + "only holonomic rows remain: the velocity rows follow from "
                             "the holonomic constraints at the start")
    exprs: list[se.Basic] | None
    if len(forms) == 1:
        method = "ω ∧ dω = 0"
        w, C = forms[0], curls[0]
        exprs = [w[i] * C[j][k] + w[j] * C[k][i] + w[k] * C[i][j]
                 for i, j, k in itertools.combinations(range(len(X)), 3)]
    elif len(forms) > MAX_SYMBOLIC_ROWS:
        method = "Lie brackets (numeric only)"
        exprs = None
    else:
        method = "Lie brackets of a null-space basis"
        fields = _null_basis(forms, rows0[keep])
        exprs = [sum((Xi[a] * C[a][b] * Xj[b] for a in range(len(X)) for b in range(len(X))
                      if a != b), se.Integer(0))
                 for C in curls for Xi, Xj in itertools.combinations(fields, 2)]
    symbolic = _decide(exprs, points, evaluate) if exprs is not None else "skipped"
    numeric_ok = numeric < NONZERO if np.isfinite(numeric) else None
    if symbolic == "too large":
        holonomic_ = numeric_ok
        note += ("the symbolic test is skipped: its expressions multiplied out would pass the "
                 "expansion limit (docs/format.md, \"Limits\"); the numeric test decides; ")
    elif symbolic == "skipped":
        holonomic_ = numeric_ok
        note += (f"the symbolic test is skipped for more than {MAX_SYMBOLIC_ROWS} independent "
                 "rows (its determinants grow too fast); the numeric test decides; ")
    elif symbolic == "nonzero":
        holonomic_ = False if numeric_ok is not True else None
    elif symbolic == "zero":
        holonomic_ = True if numeric_ok is not False else None
    else:
        holonomic_ = None
    if holonomic_ is None and symbolic not in ("skipped", "too large"):
        note += (f"the symbolic test says {symbolic} and the numeric curvature is {numeric:.3g}; "
                 "undecided")
    found = None
    if holonomic_ and len(velocity) == 1:
        found = integrate_form(model, used[velocity[0]], q0, t0)
    function, level = found or (None, None)
    return Integrability(subject, names, holonomic_, method, symbolic, numeric, len(points),
                         function, level, note.rstrip("; "))


def integrate_form(model: Model, constraint: Constraint, q0: np.ndarray, t0: float
                   ) -> tuple[se.Basic, float] | None:
    """(f, f at the start): the holonomic constraint f(q, t) = f(q₀, t₀) a velocity constraint
    integrates to, when μ·ω is closed for one of the candidate factors μ (1, the reciprocal of
    the common factor of the row's entries, 1/ω_i, 1/ω_i², 1/(ω_i ω_j)) and its potential f is
    found (term by term for sums of powers, else SymPy's ``integrate``), checked (df = μ·ω), made
    real where SymPy's answer is complex on the reals (:func:`_real`), and confirmed at random
    real states: ∇f parallel to the row (:func:`_parallel`). None when no candidate passes, or
    when an entry of the row would multiply out past the expansion limit (the candidates'
    checks multiply out products and powers of the entries)."""
    extended = needs_time(model, [constraint])
    X = [*model.q, *([model.t] if extended else [])]
    w = _forms(model, [constraint], extended)[0]
    if not all(expandable(e) for e in w):
        return None
    nonzero = [e for e in w if expands_to_zero(e) is not True]
    start = [*q0, *([t0] if extended else [])]
    evaluate = _Evaluator(model, X)
    for mu in _factors(nonzero):
        b = [bounded_expand(mu * e) for e in w]
        if any(e is None for e in b) or not all(
                expands_to_zero(diff(b[i], X[j]) - diff(b[j], X[i]))
                for i, j in itertools.combinations(range(len(X)), 2)):
            continue
        f = _potential(b, X)
        if f is None:
            continue
        real = _real(_squares(f), X, start, model.substitutions())
        if real is not None and _parallel(real[0], w, X, np.array(start), evaluate):
            return real
    return None


def _factors(nonzero: Sequence[se.Basic]) -> Iterator[se.Basic]:
    """The candidate integrating factors in order, each made when it is asked for (the common
    factor takes SymPy, which a closed form needs no more)."""
    yield se.Integer(1)
    common = _common_factor(nonzero)
    if common is not None:
        yield 1 / common
    yield from (1 / e for e in nonzero)
    yield from (1 / e**2 for e in nonzero)
    yield from (1 / (a * b) for a, b in itertools.combinations(nonzero, 2))


def _common_factor(entries: Sequence[se.Basic]) -> se.Basic | None:
    """The greatest common divisor of the row's entries (SymPy's ``gcd_list``, functions of q
    as generators): μ·dG is integrated as dG after dividing by it. None when it is a number,
    SymPy cannot take it, or an entry multiplies out past :data:`SYMPY_MAX_TERMS` terms."""
    if len(entries) < 2 or any(expansion_work(e, SYMPY_MAX_TERMS) > SYMPY_MAX_TERMS
                               for e in entries):
        return None
    import sympy

    try:
        g = sympy.gcd_list([sympy.sympify(e) for e in entries])
    except (sympy.PolynomialError, sympy.polys.polyerrors.PolificationFailed, ValueError,
            TypeError, NotImplementedError):
        return None
    return None if g.is_number else se.sympify(g)


def _real(f: se.Basic, X: Sequence[se.Symbol], start: Sequence[float],
          values: dict[se.Symbol, float]) -> tuple[se.Basic, float] | None:
    """(f, f at the start) with each log(u) whose argument is negative at the start written
    log(−u), which has the same derivative u′/u and is real there (SymPy's ∫ dx/cos x is
    ½ log(sin x + 1) − ½ log(sin x − 1)); None when f is still not real and finite there."""
    numbers = dict(zip(X, start))
    numbers.update(values)
    if not se.sympify(f).atoms(se.log):
        try:
            value = complex(se.sympify(f).subs(numbers))
        except (TypeError, ValueError, RuntimeError):
            return None
        real = np.isfinite(value.real) and abs(value.imag) <= 1e-12 * max(1.0, abs(value.real))
        return (f, value.real) if real else None
    import sympy

    at = {sympy.Symbol(str(x)): v for x, v in zip(X, start)}
    at.update({sympy.Symbol(str(k)): v for k, v in values.items()})
    g = sympy.sympify(f)
    try:
        for log in sorted(g.atoms(sympy.log), key=str):
            u = complex(log.args[0].evalf(subs=at))
            if u.real < 0 and abs(u.imag) <= 1e-12 * abs(u.real):
                g = g.xreplace({log: sympy.log(-log.args[0])})
        f = se.sympify(g)
        value = complex(f.subs(numbers))
    except (TypeError, ValueError, ZeroDivisionError, RuntimeError):
        return None
    if not (np.isfinite(value.real) and abs(value.imag) <= 1e-12 * max(1.0, abs(value.real))):
        return None
    return f, value.real


def _parallel(f: se.Basic, w: Sequence[se.Basic], X: Sequence[se.Symbol], start: np.ndarray,
              evaluate: _Evaluator) -> bool:
    """Whether ∇f is nonzero and parallel to the row w (to 1e-8 in angle) at STATES random real
    states near the start where both are finite (at least half of them): f is constant along
    the constraint's motions and its level set is the constraint's leaf."""
    rng = np.random.default_rng(SEED + 1)
    points = start + 0.5 * (1.0 + np.abs(start)) * rng.uniform(-1, 1, (STATES, len(X)))
    try:
        values = evaluate([diff(f, x) for x in X] + list(w), points)
    except (RuntimeError, TypeError, ValueError):
        return False
    finite = values[np.all(np.isfinite(values), axis=1)]
    if 2 * len(finite) < STATES:
        return False
    for v in finite:
        grad, row = v[:len(X)], v[len(X):]
        if np.linalg.norm(grad) == 0.0 or np.linalg.norm(row) == 0.0:
            return False
        g, r = grad / np.linalg.norm(grad), row / np.linalg.norm(row)
        if np.linalg.norm(g - (g @ r) * r) > 1e-8:
            return False
    return True


def _squares(f: se.Basic) -> se.Basic:
    """c·a² + c·b² ∓ 2c·ab written as c·(a ∓ b)² for pairs of coordinates (the rod's
    ½(x₁ − x₂)² + ½(y₁ − y₂)² instead of its six expanded terms); f itself when nothing pairs."""
    multiplied = bounded_expand(f)
    if multiplied is None:
        return f
    terms = dict(multiplied.as_coefficients_dict())
    symbols = sorted(se.sympify(f).free_symbols, key=str)
    out: se.Basic = se.Integer(0)
    used: set[se.Basic] = set()
    for a, b in itertools.combinations(symbols, 2):
        if a in used or b in used:
            continue
        c = terms.get(a**2, 0)
        if c == 0 or terms.get(b**2, 0) != c:
            continue
        cross = terms.get(a * b, 0)
        if cross == -2 * c or cross == 2 * c:
            out += c * (a - b) ** 2 if cross == -2 * c else c * (a + b) ** 2
            for key in (a**2, b**2, a * b):
                terms.pop(key)
            used.update((a, b))
    if not used:
        return f
    result = out + sum((k * v for k, v in terms.items()), se.Integer(0))
    return result if expands_to_zero(result - f) else f


def _potential(b: Sequence[se.Basic], X: Sequence[se.Symbol]) -> se.Basic | None:
    """f with ∂f/∂X_i = b_i (b closed), integrating one coordinate at a time."""
    f: se.Basic = se.Integer(0)
    for x, bi in zip(X, b):
        rest = bounded_expand(bi - diff(f, x))
        if rest is None:
            return None
        if rest == 0:
            continue
        part = _antiderivative(rest, x)
        if part is None:
            return None
        f = f + part
    checks = [expands_to_zero(diff(f, x) - bi) for x, bi in zip(X, b)]
    if None in checks:
        return None
    if not all(checks):
        return _sympy_potential(b, X)
    return f


def _antiderivative(expr: se.Basic, x: se.Symbol) -> se.Basic | None:
    """∫ expr dx for a sum of terms c·x^k (c free of x), else SymPy's answer (None if it has
    none)."""
    out: se.Basic = se.Integer(0)
    for term in (expr.args if isinstance(expr, se.Add) else (expr,)):
        factors = term.args if isinstance(term, se.Mul) else (term,)
        power = None
        rest: se.Basic = se.Integer(1)
        for factor in factors:
            if x not in factor.free_symbols:
                rest = rest * factor
            elif factor == x:
                power = se.Integer(1)
            elif isinstance(factor, se.Pow) and factor.args[0] == x and \
                    factor.args[1].is_Number:
                power = factor.args[1]
            else:
                return _sympy_antiderivative(expr, x)
        if power is None:
            out += rest * x
        elif power == -1:
            out += rest * se.log(x)
        else:
            out += rest * x**(power + 1) / (power + 1)
    return out


def _sympy_antiderivative(expr: se.Basic, x: se.Symbol) -> se.Basic | None:
    import sympy

    result = sympy.integrate(sympy.sympify(expr), sympy.Symbol(str(x)))
    return None if result.has(sympy.Integral) else se.sympify(result)


def _sympy_potential(b: Sequence[se.Basic], X: Sequence[se.Symbol]) -> se.Basic | None:
    """The potential by SymPy, checked with ``simplify`` (forms symengine cannot expand to 0)."""
    import sympy

    xs = [sympy.Symbol(str(x)) for x in X]
    bs = [sympy.sympify(e) for e in b]
    f = sympy.Integer(0)
    for x, bi in zip(xs, bs):
        rest = sympy.simplify(bi - sympy.diff(f, x))
        if rest != 0:
            part = sympy.integrate(rest, x)
            if part.has(sympy.Integral):
                return None
            f += part
    if all(sympy.simplify(sympy.diff(f, x) - bi) == 0 for x, bi in zip(xs, bs)):
        return se.sympify(sympy.simplify(f))
    return None

