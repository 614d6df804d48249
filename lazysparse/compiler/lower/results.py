"""Results (``ResultMixin``): the result's buffers declared and sized before the loops (a dense
result from ``p[]``; a sparse one allocated here, at a capacity from a hint, a mask's bound, a
counting pass or the previous call's size), a transposition's count pass, and after the loops the
result assembled (sorted, squeezed of zeros, its positions completed), shrunk and handed back
through ``p[]``/``d[]``, with the failure path that frees what was allocated.
"""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.ir.nodes import accesses_of
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.lower import workspace
from lazysparse.compiler.lower.locate import THREAD_NUM
from lazysparse.compiler.lower.operands import level_count
from lazysparse.compiler.lower.teams import team_size
from lazysparse.compiler.loopir.nodes import Block, Decl, For, If, Line


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
        top.add(Decl(f"{self.oct} *restrict", "o", f"({self.oct} *){self.abi.ptr(('out', 'vals'))}"))
        for m in range(len(self.outs)):
            top.add(Decl("int64_t", f"os{m}", self.abi.int(("ostride", m))))
        if self.spec.mode == "dense-count":
            top.add(Decl("int64_t *restrict", "ocnt", f"(int64_t *){self.abi.ptr(('out', 'cnt'))}"))

    def _sparse_layout(self, top):
        """A sparse result's levels and sizes, its starting capacity (``ocap``: the glue's hint,
        or 16 where the steps below size it), and how the loops will build it: appended on
        threads (``par_rows``) or, for a transposition, counted then placed (``direct``)."""
        mode = self.spec.mode
        nd = len(self.outs)
        self.olv = list(self.ofmt.levels)
        self.ovars = [self.outs[m] for m in self.ofmt.order]
        for l in range(nd):
            top.add(Decl("int64_t", f"osz{l}", self.abi.int(("osize", l))))
        if self.ws or mode in ("mask", "map"):  # sized below, from counts and bounds: no hint
            top.add(Decl("int64_t", "ocap", "16"))
        else:
            top.add(Decl("int64_t", "ocap", f"{self.abi.int(('ohint',))} > 16 ? d[{len(self.abi.d) - 1}] : 16"))
        self.ocoo = self.olv[0].kind == "compressed" and not self.olv[0].unique
        self.kd = 0
        while self.kd < nd and self.olv[self.kd].kind == "dense":
            self.kd += 1
        dense_count = "1"
        for l in range(self.kd):
            dense_count = f"({dense_count}) * osz{l}"
        self.dense_count = dense_count
        # rows appended on threads: each thread its own buffers, chunks of rows copied into place
        # after (emit_par_rows)
        self.par_rows = self._par_rows()
        # a transposition's sort (a dense level over a compressed one, entries emitted sorted by
        # the inner index, nothing to combine) runs the loops twice instead: rows counted, then
        # each entry put in place; no (coordinates, value) triples in between
        self.direct = (mode == "sort" and nd == 2 and self.kd == 1 and not self.ocoo and not self.red
                       and self.olv[1].kind == "compressed" and self.ovars[1] == self.order[0]
                       and not self.count)
        self.placing = False
        self.obufs = []

    def _declare_heap(self, top):
        """Every buffer the kernel allocates, declared NULL up front, so that a failed
        allocation anywhere can jump to ls_fail (end of the kernel): the output buffers go
        back through p[] for the glue to free (Runner._failed), the temporaries (``temps``) are
        freed there."""
        nd, it = len(self.outs), self.oit
        heap = []
        for l in range(nd):
            if self.olv[l].kind == "compressed":
                heap.append((it, f"op{l}"))
            if self.olv[l].kind != "dense":
                heap.append((it, f"oc{l}"))
        heap.append((self.oct, "ov"))
        self.temps = []
        if self.spec.mode == "sort":
            self.temps = [f"tc{l}" for l in range(nd)] + ["tv", "perm", "tmp", "h", "nx"]
            heap += [("int64_t", f"tc{l}") for l in range(nd)] + [(self.oct, "tv")]
            heap += [("int64_t", n) for n in ("perm", "tmp", "h", "nx")]
        if self.par_rows:  # (the chunk table and the threads' buffers)
            heap += [("int64_t", "ls_ck"), ("void *", "ls_tp")]
            self.temps += ["ls_ck", "ls_tp"]
        for t, n in heap:
            top.add(Decl(f"{t} *", n, "NULL"))

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
        top.add(Decl("ls_ws", "ws", "{0}"), Decl("ls_ism", "ism", "{0}"))
        prev = None
        if self.kd == nd - 1 and self.ws_h == nd - 1:
            prev = self.abi.int(("ocount", nd - 1))
            top.add(Decl("const int64_t", "ls_prev", f"{prev} > 0 ? {prev} + {prev} / 8 + 16 : 0"))
        bound = self.mask_bound()
        if bound is None:
            top.add(Decl("int64_t", "ls_ins", "0"))
            count = Block()
            self.counting_inserts = True
            self.emit(0, count)
            self.counting_inserts = False
            top.add(count if prev is None else If("ls_prev == 0", count))
            bound = "ls_ins" if prev is None else "(ls_prev ? ls_prev : ls_ins)"
        elif prev is not None:
            bound = f"(ls_prev && ls_prev < {bound} ? ls_prev : {bound})"
        full = " * ".join(f"osz{l}" for l in range(nd)) or "1"
        top.add(f"ocap = {bound} < {full} ? {bound} : {full};", "if (ocap < 16) ocap = 16;")

    def _size_by_transposition(self, top):
        """A transposition (``direct``): the rows' entry counts, then their starts (h[r]: the
        next place in row r); the result arrays get exactly the entries (a transposition's
        pages are all written). The placing pass follows."""
        a = self._plain_transposition()
        if a is not None:
            self.emit_transposition_counts(top, a)
        else:
            top.add("h = (int64_t *)ls_calloc((size_t)osz0 + 2, sizeof(int64_t));",
                    "if (!h) goto ls_fail;")
            count = Block()
            self.emit(0, count)
            top.add(count, For("t", "0", "osz0", Block().add("h[t + 1] += h[t];")))
        self.placing = True
        top.add("ocap = h[osz0] > 16 ? h[osz0] : 16;")

    def _size_by_mask(self, top):
        """Modes "mask" and "map": the result has the mask's entries (``mb0``: its first
        position, ``mnz``: how many)."""
        a = self.acc_by_q[self.mask_q]
        pm = f"p{a.slot}_{len(self.outs) - 1}"
        top.add(Decl("const int64_t", "mb0", f"(int64_t){pm}[0]"),
                Decl("const int64_t", "mnz", f"(int64_t){pm}[{self.dense_count}] - mb0"),
                "ocap = mnz > 16 ? mnz : 16;")

    def _allocate_output(self, top):
        """The result's positions, coordinates and values at the capacity ``ocap`` (the first
        positions level at its exact size), each with its capacity and count, recorded in
        ``obufs`` to be shrunk and handed back after the loops."""
        mode, it, dense_count = self.spec.mode, self.oit, self.dense_count
        for l in range(len(self.outs)):
            lv = self.olv[l]
            if lv.kind == "compressed":
                if l == self.kd:
                    size = f"({dense_count}) + 1"
                    # (mask, map: the copy of the operand's positions writes every entry)
                    if mode in ("mask", "map"):
                        top.add(f"op{l} = ({it} *)ls_malloc((size_t)({size}) * sizeof({it}));")
                    else:
                        top.add(f"op{l} = ({it} *)ls_calloc((size_t)({size}), sizeof({it}));")
                else:
                    top.add(Decl("int64_t", f"opc{l}", "ocap"))
                    top.add(f"op{l} = ({it} *)ls_calloc((size_t)ocap + 1, sizeof({it}));")
                top.add(f"if (!op{l}) goto ls_fail;")
                self.obufs.append(("pos", l))
            if lv.kind != "dense":
                top.add(Decl("int64_t", f"occ{l}", "ocap"))
                top.add(f"oc{l} = ({it} *)ls_malloc((size_t)ocap * sizeof({it}));")
                top.add(Decl("int64_t", f"on{l}", "0"))
                top.add(f"if (!oc{l}) goto ls_fail;")
                self.obufs.append(("crd", l))
        top.add(Decl("int64_t", "ovc", "ocap"))
        top.add(f"ov = ({self.oct} *)ls_malloc((size_t)ocap * sizeof({self.oct}));")
        top.add("if (!ov) goto ls_fail;")
        self.obufs.append(("vals", None))

    def _prepare_output(self, top):
        """What the loops expect in place: a mask's or map's structure copied (and zeros where
        a mask's products accumulate), the workspace started, a transposition's row starts, or
        the sort's coordinate and value arrays."""
        mode, nd, it = self.spec.mode, len(self.outs), self.oit
        if mode in ("mask", "map"):
            # the mask's structure, and zeros where the products accumulate
            L, a = nd - 1, self.acc_by_q[self.mask_q]
            par = []
            if mode == "map" and not self.count:  # (copies as wide as the values loop after them)
                team_size(top, self.abi, "(double)mnz", name="ls_cnt", report=False)
                par = [Line("#pragma omp parallel for schedule(static) num_threads((int)ls_cnt) if(ls_cnt > 1)")]
            top.add(*par, For("t", "0", f"({self.dense_count}) + 1",
                              Block().add(f"op{L}[t] = ({it})((int64_t)p{a.slot}_{L}[t] - mb0);")))
            top.add(*par, For("t", "0", "mnz", Block().add(f"oc{L}[t] = ({it})c{a.slot}_{L}[mb0 + t];")))
            if mode == "mask":
                top.add(f"memset(ov, 0, (size_t)ocap * sizeof({self.oct}));")
            else:  # map: every stored entry of the operand gets its value; zeros are counted
                top.add(Decl("int64_t", "nz", "0"))
        if self.ws and not self.par_rows:  # (par_rows: one workspace per thread, in its region)
            top.add(workspace.fails(self._ws_init()))
            if self.ws_flag:
                top.add(workspace.fails(f"ls_ws_use(&ws, {self.ws_flag})"))
        if self.direct:
            top.add(For("t", "0", "osz0 + 1", Block().add(f"op1[t] = ({it})h[t];")),
                    Decl("int64_t", "nz", "0"))
        elif mode == "sort":
            top.add(Decl("int64_t", "tn", "0"), Decl("int64_t", "tcap", "ocap"))
            for l in range(nd):
                top.add(f"tc{l} = (int64_t *)ls_malloc((size_t)tcap * sizeof(int64_t));")
                top.add(f"if (!tc{l}) goto ls_fail;")
            top.add(f"tv = ({self.oct} *)ls_malloc((size_t)tcap * sizeof({self.oct}));")
            top.add("if (!tv) goto ls_fail;")

    def _ws_init(self):
        nd = len(self.outs)
        return f"ls_ws_init(&ws, {workspace.extent_expr(nd, self.ws_h)}, {self.abi.int(('wscap',))})"

    def _squeeze(self, L, rows):
        """The block that drops the zero values of a result whose last level ``L`` holds
        ``rows`` segments, in place, row by row (its positions rewritten, ``on{L}`` set)."""
        row = Block().add(Decl("const int64_t", "e", f"op{L}[r + 1]"))
        row.add(For("t", "s", "e", Block().add(f"oc{L}[o] = oc{L}[t];", "ov[o] = ov[t];",
                                               "o += ov[t] != 0;")))
        row.add(f"op{L}[r + 1] = ({self.oit})o;", "s = e;")
        return Block().add(Decl("int64_t", "o", "0"), Decl("int64_t", "s", "0"),
                           For("r", "0", rows, row), f"on{L} = o;")

    def mask_bound(self):
        """C expression bounding the result's entries by the entries of inputs read at the
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
            parts.append(self.abi.int(("nnz", accs[m[0]].operand)))
        return "(" + " + ".join(parts or ["0"]) + ")"

    def finish_output(self, top):
        mode = self.spec.mode
        if mode == "dense-count":
            tot = self.red_total()
            n = " * ".join(self.ext[v] for v in self.outs) or "1"
            body = Block().add(f"if (ocnt[t] < {tot}) {{ {C.reduce_step(self.stmt.reduce, 'o[t]', self.zero(), self.odt)}"
                               f"{self.fold_count()} }}")
            top.add(For("t", "0", n, body))
        if mode.startswith("dense"):
            return
        if self.direct:
            top.add("on1 = op1[osz0];", "free(h); h = NULL;")
            top.add(If("nz > 0", self._squeeze(1, "osz0")))
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
                top.add(Line("#pragma omp parallel for schedule(static) num_threads((int)ls_cnt) "
                             "if(ls_cnt > 1) reduction(+:nz)"),
                        For("t", "0", "mnz", Block().add("nz += (ov[t] == 0);")))
            squeeze = self._squeeze(L, self.dense_count)
            top.add(squeeze if mode == "mask" else If("nz > 0", squeeze, Block().add(f"on{L} = mnz;")))
        nd = len(self.outs)
        it = self.oit
        if self.kd < nd and self.olv[self.kd].kind == "compressed":
            l = self.kd
            if l == 0 and self.ocoo:
                top.add(f"op0[1] = on{nd - 1};")
            elif l == 0:
                top.add("op0[1] = on0;")
            elif mode not in ("mask", "map"):  # (those write every row's end)
                body = Block().add(f"if (op{l}[t] < op{l}[t - 1]) op{l}[t] = op{l}[t - 1];")
                top.add(For("t", "1", f"({self.dense_count}) + 1", body))
        # shrink to the final sizes (capacity came from an estimate), then hand buffers back:
        # pointers into p[], counts into d[]
        leaf = f"on{nd - 1}"
        for kind, l in self.obufs:
            if kind == "crd":
                top.add(f"LS_FIT({it}, oc{l}, {leaf if self.ocoo else f'on{l}'}, occ{l});")
            elif kind == "vals":
                top.add(f"LS_FIT({self.oct}, ov, {leaf}, ovc);")
            elif kind == "pos" and l != self.kd:
                top.add(f"LS_FIT({it}, op{l}, on{l - 1} + 1, opc{l});")
        publish = []
        for kind, l in self.obufs:
            name = {"pos": f"op{l}", "crd": f"oc{l}", "vals": "ov"}[kind]
            publish.append(f"{self.abi.ptr(('obuf', kind, l))} = (void *){name};")
        top.add(*publish)
        for l in range(nd):
            if self.olv[l].kind != "dense":
                top.add(f"{self.abi.int(('ocount', l))} = on{l};")
        # failure path (a jump from a failed allocation): partial output buffers back through
        # p[] (the glue frees them), temporaries freed here
        self.fail_path = (["return 0;", "ls_fail:"] + publish + [f"free({n});" for n in self.temps]
                          + ([workspace.FREE] if self.ws else []) + ["return 1;"])

    def _plain_transposition(self):
        """The one sparse access of a transposition (``direct``) that reads it at the loop
        order's own subscripts with nothing else read at a coordinate (``A.T`` to CSR,
        ``tocsc``, ``2 * A.T``), whose count pass then needs the coordinates alone; else None
        (``emit_transposition_counts``)."""
        a = self._sole_walk()
        if (a is None or [lv.kind for lv in a.spec.format.levels] != ["dense", "compressed"]
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
        team_size(top, self.abi, f"(double)({level_count(a.spec.format, a.slot, 1)})")
        top.add("h = (int64_t *)ls_calloc((size_t)ls_nt * ((size_t)osz0 + 2), sizeof(int64_t));",
                "if (!h) goto ls_fail;")
        self.row_range = self._row_range(p, n)
        region = Block().add(
            Decl("const int64_t", "tid", "(int64_t)omp_get_thread_num()"),
            Decl("int64_t *", "ht", "h + tid * (osz0 + 2)"), *self.row_range,
            For("t", f"(int64_t){p}[ls_r0]", f"(int64_t){p}[ls_r1]",
                Block().add(f"ht[(int64_t){c}[t] + 1]++;")))
        top.add(Line("#pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)"), region)
        cursor = Block().add(Decl("int64_t *", "hh", "h + tt * (osz0 + 2)"),
                             Decl("const int64_t", "k", "hh[r + 1]"), "hh[r] = at;", "at += k;")
        top.add(Block().add(Decl("int64_t", "at", "0"),
                            For("r", "0", "osz0", Block().add(For("tt", "0", "ls_nt", cursor))),
                            "h[osz0] = at;"))
        self.row_span = ("ls_r0", "ls_r1")
