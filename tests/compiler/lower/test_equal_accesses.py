"""One array read twice at the same subscripts (``A * A``, ``A + A``, ``where(A > 0, A, B)``):
one operand slot, one iterator, one load per point (api/primitives.py ``_shared``,
``nodes.canonical_positions``, ``Lowerer.share_equal``).

Oracle: dense NumPy on the dense copies, over the formats, dtypes and index widths of
test_ops_oracle.py; ``opcount`` gives the loads (one per stored entry, not two) and the
operations, and ``explain`` the kernel's operand slots.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import lazysparse as ls
from oracle import FORMATS_2D, WIDTHS, build, examples


def _dense(D, dtype, density, seed):
    rng = np.random.default_rng(seed)
    keep = rng.random(D) < density
    if np.dtype(dtype).kind in "iu":
        vals = rng.integers(-3, 4, D)
    else:
        vals = rng.standard_normal(D)
    return np.where(keep, vals, 0).astype(dtype)


def _todense(x):
    return np.asarray(x.todense()) if hasattr(x, "todense") else np.asarray(x)


# expressions reading ``a`` more than once at equal subscripts, and their NumPy spelling
CASES = {
    "a*a": (lambda a, b: a * a, lambda a, b: a * a),
    "a+a": (lambda a, b: a + a, lambda a, b: a + a),
    "a-a": (lambda a, b: a - a, lambda a, b: a - a),
    "a*a*a": (lambda a, b: a * a * a, lambda a, b: a * a * a),
    "a*b+a": (lambda a, b: a * b + a, lambda a, b: a * b + a),
    "max(a,a*b)": (lambda a, b: ls.maximum(a, a * b), lambda a, b: np.maximum(a, a * b)),
    "where(a>0,a,b)": (lambda a, b: ls.where(a > 0, a, b), lambda a, b: np.where(a > 0, a, b)),
    "(a*a).sum(1)": (lambda a, b: (a * a).sum(axis=1), lambda a, b: (a * a).sum(axis=1)),
    "(a*b*a).sum()": (lambda a, b: (a * b * a).sum(), lambda a, b: (a * b * a).sum()),
    "a+a+b (terms)": (lambda a, b: a + a + b, lambda a, b: a + a + b),
    "a*b+a*b+a": (lambda a, b: a * b + a * b + a, lambda a, b: a * b + a * b + a),
}


@examples(60)
@given(case=st.sampled_from(sorted(CASES)), fa=st.sampled_from(FORMATS_2D),
       fb=st.sampled_from(FORMATS_2D), width=st.sampled_from(WIDTHS),
       dtype=st.sampled_from(["float64", "float32", "int64"]),
       m=st.integers(0, 7), n=st.integers(0, 7), density=st.sampled_from([0.0, 0.3, 1.0]),
       seed=st.integers(0, 2**16))
def test_equal_accesses_match_numpy(case, fa, fb, width, dtype, m, n, density, seed):
    Da, Db = _dense((m, n), dtype, density, seed), _dense((m, n), dtype, 0.5, seed + 1)
    lazy, want = CASES[case]
    a, b = build(Da, fa, width), build(Db, fb, width)
    got = _todense(lazy(a, b).materialize())
    exp = np.asarray(want(Da, Db))
    assert got.dtype == exp.dtype, case
    if dtype == "float32":
        np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-5, err_msg=case)
    else:
        np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-12, err_msg=case)


def test_awkward_operands():
    """Empty rows, a zero-size axis, one element, COO duplicates (summed before the square)."""
    import scipy.sparse as sp
    D = np.zeros((5, 4))
    D[1, 2], D[3, 0], D[3, 3] = 2.0, -1.5, 4.0
    for M in (D, np.zeros((0, 3)), np.zeros((3, 0)), np.array([[3.0]])):
        for fmt in FORMATS_2D:
            a = build(M, fmt)
            np.testing.assert_array_equal(_todense((a * a).materialize()), M * M)
            np.testing.assert_array_equal(_todense((a + a).materialize()), M + M)
    dup = sp.coo_array((np.array([1.0, 2.0, -4.0]), (np.array([0, 0, 2]), np.array([1, 1, 0]))), shape=(3, 3))
    a = ls.asarray(dup)
    np.testing.assert_array_equal(_todense((a * a).materialize()), dup.toarray() ** 2)
    assert dup.nnz == 3  # the caller's COO keeps its duplicates


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr", "csf"])
def test_one_load_per_entry_and_one_slot(fmt):
    """``A * A`` loads each stored entry once and multiplies once (the two-copy intersection
    loaded twice), with one operand in the kernel; ``A * A * B`` reads A once a point too."""
    D = _dense((30, 20), "float64", 0.2, 3)
    a = build(D, fmt)
    nnz = int(np.count_nonzero(D))
    c = ls.opcount(a * a)
    assert c["loads"] == {"x0": nnz} and c["mul"] == nnz and c["kernels"] == 1
    assert ls.opcount((a * a).sum())["loads"] == {"x0": nnz}
    assert ls.opcount(a + a)["loads"] == {"x0": nnz}
    text = ls.explain(a * a)
    assert "operands: T0:" in text and "T1:" not in text.split("operands:")[1].split("\n")[0]
    Db = _dense((30, 20), "float64", 0.5, 4)
    b = build(Db, "csr")
    both = int(np.count_nonzero((D != 0) & (Db != 0)))
    if fmt != "csc":  # (a CSC A meets a CSR B through a conversion kernel)
        c = ls.opcount(a * a * b)
        assert c["loads"] == {"x0": both, "x1": both} and c["mul"] == 2 * both, c
    np.testing.assert_allclose(_todense((a * a * b).materialize()), D * D * Db)


def test_different_subscripts_keep_two_slots():
    """``A @ A`` and ``A * A.T`` read A at different subscripts: still right (each access is
    converted and iterated alone)."""
    D = _dense((12, 12), "float64", 0.3, 5)
    for fmt in ("csr", "csc", "coo"):
        a = build(D, fmt)
        np.testing.assert_allclose(_todense((a @ a).materialize()), D @ D, rtol=1e-12)
        np.testing.assert_allclose(_todense((a * a.T).materialize()), D * D.T, rtol=1e-12)
        np.testing.assert_allclose(_todense((a * a.T + a).materialize()), D * D.T + D, rtol=1e-12)


def test_an_equal_array_that_is_another_object_is_not_merged():
    """Two wraps of one scipy matrix are two operands (nothing says their values stay equal)."""
    import scipy.sparse as sp
    S = sp.random_array((20, 20), density=0.2, format="csr", rng=1)
    a, b = ls.asarray(S), ls.asarray(S)
    assert ls.opcount(a * b)["loads"] == {"x0": S.nnz, "x1": S.nnz}
    np.testing.assert_allclose(_todense((a * b).materialize()), S.toarray() ** 2)


def test_scalars_of_equal_value_and_repeated_lines():
    """Python scalars are not merged by identity; the cached statement of ``a * b`` is not
    reused for ``a * a`` (and back)."""
    D = _dense((6, 5), "float64", 0.5, 7)
    Db = _dense((6, 5), "float64", 0.5, 8)
    a, b = build(D, "csr"), build(Db, "csr")
    for _ in range(2):
        np.testing.assert_array_equal(_todense((a * b).materialize()), D * Db)
        np.testing.assert_array_equal(_todense((a * a).materialize()), D * D)
        np.testing.assert_array_equal(_todense(ls.where(a > 0, 2.0, 2.0).materialize()),
                                      np.where(D > 0, 2.0, 2.0))
        np.testing.assert_array_equal(_todense(ls.where(a > 0, 2.0, 3.0).materialize()),
                                      np.where(D > 0, 2.0, 3.0))


# -- where(c, x, y) with a 0-d y: zero keeps the pattern of c and x (compiler/plan/patterns.py) -------
@examples(40)
@given(fa=st.sampled_from(FORMATS_2D), fb=st.sampled_from(FORMATS_2D), width=st.sampled_from(WIDTHS),
       y=st.sampled_from([0, 0.0, 1.5, -2, float("nan")]), same=st.booleans(),
       m=st.integers(0, 7), n=st.integers(0, 7), seed=st.integers(0, 2**16))
def test_where_with_a_scalar_else_matches_numpy(fa, fb, width, y, same, m, n, seed):
    Da, Db = _dense((m, n), "float64", 0.4, seed), _dense((m, n), "float64", 0.4, seed + 1)
    a, b = build(Da, fa, width), build(Db, fb, width)
    c, Dc = (a, Da) if same else (b, Db)
    got = ls.where(c > 0.1, a, y).materialize()
    np.testing.assert_array_equal(_todense(got), np.where(Dc > 0.1, Da, y))
    if y == 0 and "dense" not in (fa, fb) and m * n:
        assert got.format != ls.dense  # A's pattern, not a full array


def test_where_with_a_zero_else_is_sparse_and_reads_only_stored_entries():
    D = _dense((40, 30), "float64", 0.1, 9)
    a = build(D, "csr")
    got = ls.where(a > 0.5, a, 0).materialize()
    assert got.format == ls.csr and got.nnz == int(np.count_nonzero(D > 0.5))
    np.testing.assert_array_equal(_todense(got), np.where(D > 0.5, D, 0))
    assert ls.opcount(ls.where(a > 0.5, a, 0))["loads"]["x0"] == int(np.count_nonzero(D))
    full = ls.where(a > 0.5, a, 1.0).materialize()  # a nonzero else fills every other point
    assert full.format == ls.dense
    np.testing.assert_array_equal(_todense(full), np.where(D > 0.5, D, 1.0))


def test_fused_programs_count_one_load_for_equal_accesses():
    """``(A * A) @ X`` under every fusion mode: A is loaded once per stored entry (per column
    of X where "max" recomputes the product), and the values are NumPy's."""
    D = _dense((25, 18), "float64", 0.25, 11)
    X = np.random.default_rng(2).random((18, 4))
    a, x = build(D, "csr"), ls.asarray(X)
    nnz = int(np.count_nonzero(D))
    for fusion, per in (("auto", 1), ("none", 1), ("max", 4)):
        c = ls.opcount((a * a) @ x, fusion=fusion)
        assert c["loads"]["x0"] == nnz * per, (fusion, c)
        np.testing.assert_allclose(_todense(((a * a) @ x).materialize(fusion=fusion)), (D * D) @ X, rtol=1e-12)


