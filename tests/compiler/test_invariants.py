"""Loop-invariant values (the loop-invariant redundancy of "ReACT: Redundancy-Aware Code Generation
for Tensor Expressions"): a cheap element-wise operation on 0-d values (``sqrt(s)`` of a sum ``s``)
is substituted into its readers instead of running as a kernel of its own (compiler/plan/inline.py
``elementwise``), and the single-operation lowerer computes a call over 0-d operands once, before
its loops (``Lowerer.hoist``)."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import lazysparse as ls
from lazysparse.compiler import pipeline as ex

FORMATS = ["csr", "csc", "coo", "dense"]


def _kernels(expr, fusion="auto"):
    with ex.kernel_log() as log:
        r = expr.materialize(fusion=fusion)
    return r, len(log)


def _operand(draw, fmt, index, dtype, shape):
    m, n = shape
    dens = draw(st.sampled_from([0.0, 0.2, 0.7, 1.0]))
    A = sp.random(m, n, density=dens, format="csr", random_state=draw(st.integers(0, 99)), dtype=dtype)
    A.data = (A.data * 8 - 4).astype(dtype)
    if fmt == "dense":
        return A.toarray(), ls.asarray(A.toarray())
    M = A.asformat(fmt)
    for arr in ("indices", "indptr", "row", "col"):
        if hasattr(M, arr):
            setattr(M, arr, getattr(M, arr).astype(index))
    return A.toarray(), ls.asarray(M)


PROGRAMS = {
    "A / sqrt(sum A^2)": (lambda L: L / ls.sqrt((L * L).sum()), lambda D: D / np.sqrt((D * D).sum())),
    "A * -sum(A)": (lambda L: L * -(L.sum()), lambda D: D * -(D.sum())),
    "A - mean": (lambda L: L - L.mean(), lambda D: D - D.mean()),
    "A / (|max| + 1)": (lambda L: L / (abs(L.max()) + 1), lambda D: D / (abs(D.max()) + 1)),
    "A @ x / norm": (lambda L: (L @ L.T.sum(axis=1)) / ls.sqrt((L * L).sum() + 1),
                     lambda D: (D @ D.T.sum(axis=1)) / np.sqrt((D * D).sum() + 1)),
}


@settings(max_examples=60, deadline=None)
@given(data=st.data(), prog=st.sampled_from(sorted(PROGRAMS)), fmt=st.sampled_from(FORMATS),
       index=st.sampled_from([np.int32, np.int64]), dtype=st.sampled_from([np.float64, np.float32]),
       shape=st.sampled_from([(1, 1), (0, 3), (3, 0), (5, 4), (7, 7)]),
       fusion=st.sampled_from(["auto", "max", "none"]))
def test_programs_reading_0d_values_are_numpys(data, prog, fmt, index, dtype, shape, fusion):
    D, L = _operand(data.draw, fmt, index, dtype, shape)
    lazy, dense = PROGRAMS[prog]
    with np.errstate(all="ignore"):
        try:
            want = dense(D)
        except ValueError:  # (NumPy's max of an empty array)
            with pytest.raises(ValueError):
                lazy(L).materialize(fusion=fusion)
            return
        got = lazy(L).materialize(fusion=fusion).todense()
    assert got.dtype == want.dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(want), initial=0))))


def test_a_cheap_0d_operation_is_not_a_kernel_and_runs_once():
    rng = np.random.default_rng(0)
    A = sp.random(300, 300, density=0.05, format="csr", random_state=1)
    x = rng.random(300)
    lA, lx = ls.asarray(A), ls.asarray(x)
    y = lA @ lx
    e = y / ls.sqrt((y ** 2).sum())
    c = ls.opcount(e)  # (before: a computed y, kept because the test holds it, is an operand)
    assert c["other"] == 300 + 1  # 300 squares, one square root
    assert c["div"] == 300 and c["kernels"] == 3
    r, n = _kernels(e)
    yy = A @ x
    np.testing.assert_allclose(r.todense(), yy / np.sqrt((yy ** 2).sum()), rtol=1e-13)
    assert n == 3  # A @ x, the sum of squares, the quotient (sqrt inside it)
    assert not y.is_lazy  # the program holds y: its value was kept, not recomputed by its next use


def test_the_invariant_call_is_computed_before_the_loops():
    x = ls.asarray(np.arange(5.0))
    s = ls.asarray(np.array(4.0))
    # (``exp`` is not cheap: ``auto`` keeps it a 0-d kernel of its own; ``max`` substitutes it)
    text = ls.explain(x * ls.exp(ls.sqrt(s) + 1.0), fusion="max")
    c = text[text.rindex("int32_t ls_kernel"):]
    loop = c.index("for (")
    assert c.index("= sqrt(v") < loop and c.index("= exp(") < loop
    assert "sqrt(" not in c[loop:] and "exp(" not in c[loop:]
    r = (x * ls.exp(ls.sqrt(s) + 1.0)).materialize(fusion="max").todense()
    np.testing.assert_allclose(r, np.arange(5.0) * np.exp(3.0), rtol=1e-15)
    c = ls.opcount(x * ls.exp(ls.sqrt(s) + 1.0), fusion="max")
    assert c["other"] == 2 and c["add"] == 1 and c["mul"] == 5  # sqrt, exp, + once; * per element


def test_a_where_over_0d_values_stays_in_the_loop():
    """A ``where`` is not hoisted (its branches count only when taken); its 0-d branches are,
    each counted once."""
    x = ls.asarray(np.arange(4.0))
    s = ls.asarray(np.array(-1.0))
    e = x * ls.where(s > 0, ls.sqrt(s), s * 2.0)
    np.testing.assert_array_equal(e.materialize().todense(), np.arange(4.0) * -2.0)
    c = ls.opcount(e)
    assert c["mul"] == 4 + 1  # the product at each point, s * 2 once
    assert c["other"] == 4 + 2  # the where at each point; s > 0 and sqrt(s) once


@pytest.mark.parametrize("fusion", ["auto", "max", "none"])
def test_a_0d_call_decides_the_pattern_by_its_value_between_warm_calls(fusion):
    """``A / sqrt(s)``: NaN at A's implicit zeros when ``s`` is 0, A's pattern otherwise; the
    plan made for one value declines the others (kernel.scalar_decisions evaluates the call)."""
    A = sp.random(6, 5, density=0.3, format="csr", random_state=3)
    D = A.toarray()
    lA = ls.asarray(A)
    for v in [4.0, 0.0, 4.0, np.nan, -0.0, np.inf, 9.0, 0.0]:
        s = ls.asarray(np.array(v))
        with np.errstate(all="ignore"):
            got = (lA / ls.sqrt(s)).materialize(fusion=fusion)
            want = D / np.sqrt(v)
        np.testing.assert_array_equal(got.todense(), want, err_msg=f"s = {v!r}")
        assert got.format.is_dense or np.isfinite(1 / np.sqrt(v))


def test_a_fused_kernel_computes_a_0d_value_once():
    """A program that one fused kernel runs keeps a 0-d statement of its own (computed once
    in the kernel): the substitution is for programs run one kernel per operation."""
    D = np.random.default_rng(1).random((60, 50))
    lD, s = ls.asarray(D), ls.asarray(np.array(4.0))
    for e, want in [((lD * ls.sqrt(s)).sum() + (lD * lD).sum(), (D * 2).sum() + (D * D).sum()),
                    ((lD * ls.sqrt(s)) / (lD * ls.sqrt(s)).sum(axis=1, keepdims=True),
                     D / D.sum(axis=1, keepdims=True))]:
        r, n = _kernels(e)
        np.testing.assert_allclose(r.todense(), want, rtol=1e-12)
        c = ls.opcount(e)
        assert n == 1 and c["kernels"] == 1 and c["other"] == 1  # one square root
