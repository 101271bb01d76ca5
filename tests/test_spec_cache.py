"""The validated-spec cache (issue 31, "Start-up"): :func:`lagsim.api.open_system` keeps the
spec :func:`lagsim.spec.system.parse_spec` gives in the compile cache's folder
(:func:`lagsim.numeric.cache.store_blob`) and a later run with the same text, label, stem,
``--set`` and ``--init`` values, read by the same lagsim, unpickles it instead of reading the
YAML again.

What is held: the kept spec equals the parsed one field for field for every bundled system,
with and without values put in, and ``lagsim simulate`` writes the same bytes from either; any
change of the key's parts misses; an entry that fails the cache's checks (bytes changed, a
symbolic link, writable by the group) is never unpickled, even when it is a pickle that would
run code, and the file is read again; a refused file stores nothing and is refused alike twice;
the spec entries are pruned to their own bound without touching the libraries.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner

from lagsim import api, errors
from lagsim.cli import main
from lagsim.numeric import cache
from lagsim.spec import system
from lagsim.spec.system import SystemSpec, bundled_systems, parse_spec, read_source

WINDOW = ("--t-end", "1", "--samples", "21")
"""The span of tests/golden's simulate runs, whose compiled models this test reuses."""


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The labels parse_spec is called with from now on (each a cache miss of open_system)."""
    calls: list[str] = []
    real = system.parse_spec

    def counting(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(system, "parse_spec", counting)
    return calls


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test, and lagsim's once-a-process messages said afresh."""
    where = tmp_path / "cache"
    monkeypatch.setenv("LAGSIM_CACHE", str(where))
    monkeypatch.setattr(errors, "SAID", set())
    return where


