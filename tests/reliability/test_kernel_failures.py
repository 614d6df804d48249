"""Guarantee: a kernel whose sparse result cannot grow (an allocation fails) frees its
partial buffers: no crash, no leak, a ``MemoryError`` naming the operation.

Kernels that build a sparse result grow their buffers with ``realloc`` (``LS_GROW`` /
``LS_RESIZE``) and report a failed allocation by returning 1; the glue (``Runner._failed``,
compiler/runner.py) then frees the output buffers the kernel handed back through ``p[]`` and
raises ``MemoryError``. Each test runs a child interpreter that imports everything and compiles
the kernels on small inputs first, then limits its address space (``RLIMIT_AS``) to its current
size plus ``HEAD`` MiB and runs an operation whose result needs more than that:

* ``append``: ``A * B`` with ``A`` of shape (n, 1) and ``B`` of shape (1, n), all ones, into CSR:
  the kernel appends n*n entries, growing its output buffers (``oc``/``ov``) from the hint
  (nnz(A) + nnz(B)) by doubling until ``realloc`` fails; the partial output buffers are the
  ones ``Runner._failed`` must free.
* ``append-threads``: the same on two threads: each thread appends its chunks of rows to
  buffers of its own (compiler/lower/parallel.py, ``emit_par_rows``); the failed ``realloc`` happens inside
  the OpenMP region, which flags it, and the kernel fails after the region with every thread's
  buffers freed.
* ``sort``: ``A @ B`` (same operands) materialized as CSR: sort assembly; the kernel's tuple
  buffers (``tc``/``tv``, temporaries that never reach ``p[]``) grow until one fails.

The first test checks the error (type, message naming ``materialize``, the process survives and
prints its marker). The second repeats the failing operation ``REPEATS`` times in one process:
the address space must come back to within ``LEAK_BOUND`` MiB of where it was before the first
failure, and a medium operation of the same kind (about a third of ``HEAD`` at its peak) must
still succeed with the right result. A leak of the partial buffers keeps most of ``HEAD`` mapped
(the buffers had grown to nearly ``HEAD`` MiB), which fails both checks.

Why the kernels jump to ``ls_fail``: a kernel that returned 1 straight from the failed
allocation, before its output pointers were stored into ``p[]`` and without freeing its
temporaries, would leave ``Runner._failed`` NULLs, and every partial buffer would leak (measured:
the address space stays at the limit, 128 MiB above where it was, and even a 25 KiB NumPy array
cannot be allocated afterwards). ``ls_fail`` hands the output buffers back through ``p[]`` and
frees the temporaries (measured: VmSize 133 -> 133 MiB after 30 failures).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEAD = 128          # MiB of address space above the child's size before the limit
LEAK_BOUND = 24     # MiB the address space may keep after REPEATS failures
REPEATS = 30
N_BIG = 4000        # 16M entries: 192 MB of CSR (int32 + float64), well over HEAD
N_MED = {"append": 1600, "append-threads": 1600, "sort": 1000}   # peak about a third of HEAD

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or resource is None or not hasattr(resource, "RLIMIT_AS"),
    reason="needs Linux and resource.RLIMIT_AS (address-space limit) and /proc/self/status")

CHILD = textwrap.dedent("""
    import gc, json, resource, sys
    sys.path.insert(0, {root!r})
    import numpy as np
    import scipy.sparse as sp
    import lazysparse as ls
    from lazysparse.runtime import kernel_cache as cache

    KIND, HEAD, REPEATS, N_BIG, N_MED = {kind!r}, {head}, {repeats}, {n_big}, {n_med}

    def mib():
        out = {{}}
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(("VmSize:", "VmRSS:")):
                    k, v = line.split(":")
                    out[k] = int(v.split()[0]) / 1024
        return out

    def ones(r, c):
        return ls.asarray(sp.csr_matrix(np.ones((r, c))))

    if KIND == "append-threads":  # rows appended on two threads, each to buffers of its own
        from lazysparse.runtime import threads
        threads.PAR_MIN_WORK[0] = 0
        ls.set_num_threads(2)

    def op(A, B):
        if KIND.startswith("append"):
            return (A * B).materialize(format="csr")
        return (A @ B).materialize(format="csr")

    def check(n):
        r = op(ones(n, 1), ones(1, n))
        s = r.to_scipy()
        assert r.format == "csr" and r.shape == (n, n) and r.nnz == n * n, (r.format, r.shape, r.nnz)
        assert s.data.min() == 1.0 and s.data.max() == 1.0
        del r, s

    # compile (and tune) on small inputs: nothing compiles once the limit is set
    for n in (3, 40, 40, 40, 40, 40, 40, 40, 40):
        check(n)
    A, B = ones(N_BIG, 1), ones(1, N_BIG)
    compiles = cache.cache_info()["compiles"]
    gc.collect()
    before = mib()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = int((before["VmSize"] + HEAD) * (1 << 20))
    if hard != resource.RLIM_INFINITY and hard < want:
        print(json.dumps({{"skip": f"RLIMIT_AS hard limit {{hard}} is below {{want}}"}}))
        sys.exit(0)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError) as e:
        print(json.dumps({{"skip": f"setrlimit(RLIMIT_AS) failed: {{e}}"}}))
        sys.exit(0)

    errors, sizes = [], []
    for i in range(REPEATS):
        try:
            r = op(A, B)
            errors.append(None)
            del r
        except MemoryError as e:
            errors.append(str(e))
        gc.collect()
        sizes.append(mib())
    after = mib()
    medium = None
    try:
        check(N_MED)
        medium = "ok"
    except MemoryError as e:
        medium = "MemoryError: " + str(e)
    gc.collect()
    print("caught and survived")
    print(json.dumps(dict(before=before, after=after, sizes=sizes, errors=errors, medium=medium,
                          compiles_under_limit=cache.cache_info()["compiles"] - compiles,
                          limit_mib=want / (1 << 20))))
