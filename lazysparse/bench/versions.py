"""Two checkouts of lazysparse side by side: each benchmark script runs from both trees in
alternating rounds of one run, on one machine, and the report gives lazysparse's after/before
ratio per case, its geometric mean and the worst case (a refactor's "no speed lost" check)."""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

DATA = os.environ.get("LAZYSPARSE_DATA", os.path.join("..", "shared", "data"))

# (name, before module, after module, args): lazysparse only against scipy (the cheapest peer
# that the scripts accept), warm kernels (a first call compiles; the budget covers it)
SUITES = [
    ("fusion", "lazysparse.bench.fusion", "lazysparse.bench.fusion",
     ["--matrices", "cora", "citeseer", "email-Enron", "vt2010", "bcsstk16",
      "--tensors", "nell-995", "--variants", "auto", "--peers", "scipy", "--rmat-scale", "14",
      "--no-scaling", "--K", "32", "--R", "16", "--repeat", "7", "--budget", "60"]),
    ("spmv", "lazysparse.bench.spmv", "lazysparse.bench.spmv",
     ["--peers", "scipy", "--rmat-scale", "18", "--repeat", "30", "--budget", "60"]),
    ("products", "lazysparse.bench.suite", "lazysparse.bench.suite",
     ["--kernels", "spgemm", "add3", "--peers", "scipy", "--rmat-scale", "14", "--repeat", "7",
      "--budget", "60", "--matrices", "cora", "citeseer", "email-Enron", "vt2010", "bcsstk16",
      "cage10", "MIT8", "wiki-Vote", "ca-CondMat", "fe_4elt2"]),
]


def leaves(suite, d):
    """case key -> lazysparse median ms, for each script's JSON layout."""
    out = {}
    if suite == "fusion":
        for r in d["rows"]:
            m = r["cols"].get("auto", {}).get("median_ms")
            if m:
                out[f"{r['kernel']} {r['input']} {json.dumps(r.get('param'), sort_keys=True)}"] = m
    elif suite == "spmv":
        for r in d["spmv"]:
            ls_ = r.get("lazysparse") or r.get("libs", {}).get("lazysparse") or {}
            m = ls_.get("median_ms") if isinstance(ls_, dict) else None
            if m is None:
                m = r.get("lazysparse_ms") or r.get("ls_ms")
            if m:
                out[f"spmv {r.get('matrix') or r.get('name')} t{r.get('threads', '')}"] = m
    else:
        for r in d["results"]:
            m = r.get("lazysparse", {}).get("median_ms")
            if m:
                out[f"{r['kernel']} {r['matrix']}"] = m
    return out


def run(tree, module, args, json_path, log):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), LAZYSPARSE_DATA=os.path.abspath(DATA))
    cmd = [sys.executable, "-m", module, *args, "--json", json_path]
    t = time.time()
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, cwd="/tmp", timeout=3600)
    return time.time() - t


_EPILOG = """\
example:
  python -m lazysparse.bench.versions --before /tmp/old --after . --rounds 5 --out /tmp/ab

A tree is a checkout's root (it goes first on PYTHONPATH); --before-modules names the benchmark
modules of an older layout (lazysparse.bench_fusion and so on).
"""


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m lazysparse.bench.versions", description=__doc__,
                                epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True)
    p.add_argument("--after", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default="/tmp/ab")
    p.add_argument("--suites", nargs="*", default=[s[0] for s in SUITES])
    p.add_argument("--before-modules", nargs=3, metavar=("FUSION", "SPMV", "SUITE"),
                   help="the before tree's benchmark modules, when its layout differs")
    a = p.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    res = {}
    old = dict(zip(("fusion", "spmv", "products"), a.before_modules or ()))
    for name, mb, ma, args in SUITES:
        mb = old.get(name, mb)
        if name not in a.suites:
            continue
        res[name] = {"before": [], "after": []}
        for r in range(a.rounds):
            order = [("before", a.before, mb), ("after", a.after, ma)]
            if r % 2:
                order.reverse()
            for label, tree, mod in order:
                jp = os.path.join(a.out, f"{name}-{label}-{r}.json")
                s = run(tree, mod, args, jp, os.path.join(a.out, f"{name}.log"))
                print(f"{name} round {r} {label}: {s:.0f} s", flush=True)
                try:
                    res[name][label].append(leaves(name, json.load(open(jp))))
                except Exception as e:  # a failed run: reported, not hidden
                    print(f"  no results: {e}", flush=True)
    report(res, a.out)


def report(res, out):
    """The markdown table of ``res`` (suite -> {"before": [case -> ms per round], "after": ...})
    with its summary lines, written to ``out``/table.md and returned."""
    lines = ["| suite | case | before ms | after ms | after/before |", "|---|---|---|---|---|"]
    all_ratios, worst = [], (0, "")
    summary = {}
    for name, v in res.items():
        keys = set.intersection(*[set(d) for d in v["before"] + v["after"]]) if v["before"] and v["after"] else set()
        ratios = []
        for k in sorted(keys):
            b = statistics.median(d[k] for d in v["before"])
            f = statistics.median(d[k] for d in v["after"])
            q = f / b
            ratios.append(q)
            worst = max(worst, (q, f"{name}: {k}"))
            lines.append(f"| {name} | {k} | {b:.3f} | {f:.3f} | {q:.3f} |")
        if ratios:
            g = math.exp(sum(map(math.log, ratios)) / len(ratios))
            summary[name] = (g, max(ratios), len(ratios))
            all_ratios += ratios
    lines.append("")
    for name, (g, mx, n) in summary.items():
        lines.append(f"- {name}: geometric mean after/before {g:.3f}, worst {mx:.3f} (n={n})")
    if all_ratios:
        g = math.exp(sum(map(math.log, all_ratios)) / len(all_ratios))
        lines.append(f"- all: geometric mean {g:.3f}, worst {worst[0]:.3f} ({worst[1]}), n={len(all_ratios)}")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text + "\n")
    return text


if __name__ == "__main__":
    main()
