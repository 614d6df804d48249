"""Ctrl-C during a long kernel (runtime/interrupt.py): ``KeyboardInterrupt`` within about a
second of SIGINT, whatever the kernel's length, and everything right afterwards."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from lazysparse.runtime import interrupt as INT

LONG = r"""
import gc, os, signal, sys, threading, time
import numpy as np, scipy.sparse as sp, lazysparse as ls
signal.signal(signal.SIGINT, signal.default_int_handler)
kind, n = sys.argv[1], int(sys.argv[2])
if kind == "dense":       # one single-operation kernel: a dense product
    D, E = ls.asarray(np.ones((n, n))), np.ones((n, n))
    expr = lambda: D @ E
else:                     # one fused kernel: SDDMM, K = 512, 40 entries a row
    rows = np.repeat(np.arange(n), 40)
    cols = (rows * 7919 + np.tile(np.arange(40), n) * 104729) % n
    A = ls.asarray(sp.csr_array((np.ones(n * 40), (rows, cols)), shape=(n, n)))
    U, V = ls.asarray(np.ones((n, 512))), ls.asarray(np.ones((n, 512)))
    expr = lambda: A * (U @ V.T)
late = []
for attempt in range(2):        # the first call, then a warm one (its plan bound, kernel loaded)
    t0 = [0.0]
    def fire():
        t0[0] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)
    threading.Timer(0.5, fire).start()
    try:
        expr().materialize()
        print("finished")
    except KeyboardInterrupt:
        late.append(time.perf_counter() - t0[0])
    gc.collect()
    junk = [np.full(10**5, 7.0) for _ in range(50)]  # reuse freed memory while the kernel runs
    del junk
x = np.arange(1.0, 7.0)
S = sp.random_array((5, 6), density=0.5, format="csr", random_state=0)
assert np.allclose(np.asarray((ls.asarray(S) @ x).materialize()), S @ x)
print("late", *["%.3f" % t for t in late])
"""


def _run(code, *args, timeout=300):
    env = {k: v for k, v in os.environ.items() if k != "LAZYSPARSE_NUM_THREADS"}
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("kind, n", [("dense", 2000), ("sddmm", 100_000)])
def test_sigint_stops_a_long_kernel_within_a_second(kind, n):
    # seconds of one kernel on one thread, first called and then warm
    r = _run(LONG, kind, n)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    late = r.stdout.split("late")[-1].split()
    assert len(late) == 2 and all(float(t) < 1.0 for t in late), r.stdout


def _where(names, rc=0):
    import threading

    def fn(p, d):
        names.append(threading.current_thread().name)
        return rc
    return fn


def test_large_work_runs_off_the_main_thread():
    g, names = INT.Gate(), []
    fn = _where(names)
    assert g.run(fn, None, None, INT.SMALL, ()) == 0
    assert g.run(fn, None, None, INT.BIG, ()) == 0
    assert names == [__import__("threading").main_thread().name, "lazysparse-kernel"]


def test_a_kernel_dearer_than_its_work_says_runs_off_the_main_thread(monkeypatch):
    """The time per unit of work of the last call predicts the next: a call predicted to take
    LONG_S or more is handed off, and one predicted short runs where it is called."""
    g, names = INT.Gate(), []
    t = iter([0.0, INT.LONG_S, 10.0, 10.0 + INT.LONG_S / 4, 20.0, 20.0])
    monkeypatch.setattr(INT, "clock", lambda: next(t))
    fn = _where(names, 3)
    assert g.run(fn, None, None, INT.SMALL, ()) == 3  # took LONG_S for SMALL units
    assert g.run(fn, None, None, INT.SMALL, ()) == 3  # predicted LONG_S: handed off (took 1/4)
    assert g.run(fn, None, None, INT.SMALL, ()) == 3  # predicted LONG_S / 4: here
    main = __import__("threading").main_thread().name
    assert names == [main, "lazysparse-kernel", main]


def test_off_main_holds_what_the_kernel_uses(monkeypatch):
    """The caller interrupted and gone, the kernel still holds its buffers until it ends."""
    import gc
    import threading
    import weakref

    class Interrupted(threading.Event):
        def wait(self, timeout=None):  # the caller's wait: Ctrl-C at once
            if threading.current_thread() is threading.main_thread():
                raise KeyboardInterrupt
            return super().wait(timeout)
    monkeypatch.setattr(INT, "_Event", Interrupted)

    class Buf:
        pass
    b = Buf()
    ref = weakref.ref(b)
    go, seen = threading.Event(), []

    def fn(p, d):
        go.wait(5)
        gc.collect()
        seen.append(ref() is not None)
        return 0
    with pytest.raises(KeyboardInterrupt):
        INT.off_main(fn, None, None, (b,))
    del b
    gc.collect()
    go.set()
    for t in threading.enumerate():
        if t.name == "lazysparse-kernel":
            t.join(10)
    assert seen == [True]
