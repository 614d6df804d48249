"""Shape functions with NumPy's semantics (``squeeze``, ``expand_dims``, ``moveaxis``, ``swapaxes``,
``matrix_transpose``, ``broadcast_to``, ``broadcast_arrays``, ``flip``, ``roll``, ``tile``,
``repeat``, ``pad``, ``diff``, ``ravel``/``flatten``), also reached through ``np.squeeze`` & co.
(``NP_FUNCTIONS``) and as ``Array`` methods (``ARRAY_METHODS``, ``ARRAY_PROPERTIES``). They are lazy
where a lazy route exists (``squeeze``, the transposes, ``diff``) and eager otherwise (a lazy input
is computed first): a dense input gives a dense result (NumPy's own function on the buffer), a
sparse input a sparse result in the input's format when the number of dimensions is unchanged and
in COO of the new rank otherwise, stored zeros staying stored. Inputs are never written; results
that would exceed the memory limit (``LAZYSPARSE_MEMORY_LIMIT``, runtime/memory.py) raise
``MemoryError`` naming the function before anything of that size is allocated, and other errors are
NumPy's kinds with messages naming the function."""
from __future__ import annotations

import math
import operator

import numpy as np

from lazysparse.errors import shown

__all__ = ["squeeze", "expand_dims", "moveaxis", "swapaxes", "matrix_transpose", "broadcast_to",
           "broadcast_arrays", "flip", "roll", "tile", "repeat", "pad", "diff", "ravel", "flatten"]


# -- helpers -------------------------------------------------------------------------------------
def _arr(x, name):
    from lazysparse.api.operations import _as_array
    return _as_array(x, name)


def _int(v, what, name):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an integer, got {shown(v)}") from None


def _axis(axis, nd, name, what="axis"):
    """One axis as a non-negative int (NumPy's normalize_axis_index; build.normalize_axes)."""
    from lazysparse.api.primitives import normalize_axes
    return normalize_axes(_int(axis, what, name), nd, name, None)[0]


def _axes(axis, nd, name, what="axis"):
    """An int or a sequence of ints as a tuple of distinct non-negative axes (NumPy's
    normalize_axis_tuple; build.normalize_axes)."""
    from lazysparse.api.primitives import normalize_axes
    if not isinstance(axis, (tuple, list)):
        try:
            axis = [operator.index(axis)]
        except TypeError:
            pass
    if not hasattr(axis, "__iter__") or isinstance(axis, (str, bytes)):
        raise TypeError(f"{name}: {what} must be an integer or a tuple of integers, got {shown(axis)}")
    return tuple(normalize_axes([_int(a, what, name) for a in axis], nd, name, None))


def _shape_arg(shape, name, what="shape"):
    if np.iterable(shape) and not isinstance(shape, (str, bytes)):
        return tuple(_int(s, f"each element of {what}", name) for s in shape)
    return (_int(shape, what, name),)


def _limit_sparse(nnz, nd, itemsize, shape, name):
    """The memory guard for a sparse result of ``nnz`` entries (values, coordinates and the
    temporaries that build them), before they are allocated."""
    from lazysparse.runtime import memory
    lim = memory.limit()
    need = int(nnz) * (8 * (nd + 3) + int(itemsize))
    if lim is not None and need > lim:
        raise MemoryError(f"{name}: the result of shape {tuple(shape)} would store {int(nnz):,} entries "
                          f"({need / 2**20:.1f} MiB), over the memory limit of {lim / 2**20:.1f} MiB "
                          "(LAZYSPARSE_MEMORY_LIMIT)")


def _checked(dims, name, operands, dense_dtype=None):
    """``creation.checked_shape``: the result's shape, or a ``ValueError`` when a dimension
    passes int64 (or a dense result's elements or bytes cannot be addressed)."""
    from lazysparse.api.creation import checked_shape
    return checked_shape(dims, name, operands,
                         itemsize=None if dense_dtype is None else np.dtype(dense_dtype).itemsize)


