"""Workspaces for sparse scattering ("Compilation of Modular and General Sparse Workspaces", the
workspaces paper): detection of the workspace order from the loop order, every accumulation policy
and capacity giving the same result, edge cases, a policy plugged in from outside, tensor kernels
with sparse results, and memory that follows the result's nonzeros rather than its dimensions.
Oracles: dense NumPy and scipy.sparse products."""
from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.lower import workspace as W
from lazysparse.compiler.plan.workspace import choose, hoisted, ordering
from lazysparse.compiler import fused_pipeline as fused
from lazysparse.compiler.pipeline import kernel_log
from oracle import _check_canonical, _modes  # noqa: F401  (shared with other tests)

# the loop order the operands' storage gives, without converting one to avoid an outer product
# (compiler/plan/kernel.py ``_outer_first``): the second-order workspaces of the detection,
# outer-product, transposed-product and policy tests
OUTER = tuple(fused.PASSES - {"concordance"})
ALL = tuple(fused.PASSES)


def _mat(m, n, density, seed, fmt="csr", dtype=np.float64, empty_row=None):
    S = sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float64)
    if dtype != np.float64:
        S.data = (np.random.default_rng(seed).integers(1, 5, S.nnz)).astype(dtype)
    if empty_row is not None and m > empty_row:
        S = S.tolil()
        S[empty_row, :] = 0
        S = S.tocsr()
    S.eliminate_zeros()
    return S.asformat(fmt)


# -- detection -------------------------------------------------------------------------------------
def test_ordering_of_the_three_spgemm_loop_orders():
    i, j, k = "i", "j", "k"
    assert ordering([i, j, k], [i, j], [k]) == 0  # inner product: scalar accumulation
    assert ordering([i, k, j], [i, j], [k]) == 1  # row-wise (Gustavson)
    assert ordering([k, i, j], [i, j], [k]) == 2  # outer product
    assert ordering([j, i], [i, j], []) == 2      # a transposition is discordant
    assert ordering([i, j], [i, j], []) == 0
    assert [hoisted(o, [i, j]) for o in ([i, j, k], [i, k, j], [k, i, j])] == [2, 1, 0]


def _ordering_of(spec):
    outs = list(spec.stmt.out_indices)
    ovars = [outs[m] for m in spec.output.format.order]
    return ordering(spec.order, ovars, spec.stmt.reduce_indices)


def test_spgemm_loop_orders_get_their_workspaces_without_annotation():
    S, T = _mat(30, 20, 0.2, 1), _mat(20, 25, 0.2, 2)
    ref = (S @ T).toarray()
    cases = [(S, T.tocsc(), None, ALL),   # CSR x CSC: an inner product, or conversion then row-wise
             (S, T, "ws-dense", ALL),     # row-wise: first-order, dense
             (S.tocsc(), T, "ws-bucket", OUTER),  # outer product: second-order, sparse
             (S.tocsc(), T, "ws-dense", ALL)]     # by default: CSC converted, then row-wise
    for a, b, mode, passes in cases:
        with fused.passes(*passes), kernel_log() as log:
            out = (ls.asarray(a) @ ls.asarray(b)).materialize(format="csr")
        specs = [e[0] for e in log if isinstance(e, tuple)]
        if mode is not None:
            assert specs[-1].mode == mode
        for spec in specs:  # the assembly follows the ordering the loop order has
            o = _ordering_of(spec)
            if spec.stmt.reduce_indices:
                assert (o == 0) == (spec.mode == "append")
                assert (o == 1) == (spec.mode == "ws-dense")
                assert (o >= 2) == (spec.mode == "ws-bucket")
        np.testing.assert_allclose(out.todense(), ref)
        _check_canonical(out.storage, ref.shape)
    # the inner-product order itself: scalar accumulation, appended in order, no workspace
    from lazysparse.compiler.plan.kernel import choose_mode
    from lazysparse.ir.nodes import Index
    spec = specs[-1]
    i, k, j = spec.order[0], spec.order[1], spec.order[2]  # row-wise i, k, j
    assert choose_mode(spec.stmt, [i, j, k], spec.output.format) == "append"
    assert choose_mode(spec.stmt, [i, k, j], spec.output.format) == "workspace"
    assert choose_mode(spec.stmt, [k, i, j], spec.output.format) == "workspace"
    assert isinstance(i, Index)


def test_explain_names_the_workspace_and_why():
    S, T = _mat(300, 200, 0.01, 1), _mat(200, 250, 0.01, 2)  # a sparse result
    with fused.passes(*OUTER):
        text = ls.explain(ls.asarray(S.tocsc()) @ ls.asarray(T))
    assert "workspace: sparse scattering of order 2" in text and "'bucket'" in text
    assert "a dense workspace would hold 75000 points" in text
    text = ls.explain(ls.asarray(S) @ ls.asarray(T))
    assert "order 1" in text and "'dense'" in text and "flushed after each" in text


