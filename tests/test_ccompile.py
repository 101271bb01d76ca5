"""The C path of lagsim.numeric.ccompile against symengine's LLVM path, its cache and its fallbacks.

Every compiled function must agree with the LLVM path at seeded random states to 1e-12 (the
same expressions, M q̈ = F + Aᵀλ and A q̈ = b of seed 001 §10.7 / seed 003, h = q̇·∂L/∂q̇ − L),
and the ODE right-hand side with ``numpy.linalg.solve`` of M q̈ = F (seed 001 eq. 10.12–10.14).
"""

from __future__ import annotations

import subprocess
from collections import OrderedDict
from dataclasses import replace

import numpy as np
import pytest
import symengine as se
from scipy.integrate import solve_ivp

import lagsim.errors
import lagsim.numeric.compile
from lagsim.numeric import ccompile
from lagsim.numeric.compile import compile_model
from lagsim.run.integrate import SimulateOptions, simulate
from lagsim.spec.chains import chain_yaml
from lagsim.spec.system import load_spec, parse_spec
from lagsim.symbolic.model import build_model

SYSTEMS = ("double_pendulum_constrained", "pendulum_natural", "skate", "moving_pivot_pendulum",
           "sho_table", "driven_damped_pendulum", "slider_crank", "pendulum")

