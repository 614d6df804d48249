"""NumPy's statistics and comparisons that scipy.sparse and pydata/sparse users call: ``var``/``std``,
the NaN-ignoring reductions, ``argmax``/``argmin``, ``ptp``, ``average``, ``count_nonzero`` along
axes, ``linalg.norm``, ``isclose``/``allclose``/``array_equal``, ``outer``/``inner``/``vdot`` and the
``*_like`` constructors. Everything that can be lazy is a composition of the compiler's own
operations (elementwise ops, ``where`` and the sum/max/min/prod reductions), so each runs as
compiled kernels and fuses with what surrounds it; only ``argmax``/``argmin`` compute values here
(docs/design.md, "Statistics")."""
from __future__ import annotations

import math
import operator

import numpy as np


def _fe():
    from lazysparse.api import operations as frontend
    return frontend


def _arr(x, name):
    return _fe()._as_array(x, name)


def _axes(x, axis, name):
    from lazysparse.api import primitives as build
    if axis is None:
        return tuple(range(x.ndim))
    if not isinstance(axis, (int, np.integer, tuple, list)) or isinstance(axis, bool):
        raise TypeError(f"{name}: axis must be an integer or a tuple of integers, got {type(axis).__name__}")
    return tuple(build.normalize_axes(axis, x.ndim, name, x.shape))


def _reduced_shape(x, axes, keepdims):
    return tuple(1 if a in axes else n for a, n in enumerate(x.shape) if keepdims or a not in axes)


def _count(x, axes):
    return math.prod(x.shape[a] for a in axes)


def _op(op, *args, name=None):
    """The compiler's elementwise ``op`` on ``args`` (lazy), checked like the ufuncs."""
    from lazysparse.api import primitives as build
    return _fe().checked(build.elementwise(op, *args, opname=name or op), name or op)


def _is_nan(x):
    return _op("isnan", x)


def _sq(d):
    """``|d|**2`` in d's real dtype. One read of ``d`` (``square``, of ``|d|`` for complex):
    ``d * d`` reads a sparse operand through two iterators that the kernel intersects."""
    if np.dtype(d.dtype).kind == "c":
        return _op("square", _fe().abs(d))
    return _op("square", d)


def _float_dtype(dt):
    """NumPy's result dtype of a mean/var: ints and bools in float64, floats their own."""
    dt = np.dtype(dt)
    return np.dtype(np.float64) if dt.kind in "biu" else dt


# -- NaN-ignoring reductions ---------------------------------------------------------------
def _nan_as(x, value, reduce, name, axis, dtype, keepdims):
    """``reduce`` of ``x`` with each NaN read as ``value``."""
    fe = _fe()
    x = _arr(x, name)
    if np.dtype(x.dtype).kind in "fc":
        x = fe.where(_is_nan(x), value, x)
    return getattr(fe, reduce)(x, axis=axis, keepdims=keepdims, dtype=dtype)


def nansum(x, axis=None, dtype=None, keepdims=False):
    """Lazy ``numpy.nansum``: NaN counts as zero."""
    return _nan_as(x, 0, "sum", "nansum", axis, dtype, keepdims)


def nanprod(x, axis=None, dtype=None, keepdims=False):
    """Lazy ``numpy.nanprod``: NaN counts as one."""
    return _nan_as(x, 1, "prod", "nanprod", axis, dtype, keepdims)


def _nanext(x, axis, keepdims, op, name):
    fe = _fe()
    x = _arr(x, name)
    from lazysparse.api import primitives as build
    if np.dtype(x.dtype).kind != "f":  # (complex: the reduction refuses it, naming ``name``)
        return build.reduction(x, axis, op, keepdims, opname=name)
    nan = _is_nan(x)
    m = build.reduction(fe.where(nan, -np.inf if op == "max" else np.inf, x), axis, op, keepdims,
                        opname=name)
    # a slice of NaN only gives NaN (NumPy also warns, which a lazy result cannot do in time)
    from lazysparse.api.logic import all as all_
    return fe.where(all_(nan, axis=axis, keepdims=keepdims), np.nan, m)


