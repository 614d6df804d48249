"""``lazysparse.sparse``'s classes and constructors against scipy.sparse's: the same values,
shapes and dtypes from every input form, over dtypes, index widths and awkward shapes."""
from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
import lazysparse.sparse as lsp

CLASSES = ("csr_array", "csc_array", "coo_array")


def _dense(a):
    return np.asarray(a.todense())


@st.composite
def matrices(draw):
    m, n = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, np.complex128]))
    return ((rng.random((m, n)) * (rng.random((m, n)) < 0.4)) * 10).astype(dtype)


@settings(max_examples=30, deadline=None)
@given(D=matrices(), cls=st.sampled_from(CLASSES), width=st.sampled_from([np.int32, np.int64]))
def test_the_classes_take_every_input_scipys_take(D, cls, width):
    make = getattr(lsp, cls)
    S = sp.csr_array(D)
    C = sp.coo_array(D)
    inputs = [D, S, sp.csc_array(D), C, sp.lil_array(D), sp.dok_array(D), sp.dia_array(D),
              ls.asarray(S), ls.asarray(D) * 1]
    if D.size:
        inputs.append(sp.bsr_array(D))
    for arg in inputs:
        A = make(arg)
        assert isinstance(A, getattr(lsp, cls)) and isinstance(A, lsp.sparray)
        assert A.shape == D.shape and A.dtype == D.dtype
        np.testing.assert_array_equal(_dense(A), D)
    coo = make((C.data, (C.row.astype(width), C.col.astype(width))), shape=D.shape)
    np.testing.assert_array_equal(_dense(coo), D)
    if cls != "coo_array":
        K = getattr(sp, cls)(D)
        A = make((K.data, K.indices.astype(width), K.indptr.astype(width)), shape=D.shape)
        np.testing.assert_array_equal(_dense(A), D)
    empty = make(D.shape, dtype=np.float32)
    assert empty.shape == D.shape and empty.nnz == 0 and empty.dtype == np.float32
    assert not isinstance(ls.asarray(D), getattr(lsp, cls))


def test_duplicates_are_summed_as_scipy_sums_them():
    data, r, c = np.array([1.0, 2.0, 5.0]), np.array([0, 1, 1]), np.array([2, 0, 0])
    for cls in CLASSES:
        got = getattr(lsp, cls)((data, (r, c)), shape=(2, 3))
        want = getattr(sp, cls)((data, (r, c)), shape=(2, 3))
        np.testing.assert_array_equal(_dense(got), want.toarray())
    with pytest.raises(TypeError, match="sparray: use csr_array"):
        lsp.sparray(np.eye(2))


@settings(max_examples=25, deadline=None)
@given(A=matrices(), B=matrices(), k=st.integers(-3, 3))
def test_constructors_match_scipy(A, B, k):
    for ours, theirs in ((lsp.kron(A, B), sp.kron(sp.coo_array(A), sp.coo_array(B))),
                         (lsp.tril(A, k), sp.tril(sp.coo_array(A), k)),
                         (lsp.triu(A, k, format="csc"), sp.triu(sp.coo_array(A), k))):
        np.testing.assert_array_equal(_dense(ours), theirs.toarray())
    assert lsp.triu(A, k, format="csc").format == ls.csc
    for got, want in zip(lsp.find(A), sp.find(sp.coo_array(A))):
        np.testing.assert_array_equal(got, want)
    if A.shape[0] == B.shape[0]:
        np.testing.assert_array_equal(_dense(lsp.hstack([A, sp.csr_array(B)])), np.hstack([A, B]))
    if A.shape[1] == B.shape[1]:
        np.testing.assert_array_equal(_dense(lsp.vstack([sp.csr_array(A), B], format="csr")),
                                      np.vstack([A, B]))
    sq_a, sq_b = A[:min(A.shape), :min(A.shape)], B[:min(B.shape), :min(B.shape)]
    np.testing.assert_allclose(_dense(lsp.kronsum(sq_a, sq_b)),
                               sp.kronsum(sp.coo_array(sq_a), sp.coo_array(sq_b)).toarray())


@pytest.mark.parametrize("pattern", [[[1, None], [None, 1]], [[1, 1], [None, 1]], [[None, 1, 1]],
                                     [[1], [None], [1]]])
def test_block_array_matches_scipy(pattern):
    rng = np.random.default_rng(1)
    n = len(pattern)
    heights = [2, 3, 1][:n]
    widths = [3, 1, 2][:len(pattern[0])]
    blocks = [[None if p is None else sp.random_array((heights[i], widths[j]), density=0.5, rng=rng)
               for j, p in enumerate(row)] for i, row in enumerate(pattern)]
    if any(all(b is None for b in row) for row in blocks) or \
            any(all(row[j] is None for row in blocks) for j in range(len(widths))):
        with pytest.raises(ValueError, match="block_array: blocks"):
            lsp.block_array(blocks)
        return
    ours = [[None if b is None else ls.asarray(b) for b in row] for row in blocks]
    np.testing.assert_allclose(_dense(lsp.block_array(ours)), sp.block_array(blocks).toarray())
    np.testing.assert_allclose(_dense(lsp.bmat(blocks, format="csr")), sp.bmat(blocks).toarray())


