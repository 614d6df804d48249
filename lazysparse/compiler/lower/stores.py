"""Stores at the leaves (``StoreMixin``): what each result mode does with the statement's value
at a loop point (a dense store or sum, a counted max/min/product, an append to a sparse result,
closing each output level as its loop ends, a coordinate triple for the sort, a mask's or map's
position, a workspace insert), and the counting lines of an instrumented build (``ls.opcount``).
"""
from __future__ import annotations

from lazysparse.compiler.lower import counting, workspace
from lazysparse.compiler.lower.level_builder import LevelIR
from lazysparse.compiler.lower.teams import sum_of, x
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block
from lazysparse.compiler.loopir.walk import walk


def _v(name):
    return E.Var(name)


def _i(n):
    return E.Int(n)


def _load(name, index):
    return E.Load(_v(name), x(index))


def _inc(name):
    return S.Update(x(name), "+", _i(1))


class StoreMixin:
    """Stores at the leaves. Reads the mode and the result's state that ``ResultMixin``
    declared; sets ``zeros_after`` (mode "map") and ``unzeroed``."""

    def zero_value(self):
        """The result type's zero."""
        return E.Cast(self.val_t, _i(0))

    def red_total_expr(self):
        """How many points a result point's reduction runs over."""
        return sum_of([x(self.ext[r]) for r in self.red], "*") or _i(1)

    def dense_index(self):
        """The dense result's element at the current point (C-contiguous: the last stride 1)."""
        n = len(self.outs)
        terms = [E.Paren(x(self.vname[v])) if m == n - 1 else
                 E.Binary("*", E.Paren(x(self.vname[v])), _v(f"os{m}")) for m, v in enumerate(self.outs)]
        return sum_of(terms) or _i(0)

    def zero(self):
        return self.zero_value()

    def emit_count(self, blk):
        """One evaluation of the statement here: its operations, the reduction folding it in,
        and a load per access (a sparse one only where its presence test holds)."""
        loads = [(counting.slot(a.slot), _i(1) if a.spec.dense or a.pres in ("1", _i(1)) else
                  E.Unary("!", E.Unary("!", E.Paren(x(a.pres))))) for a in self.accs]
        tally = counting.count_stmts(counting.expr_ops(self.expr, self.invariant), loads,
                                     self.stmt.reduce if self.red else None)
        if tally is not None:
            blk.add(tally)

    def fold_count_stmts(self):
        """The implicit zeros folded into a max/min/prod once per result point: their count."""
        return (counting.count_stmts([0, 0, 0, 0], [], self.stmt.reduce),) if self.count else ()

    def emit_leaf(self, blk):
        if self.counting_inserts:
            blk.add(_inc("ls_ins"))
            return
        val = self.leaf_value()
        mode = self.spec.mode
        if self.count:
            self.emit_count(blk)
        w = _v("w")
        if self.in_acc:
            blk.add(S.Reduce(self.stmt.reduce, x(self.acc_name), val, self.odt), _inc("cnt"))
        elif mode == "dense":
            blk.add(S.Assign(_load("o", self.dense_index()), val))
        elif mode == "dense-inter":
            self.unzeroed |= not self.in_slab
            tgt = (_load(self.row_acc, self.vname[self.order[-1]]) if self.row_acc
                   else _load("o", self.dense_index()))
            step = S.Reduce("sum", tgt, val, self.odt)
            # tiles of nonzeros on threads share the rows they cut
            blk.add(S.Atomic(step) if self.atomic else step)
        elif mode == "dense-count":
            addr = self.dense_index()
            blk.add(S.Declare("w", self.val_t, val))
            blk.add(S.Reduce(self.stmt.reduce, _load("o", addr), w, self.odt), _inc(_load("ocnt", addr)))
        elif mode == "append":
            # computed zeros are not stored (scipy's rule; dense sources become truly sparse)
            blk.add(S.Declare("w", self.val_t, val))
            tgt = Block()
            blk.add(S.If(E.Binary("!=", w, _i(0)), tgt))
            self.append_leaf(tgt, w)
        elif mode == "sort":
            self._emit_sort_leaf(blk, val)
        elif mode == "map":  # at the operand's position: the result has its structure (a copy)
            pos = self.acc_by_q[self.mask_q].at[-1]  # (its last level: flat walks set it alone)
            blk.add(S.Declare("w", self.val_t, val), S.Assign(_load("ov", E.Binary("-", E.Paren(x(pos)), _v("mb0"))), w))
            # a vectorised call of libm's (libmvec) in a loop that also carries the count ran
            # 2.8x slower than the call alone (expm1, 150k values: 359 against 130 us; a count
            # pass after it costs 25): its vector registers are saved and restored around every
            # call. Such values are counted after the loop (finish_output)
            self.zeros_after = not self.count and _vector_math(val)
            if not self.zeros_after:
                blk.add(S.Update(_v("nz"), "+", E.Paren(E.Binary("==", w, _i(0)))))
        elif mode == "mask":  # at the mask's position: the result has its structure
            pos = self.acc_by_q[self.mask_q].at[len(self.outs) - 1]
            blk.add(S.Reduce("sum", _load("ov", E.Binary("-", E.Paren(x(pos)), _v("mb0"))), val, self.odt))
        elif self.ws:  # Insert; a full accumulation array is sorted and merged (ISM)
            # (the workspace's second insert is put in by workspace.with_insert_b)
            insert = E.SupportCall("ws_insert", (workspace.WS, x(workspace.key_expr(self, self.ws_h)), val))
            spill = E.SupportCall("ism_spill", (workspace.WS, workspace.ISM))
            blk.add(S.If(insert, S.If(spill, S.Fail(), oneline=True), oneline=True, bare=True))

    def _emit_sort_leaf(self, blk, val):
        """Mode "sort": a transposition's count or placing pass (``direct``), else the entry's
        coordinates and value appended to the triples the assembly sorts."""
        nd, w = len(self.outs), _v("w")
        if self.direct:  # (the count pass, then the placing one)
            # every entry is counted and placed, its value read only when placed; the zeros
            # the placing pass counts are squeezed out after it (finish_output). Counting
            # only nonzeros made the count pass read every value too (tocsc 1.3x scipy's)
            r, c = _v(self.vname[self.ovars[0]]), _v(self.vname[self.ovars[1]])
            if not self.placing:
                blk.add(_inc(_load("h", E.Binary("+", r, _i(1)))))
                return
            at = _v("at")
            blk.add(S.Declare("w", self.val_t, val), S.Declare("at", T.INDEX, E.PostInc(_load(self.hname, r)), const=True),
                    S.Assign(E.Load(_v("oc1"), at), E.Cast(self.idx_t, c)), S.Assign(E.Load(_v("ov"), at), w),
                    S.Update(_v("nz"), "+", E.Paren(E.Binary("==", w, _i(0)))))
            return
        if not self.red:  # no duplicates to combine: a zero can be dropped right away
            blk.add(S.Declare("w", self.val_t, val))
            val = w
            inner = Block()
            blk.add(S.If(E.Binary("!=", w, _i(0)), inner))
            blk = inner
        nc, tn = _v("nc_"), _v("tn")
        grow = Block().add(S.Declare("nc_", T.INDEX, E.Binary("*", _v("tcap"), _i(2))))
        for l in range(nd):
            grow.add(S.Resize(T.INDEX, _v(f"tc{l}"), nc))
        grow.add(S.Resize(self.val_t, _v("tv"), nc), S.Assign(_v("tcap"), nc))
        blk.add(S.If(E.Binary(">=", tn, _v("tcap")), grow))
        for l, v in enumerate(self.ovars):
            blk.add(S.Assign(E.Load(_v(f"tc{l}"), tn), x(self.vname[v])))
        blk.add(S.Assign(E.Load(_v("tv"), tn), val), _inc(tn))

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
        xv = _v(self.vname[v])
        on, on1 = _v(f"on{l}"), _v(f"on{l + 1}")
        if lv.is_dense:
            parent = _v(f"od{l - 1}") if l > 0 else _i(0)
            inner.add(S.Declare(f"od{l}", T.INDEX, lv.level_kind.locate(LevelIR.output(l), parent, xv)))
            self._recurse(depth, inner)
            if self.kd == l + 1 and l + 1 < len(self.outs):
                inner.add(S.Assign(_load(f"op{l + 1}", E.Binary("+", _v(f"od{l}"), _i(1))), on1))
            return
        if last:
            self._recurse(depth, inner)
            return
        inner.add(S.Declare(f"st{l}", T.INDEX, on1))
        self._recurse(depth, inner)
        it, c_ = self.idx_t, _v("c_")
        opc = _v(f"opc{l + 1}")
        close = Block()
        close.add(S.Grow(it, _v(f"oc{l}"), _v(f"occ{l}"), E.Binary("+", on, _i(1))))
        close.add(S.If(E.Binary(">", E.Binary("+", on, _i(2)), opc), S.Inline((
            S.Declare("c_", T.INDEX, opc), S.Grow(it, _v(f"op{l + 1}"), c_, E.Binary("+", on, _i(2))), S.Assign(opc, c_))),
            oneline=True))
        close.add(S.Assign(E.Load(_v(f"oc{l}"), on), E.Cast(it, xv)), _inc(on),
                  S.Assign(E.Load(_v(f"op{l + 1}"), on), E.Cast(it, on1)))
        inner.add(S.If(E.Binary(">", on1, _v(f"st{l}")), close))

    def _recurse(self, depth, inner):
        if self.ws and depth == self.ws_h - 1 and not self.counting_inserts and self.ws_flag:
            # the policy's two inserts, a loop nest each, picked per call as measured
            # (runtime/tuning.py; a choice per row inside the insert, a flag read per product,
            # was slower everywhere, and one per block of rows timed in the kernel chose badly)
            nest = Block()
            self.emit(depth + 1, nest)
            inner.add(S.If(x(self.ws_flag), workspace.with_insert_b(nest), nest))
        else:
            self.emit(depth + 1, inner)
        if self.ws and depth == self.ws_h - 1 and not self.counting_inserts:
            # the last hoisted loop's iteration is done: its entries go out in order
            dense = all(lv.is_dense for lv in self.olv[:self.ws_h])
            workspace.emit_flush(self, inner, self.ws_h, f"od{depth}" if dense else "0")

    def append_leaf(self, blk, val):
        it, vt = self.idx_t, self.val_t
        nd = len(self.outs)
        L = nd - 1
        on, c_ = _v(f"on{L}"), _v("c_")
        more = E.Binary("+", on, _i(1))

        def grow_crd(l):  # (through a copy of the capacity: LS_GROW's argument is a variable)
            return S.Scope((S.Declare("c_", T.INDEX, _v(f"occ{l}")), S.Grow(it, _v(f"oc{l}"), c_, more),
                            S.Assign(_v(f"occ{l}"), c_)), oneline=True)
        if self.ocoo:
            blk.add(S.If(E.Binary(">=", on, _v("ovc")), Block().add(
                *[grow_crd(l) for l in range(nd)], S.Grow(vt, _v("ov"), _v("ovc"), more))))
            for l, v in enumerate(self.ovars):
                blk.add(S.Assign(E.Load(_v(f"oc{l}"), on), E.Cast(it, x(self.vname[v]))))
            blk.add(S.Assign(E.Load(_v("ov"), on), x(val)))
            for l in range(nd - 1):
                blk.add(_inc(f"on{l}"))
            blk.add(_inc(on))
            return
        xv = x(self.vname[self.ovars[L]])
        blk.add(S.If(E.Binary(">=", on, _v("ovc")), S.Inline((
            S.Declare("c_", T.INDEX, _v(f"occ{L}")), S.Grow(it, _v(f"oc{L}"), c_, more), S.Assign(_v(f"occ{L}"), c_),
            S.Grow(vt, _v("ov"), _v("ovc"), more))), oneline=True))
        blk.add(S.Assign(E.Load(_v(f"oc{L}"), on), E.Cast(it, xv)), S.Assign(E.Load(_v("ov"), on), x(val)), _inc(on))


def _vector_math(value):
    """Whether ``value`` calls a math function that has SIMD variants (libmvec)."""
    return any(isinstance(n, E.NumOp) and E.vector_math(n) for n in walk(value))
