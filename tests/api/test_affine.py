"""Affine subscripts in ``ls.expr`` (API.md; the CPU cases of "Compiler Support for Sparse Tensor
Convolutions", the convolution paper: its running example, nnz-bounded work, both loop orders,
formats, lattices, general affine forms and COO input).

The oracle is NumPy on dense copies: every index assignment enumerated with ``np.indices``, each
operand read at its subscripts by fancy indexing, then summed (or maxed) over the reduced
indices. Extents are written out here from the convolution paper's rule, not taken from the
library.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st

import lazysparse as ls
from lazysparse.api import affine as windows

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def oracle(out, red, extent, body, reduce="sum"):
    """``out[...] = reduce_{red} body(index grids)`` over all assignments (dense NumPy)."""
    names = list(out) + list(red)
    grids = np.indices([extent[v] for v in names]) if names else np.zeros((0,), int)
    g = {v: grids[k] for k, v in enumerate(names)}
    vals = np.asarray(body(g))
    vals = np.broadcast_to(vals, tuple(extent[v] for v in names))
    axes = tuple(range(len(out), len(names)))
    if not axes:
        return vals
    if reduce == "max":
        return vals.max(axis=axes) if vals.size else np.zeros(vals.shape[:len(out)])
    return vals.sum(axis=axes)


def dense(x):
    if isinstance(x, ls.Array):
        return np.asarray(x.todense())
    return x.toarray() if sp.issparse(x) else np.asarray(x)


def as_format(a, fmt, index=np.int32):
    """``a`` (dense NumPy) as an lazysparse array of ``fmt`` with indices of width ``index``."""
    if fmt == "dense":
        return ls.asarray(a)
    if fmt in ("csr", "csc", "coo") and a.ndim == 2:
        m = getattr(sp, f"{fmt}_array")(a)
        if fmt == "coo":
            m.row, m.col = m.row.astype(index), m.col.astype(index)
        else:
            m.indices, m.indptr = m.indices.astype(index), m.indptr.astype(index)
        return ls.asarray(m)
    return ls.asarray(a, format=fmt)


def sparse_vec(n, coords, vals=None):
    a = np.zeros(n)
    a[list(coords)] = vals if vals is not None else np.arange(1, len(coords) + 1)
    return a


# -- the running example: only the non-empty windows are visited -----------------------------------
def test_running_example_visits_the_non_empty_windows():
    C = sparse_vec(10, [2, 8, 9], [1.0, 2.0, 3.0])
    B = np.array([1.0, 10.0])
    Cs = ls.asarray(C, format=ls.Format(["compressed"]))
    A = ls.expr("A[i] = C[i+j] * B[j]", C=Cs, B=B, format=ls.Format(["compressed"]))
    got = A.materialize()
    want = np.array([sum(C[i + j] * B[j] for j in range(2)) for i in range(9)])
    np.testing.assert_allclose(dense(got), want)
    # one result entry per visited window: the offsets {1, 2, 7, 8} (i = 3..6 are skipped)
    assert got.storage.crd[0].tolist() == [1, 2, 7, 8]
    # one product per (window, stored entry in it): 2, 1 | 8, 9 | 9 at j in {0, 1}
    counts = ls.opcount(ls.expr("A[i] = C[i+j] * B[j]", C=Cs, B=B, format=ls.Format(["compressed"])))
    assert counts["mul"] == 5


# -- work bounded by the stored entries ------------------------------------------------------------
@pytest.mark.parametrize("n", [10**4, 10**6, 10**8])
def test_work_does_not_grow_with_the_extent(n):
    rng = np.random.default_rng(7)
    coords = np.unique(rng.integers(0, n, 100))
    coords[0], coords[-1] = 0, n - 1
    C = ls.asarray(sp.coo_array((np.ones(len(coords)), (np.zeros(len(coords), int), coords)),
                                shape=(1, n)))
    F = np.array([1.0, 2.0, 3.0])
    vec = ls.Format(["compressed"])
    A = ls.expr("A[i] = C[z, i+p] * F[p]", C=C, F=F, format=vec)
    assert A.shape == (n - 2,)
    counts = ls.opcount(A)
    assert counts["mul"] <= 3 * len(coords)
    got = A.materialize()
    # the window holds each entry once per filter tap that reads it, and nothing of size n
    w = windows.window(C, "C", ("z", windows.Affine("i+p", (("i", 1), ("p", 1)), 0)), ("z", "i", "p"),
                       {"z": 1, "i": n - 2, "p": 3})
    arrays = [a for a in w.storage.pos + w.storage.crd if a is not None]
    assert sum(a.size for a in arrays) <= 8 * 3 * len(coords)
    # the oracle on the stored coordinates only (a dense oracle of 10^8 would be 800 MB)
    idx = got.storage.crd[0].astype(np.int64)
    vals = got.storage.vals
    s = set(coords.tolist())
    want = np.array([sum(F[p] for p in range(3) if i + p in s) for i in idx])
    np.testing.assert_allclose(vals, want)
    expect = {c - p for c in coords.tolist() for p in range(3) if 0 <= c - p < n - 2}
    assert set(idx.tolist()) == expect


# -- 1-d, both loop orders, edge cases -------------------------------------------------------------
@pytest.mark.parametrize("coords", [[], [0], [9], [0, 9], [0, 3, 4, 9], list(range(10))])
@pytest.mark.parametrize("K", [1, 3, 10])
@pytest.mark.parametrize("fmt", ["dense", "compressed"])
def test_one_d_convolution(coords, K, fmt):
    C = sparse_vec(10, coords)
    F = np.arange(1.0, K + 1)
    Cl = ls.asarray(C) if fmt == "dense" else ls.asarray(C, format=ls.Format(["compressed"]))
    want = np.correlate(C, F, "valid")
    got = ls.expr("A[i] = C[i+p] * F[p]", C=Cl, F=F).materialize()
    np.testing.assert_allclose(dense(got), want)
    # p outermost: A[i] receives one tap at a time
    q = ls.expr("A[i] = C[p+i] * F[p]", C=Cl, F=F)
    np.testing.assert_allclose(dense(q.materialize()), want)
    if fmt == "dense":
        sched = ls.Schedule().reorder("i1", "i0")
        np.testing.assert_allclose(dense(ls.expr("A[i] = C[i+p] * F[p]", C=Cl, F=F)
                                         .materialize(schedule=sched)), want)


# -- 2-d and NHWC over formats ---------------------------------------------------------------------
def conv2d(I, F, s=1, b=0):
    R, Q = F.shape
    H = max((I.shape[0] - 1 - b - max(R - 1, 0)) // s + 1, 0)
    W = max(I.shape[1] - Q + 1, 0)
    return oracle("hw", "rq", {"h": H, "w": W, "r": R, "q": Q},
                  lambda g: I[s * g["h"] + g["r"] + b, g["w"] + g["q"]] * F[g["r"], g["q"]])


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo", "dcsr", "dcsc"])
@pytest.mark.parametrize("density", [0.02, 0.2, 0.9])
@pytest.mark.parametrize("out", [None, "dense", "csr", "csc", "coo"])
def test_two_d_convolution_formats(fmt, density, out):
    rng = np.random.default_rng(3)
    I = sp.random_array((17, 13), density=density, random_state=4).toarray()
    I[5] = 0  # an empty row
    F = rng.random((3, 4))
    got = ls.expr("O[h,w] = I[h+r, w+q] * F[r,q]", I=as_format(I, fmt), F=F, format=out).materialize()
    np.testing.assert_allclose(dense(got), conv2d(I, F))
    assert got.shape == (15, 10)
    if out is not None:
        assert got.format == ls.asarray(np.eye(2), format=out).format


@pytest.mark.parametrize("fmt", ["dense", ls.Format(["dense", "dense", "dense", "compressed"]),
                                 ls.Format(["dense", "compressed", "compressed", "compressed"]),
                                 "csf", "coo"])
def test_nhwc_convolution(fmt):
    rng = np.random.default_rng(5)
    I = rng.random((2, 7, 6, 3)) * (rng.random((2, 7, 6, 3)) < 0.3)
    F = rng.random((3, 2, 3, 4))
    got = ls.expr("O[n,h,w,f] = I[n,h+r,w+q,c] * F[r,q,c,f]", I=as_format(I, fmt), F=F).materialize()
    want = oracle("nhwf", "rqc", {"n": 2, "h": 5, "w": 5, "f": 4, "r": 3, "q": 2, "c": 3},
                  lambda g: I[g["n"], g["h"] + g["r"], g["w"] + g["q"], g["c"]]
                  * F[g["r"], g["q"], g["c"], g["f"]])
    np.testing.assert_allclose(dense(got), want)


# -- disjunctive and conjunctive lattices ----------------------------------------------------------
@pytest.mark.parametrize("op", ["+", "*", "-"])
@pytest.mark.parametrize("fmt", ["dense", "compressed"])
def test_union_and_intersection_with_a_window(op, fmt):
    B = sparse_vec(4, [1, 3], [5.0, 7.0])
    C = sparse_vec(5, [2], [2.0])
    f = (lambda a: ls.asarray(a)) if fmt == "dense" else (lambda a: ls.asarray(a, format=ls.Format(["compressed"])))
    got = ls.expr(f"A[i,j] = B[i] {op} C[i+j]", B=f(B), C=f(C)).materialize()
    ops = {"+": np.add, "*": np.multiply, "-": np.subtract}
    want = oracle("ij", "", {"i": 4, "j": 2}, lambda g: ops[op](B[g["i"]], C[g["i"] + g["j"]]))
    np.testing.assert_allclose(dense(got), want)
    if op == "+":  # all three cases of the lattice occur: B and C, B only, C only
        assert {(1, 1), (1, 0), (2, 0)} <= set(zip(*np.nonzero(want)))


# -- generality ------------------------------------------------------------------------------------
def rand(shape, density, seed):
    rng = np.random.default_rng(seed)
    return rng.random(shape) * (rng.random(shape) < density)


CASES = [
    # notation, operand shapes, extents, oracle body
    ("A[i] = B[i+j+k] * F[j] * G[k]", {"B": (12,), "F": (3,), "G": (4,)}, "i", "jk",
     {"i": 7, "j": 3, "k": 4}, lambda o, g: o["B"][g["i"] + g["j"] + g["k"]] * o["F"][g["j"]] * o["G"][g["k"]]),
    ("O[i] = A[2*i+j] * F[j]", {"A": (11,), "F": (3,)}, "i", "j",
     {"i": 5, "j": 3}, lambda o, g: o["A"][2 * g["i"] + g["j"]] * o["F"][g["j"]]),
    ("O[i,j] = J[i, j+2]", {"J": (4, 7)}, "ij", "",
     {"i": 4, "j": 5}, lambda o, g: o["J"][g["i"], g["j"] + 2]),
    ("O[l] = B[i+j+k, l+m] * C[i,j,k] * F[m]", {"B": (9, 6), "C": (4, 3, 2), "F": (2,)}, "l", "ijkm",
     {"i": 4, "j": 3, "k": 2, "l": 5, "m": 2},
     lambda o, g: o["B"][g["i"] + g["j"] + g["k"], g["l"] + g["m"]] * o["C"][g["i"], g["j"], g["k"]] * o["F"][g["m"]]),
    ("O[i] = A[3*i+2*j+1] * F[j]", {"A": (20,), "F": (3,)}, "i", "j",
     {"i": 5, "j": 3}, lambda o, g: o["A"][3 * g["i"] + 2 * g["j"] + 1] * o["F"][g["j"]]),
    ("O[i] = A[i, i+1]", {"A": (4, 6)}, "i", "",
     {"i": 4}, lambda o, g: o["A"][g["i"], g["i"] + 1]),
    ("O[h,w] = I[h+r, w+q] * F[r,q] + I[h+1, w+1]", {"I": (8, 9), "F": (3, 3)}, "hw", "rq",
     {"h": 6, "w": 7, "r": 3, "q": 3},
     lambda o, g: o["I"][g["h"] + g["r"], g["w"] + g["q"]] * o["F"][g["r"], g["q"]] + o["I"][g["h"] + 1, g["w"] + 1]),
]


def _sparse_fmt(nd):
    return {1: ls.Format(["compressed"]), 2: "csr"}.get(nd, "csf")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
@pytest.mark.parametrize("sparse", [False, True])
def test_general_affine_forms(case, sparse):
    notation, shapes, out, red, extent, body = case
    arrs = {k: rand(s, 0.4, seed) for seed, (k, s) in enumerate(shapes.items())}
    ops = {k: (ls.asarray(a, format=_sparse_fmt(a.ndim)) if sparse else ls.asarray(a)) for k, a in arrs.items()}
    got = ls.expr(notation, **ops).materialize()
    want = oracle(out, red, extent, lambda g: body(arrs, g))
    assert got.shape == tuple(extent[v] for v in out)
    np.testing.assert_allclose(dense(got), want, atol=1e-12)


def test_extents_of_two_compound_operands():
    # A[i+j] * B[i+k]: |j| and |k| come from C and D, |i| is the tightest of the two subscripts
    A, B = rand((9,), 0.5, 1), rand((8,), 0.5, 2)
    C, D = rand((3,), 1.0, 3), rand((2,), 1.0, 4)
    for fmt in (None, ls.Format(["compressed"])):
        f = (lambda a: ls.asarray(a, format=fmt)) if fmt else ls.asarray
        got = ls.expr("O[i] = A[i+j] * B[i+k] * C[j] * D[k]", A=f(A), B=f(B), C=C, D=D).materialize()
        want = oracle("i", "jk", {"i": 7, "j": 3, "k": 2},
                      lambda g: A[g["i"] + g["j"]] * B[g["i"] + g["k"]] * C[g["j"]] * D[g["k"]])
        np.testing.assert_allclose(dense(got), want)


# -- COO input with duplicates ---------------------------------------------------------------------
def test_coo_with_duplicates_matches_csr():
    rng = np.random.default_rng(11)
    rows, cols = rng.integers(0, 9, 40), rng.integers(0, 8, 40)
    vals = rng.random(40)
    coo = sp.coo_array((vals, (rows, cols)), shape=(9, 8))  # duplicates: summed
    F = rng.random((2, 3))
    a = ls.expr("O[h,w] = I[h+r, w+q] * F[r,q]", I=ls.asarray(coo), F=F).materialize()
    b = ls.expr("O[h,w] = I[h+r, w+q] * F[r,q]", I=ls.asarray(coo.tocsr()), F=F).materialize()
    np.testing.assert_allclose(dense(a), dense(b))
    np.testing.assert_allclose(dense(a), conv2d(coo.toarray(), F))


def test_duplicates_in_a_stored_coo_are_summed_in_the_window():
    # a storage that keeps a coordinate twice (not canonical): the window must add both
    from lazysparse.formats import resolve_format
    from lazysparse.formats.storage import Storage
    from lazysparse.array import Array
    coords = [np.array([0, 0, 2], np.int64)]
    st = Storage((4,), resolve_format("coo", 1), [np.array([0, 3], np.int64)], coords,
                 np.array([1.0, 2.0, 5.0]), np.int64)
    got = ls.expr("O[i] = C[i+p] * F[p]", C=Array._from_storage(st), F=np.array([1.0, 1.0])).materialize()
    np.testing.assert_allclose(dense(got), [3.0, 5.0, 5.0])


# -- properties: shapes, formats, dtypes, widths, strides and offsets ----------------------------
@SETTINGS
@given(H=st.integers(0, 9), W=st.integers(0, 9), R=st.integers(0, 4), Q=st.integers(1, 4),
       s=st.integers(1, 3), b=st.integers(0, 2), density=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
       fmt=st.sampled_from(["dense", "csr", "csc", "coo", "dcsr"]),
       dtype=st.sampled_from(["float64", "float32", "int64", "complex128"]),
       index=st.sampled_from([np.int32, np.int64]), seed=st.integers(0, 2**16))
def test_strided_convolution_property(H, W, R, Q, s, b, density, fmt, dtype, index, seed):
    rng = np.random.default_rng(seed)
    I = (rng.integers(-3, 4, (H, W)) * (rng.random((H, W)) < density)).astype(dtype)
    F = rng.integers(-2, 3, (R, Q)).astype(dtype)
    I0, F0 = I.copy(), F.copy()
    op = as_format(I, fmt, index)
    text = f"O[h,w] = I[{s}*h+r+{b}, w+q] * F[r,q]"
    Hout = max((H - 1 - b - max(R - 1, 0)) // s + 1, 0)
    Wout = max(W - Q + 1, 0)
    got = ls.expr(text, I=op, F=F).materialize()
    assert got.shape == (Hout, Wout)
    want = conv2d(I, F, s, b) if Hout and Wout else np.zeros((Hout, Wout), dtype)
    np.testing.assert_allclose(dense(got), want, rtol=1e-5)
    np.testing.assert_array_equal(I, I0)  # inputs untouched
    np.testing.assert_array_equal(F, F0)


@SETTINGS
@given(N=st.integers(1, 30), K=st.integers(1, 5), density=st.sampled_from([0.05, 0.3, 1.0]),
       reduce=st.sampled_from(["sum", "max", "min"]), seed=st.integers(0, 2**16))
def test_pooling_property(N, K, density, reduce, seed):
    """Sum and max/min pooling over windows of a sparse vector (implicit zeros count)."""
    rng = np.random.default_rng(seed)
    C = rng.random(N) * (rng.random(N) < density) - 0.5 * (rng.random(N) < 0.2)
    if N < K:
        K = N
    Cl = ls.asarray(C, format=ls.Format(["compressed"]))
    ones = np.ones(K)
    got = ls.expr("A[i] = C[i+p] * F[p]", C=Cl, F=ones, reduce=reduce).materialize()
    win = np.lib.stride_tricks.sliding_window_view(C, K)
    want = {"sum": win.sum(1), "max": win.max(1), "min": win.min(1)}[reduce]
    np.testing.assert_allclose(dense(got), want, atol=1e-12)


# -- the window itself ----------------------------------------------------------------------------
def test_dense_window_is_a_view_of_the_operand():
    I = np.arange(30.0).reshape(5, 6)
    w = windows.window(ls.asarray(I), "I",
                       (windows.Affine("h+r", (("h", 1), ("r", 1)), 0),
                        windows.Affine("2*w+q+1", (("w", 2), ("q", 1)), 1)),
                       ("h", "w", "r", "q"), {"h": 3, "w": 2, "r": 3, "q": 2})
    v = w.storage.vals
    assert np.shares_memory(v, I) and not v.flags.writeable
    for h, ww, r, q in np.ndindex(3, 2, 3, 2):
        assert v[h, ww, r, q] == I[h + r, 2 * ww + q + 1]


def test_lazy_operand_and_repeated_use():
    A = ls.asarray(sp.random_array((12, 11), density=0.3, random_state=2, format="csr"))
    F = np.ones((2, 2))
    lazy = A * 2.0
    got = ls.expr("O[h,w] = I[h+r, w+q] * F[r,q]", I=lazy, F=F).materialize()
    np.testing.assert_allclose(dense(got), conv2d(2.0 * dense(A), F))
    # the same concrete operand windowed twice the same way: one window, the same values
    one = ls.expr("O[h,w] = I[h+r, w+q] * F[r,q]", I=A, F=F).materialize()
    two = ls.expr("O[h,w] = I[h+r, w+q] * F[r,q]", I=A, F=3 * F).materialize()
    np.testing.assert_allclose(dense(one), conv2d(dense(A), F))
    np.testing.assert_allclose(dense(two), conv2d(dense(A), 3 * F))
    assert A.storage.stats["window"][1] is not None  # kept with the operand for the second
    # composes with the rest of the library: lazy result, then an ordinary operation
    s = (ls.expr("O[h,w] = I[h+r, w+q] * F[r,q]", I=A, F=F) * 2).sum()
    np.testing.assert_allclose(float(s), 2 * conv2d(dense(A), F).sum())


# -- errors ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, shapes, match", [
    ("O[h] = I[h-r] * F[r]", {"I": (5,), "F": (2,)}, r"subscript 'h-r' in I\[h-r\] subtracts index 'r'"),
    ("O[h] = I[h+r-1] * F[r]", {"I": (5,), "F": (2,)}, r"negative offset -1.*pad the operand"),
    ("O[h] = I[h*r] * F[r]", {"I": (5,), "F": (2,)}, r"'h\*r' in I\[h\*r\]: a product of two indices"),
    ("O[h] = I[h+r]", {"I": (5,)}, r"cannot infer the extent of index 'h' in I\[h\+r\]"),
    ("O[h] = I[h+r] * F[r] * G[h]", {"I": (5,), "F": (2,), "G": (5,)},
     r"subscript 'h\+r' of I\[h\+r\] reaches 5 with h < 5, r < 2, past its axis of size 5"),
    ("O[h] = I[h+2] * G[h]", {"I": (5,), "G": (4,)}, r"reaches 5 with h < 4, past its axis of size 5"),
])
def test_errors_name_the_operand_and_subscript(text, shapes, match):
    ops = {k: np.ones(s) for k, s in shapes.items()}
    with pytest.raises(ValueError, match=match):
        ls.expr(text, **ops)


def test_window_over_the_memory_limit_is_refused(monkeypatch):
    C = ls.asarray(np.ones(400), format=ls.Format(["compressed"]))
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "1K")
    with pytest.raises(MemoryError, match=r"expr: the window of C\[i\+p\] would hold"):
        ls.expr("A[i] = C[i+p] * F[p]", C=C, F=np.ones(5))


@st.composite
def window_cases(draw):
    """An operand of 1-3 dimensions and, per dimension, a constant, a plain index or an affine
    form over 1-3 indices (shared across dimensions sometimes), with extents that stay inside."""
    nd = draw(st.integers(1, 3))
    pool = ["a", "b", "c", "d"]
    forms, ext = [], {}
    for _ in range(nd):
        kind = draw(st.sampled_from(["const", "plain", "affine"]))
        if kind == "const":
            forms.append(("const", draw(st.integers(0, 2))))
            continue
        k = 1 if kind == "plain" else draw(st.integers(1, 3))
        names = draw(st.lists(st.sampled_from(pool), min_size=k, max_size=k, unique=True))
        coefs = [1] * k if kind == "plain" else [draw(st.integers(1, 3)) for _ in names]
        const = 0 if kind == "plain" else draw(st.integers(0, 2))
        for v in names:
            ext.setdefault(v, draw(st.integers(0, 4)))
        forms.append(("form", tuple(zip(names, coefs)), const))
    shape = []
    for f in forms:
        if f[0] == "const":
            shape.append(f[1] + draw(st.integers(1, 3)))
        else:
            reach = f[2] + sum(c * max(ext[v] - 1, 0) for v, c in f[1])
            shape.append(reach + 1 + draw(st.integers(0, 2)))
    return tuple(shape), forms, ext


@SETTINGS
@given(case=window_cases(), density=st.sampled_from([0.0, 0.2, 0.7, 1.0]),
       fmt=st.sampled_from(["dense", "coo", "csf", "dcsr-like", "csf-reversed"]),
       dense_result=st.sampled_from([None, True, False]), seed=st.integers(0, 2**16))
def test_window_storage_is_valid_and_reads_the_operand(case, density, fmt, dense_result, seed):
    """Both storage orders of a sparse window (taps first for a dense result, output indices
    first otherwise), over operands stored in any mode order."""
    from lazysparse.formats.validate import validate
    shape, forms, ext = case
    rng = np.random.default_rng(seed)
    I = rng.random(shape) * (rng.random(shape) < density)
    f = {"dense": "dense", "coo": "coo", "csf": "csf",
         "dcsr-like": ls.Format(["dense"] + ["compressed"] * (len(shape) - 1)),
         "csf-reversed": ls.Format(["compressed"] * len(shape), order=tuple(reversed(range(len(shape)))))}[fmt]
    op = ls.asarray(I, format=f)
    subs = []
    for form in forms:
        if form[0] == "const":
            subs.append(form[1])
        elif form[1] == ((form[1][0][0], 1),) and form[2] == 0:
            subs.append(form[1][0][0])
        else:
            subs.append(windows.Affine("x", form[1], form[2]))
    axes = tuple(sorted({v for form in forms if form[0] == "form" for v, _ in form[1]}))
    if not axes:
        return
    w = windows.window(op, "I", tuple(subs), axes, ext, dense_result)
    if not w.storage.format.is_dense:
        validate(w.storage, "window")
    got = dense(w)
    assert got.shape == tuple(ext[v] for v in axes)
    grids = np.indices(got.shape)
    g = {v: grids[k] for k, v in enumerate(axes)}
    idx = tuple(np.full(got.shape, form[1]) if form[0] == "const"
                else form[2] + sum(c * g[v] for v, c in form[1]) for form in forms)
    np.testing.assert_array_equal(got, I[idx] if got.size else np.zeros(got.shape))


def test_explain_names_the_windows():
    I = ls.asarray(sp.random_array((9, 8), density=0.3, format="csr", random_state=2))
    F = np.ones((2, 3))
    text = ls.explain(ls.expr("O[h,w] = I[h+r, w+q] * F[r,q]", I=I, F=F))
    assert "T0: the window of I[h+r,w+q] as W[h,w,r,q], ls.Format([compressed" in text
    dense_text = ls.explain(ls.expr("O[h] = I[2*h+r, 0] * G[r]", I=I.todense(), G=np.ones(3)))
    assert "T0: the window of I[2*h+r,0] as W[h,r], ls.dense" in dense_text
