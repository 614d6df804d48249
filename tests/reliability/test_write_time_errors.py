"""Mistakes raise on the line that builds the lazy node, naming the operation.

Every call below only *builds* (nothing is materialized), so an error deferred to ``compute()`` — or a
C compiler error, or a kernel fed a dtype it cannot store — makes the test fail with "DID NOT
RAISE". The table holds the mistakes of each kind (shape, dtype, axis, subscript, format); the
property test takes NumPy as the oracle for shapes, axes and dtypes: whatever NumPy refuses on
arrays of the same shapes and dtypes, lazysparse refuses when the line is written, and whatever
NumPy accepts gets a lazy node with NumPy's shape and dtype (or, for a dtype lazysparse does not
store, a TypeError at once).
"""
from __future__ import annotations

import os
import random
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import lazysparse as ls
from lazysparse.formats.storage import VALUE_DTYPES

SCALE = float(os.environ.get("LAZYSPARSE_HYPOTHESIS_SCALE", "1"))

A = ls.asarray(sp.random_array((4, 3), density=0.5, format="csr", rng=0))      # shape (4, 3)
D = ls.asarray(np.ones((3, 5)))
C = ls.asarray(np.ones((4, 3), np.complex128))
Bo = ls.asarray(np.ones((4, 3), bool))
X40 = np.ones((1,) * 40)
F = ls.Format

