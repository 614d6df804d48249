"""Joining, scipy's constructors and selection methods against scipy.sparse: vstack, hstack,
diags, kron, triu, reshape, nonzero, the compiled any / clip / eliminate_zeros, and the
statistics (argmax/argmin, nanmax, count_nonzero along an axis, var)."""
import numpy as np
import scipy.sparse as sp

from asv_bench.benchmarks.common import MATRICES, matrix

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)

OPS = {
    "vstack": (lambda A: ls.vstack([A, A]), lambda M: sp.vstack([M, M], format="csr")),
    "hstack": (lambda A: ls.hstack([A, A]), lambda M: sp.hstack([M, M], format="csr")),
    "triu": (lambda A: ls.triu(A), lambda M: sp.triu(M, format="csr")),
    "reshape": (lambda A: A.reshape(A.shape[0] // 2, 2 * A.shape[1]),
                lambda M: M.reshape((M.shape[0] // 2, 2 * M.shape[1]))),
    "nonzero": (lambda A: A.nonzero(), lambda M: M.nonzero()),
    "any_rows": (lambda A: A.any(axis=1).materialize(), lambda M: (M != 0).max(axis=1)),
    "clip": (lambda A: A.clip(0, 0.5).materialize(), lambda M: M.minimum(0.5).maximum(0)),
    "eliminate_zeros": (lambda A: A.eliminate_zeros().materialize(), lambda M: M.copy().eliminate_zeros()),
    # statistics (lazysparse/api/statistics.py); scipy's var is the idiom E[x^2] - E[x]^2
    "argmax_rows": (lambda A: A.argmax(axis=1), lambda M: M.argmax(axis=1)),
    "argmin_cols": (lambda A: A.argmin(axis=0), lambda M: M.argmin(axis=0)),
    "nanmax_rows": (lambda A: A.nanmax(axis=1).materialize(), lambda M: M.nanmax(axis=1)),
    "count_nonzero_cols": (lambda A: A.count_nonzero(axis=0).materialize(), lambda M: M.count_nonzero(axis=0)),
    "var_cols": (lambda A: A.var(axis=0).materialize(),
                 lambda M: M.power(2).mean(axis=0) - np.square(M.mean(axis=0))),
}


class MatrixOps:
    params = [MATRICES, list(OPS)]
    param_names = ["matrix", "op"]

    def setup(self, name, op):
        self.M = matrix(name)
        self.A = ls.asarray(self.M)
        self.ls_op, self.sp_op = OPS[op]
        self.ls_op(self.A)

    def time_lazysparse(self, name, op):
        self.ls_op(self.A)

    def time_scipy(self, name, op):
        self.sp_op(self.M)


class Constructors:
    def setup(self):
        self.d = [np.ones(10**6), -2 * np.ones(10**6 + 1), np.ones(10**6)]
        self.S = sp.random_array((300, 300), density=0.02, format="csr", rng=1)
        self.lS = ls.asarray(self.S)

    def time_diags_lazysparse(self):
        ls.diags(self.d, [-1, 0, 1])

    def time_diags_scipy(self):
        sp.diags_array(self.d, offsets=[-1, 0, 1], format="csr")

    def time_kron_lazysparse(self):
        ls.kron(self.lS, self.lS)

    def time_kron_scipy(self):
        sp.kron(self.S, self.S, format="csr")
