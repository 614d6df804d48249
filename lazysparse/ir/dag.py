"""Lazy DAG nodes: one index-notation statement over child arrays. Building a node is on every lazy
operation's path, so it is just an object; common subexpressions are found when the DAG is
computed (``compiler.pipeline.compute_nodes`` keys every node by its statement and its children's
identities), not when it is built."""
from __future__ import annotations

from lazysparse.ir.nodes import Statement


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


make_node = Node
