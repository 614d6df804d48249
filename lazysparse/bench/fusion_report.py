"""The fused-kernel benchmark's report: the targets, per-row ratios, one table per kernel, and
the summary of geometric means against the targets."""
from __future__ import annotations

import math
import sys

from lazysparse.bench.timing import fmt_ms

# the fused kernels' targets: geometric mean of time("max") / time("auto") per kernel must reach these
MAX_TARGETS = {"sddmm": 1.5, "gnn1": 5.0, "gnn2": 10.0, "mttkrp": 1.0}
PEER_TARGET = 1.5          # geometric mean of best peer / auto, and never below 1
SCALING_TARGET = 1.7       # auto at 2 threads vs 1 thread, SDDMM and GNN-1 at >= 500k nonzeros
SCALING_KERNELS = ("sddmm", "gnn1")


def col_ms(row, name):
    """A column's median time in a case's row (ms), or None where it did not run."""
    return row["cols"].get(name, {}).get("median_ms")


def ratios(row, peers):
    """Set the row's ratios: max over auto, the fastest peer over auto, one thread over two."""
    auto, mx = col_ms(row, "auto"), col_ms(row, "max")
    row["max_over_auto"] = mx / auto if auto and mx else None
    best = None
    for p in peers:
        v = col_ms(row, p)
        if v is not None and (best is None or v < best[1]):
            best = (p, v)
    row["best_peer"] = best[0] if best else None
    row["best_peer_ms"] = best[1] if best else None
    row["best_peer_over_auto"] = best[1] / auto if best and auto else None
    a2 = col_ms(row, "auto@2")
    row["auto1_over_auto2"] = auto / a2 if auto and a2 else None
    b = row.get("back_to_back") or {}
    b1, b2 = b.get("auto"), b.get("auto@2")
    row["auto1_over_auto2_back_to_back"] = b1 / b2 if b1 and b2 else None


# ---------------------------------------------------------------------------------------------
# tables and summary

def _cell(row, name):
    col = row["cols"].get(name)
    if col is None:
        return ""
    if col.get("check") == "WRONG":
        return "WRONG"
    return fmt_ms(col.get("median_ms"))


def _ratio(v):
    return "-" if v is None else f"{v:.2f}"


def print_table(kernel, rows, variants, peers, out=sys.stdout):
    rows = [r for r in rows if r["kernel"] == kernel]
    if not rows:
        return
    scal = any("auto@2" in r["cols"] for r in rows)
    names = list(variants) + (["auto@2"] if scal else []) + list(peers)
    head = (f"{'input':<22} {'param':<9} {'nnz':>10} " + " ".join(f"{n:>9.9}" for n in names)
            + f" {'max/auto':>8} {'peer/auto':>9} best peer")
    print(f"\n{kernel}: times in ms (median); max/auto and peer/auto above 1: auto faster", file=out)
    print(head, file=out)
    print("-" * len(head), file=out)
    notes = []
    for r in rows:
        cells = [f"{r['input']:<22.22}", f"{_param_text(r['param']):<9}",
                 f"{r['nnz']:>10,}"]
        cells += [f"{_cell(r, n):>9}" for n in names]
        cells += [f"{_ratio(r['max_over_auto']):>8}", f"{_ratio(r['best_peer_over_auto']):>9}",
                  r["best_peer"] or "-"]
        print(" ".join(cells), file=out, flush=True)
        for n in names:
            col = r["cols"].get(n, {})
            why = col.get("error") or col.get("skipped")
            if why and col.get("median_ms") is None:
                notes.append((n, why, f"{r['input']} {r['param']}"))
    if notes:
        # one line per distinct (column, reason), with how many cases it covers
        seen = {}
        for n, why, where in notes:
            key = (n, why[:110])
            seen.setdefault(key, []).append(where)
        print("  '-' / WRONG:", file=out)
        for (n, why), wheres in seen.items():
            more = f" (+{len(wheres) - 1} more)" if len(wheres) > 1 else ""
            print(f"    {n}: {why} [{wheres[0]}{more}]", file=out)