TABLE = [
    # shapes
    ("add shapes", lambda: A + D, ValueError, r"^\+: operands could not be broadcast together with shapes \(4, 3\) \(3, 5\)"),
    ("matmul shapes", lambda: A @ A, ValueError, r"^matmul: mismatch in the contracted dimension \(3 != 4\) .*\(4, 3\), \(4, 3\)"),
    ("matmul 0-d", lambda: ls.matmul(A, 2.0), ValueError, r"^matmul: input operand 1 does not have enough dimensions"),
    ("dot shapes", lambda: A.dot(np.ones(4)), ValueError, r"^dot: shapes \(4, 3\) and \(4,\) not aligned"),
    ("where shapes", lambda: ls.where(A > 0, A, D), ValueError, r"^where: operands could not be broadcast"),
    ("tensordot axes", lambda: ls.tensordot(A, D, axes=([0], [0])), ValueError,
     r"^tensordot: shape-mismatch for sum: axis 0 of the first operand has size 4"),
    ("tensordot too many indices", lambda: ls.tensordot(X40, X40, 0), ValueError,
     r"^tensordot: 80 distinct indices are more than the 64 supported"),
    # subscripts
    ("einsum operand count", lambda: ls.einsum("ij,jk", A), ValueError, r"^einsum: subscripts 'ij,jk' name 2 operand"),
    ("einsum extents", lambda: ls.einsum("ij,ij->i", A, D), ValueError, r"^einsum: index 'i' has size 4 .* shapes \(4, 3\), \(3, 5\)"),
    ("einsum rank", lambda: ls.einsum("ijk", A), ValueError, r"^einsum: operand 0 of shape \(4, 3\) has 2 dimension"),
    ("einsum output", lambda: ls.einsum("ij->k", A), ValueError, r"^einsum: output subscript 'k'"),
    ("einsum tab", lambda: ls.einsum("i\tj", A), ValueError, r"^einsum: invalid subscript '\\t'"),
    ("expr extents", lambda: ls.expr("y[i] = A[i,j] * x[j]", A=A, x=np.ones(4)), ValueError,
     r"^expr: index 'j' has extent 3 in A\[i,j\] \(shape \(4, 3\)\) but 4 in x\[j\]"),
    ("expr rank", lambda: ls.expr("y[i] = A[i]", A=A), ValueError, r"^expr: operand A of shape \(4, 3\) is accessed with 1"),
    ("expr max over nothing", lambda: ls.expr("y = x[i]", x=np.ones(0), reduce="max"), ValueError,
     r"^expr: reduce='max' over index 'i' of extent 0"),
    ("expr long number", lambda: ls.expr("y = " + "9" * 5000), ValueError, r"^expr: number of 5000 digits"),
    # axes
    ("sum axis range", lambda: A.sum(axis=2), ValueError, r"^sum: axis 2 is out of bounds for an operand of shape \(4, 3\)"),
    ("sum axis repeated", lambda: A.sum(axis=(0, -2)), ValueError, r"^sum: repeated axis"),
    ("sum axis float", lambda: A.sum(axis=1.0), TypeError, r"^sum: axis must be an int"),
    ("max of zero-size", lambda: ls.asarray(np.ones((0, 3))).max(axis=0), ValueError, r"^max: zero-size array"),
    ("transpose float axes", lambda: A.transpose(0.0, 1), TypeError, r"^transpose: axes must be integers, got 0.0"),
    ("transpose str axes", lambda: ls.transpose(A, ("1", "0")), TypeError, r"^transpose: axes must be integers"),
    ("transpose int for 2-d", lambda: ls.transpose(A, 1), ValueError, r"^transpose: axes \(1,\) don't match an array of shape \(4, 3\)"),
    ("transpose repeated", lambda: A.transpose(1, 1), ValueError, r"^transpose: repeated axis"),
    # dtypes
    ("exp of bool is float16", lambda: ls.exp(Bo), TypeError, r"^exp: NumPy computes exp of bool operands in float16"),
    ("np.sin of bool", lambda: np.sin(Bo), TypeError, r"^sin: NumPy computes sin of bool operands in float16"),
    ("sqrt of int8 is float16", lambda: ls.sqrt(ls.asarray(np.ones(3, np.int8))), TypeError,
     r"^sqrt: NumPy computes sqrt of int8 operands in float16"),
    ("int ** negative", lambda: ls.asarray(np.ones(3, np.int32)) ** -1, ValueError,
     r"^\*\*: integers to negative integer powers are not allowed"),
    ("expr exp of bool", lambda: ls.expr("y[i,j] = exp(b[i,j])", b=Bo), TypeError, r"^expr: NumPy computes exp of bool"),
    ("maximum of complex", lambda: ls.maximum(C, C), TypeError, r"^maximum: complex values have no ordering"),
    ("np.minimum of complex", lambda: np.minimum(C, 1.0), TypeError, r"^minimum: complex values have no ordering"),
    ("relu of complex", lambda: ls.relu(C), TypeError, r"^relu: complex values have no ordering"),
    ("expr max of complex", lambda: ls.expr("y[i,j] = max(c[i,j], 0)", c=C), TypeError, r"^expr: complex values"),
    ("max reduce complex", lambda: C.max(), TypeError, r"^max: complex values have no ordering"),
    ("bitwise on floats", lambda: A & A, TypeError, r"^bitwise_and: unsupported operand dtypes"),
    ("sum dtype float16", lambda: A.sum(dtype="float16"), TypeError, r"^sum: the requested dtype is float16, which lazysparse does not support"),
    ("ls.sum dtype str", lambda: ls.sum(A, dtype="U1"), TypeError, r"^sum: unsupported dtype <U1"),
    ("prod dtype object", lambda: A.prod(dtype=object), TypeError, r"^prod: unsupported dtype object"),
    ("mean dtype", lambda: A.mean(dtype="float16"), TypeError, r"^mean: the requested dtype is float16"),
    ("astype float16", lambda: A.astype("float16"), TypeError, r"^astype: the requested dtype is float16.*astype\(np.float32\)"),
    ("astype nonsense", lambda: A.astype("nonsense"), TypeError, r"^astype: 'nonsense' is not a dtype"),
    ("operand type", lambda: A + "x", TypeError, r"^unsupported operand type\(s\) for \+: 'Array' and 'str'"),
    ("python int out of int64", lambda: ls.asarray(np.arange(3)) + 2 ** 70, OverflowError,
     r"^\+: Python integer 1180591620717411303424 out of bounds for int64$"),
    ("huge python int", lambda: ls.asarray(np.arange(3)) * 10 ** 400, OverflowError,
     r"^\*: Python integer 1000+\.\.\.0+ \(401 characters\) out of bounds for int64$"),
    ("positive of bool", lambda: +Bo, TypeError, r"^positive: not defined for a bool array"),
    ("np.positive of bool", lambda: np.positive(Bo), TypeError, r"^positive: not defined for a bool array"),
    # formats
    ("unknown format name", lambda: ls.einsum("ij->ij", A, format="bsr"), ValueError, r"^einsum: unknown format 'bsr'"),
    ("format levels", lambda: ls.einsum("ij->i", A, format=ls.csf.resolve(2)), ValueError,
     r"^einsum: format ls.csf has 2 levels but the array has 1 dimensions"),
    ("format of wrong type", lambda: ls.matmul(A, D, format=3), TypeError, r"^matmul: expected a format"),
    ("format not assemblable", lambda: ls.einsum("ij->ij", A, format=F(["compressed", "dense"])), ValueError,
     r"^einsum: lazysparse cannot assemble results in format"),
    ("materialize format", lambda: (A * 2).materialize(format=F(["dense", ("compressed", {"unique": False})])),
     ValueError, r"^materialize: lazysparse cannot assemble"),
    ("materialize bad name", lambda: (A * 2).materialize(format="csr3"), ValueError, r"^materialize: unknown format 'csr3'"),
    ("expr format", lambda: ls.expr("y[i] = x[i]", x=np.ones(3), format=ls.csr.resolve(2)), ValueError,
     r"^expr: format ls.csr has 2 levels but the array has 1 dimensions"),
    ("asarray format", lambda: ls.asarray(np.eye(3), format=F(["compressed", "dense"])), ValueError,
     r"^asarray: lazysparse cannot assemble"),
    ("asformat format", lambda: A.asformat("coo3"), ValueError, r"^asformat: unknown format 'coo3'"),
    ("random format", lambda: ls.random((3, 3), format=F(["compressed", "dense"])), ValueError, r"^random: lazysparse cannot"),
    ("singleton after dense", lambda: F(["dense", "singleton"]), ValueError, r"^Format: singleton level 1 must follow"),
    ("singleton after unique", lambda: F(["compressed", "singleton"]), ValueError, r"^Format: singleton level 1 must follow"),
    ("format order float", lambda: F(["dense", "compressed"], order=(1.5, 0)), TypeError, r"^Format: order entries must be integers"),
    ("format order permutation", lambda: F(["dense", "compressed"], order=(1, 1)), ValueError, r"^Format: order \(1, 1\) is not a permutation"),
    ("format levels not a list", lambda: F("csr"), TypeError, r"^Format: levels must be a sequence"),
    ("level property", lambda: F(["dense", ("compressed", {"sorted": True})]), TypeError, r"^Format: unknown level properties \['sorted'\]"),
    ("level property type", lambda: F(["dense", ("compressed", {"unique": "yes"})]), TypeError, r"^Level: unique must be True or False"),
    ("level kind", lambda: F(["dense", "hashed"]), ValueError, r"^Level: unknown level kind 'hashed'"),
    # creation arguments
    ("random density type", lambda: ls.random((3, 3), density="a"), TypeError, r"^random: density must be a number"),
    ("random density range", lambda: ls.random((3, 3), density=1.5), ValueError, r"^random: density must be in \[0, 1\]"),
    ("eye offset", lambda: ls.eye(3, k=1.5), TypeError, r"^eye: the diagonal offset k must be an integer"),
]


