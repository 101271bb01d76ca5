"""Minimal coordinates by Lagrange's recipe, seed ``002_485a91571cac8ced.txt`` §23.3–23.5.

Each holonomic constraint that fixes a coordinate (β = 0, z = 0) or can be solved for one
coordinate is used to eliminate it. The constrained Lagrangian L̃ is L with the eliminated
coordinates and their rates substituted (step 3); its Euler–Lagrange equations are the reduced
equations of motion (step 4); the multipliers come from the unconstrained equations of the
eliminated coordinates evaluated on the constraint (step 5):

    (M q̈ − F)_e = (Aᵀ λ)_e   with q, q̇, q̈ on the constraint manifold.

With constrained coordinates that are the constraint functions themselves (the seed's choice),
(Aᵀ)_e is the identity and λ_e is the left-hand side, e.g. §23.7: λ_string = −mℓθ̇² − mg cos θ.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import partial

import numpy as np
import symengine as se
import sympy

from lagsim.errors import InputError, Subject
from lagsim.records import record
from lagsim.spec.expressions import diff
from lagsim.symbolic.expansion import expands_to_zero, expansion_work
from lagsim.symbolic.model import Model, assemble_model, time_derivative, to_sympy
from lagsim.symbolic.tidy import OutOfTime, can_interrupt
from lagsim.symbolic.tidy import time_budget as _time_budget


@record
class Reduction:
    """The reduced model of a constrained :class:`Model` and how to rebuild the full state.

    ``eliminated`` gives each eliminated coordinate as an expression in the free ones and t;
    ``full_q``/``full_qd``/``full_qdd`` are the full q, q̇, q̈ in free q, q̇, q̈ and t;
    ``residual_e`` is (M q̈ − F)_e on the manifold and ``A_e`` the columns of A of the
    eliminated coordinates, so that (A_e)ᵀ λ = residual_e gives the multipliers. ``integrated``
    names each velocity constraint eliminated through the holonomic constraint it integrates to
    (:func:`integrate_velocity_constraints`), with that constraint written ``f = level``.
    """

    full: Model
    reduced: Model
    free: tuple[str, ...]
    eliminated: tuple[tuple[str, se.Basic], ...]
    full_q: tuple[se.Basic, ...]
    full_qd: tuple[se.Basic, ...]
    full_qdd: tuple[se.Basic, ...]
    A_e: se.DenseMatrix
    residual_e: se.DenseMatrix
    integrated: tuple[tuple[str, str], ...] = ()

    @property
    def lagrangian(self) -> sympy.Expr:
        """L̃, the constrained Lagrangian (002 §23.4)."""
        return to_sympy(self.reduced.lagrangian)

    @property
    def equations(self) -> tuple[sympy.Expr, ...]:
        """The reduced Euler–Lagrange equations, each an expression that vanishes (§23.5 step 4)."""
        return tuple(to_sympy(e) for e in self.reduced.euler_lagrange())

    @property
    def multipliers(self) -> tuple[tuple[str, sympy.Expr], ...]:
        """Each multiplier in free q, q̇, q̈ and t (§23.5 step 5), solved from (A_e)ᵀλ = (Mq̈−F)_e."""
        At = to_sympy(self.A_e).T
        rhs = to_sympy(self.residual_e)
        solution = At.LUsolve(rhs) if At.shape[0] else rhs
        names = [c.multiplier for c in self.full.constraints]
        from lagsim.symbolic.tidy import light

        return tuple((name, light(expr, [], name)) for name, expr in zip(names, solution))


SOLVE_BUDGET = 3.0
"""Seconds of CPU time the symbolic reduction (sympy.solve, simplify) may take in ``simulate
--formulation reduced`` and outside ``derive`` (issue 16 §3). CPU rather than wall time, so that
a busy machine does not turn a reduction of one second (the slider-crank) into a refusal.
``derive`` draws on its own budget instead (``--budget``,
:data:`lagsim.symbolic.tidy.DEFAULT_SECONDS`),
shared with its tidying: it prints the partitioned form when the solve does not fit, whereas a
run compiles and integrates for seconds anyway, and a compiled symbolic chart repays a longer
solve over the run."""
START_TOLERANCE = 1e-12
"""A branch is accepted when it rebuilds the start to this relative accuracy (issue 16 §1)."""


class ReductionError(InputError):
    """No symbolic reduction fits: too slow, not solvable, or no branch through the start.

    ``simulate`` then integrates partitioned coordinates numerically (:mod:`lagsim.run.reduced`);
    ``derive`` prints the partitioned form for :class:`NoClosedForm` and refuses with the
    message otherwise. ``reason`` is the message without the advice; ``about`` the constraint
    or coordinate concerned."""

    def __init__(self, reason: str, advice: str = "use index1 or udwadia-kalaba",
                 about: Subject | None = None) -> None:
        super().__init__(f"{reason}; {advice}", about=about)
        self.reason = reason


class NoClosedForm(ReductionError):
    """SymPy found no closed form for an eliminated coordinate: its solve ran out of time
    (``timed_out``, issue 16 §3) or cannot solve the constraint for a single coordinate. The
    constraints still define the dependent coordinates implicitly, so ``derive`` prints them
    partitioned (:func:`partition`) rather than refusing (issue 16 §4)."""

    def __init__(self, reason: str, constraint: str, timed_out: bool,
                 advice: str = "use index1 or udwadia-kalaba") -> None:
        super().__init__(reason, advice,
                         Subject("constraint", constraint) if constraint else None)
        self.constraint = constraint
        self.timed_out = timed_out



@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """:func:`lagsim.symbolic.tidy.time_budget`, refused with :class:`ReductionError` where it
    cannot interrupt (not the main thread of a POSIX process)."""
    if seconds is not None and not can_interrupt():
        raise ReductionError("the symbolic reduction can only be time-limited in the main "
                             "thread of a POSIX process")
    with _time_budget(seconds):
        yield


def flat(matrix: se.DenseMatrix) -> list[se.Basic]:
    """The entries of ``matrix`` row by row."""
    return [matrix[i, j] for i in range(matrix.rows) for j in range(matrix.cols)]


def _fail(message: str, constraint: str | None = None) -> InputError:
    """An input error about the reduction, placed at ``constraint`` when it is about one."""
    return InputError(message, about=None if constraint is None else Subject("constraint",
                                                                               constraint))


Start = tuple[float, Sequence[float], Sequence[float]]


def reduce_model(model: Model, q0: Mapping[str, float] | None = None, t0: float = 0.0, *,
                 start: Start | None = None,
                 eliminate: Sequence[tuple[str, str]] | None = None,
                 budget: float | None = SOLVE_BUDGET) -> Reduction:
    """Eliminate one coordinate per holonomic constraint (002 §23.5).

    Without ``start``, where a constraint solved for a coordinate has several branches
    (y = ±√(ℓ² − x²)), the branch nearest the configuration ``q0`` at time ``t0`` is kept (what
    ``derive`` prints). With ``start = (t, q, q̇)``, the consistent start of a run, a branch is
    accepted only if the eliminated coordinates rebuilt from the free ones reproduce q and q̇ to
    :data:`START_TOLERANCE` relative; the others are tried (every root sympy returns, and for a
    2π-periodic constraint the root shifted by the 2πk nearest the start), and when none fits
    :class:`ReductionError` says so (issue 16 §1). ``eliminate`` pairs each constraint with the
    coordinate it is solved for, in the order of solving (Gaussian elimination with complete
    pivoting on φ_q, :mod:`lagsim.run.reduced`); None takes the constraints in the file's order,
    each solved for a coordinate it fixes linearly if any, else for the last one it can. The
    symbolic work is bounded by ``budget`` seconds of CPU (:class:`NoClosedForm` when it runs out,
    issue 16 §3; None: by the enclosing :func:`lagsim.symbolic.tidy.time_budget` only, as ``derive``
    calls it within its one budget through :func:`lagsim.symbolic.tidy.bounded`). A velocity
    constraint is eliminated through the holonomic constraint it integrates to, as ``check`` finds
    it (:func:`integrate_velocity_constraints`). Raises :class:`InputError` when a velocity
    constraint does not integrate (or its integral has no closed form), or a constraint is redundant
    at the start.
    """
    if not model.constraints:
        raise _fail("the reduced form needs holonomic constraints to eliminate coordinates, and "
                    "this system has none; use --form lagrange")
    if start is not None:
        t0 = float(start[0])
        q0 = dict(zip(model.coordinates, (float(x) for x in start[1])))
    where = {"constraint": ""}
    try:
        with time_budget(budget):
            model, integrated = integrate_velocity_constraints(model, q0, t0, where)
            if q0:
                check_independent(model, q0, t0)
            reduction = _reduce(model, q0, t0, start, eliminate, where)
            return replace(reduction, integrated=integrated)
    except OutOfTime:
        within = f"{budget:g} s of CPU time" if budget is not None else "its time budget"
        raise NoClosedForm(
            f"the symbolic reduction did not finish within {within} (sympy on constraint "
            f"'{where['constraint']}')", where["constraint"], timed_out=True) from None


def integrate_velocity_constraints(model: Model, q0: Mapping[str, float] | None, t0: float,
                                   where: dict[str, str] | None = None
                                   ) -> tuple[Model, tuple[tuple[str, str], ...]]:
    """The model with each velocity constraint a·q̇ + c = 0 replaced by the holonomic constraint
    f(q, t) − f(q₀, t₀) = 0 it integrates to (its row a and multiplier kept, so that λ is the
    file's constraint's), and the (name, ``f = level``) of each: Frobenius' test and integral of
    :func:`lagsim.symbolic.integrability.frobenius`, the answer ``lagsim check`` prints (seed
    ``002_485a91571cac8ced.txt`` §23.1: an integrable constraint is holonomic). The level is the
    value at ``q0`` (missing coordinates at 0) and ``t0``; the model has no ``structure_key``
    (its constraints are not its file's: compiled code is looked up by its expressions).
    Raises :class:`InputError` naming the constraint when it is nonholonomic, undecided, or
    integrable without a closed form found."""
    from lagsim.symbolic.integrability import frobenius

    if not model.velocity_constraints:
        return model, ()
    start = np.array([float((q0 or {}).get(name, 0.0)) for name in model.coordinates])
    holonomic = list(model.holonomic)
    constraints, integrated = [], []
    for c in model.constraints:
        if c.kind == "holonomic":
            constraints.append(c)
            continue
        if where is not None:
            where["constraint"] = c.name
        test = frobenius(model, c.name, [*holonomic, c], start, t0)
        if test.function is None or test.level is None:
            raise _fail(_not_integrated(c.name, test.holonomic, test.note), c.name)
        constraints.append(replace(c, kind="holonomic",
                                       expression=test.function - _level(test.level)))
        integrated.append((c.name, str(test.integral)))
    return (replace(model, constraints=tuple(constraints), structure_key=None),
            tuple(integrated))


def _not_integrated(name: str, holonomic: bool | None, note: str) -> str:
    """Why a velocity constraint eliminates no coordinate, in the words of Frobenius' test."""
    head = f"velocity constraint '{name}' cannot be eliminated by Lagrange's recipe: "
    advice = "use index1 or udwadia-kalaba"
    if holonomic is False:
        return f"{head}it is nonholonomic (Frobenius' test, as `lagsim check` reports); {advice}"
    if holonomic:
        return (f"{head}it integrates (Frobenius' test) but no closed form of its integral was "
                f"found; write the integral under 'holonomic:', or {advice}")
    return (f"{head}whether it integrates is undecided (Frobenius' test: {note}); write its "
            f"integral under 'holonomic:' if it has one, or {advice}")


def _level(value: float) -> se.Basic:
    """The integral's level at the start, as a small rational when it is one to 1e-12."""
    from fractions import Fraction

    nice = Fraction(value).limit_denominator(1000)
    if abs(float(nice) - value) <= 1e-12 * max(1.0, abs(value)):
        return se.Rational(nice.numerator, nice.denominator)
    return se.Float(value)


def check_independent(model: Model, q0: Mapping[str, float], t0: float,
                      where: str = "at the start") -> None:
    """Refuse constraints whose rows of φ_q are dependent at ``q0``, naming the redundant one
    (issue 16 §3): each row is compared with the rows before it. A row that vanishes at ``q0``
    (a start that is not on the constraints, or a singular point) proves nothing and is skipped."""
    values = {s: float(q0.get(name, 0.0)) for s, name in zip(model.q, model.coordinates)}
    values.update({se.Symbol(k): v for k, v in model.parameters.items()})
    values[model.t] = t0
    try:
        rows = np.array([[float(se.sympify(r).subs(values)) for r in c.row]
                         for c in model.constraints])
    except (RuntimeError, TypeError, ValueError):
        return
    if not np.all(np.isfinite(rows)):
        return
    scale = max(float(np.abs(rows).max(initial=0.0)), 1e-300)
    rank = 0
    for k, c in enumerate(model.constraints):
        s = np.linalg.svd(rows[:k + 1], compute_uv=False)
        r = int(np.sum(s > 1e-10 * scale))
        if r == rank and np.abs(rows[k]).max() > 1e-10 * scale:
            before = ", ".join(x.name for x in model.constraints[:k]) or "(none)"
            raise _fail(
                f"constraint '{c.name}' is redundant {where}: its row of the constraint "
                f"Jacobian is a combination of those of {before}, so it eliminates no "
                f"coordinate ({model.n - rank} degree(s) of freedom remain); remove it, or use "
                f"udwadia-kalaba, which accepts redundant constraints", c.name)
        rank = r


def _phi_q(model: Model, q0: Mapping[str, float], t0: float) -> np.ndarray:
    """φ_q (the rows a of the constraints) at the configuration ``q0`` and time ``t0``."""
    values = {s: float(q0.get(name, 0.0)) for s, name in zip(model.q, model.coordinates)}
    values.update({se.Symbol(k): v for k, v in model.parameters.items()})
    values[model.t] = t0
    try:
        return np.array([[float(se.sympify(r).subs(values)) for r in c.row]
                         for c in model.constraints], dtype=float).reshape(model.m, model.n)
    except (RuntimeError, TypeError, ValueError):
        return np.full((model.m, model.n), np.nan)


def partition(model: Model, q0: Mapping[str, float] | None = None, t0: float = 0.0
              ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(dependent u, independent v) coordinate names of the generalized coordinate partitioning
    of Wehage and Haug (1982): Gaussian elimination with complete pivoting on φ_q at ``q0``
    pairs each constraint with the coordinate of its largest pivot (of equal pivots the last
    coordinate), and those coordinates are u, in the order of elimination; v keeps the file's
    order. The same rule as :func:`lagsim.run.reduced.complete_pivoting` at a run's start, written
    with NumPy alone so that ``derive`` does not import SciPy. Without ``q0``, or where φ_q is
    not finite or loses rank there, at a seeded random configuration."""
    S = _phi_q(model, q0, t0) if q0 else np.full((model.m, model.n), np.nan)
    if not np.all(np.isfinite(S)) or np.linalg.matrix_rank(S) < model.m:
        rng = np.random.default_rng(0)
        S = _phi_q(model, dict(zip(model.coordinates, rng.uniform(0.3, 1.3, model.n))),
                   float(rng.uniform(0.3, 1.3)))
    S = np.where(np.isfinite(S), S, 0.0)
    rows, cols = list(range(model.m)), list(range(model.n))
    dependent = []
    for _ in range(model.m):
        sub = np.abs(S[np.ix_(rows, cols)])
        ties = np.argwhere(sub >= (1.0 - 1e-12) * sub.max())
        i, j = max(ties, key=lambda ij: (cols[ij[1]], -rows[ij[0]]))
        r, c = rows.pop(int(i)), cols.pop(int(j))
        dependent.append(c)
        if S[r, c] != 0.0:
            for other in rows:
                S[other] -= S[other, c] / S[r, c] * S[r]
    return (tuple(model.coordinates[c] for c in dependent),
            tuple(model.coordinates[c] for c in range(model.n) if c not in dependent))


def _reduce(model: Model, q0: Mapping[str, float] | None, t0: float, start: Start | None,
            eliminate: Sequence[tuple[str, str]] | None, where: dict[str, str]) -> Reduction:
    q = [to_sympy(s) for s in model.q]
    params = {sympy.Symbol(k): v for k, v in model.parameters.items()}
    at_start = {sympy.Symbol(k): v for k, v in (q0 or {}).items()}
    if at_start:
        at_start[sympy.Symbol("t")] = t0
    by_name = {c.name: c for c in model.constraints}
    if eliminate is None:
        steps = [(c, list(reversed(q))) for c in model.constraints]
    else:
        steps = [(by_name[c], [sympy.Symbol(s)]) for c, s in eliminate]
    solved: dict[sympy.Symbol, sympy.Expr] = {}
    order: list[sympy.Symbol] = []
    for c, allowed in steps:
        where["constraint"] = c.name
        phi = to_sympy(c.expression).subs(solved)
        if solved and _vanishes(phi):
            raise _fail(f"constraint '{c.name}' holds whenever the constraints before it do "
                        "(it is redundant), so it eliminates no coordinate; remove it, or use "
                        "udwadia-kalaba, which accepts redundant constraints", c.name)
        candidates = [s for s in allowed if s not in solved]
        if start is None:
            target, expr = _solve_for_one(phi, candidates, params, at_start, c.name)
        else:
            target, expr = _branch_through_start(phi, candidates, params, at_start, c.name)
        solved = {k: _tidy_root(v.subs(target, expr)) for k, v in solved.items()}
        solved[target] = expr
        order.append(target)
    free = [s for s in q if s not in solved]
    if not free:
        rng = np.random.default_rng(0)
        check_independent(model, dict(zip(model.coordinates, rng.uniform(-1.0, 1.0, model.n))),
                          float(rng.uniform(0.0, 1.0)), "at a random configuration")
        raise _fail("the constraints fix every coordinate: nothing is left to move")

    se_q = model.q
    se_qd = model.qd
    free_idx = [q.index(s) for s in free]
    elim_idx = [q.index(s) for s in order]
    fq = tuple(se_q[i] for i in free_idx)
    fqd = tuple(se_qd[i] for i in free_idx)
    fqdd = tuple(model.qdd[i] for i in free_idx)
    t_se = model.t
    pos = {se_q[q.index(k)]: se.sympify(v) for k, v in solved.items()}
    full_q = tuple(pos.get(s, s) for s in se_q)
    full_qd = tuple(time_derivative(e, fq, fqd, t_se) for e in full_q)
    if start is not None:
        _check_rebuilt(model, start, free_idx, full_q, full_qd)
    full_qdd = tuple(
        sum((diff(v, a) * b for a, b in zip(fq + fqd, fqd + fqdd)), diff(v, t_se))
        for v in full_qd
    )
    on_manifold = dict(zip(se_q, full_q))
    on_manifold.update(zip(se_qd, full_qd))

    def restrict(expr: se.Basic) -> se.Basic:
        return se.sympify(expr).subs(on_manifold)

    lagrangian = restrict(model.lagrangian)
    jac = [[diff(e, fq[j]) for j in range(len(fq))] for e in full_q]
    tau_full = [restrict(x) for x in model.tau]
    tau = se.zeros(len(fq), 1)
    for j in range(len(fq)):
        tau[j] = sum((tau_full[k] * jac[k][j] for k in range(model.n)), se.Integer(0))
    reduced = assemble_model(
        name=f"{model.name} (reduced)", description=model.description,
        coordinates=tuple(model.coordinates[i] for i in free_idx), lagrangian=lagrangian,
        tau=tau, constraints=(), parameters=model.parameters,
        mass_positions=tuple((name, tuple(restrict(r) for r in rs))
                             for name, rs in model.mass_positions),
    )
    accel = dict(zip(model.qdd, full_qdd))
    residual = se.zeros(len(elim_idx), 1)
    A_e = se.zeros(len(elim_idx), len(elim_idx))
    for r, i in enumerate(elim_idx):
        lhs = sum((model.mass_matrix[i, j] * model.qdd[j] for j in range(model.n)),
                  se.Integer(0)) - model.forcing[i]
        residual[r] = restrict(se.sympify(lhs).subs(accel))
        for k in range(model.m):
            A_e[k, r] = restrict(model.A[k, i])
    return Reduction(
        full=model, reduced=reduced, free=tuple(str(s) for s in free),
        eliminated=tuple((model.coordinates[q.index(k)], se.sympify(solved[k])) for k in order),
        full_q=full_q, full_qd=full_qd, full_qdd=full_qdd, A_e=A_e, residual_e=residual,
    )


ROOT_EXPAND_MAX_TERMS = 24
"""The argument of a root in a solved constraint is expanded when that gives at most this many
terms: ``sqrt(r**2 - x1**2)`` rather than ``sqrt(-(x1 - r)*(x1 + r))``, and nested roots of a
closed loop cancel (the slider-crank's rail y2 = 0)."""


def _roots(phi: sympy.Expr, s: sympy.Symbol, at: Mapping | None = None) -> list[sympy.Expr]:
    """The roots of φ = 0 for ``s`` by ``sympy.solve`` without its own ``simplify`` (which took
    0.2 s of a rod constraint's 0.22 s and grew without bound on a chain, issue 16 §4), each
    root's radicands expanded when short (:data:`ROOT_EXPAND_MAX_TERMS`). Given ``at`` (the
    parameter and start values), sympy's own check of each root (whose simplify imported
    sympy.physics.units: 0.2 s of the slider-crank's derive) is replaced by φ(root) ≈ 0 there
    (:func:`_solves_at`); a root that does not solve φ at the start is no branch through it."""
    quadratic = _quadratic_roots(phi, s)
    if quadratic is not None:
        roots = quadratic
    elif at:
        roots = [r for r in sympy.solve(phi, s, simplify=False, check=False)
                 if _solves_at(phi, s, r, at)]
    else:
        roots = sympy.solve(phi, s, simplify=False)
    return [_tidy_root(r) for r in roots]


def _solves_at(phi: sympy.Expr, s: sympy.Symbol, root: sympy.Expr, at: Mapping) -> bool:
    """Whether φ(root) vanishes at the values ``at`` to 1e-9 of the size of φ's terms there
    (complex values count: a branch that is real only elsewhere is kept for the caller)."""
    try:
        terms = [_complex_value(t.subs(s, root), {}, at) for t in sympy.Add.make_args(phi)]
    except (TypeError, ValueError, ZeroDivisionError):
        return False
    size = max([1.0, *(abs(t) for t in terms)])
    total = sum(terms)
    return math.isfinite(abs(total)) and abs(total) <= 1e-9 * size


def _quadratic_roots(phi: sympy.Expr, s: sympy.Symbol) -> list[sympy.Expr] | None:
    """s = −h ± √(h² − c/a), h = b/(2a), when φ = a s² + b s + c with a free of s (the
    derivatives show it without expanding φ, whose coefficients on a chain are nested roots that
    sympy.solve factored for seconds); None otherwise. Differentiated and substituted in
    SymEngine (SymPy's diff and subs of the natural 8-chain's nested roots took 3 s)."""
    from lagsim.symbolic.tidy import to_sympy as from_se

    try:
        f, x = se.sympify(phi), se.Symbol(str(s))
    except (RuntimeError, TypeError, ValueError, se.SympifyError):
        return None
    d1 = diff(f, x)
    d2 = diff(d1, x)
    if d2 == 0 or x in d2.free_symbols:
        return None
    a = d2 / 2
    h = d1.subs({x: 0}) / (2 * a)
    root = se.sqrt(h**2 - f.subs({x: 0}) / a)
    return [from_se(-h - root), from_se(-h + root)]


def _diff(phi: sympy.Expr, s: sympy.Symbol) -> sympy.Expr:
    """∂φ/∂s, by SymEngine when it reads φ."""
    from lagsim.symbolic.tidy import to_sympy as from_se

    try:
        return from_se(diff(se.sympify(phi), se.Symbol(str(s))))
    except (RuntimeError, TypeError, ValueError, se.SympifyError):
        return sympy.diff(phi, s)


def _tidy_root(root: sympy.Expr) -> sympy.Expr:
    """``root`` with each radicand (base of a non-integer power) expanded when short; equal."""
    def short(e: sympy.Basic) -> bool:
        return (e.is_Pow and not e.exp.is_Integer and not e.base.is_Atom
                and expansion_work(se.sympify(e.base), ROOT_EXPAND_MAX_TERMS)
                <= ROOT_EXPAND_MAX_TERMS
                and len(sympy.Add.make_args(sympy.expand(e.base))) <= ROOT_EXPAND_MAX_TERMS)

    return root.replace(short, lambda e: sympy.expand(e.base) ** e.exp)


def _linear_root(phi: sympy.Expr, s: sympy.Symbol, coeff: sympy.Expr) -> sympy.Expr:
    """s = s − φ/(∂φ/∂s) for φ linear in s, tidied within :func:`lagsim.symbolic.tidy.light`'s
    budget."""
    from lagsim.symbolic.tidy import light

    return light(s - phi / coeff, [], str(s))


def _vanishes(expr: sympy.Expr) -> bool:
    """Whether ``expr`` is identically zero: zero once expanded, or (nested roots that do not
    expand away) below 1e-10 at three seeded random complex points. Replaces ``simplify(φ) ==
    0``, whose cost grew without bound on a chain (issue 16 §4)."""
    try:
        if expands_to_zero(se.sympify(expr)):
            return True
    except (RuntimeError, TypeError, ValueError, se.SympifyError):
        pass
    expanded = expr
    names = sorted(expanded.free_symbols, key=str)
    rng = np.random.default_rng(20240)
    for _ in range(3):
        point = {v: complex(*rng.uniform(0.3, 1.3, 2)) for v in names}
        try:
            value = complex(expanded.evalf(subs=point))
        except (TypeError, ValueError):
            return False
        if not abs(value) < 1e-10:
            return False
    return True


def _fits(value: float, target: float, scale: float) -> bool:
    return math.isfinite(value) and abs(value - target) <= START_TOLERANCE * scale


def _check_rebuilt(model: Model, start: Start, free_idx: list[int],
                   full_q: tuple[se.Basic, ...], full_qd: tuple[se.Basic, ...]) -> None:
    """The full q, q̇ rebuilt from the free start values must be the start (issue 16 §1)."""
    t0, q0, qd0 = start
    values: dict[se.Basic, float] = {se.Symbol(k): v for k, v in model.parameters.items()}
    values[model.t] = float(t0)
    for i in free_idx:
        values[model.q[i]] = float(q0[i])
        values[model.qd[i]] = float(qd0[i])
    for label, exprs, target in (("position", full_q, q0), ("velocity", full_qd, qd0)):
        scale = max(1.0, max(abs(float(x)) for x in target))
        for name, expr, want in zip(model.coordinates, exprs, target):
            try:
                got = complex(se.sympify(expr).subs(values).n())
            except (RuntimeError, TypeError, ValueError):
                got = complex(math.nan)
            if abs(got.imag) > START_TOLERANCE * scale or not _fits(got.real, float(want),
                                                                      scale):
                raise ReductionError(
                    f"the eliminated {name} rebuilt from the free coordinates gives the {label} "
                    f"{got.real!r} at the start instead of {float(want)!r}, so this branch does "
                    f"not pass through the start", "use index1", Subject("coordinate", name))


def _shifted(phi: sympy.Expr, s: sympy.Symbol, root: sympy.Expr, value: float,
             target: float) -> list[tuple[sympy.Expr, float]]:
    """``root`` and, when φ is 2π-periodic in ``s``, root + 2πk with k nearest the start."""
    out = [(root, value)]
    k = round((target - value) / (2 * math.pi))
    if k and sympy.simplify(phi.subs(s, s + 2 * sympy.pi) - phi) == 0:
        out.append((_exact_pi(root) + 2 * k * sympy.pi, value + 2 * k * math.pi))
    return out


def _exact_pi(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with each float that is a whole multiple of π (sympy writes 2π as 6.28318… when
    the constraint has floats) replaced by that multiple, so that a shift by 2πk cancels."""
    def is_pi_multiple(e: sympy.Basic) -> bool:
        if not e.is_Float or e == 0:
            return False
        turns = float(e) / math.pi
        return abs(turns - round(turns)) <= 1e-12 * abs(turns)

    return expr.replace(is_pi_multiple, lambda e: round(float(e) / math.pi) * sympy.pi)


def _branch_through_start(phi: sympy.Expr, candidates: list[sympy.Symbol], params: Mapping,
                          start: Mapping, name: str) -> tuple[sympy.Symbol, sympy.Expr]:
    """The first candidate coordinate and branch of φ = 0 that reproduces the start value of the
    coordinate to :data:`START_TOLERANCE` relative (issue 16 §1)."""
    present = [s for s in candidates if s in phi.free_symbols]
    if not present:
        raise ReductionError(f"constraint '{name}' does not involve a coordinate that may be "
                             "eliminated", about=Subject("constraint", name))
    scale = max([1.0, *(abs(float(v)) for v in start.values())])
    missed: list[str] = []
    for s in present:
        coeff = _diff(phi, s)
        if coeff != 0 and coeff.free_symbols <= set(params):
            roots = [_linear_root(phi, s, coeff)]
        else:
            try:
                roots = _roots(phi, s)
            except (NotImplementedError, ValueError):
                continue
        target = float(start[s])
        for root in roots:
            value = _value(root, params, start)
            if value is None:
                continue
            for expr, shifted in _shifted(phi, s, root, value, target):
                if _fits(shifted, target, scale):
                    return s, expr
            missed.append(f"{s} = {value:.6g}")
    if missed:
        raise ReductionError(
            f"no branch of constraint '{name}' solved for a coordinate passes through the "
            f"start ({', '.join(f'{s} = {float(start[s]):.6g}' for s in present)}; the branches "
            f"give {', '.join(missed)})", "use index1", Subject("constraint", name))
    raise NoClosedForm(f"constraint '{name}' cannot be solved for a single coordinate in closed "
                       "form", name, timed_out=False)


def _value(root: sympy.Expr, params: Mapping, start: Mapping, fast: bool = False
           ) -> float | None:
    """The real value of a branch at the start, None when complex or undefined there; ``fast``
    evaluates in SymEngine's double precision (what ``derive`` needs to pick the nearest branch:
    SymPy's subs and evalf took 0.29 s of the natural 8-chain's 0.75 s), otherwise by SymPy's
    evalf, accurate enough for :data:`START_TOLERANCE`."""
    try:
        value = _complex_value(root, params, start) if fast else complex(
            root.subs(params).subs(start).evalf())
    except (TypeError, ValueError):
        return None
    if abs(value.imag) > 1e-12 * max(1.0, abs(value.real)) or not math.isfinite(value.real):
        return None
    return value.real


def _complex_value(expr: sympy.Expr, params: Mapping, start: Mapping) -> complex:
    """``expr`` at the parameter and start values, evaluated in SymEngine when it reads it."""
    values = {se.Symbol(str(k)): float(v) for k, v in {**params, **start}.items()}
    try:
        return complex(se.sympify(expr).subs(values).n())
    except (RuntimeError, TypeError, ValueError, AttributeError, se.SympifyError):
        return complex(expr.subs(params).subs(start).evalf())


def _solve_for_one(phi: sympy.Expr, candidates: list[sympy.Symbol], params: Mapping,
                   start: Mapping, name: str) -> tuple[sympy.Symbol, sympy.Expr]:
    """The coordinate φ = 0 determines, preferring one it fixes linearly (β = 0, z = 0); of
    several branches (each shifted by the 2πk nearest the start when φ is 2π-periodic in the
    coordinate) the one nearest ``start`` (what ``derive`` prints)."""
    present = [s for s in candidates if s in phi.free_symbols]
    if not present:
        raise ReductionError(f"constraint '{name}' does not involve a coordinate that is still "
                             "free (redundant constraints cannot be reduced)", "use udwadia-kalaba",
                             Subject("constraint", name))
    for s in present:
        coeff = _diff(phi, s)
        if coeff != 0 and coeff.free_symbols <= set(params):
            return s, _linear_root(phi, s, coeff)
    for s in present:
        try:
            roots = _roots(phi, s, {**params, **start} if start else None)
        except (NotImplementedError, ValueError):
            continue
        if not start:
            roots = [r for r in roots if r.is_real is not False]
        if len(roots) == 1:
            return s, roots[0]
        if roots and start:
            target = float(start.get(s, 0.0))
            shifted = [pair for r in roots if (v := _value(r, params, start, True)) is not None
                       for pair in _shifted(phi, s, r, v, target)]
            if shifted:
                return s, min(shifted, key=lambda pair: abs(pair[1] - target))[0]
            return s, min(roots, key=partial(_miss, s=s, params=params, start=start))
        if roots:
            return s, roots[0]
    raise NoClosedForm(f"constraint '{name}' cannot be solved for a single coordinate in closed "
                       "form", name, timed_out=False)


def _miss(root: sympy.Expr, s: sympy.Symbol, params: Mapping, start: Mapping) -> float:
    """How far a branch s = root misses the initial configuration (complex values lose)."""
    try:
        value = _complex_value(root, params, start)
    except TypeError:
        return float("inf")
    return abs(value - start.get(s, 0.0)) + (1e3 if abs(value.imag) > 1e-9 else 0.0)
