"""Saying what is happening: the ``lazysparse`` logger (plan, lower, compile and run times at
DEBUG) and a progress line on a terminal for work that runs over about two seconds. Silence the progress line with ``LAZYSPARSE_PROGRESS=0``; see the times with
``logging.basicConfig(level=logging.DEBUG)`` or ``logging.getLogger("lazysparse").setLevel(...)``."""
from __future__ import annotations

import logging
import os
import sys
import time
from contextlib import contextmanager

LOG = logging.getLogger("lazysparse")
PROGRESS_AFTER = 2.0  # seconds of work before a progress line appears


@contextmanager
def timed(what: str):
    """Log ``what`` and its wall time at DEBUG (the clock is read only when DEBUG is on)."""
    if not LOG.isEnabledFor(logging.DEBUG):
        yield
        return
    t = time.perf_counter()
    yield
    LOG.debug("%s: %.2f ms", what, (time.perf_counter() - t) * 1e3)


class Progress:
    """A ``\\r`` line on stderr for a loop of ``total`` steps, shown once the loop has run
    ``PROGRESS_AFTER`` seconds, and only on a terminal (never in a log file or a pipe)."""

    def __init__(self, what: str, total: int):
        self.what, self.total = what, total
        self.start = time.perf_counter()
        self.shown = False
        self.on = total > 1 and os.environ.get("LAZYSPARSE_PROGRESS", "1") != "0"

    def step(self, k: int) -> None:
        if not self.on:
            return
        t = time.perf_counter() - self.start
        if t < PROGRESS_AFTER:
            return
        stream = sys.stderr
        if not getattr(stream, "isatty", lambda: False)():
            self.on = False
            return
        stream.write(f"\rlazysparse: {self.what} {k}/{self.total} ({t:.0f} s)")
        stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
        LOG.debug("%s: %d in %.2f ms", self.what, self.total, (time.perf_counter() - self.start) * 1e3)
