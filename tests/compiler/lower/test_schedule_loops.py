"""Kernels that follow a schedule's loop transformations ("A Sparse Iteration Space Transformation
Framework for Sparse Tensor Algebra", the scheduling paper): the default SpMV, row splits,
divides, tiles of nonzeros, guard-free full tiles, the parallel loop and reorders, each checked
against dense NumPy on sizes that the factors do not divide, with empty rows, rows spanning tiles
and skewed rows, and each schedule's C checked for the structure the paper prints; schedules that
cannot hold are refused with the transformation and the reason."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import lazysparse as ls


@pytest.fixture(autouse=True)
def _threads():
    before = ls.get_num_threads()
    yield
    ls.set_num_threads(before)


def _csr(m, n, density, seed, dtype=np.float64, empty_rows=(), skew=False):
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=density, format="lil", random_state=seed, dtype=np.float64)
    if skew and m and n:
        A[0, :] = rng.random(n) + 0.5  # one full row: it spans many tiles
    for r in empty_rows:
        if r < m:
            A[r, :] = 0
    A = A.tocsr()
    A.eliminate_zeros()
    A.data = (A.data * 10 + 1).astype(dtype) if np.dtype(dtype).kind in "iu" else A.data.astype(dtype)
    return A


def _kernel_c(text):
    return text[text.index("int32_t ls_kernel"):]


def _clones(c, head):
    """The two branches of the ``if`` that starts with ``head`` (matched by indentation)."""
    at = c.index(head)
    indent = c[c.rindex("\n", 0, at) + 1:at]
    rest = c[at + len(head):]
    full, _, tail = rest.partition("\n" + indent + "} else {")
    return full, tail.partition("\n" + indent + "}")[0]


FIG4 = (ls.Schedule().fuse("i0", "i1", "f").pos("f", "p", "T0").split("p", "p0", "p1", 16)
        .parallelize("p0", races="atomics"))


def test_default_csr_spmv_is_a_row_loop_over_each_rows_entries():
    A = ls.asarray(_csr(7, 5, 0.4, 0))
    c = _kernel_c(ls.explain(A @ np.ones(5)))
    # the row loop over each chunk of rows a thread takes (parallel.py ``owned_chunks``)
    assert "for (int64_t x0 = ls_r0; x0 < ls_r1; x0++)" in c
    assert "const int64_t ls_r1 = ls_r0 + ls_chunk < (N0) ? ls_r0 + ls_chunk : (N0);" in c
    assert "for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++)" in c
    assert "int64_t x1 = (int64_t)c0_1[j0_1];" in c
    assert "acc += ((v0[j0_1]) * (v1[(x1)]));" in c
    assert "o[(x0)] = acc;" in c


@pytest.mark.parametrize("threads", [1, 2])
def test_row_split_emits_ceil_recovery_guard_and_pragma_and_is_correct_for_101_rows(threads):
    ls.set_num_threads(threads)
    A0 = _csr(101, 37, 0.1, 1, empty_rows=(0, 50, 100))
    x0 = np.random.default_rng(1).random(37)
    s = ls.Schedule().split("i0", "i00", "i01", 32).parallelize("i00")
    A = ls.asarray(A0)
    c = _kernel_c(ls.explain(A @ x0, schedule=s))
    assert "x0o < ((N0) + 32 - 1) / 32" in c                  # CEIL(m, 32)
    assert "const int64_t x0 = x0b + x0i;" in c and "x0b = x0o * 32" in c  # i = i0*32 + i1
    assert "if (x0 >= N0) break;" in c
    assert "#pragma omp" in c and "schedule(dynamic, ls_chunk)" in c
    out = (A @ x0).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), A0 @ x0, rtol=1e-12)


def test_full_tiles_run_a_guard_free_clone_and_the_tail_a_guarded_one():
    A = ls.asarray(_csr(101, 10, 0.3, 2))
    c = _kernel_c(ls.explain(A @ np.ones(10), schedule=ls.Schedule().split("i0", "a", "b", 32)))
    full, tail = _clones(c, "if (x0b + 32 <= N0) {")
    assert "x0 >= N0" not in full and "if (x0 >= N0) break;" in tail
    # and no OpenMP: the schedule does not parallelize
    assert "#pragma omp" not in c


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m, n, density", [(101, 57, 0.07), (33, 200, 0.3), (5, 3, 0.0)])
def test_nonzero_tiles_search_once_and_flush_shared_rows_atomically(threads, m, n, density):
    ls.set_num_threads(threads)
    A0 = _csr(m, n, density, 3, empty_rows=(1, 2, m - 1), skew=True)
    assert A0.nnz % 16 != 0 or A0.nnz == 0 or m == 5
    x0 = np.random.default_rng(3).random(n)
    A = ls.asarray(A0)
    c = _kernel_c(ls.explain(A @ x0, schedule=FIG4))
    assert c.count("while (ls_r + 1 < ls_rh)") == 1                     # one search per tile
    assert "while (ls_p >= (int64_t)p0_1[ls_r + 1]) ls_r++;" in c         # the row advances
    # the guard p >= pos[m], hoisted into the tile's bound (a full tile runs to lo + 16)
    assert "ls_hi = ls_lo + 16 <= ls_nnz ? ls_lo + 16 : ls_nnz;" in c
    assert "ls_e = ls_re < ls_hi ? ls_re : ls_hi;" in c               # a row end, or the tile's
    # the flush at a row's end or the tile's: plain for rows the tile owns, atomic for shared
    own, shared = _clones(c, "if ((int64_t)p0_1[ls_r] >= ls_lo && ls_re <= ls_hi) {")
    assert "o[(x0)] += acc;" in own and "atomic" not in own
    assert "#pragma omp atomic" in shared and "o[(x0)] += acc;" in shared
    out = (A @ x0).materialize(schedule=FIG4)
    np.testing.assert_allclose(out.todense(), A0 @ x0, rtol=1e-12, atol=1e-12)


def test_tiles_of_an_spmm_add_every_row_piece_into_the_result():
    ls.set_num_threads(2)
    A0 = _csr(70, 45, 0.2, 4, empty_rows=(3,), skew=True)
    X0 = np.random.default_rng(4).random((45, 9))
    s = (ls.Schedule().fuse("i0", "i2", "f").pos("f", "p", "T0").split("p", "p0", "p1", 7)
         .parallelize("p0", races="atomics"))
    out = (ls.asarray(A0) @ X0).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), A0 @ X0, rtol=1e-12)


def test_a_reduction_loop_on_threads_adds_atomically():
    ls.set_num_threads(2)
    A0 = _csr(300, 20, 0.2, 5)
    x0 = np.random.default_rng(5).random(300)
    s = ls.Schedule().parallelize("i1", races="atomics")
    e = _kernel_c(ls.explain(x0 @ ls.asarray(A0), schedule=s))
    assert "#pragma omp atomic" in e
    out = (x0 @ ls.asarray(A0)).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), x0 @ A0, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(0, 45), n=st.integers(1, 30), density=st.floats(0, 0.6),
       factor=st.integers(1, 40), seed=st.integers(0, 10_000),
       how=st.sampled_from(["split", "divide", "tiles"]), threads=st.sampled_from([1, 2]),
       dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int32]),
       index=st.sampled_from([np.int32, np.int64]), width=st.sampled_from([0, 3]))
def test_every_scheduled_kernel_matches_numpy(m, n, density, factor, seed, how, threads, dtype,
                                              index, width):
    ls.set_num_threads(threads)
    A0 = _csr(m, n, density, seed, dtype, skew=seed % 3 == 0)
    A0.indices, A0.indptr = A0.indices.astype(index), A0.indptr.astype(index)
    rng = np.random.default_rng(seed)
    x0 = (rng.random((n, width)) if width else rng.random(n)) * 4
    x0 = x0.astype(dtype)
    red = "i2" if width else "i1"
    if how == "split":
        s = ls.Schedule().split("i0", "a", "b", factor).parallelize("a")
    elif how == "divide":
        s = ls.Schedule().divide("i0", "a", "b", factor).parallelize("a")
    else:
        s = (ls.Schedule().fuse("i0", red, "f").pos("f", "p", "T0").split("p", "p0", "p1", factor)
             .parallelize("p0", races="atomics"))
    A = ls.asarray(A0)
    out = (A @ x0).materialize(schedule=s).todense()
    ref = A0.toarray().astype(np.float64) @ x0.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    assert out.dtype == np.result_type(dtype, dtype)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=tol, atol=tol)


def test_complex_tiles_run_serially_and_refuse_atomics():
    A0 = _csr(20, 11, 0.3, 6).astype(np.complex128) * (1 + 2j)
    x0 = np.arange(11) * (1 - 1j)
    serial = ls.Schedule().fuse("i0", "i1", "f").pos("f", "p", "T0").split("p", "p0", "p1", 4)
    out = (ls.asarray(A0) @ x0).materialize(schedule=serial)
    np.testing.assert_allclose(out.todense(), A0 @ x0)
    with pytest.raises(ValueError, match="atomic complex add"):
        (ls.asarray(A0) @ x0).materialize(schedule=serial.parallelize("p0", races="atomics"))


def test_reorder_changes_the_loops_and_keeps_the_values():
    A0 = _csr(23, 17, 0.3, 7)
    X0 = np.random.default_rng(7).random((17, 5))
    A = ls.asarray(A0)
    s = ls.Schedule().reorder("i1", "i2")  # rows, then result columns, then the sum
    text = ls.explain(A @ X0, schedule=s)
    assert "loop order i0, i1, i2" in text
    np.testing.assert_allclose((A @ X0).materialize(schedule=s).todense(), A0 @ X0)


# -- rejections with the transformation and the reason ---------------------------------------------
def _spmv():
    A0 = _csr(9, 6, 0.4, 8)
    return ls.asarray(A0) @ np.ones(6)


@pytest.mark.parametrize("make, sched, exc, msg", [
    (_spmv, ls.Schedule().pos("i0", "p", "T1"), ValueError, "'T1' is not indexed by i0"),
    (_spmv, ls.Schedule().fuse("i0", "i1", "f").pos("f", "p", "T9"), ValueError, "'T9' is not an operand"),
    (lambda: ls.asarray(np.ones(9)) @ ls.asarray(_csr(9, 6, 0.4, 8)),
     ls.Schedule().fuse("i0", "i1", "f"), ValueError, "'i1' is not directly nested under 'i0'"),
    (_spmv, ls.Schedule().reorder("i1", "i0"), ValueError, "against its format's mode order"),
    (lambda: ls.asarray(np.ones(9)) @ ls.asarray(_csr(9, 6, 0.4, 8)),
     ls.Schedule().parallelize("i1"), ValueError, "races='no-races' cannot hold"),
    (_spmv, ls.Schedule().fuse("i0", "i1", "f").pos("f", "p", "T0").split("p", "p0", "p1", 4)
     .parallelize("p0"), ValueError, "races='no-races' cannot hold"),
    (lambda: ls.asarray(_csr(9, 6, 0.4, 8)) + ls.asarray(_csr(9, 6, 0.4, 9)),
     ls.Schedule().parallelize("i1"), ValueError, "co-iterates T0, T1"),
    (lambda: ls.asarray(_csr(9, 6, 0.4, 8)) + ls.asarray(_csr(9, 6, 0.4, 9)),
     ls.Schedule().parallelize("i0"), ValueError, "takes no concurrent inserts, and no operand holds"),
    (_spmv, ls.Schedule().split("zz", "a", "b", 2), ValueError, "names index variable 'zz'"),
    (_spmv, ls.Schedule().split("i1", "a", "b", 2), NotImplementedError, "walks stored entries"),
    (_spmv, ls.Schedule().split("i0", "a", "b", 2).bound("b", "bb", 2), NotImplementedError, "bounding the derived loop"),
    (_spmv, ls.Schedule().parallelize("i0", unit="cpu-vector", races="atomics"), NotImplementedError,
     "vector lanes with races='atomics'"),
])
def test_rejections_name_the_transformation_and_the_reason(make, sched, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(")", r"\)")):
        make().materialize(schedule=sched)


def test_a_schedule_does_not_leak_into_later_unscheduled_calls():
    A0 = _csr(40, 40, 0.2, 10)
    A = ls.asarray(A0)
    x0 = np.ones(40)
    (A @ x0).materialize(schedule=FIG4)
    c = _kernel_c(ls.explain(A @ x0))
    assert "ls_nnz" not in c
    np.testing.assert_allclose((A @ x0).materialize().todense(), A0 @ x0)


# -- tensors: tiles of a CSF operand's (i, j) fibers (the paper's TTV and MTTKRP schedules) --------
def _tensor(shape, density, seed):
    import sparse
    T = sparse.random(shape, density=density, random_state=seed)
    return T, T.todense()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("factor", [1, 5, 64])
def test_ttv_tiles_of_fibers(threads, factor):
    ls.set_num_threads(threads)
    T, Td = _tensor((13, 11, 9), 0.1, 1)
    Td[4] = 0  # an empty slice: its fibers are absent from the tree
    import sparse
    T = sparse.COO.from_numpy(Td)
    v = np.random.default_rng(1).random(9)
    s = (ls.Schedule().fuse("i0", "i1", "f").pos("f", "fpos", "T0").split("fpos", "chunk", "fpos2", factor)
         .parallelize("chunk"))  # (i, j) are result indices: no races
    out = ls.einsum("ijk,k->ij", ls.asarray(T, format="csf"), v).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), np.einsum("ijk,k->ij", Td, v), rtol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_mttkrp_tiles_of_slices_add_atomically(threads):
    ls.set_num_threads(threads)
    T, Td = _tensor((17, 10, 8), 0.15, 2)
    rng = np.random.default_rng(2)
    C, D = rng.random((10, 5)), rng.random((8, 5))
    s = (ls.Schedule().fuse("i0", "i2", "f").pos("f", "p", "T0").split("p", "p0", "p1", 3)
         .parallelize("p0", races="atomics"))
    out = ls.einsum("ikl,kj,lj->ij", ls.asarray(T, format="csf"), C, D).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), np.einsum("ikl,kj,lj->ij", Td, C, D), rtol=1e-12)


# -- the paper's per-kernel CPU schedules that lower, in the kernels' names ------------------------
DSS = ls.Format(["dense", "compressed", "compressed"])


def test_cpu_spmv_schedule_of_the_paper():
    ls.set_num_threads(2)
    A0 = _csr(75, 31, 0.2, 11, skew=True)
    x0 = np.random.default_rng(11).random(31)
    s = ls.Schedule().split("i0", "r0", "r1", 32).reorder("r0", "r1", "i1").parallelize("r0")
    np.testing.assert_allclose((ls.asarray(A0) @ x0).materialize(schedule=s).todense(), A0 @ x0)


def test_cpu_ttv_schedule_of_the_paper():
    ls.set_num_threads(2)
    T, Td = _tensor((9, 14, 12), 0.1, 12)
    v = np.random.default_rng(12).random(12)
    s = (ls.Schedule().fuse("i0", "i1", "f").pos("f", "fpos", "T0").split("fpos", "chunk", "fpos2", 32)
         .reorder("chunk", "fpos2", "i2").parallelize("chunk"))
    out = ls.einsum("ijk,k->ij", ls.asarray(T, format=DSS), v).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), np.einsum("ijk,k->ij", Td, v), rtol=1e-12)


def test_cpu_mttkrp_schedule_of_the_paper():
    ls.set_num_threads(2)
    T, Td = _tensor((70, 9, 8), 0.1, 13)
    rng = np.random.default_rng(13)
    C, D = rng.random((9, 6)), rng.random((8, 6))
    s = ls.Schedule().split("i0", "r1", "r2", 64).parallelize("r1")
    out = ls.einsum("ikl,kj,lj->ij", ls.asarray(T, format=DSS), C, D).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), np.einsum("ikl,kj,lj->ij", Td, C, D), rtol=1e-12)


def test_vector_lanes_on_a_dense_loop():
    ls.set_num_threads(2)
    A0 = _csr(20, 20, 0.2, 14)
    X0 = np.random.default_rng(14).random((20, 8))
    s = ls.Schedule().split("i0", "r0", "r1", 8).parallelize("r0").parallelize("i1", unit="cpu-vector",
                                                                               races="ignore-races")
    c = _kernel_c(ls.explain(ls.asarray(A0) @ X0, schedule=s))
    assert "#pragma omp simd" in c
    np.testing.assert_allclose((ls.asarray(A0) @ X0).materialize(schedule=s).todense(), A0 @ X0)
    bad = ls.Schedule().parallelize("i2", unit="cpu-vector", races="ignore-races")
    with pytest.raises(NotImplementedError, match="vector lanes on 'i2', which walks T0"):
        (ls.asarray(A0) @ X0).materialize(schedule=bad)


@pytest.mark.parametrize("sched", [
    ls.Schedule().parallelize("i2", unit="cpu-vector", races="parallel-reduction"),
    ls.Schedule().split("i2", "k0", "k1", 8).parallelize("k1", unit="cpu-vector", races="parallel-reduction"),
    ls.Schedule().split("i0", "r0", "r1", 4).parallelize("r0")
      .parallelize("i2", unit="cpu-vector", races="parallel-reduction"),
], ids=["whole", "split", "threads-and-lanes"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_vector_lanes_with_a_parallel_reduction(sched, dtype):
    """Lanes of the innermost reduction loop each sum privately (``omp simd reduction``): on
    a length (37) the split factor does not divide, so the guarded tail clone stays scalar."""
    ls.set_num_threads(2)
    rng = np.random.default_rng(15)
    X, Y = (rng.random((13, 37)) * 10).astype(dtype), (rng.random((5, 37)) * 10).astype(dtype)
    e = ls.einsum("ik,jk->ij", ls.asarray(X), ls.asarray(Y))
    c = _kernel_c(ls.explain(e, schedule=sched))
    assert "#pragma omp simd reduction(+:acc) reduction(+:cnt)" in c
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(e.materialize(schedule=sched).todense(), X @ Y.T, rtol=rtol)


@pytest.mark.parametrize("make, sched, exc, msg", [
    (lambda: ls.einsum("ik,jk->ij", ls.asarray(np.ones((3, 4))), ls.asarray(np.ones((2, 4)))),
     ls.Schedule().parallelize("i2", unit="cpu-vector", races="no-races"), ValueError,
     "runs reduction variable 'i2'"),
    (lambda: ls.einsum("ik,jk->ij", ls.asarray(np.ones((3, 4))), ls.asarray(np.ones((2, 4)))),
     ls.Schedule().reorder("i0", "i2", "i1").parallelize("i2", unit="cpu-vector", races="parallel-reduction"),
     NotImplementedError, "does not sum innermost into one scalar"),
    (lambda: ls.asarray(np.ones((3, 4))).max(axis=1),
     ls.Schedule().parallelize("i1", unit="cpu-vector", races="parallel-reduction"), NotImplementedError,
     "reducing 'i1' by max"),
    (lambda: ls.asarray(_csr(9, 6, 0.4, 8)) @ np.ones(6),
     ls.Schedule().fuse("i0", "i1", "f").pos("f", "p", "T0").split("p", "p0", "p1", 4)
     .parallelize("p1", unit="cpu-vector", races="parallel-reduction"), NotImplementedError,
     "which walks a tile's or chunk's entries"),
])
def test_vector_lanes_that_cannot_hold_are_refused(make, sched, exc, msg):
    with pytest.raises(exc, match=msg):
        make().materialize(schedule=sched)


# -- bound and unroll: constant trip counts, and guards only where a bound does not cover them ----
@pytest.mark.parametrize("factor, guarded", [(32, False), (36, True)])
def test_bound_gives_constant_trips_and_drops_the_guard_it_proves_needless(factor, guarded):
    ls.set_num_threads(2)
    A0 = _csr(96, 40, 0.1, 15, skew=True)
    x0 = np.random.default_rng(15).random(40)
    A = ls.asarray(A0)
    s = ls.Schedule().bound("i0", "ib", 96).split("ib", "a", "b", factor).unroll("b", 4).parallelize("a")
    c = _kernel_c(ls.explain(A @ x0, schedule=s))
    assert f"x0o < ((96) + {factor} - 1) / {factor}" in c and "N0)" not in c.split("x0o")[1]
    assert ("if (x0 >= 96) break;" in c) == guarded
    assert "#pragma GCC unroll 4" in c
    np.testing.assert_allclose((A @ x0).materialize(schedule=s).todense(), A0 @ x0)


def test_a_bound_that_does_not_hold_is_an_error_not_a_wrong_result():
    A0 = _csr(95, 40, 0.1, 16)
    with pytest.raises(ValueError, match="bound states that i0 ranges over 96, but .* ranges over 95"):
        (ls.asarray(A0) @ np.ones(40)).materialize(schedule=ls.Schedule().bound("i0", "ib", 96))


def test_unroll_of_a_row_loop_and_of_a_bound_loop():
    A0 = _csr(50, 30, 0.2, 17)
    x0 = np.random.default_rng(17).random(30)
    for s in (ls.Schedule().unroll("i0", 4), ls.Schedule().bound("i0", "ib", 50).unroll("ib", 2)):
        c = _kernel_c(ls.explain(ls.asarray(A0) @ x0, schedule=s))
        assert "#pragma GCC unroll" in c
        np.testing.assert_allclose((ls.asarray(A0) @ x0).materialize(schedule=s).todense(), A0 @ x0)
    with pytest.raises(ValueError, match="'zz' is not a loop"):
        (ls.asarray(A0) @ x0).materialize(schedule=ls.Schedule().unroll("zz", 2))


# -- interleaved splits: tiles of two variables (a split's outer loop away from its inner one) ----
@pytest.mark.parametrize("threads", [1, 2])
def test_interleaved_row_and_column_tiles_of_an_spmm(threads):
    ls.set_num_threads(threads)
    A0 = _csr(37, 23, 0.2, 18, empty_rows=(5,), skew=True)
    X0 = np.random.default_rng(18).random((23, 10))
    s = (ls.Schedule().split("i0", "r0", "r1", 4).split("i1", "c0", "c1", 3)
         .reorder("r0", "c0", "r1", "i2", "c1").parallelize("r0"))
    c = _kernel_c(ls.explain(ls.asarray(A0) @ X0, schedule=s))
    r0, c0, r1 = c.index("for (int64_t x0o"), c.index("for (int64_t x2o"), c.index("for (int64_t x0i")
    assert r0 < c0 < r1  # the column tiles' loop between the row tiles' two loops
    out = (ls.asarray(A0) @ X0).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), A0 @ X0, rtol=1e-12)


def test_interleaved_tiles_of_a_dense_reduction_sum_into_the_result():
    rng = np.random.default_rng(19)
    M, y = rng.random((13, 11)), rng.random(11)
    s = ls.Schedule().split("i0", "a0", "a1", 4).split("i1", "b0", "b1", 3).reorder("a0", "b0", "a1", "b1")
    out = (ls.asarray(M) @ y).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), M @ y, rtol=1e-12)


def test_an_interleaving_against_the_format_is_refused():
    A0 = _csr(10, 8, 0.3, 20)
    s = ls.Schedule().split("i0", "a0", "a1", 4).reorder("a0", "i1", "a1")
    with pytest.raises(ValueError, match="against its format's mode order"):
        (ls.asarray(A0) @ np.ones(8)).materialize(schedule=s)


# -- position splits inside a segment: pos(j).split (the paper's CPU SpMM schedule) ----------------
@pytest.mark.parametrize("factor", [1, 3, 64])
def test_chunks_of_each_row_sum_the_same(factor):
    A0 = _csr(41, 29, 0.3, 21, empty_rows=(0, 7), skew=True)
    x0 = np.random.default_rng(21).random(29)
    s = ls.Schedule().pos("i1", "p", "T0").split("p", "p0", "p1", factor)
    c = _kernel_c(ls.explain(ls.asarray(A0) @ x0, schedule=s))
    assert f"khi0_1 = klo0_1 + {factor} < kz0_1 ? klo0_1 + {factor} : kz0_1;" in c
    np.testing.assert_allclose((ls.asarray(A0) @ x0).materialize(schedule=s).todense(), A0 @ x0)
    out = (ls.asarray(A0) * 2.0).materialize(format="csr", schedule=s)  # appended in order
    np.testing.assert_allclose(out.todense(), (A0 * 2.0).toarray())


@pytest.mark.parametrize("threads", [1, 2])
def test_cpu_spmm_schedule_of_the_paper(threads):
    ls.set_num_threads(threads)
    A0 = _csr(45, 33, 0.25, 22, empty_rows=(4,), skew=True)
    X0 = np.random.default_rng(22).random((33, 12))
    s = (ls.Schedule().split("i0", "i00", "i01", 8).pos("i2", "jpos", "T0")
         .split("jpos", "jpos0", "jpos1", 8).reorder("i00", "i01", "jpos0", "i1", "jpos1")
         .parallelize("i00").parallelize("i1", unit="cpu-vector", races="ignore-races"))
    text = ls.explain(ls.asarray(A0) @ X0, schedule=s)
    assert "loops i00, i01, jpos0, i1, jpos1; i00 on threads (no-races); i1 on vector lanes" in text
    c = _kernel_c(text)
    chunk, k, inner = c.index("for (int64_t k0_1"), c.index("for (int64_t x1 ="), c.index("for (int64_t j0_1")
    assert chunk < k < inner  # i00, i01, jpos0, k, jpos1
    assert "#pragma omp simd" in c[chunk:k]  # k on vector lanes
    out = (ls.asarray(A0) @ X0).materialize(schedule=s)
    np.testing.assert_allclose(out.todense(), A0 @ X0, rtol=1e-12)


def test_chunks_of_a_co_iterated_loop_are_refused():
    A0, B0 = _csr(9, 6, 0.4, 23), _csr(9, 6, 0.4, 24)
    s = ls.Schedule().pos("i1", "p", "T0").split("p", "p0", "p1", 2)
    with pytest.raises(NotImplementedError, match="also walks other operands"):
        (ls.asarray(A0) + ls.asarray(B0)).materialize(schedule=s)


# -- sparse results on threads ---------------------------------------------------------------------
SPARSE_OUT = [ls.Schedule().parallelize("i0"),
              ls.Schedule().split("i0", "r0", "r1", 8).parallelize("r0"),
              ls.Schedule().divide("i0", "r0", "r1", 3).parallelize("r0")]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sched", SPARSE_OUT, ids=["rows", "split8", "divide3"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sddmm_with_a_csr_result_runs_on_threads(threads, sched, dtype):
    ls.set_num_threads(threads)
    A0 = _csr(101, 57, 0.1, 21, dtype=dtype, empty_rows=(0, 3, 100), skew=True)
    rng = np.random.default_rng(21)
    U, V = rng.random((101, 16)).astype(dtype), rng.random((57, 16)).astype(dtype)
    e = ls.einsum("ij,ik,jk->ij", ls.asarray(A0), U, V, format="csr")
    text = ls.explain(e, schedule=sched)
    assert "#pragma omp" in _kernel_c(text) and "result: ls.csr" in text
    out = e.materialize(schedule=sched)
    assert out.format == ls.csr
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.todense(), A0.toarray() * (U @ V.T), rtol=rtol)
    S = out.to_scipy()
    assert S.has_sorted_indices and S.nnz == np.count_nonzero(A0.toarray() * (U @ V.T))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sched", SPARSE_OUT, ids=["rows", "split8", "divide3"])
def test_ttv_with_a_dense_compressed_result_runs_on_threads(threads, sched):
    ls.set_num_threads(threads)
    T, Td = _tensor((13, 11, 9), 0.1, 22)
    Td[4] = 0  # an empty slice
    import sparse
    T = sparse.COO.from_numpy(Td)
    v = np.random.default_rng(22).random(9)
    e = ls.einsum("ijk,k->ij", ls.asarray(T, format=DSS), v, format="csr")
    out = e.materialize(schedule=sched)
    assert out.format == ls.csr
    np.testing.assert_allclose(out.todense(), np.einsum("ijk,k->ij", Td, v), rtol=1e-12)


def test_an_intersection_writes_its_csr_result_from_threads():
    ls.set_num_threads(2)
    A0, B0 = _csr(40, 30, 0.3, 23, empty_rows=(5,)), _csr(40, 30, 0.3, 24)
    out = (ls.asarray(A0) * ls.asarray(B0)).materialize(format="csr", schedule=SPARSE_OUT[1])
    assert out.format == ls.csr
    np.testing.assert_array_equal(out.todense(), A0.toarray() * B0.toarray())


@pytest.mark.parametrize("make, sched, exc, msg", [
    (lambda: ls.asarray(_csr(9, 6, 0.4, 8)) @ ls.asarray(_csr(6, 7, 0.4, 9)), SPARSE_OUT[0],
     ValueError, "no operand holds its structure"),
    (lambda: ls.einsum("ij,ik,jk->ij", ls.asarray(_csr(9, 6, 0.4, 8)), np.ones((9, 3)), np.ones((6, 3))),
     ls.Schedule().workspace("hash").parallelize("i0"), NotImplementedError, "one workspace per thread"),
    (lambda: ls.einsum("ij,ik,jk->ij", ls.asarray(_csr(9, 6, 0.4, 8)), np.ones((9, 3)), np.ones((6, 3))),
     ls.Schedule().fuse("i0", "i1", "f").pos("f", "p", "T0").split("p", "p0", "p1", 4).parallelize("p0"),
     NotImplementedError, "tiles of stored entries writing a ls.csr result"),
])
def test_other_sparse_results_on_threads_are_refused(make, sched, exc, msg):
    """A result without an operand that holds its structure takes inserts in order: refused."""
    with pytest.raises(exc, match=msg):
        make().materialize(schedule=sched, format="csr")


def test_an_sddmm_with_its_sum_between_rows_and_columns_locates_its_entries():
    """Order i, k, j: the mask is searched for each (i, j) under k, not walked; still each
    row's entries belong to one thread."""
    ls.set_num_threads(2)
    A0 = _csr(33, 20, 0.3, 25, empty_rows=(2,))
    rng = np.random.default_rng(25)
    U, V = rng.random((33, 5)), rng.random((20, 5))
    e = ls.einsum("ij,ik,jk->ij", ls.asarray(A0), U, V, format="csr")
    out = e.materialize(schedule=ls.Schedule().reorder("i0", "i2", "i1").parallelize("i0"))
    assert out.format == ls.csr
    np.testing.assert_allclose(out.todense(), A0.toarray() * (U @ V.T), rtol=1e-12)


