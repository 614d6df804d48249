"""Reductions, warm kernel cache: sums over axis 0, axis 1 and everything, max/min (a NaN-aware
vector loop per row, one flat run of values for the whole matrix), dense vectors' sum and max,
and a scalar times a matrix (a bound plan keyed by what the scalar decides)."""
import numpy as np

from asv_bench.benchmarks.common import MATRICES, lazy, matrix, run, steady

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)


class Sum:
    params = [MATRICES, [0, 1, None]]
    param_names = ["matrix", "axis"]

    def setup(self, name, axis):
        self.A = matrix(name)
        self.lA = lazy(("A", name), lambda: self.A)
        steady(("sum", name, axis), lambda: run(self.lA.sum(axis=axis)))

    def time_lazysparse(self, name, axis):
        run(self.lA.sum(axis=axis))

    def time_scipy(self, name, axis):
        self.A.sum(axis=axis)


class MaxMin:
    params = [MATRICES, [1, None], ["max", "min"]]
    param_names = ["matrix", "axis", "op"]

    def setup(self, name, axis, op):
        self.A = matrix(name)
        self.lA = lazy(("A", name), lambda: self.A)
        steady((op, name, axis), lambda: run(getattr(self.lA, op)(axis=axis)))

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


class SumsOverRowsTwoThreads:
    """Results summed over the outer loop on two threads, each thread summing into a private
    copy of the result (compiler/lower/parallel.py, ``emit_private``): column sums, ``A.T @ x``,
    ``A.T @ X`` (16 columns), and ``A @ x`` on a COO operand (its rows walked by stretches of
    one coordinate, each thread a share: ``share_positions``). scipy runs them on one thread."""
    params = [MATRICES, ["sum0", "spmv_t", "spmm_t", "coo_spmv"]]
    param_names = ["matrix", "kernel"]

    def setup(self, name, kernel):
        self.A = matrix(name)
        m, n = self.A.shape
        rng = np.random.default_rng(0)
        self.x, self.X, self.y = rng.random(m), rng.random((m, 16)), rng.random(n)
        self.C = self.A.tocoo()
        # (kept arrays, warmed to the tuner's steady state once a process: common.lazy)
        lA, lx, lX, ly, lC = (lazy((k, name), lambda v=v: v) for k, v in
                              zip("AxXyC", (self.A, self.x, self.X, self.y, self.C)))
        self.lazy = {"sum0": lambda: lA.sum(axis=0), "spmv_t": lambda: lA.T @ lx,
                     "spmm_t": lambda: lA.T @ lX, "coo_spmv": lambda: lC @ ly}[kernel]
        ls.set_num_threads(2)
        steady(("rows2", name, kernel), lambda: run(self.lazy()))

    def teardown(self, name, kernel):
        ls.set_num_threads(1)

    def time_lazysparse(self, name, kernel):
        run(self.lazy())

    def time_scipy(self, name, kernel):
        A = self.A
        {"sum0": lambda: A.sum(axis=0), "spmv_t": lambda: A.T @ self.x,
         "spmm_t": lambda: A.T @ self.X, "coo_spmv": lambda: self.C @ self.y}[kernel]()


class SharedReads:
    """Programs that read one value in several operations: a variance (a sum and a count sharing one
    flat loop over the entries, then the squared deviations), row standard deviations, a row
    normalisation ``E / E.sum(axis=1)`` with ``E = expm1(A)`` (E computed once a row, the result in
    A's pattern), and ``A @ x`` normalised (one product however often ``x`` is wrapped). Peer:
    scipy's idiomatic spellings (scipy has no variance: ``mean(A**2) - mean(A)**2``, one pass, less
    accurate); pydata/sparse in ``SharedReadsPydata``."""
    params = [MATRICES, ["var", "std1", "rownorm", "spmv_norm"]]
    param_names = ["matrix", "kernel"]

    def setup(self, name, kernel):
        self.A = A = matrix(name)
        x = np.random.default_rng(0).random(A.shape[1])
        lA = lazy(("A", name), lambda: A)
        self.lazy = {
            "var": lambda: lA.var(),
            "std1": lambda: lA.std(axis=1),
            "rownorm": lambda: ls.expm1(lA) / ls.expm1(lA).sum(axis=1, keepdims=True),
            "spmv_norm": lambda: (lA @ x) / ls.sqrt(((lA @ x) ** 2).sum()),
        }[kernel]

        def scipy_rownorm():
            E = A.expm1()
            return E.multiply(1.0 / E.sum(axis=1)[:, None])

        def scipy_spmv_norm():
            y = A @ x
            return y / np.sqrt((y ** 2).sum())
        self.scipy = {
            "var": lambda: A.power(2).mean() - A.mean() ** 2,
            "std1": lambda: np.sqrt(np.asarray(A.power(2).mean(axis=1)).ravel()
                                    - np.asarray(A.mean(axis=1)).ravel() ** 2),
            "rownorm": scipy_rownorm,
            "spmv_norm": scipy_spmv_norm,
        }[kernel]
        steady(("shared", name, kernel), lambda: run(self.lazy()))

    def time_lazysparse(self, name, kernel):
        run(self.lazy())

    def time_scipy(self, name, kernel):
        self.scipy()


class SharedReadsPydata:
    """pydata/sparse on ``SharedReads``' programs it runs in reasonable time: its own ``var``
    and ``std`` densify (one call on bcsstk16: 35 s and 23 s) and are left out;
    ``E / E.sum(...)`` divides the fill 0 by the sums (a NaN fill), so the row normalisation
    multiplies by the reciprocals."""
    params = [MATRICES, ["rownorm", "spmv_norm"]]
    param_names = ["matrix", "kernel"]

    def setup(self, name, kernel):
        import sparse
        A = matrix(name)
        S = sparse.COO.from_scipy_sparse(A)
        x = np.random.default_rng(0).random(A.shape[1])
        self.pydata = {
            "rownorm": lambda: (lambda E: E * (1.0 / E.sum(axis=1, keepdims=True).todense()))(np.expm1(S)),
            "spmv_norm": lambda: (lambda y: y / np.sqrt((y ** 2).sum()))(S @ x),
        }[kernel]
        try:
            self.pydata()
        except ValueError as e:  # (a non-constant fill: expm1 overflows on a matrix's values)
            raise NotImplementedError(f"pydata/sparse: {e}") from None

    def time_pydata(self, name, kernel):
        self.pydata()
