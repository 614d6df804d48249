"""The fused kernel's parallel outer loop (``FusedParallelMixin``): which loop may run on threads
(``parallel_loop``: a result dimension nothing else reduces, or a loop that only the result's sum
runs over, into private copies of the result), its work estimate against the thread threshold
(``work``, ``trip``), and the OpenMP region around it with thread-private temporaries
(``emit_parallel``), built from the thread teams of teams.py.
"""
from __future__ import annotations

from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.fusion import Compute, Loop
from lazysparse.compiler.plan.program import INPUT
from lazysparse.compiler.lower import teams
from lazysparse.compiler.lower.locate import THREAD_NUM
from lazysparse.compiler.lower.operands import level_count_expr
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block


class FusedParallelMixin:
    """The parallel outer loop. Sets ``private`` and, for each thread's run of chunks,
    ``span`` and ``order``."""

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
        if any(lp.var not in o.stmt.out_indices for o in self.prog.ops if o.out in self.extra):
            return None  # (each thread writes its own rows of every result, or none runs)
        if lp.var not in out_op.stmt.out_indices:
            if (self.out_like is not None or self.count or self.extra or lp.var not in out_op.stmt.reduce_indices
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
                    terms.append(teams.sum_of(trips, "*") or E.Lit(1.0, "float64"))
        walk(self.plan.tree, [])
        return teams.sum_of([E.Paren(t) for t in terms]) or E.Lit(0.0, "float64")

    def trip(self, lp):
        ext = E.Cast(teams.DOUBLE, teams.par(self.ext[lp.var]))
        if lp.space == P.TRUE:
            return ext
        parts = []
        for key in sorted({k for term in lp.space for k in term}, key=repr):
            vid, path = key
            sp = self.specs[vid] if self.prog.values[vid].kind == INPUT else None
            l = len(path) - 1
            n = n0 = None
            if sp is not None and not sp.dense:
                n, n0 = level_count_expr(sp.format, vid, l), level_count_expr(sp.format, vid, l - 1)
            if n is None or n0 is None:
                parts.append(ext)  # (a temporary's iterator: at most the extent)
            else:
                n0 = E.Paren(n0)
                parts.append(E.Binary("/", E.Cast(teams.DOUBLE, E.Paren(n)), E.Cast(teams.DOUBLE, E.Paren(
                    E.Select(E.Binary(">", n0, E.Int(0)), n0, E.Int(1))))))
        return E.Paren(teams.sum_of(parts))

    def emit_parallel(self, top, body, par, prep):
        """OpenMP on the outermost loop ``par`` (``parallel_loop``), thread-private
        temporaries; one thread unless the caller asks for more (d[]: ls.set_num_threads), and
        no runtime at all without OpenMP. Each thread sums into its own copy of the result
        (``private``) over a static share of the loop, or takes its own run of chunks first."""
        if self.private:
            ct = T.scalar(self.prog.values[self.out].dtype)
            ids = teams.team_ids(self.prelude, teams.KEEP)
            body.add(S.Declare("ls_osz", T.INDEX, self.abi.int_expr(("out", "len")), const=True))
            teams.private_team(body, self.abi, ct, self.work())
            nt = "ls_pt"
        else:
            nt = teams.team_size(body, self.abi, self.work())
        top.body.insert(top.body.index(body), S.Declare("ls_bad", T.scalar("int32"), E.Int(0)))
        if par.space == P.TRUE:
            count = self.ext[par.var]
        else:
            (vid, path), = next(iter(par.space))
            top_pos = E.Var(f"p{vid}_0")  # the top level's one segment
            count = E.sub(E.Cast(T.INDEX, E.load(top_pos, 1)), E.Cast(T.INDEX, E.load(top_pos, 0)))
        body.add(S.Declare("ls_chunk", T.INDEX, teams.chunk_size(nt, count), const=True))
        region = Block()
        # a thread without its temporaries skips its iterations (every thread must still reach
        # the omp for) and the kernel reports the failure
        bad = self.alloc_temps(region)
        region.add(S.Declare("ls_ok", T.INT, E.Unary("!", E.Paren(bad if bad is not None else E.Int(0))), const=True))
        region.add(S.If(E.Unary("!", E.Var("ls_ok")),
                        S.Atomic(S.Assign(E.Var("ls_bad"), E.Int(1)), "write", relaxed=True), oneline=True, bare=True))
        # Blocks dealt dynamically: a thread that wakes late (on the development VM an idle
        # second vCPU joined after 58 us median, 3.9 ms at the 90th percentile, after 12 ms of
        # idling: docs/design.md) leaves its share to the others instead of
        # holding them at the barrier. The barrier orders a zero fill before the sums; copies
        # of the like input's structure are read by nothing in the kernel, so no thread waits
        # for them (nowait) and the late thread's compute chunks go to whoever is there.
        prep(region, S.Worksharing(S.Schedule("dynamic", E.Int(1)), nowait=not self.fills))
        team = E.Var(nt)
        body.add(S.Parallel(region, threads=team, when=E.Binary(">", team, E.Int(1))))
        if self.private:
            # after the zero fill (its omp for ends in a barrier): each thread's own result, and
            # a static share of the loop, so that the copies add up the same way every call
            own = Block().add(*teams.private_copy(ct))
            region.add(*ids, own)
            self.versions([par], own, lambda b: self.emit_loop(
                par, b, S.Worksharing(S.Schedule("static", E.Var("ls_chunk"))),
                S.If(E.Unary("!", E.Var("ls_ok")), S.Continue(), oneline=True)))
            region.add(teams.add_copies(ct, self.prog.values[self.out].dtype))
        else:
            # each thread its own run of chunks first (teams.owned_runs: the same rows every
            # call); a thread without its temporaries takes none, and the others do its run
            if THREAD_NUM not in self.prelude:
                self.prelude.append(THREAD_NUM)
            at = next(k for k, x in enumerate(body.body) if isinstance(x, S.Parallel) and x.body is region)
            body.body[at:at] = teams.owned_runs_setup(nt, count)
            mine = Block()
            region.add(S.If(E.Var("ls_ok"), mine))

            vid = self.order_driver(par)

            def chunk_loop(b):
                self.span = (par.var, "ls_r0", "ls_r1")
                self.emit_loop(par, b, "")

            def owned(b):
                run, chunk = teams.owned_runs(nt, count)
                b.add(run)
                self.in_row_order(par, vid, chunk, chunk_loop)
            self.versions([par], mine, owned)
        if self.free_temps() is not None:
            region.add(self.free_temps())
        if self.private:
            body.add(*teams.release_copies(ct))
        top.add(S.Return(E.Var("ls_bad")))

    def order_driver(self, loop):
        """The sparse input whose rows the dense loop ``loop`` may visit in another order
        (runtime/row_order.py): a loop directly inside it walks that input's segments (a dense
        level under ``loop``, then a compressed one) with statements only in its body. The
        mispredicted exit the order saves is about 20 cycles a row, a sliver beside a dense loop
        per entry (SDDMM's and GNN's K-long rows: visiting rows out of stored order made them
        1.5-2.2x slower on graphs). The caller knows the order is free: the loop's iterations
        write disjoint rows (``parallel_loop``, ``any_order``)."""
        if loop.space != P.TRUE:
            return None
        for n in loop.body:
            if (not isinstance(n, Loop) or n.space == P.TRUE or len(n.space) != 1 or len(next(iter(n.space))) != 1
                    or not all(isinstance(c, Compute) for c in n.body)):
                continue
            (vid, path), = next(iter(n.space))
            sp = self.specs[vid] if self.prog.values[vid].kind == INPUT else None
            if (sp is not None and not sp.dense and tuple(path) == (loop.var, n.var) and sp.format.ndim == 2
                    and not sp.format.levels[0].is_sparse and sp.format.levels[1].has_pos):
                return vid
        return None

    def any_order(self, loop):
        """Whether a top-level loop of a serial tree may visit its iterations in any order: each
        statement under it stores at its variable (its own row) or sums over it (the sum is
        reassociated, as the split sums are; an integer one is exact), and reads what the loop
        writes only where it was written, never a sum over the variable (complete only after
        the loop)."""
        ops = []

        def under(nodes):
            for n in nodes:
                if isinstance(n, Loop):
                    under(n.body)
                elif isinstance(n, Compute):
                    ops.append(self.prog.ops[n.op])
        under(loop.body)
        written = {op.out: tuple(op.stmt.out_indices) for op in ops}
        sums = {op.out for op in ops if loop.var in op.stmt.reduce_indices}
        for op in ops:
            st = op.stmt
            if loop.var not in st.out_indices and (loop.var not in st.reduce_indices or st.reduce != "sum"):
                return False
            for a in st.accesses:
                vid = op.args[a.operand]
                if vid in written and (vid in sums or tuple(a.indices) != written[vid]):
                    return False
        return True

    def declare_order(self, vid):
        """The row order of input ``vid`` (a pointer the call sets, or leaves NULL when the
        order does not pay), declared once before the kernel's loops; returns its name."""
        name = f"ls_ord{vid}"
        if name not in self.orders:
            dt = self.specs[vid].index_dtype
            self.orders[name] = S.Declare(name, T.ptr(dt, const=True, restrict=True),
                                          E.Cast(T.ptr(dt, const=True), self.abi.ptr_expr(("in", vid, "order", 1))))
            self.top.body.insert(self.top.body.index(self.body), self.orders[name])
        return name

    def in_row_order(self, loop, vid, blk, emit):
        """``emit(block)`` of ``loop`` into ``blk``, and when ``vid`` (``order_driver``) is not
        None once more through its row order, chosen by whether the call passed one."""
        if vid is None:
            emit(blk)
            return
        by = self.declare_order(vid)
        ordered, plain = Block(), Block()
        self.order = (loop.var, by)
        emit(ordered)
        self.order = None
        emit(plain)
        blk.add(S.If(E.Var(by), ordered, plain))
