"""Ctrl-C during a long kernel: the kernel runs on a worker thread while the caller waits. Python
runs its signal handlers in the main thread, between bytecodes, and a kernel is one call into C,
so a SIGINT raised during a kernel would take effect only when the kernel ended; a kernel that may
be long (``Gate``) is therefore run on a thread of its own (``off_main``; cffi releases the GIL
for the call) while the calling thread waits in short timed waits, where ``KeyboardInterrupt`` is
raised at once."""
from __future__ import annotations

import threading
import time

BIG = 1 << 22     # stored values of the operands (and points of a walk over zeros) from which a
                  # call runs off the main thread
SMALL = 1 << 15   # under this many, a call is neither timed nor handed off
LONG_S = 0.05     # a kernel that took this long runs off the main thread from then on
WAIT_S = 0.1      # the caller's wait between checks for a signal
clock = time.perf_counter
_Event = threading.Event


def off_main(fn, p, d, keep):
    """``fn(p, d)`` on a worker thread; returns its status. ``keep``: everything the kernel
    reads or writes (held by the worker until the kernel ends, even when the caller has gone).

    What an interrupted kernel leaves behind is consistent: it keeps running to its end on its
    thread, holding every buffer it writes (the argument arrays, the result buffer, the operands), so
    nothing it touches is freed under it; its result is dropped (a sparse result's buffers, which the
    kernel allocates, are freed with it), and nothing was cached from it (a plan, a kernel and a
    tuning state are all made before the call). The thread is a daemon: the process may exit while
    it runs.
    """
    out = []
    done = _Event()

    def work(keep=keep):
        try:
            out.append(fn(p, d))
        finally:
            done.set()

    threading.Thread(target=work, name="lazysparse-kernel", daemon=True).start()
    while not done.wait(WAIT_S):
        pass
    return out[0] if out else -1


class Gate:
    """Per kernel: whether a call of ``size`` units of work runs off the main thread, from the
    seconds per unit its last timed call took.

    The handoff costs tens of microseconds, so only long calls are handed off. A call is taken as
    long when its work (the kernels' own estimate, as the glue computes it) reaches ``BIG`` (millions
    of steps: milliseconds at least), or when the kernel's last measured time per unit of work, times
    this call's work, reaches ``LONG_S`` (a kernel whose steps are dearer than its estimate says: a
    product of two sparse matrices with dense rows). Calls under ``SMALL`` units are neither timed nor
    handed off.
    """

    __slots__ = ("rate",)

    def __init__(self):
        self.rate = 0.0

    def bind(self, fn, size, keep):
        """``fn`` as a function of ``(p, d)`` that runs through this gate."""
        return lambda p, d: self.run(fn, p, d, size, keep)

    def run(self, fn, p, d, size, keep):
        """The kernel call for ``size`` units of work: its status. The glue calls it for
        ``SMALL`` units or more only."""
        t0 = clock()
        if size >= BIG or size * self.rate >= LONG_S:
            rc = off_main(fn, p, d, keep)
        else:
            rc = fn(p, d)
        self.rate = (clock() - t0) / max(size, 1)
        return rc
