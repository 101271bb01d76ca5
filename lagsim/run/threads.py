"""One BLAS thread while lagsim steps in Python (issue 31, "Scale").

lagsim's dense solves are small (n ≤ a few hundred): BLAS worker threads only wake up and
contend for the cores. Measured on the 32-chain through ``System.simulate(method="BDF")`` on 2
shared cores: 41.4 s to reach t = 1.3e-6 with OpenBLAS's default 2 threads against 3.6 s with
one. The command line sets the thread count before NumPy loads (``lagsim.cli.group``); a
program using the API has usually imported NumPy already, so the count is set at run time
through threadpoolctl (https://github.com/joblib/threadpoolctl, the library scikit-learn uses
for the same purpose), whatever the environment's ``OPENBLAS_NUM_THREADS`` says, and restored
after the run. The C step loops use lagsim's own linear algebra (``lagsim/numeric/c/runtime.c``)
and no BLAS, so they need no limit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

_CONTROLLER: list[Any] = []
"""The process's ``threadpoolctl.ThreadpoolController`` (10 ms to make: it looks through the
loaded libraries), made at the first run in Python, when scipy's solvers and so their BLAS are
loaded."""


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """The BLAS libraries loaded in this process limited to one thread inside the block, their
    own counts restored after it (about 60 µs)."""
    from threadpoolctl import ThreadpoolController

    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    with _CONTROLLER[0].limit(limits=1, user_api="blas"):
        yield