def _limit_dense(shape, dtype, name):
    from lazysparse.runtime import memory
    nbytes = math.prod(int(s) for s in shape) * np.dtype(dtype).itemsize
    memory.check_dense(nbytes, shape, "the result", name)


def _dense(vals):
    from lazysparse.api.base import ArrayBase as Array
    from lazysparse.formats.storage import Storage
    return Array._from_storage(Storage.from_dense(np.asarray(vals)))


def _entries(st):
    """Coordinates (mode order, int64) and values of sparse storage's stored entries."""
    from lazysparse.api.creation import _coords
    return [np.asarray(c, dtype=np.int64) for c in _coords(st)], st.vals


def _sparse(st, shape, cols, vals):
    """A sparse result of ``shape`` from unique (any order) coordinates: ``st``'s format when the
    rank is unchanged, COO of the new rank otherwise; 0-d results are dense."""
    from lazysparse.api.base import ArrayBase as Array
    from lazysparse.api.creation import _canonical, _fits32, _from_coords
    from lazysparse.formats import resolve_format
    from lazysparse.formats.storage import Storage
    shape = tuple(int(s) for s in shape)
    nd = len(shape)
    vals = np.asarray(vals)
    if nd == 0:
        return Array._from_storage(Storage.from_dense(
            np.asarray(vals.sum() if len(vals) else np.zeros((), vals.dtype), dtype=vals.dtype)))
    fmt = st.format if nd == st.ndim else resolve_format("coo", nd)
    idt = np.int32 if _fits32(len(vals), *shape) else np.int64
    cols, vals = _canonical([np.asarray(c).astype(idt) for c in cols], vals)
    return Array._from_storage(_from_coords(shape, fmt, cols, np.ascontiguousarray(vals)))


def _is_identity(perm):
    return tuple(perm) == tuple(range(len(perm)))


# -- lazy ----------------------------------------------------------------------------------------
def squeeze(x, axis=None):
    """``numpy.squeeze``: ``x`` without its size-1 axes (all of them, or those in ``axis``). Lazy.

    A relabelling that reads coordinate 0 of the squeezed axes (``frontend._squeeze``).
    """
    from lazysparse.api.operations import _squeeze
    name = "squeeze"
    x = _arr(x, name)
    if axis is None:
        axes = tuple(k for k, n in enumerate(x.shape) if n == 1)
    elif x.ndim == 0 and not isinstance(axis, (tuple, list)) and _int(axis, "axis", name) in (0, -1):
        return x  # NumPy's legacy rule: a 0-d array takes axis 0 or -1
    else:
        axes = _axes(axis, x.ndim, name)
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(f"{name}: cannot select an axis to squeeze out which has size not equal "
                                 f"to one (axis {a} of shape {tuple(x.shape)})")
    if not axes:
        return x
    return _squeeze(x, set(axes))


def _transpose(x, perm, name):
    from lazysparse.api.operations import transpose
    return x if _is_identity(perm) else transpose(x, tuple(perm))


def moveaxis(x, source, destination):
    """``numpy.moveaxis``: move axes ``source`` to positions ``destination``. Lazy (a transpose).

    Through ``ls.transpose``, as are ``swapaxes`` and ``matrix_transpose``; an identity
    permutation returns the input itself (arrays are immutable).
    """
    name = "moveaxis"
    x = _arr(x, name)
    src = _axes(source, x.ndim, name, "source")
    dst = _axes(destination, x.ndim, name, "destination")
    if len(src) != len(dst):
        raise ValueError(f"{name}: `source` and `destination` arguments must have the same number of "
                         f"elements, got {shown(source)} and {shown(destination)}")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _transpose(x, order, name)


def swapaxes(x, axis1, axis2):
    """``numpy.swapaxes``: interchange two axes. Lazy (a transpose)."""
    name = "swapaxes"
    x = _arr(x, name)
    a = _axis(axis1, x.ndim, name, "axis1")
    b = _axis(axis2, x.ndim, name, "axis2")
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return _transpose(x, perm, name)


