"""Lazy programs: loops left lazy are computed in regions (compiler/plan/cuts.py), planned in time
linear in their size, hold their values in the formats ``.format`` promised, release what no one
holds, and share the work of results asked for together. Oracle: the same program in NumPy."""
from __future__ import annotations

import gc
import logging
import tracemalloc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.plan import cuts, visits
from lazysparse.compiler.pipeline import kernel_log

N = 7


def _matrix(seed, n=N, density=0.4):
    return sp.random(n, n, density=density, format="csr", random_state=seed) + sp.eye(n, format="csr")


# -- random DAGs with sharing against NumPy --------------------------------------------------
UNARY = [("abs", abs, np.abs), ("neg", lambda x: -x, np.negative), ("half", lambda x: 0.5 * x, lambda x: 0.5 * x)]
BINARY = [("add", lambda a, b: a + b, np.add), ("sub", lambda a, b: a - b, np.subtract),
          ("mul", lambda a, b: a * b, np.multiply)]


@st.composite
def programs(draw):
    """A DAG of depth up to 30 over two vectors and one matrix: each step reads one or two of
    the last four values (fan-out up to 4), so values are shared across steps."""
    steps = []
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["unary", "binary", "matvec"]))
        a = draw(st.integers(1, 4))
        if kind == "unary":
            steps.append((kind, draw(st.integers(0, len(UNARY) - 1)), a, None))
        elif kind == "binary":
            steps.append((kind, draw(st.integers(0, len(BINARY) - 1)), a, draw(st.integers(1, 4))))
        else:
            steps.append((kind, 0, a, None))
    return steps


def _run(steps, A, x, y, mat, ops=(UNARY, BINARY)):
    vals = [x, y]
    for kind, k, a, b in steps:
        u = vals[-min(a, len(vals))]
        if kind == "unary":
            out = ops[0][k](u)
        elif kind == "binary":
            out = ops[1][k](u, vals[-min(b, len(vals))])
        else:
            out = mat(A, u) * 0.25  # (scaled: values stay finite over 30 steps)
        vals.append(out)
    return vals


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(steps=programs(), fusion=st.sampled_from(["auto", "max", "none"]), budget=st.sampled_from([3, 32]))
def test_random_shared_dags_match_numpy_and_keep_their_format(steps, fusion, budget):
    saved, cuts.REGION_BUDGET = cuts.REGION_BUDGET, budget
    try:
        _check_program(steps, fusion)
    finally:
        cuts.REGION_BUDGET = saved


def _check_program(steps, fusion):
    As = _matrix(1)
    rng = np.random.default_rng(2)
    xd, yd = rng.random(N) - 0.5, rng.random(N) - 0.5
    want = _run(steps, As.toarray(), xd, yd, lambda M, v: M @ v,
                ([f for _, _, f in UNARY], [f for _, _, f in BINARY]))[-1]
    got = _run(steps, ls.asarray(As), ls.asarray(xd), ls.asarray(yd), lambda M, v: M @ v,
               ([f for _, f, _ in UNARY], [f for _, f, _ in BINARY]))[-1]
    promised = got.format
    out = got.materialize(fusion=fusion)
    assert out.format == promised  # one format truth
    np.testing.assert_allclose(out.todense(), want, rtol=1e-12, atol=1e-12)


# -- the nonzero bound of a lazy array -------------------------------------------------------
SPARSE_STEPS = [
    ("mul", lambda a, b: a * b, lambda a, b: a * b),
    ("add", lambda a, b: a + b, lambda a, b: a + b),
    ("matmul", lambda a, b: a @ b, lambda a, b: a @ b),
    ("scale", lambda a, b: 2.5 * a, lambda a, b: 2.5 * a),
    ("shift", lambda a, b: a - 1.0, lambda a, b: a - 1.0),
    ("transpose", lambda a, b: a.T * b, lambda a, b: a.T * b),
    ("abs", lambda a, b: abs(a) @ abs(b), lambda a, b: abs(a) @ abs(b)),
]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 9),
       steps=st.lists(st.tuples(st.integers(0, len(SPARSE_STEPS) - 1), st.integers(0, 3), st.integers(0, 3)),
                      min_size=1, max_size=6),
       fmt=st.sampled_from(["csr", "csc", "coo"]))
