"""Building lazy nodes: the primitives every front-end operation is written with, ``elementwise``
(NumPy broadcasting, Python scalars weakly typed as NEP 50 says), ``contraction`` (a general
einsum-like node) and ``reduction``. Shapes and dtypes are checked here, when the user writes the
line."""
from __future__ import annotations

import numbers

import numpy as np

from lazysparse.api.base import ArrayBase

from lazysparse.ir import ops
from lazysparse.ir.nodes import Access, Call, Const, Index, Statement, intern
from lazysparse.ir.dag import make_node
from lazysparse.errors import shown

_IDX = tuple(Index(f"i{k}") for k in range(64))
_DT = {}





def as_operand(x, opname):
    """An ``Array`` for a tensor-like, or ``(None, pytype)`` marker for a Python scalar."""
    if isinstance(x, ArrayBase):
        return x
    if isinstance(x, (bool, np.bool_)) and not isinstance(x, np.ndarray):
        return ("pybool", bool(x))
    if isinstance(x, numbers.Integral) and not isinstance(x, np.generic):
        return ("pyint", int(x))
    if isinstance(x, numbers.Real) and not isinstance(x, np.generic):
        return ("pyfloat", float(x))
    if isinstance(x, numbers.Complex) and not isinstance(x, np.generic):
        return ("pycomplex", complex(x))
    from lazysparse.api.creation import asarray, operand_error
    try:
        return asarray(x)
    except TypeError:
        raise operand_error(x, opname) from None


def _scalar_array(value, dtype, opname="operation"):
    # A Python scalar in a loop (2 * A, A / n) is the same 0-d array each time: arrays are
    # immutable, and a kernel's call marshals an operand again only when it changes. Zeros and
    # NaN are not kept: -0.0 == 0.0 (their results differ: 1 / -0.0) and NaN equals nothing.
    key = (dtype, type(value), value)
    hit = _SCALARS.get(key) if value == value and value != 0 else None
    if hit is not None:
        return hit
    out = _new_scalar_array(value, dtype, opname)
    if value == value and value != 0:
        if len(_SCALARS) >= 256:
            _SCALARS.clear()
        _SCALARS[key] = out
    return out


_SCALARS = {}


def _new_scalar_array(value, dtype, opname):
    from lazysparse.api.creation import asarray
    try:
        v = np.asarray(value, dtype=np.dtype(dtype))
    except OverflowError:  # NumPy's own words, with the operation named (and the value cut short)
        raise OverflowError(f"{opname}: Python integer {shown(value)} out of bounds for {dtype}") from None
    if v.dtype == np.float16:  # (NumPy's loop for these operands: arctan2 of bools)
        from lazysparse.api.creation import float16_message
        raise TypeError(float16_message(opname, "NumPy's dtype for these operands"))
    return asarray(v)


def broadcast_shapes(opname, shapes):
    first = shapes[0]
    if all(s == first for s in shapes):
        return tuple(first)
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{opname}: operands could not be broadcast together with shapes "
                         f"{' '.join(str(tuple(s)) for s in shapes)} (inconsistent shapes)") from None


_PYSCALARS = (bool, int, float, complex)
# (op, per-argument (shape, dtype) or Python scalar type) -> (stmt, shape, dtype, in_dtypes):
# a repeated elementwise line skips broadcasting and statement construction (checked once)
_ELEMENTWISE = {}
_CACHE_MAX = 4096


