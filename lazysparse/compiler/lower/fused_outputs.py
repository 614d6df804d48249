"""Statements and the results of a fused kernel (``FusedOutputMixin``): the value of each
statement's expression and accesses, the location it stores or sums into (a temporary, a dense
result, or a position of the input whose pattern the first result takes: ``result_like``), the
counting lines of an instrumented build, and the results' zero fill and structure copy, done by
the kernel (``result_prep``).
"""
from __future__ import annotations

from lazysparse.ir.nodes import Access, Const, Index
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.program import INPUT
from lazysparse.compiler.lower import counting
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block
from lazysparse.compiler.lower.fused_loops import Unsupported, ex
from lazysparse.compiler.lower.values import counted


class FusedOutputMixin:
    """Statements and the result. Reads ``out``, ``out_like`` and ``like_idx``."""

    # elements per block of the result's preparation: memset/memcpy calls long enough to stream
    PREP_BLOCK = 1 << 16

    def result_prep(self, decls):
        """The result's zero fill and, for a result in an input's pattern, the copy of that
        input's positions and coordinates, done by the kernel (the glue allocates them empty):
        in blocks under ``omp for`` when the kernel is parallel, where NumPy would do them on
        one thread before the kernel (SDDMM on R-MAT 2**18: 6 ms of zeros and copies against
        80 ms of two-thread kernel) and the pages would be first touched by the wrong thread.
        Declares the destination pointers in ``decls``; returns ``emit(block, pragma)`` (``pragma``:
        the loop's ``Worksharing`` in a parallel region, or None)."""
        ov = self.prog.values[self.out]
        # a result in an input's pattern is stored with ``=`` at every position of that pattern
        # (result_like: one unreduced statement whose iteration space is exactly the input's
        # entries), so its values need no zero fill: on SDDMM that fill was a whole extra pass
        # over the result, memory-bound and the part of the kernel that scales worst. Nor does
        # a dense result stored with ``=`` at every point (``assigns_all``: a Jacobi step)
        jobs = []
        if self.out_like is None and not self.assigns_all(self.out):
            jobs.append((None, "o", self.abi.int_expr(("out", "len")), ov.dtype))
        for vid, name in self.extra.items():
            if not self.assigns_all(vid):
                jobs.append((None, name, self.abi.int_expr(("out", "xlen", vid)), self.prog.values[vid].dtype))
        if self.out_like is not None:
            sp = self.specs[self.out_like]
            it = T.scalar(sp.index_dtype)
            for l, lv in enumerate(sp.format.levels):
                for kind, src in (("pos", f"p{self.out_like}_{l}"), ("crd", f"c{self.out_like}_{l}")):
                    if kind not in lv.level_kind.arrays:
                        continue
                    dst = f"ls_{kind}{l}"
                    arr = E.Cast(T.ptr(it), self.abi.ptr_expr(("out", kind, l)))
                    decls.add(S.Declare(dst, T.ptr(it, restrict=True), arr))
                    jobs.append((src, dst, self.abi.int_expr(("out", "len", kind, l)), sp.index_dtype))
        B = self.PREP_BLOCK
        self.fills = any(src is None for src, _, _, _ in jobs)  # (zeros that sums must wait for)

        def emit(blk, pragma):
            if not jobs:
                return
            nblocks = E.Var("ls_nb")  # the longest array's blocks
            blk.add(S.Declare(nblocks.name, T.INDEX, E.Int(0)))
            for _, _, n, _ in jobs:
                got = E.Binary("/", E.Paren(E.add(n, B - 1)), E.Int(B))
                blk.add(S.If(E.Binary(">", got, nblocks), S.Assign(nblocks, got), oneline=True))
            loop = Block()
            loop.add(S.Declare("ls_lo", T.INDEX, E.mul("ls_b", B), const=True))
            for src, dst, n, dt in jobs:
                loop.add(prep_block(src, dst, n, T.scalar(dt), B))
            blk.add(S.For("ls_b", E.Int(0), nblocks, loop, worksharing=pragma))
        return emit

    def assigns_all(self, vid):
        """Whether the statement that writes result ``vid`` stores it with ``=`` at every
        point: it sums over nothing and every loop around it runs a dense range (then no point
        is left unwritten, and none is summed into)."""
        k = next(q for q, o in enumerate(self.prog.ops) if o.out == vid)
        op = self.prog.ops[k]
        loops = self.paths[k]
        return (not op.stmt.reduce_indices and all(lp.space == P.TRUE for lp in loops)
                and {lp.var for lp in loops} >= set(op.stmt.out_indices))

    def access_value(self, op, e):
        """The element access ``e`` of ``op`` reads, as an expression."""
        vid = op.args[e.operand]
        val = self.prog.values[vid]
        if vid == self.out or vid in self.extra:  # a result another statement reads
            if vid == self.out and self.out_like is not None:
                raise Unsupported("a result in an input's pattern read by another statement")
            return E.Load(E.Var(self.extra.get(vid, "o")), self.dense_offset(vid, e.indices))
        if val.kind != INPUT:
            name, off = self.temp_addr(vid, e.indices)
            return E.Load(E.Var(name), off)
        sp = self.specs[vid]
        if sp.dense:
            if sp.ndim == 0:
                return E.Var(f"v{vid}s")
            off = None
            for m, ix in enumerate(e.indices):
                c = E.Paren(E.Var(ix.name) if isinstance(ix, Index) else E.Int(int(ix.value)))
                term = c if sp.unit and m == sp.layout[-1] else E.mul(c, f"s{vid}_{m}")
                off = term if off is None else E.add(off, term)
            return E.Load(E.Var(f"v{vid}"), off)
        if any(not isinstance(ix, Index) for ix in e.indices):
            raise Unsupported("a sparse access at a constant")
        return E.Load(E.Var(f"v{vid}"), self.position(vid, e.indices, sp.format.ndim - 1))

    def value(self, op, e):
        """The value of expression ``e`` of ``op``: NumPy's operations and casts over the
        loads of its accesses."""
        if isinstance(e, Access):
            return self.access_value(op, e)
        args = [E.NumCast(self.value(op, a), self.dtype_of(op, a), d) for a, d in zip(e.args, e.in_dtypes)]
        if self.count and e.op == "where":  # only the branch taken counts (compiler/lower/counting.py)
            args[1:] = [counted(a, v) for a, v in zip(e.args[1:], args[1:])]
        return E.NumOp(e.op, args, e.in_dtypes, e.dtype)

    def dtype_of(self, op, e):
        if isinstance(e, Access):
            return self.prog.values[op.args[e.operand]].dtype
        return e.dtype

    def target(self, op):
        """The location ``op`` stores or sums into, as an expression."""
        if op.out == self.out:
            return self.out_target(op)
        if op.out in self.extra:
            return E.Load(E.Var(self.extra[op.out]), self.dense_offset(op.out, op.stmt.out_indices))
        name, off = self.temp_addr(op.out, op.stmt.out_indices)
        return E.Load(E.Var(name), off)

    def emit_compute(self, k, blk):
        op = self.prog.ops[k]
        val = self.value(op, op.stmt.expr)
        dt = self.prog.values[op.out].dtype
        tgt = E.Var(self.acc[k]) if k in self.acc else self.target(op)
        if self.count:
            loads = []
            for a in dict.fromkeys(op.stmt.accesses):
                vid = op.args[a.operand]
                if self.prog.values[vid].kind != INPUT:
                    loads.append((counting.TEMP, "1"))
                elif (vid, a.indices) not in self.loaded:
                    self.loaded.add((vid, a.indices))
                    loads.append((counting.slot(vid), "1"))
            # (equal accesses, ``A * A``, are one load: the single-operation lowerer shares them;
            # so are an input's element read by two statements of one loop body, a variance's
            # sum and count in their shared loop: the C compiler loads it once)
            tally = counting.count_stmts(counting.expr_ops(op.stmt.expr), loads,
                                         op.stmt.reduce if op.stmt.reduce_indices else None)
            if tally is not None:
                blk.add(tally)
        if op.stmt.reduce_indices:
            blk.add(S.Reduce(op.stmt.reduce, tgt, val, dt))
        else:
            blk.add(S.Assign(tgt, val))

    def out_target(self, op):
        """The dense result's element at ``op``'s subscripts (row-major), or the position of the
        input whose pattern the result takes."""
        if self.out_like is not None:
            vid = self.out_like
            return E.Load(E.Var("o"), self.position(vid, self.like_idx, self.specs[vid].format.ndim - 1))
        return E.Load(E.Var("o"), self.dense_offset(op.out, op.stmt.out_indices))

    def dense_offset(self, vid, idx):
        """The row-major offset of the dense result ``vid`` at subscripts ``idx`` (variables
        or constants), by the extents of its writer's result variables."""
        writer = next(o for o in self.prog.ops if o.out == vid)
        off = None
        for m, ix in enumerate(idx):
            if isinstance(ix, Index):
                term = E.Var(ix.name)
            elif isinstance(ix, Const):
                term = E.Int(int(ix.value))
            else:
                raise Unsupported("a result read at a computed subscript")
            for o in writer.stmt.out_indices[m + 1:]:
                term = E.mul(term, ex(self.ext[o]))
            off = term if off is None else E.add(off, term)
        return off if off is not None else E.Int(0)


