"""Anchors: sympy.physics.mechanics ``LagrangesMethod`` and ``KanesMethod`` on the planar
n-pendulum chain (issues 5 and 31).

The same system as ``lagsim.spec.chains.chain_yaml(n)``: n point masses m on massless rods of length
l, angles q_k from the downward vertical, positions x_k = sum l sin q_i, y_k = -sum l cos q_i,
gravity -g E_y, so U = sum m g y_k. Two ways to its equations of motion, each in the first-order
form ``mass_matrix_full @ [q', u'] = forcing_full``:

- ``lagrange``: the Euler–Lagrange equations (seed 001, Theorem 10.2) of L = T − U by
  ``LagrangesMethod`` (u = q');
- ``kane``: Kane's equations by ``KanesMethod``, generalized speeds u_k = q_k' (kinematic
  differential equations q_k' − u_k = 0), the particles and their weights −m g E_y as loads
  (no Lagrangian); the same as ``bench/build.py``'s whole-process Kane run and PyDy's input
  (``bench/peers.py``).

Both are lambdified with ``cse=True`` and integrated by ``scipy.integrate.solve_ivp`` with
``numpy.linalg.solve`` in the RHS, the usual way from sympy to a trajectory.

Stages, timed separately (each a median after a warm-up, sympy's cache cleared before each run
so that no run reuses the previous one's work):

(a) ``forming``: ``LagrangesMethod(L, q).form_lagranges_equations()`` or
    ``KanesMethod(N, q, u, kd_eqs).kanes_equations(particles, loads)`` (the Lagrangian, or the
    particles and loads, are timed as ``setup``);
(b) ``lambdify``: ``mass_matrix_full``, ``forcing_full`` and ``sympy.lambdify(..., cse=True)``;
(c) ``rhs_us``: one call of ``rhs(t, y)``;
(d) ``simulate``: 10 s from all angles 0.5 rad at rest, DOP853, rtol = atol = 1e-10.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy
from scipy.integrate import solve_ivp
from sympy.core.cache import clear_cache
from sympy.physics.mechanics import (
    KanesMethod,
    LagrangesMethod,
    Lagrangian,
    Particle,
    Point,
    ReferenceFrame,
    dynamicsymbols,
)

try:
    from timing import median_time, per_call_us
except ImportError:  # imported as bench.anchor_sympy
    from bench.timing import median_time, per_call_us

PARAMS = {"m": 1.0, "l": 1.0, "g": 9.81}
T_END = 10.0
RTOL = ATOL = 1e-10
ANGLE = 0.5


@dataclass(frozen=True)
class ChainProblem:
    """The chain's symbols and Lagrangian for ``LagrangesMethod``."""

    n: int
    q: list
    u: list
    constants: list
    lagrangian: sympy.Expr


@dataclass(frozen=True)
class KaneProblem:
    """The chain's symbols, particles and loads for ``KanesMethod`` (u_k = q_k')."""

    n: int
    q: list
    u: list
    constants: list
    frame: ReferenceFrame
    particles: list
    loads: list

    def kinematics(self) -> list:
        """The kinematic differential equations q_k' − u_k = 0."""
        return [qi.diff() - ui for qi, ui in zip(self.q, self.u, strict=True)]


METHODS = ("lagrange", "kane")
"""The anchors' ways to the equations of motion (:func:`setup` and :func:`form`)."""


@dataclass(frozen=True)
class ChainFunctions:
    """Lambdified full mass matrix and forcing, and the RHS ``solve_ivp`` calls."""

    n: int
    mass_matrix_full: Callable
    forcing_full: Callable
    rhs: Callable[[float, np.ndarray], np.ndarray]


def chain_lagrangian(n: int) -> ChainProblem:
    """Lagrangian T - U of the n-chain built from sympy.physics.mechanics particles."""
    q = list(dynamicsymbols(f"q1:{n + 1}"))
    u = [qi.diff() for qi in q]
    m, l, g = sympy.symbols("m l g")
    frame = ReferenceFrame("N")
    origin = Point("O")
    origin.set_vel(frame, 0)
    particles = []
    r = 0 * frame.x
    for k in range(n):
        r = r + l * sympy.sin(q[k]) * frame.x - l * sympy.cos(q[k]) * frame.y
        point = origin.locatenew(f"P{k + 1}", r)
        point.set_vel(frame, r.dt(frame))
        particle = Particle(f"pa{k + 1}", point, m)
        particle.potential_energy = m * g * r.dot(frame.y)
        particles.append(particle)
    return ChainProblem(n, q, u, [m, l, g], Lagrangian(frame, *particles))


