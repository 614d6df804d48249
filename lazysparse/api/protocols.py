"""NumPy's protocols: the NEP-18 ``__array_function__`` table of the NumPy functions lazysparse
implements (lazily), and NEP-13 ``__array_ufunc__`` for plain ufunc calls. It sits on top of the
api package because its table names functions from every module of it.
"""
from __future__ import annotations

import builtins

import numpy as np

from lazysparse.api import construct as _construct
from lazysparse.api import joining, logic, shaping, statistics, ufuncs
from lazysparse.api import primitives as build
from lazysparse.api.base import ArrayBase
from lazysparse.api.operations import (
    _as_array, checked, clip, dot, einsum, matmul, max, mean, min, positive, prod, sum, tensordot,
    transpose, where)
from lazysparse.ir import ops


def _plain(out=None, **kw):
    """True when no NumPy-only keyword (out=, where=, initial=, ...) was given."""
    return out is None and not kw


def _np_reduce(fn, has_dtype):
    def handler(a, axis=None, *args, **kw):
        names = ("dtype", "out", "keepdims") if has_dtype else ("out", "keepdims")
        if len(args) > len(names):
            return NotImplemented
        kw.update(zip(names, args))
        dtype, keepdims = kw.pop("dtype", None), kw.pop("keepdims", False)
        if not _plain(**kw):
            return NotImplemented
        if has_dtype:
            return fn(a, axis, keepdims, dtype)
        return fn(a, axis, keepdims)
    return handler


def _np_einsum(subscripts, *operands, out=None, optimize=False, **kw):
    return einsum(subscripts, *operands) if _plain(out, **kw) else NotImplemented


def _np_dot(a, b, out=None):
    return dot(a, b) if out is None else NotImplemented


def _np_where(*args):
    if len(args) == 1:  # NumPy's one-argument where is nonzero
        return _as_array(args[0], "where").nonzero()
    return where(*args) if len(args) == 3 else NotImplemented


def _np_clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kw):
    if out is not None or kw:
        return NotImplemented
    return clip(a, a_min if min is None else min, a_max if max is None else max)


def _np_diagonal(a, offset=0, axis1=0, axis2=1):
    if getattr(a, "ndim", 0) != 2 or (axis1 % 2, axis2 % 2) != (0, 1):
        return NotImplemented
    return a.diagonal(offset)


def _np_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if dtype is not None or out is not None:
        return NotImplemented
    d = _np_diagonal(a, offset, axis1, axis2)
    return d if d is NotImplemented else d.sum()


def _np_reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    shape = newshape if shape is None else shape
    if shape is None or copy is False:
        return NotImplemented
    return a.reshape(shape, order=order)


def _dtype_of(x):
    return x.dtype if isinstance(x, ArrayBase) else x


def _np_diag(v, k=0):
    """``np.diag``: a 2-d array's ``k``-th diagonal, or a 1-d array on the ``k``-th diagonal of
    a sparse square matrix (CSR, as pydata/sparse gives a sparse one)."""
    if v.ndim == 2:
        return v.diagonal(k)
    if v.ndim != 1:
        raise ValueError(f"np.diag: input must be 1-d or 2-d, got shape {v.shape}")
    from lazysparse.api.construct import diags
    return diags(v, offsets=k)


def _np_size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


def _np_copy(a, order="K", subok=False):
    """``np.copy``: a concrete copy that shares no buffer (``.copy()``)."""
    return a.copy()


