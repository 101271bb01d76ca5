"""lagsim's side of the benchmark (issue 5): build, RHS and simulate figures for the chain.

Each function below touches exactly one piece of lagsim's API, so that a changed API means
editing one function:

- :func:`build` — ``load_spec`` → ``build_model`` → ``compile_model`` (docs/architecture.md),
  timed with an empty compiled-model cache (``LAGSIM_CACHE`` pointed at a new folder before each
  repetition) and again with the cache warm;
- :func:`integrator_rhs` — the function the integrator calls, ``y' = f(t, y)``: the ``rhs`` of
  ``lagsim.run.integrate.FORMULATIONS[formulation]`` with ``STABILIZERS[stabilize]`` (issue 3:
  ``ode``, ``index1`` = seed 001 §10.7 / 003, ``udwadia-kalaba`` = seed 004);
- :func:`lagsim_simulate` — one run of ``lagsim.run.integrate.simulate`` (only the final sample
  is requested, as the anchor's ``solve_ivp`` gives no dense output either);
- :func:`count_dynamics_calls` — RHS evaluations of a run, counted on a proxy of the
  ``NumericSystem`` (``Trajectory`` does not carry ``nfev``).

If an import fails, :class:`Unavailable` says why and the driver writes "not available yet".
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

try:
    from timing import median_time, per_call_us
except ImportError:  # imported as bench.lagsim_side
    from bench.timing import median_time, per_call_us

T_END = 10.0
RTOL = ATOL = 1e-10


class Unavailable(RuntimeError):
    """This part of lagsim cannot be measured yet; the message says why."""


def available() -> tuple[bool, str]:
    """Whether lagsim's pipeline imports; the reason when it does not."""
    try:
        from lagsim.numeric.compile import compile_model  # noqa: F401
        from lagsim.run.integrate import FORMULATIONS, STABILIZERS, SimulateOptions, simulate  # noqa: F401
        from lagsim.spec.system import load_spec  # noqa: F401
        from lagsim.symbolic.model import build_model  # noqa: F401
    except Exception as exc:  # any import failure means: not measurable yet
        return False, f"{type(exc).__name__}: {exc}"
    return True, ""


