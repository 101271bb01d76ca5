"""Issue 32, "Hangs and unbounded resources" and "Smaller", and issue 29's last bullet: exact
float literals in generated C, a cache lock per entry, bounded derivations and expansions that
stop on SIGTERM, and the build stages shown on a terminal."""

from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np
import pytest

import lagsim.compile
from lagsim import ccompile
from lagsim.compile import compile_model
from lagsim.model import build_model
from lagsim.spec import parse_spec

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
    monkeypatch.setattr(lagsim.compile, "_MEMO", OrderedDict())
    model = build_model(parse_spec(SQRT2_OVER_3, "exact.yaml"))
    fast = compile_model(model)
    monkeypatch.setenv("LAGSIM_NO_CC", "1")
    slow = compile_model(model)
    assert fast.backend == "c" and slow.backend != "c"
    constant = 1.4142135623730951 * (1 / 3) * 2  # symengine multiplies by the double 1/3
    source = ccompile._source(1, 0, lagsim.compile._groups(model), list(model.substitutions()))
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
    from lagsim.model import spec_structure

    one = parse_spec(SQRT2_OVER_3, "a.yaml")
    other = parse_spec(SQRT2_OVER_3.replace("1.4142135623730951", "1.414213562373095"), "b.yaml")
    assert spec_structure(one) != spec_structure(other)
    assert spec_structure(one) == spec_structure(parse_spec(SQRT2_OVER_3, "c.yaml"))
    groups = [lagsim.compile._groups(build_model(s)) for s in (one, other)]
    assert ccompile.structure(1, 0, groups[0], []) != ccompile.structure(1, 0, groups[1], [])


# the compile cache locks one entry, not the folder (issue 32, "Hangs")

_SLOW_BUILD = """
import os, sys, time
from pathlib import Path
from lagsim import cache
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
