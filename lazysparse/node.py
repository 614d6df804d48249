"""Lazy DAG nodes: one index-notation statement over child arrays, hash-consed.

Identical subexpressions (same statement, same children, same requested format) are the same
``Node`` object, so common subexpressions are shared by construction.
"""
from __future__ import annotations

import threading
import weakref

from .ir.nodes import Statement

_INTERN = weakref.WeakValueDictionary()
_INTERN_LOCK = threading.Lock()


class Node:
    __slots__ = ("stmt", "children", "shape", "dtype", "format", "_key", "result", "__weakref__")

    def __init__(self, stmt: Statement, children: tuple, shape: tuple, dtype, format=None):
        self.stmt = stmt
        self.children = children        # tuple of lazysparse Array
        self.shape = shape
        self.dtype = dtype
        self.format = format            # requested Format, or None (inferred when planned)
        self.result = None              # Storage once materialized
        self._key = None

    def __repr__(self):
        return f"<Node {self.stmt!r} shape={self.shape}>"


def make_node(stmt: Statement, children: tuple, shape: tuple, dtype, format=None) -> Node:
    """Return the unique node for this statement over these children."""
    key = (stmt, tuple(c._identity() for c in children), shape, format)
    with _INTERN_LOCK:
        node = _INTERN.get(key)
        if node is None:
            node = Node(stmt, children, shape, dtype, format)
            _INTERN[key] = node
    return node