# -- outer product against scipy -------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fa,fb", [("csc", "csr"), ("csc", "dcsr"), ("dcsc", "csr"), ("csr", "csr"),
                                   ("coo", "csr"), ("csr", "dcsr")])
def test_products_match_scipy_in_every_operand_format(seed, fa, fb):
    S, T = _mat(40, 35, 0.1, seed, empty_row=3), _mat(35, 45, 0.1, seed + 7)
    A, B = ls.asarray(S.asformat(fa) if fa not in ("dcsr", "dcsc") else S, format=fa), \
        ls.asarray(T, format=fb)
    out = (A @ B).materialize(format="csr")
    ref = (S @ T)
    np.testing.assert_allclose(out.todense(), ref.toarray(), rtol=1e-13)
    _check_canonical(out.storage, ref.shape)
    assert out.storage.pos[1][4] == out.storage.pos[1][3]  # the empty row


# -- the transposed product of the workspaces paper's Figs. 11-13 ----------------------------------
def test_transposed_product_writes_its_workspace_in_the_result_order():
    # A(j,i) = B(i,k) C(k,j) with A stored {j,i}: the loops run i, k, j; dropping the reduction
    # variable leaves {i, j}, the result's order is {j, i}, so ow_order = [1, 0]: nothing is
    # hoisted and the workspace holds both levels, compressed in (j, i) order. (The paper's
    # schedule reaches the same loops through fuse/pos/split, which ``ls.Schedule`` expresses (the
    # tests below); this is the reconstruction's result, reached by the default schedule.)
    S, T = _mat(30, 20, 0.2, 1), _mat(20, 25, 0.2, 2)
    with kernel_log() as log:
        out = (ls.asarray(S) @ ls.asarray(T)).materialize(format="csc")
    (spec,) = [e[0] for e in log if isinstance(e, tuple)]
    i, j = spec.stmt.out_indices
    (k,) = spec.stmt.reduce_indices
    assert tuple(spec.order) == (i, k, j)
    assert [x for x in spec.order if x != k] == [i, j]
    assert tuple(spec.output.format.order) == (1, 0)  # ow_order
    assert _ordering_of(spec) == 2 and hoisted(spec.order, [j, i]) == 0
    assert spec.mode.startswith("ws-")
    np.testing.assert_allclose(out.todense(), (S @ T).toarray())
    pos, crd = out.storage.pos[1], out.storage.crd[1]  # CSC: columns j, rows i sorted within
    assert pos[0] == 0 and pos[-1] == len(crd)
    for c in range(25):
        assert np.all(np.diff(crd[pos[c]:pos[c + 1]]) > 0)


def test_tiled_fused_schedule_reconstructs_to_the_transposed_product_order():
    # the workspaces paper's Fig. 11 schedule of A(j,i) = B(i,k) C(k,j):
    # .reorder({i,k,j}).fuse(i,k,f).pos(f,fpos,B(i,k))
    # .split(fpos,{f0,f1},4).reorder({f0,f1,j}) runs loops f0, f1, j; undone in inverse order
    # they are {fpos, j} => {f, j} => {i, k, j}; dropping k leaves {i, j}; with the result in
    # order {j, i}, ow_order = [1, 0]: a discordant, second-order workspace
    s = (ls.Schedule().reorder("i", "k", "j").fuse("i", "k", "f").pos("f", "fpos", "B")
         .split("fpos", "f0", "f1", 4).reorder("f0", "f1", "j"))
    g = s.provenance
    full = g.reconstruct(("f0", "f1", "j"))
    assert full == ("i", "k", "j")
    kept = [v for v in full if v != "k"]
    assert kept == ["i", "j"]
    out_order = ["j", "i"]
    assert [kept.index(v) for v in out_order] == [1, 0]  # ow_order
    assert ordering(list(full), out_order, ["k"]) == 2 and hoisted(list(full), out_order) == 0


@pytest.mark.parametrize("factor", [1, 4, 7, 1000])
def test_tiled_fused_schedule_runs_into_its_workspace_and_gives_a_correct_result(factor):
    # the same schedule in the kernel's names (i, j, k = i0, i1, i2), run: tiles of B's
    # entries scatter into a workspace over both of the CSC result's levels (ow_order [1, 0])
    S, T = _mat(30, 20, 0.2, 1, empty_row=5), _mat(20, 25, 0.2, 2)  # an empty row inside tiles
    s = (ls.Schedule().reorder("i0", "i2", "i1").fuse("i0", "i2", "f").pos("f", "fpos", "T0")
         .split("fpos", "f0", "f1", factor).reorder("f0", "f1", "i1"))
    with kernel_log() as log:
        out = (ls.asarray(S) @ ls.asarray(T)).materialize(format="csc", schedule=s)
    (spec,) = [e[0] for e in log if isinstance(e, tuple)]
    assert spec.mode.startswith("ws-") and spec.loops.tiles is not None
    assert tuple(spec.output.format.order) == (1, 0)
    assert out.format == "csc"
    np.testing.assert_allclose(out.todense(), (S @ T).toarray())
    pos, crd = out.storage.pos[1], out.storage.crd[1]
    for c in range(25):
        assert np.all(np.diff(crd[pos[c]:pos[c + 1]]) > 0)
    # a result whose rows the loops would append to cannot be cut into tiles: refused
    with pytest.raises(NotImplementedError, match="tiles of stored entries"):
        (ls.asarray(S) @ ls.asarray(T)).materialize(format="csr", schedule=s)


