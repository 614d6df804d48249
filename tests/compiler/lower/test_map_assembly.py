"""Assembly mode "map" (compiler/plan/workspace.py ``map_access``): a statement without a sum whose one
sparse operand's structure is the result's (``2.5 * A``, ``abs(A)``, ``A * D``) computes a value
per stored entry, copies the structure, and squeezes out computed zeros only when it counted one.
Oracle: dense NumPy on the same values, computed zeros dropped, as every lazysparse result."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import lazysparse as ls
from lazysparse.compiler.pipeline import kernel_log


def modes(fn):
    """The result of ``fn()`` (a lazy array), materialized, and its kernels' assembly modes."""
    with kernel_log() as log:
        r = fn().materialize()
    return r, [e[0].mode for e in log if isinstance(e, tuple)]


def matrix(rng, shape, density, dtype, fmt, idx, zeros=0.0):
    """A scipy matrix with some explicit zeros stored (``zeros``: their share of the entries)."""
    m = sp.random(*shape, density=density, format="coo", random_state=rng,
                  data_rvs=lambda n: rng.uniform(-2, 2, n))
    data = m.data.astype(dtype) if dtype != np.complex128 else m.data * (1 + 0.5j)
    data[rng.random(data.shape[0]) < zeros] = 0
    out = sp.coo_matrix((data, (m.row, m.col)), shape=shape).asformat(fmt)
    out.indices, out.indptr = out.indices.astype(idx), out.indptr.astype(idx)
    return out


def expect(fdense, A):
    """The oracle: ``fdense`` of A's dense values at A's stored entries, zeros dropped."""
    D = A.toarray()
    mask = np.zeros(D.shape, bool)
    coo = A.tocoo()
    mask[coo.row, coo.col] = True
    want = np.where(mask, fdense(D), 0)
    return want, int(np.count_nonzero(want))


OPS = {
    "2.5 * A": (lambda A, x: 2.5 * A, lambda D, x: 2.5 * D),
    "abs": (lambda A, x: abs(A), lambda D, x: np.abs(D)),
    "neg": (lambda A, x: -A, lambda D, x: -D),
    "sin": (lambda A, x: np.sin(A), lambda D, x: np.sin(D)),  # a function of f(0) = 0
    "A * row": (lambda A, x: A * x[None, :], lambda D, x: D * x[None, :]),  # coordinates read
}


@settings(max_examples=40)
@given(seed=st.integers(0, 2**31 - 1), rows=st.integers(0, 30), cols=st.integers(0, 30),
       density=st.sampled_from([0.0, 0.05, 0.3, 1.0]), zeros=st.sampled_from([0.0, 0.3]),
       dtype=st.sampled_from([np.float64, np.float32, np.int64, np.complex128]),
       fmt=st.sampled_from(["csr", "csc"]), idx=st.sampled_from([np.int32, np.int64]),
       op=st.sampled_from(sorted(OPS)), threads=st.sampled_from([1, 2]))
def test_map_against_numpy(seed, rows, cols, density, zeros, dtype, fmt, idx, op, threads):
    # (the suite runs every parallel loop on the threads asked for: LAZYSPARSE_PAR_MIN_WORK=0)
    ls.set_num_threads(threads)
    try:
        _map_case(seed, rows, cols, density, zeros, dtype, fmt, idx, op)
    finally:
        ls.set_num_threads(1)


def _map_case(seed, rows, cols, density, zeros, dtype, fmt, idx, op):
    rng = np.random.default_rng(seed)
    A = matrix(rng, (rows, cols), density, dtype, fmt, idx, zeros)
    x = rng.uniform(-1, 1, cols)
    before = (A.data.copy(), A.indices.copy(), A.indptr.copy())
    f, fd = OPS[op]
    r, ms = modes(lambda: f(ls.asarray(A), x))
    want, nnz = expect(lambda D: fd(D, x), A)
    got = r.todense()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    if r.format.is_sparse:
        assert r.nnz == nnz  # computed and stored zeros are not kept
        st_ = r.storage
        for a in st_.pos + st_.crd + [st_.vals]:
            if a is not None:  # the structure is copied, never shared with the input
                assert not any(np.shares_memory(a, b) for b in (A.data, A.indices, A.indptr))
    assert ms == ["map"], ms
    for b, a in zip(before, (A.data, A.indices, A.indptr)):
        np.testing.assert_array_equal(a, b)


def test_map_is_chosen_only_for_one_sparse_operand_in_its_own_structure():
    A = ls.asarray(sp.random(20, 15, density=0.2, format="csr", random_state=1))
    B = ls.asarray(sp.random(20, 15, density=0.2, format="csr", random_state=2))
    D = np.random.default_rng(0).random((20, 15))
    assert modes(lambda: A * 3.0)[1] == ["map"]
    assert modes(lambda: A * D)[1] == ["map"]  # a dense operand: A's pattern
    assert modes(lambda: A * B)[1] != ["map"]  # two sparse operands
    assert modes(lambda: A + 1.0)[1] == ["dense"]  # not A's pattern
    r, ms = modes(lambda: A * 0.0)  # empty: the planner decides f(0) on the 0-d value
    assert r.nnz == 0
    r, ms = modes(lambda: A.T * 2.0)  # a relabelled operand: the result mirrors it
    np.testing.assert_allclose(r.todense(), 2.0 * A.todense().T)


def test_map_keeps_nan_and_drops_underflow():
    A = sp.csr_matrix(np.array([[1e-320, np.nan, 0.0], [2.0, 0.0, 1e-310]]))
    r, ms = modes(lambda: ls.asarray(A) * 1e-10)
    assert ms == ["map"]
    want = A.toarray() * 1e-10
    # 1e-320 and 1e-310 underflow to zero and are dropped; NaN stays stored
    assert r.nnz == int(np.count_nonzero(want))
    np.testing.assert_array_equal(np.isnan(r.todense()), np.isnan(want))
    np.testing.assert_array_equal(np.nan_to_num(r.todense()), np.nan_to_num(want))


def test_map_keeps_every_entry_when_none_is_zero():
    A0 = sp.random(300, 200, density=0.05, format="csr", random_state=3)
    A0.data += 1.0  # no zero anywhere
    r, ms = modes(lambda: 2.0 * ls.asarray(A0))
    assert ms == ["map"] and r.nnz == A0.nnz
    S = r.to_scipy()
    np.testing.assert_array_equal(S.indptr, A0.indptr)
    np.testing.assert_array_equal(S.indices, A0.indices)
    np.testing.assert_array_equal(S.data, 2.0 * A0.data)


@pytest.mark.parametrize("threads", [1, 2])
def test_map_in_a_program(threads):
    # a map inside a planned program (a DAG of several operations) runs the same mode
    ls.set_num_threads(threads)
    try:
        A0 = sp.random(40, 30, density=0.2, format="csr", random_state=4)
        x = np.random.default_rng(1).random(30)
        A = ls.asarray(A0)
        out = ((abs(A) * 2.0) @ x).materialize().todense()
        np.testing.assert_allclose(out, (abs(A0) * 2.0) @ x)
    finally:
        ls.set_num_threads(1)
