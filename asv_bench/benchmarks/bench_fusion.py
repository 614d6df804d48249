"""Fused kernels per fusion mode, warm kernel cache, with scipy/NumPy baselines.

SDDMM ``A * (U @ V.T)`` (K = 32, 128), GNN-1 ``(A @ X) @ W`` (H = 128, J = 16), GNN-2
``(A * (X @ Y.T)) @ Y`` (K = 32) and MTTKRP ``einsum('ijk,jr,kr->ir')`` (R = 16, 32), each timed as
a fresh lazy expression materialized with ``fusion`` in ("auto", "max", "none").  A mode that
raises (``"max"`` not implemented for a DAG, ``"none"`` past the memory limit) is skipped: setup
raises ``NotImplementedError``.  Small inputs only (``"none"`` forms SDDMM's dense n x n product):
cora and bcsstk13 (when the corpus is present), and the wn18rr tensor (else a generated one).  The
side-by-side run with every peer on the whole corpus is ``python -m lazysparse.bench.fusion``.
"""
import functools

import numpy as np

from asv_bench.benchmarks.common import SHARED, dense, lazy, matrix, steady

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)
from lazysparse.bench.fusion_cases import GNN1_H, GNN1_J, GNN2_K, mttkrp_matrix, mttkrp_np, sddmm_np

FUSION = ["auto", "max", "none"]
MATS = ["cora"] + [n for n in ("bcsstk13",) if SHARED is not None and (SHARED / f"{n}.npz").is_file()]
TENSORS = [n for n in ("wn18rr",) if SHARED is not None and (SHARED / f"{n}.npz").is_file()] or ["random-3d"]


@functools.lru_cache(maxsize=None)
def tensor(name):
    """(coords, data, shape) of a 3-order tensor: a corpus file, or ``random-3d`` (generated)."""
    if name == "random-3d":
        shape = (4000, 20, 4000)
        rng = np.random.default_rng(0)
        lin = np.unique(rng.integers(0, np.prod(shape), 100_000))
        coords = np.array(np.unravel_index(lin, shape), dtype=np.int64)
        return coords, rng.random(lin.size), shape
    with np.load(SHARED / f"{name}.npz") as z:
        return (np.ascontiguousarray(z["coords"], dtype=np.int64), np.ascontiguousarray(z["data"]),
                tuple(int(s) for s in z["shape"]))


def _first(build, fusion, key):
    """Run ``build()`` once with ``fusion`` (compiles); a mode that cannot run is skipped. Then
    warm it once per process (common.steady: the operands are kept per process, ``lazy``, and
    asv's one-call samples time the steady state, not the run-time tuner's first calls)."""
    try:
        build().materialize(fusion=fusion)
    except (NotImplementedError, ValueError, MemoryError) as e:
        raise NotImplementedError(f"fusion={fusion!r}: {type(e).__name__}: {e}") from None
    steady((*key, fusion), lambda: build().materialize(fusion=fusion), calls=100, budget_s=1.0)


class SDDMM:
    """S = A * (U @ V.T): A's pattern, one K-long dot product per stored entry when fused."""
    params = [MATS, [32, 128], FUSION]
    param_names = ["matrix", "K", "fusion"]

    def setup(self, name, K, fusion):
        A = matrix(name)
        self.lA = lazy(("A", name), lambda: A)
        self.lU = lazy(("U", name, K), lambda: dense(A.shape[0], K, seed=1))
        self.lV = lazy(("V", name, K), lambda: dense(A.shape[1], K, seed=2))
        _first(self.build, fusion, ("sddmm", name, K))

    def build(self):
        return self.lA * (self.lU @ self.lV.T)

    def time_lazysparse(self, name, K, fusion):
        self.build().materialize(fusion=fusion)


class SDDMMScipy:
    """The best plain scipy/NumPy SDDMM (chunked dot products at A's entries)."""
    params = [MATS, [32, 128]]
    param_names = ["matrix", "K"]

    def setup(self, name, K):
        self.A = matrix(name)
        self.U, self.V = dense(self.A.shape[0], K, seed=1), dense(self.A.shape[1], K, seed=2)

    def time_scipy(self, name, K):
        sddmm_np(self.A, self.U, self.V)


