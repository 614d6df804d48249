"""Plots for docs/performance.md, made from benchmark JSON.

    python docs/plots.py RESULT.json [RESULT2.json ...] --out docs/img
    python docs/plots.py --selftest

Each JSON is recognised by its keys: ``python -m lazysparse bench --json`` writes
``{meta, results, summary}`` ("bench"), ``python -m lazysparse.bench.fusion --json`` writes
``{meta, rows, summary}`` ("fusion"), ``python -m lazysparse.bench.conv --json`` writes
``{meta, conv}`` ("conv": one plot per case, a bar per sparsity and peer), ``python -m
lazysparse.bench.spmv --json`` writes ``{meta, spmv}`` ("spmv": peer time over lazysparse's per
matrix, and lazysparse's fraction of the bandwidth bound).  One SVG per kernel, ``<out>/<bench>-<kernel>.svg``: a
horizontal bar per input and compared column, on a log scale, drawn from 1.0 ("as fast") so a
bar's direction says who won, with the kernel's targets as black dashed or dotted lines.  Ratios keep each
benchmark's own convention, so they match the tables it prints: bench is lazysparse / peer
(below 1: lazysparse faster), fusion is column / auto (above 1: auto faster).
"""
import argparse
import json
import math
import os
import sys
import tempfile

# bench/suite.py defines no targets: these are the sparse-product targets (docs/performance.md,
# "Sparse products and sums, one thread"), as lazysparse / peer time.
BENCH_TARGETS = {"spgemm": [(0.769, "target ls/scipy ≤ 0.769 (geomean)"),
                            (1.25, "target ls/graphblas ≤ 1.25 (every input)")],
                 "add3": [(0.667, "target ls/scipy ≤ 0.667 (geomean)")],
                 "masked": [(1.0, "target ls/graphblas ≤ 1")]}


def bench_cases(data):
    """bench/suite.py JSON -> {kernel: {input label: {peer: lazysparse ms / peer ms}}}, targets."""
    cases = {}
    for r in data["results"]:
        ls_ms = r["lazysparse"].get("median_ms")
        label = r["matrix"] + ("" if r.get("check") in (None, "ok") else f" ({r['check']})")
        cases.setdefault(r["kernel"], {})[label] = {
            p: ls_ms / v["median_ms"] for p, v in r["peers"].items() if ls_ms and v.get("median_ms")}
    return cases, {k: BENCH_TARGETS.get(k, []) for k in cases}


def fusion_targets(summary, kernel):
    """Targets as the run recorded them in its summary; the module's constants otherwise."""
    s = summary.get(kernel, {})
    mt = s.get("max_over_auto", {}).get("target")
    pt = s.get("best_peer_over_auto", {}).get("target_geomean")
    if mt is None or pt is None:  # an older JSON: read lazysparse.bench.fusion (needs lazysparse)
        from lazysparse.bench.fusion import MAX_TARGETS, PEER_TARGET
        mt, pt = MAX_TARGETS.get(kernel), PEER_TARGET
    out = [(pt, f"target best peer/auto ≥ {pt:g} (geomean), never < 1")]
    return out + ([(mt, f"target max/auto ≥ {mt:g} (geomean)")] if mt else [])


def fusion_cases(data):
    """bench_fusion JSON -> {kernel: {input label: {column: column ms / auto ms}}}, targets.
    auto@2 is left out: it is a thread-scaling ratio, not a comparison with a peer."""
    meta = data["meta"]
    names = [v for v in meta.get("variants", ["max", "none"]) if v != "auto"] + meta.get("peers", [])
    cases = {}
    for r in data["rows"]:
        ms = {n: c.get("median_ms") for n, c in r["cols"].items()}
        auto = ms.get("auto")
        label = r["input"] + " " + ",".join(f"{k}={v}" for k, v in r["param"].items())
        cases.setdefault(r["kernel"], {})[label + ("" if auto else " (auto failed)")] = {
            n: ms[n] / auto for n in names if auto and ms.get(n)}
    return cases, {k: fusion_targets(data.get("summary", {}), k) for k in cases}


def conv_cases(data):
    """bench_conv JSON -> {case: {"sparsity s": {peer: peer ms / lazysparse ms}}}, no targets.
    Each peer against a new sparse input per call (the window built every call), and the best
    peer against the window kept with its input."""
    cases = {}
    for r in data["conv"]:
        ms = r["ms"]
        fresh, kept = ms.get("ls sparse"), ms.get("ls kept")
        peers = {k: v for k, v in ms.items() if not k.startswith("ls ")}
        row = {f"{k} / ls sparse": v / fresh for k, v in peers.items() if fresh}
        if kept and peers:
            row["best peer / ls kept"] = min(peers.values()) / kept
        cases.setdefault(r["case"], {})[f"sparsity {r['sparsity']}"] = row
    return cases, {k: [] for k in cases}


