"""Test-session set-up.

- Compiled models go to a fresh cache folder of this session, so the suite neither reads a user's
  ~/.cache/lagsim nor leaves files there (subprocesses inherit it).
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

_CACHE = tempfile.mkdtemp(prefix="lagsim-test-cache-")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--quick", action="store_true",
                     help=f"leave out the tests marked {', '.join(OUT_OF_QUICK)} (make test-quick)")


def pytest_configure(config: pytest.Config) -> None:
    os.environ["LAGSIM_CACHE"] = _CACHE


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_CACHE, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
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
