"""Load balance of SpMV schedules (issue 6): time per stored entry on an R-MAT graph against a
uniform random matrix of the same shape and number of entries, on several threads.

    python -m lazysparse.bench_balance [--scale 18] [--threads 2] [--repeat 15]

Schedules: ``default`` (the compiler's: rows in dynamic chunks), ``rows`` (a plain
row-parallel loop, ``divide(i0, threads)``: each thread a fixed block of rows), ``tiles``
(``fuse + pos + split``: each tile the same number of stored entries, rows cut between tiles
summed atomically). A schedule loses to skew when its R-MAT time per entry exceeds the
uniform matrix's; the table prints that ratio and scipy's time for scale. ``--clustered``
keeps R-MAT's heavy rows together (no vertex permutation), where fixed row blocks lose most.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

import lazysparse as ls
from lazysparse.datasets import rmat


def schedules(threads, tile=2048):
    return {
        "default": None,
        "rows": ls.Schedule().divide("i0", "r0", "r1", threads).parallelize("r0"),
        "tiles": (ls.Schedule().fuse("i0", "i1", "f").pos("f", "p", "T0")
                  .split("p", "p0", "p1", tile).parallelize("p0", races="atomics")),
    }


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
            f = (lambda: (lM @ x).materialize()) if s is None else (lambda s=s: (lM @ x).materialize(schedule=s))
            y = f().todense()
            np.testing.assert_allclose(y, M @ x, rtol=1e-10, atol=1e-10)
            row[sname] = _median(f, repeat) / M.nnz
        rows.append((name, M.nnz, row))
    return rows


def table(rows, threads):
    cols = list(rows[0][2])
    out = [f"SpMV, {threads} threads: ns per stored entry (median)",
           "| matrix | nnz | " + " | ".join(cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    for name, nnz, row in rows:
        out.append(f"| {name} | {nnz} | " + " | ".join(f"{row[c] * 1e9:.3f}" for c in cols) + " |")
    (_, _, g), (_, _, u) = rows
    out.append("| rmat / uniform | | " + " | ".join(f"{g[c] / u[c]:.2f}" for c in cols) + " |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=18)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--tile", type=int, default=2048)
    p.add_argument("--clustered", action="store_true",
                   help="R-MAT without its vertex permutation: the heavy rows come first")
    a = p.parse_args(argv)
    print(table(run(a.scale, a.threads, a.repeat, a.tile, not a.clustered), a.threads))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
