"""Temporaries of a fused kernel (``FusedTempMixin``): dense over their kept dimensions, or
indexed by position in the sparse segment that drives every loop over them (``sparsify``: SDDMM's
``T`` along B's row, sized by the longest segment), allocated once per call (per thread on
threads), reset to their identity where the plan says, and addressed at the subscripts they are
read at.
"""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.ir import ops
from lazysparse.ir.nodes import Const, Index
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.lower.operands import level_count
from lazysparse.compiler.loopir.nodes import Decl
from lazysparse.compiler.lower.fused_loops import Unsupported


class FusedTempMixin:
    """Temporaries. Reads ``temps`` (``declare``) and ``sparse_temps`` (``sparsify``, recorded
    by ``lower``); owns ``segmax``."""

    def alloc_temps(self, blk):
        """Temporaries dense over their kept dimensions, zeroed, one allocation per call (per
        thread in a parallel kernel). Returns the C condition that one could not be had."""
        for vid, (name, kept) in self.temps.items():
            t = C.ctype(self.prog.values[vid].dtype)
            if not kept:  # a scalar: a local the C compiler keeps in a register
                blk.add(Decl(t, f"{name}[1]", "{0}"))
                continue
            size = " * ".join(self.ext[ix] for ix in kept)
            if vid in self.sparse_temps:
                size = self.segment_max(blk, self.sparse_temps[vid])
            blk.add(Decl(f"{t} *restrict", name, f"({t} *)calloc((size_t)({size}) > 0 ? (size_t)({size}) : 1, sizeof({t}))"))
        return " || ".join("!" + n for n, kept in self.temps.values() if kept) or "0"

    def free_temps(self):
        return " ".join(f"free({n});" for n, kept in self.temps.values() if kept)

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
            if fmt.levels[level].kind == "compressed" and self.count_of(vid, level - 1) is not None:
                out[op.out] = drv
        return out

    def count_of(self, vid, level):
        """C expression of the number of positions of input ``vid`` at ``level`` (-1: one
        root), or None where this lowering cannot tell (a singleton level)."""
        return level_count(self.specs[vid].format, vid, level)

    def segment_max(self, blk, drv):
        """Declare (once) and return the longest segment of iterator ``drv``."""
        vid, path = drv
        level = len(path) - 1
        name = f"mseg{vid}_{level}"
        if name not in self.segmax:
            self.segmax.add(name)
            n = self.count_of(vid, level - 1)
            blk.add(Decl("int64_t", name, "0"))
            blk.add(f"for (int64_t r_ = 0; r_ < {n}; r_++) {{ const int64_t w_ = (int64_t)p{vid}_{level}[r_ + 1] - "
                    f"(int64_t)p{vid}_{level}[r_]; if (w_ > {name}) {name} = w_; }}")
        return name

    def temp_addr(self, vid, idx_by_dim):
        """Offset in a temporary for the variables its dimensions are read at."""
        name, kept = self.temps[vid]
        drv = self.sparse_temps.get(vid)
        if drv is not None:  # by position in the driving segment, bound by the enclosing loop
            q, start = self.seg[drv]
            return name, f"({q} - {start})"
        op = next(o for o in self.prog.ops if o.out == vid)
        at = dict(zip(op.stmt.out_indices, idx_by_dim))
        off = "0"
        for ix in kept:
            c = at[ix]
            # (a constant subscript: a keepdims temporary such as a mean of shape (1, 1) read
            # as T[0, 0]; the extent is the temporary's own, so the constant is in range)
            if not isinstance(c, (Index, Const)):
                raise Unsupported("a temporary read at a computed subscript")
            term = c.name if isinstance(c, Index) else str(int(c.value))
            off = f"({off}) * {self.ext[ix]} + {term}" if off != "0" else term
        return name, off

    def emit_reset(self, r, blk):
        """The temporary's identity at the points its definition will accumulate into: the
        definition's own loops over the kept dimensions (a masked SDDMM temporary is reset
        along B's row, not over all J columns)."""
        name, kept = self.temps[r.value]
        k = next(q for q, o in enumerate(self.prog.ops) if o.out == r.value)
        op = self.prog.ops[k]
        t = self.prog.values[r.value].dtype
        ident = C.literal(ops.reduce_identity(op.stmt.reduce, t), t)
        loops = [lp for lp in self.paths[k] if lp.var in kept]
        body = blk
        for lp in loops:
            body = self.open_loop(lp.var, lp.space, body)
        _, off = self.temp_addr(r.value, op.stmt.out_indices)
        body.add(f"{name}[{off}] = {ident};")
        for lp in reversed(loops):
            self.close_loop(lp.var)