# -- a schedule on an expression of several operations --------------------------------------------
def test_an_sddmm_written_as_two_operations_runs_as_one_scheduled_statement():
    """``A * (U @ V.T)`` under a schedule inlines into ``sum_k A[i,j] U[i,k] V[j,k]`` (named as a
    single operation's indices): one kernel over A's entries, rows on threads, the sum on
    vector lanes, a CSR result; per operation it would form the dense 60 x 45 product first."""
    ls.set_num_threads(2)
    A0 = _csr(60, 45, 0.1, 31, empty_rows=(0, 7), skew=True)
    rng = np.random.default_rng(31)
    U, V = rng.random((60, 12)), rng.random((45, 12))
    e = ls.asarray(A0) * (ls.asarray(U) @ ls.asarray(V).T)
    s = (ls.Schedule().split("i0", "r0", "r1", 8).parallelize("r0")
         .parallelize("i2", unit="cpu-vector", races="parallel-reduction"))
    text = ls.explain(e, schedule=s)
    kernels = [ln for ln in text.splitlines() if ln.startswith("kernel ")]
    assert kernels == ["kernel 0: out[i0,i1] = sum_{i2} multiply(T0[i0,i1], multiply(T1[i0,i2], T2[i1,i2]))"]
    assert "#pragma omp simd reduction(+:acc)" in _kernel_c(text)
    want = A0.toarray() * (U @ V.T)
    out = e.materialize(format="csr", schedule=s)
    assert out.format == ls.csr
    np.testing.assert_allclose(out.todense(), want, rtol=1e-12)
    np.testing.assert_allclose(e.materialize(schedule=s).todense(), want, rtol=1e-12)


