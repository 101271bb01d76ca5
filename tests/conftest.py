"""Test-session set-up.

- Compiled models go to a fresh cache folder of this session, so the suite neither reads a user's
  ~/.cache/lagsim nor leaves files there (subprocesses inherit it). Under pytest-xdist the
  workers share the folder of the session that started them (``LAGSIM_TEST_CACHE``), so that a
  model several test files compile (every bundled system: test_golden, test_systems_simulate,
  test_check_systems, ...) is built once per session, not once per worker; the cache is made
  for concurrent runs (lagsim/numeric/cache.py: one lock per entry), and that session removes
  the folder when it ends.
- Order: the files of :data:`FIRST` come first, the others in pytest's order. Under
  ``--dist loadfile --no-loadscope-reorder`` (the Makefile's ``PARALLEL``) xdist hands the
  files to its workers in this order, so that the longest start first and the short ones fill
  in at the end, instead of one long file starting last while the other worker has nothing
  left (xdist's own order is by the number of tests).
- Tiers: each test that starts a process or sends a signal is marked ``subprocess`` or
  ``signals`` from its syntax (tests/tiers.py says how, and what it cannot see); ``--quick``
  (``make test-quick``) leaves out the tests marked with any of ``tiers.OUT_OF_QUICK``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from tiers import OUT_OF_QUICK, kinds_of

SHARED = "LAGSIM_TEST_CACHE"
"""The environment variable through which xdist's workers get their session's cache folder."""
_WORKER = bool(os.environ.get("PYTEST_XDIST_WORKER")) and bool(os.environ.get(SHARED))
_CACHE = os.environ[SHARED] if _WORKER else tempfile.mkdtemp(prefix="lagsim-test-cache-")


FIRST = ("test_impacts.py", "test_readme_commands.py", "test_golden.py",
         "test_whipple_bicycle.py", "test_cache.py", "test_sweep_trust.py", "test_output.py",
         "test_loose_ends.py", "test_fit.py", "test_bounds_trust.py")
"""The longest test files, longest first (``pytest -n 2 --dist loadfile --durations=80`` summed
by file, 2026-12-04)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--quick", action="store_true",
                     help=f"leave out the tests marked {', '.join(OUT_OF_QUICK)} (make test-quick)")


def pytest_configure(config: pytest.Config) -> None:
    os.environ["LAGSIM_CACHE"] = _CACHE
    os.environ[SHARED] = _CACHE


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _WORKER:
        shutil.rmtree(_CACHE, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(Path(item.path).name, len(FIRST)))
    for item in items:
        if isinstance(item, pytest.Function):
            cls = item.cls.__name__ if item.cls is not None else None
            for kind in sorted(kinds_of(Path(item.path), item.originalname, cls)):
                item.add_marker(kind)
    if not config.getoption("quick"):
        return
    kept, left = [], []
    for item in items:
        (left if any(item.get_closest_marker(m) for m in OUT_OF_QUICK) else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