# -- every policy and capacity gives the same result -----------------------------------------------
@pytest.mark.parametrize("fa", ["csr", "csc"])
@pytest.mark.parametrize("policy", ["dense", "hash", "coord", "bucket"])
@pytest.mark.parametrize("cap", [1, 2, 7, None, 10**6])
def test_policy_and_capacity_invariance(fa, policy, cap):
    # integer values: every summation order gives the same floating-point sums
    S, T = _mat(50, 30, 0.15, 3, dtype=np.int64).astype(np.float64), _mat(30, 40, 0.15, 4, dtype=np.int64).astype(np.float64)
    A, B = ls.asarray(S.asformat(fa)), ls.asarray(T)
    with fused.passes(*OUTER):  # CSC: the outer product's second-order workspace
        base = (A @ B).materialize(format="csr").storage
        got = (A @ B).materialize(format="csr", schedule=ls.Schedule().workspace(policy, capacity=cap)).storage
    assert np.array_equal(got.pos[1], base.pos[1]) and np.array_equal(got.crd[1], base.crd[1])
    assert np.array_equal(got.vals, base.vals)
    np.testing.assert_array_equal(np.asarray(got.vals), (S @ T).tocsr().sorted_indices().data)


def test_a_full_accumulation_array_is_merged_on_every_insert_at_capacity_one():
    """Capacity 1: full after each new key; the merges must still combine duplicates."""
    S, T = _mat(20, 15, 0.3, 5), _mat(15, 20, 0.3, 6)
    A, B = ls.asarray(S.tocsc()), ls.asarray(T)
    for policy, passes in itertools.product(("hash", "coord", "bucket"), (OUTER, ALL)):
        with fused.passes(*passes):
            got = (A @ B).materialize(schedule=ls.Schedule().workspace(policy, capacity=1))
        np.testing.assert_allclose(got.todense(), (S @ T).toarray(), rtol=1e-13)


# -- edge cases ------------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", ["dense", "hash", "coord", "bucket"])
def test_empty_operands_give_empty_results_with_zero_positions(policy):
    sched = ls.Schedule().workspace(policy)
    for a, b in [(sp.csr_matrix((5, 4)), _mat(4, 6, 0.5, 1)), (_mat(5, 4, 0.5, 1), sp.csr_matrix((4, 6))),
                 (sp.csr_matrix((0, 4)), _mat(4, 6, 0.5, 1)), (sp.csc_matrix((5, 4)), sp.csr_matrix((4, 6)))]:
        out = (ls.asarray(a) @ ls.asarray(b)).materialize(format="csr", schedule=sched)
        assert out.shape == (a.shape[0], 6) and out.storage.nnz == 0
        assert np.all(np.asarray(out.storage.pos[1]) == 0)


@pytest.mark.parametrize("policy", ["dense", "hash", "coord", "bucket"])
def test_all_products_on_one_point_combine(policy):
    a = sp.csc_matrix(np.ones((1, 50)))      # one row
    b = sp.csr_matrix(np.arange(1.0, 51.0).reshape(50, 1))
    out = (ls.asarray(a) @ ls.asarray(b)).materialize(format="csr",
                                                     schedule=ls.Schedule().workspace(policy, capacity=3))
    assert out.storage.nnz == 1 and out.todense()[0, 0] == sum(range(1, 51))


def test_computed_zeros_are_not_stored():
    a = sp.csr_matrix(np.array([[1.0, 1.0]]))
    b = sp.csr_matrix(np.array([[2.0, 1.0], [-2.0, 1.0]]))  # column 0 cancels
    out = (ls.asarray(a) @ ls.asarray(b)).materialize(format="csr")
    assert out.storage.nnz == 1 and out.todense().tolist() == [[0.0, 2.0]]


