"""Fixed-step structure-preserving methods (issue 11): the shared step loop, and RATTLE.

RATTLE (H. C. Andersen, "Rattle: a 'velocity' version of the Shake algorithm for molecular
dynamics calculations", J. Comput. Phys. 52 (1983) 24–34; in the form of E. Hairer, C. Lubich,
G. Wanner, *Geometric Numerical Integration*, 2nd ed., Springer 2006, §VII.1.4) for
``M q̈ = f(q, t) + τ(q, q̇, t) + Gᵀλ``, ``φ(q) = 0``, ``G = φ_q`` (seed
``001_80d65b968ce3cb18.txt`` §10.7), with M constant. One step of size h from (q_n, v_n):

1. v_{n+½} = v_n + ½h M⁻¹(f_n + τ_n + G(q_n)ᵀλ⁽¹⁾), q_{n+1} = q_n + h v_{n+½}, with λ⁽¹⁾ such
   that φ(q_{n+1}) = 0: SHAKE, Newton's method on the multipliers λ⁽¹⁾ (m unknowns, the
   Jacobian G(q_{n+1}) ½h² M⁻¹ G(q_n)ᵀ re-evaluated at each iteration);
2. v_{n+1} = v_{n+½} + ½h M⁻¹(f_{n+1} + τ_{n+1} + G(q_{n+1})ᵀλ⁽²⁾), with λ⁽²⁾ such that
   G(q_{n+1}) v_{n+1} = 0 (the velocity constraint at the step's end: one m × m solve).

f = ∂L/∂q is the potential force (L − ½q̇ᵀMq̇ depends on q and t only, checked symbolically).
The other forces τ (``forces:``, ``loads:``, ``dissipation:``) enter as explicit half-kicks:
τ_n at the step's start state, τ_{n+1} at (q_{n+1}, 2v_{n+½} − v_n), the end velocity
extrapolated from the half step, which keeps the order 2 when τ depends on q̇ (and is τ's exact
argument when it does not). For τ = 0 the map is symplectic and keeps φ to rounding.

Both fixed-step methods (this one and :mod:`lagsim.run.engines.variational`) share
:class:`FixedStepMethod`:
the step loop runs in C (the model's functions generated with
:func:`lagsim.numeric.ccompile.c_function`
and compiled into one library with the step and the loop, cached by :mod:`lagsim.numeric.cache`), a
chunk of steps per call from Python (progress and the pace check between chunks, never per step).
Without a C compiler (or with ``LAGSIM_NO_CC``) the same loop runs in NumPy, one Python call a step.
Samples at multiples of the step are the step's state; a sample time between two steps is reached by
one partial step of the same method from the last step (so it, too, satisfies the constraints to
rounding); the run itself keeps its step. Velocities come from the method, the multipliers from the
sampled state (the augmented system of seed 003, as the other methods).
"""

from __future__ import annotations

import ctypes
import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import symengine as se

from lagsim.errors import InputError, IntegrationError
from lagsim.numeric import csource
from lagsim.numeric.csource import Status
from lagsim.numeric.memo import Memo
from lagsim.output.trajectory import Trajectory
from lagsim.run.formulations import solve_augmented
from lagsim.run.monitor import FailedRun, Pace, assemble
from lagsim.run.problem import Problem
from lagsim.spec.expressions import diff
from lagsim.symbolic.expansion import bounded_expand
from lagsim.symbolic.model import Model

MAX_NEWTON = 50
"""Newton iterations allowed per step (SHAKE, the variational step, the Legendre transform)."""
CHUNK_SECONDS = 0.05
"""Steps run per call into C: as many as take about this long (progress is updated between)."""
SAMPLE_EPS = 1e-9
"""A sample time within this fraction of a step from a step's end is that step's state."""

class StepFailed(Exception):
    """A step of the NumPy path failed with ``code``, a ``STEP_`` code of the C path's."""

    def __init__(self, code: Status) -> None:
        super().__init__(code.message)
        self.code = code


