"""The vector loop of innermost segment sums (compiler/lower/simd.py ``_loop``) at every segment length.

The loop takes a segment's first ``W`` entries (8 doubles, 16 floats) as one masked step, then,
when more remain, ``4 W`` at a time, ``W`` at a time and a masked tail. Each part has its own
bounds, so lengths on both sides of W, 2 W, 4 W and 5 W are where an off-by-one would show.
The tuner is off here, so the vector loop runs wherever the build has it (it reports that);
NumPy on the dense matrix is the oracle.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.runtime import tuning

# around W = 8 and W = 16, and the unrolled step's 4 W
EDGES = [0, 1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 39, 40, 41, 47, 63, 64, 65, 80, 81]


def _csr(lengths, cols, seed, dtype, index_dtype):
    rng = np.random.default_rng(seed)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(index_dtype)
    indices = np.concatenate([np.sort(rng.choice(cols, n, replace=False)) for n in lengths]
                             + [np.zeros(0, np.int64)]).astype(index_dtype)
    data = rng.standard_normal(int(indptr[-1])).astype(dtype)
    data[data == 0] = 1  # stored entries stay nonzero: max/min over a row see them
    return sp.csr_matrix((data, indices, indptr), shape=(len(lengths), cols))


@pytest.fixture
def vector_loops(monkeypatch):
    """The static choice (the vector loop where built) on every call."""
    monkeypatch.setattr(tuning, "ENABLED", False)


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.sampled_from(EDGES), min_size=1, max_size=12),
       dtype=st.sampled_from([np.float64, np.float32]),
       index_dtype=st.sampled_from([np.int32, np.int64]),
       seed=st.integers(0, 2**16))
def test_row_sums_at_every_length(lengths, dtype, index_dtype, seed):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tuning, "ENABLED", False)
        A = _csr(lengths, 90, seed, dtype, index_dtype)
        D = A.toarray()
        x = np.random.default_rng(seed + 1).standard_normal(90).astype(dtype)
        lA = ls.asarray(A)
        tol = 2e-5 if dtype == np.float32 else 1e-12
        got = (lA @ x).todense()
        np.testing.assert_allclose(got, D @ x, rtol=tol, atol=tol)
        np.testing.assert_allclose(lA.sum(axis=1).todense(), D.sum(axis=1), rtol=tol, atol=tol)
        # a scaled, shifted product: broadcasts and a negation inside the vector expression
        got = (lA @ (2 * x)).todense() - (ls.asarray(A) @ -x).todense()
        np.testing.assert_allclose(got, 3 * (D @ x), rtol=4 * tol, atol=4 * tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_every_length_in_one_matrix(dtype, index_dtype, vector_loops):
    A = _csr(EDGES * 2, 90, 3, dtype, index_dtype)
    D = A.toarray()
    x = np.random.default_rng(4).standard_normal(90).astype(dtype)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    got = (ls.asarray(A) @ x).todense()
    np.testing.assert_allclose(got, D @ x, rtol=tol, atol=tol)
    np.testing.assert_allclose(ls.asarray(A).sum(axis=1).todense(), D.sum(axis=1), rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["max", "min"])
def test_row_max_min_with_nan_at_every_length(op, vector_loops):
    """max/min: masked-off lanes keep the accumulator, and a NaN in any lane of any step (the
    masked first one included) gives NaN, as NumPy's."""
    lengths = EDGES
    A = _csr(lengths, 90, 5, np.float64, np.int32)
    starts = A.indptr[:-1]
    for r, (s, n) in enumerate(zip(starts, lengths)):
        if n and r % 3 == 0:
            A.data[s + (r * 7) % n] = np.nan  # somewhere in the row: first step, loop or tail
    D = A.toarray()
    got = getattr(ls.asarray(A), op)(axis=1).todense()
    want = getattr(D, op)(axis=1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=0, atol=0)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 16, 31, 32, 33, 40, 41])
