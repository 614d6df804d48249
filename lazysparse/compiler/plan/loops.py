"""A schedule's loop transformations ("A Sparse Iteration Space Transformation Framework for Sparse
Tensor Algebra") bound to one kernel's statement: which loops split, which pair of loops runs as one
tiled walk over an operand's nonzeros, which loop is parallel and which unrolled, and the loop
order. A pure function of the schedule, the statement and its operands' formats; every precondition
it can see here is checked with an error that names the transformation and the reason (the paper's
rejections), so lowering (compiler/lower/tiling.py) only reads the result.

Names are the statement's index variables as ``ls.explain`` prints them (``i0``, ``i1``, ...)
and its operands as ``T0``, ``T1``, ... (the slots of the kernel's statement).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lazysparse.ir import provenance as PV
from lazysparse.ir.nodes import Index, accesses_of, canonical_positions
from lazysparse.compiler.plan.kernel import level_vars

LOOP_STEPS = ("split", "divide", "fuse", "pos", "bound", "reorder", "unroll", "parallelize")


@dataclass(frozen=True)
class NonzeroTiles:
    """``fuse(i, j, f).pos(f, p, A).split(p, outer, inner, factor)``: the loops over ``i`` and
    ``j`` become one walk over access ``q``'s stored entries in tiles of ``factor``; each tile
    finds its first row by a search and advances the row as positions cross row ends."""
    i: Index
    j: Index
    q: int          # the access whose positions are walked (statement numbering)
    outer: str
    inner: str
    factor: int


@dataclass(frozen=True)
class LoopPlan:
    order: tuple            # Index per loop, outermost first
    splits: tuple           # (Index, PV.Split): coordinate loops run as outer x inner
    tiles: NonzeroTiles | None
    parallel: tuple | None  # (variable, races) of the one parallel loop (the outermost)
    unroll: tuple           # (variable, factor)
    guarded: frozenset      # names of split parents a full tile may overrun
    text: str               # the schedule as written, for explain and errors
    bounds: tuple = ()      # (Index, extent): a ``bound`` fact, checked per call, a constant in C
    names: tuple = ()       # (Index, name): what the schedule calls an unsplit loop (bound renames)
    early: tuple = ()       # (Index, Index): a split's outer loop runs just outside the loop over
                            # the second variable, away from its inner loop (interleaved tiles)
    chunks: tuple = ()      # (Index, access, PV.Split): ``pos(j).split``: each segment that the
                            # loop over j walks (a row's entries) in chunks of ``factor``

    vector: tuple = ()      # loops on vector lanes (``#pragma omp simd``)
    nest: tuple = ()        # the loops that run, outermost first, in the schedule's names
    vreduce: tuple = ()     # vector loops of a reduction variable: lanes sum privately
                            # (``omp simd reduction``, races="parallel-reduction")

    def chunk_of(self, v):
        for ix, q, rel in self.chunks:
            if ix == v:
                return q, rel
        return None

    def early_before(self, v):
        """The variables whose split's outer loop opens just outside the loop over ``v``."""
        return [r for r, b in self.early if b == v]

    def name_of(self, v):
        """The schedule's name for the loop over ``v`` (its bound name, if any)."""
        for ix, n in self.names:
            if ix == v:
                return n
        return v.name

    def split_of(self, v):
        for ix, rel in self.splits:
            if ix == v:
                return rel
        return None

    def unroll_of(self, name):
        for n, f in self.unroll:
            if n == name:
                return f
        return None


def _err(op, msg):
    return ValueError(f"Schedule.{op}: {msg}")


def _todo(op, msg):
    return NotImplementedError(f"Schedule.{op}: {msg} (not lowered yet)")


def dense_only(schedule) -> bool:
    """Whether ``schedule``'s kernels can only write a dense result (threads, nonzero tiles)."""
    return any(s[0] in ("parallelize", "pos") for s in schedule.steps)


def interleaved_mode(plan, stmt, mode):
    """The assembly of a kernel whose split loops interleave: a dense result summed where the
    loops come to it (a reduction's partial sums land in the result between tiles)."""
    if mode == "dense-acc" and stmt.reduce == "sum":
        return "dense-inter"
    if mode in ("dense", "dense-inter"):
        return mode
    r = plan.early[0][0]
    raise _todo("reorder", f"interleaving the loops of {r.name!r} in `{stmt!r}` with a {mode!r} "
                           "assembly (a dense result and sums only)")


