"""Results (``ResultMixin``): the result's buffers declared and sized before the loops (a dense
result from ``p[]``; a sparse one allocated here, at a capacity from a hint, a mask's bound, a
counting pass or the previous call's size), a transposition's count pass, and after the loops the
result assembled (sorted, squeezed of zeros, its positions completed), shrunk and handed back
through ``p[]``/``d[]``, with the failure path that frees what was allocated.
"""
from __future__ import annotations

from lazysparse.ir.nodes import accesses_of
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.lower import workspace
from lazysparse.compiler.lower.level_builder import LevelIR
from lazysparse.compiler.lower.locate import THREAD_NUM
from lazysparse.compiler.lower.operands import level_count_expr
from lazysparse.compiler.lower.teams import DOUBLE, par, sum_of, team_size, x
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block

IDX = T.INDEX


def _v(name):
    return E.Var(name)


def _i(n):
    return E.Int(n)


def _decl(name, init, t=IDX, const=False):
    return S.Declare(name, t, x(init), const=const)


def _fails(cond):
    """A jump to the failure path where ``cond`` holds."""
    return S.If(cond, S.Fail(), oneline=True)


def _at_least(a, n):
    """``a > n ? a : n``."""
    a = x(a)
    return E.Select(E.Binary(">", a, _i(n)), a, _i(n))


FAIL_LABEL = S.FailPath()


def _fit(elem, ptr, n, cap):
    """The buffer ``ptr`` shrunk to ``n`` entries of ``elem`` when over an eighth of it is
    spare."""
    return S.Fit(elem, E.Var(ptr), x(n), E.Var(cap))


