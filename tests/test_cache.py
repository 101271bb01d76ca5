"""The compile cache can be trusted (issue 15) and parameters do not recompile (issue 8 §1, §4).

A library is loaded only from the user's own folder, only when it is a regular file of the
user's, hashes to the sum recorded beside it and reports the key asked for; anything else is
rebuilt and the run's output is right. Runs go through the CLI in subprocesses where a bad
library could kill or hang the process. The reference output is a run on a clean cache, and
the C code of a model is the same for every parameter value, so results agree to 1e-14.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import symengine as se
from click.testing import CliRunner

import lagsim.errors
import lagsim.numeric.compile
from lagsim.cli import main
from lagsim.numeric import cache, ccompile
from lagsim.numeric.compile import compile_model
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.system import load_spec
from lagsim.symbolic.model import build_model

needs_cc = pytest.mark.skipif(ccompile.compiler() is None, reason="no C compiler")
# every test here is about the compile cache on disk (make test only, not make test-quick)
pytestmark = pytest.mark.cache
ARGS = ["simulate", "pendulum", "--t-end", "2", "--samples", "5"]
REFERENCE: dict[str, Any] = {}


@pytest.fixture(autouse=True)
def _fresh(tmp_path, monkeypatch):
    """An empty cache, nothing compiled in this process, and no message said yet."""
    monkeypatch.setenv("LAGSIM_CACHE", str(tmp_path / "cache"))
    lagsim.numeric.compile.MEMO.clear()
    lagsim.errors.SAID.clear()


def _env(folder: Path, tmp: Path | None = None, **extra: str) -> dict[str, str]:
    env = dict(os.environ, LAGSIM_CACHE=str(folder), **extra)
    env.pop("LAGSIM_NO_CC", None)
    if tmp is not None:
        tmp.mkdir(exist_ok=True)
        env["TMPDIR"] = str(tmp)
    return env


def _run(folder: Path, *args: str, tmp: Path | None = None, timeout: float = 120,
         **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lagsim", *(args or ARGS)],
                          env=_env(folder, tmp, **extra), capture_output=True, text=True,
                          timeout=timeout, check=False)


def _reference(tmp_path_factory) -> str:
    """The output of ``ARGS`` on a clean cache (which :func:`_seeded` copies)."""
    if "out" not in REFERENCE:
        folder = tmp_path_factory.mktemp("reference") / "cache"
        done = _run(folder)
        assert done.returncode == 0 and done.stderr == ""
        REFERENCE["out"], REFERENCE["folder"] = done.stdout, folder
    return REFERENCE["out"]


def _seeded(tmp_path: Path, tmp_path_factory) -> Path:
    """A copy of the cache a clean run of ``ARGS`` left."""
    _reference(tmp_path_factory)
    return Path(shutil.copytree(REFERENCE["folder"], tmp_path / "cache"))


def _model_library(folder: Path) -> Path:
    """The model's library in ``folder`` (the other one is the model-independent extension)."""
    found = [p for p in folder.glob("lagsim_*.so") if b"lagsim_dynamics" in p.read_bytes()]
    assert len(found) == 1, found
    return found[0]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _trusted(path: Path) -> bool:
    st = path.lstat()
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _planted(tmp_path: Path, key: str, marker: Path) -> Path:
    """A library reporting ``key`` whose loading creates ``marker``: what an attacker plants."""
    source = tmp_path / "planted.c"
    source.write_text(f"""
#include <stdio.h>
__attribute__((constructor)) static void planted(void)
{{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}
const char *lagsim_cache_key(void) {{ return "{key}"; }}
""", encoding="utf-8")
    out = tmp_path / f"planted_{key}.so"
    subprocess.run([ccompile.compiler(), "-shared", "-fPIC", "-o", str(out), str(source)],
                   check=True)
    return out


def _plant(folder: Path, tmp_path: Path, marker: Path, names: list[str]) -> None:
    for name in names:
        key = name[len("lagsim_"):-len(".so")]
        library = folder / name
        shutil.copyfile(_planted(tmp_path, key, marker), library)
        (folder / f"lagsim_{key}.sha256").write_text(_sha(library) + "\n", encoding="ascii")


