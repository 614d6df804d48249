"""Fused kernels: a DAG of several operations runs as one kernel where the plan shares loops, and
gives NumPy's values over formats, dtypes and awkward shapes; ``fusion="none"`` (one kernel per
operation) gives the same values."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import sparse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler import fused_pipeline as fused

FORMATS = ["csr", "dcsr", "csc", "coo"]
DTYPES = [np.float64, np.float32, np.int64]
# (dtype, format, 64-bit indices) triples that hold every pair of two of them: each triple compiles
# kernels of its own (slow ones, when fused), and the generated C differs by value type, format and
# index width, not by their triple; so the twelve of a pairwise cover instead of all twenty-four,
# with as many examples a triple as before (SDDMM 30 / 12 against 60 / 24, GNN 25 / 12 against
# 40 / 24): an example of a new shape class (an empty or one-row matrix, an extent-1 sum) compiles anew
SIGNATURES = [(np.float64, "csr", False), (np.float64, "dcsr", True), (np.float64, "csc", False),
              (np.float64, "coo", True), (np.float32, "csr", True), (np.float32, "dcsr", False),
              (np.float32, "csc", True), (np.float32, "coo", False), (np.int64, "csr", False),
              (np.int64, "dcsr", True), (np.int64, "csc", False), (np.int64, "coo", True)]


def _sparse(draw, m, n, dtype, fmt, wide=None):
    density = draw(st.sampled_from([0.0, 0.15, 0.5, 1.0]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    D = (rng.random((m, n)) < density) * rng.integers(1, 6, (m, n))
    if m and draw(st.booleans()):
        D[rng.integers(0, m)] = 0  # an empty row
    D = D.astype(dtype)
    S = sp.csr_array(D)
    wide = draw(st.booleans()) if wide is None else wide
    if wide:  # 64-bit positions and coordinates (the fused kernels read both widths)
        S = sp.csr_array((S.data, S.indices.astype(np.int64), S.indptr.astype(np.int64)), shape=S.shape)
    A = ls.asarray(S, format=fmt)
    return A, D


def _dense(rng, shape, dtype):
    return (rng.integers(-3, 4, shape) if np.dtype(dtype).kind == "i" else rng.random(shape)).astype(dtype)


def _check(expr, want, dtype):
    runs = fused.RUNS[0]
    got = expr.materialize()
    tol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-10
    np.testing.assert_allclose(got.todense(), want, rtol=tol, atol=tol)
    assert got.dtype == np.asarray(want).dtype
    return fused.RUNS[0] > runs


dims = st.integers(0, 7)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), m=dims, n=dims, k=st.integers(0, 5), signature=st.sampled_from(SIGNATURES),
       kind=st.sampled_from(["CD", "UVt", "einsum"]))
def test_sddmm(data, m, n, k, signature, kind):
    dtype, fmt, wide = signature
    B, Bd = _sparse(data.draw, m, n, dtype, fmt, wide)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    C = _dense(rng, (m, k), dtype)
    if kind == "CD":
        D = _dense(rng, (k, n), dtype)
        expr, want = B * (ls.asarray(C) @ ls.asarray(D)), Bd * (C @ D)
    elif kind == "UVt":
        V = _dense(rng, (n, k), dtype)
        expr, want = B * (ls.asarray(C) @ ls.asarray(V).T), Bd * (C @ V.T)
    else:
        D = _dense(rng, (k, n), dtype)
        expr, want = ls.einsum("ij,ik,kj->ij", B, C, D), np.einsum("ij,ik,kj->ij", Bd, C, D)
    took = _check(expr, want, dtype)
    np.testing.assert_allclose((B * (ls.asarray(C) @ ls.asarray(D if kind != "UVt" else V.T)))
                               .materialize(fusion="none").todense(), want, rtol=1e-4, atol=1e-4)
    if fmt in ("csr", "dcsr", "coo") and k > 1:
        # one fused kernel (COO converted to compressed levels first; k == 1: substituted, no
        # temporary; k == 0: not split)
        assert took


@settings(max_examples=25, deadline=None)
@given(data=st.data(), m=dims, h=st.integers(1, 6), j=st.integers(1, 4),
       signature=st.sampled_from(SIGNATURES))
def test_gnn(data, m, h, j, signature):
    dtype, fmt, wide = signature
    A, Ad = _sparse(data.draw, m, m, dtype, fmt, wide)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    X, W, Y = _dense(rng, (m, h), dtype), _dense(rng, (h, j), dtype), _dense(rng, (m, h), dtype)
    lX, lW, lY = ls.asarray(X), ls.asarray(W), ls.asarray(Y)
    _check((A @ lX) @ lW, (Ad @ X) @ W, dtype)  # may be reordered (A @ (X @ W))
    with fused.passes("masks", "fusion", "memory"):  # in the order written: one fused kernel
        took1 = _check((A @ lX) @ lW, (Ad @ X) @ W, dtype)
    took2 = _check((A * (lX @ lY.T)) @ lY, (Ad * (X @ Y.T)) @ Y, dtype)
    if fmt in ("csr", "dcsr", "coo") and m > 1 and h > 1:  # (an extent-1 reduction is substituted)
        assert took1 and took2


@settings(max_examples=25, deadline=None)
@given(data=st.data(), order=st.sampled_from([3, 4]), r=st.integers(1, 4), dtype=st.sampled_from([np.float64, np.int64]))
def test_mttkrp(data, order, r, dtype):
    shape = tuple(data.draw(st.integers(1, 5)) for _ in range(order))
    T = sparse.random(shape, density=data.draw(st.sampled_from([0.0, 0.2, 0.7])),
                      random_state=data.draw(st.integers(0, 99)))
    T = sparse.COO(T.coords, (T.data * 10).astype(dtype), shape=shape)
    rng = np.random.default_rng(1)
    mats = [_dense(rng, (shape[q], r), dtype) for q in range(1, order)]
    subs = "ijkl"[:order]
    spec = f"{subs}," + ",".join(f"{c}r" for c in subs[1:]) + "->ir"
    X = ls.asarray(T).asformat("csf")
    took = _check(ls.einsum(spec, X, *mats), np.einsum(spec, T.todense(), *mats), dtype)
    if all(n > 1 for n in shape[1:]):  # (a reduction of extent 1 is substituted instead)
        assert took  # one kernel walks the CSF tree


@settings(max_examples=30, deadline=None)
@given(data=st.data(), m=dims, n=st.integers(0, 13), signature=st.sampled_from(SIGNATURES))
def test_jacobi_step_with_rows_of_every_length(data, m, n, signature):
    """``x + d * (b - A @ x)``: the row sums inside the fused kernel run as split partial sums
    (rows of 0 to 13 entries: the unrolled loop, its remainder, both and neither)."""
    dtype, fmt, wide = signature
    A, Ad = _sparse(data.draw, m, n, dtype, fmt, wide)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    x, b, d = _dense(rng, (n,), dtype), _dense(rng, (m,), dtype), _dense(rng, (m,), dtype)
    x0 = x[:m] if m <= n else np.concatenate([x, np.zeros(m - n, dtype)])
    lx, lx0, lb, ld = ls.asarray(x), ls.asarray(x0), ls.asarray(b), ls.asarray(d)
    expr = lx0 + ld * (lb - A @ lx)
    took = _check(expr, x0 + d * (b - Ad @ x), dtype)
    if fmt == "csr" and Ad.any() and m > 1 and n > 1:  # (dcsr, coo: rows held apart)
        assert took


@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_chain_and_reduction(dtype):
    rng = np.random.default_rng(3)
    B, E, C, D = (_dense(rng, s, dtype) for s in [(9, 7), (9, 7), (9, 4), (4, 7)])
    lB, lE, lC, lD = map(ls.asarray, (B, E, C, D))
    # (built outside the assert: pytest's rewriting would hold the operands, and a value the
    # program holds is kept, computed on its own: compiler/plan/cuts.py)
    expr = (lB + lE) * (lC @ lD)
    assert _check(expr, (B + E) * (C @ D), dtype)
    A = sp.random(9, 9, density=0.3, format="csr", random_state=0, dtype=np.float64).astype(dtype)
    _check(((ls.asarray(A) @ lC) * 2).sum(axis=0), ((A @ C) * 2).sum(axis=0), dtype)


def test_divide_by_a_sampled_product_keeps_the_numerator_pattern():
    """A_ij = B_ij / Σ_k C_ik D_kj, which TACO rejects: computed only at B's nonzeros."""
    rng = np.random.default_rng(0)
    Bd = sp.random(30, 20, density=0.2, format="csr", random_state=1)
    C, D = rng.random((30, 3)) + 0.5, rng.random((3, 20)) + 0.5
    got = (ls.asarray(Bd) / (ls.asarray(C) @ ls.asarray(D))).materialize()
    want = Bd.toarray() / (C @ D)
    assert got.format == "csr" and got.to_scipy().nnz == Bd.nnz
    np.testing.assert_allclose(got.todense(), want)


