"""Sort-based assembly of sparse results whose loop order cannot append in storage order: the
kernel emits ``(coordinates, value)`` pairs, which ``emit_sort_assembly`` sorts, combines and
compresses into the output levels (``emit_scatter_assembly``: a transposition's single counting
pass). The paper-003 workspaces (compiler/lower/workspace.py) take the place of this where
they apply."""
from __future__ import annotations

from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block

IDX = T.INDEX  # the scratch arrays' element type (positions and coordinates)
t, u, r = E.Var("t"), E.Var("u"), E.Var("r")


def _v(name):
    return E.Var(name)


def _for(hi, *body, var="t", lo=0):
    return S.For(var, E.var(lo), E.var(hi), Block().add(*body))


def _oneline(cond, *stmts):
    return S.If(cond, stmts[0] if len(stmts) == 1 else S.Inline(stmts), oneline=True)


def _at_least_one(n):
    """``n``, or 1 where it is 0 (an allocation of no elements may return null)."""
    n = E.var(n)
    return E.Select(E.Binary(">", n, E.Int(0)), n, E.Int(1))


def emit_sort_assembly(lw, top: Block):
    """The kernel's ``(coordinates, value)`` pairs sorted by storage order (stable LSD counting
    sort, one pass per level, O(levels * (n + extent)); a stable merge sort for a level whose
    extent is far larger than n), duplicates combined with the statement's reduction (folding
    in the fill value where fewer than the full reduction extent contributed), and the unique
    coordinates compressed into the output levels."""
    nd = len(lw.outs)
    if (nd == 2 and lw.kd == 1 and not lw.ocoo and not lw.red and lw.olv[1].has_pos
            and lw.ovars[1] == lw.order[0]):
        emit_scatter_assembly(lw, top)
        return
    it, val = T.scalar(lw.spec.output.index_dtype), T.scalar(lw.odt)
    red = lw.stmt.reduce
    perm, tmp, h, tn = _v("perm"), _v("tmp"), _v("h"), _v("tn")
    b = Block()
    top.add(b)
    # perm, tmp, h (and nx below) are declared NULL at the kernel's top (lowering.py) and freed
    # on its failure path; each is set back to NULL once freed here
    b.add(S.Assign(perm, E.Alloc(IDX, _at_least_one(tn))), S.Assign(tmp, E.Alloc(IDX, _at_least_one(tn))),
          _oneline(E.Binary("||", E.Unary("!", perm), E.Unary("!", tmp)), S.Fail()))
    b.add(_for(tn, S.Assign(E.Load(perm, t), t)))
    # entries are emitted in loop order: if the innermost level's index is the outermost loop,
    # they are already sorted by it and that counting pass is skipped (CSR->CSC is one pass)
    skip = nd - 1 if nd > 1 and lw.ovars[nd - 1] == lw.order[0] else None
    for l in reversed(range(nd)):
        if l == skip:
            continue
        osz, tc, ms = _v(f"osz{l}"), _v(f"tc{l}"), _v("ms")
        sb = Block()
        # a counting pass needs a histogram over the level's extent: when that is much larger
        # than the entries (a huge, hypersparse dimension) a stable merge sort is used instead,
        # O(n log n) time and no O(extent) memory
        b.add(S.If(E.Binary(">", osz, E.add(E.mul(4, tn), 4096)), Block().add(
            S.Declare("ms", T.Ptr(IDX), E.SupportCall("msort", (perm, tmp, tn, tc))),
            _oneline(E.Binary("!=", ms, perm), S.Assign(tmp, perm), S.Assign(perm, ms))), sb))
        sb.add(S.Assign(h, E.Alloc(IDX, E.add(E.Cast(T.SIZE, osz), 1), zero=True)),
               _oneline(E.Unary("!", h), S.Fail()))
        sb.add(_for(tn, S.Update(E.Load(h, E.add(E.Load(tc, t), 1)), "+", E.Int(1))))
        sb.add(_for(osz, S.Update(E.Load(h, E.add(t, 1)), "+", E.Load(h, t))))
        sb.add(_for(tn, S.Assign(E.Load(tmp, E.PostInc(E.Load(h, E.Load(tc, E.Load(perm, t))))), E.Load(perm, t))))
        sw = _v("sw")
        sb.add(S.Scope((S.Declare("sw", T.Ptr(IDX), perm), S.Assign(perm, tmp), S.Assign(tmp, sw)), oneline=True),
               S.Inline((S.Free(h), S.Assign(h, E.Null()))))
    # combine duplicates and build levels; dense-prefix positions are implicit
    ov, tv, ucnt = _v("ov"), _v("tv"), _v("ucnt")
    loop = Block()
    b.add(S.Declare("u", IDX, E.Int(-1)), S.Declare("ucnt", IDX, E.Int(0)))
    b.add(S.For("t", E.Int(0), tn, loop))
    loop.add(S.Declare("r", IDX, E.Load(perm, t)))
    loop.add(S.Declare("dl", T.INT, E.Select(E.Binary("==", t, E.Int(0)), E.Int(0), _first_diff(nd))))
    same = Block().add(S.Reduce(red, E.Load(ov, u), E.Load(tv, r), lw.odt), S.Update(ucnt, "+", E.Int(1)))
    new = Block()
    fold = _oneline(E.Binary("&&", E.Binary(">=", u, E.Int(0)), E.Binary("<", ucnt, lw.red_total_expr())),
                    S.Reduce(red, E.Load(ov, u), E.var(lw.zero()), lw.odt))
    if red in ("max", "min", "prod"):
        new.add(fold)
    new.add(S.Assign(ucnt, E.Int(1)))
    if lw.ocoo:
        nc, ovc = _v("nc_"), _v("ovc")
        new.add(S.Update(u, "+", E.Int(1)))
        more = E.add(u, 1)
        grow = [S.Declare("nc_", IDX, E.Select(E.Binary(">", E.mul(ovc, 2), more), E.mul(ovc, 2), more))]
        for l in range(nd):
            grow += [S.Resize(it, _v(f"oc{l}"), nc), S.Assign(_v(f"occ{l}"), nc)]
        grow += [S.Resize(val, ov, nc), S.Assign(ovc, nc)]
        new.add(_oneline(E.Binary(">=", u, ovc), *grow))
        for l in range(nd):
            new.add(S.Assign(E.Load(_v(f"oc{l}"), u), E.Cast(it, E.Load(_v(f"tc{l}"), r))))
        new.add(S.Assign(E.Load(ov, u), E.Load(tv, r)))
        for l in range(nd):
            new.add(S.Assign(_v(f"on{l}"), E.add(u, 1)))
    else:
        append_levels(lw, new, lambda l: E.Load(_v(f"tc{l}"), r), 0, "0")
        new.add(S.Assign(u, E.sub(f"on{nd - 1}", 1)))
        new.add(S.Grow(val, ov, _v("ovc"), E.add(u, 1)))
        new.add(S.Assign(E.Load(ov, u), E.Load(tv, r)))
    loop.add(S.If(E.Binary("||", E.Binary("==", t, E.Int(0)), E.lt("dl", nd)), new, same))
    if red in ("max", "min", "prod"):
        b.add(fold)
    b.add(S.Inline((S.Free(perm), S.Free(tmp), S.Assign((perm, tmp), E.Null()))))
    for l in range(nd):
        b.add(S.Inline((S.Free(_v(f"tc{l}")), S.Assign(_v(f"tc{l}"), E.Null()))))
    b.add(S.Inline((S.Free(tv), S.Assign(tv, E.Null()))))


