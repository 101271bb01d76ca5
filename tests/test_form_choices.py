"""Issue 23, "names once": ``lagsim derive --form``'s choices are the form registry's names
(:data:`lagsim.symbolic.forms.FORMS`) and ``all``, not a second list kept by hand beside it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from lagsim.cli.app import main
from lagsim.symbolic import forms


def test_help_lists_the_registry() -> None:
    done = CliRunner().invoke(main, ["derive", "--help"])
    assert done.exit_code == 0, done.output
    assert f"[{'|'.join((*forms.FORMS, 'all'))}]" in " ".join(done.output.split())


def test_a_form_added_to_the_registry_is_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new entry of the registry is offered and accepted by ``--form`` with no other edit."""
    monkeypatch.setitem(forms.FORMS, "newform", forms.FORMS["lagrange"])
    runner = CliRunner()
    shown = runner.invoke(main, ["derive", "--help"])
    assert "|newform|all]" in "".join(shown.output.split())
    done = runner.invoke(main, ["derive", "pendulum", "--form", "newform"])
    assert done.exit_code == 0, done.output
    assert "g⋅l⋅m⋅sin(θ)" in done.output


def test_an_unknown_form_is_refused_with_the_registry_names() -> None:
    done = CliRunner().invoke(main, ["derive", "pendulum", "--form", "lagrnge"])
    assert done.exit_code == 2
    assert "'lagrnge' is not one of" in done.output
    for name in (*forms.FORMS, "all"):
        assert repr(name) in done.output


def test_a_form_takes_only_inputs_derive_provides() -> None:
    """Each entry names the inputs it takes among :data:`forms.INPUTS`; ``derive --form all``
    hands each form its own (the reduced form its branch, the linear form the equilibrium found
    by analysis), so every form of the registry comes out under its name."""
    with pytest.raises(ValueError, match="not velocity"):
        forms.FormKind(forms.FORMS["lagrange"].build, ("velocity",))
    assert {name: kind.inputs for name, kind in forms.FORMS.items() if kind.inputs} == {
        "reduced": ("q0",), "linear": ("rest",)}
    from lagsim.api import derive_forms, open_system

    _, derived = derive_forms(open_system("pendulum_constrained"), "all")
    assert [f.name for f in derived] == list(forms.FORMS)
    linear = derived[list(forms.FORMS).index("linear")]
    assert dict((i.label, i.value) for i in linear.items)["K"][0, 0] == pytest.approx(9.81)
