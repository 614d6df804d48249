"""The fusion planner's passes ("ReACT: Redundancy-Aware Code Generation for Tensor Expressions",
the ReACT paper): decomposition, sparse iteration-space propagation, legality, trie fusion and
dimension reduction, checked on the structure they produce. (Executed operation counts come with the
fused kernels: ``ls.opcount``.)

Trees print as ``i{reset T; k{j∈B{S0}}; j∈B{S1}}``: a loop per variable, ``∈B`` when it walks
B's sparse level, ``S<n>`` the n-th operation of the decomposed program.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
import sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.decompose import decompose
from lazysparse.compiler.plan.fusion import Compute, Loop, Reset, plan_fusion, show
from lazysparse.compiler.plan.kernel import operand_spec
from lazysparse.compiler.plan.program import INPUT


def _plan(out, names, mode="auto"):
    """The fused plan of the lazy arrays ``out`` and display names for its values: ``names``
    maps each name to a concrete lazysparse array (an input) or to a lazy array (the value
    that computes it)."""
    outs = out if isinstance(out, (list, tuple)) else [out]
    prog, node_value, inputs = decompose([a._node for a in outs])
    specs = {vid: operand_spec(stg) for vid, stg in inputs.items()}
    disp = {}
    for name, arr in names.items():
        if arr._node is None:
            disp.update({vid: name for vid, stg in inputs.items() if stg is arr._storage})
        else:
            disp[node_value[id(arr._node)]] = name
    plan = plan_fusion(prog, specs, mode)
    return plan, disp


def _tree(plan, disp):
    return show(plan.tree, plan.program, disp)


def _ops(plan, pred):
    return [k for k, op in enumerate(plan.program.ops) if pred(op)]


def _csr(m, n, density=0.2, seed=0):
    return ls.asarray(sp.random(m, n, density=density, format="csr", random_state=seed))


def _dense(*shape, seed=0):
    return ls.asarray(np.random.default_rng(seed).random(shape))


def _temp_of(plan, k):
    return plan.program.ops[k].out


# -- SDDMM and the expression TACO rejects ---------------------------------------------------------
@pytest.mark.parametrize("op", ["multiply", "divide"])
def test_sddmm_nest(op):
    """A_ij = B_ij .* Σ_k C_ik D_kj (and B ./ ...): the dot products only at B's nonzeros,
    i{reset T; k{j∈B}; j∈B}, a 1-D temporary over j, the result in B's pattern."""
    B, C, D = _csr(40, 50), _dense(40, 8), _dense(8, 50)
    CD = C @ D
    A = B * CD if op == "multiply" else B / CD
    plan, names = _plan(A, dict(B=B, C=C, D=D, T=CD))
    assert _tree(plan, names) == "i{reset T; k{j∈B{S0}}; j∈B{S1}}"
    t = _temp_of(plan, 0)
    assert plan.temp_dims[t] == (plan.program.ops[1].stmt.out_indices[1],)  # T_j, not T_ij
    # the producer is needed only at B's pattern (dead values removed)
    assert {k[0] for term in plan.masks[t] for k in term} == {names_inv(names, "B")}


def names_inv(names, name):
    return next(v for v, n in names.items() if n == name)


def test_sddmm_einsum_is_split_and_fused():
    """One einsum: the reduction is pushed in (B_ij leaves the k loop), then fused the same way."""
    B, C, D = _csr(40, 50), _dense(40, 8), _dense(8, 50)
    plan, names = _plan(ls.einsum("ij,ik,kj->ij", B, C, D), dict(B=B, C=C, D=D))
    assert len(plan.program.ops) == 2
    s0, s1 = plan.program.ops
    assert s0.stmt.reduce_indices and not s1.stmt.reduce_indices  # Σ_k C D, then B .* T
    assert _tree(plan, {**names, s0.out: "T"}) == "i{reset T; k{j∈B{S0}}; j∈B{S1}}"


