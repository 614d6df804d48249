"""The lazy front end: NumPy-style functions that build DAG nodes and check them eagerly. Every
function here returns a new lazy ``Array``; shapes, dtypes, axes and subscripts are validated when
the node is built, so errors point at the user's line, not at ``compute()``."""
from __future__ import annotations

import builtins

import numpy as np

from lazysparse.api.base import ArrayBase

from lazysparse.formats import Storage

from lazysparse.api import primitives as build
from lazysparse.api.creation import UnsupportedFormatError, _format, float16_message, operand_error, result_format  # noqa: F401  (re-exported)
from lazysparse.api.primitives import reshape_keepdims  # noqa: F401  (re-exported)
from lazysparse.formats import resolve_format
from lazysparse.formats.storage import VALUE_DTYPES
from lazysparse.ir import ops
from lazysparse.ir.einsum import label_name, parse_einsum
from lazysparse.ir.nodes import Access, Call, Const, Index, Statement
from lazysparse.ir.notation import Affine, Bin, Neg, Num, Ref, children, parse_notation
from lazysparse.errors import shown

_IDX = build._IDX



_FAST = frozenset(VALUE_DTYPES)


def _as_array(x, opname):
    """``x`` as an ``Array`` (NumPy, scipy, scalars go through ``asarray``)."""
    if isinstance(x, ArrayBase):
        return x
    if type(x) is np.ndarray and x.dtype in _FAST:  # the common case, without asarray's checks
        return ArrayBase._from_storage(Storage.from_dense(x))
    from lazysparse.api.creation import asarray
    try:
        return asarray(x)
    except TypeError:
        raise operand_error(x, opname) from None


def _shapes(arrs):
    return ", ".join(str(tuple(a.shape)) for a in arrs)


# -- contractions ---------------------------------------------------------------------------------
def _squeeze(x, axes):
    """``x`` without its size-1 ``axes`` (they read coordinate 0): the broadcast view of NumPy."""
    idx = iter(_IDX)
    subs = tuple(Const(0) if k in axes else next(idx) for k in range(x.ndim))
    keep = tuple(s for s in subs if isinstance(s, Index))
    shape = tuple(n for k, n in enumerate(x.shape) if k not in axes)
    return build._node_array(Statement(keep, Access(0, subs), "sum", str(x.dtype)), (x,), shape, x.dtype)


def _contract(out, terms, opname, format=None, name=label_name):
    """``build.contraction`` with NumPy's size-1 broadcasting of indices across operands.

    ``terms`` are ``(Array, labels)``; a label repeated within one operand is a diagonal, whose
    extents must agree exactly (as in NumPy).

    Every contraction (einsum, matmul, dot, tensordot) goes through here, which adds NumPy's size-1
    broadcasting on top of ``build.contraction``.
    """
    fmt = _format(format, len(out), opname)
    labels = {l for _, subs in terms for l in subs}
    if len(labels) > len(_IDX):
        raise ValueError(f"{opname}: {len(labels)} distinct indices are more than the {len(_IDX)} "
                         f"supported; operand shapes {_shapes([a for a, _ in terms])}")
    if not any(1 in a.shape for a, _ in terms):
        # nothing to broadcast: contraction() checks extents; on a mistake, fall through to the
        # checks below, whose messages name the user's subscripts
        try:
            return build.contraction(tuple(out), terms, format=fmt, opname=opname)
        except ValueError:
            pass
    arrs = [a for a, _ in terms]
    extent = {}
    for k, (a, subs) in enumerate(terms):
        mine = {}
        for l, n in zip(subs, a.shape):
            if mine.setdefault(l, n) != n:
                raise ValueError(f"{opname}: operand {k} of shape {tuple(a.shape)} repeats index "
                                 f"{shown(name(l))} over dimensions of different sizes ({mine[l]} != {n})")
        for l, n in mine.items():
            prev = extent.get(l, 1)
            if n != 1 and prev != 1 and n != prev:
                raise ValueError(f"{opname}: index {shown(name(l))} has size {prev} in one operand but {n} "
                                 f"in operand {k}; operand shapes {_shapes(arrs)}")
            if n != 1:
                extent[l] = n
            extent.setdefault(l, 1)
    fixed = []
    for a, subs in terms:
        axes = {k for k, l in enumerate(subs) if a.shape[k] == 1 and extent[l] != 1}
        if axes:
            a, subs = _squeeze(a, axes), tuple(l for k, l in enumerate(subs) if k not in axes)
        fixed.append((a, tuple(subs)))
    return build.contraction(tuple(out), fixed, format=fmt, opname=opname)


