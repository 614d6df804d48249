"""Side-by-side benchmark of the fused kernels (SDDMM, two GNN layers, MTTKRP): lazysparse's fusion
modes (``"auto"``, ``"max"``, ``"none"``) against scipy.sparse, pydata/sparse, torch, GraphBLAS and
finch on the corpus matrices, R-MAT graphs and the corpus's 3-order tensors, every result checked
against the scipy column before it is timed. ``run`` holds the method; ``--help`` lists the kernels
and columns."""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

from lazysparse.bench.fusion_cases import (GNN1_H, GNN1_J, GNN2_K, KERNELS, PEERS, QUICK_MATRICES,
                                           QUICK_TENSORS, VARIANTS, matrix_case, peer_setup,
                                           tensor_case)
from lazysparse.bench.fusion_measure import machine_scaling, run_fusion_case
from lazysparse.bench.fusion_report import (SCALING_KERNELS, col_ms, print_summary, print_table,
                                            summarize)
# (the targets, read from here by docs/plots.py)
from lazysparse.bench.fusion_report import MAX_TARGETS, PEER_TARGET  # noqa: F401
from lazysparse.bench.inputs import find_data_dir, load_items
from lazysparse.bench.threads import THREAD_VARS, ensure_threads


def _ensure_threads(threads: int, argv: list[str]) -> None:
    """``threads.ensure_threads`` for this module: thread pools start at that size."""
    ensure_threads(threads, argv, "lazysparse.bench.fusion")


def _parse_bytes(text: str) -> int | None:
    from lazysparse.runtime.memory import parse_limit
    return parse_limit(text)


def _cap_address_space(limit: int | None) -> str | None:
    """Last safety net on a shared machine: no allocation past (size now + limit + 4 GiB)."""
    if not limit:
        return None
    try:
        import resource
        with open("/proc/self/statm") as f:
            vm = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        cap = vm + limit + (4 << 30)
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY and cap > hard:
            cap = hard
        if soft == resource.RLIM_INFINITY or cap < soft:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        return f"{cap / 2**30:.1f} GiB"
    except Exception:  # pragma: no cover - not Linux
        return None


# ---------------------------------------------------------------------------------------------
# driver

def _versions():
    import importlib.metadata as md
    out = {}
    for dist, key in (("numpy", "numpy"), ("scipy", "scipy"), ("sparse", "pydata"), ("torch", "torch"),
                      ("python-graphblas", "graphblas"), ("suitesparse-graphblas", "suitesparse-graphblas"),
                      ("finch-tensor", "finch"), ("finch-tensor-lite", "finch"), ("numba", "numba")):
        try:
            out[key] = md.version(dist)
        except Exception:
            pass
    return out


def _git_state():
    """The repository's commit and modified files (lazysparse is often benchmarked from a working
    tree that changes between runs)."""
    import subprocess
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.split("\n")
        return {"commit": head or None, "modified": [d[3:] for d in dirty if d.strip()]}
    except Exception:
        return None


def _params(kernel, args):
    if kernel == "sddmm":
        return [{"K": k} for k in args.K]
    if kernel == "gnn1":
        return [{"H": GNN1_H, "J": GNN1_J}]
    if kernel == "gnn2":
        return [{"K": GNN2_K}]
    return [{"R": r} for r in args.R]


