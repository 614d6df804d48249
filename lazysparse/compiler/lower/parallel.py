"""The single-operation lowerer's parallel loops (``ParallelMixin``): OpenMP on the outermost
loop of a dense result (``parallel``, each thread its own run of row chunks: ``owned_chunks``), a
sparse result's rows appended on threads to buffers of their own and copied into place after
(``emit_par_rows``), a dense result summed over its outermost loop into private copies
(``emit_private``, ``private_loop``), and a walk of stored coordinates shared out by positions
(``share_positions``). ``NoShare`` sends ``lower`` back to emit the kernel on one thread.
"""
from __future__ import annotations

from dataclasses import replace

from lazysparse.ir import ops
from lazysparse.compiler.lower import workspace
from lazysparse.compiler.lower.locate import THREAD_NUM
from lazysparse.compiler.lower.operands import level_count_expr
from lazysparse.compiler.lower.teams import (APPEND_WORK, DOUBLE, FLAT_WORK, KEEP, add_copies, keep_call,
    chunk_size, owned_runs, owned_runs_setup, par, private_copy, private_team, release_copies, sum_of,
    team_ids, team_size, work_estimate, x)
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block

VOID_P = T.Ptr(T.Opaque("void"))


class _LoopSlot:
    """Where ``Lowerer.parallel`` puts its caller's loop (``add``, once): a loop on threads."""

    def __init__(self, blk, wrap):
        self.blk, self.wrap = blk, wrap

    def add(self, loop):
        self.blk.add(self.wrap(loop))
        return self.blk


def _v(name):
    return E.Var(name)


def _i(n):
    return E.Int(n)


def _add(a, b):
    return E.Binary("+", x(a), x(b))


def _mul(a, b):
    return E.Binary("*", x(a), x(b))


def _at(name, *terms):
    """``name[t0 + t1 + ...]``."""
    return E.Load(_v(name), sum_of([x(t) for t in terms]))


def _const(name, init, t=T.INDEX):
    return S.Declare(name, t, x(init), const=True)


def _oneline(cond, stmt):
    return S.If(cond, stmt, oneline=True)