_FUNCTIONS = {
    np.ndim: lambda a: a.ndim,
    np.shape: lambda a: a.shape,
    np.size: _np_size,
    np.copy: _np_copy,
    np.result_type: lambda *xs: np.result_type(*[_dtype_of(x) for x in xs]),
    np.iscomplexobj: lambda x: x.dtype.kind == "c",
    np.isrealobj: lambda x: x.dtype.kind != "c",
    np.diag: _np_diag,
    np.tril: lambda m, k=0: _construct.tril(m, k),
    np.triu: lambda m, k=0: _construct.triu(m, k),
    np.einsum: _np_einsum,
    np.diagonal: _np_diagonal,
    np.trace: _np_trace,
    np.reshape: _np_reshape,
    np.nonzero: lambda a: a.nonzero(),
    **joining.NP_FUNCTIONS,
    **logic.NP_FUNCTIONS,
    **statistics.NP_FUNCTIONS,
    np.dot: _np_dot,
    np.tensordot: lambda a, b, axes=2: tensordot(a, b, axes),
    np.transpose: lambda a, axes=None: transpose(a, axes),
    np.where: _np_where,
    np.clip: _np_clip,
    np.sum: _np_reduce(sum, True),
    np.prod: _np_reduce(prod, True),
    np.mean: _np_reduce(mean, True),
    np.max: _np_reduce(max, False),
    np.amax: _np_reduce(max, False),
    np.min: _np_reduce(min, False),
    np.amin: _np_reduce(min, False),
    np.real: lambda a: a.real if isinstance(a, ArrayBase) else np.real(a),
    np.imag: lambda a: a.imag if isinstance(a, ArrayBase) else np.imag(a),
    **ufuncs.NP_FUNCTIONS,
    **shaping.NP_FUNCTIONS,
}


def register_numpy(table):
    """Add NumPy functions (``{np.fn: handler}``) to the NEP-18 dispatch: the modules that are
    built on this one (api/ufuncs.py, api/shaping.py) register theirs once the package is loaded."""
    _FUNCTIONS.update(table)


def _known_type(t):
    import scipy.sparse as sp
    return issubclass(t, (ArrayBase, np.ndarray, np.generic, sp.spmatrix, sp.sparray))


def array_function(func, types, args, kwargs):
    """NEP-18 ``__array_function__``: the NumPy functions lazysparse implements, lazily."""
    handler = _FUNCTIONS.get(func)
    if handler is None or not builtins.all(_known_type(t) for t in types):
        return NotImplemented
    return handler(*args, **kwargs)


def _known_input(x):
    import numbers
    return isinstance(x, numbers.Number) or _known_type(type(x))


def array_ufunc(ufunc, method, inputs, kwargs):
    """NEP-13 ``__array_ufunc__``: plain ufunc calls (no other keywords) stay lazy; with ``out=``
    one NumPy array (``x += A @ y`` on a NumPy ``x``), the result is computed into it."""
    if method == "__call__" and set(kwargs) == {"out"}:
        return _into_out(ufunc, inputs, kwargs["out"])
    if method != "__call__" or kwargs or not builtins.all(_known_input(x) for x in inputs):
        return NotImplemented
    if ufunc is np.matmul:
        return matmul(*inputs)
    if ufunc is np.positive:
        return positive(*inputs)
    if ufunc is np.divmod:  # (two outputs: the quotient and the remainder, each lazy)
        return tuple(checked(build.elementwise(op, *inputs, opname="divmod"), "divmod")
                     for op in ("floor_divide", "remainder"))
    op = ops.UFUNC_NAMES.get(ufunc.__name__)
    if op is None or ops.OPS[op][1] != ufunc.nin:
        return NotImplemented
    return checked(build.elementwise(op, *inputs, opname=ufunc.__name__), ufunc.__name__)


def _into_out(ufunc, inputs, out):
    """``ufunc(*inputs, out=out)``: the lazy result, computed and written into ``out`` (one NumPy
    array, its dtype kept under NumPy's ``same_kind`` rule). An ``out`` that is no NumPy array
    (a lazysparse array is immutable) defers to NumPy, which says what it refuses."""
    out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if type(out) is not np.ndarray or not out.flags.writeable:
        return NotImplemented
    result = array_ufunc(ufunc, "__call__", inputs, {})
    if result is NotImplemented or isinstance(result, tuple):
        return NotImplemented
    from lazysparse.api.conversion import write_out
    return write_out(result, out, ufunc.__name__)
