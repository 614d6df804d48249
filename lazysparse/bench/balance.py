"""Load balance of SpMV schedules: time per stored entry on an R-MAT graph against a uniform
random matrix of the same shape and number of entries, on several threads, for the compiler's
default schedule and the fixed row, chunk and tile schedules it chooses between."""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.datasets import rmat
from lazysparse.compiler.plan import skew


CHUNKS = "chunks"  # the default with compiler/plan/skew.py's tile choice off


def schedules(threads, tile=2048):
    return {
        "default": None,
        "chunks": CHUNKS,
        "rows": ls.Schedule().divide("i0", "r0", "r1", threads).parallelize("r0"),
        "tiles": (ls.Schedule().fuse("i0", "i1", "f").pos("f", "p", "T0")
                  .split("p", "p0", "p1", tile).parallelize("p0", races="atomics")),
    }


def _call(lM, x, s):
    """``lM @ x`` under schedule ``s`` (None: the default; CHUNKS: the default without tiles)."""
    if s is None:
        return lambda: (lM @ x).materialize()
    if s == CHUNKS:
        def chunks():
            saved, skew.SKEW_TILES = skew.SKEW_TILES, float("inf")
            try:
                return (lM @ x).materialize()
            finally:
                skew.SKEW_TILES = saved
        return chunks
    return lambda: (lM @ x).materialize(schedule=s)


def _median(f, repeat):
    f()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def uniform_like(A, seed=1):
    rng = np.random.default_rng(seed)
    m, n = A.shape
    keys = np.unique(rng.integers(0, m * n, size=int(A.nnz * 1.02), dtype=np.int64))[:A.nnz]
    rng.shuffle(keys)
    keys = np.sort(keys[:A.nnz])
    return sp.csr_array((rng.random(keys.size), (keys // n, keys % n)), shape=A.shape)


def run(scale=18, threads=2, repeat=15, tile=2048, permute=True):
    G = rmat(scale, edge_factor=16, seed=0, permute=permute)
    U = uniform_like(G)
    x = np.random.default_rng(2).random(G.shape[1])
    ls.set_num_threads(threads)
    rows = []
    for name, M in (("rmat", G), ("uniform", U)):
        lM = ls.asarray(M)
        row = {"scipy": _median(lambda: M @ x, repeat) / M.nnz}
        for sname, s in schedules(threads, tile).items():
            f = _call(lM, x, s)
            y = f().todense()
            np.testing.assert_allclose(y, M @ x, rtol=1e-10, atol=1e-10)
            row[sname] = _median(f, repeat) / M.nnz
        rows.append((name, M.nnz, row))
    return rows


def geometric_rows(m, n, nnz, c, seed=0):
    """The skew generator of "A Sparse Iteration Space Transformation Framework for Sparse
    Tensor Algebra" (Fig. 33): row ``i`` holds about ``k * c**i`` entries (each
    at most ``n``), ``k`` chosen so that they sum to ``nnz``; rows shuffled; ``c = 1`` is
    uniform."""
    rng = np.random.default_rng(seed)
    w = np.ones(m) if c == 1 else np.exp((np.arange(m) - (m - 1)) * np.log(c))
    lens = np.minimum(np.round(w / w.sum() * nnz), n).astype(np.int64)
    rows = np.repeat(np.arange(m), lens)
    cols = rng.integers(0, n, size=rows.size)
    A = sp.csr_array((rng.random(rows.size), (rows, cols)), shape=(m, n))
    A.sum_duplicates()
    perm = rng.permutation(m)
    return sp.csr_array(A[perm])


def skew_sweep(cs, m=1 << 16, n=1 << 20, nnz=1 << 22, threads=2, repeat=11, tile=2048):
    """Time per entry of each schedule as the skew ``c`` grows."""
    x = np.random.default_rng(2).random(n)
    ls.set_num_threads(threads)
    out = []
    for c in cs:
        M = geometric_rows(m, n, nnz, c)
        lM = ls.asarray(M)
        row = {"max row": int(np.diff(M.indptr).max()), "scipy": _median(lambda: M @ x, repeat) / M.nnz}
        for sname, s in schedules(threads, tile).items():
            f = _call(lM, x, s)
            np.testing.assert_allclose(f().todense(), M @ x, rtol=1e-10, atol=1e-10)
            row[sname] = _median(f, repeat) / M.nnz
        out.append((c, M.nnz, row))
    return out


def sweep_table(rows, threads):
    cols = [c for c in rows[0][2] if c != "max row"]
    out = [f"SpMV, {threads} threads, rows of k*c^i entries (shuffled): ns per stored entry (median)",
           "| c | nnz | longest row | " + " | ".join(cols) + " |", "|---:|---:|---:|" + "---:|" * len(cols)]
    for c, nnz, row in rows:
        out.append(f"| {c} | {nnz} | {row['max row']} | " + " | ".join(f"{row[k] * 1e9:.3f}" for k in cols) + " |")
    return "\n".join(out)


def table(rows, threads):
    cols = list(rows[0][2])
    out = [f"SpMV, {threads} threads: ns per stored entry (median)",
           "| matrix | nnz | " + " | ".join(cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    for name, nnz, row in rows:
        out.append(f"| {name} | {nnz} | " + " | ".join(f"{row[c] * 1e9:.3f}" for c in cols) + " |")
    (_, _, g), (_, _, u) = rows
    out.append("| rmat / uniform | | " + " | ".join(f"{g[c] / u[c]:.2f}" for c in cols) + " |")
    return "\n".join(out)


_EPILOG = """\
examples:
  python -m lazysparse.bench.balance [--scale 18] [--threads 2] [--repeat 15] [--clustered]
  python -m lazysparse.bench.balance --skew 1 1.0001 1.001 1.01   (the k*c^i skew sweep)

Schedules: ``default`` (the compiler's: rows in dynamic chunks, or nonzero tiles where the
longest row is long enough, compiler/plan/skew.py), ``chunks`` (the rows in dynamic chunks alone,
the tile choice off), ``rows`` (a plain row-parallel loop, ``divide(i0, threads)``: each thread a
fixed block of rows), ``tiles`` (``fuse + pos + split``: each tile the same number of stored
entries, rows cut between tiles summed atomically). A schedule loses to skew when its R-MAT time
per entry exceeds the uniform matrix's; the table prints that ratio and scipy's time for scale.
``--clustered`` keeps R-MAT's heavy rows together (no vertex permutation), where fixed row blocks
lose most.
"""


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m lazysparse.bench.balance", description=__doc__.split("\n\n")[0],
                                epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=18)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--tile", type=int, default=2048)
    p.add_argument("--clustered", action="store_true",
                   help="R-MAT without its vertex permutation: the heavy rows come first")
    p.add_argument("--skew", type=float, nargs="+", default=None, metavar="C",
                   help="instead: the k*c^i skew sweep over these c (e.g. 1 1.0001 1.001 1.01)")
    a = p.parse_args(argv)
    if a.skew:
        print(sweep_table(skew_sweep(a.skew, threads=a.threads, repeat=a.repeat, tile=a.tile), a.threads))
        return 0
    print(table(run(a.scale, a.threads, a.repeat, a.tile, not a.clustered), a.threads))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
