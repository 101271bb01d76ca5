"""A model's numeric functions as C, compiled once with the system C compiler (issues 5, 8, 15).

:func:`compile_c` writes one C file holding every function :mod:`lagsim.numeric.compile` needs (each
expression list with its common subexpressions eliminated by symengine), plus, for a system
without constraints, the whole right-hand side of M(q) q̈ = F(q, q̇, t) (seed 001 eq.
10.12–10.14): y' = [q̇, q̈] with q̈ from an L D Lᵀ factorisation (Cholesky without square
roots) of the symmetric positive definite M written in C (partial-pivoting LU when M is not
positive definite, as ``numpy.linalg.solve`` would still solve it). M is never inverted
symbolically.

The parameters are inputs of the compiled code, an array ``p`` passed to every function (as
PyDy's code generation passes its constants), so one library serves every parameter value
(issue 8 §1): :meth:`CompiledC.bind` gives the functions for other values without compiling.

The library is kept in the compile cache (:mod:`lagsim.numeric.cache`, which decides whether a file
may be loaded) under a key that covers everything that determines the code: the model's structure
(its expressions with the parameters as symbols, never their values), this generator's source,
lagsim's, symengine's and scipy's versions, the compiler's path and version, the flags, the Python
ABI and the platform (:func:`model_key`). The library reports its key through the exported function
``lagsim_cache_key``, which is checked after loading. Without constraints the library also holds
DOP853's step (:func:`dop853_source`), so that a run makes no Python call per evaluation
(:mod:`lagsim.run.engines.cstep`). The functions are called through :mod:`ctypes` with preallocated
buffers; the ODE right-hand side, called thousands of times a run, through a small model-independent
CPython extension instead (:func:`native_rhs`: one vectorcall, 0.3 µs at n = 2 against 1.7 µs
through ctypes), compiled once per Python and cached the same way, when Python's headers are
installed. Every call returns a fresh array (the integrator keeps references to what a right-hand
side returns). One bound model is not to be called from two threads at once (its buffers are
shared).

No compiler (or ``LAGSIM_NO_CC`` set) makes :func:`compile_c` return ``None`` quietly, and
:mod:`lagsim.numeric.compile` uses symengine's LLVM instead; any other reason to do so (too many
coordinates, the compiler failing, a library that does not load) says so once on stderr, with
the reason under ``--debug``.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import hashlib
import importlib.machinery
import importlib.util
import math
import os
import platform
import re
import shutil
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

import numpy as np
import symengine as se

from lagsim import __version__
from lagsim.numeric import cache, csource, stages
from lagsim.records import record
from lagsim.spec.expressions import exact_text
from lagsim.spec.limits import MAX_COORDINATES
from lagsim.symbolic.expansion import killable

CACHE_FORMAT = "2"
MAX_N = MAX_COORDINATES
"""Above this many coordinates the C solver's stack arrays grow too large; LLVM is used."""
FLAGS = ("-shared", "-fPIC", "-fno-math-errno", "-w")
"""No fast-math: the arithmetic is IEEE, as in the LLVM path."""
OPTIMIZE = "-O1"
"""Every model library is compiled with -O1 (issue 17 §1). -O2 costs more to compile and ran no
faster here (chain n = 32: 31 µs per right-hand side at -O2, 24 µs at -O1, 79 µs at -O0)."""
CHUNK = 200
"""A function of more statements than this is split (:func:`c_function`): gcc's register
allocation over one long block grows faster than linearly (chain n = 32, whole ``dynamics``
in one block: 5.0 s of CPU at -O1 against 0.35 s at -O0); in pieces of about this many
statements, with the common subexpressions in an array, it takes 2.2 s, and the right-hand side
runs 2.5 times as fast as at -O0."""
FACTOR_AT = 12
"""A model of this many coordinates or more has the common factors of its sums taken out before
the common subexpressions (:mod:`lagsim.numeric.factoring`): the 32-chain's forcing term from
7,164 multiplications to 713, and symengine's cse of the result takes an eighth of the time. It
changes the results at rounding level, so smaller models, every bundled system among them (at
most 8 coordinates), keep the code they had."""


def flags() -> tuple[str, ...]:
    """The compiler options of generated code (part of each library's key, so known before its
    source is made)."""
    return (OPTIMIZE, *FLAGS)


RUNTIME = csource.read("runtime.c")
"""lagsim's small dense linear algebra (``lagsim/numeric/c/runtime.c``), one text in every library
that needs it: the model libraries and the C step loops."""


