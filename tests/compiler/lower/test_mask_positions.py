"""Scattering sums held by a mask (compiler/plan/workspace.py ``mask_access``, assembly mode "mask"):
``M * (A @ B)`` and its kin accumulate each product at M's position, in a copy of M's
structure, and squeeze out the entries left zero. Oracle: dense NumPy."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.pipeline import execute, kernel_log
from oracle import _check_canonical, _modes


def _mat(m, n, density, seed, dtype=np.float64, empty_rows=()):
    rng = np.random.default_rng(seed)
    vals = rng.integers(-3, 4, (m, n)) if np.dtype(dtype).kind in "iu" else rng.standard_normal((m, n))
    D = np.where(rng.random((m, n)) < density, vals, 0).astype(dtype)
    if np.dtype(dtype).kind == "c":
        D = D + 1j * np.where(D != 0, rng.standard_normal((m, n)), 0)
    D[[r for r in empty_rows if r < m], :] = 0
    return sp.csr_matrix(D)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.complex128])
def test_masked_products_take_the_mask_positions_and_match_numpy(dtype):
    A, B = _mat(30, 20, 0.2, 1, dtype, (4,)), _mat(20, 25, 0.2, 2, dtype)
    M = _mat(30, 25, 0.3, 3, dtype, (0, 29))
    a, b, m = ls.asarray(A), ls.asarray(B), ls.asarray(M)
    out, modes = _modes(lambda: (m * (a @ b)).materialize())
    assert modes == ["mask"]
    want = M.toarray() * (A.toarray() @ B.toarray())
    np.testing.assert_allclose(out.todense(), want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    _check_canonical(out.storage, out.shape)
    assert np.all(out.storage.vals != 0)  # mask entries no product reached are not stored


def test_the_self_masked_square_and_the_mask_on_the_right():
    A = _mat(40, 40, 0.1, 5)
    a = ls.asarray(A)
    Ad = A.toarray()
    for fn, want in ((lambda: a * (a @ a), Ad * (Ad @ Ad)), (lambda: (a @ a) * a, (Ad @ Ad) * Ad)):
        out, modes = _modes(lambda: fn().materialize())
        assert modes == ["mask"]
        np.testing.assert_allclose(out.todense(), want, rtol=1e-12)


def test_explain_and_opcount_of_a_masked_product():
    A, M = _mat(20, 20, 0.2, 7), _mat(20, 20, 0.2, 8)
    a, m = ls.asarray(A), ls.asarray(M)
    text = ls.explain(m * (a @ a))
    assert "assembly mask" in text and "accumulate at its positions" in text
    n = ls.opcount(m * (a @ a))
    # one multiply-add per product that lands on a mask entry (M * (A_ik * A_kj): two multiplies)
    Ab = (A != 0).astype(int)
    hits = int(((Ab @ Ab).toarray() * (M.toarray() != 0)).sum())
    assert n["add"] == hits and n["mul"] == 2 * hits


def test_a_forced_policy_still_uses_a_workspace():
    A, M = _mat(25, 25, 0.2, 9), _mat(25, 25, 0.3, 10)
    a, m = ls.asarray(A), ls.asarray(M)
    want = M.toarray() * (A.toarray() @ A.toarray())
    for policy in ("dense", "hash", "bucket"):
        out, modes = _modes(lambda: (m * (a @ a)).materialize(
            schedule=ls.Schedule().workspace(policy, capacity=2)))
        assert f"ws-{policy}" in modes and "mask" not in modes
        np.testing.assert_allclose(out.todense(), want, rtol=1e-12)
    # the masked sum as one statement (a schedule plans each node on its own): forced too
    with kernel_log() as log:
        (m * (a @ a)).materialize()
    spec = log[0][0]
    assert spec.mode == "mask"
    for policy in ("dense", "bucket"):
        with ls.Schedule().workspace(policy, capacity=2).apply():
            st_, modes = _modes(lambda: execute(spec.stmt, [m.storage, a.storage, a.storage],
                                                (25, 25), None, "test"))
        assert modes == [f"ws-{policy}"]
        np.testing.assert_allclose(ls.Array._from_storage(st_).todense(), want, rtol=1e-12)


def test_empty_masks_rows_and_zero_size_axes():
    for shape in ((0, 4, 5), (4, 0, 5), (4, 5, 0), (1, 1, 1)):
        m_, k_, n_ = shape
        A, B, M = sp.csr_matrix((m_, k_)), sp.csr_matrix((k_, n_)), sp.csr_matrix((m_, n_))
        out = (ls.asarray(M) * (ls.asarray(A) @ ls.asarray(B))).materialize()
        assert out.shape == (m_, n_) and out.nnz == 0
    A, B = _mat(10, 10, 0.5, 1), _mat(10, 10, 0.5, 2)
    out = (ls.asarray(sp.csr_matrix((10, 10))) * (ls.asarray(A) @ ls.asarray(B))).materialize()
    assert out.nnz == 0 and out.storage.pos[1][-1] == 0


def test_int64_indices_and_cancellation():
    A = _mat(30, 30, 0.2, 11)
    A.indices, A.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    M = _mat(30, 30, 0.3, 12)
    a, m = ls.asarray(A), ls.asarray(M)
    np.testing.assert_allclose((m * (a @ a)).materialize().todense(),
                               M.toarray() * (A.toarray() @ A.toarray()), rtol=1e-12)
    # products that cancel exactly leave no entry
    P = sp.csr_matrix(np.array([[1.0, 1.0], [0.0, 0.0]]))
    Q = sp.csr_matrix(np.array([[1.0, 0.0], [-1.0, 0.0]]))
    out = (ls.asarray(sp.csr_matrix(np.ones((2, 2)))) * (ls.asarray(P) @ ls.asarray(Q))).materialize()
    assert out.nnz == 0


@settings(max_examples=40, deadline=None)
@given(m=st.integers(0, 9), k=st.integers(0, 9), n=st.integers(0, 9), density=st.floats(0.0, 1.0),
       seed=st.integers(0, 10**6))
def test_masked_products_match_numpy(m, k, n, density, seed):
    A, B, M = _mat(m, k, density, seed), _mat(k, n, density, seed + 1), _mat(m, n, density, seed + 2)
    out = (ls.asarray(M) * (ls.asarray(A) @ ls.asarray(B))).materialize()
    np.testing.assert_allclose(out.todense(), M.toarray() * (A.toarray() @ B.toarray()), rtol=1e-12, atol=1e-12)
    if out.nnz and out.storage.format.is_sparse:
        _check_canonical(out.storage, out.shape)


# -- rows summed densely (coiteration.py emit_row_acc), chosen per operand by measurement ------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("mask_right", [False, True])
def test_rows_summed_densely_and_probed_give_the_same_result(dtype, mask_right):
    # the first calls on new operands alternate the two loops (runtime/tuning.py Flags): every
    # call is checked, so both run, on rows empty in M, in A and in B
    A, B = _mat(40, 30, 0.3, 11, dtype, (2, 7)), _mat(30, 50, 0.3, 12, dtype, (5,))
    M = _mat(40, 50, 0.4, 13, dtype, (0, 9, 39))
    a, b, m = ls.asarray(A), ls.asarray(B), ls.asarray(M)
    expr = (a @ b) * m if mask_right else m * (a @ b)
    assert "summed into a dense row" in ls.explain(expr)
    want = M.toarray() * (A.toarray() @ B.toarray())
    tol = dict(rtol=1e-4) if dtype == np.float32 else dict(rtol=1e-12)
    for _ in range(8):
        out, modes = _modes(lambda: (((a @ b) * m) if mask_right else (m * (a @ b))).materialize())
        assert modes == ["mask"]
        np.testing.assert_allclose(out.todense(), want, **tol)
        _check_canonical(out.storage, out.shape)
        assert np.all(out.storage.vals != 0)


def test_the_measured_choice_is_kept_on_the_operand():
    from lazysparse.runtime import tuning
    A = _mat(200, 200, 0.05, 21)
    a = ls.asarray(A)
    want = A.toarray() * (A.toarray() @ A.toarray())
    n0 = tuning.CHOICES_MADE[0]
    for _ in range(2 * tuning.SAMPLES + 3):
        out, modes = _modes(lambda: (a * (a @ a)).materialize())
        assert modes == ["mask"]
        np.testing.assert_allclose(out.todense(), want, rtol=1e-12)
    if tuning.ENABLED:
        assert tuning.CHOICES_MADE[0] == n0 + 1
        assert any(type(v) is int for v in a.storage.stats.values() if v is not None)


def test_a_mask_of_another_dtype_is_cast_as_the_probe_casts_it():
    A, B = _mat(30, 30, 0.15, 31), _mat(30, 30, 0.15, 32)
    M = _mat(30, 30, 0.3, 33, np.float32)
    a, b, m = ls.asarray(A), ls.asarray(B), ls.asarray(M)
    want = M.toarray().astype(np.float64) * (A.toarray() @ B.toarray())
    for _ in range(8):
        out = (m * (a @ b)).materialize()
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.todense(), want, rtol=1e-12)
