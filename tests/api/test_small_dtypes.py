"""Small integer value dtypes (int8, int16, uint8, uint16, uint32, uint64) against dense NumPy on
small arrays: every result keeps NumPy's dtype (NumPy 2 promotion, Python scalars weak) and its
wrap-around, in every format, fused or not; float16 is refused with a TypeError, never widened."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import lazysparse as ls

SMALL = tuple(np.dtype(d) for d in ("int8", "int16", "uint8", "uint16", "uint32", "uint64"))
# partners of mixed-dtype operations: NumPy promotes int8 + uint8 to int16, uint64 + int8 to float64
PARTNERS = SMALL + (np.dtype("int32"), np.dtype("int64"), np.dtype("bool"))
FORMATS = ("csr", "csc", "coo", "dense")
BINARY = ("add", "subtract", "multiply", "floor_divide", "remainder", "less", "equal",
          "greater_equal", "maximum", "minimum")
# modest: most of the time goes to compiling a kernel per new dtype and format combination
EXAMPLES = 20


def numpy(f, *args):
    """NumPy's answer, its warnings (overflow, division by zero) silenced."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(f(*args))


def check(got, want, what):
    """``got`` (a lazysparse array; a NumPy scalar where NumPy gives one: a full reduction of a
    concrete array) has ``want``'s shape, dtype and exact values."""
    if isinstance(got, np.generic) and not want.shape:
        got = ls.asarray(np.asarray(got))
    assert isinstance(got, ls.Array), (what, type(got))
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    dense = got.todense()
    assert dense.dtype == want.dtype and dense.shape == want.shape, (what, dense.dtype, dense.shape)
    np.testing.assert_array_equal(dense, want, err_msg=str(what))


@st.composite
def dense_values(draw, dtype, shape=None):
    """A small 2-d array of ``dtype``: mostly zeros, the rest anywhere in the dtype's range with
    its extremes (where wrap-around happens) likely."""
    if shape is None:
        shape = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:  # (bool)
        return draw(hnp.arrays(dtype, shape, elements=st.booleans()))
    special = [info.min, info.max, info.max - 1, 1, 2, 3] + ([info.min + 1, -1, -2] if dtype.kind == "i" else [])
    nonzero = st.sampled_from(special) | st.integers(info.min, info.max)
    elems = st.one_of(st.just(0), nonzero)
    return draw(hnp.arrays(dtype, shape, elements=elems))


def lazy(D, fmt):
    return ls.asarray(D, format=fmt)


@settings(max_examples=EXAMPLES)
@given(data=st.data(), op=st.sampled_from(BINARY), da=st.sampled_from(SMALL),
       db=st.sampled_from(PARTNERS), fa=st.sampled_from(FORMATS), fb=st.sampled_from(FORMATS))
def test_binary_ops_match_numpy(data, op, da, db, fa, fb):
    a = data.draw(dense_values(da))
    b = data.draw(dense_values(db, a.shape))
    want = numpy(getattr(np, op), a, b)
    check(getattr(np, op)(lazy(a, fa), lazy(b, fb)), want, (op, da, db, fa, fb))


@settings(max_examples=EXAMPLES)
@given(data=st.data(), op=st.sampled_from(BINARY[:5]), dt=st.sampled_from(SMALL),
       fmt=st.sampled_from(FORMATS), scalar=st.integers(-3, 3), left=st.booleans())
def test_python_int_scalars_are_weak(data, op, dt, fmt, scalar, left):
    """NumPy 2: a Python int takes the array's dtype (uint8 - 2 is uint8, wrapping)."""
    if dt.kind == "u":
        scalar = abs(scalar)  # a negative Python int is out of bounds for an unsigned dtype
    a = data.draw(dense_values(dt))
    f = getattr(np, op)
    args = (scalar, a) if left else (a, scalar)
    want = numpy(f, *args)
    assert want.dtype == dt
    check(f(*((scalar, lazy(a, fmt)) if left else (lazy(a, fmt), scalar))), want, (op, dt, scalar, left))