def test_the_nonzero_bound_holds_for_the_result(seed, n, steps, fmt):
    """``nnz_bound`` of a lazy array, read before anything runs, is at least the nonzeros of its
    result (and its stored entries where it is sparse), and at most its size."""
    rng = np.random.default_rng(seed)
    mats = [sp.random(n, n, density=d, format="csr", random_state=rng.integers(2**31)).toarray()
            for d in (0.0, 0.2, 0.5, 1.0)]
    vals, dense = [ls.asarray(sp.csr_array(m)).asformat(fmt) for m in mats], list(mats)
    for k, a, b in steps:
        _, lazy, ref = SPARSE_STEPS[k]
        vals.append(lazy(vals[-1 - a % len(vals)], vals[-1 - b % len(vals)]))
        dense.append(ref(dense[-1 - a % len(dense)], dense[-1 - b % len(dense)]))
    got = vals[-1]
    bound = got.nnz_bound
    assert bound <= n * n
    out = got.materialize()
    np.testing.assert_allclose(out.todense(), dense[-1], rtol=1e-10, atol=1e-12)
    assert np.count_nonzero(out.todense()) <= bound
    if not out.format.is_dense:
        assert out.nnz <= bound


def test_the_nonzero_bound_follows_the_pattern():
    A = ls.asarray(sp.diags([1.0, 2.0], [0, 1], shape=(6, 6), format="csr"))   # 11 entries
    B = ls.asarray(sp.eye(6, format="csr") * 3)                                  # 6 entries
    assert (A * B).nnz_bound == 6 and (A + B).nnz_bound == 17
    assert (A - 1.0).nnz_bound == 36 and A.sum(axis=1).nnz_bound == 6 and ls.sum(A).nnz_bound == 1
    C = ls.asarray(sp.csr_array(([1.0, 2.0, 3.0], ([0, 2, 4], [1, 1, 5])), shape=(6, 6)))
    D = ls.asarray(sp.csr_array(([1.0, 1.0], ([1, 5], [0, 3])), shape=(6, 6)))
    assert (C @ D).nnz_bound == 6  # (a product's points: at most the entries' pairs)


# -- planning cost linear in the DAG's size --------------------------------------------------
def _jacobi(k, n=50):
    A = sp.random(n, n, density=0.1, format="csr", random_state=3) + sp.eye(n, format="csr") * 4
    LA, b, d = ls.asarray(A.tocsr()), ls.asarray(np.ones(n)), ls.asarray(np.full(n, 0.25))
    x = ls.asarray(np.zeros(n))
    for _ in range(k):
        x = x + d * (b - LA @ x)
    return x, (A.toarray(), np.ones(n), np.full(n, 0.25))


def _visits(k):
    x, _ = _jacobi(k)
    before = visits.planner_visits()
    x.materialize()
    return visits.planner_visits() - before


def test_planner_visits_grow_linearly_with_a_lazy_loop():
    _visits(40)  # (plans the step's region once; later chains find it)
    v50, v200, v800 = _visits(50), _visits(200), _visits(800)
    assert v50 > 0
    # a tree walk of this chain (x is read twice a step) would double per step; quadratic
    # planning would give 16x per 4x steps
    assert v200 <= 4.5 * v50 and v800 <= 4.5 * v200, (v50, v200, v800)


def test_a_long_lazy_loop_matches_numpy_and_reuses_one_plan():
    x, (A, b, d) = _jacobi(120)
    xs = np.zeros(len(b))
    for _ in range(120):
        xs = xs + d * (b - A @ xs)
    with kernel_log() as log:
        got = x.materialize()
    np.testing.assert_allclose(got.todense(), xs, rtol=1e-12)
    sigs = {e.kernel.key for e in log if hasattr(e, "kernel")}
    assert len(log) >= 100 and len(sigs) <= 3  # every step's region is the first step's kernel


