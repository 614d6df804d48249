"""Loops of a schedule (paper 001 §5), emitted for the Lowerer from its LoopPlan
(compiler/plan/loops.py): coordinate splits of range loops, tiles of an operand's nonzeros, the
parallel loop and unroll hints.

Guards follow the provenance graph (``Provenance.guarded``): a split whose parent a full tile
may overrun gets two clones of its inner loop, a guard-free one for full tiles and a guarded
tail (``if (x >= N) break``); both clones share one body block, so the body is emitted once.
Recovered coordinates are plain C declarations ahead of that body: ``x = xo * s + xi`` for a
split, and for nonzero tiles a row found by one binary search per tile and advanced as the
positions cross row ends (``while (p >= pos[i + 1]) i++``, which also skips empty rows).
"""
from __future__ import annotations

from lazysparse.compiler.loopir.nodes import Block, Decl, For, If, Line, While


_SIMD_OPS = {"sum": "+", "prod": "*"}


def _unrolled(lw, name, blk, vector_ok=True, v=None):
    """The schedule's hints in front of the loop it calls ``name`` (over statement variable
    ``v``): unroll, vector lanes (not on a loop with a ``break``, which ``omp simd`` does not
    allow: guarded clones stay scalar). Lanes of a reduction variable's loop each sum into a
    private copy of the accumulation (``parallel-reduction``), combined after the loop: only
    where the loop is innermost and sums into the scalar ``acc`` (and its entry count ``cnt``).
    The sum's association changes, as with split accumulators."""
    plan = lw.spec.loops
    f = plan.unroll_of(name)
    if f is not None:
        blk.add(Line(f"#pragma GCC unroll {f}"))
    if not vector_ok or name not in plan.vector:
        return
    if name not in plan.vreduce:
        blk.add(Line("#pragma omp simd"))
        return
    if v is None or not lw.in_acc or lw.order[-1] != v or lw.count:
        raise NotImplementedError(
            f"Schedule.parallelize: vector lanes with races='parallel-reduction' on {name!r}, whose "
            f"loop does not sum innermost into one scalar in `{lw.stmt!r}` (not lowered yet; issue 6)")
    op = _SIMD_OPS[lw.stmt.reduce]
    blk.add(Line(f"#pragma omp simd reduction({op}:acc) reduction(+:cnt)"))


def _par(lw, name):
    par = lw.spec.loops.parallel
    return par is not None and par[0] == name


def range_loop(lw, depth, v, blk, body, followers):
    """The loop over range ``v`` (body ``body``) into ``blk``: split as the schedule says, on
    threads where it says."""
    plan = lw.spec.loops
    x, n = lw.vname[v], lw.ext[v]
    rel = plan.split_of(v) if plan is not None else None
    if rel is None:
        name = plan.name_of(v) if plan is not None else v.name
        where = lw.parallel(depth, v, followers, blk, n, forced=plan is not None and _par(lw, name),
                            span=True)
        if plan is not None:
            _unrolled(lw, name, where, v=v)
        lo, hi = lw.row_span if depth == 0 and lw.row_span is not None else ("0", n)
        if depth == 0 and lw.row_span is not None:
            lw.span_uses += 1
        lo, hi = lw.take_span() or (lo, hi)
        where.add(For(x, lo, hi, body))
        return
    lw.split_done.add(v)
    if v in lw.early_open:  # the outer loop was opened further out (interleaved tiles)
        _inner_loops(lw, v, rel, blk, body)
        return
    tile = open_outer(lw, depth, v, blk, followers)
    _inner_loops(lw, v, rel, tile, body)


def _names(lw, v, rel):
    # C names of the kernel's own (the schedule's names stay out of the generated code)
    x, n = lw.vname[v], lw.ext[v]
    step = f"{x}s" if rel.up else str(rel.factor)
    return x, n, f"{x}o", f"{x}i", f"{x}b", step


def open_outer(lw, depth, v, blk, followers=()):
    """The outer loop of ``v``'s split into ``blk``; returns its body, where the tile's base
    ``xb`` is declared."""
    rel = lw.spec.loops.split_of(v)
    x, n, xo, xi, b, step = _names(lw, v, rel)
    if rel.up:  # divide: ``parts`` outer iterations of CEIL(N, parts)
        count = str(rel.factor)
        blk.add(Decl("const int64_t", step, f"(({n}) + {rel.factor} - 1) / {rel.factor}"))
    else:
        count = f"(({n}) + {rel.factor} - 1) / {rel.factor}"
    tile = Block().add(Decl("const int64_t", b, f"{xo} * {step}"))
    where = lw.parallel(depth, v, followers, blk, count, forced=_par(lw, rel.outer), chunk="1")
    _unrolled(lw, rel.outer, where)
    where.add(For(xo, "0", count, tile))
    return tile


