"""Issue 32, "Hangs and unbounded resources" and "Smaller", and issue 29's last bullet: exact
float literals in generated C, a cache lock per entry, bounded derivations and expansions that
stop on SIGTERM, and the build stages shown on a terminal."""

from __future__ import annotations

import os
import shutil
from collections import OrderedDict

import numpy as np
import pytest

import lagsim.numeric.compile
from lagsim.numeric import ccompile
from lagsim.numeric.compile import compile_model
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

needs_cc = pytest.mark.skipif(ccompile.compiler() is None, reason="no C compiler")

SQRT2_OVER_3 = """\
name: exact_literal
parameters: {k: 1.0}
coordinates: [x]
masses:
  bob: {mass: 1, position: [x, 0]}
potential: k*x**2*1.4142135623730951/3 + x/10.0
initial: {x: 0.5, x_dot: 0}
"""


@needs_cc
def test_c_literals_are_exact_and_agree_with_llvm_bitwise(tmp_path, monkeypatch):
    """√2/3 written 1.4142135623730951/3 is folded by symengine into one double, and F = −V'
    into −0.9428090415820634 k x − 0.1: the C source must hold that double's exact text, not
    symengine's 15 digits (−0.942809041582063), so that the C and LLVM paths give the same
    bits (exactly equal: the same two multiplications and one addition)."""
    monkeypatch.setenv("LAGSIM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("LAGSIM_NO_CC", raising=False)
    memo: OrderedDict = OrderedDict()
    model = build_model(parse_spec(SQRT2_OVER_3, "exact.yaml"))
    fast = compile_model(model, memo=memo)
    monkeypatch.setenv("LAGSIM_NO_CC", "1")
    slow = compile_model(model, memo=memo)
    assert fast.backend == "c" and slow.backend != "c"
    constant = 1.4142135623730951 * (1 / 3) * 2  # symengine multiplies by the double 1/3
    groups = lagsim.numeric.compile._groups(model)
    source = ccompile._source(1, 0, groups, list(model.substitutions()))
    assert repr(constant) == "0.9428090415820634" and "0.9428090415820634" in source
    assert "0.942809041582063*" not in source
    for x in (0.3, -1.7, 2.0 ** -20, 123.456):
        _, f_c, _, _ = fast.dynamics(0.0, np.array([x]), np.array([0.0]))
        _, f_llvm, _, _ = slow.dynamics(0.0, np.array([x]), np.array([0.0]))
        assert f_c[0] == f_llvm[0], (x, f_c[0].hex(), f_llvm[0].hex())
        assert f_c[0] == pytest.approx(-constant * x - 0.1, rel=1e-15)


def test_numbers_past_the_15th_digit_key_different_code():
    """Two files whose literals differ only in the 16th digit give different expressions, so
    they must not share a compiled library (the key printed 15 digits: both 1.41421356237310)."""
    from lagsim.symbolic.model import spec_structure

    one = parse_spec(SQRT2_OVER_3, "a.yaml")
    other = parse_spec(SQRT2_OVER_3.replace("1.4142135623730951", "1.414213562373095"), "b.yaml")
    assert spec_structure(one) != spec_structure(other)
    assert spec_structure(one) == spec_structure(parse_spec(SQRT2_OVER_3, "c.yaml"))
    groups = [lagsim.numeric.compile._groups(build_model(s)) for s in (one, other)]
    assert ccompile.structure(1, 0, groups[0], []) != ccompile.structure(1, 0, groups[1], [])


# the compile cache locks one entry, not the folder (issue 32, "Hangs")

_SLOW_BUILD = """
import os, sys, time
from pathlib import Path
from lagsim.numeric import cache
key, started, release = sys.argv[1:4]

def build(work):
    Path(started).write_text("building", encoding="ascii")
    deadline = time.monotonic() + 60
    while not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.02)
    out = work / "lib.so"
    out.write_bytes(key.encode())
    return out

value, _ = cache.obtain(key, build, lambda name: Path(name).read_bytes().decode())
print(value)
"""


def test_a_slow_build_locks_its_own_entry_only(tmp_path, monkeypatch):
    """While one process builds entry A (held in its build: the symbolic work of a large model),
    another process's first run of entry B finishes at once, and the lock held is A's own lock
    file, not one for the folder; after A is built no lock file is left."""
    import fcntl
    import subprocess
    import sys
    import time

    folder = tmp_path / "cache"
    monkeypatch.setenv("LAGSIM_CACHE", str(folder))
    started, release = tmp_path / "started", tmp_path / "release"
    slow = subprocess.Popen([sys.executable, "-c", _SLOW_BUILD, "a" * 32, str(started),
                             str(release)], stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not started.exists():
            assert slow.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        fd = os.open(folder / "lagsim_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.lock", os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
        began = time.monotonic()
        other = subprocess.run([sys.executable, "-c", _SLOW_BUILD, "b" * 32,
                                str(tmp_path / "b-started"), str(tmp_path / "b-started")],
                               capture_output=True, text=True, timeout=20)
        assert other.returncode == 0 and other.stdout == "b" * 32 + "\n", other.stderr
        assert time.monotonic() - began < 10 and slow.poll() is None
    finally:
        release.write_text("go", encoding="ascii")
        out, _ = slow.communicate(timeout=30)
    assert slow.returncode == 0 and out == "a" * 32 + "\n"
    assert sorted(p.name for p in folder.iterdir() if "lock" in p.name) == []


# expansions bounded before they start; signals end a long C call (issue 32, "Hangs")

BOMBS = {
    "product": ("coordinates: [x, y]\nmasses:\n  p: {mass: m, position: [x, y]}\n"
                "potential: (x+y+1)**100*(x-y+2)**100\n"
                "initial: {x: 0.1, y: 0.1, x_dot: 0, y_dot: 0}\n"),
    "four_sum": ("coordinates: [x, y, z, w]\nmasses:\n  p: {mass: m, position: [x, y, z]}\n"
                 "  q: {mass: m, position: [w, 0, 0]}\npotential: (x+y+z+w+1)**100\n"
                 "initial: {x: 0.1, y: 0.1, z: 0, w: 0, x_dot: 0, y_dot: 0, z_dot: 0, "
                 "w_dot: 0}\n"),
}


def _lagsim(args, cwd, timeout=10.0, **kwargs):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "lagsim", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, **kwargs)


@pytest.mark.parametrize("command", ("derive", "check"))
@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_expansion_bombs_finish_within_seconds_and_name_the_limit(bomb, command, tmp_path):
    """Within every limit on what a file may write, these multiply out to 26 million products
    and 4.6 million terms; derive and check ran for minutes. Now each works within 10 s (the
    subprocess's timeout), prints the equations (or the conserved energy) unexpanded, and says
    once which limit kept it from multiplying out."""
    from lagsim.spec.limits import MAX_EXPANSION

    path = tmp_path / f"{bomb}.yaml"
    path.write_text(f"name: {bomb}\nparameters: {{m: 1.0}}\n" + BOMBS[bomb], encoding="utf-8")
    done = _lagsim([command, str(path)], tmp_path)
    assert done.returncode == 0, done.stderr
    notes = done.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith(
        "lagsim: note: an expression is left as it is, not multiplied out: it would have up to ")
    assert f"past lagsim's expansion limit of {MAX_EXPANSION:,} terms" in notes[0]
    if command == "check":
        assert "energy: h = " in done.stdout and ")**100" in done.stdout
    else:
        assert "m⋅ẍ + 100⋅" in done.stdout and "99" in done.stdout


def test_expansion_work_bounds_what_symengine_builds():
    """The bound counts products before they are collected, and the bases SymEngine expands
    inside roots and denominators; functions' arguments are not expanded."""
    import symengine as se

    from lagsim.symbolic.expansion import bounded_expand, expansion_work

    x, y = se.symbols("x y")
    assert expansion_work((x + y + 1)**100, 10**9) == 5151
    assert expansion_work((x + y + 1)**100 * (x - y + 2)**100, 10**9) == 5151**2
    assert expansion_work(1 / (x + y + 1)**100, 10**9) == 5151
    assert expansion_work(se.sqrt((x + y + 1)**100 + 1), 10**9) == 5152
    assert expansion_work(se.sin((x + y + 1)**100), 10**9) == 1
    assert bounded_expand((x + y + 1)**100 * (x - y + 2)**100) is None
    assert bounded_expand((x + 1)**3) == x**3 + 3 * x**2 + 3 * x + 1


def _on_terminal(args, cache, until=None, timeout=60.0):
    """Run ``lagsim ARGS`` with stderr on a pseudo-terminal and a fresh cache ``cache``:
    (the process, what it wrote on the terminal, the terminal's open end or None). With
    ``until``, return as soon as that text has appeared, the process still running and the
    terminal open (the caller closes it)."""
    import pty
    import select
    import subprocess
    import sys
    import time

    master, slave = pty.openpty()
    env = dict(os.environ, LAGSIM_CACHE=str(cache))
    env.pop("LAGSIM_NO_CC", None)
    proc = subprocess.Popen([sys.executable, "-m", "lagsim", *args], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                seen += chunk
                if until is not None and until.encode() in seen:
                    return proc, seen.decode("utf-8", "replace"), master
            elif proc.poll() is not None and until is None:
                break
    except BaseException:
        proc.kill()
        os.close(master)
        raise
    os.close(master)
    proc.wait(timeout=timeout)
    return proc, seen.decode("utf-8", "replace"), None


@needs_cc
def test_a_cold_build_shows_its_stages_on_a_terminal_only(tmp_path):
    """Issue 29: a cold build printed nothing, then the bar jumped 0 → 100 %. On a terminal each
    stage is named (and the line erased after); in a pipe nothing is written."""
    proc, seen, _ = _on_terminal(["simulate", "pendulum", "--t-end", "0.5"], tmp_path / "tty")
    assert proc.returncode == 0
    stages = [part.split("…")[0] for part in seen.split("\r\x1b[K") if "building" in part]
    model = [s.removeprefix("lagsim: building the model: ") for s in stages
             if s.startswith("lagsim: building the model: ")]
    assert model[:3] == ["deriving M and F (1 coordinate)", "generating C",
                         "generating C: common subexpressions of dynamics (2 values)"]
    assert model[-1].startswith("compiling C (") and model[-1].endswith(" kB)")
    assert seen.index("compiling C") < seen.index("simulating")
    shutil.copytree(tmp_path / "tty", tmp_path / "pipe")
    before = set((tmp_path / "pipe").glob("lagsim_*.so"))
    piped = _lagsim(["simulate", "free_mass_cartesian", "--t-end", "0.5"], tmp_path,
                    timeout=60, env=dict(os.environ, LAGSIM_CACHE=str(tmp_path / "pipe")))
    assert piped.returncode == 0 and piped.stderr == ""
    assert len(set((tmp_path / "pipe").glob("lagsim_*.so")) - before) == 1


@needs_cc
def test_sigterm_ends_a_long_symbolic_step_at_once(tmp_path):
    """SIGTERM half a second into the common-subexpression elimination of the 48-chain's
    dynamics (one SymEngine C call of seconds, during which Python's handler cannot run: 4.4 s
    here without :func:`lagsim.symbolic.expansion.killable`) ends the process within 2 s: by the
    signal's default action (-15 here, 143 in a shell) or the clean "terminated by SIGTERM"
    line."""
    import signal
    import time

    from lagsim.spec.chains import chain_yaml

    path = tmp_path / "chain_48.yaml"
    path.write_text(chain_yaml(48), encoding="utf-8")
    proc, seen, master = _on_terminal(["simulate", str(path), "--t-end", "0.01"],
                                      tmp_path / "cache",
                                      until="common subexpressions of dynamics", timeout=60)
    assert master is not None, seen
    try:
        time.sleep(0.5)
        began = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        assert time.monotonic() - began < 2.0
    finally:
        proc.kill()
        os.close(master)
    assert proc.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM)


@pytest.mark.cache
def test_prune_removes_lock_files_a_killed_build_left(tmp_path):
    """A build ended by SIGTERM inside a SymEngine call leaves its entry's lock file; the next
    prune removes one older than a day, and keeps a fresh one (a build going on)."""
    import time

    from lagsim.numeric import cache

    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    old, fresh = folder / "lagsim_old.lock", folder / "lagsim_new.lock"
    for path in (old, fresh):
        path.write_text("", encoding="ascii")
    stale = time.time() - cache.STALE_BUILD_S - 60
    os.utime(old, (stale, stale))
    fd = os.open(folder, os.O_RDONLY)
    try:
        cache.prune(folder, fd)
    finally:
        os.close(fd)
    assert sorted(p.name for p in folder.iterdir()) == ["lagsim_new.lock"]
