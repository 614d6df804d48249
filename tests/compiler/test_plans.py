"""``plan_statement``: one statement's plan as a value, made without running or building
anything, and the same plan the run then follows."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.compiler import statement as ST
from lazysparse.compiler.plan import kernel as PL
from lazysparse.runtime import kernel_cache


def _plan(arr):
    n = arr._node
    sts = [c._storage for c in n.children]
    return ST.plan_statement(n.stmt, sts, tuple(PL.operand_spec(s) for s in sts), n.shape)


def _csr(seed, fmt="csr", shape=(30, 20)):
    return ls.asarray(sp.random(*shape, density=0.2, format=fmt, random_state=seed))


def _counts():
    info = kernel_cache.cache_info()
    return info["misses"], info["entries"], info["compiles"]


@pytest.mark.parametrize("case", ["spmv", "relabel", "convert", "sparse-sum"])
def test_plan_runs_nothing_and_the_run_follows_it(case):
    A, B, C = _csr(1), _csr(2, "csc"), _csr(5)
    x = np.arange(20, dtype=np.float64)
    arr, dense = {"spmv": (A @ x, A.todense() @ x), "relabel": (A.T, A.todense().T),
                  "convert": (A * B, A.todense() * B.todense()),
                  "sparse-sum": (A + C, A.todense() + C.todense())}[case]
    before = _counts()
    p = _plan(arr)
    assert _counts() == before  # planning built and loaded no kernel
    assert p.view == (case == "relabel")
    assert bool(p.converted) == (case == "convert")
    if case == "convert":  # B (slot 1) read in A's order: converted to CSR first
        assert [(k, f) for k, f in p.converted] == [(1, ls.csr)]
    if p.spec is not None:
        assert p.stage.decision is p.spec
        with ST.kernel_log() as log:
            out = arr.materialize()
        assert log and log[-1][0] == p.spec  # the run took the plan made beforehand
    else:
        out = arr.materialize()
    np.testing.assert_allclose(np.asarray(out.todense()), np.asarray(dense))


def test_plan_refuses_what_the_run_refuses(monkeypatch):
    """The memory guard refuses at planning time, with the run's message."""
    A = ls.asarray(sp.random(10, 10, density=0.2, format="csr", random_state=3))
    big = ls.asarray(sp.random(1 << 12, 1 << 12, density=1e-5, format="csr", random_state=4))
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "1M")
    with pytest.raises(MemoryError) as planned:
        _plan(big + 1.0)
    with pytest.raises(MemoryError) as ran:
        (big + 1.0).materialize()
    assert str(planned.value) == str(ran.value)
    monkeypatch.delenv("LAZYSPARSE_MEMORY_LIMIT")
    assert _plan(A + 1.0).spec.output.format.is_dense


def _program(arr):
    from lazysparse.compiler.plan.decompose import decompose
    from lazysparse.compiler.fused_pipeline import plan_program
    prog, _, inputs = decompose([arr._node])
    specs = {vid: PL.operand_spec(st) for vid, st in inputs.items()}
    return plan_program(prog, specs, {})


@pytest.mark.parametrize("case", ["sddmm", "chain"])
def test_program_plan_runs_nothing_and_the_run_follows_it(case):
    """A program's plan as a value: where it shares loops (SDDMM does) the run is one fused
    kernel, else one kernel per operation."""
    from lazysparse.compiler.fused_pipeline import FusedRun
    A = _csr(6, shape=(24, 18))
    U = np.random.default_rng(0).random((24, 5))
    V = np.random.default_rng(1).random((18, 5))
    W = np.random.default_rng(2).random((5, 3))
    arr, dense = {"sddmm": (A * (ls.asarray(U) @ ls.asarray(V).T), A.todense() * (U @ V.T)),
                  "chain": ((ls.asarray(U) @ ls.asarray(V).T) @ np.ones((18, 3)) + U @ W,
                            (U @ V.T) @ np.ones((18, 3)) + U @ W)}[case]
    before = _counts()
    pp = _program(arr)
    assert _counts() == before
    if case == "sddmm":
        assert pp.stage is not None and pp.stage.kind == "fused"
    with ST.kernel_log() as log:
        out = arr.materialize()
    assert any(isinstance(e, FusedRun) for e in log) == (pp.stage is not None)
    np.testing.assert_allclose(np.asarray(out.todense()), np.asarray(dense), rtol=1e-12)