def spmv_cases(data):
    """bench_spmv JSON -> {"peers": {matrix: {peer: peer ms / lazysparse ms}}, "bound":
    {matrix: {"lazysparse": its fraction of the bandwidth bound}}}, and the SpMV targets."""
    peers, bound = {}, {}
    for r in data["spmv"]:
        peers[r["name"]] = {p: ms / r["ls_ms"] for p, ms in r["peers"].items() if ms and r["ls_ms"]}
        bound[r["name"]] = {"lazysparse": r["fraction"]}
    return ({"peers": peers, "bound": bound},
            {"peers": [(1.2, "target on R-MAT 2^20: ≥ 1.2 (never < 1 on the corpus)")],
             "bound": [(0.75, "target ≥ 0.75 of the bound")]})


def title(bench, kernel, meta):
    git = meta.get("git") or {}  # only bench_fusion records the commit
    commit = (git.get("commit") or "")[:10] + (" +modified" if git.get("modified") else "")
    bits = [f"{meta.get('threads', '?')} thread(s)", f"lazysparse {meta.get('lazysparse', '?')}",
            commit, meta.get("date", "")]
    return f"{bench} {kernel}: " + ", ".join(b for b in bits if b)


def plot(path, head, xlabel, rows, targets):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter
    plt.rcParams["svg.fonttype"] = "none"        # text stays text: greppable, smaller files
    plt.rcParams["svg.hashsalt"] = "lazysparse"  # same JSON, same SVG: clean diffs in git
    inputs = list(rows)
    series = list(dict.fromkeys(s for r in rows.values() for s in r))
    m = max(1, len(series))
    h = 0.8 / m                                  # the bars of one input share one row
    fig, ax = plt.subplots(figsize=(8, 1.6 + len(inputs) * (0.12 + 0.12 * m)), layout="constrained")
    values = [1.0] + [v for v, _ in targets]
    for j, s in enumerate(series):
        pts = [(i + (j - (m - 1) / 2) * h, r[s]) for i, r in enumerate(rows.values()) if s in r]
        vals = [v for _, v in pts]
        values += vals
        g = math.exp(sum(map(math.log, vals)) / len(vals))
        # bars start at 1.0 so faster and slower point opposite ways on the log axis
        ax.barh([y for y, _ in pts], [v - 1 for v in vals], left=1, height=h, color=f"C{j}",
                label=f"{s} (geomean {g:.3g}, n={len(vals)})")
    lines = {1.0: ["as fast"]}
    for v, lab in targets:   # a target equal to another line shares it and its label
        lines.setdefault(v, []).append(lab)
    # black lines, told apart by their dashes: the bar colours stay the peers'
    for (v, labs), ls in zip(lines.items(), ["-", "--", ":", "-.", (0, (5, 1, 1, 1))]):
        ax.axvline(v, color="k", lw=1.2 if v == 1.0 else 1, ls=ls, label="; ".join(labs))
    ax.set_xscale("log")
    lo, hi = min(values) / 1.3, max(values) * 1.3
    ax.set_xlim(lo, hi)
    # ticks at 1-2-5 steps: ratios often span less than a decade, where a log axis labels nothing
    ax.set_xticks([t for e in range(-4, 5) for t in (10.0**e, 2 * 10.0**e, 5 * 10.0**e) if lo <= t <= hi])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(range(len(inputs)), inputs, fontsize=7)
    ax.set_ylim(len(inputs) - 0.5, -0.5)     # first input at the top, as in the printed table
    ax.set_xlabel(xlabel)
    ax.set_title(head, fontsize=9)
    ax.grid(axis="x", which="major", lw=0.3)
    fig.legend(fontsize=7, loc="outside lower center", ncol=2, frameon=False)  # off the bars
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


KINDS = {"bench": (bench_cases, "lazysparse time / peer time (below 1: lazysparse faster)"),
         "fusion": (fusion_cases, "column time / auto time (above 1: auto faster)"),
         "conv": (conv_cases, "peer time / lazysparse time (above 1: lazysparse faster)"),
         "spmv": (spmv_cases, {"peers": "peer time / lazysparse time (above 1: lazysparse faster)",
                               "bound": "bandwidth-bound time / lazysparse time (1: at the bound)"})}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])  # the docstring's first line
    p.add_argument("json", nargs="*", help="JSON written by a benchmark's --json")
    p.add_argument("--out", default="docs/img", help="folder for the SVGs (default docs/img)")
    p.add_argument("--selftest", action="store_true", help="plot synthetic JSON of both kinds and check")
    args = p.parse_args(argv)
    if args.selftest:
        return selftest()
    if not args.json:
        p.error("give at least one JSON file (or --selftest)")
    os.makedirs(args.out, exist_ok=True)
    written = []
    for src in args.json:
        with open(src) as f:
            data = json.load(f)
        bench = "fusion" if "rows" in data else "bench" if "results" in data else \
            "conv" if "conv" in data else "spmv" if "spmv" in data else None
        if bench is None:
            return (f"{src}: not bench, bench_fusion, bench_conv or bench_spmv JSON (no 'results', "
                    f"'rows', 'conv' or 'spmv')")
        cases, targets = KINDS[bench][0](data)
        for kernel, rows in cases.items():
            if not any(rows.values()):
                print(f"{src}: {kernel}: nothing timed, no plot", file=sys.stderr)
                continue
            path = os.path.join(args.out, f"{bench}-{kernel}.svg")
            if path in written:  # two runs of one benchmark in one call: keep both plots
                stem = os.path.splitext(os.path.basename(src))[0]
                path = os.path.join(args.out, f"{bench}-{kernel}-{stem}.svg")
            label = KINDS[bench][1]
            label = label[kernel] if isinstance(label, dict) else label
            plot(path, title(bench, kernel, data.get("meta", {})), label, rows, targets[kernel])
            written.append(path)
            print(path)
    return 0


