"""``System.simulate`` keeps its prepared run for the next call with the same options (issue 31,
"fixed cost per run"; :class:`lagsim.run.session.Runs`): the kept run must give what a fresh
System gives, bit for bit, hand out trajectories that share no array, and never serve a run of
other values (parameters, initial values, options)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import lagsim
from lagsim.run.session import RUNS_KEPT

FIELDS = ("t", "q", "qd", "lam", "residual", "residual_dot", "energy")
CONSTRAINED = Path(lagsim.__file__).parents[1] / "systems" / "pendulum_constrained.yaml"


def _same(a: lagsim.Trajectory, b: lagsim.Trajectory) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS)


def _kept(system: lagsim.System) -> int:
    runs = system._runs
    return 0 if runs is None else len(runs.kept)


def test_a_second_run_is_the_kept_one_and_gives_the_same_bits() -> None:
    system = lagsim.load("double_pendulum")
    first = system.simulate(t_end=2.0, rtol=1e-9, atol=1e-9)
    assert _kept(system) == 1
    assert system._runs is not None
    made = system._runs.kept.made
    second = system.simulate(t_end=2.0, rtol=1e-9, atol=1e-9)
    assert _kept(system) == 1 and system._runs.kept.made == made
    fresh = lagsim.load("double_pendulum").simulate(t_end=2.0, rtol=1e-9, atol=1e-9)
    assert _same(first, second) and _same(second, fresh)
    assert np.abs(first.energy - first.energy[0]).max() < 1e-7


def test_each_trajectory_owns_its_arrays() -> None:
    system = lagsim.load("double_pendulum")
    first = system.simulate(t_end=1.0)
    kept = {f: getattr(first, f).copy() for f in FIELDS}
    second = system.simulate(t_end=1.0)
    for f in FIELDS:
        assert not np.shares_memory(getattr(first, f), getattr(second, f))
    assert all(np.array_equal(getattr(first, f), kept[f]) for f in FIELDS)
    second.q[:] = 7.0
    second.energy[:] = 7.0
    assert all(np.array_equal(getattr(first, f), kept[f]) for f in FIELDS)
    first.q[:] = -7.0
    third = system.simulate(t_end=1.0)
    assert np.array_equal(third.q, kept["q"]) and np.array_equal(third.energy, kept["energy"])


def test_other_values_are_other_runs_and_the_kept_one_is_not_stale() -> None:
    system = lagsim.load("double_pendulum")
    base = system.simulate(t_end=1.0)
    heavier = system.simulate(t_end=1.0, parameters={"m2": 3.0})
    moved = system.simulate(t_end=1.0, initial={"theta2": 0.3})
    finer = system.simulate(t_end=1.0, rtol=1e-11, atol=1e-11)
    again = system.simulate(t_end=1.0)
    assert _same(again, base)
    assert moved.q[0, 1] == 0.3 and base.q[0, 1] != 0.3
    assert not np.array_equal(heavier.q[-1], base.q[-1])
    assert not np.array_equal(finer.q[-1], base.q[-1])
    other = lagsim.load("double_pendulum")
    assert _same(heavier, other.simulate(t_end=1.0, parameters={"m2": 3.0}))
    assert _same(moved, other.simulate(t_end=1.0, initial={"theta2": 0.3}))
    assert _same(finer, other.simulate(t_end=1.0, rtol=1e-11, atol=1e-11))
    assert heavier.q[0, 1] == base.q[0, 1]
    assert _kept(system) == 2  # the runs of the file's values: base and finer


def test_a_new_spec_is_a_new_key() -> None:
    system = lagsim.load("pendulum")
    short = system.simulate(t_end=1.0)
    system.spec = lagsim.load("pendulum", l=4.0).spec
    longer = system.simulate(t_end=1.0)
    assert _same(longer, lagsim.load("pendulum", l=4.0).simulate(t_end=1.0))
    assert longer.t[-1] == short.t[-1]
    assert not np.array_equal(longer.q, short.q)


def test_the_runs_kept_are_bounded() -> None:
    system = lagsim.load("pendulum")
    for k in range(RUNS_KEPT + 3):
        system.simulate(t_end=0.1 * (k + 1))
        assert _kept(system) <= RUNS_KEPT
    assert _kept(system) == RUNS_KEPT


def test_the_notes_of_the_build_are_said_at_every_run() -> None:
    text = CONSTRAINED.read_text(encoding="utf-8").replace(
        "  theta_dot: 0\n", "  theta_dot: 0\n  beta: 0.01\n")
    system = lagsim.load(text)
    said = []
    for _ in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run = system.simulate(t_end=0.5)
        said.append([str(w.message) for w in caught])
        assert run.q[0, 1] == 0.0
    assert said[0] and said[0] == said[1] == said[2]
    assert "initial beta: 0.01 -> 0.0" in said[0][0]


def test_a_failed_run_raises_again() -> None:
    system = lagsim.load("double_pendulum")
    system.simulate(t_end=0.2)
    with pytest.raises(lagsim.InputError):
        system.simulate(t_end=0.2, rtol="x")
    again = system.simulate(t_end=0.2)
    assert _same(again, lagsim.load("double_pendulum").simulate(t_end=0.2))


@pytest.mark.parametrize(("source", "options"), [
    ("double_pendulum", {"t_end": 2.0}),
    ("double_pendulum", {"t_end": 5.0, "stop_when": "theta1"}),
    (CONSTRAINED, {"t_end": 1.0, "formulation": "index1"}),
    (CONSTRAINED, {"t_end": 1.0, "formulation": "udwadia-kalaba", "stabilize": "projection"}),
])
def test_the_energy_computed_with_the_samples_is_each_rows_compiled_energy(
        source: object, options: dict[str, object]) -> None:
    """The C loop computes the energy of each row as it writes it (issue 31), the event's row
    of --stop-when included: the compiled energy of that row's t, q, q̇, bit for bit, in a
    first run and in the runs again; and a run again's arrays overlap neither each other nor
    the loop's buffers."""
    from lagsim.numeric.compile import compile_model

    system = lagsim.load(source)
    numeric = compile_model(system.model)
    runs = [system.simulate(**options) for _ in range(3)]
    for run in runs:
        assert np.array_equal(run.energy, numeric.energies(run.t, run.q, run.qd))
        assert np.abs(run.energy - run.energy[0]).max() < 1e-5
    assert runs[1].stopped == runs[0].stopped == ("stop_when" in options)
    assert system._runs is not None
    buffers = next(iter(system._runs.kept._values.values())).loop._buffers
    arrays = [getattr(runs[2], f) for f in FIELDS]
    for i, a in enumerate(arrays):
        assert not any(np.shares_memory(a, b) for b in arrays[i + 1:])
        assert not any(np.shares_memory(a, getattr(buffers, b))
                       for b in ("times", "rows", "last", "event", "energy"))
