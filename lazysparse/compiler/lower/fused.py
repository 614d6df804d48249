"""Lowering of a fused plan (compiler/plan/fusion.py) to one kernel: the index tree becomes loops,
its statements assignments and accumulations into temporaries and the result.

What this first version lowers, and otherwise declines with ``Unsupported`` (the caller then
runs one kernel per operation, which computes the same values):

* loops over a dense range, or driven by one sparse iterator (a compressed level of an input,
  reached through levels whose positions the enclosing loops know); unions and intersections
  of several sparse iterators in one loop are the single-statement lowerer's (merge lattices)
  and come next;
* every sparse access of a statement is at a position the enclosing loops know (its driving
  iterators), every dense access by strides;
* temporaries dense over their kept dimensions (planner dimension reduction), allocated once per
  call, reset where the plan says;
* one result: dense (zero-filled by the caller; statements store with ``=`` or accumulate), or
  in the pattern of one sparse input read with the result's own subscripts (SDDMM's
  ``B .* T``: positions and coordinates are B's, values indexed by B's position; assembled
  without search).

The kernel has the ``ls_kernel(void **p, int64_t *d)`` ABI of every kernel: ``p[]`` holds
buffers, ``d[]`` sizes, in the order ``abi`` records.
"""
from __future__ import annotations

import numpy as np

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.ir import ops
from lazysparse.ir.nodes import Access, Const, Index
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.fusion import Compute, Loop, Reset
from lazysparse.compiler.plan.program import INPUT
from lazysparse.compiler.lower import counting, teams
from lazysparse.compiler.lower.locate import THREAD_NUM
from lazysparse.compiler.lower.operands import ABI, declare_operand, level_count
from lazysparse.compiler.lower.rows import RowMixin
from lazysparse.compiler.loopir.nodes import Block, Comment, Decl, For, If, Line


class Unsupported(Exception):
    """The plan needs a construct this lowering does not emit yet."""