def test_sddmm_with_row_major_factors_gives_a_scalar_temporary():
    """B .* (U @ V.T) with V stored (J, K): dot products over contiguous rows, so the loop order
    is i, j∈B, k and the temporary is a scalar per nonzero."""
    B, U, V = _csr(40, 50), _dense(40, 8), _dense(50, 8)
    UV = U @ V.T
    plan, names = _plan(B * UV, dict(B=B, U=U, V=V, T=UV))
    assert _tree(plan, names) == "i{j∈B{reset T; k{S0}; S1}}"
    assert plan.temp_dims[_temp_of(plan, 0)] == ()


# -- reduction redundancy --------------------------------------------------------------------------
def test_factor_outside_a_reduction_is_applied_once():
    """A_i = C_i * Σ_j B_ij: one multiplication per i (the product leaves the j loop)."""
    B, C = _dense(30, 20), _dense(30)
    plan, _ = _plan(ls.einsum("i,ij->i", C, B), {})
    mults = _ops(plan, lambda op: "multiply" in repr(op.stmt))
    assert len(mults) == 1 and not plan.program.ops[mults[0]].stmt.reduce_indices
    # scalar: a = c * Σ_i B_i
    b, c = _dense(30), ls.asarray(np.float64(3.0))
    plan, _ = _plan(c * ls.sum(b), {})
    assert [bool(op.stmt.reduce_indices) for op in plan.program.ops] == [True, False]


# -- loop-invariant redundancy ---------------------------------------------------------------------
def test_dense_loop_invariant_sum_is_hoisted():
    """Dense (B + E) .* Σ_k C_ik D_kj: B + E once per (i, j), the k loop before the element-wise
    loop, a 1-D temporary for the sum and a scalar for B + E."""
    B, E, C, D = _dense(20, 30), _dense(20, 30, seed=1), _dense(20, 6), _dense(6, 30)
    BE, CD = B + E, C @ D
    plan, names = _plan(BE * CD, dict(BE=BE, CD=CD))
    s_be = next(k for k, op in enumerate(plan.program.ops) if "add" in repr(op.stmt))
    s_cd = next(k for k, op in enumerate(plan.program.ops) if op.stmt.reduce_indices)
    s_out = next(k for k, op in enumerate(plan.program.ops) if op.out in plan.program.outputs)
    assert _tree(plan, names) == f"i{{reset CD; k{{j{{S{s_cd}}}}}; j{{S{s_be}; S{s_out}}}}}"
    assert len(plan.temp_dims[names_inv(names, "CD")]) == 1 and plan.temp_dims[names_inv(names, "BE")] == ()


# -- chains of contractions ------------------------------------------------------------------------
def _depth(nodes):
    return max((1 + _depth(n.body) if isinstance(n, Loop) else 0) for n in nodes) if nodes else 0


def test_contraction_chain_is_not_a_four_deep_nest():
    """Σ_h (Σ_k B_ik C_kh) D_hj: two 3-deep nests under a shared i, T[i, h] becomes T[h]."""
    B, C, D = _dense(10, 12), _dense(12, 14), _dense(14, 16)
    BC = B @ C
    plan, names = _plan(BC @ D, dict(T=BC))
    assert _depth(plan.tree) == 3
    assert len(plan.temp_dims[names_inv(names, "T")]) == 1


def test_gnn1_has_a_per_row_temporary():
    """GNN-1 (A X) W: i{reset T; k∈A{h{S0}}; h{j{S1}}}: O(nnz·H + I·H·J), T_h per row."""
    A, X, W = _csr(60, 60, 0.1), _dense(60, 16), _dense(16, 4)
    AX = A @ X
    plan, names = _plan(AX @ W, dict(A=A, T=AX))
    tree = _tree(plan, names)
    assert tree.startswith("i{reset T; ") and "∈A{" in tree
    assert _depth(plan.tree) == 3
    assert len(plan.temp_dims[names_inv(names, "T")]) == 1