def test_fused_result_shares_no_buffer_with_its_inputs():
    B = sp.random(10, 10, density=0.3, format="csr", random_state=0)
    lB = ls.asarray(B)
    C = ls.asarray(np.ones((10, 2)))
    R = (lB * (C @ C.T)).materialize().to_scipy()
    assert not np.shares_memory(R.indptr, B.indptr) and not np.shares_memory(R.indices, B.indices)
    with pytest.raises(ValueError, match="read-only"):
        R.indices[:] = 0  # a result's buffers are handed out read-only
    R = R.copy()
    R.indices[:] = 0  # a copy may change, and leaves the input alone
    np.testing.assert_array_equal(lB.to_scipy().indices, B.indices)


def test_a_requested_result_format_is_kept():
    B = ls.asarray(sp.random(20, 30, density=0.2, format="csr", random_state=0))
    C, D = ls.asarray(np.ones((20, 4))), ls.asarray(np.ones((4, 30)))
    want = B.todense() * 4.0
    for fmt in ("csc", "coo", "dense"):
        got = (B * (C @ D)).materialize(format=fmt)
        assert got.format == fmt
        np.testing.assert_allclose(got.todense(), want)


def test_explain_shows_the_fused_kernel():
    B = ls.asarray(sp.random(20, 30, density=0.2, format="csr", random_state=0))
    C, D = ls.asarray(np.ones((20, 4))), ls.asarray(np.ones((4, 30)))
    text = ls.explain(B * (C @ D))
    assert "fused, 2 operations in one loop nest" in text
    assert "loops: i{reset v2; k{j∈v3{S0}}; j∈v3{S1}}" in text
    assert "fused" not in ls.explain(B * (C @ D), fusion="none")


