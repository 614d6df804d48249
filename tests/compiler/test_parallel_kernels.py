"""OpenMP on single-operation kernels (``Lowerer.parallel``): the outermost loop over a result
index of a dense result runs on the threads of ``ls.set_num_threads``; values equal the serial
ones bitwise and NumPy's; a loop that reduces into the result runs on private copies of it
(``Lowerer.emit_private``: tests/compiler/lower/test_private_sums.py)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.pipeline import kernel_log

PRAGMA = "#pragma omp parallel"


@pytest.fixture
def threads():
    yield ls.set_num_threads
    ls.set_num_threads(1)


def _run(expr, n):
    ls.set_num_threads(n)
    with kernel_log() as log:
        got = expr.materialize(fusion="none")
    return got.todense(), [runner.source for _, runner in log]


def _cases():
    rng = np.random.default_rng(0)
    As = sp.random(300, 200, density=0.05, format="csr", random_state=1)
    As = As.tolil()
    As[5, :] = 0
    As = As.tocsr()
    Ad = As.toarray()
    A = ls.asarray(As)
    Bs = sp.random(300, 200, density=0.05, format="csr", random_state=2)
    X, W, x = rng.random((200, 16)), rng.random((16, 7)), rng.random(200)
    D = rng.random((300, 200))
    return [
        ("spmm", A @ ls.asarray(X), Ad @ X, True),
        ("dense product", ls.asarray(X) @ ls.asarray(W), X @ W, True),
        ("spmv", A @ ls.asarray(x), Ad @ x, True),
        ("row sums", A.sum(axis=1), Ad.sum(axis=1), True),
        ("dense elementwise", ls.asarray(D) * 2.0 + ls.asarray(D), D * 2.0 + D, True),
        ("dcsr spmv", A.asformat("dcsr") @ ls.asarray(x), Ad @ x, True),
        # scatters into y: each thread sums into a private copy, added after (emit_private)
        ("csc spmv", A.asformat("csc") @ ls.asarray(x), Ad @ x, True),
        # rows appended by each thread to buffers of its own, copied in order after (emit_par_rows)
        ("sparse result", A + ls.asarray(Bs), Ad + Bs.toarray(), True),
    ]


@pytest.mark.parametrize("case", range(len(_cases())))
def test_two_threads_give_the_serial_values(case, threads):
    name, expr, want, parallel = _cases()[case]
    one, src1 = _run(expr, 1)
    two, src2 = _run(_cases()[case][1], 2)  # a new lazy array: the first one is computed
    if name == "csc spmv":  # (private sums added after: the same values up to rounding)
        np.testing.assert_allclose(one, two, rtol=1e-13)
    else:
        np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(two, want, rtol=1e-12)
    assert src1 == src2 and src1  # the thread count is a run-time argument, not a new kernel
    assert any(PRAGMA in s for s in src2) == parallel, name


# -- the autoscheduler's thread decision (compiler/lower/teams.py, team_size) ------------------------------
def _teams(expr, fusion="auto"):
    """The result and, per kernel the call ran, the team size it reported."""
    with kernel_log() as log:
        got = expr.materialize(fusion=fusion)
    teams = []
    for item in log:
        if isinstance(item, tuple) and len(item) == 2:  # (spec, Runner) of one operation
            abi, pool = item[1].abi, item[1]._pool
        else:                                           # a fused kernel's FusedRun
            abi, pool = item.abi, item.fixed.pool
        k = [i for i, d in enumerate(abi.d) if d[0] == "team"]
        teams.append(pool[-1][1][k[0]] if k else None)
    return got.todense(), teams


@pytest.fixture
def work_threshold():
    from lazysparse.runtime import threads as th
    saved = th.PAR_MIN_WORK[0]
    th.PAR_MIN_WORK[0] = 1 << 14  # the default (the suite runs with 0)
    yield th.PAR_MIN_WORK
    th.PAR_MIN_WORK[0] = saved
    ls.set_num_threads(1)


@pytest.mark.parametrize("n, density, team", [(60, 0.1, 1), (2000, 0.01, 2)])
def test_loops_with_little_work_run_on_one_thread(n, density, team, work_threshold):
    """SpMV of 360 entries, SpMM and SDDMM over them (work under 16384 innermost iterations) run
    on one thread when two are asked for; with 40k entries on two. Values as NumPy's."""
    rng = np.random.default_rng(3)
    As = sp.random(n, n, density=density, format="csr", random_state=4)
    A, Ad = ls.asarray(As), As.toarray()
    x, X, U = rng.random(n), rng.random((n, 4)), rng.random((n, 8))
    ls.set_num_threads(2)
    cases = [("spmv", A @ ls.asarray(x), Ad @ x),
             ("spmm", A @ ls.asarray(X), Ad @ X),
             ("sddmm", A * (ls.asarray(U) @ ls.asarray(U).T), Ad * (U @ U.T)),
             ("row sums", A.sum(axis=1), Ad.sum(axis=1))]
    for name, expr, want in cases:
        got, teams = _teams(expr)
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)
        assert teams == [team], (name, teams)


