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
      "--no-scaling", "--K", "32", "--R", "16", "--repeat", "15", "--budget", "60"]),
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
    with its summary lines, written to ``out``/table.md and returned. Each case gives the ratio of
    the medians over rounds and, beside it, the ratio of the best rounds: on a shared machine a
    round's median moves 10-30% with the neighbours' load, and the best round is the one they
    disturbed least (where the two ratios disagree, the case is within the noise)."""
    lines = ["| suite | case | before ms | after ms | after/before | best after/best before |",
             "|---|---|---|---|---|---|"]
    summary, every = {}, {"median": [], "best": []}
    worst = {"median": (0, ""), "best": (0, "")}
    for name, v in res.items():
        keys = set.intersection(*[set(d) for d in v["before"] + v["after"]]) if v["before"] and v["after"] else set()
        ratios = {"median": [], "best": []}
        for k in sorted(keys):
            bs, fs = [d[k] for d in v["before"]], [d[k] for d in v["after"]]
            b, f = statistics.median(bs), statistics.median(fs)
            q = {"median": f / b, "best": min(fs) / min(bs)}
            for stat, x in q.items():
                ratios[stat].append(x)
                worst[stat] = max(worst[stat], (x, f"{name}: {k}"))
            lines.append(f"| {name} | {k} | {b:.3f} | {f:.3f} | {q['median']:.3f} | {q['best']:.3f} |")
        if ratios["median"]:
            summary[name] = {stat: (_geomean(r), max(r)) for stat, r in ratios.items()}
            summary[name]["n"] = len(ratios["median"])
            for stat in every:
                every[stat] += ratios[stat]
    lines.append("")
    for name, s in summary.items():
        lines.append(f"- {name} (n={s['n']}): medians: geometric mean after/before {s['median'][0]:.3f}, "
                     f"worst {s['median'][1]:.3f}; best rounds: {s['best'][0]:.3f}, worst {s['best'][1]:.3f}")
    if every["median"]:
        for stat, r in every.items():
            lines.append(f"- all, {stat}: geometric mean {_geomean(r):.3f}, worst {worst[stat][0]:.3f} "
                         f"({worst[stat][1]}), n={len(r)}")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text + "\n")
    return text


def _geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


if __name__ == "__main__":
    main()
