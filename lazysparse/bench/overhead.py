"""What lazysparse costs beyond its kernels (``python -m lazysparse.bench.overhead``): three figures
API.md holds lazysparse to, for ``A @ x`` on a 100 x 100 CSR matrix: *warm* (building and
materializing with the kernel in the memory cache, less the kernel's own run time), *disk* (a new
process's first call with the kernel in the on-disk cache) and *cold* (a first call with an empty
cache)."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

_FIRST_CALL = r"""
import json, time, numpy as np, scipy.sparse as sp
A = sp.random(100, 100, density=0.1, format="csr", random_state=0)
x = np.random.default_rng(0).random(100)
import lazysparse as ls
lA, lx = ls.asarray(A), ls.asarray(x)
t0 = time.perf_counter()
(lA @ lx).materialize()
print(json.dumps({"first_ms": (time.perf_counter() - t0) * 1e3, "info": ls.cache_info()}))
"""


def warm(repeat: int = 2001) -> dict:
    """**warm**: building ``A @ x`` (100 x 100 CSR, 10% dense) and materializing it with the kernel in
    the memory cache, minus the kernel's own run time (the same compiled function called directly on
    the same buffers). Medians of interleaved rounds.
    """
    import numpy as np
    import scipy.sparse as sp

    import lazysparse as ls
    from lazysparse.compiler import pipeline as ex

    A = sp.random(100, 100, density=0.1, format="csr", random_state=0)
    x = np.random.default_rng(0).random(100)
    lA, lx = ls.asarray(A), ls.asarray(x)
    with ex.kernel_log() as log:
        (lA @ lx).materialize()
    runner = log[-1][1]
    # the kernel alone: the runner's own argument arrays, filled by the call above, with the output
    # slot pointed at an array kept here
    p, d, _ = runner._pool[-1]
    out = np.zeros(100)
    keep = runner._ffi.from_buffer(out, require_writable=True)
    for k, desc in enumerate(runner.abi.p):
        if desc[0] == "out":
            p[k] = keep
    fn = runner.kernel.fn
    build, total, kern = [], [], []
    pc = time.perf_counter
    for _ in range(repeat):
        t0 = pc()
        e = lA @ lx
        t1 = pc()
        e.materialize()
        t2 = pc()
        fn(p, d)
        t3 = pc()
        build.append(t1 - t0)
        total.append(t2 - t0)
        kern.append(t3 - t2)
    med = {k: statistics.median(v) * 1e6 for k, v in (("build_us", build), ("total_us", total), ("kernel_us", kern))}
    med["overhead_us"] = med["total_us"] - med["kernel_us"]
    return med


def first_call(cache_dir: str) -> dict:
    """In a subprocess, the time of a first ``(A @ x).materialize()``: with the kernel in the on-disk
    cache it is *disk* (plan + load of the shared object + run), with an empty cache directory it is
    *cold* (plan, generate C, compile, load, run).
    """
    # as an installed package runs: with byte-compiled modules (the first run writes them)
    env = dict(os.environ, LAZYSPARSE_CACHE_DIR=cache_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    r = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    w = warm()
    with tempfile.TemporaryDirectory(prefix="lazysparse-overhead-") as d:
        first_call(tempfile.mkdtemp(dir=d))  # byte-compiles lazysparse's modules once
        cold = first_call(d)
        disk = [first_call(d)["first_ms"] for _ in range(5)]
    print("lazysparse overhead (100 x 100 CSR A @ x)")
    print(f"  warm:  build {w['build_us']:.1f} us, build + materialize {w['total_us']:.1f} us, "
          f"kernel alone {w['kernel_us']:.1f} us -> overhead {w['overhead_us']:.1f} us (target <= 50)")
    print(f"  disk:  new process, kernel on disk: first call {statistics.median(disk):.1f} ms "
          f"(median of 5; target <= 20)")
    print(f"  cold:  empty cache: first call {cold['first_ms']:.1f} ms (target <= 1500)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
