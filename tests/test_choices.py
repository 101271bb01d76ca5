"""Issue 23: the names of the methods, formulations and stabilizers are declared once, in
:mod:`lagsim.spec.choices`, below the run layer; the registry of the run layer
(:mod:`lagsim.run.registry`) maps exactly those names, in that order, to their implementations,
and the command line, the ``simulate:`` validation and the JSON Schema all offer the declared
names."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from lagsim.cli.app import main
from lagsim.errors import InputError, Location
from lagsim.run import registry
from lagsim.spec import choices
from lagsim.spec.options import BY_NAME, SimulateOptions
from lagsim.spec.schema import system_schema
from lagsim.spec.system import Setting


@pytest.mark.parametrize(("implemented", "declared"), [
    (registry.METHODS, choices.METHODS),
    (registry.SOLVERS, choices.SOLVER_METHODS),
    (registry.FIXED_STEP, choices.FIXED_STEP_METHODS),
    (registry.FORMULATIONS, choices.FORMULATIONS),
    (registry.STABILIZERS, choices.STABILIZERS),
], ids=["methods", "solvers", "fixed-step", "formulations", "stabilizers"])
def test_each_registry_maps_exactly_the_declared_names(implemented, declared) -> None:
    assert tuple(implemented) == declared


def test_each_part_carries_the_name_it_is_registered_under() -> None:
    for table in (registry.FIXED_STEP, registry.FORMULATIONS, registry.STABILIZERS):
        assert all(part.name == name for name, part in table.items())
    assert [m for m in choices.METHODS if getattr(registry.METHODS[m], "fixed_step", False)] \
        == list(choices.FIXED_STEP_METHODS)
    assert {m: registry.METHODS[m].__name__ for m in choices.SOLVER_METHODS} \
        == {m: m for m in choices.SOLVER_METHODS}
    assert set(choices.AUTO_ORDER) < set(choices.FORMULATIONS)
    assert choices.FORMULATION_CHOICES == (choices.AUTO, *choices.FORMULATIONS)


@pytest.mark.parametrize(("option", "declared"), [
    ("method", choices.METHODS), ("formulation", choices.FORMULATION_CHOICES),
    ("stabilize", choices.STABILIZERS),
])
def test_the_flag_the_file_and_the_schema_offer_the_declared_names(option: str,
                                                                  declared: tuple[str, ...]
                                                                  ) -> None:
    row = BY_NAME[option]
    assert row.choices is not None and row.choices() == declared
    shown = CliRunner().invoke(main, ["simulate", "--help"])
    assert f"[{'|'.join(declared)}]" in "".join(shown.output.split())
    schema = system_schema()["properties"]["simulate"]["properties"][option]
    assert schema["anyOf"][0]["enum"] == list(declared)
    for name in declared:
        given = {option: Setting(name.upper(), Location("s.yaml", 3, 5))}
        assert getattr(SimulateOptions.resolve(given, {}), option) == name
    with pytest.raises(InputError) as refused:
        SimulateOptions.resolve({option: Setting("zzz", Location("s.yaml", 3, 5))}, {})
    assert refused.value.message.startswith(
        f"simulate.{option} must be one of {', '.join(declared)}; 'zzz' is not a known")
    assert refused.value.location == Location("s.yaml", 3, 5)


def test_the_options_table_imports_nothing_of_the_run_layer() -> None:
    """Reading the names needs no numerics: importing the table loads no ``lagsim.run`` module,
    NumPy or SciPy."""
    code = ("import sys, lagsim.spec.options as o; o.BY_NAME['method'].choices(); "
            "print(sorted(m for m in sys.modules if m.startswith(('lagsim.run', 'numpy', "
            "'scipy'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
