"""scipy's solvers, eigensolvers and graph algorithms on lazysparse arrays: the linear-operator
protocol (``matvec`` and kin, against NumPy over formats, dtypes, index widths and shapes), scipy's
own functions given lazysparse arrays (the same answers as given scipy's), and
``lazysparse.sparse.linalg`` / ``csgraph``."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as scg
import scipy.sparse.linalg as sla
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
import lazysparse.sparse as lsp
from lazysparse.compiler.pipeline import kernel_log
from tests.oracle import WIDTHS, build


def _spd(n, seed, density=0.15):
    R = sp.random(n, n, density=density, format="csr", random_state=seed)
    return (R @ R.T + 3 * sp.eye(n)).tocsr()


@settings(max_examples=40, deadline=None)
@given(fmt=st.sampled_from(["dense", "csr", "csc", "coo", "dcsr"]), width=st.sampled_from(WIDTHS),
       dtype=st.sampled_from([np.float64, np.float32, np.complex128]), m=st.integers(0, 8),
       n=st.integers(0, 8), k=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_products_of_the_operator_protocol_match_numpy(fmt, width, dtype, m, n, k, seed):
    rng = np.random.default_rng(seed)
    D = rng.random((m, n)) * (rng.random((m, n)) < 0.5)
    if dtype == np.complex128:
        D = D + 1j * D[::-1, ::-1]
    D = D.astype(dtype)
    A = build(D, fmt, width)
    x, y = rng.random(n), rng.random(m)
    X, Y = rng.random((n, k)), rng.random((m, k))
    keep = x.copy()
    for got, want in ((A.matvec(x), D @ x), (A.rmatvec(y), D.conj().T @ y),
                      (A.matmat(X), D @ X), (A.rmatmat(Y), D.conj().T @ Y),
                      (A.matvec(x[:, None]), D @ x[:, None])):
        assert isinstance(got, np.ndarray) and got.flags.writeable
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        got += 1  # (the caller's own array: scipy's solvers update theirs in place)
    np.testing.assert_array_equal(x, keep)


def test_operator_errors_name_the_problem():
    A = ls.asarray(sp.eye(3, format="csr"))
    with pytest.raises(ValueError, match="matvec: dimension mismatch: operator of shape .3, 3. "
                                         "applied to shape .4,."):
        A.matvec(np.ones(4))
    with pytest.raises(ValueError, match="rmatmat: expected a vector or a matrix"):
        A.rmatmat(np.ones((3, 1, 1)))
    with pytest.raises(ValueError, match="matvec: a linear operator is 2-d"):
        ls.asarray(np.ones(3)).matvec(np.ones(3))


@pytest.mark.parametrize("solver", ["cg", "gmres", "minres", "bicgstab", "cgs", "qmr", "lgmres",
                                    "gcrotmk", "tfqmr", "bicg"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "dense"])
def test_scipys_solvers_take_lazysparse_arrays(solver, fmt):
    S = _spd(40, 3)
    A = ls.asarray(S) if fmt != "dense" else ls.asarray(S.toarray())
    A = A.asformat(fmt)
    b = np.random.default_rng(1).random(40)
    fn = getattr(sla, solver)
    want, winfo = fn(S, b, rtol=1e-10)
    with kernel_log() as log:
        got, info = fn(A, b, rtol=1e-10)
    assert info == winfo == 0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    assert log  # (the products ran in lazysparse's kernels)
    np.testing.assert_allclose(S @ got, b, rtol=1e-6, atol=1e-6)


def test_scipys_eigensolvers_take_lazysparse_arrays():
    S = _spd(60, 5)
    A, v0 = ls.asarray(S), np.ones(60)
    np.testing.assert_allclose(np.sort(sla.eigsh(A, k=4, v0=v0)[0]), np.sort(sla.eigsh(S, k=4, v0=v0)[0]))
    np.testing.assert_allclose(np.sort(sla.svds(A, k=3, v0=v0)[1]), np.sort(sla.svds(S, k=3, v0=v0)[1]))
    np.testing.assert_allclose(np.sort(np.abs(sla.eigs(A, k=3, v0=v0)[0])),
                               np.sort(np.abs(sla.eigs(S, k=3, v0=v0)[0])))
    np.testing.assert_allclose(sla.lsqr(A, v0)[0], sla.lsqr(S, v0)[0], rtol=1e-6)


def test_the_namespaces_linalg_matches_scipy():
    S = _spd(30, 7)
    A, b = ls.asarray(S), np.arange(30.0)
    L = lsp.linalg
    X0 = np.random.default_rng(2).random((30, 3))
    np.testing.assert_allclose(np.sort(L.lobpcg(A, X0, largest=True, tol=1e-10, maxiter=300)[0]),
                               np.sort(sla.lobpcg(S, X0, largest=True, tol=1e-10, maxiter=300)[0]),
                               rtol=1e-6)
    np.testing.assert_allclose(np.sort(L.eigsh(A, k=3, sigma=0.5, v0=np.ones(30))[0]),
                               np.sort(sla.eigsh(S, k=3, sigma=0.5, v0=np.ones(30))[0]))
    np.testing.assert_allclose(L.spsolve(A, b), sla.spsolve(S, b))
    np.testing.assert_allclose(L.splu(A.tocsc()).solve(b), sla.splu(S.tocsc()).solve(b))
    inv = L.inv(A.tocsc())
    assert isinstance(inv, ls.Array)
    np.testing.assert_allclose(inv.todense(), sla.inv(S.tocsc()).toarray())
    np.testing.assert_allclose(L.expm_multiply(A * -0.1, b), sla.expm_multiply(S * -0.1, b))
    np.testing.assert_allclose(L.norm(A), sla.norm(S))
    np.testing.assert_allclose(L.norm(A, 1), sla.norm(S, 1))
    x, info = L.cg(A, b, M=ls.asarray(sp.diags(1 / S.diagonal()).tocsr()), rtol=1e-10)
    assert info == 0 and isinstance(x, np.ndarray)
    np.testing.assert_allclose(S @ x, b, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("p", [0, 1, 2, 3, 5])
def test_matrix_power_is_lazysparses_products(p):
    D = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [1.0, 0.0, 0.5]])
    got = lsp.linalg.matrix_power(ls.asarray(sp.csr_array(D)), p)
    np.testing.assert_allclose(got.todense(), np.linalg.matrix_power(D, p))
    with pytest.raises(ValueError, match="matrix_power: exponent must be >= 0"):
        lsp.linalg.matrix_power(ls.asarray(sp.csr_array(D)), -1)
    with pytest.raises(TypeError, match="matrix_power: sparse matrix is not square"):
        lsp.linalg.matrix_power(ls.asarray(np.ones((2, 3))), 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_csgraph_matches_scipy(seed):
    G = sp.random(25, 25, density=0.08, format="csr", random_state=seed)
    A = ls.asarray(G)
    C = lsp.csgraph
    assert C.connected_components(A)[0] == scg.connected_components(G)[0]
    np.testing.assert_array_equal(C.connected_components(A, connection="strong")[1],
                                  scg.connected_components(G, connection="strong")[1])
    np.testing.assert_allclose(C.shortest_path(A, indices=[0, 3]), scg.shortest_path(G, indices=[0, 3]))
    np.testing.assert_array_equal(C.breadth_first_order(A, 0)[0], scg.breadth_first_order(G, 0)[0])
    for got, want in ((C.minimum_spanning_tree(A), scg.minimum_spanning_tree(G)),
                      (C.laplacian(A), scg.laplacian(G))):
        assert isinstance(got, ls.Array)
        np.testing.assert_allclose(got.todense(), want.toarray())


def test_issparse():
    assert lsp.issparse(ls.asarray(sp.eye(3, format="csr")))
    assert lsp.issparse(sp.eye(3, format="csr"))
    assert not lsp.issparse(ls.asarray(np.ones(3)))
    assert not lsp.issparse(np.ones(3))


def test_a_lazy_operator_is_computed_once():
    """A solver applies its operator many times: a lazy one (``I + B @ B.T``) is computed at the
    first product, and every later product is one SpMV on that value, not the whole expression."""
    B = sp.random_array((40, 40), density=0.1, rng=4, format="csr")
    S = (sp.eye_array(40) * 40 + B @ B.T).tocsr()
    lazy = ls.asarray(sp.eye_array(40, format="csr")) * 40 + ls.asarray(B) @ ls.asarray(B).T
    b = np.arange(40.0)
    lazy.matvec(b)
    with kernel_log() as log:
        x, info = sla.cg(lazy, b, rtol=1e-10)
    assert info == 0 and len(log) > 3
    np.testing.assert_allclose(x, sla.spsolve(S.tocsc(), b), rtol=1e-7)
    first = {r.source for _, r in log}
    assert len(first) == 1  # every product ran the same kernel: an SpMV on the computed value
