"""A fuzzer of hostile cases, each run in a process of its own: inputs, expressions, cache
states, thread counts, threads and signals.

    python tests/reliability/hostile.py --cases 5000 --seed 0 --jobs 2

Every case is drawn from ``(seed, index)`` alone, so a failure is replayed with ``--only INDEX``.
A case ends in one of:

``ok``       the result equals dense NumPy's (the oracle), or the case expected an error and got
             one of the allowed types (ValueError, TypeError, IndexError, MemoryError, OverflowError,
             NotImplementedError, KeyboardInterrupt where a signal was sent) naming the operation;
``wrong``    a result differs from NumPy's, or an invalid input was accepted;
``error``    an exception outside the allowed types (an internal error reaching the user);
``crash``    the process died of a signal (a segmentation fault);
``hang``     it ran past the case's time limit.

Each case runs in a child forked from a parent that has imported lazysparse and never run a
kernel (so no OpenMP thread pool is inherited); the children share one kernel cache directory,
as a user's processes do, except the cache cases, which plant their hostile files in a private one.
The test suite runs a few cases of every family (``test_hostile.py``); the full count is run by hand.
"""
from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import os
import random
import signal
import sys
import tempfile
import threading
import time
import traceback
from multiprocessing.connection import wait

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lazysparse as ls  # noqa: E402

ALLOWED = (ValueError, TypeError, IndexError, MemoryError, OverflowError, NotImplementedError)
FORMATS = ("csr", "csc", "coo", "dense")
DTYPES = (np.float64, np.float32, np.int64, np.int32, np.complex128, np.bool_)
TIMEOUT = 60.0  # seconds a case may take (compiles included) before it counts as a hang


class Wrong(AssertionError):
    """The case saw a result that is not NumPy's, or accepted what it should refuse."""


# ---------------------------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------------------------

def _dense(rng: random.Random, shape, dtype):
    g = np.random.default_rng(rng.getrandbits(32))
    keep = g.random(shape) < rng.choice((0.0, 0.1, 0.3, 1.0))
    if dtype == np.bool_:
        return keep
    vals = g.integers(-5, 6, shape) if np.issubdtype(dtype, np.integer) else g.standard_normal(shape)
    if dtype == np.complex128:
        vals = vals + 1j * g.standard_normal(shape)
    return np.where(keep, vals, 0).astype(dtype)


def _operand(rng: random.Random, dense: np.ndarray):
    """``dense`` as a lazysparse array in a random format and index width."""
    fmt = rng.choice(FORMATS) if dense.ndim == 2 else "dense"
    if fmt == "dense":
        return ls.asarray(dense)
    m = {"csr": sp.csr_array, "csc": sp.csc_array, "coo": sp.coo_array}[fmt](dense)
    if rng.random() < 0.3 and fmt != "coo":
        m.indices = m.indices.astype(np.int64)
        m.indptr = m.indptr.astype(np.int64)
    return ls.asarray(m)


def _shape(rng, ndim=2):
    return tuple(rng.choice((0, 1, 2, 3, 7, 16)) for _ in range(ndim))


def check(got, want, what, single=False):
    """``got`` (a lazysparse result) equals ``want`` (NumPy's), values and shape; ``single``:
    float32 values took part (rounded to single precision along the way, in another order)."""
    arr = got.todense() if hasattr(got, "todense") else np.asarray(got)
    arr = np.asarray(arr)
    want = np.asarray(want)
    if arr.shape != want.shape:
        raise Wrong(f"{what}: shape {arr.shape}, NumPy {want.shape}")
    if want.size == 0:
        return
    tol = 1e-4 if single or np.result_type(arr.dtype, want.dtype) in (np.float32, np.complex64) else 1e-9
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        ok = np.array_equal(arr, want)
    else:
        ok = np.allclose(arr, want, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(want)))),
                         equal_nan=True)
    if not ok:
        raise Wrong(f"{what}: values differ from NumPy's")


# ---------------------------------------------------------------------------------------------
# Families: each takes a Random and returns nothing (ok) or raises
# ---------------------------------------------------------------------------------------------

_BINARY = [("add", lambda a, b: a + b), ("subtract", lambda a, b: a - b),
           ("multiply", lambda a, b: a * b), ("maximum", np.maximum), ("minimum", np.minimum)]
_UNARY = [("negative", lambda a: -a), ("abs", np.abs), ("square", np.square),
          ("transpose", lambda a: a.T), ("sum0", lambda a: a.sum(axis=0)),
          ("sum1", lambda a: a.sum(axis=-1)), ("sum", lambda a: a.sum()), ("max", lambda a: a.max(axis=0)),
          ("scale", lambda a: a * 3), ("shift", lambda a: a + 2)]