def einsum(subscripts, *operands, format=None):
    """Lazy Einstein summation with NumPy's grammar.

    >>> import numpy as np, lazysparse as ls
    >>> ls.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((3, 4))).shape
    (2, 4)
    """
    if not isinstance(subscripts, str):
        raise TypeError("einsum: subscripts must be a string such as 'ij,jk->ik'; the interleaved "
                        f"form einsum(op, sublist, ...) is not supported (got {type(subscripts).__name__})")
    if not operands:
        raise ValueError("einsum: no operands given")
    key = None
    if format is None and all(isinstance(a, ArrayBase) for a in operands):
        key = (subscripts, *[(a.shape, a.dtype) for a in operands])
        hit = _EINSUM.get(key)
        if hit is not None:  # parsed, checked and built before for these shapes and dtypes
            stmt, shape, dtype, fmt = hit
            return ArrayBase._from_node(build.make_node(stmt, operands, shape, dtype, fmt))
    arrs = [_as_array(x, "einsum") for x in operands]
    ins, out = parse_einsum(subscripts, [a.shape for a in arrs])
    return _remember(_EINSUM, key, _contract(out, list(zip(arrs, ins)), "einsum", format), arrs)


_EINSUM = {}


def _remember(cache, key, out, operands):
    """Keep what a build cache (``_EINSUM``, ``_MATMUL``) replays for ``key``: ``out``'s statement,
    shape, dtype and format, when ``out`` is one node over exactly ``operands``."""
    node = out._node
    if key is not None and node is not None and len(node.children) == len(operands) and \
            all(c is a for c, a in zip(node.children, operands)):
        if len(cache) > build._CACHE_MAX:
            cache.clear()
        cache[key] = (node.stmt, node.shape, node.dtype, node.format)
    return out


def matmul(a, b, format=None):
    """Lazy ``a @ b`` with NumPy semantics: 1-D operands are promoted then dropped, batch
    dimensions broadcast.

    >>> import numpy as np, lazysparse as ls
    >>> ls.matmul(np.ones((5, 2, 3)), np.ones(3)).shape
    (5, 2)
    """
    key = None
    if type(a) is np.ndarray or type(b) is np.ndarray:
        # wrapped first (a view, no copy), so that A @ x with a NumPy x takes the lookup below
        a, b = _as_array(a, "matmul"), _as_array(b, "matmul")
    if format is None and isinstance(a, ArrayBase) and isinstance(b, ArrayBase):
        key = (a.shape, b.shape, a.dtype, b.dtype)
        hit = _MATMUL.get(key)
        if hit is not None:  # the same shapes and dtypes were checked and built before
            stmt, shape, dtype, fmt = hit
            return ArrayBase._from_node(build.make_node(stmt, (a, b), shape, dtype, fmt))
    a, b = _as_array(a, "matmul"), _as_array(b, "matmul")
    return _remember(_MATMUL, key, _matmul(a, b, format), (a, b))


_MATMUL = {}