def nanmax(x, axis=None, keepdims=False):
    """Lazy ``numpy.nanmax``: the maximum ignoring NaN; NaN where a slice is all NaN."""
    return _nanext(x, axis, keepdims, "max", "nanmax")


def nanmin(x, axis=None, keepdims=False):
    """Lazy ``numpy.nanmin``."""
    return _nanext(x, axis, keepdims, "min", "nanmin")


def nanmean(x, axis=None, dtype=None, keepdims=False):
    """Lazy ``numpy.nanmean``: the mean of the values that are not NaN (NaN for none)."""
    fe = _fe()
    x = _arr(x, "nanmean")
    if np.dtype(x.dtype).kind not in "fc":
        return fe.mean(x, axis=axis, keepdims=keepdims, dtype=dtype)
    axes = _axes(x, axis, "nanmean")
    out_dt = np.dtype(dtype) if dtype is not None else _float_dtype(x.dtype)
    s = nansum(x, axis=axis, dtype=out_dt, keepdims=keepdims)
    # the count of values that are not NaN: the slice's size less its NaNs (which keeps a
    # sparse operand sparse: ``x == x`` would be true at every implicit zero)
    nans = fe.sum(_is_nan(x), axis=axis, keepdims=keepdims)
    cnt = fe.subtract(_count(x, axes), nans)
    # (0 / 0 is NaN here as in NumPy; the sparse convention would keep an implicit 0 numerator)
    out = fe.where(_op("equal", cnt, 0), np.nan, fe.divide(s, cnt))
    return out if out.dtype == out_dt else fe.astype(out, out_dt)


# -- variance --------------------------------------------------------------------------------
def var(x, axis=None, dtype=None, ddof=0, keepdims=False, *, mean=None, correction=None):
    """Lazy ``numpy.var`` (``ddof``/``correction``; ``mean=`` not accepted).

    >>> import numpy as np, scipy.sparse as sp, lazysparse as ls
    >>> a = np.array([[0., 2., 0.], [1., 0., 3.]])
    >>> np.allclose(ls.var(ls.asarray(sp.csr_array(a)), axis=1).todense(), a.var(axis=1))
    True

    A sparse operand stays sparse: the variance sums ``(x - m)**2`` over the nonzeros only (``(x - m)
    * (x != 0)``, which the planner computes on x's pattern) and adds ``m**2`` once per zero (a stored
    zero counts as an implicit one, which contributes the same), so no dense ``x - m`` is formed.
    """
    fe = _fe()
    name = "var"
    x = _arr(x, name)
    if mean is not None:
        raise TypeError(f"{name}: the mean= argument is not supported")
    if correction is not None:
        if ddof != 0:
            raise ValueError(f"{name}: ddof and correction can't be provided simultaneously")
        ddof = correction
    axes = _axes(x, axis, name)
    n = _count(x, axes)
    acc = np.dtype(dtype) if dtype is not None else _float_dtype(x.dtype)
    m = fe.mean(x, axis=axis, keepdims=True, dtype=acc)
    if _dense_result(x):
        s = fe.sum(_sq(fe.subtract(x, m)), axis=axis, keepdims=keepdims)
    else:
        nz = _op("not_equal", x, 0)
        # (x - m) at the nonzeros only: the product with the mask is what keeps the subtraction
        # off the implicit zeros (a where() computed it densely first)
        stored = fe.sum(_sq(fe.multiply(fe.subtract(x, m), nz)), axis=axis, keepdims=keepdims)
        zeros = fe.subtract(n, fe.sum(nz, axis=axis, keepdims=keepdims))
        mk = m if keepdims else fe.mean(x, axis=axis, keepdims=False, dtype=acc)
        s = fe.add(stored, fe.multiply(zeros, _sq(mk)))
    out = fe.divide(s, max(n - ddof, 0))
    want = np.finfo(acc).dtype if acc.kind == "c" else acc  # complex: a real variance
    return out if out.dtype == want else fe.astype(out, want)