def elementwise(op: str, *args, opname=None):
    """Lazy elementwise ``op`` over arrays and scalars with NumPy broadcasting."""
    if op == "power" and len(args) == 2 and _squares(*args):
        op, args = "square", args[:1]
    key = (op, *[(a.shape, a.dtype) if isinstance(a, ArrayBase) else type(a) for a in args])
    shared = len(args) > 1 and _shared(args)
    if shared:  # one slot for an array passed twice: another statement
        ids = [id(a) if isinstance(a, ArrayBase) else None for a in args]
        key += (tuple([-1 if i is None else ids.index(i) for i in ids]),)
    hit = _ELEMENTWISE.get(key)
    if hit is not None:
        stmt, shape, dtype, in_dtypes = hit
        if shared:
            children, seen = [], set()
            for a, d in zip(args, in_dtypes):
                if not isinstance(a, ArrayBase):
                    children.append(_scalar_array(a, d, opname or op))
                elif id(a) not in seen:
                    seen.add(id(a))
                    children.append(a)
            children = tuple(children)
        else:
            children = tuple([a if isinstance(a, ArrayBase) else _scalar_array(a, d, opname or op)
                              for a, d in zip(args, in_dtypes)])
        return ArrayBase._from_node(make_node(stmt, children, shape, dtype))
    out = _elementwise(op, args, opname or op)
    if all(isinstance(a, ArrayBase) or type(a) in _PYSCALARS for a in args):
        if len(_ELEMENTWISE) > _CACHE_MAX:
            _ELEMENTWISE.clear()
        node = out._node
        _ELEMENTWISE[key] = (node.stmt, node.shape, node.dtype, node.stmt.expr.in_dtypes)
    return out


def _squares(base, exponent) -> bool:
    """``base ** 2`` with a Python 2 that leaves the dtype as it is: NumPy computes it as
    ``square(base)`` (its scalar-power fast path), and so do we, the same values. A power with
    a 0-d exponent is a call of C's ``pow`` wherever the exponent is not a literal (a fused
    kernel reads it at run time: ``(A @ x) ** 2`` summed took 0.6 ms of pow calls on
    github-social)."""
    if not isinstance(base, ArrayBase) or type(exponent) not in (int, float) or exponent != 2:
        return False
    kind = base.dtype.kind
    return kind in "fc" or (kind in "iu" and type(exponent) is int)


def _shared(args) -> bool:
    """Whether one lazysparse array is passed more than once (``A * A``, ``where(A > 0, A, B)``
    with the same ``A``): it then gets one operand slot, and the lowerer one iterator for its
    equal accesses (compiler/plan/patterns.py), instead of co-iterating two copies of one pattern."""
    a0, a1 = args[0], args[1]
    if len(args) == 2:
        return a0 is a1 and isinstance(a0, ArrayBase)
    arrs = [id(a) for a in args if isinstance(a, ArrayBase)]
    return len(set(arrs)) != len(arrs)


def _elementwise(op, args, opname):
    operands = [as_operand(a, opname) for a in args]
    arr_dtypes = tuple(o[0] if isinstance(o, tuple) else str(o.dtype) for o in operands)
    in_dtypes, out_dtype = ops.resolve(op, arr_dtypes)
    shapes = [o.shape for o in operands if not isinstance(o, tuple)]
    shape = broadcast_shapes(opname, shapes) if shapes else ()
    nd = len(shape)
    out_idx = _IDX[:nd]
    children = []
    accs = []
    slot = {}  # a lazysparse array passed as an argument already among the children -> its slot
    for arg, o, d in zip(args, operands, in_dtypes):
        if isinstance(o, tuple):
            o = _scalar_array(o[1], d, opname)
        k = slot.get(id(arg)) if isinstance(arg, ArrayBase) else None
        if k is None:
            k = len(children)
            children.append(o)
            if isinstance(arg, ArrayBase):
                slot[id(arg)] = k
        # right-align; broadcast (size-1 or missing) axes read coordinate 0
        sub = []
        off = nd - o.ndim
        for ax, s in enumerate(o.shape):
            sub.append(Const(0) if (s == 1 and shape[off + ax] != 1) else out_idx[off + ax])
        accs.append(Access(k, tuple(sub)))
    expr = Call(op, tuple(accs), in_dtypes, out_dtype)
    return _node_array(Statement(out_idx, expr, "sum", out_dtype), tuple(children), shape, out_dtype)


