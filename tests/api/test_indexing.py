"""``Array.__getitem__`` against NumPy on dense copies: basic indexing (integers, slices with any
step, None, Ellipsis), one integer or boolean array, and NumPy's advanced indexing (several
integer arrays broadcast together, N-d integer arrays, N-d boolean masks dense or sparse), over
formats, dtypes, index widths and awkward shapes (empty rows, zero-size axes, one element,
duplicates in COO input)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import lazysparse as ls
from lazysparse.formats.validate import validate

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = {1: ["dense", ls.Format(["compressed"]), "coo"],
           2: ["dense", "csr", "csc", "coo", "dcsr", "dcsc"],
           3: ["dense", "csf", "coo", ls.Format(["dense", "compressed", "compressed"]),
               ls.Format(["compressed"] * 3, order=(2, 0, 1))]}


def values(x):
    return np.asarray(x.todense()) if x.ndim else np.asarray(x.todense()).reshape(())


@st.composite
def keys(draw, shape):
    """A NumPy key of basic items and at most one integer or boolean array."""
    nd = len(shape)
    n_idx = draw(st.integers(0, nd))
    axes = list(range(n_idx))
    items = []
    has_array = False
    for a in axes:
        n = shape[a]
        kind = draw(st.sampled_from(["int", "slice", "slice", "array", "bool"]))
        if kind == "int" and n > 0:
            items.append(draw(st.integers(-n, n - 1)))
        elif kind in ("array", "bool") and not has_array:
            has_array = True
            if kind == "bool":
                items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool))
            else:
                items.append(draw(st.lists(st.integers(-n, n - 1), max_size=5)) if n else [])
        else:
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2]))
            lo = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
            hi = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
            items.append(slice(lo, hi, step))
    # sprinkle None and Ellipsis
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@SETTINGS
@given(data=st.data(), nd=st.integers(1, 3), density=st.sampled_from([0.0, 0.3, 1.0]),
       dtype=st.sampled_from(["float64", "int32", "complex64", "bool"]),
       index=st.sampled_from([np.int32, np.int64]), seed=st.integers(0, 2**16))
def test_getitem_matches_numpy(data, nd, density, dtype, index, seed):
    shape = tuple(data.draw(st.lists(st.integers(0, 6), min_size=nd, max_size=nd)))
    rng = np.random.default_rng(seed)
    a = (rng.integers(1, 9, shape) * (rng.random(shape) < density)).astype(dtype)
    if nd >= 2 and shape[0] > 1:
        a[1] = 0  # an empty row
    fmt = data.draw(st.sampled_from(FORMATS[nd]))
    A = ls.asarray(a, format=fmt)
    if index == np.int64 and not A.format.is_dense:
        st_ = A.storage
        st_.pos = [p if p is None else p.astype(np.int64) for p in st_.pos]
        st_.crd = [c if c is None else c.astype(np.int64) for c in st_.crd]
        st_.index_dtype = np.dtype(np.int64)
    before = a.copy()
    key = data.draw(keys(shape))
    try:
        want = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            A[key]
        return
    got = A[key]
    if not np.shape(want):  # an element: a NumPy scalar, as NumPy's
        assert isinstance(got, np.generic) and got.dtype == a.dtype and got == want, (got, want)
        return
    if not got.format.is_dense:
        validate(got.storage, "getitem")  # ordered, unique, in range: kernels trust it
    assert got.shape == np.shape(want)
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(values(got), want)
    np.testing.assert_array_equal(a, before)
    if not A.format.is_dense and got.ndim == nd and not any(k is None for k in (key if isinstance(key, tuple) else (key,))):
        assert got.format == A.format  # a sparse result keeps its operand's format
    if got.ndim:  # the result works as an operand
        np.testing.assert_array_equal(values((got * 2).materialize()), want * 2)


@pytest.mark.parametrize("fmt", FORMATS[3])
@pytest.mark.parametrize("key", [(None, slice(None), 0, Ellipsis, [1]), (slice(None), 0, Ellipsis, [1]),
                                 (slice(None), 0, [1]), (0, Ellipsis, [1, 2]), ([1], Ellipsis, 0)])
def test_an_ellipsis_over_no_axis_parts_the_advanced_indices(fmt, key):
    """NumPy puts the array's axis first when an ellipsis, even one standing for no axis,
    sits between the advanced indices (found by test_getitem_matches_numpy)."""
    a = np.arange(1.0, 25.0).reshape(2, 3, 4)
    got = ls.asarray(a, format=fmt)[key]
    got = np.asarray(got.todense()) if hasattr(got, "todense") else np.asarray(got)
    assert got.shape == a[key].shape
    np.testing.assert_array_equal(got, a[key])


def test_csr_rows_and_columns_like_scipy():
    M = sp.random_array((50, 40), density=0.1, format="csr", rng=3)
    A = ls.asarray(M)
    d = M.toarray()
    for key in [7, slice(3, 17), slice(17, 3, -1), (slice(None), 5), (slice(2, 30, 4), slice(None, None, -1)),
                ([4, 4, 0, 49],), (10, [0, 39, 5]), (-1,)]:
        got = A[key]
        np.testing.assert_array_equal(values(got), d[key])
    assert A[3:17].format == ls.csr and A[:, 5].format == ls.coo
    assert float(A[7, 3]) == d[7, 3]


def test_coo_with_duplicates():
    M = sp.coo_array((np.array([1.0, 2.0, 3.0]), (np.array([0, 0, 2]), np.array([1, 1, 0]))), shape=(3, 2))
    A = ls.asarray(M)
    np.testing.assert_array_equal(values(A[0]), [0.0, 3.0])
    np.testing.assert_array_equal(values(A[::-1, 1]), [0.0, 0.0, 3.0])


def test_lazy_operand_is_computed_first():
    A = ls.asarray(sp.random_array((9, 8), density=0.4, format="csr", rng=1))
    lazy = A * 3.0
    assert lazy.is_lazy
    np.testing.assert_allclose(values(lazy[2:5, ::2]), 3.0 * A.todense()[2:5, ::2])


def test_dense_basic_index_is_a_view_and_arrays_copy():
    a = np.arange(12.0).reshape(3, 4)
    A = ls.asarray(a)
    assert np.shares_memory(np.asarray(A[1:, ::2].todense()), a)
    assert not np.shares_memory(np.asarray(A[[0, 2]].todense()), a)


def test_errors():
    A = ls.asarray(sp.random_array((4, 5), density=0.5, format="csr", rng=0))
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for axis 0 with size 4"):
        A[4]
    with pytest.raises(IndexError, match=r"too many indices for array: array is 2-dimensional, but 3"):
        A[1, 2, 3]
    with pytest.raises(IndexError, match=r"single ellipsis"):
        A[..., ...]
    with pytest.raises(IndexError, match=r"index \(4\) out of range"):
        A[[0, 4], [1, 2]]
    with pytest.raises(IndexError, match=r"shape mismatch: indexing arrays could not be broadcast"):
        A[[0, 1], [1, 2, 3]]
    with pytest.raises(IndexError, match=r"bool index for axis 1 has shape \(4,\) instead of \(5,\)"):
        A[:, np.ones(4, bool)]
    with pytest.raises(IndexError, match=r"bool index .* has shape \(4, 4\) instead of \(4, 5\)"):
        A[np.ones((4, 4), bool)]
    with pytest.raises(IndexError, match=r"Index dimension"):
        A["foo"]
    with pytest.raises(IndexError, match=r"Only 1D or 2D"):
        A[:1, [[1, 3]]]
    with pytest.raises(IndexError, match=r"valid indices, got float"):
        A[1.5]
    with pytest.raises(IndexError, match=r"boolean index did not match"):
        A[np.array([True, False])]
    with pytest.raises(IndexError, match=r"boolean scalar"):
        A[True]
    with pytest.raises(ValueError, match=r"slice step cannot be zero"):
        A[::0]


def test_iteration_yields_the_rows():
    a = np.arange(6.0).reshape(3, 2)
    for fmt in ("dense", "csr", "coo"):
        rows = [values(r) for r in ls.asarray(a, format=fmt)]
        np.testing.assert_array_equal(np.array(rows), a)
    with pytest.raises(TypeError, match="0-d"):
        iter(ls.asarray(np.float64(1.0)))


@st.composite
def fancy_keys(draw, shape):
    """A NumPy key of several integer arrays (broadcastable, any dimension), or a 2-d mask,
    with slices and integers between them."""
    m, n = shape
    ints = lambda size, dims: np.array(draw(st.lists(st.integers(-size, size - 1), min_size=dims[0] * dims[1],
                                                     max_size=dims[0] * dims[1])), dtype=np.int64).reshape(dims)
    kind = draw(st.sampled_from(["paired", "outer", "2d", "mask", "mixed"]))
    k = draw(st.integers(0, 3))
    if kind == "paired":
        return ints(m, (1, k))[0], ints(n, (1, k))[0]
    if kind == "outer":
        return np.ix_(ints(m, (1, k))[0], ints(n, (1, draw(st.integers(0, 3))))[0])
    if kind == "2d":
        return ints(m, (k, 1)), ints(n, (1, 2))
    if kind == "mask":
        return np.array(draw(st.lists(st.booleans(), min_size=m * n, max_size=m * n))).reshape(shape)
    return draw(st.sampled_from([slice(None), slice(1, None, 2), Ellipsis])), ints(n, (1, k))[0]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 5), st.integers(1, 5), st.data(), st.sampled_from(["dense", "csr", "csc", "coo"]),
       st.sampled_from([np.int64, np.float64, np.complex128, np.bool_]))
def test_fancy_keys_match_numpy(m, n, data, fmt, dtype):
    rng = np.random.default_rng(m * 7 + n)
    a = (rng.integers(-3, 4, (m, n)) * (rng.random((m, n)) < 0.5)).astype(dtype)
    key = data.draw(fancy_keys((m, n)))
    A = ls.asarray(a, format=fmt)
    want = a[key]
    if fmt in ("csr", "csc") and want.ndim > 2:
        with pytest.raises(IndexError, match="Only 1D or 2D"):
            A[key]
        return
    got = A[key]
    assert got.dtype == a.dtype and got.shape == want.shape
    np.testing.assert_array_equal(values(got), want)
    if not got.format.is_dense:
        validate(got.storage, "test")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense"])
def test_fancy_forms_scipy_reads(fmt):
    b = np.arange(50.0).reshape(5, 10) * (np.arange(50).reshape(5, 10) % 3 == 0)
    A = ls.asarray(b, format=fmt)
    np.testing.assert_array_equal(values(A[[1, 2]][:, [0, 3]]), b[[1, 2]][:, [0, 3]])
    np.testing.assert_array_equal(values(A[np.ix_([4, 0], [9, -1, 2])]), b[np.ix_([4, 0], [9, -1, 2])])
    np.testing.assert_array_equal(values(A[[-1, 0], [2, -3]]), b[[-1, 0], [2, -3]])
    np.testing.assert_array_equal(values(A[[2, 4], ..., [2, 4]]), b[[2, 4], ..., [2, 4]])
    mask = b > 20
    for m in (mask, ls.asarray(mask, format="csr"), sp.csr_array(mask), sp.csc_array(mask), A > 20):
        got = A[m]
        assert got.ndim == 1
        np.testing.assert_array_equal(values(got), b[mask])  # row-major, as NumPy
    assert A[[], []].shape == (0,) and A[np.zeros((0, 2), np.int64), 1].shape == (0, 2)
    i32 = np.array([3, 1], dtype=np.int32)
    np.testing.assert_array_equal(values(A[i32, i32]), b[i32, i32])
    if fmt != "dense":
        assert A[[1, 2], [0, 3]].format.ndim == 1  # scipy: a 1-d COO
        assert A[[[1], [2]], [0, 3]].format == A.format  # 2-d: the operand's format
