"""One format truth: a lazy array's ``.format``, read before anything runs, is the format of its
result, in every fusion mode and through ``ls.compute``, on DAGs of sparse matrices where the
planner's own choice differs (masked products stored dense by a fused kernel, a row sum whose
last kernel picks a sparse vector); and the decision memo both plan lookups use decides 0-d
values by their class only where that is exact."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import lazysparse as ls
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan import decisions
from lazysparse.ir.nodes import Access, Call

# (name, lazy, NumPy) over the matrices M, A, B (dense NumPy arrays on the right)
EXPRS = [
    ("M*(A@B)", lambda M, A, B: M * (A @ B), lambda M, A, B: M * (A @ B)),
    ("M*(A@B.T)", lambda M, A, B: M * (A @ B.T), lambda M, A, B: M * (A @ B.T)),
    ("(A@B)*M+M", lambda M, A, B: (A @ B) * M + M, lambda M, A, B: (A @ B) * M + M),
    ("A*(B@B.T@A)", lambda M, A, B: A * (B @ B.T @ A), lambda M, A, B: A * (B @ B.T @ A)),
    ("rowsum", lambda M, A, B: (M * (A @ B)).sum(axis=1), lambda M, A, B: (M * (A @ B)).sum(axis=1)),
    ("colsum", lambda M, A, B: (abs(A) * M).sum(axis=0), lambda M, A, B: (abs(A) * M).sum(axis=0)),
    ("A@B@M", lambda M, A, B: A @ B @ M, lambda M, A, B: A @ B @ M),
    ("2.5*(A+B)*M", lambda M, A, B: 2.5 * (A + B) * M, lambda M, A, B: 2.5 * (A + B) * M),
    ("(A-1)*M", lambda M, A, B: (A - 1.0) * M, lambda M, A, B: (A - 1.0) * M),
]


def _mats(seed, n, density, fmt):
    rng = np.random.default_rng(seed)
    S = [sp.random(n, n, density=density, format="csr", random_state=int(rng.integers(2**31))) for _ in range(3)]
    return [ls.asarray(s).asformat(fmt) for s in S], [s.toarray() for s in S]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 24), density=st.sampled_from([0.0, 0.05, 0.2, 0.4, 0.7]),
       fmt=st.sampled_from(["csr", "csc", "coo"]), k=st.integers(0, len(EXPRS) - 1),
       fusion=st.sampled_from(["auto", "max", "none"]))
def test_the_lazy_format_is_the_results(seed, n, density, fmt, k, fusion):
    (M, A, B), (Md, Ad, Bd) = _mats(seed, n, density, fmt)
    _, lazy, ref = EXPRS[k]
    y = lazy(M, A, B)
    promised = y.format
    out = y.materialize(fusion=fusion)
    assert out.format == promised
    np.testing.assert_allclose(np.asarray(out.todense()), ref(Md, Ad, Bd), rtol=1e-10, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 24), density=st.sampled_from([0.05, 0.4, 0.7]),
       j=st.integers(0, len(EXPRS) - 1), k=st.integers(0, len(EXPRS) - 1))
def test_the_lazy_formats_are_the_results_through_compute(seed, n, density, j, k):
    (M, A, B), (Md, Ad, Bd) = _mats(seed, n, density, "csr")
    ys = [EXPRS[j][1](M, A, B), EXPRS[k][1](M, A, B)]
    promised = [y.format for y in ys]
    outs = ls.compute(*ys)
    assert [o.format for o in outs] == promised
    for o, e in zip(outs, (EXPRS[j][2], EXPRS[k][2])):
        np.testing.assert_allclose(np.asarray(o.todense()), e(Md, Ad, Bd), rtol=1e-10, atol=1e-12)


def test_a_sampled_row_sum_is_the_dense_vector_it_promised():
    """The issue's example: ``(B * (C @ D)).sum(axis=1)`` says dense, and is, on its own and
    through ``ls.compute``; NumPy reads it."""
    n = 60
    B, C, D = (ls.asarray(sp.random(n, n, density=0.1, format="csr", random_state=s)) for s in range(3))
    y = (B * (C @ D)).sum(axis=1)
    assert y.format.is_dense
    want = (B.todense() * (C.todense() @ D.todense())).sum(axis=1)
    for got in (y.materialize(), ls.compute(B, (B * (C @ D)).sum(axis=1))[1]):
        assert got.format.is_dense
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


VALUES = [0.0, -0.0, 5e-324, 1e-300, 0.5, 3.0, 1e300, -5e-324, -0.5, -4.0, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("op", sorted(decisions.CLASSED_OPS))
@pytest.mark.parametrize("scalar_first", [False, True])
def test_a_classed_call_decides_alike_for_every_value_of_a_class(op, scalar_first):
    """The decision memo keys a binary call's decisions by its 0-d value's class: for every
    operation it classes, the decisions ``patterns.expr_pattern`` makes at each of many values
    are equal within each class."""
    acc = [Access(0, ()), Access(1, ())]
    if scalar_first:
        acc.reverse()
    logical = op.startswith(("less", "greater", "equal", "not_equal", "logical"))
    expr = Call(op, tuple(acc), ("float64", "float64"), "bool" if logical else "float64")
    by_class = {}
    for v in VALUES:
        dec = P.expr_pattern(expr, lambda a, q: None, lambda a: np.float64(v) if a.operand == 1 else None, None)[1]
        by_class.setdefault(decisions.value_class(v), set()).add(repr(dec))
    assert all(len(d) == 1 for d in by_class.values()), by_class
    if op in ("add", "maximum"):  # (their decisions do differ between classes)
        assert len(set().union(*by_class.values())) > 1
