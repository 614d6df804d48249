"""Results and temporaries on 64-byte boundaries (runtime/aligned.py).

Kernels that gather whole rows of a dense operand read two cache lines per 64-byte vector when
a row straddles a line (NumPy puts large arrays 16 bytes past a page). Buffers lazysparse
allocates itself start on a line, and the buffer bookkeeping that depends on who else holds an
array (a temporary reused by the next run of a program) sees views of them."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import lazysparse as ls
from lazysparse.runtime import aligned


def _addr(a):
    return np.asarray(a).__array_interface__["data"][0]


def _csr(n, m, density, seed, dtype=np.float64):
    A = sp.random(n, m, density=density, format="csr", random_state=seed, dtype=np.float64)
    A = A.tolil()
    A[3, :] = 0  # an empty row
    return A.tocsr().astype(dtype)


@given(shape=st.lists(st.integers(0, 70), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from([np.float64, np.float32, np.int32, np.int64, np.bool_, np.complex128]),
       zeroed=st.booleans())
@settings(max_examples=60, deadline=None)
def test_buffers_are_placed_on_lines(shape, dtype, zeroed):
    """Every array of rows (two dimensions or more) of at least ``least`` bytes starts on a
    64-byte boundary; every buffer has the asked shape and dtype in C order, owns its memory,
    and ``zeros`` is zero."""
    a = (aligned.zeros if zeroed else aligned.empty)(shape, dtype, 64)
    assert a.shape == shape and a.dtype == np.dtype(dtype) and a.flags.c_contiguous
    assert a.flags.writeable and a.flags.aligned
    if a.nbytes >= 64 and len(shape) >= 2:
        assert _addr(a) % 64 == 0
    if zeroed:
        assert not a.any()
    assert aligned.owns(a) and not aligned.viewed(a)
    a[...] = 1  # the whole buffer is usable
    assert a.all()


def test_owns_and_viewed_tell_views_apart():
    """Only the whole of a buffer made here, or an array NumPy allocated, owns its memory; a
    caller's array viewed through a byte buffer does not, even of the same size and offset."""
    a = aligned.empty((4096, 2), np.float64, 64)
    assert _addr(a) % 64 == 0
    assert aligned.owns(a) and aligned.owns(a.reshape(-1))
    assert not aligned.owns(a[1:]) and not aligned.owns(a[:, 0]) and not aligned.owns(a.T)
    assert not aligned.viewed(a)
    v = a.T
    assert aligned.viewed(a)
    del v
    assert not aligned.viewed(a)
    user = np.empty(10000)
    assert aligned.owns(user) and not aligned.owns(user[2:]) and not aligned.viewed(user)
    raw = np.empty(4096 * 2 * 8 + 64, np.uint8)
    off = -_addr(raw) % 64
    mimic = raw[off:off + 4096 * 2 * 8].view(np.float64).reshape(4096, 2)
    assert not aligned.owns(mimic)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("nt", [1, 2])
def test_kernel_results_start_on_a_line(dtype, nt):
    """SpMM, a dense product, an elementwise sum and a row sum: results that are arrays of rows
    of at least MIN_BYTES (lowered here) are aligned, and all equal NumPy's (the test suite
    poisons result buffers first, so a kernel that skipped an element fails here)."""
    ls.set_num_threads(nt)
    saved, aligned.MIN_BYTES = aligned.MIN_BYTES, 16384
    try:
        rng = np.random.default_rng(1)
        A = _csr(700, 900, 0.02, 2, dtype)
        X = (rng.random((900, 16)) * 8).astype(dtype)
        W = (rng.random((16, 24)) * 8).astype(dtype)
        cases = [(ls.asarray(A) @ ls.asarray(X), A @ X),
                 (ls.asarray(X) @ ls.asarray(W), X @ W),
                 (ls.asarray(X) + ls.asarray(X), X + X),
                 (ls.asarray(A).sum(axis=0), np.asarray(A.sum(axis=0)).ravel())]
        tol = 1e-5 if dtype == np.float32 else 1e-12
        for lazy, want in cases:
            got = np.asarray(lazy.materialize())
            if got.nbytes >= aligned.MIN_BYTES and got.ndim >= 2:
                assert _addr(got) % 64 == 0, lazy
            np.testing.assert_allclose(got, want, rtol=tol)
    finally:
        aligned.MIN_BYTES = saved
        ls.set_num_threads(1)


