"""Loops of a schedule (paper 001 §5), emitted for the Lowerer from its LoopPlan
(compiler/plan/loops.py): coordinate splits of range loops, tiles of an operand's nonzeros, the
parallel loop and unroll hints, with the guards the provenance graph asks for
(``Provenance.guarded``) and the recovered coordinates declared ahead of the loops' body."""
from __future__ import annotations

from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block

_SIMD_OPS = {"sum": "+", "prod": "*"}


def _const(name, init):
    return S.Declare(name, T.INDEX, E.var(init), const=True)


def _loop(lw, name, var, lo, hi, body, vector_ok=True, v=None):
    """The loop the schedule calls ``name``, over ``[lo, hi)``, with its hints (``_hints``)."""
    unroll, simd = _hints(lw, name, vector_ok, v)
    return S.For(var, E.var(lo), E.var(hi), body, unroll=unroll, simd=simd)


def _hints(lw, name, vector_ok=True, v=None):
    """The schedule's hints for the loop it calls ``name`` (over statement variable ``v``), as
    ``(unroll factor, SimdHint)``: unroll, vector lanes (not on a loop with a ``break``, which
    vector lanes do not allow: guarded clones stay scalar). Lanes of a reduction variable's loop each sum into a
    private copy of the accumulation (``parallel-reduction``), combined after the loop: only
    where the loop is innermost and sums into the scalar ``acc`` (and its entry count ``cnt``).
    The sum's association changes, as with split accumulators."""
    plan = lw.spec.loops
    f = plan.unroll_of(name) if plan is not None else None
    if plan is None or not vector_ok or name not in plan.vector:
        return f, None
    if name not in plan.vreduce:
        return f, S.SimdHint()
    if v is None or not lw.in_acc or lw.order[-1] != v or lw.count:
        raise NotImplementedError(
            f"Schedule.parallelize: vector lanes with races='parallel-reduction' on {name!r}, whose "
            f"loop does not sum innermost into one scalar in `{lw.stmt!r}` (not lowered yet)")
    op = _SIMD_OPS[lw.stmt.reduce]
    return f, S.SimdHint((S.Reduction(op, "acc"), S.Reduction("+", "cnt")))


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
        lo, hi = lw.row_span if depth == 0 and lw.row_span is not None else ("0", n)
        if depth == 0 and lw.row_span is not None:
            lw.span_uses += 1
        lo, hi = lw.take_span() or (lo, hi)
        where.add(_loop(lw, name, x, lo, hi, body, v=v))
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
    ceil = E.Binary("/", E.Binary("-", E.Binary("+", E.Paren(E.var(n)), E.Int(rel.factor)), E.Int(1)),
                    E.Int(rel.factor))
    if rel.up:  # divide: ``parts`` outer iterations of CEIL(N, parts)
        count = E.Int(rel.factor)
        blk.add(_const(step, ceil))
    else:
        count = ceil
    tile = Block().add(_const(b, E.mul(xo, step)))
    where = lw.parallel(depth, v, followers, blk, count, forced=_par(lw, rel.outer), chunk="1")
    where.add(_loop(lw, rel.outer, xo, E.Int(0), count, tile))
    return tile


def open_chunks(lw, depth, v, blk):
    """``pos(v, p, A).split(p, p0, p1, U)``: a loop over chunks of U of the segment of A's
    entries that the loop over ``v`` walks, opened here; the loop over ``v`` then walks one
    chunk (A's range cut to it), through the general lowering. Returns the chunk loop's body."""
    q, rel = lw.spec.loops.chunk_of(v)
    a = lw.acc_by_q[q]
    if a.lvl >= len(a.lvars) or a.lvars[a.lvl] != v:
        raise NotImplementedError(f"Schedule.pos: the chunks of T{a.slot}'s entries over {v.name!r} "
                                  f"open where its level is not reached (not lowered yet)")
    b, z = lw.range_exprs(a)
    u, f = f"{a.q}_{a.lvl}", E.Int(rel.factor)
    kb, kz, klo = E.Var(f"kb{u}"), E.Var(f"kz{u}"), E.Var(f"klo{u}")
    blk.add(_const(f"kb{u}", b), _const(f"kz{u}", z))
    body = Block()
    body.add(_const(f"klo{u}", E.add(kb, E.mul(f"k{u}", f))))
    # the chunk's end: the guard p >= segment end, hoisted into its bound
    end = E.add(klo, f)
    body.add(_const(f"khi{u}", E.Select(E.lt(end, kz), end, kz)))
    count = E.Binary("/", E.sub(E.add(E.sub(kz, kb), f), 1), f)
    where = lw.parallel(depth, v, [], blk, count, forced=_par(lw, rel.outer), chunk="1")
    where.add(_loop(lw, rel.outer, f"k{u}", E.Int(0), count, body))
    a.rng = (f"klo{u}", f"khi{u}")
    return body


