"""The Lyapunov spectrum of the double pendulum (issue 28, "Goals"): ``lagsim lyapunov`` against
a plain-numpy tangent map and against scipy's ``solve_ivp`` on the same, hand-written equations.

    .venv/bin/python bench/lyapunov.py            # T = 10 (one trajectory) and T = 10⁴
    .venv/bin/python bench/lyapunov.py --quick    # T = 10 and T = 200
    .venv/bin/python bench/lyapunov.py --t-end 10000 --no-rk4   # T = 10⁴ without the RK4
    .venv/bin/python bench/lyapunov.py --pendulum-starts 16     # the driven damped pendulum
    .venv/bin/python bench/lyapunov.py --ueda-starts 16 --ueda-t 6000   # Ueda's oscillator
    .venv/bin/python bench/lyapunov.py --sprott-t 1e7           # Sprott's driven pendulum

The system is the bundled ``double_pendulum`` (m = l = 1, g = 9.81, angles from the downward
vertical, released from rest at θ1 = θ2 = 2π/3): M = [[2, cos Δ], [cos Δ, 1]], Δ = θ1 − θ2,
F = (−sin Δ θ̇2² − 2g sin θ1, sin Δ θ̇1² − g sin θ2), and by hand ∂q̈/∂x = M⁻¹(∂F/∂x − ∂M/∂x q̈).
All three start the tangent vectors from the identity in (θ1, θ2, θ̇1, θ̇2) and re-orthonormalize
by QR every time unit (Benettin et al. 1980), so on the same trajectory they compute the same
finite-time exponents:

- lagsim: :meth:`lagsim.api.System.lyapunov`: the tangent flow stepped in the C DOP853 loop as
  the sensitivities to the initial state, started from the current vectors, with joint error
  control (rtol = atol = 1e-10; :mod:`lagsim.analysis.lyapunov`, "Where it steps"); and, over
  T = 10 only, its scipy path (``loop=False``: ``solve_ivp`` DOP853 on the Jacobian compiled
  from the symbolic model, the path constrained systems take), the same ODE to rounding;
- numpy: classical RK4 with the fixed step ``--step`` on [y, Φ], in plain numpy (2 × 2 solves
  written out);
- scipy: ``solve_ivp`` (DOP853, rtol = atol = 1e-10) on the hand-written [f; J Φ].

Two runs. Over T = 10 the three trajectories agree (errors of 1e-10 grow by e^{λ₁T} ≈ 3e6): the
exponents must agree to the digits that leaves (the check: 3 digits). Over the long run the
trajectories separate after ~20 time units and each estimate is an average over another piece
of the chaotic sea: they agree statistically, not digit for digit. Each run's standard error is
estimated from its own trace by block averages (:func:`standard_error`: the standard deviation
of λ1 over blocks of 100 time units times √(100/T)), and the check is |Δλ1| within 3 combined
standard errors. Times are measured side by side in one process; read the ratios, not the
absolute times, on a shared machine.

Measured with the C loop (2026-12-04 03:23 UTC, ``--quick``, load average 5.1 on 2 cores; the
full output in bench/lyapunov_results.md): over T = 10 the four spectra agree to 1.5e-6 (lagsim's
C loop and its scipy path to the 6 digits printed), λ = (1.186259, 0.375615, −0.198595,
−1.397850); time against lagsim's C loop (0.04 s): its scipy path 80, the hand-written
``solve_ivp`` 76, the numpy RK4 220 times. Over T = 200 λ1 = 1.439 (lagsim, block standard
error 0.043), 1.370 (RK4, 0.076) and 1.481 (``solve_ivp``, 0.10): 0.8 combined standard errors
apart at most; ``solve_ivp`` 29 and the RK4 170 times lagsim's 1.14 s. The load moves these
ratios by 2–3× (at load 1.75 the same run gave 101 and 315, the results file's first section).
Over T = 10⁴ (``--t-end 10000 --no-rk4``, load ~6): λ1 = 1.4139 (lagsim) and 1.4223
(``solve_ivp``), block standard errors 0.009 each, 0.6 combined standard errors apart: equal to 2
digits, the third beyond one run of 10⁴ (it would take ~3·10⁶ time units); ``solve_ivp`` took 56
times lagsim's 30 s at that load (5.4 s unloaded).

Published values, each its own mode (results in bench/lyapunov_results.md):

- the driven damped pendulum ẍ + 0.1ẋ + sin x = 2.5 sin t (:func:`damped_pendulum`;
  exponents (0.160, −0.262) quoted for arXiv:physics/0303077 in
  https://mathematica.stackexchange.com/questions/185364, a secondary source): 16 starts ×
  10⁴ give λ1 = 0.1602 ± 0.0009 (mean ± standard error), 0.2 standard errors from 0.160, and
  λ1 + λ2 = −0.1 to 7e-12 in every run: the published value to 2 digits;
- Ueda's oscillator ẍ + Kẋ + x³ = B cos t, K = 0.05, B = 7.5 (systems/ueda_oscillator.yaml;
  Ueda, J. Stat. Phys. 20 (1979) 181–196), whose exponents the "Lyapunov spectrum" pages
  (https://sites.google.com/view/lyapunov-spectrum/home/duffing_eqs, RK4 with the step 0.001)
  give as 0.0999 and −0.1499: 16 starts × 6000 (:func:`ueda_starts`) give lagsim 0.1046 ±
  0.0008 and an independent plain-Python RK4 (:func:`ueda_rk4`) from the same starts 0.1020 ±
  0.0013; the two agree (1.7 combined standard errors), the pages' single run lies 0.005 below
  lagsim's mean. The tolerance (rtol 1e-10 against 1e-8) and the renormalization interval (0.5
  against 2) move the exponent on one trajectory over 100 time units by 1e-4 and 0: not a bias
  of the integration. Sprott's book (*Chaos and Time-Series Analysis*, 2003) is said to
  tabulate Ueda's exponents; no stored copy shows its value, so none is quoted. The default
  run's last section compares one run of the long T with the pages (2 digits: not expected
  from one run; the many-start modes are the check);
- Sprott's driven conservative pendulum ẍ + sin x = sin 0.5t from x = ẋ = 0 (:func:`sprott`;
  "Simple Driven Conservative Chaotic Flows", http://sprott.physics.wisc.edu/chaos/drivcons.htm:
  λ = 0.163): ``--sprott-t 1e7`` (27 minutes at load ~6) gives the running estimate 0.168 at
  10⁴, 0.173 at 10⁵, 0.169 at 10⁶, 0.168–0.169 up to 7·10⁶ and 0.158 at 10⁷ (last-quarter
  spread 0.006): the published value lies within that spread, but sticky episodes (the last
  3·10⁶ time units averaged 0.13) still move the estimate by ±0.005 at 10⁷, so the second
  digit is not established; the test suite asserts nothing about it.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

G = 9.81
UEDA = Path(__file__).resolve().parents[1] / "systems" / "ueda_oscillator.yaml"
PUBLISHED = (0.0999, -0.1499)
"""The "Lyapunov spectrum" pages' exponents of Ueda's oscillator at K = 0.05, B = 7.5."""
PENDULUM = {"c": 0.1, "F0": 2.5, "w": 1.0}
"""The driven damped pendulum of :data:`PENDULUM_PUBLISHED` as parameters of the bundled one."""
PENDULUM_PUBLISHED = (0.160, -0.262)
"""The exponents of ẍ + 0.1ẋ + sin x = 2.5 sin t quoted for arXiv:physics/0303077 in
https://mathematica.stackexchange.com/questions/185364 (a secondary source)."""
Y0 = np.array([2.0 * math.pi / 3.0, 2.0 * math.pi / 3.0, 0.0, 0.0])