def bind(schedule, stmt, specs, order, out_fmt, decisions=()):
    """The :class:`LoopPlan` of ``schedule``'s loop steps for ``stmt`` (``specs``: its
    operands', ``order``: the planner's loop order, ``out_fmt``: the result's format,
    ``decisions``: the statement's f(0) decisions), or None when the schedule has none."""
    steps = [s for s in schedule.steps if s[0] in LOOP_STEPS]
    if not steps:
        return None
    idx = {ix.name: ix for ix in (*stmt.out_indices, *stmt.reduce_indices)}
    accs = accesses_of(stmt.expr)
    names = {}
    canon = canonical_positions(stmt.expr)
    for q, a in enumerate(accs):
        if canon[q] == q:  # (equal accesses, ``A * A``, are one iterator: one name)
            names.setdefault(f"T{a.operand}", []).append(q)
    g = schedule.provenance
    where = f"kernel `{stmt!r}` (index variables {', '.join(idx)})"
    for r in g.roots:
        if r not in idx:
            raise ValueError(f"materialize: the schedule {schedule!r} names index variable {r!r}, "
                             f"which {where} does not have")
    order = list(order)
    derived, early = [], []
    for st in steps:
        if st[0] == "reorder":
            if all(n in idx for n in st[1]):
                order = _reorder(st[1], order, idx, g, accs, specs, where)
            else:
                # loops a transformation made: lowered as the reorder of the statement's
                # variables they come from (each bound where its innermost loop runs), with a
                # split's outer loop opened early where others come between it and its inner
                roots, early = _roots_of(st[1], g, idx, where)
                order = _reorder(roots, order, idx, g, accs, specs, where)
                derived.append(st[1])
    splits, tiles, pending, bounds, chunks = [], None, {}, [], []
    alias = dict(idx)  # schedule names of unsplit loops (a bound's result renames its parent)
    for rel in g.relations:
        if isinstance(rel, PV.Split) and rel.parent in alias:
            splits.append((alias.pop(rel.parent), rel))
        elif isinstance(rel, PV.Bound) and rel.parent in alias:
            bounds.append((alias[rel.parent], rel.value))
            alias[rel.bound] = alias.pop(rel.parent)
        elif isinstance(rel, PV.Fuse):
            if rel.outer not in alias or rel.inner not in alias:
                raise _todo("fuse", f"fusing derived variables ({rel.outer!r}, {rel.inner!r})")
            o, i = alias.pop(rel.outer), alias.pop(rel.inner)
            if order.index(i) != order.index(o) + 1:
                raise _err("fuse", f"{rel.inner!r} is not directly nested under {rel.outer!r} "
                                   f"(the loops of {where} run {', '.join(map(repr, order))})")
            pending[rel.fused] = (o, i)
        elif isinstance(rel, PV.Pos):
            _pos(rel, pending, alias, names, accs, specs, order, where)
        elif isinstance(rel, PV.Split) and rel.parent in pending and pending[rel.parent][0] == "chunk":
            if rel.up:
                raise _todo("divide", f"dividing the position variable {rel.parent!r}")
            _, root, q = pending.pop(rel.parent)
            chunks.append((root, q, rel))
        elif isinstance(rel, PV.Split) and rel.parent in pending and len(pending[rel.parent]) == 3:
            if stmt.reduce_indices and stmt.reduce != "sum":
                raise _todo("split", f"tiles of stored entries under a {stmt.reduce} reduction in {where}")
            if rel.up:
                raise _todo("divide", f"dividing the position variable {rel.parent!r}")
            tiles = NonzeroTiles(*pending.pop(rel.parent), rel.outer, rel.inner, rel.factor)
        elif isinstance(rel, PV.Split) and rel.parent in pending:
            raise _todo("split", f"splitting the fused coordinate loop {rel.parent!r} (walk its positions)")
        elif isinstance(rel, PV.Bound):
            raise _todo("bound", f"bounding the derived loop {rel.parent!r}")
        else:
            raise _todo(type(rel).__name__.lower(), f"{rel!r} in {where}")
    for v, what in pending.items():
        if what[0] == "chunk":
            continue  # a row's positions walked whole: what the loop does anyway
        if isinstance(what, tuple) and len(what) == 3:
            raise _todo("pos", f"walking positions {v!r} without splitting them")
        raise _todo("fuse", f"a fused loop {v!r} without pos and split")
    renamed = tuple((ix, n) for n, ix in alias.items() if n != ix.name)
    early = tuple((idx[r], idx[b]) for r, b in early)
    outers = {ix: rel for ix, rel in splits} | {ix: rel for ix, _, rel in chunks}
    for r, _ in early:
        if r not in outers:
            raise _todo("reorder", f"interleaving the loops of {r.name!r} other than a split's")
    nest = _nest(order, splits, tiles, dict(renamed), early, chunks)
    for names_ in derived:
        # a reorder of the loops a transformation made: lowered where it keeps their nesting
        for n in names_:
            if n not in nest:
                raise _err("reorder", f"{n!r} is not a loop of {where} under this schedule "
                                      f"(its loops: {', '.join(nest)})")
        at = [nest.index(n) for n in names_]
        if at != sorted(at):
            raise _todo("reorder", f"reordering the loops {', '.join(names_)} of {where} (they nest "
                                   f"as {', '.join(nest)})")
    leaves = set(g.leaves) | set(alias)
    par, unroll, vector, vreduce = _leaf_steps(steps, leaves, tiles, alias, splits, order, stmt, out_fmt,
                                               where, accs, specs, renamed, nest, decisions)
    return LoopPlan(tuple(order), tuple(splits), tiles, par, tuple(unroll),
                    frozenset(r.parent for r in g.guarded()), repr(schedule), tuple(bounds), renamed,
                    early, tuple(chunks), tuple(vector), tuple(nest), tuple(vreduce))


