"""Joining arrays: ``ls.concatenate``, ``ls.stack``, ``ls.hstack``, ``ls.vstack`` (NumPy's rules,
scipy.sparse's and pydata/sparse's names), also reached through ``np.concatenate`` & co.

Eager, as scipy's ``hstack``/``vstack`` are: lazy inputs are computed first. Dense inputs only
(and no format asked): NumPy joins the buffers. Otherwise every input's stored entries (a dense
input's nonzero values) are placed at their offset along the axis and stored in ``format``,
by default the first sparse input's format (the COO of the new rank for ``stack``). Values take
NumPy's result dtype of the inputs; stored zeros of sparse inputs stay stored, as in scipy.
"""
from __future__ import annotations

import operator

import numpy as np

def _arrays(arrays, name):
    from lazysparse.api.operations import _as_array
    if isinstance(arrays, (str, bytes)) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{name}: expected a sequence of arrays, got {type(arrays).__name__}")
    arrs = [_as_array(a, name) for a in arrays]
    if not arrs:
        raise ValueError(f"{name}: need at least one array to join")
    return arrs


def _axis(axis, nd, name):
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer, got {type(axis).__name__}") from None
    if not -nd <= ax < nd:
        raise ValueError(f"{name}: axis {axis} is out of bounds for arrays of dimension {nd}")
    return ax % nd


def concatenate(arrays, axis=0, *, format=None, name="concatenate"):
    """Join ``arrays`` along an existing ``axis``.

    >>> import numpy as np, lazysparse as ls
    >>> ls.concatenate([ls.eye(2), ls.eye(2)]).shape
    (4, 2)
    """
    from lazysparse.api.base import ArrayBase as Array
    from lazysparse.api.creation import _canonical, _coords, _fits32, _from_coords, _result_format, checked_shape
    from lazysparse.formats.storage import Storage
    arrs = _arrays(arrays, name)
    nd = arrs[0].ndim
    shapes = ", ".join(str(tuple(a.shape)) for a in arrs)
    if nd == 0:
        raise ValueError(f"{name}: zero-dimensional arrays cannot be concatenated")
    if any(a.ndim != nd for a in arrs):
        raise ValueError(f"{name}: all the input arrays must have the same number of dimensions, "
                         f"got shapes {shapes}")
    ax = _axis(axis, nd, name)
    for a in arrs[1:]:
        if any(a.shape[d] != arrs[0].shape[d] for d in range(nd) if d != ax):
            raise ValueError(f"{name}: the input shapes must match except along axis {ax}, got {shapes}")
    dtype = np.result_type(*[a.dtype for a in arrs])
    shape = list(arrs[0].shape)
    shape[ax] = sum(int(a.shape[ax]) for a in arrs)  # (exact: checked, never wrapped)
    operands = f"joining shapes {shapes} along axis {ax}"
    shape = checked_shape(shape, name, operands)
    sts = [a.storage for a in arrs]  # (computes lazy inputs)
    fmt = _result_format(format, nd, name) if format is not None else next(
        (st.format for st in sts if not st.format.is_dense), None)
    if fmt is None:
        checked_shape(shape, name, operands, itemsize=dtype.itemsize)
        vals = np.concatenate([np.asarray(st.vals) for st in sts], axis=ax).astype(dtype, copy=False)
        return Array._from_storage(Storage.from_dense(vals))
    joined = _join_levels(sts, ax, fmt, shape, dtype)
    if joined is not None:
        return Array._from_storage(joined)
    coords, vals, offset = [[] for _ in range(nd)], [], 0
    for st in sts:
        if st.format.is_dense:
            v = np.asarray(st.vals)
            cs = list(np.nonzero(v))
            vs = v[tuple(cs)]
        else:
            cs, vs = _coords(st), st.vals
        for d in range(nd):
            c = np.asarray(cs[d], dtype=np.int64)
            coords[d].append(c + offset if d == ax else c)
        vals.append(np.asarray(vs).astype(dtype, copy=False))
        offset += st.shape[ax]
    idt = np.int32 if _fits32(sum(len(v) for v in vals), *shape) else np.int64
    cols = [np.concatenate(c).astype(idt) for c in coords]
    cols, vals = _canonical(cols, np.concatenate(vals))
    return Array._from_storage(_from_coords(shape, fmt, cols, vals))