@pytest.mark.parametrize("name,build,exc,match", TABLE, ids=[t[0] for t in TABLE])
def test_mistake_raises_when_written(name, build, exc, match):
    with pytest.raises(exc, match=match):
        build()


def test_unassemblable_format_is_also_a_not_implemented_error():
    """A well-formed format the compiler cannot produce yet: catchable as either."""
    with pytest.raises(NotImplementedError):
        ls.einsum("ij->ij", A, format=F(["compressed", "dense"]))


def test_supported_formats_still_build_and_compute():
    """The format checks refuse nothing the compiler can assemble (COO-like, DCSC, dense orders)."""
    d = np.arange(12.0).reshape(4, 3) * (np.arange(12).reshape(4, 3) % 3 == 0)
    for fmt in ("csr", "csc", "coo", "dcsr", "dcsc", "csf", "dense", F(["dense", "dense"], order=(1, 0)),
                F([("compressed", {"unique": False, "ordered": False}), ("singleton", {"unique": False})])):
        out = ls.einsum("ij->ij", ls.asarray(d), format=fmt)
        np.testing.assert_array_equal(out.todense(), d)


# -- NumPy as the oracle for shapes, axes and dtypes (no kernel runs) --------------------------------
DTYPES = [str(d) for d in VALUE_DTYPES]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "less", "equal",
          "bitwise_and", "bitwise_or"]
