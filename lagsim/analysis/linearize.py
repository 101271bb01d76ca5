"""The linearization about an equilibrium (issue 10): M₀ δq̈ + D δq̇ + K δq = 0, and its modes.

Linearizing M(q) q̈ = F(q, q̇) + A(q)ᵀλ (seed ``001_80d65b968ce3cb18.txt`` §10.7) about a rest
state (q*, 0, λ*) gives

    M₀ = M(q*),   D = −∂F/∂q̇,   K = −∂F/∂q − Σ_k λ*_k ∂(A_k)ᵀ/∂q      (all at q*, q̇ = 0),

the last term the constraint forces' change (for a rod, the tension times the curvature of φ).
The motion stays on the tangent space of the holonomic constraints: δq = N z with N a basis of the
null space of φ_q(q*); velocity constraints a q̇ = 0 restrict the rates further, ż = N_v u with N_v
a basis of the null space of a N. Projecting with G = N N_v removes δλ (A G = 0):

    Gᵀ M₀ G u̇ = −Gᵀ K N z − Gᵀ D G u,   ż = N_v u.

Without velocity constraints this is M_r z̈ + D_r ż + K_r z = 0 with M_r = Nᵀ M₀ N, D_r = Nᵀ D N,
K_r = Nᵀ K N; when D_r = 0 and K_r is symmetric (a conservative system) the frequencies come from
the symmetric generalized eigenproblem K_r v = ω² M_r v (exact to rounding), otherwise from the
eigenvalues s of the first-order state matrix, one mode per degree of freedom: a complex pair
s, s̄ is one mode with natural frequency |s|, damped frequency Im s and damping ratio −Re s/|s|;
real roots pair by their shapes into overdamped, neutral or unstable modes (ω_n = √(s₁s₂)); the
zero roots left over with velocity constraints are frozen directions (a displacement there stays),
no mode. Mode shapes are δq = N z in the file's coordinates, scaled so that the largest component is
1.
"""


from __future__ import annotations

import math
from typing import Any

import numpy as np

from lagsim.analysis.rest import RestEquations
from lagsim.errors import InputError
from lagsim.records import record

SINGULAR_RCOND = 1e-12


