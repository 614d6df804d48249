"""Workspaces for sparse scattering ("Compilation of Modular and General Sparse Workspaces", the
workspaces paper), the planning half: how many result levels a loop order scatters into
(``ordering``), which of them the loops bind in order (``hoisted`` out of the workspace), and which
accumulation policy and capacity take the rest (``choose``). Pure functions of the loop order, the
result format and a few sizes; ``compiler/lower/workspace.py`` emits the insert-sort-merge
template."""
from __future__ import annotations

import math
from typing import NamedTuple

#: keys are the workspace levels' coordinates linearised in storage order: int64 with headroom
KEY_LIMIT = 1 << 62


def ordering(order, storage_vars, reduce_vars) -> int:
    """The paper's workspace order for a loop ``order`` writing a result whose levels bind
    ``storage_vars`` (outermost first), with reduction variables ``reduce_vars``.

    ``max(N + 1 - p1, p2)``: ``p1``, the first position where the result's levels (storage order)
    and the loop order disagree; ``p2``, the position of the first reduction variable counted in
    result variables nested inside it. 0: scalar accumulation (inner-product SpGEMM ``i, j, k``); 1:
    first-order scattering (row-wise SpGEMM ``i, k, j``); 2: second-order (outer-product SpGEMM ``k,
    i, j``).
    """
    loops = [v for v in order if v in storage_vars]  # the loop order over result variables
    n = len(storage_vars)
    p1 = next((k + 1 for k in range(n) if loops[k] != storage_vars[k]), n + 1)
    p2 = 0
    for k, v in enumerate(order):
        if v in reduce_vars:
            p2 = sum(1 for u in order[k + 1:] if u in storage_vars)
            break
    return max(n + 1 - p1, p2)


def storage_vars(stmt, fmt) -> list:
    """The result variables a format's levels bind, outermost level first."""
    outs = list(stmt.out_indices)
    return [outs[m] for m in fmt.order]


def hoisted(order, storage_vars) -> int:
    """How many leading result levels the loops bind in storage order, before any other loop:
    the workspace holds the remaining levels.

    Hoisted levels stay outer loops of the producer and the consumer (the paper's common-iteration
    hoisting), and the workspace holds the other ``N - h`` levels: after each iteration of the last
    hoisted loop its entries are sorted, combined and appended.
    """
    h = 0
    while h < len(storage_vars) and h < len(order) and order[h] == storage_vars[h]:
        h += 1
    return h


def outside(order, storage_vars) -> int:
    """How many result levels stay outside a kernel's workspace: the hoisted ones, and for a
    loop order that binds them all (a sum of sparse terms assembled by union fission,
    compiler/plan/fission.py) every level but the last, which the workspace holds."""
    h = hoisted(order, storage_vars)
    return h - 1 if storage_vars and h == len(storage_vars) else h


def mask_access(stmt, specs, out_fmt, decisions, prefix=False):
    """The position (walk order) of the access whose entries hold every result entry of a
    scattering sum, or None. Such an access — a *mask*, ``M[i,j]`` in ``sum_k M[i,j] A[i,k]
    B[k,j]`` — lets the kernel accumulate each product straight into the result's value at
    M's position (located per row, compiler/lower/locate.py) instead of inserting it into a workspace:
    no bitmap, no touched list, no drain; the result takes M's structure and its computed
    zeros are squeezed out at the end. Applies when the statement's pattern is one term
    containing a sparse access read at the result's subscripts, in the result's order and
    format, both CSR-like (dense levels, then one unique compressed level).

    ``prefix``: also an access whose *leading* subscripts are the result's, with leading levels like
    the result's (TTV's ``B[i,j,k]`` for a CSR ``out[i,j]``), and statements without a reduction:
    the result then takes those levels' structure, which a parallel schedule writes from any thread
    (each result entry has its own position before the loops run; the sparse outputs of the
    scheduling paper, "A Sparse Iteration Space Transformation Framework for Sparse Tensor Algebra",
    compiler/plan/loops.py). An exact match is preferred."""
    from lazysparse.compiler.plan import fission
    from lazysparse.compiler.plan import patterns as P
    from lazysparse.ir.nodes import accesses_of
    if stmt.reduce != "sum" or not fission.csr_like(out_fmt):
        return None
    if not stmt.reduce_indices and not prefix:
        return None
    accs = accesses_of(stmt.expr)
    pat, _ = P.expr_pattern(stmt.expr, lambda acc, q: None if specs[acc.operand].dense else q,
                            lambda acc: None, decisions)
    if pat == P.TRUE or len(pat) != 1:
        return None
    nd = len(stmt.out_indices)
    outs = [lv.kind for lv in out_fmt.levels]
    found = None
    for q in sorted(next(iter(pat))):
        acc, sp = accs[q], specs[accs[q].operand]
        exact = len(acc.indices) == nd
        if (not exact and not prefix) or tuple(acc.indices[:nd]) != tuple(stmt.out_indices):
            continue
        if (tuple(sp.format.order[:nd]) == tuple(out_fmt.order)
                and [lv.kind for lv in sp.format.levels[:nd]] == outs
                and sp.format.levels[nd - 1].unique):
            if exact:
                return q
            found = q if found is None else found
    return found


