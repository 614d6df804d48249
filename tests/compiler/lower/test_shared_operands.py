"""Dense operands that every thread of a parallel loop reads whole (SpMM's and SDDMM's gathered
factor), and reused buffers for the dense temporaries of multi-kernel programs
(compiler/fused_pipeline.py, ``_run_ops``).

The threads read the caller's operand in place (per-thread copies cost more than they saved:
docs/design.md, "Tried and dropped"), so each test runs two operands of the same shape back
to back at one and two threads, in several layouts: a thread reading a stale or misaddressed
operand fails the NumPy oracle."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.compiler import fused_pipeline as F
from lazysparse.compiler.pipeline import kernel_log


@pytest.fixture
def threads():
    yield ls.set_num_threads
    ls.set_num_threads(1)


def _sparse(n, m, density, seed, empty_row=None):
    A = sp.random(n, m, density=density, format="csr", random_state=seed)
    if empty_row is not None:
        A = A.tolil()
        A[empty_row, :] = 0
        A = A.tocsr()
    return A


def _run(make, nt, fusion="auto"):
    ls.set_num_threads(nt)
    with kernel_log() as log:
        got = make().materialize(fusion=fusion)
    return np.asarray(got.todense()), log


def _views(X):
    """The operand as stored and in layouts the kernel addresses by strides."""
    return {"c": X, "f": np.asfortranarray(X), "reversed rows": X[::-1], "reversed cols": X[:, ::-1]}


@pytest.mark.parametrize("layout", ["c", "f", "reversed rows", "reversed cols"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_spmm_with_a_shared_factor(layout, dtype, threads):
    """A @ X with X (3000 x 16) gathered by both threads: two threads give the one-thread
    values and NumPy's, for two different X one after the other, in every layout."""
    A = _sparse(400, 3000, 0.02, 1, empty_row=7).astype(dtype)
    rng = np.random.default_rng(0)
    for seed in (1, 2):
        X = (rng.random((3000, 16)) * 10).astype(dtype)
        Xv = _views(X)[layout]
        one, _ = _run(lambda: ls.asarray(A) @ ls.asarray(Xv), 1, "none")
        two, log = _run(lambda: ls.asarray(A) @ ls.asarray(Xv), 2, "none")
        np.testing.assert_array_equal(one, two)
        np.testing.assert_allclose(two, A.toarray() @ Xv, rtol=1e-5 if dtype == np.float32 else 1e-12)
        assert len(log) == 1


def test_two_shared_operands_in_one_kernel(threads):
    """einsum("ij,jk,jk->ik"): X and Y are both read whole by every row."""
    A = _sparse(300, 2500, 0.03, 3)
    rng = np.random.default_rng(4)
    for _ in range(2):
        X, Y = rng.random((2500, 8)), rng.random((2500, 8))
        mk = lambda: ls.einsum("ij,jk,jk->ik", ls.asarray(A), ls.asarray(X), ls.asarray(Y))
        one, _ = _run(mk, 1)
        two, log = _run(mk, 2)
        np.testing.assert_array_equal(one, two)
        np.testing.assert_allclose(two, A.toarray() @ (X * Y), rtol=1e-12)
        assert len(log) == 1


def test_sddmm_with_a_shared_gathered_factor(threads):
    """A * (U @ V.T), fused: V is gathered by A's columns on both threads, U read by the
    parallel row; the result takes A's pattern."""
    A = _sparse(500, 2000, 0.02, 5, empty_row=0)
    rng = np.random.default_rng(6)
    for _ in range(2):
        U, V = rng.random((500, 32)), rng.random((2000, 32))
        mk = lambda: ls.asarray(A) * (ls.asarray(U) @ ls.asarray(V).T)
        one, _ = _run(mk, 1)
        two, log = _run(mk, 2)
        np.testing.assert_array_equal(one, two)
        np.testing.assert_allclose(two, A.toarray() * (U @ V.T), rtol=1e-12)
        assert len(log) == 1


def test_callers_in_threads_share_operands(threads, in_threads):
    """8 Python threads running shared-operand kernels at once (each call on 2 OpenMP
    threads): every result is right."""
    ls.set_num_threads(2)
    A = _sparse(300, 3000, 0.02, 8)
    rng = np.random.default_rng(9)
    Xs = [rng.random((3000, 16)) for _ in range(8)]
    want = [A.toarray() @ X for X in Xs]

    def work(k):
        for _ in range(5):
            got = (ls.asarray(A) @ ls.asarray(Xs[k])).materialize(fusion="none").todense()
            np.testing.assert_allclose(got, want[k], rtol=1e-12)
    errors = in_threads(work, 8)
    assert not errors, errors[0]


# -- reused temporaries (_run_ops) -------------------------------------------------------------

def _gnn(A, X, W):
    return (ls.asarray(A) @ ls.asarray(X)) @ ls.asarray(W)  # association: A @ (X @ W)


def test_a_temporary_buffer_is_reused_and_results_stay_intact():
    """GNN-1 (H = 128 > J = 16) runs as two kernels with a dense X @ W temporary (2000 x 16
    float64). Run again with other values, its buffer is reused, and the earlier results keep
    their values."""
    A = _sparse(1500, 2000, 0.01, 10, empty_row=3)
    rng = np.random.default_rng(11)
    kept = []
    for _ in range(3):
        X, W = rng.random((2000, 128)), rng.random((128, 16))
        kept.append((_gnn(A, X, W).materialize(), A @ X @ W))
    for got, want in kept:
        np.testing.assert_allclose(got.todense(), want, rtol=1e-12)
    pools = [e[0][3] for _, plans, _ in F._FAST.values() for e in plans.values() if e[0][0] is None and e[0][3]]
    assert any(v.nbytes == 2000 * 16 * 8 for pool in pools for s in pool for v in s.values()
               if isinstance(v, np.ndarray))


def test_a_temporary_viewed_by_a_result_is_not_overwritten():
    """A temporary whose buffer a result still shares (here the program's last operation is a
    transpose, a view of the temporary, run one kernel per operation without the inlining that
    "auto" applies first) is not reused: the next run writes a new buffer, and the first result
    keeps its values."""
    from lazysparse.compiler.plan.decompose import decompose
    rng = np.random.default_rng(12)
    A = _sparse(600, 700, 0.02, 13)
    pool, outs = [], []
    for _ in range(3):
        X, W = rng.random((700, 40)), rng.random((40, 600))
        prog, _, inputs = decompose([_gnn(A, X, W).T._node])
        got, = F._run_ops(prog, inputs, "test", pool)
        assert got.vals.base is not None  # the case under test: a view of a temporary
        outs.append((got, (A @ X @ W).T))
    for got, want in outs:
        np.testing.assert_allclose(got.vals, want, rtol=1e-12)


def test_programs_run_by_several_threads_at_once(in_threads):
    """8 Python threads run the same two-kernel program with their own values: each gets its own
    scratch (the pool hands one out per running call)."""
    A = _sparse(800, 1200, 0.01, 14)
    rng = np.random.default_rng(15)
    data = [(rng.random((1200, 32)), rng.random((32, 256))) for _ in range(8)]

    def work(k):
        X, W = data[k]
        for _ in range(6):
            np.testing.assert_allclose(_gnn(A, X, W).materialize().todense(), A @ X @ W, rtol=1e-12)
    errors = in_threads(work, 8)
    assert not errors, errors[0]