def prep_block(src, dst, n, elem, B):
    """One block of the result's preparation, ``dst[ls_lo:]`` (of ``elem``) zeroed (``src``
    None) or copied from ``src``, while ``ls_lo < n``."""
    lo, left = E.Var("ls_lo"), E.sub(n, "ls_lo")
    cnt = E.Paren(E.Select(E.lt(left, B), left, E.Int(B)))
    at = E.add(dst, lo)
    step = S.Memset(at, 0, cnt, elem) if src is None else S.Memcpy(at, E.add(src, lo), cnt, elem)
    return S.If(E.lt(lo, n), step, oneline=True, bare=True)


def result_like(plan, specs, result=None):
    """The input whose pattern and structure the result takes (read with the result's own
    subscripts, and the result's pattern is exactly that input's), or None: a dense result.
    ``result``: that result's value id (default: the first)."""
    prog = plan.program
    result = prog.outputs[0] if result is None else result
    op = next(o for o in prog.ops if o.out == result)
    if op.stmt.reduce_indices:
        return None
    pat = plan.patterns[prog.ops.index(op)]
    if len(pat) != 1:
        return None
    term = next(iter(pat))
    if len(term) != 1:
        return None
    (vid, idx), = term
    sp = specs[vid]
    # (the input need not be read by the result's own statement: `expm1(A) / s` reads A
    # through a temporary; the loop that computes the result walks A's entries all the same)
    if tuple(idx) != tuple(op.stmt.out_indices) or sp.dense or any(
            lv.follows_parent for lv in sp.format.levels):
        return None
    return vid
