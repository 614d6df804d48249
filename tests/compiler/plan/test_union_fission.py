"""Union fission (compiler/plan/fission.py): a sum of three or more sparse terms assembled through a
dense row workspace, one loop per term, instead of a k-way merge. Oracle: dense NumPy on the
same operands; every forced policy and capacity must give the merge's result."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.plan import fission
from lazysparse.compiler.pipeline import execute, kernel_log
from oracle import _check_canonical, _modes


def _mat(m, n, density, seed, dtype=np.float64, empty_rows=()):
    rng = np.random.default_rng(seed)
    vals = rng.integers(-4, 5, (m, n)) if np.dtype(dtype).kind in "iu" else rng.standard_normal((m, n))
    D = np.where(rng.random((m, n)) < density, vals, 0).astype(dtype)
    D[[r for r in empty_rows if r < m], :] = 0
    return sp.csr_matrix(D)


def _canonical(out):
    _check_canonical(out.storage, out.shape)
    assert np.all(out.storage.vals != 0)  # computed zeros are not stored


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.complex128])
def test_three_terms_take_the_row_workspace_and_match_numpy(dtype):
    Ms = [_mat(40, 30, 0.15, s, dtype, empty_rows=(3, 17)) for s in range(3)]
    a, b, c = (ls.asarray(M) for M in Ms)
    out, modes = _modes(lambda: (a + b + c).materialize())
    assert modes == ["ws-dense"]
    want = Ms[0].toarray() + Ms[1].toarray() + Ms[2].toarray()
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out.todense(), want)
    _canonical(out)


def test_signs_negations_products_and_scalars_in_the_terms():
    A, B, C, D, E = (_mat(25, 35, 0.2, s) for s in range(5))
    a, b, c, d, e = (ls.asarray(M) for M in (A, B, C, D, E))
    Ad, Bd, Cd, Dd, Ed = (M.toarray() for M in (A, B, C, D, E))
    cases = [
        (lambda: a - b + c, Ad - Bd + Cd),
        (lambda: -a + b - c, -Ad + Bd - Cd),
        (lambda: a - (b - c) - d, Ad - (Bd - Cd) - Dd),
        (lambda: a * b + c + d * e, Ad * Bd + Cd + Dd * Ed),
        (lambda: 2.0 * a + b * 3.0 + c, 2.0 * Ad + Bd * 3.0 + Cd),
        (lambda: a + b + c + d + e, Ad + Bd + Cd + Dd + Ed),
    ]
    for fn, want in cases:
        out, modes = _modes(lambda: fn().materialize())
        assert modes == ["ws-dense"], fn
        np.testing.assert_allclose(out.todense(), want, rtol=1e-14, atol=0)
        _canonical(out)


def test_repeated_operands_and_cancellation_drop_zeros():
    A, B = _mat(30, 30, 0.2, 1), _mat(30, 30, 0.2, 2)
    a, b = ls.asarray(A), ls.asarray(B)
    out, modes = _modes(lambda: (a + b - a).materialize())
    assert modes == ["ws-dense"]
    np.testing.assert_allclose(out.todense(), B.toarray(), atol=1e-15)
    _canonical(out)
    assert out.nnz <= B.nnz
    out, _ = _modes(lambda: (a + a + a).materialize())
    np.testing.assert_allclose(out.todense(), 3 * A.toarray(), rtol=1e-15)
    out, _ = _modes(lambda: (a - a + (b - b)).materialize())
    assert out.nnz == 0 and out.storage.pos[1][-1] == 0


def test_two_terms_merge_and_a_cast_on_the_chain_is_not_split():
    A, B, C = (_mat(20, 20, 0.2, s) for s in range(3))
    a, b, c = (ls.asarray(M) for M in (A, B, C))
    _, modes = _modes(lambda: (a + b).materialize())
    assert modes == ["append"]
    F, G = _mat(20, 20, 0.2, 7, np.float32), _mat(20, 20, 0.2, 8, np.float32)
    f, g = ls.asarray(F), ls.asarray(G)
    # float32 + float32 is rounded to float32 before the float64 sum: one workspace in float64
    # would not round there
    out, modes = _modes(lambda: (f + g + a).materialize())
    assert modes == ["append"]
    want = (F.toarray() + G.toarray()).astype(np.float64) + A.toarray()
    np.testing.assert_array_equal(out.todense(), want)
    # int32 + float32 is computed in float64 (NumPy's rule): the casts are on the terms
    I = _mat(20, 20, 0.2, 9, np.int32)
    out, modes = _modes(lambda: (ls.asarray(I) + f + a).materialize())
    assert modes == ["ws-dense"]
    np.testing.assert_array_equal(out.todense(), I.toarray() + F.toarray().astype(np.float64) + A.toarray())


def test_dense_terms_and_unions_inside_a_term_are_not_split():
    A, B, C = (_mat(20, 20, 0.2, s) for s in range(3))
    a, b, c = (ls.asarray(M) for M in (A, B, C))
    D = np.random.default_rng(0).random((20, 20))
    out, modes = _modes(lambda: (a + b + ls.asarray(D)).materialize())
    assert "ws-dense" not in modes
    np.testing.assert_allclose(out.todense(), A.toarray() + B.toarray() + D)
    out, modes = _modes(lambda: (a + b + ls.maximum(a, c)).materialize())
    np.testing.assert_allclose(out.todense(), A.toarray() + B.toarray() + np.maximum(A.toarray(), C.toarray()))


@pytest.mark.parametrize("policy,cap", [("dense", None), ("hash", 1), ("hash", 4), ("coord", 1),
                                        ("coord", 5), ("bucket", 1), ("bucket", 3)])
def test_every_forced_policy_and_capacity_gives_the_merge_result(policy, cap):
    Ms = [_mat(30, 50, 0.2, s, empty_rows=(0, 29)) for s in range(4)]
    ls_ = [ls.asarray(M) for M in Ms]
    with kernel_log() as log:  # B cancels: where only B has entries the sum is a zero to drop
        (ls_[0] - ls_[1] + ls_[2] + ls_[3] + ls_[1]).materialize()
    stmt = log[0][0].stmt  # the chain as one statement (a schedule plans each node on its own)
    with ls.Schedule().workspace(policy, capacity=cap).apply():
        # the chain's operands in the order they appear (B twice)
        sts = [ls_[k].storage for k in (0, 1, 2, 3, 1)]
        st_, modes = _modes(lambda: execute(stmt, sts, (30, 50), None, "test"))
    assert modes == [f"ws-{policy}"]
    want = Ms[0].toarray() + Ms[2].toarray() + Ms[3].toarray()
    out = ls.Array._from_storage(st_)
    np.testing.assert_allclose(out.todense(), want, rtol=1e-14, atol=1e-15)
    _canonical(out)


def test_empty_operands_zero_size_axes_and_one_element():
    for m, n in ((0, 5), (5, 0), (1, 1), (6, 4)):
        Ms = [sp.csr_matrix((m, n)) for _ in range(3)]
        a, b, c = (ls.asarray(M) for M in Ms)
        out = (a + b + c).materialize()
        assert out.shape == (m, n) and out.nnz == 0
    one = [sp.csr_matrix(np.array([[v]])) for v in (1.0, 2.0, -3.0)]
    a, b, c = (ls.asarray(M) for M in one)
    out, modes = _modes(lambda: (a + b + c).materialize())
    assert out.nnz == 0  # 1 + 2 - 3: a computed zero
    out = (a + b - c).materialize()
    np.testing.assert_array_equal(out.todense(), [[6.0]])


def test_int64_indices_and_csc_operands():
    Ms = [_mat(30, 40, 0.2, s) for s in range(3)]
    for M in Ms[:2]:
        M.indices = M.indices.astype(np.int64)
        M.indptr = M.indptr.astype(np.int64)
    c_csc = Ms[2].tocsc()
    a, b, c = ls.asarray(Ms[0]), ls.asarray(Ms[1]), ls.asarray(c_csc)
    out = (a + b + c).materialize(format="csr")
    np.testing.assert_allclose(out.todense(), sum(M.toarray() for M in Ms))
    _canonical(out)


def test_explain_says_union_fission_and_opcount_counts_the_combining_adds():
    Ms = [_mat(30, 30, 0.2, s) for s in range(3)]
    a, b, c = (ls.asarray(M) for M in Ms)
    text = ls.explain(a + b + c)
    assert "union fission" in text and "assembly ws-dense" in text
    n = ls.opcount(a + b + c, names={"a": a, "b": b, "c": c})
    union = (abs(Ms[0]) + abs(Ms[1]) + abs(Ms[2])).nnz
    assert n["add"] == sum(M.nnz for M in Ms) - union  # one add per entry meeting another
    assert n["mul"] == 0 and n["loads"] == {k: M.nnz for k, M in zip("abc", Ms)}


def test_a_memory_budget_too_small_for_the_row_workspace_merges(monkeypatch):
    # far wider than the work (600 entries over 10^6 columns): merged whatever the budget
    Ms = [_mat(10, 1_000_000, 0.00002, s) for s in range(3)]
    a, b, c = (ls.asarray(M) for M in Ms)
    out, modes = _modes(lambda: (a + b + c).materialize())
    assert modes == ["append"]
    assert "merged" in ls.explain(a + b + c) or "append" in ls.explain(a + b + c)
    # 60,000 columns (a 0.9 MB row workspace): dense, unless the budget is under four times that
    Ms = [_mat(10, 60_000, 0.0003, s) for s in range(3)]
    a, b, c = (ls.asarray(M) for M in Ms)
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "256K")
    out, modes = _modes(lambda: (a + b + c).materialize())
    assert modes == ["append"]
    monkeypatch.delenv("LAZYSPARSE_MEMORY_LIMIT")
    want = sum(M.toarray() for M in Ms)
    np.testing.assert_allclose(out.todense(), want)
    out, modes = _modes(lambda: (a + b + c).materialize())
    assert modes == ["ws-dense"]
    np.testing.assert_allclose(out.todense(), want)


def test_terms_are_found_in_walk_order():
    Ms = [_mat(8, 8, 0.3, s) for s in range(4)]
    a, b, c, d = (ls.asarray(M) for M in Ms)
    with kernel_log() as log:
        (a * b - c + d).materialize()
    spec = log[0][0]
    ts = fission.terms(spec.stmt, spec.inputs, spec.output.format, spec.decisions)
    assert [(t.q0, t.n, t.sign) for t in ts] == [(0, 2, 1), (2, 1, -1), (3, 1, 1)]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(3, 5), m=st.integers(0, 12), n=st.integers(0, 12),
       density=st.floats(0.0, 1.0), seed=st.integers(0, 10**6),
       signs=st.lists(st.booleans(), min_size=5, max_size=5))
def test_sums_of_k_terms_match_numpy(k, m, n, density, seed, signs):
    rng = np.random.default_rng(seed)
    Ms = []
    for _ in range(k):
        D = np.where(rng.random((m, n)) < density, rng.integers(-3, 4, (m, n)), 0).astype(np.float64)
        Ms.append(sp.csr_matrix(D))
    expr, want = ls.asarray(Ms[0]), Ms[0].toarray()
    for M, neg in zip(Ms[1:], signs):
        expr, want = (expr - ls.asarray(M), want - M.toarray()) if neg else (expr + ls.asarray(M), want + M.toarray())
    out = expr.materialize()
    np.testing.assert_array_equal(out.todense(), want)
    if out.nnz and out.storage.format.is_sparse:  # (a nearly full result is stored dense)
        _canonical(out)


def test_explicit_zeros_in_an_input_are_not_stored():
    # rows where no terms meet skip the zero scan unless an input stores a zero
    A = sp.csr_matrix((np.array([0.0, 2.0, 0.0]), np.array([0, 3, 5]), np.array([0, 2, 3, 3])), shape=(3, 6))
    B = sp.csr_matrix((np.array([1.0]), np.array([1]), np.array([0, 1, 1, 1])), shape=(3, 6))
    C = sp.csr_matrix((np.array([4.0]), np.array([2]), np.array([0, 0, 0, 1])), shape=(3, 6))
    assert A.nnz == 3  # the two zeros are stored
    a, b, c = (ls.asarray(M) for M in (A, B, C))
    assert a.nnz == 3
    out, modes = _modes(lambda: (a + b + c).materialize())
    assert modes == ["ws-dense"]
    np.testing.assert_array_equal(out.todense(), A.toarray() + B.toarray() + C.toarray())
    _canonical(out)
    assert out.nnz == 3