def step_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with A x = b, for a step of the NumPy path: :class:`StepFailed` (``STEP_SINGULAR``)
    when A is singular or x is not finite."""
    try:
        x = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        raise StepFailed(Status.STEP_SINGULAR) from None
    if not np.all(np.isfinite(x)):
        raise StepFailed(Status.STEP_SINGULAR)
    return x


def symbols(model: Model) -> tuple[list[se.Symbol], list[se.Symbol], list[se.Symbol]]:
    """[t, q…, q̇…], [t, q…] and the parameter symbols of ``model``."""
    t, q, qd = model.t, list(model.q), list(model.qd)
    return [t, *q, *qd], [t, *q], list(model.substitutions())


class Compiled:
    """The generated functions of one method, in C with the step loop (``run``), or as
    symengine ``Lambdify`` functions for the NumPy path (``functions``)."""

    def __init__(self, functions: Sequence[tuple[str, Sequence[se.Symbol], Sequence[se.Basic]]],
                 params: Sequence[se.Symbol], values: np.ndarray, c_body: str, state: int,
                 row_code: str, n: int, m: int, tag: str) -> None:
        from lagsim.numeric.ccompile import compiler, structure

        self.params = np.ascontiguousarray(values, dtype=float)
        self.lib: ctypes.CDLL | None = None
        self.functions: dict[str, Callable[[np.ndarray], np.ndarray]] = {}
        self.state = state
        self.m = m
        cc = compiler()
        memo = "\0".join((str(cc), tag, c_body, structure(n, m, functions, params)))

        def make() -> Code:
            built = None if cc is None else _build_c(cc, functions, params, c_body, state,
                                                     row_code, n, m, tag)
            if built is not None:
                return built
            from lagsim.numeric.compile import lambdify

            return {name: (lambdify([*args, *params], list(exprs)), len(args), len(exprs))
                    for name, args, exprs in functions}

        code = CODE.get(memo, make)
        if isinstance(code, dict):
            self.functions = {name: _bind(f, k, self.params, size)
                              for name, (f, k, size) in code.items()}
        else:
            self.lib = code


Code = ctypes.CDLL | dict[str, tuple[Callable[[np.ndarray], np.ndarray], int, int]]
"""A method's code: its C library, or (the NumPy path) each function lambdified with the sizes
of its argument and its result."""
CODE: Memo[Code] = Memo(16)
"""A method's compiled code by compiler, method and model structure, in this process (the
parameter values are bound per run)."""


def _bind(f: Callable, k: int, params: np.ndarray, size: int) -> Callable[[np.ndarray],
                                                                           np.ndarray]:
    x = np.empty(k + params.size)
    x[k:] = params

    def call(args: np.ndarray) -> np.ndarray:
        x[:k] = args
        return np.asarray(f(x), dtype=float).reshape(size)

    return call


def _build_c(cc: str, functions: Sequence[tuple[str, Sequence[se.Symbol], Sequence[se.Basic]]],
             params: Sequence[se.Symbol], c_body: str, state: int, row_code: str, n: int, m: int,
             tag: str) -> ctypes.CDLL | None:
    """The library of one method and model structure, from the compile cache or built; None
    (said on stderr) when it cannot be built."""
    from lagsim.numeric import cache
    from lagsim.numeric.ccompile import (
        RUNTIME,
        build_and_load,
        c_function,
        fallback,
        flags,
        structure,
    )

    here = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    text = "\0".join((here, c_body, structure(n, m, functions, params)))

    def source() -> str:
        parts = [f"#define FS_N {max(n, 1)}", f"#define FS_M {max(m, 1)}",
                 f"#define FS_STATE {state}", f"#define FS_ROW {2 * n}",
                 f"#define FS_EPS {SAMPLE_EPS!r}", f"#define FS_MAXIT {MAX_NEWTON}", RUNTIME,
                 csource.read("maxabs.c")]
        parts += [c_function(name, args, exprs, params) for name, args, exprs in functions]
        parts += [f"void lagsim_fs_{name}(const double *in, const double *p, double *out) "
                  f"{{ {name}(in, p, out); }}" for name, _, _ in functions]
        parts += [f"static void fs_row(const double *x, double *row) {{ {row_code} }}",
                  c_body, csource.read("fixed_step.c")]
        return "\n".join(parts)

    try:
        lib, _ = build_and_load(cc, tag, source, flags(), key_text=text)
    except cache.BuildFailed as exc:
        fallback(f"the C compiler failed on the {tag} step", str(exc))
        return None
    except Exception as exc:  # any failure here means: the NumPy loop, and say so
        fallback(f"the {tag} step could not be compiled to C ({type(exc).__name__})",
                 f"{type(exc).__name__}: {exc}")
        return None
    for name, _, _ in functions:
        func = getattr(lib, f"lagsim_fs_{name}")
        func.restype = None
        func.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    run = lib.lagsim_fs_run
    run.restype = ctypes.c_int
    run.argtypes = (ctypes.c_double, ctypes.c_double, ctypes.c_long, ctypes.c_long,
                    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p,
                    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    return lib


def step_source(name: str, n: int, m: int) -> str:
    """The C step ``fs_step`` of ``lagsim/numeric/c/<name>`` for n coordinates and m constraints
    (its macros FS_N_REAL and FS_M_REAL replaced by them)."""
    return csource.read(name).replace("FS_N_REAL", str(n)).replace("FS_M_REAL", str(m))


class FixedStepMethod:
    """A ``--method`` that steps with the fixed step ``--dt`` and keeps the constraints itself.

    What it supports is declared in :data:`lagsim.run.registry.FIXED_STEP` under its ``name``
    and read by :func:`lagsim.run.registry.check_combination` (``kinds``, ``dependent_rows``),
    and by :meth:`misfit` (what needs the symbolic model). A subclass gives
    ``prepare(problem) -> (Compiled, aux array, initial state)`` and ``step(compiled, aux, t,
    h, x) -> new state`` (the NumPy path; the C path is its ``c_body``)."""

    name: ClassVar[str] = ""

    @classmethod
    def misfit(cls, model: Model) -> str | None:
        """Why this method cannot integrate ``model`` (None when it can); symbolic checks."""
        return None

    @classmethod
    def prepare(cls, problem: Problem) -> tuple[Compiled, np.ndarray, np.ndarray]:
        raise NotImplementedError

    @classmethod
    def step(cls, compiled: Compiled, aux: np.ndarray, t: float, h: float,
             x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def run(cls, problem: Problem, progress: Callable[[float], None] | None = None
            ) -> Trajectory:
        """Step ``problem`` from t0 to t_end with the step ``--dt``; the trajectory of its
        samples."""
        options = problem.options
        why = cls.misfit(problem.model)
        if why:
            named = [c.name for c in problem.model.constraints if f" {c.name} " in why]
            raise InputError(why, options.file_location("method") or (
                problem.sources.constraint(named[0]) if named else None))
        for name in ("rtol", "atol"):
            if options.where(name) is not None:
                problem.form.report(f"{options.label(name)} does not apply to "
                                    f"{options.label('method')} {cls.name}, whose accuracy is "
                                    f"set by its step {options.label('dt')}; ignored")
        compiled, aux, state = cls.prepare(problem)
        n = problem.numeric.n
        assert options.dt is not None  # lagsim.run.registry.check_combination asks for --dt
        t0, h = problem.t0, float(options.dt)
        times = np.ascontiguousarray(options.sample_times(), dtype=np.float64)
        total = int(np.floor((options.t_end - t0) / h * (1 + 1e-12)))
        if t0 + total * h > options.t_end:
            total -= 1
        out = np.zeros((len(times), 2 * n))
        taken = np.zeros(1, dtype=np.int64 if ctypes.sizeof(ctypes.c_long) == 8 else np.int32)
        failed_at = np.zeros(1)
        pace = Pace(problem)
        k, chunk = 0, 64
        try:
            while True:
                count = min(chunk, total - k)
                started = time.monotonic()
                code = cls._call(compiled, aux, t0, h, k, count, state, times, taken, out,
                                 failed_at)
                if code:
                    status = Status(code)  # type: ignore[call-arg]  # the member of the code
                    raise IntegrationError(f"{cls.name}: {status.message} at step size "
                                           f"{h!r}; try a smaller {options.label('dt')}",
                                           time=float(failed_at[0]))
                k += count
                if count == 0:
                    break
                spent = time.monotonic() - started
                if spent < CHUNK_SECONDS:
                    chunk = min(chunk * 2, 1 << 22)
                pace(t0 + k * h)
                if progress is not None:
                    progress(min(1.0, k * h / (options.t_end - t0)))
            if progress is not None:
                progress(1.0)
        except IntegrationError as error:
            partial = _trajectory(problem, cls.name, times[:int(taken[0])],
                                  out[:int(taken[0])], "failed", str(error))
            raise FailedRun(error, partial) from None
        return _trajectory(problem, cls.name, times, out, "t_end", "")

    @classmethod
    def _call(cls, compiled: Compiled, aux: np.ndarray, t0: float, h: float, k0: int,
              nsteps: int, state: np.ndarray, times: np.ndarray, taken: np.ndarray,
              out: np.ndarray, failed_at: np.ndarray) -> int:
        if compiled.lib is not None:
            return int(compiled.lib.lagsim_fs_run(
                t0, h, k0, nsteps, state.ctypes.data, times.ctypes.data, len(times),
                taken.ctypes.data, out.ctypes.data, aux.ctypes.data, compiled.params.ctypes.data,
                failed_at.ctypes.data))
        n = out.shape[1] // 2
        row = cls.row

        def sample(x: np.ndarray) -> None:
            out[taken[0]] = row(x, n)
            taken[0] += 1

        try:
            for s in range(nsteps + 1):
                t, t1 = t0 + (k0 + s) * h, t0 + (k0 + s + 1) * h
                limit = (np.inf if nsteps == 0 else -np.inf) if s == nsteps \
                    else t1 - SAMPLE_EPS * h
                while taken[0] < len(times) and times[taken[0]] < limit:
                    failed_at[0] = times[taken[0]]
                    dt = times[taken[0]] - t
                    sample(state if dt <= SAMPLE_EPS * h
                           else cls.step(compiled, aux, t, dt, state))
                if s == nsteps:
                    break
                failed_at[0] = t1
                new = cls.step(compiled, aux, t, h, state)
                if not np.all(np.isfinite(new)):
                    return Status.STEP_NONFINITE
                state[:] = new
                while taken[0] < len(times) and times[taken[0]] <= t1 + SAMPLE_EPS * h:
                    sample(state)
        except StepFailed as failed:
            return failed.code
        return 0

    @staticmethod
    def row(x: np.ndarray, n: int) -> np.ndarray:
        """(q, v) of a state."""
        return x[:2 * n]


def _trajectory(problem: Problem, name: str, times: np.ndarray, rows: np.ndarray, reason: str,
                message: str) -> Trajectory:
    """The samples as a :class:`~lagsim.output.trajectory.Trajectory`: λ from each sampled state by
    the augmented system [[M, −Aᵀ], [A, 0]] [q̈; λ] = [F; b] (seed 003), residuals and energy
    as for every method."""
    numeric = problem.numeric
    n, m = numeric.n, numeric.m
    q, qd = rows[:, :n].copy(), rows[:, n:].copy()
    lam = np.zeros((len(times), m))
    if m:
        K = np.zeros((n + m, n + m))
        for i in range(len(times)):
            M, F, A, b = numeric.dynamics(times[i], q[i], qd[i])
            try:
                lam[i] = solve_augmented(K, M, F, A, b)[n:]
            except np.linalg.LinAlgError:
                lam[i] = np.nan
    return assemble(numeric, name, "none", np.array(times, dtype=float), q, qd, lam, reason,
                    message)


class Rattle(FixedStepMethod):
    """``--method rattle``: RATTLE (Andersen 1983) for holonomic, scleronomic constraints and a
    constant mass matrix (see the module docstring). Forces τ other than the potential's enter
    as explicit half-kicks."""

    name = "rattle"

    @classmethod
    def misfit(cls, model: Model) -> str | None:
        """Refuse a kinetic energy that is not ½q̇ᵀMq̇ with M constant, and constraints that
        depend on t: each decided on the function at the parameters' values
        (:func:`lagsim.symbolic.dependence.varying`: sin²θ + cos²θ in an entry of M is constant),
        the first varying entry of M (upper triangle, row by row) named with what it varies with."""
        from lagsim.symbolic.dependence import varying

        changing = (*model.q, *model.qd, model.t)
        values = model.substitutions()
        M = model.mass_matrix
        for i in range(model.n):
            for j in range(i, model.n):
                bad = [str(s) for s in varying(M[i, j], changing, values)]
                if bad:
                    return (f"--method rattle needs a constant mass matrix, and the entry "
                            f"({model.coordinates[i]}, {model.coordinates[j]}) depends on "
                            f"{', '.join(bad)}; use --method variational, which takes any "
                            f"Lagrangian")
        for i in range(model.n):
            linear = bounded_expand(model.momenta[i] - sum(
                (M[i, j] * model.qd[j] for j in range(model.n)), se.Integer(0)))
            if linear is None:
                return (f"--method rattle needs a kinetic energy ½ q̇ᵀ M q̇, and whether ∂L/∂"
                        f"{model.qd[i]} has terms not proportional to a velocity "
                        "cannot be checked: it multiplies out past the expansion limit "
                        "(docs/format.md, \"Limits\"); use --method variational, which takes "
                        "any Lagrangian")
            if linear != 0:
                return (f"--method rattle needs a kinetic energy ½ q̇ᵀ M q̇, and ∂L/∂"
                        f"{model.qd[i]} has terms not proportional to a velocity "
                        f"({linear}); use --method variational, which takes any Lagrangian")
        timed = [c.name for c in model.holonomic
                 if varying(c.expression, (model.t,), values)]
        if timed:
            return (f"--method rattle needs constraints that do not depend on t, and "
                    f"{timed[0]} does; use --method variational, which takes rheonomic "
                    f"constraints")
        return None

    @classmethod
    def prepare(cls, problem: Problem) -> tuple[Compiled, np.ndarray, np.ndarray]:
        model, numeric = problem.model, problem.numeric
        state_args, pos_args, params = symbols(model)
        kick = [diff(model.lagrangian, qi) + model.tau[i] for i, qi in enumerate(model.q)]
        hol = model.holonomic
        con = [c.expression for c in hol] + [r for c in hol for r in c.row]
        n, m = model.n, len(hol)
        body = step_source("rattle.c", n, m)
        values = np.array([numeric.parameters[str(s)] for s in params], dtype=float)
        compiled = Compiled((("kick", state_args, kick), ("con", pos_args, con)), params, values,
                            body, 2 * n, f"memcpy(row, x, {2 * n} * sizeof(double));", n, m,
                            "rattle")
        M = numeric.dynamics(problem.t0, problem.q0, problem.qd0)[0]
        aux = np.ascontiguousarray(np.linalg.solve(M, np.eye(n)))
        state = np.ascontiguousarray(np.concatenate((problem.q0, problem.qd0)), dtype=float)
        return compiled, aux, state

    @classmethod
    def step(cls, compiled: Compiled, aux: np.ndarray, t: float, h: float,
             x: np.ndarray) -> np.ndarray:
        """One RATTLE step in NumPy (the C path's ``fs_step``)."""
        kick, con = compiled.functions["kick"], compiled.functions["con"]
        n, m, Mi = len(x) // 2, compiled.m, aux
        q, v = x[:n], x[n:]
        vh = v + 0.5 * h * (Mi @ kick(np.concatenate(([t], q, v))))
        qt = q + h * vh
        q1 = qt.copy()
        G1 = np.zeros((0, n))
        if m:
            G0 = con(np.concatenate(([t], q)))[m:].reshape(m, n)
            B = 0.5 * h * h * (Mi @ G0.T)
            lam = np.zeros(m)
            prev = np.inf
            for it in range(MAX_NEWTON + 1):
                out = con(np.concatenate(([t + h], q1)))
                phi, G1 = out[:m], out[m:].reshape(m, n)
                err = np.abs(phi).max()
                scale = 1.0 + np.abs(G1).max() * (1.0 + np.abs(q1).max())
                if not np.isfinite(err):
                    raise StepFailed(Status.STEP_NONFINITE)
                if err <= 4e-16 * scale:
                    break
                if it >= MAX_NEWTON or (it > 4 and err >= prev):
                    if err <= 1e-12 * scale:
                        break
                    raise StepFailed(Status.STEP_NEWTON)
                prev = err
                lam += step_solve(G1 @ B, -phi)
                q1 = qt + B @ lam
            vh = vh + (B @ lam) / h
        f1 = kick(np.concatenate(([t + h], q1, 2.0 * vh - v)))
        vs = vh + 0.5 * h * (Mi @ f1)
        if m:
            MG = Mi @ G1.T
            vs = vs + 0.5 * h * (MG @ step_solve(G1 @ MG, -2.0 / h * (G1 @ vs)))
        return np.concatenate((q1, vs))
