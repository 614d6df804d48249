"""``ls.jit``: a traced function called again on new arguments gives what the function gives
written out (NumPy's values, the lazy arrays' formats), over formats, dtypes, index widths,
aliased and closed-over arrays and 0-d values that decide a plan differently."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse import traced as J
from tests.oracle import WIDTHS, build


def _dense(a):
    return np.asarray(a.todense())


def _hits():
    return J._STATS["hits"]


def _spmv_step(A, x, c):
    y = A @ x
    return c * y + x, (y * y).sum()


def _spmv_want(D, x, c):
    y = D @ x
    return c * y + x, (y * y).sum()


@settings(max_examples=25, deadline=None)
@given(fmt=st.sampled_from(["dense", "csr", "csc", "coo"]), width=st.sampled_from(WIDTHS),
       dtype=st.sampled_from([np.float64, np.float32]), n=st.integers(0, 9),
       seed=st.integers(0, 2**16))
def test_replays_match_numpy(fmt, width, dtype, n, seed):
    rng = np.random.default_rng(seed)
    D = (rng.random((n, n)) * (rng.random((n, n)) < 0.4)).astype(dtype)
    A = build(D, fmt, width)
    step = ls.jit(_spmv_step)
    before = _hits()
    for k in range(3):
        v = rng.random(n).astype(dtype)
        c = np.asarray(rng.random(), dtype=dtype)
        got, gs = step(A, v, c)
        want, ws = _spmv_want(D, v, c)
        np.testing.assert_allclose(_dense(got), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(float(gs), ws, rtol=1e-4, atol=1e-6)
        assert got.dtype == want.dtype and got.shape == want.shape
        plain = ls.compute(*_spmv_step(A, ls.asarray(v), ls.asarray(c)))
        assert got.format == plain[0].format
    if n and fmt != "dense":  # (a DAG of several operations: one plan, replayed on calls 2 and 3)
        assert _hits() - before == 2


def test_sparse_results_and_formats():
    rng = np.random.default_rng(3)
    Ds = [(rng.random((7, 5)) * (rng.random((7, 5)) < 0.5)) for _ in range(4)]

    def f(A, B, c):
        return A * B + c * A, (A * B).sum(axis=1)

    step = ls.jit(f)
    for k in range(2):
        A, B = ls.asarray(sp.csr_array(Ds[2 * k])), ls.asarray(sp.csr_array(Ds[2 * k + 1]))
        got, s = step(A, B, np.float64(1.5 + k))
        want = Ds[2 * k] * Ds[2 * k + 1] + (1.5 + k) * Ds[2 * k]
        np.testing.assert_allclose(_dense(got), want)
        np.testing.assert_allclose(_dense(s), (Ds[2 * k] * Ds[2 * k + 1]).sum(axis=1))
        lazy = f(A, B, ls.asarray(np.float64(1.5 + k)))
        assert got.format == lazy[0].format and s.format == lazy[1].format


def test_a_zero_scalar_decides_again():
    """``A + c`` is sparse for c == 0 and dense otherwise: the value's decision is checked on
    every call, and a call whose decision differs runs the function as written."""
    D = np.array([[0.0, 2.0], [3.0, 0.0]])
    A = ls.asarray(sp.csr_array(D))
    step = ls.jit(lambda A, x, c: (A + c) * x)
    for c in (1.0, 2.0, 0.0, -0.0, np.nan, 3.0):
        got = step(A, np.ones(2), np.float64(c))
        want = (D + c) * np.ones(2)
        np.testing.assert_allclose(_dense(got), want, equal_nan=True)
        assert got.format == ((A + ls.asarray(np.float64(c))) * ls.asarray(np.ones(2))).format


def test_closed_over_array_passed_as_an_argument():
    """An array read by closure stays the constant of the trace even when the same array is
    also the argument: a later argument replaces only the argument's reads."""
    D = np.array([[1.0, 2.0], [0.0, 3.0]])
    A = ls.asarray(sp.csr_array(D))
    step = ls.jit(lambda M, x: (A @ x) + (M @ x))
    x = np.array([1.0, -1.0])
    np.testing.assert_allclose(_dense(step(A, x)), 2 * (D @ x))
    E = np.array([[5.0, 0.0], [1.0, 1.0]])
    np.testing.assert_allclose(_dense(step(ls.asarray(sp.csr_array(E)), x)), D @ x + E @ x)