def matrix_transpose(x):
    """``numpy.matrix_transpose`` / ``x.mT``: swap the last two axes. Lazy (a transpose)."""
    name = "matrix_transpose"
    x = _arr(x, name)
    if x.ndim < 2:
        raise ValueError(f"{name}: input array must be at least 2-dimensional, but it is {x.ndim} "
                         f"(shape {tuple(x.shape)})")
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return _transpose(x, perm, name)


def diff(x, n=1, axis=-1, prepend=None, append=None):
    """``numpy.diff``: the ``n``-th discrete difference along ``axis`` (``!=`` for bool arrays, as
    NumPy). Each step subtracts two eager slices lazily. ``prepend``/``append`` (None: nothing)
    are joined along ``axis`` first (a scalar broadcast to one slice), as NumPy does.

    Lazy: ``x[1:] - x[:-1]`` along the axis (``!=`` for bool, as NumPy), ``n`` times, a lazy
    subtraction of two eager slices.
    """
    name = "diff"
    x = _arr(x, name)
    n = _int(n, "the order n", name)
    if n < 0:
        raise ValueError(f"{name}: order must be non-negative but got {n}")
    if n == 0:
        return x
    if x.ndim == 0:
        raise ValueError(f"{name}: diff requires input that is at least one dimensional")
    ax = _axis(axis, x.ndim, name)
    if prepend is not None or append is not None:
        from lazysparse.api.joining import concatenate
        parts = []
        one = tuple(1 if k == ax else s for k, s in enumerate(x.shape))
        for extra, where in ((prepend, "before"), (append, "after")):
            if extra is None:
                continue
            e = _arr(extra, name)
            e = broadcast_to(e, one) if e.ndim == 0 else e
            parts.append((where, e))
        arrs = [e for w, e in parts if w == "before"] + [x] + [e for w, e in parts if w == "after"]
        x = concatenate(arrs, axis=ax, name=name)
    hi = tuple(slice(1, None) if k == ax else slice(None) for k in range(x.ndim))
    lo = tuple(slice(None, -1) if k == ax else slice(None) for k in range(x.ndim))
    for _ in range(n):
        x = (x[hi] != x[lo]) if x.dtype == np.bool_ else x[hi] - x[lo]
        if x.shape[ax] == 0:
            # NumPy keeps going on an empty axis; the result is the same empty array
            break
    return x


# -- eager through indexing and reshape ----------------------------------------------------------
def expand_dims(x, axis):
    """``numpy.expand_dims``: insert size-1 axes at ``axis`` (an int or a tuple of positions in
    the result). Eager: a dense input gives a view, a sparse one COO of the new rank."""
    name = "expand_dims"
    x = _arr(x, name)
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    axes = _axes(axis, x.ndim + len(axis), name)
    if not axes:
        return x
    return x[tuple(None if i in axes else slice(None) for i in range(x.ndim + len(axis)))]


def flip(x, axis=None):
    """``numpy.flip``: reverse the order of elements along ``axis`` (all axes for None). Eager:
    a negative-step slice, in the input's format."""
    name = "flip"
    x = _arr(x, name)
    axes = tuple(range(x.ndim)) if axis is None else _axes(axis, x.ndim, name)
    if not axes:
        return x
    return x[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim))]


def _order(order, name):
    if order not in ("C", "F"):
        raise ValueError(f"{name}: order must be 'C' or 'F', got {shown(order)} (lazysparse arrays "
                         "have no memory layout for 'A' or 'K' to follow)")
    return order


def ravel(x, order="C", *, name="ravel"):
    """``numpy.ravel``: the elements as a 1-d array, in ``order`` ("C" or "F"). Eager (reshape):
    a sparse input gives the 1-d COO format; a 1-d input is returned as is."""
    from lazysparse.api.indexing import reshape
    x = _arr(x, name)
    order = _order(order, name)
    if x.ndim == 1:
        return x
    return reshape(x, (math.prod(x.shape),), order)


def flatten(x, order="C"):
    """``ndarray.flatten``: as ``ravel`` (lazysparse arrays are immutable: no copy is needed)."""
    return ravel(x, order, name="flatten")