def _leaf_steps(steps, leaves, tiles, alias, splits, order, stmt, out_fmt, where, accs, specs,
                renamed, nest, decisions):
    """The steps on single loops — unroll, vector lanes, the parallel loop — checked against
    the loops the other steps made: ``(parallel, unrolled, vector loops, vector reductions)``."""
    par, unroll, vector, vreduce = None, [], [], []
    for st in steps:
        if st[0] == "unroll":
            var, f = st[1]
            if var not in leaves:
                raise _err("unroll", f"{var!r} is not a loop of {where}")
            if tiles is not None and var == tiles.inner:
                raise _todo("unroll", f"unrolling the positions {var!r} of a tile (its rows' "
                                      "segments run the compiler's own inner loops)")
            unroll.append((var, f))
        elif st[0] == "parallelize" and st[1][1] == "cpu-vector":
            var, _, races = st[1]
            if var not in leaves:
                raise _err("parallelize", f"{var!r} is not a loop of {where}")
            if races not in ("ignore-races", "no-races", "parallel-reduction"):
                raise _todo("parallelize", f"vector lanes with races={races!r}")
            root = alias.get(var) or next((ix for ix, rel in splits if var in (rel.inner, rel.outer)), None)
            walkers = _sparse_walkers(root, accs, specs) if root is not None else ["a tile's or chunk's"]
            if walkers:
                # (the loop over stored entries is the compiler's own: tuned, vector or split)
                raise _todo("parallelize", f"vector lanes on {var!r}, which walks {walkers[0]} "
                                           f"entries in {where}")
            if races == "no-races" and root in stmt.reduce_indices:
                raise _err("parallelize", f"the vector loop {var!r} runs reduction variable {root.name!r}: "
                                          "its lanes add into the same result, so races='no-races' cannot "
                                          "hold; use races='parallel-reduction'")
            if races == "parallel-reduction" and root in stmt.reduce_indices:
                if stmt.reduce not in ("sum", "prod") or np.dtype(stmt.dtype).kind not in "iuf":
                    raise _todo("parallelize", f"vector lanes reducing {var!r} by {stmt.reduce} "
                                               f"over {stmt.dtype} values in {where} (sums and "
                                               "products of real numbers only)")
                vreduce.append(var)
            vector.append(var)
        elif st[0] == "parallelize":
            if par is not None:
                raise _todo("parallelize", f"a second parallel loop ({st[1][0]!r}, {st[1][1]})")
            par = _parallel(st[1], order, splits, tiles, stmt, out_fmt, where, accs, specs,
                            dict(renamed), nest, decisions)
    return par, unroll, vector, vreduce


