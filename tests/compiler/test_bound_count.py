"""``patterns.bound_count``: an upper bound on a result's entries (it picks the index width of
huge sparse results, compiler/pipeline.py). Checked against the entries counted on random
operands: products over disjoint indices (outer products), shared indices, unions, and
projections onto fewer result indices."""
from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lazysparse.compiler.plan import patterns as P

IDX = "ijkl"
SIZE = 3


@settings(max_examples=200, deadline=None)
@given(accs=st.lists(st.sets(st.sampled_from(IDX), min_size=1, max_size=3), min_size=1, max_size=3),
       union=st.booleans(), out=st.sets(st.sampled_from(IDX), min_size=1, max_size=4),
       seed=st.integers(0, 2**16))
def test_bound_is_an_upper_bound(accs, union, out, seed):
    rng = np.random.default_rng(seed)
    accs = [tuple(sorted(a)) for a in accs]
    out = tuple(sorted(out | set().union(*map(set, accs))))  # (every access index is a result index
    # or summed away: keep the result over all of them, then project)
    proj = tuple(sorted(set(out) & set(rng.choice(list(out), size=rng.integers(1, len(out) + 1), replace=False))))
    masks = [rng.random((SIZE,) * len(a)) < 0.4 for a in accs]
    pat = P.disj(*[P.var(q) for q in range(len(accs))]) if union else P.conj(*[P.var(q) for q in range(len(accs))])
    # the pattern's points over the projected result indices, counted
    points = set()
    for pt in itertools.product(range(SIZE), repeat=len(out)):
        at = dict(zip(out, pt))
        present = {q for q, (a, m) in enumerate(zip(accs, masks)) if m[tuple(at[x] for x in a)]}
        if P.evaluate(pat, present):
            points.add(tuple(at[x] for x in proj))
    full = SIZE ** len(proj)
    bound = P.bound_count(pat, lambda q: int(masks[q].sum()), full,
                          lambda q: frozenset(accs[q]), frozenset(proj))
    assert len(points) <= bound <= full


def test_outer_product_bound_is_the_product():
    t = P.conj(P.var(0), P.var(1))
    nnz = [10, 20]
    assert P.bound_count(t, nnz.__getitem__, 10**12, {0: frozenset("ij"), 1: frozenset("kl")}.get,
                         frozenset("ijkl")) == 200
    # the same term over shared indices: either operand bounds it
    assert P.bound_count(t, nnz.__getitem__, 10**12, {0: frozenset("ij"), 1: frozenset("ij")}.get,
                         frozenset("ij")) == 10
