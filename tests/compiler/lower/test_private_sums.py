"""Dense results summed over their outermost loop, on threads (compiler/lower/parallel.py,
``Lowerer.emit_private``): ``A.T @ x``, a CSC SpMV, column sums, ``A.T @ X``, ``A.sum()`` and
dense reductions over rows. Thread t > 0 sums into a private copy of the result, thread 0 into
the result; the copies are added after. And outer loops over COO's first level
(``Lowerer.share_positions``): each thread a share of the positions, cut where the coordinate
changes. Values against dense NumPy and against one thread
(equal up to rounding; integers exactly), the same from call to call at one thread count,
over shapes (zero-size, empty rows, one element), densities, dtypes, index widths and formats."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as hst

import sparse

import lazysparse as ls
from lazysparse.compiler.pipeline import kernel_log

REGION = "omp_get_num_threads()"  # the private copies' region asks for its team's size


def _matrix(m, n, density, dtype, index, seed, fmt):
    rng = np.random.default_rng(seed)
    D = np.where(rng.random((m, n)) < density, rng.integers(-3, 4, (m, n)), 0).astype(dtype)
    if m:
        D[m // 2, :] = 0  # an empty row
    A = sp.csr_array(D)
    if fmt == "coo":
        A = A.tocoo()
        A.coords = tuple(c.astype(index) for c in A.coords)
        return A, D
    if fmt == "csc":
        A = A.tocsc()
    A.indices, A.indptr = A.indices.astype(index), A.indptr.astype(index)
    return A, D


def _arrays(a):
    """The input's index and value arrays (to check that nothing wrote to them)."""
    return (a.data, *a.coords) if hasattr(a, "coords") else (a.data, a.indices, a.indptr)


def _cases(a, D, x, X, b=None, DB=None):
    la, lx, lX, lD = ls.asarray(a), ls.asarray(x), ls.asarray(X), ls.asarray(D)
    more = []
    if b is not None:  # two operands merged or intersected inside each row
        lb = ls.asarray(b)
        more = [("(A * B).sum(0)", lambda: (la * lb).sum(axis=0), (D * DB).sum(axis=0)),
                ("(A + B).sum(0)", lambda: (la + lb).sum(axis=0), (D + DB).sum(axis=0)),
                ("ij,ij->j", lambda: ls.einsum("ij,ij->j", la, lb), np.einsum("ij,ij->j", D, DB)),
                ("(A - B).sum()", lambda: (la - lb).sum(), (D - DB).sum())]
    D3 = np.stack([D, 2 * D]) if D.size else np.zeros((2,) + D.shape, D.dtype)
    T3 = ls.asarray(sparse.COO.from_numpy(D3))  # (a COO tensor: its first level walked by stretches)
    y = np.arange(D.shape[1], dtype=D.dtype) - 3
    ly = ls.asarray(y)
    return more + [
        ("A @ y", lambda: la @ ly, D @ y),
        ("A.sum(1)", lambda: la.sum(axis=1), D.sum(axis=1)),
        ("ttv coo", lambda: ls.einsum("ijk,k->ij", T3, ly), np.einsum("ijk,k->ij", D3, y)),
        ("ijk,i->jk coo", lambda: ls.einsum("ijk,i->jk", T3, ls.asarray(np.array([1, -2], D.dtype))),
         np.einsum("ijk,i->jk", D3, np.array([1, -2], D.dtype))),
        ("x.sum()", lambda: ls.sum(lx), x.sum()),
        ("ijk->jk", lambda: ls.einsum("ijk->jk", ls.asarray(D3)), D3.sum(axis=0)),
        ("A.T @ x", lambda: la.T @ lx, D.T @ x),
        ("x @ A", lambda: lx @ la, x @ D),
        ("A.sum(0)", lambda: la.sum(axis=0), D.sum(axis=0)),
        ("A.sum()", lambda: ls.sum(la), D.sum()),
        ("A.T @ X", lambda: la.T @ lX, D.T @ X),
        ("ij,i->j", lambda: ls.einsum("ij,i->j", la, lx), np.einsum("ij,i->j", D, x)),
        ("dense sum(0)", lambda: lD.sum(axis=0), D.sum(axis=0)),
        ("dense sum()", lambda: ls.sum(lD), D.sum()),
    ]


