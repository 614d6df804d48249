"""The pattern decisions that 0-d values make (``patterns.expr_pattern``: is ``f(0, s)`` zero),
kept by value: a probe is the list of expressions whose decisions read 0-d operands, with
``(operand slot, store number)`` pairs for them (``probe_item``), and ``decisions`` evaluates it
at a DAG's stores, memoised in the caller's ``seen``. Both plan lookups use it: the fused plans'
(compiler/fused_pipeline.py) and the promised formats' (``promise.py``). A binary call of two reads
(``alpha * p``, ``rr / rz``) decides by the class of its 0-d value alone (zero with its sign,
the sign of a finite value, an infinity, NaN), so a loop whose scalars change every step (CG's
alpha) decides once per class; any other expression by the values' bytes (-0.0 and NaN
included). No walk's closure keeps the stores: that would hold each step's values alive until
the cycle collector ran."""
from __future__ import annotations

import math

import numpy as np

from lazysparse.ir.nodes import Access, Call
from lazysparse.compiler.plan import patterns as P

# binary operations whose f(0, s) and f(s, 0) are zero or not by the class of s alone (not
# nextafter, whose step from a tiny s reaches zero, nor the rounding divisions and remainders):
# a product is zero for finite s, a quotient for non-zero s, a sum for zero s, a maximum for s
# at most zero, a power for positive s
CLASSED_OPS = frozenset({"add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin",
                         "power", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
                         "logical_and", "logical_or", "logical_xor", "hypot", "copysign"})


def probe_item(expr, slots) -> tuple:
    """``(expr, slots, classed)``: an expression whose decisions read the 0-d operands of
    ``slots`` (``(operand slot, store number)`` pairs) and its ``classed`` reads."""
    return expr, tuple(slots), classed(expr)


def classed(expr):
    """``{operand slot: dtype character}`` when ``expr`` is one binary call of two reads of an
    operation in ``CLASSED_OPS``, else None. (Characters: a dtype's ``name`` is a Python
    property that formats a string, a microsecond a read on each call of a loop step.)"""
    if (type(expr) is not Call or expr.op not in CLASSED_OPS or len(expr.args) != 2
            or not all(type(a) is Access for a in expr.args)):
        return None
    return {a.operand: np.dtype(dt).char for a, dt in zip(expr.args, expr.in_dtypes)}


def value_class(x: float):
    """Zero (with its sign), positive or negative finite, +-infinity or NaN (of a real value,
    as a Python float: NumPy's scalar operations cost a microsecond each)."""
    if x != x:
        return "nan"
    if x == 0:
        return ("zero", math.copysign(1.0, x) < 0)
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return "+" if x > 0 else "-"


def decisions(probe, stores, seen) -> tuple:
    """The decisions of ``probe``'s expressions at the 0-d values in ``stores``; ``seen`` keeps
    them by the values' classes where an item is ``classed`` and its value is read at its own
    real dtype, else by their bytes."""
    key = []
    for _, slots, cls in probe:
        for q, k in slots:
            a = stores[k].vals
            dt = a.dtype
            if cls is not None and cls.get(q) == dt.char and dt.kind in "biuf":
                key.append(value_class(float(a)))
            else:
                key.append((dt.char, a.tobytes()))
    key = tuple(key)
    got = seen.get(key)
    if got is None:
        out = []
        for expr, slots, _ in probe:
            at = {q: stores[k].vals[()] for q, k in slots}
            out.append(P.expr_pattern(expr, _no_key, lambda a: at.get(a.operand))[1])
        if len(seen) > 256:
            seen.clear()
        got = seen[key] = tuple(out)
    return got


def _no_key(_access, _pos):
    return None
