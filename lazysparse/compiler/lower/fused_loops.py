"""The index tree of a fused plan as loops (``FusedLoopMixin``): each loop over a dense range
or one sparse iterator's segment (``open_loop``/``close_loop``, prefetching the dense rows its
body gathers), the positions the enclosing loops know, innermost dense sums under ``omp simd``
reductions and versions of the nest at constant widths (``versions``, ``emit_loop``), and a row
loop with its sparse inner loop walked as one flat loop over positions (``emit_flat``).
``Unsupported`` is what the fused lowering raises for a construct it does not emit yet.
"""
from __future__ import annotations

import numpy as np

from lazysparse.ir.nodes import Index
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.fusion import Compute, Loop, Reset
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block
from lazysparse.compiler.lower.level_builder import LevelIR


class Unsupported(Exception):
    """The plan needs a construct this lowering does not emit yet."""


def ex(x):
    """``x`` as a loop IR expression: an expression as is, a name or a number (an extent) as
    Var or Int."""
    return E.var(x)


def at_pos(arr, pos):
    """``(index type)arr[pos]``: an entry of a positions or coordinates array, widened."""
    return E.Cast(T.INDEX, E.Load(E.Var(arr), ex(pos)))


class FusedLoopMixin:
    """Loops of the index tree. Owns ``pos``, ``seg``, ``bound``, ``loaded``, ``versioned`` and
    ``acc`` (the local sums of ``open_sums``); takes ``span`` (fused_parallel.py) for the loop
    it bounds."""

    def level_of(self, vid, idx, var):
        fmt = self.specs[vid].format
        for l, m in enumerate(fmt.order):
            if idx[m] == var:
                return l
        return None

    def position(self, vid, idx, level):
        """The expression of input ``vid``'s position at ``level`` for subscripts ``idx``."""
        key = (vid, tuple(idx[m] for m in self.specs[vid].format.order[:level + 1]))
        if key in self.pos:
            return self.pos[key]
        fmt = self.specs[vid].format
        m = fmt.order[level]
        ix = idx[m]
        if fmt.levels[level].is_sparse or not (isinstance(ix, Index) and ix in self.bound):
            raise Unsupported(f"no known position for v{vid} level {level}")
        parent = self.position(vid, idx, level - 1) if level else None
        if parent is None:
            return E.Var(ix.name)
        return E.Paren(fmt.levels[level].level_kind.locate(LevelIR(vid, level), parent, E.Var(ix.name)))

    def emit(self, nodes, blk, loop=None):
        """``nodes`` into ``blk``; ``loop(node, blk)`` emits the loops among them when given
        (``emit_loop`` otherwise)."""
        outer, self.loaded = self.loaded, set()  # (the input elements this body has loaded)
        for n in nodes:
            if isinstance(n, Reset):
                self.emit_reset(n, blk)
            elif isinstance(n, Compute):
                self.emit_compute(n.op, blk)
            else:
                (loop or self.emit_loop)(n, blk)
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
                    or np.dtype(self.prog.values[op.out].dtype).kind not in "iuf" or outs & set(op.args)):
                return ()
        return ks

    def mixed_sums(self, loop):
        """The sums of a dense loop whose body is statements only, some summing over the loop's
        variable into locations the loop does not move and the others storing at locations
        that move with it (CG's ``r = r - alpha Ap`` with ``r @ r``); () where it does not
        qualify. The sums then go into local accumulators under ``omp simd reduction`` as in
        ``simd_sums``: through memory, each was a chain of dependent adds (a stored, loaded and
        added ``r @ r`` took 4x the time of the loop's stores). Every read of a value the loop
        writes must be at the subscripts it is written at (the element this iteration wrote),
        and no statement reads a sum (it is complete only after the loop)."""
        if loop.space != P.TRUE or not loop.body or not all(isinstance(n, Compute) for n in loop.body):
            return ()
        ops = [self.prog.ops[n.op] for n in loop.body]
        written = {op.out: op.stmt.out_indices for op in ops}
        sums = tuple(n.op for n, op in zip(loop.body, ops) if loop.var in op.stmt.reduce_indices)
        if not sums:
            return ()
        for n, op in zip(loop.body, ops):
            if n.op in sums:
                if (op.stmt.reduce != "sum" or loop.var in op.stmt.out_indices
                        or np.dtype(self.prog.values[op.out].dtype).kind not in "iuf"):
                    return ()
            elif op.stmt.reduce_indices or loop.var not in op.stmt.out_indices:
                return ()
            for a in op.stmt.accesses:
                vid = op.args[a.operand]
                if vid in written and (tuple(a.indices) != tuple(written[vid])
                                       or any(self.prog.ops[k].out == vid for k in sums)):
                    return ()
        return sums

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
                chain = Block().add(S.If(E.Binary("==", ex(n), E.Int(w)), version, chain))
            into.add(chain)
        self.versioned = set(found)
        nest(found, blk)
        self.versioned = set()

    versioned = frozenset()  # inside versions(): variables whose widths are dispatched outside the nest

    span = None  # (variable, lo, hi): the bounds of the next loop over variable (owned_runs' chunk)
    order = None  # (variable, C name): the next loop over variable visits its rows in this order

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
                chain = Block().add(S.If(E.Binary("==", ex(n), E.Int(w)), version, chain))
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
        if (tuple(path) != (loop.var, inner.var) or fmt.ndim != 2 or fmt.levels[0].is_sparse
                or not fmt.levels[1].has_pos):
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
        simd = self.open_sums(ks, blk)
        blk.add(S.For(q, at_pos(f"p{vid}_1", 0), self.count_of(vid, 1), body, simd=simd))
        body.add(S.Declare(inner.var.name, T.INDEX, at_pos(f"c{vid}_1", q)))
        self.pos[(vid, tuple(path))] = E.Var(q)
        self.bound.add(inner.var)
        self.emit(inner.body, body)
        self.close_loop(inner.var)
        self.close_sums(ks, blk)

    def open_sums(self, ks, blk):
        """Declare a local accumulator for each op of ``ks`` (``simd_sums``); returns the loop's
        vector-lanes hint, each lane summing into private copies of them (a ``SimdHint``)."""
        for j in ks:
            self.acc[j] = self.fresh("acc")
            blk.add(S.Declare(self.acc[j], T.scalar(self.prog.values[self.prog.ops[j].out].dtype), E.Int(0)))
        return S.SimdHint(tuple(S.Reduction("+", self.acc[j]) for j in ks), merged=len(ks) > 1)

    def close_sums(self, ks, blk):
        """After the loop: each accumulator into its op's target."""
        for j in ks:
            blk.add(S.Update(self.target(self.prog.ops[j]), "+", E.Var(self.acc.pop(j))))

    def emit_loop_once(self, loop, blk, pragma=None, first=None):
        inner = self.flat_inner(loop) if pragma is None and first is None else None
        if inner is not None:
            self.emit_flat(loop, inner, blk)
            return
        k = self.simd_sum(loop) if pragma is None else None
        if k is not None and first is None and self.vector_sum(loop, k, blk):
            return
        if pragma is None and first is None and self.emit_split_sums(loop, blk):
            return
        if k is None and pragma is None and first is None and self.vector_rows(loop, blk):
            return
        ks = (k,) if k is not None else (self.simd_sums(loop) or self.mixed_sums(loop)) \
            if pragma is None and first is None else ()
        if ks:
            pragma = self.open_sums(ks, blk)
        hoisted = self.hoist_rows(loop, blk) if loop.space != P.TRUE else []
        held = self.hold_rows(loop, blk) if loop.space != P.TRUE and self.HOLD else []
        body = self.open_loop(loop.var, loop.space, blk, pragma, self.gathers(loop))
        if first:
            body.body.insert(0, first)
        self.emit(loop.body, body)
        self.close_loop(loop.var)
        for key in hoisted:
            del self.hoisted[key]
        for q, store in held:
            blk.add(store)
            del self.held[q]
        self.close_sums(ks, blk)

    SPLIT = 4  # partial sums of a sparse segment's sum (emit_split_sums)

    def emit_split_sums(self, loop, blk) -> bool:
        """A loop along one sparse segment whose body only sums into locations the loop does not
        move (SpMV's row inside a fused step: ``t += A[i, j] * x[j]``) as SPLIT interleaved
        partial sums, then the remainder: one add's latency per SPLIT entries instead of per
        entry, as the single-operation lowerer's split accumulators do (a Jacobi step on
        bcsstk16, 60 entries a row, ran 1.6x the SpMV alone with one chain of adds). A float
        sum is reassociated, as NumPy's pairwise sums are; an integer one is exact. Returns
        whether it emitted the loop (not in a counting build, whose lines keep it scalar)."""
        if self.count or loop.space == P.TRUE:
            return False
        ks = self.simd_sums(loop, flat=True)
        if not ks:
            return False
        drv = self.sparse_driver(loop.space)
        vid, path, lb, lk, start, end = drv
        b, z, q = self.fresh("b"), self.fresh("z"), self.fresh("q")
        blk.add(S.Declare(b, T.INDEX, start), S.Declare(z, T.INDEX, end), S.Declare(q, T.INDEX, E.Var(b)))
        names = {j: [self.fresh("acc") for _ in range(self.SPLIT)] for j in ks}
        for j in ks:
            dt = T.scalar(self.prog.values[self.prog.ops[j].out].dtype)
            blk.add(*(S.Declare(a, dt, E.Int(0)) for a in names[j]))
        main, rest = Block(), Block()
        blk.add(S.While(E.lt(E.add(q, self.SPLIT - 1), E.Var(z)), main), S.While(E.lt(q, E.Var(z)), rest))
        for body, copies in ((main, range(self.SPLIT)), (rest, range(1))):
            for c in copies:
                at = E.Var(q) if c == 0 else E.Paren(E.add(q, c))
                copy = Block()
                body.add(copy)
                copy.add(S.Declare(loop.var.name, T.INDEX, lb.index(lk.coordinate(lb, at, E.Var(b)))))
                self.seg[(vid, path)] = (at, E.Var(b))
                self.pos[(vid, path)] = at
                self.bound.add(loop.var)
                for j in ks:
                    self.acc[j] = names[j][c]
                self.emit(loop.body, copy)
                self.close_loop(loop.var)
            body.add(S.Update(E.Var(q), "+", E.Int(len(copies)), compound=True))
        for j in ks:
            del self.acc[j]
            total = names[j][0]
            for a in names[j][1:]:
                total = E.add(total, a)
            blk.add(S.Update(self.target(self.prog.ops[j]), "+", E.Paren(total)))
        return True

    def sparse_driver(self, space):
        """The one sparse iterator driving a loop over ``space``: ``(input, path, level IR,
        level kind, segment start, segment end)``."""
        if len(space) != 1 or len(next(iter(space))) != 1:
            raise Unsupported("a loop driven by several sparse iterators")
        (vid, path), = next(iter(space))
        fmt = self.specs[vid].format
        level = len(path) - 1
        if not fmt.levels[level].has_pos:
            raise Unsupported("non-compressed driver")
        idx = [None] * fmt.ndim
        for q, ix in enumerate(path):
            idx[fmt.order[q]] = ix
        parent = self.position(vid, idx, level - 1) if level else E.Int(0)
        lb = LevelIR(vid, level)
        lk = fmt.levels[level].level_kind
        start, end = lk.iterate(lb, parent)
        return vid, tuple(path), lb, lk, start, end

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
        """Emit the loop of ``v`` over ``space`` into ``blk``; returns its body (``v`` and the
        driver's position are bound until ``close_loop``). ``pragma``: the loop's vector-lanes
        hint (a ``SimdHint``), or a ``Worksharing`` (a loop of the parallel region,
        fused_parallel.py). ``gathers``: rows to prefetch a few entries ahead (``gathers``)."""
        body = Block()
        simd = pragma if isinstance(pragma, S.SimdHint) else None
        share = pragma if isinstance(pragma, S.Worksharing) else None
        span = None
        if self.span is not None and self.span[0] == v:
            span, self.span = self.span[1:], None  # (the parallel loop's chunk: owned_runs)
        if space == P.TRUE:
            lo, hi = span or (0, self.ext[v])
            if self.order is not None and self.order[0] == v:  # (the rows through their order)
                k = self.fresh("k")
                blk.add(S.For(k, ex(lo), ex(hi), body, simd=simd, worksharing=share))
                body.add(S.Declare(v.name, T.INDEX, E.Cast(T.INDEX, E.load(self.order[1], k)), const=True))
                self.order = None
            else:
                blk.add(S.For(v.name, ex(lo), ex(hi), body, simd=simd, worksharing=share))
        else:
            vid, path, lb, lk, start, end = self.sparse_driver(space)
            level = len(path) - 1
            q = self.fresh("q")
            lo, hi = start, end
            if span is not None:
                lo, hi = E.add(start, span[0]), E.add(start, span[1])
            blk.add(S.For(q, lo, hi, body, simd=simd, worksharing=share))
            body.add(S.Declare(v.name, T.INDEX, lb.index(lk.coordinate(lb, E.Var(q), start))))
            self.seg[(vid, tuple(path))] = (E.Var(q), start)
            ahead = self.PREFETCH_AHEAD
            # Bounded by the whole level, not the segment: short rows (a few entries) then
            # prefetch the next rows' entries too, which the row loop visits next.
            n = self.count_of(vid, level) if self.PREFETCH_ACROSS else None
            end = n if n is not None else hi
            for g, inner in (gathers if ahead else ()):
                size = np.dtype(self.specs[g].dtype).itemsize
                step, most = max(1, 64 // size), max(1, self.PREFETCH_BYTES // size)
                row = S.Declare("r_", T.INDEX, at_pos(f"c{vid}_{level}", E.add(q, ahead)), const=True)
                body.add(S.If(E.lt(E.add(q, ahead), end),
                              S.Inline((row, prefetch_row(g, self.ext[inner], most, step))), oneline=True))
            self.pos[(vid, tuple(path))] = E.Var(q)
        self.bound.add(v)
        return body

    def close_loop(self, v):
        self.bound.discard(v)
        for key in [k for k in self.pos if v in k[1]]:
            del self.pos[key]


def prefetch_row(g, n, most, step):
    """The prefetches of dense input ``g``'s row ``r_``, a cache line (``step`` elements) apart
    over its first ``n`` elements, at most ``most``."""
    f = E.Var("f_")
    fetch = S.Prefetch(E.AddrOf(E.load(f"v{g}", E.add(E.mul("r_", f"s{g}_0"), f))), locality=3)
    return S.For("f_", E.Int(0), None, fetch, step=S.Update(f, "+", E.Int(step), compound=True),
                 cond=E.Binary("&&", E.lt(f, ex(n)), E.lt(f, most)), oneline=True)
