"""Mutation by rebinding: ``A[key] = value``, ``setdiag``, ``resize`` and ``eliminate_zeros``,
as scipy.sparse's csr_array does them, in place from the user's point of view. No buffer is
ever written: the new value is computed now, with NumPy on the entries' coordinates (or on a
copy of a dense buffer), into new storage, and the ``Array`` object is rebound to it (its
``_storage``, ``shape`` and ``dtype`` replaced, its ``_node`` dropped). Eager, as scipy's
assignment and indexing are: a lazy node per assignment would chain a DAG as long as the loop
that assigns, each link a scatter the compiler has no kernel for, and every later read would
pay for it; computing now costs O(stored entries + selection) per assignment, as scipy's
CSR insertions do. Lazy expressions built on the array before the change hold the Array object
itself among their nodes' children, so ``_detach`` hands them the old value first."""
from __future__ import annotations

import math
import operator
import sys

import numpy as np

from lazysparse.api.base import ArrayBase
from lazysparse.api.indexing import normalize, numpy_key

# sys.getrefcount of an array held by nothing but its caller's one name, at the top of each
# entry function below as the methods of ``SparrayMethods`` reach it (the caller's stack, the
# method's ``self``, an argument tuple, getrefcount's own argument: it differs by the way
# Python calls each, and by version), measured once on a probe (``_calibrate``). A count above
# it means something else holds the array (a node of a lazy expression among them); only then
# is the heap searched (``_detach``: a few milliseconds)
ALONE = {}
_PROBE = []


def _probing(x, entry, refs):
    if _PROBE and x is _PROBE[0]:
        ALONE[entry] = refs - 1  # (less _PROBE's own reference)
        return True
    return False


def _calibrate():
    from lazysparse.formats.storage import Storage
    probe = ArrayBase._from_storage(Storage.from_dense(np.zeros((1, 1))))
    _PROBE.append(probe)
    try:
        probe[0, 0] = 1.0
        probe.setdiag(1.0)
        probe.resize(1, 1)
        probe.eliminate_zeros()
    finally:
        _PROBE.clear()


def setitem(x, key, value):
    """``x[key] = value``: NumPy's and scipy's assignment for every key ``getitem`` reads
    (integers, slices, integer arrays paired or outer, boolean masks, ellipsis, None);
    ``value`` broadcast to the selection and cast to ``x``'s dtype as NumPy's ``D[key] =
    value`` casts; for a repeated position the last value wins."""
    refs = sys.getrefcount(x)
    if not _probing(x, "setitem", refs):
        rebind(x, _assigned(x.storage, key, value, "setitem"), refs - ALONE["setitem"])


def _assigned(st, key, value, name):
    """The storage ``st`` with ``value`` assigned at ``key``, new (``st`` is never written)."""
    from lazysparse.formats.storage import Storage
    items = normalize(key, st.shape, name)
    np_key = numpy_key(items)
    value = _numpy_value(value)
    if st.format.is_dense:
        buf = np.array(st.vals)  # a copy: the old value (maybe the user's buffer) stays as it was
        _put(buf, np_key, value, name)
        return Storage.from_dense(buf)
    shape = st.shape
    if math.prod(shape) >= 2**63:
        raise ValueError(f"{name}: an array of shape {shape} has too many elements to number its "
                         "positions in 64 bits")
    # the selection's coordinates, by NumPy's own reading of the key: each axis's coordinate
    # grid (a broadcast view, no memory) indexed by it
    grids = [np.broadcast_to(np.arange(n, dtype=np.int64).reshape([-1 if b == a else 1 for b in range(len(shape))]),
                             shape)[np_key] for a, n in enumerate(shape)]
    vals = np.empty(grids[0].shape, dtype=st.vals.dtype)
    _put(vals, Ellipsis, value, name)
    lin = np.ravel_multi_index([g.ravel() for g in grids], shape)
    # a repeated position: the last value wins (NumPy's and scipy's), unique over the reversed
    _, last = np.unique(lin[::-1], return_index=True)
    last = len(lin) - 1 - last
    return _merged(st, lin[last], vals.ravel()[last])


