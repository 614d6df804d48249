"""Operands as the lowering sees them: the ``ABI`` that records where each kernel parameter
comes from (``p[k]`` buffers, ``d[k]`` integers), ``declare_operand`` for the C names of an
operand's arrays and sizes, ``level_count_expr`` for its number of positions at a level, and the
state of each access as the loops resolve its levels (``AccessState``; ``IteratorMixin``
advances it as a loop binds an index, follows a driver, or resolves bound levels by arithmetic
or a binary search). The ABI, the declarations and the counts serve the fused lowerer too.
"""
from __future__ import annotations

from lazysparse.ir.nodes import Const, Index
from lazysparse.compiler.plan.kernel import level_vars
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.lower.level_builder import LevelIR
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block


class ABI:
    """Where each kernel parameter comes from: ``p[k]`` pointers and ``d[k]`` integers."""

    def __init__(self):
        self.p = []
        self.d = []
        # the kernel stores every element of its dense result (no zero-fill needed before it)
        self.writes_all = False
        # ... or does so when its result's last extent is one of these (its fixed-width
        # register-row versions, which start their rows at zero: Lowerer.emit_row)
        self.writes_rows = ()

    # an equal descriptor is the same slot: a loop nest emitted once per version asks again
    @staticmethod
    def _slot(slots, desc):
        if desc not in slots:
            slots.append(desc)
        return slots.index(desc)

    def ptr_expr(self, desc):
        """The ``p[k]`` pointer of ``desc``."""
        return E.Load(E.Var("p"), E.Int(self._slot(self.p, desc)))

    def int_expr(self, desc):
        """The ``d[k]`` integer of ``desc``."""
        return E.Load(E.Var("d"), E.Int(self._slot(self.d, desc)))


def declare_operand(top, abi, k, sp):
    """Declarations of operand ``k`` (spec ``sp``) from its ``p[]``/``d[]`` slots: ``v<k>`` values
    (``v<k>s`` for a 0-d one), ``s<k>_<m>`` dense strides, ``p<k>_<l>``/``c<k>_<l>`` positions
    and coordinates of sparse levels, ``n<k>_<l>`` sizes of dense levels."""

    def array(name, dtype, desc):  # a read-only array from its ``p[]`` slot
        top.add(S.Declare(name, T.ptr(dtype, const=True, restrict=True),
                          E.Cast(T.ptr(dtype, const=True), abi.ptr_expr(desc))))

    if sp.dense:
        if sp.ndim == 0:
            top.add(S.Declare(f"v{k}s", T.scalar(sp.dtype),
                              E.Deref(E.Cast(T.ptr(sp.dtype, const=True), abi.ptr_expr(("in", k, "vals")))),
                              const=True))
            return
        array(f"v{k}", sp.dtype, ("in", k, "vals"))
        for m in range(sp.ndim):
            top.add(S.Declare(f"s{k}_{m}", T.INDEX, abi.int_expr(("stride", k, m))))
        return
    for l, lv in enumerate(sp.format.levels):
        if lv.has_pos:
            array(f"p{k}_{l}", sp.index_dtype, ("in", k, "pos", l))
        if lv.has_crd:
            array(f"c{k}_{l}", sp.index_dtype, ("in", k, "crd", l))
        if lv.is_dense:  # (its extent: a dense level's positions are arithmetic)
            top.add(S.Declare(f"n{k}_{l}", T.INDEX, abi.int_expr(("size", k, l))))
    array(f"v{k}", sp.dtype, ("in", k, "vals"))


class AccessState:
    """Lowering state of one access: how many levels are resolved, position, presence."""
    __slots__ = ("q", "acc", "slot", "spec", "lvars", "lvl", "pos", "pres", "seg", "rng", "at")

    def __init__(self, q, acc, spec):
        self.q, self.acc, self.slot, self.spec = q, acc, acc.operand, spec
        self.lvars = level_vars(acc, spec.format) if not spec.dense else []
        self.lvl, self.pos, self.pres, self.seg = 0, "0", "1", None
        # (begin, end) of the current level's segment when a schedule's tile cuts it
        # (compiler/lower/tiling.py), else None: the positions array's
        self.rng = None
        # the position at each resolved level (a mask's result position is at the level of
        # the result's last index, under the levels a reduction walks: compiler/plan/workspace.py)
        self.at = ()

    def snapshot(self):
        return (self.lvl, self.pos, self.pres, self.seg, self.rng, self.at)

    def restore(self, s):
        self.lvl, self.pos, self.pres, self.seg, self.rng, self.at = s


def level_count_expr(fmt, slot, level):
    """The number of positions of operand ``slot`` (format ``fmt``) at ``level`` (-1: the one
    root), over the names ``declare_operand`` gives its arrays and sizes, or None where a
    singleton level on the way leaves it unknown."""
    n = E.Int(1)
    for l in range(level + 1):
        n = fmt.levels[l].level_kind.size(LevelIR(slot, l), n)
        if n is None:
            return None
    return n


def chain(op, xs):
    """``xs`` (expressions, or names and numbers as text) joined by binary ``op``, left to
    right."""
    xs = [E.var(x) for x in xs]
    out = xs[0]
    for x in xs[1:]:
        out = E.Binary(op, out, x)
    return out