def _apply(rng, depth, pool):
    """A random expression over ``pool`` (pairs of lazy operand, NumPy value): (lazy, NumPy)."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(pool)
    if rng.random() < 0.4:
        name, f = rng.choice(_UNARY)
        x, xv = _apply(rng, depth - 1, pool)
        if name.startswith(("sum", "max")) and xv.ndim == 0 or name == "max" and xv.shape[:1] == (0,):
            return x, xv
        if name == "max" and xv.dtype == np.complex128:
            return x, xv
        return _both(f, (x,), (xv,))
    a, av = _apply(rng, depth - 1, pool)
    b, bv = _apply(rng, depth - 1, pool)
    if rng.random() < 0.3 and av.ndim == 2 and bv.ndim >= 1 and av.shape[1] == bv.shape[0] \
            and av.dtype != np.bool_ and bv.dtype != np.bool_:
        return _both(lambda u, v: u @ v, (a, b), (av, bv))
    try:
        np.broadcast_shapes(av.shape, bv.shape)
    except ValueError:
        return a, av
    name, f = rng.choice(_BINARY)
    if name in ("maximum", "minimum") and np.complex128 in (av.dtype, bv.dtype):
        name, f = _BINARY[0]
    return _both(f, (a, b), (av, bv))


_KEPT = {np.dtype(t) for t in DTYPES}


def _both(f, lazy, values):
    """``f`` on the lazy operands and on NumPy's. Where NumPy refuses (``-`` of bools), lazysparse
    must refuse too, and the step is skipped; where NumPy's result has a dtype lazysparse does not
    keep (``square`` of bools is int8 in NumPy), the step is skipped."""
    try:
        want = f(*values)
    except (TypeError, ValueError):
        try:
            f(*lazy)
        except (TypeError, ValueError):
            return lazy[0], values[0]
        raise Wrong("lazysparse accepted an operation NumPy refuses") from None
    if np.asarray(want).dtype not in _KEPT:
        return lazy[0], values[0]
    return f(*lazy), want


def expressions(rng):
    """A random expression tree over random operands, against NumPy."""
    n = rng.choice((2, 3, 7, 16))
    pool = []
    for _ in range(rng.randint(1, 3)):
        shape = rng.choice(((n, n), (n, n), (n,), _shape(rng)))
        v = _dense(rng, shape, rng.choice(DTYPES))
        pool.append((_operand(rng, v), v))
    try:
        with np.errstate(all="ignore"):
            lazy, want = _apply(rng, rng.randint(1, 4), pool)
        if not isinstance(lazy, ls.Array):
            return
        got = ls.compute(lazy, fusion=rng.choice(("auto", "max", "none")))[0]
        check(got, want, "expression", single=any(v.dtype == np.float32 for _, v in pool))
    except (NotImplementedError, Wrong):  # (a clear "not yet" is allowed)
        raise
    except Exception as e:  # NumPy computed every step: lazysparse must too
        raise Wrong(f"lazysparse raised {type(e).__name__} where NumPy computed: {e}"[:300]) from e


def _corrupt_csr(rng, m):
    """One random corruption of a CSR's arrays (or none); whether the result is still valid."""
    kind = rng.choice(("none", "indptr", "index", "data", "shape", "dtype", "unsorted", "dups",
                       "nan", "readonly", "noncontig", "bigendian"))
    ind, ptr, dat = m.indices.copy(), m.indptr.copy(), m.data.copy()
    valid = True
    if kind == "indptr" and len(ptr) > 1:
        ptr[rng.randrange(len(ptr))] += rng.choice((-3, -1, 1, 2**20))
        valid = False
    elif kind == "index" and len(ind):
        ind[rng.randrange(len(ind))] = rng.choice((-1, m.shape[1], 2**31 - 1))
        valid = False
    elif kind == "data":
        dat = dat[: max(len(dat) - 1, 0)] if len(dat) else np.ones(1)
        valid = False
    elif kind == "shape":
        return m, rng.choice(((m.shape[0], -1), (m.shape[0], 2**63), (m.shape[0], 2**64))), False
    elif kind == "dtype":
        ind = ind.astype(rng.choice((np.float64, np.uint64, np.int8)))
        valid = ind.dtype == np.int8 and (len(ind) == 0 or ind.max() < 127)
    elif kind == "unsorted" and len(ind) > 1:
        lo, hi = ptr[0], ptr[-1]
        ind[lo:hi] = ind[lo:hi][::-1]
    elif kind == "dups" and len(ind) > 1:
        ind[1] = ind[0]
    elif kind == "nan" and len(dat):
        dat[rng.randrange(len(dat))] = rng.choice((np.nan, np.inf, -np.inf))
    elif kind == "readonly":
        for a in (ind, ptr, dat):
            a.flags.writeable = False
    elif kind == "noncontig":
        ind = np.repeat(ind, 2)[::2]
        dat = np.repeat(dat, 2)[::2]
    elif kind == "bigendian":
        dat = dat.astype(dat.dtype.newbyteorder(">"))
    out = sp.csr_array(m.shape, dtype=m.dtype)
    out.indices, out.indptr, out.data = ind, ptr, dat
    return out, m.shape, valid


