"""``ls.opcount``: executed operation counts from instrumented builds of the kernels that run, for
"auto", "max" and "none", checked against the closed-form counts of each kernel (the cases of
"ReACT: Redundancy-Aware Code Generation for Tensor Expressions", the ReACT paper); the
instrumented source is the normal one plus counting lines."""
from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
import sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.codegen.c import printer as cbackend
from lazysparse.compiler.lower import counting
from lazysparse.compiler.lower.fused import lower_fused
from lazysparse.compiler.plan.decompose import decompose
from lazysparse.compiler.plan.fusion import plan_fusion
from lazysparse.compiler.plan.kernel import operand_spec
from lazysparse.compiler.pipeline import kernel_log

RNG = np.random.default_rng(7)


def _csr(m, n, density, seed=1, empty_row=True):
    A = sp.random(m, n, density=density, format="csr", random_state=seed)
    if empty_row and m > 2:
        A = A.tolil()
        A[1, :] = 0
        A = A.tocsr()
    A.eliminate_zeros()
    return A


def _dense(*shape):
    return RNG.random(shape)


def _d(x):
    """NumPy value of a concrete lazysparse input (the oracle's operand)."""
    return x.todense()


def _matches(expr, want):
    """Every fusion mode gives the dense NumPy oracle's values."""
    for fusion in ("auto", "max", "none"):
        np.testing.assert_allclose(expr.materialize(fusion=fusion).todense(), want, rtol=1e-10, atol=1e-12)


# -- SDDMM and the division TACO rejects -----------------------------------------------------------
@pytest.mark.parametrize("K", [2, 5])
def test_sddmm_multiplies_only_at_the_samples(K):
    Bs = _csr(30, 20, 0.2)
    B, C, D = ls.asarray(Bs), ls.asarray(_dense(30, K)), ls.asarray(_dense(K, 20))
    expr = B * (C @ D)
    c = ls.opcount(expr, names={"B": B, "C": C, "D": D})
    assert c["mul"] == Bs.nnz * K + Bs.nnz
    assert c["add"] == Bs.nnz * K
    assert c["loads"]["B"] == Bs.nnz and c["loads"]["C"] == Bs.nnz * K
    assert c["kernels"] == 1
    # no I x J temporary: every temporary of the fused kernel is one-dimensional
    with kernel_log() as log:
        got = expr.materialize()
    (run,) = log
    assert all(len(kept) <= 1 for kept in run.plan.temp_dims.values())
    assert got.format == B.format
    np.testing.assert_array_equal(got.storage.crd[1], Bs.indices)
    # T is one-dimensional and indexed by position in B's row (the longest row's length)
    assert "temporaries: v2[j] (length of the longest segment of v3, by position in it)" in ls.explain(B * (C @ D))
    np.testing.assert_allclose(got.todense(), Bs.toarray() * (C.todense() @ D.todense()))
    # "none" forms the dense product: I*J*K multiplications, and "max" redoes nothing less
    none = ls.opcount(expr, fusion="none")
    assert none["mul"] == 30 * 20 * K + Bs.nnz
    mx = ls.opcount(expr, fusion="max")
    assert mx["mul"] == 2 * Bs.nnz * K and mx["kernels"] == 1


def test_division_by_a_sampled_product():
    Bs = _csr(25, 15, 0.3)
    B, C, D = ls.asarray(Bs), ls.asarray(_dense(25, 4) + 1), ls.asarray(_dense(4, 15) + 1)
    expr = B / (C @ D)
    c = ls.opcount(expr, names={"B": B})
    assert c["div"] == Bs.nnz and c["mul"] == Bs.nnz * 4 and c["kernels"] == 1
    with kernel_log() as log:
        got = expr.materialize()
    with kernel_log() as log2:
        (B * (C @ D)).materialize()
    assert repr(log[0].plan) == repr(log2[0].plan)  # the SDDMM nest
    dense = Bs.toarray()
    want = np.where(dense != 0, dense / (C.todense() @ D.todense()), 0)
    np.testing.assert_allclose(got.todense(), want)


# -- a factor outside a reduction ------------------------------------------------------------------
def test_a_scalar_factor_outside_a_sum_multiplies_once():
    b, c = ls.asarray(_dense(40)), ls.asarray(np.float64(3.0))
    for expr in (c * ls.sum(b), ls.einsum("i,->", b, c)):
        n = ls.opcount(expr, names={"b": b, "c": c})
        assert n["mul"] == 1 and n["add"] == 40 and n["loads"]["b"] == 40
        assert np.isclose(float(expr.materialize().todense()), 3.0 * b.todense().sum())