# -- GNN-2 -----------------------------------------------------------------------------------------
def test_gnn2_fuses_the_sampled_product_with_the_spmm():
    """(A .* (X Yᵀ)) Y: X Yᵀ only at A's nonzeros; the element-wise product and the SpMM share
    the loop over A's row, so U = A .* T is a scalar; no nest is nnz·K·J deep."""
    A, X, Y = _csr(60, 60, 0.1), _dense(60, 8), _dense(60, 8, seed=1)
    T = X @ Y.T
    U = A * T
    plan, names = _plan(U @ Y, dict(A=A, T=T, U=U))
    assert plan.temp_dims[names_inv(names, "U")] == ()
    assert plan.temp_dims[names_inv(names, "T")] == ()
    tree = _tree(plan, names)
    assert tree.count("∈A") == 1  # one walk over A's rows feeds all three operations
    assert _depth(plan.tree) == 3


# -- MTTKRP ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", [3, 4])
def test_mttkrp_multiplies_the_factor_once_per_fiber(order):
    """A_ir = Σ_{j,k} X_ijk C_kr B_jr (X CSF): T_r reset per (i, j) fiber; B_jr is multiplied
    in a nest of (i, j, r) only, not once per nonzero."""
    shape = (6, 7, 8, 5)[:order]
    X = ls.asarray(sparse.random(shape, density=0.2, random_state=0)).asformat("csf")
    mats = [_dense(shape[m], 4, seed=m) for m in range(1, order)]
    subs = "ijkl"[:order]
    spec = f"{subs}," + ",".join(f"{c}r" for c in subs[1:]) + "->ir"
    plan, names = _plan(ls.einsum(spec, X, *mats), dict(X=X))
    last = plan.program.ops[-1]
    assert len(last.stmt.accesses) == 2 and last.stmt.reduce_indices  # Σ_j B_jr T_ijr
    # the final op sits in a nest as deep as (i, j, r): a loop per variable of B_jr T_r
    paths = {}

    def walk(nodes, d):
        for n in nodes:
            if isinstance(n, Compute):
                paths[n.op] = d
            elif isinstance(n, Loop):
                walk(n.body, d + 1)
    walk(plan.tree, 0)
    assert paths[len(plan.program.ops) - 1] == 3
    t = plan.program.ops[-1].args[[a.operand for a in last.stmt.accesses if
                                   plan.program.values[last.args[a.operand]].kind != INPUT][0]]
    assert len(plan.temp_dims[t]) == 1  # T_r
    assert re.match(r"i∈X\{\w∈X\{reset ", _tree(plan, names))  # reset per (i, j) fiber


# -- masks from several consumers (the paper's Listing 6) ------------------------------------------
def test_mask_is_the_union_of_the_consumers_needs():
    A, B = _csr(30, 20, seed=1), _csr(20, 25, seed=2)
    D, F = _csr(30, 25, seed=3), _csr(30, 25, seed=4)
    C = A @ B
    E, G = C * D, F / C
    plan, names = _plan([E, G], dict(A=A, B=B, C=C, D=D, F=F))
    mask = plan.masks[names_inv(names, "C")]
    assert {frozenset(names[k[0]] for k in t) for t in mask} == {frozenset("D"), frozenset("F")}
    # an addition needs its operand everywhere
    plan, names = _plan(C + D, dict(C=C))
    assert plan.masks[names_inv(names, "C")] == P.TRUE


# -- legality --------------------------------------------------------------------------------------
def test_a_reduced_value_is_not_fused_with_its_readers():
    """a = Σ_i B_i; C_i = B_i / a: the i loops are not fused (the sum must finish first)."""
    b = _dense(30)
    plan, _ = _plan(b / ls.sum(b), {})
    assert _tree(plan, {}) == "reset v1; j{S0}; i{S1}"