def _matmul(a, b, format):
    for k, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul: input operand {k} does not have enough dimensions (has 0, "
                             f"needs at least 1); operand shapes {_shapes((a, b))}")
    ka, kb = a.shape[-1], b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        raise ValueError(f"matmul: mismatch in the contracted dimension ({ka} != {kb}) for operands "
                         f"of shapes {_shapes((a, b))}")
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    batch = build.broadcast_shapes("matmul", [batch_a, batch_b])
    N, K, M = 100, 101, 102  # labels of the core dims; batch dims are 0..len(batch)-1
    nb = len(batch)
    sa = tuple(range(nb - len(batch_a), nb)) + ((N, K) if a.ndim > 1 else (K,))
    sb = tuple(range(nb - len(batch_b), nb)) + ((K, M) if b.ndim > 1 else (K,))
    out = tuple(range(nb)) + ((N,) if a.ndim > 1 else ()) + ((M,) if b.ndim > 1 else ())
    return _contract(out, [(a, sa), (b, sb)], "matmul", format, name=lambda l: f"axis {l}")


def dot(a, b):
    """Lazy ``numpy.dot``: scalars multiply, otherwise sum over the last axis of ``a`` and the
    second-to-last of ``b``.

    >>> import numpy as np, lazysparse as ls
    >>> ls.asarray(np.ones((2, 3))).dot(np.ones(3)).shape
    (2,)
    """
    a, b = _as_array(a, "dot"), _as_array(b, "dot")
    if a.ndim == 0 or b.ndim == 0:
        return build.elementwise("multiply", a, b, opname="dot")
    jb = b.ndim - 2 if b.ndim > 1 else 0
    if a.shape[-1] != b.shape[jb]:
        raise ValueError(f"dot: shapes {tuple(a.shape)} and {tuple(b.shape)} not aligned: "
                         f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[jb]} (dim {jb})")
    sa = tuple(range(a.ndim))
    sb = tuple(sa[-1] if k == jb else a.ndim + k for k in range(b.ndim))
    out = sa[:-1] + tuple(l for k, l in enumerate(sb) if k != jb)
    return _contract(out, [(a, sa), (b, sb)], "dot", name=lambda l: f"axis {l}")


def _norm_axes(axes, ndim, opname, shape):
    return build.normalize_axes(axes, ndim, opname, shape)


def tensordot(a, b, axes=2, format=None):
    """Lazy ``numpy.tensordot``: ``axes`` is an int N (last N of ``a`` with first N of ``b``) or
    a pair of axis sequences.

    >>> import numpy as np, lazysparse as ls
    >>> ls.tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 5))).shape
    (2, 5)
    """
    a, b = _as_array(a, "tensordot"), _as_array(b, "tensordot")
    shapes = _shapes((a, b))
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: axes={n} is invalid for operands of shapes {shapes}")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise ValueError("tensordot: axes must be an int or a pair of axis sequences, "
                             f"got {shown(axes)}") from None
        ax_a = _norm_axes(ax_a, a.ndim, "tensordot", tuple(a.shape))
        ax_b = _norm_axes(ax_b, b.ndim, "tensordot", tuple(b.shape))
        if len(ax_a) != len(ax_b):
            raise ValueError(f"tensordot: {len(ax_a)} axes of the first operand paired with "
                             f"{len(ax_b)} of the second; operand shapes {shapes}")
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: shape-mismatch for sum: axis {i} of the first operand has "
                             f"size {a.shape[i]} but axis {j} of the second has {b.shape[j]}; "
                             f"operand shapes {shapes}")
    sa = tuple(range(a.ndim))
    pair = dict(zip(ax_b, ax_a))
    sb = tuple(pair[k] if k in pair else a.ndim + k for k in range(b.ndim))
    out = tuple(l for l in sa if l not in ax_a) + tuple(l for k, l in enumerate(sb) if k not in pair)
    return _contract(out, [(a, sa), (b, sb)], "tensordot", format, name=lambda l: f"axis {l}")


# -- elementwise ----------------------------------------------------------------------------------
_VALUE_NAMES = frozenset(str(d) for d in VALUE_DTYPES)
_ORDERING_OPS = frozenset(("maximum", "minimum", "relu"))