class ResultMixin:
    """The result's buffers. Owns ``olv``, ``ovars``, ``ocoo``, ``kd``, ``dense_count``,
    ``direct``, ``placing``, ``obufs``, ``temps``, ``counting_inserts`` and ``fail_path``;
    records ``par_rows``, and a transposition's rows per thread (``row_range``,
    ``row_span``)."""

    def declare_output(self, top):
        """The result's buffers, before the loops: a dense result's pointer and strides come
        through ``p[]``/``d[]``; a sparse result's buffers are allocated here and handed back
        through ``p[]``, in steps: its layout, every buffer declared NULL, its capacity, the
        allocations, then what the loops expect in place."""
        if self.spec.mode.startswith("dense"):
            self._declare_dense_output(top)
            return
        self._sparse_layout(top)
        self._declare_heap(top)
        if self.ws:
            self._size_by_workspace(top)
        if self.direct:
            self._size_by_transposition(top)
        if self.spec.mode in ("mask", "map"):
            self._size_by_mask(top)
        self._allocate_output(top)
        self._prepare_output(top)

    def _declare_dense_output(self, top):
        """A dense result: its values (``o``), strides (``os<m>``) and, for a counted max, min
        or product, its entry counts (``ocnt``)."""
        top.add(_decl("o", E.Cast(T.Ptr(self.val_t), self.abi.ptr_expr(("out", "vals"))), T.Ptr(self.val_t, restrict=True)))
        for m in range(len(self.outs)):
            top.add(_decl(f"os{m}", self.abi.int_expr(("ostride", m))))
        if self.spec.mode == "dense-count":
            top.add(_decl("ocnt", E.Cast(T.Ptr(IDX), self.abi.ptr_expr(("out", "cnt"))), T.Ptr(IDX, restrict=True)))

    def _sparse_layout(self, top):
        """A sparse result's levels and sizes, its starting capacity (``ocap``: the glue's hint,
        or 16 where the steps below size it), and how the loops will build it: appended on
        threads (``par_rows``) or, for a transposition, counted then placed (``direct``)."""
        mode = self.spec.mode
        nd = len(self.outs)
        self.olv = list(self.ofmt.levels)
        self.ovars = [self.outs[m] for m in self.ofmt.order]
        for l in range(nd):
            top.add(_decl(f"osz{l}", self.abi.int_expr(("osize", l))))
        if self.ws or mode in ("mask", "map"):  # sized below, from counts and bounds: no hint
            top.add(_decl("ocap", 16))
        else:
            hint = self.abi.int_expr(("ohint",))
            top.add(_decl("ocap", E.Select(E.Binary(">", hint, _i(16)), E.Load(_v("d"), _i(len(self.abi.d) - 1)), _i(16))))
        self.ocoo = self.olv[0].has_pos and not self.olv[0].unique
        self.kd = 0
        while self.kd < nd and self.olv[self.kd].is_dense:
            self.kd += 1
        dense_count = _i(1)
        for l in range(self.kd):  # (the positions of the dense levels on top)
            dense_count = self.olv[l].level_kind.size(LevelIR.output(l), dense_count)
        self.dense_count = dense_count  # (an expression)
        # rows appended on threads: each thread its own buffers, chunks of rows copied into place
        # after (emit_par_rows)
        self.par_rows = self._par_rows()
        # a transposition's sort (a dense level over a compressed one, entries emitted sorted by
        # the inner index, nothing to combine) runs the loops twice instead: rows counted, then
        # each entry put in place; no (coordinates, value) triples in between
        self.direct = (mode == "sort" and nd == 2 and self.kd == 1 and not self.ocoo and not self.red
                       and self.olv[1].has_pos and self.ovars[1] == self.order[0]
                       and not self.count)
        self.placing = False
        self.obufs = []

    def _declare_heap(self, top):
        """Every buffer the kernel allocates, declared NULL up front, so that a failed
        allocation anywhere can jump to ls_fail (end of the kernel): the output buffers go
        back through p[] for the glue to free (Runner._failed), the temporaries (``temps``) are
        freed there."""
        nd, it = len(self.outs), self.idx_t
        heap = []
        for l in range(nd):
            if self.olv[l].has_pos:
                heap.append((it, f"op{l}"))
            if self.olv[l].is_sparse:
                heap.append((it, f"oc{l}"))
        heap.append((self.val_t, "ov"))
        self.temps = []
        if self.spec.mode == "sort":
            self.temps = [f"tc{l}" for l in range(nd)] + ["tv", "perm", "tmp", "h", "nx"]
            heap += [(IDX, f"tc{l}") for l in range(nd)] + [(self.val_t, "tv")]
            heap += [(IDX, n) for n in ("perm", "tmp", "h", "nx")]
        if self.par_rows:  # (the chunk table and the threads' buffers)
            heap += [(IDX, "ls_ck"), (T.Ptr(T.Opaque("void")), "ls_tp")]
            self.temps += ["ls_ck", "ls_tp"]
        for t, n in heap:
            top.add(S.Declare(n, T.Ptr(t), E.Null()))

    def _size_by_workspace(self, top):
        """A workspace's result: the workspace and the ISM array declared (zeroed before any
        jump to ls_fail frees them), and ``ocap`` set from a bound on the entries.

        The loops run once without values, counting inserts: every result entry comes from
        one, so the result arrays start at that size (capped by the full size) and never grow
        by copying; pages never written are never touched. The count's loops are cheap (a
        row-wise product's inner loop is just its length). A result inside an input's pattern
        (a masked product) has at most that input's entries: that bound sizes it without the
        counting loops. A result whose only compressed level is the workspace's (CSR-like: its
        flush grows the coordinates and values as it goes) starts instead at the size of this
        argument set's previous result, plus an eighth, when there is one: a repeated product
        then allocates what it will use (no count, and no shrink at the end, whose size would
        differ from the next call's request: glibc maps such a buffer afresh every call, and its
        pages fault in again: wiki-Vote A @ A paid 640 faults and 3 ms of system time a call,
        30 ms when huge pages ran out)."""
        nd = len(self.outs)
        top.add(*self._ws_declare())
        prev = None
        if self.kd == nd - 1 and self.ws_h == nd - 1:
            prev = self.abi.int_expr(("ocount", nd - 1))
            grown = E.Binary("+", E.Binary("+", prev, E.Binary("/", prev, _i(8))), _i(16))
            top.add(_decl("ls_prev", E.Select(E.Binary(">", prev, _i(0)), grown, _i(0)), const=True))
        bound = self.mask_bound()
        pv = _v("ls_prev")
        if bound is None:
            top.add(_decl("ls_ins", 0))
            count = Block()
            self.counting_inserts = True
            self.emit(0, count)
            self.counting_inserts = False
            top.add(count if prev is None else S.If(E.Binary("==", pv, _i(0)), count))
            bound = _v("ls_ins") if prev is None else E.Paren(E.Select(pv, pv, _v("ls_ins")))
        elif prev is not None:
            bound = E.Paren(E.Select(E.Binary("&&", pv, E.Binary("<", pv, bound)), pv, bound))
        full = sum_of([_v(f"osz{l}") for l in range(nd)], "*") or _i(1)
        ocap = _v("ocap")
        top.add(S.Assign(ocap, E.Select(E.Binary("<", bound, full), bound, full)),
                S.If(E.Binary("<", ocap, _i(16)), S.Assign(ocap, _i(16)), oneline=True))

    def _size_by_transposition(self, top):
        """A transposition (``direct``): the rows' entry counts, then their starts (h[r]: the
        next place in row r); the result arrays get exactly the entries (a transposition's
        pages are all written). The placing pass follows."""
        a = self._plain_transposition()
        if a is not None:
            self.emit_transposition_counts(top, a)
        else:
            h, t = _v("h"), _v("t")
            # (calloc's count is its own argument: no cast of the sum, so ``(size_t)osz0 + 2``)
            top.add(S.Assign(h, E.Alloc(IDX, E.Binary("+", E.Cast(T.SIZE, _v("osz0")), _i(2)), zero=True)),
                    _fails(E.Unary("!", h)))
            count = Block()
            self.emit(0, count)
            top.add(count, S.For("t", _i(0), _v("osz0"), Block().add(
                S.Update(E.Load(h, E.Binary("+", t, _i(1))), "+", E.Load(h, t)))))
        self.placing = True
        top.add(S.Assign(_v("ocap"), _at_least(E.Load(_v("h"), _v("osz0")), 16)))

    def _size_by_mask(self, top):
        """Modes "mask" and "map": the result has the mask's entries (``mb0``: its first
        position, ``mnz``: how many)."""
        a = self.acc_by_q[self.mask_q]
        pm = _v(f"p{a.slot}_{len(self.outs) - 1}")
        top.add(_decl("mb0", E.Cast(IDX, E.Load(pm, _i(0))), const=True),
                _decl("mnz", E.Binary("-", E.Cast(IDX, E.Load(pm, self.dense_count)), _v("mb0")), const=True),
                S.Assign(_v("ocap"), _at_least("mnz", 16)))

    def _allocate_output(self, top):
        """The result's positions, coordinates and values at the capacity ``ocap`` (the first
        positions level at its exact size), each with its capacity and count, recorded in
        ``obufs`` to be shrunk and handed back after the loops."""
        mode, it, dense_count = self.spec.mode, self.idx_t, self.dense_count
        ocap = _v("ocap")
        for l in range(len(self.outs)):
            lv = self.olv[l]
            op, oc = _v(f"op{l}"), _v(f"oc{l}")
            if lv.has_pos:
                if l == self.kd:
                    size = E.Paren(E.Binary("+", E.Paren(dense_count), _i(1)))
                    # (mask, map: the copy of the operand's positions writes every entry)
                    if mode in ("mask", "map"):
                        top.add(S.Assign(op, E.Alloc(it, size)))
                    else:
                        top.add(S.Assign(op, E.Alloc(it, E.Cast(T.SIZE, size), zero=True)))
                else:
                    top.add(_decl(f"opc{l}", ocap))
                    top.add(S.Assign(op, E.Alloc(it, E.Binary("+", E.Cast(T.SIZE, ocap), _i(1)), zero=True)))
                top.add(_fails(E.Unary("!", op)))
                self.obufs.append(("pos", l))
            if lv.is_sparse:
                top.add(_decl(f"occ{l}", ocap))
                top.add(S.Assign(oc, E.Alloc(it, ocap)))
                top.add(_decl(f"on{l}", 0))
                top.add(_fails(E.Unary("!", oc)))
                self.obufs.append(("crd", l))
        top.add(_decl("ovc", ocap))
        top.add(S.Assign(_v("ov"), E.Alloc(self.val_t, ocap)))
        top.add(_fails(E.Unary("!", _v("ov"))))
        self.obufs.append(("vals", None))

    def _prepare_output(self, top):
        """What the loops expect in place: a mask's or map's structure copied (and zeros where
        a mask's products accumulate), the workspace started, a transposition's row starts, or
        the sort's coordinate and value arrays."""
        mode, nd, it = self.spec.mode, len(self.outs), self.idx_t
        t = _v("t")
        if mode in ("mask", "map"):
            # the mask's structure, and zeros where the products accumulate
            L, a = nd - 1, self.acc_by_q[self.mask_q]
            pos = S.For("t", _i(0), E.Binary("+", E.Paren(self.dense_count), _i(1)), Block().add(
                S.Assign(E.Load(_v(f"op{L}"), t), E.Cast(it, E.Paren(E.Binary(
                    "-", E.Cast(IDX, E.Load(_v(f"p{a.slot}_{L}"), t)), _v("mb0")))))))
            crd = S.For("t", _i(0), _v("mnz"), Block().add(
                S.Assign(E.Load(_v(f"oc{L}"), t), E.Cast(it, E.Load(_v(f"c{a.slot}_{L}"), E.Binary("+", _v("mb0"), t))))))
            if mode == "map" and not self.count:  # (copies as wide as the values loop after them)
                team_size(top, self.abi, E.Cast(DOUBLE, _v("mnz")), name="ls_cnt", report=False)
                pos, crd = (S.ParallelFor(loop, S.Schedule("static"), _v("ls_cnt"), E.Binary(">", _v("ls_cnt"), _i(1)))
                            for loop in (pos, crd))
            top.add(pos, crd)
            if mode == "mask":
                top.add(S.Memset(_v("ov"), 0, _v("ocap"), self.val_t))
            else:  # map: every stored entry of the operand gets its value; zeros are counted
                top.add(_decl("nz", 0))
        if self.ws and not self.par_rows:  # (par_rows: one workspace per thread, in its region)
            top.add(_fails(self._ws_init()))
            if self.ws_flag:
                top.add(_fails(self._ws_use()))
        if self.direct:
            top.add(S.For("t", _i(0), E.Binary("+", _v("osz0"), _i(1)), Block().add(
                        S.Assign(E.Load(_v("op1"), t), E.Cast(it, E.Load(_v("h"), t))))),
                    _decl("nz", 0))
        elif mode == "sort":
            top.add(_decl("tn", 0), _decl("tcap", "ocap"))
            for l in range(nd):
                top.add(S.Assign(_v(f"tc{l}"), E.Alloc(IDX, _v("tcap"))))
                top.add(_fails(E.Unary("!", _v(f"tc{l}"))))
            top.add(S.Assign(_v("tv"), E.Alloc(self.val_t, _v("tcap"))))
            top.add(_fails(E.Unary("!", _v("tv"))))

    def _ws_declare(self):
        """The workspace and its all array, zeroed (the failure path may free them)."""
        ws, ism = T.Opaque("ws"), T.Opaque("ism")
        return [S.Declare("ws", ws, E.Zero(ws)), S.Declare("ism", ism, E.Zero(ism))]

    def _ws_init(self):
        """The call that starts the workspace (nonzero: out of memory)."""
        nd = len(self.outs)
        extent = sum_of([_v(f"osz{l}") for l in range(self.ws_h, nd)], "*") or _i(1)
        return E.SupportCall("ws_init", (workspace.WS, extent, self.abi.int_expr(("wscap",))))

    def _ws_use(self):
        """The call that picks the workspace's insert (the schedule flag ``ws_flag``)."""
        return E.SupportCall("ws_use", (workspace.WS, x(self.ws_flag)))

    def _squeeze(self, L, rows):
        """The block that drops the zero values of a result whose last level ``L`` holds
        ``rows`` segments, in place, row by row (its positions rewritten, ``on{L}`` set)."""
        op, oc, ov, o, t, r = _v(f"op{L}"), _v(f"oc{L}"), _v("ov"), _v("o"), _v("t"), _v("r")
        end = E.Load(op, E.Binary("+", r, _i(1)))
        row = Block().add(_decl("e", end, const=True))
        row.add(S.For("t", _v("s"), _v("e"), Block().add(
            S.Assign(E.Load(oc, o), E.Load(oc, t)), S.Assign(E.Load(ov, o), E.Load(ov, t)),
            S.Update(o, "+", E.Binary("!=", E.Load(ov, t), _i(0))))))
        row.add(S.Assign(end, E.Cast(self.idx_t, o)), S.Assign(_v("s"), _v("e")))
        return Block().add(_decl("o", 0), _decl("s", 0), S.For("r", _i(0), x(rows), row),
                           S.Assign(_v(f"on{L}"), o))

    def mask_bound(self):
        """The expression bounding the result's entries by the entries of inputs read at the
        result's own subscripts (a mask: ``M[i,j]`` in ``sum_k M[i,j] A[i,k] B[k,j]``), one per
        term of the statement's pattern; None when some term has no such input."""
        outs = set(self.outs)
        accs = accesses_of(self.stmt.expr)
        masks = {q for q, acc in enumerate(accs)
                 if not self.spec.inputs[acc.operand].dense and len(acc.indices) == len(outs)
                 and set(acc.indices) == outs}
        pat, _ = P.expr_pattern(self.stmt.expr, lambda acc, q: None if self.spec.inputs[acc.operand].dense else q,
                                lambda acc: None, self.spec.decisions)
        if pat == P.TRUE or not masks:
            return None
        parts = []
        for t in sorted(pat, key=sorted):
            m = sorted(t & masks)
            if not m:
                return None
            parts.append(self.abi.int_expr(("nnz", accs[m[0]].operand)))
        return E.Paren(sum_of(parts) or _i(0))

    def finish_output(self, top):
        mode = self.spec.mode
        t = _v("t")
        if mode == "dense-count":
            n = sum_of([x(self.ext[v]) for v in self.outs], "*") or _i(1)
            o = E.Load(_v("o"), t)
            fold = (S.Reduce(self.stmt.reduce, o, self.zero_value(), self.odt),) + self.fold_count_stmts()
            body = Block().add(S.If(E.Binary("<", E.Load(_v("ocnt"), t), self.red_total_expr()), S.Inline(fold),
                                    oneline=True))
            top.add(S.For("t", _i(0), n, body))
        if mode.startswith("dense"):
            return
        if self.direct:
            top.add(S.Assign(_v("on1"), E.Load(_v("op1"), _v("osz0"))), S.Inline((S.Free(_v("h")), S.Assign(_v("h"), E.Null()))))
            top.add(S.If(E.Binary(">", _v("nz"), _i(0)), self._squeeze(1, "osz0")))
        elif mode == "sort":
            from lazysparse.compiler.lower.assembly import emit_sort_assembly
            emit_sort_assembly(self, top)
        if self.ws:
            if self.ws_h == 0:
                workspace.emit_flush(self, top, 0, "0")
            top.add(workspace.FREE)
        if mode in ("mask", "map"):
            # the mask's entries no product reached, and computed zeros, are not stored (map:
            # only when the values loop counted a zero; otherwise every entry stays)
            L = len(self.outs) - 1
            if mode == "map" and self.zeros_after:
                cnt = _v("ls_cnt")
                top.add(S.ParallelFor(S.For("t", _i(0), _v("mnz"), Block().add(
                    S.Update(_v("nz"), "+", E.Paren(E.Binary("==", E.Load(_v("ov"), t), _i(0)))))),
                    S.Schedule("static"), cnt, E.Binary(">", cnt, _i(1)), (S.Reduction("+", "nz"),)))
            squeeze = self._squeeze(L, self.dense_count)
            top.add(squeeze if mode == "mask" else S.If(E.Binary(">", _v("nz"), _i(0)), squeeze,
                                                        Block().add(S.Assign(_v(f"on{L}"), _v("mnz")))))
        nd = len(self.outs)
        self._close_positions(top, nd)
        # shrink to the final sizes (capacity came from an estimate), then hand buffers back:
        # pointers into p[], counts into d[]
        it, leaf = self.idx_t, f"on{nd - 1}"
        for kind, l in self.obufs:
            if kind == "crd":
                top.add(_fit(it, f"oc{l}", leaf if self.ocoo else f"on{l}", f"occ{l}"))
            elif kind == "vals":
                top.add(_fit(self.val_t, "ov", leaf, "ovc"))
            elif kind == "pos" and l != self.kd:
                top.add(_fit(it, f"op{l}", E.add(f"on{l - 1}", 1), f"opc{l}"))
        publish = []
        for kind, l in self.obufs:
            name = {"pos": f"op{l}", "crd": f"oc{l}", "vals": "ov"}[kind]
            publish.append(S.Assign(self.abi.ptr_expr(("obuf", kind, l)), E.Cast(T.Ptr(T.Opaque("void")), _v(name))))
        top.add(*publish)
        for l in range(nd):
            if self.olv[l].is_sparse:
                top.add(S.Assign(self.abi.int_expr(("ocount", l)), _v(f"on{l}")))
        # failure path (a jump from a failed allocation): partial output buffers back through
        # p[] (the glue frees them), temporaries freed here
        self.fail_path = ([S.Return(_i(0)), FAIL_LABEL] + publish + [S.Free(_v(n)) for n in self.temps]
                          + ([workspace.FREE] if self.ws else []) + [S.Return(_i(1))])

    def _close_positions(self, top, nd):
        """The first compressed level's positions completed: its one segment's end, or each
        row's end lifted to the row before it where the loops skipped rows."""
        if self.kd < nd and self.olv[self.kd].has_pos:
            l = self.kd
            if l == 0:
                top.add(S.Assign(E.Load(_v("op0"), _i(1)), _v(f"on{nd - 1}" if self.ocoo else "on0")))
            elif self.spec.mode not in ("mask", "map"):  # (those write every row's end)
                op, t = _v(f"op{l}"), _v("t")
                prev = E.Load(op, E.Binary("-", t, _i(1)))
                body = Block().add(S.If(E.Binary("<", E.Load(op, t), prev), S.Assign(E.Load(op, t), prev), oneline=True))
                top.add(S.For("t", _i(1), E.Binary("+", E.Paren(self.dense_count), _i(1)), body))

    def _plain_transposition(self):
        """The one sparse access of a transposition (``direct``) that reads it at the loop
        order's own subscripts with nothing else read at a coordinate (``A.T`` to CSR,
        ``tocsc``, ``2 * A.T``), whose count pass then needs the coordinates alone; else None
        (``emit_transposition_counts``)."""
        a = self._sole_walk()
        if (a is None or a.spec.format.ndim != 2 or a.spec.format.levels[0].is_sparse or not a.spec.format.levels[1].has_pos
                or self.ovars[0] != self.order[1] or self.count or self.spec.loops is not None):
            return None
        return a

    def emit_transposition_counts(self, top, a):
        """A plain transposition's count pass, on threads: the operand's rows in ``ls_nt``
        ranges of about equal stored entries, each thread counting its entries per result row into its own histogram
        (one flat walk of its stored coordinates, as scipy's ``csr_tocsc`` counts); then, per
        result row, each thread's cursor is where the threads before it end, so that the placing
        pass (each thread its own rows, ``row_span``, into its own cursors, ``ht``) keeps every
        result row in order. Level by level each row had paid a loop setup (vt2010's 4.8-entry
        rows); one thread could not split it. ``h[osz0]`` ends as the entry count, and thread
        0's ``h[r]`` as row r's start."""
        if THREAD_NUM not in self.prelude_extra:
            self.prelude_extra.append(THREAD_NUM)
        p, c = f"p{a.slot}_1", f"c{a.slot}_1"
        n = self.ext[self.order[0]]
        team_size(top, self.abi, E.Cast(DOUBLE, par(level_count_expr(a.spec.format, a.slot, 1))))
        h, osz0, t = _v("h"), _v("osz0"), _v("t")
        rows = E.Binary("*", E.Cast(T.SIZE, _v("ls_nt")), E.Paren(E.Binary("+", E.Cast(T.SIZE, osz0), _i(2))))
        top.add(S.Assign(h, E.Alloc(IDX, rows, zero=True)), _fails(E.Unary("!", h)))
        self.row_range = self._row_range(p, n)
        region = Block().add(*self._thread_rows("tid"), *self.row_range,
                             S.For("t", E.Cast(IDX, E.Load(_v(p), _v("ls_r0"))), E.Cast(IDX, E.Load(_v(p), _v("ls_r1"))),
                                   Block().add(S.Update(E.Load(_v("ht"), E.Binary("+", E.Cast(IDX, E.Load(_v(c), t)), _i(1))),
                                                        "+", _i(1)))))
        top.add(S.Parallel(region, _v("ls_nt"), E.Binary(">", _v("ls_nt"), _i(1))))
        hh, at = _v("hh"), _v("at")
        cursor = Block().add(S.Declare("hh", T.Ptr(IDX), self._thread_hist("tt")),
                             _decl("k", E.Load(hh, E.Binary("+", _v("r"), _i(1))), const=True),
                             S.Assign(E.Load(hh, _v("r")), at), S.Update(at, "+", _v("k")))
        top.add(Block().add(_decl("at", 0),
                            S.For("r", _i(0), osz0, Block().add(S.For("tt", _i(0), _v("ls_nt"), cursor))),
                            S.Assign(E.Load(h, osz0), at)))
        self.row_span = ("ls_r0", "ls_r1")

    @staticmethod
    def _thread_hist(t):
        """Thread ``t``'s histogram of a transposition's count pass (``osz0 + 2`` counts each)."""
        return E.Binary("+", E.Var("h"), E.Binary("*", E.Var(t), E.Paren(E.Binary("+", E.Var("osz0"), E.Int(2)))))

    def _thread_rows(self, tid):
        """A transposition's region opens with its thread number and histogram (``ht``)."""
        return [S.Declare(tid, IDX, E.Cast(IDX, E.ThreadNum()), const=True),
                S.Declare("ht", T.Ptr(IDX), self._thread_hist(tid))]
