"""lazysparse/api/statistics.py against NumPy on dense copies: var/std, the NaN-ignoring
reductions, argmax/argmin (ties, NaN, implicit zeros before and after the stored extreme),
ptp, count_nonzero, average, norm, isclose/allclose/array_equal, outer/inner/vdot and the
``*_like`` constructors, over formats, dtypes, index widths, axes, zero-size and size-one
shapes, stored zeros and COO input with duplicates."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import lazysparse as ls
from lazysparse.api import statistics as S

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = {1: ["dense", ls.Format(["compressed"]), "coo"], 2: ["dense", "csr", "csc", "coo", "dcsr"],
           3: ["dense", "csf", "coo"]}


def values(x):
    if isinstance(x, ls.Array):
        return np.asarray(x.todense())
    return np.asarray(x)


def operand(data, nd, dtype, specials=False, min_side=0):
    shape = tuple(data.draw(st.integers(min_side, 4)) for _ in range(nd))
    seed = data.draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    pool = [-3, -1, 0, 0, 0, 1, 2, 5]
    if specials and np.dtype(dtype).kind in "fc":
        pool += [np.nan, np.inf, -np.inf, -0.0]
    a = rng.choice(np.array(pool, dtype=float), size=shape) * (rng.random(shape) < 0.6)
    if specials and np.dtype(dtype).kind in "fc":  # NaN * False is NaN: keep some NaN slices
        a = np.where(rng.random(shape) < 0.15, np.nan, a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = a.astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * (rng.integers(-1, 2, shape) * (a != 0))
    fmt = data.draw(st.sampled_from(FORMATS[nd]))
    idx = data.draw(st.sampled_from(["int32", "int64"]))
    x = ls.asarray(a, format=fmt)
    if not x.format.is_dense and idx == "int64":  # the same entries with 64-bit index arrays
        s = x.storage
        s.pos = [p if p is None else p.astype(np.int64) for p in s.pos]
        s.crd = [c if c is None else c.astype(np.int64) for c in s.crd]
        s.index_dtype = np.dtype(np.int64)
    return a, x


def axis_of(data, nd, allow_tuple=True):
    choices = [None] + list(range(-nd, nd))
    if allow_tuple and nd >= 2:
        choices.append((0, nd - 1))
    return data.draw(st.sampled_from(choices))


def close(got, want, dtype):
    got = values(got)
    assert got.shape == np.shape(want)
    rtol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)


# half the module's examples: each one compiles two kernels per axis choice, the suite's
# costliest hypothesis test by compile time
@settings(SETTINGS, max_examples=30)
@given(data=st.data(), nd=st.integers(1, 3),
       dtype=st.sampled_from(["float64", "float32", "int32", "bool", "complex128"]),
       ddof=st.integers(0, 2), keepdims=st.booleans())
def test_var_std_match_numpy(data, nd, dtype, ddof, keepdims):
    a, x = operand(data, nd, dtype)
    axis = axis_of(data, nd)
    before = values(x).copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("var", "std"):
            want = getattr(np, name)(a, axis=axis, ddof=ddof, keepdims=keepdims)
            got = getattr(S, name)(x, axis=axis, ddof=ddof, keepdims=keepdims)
            assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
            close(got, want, dtype)
    np.testing.assert_array_equal(values(x), before)


def test_var_is_computed_on_the_pattern_only():
    """The sparse route never forms the dense ``x - mean``: every kernel's result is sparse or
    a vector."""
    A = sp.random_array((3000, 40), density=0.01, format="csr", rng=0)
    text = ls.explain(S.var(ls.asarray(A), axis=0))
    assert "subtract(T0[" in text
    for line in text.splitlines():
        if line.startswith("kernel") and "subtract(T0[" in line and "[0," in line:
            assert "multiply(subtract" in line
    np.testing.assert_allclose(values(S.var(ls.asarray(A), axis=0)), A.toarray().var(axis=0), rtol=1e-10)
    # large values with a small spread: no cancellation from sum(x**2) - n * mean**2
    B = sp.csr_array(np.full((50, 3), 1e8) + np.arange(150).reshape(50, 3) * 1e-3)
    np.testing.assert_allclose(values(S.var(ls.asarray(B), axis=0)), B.toarray().var(axis=0), rtol=1e-6)


@SETTINGS
@given(data=st.data(), nd=st.integers(1, 3), dtype=st.sampled_from(["float64", "float32", "int32", "bool"]),
       keepdims=st.booleans(), name=st.sampled_from(["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "ptp"]))
def test_nan_reductions_match_numpy(data, nd, dtype, keepdims, name):
    a, x = operand(data, nd, dtype, specials=True)
    axis = axis_of(data, nd, allow_tuple=name not in ("ptp",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        except (ValueError, TypeError) as e:
            with pytest.raises(type(e)):
                values(getattr(S, name)(x, axis=axis, keepdims=keepdims))
            return
        got = getattr(S, name)(x, axis=axis, keepdims=keepdims)
        assert np.dtype(got.dtype) == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
        close(got, want, dtype)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), nd=st.integers(1, 3), dtype=st.sampled_from(["float64", "float32", "int32", "int64", "bool"]),
       keepdims=st.booleans(), big=st.booleans())
def test_argmax_argmin_match_numpy(data, nd, dtype, keepdims, big):
    a, x = operand(data, nd, dtype, specials=True)
    axis = data.draw(st.sampled_from([None] + list(range(-nd, nd))))
    name = "argmax" if big else "argmin"
    before = values(x).copy()
    try:
        want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    except ValueError:
        with pytest.raises(ValueError, match=name):
            getattr(S, name)(x, axis=axis, keepdims=keepdims)
        return
    got = getattr(S, name)(x, axis=axis, keepdims=keepdims)
    if axis is None and not keepdims:
        assert isinstance(got, np.integer) and got == want
    else:
        assert got.dtype == np.int64
        np.testing.assert_array_equal(values(got), want)
    np.testing.assert_array_equal(values(x), before)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr"])
def test_argmax_implicit_zero_rules(fmt):
    """Stored extreme above zero, below zero (the first gap wins), equal to zero (the earlier
    of the stored zero and the first gap), a full row, an empty row, NaN first."""
    a = np.array([[0, -1, 0, 4, 4],      # stored max 4 at 3
                  [-2, -1, 0, -3, -1],   # max 0 at 2 (an implicit zero; stored values negative)
                  [-1, -2, -3, -4, -5],  # full row: stored max -1 at 0
                  [0, 0, 0, 0, 0],       # empty row: 0
                  [-1, 0, 0, np.nan, 2],  # NaN wins
                  [-5, -4, -1, -2, 0]], dtype=float)  # first gap at 4
    x = ls.asarray(a, format=fmt)
    for name in ("argmax", "argmin"):
        for axis in (None, 0, 1):
            np.testing.assert_array_equal(values(getattr(S, name)(x, axis=axis)),
                                          getattr(np, name)(a, axis=axis))
    # stored explicit zeros before the first gap
    A = sp.csr_array((np.array([0.0, -1.0, 0.0]), np.array([1, 2, 4]), np.array([0, 3])), shape=(1, 5))
    X = ls.asarray(A)
    assert values(S.argmax(X, axis=1)).tolist() == [0]
    assert values(S.argmin(X, axis=1)).tolist() == [2]
    # duplicates in COO input are summed before the selection
    C = sp.coo_array((np.array([-1.0, 3.0, -5.0]), (np.array([0, 0, 0]), np.array([1, 1, 2]))), shape=(1, 3))
    assert values(S.argmax(ls.asarray(C), axis=1)).tolist() == [1]
    assert values(S.argmin(ls.asarray(C), axis=1)).tolist() == [2]


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("at", [0, 1023, 1024, 2500, 4095])
def test_argmax_flat_first_gap_far_in(fmt, at):
    """``axis=None`` with every stored value negative: the answer is the first implicit zero,
    found past the first prefixes of a row-major walk (and by a sort for CSC)."""
    a = -np.arange(1.0, 4097.0).reshape(64, 64)
    a.reshape(-1)[at] = 0.0
    a.reshape(-1)[at + 7:] *= np.arange(4096 - at - 7) % 3 != 0
    x = ls.asarray(a, format=fmt)
    assert S.argmax(x) == np.argmax(a) == at
    assert S.argmin(-x) == np.argmin(-a)
    np.testing.assert_array_equal(values(S.argmax(x, axis=1)), np.argmax(a, axis=1))


def test_arg_errors():
    x = ls.asarray(sp.random_array((3, 0), density=0.5, format="csr", rng=0))
    with pytest.raises(ValueError, match="argmax"):
        S.argmax(x, axis=1)
    assert values(S.argmax(x, axis=0)).shape == (0,)
    with pytest.raises(TypeError, match="argmin"):
        S.argmin(ls.asarray(np.ones(3, complex)))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        S.argmax(ls.asarray(np.ones((2, 2))), axis=2)
    with pytest.raises(TypeError, match="axis"):
        S.argmax(ls.asarray(np.ones((2, 2))), axis=(0, 1))


@SETTINGS
@given(data=st.data(), nd=st.integers(1, 2), dtype=st.sampled_from(["float64", "int32", "complex128"]),
       keepdims=st.booleans())
def test_norm_matches_numpy(data, nd, dtype, keepdims):
    a, x = operand(data, nd, dtype)
    if nd == 1:
        ord_ = data.draw(st.sampled_from([None, 0, 1, 2, 3, np.inf, -np.inf]))
        axis = data.draw(st.sampled_from([None, 0]))
    else:
        ord_ = data.draw(st.sampled_from([None, "fro", 1, -1, np.inf, -np.inf]))
        axis = data.draw(st.sampled_from([None, (0, 1), (1, 0)]))
        if 0 in a.shape and ord_ in (1, -1, np.inf, -np.inf):
            return  # NumPy: a zero-size reduction without identity, like max
    try:
        want = np.linalg.norm(a, ord_, axis, keepdims)
    except ValueError:
        with pytest.raises(ValueError):
            values(S.norm(x, ord_, axis, keepdims))
        return
    got = S.norm(x, ord_, axis, keepdims)
    close(got, want, dtype)
    close(np.linalg.norm(x, ord_, axis, keepdims), want, dtype)


@SETTINGS
@given(data=st.data(), nd=st.integers(1, 2), dtype=st.sampled_from(["float64", "float32", "int32"]),
       equal_nan=st.booleans())
def test_isclose_allclose_array_equal(data, nd, dtype, equal_nan):
    a, x = operand(data, nd, dtype, specials=True)
    b = a.copy()
    if a.size and data.draw(st.booleans()):
        flat = b.reshape(-1)
        flat[data.draw(st.integers(0, a.size - 1))] += 1 if np.dtype(dtype).kind != "f" else 1e-3
    y = ls.asarray(b, format=data.draw(st.sampled_from(FORMATS[nd])))
    np.testing.assert_array_equal(values(S.isclose(x, y, equal_nan=equal_nan)),
                                  np.isclose(a, b, equal_nan=equal_nan))
    assert S.allclose(x, y, equal_nan=equal_nan) == np.allclose(a, b, equal_nan=equal_nan)
    assert S.array_equal(x, y, equal_nan=equal_nan) == np.array_equal(a, b, equal_nan=equal_nan)
    assert S.array_equal(x, ls.asarray(np.zeros((1,) * (nd + 1)))) is False


def test_average_products_likes():
    a = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    x = ls.asarray(a, format="csr")
    for kw in ({}, {"axis": 0}, {"axis": 1, "weights": [1, 2, 3]}, {"weights": a + 1},
               {"axis": 0, "weights": [1, 3], "keepdims": True}):
        np.testing.assert_allclose(values(S.average(x, **kw)), np.average(a, **kw))
        np.testing.assert_allclose(values(np.average(x, **kw)), np.average(a, **kw))
    # infinities and NaN in the data do not reach the weights' sums; bool data averages in float64
    b = np.array([[np.inf, 1.0, 0.0], [2.0, 0.0, np.nan]])
    for fmt in ("dense", "csr"):
        y = ls.asarray(b, format=fmt)
        for kw in ({"weights": np.ones((2, 3))}, {"axis": 1, "weights": [1.0, 2.0, 0.5]}):
            np.testing.assert_allclose(values(S.average(y, **kw)), np.average(b, **kw), equal_nan=True)
        for g, w in zip(S.average(y, axis=0, returned=True), np.average(b, axis=0, returned=True)):
            np.testing.assert_allclose(values(g), w, equal_nan=True)
    with pytest.raises(ZeroDivisionError):
        S.average(ls.asarray(np.array([np.nan, 1.0])), weights=np.array([1.0, -1.0]))
    t = np.array([[True, False], [True, True]])
    w32 = np.ones((2, 2), np.float32)
    assert S.average(ls.asarray(t), weights=w32).dtype == np.average(t, weights=w32).dtype
    avg, wsum = S.average(x, axis=1, weights=[1, 2, 3], returned=True)
    np.testing.assert_allclose(values(wsum), [6.0, 6.0])
    with pytest.raises(ZeroDivisionError, match="average"):
        S.average(x, axis=1, weights=[1, -1, 0])
    with pytest.raises(ValueError, match="average"):
        S.average(x, axis=1, weights=[1, 2])
    v = np.array([0.0, 1.5, 0.0, -2.0])
    sv = ls.asarray(v, format=ls.Format(["compressed"]))
    np.testing.assert_array_equal(values(S.outer(sv, a)), np.outer(v, a))
    np.testing.assert_array_equal(values(S.inner(x, x)), np.inner(a, a))
    np.testing.assert_array_equal(values(S.inner(sv, sv)), np.inner(v, v))
    c = a + 1j * a[::-1]
    np.testing.assert_allclose(values(S.vdot(ls.asarray(c, format="coo"), x)), np.vdot(c, a))
    with pytest.raises(ValueError, match="inner"):
        S.inner(x, sv)
    z = S.zeros_like(x)
    assert z.format == ls.csr and z.nnz == 0 and z.shape == (2, 3)
    assert S.zeros_like(x, dtype="int32", shape=(4,)).dtype == np.int32
    np.testing.assert_array_equal(values(S.ones_like(x)), np.ones_like(a))
    np.testing.assert_array_equal(values(S.full_like(x, 7, dtype="int8")), np.full_like(a, 7, dtype="int8"))
    np.testing.assert_array_equal(values(S.count_nonzero(x, axis=1)), np.count_nonzero(a, axis=1))
    np.testing.assert_array_equal(values(S.count_nonzero(x, axis=(0, 1), keepdims=True)),
                                  np.count_nonzero(a, axis=(0, 1), keepdims=True))
    assert S.count_nonzero(x) == 3


def test_numpy_dispatch():
    """NumPy's functions reach these implementations (NEP-18) and decline what they do not take."""
    a = np.array([[0.0, np.nan, 1.0], [2.0, 0.0, -1.0]])
    x = ls.asarray(a, format="csr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in (np.nansum, np.nanmax, np.nanmin, np.nanmean, np.nanprod, np.var, np.std, np.ptp):
            np.testing.assert_allclose(values(f(x, axis=1)), f(a, axis=1), equal_nan=True)
    np.testing.assert_array_equal(values(np.argmax(x, axis=0)), np.argmax(a, axis=0))
    assert np.argmin(x) == np.argmin(a)
    np.testing.assert_array_equal(values(np.count_nonzero(x, axis=0)), np.count_nonzero(a, axis=0))
    assert np.allclose(x, x, equal_nan=True) and not np.array_equal(x, x)
    # (no NaN here: an implicit zero times NaN is zero under the multiply's sparse convention)
    np.testing.assert_array_equal(values(np.outer(x[1], x[1])), np.outer(a[1], a[1]))
    assert np.zeros_like(x).format == ls.csr
    with pytest.raises(TypeError):
        np.var(x, out=np.empty(2))
    with pytest.raises(TypeError):
        np.linalg.norm(x, 2)  # the spectral norm needs singular values


@SETTINGS
@given(data=st.data(), nd=st.integers(1, 3), dtype=st.sampled_from(["float64", "int32", "bool"]))
def test_argwhere_take_unique_match_numpy(data, nd, dtype):
    a, x = operand(data, nd, dtype, specials=True)
    before = values(x).copy()
    np.testing.assert_array_equal(S.argwhere(x), np.argwhere(a))
    np.testing.assert_array_equal(np.argwhere(x), np.argwhere(a))
    u = np.unique(a)
    np.testing.assert_array_equal(S.unique_values(x), u)
    np.testing.assert_array_equal(np.unique(x), u)
    for g, w in zip(S.unique_counts(x), np.unique(a, return_counts=True)):
        np.testing.assert_array_equal(g, w)
    axis = data.draw(st.sampled_from([None] + list(range(-nd, nd))))
    n = a.size if axis is None else a.shape[axis]
    if n:
        idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=5)), dtype=np.int64)
        idx = idx.reshape(-1, 1) if data.draw(st.booleans()) else idx
        np.testing.assert_array_equal(values(S.take(x, idx, axis=axis)), np.take(a, idx, axis=axis))
        np.testing.assert_array_equal(values(np.take(x, idx, axis=axis)), np.take(a, idx, axis=axis))
        with pytest.raises(IndexError, match="take"):
            S.take(x, [n], axis=axis)
    np.testing.assert_array_equal(values(x), before)


def test_unique_counts_stored_and_implicit_zeros():
    A = sp.csr_array((np.array([0.0, 2.0, 0.0, np.nan, np.nan]), np.array([0, 1, 3, 0, 2]),
                      np.array([0, 3, 5])), shape=(2, 5))
    d = A.toarray()
    for g, w in zip(S.unique_counts(ls.asarray(A)), np.unique(d, return_counts=True)):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(S.argwhere(ls.asarray(A)), np.argwhere(d))
