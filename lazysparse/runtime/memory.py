"""The memory guard: no dense result or intermediate larger than ``LAZYSPARSE_MEMORY_LIMIT``.

A lazy expression can ask for a dense array far larger than the machine (``A @ B.T`` of two tall
sparse matrices inferred dense, ``U @ V.T`` before fusion). Allocating it would swap the machine
to a halt or get the process killed; instead the planner checks every dense result against the
limit before the kernel allocates it and raises ``MemoryError`` naming the operation.

``LAZYSPARSE_MEMORY_LIMIT``: bytes, optionally with a K/M/G/T suffix (powers of 1024), e.g.
``8G``; ``0`` or ``none`` turns the guard off. Default: 3/4 of the memory available when first
checked (``MemAvailable`` on Linux, else physical memory).
"""
from __future__ import annotations

import os
import re

_ENV = "LAZYSPARSE_MEMORY_LIMIT"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_cached = {}


def parse_limit(text: str):
    """Bytes from ``"8G"``-style text; None for ``0``/``none`` (no limit). ValueError otherwise."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    if t in ("0", "NONE", "OFF"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)", t)
    if not m:
        raise ValueError(f"{_ENV}={text!r}: expected a number of bytes with an optional K/M/G/T "
                         "suffix (e.g. 8G), or 0/none for no limit")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def _available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


# os.environ.get raises and catches a KeyError when the variable is unset, which costs ~20 µs
# right after a kernel has evicted the interpreter from cache (every warm call of a large dense
# result checks the limit); the mapping behind os.environ is a plain dict on POSIX
_RAW = getattr(os.environ, "_data", None)
_RAW_KEY = os.environ.encodekey(_ENV) if _RAW is not None and hasattr(os.environ, "encodekey") else None
# the raw environment value last read and the limit it gave: the warm path (execute._bind)
# compares the raw value by identity, with no call (os.environ keeps the same object while the
# variable is not set again; setting it, even to the same text, stores a new one)
LAST = [(object(), None)]
RAW_GET = _RAW.get if _RAW_KEY is not None else None


def _env_text(raw):
    if _RAW_KEY is not None:
        return None if raw is None else os.environ.decodevalue(raw)
    return os.environ.get(_ENV)


def limit():
    """The limit in bytes, or None. The environment is read on every call, the default once
    per process."""
    raw = _RAW.get(_RAW_KEY) if _RAW_KEY is not None else None
    text = _env_text(raw)
    if text is not None and text.strip():
        hit = _cached.get(text)
        if hit is None:
            hit = _cached[text] = (parse_limit(text),)
        lim = hit[0]
    else:
        if "default" not in _cached:
            _cached["default"] = _available() * 3 // 4
        lim = _cached["default"]
    if _RAW_KEY is not None:
        LAST[0] = (raw, lim)
    return lim


def check_dense(nbytes: int, shape, what, name: str):
    """Raise ``MemoryError`` when a dense array of ``nbytes`` would exceed the limit. ``what``
    describes the array; a callable is only called to write the message (the warm path checks
    every large dense result, and describing it costs more than the check)."""
    lim = limit()
    if lim is not None and nbytes > lim:
        if callable(what):
            what = what()
        raise MemoryError(
            f"{name}: {what} would be a dense array of shape {tuple(shape)} ({_human(nbytes)}), over "
            f"the memory limit of {_human(lim)} ({_ENV}); ask for a sparse result instead, e.g. "
            "materialize(format='csr') or format='coo', or raise the limit")


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
