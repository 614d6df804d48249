"""The libraries the benchmarks compare lazysparse with (scipy.sparse, pydata/sparse,
SuiteSparse:GraphBLAS, MKL through sparse_dot_mkl, torch.sparse): which are installed, and for
each the best idiomatic call of every benchmark kernel on one input (lazysparse's own calls too)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

DEFAULT_KERNELS = ("spmv", "spmm", "add_t", "add_r", "mul_t", "mul_r", "sum0", "sum1", "tocsc",
                   "ttv")
# Compound kernels of shared/PEERS.md, run only when asked for with --kernels (an unfused
# implementation of sddmm forms the dense n x n product U @ V.T: tens of GB on the larger graphs).
EXTRA_KERNELS = ("sddmm", "gnn", "spgemm", "add3", "masked", "sumall", "max1", "maxall", "scale",
                 "spmv_t", "spmm_t", "expm1", "tanh")
KERNELS = DEFAULT_KERNELS + EXTRA_KERNELS
TENSOR_KERNELS = ("ttv",)
MATRIX_KERNELS = tuple(k for k in KERNELS if k not in TENSOR_KERNELS)
PEERS = ("scipy", "pydata", "graphblas", "mkl", "torch")


def sddmm_scipy(A, U, V):
    """The best plain scipy/NumPy SDDMM ``A * (U @ V.T)`` (A: scipy CSR): one dot product per
    stored entry (never forms U @ V.T)."""
    import numpy as np
    import scipy.sparse as sp
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    vals = A.data * np.einsum("ij,ij->i", U[rows], V[A.indices])
    return sp.csr_array((vals, A.indices, A.indptr), shape=A.shape)


def peer_versions():
    out = {}
    import numpy, scipy
    out["numpy"] = numpy.__version__
    out["scipy"] = scipy.__version__
    for mod, key in (("sparse", "pydata"), ("graphblas", "graphblas"), ("sparse_dot_mkl", "mkl"),
                     ("torch", "torch")):
        try:
            m = __import__(mod)
            out[key] = getattr(m, "__version__", "?")
        except Exception:
            pass
    return out


def _find_mkl_rt():
    """The pip "mkl" wheel puts libmkl_rt.so.N in <prefix>/lib, off the loader path:
    point sparse_dot_mkl at it (it reads MKL_RT)."""
    if os.environ.get("MKL_RT"):
        return
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        libs = sorted(Path(prefix, "lib").glob("libmkl_rt.so*"))
        if libs:
            os.environ["MKL_RT"] = str(libs[0])
            return


def available_peers(wanted, threads):
    peers = []
    for p in wanted:
        try:
            if p == "scipy":
                import scipy.sparse  # noqa: F401
            elif p == "pydata":
                import sparse  # noqa: F401
            elif p == "graphblas":
                import graphblas as gb
                try:
                    gb.init("suitesparse", blocking=True)
                except Exception:
                    pass
                try:
                    gb.ss.config["nthreads"] = threads
                except Exception:
                    pass
            elif p == "mkl":
                _find_mkl_rt()
                import sparse_dot_mkl  # noqa: F401
            elif p == "torch":
                import torch
                torch.set_num_threads(threads)
            peers.append(p)
        except Exception:
            continue
    return peers


def matrix_inputs(A, kernels=KERNELS, seed=0):
    """The operands the matrix kernels use, built once per matrix (extras only when needed)."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    m, n = A.shape
    density = A.nnz / max(1, m * n)

    def rand_like(s):
        M = sp.random_array((m, n), density=density, format="csr", rng=s, dtype=np.float64)
        M.sort_indices()
        return M
    inp = dict(A=A, B=rand_like(seed + 1), x=rng.random(n), X=rng.random((n, 128)))
    if "add3" in kernels:
        inp["C"] = rand_like(seed + 2)
    if "gnn" in kernels:
        inp["X64"], inp["W"] = rng.random((n, 64)), rng.random((64, 16))
    if "sddmm" in kernels:
        inp["U"], inp["V"] = rng.random((m, 32)), rng.random((n, 32))
    if "spmv_t" in kernels or "spmm_t" in kernels:  # (A.T @ x: x over A's rows)
        inp["xt"], inp["Xt"] = rng.random(m), rng.random((m, 128))
    return inp


def scipy_matrix_kernels(inp, square):
    A, B, x, X = inp["A"], inp["B"], inp["x"], inp["X"]
    k = dict(spmv=lambda: A @ x, spmm=lambda: A @ X, add_r=lambda: A + B, mul_r=lambda: A.multiply(B),
             sum0=lambda: A.sum(axis=0), sum1=lambda: A.sum(axis=1), tocsc=lambda: A.tocsc(),
             sumall=lambda: A.sum(), max1=lambda: A.max(axis=1), maxall=lambda: A.max(),
             scale=lambda: 2.5 * A, expm1=lambda: A.expm1(), tanh=lambda: A.tanh())
    if square:
        k.update(add_t=lambda: A + A.T, mul_t=lambda: A.multiply(A.T), spgemm=lambda: A @ A,
                 masked=lambda: A.multiply(A @ A))
    if "C" in inp:
        k["add3"] = lambda: A + B + inp["C"]
    if "W" in inp:
        k["gnn"] = lambda: A @ (inp["X64"] @ inp["W"])
    if "U" in inp:
        k["sddmm"] = lambda: sddmm_scipy(A, inp["U"], inp["V"])
    if "xt" in inp:
        k["spmv_t"], k["spmm_t"] = (lambda: A.T @ inp["xt"]), (lambda: A.T @ inp["Xt"])
    return k


