"""Cold start: plan + generate C + compile + run, each sample in a fresh process and an empty
kernel cache (``LAZYSPARSE_CACHE_DIR`` pointed at a new folder)."""
from asv_bench.benchmarks.common import cold_compile_code

_SMALL = """
A = ls.asarray(sp.random_array((1000, 1000), density=0.01, format="csr", rng=0))
B = ls.asarray(sp.random_array((1000, 1000), density=0.01, format="csr", rng=1))
x = ls.asarray(np.random.default_rng(0).random(1000))
U = ls.asarray(np.random.default_rng(1).random((1000, 16)))
V = ls.asarray(np.random.default_rng(2).random((1000, 16)))
"""


class ColdCompile:
    timeout = 300
    repeat = 3
    number = 1

    def timeraw_spmv(self):
        return cold_compile_code("A @ x", _SMALL)

    def timeraw_add(self):
        return cold_compile_code("A + B", _SMALL)

    def timeraw_sddmm(self):
        return cold_compile_code("A * (U @ V.T)", _SMALL)

    def timeraw_sum(self):
        return cold_compile_code("A.sum(axis=1)", _SMALL)

    def timeraw_warm_import_and_spmv_reference(self):
        # Same statement with the kernel already compiled in this process (setup warms it):
        # the difference to timeraw_spmv is the cold-compile cost.
        stmt, setup = cold_compile_code("A @ x", _SMALL)
        return stmt, setup + "\n_w = (A @ x).materialize()\n"
