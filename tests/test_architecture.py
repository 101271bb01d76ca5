"""The architecture of issue 23, held by reading lagsim's syntax (tests/structure.py says exactly
what counts as an import, a private name and a write into another module's object):

- no import cycle between modules, imports inside functions and ``"lagsim.x.y"`` strings
  counted;
- the layering ``errors, naming < spec < symbolic < numeric < output < run < analysis < sweep <
  viz < api < cli``: no import points up; spec imports nothing of run, numeric, analysis, viz or
  cli, symbolic nothing of numeric, run, viz or cli; click only in lagsim/cli, matplotlib only in
  lagsim/viz;
- no private name of a lagsim module is imported or read by another, nor a private attribute
  only another module defines;
- no module writes attributes of objects it did not make (what another module needs from an
  object is a method or a declared field of its contract);
- a non-editable install ships every package and every C source.

Each failure lists the offending imports or sites as ``FILE:LINE: what`` for the engineer who
mends them. The first two tests run the scan on a small package written here, so the rules are
seen to catch what they claim.
"""

from __future__ import annotations

from pathlib import Path

from structure import (
    LAYERS,
    Edge,
    Package,
    confined,
    cycles,
    forbidden,
    foreign_writes,
    private_attributes,
    private_crossings,
    unplaced,
    unshipped_data,
    unshipped_packages,
    upward,
)

ROOT = Path(__file__).resolve().parents[1]

SAMPLE = {
    "lagsim/__init__.py": '"""The top."""\n',
    "lagsim/errors.py": "class InputError(Exception):\n    pass\n",
    "lagsim/spec/__init__.py": "",
    "lagsim/spec/system.py": '''
import click
from lagsim.errors import InputError


def options():
    return "lagsim.run.driver:simulate"


def _helper():
    return InputError


def _hidden():
    return 1


class Spec:
    def set(self, value):
        self.value = value
        self._cache = None

    @classmethod
    def build(cls):
        made = cls()
        made.value = 0
        return made


def make():
    spec = Spec()
    spec.value = 1
    setattr(spec, "value", 2)
    return spec


def budget():
    note = Note()
    note.text = "ok"


class Note:
    pass
''',
    "lagsim/run/__init__.py": "",
    "lagsim/run/driver.py": '''
import ctypes

import numpy as np

from lagsim.spec import system
from lagsim.spec.system import Spec, _hidden


def run(spec: Spec, other, lib):
    from ..output import io
    system._helper()
    spec.value = 2
    other.x = 1
    lib.step.argtypes = [ctypes.c_double]
    array = np.zeros(3)
    array.shape = (3, 1)
    made = system.make()
    made.value = 3
    object.__setattr__(other, "y", 1)
    return io, _hidden, np, spec._cache


class Holder:
    def __init__(self, problem):
        self.problem = problem
        self.buffer = np.zeros(2)

    def sync(self):
        self.buffer.shape = (2, 1)
        form = self.problem.form
        form.chart = None
        self.problem.report = None
''',
    "lagsim/output/__init__.py": "",
    "lagsim/output/io.py": '''
def write():
    import matplotlib.pyplot as plt
    from lagsim.run import driver
    return plt, driver
''',
    "lagsim/numeric/__init__.py": "",
    "lagsim/numeric/c/runtime.c": "/* C */\n",
    "lagsim/numeric/c/status.h": "/* header */\n",
    "lagsim/loose/helper.py": "",
    "pyproject.toml": '''
[tool.setuptools]
packages = ["lagsim", "lagsim.spec", "lagsim.run", "lagsim.numeric", "lagsim.gone"]

[tool.setuptools.package-data]
"lagsim.numeric" = ["c/*.c"]
''',
}


def _write_sample(root: Path) -> Package:
    for name, text in SAMPLE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Package.scan(root)


def _edges(found: list[Edge]) -> set[tuple[str, str, str]]:
    return {(e.source.removeprefix("lagsim."), e.target.removeprefix("lagsim."), e.how)
            for e in found}


def test_the_scan_finds_each_kind_of_import_on_a_sample(tmp_path: Path) -> None:
    """A string ``"lagsim.x:attr"``, a relative import inside a function and a from-import make
    one cycle of three modules across the layers; click and matplotlib outside their
    subpackages, and the private names, are each found at their line."""
    package = _write_sample(tmp_path)
    (members, among), = cycles(package)
    assert members == ["lagsim.output.io", "lagsim.run.driver", "lagsim.spec.system"]
    assert _edges(among) == {("spec.system", "run.driver", "string"),
                             ("run.driver", "spec.system", "from"),
                             ("run.driver", "output.io", "from"),
                             ("output.io", "run.driver", "from")}
    assert _edges(upward(package)) == {("spec.system", "run.driver", "string"),
                                       ("output.io", "run.driver", "from")}
    assert _edges(forbidden(package)) == {("spec.system", "run.driver", "string")}
    assert {(s.path, s.line, s.what) for s in confined(package)} == {
        ("lagsim/spec/system.py", 2, "click"), ("lagsim/output/io.py", 3, "matplotlib")}
    assert [str(s) for s in private_crossings(package)] == [
        "lagsim/run/driver.py:7: imports lagsim.spec.system._hidden",
        "lagsim/run/driver.py:12: system._helper (lagsim.spec.system._helper)"]
    assert [str(s) for s in private_attributes(package)] == [
        "lagsim/run/driver.py:21: spec._cache (defined in lagsim.spec.system)"]
    assert unplaced(package) == ["lagsim.loose.helper"]


