"""Convolutions through affine subscripts ("Compiler Support for Sparse Tensor Convolutions"):
``ls.expr("O[h,w] = I[h+r, w+q] * F[r,q]")`` on a 999 x 999 input with a 3 x 3 filter, sparse (a new
window each call, or the window kept with the input) and dense (a strided view), against
scipy.signal and the idiomatic scipy.sparse sum of shifted slices. The side-by-side script is
``python -m lazysparse.bench.conv``."""
import numpy as np
import scipy.signal
import scipy.sparse as sp

from asv_bench.benchmarks.common import run  # noqa: F401  (finds the repository)

import lazysparse as ls  # noqa: E402

CONV = "O[h,w] = I[h+r, w+q] * F[r,q]"


class Conv2D:
    params = [[0.9, 0.99]]
    param_names = ["sparsity"]

    def setup(self, sparsity):
        rng = np.random.default_rng(0)
        self.D = rng.random((999, 999)) * (rng.random((999, 999)) >= sparsity)
        self.M = sp.csr_array(self.D)
        self.F = rng.random((3, 3))
        self.lM, self.lD, self.lF = ls.asarray(self.M), ls.asarray(self.D), ls.asarray(self.F)
        for I in (self.lM, self.lD):
            ls.expr(CONV, I=I, F=self.lF).materialize()

    def time_lazysparse_new_input(self, sparsity):
        ls.expr(CONV, I=ls.asarray(self.M), F=self.lF).materialize()

    def time_lazysparse_kept_window(self, sparsity):
        ls.expr(CONV, I=self.lM, F=self.lF).materialize()

    def time_lazysparse_dense(self, sparsity):
        ls.expr(CONV, I=self.lD, F=self.lF).materialize()

    def time_scipy_signal(self, sparsity):
        scipy.signal.correlate(self.D, self.F, mode="valid", method="direct")

    def time_scipy_sparse_shifted(self, sparsity):
        sum(self.F[r, q] * self.M[r:r + 997, q:q + 997] for r in range(3) for q in range(3))
