"""Side-by-side benchmarks (``python -m lazysparse bench``, also ``python -m lazysparse.bench.suite``):
lazysparse against scipy.sparse, pydata/sparse and any other installed peer on the benchmark
corpus and generated R-MAT graphs, all in one process and one run so that ratios are comparable;
``--help`` lists the kernels and ``run`` holds the method."""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

from lazysparse.bench.checks import allclose
from lazysparse.bench.inputs import find_data_dir, load_items
from lazysparse.bench.peers import (DEFAULT_KERNELS, EXTRA_KERNELS, KERNELS, MATRIX_KERNELS,
                                    MATRIX_PEER_KERNELS, PEERS, TENSOR_KERNELS, available_peers,
                                    lazysparse_matrix_kernels, matrix_inputs, peer_versions,
                                    tensor_kernels)
from lazysparse.bench.threads import PASSIVE, THREAD_VARS, ensure_threads
from lazysparse.bench.timing import fmt_ms, measure_interleaved, tuner_choices_since


# ---------------------------------------------------------------------------------------------
# running

def run_case(ls_fn, peer_fns: dict, repeat: int, budget_s: float, scaled: dict | None = None):
    """Check lazysparse against scipy, then time everyone. Returns a result dict. ``scaled``:
    {label: call} of lazysparse on other thread counts (``--scaling``), timed in the same rounds
    (their results under ``rec["scaled"]``)."""
    rec = {"check": None, "lazysparse": {}, "peers": {}}
    ref = None
    if "scipy" in peer_fns:
        try:
            ref = peer_fns["scipy"]()
        except Exception as e:  # pragma: no cover - scipy should do every kernel it is given
            rec["peers"]["scipy"] = {"error": f"{type(e).__name__}: {e}"}

    ls_call = ls_fn  # (materializes: see lazysparse_matrix_kernels)
    try:
        t0 = time.perf_counter()
        first = ls_call()
        first_ms = (time.perf_counter() - t0) * 1e3
        if ref is not None:
            import numpy as np
            expected = np.asarray(ref) if not hasattr(ref, "tocsr") else ref
            rec["check"] = "ok" if allclose(first, expected) else "FAILED"
        if rec["check"] == "FAILED":
            rec["lazysparse"] = {"error": "wrong result", "first_ms": first_ms}
        else:
            rec["lazysparse"] = {"first_ms": first_ms}
    except Exception as e:
        rec["check"] = "ERROR"
        rec["lazysparse"] = {"error": f"{type(e).__name__}: {e}"[:300]}

    fns = {} if "error" in rec["lazysparse"] else {"lazysparse": ls_call, **(scaled or {})}
    for name, fn in peer_fns.items():
        if name not in rec["peers"]:
            fns[name] = fn
    from lazysparse.runtime import tuning
    made = tuning.CHOICES_MADE[0]
    for name, res in measure_interleaved(fns, repeat, budget_s).items():
        if name == "lazysparse":
            rec["lazysparse"].update(res)
        elif scaled and name in scaled:
            rec.setdefault("scaled", {})[name] = res
        else:
            rec["peers"][name] = res
    tuned = tuner_choices_since(made)
    if tuned:  # run-time schedule choices measured during the timed calls (runtime/tuning.py)
        rec["lazysparse"]["tuned"] = tuned
    return rec



def _row(item, kernel, rec, peers, scaled=()):
    ls_ms = rec["lazysparse"].get("median_ms")
    cells = [f"{item.name:<22.22}", f"{kernel:<6}", f"{fmt_ms(ls_ms):>11}"]
    for label in scaled:  # lazysparse on more threads, and its speed-up over the column before
        v = rec.get("scaled", {}).get(label, {}).get("median_ms")
        cells += [f"{fmt_ms(v):>10}", f"{(ls_ms / v) if ls_ms and v else float('nan'):>7.2f}"]
    best = None
    for p in peers:
        v = rec["peers"].get(p, {}).get("median_ms")
        cells.append(f"{fmt_ms(v):>10}")
        if v is not None and (best is None or v < best):
            best = v
    sc = rec["peers"].get("scipy", {}).get("median_ms")
    cells.append(f"{(ls_ms / sc) if ls_ms and sc else float('nan'):>8.2f}")
    cells.append(f"{(ls_ms / best) if ls_ms and best else float('nan'):>8.2f}")
    status = rec["check"] or "-"
    if "error" in rec["lazysparse"]:
        status += " " + rec["lazysparse"]["error"][:60]
    cells.append(status)
    return " ".join(cells)


def _on_threads(ls, fn, n, base):
    """``fn`` run with lazysparse on ``n`` threads (``--scaling``), back on ``base`` after."""
    def call():
        ls.set_num_threads(n)
        try:
            return fn()
        finally:
            ls.set_num_threads(base)
    return call