def test_the_scan_finds_writes_into_other_modules_objects_on_a_sample(tmp_path: Path) -> None:
    """``self``, ``cls()``, a class of the module, a library's object made here and the ctypes
    protocol are allowed; a parameter (typed with another module's class or not), another
    module's function's result, ``object.__setattr__`` on a parameter, a local taken from an
    object held by ``self`` and an attribute of such an object are not."""
    package = _write_sample(tmp_path)
    assert [str(s) for s in foreign_writes(package)] == [
        "lagsim/run/driver.py:13: run: spec.value = … (a parameter)",
        "lagsim/run/driver.py:14: run: other.x = … (a parameter)",
        "lagsim/run/driver.py:19: run: made.value = … (assigned from system.make())",
        "lagsim/run/driver.py:20: run: __setattr__(…) on other (a parameter)",
        "lagsim/run/driver.py:32: Holder.sync: form.chart = … (assigned from self.problem.form)",
        "lagsim/run/driver.py:33: Holder.sync: self.problem.report = … "
        "(an attribute of another object)"]
    assert unshipped_packages(tmp_path) == [
        "lagsim.output (lagsim/output) is not in [tool.setuptools] packages",
        "lagsim/loose has modules but no __init__.py",
        "lagsim.gone is listed but lagsim/gone/ does not exist"]
    assert unshipped_data(tmp_path) == ["lagsim/numeric/c/status.h"]


def _listed(edges: list[Edge], package: Package) -> str:
    return "\n".join(f"  {package.modules[e.source].path}:{e.line}: {e.source} -> {e.target}"
                     f" ({e.how})" for e in edges)


def test_no_import_cycle() -> None:
    """No strongly connected set of more than one module in the import graph."""
    package = Package.scan(ROOT)
    found = cycles(package)
    report = "\n".join(
        f"{len(members)} modules in one cycle: {', '.join(members)}\n"
        f" imports among them (cut some):\n{_listed(among, package)}"
        for members, among in found)
    assert not found, "import cycles:\n" + report


def test_every_module_has_a_layer() -> None:
    assert unplaced(Package.scan(ROOT)) == [], (
        f"modules under a name no layer holds (layers: {LAYERS})")


def test_no_import_points_up_the_layers() -> None:
    package = Package.scan(ROOT)
    found = upward(package)
    order = " < ".join(", ".join(stages) for stages in LAYERS)
    assert not found, f"imports pointing up ({order}):\n" + _listed(found, package)


def test_spec_and_symbolic_import_nothing_of_the_stages_issue_23_names() -> None:
    package = Package.scan(ROOT)
    found = forbidden(package)
    assert not found, ("spec imports nothing of run, numeric, analysis, viz or cli; symbolic "
                       "nothing of numeric, run, viz or cli:\n" + _listed(found, package))


def test_click_only_in_cli_and_matplotlib_only_in_viz() -> None:
    found = confined(Package.scan(ROOT))
    assert not found, "click outside lagsim/cli or matplotlib outside lagsim/viz:\n" + "\n".join(
        f"  {site}" for site in found)


def test_no_private_name_crosses_a_module() -> None:
    found = private_crossings(Package.scan(ROOT))
    assert not found, ("private names used outside their module (make them public, or move "
                       "the user beside them):\n" + "\n".join(f"  {site}" for site in found))


def test_no_private_attribute_of_another_modules_objects() -> None:
    """``obj._x`` where only another lagsim module defines ``_x`` (a heuristic by names, said
    in tests/structure.py): what the engines need from a formulation or a compiled system is a
    method or a declared field of its contract."""
    found = private_attributes(Package.scan(ROOT))
    assert not found, ("private attributes of other modules' objects read:\n"
                       + "\n".join(f"  {site}" for site in found))


def test_no_module_writes_into_another_modules_objects() -> None:
    found = foreign_writes(Package.scan(ROOT))
    assert not found, ("attributes written on objects the module did not make (give the "
                       "owner a method or a declared field; tests/structure.py lists what is "
                       "allowed):\n" + "\n".join(f"  {site}" for site in found))


def test_a_non_editable_install_ships_every_package_and_c_source() -> None:
    assert unshipped_packages(ROOT) == []
    assert {".c", ".h"} <= {p.suffix for p in (ROOT / "lagsim" / "numeric" / "c").iterdir()}
    assert unshipped_data(ROOT, "lagsim.numeric", "c") == [], (
        "add a pattern to [tool.setuptools.package-data]")