def test_a_vector_factor_outside_a_row_sum_multiplies_once_per_row():
    v, Bd = ls.asarray(_dense(12)), ls.asarray(_dense(12, 9))
    expr = ls.einsum("i,ij->i", v, Bd)
    n = ls.opcount(expr, names={"v": v, "B": Bd})
    assert n["mul"] == 12 and n["loads"]["v"] == 12 and n["loads"]["B"] == 12 * 9
    np.testing.assert_allclose(expr.materialize().todense(), v.todense() * Bd.todense().sum(1))
    assert ls.opcount(expr, fusion="none")["mul"] == 12 * 9


# -- a dense element-wise factor outside the k loop ------------------------------------------------
def test_dense_elementwise_factor_is_evaluated_once_per_point():
    I, J, K = 9, 8, 5
    B, E = ls.asarray(_dense(I, J)), ls.asarray(_dense(I, J))
    C, D = ls.asarray(_dense(I, K)), ls.asarray(_dense(K, J))
    expr = (B + E) * (C @ D)
    n = ls.opcount(expr, names={"B": B, "E": E})
    assert n["add"] == I * J + I * J * K and n["mul"] == I * J * K + I * J
    assert n["loads"]["B"] == I * J and n["kernels"] == 1
    with kernel_log() as log:
        expr.materialize()
    (run,) = log
    # the sum's temporary is a row (T_j); B + E is substituted into the final statement
    assert [len(k) for k in run.plan.temp_dims.values()] == [1]
    # the element-wise statement runs after the k loop, inside the i loop
    assert re.fullmatch(r"i\{reset v\d+; k\{j\{S0\}\}; j\{S1\}\}", repr(run.plan)), repr(run.plan)
    assert "add(T" in repr(run.plan.program.ops[1].stmt)
    mx = ls.opcount(expr, names={"B": B}, fusion="max")
    assert mx["loads"]["B"] == I * J * K  # TACO-style: B + E inside the k loop
    _matches(expr, (_d(B) + _d(E)) * (_d(C) @ _d(D)))


# -- contraction chains ----------------------------------------------------------------------------
def test_contraction_chain_costs_two_products_not_a_four_deep_nest():
    I, K, H, J = 7, 6, 5, 4
    B, C, D = ls.asarray(_dense(I, K)), ls.asarray(_dense(K, H)), ls.asarray(_dense(H, J))
    written, other = I * K * H + I * H * J, K * H * J + I * K * J
    n = ls.opcount((B @ C) @ D)
    assert n["mul"] == min(written, other) and n["kernels"] == 2  # association: B @ (C @ D)
    from lazysparse.compiler.fused_pipeline import passes
    with passes("masks", "fusion", "memory"):
        assert ls.opcount((B @ C) @ D)["mul"] == written
    n = ls.opcount(ls.einsum("ik,kh,hj->ij", B, C, D))
    assert n["mul"] <= I * K * H + I * H * J + K * H * J < I * K * H * J
    assert ls.opcount((B @ C) @ D, fusion="max")["mul"] == 2 * I * K * H * J
    _matches(ls.einsum("ik,kh,hj->ij", B, C, D), _d(B) @ _d(C) @ _d(D))


def test_gnn1_costs_nnz_h_plus_i_h_j():
    from lazysparse.compiler.fused_pipeline import passes
    As = _csr(40, 30, 0.1)
    A, X, W = ls.asarray(As), ls.asarray(_dense(30, 6)), ls.asarray(_dense(6, 4))
    with passes("masks", "fusion", "memory"):  # the paper's plan, in the order written
        n = ls.opcount((A @ X) @ W, names={"A": A, "W": W})
        assert n["mul"] == As.nnz * 6 + 40 * 6 * 4 and n["kernels"] == 1
        assert n["loads"]["W"] == 40 * 6 * 4
        with kernel_log() as log:
            ((A @ X) @ W).materialize()
        (run,) = log
        assert [len(k) for k in run.plan.temp_dims.values()] == [1]  # T_h, per row
    # "auto" also orders the chain: A @ (X @ W) costs 30*6*4 + nnz*4, within the bound
    n = ls.opcount((A @ X) @ W, names={"A": A, "W": W})
    assert n["mul"] == 30 * 6 * 4 + As.nnz * 4 < As.nnz * 6 + 40 * 6 * 4
    assert n["loads"]["A"] == As.nnz * 4 and n["kernels"] == 2
    assert ls.opcount((A @ X) @ W, fusion="max")["mul"] == 2 * As.nnz * 6 * 4
    _matches((A @ X) @ W, (As.toarray() @ _d(X)) @ _d(W))


