"""Whole programs that read one value in several operations:

* sums over one matrix share a loop (compiler/plan/siblings.py: ``A.sum()`` and ``(A != 0).sum()`` of
  a variance, a row sum of ``E = expm1(A)`` with the loop that writes ``E``), and a shared loop
  over every stored entry of a CSR operand runs as one flat loop (``FusedLowerer.emit_flat``);
* a cheap element-wise temporary with several readers is recomputed in each instead of stored
  (compiler/plan/inline.py ``elementwise``);
* a fused kernel's result takes the pattern of an input it reads through a temporary
  (``expm1(A) / s`` stays sparse);
* two wraps of one array are one input (``Storage.buffers_key``): ``(A @ x) / norm(A @ x)``
  multiplies once;
* ``x ** 2`` is ``square(x)`` (NumPy's scalar-power fast path).

Oracle: dense NumPy on the dense copies, in every fusion mode, over the formats and index
widths of test_ops_oracle.py. ``opcount`` gives the loads and multiplications, ``explain`` the
kernels.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import lazysparse as ls
from oracle import FORMATS_2D, WIDTHS, build, examples


def _dense(shape, dtype, density, seed):
    rng = np.random.default_rng(seed)
    keep = rng.random(shape) < density
    vals = rng.integers(-3, 4, shape) if np.dtype(dtype).kind in "iu" else rng.standard_normal(shape)
    return np.where(keep, vals, 0).astype(dtype)


def _todense(x):
    return np.asarray(x.todense()) if hasattr(x, "todense") else np.asarray(x)


def _rownorm(d, fmt="csr"):
    """``expm1(A) / expm1(A).sum(axis=1)``; a sparse operand's implicit zeros annihilate as
    numerators (docs/design.md, "Semantics the project chose"), a dense operand stores every
    element."""
    e = np.expm1(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = e / e.sum(axis=1, keepdims=True)
    return q if fmt == "dense" else np.where(d != 0, q, 0.0)


# programs whose operations read one value several times, and their NumPy spelling
CASES = {
    "var": (lambda a: ls.var(a), lambda d: d.var()),
    "std axis 1": (lambda a: a.std(axis=1), lambda d: d.std(axis=1)),
    "var axis 0": (lambda a: a.var(axis=0), lambda d: d.var(axis=0)),
    "nanmean axis 1": (lambda a: ls.nanmean(a, axis=1), lambda d: np.nanmean(d, axis=1)),
    "sum + sum of squares": (lambda a: ls.sum(a) + ls.sum(a * a), lambda d: d.sum() + (d * d).sum()),
    "row sum * row count": (lambda a: a.sum(axis=1) * (a != 0).sum(axis=1),
                            lambda d: d.sum(axis=1) * (d != 0).sum(axis=1)),
    "sum * column sums": (lambda a: ls.sum(a) * a.sum(axis=0), lambda d: d.sum() * d.sum(axis=0)),
    "row sums of squares - squared row sums": (lambda a: (a ** 2).sum(axis=1) - a.sum(axis=1) ** 2,
                                               lambda d: (d ** 2).sum(axis=1) - d.sum(axis=1) ** 2),
    "expm1 row normalised": (lambda a: ls.expm1(a) / ls.expm1(a).sum(axis=1, keepdims=True), None),
}


@examples(60)
@given(case=st.sampled_from(sorted(CASES)), fmt=st.sampled_from(FORMATS_2D),
       width=st.sampled_from(WIDTHS), dtype=st.sampled_from(["float64", "float32", "int64"]),
       m=st.integers(0, 7), n=st.integers(0, 7), density=st.sampled_from([0.0, 0.3, 1.0]),
       fusion=st.sampled_from(["auto", "max", "none"]), seed=st.integers(0, 2**16))
def test_shared_reads_match_numpy(case, fmt, width, dtype, m, n, density, fusion, seed):
    D = _dense((m, n), dtype, density, seed)
    lazy, want = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's mean of an empty slice)
        exp = np.asarray(want(D) if want else _rownorm(D, fmt))
        got = _todense(lazy(build(D, fmt, width)).materialize(fusion=fusion))
    tol = 2e-4 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(got, exp, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense"])
@pytest.mark.parametrize("shape", [(1, 1), (5, 0), (0, 4), (6, 5)])
def test_awkward_operands(fmt, shape):
    """One element, zero-size axes, an empty row, COO duplicates (summed by asarray)."""
    D = np.zeros(shape)
    if D.size:
        D.flat[::2] = np.arange(1, D.size // 2 + D.size % 2 + 1, dtype=float)
    if shape == (6, 5):
        D[2] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for case in ("var", "std axis 1", "row sum * row count", "expm1 row normalised"):
            lazy, want = CASES[case]
            got = _todense(lazy(build(D, fmt)).materialize())
            exp = np.asarray(want(D) if want else _rownorm(D, fmt))
            np.testing.assert_allclose(got, exp, rtol=1e-12, atol=1e-12, equal_nan=True)
    if fmt == "coo":
        import scipy.sparse as sp
        S = sp.coo_array((np.array([1.0, 2.0, 4.0]), (np.array([0, 0, 1]), np.array([1, 1, 0]))), shape=(2, 3))
        np.testing.assert_allclose(float(_todense(ls.var(ls.asarray(S)).materialize())), S.toarray().var())


def _matrix(seed=0, shape=(40, 30), density=0.2):
    D = _dense(shape, "float64", density, seed)
    D[3] = 0.0  # an empty row
    return D


def test_a_variance_reads_the_matrix_in_two_passes():
    """Its sum and its count of stored entries share one loop (``auto``); ``max`` and
    ``none`` read the entries three times. One fused kernel, no stored mask."""
    D = _matrix()
    a = build(D, "csr")
    nnz = int(np.count_nonzero(D))
    counts = {f: ls.opcount(ls.var(a), fusion=f, names={"a": a}) for f in ("auto", "max", "none")}
    assert counts["auto"]["loads"]["a"] == 2 * nnz
    assert counts["max"]["loads"]["a"] == 3 * nnz
    assert counts["none"]["loads"]["a"] == 3 * nnz
    assert counts["auto"]["kernels"] == 1
    text = ls.explain(ls.var(a))
    assert "fused, 5 operations in one loop nest" in text
    assert "v1[] = sum_{p,q}" in text and "v10[] = sum_{p,q}" in text  # (one loop's names)
    assert np.isclose(float(_todense(ls.var(a).materialize())), D.var())


def test_a_row_normalisation_computes_each_entry_once_and_stays_sparse():
    """``E / E.sum(axis=1)`` with ``E = expm1(A)``: E's entry is computed once, summed in the
    loop that computes it, kept for the row, and divided in a second loop over the row (the
    sum must not be read inside the loop that forms it: the missed case of "ReACT:
    Redundancy-Aware Code Generation for Tensor Expressions"). The result has A's pattern (a dense
    one took 2 s for a 37700 x 37700 github-social matrix)."""
    D = _matrix(1)
    a = build(D, "csr")
    e = ls.expm1(a) / ls.expm1(a).sum(axis=1, keepdims=True)
    nnz = int(np.count_nonzero(D))
    c = ls.opcount(e, names={"a": a})
    assert c["loads"]["a"] == nnz and c["other"] == nnz and c["div"] == nnz and c["kernels"] == 1
    r = e.materialize()
    assert not r.format.is_dense and r.nnz == nnz
    np.testing.assert_allclose(_todense(r), _rownorm(D), rtol=1e-12, atol=1e-14)


def test_two_wraps_of_one_vector_multiply_once():
    """``(A @ x) / sqrt(((A @ x) ** 2).sum())`` with one NumPy ``x``: ``A @ x`` is one value
    (each ``@`` wraps ``x`` anew). A second vector of equal shape is another input, also through
    the program cache, call after call."""
    D = _matrix(2)
    a = build(D, "csr")
    rng = np.random.default_rng(5)
    x, z = rng.standard_normal(30), rng.standard_normal(30)
    nnz = int(np.count_nonzero(D))

    def norm(u, v):
        return (a @ u) / ls.sqrt(((a @ v) ** 2).sum())
    assert ls.opcount(norm(x, x), names={"a": a})["mul"] == nnz
    assert ls.opcount(norm(x, z), names={"a": a})["mul"] == 2 * nnz
    for u, v in ((x, x), (x, z), (z, z), (z, x), (x, x)):
        want = (D @ u) / np.sqrt(((D @ v) ** 2).sum())
        np.testing.assert_allclose(_todense(norm(u, v).materialize()), want, rtol=1e-12)


def test_two_wraps_of_one_matrix_are_one_input_and_equal_copies_two():
    import scipy.sparse as sp
    D = _matrix(3)
    S = sp.csr_array(D)
    x = np.arange(30.0)
    a1, a2 = ls.asarray(S), ls.asarray(S)
    nnz = int(np.count_nonzero(D))
    assert ls.opcount((a1 @ x) + (a2 @ x), names={"a": a1})["mul"] == nnz
    np.testing.assert_allclose(_todense(((a1 @ x) + (a2 @ x)).materialize()), 2 * (D @ x))
    assert ls.opcount((a1 @ x) * (a2 @ x), names={"a": a1})["mul"] == nnz + D.shape[0]
    # (two products sharing A's loop, which loads each entry once for both)
    c = ls.opcount((a1 @ x) * (a1 @ x.copy()), names={"a": a1})
    assert c["mul"] == 2 * nnz + D.shape[0] and c["loads"]["a"] == nnz
    np.testing.assert_allclose(_todense(((a1 @ x) * (a1 @ x.copy())).materialize()), (D @ x) ** 2)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "complex128"])
@pytest.mark.parametrize("exponent", [2, 2.0, 3])
def test_power_two_is_square(dtype, exponent):
    """NumPy's ``x ** 2`` is ``square(x)`` for a Python 2 that keeps the dtype; so is ours (the
    same values, and no call of C's ``pow`` in a fused kernel)."""
    x = np.array([1, 2, 0, 3], dtype=dtype)
    if np.dtype(dtype).kind == "c" and exponent == 3:
        pytest.skip("complex ** 3 is C's cpow, not NumPy's repeated product")
    r = ls.asarray(x) ** exponent
    want = x ** exponent
    squared = exponent == 2 and (np.dtype(dtype).kind in "fc" or type(exponent) is int)
    assert (r._node.stmt.expr.op == "square") == squared
    got = r.materialize()
    assert _todense(got).dtype == want.dtype
    np.testing.assert_array_equal(_todense(got), want)