# -- paths that could assume one state per access --------------------------------------------------
@examples(50)
@given(fmt=st.sampled_from(FORMATS_2D), width=st.sampled_from(WIDTHS),
       red=st.sampled_from(["sum", "max", "min", "prod"]),
       expr=st.sampled_from(["a + 1", "a * a + 1", "where(a != 0, a, 2)", "where(a > 0.5, a, 1.0)",
                             "a * a", "-1 - maximum(a, a)", "2 * a"]),
       m=st.integers(0, 6), n=st.integers(0, 6), density=st.sampled_from([0.0, 0.3, 1.0]),
       seed=st.integers(0, 2**16))
def test_scalar_reductions_of_one_array_fold_the_implicit_points(fmt, width, red, expr, m, n, density, seed):
    """A reduction to a scalar of an expression of one array walks its stored entries flat
    only where the expression is zero elsewhere: ``(a + 1).sum()`` counts the implicit points
    as ones (it summed the stored entries alone, before this test)."""
    if red in ("max", "min") and m * n == 0:
        return  # (no identity: NumPy raises, tested elsewhere)
    D = _dense((m, n), "float64", density, seed)
    a = build(D, fmt, width)
    env = {"a": a, "where": ls.where, "maximum": ls.maximum}
    denv = {"a": D, "where": np.where, "maximum": np.maximum}
    got = getattr(eval(expr, env), red)().materialize()
    want = getattr(eval(expr, denv), red)()
    np.testing.assert_allclose(float(_todense(got)), float(want), rtol=1e-12, err_msg=f"{expr}.{red}()")


