"""The provenance graph of index variables (lazysparse/ir/provenance.py; "A Sparse Iteration Space
Transformation Framework for Sparse Tensor Algebra", the scheduling paper): coordinate recovery
round-trips for split down/up, fuse, pos and bound, the bounds of the paper's Fig. 19 visit every
original point exactly once, and guards appear only where no bound proves a split divides its
range. Oracle: the points themselves, enumerated."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lazysparse.ir.provenance import Bound, Fuse, Lit, Pos, Provenance, ProvenanceError, Split, evaluate, ext, render


def _csr(m, n, seed, empty=(1, 4)):
    rng = np.random.default_rng(seed)
    D = np.where(rng.random((m, n)) < 0.3, 1.0, 0.0)
    D[[r for r in empty if r < m], :] = 0
    B = sp.csr_matrix(D)
    return B, {"B_pos": B.indptr.tolist(), "B_crd": B.indices.tolist()}


def _points(g, env0, arrays=None):
    """Every point the leaves' loops visit (bounds evaluated in ``env0``), as the tuple of the
    roots it recovers; points a guard would skip (a split parent at or past its range) are
    dropped, as the guard does."""
    b = g.bounds()
    leaves = g.leaves
    ranges = [range(evaluate(b[v][0], env0, arrays), evaluate(b[v][1], env0, arrays)) for v in leaves]
    out = []
    for vals in itertools.product(*ranges):
        env = dict(env0, **dict(zip(leaves, vals)))
        ok = True
        for r in g.guarded():
            if evaluate(g.recover_original(r.parent), env, arrays) >= evaluate(b[r.parent][1], env0, arrays):
                ok = False
        if ok:
            out.append(tuple(evaluate(g.recover_original(v), env, arrays) for v in g.roots))
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 9), st.booleans())
def test_split_visits_every_point_once_and_round_trips(n, s, up):
    g = Provenance(("i",)).derive(Split("i", "i0", "i1", s, up=up))
    env = {"N_i": n}
    assert sorted(_points(g, env)) == [(i,) for i in range(n)]
    for i in range(n):  # recover_derived, then recover_original: the identity
        e = dict(env, i=i)
        e.update(i0=evaluate(g.recover_derived("i0"), e), i1=evaluate(g.recover_derived("i1"), e))
        assert evaluate(g.recover_original("i"), e) == i
    assert g.guarded()  # nothing proves s divides n


def test_fuse_round_trips_and_keeps_the_order():
    g = Provenance(("i", "j")).derive(Fuse("i", "j", "f"))
    env = {"N_i": 5, "N_j": 7}
    pts = _points(g, env)
    assert pts == [(i, j) for i in range(5) for j in range(7)]  # order unchanged
    for i, j in pts:
        f = evaluate(g.recover_derived("f"), dict(env, i=i, j=j))
        assert (evaluate(g.recover_original("i"), dict(env, f=f)),
                evaluate(g.recover_original("j"), dict(env, f=f))) == (i, j)


def test_pos_of_one_level_round_trips_within_a_row():
    B, arrays = _csr(6, 9, 1)
    g = Provenance(("j",)).derive(Pos("j", "p", "B"))
    assert g.is_position("p") and not g.is_position("j")
    for r in range(6):
        lo, hi = B.indptr[r], B.indptr[r + 1]
        for j in B.indices[lo:hi]:
            env = {"j": int(j), "B_lo": int(lo), "B_hi": int(hi)}
            p = evaluate(g.recover_derived("p"), env, arrays)
            assert lo <= p < hi and evaluate(g.recover_original("j"), {"p": p}, arrays) == j


@pytest.mark.parametrize("tile", [1, 3, 16])
def test_fuse_pos_split_visits_every_stored_entry_once(tile):
    # a.collapse(i, j, f).pos(f, p, B(i,j)).split(p, p0, p1, Down, 16): tiles of nonzeros, the
    # row recovered by a search of B_pos (empty rows skipped), nnz not a multiple of the tile
    B, arrays = _csr(9, 11, 2, empty=(0, 3, 4, 8))
    assert B.nnz % 16
    g = (Provenance(("i", "j")).derive(Fuse("i", "j", "f")).derive(Pos("f", "p", "B"))
         .derive(Split("p", "p0", "p1", tile)))
    assert g.leaves == ("p0", "p1") and all(g.is_position(v) for v in ("p", "p0", "p1"))
    env = {"N_i": 9, "N_j": 11}
    assert _points(g, env, arrays) == list(zip(*B.nonzero()))
    b = g.bounds()
    assert render(b["p0"][1]) == f"CEIL(B_pos[N_i], {tile})"  # p0 < CEIL(B2_pos[B1_dim], 16)
    assert [r.parent for r in g.guarded()] == ["p"]           # if (p >= B2_pos[B1_dim]) break
    # and back: each stored (i, j) to its position
    for p, (i, j) in enumerate(zip(*B.nonzero())):
        f = evaluate(g.recover_derived("f"), dict(env, i=int(i), j=int(j)))
        assert evaluate(g.recover_derived("p"), dict(env, f=f), arrays) == p


def test_bounds_of_split_fuse_and_bound_loops():
    """The derived loops' ranges as the scheduling paper's Fig. 19 gives them."""
    g = (Provenance(("i", "j")).derive(Split("i", "i0", "i1", 4)).derive(Split("j", "j0", "j1", 3, up=True)))
    b = g.bounds({"i": (8, 21)})
    env = {"N_j": 10}
    assert [evaluate(x, env) for x in b["i0"]] == [2, 6]      # [lo/s, CEIL(hi, s))
    assert [evaluate(x, env) for x in b["i1"]] == [0, 4]
    assert [evaluate(x, env) for x in b["j0"]] == [0, 3]      # up: [0, s)
    assert [evaluate(x, env) for x in b["j1"]] == [0, 4]      # [0, CEIL(N, s))
    f = Provenance(("i", "j")).derive(Fuse("i", "j", "f")).bounds({"i": (2, 5), "j": (3, 7)})["f"]
    assert [evaluate(x, {}) for x in f] == [2 * 4 + 3, 5 * 4 + 3]  # [a(d-c)+c, b(d-c)+c)
    bd = Provenance(("i",)).derive(Bound("i", "ib", 64)).bounds()["ib"]
    assert bd == (Lit(0), Lit(64))


def test_guards_only_where_no_bound_proves_divisibility():
    g = Provenance(("i",)).derive(Split("i", "i0", "i1", 32))
    assert [r.parent for r in g.guarded()] == ["i"]
    assert render(g.recover_original("i")) == "((i0 * 32) + i1)"   # i = i0*32 + i1 (Fig. 2d)
    assert render(g.bounds()["i0"][1]) == "CEIL(N_i, 32)"
    exact = Provenance(("i",)).derive(Bound("i", "ib", 128)).derive(Split("ib", "i0", "i1", 32))
    assert exact.guarded() == ()
    assert _points(exact, {}) == [(i,) for i in range(128)]
    loose = Provenance(("i",)).derive(Bound("i", "ib", 100)).derive(Split("ib", "i0", "i1", 32))
    assert [r.parent for r in loose.guarded()] == ["ib"]
    assert _points(loose, {}) == [(i,) for i in range(100)]
    assert ext("i").name == "N_i"


def test_transformations_the_graph_refuses():
    g = Provenance(("i", "j"))
    cases = [
        (lambda: g.derive(Split("k", "k0", "k1", 4)), "unknown index variable 'k'"),
        (lambda: g.derive(Split("i", "i0", "i1", 0)), "positive int"),
        (lambda: g.derive(Bound("i", "ib", -1)), "positive int"),
        (lambda: g.derive(Split("i", "j", "i1", 4)), "already exists"),
        (lambda: g.derive(Split("i", "a", "a", 4)), "distinct names"),
        (lambda: g.derive(Split("i", "i0", "i1", 4)).derive(Split("i", "x", "y", 2)), "already transformed"),
        (lambda: g.derive(Pos("j", "p", "B")).derive(Pos("p", "q", "B")), "already in position space"),
        (lambda: g.derive(Pos("i", "p", "B")).derive(Fuse("p", "j", "f")), "outer variable 'p' is in position space"),
    ]
    for fn, msg in cases:
        with pytest.raises(ProvenanceError, match=msg):
            fn()
    # an inner variable in position space may be fused
    assert g.derive(Pos("j", "p", "B")).derive(Fuse("i", "p", "f")).leaves == ("f",)
