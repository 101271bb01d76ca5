"""The linear form (``linear``, issue 10): M₀ δq̈ + D δq̇ + K δq = 0 about an equilibrium, the
tangent basis N of the constraints and the state space ẋ = A x + B δτ.

Numbers, not formulas: the equilibrium is found numerically, which is analysis, not algebra. So
this module only prints a :class:`RestLinearization` it is given; the registry of
:mod:`lagsim.symbolic.forms` declares that the form takes one (its input ``rest``), and the
caller that may search for equilibria (:func:`lagsim.api.derive_forms`) computes it with
:func:`lagsim.analysis.modes.rest_linearization`. Seed: ``001_80d65b968ce3cb18.txt`` §10.7
(M q̈ = F + Aᵀλ linearized at rest).
"""

from __future__ import annotations

import numpy as np
import sympy

from lagsim.records import record
from lagsim.spec.references import SEED_001, cite
from lagsim.symbolic.forms.base import Form, Item
from lagsim.symbolic.model import Model


@record
class RestLinearization:
    """The linearization about one equilibrium in the numbers the form prints: the equilibrium
    ``q`` (in ``coordinates``, those of the autonomous model) with the ``residual`` of its rest
    equations, the matrices ``M0``, ``D``, ``K`` (n×n) and ``N`` (n×k, δq = N z), the state
    matrix ``S`` and input matrix ``B`` of ẋ = S x + B δτ, the ``independent`` coordinates z
    stands for, whether the model has constraints, whether some are velocity constraints, and
    what the autonomous model says of itself (``notes``)."""

    coordinates: tuple[str, ...]
    q: tuple[float, ...]
    residual: float
    M0: np.ndarray
    D: np.ndarray
    K: np.ndarray
    N: np.ndarray
    S: np.ndarray
    B: np.ndarray
    independent: tuple[str, ...]
    constrained: bool
    velocity_constraints: bool
    notes: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    """The file's inputs u (``inputs:``, issue 28), the columns of ``Bu``."""
    Bu: np.ndarray | None = None
    """B ∂τ/∂u: the input matrix of ẋ = A x + B_u δu (:mod:`lagsim.analysis.inputs`)."""


@record
class SteadyLinearization:
    """The linearization about a steady motion (:mod:`lagsim.analysis.steady`) in the numbers
    the form prints: the motion (``q``, ``qd``) with max |q̈| ``residual``, the state ξ
    (``state``: the positions of the non-ignorable coordinates, then every rate), the map ``L``
    of ξ̇ = L ξ, the tangent basis ``N`` (ξ = N η, η the ``independent`` entries), the reduced
    state matrix ``S`` (η̇ = S η) and its ``eigenvalues``; the ``ignorable`` coordinates, whose
    positions drop out."""

    coordinates: tuple[str, ...]
    q: tuple[float, ...]
    qd: tuple[float, ...]
    residual: float
    state: tuple[str, ...]
    L: np.ndarray
    N: np.ndarray
    independent: tuple[str, ...]
    S: np.ndarray
    eigenvalues: tuple[complex, ...]
    ignorable: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _exact_float(value: float) -> sympy.Float:
    """A SymPy Float that prints with the digits of Python's repr, so that the JSON reads back to
    the same double."""
    text = repr(float(value))
    return sympy.Float(text, max(15, sum(ch.isdigit() for ch in text.split("e")[0])))


def _matrix(values: np.ndarray) -> sympy.ImmutableMatrix:
    """``values`` with entries below 1e-14 of the largest printed as 0."""
    rows, cols = values.shape
    values = np.where(np.abs(values) < 1e-14 * max(float(np.max(np.abs(values), initial=0.0)),
                                                   1e-300), 0.0, values)
    return sympy.ImmutableMatrix(rows, cols, [_exact_float(v) for v in values.reshape(-1)])


