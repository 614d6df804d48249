"""Numerics as NumPy's, with the sparse rule for structural zeros.

The rule (docs/design.md, "Semantics the project chose", Numerics):

* A *stored* value is an IEEE value like any other: a stored 0 times NaN or inf is NaN.
* An *implicit* (structural) zero annihilates in a product and as a numerator: ``A * B``,
  ``A @ B``, ``einsum`` and ``A / B`` with a tensor ``B`` only compute where the sparse operands
  store entries, so an implicit zero times NaN/inf is 0, whatever the other operand's format
  (a dense operand's NaN at a position ``A`` does not store gives 0). scipy agrees for
  ``A.multiply(dense)``, ``A / dense`` and every matrix product; for sparse * sparse scipy
  evaluates ``0 * NaN`` on the union of the patterns (NaN), lazysparse does not.
* Every other operation is NumPy on the dense values, implicit zeros being zeros: ``+ - max min``,
  comparisons, ``where``, unary functions, reductions, and any operation with a scalar except
  ``*`` (``A / 0.0`` is NaN where ``A`` has an implicit zero, as in NumPy; ``A * nan`` is not).
* Integers wrap like NumPy's (kernels are compiled with ``-fwrapv``); result dtypes are NumPy's.

Values are drawn by hypothesis (special values NaN, +-inf, +-0 included) for a fixed set of
operations and formats, so that each kernel compiles once and the examples run warm.
"""
from __future__ import annotations

import ctypes
import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sparse as pydata
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import lazysparse as ls

NAN, INF = np.nan, np.inf
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.5, -2.0, 3.0, 0.5]
SCIPY_NATIVE = ("csr", "csc", "coo")  # built straight from scipy: explicit zeros stay stored


def examples(n):
    return settings(max_examples=n)


# -- operands ---------------------------------------------------------------------------------------
@st.composite
def matrices(draw, shape=None, dtype=np.float64, elements=None):
    """(D, S): dense values (0 off the stored pattern) and the stored pattern ``S``."""
    if shape is None:
        shape = draw(st.tuples(st.integers(1, 5), st.integers(1, 5)))
    els = elements if elements is not None else st.sampled_from(SPECIAL)
    vals = draw(hnp.arrays(dtype, shape, elements=els))
    S = draw(hnp.arrays(np.bool_, shape))
    return np.where(S, vals, np.zeros((), dtype)), S


def make(D, S, fmt):
    """``ls.Array`` of ``fmt`` holding ``D`` on the pattern ``S``, and the pattern it really stores.

    csr/csc/coo come from scipy with every entry of ``S`` stored (explicit zeros included); the
    other sparse formats are converted by a lazysparse kernel, which drops stored zeros (as scipy
    drops computed zeros), so their pattern is ``S & (D != 0)`` (NaN is not zero)."""
    if fmt == "dense":
        return ls.asarray(D.copy()), np.ones(D.shape, bool)
    if D.ndim == 2:
        r, c = np.nonzero(S)
        coo = sp.coo_array((D[r, c], (r, c)), shape=D.shape)
        if fmt in SCIPY_NATIVE:
            return ls.asarray(coo.asformat(fmt)), S.copy()
        return ls.asarray(coo.tocsr(), format=fmt), S & (D != 0)
    nz = np.nonzero(S)
    coo = pydata.COO(np.array(nz).reshape(D.ndim, -1), D[nz], shape=D.shape)
    A = ls.asarray(coo, format=None if fmt == "coo" else fmt)
    return A, (S.copy() if fmt == "coo" else S & (D != 0))


def npf(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args)


def dense_of(x):
    """Dense values of a result; csr/csc/coo through scipy (zero-copy, no conversion kernel to
    compile: the test suite's time goes into the kernels under test)."""
    if x.ndim == 2 and x.format.name in SCIPY_NATIVE:
        return x.to_scipy().toarray()
    return x.todense()


def same(got, want, rtol=1e-12, atol=1e-12):
    """Equal dtype and shape; NaN exactly where NumPy has NaN, the same infinities, finite values
    to rounding (sums may associate differently)."""
    if isinstance(got, ls.Array):
        assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
        got = dense_of(got)
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"NaN positions\n{got}\n{want}")
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=f"infinities\n{got}\n{want}")
    np.testing.assert_array_equal(np.isinf(got), inf, err_msg=f"infinities\n{got}\n{want}")
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol)


