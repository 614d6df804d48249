"""Electric-fence buffers: NumPy arrays that end (or start) exactly at an inaccessible page.

A kernel that reads one element past the end of such an index or value array, or one before
its start, touches the ``PROT_NONE`` page and the process dies with SIGSEGV instead of silently
reading a neighbour's bytes. Tests use them in a subprocess (``_fenced_run.py``), so that a
fault is reported as a failed test, not a crashed test session.
"""
from __future__ import annotations

import ctypes
import mmap

import numpy as np

PAGE = mmap.PAGESIZE
_PROT_NONE = 0
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_KEEP = []  # mappings live as long as the process: a freed fence would make stray reads legal


def fenced(arr, where="after") -> np.ndarray:
    """A C-contiguous copy of ``arr`` whose bytes end right before (``where="after"``) or start
    right after (``"before"``) a page that cannot be read or written."""
    arr = np.ascontiguousarray(arr)
    nbytes = arr.nbytes
    npages = -(-nbytes // PAGE) + 2
    mm = mmap.mmap(-1, npages * PAGE)
    raw = np.frombuffer(mm, dtype=np.uint8)
    base = raw.ctypes.data
    for page in (0, npages - 1):
        if _libc.mprotect(base + page * PAGE, PAGE, _PROT_NONE) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed")
    start = (npages - 1) * PAGE - nbytes if where == "after" else PAGE
    view = raw[start:start + nbytes].view(arr.dtype).reshape(arr.shape)
    view[...] = arr
    _KEEP.append((mm, raw))
    return view


def poke(arr, where="after"):
    """Touch the byte beyond ``arr`` (self-test of the fence: must kill the process)."""
    addr = arr.ctypes.data + (arr.nbytes if where == "after" else -1)
    return ctypes.c_char.from_address(addr).value