# -- GNN-2 -----------------------------------------------------------------------------------------
def test_gnn2_samples_the_product_and_keeps_a_scalar():
    As = _csr(30, 25, 0.15)
    K = J = 4
    A, X, Y = ls.asarray(As), ls.asarray(_dense(30, K)), ls.asarray(_dense(25, J))
    expr = (A * (X @ Y.T)) @ Y
    n = ls.opcount(expr, names={"A": A})
    assert n["mul"] == As.nnz * K + As.nnz + As.nnz * J  # no nnz*K*J term
    assert n["kernels"] == 1
    with kernel_log() as log:
        expr.materialize()
    assert all(len(k) == 0 for k in log[0].plan.temp_dims.values())  # U is a scalar
    _matches(expr, (As.toarray() * (_d(X) @ _d(Y).T)) @ _d(Y))


# -- MTTKRP ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [3, 4])
def test_mttkrp_multiplies_the_factor_once_per_fiber(order):
    shape = (6, 7, 5, 4)[:order]
    coords = np.unique(RNG.integers(0, shape, size=(80, order)), axis=0).T
    vals = RNG.random(coords.shape[1]) + 0.5
    X = ls.asarray(sparse.COO(coords, vals, shape=shape)).asformat("csf")
    R = 3
    facs = [ls.asarray(_dense(s, R)) for s in shape[1:]]
    sub = "ijkl"[:order] + "," + ",".join(c + "r" for c in "jkl"[:order - 1]) + "->ir"
    expr = ls.einsum(sub, X, *facs)
    n = ls.opcount(expr, names={"X": X, "B": facs[0]})
    fibers = len({tuple(c[:2]) for c in coords.T})
    assert n["loads"]["B"] == fibers * R
    assert n["loads"]["X"] == coords.shape[1] * R
    if order == 3:
        assert n["mul"] == coords.shape[1] * R + fibers * R
    assert ls.opcount(expr, names={"B": facs[0]}, fusion="none")["loads"]["B"] == coords.shape[1] * R
    dense = np.zeros(shape)
    dense[tuple(coords)] = vals
    want = np.einsum(sub, dense, *[f.todense() for f in facs])
    np.testing.assert_allclose(expr.materialize().todense(), want)


# -- the instrumented build is the same kernel -------------------------------------------------
def _strip(src):
    src = src.replace(counting.PRELUDE, "")
    src = re.sub(r"\s*LS_COUNT\(\d+, [^;]*\);", "", src)
    return [ln for ln in src.splitlines() if ln.strip()]


def test_counting_source_is_the_normal_source_plus_counting_lines():
    As = _csr(20, 15, 0.2)
    A, x = ls.asarray(As), ls.asarray(_dense(15))
    B = ls.asarray(_csr(20, 15, 0.3, seed=2))
    with kernel_log() as log:
        ls.opcount(A @ x)
        ls.opcount(A + B)  # (a merge; A + A copies A's structure, counted level by level)
        ls.opcount(A.max(axis=1))
    assert len(log) == 3
    for spec, runner in log:
        twin = runner.counting.source
        assert "LS_COUNT(" in twin
        assert _strip(twin) == _strip(runner.source)
    U, V = _dense(20, 3), _dense(3, 15)
    prog, _, inputs = decompose([(A * (ls.asarray(U) @ ls.asarray(V)))._node])
    specs = {v: operand_spec(s) for v, s in inputs.items()}
    plan = plan_fusion(prog, specs, "auto", {})
    normal = cbackend.emit(lower_fused(plan, specs)[0])
    counted = cbackend.emit(lower_fused(plan, specs, count=True)[0], count=True)
    assert counted != normal and _strip(counted) == _strip(normal)


def test_spmv_and_max_reductions_count_their_folds():
    As = _csr(20, 15, 0.2)
    A, x = ls.asarray(As), ls.asarray(_dense(15))
    n = ls.opcount(A @ x, names={"A": A, "x": x})
    assert n["mul"] == As.nnz and n["add"] == As.nnz and n["loads"] == {"A": As.nnz, "x": As.nnz}
    m = ls.opcount(A.max(axis=1), names={"A": A})
    assert m["loads"]["A"] == As.nnz
    # one comparison per stored entry, plus the implicit zero of each row that is not full
    short = int(np.sum(np.diff(As.indptr) < 15))
    assert m["other"] == As.nnz + short


