"""Conversions of a lazysparse array: to another format (``asformat``, compiled by lazysparse)
and out to NumPy, scipy.sparse and pydata/sparse, as read-only views where the buffers allow.
"""
from __future__ import annotations

import numpy as np

from lazysparse.api import primitives as build
from lazysparse.api.base import ArrayBase as Array
from lazysparse.api.creation import _coords, _result_format
from lazysparse.errors import shown
from lazysparse.formats import resolve_format
from lazysparse.ir.nodes import identity_statement


def convert(x: Array, format, name="asformat") -> Array:
    """``x`` in ``format`` (materialized): as is when it already has it, else compiled by lazysparse.

    >>> import numpy as np, lazysparse as ls
    >>> from lazysparse.api.conversion import convert
    >>> convert(ls.asarray(np.eye(2)), "dense").format
    ls.dense
    """
    fmt = _result_format(format, x.ndim, name)
    st = x.storage
    if st.format == fmt:
        return x if not x.is_lazy and x._storage is st else Array._from_storage(st)
    node = build._node_array(identity_statement(x.ndim, x.dtype), (Array._from_storage(st),),
                             x.shape, x.dtype, format=fmt)
    return node.materialize()


def readonly(a):
    """A read-only view of ``a`` (no copy), for handing a buffer out.

    Arrays are immutable: kernels read a storage's buffers without checking them again, and
    bound plans reuse what they computed from them, so a caller writing into a result's buffer
    (an index past the end: a crash; a value: a silently changed "immutable" result and every
    value computed from it afterwards) must be stopped. A view, not ``a.flags.writeable =
    False``: ``a`` may be the caller's own array, wrapped without a copy by ``asarray``, whose
    flags are not ours to change."""
    if a is None or not a.flags.writeable:
        return a
    v = a.view()
    v.flags.writeable = False
    return v


def to_numpy(x: Array) -> np.ndarray:
    """Dense NumPy array of ``x``: a read-only view of its buffer (dense storage: no copy;
    ``np.array(x)`` or ``.copy()`` for a writable one)."""
    st = x.storage
    if not st.format.is_dense:
        st = convert(x, resolve_format("dense", x.ndim)).storage
    return readonly(np.asarray(st.vals))


def to_scipy(x: Array, format=None):
    """A scipy.sparse *array* (csr/csc/coo) of a 2-d ``x``; CSR/CSC storage is shared, not
    copied, through read-only views (``readonly``): scipy's methods that make new arrays work on
    them; its in-place ones (``eliminate_zeros``, ``data *= 2``, ``resize``) raise ``ValueError``
    -- call ``.copy()`` on the result first for a matrix of your own."""
    import scipy.sparse as sp
    if x.ndim != 2:
        raise ValueError(f"to_scipy: scipy.sparse arrays are 2-d here; this array has shape {x.shape}")
    if format is not None and format not in ("csr", "csc", "coo"):
        raise ValueError(f"to_scipy: format must be 'csr', 'csc' or 'coo', got {shown(format)}")
    st = x.storage
    name = st.format.name if st.format.name in ("csr", "csc", "coo") else None
    want = format or name or "csr"
    if name != want:
        st = convert(x, want).storage
    vals = readonly(st.vals)
    if want == "coo":
        r, c = _coords(st)
        m = sp.coo_array((vals, (readonly(r), readonly(c))), shape=st.shape)
    else:
        cls = sp.csr_array if want == "csr" else sp.csc_array
        ind, ptr = readonly(st.crd[1]), readonly(st.pos[1])
        m = cls((vals, ind, ptr), shape=st.shape, copy=False)
        # scipy may narrow int64 indices on construction; put ours back so nothing is copied
        m.indices, m.indptr, m.data = ind, ptr, vals
    m.has_canonical_format = True  # our storage is sorted and duplicate-free
    return m


def to_pydata(x: Array):
    """A pydata/sparse array: ``GCXS`` for CSR/CSC storage (shared buffers, read-only views as
    ``to_scipy``'s), ``COO`` otherwise."""
    import sparse
    st = x.storage
    if st.format.name in ("csr", "csc"):
        return sparse.GCXS((readonly(st.vals), readonly(st.crd[1]), readonly(st.pos[1])), shape=st.shape,
                           compressed_axes=(0,) if st.format.name == "csr" else (1,))
    if st.ndim == 0:
        return sparse.COO(np.zeros((0, 1), np.int64), np.asarray(st.vals).reshape(1).copy(), shape=())
    if st.format.is_dense:
        st = convert(x, "coo").storage
    coords = np.stack(_coords(st)) if st.ndim else np.zeros((0, len(st.vals)), np.int64)
    canon = st.format.order == tuple(range(st.ndim)) and all(l.ordered for l in st.format.levels)
    return sparse.COO(coords, readonly(st.vals), shape=st.shape, has_duplicates=False, sorted=canon)


_BUFFERS = {"data": ("csr", "csc", "coo"), "indices": ("csr", "csc"), "indptr": ("csr", "csc"),
            "coords": ("coo",), "row": ("coo",), "col": ("coo",)}


def scipy_buffer(x: Array, name: str):
    """scipy's attribute ``name`` (``data``, ``indices``, ``indptr``, ``coords``, ``row``,
    ``col``) of a CSR, CSC or COO array: a read-only view of its own buffer (a lazy array is
    computed first). Writing into it raises, where scipy would change the array in place."""
    fmt = x.format.name
    if fmt not in _BUFFERS[name]:
        want = " or ".join(_BUFFERS[name])
        raise AttributeError(f"{name}: a {fmt} array has no {name!r} (scipy's {want} arrays do); "
                             f"convert first, e.g. .asformat({_BUFFERS[name][0]!r}).{name}")
    st = x.storage
    if name == "data":
        return readonly(st.vals)
    if name in ("indices", "indptr"):
        return readonly(st.crd[1] if name == "indices" else st.pos[1])
    coords = tuple(readonly(st.crd[x.storage.format.order.index(m)]) for m in range(x.ndim))
    return coords if name == "coords" else coords[0 if name == "row" else 1]


def write_out(x: Array, out: np.ndarray, name: str, casting: str = "same_kind") -> np.ndarray:
    """NumPy's ``out=``: the values of ``x`` computed and copied into the NumPy array ``out``,
    which is returned. Its shape must be the result's; the cast follows ``casting`` (NumPy's
    rule for the caller: ``same_kind`` for ufuncs and ``sum``, ``unsafe`` for ``mean``)."""
    value = np.asarray(x.todense())
    if out.shape != value.shape:
        dims = "" if out.ndim == value.ndim else " (wrong number of dimensions)"
        raise ValueError(f"{name}: the output parameter out has shape {out.shape}, which does "
                         f"not match the result's shape {value.shape}{dims}")
    if not np.can_cast(value.dtype, out.dtype, casting):
        raise TypeError(f"{name}: cannot cast the result from {value.dtype} to out's {out.dtype} "
                        f"with casting rule {casting!r}")
    np.copyto(out, value, casting="unsafe")
    return out