def append_levels(lw, blk, coord, first, dpos0, grow=True):
    """Append one entry to result levels ``first..`` from the level ``dl`` (a variable: the
    first level where it differs from the previous entry) down: a coordinate per compressed
    level and its parent's end position. ``coord(l)``: the expression of its coordinate at
    level ``l``; ``dpos0``: the position of the dense levels before ``first`` (a name, "0" when
    none); ``grow``: check the coordinate arrays' room per entry
    (else the caller reserved it). Dense levels store nothing: their coordinates make the
    position of the first compressed one. (The sort assembly appends all levels; a
    workspace's flush those below the hoisted ones.)"""
    it, kd, nd = T.scalar(lw.spec.output.index_dtype), lw.kd, len(lw.outs)
    dpos = E.var(dpos0)
    for l in range(first, kd):
        dpos = E.add(E.mul(E.Paren(dpos), f"osz{l}"), coord(l))
    for l in range(max(first, kd), nd):
        oc, on, op = _v(f"oc{l}"), _v(f"on{l}"), _v(f"op{l}")
        app = Block()
        if grow:
            app.add(S.Grow(it, oc, _v(f"occ{l}"), E.add(on, 1)))
        app.add(S.Assign(E.Load(oc, on), E.Cast(it, coord(l))), S.Update(on, "+", E.Int(1)))
        if l == kd:
            app.add(S.Assign(E.Load(op, E.add(E.Paren(dpos), 1)), E.Cast(it, on)))
        elif l > first:  # (a hoisted compressed parent writes its end when it closes)
            up, c = _v(f"on{l - 1}"), _v("c_")
            app.add(_oneline(E.Binary(">", E.add(up, 1), _v(f"opc{l}")), S.Declare("c_", IDX, _v(f"opc{l}")),
                             S.Grow(it, op, c, E.add(up, 1)), S.Assign(_v(f"opc{l}"), c)))
            app.add(S.Assign(E.Load(op, up), E.Cast(it, on)))
        blk.add(S.If(E.Binary("<=", _v("dl"), E.Int(l)), app))