@pytest.mark.parametrize("cols", [
    [3, 9, 40],                                  # one bitmap word and the next: the walk or rank
    [5, 700, 3000, 9000, 15000],                 # several summary words: rank of 32
    list(range(11, 64 * 45, 64)),                # 45 entries alone in their words: rank of 64
    list(range(0, 120)),                         # 120 packed entries: the walk
    list(range(7, 200000, 2000)),                # 100 entries over 49 summary words: the walk
    list(range(7, 1400000, 20000)),              # 70 entries over 342 summary words: the sort
], ids=["word", "summary", "thin", "packed", "walk", "sort"])
def test_computed_zeros_are_not_stored_whichever_drain_runs(cols):
    # row 0 of the product is B[0] + B[1]: its first column cancels, the others are 3; row 1 is
    # B[1] alone (nothing cancels), so the drain's "a value is zero" must be per row
    n = 1400001
    cols = np.array(cols)
    b0 = sp.csr_matrix((np.full(len(cols), 2.0), (np.zeros(len(cols), int), cols)), shape=(1, n))
    b1 = sp.csr_matrix((np.r_[-2.0, np.ones(len(cols) - 1)], (np.zeros(len(cols), int), cols)), shape=(1, n))
    a = sp.csr_matrix(np.array([[1.0, 1.0], [0.0, 1.0]]))
    b = sp.vstack([b0, b1]).tocsr()
    want = (a @ b).toarray()
    dense = ls.Schedule().workspace("dense")  # (the cost model picks buckets for 2 rows this wide)
    out, modes = _modes(lambda: (ls.asarray(a) @ ls.asarray(b)).materialize(format="csr", schedule=dense))
    assert modes == ["ws-dense"]
    np.testing.assert_array_equal(out.todense(), want)
    assert out.storage.nnz == np.count_nonzero(want) and np.all(out.storage.vals != 0)
    _check_canonical(out.storage, want.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.complex128])
def test_dtypes(dtype):
    S, T = _mat(25, 20, 0.2, 8), _mat(20, 30, 0.2, 9)
    S.data = (S.data * 10).astype(dtype)
    T.data = (T.data * 10 + (1j if dtype == np.complex128 else 0)).astype(dtype)
    for a in (S, S.tocsc()):
        out = (ls.asarray(a) @ ls.asarray(T)).materialize(format="csr")
        np.testing.assert_allclose(out.todense(), (a @ T).toarray(), rtol=1e-5)


def test_int64_indices():
    S, T = _mat(30, 20, 0.2, 1), _mat(20, 25, 0.2, 2)
    S.indices, S.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
    out = (ls.asarray(S.tocsc()) @ ls.asarray(T)).materialize(format="csr")
    np.testing.assert_allclose(out.todense(), (S @ T).toarray())


# -- a policy plugged in from outside --------------------------------------------------------------
SORTED_ARRAY = r"""
/* a test policy: entries kept sorted in an array, binary search per insert */
typedef struct { LS_WK *k; LS_WT *v; int64_t n, cap; } ls_ws;
static int ls_ws_init(ls_ws *w, int64_t E, int64_t cap) {
  (void)E; w->n = 0; w->cap = cap;
  w->k = (LS_WK *)malloc((size_t)cap * sizeof(LS_WK)); w->v = (LS_WT *)malloc((size_t)cap * sizeof(LS_WT));
  return !w->k || !w->v;
}
static int ls_ws_insert(ls_ws *w, int64_t key, LS_WT val) {
  int64_t lo = 0, hi = w->n;
  while (lo < hi) { int64_t mid = (lo + hi) / 2; if (w->k[mid] < key) lo = mid + 1; else hi = mid; }
  if (lo < w->n && w->k[lo] == key) { LS_WCOMB(w->v[lo], val); return 0; }
  memmove(w->k + lo + 1, w->k + lo, (size_t)(w->n - lo) * sizeof(LS_WK));
  memmove(w->v + lo + 1, w->v + lo, (size_t)(w->n - lo) * sizeof(LS_WT));
  w->k[lo] = (LS_WK)key; w->v[lo] = val; w->n++;
  return w->n >= w->cap;
}
static int64_t ls_ws_size(const ls_ws *w) { return w->n; }
static int64_t ls_ws_drain(ls_ws *w, LS_WK *k, LS_WT *v, LS_WK *tk, LS_WT *tv) {
  (void)tk; (void)tv; const int64_t n = w->n;
  memcpy(k, w->k, (size_t)n * sizeof(LS_WK)); memcpy(v, w->v, (size_t)n * sizeof(LS_WT));
  w->n = 0; return n;
}
static void ls_ws_free(ls_ws *w) { free(w->k); free(w->v); }
"""


