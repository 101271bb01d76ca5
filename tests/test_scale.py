"""The code of large models (issue 31, "Scale"): common factors taken out of sums before C is
generated (lagsim/numeric/factoring.py) and the mass matrix's Cholesky by columns
(lagsim/numeric/c/wide.h). Speed is measured in bench/peers.py, never here."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest
import symengine as se
from scipy.integrate import solve_ivp

from lagsim.numeric import ccompile
from lagsim.numeric.compile import compile_model
from lagsim.numeric.factoring import gather_factors
from lagsim.spec.chains import chain_yaml
from lagsim.spec.system import parse_spec
from lagsim.symbolic.model import build_model

N = ccompile.FACTOR_AT


def _chain(n: int):
    return build_model(parse_spec(chain_yaml(n), f"chain_{n}.yaml"))


def _dynamics(model) -> tuple[list[se.Basic], list[se.Basic], list[se.Basic]]:
    """(arguments, M flat, F) of a model, the parameters last among the arguments."""
    n = model.n
    args = [model.t, *model.q, *model.qd, *model.substitutions()]
    M = [model.mass_matrix[i, j] for i in range(n) for j in range(n)]
    return args, M, [model.forcing[i] for i in range(n)]


def _products(c_text: str) -> int:
    return len(re.findall(r"\*(?!/)", c_text.split("{", 1)[1]))


def test_gathered_sums_equal_the_sums_on_random_states():
    """M and F of the chain at the size from which factors are taken out, written both ways
    and evaluated by symengine at random states and parameter values: equal to 1e-12
    relative (the rewrite regroups products, so it may change the last bits only)."""
    model = _chain(N)
    args, M, F = _dynamics(model)
    plain = se.Lambdify(args, M + F, backend="lambda", cse=True)
    gathered = se.Lambdify(args, gather_factors(M + F), backend="lambda", cse=True)
    rng = np.random.default_rng(31)
    for _ in range(20):
        x = np.concatenate(([0.0], rng.uniform(-3, 3, N), rng.uniform(-2, 2, N),
                            rng.uniform(0.3, 3, len(args) - 1 - 2 * N)))
        a, b = np.asarray(plain(x)), np.asarray(gathered(x))
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12 * np.abs(a).max())


def test_gathering_is_exact_on_polynomials():
    """On polynomials the rewrite is exact: each gathered sum expands back to the sum it came
    from, and each has fewer operations (x0 x1 + x1 x2 + ... shares every factor pairwise;
    a product of a two-term sum is opened so the factors inside it count)."""
    x = se.symbols("x0:40")
    y = se.Symbol("y")
    sums = [se.Add(*[x[k] * x[k + 1] for k in range(39)]),
            se.Add(*[3 * x[k] * (x[0] * y + 2 * x[k] * y) for k in range(1, 40)])]
    for before, after in zip(sums, gather_factors(sums)):
        assert se.expand(after - before) == 0
        assert se.count_ops(after) < se.count_ops(before)


def test_gathering_goes_inside_functions_and_leaves_piecewise_whole():
    """Sums inside sin, abs, atan2 and powers are gathered; a piecewise expression (its
    conditions are no expressions to rebuild) is kept as it is; the values are those of the
    expressions as written at random points."""
    x, y = se.symbols("x y")
    exprs = [y * se.sin(x * y + 2 * x) + y * se.Piecewise((x * y + 2 * x, x < 0.5), (y, True)),
             se.Abs(x * y + x) * x + se.atan2(x * y + x, y) * x,
             (x * y + x) ** se.Rational(1, 2) * y + y * x]
    gathered = gather_factors(exprs)
    assert "x*(2 + y)" in str(gathered[0]) and "Piecewise((2*x + x*y" in str(gathered[0])
    before = se.Lambdify([x, y], exprs, backend="lambda")
    after = se.Lambdify([x, y], gathered, backend="lambda")
    rng = np.random.default_rng(5)
    for point in rng.uniform(0.1, 2, (20, 2)):
        np.testing.assert_allclose(after(point), before(point), rtol=1e-14)


def test_gathering_lowers_the_products_of_the_chains_forcing_term():
    """The rewrite triggers: the C of the N-chain's F has fewer than half the multiplications
    once common factors are out of its sums (½ m, l, cos θ_i θ̇_i and sin θ_i θ̇_i are shared by
    the terms of each bob k ≥ i)."""
    model = _chain(N)
    args, _, F = _dynamics(model)
    state = args[:1 + 2 * N]
    params = args[1 + 2 * N:]
    before = _products(ccompile.c_function("f", state, F, params))
    after = _products(ccompile.c_function("f", state, gather_factors(F), params))
    assert after < before / 2, (before, after)


def test_smaller_models_keep_their_expressions():
    """Below FACTOR_AT coordinates (every bundled system) the generated C is that of the
    expressions as derived, so their results keep their bits."""
    model = _chain(3)
    args, M, F = _dynamics(model)
    groups = [("dynamics", args[:7], M + F)]
    text = ccompile._source(3, 0, groups, args[7:], ode=False)
    assert ccompile.c_function("dynamics", args[:7], M + F, args[7:], split=True) in text


def test_the_eight_chain_calls_sin_and_cos_once_per_coordinate():
    """cos(θ_i − θ_j) of every pair would be n² transcendental calls: the derivation writes M
    and F in the products of sin θ_i and cos θ_j instead, so the 8-chain's dynamics calls sin
    and cos 8 times each, and nothing else transcendental."""
    model = _chain(8)
    args, M, F = _dynamics(model)
    text = ccompile.c_function("dynamics", args[:17], M + F, args[17:])
    calls = re.findall(r"\b([a-z]+)\(", text)
    assert sorted(set(calls) - {"pow", "dynamics"}) == ["cos", "sin"]
    assert calls.count("sin") == 8 and calls.count("cos") == 8


@pytest.mark.skipif(ccompile.compiler() is None, reason="no C compiler")
def test_wide_cholesky_factor_has_the_row_forms_bits_and_solves():
    """From LAGSIM_WIDE_N coordinates on lagsim_solve factors by columns (wide.h): on random
    positive definite matrices its factor is runtime.c's lagsim_cholesky's to the bit, and the
    solution equals the row form's (lagsim_cholesky_solve) and numpy's to 1e-12; an indefinite
    matrix still goes to LU and is solved."""
    source = ccompile.RUNTIME + """
