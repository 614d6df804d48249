"""SpMV under ls.Schedule loop transformations (issue 6) on two threads: the compiler's own
schedule, a plain row-parallel loop (``divide`` into one block of rows per thread), and tiles of
nonzeros (``fuse + pos + split``), on a uniform and an R-MAT matrix (the load-balance pair)."""
from .common import MATRICES, dense, matrix, run

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)
from lazysparse.bench_balance import schedules  # noqa: E402


class ScheduledSpMV:
    params = [[m for m in MATRICES if m in ("uniform-20k", "rmat-14")], ["default", "rows", "tiles"]]
    param_names = ["matrix", "schedule"]

    def setup(self, name, sched):
        self.before = ls.get_num_threads()
        ls.set_num_threads(2)
        self.lA = ls.asarray(matrix(name))
        self.lx = ls.asarray(dense(self.lA.shape[1]))
        self.s = schedules(2)[sched]
        self.time_lazysparse(name, sched)  # compile once; timings below are warm

    def teardown(self, name, sched):
        ls.set_num_threads(self.before)

    def time_lazysparse(self, name, sched):
        if self.s is None:
            run(self.lA @ self.lx)
        else:
            (self.lA @ self.lx).materialize(schedule=self.s)
