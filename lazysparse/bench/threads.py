"""The thread count every library in a benchmark process runs with: the thread variables
(``OMP_NUM_THREADS`` and friends) must be set before any BLAS/OpenMP pool starts, so a benchmark
re-executes its interpreter with them set."""
from __future__ import annotations

import os
import sys

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "LAZYSPARSE_NUM_THREADS")
_REEXEC_MARK = "_LAZYSPARSE_BENCH_REEXEC"

# --wait passive: every OpenMP runtime in the process sleeps as soon as its region ends.
# Several thread pools in one process (ours, SuiteSparse's, MKL's, torch's) otherwise spin
# after their calls and take the other cores from the next library's parallel region: with two
# threads on two vCPUs, cage10 SpMV took 2.5 ms in such a run against 0.05 alone, for
# lazysparse and graphblas alike (docs/performance.md, "Reading the numbers on a shared machine").
PASSIVE = {"OMP_WAIT_POLICY": "passive", "KMP_BLOCKTIME": "0"}


def ensure_threads(threads: int, argv: list[str], module: str, wait: str = "default") -> None:
    """Re-execute ``module`` with the thread variables set, so BLAS/OpenMP pools start with
    that size (and, for ``wait="passive"``, sleep when idle)."""
    want = str(threads)
    extra = PASSIVE if wait == "passive" else {}
    if os.environ.get(_REEXEC_MARK) == "1" or (all(os.environ.get(k) == want for k in THREAD_VARS)
                                                and all(os.environ.get(k) == v for k, v in extra.items())):
        return
    env = dict(os.environ)
    env.update({k: want for k in THREAD_VARS})
    env.update(extra)
    env[_REEXEC_MARK] = "1"
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", module, *argv], env)

