"""SpMV against its bandwidth bound and the peers, in one process and one run: for each corpus
matrix the bytes SpMV must move are counted, a STREAM triad over that many bytes timed in the same
run turns them into a bound time, and the table prints lazysparse's fraction of that bound and its
ratio to the fastest peer (scipy.sparse, MKL through sparse_dot_mkl, SuiteSparse:GraphBLAS,
torch.sparse, as installed)."""
from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from lazysparse.bench.inputs import find_data_dir, load_items
from lazysparse.bench.peers import (MATRIX_PEER_KERNELS, available_peers, lazysparse_matrix_kernels,
                                    matrix_inputs)
from lazysparse.bench.threads import ensure_threads
from lazysparse.bench.timing import measure_interleaved, tuner_choices_since

_TRIAD = r"""
#include <stdint.h>
void ls_triad(double *a, const double *b, const double *c, double s, int64_t n, int nt) {
  #pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}
"""


def triad_fn(threads):
    """The compiled triad, as f(a, b, c)."""
    d = tempfile.mkdtemp(prefix="ls-triad-")
    src, so = os.path.join(d, "triad.c"), os.path.join(d, "triad.so")
    with open(src, "w") as f:
        f.write(_TRIAD)
    subprocess.run([os.environ.get("CC", "cc"), "-O3", "-fopenmp", "-shared", "-fPIC", src, "-o", so],
                   check=True)
    lib = ctypes.CDLL(so)
    lib.ls_triad.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_double, ctypes.c_int64, ctypes.c_int]

    def run(a, b, c):
        lib.ls_triad(a.ctypes.data, b.ctypes.data, c.ctypes.data, 3.0, a.size, threads)
    return run


def spmv_bytes(A) -> int:
    """What one y = A @ x must move: values, indices, positions, x and y, each once."""
    m, n = A.shape
    return (A.data.nbytes + A.indices.nbytes + A.indptr.nbytes + 8 * n + 8 * m)


WARM_CALLS = 1000  # untimed calls before each library's first timed block (at most WARM_S seconds)
WARM_S = 3.0
ROUNDS = 5         # blocks per library, in a shuffled order each round
REWARM = 300       # untimed calls at the start of each later block (at most REWARM_S seconds)
REWARM_S = 0.5


def _calls(fn, n, seconds):
    """``n`` untimed calls of ``fn``, fewer if ``seconds`` pass first (at least five)."""
    t_end = time.perf_counter() + seconds
    for k in range(n):
        fn()
        if k >= 5 and time.perf_counter() > t_end:
            break


