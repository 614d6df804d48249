"""Loops of a schedule (paper 001 §5), emitted for the Lowerer from its LoopPlan
(planner/loops.py): coordinate splits of range loops, tiles of an operand's nonzeros, the
parallel loop and unroll hints.

Guards follow the provenance graph (``Provenance.guarded``): a split whose parent a full tile
may overrun gets two clones of its inner loop, a guard-free one for full tiles and a guarded
tail (``if (x >= N) break``); both clones share one body block, so the body is emitted once.
Recovered coordinates are plain C declarations ahead of that body: ``x = xo * s + xi`` for a
split, and for nonzero tiles a row found by one binary search per tile and advanced as the
positions cross row ends (``while (p >= pos[i + 1]) i++``, which also skips empty rows).
"""
from __future__ import annotations

from ..backends import ctypes_ as C
from ..ir import ops
from .loopir import Block, Decl, For, If, Line, While


def _unrolled(lw, name, blk):
    f = lw.spec.loops.unroll_of(name)
    if f is not None:
        blk.add(Line(f"#pragma GCC unroll {f}"))


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
        where = lw.parallel(depth, v, followers, blk, n, forced=plan is not None and _par(lw, name))
        if plan is not None:
            _unrolled(lw, name, where)
        where.add(For(x, "0", n, body))
        return
    lw.split_done.add(v)
    # C names of the kernel's own (the schedule's names stay out of the generated code)
    xo, xi, b = f"{x}o", f"{x}i", f"{x}b"
    if rel.up:  # divide: ``parts`` outer iterations of CEIL(N, parts)
        step, count = f"{x}s", str(rel.factor)
        blk.add(Decl("const int64_t", step, f"(({n}) + {rel.factor} - 1) / {rel.factor}"))
    else:
        step, count = str(rel.factor), f"(({n}) + {rel.factor} - 1) / {rel.factor}"
    tile = Block().add(Decl("const int64_t", b, f"{xo} * {step}"))

    def inner(guard):
        ib = Block().add(Decl("const int64_t", x, f"{b} + {xi}"))
        if guard:
            ib.add(f"if ({x} >= {n}) break;")
        ib.add(body)
        out = Block()
        _unrolled(lw, rel.inner, out)
        return out.add(For(xi, "0", step, ib))

    if rel.parent in plan.guarded:
        # full tiles run the guard-free clone; the last, partial one the guarded clone
        tile.add(If(f"{b} + {step} <= {n}", inner(False), inner(True)))
    else:
        tile.add(inner(False))
    where = lw.parallel(depth, v, followers, blk, count, forced=_par(lw, rel.outer), chunk="1")
    _unrolled(lw, rel.outer, where)
    where.add(For(xo, "0", count, tile))


def emit_tiles(lw, blk):
    """``fuse(i, j).pos(A).split(factor)``: the two outer loops as tiles of ``factor`` of A's
    stored entries (Fig. 4). The tile's first row comes from one binary search of A's
    positions; the tile then runs row segments, each position loop free of checks: the row
    advances where a segment ends (``while (p >= pos[i + 1]) i++``, which skips empty rows),
    and the tile's bound ``min(lo + factor, nnz)`` is the hoisted form of the guard
    ``p >= pos[N]``. Only a tile's first and last rows can be shared with another tile: on
    threads, a reduction over ``j`` summed in ``acc`` is flushed atomically there and plainly
    elsewhere, and without an ``acc`` (a dense inner loop, SpMM) the segment runs an atomic
    clone for shared rows and a plain one for rows the tile owns."""
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
    elif par:
        seg.add(If(own, segment(False), segment(True)))
    else:
        seg.add(segment(False))
    seg.add("ls_p = ls_e;")
    where = lw.parallel(0, t.i, [], blk, count, forced=par, chunk="1")
    _unrolled(lw, t.outer, where)
    where.add(For("ls_to", "0", count, tile))