def run(args, out=sys.stdout) -> dict:
    """Run every case and print the tables (the JSON record is returned).

    Method (shared with ``python -m lazysparse bench``: ``inputs.load_items``, ``timing.measure_interleaved``;
    the cases are in ``fusion_cases``, the trial calls and timing in ``fusion_measure``, the tables in
    ``fusion_report``). Per case, the oracle (the scipy column) runs once. Then every column gets one
    *trial call*, checked against the oracle (``np.allclose``, rtol 1e-6, atol 1e-6 x the result's
    largest magnitude): lazysparse's columns run their trial in a forked child that is killed after
    ``--budget`` seconds (a crash, a MemoryError or an unfused dense product that takes minutes costs
    one budget, not the run; only at one thread: a child forked after the parent ran an OpenMP team
    hangs in its first parallel region, so ``auto@2`` and ``--threads 2`` try in-process); peers run
    it in-process and are dropped when it took longer than the budget (a first call that compiled gets
    one more try). A column is shown as ``-`` when it raised (``"max"`` not implemented yet, a peer
    that cannot express the kernel), ran past the budget, or would form a dense array larger than
    ``--memory-limit`` (known for pydata's and finch's SDDMM; lazysparse's own guard raises
    ``MemoryError``: ``LAZYSPARSE_MEMORY_LIMIT`` is set to the same limit; the process's address space
    is capped at that limit plus its size once the peers are imported plus 4 GiB, as a last net); the
    reason is in the JSON. A wrong result is marked ``WRONG`` and not timed. The columns that passed
    are timed with ``measure_interleaved``: one untimed warm-up each, then ``--repeat`` rounds, each
    calling every column once in a shuffled order; medians. A lazysparse call builds a fresh lazy
    expression and materializes it. ``first ms`` in the JSON is the trial call's time (for
    lazysparse: planning, C compilation unless the kernel is in the disk cache, and the run).
    """
    import numpy as np
    import lazysparse as ls

    mem_limit = _parse_bytes(args.memory_limit) if args.memory_limit else None
    if args.memory_limit:
        os.environ["LAZYSPARSE_MEMORY_LIMIT"] = args.memory_limit
    ls.set_num_threads(args.threads)
    data = None if args.no_data else find_data_dir(args.data)
    kernels = list(args.kernels or KERNELS)
    variants = list(args.variants or VARIANTS)
    mods, missing = peer_setup(list(args.peers or PEERS), args.threads)
    cap = _cap_address_space(mem_limit) if args.cap_memory else None  # after the imports
    peers = [p for p in (args.peers or PEERS) if p in mods]
    items = load_items(data, args.matrices, [] if args.no_rmat else args.rmat_scale, args.seed)
    items = [it for it in items
             if (it.kind == "matrix" and it.nnz >= args.min_nnz)
             or (it.kind == "tensor" and len(it.shape) == 3
                 and (not args.tensors or it.name in args.tensors))]
    meta = dict(lazysparse=ls.__version__, threads=args.threads, repeat=args.repeat, budget_s=args.budget,
                memory_limit=args.memory_limit, address_space_cap=cap, min_nnz=args.min_nnz,
                python=platform.python_version(), machine=platform.machine(), cpus=os.cpu_count(),
                platform=platform.platform(), data=str(data) if data else None,
                date=datetime.datetime.now().isoformat(timespec="seconds"), versions=_versions(),
                variants=variants, peers=peers, peers_missing=missing, kernels=kernels,
                inputs=[dict(name=it.name, kind=it.kind, shape=list(it.shape), nnz=int(it.nnz)) for it in items],
                env={k: os.environ.get(k) for k in THREAD_VARS}, argv=sys.argv[1:], git=_git_state())
    print(f"lazysparse {ls.__version__} fused-kernel benchmark: threads={args.threads}, median of "
          f"{args.repeat} interleaved rounds after one warm-up; budget {args.budget:g} s a trial call; "
          f"memory limit {args.memory_limit or 'none'}", file=out)
    vers = meta["versions"]
    listed = ", ".join(f"{p} {vers.get(p, '')}".strip() for p in peers) or "(none)"
    print(f"peers: {listed}", file=out)
    for p, why in missing.items():
        print(f"  not run: {p}: {why}", file=out)
    print(f"inputs: {len(items)} ({', '.join(it.name for it in items)})", file=out, flush=True)

    rows = []
    t_start = time.perf_counter()
    for kernel in kernels:
        for item in items:
            if (item.kind == "tensor") != (kernel == "mttkrp"):
                continue
            for param in _params(kernel, args):
                try:
                    if kernel == "mttkrp":
                        case = tensor_case(param, item, mods, args.seed)
                    else:
                        case = matrix_case(kernel, param, item, mods, args.seed, mem_limit)
                except Exception as e:
                    rows.append(dict(kernel=kernel, param=param, input=item.name, kind=item.kind,
                                     shape=list(item.shape), nnz=int(item.nnz), cols={},
                                     error=f"setup: {type(e).__name__}: {e}"[:300],
                                     max_over_auto=None, best_peer=None, best_peer_ms=None,
                                     best_peer_over_auto=None, auto1_over_auto2=None))
                    print(f"  {kernel} {item.name} {param}: setup failed: {e}", file=out)
                    continue
                scaling = (args.scaling and args.threads == 1 and kernel in SCALING_KERNELS
                           and item.nnz >= args.scaling_nnz)
                tc = time.perf_counter()
                row = run_fusion_case(case, variants, peers, args.repeat, args.budget, scaling)
                row["case_s"] = time.perf_counter() - tc
                rows.append(row)
                if args.verbose:
                    print(f"  [{row['case_s']:.0f} s] {kernel} {item.name} {param}", file=out, flush=True)
        print_table(kernel, rows, variants, peers, out)
    summary = summarize(rows, kernels, args.scaling_nnz)
    if args.scaling and args.threads == 1 and any(k in SCALING_KERNELS for k in kernels):
        summary["machine_scaling"] = machine_scaling(args.repeat, args.budget)
    print_summary(summary, out)
    bad = [f"{r['kernel']} {r['input']} {r['param']} {n}" for r in rows for n in variants + ["auto@2"]
           if r["cols"].get(n, {}).get("check") == "WRONG"]
    auto_failed = [f"{r['kernel']} {r['input']} {r['param']}: {r['cols'].get('auto', {}).get('error', r.get('error'))}"
                   for r in rows if "auto" in variants and col_ms(r, "auto") is None]
    summary["wrong"] = bad
    summary["auto_failed"] = auto_failed
    total = time.perf_counter() - t_start
    meta["total_s"] = total
    print(f"{len(rows)} cases in {total:.0f} s; lazysparse wrong results: {len(bad)}"
          + (f" ({'; '.join(bad[:5])})" if bad else "") + f"; auto failed: {len(auto_failed)}"
          + (f" ({'; '.join(auto_failed[:5])})" if auto_failed else ""), file=out)
    res = {"meta": meta, "rows": rows, "summary": summary}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1, default=lambda o: o.item() if isinstance(o, np.generic) else str(o))
        print(f"wrote {args.json}", file=out)
    return res


