"""Reductions, warm kernel cache: sums over axis 0, axis 1 and everything, max/min (a NaN-aware
vector loop per row, one flat run of values for the whole matrix), dense vectors' sum and max,
and a scalar times a matrix (a bound plan keyed by what the scalar decides)."""
import numpy as np

from .common import MATRICES, matrix, run

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)


class Sum:
    params = [MATRICES, [0, 1, None]]
    param_names = ["matrix", "axis"]

    def setup(self, name, axis):
        self.A = matrix(name)
        self.lA = ls.asarray(self.A)
        for _ in range(8):  # the run-time tuner's first calls
            run(self.lA.sum(axis=axis))

    def time_lazysparse(self, name, axis):
        run(self.lA.sum(axis=axis))

    def time_scipy(self, name, axis):
        self.A.sum(axis=axis)


class MaxMin:
    params = [MATRICES, [1, None], ["max", "min"]]
    param_names = ["matrix", "axis", "op"]

    def setup(self, name, axis, op):
        self.A = matrix(name)
        self.lA = ls.asarray(self.A)
        for _ in range(8):  # the run-time tuner's first calls
            run(getattr(self.lA, op)(axis=axis))

    def time_lazysparse(self, name, axis, op):
        run(getattr(self.lA, op)(axis=axis))

    def time_scipy(self, name, axis, op):
        getattr(self.A, op)(axis=axis)


class DenseVector:
    params = [[10_000, 1_000_000], ["sum", "max"]]
    param_names = ["n", "op"]

    def setup(self, n, op):
        self.x = np.random.default_rng(0).random(n)
        self.lx = ls.asarray(self.x)
        run(getattr(self.lx, op)())

    def time_lazysparse(self, n, op):
        run(getattr(self.lx, op)())

    def time_numpy(self, n, op):
        getattr(self.x, op)()


class ScalarTimesMatrix:
    params = [MATRICES]
    param_names = ["matrix"]

    def setup(self, name):
        self.A = matrix(name)
        self.lA = ls.asarray(self.A)
        run(2.5 * self.lA)

    def time_lazysparse(self, name):
        run(2.5 * self.lA)

    def time_scipy(self, name):
        2.5 * self.A