def _node_array(stmt, children, shape, dtype, format=None):
    stmt = intern(stmt)
    dt = _DT.get(dtype)
    if dt is None:
        dt = _DT.setdefault(dtype, np.dtype(dtype))
    return ArrayBase._from_node(make_node(stmt, children, tuple(shape), dt, format))


def contraction(out_subs, terms, *, reduce="sum", format=None, opname="einsum"):
    """General lazy contraction: ``out[out_subs] = reduce over other indices of prod(terms)``.

    ``terms`` is a list of ``(Array, subscripts)`` where subscripts are tuples of ints naming
    index variables (repeats inside one term allowed: a diagonal). Index extents must agree.
    """
    extents = {}
    for arr, subs in terms:
        if len(subs) != arr.ndim:
            raise ValueError(f"{opname}: operand of shape {arr.shape} given {len(subs)} subscripts")
        for s, n in zip(subs, arr.shape):
            if s in extents and extents[s] != n:
                if extents[s] == 1 or n == 1:
                    raise ValueError(f"{opname}: size-1 broadcasting of an index is not supported "
                                     f"(index of extents {extents[s]} and {n})")
                raise ValueError(f"{opname}: index has mismatched extents {extents[s]} and {n}")
            extents[s] = n
    for s in out_subs:
        if s not in extents:
            raise ValueError(f"{opname}: output index {s} does not appear in any operand")
    if len(set(out_subs)) != len(out_subs):
        raise ValueError(f"{opname}: output subscripts repeat an index")
    key = (tuple(out_subs), tuple(subs for _, subs in terms), tuple(a.dtype for a, _ in terms), reduce)
    hit = _CONTRACTIONS.get(key)
    if hit is None:
        hit = _CONTRACTIONS[key] = _contraction_stmt(out_subs, terms, extents, reduce)
    stmt, cur = hit
    shape = tuple(extents[s] for s in out_subs)
    return _node_array(stmt, tuple(a for a, _ in terms), shape, cur, format)


_CONTRACTIONS = {}


def _contraction_stmt(out_subs, terms, extents, reduce):
    names = {s: _IDX[k] for k, s in enumerate(list(out_subs) + [s for s in extents if s not in out_subs])}
    dtypes = [str(a.dtype) for a, _ in terms]
    accs = [Access(k, tuple(names[s] for s in subs)) for k, (_, subs) in enumerate(terms)]
    expr = accs[0]
    cur = dtypes[0]
    for a, d in zip(accs[1:], dtypes[1:]):
        ins, cur2 = ops.resolve("multiply", (cur, d))
        expr = Call("multiply", (expr, a), ins, cur2)
        cur = cur2
    # bool sums are logical or, as in NumPy's einsum and matmul
    return intern(Statement(tuple(names[s] for s in out_subs), expr, reduce, cur)), cur


def normalize_axes(axes, ndim, opname, shape):
    """Axes as non-negative ints, checked (type, range, repeats) with errors naming ``opname``."""
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    out = []
    for ax in axes:
        if not isinstance(ax, (int, np.integer)) or isinstance(ax, bool):
            raise TypeError(f"{opname}: axes must be integers, got {shown(ax)}")
        if not -ndim <= ax < ndim:
            # (NumPy's AxisError: a ValueError and an IndexError, as NumPy raises it)
            raise np.exceptions.AxisError(f"{opname}: axis {ax} is out of bounds for "
                                          f"{_operand(ndim, shape)} (axis out of range)")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{opname}: repeated axis in {axes} for {_operand(ndim, shape)}")
    return out


def _operand(ndim, shape):
    return f"an operand of shape {shape}" if shape is not None else f"an array of dimension {ndim}"


