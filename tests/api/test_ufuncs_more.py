"""NumPy's remaining elementwise ufuncs (isnan ... ldexp) and ``lazysparse.api.ufuncs``, against NumPy.

The oracle is NumPy on the dense values lazysparse holds (a sparse input built from NumPy drops
its -0.0 entries, which become implicit +0.0). Three layers:

* ``test_grid_*``: every new operation x dtype on a dense grid of special values (NaN, +-inf,
  +-0, MIN, MAX, -1, shift counts around the width, ...), every pair for binary operations;
  values, dtype *and* the sign of zeros must be NumPy's (fmax/fmin aside: NumPy's own sign of
  ``fmax(0.0, -0.0)`` depends on the SIMD lane it lands in).
* hypothesis over formats x index widths x shapes (zero-size axes included) x dtypes x scalars
  on either side x the ``np.<ufunc>(A)`` and ``ufuncs.<name>(A)`` routes; inputs never mutated.
* sparsity decisions at zero (a NaN at zero, ``floor_divide(0, 0)``, densifies; a nonzero
  divisor keeps the pattern), TypeErrors naming the operation where NumPy has no loop (or
  computes in a dtype lazysparse does not store), and the array-API aliases.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sparse as pydata
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import lazysparse as ls
from lazysparse.api import ufuncs as U
from lazysparse.formats.storage import VALUE_DTYPES

UNARY = ("isnan", "isinf", "isfinite", "signbit", "reciprocal", "fabs", "spacing")
BINARY = ("arctan2", "hypot", "copysign", "floor_divide", "remainder", "fmod", "fmax", "fmin",
          "logaddexp", "logaddexp2", "heaviside", "nextafter", "left_shift", "right_shift", "ldexp")
# libm / NumPy's SIMD versions may differ in the last bits
TRANSCENDENTAL = {"arctan2", "logaddexp", "logaddexp2", "hypot"}
# names in lazysparse.api.ufuncs for the same operations
ALIASES = {"atan2": "arctan2", "mod": "remainder", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift"}

BOOL, I32, I64, F32, F64, C64, C128 = (np.dtype(d) for d in
                                       ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128"))
DTYPES = (BOOL, I32, I64, F32, F64, C128)
FORMATS_2D = ("dense", "csr", "csc", "coo", "dcsr")
FORMATS_ND = ("dense", "coo", "csf")
WIDTHS = (np.int32, np.int64)

FSPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 3.0, 0.5, -0.5, 7.0, -7.0, 1e300,
            -1e-300, 5e-324, 2.5, -3.0, 1e38, -3e38]


def ispecial(dtype):
    ii = np.iinfo(dtype)
    return [0, 1, -1, 2, -2, 3, -3, 7, -7, 31, 32, 33, 63, 64, ii.min, ii.max, ii.min + 1]


def grid_values(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind in "iu":
        return np.array(ispecial(dtype), dtype=dtype)
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return np.array(FSPECIAL, dtype=dtype)
    parts = FSPECIAL[:9]
    return np.array([complex(a, b) for a in parts for b in parts], dtype=dtype)


def npf(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args)


def storable(dtype) -> bool:
    return np.dtype(dtype) in VALUE_DTYPES


def same_bits(got, exp, signed_zeros=True):
    """``got`` equals ``exp``: NaN where NumPy has NaN, and (``signed_zeros``) the sign of zeros."""
    def eq(g, e):
        ok = (g == e) | (np.isnan(g) & np.isnan(e))
        if signed_zeros:
            ok &= (np.signbit(g) == np.signbit(e)) | np.isnan(e)
        return ok
    if exp.dtype.kind == "c":
        return eq(got.real, exp.real) & eq(got.imag, exp.imag)
    if exp.dtype.kind == "f":
        return eq(got, exp)
    return got == exp


def close(got, exp):
    rtol = 1e-6 if exp.dtype in (F32, C64) else 1e-13
    ok = np.isclose(got, exp, rtol=rtol, atol=0, equal_nan=True)
    return ok & ((np.isinf(got) == np.isinf(exp)) | np.isnan(exp))


def assert_matches(got_arr, exp, op, args=()):
    """``got_arr`` (lazy result) has NumPy's shape, dtype and values."""
    assert isinstance(got_arr, ls.Array), type(got_arr)
    exp = np.asarray(exp)
    assert got_arr.shape == exp.shape, (got_arr.shape, exp.shape)
    assert got_arr.dtype == exp.dtype, (op, got_arr.dtype, exp.dtype)
    got = got_arr.todense()
    assert got.dtype == exp.dtype and got.shape == exp.shape
    if op in TRANSCENDENTAL:
        ok = close(got, exp)
    else:
        ok = same_bits(got, exp, signed_zeros=False)
    if not np.all(ok):
        bad = np.flatnonzero(~np.asarray(ok).ravel())[:5]
        detail = [(tuple(np.broadcast_to(a, exp.shape).ravel()[i] for a in args), got.ravel()[i], exp.ravel()[i])
                  for i in bad]
        raise AssertionError(f"{op}: (args, got, expected) {detail}")


