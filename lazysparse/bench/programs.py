"""Lazy programs side by side with scipy (``python -m lazysparse.bench.programs``): Jacobi and
PageRank written as a user would, on corpus matrices with at least 100k nonzeros, at k = 10, 100
and 1,000 steps; each left lazy with a check every 10 steps, materialized every step, and in
scipy; and k steps of conjugate gradients, ``ls.linalg.cg`` against ``scipy.sparse.linalg.cg``. Warm times are medians of interleaved rounds; the first run after the plan caches are
cleared (kernels still on disk) gives planning plus loading, whose growth with k is the slope."""
from __future__ import annotations

import argparse
import json
import time

MATRICES = ("cage10", "bcsstk16", "vt2010")
STEPS = (10, 100, 1000)
CHECK_EVERY = 10


def problems(A):
    """``{name: (setup values)}`` for a scipy CSR matrix: a diagonally dominant system for Jacobi
    (A plus its absolute row sums on the diagonal), and a column-stochastic P for PageRank."""
    import numpy as np
    import scipy.sparse as sp
    n = A.shape[0]
    absA = abs(A)
    M = (A + sp.diags(np.asarray(absA.sum(axis=1)).ravel() + 1.0)).tocsr()
    cols = np.asarray(absA.sum(axis=0)).ravel()
    P = (absA @ sp.diags(1.0 / np.where(cols == 0, 1.0, cols))).tocsr()
    rng = np.random.default_rng(0)
    S = (M + M.T).tocsr()  # symmetric, diagonally dominant with a positive diagonal: SPD
    return {"jacobi": (M, rng.random(n), 1.0 / M.diagonal()),
            "pagerank": (P, np.full(n, 0.15 / n), None),
            "cg": (S, rng.random(n), None)}


def _step(kind, x, M, b, d):
    if kind == "jacobi":
        return x + d * (b - M @ x)
    return 0.85 * (M @ x) + b


def run_lazy(kind, k, M, b, d, x0):
    """Lazy, with a check every ``CHECK_EVERY`` steps (``float(abs(x).sum())``); CG: k steps of
    ``ls.linalg.cg`` (which materializes what each step reads)."""
    if kind == "cg":
        import lazysparse as ls
        return ls.linalg.cg(M, b, x0, rtol=0.0, atol=0.0, maxiter=k)[0]
    x = x0
    for s in range(1, k + 1):
        x = _step(kind, x, M, b, d)
        if s % CHECK_EVERY == 0:
            float(abs(x).sum())
    return x.materialize()


def run_each(kind, k, M, b, d, x0):
    """Materialized every step, with the same checks."""
    if kind == "cg":
        return run_lazy(kind, k, M, b, d, x0)
    x = x0
    for s in range(1, k + 1):
        x = _step(kind, x, M, b, d).materialize()
        if s % CHECK_EVERY == 0:
            float(abs(x).sum())
    return x


def run_scipy(kind, k, M, b, d, x0):
    import numpy as np
    if kind == "cg":
        import scipy.sparse.linalg as sla
        return sla.cg(M, b, x0, rtol=0.0, atol=0.0, maxiter=k)[0]
    x = x0
    for s in range(1, k + 1):
        x = _step(kind, x, M, b, d)
        if s % CHECK_EVERY == 0:
            float(np.abs(x).sum())
    return x


def measure(item, kind, k, rounds):
    import numpy as np

    import lazysparse as ls
    from lazysparse.bench.timing import measure_interleaved
    M, b, d = problems(item.matrix)[kind]
    n = M.shape[0]
    LM, Lb = ls.asarray(M), ls.asarray(b)
    Ld = ls.asarray(d) if d is not None else None
    x0 = np.full(n, 1.0 / n) if kind == "pagerank" else np.zeros(n)
    Lx0 = ls.asarray(x0)
    want = run_scipy(kind, k, M, b, d, x0)
    ls.clear_cache()  # (memory only: kernels stay on disk)
    t = time.perf_counter()
    got = run_lazy(kind, k, LM, Lb, Ld, Lx0)
    first_s = time.perf_counter() - t
    err = float(np.abs(got.todense() - want).max() / max(1e-300, np.abs(want).max()))
    res = measure_interleaved({
        "lazy": lambda: run_lazy(kind, k, LM, Lb, Ld, Lx0),
        "each": lambda: run_each(kind, k, LM, Lb, Ld, Lx0),
        "scipy": lambda: run_scipy(kind, k, M, b, d, x0)}, rounds, budget_s=20.0)
    out = {"matrix": item.name, "program": kind, "k": k, "nnz": int(M.nnz), "rel_err": err,
           "first_ms": first_s * 1e3}
    for name, r in res.items():
        out[f"{name}_ms"] = r.get("median_ms")
    out["plan_ms"] = max(0.0, out["first_ms"] - out["lazy_ms"])
    return out


def table(rows) -> str:
    lines = ["| program | matrix | k | lazy, check every 10 (ms) | materialize each step (ms) | scipy (ms) "
             "| lazy / each | lazy / scipy | first run - warm (ms) |", "|" + "---|" * 9]
    for r in rows:
        lines.append(f"| {r['program']} | {r['matrix']} | {r['k']} | {r['lazy_ms']:.2f} | {r['each_ms']:.2f} "
                     f"| {r['scipy_ms']:.2f} | {r['lazy_ms'] / r['each_ms']:.2f} | {r['lazy_ms'] / r['scipy_ms']:.2f} "
                     f"| {r['plan_ms']:.1f} |")
    return "\n".join(lines)


def slopes(rows) -> str:
    """Planning plus loading per step, fitted over k (least squares), per program and matrix."""
    import numpy as np
    out = ["| program | matrix | plan + load per step (ms) | at k = 10 (ms) |", "|---|---|---|---|"]
    keys = sorted({(r["program"], r["matrix"]) for r in rows})
    for prog, mat in keys:
        pts = sorted((r["k"], r["plan_ms"]) for r in rows if r["program"] == prog and r["matrix"] == mat)
        if len(pts) < 2:
            continue
        ks, ts = np.array([p[0] for p in pts], float), np.array([p[1] for p in pts])
        slope = np.polyfit(ks, ts, 1)[0]
        out.append(f"| {prog} | {mat} | {slope:.4f} | {pts[0][1]:.1f} |")
    return "\n".join(out)


def main(argv=None):
    from lazysparse.bench.inputs import find_data_dir, load_items
    ap = argparse.ArgumentParser(prog="python -m lazysparse.bench.programs", description=__doc__)
    ap.add_argument("--data", default=None, help="folder of .npz matrices (default: the corpus)")
    ap.add_argument("--matrices", nargs="*", default=list(MATRICES))
    ap.add_argument("--steps", nargs="*", type=int, default=list(STEPS))
    ap.add_argument("--programs", nargs="*", default=["jacobi", "pagerank", "cg"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args(argv)
    items = load_items(find_data_dir(args.data), set(args.matrices), [], 0)
    rows = []
    for item in items:
        for kind in args.programs:
            for k in args.steps:
                rows.append(measure(item, kind, k, args.rounds))
                print(json.dumps(rows[-1]), flush=True)
    print(table(rows))
    print()
    print(slopes(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
