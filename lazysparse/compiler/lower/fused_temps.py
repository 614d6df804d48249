"""Temporaries of a fused kernel (``FusedTempMixin``): dense over their kept dimensions, or
indexed by position in the sparse segment that drives every loop over them (``sparsify``: SDDMM's
``T`` along B's row, sized by the longest segment), allocated once per call (per thread on
threads), reset to their identity where the plan says, and addressed at the subscripts they are
read at.
"""
from __future__ import annotations

from functools import reduce

from lazysparse.ir import ops
from lazysparse.ir.nodes import Const, Index
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.lower.operands import level_count_expr
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block
from lazysparse.compiler.lower.fused_loops import Unsupported, ex


ZERO_TEMPS = [True]


class FusedTempMixin:
    """Temporaries. Reads ``temps`` (``declare``) and ``sparse_temps`` (``sparsify``, recorded
    by ``lower``); owns ``segmax``."""

    def alloc_temps(self, blk):
        """Temporaries dense over their kept dimensions, zeroed, one allocation per call (per
        thread in a parallel kernel). Returns the condition that one could not be had (None:
        no allocation)."""
        for vid, (name, kept) in self.temps.items():
            t = T.scalar(self.prog.values[vid].dtype)
            if not kept:  # a scalar: a local the C compiler keeps in a register
                arr = T.Array(t, E.Int(1))
                blk.add(S.Declare(name, arr, E.Zero(arr)))
                continue
            size = reduce(E.mul, (ex(self.ext[ix]) for ix in kept))
            if vid in self.sparse_temps:
                size = E.Var(self.segment_max(blk, self.sparse_temps[vid]))
            n = E.Cast(T.SIZE, E.Paren(size))
            count = E.Select(E.Binary(">", n, E.Int(0)), n, E.Int(1))
            blk.add(S.Declare(name, T.ptr(t, restrict=True), E.Alloc(t, count, zero=ZERO_TEMPS[0], huge=False)))
        missing = [E.Unary("!", E.Var(n)) for n, kept in self.temps.values() if kept]
        return reduce(lambda a, b: E.Binary("||", a, b), missing) if missing else None

    def free_temps(self):
        """The statement freeing the temporaries (on one line), or None: none allocated."""
        frees = tuple(S.Free(E.Var(n)) for n, kept in self.temps.values() if kept)
        return S.Inline(frees) if frees else None

    def sparsify(self):
        """{temp: driving iterator} for temporaries with one kept dimension over which every
        loop that defines, resets or reads them is driven by the same sparse iterator: they
        are indexed by position in the driving segment (SDDMM's ``T`` along B's row), so they
        take the longest segment's length, not the dimension's, and are read contiguously."""
        out = {}
        for k, op in enumerate(self.prog.ops):
            if op.out not in self.temps or len(self.temps[op.out][1]) != 1:
                continue
            v = self.temps[op.out][1][0]
            m = op.stmt.out_indices.index(v)
            if any(o.args[a.operand] == op.out and a.indices[m] != v
                   for o in self.prog.ops for a in o.stmt.accesses):
                # read at another variable (``sum_k T_ik D_jk`` in the loop over j): the position
                # in the driving segment is the one of the loop over v, not of the read's
                continue
            spaces = {lp.space for u, o in enumerate(self.prog.ops) if u == k or op.out in o.args
                      for lp in self.paths[u] if lp.var == v}
            if len(spaces) != 1:
                continue
            (sp,) = spaces
            if sp == P.TRUE or len(sp) != 1 or len(next(iter(sp))) != 1:
                continue
            (drv,) = next(iter(sp))
            vid, path = drv
            fmt = self.specs[vid].format
            level = len(path) - 1
            if fmt.levels[level].has_pos and self.count_of(vid, level - 1) is not None:
                out[op.out] = drv
        return out

    def count_of(self, vid, level):
        """The number of positions of input ``vid`` at ``level`` (-1: one root), as an
        expression, or None where this lowering cannot tell (a singleton level)."""
        return level_count_expr(self.specs[vid].format, vid, level)

    def segment_max(self, blk, drv):
        """Declare (once) and return the longest segment of iterator ``drv``."""
        vid, path = drv
        level = len(path) - 1
        name = f"mseg{vid}_{level}"
        if name not in self.segmax:
            self.segmax.add(name)
            n = level_count_expr(self.specs[vid].format, vid, level - 1)
            blk.add(S.Declare(name, T.INDEX, E.Int(0)))
            pos, r, w, m = E.Var(f"p{vid}_{level}"), E.Var("r_"), E.Var("w_"), E.Var(name)
            width = E.sub(E.Cast(T.INDEX, E.Load(pos, E.add(r, 1))), E.Cast(T.INDEX, E.Load(pos, r)))
            blk.add(S.For("r_", E.Int(0), n, Block([S.Scope((
                S.Declare("w_", T.INDEX, width, const=True),
                S.If(E.Binary(">", w, m), S.Assign(m, w), oneline=True)), oneline=True)]), oneline=True))
        return name

    def temp_addr(self, vid, idx_by_dim):
        """The temporary's name and the offset in it (an expression) for the variables its
        dimensions are read at."""
        name, kept = self.temps[vid]
        drv = self.sparse_temps.get(vid)
        if drv is not None:  # by position in the driving segment, bound by the enclosing loop
            q, start = self.seg[drv]
            return name, E.Paren(E.sub(q, start))
        op = next(o for o in self.prog.ops if o.out == vid)
        at = dict(zip(op.stmt.out_indices, idx_by_dim))
        off = E.Int(0)
        for ix in kept:
            c = at[ix]
            # (a constant subscript: a keepdims temporary such as a mean of shape (1, 1) read
            # as T[0, 0]; the extent is the temporary's own, so the constant is in range)
            if not isinstance(c, (Index, Const)):
                raise Unsupported("a temporary read at a computed subscript")
            term = E.Var(c.name) if isinstance(c, Index) else E.Int(int(c.value))
            # (a leading zero term is dropped: T[0, j] is at j)
            off = E.add(E.mul(E.Paren(off), ex(self.ext[ix])), term) if off != E.Int(0) else term
        return name, off

    def emit_reset(self, r, blk):
        """The temporary's identity at the points its definition will accumulate into: the
        definition's own loops over the kept dimensions (a masked SDDMM temporary is reset
        along B's row, not over all J columns)."""
        name, kept = self.temps[r.value]
        k = next(q for q, o in enumerate(self.prog.ops) if o.out == r.value)
        op = self.prog.ops[k]
        t = self.prog.values[r.value].dtype
        ident = E.Lit(ops.reduce_identity(op.stmt.reduce, t), t)
        loops = [lp for lp in self.paths[k] if lp.var in kept]
        body = blk
        for lp in loops:
            body = self.open_loop(lp.var, lp.space, body)
        _, off = self.temp_addr(r.value, op.stmt.out_indices)
        body.add(S.Assign(E.Load(E.Var(name), off), ident))
        for lp in reversed(loops):
            self.close_loop(lp.var)