def _dense_result(x):
    """Whether ``x`` is (or will be) stored dense: then ``x - mean`` costs nothing extra."""
    fmt = x.format
    return fmt is not None and fmt.is_dense


def std(x, axis=None, dtype=None, ddof=0, keepdims=False, *, mean=None, correction=None):
    """Lazy ``numpy.std``: the square root of ``var``."""
    v = var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, mean=mean, correction=correction)
    return _fe().sqrt(v)


# -- arg-reductions (eager) ------------------------------------------------------------------
def argmax(x, axis=None, keepdims=False):
    """``numpy.argmax``: the index of the first maximum along ``axis`` (of the flattened array
    for ``axis=None``), implicit zeros included. Eager, as scipy's ``argmax``: an ``np.intp``
    for ``axis=None``, else a dense ``ls.Array`` of int64 indices.

    >>> import numpy as np, scipy.sparse as sp, lazysparse as ls
    >>> A = ls.asarray(sp.csr_array(np.array([[0., -1.], [-2., 0.], [3., 5.]])))
    >>> A.argmax(axis=1).todense().tolist(), int(A.argmax())
    ([0, 1, 1], 5)

    Eager, like scipy's: a selection of stored entries, with the first implicit zero of each slice
    found from the sorted coordinates.
    """
    return _arg(x, axis, keepdims, True, "argmax")


def argmin(x, axis=None, keepdims=False):
    """``numpy.argmin``: the index of the first minimum (see ``argmax``)."""
    return _arg(x, axis, keepdims, False, "argmin")


def _arg(x, axis, keepdims, big, name):
    from lazysparse.api.base import ArrayBase as Array
    x = _arr(x, name)
    if np.dtype(x.dtype).kind == "c":
        raise TypeError(f"{name}: complex values have no ordering here (operand of dtype {x.dtype})")
    if x.is_lazy:
        x = x.materialize()
    if axis is not None:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"{name}: axis must be an integer or None, got {type(axis).__name__}")
        axis = _axes(x, int(axis), name)[0]
    n_a = x.size if axis is None else x.shape[axis]
    if n_a == 0:
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence (operand of shape "
                         f"{tuple(x.shape)}, axis {axis})")
    st = x.storage
    if st.format.is_dense:
        out = (np.argmax if big else np.argmin)(np.asarray(st.vals), axis=axis, keepdims=keepdims)
    else:
        out = _arg_sparse(st, axis, n_a, big)
        if keepdims:
            out = out.reshape([1] * x.ndim) if axis is None else np.expand_dims(out, axis)
    if axis is None and not keepdims:
        return np.intp(out)
    return Array._from_storage(_dense_storage(np.ascontiguousarray(out, dtype=np.int64)))


def _dense_storage(a):
    from lazysparse.formats.storage import Storage
    return Storage.from_dense(a)