# ---------------------------------------------------------------------------------------------------
# dense grids of special values: exact, every pair
# ---------------------------------------------------------------------------------------------------
def _grid_args(op, dtype):
    v = grid_values(dtype)
    if op in UNARY:
        return [v]
    if op == "ldexp":   # a float with an integer exponent (int32 and int64 exponents)
        w = grid_values(I64 if dtype == I64 else I32)
        w = np.concatenate([w, np.array([2000, -2000, 1100, -1100], dtype=w.dtype)])
        v = grid_values(F32 if dtype in (F32, I32) else F64)
    else:
        w = v
    x, y = np.meshgrid(v, w)
    return [x.ravel(), y.ravel()]


@pytest.mark.parametrize("dtype", DTYPES + (C64,), ids=str)
@pytest.mark.parametrize("op", UNARY + BINARY)
def test_grid_against_numpy(op, dtype):
    args = _grid_args(op, dtype)
    f = getattr(np, op)
    try:
        exp = npf(f, *args)
    except TypeError:  # NumPy has no loop: neither does lazysparse, and it says which operation
        with pytest.raises(TypeError, match=op):
            f(*[ls.asarray(a) for a in args])
        with pytest.raises(TypeError, match=op):
            getattr(U, op)(*[ls.asarray(a) for a in args])
        return
    if not storable(exp.dtype) or not all(storable(np.asarray(a).dtype) for a in args):
        with pytest.raises(TypeError, match=op):   # (float16, int8: not stored by lazysparse)
            f(*[ls.asarray(a) for a in args])
        return
    copies = [a.copy() for a in args]
    r = f(*[ls.asarray(a) for a in args])
    assert isinstance(r, ls.Array) and r.is_lazy
    got = r.todense()
    assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    if op in TRANSCENDENTAL:
        ok = close(got, exp)
    else:   # exact, to the sign of zero (NumPy's fmax/fmin sign of +-0 depends on its SIMD lane)
        ok = same_bits(got, exp, signed_zeros=op not in ("fmax", "fmin"))
    bad = np.flatnonzero(~ok)[:6]
    assert not bad.size, [(tuple(a[i] for a in args), got[i], exp[i]) for i in bad]
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("op, dtype, x, y, want", [
    ("floor_divide", I64, np.iinfo(np.int64).min, -1, np.iinfo(np.int64).min),   # wraps, no trap
    ("floor_divide", I32, np.iinfo(np.int32).min, -1, np.iinfo(np.int32).min),
    ("remainder", I64, np.iinfo(np.int64).min, -1, 0),
    ("fmod", I64, np.iinfo(np.int64).min, -1, 0),
    ("floor_divide", I64, 7, 0, 0),
    ("remainder", I32, -7, 0, 0),
    ("fmod", I64, 7, 0, 0),
    ("floor_divide", I64, -7, 2, -4),
    ("remainder", I64, -7, 2, 1),
    ("remainder", I64, 7, -2, -1),
    ("fmod", I64, -7, 2, -1),
    ("floor_divide", F64, -7.0, 2.0, -4.0),
    ("remainder", F64, -7.0, np.inf, np.inf),     # CPython's divmod: the divisor's sign
    ("floor_divide", F64, -7.0, np.inf, -1.0),
    ("floor_divide", F64, 1.0, 0.0, np.inf),
    ("floor_divide", F64, 0.0, 0.0, np.nan),
    ("left_shift", I64, 1, 63, np.iinfo(np.int64).min),
    ("left_shift", I64, 1, 64, 0),
    ("left_shift", I32, 3, -1, 0),
    ("right_shift", I64, -5, 64, -1),
    ("right_shift", I32, -5, -1, -1),
    ("right_shift", I32, 5, 40, 0),
    ("heaviside", F64, np.nan, 0.5, np.nan),
    ("heaviside", F64, -0.0, 0.5, 0.5),
    ("logaddexp", F64, np.inf, np.inf, np.inf),
    ("logaddexp", F64, -np.inf, -np.inf, -np.inf),
    ("logaddexp2", F64, 1e308, 1e308, 1e308),
    ("fmax", F64, np.nan, 1.0, 1.0),
    ("fmin", F64, 2.0, np.nan, 2.0),
    ("reciprocal", I64, 0, None, npf(np.reciprocal, np.zeros(1, np.int64))[0]),
    ("reciprocal", I32, -1, None, -1),
    ("reciprocal", I32, 2, None, 0),
])
def test_edge_values(op, dtype, x, y, want):
    args = [np.array([x, x], dtype=dtype)] + ([] if y is None else [np.array([y, y], dtype=dtype)])
    exp = npf(getattr(np, op), *args)
    np.testing.assert_array_equal(exp, np.array([want, want], dtype=exp.dtype))  # (the oracle agrees)
    got = getattr(U, op)(*[ls.asarray(a) for a in args]).todense()
    assert got.dtype == exp.dtype
    np.testing.assert_array_equal(got, exp)