def _team(nt):
    """A parallel region's team: ``nt`` threads, in parallel only when more than one."""
    nt = x(nt)
    return dict(threads=nt, when=E.Binary(">", nt, _i(1)))


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
                and self.kd == 1 and not self.ocoo and self.olv[1].has_pos
                and self.order[0] == self.ovars[0]
                and (self._outer_range() is not None or self._outer_walker() is not None)
                and (mode == "append" or (self.ws and self.ws_h == 1)))

    def in_region(self, h):
        """Whether code hoisted to loop depth ``h`` (``hoist_at``) runs inside an OpenMP region,
        so that an array it fills must be one per thread: any depth under an open parallel loop,
        and depth 0 too where the region is opened around the outermost loop (``emit_par_rows``,
        ``emit_private``: each chunk runs the whole loop nest, its hoisted code included)."""
        return self.par_open and (h > 0 or self.par_rows or self.private is not None)

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
            if levels[0].is_sparse:
                return None
            if not weights and len(levels) > 1 and levels[1].has_pos:
                weights = f"p{a.slot}_1"
        return weights

    def emit_par_rows(self, body):
        """The row loop of a ``_par_rows`` result in chunks of rows (``chunk_size``) handed out
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
        count = x(self.ext[self.order[0]])
        if walker is not None:
            p0 = _v(f"p{walker.slot}_0")
            body.add(_const("ls_pb", E.Cast(T.INDEX, E.Load(p0, _i(0)))),
                     _const("ls_pz", E.Cast(T.INDEX, E.Load(p0, _i(1)))))
            count = E.Paren(E.Binary("-", _v("ls_pz"), _v("ls_pb")))
        self._par_rows_team(body, W, count)
        self._par_rows_region(body, walker, W)
        self._par_rows_gather(body, walker, W)

    def _par_rows_team(self, body, W, count):
        """Before the region: the team (one thread for a result larger than the kept buffers),
        the chunks, the chunk table (``ls_ck``: W slots a chunk, then three a thread: its
        count and its two buffers' capacities) and each thread's buffers (``ls_tp``)."""
        it, vt = self.idx_t, self.val_t
        work = self.work()
        if self.spec.mode == "append":
            work = E.Binary("*", E.Paren(work), E.Lit(APPEND_WORK, "float64"))
        # a result larger than the kept buffers stays on one thread: its threads' buffers would
        # be fresh pages every call, a second copy of it (see KEEP)
        big = E.Binary(">", E.Binary("*", E.Cast(DOUBLE, _v("ocap")),
                                     E.Cast(DOUBLE, E.Paren(E.Binary("+", E.SizeOf(it), E.SizeOf(vt))))),
                       E.Cast(DOUBLE, _v("LS_KEEP_MAX")))
        team_size(body, self.abi, E.Select(E.Paren(big), E.Lit(-1.0, "float64"), E.Paren(work)))
        nt, pch, nch, tp, ck = _v("ls_nt"), _v("ls_pch"), _v("ls_nch"), _v("ls_tp"), _v("ls_ck")
        body.add(_const("ls_pch", chunk_size("ls_nt", count)),
                 _const("ls_nch", E.Binary("/", E.Paren(E.Binary("-", E.Binary("+", count, pch), _i(1))), pch)),
                 _const("ls_tcap", E.Select(E.Binary(">", nt, _i(1)), _add(E.Binary("/", _v("ocap"), nt), 16), _v("ocap"))),
                 S.Assign(tp, E.Alloc(VOID_P, _mul(E.Cast(T.SIZE, _i(2)), nt), zero=True, huge=False)),
                 S.Assign(ck, E.Alloc(T.INDEX, _add(_add(_mul(E.Cast(T.SIZE, _i(W)), nch), _mul(E.Cast(T.SIZE, _i(3)), nt)), 1),
                                      huge=False, sized=True)),
                 _oneline(E.Binary("||", E.Unary("!", tp), E.Unary("!", ck)), S.Fail()),
                 S.Declare("ls_bad", T.INT, _i(0)),
                 _const("ls_own", E.Binary("&&", E.Binary(">", nt, _i(1)), keep_call("keep_take")), T.INT))
        # (a thread's counts start as its buffers' sizes: a thread the runtime did not start, as
        # without OpenMP, leaves them so, and they are what goes back to the pool)
        t, tcap = _v("t"), _v("ls_tcap")
        two_t = _mul(2, t)
        own = Block().add(S.For("t", _i(0), nt, Block().add(
            S.Assign(E.Load(tp, two_t), keep_call("keep_get", "ls_own", two_t, _mul(E.Cast(T.SIZE, tcap), E.SizeOf(it)))),
            S.Assign(E.Load(tp, _add(two_t, 1)),
                     keep_call("keep_get", "ls_own", _add(two_t, 1), _mul(E.Cast(T.SIZE, tcap), E.SizeOf(vt)))),
            _oneline(E.Binary("||", E.Unary("!", E.Load(tp, two_t)), E.Unary("!", E.Load(tp, _add(two_t, 1)))),
                     S.Assign(_v("ls_bad"), _i(1))),
            S.Assign(_at("ls_ck", _mul(W, nch), _mul(3, t)), _i(0)),
            S.Assign(_at("ls_ck", _mul(W, nch), _mul(3, t), 1), tcap),
            S.Assign(_at("ls_ck", _mul(W, nch), _mul(3, t), 2), tcap))))
        body.add(S.If(E.Binary(">", nt, _i(1)), own, Block().add(S.Assign(E.Load(tp, _i(0)), E.Cast(VOID_P, _v("oc1"))),
                                                                 S.Assign(E.Load(tp, _i(1)), E.Cast(VOID_P, _v("ov"))))))

    def _par_rows_region(self, body, walker, W):
        """The region: each thread's own result arrays (and workspace) under the names the
        loops append with, the chunks' loops (``emit_versions`` over this chunk's rows or
        positions), and each chunk's place in its thread's buffers recorded in the table."""
        it, vt, n = self.idx_t, self.val_t, x(self.ext[self.order[0]])
        tid, tp, nch, bad = _v("tid"), _v("ls_tp"), _v("ls_nch"), _v("ls_bad")
        region = Block()
        body.add(S.Parallel(region, **_team("ls_nt")))
        # the thread's own result arrays and counts, under the names the loops append with
        region.add(_const("tid", E.Cast(T.INDEX, E.ThreadNum())),
                   S.Declare("occ1", T.INDEX, _v("ls_tcap")), S.Declare("ovc", T.INDEX, _v("ls_tcap")),
                   S.Declare("on1", T.INDEX, _i(0)),
                   S.Declare("oc1", T.Ptr(it), E.Cast(T.Ptr(it), E.Load(tp, _mul(2, tid)))),
                   S.Declare("ov", T.Ptr(vt), E.Cast(T.Ptr(vt), E.Load(tp, _add(_mul(2, tid), 1)))))
        if self.ws:
            ok = _v("ls_ok")
            region.add(*self._ws_declare(),
                       S.Declare("ls_ok", T.INT, E.Unary("!", bad)),
                       _oneline(E.Binary("&&", ok, self._ws_init()), S.Assign(ok, _i(0))))
            if self.ws_flag:
                region.add(_oneline(E.Binary("&&", ok, self._ws_use()), S.Assign(ok, _i(0))))
            region.add(S.If(E.Unary("!", ok), Block().add(S.Atomic(S.Assign(bad, _i(1)), "write"))))
        chunk = Block()
        region.add(S.For("ls_k", _i(0), nch, chunk, worksharing=S.Worksharing(S.Schedule("dynamic", _i(1)))))
        k, pch = _v("ls_k"), _v("ls_pch")
        chunk.add(S.Declare("ls_b", T.INT), S.Atomic(S.Assign(_v("ls_b"), bad), "read"),
                  _oneline(_v("ls_b"), S.Continue()))
        if walker is None:
            end = _add("ls_r0", pch)
            chunk.add(_const("ls_r0", _mul(k, pch)),
                      _const("ls_r1", E.Select(E.Binary("<", end, n), end, n)))
        # (a failure inside the region goes to the chunk's end: the kernel's failure path is the
        # region's caller's)
        rows = Block()
        chunk.add(_const("ls_s0", "on1"))
        if walker is None:
            self.row_span = ("ls_r0", "ls_r1")
        else:
            self.pos_chunk = ("ls_k", "ls_nch", W)
        self.span_uses = 0
        self.emit_versions(rows)
        self.row_span = self.pos_chunk = None
        if not self.span_uses:  # (every chunk would run every row: never emitted so)
            raise NoShare(self.stmt)
        on1, s0 = _v("on1"), _v("ls_s0")
        placed = Block().add(
            S.Assign(_at("ls_ck", _mul(W, k)), s0), S.Assign(_at("ls_ck", _mul(W, k), 1), E.Binary("-", on1, s0)),
            S.Assign(_at("ls_ck", _mul(W, k), 2), tid), S.Continue())
        chunk.add(S.Recover(Block().add(rows), placed, Block().add(S.Atomic(S.Assign(bad, _i(1)), "write"))))
        region.add(S.Assign(E.Load(tp, _mul(2, tid)), E.Cast(VOID_P, _v("oc1"))),
                   S.Assign(E.Load(tp, _add(_mul(2, tid), 1)), E.Cast(VOID_P, _v("ov"))),
                   S.Assign(_at("ls_ck", _mul(W, nch), _mul(3, tid)), on1),
                   S.Assign(_at("ls_ck", _mul(W, nch), _mul(3, tid), 1), _v("occ1")),
                   S.Assign(_at("ls_ck", _mul(W, nch), _mul(3, tid), 2), _v("ovc")))
        if self.ws:
            region.add(workspace.FREE)

    def _par_rows_gather(self, body, walker, W):
        """After the region: a team of one's buffers become the kernel's again; a team's
        chunks are placed in row order (each chunk's row ends shifted by where it lands) and
        copied, on the team, into the kernel's buffers grown to the total; then the threads'
        buffers go back to the pool (none kept after a failure)."""
        it, vt, n = self.idx_t, self.val_t, x(self.ext[self.order[0]])
        tp, nch, pch, bad, tot = _v("ls_tp"), _v("ls_nch"), _v("ls_pch"), _v("ls_bad"), _v("ls_tot")
        k, t, t_, s_, b_ = _v("k"), _v("t"), _v("t_"), _v("s_"), _v("b_")
        one = Block().add(S.Assign(_v("oc1"), E.Cast(T.Ptr(it), E.Load(tp, _i(0)))),
                          S.Assign(_v("ov"), E.Cast(T.Ptr(vt), E.Load(tp, _i(1)))),
                          S.Assign((E.Load(tp, _i(0)), E.Load(tp, _i(1))), E.Null()),
                          S.Assign(_v("on1"), _at("ls_ck", _mul(W, nch))),
                          S.Assign(_v("occ1"), _at("ls_ck", _mul(W, nch), 1)),
                          S.Assign(_v("ovc"), _at("ls_ck", _mul(W, nch), 2)))
        # a team: where each chunk lands, then the copies (on the team) into the kernel's buffers
        if walker is None:
            lo_r, hi_r = _mul(k, pch), _v("r1_")
        else:
            lo_r, hi_r = _at("ls_ck", _mul(W, k), 4), _at("ls_ck", _mul(W, k), 5)
        k1 = _mul(E.Paren(_add(k, 1)), pch)
        copy = Block().add(_const("s_", _at("ls_ck", _mul(W, k))), _const("c_", _at("ls_ck", _mul(W, k), 1)),
                           _const("t_", _at("ls_ck", _mul(W, k), 2)), _const("b_", _at("ls_ck", _mul(W, k), 3)),
                           S.Memcpy(_add("oc1", b_), _add(E.Cast(T.Ptr(it), E.Load(tp, _mul(2, t_))), s_), _v("c_"), it),
                           S.Memcpy(_add("ov", b_), _add(E.Cast(T.Ptr(vt), E.Load(tp, _add(_mul(2, t_), 1))), s_),
                                    _v("c_"), vt),
                           *([_const("r1_", E.Select(E.Binary("<", k1, n), k1, n))] if walker is None else []),
                           S.If(E.Binary("!=", b_, s_), Block().add(S.For("r", lo_r, hi_r, Block().add(
                               S.Update(E.Load(_v("op1"), _add("r", 1)), "+",
                                        E.Cast(it, E.Paren(E.Binary("-", b_, s_)))))))))
        # (grown here without LS_GROW's jump: the threads' buffers and the pool are handed back
        # below first)
        grow = [S.If(E.Binary(">", tot, _v(cap)), Block().add(
                    S.Declare(f"{g}_", T.Ptr(t_ty), E.Cast(T.Ptr(t_ty), E.SupportCall(
                        "realloc", (_v(buf), _mul(E.Cast(T.SIZE, tot), E.SizeOf(t_ty)))))),
                    S.If(_v(f"{g}_"), Block().add(S.Assign(_v(buf), _v(f"{g}_")), S.Assign(_v(cap), tot)),
                         Block().add(S.Assign(bad, _i(1))))))
                for buf, cap, t_ty, g in (("oc1", "occ1", it, "gc"), ("ov", "ovc", vt, "gv"))]
        team = Block().add(
            S.Declare("ls_tot", T.INDEX, _i(0)),
            S.For("k", _i(0), nch, Block().add(S.Assign(_at("ls_ck", _mul(W, k), 3), tot),
                                              S.Update(tot, "+", _at("ls_ck", _mul(W, k), 1)))),
            *grow,
            S.If(E.Unary("!", bad), Block().add(
                S.ParallelFor(S.For("k", _i(0), nch, copy), S.Schedule("dynamic", _i(1)), **_team("ls_nt")),
                S.Assign(_v("on1"), tot))))
        body.add(S.If(E.Binary("==", _v("ls_nt"), _i(1)), one, Block().add(S.If(E.Unary("!", bad), team))))
        # (on a team of one, its buffers are the kernel's again: nothing left to free)
        # (after a failure nothing is kept: the memory goes back at once)
        keep = E.Binary("&&", _v("ls_own"), E.Unary("!", bad))
        two_t = _mul(2, t)
        back = Block().add(
            S.ExprStmt(keep_call("keep_put", keep, two_t, E.Load(tp, two_t),
                                 _mul(E.Cast(T.SIZE, _at("ls_ck", _mul(W, nch), _mul(3, t), 1)), E.SizeOf(it)))),
            S.ExprStmt(keep_call("keep_put", keep, _add(two_t, 1), E.Load(tp, _add(two_t, 1)),
                                 _mul(E.Cast(T.SIZE, _at("ls_ck", _mul(W, nch), _mul(3, t), 2)), E.SizeOf(vt)))))
        body.add(S.For("t", _i(0), _v("ls_nt"), back), _oneline(_v("ls_own"), S.ExprStmt(keep_call("keep_give"))),
                 S.Inline((S.Free(_v("ls_ck")), S.Free(tp), S.Assign(_v("ls_ck"), E.Null()), S.Assign(tp, E.Null()))),
                 _oneline(bad, S.Fail()))

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
        if len(walkers) != 1 or not walkers[0].spec.format.levels[0].has_pos:
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
        packed = self._result_span(body)
        work = self.work()
        if kind == "flat":
            work = E.Binary("*", E.Paren(work), E.Lit(FLAT_WORK, "float64"))
        counts = self.spec.mode == "dense-count"
        private_team(body, self.abi, self.val_t, work, packed, counts)
        region = Block().add(*team_ids(self.prelude_extra, KEEP))
        body.add(S.Parallel(region, **_team("ls_pt")))
        red = self.stmt.reduce
        ident = None if red == "sum" else E.Lit(ops.reduce_identity(red, self.odt), self.odt)
        own = Block().add(*private_copy(self.val_t, ident, counts))
        region.add(own)
        tid, tn = _v("tid"), _v("ls_tn")
        if kind == "pos":
            self.pos_share = True  # (emit_single_driver shares out the walk's positions)
        elif kind == "flat":
            a = arg
            count = par(level_count_expr(a.spec.format, a.slot, len(a.lvars) - 1))
            own.add(_const("ls_f0", E.Binary("/", _mul(count, tid), tn)),
                    _const("ls_f1", E.Binary("/", _mul(count, E.Paren(_add(tid, 1))), tn)))
            self.flat_span = ("ls_f0", "ls_f1")
        else:
            n = self.ext[self.order[0]]
            if arg is not None:
                own.add(*self._row_range(arg, n, "ls_tn"))
            else:
                own.add(_const("ls_r0", E.Binary("/", _mul(n, tid), tn)),
                        _const("ls_r1", E.Binary("/", _mul(n, E.Paren(_add(tid, 1))), tn)))
            self.row_span = ("ls_r0", "ls_r1")
        self.span_uses = 0
        self.emit_versions(own)
        self.row_span = self.flat_span = None
        self.pos_share = False
        if not self.span_uses:  # (every thread would run the whole loop: never emitted so)
            raise NoShare(self.stmt)
        region.add(add_copies(self.val_t, self.odt, red, counts))
        body.add(*release_copies(self.val_t, counts))

    @staticmethod
    def _row_range(p, n, nt="ls_nt"):
        """Declarations of ``ls_r0``/``ls_r1``, thread ``tid``'s rows of an operand with row
        positions ``p`` over ``n`` rows: ranges of about equal stored entries (a power-law
        graph's rows split by count put most entries on one thread), found by binary search, the
        same in every pass that uses them."""
        n, team, tid = x(n), _v(nt), _v("tid")
        g, lo, hi, m = _v("g_"), _v("l_"), _v("u_"), _v("m_")

        def at(i):
            return E.Cast(T.INDEX, E.Load(_v(p), x(i)))

        def first(share):  # the first row whose entries start at or past the share's target
            goal = E.Binary("+", at(0), E.Binary("/", E.Binary("*", E.Paren(E.Binary("-", at(n), at(0))),
                                                                 E.Paren(share)), team))
            step = S.Inline((
                S.Declare("m_", T.INDEX, E.Binary("/", E.Paren(E.Binary("+", lo, hi)), _i(2)), const=True),
                S.If(E.lt(at(m), g), S.Assign(lo, _add(m, 1)), S.Assign(hi, m), oneline=True)))
            return E.Scoped((S.Declare("g_", T.INDEX, goal, const=True),
                             S.Declare("l_", T.INDEX, _i(0), more=(("u_", n),)),
                             S.While(E.lt(lo, hi), step, oneline=True)), lo)
        return [_const("ls_r0", first(tid)),
                _const("ls_r1", E.Select(E.Paren(E.Binary("==", _add(tid, 1), team)), n, first(_add(tid, 1))))]

    def parallel(self, depth, v, followers, blk, count, forced=False, chunk=None, span=False):
        """OpenMP on the outermost loop when it runs over a result index of a dense result
        (each iteration writes its own elements; reductions stay inside an iteration), is a
        range or walks a unique level, and no iterator follows it (a follower's position
        carries from one iteration to the next). Chunks of rows (``chunk_size``: rows of skewed
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
        nt = self.abi.int_expr(("threads",))
        if not forced:  # (a schedule's parallel loop runs on the threads asked for)
            nt = team_size(blk, self.abi, self.work())
        blk.add(_const("ls_chunk", chunk or chunk_size(nt, count)))
        self.par_open = True
        red = (S.Reduction("+", "nz"),) if mapped else ()
        if not forced and span and not (mapped or masked):
            return self.owned_chunks(blk, nt, count)
        # (a walk, or a schedule's loop:) chunks handed out as threads free up; in the loop
        # nests of a segment sum's variants (``emit_flag_versions``) a walk's chunks go round
        # the team in a fixed order instead (``owned_chunks``: why)
        kind = "static" if self.static_rows and not forced else "dynamic"
        team = x(nt)
        return _LoopSlot(blk, lambda loop: S.ParallelFor(loop, S.Schedule(kind, _v("ls_chunk")), team,
                                                         E.Binary(">", team, _i(1)), red))

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
        region, chunk = owned_runs(nt, count)
        blk.add(*owned_runs_setup(nt, count), S.Parallel(region, **_team(nt)))
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
        packed = self._result_span(blk)
        # work past any threshold, so the copies' cost alone decides the team (spelled 1e300, as
        # the kernels read, where the printer's own literal is 1e+300)
        private_team(blk, self.abi, self.val_t, E.Lit(1e300, "float64", spelling="1e300"), packed)
        own = Block().add(*private_copy(self.val_t))
        region = Block().add(*team_ids(self.prelude_extra, KEEP), own, add_copies(self.val_t, self.odt))
        blk.add(_const("ls_chunk", chunk or chunk_size("ls_pt", count)),
                S.Parallel(region, **_team("ls_pt")), *release_copies(self.val_t))
        self.par_open = True
        share = S.Worksharing(S.Schedule("dynamic", _v("ls_chunk")))
        return _LoopSlot(own, lambda loop: replace(loop, worksharing=share))

    def _result_span(self, body):
        """Declares ``ls_osz``, the dense result's span in its buffer; returns the condition
        that its strides pack it (a strided view is not copied: it stays on one thread)."""
        if not self.outs:
            body.add(_const("ls_osz", _i(1)))
            return _i(1)
        exts = [x(self.ext[v]) for v in self.outs]
        span = sum_of([_i(1)] + [_mul(E.Paren(E.Binary("-", e, _i(1))), f"os{m}") for m, e in enumerate(exts)])
        body.add(_const("ls_ofull", sum_of([E.Paren(e) for e in exts], "*")),
                 _const("ls_osz", E.Select(E.Binary(">", _v("ls_ofull"), _i(0)), span, _i(0))))
        return E.Binary("==", _v("ls_osz"), _v("ls_ofull"))

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
            blk.add(S.Parallel(region, **_team("ls_nt")))
            blk = region
            self.par_open = True
        self.span_uses += 1
        b, z, c = _v(f"b{u}"), _v(f"z{u}"), _v(crd)
        share, parts = _v(share), _v(parts)

        def cut(name, k):
            at = _v(name)
            blk.add(S.Declare(name, T.INDEX, _add(b, E.Binary("/", _mul(E.Paren(E.Binary("-", z, b)), E.Paren(k)), parts))))
            if not unique:
                same = E.Binary("==", E.Load(c, at), E.Load(c, E.Binary("-", at, _i(1))))
                blk.add(S.While(sum_of([E.Binary(">", at, b), E.Binary("<", at, z), same], "&&"),
                                S.Update(at, "+", _i(1)), oneline=True))
        cut(f"ls_lo{u}", share)
        cut(f"ls_hi{u}", _add(share, 1))
        lo, hi = _v(f"ls_lo{u}"), _v(f"ls_hi{u}")
        if self.pos_chunk is not None:
            # the rows the chunk spans, for the shift of their ends once the chunks are placed
            # (rows it does not visit keep 0, which the shift leaves below the row before them:
            # finish_output's pass over the ends lifts them to it)
            inside = E.Binary("<", lo, hi)
            blk.add(S.Assign(_at("ls_ck", _mul(W, share), 4), E.Select(inside, E.Cast(T.INDEX, E.Load(c, lo)), _i(0))),
                    S.Assign(_at("ls_ck", _mul(W, share), 5),
                             E.Select(inside, _add(E.Cast(T.INDEX, E.Load(c, E.Binary("-", hi, _i(1)))), 1), _i(0))))
        inner = Block().add(S.Declare(f"b{u}", T.INDEX, lo), S.Declare(f"z{u}", T.INDEX, hi))
        blk.add(inner)
        return inner