def lazysparse_matrix_kernels(inp, square):
    """Each call builds a fresh lazy expression and materializes it: the code a user writes,
    in one frame like the peers' lambdas."""
    import lazysparse as ls
    lA, lB, lx, lX = (ls.asarray(inp[k]) for k in ("A", "B", "x", "X"))
    k = dict(spmv=lambda: (lA @ lx).materialize(), spmm=lambda: (lA @ lX).materialize(),
             add_r=lambda: (lA + lB).materialize(), mul_r=lambda: (lA * lB).materialize(),
             sum0=lambda: lA.sum(axis=0).materialize(), sum1=lambda: lA.sum(axis=1).materialize(),
             tocsc=lambda: lA.asformat("csc").materialize(), sumall=lambda: lA.sum().materialize(),
             max1=lambda: lA.max(axis=1).materialize(), maxall=lambda: lA.max().materialize(),
             scale=lambda: (2.5 * lA).materialize(), expm1=lambda: ls.expm1(lA).materialize(),
             tanh=lambda: ls.tanh(lA).materialize())
    if square:
        k.update(add_t=lambda: (lA + lA.T).materialize(), mul_t=lambda: (lA * lA.T).materialize(),
                 spgemm=lambda: (lA @ lA).materialize(), masked=lambda: (lA * (lA @ lA)).materialize())
    if "C" in inp:
        lC = ls.asarray(inp["C"])
        k["add3"] = lambda: (lA + lB + lC).materialize()
    if "W" in inp:
        lX64, lW = ls.asarray(inp["X64"]), ls.asarray(inp["W"])
        k["gnn"] = lambda: (lA @ (lX64 @ lW)).materialize()
    if "U" in inp:
        lU, lV = ls.asarray(inp["U"]), ls.asarray(inp["V"])
        k["sddmm"] = lambda: (lA * (lU @ lV.T)).materialize()
    if "xt" in inp:
        lxt, lXt = ls.asarray(inp["xt"]), ls.asarray(inp["Xt"])
        k["spmv_t"] = lambda: (lA.T @ lxt).materialize()
        k["spmm_t"] = lambda: (lA.T @ lXt).materialize()
    return k


def pydata_matrix_kernels(inp, square):
    import numpy as np
    import sparse
    A, B = (sparse.COO.from_scipy_sparse(inp[k]) for k in ("A", "B"))
    x, X = inp["x"], inp["X"]
    k = dict(spmv=lambda: A @ x, spmm=lambda: A @ X, add_r=lambda: A + B, mul_r=lambda: A * B,
             sum0=lambda: A.sum(axis=0), sum1=lambda: A.sum(axis=1),
             tocsc=lambda: A.asformat("gcxs", compressed_axes=[1]), sumall=lambda: A.sum(),
             max1=lambda: A.max(axis=1), maxall=lambda: A.max(), scale=lambda: 2.5 * A,
             expm1=lambda: np.expm1(A), tanh=lambda: np.tanh(A))
    if square:
        k.update(add_t=lambda: A + A.T, mul_t=lambda: A * A.T, spgemm=lambda: A @ A,
                 masked=lambda: A * (A @ A))
    if "C" in inp:
        C = sparse.COO.from_scipy_sparse(inp["C"])
        k["add3"] = lambda: A + B + C
    if "W" in inp:
        k["gnn"] = lambda: A @ (inp["X64"] @ inp["W"])
    if "xt" in inp:
        k["spmv_t"], k["spmm_t"] = (lambda: A.T @ inp["xt"]), (lambda: A.T @ inp["Xt"])
    return k


def graphblas_matrix_kernels(inp, square):
    import graphblas as gb
    A = gb.io.from_scipy_sparse(inp["A"])
    B = gb.io.from_scipy_sparse(inp["B"])
    x = gb.Vector.from_dense(inp["x"])
    X = gb.Matrix.from_dense(inp["X"])
    k = dict(spmv=lambda: A.mxv(x).new(), spmm=lambda: A.mxm(X).new(),
             add_r=lambda: A.ewise_add(B).new(), mul_r=lambda: A.ewise_mult(B).new(),
             sum0=lambda: A.reduce_columnwise().new(), sum1=lambda: A.reduce_rowwise().new(),
             sumall=lambda: A.reduce_scalar().new(), scale=lambda: (A * 2.5).new())
    if square:
        k.update(add_t=lambda: A.ewise_add(A.T).new(), mul_t=lambda: A.ewise_mult(A.T).new(),
                 spgemm=lambda: A.mxm(A).new(), masked=lambda: A.mxm(A).new(mask=A.S))
    if "C" in inp:
        C = gb.io.from_scipy_sparse(inp["C"])
        k["add3"] = lambda: A.ewise_add(B).new().ewise_add(C).new()
    if "xt" in inp:
        xt, Xt = gb.Vector.from_dense(inp["xt"]), gb.Matrix.from_dense(inp["Xt"])
        k["spmv_t"], k["spmm_t"] = (lambda: A.T.mxv(xt).new()), (lambda: A.T.mxm(Xt).new())
    return k