def map_access(stmt, specs, out_fmt, decisions):
    """The position (walk order) of the one sparse access whose structure *is* the result's, or
    None: a statement without a sum whose only sparse operand ``T`` is read at the result's
    subscripts, in the result's order and format (CSR-like), and whose pattern is ``T``'s alone
    (``2.5 * A``, ``abs(A)``, ``A * D`` with ``D`` dense, ``A.astype(...)``). Such a result is a
    value per stored entry of ``T``: the kernel (mode "map") copies ``T``'s structure, computes
    the values at ``T``'s positions and counts the computed zeros, which it squeezes out
    afterwards only when there were any, as every result drops them (compiler/lower/lowering.py). The
    structure is a copy: a result never shares a buffer with its inputs."""
    from lazysparse.compiler.plan import fission
    from lazysparse.compiler.plan import patterns as P
    from lazysparse.ir.nodes import accesses_of, canonical_positions
    if stmt.reduce_indices or not fission.csr_like(out_fmt):
        return None
    accs = accesses_of(stmt.expr)
    canon = canonical_positions(stmt.expr)  # (``A * A``: one access read twice)
    sparse = sorted({canon[q] for q, a in enumerate(accs) if not specs[a.operand].dense and specs[a.operand].ndim})
    if len(sparse) != 1:
        return None
    q = sparse[0]
    pat, _ = P.expr_pattern(stmt.expr, lambda acc, k: None if specs[acc.operand].dense else k,
                            lambda acc: None, decisions)
    if pat != P.var(q):
        return None
    acc, sp = accs[q], specs[accs[q].operand]
    if (tuple(acc.indices) != tuple(stmt.out_indices) or sp.format != out_fmt
            or not sp.format.levels[-1].unique):
        return None
    return q


def spec_mask(spec):
    """The mask access of kernel ``spec`` in mode "mask" (lowering and explain alike): a
    schedule that runs a sparse result on threads may take a leading-levels mask."""
    loops = spec.loops
    return mask_access(spec.stmt, spec.inputs, spec.output.format, spec.decisions,
                       prefix=loops is not None and loops.parallel is not None)


class Choice(NamedTuple):
    policy: str     # a registered policy (compiler/lower/workspace.py): "dense", "hash", "coord", "bucket", ...
    capacity: int   # the accumulation array's entries before it is sorted and merged
    why: str        # for explain()