def _join_levels(sts, ax, fmt, shape, dtype):
    """The join as a concatenation of the stored arrays, when every input is stored in ``fmt``
    and ``ax`` is its outermost level (scipy's vstack of CSR, hstack of CSC, a CSF's first
    mode): each level's coordinates follow one another (the first level's moved by the
    offset along ``ax``), and each compressed level's positions are shifted by the entries
    before them; no coordinate is expanded or sorted. None when that does not apply."""
    from lazysparse.api.creation import _fits32
    from lazysparse.formats.storage import Storage
    levels = fmt.levels
    if fmt.order[0] != ax or not all(lv.has_pos for lv in levels[1:]) or not (levels[0].is_dense or levels[0].has_pos) \
            or any(st.format != fmt for st in sts) or not all(lv.unique for lv in fmt.levels):
        return None
    idt = np.int32 if _fits32(sum(len(st.vals) for st in sts), *shape) else np.int64
    pos, crd = [], []
    for l in range(len(levels)):
        if l == 0 and levels[0].is_dense:
            pos.append(None)
            crd.append(None)
            continue
        ps, cs, before, offset = [], [], 0, 0
        for st in sts:
            p = np.asarray(st.pos[l], dtype=np.int64)
            ps.append(p[:-1] + before if l else p[:-1])
            # (inner coordinates keep their arrays' dtype: no widening of the big arrays)
            cs.append(st.crd[l].astype(np.int64) + offset if l == 0 else st.crd[l])
            before += int(p[-1])
            offset += st.shape[ax]
        if l == 0:  # a compressed first level: one segment holding every input's coordinates
            pos.append(np.array([0, before], dtype=idt))
        else:
            pos.append(np.concatenate(ps + [np.array([before])]).astype(idt))
        crd.append(np.concatenate(cs).astype(idt, copy=False))
    vals = np.concatenate([st.vals for st in sts]).astype(dtype, copy=False)
    return Storage(shape, fmt, pos, crd, vals, idt)


def stack(arrays, axis=0, *, format=None):
    """Join ``arrays`` of one shape along a new ``axis``."""
    name = "stack"
    arrs = _arrays(arrays, name)
    shapes = {tuple(a.shape) for a in arrs}
    if len(shapes) > 1:
        raise ValueError(f"{name}: all input arrays must have the same shape, got "
                         f"{', '.join(str(tuple(a.shape)) for a in arrs)}")
    nd = arrs[0].ndim + 1
    ax = _axis(axis, nd, name)
    key = (slice(None),) * ax + (None,)
    return concatenate([a[key] for a in arrs], axis=ax, format=format, name=name)


def hstack(arrays, *, format=None):
    """Join column-wise (scipy's ``hstack``; 1-d arrays end to end, as NumPy's)."""
    arrs = _arrays(arrays, "hstack")
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1, format=format, name="hstack")


def vstack(arrays, *, format=None):
    """Join row-wise (scipy's ``vstack``; 1-d arrays become rows, as NumPy's)."""
    arrs = _arrays(arrays, "vstack")
    arrs = [a[None] if a.ndim == 1 else a for a in arrs]
    if any(a.ndim == 0 for a in arrs):
        raise ValueError(f"vstack: zero-dimensional arrays cannot be stacked, got shapes "
                         f"{', '.join(str(tuple(a.shape)) for a in arrs)}")
    return concatenate(arrs, axis=0, format=format, name="vstack")


def _np_concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if axis is None or out is not None or dtype is not None or casting != "same_kind":
        return NotImplemented  # (axis=None flattens: not offered)
    return concatenate(arrays, axis)


def _np_stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None or dtype is not None or casting != "same_kind":
        return NotImplemented
    return stack(arrays, axis)


def _np_hvstack(fn):
    def handler(tup, *, dtype=None, casting="same_kind"):
        return fn(tup) if dtype is None and casting == "same_kind" else NotImplemented
    return handler


# ``__array_function__`` handlers (frontend._FUNCTIONS): plain calls only
NP_FUNCTIONS = {np.concatenate: _np_concatenate, np.stack: _np_stack,
                np.hstack: _np_hvstack(hstack), np.vstack: _np_hvstack(vstack)}
