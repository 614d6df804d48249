"""SpMV y = A @ x (and the transposed product x @ A): warm kernel cache, and the run-time
tuner settled on the operands (common.steady), as in a loop."""
from asv_bench.benchmarks.common import MATRICES, dense, lazy, matrix, run, steady


class SpMV:
    params = [MATRICES]
    param_names = ["matrix"]

    def setup(self, name):
        self.A = matrix(name)
        self.x = dense(self.A.shape[1])
        self.lA = lazy(("A", name), lambda: self.A)
        self.lx = lazy(("x", name), lambda: self.x)
        steady(("spmv", name), lambda: run(self.lA @ self.lx))
        steady(("spmv_t", name), lambda: run(self.lx @ self.lA))

    def time_lazysparse(self, name):
        run(self.lA @ self.lx)

    def time_lazysparse_transposed(self, name):
        run(self.lx @ self.lA)

    def time_scipy(self, name):
        self.A @ self.x

    def time_scipy_transposed(self, name):
        self.x @ self.A