def _reference_valid(m, shape) -> bool:
    """Our own check of a CSR's structure (independent of lazysparse's validation)."""
    ind, ptr, dat = m.indices, m.indptr, m.data
    if len(shape) != 2 or min(shape) < 0 or max(shape) >= 2**63:
        return False
    if not np.issubdtype(ind.dtype, np.integer) or not np.issubdtype(ptr.dtype, np.integer):
        return False  # (unsigned indices are fine while their values are in range)
    ptr, ind = [int(x) for x in ptr], [int(x) for x in ind]  # (exact: no unsigned wrap-around)
    if len(ptr) != shape[0] + 1 or ptr[0] != 0 or any(b < a for a, b in zip(ptr, ptr[1:])):
        return False
    if ptr[-1] != len(ind) or len(ind) != len(dat):
        return False
    return all(0 <= c < shape[1] for c in ind)


def inputs(rng):
    """A corrupted scipy container: refused with a clear error, or (when still valid) computed
    right."""
    shape = _shape(rng)
    v = _dense(rng, shape, rng.choice((np.float64, np.float32, np.int64)))
    m, shape, _ = _corrupt_csr(rng, sp.csr_array(v))
    try:
        m._shape = tuple(shape)
    except Exception:  # noqa: BLE001 -- scipy may refuse the attribute: keep its own
        pass
    valid = _reference_valid(m, tuple(shape))
    try:
        A = ls.asarray(m)
    except ALLOWED as e:
        if valid and "sorted" not in str(e) and "duplicate" not in str(e):
            raise Wrong(f"asarray refused a valid CSR: {e}") from e
        _names_operation(e, "asarray")
        return
    if not valid:
        raise Wrong("asarray accepted an invalid CSR")
    dense = sp.csr_array((m.data.astype(m.data.dtype.newbyteorder("=")), m.indices, m.indptr),
                         shape=shape).toarray()
    x = np.arange(1, shape[1] + 1, dtype=np.float64)
    with np.errstate(all="ignore"):
        check(A @ x, dense @ x, "A @ x")
        check((A * 2).sum(axis=0), (dense * 2).sum(axis=0), "(A * 2).sum(0)")


def _names_operation(e, *names):
    text = str(e)
    if not text or not any(n in text for n in names + ("invalid", "lazysparse")):
        raise Wrong(f"an error that names no operation: {type(e).__name__}: {text[:200]}")


def thread_counts(rng):
    """``set_num_threads`` with hostile counts: refused clearly, or every kernel stays right."""
    n = rng.choice((1, 2, 3, 8, 64, 257, 10**4, 10**6, 2**31, 2**63, 0, -1, 1.5, "2", None, True))
    try:
        ls.set_num_threads(n)
    except ALLOWED as e:
        _names_operation(e, "set_num_threads")
        return
    except Warning:
        return
    v = _dense(rng, (40, 30), np.float64)
    A = ls.asarray(sp.csr_array(v))
    x = np.linspace(0, 1, 30)
    check(A @ x, v @ x, f"A @ x on {n!r} threads")
    check((A + A).sum(axis=1), (v + v).sum(axis=1), f"(A + A).sum(1) on {n!r} threads")


def threads(rng):
    """Python threads calling kernels on fresh shared operands at once."""
    v = _dense(rng, (rng.choice((20, 60)), 50), rng.choice((np.float64, np.float32)))
    A = ls.asarray(sp.csr_array(v))
    x = np.linspace(-1, 1, 50).astype(v.dtype)
    errors = []

    def work():
        try:
            for _ in range(rng.choice((5, 40))):
                check(A @ x, v @ x, "A @ x in threads")
                check(A @ A.T, v @ v.T, "A @ A.T in threads")
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)
    ts = [threading.Thread(target=work) for _ in range(rng.choice((2, 4, 8)))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]