def check_loop(op, arg_dtypes, in_dtypes, out_dtype, opname):
    """Reject, when the line is written, an elementwise loop no kernel can run: NumPy's type rules
    can pick a dtype lazysparse does not store (``exp`` of bool is float16, ``bool ** bool`` is
    int8), and complex values have no order for maximum/minimum/relu."""
    for d in (*in_dtypes, out_dtype):
        if d not in _VALUE_NAMES:
            raise TypeError(f"{opname}: NumPy computes {op} of {', '.join(arg_dtypes)} operands in {d}, "
                            f"which lazysparse does not support; cast the operands first, e.g. "
                            f"x.astype('float32'); supported: {', '.join(sorted(_VALUE_NAMES))}")
    if op in _ORDERING_OPS and any(d.startswith("complex") for d in in_dtypes):
        raise TypeError(f"{opname}: complex values have no ordering ({op} of {', '.join(arg_dtypes)})")


_PASSED = {}  # id(statement) -> statement whose loop passed check_loop


def checked(out, opname):
    """``out`` (a fresh elementwise node) after ``check_loop`` on its operation."""
    node = out._node
    stmt = node.stmt
    call = stmt.expr
    # the verdict depends on the statement alone (its op and dtypes), and statements are interned:
    # a repeated line skips it (the entry holds the statement, so its id is not reused)
    if _PASSED.get(id(stmt)) is not stmt:
        # (per argument: an array passed twice is one child, build._shared)
        check_loop(call.op, [str(node.children[a.operand].dtype) for a in call.args], call.in_dtypes,
                   call.dtype, opname)
        if len(_PASSED) > build._CACHE_MAX:
            _PASSED.clear()
        _PASSED[id(stmt)] = stmt
    if call.op == "power" and call.dtype[0] in "iu":
        # an exponent known now (a scalar or a concrete 0-d array): NumPy refuses negative ones
        base, e = (node.children[a.operand] for a in call.args)
        if e.ndim == 0 and not e.is_lazy and e.storage.vals.reshape(()).item() < 0 and out.size:
            raise ValueError(f"{opname}: integers to negative integer powers are not allowed "
                             f"(exponent {e.storage.vals.reshape(()).item()}, base dtype {base.dtype})")
    return out


