"""Rows visited in order of length (runtime/row_order.py): the rule that decides it against a
direct count of the entropy it reads, the order itself, and the fused kernels that take it giving
NumPy's values, on one thread and two, with the order really passed to the kernel."""
from __future__ import annotations

import contextlib
import math
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.pipeline import kernel_log
from lazysparse.runtime import row_order


def _entropy(items):
    n = len(items)
    return -sum(c / n * math.log2(c / n) for c in Counter(items).values())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 100), max_size=300))
def test_surprise_is_the_entropy_of_a_length_given_the_last(lengths):
    """H(L_i | L_{i-1}) = H(L_{i-1}, L_i) - H(L_{i-1}), lengths past CAP counted as CAP."""
    q = [min(x, row_order.CAP) for x in lengths]
    want = _entropy(list(zip(q[:-1], q[1:]))) - _entropy(q[:-1]) if len(q) > 1 else 0.0
    assert row_order.surprise(np.array(lengths, dtype=np.int64)) == pytest.approx(want, abs=1e-9)


def test_the_order_pays_on_many_short_rows_of_unpredictable_length():
    rng = np.random.default_rng(0)
    n = row_order.MIN_ROWS
    assert row_order.pays(rng.integers(1, 12, n))           # a road graph's rows
    assert not row_order.pays(np.full(n, 6))                 # a stencil's: predicted
    assert not row_order.pays(np.tile([3, 9, 5], n // 3 + 1))  # a period the predictor learns
    assert not row_order.pays(rng.integers(100, 300, n))     # long rows: the exit is a sliver
    assert not row_order.pays(rng.integers(1, 12, n - 1))    # few rows: learnt whole
    assert not row_order.pays(np.zeros(n, dtype=np.int64))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 80), max_size=2000), st.sampled_from([np.int32, np.int64]))
def test_by_length_sorts_each_block_stably(lengths, dtype):
    L = np.array(lengths, dtype=np.int64)
    order = row_order.by_length(L, dtype)
    assert order.dtype == dtype and sorted(order.tolist()) == list(range(len(L)))
    for lo in range(0, len(L), row_order.BLOCK):
        block = order[lo:lo + row_order.BLOCK].tolist()
        assert sorted(block) == list(range(lo, min(len(L), lo + row_order.BLOCK)))
        keys = [(min(lengths[i], row_order.CAP), i) for i in block]
        assert keys == sorted(keys)  # by capped length, ties in stored order


@contextlib.contextmanager
def _always_ordered(block):
    """Every compressed level is visited in order of length, in blocks of ``block`` rows."""
    saved = row_order.MIN_ROWS, row_order.MIN_SURPRISE, row_order.BLOCK
    row_order.MIN_ROWS, row_order.MIN_SURPRISE, row_order.BLOCK = 0, -1.0, block
    try:
        yield
    finally:
        row_order.MIN_ROWS, row_order.MIN_SURPRISE, row_order.BLOCK = saved


def _passed_order(log):
    """Whether each fused kernel in ``log`` that has a row order slot was passed one (the
    argument array its call put back, ``_Fixed.pool``)."""
    from lazysparse.runtime.kernel_cache import ffi
    got = []
    for run in log:
        slots = [k for k, desc in enumerate(run.abi.p) if desc[2:3] == ("order",)] if hasattr(run, "abi") else []
        if slots:
            p = run.fixed.pool[-1][0]
            got.append(all(p[k] != ffi.NULL for k in slots))
    return got


def _matrix(rng, m, n, dtype, wide):
    lengths = rng.integers(0, min(n, 9) + 1, m)
    rows = np.repeat(np.arange(m), lengths)
    cols = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lengths]) if m else []
    vals = rng.integers(1, 6, rows.shape[0]).astype(dtype)
    S = sp.csr_array((vals, (rows, np.asarray(cols, dtype=np.int64))), shape=(m, n))
    if wide:
        S = sp.csr_array((S.data, S.indices.astype(np.int64), S.indptr.astype(np.int64)), shape=S.shape)
    return S


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), m=st.integers(1, 70), n=st.integers(1, 12),
       dtype=st.sampled_from([np.float64, np.float32, np.int64]), wide=st.booleans(),
       block=st.sampled_from([1, 4, 16, 512]), kind=st.sampled_from(["jacobi", "normalize"]),
       threads=st.sampled_from([1, 2]))