def mkl_matrix_kernels(inp, square):
    from sparse_dot_mkl import dot_product_mkl
    import scipy.sparse as sp
    A = sp.csr_matrix(inp["A"])
    x, X = inp["x"], inp["X"]
    k = dict(spmv=lambda: dot_product_mkl(A, x), spmm=lambda: dot_product_mkl(A, X))
    if square:
        k["spgemm"] = lambda: dot_product_mkl(A, A)
    if "W" in inp:
        k["gnn"] = lambda: dot_product_mkl(A, inp["X64"] @ inp["W"])
    if "xt" in inp:
        At = A.T  # (a CSC view of A's arrays: MKL multiplies by the transpose)
        k["spmv_t"], k["spmm_t"] = (lambda: dot_product_mkl(At, inp["xt"])), (lambda: dot_product_mkl(At, inp["Xt"]))
    return k


def torch_matrix_kernels(inp, square):
    import warnings
    import torch
    warnings.filterwarnings("ignore", message=".*[Ss]parse.*beta")
    warnings.filterwarnings("ignore", message="Sparse invariant checks")

    def csr(M):
        return torch.sparse_csr_tensor(torch.from_numpy(M.indptr.astype("int64")),
                                       torch.from_numpy(M.indices.astype("int64")),
                                       torch.from_numpy(M.data), size=M.shape)
    A, B = csr(inp["A"]), csr(inp["B"])
    x, X = torch.from_numpy(inp["x"]), torch.from_numpy(inp["X"])
    Acoo = A.to_sparse_coo()
    k = dict(spmv=lambda: A @ x, spmm=lambda: A @ X, add_r=lambda: A + B,
             sum0=lambda: torch.sparse.sum(Acoo, dim=0), sum1=lambda: torch.sparse.sum(Acoo, dim=1),
             tocsc=lambda: A.to_sparse_csc(), sumall=lambda: torch.sparse.sum(Acoo),
             scale=lambda: A * 2.5, expm1=lambda: torch.expm1(A), tanh=lambda: torch.tanh(A))
    if square:
        k.update(add_t=lambda: A + A.t().to_sparse_csr(), spgemm=lambda: A @ A)
    if "C" in inp:
        C = csr(inp["C"])
        k["add3"] = lambda: A + B + C
    if "W" in inp:
        X64, W = torch.from_numpy(inp["X64"]), torch.from_numpy(inp["W"])
        k["gnn"] = lambda: A @ (X64 @ W)
    if "U" in inp:
        U, Vt = torch.from_numpy(inp["U"]), torch.from_numpy(inp["V"]).t().contiguous()
        Avals = A.values()

        def sddmm():
            S = torch.sparse.sampled_addmm(A, U, Vt, beta=0.0)
            S.values().mul_(Avals)
            return S
        k["sddmm"] = sddmm
    return k


MATRIX_PEER_KERNELS = dict(scipy=scipy_matrix_kernels, pydata=pydata_matrix_kernels,
                           graphblas=graphblas_matrix_kernels, mkl=mkl_matrix_kernels,
                           torch=torch_matrix_kernels)


def tensor_kernels(tensor, seed=0):
    """{library: {"ttv": fn}} for einsum('ijk,k->ij') on a 3-order tensor."""
    import numpy as np
    import scipy.sparse as sp
    coords, data, shape = tensor
    I, J, K = shape
    v = np.random.default_rng(seed).random(K)
    out = {}
    # scipy: the tensor matricized once (outside the timing) as an (I*J) x K CSR matrix.
    M = sp.csr_array((data, (coords[0] * J + coords[1], coords[2])), shape=(I * J, K))
    out["scipy"] = {"ttv": lambda: (M @ v).reshape(I, J)}
    try:
        import sparse
        T = sparse.COO(coords, data, shape=shape, has_duplicates=False, sorted=True)
        out["pydata"] = {"ttv": lambda: sparse.einsum("ijk,k->ij", T, v)}
    except Exception:
        pass
    import lazysparse as ls
    import sparse as pydata
    lT = ls.asarray(pydata.COO(coords, data, shape=shape, has_duplicates=False, sorted=True))
    lv = ls.asarray(v)
    out["lazysparse"] = {"ttv": lambda: ls.einsum("ijk,k->ij", lT, lv).materialize()}
    return out