def selftest():
    """Synthetic JSON in the exact shape each benchmark writes (only the keys read here, plus
    a failed case of each), plotted into a temporary folder."""
    meta = dict(lazysparse="0.1.0", threads=1, date="2025-01-01T00:00:00")
    bench = {"meta": dict(meta, peers=["scipy", "graphblas"]), "summary": {}, "results": [
        dict(matrix=m, kind="matrix", shape=[9, 9], nnz=20, kernel=k, check=c,
             lazysparse={"median_ms": ls, "first_ms": 50.0} if ls else {"error": "wrong result"},
             peers={"scipy": {"median_ms": 2.0, "first_ms": 2.0}, "graphblas": {"error": "x"}})
        for m, k, c, ls in (("cage10", "spgemm", "ok", 1.4), ("rmat-16", "spgemm", "FAILED", None),
                            ("cage10", "add3", "ok", 3.0))]}
    cols = {"auto": {"median_ms": 1.0, "check": "ok"}, "max": {"median_ms": 2.0, "check": "ok"},
            "none": {"error": "MemoryError"}, "scipy": {"median_ms": 4.0, "check": "ok"},
            "torch": {"skipped": "cannot express this kernel"}}
    fusion = {"meta": dict(meta, variants=["auto", "max", "none"], peers=["scipy", "torch"],
                           git={"commit": "0123456789abcdef", "modified": ["x.py"]}),
              "rows": [dict(kernel="sddmm", param={"K": 32}, input="bcsstk13", kind="matrix",
                            shape=[9, 9], nnz=20, cols=cols),
                       dict(kernel="sddmm", param={"K": 128}, input="fe_4elt2", kind="matrix",
                            shape=[9, 9], nnz=20, cols={"auto": {"error": "boom"}})],
              "summary": {"sddmm": {"max_over_auto": {"target": 1.5},
                                    "best_peer_over_auto": {"target_geomean": 1.5}}}}
    conv = {"meta": meta, "conv": [
        dict(case="2d", sparsity="0.99", nnz=10, wrong=[],
             ms={"ls sparse": 2.0, "ls kept": 1.0, "ls dense": 6.0, "signal": 120.0, "shifted": 3.0})]}
    spmv = {"meta": dict(meta, threads=2), "spmv": [
        dict(name="ca-CondMat", nnz=10, bytes=100, bw_gbs=1.0, bound_ms=0.015, ls_ms=0.044,
             fraction=0.34, peers={"mkl": 0.059, "torch": 0.061}, best="mkl", vs_best=1.34)]}
    with tempfile.TemporaryDirectory() as tmp:
        srcs = [os.path.join(tmp, n) for n in ("bench.json", "fusion.json", "conv.json", "spmv.json")]
        for src, data in zip(srcs, (bench, fusion, conv, spmv)):
            with open(src, "w") as f:
                json.dump(data, f)
        out = os.path.join(tmp, "img")
        assert main(srcs + ["--out", out]) == 0
        expect = {"bench-spgemm.svg": ["cage10", "rmat-16 (FAILED)", "scipy", "0.769", "as fast"],
                  "bench-add3.svg": ["cage10", "0.667"],
                  "fusion-sddmm.svg": ["bcsstk13 K=32", "fe_4elt2 K=128 (auto failed)", "max",
                                       "0123456789 +modified", "≥ 1.5"],
                  "conv-2d.svg": ["sparsity 0.99", "shifted / ls sparse", "best peer / ls kept"],
                  "spmv-peers.svg": ["ca-CondMat", "mkl", "torch", "1.2"],
                  "spmv-bound.svg": ["ca-CondMat", "0.75 of the bound"]}
        assert sorted(os.listdir(out)) == sorted(expect), os.listdir(out)
        for name, words in expect.items():
            with open(os.path.join(out, name), encoding="utf-8") as f:
                svg = f.read()
            missing = [w for w in words if w not in svg]
            assert not missing, f"{name} lacks {missing}"
    print("selftest ok: 6 SVGs written, each names its inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
