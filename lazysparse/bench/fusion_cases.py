"""The fused-kernel benchmark's cases (``python -m lazysparse.bench.fusion``): for one kernel,
parameter and input, the scipy/NumPy oracle and every column's call, lazysparse's fusion modes
and each peer's best idiomatic form (torch, GraphBLAS, pydata/sparse, finch)."""
from __future__ import annotations

KERNELS = ("sddmm", "gnn1", "gnn2", "mttkrp")
MATRIX_KERNELS = ("sddmm", "gnn1", "gnn2")
VARIANTS = ("auto", "max", "none")
PEERS = ("scipy", "pydata", "torch", "graphblas", "finch")
GNN1_H, GNN1_J, GNN2_K = 128, 16, 32
QUICK_MATRICES = ("bcsstk13", "fe_4elt2")
QUICK_TENSORS = ("wn18rr",)


# ---------------------------------------------------------------------------------------------
# the scipy/NumPy column (and oracle)

def sddmm_np(A, U, V, rows=None):
    """The best plain scipy/NumPy SDDMM ``A * (U @ V.T)``: one dot product per stored entry of A,
    gathered in chunks of about 1 MB (cache-resident; never the dense product, never nnz x K at once)."""
    import numpy as np
    import scipy.sparse as sp
    if rows is None:
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    cols = A.indices
    out = np.empty(A.nnz, dtype=np.result_type(A.data, U, V))
    step = max(256, (1 << 17) // max(1, U.shape[1]))  # ~1 MB gathered per factor: stays in L2
    for s in range(0, A.nnz, step):
        e = min(A.nnz, s + step)
        out[s:e] = np.einsum("ij,ij->i", U[rows[s:e]], V[cols[s:e]])
    out *= A.data
    return sp.csr_array((out, A.indices, A.indptr), shape=A.shape)


def mttkrp_matrix(coords, data, shape):
    """X's values as an I x nnz CSR matrix (entry e in row i_e, column e): the pattern-only
    "unfolding" the scipy MTTKRP sums with, built once per tensor like any format conversion."""
    import numpy as np
    import scipy.sparse as sp
    i = np.asarray(coords[0])
    return sp.csr_array((np.asarray(data), (i, np.arange(i.size))), shape=(shape[0], i.size))


def mttkrp_np(coords, data, shape, B, C, S=None):
    """MTTKRP ``out[i] = sum over X's entries (i,j,k) of x * B[j] * C[k]`` with scipy/NumPy: the
    rows ``B[j] * C[k]`` gathered over the coordinates, then summed per row i with X's values by
    one sparse product ``S @ Z`` (``S = mttkrp_matrix(...)``).  Measured on the corpus tensors:
    faster than ``np.add.at`` (2-3x) and ``np.add.reduceat`` (1.5-2x)."""
    if S is None:
        S = mttkrp_matrix(coords, data, shape)
    Z = B[coords[1]]
    Z *= C[coords[2]]
    return S @ Z


# ---------------------------------------------------------------------------------------------
# cases: for one kernel, parameter and input, the oracle and every column's function

class Case:
    def __init__(self, kernel, param, item):
        self.kernel, self.param, self.item = kernel, param, item
        self.lazy = None          # fusion -> callable
        self.peers = {}           # name -> callable
        self.skip = {}            # name -> reason (decided before any call)
        self.oracle = None        # callable (the scipy column)

    @property
    def label(self):
        return ",".join(f"{k}={v}" for k, v in self.param.items())


def peer_setup(peers, threads):
    """Import the wanted peers; returns ({name: module}, {name: why not})."""
    mods, missing = {}, {}
    for p in peers:
        try:
            if p == "scipy":
                import scipy.sparse as m
            elif p == "pydata":
                import sparse as m
            elif p == "torch":
                import torch as m
                m.set_num_threads(threads)
            elif p == "graphblas":
                import graphblas as m
                try:
                    m.init("suitesparse", blocking=True)
                except Exception:
                    pass
                m.ss.config["nthreads"] = threads
            elif p == "finch":
                m = _finch()
            mods[p] = m
        except Exception as e:
            missing[p] = f"does not install/import: {type(e).__name__}: {e}"[:300]
    return mods, missing


def _finch():
    """finch-tensor-lite's module: ``finchlite`` (0.5), ``finch`` before."""
    try:
        import finchlite as m
    except ImportError:
        import finch as m
    return m


def _finch_scheduler():
    """finch's COMPILE_NUMBA pipeline (its stages) under an executor with the kernel cache on (a
    repeat reuses the compiled kernel instead of re-planning and re-compiling it: ~2 s per call
    otherwise)."""
    ds = _finch().autoschedule.default_schedulers
    return ds.LogicNormalizer(ds.LogicExecutor(ds.COMPILE_NUMBA.ctx.ctx, cache=True))


_FINCH_SCHED = []


def _finch_compute(expr_fn):
    finch = _finch()
    if not _FINCH_SCHED:
        _FINCH_SCHED.append(_finch_scheduler())
    with finch.with_default_scheduler(_FINCH_SCHED[0]):
        return finch.compute(expr_fn())


def _finch_fiber(shape, ptrs, idxs, data):
    """A finch tensor with levels dense (first mode) / sparse_list (each further mode, from its
    ptr and idx arrays, CSF-style) / element; int64 indices (finch: one index type)."""
    import numpy as np
    m = _finch()
    it, buf = m.algebra.ftype(np.dtype(np.int64)), m.codegen.NumpyBuffer
    el = m.tensor.level.element(fill_value=np.float64(0.0), element_type=m.algebra.ftype(np.dtype(np.float64)),
                                position_type=it)
    lvl = m.tensor.level.ElementLevel(_format=el, _val=buf(np.array(data, dtype=np.float64)))
    for n, ptr, idx in reversed(list(zip(shape[1:], ptrs, idxs))):
        lvl = m.tensor.level.SparseListLevel(lvl, dimension=it(n), ptr=buf(np.array(ptr, dtype=np.int64)),
                                             idx=buf(np.array(idx, dtype=np.int64)))
    return m.tensor.FiberTensor(m.tensor.level.DenseLevel(lvl, dimension=it(shape[0])))


def _finch_csr(A):
    import scipy.sparse as sp
    B = sp.csr_array(A, copy=True)
    B.sum_duplicates()
    return _finch_fiber(B.shape, [B.indptr], [B.indices], B.data)


def _finch_csf3(coords, data, shape):
    """A 3-order tensor (sorted coordinates) as finch levels dense(i) / sparse_list(j) / sparse_list(k)."""
    import numpy as np
    i, j, k = (np.asarray(c, dtype=np.int64) for c in coords)
    I, J, K = shape
    key = i * J + j
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if i.size else np.zeros(0, np.int64)
    ptr_j = np.searchsorted(i[starts], np.arange(I + 1))
    return _finch_fiber(shape, [ptr_j, np.r_[starts, i.size]], [j[starts], k], data)


def _torch_csr(A):
    import warnings
    import numpy as np
    import torch
    warnings.filterwarnings("ignore", message=".*[Ss]parse.*beta")
    warnings.filterwarnings("ignore", message="Sparse invariant checks")
    return torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)),
                                   torch.from_numpy(A.indices.astype(np.int64)),
                                   torch.from_numpy(A.data), size=A.shape)