def run(args) -> dict:
    """Run every kernel on every input and return the JSON record.

    Method: each lazysparse result is first checked against scipy (``np.allclose``; failures are marked
    and not timed). Then every library gets one warm-up call (lazysparse compiles here; its time is
    reported as ``first_ms``) and ``--repeat`` timed calls with ``time.perf_counter``, interleaved:
    each round calls every library once in a shuffled order, so drift on a shared machine hits all
    alike; the median is reported. A lazysparse call builds a fresh lazy expression and materializes it
    (build + run, warm kernel cache). Peers run with one thread unless ``--threads`` says otherwise
    (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ... are set before any library loads, by re-executing
    the interpreter; ``--wait passive`` also makes every OpenMP pool sleep when idle, see
    ``threads.PASSIVE``). Peers that are not installed are skipped; a peer that cannot do a kernel
    shows ``-``.
    """
    import numpy as np
    import lazysparse as ls

    try:
        ls.set_num_threads(args.threads)
    except Exception:
        pass
    data = None if args.no_data else find_data_dir(args.data)
    kernels = args.kernels or list(DEFAULT_KERNELS)
    peers = available_peers(args.peers or list(PEERS), args.threads)
    items = load_items(data, args.matrices, [] if args.no_rmat else args.rmat_scale, args.seed)

    meta = dict(lazysparse=ls.__version__, threads=args.threads, wait=getattr(args, "wait", "default"),
                repeat=args.repeat,
                python=platform.python_version(), machine=platform.machine(),
                cpus=os.cpu_count(), platform=platform.platform(), data=str(data) if data else None,
                date=datetime.datetime.now().isoformat(timespec="seconds"),
                versions=peer_versions(), peers=peers,
                env={k: os.environ.get(k) for k in THREAD_VARS + tuple(PASSIVE)})
    print(f"lazysparse {ls.__version__} benchmarks: threads={args.threads} "
          f"(wait {getattr(args, 'wait', 'default')}), median of {args.repeat} "
          f"after one warm-up; data={data or '(none)'}; peers: {', '.join(peers)}")
    scaled = [f"ls@{args.scaling}"] if args.scaling else []
    head = " ".join([f"{'matrix':<22}", f"{'kernel':<6}", f"{'lazysparse':>11}"]
                    + [c for label in scaled for c in (f"{label:>10}", f"{'speedup':>7}")]
                    + [f"{p:>10}" for p in peers] + [f"{'ls/scipy':>8}", f"{'ls/best':>8}", "check"])
    print("times in ms; ls/X = lazysparse time / X time (below 1: lazysparse faster)")
    print(head)
    print("-" * len(head))

    results = []
    for item in items:
        if item.kind == "matrix":
            todo = [k for k in kernels if k in MATRIX_KERNELS]
            if not todo:
                continue
            square = item.shape[0] == item.shape[1]
            inp = matrix_inputs(item.matrix, kernels, seed=args.seed)
            ls_k = lazysparse_matrix_kernels(inp, square)
            peer_k = {}
            for p in peers:
                try:
                    peer_k[p] = MATRIX_PEER_KERNELS[p](inp, square)
                except Exception:
                    continue
        else:
            todo = [k for k in kernels if k in TENSOR_KERNELS]
            if not todo:
                continue
            tk = tensor_kernels(item.tensor, seed=args.seed)
            ls_k = tk.pop("lazysparse")
            peer_k = {p: v for p, v in tk.items() if p in peers}
        for kernel in todo:
            if kernel not in ls_k:
                continue  # e.g. A + A.T on a rectangular matrix
            fns = {p: k[kernel] for p, k in peer_k.items() if kernel in k}
            at = {scaled[0]: _on_threads(ls, ls_k[kernel], args.scaling, args.threads)} if scaled else None
            rec = run_case(ls_k[kernel], fns, args.repeat, args.budget, at)
            rec.update(matrix=item.name, kind=item.kind, shape=list(item.shape), nnz=item.nnz,
                       kernel=kernel)
            results.append(rec)
            print(_row(item, kernel, rec, peers, scaled), flush=True)

    # geometric-mean summary per kernel: lazysparse / scipy
    print()
    print("geometric mean of lazysparse / scipy per kernel (matrices where both ran):")
    summary = {}
    for kernel in kernels:
        ratios = [r["lazysparse"]["median_ms"] / r["peers"]["scipy"]["median_ms"]
                  for r in results if r["kernel"] == kernel
                  and "median_ms" in r["lazysparse"] and "median_ms" in r["peers"].get("scipy", {})]
        if ratios:
            g = math.exp(sum(math.log(max(x, 1e-12)) for x in ratios) / len(ratios))
            summary[kernel] = {"geomean_ls_over_scipy": g, "n": len(ratios)}
            print(f"  {kernel:<6} {g:8.3f}  (n={len(ratios)})")
    for label in scaled:
        print(f"geometric mean of lazysparse's speed-up on {args.scaling} threads ({label}) over {args.threads}:")
        for kernel in kernels:
            ups = [r["lazysparse"]["median_ms"] / r["scaled"][label]["median_ms"] for r in results
                   if r["kernel"] == kernel and "median_ms" in r["lazysparse"]
                   and "median_ms" in r.get("scaled", {}).get(label, {})]
            if ups:
                g = math.exp(sum(math.log(max(x, 1e-12)) for x in ups) / len(ups))
                summary.setdefault(kernel, {})[f"geomean_speedup_{label}"] = g
                print(f"  {kernel:<6} {g:8.3f}  (n={len(ups)})")
    failed = [r for r in results if r["check"] in ("FAILED", "ERROR")]
    print(f"{len(results)} cases, {len(failed)} failed or errored")
    out = {"meta": meta, "results": results, "summary": summary}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=lambda o: o.item() if isinstance(o, np.generic) else str(o))
        print(f"wrote {args.json}")
    return out