# -- elementwise: NumPy on dense values, except the annihilating product and numerator ------------
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.true_divide,
    "maximum": np.maximum, "minimum": np.minimum, "less": np.less, "equal": np.equal,
    "not_equal": np.not_equal, "greater_equal": np.greater_equal,
}
ELEMENTWISE_CASES = [
    ("multiply", "csr", "csr"), ("multiply", "csr", "dense"), ("multiply", "dense", "csc"),
    ("multiply", "coo", "coo"), ("multiply", "dense", "dense"),
    ("divide", "csr", "dense"), ("divide", "csr", "csr"), ("divide", "dense", "coo"),
    ("add", "csr", "csr"), ("add", "coo", "dense"), ("subtract", "csc", "csc"),
    ("maximum", "csr", "csr"), ("minimum", "dense", "coo"),
    ("less", "csr", "dense"), ("equal", "csr", "csr"), ("not_equal", "coo", "coo"),
]


def rule(op, Ad, SA, Bd, SB):
    """The documented value of ``op(A, B)``: NumPy on dense values, except that ``*`` computes
    only where both store and ``/`` only where the numerator stores."""
    f = BINARY[op]
    if op == "multiply":
        return np.where(SA & SB, npf(f, Ad, Bd), 0.0)
    if op == "divide":
        return np.where(SA, npf(f, Ad, Bd), 0.0)
    return npf(f, Ad, Bd)


def grid():
    """Every pair (a, b) of {special values, stored 0, implicit 0}: ``A[i, j]`` is option ``i``,
    ``B[i, j]`` option ``j`` (the last option is an implicit zero)."""
    opts = SPECIAL + [0.0]
    n = len(opts)
    col = np.array(opts)
    Ad = np.repeat(col[:, None], n, axis=1)
    S = np.ones((n, n), bool)
    S[-1, :] = False
    return Ad, S, Ad.T.copy(), S.T.copy()


@pytest.mark.parametrize("op,fa,fb", ELEMENTWISE_CASES, ids=["-".join(c) for c in ELEMENTWISE_CASES])
def test_elementwise_special_values(op, fa, fb):
    Ad, SA0, Bd, SB0 = grid()
    A, SA = make(Ad, SA0, fa)
    B, SB = make(Bd, SB0, fb)
    same(BINARY[op](A, B), rule(op, Ad, SA, Bd, SB))  # NumPy ufuncs dispatch to lazysparse


OUTER = {  # operations not zero at zero, on top of a product or a quotient
    "+1": (lambda x: x + 1.0, lambda x: x + 1.0),
    "exp": (ls.exp, np.exp),
    "==0": (lambda x: x == 0, lambda x: x == 0),
    "1/": (lambda x: 1.0 / x, lambda x: 1.0 / x),
    "maximum(.,-1)": (lambda x: ls.maximum(x, -1.0), lambda x: np.maximum(x, -1.0)),
}


@pytest.mark.parametrize("fusion", ["auto", "max", "none"])
@pytest.mark.parametrize("outer", sorted(OUTER))
@pytest.mark.parametrize("op,fa,fb", [("multiply", "csr", "dense"), ("multiply", "csr", "csr"),
                                      ("multiply", "coo", "coo"), ("divide", "csr", "dense"),
                                      ("divide", "csc", "csc")])
def test_structural_zeros_inside_larger_expressions(op, fa, fb, outer, fusion):
    """A product or a quotient read by an operation that is not zero at zero: the loop then
    visits every point, and where the product's pattern fails its value is the structural +0
    (``A * nan + 1`` is 1 where A stores nothing, ``1 / (A * B)`` is +inf, not -inf for a
    negative A), in every fusion mode (the single-operation lowerer evaluated ``0 * nan``)."""
    Ad, SA0, Bd, SB0 = grid()
    A, SA = make(Ad, SA0, fa)
    B, SB = make(Bd, SB0, fb)
    lazy, numpy_ = OUTER[outer]
    got = lazy(BINARY[op](A, B)).materialize(fusion=fusion)
    inner = rule(op, Ad, SA, Bd, SB)
    if fusion == "none":  # (the product is a result of its own: its computed zeros, -0.0
        inner = np.where(inner == 0, 0.0, inner)  # included, are squeezed out, as scipy's)
    same(got, npf(numpy_, inner))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_a_sparse_column_broadcast_along_rows_keeps_its_structural_zeros(fmt):
    v = ls.asarray(sp.csr_array([[1.0], [0.0]]).asformat(fmt))
    v.materialize()
    same(v * np.array([[NAN, NAN]]), np.array([[NAN, NAN], [0.0, 0.0]]))
    same(v / ls.asarray(sp.csr_array((2, 2))), np.array([[INF, INF], [0.0, 0.0]]))