def _arg_sparse(st, axis, n_a, big):
    """The arg-reduction of sparse storage: per slice, the first stored extreme, against the
    first implicit zero (the first coordinate missing from the slice's sorted coordinates)."""
    from lazysparse.api.creation import _coords
    shape = st.shape
    vals = np.asarray(st.vals)
    if vals.dtype == bool:
        vals = vals.view(np.uint8)
    if axis is None:  # (the coordinates, only if they are needed, once)
        from functools import cache
        coords_once = cache(lambda: [c.astype(np.int64, copy=False) for c in _coords(st)])
        return np.int64(_arg_flat(st, coords_once, vals, big, n_a))
    coords = [c.astype(np.int64, copy=False) for c in _coords(st)]
    r = coords[axis]
    g = np.zeros(len(vals), np.int64)
    for k, c in enumerate(coords):
        if k != axis:
            g = g * shape[k] + c
    out_shape = tuple(n for k, n in enumerate(shape) if k != axis)
    out = np.zeros(math.prod(out_shape), np.int64)
    if len(vals):
        if len(g) > 1 and not _sorted(g, r):
            o = np.lexsort((r, g))
            g, r, vals = g[o], r[o], vals[o]
        starts = np.flatnonzero(np.diff(g)) if len(g) > 1 else np.zeros(0, np.int64)
        starts = np.concatenate(([0], starts + 1)).astype(np.int64)
        counts = np.diff(np.append(starts, len(g)))
        ext = (np.maximum if big else np.minimum).reduceat(vals, starts)
        ext_at = np.repeat(ext, counts)
        match = vals == ext_at
        nan_ext = ext != ext
        if vals.dtype.kind == "f":
            match |= (vals != vals) & (ext_at != ext_at)
        first = np.minimum.reduceat(np.where(match, r, n_a), starts)
        rank = np.arange(len(r), dtype=np.int64) - np.repeat(starts, counts)
        gap = np.minimum(np.minimum.reduceat(np.where(r != rank, rank, n_a), starts), counts)
        full = counts == n_a
        better = (ext > 0) if big else (ext < 0)
        res = np.where(nan_ext | full | better, first,
                       np.where(ext == 0, np.minimum(first, gap), gap))
        out[g[starts]] = res
    return out.reshape(out_shape)


def _flat_index(coords, shape, sel=slice(None)):
    """C-order flat indices of the entries ``sel`` (a valid shape's size is below 2**63)."""
    r = np.zeros(len(coords[0][sel]), np.int64)
    for k, c in enumerate(coords):
        r = r * shape[k] + c[sel]
    return r


def _entry_coords(st, p):
    """The coordinates (mode order) of the stored entries at positions ``p`` (an int64
    array), walking up the levels: a compressed level's parent is the segment holding the
    position, a dense level's the quotient by its extent, a singleton's the same position."""
    out = [None] * st.ndim
    for l in range(st.ndim - 1, -1, -1):
        lv, m = st.format.levels[l], st.format.order[l]
        if lv.is_dense:
            n = st.shape[m]
            out[m], p = p % n, p // n
        else:
            out[m] = st.crd[l][p].astype(np.int64)
            if lv.has_pos:
                p = np.searchsorted(st.pos[l], p, "right") - 1
    return out


def _arg_flat(st, coords, vals, big, size):
    """``axis=None``: the flat index of the first extreme, computing flat indices only for the
    entries that hold the extreme, and for the first implicit zero only when it can win (a
    row-major storage finds both in its first entries, its flat indices being sorted)."""
    if len(vals) == 0:
        return 0
    ext = vals.max() if big else vals.min()
    rowmajor = st.format.order == tuple(range(st.ndim))

    def first():
        match = np.flatnonzero(vals != vals if ext != ext else vals == ext)
        if rowmajor:  # (storage order is flat order: the first one)
            return int(_flat_index(_entry_coords(st, match[:1]), st.shape)[0])
        return int(_flat_index(coords(), st.shape, match).min())

    if ext != ext or len(vals) == size or (ext > 0 if big else ext < 0):
        return first()
    if rowmajor:
        lo = 0
        while lo < len(vals):  # growing prefixes: the first gap is nearly always early
            hi = min(len(vals), max(2 * lo, 1024))
            at = _flat_index(_entry_coords(st, np.arange(lo, hi, dtype=np.int64)), st.shape)
            miss = np.flatnonzero(at != np.arange(lo, hi))
            if len(miss):
                gap = lo + int(miss[0])
                break
            lo = hi
        else:
            gap = len(vals)
    else:
        r = np.sort(_flat_index(coords(), st.shape))
        miss = np.flatnonzero(r != np.arange(len(r)))
        gap = int(miss[0]) if len(miss) else len(r)
    return min(first(), gap) if ext == 0 else gap


def _sorted(g, r):
    dg = np.diff(g)
    return bool(np.all((dg > 0) | ((dg == 0) & (np.diff(r) > 0))))


