"""Coverage of the fit's 95 % intervals on synthetic data (issue 26, "Goals": the estimates' 95 %
intervals cover the truth in 90–99 % of 100 seeded trials).

    .venv/bin/python bench/fit_coverage.py            # 100 trials
    .venv/bin/python bench/fit_coverage.py --quick    # 20 trials

The damped driven pendulum (``systems/driven_damped_pendulum.yaml``) at known damping and
forcing (c, F0) = (0.4, 1.2), θ sampled at 101 times over 10 s, each trial with its own seeded
Gaussian noise of σ = 0.01 rad added; ``System.fit`` estimates (c, F0) from the file's start
(0.5, 1.5). The interval of each estimate is estimate ± t_{0.975, N−p} × its standard error (s²
estimated from the residuals: Bates and Watts, "Nonlinear Regression Analysis and Its
Applications", Wiley 1988, §2.3.1; Seber and Wild, "Nonlinear Regression", Wiley 1989, §5.2).
A trial covers a name when the true value lies in its interval; the joint region is
(θ̂ − θ)ᵀ C⁻¹ (θ̂ − θ) ≤ p F_{0.95}(p, N − p) with the reported covariance C (the correlation and
the standard errors). For an honest interval the coverage count is Binomial(trials, 0.95):
with 100 trials the goal's band 90–99 holds with probability 0.98 (P(≤ 89) = 0.011,
P(100) = 0.006).

Printed as Markdown (``make bench`` writes it to bench/fit_coverage_results.md).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
from timing import wall_and_cpu

import lagsim

SYSTEM = "driven_damped_pendulum"
TRUTH = {"c": 0.4, "F0": 1.2}
SIGMA = 0.01
RUN = dict(rtol=1e-10, atol=1e-10)


def trials(count: int, folder: Path, sigma: float = SIGMA, samples: int = 101,
           t_end: float = 10.0) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
    """(estimates, standard errors, covariance, degrees of freedom) of ``count`` seeded fits."""
    system = lagsim.load(SYSTEM)
    clean = system.simulate(parameters=TRUTH, t_end=t_end, samples=samples, **RUN)
    names = list(TRUTH)
    out = []
    for seed in range(count):
        noise = sigma * np.random.default_rng(seed).standard_normal(len(clean))
        path = folder / f"track{seed}.csv"
        np.savetxt(path, np.column_stack((clean["t"], clean["theta"] + noise)), delimiter=",",
                   header="t,theta", comments="", fmt="%.17g")
        report = system.fit(path, names, **RUN)
        errors = np.array(report.standard_errors, dtype=float)
        corr = np.array(report.correlation, dtype=float)
        out.append((np.array(report.estimates), errors, corr * np.outer(errors, errors),
                    report.residuals - len(names)))
    return out


def coverage(results: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]
             ) -> tuple[np.ndarray, int]:
    """How many trials cover each name's true value, and the joint region the truth."""
    from scipy.stats import f, t

    truth = np.array(list(TRUTH.values()))
    each = np.zeros(len(truth), dtype=int)
    joint = 0
    for estimates, errors, cov, dof in results:
        half = t.ppf(0.975, dof) * errors
        each += np.abs(estimates - truth) <= half
        d = estimates - truth
        joint += int(d @ np.linalg.solve(cov, d) <= len(truth) * f.ppf(0.95, len(truth), dof))
    return each, joint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 trials")
    parser.add_argument("--trials", type=int, default=100)
    args = parser.parse_args()
    count = 20 if args.quick else args.trials
    warnings.simplefilter("ignore")
    from scipy.stats import binom

    print("# Coverage of the fit's 95 % intervals (issue 26)\n")
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)\n")

    def run() -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
        with tempfile.TemporaryDirectory() as folder:
            return trials(count, Path(folder))

    seconds, _, results = wall_and_cpu(run)
    each, joint = coverage(results)
    estimates = np.array([r[0] for r in results])
    errors = np.array([r[1] for r in results])
    lo, hi = int(binom.ppf(0.025, count, 0.95)), int(binom.isf(0.025, count, 0.95))
    print(f"{SYSTEM}, true (c, F0) = ({TRUTH['c']}, {TRUTH['F0']}), θ at 101 samples over "
          f"10 s, Gaussian noise σ = {SIGMA} rad, {count} seeded trials ({seconds:.1f} s, "
          f"{seconds / count * 1e3:.0f} ms a fit).\n")
    print("| name | trials covered by the 95 % interval | mean estimate − truth | spread of the "
          "estimates | mean standard error |")
    print("|---|---:|---:|---:|---:|")
    for k, name in enumerate(TRUTH):
        print(f"| {name} | {each[k]} / {count} ({100 * each[k] / count:.0f} %) | "
              f"{estimates[:, k].mean() - TRUTH[name]:.2e} | {estimates[:, k].std(ddof=1):.3e} | "
              f"{errors[:, k].mean():.3e} |")
    print(f"| (c, F0) jointly (F region) | {joint} / {count} ({100 * joint / count:.0f} %) | | | |")
    print(f"\nAn honest 95 % interval covers Binomial({count}, 0.95) times: {lo}–{hi} of {count} "
          "with probability about 0.95. The goal: 90–99 % of 100 trials. The spread of the "
          "estimates over the trials beside the mean standard error checks the standard "
          "errors themselves.\n")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
