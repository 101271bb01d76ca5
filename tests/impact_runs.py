"""Helpers of the impact tests (tests/test_impacts.py, test_cimpacts.py): a bundled system's run
with its warnings silenced, the rows of a contact's impacts, and the bouncing ball of the closed
forms (e = 0.5, m = 2 over 2 s; Goebel, Sanfelice and Teel, *Hybrid Dynamical Systems* 2012,
Example 2.12)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from lagsim import naming
from lagsim.api import load
from lagsim.output.trajectory import Trajectory

SYSTEMS = Path(__file__).resolve().parents[1] / "systems"


def run(name: str, **options: object) -> Trajectory:
    """``lagsim simulate`` of the bundled ``name`` with ``options``, its warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parameters = options.pop("parameters", None)
        return load(str(SYSTEMS / f"{name}.yaml")).simulate(parameters=parameters, **options)


def impact_rows(trajectory: Trajectory, contact: str) -> np.ndarray:
    """The rows of ``trajectory`` at which ``contact`` made an impact (its impulse is not 0)."""
    return np.flatnonzero(trajectory[naming.impulse(contact)] != 0.0)


def bouncing_ball(**options: object) -> Trajectory:
    """The bundled ball dropped from 1 m with e = 0.5 and m = 2 over [0, 2] s (its impacts
    accumulate at t∞ ≈ 1.35 s, then it rests), with ``options``."""
    return run("bouncing_ball", parameters={"e": 0.5, "m": 2.0}, t_end=2.0, **options)
