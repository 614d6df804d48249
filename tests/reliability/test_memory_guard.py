"""No dense result or intermediate beyond LAZYSPARSE_MEMORY_LIMIT.

Each test fails if the guard is removed: the limits are set below the arrays' sizes, and the
expected outcome is a MemoryError naming the operation (or, for sparse requests, a result)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.runtime import memory


@pytest.fixture
def operands():
    S = sp.random(300, 200, density=0.05, format="csr", random_state=0)
    X = np.random.default_rng(0).random((200, 300))
    return ls.asarray(S), X, S.toarray()


def test_dense_result_over_the_limit_raises(operands, monkeypatch):
    A, X, Ad = operands
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "100K")  # the result is 300*300*8 = 703 KiB
    with pytest.raises(MemoryError, match=r"materialize: the result of .* dense array of shape \(300, 300\)") as info:
        (A @ X).materialize()
    # the message suggests the way out: a sparse result
    assert "ask for a sparse result" in str(info.value) and "format='csr'" in str(info.value), str(info.value)


def test_warm_plan_is_guarded_too(operands, monkeypatch):
    A, X, Ad = operands
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "none")
    want = Ad @ X
    np.testing.assert_allclose((A @ X).todense(), want)  # plans and binds the kernel
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "100K")
    with pytest.raises(MemoryError, match="LAZYSPARSE_MEMORY_LIMIT"):
        (A @ X).materialize()
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "1G")
    np.testing.assert_allclose((A @ X).todense(), want)
    # the warm path remembers the limit of the text it last read: set again, even to a text
    # seen before, or unset, the variable is read again
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "100K")
    with pytest.raises(MemoryError, match="LAZYSPARSE_MEMORY_LIMIT"):
        (A @ X).materialize()
    monkeypatch.delenv("LAZYSPARSE_MEMORY_LIMIT")
    np.testing.assert_allclose((A @ X).todense(), want)
    monkeypatch.setattr(memory, "_cached", {"default": 1000})
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "")
    with pytest.raises(MemoryError, match="LAZYSPARSE_MEMORY_LIMIT"):
        (A @ X).materialize()


def test_dense_intermediate_is_guarded(operands, monkeypatch):
    A, X, Ad = operands
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "100K")
    with pytest.raises(MemoryError, match="dense array"):
        # one kernel per operation: the 300 x 300 intermediate is dense
        ((A @ X) * 2).sum(axis=0).materialize(fusion="none")
    # fused, the intermediate is one row at a time: well under the limit
    got = ((A @ X) * 2).sum(axis=0).materialize().todense()
    np.testing.assert_allclose(got, ((Ad @ X) * 2).sum(axis=0))


def test_asking_for_a_sparse_format_avoids_the_dense_array(operands, monkeypatch):
    A, X, Ad = operands
    Xs = sp.random(200, 300, density=0.01, format="csr", random_state=1)
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "100K")
    r = (A @ ls.asarray(Xs)).materialize(format="csr")
    assert r.format == "csr"
    np.testing.assert_allclose(r.to_scipy().toarray(), Ad @ Xs.toarray())
    with pytest.raises(MemoryError):  # an explicit dense conversion is a dense result too
        r.todense()


def test_materialize_with_format_keeps_the_value():
    """API.md: a lazy array remembers its materialized value, also when a format was asked for."""
    from lazysparse.compiler.pipeline import kernel_log
    S = sp.random(30, 20, density=0.2, format="csr", random_state=3)
    e = ls.asarray(S) * 2
    with kernel_log() as log:
        r1 = e.materialize(format="coo")
        r2 = e.materialize()
    assert len(log) == 1 and r1.format == "coo"
    np.testing.assert_allclose(r2.todense(), 2 * S.toarray())


def test_small_arrays_and_no_limit(operands, monkeypatch):
    A, _, Ad = operands
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "1K")
    x = np.ones(200)  # 300 * 8 bytes: under the 64 KiB floor of the guard
    np.testing.assert_allclose((A @ x).todense(), Ad @ x)
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "0")
    assert memory.limit() is None


@pytest.mark.parametrize("text,want", [("8G", 8 << 30), ("512m", 512 << 20), ("1024", 1024), ("1.5K", 1536),
                                       ("4GiB", 4 << 30), ("none", None), ("0", None)])
def test_parse_limit(text, want):
    assert memory.parse_limit(text) == want


@pytest.mark.parametrize("text", ["lots", "-1G", "8X", "", "1e9"])
def test_bad_limit_is_a_clear_error(text):
    with pytest.raises(ValueError, match="LAZYSPARSE_MEMORY_LIMIT"):
        memory.parse_limit(text)


def test_default_is_three_quarters_of_the_least_room(monkeypatch):
    # the default is taken once per process: computed afresh here, between two readings of the
    # available memory (which other processes move: a cached default could exceed a later one)
    monkeypatch.delenv("LAZYSPARSE_MEMORY_LIMIT", raising=False)
    monkeypatch.setattr(memory, "_cached", {})
    def room():  # the least of the bounds: memory available, RLIMIT_AS, the cgroup's limit
        return min(b for b in (memory._available(), memory._rlimit_room(), memory._cgroup_room())
                   if b is not None)
    a0 = room()
    lim = memory.limit()
    a1 = room()
    assert lim is not None and 0 < min(a0, a1) * 3 // 4 <= lim <= max(a0, a1) * 3 // 4


def test_sparse_result_positions_over_the_limit_raise(monkeypatch):
    """A sparse result stores one position per point of its dense levels (CSR: per row), however
    few its nonzeros: that array is guarded like a dense result, on the first and warm calls."""
    A = sp.random(300_000, 4, density=0.001, format="csr", random_state=0)
    B = sp.random(300_000, 4, density=0.001, format="csr", random_state=1)
    lA, lB = ls.asarray(A), ls.asarray(B)
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "none")
    np.testing.assert_allclose((lA + lB).to_scipy().toarray(), (A + B).toarray())  # binds the plan
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "1M")  # the row pointer: 300,001 * 4 B = 1.1 MiB
    with pytest.raises(MemoryError, match=r"materialize: the positions over the dense levels .* shape \(300001,\)"):
        (lA + lB).materialize()
    from lazysparse.compiler.pipeline import plan_cache_clear
    plan_cache_clear()  # the planning path checks too
    with pytest.raises(MemoryError, match="LAZYSPARSE_MEMORY_LIMIT"):
        (lA + lB).materialize()
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "2M")
    np.testing.assert_allclose((lA + lB).to_scipy().toarray(), (A + B).toarray())


def _fused(build):
    """``build().materialize()`` under no limit, checking that it ran as one fused kernel."""
    from lazysparse.compiler.pipeline import kernel_log
    from lazysparse.compiler.fused_pipeline import FusedRun
    with kernel_log() as log:
        out = build().materialize()
    assert [type(e) for e in log] == [FusedRun], log
    return out


def test_fused_dense_result_over_the_limit_raises(operands, monkeypatch):
    """A fused plan (here ``(A @ X) * 2``, one kernel) checks its dense result in its own glue
    (compiler/fused_pipeline.py), first and warm call alike."""
    A, X, Ad = operands
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "none")
    np.testing.assert_allclose(_fused(lambda: (A @ X) * 2).todense(), (Ad @ X) * 2)
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "100K")
    for _ in range(2):
        # the message names the node, as the per-operation path does
        with pytest.raises(MemoryError, match=r"^materialize: the result of v\d+: out\[.*\] = .* would be a "
                                              r"dense array of shape \(300, 300\) .*LAZYSPARSE_MEMORY_LIMIT.*format='csr'"):
            ((A @ X) * 2).materialize()


def test_fused_dense_temporary_over_the_limit_raises(monkeypatch):
    """The row of ``A @ X`` a fused ``((A @ X) * 2).sum(axis=1)`` keeps is as wide as X: guarded
    although the result (one value per row) is small."""
    S = sp.random(300, 5, density=0.5, format="csr", random_state=0)
    X = np.random.default_rng(1).random((5, 20000))  # a row of A @ X: 156 KiB
    A = ls.asarray(S)
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "none")
    np.testing.assert_allclose(_fused(lambda: ((A @ X) * 2).sum(axis=1)).todense(),
                               ((S.toarray() @ X) * 2).sum(axis=1))
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "100K")
    with pytest.raises(MemoryError, match=r"^materialize: the temporary v\d+: out\[.*\] = sum_.* of a fused "
                                          r"kernel would be a dense array of shape \(20000,\)"):
        ((A @ X) * 2).sum(axis=1).materialize()


@pytest.mark.parametrize("name,make", [
    ("ones", lambda f: ls.ones((300, 300), format=f)),
    ("zeros", lambda f: ls.zeros((300, 300), format=f)),
    ("eye", lambda f: ls.eye(300, format=f)),
    ("random", lambda f: ls.random((300, 300), density=0.5, format=f, seed=0)),
])
def test_creation_functions_guard_their_dense_arrays(name, make, monkeypatch):
    """A dense array made by a creation function is guarded like any dense result, before
    NumPy allocates it; the same call in a sparse format stays allowed, and under no limit
    the dense one is what NumPy would make."""
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "100K")
    with pytest.raises(MemoryError, match=rf"^{name}: the result would be a dense array of shape "
                                          r"\(300, 300\) .*LAZYSPARSE_MEMORY_LIMIT.*format='csr'"):
        make("dense")
    sparse = make("csr") if name != "ones" else None  # (ones in CSR stores 90,000 entries: allowed)
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "none")
    dense = make("dense").todense()
    expected = {"ones": np.ones((300, 300)), "zeros": np.zeros((300, 300)), "eye": np.eye(300)}.get(name)
    if expected is not None:
        np.testing.assert_array_equal(dense, expected)
        if sparse is not None:
            np.testing.assert_array_equal(sparse.todense(), expected)
    else:
        assert np.count_nonzero(dense) == 45000 and ((dense >= 0) & (dense < 1)).all()
