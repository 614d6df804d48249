"""The fused-kernel benchmark's measurement of one case: the oracle, a checked trial call per
column (lazysparse's in a forked child killed past the budget), then interleaved timing; and the
machine's own two-thread scaling, the yardstick of the scaling target."""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
import time

from lazysparse.bench.checks import check
from lazysparse.bench.fusion_report import ratios
from lazysparse.bench.timing import measure_back_to_back, measure_interleaved


# ---------------------------------------------------------------------------------------------
# trial calls

def _send(fd, obj):
    b = pickle.dumps(obj)
    os.write(fd, struct.pack("<I", len(b)) + b)


def _recv(fd, deadline):
    """One message from ``fd`` before ``deadline`` (monotonic); None at EOF, "timeout" past it."""
    buf = b""
    need = 4
    length = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return "timeout"
        chunk = os.read(fd, max(1, need - len(buf)))
        if not chunk:
            return None
        buf += chunk
        if length is None and len(buf) >= 4:
            length = struct.unpack("<I", buf[:4])[0]
            buf, need = buf[4:], length
        if length is not None and len(buf) >= length:
            return pickle.loads(buf[:length])


def trial_isolated(fn, expected, budget):
    """Call ``fn`` once in a forked child; kill it after ``budget`` seconds. The child checks the
    result against ``expected`` (the oracle, inherited) and reports {first_ms, check} or {error}."""
    if not hasattr(os, "fork"):  # pragma: no cover - not POSIX
        return trial_inprocess(fn, expected, budget, retry=False)
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            try:
                t0 = time.perf_counter()
                res = fn()
                ms = (time.perf_counter() - t0) * 1e3
            except BaseException as e:
                _send(w, {"error": f"{type(e).__name__}: {e}"[:300]})
            else:
                _send(w, {"first_ms": ms})
                try:
                    ok = check(res, expected)
                    _send(w, {"check": "ok" if ok else "WRONG"})
                except BaseException as e:
                    _send(w, {"check": "WRONG", "error": f"result not comparable: {type(e).__name__}: {e}"[:300]})
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    try:
        msg = _recv(r, time.monotonic() + budget)
        if msg == "timeout":
            os.kill(pid, signal.SIGKILL)
            return {"error": f"trial call ran past the budget ({budget:g} s): killed"}
        if msg is None:
            return {"error": "trial process died: " + _wait_status(pid)}
        if "error" in msg:
            return msg
        msg2 = _recv(r, time.monotonic() + max(60.0, 4 * budget))
        if msg2 == "timeout":
            os.kill(pid, signal.SIGKILL)
            return {**msg, "check": None, "error": "checking the result took too long"}
        if msg2 is None:
            return {**msg, "error": "trial process died while checking: " + _wait_status(pid)}
        return {**msg, **msg2}
    finally:
        os.close(r)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def _wait_status(pid):
    try:
        _, st = os.waitpid(pid, 0)
    except ChildProcessError:
        return "(status lost)"
    if os.WIFSIGNALED(st):
        sig = os.WTERMSIG(st)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"killed by {name}"
    return f"exit status {os.WEXITSTATUS(st)}"


def trial_inprocess(fn, expected, budget, retry=True):
    """Call ``fn`` once here; past the budget it is dropped (after one more try when ``retry``:
    the first call of a kernel may have compiled it). Checks the result against ``expected``."""
    try:
        t0 = time.perf_counter()
        res = fn()
        s = time.perf_counter() - t0
        first = s
        if s > budget and retry:
            del res
            t0 = time.perf_counter()
            res = fn()
            s = time.perf_counter() - t0
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"error": f"{type(e).__name__}: {e}"[:300]}
    if s > budget:
        return {"first_ms": first * 1e3, "error": f"trial call took {s:.1f} s > budget {budget:g} s"}
    try:
        ok = check(res, expected)
    except Exception as e:
        return {"first_ms": first * 1e3, "check": "WRONG",
                "error": f"result not comparable: {type(e).__name__}: {e}"[:300]}
    return {"first_ms": first * 1e3, "check": "ok" if ok else "WRONG"}


# ---------------------------------------------------------------------------------------------
# running one case