def choose(ws_extents, outer, inserts, itemsize, budget, forced=None, capacity=None,
           union=False) -> Choice:
    """The policy and capacity for a workspace over levels of extents ``ws_extents``, flushed
    once per point of the ``outer`` hoisted points (1 when nothing is hoisted), with an estimate
    of the ``inserts`` per call, values of ``itemsize`` bytes and a memory ``budget`` in bytes
    (None: no limit). ``forced``/``capacity``: a schedule's choice (``ls.Schedule.workspace``).

    The workspaces paper picks dense only for a first-order workspace (exactly one result variable
    after the reduction: Gustavson's row) and leaves the sparse policy and its capacity to the user;
    we choose them:

    * **dense** (values, a bitmap of touched points and their list) for one level when
      its arrays fit in a quarter of the budget and are not far larger than the work: their
      O(extent) setup is paid once per call (a 10^6-column hypersparse product with 10^4
      products would spend its time clearing memory);
    * **bucket** otherwise (the paper's Bucket ISM: chains over contiguous key ranges, so the
      drain sorts only within buckets), holding about twice the inserts one flush sees (the
      paper's ``2^ceil(log2 nnz)``), at least 16 entries: a full one is sorted and merged into
      the entries kept so far, so a small one costs merges, not correctness. It beat ``hash``
      on every outer product we timed (vt2010 126 against 171 ms, cage10 231 against 256,
      cs4 44 against 47, cora 9.3 against 12.0; docs/design.md, "Assembly modes").
    """
    E = math.prod(ws_extents)
    per = max(1, inserts // max(1, outer))  # inserts between two flushes, on average
    if forced is not None:
        cap = capacity if capacity is not None else _default_capacity(forced, E, per)
        return Choice(forced, max(1, int(cap)), f"forced by the schedule ({forced}, capacity {cap})")
    policy, cap = (decide_union if union else decide)(ws_extents, outer, inserts, itemsize, budget)
    dense_bytes = _dense_bytes(E, itemsize)
    if union:
        if policy == "append":
            return Choice("append", 0, f"a sum of sparse terms: merged, as a dense row workspace "
                                       f"over {E} columns ({_mb(dense_bytes)}) would cost more")
        return Choice("dense", cap, f"dense values, a bitmap and a touched list over {E} "
                                    f"columns ({_mb(dense_bytes)}) instead of a merge of the terms")
    if policy == "dense":
        return Choice("dense", cap, f"first-order workspace over {E} points: dense values, a bitmap "
                                    f"and a touched list ({_mb(dense_bytes)}) for ~{inserts} products")
    if len(ws_extents) == 1:
        fits = budget is None or dense_bytes <= budget // 4
        why = (f"first-order, but a dense workspace would take {_mb(dense_bytes)}"
               + (", over a quarter of the memory budget" if not fits else f" for ~{inserts} products"))
    else:
        why = f"order {len(ws_extents)}: a dense workspace would hold {E} points"
    if capacity is not None:
        cap = capacity
    return Choice("bucket", cap, f"{why}; buckets of key ranges holding {cap} entries")


def decide(ws_extents, outer, inserts, itemsize, budget) -> tuple:
    """``choose``'s (policy, capacity) without a schedule and without the explanation: what a
    bound plan asks on every call (compiler/pipeline.py, ``_bind``)."""
    E = math.prod(ws_extents)
    if (len(ws_extents) == 1 and (budget is None or _dense_bytes(E, itemsize) <= budget // 4)
            and E <= 32 * max(1, inserts) + (1 << 16)):
        return "dense", max(1, E)
    return "bucket", _default_capacity("bucket", E, max(1, inserts // max(1, outer)))


def decide_union(ws_extents, outer, inserts, itemsize, budget) -> tuple:
    """A sum of sparse terms (compiler/plan/fission.py): a dense row workspace where ``decide``
    would pick one for the same sizes, else ("append", 0), the merge. A sparse policy is no
    cheaper than the merge: its drain sorts what the merge produces in order."""
    policy, cap = decide(ws_extents, outer, inserts, itemsize, budget)
    return (policy, cap) if policy == "dense" else ("append", 0)


def _dense_bytes(E, itemsize):
    return E * (itemsize + 8) + E // 8  # values, list, bitmap


def _default_capacity(policy, E, per):
    """Entries before a flush: the whole extent for a dense workspace; else twice the inserts
    expected per flush, a power of two from 16 to 2^26, never above the extent."""
    if policy == "dense":
        return max(1, E)
    want = 1 << max(4, int(2 * per - 1).bit_length())
    return int(max(1, min(want, 1 << 26, max(16, E))))


def _mb(n):
    return f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n / 1024:.1f} KB"
