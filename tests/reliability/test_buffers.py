"""Buffers handed out: results are immutable, so what ``to_scipy``, ``todense``, ``np.asarray``
and ``to_pydata`` give back are read-only views of them (a write raises ``ValueError`` instead
of corrupting a result, or crashing a later kernel that trusts its indices); ``np.array``
(NumPy 2's ``copy=True``) gives a writable copy. Arrays wrapped from the caller's buffers without
a copy are handed back as read-only views too, and the caller's own arrays keep their flags.
``asarray(copy=True)`` copies every kind of input. Results are checked against dense NumPy."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
import sparse as pydata

import lazysparse as ls

RNG = np.random.default_rng(7)


def operands():
    S = sp.random(40, 30, density=0.2, format="csr", random_state=3)
    T = sp.random(30, 40, density=0.2, format="csr", random_state=4)
    x = RNG.random(40)
    return S, T, x


def written(arr):
    """What a write into ``arr`` does: None when refused as read-only, else a description."""
    try:
        arr.reshape(-1)[:1] = 1
    except ValueError as e:
        assert "read-only" in str(e), e
        return None
    return "written"


# -- results ------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_to_scipy_of_a_result_is_read_only(fmt):
    S, T, x = operands()
    R = (ls.asarray(S) @ ls.asarray(T)).materialize(format="csr")  # a kernel's sparse result
    want = (S @ T).toarray()
    m = R.to_scipy(fmt)
    arrays = [m.data, m.row, m.col] if fmt == "coo" else [m.data, m.indices, m.indptr]
    for a in arrays:
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 10**9  # (an index past the end: the next kernel on R read outside its arrays)
    np.testing.assert_array_equal(R.todense(), want)
    np.testing.assert_allclose((R @ x).todense(), want @ x, rtol=1e-12)


def test_scipy_methods_work_on_the_read_only_views():
    S, T, x = operands()
    R = (ls.asarray(S) @ ls.asarray(T)).materialize(format="csr")
    D = (S @ T).toarray()
    for fmt in ("csr", "csc", "coo"):
        m = R.to_scipy(fmt)
        np.testing.assert_allclose(m.tocsc().toarray(), D)
        np.testing.assert_allclose(m.tocsr().toarray(), D)
        np.testing.assert_allclose(m.sum(), D.sum())
        np.testing.assert_allclose(m.sum(axis=0), D.sum(axis=0))
        np.testing.assert_allclose(m @ x, D @ x)
        np.testing.assert_allclose((m @ m.T).toarray(), D @ D.T)
        np.testing.assert_allclose((m + m).toarray(), 2 * D)
        np.testing.assert_allclose(m.multiply(m).toarray(), D * D)
        np.testing.assert_allclose(m.T.toarray(), D.T)
        np.testing.assert_allclose(m.max(axis=1).toarray(), D.max(axis=1))
        np.testing.assert_allclose(m.tocsr()[2:5].toarray(), D[2:5])
        m.sum_duplicates()  # (canonical already: nothing to write)
        # a copy is the caller's own, writable
        c = m.copy()
        c.data[:] = 0
        np.testing.assert_array_equal(R.todense(), D)


def test_dense_result_is_read_only_and_np_array_copies():
    S, T, x = operands()
    Xd = RNG.random((30, 5))
    R = (ls.asarray(S) @ Xd).materialize()  # a kernel's dense result
    want = S @ Xd
    for view in (np.asarray(R), R.todense(), R.toarray(), R.__array__()):
        assert written(view) is None
    np.testing.assert_allclose(R.todense(), want, rtol=1e-12)
    # NumPy 2's protocol: np.array asks for a copy (copy=True) and returns it as it is
    c = np.array(R)
    assert c.flags.writeable and not np.shares_memory(c, np.asarray(R))
    c[0, 0] = -1.0
    c2 = R.__array__(copy=True)
    assert c2.flags.writeable and not np.shares_memory(c2, np.asarray(R))
    c3 = R.__array__(np.float32, copy=None)  # a cast is a new array of the caller's
    assert c3.dtype == np.float32 and c3.flags.writeable
    with pytest.raises(ValueError, match="copy=False"):
        R.__array__(np.float32, copy=False)
    assert np.shares_memory(R.__array__(copy=False), np.asarray(R))  # a view needs no copy
    np.testing.assert_allclose((R.T @ np.ones(40)).todense(), want.T @ np.ones(40), rtol=1e-12)
    np.testing.assert_allclose(R.todense(), want, rtol=1e-12)


def test_sparse_to_dense_by_asarray_needs_a_copy(monkeypatch):
    S, _, _ = operands()
    monkeypatch.setenv("LAZYSPARSE_AUTO_DENSIFY", "1")
    A = ls.asarray(S)
    with pytest.raises(ValueError, match="copy=False"):
        A.__array__(copy=False)
    np.testing.assert_array_equal(np.array(A), S.toarray())
    assert np.array(A).flags.writeable


def test_to_pydata_is_read_only_and_works():
    S, T, x = operands()
    R = (ls.asarray(S) @ ls.asarray(T)).materialize(format="csr")
    D = (S @ T).toarray()
    g = R.to_pydata()
    for a in (g.data, g.indices, g.indptr):
        assert written(a) is None
    np.testing.assert_allclose(g.todense(), D)
    np.testing.assert_allclose(g @ x, D @ x)
    np.testing.assert_allclose(g.tocoo().sum(axis=0).todense(), D.sum(axis=0))
    R3 = ls.random((3, 4, 5), density=0.3, format="coo", seed=0) * 2
    p = R3.to_pydata()
    assert written(p.data) is None
    np.testing.assert_allclose((p * 3).todense(), R3.todense() * 3)
    np.testing.assert_allclose(p.T.todense(), R3.todense().T)


def test_a_write_through_to_scipy_cannot_crash_a_later_kernel():
    """The crash the read-only views prevent, in a child process (a segfault is a failed test)."""
    code = """
    import numpy as np, scipy.sparse as sp, lazysparse as ls
    S = sp.random(40, 30, density=0.2, format="csr", random_state=3)
    R = (ls.asarray(S) * 2).materialize()
    try:
        R.to_scipy().indices[0] = 10**9
    except ValueError as e:
        assert "read-only" in str(e)
    x = np.ones(30)
    np.testing.assert_allclose((R @ x).todense(), 2 * S.toarray() @ x)
    print("OK")
    """
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "OK", (r.returncode, r.stdout, r.stderr[-3000:])


# -- the caller's own buffers ---------------------------------------------------------------------
def test_zero_copy_input_handed_back_as_a_read_only_view_flags_untouched():
    u = RNG.random((4, 3))
    a = ls.asarray(u)
    t = a.todense()
    assert np.shares_memory(t, u) and not t.flags.writeable  # zero-copy, read-only view
    assert u.flags.writeable  # the caller's array keeps its flags
    S, _, _ = operands()
    m = ls.asarray(S).to_scipy()
    for mine, theirs in ((m.data, S.data), (m.indices, S.indices), (m.indptr, S.indptr)):
        assert np.shares_memory(mine, theirs) and not mine.flags.writeable
        assert theirs.flags.writeable
    # the caller may still write their own array (at their own risk: docs/guide.md)
    u[0, 0] = 5.0
    assert a.todense()[0, 0] == 5.0


# -- asarray(copy=True) ---------------------------------------------------------------------------
def _inputs():
    D = np.where(RNG.random((6, 5)) < 0.4, RNG.random((6, 5)), 0.0)
    S = sp.csr_array(D)
    return D, {
        "dense": D.copy(),
        "csr": S.copy(),
        "csc": S.tocsc(),
        "coo": S.tocoo(),
        "csr-matrix": sp.csr_matrix(D),
        "pydata-coo": pydata.COO.from_numpy(D),
        "pydata-gcxs": pydata.GCXS.from_numpy(D, compressed_axes=(0,)),
    }


def _buffers(obj):
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, pydata.COO):
        return [obj.coords, obj.data]
    if isinstance(obj, pydata.GCXS):
        return [obj.data, obj.indices, obj.indptr]
    if obj.format == "coo":
        return [obj.data, *obj.coords]
    return [obj.data, obj.indices, obj.indptr]


@pytest.mark.parametrize("kind", list(_inputs()[1]))
def test_asarray_copy_true_shares_nothing_with_the_input(kind):
    D, inputs = _inputs()
    obj = inputs[kind]
    a = ls.asarray(obj, copy=True)
    st = a.storage
    ours = [b for b in st.pos + st.crd + [st.vals] if b is not None]
    for mine in ours:
        for theirs in _buffers(obj):
            assert not np.shares_memory(mine, theirs), kind
    for theirs in _buffers(obj):  # the caller changes their input afterwards
        theirs[...] = -1.0 if theirs.dtype.kind == "f" else 0
    np.testing.assert_array_equal(a.todense(), D)
    np.testing.assert_allclose((a @ np.ones(5)).todense(), D @ np.ones(5))