_EPILOG = """\
example:
  python -m lazysparse.bench.fusion [--quick] [--data DIR] [--kernels K ...] [--repeat N]
                                    [--threads 1|2] [--budget S] [--memory-limit 4G]
                                    [--rmat-scale S ...] [--json PATH]

Kernels (A: a sparse n x m CSR matrix, dense factors random float64, seeded):

* sddmm  A * (U @ V.T), U: n x K, V: m x K, K in --K (default 32 128); A's pattern.
* gnn1   (A @ X) @ W, X: m x 128, W: 128 x 16.
* gnn2   (A * (X @ Y.T)) @ Y, X: n x 32, Y: m x 32.
* mttkrp einsum('ijk,jr,kr->ir', X, B, C) on the 3-order tensors of the corpus, R in --R
  (default 16 32).

Columns: lazysparse with materialize(fusion="auto") (the default), "max" and "none"; then the
peers, each written the best idiomatic way we know:

* scipy      scipy.sparse/NumPy: SDDMM as one dot product per stored entry (rows/columns of A's
  entries gathered in chunks, np.einsum('ij,ij->i')), GNN-1 (A @ X) @ W, GNN-2 that SDDMM @ Y,
  MTTKRP as B[j] * C[k] gathered over the coordinates and summed per row with X's values by one
  sparse product (X as an I x nnz CSR matrix, built once outside the timing, like every peer's
  format conversion). This column is also the oracle every other result is checked against.
* pydata     pydata/sparse: sparse.einsum for SDDMM and MTTKRP, COO @ dense.
* torch      torch.sparse.sampled_addmm on CSR for SDDMM (times A's values), torch.sparse.mm for
  the GNN products, index_add_ over the coordinates for MTTKRP (torch.sparse has no 3-order
  product).
* graphblas  python-graphblas (SuiteSparse): masked mxm with plus_times for SDDMM
  (U.mxm(V.T).new(mask=A.S), then ewise_mult with A), mxm for the GNN products; MTTKRP through
  the (i,j) x k matricization: X(ij,k) @ C, times B spread over the (i,j) rows by a 0/1 selection
  matrix, summed to rows i by another (selection matrices built once, outside the timing, like
  every peer's format conversion).
* finch      finch-tensor-lite (module finchlite; finch before 0.5), the compiled numba scheduler
  (COMPILE_NUMBA's stages under an executor with its kernel cache on, so a repeat does not
  re-plan or re-compile): compute of the lazy expression (lazy) on A as a dense/sparse_list fiber
  tensor (the tensor: dense/sparse_list/sparse_list), V given as V.T stored (its compiled
  matrix_transpose copy yields zeros in 0.5.0). Its results are dense (its default formatter), so
  its SDDMM is skipped where n x m exceeds --memory-limit.

Inputs: every matrix of the corpus (--data, else LAZYSPARSE_DATA, else ../shared/data) with at
least --min-nnz (50,000) stored entries, the R-MAT graphs of --rmat-scale (default 18: 2**18 rows,
edge factor 16, Graph500 parameters), and the corpus's 3-order tensors for MTTKRP. --quick is a
smoke run: two small corpus matrices, R-MAT 2**12, the smaller tensor, K=32, R=16, three repeats.

Threads: everything runs with --threads threads (OMP_NUM_THREADS and friends are set before
any library loads, by re-executing the interpreter; torch.set_num_threads, GraphBLAS
nthreads, ls.set_num_threads). With one thread, SDDMM and GNN-1 on inputs with at least
--scaling-nnz (500,000) entries also get a column auto@2: the same fusion="auto" call
under ls.set_num_threads(2), timed in the same rounds. The two-thread scaling criterion is
read from a second measurement of the same two calls, *back to back*: before the interleaved
rounds, --repeat rounds in which auto and auto@2 (shuffled) each run once untimed and
then once timed (measure_back_to_back), as a loop that calls the kernel again and again runs.
Interleaved with the peers, a two-thread call finds the second vCPU of the development VM halted
after tens of ms idle, and the host takes a median 58 us but up to 4.5 ms to wake it (measured
with a plain C OpenMP program, docs/design.md); the region's join waits for it, so the
interleaved figure measures the host as much as the code. Both are printed and saved, with the
machine's own two-thread scaling (a dense triad and a dense product) measured both ways.

Ratios (same run): max/auto = time of "max" / time of "auto" (above 1: auto faster);
peer/auto = the fastest peer's time / auto's time. The summary gives their geometric means per
kernel next to the fused kernels' targets (max/auto: SDDMM 1.5, GNN-1 5, GNN-2 10, MTTKRP 1.0;
peer/auto >= 1.5 and never below 1; auto@1/auto@2 >= 1.7).

Exit status 1 when a lazysparse column gave a wrong result or "auto" failed.
"""


