"""The symbolic model's own contract: tidy_model changes how it reads, never what it says."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from lagsim.numeric.compile import compile_model
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model, tidy_model, to_sympy


@pytest.mark.parametrize("name", ["pendulum_constrained", "double_pendulum_constrained",
                                  "spring_pendulum"])
def test_tidy_model_is_the_same_model(name):
    model = build_model(load_spec(name))
    tidy = tidy_model(model)
    raw, neat = compile_model(model), compile_model(tidy)
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, qd = rng.uniform(-1, 1, model.n), rng.uniform(-1, 1, model.n)
        for a, b in zip(raw.dynamics(0.0, q, qd), neat.dynamics(0.0, q, qd)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert raw.energy(0.0, q, qd) == pytest.approx(neat.energy(0.0, q, qd), rel=1e-12)


def test_tidy_model_reads_like_the_seed():
    """002 §23.7: T = ½ m ((ℓ + β)² θ̇² + β̇² + ż²), so M[θ, θ] = m (ℓ + β)² with no sin² + cos²."""
    m, l, beta = sp.symbols("m l beta")
    tidy = tidy_model(build_model(load_spec("pendulum_constrained")))
    entry = to_sympy(tidy.mass_matrix)[0, 0]
    assert sp.expand(entry - m * (l + beta) ** 2) == 0
    assert not entry.has(sp.sin, sp.cos)
