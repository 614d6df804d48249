"""Intersections of two sorted segments of very different lengths (compiler/lower/coiteration.py
``emit_search``): the short one drives and each of its coordinates is searched for in the long
one, galloping. Chosen at run time, per pair of segments, so every kernel keeps its merge (or
its located probe) for segments of similar length. Oracle: dense NumPy."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.lower.lowering import Lowerer
from oracle import _check_canonical, _modes

RATIO = max(Lowerer.SEARCH_RATIO, 8)  # sizes that make one segment RATIO times another


def _rows(m, n, lengths, seed, index_dtype=np.int32, lo=0, dtype=np.float64):
    """CSR with row r holding lengths[r] distinct sorted columns in [lo, n), small integer
    values (exact products and sums)."""
    rng = np.random.default_rng(seed)
    rows, cols = [], []
    for r, k in enumerate(lengths):
        c = rng.choice(np.arange(lo, n), size=min(k, n - lo), replace=False)
        rows += [r] * len(c)
        cols += list(c)
    vals = (rng.integers(1, 5, len(rows)) * rng.choice([-1, 1], len(rows))).astype(dtype)
    M = sp.csr_matrix((vals, (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))), shape=(m, n))
    M.sort_indices()
    M.indices, M.indptr = M.indices.astype(index_dtype), M.indptr.astype(index_dtype)
    return M


def _skewed(m, n, seed, long_len, index_dtype=np.int32):
    """Rows alternating long (long_len entries) and short (0 to 3): every ratio the choice can
    meet, long against short, short against long, similar against similar."""
    return _rows(m, n, [long_len if (r + seed) % 3 == 0 else (r * 5 + seed) % 4 for r in range(m)], seed,
                 index_dtype)


@pytest.mark.parametrize("idx", [np.int32, np.int64])
def test_elementwise_products_of_skewed_rows(idx):
    n = 8 * RATIO
    A, B = _skewed(24, n, 1, 5 * RATIO, idx), _skewed(24, n, 2, 5 * RATIO, idx)
    a, b = ls.asarray(A), ls.asarray(B)
    assert "ls_gallop" in ls.explain(a * b)
    out = (a * b).materialize()
    np.testing.assert_array_equal(out.todense(), A.toarray() * B.toarray())
    _check_canonical(out.storage, out.shape)


@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_masked_products_whose_mask_rows_are_short(idx, dtype):
    # B's rows hold hundreds of entries, the mask's a few: the mask's row drives, B's is searched
    n = 8 * RATIO
    A = _rows(30, 12, [(r % 4) for r in range(30)], 3, idx, dtype=dtype)
    B = _rows(12, n, [5 * RATIO if r % 2 else r for r in range(12)], 4, idx, dtype=dtype)
    M = _rows(30, n, [(r % 5) for r in range(30)], 5, idx, dtype=dtype)
    a, b, m = ls.asarray(A), ls.asarray(B), ls.asarray(M)
    assert "ls_gallop" in ls.explain(m * (a @ b))
    out, modes = _modes(lambda: (m * (a @ b)).materialize())
    assert modes == ["mask"]
    want = M.toarray() * (A.toarray() @ B.toarray())
    np.testing.assert_array_equal(out.todense(), want)
    _check_canonical(out.storage, out.shape)
    # the search reaches the same products as the probe: one multiply-add per product on M
    n_ops = ls.opcount(m * (a @ b))
    hits = int((((A != 0).astype(int) @ (B != 0).astype(int)).toarray() * (M.toarray() != 0)).sum())
    assert n_ops["add"] == hits and n_ops["mul"] == 2 * hits


def test_searches_that_run_off_the_end_or_find_nothing():
    # the short row's coordinates all beyond the long row's last one, all before its first, and
    # falling in its gaps
    n = 4 * RATIO + 40
    longrow = np.arange(10, 10 + 2 * RATIO * 2, 2)  # even columns
    cases = [np.array([n - 3, n - 2, n - 1]), np.array([0, 1, 2]), longrow[[3, 7, 11]] + 1,
             longrow[[0, len(longrow) - 1]], np.array([], dtype=np.int64)]
    for short in cases:
        A = sp.csr_matrix((np.ones(len(longrow)), (np.zeros(len(longrow), dtype=np.int64), longrow)), shape=(1, n))
        B = sp.csr_matrix((np.full(len(short), 2.0), (np.zeros(len(short), dtype=np.int64), short)), shape=(1, n))
        for x, y in ((A, B), (B, A)):
            out = (ls.asarray(x) * ls.asarray(y)).materialize()
            np.testing.assert_array_equal(out.todense(), x.toarray() * y.toarray())


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 300), st.lists(st.integers(0, 300), min_size=1, max_size=12),
       st.lists(st.integers(0, 4), min_size=1, max_size=12), st.integers(0, 10**6),
       st.sampled_from(["csr", "csc", "coo"]))
def test_products_of_any_lengths_match_numpy(m, n, long_lens, short_lens, seed, fmt):
    A = _rows(m, n, [long_lens[r % len(long_lens)] for r in range(m)], seed)
    B = _rows(m, n, [short_lens[r % len(short_lens)] for r in range(m)], seed + 1)
    a, b = ls.asarray(A.asformat(fmt)), ls.asarray(B.asformat(fmt))
    for x, y, want in ((a, b, A.toarray() * B.toarray()), (b, a, B.toarray() * A.toarray())):
        np.testing.assert_array_equal((x * y).materialize().todense(), want)
    # and as a mask of a product, both ways round
    K = _rows(n, n, [(r * 7 + seed) % 3 for r in range(n)], seed + 2)
    k = ls.asarray(K)
    np.testing.assert_array_equal((a * (b @ k)).materialize().todense(),
                                  A.toarray() * (B.toarray() @ K.toarray()))
