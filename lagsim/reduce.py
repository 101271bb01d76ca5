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

from collections.abc import Mapping
from dataclasses import dataclass

import symengine as se
import sympy

from lagsim.errors import InputError
from lagsim.model import Model, assemble_model, time_derivative, to_sympy


@dataclass(frozen=True)
class Reduction:
    """The reduced model of a constrained :class:`Model` and how to rebuild the full state.

    ``eliminated`` gives each eliminated coordinate as an expression in the free ones and t;
    ``full_q``/``full_qd``/``full_qdd`` are the full q, q̇, q̈ in free q, q̇, q̈ and t;
    ``residual_e`` is (M q̈ − F)_e on the manifold and ``A_e`` the columns of A of the
    eliminated coordinates, so that (A_e)ᵀ λ = residual_e gives the multipliers.
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
        return tuple((name, sympy.simplify(expr)) for name, expr in zip(names, solution))


def _fail(message: str) -> InputError:
    return InputError(message)


def reduce_model(model: Model, q0: Mapping[str, float] | None = None,
                 t0: float = 0.0) -> Reduction:
    """Eliminate one coordinate per holonomic constraint (002 §23.5).

    Where a constraint solved for a coordinate has several branches (y = ±√(ℓ² − x²)), the branch
    through the initial configuration ``q0`` (at time ``t0``) is kept. Raises :class:`InputError`
    when a constraint is a velocity constraint or cannot be solved for a single coordinate.
    """
    if not model.constraints:
        raise _fail("the reduced form needs holonomic constraints to eliminate coordinates, and "
                    "this system has none; use --form lagrange")
    for c in model.constraints:
        if c.kind != "holonomic":
            raise _fail(f"velocity constraint '{c.name}' cannot be eliminated by Lagrange's "
                        "recipe (it is not integrable); use index1 or udwadia-kalaba")
    q = [to_sympy(s) for s in model.q]
    params = {sympy.Symbol(k): v for k, v in model.parameters.items()}
    start = {sympy.Symbol(k): v for k, v in (q0 or {}).items()}
    if start:
        start[sympy.Symbol("t")] = t0
    solved: dict[sympy.Symbol, sympy.Expr] = {}
    order: list[sympy.Symbol] = []
    for c in model.constraints:
        phi = to_sympy(c.expression).subs(solved)
        if solved and sympy.simplify(phi) == 0:
            raise _fail(f"constraint '{c.name}' holds whenever the constraints before it do "
                        "(it is redundant), so it eliminates no coordinate; remove it, or use "
                        "udwadia-kalaba, which accepts redundant constraints")
        target, expr = _solve_for_one(phi, [s for s in reversed(q) if s not in solved], params,
                                      start, c.name)
        solved = {k: v.subs(target, expr) for k, v in solved.items()}
        solved[target] = expr
        order.append(target)
    free = [s for s in q if s not in solved]
    if not free:
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
    full_qdd = tuple(
        sum((se.diff(v, a) * b for a, b in zip(fq + fqd, fqd + fqdd)), se.diff(v, t_se))
        for v in full_qd
    )
    on_manifold = dict(zip(se_q, full_q))
    on_manifold.update(zip(se_qd, full_qd))

    def restrict(expr: se.Basic) -> se.Basic:
        return se.sympify(expr).subs(on_manifold)

    lagrangian = restrict(model.lagrangian)
    jac = [[se.diff(e, fq[j]) for j in range(len(fq))] for e in full_q]
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


def _solve_for_one(phi: sympy.Expr, candidates: list[sympy.Symbol], params: Mapping,
                   start: Mapping, name: str) -> tuple[sympy.Symbol, sympy.Expr]:
    """The coordinate φ = 0 determines, preferring one it fixes linearly (β = 0, z = 0)."""
    present = [s for s in candidates if s in phi.free_symbols]
    if not present:
        raise _fail(f"constraint '{name}' does not involve a coordinate that is still free "
                    "(redundant constraints cannot be reduced); use udwadia-kalaba")
    for s in present:
        coeff = sympy.diff(phi, s)
        if coeff != 0 and coeff.free_symbols <= set(params):
            return s, sympy.simplify(s - phi / coeff)
    for s in present:
        try:
            roots = sympy.solve(phi, s)
        except (NotImplementedError, ValueError):
            continue
        roots = [r for r in roots if r.is_real is not False]
        if len(roots) == 1:
            return s, roots[0]
        if roots and start:
            return s, min(roots, key=lambda r, s=s: _miss(r, s, params, start))
        if roots:
            return s, roots[0]
    raise _fail(f"constraint '{name}' cannot be solved for a single coordinate, so the reduced "
                "form does not apply; use index1 or udwadia-kalaba")


def _miss(root: sympy.Expr, s: sympy.Symbol, params: Mapping, start: Mapping) -> float:
    """How far a branch s = root misses the initial configuration (complex values lose)."""
    try:
        value = complex(root.subs(params).subs(start).evalf())
    except TypeError:
        return float("inf")
    return abs(value - start.get(s, 0.0)) + (1e3 if abs(value.imag) > 1e-9 else 0.0)
