"""Process-wide thread count for compiled kernels (``set_num_threads``, ``get_num_threads``). Kernels
read the value when they are launched (the executor passes it to the kernel /
``omp_set_num_threads``), so changing it never recompiles anything. The default is
``$LAZYSPARSE_NUM_THREADS`` when set, else 1: a default that silently changes results' summation
order (parallel reductions) should be opted into."""
from __future__ import annotations

import operator
import os
import threading
import warnings

__all__ = ["set_num_threads", "get_num_threads", "thread_cap"]

_lock = threading.Lock()


# Threads allowed per CPU, and at least this many whatever the CPU count: oversubscription a
# user may ask for on purpose (benchmarks, a container that reports fewer CPUs than it gets),
# far below counts that break kernels or the OpenMP runtime
_PER_CPU, _FLOOR = 4, 64


def _omp_thread_limit():
    """``OMP_THREAD_LIMIT`` as a positive int, or None (unset or not a positive integer: the
    OpenMP runtime ignores such a value too)."""
    raw = os.environ.get("OMP_THREAD_LIMIT", "").strip()
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value > 0 else None


def thread_cap() -> int:
    """The most threads kernels may use: ``max(4 * os.cpu_count(), 64)``, lowered to
    ``OMP_THREAD_LIMIT`` when that is set (OpenMP would not start more).

    Kernels size per-thread tables by the count (a stack array of eight counters a thread in the
    chunked loops) and OpenMP starts that many threads, so an absurd count
    (``set_num_threads(10**6)``) would overflow the stack and crash the process. Above the cap
    ``set_num_threads`` raises ``ValueError``, as ``numba.set_num_threads`` does above
    ``NUMBA_NUM_THREADS``; ``LAZYSPARSE_NUM_THREADS`` above it is clamped with a warning (an
    environment variable cannot raise at import).
    """
    cap = max(_PER_CPU * (os.cpu_count() or 1), _FLOOR)
    omp = _omp_thread_limit()
    return min(cap, omp) if omp is not None else cap


def _cap_text(cap: int) -> str:
    omp = _omp_thread_limit()
    if omp is not None and omp == cap:
        return f"{cap} (OMP_THREAD_LIMIT)"
    return f"{cap} ({_PER_CPU} per CPU of this machine's {os.cpu_count() or 1}, at least {_FLOOR})"


def _validate(n, who: str = "set_num_threads") -> int:
    if isinstance(n, bool):
        raise ValueError(f"{who}: the number of threads must be a positive integer, got {n!r}")
    try:
        value = operator.index(n)
    except TypeError:
        raise ValueError(f"{who}: the number of threads must be a positive integer, "
                         f"got {n!r} of type {type(n).__name__}") from None
    if value < 1:
        raise ValueError(f"{who}: the number of threads must be a positive integer, got {value}")
    return value


def _from_env() -> int:
    raw = os.environ.get("LAZYSPARSE_NUM_THREADS", "").strip()
    if not raw:
        return 1
    try:
        value = _validate(int(raw), "LAZYSPARSE_NUM_THREADS")
    except ValueError:
        warnings.warn(f"lazysparse: ignoring LAZYSPARSE_NUM_THREADS={raw!r} (not a positive "
                      f"integer); using 1 thread", RuntimeWarning, stacklevel=2)
        return 1
    cap = thread_cap()
    if value > cap:
        warnings.warn(f"lazysparse: LAZYSPARSE_NUM_THREADS={value} is more than the cap of "
                      f"{_cap_text(cap)}; using {cap} threads", RuntimeWarning, stacklevel=2)
        return cap
    return value


_num_threads = _from_env()

# A child forked from a process whose kernels had more than one thread runs them on one. GNU
# libgomp keeps its thread pool's bookkeeping across fork() but not the threads, so the child's
# first parallel region waits forever for workers that do not exist (a multiprocessing pool
# under the "fork" start method, Linux's default, hung). Whether the parent's pool started is
# not known here; a thread count above one at any time before the fork stands for it.
_ever_multi = _num_threads > 1
_forked = False  # this process is such a child: kernels stay on one thread
_FORK_HELP = ("set_num_threads({}): this process was forked from one whose kernels ran on "
              "several threads, and the OpenMP runtime cannot start threads again after fork(); "
              "kernels here run on one thread. Start worker processes with the 'spawn' or "
              "'forkserver' method (multiprocessing.get_context('spawn')) to use threads in them.")


def _after_fork_in_child() -> None:
    global _num_threads, _forked, _lock
    _lock = threading.Lock()  # (another thread may have held it at the fork)
    if _ever_multi:
        _forked = True
        _num_threads = 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _par_min_from_env() -> int:
    raw = os.environ.get("LAZYSPARSE_PAR_MIN_WORK", "").strip()
    try:
        return max(0, int(raw)) if raw else 1 << 14
    except ValueError:
        return 1 << 14


# The autoscheduler's thread decision (compiler/lower/teams.py, ``team_size``): a parallel loop whose
# work estimate is under this many innermost iterations runs on one thread. Kernels read it at
# each call (a d[] slot), so it is not compiled in: the test suite sets
# LAZYSPARSE_PAR_MIN_WORK=0, which puts every parallel loop of its small inputs on threads.
PAR_MIN_WORK = [_par_min_from_env()]


def set_num_threads(n: int) -> None:
    """Set the number of threads compiled kernels may use (a positive int, at most
    ``thread_cap()``; ``ValueError`` above it), process-wide."""
    global _num_threads, _ever_multi
    value = _validate(n)
    cap = thread_cap()
    if value > cap:
        raise ValueError(f"set_num_threads({value}): at most {_cap_text(cap)} threads are allowed; "
                         f"ask for at most {cap} (get_num_threads() stays {_num_threads})")
    if value > 1 and _forked:
        warnings.warn(_FORK_HELP.format(value), RuntimeWarning, stacklevel=2)
        value = 1
    with _lock:
        _num_threads = value
        _ever_multi = _ever_multi or value > 1


def get_num_threads() -> int:
    """The number of threads compiled kernels may use."""
    return _num_threads


def _reset_for_tests() -> None:
    global _num_threads, _ever_multi
    with _lock:
        _num_threads = 1 if _forked else _from_env()
        _ever_multi = _ever_multi or _num_threads > 1