def steady_form(rest: SteadyLinearization) -> Form:
    """``derive --form linear`` about a steady motion: ξ̇ = L ξ on ξ = (δq_s, δq̇), the tangent
    basis N and the reduced state matrix A of η̇ = A η (:mod:`lagsim.analysis.steady`)."""
    names = rest.coordinates
    point = sympy.ImmutableMatrix(len(names), 1, [_exact_float(v) for v in rest.q])
    rates = sympy.ImmutableMatrix(len(names), 1, [_exact_float(v) for v in rest.qd])
    items = [Item("q*", point, r"q^{*}"), Item("qdot*", rates, r"\dot{q}^{*}"),
             Item("L", _matrix(rest.L), "L"), Item("N", _matrix(rest.N), "N"),
             Item("A", _matrix(rest.S), "A")]
    ignorable = (f"; the positions of the ignorable {', '.join(rest.ignorable)} drop out"
                 if rest.ignorable else "")
    notes = [f"about the steady motion q*, q̇* ({', '.join(names)}; max |q̈| "
             f"{rest.residual:.1e})",
             f"ξ = ({', '.join(rest.state)}), ξ̇ = L ξ{ignorable}",
             f"on the constraints ξ = N η, η = ({', '.join(rest.independent)}); η̇ = A η",
             "eigenvalues of A: " + ", ".join(f"{s.real:.10g}{s.imag:+.10g}i"
                                              for s in rest.eigenvalues)]
    return Form(
        name="linear", title="linearization about a steady motion",
        formula="ξ̇ = L ξ on ξ = N η;  η̇ = A η",
        citation=cite(SEED_001, "§10.7") + " (the index-reduced equations linearized about a "
        "relative equilibrium; seed 003 for b)",
        items=tuple(items), notes=(*rest.notes, *notes),
        formula_latex=r"\dot{\xi} = L \xi, \quad \xi = N \eta, \quad \dot{\eta} = A \eta",
    )


def linear_form(model: Model, simplify: bool = False, *,
                rest: RestLinearization | SteadyLinearization) -> Form:
    """``derive --form linear``: M₀, D, K about the equilibrium of ``rest``, the tangent basis N
    of the constraints, and the state space ẋ = S x + B δτ in x = (z, u) with δq = N z (module
    docstring; seed 001 §10.7). ``model`` and ``simplify`` are the registry's common inputs,
    unused: the numbers are printed as they are. About a steady motion: :func:`steady_form`."""
    if isinstance(rest, SteadyLinearization):
        return steady_form(rest)
    names = rest.coordinates
    point = sympy.ImmutableMatrix(len(names), 1, [_exact_float(v) for v in rest.q])
    items = [Item("q*", point, r"q^{*}"), Item("M0", _matrix(rest.M0), r"M_{0}"),
             Item("D", _matrix(rest.D), "D"), Item("K", _matrix(rest.K), "K")]
    if rest.constrained:
        items.append(Item("N", _matrix(rest.N), "N"))
    items += [Item("A", _matrix(rest.S), "A"), Item("B", _matrix(rest.B), "B")]
    if rest.inputs and rest.Bu is not None:
        items.append(Item("B_u", _matrix(rest.Bu), "B_{u}"))
    notes = [f"about the equilibrium nearest the initial state ({', '.join(names)}; residual "
             f"{rest.residual:.1e}; `lagsim equilibria` lists all)",
             (f"state x = (z, ż) with δq = N z, z = ({', '.join(rest.independent)}) the "
              "independent coordinates" if rest.constrained else "state x = (δq, δq̇)"),
             "B maps generalized forces δτ on " + ", ".join(names)]
    if rest.inputs:
        notes.append(f"B_u = B ∂τ/∂u maps the inputs δu = ({', '.join(rest.inputs)}): "
                     "ẋ = A x + B_u δu")
    notes[:0] = rest.notes
    if rest.velocity_constraints:
        notes.append("velocity constraints: x = (z, u) with ż = N_v u, δq̇ = N N_v u")
    return Form(
        name="linear", title="linearization about an equilibrium",
        formula="M0 δq̈ + D δq̇ + K δq = 0 on δq = N z;  ẋ = A x + B δτ",
        citation=cite(SEED_001, "§10.7") + " (M q̈ = F + Aᵀλ linearized at rest)",
        items=tuple(items), notes=tuple(notes),
        formula_latex=(r"M_{0}\,\delta\ddot{q} + D\,\delta\dot{q} + K\,\delta q = 0, "
                       r"\quad \dot{x} = A x + B\,\delta\tau"),
    )