int wide_solve(int n, double *M, double *r, double *L) { return lagsim_solve(n, M, r, L); }
int wide_factor(int n, double *M, double *r, double *L) { return lagsim_wide_cholesky(n, M, L); }
int row_factor(int n, double *M, double *r, double *L) { return lagsim_cholesky(n, M, L); }
int row_solve(int n, double *M, double *r, double *L)
{
    if (lagsim_cholesky(n, M, L)) return 1;
    lagsim_cholesky_solve(n, L, r);
    return 0;
}
int wide_n(void) { return LAGSIM_WIDE_N; }
"""
    lib, _ = ccompile.build_and_load(ccompile.compiler(), "test-wide", source,
                                     ccompile.flags())
    for name in ("wide_solve", "wide_factor", "row_factor", "row_solve"):
        getattr(lib, name).argtypes = (ctypes.c_int, *(ctypes.c_void_p,) * 3)
        getattr(lib, name).restype = ctypes.c_int
    wide = lib.wide_n()
    rng = np.random.default_rng(64)

    def call(name: str, M: np.ndarray, r: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        n = len(r)
        M, r, L = M.copy(), r.copy(), np.zeros(n * n)
        code = getattr(lib, name)(n, M.ctypes.data, r.ctypes.data, L.ctypes.data)
        return code, r, L.reshape(n, n)

    for n in (wide, wide + 1, wide + 3, 2 * wide + 5):
        A = rng.uniform(-1, 1, (n, n))
        M = A @ A.T + n * np.eye(n)
        r = rng.uniform(-1, 1, n)
        _, _, by_columns = call("wide_factor", M, r)
        _, _, by_rows = call("row_factor", M, r)
        assert np.array_equal(np.tril(by_columns.T), by_rows)
        code, x, _ = call("wide_solve", M, r)
        code_row, x_row, _ = call("row_solve", M, r)
        assert code == code_row == 0
        np.testing.assert_allclose(x, x_row, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(x, np.linalg.solve(M, r), rtol=1e-12, atol=1e-12)
    n = wide + 2
    S = rng.uniform(-1, 1, (n, n))
    S = S + S.T
    assert np.linalg.eigvalsh(S).min() < 0
    r = rng.uniform(-1, 1, n)
    code, x, _ = call("wide_solve", S, r)
    assert code == 0
    np.testing.assert_allclose(S @ x, r, rtol=1e-10, atol=1e-10)


@pytest.mark.skipif(ccompile.compiler() is None, reason="no C compiler")
def test_the_gathered_chain_compiled_agrees_and_conserves_energy():
    """The N-chain compiled to C (its sums gathered): the right-hand side equals numpy's
    solve of the expressions as derived (symengine, not gathered) to 1e-12 at random states,
    and its energy h is conserved along 1 s of DOP853 at 1e-11 (to 1e-8 relative: the
    integrator's error, not the rewrite's)."""
    model = _chain(N)
    system = compile_model(model)
    assert system.backend == "c"
    args, M, F = _dynamics(model)
    plain = se.Lambdify(args, M + F, backend="lambda", cse=True)
    params = [system.parameters[k] for k in system.parameters]
    rhs = system.ode_rhs()
    rng = np.random.default_rng(12)
    for _ in range(10):
        y = np.concatenate((rng.uniform(-3, 3, N), rng.uniform(-2, 2, N)))
        out = np.asarray(plain(np.concatenate(([0.0], y, params))))
        expected = np.linalg.solve(out[:N * N].reshape(N, N), out[N * N:])
        np.testing.assert_allclose(rhs(0.0, y)[N:], expected, rtol=1e-12,
                                   atol=1e-12 * np.abs(expected).max())
    y0 = np.concatenate((np.full(N, 0.5), np.zeros(N)))
    done = solve_ivp(rhs, (0.0, 1.0), y0, method="DOP853", rtol=1e-11, atol=1e-11)
    h0 = system.energy(0.0, y0[:N], y0[N:])
    h1 = system.energy(1.0, done.y[:N, -1], done.y[N:, -1])
    assert abs(h1 - h0) < 1e-8 * abs(h0)
    assert np.abs(done.y[N:, -1]).max() > 0.1