# ---------------------------------------------------------------------------------------------------
# hypothesis: formats, widths, shapes, dtypes, scalars on either side, both routes
# ---------------------------------------------------------------------------------------------------
def build(D, fmt, width):
    """``D`` as an ``ls.Array`` of ``fmt`` (sparse: from scipy / pydata index arrays of ``width``),
    and the buffers it was built from (to check they are not written)."""
    D = np.asarray(D)
    if fmt == "dense":
        c = D.copy()
        return ls.asarray(c), [c]
    if D.ndim == 2:
        S = sp.coo_array(D) if fmt == "coo" else (sp.csc_array(D) if fmt == "csc" else sp.csr_array(D))
        if fmt == "coo":
            S = sp.coo_array((S.data, (S.row.astype(width), S.col.astype(width))), shape=S.shape)
            bufs = [S.data, S.row, S.col]
        else:
            cls = type(S)
            S = cls((S.data, S.indices.astype(width), S.indptr.astype(width)), shape=S.shape)
            bufs = [S.data, S.indices, S.indptr]
        A = ls.asarray(S) if fmt in ("csr", "csc", "coo") else ls.asarray(S, format=fmt)
        return A, bufs
    nz = np.nonzero(D)
    coords = np.array(nz, dtype=width).reshape(D.ndim, -1)
    vals = D[nz]
    return ls.asarray(pydata.COO(coords, vals, shape=D.shape), format=fmt), [coords, vals]


def elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        return st.one_of(st.sampled_from(ispecial(dtype)), st.integers(-8, 8))
    f = st.one_of(st.sampled_from(FSPECIAL[:12]), st.floats(-8, 8, width=32, allow_subnormal=False))
    if dtype.kind == "f":
        return f
    return st.builds(complex, f, f)


@st.composite
def operands(draw, shape, dtype, formats=None):
    dtype = np.dtype(dtype)
    with np.errstate(over="ignore"):
        v = draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    density = draw(st.sampled_from([0.0, 0.3, 1.0]))
    mask = np.random.default_rng(draw(st.integers(0, 2**16))).random(shape) < density
    D = np.where(mask, v, np.zeros((), dtype))
    fmt = draw(st.sampled_from(formats or (FORMATS_2D if len(shape) == 2 else FORMATS_ND)))
    width = draw(st.sampled_from(WIDTHS))
    A, bufs = build(D, fmt, width)
    return D, A, bufs