def skip_equal(g, z, crd, x, present):
    """``g`` moved past the entries equal to ``x`` in ``[g, z)`` of coordinates ``crd``, where
    ``present`` holds (None: always)."""
    skip = S.While(E.Binary("&&", E.lt(g, z), E.Binary("==", E.load(crd, g), E.var(x))),
                   S.Update(E.Var(g), "+", E.Int(1)), oneline=True)
    return skip if present is None else S.If(E.var(present), skip, oneline=True, bare=True)


class IteratorMixin:
    """The lowering's level iterators: a loop binds its index (``bind``), each iterator's
    segment at its level (``range_exprs``), a driver's or follower's step to the next level
    (``advance``, ``follow``), and the levels resolved once their index is bound (``cascade``).
    Reads ``accs``, ``bound``, ``vname``; writes the ``AccessState`` of each access and
    ``bound``."""

    def bind(self, v):
        self.bound.add(v)

    def declare_range(self, a: AccessState, blk):
        b, z = self.range_exprs(a)
        u = f"{a.q}_{a.lvl}"
        blk.add(S.Declare(f"b{u}", T.INDEX, b), S.Declare(f"z{u}", T.INDEX, z))

    def range_exprs(self, a: AccessState):
        """The segment of access ``a`` at its current level: (begin, end) expressions."""
        l = a.lvl
        lv = a.spec.format.levels[l]
        if a.rng is not None:
            return tuple(E.var(x) for x in a.rng)
        # (a singleton's: the parent's position, or the parent's run of equal coordinates)
        b, z = lv.level_kind.iterate(LevelIR(a.slot, l), E.var(a.pos), E.var(a.seg) if a.seg else None)
        if a.pres != "1":
            pres = E.Paren(E.var(a.pres))
            b, z = E.Select(pres, b, E.Int(0)), E.Select(pres, z, E.Int(0))
        return b, z

    def advance(self, a: AccessState, pos, pres, seg):
        a.at = a.at[:a.lvl] + (pos,)
        a.lvl += 1
        a.pos, a.pres, a.seg, a.rng = pos, pres, seg, None

    def follow(self, a: AccessState, x, body):
        u = f"{a.q}_{a.lvl}"
        crd = f"c{a.slot}_{a.lvl}"
        j, z = f"j{u}", f"z{u}"
        body.add(S.While(E.Binary("&&", E.lt(j, z), E.lt(E.load(crd, j), x)), S.Update(E.Var(j), "+", E.Int(1)),
                         oneline=True))
        body.add(S.Declare(f"e{u}", T.INT, E.Binary("&&", E.lt(j, z), E.Binary("==", E.load(crd, j), E.var(x)))))
        seg = None
        if not a.spec.format.levels[a.lvl].unique:
            body.add(S.Declare(f"g{u}", T.INDEX, E.add(j, 1)))
            body.add(skip_equal(f"g{u}", z, crd, x, f"e{u}"))
            seg = f"g{u}"
        self.advance(a, j, f"e{u}", seg)

    def coord(self, ix):
        return str(ix.value) if isinstance(ix, Const) else self.vname[ix]

    def cascade(self, blk):
        """Resolve every level whose index is now known: dense arithmetic or a search."""
        for a in self.accs:
            if a.spec.dense:
                continue
            while a.lvl < len(a.lvars):
                ix = a.lvars[a.lvl]
                if isinstance(ix, Index) and ix not in self.bound:
                    break
                l = a.lvl
                u = f"{a.q}_{l}"
                lv = a.spec.format.levels[l]
                c = E.var(self.coord(ix))
                q = lv.level_kind.locate(LevelIR(a.slot, l), E.var(a.pos), c)
                if q is not None:  # (a dense level: arithmetic; the others are searched below)
                    name = f"q{u}"
                    blk.add(S.Declare(name, T.INDEX, q))
                    self.advance(a, name, a.pres, None)
                    continue
                self.declare_range(a, blk)
                crd = f"c{a.slot}_{l}"
                j, hi, md, z = E.Var(f"j{u}"), E.Var(f"hi{u}"), E.Var(f"md{u}"), E.Var(f"z{u}")
                # binary search for the first position with coordinate >= c
                blk.add(S.Declare(j.name, T.INDEX, E.Var(f"b{u}")), S.Declare(hi.name, T.INDEX, z))
                blk.add(S.While(E.lt(j, hi), Block().add(
                    S.Declare(md.name, T.INDEX, E.add(j, E.Binary(">>", E.sub(hi, j), E.Int(1)))),
                    S.If(E.lt(E.load(crd, md), c), S.Assign(j, E.add(md, 1)), S.Assign(hi, md), oneline=True))))
                blk.add(S.Declare(f"e{u}", T.INT, E.Binary("&&", E.lt(j, z), E.Binary("==", E.load(crd, j), c))))
                seg = None
                if not lv.unique:
                    blk.add(S.Declare(f"g{u}", T.INDEX, E.add(j, 1)))
                    blk.add(skip_equal(f"g{u}", f"z{u}", crd, self.coord(ix), f"e{u}"))
                    seg = f"g{u}"
                self.advance(a, j.name, f"e{u}", seg)