@needs_cc
def test_planted_library_in_a_shared_folder_is_not_loaded(tmp_path, tmp_path_factory):
    """LAGSIM_CACHE=a world-writable folder (as /tmp): lagsim uses its private subfolder
    lagsim-<uid>, created 0700, and never loads what another user put at the cache's names."""
    clean = _seeded(tmp_path, tmp_path_factory)
    names = sorted(p.name for p in clean.glob("lagsim_*.so"))
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    marker = tmp_path / "planted-code-ran"
    _plant(shared, tmp_path, marker, names)
    done = _run(shared)
    assert done.returncode == 0 and done.stdout == _reference(tmp_path_factory)
    assert not marker.exists()
    private = shared / f"lagsim-{os.geteuid()}"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert sorted(p.name for p in private.glob("lagsim_*.so")) == names


@needs_cc
def test_untrusted_files_in_the_own_folder_are_rebuilt(tmp_path, tmp_path_factory):
    """Entries that group or others may write (and, as root, entries of another user) are
    replaced by a fresh build with one warning each, and their code never runs."""
    folder = _seeded(tmp_path, tmp_path_factory)
    library = _model_library(folder)
    marker = tmp_path / "planted-code-ran"
    _plant(folder, tmp_path, marker, [library.name])
    library.chmod(0o775)
    if os.geteuid() == 0:
        os.chown(library, 4242, 4242)
    done = _run(folder)
    assert done.returncode == 0 and done.stdout == _reference(tmp_path_factory)
    assert not marker.exists()
    assert done.stderr.count("\n") == 1 and "not loading" in done.stderr
    assert _trusted(library) and _sha(library) == (
        library.with_suffix(".sha256").read_text().strip())