def test_repeated_expression_with_another_inner_extent():
    """The fused-plan cache is keyed by the operands' shapes too: SDDMM with K = 3, then K = 5
    (K appears in no node's shape), then K = 3 again, each gives its own values."""
    B = sp.random(6, 7, density=0.5, format="csr", random_state=0)
    lB = ls.asarray(B)
    rng = np.random.default_rng(0)
    for k in (3, 5, 3, 1, 2):
        C, D = rng.random((6, k)), rng.random((k, 7))
        runs = fused.RUNS[0]
        got = (lB * (ls.asarray(C) @ ls.asarray(D))).materialize()
        assert fused.RUNS[0] == runs + (k > 1)  # k == 1: one statement (the tiny-extent rule)
        np.testing.assert_allclose(got.todense(), B.toarray() * (C @ D))


def test_one_einsum_with_a_factor_outside_its_sum_is_split_and_fused():
    """A_i = C_i * Σ_j B_ij as one einsum: the product leaves the j loop (one multiplication per
    i) and the two operations share the i loop; A @ x (every factor under the sum) is not split."""
    rng = np.random.default_rng(2)
    Bd, C = sp.random(12, 9, density=0.4, format="csr", random_state=3), rng.random(12)
    runs = fused.RUNS[0]
    got = ls.einsum("i,ij->i", C, ls.asarray(Bd)).materialize()
    assert fused.RUNS[0] == runs + 1
    np.testing.assert_allclose(got.todense(), C * Bd.toarray().sum(axis=1))
    runs = fused.RUNS[0]
    np.testing.assert_allclose((ls.asarray(Bd) @ rng.random(9)).materialize().todense().shape, (12,))
    assert fused.RUNS[0] == runs