def _roots_of(names, g, idx, where):
    """The statement variables a reorder of derived loops puts in order (each where its last,
    innermost loop is), and the interleaved splits: (variable, variable) pairs where the first's
    split outer loop comes just before the second's loops, away from its own inner loop."""
    groups = []  # consecutive names with the same roots
    for n in names:
        if n not in g.variables and n not in idx:
            raise _err("reorder", f"{n!r} is not a loop of {where} under this schedule")
        roots = g.fused_roots(n) if n in g.variables else (n,)
        if groups and groups[-1][0] == roots:
            groups[-1][1].append(n)
        else:
            groups.append((roots, [n]))
    last = {}
    for k, (roots, _) in enumerate(groups):
        for r in roots:
            last[r] = k
    out, early = [], []
    for k, (roots, ns) in enumerate(groups):
        if all(last[r] == k for r in roots):
            out += [r for r in roots if r not in out]
            continue
        # loops of these roots open here and close later: only a split's outer loop may
        rel = g.derived_by(roots[0]) if len(roots) == 1 else None
        if isinstance(rel, PV.Pos):  # a chunk of positions: its split's outer loop
            rel = g.derived_by(rel.pos)
        if not isinstance(rel, PV.Split) or ns != [rel.outer] or rel.up:
            raise _todo("reorder", f"interleaving the loops {', '.join(ns)} of {', '.join(roots)} with "
                                   f"others ({', '.join(names)}) in {where}")
        # it opens just outside the next loop that binds a variable
        m = next(m for m in range(k + 1, len(groups)) if any(last[r] == m for r in groups[m][0]))
        early.append((roots[0], next(r for r in groups[m][0] if last[r] == m)))
    return tuple(out), early


def _nest(order, splits, tiles, renamed=None, early=(), chunks=()):
    """The loops a schedule runs, outermost first (its names for derived ones)."""
    renamed = renamed or {}
    outers = {ix: rel for ix, rel in splits} | {ix: rel for ix, _, rel in chunks}
    out = []
    for v in order:
        rel = outers.get(v)
        for r, b in early:
            if b == v:
                out.append(outers[r].outer)
        if rel is not None and any(r == v for r, _ in early):
            out.append(rel.inner)
        elif tiles is not None and v == tiles.i:
            out += [tiles.outer, tiles.inner]
        elif tiles is not None and v == tiles.j:
            continue
        elif rel is not None:
            out += [rel.outer, rel.inner]
        else:
            out.append(renamed.get(v, v.name))
    return out


def _reorder(names, order, idx, g, accs, specs, where):
    for n in names:
        if n not in idx:
            raise _todo("reorder", f"reordering the derived loop {n!r} (reorder the statement's "
                                   f"variables before transforming them)") if n in g.variables else \
                _err("reorder", f"{n!r} is not an index variable of {where}")
    picked = [idx[n] for n in names]
    slots = sorted(order.index(v) for v in picked)
    new = list(order)
    for s, v in zip(slots, picked):
        new[s] = v
    for a in accs:
        sp = specs[a.operand]
        if sp.dense:
            continue
        lv = [v for v in level_vars(a, sp.format) if isinstance(v, Index)]
        at = [new.index(v) for v in lv]
        if at != sorted(at):
            raise _err("reorder", f"T{a.operand} ({sp.format!r}) stores {', '.join(map(repr, lv))} in "
                                  f"that order; the loops {', '.join(map(repr, new))} would iterate it "
                                  "against its format's mode order")
    return new


def _pos(rel, pending, idx, names, accs, specs, order, where):
    qs = names.get(rel.access)
    if not qs:
        raise _err("pos", f"{rel.access!r} is not an operand of {where} (operands: "
                          f"{', '.join(sorted(names))})")
    if len(qs) > 1:
        raise _todo("pos", f"{rel.access!r} is read twice in {where}")
    (q,) = qs
    a = accs[q]
    sp = specs[a.operand]
    roots = pending.pop(rel.coord) if rel.coord in pending else (idx[rel.coord],)
    lv = level_vars(a, sp.format) if not sp.dense else []
    if sp.dense or not all(v in lv for v in roots):
        raise _err("pos", f"{rel.access!r} is not indexed by {', '.join(map(repr, roots))} "
                          f"(in {where})")
    k = lv.index(roots[0])
    if list(lv[k:k + len(roots)]) != list(roots):
        raise _err("pos", f"{', '.join(map(repr, roots))} is not a sub-list of {rel.access}'s mode "
                          f"order {', '.join(map(repr, lv))}")
    lvs = sp.format.levels
    if len(roots) == 1:
        if not lvs[k].unique_segments:
            raise _todo("pos", f"walking the positions of {rel.access}'s {lvs[k].kind} level over "
                               f"{roots[0].name!r}")
        pending[rel.pos] = ("chunk", roots[0], q)  # chunks of one segment (a row's entries)
        return None
    if len(roots) != 2 or k != 0 or not (lvs[0].is_dense or lvs[0].has_pos) or not lvs[0].unique \
            or not lvs[1].unique_segments or order.index(roots[0]) != 0:
        raise _todo("pos", f"walking the positions of {rel.access} ({sp.format!r}) over "
                           f"{', '.join(map(repr, roots))}: only the first two levels (dense or "
                           "compressed, then compressed) of an operand, fused from the outermost "
                           "loop, are")
    pending[rel.pos] = (roots[0], roots[1], q)
    return None