def test_an_expression_whose_inlining_nests_sums_keeps_one_kernel_per_operation():
    """``A @ (X @ W)`` as one statement would sum over k and l together (nnz * H * J work
    instead of N * H * J + nnz * J): each operation's kernel takes the schedule instead."""
    ls.set_num_threads(2)
    A0 = _csr(40, 30, 0.2, 32)
    rng = np.random.default_rng(32)
    X, W = rng.random((30, 6)), rng.random((6, 5))
    e = ls.asarray(A0) @ (ls.asarray(X) @ ls.asarray(W))
    s = ls.Schedule().split("i0", "r0", "r1", 4).parallelize("r0")
    assert sum(ln.startswith("kernel ") for ln in ls.explain(e, schedule=s).splitlines()) == 2
    np.testing.assert_allclose(e.materialize(schedule=s).todense(), A0 @ (X @ W), rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(0, 45), n=st.integers(1, 30), density=st.floats(0, 0.6),
       factor=st.integers(1, 40), seed=st.integers(0, 10_000),
       how=st.sampled_from(["plain", "split", "divide"]), threads=st.sampled_from([1, 2, 3]),
       dtype=st.sampled_from([np.float64, np.float32, np.int64]))
def test_a_reduction_loop_on_threads_with_private_copies(m, n, density, factor, seed, how, threads, dtype):
    """``parallelize(var, races="temporary")`` on a reduction loop: each thread sums into a
    private copy of the dense result, the copies added after (``Lowerer.private_loop``); against
    NumPy, over sizes that do not divide the factors."""
    A0 = _csr(m, n, density, seed).astype(dtype)
    x0 = np.random.default_rng(seed).integers(-3, 4, m).astype(dtype)
    s = {"plain": ls.Schedule(),
         "split": ls.Schedule().split("i1", "i1o", "i1i", factor),
         "divide": ls.Schedule().divide("i1", "i1o", "i1i", factor)}[how]
    s = s.parallelize("i1" if how == "plain" else "i1o", races="temporary")
    ls.set_num_threads(threads)
    try:
        e = _kernel_c(ls.explain(x0 @ ls.asarray(A0), schedule=s))
        assert "ls_pv" in e and "#pragma omp atomic" not in e
        out = (x0 @ ls.asarray(A0)).materialize(schedule=s)
    finally:
        ls.set_num_threads(1)
    want = x0 @ A0.toarray()
    if np.dtype(dtype).kind == "f":
        tol = 1e-4 if dtype == np.float32 else 1e-11  # (sums that cancel: an absolute bound too)
        np.testing.assert_allclose(out.todense(), want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(out.todense(), want)


def test_private_copies_need_a_result_with_indices():
    A0 = _csr(30, 20, 0.3, 1)
    x0 = np.random.default_rng(1).random(30)
    with pytest.raises(ValueError, match="races='temporary' gives each thread a private copy"):
        ls.einsum("ij,i->", ls.asarray(A0), ls.asarray(x0)).materialize(
            schedule=ls.Schedule().parallelize("i0", races="temporary"))