dim = st.integers(0, 5)
shapes = st.one_of(st.tuples(dim, dim), st.tuples(dim, dim), st.tuples(dim),
                   st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)))


def held(A):
    """The values lazysparse holds for the input ``A`` (implicit zeros are +0.0)."""
    return A.todense()


def run_checked(route, op, lazy_args, np_args):
    """Compare ``route`` on lazy arguments with NumPy on the held values; a TypeError (naming
    the operation) exactly where NumPy has no loop or computes in a dtype lazysparse lacks."""
    fn = getattr(np, op)
    try:
        exp = npf(fn, *np_args)
    except TypeError:
        with pytest.raises(TypeError, match=op):
            route(*lazy_args)
        return None
    dts = [np.asarray(a).dtype for a in np_args if isinstance(a, np.ndarray)]
    if not storable(exp.dtype) or not all(storable(d) for d in dts):
        with pytest.raises(TypeError, match=op):
            route(*lazy_args)
        return None
    r = route(*lazy_args)
    assert r.is_lazy
    assert_matches(r, exp, op, np_args)
    return r


@settings(max_examples=60)
@given(data=st.data(), shape=shapes, op=st.sampled_from(UNARY), dtype=st.sampled_from(DTYPES),
       via=st.sampled_from(["np", "ufuncs"]))
def test_unary_property(data, shape, op, dtype, via):
    D, A, bufs = data.draw(operands(shape, dtype), label="a")
    before = [b.copy() for b in bufs]
    route = getattr(np, op) if via == "np" else getattr(U, op)
    r = run_checked(route, op, [A], [held(A)])
    if r is not None and A.format.is_sparse and op in ("isnan", "isinf", "signbit", "fabs") and len(shape) == 2 \
            and A.nnz < 0.2 * max(1, A.size):
        assert r.format.is_sparse, (op, r.format)  # f(0) == 0: the pattern is kept
    for b, c in zip(bufs, before):
        np.testing.assert_array_equal(b, c)


MIXED = [(F64, F64), (F32, F32), (I64, I64), (I32, I32), (BOOL, BOOL), (C128, C128), (F32, F64),
         (I32, I64), (I64, F32), (BOOL, F64), (F64, C128)]


@settings(max_examples=90)
@given(data=st.data(), shape=shapes, op=st.sampled_from(BINARY + tuple(ALIASES)), dt=st.sampled_from(MIXED),
       rhs=st.sampled_from(["array", "array", "scalar", "rscalar", "numpy", "row"]),
       via=st.sampled_from(["np", "ufuncs"]))
def test_binary_property(data, shape, op, dt, rhs, via):
    name, op = op, ALIASES.get(op, op)
    if op == "ldexp":
        dt = (dt[0] if dt[0].kind == "f" else F64, data.draw(st.sampled_from([I32, I64]), label="exp dtype"))
    D, A, bufs = data.draw(operands(shape, dt[0]), label="a")
    route = getattr(np, op) if via == "np" else getattr(U, name)
    before = [b.copy() for b in bufs]
    if rhs in ("scalar", "rscalar"):
        kind = dt[1].kind
        pool = {"b": [True, False], "i": [0, -1, 2, -3, 5, 31, 64], "f": [0.0, -0.0, 2.0, -0.5, np.inf, np.nan, 3],
                "c": [0j, 1 + 2j, complex(np.nan, 0)]}[kind]
        s = data.draw(st.sampled_from(pool), label="scalar")
        if op == "ldexp":
            s = data.draw(st.sampled_from([0, 3, -2, 1100]), label="exponent")
            if rhs == "rscalar":
                return  # ldexp(python float, integer array): float64 result, drawn as "array"
        if rhs == "scalar":
            run_checked(route, op, [A, s], [held(A), s])
        else:
            run_checked(route, op, [s, A], [s, held(A)])
    else:
        bshape = shape[-1:] if rhs == "row" else shape
        Db, B, _ = data.draw(operands(bshape, dt[1]), label="b")
        other, other_np = (Db, Db) if rhs == "numpy" else (B, held(B))
        run_checked(route, op, [A, other], [held(A), other_np])
        if rhs == "array":   # the other order too
            run_checked(route, op, [other, A], [other_np, held(A)])
    for b, c in zip(bufs, before):
        np.testing.assert_array_equal(b, c)