UNARY = ["exp", "log", "sqrt", "absolute", "negative", "sin", "tanh", "invert"]
REDUCE = ["sum", "prod", "max", "min", "mean"]
ORDERING = {"maximum", "minimum"}


def _shape(r):
    return tuple(r.choice([0, 1, 2, 3, 3]) for _ in range(r.choice([0, 1, 1, 2, 2, 2, 3])))


def _axis(r, nd):
    c = r.random()
    if c < 0.25:
        return None
    if c < 0.6:
        return r.randint(-nd - 1, nd)
    if c < 0.85:
        return tuple(r.randint(-nd, nd) for _ in range(r.randint(0, 3)))
    return r.choice([1.0, "0", True, (None,), (0.0,)])  # (lists are accepted, unlike NumPy)


def _case(r):
    """(description, numpy thunk, lazysparse thunk, kind) for a random operation."""
    kind = r.choice(["binary", "binary", "unary", "matmul", "tensordot", "reduce", "reduce", "transpose",
                     "astype", "where", "scalar"])
    da, db = r.choice(DTYPES), r.choice(DTYPES)
    sa, sb = _shape(r), _shape(r)
    a, b = np.zeros(sa, da), np.zeros(sb, db)
    la, lb = ls.asarray(a), ls.asarray(b)
    if kind == "binary":
        op = r.choice(BINARY)
        return (op, a.dtype, b.dtype), lambda: getattr(np, op)(a, b), lambda: getattr(np, op)(la, lb), op
    if kind == "scalar":
        op = r.choice(BINARY)
        s = r.choice([2, -1, 2.5, 1j, True, 2**40, 2**70])
        return (op, a.dtype, s), lambda: getattr(np, op)(a, s), lambda: getattr(np, op)(la, s), op
    if kind == "unary":
        op = r.choice(UNARY)
        return (op, a.dtype), lambda: getattr(np, op)(a), lambda: getattr(np, op)(la), op
    if kind == "matmul":
        return ("matmul", sa, sb), lambda: a @ b, lambda: la @ lb, "matmul"
    if kind == "tensordot":
        axes = r.choice([0, 1, 2, ([0], [0]), ([1], [0]), ([0, 1], [1, 0]), ([-1], [5])])
        return ("tensordot", sa, sb, axes), lambda: np.tensordot(a, b, axes), lambda: ls.tensordot(la, lb, axes), "tensordot"
    if kind == "reduce":
        op, axis, keep = r.choice(REDUCE), _axis(r, len(sa)), r.random() < 0.3
        dt = r.choice([None, None, None, "float32", "int64", "float16", "bool"]) if op in ("sum", "prod", "mean") else None
        kw = {"axis": axis, "keepdims": keep} | ({"dtype": dt} if dt else {})
        return ((op, sa, kw), lambda: getattr(np, op)(a, **kw), lambda: getattr(ls, op)(la, **kw), op)
    if kind == "transpose":
        axes = r.choice([None, tuple(range(len(sa)))[::-1], (0,), (1, 0), (0, 0), (1.0, 0), (-1, 0), 1, (0, 2, 1)])
        return ("transpose", sa, axes), lambda: np.transpose(a, axes), lambda: ls.transpose(la, axes), "transpose"
    if kind == "astype":
        dt = r.choice(DTYPES + ["float16", "int8", "U3", "nonsense"])
        return ("astype", da, dt), lambda: a.astype(dt), lambda: la.astype(dt), "astype"
    cond = np.zeros(_shape(r), r.choice(DTYPES))
    return (("where", cond.shape, sa, sb), lambda: np.where(cond, a, b),
            lambda: ls.where(ls.asarray(cond), la, lb), "where")