def parser():
    p = argparse.ArgumentParser(prog="python -m lazysparse.bench.fusion",
                                description="Fused-kernel benchmark: lazysparse's fusion "
                                            "modes against scipy, pydata/sparse, torch, GraphBLAS, finch.",
                                epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="smoke run: two small corpus matrices, R-MAT 2**12, one tensor, K=32, R=16, 3 repeats")
    p.add_argument("--data", help="corpus folder (default: LAZYSPARSE_DATA or ../shared/data)")
    p.add_argument("--no-data", action="store_true", help="skip the corpus; R-MAT graphs only")
    p.add_argument("--matrices", nargs="+", metavar="NAME", help="only these corpus items (file stems)")
    p.add_argument("--tensors", nargs="+", metavar="NAME", help="only these tensors (file stems)")
    p.add_argument("--min-nnz", type=int, default=50_000, help="corpus matrices with at least this many entries")
    p.add_argument("--kernels", nargs="+", choices=KERNELS, metavar="K", help=f"default: {' '.join(KERNELS)}")
    p.add_argument("--variants", nargs="+", choices=VARIANTS, metavar="F",
                   help=f"lazysparse fusion modes (default: {' '.join(VARIANTS)})")
    p.add_argument("--peers", nargs="+", choices=PEERS, metavar="P",
                   help=f"peers, if installed (default all: {' '.join(PEERS)})")
    p.add_argument("--K", nargs="+", type=int, default=None, help="SDDMM inner sizes (default 32 128)")
    p.add_argument("--R", nargs="+", type=int, default=None, help="MTTKRP ranks (default 16 32)")
    p.add_argument("--repeat", type=int, default=None, help="timed rounds (median; default 7, quick 3)")
    p.add_argument("--threads", type=int, default=1, choices=(1, 2), help="threads for everyone")
    p.add_argument("--no-scaling", dest="scaling", action="store_false",
                   help="no auto@2 column (auto at two threads, timed in the same rounds)")
    p.add_argument("--scaling-nnz", type=int, default=500_000, help="auto@2 on inputs with this many entries")
    p.add_argument("--rmat-scale", type=int, action="append", default=None, metavar="S",
                   help="R-MAT graph with 2**S rows (repeatable; default 18, quick 12)")
    p.add_argument("--no-rmat", action="store_true", help="no generated R-MAT graphs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=float, default=None,
                   help="seconds a trial call may take (longer: '-'), and per column for the repeats "
                        "(default 10, quick 5)")
    p.add_argument("--memory-limit", default="4G",
                   help="largest dense array a column may form (LAZYSPARSE_MEMORY_LIMIT too); 0: none")
    p.add_argument("--no-cap-memory", dest="cap_memory", action="store_false",
                   help="do not cap the process's address space (see the method)")
    p.add_argument("--verbose", action="store_true", help="print each case's time as it ends")
    p.add_argument("--json", metavar="PATH", help="also write meta, rows and summary as JSON")
    return p


def parse_args(argv):
    args = parser().parse_args(argv)
    if args.quick:
        if args.matrices is None and not args.no_data:
            args.matrices = list(QUICK_MATRICES) + list(QUICK_TENSORS)
        if args.tensors is None:
            args.tensors = list(QUICK_TENSORS)
        args.rmat_scale = args.rmat_scale or [12]
        args.K = args.K or [32]
        args.R = args.R or [16]
        args.repeat = args.repeat or 3
        args.budget = args.budget or 5.0
    if args.matrices is not None and args.tensors:
        args.matrices = sorted(set(args.matrices) | set(args.tensors))
    args.rmat_scale = args.rmat_scale or [18]
    args.K = args.K or [32, 128]
    args.R = args.R or [16, 32]
    args.repeat = args.repeat or 7
    args.budget = args.budget or 10.0
    if args.memory_limit in ("0", "none", "None"):
        args.memory_limit = None
    return args


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    _ensure_threads(args.threads, argv)
    res = run(args)
    return 1 if (res["summary"]["wrong"] or res["summary"]["auto_failed"]) else 0


if __name__ == "__main__":
    sys.exit(main())
