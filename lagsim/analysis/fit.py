"""Parameters and initial values fitted to measured columns (issue 26, ``lagsim fit``).

The model's columns y(t_k; θ) at the data's times are fitted to the data d_k by least squares,
min_θ ½ Σ_k |y(t_k; θ) − d_k|², with scipy's ``least_squares`` (trust-region reflective, so
``--bounds`` hold) and the exact sensitivities ∂y/∂θ of ``simulate --sensitivities``
(:mod:`lagsim.run.sensitivity`) as its Jacobian J: no finite differences.

At the optimum (Bates and Watts, "Nonlinear Regression Analysis and Its Applications", Wiley
1988, §2.3; Seber and Wild, "Nonlinear Regression", Wiley 1989, §2.1 and §3.4):

* the residual variance s² = |r|²/(N − p), N residuals and p fitted values;
* the covariance s² (JᵀJ)⁻¹, its square roots on the diagonal the standard errors, and the
  correlation matrix;
* identifiability from the singular values σ of J scaled by the values (columns ∂y/∂ln θ): the
  rank (σ_k > :data:`RANK_RTOL` σ_max) and the condition number (σ_max/σ_min)² of JᵀJ. A
  direction v with σ ≈ 0 changes no observed column: the data do not determine it. A value with
  a share of such a direction gets no standard error ("not determined"), and the directions
  that the data do determine among such values are printed as products of powers
  (a pendulum's θ(t) fixes g/l: ``l^1 g^-1``), each with its relative standard error.

Weights (``--weights``, relative) multiply each column's squared residuals, w_c |y_c − d_c|²,
and the residual variance is still estimated; ``--sigma`` gives each column's measurement
standard deviation, weights w_c = 1/σ_c², and then the covariance is (JᵀWJ)⁻¹ with σ known, not
scaled by s², and χ²/(N − p) is reported as the check of σ (Bates and Watts §3.10, Seber and Wild
§2.1.4: its expectation is 1 when σ is right).

Several starts (``--starts N``): the start the file gives and N − 1 drawn uniformly within the
bounds (seeded); the fit with the least sum of squares is reported with how many starts reached
the same estimates (to :data:`AGREE_RTOL`) and how many failed: a least-squares problem of a
nonlinear model can have several local minima (a pendulum's frequency fitted from far away
locks onto a harmonic), and starts that agree are evidence that the minimum found is the global
one within the bounds.

The errors are one line each (exit 2): data columns not in the model, too few samples, a NaN,
a time column that does not increase; a fit that does not converge is :class:`FitError`
(exit 1) with the best point so far.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

import numpy as np

from lagsim import naming
from lagsim.errors import InputError, LagsimError, Location
from lagsim.output.io import Table, read_csv
from lagsim.output.trajectory import Trajectory
from lagsim.records import record
from lagsim.spec.options import FIT_BY_NAME, FIT_OPTIONS, WORDING, Naming, SimulateOptions
from lagsim.spec.system import SystemSpec

RANK_RTOL = 1e-7
"""A scaled singular value below this fraction of the largest counts as zero (JᵀJ's condition
number above 1e14, the square of the inverse)."""
NULL_SHARE = 1e-6
"""A value whose component in the undetermined directions exceeds this is not determined."""
AGREE_RTOL = 1e-6
"""Two starts agree when each estimate is the same to this fraction of the best one's size
(or its standard error, when larger)."""

Simulate = Callable[[Mapping[str, float]], Trajectory]
"""A run at the given values of the fitted names, sampled at the data's times, with the
sensitivities of the fitted names."""


Runner = Callable[[Mapping[str, float], Mapping[str, float], Mapping[str, Any], np.ndarray,
                   Callable[[str], None] | None], Trajectory]
"""``runner(parameters, initial, options, times, report)``: one run of the system with those
parameters and initial values (over the spec's), the run options ``options`` (by name), sampled
at ``times``, its notes to ``report`` (the API's run, or a sweep worker's session)."""


class FitError(LagsimError):
    """The fit did not converge (exit 1); the message gives the best point so far."""

    exit_code = 1


@record
class Data:
    """The measured columns: times ``t`` (increasing) and ``values`` (N, k) of ``columns``."""

    source: str
    t: np.ndarray
    columns: tuple[str, ...]
    values: np.ndarray


def check_data(table: Table, model_columns: Sequence[str], observe: Sequence[str] | None,
               fitted: int) -> Data:
    """The observed columns of ``table`` (``observe``, default every column but ``t``), checked:
    each a column of the model, no NaN, ``t`` increasing, more numbers than fitted values."""
    where = Location(table.source)
    if naming.TIME not in table.columns:
        raise InputError("the data have no time column 't'", where)
    names = tuple(observe) if observe else tuple(c for c in table.columns if c != naming.TIME)
    for name in names:
        if name not in table.columns:
            raise InputError(f"--observe names '{name}', which is not a column of the data; "
                             f"they are {', '.join(table.columns)}", where)
        if name not in model_columns:
            raise InputError(f"data column '{name}' is not a coordinate, velocity or multiplier "
                             f"of the model; they are {', '.join(model_columns)}", where)
    if not names:
        raise InputError("the data have no column to fit besides 't'", where)
    t = table.column(naming.TIME)
    values = np.column_stack([table.column(c) for c in names])
    for k, column in enumerate((naming.TIME, *names)):
        data = t if k == 0 else values[:, k - 1]
        bad = np.flatnonzero(~np.isfinite(data))
        if bad.size:
            raise InputError(f"data row {int(bad[0]) + 1}, column '{column}': {data[bad[0]]} is "
                             "not a finite number", Location(table.source, int(bad[0]) + 2))
    steps = np.diff(t)
    if np.any(steps <= 0):
        k = int(np.flatnonzero(steps <= 0)[0])
        raise InputError(f"the time column does not increase: data row {k + 2} has t = "
                         f"{float(t[k + 1])!r} after {float(t[k])!r}",
                         Location(table.source, k + 3))
    if values.size <= fitted:
        raise InputError(f"{values.size} data value{'s' * (values.size != 1)} cannot fit "
                         f"{fitted} unknown{'s' * (fitted != 1)}: give more samples or fit "
                         "fewer names", where)
    return Data(table.source, np.array(t), names, values)


@record
class FitReport:
    """The estimates and what the data determine (module docstring)."""

    names: tuple[str, ...]
    estimates: tuple[float, ...]
    standard_errors: tuple[float | None, ...]
    correlation: tuple[tuple[float | None, ...], ...]
    residual_variance: float
    samples: int
    residuals: int
    rank: int
    condition: float
    determined: tuple[tuple[str, float, float], ...]
    """(combination as text, value, relative standard error) for directions the data fix among
    values they do not fix one by one."""
    undetermined: tuple[str, ...]
    runs: int
    observed: tuple[str, ...]
    weighting: str = "none"
    """``none``, ``weights`` (relative: s² estimated) or ``sigma`` (σ known: the residual
    variance field is χ²/(N − p))."""
    starts: int = 1
    agreed: int = 1
    """The starts whose estimates are the best ones to :data:`AGREE_RTOL`."""
    failed: int = 0
    """The starts whose fit failed (a run failed or least squares did not converge)."""
    data: Data | None = field(default=None, compare=False, repr=False)
    """The data fitted (for ``--plot``)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimates": {n: {"value": v, "standard_error": e}
                          for n, v, e in zip(self.names, self.estimates, self.standard_errors)},
            "correlation": [list(row) for row in self.correlation],
            "residual_variance": self.residual_variance, "weighting": self.weighting,
            "observed": list(self.observed), "samples": self.samples,
            "residuals": self.residuals, "runs": self.runs,
            "starts": {"count": self.starts, "agreed": self.agreed, "failed": self.failed},
            "identifiability": {
                "rank": self.rank, "parameters": len(self.names),
                "condition_JtJ": self.condition,
                "determined_combinations": [
                    {"combination": c, "value": v, "relative_standard_error": e}
                    for c, v, e in self.determined],
                "undetermined_directions": list(self.undetermined)},
        }

    def to_text(self) -> str:
        width = max(len(n) for n in self.names)
        lines = [f"fit of {', '.join(self.observed)} at {self.samples} samples "
                 f"({self.runs} runs)", ""]
        for name, value, error in zip(self.names, self.estimates, self.standard_errors):
            shown = (f"± {error:.3g}" if error is not None
                     else "  not determined by these data (see below)")
            lines.append(f"  {name:<{width}} = {value:.10g} {shown}")
        counted = f"({self.residuals} residuals, {len(self.names)} fitted)"
        if self.weighting == "sigma":
            lines += ["", f"χ²/(N − p) = {self.residual_variance:.6g} {counted}: near 1 when "
                          f"{WORDING.get().flag('--sigma')} is right; the standard errors "
                          "are from σ"]
        else:
            weighted = "weighted " if self.weighting == "weights" else ""
            lines += ["", f"{weighted}residual variance s² = {self.residual_variance:.6g} "
                          f"{counted}"]
        if self.starts > 1:
            lines += ["", f"starts: {self.starts}; {self.agreed} reached these estimates (to "
                          f"{AGREE_RTOL:g} relative), {self.failed} failed"]
        if len(self.names) > 1:
            lines += ["", "correlation:"]
            for name, row in zip(self.names, self.correlation):
                cells = " ".join("      —" if c is None else f"{c:7.3f}" for c in row)
                lines.append(f"  {name:<{width}} {cells}")
        lines += ["", f"identifiability: rank {self.rank} of {len(self.names)}, condition of "
                      f"JᵀJ (relative sensitivities) {self.condition:.3g}"]
        for text in self.undetermined:
            lines.append(f"  not determined: {text}")
        for combination, value, error in self.determined:
            lines.append(f"  determined: {combination} = {value:.10g} "
                         f"(relative standard error {error:.3g})")
        return "\n".join(lines) + "\n"