_EPILOG = """\
example:
  python -m lazysparse bench [--data DIR] [--kernels K ...] [--repeat N] [--threads 1]
                             [--wait default|passive] [--scaling N] [--rmat-scale S ...] [--json PATH]

Inputs: every matrix of the benchmark corpus (--data, else LAZYSPARSE_DATA, else ../shared/data
beside the repository; 3-order tensors are used only by the tensor kernel) and generated R-MAT
graphs (Graph500 a=.57, b=c=.19, edge factor 16; --rmat-scale 20 gives 2**20 rows and about 16M
nonzeros).

Kernels: spmv A@x, spmm A@X (128 columns), add_t A+A.T, add_r A+B, mul_t A*A.T, mul_r A*B (B:
uniform random with A's shape and density), sum0/sum1 sums over axis 0/1, tocsc conversion, ttv
einsum('ijk,k->ij') on tensors. Only on request (--kernels): sddmm A*(U@V.T) (K=32), gnn
A@(X@W) (X: n x 64, W: 64 x 16), spgemm A@A, add3 A+B+C, masked A*(A@A) (masked SpGEMM;
GraphBLAS: mxm under the structural mask A.S, which skips the final multiply by A's values: on
pattern matrices the same result), sumall A.sum(), max1 A.max(axis=1), maxall A.max() (NumPy's
semantics: implicit zeros count; GraphBLAS and torch reduce stored values only, so they are not
asked), scale 2.5 * A, spmv_t A.T@x and spmm_t A.T@X (128 columns; x and X over A's rows), expm1
and tanh (A.expm1(), A.tanh(): maps over the stored values that call libm).
"""


def parser():
    p = argparse.ArgumentParser(prog="python -m lazysparse bench",
                                description="Side-by-side benchmarks of lazysparse and its peers.",
                                epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", help="corpus folder (default: LAZYSPARSE_DATA or ../shared/data)")
    p.add_argument("--no-data", action="store_true", help="skip the corpus; R-MAT graphs only")
    p.add_argument("--matrices", nargs="+", metavar="NAME", help="only these corpus items (file stems)")
    p.add_argument("--kernels", nargs="+", choices=KERNELS, metavar="K",
                   help=f"kernels to run (default: {' '.join(DEFAULT_KERNELS)}; also: "
                        f"{' '.join(EXTRA_KERNELS)})")
    p.add_argument("--peers", nargs="+", choices=PEERS, metavar="P",
                   help=f"peers to compare with, if installed (default all: {' '.join(PEERS)})")
    p.add_argument("--repeat", type=int, default=7, help="timed calls per measurement (median)")
    p.add_argument("--threads", type=int, default=1, help="threads for lazysparse and peers")
    p.add_argument("--scaling", type=int, default=None, metavar="N",
                   help="also time lazysparse on N threads in the same rounds (peers keep --threads): "
                        "a column ls@N and its speed-up")
    p.add_argument("--wait", choices=("default", "passive"), default="default",
                   help="OpenMP idle policy for every library in the process: passive keeps one "
                        "library's spinning pool from taking the cores of the next (several threads)")
    p.add_argument("--rmat-scale", type=int, action="append", default=None, metavar="S",
                   help="R-MAT graph with 2**S rows (repeatable; default 16; 20 gives ~16M nnz)")
    p.add_argument("--no-rmat", action="store_true", help="no generated R-MAT graphs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=float, default=10.0,
                   help="seconds one measurement may take before repeats are cut (slow peers)")
    p.add_argument("--json", metavar="PATH", help="also write all results as JSON")
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    if args.rmat_scale is None:
        args.rmat_scale = [16]
    ensure_threads(args.threads, argv, "lazysparse.bench.suite", wait=args.wait)
    out = run(args)
    bad = [r for r in out["results"] if r["check"] in ("FAILED", "ERROR")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
