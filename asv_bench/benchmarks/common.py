"""Inputs shared by the asv suites.

lazysparse is imported from the current environment, or from the repository root when it is not
installed (asv's "existing" environment does not install the project).
"""
from __future__ import annotations

import functools
import importlib.util
import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("lazysparse") is None:
    sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402


def _shared_data() -> Path | None:
    env = os.environ.get("LAZYSPARSE_DATA")
    p = Path(env) if env else REPO_ROOT.parent / "shared" / "data"
    return p if p.is_dir() else None


SHARED = _shared_data()
# Real matrices used when the benchmark corpus is present (one power-law graph, one FEM matrix).
_REAL = [n for n in ("email-Enron", "bcsstk16") if SHARED is not None and (SHARED / f"{n}.npz").is_file()]

# Square inputs for every matrix suite: uniform random, R-MAT power law, and real matrices.
MATRICES = ["uniform-20k", "rmat-14"] + _REAL


@functools.lru_cache(maxsize=None)
def matrix(name: str) -> sp.csr_array:
    """A float64 CSR matrix by name (cached: setup runs many times)."""
    if name == "uniform-20k":
        A = sp.random_array((20_000, 20_000), density=5e-4, format="csr", rng=0, dtype=np.float64)
    elif name == "cora":
        from lazysparse.datasets import load
        A = load("cora")
    elif name.startswith("rmat-"):
        from lazysparse.datasets import rmat
        A = rmat(int(name.split("-")[1]), edge_factor=16, seed=0)
    else:
        A = sp.load_npz(SHARED / f"{name}.npz")
    A = sp.csr_array(A)
    A.sum_duplicates()
    A.sort_indices()
    return A


@functools.lru_cache(maxsize=None)
def other(name: str) -> sp.csr_array:
    """A second matrix with the shape and density of ``matrix(name)`` (for A + B, A * B)."""
    A = matrix(name)
    B = sp.random_array(A.shape, density=A.nnz / (A.shape[0] * A.shape[1]), format="csr", rng=1,
                        dtype=np.float64)
    B.sort_indices()
    return B


def dense(rows: int, cols: int | None = None, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.random(rows) if cols is None else rng.random((rows, cols))


def run(x):
    """Materialize ``x`` if it is lazy (the lazysparse side of every time_ benchmark)."""
    return x.materialize() if getattr(x, "is_lazy", False) else x


_LAZY = {}
_STEADY = set()


def lazy(key, make):
    """``ls.asarray(make())``, made once per process under ``key`` and kept. asv runs ``setup``
    before every sample (one call each on these short kernels), and a new array would start the
    run-time tuner over on every sample (runtime/tuning.py): the samples would time its first
    measurement, five kernel runs a call, instead of the steady state of a loop."""
    if key not in _LAZY:
        import lazysparse as ls
        _LAZY[key] = ls.asarray(make())
    return _LAZY[key]


def steady(key, f, calls=1200, budget_s=2.0):
    """Call ``f`` until the tuner has settled on its operands (``_Settle``: about 800 calls of
    a short kernel) or ``budget_s`` has passed, once per process and ``key``: asv's samples
    then time the loop's steady state, as bench_spmv's warm-up does."""
    if key in _STEADY:
        return
    from lazysparse.bench.spmv import _calls
    _calls(f, calls, budget_s)
    _STEADY.add(key)


def cold_compile_code(build: str, inputs: str) -> tuple[str, str]:
    """(stmt, setup) for a cold-compile timeraw_ benchmark.

    ``setup`` (not timed) points ``LAZYSPARSE_CACHE_DIR`` at a fresh empty folder, imports
    lazysparse and runs ``inputs``; ``stmt`` (timed) builds ``build`` and materializes it, which
    plans, generates C, compiles and runs.
    """
    setup = f"""
import os, sys, tempfile
os.environ["LAZYSPARSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="ls-asv-cold-")
sys.path.insert(0, {str(REPO_ROOT)!r})
import numpy as np, scipy.sparse as sp
import lazysparse as ls
{inputs}
"""
    stmt = f"""
r = {build}
r = r.materialize() if r.is_lazy else r
"""
    return stmt, setup
