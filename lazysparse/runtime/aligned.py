"""Result buffers that start on a 64-byte boundary (a cache line, an AVX-512 vector).

NumPy places a large array 16 bytes past a page boundary (its allocation header), so every row
of a C-order float64 array with a multiple of 8 columns straddles cache lines: each 64-byte
vector load of a row touches two lines. Kernels that gather whole rows (SpMM's ``Y[k, :]``,
GNN's ``(X @ W)[k, :]``) pay a split load per vector: in a C harness, the same 16-column SpMM
loop over MIT8 ran 0.72 ms on an aligned ``Y`` and 1.18 ms at an offset of 16 bytes (32: 1.16,
64: 0.74). Results and temporaries lazysparse allocates itself are therefore placed on 64-byte
boundaries, so that a kernel reading one back (the second kernel of a chain, or a user's next
expression) reads whole lines. User arrays are used where they are (``ls.asarray`` is
zero-copy); see docs/design.md, "Aligned results".

Small results (under ``MIN_BYTES``) keep NumPy's own allocation: they fit in a few lines and
the view costs more than it saves.
"""
from __future__ import annotations

import math
import sys
import weakref

import numpy as np

ALIGN = 64
MIN_BYTES = 16384
_RAW = weakref.WeakValueDictionary()  # id -> the raw buffers behind the arrays made here


def _nbytes(shape, dt):
    count = math.prod(shape) if isinstance(shape, tuple) else int(shape)
    return count * dt.itemsize


def _place(raw, n, dt, shape):
    off = -raw.__array_interface__["data"][0] % ALIGN
    _RAW[id(raw)] = raw
    return raw[off:off + n].view(dt).reshape(shape)


def owns(arr) -> bool:
    """Whether ``arr`` owns its memory, as an array NumPy allocated (``base is None``) or one
    ``empty``/``zeros`` made does: the whole of a raw buffer made here (a reshape of it, not a
    slice; never a view of a caller's array)."""
    b = arr.base
    if b is None:
        return True
    if _RAW.get(id(b)) is not b or arr.nbytes + ALIGN != b.nbytes or not arr.flags.c_contiguous:
        return False
    start = arr.__array_interface__["data"][0] - b.__array_interface__["data"][0]
    return 0 <= start < ALIGN


def empty(shape, dtype):
    """``np.empty(shape, dtype)`` on a 64-byte boundary (C order)."""
    dt = np.dtype(dtype)
    n = _nbytes(shape, dt)
    if n < MIN_BYTES:
        return np.empty(shape, dt)
    return _place(np.empty(n + ALIGN, np.uint8), n, dt, shape)


def zeros(shape, dtype):
    """``np.zeros(shape, dtype)`` on a 64-byte boundary (C order; calloc'd, as NumPy's)."""
    dt = np.dtype(dtype)
    n = _nbytes(shape, dt)
    if n < MIN_BYTES:
        return np.zeros(shape, dt)
    return _place(np.zeros(n + ALIGN, np.uint8), n, dt, shape)


def viewed(arr) -> bool:
    """Whether another array shares the raw buffer behind ``arr`` (an array made here): a
    view of it (``arr.T``, a slice) takes the raw buffer as its base, so ``arr``'s own
    reference count does not show it."""
    b = arr.base
    # references: arr.base, the local b, getrefcount's argument
    return b is not None and sys.getrefcount(b) > 3


__all__ = ["ALIGN", "MIN_BYTES", "empty", "owns", "viewed", "zeros"]