@pytest.mark.parametrize("n, per_step", [(cuts.WINDOW_ROWS, True), (64, False)])
def test_steps_of_long_vectors_are_regions_of_their_own(n, per_step):
    """Ten Jacobi steps checked once: over ``WINDOW_ROWS`` rows one kernel a step ("long": the
    first step too, which reads a computed vector of its own shape for each row), under it one
    kernel for the window; the same values either way, and the second window finds its cuts
    without looking again."""
    A = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    lA, b, d = ls.asarray(A), ls.asarray(np.ones(n)), ls.asarray(np.full(n, 0.25))
    x, xs = ls.asarray(np.zeros(n)), np.zeros(n)
    for window in range(2):
        for _ in range(10):
            x = x + d * (b - lA @ x)
            xs = xs + 0.25 * (1.0 - A @ xs)
        if window == 0:  # (explain computes what it explains)
            assert ("long," in ls.explain(x, code=False)) == per_step
        with kernel_log() as log:
            x = x.materialize()
        np.testing.assert_allclose(x.todense(), xs, rtol=1e-12)
        if window == 1:
            assert (len(log) == 10) == per_step


def test_a_repeated_window_replays_its_regions(monkeypatch):
    """Windows of a lazy loop with a scalar new at every step, 0.0, -0.0 and NaN among them (they
    decide some plans otherwise): each window after the first calls its regions' recorded plans
    on its own operands, and every value is NumPy's."""
    from lazysparse.compiler import pipeline
    calls = []
    real = pipeline.replay
    monkeypatch.setattr(pipeline, "replay", lambda *a: calls.append(1) or real(*a))
    n = cuts.WINDOW_ROWS
    A = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    lA, b = ls.asarray(A), ls.asarray(np.ones(n))
    x, xs = ls.asarray(np.zeros(n)), np.zeros(n)
    ws = iter([0.25, 0.5, 0.0, -0.0, np.nan, 0.125, 2.0, -1.0, 0.75, 0.3] * 4)
    for window in range(4):
        for _ in range(10):
            w = next(ws)
            x = x + w * (b - lA @ x) / 4.0
            xs = xs + w * (1.0 - A @ xs) / 4.0
        before = len(calls)
        x = x.materialize()
        np.testing.assert_allclose(x.todense(), xs, rtol=1e-12, equal_nan=True)
        assert (len(calls) - before >= 9) == (window > 0)


def test_a_product_over_a_product_is_not_cut():
    """``A @ (X @ W)`` with ``X @ W`` over ``WINDOW_ROWS`` elements: no earlier step below it, so
    no "long" cut (it would cost a walk a call and change no kernel)."""
    n = cuts.WINDOW_ROWS
    A = ls.asarray(sp.random(n, n, density=1e-3, format="csr", random_state=0))
    X, W = ls.asarray(np.ones((n, 2))), ls.asarray(np.ones((2, 3)))
    assert not cuts.cut_points([(A @ (X @ W))._node])


def test_a_product_over_a_step_is_cut():
    """``A @ (A @ x)``: the inner product reads ``x``, of its own shape, for each of its rows, so
    it is a step of a loop over ``x`` and is computed first ("long"), as every step of a lazy
    loop is; the same values as scipy."""
    n = cuts.WINDOW_ROWS
    S = sp.random(n, n, density=1e-3, format="csr", random_state=0)
    A, x = ls.asarray(S), np.arange(n, dtype=float) % 7
    y = A @ (A @ ls.asarray(x))  # (the inner product held by nothing else)
    inner = next(c._node for c in y._node.children if c._storage is None)
    found = cuts.cut_points([y._node])
    assert [(c.node, c.reason) for c in found] == [(inner, "long")]
    np.testing.assert_allclose(y.todense(), S @ (S @ x), rtol=1e-12)


def test_explain_says_why_a_long_loop_is_cut_and_can_leave_out_the_code():
    x, _ = _jacobi(20)
    text = ls.explain(x, code=False)
    assert "regions:" in text and "whole," in text
    assert "ls_kernel" not in text
    x2, _ = _jacobi(2)
    assert "ls_kernel" in ls.explain(x2)


