"""Indexing (``Array.__getitem__``, eager as scipy's) against scipy.sparse: a row, a block of rows,
every 7th row, rows picked by an array, one column, one element."""
import numpy as np

from asv_bench.benchmarks.common import MATRICES, matrix

import lazysparse as ls  # noqa: E402  (after .common, which finds the repo)

KEYS = {
    "row": 5,
    "rows": slice(100, 2000),
    "step_rows": slice(0, None, 7),
    "picked_rows": ([3, 9, 100, 5000],),
    "column": (slice(None), 7),
    "element": (5, 7),
}


class GetItem:
    params = [MATRICES, list(KEYS)]
    param_names = ["matrix", "key"]

    def setup(self, name, key):
        self.A = matrix(name)
        self.lA = ls.asarray(self.A)
        self.key = KEYS[key]
        self.lA[self.key]

    def time_lazysparse(self, name, key):
        self.lA[self.key]

    def time_scipy(self, name, key):
        self.A[self.key]