# ---------------------------------------------------------------------------------------------------
# the pattern decision at zero
# ---------------------------------------------------------------------------------------------------
def _sparse_input(dtype=F64, fmt="csr"):
    D = np.zeros((6, 7), dtype=dtype)
    D[0, 1], D[3, 4], D[5, 6] = 3, -2, 5
    return D, build(D, fmt, np.int32)[0]


@pytest.mark.parametrize("fmt", ["csr", "coo", "dcsr"])
@pytest.mark.parametrize("op, dtype, scalar, sparse", [
    ("floor_divide", F64, 2.0, True),
    ("floor_divide", F64, 0.0, False),      # 0 // 0 is nan
    ("floor_divide", I64, 0, True),         # integer 0 // 0 is 0 in NumPy
    ("remainder", F64, -2.0, True),
    ("remainder", F64, 0.0, False),
    ("fmod", F64, 3.0, True),
    ("fmod", F64, np.nan, False),
    ("arctan2", F64, 1.0, True),
    ("arctan2", F64, -1.0, False),          # atan2(0, -1) = pi
    ("arctan2", F64, -0.0, False),          # atan2(0, -0.0) = pi: the scalar's sign matters
    ("heaviside", F64, 0.0, True),
    ("heaviside", F64, 0.5, False),
    ("logaddexp", F64, 1.0, False),
    ("hypot", F64, 0.0, True),
    ("copysign", F64, -1.0, True),
    ("nextafter", F64, 1.0, False),
    ("nextafter", F64, 0.0, True),
    ("fmax", F64, np.nan, True),
    ("fmax", F64, -1.0, True),
    ("fmin", F64, 1.0, True),
    ("fmin", F64, -1.0, False),
    ("left_shift", I64, 3, True),
    ("right_shift", I32, 2, True),
    ("ldexp", F64, 3, True),
])
def test_pattern_at_zero(fmt, op, dtype, scalar, sparse):
    D, A = _sparse_input(dtype, fmt)
    r = getattr(U, op)(A, scalar)
    exp = npf(getattr(np, op), D, scalar)
    assert r.format.is_sparse == sparse, r.format
    assert_matches(r, exp, op, (D, scalar))


@pytest.mark.parametrize("op, sparse", [("isnan", True), ("isinf", True), ("isfinite", False),
                                        ("signbit", True), ("fabs", True), ("reciprocal", False),
                                        ("spacing", False)])
def test_pattern_at_zero_unary(op, sparse):
    D, A = _sparse_input(F64, "csc")
    D[2, 2] = np.nan
    A = build(D, "csc", np.int64)[0]
    r = getattr(np, op)(A)
    assert r.format.is_sparse == sparse, r.format
    assert_matches(r, npf(getattr(np, op), D), op, (D,))


def test_pattern_of_two_sparse_operands():
    D, A = _sparse_input(F64, "csr")
    E = np.zeros_like(D)
    E[0, 1], E[1, 1] = -1.0, 2.0
    B = build(E, "csr", np.int32)[0]
    for op, sparse in [("hypot", True), ("arctan2", True), ("floor_divide", False), ("fmax", True),
                       ("copysign", True), ("logaddexp", False)]:
        r = getattr(np, op)(A, B)
        assert r.format.is_sparse == sparse, (op, r.format)
        assert_matches(r, npf(getattr(np, op), D, E), op, (D, E))