def open_chunks(lw, depth, v, blk):
    """``pos(v, p, A).split(p, p0, p1, U)``: a loop over chunks of U of the segment of A's
    entries that the loop over ``v`` walks, opened here; the loop over ``v`` then walks one
    chunk (A's range cut to it), through the general lowering. Returns the chunk loop's body."""
    q, rel = lw.spec.loops.chunk_of(v)
    a = lw.acc_by_q[q]
    if a.lvl >= len(a.lvars) or a.lvars[a.lvl] != v:
        raise NotImplementedError(f"Schedule.pos: the chunks of T{a.slot}'s entries over {v.name!r} "
                                  f"open where its level is not reached (not lowered yet; issue 6)")
    b, z = lw.range_exprs(a)
    u, f = f"{a.q}_{a.lvl}", rel.factor
    blk.add(Decl("const int64_t", f"kb{u}", b), Decl("const int64_t", f"kz{u}", z))
    body = Block()
    body.add(Decl("const int64_t", f"klo{u}", f"kb{u} + k{u} * {f}"))
    # the chunk's end: the guard p >= segment end, hoisted into its bound
    body.add(Decl("const int64_t", f"khi{u}", f"klo{u} + {f} < kz{u} ? klo{u} + {f} : kz{u}"))
    where = lw.parallel(depth, v, [], blk, f"(kz{u} - kb{u} + {f} - 1) / {f}", forced=_par(lw, rel.outer),
                        chunk="1")
    _unrolled(lw, rel.outer, where)
    where.add(For(f"k{u}", "0", f"(kz{u} - kb{u} + {f} - 1) / {f}", body))
    a.rng = (f"klo{u}", f"khi{u}")
    return body


def _inner_loops(lw, v, rel, tile, body):
    x, n, xo, xi, b, step = _names(lw, v, rel)

    def inner(guard):
        ib = Block().add(Decl("const int64_t", x, f"{b} + {xi}"))
        if guard:
            ib.add(f"if ({x} >= {n}) break;")
        ib.add(body)
        out = Block()
        _unrolled(lw, rel.inner, out, vector_ok=not guard, v=v)
        return out.add(For(xi, "0", step, ib))

    if rel.parent in lw.spec.loops.guarded:
        # full tiles run the guard-free clone; the last, partial one the guarded clone
        tile.add(If(f"{b} + {step} <= {n}", inner(False), inner(True)))
    else:
        tile.add(inner(False))