def _sparse_walkers(v, accs, specs):
    """The operands whose stored entries a loop over ``v`` walks (a compressed level over it)."""
    out = []
    for a in accs:
        sp = specs[a.operand]
        if sp.dense:
            continue
        lv = level_vars(a, sp.format)
        if v in lv and sp.format.levels[lv.index(v)].is_sparse:
            out.append(f"T{a.operand}")
    return out


def _parallel(args, order, splits, tiles, stmt, out_fmt, where, accs, specs, renamed, nest,
              decisions=()):
    var, unit, races = args
    if unit != "cpu-thread":
        raise _todo("parallelize", f"unit {unit!r}")
    if tiles is not None and var in (tiles.outer, tiles.inner):
        roots = (tiles.i, tiles.j)
    else:
        roots = tuple(ix for ix, rel in splits if var in (rel.outer, rel.inner)) or \
            tuple(v for v in order if renamed.get(v, v.name) == var)
        walkers = _sparse_walkers(roots[0], accs, specs) if roots else []
        if len(walkers) > 1:
            raise _err("parallelize", f"the loop over {roots[0].name!r} co-iterates {', '.join(walkers)}; "
                                      "a while loop over several operands cannot run on threads "
                                      "(parallelize a loop outside it)")
    outer = nest[0]
    first = next((ix for ix, rel in splits if rel.outer == outer), None) or order[0]
    if var != outer:
        raise _todo("parallelize", f"parallelizing {var!r}: the outermost loop of {where} is "
                                   f"{outer!r}, the only one that runs on threads")
    red = [v for v in roots if v in stmt.reduce_indices]
    if out_fmt is not None and not out_fmt.is_dense:
        # a sparse result whose structure an operand already holds (SDDMM's CSR result, TTV's
        # {dense, compressed} one) has a position for each entry before the loops run: every
        # thread writes its own entries (mode "mask"). Any other takes inserts in order.
        from lazysparse.compiler.plan.workspace import mask_access
        if mask_access(stmt, specs, out_fmt, decisions, prefix=True) is None:
            raise _err("parallelize", f"the result of {where} is stored {out_fmt!r}, which takes no "
                                      "concurrent inserts, and no operand holds its structure; "
                                      "parallelize a kernel with a dense result")
        if red:
            raise _err("parallelize", f"the loop over {var!r} runs reduction variable "
                                      f"{', '.join(map(repr, red))}: its iterations add into the "
                                      f"same entries of a {out_fmt!r} result, which takes no atomics")
        if tiles is not None:
            raise _todo("parallelize", f"tiles of stored entries writing a {out_fmt!r} result")
    # races="temporary": each thread sums into a private copy of a dense result, the copies
    # added after (compiler/lower/parallel.py, Lowerer.parallel); the leaves must add (a sum whose result
    # has indices: a scalar's sum is folded in a local first)
    private = (races == "temporary" and bool(red) and stmt.reduce == "sum" and tiles is None
               and (out_fmt is None or out_fmt.is_dense) and bool(stmt.out_indices))
    if red and races == "temporary" and not private:
        raise _err("parallelize", f"the loop over {var!r} runs reduction variable "
                                  f"{', '.join(map(repr, red))}: races='temporary' gives each thread a "
                                  f"private copy of a dense result with indices, summed; {where} is not "
                                  f"one (use races='atomics')")
    if red and races in ("no-races", "parallel-reduction"):
        raise _err("parallelize", f"the loop over {var!r} runs reduction variable "
                                  f"{', '.join(map(repr, red))}: iterations add into the same results, "
                                  f"so races={races!r} cannot hold; use races='atomics' or 'temporary'")
    if red and races == "atomics" and stmt.reduce != "sum":
        raise _todo("parallelize", f"atomic {stmt.reduce} reductions in {where}")
    if races == "atomics" and np.dtype(stmt.dtype).kind == "c":
        raise _err("parallelize", f"races='atomics' cannot add {stmt.dtype} values of {where} "
                                  "(C has no atomic complex add)")
    if tiles is None and _sparse_walkers(first, accs, specs):
        raise _todo("parallelize", f"the loop over {first.name!r} walks "
                                   f"{_sparse_walkers(first, accs, specs)[0]}'s entries")
    return var, races, bool(red) and races == "atomics" and tiles is None