def test_a_chain_reads_its_aligned_temporary_and_keeps_results():
    """GNN-1, (A @ X) @ W, runs X @ W (2000 x 16, 256 KB) into an aligned temporary that A's
    rows gather, kept for the next run; three runs with other values reuse it and every earlier
    result keeps its values. One more run while a view of a result is held leaves that view's
    values alone."""
    from lazysparse.compiler import fused_pipeline as F
    A = _csr(1500, 2000, 0.01, 4)
    rng = np.random.default_rng(5)
    kept = []
    for _ in range(3):
        X, W = rng.random((2000, 128)), rng.random((128, 16))
        got = ((ls.asarray(A) @ ls.asarray(X)) @ ls.asarray(W)).materialize()
        kept.append((np.asarray(got), A @ X @ W))
    temps = [v for _, plans, _ in F._FAST.values() for e in plans.values() if e[0][0] is None and e[0][3]
             for sc in e[0][3] for v in sc.values()
             if isinstance(v, np.ndarray) and v.shape == (2000, 16)]
    assert temps and all(_addr(v) % 64 == 0 and aligned.owns(v) for v in temps)
    view = kept[-1][0].T
    X, W = rng.random((2000, 128)), rng.random((128, 16))
    np.testing.assert_allclose(np.asarray(((ls.asarray(A) @ ls.asarray(X)) @ ls.asarray(W)).materialize()),
                               A @ X @ W, rtol=1e-12)
    for got, want in kept:
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(view, kept[-1][1].T, rtol=1e-12)


@pytest.mark.parametrize("order", ["C", "F"])
def test_copy_true_gives_an_aligned_private_copy(order):
    """``ls.asarray(x, copy=True)`` of a C-order array is a copy on a line (rows a kernel
    gathers then read whole lines); an F-order one keeps its order. Neither shares memory with
    the caller's array, and writing the caller's array afterwards changes neither."""
    X = np.asarray(np.random.default_rng(6).random((3000, 16)), order=order)
    a = ls.asarray(X, copy=True)
    v = a.storage.vals
    assert not np.shares_memory(v, X)
    np.testing.assert_array_equal(v, X)
    if order == "C":
        assert _addr(v) % 64 == 0 and v.flags.c_contiguous
    else:
        assert v.flags.f_contiguous
    want = X.copy()
    X[...] = -1.0
    np.testing.assert_array_equal(np.asarray(a), want)
    A = _csr(50, 3000, 0.05, 7)
    np.testing.assert_allclose(np.asarray((ls.asarray(A) @ a).materialize()), A @ want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_narrow_rows_are_prefetched_only_when_they_straddle_lines(dtype):
    """SpMM's gathered rows: the versions for rows under Lowerer.PREFETCH_MIN_BYTES prefetch
    behind a per-call test of the operand's placement (``lsx`` flag), wider ones always. The
    values are NumPy's with the operand 16 bytes past a line (NumPy's placement), on a line
    (``copy=True``) and with rows reversed (a negative stride)."""
    from lazysparse.compiler.lower.lowering import Lowerer
    A = _csr(300, 2000, 0.02, 8, dtype)
    Y = np.random.default_rng(9).random((2000, 16)).astype(dtype)
    src = ls.explain(ls.asarray(A) @ ls.asarray(Y))
    lines = [ln for ln in src.splitlines() if "__builtin_prefetch" in ln]
    size = np.dtype(dtype).itemsize
    for width in (16, 32, 64, 128):
        mine = [ln for ln in lines if f"lpf < {width};" in ln]
        assert mine, width
        gated = width * size < Lowerer.PREFETCH_MIN_BYTES
        assert all(("lsx" in ln) == gated for ln in mine), (width, mine)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for nt in (1, 2):
        ls.set_num_threads(nt)
        try:
            for Yv in (Y, ls.asarray(Y, copy=True), Y[::-1]):
                want = A @ (np.asarray(Yv))
                got = np.asarray((ls.asarray(A) @ Yv).materialize())
                np.testing.assert_allclose(got, want, rtol=tol)
        finally:
            ls.set_num_threads(1)


def test_a_sparse_temporary_is_offered_no_buffer_after_its_first_run(monkeypatch):
    """A program whose temporary comes out sparse (A @ B with both sparse, then times a dense
    matrix, run one kernel per operation): from the second run on, no aligned buffer is made
    for it, and every run's values are NumPy's."""
    from lazysparse.compiler.plan.decompose import decompose
    from lazysparse.compiler import fused_pipeline as F
    made = []
    real = aligned.empty

    def counting(shape, dtype, least=None):
        if tuple(np.atleast_1d(shape)) == (600, 600):  # the temporary A @ B
            made.append(shape)
        return real(shape, dtype, least)
    monkeypatch.setattr(aligned, "empty", counting)
    A, B = _csr(600, 700, 0.01, 10), _csr(700, 600, 0.01, 11)
    X = np.random.default_rng(12).random((600, 40))
    pool = []
    for k in range(3):
        prog, _, inputs = decompose([((ls.asarray(A) @ ls.asarray(B)) @ ls.asarray(X))._node])
        got, = F._run_ops(prog, inputs, "test", pool)
        np.testing.assert_allclose(np.asarray(got.vals), (A @ B) @ X, rtol=1e-12)
        if k == 0:
            assert made  # the first run offered a buffer, not knowing the format yet
            first = len(made)
    assert pool and any(v is F._NOT_DENSE for sc in pool for v in sc.values())
    assert len(made) == first  # nothing offered after the first run
