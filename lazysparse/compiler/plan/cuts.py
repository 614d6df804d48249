"""Cut points: where a lazy DAG is computed in regions, each planned (and cached) on its own. A
lazy loop builds one DAG per step; planned whole, the fusion passes would see thousands of
operations, at a cost that grows faster than the DAG. So each cut node is computed first, as the
root of its own region, and its consumers read it as a concrete operand: regions of equal
structure have equal DAG keys (``dag_key.py``), and the k-th step of a loop finds the
first step's plan and kernel, a lookup. ``cut_points`` says which nodes are cut and why; ``VISITS``
(``compiler/plan/visits.py``) counts the nodes walked, so tests check that planning is linear.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from lazysparse.compiler.plan import visits

REGION_BUDGET = 64
"""Lazy nodes planned as one program. Planning a region costs about its size squared (trie
fusion tries each operation against the groups before it), yet 64 nodes (16 Jacobi steps) plan
and lower in about 45 ms and compile in 0.4 s; one kernel for several steps saves a Python call
a step (a 10-step Jacobi window: 0.98 of the materialize-each-step loop, against 1.09 in steps)."""


WINDOW_ROWS = 8192
"""Elements from which a node read whole by a consumer that keeps rows (``A @ x`` reading
``x``) is computed on its own when its own DAG holds such a node too (a step of a lazy loop
over an earlier one: "long"),
under the budget as well. A kernel of several such steps saves a Python call a step (about
15 us) but runs a copy of the row loop per step, each trained by the branch predictor once a
call instead of once a step: one thread, steps of Jacobi in windows of 10 against one kernel a
step took 0.93 of the time on bcsstk16 (4,884 rows), 1.04 on cage10 (11,397) and 1.18-1.28 on
vt2010 (32,580 rows of about six entries)."""


REASONS = {
    "held": "the program holds it and it is no larger than an operand: kept, so the next "
            "expression that reads it does not compute it again",
    "joint": "the results asked for together all read it: computed once for them",
    "whole": "a consumer sums over its outermost dimension, reading all of it for each of its own "
             "iterations: no loop can be shared across that edge",
    "long": f"a consumer reads all of it for each of its rows, it is such a step over an earlier "
            f"one and has at least {WINDOW_ROWS} elements: a kernel of several such steps costs "
            f"more than a call a step",
    "shared": "several consumers read it, which may land in different regions",
    "budget": f"its consumer's region would outgrow {REGION_BUDGET} lazy nodes",
}


@dataclass(frozen=True)
class Cut:
    """A node computed before its consumers, and why (``explain`` prints the reason)."""
    node: object
    reason: str  # "held" | "joint" | "long" | "whole" | "shared" | "budget"


def lazy_order(roots) -> list:
    """The uncomputed nodes under ``roots``, children before parents, each once
    (``decompose``'s walk), counted in ``VISITS``."""
    from lazysparse.compiler.plan.decompose import _lazy_order
    out = _lazy_order(roots)
    visits.count(len(out))
    return out


def _is_alias(node) -> bool:
    from lazysparse.compiler.plan.decompose import _is_alias as alias
    return alias(node.stmt) and len(node.children) == 1


def _consumers(order):
    """``(uses, whole, rows, shapes)``: id(node) -> its number of consumers; the nodes a consumer
    sums over the outermost dimension of; those of them whose consumer walks the rows of a sparse
    operand by one of its own result dimensions first (``A @ x`` reading ``x``: all of it for
    each row of ``A``; not ``t.sum(axis=0)``, which can sum ``t`` row by row as it is made);
    id(consumer) -> the shapes of what it reads so, computed or not."""
    uses, whole, rows, shapes = {}, set(), set(), {}
    for u in order:
        red = set(u.stmt.reduce_indices)
        for acc in u.stmt.accesses:
            c = u.children[acc.operand]
            by_rows = bool(acc.indices) and acc.indices[0] in red and _by_rows(u, acc)
            if by_rows:
                shapes.setdefault(id(u), set()).add(tuple(c.shape))
            if c._storage is not None or c._node.result is not None:
                continue
            k = id(c._node)
            uses[k] = uses.get(k, 0) + 1
            if acc.indices and acc.indices[0] in red:
                whole.add(k)
                if by_rows:
                    rows.add(k)
    return uses, whole, rows, shapes


def _by_rows(u, acc) -> bool:
    """Whether consumer ``u`` has a concrete sparse operand, other than the one of access
    ``acc``, whose outermost stored dimension is one of ``u``'s result dimensions."""
    for b in u.stmt.accesses:
        c = u.children[b.operand]
        st = c._storage if c._storage is not None else c._node.result
        if b.operand == acc.operand or st is None or st.format.is_dense or not b.indices:
            continue
        if b.indices[st.format.order[0]] in u.stmt.out_indices:
            return True
    return False


def _steps(order, rows, shapes) -> dict:
    """id(node) -> whether it is a step of a loop: its lazy DAG holds a node read whole for each
    row of its consumer (``x_2`` over ``A @ x_1``), or reads something of its own shape so
    (``x_1`` over ``A @ x_0``, ``x_0`` computed). ``A @ (X @ W)`` is no step below ``X @ W``:
    cutting there would only cost a walk a call, the two kernels being the same."""
    steps, held = {}, {}
    for n in order:
        kids = [c._node for c in n.children if c._storage is None and c._node.result is None]
        got = set(shapes.get(id(n), ()))
        for c in kids:
            got |= held.get(id(c), set())
        held[id(n)] = got
        steps[id(n)] = tuple(n.shape) in got or any(
            id(c) in rows or steps.get(id(c), False) for c in kids)
    return steps


def _sums(order) -> dict:
    """id(node) -> whether its lazy DAG holds a reduction."""
    sums = {}
    for n in order:
        sums[id(n)] = bool(n.stmt.reduce_indices) or any(
            sums.get(id(c._node), False) for c in n.children if c._storage is None)
    return sums


def _held(order) -> dict:
    """id(node) -> the node, for the lazy nodes that something outside the DAG holds (a user's
    variable, another expression): the DAG's own references are counted and the rest is
    ``sys.getrefcount``'s."""
    refs = {}  # id(array) -> [array, references from the DAG]
    for u in order:
        for c in u.children:
            if c._storage is None and c._node.result is None:
                e = refs.get(id(c))
                if e is None:
                    refs[id(c)] = [c, 1]
                else:
                    e[1] += 1
    c = e = None  # (the loop's last array is not held by it)
    # (getrefcount sees the list's reference and its own argument beside the DAG's)
    return {id(e[0]._node): e[0]._node for e in refs.values() if sys.getrefcount(e[0]) > e[1] + 2}


def _largest_operand(order, enough=None) -> int:
    """The most elements any concrete operand of the DAG stores, or the first count of at least
    ``enough`` (all the caller asks: a lazy loop's step finds its matrix at once)."""
    big = 0
    for u in order:
        for c in u.children:
            st = c._storage if c._storage is not None else c._node.result
            if st is not None:
                big = max(big, math.prod(st.shape) if st.is_dense else st.nnz)
                if enough is not None and big >= enough:
                    return big
    return big


def _joint(order, roots) -> set:
    """ids of the nodes where the DAGs of several roots meet and part: read by the DAGs of two
    or more roots, and by a consumer whose DAG is not the same set of roots. Only element-wise
    nodes over a DAG that sums (``A * (U @ V.T)``) are returned: the substitution pass would
    recompute such a node in each root's kernel, each forming the sum again. A shared sum itself
    (``C = A @ B`` read by ``C * D`` and ``F / C``) is one value of the joint program already,
    formed only where the union of its readers needs it; a few element-wise operations over
    operands cost less recomputed than stored and read back."""
    reach = {id(r): 1 << k for k, r in enumerate(roots)}
    for u in reversed(order):  # (consumers before producers)
        m = reach.get(id(u), 0)
        for c in u.children:
            if c._storage is None and c._node.result is None:
                reach[id(c._node)] = reach.get(id(c._node), 0) | m
    parts = {}  # id(node) -> its consumers' root sets differ from its own
    for u in order:
        for c in u.children:
            if c._storage is None and c._node.result is None and reach[id(u)] != reach[id(c._node)]:
                parts[id(c._node)] = True
    sums = _sums(order)
    out = set()
    for n in order:
        if sums[id(n)] and not n.stmt.reduce_indices and bin(reach[id(n)]).count("1") > 1 \
                and parts.get(id(n)) and not _is_alias(n):
            out.add(id(n))
    return out


def held_nodes(roots, order=None) -> list:
    """The nodes of the DAG under ``roots`` cut because the program holds them ("held",
    ``cut_points``): a property of this moment's references, not of the DAG's structure."""
    order = lazy_order(roots) if order is None else order
    is_root = {id(r) for r in roots}
    held = [n for k, n in _held(order).items() if k not in is_root and not _is_alias(n)]
    if held:
        big = _largest_operand(order, max(math.prod(n.shape) for n in held))
        held = [n for n in held if math.prod(n.shape) <= big]
    return held


def cut_points(roots, budget: int | None = None) -> tuple:
    """The cuts of the DAG under ``roots`` in topological order. A pure function of the DAG:
    nothing is computed here.

    Above ``budget`` lazy nodes, a node is cut where cutting costs no work that fusion would
    save: "whole", a consumer sums over its outermost dimension (``A @ x`` reads all of ``x``
    for each row), so no loop can be shared across that edge and the fused kernel would hold it
    as a full temporary anyway; "shared", two or more consumers read it, and could land in
    different regions, each computing it again; "budget", a region would outgrow the budget
    (its largest lazy child is cut first). At or under the budget the DAG is planned whole, as
    the fused kernels of the fusion paper are.

    In every DAG, a lazy node that the program still holds (``x`` in ``float(abs(x).sum())``
    inside a loop that goes on with ``x``) is cut when its result is no larger than the largest
    operand: keeping it costs one store of a value no bigger than what the kernel reads, and
    the next expression over it reads it instead of computing it again ("held"). A larger one
    (a dense ``U @ V.T`` that fusion forms only at ``A``'s entries) stays fused. With several
    roots (``ls.compute(S.sum(1), S.sum(0))``), a node where their DAGs meet is computed once
    for all of them when its own DAG sums over something ("joint"). And a step of a lazy loop
    of ``WINDOW_ROWS`` elements or more, read whole for each row of its consumer, is its own
    region ("long")."""
    budget = REGION_BUDGET if budget is None else budget
    order = lazy_order(roots)
    is_root = {id(r) for r in roots}
    cut = {id(n): "held" for n in held_nodes(roots, order)}
    if len(roots) > 1:
        cut.update((k, "joint") for k in _joint(order, roots) if k not in is_root and k not in cut)
    uses, whole, rows, shapes = _consumers(order)
    if rows:
        steps = _steps(order, rows, shapes)
        cut.update((id(n), "long") for n in order if id(n) in rows and steps[id(n)] and id(n) not in cut
                   and id(n) not in is_root and math.prod(n.shape) >= WINDOW_ROWS and not _is_alias(n))
    if len(order) <= budget:
        return tuple(Cut(n, cut[id(n)]) for n in order if id(n) in cut)
    size = {}
    for n in order:
        k = id(n)
        kids = []
        for c in n.children:
            cn = c._node
            if c._storage is None and cn.result is None and id(cn) not in cut and id(cn) not in kids:
                kids.append(id(cn))
        total = 1 + sum(size[c] for c in kids)
        by_size = {c: size[c] for c in kids}
        while total > budget and by_size:
            big = max(by_size, key=by_size.get)
            total -= by_size.pop(big)
            cut[big] = "budget"
        size[k] = total
        if k in is_root or _is_alias(n):
            continue
        if k in whole:
            cut[k] = "whole"
        elif uses.get(k, 0) > 1:
            cut[k] = "shared"
        if k in cut:
            size[k] = 0
    visits.count(len(order))
    return tuple(Cut(n, cut[id(n)]) for n in order if id(n) in cut)
