"""The driver: materialize lazy DAG nodes. A single operation runs as one statement
(``statement.py``: ``plan_statement`` makes its plan as a value, then the runner lowers, builds
and calls it); a DAG of several is planned as a program and fused where loops are shared
(``fused_pipeline.py``), else run operation by operation. Both go through the stages of
``stages.py`` (``Plan`` -> ``lower`` -> ``Lowered`` -> ``build`` -> ``Compiled``). Common
subexpressions are computed once.
"""
from __future__ import annotations

from logging import DEBUG

from lazysparse.compiler.plan import skew as SKEW
from lazysparse.compiler.plan.decompose import may_split
from lazysparse.compiler.fused_pipeline import CheckCuts, bind, replay, try_fused
from lazysparse.compiler.plan.dag_key import dag_walk, leaf_key, region_cuts
from lazysparse.compiler.plan.promise import promised
from lazysparse.compiler import opcount as counting
from lazysparse.compiler.statement import (  # noqa: F401  (the driver's entry points)
    _BOUND, STATS, StatementPlan, convert_storage, execute, kernel_log, plan_cache_clear, plan_statement)
from lazysparse.runtime import kernel_cache
from lazysparse.runtime.progress import LOG, Progress, timed
from lazysparse.runtime.threads import get_num_threads

FUSION_VALUES = ("auto", "max", "none")

def check_options(opname, fusion="auto", device=None, schedule=None):
    if fusion not in FUSION_VALUES:
        raise ValueError(f"{opname}: fusion must be one of {FUSION_VALUES}, got {fusion!r}")
    if device not in (None, "cpu"):
        raise ValueError(f"{opname}: device {device!r} is not available (only 'cpu' in this build)")
    if schedule is not None and not hasattr(schedule, "apply"):
        raise TypeError(f"{opname}: schedule must be an ls.Schedule, got {type(schedule).__name__}")


def compute_nodes(nodes, fusion="auto", schedule=None):
    """Materialize nodes, children first (iteratively: DAGs can be deep).

    Common subexpressions are computed once: nodes with the same statement, shape and requested
    format over the same children (the same concrete arrays, or children that are themselves the
    same subexpression) share one result, within one DAG and across the nodes of one call.
    A ``schedule`` (``ls.Schedule``) applies to the kernels planned meanwhile: the one
    statement a single root's DAG inlines into (``fused.single_statement``), else one kernel
    per node.
    """
    if LOG.isEnabledFor(DEBUG):  # (no clock, string or context manager on the warm path)
        with timed(f"compute {len(nodes)} lazy array(s)"):
            return _compute(nodes, fusion, schedule)
    return _compute(nodes, fusion, schedule)


def _compute(nodes, fusion, schedule):
    if schedule is not None:
        with schedule.apply():
            return _compute_nodes(nodes, fusion, True)
    return _compute_nodes(nodes, fusion, False)


