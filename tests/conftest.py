"""Shared test configuration.

* A session-wide temporary ``LAZYSPARSE_CACHE_DIR`` so that test runs never touch ``~/.cache``. It is
  set at import time of this conftest, i.e. before any test module imports lazysparse. A cache dir
  given explicitly in the environment is respected (useful to keep compiled kernels between runs).
* ``LAZYSPARSE_POISON=1``: dense results that a kernel is trusted to overwrite start as garbage.
* ``LAZYSPARSE_PAR_MIN_WORK=0``: parallel loops of small inputs run on threads too.
* A hypothesis profile ``lazysparse`` (the default): no deadline (the first example of a new kernel
  compiles C), ``too_slow`` health check suppressed. Tests set their own ``max_examples``;
  ``LAZYSPARSE_HYPOTHESIS_SCALE=4`` multiplies them (see test_ops_oracle.py).
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

if not os.environ.get("LAZYSPARSE_CACHE_DIR"):
    _CACHE_DIR = tempfile.mkdtemp(prefix="lazysparse-test-cache-")
    os.environ["LAZYSPARSE_CACHE_DIR"] = _CACHE_DIR
    atexit.register(shutil.rmtree, _CACHE_DIR, ignore_errors=True)

# results a kernel claims to overwrite entirely start as garbage, not zeros (compiler/runner.py)
os.environ.setdefault("LAZYSPARSE_POISON", "1")
# every parallel loop runs on the threads asked for, however small its work: the suite's inputs
# are small, and the autoscheduler would put them on one thread (runtime/threads.py; the
# threshold's own tests set it back)
os.environ.setdefault("LAZYSPARSE_PAR_MIN_WORK", "0")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "lazysparse",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("LAZYSPARSE_HYPOTHESIS_PROFILE", "lazysparse"))


def _in_threads(work, n, together=False):
    """Run ``work(i)`` in ``n`` threads at once; returns the exceptions they raised.
    ``together``: the threads wait at a barrier, so that their first calls overlap."""
    import threading
    errors = []
    start = threading.Barrier(n) if together else None

    def guarded(i):
        try:
            if start is not None:
                start.wait()
            work(i)
        except BaseException as e:  # reported to the test
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _calls_at_once(call, check, rounds=20, n=3):
    """``check(call())`` ``rounds`` times in each of ``n`` Python threads at once, the kernels on
    two OpenMP threads (compiled by a first call before the threads start); returns what the
    threads raised."""
    import lazysparse as ls
    ls.set_num_threads(2)
    try:
        check(call())
        return _in_threads(lambda _: [check(call()) for _ in range(rounds)], n)
    finally:
        ls.set_num_threads(1)


@pytest.fixture
def calls_at_once():
    """``calls_at_once(call, check)``: one kernel called from several Python threads at once."""
    return _calls_at_once


@pytest.fixture
def in_threads():
    """``in_threads(work, n)``: run ``work(0..n-1)`` concurrently, return what they raised."""
    return _in_threads