# -- values the program holds, and values no one holds ---------------------------------------
def test_a_held_value_is_kept_by_the_check_that_computes_it():
    P = ls.asarray(_matrix(5) * 0.1)
    c = ls.asarray(np.full(N, 0.15))
    x = ls.asarray(np.full(N, 1.0 / N))
    xs, Ps = np.full(N, 1.0 / N), (_matrix(5) * 0.1).toarray()
    for _ in range(5):
        x = 0.85 * (P @ x) + c
        xs = 0.85 * (Ps @ xs) + 0.15
        s = float(abs(x).sum())
        assert s == pytest.approx(np.abs(xs).sum(), rel=1e-12)
        assert not x.is_lazy  # kept: the next step reads it instead of computing it again
    U = ls.asarray(np.ones((N, 2)))
    T = U @ U.T  # larger than any operand of the expression below: stays fused
    A = ls.asarray(_matrix(6))
    with kernel_log() as log:
        (A * T).materialize()
    assert T.is_lazy and len(log) == 1


def test_a_long_chain_lets_go_of_its_steps():
    n = 20_000
    rng = np.random.default_rng(7)  # (sp.random samples n * n positions: a minute at this n)
    rows, cols = rng.integers(0, n, 4 * n), rng.integers(0, n, 4 * n)
    A = ls.asarray(sp.csr_array((rng.random(4 * n) * 0.1, (rows, cols)), shape=(n, n)))
    x = ls.asarray(np.ones(n))
    for step in range(60):
        x = 0.5 * (A @ x) + x
        if step == 0:
            first = weakref.ref(x)  # the first step's lazy value: nothing outside the DAG holds it
    x0 = ls.asarray(np.ones(n))

    def each_step():
        y = x0
        for _ in range(60):
            y = (0.5 * (A @ y) + y).materialize()
        return y
    each_step()
    gc.collect()
    tracemalloc.start()
    each_step()
    base = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    y = x0
    for _ in range(60):  # (the same chain again: its regions' plans are replayed)
        y = 0.5 * (A @ y) + y
    tracemalloc.start()
    x.materialize()
    lazy = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    tracemalloc.start()
    y.materialize()
    again = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    vec = n * 8
    assert lazy - base <= 3 * vec, (lazy, base, vec)
    assert again - base <= 3 * vec, (again, base, vec)
    np.testing.assert_array_equal(x.todense(), y.todense())
    gc.collect()
    assert not x.is_lazy
    assert first() is None  # the computed chain let go of it, though its last value lives


# -- joint outputs ---------------------------------------------------------------------------
def test_joint_outputs_compute_a_shared_product_once():
    rng = np.random.default_rng(4)
    As = sp.random(20, 20, density=0.1, format="csr", random_state=0)
    A, U, V = ls.asarray(As), ls.asarray(rng.random((20, 8))), ls.asarray(rng.random((20, 8)))
    S = A * (U @ V.T)
    one = ls.opcount(S)["mul"]
    assert one == As.nnz * 8 + As.nnz
    assert ls.opcount(S.sum(1), S.sum(0))["mul"] == one
    r, c = ls.compute(S.sum(1), S.sum(0))
    Sd = As.toarray() * (U.todense() @ V.todense().T)
    np.testing.assert_allclose(r.todense(), Sd.sum(1), rtol=1e-12)
    np.testing.assert_allclose(c.todense(), Sd.sum(0), rtol=1e-12)


def test_the_lazy_format_is_the_results_through_compute():
    n = 400
    B, A, C, D = (ls.asarray(sp.random(n, n, density=5e-3, format="csr", random_state=s)) for s in range(4))
    y = (B * (C @ D)).sum(axis=1)
    promised = y.format
    _, y2 = ls.compute(A, y)
    assert y2.format == promised
    want = (B.to_scipy() @ sp.eye(n)).multiply(C.to_scipy() @ D.to_scipy()).sum(axis=1)
    np.testing.assert_allclose(y2.todense(), np.asarray(want).ravel(), rtol=1e-12)


