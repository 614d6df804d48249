"""The autoscheduler's choice of nonzero tiles from row-length skew (compiler/plan/skew.py): a single
operation summing the rows of a CSR operand into a dense result runs under ``fuse + pos + split``
tiles on several threads when its longest row holds a large part of a thread's share of the
entries, and under the default row chunks otherwise. Values against dense NumPy either way."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as hst

import lazysparse as ls
from lazysparse.compiler.plan import skew
from lazysparse.compiler.pipeline import kernel_log

TILES = "runs tiles of"


@pytest.fixture
def small(monkeypatch):
    """Tiles for the small inputs of the suite (the product keeps them to 128k entries and up)."""
    monkeypatch.setattr(skew, "MIN_ENTRIES", 0)
    monkeypatch.setattr(skew, "TILE", 16)
    monkeypatch.setattr(skew, "SKEW_TILES", 0.25)  # heavy()'s long row: about 0.4 at 2 threads
    skew.reset()
    yield
    ls.set_num_threads(1)
    skew.reset()


def heavy(m=120, n=90, long_row=7, dtype=np.float64, index=np.int32, seed=0, empty=(3, 50)):
    """A CSR matrix with short rows, some empty ones, and one row of every column."""
    rng = np.random.default_rng(seed)
    D = np.where(rng.random((m, n)) < 0.03, rng.standard_normal((m, n)), 0.0)
    D[long_row, :] = rng.standard_normal(n)
    for r in empty:
        D[r, :] = 0
    A = sp.csr_array(D.astype(dtype))
    A.indices, A.indptr = A.indices.astype(index), A.indptr.astype(index)
    return A, D.astype(dtype)


def _explained(expr):
    with kernel_log():
        return ls.explain(expr)


def _run(expr, threads):
    ls.set_num_threads(threads)
    with kernel_log() as log:
        got = expr.materialize()
    return got.todense(), [e[0].loops for e in log if isinstance(e, tuple)]


@pytest.mark.parametrize("dtype,index", [(np.float64, np.int32), (np.float64, np.int64),
                                         (np.float32, np.int32)])
def test_skewed_spmv_runs_in_tiles_and_matches_numpy(small, dtype, index):
    A, D = heavy(dtype=dtype, index=index)
    x = np.random.default_rng(1).standard_normal(A.shape[1]).astype(dtype)
    lA, lx = ls.asarray(A), ls.asarray(x)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for call in range(3):  # the first call decides eligibility from the default's result
        y, loops = _run(lA @ lx, 2)
        np.testing.assert_allclose(y, D @ x, rtol=tol, atol=tol)
    assert loops and loops[0] is not None and loops[0].tiles is not None
    text = _explained(lA @ lx)
    assert TILES in text and "the autoscheduler" in text
    # one thread: the default, and the same values
    y1, loops1 = _run(lA @ lx, 1)
    assert loops1 == [None]
    np.testing.assert_allclose(y1, D @ x, rtol=tol, atol=tol)
    assert TILES not in ls.explain(lA @ lx)


def test_even_rows_stay_on_the_default(small):
    rng = np.random.default_rng(2)
    A = sp.random(200, 150, density=0.05, format="csr", random_state=3)
    x = rng.random(150)
    lA = ls.asarray(A)
    for _ in range(2):
        y, loops = _run(lA @ x, 2)
        np.testing.assert_allclose(y, A @ x, rtol=1e-12)
    assert loops == [None]


def test_threshold_is_the_longest_row_against_a_threads_share(small, monkeypatch):
    A, D = heavy(m=100, n=60, long_row=0, empty=())
    nnz, longest = A.nnz, int(np.diff(A.indptr).max())
    x = np.ones(60)
    lA = ls.asarray(A)
    _run(lA @ x, 2)  # decides eligibility
    # just above the row's share at 2 threads: the default; at or below it: tiles
    monkeypatch.setattr(skew, "SKEW_TILES", 2 * longest / nnz * 1.01)
    assert _run(lA @ x, 2)[1] == [None]
    monkeypatch.setattr(skew, "SKEW_TILES", 2 * longest / nnz)
    y, loops = _run(lA @ x, 2)
    assert loops[0] is not None
    np.testing.assert_allclose(y, D @ x, rtol=1e-12)
    # three threads: a thread's share is smaller, the same row weighs more
    monkeypatch.setattr(skew, "SKEW_TILES", 2.5 * longest / nnz)
    assert _run(lA @ x, 2)[1] == [None]
    assert _run(lA @ x, 3)[1][0] is not None
    monkeypatch.setattr(skew, "MIN_ENTRIES", nnz + 1)
    assert _run(lA @ x, 3)[1] == [None]


def test_row_sums_take_tiles(small):
    A, D = heavy(long_row=119)  # the heavy row last
    lA = ls.asarray(A)
    for _ in range(2):
        y, loops = _run(lA.sum(axis=1), 2)
        np.testing.assert_allclose(y, D.sum(axis=1), rtol=1e-12, atol=1e-12)
    assert loops[0] is not None and loops[0].tiles is not None


def test_statements_tiles_cannot_take_run_the_default(small):
    A, D = heavy()
    lA = ls.asarray(A)
    X = np.random.default_rng(4).random((A.shape[1], 16))
    B = sp.random(*A.shape, density=0.1, format="csr", random_state=5)
    cases = [
        (lambda: lA @ ls.asarray(X), lambda: D @ X),                  # rows of vector lanes
        (lambda: lA * ls.asarray(B), lambda: D * B.toarray()),        # sparse result, no sum
        (lambda: lA.T @ np.ones(A.shape[0]), lambda: D.T @ np.ones(A.shape[0])),  # CSC rows
    ]
    for expr, want in cases:
        for _ in range(3):  # refused once, then the default without trying again
            y, loops = _run(expr(), 2)
            np.testing.assert_allclose(y, want(), rtol=1e-12, atol=1e-12)
        assert loops in ([None], []) or all(lp is None for lp in loops)


def test_a_requested_format_or_a_schedule_is_left_alone(small):
    A, D = heavy()
    lA = ls.asarray(A)
    x = np.arange(A.shape[1], dtype=np.float64)
    _run(lA @ x, 2)
    ls.set_num_threads(2)
    with kernel_log() as log:
        got = (lA @ x).materialize(format="dense")
    assert all(spec.loops is None for spec, _ in log)
    np.testing.assert_allclose(got.todense(), D @ x, rtol=1e-12)
    rows = ls.Schedule().divide("i0", "r0", "r1", 2).parallelize("r0")
    with kernel_log() as log:
        got = (lA @ x).materialize(schedule=rows)
    assert [spec.loops.text for spec, _ in log] == [repr(rows)]


def test_complex_values(small):
    A, D = heavy()
    Ac = sp.csr_array(A * (1 + 2j))
    x = np.random.default_rng(6).random(A.shape[1]) * (1 - 1j)
    for _ in range(2):
        y, _ = _run(ls.asarray(Ac) @ x, 2)
        np.testing.assert_allclose(y, (D * (1 + 2j)) @ x, rtol=1e-12, atol=1e-12)


@settings(max_examples=25)
@given(m=hst.integers(1, 40), n=hst.integers(1, 30), heavy_row=hst.integers(0, 39),
       density=hst.floats(0, 0.3), threads=hst.integers(2, 4), seed=hst.integers(0, 2**16))
def test_tiles_property_against_numpy(m, n, heavy_row, density, threads, seed):
    saved = skew.MIN_ENTRIES, skew.TILE, skew.SKEW_TILES
    skew.MIN_ENTRIES, skew.TILE, skew.SKEW_TILES = 0, 4, 0.0
    try:
        rng = np.random.default_rng(seed)
        D = np.where(rng.random((m, n)) < density, rng.standard_normal((m, n)), 0.0)
        D[heavy_row % m, :] = rng.standard_normal(n)
        A = sp.csr_array(D)
        x = rng.standard_normal(n)
        lA = ls.asarray(A)
        for _ in range(2):
            y, _ = _run(lA @ x, threads)
            np.testing.assert_allclose(y, D @ x, rtol=1e-10, atol=1e-10)
    finally:
        skew.MIN_ENTRIES, skew.TILE, skew.SKEW_TILES = saved
        ls.set_num_threads(1)


@pytest.mark.parametrize("cols", [16, 4100])  # a private row buffer, and past its limit atomics
def test_tile_schedule_spmm_shared_rows(cols):
    """Under a tile schedule on threads, a row cut between tiles sums each tile's part in a
    private row, added atomically at its end (compiler/lower/tiling.py ``buffered``); past
    ``ROW_BUFFER_MAX`` columns each product is added atomically. Values against NumPy."""
    from lazysparse.compiler.lower import tiling
    A, D = heavy(m=50, n=40, long_row=11, empty=(3, 20))
    X = np.random.default_rng(7).standard_normal((40, cols))
    s = (ls.Schedule().fuse("i0", "i2", "f").pos("f", "p", "T0").split("p", "p0", "p1", 5)
         .parallelize("p0", races="atomics"))
    try:
        ls.set_num_threads(3)
        for _ in range(2):
            got = (ls.asarray(A) @ X).materialize(schedule=s).todense()
            np.testing.assert_allclose(got, D @ X, rtol=1e-12, atol=1e-12)
        src = ls.explain(ls.asarray(A) @ X, schedule=s)
    finally:
        ls.set_num_threads(1)
    assert "ls_rb" in src and f"<= {tiling.ROW_BUFFER_MAX}" in src