""")


def _run(kind, repeats, cache_dir):
    code = CHILD.format(root=ROOT, kind=kind, head=HEAD, repeats=repeats, n_big=N_BIG,
                        n_med=N_MED[kind])
    # a fixed mmap threshold (glibc): every large buffer is mmap-ed and unmapped when freed, so
    # the address space measures what is still allocated; otherwise glibc raises the threshold
    # after the first large free and may keep ~30 MiB of freed heap for reuse (not a leak)
    env = dict(os.environ, LAZYSPARSE_CACHE_DIR=str(cache_dir), LAZYSPARSE_MEMORY_LIMIT="none",
               LAZYSPARSE_NUM_THREADS="1", OMP_NUM_THREADS="1", MALLOC_MMAP_THRESHOLD_="131072")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 0, f"child died with return code {r.returncode}:\n{r.stderr[-3000:]}"
    lines = r.stdout.strip().splitlines()
    out = json.loads(lines[-1])
    if "skip" in out:
        pytest.skip(out["skip"])
    assert "caught and survived" in lines, r.stdout
    return out


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("kernel-failures-cache")


@pytest.fixture(scope="module")
def runs(cache_dir):
    return {}


def _result(runs, cache_dir, kind):
    if kind not in runs:
        runs[kind] = _run(kind, REPEATS, cache_dir)
    return runs[kind]


@pytest.mark.parametrize("kind", ["append", "append-threads", "sort"])
def test_allocation_failure_is_a_memory_error_naming_the_operation(runs, cache_dir, kind):
    out = _result(runs, cache_dir, kind)
    first = out["errors"][0]
    assert first is not None, "the result fit under the address-space limit: nothing failed"
    assert first.startswith("materialize: out of memory while assembling a result of shape "
                            f"({N_BIG}, {N_BIG})"), first
    assert out["compiles_under_limit"] == 0


@pytest.mark.parametrize("kind", ["append", "append-threads", "sort"])
def test_repeated_allocation_failures_do_not_leak(runs, cache_dir, kind):
    out = _result(runs, cache_dir, kind)
    assert all(e is not None and e.startswith("materialize: out of memory") for e in out["errors"]), \
        out["errors"]
    before, after = out["before"], out["after"]
    grown = after["VmSize"] - before["VmSize"]
    rss = after["VmRSS"] - before["VmRSS"]
    print(f"{kind}: limit {out['limit_mib']:.0f} MiB; VmSize {before['VmSize']:.0f} -> "
          f"{after['VmSize']:.0f} MiB, VmRSS {before['VmRSS']:.0f} -> {after['VmRSS']:.0f} MiB "
          f"after {REPEATS} failures; per failure: "
          + " ".join(f"{s['VmSize'] - before['VmSize']:.0f}" for s in out["sizes"])
          + f" MiB; medium operation: {out['medium']}")
    assert grown <= LEAK_BOUND, (grown, out["sizes"])
    assert rss <= LEAK_BOUND, (rss, out["sizes"])
    assert out["medium"] == "ok", out["medium"]