def test_block_array_and_kronsum_errors():
    with pytest.raises(ValueError, match=r"block_array: blocks\[0,:\] and blocks\[:,1\] have "
                                         "incompatible row dimensions: 2 and 3"):
        lsp.block_array([[np.ones((2, 2)), np.ones((3, 2))]])
    with pytest.raises(ValueError, match="block_array: blocks must be 2-D"):
        lsp.block_array([np.ones((2, 2)), np.ones((2, 2))])
    with pytest.raises(ValueError, match="kronsum: A is not square"):
        lsp.kronsum(np.ones((2, 3)), np.eye(2))


def test_eye_identity_diags_random_and_npz():
    np.testing.assert_array_equal(_dense(lsp.eye_array(3, 4, k=1)), np.eye(3, 4, k=1))
    assert lsp.identity(3, dtype=np.int64).dtype == np.int64
    np.testing.assert_array_equal(_dense(lsp.diags_array([1.0, 2.0], offsets=1, shape=(3, 3))),
                                  sp.diags_array([1.0, 2.0], offsets=1, shape=(3, 3)).toarray())
    R = lsp.random_array((6, 5), density=0.3, rng=3, format="csr")
    np.testing.assert_array_equal(_dense(R), sp.random_array((6, 5), density=0.3, rng=3).toarray())
    assert R.format == ls.csr
    buf = io.BytesIO()
    lsp.save_npz(buf, R)
    buf.seek(0)
    back = lsp.load_npz(buf)
    assert isinstance(back, lsp.csr_array)
    np.testing.assert_array_equal(_dense(back), _dense(R))


@settings(max_examples=20, deadline=None)
@given(D=matrices(), fmt=st.sampled_from(["csr", "csc", "coo"]), width=st.sampled_from([np.int32, np.int64]))
def test_scipys_buffers_are_read_only_views(D, fmt, width):
    from tests.oracle import build
    A = build(D, fmt, width)
    S = sp.coo_array(D).asformat(fmt)
    names = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"),
             "coo": ("data", "row", "col")}[fmt]
    for name in names:
        got = getattr(A, name)
        np.testing.assert_array_equal(got, getattr(S, name))
        with pytest.raises(ValueError, match="read-only"):
            got[...] = 0
    lazy = A * 2
    np.testing.assert_array_equal(lazy.data, S.data * 2)
    other = {"csr": "row", "csc": "coords", "coo": "indptr"}[fmt]
    with pytest.raises(AttributeError, match=f"{other}: a {fmt} array has no '{other}'"):
        getattr(A, other)
    assert not hasattr(ls.asarray(D), "indptr")


def test_numpys_and_scipys_reduction_keywords():
    """``sum(axis, dtype, out, keepdims)`` in NumPy's order (a positional dtype is a dtype),
    ``out=`` filled, ``explicit=True`` refused, ``todense(order, out)``, ``astype`` with
    ``casting`` and ``copy``, and scipy's DOK/LIL/BSR/DIA conversions."""
    D = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    A = ls.asarray(sp.csr_array(D))
    got = A.sum(0, np.float32)
    assert got.dtype == np.float32 and got.shape == (3,)
    out = np.zeros(3)
    assert A.sum(axis=0, out=out) is out
    np.testing.assert_array_equal(out, D.sum(axis=0))
    m = np.zeros(2)
    np.testing.assert_array_equal(A.max(1, m), D.max(1))
    np.testing.assert_array_equal(A.mean(1, None, None, True).todense(), D.mean(1, keepdims=True))
    with pytest.raises(TypeError, match="max: explicit=True"):
        A.max(explicit=True)
    with pytest.raises(ValueError, match="sum: the output parameter out has shape .2,., which does not match the result.s shape .3,."):
        A.sum(axis=0, out=np.zeros(2))
    f = A.todense(order="F")
    assert f.flags.f_contiguous
    np.testing.assert_array_equal(f, D)
    buf = np.empty((2, 3))
    assert A.toarray(out=buf) is buf
    np.testing.assert_array_equal(buf, D)
    assert A.astype(np.float64, copy=False) is A
    with pytest.raises(TypeError, match="astype: cannot cast float64 to int64 under casting='safe'"):
        A.astype(np.int64, casting="safe")
    for conv in ("todok", "tolil", "tobsr", "todia"):
        np.testing.assert_array_equal(getattr(A, conv)().toarray(), D)


@pytest.mark.parametrize("fmt", ["bsr", "dia", "dok", "lil"])
def test_asformat_to_scipys_own_formats(fmt):
    """scipy's formats lazysparse does not store give scipy's object, with the same values."""
    D = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    S = lsp.csr_array(D).asformat(fmt)
    assert S.format == fmt and not isinstance(S, ls.Array)
    np.testing.assert_array_equal(S.toarray(), D)
    np.testing.assert_array_equal(lsp.csr_array(D).asformat("array"), D)
