"""A mass matrix that is singular only along directions the constraints remove (issue 29).

``M q̈ = F + Aᵀλ, A q̈ = b`` (seed ``001_80d65b968ce3cb18.txt`` §10.7) has one solution
exactly when ``Nᵀ M N`` is positive definite, N a basis of the null space of A: the inertia that
counts is that of the motions the constraints allow. M itself may be singular: a rod written as
one body over its two end points has no kinetic energy in its stretch, which the rod constraint
removes; a massless pulley's coordinate carries no mass but is fixed by the rope. lagsim's
consistent start, projection and formulations factor M (Cholesky), so such a system runs with
the augmented Lagrangian

    L̃ = L + ½ γ Σ_k w_k²,   w_k = a_k(q, t)·q̇ + c_k(q, t) the velocity form of constraint k,

whose extra Euler–Lagrange terms γ (ẇ_k a_kᵀ + w_k (ȧ_k − ∂w_k/∂q)) vanish where w = ẇ = 0,
that is along every motion that keeps the constraints: the motion and the multipliers are those
of L, the energy is the same on the constraints, and M̃ = M + γ AᵀA is positive definite
(E. Bayo, J. García de Jalón, M. A. Serna, "A modified Lagrangian formulation for the dynamic
analysis of constrained mechanical systems", Comput. Methods Appl. Mech. Eng. 71 (1988)
183–195, whose leading matrix is the same M + Φ_qᵀ α Φ_q). γ is M's largest diagonal entry
over A's largest squared row norm at the start, so the added inertia is of M's own size.

When ``Nᵀ M N`` is singular too, the refusal names the allowed motion without inertia (the
weakest eigenvector of Nᵀ M N, mapped to δq = N v), not a direction the constraints remove.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import symengine as se

from lagsim.errors import InputError, Location
from lagsim.numeric.compile import NumericSystem, compile_model
from lagsim.numeric.memo import Memo
from lagsim.run.formulations import (
    check_mass_matrix,
    euler_angles,
    start_key,
    weakest_direction,
)
from lagsim.run.hints import singular_cause
from lagsim.spec.system import SystemSpec
from lagsim.symbolic.model import Model, assemble_model, check_regular

Report = Callable[[str], None]
Locate = Callable[[str], Location | None]


def allowed_motions(A: np.ndarray, n: int) -> np.ndarray:
    """An orthonormal basis (columns) of the null space of A (n columns; SVD, relative
    1e-10): the velocities the constraints allow."""
    if not A.size:
        return np.eye(n)
    _, s, vt = np.linalg.svd(A)
    rank = int(np.sum(s > 1e-10 * max(float(s.max(initial=0.0)), 1e-300)))
    return vt[rank:].T


def augmented_model(model: Model, gamma: float) -> Model:
    """``model`` with L̃ = L + ½γ Σ w_k² (module docstring)."""
    extra = se.Rational(1, 2) * se.Float(gamma) * se.Add(
        *(se.sympify(c.velocity_form) ** 2 for c in model.constraints))
    return assemble_model(
        name=model.name, description=model.description, coordinates=model.coordinates,
        lagrangian=se.sympify(model.lagrangian) + extra, tau=model.tau,
        constraints=model.constraints, parameters=model.parameters,
        mass_positions=model.mass_positions, rotations=model.rotations)


def _direction(v: np.ndarray, names: tuple[str, ...]) -> str:
    """``δq = (x1: 1, x2: −1)``: scaled so that its largest component (the first of equal
    ones) is 1, components below 1e-9 left out."""
    v = v / float(v[int(np.argmax(np.abs(v)))])
    parts = [f"{name}: {x:.3g}" for name, x in zip(names, v) if abs(x) > 1e-9]
    return f"δq = ({', '.join(parts)})"


REGULAR_STARTS: Memo[object] = Memo(64)
"""The starts whose mass matrix :func:`regular_inertia` found positive definite, by
:func:`lagsim.run.formulations.start_key`; each holds its compiled code, so that the code's
``id`` in the key stays its own while the entry is kept."""


def regular_inertia(model: Model, numeric: NumericSystem, spec: SystemSpec, t: float,
                    q: np.ndarray, qd: np.ndarray, locate: Locate, say: Report
                    ) -> tuple[Model, NumericSystem]:
    """(model, numeric) to run: themselves when M is positive definite at the start; the
    augmented model (module docstring) when M is singular only along directions the
    constraints remove, said through ``say``; else :class:`InputError` naming the allowed motion
    that has no inertia (and, as before, a parameter at 0 that causes it). A start found
    regular is remembered (:data:`REGULAR_STARTS`): a run from it again is not checked again."""
    key = start_key(numeric, t, q, qd)
    if key is not None and key in REGULAR_STARTS:
        return model, numeric
    try:
        check_regular(model, spec)
        check_mass_matrix(numeric, t, q, qd, locate, euler_angles(spec))
        if key is not None:
            REGULAR_STARTS.get(key, lambda: numeric.code)
        return model, numeric
    except InputError as error:
        original = error
    M, _, A, _ = numeric.dynamics(t, q, qd)
    if not model.m or not np.all(np.isfinite(M)) or not np.all(np.isfinite(A)):
        raise singular_cause(original, numeric, spec, t, q, qd)
    N = allowed_motions(A, model.n)
    if not N.shape[1]:
        raise singular_cause(original, numeric, spec, t, q, qd)
    Mr = N.T @ M @ N
    eigenvalue, _, kind = weakest_direction(Mr)
    if kind:
        w, v = np.linalg.eigh(0.5 * (Mr + Mr.T))
        motion = N @ v[:, 0]
        coordinate = model.coordinates[int(np.argmax(np.abs(motion)))]
        state = ", ".join(f"{c} = {float(x)!r}" for c, x in zip(model.coordinates, q))
        raise singular_cause(InputError(
            f"the mass matrix is {kind} at the start ({state}) on the motions the constraints "
            f"allow: the kinetic energy gives no inertia to {_direction(motion, model.coordinates)}"
            f" (eigenvalue {w[0]:.3g}); start elsewhere or give {coordinate} a mass or inertia",
            locate(coordinate)), numeric, spec, t, q, qd)
    scale = float(np.max(np.abs(np.diag(M)), initial=0.0)) or float(np.max(np.abs(Mr)))
    rows = float(np.max(np.sum(A * A, axis=1), initial=0.0))
    gamma = scale / rows
    _, v = np.linalg.eigh(0.5 * (M + M.T))
    say(f"the mass matrix is singular at the start along {_direction(v[:, 0], model.coordinates)},"
        " which the constraints remove; the constrained motion is regular, and runs with "
        f"M + γAᵀA (γ = {gamma:.3g}: the augmented Lagrangian L + ½γ Σ w², which changes "
        "nothing on the constraints; Bayo, García de Jalón and Serna 1988)")
    augmented = augmented_model(model, gamma)
    return augmented, compile_model(augmented)