def measure_blocks(fns, repeat, warm=WARM_CALLS, warm_s=WARM_S, rounds=ROUNDS):
    """Median times with each library's calls back to back: ``rounds`` rounds, each calling
    every library (shuffled order, seeded) for a block of untimed calls, then its share of the
    ``repeat`` timed ones. The first block of a library warms it up with ``warm`` calls (or
    ``warm_s`` seconds): the steady state of SpMV in a loop, where each core's branch predictor
    has learnt the rows' loop exits and lazysparse's tuner has settled on its loop
    (runtime/tuning.py ``_Settle``: about 800 calls on a short kernel); later blocks start with
    ``REWARM`` calls, as the libraries in between have run their own code on the cores. Rounds
    spread a slow minute of the shared machine over every library (R-MAT 2^20 moved by 1.5x
    from one minute to the next). On a machine with as many cores as threads, another
    library's OpenMP pool still spinning from its last call takes the cores the next call
    needs, so rounds of single calls with spinning pools measure the contention
    (docs/performance.md, "Reading the numbers on a shared machine")."""
    import random
    out, times, live = {}, {}, []
    for name, fn in fns.items():
        try:
            fn()
        except Exception as e:
            out[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            continue
        live.append(name)
        times[name] = []
    rng = random.Random(0)
    per = [repeat // rounds + (1 if r < repeat % rounds else 0) for r in range(rounds)]
    for r in range(rounds):
        order = list(live)
        rng.shuffle(order)
        for name in order:
            fn = fns[name]
            if r == 0:
                _calls(fn, warm, warm_s)
            else:
                _calls(fn, REWARM, REWARM_S)
            for _ in range(per[r]):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    for name in live:
        out[name] = {"median_ms": float(np.median(times[name])) * 1e3}
    return out


def measure(items, peers, threads, repeat, budget, blocks=False):
    import lazysparse as ls
    from lazysparse.runtime import tuning
    triad = triad_fn(threads)
    rows = []
    for it in items:
        A = it.matrix
        inp = matrix_inputs(A, kernels=("spmv",))
        fns = {"lazysparse": lazysparse_matrix_kernels(inp, False)["spmv"]}
        for p in peers:
            try:
                fns[p] = MATRIX_PEER_KERNELS[p](inp, False)["spmv"]
            except Exception:
                continue
        nbytes = spmv_bytes(A)
        k = max(1, nbytes // 24)  # three arrays of k doubles: the same bytes
        ta, tb, tc = np.zeros(k), np.ones(k), np.ones(k)
        fns["triad"] = lambda: triad(ta, tb, tc)
        y = ls.asarray(A) @ inp["x"]
        np.testing.assert_allclose(y.materialize().todense(), A @ inp["x"], rtol=1e-10, atol=1e-10)
        made = tuning.CHOICES_MADE[0]
        rec = measure_blocks(fns, repeat) if blocks else measure_interleaved(fns, repeat, budget)
        # the run-time tuner's choices during the measurement (runtime/tuning.py): which loop
        # each measurement kept, and the times it compared, for the record
        choices = tuner_choices_since(made)
        t_triad = rec["triad"]["median_ms"] / 1e3
        bw = 3 * k * 8 / t_triad
        bound_ms = nbytes / bw * 1e3
        ls_ms = rec["lazysparse"]["median_ms"]
        peer_ms = {p: rec[p]["median_ms"] for p in peers if p in rec and "median_ms" in rec[p]}
        best = min(peer_ms, key=peer_ms.get) if peer_ms else None
        rows.append(dict(name=it.name, nnz=A.nnz, bytes=nbytes, bw_gbs=bw / 1e9, bound_ms=bound_ms,
                         ls_ms=ls_ms, fraction=bound_ms / ls_ms, peers=peer_ms, best=best,
                         vs_best=(peer_ms[best] / ls_ms) if best else None, choices=choices))
        print(_line(rows[-1]), flush=True)
    return rows


def _line(r):
    best = f"{r['best']} {r['peers'][r['best']]:.3f}" if r["best"] else "-"
    vs = f"{r['vs_best']:.2f}" if r["vs_best"] else "-"
    return (f"| {r['name']} | {r['nnz']} | {r['bytes'] / 2**20:.1f} | {r['bw_gbs']:.1f} | {r['bound_ms']:.3f} | "
            f"{r['ls_ms']:.3f} | {r['fraction']:.2f} | {best} | {vs} |")


HEADER = ("| matrix | nnz | MiB moved | triad GB/s | bound ms | lazysparse ms | of bound | fastest peer ms | "
          "peer / lazysparse |\n|---|---:|---:|---:|---:|---:|---:|---|---:|")


_EPILOG = """\
example:
  python -m lazysparse.bench.spmv [--threads 2] [--min-nnz 100000] [--rmat-scale 20] [--repeat 50] [--interleaved]
                                  [--json PATH]   (python docs/plots.py PATH: its plots)

For each corpus matrix with at least --min-nnz stored entries (and R-MAT graphs on request) the
bytes SpMV must move are counted once: values, column indices, row positions, x and y. A STREAM
triad a = b + s * c over three arrays of that total size is timed in the same run, like the SpMV
calls (each library's back to back in blocks, the blocks in shuffled rounds: measure_blocks; or
with --interleaved one call a library in shuffled rounds), so a matrix that fits in cache is held
to cache bandwidth and a large one to memory bandwidth. The triad is C compiled here with the
system cc (the yardstick, like STREAM itself; it is not part of the library).
"""


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m lazysparse.bench.spmv", description=__doc__.split("\n\n")[0],
                                epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-nnz", type=int, default=100_000)
    p.add_argument("--rmat-scale", type=int, action="append", default=[])
    p.add_argument("--matrices", nargs="+", default=None)
    p.add_argument("--peers", nargs="+", default=["scipy", "graphblas", "mkl", "torch"])
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--budget", type=float, default=10.0)
    p.add_argument("--wait", choices=("default", "passive"), default="default",
                   help="OpenMP idle policy of every library in the process (passive: a pool "
                        "sleeps when idle instead of spinning on the cores the next call needs)")
    p.add_argument("--interleaved", action="store_true",
                   help="interleaved rounds (default: each library's calls back to back, the "
                        "triad's too, all in this one run)")
    p.add_argument("--json", default=None, help="write the rows here ({meta, spmv}: docs/plots.py)")
    a = p.parse_args(argv)
    ensure_threads(a.threads, argv, "lazysparse.bench.spmv", wait=a.wait)
    import lazysparse as ls
    ls.set_num_threads(a.threads)
    peers = available_peers(a.peers, a.threads)
    items = [it for it in load_items(find_data_dir(None), a.matrices, a.rmat_scale, 0)
             if it.kind == "matrix" and it.nnz >= a.min_nnz]
    how = ("interleaved rounds" if a.interleaved else
           f"calls back to back per library, in {ROUNDS} rounds of blocks")
    print(f"SpMV, {a.threads} threads (OpenMP wait {a.wait}), peers {', '.join(peers)}; medians of "
          f"{a.repeat} {how}")
    print(HEADER, flush=True)
    rows = measure(items, peers, a.threads, a.repeat, a.budget, blocks=not a.interleaved)
    if a.json:
        import datetime
        import json
        meta = dict(lazysparse=ls.__version__, threads=a.threads, wait=a.wait, peers=peers,
                    repeat=a.repeat, method=how, date=datetime.datetime.now().isoformat(timespec="seconds"))
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "spmv": rows}, f, indent=1,
                      default=lambda o: o.item() if hasattr(o, "item") else str(o))  # (NumPy scalars)
    fr = [r["fraction"] for r in rows]
    vs = [r["vs_best"] for r in rows if r["vs_best"]]
    if rows:
        print(f"\nof bound: min {min(fr):.2f}, geomean {np.exp(np.mean(np.log(fr))):.2f}; "
              f"fastest peer / lazysparse: min {min(vs):.2f}, geomean {np.exp(np.mean(np.log(vs))):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