def test_a_dot_product_and_its_scaled_reader_are_not_fused():
    """a = Σ_i A_i B_i; c = b / a; D_i = c * A_i (the paper's Listing 9): the sum and the scaling
    by c stay in separate loops."""
    a, b = _dense(30), _dense(30, seed=1)
    s = ls.asarray(np.float64(2.0))
    c = s / (a * b).sum()
    plan, _ = _plan(c * a, {})
    top = [n for n in plan.tree if isinstance(n, Loop)]
    assert len(top) == 2


def test_a_loop_is_not_shared_with_a_reader_that_wants_the_whole_row():
    """T_ij = A_ij * A_ij and sum_k T_ik D_jk both loop over j (A's row), but the reader wants
    T's whole row i at every j: sharing the j loop read points not yet written. Found by the
    several-results property test (wrong values in 13 of 49 entries); also the sparsified row
    of T was read at the j loop's position for the subscript k."""
    A = sp.random(7, 7, density=0.3, format="csr", random_state=0)
    D = np.random.default_rng(0).random((7, 7))
    a, d = ls.asarray(A), ls.asarray(D)
    t = a * a
    plan, disp = _plan(t * (t @ d.T), {"T": t})
    tree = _tree(plan, disp)
    # the writer of T sits in a j loop of its own, before the loop that reads its row
    assert re.fullmatch(r"i\{j∈\w+\{S0\}; j∈\w+\{.*S1.*S2\}\}", tree), tree
    ref = (A.toarray() ** 2) * ((A.toarray() ** 2) @ D.T)
    for fusion in ("auto", "max", "none"):
        np.testing.assert_allclose((t * (t @ d.T)).materialize(fusion=fusion).todense(), ref, rtol=1e-13)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=8),
       st.integers(0, 3))
def test_fused_trees_respect_every_dependence(steps, seed):
    """Random DAGs of element-wise ops, row/column sums and products: every op appears once,
    after every op it reads (no cycle, groups placed after all their members' predecessors)."""
    vals = [_dense(5, 6, seed=seed), ls.asarray(sp.random(5, 6, density=0.4, format="csr", random_state=seed)),
            _dense(6, 5, seed=seed + 1)]
    vals[2] = vals[2].T
    for kind, a, b in steps:
        x, y = vals[a % len(vals)], vals[b % len(vals)]
        if kind == 0:
            vals.append(x * y)
        elif kind == 1:
            vals.append(x + y)
        elif kind == 2:
            vals.append(x * x.sum(axis=1, keepdims=True))
        else:
            vals.append(x / (y.sum() + 1.0))
    outs = [v for v in vals[3:] if v._node is not None][-2:]
    if not outs:
        return
    plan, _ = _plan(outs, {})
    seq = []

    def walk(nodes):
        for n in nodes:
            if isinstance(n, Compute):
                seq.append(n.op)
            elif isinstance(n, Loop):
                walk(n.body)
    walk(plan.tree)
    assert sorted(seq) == list(range(len(plan.program.ops)))
    pos = {k: i for i, k in enumerate(seq)}
    writer = {op.out: k for k, op in enumerate(plan.program.ops)}
    for k, op in enumerate(plan.program.ops):
        for v in op.args:
            if v in writer:
                assert pos[writer[v]] < pos[k]


# -- fusion modes ----------------------------------------------------------------------------------
def test_no_fusion_keeps_one_nest_per_operation():
    B, C, D = _csr(40, 50), _dense(40, 8), _dense(8, 50)
    plan, _ = _plan(B * (C @ D), {}, mode="none")
    assert all(isinstance(n, (Loop, Reset)) for n in plan.tree)
    assert len([n for n in plan.tree if isinstance(n, Loop)]) == 2


def test_decomposition_shares_common_subexpressions():
    B, C = _dense(10, 10), _dense(10, 10, seed=1)
    s = B + C
    plan, _ = _plan([s * 2.0, (B + C) * 3.0], {})
    adds = _ops(plan, lambda op: "add(" in repr(op.stmt))
    assert len(adds) == 1