def _geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def summarize(rows, kernels, scaling_nnz):
    summary = {}
    for k in kernels:
        rs = [r for r in rows if r["kernel"] == k]
        if not rs:
            continue
        mo = [r["max_over_auto"] for r in rs if r["max_over_auto"] is not None]
        po = [r["best_peer_over_auto"] for r in rs if r["best_peer_over_auto"] is not None]
        g_mo, g_po = _geomean(mo), _geomean(po)
        slower = [f"{r['input']} {r['param']} ({r['best_peer']} {r['best_peer_over_auto']:.2f})"
                  for r in rs if r["best_peer_over_auto"] is not None and r["best_peer_over_auto"] < 1]
        s = {"cases": len(rs),
             "auto_ran": sum(1 for r in rs if col_ms(r, "auto") is not None),
             "max_over_auto": {"geomean": g_mo, "n": len(mo), "target": MAX_TARGETS[k],
                               "met": None if g_mo is None else g_mo >= MAX_TARGETS[k]},
             "best_peer_over_auto": {"geomean": g_po, "min": min(po) if po else None, "n": len(po),
                                     "target_geomean": PEER_TARGET, "slower_cases": slower,
                                     "met": None if g_po is None else (g_po >= PEER_TARGET and not slower)}}
        if k in SCALING_KERNELS:
            # the criterion: back-to-back calls; the interleaved figure is reported beside it
            sc = [(r["input"], r["param"], r.get("auto1_over_auto2_back_to_back"), r["auto1_over_auto2"])
                  for r in rs if r["nnz"] >= scaling_nnz and r.get("auto1_over_auto2_back_to_back") is not None]
            inter = [x[3] for x in sc if x[3] is not None]
            s["scaling"] = {"speedups": [{"input": a, "param": b, "speedup": c, "interleaved": d}
                                         for a, b, c, d in sc],
                            "min": min(x[2] for x in sc) if sc else None, "target": SCALING_TARGET,
                            "min_interleaved": min(inter) if inter else None,
                            "met": (min(x[2] for x in sc) >= SCALING_TARGET) if sc else None}
        summary[k] = s
    return summary


def print_summary(summary, out=sys.stdout):
    def f(v):
        return "n/a" if v is None else f"{v:.2f}x"

    def met(v):
        return "" if v is None else ("  MET" if v else "  NOT MET")
    print("\nsummary (geometric means over the inputs where both ran; the targets):", file=out)
    for k, s in summary.items():
        if not isinstance(s, dict) or "max_over_auto" not in s:  # run-wide entries
            continue
        mo, po = s["max_over_auto"], s["best_peer_over_auto"]
        print(f"  {k:<7} auto over max:  {f(mo['geomean']):>7} (n={mo['n']}, target >= {mo['target']:g}x)"
              f"{met(mo['met'])}", file=out)
        print(f"  {k:<7} auto over best peer: {f(po['geomean']):>7} geomean, min {f(po['min'])} "
              f"(n={po['n']}, target >= {PEER_TARGET:g}x and never < 1){met(po['met'])}", file=out)
        if po["slower_cases"]:
            print(f"          auto slower than the best peer on: {'; '.join(po['slower_cases'][:8])}"
                  + (" ..." if len(po["slower_cases"]) > 8 else ""), file=out)
        if "scaling" in s:
            sc = s["scaling"]
            print(f"  {k:<7} 2 threads over 1 (auto, >= 500k nnz, back to back): min {f(sc['min'])} over "
                  f"{len(sc['speedups'])} inputs (target >= {SCALING_TARGET:g}x){met(sc['met'])}", file=out)
            print("          " + "; ".join(f"{x['input']} {_param_text(x['param'])} {f(x['speedup'])} "
                                           f"(interleaved {f(x['interleaved'])})" for x in sc["speedups"]),
                  file=out)
    m = summary.get("machine_scaling")
    if m:
        print(f"  machine: 2 threads over 1 for plain lazysparse kernels in this run, back to back "
              f"(interleaved): dense triad (new result) {f(m.get('triad_back_to_back'))} "
              f"({f(m.get('triad'))}), dense product {f(m.get('product_back_to_back'))} "
              f"({f(m.get('product'))})", file=out)


def _param_text(param):
    """A case's parameters as the tables print them: ``128,16``."""
    return ",".join(str(v) for v in param.values())

