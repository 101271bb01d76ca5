"""lagsim's own C sources (the files of ``lagsim/numeric/c/``), their status codes and result
record.

Every C text lagsim compiles besides the generated model functions is a file of
``lagsim/numeric/c/`` (package data, read from this module's own folder so that an installed
lagsim finds it): the dense linear algebra (``runtime.c``), the model libraries' ODE right-hand side
and DOP853 step, the step loops (``cloop.c``, ``cradau.c``, the fixed-step loop with the RATTLE and
variational steps), the CPython extension of :func:`lagsim.numeric.ccompile.native_rhs` and the loop
over samples of :meth:`lagsim.numeric.ccompile.CFunction.rows` (``rows.c``). A file
may be a named template in the manner of PyDy's code generation (its ``CythonMatrixGenerator`` fills
named slots of fixed C text): ``@NAME@`` slots filled by :func:`fill`, or the macros a module
replaces itself (``FS_N_REAL``). ``#include "x.h"`` of a header of this folder is expanded in the
text (:func:`read`), so each library is compiled from one self-contained text and its cache key,
which covers that text, covers the header as well.

The status codes of the C loops are one enum in ``c/status.h``; :class:`Status` mirrors it, each
code with its message, and :class:`LoopResult` and :class:`StepResult` mirror the header's
result records ``lagsim_result`` and ``lagsim_step`` (tests/test_csource.py holds each pair to
agree).
"""

from __future__ import annotations

import ctypes
import enum
import hashlib
import re
from pathlib import Path

_INCLUDE = re.compile(r'#include "([A-Za-z0-9_]+\.h)"[ \t]*$', re.M)
"""An include of this folder's header, where it starts a line (:func:`read` checks that: a
pattern that starts with ``^`` is tried at every character, 0.9 ms of cloop.c's 99 kB against
0.3 ms for the literal; issue 31, "Start-up")."""


def _folder() -> Path:
    """This package's folder ``c`` (package data beside this file: what
    :func:`importlib.resources.files` gives for a package on the file system, without its
    import and zipfile's, a few ms of every run's start-up, issue 31)."""
    return Path(__file__).parent / "c"


def raw(name: str) -> str:
    """The text of the file ``lagsim/numeric/c/<name>`` as it is stored."""
    return (_folder() / name).read_text(encoding="utf-8")


def read(name: str) -> str:
    """The text of ``lagsim/numeric/c/<name>`` with each ``#include "<header>.h"`` of this folder
    replaced by the header's own text (recursively; a header's include guard keeps a second
    copy empty)."""
    text = raw(name)

    def included(match: re.Match[str]) -> str:
        at = match.start()
        return read(match.group(1)) if at == 0 or text[at - 1] == "\n" else match.group(0)

    return _INCLUDE.sub(included, text)


def fill(template: str, **values: object) -> str:
    """``template`` with each slot ``@NAME@`` replaced by ``str(values[NAME])``; a slot without
    a value, or a value without a slot, raises :class:`KeyError`."""
    for name, value in values.items():
        slot = f"@{name}@"
        if slot not in template:
            raise KeyError(f"the C template has no slot {slot}")
        template = template.replace(slot, str(value))
    left = re.search(r"@[A-Z][A-Z0-9_]*@", template)
    if left:
        raise KeyError(f"the C template's slot {left.group(0)} was not filled")
    return template


def digest() -> str:
    """The sha256 of every file of ``lagsim/numeric/c/`` (names and texts): part of the key of each
    library built from them (:func:`lagsim.numeric.ccompile._identity`)."""
    h = hashlib.sha256()
    for item in sorted(_folder().iterdir(), key=lambda f: f.name):
        if item.name.endswith((".c", ".h")):
            h.update(item.name.encode() + b"\0" + item.read_bytes() + b"\0")
    return h.hexdigest()


class Status(enum.IntEnum):
    """The C status codes of ``c/status.h`` (enum ``lagsim_status``), each with its message
    (``status.message``). The step loops' messages for a user are made from the state where
    they failed (:class:`lagsim.run.monitor.Guard`); ``message`` is what the code means."""

    message: str

    def __new__(cls, value: int, message: str) -> Status:
        member = int.__new__(cls, value)
        member._value_ = value
        member.message = message
        return member

    RUN_MORE = 0, "the call's steps are taken; the run goes on"
    RUN_DONE = 1, "the run reached t_end"
    RUN_STOP = 2, "the --stop-when expression changed sign"
    RUN_SMALL = 3, "the step size fell below the spacing of the numbers"
    RUN_SINGULAR = 4, "a singular linear system"
    RUN_NONFINITE = 5, "the state became non-finite"
    RUN_MASS = 6, "the mass matrix became singular"
    RUN_PROJECTION = 7, ("the projection onto the constraints did not converge; the constraints "
                         "may be singular here")
    RUN_STOP_NONFINITE = 8, "the --stop-when expression is not finite"
    RED_CHECK = 20, "the reduced formulation's chart is to be checked in Python"
    RED_SINGULAR = 21, "the reduced formulation's chart is singular"
    RED_NEWTON = 22, "Newton's method on the constraints did not converge in the numeric chart"
    STEP_NEWTON = 30, "Newton's method did not converge in the step"
    STEP_SINGULAR = 31, ("a singular linear system in the step (the mass matrix or the "
                         "constraints may be singular here)")
    STEP_NONFINITE = 32, "the state became non-finite"
    IMP_REDO = 40, "Python steps the current flight again from its start"


class LoopResult(ctypes.Structure):
    """What a call of a C step loop reports: the record ``lagsim_result`` of ``c/status.h``,
    field for field (see the header for each field's meaning)."""

    _fields_ = [
        ("t", ctypes.c_double),
        ("when", ctypes.c_double),
        ("regular_at", ctypes.c_double),
        ("h_abs", ctypes.c_double),
        ("guard_h", ctypes.c_double),
        ("stop_sign", ctypes.c_double),
        ("nfev", ctypes.c_long),
        ("nsteps", ctypes.c_long),
        ("njev", ctypes.c_long),
        ("nlu", ctypes.c_long),
        ("taken", ctypes.c_int),
        ("unchecked", ctypes.c_int),
        ("chart", ctypes.c_int),
        ("switches", ctypes.c_int),
    ]


class StepResult(ctypes.Structure):
    """One accepted DOP853 step of a model library: the record ``lagsim_step`` of
    ``c/status.h``, field for field (``h_abs`` in and out)."""

    _fields_ = [
        ("t_new", ctypes.c_double),
        ("h", ctypes.c_double),
        ("h_abs", ctypes.c_double),
        ("nfev", ctypes.c_long),
    ]

    def begin(self, h_abs: float) -> None:
        """Set the step size the next step starts from (``h_abs`` in)."""
        self.h_abs = h_abs