# ---------------------------------------------------------------------------------------------------
# errors: a TypeError naming the operation, when the line is written
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op, dtypes", [
    ("floor_divide", (C128, C128)), ("remainder", (C128, F64)), ("fmod", (C128, C128)),
    ("signbit", (C128,)), ("fabs", (C128,)), ("spacing", (C64,)), ("arctan2", (C128, C128)),
    ("hypot", (F64, C128)), ("logaddexp", (C128, C128)), ("heaviside", (C128, F64)),
    ("left_shift", (F64, I64)), ("right_shift", (I64, F32)),
    ("ldexp", (F64, F64)), ("ldexp", (C128, I64)), ("copysign", (BOOL, BOOL)),
    ("nextafter", (C128, C128)),
])
@pytest.mark.parametrize("via", ["np", "ufuncs"])
def test_unsupported_dtypes_raise_typeerror(op, dtypes, via):
    args = [ls.asarray(np.ones((2, 3), dtype=d)) for d in dtypes]
    f = getattr(np, op) if via == "np" else getattr(U, op)
    with pytest.raises(TypeError, match=op):
        f(*args)


@pytest.mark.parametrize("op, arity", [("left_shift", 2), ("floor_divide", 2), ("reciprocal", 1)])
def test_bool_ops_numpy_computes_in_int8(op, arity):
    """NumPy has no bool loop for these and computes them in int8, which is stored as it is."""
    D = np.array([[True, False], [False, True]])
    r = getattr(np, op)(*[ls.asarray(sp.csr_array(D))] * arity)
    assert r.dtype == np.int8, (op, r.dtype)
    assert_matches(r, npf(getattr(np, op), *[D] * arity), op, (D,))


def test_bool_classification_is_computed():
    """signbit of bools: NumPy reads them as float16 (not stored here), computed in float32."""
    D = np.array([[True, False], [False, True]])
    A = ls.asarray(sp.csr_array(D))
    for op in ("signbit", "isnan", "isinf", "isfinite"):
        assert_matches(getattr(np, op)(A), getattr(np, op)(D), op, (D,))


# ---------------------------------------------------------------------------------------------------
# round and the array-API aliases
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("dtype", [F64, F32, I64, I32, C128])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_round(decimals, dtype, fmt):
    vals = {"f": [0.125, 2.5, -2.5, 1234.5, 2.675, -0.35, 15.0, 0.0, np.nan, np.inf, -1e-9],
            "i": [125, -135, 7, 0, 15, 2**30, -25],
            "c": [1.25 + 2.5j, -0.35 - 0.125j, 0j, 15 + 25j]}[dtype.kind]
    D = np.zeros((3, len(vals)), dtype=dtype)
    D[1] = np.array(vals).astype(dtype)
    A, bufs = build(D, fmt, np.int64)
    exp = np.round(D, decimals)
    for r in (U.round(A, decimals), U.around(A, decimals=decimals), U.NP_FUNCTIONS[np.round](A, decimals)):
        assert r.dtype == exp.dtype
        np.testing.assert_array_equal(r.todense(), exp)
    np.testing.assert_array_equal(np.round(A, decimals).todense(), exp)
    np.testing.assert_array_equal(A.round(decimals).todense(), exp)
    np.testing.assert_array_equal(bufs[0], D if fmt == "dense" else D[D != 0])  # (not written)


def test_round_errors():
    A = ls.asarray(np.array([True, False]))
    with pytest.raises(TypeError, match="round"):
        U.round(A, 1)
    with pytest.raises(TypeError, match="round|rint"):
        U.round(A)          # NumPy rounds bools in float16
    with pytest.raises(TypeError, match="decimals"):
        U.round(ls.asarray(np.ones(2)), 1.5)
    assert U.NP_FUNCTIONS[np.round](ls.asarray(np.ones(2)), 0, out=np.empty(2)) is NotImplemented


_R = np.array([[0.0, 0.5, -0.75], [0.0, 0.0, 0.25]])
_P = np.array([[0.0, 1.5, 2.75], [0.0, 0.0, 1.25]])
_I = np.array([[0, 5, -3], [0, 0, 12]])
_B = np.array([[False, True, True], [False, False, True]])
_C = np.array([[0j, 1 + 2j, -3.5j], [0j, 0j, 2 - 1j]])

