"""Turn ``python -m lazysparse bench --json PATH`` output into a PNG of lazysparse / peer ratios.

    python asv_bench/plot.py bench.json [-o bench.png]

One panel per kernel; one point per input and peer; log scale; below 1 means lazysparse is faster.
Needs matplotlib.
"""
import argparse
import json
import sys
from collections import defaultdict


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("json")
    p.add_argument("-o", "--output", default=None, help="PNG path (default: JSON path with .png)")
    args = p.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker  # noqa: F401
    except ImportError:
        print("plot.py needs matplotlib (pip install matplotlib)", file=sys.stderr)
        return 1
    with open(args.json) as f:
        data = json.load(f)
    ratios = defaultdict(lambda: defaultdict(list))      # kernel -> peer -> [(input, ratio)]
    for r in data["results"]:
        ls_ms = r["lazysparse"].get("median_ms")
        if ls_ms is None:
            continue
        for peer, m in r["peers"].items():
            if m.get("median_ms"):
                ratios[r["kernel"]][peer].append((r["matrix"], ls_ms / m["median_ms"]))
    kernels = sorted(ratios)
    peers = sorted({p for k in ratios.values() for p in k})
    color = {p: f"C{i}" for i, p in enumerate(peers)}
    if not kernels:
        print("no timed results in", args.json, file=sys.stderr)
        return 1
    fig, axes = plt.subplots(len(kernels), 1, figsize=(10, 2.2 * len(kernels)), squeeze=False)
    for ax, k in zip(axes[:, 0], kernels):
        inputs = sorted({name for pts in ratios[k].values() for name, _ in pts})
        pos = {name: i for i, name in enumerate(inputs)}
        for peer, pts in sorted(ratios[k].items()):
            ax.scatter([pos[n] for n, _ in pts], [v for _, v in pts], label=peer, s=14,
                       color=color[peer])
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_title(f"{k}: lazysparse time / peer time", fontsize=9)
        ax.set_xticks(range(len(inputs)))
        ax.set_xticklabels(inputs, rotation=60, ha="right", fontsize=6)
        ax.legend(fontsize=6, loc="upper right")
    meta = data.get("meta", {})
    fig.suptitle(f"lazysparse {meta.get('lazysparse', '')}, {meta.get('threads', '?')} thread(s), "
                 f"{meta.get('date', '')}", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    out = args.output or args.json.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=130)
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