def arg_method(x, axis, out, keepdims, explicit, name):
    """The scipy-style methods ``argmax``/``argmin``/``nanmax``/``nanmin`` (``out=`` and
    ``explicit=True`` refused with a TypeError naming the method)."""
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (lazysparse arrays are immutable)")
    if explicit:
        raise TypeError(f"{name}: explicit=True (only stored entries) is not supported")
    return {"argmax": argmax, "argmin": argmin, "nanmax": nanmax, "nanmin": nanmin}[name](
        x, axis=axis, keepdims=keepdims)


# -- other reductions ------------------------------------------------------------------------
def ptp(x, axis=None, keepdims=False):
    """Lazy ``numpy.ptp``: maximum minus minimum."""
    fe = _fe()
    x = _arr(x, "ptp")
    from lazysparse.api import primitives as build
    hi, lo = (build.reduction(x, axis, op, keepdims, opname="ptp") for op in ("max", "min"))
    if x.dtype == np.bool_:  # (after max's check of empty axes, as NumPy orders them)
        raise TypeError("ptp: numpy boolean subtract is not supported (operand of dtype bool)")
    return fe.subtract(hi, lo)


def count_nonzero(x, axis=None, *, keepdims=False):
    """``numpy.count_nonzero`` along axes (lazy; ``axis=None`` without keepdims gives an int,
    as NumPy does)."""
    fe = _fe()
    x = _arr(x, "count_nonzero")
    if axis is None and not keepdims:
        return x.count_nonzero() if hasattr(x, "count_nonzero") else int(fe.sum(_op("not_equal", x, 0)))
    axes = _axes(x, axis, "count_nonzero")
    if _count(x, axes) == 0:
        from lazysparse.api.creation import zeros
        return zeros(_reduced_shape(x, axes, keepdims), dtype="int64")
    return fe.sum(_op("not_equal", x, 0), axis=axis, keepdims=keepdims, dtype="int64")


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """``numpy.average``: the mean, or the weighted mean ``sum(a * w) / sum(w)`` (lazy; the
    weights' sums are checked for zero now, as NumPy raises ``ZeroDivisionError``)."""
    fe = _fe()
    name = "average"
    a = _arr(a, name)
    if weights is None:
        avg = fe.mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        from lazysparse.api.creation import asarray
        count = _count(a, _axes(a, axis, name))
        return avg, asarray(np.full(avg.shape, count, dtype=avg.dtype))
    w = _arr(weights, name)
    if a.shape != w.shape:
        if axis is None:
            raise TypeError(f"{name}: axis must be specified when shapes of a {tuple(a.shape)} and "
                            f"weights {tuple(w.shape)} differ")
        axes = _axes(a, axis, name)
        if w.ndim != len(axes) or tuple(a.shape[k] for k in axes) != tuple(w.shape):
            raise ValueError(f"{name}: shape of weights {tuple(w.shape)} must be the shape of a "
                             f"{tuple(a.shape)} along axis {axis}")
        # the weights laid along ``axes`` with size-1 axes elsewhere (a broadcast, lazily)
        shape = tuple(n if k in axes else 1 for k, n in enumerate(a.shape))
        w = w.reshape(shape) if not w.is_lazy else w.materialize().reshape(shape)
    # NumPy's: integer or bool data average in (at least) float64, whatever the weights
    dt = np.result_type(a.dtype, w.dtype, np.float64) if np.dtype(a.dtype).kind in "biu" \
        else np.result_type(a.dtype, w.dtype)
    from lazysparse.api.shaping import broadcast_to
    # the weights' sums over a's shape (never through a's values: an inf there is no NaN weight)
    wb = w if tuple(w.shape) == tuple(a.shape) else broadcast_to(w.materialize() if w.is_lazy else w, a.shape)
    ws = fe.sum(wb, axis=axis, keepdims=keepdims, dtype=dt)
    wsv = ws.materialize()
    vals = wsv.todense() if hasattr(wsv, "todense") else np.asarray(wsv)
    if np.any(np.asarray(vals) == 0):
        raise ZeroDivisionError(f"{name}: weights sum to zero, can't be normalized")
    avg = fe.divide(fe.sum(fe.multiply(a, w), axis=axis, keepdims=keepdims, dtype=dt), wsv)
    avg = avg if avg.dtype == dt else fe.astype(avg, dt)
    return (avg, wsv) if returned else avg