# -- contract ----------------------------------------------------------------------------------
def test_opcount_leaves_arrays_lazy_and_ignores_earlier_results():
    B, C = ls.asarray(_dense(5, 4)), ls.asarray(_dense(4, 3))
    expr = B @ C
    first = ls.opcount(expr)
    assert expr.is_lazy
    expr.materialize()
    assert ls.opcount(expr) == first
    assert ls.opcount(B) == {"mul": 0, "add": 0, "div": 0, "other": 0, "loads": {},
                             "temp_loads": 0, "kernels": 0}


def test_default_names_follow_the_expression():
    a, b = ls.asarray(_dense(6)), ls.asarray(_dense(6))
    n = ls.opcount(a * b + a)
    assert n["loads"] == {"x0": 6, "x1": 6}  # (a read once a point: tests/compiler/lower/test_equal_accesses.py)
    assert ls.opcount(a * b + a, names={"b": b})["loads"] == {"x0": 6, "b": 6}
    c = ls.asarray(_dense(6))
    assert ls.opcount(a * b + c, names={"b": b})["loads"] == {"x0": 6, "b": 6, "x1": 6}


def test_bad_arguments():
    a = ls.asarray(_dense(3))
    with pytest.raises(ValueError, match="opcount"):
        ls.opcount(a + a, fusion="most")
    with pytest.raises(TypeError, match="opcount"):
        ls.opcount(a + a, names={"a": a + a})
    with pytest.raises(TypeError, match="opcount"):
        ls.opcount(a + a, names={1: a})


@settings(max_examples=30, deadline=None)
@given(m=st.integers(0, 9), n=st.integers(0, 9), k=st.integers(1, 4),
       density=st.sampled_from([0.0, 0.2, 0.6, 1.0]), fmt=st.sampled_from(["csr", "dcsr"]),
       seed=st.integers(0, 999))
def test_sddmm_counts_property(m, n, k, density, fmt, seed):
    rng = np.random.default_rng(seed)
    Bd = (rng.random((m, n)) < density) * rng.random((m, n))
    B = ls.asarray(sp.csr_array(Bd), format=fmt)
    nnz = int(np.count_nonzero(Bd))
    C, D = rng.random((m, k)), rng.random((k, n))
    expr = B * (ls.asarray(C) @ ls.asarray(D))
    c = ls.opcount(expr, names={"B": B})
    assert c["mul"] == nnz * k + nnz
    assert c["loads"].get("B", 0) == nnz
    np.testing.assert_allclose(expr.materialize().todense(), Bd * (C @ D), atol=1e-12)


# -- each pass can be turned off, results stay right -----------------------------------------------
SUBSETS = [(), ("masks",), ("fusion",), ("memory",), ("masks", "fusion"), ("fusion", "memory"),
           ("masks", "memory"), ("masks", "fusion", "memory"), ("association",),
           ("association", "masks", "fusion", "memory")]


@pytest.mark.parametrize("on", SUBSETS)
@pytest.mark.parametrize("kind", ["sddmm", "gnn1", "gnn2", "dense"])
def test_passes_can_be_turned_off(kind, on):
    from lazysparse.compiler.fused_pipeline import passes
    As = _csr(24, 18, 0.2)
    A = ls.asarray(As)
    rng = np.random.default_rng(3)
    Ad = As.toarray()
    if kind == "sddmm":
        U, V = rng.random((24, 4)), rng.random((18, 4))
        make = lambda: A * (ls.asarray(U) @ ls.asarray(V).T)  # noqa: E731
        want = Ad * (U @ V.T)
    elif kind == "gnn1":
        X, W = rng.random((18, 5)), rng.random((5, 3))
        make = lambda: (A @ ls.asarray(X)) @ ls.asarray(W)  # noqa: E731
        want = (Ad @ X) @ W
    elif kind == "gnn2":
        X, Y = rng.random((24, 3)), rng.random((18, 3))
        make = lambda: (A * (ls.asarray(X) @ ls.asarray(Y).T)) @ ls.asarray(Y)  # noqa: E731
        want = (Ad * (X @ Y.T)) @ Y
    else:
        B, E, C, D = (rng.random(s) for s in [(6, 5), (6, 5), (6, 4), (4, 5)])
        make = lambda: (ls.asarray(B) + ls.asarray(E)) * (ls.asarray(C) @ ls.asarray(D))  # noqa: E731
        want = (B + E) * (C @ D)
    with passes(*on):
        np.testing.assert_allclose(make().materialize().todense(), want, rtol=1e-12, atol=1e-14)