_TRIED = set()   # (peer, kernel, parameters) whose first call has been made in this process


def run_fusion_case(case, variants, peers, repeat, budget, scaling=False):
    """Oracle, trial calls, interleaved timing. Returns the case's row (a dict)."""
    import lazysparse as ls
    row = dict(kernel=case.kernel, param=case.param, input=case.item.name, kind=case.item.kind,
               shape=list(case.item.shape), nnz=int(case.item.nnz), cols={})
    t0 = time.perf_counter()
    expected = case.oracle()
    row["oracle_ms"] = (time.perf_counter() - t0) * 1e3
    fns = {}
    threads = ls.get_num_threads()
    # forked trials only at one thread: a child forked after the parent ran an OpenMP team hangs
    # in its first parallel region (libgomp is not fork-safe), so multi-threaded calls try in-process
    isolate = threads == 1
    cols = [(v, case.lazy(v), isolate) for v in variants]
    if scaling and "auto" in variants:
        auto = case.lazy("auto")

        def auto2():
            ls.set_num_threads(2)
            try:
                return auto()
            finally:
                ls.set_num_threads(threads)
        cols.append(("auto@2", auto2, False))
    for p in peers:
        if p in case.skip:
            row["cols"][p] = {"skipped": case.skip[p]}
        elif p in case.peers:
            cols.append((p, case.peers[p], False))
        else:
            row["cols"][p] = {"skipped": "cannot express this kernel"}
    for name, fn, isolate in cols:
        if isolate:
            res = trial_isolated(fn, expected, budget)
        else:  # a second try past the budget only for the first call of this kernel (compiles)
            key = (name, case.kernel, case.label)
            res = trial_inprocess(fn, expected, budget, retry=key not in _TRIED)
            _TRIED.add(key)
        row["cols"][name] = res
        if "error" not in res and res.get("check") == "ok":
            fns[name] = fn
    del expected
    if "auto@2" in fns and "auto" in fns:
        steady = measure_back_to_back({k: fns[k] for k in ("auto", "auto@2")}, repeat, budget)
        row["back_to_back"] = {k: v.get("median_ms") for k, v in steady.items()}
    for name, res in measure_interleaved(fns, repeat, budget).items():
        col = row["cols"][name]
        if "error" in res:
            col["error"] = "timing: " + res["error"]
        else:
            col["median_ms"] = res["median_ms"]
            warm = res.get("first_ms")
            if warm is not None:  # measure_interleaved's untimed warm-up; it cuts rounds by it
                col["warmup_ms"] = warm
                s = warm / 1e3
                col["rounds"] = repeat if s * repeat <= budget else max(1, int(budget / max(s, 1e-9)))
    ratios(row, peers)
    return row


def machine_scaling(repeat, budget):
    """Two threads over one for two plain lazysparse kernels with dense results (parallel outer
    loops), in this process and in interleaved rounds: a memory-bound triad over 3 x 64 MiB
    (its result is a new array each call, as every lazysparse result is: first-touch page
    faults included) and a compute-bound dense product (32768 x 128 by 128 x 16). The
    two-thread criterion reads against them: a shared VM may not scale even these."""
    import numpy as np

    import lazysparse as ls
    rng = np.random.default_rng(0)
    a, b = (ls.asarray(rng.random(1 << 23)) for _ in range(2))
    X, W = ls.asarray(rng.random((1 << 15, 128))), ls.asarray(rng.random((128, 16)))

    def at(n, f):
        def run():
            ls.set_num_threads(n)
            try:
                return f()
            finally:
                ls.set_num_threads(1)
        return run
    probes = {"triad": lambda: (a + 2.0 * b).materialize(), "product": lambda: (X @ W).materialize()}
    fns = {f"{k}@{n}": at(n, f) for k, f in probes.items() for n in (1, 2)}
    out = {}
    for how, measure in (("", measure_interleaved), ("_back_to_back", measure_back_to_back)):
        res = measure(fns, repeat, budget)
        for k in probes:
            one, two = res[f"{k}@1"].get("median_ms"), res[f"{k}@2"].get("median_ms")
            out[k + how] = one / two if one and two else None
    return out

