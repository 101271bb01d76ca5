"""Compiled numeric functions of a :class:`~lagsim.symbolic.model.Model`.

The parameters are inputs of the compiled code (issue 8 §1): every function takes their values
as an array, so models that differ only in parameter values share one compiled code, which is
compiled once per process (:data:`MEMO`, keyed by the model's structure, never its values) and,
for C, once per machine (the compile cache of :mod:`lagsim.numeric.ccompile`);
:meth:`NumericSystem.with_parameters` gives the same model at other values without compiling.
With a C compiler on the machine every function is C from :mod:`lagsim.numeric.ccompile` (one shared
library per model structure), and a system without constraints also gets its whole ODE
right-hand side in C (:meth:`NumericSystem.ode_rhs`); otherwise each function is one symengine
``Lambdify`` call (LLVM when symengine has it) of the state and the parameters. Both eliminate
common subexpressions. Every call returns fresh arrays (the integrator keeps references to what
a right-hand side returns).
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any

import numpy as np
import symengine as se

from lagsim.numeric import stages
from lagsim.numeric.ccompile import (
    Functions,
    compile_c,
    compiler,
    idle_core,
    native_rhs,
    runtime_ahead,
    structure,
    telling_started,
)
from lagsim.records import record
from lagsim.symbolic.model import Model

BACKEND = "llvm" if getattr(se, "have_llvm", False) and not os.environ.get(
    "LAGSIM_NO_LLVM") else "lambda"


def lambdify(args: Sequence[se.Symbol], exprs: Sequence[se.Basic]) -> Callable[[np.ndarray],
                                                                                 np.ndarray]:
    """One compiled function from a flat argument vector to a flat vector of ``exprs``.

    The arguments are renamed first: symengine's cse names its temporaries x0, x1, …
    and would otherwise confuse them with a user's coordinates of the same names.
    """
    if not exprs:
        return lambda _x: np.zeros(0)
    dummies = [se.Symbol(f"_lagsim_arg{i}") for i in range(len(args))]
    rename = dict(zip(args, dummies))
    exprs = [se.sympify(e).xreplace(rename) for e in exprs]
    kwargs = {"cse": True, "backend": BACKEND}
    if BACKEND == "llvm":
        kwargs["opt_level"] = 2 if len(exprs) < 2000 else 1
    return se.Lambdify(dummies, exprs, **kwargs)


def _flat(matrix: se.DenseMatrix) -> list[se.Basic]:
    return [matrix[i, j] for i in range(matrix.rows) for j in range(matrix.cols)]


@record
class NumericSystem:
    """Numeric M(q,t), F(q,q̇,t), A(q,t), b(q,q̇,t), φ, φ_q, h of one model.

    The argument order of every function is ``(t, q, qd)`` with ``q`` and ``qd`` 1-d arrays in
    coordinate order; constraint rows come in the file's order (``constraint_names``).
    """

    name: str
    coordinates: tuple[str, ...]
    constraint_names: tuple[str, ...]
    constraint_kinds: tuple[str, ...]
    parameters: dict[str, float]
    time_dependent: bool
    _dynamics: Callable
    _phi: Callable
    _velocity: Callable
    _energy: Callable
    _ode_rhs: Callable | None = None
    _native_rhs: Callable[[], Callable | None] | None = field(default=None, repr=False,
                                                             compare=False)
    """Makes the direct call of ``_ode_rhs`` (:func:`~lagsim.numeric.ccompile.native_rhs`), or
    None, when :meth:`ode_rhs` first asks: it loads a CPython extension, which a run the C loop
    takes does without (issue 31, "Start-up")."""
    backend: str = BACKEND
    _dop853_step: Callable | None = None
    _code: Any = field(default=None, repr=False, compare=False)
    inputs: tuple[str, ...] = ()
    """The parameters that are inputs u (``inputs:``, issue 28): :meth:`with_parameters` sets
    them."""

    @property
    def n(self) -> int:
        return len(self.coordinates)

    @property
    def m(self) -> int:
        return len(self.constraint_names)

    @property
    def holonomic(self) -> tuple[int, ...]:
        return tuple(i for i, k in enumerate(self.constraint_kinds) if k == "holonomic")

    @property
    def holonomic_names(self) -> tuple[str, ...]:
        return tuple(self.constraint_names[i] for i in self.holonomic)

    def _args(self, t: float, q: np.ndarray, qd: np.ndarray | None = None) -> np.ndarray:
        n = self.n
        x = np.empty(1 + n + (0 if qd is None else n))
        x[0] = t
        x[1:n + 1] = q
        if qd is not None:
            x[n + 1:] = qd
        return x

    def dynamics(self, t: float, q: np.ndarray, qd: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """M (n,n), F (n,), A (m,n), b (m,) with M q̈ = F + Aᵀλ and A q̈ = b."""
        n, m = self.n, self.m
        out = self._dynamics(self._args(t, q, qd))
        k = n * n
        M = out[:k].reshape(n, n)
        F = out[k:k + n]
        A = out[k + n:k + n + m * n].reshape(m, n)
        b = out[k + n + m * n:]
        return M, F, A, b

    def phi(self, t: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """φ (m_h,) and φ_q (m_h, n) of the holonomic constraints."""
        mh = len(self.holonomic)
        out = self._phi(self._args(t, q))
        return out[:mh], out[mh:].reshape(mh, self.n)

    def velocity_terms(self, t: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A (m,n) and c (m,): the velocity residual of every constraint is A q̇ + c."""
        m = self.m
        out = self._velocity(self._args(t, q))
        return out[:m * self.n].reshape(m, self.n), out[m * self.n:]

    def velocity_residual(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        A, c = self.velocity_terms(t, q)
        return A @ qd + c

    def energy(self, t: float, q: np.ndarray, qd: np.ndarray) -> float:
        """h = q̇·∂L/∂q̇ − L."""
        return float(self._energy(self._args(t, q, qd))[0])

    def _rows_args(self, t: np.ndarray, q: np.ndarray, qd: np.ndarray | None = None
                   ) -> np.ndarray:
        """The rows (t, q[, q̇]) of many samples, C-ordered for the compiled row loop; written
        column by column and transposed once (a few long copies, not one short copy a row)."""
        n = q.shape[1]
        columns = np.empty((1 + n + (0 if qd is None else qd.shape[1]), q.shape[0]))
        columns[0] = t
        columns[1:1 + n] = q.T
        if qd is not None:
            columns[1 + n:] = qd.T
        return columns.T.copy()

    def energies(self, t: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """h at each sample (t (N,), q and qd (N, n)) in one compiled call: (N,), each value
        that of :meth:`energy`."""
        return _rows(self._energy, self._rows_args(t, q, qd))[:, 0]

    def velocity_residuals(self, t: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """A q̇ + c at each sample (N, m) in one compiled call, each row that of
        :meth:`velocity_residual`."""
        m, n = self.m, self.n
        out = _rows(self._velocity, self._rows_args(t, q))
        A = out[:, :m * n].reshape(-1, m, n)
        return np.matmul(A, qd[:, :, None])[:, :, 0] + out[:, m * n:]

    def phis(self, t: np.ndarray, q: np.ndarray) -> np.ndarray:
        """φ of the holonomic constraints at each sample (N, m_h) in one compiled call."""
        return _rows(self._phi, self._rows_args(t, q))[:, :len(self.holonomic)]

    def accelerations(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """q̈ of the unconstrained system, M q̈ = F solved numerically."""
        M, F, _, _ = self.dynamics(t, q, qd)
        return np.linalg.solve(M, F)

    def with_parameters(self, values: Mapping[str, float]) -> NumericSystem:
        """This system with the parameters named in ``values`` set to those numbers (the others
        kept), using the same compiled code: nothing is compiled (issue 8 §1)."""
        unknown = sorted(set(values) - set(self.parameters))
        if unknown:
            raise KeyError(f"no parameter {', '.join(unknown)}; the parameters are "
                           f"{', '.join(self.parameters) or '(none)'}")
        if self._code is None:
            raise ValueError("this NumericSystem was not made by compile_model")
        parameters = {k: float(values.get(k, v)) for k, v in self.parameters.items()}
        return replace(self, parameters=parameters,
                       **self._code.bind(np.array(list(parameters.values()), dtype=float)))

    @property
    def code(self) -> Any:
        """The compiled code behind this system, one object for every system of its structure
        whatever the parameter values (None for a system not made by :func:`compile_model`):
        with :attr:`parameters`, what determines every value the system computes."""
        return self._code

    def compiled_energy(self) -> Callable:
        """The compiled function behind :meth:`energy` and :meth:`energies`, of the argument
        (t, q, q̇) (the C step loop calls it by address for each sample, issue 31)."""
        return self._energy

    def compiled(self) -> tuple[Callable, Callable, Callable]:
        """The compiled functions behind :meth:`dynamics`, :meth:`phi` and
        :meth:`velocity_terms`, of the argument (t, q, q̇) or (t, q) (the C step loops call them
        by address, :mod:`lagsim.run.engines.ccommon`)."""
        return self._dynamics, self._phi, self._velocity

    def dop853_step(self) -> Callable | None:
        """DOP853's step in C for this system's ODE (:class:`lagsim.run.engines.cstep.CDOP853`), or
        None."""
        return self._dop853_step

    def ode_rhs(self, *, once: bool = False) -> Callable[[float, np.ndarray], np.ndarray]:
        """``rhs(t, y)`` with y = [q, q̇] → fresh [q̇, q̈], M q̈ = F (seed 001 eq. 10.12–10.14);
        constraints are ignored. One C call when compiled to C; raises LinAlgError for a
        singular M. ``once``: for a single call, the C one through ctypes (the same values)
        without making the direct call, whose extension takes longer to load than thousands of
        calls through ctypes."""
        if self._native_rhs is not None and not once:
            native = self._native_rhs()
            if native is not None:
                return native
        if self._ode_rhs is not None:
            return self._ode_rhs
        n = self.n
        x = np.empty(1 + 2 * n)
        out = np.empty(2 * n)
        k = n * n
        func = self._dynamics
        solve = np.linalg.solve

        def rhs(t: float, y: np.ndarray) -> np.ndarray:
            x[0] = t
            x[1:] = y
            dyn = func(x)
            out[:n] = y[n:]
            out[n:] = solve(dyn[:k].reshape(n, n), dyn[k:k + n])
            return out.copy()

        return rhs


def _rows(func: Callable, x: np.ndarray) -> np.ndarray:
    """``func`` (a compiled function of one argument vector) of each row of ``x``, as a
    (rows, outputs) array: one call of its ``rows`` (C, symengine's batch evaluation)."""
    return func.rows(x) if hasattr(func, "rows") else np.array([func(row) for row in x])


class _Bound:
    """``f(x)`` of a ``Lambdify`` of (state, parameters) at fixed parameter values."""

    __slots__ = ("_func", "_x", "_k")

    def __init__(self, func: Callable, n_state: int, params: np.ndarray) -> None:
        self._func = func
        self._k = n_state
        self._x = np.empty(n_state + params.size)
        self._x[n_state:] = params

    def __call__(self, x: np.ndarray) -> np.ndarray:
        self._x[:self._k] = x
        return self._func(self._x)

    def rows(self, x: np.ndarray) -> np.ndarray:
        """``f`` of each row of ``x`` (rows, state) in one batch call of the ``Lambdify``:
        (rows, outputs)."""
        k = self._k
        full = np.empty((x.shape[0], self._x.size))
        full[:, :k] = x
        full[:, k:] = self._x[k:]
        return np.asarray(self._func(full), dtype=float).reshape(x.shape[0], -1)


@record
class _Code:
    """The compiled code of one model structure, before parameter values are given:
    ``bind(values)`` returns the :class:`NumericSystem` fields of the functions at them."""

    backend: str
    bind: Callable[[np.ndarray], dict[str, Any]]


MEMO_SIZE = 16
MEMO: OrderedDict[str, _Code] = OrderedDict()
"""Compiled code by structure key, the most recently used last (issue 8 §1): the default memo of
:func:`compile_model`; ``MEMO.clear()`` forgets what this process compiled."""


def _c_code(n: int, m: int, groups: Functions | Callable[[], Functions],
            params: list[se.Symbol], key_text: str | None = None,
            sizes: Sequence[tuple[str, int, int]] | None = None) -> _Code | None:
    compiled = compile_c(n, m, groups, params, key_text=key_text, sizes=sizes)
    if compiled is None:
        return None

    def bind(values: np.ndarray) -> dict[str, Any]:
        c = compiled.bind(values)
        f = c.functions
        return dict(_dynamics=f["dynamics"], _phi=f["phi"], _velocity=f["velocity"],
                    _energy=f["energy"], _ode_rhs=c.ode_rhs,
                    _native_rhs=functools.cache(lambda: native_rhs(c)),
                    _dop853_step=c.dop853_step)

    return _Code("c", bind)


def _llvm_code(groups: Functions, params: list[se.Symbol]) -> _Code:
    funcs = {name: (lambdify([*args, *params], exprs), len(args)) for name, args, exprs in groups}

    def bind(values: np.ndarray) -> dict[str, Any]:
        f = {name: _Bound(func, k, values) for name, (func, k) in funcs.items()}
        return dict(_dynamics=f["dynamics"], _phi=f["phi"], _velocity=f["velocity"],
                    _energy=f["energy"], _ode_rhs=None, _native_rhs=None,
                    _dop853_step=None)

    return _Code(BACKEND, bind)


def _groups(model: Model) -> Functions:
    """The compiled functions of a model: (name, arguments, expressions)."""
    t, q, qd = model.t, list(model.q), list(model.qd)
    state = [t, *q, *qd]
    pos = [t, *q]
    dyn = _flat(model.mass_matrix) + _flat(model.forcing) + _flat(model.A) + _flat(model.b)
    hol = model.holonomic
    phis = [c.expression for c in hol]
    phi_q = [r for c in hol for r in c.row]
    rows = [r for c in model.constraints for r in c.row]
    offsets = [c.offset for c in model.constraints]
    return (("dynamics", state, dyn), ("phi", pos, phis + phi_q),
            ("velocity", pos, rows + offsets), ("energy", state, [model.energy]))


def _sizes(model: Model) -> tuple[tuple[str, int, int], ...]:
    """(name, inputs, outputs) of each of :func:`_groups`, known without building them."""
    n, m, mh = model.n, model.m, len(model.holonomic)
    return (("dynamics", 1 + 2 * n, n * n + n + m * n + m), ("phi", 1 + n, mh + mh * n),
            ("velocity", 1 + n, m * n + m), ("energy", 1 + 2 * n, 1))


def _memo_key(model: Model, cc: str | None, names: tuple[str, ...], params: list[se.Symbol]
              ) -> tuple[str, Functions | None, str | None]:
    """The process memo's key of ``model``'s code, with the functions when they had to be built
    for it (a model without a ``structure_key``) and the text that keys a spec's model."""
    if model.structure_key is not None:
        text = "\0".join(("spec", model.structure_key, *names))
        return hashlib.sha256("\0".join((str(cc), BACKEND, text)).encode()).hexdigest(), None, text
    groups = _groups(model)
    return hashlib.sha256("\0".join((str(cc), BACKEND, structure(
        model.n, model.m, groups, params))).encode()).hexdigest(), groups, None


def _make_code(model: Model, cc: str | None, params: list[se.Symbol], groups: Functions | None,
               text: str | None) -> _Code:
    """``model``'s code, compiled (C when ``cc`` is given and it can be, else LLVM)."""
    code = None
    if cc is not None:
        code = (_c_code(model.n, model.m, groups, params) if groups is not None else
                _c_code(model.n, model.m, lambda: _groups(model), params, text, _sizes(model)))
    if code is None:
        with stages.building("the model"):
            stages.stage(f"deriving M and F ({model.n} coordinate{'s' * (model.n != 1)})")
            made = groups or _groups(model)
            stages.stage("compiling with LLVM")
            code = _llvm_code(made, params)
    return code


class _Ahead:
    """One model's code made in a background thread (:func:`compile_ahead`), in a copy of the
    caller's context (``--debug``, :data:`lagsim.errors.DEBUG`, reaches it): the code, or what
    making it raised, once :attr:`thread` has ended."""

    __slots__ = ("thread", "code", "error", "started", "compiling")

    def __init__(self, make: Callable[[], _Code]) -> None:
        self.code: _Code | None = None
        self.error: BaseException | None = None
        self.started = threading.Event()
        """Set when gcc runs, or when the build has ended without it (the cache had it)."""
        self.compiling = False

        def compilers() -> None:
            self.compiling = True
            self.started.set()

        def run() -> None:
            try:
                with telling_started(compilers):
                    self.code = make()
                if self.compiling and self.code.backend == "c":
                    runtime_ahead()
            except BaseException as exc:  # raised again by the caller that waits (result)
                self.error = exc
            finally:
                self.started.set()

        self.thread = threading.Thread(target=contextvars.copy_context().run, args=(run,),
                                       name="lagsim-build", daemon=True)
        self.thread.start()

    def result(self) -> _Code:
        self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.code is not None
        return self.code


AHEAD: dict[str, _Ahead] = {}
"""Builds under way in background threads, by :data:`MEMO`'s key (:func:`compile_ahead`);
:func:`compile_model` takes its entry out when it waits for it."""


def compile_ahead(model: Model) -> None:
    """Start making ``model``'s code in a background thread, for the next :func:`compile_model`
    of it (with the default memo), which waits for that build and uses what it made or raises
    what it raised: the C compiler, a process of its own, then runs while the caller goes on
    (``lagsim simulate`` imports the run's modules meanwhile; issue 31, "Build"). It returns
    once the compilers run or the build has ended, so that the build's own Python work (the
    derivation, the common subexpressions, printing C) does not share the interpreter with
    the caller's; when no core is free (:func:`~lagsim.numeric.ccompile.idle_core`) only once
    the build has ended, as without it: gcc beside the caller on a busy core gains no time and
    costs CPU (the 8-chain at load 2 on 2 cores: +4 % of the process's CPU). The build is
    the same as :func:`compile_model`'s (the same cache, locks and checks of what is loaded);
    nothing starts when the code is in :data:`MEMO` or already being made. When gcc has
    compiled the model (it was not in the cache), the thread starts building the libraries
    every C run uses where the cache has none (:func:`~lagsim.numeric.ccompile.
    runtime_ahead`: a machine's first run); a model that fell back to LLVM asks for none. A
    process that ends without waiting abandons the thread (a daemon): the compile cache
    removes a build folder left so (:func:`lagsim.numeric.cache.prune`), as after a run killed
    while it compiled."""
    names = tuple(model.parameters)
    params = list(model.substitutions())
    cc = compiler()
    key, groups, text = _memo_key(model, cc, names, params)
    if key in MEMO or key in AHEAD:
        return
    ahead = _Ahead(lambda: _make_code(model, cc, params, groups, text))
    AHEAD[key] = ahead
    ahead.started.wait()
    if not idle_core():
        ahead.thread.join()


_COLD = [False]


def cold_build() -> bool:
    """Whether the last build :func:`compile_model` took from :func:`compile_ahead` compiled its
    model to C here, by gcc (it was not in the compile cache; on a machine's first run neither
    are the runtime's libraries)."""
    return _COLD[0]


def compile_model(model: Model, *, memo: OrderedDict[str, _Code] | None = None) -> NumericSystem:
    """Compile the numeric functions of ``model`` with its parameters as inputs, bound to its
    parameter values; a model of the same structure compiled before in this process (in
    ``memo``, default :data:`MEMO`; an empty one compiles as a new process would) is not
    compiled again, and one being made by :func:`compile_ahead` is waited for. A model with a
    ``structure_key`` (one built from a spec) is looked up by it, so that a model whose code is
    in the compile cache is loaded without deriving M, F and h (issue 17 §2)."""
    default = memo is None
    memo = MEMO if memo is None else memo
    names = tuple(model.parameters)
    params = list(model.substitutions())
    values = np.array([model.parameters[k] for k in names], dtype=float)
    cc = compiler()
    key, groups, text = _memo_key(model, cc, names, params)
    code = memo.get(key)
    if code is None:
        ahead = AHEAD.pop(key, None) if default else None
        code = ahead.result() if ahead is not None else _make_code(model, cc, params, groups,
                                                                   text)
        if ahead is not None:
            _COLD[0] = ahead.compiling and code.backend == "c"
        memo[key] = code
        while len(memo) > MEMO_SIZE:
            memo.popitem(last=False)
    memo.move_to_end(key)
    return NumericSystem(
        name=model.name,
        coordinates=model.coordinates,
        constraint_names=tuple(c.name for c in model.constraints),
        constraint_kinds=tuple(c.kind for c in model.constraints),
        parameters=dict(zip(names, values.tolist())),
        time_dependent=model.is_time_dependent,
        inputs=model.inputs,
        backend=code.backend,
        _code=code,
        **code.bind(values),
    )


def compile_functions(n: int, m: int, groups: Functions, params: Sequence[se.Symbol],
                      values: Sequence[float]) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """Extra compiled functions of a model beside :func:`compile_model`'s (the Jacobian of
    :mod:`lagsim.numeric.jacobian`): ``groups`` as there, the parameters ``params`` run-time inputs
    bound to ``values``; C when a compiler is there, else symengine's LLVM; compiled once per
    structure in the process (:data:`MEMO`) and, for C, once per machine (the compile cache)."""
    return function_binder(n, m, groups, params)(np.array(values, dtype=float))


def function_binder(n: int, m: int, groups: Functions, params: Sequence[se.Symbol]
                    ) -> Callable[[np.ndarray], dict[str, Callable[[np.ndarray], np.ndarray]]]:
    """:func:`compile_functions` before its values: ``bind(values)`` gives the functions at the
    parameter values, without hashing the expressions again (a caller that binds the same
    structure to many values, a fit's runs, keeps it)."""
    params = list(params)
    cc = compiler()
    key = hashlib.sha256("\0".join(("functions", str(cc), BACKEND, structure(
        n, m, groups, params))).encode()).hexdigest()
    bind = _FUNCTION_MEMO.get(key)
    if bind is None:
        compiled = compile_c(n, m, groups, params, ode=False) if cc is not None else None
        if compiled is not None:
            def bind(v: np.ndarray, compiled: Any = compiled) -> dict[str, Callable]:
                return dict(compiled.bind(v).functions)
        else:
            funcs = {name: (lambdify([*args, *params], exprs), len(args))
                     for name, args, exprs in groups}

            def bind(v: np.ndarray, funcs: dict = funcs) -> dict[str, Callable]:
                return {name: _Bound(func, k, v) for name, (func, k) in funcs.items()}
        _FUNCTION_MEMO[key] = bind
        while len(_FUNCTION_MEMO) > MEMO_SIZE:
            _FUNCTION_MEMO.popitem(last=False)
    _FUNCTION_MEMO.move_to_end(key)
    return bind


_FUNCTION_MEMO: OrderedDict[str, Callable[[np.ndarray], dict[str, Callable]]] = OrderedDict()
