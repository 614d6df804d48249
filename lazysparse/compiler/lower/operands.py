"""Operands as the lowering sees them: the ``ABI`` that records where each kernel parameter
comes from (``p[k]`` buffers, ``d[k]`` integers), ``declare_operand`` for the C names of an
operand's arrays and sizes, ``level_count`` for its number of positions at a level, and the
state of each access as the loops resolve its levels (``AccessState``; ``IteratorMixin``
advances it as a loop binds an index, follows a driver, or resolves bound levels by arithmetic
or a binary search). The ABI, the declarations and the counts serve the fused lowerer too.
"""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.ir.nodes import Const, Index
from lazysparse.compiler.plan.kernel import level_vars
from lazysparse.compiler.loopir.nodes import Block, Decl, While


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
    def ptr(self, desc):
        if desc not in self.p:
            self.p.append(desc)
        return f"p[{self.p.index(desc)}]"

    def int(self, desc):
        if desc not in self.d:
            self.d.append(desc)
        return f"d[{self.d.index(desc)}]"


def declare_operand(top, abi, k, sp):
    """Declarations of operand ``k`` (spec ``sp``) from its ``p[]``/``d[]`` slots: ``v<k>`` values
    (``v<k>s`` for a 0-d one), ``s<k>_<m>`` dense strides, ``p<k>_<l>``/``c<k>_<l>`` positions
    and coordinates of sparse levels, ``n<k>_<l>`` sizes of dense levels."""
    t = C.ctype(sp.dtype)
    if sp.dense:
        if sp.ndim == 0:
            top.add(Decl(f"const {t}", f"v{k}s", f"*(const {t} *){abi.ptr(('in', k, 'vals'))}"))
            return
        top.add(Decl(f"const {t} *restrict", f"v{k}", f"(const {t} *){abi.ptr(('in', k, 'vals'))}"))
        for m in range(sp.ndim):
            top.add(Decl("int64_t", f"s{k}_{m}", abi.int(("stride", k, m))))
        return
    it = C.ctype(sp.index_dtype)
    for l, lv in enumerate(sp.format.levels):
        if lv.kind == "compressed":
            top.add(Decl(f"const {it} *restrict", f"p{k}_{l}", f"(const {it} *){abi.ptr(('in', k, 'pos', l))}"))
        if lv.kind != "dense":
            top.add(Decl(f"const {it} *restrict", f"c{k}_{l}", f"(const {it} *){abi.ptr(('in', k, 'crd', l))}"))
        else:
            top.add(Decl("int64_t", f"n{k}_{l}", abi.int(("size", k, l))))
    top.add(Decl(f"const {t} *restrict", f"v{k}", f"(const {t} *){abi.ptr(('in', k, 'vals'))}"))


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


def level_count(fmt, slot, level):
    """C expression of the number of positions of operand ``slot`` (format ``fmt``) at
    ``level`` (-1: the one root), from the names ``declare_operand`` gives its arrays and
    sizes, or None where a singleton level on the way leaves it unknown."""
    n = "1"
    for l in range(level + 1):
        kind = fmt.levels[l].kind
        if kind == "dense":
            n = f"({n}) * n{slot}_{l}"
        elif kind == "compressed":
            n = f"(int64_t)p{slot}_{l}[{n}]"
        else:
            return None
    return n


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
        blk.add(Decl("int64_t", f"b{u}", b), Decl("int64_t", f"z{u}", z))

    def range_exprs(self, a: AccessState):
        """C expressions of the segment of access ``a`` at its current level: (begin, end)."""
        l = a.lvl
        lv = a.spec.format.levels[l]
        if a.rng is not None:
            return a.rng
        if lv.kind == "compressed":
            pos = f"p{a.slot}_{l}"
            b, z = f"(int64_t){pos}[{a.pos}]", f"(int64_t){pos}[({a.pos}) + 1]"
        else:  # singleton: the parent's position, or the parent's segment
            b = f"(int64_t)({a.pos})"
            z = a.seg if a.seg else f"(int64_t)({a.pos}) + 1"
        if a.pres != "1":
            b, z = f"({a.pres}) ? {b} : 0", f"({a.pres}) ? {z} : 0"
        return b, z

    def advance(self, a: AccessState, pos, pres, seg):
        a.at = a.at[:a.lvl] + (pos,)
        a.lvl += 1
        a.pos, a.pres, a.seg, a.rng = pos, pres, seg, None

    def follow(self, a: AccessState, x, body):
        u = f"{a.q}_{a.lvl}"
        crd = f"c{a.slot}_{a.lvl}"
        j = f"j{u}"
        body.add(f"while ({j} < z{u} && {crd}[{j}] < {x}) {j}++;")
        body.add(Decl("int", f"e{u}", f"{j} < z{u} && {crd}[{j}] == {x}"))
        seg = None
        if not a.spec.format.levels[a.lvl].unique:
            body.add(Decl("int64_t", f"g{u}", f"{j} + 1"))
            body.add(f"if (e{u}) while (g{u} < z{u} && {crd}[g{u}] == {x}) g{u}++;")
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
                c = self.coord(ix)
                if lv.kind == "dense":
                    name = f"q{u}"
                    blk.add(Decl("int64_t", name, f"({a.pos}) * n{a.slot}_{l} + {c}"))
                    self.advance(a, name, a.pres, None)
                    continue
                self.declare_range(a, blk)
                crd = f"c{a.slot}_{l}"
                j = f"j{u}"
                # binary search for the first position with coordinate >= c
                blk.add(Decl("int64_t", j, f"b{u}"), Decl("int64_t", f"hi{u}", f"z{u}"))
                blk.add(While(f"{j} < hi{u}", Block().add(
                    Decl("int64_t", f"md{u}", f"{j} + ((hi{u} - {j}) >> 1)"),
                    f"if ({crd}[md{u}] < {c}) {j} = md{u} + 1; else hi{u} = md{u};")))
                blk.add(Decl("int", f"e{u}", f"{j} < z{u} && {crd}[{j}] == {c}"))
                seg = None
                if not lv.unique:
                    blk.add(Decl("int64_t", f"g{u}", f"{j} + 1"))
                    blk.add(f"if (e{u}) while (g{u} < z{u} && {crd}[g{u}] == {c}) g{u}++;")
                    seg = f"g{u}"
                self.advance(a, j, f"e{u}", seg)
