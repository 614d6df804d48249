"""Result buffers that start on a 64-byte boundary (a cache line, an AVX-512 vector), so that a
kernel gathering whole rows of a result or temporary lazysparse allocated (SpMM's ``Y[k, :]``,
GNN's ``(X @ W)[k, :]``) reads whole lines instead of paying a split load per vector. Only arrays
of rows are placed, results from ``MIN_BYTES`` and a program's temporaries from
``TEMP_MIN_BYTES``; user arrays are used where they are (``ls.asarray`` is zero-copy; see
docs/design.md, "Aligned results")."""
from __future__ import annotations

import math
import sys

import cffi
import numpy as np
from _cffi_backend import from_buffer

# NumPy places a large array 16 bytes past a page boundary (its allocation header), so every row of
# a C-order float64 array with a multiple of 8 columns straddles cache lines: in a C harness the
# same 16-column SpMM loop over MIT8 ran 0.72 ms on an aligned ``Y`` and 1.18 ms at an offset of
# 16 bytes (32: 1.16, 64: 0.74). A vector (SpMV's ``y``, a reduction) is stored and read element
# by element or streamed, so only arrays of two dimensions or more are placed. Placing costs about
# 2.3 us a call against 0.2 for ``np.empty`` (at 4 us it made SpMV on citeseer_features, 45 us,
# 15% slower), hence the thresholds: a kernel that writes 1 MB runs for 50 us and more, and a
# program's temporary is made once and reused by every later run (compiler/fused_pipeline.py,
# ``_run_ops``).
ALIGN = 64
MIN_BYTES = 1 << 20        # results
TEMP_MIN_BYTES = 64 << 10  # temporaries of a program (as fused.SCRATCH_MIN: those kept for reuse)
# the raw buffers' dtype: one byte under a field name no caller uses, so that ``owns`` can tell
# a buffer made here from a caller's array without a registry
RAW = np.dtype([("lazysparse_aligned_raw", "u1")])
_ffi = cffi.FFI()
_BYTES = _ffi.BCharA


def _addr(a) -> int:
    return int(_ffi.cast("uintptr_t", from_buffer(_BYTES, a, False)))


def owns(arr) -> bool:
    """Whether ``arr`` owns its memory, as an array NumPy allocated (``base is None``) or one
    ``empty``/``zeros`` made does: the whole of a raw buffer made here (a reshape of it, not a
    slice; never a view of a caller's array)."""
    b = arr.base
    if b is None:
        return True
    if not isinstance(b, np.ndarray) or b.dtype != RAW or arr.nbytes + ALIGN != b.nbytes \
            or not arr.flags.c_contiguous:
        return False
    return 0 <= _addr(arr) - _addr(b) < ALIGN


def _make(alloc, shape, dtype, least):
    if type(shape) is not tuple or len(shape) < 2:
        return alloc(shape, dtype)  # (vectors: as NumPy, at NumPy's cost)
    dt = np.dtype(dtype)
    n = math.prod(shape) * dt.itemsize
    if n < (MIN_BYTES if least is None else least):
        return alloc(shape, dt)
    raw = alloc(n + ALIGN, RAW)
    off = -_addr(raw) % ALIGN
    return raw[off:off + n].view(dt).reshape(shape)


def empty(shape, dtype, least=None):
    """``np.empty(shape, dtype)``, on a 64-byte boundary when it is an array of rows of at least
    ``least`` bytes (default ``MIN_BYTES``; C order)."""
    return _make(np.empty, shape, dtype, least)


def zeros(shape, dtype, least=None):
    """``np.zeros(shape, dtype)`` as ``empty`` places it (calloc'd, as NumPy's)."""
    return _make(np.zeros, shape, dtype, least)


def viewed(arr) -> bool:
    """Whether another array shares the raw buffer behind ``arr`` (an array made here): a
    view of it (``arr.T``, a slice) takes the raw buffer as its base, so ``arr``'s own
    reference count does not show it."""
    b = arr.base
    # references: arr.base, the local b, getrefcount's argument
    return b is not None and sys.getrefcount(b) > 3


__all__ = ["ALIGN", "MIN_BYTES", "TEMP_MIN_BYTES", "empty", "owns", "viewed", "zeros"]