def test_aliasing_of_arguments():
    D = np.array([[1.0, 2.0], [0.0, 3.0]])
    A = ls.asarray(sp.csr_array(D))
    step = ls.jit(lambda x, y: (A @ x) * y + x)
    u, v = ls.asarray(np.array([1.0, 2.0])), ls.asarray(np.array([3.0, -1.0]))
    for a, b in ((u, v), (u, u), (v, u), (v, v)):  # traced apart, then one array twice, and back
        got = step(a, b)
        np.testing.assert_allclose(_dense(got), (D @ _dense(a)) * _dense(b) + _dense(a))


def test_passthrough_views_and_statics():
    D = np.arange(6.0).reshape(2, 3)
    step = ls.jit(lambda X, y, k: (X, X.T, X * k + y))
    for k, y in ((2, 1.0), (2, 5.0), (3, 1.0)):
        X = ls.asarray(D * y)
        same, t, z = step(X, np.float64(y), k)
        assert same is X
        np.testing.assert_allclose(_dense(t), (D * y).T)
        np.testing.assert_allclose(_dense(z), D * y * k + y)


def test_lazy_argument_and_no_mutation():
    D = np.array([[1.0, 0.0], [2.0, 3.0]])
    S = sp.csr_array(D)
    data = S.data.copy()
    A = ls.asarray(S)
    x = np.array([1.0, 1.0])
    step = ls.jit(lambda A, x: A @ x + 1)
    for _ in range(2):
        got = step(A * 2, x)  # (a lazy argument: computed first)
        np.testing.assert_allclose(_dense(got), 2 * D @ x + 1)
    np.testing.assert_array_equal(S.data, data)
    np.testing.assert_array_equal(x, [1.0, 1.0])


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="jit: expected a function"):
        ls.jit(3)
    with pytest.raises(ValueError, match="jit: fusion must be one of"):
        ls.jit(lambda x: x, fusion="some")
    with pytest.raises(TypeError, match="jit: argument 1 .list. is neither an array"):
        ls.jit(lambda x, y: x)(np.ones(2), [1, 2])
    with pytest.raises(TypeError, match="jit: the function must return a lazysparse array"):
        ls.jit(lambda x: 3)(np.ones(2))


def test_clear_cache_drops_traces():
    step = ls.jit(lambda x: x * 2 + 1)
    step(np.ones(3))
    assert step._traces
    ls.clear_cache()
    assert not step._traces
    np.testing.assert_allclose(_dense(step(np.ones(3))), 3.0)


@pytest.mark.parametrize("maxiter", [1, 2, 5])
def test_cg_steps_match_scipy(maxiter):
    """Each of CG's first steps (the traced step, and the last one without a next direction)
    against scipy's, step for step."""
    import scipy.sparse.linalg as sla
    rng = np.random.default_rng(7)
    R = sp.random(30, 30, density=0.2, format="csr", random_state=4)
    As = (R @ R.T + 3 * sp.eye(30)).tocsr()
    b = rng.random(30)
    want, winfo = sla.cg(As, b, rtol=0.0, atol=0.0, maxiter=maxiter)
    got, info = ls.linalg.cg(ls.asarray(As), b, rtol=0.0, atol=0.0, maxiter=maxiter)
    assert info == winfo == maxiter
    np.testing.assert_allclose(_dense(got), want, rtol=1e-10, atol=1e-12)


def test_a_reduction_of_an_argument_stays_lazy_while_traced():
    """``x.sum()`` of a concrete array is a NumPy scalar, but inside a traced function it stands
    for later calls' values: each call divides by its own argument's sum."""
    f = ls.jit(lambda x: x / x.sum() + x.max())
    for seed in range(3):
        v = np.random.default_rng(seed).random(6) + 0.1
        np.testing.assert_allclose(_dense(f(ls.asarray(v))), v / v.sum() + v.max())
    assert isinstance(ls.asarray(np.ones(3)).sum(), np.float64)  # (outside a trace: a scalar)