def norm(x, ord=None, axis=None, keepdims=False):
    """Lazy ``numpy.linalg.norm``: vector norms (any ``ord`` but complex ones), and the matrix
    norms that need no singular values (``None``/``"fro"``, 1, -1, inf, -inf)."""
    fe = _fe()
    name = "norm"
    x = _arr(x, name)
    if np.dtype(x.dtype).kind in "biu":
        x = fe.astype(x, "float64")
    if axis is None and ord is None:
        return _root(fe.sum(_sq(x), axis=None, keepdims=keepdims))
    if axis is None:
        axes = tuple(range(x.ndim))
        if x.ndim > 2:
            raise ValueError(f"{name}: improper number of dimensions to norm (operand of shape {tuple(x.shape)})")
    else:
        axes = _axes(x, axis, name)
    ax = fe.abs(x)
    if len(axes) == 1:
        if ord in (None, 2):
            return _root(fe.sum(_sq(x), axis=axes, keepdims=keepdims))
        if isinstance(ord, str):
            raise ValueError(f"{name}: invalid norm order {ord!r} for vectors")
        if ord == np.inf:
            if _count(x, axes) == 0:  # (NumPy's max here starts at 0: an empty vector's norm is 0)
                from lazysparse.api.creation import zeros
                return zeros(_reduced_shape(x, axes, keepdims), dtype=np.dtype(ax.dtype))
            return fe.max(ax, axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return fe.min(ax, axis=axes, keepdims=keepdims)
        if ord == 0:
            return fe.sum(fe.astype(_op("not_equal", x, 0), ax.dtype), axis=axes, keepdims=keepdims)
        if ord == 1:
            return fe.sum(ax, axis=axes, keepdims=keepdims)
        p = float(ord)
        return _op("power", fe.sum(_op("power", ax, p), axis=axes, keepdims=keepdims), 1.0 / p)
    if len(axes) != 2:
        raise ValueError(f"{name}: improper number of dimensions to norm (axes {axis})")
    r, c = axes
    if ord in (None, "fro"):
        return _root(fe.sum(_sq(x), axis=axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        inner, outer = (r, c) if ord in (1, -1) else (c, r)
        red = fe.max if ord in (1, np.inf) else fe.min
        out = red(fe.sum(ax, axis=inner, keepdims=True), axis=outer, keepdims=True)
        return out if keepdims else fe.sum(out, axis=axes)  # (drops the two size-1 axes)
    raise NotImplementedError(f"{name}: matrix norm ord={ord!r} needs singular values, which "
                              "lazysparse does not compute")


def _root(s):
    return _fe().sqrt(s)


# -- comparisons -----------------------------------------------------------------------------
def _as_float(x):
    fe = _fe()
    return fe.astype(x, "float64") if np.dtype(x.dtype).kind in "biu" else x


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Lazy ``numpy.isclose``: ``|a - b| <= atol + rtol * |b|`` where both are finite, equality
    otherwise (and NaN == NaN with ``equal_nan``)."""
    fe = _fe()
    a, b = _as_float(_arr(a, "isclose")), _as_float(_arr(b, "isclose"))
    fin = _op("logical_and", _op("less", fe.abs(a), np.inf), _op("less", fe.abs(b), np.inf))
    close = _op("less_equal", fe.abs(fe.subtract(a, b)), fe.add(fe.multiply(fe.abs(b), rtol), atol))
    out = fe.where(fin, close, _op("equal", a, b))
    if equal_nan:
        out = _op("logical_or", out, _op("logical_and", _is_nan(a), _is_nan(b)))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``numpy.allclose`` (eager: a Python bool)."""
    from lazysparse.api.logic import all as all_
    return bool(all_(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """``numpy.array_equal`` (eager: a Python bool; different shapes give False)."""
    from lazysparse.api.logic import all as all_
    fe = _fe()
    a1, a2 = _arr(a1, "array_equal"), _arr(a2, "array_equal")
    if tuple(a1.shape) != tuple(a2.shape):
        return False
    eq = _op("equal", a1, a2)
    if equal_nan and np.dtype(np.result_type(a1.dtype, a2.dtype)).kind in "fc":
        eq = _op("logical_or", eq, _op("logical_and", _is_nan(a1), _is_nan(a2)))
    return bool(all_(eq))


# -- products of flattened operands ----------------------------------------------------------
def _flat(x, name):
    x = _arr(x, name)
    if x.ndim == 1:
        return x
    return (x.materialize() if x.is_lazy else x).reshape(-1)


def outer(a, b):
    """Lazy ``numpy.outer`` (operands flattened first, as NumPy does)."""
    return _fe().einsum("i,j->ij", _flat(a, "outer"), _flat(b, "outer"))


def inner(a, b):
    """Lazy ``numpy.inner``: the sum over the last axes."""
    fe = _fe()
    a, b = _arr(a, "inner"), _arr(b, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return fe.multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: shapes {tuple(a.shape)} and {tuple(b.shape)} not aligned: "
                         f"{a.shape[-1]} (last dim) != {b.shape[-1]} (last dim)")
    return fe.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def vdot(a, b):
    """Lazy ``numpy.vdot``: ``sum(conj(a) * b)`` of the flattened operands."""
    fe = _fe()
    a, b = _flat(a, "vdot"), _flat(b, "vdot")
    if a.shape != b.shape:
        raise ValueError(f"vdot: vectors of sizes {a.shape[0]} and {b.shape[0]} have different sizes")
    if np.dtype(a.dtype).kind == "c":
        a = _op("conjugate", a)
    return fe.einsum("i,i->", a, b)


# -- constructors like an array --------------------------------------------------------------
def _like_shape(a, shape):
    if shape is None:
        return tuple(a.shape)
    return (operator.index(shape),) if np.ndim(shape) == 0 else tuple(operator.index(s) for s in shape)


def zeros_like(a, dtype=None, *, shape=None, format=None):
    """``numpy.zeros_like``: a sparse array stays in its format (storing nothing)."""
    from lazysparse.api.creation import zeros
    a = _arr(a, "zeros_like")
    shape = _like_shape(a, shape)
    fmt = format if format is not None else ("dense" if (a.is_lazy or a.format.is_dense
                                                        or len(shape) != a.ndim) else a.format)
    return zeros(shape, format=fmt, dtype=np.dtype(dtype if dtype is not None else a.dtype))


def full_like(a, fill_value, dtype=None, *, shape=None):
    """``numpy.full_like``: a dense array (a nonzero fill stores every element)."""
    from lazysparse.api.creation import asarray
    a = _arr(a, "full_like")
    return asarray(np.full(_like_shape(a, shape), fill_value,
                           dtype=np.dtype(dtype if dtype is not None else a.dtype)))


def ones_like(a, dtype=None, *, shape=None):
    """``numpy.ones_like`` (dense)."""
    return full_like(a, 1, dtype, shape=shape)


__all__ = ["var", "std", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "argmax", "argmin",
           "ptp", "average", "norm", "isclose", "allclose", "array_equal", "outer", "inner", "vdot",
           "zeros_like", "ones_like", "full_like", "empty_like", "count_nonzero", "argwhere", "take",
           "unique_values", "unique_counts"]

empty_like = zeros_like  # (nothing uninitialised: an empty array of zeros)


# -- selections of values and coordinates (eager) -------------------------------------------
def argwhere(x):
    """``numpy.argwhere``: the coordinates of the nonzero values, one row each (row-major)."""
    x = _arr(x, "argwhere")
    if x.ndim == 0:
        return np.zeros((int(bool(x)), 0), np.int64)
    return np.stack(x.nonzero(), axis=1)


def take(x, indices, axis=None):
    """``numpy.take``: the elements at ``indices`` along ``axis`` (of the flattened array for
    None), as indexing with an integer array (the input's format when the dimensions stay)."""
    name = "take"
    x = _arr(x, name)
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu" and not (idx.size == 0 and idx.dtype.kind == "f"):
        raise TypeError(f"{name}: indices must be integers, got dtype {idx.dtype}")
    idx = idx.astype(np.int64)
    if axis is None:
        from lazysparse.api.shaping import ravel
        x, ax = ravel(x.materialize() if x.is_lazy else x), 0
    else:
        ax = _axes(x, axis, name)[0]
    n = x.shape[ax]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"{name}: index out of bounds for axis {ax} with size {n}")
    flat = x[(slice(None),) * ax + (idx.reshape(-1),)]
    if idx.ndim == 1:
        return flat
    shape = tuple(x.shape[:ax]) + idx.shape + tuple(x.shape[ax + 1:])
    return flat.reshape(shape)


def _values_with_zero(x, name):
    """The array's values as NumPy would see them, without densifying: the stored ones, and
    zeros for the implicit ones (with their count)."""
    x = _arr(x, name)
    st = x.storage
    vals = np.asarray(st.vals).reshape(-1)
    implicit = 0 if st.format.is_dense else x.size - len(vals)
    return vals, implicit


def unique_values(x):
    """The array API's ``unique_values`` (NumPy's ``np.unique(x)``): the sorted distinct
    values, a zero among them when some element is an implicit zero; one NaN for all."""
    vals, implicit = _values_with_zero(x, "unique_values")
    if implicit:
        vals = np.concatenate([vals, np.zeros(1, vals.dtype)])
    return np.unique(vals)


def unique_counts(x):
    """The array API's ``unique_counts``: ``(values, counts)``, implicit zeros counted."""
    vals, implicit = _values_with_zero(x, "unique_counts")
    if implicit:
        vals = np.concatenate([vals, np.zeros(1, vals.dtype)])
    u, c = np.unique(vals, return_counts=True)
    if implicit:
        c[np.flatnonzero(u == 0)[:1]] += implicit - 1
    return u, c


def _np_unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
               *, equal_nan=True, **kw):
    if return_index or return_inverse or axis is not None or not equal_nan or kw:
        return NotImplemented
    return unique_counts(ar) if return_counts else unique_values(ar)


# -- NumPy dispatch (NEP-18) -----------------------------------------------------------------
def _np(fn, *, passes=(), refuse=("out", "where", "initial", "order", "subok", "device")):
    """A handler calling ``fn`` that declines (NotImplemented: NumPy raises TypeError) NumPy
    keywords lazysparse does not take."""
    def handler(*args, **kw):
        for k in refuse:
            v = kw.pop(k, None)
            if v is not None and not (k == "subok" and v is True) and not (k == "order" and v in ("K", "C")):
                return NotImplemented
        try:
            return fn(*args, **kw)
        except NotImplementedError:
            return NotImplemented
    return handler


NP_FUNCTIONS = {
    np.var: _np(var), np.std: _np(std),
    np.nansum: _np(nansum), np.nanprod: _np(nanprod), np.nanmax: _np(nanmax), np.nanmin: _np(nanmin),
    np.nanmean: _np(nanmean), np.argmax: _np(argmax), np.argmin: _np(argmin), np.ptp: _np(ptp),
    np.average: _np(average), np.linalg.norm: _np(norm), np.isclose: _np(isclose),
    np.allclose: _np(allclose), np.array_equal: _np(array_equal), np.outer: _np(outer),
    np.inner: _np(inner), np.vdot: _np(vdot), np.zeros_like: _np(zeros_like),
    np.ones_like: _np(ones_like), np.full_like: _np(full_like), np.empty_like: _np(zeros_like),
    np.count_nonzero: _np(count_nonzero), np.argwhere: _np(argwhere),
    np.take: _np(take, refuse=("out", "mode")), np.unique: _np_unique,
}

