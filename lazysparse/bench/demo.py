"""``python -m lazysparse demo``: three graph kernels (SpMV, a GNN layer and SDDMM) on the Cora
citation graph shipped with the package and on a generated R-MAT power-law graph, each checked
against scipy/NumPy and timed in its steady state, as a program that calls a kernel again and
again sees it; the exit status is non-zero if any check fails."""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

import lazysparse as ls
from lazysparse import datasets
from lazysparse.bench.checks import allclose
from lazysparse.bench.peers import sddmm_scipy
from lazysparse.bench.timing import (MIN_WARM_CALLS, measure_interleaved, tuning_window, warm,
                                     warm_until_settled)


def kernels(A: sp.csr_array, seed: int = 0):
    """(name, lazysparse builder, scipy function, lazysparse operands) for each demo kernel on
    graph ``A`` (the operands carry the run-time tuner's state: ``timing.tuning_pending``)."""
    n = A.shape[0]
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    X = rng.random((n, 64))
    W = rng.random((64, 16))
    U = rng.random((n, 32))
    V = rng.random((n, 32))
    # Concrete lazysparse arrays: zero-copy views of the scipy / NumPy buffers.
    lA, lx, lX, lW, lU, lV = (ls.asarray(o) for o in (A, x, X, W, U, V))
    return [
        ("SpMV  A @ x", lambda: ls.einsum("ij,j->i", lA, lx), lambda: A @ x, (lA, lx)),
        ("GNN   A @ (X @ W)", lambda: lA @ (lX @ lW), lambda: A @ (X @ W), (lA, lX, lW)),
        # one statement, so one kernel iterating A's nonzeros; the operator form A * (U @ V.T)
        # becomes the same kernel once whole-DAG fusion lands
        ("SDDMM einsum(ij,ik,jk->ij)", lambda: ls.einsum("ij,ik,jk->ij", lA, lU, lV),
         lambda: sddmm_scipy(A, U, V), (lA, lU, lV)),
    ]


def _materialize(x):
    return x.materialize() if getattr(x, "is_lazy", False) else x


_NAME_W = 26  # the longest kernel name


def _row(kname, gname, build, reference, operands, repeat):
    """One table row: check, steady-state timing; (line, ok)."""
    t0 = time.perf_counter()
    result = _materialize(build())          # the first call: plans and compiles
    first_ms = (time.perf_counter() - t0) * 1e3
    ok = allclose(result, reference())
    call = lambda: _materialize(build())  # noqa: E731
    calls, settled = warm_until_settled(call, operands)
    warm(reference, MIN_WARM_CALLS)
    # interleaved rounds, as in the side-by-side bench: drift on a shared machine hits both
    # sides alike
    times = measure_interleaved({"lazysparse": call, "scipy": reference}, repeat, budget_s=4.0)
    for side in times.values():
        if "error" in side:
            raise RuntimeError(side["error"])
    ls_ms, sp_ms = times["lazysparse"]["median_ms"], times["scipy"]["median_ms"]
    status = "ok" if ok else "FAILED"
    warmed = f"{calls} warm-up calls" + ("" if settled else ", tuner still measuring")
    return (f"{kname:<{_NAME_W}} {gname:<9} {ls_ms:>14.3f} {sp_ms:>10.3f} "
            f"{ls_ms / sp_ms:>7.2f}  {status}  (first call {first_ms:.0f} ms; {warmed})"), ok


def run(small: bool = False, repeat: int | None = None, scale: int | None = None,
        out=sys.stdout) -> bool:
    """Run the demo; print the table to ``out``; return True when every check passed."""
    if repeat is None:
        repeat = 3 if small else 21
    if scale is None:
        scale = 10 if small else 14
    graphs = [("cora", datasets.load("cora")),
              (f"rmat-{scale}", datasets.rmat(scale, edge_factor=16, seed=0))]

    print(f"lazysparse {ls.__version__} demo: threads={ls.get_num_threads()}", file=out)
    print(f"timed: steady state, after the warm-up calls each row shows (until lazysparse's "
          f"run-time tuner settled: {MIN_WARM_CALLS} to {tuning_window()}; scipy {MIN_WARM_CALLS}), "
          f"median of {repeat} interleaved rounds; the first call (it compiles) apart", file=out)
    for gname, A in graphs:
        print(f"  {gname}: {A.shape[0]:,} x {A.shape[1]:,}, nnz {A.nnz:,}", file=out)
    header = (f"{'kernel':<{_NAME_W}} {'graph':<9} {'lazysparse ms':>14} {'scipy ms':>10} "
              f"{'ratio':>7}  check")
    print(header, file=out)
    print("-" * len(header), file=out)
    all_ok = True
    for gname, A in graphs:
        for kname, build, reference, operands in kernels(A):
            try:
                line, ok = _row(kname, gname, build, reference, operands, repeat)
            except Exception as exc:  # report, keep going, fail at the end
                ok = False
                line = (f"{kname:<{_NAME_W}} {gname:<9} {'-':>14} {'-':>10} {'-':>7}  "
                        f"FAILED ({type(exc).__name__}: {exc})")
            all_ok &= ok
            print(line, file=out, flush=True)
    print("ratio = lazysparse time / scipy time (below 1 means lazysparse is faster)", file=out)
    print("all checks ok" if all_ok else "SOME CHECKS FAILED", file=out)
    return all_ok


_EPILOG = """\
kernels:
  SpMV   y = A @ x
  GNN    H = A @ (X @ W)            (X: n x 64 dense, W: 64 x 16)
  SDDMM  S = einsum("ij,ik,jk->ij", A, U, V)  (U, V: n x 32; one dot product per nonzero of A)

Each lazysparse result is checked against scipy/NumPy; its first call (which plans and compiles)
is timed apart. lazysparse measures a kernel's loop variants on the data over its first calls on
an operand (runtime/tuning.py; up to about 2,000 calls on a short kernel), so each kernel is first
called untimed until that tuner has settled (at least MIN_WARM_CALLS calls, at most
tuning_window(); each row says how many), scipy MIN_WARM_CALLS times; then both sides are timed
in interleaved rounds (median). --small (or LAZYSPARSE_DEMO_SMALL=1) uses a smaller R-MAT graph
and fewer repeats, for tests.
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lazysparse demo",
                                description=__doc__,
                                epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--small", action="store_true",
                   default=os.environ.get("LAZYSPARSE_DEMO_SMALL", "") not in ("", "0"),
                   help="small R-MAT graph and few repeats (also LAZYSPARSE_DEMO_SMALL=1)")
    p.add_argument("--repeat", type=int, default=None, help="timed runs per kernel")
    p.add_argument("--scale", type=int, default=None, help="R-MAT scale (2**scale rows)")
    args = p.parse_args(argv)
    return 0 if run(small=args.small, repeat=args.repeat, scale=args.scale) else 1


if __name__ == "__main__":
    sys.exit(main())
