"""A model's code made ahead in a background thread (``compile_ahead``, issue 31 "Build"): the
next ``compile_model`` of it waits for that build and uses it, or raises what it raised; the
code is the one a plain ``compile_model`` makes (the double pendulum's closed-form M and h)."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np
import pytest

import lagsim.numeric.compile as compile_module
from lagsim.errors import InputError
from lagsim.numeric.compile import AHEAD, MEMO, cold_build, compile_ahead, compile_model
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model


@pytest.fixture(scope="module")
def _cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _fresh(_cache, monkeypatch):
    monkeypatch.setenv("LAGSIM_CACHE", str(_cache))
    MEMO.clear()
    AHEAD.clear()
    yield
    for thread in threading.enumerate():
        if thread.name == "lagsim-runtime":  # runtime_ahead's, still in this test's cache
            thread.join()
    MEMO.clear()
    AHEAD.clear()


def _counting(monkeypatch) -> list[str]:
    """The names of the threads that made code, one per build."""
    threads: list[str] = []
    original = compile_module._make_code

    def make(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(compile_module, "_make_code", make)
    return threads


def test_the_code_made_ahead_is_used_once_and_is_the_models(monkeypatch):
    threads = _counting(monkeypatch)
    model = build_model(load_spec("double_pendulum"))
    compile_ahead(model)
    compile_ahead(model)
    assert len(AHEAD) == 1
    numeric = compile_model(model)
    again = compile_model(build_model(load_spec("double_pendulum")))
    assert threads == ["lagsim-build"]
    assert not AHEAD and again.code is numeric.code
    p = model.parameters
    m1, m2, l1, l2, g = p["m1"], p["m2"], p["l1"], p["l2"], p["g"]
    q = np.array([0.3, -0.7])
    qd = np.array([1.1, 0.4])
    M, _, _, _ = numeric.dynamics(0.0, q, qd)
    c = math.cos(q[0] - q[1])
    np.testing.assert_allclose(M, [[(m1 + m2) * l1**2, m2 * l1 * l2 * c],
                                   [m2 * l1 * l2 * c, m2 * l2**2]], rtol=1e-14)
    energy = (0.5 * (m1 + m2) * l1**2 * qd[0]**2 + 0.5 * m2 * l2**2 * qd[1]**2
              + m2 * l1 * l2 * qd[0] * qd[1] * c
              - (m1 + m2) * g * l1 * math.cos(q[0]) - m2 * g * l2 * math.cos(q[1]))
    assert numeric.energy(0.0, q, qd) == pytest.approx(energy, rel=1e-13)


def test_what_the_build_ahead_raised_is_raised_by_compile_model(monkeypatch):
    def refuse(*args, **kwargs):
        raise InputError("no such model")

    monkeypatch.setattr(compile_module, "_make_code", refuse)
    model = build_model(load_spec("pendulum"))
    compile_ahead(model)
    with pytest.raises(InputError, match="no such model"):
        compile_model(model)
    assert not AHEAD


def test_a_memo_of_its_own_does_not_take_the_build_ahead(monkeypatch):
    threads = _counting(monkeypatch)
    model = build_model(load_spec("pendulum"))
    compile_ahead(model)
    compile_model(model, memo=OrderedDict())
    assert threads == ["lagsim-build", "MainThread"]
    compile_model(model)
    assert threads == ["lagsim-build", "MainThread"] and not AHEAD


def test_only_a_build_that_compiles_counts_as_cold(tmp_path, monkeypatch):
    """A cold model's build runs gcc (the runtime's libraries are then built ahead too where
    missing); the same model again, from the disk cache, does not."""
    monkeypatch.setenv("LAGSIM_CACHE", str(tmp_path / "cold"))
    model = build_model(load_spec("pendulum"))
    compile_ahead(model)
    (cold,) = AHEAD.values()
    compile_model(model)
    assert cold.compiling and cold_build()
    MEMO.clear()
    compile_ahead(model)
    (warm,) = AHEAD.values()
    compile_model(model)
    assert not warm.compiling and not cold_build()
