"""Stores at the leaves (``StoreMixin``): what each result mode does with the statement's value
at a loop point (a dense store or sum, a counted max/min/product, an append to a sparse result,
closing each output level as its loop ends, a coordinate triple for the sort, a mask's or map's
position, a workspace insert), and the counting lines of an instrumented build (``ls.opcount``).
"""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.compiler.lower import counting, workspace
from lazysparse.compiler.loopir.nodes import Block, Decl, If, Line


class StoreMixin:
    """Stores at the leaves. Reads the mode and the result's state that ``ResultMixin``
    declared; sets ``zeros_after`` (mode "map") and ``unzeroed``."""

    def zero(self):
        return f"({self.oct})0"

    def red_total(self):
        return " * ".join(self.ext[r] for r in self.red) or "1"

    def dense_addr(self):
        # dense results are allocated C-contiguous: the last stride is 1
        n = len(self.outs)
        return " + ".join(self._term(self.vname[v], "1" if m == n - 1 else f"os{m}")
                          for m, v in enumerate(self.outs)) or "0"

    def emit_count(self, blk):
        """One evaluation of the statement here: its operations, the reduction folding it in,
        and a load per access (a sparse one only where its presence test holds)."""
        loads = [(counting.slot(a.slot), "1" if a.spec.dense or a.pres == "1" else f"!!({a.pres})")
                 for a in self.accs]
        text = counting.line(counting.expr_ops(self.expr, self.invariant), loads,
                             self.stmt.reduce if self.red else None)
        if text:
            blk.add(text)

    def fold_count(self):
        """The implicit zeros folded into a max/min/prod once per result point."""
        return " " + counting.line([0, 0, 0, 0], [], self.stmt.reduce) if self.count else ""

    def emit_leaf(self, blk):
        if self.counting_inserts:
            blk.add("ls_ins++;")
            return
        val = self.leaf_value()
        mode = self.spec.mode
        if self.count:
            self.emit_count(blk)
        if self.in_acc:
            blk.add(C.reduce_step(self.stmt.reduce, self.acc_name, val, self.odt), "cnt++;")
        elif mode == "dense":
            blk.add(f"o[{self.dense_addr()}] = {val};")
        elif mode == "dense-inter":
            self.unzeroed |= not self.in_slab
            tgt = (f"{self.row_acc}[{self.vname[self.order[-1]]}]" if self.row_acc
                   else f"o[{self.dense_addr()}]")
            if self.atomic:  # tiles of nonzeros on threads share the rows they cut
                blk.add(Line("#pragma omp atomic"))
            blk.add(C.reduce_step("sum", tgt, val, self.odt))
        elif mode == "dense-count":
            addr = self.dense_addr()
            blk.add(Decl(self.oct, "w", val))
            blk.add(C.reduce_step(self.stmt.reduce, f"o[{addr}]", "w", self.odt), f"ocnt[{addr}]++;")
        elif mode == "append":
            # computed zeros are not stored (scipy's rule; dense sources become truly sparse)
            blk.add(Decl(self.oct, "w", val))
            tgt = Block()
            blk.add(If("w != 0", tgt))
            self.append_leaf(tgt, "w")
        elif mode == "sort":
            nd = len(self.outs)
            if self.direct:  # (the count pass, then the placing one)
                # every entry is counted and placed, its value read only when placed; the zeros
                # the placing pass counts are squeezed out after it (finish_output). Counting
                # only nonzeros made the count pass read every value too (tocsc 1.3x scipy's)
                r, c = self.vname[self.ovars[0]], self.vname[self.ovars[1]]
                if not self.placing:
                    blk.add(f"h[{r} + 1]++;")
                    return
                blk.add(Decl(self.oct, "w", val), Decl("const int64_t", "at", f"{self.hname}[{r}]++"),
                        f"oc1[at] = ({self.oit}){c};", "ov[at] = w;", "nz += (w == 0);")
                return
            if not self.red:  # no duplicates to combine: a zero can be dropped right away
                blk.add(Decl(self.oct, "w", val))
                val = "w"
                inner = Block()
                blk.add(If("w != 0", inner))
                blk = inner
            grow = Block().add(Decl("int64_t", "nc_", "tcap * 2"))
            for l in range(nd):
                grow.add(f"LS_RESIZE(int64_t, tc{l}, nc_);")
            grow.add(f"LS_RESIZE({self.oct}, tv, nc_);", "tcap = nc_;")
            blk.add(If("tn >= tcap", grow))
            for l, v in enumerate(self.ovars):
                blk.add(f"tc{l}[tn] = {self.vname[v]};")
            blk.add(f"tv[tn] = {val};", "tn++;")
        elif mode == "map":  # at the operand's position: the result has its structure (a copy)
            pos = self.acc_by_q[self.mask_q].at[-1]  # (its last level: flat walks set it alone)
            blk.add(Decl(self.oct, "w", val), f"ov[({pos}) - mb0] = w;")
            # a vectorised call of libm's (libmvec) in a loop that also carries the count ran
            # 2.8x slower than the call alone (expm1, 150k values: 359 against 130 us; a count
            # pass after it costs 25): its vector registers are saved and restored around every
            # call. Such values are counted after the loop (finish_output)
            self.zeros_after = not self.count and C.calls_libm(val)
            if not self.zeros_after:
                blk.add("nz += (w == 0);")
        elif mode == "mask":  # at the mask's position: the result has its structure
            pos = self.acc_by_q[self.mask_q].at[len(self.outs) - 1]
            blk.add(C.reduce_step("sum", f"ov[({pos}) - mb0]", val, self.odt))
        elif self.ws:  # Insert; a full accumulation array is sorted and merged (ISM)
            blk.add(f"if ({workspace.INSERT}{workspace.key_expr(self, self.ws_h)}, {val})) "
                    + workspace.fails("ls_ism_spill(&ws, &ism)"))

    def emit_output_level(self, depth, v, inner):
        """Recurse, then close this output level (append mode)."""
        mode = self.spec.mode
        appends = mode == "append" or (self.ws and depth < self.ws_h and not self.counting_inserts)
        if not appends or depth >= len(self.outs) or self.ocoo:
            self._recurse(depth, inner)
            return
        l = depth  # in append mode the first loops are the output levels in storage order
        lv = self.olv[l]
        last = l == len(self.outs) - 1
        x = self.vname[v]
        if lv.kind == "dense":
            parent = f"od{l - 1}" if l > 0 else "0"
            inner.add(Decl("int64_t", f"od{l}", f"({parent}) * osz{l} + {x}"))
            self._recurse(depth, inner)
            if self.kd == l + 1 and l + 1 < len(self.outs):
                inner.add(f"op{l + 1}[od{l} + 1] = on{l + 1};")
            return
        if last:
            self._recurse(depth, inner)
            return
        inner.add(Decl("int64_t", f"st{l}", f"on{l + 1}"))
        self._recurse(depth, inner)
        it = self.oit
        close = Block()
        close.add(f"LS_GROW({it}, oc{l}, occ{l}, on{l} + 1);")
        close.add(f"if (on{l} + 2 > opc{l + 1}) {{ int64_t c_ = opc{l + 1}; LS_GROW({it}, op{l + 1}, c_, on{l} + 2); opc{l + 1} = c_; }}")
        close.add(f"oc{l}[on{l}] = ({it}){x};", f"on{l}++;", f"op{l + 1}[on{l}] = ({it})on{l + 1};")
        inner.add(If(f"on{l + 1} > st{l}", close))

    def _recurse(self, depth, inner):
        if self.ws and depth == self.ws_h - 1 and not self.counting_inserts and self.ws_flag:
            # the policy's two inserts, a loop nest each, picked per call as measured
            # (runtime/tuning.py; a choice per row inside the insert, a flag read per product,
            # was slower everywhere, and one per block of rows timed in the kernel chose badly)
            nest = Block()
            self.emit(depth + 1, nest)
            inner.add(If(self.ws_flag, workspace.with_insert_b(nest), nest))
        else:
            self.emit(depth + 1, inner)
        if self.ws and depth == self.ws_h - 1 and not self.counting_inserts:
            # the last hoisted loop's iteration is done: its entries go out in order
            dense = all(lv.kind == "dense" for lv in self.olv[:self.ws_h])
            workspace.emit_flush(self, inner, self.ws_h, f"od{depth}" if dense else "0")

    def append_leaf(self, blk, val):
        it = self.oit
        nd = len(self.outs)
        L = nd - 1
        if self.ocoo:
            blk.add(f"if (on{L} >= ovc) {{")
            for l in range(nd):
                blk.add(f"  {{ int64_t c_ = occ{l}; LS_GROW({it}, oc{l}, c_, on{L} + 1); occ{l} = c_; }}")
            blk.add(f"  LS_GROW({self.oct}, ov, ovc, on{L} + 1);")
            blk.add("}")
            for l, v in enumerate(self.ovars):
                blk.add(f"oc{l}[on{L}] = ({it}){self.vname[v]};")
            blk.add(f"ov[on{L}] = {val};")
            for l in range(nd - 1):
                blk.add(f"on{l}++;")
            blk.add(f"on{L}++;")
            return
        x = self.vname[self.ovars[L]]
        blk.add(f"if (on{L} >= ovc) {{ int64_t c_ = occ{L}; LS_GROW({it}, oc{L}, c_, on{L} + 1); occ{L} = c_; "
                f"LS_GROW({self.oct}, ov, ovc, on{L} + 1); }}")
        blk.add(f"oc{L}[on{L}] = ({it}){x};", f"ov[on{L}] = {val};", f"on{L}++;")