def accelerations(y: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """q̈, and cos Δ, sin Δ and det M for the Jacobian."""
    t1, t2, w1, w2 = y
    c, s = math.cos(t1 - t2), math.sin(t1 - t2)
    f1 = -s * w2 * w2 - 2.0 * G * math.sin(t1)
    f2 = s * w1 * w1 - G * math.sin(t2)
    det = 2.0 - c * c
    return np.array([(f1 - c * f2) / det, (2.0 * f2 - c * f1) / det]), c, s, det


def jacobian(y: np.ndarray) -> np.ndarray:
    """∂(q̇, q̈)/∂(q, q̇), written out."""
    t1, t2, w1, w2 = y
    a, c, s, det = accelerations(y)
    inv = np.array([[1.0, -c], [-c, 2.0]]) / det
    dM1 = np.array([[0.0, -s], [-s, 0.0]])
    r1 = np.array([-c * w2 * w2 - 2.0 * G * math.cos(t1), c * w1 * w1]) - dM1 @ a
    r2 = np.array([c * w2 * w2, -c * w1 * w1 - G * math.cos(t2)]) + dM1 @ a
    r3 = np.array([0.0, 2.0 * s * w1])
    r4 = np.array([-2.0 * s * w2, 0.0])
    J = np.zeros((4, 4))
    J[0, 2] = J[1, 3] = 1.0
    J[2:] = inv @ np.column_stack((r1, r2, r3, r4))
    return J


def augmented(_t: float, Y: np.ndarray) -> np.ndarray:
    y = Y[:4]
    out = np.empty(20)
    out[:2] = y[2:]
    out[2:4] = accelerations(y)[0]
    out[4:] = (jacobian(y) @ Y[4:].reshape(4, 4)).reshape(-1)
    return out


def benettin(advance: Callable[[np.ndarray, float, float], np.ndarray], t_end: float
             ) -> tuple[np.ndarray, np.ndarray]:
    """The exponents after t_end and the running estimates, QR every time unit."""
    Y = np.concatenate((Y0, np.eye(4).reshape(-1)))
    sums = np.zeros(4)
    rows = []
    for step in range(int(round(t_end))):
        Y = advance(Y, float(step), float(step + 1))
        Q, R = np.linalg.qr(Y[4:].reshape(4, 4))
        signs = np.sign(np.diag(R))
        Y[4:] = (Q * signs).reshape(-1)
        sums += np.log(np.abs(np.diag(R)))
        rows.append(sums / (step + 1))
    trace = np.array(rows)
    return trace[-1], trace


def rk4(step: float) -> Callable[[np.ndarray, float, float], np.ndarray]:
    def advance(Y: np.ndarray, t0: float, t1: float) -> np.ndarray:
        n = int(round((t1 - t0) / step))
        h = (t1 - t0) / n
        t = t0
        for _ in range(n):
            k1 = augmented(t, Y)
            k2 = augmented(t + h / 2, Y + h / 2 * k1)
            k3 = augmented(t + h / 2, Y + h / 2 * k2)
            k4 = augmented(t + h, Y + h * k3)
            Y = Y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            t += h
        return Y
    return advance


def dop853(Y: np.ndarray, t0: float, t1: float) -> np.ndarray:
    sol = solve_ivp(augmented, (t0, t1), Y, method="DOP853", rtol=1e-10, atol=1e-10)
    if not sol.success:
        raise RuntimeError(sol.message)
    return sol.y[:, -1].copy()


def ueda_rk4(T: float, x0: float = 2.5, h: float = 0.005, transient: float = 100.0,
             every: float = 2.0) -> tuple[float, float]:
    """Ueda's oscillator's two exponents by an independent implementation: classical RK4 with
    the step h in plain Python floats on (x, v) and two tangent vectors, δv̇ = −3x²δx − Kδv,
    Gram–Schmidt every ``every`` after ``transient``."""
    K, B = 0.05, 7.5

    def f(t: float, y: tuple[float, ...]) -> tuple[float, ...]:
        x, v, a, b, c, d = y
        j = -3.0 * x * x
        return (v, -K * v - x ** 3 + B * math.cos(t), b, j * a - K * b, d, j * c - K * d)

    y: tuple[float, ...] = (x0, 0.0, 1.0, 0.0, 0.0, 1.0)
    s1 = s2 = 0.0
    n_every, n_transient = int(round(every / h)), int(round(transient / h))
    for i in range(int(round((transient + T) / h))):
        t = i * h
        k1 = f(t, y)
        k2 = f(t + h / 2, tuple(p + h / 2 * k for p, k in zip(y, k1)))
        k3 = f(t + h / 2, tuple(p + h / 2 * k for p, k in zip(y, k2)))
        k4 = f(t + h, tuple(p + h * k for p, k in zip(y, k3)))
        y = tuple(p + h / 6 * (q1 + 2 * q2 + 2 * q3 + q4)
                  for p, q1, q2, q3, q4 in zip(y, k1, k2, k3, k4))
        done = i + 1 - n_transient
        if done == 0:
            y = (*y[:2], 1.0, 0.0, 0.0, 1.0)
        elif done > 0 and done % n_every == 0:
            x, v, a, b, c, d = y
            r11 = math.hypot(a, b)
            a, b = a / r11, b / r11
            r12 = a * c + b * d
            c, d = c - r12 * a, d - r12 * b
            r22 = math.hypot(c, d)
            y = (x, v, a, b, c / r22, d / r22)
            s1 += math.log(r11)
            s2 += math.log(r22)
    return s1 / T, s2 / T


def ueda_starts(starts: int, T: float, rtol: float, transient: float = 100.0) -> None:
    """Ueda's largest exponent as the mean over ``starts`` runs of length T (after
    ``transient``) from x(0) spread evenly over [−3, 3] (ẋ = 0), by ``lagsim``'s
    :func:`lagsim.analysis.lyapunov.spectrum` (DOP853 at rtol = atol = ``rtol``, the vector
    renormalized every 2) and by :func:`ueda_rk4` from the same starts; the mean with its
    standard error s/√starts against :data:`PUBLISHED`. First, on one trajectory over 100 time
    units (short enough that the runs stay on it), how much the tolerance and the renormalization
    interval move lagsim's finite-time exponent. Printed as it goes (a long run)."""
    from lagsim import api
    from lagsim.analysis.lyapunov import spectrum
    from lagsim.numeric.compile import compile_model

    base = api.open_system(UEDA)
    numeric = compile_model(base.model)

    def lagsim_largest(x0: float, t_run: float, tol: float, every: float) -> float:
        spec = api.open_system(UEDA, initial={"x": x0, "x_dot": 0.0}).spec
        return spectrum(spec, base.model, numeric, t_run + transient, transient, every, True,
                        rtol=tol, atol=tol).exponents[0]

    lines = [f"### Ueda's largest exponent: {starts} starts × T = {T:g} (after {transient:g}), "
             f"rtol = atol = {rtol:g}", ""]
    probe = [(tol, every, lagsim_largest(2.5, 100.0, tol, every))
             for tol, every in ((1e-10, 2.0), (1e-8, 2.0), (1e-10, 0.5))]
    lines += ["one trajectory (x(0) = 2.5) over 100: "
              + "; ".join(f"rtol {tol:g}, renormalize {every:g}: {lam:.8f}"
                          for tol, every, lam in probe), "",
              "| x(0) | lagsim λ1 | RK4 (h = 0.005) λ1 | lagsim time (s) |", "|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    ours, theirs = [], []
    for i in range(starts):
        x0 = -3.0 + 6.0 * (i + 0.5) / starts
        start = time.perf_counter()
        ours.append(lagsim_largest(x0, T, rtol, 2.0))
        seconds = time.perf_counter() - start
        theirs.append(ueda_rk4(T, x0=x0, transient=transient)[0])
        print(f"| {x0:.4f} | {ours[-1]:.5f} | {theirs[-1]:.5f} | {seconds:.0f} |", flush=True)
    print()
    for label, values in (("lagsim", ours), ("RK4", theirs)):
        v = np.array(values)
        se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")
        off = (float(v.mean()) - PUBLISHED[0]) / se if se > 0 else float("nan")
        print(f"{label}: mean {v.mean():.5f}, standard deviation {v.std(ddof=1):.5f}, "
              f"standard error {se:.5f}; the mean lies {off:+.1f} standard errors from the "
              f"pages' {PUBLISHED[0]}")


def block_sigma(times: np.ndarray, running: np.ndarray, start: float, length: float
                ) -> np.ndarray:
    """The finite-time exponents over consecutive blocks of ``length`` time units of one run,
    from its running estimate λ(t) = S(t)/(t − start) (S the sum of log R_ii, so the block
    values are (S(t_k + L) − S(t_k))/L)."""
    sums = np.concatenate(([0.0], running * (times - start)))
    at = np.concatenate(([start], times))
    edges = np.searchsorted(at, start + length * np.arange(int((at[-1] - start) // length) + 1)
                            - 1e-9)
    return np.diff(sums[edges]) / length


def damped_pendulum(starts: int, T: float, transient: float = 100.0) -> None:
    """The driven damped pendulum θ̈ + 0.1θ̇ + sin θ = 2.5 cos t (the bundled
    ``driven_damped_pendulum`` with c = 0.1, F0 = 2.5, w = 1: the time shift t → t + π/2 of the
    published ẍ + 0.1ẋ + sin x = 2.5 sin t, so the same attractor and exponents) from θ(0)
    spread evenly over (−π, π) at rest, each run T time units after ``transient``: the largest
    exponent's mean over the starts with its standard error s/√starts against
    :data:`PENDULUM_PUBLISHED`, and the scatter of the finite-time exponent over blocks of
    length L within the runs (σ(L), pooled), from which a run of length T has the standard
    error ≈ σ(L)·√(L/T) once L is longer than the correlation time (the check that the spread
    over starts is the one the blocks predict). Printed as it goes."""
    from lagsim import api

    print(f"### The driven damped pendulum (c = 0.1, F0 = 2.5, ω = 1): {starts} starts × "
          f"T = {T:g} (after {transient:g}), rtol = atol = 1e-10, QR every 1\n", flush=True)
    print("| θ(0) | λ1 | λ2 | λ1 + λ2 + 0.1 | last-quarter spread | time (s) |\n"
          "|---|---|---|---|---|---|", flush=True)
    finals, blocks = [], {length: [] for length in (100.0, 500.0, 2000.0)}
    for i in range(starts):
        theta = -math.pi + 2.0 * math.pi * (i + 0.5) / starts
        system = api.open_system("driven_damped_pendulum", parameters=PENDULUM,
                                 initial={"theta": theta, "theta_dot": 0.0})
        clock = time.perf_counter()
        report = system.lyapunov(t_end=T + transient, transient=transient, renormalize=1.0)
        seconds = time.perf_counter() - clock
        lam = report.exponents
        finals.append(lam[0])
        times = np.array(report.trace_times)
        for length, into in blocks.items():
            into.extend(block_sigma(times, np.array(report.trace)[:, 0], transient, length))
        print(f"| {theta:.4f} | {lam[0]:.5f} | {lam[1]:.5f} | {sum(lam) + 0.1:.1e} | "
              f"{report.spread[0]:.4f} | {seconds:.1f} |", flush=True)
    v = np.array(finals)
    se = float(v.std(ddof=1) / math.sqrt(v.size))
    print(f"\nλ1: mean {v.mean():.5f}, standard deviation between starts {v.std(ddof=1):.5f}, "
          f"standard error {se:.5f}; published {PENDULUM_PUBLISHED[0]}: "
          f"{(v.mean() - PENDULUM_PUBLISHED[0]) / se:+.1f} standard errors; max − min over the "
          f"starts {v.max() - v.min():.4f}")
    for length, values in blocks.items():
        sigma = float(np.std(values, ddof=1))
        print(f"blocks of {length:g}: σ(L) = {sigma:.4f} over {len(values)} blocks, so a run of "
              f"T = {T:g} has ≈ {sigma * math.sqrt(length / T):.4f}")


SPROTT = """\
name: sprott_driven_pendulum
parameters: {w: 0.5}
coordinates: [x]
kinetic: 1/2*x_dot**2
potential: -cos(x)
forces:
  x: sin(w*t)
initial: {x: 0, x_dot: 0}
"""
"""ẍ + sin x = sin 0.5t from x = ẋ = 0 (Sprott, "Simple Driven Conservative Chaotic Flows",
http://sprott.physics.wisc.edu/chaos/drivcons.htm: λ = 0.163, base e)."""
SPROTT_PUBLISHED = 0.163


def sprott(T: float) -> None:
    """The largest exponent of :data:`SPROTT` from its stated start by ``lagsim lyapunov
    --largest`` (DOP853, rtol = atol = 1e-10, the vector renormalized every 10), the running
    estimate printed at each decade and half-decade up to T. The system keeps areas and its
    chaotic sea holds regular islands: a trajectory sticks near their edges for long times, so
    the finite-time exponent drifts (down here) as T grows and one start's value converges
    slowly; which start is used matters, and the note's is used."""
    from lagsim import api

    system = api.open_system(SPROTT, api=True)
    clock = time.perf_counter()
    report = system.lyapunov(t_end=T, renormalize=10.0, largest=True)
    seconds = time.perf_counter() - clock
    times, running = np.array(report.trace_times), np.array(report.trace)[:, 0]
    print(f"### ẍ + sin x = sin 0.5t from rest over T = {T:g} ({seconds:.0f} s)\n\n"
          "| T | λ1 (running estimate) |\n|---|---|")
    marks = sorted({m * 10.0 ** e for e in range(3, 9) for m in (1.0, 3.0)} | {T})
    for mark in (m for m in marks if m <= T):
        print(f"| {mark:g} | {running[np.searchsorted(times, mark - 1e-6)]:.4f} |")
    print(f"\npublished {SPROTT_PUBLISHED}; the last-quarter spread {report.spread[0]:.4f}")


def spread(trace: np.ndarray) -> np.ndarray:
    tail = trace[len(trace) - max(1, len(trace) // 4):]
    return tail.max(axis=0) - tail.min(axis=0)


def measure(t_end: float, step: float, scipy_path: bool = False, numpy_rk4: bool = True
            ) -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    from lagsim import api

    system = api.open_system("double_pendulum")
    system.lyapunov(t_end=1.0)
    rows = []
    start = time.perf_counter()
    report = system.lyapunov(t_end=t_end, renormalize=1.0)
    rows.append(("lagsim lyapunov (C loop)", np.array(report.exponents),
                 np.array(report.trace), time.perf_counter() - start))
    if scipy_path:
        from lagsim.analysis.lyapunov import spectrum
        from lagsim.numeric.compile import compile_model

        numeric = compile_model(system.model)
        start = time.perf_counter()
        report = spectrum(system.spec, system.model, numeric, t_end, 0.0, 1.0, loop=False)
        rows.append(("lagsim, its scipy path", np.array(report.exponents),
                     np.array(report.trace), time.perf_counter() - start))
    for label, advance in ((f"numpy RK4 (h = {step:g})", rk4(step) if numpy_rk4 else None),
                           ("scipy solve_ivp DOP853", dop853)):
        if advance is None:
            continue
        start = time.perf_counter()
        final, trace = benettin(advance, t_end)
        rows.append((label, final, trace, time.perf_counter() - start))
    return rows


def standard_error(trace: np.ndarray) -> float:
    """The standard error of a run's final λ1 from its own trace (one row per time unit): the
    standard deviation σ(L) of λ1 over blocks of L = min(100, T/10) time units, times √(L/T)
    (blocks of 100 are ~100 e-foldings of a double pendulum's separation, so nearly
    independent)."""
    T = len(trace)
    length = float(min(100, max(1, T // 10)))
    values = block_sigma(np.arange(1.0, T + 1.0), trace[:, 0], 0.0, length)
    return float(np.std(values, ddof=1) * math.sqrt(length / T)) if len(values) > 1 else math.nan


def table(t_end: float, rows: list[tuple[str, np.ndarray, np.ndarray, float]]) -> list[str]:
    base = rows[0][3]
    lines = [f"### T = {t_end:g}", "",
             "| implementation | λ1 | λ2 | λ3 | λ4 | spread of λ1 | standard error of λ1 "
             "(blocks) | time (s) | time / lagsim |", "|---|---|---|---|---|---|---|---|---|"]
    for label, lam, trace, seconds in rows:
        lines.append(f"| {label} | " + " | ".join(f"{x:.6f}" for x in lam)
                     + f" | {spread(trace)[0]:.3g} | {standard_error(trace):.2g} | "
                       f"{seconds:.2f} | {seconds / base:.2f} |")
    reference = rows[0][1]
    worst = max(float(np.max(np.abs(lam - reference))) for _, lam, _, _ in rows[1:])
    lines += ["", f"largest |Δλ| against lagsim: {worst:.2e}", ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the long run over T = 200")
    parser.add_argument("--t-end", type=float, default=None, help="the long run's T")
    parser.add_argument("--step", type=float, default=1e-3, help="RK4's fixed step")
    parser.add_argument("--no-rk4", action="store_true",
                        help="leave the numpy RK4 out of the long run (45 minutes at T = 10⁴)")
    parser.add_argument("--ueda-starts", type=int, default=0,
                        help="only Ueda's largest exponent over this many starts")
    parser.add_argument("--ueda-t", type=float, default=2e4, help="each Ueda start's T")
    parser.add_argument("--rtol", type=float, default=1e-8, help="lagsim's rtol for those")
    parser.add_argument("--pendulum-starts", type=int, default=0,
                        help="only the driven damped pendulum's exponents over this many starts")
    parser.add_argument("--pendulum-t", type=float, default=1e4,
                        help="each pendulum start's T")
    parser.add_argument("--sprott-t", type=float, default=0.0,
                        help="only the driven conservative pendulum's exponent over this T")
    args = parser.parse_args()
    if args.sprott_t:
        print(f"load average {os.getloadavg()[0]:.2f}\n")
        sprott(args.sprott_t)
        return
    if args.pendulum_starts:
        print(f"load average {os.getloadavg()[0]:.2f}\n")
        damped_pendulum(args.pendulum_starts, args.pendulum_t)
        return
    if args.ueda_starts:
        print(f"load average {os.getloadavg()[0]:.2f}\n")
        ueda_starts(args.ueda_starts, args.ueda_t, args.rtol)
        return
    long_t = args.t_end or (200.0 if args.quick else 1e4)
    print("# Lyapunov spectrum of the double pendulum: lagsim, numpy RK4, scipy solve_ivp\n")
    print(f"load average {os.getloadavg()[0]:.2f}; QR every time unit; exponents in 1/s\n")
    short = measure(10.0, args.step, scipy_path=True)
    lines = table(10.0, short)
    worst = max(float(np.max(np.abs(lam - short[0][1]))) for _, lam, _, _ in short[1:])
    lines.append(f"one trajectory, so the same exponents to 3 digits: "
                 f"{'yes' if worst < 5e-4 else 'NO'}\n")
    long_rows = measure(long_t, args.step, numpy_rk4=not args.no_rk4)
    lines += table(long_t, long_rows)
    lam = np.array([row[1] for row in long_rows])
    errors = [standard_error(row[2]) for row in long_rows]
    apart = max(abs(lam[i][0] - lam[0][0]) / math.hypot(errors[i], errors[0])
                for i in range(1, len(long_rows)))
    lines.append("different pieces of the chaotic sea after ~20 time units, so statistics, not "
                 f"digits: the largest |Δλ1| against lagsim is {apart:.1f} combined standard "
                 "errors (blocks), " + ("within 3" if apart <= 3.0 else "MORE than 3")
                 + f"; λ1 + λ4 = {lam[0][0] + lam[0][3]:.2e}, λ2 + λ3 = "
                   f"{lam[0][1] + lam[0][2]:.2e} (lagsim)")
    from lagsim import api

    start = time.perf_counter()
    ueda = api.open_system(UEDA).lyapunov(t_end=long_t + 100.0, transient=100.0,
                                          renormalize=2.0)
    seconds = time.perf_counter() - start
    error = max(abs(a - b) for a, b in zip(ueda.exponents, PUBLISHED))
    start = time.perf_counter()
    other = ueda_rk4(long_t)
    other_seconds = time.perf_counter() - start
    lines += ["", f"### Ueda's oscillator over T = {long_t:g} (after 100)", "",
              "| | λ1 | λ2 | spread | time (s) |", "|---|---|---|---|---|",
              f"| lagsim lyapunov | {ueda.exponents[0]:.4f} | {ueda.exponents[1]:.4f} | "
              f"{ueda.spread[0]:.3g} | {seconds:.1f} |",
              f"| plain-Python RK4 (h = 0.005), another trajectory | {other[0]:.4f} | "
              f"{other[1]:.4f} | | {other_seconds:.1f} |",
              f"| lyapunov-spectrum pages (RK4, h = 0.001) | {PUBLISHED[0]} | {PUBLISHED[1]} "
              "| | |", "",
              f"largest |Δλ| {error:.4f}: the published value to 2 digits: "
              + ("yes" if error < 0.005 else "NO")]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