# -- saying what happens ---------------------------------------------------------------------
def test_repr_shows_the_expression_abbreviated():
    x, _ = _jacobi(1)
    assert "lazy add(dense, multiply(dense, subtract(dense, sum_" in repr(x)
    long, _ = _jacobi(200)
    assert len(repr(long)) < 200 and "..." in repr(long)


def test_the_logger_reports_plan_compile_and_run_times(caplog):
    rng = np.random.default_rng(8)
    A = ls.asarray(_matrix(9))
    x = ls.asarray(rng.random(N))
    with caplog.at_level(logging.DEBUG, logger="lazysparse"):
        (0.3 * (A @ x) + x * 7.25).materialize()
    text = caplog.text
    assert "plan a fused program" in text and "build a kernel" in text and "compute 1 lazy array" in text


# -- scalars that change every step, and a solver written as a program -----------------------
def test_a_scalar_that_changes_keeps_the_plan_unless_a_decision_changes():
    from lazysparse.compiler import fused_pipeline as F
    As = _matrix(11)
    A, x, y = ls.asarray(As), ls.asarray(np.ones(N)), ls.asarray(np.arange(N) * 1.0)
    sizes = []
    for w in [0.5, 0.25, 3.0, 0.0, -0.0, np.nan, 0.75]:
        got = (x + w * (A @ y) + w).materialize().todense()
        np.testing.assert_allclose(got, 1.0 + w * (As @ np.arange(N)) + w, equal_nan=True)
        sizes.append(sum(len(p) for _, p, _ in F._FAST.values()))
    # 0.5, 0.25 and 3.0 share a plan; 0.0 (f(0, s) = 0: the sum is sparse) and NaN decide otherwise
    assert sizes[1] == sizes[0] and sizes[2] == sizes[0] and sizes[3] > sizes[2]
    assert sizes[6] == sizes[5]


@pytest.mark.parametrize("precondition", [False, True])
def test_cg_matches_scipy(precondition):
    import scipy.sparse.linalg as sla
    rng = np.random.default_rng(12)
    n = 60
    R = sp.random(n, n, density=0.1, format="csr", random_state=5)
    As = (R @ R.T + sp.eye(n) * 2).tocsr()
    b = rng.random(n)
    Ms = sp.diags(1.0 / As.diagonal()).tocsr() if precondition else None
    want, winfo = sla.cg(As, b, rtol=1e-10, M=Ms)
    seen = []
    got, info = ls.linalg.cg(ls.asarray(As), b, rtol=1e-10, callback=seen.append,
                             M=ls.asarray(Ms) if precondition else None)
    assert info == winfo == 0 and seen
    np.testing.assert_allclose(got.todense(), want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(As @ got.todense(), b, rtol=1e-8, atol=1e-8)
    with pytest.raises(ValueError, match="cg: b must have shape"):
        ls.linalg.cg(ls.asarray(As), np.ones(n + 1))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=0, max_size=3),
       dtype=st.sampled_from([np.float64, np.float32, np.int64, np.complex128, np.bool_]))
def test_a_fused_result_is_keyed_as_a_wrap_of_its_array_is(shape, dtype):
    """A fused kernel's new dense result gets its spec and DAG-key part when it is made (no
    lookup of its buffers on the next step): the spec a wrap of the same array gets, and a
    token no other storage holds."""
    from lazysparse.compiler.fused_pipeline import _dense_spec
    from lazysparse.compiler.plan import dag_key
    from lazysparse.compiler.plan.kernel import operand_spec
    from lazysparse.formats import Storage
    from lazysparse.runtime import aligned
    shape = tuple(shape)
    spec = _dense_spec(shape, dtype)
    assert spec is operand_spec(Storage.wrap_dense(aligned.empty(shape, dtype)))
    a, b = (dag_key.fresh(Storage.wrap_dense(aligned.empty(shape, dtype)), spec) for _ in range(2))
    ka, kb = dag_key.leaf_key(a), dag_key.leaf_key(b)
    assert ka[1] == kb[1] == (id(spec), shape, 0) and ka[0] != kb[0]