def dop853_coefficients() -> types.ModuleType:
    """scipy's module ``scipy.integrate._ivp.dop853_coefficients`` (it imports only NumPy),
    executed from its file without importing the package ``scipy.integrate`` (half a second of
    a cold build; the module's file is located by :func:`importlib.util.find_spec` of scipy,
    the same file the package import would run)."""
    if "scipy.integrate._ivp.dop853_coefficients" in sys.modules:
        return sys.modules["scipy.integrate._ivp.dop853_coefficients"]
    scipy = importlib.util.find_spec("scipy")
    if scipy is None or scipy.origin is None:
        raise ImportError("scipy is not installed")
    path = Path(scipy.origin).parent / "integrate" / "_ivp" / "dop853_coefficients.py"
    spec = importlib.util.spec_from_file_location("lagsim_dop853_coefficients", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dop853_source(n: int) -> str:
    """One accepted DOP853 step in C, the algorithm of scipy's ``RungeKutta._step_impl`` with
    DOP853's error norm, stage for stage (the coefficients are scipy's, printed exactly), so
    that the steps and evaluations are those of ``scipy.integrate.DOP853``."""
    d = dop853_coefficients()
    stages = d.N_STAGES

    def array(name: str, values) -> str:
        return f"static const double {name}[] = {{{', '.join(repr(float(v)) for v in values)}}};"

    return "\n".join([
        array("DOP_A", [d.A[i, j] for i in range(stages) for j in range(stages)]),
        array("DOP_B", d.B), array("DOP_C", d.C[:stages]), array("DOP_E3", d.E3),
        array("DOP_E5", d.E5),
        csource.fill(csource.read("dop853_step.c"), STATES=2 * n, STAGES=stages)])


def cache_dir() -> Path:
    """The cache folder asked for: ``$LAGSIM_CACHE``, else ``$XDG_CACHE_HOME/lagsim``, else
    ``~/.cache/lagsim`` (:func:`lagsim.numeric.cache.open_folder` decides the folder really
    used)."""
    return cache.base_dir()


def compiler() -> str | None:
    """The C compiler to use (``$CC``, else cc or gcc on the PATH); None when there is none or
    ``LAGSIM_NO_CC`` is set."""
    if os.environ.get("LAGSIM_NO_CC"):
        return None
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    return shutil.which(cc) if cc else None


Functions = Sequence[tuple[str, Sequence[se.Symbol], Sequence[se.Basic]]]


def c_function(name: str, args: Sequence[se.Symbol], exprs: Sequence[se.Basic],
               parameters: Sequence[se.Symbol] = (), split: bool = False) -> str:
    """``static void name(const double *in, const double *p, double *out)``: out[i] =
    exprs[i] at in = args and p = parameters, every floating-point number written exactly
    (:func:`c_double`). ``split``: a long function's pieces (:func:`_chunked`) are marked for
    translation units of their own (:func:`split_units`)."""
    dummies = [se.Symbol(f"a_{i}") for i in range(len(args))]
    pdummies = [se.Symbol(f"p_{j}") for j in range(len(parameters))]
    rename = dict(zip(args, dummies)) | dict(zip(parameters, pdummies))
    exprs = [se.sympify(e).xreplace(rename) for e in exprs]
    lines = [f"static void {name}(const double *in, const double *p, double *out)", "{"]
    used: set[se.Basic] = set()
    for e in exprs:
        used |= e.free_symbols
    unknown = used - set(dummies) - set(pdummies)
    if unknown:
        raise ValueError(f"free symbols left: {sorted(map(str, unknown))}")
    loads = [f"    const double a_{i} = in[{i}];" for i, d in enumerate(dummies) if d in used]
    loads += [f"    const double p_{j} = p[{j}];" for j, d in enumerate(pdummies) if d in used]
    body: list[str] = []
    replacements: list = []
    if exprs:
        stages.stage(f"generating C: common subexpressions of {name} ({len(exprs):,} values)")
        with killable():
            replacements, reduced = se.cse(exprs)
        k = len(replacements)
        pieces, literals = _exact_floats([v for _, v in replacements] + list(reduced))
        body = [f"    const double {se.ccode(s)} = {literals(se.ccode(v))};"
                for (s, _), v in zip(replacements, pieces[:k])]
        body += [f"    out[{i}] = {literals(se.ccode(e))};" for i, e in enumerate(pieces[k:])]
    if len(body) <= CHUNK:
        return "\n".join([*lines, *loads, *body, "}"])
    return _chunked(name, loads, body, len(replacements), split)


_FLOAT = "lagsim_float_"
_FLOAT_NAME = rf"\b{_FLOAT}(\d+)\b"


def c_double(value: float) -> str:
    """A C literal of exactly the double ``value``: Python's shortest round-trip text (17
    significant digits at most), which a C compiler reads back to the same double (C11
    §6.4.4.2 with IEEE arithmetic, Annex F.5), where ``symengine.ccode`` prints 15 digits and
    so another number (issue 32, "Smaller")."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    text = repr(float(value))
    return f"({text})" if text.startswith("-") else text


def _exact_floats(exprs: Sequence[se.Basic]) -> tuple[list[se.Basic], Callable[[str], str]]:
    """``exprs`` with each floating-point number replaced by a symbol, and the function that
    writes those symbols in printed C as exact literals (:func:`c_double`). Called on the
    output of ``cse``, whose pieces are small: searching the expressions before it would walk
    their shared subexpressions once per expression (2.6 s for the 48-chain)."""
    found: set[se.Basic] = set()
    for e in exprs:
        found |= e.atoms(se.RealDouble)
    if not found:
        return list(exprs), lambda text: text
    ordered = sorted(found, key=lambda f: float(f))
    names = {f: se.Symbol(f"{_FLOAT}{k}") for k, f in enumerate(ordered)}
    texts = [c_double(float(f)) for f in ordered]

    def write(text: str) -> str:
        return re.sub(_FLOAT_NAME, lambda m: texts[int(m.group(1))], text)

    return [e.xreplace(names) for e in exprs], write


PIECE = "/* lagsim piece */"
PIECE_END = "/* lagsim piece end */"
HIDDEN = '__attribute__((noinline, visibility("hidden")))'
"""A piece of a split function (:func:`_chunked`): never inlined, and not exported from the
library although it may be defined in another translation unit (:func:`split_units`)."""
_PIECES = "(?s)" + re.escape(PIECE) + r"\n.*?" + re.escape(PIECE_END)
UNITS = 2
"""The translation units a model's pieces are compiled in, at once (:func:`_compile`): the
cores of the machine issue 31 measures on; more units on a machine of more cores gain little
(each unit also pays gcc's start)."""
SPLIT_AT = 60_000
"""Pieces of fewer characters than this are not dealt to :data:`UNITS` translation units: the
8-chain's 13 kB of pieces in two units beside the rest took 1.25 s of wall time against 1.0 s
in one unit on a loaded machine (gcc's starts and the link cost more than the work shared); they
go in one unit beside the rest only when a core is free (:func:`idle_core`), else stay with it.
The 32-chain's 190 kB are 97 % of gcc's CPU."""
_TEMPORARY = r"\bx(\d+)\b"
_DECLARED = r"^    const double T\[(\d+)\] = "
_LOADED = r"^    const double ([ap]_\d+) = "
"""The patterns of a model's C text (these three, :data:`_PIECES` and :data:`_FLOAT_NAME`),
compiled by :mod:`re` (which keeps what it compiled) at a build, not at every start-up (issue
31, "Start-up")."""


def _chunked(name: str, loads: list[str], body: list[str], temporaries: int,
             split: bool = False) -> str:
    """``name`` as a sequence of functions of at most :data:`CHUNK` statements each (never
    inlined; with ``split`` each is marked as a piece that :func:`_compile` puts in a
    translation unit of its own), the common subexpressions ``x<k>`` (symengine's cse names;
    the arguments are ``a_<i>`` and ``p_<j>``) kept in an array ``T`` that the pieces share,
    each piece loading only the arguments it uses."""
    body = [re.sub(_DECLARED, r"    T[\1] = ", re.sub(_TEMPORARY, r"T[\1]", line)) for line in body]
    names = []
    for load in loads:
        found = re.match(_LOADED, load)
        if found is None:
            raise ValueError(f"not a load of an argument: {load!r}")
        names.append((found.group(1), load))
    parts, calls, prototypes = [], [], []
    for k in range(0, len(body), CHUNK):
        piece = body[k:k + CHUNK]
        text = "\n".join(piece)
        used = [load for arg, load in names if re.search(rf"\b{arg}\b", text)]
        part = f"{name}_{k // CHUNK}"
        signature = f"void {part}(const double *in, const double *p, double *out, double *T)"
        if split:
            parts.append(f"{PIECE}\n{HIDDEN} {signature}\n{{\n" + "\n".join([*used, text])
                         + f"\n}}\n{PIECE_END}")
            prototypes.append(f"{HIDDEN} {signature};")
        else:
            parts.append(f"__attribute__((noinline)) static {signature}\n{{\n"
                         + "\n".join([*used, text]) + "\n}")
        calls.append(f"    {part}(in, p, out, T);")
    parts += prototypes
    parts.append(f"static void {name}(const double *in, const double *p, double *out)\n{{\n"
                 f"    double T[{max(temporaries, 1)}];\n" + "\n".join(calls) + "\n}")
    return "\n".join(parts)


def _source(n: int, m: int, functions: Functions, parameters: Sequence[se.Symbol],
            ode: bool = True) -> str:
    parts = [RUNTIME]
    if n >= FACTOR_AT:
        stages.stage("generating C: common factors of the sums")
        from lagsim.numeric import factoring  # for a build only (issue 31, start-up)

        functions = [(name, args, factoring.gather_factors(exprs))
                     for name, args, exprs in functions]
    parts += [c_function(name, args, exprs, parameters, split=True)
              for name, args, exprs in functions]
    for name, _, exprs in functions:
        parts.append(f"void lagsim_{name}(const double *in, const double *p, double *out) "
                     f"{{ {name}(in, p, out); }} /* {len(exprs)} values */")
    if ode:
        parts.append(csource.fill(csource.read("ode_rhs.c"), N=n, STATES=2 * n, IN=1 + 2 * n,
                                  MASS=n * n, DYNAMICS=n * n + n))
        parts.append(dop853_source(n))
    return "\n".join(parts)


def _key_source(key: str) -> str:
    return f'const char *lagsim_cache_key(void) {{ return "{key}"; }}'


_IDENTITY: dict[str, tuple[str, ...]] = {}


def _scipy_version() -> str:
    """scipy's version as its file ``scipy/version.py`` states it (version and git revision),
    read without importing scipy (a tenth of a warm run's start-up); scipy's ``__version__``
    where that file is not found."""
    spec = importlib.util.find_spec("scipy")
    if spec is not None and spec.origin is not None:
        try:
            text = (Path(spec.origin).parent / "version.py").read_bytes()
            return "version.py " + hashlib.sha256(text).hexdigest()
        except OSError:
            pass
    import scipy

    return str(scipy.__version__)


def compiler_stamp(cc: str) -> str:
    """The compiler as a file, read without starting it: its real path, size and modification
    time (installing another version rewrites it). ``cc --version`` in a child process cost a
    warm run a few milliseconds of its start-up (issue 31)."""
    path = os.path.realpath(cc)
    try:
        stat = os.stat(path)
    except OSError:
        return f"{path} ?"
    return f"{path} {stat.st_size} {stat.st_mtime_ns}"


def _identity(cc: str) -> tuple[str, ...]:
    """What besides its source determines a library: this generator (its own source and that of
    :mod:`lagsim.numeric.factoring`), the versions of lagsim, symengine (cse) and scipy
    (DOP853's coefficients), the compiler (:func:`compiler_stamp`), the flags, the Python ABI
    (the suffix of its extension modules) and the platform."""
    if cc not in _IDENTITY:
        _IDENTITY[cc] = (
            "lagsim-c", CACHE_FORMAT, __version__,
            hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
            hashlib.sha256(Path(__file__).with_name("factoring.py").read_bytes()).hexdigest(),
            csource.digest(),
            se.__version__, _scipy_version(), compiler_stamp(cc), *FLAGS,
            OPTIMIZE, str(CHUNK), importlib.machinery.EXTENSION_SUFFIXES[0], sys.platform,
            platform.machine())
    return _IDENTITY[cc]


_LAST_STRUCTURE: list[tuple[tuple[int, int, Any, tuple], str]] = []


def structure(n: int, m: int, functions: Functions, parameters: Sequence[se.Symbol]) -> str:
    """The text that determines a model's code: its sizes, the names of the arguments and
    parameters, and every expression with the parameters as symbols (never their values).
    The last one is remembered for the same ``functions`` object: printing a large model's
    expressions costs as much as loading its library (the process memo and the cache key both
    ask for it)."""
    ask = (n, m, functions, tuple(parameters))
    for (n0, m0, f0, p0), text in _LAST_STRUCTURE:
        if f0 is functions and (n0, m0, p0) == (n, m, ask[3]):
            return text
    lines = [f"n={n} m={m}", "parameters " + " ".join(map(str, parameters))]
    for name, args, exprs in functions:
        lines.append(f"{name}({' '.join(map(str, args))})")
        lines += [exact_text(e) for e in exprs]
    text = "\n".join(lines)
    _LAST_STRUCTURE[:] = [(ask, text)]
    return text


def model_key(cc: str, n: int, m: int, functions: Functions,
              parameters: Sequence[se.Symbol] = (), ode: bool | None = None) -> str:
    """The cache key of a model's library (see the module docstring); ``ode`` as in
    :func:`compile_c`."""
    ode = m == 0 if ode is None else ode
    text = "\0".join((*_identity(cc), structure(n, m, functions, parameters), f"ode={ode}"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def split_units(source: str, units: int, idle: bool = False) -> list[str]:
    """``source`` as translation units: the text without its pieces (:func:`_chunked`, between
    :data:`PIECE` and :data:`PIECE_END`), then at most ``units`` texts of the pieces, each with
    ``<math.h>``, dealt by size to the lightest unit so far (gcc's time grows with a piece's
    statements). The pieces use only their arguments and ``<math.h>``; their prototypes stay in
    the first unit. A source of less than :data:`SPLIT_AT` characters of pieces is one unit,
    or, with ``idle`` (a core is free, :func:`idle_core`), two: the rest and the pieces (the
    8-chain's pieces are 1,052 M of gcc's instructions, the rest 811 M and the link 58 M,
    against 1,815 M for one unit, bench/build_results.md)."""
    found = re.findall(_PIECES, source)
    if units < 2 or not found:
        return [source]
    rest = re.sub(_PIECES, "", source)
    if sum(map(len, found)) < SPLIT_AT:
        return [rest, "#include <math.h>\n" + "\n".join(found)] if idle else [source]
    groups: list[list[str]] = [[] for _ in range(min(units, len(found)))]
    sizes = [0] * len(groups)
    for piece in sorted(found, key=len, reverse=True):
        k = sizes.index(min(sizes))
        groups[k].append(piece)
        sizes[k] += len(piece)
    return [rest, *("#include <math.h>\n" + "\n".join(group) for group in groups)]


def idle_core() -> bool:
    """Whether a core is free besides the one this process works on: the 1-minute load average
    (``os.getloadavg``) below the cores this process may use less one half. Compiling in two
    units costs a link and a second compiler's start (6 % more CPU for the 8-chain), which a
    machine without a free core pays in time too (issue 31: 0.95 of one unit's speed at load 7
    on 2 cores)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    return load < cores - 0.5


def _compile(cc: str, source: str, options: tuple[str, ...], work: Path) -> Path:
    """Compile ``source`` with ``options`` in the folder ``work``; the library's path. A source
    with pieces (:func:`_chunked`) is compiled as :data:`UNITS` + 1 translation units
    (:func:`split_units`; two below :data:`SPLIT_AT` when a core is free, else one) by as many
    compilers at once, then linked: a large model's pieces are
    most of gcc's time (the 32-chain: 3.3 of 3.4 s of CPU) and the cores are used together;
    the code of each function is the same as in one unit (the pieces were never inlined, and
    without fast-math gcc keeps every operation), so are the numbers. Raises
    :class:`lagsim.numeric.cache.BuildFailed` with the compiler's output."""
    built = work / "model.so"
    texts = split_units(source, UNITS, idle_core())
    if len(texts) == 1:
        src = work / "model.c"
        src.write_text(source, encoding="utf-8")
        _run_compilers([[cc, *options, "-o", str(built), str(src), "-lm"]], cc)
    else:
        objects = []
        commands = []
        for k, text in enumerate(texts):
            src = work / f"model{k}.c"
            src.write_text(text, encoding="utf-8")
            objects.append(str(work / f"model{k}.o"))
            commands.append([cc, *options, "-c", "-o", objects[-1], str(src)])
        _run_compilers(commands, cc)
        _run_compilers([[cc, *options, "-o", str(built), *objects, "-lm"]], cc)
    if not built.exists():
        raise cache.BuildFailed(f"{cc} wrote no library")
    return built


def _run_compilers(commands: list[list[str]], cc: str) -> None:
    """The compiler ``commands`` run at once; :class:`lagsim.numeric.cache.BuildFailed` with
    the output of the first that failed."""
    import subprocess  # for a build only (issue 31, start-up)

    children = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                for command in commands]
    started = getattr(_STARTED, "call", None)
    if started is not None:
        started()
    failed = None
    for child in children:
        output, _ = child.communicate()
        if child.returncode != 0 and failed is None:
            failed = (child.returncode, output.decode("utf-8", "replace"))
    if failed is not None:
        raise cache.BuildFailed(f"{cc} exited with {failed[0]}: {failed[1][-2000:]}")


_STARTED = threading.local()
"""``call``: what this thread calls when its compilers have started (:func:`telling_started`)."""


@contextlib.contextmanager
def telling_started(call: Callable[[], None]) -> Iterator[None]:
    """Within the block, ``call()`` as soon as compilers run in this thread (each time they
    are started): :func:`lagsim.numeric.compile.compile_ahead` waits for it, so that its
    build's Python work is done before the caller's goes on."""
    _STARTED.call = call
    try:
        yield
    finally:
        _STARTED.call = None


def build_and_load(cc: str, tag: str, source: str | Callable[[], str], options: Sequence[str],
                   key_text: str | None = None) -> tuple[ctypes.CDLL, str]:
    """A shared library of lagsim's own C code, from the compile cache or built: (the loaded
    library, its key).

    The key covers this module's identity for ``cc`` (:func:`_identity`: the compiler's path and
    version, lagsim's, symengine's and scipy's versions, the Python ABI, the platform), ``tag``,
    the compiler ``options`` and ``key_text``, what determines the source (default: ``source``
    itself). ``source`` may be a callable that makes the text, called only when the library is
    not in the cache. The library is kept by :func:`lagsim.numeric.cache.obtain` (which trusts only
    entries of this user whose sha256 matches) and reports its key through
    ``lagsim_cache_key`` (appended here), checked after loading (:func:`_open_checked`).
    Raises :class:`lagsim.numeric.cache.BuildFailed` when the compiler fails, and what loading
    raises."""
    if key_text is None:
        if callable(source):
            raise ValueError("a source given as a callable needs key_text")
        key_text = source
    options = tuple(options)
    key = build_key(cc, tag, options, key_text)
    return _obtain(cc, key, source, options, f"lagsim's {tag} code")[0], key


def build_key(cc: str, tag: str, options: Sequence[str], key_text: str) -> str:
    """The cache key :func:`build_and_load` gives its library."""
    return hashlib.sha256("\0".join((*_identity(cc), tag, *options, key_text)).encode()
                          ).hexdigest()[:32]


def _obtain(cc: str, key: str, source: str | Callable[[], str], options: tuple[str, ...],
            name: str = "the model", keep: int | None = None) -> tuple[ctypes.CDLL, Path]:
    """The library ``key`` from the cache or built from ``source`` with its key appended (see
    :func:`build_and_load`): (the library, where it is). A build shows its stages on a
    terminal (:mod:`lagsim.numeric.stages`: ``source`` may show its own), building ``name``."""

    def build(work: Path) -> Path:
        with stages.building(name):
            text = source() if callable(source) else source
            stages.stage(f"compiling C ({len(text) // 1000:,} kB)")
            return _compile(cc, text + "\n" + _key_source(key) + "\n", options, work)

    return cache.obtain(key, build, lambda name: _open_checked(name, key), keep=keep)


def _open_checked(name: str, key: str) -> ctypes.CDLL:
    """The library ``name`` loaded; :class:`lagsim.numeric.cache.Foreign` unless it reports
    ``key``."""
    lib = ctypes.CDLL(name)
    try:
        reported = lib.lagsim_cache_key
    except AttributeError:
        raise cache.Foreign("the library does not report a key") from None
    reported.restype = ctypes.c_char_p
    reported.argtypes = ()
    got = reported()
    if got != key.encode():
        raise cache.Foreign(f"the library reports key {got!r}, not {key}")
    return lib


def fallback(why: str, reason: str | None = None) -> None:
    """Say once on stderr that the slower LLVM path is used, and why."""
    cache.say_once("fallback", f"warning: {why}; using symengine's LLVM path instead (slower)",
                   reason)


class CFunction:
    """``f(x) -> fresh 1-d array`` of one compiled expression list at the parameter values
    ``params`` (the shape of symengine's ``Lambdify``). A call reads and writes only memory of
    its own: ctypes lets go of the GIL during the C call, so buffers kept on the object would
    be shared by threads calling it at once (a sweep's threads: wrong energies, caught by
    tests/test_sweep_cluster.py)."""

    __slots__ = ("_func", "_in", "_out", "_params", "_pp", "_address")

    def __init__(self, func: Any, n_in: int, n_out: int, params: np.ndarray) -> None:
        func.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        func.restype = None
        self._func = func
        self._in = np.zeros(n_in)
        self._out = np.zeros(n_out)
        self._params = params
        self._pp = params.ctypes.data
        self._address = int(ctypes.cast(func, ctypes.c_void_p).value or 0)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        given = np.array(x, dtype=float).reshape(self._in.shape)
        out = np.empty_like(self._out)
        self._func(given.ctypes.data, self._pp, out.ctypes.data)
        return out

    def rows(self, x: np.ndarray) -> np.ndarray:
        """``f`` of each row of ``x`` (rows × inputs): a fresh (rows × outputs) array, in one
        C call (:func:`_rows_function`); each row the same bits as ``self(row)``."""
        x = np.ascontiguousarray(x, dtype=float)
        count = x.shape[0]
        out = np.empty((count, self._out.size))
        loop = _rows_function()
        if loop is None:
            for i in range(count):
                out[i] = self(x[i])
        elif count:
            loop(self.address, count, self._in.size, self._out.size, x.ctypes.data, self._pp,
                 out.ctypes.data)
        return out

    @property
    def address(self) -> int:
        """The C function's address (the C step loops call it directly)."""
        return self._address

    @property
    def params(self) -> np.ndarray:
        """The parameter values it is bound to (the array its calls pass)."""
        return self._params


class COdeRhs:
    """``rhs(t, y) -> fresh y' = [q̇, q̈]`` of an unconstrained system, one C call, in memory
    of its own (as :class:`CFunction`'s)."""

    __slots__ = ("_func", "_y", "_out", "_params", "_pp")

    def __init__(self, func: Any, n: int, params: np.ndarray) -> None:
        func.argtypes = (ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        func.restype = ctypes.c_int
        self._func = func
        self._y = np.zeros(2 * n)
        self._out = np.zeros(2 * n)
        self._params = params
        self._pp = params.ctypes.data

    def __call__(self, t: float, y: np.ndarray) -> np.ndarray:
        given = np.array(y, dtype=float).reshape(self._y.shape)
        out = np.empty_like(self._out)
        if self._func(t, given.ctypes.data, out.ctypes.data, self._pp):
            raise np.linalg.LinAlgError("Singular matrix")
        return out


class CDop853Step:
    """One accepted DOP853 step of the compiled right-hand side, in C (see
    :class:`lagsim.run.engines.cstep.CDOP853`): ``step(t, y, f, t_bound, direction, rtol, atol,
    max_step, K, h_abs)`` → (code, y_new, f_new, t_new, h, h_abs, nfev) with code 0 accepted,
    :attr:`~lagsim.numeric.csource.Status.RUN_SMALL` step too small,
    :attr:`~lagsim.numeric.csource.Status.RUN_SINGULAR` singular mass matrix; ``K`` (13 rows)
    receives the stages."""

    __slots__ = ("_func", "n", "_params", "_pp")

    def __init__(self, func: Any, n: int, params: np.ndarray) -> None:
        func.argtypes = (ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_double,
                         ctypes.c_double, ctypes.c_double, ctypes.c_void_p, ctypes.c_double,
                         ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.POINTER(csource.StepResult), ctypes.c_void_p)
        func.restype = ctypes.c_int
        self._func = func
        self.n = 2 * n
        self._params = params
        self._pp = params.ctypes.data

    def __call__(self, t: float, y: np.ndarray, f: np.ndarray, t_bound: float,
                 direction: float, rtol: float, atol: np.ndarray, max_step: float,
                 K: np.ndarray, h_abs: float) -> tuple:
        y_new = np.empty(self.n)
        f_new = np.empty(self.n)
        result = csource.StepResult()
        result.begin(h_abs)
        code = self._func(t, y.ctypes.data, f.ctypes.data, t_bound, direction, rtol,
                          atol.ctypes.data, max_step, K.ctypes.data, y_new.ctypes.data,
                          f_new.ctypes.data, ctypes.pointer(result), self._pp)
        return code, y_new, f_new, result.t_new, result.h, result.h_abs, result.nfev


@record
class CompiledC:
    """The compiled functions by name (``f(x) -> array``) and, without constraints, the ODE
    right-hand side and DOP853's step, all at the parameter values ``params``; ``library`` is
    the shared object they come from. :meth:`bind` gives them at other values."""

    functions: dict[str, CFunction]
    ode_rhs: COdeRhs | None
    library: Path
    dop853_step: CDop853Step | None = None
    params: np.ndarray = field(default_factory=lambda: np.zeros(0))
    _lib: Any = field(default=None, repr=False)
    _sizes: tuple[tuple[str, int, int], ...] = ()
    _n: int = 0

    def bind(self, values: Sequence[float] | np.ndarray) -> CompiledC:
        """The same library's functions at the parameter values ``values`` (in the order the
        parameters were given to :func:`compile_c`); nothing is compiled."""
        params = np.array(values, dtype=float).reshape(-1)
        if params.size != self.params.size:
            raise ValueError(f"expected {self.params.size} parameter values, got {params.size}")
        lib = self._lib
        functions = {name: CFunction(getattr(lib, f"lagsim_{name}"), n_in, n_out, params)
                     for name, n_in, n_out in self._sizes}
        if self.ode_rhs is None:
            return CompiledC(functions, None, self.library, None, params, lib, self._sizes,
                             self._n)
        return CompiledC(functions, COdeRhs(lib.lagsim_ode_rhs, self._n, params), self.library,
                         CDop853Step(lib.lagsim_dop853_step, self._n, params), params, lib,
                         self._sizes, self._n)


def compile_c(n: int, m: int, functions: Functions | Callable[[], Functions],
              parameters: Sequence[se.Symbol] = (), values: Sequence[float] | None = None,
              ode: bool | None = None, key_text: str | None = None,
              sizes: Sequence[tuple[str, int, int]] | None = None,
              keep: int | None = None) -> CompiledC | None:
    """Compile ``functions`` (name, argument symbols, expressions in those and the symbols
    ``parameters``) to C, bound to the parameter ``values`` (default all 0); None when that
    cannot be done here. With ``ode`` (default: when ``m == 0``) the library also holds the ODE
    right-hand side and DOP853's step, and ``functions`` must hold ``dynamics`` (M, F, A, b
    flat, arguments t, q, q̇).

    With ``key_text`` (what determines the functions, e.g.
    :func:`lagsim.symbolic.model.spec_structure`)
    the cache key comes from it instead of the printed expressions, ``functions`` may be a
    callable that makes them, called only when the library is not in the cache, and ``sizes``
    gives each function's (name, inputs, outputs) (issue 17 §2: a warm run does no symbolic
    work). A build prunes the compile cache to ``keep`` entries (default
    :data:`lagsim.numeric.cache.KEEP`)."""
    ode = m == 0 if ode is None else ode
    if callable(functions) and (key_text is None or sizes is None):
        raise ValueError("functions given as a callable need key_text and sizes")
    cc = compiler()
    if cc is None:
        return None
    if n > MAX_N:
        fallback(f"{n} coordinates are more than the C path's {MAX_N}")
        return None
    parameters = tuple(parameters)
    try:
        if key_text is None:
            assert not callable(functions)
            key = model_key(cc, n, m, functions, parameters, ode)
        else:
            key = hashlib.sha256("\0".join((*_identity(cc), "spec", key_text, f"n={n} m={m}",
                                             *map(str, parameters), f"ode={ode}")
                                            ).encode()).hexdigest()[:32]

        def source() -> str:
            if callable(functions):
                stages.stage(f"deriving M and F ({n} coordinate{'s' * (n != 1)})")
            made = functions() if callable(functions) else functions
            stages.stage("generating C")
            return _source(n, m, made, parameters, ode)

        lib, path = _obtain(cc, key, source, flags(), keep=keep)
    except cache.BuildFailed as exc:
        fallback("the C compiler failed on the generated code", str(exc))
        return None
    except Exception as exc:  # any failure here means: use the LLVM path, and say so
        fallback(f"the model could not be compiled to C ({type(exc).__name__})",
                 f"{type(exc).__name__}: {exc}")
        return None
    if sizes is None:
        assert not callable(functions)
        sizes = tuple((name, len(args), len(exprs)) for name, args, exprs in functions)
    sizes = tuple(sizes)
    unbound = CompiledC({}, COdeRhs(lib.lagsim_ode_rhs, n, np.zeros(0)) if ode else None,
                        path, None, np.zeros(len(parameters)), lib, sizes, n)
    return unbound.bind(np.zeros(len(parameters)) if values is None else values)


_ROWS: dict[str, Any] = {}
ROWS_OPTIONS = ("-O2", *FLAGS)
_ROWS_LOCK = threading.Lock()
"""Held while the row loop is looked for or built (:func:`runtime_ahead`'s thread and a
caller's first use)."""


def _rows_function() -> Any:
    """``lagsim_rows`` of ``c/rows.c`` (a model function applied to many rows in one call),
    compiled once per machine and cached like the models, and looked up once per process (the
    loop is the same whichever compiler built it); None without a compiler, or when it cannot be
    built (said once; the rows are then computed one call each, the same values)."""
    if _ROWS:
        return next(iter(_ROWS.values()))
    cc = compiler()
    if cc is None:
        return None
    with _ROWS_LOCK:
        return _rows_loop(cc)


def _rows_loop(cc: str) -> Any:
    if cc not in _ROWS:
        try:
            lib, _ = build_and_load(cc, "rows", csource.read("rows.c"), ROWS_OPTIONS)
            loop = lib.lagsim_rows
            loop.argtypes = (ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_long,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
            loop.restype = None
        except Exception as exc:  # the per-row calls still work, and are slower: say so
            cache.say_once("rows", "warning: the loop over samples in C could not be built; "
                           "calling the compiled model once per sample instead (slower)",
                           f"{type(exc).__name__}: {exc}")
            loop = None
        _ROWS[cc] = loop
    return _ROWS[cc]


_NATIVE: dict[str, Any] = {}
_NATIVE_LOCK = threading.Lock()
"""Held while the extension is looked for or built (as :data:`_ROWS_LOCK`)."""


def _native_module(cc: str) -> Any:
    """The model-independent CPython extension that calls a compiled right-hand side without
    ctypes (one vectorcall: t, y's buffer, a fresh ``numpy.empty``); compiled once per Python
    and cached like the models; None when it cannot be built (no Python headers) or the cache
    cannot be used (it is not compiled again in every run)."""
    if cc in _NATIVE:
        return _NATIVE[cc]
    with _NATIVE_LOCK:
        return _native_loaded(cc)


def _native_loaded(cc: str) -> Any:
    if cc in _NATIVE:
        return _NATIVE[cc]
    import importlib.machinery
    import importlib.util
    import sysconfig  # for the direct call only (issue 31, start-up)

    include = sysconfig.get_paths()["include"]
    module = None
    if (Path(include) / "Python.h").exists():
        source = csource.read("native.c")
        key = _native_key(cc)

        def build(work: Path) -> Path:
            return _compile(cc, source + _key_source(key) + "\n",
                            ("-O2", *FLAGS, f"-I{include}"), work)

        def load(name: str) -> Any:
            _open_checked(name, key)
            loader = importlib.machinery.ExtensionFileLoader("_lagsim_native", name)
            spec = importlib.util.spec_from_file_location("_lagsim_native", name,
                                                          loader=loader)
            if spec is None:
                raise ImportError(f"cannot import {name}")
            loaded = importlib.util.module_from_spec(spec)
            loader.exec_module(loaded)
            return loaded

        try:
            module, _ = cache.obtain(key, build, load, private=False)
        except cache.Unusable:
            return None  # not built in every run; the message on the cache says why
        except Exception as exc:  # the ctypes call still works, and is slower: say so
            cache.say_once("native", "warning: the direct call into compiled models could not "
                           "be built; calling them through ctypes instead (slower)",
                           f"{type(exc).__name__}: {exc}")
    _NATIVE[cc] = module
    return module


def _native_key(cc: str) -> str:
    """The cache key of :func:`_native_module`'s extension."""
    import sysconfig

    include = sysconfig.get_paths()["include"]
    return hashlib.sha256("\0".join((*_identity(cc), "native", sys.version, include,
                                     csource.read("native.c"))).encode()).hexdigest()[:32]


def native_rhs(compiled: CompiledC) -> Callable[[float, np.ndarray], np.ndarray] | None:
    """The ODE right-hand side of ``compiled`` called through :func:`_native_module`, or None."""
    cc = compiler()
    rhs = compiled.ode_rhs
    if rhs is None or cc is None:
        return None
    module = _native_module(cc)
    if module is None:
        return None
    address = ctypes.cast(rhs._func, ctypes.c_void_p).value
    return module.make(address, rhs._y.size, np.empty,
                       lambda y: np.ascontiguousarray(y, dtype=float), np.linalg.LinAlgError,
                       rhs._pp, rhs._params)


def runtime_ahead() -> None:
    """Start building the model-independent libraries every C run uses, the direct call into
    the right-hand side (:func:`native_rhs`) and the loop over samples (:func:`_rows_function`),
    in background threads (in copies of the caller's context), where the compile cache has no
    file of them (:func:`lagsim.numeric.cache.holds`): on a machine's first run gcc builds them
    while the model is compiled and the run prepared (issue 31, "Build"). One in the cache is
    loaded at its first use, as before (loading it in a thread beside the run's imports cost
    CPU). A first use meanwhile waits for its thread (each is built under a lock, once)."""
    cc = compiler()
    if cc is None:
        return
    rows = build_key(cc, "rows", ROWS_OPTIONS, csource.read("rows.c"))
    makers = ([] if _ROWS or cache.holds(rows) else [_rows_function]) + (
        [] if cc in _NATIVE or cache.holds(_native_key(cc)) else [lambda: _native_module(cc)])
    for make in makers:
        threading.Thread(target=contextvars.copy_context().run, args=(make,),
                         name="lagsim-runtime", daemon=True).start()