def _compute_nodes(nodes, fusion, scheduled, promise=True):
    """``compute_nodes``' work; ``promise``: the roots' results take the formats their lazy
    arrays promised (``plan/promise.py``; not for the cut nodes of ``_compute_regions``, which
    only the DAG reads)."""
    if len(nodes) == 1:
        n = nodes[0]
        sts = [c._storage if c._storage is not None else c._node.result for c in n.children]
        # the common single-operation case: no traversal needed. (A sum of products that has
        # a factor free of a reduced variable is planned as a DAG: its reduction is pushed in
        # and fused, e.g. SDDMM written as one einsum.)
        if None not in sts and not (fusion == "auto" and n.stmt.reduce_indices and n.format is None
                                    and may_split(n.stmt)):
            if n.result is None:
                n.result = _execute_one(n.stmt, sts, n.shape, n.format, scheduled)
            release(n)
            return
    roots = [n for n in nodes if n.result is None]
    if fusion != "none" and scheduled and len(roots) == 1:
        # a schedule transforms the loops of one statement (the scheduling paper): a DAG that inlines
        # into one, without nesting more sums, runs as that statement under it; otherwise
        # every operation's kernel follows the schedule (SDDMM as one statement runs on A's
        # entries; per operation it forms the dense U @ V.T)
        from lazysparse.compiler.fused_pipeline import single_statement
        one = single_statement(roots[0])
        if one is not None:
            n = roots[0]
            n.result = execute(one[0], one[1], n.shape, n.format, name="materialize")
            return
    walk = want = None
    if promise and roots and not scheduled and not counting.ON[0] and all(n.format is None for n in roots):
        walk = dag_walk(roots)
        want = promised(roots, walk)
    if fusion != "none" and not scheduled and roots and all(n.format is None for n in roots):
        # a DAG of several operations (under one or several roots): one fused kernel where the
        # plan shares loops (compiler/fused_pipeline.py); otherwise, or where lowering declines, one
        # kernel per operation of the planned program
        sts, walk = try_fused(roots, mode=fusion, walk=walk), None  # (see below: no walk held)
        if isinstance(sts, CheckCuts):  # not planned before: its cut nodes first (plan/cuts.py)
            # (the walk goes in a box the callee empties: a walk held here would keep every
            # node of the DAG, and each one's value once computed, alive to the end)
            box, sts = [sts.walk], None
            _compute_regions(roots, fusion, box)
            sts = try_fused(roots, mode=fusion, checked=True)
        if sts is not None:
            for n, st, fmt in zip(roots, sts, want or [None] * len(roots)):
                n.result = st if fmt is None or st.format == fmt else convert_storage(st, fmt)
            release(*roots)
            return
    walk = None  # (nor here: it would keep every node's value alive to the end)
    todo = []
    seen = set()
    stack = [(n, False) for n in nodes]
    while stack:
        n, expanded = stack.pop()
        if n.result is not None:
            continue
        if expanded:
            if id(n) not in seen:
                seen.add(id(n))
                todo.append(n)
            continue
        stack.append((n, True))
        for c in n.children:
            if c._node is not None and c._node.result is None:
                stack.append((c._node, False))
    canon = {}  # structural key -> the node computed for it
    rep = {}    # id(node) -> id of its canonical node
    for n in todo:
        key = (id(n.stmt), n.shape, n.format,
               *[("s", id(c._storage)) if c._storage is not None else
                 ("n", rep.get(id(c._node), id(c._node))) for c in n.children])
        first = canon.setdefault(key, n)
        rep[id(n)] = id(first)
        if n.result is None:
            if first is not n and first.result is not None:
                n.result = first.result
            else:
                sts = [c._storage if c._storage is not None else c._node.result for c in n.children]
                n.result = execute(n.stmt, sts, n.shape, n.format, name="materialize")
        release(n)
    for n, fmt in zip(roots, want or ()):  # (one kernel per operation: what inference mirrors)
        if n.result.format != fmt:
            n.result = convert_storage(n.result, fmt)


def _compute_regions(roots, fusion, box=()):
    """Compute the cut nodes of a DAG over the region budget, in topological order, each as the
    root of its own (small, cached) region. Each one lets go of the DAG below it once computed,
    so a long chain keeps only the values that some later node or the user still holds.
    ``box``: a list holding the DAG's walk (``dag_key.dag_walk``) from ``try_fused``, emptied.

    A window of a lazy loop (the DAG between two checks) repeats: the same key and cuts each
    time. Its first computation records each region's plan entry and where its operands come
    from (a leaf of the window, or an earlier region's value: ``_record``); later ones call the
    entries in turn (``fused_pipeline.replay``), without walking each region for its key."""
    walk = box.pop() if box else dag_walk(roots)
    todo = region_cuts(roots, fusion, walk)
    if not todo:
        return
    key = (fusion, walk.key, tuple([walk.index[id(n)] for n in todo]))
    leaves, tokens = walk.order, walk.stores
    walk = None  # (the walk holds every node: see _compute_nodes)
    todo.reverse()
    window = _WINDOWS.get(key) if not counting.ON[0] else None
    if window is None and not counting.ON[0]:
        window = _record(todo, fusion, tokens)
        if len(_WINDOWS) >= MAX_WINDOWS:
            _WINDOWS.clear()
        _WINDOWS[key] = window or False
        return
    progress = Progress("computing regions", len(todo))
    regions, drop = window or ((), {})
    values = {}
    k = 0
    while todo:
        node = todo.pop()
        if node.result is None:
            got = None
            if regions:
                bound, slots = regions[k]
                got = replay(bound, [leaves[v] if s else values[v] for s, v in slots], "materialize")
            if got is not None:
                node.result = got[0]
                release(node)
            else:
                _compute_nodes([node], fusion, False, promise=False)
        values[k] = node.result
        for j in drop.get(k, ()):
            del values[j]
        node = None
        k += 1
        progress.step(k)
    progress.done()


