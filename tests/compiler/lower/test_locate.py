"""Located iterators (compiler/lower/locate.py): a segment whose position is fixed outside a loop is
scattered once there and probed inside, instead of merged at every iteration of that loop.
Masked products and masked broadcasts, every operand format, the fallback to the merge when the
dimension is too large for a scatter array, and the rule that a union is never located.
Oracles: dense NumPy (scipy.sparse where the dimensions are too large to densify)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import sparse
from hypothesis import example, given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.lower import locate
from lazysparse.compiler.plan import patterns as P


def _mat(m, n, density, seed, fmt="csr", dtype=np.float64):
    S = sp.random(m, n, density=density, format="csr", random_state=seed)
    if np.dtype(dtype).kind in "iu":
        S.data = np.random.default_rng(seed).integers(1, 6, S.nnz).astype(np.float64)
    return S.astype(dtype).asformat(fmt)


def _scatters(text):
    return [ln.strip() for ln in text.splitlines() if "scattered once here" in ln]


def test_the_mask_row_of_a_masked_product_is_scattered_once_per_row():
    M, A, B = _mat(60, 50, 0.1, 1), _mat(60, 40, 0.1, 2), _mat(40, 50, 0.1, 3)
    Ml, Al, Bl = ls.asarray(M), ls.asarray(A), ls.asarray(B)
    text = ls.explain(Ml * (Al @ Bl))
    # the mask (access 0: it multiplies inside the product) is scattered inside the loop over
    # i, probed in the loop over j
    assert "access 0 level 1: scattered once here, located in the loop over x2" in text
    # the merge is kept behind `if (loc)` for dimensions too large to scatter
    assert "if (loc0) {" in text and "} else {" in text
    got = (Ml * (Al @ Bl)).materialize()
    np.testing.assert_allclose(got.todense(), M.toarray() * (A @ B).toarray(), rtol=1e-13)


@pytest.mark.parametrize("fm", ["csr", "csc", "coo"])
@pytest.mark.parametrize("fa", ["csr", "csc"])
@pytest.mark.parametrize("fb", ["csr", "csc"])
def test_masked_products_in_every_operand_format(fm, fa, fb):
    M, A, B = _mat(30, 25, 0.2, 4, fm), _mat(30, 20, 0.2, 5, fa), _mat(20, 25, 0.2, 6, fb)
    got = (ls.asarray(M) * (ls.asarray(A) @ ls.asarray(B))).materialize(format="csr")
    ref = M.toarray() * (A.toarray() @ B.toarray())
    np.testing.assert_allclose(got.todense(), ref, rtol=1e-13)
    s = got.storage
    for r in range(30):  # sorted, duplicate-free rows
        assert np.all(np.diff(s.crd[1][s.pos[1][r]:s.pos[1][r + 1]]) > 0)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.complex128])
def test_dtypes_and_int64_indices(dtype):
    M, A, B = _mat(20, 15, 0.3, 7, dtype=dtype), _mat(20, 10, 0.3, 8, dtype=dtype), _mat(10, 15, 0.3, 9, dtype=dtype)
    M.indices, M.indptr = M.indices.astype(np.int64), M.indptr.astype(np.int64)
    got = (ls.asarray(M) * (ls.asarray(A) @ ls.asarray(B))).materialize()
    np.testing.assert_allclose(got.todense(), M.toarray() * (A.toarray() @ B.toarray()), rtol=1e-5)


def test_empty_rows_empty_mask_and_a_full_mask():
    A, B = _mat(12, 9, 0.3, 10), _mat(9, 14, 0.3, 11)
    for M in (sp.csr_matrix((12, 14)), sp.csr_matrix(np.ones((12, 14))),
              sp.csr_matrix(np.eye(12, 14)), _mat(12, 14, 0.5, 12)):
        got = (ls.asarray(M) * (ls.asarray(A) @ ls.asarray(B))).materialize()
        np.testing.assert_allclose(got.todense(), M.toarray() * (A @ B).toarray(), rtol=1e-13)


def test_a_sparse_vector_is_scattered_once_per_call():
    A, B = _mat(50, 40, 0.1, 13), _mat(40, 60, 0.1, 14)
    v = sparse.random((60,), density=0.2, random_state=3)
    e = (ls.asarray(A) @ ls.asarray(B)) * ls.asarray(v)
    text = ls.explain(e)
    # level 0 of the vector: its segment is known before any loop
    assert "access 2 level 0: scattered once here, located in the loop over x2" in text
    np.testing.assert_allclose(e.materialize().todense(), (A @ B).toarray() * v.todense(), rtol=1e-13)
    # the broadcast alone: the vector's segment scattered once, probed in each row
    C = _mat(50, 60, 0.2, 15)
    f = ls.asarray(C) * ls.asarray(v)
    assert "access 1 level 0: scattered once here" in ls.explain(f)
    np.testing.assert_allclose(f.materialize().todense(), C.toarray() * v.todense())


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_a_dense_temporary_on_several_threads_scatters_into_one_array_per_thread(threads):
    # dense enough that the masked product is expected nearly full and stored dense: its rows
    # run on OpenMP threads
    M, A, B = _mat(80, 70, 0.6, 17), _mat(80, 60, 0.6, 18), _mat(60, 70, 0.6, 19)
    Ml, Al, Bl = ls.asarray(M), ls.asarray(A), ls.asarray(B)
    text = ls.explain(Ml * (Al @ Bl))
    assert "assembly dense-inter" in text and "omp_get_thread_num() *" in text
    before = ls.get_num_threads()
    ls.set_num_threads(threads)
    try:
        for _ in range(3):
            got = (Ml * (Al @ Bl)).materialize()
            np.testing.assert_allclose(got.todense(), M.toarray() * (A @ B).toarray(), rtol=1e-13)
    finally:
        ls.set_num_threads(before)


@pytest.mark.parametrize("threads", [2, 3])
def test_a_segment_scattered_before_the_row_chunks_has_one_array_per_thread(threads):
    # a sparse result's rows in chunks on the team: each chunk runs the whole loop nest, the
    # vector's scatter and its clearing included, so a shared array would be cleared by one
    # thread while another probes it (rows of zeros). Enough rows for chunks to overlap.
    A, B = _mat(1500, 300, 0.05, 20), _mat(300, 400, 0.05, 21)
    v = sparse.random((400,), density=0.5, random_state=4)
    e = (ls.asarray(A) @ ls.asarray(B)) * ls.asarray(v)
    text = ls.explain(e)
    assert "the rows in chunks on the team" in text and "scattered once here" in text
    assert "omp_get_thread_num() *" in text  # the scatter array: this thread's row of one allocation
    before = ls.get_num_threads()
    ls.set_num_threads(threads)
    try:
        for _ in range(4):
            np.testing.assert_allclose(e.materialize().todense(), (A @ B).toarray() * v.todense(), rtol=1e-13)
    finally:
        ls.set_num_threads(before)


def test_a_dimension_beyond_the_limit_runs_the_merge():
    # 2^25 columns: no scatter array (LIMIT points); the merge loop computes the same thing
    n = locate.LIMIT * 2
    rng = np.random.default_rng(0)
    cols = rng.choice(n, 40, replace=False)
    M = sp.csr_matrix((np.ones(40), (rng.integers(0, 4, 40), cols)), shape=(4, n))
    A = _mat(4, 6, 0.6, 16)
    B = sp.csr_matrix((rng.random(60), (rng.integers(0, 6, 60), np.concatenate([cols, rng.choice(n, 20)]))),
                      shape=(6, n))
    got = (ls.asarray(M) * (ls.asarray(A) @ ls.asarray(B))).materialize().to_scipy().tocsr(copy=True)
    ref = M.multiply(A @ B).tocsr()
    ref.eliminate_zeros()
    got.eliminate_zeros()
    assert (got != ref).nnz == 0 and got.nnz == ref.nnz > 0


class _Spec:
    def __init__(self, kind, unique=True):
        from lazysparse.formats import Level
        self.format = type("F", (), {"levels": [Level(kind, unique=unique)] * 2})()


class _It:
    def __init__(self, q, lvl, lvars, kind="compressed", unique=True):
        self.q, self.lvl, self.lvars, self.spec = q, lvl, lvars, _Spec(kind, unique)


class _Lw:
    def __init__(self, order):
        self.order, self.count, self.par_open = order, False, False
        self.hoist_at = {d: None for d in range(len(order))}


def test_only_iterators_that_leave_a_driver_in_every_term_are_located():
    from lazysparse.ir.nodes import Index
    i, k, j = Index("i"), Index("k"), Index("j")
    lw = _Lw([i, k, j])
    B, M = _It(1, 1, [k, j]), _It(2, 1, [i, j])  # B[k, :] moves with k; M[i, :] does not
    both = P.conj(P.var(1), P.var(2))
    assert [a.q for a in locate.choose(lw, 2, [B, M], both, {1, 2})] == [2]
    # a union must visit M's own points: M stays a merged iterator
    assert locate.choose(lw, 2, [B, M], P.disj(P.var(1), P.var(2)), {1, 2}) == []
    # nothing between the loop that fixes M's position and its own loop: nothing to save
    assert locate.choose(_Lw([i, j, k]), 1, [_It(2, 1, [i, j])], P.conj(P.var(1), P.var(2)), {1, 2}) == []
    # duplicates in a level (COO): merged; inside an OpenMP loop: located (an array a thread)
    assert locate.choose(lw, 2, [B, _It(2, 1, [i, j], unique=False)], both, {1, 2}) == []
    lw.par_open = True
    assert [a.q for a in locate.choose(lw, 2, [B, M], both, {1, 2})] == [2]
    # two invariant iterators with a third driving: both located
    lw.par_open = False
    N = _It(3, 1, [i, j])
    three = P.conj(P.var(1), P.var(2), P.var(3))
    assert [a.q for a in locate.choose(lw, 2, [B, M, N], three, {1, 2, 3})] == [2, 3]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 9), st.integers(0, 9), st.integers(1, 9),
       st.sampled_from(["csr", "csc", "coo"]), st.sampled_from(["csr", "csc", "coo"]),
       st.sampled_from(["csr", "csc", "coo"]), st.floats(0.0, 1.0), st.integers(0, 10**6))
@example(0, 0, 2, "coo", "coo", "csc", 0.0, 0)  # an intersection drives the fused outer loop
def test_masked_expressions_match_numpy(m, n, k, fm, fa, fb, dens, seed):
    M, A, B = _mat(m, n, dens, seed, fm), _mat(m, k, 0.4, seed + 1, fa), _mat(k, n, 0.4, seed + 2, fb)
    Ml, Al, Bl = ls.asarray(M), ls.asarray(A), ls.asarray(B)
    ref = M.toarray() * (A.toarray() @ B.toarray())
    np.testing.assert_allclose((Ml * (Al @ Bl)).materialize().todense(), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ls.einsum("ij,ik,kj->ij", Ml, Al, Bl).materialize().todense(), ref,
                               rtol=1e-12, atol=1e-12)
    v = sparse.COO.from_numpy((np.random.default_rng(seed).random(n) < dens) * 1.5)
    np.testing.assert_allclose((Ml * ls.asarray(v)).materialize().todense(), M.toarray() * v.todense())


def test_opcount_of_a_located_kernel_counts_only_the_masked_products():
    # the instrumented build locates too: one addition per (i, k, j) with all three stored
    M, A, B = _mat(30, 30, 0.2, 21), _mat(30, 30, 0.2, 22), _mat(30, 30, 0.2, 23)
    c = ls.opcount(ls.asarray(M) * (ls.asarray(A) @ ls.asarray(B)))
    nz = [(X.toarray() != 0).astype(np.int64) for X in (M, A, B)]
    triples = int(((nz[1] @ nz[2]) * nz[0]).sum())
    assert triples > 0 and c["add"] == triples
    assert "scattered once here" in ls.explain(ls.asarray(M) * (ls.asarray(A) @ ls.asarray(B)))


def test_the_mask_multiplies_inside_the_masked_product():
    """``M * (A @ B)`` is one statement ``sum_k M_ij A_ik B_kj`` (compiler/plan/fusion.py,
    ``folds_into_reader``): one kernel, two multiplications per masked product and no pass
    over the result; written the other way round too. ``fusion="none"`` keeps two kernels."""
    from lazysparse.compiler.pipeline import kernel_log
    M, A, B = _mat(30, 30, 0.2, 31), _mat(30, 30, 0.2, 32), _mat(30, 30, 0.2, 33)
    Ml, Al, Bl = ls.asarray(M), ls.asarray(A), ls.asarray(B)
    ref = M.toarray() * (A.toarray() @ B.toarray())
    nz = [(X.toarray() != 0).astype(np.int64) for X in (M, A, B)]
    triples = int(((nz[1] @ nz[2]) * nz[0]).sum())
    for expr in (lambda: Ml * (Al @ Bl), lambda: (Al @ Bl) * Ml):
        with kernel_log() as log:
            got = expr().materialize()
        np.testing.assert_allclose(got.todense(), ref, rtol=1e-13)
        assert len(log) == 1 and log[0][0].stmt.reduce_indices
        c = ls.opcount(expr())
        assert triples > 0 and c["add"] == triples and c["mul"] == 2 * triples
    with kernel_log() as log:
        got = (Ml * (Al @ Bl)).materialize(fusion="none")
    np.testing.assert_allclose(got.todense(), ref, rtol=1e-13)
    assert len(log) == 2


def test_a_product_read_twice_or_under_a_dense_factor_is_not_folded():
    from lazysparse.compiler.pipeline import kernel_log
    M, A, B = _mat(20, 20, 0.2, 34), _mat(20, 20, 0.3, 35), _mat(20, 20, 0.3, 36)
    D = np.random.default_rng(0).random((20, 20))
    Ml, Al, Bl, Dl = ls.asarray(M), ls.asarray(A), ls.asarray(B), ls.asarray(D)
    C = A.toarray() @ B.toarray()
    # the product is read by two consumers: computed once, on the union of what they need
    T = Al @ Bl
    with kernel_log() as log:
        got = (Ml * T + T * Ml * 2).materialize()
    np.testing.assert_allclose(got.todense(), 3 * M.toarray() * C, rtol=1e-13)
    assert len(log) == 2 and "cast" in repr(log[0][0].stmt)  # masked by M's pattern, not folded
    # a dense factor masks nothing: the product is formed once, then multiplied
    np.testing.assert_allclose((Dl * (Al @ Bl)).materialize().todense(), D * C, rtol=1e-13)
