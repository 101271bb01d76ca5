"""The C step loop's two libraries (issue 31, "Build"): a run that neither reduces nor has
impacts asks only for the plain loop (``cloop.c`` without its reduced block), so a first run on
a machine compiles only that; the whole library (reduced block and ``impacts.c``) is built
when a run first needs it, and works."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from lagsim.api import load
from lagsim.numeric import ccompile
from lagsim.numeric.memo import Memo
from lagsim.run.engines import cimpacts, cloop

pytestmark = pytest.mark.skipif(ccompile.compiler() is None,
                                reason="the C loop needs a C compiler (LAGSIM_NO_CC is set)")
SYSTEMS = Path(__file__).resolve().parents[1] / "systems"


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tags of lagsim's own libraries asked for from now on, in a process that has loaded
    no step loop yet."""
    tags: list[str] = []
    build = ccompile.build_and_load

    def recorded(cc: str, tag: str, *args: object, **kwargs: object):
        tags.append(tag)
        return build(cc, tag, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cloop, "LIBRARIES", Memo(4))
    monkeypatch.setattr(ccompile, "build_and_load", recorded)
    return tags


def test_a_plain_run_asks_for_the_plain_loop_only(asked: list[str]) -> None:
    """The pendulum in C asks for the plain loop and not the whole library, and the plain
    library has neither the reduced loop nor the flights; its period still that of the small
    oscillation closed form 2π √(l/g) to 1e-3 (θ0 small)."""
    trajectory = load(SYSTEMS / "pendulum.yaml").simulate(
        initial={"theta": 1e-3, "theta_dot": 0.0}, t_end=2.0, samples=2001)
    assert "cloop-plain" in asked and "cloop" not in asked
    plain = cloop.library(ccompile.compiler() or "", whole=False)
    assert plain is not None and hasattr(plain, "lagsim_loop_run")
    assert not hasattr(plain, "lagsim_reduced_new")
    assert not hasattr(plain, "lagsim_impacts_new")
    theta = np.asarray(trajectory["theta"], dtype=float)
    t = np.asarray(trajectory.t, dtype=float)
    period = 2 * math.pi * math.sqrt(1.0 / 9.81)  # l = 1, g = 9.81 (systems/pendulum.yaml)
    crossings = t[1:][(theta[:-1] > 0) & (theta[1:] <= 0)]
    assert abs(crossings[0] - period / 4) < 1e-3 * period


def test_the_first_impact_builds_the_whole_library_and_flies_in_c(
        asked: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The bouncing ball asks for the whole library (the flights are in it), its flights run
    there, and its first impact is at t1 = sqrt(2 h0 / g) (systems/bouncing_ball.yaml)."""
    flown = []
    fly = cimpacts.Flights.fly

    def counted(self: cimpacts.Flights, *args: object):
        flown.append(self.entries.lib)
        return fly(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(cimpacts.Flights, "fly", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trajectory = load(SYSTEMS / "bouncing_ball.yaml").simulate(t_end=1.0)
    assert "cloop" in asked
    assert flown and all(hasattr(lib, "lagsim_impacts_new") for lib in flown)
    assert abs(trajectory.events[0].t - math.sqrt(2 * 1.0 / 9.81)) < 1e-9


def test_the_reduced_formulation_runs_in_the_whole_library(asked: list[str]) -> None:
    """A reduced run asks for the whole library (its loop is there) and keeps the pendulum's
    constraint (its residual near rounding)."""
    trajectory = load(SYSTEMS / "pendulum_constrained.yaml").simulate(
        t_end=1.0, formulation="reduced")
    assert "cloop" in asked
    residual = [c for c in trajectory.columns if c.startswith("residual_")]
    assert residual
    assert max(np.max(np.abs(np.asarray(trajectory[c], dtype=float))) for c in residual) < 1e-8