def matrix_case(kernel, param, item, mods, seed, mem_limit):
    """A Case for a matrix kernel on ``item`` (a bench.Item with a scipy CSR ``matrix``)."""
    import numpy as np
    import lazysparse as ls
    A = item.matrix
    n, m = A.shape
    rng = np.random.default_rng(seed)
    c = Case(kernel, param, item)
    lA = ls.asarray(A)
    rows = np.repeat(np.arange(n), np.diff(A.indptr))     # A's row of each entry (pattern only)
    dense_nm = 8 * n * m

    if kernel == "sddmm":
        K = param["K"]
        U, V = rng.random((n, K)), rng.random((m, K))
        lU, lV = ls.asarray(U), ls.asarray(V)
        c.lazy = lambda f: (lambda: (lA * (lU @ lV.T)).materialize(fusion=f))
        c.oracle = lambda: sddmm_np(A, U, V, rows)
        inner = K
    elif kernel == "gnn1":
        H, J = param["H"], param["J"]
        X, W = rng.random((m, H)), rng.random((H, J))
        lX, lW = ls.asarray(X), ls.asarray(W)
        c.lazy = lambda f: (lambda: ((lA @ lX) @ lW).materialize(fusion=f))
        c.oracle = lambda: (A @ X) @ W
    elif kernel == "gnn2":
        K = param["K"]
        X, Y = rng.random((n, K)), rng.random((m, K))
        lX, lY = ls.asarray(X), ls.asarray(Y)
        c.lazy = lambda f: (lambda: ((lA * (lX @ lY.T)) @ lY).materialize(fusion=f))
        c.oracle = lambda: sddmm_np(A, X, Y, rows) @ Y
        U, V, inner = X, Y, K
    else:
        raise ValueError(kernel)

    if "scipy" in mods:
        c.peers["scipy"] = c.oracle
    if "pydata" in mods:
        sparse = mods["pydata"]
        pA = sparse.COO.from_scipy_sparse(A)
        if kernel == "gnn1":
            c.peers["pydata"] = lambda: (pA @ X) @ W
        else:
            # sparse.einsum broadcasts to an nnz x K sparse intermediate (~130 bytes an entry,
            # measured: 1.2 GB for bcsstk16, K = 32)
            need = 130 * A.nnz * inner
            if mem_limit and need > mem_limit:
                c.skip["pydata"] = (f"sparse.einsum would build nnz x K = {A.nnz * inner:,} "
                                    f"intermediate entries (~{need / 2**30:.1f} GiB) > memory limit")
            elif kernel == "sddmm":
                c.peers["pydata"] = lambda: sparse.einsum("ij,ik,jk->ij", pA, U, V)
            else:
                c.peers["pydata"] = lambda: sparse.einsum("ij,ik,jk->ij", pA, X, Y) @ Y
    if "torch" in mods:
        torch = mods["torch"]
        tA = _torch_csr(A)
        tAv = tA.values()
        if kernel == "sddmm" or kernel == "gnn2":
            tU, tVt = torch.from_numpy(U), torch.from_numpy(V).t()

            def t_sddmm():
                S = torch.sparse.sampled_addmm(tA, tU, tVt, beta=0.0)
                S.values().mul_(tAv)
                return S
            if kernel == "sddmm":
                c.peers["torch"] = t_sddmm
            else:
                tY = torch.from_numpy(Y)
                c.peers["torch"] = lambda: torch.sparse.mm(t_sddmm(), tY)
        else:
            tX, tW = torch.from_numpy(X), torch.from_numpy(W)
            c.peers["torch"] = lambda: torch.sparse.mm(tA, tX) @ tW
    if "graphblas" in mods:
        gb = mods["graphblas"]
        gA = gb.io.from_scipy_sparse(A)
        if kernel == "sddmm" or kernel == "gnn2":
            gU, gV = gb.Matrix.from_dense(U), gb.Matrix.from_dense(V)

            def g_sddmm():
                S = gU.mxm(gV.T, op=gb.semiring.plus_times).new(mask=gA.S)
                return S.ewise_mult(gA, op=gb.binary.times).new()
            if kernel == "sddmm":
                c.peers["graphblas"] = g_sddmm
            else:
                gY = gb.Matrix.from_dense(Y)
                c.peers["graphblas"] = lambda: g_sddmm().mxm(gY, op=gb.semiring.plus_times).new()
        else:
            gX, gW = gb.Matrix.from_dense(X), gb.Matrix.from_dense(W)
            c.peers["graphblas"] = lambda: (gA.mxm(gX, op=gb.semiring.plus_times).new()
                                            .mxm(gW, op=gb.semiring.plus_times).new())
    if "finch" in mods:
        finch = mods["finch"]
        lz = getattr(finch, "lazy", None) or finch.defer
        try:
            fA = _finch_csr(A)
            if kernel == "sddmm" or kernel == "gnn2":
                fU, fV, fVt = finch.asarray(U), finch.asarray(V), finch.asarray(np.ascontiguousarray(V.T))
                if kernel == "sddmm" and mem_limit and dense_nm > mem_limit:
                    c.skip["finch"] = (f"its result is dense n x m ({dense_nm / 2**30:.1f} GiB) "
                                       f"> memory limit")
                elif kernel == "sddmm":
                    c.peers["finch"] = lambda: _finch_compute(lambda: lz(fA) * (lz(fU) @ lz(fVt)))
                else:
                    c.peers["finch"] = lambda: _finch_compute(lambda: (lz(fA) * (lz(fU) @ lz(fVt))) @ lz(fV))
            else:
                fX, fW = finch.asarray(X), finch.asarray(W)
                c.peers["finch"] = lambda: _finch_compute(lambda: (lz(fA) @ lz(fX)) @ lz(fW))
        except Exception as e:
            c.skip["finch"] = f"{type(e).__name__}: {e}"[:300]
    return c


