"""The structural key of a lazy DAG (``dag_key``): what the compiler's plans depend on, made on
every materialize of a DAG of several operations, so that a repeated DAG (a step of a loop) finds
its plan and kernel by a dictionary lookup: statements, shapes and requested formats of the lazy
nodes, and for concrete operands their spec, shape and nonzero bucket, with a token telling which
of them are the same buffers (``leaf_key``). ``region_cuts`` keeps a DAG's cut points by its key
(``cuts.py``)."""
from __future__ import annotations

import itertools

from lazysparse.compiler.plan.cuts import cut_points, held_nodes
from lazysparse.compiler.plan.kernel import operand_spec

MAX_CUTS = 1024  # DAG keys whose cut points are kept


def dag_key(roots):
    """A structural key of the lazy DAG under the nodes ``roots``: which nodes they are,
    statements, shapes, requested formats,
    and for concrete operands their spec and shape (an inner extent such as SDDMM's K appears in
    no node's shape), which of them are the same storage, and 0-d values.
    Equal keys decompose to the same program (``decompose`` depends on nothing else), so a
    repeated DAG skips decomposition and planning. Also returns the concrete storages in the
    order the key numbers them. (Runs on every call of a program: a child that is a node is
    its number, one that is a storage a tuple, and a storage's part of the key is made once,
    ``leaf_key``. A recursive walk, a Python call per node, costs half of an explicit stack's
    pushes and pops; a DAG deeper than the interpreter's recursion limit, a long lazy chain
    before its cut points are computed, takes the explicit stack.)"""
    walk = dag_walk(roots)
    return walk.key, walk.order


def dag_walk(roots):
    """The ``_DagWalk`` of the DAG under ``roots``, its ``key`` set."""
    walk = _DagWalk()
    try:
        nums = tuple(walk.node(r) for r in roots)
    except RecursionError:
        walk = _DagWalk()
        nums = tuple(walk.deep(r) for r in roots)
    walk.key = (tuple(walk.out), nums)
    return walk


class _DagWalk:
    """The state of one ``dag_key`` walk: the key's entries and their nodes, each node's
    number, each storage token's number, and the storages in that order."""

    __slots__ = ("out", "nodes", "index", "stores", "order", "key")

    def __init__(self):
        self.out, self.nodes, self.index, self.stores, self.order = [], [], {}, {}, []

    def node(self, n):
        """Number ``n`` (children first, recursively)."""
        k = self.index.get(id(n))
        if k is not None:
            return k
        kids = []
        for c in n.children:
            st = c._storage
            if st is None:
                cn = c._node
                st = cn.result
                if st is None:
                    kids.append(self.node(cn))
                    continue
            kids.append(self.leaf(st))
        return self._add(n, kids)

    def deep(self, root):
        """``node`` with an explicit stack."""
        stack = [(root, False)]
        index = self.index
        while stack:
            n, done = stack.pop()
            if id(n) in index:
                continue
            if not done:
                stack.append((n, True))
                stack.extend((c._node, False) for c in n.children if c._storage is None
                             and c._node.result is None and id(c._node) not in index)
                continue
            kids = []
            for c in n.children:
                st = c._storage if c._storage is not None else c._node.result
                kids.append(index[id(c._node)] if st is None else self.leaf(st))
            self._add(n, kids)
        return index[id(root)]

    def leaf(self, st):
        """A concrete operand's part of the key: ``(store number, key)``; as decompose numbers
        inputs, two wraps of one array are one, by their token."""
        stats = st.stats
        leaf = stats.get("dag") if stats is not None else None
        if leaf is None:
            leaf = leaf_key(st)
        k = self.stores.get(leaf[0])
        if k is None:
            k = self.stores[leaf[0]] = len(self.order)
            self.order.append(st)
        return (k, leaf[1])

    def _add(self, n, kids):
        k = self.index[id(n)] = len(self.out)
        self.out.append((id(n.stmt), n.shape, n.format, tuple(kids)))
        self.nodes.append(n)
        return k


CUTS = {}  # (fusion mode, DAG key) -> the numbers (in the key) of its cut nodes but the held ones


def region_cuts(roots, mode, walk=None):
    """The nodes of the DAG under ``roots`` to compute first, children first
    (``plan/cuts.py``). The structural cuts are found once per DAG key: a lazy loop that checks
    its value every few steps builds the same DAG each time, and finding them again cost more
    than a step's kernel on cage10. The held ones depend on what the program holds now, and are
    found each time. ``walk``: the DAG's ``dag_walk``, when the caller has it."""
    walk = dag_walk(roots) if walk is None else walk
    key = (mode, walk.key)
    nums = CUTS.get(key)
    if nums is None:
        cuts = cut_points(roots)
        if len(CUTS) >= MAX_CUTS:
            CUTS.clear()
        nums = CUTS[key] = tuple(walk.index[id(c.node)] for c in cuts if c.reason != "held")
    chosen = {k: walk.nodes[k] for k in nums}
    for n in held_nodes(roots, walk.nodes):  # (the walk's nodes: the lazy ones, children first)
        chosen.setdefault(walk.index[id(n)], n)
    return [chosen[k] for k in sorted(chosen)]  # (the walk numbers children first)


_TOKENS = {}  # Storage.buffers_key -> a small int: equal for two wraps of one array
_TOKEN_COUNT = itertools.count()


def leaf_key(st):
    """``(token, key)``: a concrete operand's token (equal exactly for storages over the same
    buffers, ``Storage.buffers_key``) and its part of the DAG key (spec, shape, 0-d value,
    nonzero bucket), made once per storage: storages never change. (Tokens are never reused:
    after ``_TOKENS`` is cleared, a storage over buffers seen before gets a new token, which
    costs a missed merge of two wraps, never a false one.)"""
    stats = st.memo()
    k = stats.get("dag")
    if k is None:
        if st.ndim == 0:
            # (a scalar is wrapped anew at each step of a loop: its own token, and no entry)
            tok = next(_TOKEN_COUNT)
        else:
            if len(_TOKENS) > 100_000:
                _TOKENS.clear()
            bk = st.buffers_key()
            tok = _TOKENS.get(bk)
            if tok is None:
                tok = _TOKENS[bk] = next(_TOKEN_COUNT)
        # (a 0-d value is not in it: what the plan reads of it, decisions, keys one level down)
        k = stats["dag"] = (tok, (id(operand_spec(st)), st.shape, nnz_bucket(st)))
    return k


def fresh(st, spec):
    """``st``, a kernel's new dense result whose spec is ``spec``, with its part of the DAG key
    made now (``leaf_key``'s): a token of its own, since no storage seen before holds its new
    buffer. A loop step's results are its next step's operands, and looking their buffers up
    cost about 3 us each. (A later wrap of the same buffer gets another token: a missed merge,
    never a false one.)"""
    st.spec = spec
    st.stats = {"dag": (next(_TOKEN_COUNT), (id(spec), st.shape, 0))}
    return st


def nnz_bucket(st):
    """A sparse operand's nonzero count rounded down to a power of two (0 for dense): the
    association pass decides from densities, so they are part of the DAG key, coarsely."""
    return 0 if st.is_dense else st.nnz.bit_length()