MAX_WINDOWS = 1024
_WINDOWS = {}  # (fusion, DAG key, cut numbers) -> its _Window, or False where one cannot be kept


def _record(todo, fusion, tokens):
    """Compute the cut nodes ``todo`` (popped in topological order) and return their window:
    ``(regions, drop)``, each region its ``Bound`` plan entry and operand sources (``(True, k)``:
    the window's k-th leaf; ``(False, j)``: region j's value), ``drop`` the values each region is
    the last reader of; or None where a region ran otherwise than as one bound plan, or made a
    sparse value (whose entry count keys its readers' plans). ``tokens``: the window walk's
    storage tokens (``dag_key``) -> leaf number."""
    progress = Progress("computing regions", len(todo))
    regions, made, last = [], {}, {}
    k = 0
    while todo:
        node = todo.pop()
        sub = dag_walk([node]) if regions is not None and node.result is None else None
        if node.result is None:
            _compute_nodes([node], fusion, False, promise=False)
        bound = bind(sub, fusion) if sub is not None else None
        slots = _sources(sub.order, tokens, made) if bound is not None else None
        if slots is None or not node.result.is_dense:
            regions = None
        elif regions is not None:
            regions.append((bound, slots))
            made[leaf_key(node.result)[0]] = k
            for s, v in slots:
                if not s:
                    last[v] = k
        node = sub = None
        k += 1
        progress.step(k)
    progress.done()
    if regions is None:
        return None
    drop = {}
    for j in range(len(regions)):
        drop.setdefault(last.get(j, j), []).append(j)
    return tuple(regions), drop


def _sources(stores, tokens, made):
    """Each of a region's operands as a window leaf or an earlier region's value, or None."""
    out = []
    for st in stores:
        tok = leaf_key(st)[0]
        if tok in made:
            out.append((False, made[tok]))
        elif tok in tokens:
            out.append((True, tokens[tok]))
        else:
            return None
    return tuple(out)


def release(*nodes):
    """Computed nodes let go of the computed values below them: in the lazy region under
    ``nodes`` (the nodes their kernel computed without keeping), every child that has a value
    becomes a concrete array. The region itself stays (``opcount`` counts it again), but nothing
    beyond it: without this, a loop that computes a lazy value each step would keep every
    earlier step, and its value, alive through the children. (Several roots of one kernel:
    one walk of their shared region.)"""
    stack, seen = list(nodes), set()
    while stack:
        m = stack.pop()
        kids, new = m.children, None
        for j, c in enumerate(kids):
            cn = c._node
            if cn is None:
                continue
            if cn.result is not None:
                new = new or list(kids)
                new[j] = _concrete(c)
            elif id(cn) not in seen:
                seen.add(id(cn))
                stack.append(cn)
        if new is not None:
            m.children = tuple(new)


def _execute_one(stmt, sts, shape, fmt, scheduled):
    """A single operation written by the user: the default schedule, or nonzero tiles where the
    autoscheduler reads them off the operand's row lengths (compiler/plan/skew.py)."""
    nt = get_num_threads()
    if nt < 2 or scheduled or fmt is not None:
        return execute(stmt, sts, shape, fmt, name="materialize")
    tiles, key = SKEW.tiles_for(stmt, sts, nt)
    if tiles is not None:
        try:
            with tiles.apply():
                return execute(stmt, sts, shape, fmt, name="materialize")
        except (ValueError, NotImplementedError):
            # the tiles did not plan or lower here (a user's error raises again just below)
            SKEW.refuse(stmt, sts)
    out = execute(stmt, sts, shape, fmt, name="materialize")
    if key is not None:
        SKEW.learn(key, out)
    return out


def _concrete(arr):
    """A computed child as a concrete array of the child's own class (the DAG then lets go of
    the nodes below it)."""
    return type(arr)._from_storage(arr._node.result)


kernel_cache.register_plan_cache(lambda: (0, 0), _WINDOWS.clear, _WINDOWS.clear)