def emit_tiles(lw, blk):
    """``fuse(i, j).pos(A).split(factor)``: the two outer loops as tiles of ``factor`` of A's
    stored entries (Fig. 4). The tile's first row comes from one binary search of A's
    positions; the tile then runs row segments, each position loop free of checks: the row
    advances where a segment ends (``while (p >= pos[i + 1]) i++``, which skips empty rows),
    and the tile's bound ``min(lo + factor, nnz)`` is the hoisted form of the guard
    ``p >= pos[N]``. Only a tile's first and last rows can be shared with another tile: on
    threads, a reduction over ``j`` summed in ``acc`` is flushed atomically there and plainly
    elsewhere, and without an ``acc`` (a dense inner loop, SpMM) the segment of a shared row
    sums into a private row added atomically at its end (an atomic clone per product past
    ``ROW_BUFFER_MAX`` columns), and a plain clone runs the rows the tile owns."""
    t = lw.spec.loops.tiles
    mode = lw.spec.mode
    if not (mode in ("dense", "dense-acc", "dense-inter", "sort") or (lw.ws and lw.ws_h == 0)):
        # the result's levels are appended, or flushed, as its outer loops end: tiles cut them
        raise NotImplementedError(
            f"Schedule.split: tiles of stored entries for `{lw.stmt!r}` with a {lw.ofmt!r} result "
            f"assembled by {mode!r} (not lowered yet; issue 6): ask for a dense result, or one "
            "whose order the loops scatter into (a workspace over every level)")
    a = lw.acc_by_q[t.q]
    xi = lw.vname[t.i]
    # rows are A's level-0 positions (the coordinates themselves for a dense level)
    dense0 = a.spec.format.levels[0].kind == "dense"
    nrow = f"n{a.slot}_0" if dense0 else f"(int64_t)p{a.slot}_0[1]"
    pos = f"p{a.slot}_1"
    s = t.factor
    par = _par(lw, t.outer)
    acc = lw.spec.mode == "dense-acc"
    lw.out_partial = True  # rows are summed piecewise, and rows without entries stay zero
    blk.add(Decl("const int64_t", "ls_nr", nrow))
    blk.add(Decl("const int64_t", "ls_nnz", f"(int64_t){pos}[ls_nr]"))
    count = f"(ls_nnz + {s} - 1) / {s}"
    tile = Block()
    tile.add(Decl("const int64_t", "ls_lo", f"ls_to * {s}"))
    tile.add(Decl("const int64_t", "ls_hi", f"ls_lo + {s} <= ls_nnz ? ls_lo + {s} : ls_nnz"))
    # the tile's first row: the last whose segment starts at or before ls_lo
    tile.add(Decl("int64_t", "ls_r", "0"), Decl("int64_t", "ls_rh", "ls_nr"))
    tile.add(While("ls_r + 1 < ls_rh", Block().add(
        Decl("const int64_t", "ls_md", "ls_r + ((ls_rh - ls_r) >> 1)"),
        f"if ((int64_t){pos}[ls_md] <= ls_lo) ls_r = ls_md; else ls_rh = ls_md;")))
    tile.add(Decl("int64_t", "ls_p", "ls_lo"))
    seg = Block()
    tile.add(While("ls_p < ls_hi", seg))
    seg.add(f"while (ls_p >= (int64_t){pos}[ls_r + 1]) ls_r++;")
    seg.add(Decl("const int64_t", "ls_re", f"(int64_t){pos}[ls_r + 1]"))
    seg.add(Decl("const int64_t", "ls_e", "ls_re < ls_hi ? ls_re : ls_hi"))
    # the row is the tile's alone: it starts and ends inside it
    own = f"(int64_t){pos}[ls_r] >= ls_lo && ls_re <= ls_hi"
    snap = {b.q: b.snapshot() for b in lw.accs}

    def segment(atomic, store=None):
        """The row's segment [ls_p, ls_e) through the general lowering from the loop over
        ``j`` on: A's level cut to the segment, everything else as without a schedule."""
        sb = Block().add(Decl("const int64_t", xi, "ls_r" if dense0 else f"(int64_t)c{a.slot}_0[ls_r]"))
        lw.bind(t.i)
        lw.advance(a, "ls_r", a.pres, None)  # A's row: level 0 at position ls_r
        lw.cascade(sb)  # the other operands' levels over i
        a.rng = ("ls_p", "ls_e")
        lw.atomic, lw.acc_store = atomic, store
        lw.emit(1, sb)
        lw.atomic, lw.acc_store = False, None  # (a tiled kernel has no other parallel loop)
        lw.bound.discard(t.i)
        for b in lw.accs:
            b.restore(snap[b.q])
        return sb

    if acc:
        def store(sb, target):
            plain = f"{target} += acc;"
            if par:
                sb.add(If(own, Block().add(plain), Block().add(Line("#pragma omp atomic"), plain)))
            else:
                sb.add(plain)
        seg.add(segment(False, store))
    elif par and _row_buffered(lw):
        # a shared row's segment sums into a private row, added atomically once at its end:
        # an atomic add per product made every tile inside a heavy row fight for the same
        # cache line (SpMM, 16 columns, one row with a quarter of the entries: 417 ms against
        # 5 ms on two threads); past ROW_BUFFER_MAX columns, on the stack no more
        n = lw.ext[lw.order[-1]]
        seg.add(If(own, segment(False), Block().add(
            If(f"{n} <= {ROW_BUFFER_MAX}", buffered(lw, segment, n), segment(True)))))
    elif par:
        seg.add(If(own, segment(False), segment(True)))
    else:
        seg.add(segment(False))
    seg.add("ls_p = ls_e;")
    where = lw.parallel(0, t.i, [], blk, count, forced=par, chunk="1")
    _unrolled(lw, t.outer, where)
    where.add(For("ls_to", "0", count, tile))

ROW_BUFFER_MAX = 4096  # columns of a shared row buffered on the stack (32 KB of doubles)


def _row_buffered(lw):
    """A tile's shared rows can sum into a private row: the result has one more index after the
    row, innermost, dense, not summed (SpMM's ``o[i, j]`` in order i, k, j), written by a plain
    add (``dense-inter``)."""
    outs, order = lw.outs, lw.order
    return (lw.spec.mode == "dense-inter" and len(outs) == 2 and order[-1] == outs[1]
            and order[-1] not in lw.red)


def buffered(lw, segment, n):
    """The segment of a shared row over the private row ``ls_rb[n]`` (the leaf's target, as a
    fixed-width row is: ``Lowerer.row_acc``), then each of its elements added atomically."""
    x = lw.vname[lw.order[-1]]
    body = Block()
    body.add(Decl(lw.oct, f"ls_rb[{n} > 0 ? {n} : 1]"))  # (a VLA of no elements is undefined)
    body.add(For(x, "0", n, Block().add(f"ls_rb[{x}] = {lw.zero()};")))
    lw.row_acc = "ls_rb"
    sb = segment(False)
    lw.row_acc = None
    flush = Block().add(Line("#pragma omp atomic"), f"o[{lw.dense_addr()}] += ls_rb[{x}];")
    sb.add(For(x, "0", n, flush))
    body.add(sb)
    return body