def test_a_registered_policy_plugs_in_without_compiler_changes():
    W.register_policy("sorted_array", SORTED_ARRAY)
    try:
        S, T = _mat(40, 30, 0.15, 11), _mat(30, 40, 0.15, 12)
        for a in (S, S.tocsc()):
            A, B = ls.asarray(a), ls.asarray(T)
            for cap in (1, 5, 4096):
                out, modes = _modes(lambda: (A @ B).materialize(
                    format="csr", schedule=ls.Schedule().workspace("sorted_array", capacity=cap)))
                assert modes[-1] == "ws-sorted_array"
                np.testing.assert_allclose(out.todense(), (a @ T).toarray(), rtol=1e-13)
                _check_canonical(out.storage, (40, 40))
    finally:
        del W.POLICIES["sorted_array"]


def test_policy_names_and_schedules_are_checked():
    with pytest.raises(ValueError, match="register_policy: name"):
        W.register_policy("x); system(", "")
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        ls.Schedule().workspace("nope")
    with pytest.raises(ValueError, match="capacity must be a positive int"):
        ls.Schedule().workspace("hash", capacity=0)
    assert repr(ls.Schedule().workspace("coord", capacity=8)) == "Schedule().workspace('coord', capacity=8)"
    with pytest.raises(TypeError, match="schedule must be an ls.Schedule"):
        ls.asarray(np.eye(2)).materialize(schedule="hash")


# -- tensor kernels with sparse results ------------------------------------------------------------
def _tensor(shape, density, seed):
    import sparse
    return sparse.random(shape, density=density, random_state=seed)


@pytest.mark.parametrize("seed", range(3))
def test_ttm_and_mttkrp_with_sparse_results(seed):
    X = _tensor((8, 9, 10), 0.1, seed)
    M = _mat(10, 6, 0.3, seed + 1)
    C1, C2 = _mat(9, 5, 0.4, seed + 2), _mat(10, 5, 0.4, seed + 3)
    Xl = ls.asarray(X, format="csf")
    ttm = ls.einsum("ijk,kl->ijl", Xl, ls.asarray(M)).materialize(format="csf")
    np.testing.assert_allclose(ttm.todense(), np.einsum("ijk,kl->ijl", X.todense(), M.toarray()), rtol=1e-12)
    # SpMTTKRP with sparse factors and a sparse result: A_ir = sum_jk X_ijk C1_jr C2_kr
    mtt = ls.einsum("ijk,jr,kr->ir", Xl, ls.asarray(C1), ls.asarray(C2)).materialize(format="csr")
    np.testing.assert_allclose(mtt.todense(), np.einsum("ijk,jr,kr->ir", X.todense(), C1.toarray(), C2.toarray()),
                               rtol=1e-12)
    # SpTTM-I, the result in another mode order: A_kjl = sum_i X_ijk M2_il
    M2 = _mat(8, 4, 0.5, seed + 4)
    out = ls.einsum("ijk,il->kjl", Xl, ls.asarray(M2)).materialize(format="csf")
    np.testing.assert_allclose(out.todense(), np.einsum("ijk,il->kjl", X.todense(), M2.toarray()), rtol=1e-12)


def test_bucket_policy_on_wide_keys_and_third_order_results():
    # outer product with 10^5 x 10^5 keys (the bucket width grows with the extent) and SpTTM
    rng = np.random.default_rng(5)
    n = 100_000
    S = sp.csc_matrix((rng.random(300), (rng.integers(0, n, 300), rng.integers(0, 50, 300))), shape=(n, 50))
    T = sp.csr_matrix((rng.random(300), (rng.integers(0, 50, 300), rng.integers(0, n, 300))), shape=(50, n))
    for cap in (1, 5, None):
        out = (ls.asarray(S) @ ls.asarray(T)).materialize(
            format="csr", schedule=ls.Schedule().workspace("bucket", capacity=cap))
        ref = (S @ T).tocsr()
        ref.sort_indices()
        got = out.to_scipy().tocsr()
        assert np.array_equal(got.indptr, ref.indptr) and np.array_equal(got.indices, ref.indices)
        np.testing.assert_allclose(got.data, ref.data, rtol=1e-13)
    X = _tensor((8, 9, 10), 0.1, 1)
    M = _mat(10, 6, 0.3, 2)
    ttm = ls.einsum("ijk,kl->ijl", ls.asarray(X, format="csf"), ls.asarray(M)).materialize(
        format="csf", schedule=ls.Schedule().workspace("bucket", capacity=3))
    np.testing.assert_allclose(ttm.todense(), np.einsum("ijk,kl->ijl", X.todense(), M.toarray()), rtol=1e-12)