def _close(got, want, dtype, name):
    got = np.asarray(got.todense() if hasattr(got, "todense") else got)
    if np.dtype(dtype).kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        tol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
    return got


# (dtype, index width, format) triples that hold every pair of two of them: each triple compiles
# its own twenty-odd kernels, and twenty more for zero-size shapes (the private sums' C differs by
# value type, index type and format, not by their triple), so the twelve of a pairwise cover instead
# of all twenty-four, with more examples a triple than before (25 / 12 against 40 / 24)
SIGNATURES = [(np.float64, np.int32, "csr"), (np.float64, np.int64, "csc"), (np.float64, np.int32, "coo"),
              (np.float32, np.int64, "csr"), (np.float32, np.int32, "csc"), (np.float32, np.int64, "coo"),
              (np.int64, np.int32, "csr"), (np.int64, np.int64, "csc"), (np.int64, np.int32, "coo"),
              (np.complex128, np.int64, "csr"), (np.complex128, np.int32, "csc"),
              (np.complex128, np.int64, "coo")]


@settings(max_examples=25, deadline=None)
@given(m=hst.integers(0, 40), n=hst.integers(0, 30), density=hst.floats(0, 1),
       signature=hst.sampled_from(SIGNATURES), seed=hst.integers(0, 2**16),
       threads=hst.sampled_from([2, 3]))
def test_private_sums_match_numpy_and_one_thread(m, n, density, signature, seed, threads):
    dtype, index, fmt = signature
    # (the suite runs every parallel loop on the threads asked for: LAZYSPARSE_PAR_MIN_WORK=0)
    a, D = _matrix(m, n, density, dtype, index, seed, fmt)
    b, DB = _matrix(m, n, density, dtype, index, seed + 2, "csr")
    rng = np.random.default_rng(seed + 1)
    x = rng.integers(-2, 3, m).astype(dtype)
    X = rng.integers(-2, 3, (m, 5)).astype(dtype)
    given_ = (*_arrays(a), *_arrays(b), x, X, D)
    before = [y.copy() for y in given_]
    try:
        for name, expr, want in _cases(a, D, x, X, b, DB):
            ls.set_num_threads(1)
            one = _close(expr().materialize(), want, dtype, name)
            ls.set_num_threads(threads)
            many = _close(expr().materialize(), want, dtype, name)
            again = _close(expr().materialize(), want, dtype, name)
            _close(many, one, dtype, name)
            np.testing.assert_array_equal(many, again, err_msg=name)  # the same every call
    finally:
        ls.set_num_threads(1)
    for y, y0 in zip(given_, before):  # the inputs are unchanged
        np.testing.assert_array_equal(y, y0)


def _team(expr):
    """The result and the team size each kernel of the call reported."""
    with kernel_log() as log:
        got = expr.materialize(fusion="none")
    teams, srcs = [], []
    for spec, runner in log:
        k = [i for i, d in enumerate(runner.abi.d) if d[0] == "team"]
        teams.append(runner._pool[-1][1][k[0]] if k else None)
        srcs.append(runner.source)
    return got, teams, srcs


@pytest.fixture
def two():
    ls.set_num_threads(2)
    yield
    ls.set_num_threads(1)


@pytest.mark.parametrize("name", ["A.T @ x", "A.sum(0)", "A.sum()", "A.T @ X", "dense sum(0)",
                                  "(A * B).sum(0)", "(A + B).sum(0)"])
def test_sums_over_the_outer_loop_run_on_the_team(name, two):
    a, D = _matrix(60, 50, 0.3, np.float64, np.int32, 3, "csr")
    b, DB = _matrix(60, 50, 0.3, np.float64, np.int32, 4, "csr")
    x, X = np.arange(60.0), np.ones((60, 4))
    (expr, want), = [(e, w) for k, e, w in _cases(a, D, x, X, b, DB) if k == name]
    got, teams, srcs = _team(expr())
    _close(got, want, np.float64, name)
    assert teams[-1] == 2 and REGION in srcs[-1]  # (the sum; a product or merge before it)
    assert "summed into a private copy of the result" in ls.explain(expr())


