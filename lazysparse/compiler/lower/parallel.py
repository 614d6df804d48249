"""The single-operation lowerer's parallel loops (``ParallelMixin``): OpenMP on the outermost
loop of a dense result (``parallel``, each thread its own run of row chunks: ``owned_chunks``), a
sparse result's rows appended on threads to buffers of their own and copied into place after
(``emit_par_rows``), a dense result summed over its outermost loop into private copies
(``emit_private``, ``private_loop``), and a walk of stored coordinates shared out by positions
(``share_positions``). ``NoShare`` sends ``lower`` back to emit the kernel on one thread.
"""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.ir import ops
from lazysparse.compiler.lower import workspace
from lazysparse.compiler.lower.locate import THREAD_NUM
from lazysparse.compiler.lower.operands import level_count
from lazysparse.compiler.lower.teams import (APPEND_WORK, FLAT_WORK, KEEP, add_copies, omp_chunk,
    owned_runs, owned_runs_setup, private_copy, private_team, release_copies, team_ids, team_size,
    work_estimate)
from lazysparse.compiler.loopir.nodes import Block, Decl, For, If, Line


class NoShare(Exception):
    """The outermost loop the lowerer emitted did not take the threads' shares that
    ``emit_private`` or ``emit_par_rows`` set up for it (a loop shape they do not expect):
    ``lower`` then emits the kernel without them, on one thread."""


