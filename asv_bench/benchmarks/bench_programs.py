"""Lazy programs (``lazysparse/bench/programs.py``): Jacobi, PageRank and CG written as a user would,
left lazy with a check every 10 steps, materialized every step, and in scipy, at k = 10 and 100
steps (k = 1,000 is in the side-by-side script); warm plan and kernel caches."""
from asv_bench.benchmarks.common import SHARED, matrix


def _inputs(name, kind):
    import numpy as np

    import lazysparse as ls
    from lazysparse.bench.programs import problems
    M, b, d = problems(matrix(name))[kind]
    n = M.shape[0]
    x0 = np.full(n, 1.0 / n) if kind == "pagerank" else np.zeros(n)
    lazy = (ls.asarray(M), ls.asarray(b), ls.asarray(d) if d is not None else None, ls.asarray(x0))
    return (M, b, d, x0), lazy


class Programs:
    params = [["bcsstk16"] if SHARED is not None else ["rmat-14"], ["jacobi", "pagerank", "cg"], [10, 100]]
    param_names = ["matrix", "program", "k"]
    timeout = 300

    def setup(self, name, kind, k):
        from lazysparse.bench.programs import run_each, run_lazy
        self.sci, self.lz = _inputs(name, kind)
        run_lazy(kind, k, *self.lz)
        run_each(kind, k, *self.lz)

    def time_lazy_check_every_10(self, name, kind, k):
        from lazysparse.bench.programs import run_lazy
        run_lazy(kind, k, *self.lz)

    def time_materialize_each_step(self, name, kind, k):
        from lazysparse.bench.programs import run_each
        run_each(kind, k, *self.lz)

    def time_scipy(self, name, kind, k):
        from lazysparse.bench.programs import run_scipy
        run_scipy(kind, k, *self.sci)


class ScipySolvers:
    """scipy's ``cg`` on a lazysparse array (a linear operator whose products run in lazysparse's
    kernels) against scipy's ``cg`` on scipy's matrix, 100 steps."""
    params = [["bcsstk16"] if SHARED is not None else ["rmat-14"]]
    param_names = ["matrix"]
    timeout = 300

    def setup(self, name):
        (self.S, self.b, _, _), (self.A, _, _, _) = _inputs(name, "cg")
        self.time_scipy_cg_on_lazysparse(name)

    def time_scipy_cg_on_lazysparse(self, name):
        import scipy.sparse.linalg as sla
        sla.cg(self.A, self.b, rtol=0.0, atol=0.0, maxiter=100)

    def time_scipy_cg_on_scipy(self, name):
        import scipy.sparse.linalg as sla
        sla.cg(self.S, self.b, rtol=0.0, atol=0.0, maxiter=100)


class Workflows:
    """The five scipy workflows of ``lazysparse/bench/workflows.py`` (PageRank, TF-IDF rows, the
    normalised Laplacian, a CG solve, a spectral embedding), run with ``scipy.sparse`` and with
    ``lazysparse.sparse``: the same code, only the namespace changed."""
    params = [["PageRank", "TF-IDF rows", "normalised Laplacian", "CG solve", "spectral embedding"]]
    param_names = ["workflow"]
    timeout = 300

    def setup(self, name):
        from lazysparse.bench import workflows as W
        from lazysparse.datasets import load
        fn, corpus, kind = W.WORKFLOWS[name]
        if SHARED is None:  # (no corpus: the shipped graph, and SPD and count inputs made from it)
            corpus = "cora"
        self.fn, self.given = fn, W.inputs(kind, load(corpus))
        self.time_lazysparse(name)

    def time_lazysparse(self, name):
        import lazysparse.sparse as sp
        self.fn(sp, *self.given)

    def time_scipy(self, name):
        import scipy.sparse as sp
        self.fn(sp, *self.given)