# -- OpenMP on the outermost loop ------------------------------------------------------------------
def _fused_source(expr):
    from lazysparse.compiler.pipeline import kernel_log
    with kernel_log() as log:
        expr.materialize()
    (run,) = log
    return run.kernel.source


@pytest.fixture
def two_threads():
    ls.set_num_threads(2)
    yield
    ls.set_num_threads(1)


@pytest.mark.parametrize("kind", ["sddmm", "gnn1", "gnn2", "mttkrp"])
def test_parallel_results_equal_sequential_results(kind, two_threads):
    """Each thread keeps its own temporaries (a shared one would mix rows: the test has many
    rows with work per row) and writes its own rows; the values are bitwise the serial ones."""
    rng = np.random.default_rng(5)
    As = sp.random(400, 300, density=0.05, format="csr", random_state=2)
    A, Ad = ls.asarray(As), As.toarray()
    if kind == "sddmm":
        U, V = rng.random((400, 8)), rng.random((300, 8))
        expr, want = A * (ls.asarray(U) @ ls.asarray(V).T), Ad * (U @ V.T)
    elif kind == "gnn1":
        X, W = rng.random((300, 16)), rng.random((16, 5))
        expr, want = (A @ ls.asarray(X)) @ ls.asarray(W), (Ad @ X) @ W
    elif kind == "gnn2":
        X, Y = rng.random((400, 6)), rng.random((300, 6))
        expr = (A * (ls.asarray(X) @ ls.asarray(Y).T)) @ ls.asarray(Y)
        want = (Ad * (X @ Y.T)) @ Y
    else:
        T = sparse.random((60, 30, 20), density=0.05, random_state=1)
        Bm, Cm = rng.random((30, 4)), rng.random((20, 4))
        expr = ls.einsum("ijk,jr,kr->ir", ls.asarray(T).asformat("csf"), Bm, Cm)
        want = np.einsum("ijk,jr,kr->ir", T.todense(), Bm, Cm)
    # GNN-1 in the order written (association would run A @ (X @ W), two kernels)
    with fused.passes(*(fused.PASSES - {"association"} if kind == "gnn1" else fused.PASSES)):
        src = _fused_source(expr)
        # each thread its own run of row chunks first (lowering.owned_runs), then the others'
        assert "#pragma omp parallel" in src and "ls_next[8 * ls_w]++" in src and "ls_r0" in src
        par = expr.materialize().todense()
        ls.set_num_threads(1)
        seq = expr.materialize().todense()
    np.testing.assert_array_equal(par, seq)
    np.testing.assert_allclose(par, want, rtol=1e-12)  # and both are NumPy's values


def test_a_loop_that_the_result_sums_over_runs_on_private_copies(two_threads):
    B = ls.asarray(sp.random(50, 40, density=0.2, format="csr", random_state=0))
    x = ls.asarray(np.random.default_rng(0).random(40))
    expr = (B @ x).sum()  # t_i = Σ_j B_ij x_j; a = Σ_i t_i: every i writes a
    src = _fused_source(expr)
    # each thread sums its rows into a copy of a, added after (compiler/lower/fused.py parallel_loop)
    assert "schedule(static, ls_chunk)" in src and "ls_pv" in src
    np.testing.assert_allclose(float(expr.materialize().todense()), float((B.todense() @ x.todense()).sum()))