class ParallelMixin:
    """The Lowerer's parallel loops. Owns ``par_open``, ``row_span``, ``flat_span``,
    ``pos_share``, ``pos_chunk``, ``span_uses`` and ``span``; decides ``par_rows``
    (``_par_rows``) and ``private`` (``_private``), which results.py and ``lower`` record
    (lowering.py ``Lowerer.__init__`` declares them all)."""

    def _par_rows(self):
        """A CSR-like result appended row by row (mode "append", or a workspace flushed after
        each row) whose outermost loop is its row index: the rows may run on threads, each
        appending to buffers of its own (``emit_par_rows``). Not under a schedule (its loops
        are the schedule's). (An instrumented build is the same code plus its counters, which
        are atomic: compiler/lower/counting.py.)"""
        mode = self.spec.mode
        return (self.spec.loops is None and self.shares and len(self.outs) == 2
                and self.kd == 1 and not self.ocoo and self.olv[1].kind == "compressed"
                and self.order[0] == self.ovars[0]
                and (self._outer_range() is not None or self._outer_walker() is not None)
                and (mode == "append" or (self.ws and self.ws_h == 1)))

    def _outer_range(self):
        """The outermost loop runs over a range (no operand walks stored coordinates there: a
        thread's share of it is a range of rows, ``row_span``): the position array of a
        CSR-like operand's level under it (row ranges of about equal entries), "" when none
        has one; None when some operand walks a compressed level there (COO's first level,
        DCSR's rows: the walk's iterator carries from row to row)."""
        v, weights = self.order[0], ""
        for a in self.accs:
            if a.spec.dense or not a.lvars or a.lvars[0] != v:
                continue
            levels = a.spec.format.levels
            if levels[0].kind != "dense":
                return None
            if not weights and len(levels) > 1 and levels[1].kind == "compressed":
                weights = f"p{a.slot}_1"
        return weights

    def emit_par_rows(self, body):
        """The row loop of a ``_par_rows`` result in chunks of rows (``omp_chunk``) handed out
        to the team dynamically. On a team of one, thread 0 appends to the kernel's buffers as
        the serial loop does. On more, each thread appends its chunks' entries to coordinate and
        value buffers of its own (allocated here, before the region, so that they come from the
        main heap and are reused call after call: a thread's own malloc arena gave every call
        fresh pages, ~860 page faults for cage10's A + A.T) and keeps a workspace of its own;
        a row's end is written as the position in its thread's buffer. After the region the
        chunks are copied in row order into the kernel's buffers (grown to the total), each
        chunk's row ends shifted by where it landed. A failure inside the region (an
        allocation) cannot jump out of it: the chunk's ``goto ls_fail`` becomes ``goto
        ls_tfail`` (a macro around the loops), which flags it; the rest skip their chunks and the
        kernel fails after the region. Each row is computed by one thread as the serial loop
        computes it, so the values are the serial ones. Where the outer loop walks an
        operand's stored coordinates (COO's first level, a COO tensor's in TTV) instead of a
        range of rows, a chunk is a run of its positions cut where the coordinate changes
        (``share_positions``), and records the rows it spans for the shift."""
        for pre in (THREAD_NUM, KEEP):
            if pre not in self.prelude_extra:
                self.prelude_extra.append(pre)
        # rows walked as a range: chunks of rows; walked by an operand's stored coordinates
        # (COO's first level, DCSR's rows): chunks of its positions, cut where the coordinate
        # changes (``share_positions``), each recording the rows it spans (two more slots of
        # the chunk table, whose entries are W wide)
        walker = self._outer_walker() if self._outer_range() is None else None
        W = 6 if walker is not None else 4
        count = self.ext[self.order[0]]
        if walker is not None:
            p0 = f"p{walker.slot}_0"
            body.add(Decl("const int64_t", "ls_pb", f"(int64_t){p0}[0]"),
                     Decl("const int64_t", "ls_pz", f"(int64_t){p0}[1]"))
            count = "(ls_pz - ls_pb)"
        self._par_rows_team(body, W, count)
        self._par_rows_region(body, walker, W)
        self._par_rows_gather(body, walker, W)

    def _par_rows_team(self, body, W, count):
        """Before the region: the team (one thread for a result larger than the kept buffers),
        the chunks, the chunk table (``ls_ck``: W slots a chunk, then three a thread: its
        count and its two buffers' capacities) and each thread's buffers (``ls_tp``)."""
        it, vt = self.oit, self.oct
        work = self.work()
        if self.spec.mode == "append":
            work = f"({work}) * {APPEND_WORK}"
        # a result larger than the kept buffers stays on one thread: its threads' buffers would
        # be fresh pages every call, a second copy of it (see KEEP)
        big = f"(double)ocap * (double)(sizeof({it}) + sizeof({vt})) > (double)LS_KEEP_MAX"
        team_size(body, self.abi, f"({big}) ? -1.0 : ({work})")
        body.add(Decl("const int64_t", "ls_pch", omp_chunk("ls_nt", count)),
                 Decl("const int64_t", "ls_nch", f"({count} + ls_pch - 1) / ls_pch"),
                 Decl("const int64_t", "ls_tcap", "ls_nt > 1 ? ocap / ls_nt + 16 : ocap"),
                 "ls_tp = (void **)calloc((size_t)2 * ls_nt, sizeof(void *));",
                 f"ls_ck = (int64_t *)malloc(((size_t){W} * ls_nch + (size_t)3 * ls_nt + 1) * sizeof(int64_t));",
                 "if (!ls_tp || !ls_ck) goto ls_fail;",
                 Decl("int", "ls_bad", "0"), Decl("const int", "ls_own", "ls_nt > 1 && ls_keep_take()"))
        # (a thread's counts start as its buffers' sizes: a thread the runtime did not start, as
        # without OpenMP, leaves them so, and they are what goes back to the pool)
        own = Block().add(For("t", "0", "ls_nt", Block().add(
            f"ls_tp[2 * t] = ls_keep_get(ls_own, 2 * t, (size_t)ls_tcap * sizeof({it}));",
            f"ls_tp[2 * t + 1] = ls_keep_get(ls_own, 2 * t + 1, (size_t)ls_tcap * sizeof({vt}));",
            "if (!ls_tp[2 * t] || !ls_tp[2 * t + 1]) ls_bad = 1;",
            f"ls_ck[{W} * ls_nch + 3 * t] = 0;", f"ls_ck[{W} * ls_nch + 3 * t + 1] = ls_tcap;",
            f"ls_ck[{W} * ls_nch + 3 * t + 2] = ls_tcap;")))
        body.add(If("ls_nt > 1", own, Block().add("ls_tp[0] = (void *)oc1;", "ls_tp[1] = (void *)ov;")))

    def _par_rows_region(self, body, walker, W):
        """The region: each thread's own result arrays (and workspace) under the names the
        loops append with, the chunks' loops (``emit_versions`` over this chunk's rows or
        positions), and each chunk's place in its thread's buffers recorded in the table."""
        it, vt, n = self.oit, self.oct, self.ext[self.order[0]]
        region = Block()
        body.add(Line("#pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)"), region)
        # the thread's own result arrays and counts, under the names the loops append with
        region.add(Decl("const int64_t", "tid", "(int64_t)omp_get_thread_num()"),
                   Decl("int64_t", "occ1", "ls_tcap"), Decl("int64_t", "ovc", "ls_tcap"),
                   Decl("int64_t", "on1", "0"),
                   Decl(f"{it} *", "oc1", f"({it} *)ls_tp[2 * tid]"),
                   Decl(f"{vt} *", "ov", f"({vt} *)ls_tp[2 * tid + 1]"))
        if self.ws:
            region.add(Decl("ls_ws", "ws", "{0}"), Decl("ls_ism", "ism", "{0}"),
                       Decl("int", "ls_ok", "!ls_bad"), f"if (ls_ok && {self._ws_init()}) ls_ok = 0;")
            if self.ws_flag:
                region.add(f"if (ls_ok && ls_ws_use(&ws, {self.ws_flag})) ls_ok = 0;")
            region.add(If("!ls_ok", Block().add(Line("#pragma omp atomic write"), "ls_bad = 1;")))
        chunk = Block()
        region.add(Line("#pragma omp for schedule(dynamic, 1)"), For("ls_k", "0", "ls_nch", chunk))
        chunk.add(Decl("int", "ls_b"), Line("#pragma omp atomic read"), "ls_b = ls_bad;",
                  "if (ls_b) continue;")
        if walker is None:
            chunk.add(Decl("const int64_t", "ls_r0", "ls_k * ls_pch"),
                      Decl("const int64_t", "ls_r1", f"ls_r0 + ls_pch < {n} ? ls_r0 + ls_pch : {n}"))
        chunk.add(Decl("const int64_t", "ls_s0", "on1"), Line("#define ls_fail ls_tfail"))
        rows = Block()
        chunk.add(rows)
        if walker is None:
            self.row_span = ("ls_r0", "ls_r1")
        else:
            self.pos_chunk = ("ls_k", "ls_nch", W)
        self.span_uses = 0
        self.emit_versions(rows)
        self.row_span = self.pos_chunk = None
        if not self.span_uses:  # (every chunk would run every row: never emitted so)
            raise NoShare(self.stmt)
        chunk.add(Line("#undef ls_fail"),
                  f"ls_ck[{W} * ls_k] = ls_s0;", f"ls_ck[{W} * ls_k + 1] = on1 - ls_s0;", f"ls_ck[{W} * ls_k + 2] = tid;",
                  "continue;", "ls_tfail: ;", Line("#pragma omp atomic write"), "ls_bad = 1;")
        region.add("ls_tp[2 * tid] = (void *)oc1;", "ls_tp[2 * tid + 1] = (void *)ov;",
                   f"ls_ck[{W} * ls_nch + 3 * tid] = on1;", f"ls_ck[{W} * ls_nch + 3 * tid + 1] = occ1;",
                   f"ls_ck[{W} * ls_nch + 3 * tid + 2] = ovc;")
        if self.ws:
            region.add(workspace.FREE)

    def _par_rows_gather(self, body, walker, W):
        """After the region: a team of one's buffers become the kernel's again; a team's
        chunks are placed in row order (each chunk's row ends shifted by where it lands) and
        copied, on the team, into the kernel's buffers grown to the total; then the threads'
        buffers go back to the pool (none kept after a failure)."""
        it, vt, n = self.oit, self.oct, self.ext[self.order[0]]
        one = Block().add(f"oc1 = ({it} *)ls_tp[0];", f"ov = ({vt} *)ls_tp[1];", "ls_tp[0] = ls_tp[1] = NULL;",
                          f"on1 = ls_ck[{W} * ls_nch];", f"occ1 = ls_ck[{W} * ls_nch + 1];",
                          f"ovc = ls_ck[{W} * ls_nch + 2];")
        # a team: where each chunk lands, then the copies (on the team) into the kernel's buffers
        lo_r, hi_r = ("k * ls_pch", "r1_") if walker is None else (f"ls_ck[{W} * k + 4]", f"ls_ck[{W} * k + 5]")
        copy = Block().add(Decl("const int64_t", "s_", f"ls_ck[{W} * k]"), Decl("const int64_t", "c_", f"ls_ck[{W} * k + 1]"),
                           Decl("const int64_t", "t_", f"ls_ck[{W} * k + 2]"), Decl("const int64_t", "b_", f"ls_ck[{W} * k + 3]"),
                           f"memcpy(oc1 + b_, ({it} *)ls_tp[2 * t_] + s_, (size_t)c_ * sizeof({it}));",
                           f"memcpy(ov + b_, ({vt} *)ls_tp[2 * t_ + 1] + s_, (size_t)c_ * sizeof({vt}));",
                           *([Decl("const int64_t", "r1_", f"(k + 1) * ls_pch < {n} ? (k + 1) * ls_pch : {n}")]
                             if walker is None else []),
                           If("b_ != s_", Block().add(For("r", lo_r, hi_r, Block().add(
                               f"op1[r + 1] += ({it})(b_ - s_);")))))
        # (grown here without LS_GROW's jump: the threads' buffers and the pool are handed back
        # below first)
        grow = [If(f"ls_tot > {cap}", Block().add(
                    Decl(f"{t} *", f"{g}_", f"({t} *)ls_realloc({buf}, (size_t)ls_tot * sizeof({t}))"),
                    If(f"{g}_", Block().add(f"{buf} = {g}_;", f"{cap} = ls_tot;"), Block().add("ls_bad = 1;"))))
                for buf, cap, t, g in (("oc1", "occ1", it, "gc"), ("ov", "ovc", vt, "gv"))]
        team = Block().add(
            Decl("int64_t", "ls_tot", "0"),
            For("k", "0", "ls_nch", Block().add(f"ls_ck[{W} * k + 3] = ls_tot;", f"ls_tot += ls_ck[{W} * k + 1];")),
            *grow,
            If("!ls_bad", Block().add(
                Line("#pragma omp parallel for schedule(dynamic, 1) num_threads((int)ls_nt) if(ls_nt > 1)"),
                For("k", "0", "ls_nch", copy), "on1 = ls_tot;")))
        body.add(If("ls_nt == 1", one, Block().add(If("!ls_bad", team))))
        # (on a team of one, its buffers are the kernel's again: nothing left to free)
        # (after a failure nothing is kept: the memory goes back at once)
        back = Block().add(f"ls_keep_put(ls_own && !ls_bad, 2 * t, ls_tp[2 * t], (size_t)ls_ck[{W} * ls_nch + 3 * t + 1] * sizeof({it}));",
                           f"ls_keep_put(ls_own && !ls_bad, 2 * t + 1, ls_tp[2 * t + 1], (size_t)ls_ck[{W} * ls_nch + 3 * t + 2] * sizeof({vt}));")
        body.add(For("t", "0", "ls_nt", back), "if (ls_own) ls_keep_give();",
                 "free(ls_ck); free(ls_tp); ls_ck = NULL; ls_tp = NULL;",
                 "if (ls_bad) goto ls_fail;")

    def _private(self):
        """A dense result summed over its outermost loop, which is a reduction (``A.T @ x``:
        ``o[j] += A[i, j] * x[i]`` over the rows i of A; ``A.sum(axis=0)``; ``A.sum()``): no
        row of the loop owns a part of the result, so ``parallel`` keeps it on one thread. It
        can run on threads each summing into a private copy of the result (paper 001's
        "temporary" race strategy), the copies added after (``emit_private``). Sums, and a
        max, min or product over a result with indices (mode "dense-count": the copies carry
        their entry counts, added, so that the implicit zeros are folded in after as before).
        Returns ``("rows", positions or None)``: the outermost loop is a range (row ranges of
        about equal entries when a CSR-like operand's positions lie under it); ``("flat",
        access)``: a scalar's flat walk of one operand's positions (``emit_flat``); or None.
        Not under a schedule (its loops are the schedule's)."""
        mode = self.spec.mode
        if (self.spec.loops is not None or not self.shares or not self.order
                or self.order[0] not in self.red):
            return None
        if self.stmt.reduce == "sum":
            if not (mode == "dense-inter" or (mode == "dense-acc" and not self.outs)):
                return None
        elif mode != "dense-count" or not self.outs:
            # (a max, min or product over the outer loop counts its entries per point: the
            # copies hold counts too, added, and the implicit zeros are folded in after)
            return None
        if not self.outs:
            flat = self._sole_walk()
            if flat is not None:
                return ("flat", flat)
        if len(self.order) < 2:
            return None  # (a lone dense range is emit_dense_reduction's, which takes no span)
        weights = self._outer_range()
        if weights is None:  # one operand's stored coordinates: a share of its positions each
            return ("pos", None) if self._outer_walker() is not None else None
        return ("rows", weights or None)

    def _outer_walker(self):
        """The one access that walks a compressed level (COO's first, DCSR's rows) in the
        outermost loop, when it is the only one reading that loop's index at its first level;
        else None."""
        v = self.order[0]
        walkers = [a for a in self.accs if not a.spec.dense and a.lvars and a.lvars[0] == v]
        if len(walkers) != 1 or walkers[0].spec.format.levels[0].kind != "compressed":
            return None
        return walkers[0]

    def emit_private(self, body):
        """The loops of a ``_private`` kernel on the team: thread t > 0 sums into its own
        zeroed copy of the result (the loops' ``o``, shadowed), thread 0 into the result
        itself; each takes a static share of the outermost loop (rows of about equal stored
        entries, or an equal share of the flat walk's positions), then, after a barrier, each
        adds the copies into its share of the result, in thread order. The values are the same
        from call to call at one thread count; they differ from one thread's in rounding
        only, as NumPy's pairwise sums differ from a loop's. Copies are kept by the kernel
        between calls (``KEEP``: allocated each call they were fresh pages each time). The
        team runs when the result is small against the work (the copies are zeroed and added:
        ``PRIVATE_RATIO``), its copies fit the kept buffers' limit and its strides pack it (a
        strided view stays on one thread); copies that cannot be allocated leave it on one
        (``private_team``)."""
        kind, arg = self.private
        T = self.oct
        packed = self._result_span(body)
        work = self.work()
        if kind == "flat":
            work = f"({work}) * {FLAT_WORK}"
        private_team(body, self.abi, T, work, packed, self.spec.mode == "dense-count")
        region = Block().add(*team_ids(self.prelude_extra, KEEP))
        body.add(Line("#pragma omp parallel num_threads((int)ls_pt) if(ls_pt > 1)"), region)
        red, counts = self.stmt.reduce, self.spec.mode == "dense-count"
        ident = None if red == "sum" else C.literal(ops.reduce_identity(red, self.odt), self.odt)
        own = Block().add(*private_copy(T, ident, counts))
        region.add(own)
        if kind == "pos":
            self.pos_share = True  # (emit_single_driver shares out the walk's positions)
        elif kind == "flat":
            a = arg
            count = level_count(a.spec.format, a.slot, len(a.lvars) - 1)
            own.add(Decl("const int64_t", "ls_f0", f"({count}) * tid / ls_tn"),
                    Decl("const int64_t", "ls_f1", f"({count}) * (tid + 1) / ls_tn"))
            self.flat_span = ("ls_f0", "ls_f1")
        else:
            n = self.ext[self.order[0]]
            if arg is not None:
                own.add(*self._row_range(arg, n, "ls_tn"))
            else:
                own.add(Decl("const int64_t", "ls_r0", f"{n} * tid / ls_tn"),
                        Decl("const int64_t", "ls_r1", f"{n} * (tid + 1) / ls_tn"))
            self.row_span = ("ls_r0", "ls_r1")
        self.span_uses = 0
        self.emit_versions(own)
        self.row_span = self.flat_span = None
        self.pos_share = False
        if not self.span_uses:  # (every thread would run the whole loop: never emitted so)
            raise NoShare(self.stmt)
        region.add(add_copies(T, self.odt, red, counts))
        body.add(*release_copies(T, counts))

    @staticmethod
    def _row_range(p, n, nt="ls_nt"):
        """Declarations of ``ls_r0``/``ls_r1``, thread ``tid``'s rows of an operand with row
        positions ``p`` over ``n`` rows: ranges of about equal stored entries (a power-law
        graph's rows split by count put most entries on one thread), found by binary search, the
        same in every pass that uses them."""
        def first(share):  # the first row whose entries start at or past the share's target
            return (f"({{ const int64_t g_ = (int64_t){p}[0] + ((int64_t){p}[{n}] - (int64_t){p}[0]) "
                    f"* ({share}) / {nt}; int64_t l_ = 0, u_ = {n}; while (l_ < u_) {{ "
                    f"const int64_t m_ = (l_ + u_) / 2; if ((int64_t){p}[m_] < g_) l_ = m_ + 1; "
                    f"else u_ = m_; }} l_; }})")
        return [Decl("const int64_t", "ls_r0", first("tid")),
                Decl("const int64_t", "ls_r1", f"(tid + 1 == {nt}) ? {n} : {first('tid + 1')}")]

    def parallel(self, depth, v, followers, blk, count, forced=False, chunk=None, span=False):
        """OpenMP on the outermost loop when it runs over a result index of a dense result
        (each iteration writes its own elements; reductions stay inside an iteration), is a
        range or walks a unique level, and no iterator follows it (a follower's position
        carries from one iteration to the next). Chunks of rows (``omp_chunk``: rows of skewed
        graphs differ by orders of magnitude), each thread its own run of them first
        (``owned_chunks``) where the caller's loop is a range (``span``: it takes its bounds
        from ``take_span``), else handed out by OpenMP; the thread count comes from
        ``ls.set_num_threads`` at each call. ``count``: the loop's trip count. Returns the block
        the loop goes in. ``forced``: a schedule's parallel loop (checked in compiler/plan/loops.py),
        in dynamic chunks of ``chunk`` iterations; under a schedule no other loop is parallel."""
        if self.spec.loops is not None and not forced:
            return blk
        if (self.par_rows or self.private is not None) and depth == 0:
            # (emit_par_rows, emit_private: the region is open around the loop)
            self.par_open = True
            return blk
        # mode "map" writes each stored entry's value at its own position, whatever the loop:
        # its row loop, or the flat walk of the positions (``flat_map``); the zeros are summed
        mapped = self.spec.mode == "map" and not self.count
        # mode "mask" adds each row's sums at that row's own positions of the copied structure
        masked = self.spec.mode == "mask"
        if not forced and ((depth and not (mapped and self.flat_map)) or v not in self.outs or followers
                           or (self.spec.mode not in ("dense", "dense-inter", "dense-acc")
                               and not mapped and not masked)):
            return blk
        if forced and self.spec.loops.parallel[1] == "temporary" and v in self.red:
            return self.private_loop(blk, count, chunk)
        nt = self.abi.int(("threads",))
        if not forced:  # (a schedule's parallel loop runs on the threads asked for)
            nt = team_size(blk, self.abi, self.work())
        blk.add(Decl("const int64_t", "ls_chunk", chunk or omp_chunk(nt, count)))
        self.par_open = True
        red = " reduction(+:nz)" if mapped else ""
        if not forced and span and not (mapped or masked):
            return self.owned_chunks(blk, nt, count)
        # (a walk, or a schedule's loop:) chunks handed out as threads free up; in the loop
        # nests of a segment sum's variants (``emit_flag_versions``) a walk's chunks go round
        # the team in a fixed order instead (``owned_chunks``: why)
        kind = "static" if self.static_rows and not forced else "dynamic"
        blk.add(Line(f"#pragma omp parallel for schedule({kind}, ls_chunk) num_threads((int){nt}) "
                     f"if({nt} > 1){red}"))
        return blk

    def owned_chunks(self, blk, nt, count):
        """The row loop's chunks in ``nt`` runs of consecutive chunks, one a thread: each takes
        its own run's chunks first, in order, then helps the others with what is left of
        theirs (a counter per run, taken with an atomic add). Each thread then runs the same
        rows every call, so its branch predictor learns their loop exits (SpMV on vt2010, two
        threads, split loop: 98 us with chunks handed out as threads free up, 38 us with these),
        and a thread that starts late (woken from a passive wait) or runs slow (skewed rows) is
        covered by the others, which a fixed split of the rows cannot do (two threads with a
        passive wait: ca-CondMat 59 us against 91 for chunks round the team in a fixed order;
        docs/design.md, "Loop exits the predictor learns"); short kernels gain too (SpMM with
        128 columns on cryg2500, passive wait: 0.054-0.061 ms against 0.066-0.067 with
        OpenMP's dynamic chunks). Returns the block the row loop goes in; its bounds are
        ``take_span``'s."""
        if THREAD_NUM not in self.prelude_extra:
            self.prelude_extra.append(THREAD_NUM)
        blk.add(*owned_runs_setup(nt, count),
                Line(f"#pragma omp parallel num_threads((int){nt}) if({nt} > 1)"))
        region, chunk = owned_runs(nt, count)
        blk.add(region)
        self.span = ("ls_r0", "ls_r1")
        return chunk

    def take_span(self):
        """The bounds ``parallel`` set for the loop it returned a block for (``owned_chunks``),
        once, or None."""
        span, self.span = self.span, None
        return span

    def private_loop(self, blk, count, chunk):
        """A schedule's parallel loop over a reduction variable with ``races="temporary"``
        (checked in compiler/plan/loops.py: a dense result with indices, summed, mode dense-inter):
        the team (the threads asked for, one if the copies would pass the kept buffers' limit
        or a strided result) opens here, each thread sums into a private copy of the result
        (``private_copy``) over the chunks it takes (``omp for``, dynamic: the schedule's
        chunks), and the copies are added after (``add_copies``). Returns the block the loop
        goes in."""
        T = self.oct
        packed = self._result_span(blk)
        private_team(blk, self.abi, T, "1e300", packed)
        blk.add(Decl("const int64_t", "ls_chunk", chunk or omp_chunk("ls_pt", count)),
                Line("#pragma omp parallel num_threads((int)ls_pt) if(ls_pt > 1)"))
        own = Block().add(*private_copy(T))
        region = Block().add(*team_ids(self.prelude_extra, KEEP), own, add_copies(T, self.odt))
        blk.add(region, *release_copies(T))
        own.add(Line("#pragma omp for schedule(dynamic, ls_chunk)"))
        self.par_open = True
        return own

    def _result_span(self, body):
        """Declares ``ls_osz``, the dense result's span in its buffer; returns the C condition
        that its strides pack it (a strided view is not copied: it stays on one thread)."""
        if not self.outs:
            body.add(Decl("const int64_t", "ls_osz", "1"))
            return "1"
        exts = [self.ext[v] for v in self.outs]
        span = "1 + " + " + ".join(f"({e} - 1) * os{m}" for m, e in enumerate(exts))
        body.add(Decl("const int64_t", "ls_ofull", " * ".join(f"({e})" for e in exts)),
                 Decl("const int64_t", "ls_osz", f"ls_ofull > 0 ? {span} : 0"))
        return "ls_osz == ls_ofull"

    def work(self):
        """This kernel's work estimate (``work_estimate``)."""
        inputs = self.spec.inputs

        def spec_of(a):
            sp = inputs[a.operand]
            return None if sp.dense or not sp.ndim else (a.operand, sp)
        return work_estimate([(self.stmt, spec_of)], self.ext, self.abi)

    def _coo_team(self, v):
        """A dense result whose outermost loop walks a non-unique compressed level (COO's rows:
        ``A @ x``, TTV on a COO tensor) over one of its own indices: each stretch of equal
        coordinates writes its own points of the result, so the walk may run on threads, each
        a share of the positions cut at a change of coordinate (``share_positions``)."""
        return (self.shares and self.spec.loops is None and not self.par_open and self.private is None
                and self.spec.mode in ("dense", "dense-acc", "dense-inter") and v in self.outs
                and not self.in_acc)

    def share_positions(self, blk, u, crd, unique):
        """A block inside ``blk`` where the outer walk's bounds ``b{u}``/``z{u}`` are this
        thread's share of them: an equal part of the positions, moved on (non-unique levels)
        to where the coordinate changes, so that no stretch of one coordinate is split. In an
        ``emit_private`` region the team is open; otherwise one is opened here (``_coo_team``),
        sized by the work estimate."""
        share, parts = "tid", "ls_tn"
        if self.pos_chunk is not None:  # (emit_par_rows: this chunk's share of the positions)
            share, parts, W = self.pos_chunk
        elif self.private is None:
            team_size(blk, self.abi, self.work())
            region = Block().add(*team_ids(self.prelude_extra))
            blk.add(Line("#pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)"), region)
            blk = region
            self.par_open = True
        self.span_uses += 1
        b, z = f"b{u}", f"z{u}"

        def cut(name, k):
            blk.add(Decl("int64_t", name, f"{b} + ({z} - {b}) * ({k}) / {parts}"))
            if not unique:
                blk.add(f"while ({name} > {b} && {name} < {z} && {crd}[{name}] == {crd}[{name} - 1]) {name}++;")
        cut(f"ls_lo{u}", share)
        cut(f"ls_hi{u}", f"{share} + 1")
        if self.pos_chunk is not None:
            # the rows the chunk spans, for the shift of their ends once the chunks are placed
            # (rows it does not visit keep 0, which the shift leaves below the row before them:
            # finish_output's pass over the ends lifts them to it)
            lo, hi = f"ls_lo{u}", f"ls_hi{u}"
            blk.add(f"ls_ck[{W} * {share} + 4] = {lo} < {hi} ? (int64_t){crd}[{lo}] : 0;",
                    f"ls_ck[{W} * {share} + 5] = {lo} < {hi} ? (int64_t){crd}[{hi} - 1] + 1 : 0;")
        inner = Block().add(Decl("int64_t", b, f"ls_lo{u}"), Decl("int64_t", z, f"ls_hi{u}"))
        blk.add(inner)
        return inner