def test_stored_zero_times_nan_is_nan_implicit_zero_gives_zero():
    """The two kinds of zero, side by side (csr with an explicit 0 at (0, 0))."""
    A = sp.csr_array((np.array([0.0, 2.0]), np.array([0, 1]), np.array([0, 2, 2])), shape=(2, 2))
    B = np.array([[NAN, INF], [NAN, -INF]])
    got = (ls.asarray(A) * ls.asarray(B)).todense()
    # (0,0): stored 0 * NaN = NaN; (0,1): 2 * inf; row 1: implicit zeros stay 0
    same(got, np.array([[NAN, INF], [0.0, 0.0]]))
    # scipy agrees for sparse * dense
    same(got, A.multiply(B).toarray())
    # and a dense stored 0 is a stored value too: NumPy
    same((ls.asarray(A.toarray()) * ls.asarray(B)).todense(), A.toarray() * B)


def test_sparse_times_sparse_differs_from_scipy_only_at_nonfinite_values():
    """scipy's sparse.multiply(sparse) evaluates on the union of the patterns (0 * NaN = NaN where
    only one side stores); lazysparse intersects (documented). Finite values: identical."""
    A = sp.csr_array(np.array([[1.0, 0.0], [0.0, 2.0]]))
    B = sp.csr_array(np.array([[0.0, NAN], [INF, 3.0]]))
    got = (ls.asarray(A) * ls.asarray(B)).todense()
    same(got, np.array([[0.0, 0.0], [0.0, 6.0]]))
    assert np.isnan(A.multiply(B).toarray()[0, 1])  # scipy's union evaluation
    Bf = sp.csr_array(np.array([[0.0, 5.0], [7.0, 3.0]]))
    same((ls.asarray(A) * ls.asarray(Bf)).todense(), A.multiply(Bf).toarray())


# -- products and contractions: only stored pairs contribute (scipy's rule) -------------------------
def stored_products(Ad, SA, Bd, SB):
    """sum_k A[i,k] * B[k,j] over the k where both store, computed densely."""
    prod = npf(np.multiply, Ad[:, :, None], Bd[None, :, :])
    return np.where(SA[:, :, None] & SB[None, :, :], prod, 0.0).sum(axis=1)


@pytest.mark.parametrize("fa,fb", [("csr", "dense"), ("csr", "csr"), ("dense", "csc")])
@examples(15)
@given(data=st.data())
def test_matmul_special_values(fa, fb, data):
    Ad, SA0 = data.draw(matrices(), label="A")
    k = Ad.shape[1]
    Bd, SB0 = data.draw(matrices(shape=(k, data.draw(st.integers(1, 4), label="n"))), label="B")
    A, SA = make(Ad, SA0, fa)
    B, SB = make(Bd, SB0, fb)
    got = (A @ B).todense()
    same(got, stored_products(Ad, SA, Bd, SB))
    # scipy, with the same stored entries, is the reference for sparse products (a dense operand
    # stores every element, its zeros included)
    sa = Ad if fa == "dense" else A.to_scipy()
    sb = Bd if fb == "dense" else B.to_scipy()
    ref = npf(lambda a, b: a @ b, sa, sb)
    same(got, ref.toarray() if sp.issparse(ref) else ref)


@examples(15)
@given(data=st.data())
def test_einsum_special_values(data):
    Ad, SA0 = data.draw(matrices(), label="A")
    Bd, SB0 = data.draw(matrices(shape=Ad.shape), label="B")
    A, SA = make(Ad, SA0, "csr")
    B, SB = make(Bd, SB0, "dense")
    # row-wise dot product: only pairs where the csr operand stores contribute
    got = ls.einsum("ij,ij->i", A, B)
    same(got, np.where(SA, npf(np.multiply, Ad, Bd), 0.0).sum(axis=1))


# -- reductions: NumPy on the dense values ----------------------------------------------------------
REDUCTION_CASES = [("csr", "sum", 0), ("csr", "sum", 1), ("csr", "max", 0), ("csr", "prod", 1),
                   ("csr", "min", None), ("coo", "max", 0), ("csr", "mean", 1)]