def _binary(op, name):
    def f(a, b):
        return checked(build.elementwise(op, a, b, opname=name), name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Lazy elementwise ``numpy.{name}`` with broadcasting."
    return f


def _unary(op, name):
    def f(x):
        return checked(build.elementwise(op, x, opname=name), name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Lazy elementwise ``{name}``."
    return f


add = _binary("add", "add")
subtract = _binary("subtract", "subtract")
multiply = _binary("multiply", "multiply")
divide = _binary("divide", "divide")
maximum = _binary("maximum", "maximum")
minimum = _binary("minimum", "minimum")

_UNARY = {"exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt",
          "abs": "absolute", "negative": "negative", "sin": "sin", "cos": "cos", "tanh": "tanh",
          "sigmoid": "sigmoid", "relu": "relu"}
exp, log, log1p, expm1, sqrt, abs, negative, sin, cos, tanh, sigmoid, relu = (
    _unary(op, name) for name, op in _UNARY.items())


def where(cond, x, y):
    """Lazy ``numpy.where(cond, x, y)``; ``cond`` is read as bool."""
    return checked(build.elementwise("where", cond, x, y, opname="where"), "where")


def astype(x, dtype):
    """Lazy cast of ``x`` to ``dtype`` (one of lazysparse's value dtypes).

    >>> import numpy as np, lazysparse as ls
    >>> ls.astype(np.ones(3), "float32").dtype
    dtype('float32')
    """
    x = _as_array(x, "astype")
    dt = value_dtype(dtype, "astype")
    idx = _IDX[:x.ndim]
    call = Call("cast", (Access(0, idx),), (str(x.dtype),), str(dt))
    return build._node_array(Statement(idx, call, "sum", str(dt)), (x,), x.shape, dt)


def positive(x):
    """Lazy ``numpy.positive`` (``+x``): a new array equal to ``x``, as NumPy's is a copy.

    >>> import numpy as np, lazysparse as ls
    >>> a = ls.asarray(np.arange(3.0))
    >>> (+a) is a, (+a).todense().tolist()
    (False, [0.0, 1.0, 2.0])
    """
    x = _as_array(x, "positive")
    if x.dtype == np.bool_:  # NumPy has no bool loop for it either
        raise TypeError("positive: not defined for a bool array (NumPy's ufunc 'positive' has no bool loop)")
    return astype(x, x.dtype)


def transpose(x, axes=None):
    """Lazy ``numpy.transpose``: reverses the axes, or permutes them by ``axes``."""
    x = _as_array(x, "transpose")
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    else:
        if not hasattr(axes, "__len__"):
            axes = (axes,)  # NumPy takes one int for a 1-d array
        if len(axes) != x.ndim:
            raise ValueError(f"transpose: axes {tuple(axes)} don't match an array of shape {tuple(x.shape)}")
        # integers only, in range, no repeats: 1.5 or '0' must not be truncated into an axis
        axes = build.normalize_axes(axes, x.ndim, "transpose", tuple(x.shape))
    return build.relabel(x, tuple(axes), opname="transpose")


# -- reductions -----------------------------------------------------------------------------------
def reduce_dtype(dtype, opname):
    """The accumulator dtype a user asked a reduction for (None: NumPy's rule), checked now."""
    return None if dtype is None else value_dtype(dtype, opname)


def value_dtype(dtype, opname):
    """``np.dtype(dtype)`` when it is one of lazysparse's value dtypes, else a TypeError."""
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError):
        raise TypeError(f"{opname}: {shown(dtype)} is not a dtype") from None
    if dt not in VALUE_DTYPES:
        if dt == np.float16:
            raise TypeError(float16_message(opname, "the requested dtype"))
        raise TypeError(f"{opname}: unsupported dtype {dt}; expected one of "
                        f"{', '.join(map(str, VALUE_DTYPES))}")
    return dt


def sum(x, axis=None, keepdims=False, dtype=None):
    """Lazy ``numpy.sum``."""
    return build.reduction(_as_array(x, "sum"), axis, "sum", keepdims, reduce_dtype(dtype, "sum"),
                           opname="sum")


def prod(x, axis=None, keepdims=False, dtype=None):
    """Lazy ``numpy.prod``."""
    return build.reduction(_as_array(x, "prod"), axis, "prod", keepdims, reduce_dtype(dtype, "prod"),
                           opname="prod")


def max(x, axis=None, keepdims=False):
    """Lazy ``numpy.max``."""
    return build.reduction(_as_array(x, "max"), axis, "max", keepdims, opname="max")


def min(x, axis=None, keepdims=False):
    """Lazy ``numpy.min``."""
    return build.reduction(_as_array(x, "min"), axis, "min", keepdims, opname="min")


def mean(x, axis=None, keepdims=False, dtype=None):
    """Lazy ``numpy.mean``: integers and bools average in float64, floats keep their dtype.

    >>> import numpy as np, lazysparse as ls
    >>> ls.mean(np.ones((2, 3), "float32"), axis=0).dtype
    dtype('float32')
    """
    x = _as_array(x, "mean")
    dtype = reduce_dtype(dtype, "mean")
    if dtype is None:
        dtype = np.float64 if np.dtype(x.dtype).kind in "biu" else x.dtype
    s = build.reduction(x, axis, "sum", keepdims, dtype, opname="mean")
    count = x.size // s.size if s.size else 1
    # a true division, as NumPy does; an empty reduction gives 0/0 = nan like NumPy
    out = build.elementwise("divide", s, count, opname="mean")
    if out.dtype != dtype:
        # NumPy divides into the accumulator: mean(dtype=int64) truncates, dtype=bool is != 0
        out = astype(out, dtype)
    return out


def clip(x, a_min=None, a_max=None):
    """Lazy ``numpy.clip``: ``minimum(maximum(x, a_min), a_max)``, either bound None for none."""
    x = _as_array(x, "clip")
    if a_min is None and a_max is None:
        raise ValueError("clip: give a_min, a_max or both (NumPy's rule)")
    if a_min is not None:
        x = maximum(x, a_min)
    return x if a_max is None else minimum(x, a_max)