def test_without_memory_optimisation_sddmm_keeps_a_full_size_temporary():
    from lazysparse.compiler.fused_pipeline import passes
    Bs = _csr(30, 20, 0.2)
    B, U, V = ls.asarray(Bs), ls.asarray(_dense(30, 4)), ls.asarray(_dense(20, 4))
    assert "temporaries: v2[] (dense, shape ())" in ls.explain(B * (U @ V.T))
    with passes("masks", "fusion"):
        text = ls.explain(B * (U @ V.T))
        assert "temporaries: v2[i, j] (dense, shape (30, 20))" in text
        # the masks still limit the work to B's pattern; without them it is the dense product
        assert ls.opcount(B * (U @ V.T))["mul"] == Bs.nnz * 4 + Bs.nnz
    with passes("fusion"):
        assert ls.opcount(B * (U @ V.T))["mul"] == 30 * 20 * 4 + Bs.nnz
    with pytest.raises(ValueError, match="unknown pass"):
        with passes("tiling"):
            pass


# -- a reduction of extent 1 is fused maximally ----------------------------------------------------
def test_rank_one_sddmm_has_no_temporary():
    Bs = _csr(30, 20, 0.2)
    B, U, V = ls.asarray(Bs), ls.asarray(_dense(30, 1)), ls.asarray(_dense(20, 1))
    n = ls.opcount(B * (U @ V.T))
    assert n["kernels"] == 1 and n["temp_loads"] == 0 and n["mul"] == 2 * Bs.nnz
    text = ls.explain(B * (U @ V.T))
    assert "temporaries" not in text
    assert "multiply(T0[i,j], multiply(T1[i,m1], T2[j,m1]))" in text
    _matches(B * (U @ V.T), Bs.toarray() * (_d(U) @ _d(V).T))
    # K = 2 keeps the temporary
    U2, V2 = ls.asarray(_dense(30, 2)), ls.asarray(_dense(20, 2))
    assert ls.opcount(B * (U2 @ V2.T))["temp_loads"] == Bs.nnz


# -- where(B > 0, C + D, C - D) computes only what is kept -----------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_where_evaluates_only_the_branch_it_keeps(fmt):
    Bs, Cs, Ds = (_csr(40, 30, 0.15, seed=s, empty_row=False) for s in (1, 2, 3))
    B, C, D = (ls.asarray(m, format=fmt) for m in (Bs, Cs, Ds))
    expr = ls.where(B > 0, C + D, C - D)
    n = ls.opcount(expr)
    union = int(np.count_nonzero((Cs.toarray() != 0) | (Ds.toarray() != 0)))
    assert n["kernels"] == 1 and n["temp_loads"] == 0
    assert n["add"] == union  # one of C + D, C - D per point of C or D, never both
    assert ls.opcount(expr, fusion="none")["add"] == 2 * union
    Bd, Cd, Dd = Bs.toarray(), Cs.toarray(), Ds.toarray()
    np.testing.assert_allclose(expr.materialize().todense(), np.where(Bd > 0, Cd + Dd, Cd - Dd))


def test_a_chain_of_additions_is_one_merge():
    mats = [_csr(30, 20, 0.2, seed=s) for s in range(4)]
    A, B, C, D = (ls.asarray(m) for m in mats)
    expr = A + B + C + D
    n = ls.opcount(expr)
    assert n["kernels"] == 1 and n["temp_loads"] == 0
    got = expr.materialize()
    assert got.format == "csr"
    np.testing.assert_allclose(got.todense(), sum(m.toarray() for m in mats))