def test_a_csc_left_operand_is_converted_rather_than_scattered_into_every_level():
    """CSC @ CSR, and A.T @ A with A in CSR (A.T is a CSC view): one O(nnz) conversion, then
    Gustavson's row-wise order with a one-level workspace, as scipy converts; not the outer
    product's second-order workspace, which sorts every product."""
    S, T = _mat(40, 30, 0.15, 8), _mat(30, 35, 0.15, 9)
    for expr, ref in ((lambda: ls.asarray(S.tocsc()) @ ls.asarray(T), S @ T),
                      (lambda: ls.asarray(S).T @ ls.asarray(S), S.T @ S)):
        out, modes = _modes(lambda: expr().materialize(format="csr"))
        assert modes == ["sort", "ws-dense"], modes  # the conversion, then row-wise
        np.testing.assert_allclose(out.todense(), ref.toarray(), rtol=1e-13)
        _check_canonical(out.storage, ref.shape)
        with fused.passes(*OUTER):
            out2, modes = _modes(lambda: expr().materialize(format="csr"))
        assert modes == ["ws-bucket"], modes
        np.testing.assert_allclose(out2.todense(), ref.toarray(), rtol=1e-13)
        _check_canonical(out2.storage, ref.shape)
        np.testing.assert_array_equal(out2.storage.crd[1], out.storage.crd[1])  # same pattern both ways
    # a CSC result from CSR operands needs both converted (column-wise Gustavson) or the result
    # transposed: not found by the one-conversion rule yet; the outer product stays, and is right
    out, modes = _modes(lambda: (ls.asarray(S) @ ls.asarray(T)).materialize(format="csc"))
    np.testing.assert_allclose(out.todense(), (S @ T).toarray(), rtol=1e-13)


# -- appending and conversion need no workspace ----------------------------------------------------
def test_appending_kernels_use_no_workspace():
    S, T = _mat(30, 20, 0.2, 1), _mat(30, 20, 0.2, 2)
    D = np.random.default_rng(0).random((30, 20))
    for fn in (lambda: (ls.asarray(S) * ls.asarray(D)).materialize(),
               lambda: (ls.asarray(S) + ls.asarray(T)).materialize()):
        _, modes = _modes(fn)
        assert modes and not any(m.startswith("ws-") for m in modes)
    # a transposition is discordant: entries are scattered and sorted (the counting-sort
    # assembly, a two-level workspace with nothing to combine)
    out, modes = _modes(lambda: ls.asarray(S).T.materialize(format="csr"))
    assert modes == ["sort"]
    np.testing.assert_array_equal(out.todense(), S.T.toarray())


# -- cost model --------------------------------------------------------------------------------------
def test_cost_model_picks_dense_rows_and_sparse_higher_orders():
    assert choose([10_000], 10_000, 50_000, 8, 1 << 30).policy == "dense"
    assert choose([10**8], 10**4, 10**4, 8, 1 << 30).policy == "bucket"   # far larger than the work
    assert choose([10**6], 10**6, 10**7, 8, 1 << 20).policy == "bucket"   # over the budget
    c = choose([10**6, 10**6], 1, 10**4, 8, 1 << 30)
    assert c.policy == "bucket" and 16 <= c.capacity <= 1 << 15
    assert choose([100], 1, 10, 8, None, "coord", 3) == ("coord", 3, "forced by the schedule (coord, capacity 3)")


# -- memory follows the result's nonzeros --------------------------------------------------------------
@pytest.mark.parametrize("passes", [OUTER, ALL])
def test_outer_product_memory_is_proportional_to_nonzeros(passes):
    """10^6 x 10^6 operands, ~10^5 result entries: a dense workspace would need 10^12 points.
    In the outer-product order, and by default (the CSC operand converted, then row-wise)."""
    code = textwrap.dedent("""
        import resource, numpy as np, scipy.sparse as sp, lazysparse as ls
        from lazysparse.compiler import fused_pipeline as fused
        fused.passes(*PASSES).__enter__()
        n, k = 10**6, 10**4
        rng = np.random.default_rng(0)
        r, m, c = rng.integers(0, n, k), rng.integers(0, 1000, k), rng.integers(0, n, k)
        B = sp.csc_matrix((np.ones(k), (r, m)), shape=(n, n))
        C = sp.csr_matrix((np.ones(k), (m, c)), shape=(n, n))
        Bl, Cl = ls.asarray(B), ls.asarray(C)
        (ls.asarray(sp.csc_matrix((n, 2))) @ ls.asarray(sp.csr_matrix((2, n)))).materialize()  # compile
        r0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = (Bl @ Cl).materialize()
        r1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        ref = (B @ C).tocsr(); ref.sum_duplicates()
        assert out.storage.nnz == ref.nnz, (out.storage.nnz, ref.nnz)
        print((r1 - r0) * 1024, ref.nnz)
    """).replace("PASSES", repr(passes))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    grew, nnz = map(int, res.stdout.split())
    # the result (12 bytes an entry, positions 4 MB), the workspace and the all array
    assert grew < 4 * (1 << 20) + 200 * nnz, (grew, nnz)


# -- property test over formats, policies and capacities -------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 12), st.integers(0, 12), st.integers(1, 12), st.sampled_from(["csr", "csc", "coo"]),
       st.sampled_from(["csr", "csc"]), st.sampled_from([None, "dense", "hash", "coord", "bucket"]),
       st.sampled_from([None, 1, 3, 64]), st.integers(0, 10**6), st.sampled_from([OUTER, ALL]))
