"""SpMV y = A @ x (and the transposed product x @ A), warm kernel cache."""
from .common import MATRICES, dense, matrix, run

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)


class SpMV:
    params = [MATRICES]
    param_names = ["matrix"]

    def setup(self, name):
        self.A = matrix(name)
        self.x = dense(self.A.shape[1])
        self.lA = ls.asarray(self.A)
        self.lx = ls.asarray(self.x)
        run(self.lA @ self.lx)        # compile once; timings below are warm
        run(self.lx @ self.lA)

    def time_lazysparse(self, name):
        run(self.lA @ self.lx)

    def time_lazysparse_transposed(self, name):
        run(self.lx @ self.lA)

    def time_scipy(self, name):
        self.A @ self.x

    def time_scipy_transposed(self, name):
        self.x @ self.A