def test_a_result_as_large_as_its_work_stays_on_one_thread(two):
    """Copies zeroed and added cost about the result's size: a result of half the work or more
    (a sparse matrix with fewer than two entries a column) is summed on one thread."""
    D = np.eye(400)[::-1] * 2.0  # one entry a column: the result is full (stored dense)
    a = sp.csr_array(D)
    x = np.arange(400.0)
    got, teams, srcs = _team(ls.asarray(a).T @ ls.asarray(x))
    _close(got, D.T @ x, np.float64, "A.T @ x")
    assert teams == [1] and REGION in srcs[0]


def test_kept_copies_serve_larger_and_smaller_results(two):
    """The copies a call leaves to the next (``KEEP``) are reused when large enough, replaced
    when not, in one kernel; stale values in a kept copy never reach a result."""
    for n in (300, 20, 300, 1, 0, 300):
        a, D = _matrix(40, n, 0.3, np.float64, np.int32, n, "csr")
        x = np.arange(40.0)
        _close((ls.asarray(a).T @ ls.asarray(x)).materialize(), D.T @ x, np.float64, str(n))


def test_concurrent_calls_of_one_kernel(calls_at_once):
    """Python threads running the same kernel at once: one holds the kept copies, the others
    allocate their own; every result is right."""
    a, D = _matrix(200, 150, 0.2, np.float64, np.int32, 7, "csr")
    x = np.random.default_rng(0).random(200)
    la, lx = ls.asarray(a), ls.asarray(x)
    want = D.T @ x
    errors = calls_at_once(lambda: (la.T @ lx).materialize(),
                           lambda got: _close(got, want, np.float64, "A.T @ x"), rounds=30)
    assert not errors, errors


@pytest.mark.parametrize("threads", [2, 3])
def test_skewed_rows_split_by_entries(threads):
    """One row holds most entries: the threads' row ranges are cut by entries, and a thread may
    get no row at all; the sums stay right."""
    n = 300
    D = np.zeros((n, n))
    D[7, :] = np.arange(n) + 1.0
    D[np.arange(0, n, 50), 3] = 2.0
    a = sp.csr_array(D)
    x = np.linspace(-1, 1, n)
    ls.set_num_threads(threads)
    try:
        for _ in range(3):
            _close((ls.asarray(a).T @ ls.asarray(x)).materialize(), D.T @ x, np.float64, "skew")
            _close(ls.asarray(a).sum(axis=0).materialize(), D.sum(axis=0), np.float64, "skew")
    finally:
        ls.set_num_threads(1)


@pytest.mark.parametrize("per_column,team", [(5, 1), (20, 2)])
def test_copies_past_the_cache_need_more_work_per_point(per_column, team, two):
    """A result whose copy exceeds a core's cache (``PRIVATE_SMALL``: 1100 x 128 doubles) runs
    on threads only with ``PRIVATE_RATIO[1]`` (12) entries or more a column: its zeroing and
    adding go to memory."""
    n, k = 1100, 128
    rng = np.random.default_rng(per_column)
    rows = rng.integers(0, 3000, n * per_column)
    cols = np.repeat(np.arange(n), per_column)
    a = sp.csr_array((np.ones(n * per_column), (rows, cols)), shape=(3000, n))
    X = rng.random((3000, k))
    got, teams, srcs = _team(ls.asarray(a).T @ ls.asarray(X))
    _close(got, a.T @ X, np.float64, "A.T @ X")
    assert teams == [team] and REGION in srcs[0]


def _fused_cases(a, D, rng):
    m, n = D.shape
    x, y, X, W = rng.random(m), rng.random(m), rng.random((m, 6)), rng.random((6, 3))
    z = rng.random(n)
    la, lx, ly, lX, lW, lz = map(ls.asarray, (a, x, y, X, W, z))
    return [("A.T @ (x * y)", lambda: la.T @ (lx * ly), D.T @ (x * y)),
            ("A.T @ (A @ z)", lambda: la.T @ (la @ lz), D.T @ (D @ z)),
            ("(A.T @ X) @ W", lambda: (la.T @ lX) @ lW, (D.T @ X) @ W),
            ("x @ (A @ z)", lambda: lx @ (la @ lz), x @ (D @ z))]