# ufuncs name, NumPy function, operands
API_ALIASES = [
    ("acos", np.arccos, (_R,)), ("acosh", np.arccosh, (_P + 1,)), ("asin", np.arcsin, (_R,)),
    ("asinh", np.arcsinh, (_R,)), ("atan", np.arctan, (_R,)), ("atanh", np.arctanh, (_R,)),
    ("pow", np.power, (_P, _R)), ("pow", np.power, (_I, np.abs(_I))),
    ("bitwise_and", np.bitwise_and, (_I, -_I)), ("bitwise_or", np.bitwise_or, (_I, 3 * _I)),
    ("bitwise_xor", np.bitwise_xor, (_B, ~_B)), ("bitwise_invert", np.invert, (_I,)),
    ("bitwise_not", np.invert, (_B,)), ("equal", np.equal, (_R, _P)), ("not_equal", np.not_equal, (_I, _I)),
    ("less", np.less, (_R, _P)), ("less_equal", np.less_equal, (_I, -_I)), ("greater", np.greater, (_R, -_R)),
    ("greater_equal", np.greater_equal, (_R, _R)), ("logical_and", np.logical_and, (_R, _I)),
    ("logical_or", np.logical_or, (_B, _R)), ("logical_xor", np.logical_xor, (_I, _B)),
    ("logical_not", np.logical_not, (_R,)), ("floor", np.floor, (_R,)), ("ceil", np.ceil, (_R,)),
    ("trunc", np.trunc, (_R,)), ("floor", np.floor, (_I,)), ("sign", np.sign, (_R,)), ("sign", np.sign, (_C,)),
    ("square", np.square, (_I,)), ("tan", np.tan, (_R,)), ("sinh", np.sinh, (_R,)), ("cosh", np.cosh, (_R,)),
    ("log2", np.log2, (_P,)), ("log10", np.log10, (_P,)), ("positive", np.positive, (_R,)),
    ("real", np.real, (_C,)), ("imag", np.imag, (_C,)), ("conj", np.conj, (_C,)), ("real", np.real, (_R,)),
    ("atan2", np.arctan2, (_R, _P)), ("mod", np.mod, (_I, np.array([3, -2, 0]))),
    ("bitwise_left_shift", np.left_shift, (_I, np.array([1, 2, 70]))),
    ("bitwise_right_shift", np.right_shift, (_I, np.array([1, -1, 2]))),
]


@pytest.mark.parametrize("name, npfn, args", API_ALIASES, ids=[a[0] for a in API_ALIASES])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_array_api_aliases(name, npfn, args, fmt):
    exp = np.asarray(npf(npfn, *args))
    r = getattr(U, name)(*[build(a, fmt, np.int32)[0] for a in args])
    assert r.dtype == exp.dtype, (r.dtype, exp.dtype)
    np.testing.assert_allclose(r.todense(), exp, rtol=1e-13, atol=0, equal_nan=True)
    if len(args) == 2:   # a NumPy array or a Python scalar on the right
        r = getattr(U, name)(build(args[0], fmt, np.int32)[0], args[1])
        np.testing.assert_allclose(r.todense(), exp, rtol=1e-13, atol=0, equal_nan=True)


def test_module_exports():
    for name in U.__all__:
        assert callable(getattr(U, name)), name
    wanted = {"isnan", "isinf", "isfinite", "signbit", "reciprocal", "fabs", "arctan2", "atan2", "hypot",
              "copysign", "floor_divide", "remainder", "mod", "fmod", "fmax", "fmin", "logaddexp",
              "logaddexp2", "heaviside", "nextafter", "bitwise_left_shift", "left_shift",
              "bitwise_right_shift", "right_shift", "acos", "acosh", "asin", "asinh", "atan", "atanh",
              "pow", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_not", "equal",
              "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
              "logical_xor", "logical_not", "floor", "ceil", "trunc", "round", "sign", "square", "tan",
              "sinh", "cosh", "log2", "log10", "positive", "real", "imag", "conj"}
    assert wanted <= set(U.__all__), wanted - set(U.__all__)
    assert set(U.NP_FUNCTIONS) == {np.round, np.around}
    # every NumPy ufunc of the new operations dispatches to a lazy node
    A = ls.asarray(np.ones((2, 2)))
    for op in UNARY:
        assert getattr(np, op)(A).is_lazy
    for op in BINARY:
        other = np.ones((2, 2), dtype=np.int32) if op == "ldexp" else A
        if op in ("left_shift", "right_shift"):
            assert getattr(np, op)(ls.asarray(np.ones((2, 2), np.int64)), 1).is_lazy
        else:
            assert getattr(np, op)(A, other).is_lazy


