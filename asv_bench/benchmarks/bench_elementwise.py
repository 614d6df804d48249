"""Elementwise A + B, A * B, A + A.T and a fused A + B + C, warm kernel cache; one array read
twice at the same subscripts (A * A, A + A, sum(A * A), where(A > 0, A, 0))."""
from asv_bench.benchmarks.common import MATRICES, dense, lazy, matrix, other, run, steady

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)


class Elementwise:
    params = [MATRICES]
    param_names = ["matrix"]

    def setup(self, name):
        self.A = matrix(name)
        self.B = other(name)
        self.C = self.B.T.tocsr()
        # kept per process and warmed once (common.lazy, common.steady: asv runs setup before
        # every one-call sample, and new arrays would start the run-time tuner over)
        self.lA, self.lB, self.lC = (lazy((k, name), lambda m=m: m)
                                     for k, m in (("A", self.A), ("B", self.B), ("C", self.C)))
        threads = ls.get_num_threads()
        for f in (self.time_lazysparse_add, self.time_lazysparse_multiply,
                  self.time_lazysparse_add_transpose, self.time_lazysparse_add3,
                  self.time_lazysparse_square_product, self.time_lazysparse_self_add,
                  self.time_lazysparse_frobenius, self.time_lazysparse_threshold):
            steady((f.__name__, name, threads), lambda f=f: f(name), calls=300, budget_s=0.5)

    def time_lazysparse_add(self, name):
        run(self.lA + self.lB)

    def time_scipy_add(self, name):
        self.A + self.B

    def time_lazysparse_multiply(self, name):
        run(self.lA * self.lB)

    def time_scipy_multiply(self, name):
        self.A.multiply(self.B)

    def time_lazysparse_add_transpose(self, name):
        run(self.lA + self.lA.T)

    def time_scipy_add_transpose(self, name):
        self.A + self.A.T

    def time_lazysparse_add3(self, name):
        run(self.lA + self.lB + self.lC)

    def time_scipy_add3(self, name):
        self.A + self.B + self.C

    # one array read twice: one iterator (docs/design.md, "api: building the DAG")
    def time_lazysparse_square_product(self, name):
        run(self.lA * self.lA)

    def time_scipy_square_product(self, name):
        self.A.multiply(self.A)

    def time_lazysparse_self_add(self, name):
        run(self.lA + self.lA)

    def time_scipy_self_add(self, name):
        self.A + self.A

    def time_lazysparse_frobenius(self, name):
        run((self.lA * self.lA).sum())

    def time_scipy_frobenius(self, name):
        self.A.multiply(self.A).sum()

    def time_lazysparse_threshold(self, name):
        run(ls.where(self.lA > 0.5, self.lA, 0))

    def time_scipy_threshold(self, name):
        self.A.multiply(self.A > 0.5)



class ElementwiseTwoThreads:
    """The lazysparse side on two threads: rows appended by each thread to buffers of its own,
    copied into place after (compiler/lower/parallel.py, ``emit_par_rows``); scipy's side is above (one
    thread)."""
    params = Elementwise.params
    param_names = Elementwise.param_names

    def setup(self, name):
        ls.set_num_threads(2)
        Elementwise.setup(self, name)

    def teardown(self, name):
        ls.set_num_threads(1)

    time_lazysparse_add = Elementwise.time_lazysparse_add
    time_lazysparse_multiply = Elementwise.time_lazysparse_multiply
    time_lazysparse_add_transpose = Elementwise.time_lazysparse_add_transpose
    time_lazysparse_add3 = Elementwise.time_lazysparse_add3


class Transcendental:
    """Maps that call libm: ``expm1``/``tanh`` of the stored values (the pattern kept) against
    scipy's ``A.expm1()``/``A.tanh()`` (NumPy's loops, AVX-512 SVML where the CPU has it), and
    ``exp`` of a dense 1000 x 1000 array against NumPy. The kernels call glibc's vector variants
    where the compiler probe found them (runtime/toolchain.py, ``MVEC_*``)."""
    params = Elementwise.params
    param_names = Elementwise.param_names

    def setup(self, name):
        self.A = matrix(name)
        self.lA = lazy(("A", name), lambda: self.A)
        self.D = dense(1000, 1000)
        self.lD = lazy(("D", 1000), lambda: self.D)
        for f in (self.time_lazysparse_expm1, self.time_lazysparse_tanh, self.time_lazysparse_dense_exp):
            steady((f.__name__, name), lambda f=f: f(name), calls=100, budget_s=0.5)

    def time_lazysparse_expm1(self, name):
        run(ls.expm1(self.lA))

    def time_scipy_expm1(self, name):
        self.A.expm1()

    def time_lazysparse_tanh(self, name):
        run(ls.tanh(self.lA))

    def time_scipy_tanh(self, name):
        self.A.tanh()

    def time_lazysparse_dense_exp(self, name):
        run(ls.exp(self.lD))

    def time_numpy_dense_exp(self, name):
        import numpy as np
        np.exp(self.D)