def _inner_loops(lw, v, rel, tile, body):
    """The inner loop of split ``rel`` of range ``v`` into ``tile``, each iteration recovering
    ``x = xo * s + xi`` ahead of ``body``. Where a full tile may overrun the split's parent
    (``Provenance.guarded``) there are two clones, a guard-free one for full tiles and a guarded
    tail (``if (x >= N) break``); both share one body block, so the body is emitted once."""
    x, n, xo, xi, b, step = _names(lw, v, rel)

    def inner(guard):
        ib = Block().add(_const(x, E.add(b, xi)))
        if guard:
            ib.add(S.If(E.Binary(">=", E.Var(x), E.var(n)), S.Break(), oneline=True))
        ib.add(body)
        return Block().add(_loop(lw, rel.inner, xi, E.Int(0), E.var(step), ib, vector_ok=not guard, v=v))

    if rel.parent in lw.spec.loops.guarded:
        # full tiles run the guard-free clone; the last, partial one the guarded clone
        tile.add(S.If(E.Binary("<=", E.add(b, step), E.var(n)), inner(False), inner(True)))
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
            f"assembled by {mode!r} (not lowered yet): ask for a dense result, or one "
            "whose order the loops scatter into (a workspace over every level)")
    a = lw.acc_by_q[t.q]
    xi = lw.vname[t.i]
    # rows are A's level-0 positions (the coordinates themselves for a dense level)
    dense0 = a.spec.format.levels[0].is_dense
    pos = E.Var(f"p{a.slot}_1")
    nrow = E.Var(f"n{a.slot}_0") if dense0 else E.Cast(T.INDEX, E.load(f"p{a.slot}_0", 1))
    s = E.Int(t.factor)
    par = _par(lw, t.outer)
    acc = lw.spec.mode == "dense-acc"
    lw.out_partial = True  # rows are summed piecewise, and rows without entries stay zero
    lo, hi, r, rh, md, p, re, e = (E.Var(n) for n in ("ls_lo", "ls_hi", "ls_r", "ls_rh", "ls_md", "ls_p",
                                                      "ls_re", "ls_e"))
    nnz = E.Var("ls_nnz")

    def row_end(k):  # where row ``k`` ends (A's level-1 positions)
        return E.Cast(T.INDEX, E.Load(pos, k))
    blk.add(_const("ls_nr", nrow))
    blk.add(_const("ls_nnz", row_end(E.Var("ls_nr"))))
    count = E.Binary("/", E.sub(E.add(nnz, s), 1), s)
    tile = Block()
    tile.add(_const("ls_lo", E.mul("ls_to", s)))
    tile.add(_const("ls_hi", E.Select(E.Binary("<=", E.add(lo, s), nnz), E.add(lo, s), nnz)))
    # the tile's first row: the last whose segment starts at or before ls_lo
    tile.add(S.Declare("ls_r", T.INDEX, E.Int(0)), S.Declare("ls_rh", T.INDEX, E.Var("ls_nr")))
    tile.add(S.While(E.lt(E.add(r, 1), rh), Block().add(
        _const("ls_md", E.add(r, E.Binary(">>", E.sub(rh, r), E.Int(1)))),
        S.If(E.Binary("<=", row_end(md), lo), S.Assign(r, md), S.Assign(rh, md), oneline=True))))
    tile.add(S.Declare("ls_p", T.INDEX, lo))
    seg = Block()
    tile.add(S.While(E.lt(p, hi), seg))
    seg.add(S.While(E.Binary(">=", p, row_end(E.add(r, 1))), S.Update(r, "+", E.Int(1)), oneline=True))
    seg.add(_const("ls_re", row_end(E.add(r, 1))))
    seg.add(_const("ls_e", E.Select(E.lt(re, hi), re, hi)))
    # the row is the tile's alone: it starts and ends inside it
    own = E.Binary("&&", E.Binary(">=", row_end(r), lo), E.Binary("<=", re, hi))
    snap = {b.q: b.snapshot() for b in lw.accs}

    def segment(atomic, store=None):
        """The row's segment [ls_p, ls_e) through the general lowering from the loop over
        ``j`` on: A's level cut to the segment, everything else as without a schedule."""
        sb = Block().add(_const(xi, r if dense0 else E.Cast(T.INDEX, E.load(f"c{a.slot}_0", r))))
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
        def store(sb, target):  # (``target``: the result's element, an expression)
            plain = S.Update(target, "+", E.Var("acc"))
            if par:
                sb.add(S.If(own, Block().add(plain), Block().add(S.Atomic(plain))))
            else:
                sb.add(plain)
        seg.add(segment(False, store))
    elif par and _row_buffered(lw):
        # a shared row's segment sums into a private row, added atomically once at its end:
        # an atomic add per product made every tile inside a heavy row fight for the same
        # cache line (SpMM, 16 columns, one row with a quarter of the entries: 417 ms against
        # 5 ms on two threads); past ROW_BUFFER_MAX columns, on the stack no more
        n = lw.ext[lw.order[-1]]
        seg.add(S.If(own, segment(False), Block().add(
            S.If(E.Binary("<=", E.var(n), E.Int(ROW_BUFFER_MAX)), buffered(lw, segment, n), segment(True)))))
    elif par:
        seg.add(S.If(own, segment(False), segment(True)))
    else:
        seg.add(segment(False))
    seg.add(S.Assign(p, e))
    where = lw.parallel(0, t.i, [], blk, count, forced=par, chunk="1")
    where.add(_loop(lw, t.outer, "ls_to", E.Int(0), count, tile))

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
    n = E.var(n)
    rb = E.Var("ls_rb")
    # (a VLA of no elements is undefined)
    body.add(S.Declare("ls_rb", T.Array(T.scalar(lw.odt), E.Select(E.Binary(">", n, E.Int(0)), n, E.Int(1)))))
    body.add(S.For(x, E.Int(0), n, Block().add(S.Assign(E.Load(rb, E.Var(x)), E.var(lw.zero())))))
    lw.row_acc = "ls_rb"
    sb = segment(False)
    lw.row_acc = None
    flush = Block().add(S.Atomic(S.Update(E.Load(E.Var("o"), lw.dense_index()), "+", E.Load(rb, E.Var(x)))))
    sb.add(S.For(x, E.Int(0), n, flush))
    body.add(sb)
    return body
