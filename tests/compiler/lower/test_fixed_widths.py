"""Fixed-width versions of inner loops (``Lowerer.emit_versions``: a result row kept in a
local array across the reductions; ``FusedLowerer.emit_loop``: innermost dense sums): every
width that has a version, and widths next to them, against dense NumPy."""
from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.compiler.lower.fused import FusedLowerer
from lazysparse.compiler.lower.lowering import Lowerer
from lazysparse.compiler.pipeline import kernel_log
from lazysparse.compiler.fused_pipeline import FusedRun

DTYPES = [np.float64, np.float32, np.int64, np.complex128]


def _rand(rng, shape, dtype):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-3, 4, shape).astype(dtype)
    x = rng.random(shape)
    return (x + 1j * rng.random(shape)).astype(dtype) if np.dtype(dtype).kind == "c" else x.astype(dtype)


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) == np.float32 else 1e-10


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("width", sorted(set(Lowerer.ROW_WIDTHS) | {w + 1 for w in Lowerer.ROW_WIDTHS} | {1, 127, 128}))
def test_products_at_and_around_the_row_widths(width, dtype):
    rng = np.random.default_rng(width)
    X, W = _rand(rng, (9, 5), dtype), _rand(rng, (5, width), dtype)
    As = sp.random(9, 9, density=0.3, format="lil", random_state=width).astype(dtype)
    As[2, :] = 0  # an empty row: its result row is zero
    As = As.tocsr()
    for expr, want in [(ls.asarray(X) @ ls.asarray(W), X @ W),
                       (ls.asarray(As) @ ls.asarray(X @ W), As.toarray() @ (X @ W))]:
        with kernel_log() as log:
            got = expr.materialize(fusion="none").todense()
        np.testing.assert_allclose(got, want, rtol=_tol(dtype), atol=_tol(dtype))
        assert got.dtype == want.dtype
        (spec, runner), = log
        versions = {int(w) for w in re.findall(r"if \(N\d+ == (\d+)\)", runner.source)}
        # the row loop has every version; float rows run as vectors, with a 128-wide one too
        vector = np.dtype(dtype) in (np.float64, np.float32)
        assert versions == set(Lowerer.ROW_WIDTHS) | ({128} if vector else set())
        assert ("ls_vd rv" in runner.source or "ls_vf rv" in runner.source) == vector
        # dispatched once, above every loop: each version is a loop nest of its own
        body = runner.source[runner.source.index("int32_t ls_kernel"):]
        assert body.index("if (N") < body.index("for (")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_wide_rows_use_fused_multiply_adds(dtype):
    """Vector rows of WIDE_FMA bytes and more (8 AVX-512 accumulators) sum with fused
    multiply-adds, narrower ones with separate operations; both against NumPy, with an empty
    row, at the widths on each side of the limit."""
    rng = np.random.default_rng(7)
    A = sp.random(60, 50, density=0.2, format="lil", random_state=7).astype(dtype)
    A[4, :] = 0
    A = A.tocsr()
    isz = np.dtype(dtype).itemsize
    for w in (Lowerer.WIDE_FMA // isz // 2, Lowerer.WIDE_FMA // isz):
        X = rng.standard_normal((50, w)).astype(dtype)
        with kernel_log() as log:
            got = (ls.asarray(A) @ ls.asarray(X)).materialize(fusion="none").todense()
        np.testing.assert_allclose(got, A.toarray() @ X, rtol=_tol(dtype), atol=_tol(dtype))
        (spec, runner), = log
        vt = "ls_vd" if dtype == np.float64 else "ls_vf"
        lines = [ln for ln in runner.source.splitlines() if f"rv{w}[lvb] " in ln and "+=" in ln or f"LS_VFMA_{vt}" in ln and f"rv{w}" in ln]
        assert lines and all((f"LS_VFMA_{vt}" in ln) == (w * isz >= Lowerer.WIDE_FMA) for ln in lines)


def test_row_versions_accumulate_onto_the_result_rows():
    """A reduction that is not the whole statement's (two reductions: the row is loaded once
    and stored once around both)."""
    rng = np.random.default_rng(0)
    T, W = rng.random((3, 4, 5)), rng.random((4, 5, 16))
    got = ls.einsum("ikl,klj->ij", ls.asarray(T), ls.asarray(W)).materialize(fusion="none")
    np.testing.assert_allclose(got.todense(), np.einsum("ikl,klj->ij", T, W), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("K", sorted(set(FusedLowerer.WIDTHS) | {w - 1 for w in FusedLowerer.WIDTHS}))
def test_fused_sums_at_and_around_the_widths(K, dtype):
    rng = np.random.default_rng(K)
    Bs = sp.random(12, 10, density=0.3, format="csr", random_state=K).astype(dtype)
    U, V = _rand(rng, (12, K), dtype), _rand(rng, (10, K), dtype)
    expr = ls.asarray(Bs) * (ls.asarray(U) @ ls.asarray(V).T)
    with kernel_log() as log:
        got = expr.materialize()
    np.testing.assert_allclose(got.todense(), Bs.toarray() * (U @ V.T), rtol=_tol(dtype), atol=_tol(dtype))
    (run,) = log
    assert (f"N_k == {K})" in run.kernel.source) == (K in FusedLowerer.WIDTHS)


def _fused_source(expr, **kw):
    with kernel_log() as log:
        got = expr.materialize(**kw)
    fused = [run for run in log if isinstance(run, FusedRun)]  # (not one operation's kernels)
    assert len(fused) <= 1
    return got, (fused[0].kernel.source if fused else None)


def _layouts(X):
    return {"c": X, "f": np.asfortranarray(X), "reversed cols": X[:, ::-1], "reversed rows": X[::-1]}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["c", "f", "reversed cols", "reversed rows"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("K", FusedLowerer.WIDTHS)
def test_vector_sums_in_every_layout(K, dtype, layout, threads):
    """Innermost dense sums at the fixed widths run as vectors (``vector_sum``) where both
    rows are contiguous, with the row that does not change across the sparse loop loaded
    once before it (``hoist_rows``); other layouts keep the scalar loop. Both against NumPy,
    with an empty row of B and a row of U that is all -0.0 (its sums are +0.0, as NumPy's)."""
    ls.set_num_threads(threads)
    try:
        rng = np.random.default_rng(K)
        B = sp.random(40, 30, density=0.2, format="lil", random_state=K).astype(dtype)
        B[3, :] = 0
        B = B.tocsr()
        U, V = rng.standard_normal((40, K)).astype(dtype), rng.standard_normal((30, K)).astype(dtype)
        U[[5, 34]] = -0.0  # (row 5 of every layout)
        Uv, Vv = _layouts(U)[layout], _layouts(V)[layout]
        got, src = _fused_source(ls.asarray(B) * (ls.asarray(Uv) @ ls.asarray(Vv).T))
        want = B.toarray() * (Uv @ Vv.T)
        np.testing.assert_allclose(got.todense(), want, rtol=_tol(dtype), atol=_tol(dtype))
        assert not np.signbit(got.todense()[5][B.toarray()[5] > 0]).any()
        unit = layout in ("c", "reversed rows")
        if src is None:  # (another loop order for these strides: one kernel, no inner sum)
            assert not unit
            return
        vt = "ls_vd" if dtype == np.float64 else "ls_vf"
        assert ("ls_hsum" in src) == unit
        isz = np.dtype(dtype).itemsize
        hoisted = re.search(rf"{vt} hv\d+\[{K} / \(LS_VB / {isz}\)\]", src) is not None
        assert hoisted == (unit and K * isz <= FusedLowerer.HOIST_BYTES)
        # the widths are dispatched once, outside the loop nest: no width test inside a loop
        body = src[src.index("int32_t ls_kernel"):]
        assert body.index("N_k == 16") < body.index("for (int64_t i")
    finally:
        ls.set_num_threads(1)


@pytest.mark.parametrize("K", [16, 32])
def test_vector_sums_of_other_expressions(K):
    """Differences, quotients, negations and a scalar factor in the summed expression (each
    a vector operation), against NumPy; an integer operand (a cast) keeps the scalar loop."""
    rng = np.random.default_rng(1)
    B = sp.random(25, 20, density=0.3, format="csr", random_state=2)
    U, V = rng.random((25, K)) + 0.5, rng.random((20, K)) + 0.5
    lB, lU, lV = ls.asarray(B), ls.asarray(U), ls.asarray(V)
    cases = [(ls.einsum("ij,ik,jk->ij", lB, lU - 1.5, lV), B.toarray() * ((U - 1.5) @ V.T)),
             (ls.einsum("ij,ik,jk->ij", lB, -lU, lV / 3.0), B.toarray() * ((-U) @ (V / 3.0).T))]
    for expr, want in cases:
        got, src = _fused_source(expr)
        np.testing.assert_allclose(got.todense(), want, rtol=1e-12, atol=1e-12)
        assert "ls_hsum" in src
    Ui = rng.integers(-3, 4, (25, K))
    got, src = _fused_source(ls.asarray(B) * (ls.asarray(Ui) @ lV.T))
    np.testing.assert_allclose(got.todense(), B.toarray() * (Ui @ V.T), rtol=1e-12)
    assert src is None or "ls_hsum" not in src


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("layout", ["c", "f"])
@pytest.mark.parametrize("R", [16, 32, 128, 24])
def test_vector_rows_of_mttkrp(R, layout, dtype):
    """MTTKRP's rows (``t[r] += X[i,k,l] * C[l, r]``, ``o[i, r] += B[k, r] * t[r]``) at the
    fixed widths run as vectors (``vector_rows``) where the factors' rows are contiguous and
    the values are floats; a width between them, column-major factors and integers keep the
    scalar loop. Against NumPy, with an empty slice of X."""
    import sparse as pydata
    rng = np.random.default_rng(R)
    X = pydata.random((12, 9, 7), density=0.15, random_state=R).astype(dtype)
    X = pydata.COO(X.coords[:, X.coords[0] != 4], X.data[X.coords[0] != 4], shape=X.shape)
    B, C = (_layouts(_rand(rng, s, dtype))[layout] for s in ((9, R), (7, R)))
    got, src = _fused_source(ls.einsum("ijk,jr,kr->ir", ls.asarray(X), ls.asarray(B), ls.asarray(C)))
    want = np.einsum("ijk,jr,kr->ir", X.todense(), B, C)
    np.testing.assert_allclose(got.todense(), want, rtol=_tol(dtype), atol=_tol(dtype))
    vt = {np.float64: "*(ls_vd *)&", np.float32: "*(ls_vf *)&"}.get(dtype)
    assert src is not None or layout == "f"
    if src is not None:
        assert (vt is not None and vt in src) == (vt is not None and layout == "c")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("K,J", [(32, 32), (16, 64), (32, 20), (128, 16)])
def test_vector_rows_and_sums_of_gnn2(K, J, threads):
    """GNN-2 ``(A * (X @ Y.T)) @ Z``: a sum over K and a row of J in one nest, each width
    dispatched outside it (two variables: ``versions``), against NumPy."""
    ls.set_num_threads(threads)
    try:
        rng = np.random.default_rng(K + J)
        A = sp.random(50, 40, density=0.15, format="lil", random_state=K)
        A[7, :] = 0
        A = A.tocsr()
        X, Y, Z = rng.random((50, K)), rng.random((40, K)), rng.random((40, J))
        got, src = _fused_source((ls.asarray(A) * (ls.asarray(X) @ ls.asarray(Y).T)) @ ls.asarray(Z))
        np.testing.assert_allclose(got.todense(), (A.toarray() * (X @ Y.T)) @ Z, rtol=1e-12, atol=1e-12)
        body = src[src.index("int32_t ls_kernel"):]
        assert "ls_hsum_vd" in body and "*(ls_vd *)&o[" in body
    finally:
        ls.set_num_threads(1)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("R", [16, 32])
def test_rows_held_across_sparse_loops(R, threads):
    """MTTKRP on a tensor big enough to fuse: its result row and its temporary row are summed
    in vectors across the sparse loops (``hold_rows``: loaded before, stored after), GNN-2's
    result row likewise; both against NumPy, with empty slices and rows. Planning must not
    give up fusion for them (a check that renders a position before its loop is open would)."""
    import sparse as pydata
    ls.set_num_threads(threads)
    try:
        rng = np.random.default_rng(R)
        X = pydata.random((300, 40, 30), density=0.02, random_state=R)
        keep = X.coords[0] % 7 != 3
        X = pydata.COO(X.coords[:, keep], X.data[keep], shape=X.shape)
        B, C = rng.random((40, R)), rng.random((30, R))
        got, src = _fused_source(ls.einsum("ijk,jr,kr->ir", ls.asarray(X), ls.asarray(B), ls.asarray(C)))
        np.testing.assert_allclose(got.todense(), np.einsum("ijk,jr,kr->ir", X.todense(), B, C), rtol=1e-12)
        assert src is not None and len(re.findall(r"ls_vd rh\d+\[16 /", src)) == 2
        A = sp.random(200, 150, density=0.05, format="lil", random_state=R)
        A[9, :] = 0
        A = A.tocsr()
        U, V, Z = rng.random((200, R)), rng.random((150, R)), rng.random((150, R))
        got, src = _fused_source((ls.asarray(A) * (ls.asarray(U) @ ls.asarray(V).T)) @ ls.asarray(Z))
        np.testing.assert_allclose(got.todense(), (A.toarray() * (U @ V.T)) @ Z, rtol=1e-12)
        assert src is not None and re.search(r"ls_vd rh\d+\[16 /", src)
    finally:
        ls.set_num_threads(1)


def test_counting_builds_keep_the_scalar_sums():
    """ls.opcount counts the products of the scalar loop: the same count as before vectors."""
    B = sp.random(30, 30, density=0.1, format="csr", random_state=3)
    rng = np.random.default_rng(3)
    U, V = rng.random((30, 32)), rng.random((30, 32))
    c = ls.opcount(ls.asarray(B) * (ls.asarray(U) @ ls.asarray(V).T))
    assert c["mul"] == B.nnz * 32 + B.nnz


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rows", [0, 1, 3, 4, 9, 17])
@pytest.mark.parametrize("width", [8, 16, 32, 64])
def test_dense_products_run_tiles_of_rows(threads, dtype, rows, width):
    """Rows whose vector rows share the loops below them (``Lowerer.emit_row_tiles``): row
    counts around the tile height (remainder rows run one by one), against NumPy."""
    ls.set_num_threads(threads)
    rng = np.random.default_rng(rows * 100 + width)
    X, W = _rand(rng, (rows, 7), dtype), _rand(rng, (7, width), dtype)
    with kernel_log() as log:
        got = (ls.asarray(X) @ ls.asarray(W)).materialize(fusion="none").todense()
    np.testing.assert_allclose(got, X @ W, rtol=_tol(dtype), atol=_tol(dtype))
    (spec, runner), = log
    # a tile needs two rows' accumulators in 1 KB: 16-wide doubles take four, 64-wide two
    isz = np.dtype(dtype).itemsize
    tiled = {w for w in (*Lowerer.ROW_WIDTHS, 128)
             if (w * isz) % 64 == 0 and 2 * w * isz <= Lowerer.TILE_BYTES}  # vector rows only
    assert ("lrb" in runner.source) == bool(tiled)
    # a tile's products are fused multiply-adds (the target's, under the tile's own #if)
    assert ("= LS_VFMA_" in runner.source) == bool(tiled)
    for w in tiled:
        h = min(Lowerer.ROW_TILE, Lowerer.TILE_BYTES // (w * isz))
        assert f"rv{w}_{h - 1}[" in runner.source and f"rv{w}_{h}[" not in runner.source


def test_a_sparse_operand_on_the_row_index_keeps_rows_apart():
    """SpMM: each row walks its own entries of A, so rows cannot share loops: no tiles."""
    A = sp.random(9, 7, density=0.4, format="csr", random_state=1)
    X = np.random.default_rng(1).random((7, 16))
    with kernel_log() as log:
        got = (ls.asarray(A) @ ls.asarray(X)).materialize(fusion="none").todense()
    np.testing.assert_allclose(got, A @ X, rtol=1e-12)
    (spec, runner), = log
    assert "ls_vd rv16[" in runner.source and "lrb" not in runner.source