def _put(buf, key, value, name):
    """``buf[key] = value`` by NumPy (its broadcasting, casting and errors), errors naming
    ``name``."""
    try:
        buf[key] = value
    except ValueError as e:
        shape = np.shape(value)
        want = np.shape(buf[key])
        if math.prod(shape) == math.prod(want) and np.squeeze(np.empty(shape, bool)).shape \
                == np.squeeze(np.empty(want, bool)).shape:
            # scipy's leniency: a column (n, 1) fills a 1-d selection of n (``A[:, 0] = x[:, None]``)
            buf[key] = np.reshape(value, want)
            return
        raise ValueError(f"{name}: cannot assign a value of shape {shape} to the selection "
                         f"({e})") from None
    except TypeError as e:
        raise TypeError(f"{name}: cannot assign {type(value).__name__} to an array of dtype "
                        f"{buf.dtype} ({e})") from None


def _numpy_value(value):
    """The value as NumPy reads it: a lazysparse or scipy sparse array densified (the value
    fills a selection of its own size, which is dense here anyway)."""
    if isinstance(value, ArrayBase):
        return np.asarray(value.todense())
    if hasattr(value, "toarray") and hasattr(value, "shape") and not isinstance(value, np.ndarray):
        return value.toarray()
    return value


def _merged(st, lin, vals):
    """Sparse ``st`` with the values ``vals`` at the (unique) linear positions ``lin``: the
    stored entries there are replaced; a zero where nothing was stored is left out (scipy
    leaves an explicit zero where an entry was)."""
    from lazysparse.api.creation import _coords
    shape = st.shape
    coords = [c.astype(np.int64, copy=False) for c in _coords(st)]
    old = np.ravel_multi_index(coords, shape) if coords else np.zeros(0, np.int64)
    was = np.isin(lin, old)
    add = was | (vals != 0)
    keep = ~np.isin(old, lin)
    new = np.unravel_index(lin[add], shape)
    coords = [np.concatenate([c[keep], n]) for c, n in zip(coords, new)]
    return _stored(st, shape, st.format, coords, np.concatenate([st.vals[keep], vals[add]]))


def _stored(st, shape, fmt, coords, vals):
    """New storage of format ``fmt`` from coordinates in any order (no duplicates), ``st``'s
    index width where it fits."""
    from lazysparse.api.creation import _canonical, _fits32, _from_coords
    wide = not _fits32(len(vals), *shape) or st.index_dtype == np.int64
    idt = np.int64 if wide else np.int32
    coords, vals = _canonical([np.asarray(c).astype(idt) for c in coords], vals)
    return _from_coords(tuple(shape), fmt, coords, vals)


def setdiag(x, values, k=0):
    """scipy's ``setdiag``: the ``k``-th diagonal of the 2-d ``x`` set to ``values`` (a scalar
    fills it; an array sets its first ``len(values)`` positions, a longer one is cut)."""
    refs = sys.getrefcount(x)
    if _probing(x, "setdiag", refs):
        return
    refs -= ALONE["setdiag"]
    from lazysparse.api.indexing import matrix_offset
    name = "setdiag"
    k = matrix_offset(x, k, name)
    m, n = x.shape
    if k <= -m or k >= n:
        raise ValueError(f"{name}: k={k} exceeds array dimensions: the diagonal is outside "
                         f"shape {tuple(x.shape)}")
    start = max(0, -k)
    length = min(m - start, n - start - k)
    values = _numpy_value(values)
    if np.ndim(values) > 1:
        raise ValueError(f"{name}: values must be a scalar or 1-d, got shape {np.shape(values)}")
    if np.ndim(values) == 1:
        length = min(length, len(values))
        values = np.asarray(values)[:length]
    rows = np.arange(start, start + length, dtype=np.int64)
    rebind(x, _assigned(x.storage, (rows, rows + k), values, name), refs)


