"""The association pass (compiler/plan/associate.py): chains of sums of products run in the cheapest
estimated order, checked by executed counts (``ls.opcount``) and against dense NumPy."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.fused_pipeline import PASSES, passes

WRITTEN = PASSES - {"association"}


def _sp(m, n, density, seed, fmt="csr"):
    A = sp.random(m, n, density=density, format="csr", random_state=seed)
    A.data += 0.5
    return ls.asarray(A).asformat(fmt) if fmt != "csr" else ls.asarray(A), A.toarray()


def test_sparse_chain_times_a_vector_runs_two_products_not_a_sparse_product():
    (A, Ad), (B, Bd) = _sp(60, 50, 0.1, 1), _sp(50, 40, 0.1, 2)
    x = np.random.default_rng(0).random(40)
    expr = (A @ B) @ ls.asarray(x)
    n = ls.opcount(expr, names={"A": A, "B": B})
    assert n["mul"] == np.count_nonzero(Ad) + np.count_nonzero(Bd)  # A @ (B @ x)
    assert n["loads"]["A"] == np.count_nonzero(Ad) and n["kernels"] == 2
    with passes(*WRITTEN):
        assert ls.opcount(expr)["mul"] > n["mul"]  # the sparse product, as written
    np.testing.assert_allclose(expr.materialize().todense(), (Ad @ Bd) @ x, rtol=1e-12)


def test_the_written_order_stays_when_it_is_the_cheaper_one():
    (A, Ad), = [_sp(40, 30, 0.1, 3)]
    rng = np.random.default_rng(1)
    X, W = rng.random((30, 4)), rng.random((4, 16))  # H = 4 < J = 16: (A @ X) @ W is cheaper
    expr = (A @ ls.asarray(X)) @ ls.asarray(W)
    n = ls.opcount(expr)
    assert n["mul"] == np.count_nonzero(Ad) * 4 + 40 * 4 * 16 and n["kernels"] == 1
    np.testing.assert_allclose(expr.materialize().todense(), (Ad @ X) @ W, rtol=1e-12)


def test_near_ties_keep_the_written_order():
    rng = np.random.default_rng(2)
    Bn, Cn, Dn = (rng.random((6, 6)) for _ in range(3))
    B, C, D = ls.asarray(Bn), ls.asarray(Cn), ls.asarray(Dn)
    with passes(*WRITTEN):
        written = ls.opcount((B @ C) @ D)
    n = ls.opcount((B @ C) @ D)
    assert n == written and n["mul"] == 2 * 6 ** 3  # equal costs: the user's rounding is kept
    np.testing.assert_allclose(((B @ C) @ D).materialize().todense(), (Bn @ Cn) @ Dn, rtol=1e-12)


def test_a_temporary_read_twice_is_not_flattened():
    (A, Ad), = [_sp(30, 30, 0.2, 4)]
    rng = np.random.default_rng(3)
    X, W, V = rng.random((30, 8)), rng.random((8, 2)), rng.random((8, 2))
    T = A @ ls.asarray(X)
    expr = T @ ls.asarray(W) + T @ ls.asarray(V)  # T is computed once, for both readers
    n = ls.opcount(expr)
    with passes(*WRITTEN):
        assert ls.opcount(expr)["mul"] == n["mul"] == np.count_nonzero(Ad) * 8 + 2 * 30 * 8 * 2
    np.testing.assert_allclose(expr.materialize().todense(), (Ad @ X) @ W + (Ad @ X) @ V, rtol=1e-12)


def test_a_single_einsum_keeps_its_own_split():
    rng = np.random.default_rng(4)
    (A, Ad), = [_sp(20, 15, 0.2, 5)]
    X, W = rng.random((15, 3)), rng.random((3, 7))
    expr = ls.einsum("ik,kh,hj->ij", A, X, W)
    with passes(*WRITTEN):
        written = ls.opcount(expr)
    assert ls.opcount(expr) == written
    np.testing.assert_allclose(expr.materialize().todense(), Ad @ X @ W, rtol=1e-12)


shapes = st.integers(1, 7)


def test_an_inlined_sum_gets_a_name_no_other_operation_uses():
    """(2x3) @ (3x1) @ (1x1) @ v: association computes the last two first, inlining puts that
    small sum into the last product; its fresh index once reused the first product's ``m1``
    (extent 3) in the same fused kernel, reading the length-1 operands out of bounds."""
    A = np.arange(1, 7).reshape(2, 3).astype(np.int64)
    B, C, v = np.array([[2], [3], [4]]), np.array([[5]]), np.array([3])
    a, b, c, w = (ls.asarray(x) for x in (A, B, C, v))
    for fusion in ("auto", "max", "none"):
        for _ in range(3):
            np.testing.assert_array_equal((((a @ b) @ c) @ w).materialize(fusion=fusion).todense(),
                                          A @ B @ C @ v)


@settings(max_examples=40, deadline=None)
@given(dims=st.lists(shapes, min_size=3, max_size=5), dens=st.lists(st.sampled_from([0.0, 0.2, 1.0]), min_size=4,
       max_size=4), fmt=st.sampled_from(["csr", "csc", "coo"]), seed=st.integers(0, 99),
       dtype=st.sampled_from([np.float64, np.int64]), vector=st.booleans())
def test_chains_match_numpy(dims, dens, fmt, seed, dtype, vector):
    """Chains of two to four products over sparse (any format, empty) and dense operands, with
    a vector at the end or not: every order the pass picks gives NumPy's values."""
    rng = np.random.default_rng(seed)
    ops, mats = [], []
    for q in range(len(dims) - 1):
        m, n = dims[q], dims[q + 1]
        if vector and q == len(dims) - 2:
            d = rng.integers(-3, 4, m).astype(dtype)
            ops.append(ls.asarray(d))
            mats.append(d)
            break
        M = sp.random(m, n, density=dens[q], format="csr", random_state=seed + q)
        M.data = np.round(M.data * 10).astype(dtype) + 1
        M = M.astype(dtype)
        if dens[q] == 1.0:
            d = M.toarray()
            ops.append(ls.asarray(d))
        else:
            ops.append(ls.asarray(M).asformat(fmt))
            d = M.toarray()
        mats.append(d)
    expr, want = ops[0], mats[0]
    for o, d in zip(ops[1:], mats[1:]):
        expr, want = expr @ o, want @ d
    for fusion in ("auto", "max", "none"):
        got = expr.materialize(fusion=fusion).todense()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
        assert got.dtype == want.dtype