# -- fusion="max": every temporary substituted where one statement can express it -------------
@settings(max_examples=40, deadline=None)
@given(data=st.data(), m=dims, n=dims, k=st.integers(0, 4), dtype=st.sampled_from(DTYPES),
       fmt=st.sampled_from(FORMATS),
       kind=st.sampled_from(["sddmm", "div", "gnn1", "gnn2", "chain", "where"]))
def test_max_fusion_gives_numpys_values(data, m, n, k, dtype, fmt, kind):
    B, Bd = _sparse(data.draw, m, n, dtype, fmt)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    C, V = _dense(rng, (m, k), dtype), _dense(rng, (n, k), dtype)
    lC, lV = ls.asarray(C), ls.asarray(V)
    if kind == "sddmm":
        expr, want = B * (lC @ lV.T), Bd * (C @ V.T)
    elif kind == "div":  # TACO rejects it: two nests
        P = C @ V.T
        with np.errstate(divide="ignore", invalid="ignore"):
            want = np.where(Bd != 0, Bd / P, 0)
        expr = B / (lC @ lV.T)
    elif kind == "gnn1":
        W = _dense(rng, (k, 3), dtype)
        expr, want = (B.T @ lC) @ ls.asarray(W), (Bd.T @ C) @ W
    elif kind == "gnn2":
        expr, want = (B * (lC @ lV.T)) @ lV, (Bd * (C @ V.T)) @ V
    elif kind == "chain":
        expr, want = ((B + B) * 2).sum(axis=1), ((Bd + Bd) * 2).sum(axis=1)
    else:
        expr, want = ls.where(B > 0, B + 1, B - 1), np.where(Bd > 0, Bd + 1, Bd - 1)
    got = expr.materialize(fusion="max")
    tol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-10
    np.testing.assert_allclose(got.todense(), want, rtol=tol, atol=tol)


def test_coo_operands_are_compressed_for_the_fused_kernel_and_the_result_stays_coo():
    S = sp.random(40, 30, density=0.1, format="csr", random_state=4)
    B = ls.asarray(S, format="coo")
    rng = np.random.default_rng(4)
    U, V = rng.random((40, 5)), rng.random((30, 5))
    runs = fused.RUNS[0]
    got = (B * (ls.asarray(U) @ ls.asarray(V).T)).materialize()
    assert fused.RUNS[0] == runs + 1 and got.format == "coo"
    np.testing.assert_allclose(got.todense(), S.toarray() * (U @ V.T))
    T = sparse.random((9, 8, 7), density=0.2, random_state=2)
    Bm, Cm = rng.random((8, 3)), rng.random((7, 3))
    runs = fused.RUNS[0]
    got = ls.einsum("ijk,jr,kr->ir", ls.asarray(T), Bm, Cm).materialize()
    assert fused.RUNS[0] == runs + 1
    np.testing.assert_allclose(got.todense(), np.einsum("ijk,jr,kr->ir", T.todense(), Bm, Cm))


