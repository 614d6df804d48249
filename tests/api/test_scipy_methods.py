"""scipy's selection and housekeeping methods on ``ls.Array`` against NumPy on dense copies:
``diagonal``, ``trace``, ``nonzero``, ``reshape``, ``eliminate_zeros``, ``copy``, ``conj``, over
formats, dtypes, explicit zeros and awkward shapes."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import lazysparse as ls
from lazysparse.formats.validate import validate

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS2 = ["dense", "csr", "csc", "coo", "dcsr", "dcsc"]


def dense_of(x):
    return np.asarray(x.todense())


def with_explicit_zeros(a, fmt, rng):
    """``a`` in ``fmt``, sparse formats storing some zeros explicitly (scipy keeps them)."""
    if fmt == "dense":
        return ls.asarray(a)
    m = sp.coo_array(a)
    r, c = np.nonzero((a == 0) & (rng.random(a.shape) < 0.2))
    m = sp.coo_array((np.concatenate([m.data, np.zeros(len(r), a.dtype)]),
                      (np.concatenate([m.row, r]), np.concatenate([m.col, c]))), shape=a.shape)
    return ls.asarray(m).asformat(fmt) if fmt != "coo" else ls.asarray(m)


@SETTINGS
@given(n=st.integers(0, 7), m=st.integers(0, 7), k=st.integers(-8, 8), fmt=st.sampled_from(FORMATS2),
       dtype=st.sampled_from(["float64", "int64", "complex128", "bool"]), seed=st.integers(0, 2**16))
def test_diagonal_and_trace(n, m, k, fmt, dtype, seed):
    rng = np.random.default_rng(seed)
    a = (rng.integers(-3, 4, (n, m)) * (rng.random((n, m)) < 0.5)).astype(dtype)
    A = with_explicit_zeros(a, fmt, rng)
    d = A.diagonal(k)
    assert d.format.is_dense and d.dtype == a.dtype
    np.testing.assert_array_equal(dense_of(d), a.diagonal(k))
    if dtype != "bool":
        assert complex(A.trace(k)) == complex(a.trace(k))


def test_diagonal_stays_lazy_on_square_arrays():
    A = ls.asarray(sp.random_array((30, 30), density=0.2, format="csr", rng=1))
    d = A.diagonal()
    assert d.is_lazy
    np.testing.assert_allclose(dense_of((d * 2).materialize()), 2 * A.todense().diagonal())
    lazy = A @ A
    np.testing.assert_allclose(dense_of(lazy.diagonal()), (A.todense() @ A.todense()).diagonal())


@SETTINGS
@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=3), seed=st.integers(0, 2**16), data=st.data())
def test_nonzero_leaves_explicit_zeros_out(shape, seed, data):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, shape) * (rng.random(shape) < 0.5)
    fmts = {1: ["dense", ls.Format(["compressed"]), "coo"], 2: FORMATS2,
            3: ["dense", "csf", "coo", ls.Format(["compressed"] * 3, order=(2, 0, 1))]}[len(shape)]
    fmt = data.draw(st.sampled_from(fmts))
    A = with_explicit_zeros(a, fmt, rng) if len(shape) == 2 else ls.asarray(a, format=fmt)
    got = A.nonzero()
    want = np.nonzero(a)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@SETTINGS
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), fmt_i=st.integers(0, 3),
       order=st.sampled_from(["C", "F"]), seed=st.integers(0, 2**16), data=st.data())
def test_reshape(shape, fmt_i, order, seed, data):
    rng = np.random.default_rng(seed)
    a = rng.random(shape) * (rng.random(shape) < 0.5)
    fmts = {1: ["dense", ls.Format(["compressed"]), "coo", "coo"], 2: ["dense", "csr", "csc", "coo"],
            3: ["dense", "csf", "coo", ls.Format(["compressed"] * 3, order=(2, 0, 1))]}[len(shape)]
    A = ls.asarray(a, format=fmts[fmt_i])
    size = a.size
    divisors = [d for d in range(1, size + 1) if size % d == 0] or [1]
    d0 = data.draw(st.sampled_from(divisors))
    new = data.draw(st.sampled_from([(size,), (d0, -1), (-1, d0, 1), (1, d0, -1)]))
    if size == 0:
        new = data.draw(st.sampled_from([(0,), (0, 3), (2, 0, 1)]))
    got = A.reshape(new, order=order)
    want = a.reshape(new, order=order)
    assert got.shape == want.shape
    if not got.format.is_dense:
        validate(got.storage, "reshape")
    np.testing.assert_array_equal(dense_of(got), want)
    if got.ndim == A.ndim:
        assert got.format == A.format


def test_reshape_errors():
    A = ls.asarray(sp.random_array((4, 6), density=0.5, format="csr", rng=0))
    with pytest.raises(ValueError, match=r"reshape: cannot reshape array of size 24 into shape \(5, 5\)"):
        A.reshape(5, 5)
    with pytest.raises(ValueError, match=r"one unknown dimension"):
        A.reshape(-1, -1)
    with pytest.raises(ValueError, match=r"order must be 'C' or 'F'"):
        A.reshape(24, order="A")
    np.testing.assert_array_equal(dense_of(A.reshape(3, 8)), A.todense().reshape(3, 8))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr"])
def test_eliminate_zeros_copy_conj(fmt):
    rng = np.random.default_rng(4)
    a = (rng.random((6, 5)) * (rng.random((6, 5)) < 0.5)) * (1 + 2j)
    A = with_explicit_zeros(a, fmt, rng)
    B = A
    assert A.eliminate_zeros() is None  # scipy's: in place (A is rebound), None
    assert B.nnz == np.count_nonzero(a) and B.format.name == fmt and len(B.storage.vals) == B.nnz
    np.testing.assert_array_equal(dense_of(B), a)
    C = A.copy()
    assert not C.is_lazy and C.nnz == A.nnz
    assert not np.shares_memory(C.storage.vals, A.storage.vals)
    np.testing.assert_array_equal(dense_of(A.conj().materialize()), a.conj())


@pytest.mark.parametrize("fmt", ["dense", "csr", "coo"])
def test_numpy_functions_dispatch(fmt):
    rng = np.random.default_rng(6)
    a = rng.random((5, 7)) * (rng.random((5, 7)) < 0.5)
    A = ls.asarray(a, format=fmt)
    np.testing.assert_array_equal(dense_of(np.diagonal(A, -2)), np.diagonal(a, -2))
    assert float(np.trace(A, 1)) == pytest.approx(np.trace(a, 1))
    np.testing.assert_array_equal(dense_of(np.reshape(A, (7, 5), order="F")), np.reshape(a, (7, 5), order="F"))
    for g, w in zip(np.nonzero(A), np.nonzero(a)):
        np.testing.assert_array_equal(g, w)
    assert np.count_nonzero(A) == np.count_nonzero(a)
    with pytest.raises(TypeError):  # other axes: NumPy's TypeError, no densification
        np.diagonal(A, 0, 1, 0)
    np.testing.assert_array_equal(dense_of(np.count_nonzero(A, axis=0)), np.count_nonzero(a, axis=0))


@SETTINGS
@given(fmt=st.sampled_from(FORMATS2), lo=st.one_of(st.none(), st.sampled_from([-1.5, 0.0, 0.5])),
       hi=st.one_of(st.none(), st.sampled_from([-0.5, 0.0, 2.0])), seed=st.integers(0, 2**16))
def test_clip_and_one_argument_where(fmt, lo, hi, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (5, 6)) * (rng.random((5, 6)) < 0.5) * 1.0
    A = ls.asarray(a, format=fmt)
    if lo is None and hi is None:
        with pytest.raises(ValueError, match="clip: give a_min, a_max or both"):
            A.clip(lo, hi)
    else:
        np.testing.assert_array_equal(dense_of(A.clip(lo, hi).materialize()), np.clip(a, lo, hi))
        np.testing.assert_array_equal(dense_of(np.clip(A, lo, hi).materialize()), np.clip(a, lo, hi))
    for g, w in zip(np.where(A), np.where(a)):
        np.testing.assert_array_equal(g, w)
