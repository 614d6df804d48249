"""Lazy DAG nodes: one index-notation statement over child arrays. Building a node is on every lazy
operation's path, so it is just an object; common subexpressions are found when the DAG is
computed (``compiler.pipeline.compute_nodes`` keys every node by its statement and its children's
identities), not when it is built."""
from __future__ import annotations

from lazysparse.ir.nodes import Statement, intern


class Node:
    __slots__ = ("stmt", "children", "shape", "dtype", "format", "result", "__weakref__")

    def __init__(self, stmt: Statement, children: tuple, shape: tuple, dtype, format=None):
        self.stmt = stmt
        self.children = children        # tuple of lazysparse Array
        self.shape = shape
        self.dtype = dtype
        self.format = format            # requested Format, or None (inferred when planned)
        self.result = None              # Storage once materialized

    def __repr__(self):
        return f"<Node {self.stmt!r} shape={self.shape}>"

    def __getstate__(self):
        return (self.stmt, self.children, self.shape, self.dtype, self.format, self.result)

    def __setstate__(self, state):
        # (statements are interned: the planner's caches compare them by identity)
        stmt, self.children, self.shape, self.dtype, self.format, self.result = state
        self.stmt = intern(stmt)


make_node = Node


def describe(node, depth: int = 4, width: int = 100) -> str:
    """The expression under ``node``, abbreviated for a repr: ``add(T, multiply(T, subtract(T,
    sum_i1(multiply(csr, T)))))``. A concrete operand (or a value computed already) is its format's
    name, a summed statement ``sum_<indices>(...)``, a renaming (a transpose) ``view(...)``;
    below ``depth`` levels a subexpression is ``...``, and the text is cut at ``width``
    characters. Bounded by ``depth``, so a DAG with much sharing prints in constant time."""
    def leaf(arr):
        st = arr._storage if arr._storage is not None else arr._node.result
        if st is None:
            return None
        return "dense" if st.format.is_dense else (st.format.name or "sparse")

    def expr(e, kids, d):
        if hasattr(e, "operand"):  # an Access
            return show(kids[e.operand], d)
        if hasattr(e, "args"):     # a Call
            return f"{e.op}({', '.join(expr(a, kids, d) for a in e.args)})"
        return repr(e)

    def show(arr, d):
        name = leaf(arr)
        if name is not None:
            return name
        n = arr._node
        if d <= 0:
            return "..."
        st = n.stmt
        body = expr(st.expr, n.children, d - 1)
        if not hasattr(st.expr, "args") and not st.reduce_indices:
            body = f"view({body})"
        if st.reduce_indices:
            body = f"{st.reduce}_{''.join(map(repr, st.reduce_indices))}({body})"
        return body

    class _Root:  # (show takes an array; the root is a node)
        _storage = None
        _node = node
    text = show(_Root, depth)
    return text if len(text) <= width else text[:width - 3] + "..."
