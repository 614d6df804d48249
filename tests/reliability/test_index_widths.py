"""Index widths.

* Operands with int32 and int64 index arrays mix freely (each operand slot of a kernel has its
  own index type).
* A sparse result gets int32 indices when every extent and its nonzero bound fit (scipy's
  choice, and what lets ``to_scipy`` share buffers), int64 otherwise, automatically.
* Dimensions beyond 2**31 work for shape-only arrays (huge shape, few nonzeros): coordinates are
  kept exactly, and nothing O(extent) is allocated (the memory limit is set low to prove it;
  O(extent) sparse buffers would be 8 TiB here and fail too).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import sparse as pydata

import lazysparse as ls
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.kernel import INT32_MAX, output_index_dtype
from lazysparse.formats import resolve_format

I32, I64 = np.dtype(np.int32), np.dtype(np.int64)


def csr(D, width):
    S = sp.csr_array(D)
    out = sp.csr_array((S.data, S.indices.astype(width), S.indptr.astype(width)), shape=S.shape)
    assert out.indices.dtype == width  # scipy keeps what it is given
    return out


def csc(D, width):
    S = sp.csc_array(D)
    return sp.csc_array((S.data, S.indices.astype(width), S.indptr.astype(width)), shape=S.shape)


def coo(D, width):
    r, c = np.nonzero(D)
    return sp.coo_array((D[r, c], (r.astype(width), c.astype(width))), shape=D.shape)


def operand(D, kind, width):
    """``ls.Array`` of ``D`` with index arrays of ``width`` (dcsr: converted from such a csr)."""
    if kind == "dcsr":
        A = ls.asarray(csr(D, width), format="dcsr")
    else:
        A = ls.asarray({"csr": csr, "csc": csc, "coo": coo}[kind](D, width))
        assert A.storage.index_dtype == width
    return A


def dense_of(x):
    return x.to_scipy().toarray() if x.ndim == 2 and x.format.name in ("csr", "csc", "coo") else x.todense()


RNG = np.random.default_rng(7)
D1 = np.where(RNG.random((6, 5)) < 0.5, RNG.integers(1, 9, (6, 5)), 0).astype(np.float64)
D2 = np.where(RNG.random((6, 5)) < 0.5, RNG.integers(1, 9, (6, 5)), 0).astype(np.float64)

MIXED = {
    "csr+csr": (("csr", "csr"), lambda a, b: a + b, lambda a, b: a + b),
    "csr*csc": (("csr", "csc"), lambda a, b: a * b, lambda a, b: a * b),
    "csr@csr.T": (("csr", "csr"), lambda a, b: a @ b.T, lambda a, b: a @ b.T),
    "coo-dcsr": (("coo", "dcsr"), lambda a, b: a - b, lambda a, b: a - b),
}


@pytest.mark.parametrize("widths", [(I32, I64), (I64, I32)], ids=["32-64", "64-32"])
@pytest.mark.parametrize("case", sorted(MIXED))
def test_mixed_index_widths(case, widths):
    (ka, kb), f, ref = MIXED[case]
    A, B = operand(D1, ka, widths[0]), operand(D2, kb, widths[1])
    r = f(A, B).materialize()
    np.testing.assert_array_equal(dense_of(r), ref(D1, D2))
    if not r.format.is_dense:
        # small extents and counts: int32, whatever the operands had (as scipy does)
        assert r.storage.index_dtype == I32, (r.format, r.storage.index_dtype)
        for a in r.storage.pos + r.storage.crd:
            assert a is None or a.dtype == I32


def test_int32_result_is_shared_with_scipy():
    r = (operand(D1, "csr", I64) * 2).materialize()
    assert r.format == ls.csr and r.storage.index_dtype == I32
    S = r.to_scipy()
    assert S.indices.dtype == I32 and np.shares_memory(S.indices, r.storage.crd[1])


def test_output_index_dtype_rule():
    csr2, coo2 = resolve_format("csr", 2), resolve_format("coo", 2)
    assert output_index_dtype(csr2, (10, INT32_MAX), 5) == "int32"
    assert output_index_dtype(csr2, (10, INT32_MAX + 1), 5) == "int64"          # a coordinate may not fit
    assert output_index_dtype(coo2, (INT32_MAX, INT32_MAX), 5) == "int32"        # few entries
    assert output_index_dtype(coo2, (INT32_MAX, INT32_MAX), INT32_MAX + 1) == "int64"  # a position may not
    assert output_index_dtype(csr2, (40000, 60000), 10**9) == "int32"
    assert output_index_dtype(csr2, (40000, 60000), 3 * 10**9) == "int64"
    # the nonzero bound of an intersection is its smallest operand, of a union the sum
    nnz = {0: 7, 1: 3}.get
    assert P.bound_count(P.conj(P.var(0), P.var(1)), nnz, 10**12) == 3
    assert P.bound_count(P.disj(P.var(0), P.var(1)), nnz, 10**12) == 10
    assert P.bound_count(P.TRUE, nnz, 10**12) == 10**12


def test_many_elements_few_nonzeros_keep_int32_where_they_fit():
    """70000 x 70000 has more elements than int32 can count, but each coordinate and the nonzero
    counts fit: appended results stay int32; any result is exact."""
    n = 70_000
    rows = np.array([0, 5, n - 1, n - 1], dtype=np.int32)
    cols = np.array([n - 1, 3, 0, n - 2], dtype=np.int32)
    S = sp.csr_array((np.array([1.0, 2.0, 3.0, 4.0]), (rows, cols)), shape=(n, n))
    S = sp.csr_array((S.data, S.indices.astype(np.int32), S.indptr.astype(np.int32)), shape=(n, n))
    A = ls.asarray(S)
    r = (A * 2 + A).materialize()
    assert r.storage.index_dtype == I32
    assert abs(r.to_scipy() - 3 * S).max() == 0
    t = A.T.tocsr()  # a transposition by sort: the bound is the full size, so int64 is allowed
    assert t.format == ls.csr
    assert abs(t.to_scipy() - S.T.tocsr()).max() == 0
    col = A.sum(axis=0).materialize(format="coo")
    np.testing.assert_array_equal(col.todense()[[0, 3, n - 2, n - 1]], [3.0, 2.0, 4.0, 1.0])


# -- dimensions beyond int32 --------------------------------------------------------------------
N = 2**40 + 3
BIG = [0, 5, 2**31 + 1, 2**32 + 7, N - 1]  # int32 truncation would wrap 2**31+1 and 2**32+7


@pytest.fixture
def low_memory_limit(monkeypatch):
    # anything dense over a huge extent is refused at once instead of being tried
    monkeypatch.setenv("LAZYSPARSE_MEMORY_LIMIT", "64M")


def entries(x):
    """{coordinate tuple: value} of a sparse result, read from its levels (O(nnz) here: no dense
    level of a huge extent is expected); every index array must be int64."""
    st = x.storage
    fmt = st.format
    assert not fmt.is_dense
    assert st.index_dtype == I64
    for a in st.pos + st.crd:
        assert a is None or a.dtype == I64
    out = {}

    def walk(l, p, coord):
        if l == len(fmt.levels):
            key = [0] * len(coord)
            for lv, c in enumerate(coord):
                key[fmt.order[lv]] = c
            assert tuple(key) not in out
            out[tuple(key)] = st.vals[p].item()
            return
        kind = fmt.levels[l].kind
        if kind == "dense":
            n = st.level_size(l)
            assert n < 1000
            for c in range(n):
                walk(l + 1, p * n + c, coord + [c])
        elif kind == "compressed":
            b, e = int(st.pos[l][p]), int(st.pos[l][p + 1])
            steps = np.diff(st.crd[l][b:e])
            assert np.all(steps > 0) if fmt.levels[l].unique else np.all(steps >= 0)  # ordered
            for q in range(b, e):
                walk(l + 1, q, coord + [int(st.crd[l][q])])
        else:
            walk(l + 1, p, coord + [int(st.crd[l][p])])

    walk(0, 0, [])
    return out


def vec(coords, vals):
    return ls.asarray(pydata.COO(np.array([coords], dtype=np.int64), np.array(vals, dtype=np.float64), shape=(N,)))


def test_huge_vector(low_memory_limit):
    v = vec(BIG, [1.0, 2.0, 3.0, 4.0, 5.0])
    w = vec([5, 2**32 + 7, 2**32 + 8], [10.0, 20.0, 30.0])
    assert v.shape == (N,) and v.storage.index_dtype == I64
    V, W = dict(zip([(c,) for c in BIG], [1.0, 2.0, 3.0, 4.0, 5.0])), {(5,): 10.0, (2**32 + 7,): 20.0, (2**32 + 8,): 30.0}
    assert entries(v * 2) == {k: 2 * x for k, x in V.items()}
    assert entries(v * w) == {(5,): 20.0, (2**32 + 7,): 80.0}
    assert entries(v + w) == {k: V.get(k, 0.0) + W.get(k, 0.0) for k in V.keys() | W.keys()}
    assert entries(v - w) == {k: V.get(k, 0.0) - W.get(k, 0.0) for k in V.keys() | W.keys()}
    assert entries(v > 2.5) == {k: True for k, x in V.items() if x > 2.5}
    assert entries(-v) == {k: -x for k, x in V.items()}
    assert float(v.sum()) == 15.0
    assert float(v @ w) == 2 * 10 + 4 * 20
    assert float(ls.einsum("i,i->", v, w)) == 100.0
    assert float(v.max()) == 5.0 and float(v.min()) == 0.0  # implicit zeros count
    with pytest.raises(MemoryError):  # exp(0) = 1 everywhere: dense, refused before allocating
        ls.exp(v).materialize()


def huge_csr():
    cols = np.array([0, 2**31 + 1, 2**32 + 7, N - 1], dtype=np.int64)
    indptr = np.array([0, 1, 3, 3, 4], dtype=np.int64)
    return sp.csr_array((np.array([1.0, 2.0, 3.0, 4.0]), cols, indptr), shape=(4, N))


def test_huge_columns(low_memory_limit):
    S = huge_csr()
    A = ls.asarray(S)
    E = {(0, 0): 1.0, (1, 2**31 + 1): 2.0, (1, 2**32 + 7): 3.0, (3, N - 1): 4.0}
    assert entries(A * 2) == {k: 2 * v for k, v in E.items()}
    assert entries(A + A * A) == {k: v + v * v for k, v in E.items()}
    assert entries(A.T) == {(j, i): v for (i, j), v in E.items()}
    assert entries(A.tocoo()) == E and entries(A.asformat("dcsr")) == E
    np.testing.assert_array_equal(A.sum(axis=1).todense(), [1.0, 5.0, 0.0, 4.0])
    np.testing.assert_array_equal(A.max(axis=1).todense(), [1.0, 3.0, 0.0, 4.0])
    # a reduction over the small axis: a sparse vector of extent N, assembled by sorting
    col = A.sum(axis=0)
    assert col.shape == (N,)
    assert entries(col) == {(j,): v for (i, j), v in E.items()}
    back = (A * 1.0).to_scipy()
    assert back.indices.dtype == I64 and back.shape == (4, N)
    assert abs(back - S).max() == 0


def test_huge_coo_both_dimensions(low_memory_limit):
    r = np.array([0, 2**31 + 1, 2**32 + 7, N - 1], dtype=np.int64)
    c = np.array([N - 1, 3, 2**32 + 7, 0], dtype=np.int64)
    C = ls.asarray(sp.coo_array((np.array([1.0, 2.0, 3.0, 4.0]), (r, c)), shape=(N, N)))
    E = {(int(i), int(j)): v for i, j, v in zip(r, c, [1.0, 2.0, 3.0, 4.0])}
    assert entries(C * C + C) == {k: v * v + v for k, v in E.items()}
    assert entries(C.sum(axis=1)) == {(i,): v for (i, j), v in E.items()}
    assert entries(C.sum(axis=0)) == {(j,): v for (i, j), v in E.items()}
    assert entries(C.T * 3) == {(j, i): 3 * v for (i, j), v in E.items()}
    assert float(C.sum()) == 10.0


def test_huge_extents_sorted_without_histograms(low_memory_limit):
    """Results assembled by sorting (another mode order, a reduction over the outer mode) over
    extents of 2**40: merge sorts by level, stable, so that duplicates combine and every level
    comes out ordered."""
    rng = np.random.default_rng(11)
    r, c = rng.integers(0, N, 300), rng.integers(0, N, 300)
    r[100:200], c[150:250] = r[:100], c[:100]  # shared rows and columns
    v = rng.standard_normal(300)
    C = ls.asarray(sp.coo_array((v, (r, c)), shape=(N, N)))
    E = {}
    for i, j, x in zip(r.tolist(), c.tolist(), v.tolist()):
        E[i, j] = E.get((i, j), 0.0) + x
    got = entries(C.asformat("dcsc"))
    assert got.keys() == E.keys() and all(abs(got[k] - E[k]) < 1e-12 for k in E)
    cols = {}
    for (i, j), x in E.items():
        cols[j,] = cols.get((j,), 0.0) + x
    got = entries(C.sum(axis=0))
    assert got.keys() == cols.keys() and all(abs(got[k] - cols[k]) < 1e-12 for k in cols)


def test_huge_inner_dimension_product(low_memory_limit):
    A = ls.asarray(huge_csr())
    np.testing.assert_array_equal((A @ A.T).todense(),
                                  [[1, 0, 0, 0], [0, 13, 0, 0], [0, 0, 0, 0], [0, 0, 0, 16]])
