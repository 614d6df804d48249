"""The formats a compute promises (one format truth): a lazy array's ``.format`` is inferred from
its DAG (``format_inference``), and its materialized result must have that format, whatever the
fusion mode made of the DAG (a fused kernel stores dense or in an input's pattern; association
and substitution change the statements the planner picks formats for). ``promised`` gives the
inferred formats of the roots, kept per DAG key with what else inference reads: the sparse
leaves' exact entry counts (their densities) and the pattern decisions of the nodes that read
0-d values at those values (CG's ``rr / rz`` decides the same at every step, so its loop finds
them). Inference costs about 30 us a node, far more than a step of a lazy loop; the lookup
about 2 us. The driver converts a result whose format differs (compiler/pipeline.py)."""
from __future__ import annotations

import math

from lazysparse.ir.nodes import Access, Call
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.dag_key import leaf_key
from lazysparse.compiler.plan.format_inference import infer_formats

MAX_KEYS = 1024  # DAG keys whose promises are kept
# binary operations whose f(0, s) and f(s, 0) are zero or not by the class of s alone (not
# nextafter, whose step from a tiny s reaches zero, nor the rounding divisions and remainders)
CLASSED_OPS = frozenset({"add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin",
                         "power", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
                         "logical_and", "logical_or", "logical_xor", "hypot", "copysign"})

_BY_KEY = {}  # DAG key -> (probe, {0-d values' classes or bytes: decisions},
#                {(entries, decisions): formats}, store numbers of the sparse leaves)


def promised(roots, walk) -> tuple:
    """The format each of the lazy nodes ``roots`` promises (its ``.format``), for the DAG
    whose ``dag_walk`` is ``walk``; inferred on the first call of its key, entry counts and
    decisions, looked up after."""
    ent = _BY_KEY.get(walk.key)
    stores = walk.order
    if ent is None:
        if len(_BY_KEY) >= MAX_KEYS:
            _BY_KEY.clear()
        sparse = tuple(k for k, st in enumerate(stores) if not st.format.is_dense)  # (the key says which)
        ent = _BY_KEY[walk.key] = (_probe(walk), {}, {}, sparse)
    probe, seen, formats, sparse = ent
    key = (tuple([stores[k].vals.shape[0] for k in sparse]), _decisions(probe, stores, seen) if probe else ())
    got = formats.get(key)
    if got is None:
        inferred = infer_formats(roots)
        got = formats[key] = tuple(inferred[id(r)][0] for r in roots)
    return got


def _probe(walk) -> tuple:
    """The nodes whose pattern decisions read 0-d values (``patterns.scalar_calls``): their
    expressions, ``(operand slot, store number)`` pairs in the walk's numbering, and whether the
    expression is one binary call of two reads (``_classed``)."""
    items = []
    for n in walk.nodes:
        if not P.scalar_calls(n.stmt.expr):
            continue
        slots = []
        for q, c in enumerate(n.children):
            st = c._storage if c._storage is not None else c._node.result
            if st is not None and st.ndim == 0:
                slots.append((q, walk.stores[leaf_key(st)[0]]))
        if slots:
            items.append((n.stmt.expr, tuple(slots), _classed(n.stmt.expr)))
    return tuple(items)


def _classed(expr):
    """``{operand slot: dtype}`` when ``expr`` is one binary call of two reads (``alpha * p``,
    ``rr / rz``), else None. Whether ``f(0, s)`` or ``f(s, 0)`` is zero for such a call depends
    on ``s`` only through its class (``_value_class``: zero, the sign of a finite value, an
    infinity, NaN): a product is zero for finite ``s``, a quotient for non-zero ``s``, a sum
    for zero ``s``, a maximum for ``s`` at most zero, a power for positive ``s``. So a loop whose
    scalars change every step (CG's alpha) decides once per class, not once per value."""
    if (type(expr) is not Call or expr.op not in CLASSED_OPS or len(expr.args) != 2
            or not all(type(a) is Access for a in expr.args)):
        return None
    return {a.operand: dt for a, dt in zip(expr.args, expr.in_dtypes)}


def _value_class(x: float):
    """Zero (with its sign), positive or negative finite, +-infinity or NaN (of a real value,
    as a Python float: NumPy's scalar operations cost a microsecond each)."""
    if x != x:
        return "nan"
    if x == 0:
        return ("zero", math.copysign(1.0, x) < 0)
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return "+" if x > 0 else "-"


def _decisions(probe, stores, seen) -> tuple:
    """The probe's decisions at the 0-d values in ``stores``, as format inference makes them
    (``format_inference._decisions``); ``seen`` keeps them by the values' classes where an
    item's call is ``_classed`` and its values are read at their own real dtype, else by their
    bytes."""
    key = []
    for _, slots, classed in probe:
        for q, k in slots:
            a = stores[k].vals
            dt = a.dtype
            if classed is not None and classed.get(q) == dt.name and dt.kind in "biuf":
                key.append(_value_class(float(a)))
            else:
                key.append((dt.char, a.tobytes()))
    key = tuple(key)
    got = seen.get(key)
    if got is None:
        out = []
        for expr, slots, _ in probe:
            at = {q: stores[k].vals[()] for q, k in slots}
            out.append(P.expr_pattern(expr, lambda a, q: None, lambda a: at.get(a.operand), None)[1])
        if len(seen) > 256:
            seen.clear()
        got = seen[key] = tuple(out)
    return got


def clear():
    _BY_KEY.clear()