def cache_states(rng):
    """A private cache directory with a hostile file planted where an entry would be."""
    d = tempfile.mkdtemp(prefix="lazysparse-hostile-")
    os.environ["LAZYSPARSE_CACHE_DIR"] = d
    from lazysparse.runtime import kernel_cache as cache
    cache._reset_for_tests()
    v = _dense(rng, (9, 8), np.float64)
    A = ls.asarray(sp.csr_array(v))
    x = np.arange(8.0)
    check(A @ x, v @ x, "A @ x (first)")
    vdir = next(os.path.join(d, n) for n in os.listdir(d) if n.startswith("v"))
    names = sorted(os.listdir(vdir))
    target = os.path.join(vdir, rng.choice([n for n in names if not n.endswith(".lock")] or names))
    how = rng.choice(("fifo", "truncate", "garbage", "symlink", "chmod", "delete", "dir"))
    if os.path.isdir(target):
        return
    os.unlink(target)
    if how == "fifo":
        os.mkfifo(target)
    elif how == "truncate":
        open(target, "wb").close()
    elif how == "garbage":
        with open(target, "wb") as f:
            f.write(os.urandom(rng.choice((10, 4096))))
    elif how == "symlink":
        os.symlink("/etc/passwd", target)
    elif how == "chmod":
        with open(target, "wb") as f:
            f.write(b"{}")
        os.chmod(target, 0o666)
    elif how == "dir":
        os.mkdir(target)
    cache._reset_for_tests()  # a new process: nothing in memory
    check(A @ x, v @ x, f"A @ x with a {how} at {os.path.basename(target)}")
    ls.clear_cache(disk=rng.random() < 0.5)
    check(A @ x, v @ x, "A @ x after clear_cache")


def signals(rng):
    """SIGINT while kernels run: KeyboardInterrupt within a second or two, then still right."""
    n, k = rng.choice((200_000, 1_000_000, 2_000_000)), 8
    cols = (np.arange(n * k, dtype=np.int64) * 7919) % 64
    ptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    A = ls.asarray(sp.csr_array((np.ones(n * k), np.sort(cols.reshape(n, k), axis=1).ravel(), ptr),
                                shape=(n, 64)))
    X = np.ones((64, rng.choice((1, 16, 64))))
    if rng.random() < 0.3:  # one kernel of several seconds: a dense product
        A, X, k = ls.asarray(np.ones((1500, 1500))), np.ones((1500, 1500)), 1500
    delay = rng.choice((0.0, 0.05, 0.2, 0.5))
    # a process started in the background of a shell ignores SIGINT, and Python keeps that:
    # the case is about what happens when it is delivered
    signal.signal(signal.SIGINT, signal.default_int_handler)
    t0 = time.perf_counter()
    try:  # (the timer inside: with no delay the signal may come at once)
        threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()
        for _ in range(1000):
            (A @ X).materialize()
        time.sleep(delay + 5)
        raise Wrong("no KeyboardInterrupt")
    except KeyboardInterrupt:
        late = time.perf_counter() - t0 - delay
        if late > 2.0:
            raise Wrong(f"KeyboardInterrupt {late:.1f} s after SIGINT") from None
    check(A[:50] @ X, np.full((50, X.shape[1]), float(k)), "A @ X after an interrupt")


