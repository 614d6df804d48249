"""SpMV under ls.Schedule loop transformations on two threads: the compiler's default (row chunks,
or nonzero tiles where compiler/plan/skew.py reads them off the row lengths), the row chunks alone,
a plain row-parallel loop (``divide`` into one block of rows per thread), and tiles of nonzeros
(``fuse + pos + split``), on a uniform and an R-MAT matrix (the load-balance pair) and on the skewed
rows of "A Sparse Iteration Space Transformation Framework for Sparse Tensor Algebra" (``k * c**i``
entries, c = 1.5, one row in four of the entries)."""
from asv_bench.benchmarks.common import MATRICES, dense, lazy, matrix, steady

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)
from lazysparse.bench.balance import _call, geometric_rows, schedules  # noqa: E402


class ScheduledSpMV:
    params = [[m for m in MATRICES if m in ("uniform-20k", "rmat-14")] + ["skew-1.5"],
              ["default", "chunks", "rows", "tiles"]]
    param_names = ["matrix", "schedule"]

    def setup(self, name, sched):
        self.before = ls.get_num_threads()
        ls.set_num_threads(2)
        M = geometric_rows(1 << 14, 1 << 18, 1 << 20, 1.5) if name == "skew-1.5" else matrix(name)
        # (kept arrays, steady once: the tuner's choices stay on them, common.lazy)
        lM = lazy(("M", name), lambda: M)
        lx = lazy(("x", name), lambda: dense(M.shape[1]))
        self.f = _call(lM, lx, schedules(2)[sched])
        steady((name, sched), self.f)  # compiled, the default's first call decided, tuner settled

    def teardown(self, name, sched):
        ls.set_num_threads(self.before)

    def time_lazysparse(self, name, sched):
        self.f()
