"""Format conversions and export to scipy, warm kernel cache."""
from asv_bench.benchmarks.common import MATRICES, matrix, run

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)


class Conversions:
    params = [MATRICES]
    param_names = ["matrix"]

    def setup(self, name):
        self.A = matrix(name)
        self.lA = ls.asarray(self.A)
        run(self.lA.asformat("csc"))
        run(self.lA.asformat("coo"))

    def time_lazysparse_tocsc(self, name):
        run(self.lA.asformat("csc"))

    def time_scipy_tocsc(self, name):
        self.A.tocsc()

    def time_lazysparse_tocoo(self, name):
        run(self.lA.asformat("coo"))

    def time_scipy_tocoo(self, name):
        self.A.tocoo()

    def time_asarray_from_scipy(self, name):
        ls.asarray(self.A)

    def time_lazysparse_transpose_tocsr(self, name):
        run(self.lA.T.materialize(format="csr"))
