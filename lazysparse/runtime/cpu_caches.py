"""What the machine's caches hold, for the kernels' run-time choices: ``STREAM_MIN``, the size of a
segment sum's entries (values and coordinates) from which the kernel prefetches them a page ahead
(compiler/lower/prefetch.py ``stream_gate``), data that no cache keeps from one call to the
next."""
from __future__ import annotations

import os
from pathlib import Path

DEFAULT = 16 << 20
_SIZES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def last_level_bytes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> int | None:
    """Bytes of the highest-level data or unified cache of CPU 0 (sysfs), or None."""
    best = None
    try:
        for d in Path(root).glob("index*"):
            kind = (d / "type").read_text().strip()
            if kind not in ("Data", "Unified"):
                continue
            level = int((d / "level").read_text())
            text = (d / "size").read_text().strip()
            size = int(text[:-1]) * _SIZES[text[-1]] if text[-1:] in _SIZES else int(text)
            if best is None or level > best[0]:
                best = (level, size)
    except (OSError, ValueError):
        return None
    return best[1] if best else None


def _stream_min() -> int:
    raw = os.environ.get("LAZYSPARSE_STREAM_MIN", "").strip()
    if raw:
        try:
            return max(0, int(raw))
        except ValueError:
            pass
    llc = last_level_bytes()
    return llc // 2 if llc else DEFAULT


# Half the last-level cache that the first CPU shares with its neighbours, as Linux describes it in
# sysfs (glibc's ``sysconf`` adds up every slice of a socket: 384 MiB on the development VM, whose
# cores share 32 MiB); 16 MiB where sysfs says nothing. Kernels read it at each call (a ``d[]``
# slot), so it is not compiled in and tests can move it (``STREAM_MIN[0] = 0`` streams every
# operand); ``LAZYSPARSE_STREAM_MIN`` (bytes) sets it for a process.
STREAM_MIN = [_stream_min()]
