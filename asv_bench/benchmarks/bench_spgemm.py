"""Sparse products with sparse results: A @ A (Gustavson, a dense row workspace) and the masked
product A * (A @ A) (the mask row scattered once per row, compiler/lower/locate.py), warm kernel
cache, against scipy.sparse and, when installed, python-graphblas's ``mxm`` (masked:
``mask=A.S``)."""
from asv_bench.benchmarks.common import MATRICES, lazy, matrix, run, steady

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)

try:
    import graphblas as gb
    gb.ss.config["nthreads"] = 1
except Exception:  # optional peer
    gb = None


class SpGEMM:
    params = [[m for m in MATRICES if m != "uniform-20k"] + ["cora"]]
    param_names = ["matrix"]
    timeout = 300

    def setup(self, name):
        self.A = matrix(name)
        # kept per process and warmed past the measured flags' first calls (common.lazy)
        self.lA = lazy(("A", name), lambda: self.A)
        self.G = gb.io.from_scipy_sparse(self.A) if gb is not None else None
        steady(("product", name), lambda: self.time_lazysparse_product(name), calls=12)
        steady(("masked", name), lambda: self.time_lazysparse_masked(name), calls=12)

    def time_lazysparse_product(self, name):
        run(self.lA @ self.lA)

    def time_scipy_product(self, name):
        self.A @ self.A

    def time_lazysparse_masked(self, name):
        run(self.lA * (self.lA @ self.lA))

    def time_scipy_masked(self, name):
        self.A.multiply(self.A @ self.A)


if gb is not None:  # the peer's benchmarks exist only where it is installed
    def _graphblas_product(self, name):
        self.G.mxm(self.G).new()

    def _graphblas_masked(self, name):
        self.G.mxm(self.G).new(mask=self.G.S)

    SpGEMM.time_graphblas_product = _graphblas_product
    SpGEMM.time_graphblas_masked = _graphblas_masked


class SpGEMMTwoThreads:
    """``A @ A`` and ``A * (A @ A)`` on two threads: chunks of rows on the team, each thread with
    its own workspace and result buffers (compiler/lower/parallel.py, ``emit_par_rows``)."""
    params = SpGEMM.params
    param_names = SpGEMM.param_names
    timeout = 300

    def setup(self, name):
        ls.set_num_threads(2)
        self.lA = lazy(("A", name), lambda: matrix(name))
        steady(("product2", name), lambda: self.time_lazysparse_product(name), calls=12)
        steady(("masked2", name), lambda: self.time_lazysparse_masked(name), calls=12)

    def teardown(self, name):
        ls.set_num_threads(1)

    def time_lazysparse_product(self, name):
        run(self.lA @ self.lA)

    def time_lazysparse_masked(self, name):
        run(self.lA * (self.lA @ self.lA))
