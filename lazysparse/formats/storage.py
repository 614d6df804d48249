"""Concrete tensor storage: the buffers generated kernels read and write. ``Storage`` holds, per
level, the positions and coordinates of its format, then the values; dense storage is an
ndarray of the logical shape with any strides, used without copies."""
from __future__ import annotations

import threading

import numpy as np

from lazysparse.formats.format import Format, dense as _DENSE

_INT64 = np.dtype(np.int64)

INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
VALUE_DTYPES = tuple(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                           np.uint16, np.uint32, np.uint64, np.float32, np.float64,
                                           np.complex64, np.complex128))


def usable(arr: np.ndarray) -> bool:
    """Kernels need aligned, native-order data with element-multiple strides."""
    flags = arr.flags
    if flags.c_contiguous and flags.aligned:
        return arr.dtype.isnative
    return flags.aligned and arr.dtype.isnative and all(s % arr.itemsize == 0 for s in arr.strides)


_MEMO_LOCK = threading.Lock()


def memo_of(obj) -> dict:
    """``obj.stats``, a dict made on first use under a lock: two threads that each made one
    would each write their entries (a tuning state among them) into a dict the other replaces."""
    stats = obj.stats
    if stats is None:
        with _MEMO_LOCK:
            stats = obj.stats
            if stats is None:
                stats = obj.stats = {}
    return stats

class Storage:
    """Sparse storage keeps, per level ``l`` (storage order, ``format.order[l]`` is the mode):
    ``pos[l]`` (compressed levels: ``parent_count + 1`` offsets) and ``crd[l]`` (compressed and
    singleton levels: coordinates), then ``vals`` (one value per leaf position). All index arrays of
    one storage share one dtype, int32 or int64; scipy's int32 arrays are used as they are.

    Dense storage keeps ``vals`` as an ndarray of the logical shape with any strides (a NumPy array,
    a transposed view or a Fortran array are used without copies); kernels address it by strides.
    """
    __slots__ = ("shape", "format", "pos", "crd", "vals", "index_dtype", "spec", "stats", "__weakref__")

    def __init__(self, shape, format: Format, pos, crd, vals, index_dtype=None):
        self.shape = tuple(int(s) for s in shape)
        self.format = format
        self.pos = list(pos)
        self.crd = list(crd)
        self.vals = vals
        if index_dtype is None:
            arrays = [a for a in self.pos + self.crd if a is not None]
            index_dtype = arrays[0].dtype if arrays else np.dtype(np.int64)
        self.index_dtype = np.dtype(index_dtype)
        self.spec = None  # the planner's OperandSpec, cached (storage is never mutated)
        # values worked out once (storages never change): per-level segment statistics (int
        # keys, segment_stats), "zero" (has_zero), "dag" (compiler/fused_pipeline.py's part of a DAG key)
        self.stats = None

    def __getstate__(self):
        """Pickled without ``spec`` and ``stats``: values worked out again on use, some of them
        keyed by this process's objects (weak references, kernel-cache tokens)."""
        return (self.shape, self.format, self.pos, self.crd, self.vals, self.index_dtype)

    def __setstate__(self, state):
        self.shape, self.format, self.pos, self.crd, self.vals, self.index_dtype = state
        self.spec = self.stats = None
        if self.format.is_dense and not usable(self.vals):  # (as from_dense: kernels address it)
            self.vals = np.ascontiguousarray(self.vals, dtype=self.vals.dtype.newbyteorder("="))

    def memo(self) -> dict:
        """The dict of values worked out once (``stats``), made on first use (``memo_of``)."""
        return memo_of(self)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_dense(cls, arr: np.ndarray) -> "Storage":
        """Dense storage over ``arr`` itself (no copy) when kernels can address it: aligned,
        native byte order, strides a multiple of the item size; otherwise over a C-contiguous
        native copy, made once here so that no kernel call has to check again."""
        if not usable(arr):
            arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
        return cls.wrap_dense(arr)

    @classmethod
    def wrap_dense(cls, arr: np.ndarray, fmt: Format = None) -> "Storage":
        """``from_dense`` for arrays known to be usable (kernel results and views of them);
        ``fmt``: the dense format of ``arr.ndim``, when the caller has it."""
        n = arr.ndim
        st = object.__new__(cls)
        st.shape, st.format, st.pos, st.crd = arr.shape, fmt or _DENSE.resolve(n), [None] * n, [None] * n
        st.vals, st.index_dtype, st.spec, st.stats = arr, _INT64, None, None
        return st

    # -- queries ------------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.vals.dtype

    @property
    def is_dense(self) -> bool:
        return self.format.is_dense

    def level_size(self, l: int) -> int:
        """Extent of the mode stored at level ``l``."""
        return self.shape[self.format.order[l]]

    @property
    def nnz(self) -> int:
        """Stored entries (explicit zeros included); every element for dense storage."""
        if self.is_dense:
            return int(np.prod(self.shape, dtype=np.int64))
        return int(self.vals.shape[0])

    def has_zero(self) -> bool:
        """Whether some stored value is zero (an explicit zero), computed once: a union
        fission's rows skip their zero scan when no term met and no input holds one."""
        stats = self.memo()
        r = stats.get("zero")
        if r is None:
            r = stats["zero"] = bool(self.vals.size and np.any(self.vals == 0))
        return r

    def buffers_key(self):
        """A key equal for two storages exactly when they are the same array: one format and
        shape over the very same buffers (two wraps of one NumPy array or scipy matrix). The
        planners take such storages as one input, so ``(A @ x) / norm(A @ x)`` computes
        ``A @ x`` once however often ``x`` was wrapped. Made once: storages never change, and
        they hold the buffers whose identities the key records."""
        stats = self.memo()
        k = stats.get("buffers")
        if k is None:
            k = stats["buffers"] = (self.format, self.shape, self.index_dtype, id(self.vals),
                                    tuple(map(id, self.pos)), tuple(map(id, self.crd)))
        return k

    def segment_stats(self, l: int):
        """``(mean, max)`` segment length of compressed level ``l`` (entries per parent
        position), computed once: schedules chosen at run time read it on every call."""
        stats = self.memo()
        r = stats.get(l)
        if r is None:
            pos = self.pos[l]
            n = pos.shape[0] - 1 if pos is not None else None
            if n is None:
                r = (1.0, 1)  # a singleton level: one entry per parent
            elif n <= 0:
                r = (0.0, 0)
            else:
                r = (float(pos[n] - pos[0]) / n, int(np.diff(pos).max()))
            stats[l] = r
        return r

    def nbytes(self) -> int:
        tot = self.vals.nbytes
        for a in self.pos + self.crd:
            if a is not None:
                tot += a.nbytes
        return tot

    def __repr__(self):
        return (f"<Storage shape={self.shape} format={self.format!r} dtype={self.dtype} "
                f"index={self.index_dtype} nnz={self.nnz}>")