class FusedLowerer:
    def __init__(self, plan, specs, out_like=None, count=False):
        self.plan, self.prog, self.specs = plan, plan.program, specs
        self.count = count  # an instrumented build for ls.opcount (compiler/lower/counting.py)
        self.abi = ABI()
        self.out = self.prog.outputs[0]
        self.out_like = out_like  # input value id whose pattern the result takes, or None
        self.ext = {}    # Index -> C name of its extent
        self.pos = {}    # (value id, level) -> C expression of the position there (bound now)
        self.bound = set()
        self.acc = {}    # op index -> local accumulator its statement sums into (simd_sum)
        self.seg = {}    # (input, path) -> (position variable, segment start) of an open loop
        self.segmax = set()
        self.sparse_temps = {}
        self.prelude = []  # support code of the kernel (the vector sums')
        self.hoisted = {}  # (input, indices) -> (vector array, lanes): rows held in vectors (hoist_rows)
        self.held = {}  # op -> (vector array, lanes): the row it sums into, in vectors (hold_rows)
        self.n = 0

    def fresh(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    # -- declarations -------------------------------------------------------------------------
    def declare(self, top):
        prog = self.prog
        for v in prog.values:
            if v.kind != INPUT:
                continue
            sp = self.specs[v.id]
            if any(lv.kind == "singleton" for lv in sp.format.levels):
                raise Unsupported("singleton levels")
            declare_operand(top, self.abi, v.id, sp)
        for op in prog.ops:
            for ix in op.loops:
                if ix not in self.ext:
                    self.ext[ix] = f"N_{ix.name}"
                    top.add(Decl("int64_t", self.ext[ix], self.abi.int(("ext", ix))))
        ov = prog.values[self.out]
        top.add(Decl(f"{C.ctype(ov.dtype)} *restrict", "o", f"({C.ctype(ov.dtype)} *){self.abi.ptr(('out', 'vals'))}"))
        self.temps = {}
        for op in prog.ops:
            if op.out != self.out and op.out not in prog.outputs:
                self.temps[op.out] = (f"t{op.out}", self.plan.temp_dims[op.out])

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

    def parallel_loop(self):
        """The outermost loop, when it may run on several threads: the whole tree is one loop
        over a result dimension that no operation reduces and no temporary keeps (each thread
        writes its own rows of the result and keeps its own temporaries), driven by a dense
        range or a unique sparse level (distinct positions are distinct coordinates). Or a loop
        that only the result's operation sums over, into a dense result (``A.T @ (x * y)``,
        ``(A * B).sum(axis=0)``): each thread then sums into a private copy of the result
        (``self.private``; teams.private_team), the copies added after."""
        self.private = False
        tree = self.plan.tree
        if len(tree) != 1 or not isinstance(tree[0], Loop):
            return None
        lp = tree[0]
        out_op = next(o for o in self.prog.ops if o.out == self.out)
        if any(lp.var in o.stmt.reduce_indices for o in self.prog.ops if o is not out_op):
            return None
        if lp.var not in out_op.stmt.out_indices:
            if (self.out_like is not None or self.count or lp.var not in out_op.stmt.reduce_indices
                    or out_op.stmt.reduce != "sum"):
                return None
            self.private = True
        if any(lp.var in kept for _, kept in self.temps.values()):
            return None
        if lp.space != P.TRUE:
            if len(lp.space) != 1 or len(next(iter(lp.space))) != 1:
                return None  # several iterators drive it: not this lowering's (lower() says so)
            (vid, path), = next(iter(lp.space))
            if not self.specs[vid].format.levels[len(path) - 1].unique:
                return None
        return lp

    def work(self):
        """The loop tree's work estimate (as ``teams.work_estimate`` for one operation):
        per computed statement, the product of its enclosing loops' average trip counts. A
        dense loop runs its extent; a loop over stored entries runs, per iterator driving it,
        that level's entries over its parent level's (SDDMM's j under i: nnz / rows), summed
        over the iterators (a union's bound)."""
        terms = []

        def walk(nodes, trips):
            for n in nodes:
                if isinstance(n, Loop):
                    walk(n.body, trips + [self.trip(n)])
                elif isinstance(n, Compute):
                    terms.append(" * ".join(trips) or "1.0")
        walk(self.plan.tree, [])
        return " + ".join(f"({t})" for t in terms) or "0.0"

    def trip(self, lp):
        ext = f"(double)({self.ext[lp.var]})"
        if lp.space == P.TRUE:
            return ext
        parts = []
        for key in sorted({k for term in lp.space for k in term}, key=repr):
            vid, path = key
            sp = self.specs[vid] if self.prog.values[vid].kind == INPUT else None
            l = len(path) - 1
            n = n0 = None
            if sp is not None and not sp.dense:
                n, n0 = level_count(sp.format, vid, l), level_count(sp.format, vid, l - 1)
            if n is None or n0 is None:
                parts.append(ext)  # (a temporary's iterator: at most the extent)
            else:
                parts.append(f"(double)({n}) / (double)(({n0}) > 0 ? ({n0}) : 1)")
        return "(" + " + ".join(parts) + ")"

    # elements per block of the result's preparation: memset/memcpy calls long enough to stream
    PREP_BLOCK = 1 << 16

    def result_prep(self, decls):
        """The result's zero fill and, for a result in an input's pattern, the copy of that
        input's positions and coordinates, done by the kernel (the glue allocates them empty):
        in blocks under ``omp for`` when the kernel is parallel, where NumPy would do them on
        one thread before the kernel (SDDMM on R-MAT 2**18: 6 ms of zeros and copies against
        80 ms of two-thread kernel) and the pages would be first touched by the wrong thread.
        Declares the destination pointers in ``decls``; returns ``emit(block, pragma)``."""
        ov = self.prog.values[self.out]
        # a result in an input's pattern is stored with ``=`` at every position of that pattern
        # (result_like: one unreduced statement whose iteration space is exactly the input's
        # entries), so its values need no zero fill: on SDDMM that fill was a whole extra pass
        # over the result, memory-bound and the part of the kernel that scales worst
        jobs = [] if self.out_like is not None else [(None, "o", self.abi.int(("out", "len")), C.ctype(ov.dtype))]
        if self.out_like is not None:
            sp = self.specs[self.out_like]
            it = C.ctype(sp.index_dtype)
            for l, lv in enumerate(sp.format.levels):
                for kind, src in (("pos", f"p{self.out_like}_{l}"), ("crd", f"c{self.out_like}_{l}")):
                    if kind == "pos" and lv.kind != "compressed" or kind == "crd" and lv.kind == "dense":
                        continue
                    dst = f"ls_{kind}{l}"
                    decls.add(Decl(f"{it} *restrict", dst, f"({it} *){self.abi.ptr(('out', kind, l))}"))
                    jobs.append((src, dst, self.abi.int(("out", "len", kind, l)), it))
        B = self.PREP_BLOCK

        def emit(blk, pragma):
            nblocks = "ls_nb"  # the longest array's blocks
            blk.add(Decl("int64_t", nblocks, "0"))
            for _, _, n, _ in jobs:
                blk.add(Line(f"if (({n} + {B - 1}) / {B} > {nblocks}) {nblocks} = ({n} + {B - 1}) / {B};"))
            loop = Block()
            loop.add(Decl("const int64_t", "ls_lo", f"ls_b * {B}"))
            for src, dst, n, t in jobs:
                cnt = f"({n} - ls_lo < {B} ? {n} - ls_lo : {B})"
                if src is None:
                    loop.add(Line(f"if (ls_lo < {n}) memset({dst} + ls_lo, 0, (size_t){cnt} * sizeof({t}));"))
                else:
                    loop.add(Line(f"if (ls_lo < {n}) memcpy({dst} + ls_lo, {src} + ls_lo, (size_t){cnt} * sizeof({t}));"))
            if pragma:
                blk.add(Line(pragma))
            blk.add(For("ls_b", "0", nblocks, loop))
        return emit

    # -- positions ----------------------------------------------------------------------------
    def level_of(self, vid, idx, var):
        fmt = self.specs[vid].format
        for l, m in enumerate(fmt.order):
            if idx[m] == var:
                return l
        return None

    def position(self, vid, idx, level):
        """C expression of input ``vid``'s position at ``level`` for subscripts ``idx``."""
        key = (vid, tuple(idx[m] for m in self.specs[vid].format.order[:level + 1]))
        if key in self.pos:
            return self.pos[key]
        fmt = self.specs[vid].format
        m = fmt.order[level]
        ix = idx[m]
        if fmt.levels[level].kind != "dense" or not (isinstance(ix, Index) and ix in self.bound):
            raise Unsupported(f"no known position for v{vid} level {level}")
        parent = self.position(vid, idx, level - 1) if level else None
        return f"{ix.name}" if parent is None else f"(({parent}) * n{vid}_{level} + {ix.name})"

    # -- the tree -----------------------------------------------------------------------------
    def emit(self, nodes, blk):
        outer, self.loaded = self.loaded, set()  # (the input elements this body has loaded)
        for n in nodes:
            if isinstance(n, Reset):
                self.emit_reset(n, blk)
            elif isinstance(n, Compute):
                self.emit_compute(n.op, blk)
            else:
                self.emit_loop(n, blk)
        self.loaded = outer

    loaded = frozenset()  # inside emit(): (input, subscripts) already loaded in this loop body

    def simd_sum(self, loop):
        """The op of a dense loop that only sums (integers or floats) over its variable into a
        location the loop does not move, or None. Such a loop sums into a local accumulator
        under ``omp simd reduction``: the C compiler may then reassociate and vectorise it
        (as NumPy's pairwise sums reassociate; without OpenMP the pragma is ignored). A
        counting build has the same loop (its counting lines keep it scalar)."""
        ks = self.simd_sums(loop)
        return ks[0] if len(ks) == 1 else None

    def simd_sums(self, loop, flat=False):
        """The ops of a loop whose body is statements only, each summing (integers or floats)
        over the loop's variable into a location the loop does not move and reading no other's
        sum; () where it does not qualify. The loop then sums into local accumulators under
        ``omp simd reduction``, as ``simd_sum`` does for one dense sum: several sums of a shared
        loop (a variance's sum and count) were otherwise chains of dependent adds through
        memory. A dense loop, or (``flat``) the loop over all of an operand's entries
        (``emit_flat``); not a loop along one sparse row: a vector loop per row of ~13 entries
        cost more than it saved (``nanmean(A, axis=1)``: cage10 0.36 against 0.23 ms, email-Enron
        0.95 against 0.78; github-social's longer rows 1.07 against 1.19)."""
        if not loop.body or not all(isinstance(n, Compute) for n in loop.body) or (
                loop.space != P.TRUE and not flat):
            return ()
        ks = tuple(n.op for n in loop.body)
        outs = {self.prog.ops[k].out for k in ks}
        for k in ks:
            op = self.prog.ops[k]
            if (loop.var not in op.stmt.reduce_indices or op.stmt.reduce != "sum"
                    or C.kind(self.prog.values[op.out].dtype) not in "iuf" or outs & set(op.args)):
                return ()
        return ks

    WIDTHS = (16, 32, 64, 128)  # innermost dense loops get a version of each constant length
    # Sums (a dot product per point) and rows (``o[i, :] += u * Y[h, :]``). Rows were left out
    # while their dispatch sat inside the innermost sparse loop (MTTKRP R = 16 25% slower);
    # dispatched outside the nest and run as vectors (``vector_rows``), one thread, in one
    # process against sums only: MTTKRP R = 16 0.76-0.82 of the time, R = 32 0.85, GNN-2
    # K = J = 32 0.77-0.85.
    SUMS_ONLY = False

    def _dispatched(self, loop):
        """Whether ``loop`` gets a version per constant width (``WIDTHS``)."""
        return (loop.space == P.TRUE and self.ext[loop.var] not in {str(w) for w in self.WIDTHS}
                and all(isinstance(n, Compute) for n in loop.body)
                and (self.simd_sum(loop) is not None or not self.SUMS_ONLY))

    MAX_VERSIONS = 25  # nests at most (two variables' widths)

    def versions(self, nodes, blk, emit):
        """``emit(block)`` once per combination of constant widths of the variables of the
        dispatched loops in ``nodes`` (``if (N_k == 16) {nest} else if ... else {nest}``),
        when there are at most MAX_VERSIONS combinations; else once, each loop dispatching on
        its width where it is (``emit_loop``). Dispatching outside the nest, every loop in it
        knows the widths: the prefetches of gathered rows unroll too (their loop over a row's
        lines was 15% of SDDMM's time on MIT8 with the width a variable)."""
        found = []

        def walk(ns):
            for n in ns:
                if isinstance(n, Loop):
                    if self._dispatched(n) and n.var not in found:
                        found.append(n.var)
                    walk(n.body)
        walk(nodes)
        while found and (len(self.WIDTHS) + 1) ** len(found) > self.MAX_VERSIONS:
            found.pop()  # (the innermost-first loops left dispatch where they are)

        def nest(vs, into):
            if not vs:
                emit(into)
                return
            v, n = vs[0], self.ext[vs[0]]
            chain = Block()
            nest(vs[1:], chain)
            for w in reversed(self.WIDTHS):
                version = Block()
                self.ext[v] = str(w)
                nest(vs[1:], version)
                self.ext[v] = n
                chain = Block().add(If(f"{n} == {w}", version, chain))
            into.add(chain)
        self.versioned = set(found)
        nest(found, blk)
        self.versioned = set()

    versioned = frozenset()  # inside versions(): variables whose widths are dispatched outside the nest
    span = None  # (variable, lo, hi): the bounds of the next loop over variable (owned_runs' chunk)

    def emit_loop(self, loop, blk, pragma=None, first=None):
        """A loop; an innermost dense sum as ``if (N == 16) {...} else if ... else {...}``
        where the nest has no versions (``versions``): at a constant trip count the C compiler
        unrolls it, keeps loop-invariant rows (SDDMM's ``U[i, :]``) in registers and drops the
        remainder code (SDDMM K = 32, cage10: 3.4 -> 2.9 ms, github-social 27.6 -> 23.7 ms)."""
        if loop.var not in self.versioned and pragma is None and first is None and self._dispatched(loop):
            n = self.ext[loop.var]
            chain = Block()
            self.emit_loop_once(loop, chain)
            for w in reversed(self.WIDTHS):
                version = Block()
                self.ext[loop.var] = str(w)
                self.emit_loop_once(loop, version)
                chain = Block().add(If(f"{n} == {w}", version, chain))
            self.ext[loop.var] = n
            blk.add(chain)
            return
        self.emit_loop_once(loop, blk, pragma, first)

    def flat_inner(self, loop):
        """The inner loop of ``loop`` when the pair walks every entry of a CSR-like operand
        (a dense row loop around one loop over a row's stored entries) only to sum them into
        locations neither moves, reading nothing else by row, else None. The pair then runs as
        one loop over all the operand's positions (``emit_flat``), as the single-operation
        lowerer's flat walk does: a loop a row of a few entries long pays its vector prologue,
        tail and horizontal sum once a row."""
        if loop.space != P.TRUE or len(loop.body) != 1 or not isinstance(loop.body[0], Loop):
            return None
        inner = loop.body[0]
        if inner.space == P.TRUE or len(inner.space) != 1 or len(next(iter(inner.space))) != 1:
            return None
        (vid, path), = next(iter(inner.space))
        fmt = self.specs[vid].format
        if (tuple(path) != (loop.var, inner.var) or fmt.ndim != 2 or fmt.levels[0].kind != "dense"
                or fmt.levels[1].kind != "compressed"):
            return None
        ks = self.simd_sums(inner, flat=True)
        if not ks:
            return None
        for k in ks:
            op = self.prog.ops[k]
            if loop.var not in op.stmt.reduce_indices:
                return None
            for a in op.stmt.accesses:
                if loop.var not in a.indices:
                    continue
                # the row variable only in reads of the driver itself, by position
                idx = [None] * 2
                for q, ix in enumerate(path):
                    idx[fmt.order[q]] = ix
                if op.args[a.operand] != vid or tuple(a.indices) != tuple(idx):
                    return None
        return inner

    def emit_flat(self, loop, inner, blk):
        """``loop`` and its ``inner`` loop (``flat_inner``) as one loop over the positions."""
        (vid, path), = next(iter(inner.space))
        ks = self.simd_sums(inner, flat=True)
        q, body = self.fresh("q"), Block()
        blk.add(Line(self.open_sums(ks, blk)))
        blk.add(For(q, f"(int64_t)p{vid}_1[0]", self.count_of(vid, 1), body))
        body.add(Decl("int64_t", inner.var.name, f"(int64_t)c{vid}_1[{q}]"))
        self.pos[(vid, tuple(path))] = q
        self.bound.add(inner.var)
        self.emit(inner.body, body)
        self.close_loop(inner.var)
        self.close_sums(ks, blk)

    def open_sums(self, ks, blk):
        """Declare a local accumulator for each op of ``ks`` (``simd_sums``); returns the loop's
        ``omp simd reduction`` pragma."""
        for j in ks:
            self.acc[j] = self.fresh("acc")
            blk.add(Decl(C.ctype(self.prog.values[self.prog.ops[j].out].dtype), self.acc[j], "0"))
        return f"#pragma omp simd reduction(+:{', '.join(self.acc[j] for j in ks)})"

    def close_sums(self, ks, blk):
        """After the loop: each accumulator into its op's target."""
        for j in ks:
            blk.add(f"{self.target(self.prog.ops[j])} += {self.acc.pop(j)};")

    def emit_loop_once(self, loop, blk, pragma=None, first=None):
        inner = self.flat_inner(loop) if pragma is None and first is None else None
        if inner is not None:
            self.emit_flat(loop, inner, blk)
            return
        k = self.simd_sum(loop) if pragma is None else None
        if k is not None and first is None and self.vector_sum(loop, k, blk):
            return
        if k is None and pragma is None and first is None and self.vector_rows(loop, blk):
            return
        ks = (k,) if k is not None else self.simd_sums(loop) if pragma is None and first is None else ()
        if ks:
            pragma = self.open_sums(ks, blk)
        hoisted = self.hoist_rows(loop, blk) if loop.space != P.TRUE else []
        held = self.hold_rows(loop, blk) if loop.space != P.TRUE and self.HOLD else []
        body = self.open_loop(loop.var, loop.space, blk, pragma, self.gathers(loop))
        if first:
            body.body.insert(0, Line(first))
        self.emit(loop.body, body)
        self.close_loop(loop.var)
        for key in hoisted:
            del self.hoisted[key]
        for q, store in held:
            blk.add(Line(store))
            del self.held[q]
        self.close_sums(ks, blk)

    # The sum as vectors of the target's width (RowMixin.VEC_PRELUDE's ``ls_vd``):
    # under ``omp simd reduction`` gcc 12 summed SDDMM's K = 32 products into one vector and
    # folded its lanes one by one (a chain of 8 scalar adds a point, 25% of the kernel's time on
    # MIT8). Up to four vectors of partial sums, each started at its first product (adding to
    # a zero vector costs an add and a latency each), folded as a tree.
    VEC_OPS = {**RowMixin.VEC_OPS, "divide": "/"}  # (IEEE division rounds lanes alike)
    VEC_SUM_PRELUDE = r"""
static inline double ls_hsum_vd(ls_vd v) {
#if defined(__AVX512F__)
  return _mm512_reduce_add_pd((__m512d)v);
#else
  double t[LS_VB / 8]; memcpy(t, &v, LS_VB);
  for (int s = LS_VB / 16; s >= 1; s /= 2) for (int l = 0; l < s; l++) t[l] += t[l + s];
  return t[0];
#endif
}
static inline float ls_hsum_vf(ls_vf v) {
#if defined(__AVX512F__)
  return _mm512_reduce_add_ps((__m512)v);
#else
  float t[LS_VB / 4]; memcpy(t, &v, LS_VB);
  for (int s = LS_VB / 8; s >= 1; s /= 2) for (int l = 0; l < s; l++) t[l] += t[l + s];
  return t[0];
#endif
}
"""

    # A hoisted row at most: 1 KB (16 AVX-512 registers; the compiler spills what does not fit
    # to the stack, an L1 load as the row's own was). SDDMM K = 128 (1 KB rows), in one process
    # against 512: one thread bcsstk16 5.89 -> 4.30 ms, cage10 3.99 -> 3.38, MIT8 22.3 -> 20.9;
    # two threads MIT8 10.5 -> 9.5, cage10 2.33 -> 1.93.
    HOIST_BYTES = 1024
    HOLD_BYTES = 512  # a row held in vectors across a sparse loop at most (hold_rows)

    def vector_row(self, op, e, v):
        """Whether access ``e`` reads a dense input along ``v`` with unit stride (a vector load)."""
        vid = op.args[e.operand]
        sp = self.specs.get(vid)
        ms = [m for m, ix in enumerate(e.indices) if ix == v]
        return (self.prog.values[vid].kind == INPUT and sp.dense and len(ms) == 1
                and sp.unit and ms[0] == sp.layout[-1])

    def temp_row(self, vid, e, v):
        """Whether access ``e`` reads a dense temporary along its last kept dimension ``v``
        (contiguous in ``v``: ``temp_addr``)."""
        if vid not in self.temps or vid in self.sparse_temps:
            return False
        kept = self.temps[vid][1]
        op = next(o for o in self.prog.ops if o.out == vid)
        at = dict(zip(op.stmt.out_indices, e.indices))
        return bool(kept) and at.get(kept[-1]) == v and sum(ix == v for ix in e.indices) == 1

    def vector_plan(self, loop, k):
        """``(vector type, bytes a lane)`` when the sum ``loop`` (op ``k``) runs as vectors
        (``vector_sum``), else None."""
        op = self.prog.ops[k]
        t = RowMixin.VEC_TYPES.get(np.dtype(self.prog.values[op.out].dtype).name)
        w = self.ext[loop.var]
        if self.count or t is None or not w.isdigit() or (int(w) * t[1]) % 64:
            return None
        got = self.vector_expr(op, op.stmt.expr, loop.var, t[0], render=False)
        return t if got is not None and got[1] else None

    def hoist_rows(self, loop, blk):
        """Before the sparse ``loop``, load into vectors the rows its vector sums read that do
        not change within it (SDDMM's ``U[i, :]`` across row i's entries): the C compiler kept
        reloading them (C harness, SDDMM K = 32: 16-18% of the time on MIT8 and bcsstk16).
        Returns the keys registered in ``self.hoisted`` (the caller drops them after the loop)."""
        keys = []
        for n in loop.body:
            k = self.simd_sum(n) if isinstance(n, Loop) else None
            t = self.vector_plan(n, k) if k is not None else None
            if t is None:
                continue
            vt, isz = t
            w, op = int(self.ext[n.var]), self.prog.ops[k]
            if w * isz > self.HOIST_BYTES:
                continue
            for e in _accesses(op.stmt.expr):
                key = (op.args[e.operand], tuple(e.indices))
                if (key in self.hoisted or not self.vector_row(op, e, n.var)
                        or not all(ix == n.var or (isinstance(ix, Index) and ix in self.bound) for ix in e.indices)):
                    continue
                name = self.fresh("hv")
                ln = f"(LS_VB / {isz})"
                blk.add(Decl(vt, f"{name}[{w} / {ln}]"))
                blk.add(Line(f"for (int64_t {n.var.name} = 0; {n.var.name} < {w}; {n.var.name} += {ln}) "
                             f"{name}[{n.var.name} / {ln}] = *(const {vt} *)&{self.access_value(op, e)};"))
                self.hoisted[key] = (name, ln)
                keys.append(key)
        return keys

    def _row_target(self, op, v):
        """The C location of ``op``'s result (at ``v``'s C name) when its row is contiguous in ``v``
        (the result's last index, or a temporary's last kept dimension), else None."""
        outs = op.stmt.out_indices
        if op.out == self.out:
            if self.out_like is not None or not outs or outs[-1] != v or outs.count(v) != 1:
                return None
            return self.out_target(op)
        if self.temp_row(op.out, Access(0, outs), v):
            return self.target(op)
        return None

    HOLD = True  # (hold_rows on: a switch for measurements)

    def hold_rows(self, loop, blk):
        """Before the sparse ``loop``, load into vectors the rows that a vector row statement
        in its body sums into across it and that nothing else in it reads or writes (GNN-2's
        result row ``o[i, :]`` across row i's entries, MTTKRP's ``t[:]`` across a fiber), and
        return ``[(op, store line)]`` for the caller to store them after the loop: the
        statement then adds in registers instead of loading and storing the row per entry.
        Each lane still sums its element in the scalar order."""
        out = []
        for n in loop.body:
            if not isinstance(n, Loop) or n.space != P.TRUE or not self.ext[n.var].isdigit():
                continue
            w = int(self.ext[n.var])
            for c in n.body:
                if not isinstance(c, Compute) or c.op in self.held:
                    continue
                op = self.prog.ops[c.op]
                t = RowMixin.VEC_TYPES.get(np.dtype(self.prog.values[op.out].dtype).name)
                if (self.count or t is None or (w * t[1]) % 64 or w * t[1] > self.HOLD_BYTES
                        or op.stmt.reduce != "sum" or loop.var not in op.stmt.reduce_indices
                        or n.var in op.stmt.reduce_indices):
                    continue
                got = self.vector_expr(op, op.stmt.expr, n.var, t[0], render=False)
                if got is None or not got[1] or not self._alone(op.out, c.op, loop.body):
                    continue
                if not all(ix == n.var or ix in self.bound for ix in op.stmt.out_indices):
                    continue  # the row moves within the loop
                try:
                    tgt = self._row_target(op, n.var)  # (at the row variable's C name)
                except Unsupported:
                    tgt = None
                if tgt is None:
                    continue
                vt, isz = t
                name, ln, x = self.fresh("rh"), f"(LS_VB / {isz})", n.var.name
                over = f"for (int64_t {x} = 0; {x} < {w}; {x} += {ln})"
                blk.add(Decl(vt, f"{name}[{w} / {ln}]"))
                blk.add(Line(f"{over} {name}[{x} / {ln}] = *(const {vt} *)&{tgt};"))
                self.held[c.op] = (name, ln)
                out.append((c.op, f"{over} *({vt} *)&{tgt} = {name}[{x} / {ln}];"))
        return out

    def _alone(self, vid, k, nodes):
        """Whether op ``k`` is the only statement in ``nodes`` that reads or writes ``vid``,
        and nothing there resets it."""
        for n in nodes:
            if isinstance(n, Loop):
                if not self._alone(vid, k, n.body):
                    return False
            elif isinstance(n, Reset):
                if n.value == vid:
                    return False
            elif n.op != k:
                o = self.prog.ops[n.op]
                if o.out == vid or vid in o.args:
                    return False
        return True

    def vector_expr(self, op, e, v, vt, render=True):
        """``(C, is a vector)`` of ``e`` with ``v`` the first lane of a vector of ``vt``, or
        None where ``e`` is not ``+ - * / negative`` over values of the sum's type whose dense
        inputs read ``v`` with unit stride (a vector load) or not at all (a scalar the vector
        operation broadcasts), like sparse inputs and temporaries. ``render=False``: only
        whether it qualifies (the C is empty), before the loops that bind its positions."""
        dt = self.prog.values[op.out].dtype
        if isinstance(e, Access):
            vid = op.args[e.operand]
            if self.prog.values[vid].dtype != dt:
                return None
            if v not in e.indices:
                return (self.access_value(op, e) if render else ""), False
            if not (self.vector_row(op, e, v) or self.temp_row(vid, e, v)):
                return None
            held = self.hoisted.get((vid, tuple(e.indices)))
            if not render:
                return "", True
            if held is not None:
                return f"{held[0]}[{v.name} / {held[1]}]", True
            return f"(*(const {vt} *)&{self.access_value(op, e)})", True
        if e.dtype != dt or any(d != dt for d in e.in_dtypes):
            return None
        args = [self.vector_expr(op, a, v, vt, render) for a in e.args]
        if any(a is None for a in args):
            return None
        vec = any(a[1] for a in args)
        if e.op == "negative" and len(args) == 1:
            return f"(-{args[0][0]})", vec
        if e.op in self.VEC_OPS and len(args) == 2:
            return f"({args[0][0]} {self.VEC_OPS[e.op]} {args[1][0]})", vec
        return None

    def _use_vectors(self):
        """Add the vector types and horizontal sums to the kernel's support code, once."""
        if RowMixin.VEC_PRELUDE not in self.prelude:
            self.prelude += [RowMixin.VEC_PRELUDE, self.VEC_SUM_PRELUDE]

    def vector_sum(self, loop, k, blk):
        """Emit the sum ``loop`` (op ``k``, ``simd_sum``) at a constant width as vectors, and
        return True; False where it does not qualify (an instrumented build counts in the
        scalar loop)."""
        t = self.vector_plan(loop, k)
        if t is None:
            return False
        op, w, (vt, isz) = self.prog.ops[k], self.ext[loop.var], t
        got = self.vector_expr(op, op.stmt.expr, loop.var, vt)
        self._use_vectors()
        ln = f"(LS_VB / {isz})"
        nb = f"({w} / {ln})"
        na = f"({nb} < 4 ? {nb} : 4)"  # 1, 2 or 4: widths and lanes are powers of two
        dv, b = self.fresh("dv"), self.fresh("b")
        body = Block()
        body.add(Decl(f"const {vt}", "x_", got[0]))
        body.add(Decl("const int64_t", b, f"{loop.var.name} / {ln}"))
        body.add(Line(f"if ({b} < {na}) {dv}[{b}] = x_; else {dv}[{b} % {na}] += x_;"))
        blk.add(Decl(vt, f"{dv}[4]"))
        blk.add(Line(f"for (int64_t {loop.var.name} = 0; {loop.var.name} < {w}; {loop.var.name} += {ln})"), body)
        blk.add(Line(f"for (int64_t s_ = {na} / 2; s_ >= 1; s_ /= 2) for (int64_t l_ = 0; l_ < s_; l_++) "
                     f"{dv}[l_] += {dv}[l_ + s_];"))
        blk.add(f"{self.target(op)} += ls_hsum_{vt[3:]}({dv}[0]);")
        return True

    def vector_rows(self, loop, blk):
        """Emit the dense ``loop`` at a constant width whose statements each write a row
        contiguous in its variable (the result's last index, or a temporary's last kept
        dimension) from vector expressions (``vector_expr``; a sum only, and only over other
        loops: each lane sums its element in the scalar order) as one vector statement per
        vector of the row, and return True; False where it does not qualify. MTTKRP's
        ``t[r] += X[i,k,l] * C[l, r]``, GNN-2's ``o[i, r] += t * Y[k, r]``: gcc 12 compiled
        the 16-wide rows worse at a constant width than at a variable one."""
        w = self.ext[loop.var]
        if self.count or loop.space != P.TRUE or not w.isdigit() or not loop.body:
            return False
        if not all(isinstance(n, Compute) for n in loop.body):
            return False
        lines, vt0, isz = [], None, None
        for n in loop.body:
            op = self.prog.ops[n.op]
            t = RowMixin.VEC_TYPES.get(np.dtype(self.prog.values[op.out].dtype).name)
            if t is None or (int(w) * t[1]) % 64 or (vt0 is not None and t[0] != vt0):
                return False
            vt0, isz = t
            if op.stmt.reduce_indices and (op.stmt.reduce != "sum" or loop.var in op.stmt.reduce_indices):
                return False
            tgt = self._row_target(op, loop.var)
            if tgt is None:
                return False
            got = self.vector_expr(op, op.stmt.expr, loop.var, t[0])
            if got is None or not got[1]:
                return False
            sign = "+=" if op.stmt.reduce_indices else "="
            held = self.held.get(n.op)
            if held is not None:  # (hold_rows: the row is in vectors across the sparse loop)
                lines.append(f"{held[0]}[{loop.var.name} / {held[1]}] += {got[0]};")
            else:
                lines.append(f"*({t[0]} *)&{tgt} {sign} {got[0]};")
        self._use_vectors()
        body = Block()
        for x in lines:
            body.add(Line(x))
        blk.add(Line(f"for (int64_t {loop.var.name} = 0; {loop.var.name} < {w}; {loop.var.name} += (LS_VB / {isz}))"), body)
        return True

    PREFETCH_AHEAD = 8      # entries of the driving level (measured: 2 < 8 ~ 16)
    PREFETCH_BYTES = 1024   # of each gathered row, at most
    PREFETCH_ACROSS = True

    def gathers(self, loop):
        """Dense 2-D inputs whose row is picked by this loop's (sparse) variable and read along
        an inner loop (SDDMM's ``V[j, :]``, GNN's ``X[k, :]``, MTTKRP's factor rows): random
        rows no hardware prefetcher predicts. ``[(value id, inner variable)]``."""
        if loop.space == P.TRUE:
            return []
        out = []

        def walk(nodes):
            for n in nodes:
                if isinstance(n, Loop):
                    walk(n.body)
                elif isinstance(n, Compute):
                    op = self.prog.ops[n.op]
                    for a in op.stmt.accesses:
                        vid = op.args[a.operand]
                        sp = self.specs.get(vid)
                        if (sp is not None and sp.dense and sp.ndim == 2 and sp.unit and sp.layout[-1] == 1
                                and a.indices[0] == loop.var and isinstance(a.indices[1], Index)
                                and a.indices[1] != loop.var and all(g != vid for g, _ in out)):
                            out.append((vid, a.indices[1]))  # (a row read twice is prefetched once)
        walk(loop.body)
        return out

    def open_loop(self, v, space, blk, pragma=None, gathers=()):
        """Emit the loop header of ``v`` over ``space`` into ``blk`` (after the line ``pragma``);
        returns its body (``v`` and the driver's position are bound until ``close_loop``).
        ``gathers``: rows to prefetch a few entries ahead (``gathers``)."""
        body = Block()
        if pragma:
            blk.add(Line(pragma))
        span = None
        if self.span is not None and self.span[0] == v:
            span, self.span = self.span[1:], None  # (the parallel loop's chunk: owned_runs)
        if space == P.TRUE:
            blk.add(For(v.name, *(span or ("0", self.ext[v])), body))
        else:
            if len(space) != 1 or len(next(iter(space))) != 1:
                raise Unsupported("a loop driven by several sparse iterators")
            (vid, path), = next(iter(space))
            fmt = self.specs[vid].format
            level = len(path) - 1
            if fmt.levels[level].kind != "compressed":
                raise Unsupported("non-compressed driver")
            idx = [None] * fmt.ndim
            for q, ix in enumerate(path):
                idx[fmt.order[q]] = ix
            parent = self.position(vid, idx, level - 1) if level else "0"
            q = self.fresh("q")
            lo, hi = f"(int64_t)p{vid}_{level}[{parent}]", f"(int64_t)p{vid}_{level}[({parent}) + 1]"
            if span is not None:
                hi = f"{lo} + {span[1]}"
                lo = f"{lo} + {span[0]}"
            blk.add(For(q, lo, hi, body))
            body.add(Decl("int64_t", v.name, f"(int64_t)c{vid}_{level}[{q}]"))
            self.seg[(vid, tuple(path))] = (q, f"(int64_t)p{vid}_{level}[{parent}]")
            ahead = self.PREFETCH_AHEAD
            # Bounded by the whole level, not the segment: short rows (a few entries) then
            # prefetch the next rows' entries too, which the row loop visits next.
            end = self.count_of(vid, level) if self.PREFETCH_ACROSS else None
            for g, inner in (gathers if ahead else ()):
                size = np.dtype(self.specs[g].dtype).itemsize
                step, most = max(1, 64 // size), max(1, self.PREFETCH_BYTES // size)
                body.add(f"if ({q} + {ahead} < {end or hi}) {{ const int64_t r_ = (int64_t)c{vid}_{level}[{q} + {ahead}]; "
                         f"for (int64_t f_ = 0; f_ < {self.ext[inner]} && f_ < {most}; f_ += {step}) "
                         f"__builtin_prefetch(&v{g}[r_ * s{g}_0 + f_]); }}")
            self.pos[(vid, tuple(path))] = q
        self.bound.add(v)
        return body

    def close_loop(self, v):
        self.bound.discard(v)
        for key in [k for k in self.pos if v in k[1]]:
            del self.pos[key]

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

    def access_value(self, op, e):
        vid = op.args[e.operand]
        val = self.prog.values[vid]
        if val.kind != INPUT:
            name, off = self.temp_addr(vid, e.indices)
            return f"{name}[{off}]"
        sp = self.specs[vid]
        if sp.dense:
            if sp.ndim == 0:
                return f"v{vid}s"
            terms = []
            for m, ix in enumerate(e.indices):
                c = ix.name if isinstance(ix, Index) else str(int(ix.value))
                s = "1" if sp.unit and m == sp.layout[-1] else f"s{vid}_{m}"
                terms.append(f"({c})" if s == "1" else f"({c}) * {s}")
            return f"v{vid}[{' + '.join(terms)}]"
        if any(not isinstance(ix, Index) for ix in e.indices):
            raise Unsupported("a sparse access at a constant")
        return f"v{vid}[{self.position(vid, e.indices, sp.format.ndim - 1)}]"

    def value(self, op, e):
        if isinstance(e, Access):
            return self.access_value(op, e)
        args = [C.cast(self.value(op, a), self.dtype_of(op, a), d) for a, d in zip(e.args, e.in_dtypes)]
        if self.count and e.op == "where":
            args[1:] = [counting.branch(a, t) for a, t in zip(e.args[1:], args[1:])]
        return C.call(e.op, args, e.in_dtypes, e.dtype)

    def dtype_of(self, op, e):
        if isinstance(e, Access):
            return self.prog.values[op.args[e.operand]].dtype
        return e.dtype

    def target(self, op):
        if op.out == self.out:
            return self.out_target(op)
        name, off = self.temp_addr(op.out, op.stmt.out_indices)
        return f"{name}[{off}]"

    def emit_compute(self, k, blk):
        op = self.prog.ops[k]
        val = self.value(op, op.stmt.expr)
        dt = self.prog.values[op.out].dtype
        tgt = self.acc.get(k) or self.target(op)
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
            text = counting.line(counting.expr_ops(op.stmt.expr), loads,
                                 op.stmt.reduce if op.stmt.reduce_indices else None)
            if text:
                blk.add(text)
        if op.stmt.reduce_indices:
            blk.add(C.reduce_step(op.stmt.reduce, tgt, val, dt))
        else:
            blk.add(f"{tgt} = {val};")

    def out_target(self, op):
        outs = op.stmt.out_indices
        if self.out_like is not None:
            vid = self.out_like
            return f"o[{self.position(vid, self.like_idx, self.specs[vid].format.ndim - 1)}]"
        off = "0"
        for m, ix in enumerate(outs):
            stride = " * ".join(self.ext[o] for o in outs[m + 1:]) or "1"
            term = ix.name if stride == "1" else f"{ix.name} * {stride}"
            off = term if off == "0" else f"{off} + {term}"
        return f"o[{off}]"

    def check(self):
        """Decline what this version would get wrong: reductions other than sums (their implicit
        zeros need counting), and a temporary read over a loop that does not visit exactly the
        points its definition writes (stale values from an earlier iteration, or unwritten
        points, would be read)."""
        for k, op in enumerate(self.prog.ops):
            if op.stmt.reduce_indices and op.stmt.reduce != "sum":
                raise Unsupported(f"a {op.stmt.reduce} reduction")
            if op.out in self.prog.outputs:
                continue
            kept = set(self.plan.temp_dims[op.out])
            wrote = {lp.var: lp.space for lp in self.paths[k] if lp.var in kept}
            for u, o in enumerate(self.prog.ops):
                if op.out not in o.args:
                    continue
                for lp in self.paths[u]:
                    if lp.var in wrote and wrote[lp.var] != P.TRUE and lp.space != wrote[lp.var]:
                        raise Unsupported("a temporary read outside the points it is written at")

    def lower(self):
        from lazysparse.compiler.plan.fusion import _paths
        self.paths = _paths(self.plan.tree)
        self.check()
        top = self.top = Block()
        self.declare(top)
        self.sparse_temps = self.sparsify()
        if self.out_like is not None:
            op = next(o for o in self.prog.ops if o.out == self.out)
            self.like_idx = op.stmt.out_indices
        body = Block()
        top.add(body)
        par = self.parallel_loop()
        prep = self.result_prep(body)
        if par is None:
            prep(body, None)
            bad = self.alloc_temps(body)
            if bad != "0":
                body.add(Line(f"if ({bad}) {{ {self.free_temps()} return 1; }}"))
            self.versions(self.plan.tree, body, lambda b: self.emit(self.plan.tree, b))
            if self.free_temps():
                body.add(Line(self.free_temps()))
            top.add("return 0;")
            return self.with_prelude(top)
        # OpenMP on the outermost loop, thread-private temporaries; one thread unless the
        # caller asks for more (d[]: ls.set_num_threads), and no runtime at all without OpenMP
        if self.private:
            T = C.ctype(self.prog.values[self.out].dtype)
            ids = teams.team_ids(self.prelude, teams.KEEP)
            body.add(Decl("const int64_t", "ls_osz", self.abi.int(("out", "len"))))
            teams.private_team(body, self.abi, T, self.work())
            nt = "ls_pt"
        else:
            nt = teams.team_size(body, self.abi, self.work())
        top.body.insert(top.body.index(body), Decl("int32_t", "ls_bad", "0"))
        if par.space == P.TRUE:
            count = self.ext[par.var]
        else:
            (vid, path), = next(iter(par.space))
            count = f"(int64_t)p{vid}_0[1] - (int64_t)p{vid}_0[0]"  # the top level's one segment
        body.add(Decl("const int64_t", "ls_chunk", teams.omp_chunk(nt, count)))
        region = Block()
        # a thread without its temporaries skips its iterations (every thread must still reach
        # the omp for) and the kernel reports the failure
        region.add(Decl("const int", "ls_ok", f"!({self.alloc_temps(region)})"))
        region.add(Line("if (!ls_ok) __atomic_store_n(&ls_bad, 1, __ATOMIC_RELAXED);"))
        # Blocks dealt dynamically: a thread that wakes late (on the development VM an idle
        # second vCPU joined after 58 us median, 3.9 ms at the 90th percentile, after 12 ms of
        # idling: docs/design.md) leaves its share to the others instead of
        # holding them at the barrier. The barrier orders a zero fill before the sums; copies
        # of the like input's structure are read by nothing in the kernel, so no thread waits
        # for them (nowait) and the late thread's compute chunks go to whoever is there.
        fills = self.out_like is None
        prep(region, "#pragma omp for schedule(dynamic, 1)" + ("" if fills else " nowait"))
        body.add(Line(f"#pragma omp parallel num_threads((int){nt}) if({nt} > 1)"), region)
        if self.private:
            # after the zero fill (its omp for ends in a barrier): each thread's own result, and
            # a static share of the loop, so that the copies add up the same way every call
            own = Block().add(*teams.private_copy(T))
            region.add(*ids, own)
            self.versions([par], own, lambda b: self.emit_loop(
                par, b, "#pragma omp for schedule(static, ls_chunk)", "if (!ls_ok) continue;"))
            region.add(teams.add_copies(T, self.prog.values[self.out].dtype))
        else:
            # each thread its own run of chunks first (teams.owned_runs: the same rows every
            # call); a thread without its temporaries takes none, and the others do its run
            if THREAD_NUM not in self.prelude:
                self.prelude.append(THREAD_NUM)
            at = next(k for k, x in enumerate(body.body) if x is region) - 1  # (its pragma)
            body.body[at:at] = teams.owned_runs_setup(nt, count)
            mine = Block()
            region.add(If("ls_ok", mine))

            def owned(b):
                run, chunk = teams.owned_runs(nt, count)
                b.add(run)
                self.span = (par.var, "ls_r0", "ls_r1")
                self.emit_loop(par, chunk, "")
            self.versions([par], mine, owned)
        if self.free_temps():
            region.add(Line(self.free_temps()))
        if self.private:
            body.add(*teams.release_copies(T))
        top.add("return ls_bad;")
        return self.with_prelude(top)

    def with_prelude(self, top):
        if self.prelude:
            top.prelude = list(getattr(top, "prelude", ())) + self.prelude
        return top


def _accesses(e):
    """The accesses of expression ``e``."""
    if isinstance(e, Access):
        return [e]
    return [a for x in e.args for a in _accesses(x)]


def result_like(plan, specs):
    """The input whose pattern and structure the result takes (read with the result's own
    subscripts, and the result's pattern is exactly that input's), or None: a dense result."""
    prog = plan.program
    op = next(o for o in prog.ops if o.out == prog.outputs[0])
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
            lv.kind == "singleton" for lv in sp.format.levels):
        return None
    return vid


def lower_fused(plan, specs, count=False):
    """``(block, abi, out_like)`` for a fused plan; raises ``Unsupported``. ``count``: the
    instrumented build (compiler/lower/counting.py)."""
    if len(plan.program.outputs) != 1:
        raise Unsupported("several results")
    like = result_like(plan, specs)
    try:
        lw = FusedLowerer(plan, specs, like, count)
        block = lw.lower()
    except Unsupported:
        if like is None:
            raise
        # the loop that computes the result does not walk the like input's entries: dense
        like = None
        lw = FusedLowerer(plan, specs, like, count)
        block = lw.lower()
    lw.abi.sparse_temps = lw.sparse_temps  # for explain
    block.body.insert(0, Comment(" ; ".join(repr(op) for op in plan.program.ops)))
    return block, lw.abi, like