# -- eager on the storage ------------------------------------------------------------------------
def broadcast_to(x, shape):
    """``numpy.broadcast_to``: ``x`` broadcast to ``shape`` (NumPy's rules). A dense input gives
    NumPy's read-only view; a sparse one stores each entry once per position of the broadcast
    axes (the input's format when the rank is unchanged, COO otherwise).

    A dense input gives NumPy's read-only view, as NumPy does; a sparse input's stored entries
    (stored zeros included) are repeated across the broadcast axes.
    """
    name = "broadcast_to"
    x = _arr(x, name)
    shape = _shape_arg(shape, name)
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: all elements of broadcast shape must be non-negative, got {shape}")
    nd, out = x.ndim, len(shape)
    if nd > out:
        raise ValueError(f"{name}: input operand has more dimensions than allowed by the axis remapping "
                         f"(shape {tuple(x.shape)} to {shape})")
    lead = out - nd
    for k, s in enumerate(x.shape):
        if s != shape[lead + k] and s != 1:
            raise ValueError(f"{name}: operands could not be broadcast together with remapped shapes: "
                             f"{tuple(x.shape)} and requested shape {shape}")
    if tuple(x.shape) == shape:
        return x
    operands = f"broadcasting shape {tuple(x.shape)} to {shape}"
    _checked(shape, name, operands)
    st = x.storage
    if st.format.is_dense:
        # (a view: no bytes allocated, but NumPy numbers its elements with an intp)
        from lazysparse.api.creation import checked_shape
        checked_shape(shape, name, operands, elements=True)
        return _dense(np.broadcast_to(np.asarray(st.vals), shape))
    # output axes whose coordinate ranges over the broadcast extent
    spread = [j for j in range(out) if j < lead or (x.shape[j - lead] == 1 and shape[j] != 1)]
    ext = [shape[j] for j in spread]
    copies = math.prod(ext)
    nnz = st.vals.shape[0]
    _limit_sparse(nnz * copies, out, st.vals.itemsize, shape, name)
    cs, vals = _entries(st)
    # copy-major: each copy is a run in the input's order, which the stable sort merges
    e = np.tile(np.arange(nnz, dtype=np.int64), copies)
    k = np.repeat(np.arange(copies, dtype=np.int64), nnz)
    at = dict(zip(spread, np.unravel_index(k, ext) if spread else ()))
    cols = [at[j] if j in at else cs[j - lead][e] for j in range(out)]
    return _sparse(st, shape, cols, vals[e])


def broadcast_arrays(*arrays):
    """``numpy.broadcast_arrays``: the arrays broadcast to their common shape (a tuple)."""
    name = "broadcast_arrays"
    arrs = [_arr(a, name) for a in arrays]
    try:
        shape = np.broadcast_shapes(*[tuple(a.shape) for a in arrs])
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
    return tuple(broadcast_to(a, shape) for a in arrs)