def chain_bodies(n: int) -> KaneProblem:
    """The n-chain's particles, their velocities in the generalized speeds u, and their weights,
    as ``KanesMethod`` takes them."""
    q = list(dynamicsymbols(f"q1:{n + 1}"))
    u = list(dynamicsymbols(f"u1:{n + 1}"))
    m, l, g = sympy.symbols("m l g")
    frame = ReferenceFrame("N")
    origin = Point("O")
    origin.set_vel(frame, 0)
    speeds = {qi.diff(): ui for qi, ui in zip(q, u, strict=True)}
    particles, loads = [], []
    r = 0 * frame.x
    for k in range(n):
        r = r + l * sympy.sin(q[k]) * frame.x - l * sympy.cos(q[k]) * frame.y
        point = origin.locatenew(f"P{k + 1}", r)
        point.set_vel(frame, r.dt(frame).subs(speeds))
        particles.append(Particle(f"pa{k + 1}", point, m))
        loads.append((point, -m * g * frame.y))
    return KaneProblem(n, q, u, [m, l, g], frame, particles, loads)


def form_equations(problem: ChainProblem) -> LagrangesMethod:
    """Stage (a): the Euler–Lagrange equations by ``LagrangesMethod``."""
    method = LagrangesMethod(problem.lagrangian, problem.q)
    method.form_lagranges_equations()
    return method


def form_kane(problem: KaneProblem) -> KanesMethod:
    """Stage (a): Kane's equations by ``KanesMethod``."""
    method = KanesMethod(problem.frame, q_ind=problem.q, u_ind=problem.u,
                         kd_eqs=problem.kinematics())
    method.kanes_equations(problem.particles, problem.loads)
    return method


def setup(n: int, method: str = "lagrange") -> ChainProblem | KaneProblem:
    """The n-chain as ``method`` (one of :data:`METHODS`) takes it."""
    return {"lagrange": chain_lagrangian, "kane": chain_bodies}[method](n)


def form(problem: ChainProblem | KaneProblem) -> LagrangesMethod | KanesMethod:
    """Stage (a) of the method ``problem`` is set up for."""
    if isinstance(problem, KaneProblem):
        return form_kane(problem)
    return form_equations(problem)


def lambdify_chain(
    problem: ChainProblem | KaneProblem, method: LagrangesMethod | KanesMethod,
    cse: bool = True,
) -> ChainFunctions:
    """Stage (b): ``mass_matrix_full``, ``forcing_full``, lambdified (with ``cse=True`` for the
    figures; ``cse=False`` only for the side figure that explains older, slower anchor runs)."""
    args = [problem.q, problem.u, problem.constants]
    mass = sympy.lambdify(args, method.mass_matrix_full, modules="numpy", cse=cse)
    forcing = sympy.lambdify(args, method.forcing_full, modules="numpy", cse=cse)
    n = problem.n
    params = [PARAMS[str(c)] for c in problem.constants]
    solve = np.linalg.solve

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        q, u = y[:n], y[n:]
        return solve(mass(q, u, params), forcing(q, u, params)).ravel()

    return ChainFunctions(n, mass, forcing, rhs)


def initial_state(n: int, angle: float = ANGLE) -> np.ndarray:
    """All angles ``angle``, all velocities zero."""
    return np.concatenate([np.full(n, angle), np.zeros(n)])


def simulate(rhs: Callable, n: int, t_end: float = T_END) -> Any:
    """Stage (d): ``solve_ivp`` DOP853 at rtol = atol = 1e-10 from ``initial_state(n)``."""
    return solve_ivp(rhs, (0.0, t_end), initial_state(n), method="DOP853", rtol=RTOL, atol=ATOL)


def chain_functions(n: int, method: str = "lagrange") -> ChainFunctions:
    """All symbolic stages of ``method`` at once, untimed (for tests and comparisons)."""
    problem = setup(n, method)
    return lambdify_chain(problem, form(problem))