pytestmark = pytest.mark.skipif(ccompile.compiler() is None, reason="no C compiler")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    """An empty cache folder, and nothing compiled yet in this process, for every test."""
    monkeypatch.setenv("LAGSIM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("LAGSIM_NO_CC", raising=False)
    lagsim.numeric.compile.MEMO.clear()


def _both(model, monkeypatch):
    fast = compile_model(model)
    monkeypatch.setenv("LAGSIM_NO_CC", "1")
    slow = compile_model(model)
    monkeypatch.delenv("LAGSIM_NO_CC")
    assert fast.backend == "c" and slow.backend != "c"
    return fast, slow


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", SYSTEMS)
def test_c_functions_equal_llvm_at_random_states(name, monkeypatch):
    model = build_model(load_spec(name))
    fast, slow = _both(model, monkeypatch)
    rng = np.random.default_rng(11)
    for _ in range(5):
        t = float(rng.uniform(0, 3))
        q, qd = rng.uniform(-1.5, 1.5, model.n), rng.uniform(-2, 2, model.n)
        for a, b in zip(fast.dynamics(t, q, qd), slow.dynamics(t, q, qd)):
            _close(a, b)
        for a, b in zip(fast.phi(t, q), slow.phi(t, q)):
            _close(a, b)
        for a, b in zip(fast.velocity_terms(t, q), slow.velocity_terms(t, q)):
            _close(a, b)
        assert fast.energy(t, q, qd) == pytest.approx(slow.energy(t, q, qd), rel=1e-12,
                                                      abs=1e-12)
        if not model.m:
            y = np.concatenate((q, qd))
            _close(fast.ode_rhs()(t, y), slow.ode_rhs()(t, y))
            M, F, _, _ = slow.dynamics(t, q, qd)
            _close(fast.ode_rhs()(t, y)[model.n:], np.linalg.solve(M, F))


@pytest.mark.parametrize("n", (3, 10))
def test_chain_rhs_equals_numpy_solve(n, tmp_path, monkeypatch):
    """The Cholesky solve in C against numpy's LU on the chain's dense M (n = 10: a 10×10
    factorisation, and functions long enough to be compiled in pieces)."""
    path = tmp_path / "chain.yaml"
    path.write_text(chain_yaml(n, natural=False, angle=0.5), encoding="utf-8")
    fast, slow = _both(build_model(load_spec(path)), monkeypatch)
    rng = np.random.default_rng(n)
    for _ in range(20):
        y = rng.uniform(-3, 3, 2 * n)
        _close(fast.ode_rhs()(0.0, y), slow.ode_rhs()(0.0, y))


@pytest.mark.parametrize("natural", (False, True))
def test_functions_split_in_pieces_equal_llvm(natural, tmp_path, monkeypatch):
    """Long functions are compiled in pieces that share their common subexpressions through an
    array (issue 17 §1); with pieces of 15 statements (the 4-chain's every function is split)
    M, F, A, b, φ, the velocity terms, h and the ODE right-hand side still equal the LLVM
    path's to 1e-12."""
    monkeypatch.setattr(ccompile, "CHUNK", 15)
    monkeypatch.setattr(ccompile, "_IDENTITY", {})
    sources = []
    compile_source = ccompile._compile

    def keep(cc, source, options, work):
        sources.append(source)
        return compile_source(cc, source, options, work)

    monkeypatch.setattr(ccompile, "_compile", keep)
    path = tmp_path / "chain.yaml"
    path.write_text(chain_yaml(4, natural=natural, angle=0.5), encoding="utf-8")
    model = build_model(load_spec(path))
    fast, slow = _both(model, monkeypatch)
    assert "dynamics_1(in, p, out, T);" in sources[0]
    rng = np.random.default_rng(3)
    for _ in range(5):
        t, q, qd = 0.4, rng.uniform(-2, 2, model.n), rng.uniform(-2, 2, model.n)
        for a, b in zip(fast.dynamics(t, q, qd), slow.dynamics(t, q, qd)):
            _close(a, b)
        for a, b in zip(fast.phi(t, q), slow.phi(t, q)):
            _close(a, b)
        for a, b in zip(fast.velocity_terms(t, q), slow.velocity_terms(t, q)):
            _close(a, b)
        assert fast.energy(t, q, qd) == pytest.approx(slow.energy(t, q, qd), rel=1e-12)
        if not natural:
            y = np.concatenate((q, qd))
            _close(fast.ode_rhs()(t, y), slow.ode_rhs()(t, y))


def test_returned_arrays_are_fresh():
    """solve_ivp keeps what an RHS returns (issue 5): a later call must not change it."""
    numeric = compile_model(build_model(load_spec("double_pendulum_constrained")))
    q, qd = np.full(numeric.n, 0.3), np.zeros(numeric.n)
    first = numeric.dynamics(0.0, q, qd)
    kept = [a.copy() for a in first]
    numeric.dynamics(0.0, q + 0.5, qd + 1.0)
    for a, b in zip(first, kept):
        np.testing.assert_array_equal(a, b)
    free = compile_model(build_model(load_spec("pendulum")))
    rhs = free.ode_rhs()
    y1 = rhs(0.0, np.array([0.3, 0.0]))
    copy = y1.copy()
    y2 = rhs(0.0, np.array([1.2, 2.0]))
    np.testing.assert_array_equal(y1, copy)
    assert not np.array_equal(y1, y2)


def test_threads_calling_one_compiled_function_at_once_get_their_own_values():
    """ctypes lets go of the GIL during a C call: two threads calling the same compiled energy
    and ODE right-hand side at once must each get the value of their own argument (buffers kept
    on the function object gave one thread the other's: a sweep's threads saw wrong energies)."""
    from concurrent.futures import ThreadPoolExecutor

    numeric = compile_model(build_model(load_spec("pendulum")))
    rhs = numeric.ode_rhs()
    angles = np.linspace(0.1, 3.0, 400)
    serial = [(numeric.energy(0.0, np.array([a]), np.array([2 * a])),
               rhs(0.0, np.array([a, 2 * a]))) for a in angles]

    def each(a: float) -> tuple[float, np.ndarray]:
        return numeric.energy(0.0, np.array([a]), np.array([2 * a])), rhs(0.0, np.array([a, 2 * a]))

    for _ in range(5):
        with ThreadPoolExecutor(4) as pool:
            parallel = list(pool.map(each, angles))
        assert [e for e, _ in parallel] == [e for e, _ in serial]
        for (_, got), (_, want) in zip(parallel, serial):
            np.testing.assert_array_equal(got, want)


def _one_dof(mass_expr, force=1):
    t, q, qd = se.symbols("t q qd")
    return ccompile.compile_c(1, 0, [("dynamics", [t, q, qd], [mass_expr(q), se.Integer(force)])])


def test_singular_and_indefinite_mass():
    """M = q: singular at q = 0 (LinAlgError, as numpy.linalg.solve), negative at q = −2, where
    the Cholesky fails and the LU fallback still gives q̈ = F/M = −0.5."""
    compiled = _one_dof(lambda q: q)
    assert compiled is not None
    with pytest.raises(np.linalg.LinAlgError):
        compiled.ode_rhs(0.0, np.array([0.0, 0.0]))
    np.testing.assert_allclose(compiled.ode_rhs(0.0, np.array([-2.0, 0.7])), [0.7, -0.5],
                               rtol=1e-15)
    np.testing.assert_allclose(compiled.ode_rhs(0.0, np.array([4.0, 0.0])), [0.0, 0.25],
                               rtol=1e-15)


@pytest.mark.cache
def test_cache_is_reused_and_left_clean(tmp_path, monkeypatch):
    first = _one_dof(lambda q: 2 + se.cos(q))
    folder = tmp_path / "cache"
    assert first.library.parent == folder
    stem = first.library.name[:-len(".so")]
    assert sorted(p.name for p in folder.iterdir()) == [f"{stem}.sha256", f"{stem}.so"]
    assert oct(folder.stat().st_mode & 0o777) == oct(0o700)
    assert first.library.stat().st_mode & 0o022 == 0

    def no_compiler(*args, **kwargs):
        raise AssertionError("compiled again although the library is cached")

    monkeypatch.setattr(subprocess, "run", no_compiler)
    second = _one_dof(lambda q: 2 + se.cos(q))
    assert second.library == first.library
    np.testing.assert_allclose(second.ode_rhs(0.0, np.array([0.0, 0.0])), [0.0, 1 / 3],
                               rtol=1e-15)


def test_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("LAGSIM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ccompile.cache_dir() == tmp_path / "xdg" / "lagsim"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert ccompile.cache_dir() == tmp_path / "home" / ".cache" / "lagsim"
    monkeypatch.setenv("LAGSIM_CACHE", str(tmp_path / "mine"))
    assert ccompile.cache_dir() == tmp_path / "mine"


def test_fallback_without_compiler(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    numeric = compile_model(build_model(load_spec("pendulum")))
    assert numeric.backend != "c"
    y = numeric.ode_rhs()(0.0, np.array([0.5, 0.0]))
    assert y[1] == pytest.approx(-9.81 * np.sin(0.5), rel=1e-12)


def test_fallback_when_the_source_does_not_compile(monkeypatch, capsys):
    """Generated code the compiler refuses: the LLVM path, and one warning line (issue 8 §4)."""
    monkeypatch.setattr(ccompile, "_source", lambda *args: "this is not C")
    lagsim.errors.SAID.clear()
    numeric = compile_model(build_model(load_spec("pendulum")))
    assert numeric.backend != "c"
    y = numeric.ode_rhs()(0.0, np.array([0.5, 0.0]))
    assert y[1] == pytest.approx(-9.81 * np.sin(0.5), rel=1e-12)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "C compiler failed" in err and "LLVM" in err


def test_coordinates_named_like_temporaries(monkeypatch):
    """cse temporaries are x0, x1, …; the inputs are renamed, so coordinates x0, x1 work."""
    spec = parse_spec("""
name: two
coordinates: [x0, x1]
parameters: {k: 2.0}
kinetic: 0.5*x0_dot^2 + 0.5*x1_dot^2 + 0.1*x0_dot*x1_dot*cos(x0)
potential: 0.5*k*x0^2 + 0.5*k*(x1 - x0)^2
initial: {x0: 0.3, x1: -0.2}
""")
    fast, slow = _both(build_model(spec), monkeypatch)
    y = np.array([0.3, -0.2, 0.4, 0.1])
    _close(fast.ode_rhs()(0.0, y), slow.ode_rhs()(0.0, y))


def test_simulate_makes_no_more_evaluations_than_solve_ivp():
    """Dense output only where a sample falls: with two samples the run takes the same steps as
    solve_ivp without dense output, so the same number of evaluations (plus the one that checks
    the start is finite, driver.Guard.start) and the same end state."""
    spec = load_spec("pendulum")
    model = build_model(spec)
    numeric = compile_model(model)
    inner = numeric.ode_rhs()
    calls = [0]

    class Counting:
        def __getattr__(self, name):
            return getattr(numeric, name)

        def dop853_step(self):
            return None

        def ode_rhs(self, *, once=False):
            def rhs(t, y):
                calls[0] += 1
                return inner(t, y)
            return rhs

    options = SimulateOptions(t_end=10.0, samples=2, rtol=1e-10, atol=1e-10)
    traj = simulate(spec, model, options, numeric=Counting())
    q0, qd0 = spec.initial_state()
    ref = solve_ivp(inner, (0.0, 10.0), [*q0, *qd0], method="DOP853", rtol=1e-10, atol=1e-10)
    assert calls[0] == ref.nfev + 1
    np.testing.assert_allclose([traj.q[-1, 0], traj.qd[-1, 0]], ref.y[:, -1], rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("n", (1, 4))
def test_c_stepper_takes_scipys_steps(n, tmp_path):
    """lagsim.run.engines.cstep.CDOP853 against scipy's DOP853 on the same compiled RHS: same
    number of evaluations, end states equal to 1e-12 (step sizes differ in the last bits: pow
    against
numpy's **), the dense output of the last step (scipy's, on the C stages) equal to 1e-9 at
t = 9.99, and the energy h at the end (seed 001 §10.6:
    conserved, so both drift by less than 1e-9 at rtol 1e-10)."""
    from scipy.integrate import DOP853

    from lagsim.run.engines.cstep import CDOP853

    path = tmp_path / "chain.yaml"
    path.write_text(chain_yaml(n, natural=False, angle=0.5), encoding="utf-8")
    spec = load_spec(path)
    numeric = compile_model(build_model(spec))
    q0, qd0 = spec.initial_state()
    y0 = np.array([*q0, *qd0], dtype=float)
    rhs = numeric.ode_rhs()
    runs = []
    for make in (lambda: DOP853(rhs, 0.0, y0, 10.0, rtol=1e-10, atol=1e-10),
                 lambda: CDOP853(rhs, 0.0, y0, 10.0, numeric.dop853_step(), rtol=1e-10,
                                 atol=1e-10)):
        solver = make()
        steps = 0
        while solver.status == "running":
            solver.step()
            steps += 1
        runs.append((solver.y, solver.nfev, steps, solver.dense_output()(9.99)))
    (y_ref, nfev_ref, steps_ref, old_ref), (y_c, nfev_c, steps_c, old_c) = runs
    assert (nfev_c, steps_c) == (nfev_ref, steps_ref)
    _close(y_c, y_ref)
    np.testing.assert_allclose(old_c, old_ref, rtol=0, atol=1e-9)
    h0 = numeric.energy(0.0, y0[:n], y0[n:])
    assert abs(numeric.energy(10.0, y_c[:n], y_c[n:]) - h0) < 1e-9


def test_c_stepper_fails_like_scipy_and_reports_a_singular_mass_matrix():
    """M = (q + |q|)/2, F = −1: q̈ = −1/q drives q to 0, where both steppers give up with
    "step too small" at the same time; from q < 0 (M = 0 exactly) the C step reports the
    singular matrix and CDOP853 raises LinAlgError, as numpy's solve would."""
    from scipy.integrate import DOP853

    from lagsim.run.engines.cstep import CDOP853

    compiled = _one_dof(lambda q: (q + abs(q)) / 2, force=-1)
    y0 = np.array([0.5, -1.0])
    ref = DOP853(compiled.ode_rhs, 0.0, y0, 5.0, rtol=1e-8, atol=1e-8)
    solver = CDOP853(compiled.ode_rhs, 0.0, y0, 5.0, compiled.dop853_step, rtol=1e-8, atol=1e-8)
    for s in (ref, solver):
        while s.status == "running":
            message = s.step()
        assert s.status == "failed" and "step size is less than spacing" in message
    assert solver.t == pytest.approx(ref.t, rel=1e-12)
    solver = CDOP853(compiled.ode_rhs, 0.0, y0, 5.0, compiled.dop853_step, rtol=1e-8, atol=1e-8)
    solver.y = np.array([-1.0, 0.0])
    with pytest.raises(np.linalg.LinAlgError):
        solver.step()


def test_native_call_converts_inputs_and_reports_errors():
    """The CPython-extension call (no ctypes): lists and strided arrays are converted, a wrong
    length is a ValueError, M = 0 a LinAlgError, and each call returns a new array."""
    compiled = _one_dof(lambda q: 2 + se.cos(q))
    rhs = ccompile.native_rhs(compiled)
    if rhs is None:
        pytest.skip("no Python headers to build the extension")
    expected = compiled.ode_rhs(0.0, np.array([0.4, 0.3]))
    np.testing.assert_allclose(expected, [0.3, 1 / (2 + np.cos(0.4))], rtol=1e-15)
    np.testing.assert_array_equal(rhs(0.0, np.array([0.4, 0.3])), expected)
    np.testing.assert_array_equal(rhs(0, [0.4, 0.3]), expected)
    np.testing.assert_array_equal(rhs(0.0, np.array([0.4, 9.0, 0.3])[::2]), expected)
    first = rhs(0.0, np.array([0.4, 0.3]))
    second = rhs(0.0, np.array([1.0, 2.0]))
    assert first is not second
    np.testing.assert_array_equal(first, expected)
    with pytest.raises(ValueError):
        rhs(0.0, np.zeros(3))
    singular = ccompile.native_rhs(_one_dof(lambda q: q))
    with pytest.raises(np.linalg.LinAlgError):
        singular(0.0, np.array([0.0, 1.0]))


def test_a_single_call_of_the_right_hand_side_goes_through_ctypes_with_the_same_values():
    """``ode_rhs(once=True)`` (the start's finite check of a run the C loop takes, issue 31)
    is the ctypes call, not the direct one, and gives the same numbers; without ``once`` the
    direct call when the extension builds."""
    numeric = compile_model(build_model(load_spec("pendulum")))
    if numeric.backend != "c":
        pytest.skip("no C compiler")
    once, made = numeric.ode_rhs(once=True), numeric.ode_rhs()
    assert isinstance(once, ccompile.COdeRhs)
    assert numeric.ode_rhs() is made
    if isinstance(made, ccompile.COdeRhs):
        pytest.skip("no Python headers to build the extension")
    for y in ([0.4, 0.3], [-2.0, 5.0], [3.0, -0.1]):
        np.testing.assert_array_equal(once(0.0, np.array(y)), made(0.0, np.array(y)))


def test_structure_key_ignores_values_and_follows_expressions():
    """What keys the compiled code (issue 17 §2): parameter values, initial values and run
    settings leave it unchanged; any change of an expression, a parameter's name or a
    constraint changes it."""
    from lagsim.symbolic.model import spec_structure

    base = "parameters: {k: 1.0, m: 2.0}\ncoordinates: [x]\nkinetic: m/2*x_dot**2\n"
    key = spec_structure(parse_spec(base + "potential: k/2*x**2\n", "a.yaml"))
    same = [
        "parameters: {k: 5.0, m: 3.0}\ncoordinates: [x]\nkinetic: m/2*x_dot**2\n"
        "potential: k/2*x**2\n",
        base + "potential: k/2*x**2\ninitial: {x: 0.3}\nsimulate: {t_end: 3}\n",
        "name: other\n" + base + "potential: k/2*x**2\n",
    ]
    for text in same:
        assert spec_structure(parse_spec(text, "b.yaml")) == key
    different = [
        base + "potential: k/2*x**3\n",
        base + "potential: m/2*x**2\n",
        base.replace("k: 1.0, m: 2.0", "k: 1.0, m: 2.0, c: 1.0") + "potential: k/2*x**2\n",
        base + "potential: k/2*x**2\ndissipation: 1/2*k*x_dot**2\n",
    ]
    for text in different:
        assert spec_structure(parse_spec(text, "c.yaml")) != key


@pytest.mark.cache
def test_a_warm_build_loads_the_library_without_deriving_m_and_f(monkeypatch):
    """Once the library is in the cache, a new process (here: an empty in-process memo) builds
    the model and loads the code without computing M, F or h, and gets the same numbers as a
    model compiled from its expressions."""
    spec = load_spec("double_pendulum")
    compile_model(build_model(spec))
    memo: OrderedDict = OrderedDict()
    builds = []
    compile_source = ccompile._compile

    def count(*args):
        builds.append(args)
        return compile_source(*args)

    monkeypatch.setattr(ccompile, "_compile", count)
    model = build_model(load_spec("double_pendulum", {"m1": 3.0}))
    warm = compile_model(model, memo=memo)
    assert model._derived == {}
    assert builds == []
    expressions = replace(model, structure_key=None)
    cold = compile_model(expressions, memo=memo)
    assert expressions._derived and model._derived == {}
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-1, 1, model.n), rng.uniform(-1, 1, model.n)
    for a, b in zip(warm.dynamics(0.2, q, qd), cold.dynamics(0.2, q, qd)):
        _close(a, b)
    assert warm.energy(0.2, q, qd) == pytest.approx(cold.energy(0.2, q, qd), rel=1e-14)


@pytest.mark.cache
def test_build_and_load_keys_by_source_and_options_and_checks_the_key(monkeypatch):
    """ccompile.build_and_load, through which the C loop, its stop expression, rattle and the
    models get their libraries: the same tag, options and key text load the cached library
    without compiling; other options or another key text compile anew; a library whose reported
    key is not the one asked for is refused (cache.Foreign), so that one cache entry cannot
    stand in for another."""
    import ctypes

    from lagsim.numeric import cache

    cc = ccompile.compiler()
    builds = []
    compile_source = ccompile._compile

    def count(*args):
        builds.append(args)
        return compile_source(*args)

    monkeypatch.setattr(ccompile, "_compile", count)
    source = "int lagsim_answer(void) { return 42; }"
    lib, key = ccompile.build_and_load(cc, "test", source, ccompile.flags())
    lib.lagsim_answer.restype = ctypes.c_int
    assert lib.lagsim_answer() == 42 and len(builds) == 1
    assert ccompile.build_and_load(cc, "test", source, ccompile.flags())[1] == key
    assert len(builds) == 1
    _, other = ccompile.build_and_load(cc, "test", source, ("-O0", *ccompile.FLAGS))
    assert other != key and len(builds) == 2
    _, made = ccompile.build_and_load(cc, "test", lambda: source, ccompile.flags(),
                                      key_text="version 2")
    assert made not in (key, other) and len(builds) == 3
    with pytest.raises(ValueError, match="key_text"):
        ccompile.build_and_load(cc, "test", lambda: source, ccompile.flags())
    with pytest.raises(cache.Foreign):
        ccompile._open_checked(lib._name, other)


def test_pieces_in_their_own_translation_units_compute_the_same_bits(tmp_path, monkeypatch):
    """A model's pieces compiled in translation units of their own (issue 31, build time)
    give the library of one unit bit for bit: the 4-chain with pieces of 15 statements,
    split_units keeping each piece exactly once (when asked to split pieces this small), M and F
    equal to the last bit at random states."""
    import ctypes

    monkeypatch.setattr(ccompile, "CHUNK", 15)
    monkeypatch.setattr(ccompile, "_IDENTITY", {})
    monkeypatch.setenv("LAGSIM_CACHE", str(tmp_path / "cache"))
    sources = []
    compile_source = ccompile._compile

    def keep(cc, source, options, work):
        sources.append(source)
        return compile_source(cc, source, options, work)

    monkeypatch.setattr(ccompile, "_compile", keep)
    model = build_model(parse_spec(chain_yaml(4), "chain.yaml"))
    compile_model(model)
    source = next(s for s in sources if ccompile.PIECE in s)
    assert ccompile.split_units(source, 2) == [source]  # too small to gain on a busy machine
    rest, pieces_unit = ccompile.split_units(source, 2, idle=True)
    assert rest.count(ccompile.PIECE) == 0 and rest.count("__attribute__((noinline, visib")
    assert pieces_unit.count(ccompile.PIECE_END) == source.count(ccompile.PIECE_END)
    monkeypatch.setattr(ccompile, "SPLIT_AT", 0)
    units = ccompile.split_units(source, 2)
    pieces = source.count(ccompile.PIECE_END)
    assert len(units) == 3 and pieces > 4
    assert [u.count(ccompile.PIECE_END) for u in units[:1]] == [0]
    assert sum(u.count(ccompile.PIECE_END) for u in units[1:]) == pieces
    libraries = []
    for count, idle, objects in ((1, False, 0), (2, False, 3), (2, True, 2)):
        monkeypatch.setattr(ccompile, "UNITS", count)
        monkeypatch.setattr(ccompile, "SPLIT_AT", 60_000 if idle else 0)
        monkeypatch.setattr(ccompile, "idle_core", lambda idle=idle: idle)
        work = tmp_path / f"units{count}{idle}"
        work.mkdir()
        built = compile_source(ccompile.compiler(), source, ccompile.flags(), work)
        assert len(list(work.glob("*.o"))) == objects
        libraries.append(ctypes.CDLL(str(built)))
    rng = np.random.default_rng(7)
    size, inputs = 4 * 4 + 4, 1 + 2 * 4
    outs = [np.zeros(size) for _ in libraries]
    double = ctypes.POINTER(ctypes.c_double)
    parameters = np.array([1.0, 1.0, 9.81])
    for _ in range(20):
        x = rng.uniform(-3, 3, inputs)
        for lib, out in zip(libraries, outs):
            lib.lagsim_dynamics(x.ctypes.data_as(double), parameters.ctypes.data_as(double),
                                out.ctypes.data_as(double))
        assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()
        assert np.abs(outs[0]).max() > 0
