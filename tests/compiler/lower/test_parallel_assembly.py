"""Sparse results appended on threads (compiler/lower/parallel.py, ``Lowerer.emit_par_rows``): a CSR-like
result whose rows are appended one after another (mode "append": ``A + B``, ``A * B``,
``maximum``; a workspace flushed after each row: ``A @ B``, ``A + B + C``) runs its row loop in
chunks on the team, each thread appending to buffers of its own, the chunks copied into place
after. Values and structure against dense NumPy and bitwise against one thread, over shapes,
densities, dtypes, index widths, stored zeros and empty rows."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as hst

import lazysparse as ls
from lazysparse.compiler.pipeline import kernel_log


def _matrix(m, n, density, dtype, index, seed, zeros=False):
    rng = np.random.default_rng(seed)
    D = np.where(rng.random((m, n)) < density, rng.integers(-3, 4, (m, n)), 0).astype(dtype)
    if m:
        D[m // 2, :] = 0  # an empty row
    A = sp.csr_array(D)
    if zeros and A.nnz:  # stored zeros: not entries of the result
        A.data[::3] = 0
        D = A.toarray()
    A.indices, A.indptr = A.indices.astype(index), A.indptr.astype(index)
    return A, D


def _cases(m, n, density, dtype, index, seed, zeros):
    (A, DA), (B, DB), (E, DE) = (_matrix(m, n, density, dtype, index, seed + k, zeros) for k in range(3))
    C, DC = _matrix(n, m, density, dtype, index, seed + 3, zeros)
    a, b, c, e = map(ls.asarray, (A, B, C, E))
    cases = [("A + B", lambda: a + b, DA + DB), ("A - B", lambda: a - b, DA - DB),
             ("A * B", lambda: a * b, DA * DB), ("A @ C", lambda: a @ c, DA @ DC),
             ("A + B + E", lambda: a + b + e, DA + DB + DE)]
    if dtype != np.complex128:
        cases.append(("maximum", lambda: ls.maximum(a, b), np.maximum(DA, DB)))
    return cases, (A, B, C, E)


def _check(got, want):
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.todense(), want)
    if got.format.is_dense:  # (a product expected nearly full is stored dense: format inference)
        return
    assert got.format == ls.csr
    st = got.storage
    pos, crd = st.pos[1], st.crd[1]
    # computed zeros are not stored, each row sorted and unique, the arrays of exactly its entries
    assert pos[0] == 0 and np.all(np.diff(pos) >= 0)
    assert pos[-1] == crd.shape[0] == st.vals.shape[0] == np.count_nonzero(want)
    for r in range(want.shape[0]):
        assert np.all(np.diff(crd[pos[r]:pos[r + 1]]) > 0)


@settings(max_examples=40, deadline=None)
@given(m=hst.integers(0, 40), n=hst.integers(0, 30), density=hst.floats(0, 1),
       dtype=hst.sampled_from([np.float64, np.float32, np.int64, np.complex128]),
       index=hst.sampled_from([np.int32, np.int64]), seed=hst.integers(0, 2**16),
       zeros=hst.booleans(), threads=hst.sampled_from([2, 3]))
def test_rows_appended_on_threads_match_numpy_and_one_thread(m, n, density, dtype, index, seed, zeros,
                                                              threads):
    # (the suite runs every parallel loop on the threads asked for: LAZYSPARSE_PAR_MIN_WORK=0; the
    # chunks are then 16 rows, so 40 rows make three chunks)
    cases, inputs = _cases(m, n, density, dtype, index, seed, zeros)
    before = [(x.indptr.copy(), x.indices.copy(), x.data.copy()) for x in inputs]
    try:
        for name, expr, want in cases:
            ls.set_num_threads(1)
            one = expr().materialize()
            ls.set_num_threads(threads)
            with kernel_log() as log:
                many = expr().materialize()
            _check(many, want)
            if many.format.is_dense:
                continue
            s1, s2 = one.storage, many.storage
            np.testing.assert_array_equal(s1.pos[1], s2.pos[1], err_msg=name)
            np.testing.assert_array_equal(s1.crd[1], s2.crd[1], err_msg=name)
            # (equal, not bitwise: a workspace's two inserts, picked per call as measured, may
            # give a zero's sign differently, -0 against +0)
            np.testing.assert_array_equal(s1.vals, s2.vals, err_msg=name)
            assert any(spec.mode == "append" or spec.mode.startswith("ws-") for spec, _ in log), name
            for x in inputs:  # a result shares no buffer with its inputs
                assert not any(np.shares_memory(s2.vals, y) for y in (x.data, x.indices, x.indptr))
    finally:
        ls.set_num_threads(1)
    for x, (p, c, v) in zip(inputs, before):  # the inputs are unchanged
        np.testing.assert_array_equal(x.indptr, p)
        np.testing.assert_array_equal(x.indices, c)
        np.testing.assert_array_equal(x.data, v)


def test_the_row_loop_is_chunked_on_the_team():
    A, _ = _matrix(50, 40, 0.2, np.float64, np.int32, 1)
    ls.set_num_threads(2)
    try:
        for make in (lambda: ls.asarray(A) + ls.asarray(A), lambda: ls.asarray(A) @ ls.asarray(A.T.tocsr())):
            with kernel_log() as log:
                make().materialize()
            (spec, runner), = log
            assert "#pragma omp for schedule(dynamic, 1)" in runner.source
            assert "ls_keep_get(" in runner.source and "#define ls_fail ls_tfail" in runner.source
            assert "threads: the rows in chunks on the team" in ls.explain(make())
    finally:
        ls.set_num_threads(1)


def test_kept_buffers_serve_larger_and_smaller_calls():
    """The threads' buffers a call leaves to the next (``KEEP``) are reused when large enough,
    replaced when not: a large product, a small one, a large one again, in one kernel."""
    ls.set_num_threads(2)
    try:
        for n in (300, 20, 300, 5, 0, 300):
            A, DA = _matrix(n, n, 0.05, np.float64, np.int32, n)
            B, DB = _matrix(n, n, 0.05, np.float64, np.int32, n + 1)
            _check((ls.asarray(A) + ls.asarray(B)).materialize(), DA + DB)
            _check((ls.asarray(A) @ ls.asarray(B)).materialize(), DA @ DB)
    finally:
        ls.set_num_threads(1)


def test_concurrent_calls_of_one_kernel(calls_at_once):
    """Python threads running the same kernel at once: one holds the kept buffers, the others
    allocate their own; every result is right."""
    A, DA = _matrix(200, 150, 0.1, np.float64, np.int32, 7)
    B, DB = _matrix(150, 200, 0.1, np.float64, np.int32, 8)
    a, b = ls.asarray(A), ls.asarray(B)
    want = DA @ DB
    errors = calls_at_once(lambda: (a @ b).materialize(), lambda got: _check(got, want))
    assert not errors, errors


@pytest.mark.parametrize("threads", [1, 2])
def test_one_row_of_many_entries_and_many_empty_rows(threads):
    """Skew: one row holds most entries (a chunk grows its thread's buffers far past their start),
    the other rows are empty or hold one entry."""
    n = 400
    D = np.zeros((n, n))
    D[3, :] = np.arange(1, n + 1)
    D[np.arange(0, n, 7), np.arange(0, n, 7)[::-1]] = 2.0
    A = sp.csr_array(D)
    ls.set_num_threads(threads)
    try:
        _check((ls.asarray(A) + ls.asarray(A.T.tocsr())).materialize(), D + D.T)
        _check((ls.asarray(A) @ ls.asarray(A)).materialize(), D @ D)
    finally:
        ls.set_num_threads(1)


@settings(max_examples=25, deadline=None)
@given(m=hst.integers(0, 40), k=hst.integers(0, 25), density=hst.floats(0, 1),
       dtype=hst.sampled_from([np.float64, np.float32, np.int64, np.complex128]),
       index=hst.sampled_from([np.int32, np.int64]), seed=hst.integers(0, 2**16),
       zeros=hst.booleans(), threads=hst.sampled_from([2, 3]))
def test_masked_products_on_threads(m, k, density, dtype, index, seed, zeros, threads):
    """``M * (A @ B)`` (mode "mask": sums added at the mask's positions of each row, each thread
    with its own dense row, compiler/lower/coiteration.py ``emit_row_acc``) against NumPy and one thread."""
    M, DM = _matrix(m, m, density, dtype, index, seed, zeros)
    A, DA = _matrix(m, k, density, dtype, index, seed + 1, zeros)
    B, DB = _matrix(k, m, density, dtype, index, seed + 2, zeros)
    want = DM * (DA @ DB)
    make = lambda: ls.asarray(M) * (ls.asarray(A) @ ls.asarray(B))  # noqa: E731
    try:
        ls.set_num_threads(1)
        one = make().materialize()
        ls.set_num_threads(threads)
        with kernel_log() as log:
            many = make().materialize()
    finally:
        ls.set_num_threads(1)
    _check(many, want)
    if not many.format.is_dense:
        np.testing.assert_array_equal(one.storage.pos[1], many.storage.pos[1])
        np.testing.assert_array_equal(one.storage.crd[1], many.storage.crd[1])
        np.testing.assert_array_equal(one.storage.vals, many.storage.vals)


def test_masked_product_rows_are_private_to_threads():
    M, DM = _matrix(60, 60, 0.2, np.float64, np.int32, 3)
    ls.set_num_threads(2)
    try:
        for _ in range(3):  # (the dense-row variant is chosen by measurement on the first calls)
            with kernel_log() as log:
                got = (ls.asarray(M) * (ls.asarray(M) @ ls.asarray(M))).materialize()
            _check(got, DM * (DM @ DM))
    finally:
        ls.set_num_threads(1)
    src = [r.source for _, r in log if getattr(r, "source", None)] or \
          [e.kernel.source for e in log if hasattr(e, "kernel")]
    assert any("ls_racc" in s and "#pragma omp parallel for" in s for s in src), src


@settings(max_examples=25, deadline=None)
@given(m=hst.integers(0, 30), n=hst.integers(0, 25), density=hst.floats(0, 1),
       index=hst.sampled_from([np.int32, np.int64]), seed=hst.integers(0, 2**16),
       threads=hst.sampled_from([2, 3]))
def test_rows_walked_by_coordinates_run_in_chunks_of_positions(m, n, density, index, seed, threads):
    """A result appended row by row whose outer loop walks an operand's stored coordinates
    (COO's first level, a transposed COO's, a COO tensor's in TTV) rather than a range of rows:
    its chunks are runs of positions cut where the coordinate changes, each recording the rows
    it spans (a chunk that ran every row would write each result entry once per chunk)."""
    import sparse
    (A, DA), (B, DB) = (_matrix(m, n, density, np.float64, index, seed + k) for k in range(2))
    X = np.random.default_rng(seed).integers(-2, 3, (m, 4)).astype(np.float64)
    ca, cb = (ls.asarray(sp.coo_array(x)) for x in (A, B))
    D3 = np.stack([DA, 0 * DA, -DA])  # (an empty middle slab: rows no chunk visits)
    T3 = ls.asarray(sparse.COO.from_numpy(D3))
    v = np.arange(n, dtype=np.float64) - 2
    cases = [("coo.T @ X", lambda: ca.T @ ls.asarray(X), DA.T @ X),
             ("coo + coo", lambda: ca + cb, DA + DB),
             ("coo @ coo.T", lambda: ca @ cb.T, DA @ DB.T),
             ("coo.T * coo.T", lambda: ca.T * cb.T, (DA * DB).T),
             ("ttv", lambda: ls.einsum("ijk,k->ij", T3, ls.asarray(v)),
              np.einsum("ijk,k->ij", D3, v))]
    try:
        for name, expr, want in cases:
            ls.set_num_threads(1)
            one = expr().materialize()
            ls.set_num_threads(threads)
            got = expr().materialize()
            np.testing.assert_allclose(got.todense(), want, rtol=1e-12, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(got.todense(), one.todense(), rtol=1e-12, atol=1e-12, err_msg=name)
    finally:
        ls.set_num_threads(1)


def test_a_coo_tensor_walk_is_chunked_by_positions():
    import sparse
    D3 = np.zeros((40, 6, 5))
    D3[::3, 1, :] = 1.0
    D3[7, :, 2] = 2.0
    T3 = ls.asarray(sparse.COO.from_numpy(D3))
    v = np.arange(5.0)
    ls.set_num_threads(2)
    try:
        with kernel_log() as log:
            got = ls.einsum("ijk,k->ij", T3, ls.asarray(v)).materialize()
        (spec, runner), = log
        assert spec.mode == "append" and "ls_ck[6 * ls_k + 4]" in runner.source
        _check(got, np.einsum("ijk,k->ij", D3, v))
    finally:
        ls.set_num_threads(1)