def work_budget(rng):
    """Expressions over a huge sparse operand whose dense iteration space would run for hours:
    computed in O(nnz), or refused with a clear error."""
    n = rng.choice((10**6, 10**7))
    rows = np.arange(0, n, n // 100)
    A = ls.asarray(sp.csr_array((np.ones(len(rows)), (rows, rows)), shape=(n, n)))
    expr = rng.choice((lambda a: (a + 1).sum(), lambda a: np.exp(a).sum(axis=0).sum(),
                       lambda a: (a - 1).max()))
    try:
        ls.compute(expr(A))  # in time: its value is the expression cases' business
    except ALLOWED as e:
        _names_operation(e, "sum", "max", "materialize", "compute")


FAMILIES = {"expressions": expressions, "inputs": inputs, "thread_counts": thread_counts,
            "threads": threads, "cache_states": cache_states, "signals": signals,
            "work_budget": work_budget}
WEIGHTS = {"expressions": 40, "inputs": 30, "thread_counts": 8, "threads": 6, "cache_states": 10,
           "signals": 3, "work_budget": 3}


def case_of(seed: int, index: int) -> tuple[str, int]:
    """The family and the random seed of case ``index``."""
    r = random.Random(seed * 1_000_003 + index)
    fam = r.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
    return fam, r.getrandbits(48)


def first_of_each(seed, k, families):
    """The first ``k`` case indices of each family (the suite's quick mode)."""
    out, seen, i = [], collections.Counter(), 0
    while any(seen[f] < k for f in families):
        fam = case_of(seed, i)[0]
        if fam in families and seen[fam] < k:
            out.append(i)
            seen[fam] += 1
        i += 1
    return out


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------

def _child(fam: str, case_seed: int, conn) -> None:
    status, detail = "ok", ""
    try:
        FAMILIES[fam](random.Random(case_seed))
    except Wrong as e:
        status, detail = "wrong", str(e)
    except ALLOWED as e:
        status, detail = "ok", f"{type(e).__name__}: {e}"[:200]
    except KeyboardInterrupt:
        status, detail = "error", "KeyboardInterrupt outside a signal case"
    except BaseException as e:  # noqa: BLE001 -- everything else is a defect to report
        status, detail = "error", "".join(traceback.format_exception_only(type(e), e))[-400:]
    try:
        conn.send((status, detail))
    finally:
        os._exit(0)


def run(cases, seed=0, jobs=2, timeout=TIMEOUT, only=None, families=None, quiet=False):
    """Run the cases (indices ``range(cases)``, or ``only``); returns {index: (family, status,
    detail)}."""
    ctx = mp.get_context("fork")
    todo = list(only if only is not None else range(cases))
    if families:
        todo = [i for i in todo if case_of(seed, i)[0] in families]
    results, running = {}, {}
    while todo or running:
        while todo and len(running) < jobs:
            i = todo.pop(0)
            fam, cs = case_of(seed, i)
            rd, wr = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_child, args=(fam, cs, wr), daemon=True)
            p.start()
            wr.close()
            running[rd] = (i, fam, p, time.monotonic())
        for rd in wait(list(running), timeout=0.5):
            i, fam, p, _ = running.pop(rd)
            try:
                status, detail = rd.recv()
            except (EOFError, OSError):
                p.join(5)
                sig = -p.exitcode if p.exitcode and p.exitcode < 0 else None
                status = "crash"
                detail = f"died of signal {sig}" if sig else f"exit status {p.exitcode}"
            p.join(5)
            results[i] = (fam, status, detail)
            if not quiet and len(results) % 250 == 0:
                print(f"... {len(results)} cases done", flush=True)
            if not quiet and status != "ok":
                print(f"case {i} ({fam}): {status}: {detail}", flush=True)
        now = time.monotonic()
        for rd, (i, fam, p, t0) in list(running.items()):
            if now - t0 > timeout:
                p.kill()
                p.join(5)
                running.pop(rd)
                results[i] = (fam, "hang", f"still running after {timeout:.0f} s")
                if not quiet:
                    print(f"case {i} ({fam}): hang", flush=True)
    return results


def summary(results) -> str:
    counts = collections.Counter((fam, status) for fam, status, _ in results.values())
    fams = sorted({f for f, _ in counts})
    statuses = ("ok", "wrong", "error", "crash", "hang")
    lines = ["| family | " + " | ".join(statuses) + " |", "|---|" + "---:|" * len(statuses)]
    for f in fams + ["all"]:
        row = [sum(c for (ff, s), c in counts.items() if s == st and (f == "all" or ff == f))
               for st in statuses]
        lines.append(f"| {f} | " + " | ".join(map(str, row)) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=TIMEOUT)
    ap.add_argument("--only", type=int, nargs="*")
    ap.add_argument("--families", nargs="*", choices=sorted(FAMILIES))
    ap.add_argument("--per-family", type=int, help="only the first N cases of each family")
    a = ap.parse_args(argv)
    if not os.environ.get("LAZYSPARSE_CACHE_DIR"):
        os.environ["LAZYSPARSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="lazysparse-hostile-cache-")
    t0 = time.monotonic()
    only = a.only
    if a.per_family:
        only = first_of_each(a.seed, a.per_family, a.families or list(FAMILIES))
    res = run(a.cases, a.seed, a.jobs, a.timeout, only, a.families)
    print(summary(res))
    print(f"{len(res)} cases in {time.monotonic() - t0:.0f} s (seed {a.seed})")
    return 0 if all(s == "ok" for _, s, _ in res.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
