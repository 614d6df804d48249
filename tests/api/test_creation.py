"""Creation, interop and structural validation, checked against NumPy / scipy / pydata oracles."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import lazysparse as ls
from lazysparse.api.creation import _coords
from lazysparse.api.conversion import convert, to_numpy, to_pydata, to_scipy
from lazysparse.formats import Format, Storage, resolve_format
from lazysparse.formats.validate import validate

sparse = pytest.importorskip("sparse")


def dense_of(a):
    """Oracle dense value of a 2-d concrete array: scipy reads our buffers (no lazysparse kernel)."""
    s = a.storage
    if s.format.is_dense:
        return np.asarray(s.vals)
    return sp.coo_array((s.vals, tuple(_coords(s))), shape=s.shape).toarray()


def nd_dense_of(a):
    s = a.storage
    if s.format.is_dense:
        return np.asarray(s.vals)
    out = np.zeros(s.shape, s.dtype)
    np.add.at(out, tuple(_coords(s)), s.vals)
    return out


def snapshot(m):
    return {k: getattr(m, k).copy() for k in ("data", "indices", "indptr", "row", "col") if hasattr(m, k)}


def assert_unchanged(m, snap):
    for k, v in snap.items():
        np.testing.assert_array_equal(getattr(m, k), v)


def rand_csr(shape=(7, 5), density=0.4, seed=0, idx=np.int32):
    m = sp.random_array(shape, density=density, format="csr", rng=np.random.default_rng(seed))
    m.indices, m.indptr = m.indices.astype(idx), m.indptr.astype(idx)
    return m


# -- scipy ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("idx", [np.int32, np.int64])
@pytest.mark.parametrize("kind", ["csr", "csc"])
def test_scipy_compressed_zero_copy(kind, idx):
    m = rand_csr(idx=idx).asformat(kind)
    m.indices, m.indptr = m.indices.astype(idx), m.indptr.astype(idx)
    a = ls.asarray(m)
    assert a.format == getattr(ls, kind) and not a.is_lazy
    s = a.storage
    assert s.index_dtype == np.dtype(idx)
    assert s.vals is m.data and s.crd[1] is m.indices and s.pos[1] is m.indptr
    np.testing.assert_array_equal(dense_of(a), m.toarray())
    back = a.to_scipy()
    assert isinstance(back, getattr(sp, kind + "_array"))
    assert np.shares_memory(back.data, m.data) and np.shares_memory(back.indices, m.indices)
    np.testing.assert_array_equal(back.toarray(), m.toarray())
    assert ls.asarray(m, format=kind).storage.vals is m.data  # already in that format: kept


@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "bsr", "dia", "lil", "dok"])
@pytest.mark.parametrize("matrix", [False, True])
def test_scipy_every_format(kind, matrix):
    dense = rand_csr((6, 8), seed=3).toarray()
    m = (sp.csr_matrix(dense) if matrix else sp.csr_array(dense)).asformat(kind)
    snap = snapshot(m)
    a = ls.asarray(m)
    assert a.shape == (6, 8) and a.dtype == np.float64
    np.testing.assert_array_equal(dense_of(a), dense)
    validate(a.storage, "test")
    assert_unchanged(m, snap)


def test_mixed_and_odd_index_dtypes_become_int64():
    m = rand_csr()
    m.indptr = m.indptr.astype(np.int64)  # indices stay int32
    s = ls.asarray(m).storage
    assert s.pos[1].dtype == s.crd[1].dtype == np.int64 == s.index_dtype
    m = rand_csr()
    m.indices = m.indices.astype(np.uint16)
    m.indptr = m.indptr.astype(np.uint16)
    a = ls.asarray(m)
    assert a.storage.index_dtype == np.int64
    np.testing.assert_array_equal(dense_of(a), m.toarray())


def test_csr_unsorted_and_duplicates_canonicalized_on_a_copy():
    indptr = np.array([0, 3, 3, 6], np.int32)
    indices = np.array([2, 0, 2, 1, 1, 0], np.int32)
    data = np.array([1.0, 2, 3, 4, 5, 6])
    m = sp.csr_array((data, indices, indptr), shape=(3, 3))
    snap = snapshot(m)
    expect = m.toarray()  # scipy sums duplicates when densifying
    a = ls.asarray(m)
    validate(a.storage, "test")  # ordered + unique now
    assert a.nnz == 4
    np.testing.assert_array_equal(dense_of(a), expect)
    assert_unchanged(m, snap)
    assert not np.shares_memory(a.storage.crd[1], m.indices)
    # unsorted CSC, no duplicates
    c = sp.csc_array((np.array([1.0, 2, 3]), np.array([2, 0, 1], np.int64), np.array([0, 2, 3])), shape=(3, 2))
    a = ls.asarray(c)
    assert a.format == ls.csc and a.storage.crd[1].tolist() == [0, 2, 1]
    np.testing.assert_array_equal(dense_of(a), c.toarray())


def test_coo_duplicates_unsorted_summed():
    row = np.array([2, 0, 2, 1, 0, 2])
    col = np.array([1, 3, 1, 0, 3, 0])
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    m = sp.coo_array((data, (row, col)), shape=(3, 4))
    snap = snapshot(m)
    a = ls.asarray(m)
    assert a.format == ls.coo
    s = a.storage
    ref = m.copy()
    ref.sum_duplicates()
    assert s.nnz == ref.nnz == 4
    assert s.pos[0].tolist() == [0, 4]
    assert list(zip(s.crd[0].tolist(), s.crd[1].tolist())) == [(0, 3), (1, 0), (2, 0), (2, 1)]
    np.testing.assert_array_equal(s.vals, [7.0, 4.0, 6.0, 4.0])
    np.testing.assert_array_equal(dense_of(a), m.toarray())
    assert_unchanged(m, snap)
    out = a.to_scipy()
    assert isinstance(out, sp.coo_array)
    np.testing.assert_array_equal(out.toarray(), m.toarray())


def test_scipy_1d():
    v = sp.coo_array(np.array([0.0, 3.0, 0.0, 5.0]))
    a = ls.asarray(v)
    assert a.shape == (4,) and a.format == Format(["compressed"])
    assert a.storage.crd[0].tolist() == [1, 3] and a.storage.vals.tolist() == [3.0, 5.0]
    validate(a.storage, "test")


def test_scipy_nd_and_1d_csr():
    x = sp.coo_array(np.arange(24.0).reshape(2, 3, 4) % 5)
    a = ls.asarray(x)
    assert a.format == ls.coo and a.shape == (2, 3, 4)
    np.testing.assert_array_equal(nd_dense_of(a), x.toarray())
    v = sp.csr_array(np.array([0.0, 1.0, 0.0, 2.0]))
    a = ls.asarray(v)
    assert a.shape == (4,) and a.storage.crd[0].tolist() == [1, 3]


def test_check_false_still_canonicalizes():
    m = sp.csr_array((np.array([1.0, 2.0]), np.array([3, 1]), np.array([0, 2, 2])), shape=(2, 4))
    a = ls.asarray(m, check=False)
    validate(a.storage, "test")
    np.testing.assert_array_equal(dense_of(a), m.toarray())


def test_int_data_dtype_is_kept():
    m = sp.csr_array(np.array([[0, 3], [4, 0]], dtype=np.uint8))
    a = ls.asarray(m)
    assert a.dtype == np.uint8  # never widened: uint8 arithmetic wraps as NumPy's does
    assert np.shares_memory(a.storage.vals, m.data)
    np.testing.assert_array_equal(dense_of(a), m.toarray())
    assert m.data.dtype == np.uint8


# -- dense, lists, scalars -----------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda x: x, lambda x: x.T, lambda x: np.asfortranarray(x),
                                  lambda x: x[::2, 1:], lambda x: x.astype(np.float32)])
def test_dense_zero_copy(make):
    arr = make(np.arange(24.0).reshape(4, 6))
    a = ls.asarray(arr)
    assert a.format == ls.dense and a.shape == arr.shape and a.dtype == arr.dtype
    assert a.storage.vals is arr
    assert np.shares_memory(a.todense(), arr)  # dense storage: its own buffer back
    np.testing.assert_array_equal(a.todense(), arr)
    c = ls.asarray(arr, copy=True)
    assert not np.shares_memory(c.storage.vals, arr)
    np.testing.assert_array_equal(c.todense(), arr)


@pytest.mark.parametrize("src,expect", [
    (np.uint8, np.uint8), (np.int8, np.int8), (np.int16, np.int16), (">i2", np.int16),
    (np.uint16, np.uint16), (np.uint32, np.uint32), (np.uint64, np.uint64), (">f8", np.float64),
    (">i4", np.int32), (np.bool_, np.bool_), (np.complex64, np.complex64),
])
def test_dense_dtype_mapping(src, expect):
    arr = np.arange(6).reshape(2, 3).astype(src)
    a = ls.asarray(arr)
    assert a.dtype == np.dtype(expect)
    np.testing.assert_array_equal(a.todense(), arr.astype(expect))


@pytest.mark.parametrize("dt", [np.longdouble, np.clongdouble])
def test_long_double_is_refused_not_rounded(dt):
    if np.finfo(dt).eps == np.finfo(np.float64).eps:
        pytest.skip("long double is double on this platform")
    with pytest.raises(TypeError, match=r"^asarray: the input's dtype is .*rounded.*astype"):
        ls.asarray(np.ones((2, 3), dt))


def test_float16_is_refused_not_widened():
    with pytest.raises(TypeError, match=r"^asarray: the input's dtype is float16.*astype\(np.float32\)"):
        ls.asarray(np.ones((2, 3), np.float16))


@pytest.mark.parametrize("bad", [np.array(["a", "b"]), np.array([object(), 1], dtype=object),
                                 np.array(["2020-01-01"], dtype="datetime64[D]"), "text"])
def test_unsupported_dtype_is_type_error(bad):
    with pytest.raises(TypeError, match="asarray"):
        ls.asarray(bad)


def test_lists_and_scalars():
    a = ls.asarray([[1, 2], [3, 4]])
    assert a.shape == (2, 2) and a.dtype == np.int64 and a.format == ls.dense
    np.testing.assert_array_equal(a.todense(), [[1, 2], [3, 4]])
    for v, dt in [(3.5, np.float64), (2, np.int64), (True, np.bool_), (1 + 2j, np.complex128),
                  (np.float32(1.5), np.float32)]:
        s = ls.asarray(v)
        assert s.shape == () and s.dtype == dt and s.todense()[()] == v
    assert float(ls.asarray(2.5)) == 2.5
    with pytest.raises(ValueError, match="asarray"):
        ls.asarray([[1, 2], [3]])


def test_array_passthrough_dtype_copy_device():
    m = rand_csr()
    a = ls.asarray(m)
    assert ls.asarray(a) is a
    b = ls.asarray(a, dtype="float32")
    assert b.dtype == np.float32 and a.dtype == np.float64
    np.testing.assert_allclose(dense_of(b), m.toarray().astype(np.float32))
    c = ls.asarray(a, copy=True)
    assert not np.shares_memory(c.storage.vals, m.data)
    assert not np.shares_memory(c.storage.crd[1], m.indices)
    np.testing.assert_array_equal(dense_of(c), m.toarray())
    d = ls.asarray(m, dtype=np.complex128)
    assert d.dtype == np.complex128 and m.data.dtype == np.float64
    assert ls.asarray(m, device="cpu").format == ls.csr
    with pytest.raises(ValueError, match="device"):
        ls.asarray(m, device="cuda")
    with pytest.raises(TypeError, match="asarray"):
        ls.asarray(m, dtype=np.float16)


# -- pydata/sparse -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 7), (3, 4, 5)])
def test_pydata_coo(shape):
    x = sparse.random(shape, density=0.3, random_state=1)
    a = ls.asarray(x)
    assert a.format == ls.coo and a.shape == shape
    validate(a.storage, "test")
    np.testing.assert_array_equal(nd_dense_of(a), x.todense())
    p = a.to_pydata()
    assert isinstance(p, sparse.COO)
    np.testing.assert_array_equal(p.todense(), x.todense())


def test_pydata_coo_duplicates_unsorted():
    coords = np.array([[1, 0, 1, 0], [2, 1, 2, 0], [0, 0, 0, 3]])
    x = sparse.COO(coords, np.array([1.0, 2.0, 3.0, 4.0]), shape=(2, 3, 4), has_duplicates=True, sorted=False)
    before = x.coords.copy()
    a = ls.asarray(x)
    assert a.nnz == 3
    validate(a.storage, "test")
    np.testing.assert_array_equal(nd_dense_of(a), x.todense())
    np.testing.assert_array_equal(x.coords, before)


@pytest.mark.parametrize("axes,fmt", [((0,), "csr"), ((1,), "csc")])
def test_pydata_gcxs_zero_copy(axes, fmt):
    d = rand_csr(seed=4).toarray()
    g = sparse.GCXS.from_numpy(d, compressed_axes=axes)
    a = ls.asarray(g)
    assert a.format == getattr(ls, fmt)
    assert np.shares_memory(a.storage.vals, g.data)
    np.testing.assert_array_equal(dense_of(a), d)
    p = a.to_pydata()
    assert isinstance(p, sparse.GCXS) and tuple(p.compressed_axes) == axes
    assert np.shares_memory(p.data, g.data) and np.shares_memory(p.indices, g.indices)
    np.testing.assert_array_equal(p.todense(), d)


def test_pydata_gcxs_3d_and_fill_value():
    x = sparse.random((3, 4, 5), density=0.3, random_state=2)
    g = sparse.GCXS(x, compressed_axes=(0, 1))
    a = ls.asarray(g)
    np.testing.assert_array_equal(nd_dense_of(a), x.todense())
    with pytest.raises(ValueError, match="fill_value"):
        ls.asarray(sparse.COO.from_numpy(np.ones((2, 2)), fill_value=1.0))


# -- random, zeros, ones, eye ---------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr", "dcsc", "csf", "dense"])
def test_random_formats(fmt):
    a = ls.random((40, 30), density=0.05, format=fmt, seed=7)
    assert a.format == getattr(ls, fmt)
    validate(a.storage, "test")
    d = dense_of(a)
    assert np.count_nonzero(d) == 60
    assert ((d >= 0) & (d < 1)).all()
    ref = dense_of(ls.random((40, 30), density=0.05, format="coo", seed=7))
    np.testing.assert_array_equal(d, ref)  # same seed, same pattern and values in every format


def test_random_determinism_dtypes_and_large():
    a, b = ls.random((50, 50), density=0.1, seed=3), ls.random((50, 50), density=0.1, seed=3)
    np.testing.assert_array_equal(a.storage.crd[1], b.storage.crd[1])
    np.testing.assert_array_equal(a.storage.vals, b.storage.vals)
    c = ls.random((50, 50), density=0.1, seed=4)
    assert not np.array_equal(dense_of(a), dense_of(c))
    assert ls.random((10, 10), density=0.333).nnz == 33
    i = ls.random((20, 20), density=0.5, dtype="int32", seed=0)
    assert i.dtype == np.int32 and i.storage.vals.min() >= 1 and i.storage.vals.max() <= 9
    f = ls.random((20, 20), density=0.5, dtype="float32", seed=0)
    assert f.dtype == np.float32 and f.storage.vals.max() < 1
    assert ls.random((5, 5), density=0.2, dtype=bool).storage.vals.all()
    assert ls.random((4, 4), density=0).nnz == 0 and ls.random((4, 4), density=1).nnz == 16
    big = ls.random((10**6, 10**6), density=1e-9, seed=0)  # 10^12 elements: sampled, not enumerated
    assert big.nnz == 1000
    validate(big.storage, "test")
    t = ls.random((6, 5, 4), density=0.2, format="coo", seed=1)
    assert t.nnz == 24 and t.format == ls.coo
    validate(t.storage, "test")
    with pytest.raises(ValueError, match="density"):
        ls.random((3, 3), density=1.5)


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo", "dcsr"])
def test_zeros_ones(fmt):
    z = ls.zeros((3, 4), format=fmt)
    o = ls.ones((3, 4), format=fmt, dtype="int64")
    validate(z.storage, "t"), validate(o.storage, "t")
    np.testing.assert_array_equal(dense_of(z), np.zeros((3, 4)))
    np.testing.assert_array_equal(dense_of(o), np.ones((3, 4), np.int64))
    assert o.dtype == np.int64
    if fmt != "dense":
        assert z.nnz == 0 and o.nnz == 12
    t = ls.ones((2, 3, 2), format="csf")
    np.testing.assert_array_equal(nd_dense_of(t), np.ones((2, 3, 2)))
    assert ls.zeros(5).todense().tolist() == [0.0] * 5
    assert ls.zeros((0, 3), format="csr").shape == (0, 3)


@pytest.mark.parametrize("n,m,k", [(4, None, 0), (3, 5, 1), (5, 3, -2), (3, 3, 5), (0, 2, 0)])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense"])
def test_eye(n, m, k, fmt):
    e = ls.eye(n, m, k=k, format=fmt)
    validate(e.storage, "t")
    np.testing.assert_array_equal(dense_of(e), np.eye(n, m, k=k))


# -- to_scipy / to_pydata argument errors ----------------------------------------------------------
def test_to_scipy_errors():
    with pytest.raises(ValueError, match="2-d"):
        to_scipy(ls.random((2, 2, 2), density=0.5, format="coo"))
    with pytest.raises(ValueError, match="format"):
        to_scipy(ls.random((2, 2), density=0.5), "bsr")


# -- validation catalogue ------------------------------------------------------------------------
I = lambda *v: np.array(v, dtype=np.int64)
F = lambda *v: np.array(v, dtype=np.float64)
CSR, CSC = resolve_format("csr", 2), resolve_format("csc", 2)
COO2, COO3, CSF3 = resolve_format("coo", 2), resolve_format("coo", 3), resolve_format("csf", 3)


def csr(indptr, indices, vals, shape=(3, 4), fmt=CSR):
    return Storage(shape, fmt, [None, indptr], [None, indices], vals)


def coo(crds, vals, shape=(3, 4), pos0=None, fmt=None):
    fmt = fmt or resolve_format("coo", len(shape))
    pos0 = I(0, len(vals)) if pos0 is None else pos0
    return Storage(shape, fmt, [pos0] + [None] * (len(shape) - 1), list(crds), vals)


GOOD_CSR = (I(0, 2, 2, 3), I(0, 3, 1), F(1, 2, 3))
CATALOGUE = [
    (csr(I(0, 2, 3), *GOOD_CSR[1:]), r"indptr has length 3 but expected 4"),
    (csr(I(1, 2, 2, 3), *GOOD_CSR[1:]), r"indptr\[0\]=1 but must be 0"),
    (csr(I(0, 2, 1, 3), *GOOD_CSR[1:]), r"indptr is decreasing: indptr\[2\]=1 < indptr\[1\]=2"),
    (csr(I(0, 2, 2, 4), *GOOD_CSR[1:]), r"indptr\[-1\]=4 does not match len\(indices\)=3"),
    (csr(GOOD_CSR[0], I(0, 4, 1), GOOD_CSR[2]), r"indices\[1\]=4 is out of range for 4 columns"),
    (csr(GOOD_CSR[0], I(0, -1, 1), GOOD_CSR[2]), r"indices\[1\]=-1 is out of range for 4 columns"),
    (csr(GOOD_CSR[0], I(2, 0, 1), GOOD_CSR[2]), r"unsorted indices in row 0: indices\[1\]=0 follows indices\[0\]=2"),
    (csr(GOOD_CSR[0], I(1, 1, 1), GOOD_CSR[2]), r"duplicate indices in row 0"),
    (csr(GOOD_CSR[0], GOOD_CSR[1], F(1, 2)), r"data has length 2 but expected 3"),
    (csr(GOOD_CSR[0], GOOD_CSR[1], np.ones((3, 1))), r"data must be a 1-d array"),
    (csr(GOOD_CSR[0], GOOD_CSR[1], np.ones(3, np.float16)), r"data has dtype float16"),
    (csr(GOOD_CSR[0], GOOD_CSR[1].astype(float), GOOD_CSR[2]), r"indices has dtype float64"),
    (csr(GOOD_CSR[0], GOOD_CSR[1].astype(np.int32), GOOD_CSR[2]), r"index arrays mix dtypes"),
    (csr(GOOD_CSR[0], np.array([[0, 3, 1]]), GOOD_CSR[2]), r"indices must be a 1-d array"),
    (csr(GOOD_CSR[0], I(0, 9, 3, 9, 1, 9)[::2], GOOD_CSR[2]), r"indices must be contiguous"),
    (csr(None, GOOD_CSR[1], GOOD_CSR[2]), r"indptr is missing"),
    (csr(I(0, 0, 0, 0), I(), F(), shape=(3, 4, 5)), r"shape \(3, 4, 5\) has 3 dimensions"),
    (csr(I(0, 0, 0, 0), I(), F(), shape=(3, -4)), r"negative dimension"),
    (csr(I(0, 1, 1), I(5), F(1), shape=(3, 2), fmt=CSC), r"indices\[0\]=5 is out of range for 3 rows"),
    (csr(I(0, 1, 2), I(2, 0), F(1, 2), shape=(3, 2), fmt=CSC), None),  # valid
    (coo([I(0, 3), I(1, 1)], F(1, 2)), r"coords\[0\]\[1\]=3 is out of range for 3 rows"),
    (coo([I(0, 1), I(1, 4)], F(1, 2)), r"coords\[1\]\[1\]=4 is out of range for 4 columns"),
    (coo([I(0, 1), I(1)], F(1, 2)), r"coords\[1\] has length 1 but expected 2"),
    (coo([I(0, 1), I(1, 1)], F(1, 2), pos0=I(0, 1)), r"pos\[0\]\[-1\]=1 does not match len\(coords\[0\]\)=2"),
    (coo([I(1, 0), I(1, 1)], F(1, 2)), r"coordinates out of lexicographic order: entry 1 \(0, 1\) follows entry 0 \(1, 1\)"),
    (coo([I(1, 1), I(2, 0)], F(1, 2)), r"out of lexicographic order"),
    (coo([I(1, 1), I(2, 2)], F(1, 2)), r"duplicate coordinates: entry 1 \(1, 2\)"),
    (coo([I(0, 0, 0), I(1, 1, 1), I(0, 2, 2)], F(1, 2, 3), shape=(2, 2, 3)), r"duplicate coordinates: entry 2 \(0, 1, 2\)"),
    (coo([I(0, 0, 1), I(1, 1, 0), I(2, 0, 0)], F(1, 2, 3), shape=(2, 2, 3)), r"out of lexicographic order: entry 1"),
    (coo([I(0, 0, 1), I(1, 1, 0), I(0, 2, 0)], F(1, 2, 3), shape=(2, 2, 3)), None),  # valid
    (Storage((2, 3, 4), CSF3, [I(0, 2), I(0, 1), I(0, 1, 2)], [I(0, 1), I(2, 0), I(3, 1)], F(1, 2)),
     r"pos\[1\] has length 2 but expected 3"),
    (Storage((2, 3, 4), CSF3, [I(0, 2), I(0, 1, 2), I(0, 1, 2)], [I(0, 1), I(2, 0), I(3, 4)], F(1, 2)),
     r"crd\[2\]\[1\]=4 is out of range for axis 2 of size 4"),
    (Storage((2, 3, 4), CSF3, [I(0, 2), I(0, 2, 2), I(0, 1, 2)], [I(0, 1), I(2, 0), I(3, 1)], F(1, 2)),
     r"unsorted crd\[1\] in parent position 0"),
    (Storage((2, 3, 4), CSF3, [I(0, 1), I(0, 1), I(0, 2)], [I(1), I(2), I(3, 3)], F(1, 2)),
     r"duplicate crd\[2\]"),
    (Storage((2, 3, 4), CSF3, [I(0, 1), I(0, 1), I(0, 2)], [I(1), I(2), I(0, 3)], F(1, 2)), None),
    (Storage((2, 3), resolve_format("dense", 2), [None] * 2, [None] * 2, np.ones((3, 2))),
     r"dense values have shape \(3, 2\)"),
    (Storage((2, 3), resolve_format("dense", 2), [None] * 2, [None] * 2, np.ones((2, 3))), None),
    (Storage((5,), resolve_format("csf", 1), [I(0, 2)], [I(3, 1)], F(1, 2)), r"unsorted crd\[0\]"),
]


@pytest.mark.parametrize("k", range(len(CATALOGUE)))
def test_validate_catalogue(k):
    st_, msg = CATALOGUE[k]
    if msg is None:
        validate(st_, "asarray")
        return
    with pytest.raises(ValueError, match=r"^asarray: invalid [\w]+ input: .*" + msg):
        validate(st_, "asarray")


def test_validate_vals_not_array_is_type_error():
    with pytest.raises(TypeError, match="data must be a NumPy array"):
        validate(csr(GOOD_CSR[0], GOOD_CSR[1], [1.0, 2.0, 3.0]), "asarray")


def test_asarray_reports_bad_scipy_input():
    m = sp.csr_array(np.eye(3, 4000))
    ind = m.indices.copy()
    ind[1] = 5000
    m.indices = ind
    with pytest.raises(ValueError, match=r"^asarray: invalid CSR input: indices\[1\]=5000 is out of range "
                                         r"for 4000 columns"):
        ls.asarray(m)
    c = sp.coo_array(np.eye(3))
    c.coords = (np.array([0, 1, 7]), c.coords[1])
    with pytest.raises(ValueError, match=r"asarray: invalid COO input: coords\[0\]\[2\]=7 is out of range"):
        ls.asarray(c)
    bad = sp.csr_array(np.eye(3))
    bad.indptr = np.array([0, 1, 5, 3], np.int32)
    with pytest.raises(ValueError, match="indptr is decreasing"):
        ls.asarray(bad)
    with pytest.raises(ValueError):
        ls.asarray(bad, check=True)


# -- fuzz: malformed pieces never crash ----------------------------------------------------------
ints = st.lists(st.integers(-3, 12), max_size=9)
idx_dt = st.sampled_from([np.int32, np.int64, np.uint8, np.float64])


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 5), st.integers(0, 5)), indptr=ints, indices=ints,
       ndata=st.integers(0, 10), d1=idx_dt, d2=idx_dt, kind=st.sampled_from(["csr", "csc"]))
def test_fuzz_asarray_compressed(shape, indptr, indices, ndata, d1, d2, kind):
    m = (sp.csr_array if kind == "csr" else sp.csc_array)(shape)
    m.indptr, m.indices = np.array(indptr).astype(d1), np.array(indices).astype(d2)  # bypass scipy's checks
    m.data = np.arange(1.0, ndata + 1)
    try:
        a = ls.asarray(m)
    except (ValueError, TypeError):
        return
    validate(a.storage, "test")  # accepted input comes out canonical
    n_outer = shape[0] if kind == "csr" else shape[1]
    ptr, ind = np.array(indptr, dtype=np.int64), np.array(indices, dtype=np.int64)
    outer = np.repeat(np.arange(n_outer), np.diff(ptr))
    ref = np.zeros(shape)
    np.add.at(ref, (outer, ind) if kind == "csr" else (ind, outer), m.data)
    np.testing.assert_array_equal(dense_of(a), ref)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), crds=st.lists(ints, min_size=1, max_size=4),
       ndata=st.integers(0, 10), dt=idx_dt, fmt=st.sampled_from(["coo", "csf", "dcsr", "csr", "csc"]),
       pos=st.lists(ints, min_size=0, max_size=3))
def test_fuzz_validate_storage(shape, crds, ndata, dt, fmt, pos):
    nd = len(shape)
    if fmt in ("csr", "csc", "dcsr") and nd != 2:
        fmt = "coo"
    f = resolve_format(fmt, nd)
    arrs = lambda ls_: [np.array(c).astype(dt) for c in ls_] + [None] * nd
    s = Storage(shape, f, arrs(pos)[:nd], arrs(crds)[:nd], np.arange(float(ndata)))
    try:
        validate(s, "fuzz")
    except (ValueError, TypeError):
        pass
    # also through asarray's COO path: coordinates of mixed lengths/ranges
    try:
        a = ls.asarray(sparse.COO(np.array([c[:ndata] + [0] * (ndata - len(c)) for c in crds[:nd]] +
                                           [[0] * ndata] * (nd - len(crds[:nd])), dtype=np.int64).reshape(nd, ndata),
                                  np.arange(1.0, ndata + 1), shape=tuple(shape), has_duplicates=True))
    except (ValueError, TypeError, IndexError):
        return  # pydata itself may reject coordinates before we see them
    validate(a.storage, "test")


# -- conversions computed by the compiler (need lazysparse's kernels) -----------------------------
def test_to_numpy_of_sparse():
    m = rand_csr(seed=5)
    np.testing.assert_array_equal(to_numpy(ls.asarray(m)), m.toarray())
    np.testing.assert_array_equal(ls.asarray(m.tocoo()).todense(), m.toarray())


@pytest.mark.parametrize("src", ["csr", "csc", "coo", "dense"])
@pytest.mark.parametrize("dst", ["csr", "csc", "coo", "dcsr", "dense"])
def test_convert_between_formats(src, dst):
    d = rand_csr((9, 6), seed=6).toarray()
    a = ls.asarray(d) if src == "dense" else ls.asarray(sp.csr_array(d).asformat(src))
    b = convert(a, dst)
    assert b.format == getattr(ls, dst) and not b.is_lazy
    validate(b.storage, "test")
    np.testing.assert_array_equal(dense_of(b), d)


def test_asarray_with_format_and_scipy_targets():
    d = rand_csr((5, 4), seed=8).toarray()
    a = ls.asarray(d, format="csr")
    assert a.format == ls.csr
    np.testing.assert_array_equal(a.to_scipy().toarray(), d)
    np.testing.assert_array_equal(a.tocsc().to_scipy().toarray(), d)
    assert isinstance(a.to_scipy("csc"), sp.csc_array)
    np.testing.assert_array_equal(a.to_scipy("csc").toarray(), d)
    np.testing.assert_array_equal(ls.asarray(d).to_scipy().toarray(), d)
    np.testing.assert_array_equal(ls.asarray(d).to_pydata().todense(), d)
    t = np.arange(24.0).reshape(2, 3, 4) * (np.arange(24).reshape(2, 3, 4) % 3 == 0)
    np.testing.assert_array_equal(nd_dense_of(ls.asarray(t, format="coo")), t)
    assert a.nnz == np.count_nonzero(d)  # dense -> sparse stores the nonzeros only, as scipy does


@settings(max_examples=30, deadline=None)
@given(fmt=st.sampled_from(["dense", "csr", "csc", "coo", "dcsr", "csf"]),
       dtype=st.sampled_from([np.float64, np.float32, np.int64, np.complex128, np.bool_]),
       width=st.sampled_from([np.int32, np.int64]), seed=st.integers(0, 2**16),
       state=st.sampled_from(["concrete", "lazy", "materialized", "planned", "sum"]))
def test_pickle_round_trips_in_every_state(fmt, dtype, width, seed, state):
    """pickle (and cloudpickle, where installed) of concrete, lazy, materialized and 0-d arrays,
    also after a kernel ran on them (their memos hold weak references): the same values,
    format, dtype and laziness."""
    import pickle
    from tests.oracle import build
    rng = np.random.default_rng(seed)
    D = (rng.random((5, 4)) * (rng.random((5, 4)) < 0.5) * 10).astype(dtype)
    A = build(D, fmt, width)
    x = ls.asarray(np.ones(4, dtype=dtype))
    if state == "concrete":
        v = A
    elif state == "lazy":
        v = A @ x
    elif state == "sum":
        v = (A @ x).sum()
    else:
        v = A @ x
        v.materialize()
        if state == "planned":
            (A @ x + x[:1]).materialize()
            v = A
    dumps = [pickle.dumps]
    try:
        import cloudpickle
        dumps.append(cloudpickle.dumps)
    except ImportError:
        pass
    for dump in dumps:
        w = pickle.loads(dump(v))
        assert (w.is_lazy, w.format, w.dtype, w.shape) == (v.is_lazy, v.format, v.dtype, v.shape)
        np.testing.assert_array_equal(np.asarray(w.todense()), np.asarray(v.todense()))


def test_a_scipy_matrix_warns_once_that_array_semantics_apply(monkeypatch):
    import warnings
    from lazysparse.api import creation
    monkeypatch.setattr(creation, "_WARNED", [False])
    M = sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0]]))
    with pytest.warns(UserWarning, match=r"spmatrix.*`\*` is elementwise"):
        A = ls.asarray(M)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ls.asarray(M)                       # once a process
        ls.asarray(sp.csr_array(M))         # arrays never warn
    np.testing.assert_array_equal((A * A).todense(), M.toarray() * M.toarray())  # elementwise
    assert A.sum(axis=0).shape == (2,)


def test_an_array_does_not_warn(monkeypatch):
    import warnings
    from lazysparse.api import creation
    monkeypatch.setattr(creation, "_WARNED", [False])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ls.asarray(sp.coo_array(np.eye(2)))