def test_products_match_numpy(m, n, k, fa, fb, policy, cap, seed, passes):
    S, T = _mat(m, k, 0.3, seed).asformat(fa), _mat(k, n, 0.3, seed + 1).asformat(fb)
    sched = ls.Schedule().workspace(policy, capacity=cap) if policy else None
    with fused.passes(*passes):
        out = (ls.asarray(S) @ ls.asarray(T)).materialize(format="csr", schedule=sched)
    np.testing.assert_allclose(out.todense(), S.toarray() @ T.toarray(), rtol=1e-12, atol=1e-12)
    _check_canonical(out.storage, (m, n))


def test_a_result_sized_from_the_previous_call_grows_and_shrinks():
    # CSR-like workspace results start at the previous result's size (lowering.declare_output):
    # a much larger result next must grow, a much smaller one must not keep the old size
    rng = np.random.default_rng(3)
    for density in (0.01, 0.3, 0.002, 0.2, 0.0):
        A = sp.random(60, 60, density=density, format="csr", random_state=rng)
        a = ls.asarray(A)
        for _ in range(2):
            out, modes = _modes(lambda: (a @ a).materialize(format="csr"))
            assert modes and modes[0].startswith("ws-")
            np.testing.assert_allclose(out.todense(), (A @ A).toarray(), rtol=1e-12, atol=1e-14)
            _check_canonical(out.storage, out.shape)


# -- short rows spread wide: the dense workspace drains them by rank ---------------------------------------
def _wide(m, n, lengths, seed, lo=0, hi=None, index_dtype=np.int32):
    """CSR, row r holding lengths[r] distinct random columns in [lo, hi), small integer values
    (sums and products are exact, so the oracle can be compared exactly)."""
    rng = np.random.default_rng(seed)
    hi = n if hi is None else hi
    rows, cols = [], []
    for r, k in enumerate(lengths):
        c = rng.choice(np.arange(lo, hi), size=min(k, hi - lo), replace=False)
        rows += [r] * len(c)
        cols += list(c)
    vals = rng.integers(1, 9, len(rows)).astype(np.float64) * rng.choice([-1.0, 1.0], len(rows))
    M = sp.csr_matrix((vals, (rows, cols)), shape=(m, n))
    M.sort_indices()
    M.indices, M.indptr = M.indices.astype(index_dtype), M.indptr.astype(index_dtype)
    return M


def _rank_cases():
    # rows of 0..66 entries in all (the rank drain takes up to 32 of them when they span more
    # than one summary word, 4096 columns, and 33-64 when most are alone in their bitmap word),
    # spread over 20000 columns or packed into 300
    m, n = 64, 20000
    lengths = [[(r * 7 + s * 3) % 23 for r in range(m)] for s in range(3)]
    packed = lambda s: _wide(m, n, lengths[s], 10 + s, lo=9000, hi=9300)
    spread = lambda s, idx=np.int32: _wide(m, n, lengths[s], 20 + s, index_dtype=idx)
    # rows of 10..75 entries, most alone in their bitmap word: both sides of 32, 64 and 65
    long = [_wide(m, n, [10 + r for r in range(m)], 30), _wide(m, n, [0] * m, 31),
            _wide(m, n, [r % 3 for r in range(m)], 32, index_dtype=np.int64)]
    return [[spread(s) for s in range(3)], [packed(s) for s in range(3)],
            [spread(0), packed(1), spread(2, np.int64)], [spread(s, np.int64) for s in range(3)], long]


def test_short_wide_rows_of_a_sum_drain_in_order():
    for Ms in _rank_cases():
        a, b, c = (ls.asarray(M) for M in Ms)
        out, modes = _modes(lambda: (a + b - c).materialize())
        assert modes == ["ws-dense"]
        want = Ms[0].toarray() + Ms[1].toarray() - Ms[2].toarray()
        np.testing.assert_array_equal(out.todense(), want)
        _check_canonical(out.storage, want.shape)
        assert np.all(out.storage.vals != 0)


def test_short_wide_rows_of_a_product_drain_in_order():
    # row-wise SpGEMM into 20000 columns: one to a few dozen products a row
    for Ms in _rank_cases():
        S = _wide(64, 40, [(r % 4) for r in range(64)], 5)
        T = Ms[0][:40]
        out, modes = _modes(lambda: (ls.asarray(S) @ ls.asarray(T)).materialize(format="csr"))
        assert modes == ["ws-dense"]
        np.testing.assert_array_equal(out.todense(), S.toarray() @ T.toarray())
        _check_canonical(out.storage, (64, 20000))