def _first_diff(nd):
    """The first level where tuple perm[t] differs from perm[t-1] (nd if equal)."""
    out = E.Int(nd)
    prev = E.Load(_v("perm"), E.sub(t, 1))
    for l in reversed(range(nd)):
        tc = _v(f"tc{l}")
        out = E.Paren(E.Select(E.Binary("!=", E.Load(tc, r), E.Load(tc, prev)), E.Int(l), out))
    return out


def emit_scatter_assembly(lw, top: Block):
    """One counting pass, no permutation: a dense outer level over a compressed one, entries
    emitted already sorted by the inner index, no duplicates (no reduction). The histogram of
    outer coordinates is the position array; a stable scatter puts each entry in place (this is
    what CSR<->CSC transposition needs)."""
    it, val = T.scalar(lw.spec.output.index_dtype), T.scalar(lw.odt)
    op1, tc0, tc1, nx, tv, tn = (_v(n) for n in ("op1", "tc0", "tc1", "nx", "tv", "tn"))
    b = Block()
    top.add(b)
    b.add(_for(tn, S.Update(E.Load(op1, E.add(E.Load(tc0, t), 1)), "+", E.Int(1))))
    b.add(_for("osz0", S.Update(E.Load(op1, E.add(t, 1)), "+", E.Load(op1, t))))
    b.add(S.Assign(nx, E.Alloc(IDX, _at_least_one("osz0"))), _oneline(E.Unary("!", nx), S.Fail()))
    b.add(_for("osz0", S.Assign(E.Load(nx, t), E.Load(op1, t))))
    b.add(S.Grow(it, _v("oc1"), _v("occ1"), tn), S.Grow(val, _v("ov"), _v("ovc"), tn))
    at = _v("at")
    b.add(_for(tn, S.Declare("at", IDX, E.PostInc(E.Load(nx, E.Load(tc0, t)))),
               S.Assign(E.Load(_v("oc1"), at), E.Cast(it, E.Load(tc1, t))), S.Assign(E.Load(_v("ov"), at), E.Load(tv, t))))
    b.add(S.Assign(_v("on1"), tn), S.Inline((S.Free(nx), S.Free(tc0), S.Free(tc1), S.Free(tv))),
          S.Inline((S.Assign((nx, tc0, tc1), E.Null()), S.Assign(tv, E.Null()))))
