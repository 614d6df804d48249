"""Lazy DAG nodes: one index-notation statement over child arrays, hash-consed.

Identical subexpressions (same statement, same children, same requested format) are the same
``Node`` object, so common subexpressions are shared by construction.
"""
from __future__ import annotations

import threading
import weakref

from .ir.nodes import Statement

# key -> weak reference to the live node. A plain dict with C-level weakrefs: building a node is
# on every lazy operation's path, and WeakValueDictionary runs Python code per get and set.
_INTERN = {}
_INTERN_LOCK = threading.Lock()


class _Ref(weakref.ref):
    __slots__ = ("key",)


def _forget(ref):
    # runs when a node dies (any thread, any time): never takes the lock, which the dying
    # node's last owner may hold; a race can only drop a fresher entry, which costs sharing,
    # never correctness
    if _INTERN.get(ref.key) is ref:
        _INTERN.pop(ref.key, None)


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
    # ids, not the objects: hashing them is C-level. A live node keeps its statement and
    # children alive, so the ids are unique while the entry matters; statements are interned,
    # so equal statements have one id (one that is not only loses sharing)
    key = (id(stmt), *[id(c._node or c._storage) for c in children], shape, format)
    ref = _INTERN.get(key)
    if ref is not None:
        node = ref()
        if node is not None:
            return node
    with _INTERN_LOCK:
        ref = _INTERN.get(key)
        node = ref() if ref is not None else None
        if node is None:
            node = Node(stmt, children, shape, dtype, format)
            ref = _Ref(node, _forget)
            ref.key = key
            _INTERN[key] = ref
    return node