def null_space(matrix: np.ndarray, n: int) -> tuple[np.ndarray, list[int]]:
    """A basis N of the null space of ``matrix`` (rows × n) in coordinate-partitioning form
    (Wehage and Haug 1982): complete pivoting picks the dependent columns d, and the others i
    are the independent coordinates, N[i] = I, N[d] = −matrix_d⁻¹ matrix_i; so z are the
    independent coordinates themselves."""
    if matrix.size == 0:
        return np.eye(n), list(range(n))
    work = np.array(matrix, dtype=float)
    tol = 1e-10 * max(float(np.max(np.abs(work), initial=0.0)), 1e-300)
    rows, cols = list(range(work.shape[0])), list(range(n))
    dependent = []
    while rows and cols:
        sub = np.abs(work[np.ix_(rows, cols)])
        k = int(np.argmax(sub))
        if sub.flat[k] <= tol:
            break
        i, j = rows[k // len(cols)], cols[k % len(cols)]
        for r in rows:
            if r != i:
                work[r] -= work[r, j] / work[i, j] * work[i]
        dependent.append(j)
        rows.remove(i)
        cols.remove(j)
    dependent.sort()
    independent = [i for i in range(n) if i not in set(dependent)]
    N = np.zeros((n, len(independent)))
    N[independent, :] = np.eye(len(independent))
    if dependent:
        sol, *_ = np.linalg.lstsq(matrix[:, dependent], -matrix[:, independent], rcond=None)
        N[dependent, :] = sol
    N[np.abs(N) < 1e-15] = 0.0
    return N, independent


@record
class Linearization:
    """The linear equations about one equilibrium (module docstring): the full matrices
    ``M0``, ``D``, ``K`` (n×n), the tangent basis ``N`` (n×k), the velocity basis ``Nv`` (k×k_v),
    and the first-order state matrix ``S`` in x = (z, u) with its input matrix ``B``
    (generalized forces τ on the file's coordinates)."""

    q: np.ndarray
    lam: np.ndarray
    M0: np.ndarray
    D: np.ndarray
    K: np.ndarray
    N: np.ndarray
    Nv: np.ndarray
    velocity_constraints: bool
    singular: bool
    independent: tuple[str, ...] = ()
    """The coordinates z stands for (δq = N z with N[independent] = I)."""
    independent_rates: tuple[str, ...] = ()
    """The coordinates whose rates u stands for (δq̇ = N N_v u, and N_v is the identity on them:
    u are those coordinates' velocities); ``independent`` without velocity constraints."""

    @property
    def dof(self) -> int:
        return self.N.shape[1]

    @property
    def G(self) -> np.ndarray:
        return self.N @ self.Nv

    @property
    def Mr(self) -> np.ndarray:
        return self.G.T @ self.M0 @ self.G

    @property
    def Dr(self) -> np.ndarray:
        return self.G.T @ self.D @ self.G

    @property
    def Kr(self) -> np.ndarray:
        return self.G.T @ self.K @ self.N

    def conservative(self) -> bool:
        """No damping or gyroscopic terms and a symmetric K_r, without velocity constraints."""
        if self.velocity_constraints:
            return False
        Kr = self.Kr
        scale = max(float(np.max(np.abs(Kr), initial=0.0)), 1e-300)
        return (not np.any(self.D) and
                float(np.max(np.abs(Kr - Kr.T), initial=0.0)) <= 1e-10 * scale)

    def state_space(self) -> tuple[np.ndarray, np.ndarray]:
        """(S, B) with ẋ = S x + B δτ, x = (z, u); δq = N z and δq̇ = N N_v u."""
        if self.singular:
            raise InputError("the mass matrix is singular at this equilibrium (a singular point "
                             "of the coordinates, such as θ = 0 of spherical angles); linearize "
                             "in other coordinates")
        k, kv = self.N.shape[1], self.Nv.shape[1]
        solve = np.linalg.solve
        S = np.zeros((k + kv, k + kv))
        S[:k, k:] = self.Nv
        S[k:, :k] = -solve(self.Mr, self.Kr)
        S[k:, k:] = -solve(self.Mr, self.Dr)
        B = np.zeros((k + kv, self.M0.shape[0]))
        B[k:, :] = solve(self.Mr, self.G.T)
        return S, B

    def modes(self) -> tuple[Mode, ...]:
        """The modes, slowest first (module docstring)."""
        if self.singular:
            return ()
        if self.conservative():
            return self._conservative_modes()
        return self._general_modes()

    def _scale(self) -> float:
        m = max(float(np.max(np.abs(self.M0), initial=0.0)), 1e-300)
        return max(float(np.max(np.abs(self.K), initial=0.0)), float(np.max(np.abs(self.D),
                                                                             initial=0.0)) ** 2
                   / m) / m

    def _conservative_modes(self) -> tuple[Mode, ...]:
        if not self.dof:
            return ()
        Kr = 0.5 * (self.Kr + self.Kr.T)
        chol = np.linalg.cholesky(0.5 * (self.Mr + self.Mr.T))
        inv = np.linalg.inv(chol)
        w2, y = np.linalg.eigh(inv @ Kr @ inv.T)
        vectors = inv.T @ y
        tol = 1e-9 * max(float(np.max(np.abs(w2), initial=0.0)), self._scale())
        out = []
        for value, v in zip(w2, vectors.T):
            value = float(value)
            if abs(value) <= tol:
                kind, value = "neutral", 0.0
            else:
                kind = "oscillatory" if value > 0 else "unstable"
            freq = math.sqrt(value) if value > 0 else 0.0
            growth = math.sqrt(-value) if value < 0 else 0.0
            roots = ((complex(0.0, freq),) if value > 0 else
                     (complex(growth, 0.0), complex(-growth, 0.0)))
            out.append(Mode(eigenvalues=roots, omega_squared=value, frequency=freq,
                            damped_frequency=freq, damping_ratio=0.0 if value > 0 else None,
                            kind=kind, shape=_shape(self.N @ v)))
        return tuple(out)

    def _general_modes(self) -> tuple[Mode, ...]:
        return self._roots()[0]

    def frozen(self) -> tuple[Mode, ...]:
        """The zero roots of the state matrix that are no mode: directions of the configuration
        that the velocity constraints leave (k − k_v of them, a skate's sideways position): a
        displacement along them stays where it is; empty without velocity constraints."""
        if self.singular or self.conservative():
            return ()
        return self._roots()[1]

    def _roots(self) -> tuple[tuple[Mode, ...], tuple[Mode, ...]]:
        """(modes, frozen): the eigenvalues s of the state matrix grouped into modes, one per
        degree of freedom. A complex pair s, s̄ is one mode (natural frequency |s|, damped
        frequency Im s, ζ = −Re s/|s|); the real roots pair by the likeness of their shapes δq
        (exact for classical damping, where both roots of an overdamped mode share its shape)
        into overdamped modes (roots of s² + 2ζω_n s + ω_n², so ω_n = √(s₁s₂),
        ζ = −(s₁ + s₂)/(2ω_n) ≥ 1), neutral or unstable ones; real roots left over are
        :meth:`frozen`."""
        S, _ = self.state_space()
        if not S.size:
            return (), ()
        roots, vectors = np.linalg.eig(S)
        k = self.N.shape[1]
        tol = 1e-9 * max(float(np.max(np.abs(roots), initial=0.0)), math.sqrt(self._scale()))
        values = [complex(s.real if abs(s.real) > tol else 0.0,
                          s.imag if abs(s.imag) > tol else 0.0) for s in roots]
        shapes = [self.N @ v[:k] for v in vectors.T]
        oscillating = [i for i, s in enumerate(values) if s.imag > 0]
        real = [i for i, s in enumerate(values) if s.imag == 0]
        wanted = min(max(self.Nv.shape[1] - len(oscillating), 0), len(real) // 2)
        pairs = _pair_by_shape(real, shapes, wanted)
        paired = {i for pair in pairs for i in pair}
        left = [i for i in real if i not in paired]
        if self.velocity_constraints:
            resting = [(i, j) for i, j in pairs if values[i] == 0 and values[j] == 0]
            free, frozen = self._zero_root_shapes(len(resting), len(left))
            shapes = list(shapes)
            for (i, _), shape in zip(resting, free):
                shapes[i] = shape
            for i, shape in zip(left, frozen):
                shapes[i] = shape
        modes = [_mode((values[i],), shapes[i]) for i in oscillating]
        modes += [_mode((values[i], values[j]), shapes[i]) for i, j in pairs]
        modes.sort(key=lambda mode: (mode.frequency, mode.eigenvalue.real))
        return tuple(modes), tuple(_mode((values[i],), shapes[i]) for i in left)

    def _zero_root_shapes(self, resting: int, frozen: int
                          ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Shapes δq for the zero roots under velocity constraints, where the eigenvectors
        (z, 0) of a defective zero root do not say which way the system moves: the ``resting``
        neutral modes move with constant rates u that no force resists (K_r N_v u = 0,
        D_r u = 0), along δq = N N_v u, so they satisfy the velocity constraints a·δq = 0; the
        ``frozen`` directions are the rest of the rest positions K_r z = 0, the z not reached
        by those motions. Each list is empty when its count does not match the null spaces."""
        Kr, Dr = self.Kr, self.Dr
        moving = _null_basis(np.vstack([Kr @ self.Nv, Dr]))
        free = [self.G @ u for u in moving.T] if moving.shape[1] == resting else []
        still = _null_basis(Kr)
        reached = self.Nv @ moving
        if reached.size:
            basis, _ = np.linalg.qr(reached)
            still = still - basis @ (basis.T @ still)
        u, sv, _ = np.linalg.svd(still, full_matrices=False)
        kept = u[:, sv > 1e-9 * max(float(sv.max(initial=0.0)), 1e-300)]
        rest = [self.N @ z for z in kept.T] if kept.shape[1] == frozen else []
        return free, rest

    def stability(self) -> str:
        """One word or phrase for the equilibrium's stability from the linearization."""
        if self.singular:
            return "undetermined (singular mass matrix: a singular point of the coordinates)"
        modes = self.modes()
        if not modes:
            return "stable (no degree of freedom)"
        if any(m.kind == "unstable" for m in modes):
            return "unstable"
        if any(m.kind == "neutral" for m in modes) or self.frozen():
            return "neutral (zero-frequency directions: the linearization does not decide)"
        if all(s.real < 0 for m in modes for s in m.eigenvalues):
            return "asymptotically stable"
        if self.conservative():
            return "stable"
        return "linearly stable (undamped modes: nonlinear stability not decided)"


def _null_basis(matrix: np.ndarray) -> np.ndarray:
    """An orthonormal basis (columns) of the null space of ``matrix`` (SVD, relative 1e-9)."""
    cols = matrix.shape[1]
    if not matrix.size:
        return np.eye(cols)
    _, sv, vt = np.linalg.svd(matrix)
    rank = int(np.sum(sv > 1e-9 * max(float(sv.max(initial=0.0)), 1e-300)))
    return vt[rank:].T


def _pair_by_shape(real: list[int], shapes: list[np.ndarray], count: int
                   ) -> list[tuple[int, int]]:
    """``count`` disjoint pairs of the real roots ``real``, the most alike shapes first
    (|cos| of the angle between them), each pair with its larger root first."""
    def likeness(i: int, j: int) -> float:
        a, b = shapes[i], shapes[j]
        size = float(np.linalg.norm(a) * np.linalg.norm(b))
        return abs(complex(np.vdot(a, b))) / size if size > 0 else 0.0

    candidates = sorted(((likeness(i, j), i, j) for x, i in enumerate(real)
                         for j in real[x + 1:]), key=lambda c: -c[0])
    used: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for _, i, j in candidates:
        if len(pairs) == count:
            break
        if i in used or j in used:
            continue
        used |= {i, j}
        pairs.append((i, j))
    return pairs


def _mode(roots: tuple[complex, ...], shape: np.ndarray) -> Mode:
    """The mode of one complex root (Im s > 0, standing for s and s̄) or of a pair of real
    roots (see :meth:`Linearization._roots`)."""
    if len(roots) == 1 and roots[0].imag > 0:
        s = roots[0]
        kind = "unstable" if s.real > 0 else "oscillatory" if s.real == 0 else "damped"
        return Mode(eigenvalues=roots, omega_squared=None, frequency=abs(s),
                    damped_frequency=s.imag, damping_ratio=-s.real / abs(s), kind=kind,
                    shape=_shape(shape))
    roots = tuple(sorted(roots, key=lambda s: -s.real))
    big, small = roots[0].real, roots[-1].real
    product = big * small if len(roots) == 2 else None
    if big > 0:
        kind = "unstable"
    elif big == 0:
        kind = "neutral" if len(roots) == 2 else "frozen"
    else:
        kind = "overdamped"
    natural = math.sqrt(product) if kind == "overdamped" and product else 0.0
    zeta = -(big + small) / (2.0 * natural) if natural else None
    return Mode(eigenvalues=roots, omega_squared=None, frequency=natural, damped_frequency=0.0,
                damping_ratio=zeta, kind=kind, shape=_shape(shape))


def _shape(v: np.ndarray) -> tuple[complex, ...] | tuple[float, ...]:
    """A mode shape scaled so that its largest component is 1 (real when it can be)."""
    v = np.asarray(v)
    if not v.size:
        return ()
    big = v[int(np.argmax(np.abs(v)))]
    if big == 0:
        return tuple(float(x) for x in np.real(v))
    v = v / big
    v = np.where(np.abs(v) < 1e-13, 0.0, v)
    if np.all(np.abs(np.imag(v)) <= 1e-12):
        return tuple(float(x) for x in np.real(v))
    return tuple(complex(x) for x in v)


@record
class Mode:
    """One mode: its roots s of the state matrix (``eigenvalues``: iω for an undamped mode, the
    one of a complex pair with Im s > 0 standing for both, or a pair of real roots, largest
    first: an overdamped, neutral or unstable mode), ω² of the conservative problem (None
    otherwise), the natural frequency ω_n = |s| (√(s₁s₂) for an overdamped pair) and the damped
    frequency ω_d = Im s in rad/s (the oscillation seen; ω_d = ω_n √(1 − ζ²)), the damping ratio
    ζ = −Re s/|s| (−(s₁ + s₂)/(2ω_n) for an overdamped pair; None for a neutral or unstable
    one), its kind and its shape δq in the file's coordinates."""

    eigenvalues: tuple[complex, ...]
    omega_squared: float | None
    frequency: float
    damped_frequency: float
    damping_ratio: float | None
    kind: str
    shape: tuple[Any, ...]

    @property
    def eigenvalue(self) -> complex:
        """The mode's first root: Im s > 0 of a complex pair, the larger of a real pair (the
        growth rate of an unstable mode, the slower decay of an overdamped one)."""
        return self.eigenvalues[0]

    @property
    def hertz(self) -> float:
        return self.frequency / (2.0 * math.pi)

    @property
    def damped_hertz(self) -> float:
        return self.damped_frequency / (2.0 * math.pi)

    def rates(self) -> str:
        """The real roots said in words: growth and decay rates (empty for a complex pair)."""
        if self.eigenvalue.imag != 0:
            return ""
        growth = [f"{s.real:.6g}" for s in self.eigenvalues if s.real > 0]
        decay = [f"{-s.real:.6g}" for s in self.eigenvalues if s.real < 0]
        words = [f"{name} rate{'s' * (len(values) > 1)} {' and '.join(values)} 1/s"
                 for name, values in (("growth", growth), ("decay", decay)) if values]
        return f" ({', '.join(words)})" if words else ""

    def to_dict(self, coordinates: tuple[str, ...]) -> dict[str, Any]:
        real = [float(np.real(x)) for x in self.shape]
        imag = [float(np.imag(x)) for x in self.shape]
        out = {
            "kind": self.kind,
            "frequency_rad_s": self.frequency,
            "frequency_hz": self.hertz,
            "damped_frequency_rad_s": self.damped_frequency,
            "damped_frequency_hz": self.damped_hertz,
            "damping_ratio": self.damping_ratio,
            "omega_squared": self.omega_squared,
            "eigenvalue": {"re": self.eigenvalue.real, "im": self.eigenvalue.imag},
            "eigenvalues": [{"re": s.real, "im": s.imag} for s in self.eigenvalues],
            "shape": dict(zip(coordinates, real)),
        }
        if any(imag):
            out["shape_imag"] = dict(zip(coordinates, imag))
        return out


def linearize(eqs: RestEquations, q: np.ndarray, lam: np.ndarray) -> Linearization:
    """The linearization about the rest state (q, λ) of the rest equations ``eqs``."""
    n = eqs.n
    q = np.asarray(q, dtype=float)
    lam = np.asarray(lam, dtype=float)
    A = eqs.evaluate(np.concatenate([q, lam]))["A"]
    if lam.size:
        floor = 1e-12 * eqs.force_scale(q) / max(float(np.max(np.abs(A), initial=0.0)), 1e-300)
        lam = np.where(np.abs(lam) <= floor, 0.0, lam)
    parts = eqs.evaluate(np.concatenate([q, lam]))
    K = -parts["J"][:n, :n]
    D = -parts["DF"]
    M0 = parts["M"]
    kinds = [c.kind for c in eqs.model.constraints]
    hol = A[[k for k, kind in enumerate(kinds) if kind == "holonomic"]]
    vel = A[[k for k, kind in enumerate(kinds) if kind == "velocity"]]
    N, independent = null_space(hol, n)
    if vel.size:
        if np.any(np.abs(parts["c_q"] @ N) > 1e-12):
            raise InputError("a velocity constraint's offset c(q) changes with q at this "
                             "equilibrium; the linearization of such constraints is not "
                             "supported")
        Nv, rates = null_space(vel @ N, N.shape[1])
    else:
        Nv, rates = np.eye(N.shape[1]), list(range(N.shape[1]))
    G = N @ Nv
    Mr = G.T @ M0 @ G
    singular = bool(Mr.size) and (not np.all(np.isfinite(Mr))
                                  or np.linalg.cond(Mr) > 1.0 / SINGULAR_RCOND)
    return Linearization(q=q, lam=lam, M0=M0, D=D, K=K, N=N, Nv=Nv,
                         velocity_constraints=bool(vel.size), singular=singular,
                         independent=tuple(eqs.names[i] for i in independent),
                         independent_rates=tuple(eqs.names[independent[i]] for i in rates))
