"""``python -m lazysparse``: the command-line entry points, ``demo`` (three graph kernels checked
and timed in their steady state against scipy) and ``bench`` (side-by-side benchmarks); ``USAGE``
lists them and each command's ``--help`` gives its options."""
from __future__ import annotations

import sys

USAGE = """usage: python -m lazysparse COMMAND [options]

commands:
  demo     run SpMV, a GNN layer and SDDMM on the shipped Cora graph and an R-MAT graph,
           check each result against scipy/NumPy and time both in the steady state
           (after lazysparse's run-time tuner has settled; --small for a quick run)
  bench    side-by-side benchmarks against scipy.sparse, pydata/sparse and other installed
           peers on the benchmark corpus and R-MAT graphs (python -m lazysparse bench --help)
"""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "demo":
        from lazysparse.bench.demo import main as demo_main
        return demo_main(rest)
    if cmd == "bench":
        from lazysparse.bench.suite import main as bench_main
        return bench_main(rest)
    print(f"unknown command {cmd!r}\n", file=sys.stderr)
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