def roll(x, shift, axis=None):
    """``numpy.roll``: shift elements along ``axis`` (the flattened array for None), wrapping
    around; ``shift`` and ``axis`` broadcast against each other, shifts of one axis add up.
    Eager: each stored entry's coordinate moves (the input's format)."""
    name = "roll"
    x = _arr(x, name)
    sh = np.asarray(shift)
    # (Python ints past 64 bits make an object array: fine, each shift is taken modulo its
    # axis as a Python int below)
    big = sh.dtype == object and sh.size and all(
        isinstance(s, int) and not isinstance(s, bool) for s in sh.reshape(-1))
    if not big and sh.dtype.kind not in "biu" and not (sh.size == 0 and sh.dtype.kind == "f"):
        raise TypeError(f"{name}: shift must be an integer or a sequence of integers, got {shown(shift)}")
    if axis is None:
        pairs = [(int(s), None) for s in sh.reshape(-1)]
    else:
        ax = np.asarray(axis)
        if ax.dtype.kind not in "biu" and not (ax.size == 0 and ax.dtype.kind == "f"):
            raise TypeError(f"{name}: axis must be an integer or a sequence of integers, got {shown(axis)}")
        if sh.ndim > 1 or ax.ndim > 1:
            raise ValueError(f"{name}: 'shift' and 'axis' should be scalars or 1D sequences")
        try:
            b = np.broadcast(sh, ax)
        except ValueError:
            raise ValueError(f"{name}: shape mismatch: shift {shown(shift)} and axis {shown(axis)} cannot "
                             "be broadcast to a single shape") from None
        pairs = [(int(s), _axis(int(a), x.ndim, name)) for s, a in b]
    st = x.storage
    shape = tuple(st.shape)
    if axis is None:
        total = sum(s for s, _ in pairs)
        size = math.prod(shape)
        if not size or not x.ndim:
            return x
        if size >= 2**63:
            raise ValueError(f"{name}: {size} elements do not have a 64-bit linear index (give axis)")
        if st.format.is_dense:
            _limit_dense(shape, st.dtype, name)
            return _dense(np.roll(np.asarray(st.vals), total % size))
        cs, vals = _entries(st)
        lin = (np.ravel_multi_index(cs, shape) + total % size) % size
        return _sparse(st, shape, list(np.unravel_index(lin, shape)), vals.copy())
    shifts = [0] * x.ndim
    for s, a in pairs:
        shifts[a] += s
    shifts = [s % n if n else 0 for s, n in zip(shifts, shape)]
    if not any(shifts):
        return x
    if st.format.is_dense:
        _limit_dense(shape, st.dtype, name)
        moved = [a for a in range(x.ndim) if shifts[a]]
        return _dense(np.roll(np.asarray(st.vals), [shifts[a] for a in moved], tuple(moved)))
    cs, vals = _entries(st)
    cols = [(c + s) % n if s else c for c, s, n in zip(cs, shifts, shape)]
    return _sparse(st, shape, cols, vals.copy())


def tile(x, reps):
    """``numpy.tile``: ``x`` repeated ``reps`` times per axis (the ranks are matched by leading
    ones, as NumPy). Eager: a sparse input stores each entry once per tile (its format when the
    rank is unchanged, COO otherwise)."""
    name = "tile"
    x = _arr(x, name)
    reps = _shape_arg(reps, name, "reps")
    if any(r < 0 for r in reps):
        raise ValueError(f"{name}: negative dimensions are not allowed (reps {reps})")
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    base = (1,) * (nd - x.ndim) + tuple(x.shape)
    shape = tuple(int(s) * int(r) for s, r in zip(base, reps))
    if shape == tuple(x.shape):
        return x
    operands = f"tiling shape {tuple(x.shape)} by reps {reps}"
    _checked(shape, name, operands)
    st = x.storage
    if st.format.is_dense:
        _checked(shape, name, operands, st.dtype)
        _limit_dense(shape, st.dtype, name)
        return _dense(np.tile(np.asarray(st.vals), reps))
    copies = math.prod(reps)
    nnz = st.vals.shape[0]
    _limit_sparse(nnz * copies, nd, st.vals.itemsize, shape, name)
    cs, vals = _entries(st)
    cs = [np.zeros(nnz, np.int64)] * (nd - x.ndim) + cs
    # copy-major: each tile is a run in the input's order, which the stable sort merges
    e = np.tile(np.arange(nnz, dtype=np.int64), copies)
    k = np.unravel_index(np.repeat(np.arange(copies, dtype=np.int64), nnz), reps)
    cols = [c[e] + t * s for c, t, s in zip(cs, k, base)]
    return _sparse(st, shape, cols, vals[e])