@pytest.mark.parametrize("fmt,red,axis", REDUCTION_CASES)
@examples(15)
@given(data=st.data())
def test_reductions_special_values(fmt, red, axis, data):
    Ad, S0 = data.draw(matrices(), label="A")
    A, _ = make(Ad, S0, fmt)
    same(getattr(A, red)(axis=axis), npf(getattr(np, red), Ad, axis))


# -- unary functions: NumPy at every element (log of a negative is NaN, log(0) = -inf) --------------
UNARY = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt, "tanh": np.tanh,
         "abs": np.abs, "negative": np.negative,
         "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "relu": lambda x: np.maximum(x, 0.0)}
UNARY_CASES = [(f, "csr") for f in UNARY] + [("log", "dense"), ("sqrt", "coo")]


@pytest.mark.parametrize("fn,fmt", UNARY_CASES)
def test_unary_special_values(fn, fmt):
    """Every special value, negatives (log, sqrt -> NaN), stored and implicit zeros (log -> -inf)."""
    row = np.array(SPECIAL + [-1.0, -INF, 0.0])
    D = np.vstack([row, row[::-1]])
    S = np.ones(D.shape, bool)
    S[:, -1] = False  # implicit zeros
    D = np.where(S, D, 0.0)
    A, _ = make(D, S, fmt)
    # libm and NumPy's SIMD loops may differ in the last bit of transcendental functions
    same(getattr(ls, fn)(A), npf(UNARY[fn], D), rtol=1e-14)
    if fn in ("log", "sqrt"):
        same(getattr(np, fn)(A), npf(UNARY[fn], D), rtol=1e-14)  # NumPy protocol, same kernel


# -- comparisons and where with NaN ------------------------------------------------------------------
def test_comparisons_and_where_with_nan():
    D = np.array([[NAN, 0.0, 1.0], [-INF, NAN, 0.0]])
    A = ls.asarray(sp.csr_array(D))
    same(A < 1.0, D < 1.0)
    same(A != A, D != D)          # NaN != NaN, stored or not
    same(A == 0.0, D == 0.0)      # a dense result: implicit zeros compare equal
    same(ls.where(A > 0.5, A, -1.0), np.where(D > 0.5, D, -1.0))
    same(ls.where(A != A, 0.0, A), np.where(D != D, 0.0, D))


# -- operations with special scalars -----------------------------------------------------------------
SCALAR_CASES = [
    # (expression, NumPy/rule reference): multiply annihilates, the rest is NumPy
    ("A * nan", lambda D, S: np.where(S, D * NAN, 0.0)),
    ("A * inf", lambda D, S: np.where(S, D * INF, 0.0)),
    ("A / 0.0", lambda D, S: D / 0.0),
    ("1.0 / A", lambda D, S: 1.0 / D),
    ("A / inf", lambda D, S: D / INF),
    ("A + nan", lambda D, S: D + NAN),
    ("A ** -1.0", lambda D, S: D ** -1.0),
    ("np.maximum(A, nan)", lambda D, S: np.maximum(D, NAN)),
]