def tensor_case(param, item, mods, seed):
    """A Case for MTTKRP on a 3-order tensor item (coords, data, shape)."""
    import numpy as np
    import scipy.sparse as sp
    import sparse as pydata
    import lazysparse as ls
    coords, data, shape = item.tensor
    coords = np.ascontiguousarray(coords, dtype=np.int64)
    data = np.ascontiguousarray(data, dtype=np.float64)
    I, J, K = shape
    R = param["R"]
    rng = np.random.default_rng(seed)
    B, C = rng.random((J, R)), rng.random((K, R))
    c = Case("mttkrp", param, item)
    lT = ls.asarray(pydata.COO(coords, data, shape=shape, has_duplicates=False, sorted=True))
    lB, lC = ls.asarray(B), ls.asarray(C)
    c.lazy = lambda f: (lambda: ls.einsum("ijk,jr,kr->ir", lT, lB, lC).materialize(fusion=f))
    i, j, k = coords
    S = mttkrp_matrix(coords, data, shape)
    c.oracle = lambda: mttkrp_np(coords, data, shape, B, C, S)
    if "scipy" in mods:
        c.peers["scipy"] = c.oracle
    if "pydata" in mods:
        T = pydata.COO(coords, data, shape=shape, has_duplicates=False, sorted=True)
        c.peers["pydata"] = lambda: pydata.einsum("ijk,jr,kr->ir", T, B, C)
    if "torch" in mods:
        torch = mods["torch"]
        ti, tj, tk = (torch.from_numpy(x) for x in (i, j, k))
        tv = torch.from_numpy(data)[:, None]
        tB, tC = torch.from_numpy(B), torch.from_numpy(C)

        def t_mttkrp():
            Z = tB[tj] * tC[tk]
            Z.mul_(tv)
            return torch.zeros((I, R), dtype=Z.dtype).index_add_(0, ti, Z)
        c.peers["torch"] = t_mttkrp
    if "graphblas" in mods:
        gb = mods["graphblas"]
        ij = i * J + j
        pair = np.flatnonzero(np.r_[True, ij[1:] != ij[:-1]]) if ij.size else np.zeros(0, np.int64)
        ijs = ij[pair]
        X12 = gb.io.from_scipy_sparse(sp.csr_array((data, (ij, k)), shape=(I * J, K)))
        ones = np.ones(ijs.size)
        E = gb.io.from_scipy_sparse(sp.csr_array((ones, (ijs, ijs % J)), shape=(I * J, J)))
        P = gb.io.from_scipy_sparse(sp.csr_array((ones, (ijs // J, ijs)), shape=(I, I * J)))
        gB, gC = gb.Matrix.from_dense(B), gb.Matrix.from_dense(C)
        pt = gb.semiring.plus_times

        def g_mttkrp():
            T = X12.mxm(gC, op=pt).new()
            T2 = T.ewise_mult(E.mxm(gB, op=pt).new(), op=gb.binary.times).new()
            return P.mxm(T2, op=pt).new()
        c.peers["graphblas"] = g_mttkrp
    if "finch" in mods:
        finch = mods["finch"]
        lz = getattr(finch, "lazy", None) or finch.defer
        try:
            fX = _finch_csf3(coords, data, shape)
            fB, fC = finch.asarray(B), finch.asarray(C)
            c.peers["finch"] = lambda: _finch_compute(
                lambda: finch.einsum("ijk,jr,kr->ir", lz(fX), lz(fB), lz(fC)))
        except Exception as e:
            c.skip["finch"] = f"{type(e).__name__}: {e}"[:300]
    return c