def test_mixed_index_widths_in_one_dag():
    """One operand with 32-bit, one with 64-bit positions and coordinates, in one DAG."""
    rng = np.random.default_rng(11)
    A32 = sp.random(40, 30, density=0.2, format="csr", random_state=1)
    B = sp.random(40, 30, density=0.2, format="csr", random_state=2)
    B64 = sp.csr_array((B.data, B.indices.astype(np.int64), B.indptr.astype(np.int64)), shape=B.shape)
    U, V = rng.random((40, 5)), rng.random((30, 5))
    A, Bl = ls.asarray(A32), ls.asarray(B64)
    assert {A._storage.index_dtype, Bl._storage.index_dtype} == {np.dtype(np.int32), np.dtype(np.int64)}
    P = ls.asarray(U) @ ls.asarray(V).T
    Ad, Bd = A32.toarray(), B.toarray()
    for expr, want in [((A * Bl) * P, (Ad * Bd) * (U @ V.T)), (A * P + Bl * P, (Ad + Bd) * (U @ V.T)),
                       (Bl * P, Bd * (U @ V.T)), ((Bl @ ls.asarray(V)) @ ls.asarray(V).T, (Bd @ V) @ V.T)]:
        np.testing.assert_allclose(expr.materialize().todense(), want, rtol=1e-12)


def test_max_fusion_keeps_statements_bounded():
    """``x * (x @ B.T)`` nested: substituting ``x`` everywhere doubles the statement at each
    level (three levels: 15 operands, 7 sums, C that took gcc minutes). Past
    ``inline.MAX_ACCESSES`` a producer stays a temporary; values stay NumPy's."""
    from lazysparse.compiler.plan import inline as IL
    from lazysparse.compiler.pipeline import kernel_log
    from lazysparse.compiler.fused_pipeline import FusedRun
    a = sp.random(7, 7, density=0.3, format="csr", random_state=0)
    b = sp.random(7, 7, density=0.2, format="csr", random_state=1)
    x, X, B = ls.asarray(a), a.toarray(), ls.asarray(b)
    for _ in range(3):
        x, X = x * (x @ B.T), X * (X @ b.toarray().T)
    with kernel_log() as log:
        got = x.materialize(fusion="max")
    np.testing.assert_allclose(got.todense(), X, rtol=1e-12, atol=1e-12)
    stmts = [e.plan.program.ops if isinstance(e, FusedRun) else [e[0]] for e in log]
    sizes = [len(s.stmt.accesses) for ops in stmts for s in ops]
    assert len(log) >= 2 and max(sizes) <= IL.MAX_ACCESSES, sizes


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), m=st.integers(0, 90), n=st.integers(1, 9), k=st.integers(2, 5),
       kind=st.sampled_from(["sddmm", "mttkrp"]))
def test_owned_runs_cover_every_row_once(data, m, n, k, kind, two_threads):
    """The fused kernel's parallel loop in runs of chunks (lowering.owned_runs), over a range
    (SDDMM's rows) or a compressed top level (CSF's stored i): every row is written once,
    whatever the row count against the chunks (16 rows at least) and the two runs (k >= 2:
    one column is a single statement, not a fused kernel). (The
    fixture's two threads hold for every example: nothing in the test changes them.)"""
    from lazysparse.compiler.pipeline import kernel_log
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    if kind == "sddmm":
        B, Bd = _sparse(data.draw, m, n, np.float64, "csr")
        C, V = rng.random((m, k)), rng.random((n, k))
        expr, want = B * (ls.asarray(C) @ ls.asarray(V).T), Bd * (C @ V.T)
    else:
        D = (rng.random((m, n, 4)) < 0.3) * rng.random((m, n, 4))
        Bm, Cm = rng.random((n, k)), rng.random((4, k))
        expr = ls.einsum("ijk,jr,kr->ir", ls.asarray(sparse.COO.from_numpy(D)).asformat("csf"), Bm, Cm)
        want = np.einsum("ijk,jr,kr->ir", D, Bm, Cm)
    with kernel_log() as log:
        got = expr.materialize()
    srcs = [r.kernel.source for r in log if hasattr(r, "kernel")]
    if np.any(Bd if kind == "sddmm" else D):  # (no entries: no kernel to run)
        assert len(srcs) == 1 and "ls_next[8 * ls_w]++" in srcs[0]
    np.testing.assert_allclose(got.todense() if hasattr(got, "todense") else np.asarray(got), want,
                               rtol=1e-12, atol=1e-12)


