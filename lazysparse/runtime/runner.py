"""A compiled kernel plus the recipe that feeds it buffers and wraps what it returns."""
from __future__ import annotations

import threading

import numpy as np

from ..backends import c as cbackend
from ..formats import Storage
from ..ir import ops
from ..lower.lowering import lower


class Runner:
    def __init__(self, spec):
        self.spec = spec
        block, abi = lower(spec)
        self.abi = abi
        self.source = cbackend.emit(block, header_comment=repr(spec.stmt) + " | order " +
                                    ",".join(map(repr, spec.order)) + " | " + spec.mode)
        from .cache import ffi, libc, load_kernel
        self.kernel = load_kernel(self.source)
        self._ffi, self._libc = ffi, libc
        self.np_ = len(abi.p)
        self.nd_ = len(abi.d)
        fmt = spec.output.format
        self.out_dense = fmt.is_dense
        self.odtype = np.dtype(spec.stmt.dtype)
        self.oidx = np.dtype(spec.output.index_dtype)
        self.obuf_slots = [(k, desc) for k, desc in enumerate(abi.p) if desc[0] == "obuf"]
        self.ocount_slots = {desc[1]: k for k, desc in enumerate(abi.d) if desc[0] == "ocount"}
        self._pgetters = [(k, _pgetter(desc)) for k, desc in enumerate(abi.p) if desc[0] in ("in", "out")]
        self._dgetters = [_dgetter(desc, self) for desc in abi.d]
        self._dense_slots = [k for k, s in enumerate(spec.inputs) if s.dense and s.ndim > 0]
        self._tls = threading.local()
        self._prod_slots = spec.stmt.reduce_indices if spec.stmt.reduce == "prod" else ()

    def run(self, storages, ext, out_shape, pat, name):
        ffi = self._ffi
        spec = self.spec
        out = cnt = None
        for k in self._dense_slots:
            if not _usable(storages[k].vals):
                storages = [Storage.from_dense(np.ascontiguousarray(st.vals)) if st.format.is_dense
                            and not _usable(st.vals) else st for st in storages]
                break
        if self.out_dense:
            if spec.mode == "dense-count":
                ident = ops.reduce_identity(spec.stmt.reduce, self.odtype)
                out = np.full(out_shape, ident, dtype=self.odtype)
                cnt = np.zeros(out_shape, dtype=np.int64)
            elif self._prod_slots and any(ext[v] == 0 for v in self._prod_slots):
                out = np.ones(out_shape, dtype=self.odtype)  # an empty product is 1 everywhere
            else:
                out = np.zeros(out_shape, dtype=self.odtype)
        bufs = getattr(self._tls, "bufs", None)
        if bufs is None:  # argument arrays reused per thread (a kernel call never re-enters)
            bufs = self._tls.bufs = (ffi.new("void*[]", max(self.np_, 1)), ffi.new("int64_t[]", max(self.nd_, 1)))
        p, d = bufs
        keep = [storages]
        for k, get in self._pgetters:
            arr = get(storages, out, cnt)
            try:
                buf = ffi.from_buffer(arr)
            except ValueError:  # a strided view: its first element's address (kept alive by ``keep``)
                buf = ffi.cast("void *", arr.__array_interface__["data"][0])
            keep.append(arr)
            keep.append(buf)
            p[k] = buf
        for k, get in enumerate(self._dgetters):
            d[k] = get(storages, ext, out, out_shape, pat)
        for k, _ in self.obuf_slots:  # stale pointers from the last call belong to NumPy now
            p[k] = ffi.NULL
        rc = self.kernel.fn(p, d)
        del keep
        if rc != 0:
            self._free_partial(p)
            raise MemoryError(f"{name}: out of memory while assembling a result of shape {out_shape}")
        if self.out_dense:
            return Storage.from_dense(out)
        return self._wrap_sparse(p, d, out_shape)

    def _hint(self, storages, out_shape, pat):
        tot = sum(st.nnz for st in storages if not st.format.is_dense and st.ndim)
        full = int(np.prod(out_shape, dtype=np.float64)) if out_shape else 1
        return int(max(16, min(full, tot if tot else full, 1 << 26)))

    def _free_partial(self, p):
        for k, _ in self.obuf_slots:
            if p[k] != self._ffi.NULL:
                self._libc.free(p[k])

    def _wrap_sparse(self, p, d, out_shape):
        ffi, libc = self._ffi, self._libc
        fmt = self.spec.output.format
        levels = fmt.levels
        nd = len(levels)
        counts = {l: d[k] for l, k in self.ocount_slots.items()}
        dense_count = 1
        kd = 0
        while kd < nd and levels[kd].kind == "dense":
            dense_count *= out_shape[fmt.order[kd]]
            kd += 1
        coo = levels[0].kind == "compressed" and not levels[0].unique
        leaf = counts[nd - 1]
        pos, crd = [None] * nd, [None] * nd
        vals = None
        for k, (_, kind, l) in self.obuf_slots:
            if kind == "pos":
                n = 2 if coo else ((dense_count + 1) if l == kd else counts[l - 1] + 1)
                pos[l] = _own(ffi, libc, p[k], n, self.oidx)
            elif kind == "crd":
                crd[l] = _own(ffi, libc, p[k], leaf if coo else counts[l], self.oidx)
            else:
                vals = _own(ffi, libc, p[k], leaf, self.odtype)
        return Storage(out_shape, fmt, pos, crd, vals, self.oidx)


def _own(ffi, libc, ptr, n, dtype):
    """A NumPy array owning a malloc'd buffer (freed when the array dies). No copy."""
    n = int(n)
    if n == 0:
        libc.free(ptr)
        return np.zeros(0, dtype=dtype)
    cptr = ffi.gc(ffi.cast("char *", ptr), libc.free)
    return np.frombuffer(ffi.buffer(cptr, n * dtype.itemsize), dtype=dtype)


def _usable(arr):
    """Kernels need aligned, native-order data with element-multiple strides."""
    flags = arr.flags
    if flags.c_contiguous and flags.aligned:
        return arr.dtype.isnative
    return flags.aligned and arr.dtype.isnative and all(s % arr.itemsize == 0 for s in arr.strides)


def _pgetter(desc):
    if desc[0] == "out":
        return (lambda sts, out, cnt: out) if desc[1] == "vals" else (lambda sts, out, cnt: cnt)
    k, what = desc[1], desc[2]
    if what == "vals":
        return lambda sts, out, cnt: sts[k].vals
    l = desc[3]
    if what == "pos":
        return lambda sts, out, cnt: sts[k].pos[l]
    return lambda sts, out, cnt: sts[k].crd[l]


def _dgetter(desc, runner):
    tag = desc[0]
    if tag == "ext":
        v = desc[1]
        return lambda sts, ext, out, shape, pat: ext[v]
    if tag == "stride":
        k, m = desc[1], desc[2]
        return lambda sts, ext, out, shape, pat: sts[k].vals.strides[m] // sts[k].vals.itemsize
    if tag == "size":
        k, l = desc[1], desc[2]
        return lambda sts, ext, out, shape, pat: sts[k].shape[sts[k].format.order[l]]
    if tag == "ostride":
        m = desc[1]
        return lambda sts, ext, out, shape, pat: out.strides[m] // out.itemsize
    if tag == "osize":
        l = desc[1]
        order = runner.spec.output.format.order
        return lambda sts, ext, out, shape, pat: shape[order[l]]
    if tag == "ohint":
        return lambda sts, ext, out, shape, pat: runner._hint(sts, shape, pat)
    return lambda sts, ext, out, shape, pat: 0  # slots the kernel writes