@needs_cc
def test_a_private_subfolder_owned_by_someone_else_is_refused(tmp_path, tmp_path_factory):
    """Another user made lagsim-<uid> in the shared folder first: it is not used; the run
    builds in a temporary folder that it removes, and says so once."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    sub = shared / f"lagsim-{os.geteuid()}"
    sub.mkdir()
    sub.chmod(0o777)
    done = _run(shared, tmp=tmp_path / "tmp")
    assert done.returncode == 0 and done.stdout == _reference(tmp_path_factory)
    assert done.stderr.count("\n") == 1 and "cannot be used" in done.stderr
    assert list(sub.iterdir()) == [] and list((tmp_path / "tmp").iterdir()) == []


@needs_cc
@pytest.mark.parametrize("damage", ("truncated", "bit-flipped", "foreign", "sum-missing"))
def test_damaged_library_is_rebuilt(damage, tmp_path, tmp_path_factory, monkeypatch):
    """A truncated or bit-flipped library (its bytes no longer match its sum), another
    model's library with its own sum (it reports another key), or a library without a sum:
    rebuilt, and the output is the clean run's."""
    folder = _seeded(tmp_path, tmp_path_factory)
    library = _model_library(folder)
    good = library.read_bytes()
    if damage == "truncated":
        library.write_bytes(good[:len(good) // 2])
    elif damage == "bit-flipped":
        data = bytearray(good)
        for i in range(len(data) // 4, len(data), 997):
            data[i] ^= 0x55
        library.write_bytes(bytes(data))
    elif damage == "foreign":
        other = tmp_path / "other"
        monkeypatch.setenv("LAGSIM_CACHE", str(other))
        assert compile_model(build_model(load_spec("double_pendulum_constrained"))).backend == "c"
        foreign = _model_library(other)
        shutil.copyfile(foreign, library)
        shutil.copyfile(foreign.with_suffix(".sha256"), library.with_suffix(".sha256"))
    else:
        library.with_suffix(".sha256").unlink()
    done = _run(folder)
    assert done.returncode == 0 and done.stdout == _reference(tmp_path_factory)
    assert done.stderr == ""
    assert library.read_bytes() == good


@needs_cc
@pytest.mark.parametrize("which", (".so", ".sha256"))
def test_fifo_in_the_cache_does_not_hang(which, tmp_path, tmp_path_factory):
    folder = _seeded(tmp_path, tmp_path_factory)
    target = _model_library(folder).with_suffix(which)
    target.unlink()
    os.mkfifo(target)
    done = _run(folder, timeout=60)
    assert done.returncode == 0 and done.stdout == _reference(tmp_path_factory)
    assert _trusted(target)


@needs_cc
def test_symbolic_link_at_a_cache_name_is_not_followed(tmp_path, tmp_path_factory):
    """A link to a library (with its right sum beside the link) is replaced, not loaded."""
    folder = _seeded(tmp_path, tmp_path_factory)
    library = _model_library(folder)
    marker = tmp_path / "planted-code-ran"
    key = library.name[len("lagsim_"):-len(".so")]
    planted = _planted(tmp_path, key, marker)
    library.unlink()
    library.symlink_to(planted)
    library.with_suffix(".sha256").write_text(_sha(planted) + "\n", encoding="ascii")
    done = _run(folder)
    assert done.returncode == 0 and done.stdout == _reference(tmp_path_factory)
    assert not marker.exists() and _trusted(library)


@needs_cc
def test_eight_concurrent_first_runs_agree_and_build_once(tmp_path, tmp_path_factory):
    folder = tmp_path / "cache"
    runs = [subprocess.Popen([sys.executable, "-m", "lagsim", *ARGS], env=_env(folder),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(8)]
    results = [(p.communicate(timeout=300), p.returncode) for p in runs]
    assert all(code == 0 and err == "" for (_, err), code in results)
    assert {out for (out, _), _ in results} == {_reference(tmp_path_factory)}
    names = sorted(p.name for p in folder.iterdir())
    # one build each: the model, the extension that calls its right-hand side, the C step loop
    # and the loop that evaluates the output rows of all samples (c/rows.c)
    assert len([n for n in names if n.endswith(".so")]) == 4
    # and the system's validated spec (lagsim.api.open_system), written by each run alike
    assert [n[-5:] for n in names if not n.endswith((".so", ".sha256"))] == [".spec"]
    assert len([n for n in names if n.endswith(".sha256")]) == 5


@needs_cc
def test_a_cache_path_that_is_a_file_still_runs_and_says_so_once(tmp_path, tmp_path_factory):
    """No build folder is left in the temporary folder either (issue 15, limits)."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    done = _run(blocker, tmp=tmp_path / "tmp")
    assert done.returncode == 0 and done.stdout == _reference(tmp_path_factory)
    assert done.stderr.count("\n") == 1 and "compile cache cannot be used" in done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []


@needs_cc
@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_cache_folder_still_runs_and_says_so_once(tmp_path, tmp_path_factory):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o500)
    done = _run(folder, tmp=tmp_path / "tmp")
    assert done.returncode == 0 and done.stdout == _reference(tmp_path_factory)
    assert done.stderr.count("\n") == 1 and "compile cache cannot be used" in done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []


@needs_cc
@pytest.mark.parametrize("code", (errno.ENOSPC, errno.EROFS, errno.EACCES))
def test_a_full_disk_or_read_only_cache_still_runs_and_says_so_once(code, tmp_path,
                                                                    monkeypatch, capsys):
    """Nothing can be written into the cache folder (a full disk, a read-only file system or
    folder; in process, since /dev/full is not ours and root writes anywhere): two models still
    compile to C, in private temporary folders that are removed, with one message."""
    real = tempfile.mkdtemp

    def mkdtemp(*args, **kwargs):
        if kwargs.get("dir") is not None:
            raise OSError(code, os.strerror(code))
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    for name in ("pendulum", "double_pendulum_constrained"):
        numeric = compile_model(build_model(load_spec(name)))
        assert numeric.backend == "c"
    q = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    M, F, _, _ = numeric.dynamics(0.0, q, q)
    assert M[0, 0] > 0 and np.isfinite(F).all()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and os.strerror(code) in err
    assert list((tmp_path / "tmp").iterdir()) == []
    assert [p.name for p in (tmp_path / "cache").glob("lagsim_*")] == []


@needs_cc
def test_a_broken_compiler_falls_back_with_one_warning_and_the_reason_under_debug(
        tmp_path, tmp_path_factory):
    """CC=false: the LLVM path, the same trajectory to 1e-9, one warning line; --debug adds
    the compiler's exit status (issue 8 §4)."""
    done = _run(tmp_path / "cache", CC=shutil.which("false") or "/bin/false")
    assert done.returncode == 0 and done.stderr.count("\n") == 1
    assert "LLVM" in done.stderr and "exited with" not in done.stderr
    ours = np.loadtxt(done.stdout.splitlines()[1:], delimiter=",")
    ref = np.loadtxt(_reference(tmp_path_factory).splitlines()[1:], delimiter=",")
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9)
    debug = _run(tmp_path / "cache", "--debug", *ARGS, CC=shutil.which("false") or "/bin/false")
    assert debug.returncode == 0 and "exited with 1" in debug.stderr


def test_prune_keeps_the_most_recently_used(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    for i in range(6):
        for suffix in (".so", ".sha256"):
            path = folder / f"lagsim_{i}{suffix}"
            path.write_text("x", encoding="ascii")
            os.utime(path, (1000.0 + i, 1000.0 + i))
    os.utime(folder / "lagsim_0.so", (5000.0, 5000.0))
    (folder / "mine.txt").write_text("keep me", encoding="utf-8")
    fd = os.open(folder, os.O_RDONLY)
    try:
        assert cache.prune(folder, fd, keep=3) == 3
    finally:
        os.close(fd)
    assert sorted(p.name for p in folder.iterdir()) == [
        "lagsim_0.sha256", "lagsim_0.so", "lagsim_4.sha256", "lagsim_4.so", "lagsim_5.sha256",
        "lagsim_5.so", "mine.txt"]


@needs_cc
def test_use_touches_and_builds_prune(tmp_path):
    """A cache hit makes an entry the most recent; a build past ``keep`` removes the oldest."""
    t, q, qd = se.symbols("t q qd")
    paths = []
    for k in (2, 3):
        compiled = ccompile.compile_c(1, 0, [("dynamics", [t, q, qd], [se.Integer(k), q])], keep=2)
        paths.append(compiled.library)
        os.utime(compiled.library, (1000.0 + k, 1000.0 + k))
    again = ccompile.compile_c(1, 0, [("dynamics", [t, q, qd], [se.Integer(2), q])], keep=2)
    assert again.library == paths[0] and paths[0].stat().st_mtime > 2000
    ccompile.compile_c(1, 0, [("dynamics", [t, q, qd], [se.Integer(4), q])], keep=2)
    assert paths[0].exists() and not paths[1].exists()
    assert len(list(paths[0].parent.glob("lagsim_*.so"))) == 2


@needs_cc
def test_cache_info_and_clear_touch_only_lagsims_files(tmp_path):
    folder = tmp_path / "cache"
    runner = CliRunner()
    assert runner.invoke(main, ARGS).exit_code == 0
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    shown = runner.invoke(main, ["cache", "info"])
    size = sum(p.stat().st_size for p in folder.glob("lagsim_*"))
    count = len(list(folder.glob("lagsim_*.so")))
    assert count >= 1 and _model_library(folder)
    assert shown.exit_code == 0 and f"folder: {folder}\nentries: {count} " in shown.output
    assert f"size: {size / 1e3:.1f} kB" in shown.output
    cleared = runner.invoke(main, ["cache", "clear"])
    assert cleared.exit_code == 0 and f"removed {count} compiled model" in cleared.output
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    assert "entries: 0 " in runner.invoke(main, ["cache", "info"]).output


# parameters are inputs of the compiled code (issue 8 §1)

VALUES = ({"l": 1.3}, {"l": 0.7, "g": 3.7}, {"m": 2.5})


def _yaml_with(tmp_path: Path, values: dict[str, float]) -> Path:
    """The pendulum's file with ``values`` written into its parameters block."""
    text = _bundled("pendulum").read_text(encoding="utf-8")
    for name, value in values.items():
        lines = text.splitlines()
        lines = [f"  {name}: {value!r}" if line.startswith(f"  {name}: ") else line
                 for line in lines]
        text = "\n".join(lines) + "\n"
    path = tmp_path / f"pendulum_{'_'.join(f'{k}{v}' for k, v in values.items())}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _bundled(name: str) -> Path:
    from importlib import resources

    return Path(str(resources.files("lagsim.systems") / f"{name}.yaml"))


def _table(output: str) -> np.ndarray:
    return np.loadtxt(output.splitlines()[1:], delimiter=",", ndmin=2)


@pytest.mark.parametrize("backend", ("c", "llvm"))
def test_set_values_compile_once_and_agree_with_fresh_models(backend, tmp_path, monkeypatch):
    if backend == "c" and ccompile.compiler() is None:
        pytest.skip("no C compiler")
    if backend == "llvm":
        monkeypatch.setenv("LAGSIM_NO_CC", "1")
    else:
        monkeypatch.delenv("LAGSIM_NO_CC", raising=False)
    counts = {"c": 0, "llvm": 0}
    real_compile, real_lambdify = ccompile._compile, lagsim.numeric.compile.lambdify

    def counting_compile(cc, source, options, work):
        counts["c"] += "lagsim_dynamics" in source
        return real_compile(cc, source, options, work)

    def counting_lambdify(args, exprs):
        counts["llvm"] += 1
        return real_lambdify(args, exprs)

    monkeypatch.setattr(ccompile, "_compile", counting_compile)
    monkeypatch.setattr(lagsim.numeric.compile, "lambdify", counting_lambdify)
    runner = CliRunner()
    outputs = []
    for values in VALUES:
        sets = [a for k, v in values.items() for a in ("--set", f"{k}={v}")]
        done = runner.invoke(main, [*ARGS, *sets])
        assert done.exit_code == 0, done.output
        outputs.append(_table(done.output))
    assert counts == ({"c": 1, "llvm": 0} if backend == "c" else {"c": 0, "llvm": 4})
    for values, ours in zip(VALUES, outputs):
        lagsim.numeric.compile.MEMO.clear()
        monkeypatch.setenv("LAGSIM_CACHE", str(tmp_path / f"fresh{len(values)}{id(values)}"))
        fresh = runner.invoke(main, ["simulate", str(_yaml_with(tmp_path, values)),
                                     *ARGS[2:]])
        assert fresh.exit_code == 0, fresh.output
        np.testing.assert_allclose(ours, _table(fresh.output), rtol=1e-14, atol=1e-14)
    assert not np.allclose(outputs[0], outputs[1])


@pytest.mark.parametrize("name", ("double_pendulum_constrained", "slider_crank",
                                  "moving_pivot_pendulum"))
def test_with_parameters_equals_a_model_built_with_them(name, monkeypatch):
    """Every function of ``with_parameters`` against a model compiled with those values
    (the other backend's code, fresh) at seeded random states."""
    spec = load_spec(name)
    numeric = compile_model(build_model(spec))
    rng = np.random.default_rng(3)
    values = {k: v * float(rng.uniform(0.5, 1.5)) for k, v in numeric.parameters.items()}
    moved = numeric.with_parameters(values)
    assert moved.parameters == values and numeric.parameters == spec.parameter_values
    monkeypatch.setenv("LAGSIM_NO_CC", "1")
    fresh = compile_model(build_model(load_spec(name, values)), memo=OrderedDict())
    for _ in range(4):
        t = float(rng.uniform(0, 2))
        q, qd = rng.uniform(-1, 1, numeric.n), rng.uniform(-1, 1, numeric.n)
        for a, b in zip((*moved.dynamics(t, q, qd), *moved.phi(t, q),
                         *moved.velocity_terms(t, q)),
                        (*fresh.dynamics(t, q, qd), *fresh.phi(t, q),
                         *fresh.velocity_terms(t, q))):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert moved.energy(t, q, qd) == pytest.approx(fresh.energy(t, q, qd), rel=1e-12,
                                                       abs=1e-12)
    with pytest.raises(KeyError, match="no parameter zz"):
        numeric.with_parameters({"zz": 1.0})


def test_with_parameters_runs_the_new_pendulum(monkeypatch):
    """The small-angle period 2π√(l/g) follows l = 4 without compiling again."""
    spec = load_spec("pendulum", None, {"theta": 1e-4})
    model = build_model(spec)
    numeric = compile_model(model)
    calls = []
    monkeypatch.setattr(lagsim.numeric.compile, "_c_code", lambda *a: calls.append(a))
    monkeypatch.setattr(lagsim.numeric.compile, "_llvm_code", lambda *a: calls.append(a))
    longer = numeric.with_parameters({"l": 4.0})
    assert compile_model(build_model(load_spec("pendulum", {"l": 4.0}))).backend == (
        numeric.backend)
    assert calls == []
    period = 2 * np.pi * np.sqrt(4.0 / 9.81)
    spec4 = load_spec("pendulum", {"l": 4.0}, {"theta": 1e-4})
    traj = simulate(spec4, build_model(spec4), SimulateOptions(t_end=period, samples=2),
                    numeric=longer)
    assert traj.q[-1, 0] == pytest.approx(1e-4, rel=1e-6)


def _pendulum_groups(values: dict[str, float] | None = None):
    model = build_model(load_spec("pendulum", values))
    t, q, qd = model.t, list(model.q), list(model.qd)
    dyn = [model.mass_matrix[0, 0], model.forcing[0]]
    return model.n, model.m, [("dynamics", [t, *q, *qd], dyn)], list(model.substitutions())


@needs_cc
def test_the_key_covers_what_makes_the_code_and_never_parameter_values(monkeypatch, tmp_path):
    """Same key for other parameter values; another key for another compiler (its file elsewhere
    or rewritten: a new version is a new file), other flags, another Python ABI or platform,
    another generator (issue 15, issue 8 §1)."""
    cc = ccompile.compiler()
    key = ccompile.model_key(cc, *_pendulum_groups())
    assert ccompile.model_key(cc, *_pendulum_groups({"l": 2.0, "g": 1.0})) == key
    n, m, groups, params = _pendulum_groups()
    assert ccompile.model_key(cc, n, m, [("dynamics", groups[0][1], [groups[0][2][0], 0])],
                              params) != key

    def changed(**patches: Any) -> str:
        with monkeypatch.context() as patch:
            patch.setattr(ccompile, "_IDENTITY", {})
            for name, value in patches.items():
                patch.setattr(name, value)
            return ccompile.model_key(cc, *_pendulum_groups())

    copy = tmp_path / "cc"
    shutil.copy2(cc, copy)
    copied = ccompile.model_key(str(copy), *_pendulum_groups())
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 10**9))
    monkeypatch.setattr(ccompile, "_IDENTITY", {})
    rewritten = ccompile.model_key(str(copy), *_pendulum_groups())
    assert len({key, copied, rewritten}) == 3

    variants = {
        "flags": changed(**{"lagsim.numeric.ccompile.FLAGS": (*ccompile.FLAGS, "-ffast-math")}),
        "Python ABI": changed(**{"lagsim.numeric.ccompile.importlib.machinery.EXTENSION_SUFFIXES":
                                 [".cpython-399-x.so", ".so"]}),
        "platform": changed(**{"lagsim.numeric.ccompile.platform.machine": lambda: "riscv"}),
        "generator": changed(**{"lagsim.numeric.ccompile.CACHE_FORMAT": "x"}),
    }
    assert changed() == key
    assert all(v != key for v in variants.values()), variants
    assert len(set(variants.values())) == len(variants)


@needs_cc
def test_files_are_never_group_writable_whatever_the_umask(tmp_path):
    old = os.umask(0o002)
    try:
        compiled = ccompile.compile_c(1, 0, [("dynamics", list(se.symbols("t q qd")),
                                              [se.Integer(3), se.Integer(1)])])
    finally:
        os.umask(old)
    folder = compiled.library.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in folder.iterdir():
        assert path.stat().st_mode & 0o022 == 0, path
    np.testing.assert_allclose(compiled.ode_rhs(0.0, np.array([0.0, 2.0])), [2.0, 1 / 3],
                               rtol=1e-15)


def test_models_differing_in_parameter_values_share_their_code():
    first = compile_model(build_model(load_spec("double_pendulum_constrained")))
    other = compile_model(build_model(load_spec("double_pendulum_constrained",
                                                {"l1": 2.0, "m2": 0.3})))
    assert other._code is first._code and other.backend == first.backend
    assert other.parameters["l1"] == 2.0 and first.parameters["l1"] != 2.0


def test_cache_commands_on_a_cache_path_that_is_a_file(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("LAGSIM_CACHE", str(blocker))
    for command in ("info", "clear"):
        done = CliRunner().invoke(main, ["cache", command])
        assert done.exit_code == 2
        assert done.output.startswith("lagsim: error: LAGSIM_CACHE: the compile cache cannot "
                                      "be used") and done.output.count("\n") == 1
    assert blocker.read_text(encoding="utf-8") == "x"
