"""SpMM Y = A @ X with a dense X of k columns, warm kernel cache."""
from asv_bench.benchmarks.common import MATRICES, dense, matrix, run

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)
from lazysparse.bench.peers import sddmm_scipy  # noqa: E402


class SpMM:
    params = [MATRICES, [16, 128]]
    param_names = ["matrix", "k"]

    def setup(self, name, k):
        self.A = matrix(name)
        self.X = dense(self.A.shape[1], k)
        self.lA = ls.asarray(self.A)
        self.lX = ls.asarray(self.X)
        run(self.lA @ self.lX)

    def time_lazysparse(self, name, k):
        run(self.lA @ self.lX)

    def time_scipy(self, name, k):
        self.A @ self.X


class SDDMM:
    """S = A * (U @ V.T): only the entries of U @ V.T where A is nonzero.

    Small graphs only for now: an unfused plan forms the dense n x n product (about 21 GB for
    email-Enron); widen to MATRICES once SDDMM is fused.
    """
    params = [["cora", "rmat-12"]]
    param_names = ["matrix"]

    def setup(self, name):
        self.A = matrix(name)
        n = self.A.shape[0]
        self.lA = ls.asarray(self.A)
        self.U, self.V = dense(n, 32, seed=1), dense(n, 32, seed=2)
        self.lU, self.lV = ls.asarray(self.U), ls.asarray(self.V)
        run(self.lA * (self.lU @ self.lV.T))

    def time_lazysparse(self, name):
        run(self.lA * (self.lU @ self.lV.T))

    def time_scipy(self, name):
        # the best plain scipy/NumPy SDDMM: one dot product per stored entry
        sddmm_scipy(self.A, self.U, self.V)