def test_dense_rows_at_every_length(n, vector_loops):
    D = np.random.default_rng(n).standard_normal((5, n))
    L = ls.asarray(D)
    np.testing.assert_allclose(L.sum(axis=1).todense(), D.sum(axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((L * L).sum(axis=1).todense(), (D * D).sum(axis=1), rtol=1e-12, atol=1e-12)
    if n:
        np.testing.assert_array_equal(L.max(axis=1).todense(), D.max(axis=1))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("variant", [((1, 0),), ((0, 1),), ((0, 0),)])
def test_each_loop_version_is_its_own_nest_and_right(threads, variant):
    """The segment sum's three loops (vector, split, plain) are three loop nests picked once at
    the top (reductions.py ``emit_flag_versions``): the flags appear in the dispatch only, and
    each version, forced on a fresh operand, gives NumPy's row sums and products on rows of
    every length, on one thread and on two (each thread its own run of row chunks first)."""
    before = ls.get_num_threads()
    ls.set_num_threads(threads)
    try:
        lengths = (EDGES * 40)[:700]  # enough entries for two threads (PAR_MIN_WORK)
        A = _csr(lengths, 90, 5, np.float64, np.int32)
        x = np.random.default_rng(6).standard_normal(90)
        lA = ls.asarray(A)
        c = ls.explain(lA @ x)
        c = c[c.index("int32_t ls_kernel"):]
        # six nests (vector, split, plain; each streamed or not: stream_gate), each handing out
        # its row chunks from per-thread runs (owned_chunks)
        assert c.count("#pragma omp parallel num_threads") == 6 and c.count("ls_k = ls_next[8 * ls_w]++;") == 6
        assert c.count("st0_1") == 2  # declared, then tested once
        for flag in ("split0", "vec1"):  # declared, then tested once in each set of nests
            assert c.count(flag) == 3, flag
        for expr, want in ((lambda L: L @ x, A @ x), (lambda L: L.sum(axis=1), A.toarray().sum(axis=1))):
            with ls.compiler.pipeline.kernel_log() as log:
                expr(lA).materialize()
            fresh = ls.asarray(A)
            fresh.storage.stats = {log[-1][1].sites.tag: variant}
            for _ in range(3):
                with ls.compiler.pipeline.kernel_log() as log:
                    got = expr(fresh).todense()
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
                # the forced loop ran: its flags are what the kernel read
                d = log[-1][1]._pool[-1][1]
                (_, _, ks, kv), = log[-1][1].sites.sites
                assert (d[kv], d[ks]) == variant[0] or (variant[0][0] == 1 and d[kv] == 1)
    finally:
        ls.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype, index_dtype", [(np.float64, np.int32), (np.float32, np.int32),
                                                 (np.float64, np.int64)])
@pytest.mark.parametrize("variant", [((1, 0),), ((0, 1),), ((0, 0),)])
def test_streamed_loops_at_every_length(threads, dtype, index_dtype, variant):
    """From ``caches.STREAM_MIN`` bytes of entries (here 0: every operand) the segment sums'
    versions prefetch their values and coordinates a page ahead (``stream_gate``, simd
    ``STREAM_AHEAD``), the last rows' prefetches reaching past the arrays' ends; each loop
    (vector, split, plain) forced on gives NumPy's products and row sums on rows of every
    length, and so does each with the threshold one byte past the entries (not streamed)."""
    from lazysparse.compiler.lower.simd import STREAM_AHEAD
    from lazysparse.runtime import cpu_caches as caches
    A = _csr(EDGES * 2, 90, 9, dtype, index_dtype)
    D = A.toarray()
    x = np.random.default_rng(8).standard_normal(90).astype(dtype)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    size = A.nnz * (np.dtype(dtype).itemsize + np.dtype(index_dtype).itemsize)
    before, saved = ls.get_num_threads(), caches.STREAM_MIN[0]
    ls.set_num_threads(threads)
    try:
        c = ls.explain(ls.asarray(A) @ x)
        assert f"+ {STREAM_AHEAD}), 0, 0);" in c and c.count("st0_1") == 2
        for limit in (0, size, size + 1):
            caches.STREAM_MIN[0] = limit
            for expr, want in ((lambda L: L @ x, D @ x), (lambda L: L.sum(axis=1), D.sum(axis=1))):
                with ls.compiler.pipeline.kernel_log() as log:
                    expr(ls.asarray(A)).materialize()
                fresh = ls.asarray(A)
                fresh.storage.stats = {log[-1][1].sites.tag: variant}
                with ls.compiler.pipeline.kernel_log() as log:
                    got = expr(fresh).todense()
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
                run = log[-1][1]
                d = run._pool[-1][1]
                (_, _, ks, kv), = run.sites.sites
                assert (d[kv], d[ks]) == variant[0] or (variant[0][0] == 1 and d[kv] == 1)
                # the kernel read the threshold of the moment
                assert d[run.abi.d.index(("streammin",))] == limit
    finally:
        ls.set_num_threads(before)
        caches.STREAM_MIN[0] = saved
