"""The memory guard: no dense result or intermediate larger than ``LAZYSPARSE_MEMORY_LIMIT``. A lazy
expression can ask for a dense array far larger than the machine (``A @ B.T`` of two tall sparse
matrices inferred dense, ``U @ V.T`` before fusion); allocating it would swap the machine to a
halt or get the process killed, so the planner checks every dense result against ``limit()``
before the kernel allocates it (``check_dense``) and raises ``MemoryError`` naming the
operation."""
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


def _read_int(path):
    """The integer a one-line cgroup file holds; None when absent, unreadable, ``max`` or not a
    number."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    try:
        return int(text)
    except ValueError:  # "max" (no limit), or anything unexpected
        return None


# cgroup v1 writes "no limit" as the largest page-aligned counter (9223372036854771712 with 4K
# pages): anything this large is no limit
_V1_UNLIMITED = 1 << 60


def _own_groups(proc):
    """The process's cgroup paths from ``proc`` (``/proc/self/cgroup``): ``(v2 path or None, v1
    memory path or None)``, each relative to its hierarchy's root."""
    v2 = v1 = None
    try:
        with open(proc) as f:
            lines = f.read().splitlines()
    except OSError:
        return None, None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        elif "memory" in parts[1].split(","):
            v1 = parts[2]
    return v2, v1


def _up(root, rel):
    """``root/rel`` and each directory above it up to ``root`` (a limit on any of them bounds
    the process); a group the mount does not show (a container sees its own group as the root)
    is skipped by the caller, its files being absent."""
    parts = [p for p in (rel or "").split("/") if p and p != ".."]
    return [os.path.join(root, *parts[:k]) for k in range(len(parts), -1, -1)]


def _cgroup_room(root="/sys/fs/cgroup", proc="/proc/self/cgroup"):
    """Bytes the process's control groups still let it allocate (the least over its groups,
    cgroup v2 then v1), or None when no limit is found."""
    v2, v1 = _own_groups(proc)
    rooms = []
    for d in _up(root, v2):
        lim = _read_int(os.path.join(d, "memory.max"))
        if lim is not None:
            rooms.append(lim - (_read_int(os.path.join(d, "memory.current")) or 0))
    if not rooms:  # cgroup v1 (or a hybrid host whose memory controller is on v1)
        for d in _up(os.path.join(root, "memory"), v1):
            lim = _read_int(os.path.join(d, "memory.limit_in_bytes"))
            if lim is not None and lim < _V1_UNLIMITED:
                rooms.append(lim - (_read_int(os.path.join(d, "memory.usage_in_bytes")) or 0))
    return max(0, min(rooms)) if rooms else None


def _mapped(status="/proc/self/status"):
    """Bytes of address space the process has mapped (``VmSize``), or None."""
    try:
        with open(status) as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _rlimit_room():
    """Bytes of address space ``RLIMIT_AS`` still allows (its soft limit less what is mapped),
    or None when there is no such limit."""
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError, AttributeError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    return max(0, soft - (_mapped() or 0))


def _default():
    """``(limit, where it came from)``: 3/4 of the least of the bounds below.

    The bounds: the memory this process can still get from

    * the machine: ``MemAvailable`` on Linux, else physical memory;
    * its address-space limit: ``RLIMIT_AS`` (``ulimit -v``) less the address space already mapped;
    * its control group (a container's memory limit): cgroup v2 ``memory.max`` less
      ``memory.current``, cgroup v1 ``memory.limit_in_bytes`` less ``memory.usage_in_bytes``, for
      the process's own group and every group above it.

    Either of the last two is far below the machine's memory in a container or a batch job; an
    allocation past them fails however much the machine has (or gets the process killed by the
    kernel's OOM killer), so the guard must refuse first. Every reading is optional: an absent or
    unreadable file, ``max`` or an unlimited value leaves that bound out. The 3/4: the limit is for
    one array, and the process still needs room for its operands and temporaries.
    """
    bounds = [(_available(), "the memory available")]
    for room, what in ((_rlimit_room(), "the address space left under RLIMIT_AS"),
                       (_cgroup_room(), "the memory left under the cgroup's limit")):
        if room is not None:
            bounds.append((room, what))
    room, what = min(bounds, key=lambda b: b[0])
    return room * 3 // 4, what


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
    per process.

    ``LAZYSPARSE_MEMORY_LIMIT``: bytes, optionally with a K/M/G/T suffix (powers of 1024), e.g.
    ``8G``; ``0`` or ``none`` turns the guard off; unset, ``_default()``.
    """
    raw = _RAW.get(_RAW_KEY) if _RAW_KEY is not None else None
    text = _env_text(raw)
    if text is not None and text.strip():
        hit = _cached.get(text)
        if hit is None:
            hit = _cached[text] = (parse_limit(text),)
        lim = hit[0]
    else:
        if "default" not in _cached:
            _cached["default"], _cached["default from"] = _default()
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
            f"the memory limit of {_human(lim)} ({_source()}); ask for a sparse result instead, e.g. "
            "materialize(format='csr') or format='coo', or raise the limit")


def _source() -> str:
    """Where the limit in force came from, for messages."""
    text = _env_text(_RAW.get(_RAW_KEY)) if _RAW_KEY is not None else os.environ.get(_ENV)
    if (text is None or not text.strip()) and "default from" in _cached:
        return f"{_ENV} unset: 3/4 of {_cached['default from']}"
    return _ENV


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