@pytest.mark.parametrize("expr,ref", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_special_scalars(expr, ref):
    fmt = "coo" if "inf" in expr else "csr"
    D = np.array([[1.5, 0.0, -2.0], [0.0, NAN, INF]])
    S = D != 0
    A, _ = make(D, S, fmt)
    got = npf(lambda: eval(expr, {"A": A, "np": np, "nan": NAN, "inf": INF}))
    same(got, npf(ref, D, S))


# -- integers: NumPy's wrapping arithmetic ------------------------------------------------------------
def int_matrix(dt):
    i = np.iinfo(dt)
    return np.array([[i.max, 0, i.min, 7], [i.max - 1, -1, 0, i.min + 1], [3, i.max, -5, 0]], dtype=dt)


INT_CASES = [
    (np.int32, "dense", "A + A"), (np.int32, "dense", "A * A"), (np.int32, "dense", "-A"),
    (np.int32, "dense", "abs(A)"), (np.int32, "dense", "A ** 3"), (np.int32, "csr", "A - 1"),
    (np.int32, "csr", "A.sum(axis=0, dtype=np.int32)"), (np.int64, "csr", "A * A"),
    (np.int64, "csr", "A.sum(axis=1)"), (np.int64, "csr", "A @ A.T"),
    (np.int64, "csr", "ls.einsum('ij,ij->j', A, A)"), (np.int64, "dense", "A.astype(np.int32)"),
]


@pytest.mark.parametrize("dt,fmt,expr", INT_CASES, ids=[f"{np.dtype(c[0])}-{c[1]}-{c[2]}" for c in INT_CASES])
def test_integer_overflow_wraps_like_numpy(dt, fmt, expr):
    D = int_matrix(dt)
    A, _ = make(D, D != 0, fmt)
    got = eval(expr, {"A": A, "np": np, "ls": ls})
    want = npf(lambda: eval(expr.replace("ls.einsum", "np.einsum"), {"A": D, "np": np}))
    same(got, want)


@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_fused_overflow_is_not_optimised_away(dt):
    """One kernel computes ``max(B + 1, B)``: without ``-fwrapv`` (signed overflow undefined) the
    compiler may fold ``B + 1 > B`` to true and return ``B + 1`` even at the maximum."""
    b = np.array([np.iinfo(dt).max, 5, np.iinfo(dt).min, 0], dtype=dt)
    r = ls.expr("A[i] = max(B[i] + 1, B[i])", B=ls.asarray(b))
    same(r, npf(lambda: np.maximum(b + 1, b)))
    assert r.todense()[0] == np.iinfo(dt).max


def test_compiler_flags_define_overflow_and_keep_ieee(tmp_path):
    """The flags every kernel is built with: wrapping signed overflow, and nothing that lets the
    compiler assume finite values or reassociate (NaN checks, ``x != x``, must survive)."""
    from lazysparse.runtime import kernel_cache as cache, toolchain as compiler
    info = compiler.compiler_info(cache._probe_dir())
    flags = set(info.flags)
    assert "-fwrapv" in flags or "-fno-strict-overflow" in flags
    assert not flags & {"-ffast-math", "-Ofast", "-ffinite-math-only", "-fno-honor-nans",
                        "-funsafe-math-optimizations", "-fassociative-math"}
    # and the compiler really honours them: INT_MAX + 1 > INT_MAX is false, NaN != NaN
    src = tmp_path / "probe.c"
    src.write_text("#include <stdint.h>\n"
                   "int32_t wraps(int32_t a) { return a + 1 > a; }\n"
                   "int32_t isnan_(double x) { return x != x; }\n")
    so = tmp_path / "probe.so"
    compiler.compile_shared(info, str(src), str(so))
    lib = ctypes.CDLL(str(so))
    lib.isnan_.argtypes = [ctypes.c_double]
    assert lib.wraps(np.iinfo(np.int32).max) == 0
    assert lib.isnan_(float("nan")) == 1


# -- result dtypes: NumPy's ---------------------------------------------------------------------------
def _dtype_cases():
    F = np.array([[1.5, 0.0, 3e38], [0.0, -2.25, 1e-45]], dtype=np.float32)
    Bo = np.array([[True, False, True], [False, False, True]])
    I = np.array([[2**31 - 1, 0, 2], [0, 2**31 - 1, -3]], dtype=np.int32)
    return [
        (F, "csr", "A + A"), (F, "dense", "A * 0.1"), (F, "csr", "A.sum(axis=0)"), (F, "csr", "A.mean(axis=1)"),
        (F, "csr", "A @ A.T"), (F, "csr", "np.exp(A)"),
        (Bo, "csr", "A.sum()"), (Bo, "csr", "A.sum(axis=0)"), (Bo, "csr", "A.mean(axis=0)"),
        (Bo, "csr", "A @ A.T"), (Bo, "csr", "A * 2.5"), (I, "csr", "A.sum(axis=0)"),
    ]


@pytest.mark.parametrize("D,fmt,expr", _dtype_cases(),
                         ids=[f"{c[0].dtype}-{c[1]}-{c[2]}" for c in _dtype_cases()])
def test_result_dtypes_follow_numpy(D, fmt, expr):
    A, _ = make(D, D != 0, fmt)
    got = eval(expr, {"A": A, "np": np, "ls": ls})
    want = npf(lambda: eval(expr.replace("ls.einsum", "np.einsum"), {"A": D, "np": np}))
    assert got.dtype == np.asarray(want).dtype  # the lazy array says so before running
    tol = dict(rtol=1e-6, atol=1e-45) if np.asarray(want).dtype == np.float32 else {}
    same(got, want, **tol)
