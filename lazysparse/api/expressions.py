"""``ls.expr``: index notation written by the user (``"y[i] = A[i,j] * x[j]"``), with affine
subscripts read through windows (``api/affine.py``), checked and turned into one DAG node.
"""
from __future__ import annotations

import numpy as np

from lazysparse.api import affine as windows
from lazysparse.api import primitives as build
from lazysparse.api.operations import _UNARY, _as_array, _format, check_loop, checked
from lazysparse.errors import shown
from lazysparse.ir import ops
from lazysparse.ir.nodes import Access, Call, Const, Index, Statement
from lazysparse.ir.notation import Affine, Bin, Neg, Num, Ref, children, parse_notation

_IDX = build._IDX


_EXPR_BINARY = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}
_EXPR_FUNCS = dict(_UNARY, max="maximum", min="minimum", maximum="maximum", minimum="minimum")


def _describe(ref):
    return windows.describe(ref.name, ref.subs) if ref.subs else ref.name


def _refs(tree):
    """Operand references of an AST, left to right."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, Ref):
            yield node
        stack.extend(reversed(children(node)))


class _ExprBuilder:
    """Turns a parsed notation into one Statement; operands get slots in first-use order."""

    def __init__(self, arrays, names, extent=None, dense_result=None):
        self.arrays = arrays      # operand name -> Array
        self.names = names        # index name -> Index, in the statement's order
        self.extent = extent      # index name -> extent
        self.dense_result = dense_result  # the format asked for is dense (None: not asked)
        self.children = []
        self.slots = {}

    def slot(self, key, array):
        if key not in self.slots:
            self.slots[key] = len(self.children)
            self.children.append(array)
        return self.slots[key]

    def window(self, ref, a):
        """An operand read at affine subscripts: its window (api/affine.py) at plain ones."""
        axes = windows.axes_of(ref.subs, list(self.names))
        key = ("win", ref.name, ref.subs)
        if key not in self.slots:
            self.slot(key, windows.window(a, ref.name, ref.subs, axes, self.extent, self.dense_result))
        return Access(self.slots[key], tuple(self.names[v] for v in axes))

    def literal(self, value, dtype):
        try:
            arr = np.asarray(value, dtype=np.dtype(dtype))
        except (OverflowError, ValueError, TypeError):
            raise ValueError(f"expr: the literal {shown(value)} does not fit in {dtype}") from None
        from lazysparse.api.creation import asarray
        # repr keeps -0.0 and 0.0 apart
        return Access(self.slot(("lit", repr(value), str(arr.dtype)), asarray(arr)), ())

    def typed(self, tree):
        """``(ir, dtype)`` for a subtree, or ``(None, value)`` for a bare numeric literal."""
        if isinstance(tree, Num):
            return None, tree.value
        if isinstance(tree, Ref):
            a = self.arrays[tree.name]
            if any(isinstance(s, Affine) for s in tree.subs):
                return self.window(tree, a), str(a.dtype)
            subs = tuple(s if isinstance(s, int) else self.names[s] for s in tree.subs)
            subs = tuple(Const(s) if isinstance(s, int) else s for s in subs)
            return Access(self.slot(("op", tree.name), a), subs), str(a.dtype)
        if isinstance(tree, Neg):
            return self.call("negative", [tree.arg])
        if isinstance(tree, Bin):
            return self.call(_EXPR_BINARY[tree.op], [tree.left, tree.right])
        op = _EXPR_FUNCS.get(tree.name)
        if op is None:
            raise ValueError(f"expr: unknown function {shown(tree.name)}; expected one of "
                             f"{', '.join(sorted(_EXPR_FUNCS))}")
        arity = ops.OPS[op][1]
        if len(tree.args) != arity:
            raise ValueError(f"expr: {tree.name}() takes {arity} argument(s), got {len(tree.args)}")
        return self.call(op, list(tree.args))

    def call(self, op, args):
        typed = [self.typed(a) for a in args]
        spec = tuple(d if ir is not None else _py_dtype(d) for ir, d in typed)
        ins, out = ops.resolve(op, spec)
        check_loop(op, [str(d) for d in spec], ins, out, "expr")
        irs = tuple(ir if ir is not None else self.literal(v, d) for (ir, v), d in zip(typed, ins))
        return Call(op, irs, ins, out), out

    def root(self, tree):
        ir, d = self.typed(tree)
        if ir is None:  # the whole right side is a number
            dt = "int64" if isinstance(d, int) else "float64"
            return self.literal(d, dt), dt
        return ir, d


def _py_dtype(value):
    return "pyint" if isinstance(value, int) else "pyfloat"


def _check_refs(p, arrays, notation):
    """Validate operand references; returns ``{index name: extent}`` in first-seen order (an
    index read only in affine subscripts last, its extent inferred: api/affine.py)."""
    extent, where = {}, {}
    uses = []  # affine subscripts: (operand name, subs, dim, Affine, axis size)
    for ref in _refs(p.rhs):
        if ref.name not in arrays:
            given = ", ".join(arrays) or "none"
            raise ValueError(f"expr: unknown operand {shown(ref.name)} in {shown(notation)} (operands given: {given})")
        a = arrays[ref.name]
        if len(ref.subs) != a.ndim:
            raise ValueError(f"expr: operand {ref.name} of shape {tuple(a.shape)} is accessed with "
                             f"{len(ref.subs)} subscript(s) in {_describe(ref)}")
        for d, (s, n) in enumerate(zip(ref.subs, a.shape)):
            if isinstance(s, Affine):
                windows.check_form(s, ref.name, ref.subs)
                uses.append((ref.name, ref.subs, d, s, n))
            elif isinstance(s, int):
                if not 0 <= s < n:
                    raise ValueError(f"expr: constant subscript {s} is out of range for an axis of size "
                                     f"{n} in {_describe(ref)} (shape {tuple(a.shape)})")
            elif extent.setdefault(s, n) != n:
                raise ValueError(f"expr: index {shown(s)} has extent {extent[s]} in {where[s]} but {n} in "
                                 f"{_describe(ref)} (shape {tuple(a.shape)})")
            else:
                where.setdefault(s, f"{_describe(ref)} (shape {tuple(a.shape)})")
    if uses:
        windows.infer_extents(uses, extent, where)
    return extent


def expr(notation, *, format=None, reduce="sum", **operands):
    """Lazy index notation: ``ls.expr("A[i,j] = B[i,j] * C[i,k] * D[k,j]", B=B, C=C, D=D)``.

    Indices on the right that are absent on the left are reduced with ``reduce``
    (``"sum"``, ``"max"``, ``"min"`` or ``"prod"``) over the whole right side, as one
    statement: ``y[i] = A[i,k] + 1`` adds 1 once per ``k``. Numbers follow NumPy's weak-scalar
    rules; reusing a name reads the same operand.

    >>> import numpy as np, lazysparse as ls
    >>> ls.expr("y[i] = A[i,j] * x[j]", A=np.ones((2, 3)), x=np.ones(3)).shape
    (2,)
    """
    if reduce not in ops.REDUCTIONS:
        raise ValueError(f"expr: reduce must be one of {', '.join(ops.REDUCTIONS)}, got {shown(reduce)}")
    p = parse_notation(notation)
    out = p.out_indices
    if len(set(out)) != len(out):
        raise ValueError(f"expr: the output {p.out_name}[{','.join(out)}] repeats an index")
    arrays = {k: _as_array(v, "expr") for k, v in operands.items()}
    extent = _check_refs(p, arrays, notation)
    used = {r.name for r in _refs(p.rhs)}
    for k in arrays:
        if k not in used:
            raise ValueError(f"expr: operand {shown(k)} is not used in {shown(notation)}")
    for ix in out:
        if ix not in extent:
            raise ValueError(f"expr: output index {shown(ix)} does not appear on the right side of {shown(notation)}")
    order = list(out) + [ix for ix in extent if ix not in out]
    empty = [ix for ix in order[len(out):] if extent[ix] == 0]
    if reduce in ("max", "min") and empty and all(extent[ix] for ix in out):
        # NumPy: a max/min over nothing has no value (an empty result is fine)
        raise ValueError(f"expr: reduce={shown(reduce)} over index {shown(empty[0])} of extent 0 in {shown(notation)}: "
                         "zero-size reduction with no identity")
    if len(order) > len(_IDX):
        raise ValueError(f"expr: {len(order)} indices are more than the {len(_IDX)} supported")
    shape = tuple(extent[ix] for ix in out)
    fmt = _format(format, len(shape), "expr")
    b = _ExprBuilder(arrays, {ix: _IDX[k] for k, ix in enumerate(order)}, extent,
                     None if fmt is None else fmt.is_dense)
    ir, dtype = b.root(p.rhs)
    if reduce in ("max", "min") and len(order) > len(out) and np.dtype(dtype).kind == "c":
        raise TypeError(f"expr: reduce={shown(reduce)} over complex values ({dtype}) has no ordering")
    stmt = Statement(_IDX[:len(out)], ir, reduce, dtype)
    return build._node_array(stmt, tuple(b.children), shape, dtype, fmt)


