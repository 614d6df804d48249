"""CSR <-> CSC conversion (a transposition) assembled in two passes over the operand: rows
counted, then every entry put in place (compiler/lower/results.py, the transposition counts), with no
(coordinates, value) triples in between. Values and structure against scipy / NumPy over
dtypes, index widths and awkward shapes."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as hst

import lazysparse as ls
from lazysparse.compiler.pipeline import kernel_log


def _matrix(m, n, density, dtype, index, seed, empty_rows=()):
    rng = np.random.default_rng(seed)
    D = np.where(rng.random((m, n)) < density, rng.integers(1, 9, (m, n)), 0).astype(dtype)
    for r in empty_rows:
        if r < m:
            D[r, :] = 0
    A = sp.csr_array(D)
    A.indices, A.indptr = A.indices.astype(index), A.indptr.astype(index)
    return A, D


@settings(max_examples=30)
@given(m=hst.integers(0, 30), n=hst.integers(0, 30), density=hst.floats(0, 1),
       dtype=hst.sampled_from([np.float64, np.float32, np.int64, np.complex128, np.bool_]),
       index=hst.sampled_from([np.int32, np.int64]), seed=hst.integers(0, 2**16),
       threads=hst.sampled_from([1, 2, 3]))
def test_transpositions_match_numpy(m, n, density, dtype, index, seed, threads):
    # (threads: each counts and places its own rows' entries, ranges of equal entries; the
    # suite runs every parallel loop on the threads asked for, LAZYSPARSE_PAR_MIN_WORK=0)
    ls.set_num_threads(threads)
    try:
        _transpositions(m, n, density, dtype, index, seed)
    finally:
        ls.set_num_threads(1)


def _transpositions(m, n, density, dtype, index, seed):
    A, D = _matrix(m, n, density, dtype, index, seed, empty_rows=(0, m // 2))
    lA = ls.asarray(A)
    for got, want, fmt in ((lA.asformat("csc"), D, ls.csc), (lA.T.asformat("csr"), D.T, ls.csr),
                           (lA.T.asformat("csr").asformat("csc"), D.T, ls.csc)):
        assert got.format == fmt and got.shape == want.shape
        np.testing.assert_array_equal(got.todense(), want)
        st = got.storage
        pos, crd = st.pos[1], st.crd[1]
        assert pos[0] == 0 and pos[-1] == crd.shape[0] == st.vals.shape[0] == np.count_nonzero(want)
        for r in range(st.shape[0] if fmt == ls.csr else st.shape[1]):
            assert np.all(np.diff(crd[pos[r]:pos[r + 1]]) > 0)  # sorted, no duplicates


@pytest.mark.parametrize("threads", [1, 2])
def test_explicit_zeros_are_dropped_as_before(threads):
    A = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0], [4, 0, 0], [0, 0, 5]]))
    A.data[[1, 3]] = 0.0  # explicit zeros, in both threads' rows
    ls.set_num_threads(threads)
    try:
        got = ls.asarray(A).asformat("csc")
    finally:
        ls.set_num_threads(1)
    assert got.nnz == 3
    np.testing.assert_array_equal(got.todense(), A.toarray())
    S = got.to_scipy()
    np.testing.assert_array_equal(S.indptr, [0, 1, 2, 3])


def test_the_transposition_builds_no_triples():
    A, _ = _matrix(40, 30, 0.2, np.float64, np.int32, 1)
    with kernel_log() as log:
        ls.asarray(A).asformat("csc")
    (spec, runner), = log
    assert spec.mode == "sort"
    # counted by a flat walk of the coordinates, placed through per-thread cursors
    assert "ht[x" in runner.source and "tc0 = (int64_t *)ls_malloc" not in runner.source


@pytest.mark.parametrize("shape", [(0, 0), (0, 4), (4, 0), (1, 1)])
def test_degenerate_shapes(shape):
    A = sp.csr_array(np.ones(shape))
    got = ls.asarray(A).T.asformat("csr")
    np.testing.assert_array_equal(got.todense(), np.ones(shape).T)