def test_a_mask_read_again_inside_the_masked_product():
    """``M * (M * (A @ B))``: the row-sum path (no probe of M) needs the other factor free of
    M; with M's accesses one state it must not take it (it read M as 0 on the tuner's turns)."""
    import scipy.sparse as sp
    M = sp.random_array((30, 30), density=0.2, format="csr", rng=1)
    A = sp.random_array((30, 30), density=0.3, format="csr", rng=2)
    B = sp.random_array((30, 30), density=0.3, format="csr", rng=3)
    m, a, b = ls.asarray(M), ls.asarray(A), ls.asarray(B)
    want = M.toarray() ** 2 * (A @ B).toarray()
    for fusion in ("max", "auto", "none"):
        for _ in range(6):  # (the tuner alternates the row-sum flag over the first calls)
            got = (m * (m * (a @ b))).materialize(fusion=fusion)
            np.testing.assert_allclose(_todense(got), want, rtol=1e-12, atol=1e-14, err_msg=fusion)


def test_a_pos_schedule_names_an_array_read_twice():
    import scipy.sparse as sp
    A = sp.random_array((40, 30), density=0.2, format="csr", rng=1)
    x = np.random.default_rng(3).random(30)
    a, lx = ls.asarray(A), ls.asarray(x)
    S = ls.Schedule().fuse("i0", "i1", "f").pos("f", "p", "T0").split("p", "p0", "p1", 8)
    Ad = A.toarray()
    np.testing.assert_allclose(_todense((a * a).sum(axis=1).materialize(schedule=S)), (Ad * Ad).sum(1), rtol=1e-12)
    np.testing.assert_allclose(_todense(((a * a) @ lx).materialize(schedule=S)), (Ad * Ad) @ x, rtol=1e-12)