@settings(max_examples=max(1, int(1200 * SCALE)))
@given(seed=st.integers(0, 2**32 - 1))
def test_builds_exactly_what_numpy_computes(seed):
    r = random.Random(seed)
    desc, np_fn, ls_fn, op = _case(r)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            want = np.asarray(np_fn())
        np_err = None
    except Exception as e:  # NumPy's verdict on these shapes/dtypes/axes
        want, np_err = None, e
    try:
        got = ls_fn()
    except (ValueError, TypeError, OverflowError) as e:
        if np_err is not None:
            # OverflowError only where NumPy raises it too (a Python int beyond the dtype, NEP 50)
            assert not isinstance(e, OverflowError) or isinstance(np_err, OverflowError), (desc, e)
            return
        unsupported = want.dtype not in VALUE_DTYPES
        # complex values have no order here (NumPy orders them lexicographically)
        complex_order = op in ORDERING | {"max", "min"} and want.dtype.kind == "c"
        # known, deliberate differences: max/min over an empty axis is refused even where NumPy's
        # result is itself empty; an axis of a 0-d array (NumPy accepts axis=0 there) is refused
        empty_reduce = op in ("max", "min") and "zero-size" in str(e)
        zero_d_axis = op in REDUCE and desc[1] == () and "out of bounds" in str(e)
        # NumPy 2 compares with Python ints beyond the array's dtype; lazysparse casts the scalar
        # to the array's dtype and says so (OverflowError, as NumPy's arithmetic does)
        big_compare = op in ("less", "equal") and isinstance(e, OverflowError)
        assert isinstance(e, TypeError) and (unsupported or complex_order) or empty_reduce or zero_d_axis \
            or big_compare, \
            f"{desc}: NumPy gives {want.dtype}{want.shape}, lazysparse raised {type(e).__name__}: {e}"
        return
    assert np_err is None, f"{desc}: NumPy raises {type(np_err).__name__}: {np_err}; lazysparse built a node"
    assert isinstance(got, ls.Array) and got.is_lazy, desc
    assert got.shape == want.shape, (desc, got.shape, want.shape)
    assert got.dtype == want.dtype, (desc, got.dtype, want.dtype)


# user text in messages is cut short (a pathological input must not come back whole)
LONG = [
    ("einsum subscripts", lambda: ls.einsum("i" * 100_000, A), ValueError),
    ("expr notation", lambda: ls.expr("x" * 100_000 + " + ", a=A), ValueError),
    ("format name", lambda: A.materialize(format="q" * 100_000), ValueError),
    ("astype name", lambda: A.astype("z" * 100_000), TypeError),
    ("level kind", lambda: F(["dense", "h" * 100_000]), ValueError),
    ("python int", lambda: A * 10 ** 100_000, OverflowError),
]


@pytest.mark.parametrize("name,build,exc", LONG, ids=[t[0] for t in LONG])
def test_messages_quote_long_user_text_cut_short(name, build, exc):
    with pytest.raises(exc) as info:
        build()
    msg = str(info.value)
    assert len(msg) < 400 and ("characters)" in msg or "bits>" in msg), msg


def test_unary_plus_is_a_new_array_like_numpys_copy():
    S = sp.random_array((5, 4), density=0.4, format="csr", rng=3)
    for x, ref in ((ls.asarray(S), S.toarray()), (ls.asarray(np.arange(6).reshape(2, 3)), np.arange(6).reshape(2, 3))):
        for y in (+x, np.positive(x)):
            assert y is not x and y.dtype == x.dtype and y.shape == x.shape
            out = y.materialize()
            assert out.format == x.format
            np.testing.assert_array_equal(out.todense(), +ref)
