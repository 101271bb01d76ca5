"""Test-session set-up: compiled models go to a fresh cache folder of this session, so the suite
neither reads a user's ~/.cache/lagsim nor leaves files there (subprocesses inherit it)."""

from __future__ import annotations

import os
import shutil
import tempfile

_CACHE = tempfile.mkdtemp(prefix="lagsim-test-cache-")


def pytest_configure(config) -> None:
    os.environ["LAGSIM_CACHE"] = _CACHE


def pytest_unconfigure(config) -> None:
    shutil.rmtree(_CACHE, ignore_errors=True)