def test_wide_keys_of_an_outer_product_drain_in_order():
    # outer product, nothing hoisted: the dense workspace's keys are i * 20000 + j (64-bit), a
    # few dozen of them over the whole matrix, so the drain ranks them
    for nnz_row in (1, 2, 5):
        S = _wide(40, 30, [nnz_row if r % 7 == 0 else 0 for r in range(40)], 1).tocsc()
        T = _wide(30, 20000, [1 if r % 5 == 0 else 0 for r in range(30)], 2)
        with fused.passes(*OUTER):
            out = (ls.asarray(S) @ ls.asarray(T)).materialize(format="csr", schedule=ls.Schedule().workspace("dense"))
        np.testing.assert_array_equal(out.todense(), S.toarray() @ T.toarray())
        _check_canonical(out.storage, (40, 20000))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_both_inserts_of_the_dense_policy_give_the_same_result(dtype):
    # The kernel has a loop nest for each insert (with a branch, and branch-free), and the first
    # calls on new operands alternate them (runtime/tuning.py Flags): every call is checked, so
    # both run, through every drain (rank of 32 and 64, walk, one word), cancelling sums and all.
    from lazysparse.runtime import tuning
    S = _wide(64, 40, [(r % 4) for r in range(64)], 5)
    for Ms in _rank_cases():
        Ms = [M.astype(dtype) for M in Ms]
        a, b, c = (ls.asarray(M) for M in Ms)
        s, t = ls.asarray(S.astype(dtype)), ls.asarray(Ms[0][:40])
        want_sum = Ms[0].toarray() + Ms[1].toarray() - Ms[2].toarray()
        want_prod = S.astype(dtype).toarray() @ Ms[0][:40].toarray()
        n0 = tuning.CHOICES_MADE[0]
        for _ in range(2 * tuning.SAMPLES + 1):
            for fn, want in ((lambda: (a + b - c).materialize(), want_sum),
                             (lambda: (s @ t).materialize(format="csr"), want_prod)):
                out, modes = _modes(fn)
                assert modes == ["ws-dense"]
                np.testing.assert_array_equal(out.todense(), want)
                _check_canonical(out.storage, want.shape)
                assert np.all(out.storage.vals != 0)
        if tuning.ENABLED:  # both kernels measured both inserts, and chose
            assert tuning.CHOICES_MADE[0] == n0 + 2


def test_a_kernel_of_the_dense_policy_has_both_inserts():
    src = ls.explain(ls.asarray(_mat(20, 20, 0.2, 1)) @ ls.asarray(_mat(20, 20, 0.2, 2)))
    assert "ls_ws_insert_b(&ws, " in src and "ls_ws_insert(&ws, " in src and "ls_ws_use(&ws, wsb" in src


@pytest.mark.parametrize("flags", [["-mavx2", "-mpopcnt"], []], ids=["avx2", "portable"])
def test_rank_drain_without_avx512(tmp_path, flags):
    # the rank has a vector path per x86 target and a portable loop; the suite's own builds take
    # the machine's (-march=native). Here the compiler is told to build for AVX2, or generic code.
    import os
    import platform
    import shutil
    if flags and platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("AVX2 flags are for x86-64")
    cc = tmp_path / "cc"
    sub = " ".join(flags)
    cc.write_text("#!/bin/sh\nargs=\"\"\nfor a in \"$@\"; do [ \"$a\" = \"-march=native\" ] && continue; "
                  "args=\"$args $a\"; done\nexec ${LS_REAL_CC:-cc} $args " + sub + "\n")
    cc.chmod(0o755)
    code = textwrap.dedent("""
        import numpy as np, sys
        sys.path[:0] = %r
        import lazysparse as ls
        from oracle import _check_canonical
        from test_workspaces import _rank_cases
        for Ms in _rank_cases():
            a, b, c = (ls.asarray(M) for M in Ms)
            out = (a + b - c).materialize()
            want = Ms[0].toarray() + Ms[1].toarray() - Ms[2].toarray()
            assert np.array_equal(out.todense(), want)
            _check_canonical(out.storage, want.shape)
        print("ok")
    """ % ([os.path.dirname(os.path.abspath(__file__)),  # this folder, and tests/ (oracle.py)
            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))],))
    env = dict(os.environ, CC=str(cc), LAZYSPARSE_CACHE_DIR=str(tmp_path / "cache"), LS_REAL_CC=shutil.which("cc") or "cc")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-3000:]


def test_explain_gives_the_workspace_reason_for_these_operands_sizes():
    """Two products of the same kernel (the same signature) with different sizes: each explain
    names its own workspace extent, not the one planned first (the warm path skips planning)."""
    for n in (300, 40):
        A = ls.asarray(sp.random(n, n, density=0.05, format="csr", random_state=n))
        (A @ A).materialize()  # warm
        assert f"workspace over {n} points" in ls.explain(A @ A)
