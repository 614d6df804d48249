"""Structural checks of foreign containers whose own conversions run unchecked native code.
``asarray`` reads CSR, CSC and COO buffers directly (``validate.py`` checks them); every other
container is first converted by its own library, and those conversions trust the internals (a
broken ``indptr`` in a scipy BSR makes ``tocsr()`` read far outside its arrays, a LIL whose
``rows`` list is short is read past its end, a pydata GCXS with a decreasing ``indptr`` comes out
silently wrong), so the internals they rely on are checked here first, in O(nnz), with the same
messages as ``validate``."""
from __future__ import annotations

import numpy as np

from lazysparse.formats.format import resolve_format
from lazysparse.formats.storage import Storage
from lazysparse.formats.validate import validate

__all__ = ["check_scipy", "check_gcxs"]


def _fail(name, label, msg):
    raise ValueError(f"{name}: invalid {label} input: {msg}")


def _index(a, name, label, what):
    """An index array as int64 (our validate reads one dtype); floats and objects are refused."""
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name}: invalid {label} input: {what} must be integers, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.int64)


def _compressed(shape, indptr, indices, nvals, name, label):
    """Validate (indptr, indices) as a CSR of ``shape`` holding ``nvals`` entries."""
    indptr = _index(indptr, name, label, "indptr")
    indices = _index(indices, name, label, "indices")
    # the values are checked by the caller (their layout differs); a stand-in of the right
    # length (one byte an entry) lets validate report everything about positions and coordinates
    vals = np.zeros(nvals if len(indices) == nvals else len(indices), dtype=bool)
    st = Storage(shape, resolve_format("csr", 2), [None, indptr], [None, indices], vals, np.int64)
    validate(st, name, order=False, label=label)
    if len(indices) != nvals:
        _fail(name, label, f"data holds {nvals} entries but indices has {len(indices)}")


def check_scipy(obj, name: str) -> None:
    """Raise ``ValueError``/``TypeError`` unless scipy can safely convert ``obj`` (BSR, DIA, LIL)."""
    fmt = obj.format
    if fmt == "bsr":
        _bsr(obj, name)
    elif fmt == "dia":
        _dia(obj, name)
    elif fmt == "lil":
        _lil(obj, name)


def _bsr(obj, name):
    data = np.asarray(obj.data)
    if data.ndim != 3:
        _fail(name, "BSR", f"data must be a 3-d array of blocks, got shape {data.shape}")
    R, C = data.shape[1:]
    M, N = obj.shape
    if R == 0 or C == 0 or M % R or N % C:
        _fail(name, "BSR", f"blocks of shape {(R, C)} do not tile the shape {(M, N)}")
    _compressed((M // R, N // C), obj.indptr, obj.indices, data.shape[0], name, "BSR")


def _dia(obj, name):
    data, offsets = np.asarray(obj.data), np.asarray(obj.offsets)
    if data.ndim != 2:
        _fail(name, "DIA", f"data must be a 2-d array (one row per diagonal), got shape {data.shape}")
    if offsets.ndim != 1 or offsets.dtype.kind not in "iu":
        _fail(name, "DIA", f"offsets must be a 1-d integer array, got {offsets.dtype} of shape {offsets.shape}")
    if len(offsets) != data.shape[0]:
        _fail(name, "DIA", f"{len(offsets)} offsets for {data.shape[0]} diagonals in data")


def _lil(obj, name):
    rows, data = obj.rows, obj.data
    M = obj.shape[0]
    if len(rows) != M or len(data) != M:
        _fail(name, "LIL", f"rows and data must hold one list per row ({M}), got {len(rows)} and {len(data)}")
    try:
        nr = np.fromiter(map(len, rows), dtype=np.int64, count=M)
        nd = np.fromiter(map(len, data), dtype=np.int64, count=M)
    except TypeError:
        raise TypeError(f"{name}: invalid LIL input: rows and data must hold lists") from None
    bad = np.flatnonzero(nr != nd)
    if bad.size:
        k = int(bad[0])
        _fail(name, "LIL", f"row {k} has {nr[k]} column indices but {nd[k]} values")


def check_gcxs(obj, name: str) -> None:
    """Raise unless pydata's GCXS -> COO conversion of ``obj`` stays inside its arrays."""
    shape = tuple(int(s) for s in obj.shape)
    data = np.asarray(obj.data)
    if data.ndim != 1:
        _fail(name, "GCXS", f"data must be a 1-d array, got shape {data.shape}")
    if len(shape) == 1:
        ind = _index(obj.indices, name, "GCXS", "indices")
        bad = np.flatnonzero((ind < 0) | (ind >= shape[0]))
        if bad.size:
            k = int(bad[0])
            _fail(name, "GCXS", f"indices[{k}]={ind[k]} is out of range for axis 0 of size {shape[0]}")
        if len(ind) != len(data):
            _fail(name, "GCXS", f"data holds {len(data)} entries but indices has {len(ind)}")
        return
    if len(shape) < 2:
        return
    comp = tuple(int(a) for a in obj.compressed_axes)
    rest = [a for a in range(len(shape)) if a not in comp]
    rows = int(np.prod([shape[a] for a in comp], dtype=np.int64))
    cols = int(np.prod([shape[a] for a in rest], dtype=np.int64))
    _compressed((rows, cols), obj.indptr, obj.indices, len(data), name, "GCXS")
