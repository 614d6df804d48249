"""Reductions (``ReductionMixin``): a scalar accumulated under the result's bound indices and
stored once (``emit_accumulate``), the innermost segment sum as run-time variants (split
accumulators, vectors, the plain loop: ``emit_segment_variants``) picked by the tuner's flags,
once at the kernel's top where it has one such site (``emit_flag_versions``), reductions over a
dense range, and the flat walk of every stored entry of one operand (``emit_flat``).
"""
from __future__ import annotations

import numpy as np

from lazysparse.ir import ops
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.lower import counting, simd
from lazysparse.compiler.lower.operands import chain, level_count_expr
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block


class ReductionMixin:
    """Reductions and the segment sums' variants. Owns ``in_acc``, ``acc_name``,
    ``sched``/``sched_flags``/``fixed_flags`` (the run-time schedule flags), ``static_rows`` and
    ``stream_ahead``."""

    def emit_accumulate(self, depth, blk):
        """Outputs bound, reductions innermost: fold into a scalar, then store once."""
        red, acc, cnt = self.stmt.reduce, E.Var("acc"), E.Var("cnt")
        blk.add(S.Declare("acc", T.scalar(self.odt), self._identity()), S.Declare("cnt", T.INDEX, E.Int(0)))
        inner = Block()
        blk.add(inner)
        self.in_acc = True
        self.emit(depth, inner)
        self.in_acc = False
        if red in ("max", "min", "prod"):
            # points outside the iterated pattern hold the fill value (0): fold it in once
            fold = Block().add(S.Reduce(red, acc, E.Cast(T.scalar(self.odt), E.Int(0)), self.odt))
            if self.count:
                fold.add(counting.count_stmts([0, 0, 0, 0], [], red))
            total = chain("*", [self.ext[r] for r in self.red]) if self.red else E.Int(1)
            blk.add(S.If(E.lt(cnt, total), fold, oneline=True))
        if self.acc_store is not None:  # a schedule's tile: its own store (compiler/lower/tiling.py)
            self.acc_store(blk, E.Load(E.Var("o"), self.dense_index()))
        elif self.spec.mode == "dense-acc":
            blk.add(S.Assign(E.Load(E.Var("o"), self.dense_index()), acc))
        else:
            tgt = Block()
            blk.add(S.If(E.Binary("&&", E.Binary(">", cnt, E.Int(0)), E.Binary("!=", acc, E.Int(0))), tgt))
            self.append_leaf(tgt, "acc")

    def _identity(self):
        """The identity of the statement's reduction in the result's dtype."""
        return E.Lit(ops.reduce_identity(self.stmt.reduce, self.odt), self.odt)

    def sched_flag(self, desc):
        """The C name of a run-time schedule flag (declared from its ``d[]`` slot once), or its
        value where the loop nest being emitted is the version for it (``emit_flag_versions``)."""
        name = self.sched_flags.get(desc)
        if name is None:
            name = self.sched_flags[desc] = f"{desc[0]}{len(self.sched_flags)}"
            self.sched.add(S.Declare(name, T.INT, E.Cast(T.INT, self.abi.int_expr(desc)), const=True))
        fixed = self.fixed_flags.get(desc)
        return name if fixed is None else str(fixed)

    def emit_flag_versions(self, body):
        """The loop nest once per run-time schedule of its segment sum (vector, split
        accumulators, plain loop: ``emit_segment_variants``), picked by the flags once at the
        top, where the kernel has one such site. Tested inside the loops, the flags cost two
        branches a row, taken the same way every time, which fill the branch history that
        predicts the segments' loop exits: SpMV on vt2010 (32k rows of 1-57), two threads, each
        running the same rows every call, took 83 us with the split loop picked inside and 31
        us with the flags constants (docs/design.md, "Loop exits the predictor learns"). A walk's
        parallel loop in the versions deals its chunks round the team in a fixed order
        (``parallel``; a range's chunks are always each thread's own run: ``owned_chunks``)."""
        general = Block()
        self.emit_versions(general)
        sites = {(d[1], d[2]) for d in self.sched_flags if d[0] in ("split", "vec")}
        if self.spec.loops is not None or len(sites) != 1:
            body.add(general)
            return
        (slot, lvl), = sites
        sd, vd = ("split", slot, lvl), ("vec", slot, lvl)
        combos = ([{vd: 1, sd: 0}] if vd in self.sched_flags else []) + [{sd: 1}, {sd: 0}]

        def nests(stream):
            versions = []
            for combo in combos:
                self.fixed_flags = dict(combo)
                if vd in self.sched_flags:
                    self.fixed_flags.setdefault(vd, 0)
                self.stream_ahead = stream
                blk = Block()
                self.emit_versions(blk)
                versions.append(blk)
            chain = S.If(E.var(self.sched_flags[sd]), versions[-2], versions[-1])
            if vd in self.sched_flags:
                chain = S.If(E.var(self.sched_flags[vd]), versions[0], Block().add(chain))
            return chain
        self.static_rows = True
        streamed = self.stream_gate(slot, lvl)
        chain = nests(False)
        if streamed is not None:
            chain = S.If(E.var(streamed), Block().add(nests(True)), Block().add(chain))
        self.fixed_flags, self.static_rows, self.stream_ahead = {}, False, False
        body.add(chain)

    SPLIT = 4  # partial accumulators of an innermost floating-point sum

    def _flat_access(self):
        """The one sparse access of a reduction to a scalar that every loop walks, when its
        entries can be visited as one flat run of positions instead of level by level (the
        coordinates are not needed: no other operand but 0-d ones, every index reduced and the
        loop order the access's own level order, unique dense/compressed levels, no schedule,
        no thread loop). Else None."""
        if (self.outs or not self.in_acc or self.spec.loops is not None or self.row_width
                or self.stmt.reduce not in ("sum", "max", "min", "prod")):
            return None
        return self._sole_walk()

    def _sole_walk(self):
        """The one sparse access when the statement reads nothing else at a coordinate (its
        other operands 0-d) and the loops walk it in its own level order, distinct subscripts,
        unique dense/compressed levels ending compressed: its stored entries can be visited as
        one flat run of positions (scalar reductions, maps) or counted from its coordinates
        alone (transpositions). Else None."""
        sparse = [a for a in self.accs if not a.spec.dense]
        if len(sparse) != 1 or any(a.spec.ndim for a in self.accs if a.spec.dense):
            return None
        (a,) = sparse
        fmt = a.spec.format
        if (a.lvl != 0 or list(a.lvars) != list(self.order) or len(set(a.acc.indices)) != len(a.acc.indices)
                or any(not (lv.is_dense or lv.has_pos) or not lv.unique for lv in fmt.levels)
                or not fmt.levels[-1].has_pos):
            return None
        # the stored entries must be where the statement is nonzero: ``(A + 1).sum()`` or
        # ``where(A != 0, A, 1).min()`` read one array but are nonzero everywhere (the implicit
        # points are not zeros to fold in), so they walk the dense space
        pat, _ = P.expr_pattern(self.expr, lambda acc, q: None if self.spec.inputs[acc.operand].dense
                                else q + self.q0, lambda acc: None, self.dec)
        if pat != P.var(a.q):
            return None
        return a

    def _map_flat(self):
        """Whether a mode "map" kernel may walk its operand's stored entries as one flat run
        of positions: no operand but 0-d ones beside it (no coordinate is read), its levels in
        loop order, no schedule, no count. ``2.5 * A`` on rows of 4.8 entries (vt2010) paid a
        loop setup a row, 2.4x scipy's time, level by level."""
        if self.spec.loops is not None or self.count or self.row_width:
            return False
        return self._sole_walk() is self.acc_by_q[self.mask_q]

    def emit_flat(self, a, blk, span=None):
        """A scalar reduction over every stored entry of ``a`` (``A.sum()``, ``A.max()``,
        ``(A * 2).max()``) as one loop over the positions of its last level, the segment
        ``[0, entries)``, with the innermost segment's variants (vector, split, plain: the tuner
        measures them as for a row). Level by level, each row paid its loop's setup and, as
        vectors, a horizontal reduction: on cage10 (13 entries a row) ``A.max()`` took 3.4x
        scipy's ``np.max`` of the values. Implicit zeros are folded in afterwards as before
        (``cnt`` counts the entries)."""
        L = len(a.lvars)
        depth, v = L - 1, self.order[-1]
        for w in self.order[:-1]:
            self.bind(w)  # (walked implicitly: no coordinate of theirs is read)
        orig = {x.q: x.snapshot() for x in self.accs}
        a.lvl = L - 1
        snap = {x.q: x.snapshot() for x in self.accs}
        u = f"{a.q}_{L - 1}"
        U, byq = {a.q: u}, {a.q: a}
        lo, hi = span or (E.Int(0), level_count_expr(a.spec.format, a.slot, L - 1))
        if span is not None and span == self.flat_span:
            self.span_uses += 1
        blk.add(S.Declare(f"b{u}", T.INDEX, E.var(lo)), S.Declare(f"z{u}", T.INDEX, E.var(hi)))
        if (span is None or self.flat_span is not None) and self._can_split_acc(depth, a, [a]):
            self.emit_segment_variants(depth, v, blk, a, {a.q}, byq, [a], U, snap)
        else:
            self.emit_single_driver(depth, v, blk, {a.q}, byq, [a], U, snap)
        for x in self.accs:
            x.restore(orig[x.q])
        for w in self.order[:-1]:
            self.bound.discard(w)

    def _dense_acc_loop(self, depth, v, iters):
        """The innermost loop of a float sum, max or min into the scalar ``acc`` runs over a
        dense range with no sparse operand walking it (``x.sum()``, a dense row's max)."""
        return (self.in_acc and depth == len(self.order) - 1 and not iters and self.spec.loops is None
                and self._reorderable())

    def _reorderable(self):
        """A float sum (its association may change, as NumPy's pairwise sum's does) or a float
        max or min (the same in any order, NaN included: any NaN wins): the reductions whose
        innermost loop may run split accumulators or vectors."""
        red, k = self.stmt.reduce, np.dtype(self.odt).kind
        return red == "sum" and k in "fc" or red in ("max", "min") and k == "f"

    def emit_dense_reduction(self, depth, v, blk, snap):
        """``for v in [0, N): acc op= f(v)`` over a dense range: SPLIT accumulators (the C
        compiler keeps a float reduction's order, so one add's or compare's latency per element:
        a 500k-element sum ran 2.7x NumPy's time, a max 6.7x), and where the target has AVX-512
        and every operand is contiguous in ``v`` or constant, W lanes at a time (compiler/lower/simd.py),
        chosen statically: on contiguous data the vector loop has nothing to lose."""
        # (an instrumented build counts in the scalar loops: ls.opcount)
        vec = None if self.count else simd.dense_segment(self, v, self.ext[v])
        split = Block()
        self.emit_split_accumulators(depth, v, split, None, None, snap)
        if vec is None:
            blk.add(split)
            return
        self._report_simd()
        blk.add(simd.guarded("1", vec, split))

    def _report_simd(self):
        """The kernel reports once whether its build has the vector code (the tuner reads it)."""
        if ("simd",) not in self.sched_flags:
            self.sched_flags[("simd",)] = None
            self.sched.add(simd.capability(self.abi.int_expr(("simd",))))

    def emit_segment_variants(self, depth, v, blk, drv, keys, byq, iters, U, snap):
        """The innermost segment reduction driven by ``drv`` as schedules of one loop picked at
        run time (runtime/tuning.py measures them; the segment lengths give the first guess):
        split accumulators hide the add latency on long or uniform segments, the plain loop
        mispredicts less on short, skewed ones, and a vector target can run the segment W
        entries at a time instead (compiler/lower/simd.py), a third choice behind its own flag (an
        instrumented build keeps the flags at 0: no tuner sets them)."""
        flag = self.sched_flag(("split", drv.slot, drv.lvl))
        vec = simd.segment_sum(self, v, drv, U)
        split, plain = Block(), Block()
        choice = Block().add(S.If(E.var(flag), split, plain))
        if vec is not None:
            vflag = self.sched_flag(("vec", drv.slot, drv.lvl))
            self._report_simd()
            blk.add(simd.guarded(vflag, vec, choice))
        else:
            blk.add(choice)
        self.emit_split_accumulators(depth, v, split, drv, U, snap)
        self.emit_single_driver(depth, v, plain, keys, byq, iters, U, snap)

    def _can_split_acc(self, depth, drv, iters):
        """An innermost floating-point sum, max or min driven by one unique sparse level: the
        candidates for split accumulators (a sum's association changes, as NumPy's pairwise sum
        does; a max or min is the same whatever the order, NaN included: any NaN wins) and for
        the vector loop (compiler/lower/simd.py)."""
        return (self.in_acc and depth == len(self.order) - 1 and len(iters) == 1
                and self._reorderable() and drv.spec.format.levels[drv.lvl].unique)

    def emit_split_accumulators(self, depth, v, blk, drv, U, snap):
        """``for j: acc += f(j)`` as SPLIT interleaved partial sums, then the remainder: the
        additions no longer wait on each other (one add's latency per SPLIT entries). ``drv``
        None: ``v`` is a dense range (``emit_dense_reduction``), its coordinate the position."""
        x0 = self.vname[v]
        if drv is None:
            j, lo, hi, crd = f"{x0}j", E.Int(0), E.Paren(E.var(self.ext[v])), None
        else:
            u = U[drv.q]
            j, lo, hi, crd = f"j{u}", E.Var(f"b{u}"), E.Var(f"z{u}"), f"c{drv.slot}_{drv.lvl}"
        n = self.SPLIT
        red = self.stmt.reduce
        for k in range(1, n):
            blk.add(S.Declare(f"acc_{k}", T.scalar(self.odt), self._identity()))
        blk.add(S.Declare(j, T.INDEX, lo))
        main, rest = Block(), Block()
        if self.stream_ahead and drv is not None:  # (stream_gate: the segment's start, each step)
            blk.add(*simd.stream_prefetch(drv.slot, crd, lo))
            main.add(*simd.stream_prefetch(drv.slot, crd, j))
        blk.add(S.While(E.lt(E.add(j, n - 1), hi), main), S.While(E.lt(j, hi), rest))
        for body, copies in ((main, range(n)), (rest, range(1))):
            for k in copies:
                for a in self.accs:
                    a.restore(snap[a.q])
                copy = Block()
                body.add(copy)
                xk = x0 if k == 0 else f"{x0}_{k}"
                self.vname[v] = xk
                at = E.Var(j) if k == 0 else E.Paren(E.add(j, k))
                copy.add(S.Declare(xk, T.INDEX, at if drv is None else E.Cast(T.INDEX, E.load(crd, at))))
                self.bind(v)
                if drv is not None:
                    self.advance(drv, j if k == 0 else at, "1", None)
                self.acc_name = "acc" if k == 0 else f"acc_{k}"
                self.cascade(copy)
                self.emit_output_level(depth, v, copy)
                self.bound.discard(v)
            # (by one too as ``+=``: an update by the literal one prints as an increment)
            body.add(S.Update(E.Var(j), "+", E.Int(len(copies)), compound=True))
        self.vname[v] = x0
        self.acc_name = "acc"
        if red == "sum":
            blk.add(S.Update(E.Var("acc"), "+", chain("+", [f"acc_{k}" for k in range(1, n)])))
        else:
            for k in range(1, n):
                blk.add(S.Reduce(red, E.Var("acc"), E.Var(f"acc_{k}"), self.odt))
        for a in self.accs:
            a.restore(snap[a.q])
