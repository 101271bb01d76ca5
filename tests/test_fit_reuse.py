"""A fit's runs at new parameter values reuse the loaded file's YAML tree (issue 26, goal 3):
the file is composed once, not once per run, and the estimates are the same as when each run
composes the text again."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

import lagsim
import lagsim.spec.reader as spec_reader


def _data(tmp_path: Path) -> Path:
    run = lagsim.load("driven_damped_pendulum").simulate(parameters={"c": 0.4, "F0": 1.2},
                                                         t_end=4.0, samples=41)
    noise = 1e-3 * np.random.default_rng(3).standard_normal(len(run))
    path = tmp_path / "data.csv"
    np.savetxt(path, np.column_stack((run["t"], run["theta"] + noise)), delimiter=",",
               header="t,theta", comments="", fmt="%.17g")
    return path


def test_fit_composes_the_file_once_and_estimates_are_unchanged(tmp_path, monkeypatch):
    data = _data(tmp_path)
    system = lagsim.load("driven_damped_pendulum")
    composed = []
    real = yaml.compose

    def counting(*args, **kwargs):
        composed.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(yaml, "compose", counting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = system.fit(data, "c,F0")
        assert kept.runs > 3
        assert composed == []
        monkeypatch.setattr(spec_reader, "COMPOSED_KEEP", 0)
        spec_reader._COMPOSED.clear()
        again = system.fit(data, "c,F0")
    assert len(composed) == again.runs
    assert again.runs == kept.runs
    assert again.estimates == pytest.approx(kept.estimates, rel=1e-12, abs=0)
    assert again.standard_errors == pytest.approx(kept.standard_errors, rel=1e-12, abs=0)