def reduction(x, axis, op, keepdims=False, dtype=None, opname=None):
    """Lazy reduction of ``x`` over ``axis`` (None, int or tuple) with ``op`` in sum/max/min/prod."""
    opname = opname or op
    nd = x.ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        if not isinstance(axis, (int, np.integer, tuple, list)):
            raise TypeError(f"{opname}: axis must be an integer or a tuple of integers, got {shown(axis)}")
        axes = tuple(normalize_axes(axis, nd, opname, x.shape))
    if op in ("max", "min"):
        for a in axes:
            if x.shape[a] == 0:
                raise ValueError(f"{opname}: zero-size array to reduction operation {op} which has no identity")
        if np.dtype(x.dtype).kind == "c":
            raise TypeError(f"{opname}: complex values have no ordering")
    try:
        key = (nd, axes, op, x.dtype, dtype)
        hit = _REDUCTIONS.get(key)
    except TypeError:  # (an unhashable dtype argument: NumPy reports it below)
        key = hit = None
    if hit is None:  # (A.sum() in a loop builds its statement once)
        hit = _reduction_stmt(nd, axes, op, str(x.dtype), dtype)
        if key is not None:
            if len(_REDUCTIONS) >= _CACHE_MAX:
                _REDUCTIONS.clear()
            _REDUCTIONS[key] = hit
    stmt, res = hit
    shape = tuple([x.shape[k] for k in range(nd) if k not in axes])
    out = _node_array(stmt, (x,), shape, res)
    if keepdims:
        out = reshape_keepdims(out, x.shape, axes)
    return out


_REDUCTIONS = {}  # (ndim, axes, op, dtype, dtype argument) -> (statement, result dtype)


def _reduction_stmt(nd, axes, op, src, dtype):
    if op in ("sum", "prod"):
        # NumPy: bool/small ints accumulate in the default int; floats keep their type
        res = np.dtype(dtype) if dtype is not None else np.add.reduce(np.zeros(1, src)).dtype
        if op == "prod" and dtype is None:
            res = np.multiply.reduce(np.zeros(1, src)).dtype
    else:
        res = np.dtype(src)
    idx = _IDX[:nd]
    acc = Access(0, idx)
    expr = acc if str(res) == src else Call("cast", (acc,), (src,), str(res))
    out_idx = tuple(idx[k] for k in range(nd) if k not in axes)
    return intern(Statement(out_idx, expr, op, str(res))), res




def relabel(x, perm, opname="transpose"):
    """Lazy axis permutation: ``out[...] = x[...]`` with axes permuted."""
    nd = x.ndim
    perm = tuple(int(p) % nd if -nd <= int(p) < nd else int(p) for p in perm)
    if sorted(perm) != list(range(nd)):
        raise ValueError(f"{opname}: axes {perm} are not a permutation of {nd} axes")
    key = (perm, x.dtype)
    stmt = _RELABEL.get(key)
    if stmt is None:  # (a transpose in a loop, U @ V.T, builds one statement once)
        idx = _IDX[:nd]
        # out[k] uses input axis perm[k]
        sub = [None] * nd
        for k, p in enumerate(perm):
            sub[p] = idx[k]
        stmt = intern(Statement(idx, Access(0, tuple(sub)), "sum", str(x.dtype)))
        if len(_RELABEL) < _CACHE_MAX:
            _RELABEL[key] = stmt
    return _node_array(stmt, (x,), tuple(x.shape[p] for p in perm), x.dtype)


_RELABEL = {}  # (perm, dtype) -> the interned relabelling statement


def reshape_keepdims(out, in_shape, axes):
    """``out`` (a reduction of an array of ``in_shape`` over ``axes``) with size-1 axes put back."""
    nd = len(in_shape)
    idx = _IDX[:nd]
    kept = tuple(idx[k] for k in range(nd) if k not in axes)
    shape = tuple(1 if k in axes else in_shape[k] for k in range(nd))
    # the size-1 output indices appear on no right-hand side: the lowerer loops over them once
    stmt = Statement(idx, Access(0, kept), "sum", str(out.dtype))
    return _node_array(stmt, (out,), shape, out.dtype)