def test_rows_in_order_of_length_give_numpys_values(seed, m, n, dtype, wide, block, kind, threads):
    """A Jacobi step and rows scaled to sum one (a result in A's pattern) through the order: every
    row written once with its own value, whatever the blocks, chunks and threads; the kernel got
    the order."""
    rng = np.random.default_rng(seed)
    S = _matrix(rng, m, n, dtype, wide)
    D = S.toarray()
    before = ls.get_num_threads()
    ls.set_num_threads(threads)
    try:
        with _always_ordered(block):
            A = ls.asarray(S)
            if kind == "jacobi":
                x, b, d = (rng.integers(-3, 4, k).astype(dtype) for k in (n, m, m))
                x0 = np.resize(x, m)
                expr, want = ls.asarray(x0) + ls.asarray(d) * (ls.asarray(b) - A @ ls.asarray(x)), x0 + d * (b - D @ x)
            else:  # (rows scaled to sum to one: a result in A's pattern)
                expr = A / A.sum(axis=1, keepdims=True)
                with np.errstate(invalid="ignore", divide="ignore"):
                    want = np.where(D != 0, D / D.sum(axis=1, keepdims=True), 0.0)
            with kernel_log() as log:
                got = expr.materialize()
    finally:
        ls.set_num_threads(before)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(np.asarray(got.todense()), want, rtol=tol, atol=tol)
    if S.nnz:
        assert _passed_order(log) == [True]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 60), dtype=st.sampled_from([np.float64, np.float32]),
       wide=st.booleans(), block=st.sampled_from([1, 8, 512]))
def test_a_cg_step_through_the_order_gives_numpys_values(seed, n, dtype, wide, block):
    """CG's step as one kernel of several loops on one thread (``ls.compute`` of six results):
    the loop of ``A @ p`` with ``p . A p`` visits its rows through the order, its dot product
    summed in that order."""
    rng = np.random.default_rng(seed)
    S = _matrix(rng, n, n, dtype, wide)
    D = S.toarray()
    x0, r0, p0, q0 = (rng.random(n).astype(dtype) for _ in range(4))
    alpha, rz = dtype(0.25), dtype(2.0)
    with _always_ordered(block):
        A = ls.asarray(S)
        lp = ls.asarray(p0)
        r = ls.asarray(r0) - alpha * ls.asarray(q0)
        x = ls.asarray(x0) + alpha * lp
        rr = (r * r).sum()
        p = r + (rr / rz) * lp
        Ap = A @ p
        with kernel_log() as log:
            got = ls.compute(x, r, rr, p, Ap, (p * Ap).sum())
    r1 = r0 - alpha * q0
    p1 = r1 + (r1 @ r1 / rz) * p0
    want = (x0 + alpha * p0, r1, r1 @ r1, p1, D @ p1, p1 @ (D @ p1))
    tol = 1e-3 if dtype == np.float32 else 1e-10
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g.todense()), w, rtol=tol, atol=tol)
    if S.nnz:
        assert _passed_order(log) == [True]


def test_a_matrix_it_does_not_pay_for_gets_no_order():
    """Rows of one length: the kernel is passed no order (NULL), and still gives scipy's values."""
    n = row_order.MIN_ROWS + 10
    S = sp.diags([1.0, 2.0, 3.0], [-1, 0, 1], shape=(n, n), format="csr")
    x = np.arange(n, dtype=float)
    with kernel_log() as log:
        got = (ls.asarray(x) + 0.5 * (ls.asarray(S) @ ls.asarray(x))).materialize()
    np.testing.assert_allclose(got.todense(), x + 0.5 * (S @ x), rtol=1e-12)
    assert _passed_order(log) == [False]


def test_explain_says_which_rows_go_in_order_of_length():
    """A Jacobi step's kernel through an order (forced), and the same kernel on rows too few
    for the order to pay. (Each explain is made outside the assert: pytest's rewritten assert
    keeps the subexpressions, and a lazy node something holds is computed first.)"""
    rng = np.random.default_rng(1)
    S = _matrix(rng, 60, 60, np.float64, False)
    x, b, d = (ls.asarray(rng.random(60)) for _ in range(3))
    with _always_ordered(512):
        ordered = ls.explain(x + d * (b - ls.asarray(S) @ x), code=False)
    stored = ls.explain(x + d * (b - ls.asarray(S) @ x), code=False)
    assert "in order of length" in ordered and "in stored order" in stored


def test_two_wraps_of_one_matrix_share_its_order():
    """The order is worked out once per position array: a loop that wraps its scipy matrix
    anew each step does not sort its rows each step."""
    rng = np.random.default_rng(3)
    n = row_order.MIN_ROWS + 50
    lengths = rng.integers(1, 12, n)
    cols = np.concatenate([np.arange(k) for k in lengths]).astype(np.int32)  # (sorted, distinct)
    S = sp.csr_array((np.ones(lengths.sum()), cols, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)),
                     shape=(n, n))
    a, b = ls.asarray(S)._storage, ls.asarray(S)._storage
    assert a is not b
    first = row_order.order_of(a, 1)
    assert first is not None and row_order.order_of(b, 1) is first
    np.testing.assert_array_equal(first, row_order.by_length(lengths, np.int32))
