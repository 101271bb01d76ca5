"""A state feedback on a file's inputs (issue 28): the closed loop u = u* − K (x − x*) put into
the generalized forces, so that the controlled system is one more model that every engine runs.

The inputs enter only τ (the spec refuses them elsewhere), so substituting the law for them in τ
gives the closed-loop equations M q̈ = F(q, q̇, u(q, q̇)) + Aᵀλ exactly. An actuator limit |u| ≤ U
is the clip sat(v) = (|v + U| − |v − U|)/2, which is v for |v| ≤ U and ±U beyond.
"""

from __future__ import annotations

import symengine as se

from lagsim.records import record
from lagsim.symbolic.model import Model, assemble_model


@record
class Feedback:
    """u = u* − K (x − x*): ``inputs`` u with their values ``u0`` at the equilibrium, the names of
    the state's entries ``state`` (coordinates and ``<q>_dot`` velocities of the model), their
    values ``x0`` at the equilibrium, the gain ``gain`` (one row per input, one column per state
    entry) and the actuator limit ``saturate`` (|u| ≤ U; None: no limit)."""

    inputs: tuple[str, ...]
    u0: tuple[float, ...]
    state: tuple[str, ...]
    x0: tuple[float, ...]
    gain: tuple[tuple[float, ...], ...]
    saturate: float | None = None

    def laws(self) -> dict[se.Symbol, se.Basic]:
        """Each input's symbol → its law in the state's symbols (module docstring)."""
        out: dict[se.Symbol, se.Basic] = {}
        x = [se.Symbol(name) - se.RealDouble(v) for name, v in zip(self.state, self.x0)]
        for name, u0, row in zip(self.inputs, self.u0, self.gain):
            law = se.RealDouble(u0) - se.Add(*(se.RealDouble(k) * dx for k, dx in zip(row, x)
                                               if k != 0.0))
            if self.saturate is not None:
                limit = se.RealDouble(self.saturate)
                law = (se.Abs(law + limit) - se.Abs(law - limit)) / 2
            out[se.Symbol(name)] = law
        return out


def closed_loop(model: Model, feedback: Feedback) -> Model:
    """``model`` with the inputs of ``feedback`` replaced by its law in τ (module docstring); the
    result has no inputs and no structure key (its gains are numbers in its expressions)."""
    laws = feedback.laws()
    tau = se.DenseMatrix(model.n, 1, [se.sympify(model.tau[i]).xreplace(laws)
                                      for i in range(model.n)])
    return assemble_model(
        name=model.name, description=model.description, coordinates=model.coordinates,
        lagrangian=model.lagrangian, tau=tau, constraints=model.constraints,
        parameters=model.parameters, kinetic=model.kinetic, potential=model.potential,
        mass_positions=model.mass_positions, point_positions=model.point_positions,
    )