def repeat(x, repeats, axis=None):
    """``numpy.repeat``: each element repeated ``repeats`` times (an int, or one count per
    element along ``axis``) along ``axis`` (the flattened array for None). Eager: a sparse input
    stores each entry once per repeat (its format; the 1-d COO format for ``axis=None``).

    Repeats must be integers: NumPy truncates ``1.5`` to ``1``, which raises here.
    """
    name = "repeat"
    x = _arr(x, name)
    r = np.asarray(repeats)
    if r.dtype.kind not in "biu" and not (r.size == 0 and r.dtype.kind == "f"):
        raise TypeError(f"{name}: repeats must be an integer or a sequence of integers, got {shown(repeats)}")
    if r.ndim > 1:
        raise ValueError(f"{name}: repeats must be an integer or a 1-d sequence, got shape {r.shape}")
    r = r.astype(np.int64)
    if (r < 0).any():
        raise ValueError(f"{name}: repeats may not contain negative values, got {shown(repeats)}")
    if axis is None or x.ndim == 0:
        ax = 0 if axis is None else _axis(axis, 1, name)  # NumPy reads a 0-d array as 1-d here
        x = ravel(x)
    else:
        ax = _axis(axis, x.ndim, name)
    n = x.shape[ax]
    if r.ndim == 1 and r.shape[0] not in (1, n):
        raise ValueError(f"{name}: operands could not be broadcast together with shape ({n},) "
                         f"({r.shape[0]},)")
    counts = np.broadcast_to(r.reshape(-1) if r.ndim else r, (n,))
    shape = list(x.shape)
    # the total, exact: an int64 sum wraps (2**62 repeats of four elements summed to 0)
    big = n and int(counts.max()) > np.iinfo(np.int64).max // n
    shape[ax] = int(counts.sum(dtype=object if big else np.int64))
    operands = f"repeating shape {tuple(x.shape)} along axis {ax} {shown(repeats)} times"
    shape = _checked(shape, name, operands)
    st = x.storage
    if st.format.is_dense:
        _checked(shape, name, operands, st.dtype)
        _limit_dense(shape, st.dtype, name)
        return _dense(np.repeat(np.asarray(st.vals), counts, axis=ax))
    cs, vals = _entries(st)
    cnt = counts[cs[ax]]
    big = len(cnt) and int(cnt.max()) > np.iinfo(np.int64).max // len(cnt)
    total = int(cnt.sum(dtype=object if big else np.int64))  # (exact, as the shape's)
    _limit_sparse(total, len(shape), st.vals.itemsize, shape, name)
    e = np.repeat(np.arange(len(cnt), dtype=np.int64), cnt)
    start = np.cumsum(counts) - counts  # where each coordinate's copies begin
    first = np.cumsum(cnt) - cnt  # where each entry's copies begin in e
    cols = list(cs)
    cols[ax] = np.repeat(start[cs[ax]], cnt) + (np.arange(total, dtype=np.int64) - np.repeat(first, cnt))
    cols = [c if k == ax else c[e] for k, c in enumerate(cols)]
    return _sparse(st, shape, cols, vals[e])


def _pairs(v, nd, what, name, as_index):
    """NumPy's ``_as_pairs``: ``v`` broadcast to ``(nd, 2)`` (before, after) per axis."""
    a = np.asarray(v)
    if as_index:
        if a.dtype.kind != "i":  # (NumPy's rule: signed integers only)
            raise TypeError(f"{name}: `{what}` must be of integral type, got {shown(v)}")
        if (a < 0).any():
            raise ValueError(f"{name}: `{what}` can't contain negative values, got {shown(v)}")
        a = a.astype(np.int64)
    try:
        out = np.broadcast_to(a, (nd, 2))
    except ValueError:
        raise ValueError(f"{name}: `{what}` of shape {a.shape} cannot be broadcast to ({nd}, 2), one "
                         "(before, after) pair per axis") from None
    return out