def test_explain_shows_the_order_computed():
    (A, Ad), = [_sp(40, 30, 0.1, 6)]
    rng = np.random.default_rng(5)
    X, W = ls.asarray(rng.random((30, 6))), ls.asarray(rng.random((6, 4)))
    text = ls.explain((A @ X) @ W)
    assert "association: the chain runs in a cheaper order" in text
    assert text.count("as written:") == 2 and text.count("computed:") == 2
    with passes(*WRITTEN):
        assert "association" not in ls.explain((A @ X) @ W)
    assert "association" not in ls.explain((A @ X) @ W, fusion="max")
    W16 = ls.asarray(rng.random((6, 16)))
    assert "association" not in ls.explain((A @ X) @ W16)  # written order is the cheaper one


def test_explain_of_a_computed_chain():
    """explain() of an array already materialised describes its kernel again (it raised a
    KeyError: a computed node has no DAG left for the association pass to reorder)."""
    (A, Ad), = [_sp(40, 30, 0.1, 7)]
    rng = np.random.default_rng(8)
    X, W = rng.random((30, 6)), rng.random((6, 4))
    e = (A @ ls.asarray(X)) @ ls.asarray(W)
    np.testing.assert_allclose(e.materialize().todense(), Ad @ X @ W, rtol=1e-12)
    text = ls.explain(e)
    assert "lazysparse plan" in text and "association" not in text