@settings(max_examples=EXAMPLES // 2)
@given(data=st.data(), da=st.sampled_from(SMALL), db=st.sampled_from(SMALL), fmt=st.sampled_from(FORMATS))
def test_fused_intermediates_wrap_before_they_are_read(data, da, db, fmt):
    """An intermediate of a fused expression wraps to its dtype before a comparison, a division or
    a reduction reads it, as NumPy's stored temporary does."""
    a = data.draw(dense_values(da))
    b = data.draw(dense_values(db, a.shape))
    A, B = lazy(a, fmt), lazy(b, fmt)
    cases = [
        (lambda x, y: (x + x) == (y * y), "sum equal to product"),
        (lambda x, y: np.negative(x) < y, "negative below"),
        (lambda x, y: (x * x) // np.maximum(y, 1), "product floor-divided"),
        (lambda x, y: ((x - y) > 0).sum(axis=0), "difference positive, counted"),
        (lambda x, y: np.abs(x + 1) % 7, "abs of a sum"),
    ]
    for f, what in cases:
        check(f(A, B), numpy(f, a, b), (what, da, db, fmt))


@settings(max_examples=EXAMPLES)
@given(data=st.data(), dt=st.sampled_from(SMALL), fmt=st.sampled_from(FORMATS),
       op=st.sampled_from(("negative", "absolute", "invert", "square")))
def test_unary_ops_match_numpy(data, dt, fmt, op):
    a = data.draw(dense_values(dt))
    check(getattr(np, op)(lazy(a, fmt)), numpy(getattr(np, op), a), (op, dt, fmt))


@settings(max_examples=EXAMPLES)
@given(data=st.data(), dt=st.sampled_from(SMALL), fmt=st.sampled_from(FORMATS),
       op=st.sampled_from(("sum", "max", "min", "prod")), axis=st.sampled_from((None, 0, 1)))
def test_reductions_follow_numpy_dtype(data, dt, fmt, op, axis):
    """sum/prod of a small integer accumulate in the platform integer (int64, uint64 for
    unsigned) as np.sum does; max/min keep the dtype."""
    a = data.draw(dense_values(dt))
    check(getattr(lazy(a, fmt), op)(axis=axis), numpy(lambda x: getattr(np, op)(x, axis=axis), a),
          (op, dt, fmt, axis))


@settings(max_examples=EXAMPLES // 2)
@given(data=st.data(), dt=st.sampled_from(SMALL), fmt=st.sampled_from(FORMATS), axis=st.sampled_from((None, 0, 1)))
def test_mean_is_float64(data, dt, fmt, axis):
    a = data.draw(dense_values(dt))
    got, want = lazy(a, fmt).mean(axis=axis), np.mean(a, axis=axis)
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got.todense() if axis is not None else got), want, rtol=1e-12)


@settings(max_examples=EXAMPLES)
@given(data=st.data(), src=st.sampled_from(PARTNERS), dst=st.sampled_from(PARTNERS + (np.dtype("float64"),)),
       fmt=st.sampled_from(FORMATS))
def test_astype_round_trips(data, src, dst, fmt):
    """astype wraps (or truncates) exactly as NumPy's does, and casting back agrees too."""
    a = data.draw(dense_values(src))
    there = lazy(a, fmt).astype(dst)
    check(there, a.astype(dst), ("astype", src, dst, fmt))
    check(there.astype(src), a.astype(dst).astype(src), ("back", src, dst, fmt))


@settings(max_examples=EXAMPLES // 2)
@given(data=st.data(), da=st.sampled_from(SMALL), db=st.sampled_from(PARTNERS),
       fa=st.sampled_from(FORMATS), fb=st.sampled_from(FORMATS), n=st.integers(1, 4))
def test_matmul_follows_numpy(data, da, db, fa, fb, n):
    """int8 @ int8 is int8, accumulated with wrap-around; mixed dtypes promote first."""
    a = data.draw(dense_values(da))
    b = data.draw(dense_values(db, (a.shape[1], n)))
    check(lazy(a, fa) @ lazy(b, fb), numpy(np.matmul, a, b), ("matmul", da, db, fa, fb))
    check(ls.einsum("ij,jk->ik", lazy(a, fa), lazy(b, fb)), numpy(np.matmul, a, b), ("einsum", da, db))


@pytest.mark.parametrize("dt", SMALL)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_scipy_round_trip_keeps_dtype(dt, fmt):
    D = np.array([[0, 1, 0], [np.iinfo(dt).max, 0, 2]], dtype=dt)
    m = sp.coo_array(D).asformat(fmt)
    A = ls.asarray(m)
    assert A.dtype == dt and A.format == getattr(ls, fmt)
    back = (A + A).to_scipy()
    assert back.dtype == dt
    np.testing.assert_array_equal(back.toarray(), D + D)
    assert A.todense().dtype == dt


# -- wrap-around, written out --------------------------------------------------------------------
@pytest.mark.parametrize("fmt", FORMATS)
def test_explicit_wrap_around(fmt):
    u = lazy(np.array([[1, 0], [0, 200]], np.uint8), fmt)
    i = lazy(np.array([[127, 0], [0, -128]], np.int8), fmt)
    r = u - 2
    assert r.dtype == np.uint8 and r.todense()[0, 0] == 255
    r = u - lazy(np.full((2, 2), 2, np.uint8), fmt)
    assert r.dtype == np.uint8 and r.todense().tolist() == [[255, 254], [254, 198]]
    r = i + 1
    assert r.dtype == np.int8 and r.todense().tolist() == [[-128, 1], [1, -127]]
    r = -i
    assert r.dtype == np.int8 and r.todense().tolist() == [[-127, 0], [0, -128]]
    assert (u + u).todense().tolist() == [[2, 0], [0, 144]]
    assert (i + lazy(np.ones((2, 2), np.int16), fmt)).dtype == np.int16


def test_narrow_division_matches_numpy():
    """floor_divide / remainder of signed and unsigned small integers, negative operands, MIN // -1
    (wraps) and a zero divisor (0, as NumPy and lazysparse's other integers give)."""
    for dt in SMALL + (np.dtype("int32"),):
        info = np.iinfo(dt)
        vals = np.array(sorted({info.min, info.min + 1, info.max, 0, 1, 2, 7} |
                               ({-1, -2, -7} if dt.kind == "i" else set())), dtype=dt)
        a, b = np.meshgrid(vals, vals)
        for op in ("floor_divide", "remainder", "right_shift", "left_shift"):
            if op.endswith("shift"):
                b = np.clip(b, 0, 9).astype(dt)
            check(getattr(np, op)(ls.asarray(a), ls.asarray(b)), numpy(getattr(np, op), a, b), (op, dt))


def test_sum_dtypes_are_numpy_defaults():
    for dt, want in [("int8", "int64"), ("int16", "int64"), ("uint8", "uint64"), ("uint32", "uint64"),
                     ("uint64", "uint64")]:
        A = ls.asarray(sp.csr_array(np.array([[1, 0], [0, 2]], dtype=dt)))
        assert A.sum().dtype == np.dtype(want) == np.sum(np.ones(1, dt)).dtype
        assert A.max(axis=0).dtype == np.dtype(dt)


# -- float16: refused, naming the operation --------------------------------------------------------
@pytest.mark.parametrize("make, op", [
    (lambda: ls.asarray(np.ones((2, 2), np.float16)), "asarray"),
    (lambda: ls.asarray(np.ones((2, 2))).astype(np.float16), "astype"),
    (lambda: ls.asarray(np.ones((2, 2))) + np.ones((2, 2), np.float16), r"\+"),
    (lambda: ls.asarray(np.ones((2, 2))).sum(dtype=np.float16), "sum"),
    (lambda: np.sqrt(ls.asarray(np.ones((2, 2), np.uint8))), "sqrt"),
])
def test_float16_raises_typeerror(make, op):
    with pytest.raises(TypeError, match=rf"^{op}: .*float16.*"):
        make()