def chain_energy(n: int, y: np.ndarray) -> float:
    """Closed-form energy of the chain, 1/2 u^T M u + U, M_ij = m l^2 (n - max(i,j)) cos(q_i - q_j)
    with 0-based i, j (see tests/test_chains.py)."""
    m, l, g = PARAMS["m"], PARAMS["l"], PARAMS["g"]
    q, u = y[:n], y[n:]
    i, j = np.indices((n, n))
    mass = m * l**2 * (n - np.maximum(i, j)) * np.cos(q[i] - q[j])
    return float(0.5 * u @ mass @ u - m * g * l * np.sum((n - np.arange(n)) * np.cos(q)))


def measure(n: int, reps: int = 5, stage_budget_s: float = 60.0,
            method: str = "lagrange") -> dict[str, Any]:
    """Time stages (a)–(d) of ``method`` for the n-chain; returns a plain dict of seconds, µs
    and notes."""
    wall = time.perf_counter()
    prep = median_time(
        lambda: setup(n, method), reps, before=clear_cache, budget_s=stage_budget_s
    )
    problem = prep["result"]
    forming = median_time(
        lambda: form(problem), reps, before=clear_cache, budget_s=stage_budget_s
    )
    equations = forming["result"]
    lamb = median_time(
        lambda: lambdify_chain(problem, equations), reps, before=clear_cache,
        budget_s=stage_budget_s
    )
    funcs: ChainFunctions = lamb["result"]
    y0 = initial_state(n)
    rhs = per_call_us(funcs.rhs, 0.0, y0, reps=max(reps, 5))
    rhs_plain = per_call_us(lambdify_chain(problem, equations, cse=False).rhs, 0.0, y0, reps=3)
    sim = median_time(lambda: simulate(funcs.rhs, n), reps, budget_s=stage_budget_s)
    sol = sim["result"]
    notes = [
        f"{name}: {d['note']}"
        for name, d in (
            ("setup", prep),
            ("forming", forming),
            ("lambdify", lamb),
            ("simulate", sim),
        )
        if d["note"]
    ]
    rhs_share = sol.nfev * rhs["median"] * 1e-6 / sim["median"]
    return {
        "n": n,
        "method": method,
        "setup_s": prep["median"],
        "forming_s": forming["median"],
        "lambdify_s": lamb["median"],
        "rhs_us": rhs["median"],
        "rhs_us_without_cse": rhs_plain["median"],
        "simulate_s": sim["median"],
        "nfev": int(sol.nfev),
        "overhead_fraction": max(0.0, 1.0 - rhs_share),
        "end_to_end_s": prep["median"] + forming["median"] + lamb["median"] + sim["median"],
        "final_state": sol.y[:, -1].tolist(),
        "energy_error": abs(chain_energy(n, sol.y[:, -1]) - chain_energy(n, y0)),
        "success": bool(sol.success),
        "reps": {"forming": forming["reps"], "lambdify": lamb["reps"], "simulate": sim["reps"]},
        "notes": notes,
        "wall_s": time.perf_counter() - wall,
    }


def run(
    sizes: Sequence[int] = (1, 2, 4, 8),
    reps: int = 5,
    stop_after_s: float = 60.0,
    log: Callable[[str], None] = print,
    method: str = "lagrange",
) -> list[dict[str, Any]]:
    """``measure`` each n in turn; stop growing n once one n's single run (a)+(b)+(d) exceeds
    ``stop_after_s``."""
    results = []
    for n in sizes:
        row = measure(n, reps, method=method)
        results.append(row)
        log(
            f"sympy {method} anchor n={n}: forming {row['forming_s']:.3g} s, lambdify "
            f"{row['lambdify_s']:.3g} s, rhs {row['rhs_us']:.3g} us, simulate "
            f"{row['simulate_s']:.3g} s ({row['wall_s']:.0f} s wall)"
        )
        if row["end_to_end_s"] > stop_after_s:
            row["notes"].append(f"stopped growing n: one run took {row['end_to_end_s']:.0f} s")
            break
    return results


if __name__ == "__main__":
    import json
    import sys

    sizes = [int(a) for a in sys.argv[1:]] or [1, 2, 4]
    print(json.dumps({m: run(sizes, method=m) for m in METHODS}, indent=1))