@settings(max_examples=25, deadline=None)
@given(m=hst.integers(0, 40), n=hst.integers(0, 30), density=hst.floats(0, 1),
       index=hst.sampled_from([np.int32, np.int64]), seed=hst.integers(0, 2**16),
       threads=hst.sampled_from([2, 3]))
def test_fused_kernels_summed_over_their_loop_on_threads(m, n, density, index, seed, threads):
    """Fused kernels (compiler/lower/fused.py) whose one loop only the result's operation sums over:
    each thread sums into a private copy of the result (``FusedLowerer.parallel_loop``)."""
    a, D = _matrix(m, n, density, np.float64, index, seed, "csr")
    try:
        for name, expr, want in _fused_cases(a, D, np.random.default_rng(seed)):
            ls.set_num_threads(1)
            one = _close(expr().materialize(), want, np.float64, name)
            ls.set_num_threads(threads)
            many = _close(expr().materialize(), want, np.float64, name)
            np.testing.assert_array_equal(many, _close(expr().materialize(), want, np.float64, name))
            _close(many, one, np.float64, name)
    finally:
        ls.set_num_threads(1)


def test_fused_private_copies_are_used(two):
    a, D = _matrix(60, 50, 0.3, np.float64, np.int32, 5, "csr")
    for name, expr, want in _fused_cases(a, D, np.random.default_rng(0)):
        with kernel_log() as log:
            got = expr().materialize()
        _close(got, want, np.float64, name)
        (run,) = log
        assert "ls_pv" in run.kernel.source and "schedule(static, ls_chunk)" in run.kernel.source, name
        assert "summing into a private copy of the result" in ls.explain(expr()), name


@settings(max_examples=30, deadline=None)
@given(m=hst.integers(0, 40), n=hst.integers(0, 30), density=hst.floats(0, 1),
       dtype=hst.sampled_from([np.float64, np.float32, np.int64]),
       fmt=hst.sampled_from(["csr", "csc", "coo"]), full=hst.booleans(), nan=hst.booleans(),
       seed=hst.integers(0, 2**16), threads=hst.sampled_from([2, 3]))
def test_max_min_prod_over_rows_on_threads(m, n, density, dtype, fmt, full, nan, seed, threads):
    """A max, min or product over the outer loop (mode "dense-count": entries counted per point,
    the implicit zeros folded in after): the copies start at the identity, their counts are
    added. Columns with every entry stored (no implicit zero) and NaNs included."""
    rng = np.random.default_rng(seed)
    D = np.where(rng.random((m, n)) < density, rng.integers(-3, 4, (m, n)), 0).astype(dtype)
    if full and n:
        D[:, 0] = rng.integers(1, 3, m)  # a column without implicit zeros
    if nan and m and n and np.dtype(dtype).kind == "f":
        D[m // 2, n // 2] = np.nan
    a = sp.csr_array(D)
    a = a.tocoo() if fmt == "coo" else (a.tocsc() if fmt == "csc" else a)
    la = ls.asarray(a)
    try:
        for op in ("max", "min", "prod"):
            if m == 0 and op != "prod":
                continue  # (NumPy refuses a max over an empty axis; so does lazysparse)
            want = getattr(D, op)(axis=0)
            ls.set_num_threads(1)
            one = getattr(la, op)(axis=0).materialize().todense()
            ls.set_num_threads(threads)
            got = getattr(la, op)(axis=0).materialize().todense()
            np.testing.assert_array_equal(got, want, err_msg=op)
            np.testing.assert_array_equal(got, one, err_msg=op)
    finally:
        ls.set_num_threads(1)


def test_a_max_over_rows_runs_on_the_team(two):
    D = np.arange(1.0, 61.0).reshape(12, 5) * np.where(np.arange(60).reshape(12, 5) % 3, 1, 0)
    got, teams, srcs = _team(ls.asarray(sp.csr_array(D)).max(axis=0))
    np.testing.assert_array_equal(got.todense(), D.max(axis=0))
    assert teams == [2] and "ls_pc" in srcs[0]
