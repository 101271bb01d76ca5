"""The equation forms `lagsim derive` prints, one module a family, and their registry
:data:`FORMS`, whose names are ``derive --form``'s choices.

Every form takes a :class:`~lagsim.symbolic.model.Model` (symengine) and returns an immutable
:class:`~lagsim.symbolic.forms.base.Form` of SymPy values for :mod:`lagsim.symbolic.render`:

* :mod:`~lagsim.symbolic.forms.lagrangian`: ``lagrange``, ``matrix``, ``dae`` (seed 001);
* :mod:`~lagsim.symbolic.forms.augmented`: ``index1`` (seed 003), ``udwadia-kalaba`` (seed 004);
* :mod:`~lagsim.symbolic.forms.reduced`: ``reduced`` (seed 002 §23.5);
* :mod:`~lagsim.symbolic.forms.linear`: ``linear``, about an equilibrium found numerically;
* :mod:`~lagsim.symbolic.forms.hamilton`: ``hamilton`` (seed 001 §10.6).

Printing stays fast for any system (issues 8 §5 and 16 §4): tidying runs within the operation
budgets of :mod:`lagsim.symbolic.tidy`, and what was left untidied is listed on
:attr:`Form.untidied` (``--debug`` prints it).

Seeds: ``001_80d65b968ce3cb18.txt`` (Lagrangian, Theorem 10.2, matrix form 10.12–10.14, §10.6,
§10.7), ``002_485a91571cac8ced.txt`` (§23.5 reduced coordinates), ``003_88d23709419132a0.txt``
(index reduction, augmented matrix), ``004_2a8ddee2a66c9af0.txt`` (Udwadia–Kalaba).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lagsim.records import record
from lagsim.symbolic.forms.augmented import index1_form, udwadia_kalaba_form
from lagsim.symbolic.forms.base import CLOSED_FORM_MAX_OPS, Form, Item
from lagsim.symbolic.forms.hamilton import hamilton_form
from lagsim.symbolic.forms.lagrangian import dae_form, lagrange_form, matrix_form
from lagsim.symbolic.forms.linear import RestLinearization, linear_form
from lagsim.symbolic.forms.reduced import reduced_form
from lagsim.symbolic.model import Model

__all__ = ["CLOSED_FORM_MAX_OPS", "FORMS", "INPUTS", "Form", "FormKind", "Item",
           "RestLinearization"]

INPUTS = {
    "q0": "the initial configuration (coordinate → value): the reduced form's branch",
    "rest": "a lagsim.symbolic.forms.linear.RestLinearization: the linearization about the "
            "equilibrium nearest the initial configuration, found numerically, which is "
            "analysis (lagsim.analysis.modes.rest_linearization computes it)",
}
"""What a form may take besides the model and ``simplify``; the caller provides each input a
form of :data:`FORMS` names (:func:`lagsim.api.derive_forms`)."""


@record
class FormKind:
    """An entry of the registry: the function that builds the form, and the names of the
    :data:`INPUTS` it takes as keywords. Calling the entry calls the function."""

    build: Callable[..., Form]
    inputs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = [name for name in self.inputs if name not in INPUTS]
        if unknown:
            raise ValueError(f"a form's inputs are among {', '.join(INPUTS)}, not "
                             f"{', '.join(unknown)}")

    def __call__(self, model: Model, simplify: bool = False, **inputs: Any) -> Form:
        return self.build(model, simplify, **inputs)


FORMS: dict[str, FormKind] = {
    "lagrange": FormKind(lagrange_form),
    "matrix": FormKind(matrix_form),
    "dae": FormKind(dae_form),
    "index1": FormKind(index1_form),
    "udwadia-kalaba": FormKind(udwadia_kalaba_form),
    "reduced": FormKind(reduced_form, ("q0",)),
    "linear": FormKind(linear_form, ("rest",)),
    "hamilton": FormKind(hamilton_form),
}
"""The forms by name, in the order ``derive --form all`` prints them."""
