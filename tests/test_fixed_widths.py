"""Fixed-width versions of inner loops (``Lowerer.emit_versions``: a result row kept in a
local array across the reductions; ``FusedLowerer.emit_loop``: innermost dense sums): every
width that has a version, and widths next to them, against dense NumPy."""
from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.lower.fused import FusedLowerer
from lazysparse.lower.lowering import Lowerer
from lazysparse.runtime.execute import kernel_log

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
