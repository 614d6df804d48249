"""``ls.opcount``: run a DAG with instrumented builds of its kernels and add up their counters.
``session()`` turns counting on for the calling thread, swapping every kernel the computation runs
for its instrumented twin (the same lowering with ``count=True``, compiler/lower/counting.py)."""
from __future__ import annotations

import threading
from contextlib import contextmanager


ON = [0]           # open sessions in any thread: compiler/statement.py skips bound plans while > 0
_LOCAL = threading.local()
_SESSION = threading.Lock()
_BUILD = threading.Lock()

# (made and read only by the thread holding _SESSION: only its calls count, so no lock of their own)
_FFI = []          # the cffi interface of counting kernels, made on first use (import cost)
_COUNTERS = {}     # kernel key -> (library, counter pointer)


def _ffi():
    if not _FFI:
        import cffi
        f = cffi.FFI()
        f.cdef("int64_t *ls_counters(void);")
        _FFI.append(f)
    return _FFI[0]


class Tally:
    def __init__(self):
        self.ops = [0, 0, 0, 0]
        self.temp = 0
        self.loads = {}    # id(storage) -> element loads
        self.kernels = 0
        self.keep = []     # storages credited (alive until the result is read)

    def add(self, counts, slot_storage):
        """``counts``: the kernel's counters; ``slot_storage(k)``: the storage in slot k or None."""
        from lazysparse.compiler.lower import counting as K  # (the counters' layout; loaded with the lowerer)
        for k in range(4):
            self.ops[k] += counts[k]
        self.temp += counts[K.TEMP]
        for k in range(K.N_COUNTERS - K.FIRST_SLOT):
            n = counts[K.FIRST_SLOT + k]
            if n:
                st = slot_storage(k)
                self.keep.append(st)
                self.loads[id(st)] = self.loads.get(id(st), 0) + n
        self.kernels += 1


def tally():
    """This thread's open tally, or None."""
    return getattr(_LOCAL, "tally", None) if ON[0] else None


@contextmanager
def session():
    """Every kernel the computation runs is swapped for its instrumented twin, whose counters are zeroed
    before and read after each call; operand-slot loads are credited to the storage in that slot.
    Bound plans are skipped while anyone counts (``ON``), so every call reaches the point where the
    kernel is picked. Sessions are serialised: a counting kernel's counters are process-global.
    """
    with _SESSION:
        t = Tally()
        _LOCAL.tally = t
        ON[0] += 1
        try:
            yield t
        finally:
            ON[0] -= 1
            _LOCAL.tally = None


def _counters(kernel):
    hit = _COUNTERS.get(kernel.key)
    if hit is None:
        from lazysparse.runtime.kernel_cache import DLOPEN_FLAGS  # (never unmapped: see there)
        lib = _ffi().dlopen(kernel.path, DLOPEN_FLAGS)
        hit = _COUNTERS[kernel.key] = (lib, lib.ls_counters())
    return hit[1]


def run(kernel, fn, slot_storage, t):
    """Zero ``kernel``'s counters, ``fn()``, credit the counts to ``t``; returns ``fn()``."""
    from lazysparse.compiler.lower import counting as K
    ptr, ffi = _counters(kernel), _ffi()
    ffi.memmove(ptr, bytes(8 * K.N_COUNTERS), 8 * K.N_COUNTERS)
    out = fn()
    t.add(ffi.unpack(ptr, K.N_COUNTERS), slot_storage)
    return out


def call_runner(runner, storages, out_shape, name, t):
    """``runner.call`` through its instrumented twin."""
    twin = runner.counting
    if twin is None:
        with _BUILD:
            twin = runner.counting
            if twin is None:
                from lazysparse.compiler.runner import Runner
                twin = runner.counting = Runner(runner.spec, count=True)
    return run(twin.kernel, lambda: twin.call(storages, out_shape, name),
               lambda k: storages[k], t)
