"""Awkward inputs and the contract around results: empty rows/columns, zero-size axes, one-element
arrays, all-zero and explicitly-zero sparse storage, unsorted/duplicate COO, 0-d results, the
``np.asarray`` rule for sparse results, remembered materialization, ``ls.compute``, no mutation of
user inputs and zero-copy CSR/CSC/dense input.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls

FORMATS_2D = ["dense", "csr", "csc", "coo", "dcsr", "dcsc", "csf"]
SPARSE_2D = FORMATS_2D[1:]


def build(D, fmt):
    D = np.asarray(D)
    return ls.asarray(D.copy()) if fmt == "dense" else ls.asarray(sp.csr_array(D), format=fmt)


def same(result, expected):
    """``result`` (ls.Array; a NumPy scalar where NumPy gives one: a full reduction of a concrete
    array) equals ``expected`` (NumPy) in shape, dtype and values."""
    if isinstance(expected, np.generic) and not isinstance(result, ls.Array):
        assert isinstance(result, np.generic), type(result)
        got = np.asarray(result)
    else:
        assert isinstance(result, ls.Array), type(result)
        got = result.todense()
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True)


def scipy_with_explicit_zeros():
    """3x4 CSR: row 0 stores an explicit 0 and -2, row 1 is empty, row 2 stores 0, 0, 5 (column 2 empty)."""
    data = np.array([0.0, -2.0, 0.0, 0.0, 5.0])
    indices = np.array([0, 3, 0, 1, 3], dtype=np.int32)
    indptr = np.array([0, 2, 2, 5], dtype=np.int32)
    S = sp.csr_array((data, indices, indptr), shape=(3, 4))
    assert S.nnz == 5
    return S


# -- empty rows / columns ---------------------------------------------------------------------------
EMPTY_RC = np.array([[0.0, 0, 0, 0, 0],
                     [1.0, 0, 0, -2, 0],
                     [0.0, 0, 0, 0, 0],
                     [0.0, 0, 0, 3, 0]])   # rows 0, 2 and columns 1, 2, 4 are empty


@pytest.mark.parametrize("fmt", FORMATS_2D)
def test_empty_rows_and_columns(fmt):
    D = EMPTY_RC
    A = build(D, fmt)
    x = np.arange(1.0, 6.0)
    same(A, D)
    same(A @ x, D @ x)
    same(x[:4] @ A, x[:4] @ D)
    same(A.sum(axis=0), D.sum(axis=0))
    same(A.sum(axis=1), D.sum(axis=1))
    same(A.max(axis=0), D.max(axis=0))
    same(A.min(axis=1), D.min(axis=1))
    same(A.prod(axis=1), D.prod(axis=1))
    same(A.T, D.T)
    same(A * A, D * D)
    same(A + A, D + D)
    same(A - A.T.T * 2, D - D * 2)
    same(A.T @ A, D.T @ D)
    same(A @ A.T, D @ D.T)
    same(ls.exp(A), np.exp(D))
    S = A.to_scipy()
    assert S.shape == D.shape
    np.testing.assert_array_equal(S.toarray(), D)


# -- zero-size axes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0)])
@pytest.mark.parametrize("fmt", FORMATS_2D)
def test_zero_size_axes(fmt, shape):
    D = np.zeros(shape)
    A = build(D, fmt)
    assert A.shape == shape and A.nnz == 0
    m, n = shape
    same(A, D)
    same(A + A, D + D)
    same(A * A, D * D)
    same(A * 2.5, D * 2.5)
    same(A - 1, D - 1)
    same(A @ np.ones(n), D @ np.ones(n))
    same(A @ np.ones((n, 3)), D @ np.ones((n, 3)))
    same(np.ones((2, m)) @ A, np.ones((2, m)) @ D)
    same(A.sum(axis=0), D.sum(axis=0))
    same(A.sum(axis=1, keepdims=True), D.sum(axis=1, keepdims=True))
    same(A.T, D.T)
    same(A.sum(), D.sum())
    with np.errstate(all="ignore"):
        same(A.mean(axis=0), np.full(n, np.nan))
    same(ls.einsum("ij,kj->ik", A, np.ones((2, n))), np.einsum("ij,kj->ik", D, np.ones((2, n))))
    same(A.astype(np.float32), D.astype(np.float32))
    assert A.to_scipy().shape == shape
    for other in ("csr", "csc", "coo", "dense"):
        same(A.asformat(other), D)


@pytest.mark.parametrize("fmt", FORMATS_2D)
def test_prod_over_empty_axis_1(fmt):
    D = np.zeros((3, 0))
    same(build(D, fmt).prod(axis=1), np.ones(3))
    same(build(D, fmt).prod(axis=1, keepdims=True), np.ones((3, 1)))


@pytest.mark.parametrize("fmt", FORMATS_2D)
def test_prod_over_empty_axis_0(fmt):
    D = np.zeros((0, 3))
    same(build(D, fmt).prod(axis=0), np.ones(3))


def test_zero_size_reduction_to_1d_has_numpy_values():
    A = ls.asarray(sp.csr_array((0, 3)))
    same(A.sum(axis=0), np.zeros(3))
    same(ls.asarray(np.zeros((0, 3))).sum(), np.float64(0.0))        # dense: 0-d sum of nothing


@pytest.mark.parametrize("fmt", ["dense", "csr", "coo"])
def test_max_min_over_empty_axis_raise_like_numpy(fmt):
    A = build(np.zeros((3, 0)), fmt)
    with pytest.raises(ValueError, match="max"):
        np.max(np.zeros((3, 0)), axis=1)
    with pytest.raises(ValueError, match="max"):
        A.max(axis=1).todense()
    with pytest.raises(ValueError, match="min"):
        A.min(axis=1).todense()


# -- one-element arrays -----------------------------------------------------------------------------
@pytest.mark.parametrize("value", [0.0, -3.5])
@pytest.mark.parametrize("fmt", FORMATS_2D)
def test_one_element_matrix(fmt, value):
    D = np.array([[value]])
    A = build(D, fmt)
    same(A, D)
    same(A * A + 1, D * D + 1)
    same(A @ A, D @ D)
    same(A.T, D)
    same(A.sum(axis=0), D.sum(axis=0))
    same(A.max(axis=1), D.max(axis=1))
    assert float(A) == value
    assert float(A * 2) == 2 * value
    assert bool(A) == bool(value)
    assert int(A - 1) == int(value - 1)


@pytest.mark.parametrize("fmt", ["dense", "coo", "csf"])
@pytest.mark.parametrize("shape", [(1,), (1, 1, 1)])
def test_one_element_vector_and_tensor(fmt, shape):
    D = np.full(shape, 4.0)
    A = ls.asarray(D, format=fmt)
    same(A, D)
    same(ls.sqrt(A), np.sqrt(D))
    assert float(A) == 4.0
    assert float(A.sum()) == 4.0
    same(A.sum(), np.float64(4.0))


def test_scalar_conversion_of_bigger_array_is_type_error():
    with pytest.raises(TypeError):
        float(ls.asarray(np.ones((2, 2))))
    with pytest.raises(TypeError):
        float(ls.asarray(np.ones(2)) * 3)


# -- all-zero sparse (nnz 0) ------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", SPARSE_2D)
def test_all_zero_sparse(fmt):
    D = np.zeros((4, 3))
    A = build(D, fmt)
    B = build(np.eye(4, 3) * 2, fmt)
    assert A.nnz == 0
    same(A + B, D + np.eye(4, 3) * 2)
    same(A * B, D)
    same(A - B, -np.eye(4, 3) * 2)
    same(A @ np.ones(3), np.zeros(4))
    same(A @ B.T, np.zeros((4, 4)))
    same(A.sum(axis=0), np.zeros(3))
    same(A.max(axis=1), np.zeros(4))
    same(A.min(axis=0), np.zeros(3))
    same(A.prod(axis=1), np.zeros(4))
    same(ls.exp(A), np.ones((4, 3)))
    same(A == 0, np.ones((4, 3), bool))
    same(A < 0, np.zeros((4, 3), bool))
    same(A.T, D.T)
    r = (A * B).materialize()
    assert r.nnz == 0 or not r.todense().any()
    assert not r.format.is_dense


# -- explicit stored zeros --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr", "csf", "dense"])
def test_explicit_zeros(fmt):
    S = scipy_with_explicit_zeros()
    D = S.toarray()
    A = ls.asarray(S) if fmt == "csr" else ls.asarray(S, format=fmt)
    x = np.array([1.0, 2.0, 3.0, 4.0])
    same(A, D)
    same(A * 3, D * 3)
    same(A + A, D + D)
    same(A * A, D * D)
    same(A @ x, D @ x)
    same(A.T @ np.ones(3), D.T @ np.ones(3))
    same(A.sum(axis=1), D.sum(axis=1))
    same(A.max(axis=1), D.max(axis=1))      # row 0: max(0, -2) = 0 whether the 0 is stored or not
    same(A.min(axis=0), D.min(axis=0))
    same(A.prod(axis=1), D.prod(axis=1))
    same(ls.exp(A), np.exp(D))
    same(A == 0, D == 0)
    same(A != 0, D != 0)
    same(A.astype(bool), D.astype(bool))
    same(ls.where(A != 0, 1.0, -1.0), np.where(D != 0, 1.0, -1.0))
    np.testing.assert_array_equal(A.to_scipy().toarray(), D)


def test_explicit_zeros_are_kept_zero_copy():
    S = scipy_with_explicit_zeros()
    A = ls.asarray(S)
    assert A.nnz == 5 and np.shares_memory(A.storage.vals, S.data)


# -- unsorted / duplicate input ---------------------------------------------------------------------
@pytest.mark.parametrize("idx", [np.int32, np.int64])
def test_coo_with_duplicates_and_unsorted(idx):
    row = np.array([2, 0, 2, 1, 0, 2, 0], dtype=idx)
    col = np.array([1, 3, 1, 0, 3, 0, 0], dtype=idx)
    data = np.array([1.0, 2.0, 3.0, 4.0, -2.0, 6.0, 7.0])
    C = sp.coo_array((data, (row, col)), shape=(3, 4))
    saved = (row.copy(), col.copy(), data.copy())
    expected = np.zeros((3, 4))
    np.add.at(expected, (row, col), data)
    A = ls.asarray(C)
    assert A.format == ls.coo
    same(A, expected)
    assert A.nnz <= 5                       # duplicates summed: (2,1) and (0,3) appear twice
    same(A @ np.ones(4), expected @ np.ones(4))
    same(A * A, expected * expected)
    same(A + A, 2 * expected)
    same(A.sum(axis=0), expected.sum(axis=0))
    for fmt in ("csr", "csc", "dcsr", "csf", "dense"):
        same(ls.asarray(C, format=fmt), expected)
    np.testing.assert_array_equal(C.row, saved[0])
    np.testing.assert_array_equal(C.col, saved[1])
    np.testing.assert_array_equal(C.data, saved[2])


def test_csr_with_unsorted_and_duplicate_indices():
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    indices = np.array([3, 0, 3, 2, 1], dtype=np.int32)
    indptr = np.array([0, 3, 3, 5], dtype=np.int32)
    S = sp.csr_array((data, indices, indptr), shape=(3, 4))
    saved = (data.copy(), indices.copy(), indptr.copy())
    expected = np.array([[2.0, 0, 0, 4], [0, 0, 0, 0], [0, 5, 4, 0]])
    A = ls.asarray(S)
    same(A, expected)
    same(A @ np.arange(4.0), expected @ np.arange(4.0))
    same(A * A, expected * expected)
    same(A.max(axis=1), expected.max(axis=1))
    for a, b in zip((S.data, S.indices, S.indptr), saved):
        np.testing.assert_array_equal(a, b)


def test_invalid_structure_is_value_error():
    bad = sp.csr_array((np.ones(2), np.array([0, 7], dtype=np.int32), np.array([0, 1, 2], dtype=np.int32)),
                       shape=(2, 3), copy=False)
    with pytest.raises(ValueError):
        ls.asarray(bad)


# -- 0-d results ------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS_2D)
def test_zero_d_results(fmt):
    D = np.array([[1.0, 0.0, 2.0], [0.0, -4.0, 0.5]])
    A = build(D, fmt)
    total = A.sum()  # a concrete operand: a NumPy scalar, as NumPy and scipy give
    assert isinstance(total, np.float64) and total == pytest.approx(D.sum())
    s = ls.sum(A)  # the function stays lazy
    assert s.shape == () and s.ndim == 0 and s.is_lazy
    assert float(s) == pytest.approx(D.sum())
    lazy = (A * 1.0).sum()  # and so does a lazy operand's method
    assert lazy.is_lazy and float(lazy) == pytest.approx(D.sum())
    d = s.todense()
    assert isinstance(d, np.ndarray) and d.shape == () and d.dtype == np.float64
    assert float(A.max()) == 2.0 and float(A.min()) == -4.0
    assert float(A.mean()) == pytest.approx(D.mean())
    assert int(A.astype(np.int64).sum()) == int(D.astype(np.int64).sum())
    assert bool(A.max() > 1) is True
    assert float(ls.einsum("ij,ij->", A, np.ones((2, 3)))) == pytest.approx(D.sum())
    assert np.asarray(s) == pytest.approx(D.sum())   # a 0-d result is dense: np.asarray works
    assert complex(s) == pytest.approx(complex(D.sum()))


# -- np.asarray on sparse results -------------------------------------------------------------------
def test_np_asarray_sparse_result_raises(monkeypatch):
    monkeypatch.delenv("LAZYSPARSE_AUTO_DENSIFY", raising=False)
    A = ls.asarray(sp.csr_array(np.eye(3)))
    for x in (A, A * 2, A + A, (A * A).materialize()):
        assert not x.format.is_dense
        with pytest.raises(TypeError, match="todense"):
            np.asarray(x)
    dense = A @ np.ones((3, 2))
    assert dense.format.is_dense
    np.testing.assert_array_equal(np.asarray(dense), np.ones((3, 2)))
    np.testing.assert_array_equal(np.asarray(A.sum(axis=0)), np.ones(3))


def test_scipy_on_the_left_names_the_way_out(monkeypatch):
    """scipy.sparse converts an operand it does not know with np.asarray; for a sparse
    lazysparse array the error names .to_scipy() and lazysparse on the left, which work."""
    monkeypatch.delenv("LAZYSPARSE_AUTO_DENSIFY", raising=False)
    S = sp.random_array((5, 5), density=0.4, format="csr", rng=0)
    D = sp.random_array((5, 5), density=0.4, format="csr", rng=1)
    A = ls.asarray(D)
    for f in (lambda: S @ A, lambda: S.multiply(A), lambda: sp.vstack([S, A])):
        with pytest.raises(TypeError, match=r"\.to_scipy\(\).*ls\.asarray\(S\) @ A"):
            f()
    np.testing.assert_allclose((ls.asarray(S) @ A).todense(), (S @ D).toarray())
    np.testing.assert_allclose((S @ A.to_scipy()).toarray(), (S @ D).toarray())


def test_np_asarray_auto_densify(monkeypatch):
    monkeypatch.setenv("LAZYSPARSE_AUTO_DENSIFY", "1")
    A = ls.asarray(sp.csr_array(np.eye(3)))
    out = np.asarray(A * 2)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, 2 * np.eye(3))
    np.testing.assert_array_equal(np.asarray(A, dtype=np.float32), np.eye(3, dtype=np.float32))


# -- materialize / compute ------------------------------------------------------------------------
def test_materialize_keeps_value():
    A = ls.asarray(sp.random_array((40, 30), density=0.1, format="csr", rng=np.random.default_rng(0)))
    x = (A * 3 + A).T
    assert x.is_lazy
    r1 = x.materialize()
    assert not r1.is_lazy and not x.is_lazy
    info1 = ls.cache_info()
    r2 = x.materialize()
    info2 = ls.cache_info()
    assert r2.storage is r1.storage                       # the remembered value, not a recomputation
    assert {k: info2[k] for k in ("hits", "misses", "compiles")} == {k: info1[k] for k in ("hits", "misses", "compiles")}
    assert x.storage is r1.storage
    np.testing.assert_allclose(r1.todense(), 4 * A.todense().T)
    # a concrete array materializes to itself (same storage)
    assert r1.materialize().storage is r1.storage


def test_compute_returns_concrete_arrays():
    D = np.array([[1.0, 0, 2], [0, 3, 0]])
    A = ls.asarray(sp.csr_array(D))
    B = ls.asarray(np.ones((3, 2)))
    a, b = A * 2, A @ B
    ra, rb = ls.compute(a, b)
    assert isinstance(ra, ls.Array) and isinstance(rb, ls.Array)
    assert not ra.is_lazy and not rb.is_lazy
    np.testing.assert_array_equal(ra.todense(), 2 * D)
    np.testing.assert_array_equal(rb.todense(), D @ np.ones((3, 2)))
    assert not a.is_lazy and not b.is_lazy                 # the inputs remember their values too
    (rA,) = ls.compute(A)                                  # non-lazy arguments pass through
    assert rA.storage is A.storage
    shared = A * 5
    r1, r2 = ls.compute(shared.sum(axis=0), shared.sum(axis=1))
    np.testing.assert_array_equal(r1.todense(), 5 * D.sum(axis=0))
    np.testing.assert_array_equal(r2.todense(), 5 * D.sum(axis=1))


# -- no mutation, zero copy -------------------------------------------------------------------------
def test_inputs_not_mutated():
    rng = np.random.default_rng(1)
    S = sp.random_array((30, 20), density=0.2, format="csr", rng=rng)
    C = sp.csc_array(S)
    Dn = rng.standard_normal((30, 20))
    x = rng.standard_normal(20)
    saved = [a.copy() for a in (S.data, S.indices, S.indptr, C.data, C.indices, C.indptr, Dn, x)]
    A, Ac, Ad = ls.asarray(S), ls.asarray(C), ls.asarray(Dn)
    results = ls.compute(A * Ad + Ac, A @ x, (A - Ac).T, ls.exp(A) * 2, A.sum(axis=0), A * 0, -A, Ad / 3)
    for r in results:
        r.todense()
    A.asformat("csc").todense(), A.asformat("dcsr").todense(), Ac.tocsr().todense()
    for a, b in zip((S.data, S.indices, S.indptr, C.data, C.indices, C.indptr, Dn, x), saved):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("idx", [np.int32, np.int64])
def test_zero_copy_csr_csc_dense(idx):
    S0 = sp.random_array((20, 10), density=0.3, format="csr", rng=np.random.default_rng(2))
    S = sp.csr_array((S0.data, S0.indices.astype(idx), S0.indptr.astype(idx)), shape=S0.shape)
    A = ls.asarray(S)
    st = A.storage
    assert A.format == ls.csr and st.index_dtype == idx
    assert np.shares_memory(st.vals, S.data)
    assert np.shares_memory(st.crd[1], S.indices)
    assert np.shares_memory(st.pos[1], S.indptr)
    C = sp.csc_array((S0.T.tocsr().data, S0.T.tocsr().indices.astype(idx), S0.T.tocsr().indptr.astype(idx)),
                     shape=S0.shape)
    Ac = ls.asarray(C)
    assert Ac.format == ls.csc and np.shares_memory(Ac.storage.vals, C.data)
    assert np.shares_memory(Ac.storage.crd[1], C.indices)
    D = np.ones((4, 5))
    assert np.shares_memory(ls.asarray(D).storage.vals, D)
    # copy=True copies
    Acopy = ls.asarray(S, copy=True)
    assert not np.shares_memory(Acopy.storage.vals, S.data)
    np.testing.assert_array_equal(Acopy.todense(), S.toarray())
    # the way back shares too
    back = A.to_scipy()
    assert np.shares_memory(back.data, S.data)


# -- the density verdict of products ----------------------------------------------------------------
def _banded(n, b):
    return sp.diags([np.arange(1.0, n + 1 - abs(o)) for o in range(-b, b + 1)], list(range(-b, b + 1)),
                    shape=(n, n), format="csr")


def test_a_product_of_sparse_matrices_is_dense_only_when_expected_nearly_full():
    """Independence estimates A @ A of a 200x200 band of 13 diagonals 0.57 full (it is 0.125):
    products of sparse operands cluster, so the result stays CSR below 0.9 (compiler/plan/kernel.py
    ``density_rule``). A random 30% matrix squared is nearly full: dense. One sparse operand
    against a dense one keeps the 1/2 rule (``A @ x``, one entry a row: 0.63 expected, and
    exactly that full)."""
    B = _banded(200, 6)
    r = ls.asarray(B) @ ls.asarray(B)
    assert r.format == "csr" and r.materialize().format == "csr"
    np.testing.assert_allclose(r.materialize().todense(), (B @ B).toarray())
    R = sp.random(100, 100, density=0.3, format="csr", random_state=0)
    d = (ls.asarray(R) @ ls.asarray(R)).materialize()
    assert d.format.is_dense
    np.testing.assert_allclose(d.todense(), (R @ R).toarray())
    P = sp.csr_matrix((np.ones(200), np.random.default_rng(0).integers(0, 200, 200), np.arange(201)), shape=(200, 200))
    Q = sp.random(200, 1, density=1.0, format="csc", random_state=1)  # a sparse column, full
    v = (ls.asarray(P) @ ls.asarray(Q)).materialize()
    assert v.format.is_dense  # one sparse factor per term: estimated 0.63 full
    np.testing.assert_allclose(v.todense(), (P @ Q).toarray())
