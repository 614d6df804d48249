"""Sums over axis 0, axis 1 and everything, warm kernel cache."""
from .common import MATRICES, matrix, run

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)


class Sum:
    params = [MATRICES, [0, 1, None]]
    param_names = ["matrix", "axis"]

    def setup(self, name, axis):
        self.A = matrix(name)
        self.lA = ls.asarray(self.A)
        run(self.lA.sum(axis=axis))

    def time_lazysparse(self, name, axis):
        run(self.lA.sum(axis=axis))

    def time_scipy(self, name, axis):
        self.A.sum(axis=axis)