def pad(x, pad_width, mode="constant", constant_values=0):
    """``numpy.pad`` with ``mode="constant"``: ``x`` with ``pad_width`` (before, after) elements
    of ``constant_values`` added along each axis. Eager. A sparse input padded with zeros stays
    sparse (its entries shifted, its format); padded with a nonzero constant (after NumPy's cast
    to the array's dtype, on a side that is actually padded) the result is dense (it would be
    mostly that constant). Other modes raise ``ValueError``."""
    name = "pad"
    x = _arr(x, name)
    if not (isinstance(mode, str) and mode == "constant"):
        raise ValueError(f"{name}: only mode='constant' is supported, got mode={shown(mode)}")
    nd = x.ndim
    pw = _pairs(pad_width, nd, "pad_width", name, True)
    cv = _pairs(constant_values, nd, "constant_values", name, False)
    # exact Python ints: NumPy's int64 sum wrapped (np.pad(A, 2**62) had a negative shape)
    shape = tuple(int(s) + int(b) + int(a) for s, (b, a) in zip(x.shape, pw))
    operands = f"padding shape {tuple(x.shape)} by pad_width {shown(pad_width)}"
    _checked(shape, name, operands)
    dt = np.dtype(x.dtype)
    cast = np.zeros((nd, 2), dt)
    cast[...] = cv  # NumPy's own cast of the constant into the array (pad assigns it so)
    st = x.storage
    if st.format.is_dense or bool(((cast != 0) & (pw > 0)).any()):
        _checked(shape, name, operands, dt)
        _limit_dense(shape, dt, name)
        vals = np.asarray(st.vals) if st.format.is_dense else np.asarray(x.todense())
        if nd == 0:
            return _dense(vals.copy())
        return _dense(np.pad(vals, pw, mode="constant", constant_values=cv))
    if shape == tuple(x.shape):
        return x
    cs, vals = _entries(st)
    cols = [c + int(b) for c, (b, _) in zip(cs, pw)]
    return _sparse(st, shape, cols, vals.copy())


# -- NumPy dispatch (``__array_function__``): NumPy's signatures; anything else -> NotImplemented
class _NoValue:
    pass


def _np_squeeze(a, axis=None):
    return squeeze(a, axis)


def _np_expand_dims(a, axis):
    return expand_dims(a, axis)


def _np_moveaxis(a, source, destination):
    return moveaxis(a, source, destination)


def _np_swapaxes(a, axis1, axis2):
    return swapaxes(a, axis1, axis2)


def _np_matrix_transpose(x, /):
    return matrix_transpose(x)


def _np_broadcast_to(array, shape, subok=False):
    return NotImplemented if subok else broadcast_to(array, shape)


def _np_broadcast_arrays(*args, subok=False):
    return NotImplemented if subok else broadcast_arrays(*args)


def _np_flip(m, axis=None):
    return flip(m, axis)


def _np_roll(a, shift, axis=None):
    return roll(a, shift, axis)


def _np_tile(A, reps):
    return tile(A, reps)


def _np_repeat(a, repeats, axis=None):
    return repeat(a, repeats, axis)


def _np_pad(array, pad_width, mode="constant", **kwargs):
    if not (isinstance(mode, str) and mode == "constant") or set(kwargs) - {"constant_values"}:
        return NotImplemented  # NumPy raises TypeError: no densification behind the user's back
    return pad(array, pad_width, mode, kwargs.get("constant_values", 0))


_NOV = getattr(np, "_NoValue", _NoValue)


def _np_diff(a, n=1, axis=-1, prepend=_NOV, append=_NOV):
    return diff(a, n, axis, None if prepend is _NOV else prepend, None if append is _NOV else append)


def _np_ravel(a, order="C"):
    return NotImplemented if order not in ("C", "F") else ravel(a, order)


NP_FUNCTIONS = {
    np.squeeze: _np_squeeze,
    np.expand_dims: _np_expand_dims,
    np.moveaxis: _np_moveaxis,
    np.swapaxes: _np_swapaxes,
    np.matrix_transpose: _np_matrix_transpose,
    np.broadcast_to: _np_broadcast_to,
    np.broadcast_arrays: _np_broadcast_arrays,
    np.flip: _np_flip,
    np.roll: _np_roll,
    np.tile: _np_tile,
    np.repeat: _np_repeat,
    np.pad: _np_pad,
    np.diff: _np_diff,
    np.ravel: _np_ravel,
}

# ``Array`` methods (first argument self), NumPy's ndarray signatures
ARRAY_METHODS = {
    "squeeze": squeeze,
    "swapaxes": swapaxes,
    "flatten": flatten,
    "ravel": ravel,
    "repeat": repeat,
}

# ``Array`` properties: ``A.mT``
ARRAY_PROPERTIES = {"mT": matrix_transpose}