@pytest.fixture
def stamped(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test session's cache folder (its compiled models are shared), where this test's
    spec entries are its own: the stamp of lagsim's sources is replaced by one of this test;
    lagsim's once-a-process messages said afresh."""
    stamp = f"tests/test_spec_cache.py {request.node.name} {os.urandom(8).hex()}".encode()
    monkeypatch.setattr(api, "_spec_stamp", lambda: stamp)
    monkeypatch.setattr(errors, "SAID", set())
    where, dfd = cache.open_folder()
    os.close(dfd)
    return where


def _specs(where: Path) -> list[Path]:
    return sorted(where.glob("lagsim_*.spec"))


def _values(spec: SystemSpec) -> tuple[dict[str, str], dict[str, float]]:
    """A ``--set`` of the first parameter (as text, an expression) and an ``--init`` of the
    first coordinate (a number): the two kinds of value the command line gives."""
    first = spec.parameters[0] if spec.parameters else None
    parameters = {first.name: f"{first.value!r}*3/2 + 1/4"} if first is not None else {}
    return parameters, {spec.coordinates[0]: 0.125}


@pytest.mark.parametrize("name", bundled_systems())
def test_the_kept_spec_of_each_bundled_system_is_the_parsed_one(name, folder, parses):
    """A miss parses and stores, the next open unpickles (no parse) a spec equal to the
    parser's, field for field, with and without ``--set``/``--init``."""
    text, label, stem = read_source(name)
    bare = parse_spec(text, label, stem)
    for parameters, initial in (({}, {}), _values(bare)):
        parses.clear()
        first = api.open_system(name, parameters, initial).spec
        assert parses == [label]
        kept = api.open_system(name, parameters, initial).spec
        assert parses == [label]
        fresh = parse_spec(text, label, stem, parameters, initial)
        assert kept is not first
        for field in dataclasses.fields(SystemSpec):
            assert getattr(kept, field.name) == getattr(fresh, field.name), field.name
        assert kept == fresh == first
    assert len(_specs(folder)) == 2


@pytest.mark.parametrize("name", bundled_systems())
def test_simulate_writes_the_same_bytes_from_a_parsed_and_a_kept_spec(
        name, tmp_path, stamped, parses):
    """The first run misses (parses), the second hits; the same CSV and stderr."""
    outputs = []
    for turn in ("cold", "warm"):
        out = tmp_path / f"{turn}.csv"
        result = CliRunner().invoke(main, ["simulate", name, *WINDOW, "-o", str(out)])
        assert result.exit_code == 0, result.output
        outputs.append((out.read_bytes(), result.stderr))
    assert parses == [f"{name}.yaml"]
    assert outputs[0] == outputs[1]


def test_a_first_and_a_second_run_compute_alike_to_the_last_bit(folder, parses):
    """The run that parses the file goes on with the spec as it is kept (unpickled), as the next
    run does: SymEngine's sums keep their terms in the order they were made, which unpickling
    changes, and the gyroscope's equilibrium residual was 2.2e-16 from the parsed spec and
    1.7e-16 from the kept one (`derive --form linear` prints it)."""
    args = ["derive", "gyroscope", "--form", "linear", "--format", "text", "--budget", "100"]
    printed = []
    for _ in range(2):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        printed.append(result.output)
    assert parses == ["gyroscope.yaml"]
    assert printed[0] == printed[1]
    assert "residual " in printed[0]


PENDULUM = """coordinates: [theta]
parameters: {m: 1.0, l: 2.0, g: 9.81}
masses:
  bob: {mass: m, position: [l*sin(theta), -l*cos(theta)]}
gravity: [0, -g]
initial: {theta: 0.5}
"""


def test_each_part_of_the_key_misses_when_changed(folder, parses, tmp_path, monkeypatch):
    """Text, label, stem, a ``--set`` or ``--init`` value or its type (the text "2" and the
    number 2), and the stamp of lagsim's sources: each change is a new entry, parsed; the same
    arguments again are not."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    for where in (a, b):
        (where / "one.yaml").write_text(PENDULUM, encoding="utf-8")
    (a / "two.yaml").write_text(PENDULUM, encoding="utf-8")
    opens = [
        (PENDULUM, {}, {}),
        (PENDULUM + "# a comment\n", {}, {}),
        (a / "one.yaml", {}, {}),
        (b / "one.yaml", {}, {}),          # the label alone differs
        (a / "two.yaml", {}, {}),          # and the stem
        (PENDULUM, {"l": 2.5}, {}),
        (PENDULUM, {"l": 2}, {}),
        (PENDULUM, {"l": "2"}, {}),
        (PENDULUM, {"l": 2.0}, {}),
        (PENDULUM, {"l": 2.0}, {"theta": 0.25}),
        (PENDULUM, {"l": 2.0}, {"theta": 0.5}),
        (PENDULUM, {"l": 2.0}, {"theta_dot": 0.5}),
    ]
    for source, parameters, initial in opens:
        api.open_system(source, parameters, initial, api=True)
    assert len(parses) == len(opens) == len(_specs(folder))
    for source, parameters, initial in opens:
        again = api.open_system(source, parameters, initial, api=True)
        text, label, stem = api._read(source)
        assert again.spec == parse_spec(text, label, stem, parameters, initial)
    assert len(parses) == len(opens)
    assert api._spec_key(PENDULUM, "x", "one", None, None) != api._spec_key(
        PENDULUM, "x", "two", None, None)
    monkeypatch.setattr(api, "_spec_stamp", lambda: b"another lagsim")
    api.open_system(PENDULUM, api=True)
    assert len(parses) == len(opens) + 1


def test_a_value_whose_repr_may_not_tell_it_apart_is_not_cached(folder, parses):
    """A ``--set`` value of another type than int, float or str (here a SymEngine number)
    is parsed each time and stores nothing."""
    import symengine as se

    for _ in range(2):
        spec = api.open_system(PENDULUM, {"l": se.Integer(3)}, api=True).spec
        assert spec.parameter_values["l"] == 3.0
    assert len(parses) == 2 and _specs(folder) == []


class _Planted:
    """A pickle that, when loaded, creates the file ``marker``: what a cache entry written by
    someone else could hold."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _plant(entry: Path, data: bytes) -> None:
    entry.write_bytes(data)
    entry.with_suffix(".sha256").write_text(hashlib.sha256(data).hexdigest() + "\n",
                                            encoding="ascii")


def _reference_csv(tmp_path: Path) -> bytes:
    out = tmp_path / "reference.csv"
    result = CliRunner().invoke(main, ["simulate", "-", *WINDOW, "-o", str(out)],
                                input=PENDULUM)
    assert result.exit_code == 0, result.output
    return out.read_bytes()


@pytest.mark.parametrize("damage", ("bytes changed", "symbolic link", "group-writable",
                                    "not a spec"))
def test_an_entry_that_fails_the_checks_is_not_loaded(damage, stamped, parses, tmp_path):
    """The entry of the next run is replaced by a pickle that would run code (for "not a
    spec", a trusted pickle of a list): it is not unpickled (or, trusted, not taken), the file is
    parsed again, the run's CSV is the right one, and a fresh entry replaces the bad one.
    Only an entry others may write is warned about."""
    reference = _reference_csv(tmp_path)
    assert parses == ["<stdin>"]
    entry = stamped / f"lagsim_{api._spec_key(PENDULUM, '<stdin>', 'stdin', {}, {})}.spec"
    assert entry.is_file()
    marker = tmp_path / "planted-code-ran"
    planted = pickle.dumps(_Planted(marker))
    if damage == "bytes changed":
        _plant(entry, planted)
        entry.write_bytes(planted + b" ")
    elif damage == "symbolic link":
        elsewhere = tmp_path / "elsewhere.spec"
        elsewhere.write_bytes(planted)
        _plant(entry, planted)
        entry.unlink()
        entry.symlink_to(elsewhere)
    elif damage == "group-writable":
        _plant(entry, planted)
        entry.chmod(0o664)
    else:
        _plant(entry, pickle.dumps([1, 2, 3]))
    out = tmp_path / "again.csv"
    result = CliRunner().invoke(main, ["simulate", "-", *WINDOW, "-o", str(out)],
                                input=PENDULUM)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == reference
    assert not marker.exists()
    assert parses == ["<stdin>", "<stdin>"]
    if damage == "group-writable":
        assert result.stderr == (f"lagsim: warning: not loading {entry}: {entry.name}: group or "
                                 "others may write to it (mode 0664); reading the file again\n")
    else:
        assert result.stderr == ""
    assert not entry.is_symlink() and entry.stat().st_mode & 0o022 == 0
    assert pickle.loads(entry.read_bytes()) == parse_spec(PENDULUM, "<stdin>", "stdin")


def test_a_refused_file_stores_nothing_and_is_refused_alike_twice(folder, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(PENDULUM.replace("gravity: [0, -g]", "gravity: [0, -h]"), encoding="utf-8")
    results = [CliRunner().invoke(main, ["simulate", str(bad), *WINDOW]) for _ in range(2)]
    assert [r.exit_code for r in results] == [2, 2]
    assert results[0].stderr == results[1].stderr
    assert results[0].stderr.startswith(f"lagsim: error: {bad}:5:")
    assert results[0].stderr.count("\n") == 1
    assert _specs(folder) == []


def test_the_spec_entries_are_pruned_to_their_own_bound(folder, monkeypatch):
    """The least recently used specs beyond cache.SPEC_KEEP go; libraries (counted apart,
    against cache.KEEP) stay, however many specs there are."""
    folder.mkdir(mode=0o700)
    libraries = [folder / f"lagsim_{n:064x}.so" for n in range(2)]
    for library in libraries:
        _plant(library, b"not really a library")
        os.utime(library, (1.0, 1.0))
    texts = [PENDULUM.replace("0.5}", f"0.{n}1}}") for n in range(5)]
    for text in texts:
        api.open_system(text, api=True)
    entries = _specs(folder)
    assert len(entries) == 5
    order = sorted(entries, key=lambda e: e.stat().st_mtime_ns)
    for age, entry in enumerate(order):
        os.utime(entry, (1000.0 + age, 1000.0 + age))
    monkeypatch.setattr(cache, "SPEC_KEEP", 3)
    api.open_system(PENDULUM, api=True)
    left = _specs(folder)
    assert len(left) == 3
    new = set(left) - set(entries)
    assert len(new) == 1 and set(left) - new == set(order[3:])
    assert all(e.with_suffix(".sha256").exists() for e in left)
    assert not any(e.with_suffix(".sha256").exists() for e in order[:3])
    assert all(library.exists() and library.with_suffix(".sha256").exists()
               for library in libraries)


def test_the_stamp_reads_every_source_of_the_spec_package_once_a_process(monkeypatch):
    """Every lagsim/spec/*.py (a module added there is covered), errors.py, naming.py,
    records.py and PyYAML's __init__ are read into the stamp, once: the process keeps it."""
    import builtins

    opened: list[str] = []
    real = builtins.open

    def watching(path, *args, **kwargs):
        opened.append(str(path))
        return real(path, *args, **kwargs)

    api._spec_stamp.cache_clear()
    monkeypatch.setattr(builtins, "open", watching)
    stamp = api._spec_stamp()
    assert api._spec_stamp() is stamp
    monkeypatch.setattr(builtins, "open", real)
    top = Path(api.__file__).parent
    expected = {*(top / "spec").glob("*.py"), *(top / n for n in ("errors.py", "naming.py",
                                                                  "records.py"))}
    assert top / "spec" / "reader.py" in expected
    assert {Path(p) for p in opened} - expected == {Path(yaml_init())}
    assert sorted(Path(p) for p in opened if Path(p) in expected) == sorted(expected)


def yaml_init() -> str:
    import importlib.util

    found = importlib.util.find_spec("yaml")
    assert found is not None and found.origin is not None
    return found.origin
