"""Side-by-side benchmarks: lazysparse vs scipy.sparse, pydata/sparse and any other installed peer.

    python -m lazysparse.bench.suite [--data DIR] [--kernels K ...] [--repeat N] [--threads 1]
                               [--wait default|passive] [--scaling N] [--rmat-scale S ...] [--json PATH]

Everything runs in one process and one run, so ratios are comparable.  Inputs: every matrix of the
benchmark corpus (``--data``, else ``LAZYSPARSE_DATA``, else ``../shared/data`` beside the repository;
3-order tensors are used only by the tensor kernel) and generated R-MAT graphs (Graph500 a=.57,
b=c=.19, edge factor 16; ``--rmat-scale 20`` gives 2**20 rows and about 16M nonzeros).

Kernels: ``spmv`` A@x, ``spmm`` A@X (128 columns), ``add_t`` A+A.T, ``add_r`` A+B, ``mul_t``
A*A.T, ``mul_r`` A*B (B: uniform random with A's shape and density), ``sum0``/``sum1`` sums over
axis 0/1, ``tocsc`` conversion, ``ttv`` einsum('ijk,k->ij') on tensors.  Only on request
(``--kernels``): ``sddmm`` A*(U@V.T) (K=32), ``gnn`` A@(X@W) (X: n x 64, W: 64 x 16), ``spgemm``
A@A, ``add3`` A+B+C, ``masked`` A*(A@A) (masked SpGEMM; GraphBLAS: ``mxm`` under the structural
mask ``A.S``, which skips the final multiply by A's values: on pattern matrices the same result),
``sumall`` A.sum(), ``max1`` A.max(axis=1), ``maxall`` A.max() (NumPy's semantics: implicit zeros
count; GraphBLAS and torch reduce stored values only, so they are not asked), ``scale`` 2.5 * A,
``spmv_t`` A.T@x and ``spmm_t`` A.T@X (128 columns; x and X over A's rows), ``expm1`` and ``tanh``
(``A.expm1()``, ``A.tanh()``: maps over the stored values that call libm).

Method: each lazysparse result is first checked against scipy (``np.allclose``; failures are marked
and not timed).  Then every library gets one warm-up call (lazysparse compiles here; its time is
reported as ``first_ms``) and ``--repeat`` timed calls with ``time.perf_counter``, interleaved:
each round calls every library once in a shuffled order, so drift on a shared machine hits all
alike; the median is reported.  A lazysparse call builds a fresh lazy expression and materializes it (build + run, warm
kernel cache).  Peers run with one thread unless ``--threads`` says otherwise (``OMP_NUM_THREADS``,
``MKL_NUM_THREADS``, ... are set before any library loads, by re-executing the interpreter;
``--wait passive`` also makes every OpenMP pool sleep when idle, see ``_PASSIVE``).
Peers that are not installed are skipped; a peer that cannot do a kernel shows ``-``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "LAZYSPARSE_NUM_THREADS")
_REEXEC_MARK = "_LAZYSPARSE_BENCH_REEXEC"

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


# --wait passive: every OpenMP runtime in the process sleeps as soon as its region ends.
# Several thread pools in one process (ours, SuiteSparse's, MKL's, torch's) otherwise spin
# after their calls and take the other cores from the next library's parallel region: with two
# threads on two vCPUs, cage10 SpMV took 2.5 ms in such a run against 0.05 alone, for
# lazysparse and graphblas alike (docs/performance.md, "Two ways to measure").
_PASSIVE = {"OMP_WAIT_POLICY": "passive", "KMP_BLOCKTIME": "0"}


def _ensure_threads(threads: int, argv: list[str], module: str = "lazysparse.bench.suite",
                    wait: str = "default") -> None:
    """Re-execute ``module`` with the thread variables set, so BLAS/OpenMP pools start with
    that size (and, for ``wait="passive"``, sleep when idle)."""
    want = str(threads)
    extra = _PASSIVE if wait == "passive" else {}
    if os.environ.get(_REEXEC_MARK) == "1" or (all(os.environ.get(k) == want for k in _THREAD_VARS)
                                                and all(os.environ.get(k) == v for k, v in extra.items())):
        return
    env = dict(os.environ)
    env.update({k: want for k in _THREAD_VARS})
    env.update(extra)
    env[_REEXEC_MARK] = "1"
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", module, *argv], env)


# ---------------------------------------------------------------------------------------------
# timing

# ---------------------------------------------------------------------------------------------
# inputs

@dataclass
class Item:
    name: str
    kind: str                      # "matrix" or "tensor"
    shape: tuple
    nnz: int
    matrix: object = None          # scipy csr_array (matrices)
    tensor: tuple | None = None    # (coords, data, shape) (tensors)


def find_data_dir(explicit: str | None):
    from lazysparse.datasets import data_dir
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_dir():
            raise SystemExit(f"--data {explicit}: not a directory")
        return p
    return data_dir()


def load_items(data: Path | None, names, rmat_scales, seed: int):
    import numpy as np
    import scipy.sparse as sp
    from lazysparse.datasets import rmat

    items = []
    if data is not None:
        for f in sorted(data.glob("*.npz")):
            if names and f.stem not in names:
                continue
            with np.load(f) as z:
                if "coords" in z.files:
                    shape = tuple(int(s) for s in z["shape"])
                    items.append(Item(f.stem, "tensor", shape, int(z["data"].size),
                                      tensor=(z["coords"], z["data"], shape)))
                    continue
            A = sp.csr_array(sp.load_npz(f))
            A.sum_duplicates()
            A.sort_indices()
            items.append(Item(f.stem, "matrix", A.shape, A.nnz, matrix=A))
    for s in rmat_scales:
        A = rmat(s, edge_factor=16, seed=seed)
        items.append(Item(f"rmat-{s}", "matrix", A.shape, A.nnz, matrix=A))
    return items


# ---------------------------------------------------------------------------------------------
# peers: each returns {kernel: fn} for an input, fn taking no arguments

def _peer_versions():
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


def _available_peers(wanted, threads):
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
        from lazysparse.bench.demo import sddmm_scipy
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


# ---------------------------------------------------------------------------------------------
# running

def _fmt_ms(v):
    if v is None:
        return "-"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def run_case(ls_fn, peer_fns: dict, repeat: int, budget_s: float, scaled: dict | None = None):
    """Check lazysparse against scipy, then time everyone. Returns a result dict. ``scaled``:
    {label: call} of lazysparse on other thread counts (``--scaling``), timed in the same rounds
    (their results under ``rec["scaled"]``)."""
    from lazysparse.bench.demo import allclose

    rec = {"check": None, "lazysparse": {}, "peers": {}}
    ref = None
    if "scipy" in peer_fns:
        try:
            ref = peer_fns["scipy"]()
        except Exception as e:  # pragma: no cover - scipy should do every kernel it is given
            rec["peers"]["scipy"] = {"error": f"{type(e).__name__}: {e}"}

    ls_call = ls_fn  # (materializes: see lazysparse_matrix_kernels)
    try:
        t0 = time.perf_counter()
        first = ls_call()
        first_ms = (time.perf_counter() - t0) * 1e3
        if ref is not None:
            import numpy as np
            expected = np.asarray(ref) if not hasattr(ref, "tocsr") else ref
            rec["check"] = "ok" if allclose(first, expected) else "FAILED"
        if rec["check"] == "FAILED":
            rec["lazysparse"] = {"error": "wrong result", "first_ms": first_ms}
        else:
            rec["lazysparse"] = {"first_ms": first_ms}
    except Exception as e:
        rec["check"] = "ERROR"
        rec["lazysparse"] = {"error": f"{type(e).__name__}: {e}"[:300]}

    fns = {} if "error" in rec["lazysparse"] else {"lazysparse": ls_call, **(scaled or {})}
    for name, fn in peer_fns.items():
        if name not in rec["peers"]:
            fns[name] = fn
    from lazysparse.runtime import tuning
    made = tuning.CHOICES_MADE[0]
    for name, res in measure_interleaved(fns, repeat, budget_s).items():
        if name == "lazysparse":
            rec["lazysparse"].update(res)
        elif scaled and name in scaled:
            rec.setdefault("scaled", {})[name] = res
        else:
            rec["peers"][name] = res
    n = min(tuning.CHOICES_MADE[0] - made, len(tuning.CHOICES))
    if n:  # run-time schedule choices measured during the timed calls (runtime/tuning.py)
        rec["lazysparse"]["tuned"] = [
            {"loops": c[0], "timed": c[1], "best_us": c[2]} for c in list(tuning.CHOICES)[-n:]]
    return rec


def measure_interleaved(fns: dict, repeat: int, budget_s: float, back_to_back: bool = False) -> dict:
    """Median times of several libraries on one input, measured in interleaved rounds: every
    round calls each library once, in a shuffled order (seeded), so drift on a shared machine
    hits all of them alike and each follows each other equally often (what ran just before a
    call decides how much of its working set is still in cache). Each library first gets one untimed warm-up call; one whose warm-up took long
    is timed in fewer rounds (``budget_s`` per library). ``back_to_back``: each round calls
    each library twice in a row and times the second call, which then follows one of its own
    kind, as in a loop. Returns {name: {median_ms, first_ms}} or {name: {error}}."""
    calls = 2 if back_to_back else 1
    out, live, rounds, times = {}, [], {}, {}
    for name, fn in fns.items():
        try:
            t0 = time.perf_counter()
            fn()
            first_s = time.perf_counter() - t0
        except Exception as e:
            out[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            continue
        live.append(name)
        each = calls * first_s
        rounds[name] = repeat if each * repeat <= budget_s else max(1, int(budget_s / max(each, 1e-9)))
        times[name] = []
        out[name] = {"first_ms": first_s * 1e3}
    import random
    rng = random.Random(0)
    for r in range(repeat):
        order = list(live)
        rng.shuffle(order)
        for name in order:
            if len(times[name]) >= rounds[name]:
                continue
            if back_to_back:
                fns[name]()
            t0 = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - t0)
    for name in live:
        if name == "lazysparse":  # its first call is the compiling one, reported by run_case
            out[name].pop("first_ms")
        out[name]["median_ms"] = statistics.median(times[name]) * 1e3
    return out


def _row(item, kernel, rec, peers, scaled=()):
    ls_ms = rec["lazysparse"].get("median_ms")
    cells = [f"{item.name:<22.22}", f"{kernel:<6}", f"{_fmt_ms(ls_ms):>11}"]
    for label in scaled:  # lazysparse on more threads, and its speed-up over the column before
        v = rec.get("scaled", {}).get(label, {}).get("median_ms")
        cells += [f"{_fmt_ms(v):>10}", f"{(ls_ms / v) if ls_ms and v else float('nan'):>7.2f}"]
    best = None
    for p in peers:
        v = rec["peers"].get(p, {}).get("median_ms")
        cells.append(f"{_fmt_ms(v):>10}")
        if v is not None and (best is None or v < best):
            best = v
    sc = rec["peers"].get("scipy", {}).get("median_ms")
    cells.append(f"{(ls_ms / sc) if ls_ms and sc else float('nan'):>8.2f}")
    cells.append(f"{(ls_ms / best) if ls_ms and best else float('nan'):>8.2f}")
    status = rec["check"] or "-"
    if "error" in rec["lazysparse"]:
        status += " " + rec["lazysparse"]["error"][:60]
    cells.append(status)
    return " ".join(cells)


def _on_threads(ls, fn, n, base):
    """``fn`` run with lazysparse on ``n`` threads (``--scaling``), back on ``base`` after."""
    def call():
        ls.set_num_threads(n)
        try:
            return fn()
        finally:
            ls.set_num_threads(base)
    return call


def run(args) -> dict:
    import numpy as np
    import lazysparse as ls

    try:
        ls.set_num_threads(args.threads)
    except Exception:
        pass
    data = None if args.no_data else find_data_dir(args.data)
    kernels = args.kernels or list(DEFAULT_KERNELS)
    peers = _available_peers(args.peers or list(PEERS), args.threads)
    items = load_items(data, args.matrices, [] if args.no_rmat else args.rmat_scale, args.seed)

    meta = dict(lazysparse=ls.__version__, threads=args.threads, wait=getattr(args, "wait", "default"),
                repeat=args.repeat,
                python=platform.python_version(), machine=platform.machine(),
                cpus=os.cpu_count(), platform=platform.platform(), data=str(data) if data else None,
                date=datetime.datetime.now().isoformat(timespec="seconds"),
                versions=_peer_versions(), peers=peers,
                env={k: os.environ.get(k) for k in _THREAD_VARS + tuple(_PASSIVE)})
    print(f"lazysparse {ls.__version__} benchmarks: threads={args.threads} "
          f"(wait {getattr(args, 'wait', 'default')}), median of {args.repeat} "
          f"after one warm-up; data={data or '(none)'}; peers: {', '.join(peers)}")
    scaled = [f"ls@{args.scaling}"] if args.scaling else []
    head = " ".join([f"{'matrix':<22}", f"{'kernel':<6}", f"{'lazysparse':>11}"]
                    + [c for label in scaled for c in (f"{label:>10}", f"{'speedup':>7}")]
                    + [f"{p:>10}" for p in peers] + [f"{'ls/scipy':>8}", f"{'ls/best':>8}", "check"])
    print("times in ms; ls/X = lazysparse time / X time (below 1: lazysparse faster)")
    print(head)
    print("-" * len(head))

    results = []
    for item in items:
        if item.kind == "matrix":
            todo = [k for k in kernels if k in MATRIX_KERNELS]
            if not todo:
                continue
            square = item.shape[0] == item.shape[1]
            inp = matrix_inputs(item.matrix, kernels, seed=args.seed)
            ls_k = lazysparse_matrix_kernels(inp, square)
            peer_k = {}
            for p in peers:
                try:
                    peer_k[p] = MATRIX_PEER_KERNELS[p](inp, square)
                except Exception:
                    continue
        else:
            todo = [k for k in kernels if k in TENSOR_KERNELS]
            if not todo:
                continue
            tk = tensor_kernels(item.tensor, seed=args.seed)
            ls_k = tk.pop("lazysparse")
            peer_k = {p: v for p, v in tk.items() if p in peers}
        for kernel in todo:
            if kernel not in ls_k:
                continue  # e.g. A + A.T on a rectangular matrix
            fns = {p: k[kernel] for p, k in peer_k.items() if kernel in k}
            at = {scaled[0]: _on_threads(ls, ls_k[kernel], args.scaling, args.threads)} if scaled else None
            rec = run_case(ls_k[kernel], fns, args.repeat, args.budget, at)
            rec.update(matrix=item.name, kind=item.kind, shape=list(item.shape), nnz=item.nnz,
                       kernel=kernel)
            results.append(rec)
            print(_row(item, kernel, rec, peers, scaled), flush=True)

    # geometric-mean summary per kernel: lazysparse / scipy
    print()
    print("geometric mean of lazysparse / scipy per kernel (matrices where both ran):")
    summary = {}
    for kernel in kernels:
        ratios = [r["lazysparse"]["median_ms"] / r["peers"]["scipy"]["median_ms"]
                  for r in results if r["kernel"] == kernel
                  and "median_ms" in r["lazysparse"] and "median_ms" in r["peers"].get("scipy", {})]
        if ratios:
            g = math.exp(sum(math.log(max(x, 1e-12)) for x in ratios) / len(ratios))
            summary[kernel] = {"geomean_ls_over_scipy": g, "n": len(ratios)}
            print(f"  {kernel:<6} {g:8.3f}  (n={len(ratios)})")
    for label in scaled:
        print(f"geometric mean of lazysparse's speed-up on {args.scaling} threads ({label}) over {args.threads}:")
        for kernel in kernels:
            ups = [r["lazysparse"]["median_ms"] / r["scaled"][label]["median_ms"] for r in results
                   if r["kernel"] == kernel and "median_ms" in r["lazysparse"]
                   and "median_ms" in r.get("scaled", {}).get(label, {})]
            if ups:
                g = math.exp(sum(math.log(max(x, 1e-12)) for x in ups) / len(ups))
                summary.setdefault(kernel, {})[f"geomean_speedup_{label}"] = g
                print(f"  {kernel:<6} {g:8.3f}  (n={len(ups)})")
    failed = [r for r in results if r["check"] in ("FAILED", "ERROR")]
    print(f"{len(results)} cases, {len(failed)} failed or errored")
    out = {"meta": meta, "results": results, "summary": summary}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=lambda o: o.item() if isinstance(o, np.generic) else str(o))
        print(f"wrote {args.json}")
    return out


def parser():
    p = argparse.ArgumentParser(prog="python -m lazysparse.bench.suite",
                                description="Side-by-side benchmarks of lazysparse and its peers.")
    p.add_argument("--data", help="corpus folder (default: LAZYSPARSE_DATA or ../shared/data)")
    p.add_argument("--no-data", action="store_true", help="skip the corpus; R-MAT graphs only")
    p.add_argument("--matrices", nargs="+", metavar="NAME", help="only these corpus items (file stems)")
    p.add_argument("--kernels", nargs="+", choices=KERNELS, metavar="K",
                   help=f"kernels to run (default: {' '.join(DEFAULT_KERNELS)}; also: "
                        f"{' '.join(EXTRA_KERNELS)})")
    p.add_argument("--peers", nargs="+", choices=PEERS, metavar="P",
                   help=f"peers to compare with, if installed (default all: {' '.join(PEERS)})")
    p.add_argument("--repeat", type=int, default=7, help="timed calls per measurement (median)")
    p.add_argument("--threads", type=int, default=1, help="threads for lazysparse and peers")
    p.add_argument("--scaling", type=int, default=None, metavar="N",
                   help="also time lazysparse on N threads in the same rounds (peers keep --threads): "
                        "a column ls@N and its speed-up")
    p.add_argument("--wait", choices=("default", "passive"), default="default",
                   help="OpenMP idle policy for every library in the process: passive keeps one "
                        "library's spinning pool from taking the cores of the next (several threads)")
    p.add_argument("--rmat-scale", type=int, action="append", default=None, metavar="S",
                   help="R-MAT graph with 2**S rows (repeatable; default 16; 20 gives ~16M nnz)")
    p.add_argument("--no-rmat", action="store_true", help="no generated R-MAT graphs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=float, default=10.0,
                   help="seconds one measurement may take before repeats are cut (slow peers)")
    p.add_argument("--json", metavar="PATH", help="also write all results as JSON")
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    if args.rmat_scale is None:
        args.rmat_scale = [16]
    _ensure_threads(args.threads, argv, wait=args.wait)
    out = run(args)
    bad = [r for r in out["results"] if r["check"] in ("FAILED", "ERROR")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
