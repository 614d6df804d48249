"""``python -m lazysparse demo``: three graph kernels, checked against scipy/NumPy and timed.

Runs on the Cora citation graph shipped with the package and on a generated R-MAT power-law graph:

* SpMV   ``y = A @ x``
* GNN    ``H = A @ (X @ W)``            (X: n x 64 dense, W: 64 x 16)
* SDDMM  ``S = einsum("ij,ik,jk->ij", A, U, V)``  (U, V: n x 32; one dot product per nonzero of A)

Each lazysparse result is checked against scipy/NumPy, then both sides are timed (median of
interleaved rounds after one warm-up, which is when lazysparse compiles).  The exit status is non-zero if
any check fails.  ``--small`` (or ``LAZYSPARSE_DEMO_SMALL=1``) uses a smaller R-MAT graph and fewer
repeats, for tests.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

import lazysparse as ls
from lazysparse import datasets

# Dense comparisons are used when the dense form is at most this many elements.
_DENSE_CHECK_LIMIT = 4_000_000


def _to_numpy(a):
    """A concrete lazysparse result as a NumPy array or scipy sparse array."""
    if getattr(a, "is_lazy", False):
        a = a.materialize()
    if a.format.is_dense:
        return np.asarray(a.todense())
    return a.to_scipy()


def allclose(result, expected, rtol=1e-7, atol=1e-9) -> bool:
    """Compare a lazysparse result with a NumPy / scipy.sparse reference (values, not formats).
    Non-finite values must be equal (NaN with NaN, infinities with their sign); the tolerances
    apply to the finite ones."""
    got = _to_numpy(result)
    if got.shape != expected.shape:
        return False
    # sums of large values that cancel are exact only to rounding of the summands: scale atol
    # (by the finite values: an inf would make every tolerance infinite)
    atol = max(atol, 1e-12 * _finite_max(expected))
    n_elems = int(np.prod(got.shape, dtype=np.int64))
    if not sp.issparse(got) and not sp.issparse(expected):
        return bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))
    if n_elems <= _DENSE_CHECK_LIMIT:
        g = got.toarray() if sp.issparse(got) else np.asarray(got)
        e = expected.toarray() if sp.issparse(expected) else np.asarray(expected)
        return bool(np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True))
    # Large sparse: compare through the difference, never densifying; the non-finite entries
    # first, by position and value (their difference would be NaN)
    g, g_bad = _without_nonfinite(got)
    e, e_bad = _without_nonfinite(expected)
    if not all(np.array_equal(a, b, equal_nan=True) for a, b in zip(g_bad, e_bad)):
        return False
    diff = abs(g - e)
    if diff.nnz == 0:
        return True
    scale = abs(e).max() if e.nnz else 0.0
    return bool(diff.max() <= atol + rtol * scale)


def _finite_max(a) -> float:
    v = np.asarray(a.data if sp.issparse(a) else a)
    v = v[np.isfinite(v)]
    return float(np.max(np.abs(v))) if v.size else 0.0


def _without_nonfinite(a):
    """(canonical CSR copy of ``a`` with its non-finite entries zeroed, (rows, columns, values)
    of those entries)."""
    m = sp.csr_array(a) if sp.issparse(a) else sp.csr_array(np.asarray(a))
    m = m.copy()
    m.sum_duplicates()
    bad = ~np.isfinite(m.data)
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))[bad]
    key = (rows, m.indices[bad].astype(np.int64), m.data[bad])
    m.data[bad] = 0
    return m, key



def _materialize(x):
    return x.materialize() if getattr(x, "is_lazy", False) else x


def sddmm_scipy(A: sp.csr_array, U: np.ndarray, V: np.ndarray) -> sp.csr_array:
    """The best plain scipy/NumPy SDDMM: one dot product per stored entry (never forms U @ V.T)."""
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    vals = A.data * np.einsum("ij,ij->i", U[rows], V[A.indices])
    return sp.csr_array((vals, A.indices, A.indptr), shape=A.shape)


def kernels(A: sp.csr_array, seed: int = 0):
    """(name, lazysparse builder, scipy function) for each demo kernel on graph ``A``."""
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
        ("SpMV  A @ x", lambda: ls.einsum("ij,j->i", lA, lx), lambda: A @ x),
        ("GNN   A @ (X @ W)", lambda: lA @ (lX @ lW), lambda: A @ (X @ W)),
        # one statement, so one kernel iterating A's nonzeros; the operator form A * (U @ V.T)
        # becomes the same kernel once whole-DAG fusion lands
        ("SDDMM einsum(ij,ik,jk->ij)", lambda: ls.einsum("ij,ik,jk->ij", lA, lU, lV), lambda: sddmm_scipy(A, U, V)),
    ]


def run(small: bool = False, repeat: int | None = None, scale: int | None = None,
        out=sys.stdout) -> bool:
    """Run the demo; print the table to ``out``; return True when every check passed."""
    from lazysparse.bench.suite import measure_interleaved
    if repeat is None:
        repeat = 3 if small else 21
    if scale is None:
        scale = 10 if small else 14
    graphs = [("cora", datasets.load("cora")),
              (f"rmat-{scale}", datasets.rmat(scale, edge_factor=16, seed=0))]

    print(f"lazysparse {ls.__version__} demo: median of {repeat} interleaved rounds after one "
          f"warm-up (the warm-up compiles); threads={ls.get_num_threads()}", file=out)
    for gname, A in graphs:
        print(f"  {gname}: {A.shape[0]:,} x {A.shape[1]:,}, nnz {A.nnz:,}", file=out)
    header = f"{'kernel':<22} {'graph':<9} {'lazysparse ms':>14} {'scipy ms':>10} {'ratio':>7}  check"
    print(header, file=out)
    print("-" * len(header), file=out)
    all_ok = True
    for gname, A in graphs:
        for kname, build, reference in kernels(A):
            try:
                t0 = time.perf_counter()
                result = _materialize(build())          # warm-up: plans and compiles
                first_ms = (time.perf_counter() - t0) * 1e3
                expected = reference()
                ok = allclose(result, expected)
                # interleaved rounds, as in the side-by-side bench: drift on a shared machine
                # hits both sides alike (and lazysparse's first calls measure its schedules)
                times = measure_interleaved({"lazysparse": lambda: _materialize(build()),
                                             "scipy": reference}, repeat, budget_s=4.0)
                for side in times.values():
                    if "error" in side:
                        raise RuntimeError(side["error"])
                ls_ms, sp_ms = times["lazysparse"]["median_ms"], times["scipy"]["median_ms"]
                status = "ok" if ok else "FAILED"
                line = (f"{kname:<22} {gname:<9} {ls_ms:>14.3f} {sp_ms:>10.3f} "
                        f"{ls_ms / sp_ms:>7.2f}  {status}  (first call {first_ms:.0f} ms)")
            except Exception as exc:  # report, keep going, fail at the end
                ok = False
                line = (f"{kname:<22} {gname:<9} {'-':>14} {'-':>10} {'-':>7}  "
                        f"FAILED ({type(exc).__name__}: {exc})")
            all_ok &= ok
            print(line, file=out, flush=True)
    print("ratio = lazysparse time / scipy time (below 1 means lazysparse is faster)", file=out)
    print("all checks ok" if all_ok else "SOME CHECKS FAILED", file=out)
    return all_ok


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lazysparse demo", description=__doc__.split("\n")[0])
    p.add_argument("--small", action="store_true",
                   default=os.environ.get("LAZYSPARSE_DEMO_SMALL", "") not in ("", "0"),
                   help="small R-MAT graph and few repeats (also LAZYSPARSE_DEMO_SMALL=1)")
    p.add_argument("--repeat", type=int, default=None, help="timed runs per kernel")
    p.add_argument("--scale", type=int, default=None, help="R-MAT scale (2**scale rows)")
    args = p.parse_args(argv)
    return 0 if run(small=args.small, repeat=args.repeat, scale=args.scale) else 1


if __name__ == "__main__":
    sys.exit(main())