# -- several results: one kernel where every result after the first is dense -----------------
@settings(max_examples=30, deadline=None)
@given(data=st.data(), m=dims, n=dims, signature=st.sampled_from(SIGNATURES),
       kind=st.sampled_from(["spmv-dot", "axpy-norm", "three", "pattern-first"]))
def test_joint_results_give_numpys_values(data, m, n, signature, kind):
    """``ls.compute`` of results that read one another (CG's ``A @ p`` with ``p @ (A @ p)``,
    ``r - a Ap`` with its squared norm): one fused kernel writes them all, and each root gets
    its own value, dtype and shape."""
    dtype, fmt, wide = signature
    A, Ad = _sparse(data.draw, m, n, dtype, fmt, wide)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    p, y, z = _dense(rng, (n,), dtype), _dense(rng, (m,), dtype), _dense(rng, (m,), dtype)
    lp, ly, lz = ls.asarray(p), ls.asarray(y), ls.asarray(z)
    a = dtype(3)
    if kind == "spmv-dot":
        Ap = A @ lp
        roots, want = (Ap, (ly * Ap).sum()), (Ad @ p, y @ (Ad @ p))
    elif kind == "axpy-norm":
        r = ly - a * lz
        roots, want = (r, (r * r).sum(), lp + a * lp), (y - a * z, (y - a * z) @ (y - a * z), p + a * p)
    elif kind == "three":
        Ap = A @ lp
        roots, want = ((Ap * a).sum(), Ap, ly + Ap), ((Ad @ p * a).sum(), Ad @ p, y + Ad @ p)
    else:  # the first result in A's pattern, the others dense sums over A
        roots, want = (A * a, (A * A).sum(axis=1), abs(A).sum()), (Ad * a, (Ad * Ad).sum(axis=1), abs(Ad).sum())
    runs = fused.RUNS[0]
    got = ls.compute(*roots)
    tol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-10
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g.todense(), w, rtol=tol, atol=tol)
    if kind == "axpy-norm" and m > 1:
        assert fused.RUNS[0] == runs + 1  # (one kernel for all three)


def test_joint_results_on_threads_equal_one_threads(two_threads):
    """A result that sums over the outer loop keeps the kernel on one thread; results written
    by rows run on threads, each thread its rows; either way the values are the serial ones."""
    rng = np.random.default_rng(2)
    As = sp.random(3000, 3000, density=0.01, format="csr", random_state=3)
    A, p, y = ls.asarray(As), ls.asarray(rng.random(3000)), ls.asarray(rng.random(3000))

    def joint():  # (a new DAG each time: a computed A @ p would be read, not computed)
        Ap = A @ p
        return [g.todense() for g in ls.compute(Ap, (p * Ap).sum(), y + Ap)]
    par = joint()
    Ap = A @ p
    both = [g.todense() for g in ls.compute(Ap * 2, y - Ap)]
    ls.set_num_threads(1)
    seq = joint()
    want = As @ p.todense()  # (another kernel: its row sums may round otherwise)
    np.testing.assert_allclose(both[0], want * 2, rtol=1e-12)
    np.testing.assert_allclose(both[1], y.todense() - want, rtol=1e-12)
    for a, b in zip(par, seq):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(seq[0], As @ p.todense(), rtol=1e-12)


def test_a_second_result_in_a_sparse_pattern_keeps_its_format():
    """A second result that one kernel per operation stores sparse (``2 * A``, in A's pattern)
    is not forced dense by a joint kernel: every root has the format its own compute gives."""
    As = sp.random(30, 30, density=0.1, format="csr", random_state=1)
    A, x = ls.asarray(As), ls.asarray(np.arange(30.0))
    y, B = ls.compute(A @ x, A * 2)
    assert B.format == (A * 2).materialize().format
    np.testing.assert_allclose(B.todense(), 2 * As.toarray())
    np.testing.assert_allclose(y.todense(), As @ np.arange(30.0))