def _power_text(names: Sequence[str], powers: np.ndarray) -> str:
    return " ".join(f"{n}^{p:.3g}" for n, p in zip(names, powers) if abs(p) > 1e-3)


def fit(data: Data, names: Sequence[str], start: Mapping[str, float],
        bounds: Mapping[str, tuple[float, float]], simulate: Simulate,
        max_runs: int = 200, weights: Mapping[str, float] | None = None,
        sigma: Mapping[str, float] | None = None, starts: int = 1, seed: int = 0
        ) -> FitReport:
    """Least squares of the observed columns over ``names`` from ``start`` within ``bounds``
    (module docstring); ``simulate(values)`` runs the model with its sensitivities. ``weights``
    or ``sigma`` weigh the columns, ``starts`` > 1 adds starts drawn with ``seed``;
    ``max_runs`` bounds the runs of each start."""
    from scipy.optimize import least_squares

    names = tuple(names)
    p = len(names)
    lo = np.array([bounds.get(n, (-math.inf, math.inf))[0] for n in names])
    hi = np.array([bounds.get(n, (-math.inf, math.inf))[1] for n in names])
    x0 = np.clip(np.array([start[n] for n in names], dtype=float), lo, hi)
    factor = column_factors(data, weights, sigma)
    others = draw_starts(names, lo, hi, starts - 1, seed)
    memo: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    runs = [0]

    def evaluate(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = x.tobytes()
        if key not in memo:
            memo.clear()
            runs[0] += 1
            trajectory = simulate(dict(zip(names, map(float, x))))
            k = len(trajectory) - len(data.t)
            model = np.column_stack([trajectory[c][k:] for c in data.columns])
            r = ((model - data.values) * factor).ravel()
            J = np.stack([(np.column_stack([trajectory[naming.sensitivity(c, n)][k:]
                                            for c in data.columns]) * factor).ravel()
                          for n in names], axis=1)
            memo[key] = (r, J)
        return memo[key]

    best: list[tuple[float, np.ndarray]] = []
    try:
        J0 = evaluate(x0)[1] * np.where(x0 != 0, np.abs(x0), 1.0)
    except LagsimError as error:
        raise FitError(f"the run at the start failed ({error.message})") from None
    norms = np.linalg.norm(J0, axis=0)
    free = norms > RANK_RTOL * norms.max() if norms.max() > 0 else np.zeros(p, dtype=bool)
    if not free.any():
        raise InputError(f"the observed columns ({', '.join(data.columns)}) do not depend on "
                         f"{', '.join(names)}: there is nothing to fit")

    def full(y: np.ndarray) -> np.ndarray:
        x = x0.copy()
        x[free] = y
        return x

    def residual(y: np.ndarray) -> np.ndarray:
        x = full(y)
        r = evaluate(x)[0]
        cost = float(r @ r)
        if not best or cost < best[0][0]:
            best[:] = [(cost, x.copy())]
        return r

    def solve(first: np.ndarray) -> np.ndarray:
        result = least_squares(residual, first[free],
                               jac=lambda y: evaluate(full(y))[1][:, free],
                               bounds=(lo[free], hi[free]), x_scale="jac", max_nfev=max_runs,
                               xtol=1e-12, ftol=1e-12, gtol=1e-12)
        if result.status <= 0:
            raise FitError(f"the fit did not converge after {runs[0]} runs ({result.message})"
                           f"{_best(names, best)}")
        return full(result.x)

    firsts = [x0, *others]
    found: list[tuple[float, np.ndarray]] = []
    failures: list[str] = []
    for first in firsts:
        try:
            x = solve(first)
        except LagsimError as error:
            if starts == 1:
                if isinstance(error, FitError):
                    raise
                raise FitError(f"the fit stopped: a run failed ({error.message})"
                               f"{_best(names, best)}") from None
            failures.append(error.message)
            continue
        r = evaluate(x)[0]
        found.append((float(r @ r), x))
    if not found:
        raise FitError(f"none of the {starts} starts converged (the first: {failures[0]})"
                       f"{_best(names, best)}")
    x = min(found, key=lambda item: item[0])[1]
    known = bool(sigma)
    r, J = evaluate(x)
    dof = r.size - p
    s2 = float(r @ r) / dof
    variance = 1.0 if known else s2
    scale = np.where(x != 0, np.abs(x), 1.0)
    sv_f, Vt_f = np.linalg.svd(J[:, free] * scale[free], full_matrices=False)[1:]
    sv = np.concatenate((sv_f, np.zeros(int((~free).sum()))))
    Vt = np.zeros((p, p))
    Vt[:len(sv_f), free] = Vt_f
    Vt[len(sv_f):, ~free] = np.eye(int((~free).sum()))
    keep = sv > RANK_RTOL * sv[0]
    rank = int(keep.sum())
    condition = float((sv[0] / sv[-1]) ** 2) if sv[-1] > 0 else math.inf
    V, null = Vt[keep].T, Vt[~keep].T
    cov_scaled = variance * (V / sv[keep] ** 2) @ V.T
    share = np.sqrt((null**2).sum(axis=1)) if null.size else np.zeros(p)
    fixed = share <= NULL_SHARE
    cov = cov_scaled * np.outer(scale, scale)
    errors = tuple(float(math.sqrt(max(cov[i, i], 0.0))) if fixed[i] else None for i in range(p))
    correlation = tuple(tuple(
        float(cov[i, j] / math.sqrt(cov[i, i] * cov[j, j]))
        if fixed[i] and fixed[j] and cov[i, i] > 0 and cov[j, j] > 0 else None
        for j in range(p)) for i in range(p))
    undetermined = [f"{names[i]} (the observed columns do not depend on it: it was held at "
                    "its start value)" for i in np.flatnonzero(~free)]
    null = null[:, np.abs(null[~free]).max(axis=0, initial=0.0) == 0.0]
    for v in null.T:
        involved = [i for i in range(p) if abs(v[i]) > NULL_SHARE]
        if len(involved) == 1:
            undetermined.append(f"{names[involved[0]]} (the observed columns do not depend "
                                "on it here)")
        else:
            powers = v / v[involved[0]]
            undetermined.append(f"{', '.join(names[i] for i in involved)} changed together, "
                                "relative changes in the ratio "
                                f"{' : '.join(f'{powers[i]:.3g}' for i in involved)}, leave "
                                "the observed columns unchanged")
    determined = []
    for powers in _combinations(null, ~fixed & free):
        if np.all(x[powers != 0] > 0):
            value = float(np.prod(x ** powers))
            text = _power_text(names, powers)
        else:
            value = float(powers @ (x / scale))
            text = " + ".join(f"{pw:.3g}*{n}/{s:.6g}" for n, pw, s in zip(names, powers, scale)
                              if pw)
        spread = float(math.sqrt(max(powers @ cov_scaled @ powers, 0.0)))
        determined.append((text, value, spread))
    size = np.maximum(np.abs(x), [e or 0.0 for e in errors])
    agreed = sum(bool(np.all(np.abs(y - x) <= AGREE_RTOL * np.maximum(size, 1e-300)))
                 for _, y in found)
    return FitReport(names=names, estimates=tuple(map(float, x)), standard_errors=errors,
                     correlation=correlation, residual_variance=s2, samples=len(data.t),
                     residuals=int(r.size), rank=rank, condition=condition,
                     determined=tuple(determined), undetermined=tuple(undetermined),
                     runs=runs[0], observed=data.columns,
                     weighting="sigma" if sigma else "weights" if weights else "none",
                     starts=starts, agreed=agreed, failed=len(failures), data=data)


def column_factors(data: Data, weights: Mapping[str, float] | None,
                   sigma: Mapping[str, float] | None) -> np.ndarray:
    """The factor of each observed column's residuals: √w_c, or 1/σ_c; a name that is not an
    observed column, both kinds at once, or a column without σ is an :class:`InputError`."""
    where = Location(data.source)
    if weights and sigma:
        raise InputError("give --weights (relative) or --sigma (absolute), not both", where)
    given, label = (sigma, "--sigma") if sigma else (weights or {}, "--weights")
    for name in given:
        if name not in data.columns:
            raise InputError(f"{label} names '{name}', which is not an observed column; they "
                             f"are {', '.join(data.columns)}", where)
    if sigma:
        missing = [c for c in data.columns if c not in sigma]
        if missing:
            raise InputError(f"--sigma gives no σ for {', '.join(missing)}: give every "
                             "observed column's (or use relative --weights)", where)
        return np.array([1.0 / sigma[c] for c in data.columns])
    return np.array([math.sqrt(given.get(c, 1.0)) for c in data.columns])


def draw_starts(names: Sequence[str], lo: np.ndarray, hi: np.ndarray, count: int, seed: int
                ) -> list[np.ndarray]:
    """``count`` starts drawn uniformly within the bounds (numpy's default_rng(seed)); every
    name needs both bounds (:class:`InputError` otherwise)."""
    if count <= 0:
        return []
    open_ = [n for n, a, b in zip(names, lo, hi) if not (math.isfinite(a) and math.isfinite(b))]
    if open_:
        raise InputError(f"--starts {count + 1} draws starts within --bounds: give both bounds "
                         f"of {', '.join(open_)} (e.g. --bounds {open_[0]}=0.1:5)")
    rng = np.random.default_rng(seed)
    return [lo + (hi - lo) * rng.random(len(names)) for _ in range(count)]


def _combinations(null: np.ndarray, loose: np.ndarray) -> list[np.ndarray]:
    """Exponent vectors a over the ``loose`` values (those with a share of the undetermined
    directions ``null``, columns) with aᵀ null = 0: the combinations Π θ_i^{a_i} the data do
    determine, as a reduced row echelon basis (pivot exponent 1), so that each names as few
    values as it can (``l^1 g^-1``)."""
    index = np.flatnonzero(loose)
    if not index.size:
        return []
    N = null[index]
    U, sigma, _ = np.linalg.svd(N, full_matrices=True)
    rank = int(np.sum(sigma > NULL_SHARE))
    B = U[:, rank:].T.copy()
    row = 0
    for col in range(B.shape[1]):
        if row == B.shape[0]:
            break
        pivot = row + int(np.argmax(np.abs(B[row:, col])))
        if abs(B[pivot, col]) < 1e-9:
            continue
        B[[row, pivot]] = B[[pivot, row]]
        B[row] /= B[row, col]
        for other in range(B.shape[0]):
            if other != row:
                B[other] -= B[other, col] * B[row]
        row += 1
    out = []
    for b in B[:row]:
        powers = np.zeros(len(loose))
        powers[index] = np.where(np.abs(b) < 1e-9, 0.0, b)
        out.append(powers)
    return out


def _best(names: Sequence[str], best: list[tuple[float, np.ndarray]]) -> str:
    if not best:
        return ""
    cost, x = best[0]
    values = ", ".join(f"{n} = {v:.10g}" for n, v in zip(names, x))
    return f"; best point so far: {values} (sum of squares {cost:.6g})"


def parse_bounds(items: Sequence[str], names: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``NAME=LO:HI`` for fitted names (either end may be empty: no bound)."""
    out: dict[str, tuple[float, float]] = {}
    for item in items:
        name, eq, span = item.partition("=")
        lo_text, colon, hi_text = span.partition(":")
        name = name.strip()
        if not eq or not colon:
            raise InputError(f"--bounds {item!r}: write NAME=LO:HI, e.g. l=0.1:5")
        if name not in names:
            raise InputError(f"--bounds names '{name}', which is not fitted (--fit "
                             f"{','.join(names)})")
        try:
            lo = float(lo_text) if lo_text.strip() else -math.inf
            hi = float(hi_text) if hi_text.strip() else math.inf
        except ValueError:
            raise InputError(f"--bounds {item!r}: LO and HI must be numbers") from None
        if not lo < hi or math.isnan(lo) or math.isnan(hi):
            raise InputError(f"--bounds {item!r}: LO must be below HI")
        out[name] = (lo, hi)
    return out


def fit_settings(raw: Mapping[str, Any], how: Naming) -> dict[str, Any]:
    """The options of :data:`lagsim.spec.options.FIT_OPTIONS` parsed from their raw values
    (None: the default), named in errors as ``how`` writes them (flag or keyword)."""
    unknown = [k for k in raw if k not in FIT_BY_NAME]
    if unknown:
        raise InputError(f"unknown fit option {unknown[0]!r}")
    return {row.name: row.default if raw.get(row.name) is None
            else row.parse(raw[row.name], how.name(row), None) for row in FIT_OPTIONS}


def fit_spec(spec: SystemSpec, data: str | os.PathLike[str], names: tuple[str, ...],
             observe: tuple[str, ...] | None, bounds: Mapping[str, tuple[float, float]],
             given: Mapping[str, Any], how: Naming, runner: Runner,
             report: Callable[[str], None] | None = None, max_runs: int = 200,
             fit_options: Mapping[str, Any] | None = None) -> FitReport:
    """The fit of ``lagsim fit``, ``System.fit`` and a sweep's fits: ``names`` of ``spec``
    checked, the data read and checked (:func:`check_data`), each run through ``runner`` at the
    data's times with the sensitivities of ``names`` over the run options ``given``, then
    :func:`fit` with the options of :data:`~lagsim.spec.options.FIT_OPTIONS` in ``fit_options``
    (raw values by name); notes of the first run only go to ``report``."""
    label = how.flag("--fit")
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise InputError(f"{label} names {twice!r} twice")
    state = naming.state(spec.coordinates)
    columns = (*state, *(naming.multiplier(c.name) for c in spec.constraints))
    for name in names:
        if name not in spec.parameter_values and name not in state:
            raise InputError(f"{label}: '{name}' is neither a parameter nor a coordinate or "
                             f"velocity; they are {', '.join((*spec.parameter_values, *state))}")
    table = read_csv(Path(data) if isinstance(data, os.PathLike) else data)
    checked = check_data(table, columns, observe, len(names))
    options = dict(given)
    resolved = SimulateOptions.resolve(spec.simulate, options, how)
    for name in ("section", "stop_when"):
        if getattr(resolved, name) is not None:
            raise InputError(f"{resolved.label(name)} takes rows a fit cannot compare with the "
                             "data's; leave it out of the fit", resolved.file_location(name))
    t0 = resolved.t_start
    if checked.t[0] < t0:
        raise InputError(f"the data start at t = {checked.t[0]!r}, before the start time "
                         f"{t0!r}", Location(checked.source))
    options["t_end"] = float(checked.t[-1])
    options["sensitivities"] = list(names)
    times = checked.t if checked.t[0] == t0 else np.concatenate(([t0], checked.t))
    values = dict(spec.initial)
    start = {n: spec.parameter_values[n] if n in spec.parameter_values else values.get(n, 0.0)
             for n in names}
    said = [report]

    def simulate(at: Mapping[str, float]) -> Trajectory:
        params = {n: v for n, v in at.items() if n in spec.parameter_values}
        inits = {n: v for n, v in at.items() if n in state}
        out = runner(params, inits, options, times, said[0])
        said[0] = None
        return out

    chosen = fit_settings(fit_options or {}, how)
    return fit(checked, names, start, bounds, simulate, max_runs,
               weights=dict(chosen["weights"] or ()) or None,
               sigma=dict(chosen["sigma"] or ()) or None, starts=chosen["starts"],
               seed=chosen["seed"])