def write_chain(n: int, natural: bool, folder: Path, angle: float = 0.5) -> Path:
    """The chain's YAML (lagsim.spec.chains) as a file in ``folder``."""
    from lagsim.spec.chains import chain_yaml

    stem = f"chain_{n}_natural" if natural else f"chain_{n}"
    path = folder / f"{stem}_{angle!r}.yaml"
    path.write_text(chain_yaml(n, natural=natural, angle=angle), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Built:
    """What one build produces: the spec, the symbolic model and the compiled numerics."""

    spec: Any
    model: Any
    numeric: Any


def build(path: Path) -> Built:
    """YAML loaded, model built, numeric functions compiled."""
    from lagsim.numeric.compile import compile_model
    from lagsim.spec.system import load_spec
    from lagsim.symbolic.model import build_model

    spec = load_spec(path)
    model = build_model(spec)
    return Built(spec, model, compile_model(model))


def initial_state(built: Built) -> np.ndarray:
    """``[q0, q̇0]`` from the spec (missing entries 0, as in issue 2)."""
    q, qd = built.spec.initial_state()
    return np.array([*q, *qd], dtype=float)


def _options(**kwargs: Any) -> Any:
    from lagsim.run.integrate import SimulateOptions

    return SimulateOptions(**kwargs)


def integrator_rhs(
    built: Built, formulation: str = "ode", stabilize: str = "none"
) -> tuple[Callable[[float, np.ndarray], np.ndarray], np.ndarray]:
    """The RHS lagsim's integrator calls and its y0 at the spec's initial state."""
    from lagsim.run.integrate import FORMULATIONS, STABILIZERS

    numeric = built.numeric
    options = _options(formulation=formulation, stabilize=stabilize)
    form = FORMULATIONS[formulation](
        numeric, STABILIZERS[stabilize](numeric, options), built.spec, built.model
    )
    q, qd = built.spec.initial_state()
    return form.rhs, form.initial(0.0, np.array(q, dtype=float), np.array(qd, dtype=float))


def lagsim_simulate(
    built: Built,
    formulation: str = "ode",
    stabilize: str = "none",
    t_end: float = T_END,
    rtol: float = RTOL,
    atol: float = ATOL,
    numeric: Any = None,
) -> np.ndarray:
    """One DOP853 run of ``t_end`` seconds; returns the final ``[q, q̇]``."""
    from lagsim.run.integrate import simulate

    options = _options(t_end=t_end, samples=2, method="DOP853", rtol=rtol, atol=atol,
                       formulation=formulation, stabilize=stabilize)
    traj = simulate(built.spec, built.model, options, numeric=numeric or built.numeric)
    return np.concatenate((traj.q[-1], traj.qd[-1]))


class _CountingNumeric:
    """Delegates to a NumericSystem and counts ``dynamics`` calls and calls of the compiled
    ODE right-hand side (``ode_rhs``): one of them per RHS evaluation."""

    def __init__(self, numeric: Any) -> None:
        self._numeric = numeric
        self.calls = 0

    def dynamics(self, *args: Any) -> Any:
        self.calls += 1
        return self._numeric.dynamics(*args)

    def dop853_step(self) -> None:
        """No C stepper, so that every evaluation passes the counter; lagsim.run.engines.cstep
        takes the same steps as scipy's DOP853 (tests/test_ccompile.py checks nfev and the end
        state)."""
        return None

    def ode_rhs(self) -> Callable[[float, np.ndarray], np.ndarray]:
        inner = self._numeric.ode_rhs()

        def counted(t: float, y: np.ndarray) -> np.ndarray:
            self.calls += 1
            return inner(t, y)

        return counted

    def __getattr__(self, name: str) -> Any:
        return getattr(self._numeric, name)


def count_dynamics_calls(built: Built, formulation: str, stabilize: str) -> int:
    """Calls of ``numeric.dynamics`` in one run (RHS evaluations plus the few the driver
    makes for the start, the projection and the two samples). The run uses scipy's Python
    DOP853 stepper, whose steps are those of lagsim's C stepper."""
    proxy = _CountingNumeric(built.numeric)
    lagsim_simulate(built, formulation, stabilize, numeric=proxy)
    return proxy.calls


def _clear_sympy_cache() -> None:
    from sympy.core.cache import clear_cache

    clear_cache()


def _fresh_compile_cache() -> None:
    """Point lagsim's compiled-model cache (lagsim.numeric.ccompile) at a new empty folder, so that
    the next build compiles from scratch."""
    os.environ["LAGSIM_CACHE"] = tempfile.mkdtemp(prefix="lagsim-bench-cache-")


def _cold_build_before() -> None:
    """Nothing kept from an earlier build: SymPy's cache, the compile cache on disk and
    lagsim.numeric.compile's in-process memo of compiled code (keyed by the model's structure, so a
    second build of the same chain would otherwise skip deriving M and F and compiling)."""
    from lagsim.numeric import compile as compile_module

    _clear_sympy_cache()
    _fresh_compile_cache()
    compile_module.MEMO.clear()


def measure_chain(
    n: int,
    natural: bool = False,
    formulation: str = "ode",
    stabilizers: tuple[str, ...] = ("none",),
    reps: int = 5,
    folder: Path | None = None,
    stage_budget_s: float = 60.0,
) -> dict[str, Any]:
    """Build, RHS and simulate figures of lagsim for the n-chain, as a plain dict.

    ``overhead_fraction`` is 1 − nfev · (RHS time per call) / (simulate time): the share of a
    run spent outside the right-hand side.
    """
    folder = folder or Path(tempfile.mkdtemp(prefix="lagsim-bench-"))
    path = write_chain(n, natural, folder)
    saved_cache = os.environ.get("LAGSIM_CACHE")
    timed = median_time(
        lambda: build(path), reps, before=_cold_build_before, budget_s=stage_budget_s
    )
    cached = median_time(lambda: build(path), reps, before=_clear_sympy_cache,
                         budget_s=stage_budget_s)
    if saved_cache is None:
        os.environ.pop("LAGSIM_CACHE", None)
    else:
        os.environ["LAGSIM_CACHE"] = saved_cache
    built: Built = timed["result"]
    numeric = built.numeric
    y0 = initial_state(built)
    row: dict[str, Any] = {"n": n, "natural": natural, "formulation": formulation,
                           "build_s": timed["median"], "build_cached_s": cached["median"],
                           "backend": getattr(numeric, "backend", "?"), "notes": [],
                           "stabilizers": {}}
    if timed["note"]:
        row["notes"].append(f"build: {timed['note']}")
    compiled = getattr(numeric, "_dynamics", None)
    if compiled is not None:
        x = np.concatenate(([0.0], y0))
        row["compiled_call_us"] = per_call_us(compiled, x, reps=reps)["median"]
    for stabilize in stabilizers:
        rhs, y_start = integrator_rhs(built, formulation, stabilize)
        entry: dict[str, Any] = {"rhs_us": per_call_us(rhs, 0.0, y_start, reps=reps)["median"]}
        sim = median_time(
            lambda s=stabilize: lagsim_simulate(built, formulation, s),
            reps, budget_s=stage_budget_s,
        )
        final = sim["result"]
        nfev = count_dynamics_calls(built, formulation, stabilize)
        if sim["note"]:
            row["notes"].append(f"simulate {stabilize}: {sim['note']}")
        k = numeric.n
        entry.update(
            simulate_s=sim["median"],
            nfev=nfev,
            final_state=final.tolist(),
            overhead_fraction=max(0.0, 1.0 - nfev * entry["rhs_us"] * 1e-6 / sim["median"]),
            energy_error=abs(numeric.energy(T_END, final[:k], final[k:])
                             - numeric.energy(0.0, y0[:k], y0[k:])),
        )
        if numeric.holonomic:
            entry["constraint_error"] = float(np.max(np.abs(numeric.phi(T_END, final[:k])[0])))
        row["stabilizers"][stabilize] = entry
    return row


def work_precision_run(
    formulation: str, stabilize: str, tol: float, t_end: float, folder: Path, reps: int,
    theta0: float,
) -> dict[str, Any]:
    """Final bob position and run time of the pendulum released at ``theta0`` (natural
    coordinates; ``formulation='ode'`` uses the minimal one)."""
    natural = formulation != "ode"
    built = build(write_chain(1, natural, folder, angle=theta0))
    timed = median_time(
        lambda: lagsim_simulate(built, formulation, stabilize, t_end, tol, tol), reps
    )
    final = timed["result"]
    if natural:
        x, y = final[0], final[1]
    else:
        x, y = np.sin(final[0]), -np.cos(final[0])
    return {"time_s": timed["median"], "x": float(x), "y": float(y)}