# -- a plan the fused lowering declines still computes temporaries only where they are needed ----
def test_declined_plans_compute_temporaries_inside_their_masks():
    S1, S2 = _csr(60, 40, 0.05, seed=5), _csr(60, 40, 0.3, seed=6)
    A, B = ls.asarray(S1), ls.asarray(S2)
    U, V = ls.asarray(_dense(60, 6)), ls.asarray(_dense(40, 6))
    both = int(np.count_nonzero((S1.toarray() != 0) & (S2.toarray() != 0)))
    expr = (A * B) * (U @ V.T)  # a loop driven by A ∧ B: two kernels, the product only at A ∧ B
    n = ls.opcount(expr)
    assert n["kernels"] == 2 and n["mul"] <= 2 * both * 6 + 2 * both
    assert ls.opcount(expr, fusion="none")["mul"] >= 60 * 40 * 6
    np.testing.assert_allclose(expr.materialize().todense(),
                               S1.toarray() * S2.toarray() * (U.todense() @ V.todense().T))
    either = int(np.count_nonzero((S1.toarray() != 0) | (S2.toarray() != 0)))
    expr = A * (U @ V.T) + B * (U @ V.T)  # the shared product only at A ∨ B
    n = ls.opcount(expr)
    assert n["mul"] <= either * 6 * 2 + 2 * (S1.nnz + S2.nnz)
    np.testing.assert_allclose(expr.materialize().todense(),
                               (S1.toarray() + S2.toarray()) * (U.todense() @ V.todense().T))


# -- the ReACT paper's Listing 6 at run time: C = A @ B read by E = C * D and G = F / C, computed
# in one ``compute`` call, is formed only on D's and F's patterns ----------------------------------
def _listing6(seed):
    mats = [_csr(40, 30, 0.15, seed), _csr(30, 35, 0.15, seed + 10),
            _csr(40, 35, 0.04, seed + 20), _csr(40, 35, 0.04, seed + 30, empty_row=False)]
    return mats, [m.toarray() for m in mats]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_temporary_is_formed_on_the_union_of_its_readers(seed):
    mats, (a, b, d, f) = _listing6(seed)
    A, B, D, F = (ls.asarray(m) for m in mats)
    C = A @ B
    E, G = C * D, F / C
    paths = (a != 0).astype(np.int64) @ (b != 0).astype(np.int64)  # products per point of C
    need = int(paths[(d != 0) | (f != 0)].sum())
    assert 0 < need < paths.sum()
    n = ls.opcount(E, G)
    # the only additions are C's sums, one per product formed: exactly those at D ∨ F
    assert n["add"] == need and n["kernels"] == 3
    assert n["mul"] <= 2 * need + mats[2].nnz
    assert ls.opcount(E, G, fusion="none")["add"] == paths.sum()  # the unmasked product
    e, g = ls.compute(E, G)
    c = a @ b
    np.testing.assert_allclose(e.todense(), c * d)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(g.todense(), np.where(f != 0, f / c, 0.0))


def test_a_temporary_that_is_also_a_result_is_computed_whole():
    mats, (a, b, d, f) = _listing6(3)
    A, B, D, F = (ls.asarray(m) for m in mats)
    C = A @ B
    n = ls.opcount(C, C * D, F / C)
    assert n["add"] == int(((a != 0).astype(np.int64) @ (b != 0).astype(np.int64)).sum())
    c, e, g = ls.compute(C, C * D, C * F)
    np.testing.assert_allclose(c.todense(), a @ b)
    np.testing.assert_allclose(e.todense(), (a @ b) * d)
    np.testing.assert_allclose(g.todense(), (a @ b) * f)


_OPS6 = [lambda x, y: x * y, lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x @ y.T,
         lambda x, y: x * (x @ y.T), lambda x, y: x * y.sum(axis=1, keepdims=True),
         lambda x, y: (x @ y) @ x]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_OPS6) - 1), st.integers(0, 9), st.integers(0, 9)),
                min_size=2, max_size=6),
       st.integers(1, 3), st.sampled_from(["auto", "max", "none"]), st.integers(0, 9))
def test_several_results_of_one_dag_match_numpy(steps, k, fusion, seed):
    """``compute`` of several results of one random DAG (shared subexpressions, products whose
    readers mask them differently) equals NumPy, under every fusion mode."""
    rng = np.random.default_rng(seed)
    mats = [_csr(7, 7, 0.3, seed), _csr(7, 7, 0.2, seed + 1, empty_row=False), rng.random((7, 7))]
    vals = [ls.asarray(m) for m in mats]
    refs = [m.toarray() if sp.issparse(m) else m for m in mats]
    for kind, i, j in steps:
        x, y = i % len(vals), j % len(vals)
        vals.append(_OPS6[kind](vals[x], vals[y]))
        refs.append(_OPS6[kind](refs[x], refs[y]))
    outs = list(range(3, len(vals)))[-k:]
    refs = [np.asarray(r) for r in refs]
    got = ls.compute(*[vals[o] for o in outs], fusion=fusion)
    for g, o in zip(got, outs):
        np.testing.assert_allclose(np.asarray(g.todense()), refs[o], rtol=1e-10, atol=1e-12)