class GNN1:
    """(A @ X) @ W, X: m x 128, W: 128 x 16."""
    params = [MATS, FUSION]
    param_names = ["matrix", "fusion"]

    def setup(self, name, fusion):
        A = matrix(name)
        self.lA = lazy(("A", name), lambda: A)
        self.lX = lazy(("X", name, GNN1_H), lambda: dense(A.shape[1], GNN1_H, seed=1))
        self.lW = lazy(("W", GNN1_H, GNN1_J), lambda: dense(GNN1_H, GNN1_J, seed=2))
        _first(self.build, fusion, ("gnn1", name))

    def build(self):
        return (self.lA @ self.lX) @ self.lW

    def time_lazysparse(self, name, fusion):
        self.build().materialize(fusion=fusion)


class GNN1Scipy:
    params = [MATS]
    param_names = ["matrix"]

    def setup(self, name):
        self.A = matrix(name)
        self.X, self.W = dense(self.A.shape[1], GNN1_H, seed=1), dense(GNN1_H, GNN1_J, seed=2)

    def time_scipy(self, name):
        (self.A @ self.X) @ self.W


class GNN2:
    """(A * (X @ Y.T)) @ Y, X: n x 32, Y: m x 32 (an SDDMM feeding an SpMM)."""
    params = [MATS, FUSION]
    param_names = ["matrix", "fusion"]

    def setup(self, name, fusion):
        A = matrix(name)
        self.lA = lazy(("A", name), lambda: A)
        self.lX = lazy(("U", name, GNN2_K), lambda: dense(A.shape[0], GNN2_K, seed=1))
        self.lY = lazy(("V", name, GNN2_K), lambda: dense(A.shape[1], GNN2_K, seed=2))
        _first(self.build, fusion, ("gnn2", name))

    def build(self):
        return (self.lA * (self.lX @ self.lY.T)) @ self.lY

    def time_lazysparse(self, name, fusion):
        self.build().materialize(fusion=fusion)


class GNN2Scipy:
    params = [MATS]
    param_names = ["matrix"]

    def setup(self, name):
        self.A = matrix(name)
        self.X, self.Y = dense(self.A.shape[0], GNN2_K, seed=1), dense(self.A.shape[1], GNN2_K, seed=2)

    def time_scipy(self, name):
        sddmm_np(self.A, self.X, self.Y) @ self.Y


class MTTKRP:
    """einsum('ijk,jr,kr->ir', X, B, C) on a sparse 3-order tensor."""
    params = [TENSORS, [16, 32], FUSION]
    param_names = ["tensor", "R", "fusion"]

    def setup(self, name, R, fusion):
        import sparse
        coords, data, shape = tensor(name)
        self.lX = lazy(("X", name), lambda: sparse.COO(coords, data, shape=shape, has_duplicates=False,
                                                       sorted=True))
        self.lB = lazy(("B", name, R), lambda: dense(shape[1], R, seed=1))
        self.lC = lazy(("C", name, R), lambda: dense(shape[2], R, seed=2))
        _first(self.build, fusion, ("mttkrp", name, R))

    def build(self):
        return ls.einsum("ijk,jr,kr->ir", self.lX, self.lB, self.lC)

    def time_lazysparse(self, name, R, fusion):
        self.build().materialize(fusion=fusion)


class MTTKRPScipy:
    """Gathered B[j] * C[k] rows summed per i by one sparse product (X as I x nnz, built once)."""
    params = [TENSORS, [16, 32]]
    param_names = ["tensor", "R"]

    def setup(self, name, R):
        self.coords, self.data, self.shape = tensor(name)
        self.S = mttkrp_matrix(self.coords, self.data, self.shape)
        self.B, self.C = dense(self.shape[1], R, seed=1), dense(self.shape[2], R, seed=2)

    def time_scipy(self, name, R):
        mttkrp_np(self.coords, self.data, self.shape, self.B, self.C, self.S)