def resize(x, *shape):
    """scipy's in-place ``resize``: entries outside the new shape are dropped, new positions are
    zero. A change of the number of dimensions (between 1 and 2, as scipy's) keeps the entries
    by their row-major linear index, as scipy's COO does (its CSR keeps the first row)."""
    refs = sys.getrefcount(x)
    if _probing(x, "resize", refs):
        return
    refs -= ALONE["resize"]
    from lazysparse.formats import resolve_format
    from lazysparse.formats.storage import Storage
    name = "resize"
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: the new shape must be integers, got {shape!r}") from None
    if any(s < 0 for s in shape) or not shape:
        raise ValueError(f"{name}: the new shape must be non-negative integers, got {shape}")
    if len(shape) != x.ndim and max(len(shape), x.ndim) > 2:
        raise ValueError(f"{name}: cannot resize a {x.ndim}-d array to {len(shape)}-d shape {shape} "
                         "(only between 1-d and 2-d)")
    st = x.storage
    if st.format.is_dense:
        buf = np.zeros(shape, dtype=st.vals.dtype)
        if len(shape) == x.ndim:
            common = tuple(slice(0, min(a, b)) for a, b in zip(shape, x.shape))
            buf[common] = np.asarray(st.vals)[common]
        else:
            flat, out = np.asarray(st.vals).ravel(), buf.reshape(-1)
            out[:min(len(flat), out.size)] = flat[:out.size]
        rebind(x, Storage.from_dense(buf), refs)
        return
    from lazysparse.api.creation import _coords
    coords = [c.astype(np.int64, copy=False) for c in _coords(st)]
    if len(shape) == x.ndim:
        keep = np.ones(len(st.vals), dtype=bool)
        for c, n in zip(coords, shape):
            keep &= c < n
        new, fmt = [c[keep] for c in coords], st.format
    else:
        lin = np.ravel_multi_index(coords, x.shape)
        keep = lin < math.prod(shape)
        new, fmt = list(np.unravel_index(lin[keep], shape)), resolve_format("coo", len(shape))
    rebind(x, _stored(st, shape, fmt, new, st.vals[keep]), refs)


def eliminate_zeros(x):
    """scipy's in-place ``eliminate_zeros``: the stored zeros removed (``nnz`` and ``data``
    then show the nonzero values only); a dense array is left as it is."""
    refs = sys.getrefcount(x)
    if _probing(x, "eliminate_zeros", refs):
        return
    refs -= ALONE["eliminate_zeros"]
    st = x.storage
    if st.format.is_dense:
        return
    keep = st.vals != 0
    if keep.all():
        return
    from lazysparse.api.creation import _coords
    coords = [c[keep] for c in _coords(st)]
    rebind(x, _stored(st, st.shape, st.format, coords, st.vals[keep]), refs)


def rebind(x, st, refs=1):
    """``x`` takes the value of the storage ``st``: its lazy node (if any) and every cached
    state of its old value go with the old storage object, which nothing here writes; the
    caches keyed on storage (bound plans, jit signatures, views in ``stats``) see a new one.
    ``refs``: how many references beyond its caller's the array has (1: search for nodes)."""
    _detach(x, refs)
    x._storage, x._node, x.shape, x.dtype = st, None, st.shape, st.vals.dtype


def _detach(x, refs):
    """Lazy expressions built on ``x`` keep its old value: a node's children are Array objects,
    so each node that holds ``x`` gets a new Array with ``x``'s old value in its place. Found
    through the garbage collector's referrers (the tuples of children, then their nodes), and
    only when something beyond its caller holds it (``refs`` > 0)."""
    if refs <= 0:
        return
    import gc
    from lazysparse.ir.dag import Node
    holders = [t for t in gc.get_referrers(x) if type(t) is tuple]
    if not holders:
        return
    old = ArrayBase._from_storage(x._storage) if x._storage is not None else ArrayBase._from_node(x._node)
    for n in gc.get_referrers(*holders):
        if type(n) is Node and any(c is x for c in n.children):
            n.children = tuple(old if c is x else c for c in n.children)


_calibrate()