@pytest.mark.parametrize("fmt", ["csr", "dense"])
def test_nested_and_fused(fmt):
    """Calls nested in one statement (each argument bound once in C) and fused with products
    and reductions."""
    rng = np.random.default_rng(3)
    D = rng.integers(-9, 9, (12, 9)).astype(float)
    D[rng.random(D.shape) < 0.6] = 0
    E = rng.integers(-9, 9, (12, 9)).astype(float)
    E[rng.random(E.shape) < 0.5] = 0
    x = rng.standard_normal(9)
    A, B = build(D, fmt, np.int64)[0], build(E, "csr", np.int32)[0]
    got = [U.floor_divide(U.remainder(A, U.fmax(B, 2)), U.fmin(A, -3)),
           U.heaviside(U.copysign(A, B), U.hypot(A, B)) * 2 + 1,
           U.logaddexp(A, B) @ x,
           ls.where(U.isnan(U.fmod(A, B)), 0, A).sum(axis=1)]
    exp = npf(lambda: [np.floor_divide(np.remainder(D, np.fmax(E, 2)), np.fmin(D, -3)),
                       np.heaviside(np.copysign(D, E), np.hypot(D, E)) * 2 + 1,
                       np.logaddexp(D, E) @ x,
                       np.where(np.isnan(np.fmod(D, E)), 0, D).sum(axis=1)])
    for g, e in zip(ls.compute(*got), exp):
        np.testing.assert_allclose(g.todense(), e, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("fmt", ["dense", "csr", "coo"])
def test_operators_and_divmod(fmt):
    """``//``, ``%``, ``divmod`` (both sides, NumPy's ``np.divmod`` too), ``<<``, ``>>`` against NumPy."""
    a = np.array([[0, 7, -7, 0], [3, 0, -1, 12]], dtype=np.int64)
    A = ls.asarray(a, format=fmt)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((A // 2).todense(), a // 2)
        np.testing.assert_array_equal((A % -3).todense(), a % -3)
        np.testing.assert_array_equal((7 // (A + 100)).todense(), 7 // (a + 100))
        for q, r in (divmod(A, 4), np.divmod(A, 4)):
            np.testing.assert_array_equal(q.todense(), a // 4)
            np.testing.assert_array_equal(r.todense(), a % 4)
        q, r = divmod(np.full(a.shape, 9), A + 100)
        np.testing.assert_array_equal(q.todense(), 9 // (a + 100))
        np.testing.assert_array_equal(r.todense(), 9 % (a + 100))
        np.testing.assert_array_equal((A << 2).todense(), a << 2)
        np.testing.assert_array_equal((A >> 1).todense(), a >> 1)
        np.testing.assert_array_equal((1 << (A % 5 + 1)).todense(), 1 << (a % 5 + 1))


@pytest.mark.parametrize("fmt", ["csr", "coo", "dense"])
def test_a_numpy_out_gets_the_result(fmt):
    """``x += A @ y`` and ``D += A`` on NumPy arrays write the result into them (NEP 13's
    ``out=``), as NumPy and scipy do; a cast NumPy refuses is refused, naming the ufunc."""
    S = sp.random_array((6, 5), density=0.4, rng=1, format="csr")
    A = ls.asarray(S, format=fmt)
    y = np.arange(5.0)
    x = np.ones(6)
    keep = x
    x += A @ y
    assert x is keep
    np.testing.assert_allclose(x, 1.0 + S.toarray() @ y)
    D = np.full((6, 5), 2.0)
    np.subtract(D, A, out=D)
    np.testing.assert_allclose(D, 2.0 - S.toarray())
    with pytest.raises(TypeError, match="add: cannot cast the result from float64 to out's int64"):
        i = np.zeros(6, dtype=np.int64)
        i += A @ y
    with pytest.raises(ValueError, match="output parameter"):
        np.add(A @ y, 1.0, out=np.zeros(7))