def test_work_counts_dense_extents_and_the_threshold_is_read_per_call(work_threshold):
    """A dense product's work is I * K * J: 40 * 40 * 40 runs on two threads, 10 * 10 * 10 on
    one; a threshold of 0 puts the small one on two threads with the same kernel."""
    rng = np.random.default_rng(5)
    ls.set_num_threads(2)
    for n, team in ((40, 2), (10, 1)):
        X, W = rng.random((n, n)), rng.random((n, n))
        got, teams = _teams(ls.asarray(X) @ ls.asarray(W))
        np.testing.assert_allclose(got, X @ W, rtol=1e-12)
        assert teams == [team], (n, teams)
    work_threshold[0] = 0
    X, W = rng.random((10, 10)), rng.random((10, 10))
    got, teams = _teams(ls.asarray(X) @ ls.asarray(W))
    np.testing.assert_allclose(got, X @ W, rtol=1e-12)
    assert teams == [2]
    ls.set_num_threads(1)
    assert _teams(ls.asarray(X) @ ls.asarray(W))[1] == [1]


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(0, 300), per_row=st.integers(0, 12), nt=st.integers(1, 5), cols=st.integers(1, 24),
       seed=st.integers(0, 2**16))
def test_owned_row_chunks_cover_every_row_once(rows, per_row, nt, cols, seed):
    """The default row loop's chunks, each thread its own run of them first and then help with
    the others' (parallel.py ``owned_chunks``): every row computed exactly once, whatever the
    row count against the chunks (none, fewer rows than a chunk, a last partial chunk, more
    threads than runs need), for a segment sum (``A @ x``, whose loop nests are versions
    picked once) and a row of a dense result (``A @ X``), against NumPy; and the walk of a
    DCSR's stored rows (its chunks round the team) on the same rows."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.integers(0, per_row + 1, rows), cols)
    lengths[rng.random(rows) < 0.3] = 0  # empty rows among them
    indices = np.concatenate([np.sort(rng.choice(cols, n, replace=False)) for n in lengths]
                             + [np.zeros(0, np.int64)]).astype(np.int32)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    A = sp.csr_matrix((rng.standard_normal(len(indices)), indices, indptr), shape=(rows, cols))
    x, X = rng.standard_normal(cols), rng.standard_normal((cols, 3))
    D = A.toarray()  # the oracle: dense NumPy
    before = ls.get_num_threads()
    ls.set_num_threads(nt)
    try:
        lA = ls.asarray(A)
        dA = lA.asformat("dcsr")
        for _ in range(2):
            np.testing.assert_allclose((lA @ x).todense(), D @ x, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose((lA @ X).todense(), D @ X, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose((dA @ x).todense(), D @ x, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(dA.sum(axis=1).todense(), D.sum(axis=1), rtol=1e-12, atol=1e-12)
    finally:
        ls.set_num_threads(before)
