"""Software prefetches ahead of sparse walks (``PrefetchMixin``): the segments a driver's coming
coordinates select in other operands (the rows of B in Gustavson's SpGEMM), the dense rows a
vector row will gather (SpMM's ``X[k, :]``), and a page-ahead stream of a segment sum's own
entries when they outgrow the last-level cache; each gated by a test made once per call.
"""
from __future__ import annotations

import numpy as np

from lazysparse.compiler.lower.operands import level_count_expr
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block


def _entry_bytes(slot, lvl):
    """The bytes of one entry of operand ``slot``'s level ``lvl`` (coordinate and value), as an
    index."""
    first = E.Int(0)
    return E.Cast(T.INDEX, E.Paren(E.add(E.SizeOf(E.load(f"c{slot}_{lvl}", first)),
                                         E.SizeOf(E.load(f"v{slot}", first)))))


def _fetch(addr):
    """A plain prefetch of the element at ``addr`` (kept in cache)."""
    return S.Prefetch(addr, locality=3)


def _when(cond, stmt):
    """``if (cond) stmt`` on one line (``stmt`` a Block: in braces)."""
    return S.If(cond, stmt, oneline=True, bare=not isinstance(stmt, Block))


class PrefetchMixin:
    """Prefetches. Owns ``pf_flags``; declares its gates in ``sched``."""

    def stream_gate(self, slot, lvl):
        """The C condition (declared once per call) under which the segment sums driven by
        operand ``slot``'s level ``lvl`` prefetch its values and coordinates a page ahead
        (``stream_ahead``: the vector and split loops at each segment's start and every step,
        ``simd.stream_prefetch``; the plain loop gained nothing): entries of at least
        ``("streammin",)`` bytes (runtime/cpu_caches.py: half the last-level cache), which no cache
        keeps from call to call. On R-MAT 2^20 (16M entries, 192 MB; half the rows empty, the
        median one entry) the hardware prefetchers do not run far enough ahead of the short
        rows' loads: the vector loop took 7.9 ms against 10.1, the split loop 8.8 against 9.2
        (docs/design.md, "Streamed segment sums"); in cache the prefetches cost (MIT8 0.095 ms
        against 0.082). None where the level's entry count is not known up front."""
        fmt = self.spec.inputs[slot].format
        end = level_count_expr(fmt, slot, lvl)
        if end is None:
            return None
        name = f"st{slot}_{lvl}"
        size = E.mul(E.Cast(T.INDEX, E.Paren(end)), _entry_bytes(slot, lvl))
        self.sched.add(S.Declare(name, T.INT, E.Binary(">=", size, self.abi.int_expr(("streammin",))), const=True))
        return name

    # entries of the driving level ahead of the loop: a segment's position, then (half as far)
    # its coordinates and values once that position has arrived (16/8 against 32/16 on A @ A:
    # as fast or faster on the six matrices tried)
    SEG_AHEAD = 16

    SEG_SHORT = 10  # mean entries a row, at most, of the rows prefetched

    SEG_CACHED = 256 << 10  # bytes of entries (coordinates and values) that an L2 holds anywhere

    def prefetch_segments(self, v, drv, j, body):
        """Prefetch, a few entries of the driver ahead, the segments that the coordinate it
        will yield selects in other operands: a sparse access whose next level is dense over
        ``v`` and whose level below that is compressed and last (CSR ``B[k, :]`` in a loop
        over ``A[i, :]``'s ``k``: Gustavson's SpGEMM, masked products, any product with a CSR
        right operand). Each such row is a chain of three dependent loads (coordinate,
        position, entries) at an address no hardware prefetcher predicts; on short rows
        (meshes, circuits) the loop waits on them more than it computes. Bounded by the
        driver's whole level, so short rows prefetch the next rows' entries too; every index
        read stays inside arrays that validation bounded (a coordinate is below the dense
        extent it indexes)."""
        if not self.SEG_AHEAD:
            return
        end = level_count_expr(drv.spec.format, drv.slot, drv.lvl)
        if end is None:
            return
        lv_crd = f"c{drv.slot}_{drv.lvl}"
        if self.row_vec is not None:
            self.prefetch_rows(v, j, end, lv_crd, body)
        far, near = self.SEG_AHEAD, self.SEG_AHEAD // 2
        for a in self.accs:
            fmt = a.spec.format if not a.spec.dense else None
            l = a.lvl
            if (a is drv or fmt is None or a.pres != "1" or l + 2 != fmt.ndim
                    or fmt.levels[l].is_sparse or a.lvars[l] != v
                    or not fmt.levels[l + 1].has_pos):
                continue
            pos = f"p{a.slot}_{l + 1}"

            def at(t, a=a, l=l):  # the row of a's next level at coordinate t of the driver
                return t if a.pos == "0" else E.add(E.mul(E.Paren(E.var(a.pos)), f"n{a.slot}_{l}"), t)
            # only where the rows are short: on longer ones the row's own loop hides the
            # latency and the prefetches cost more than they save (cage10, 13 a row: 8% slower)
            # and only where its entries outgrow a cache (cryg2500's A @ A, 150 KB: 3% slower)
            rows = level_count_expr(fmt, a.slot, l)
            flag = f"pf{a.slot}_{l + 1}"
            if flag not in self.pf_flags:
                self.pf_flags.add(flag)
                nnz = E.Cast(T.INDEX, E.load(pos, rows))
                short = E.Binary("<=", nnz, E.mul(self.SEG_SHORT, E.Paren(rows)))
                big = E.Binary(">", E.mul(nnz, _entry_bytes(a.slot, l + 1)), E.Int(self.SEG_CACHED))
                self.sched.add(S.Declare(flag, T.INT, E.Binary("&&", short, big), const=True))

            def ahead(k):  # the flag, and the driver's entry k ahead is in its level
                return E.Binary("&&", E.Var(flag), E.lt(E.add(j, k), end))
            body.add(_when(ahead(far), _fetch(E.AddrOf(E.load(pos, at(E.load(lv_crd, E.add(j, far))))))))
            start = E.Cast(T.INDEX, E.load(pos, at(E.load(lv_crd, E.add(j, near)))))
            body.add(_when(ahead(near), Block().add(
                S.Declare("h_", T.INDEX, start, const=True),
                _fetch(E.AddrOf(E.load(f"c{a.slot}_{l + 1}", "h_"))), _fetch(E.AddrOf(E.load(f"v{a.slot}", "h_"))))))

    ROW_AHEAD = 4

    PREFETCH_MIN_BYTES = 256  # narrower rows are prefetched only when they straddle lines

    def prefetch_rows(self, v, j, end, lv_crd, body):
        """In a vector row (``emit_vector_row``): prefetch, ``ROW_AHEAD`` entries of the
        driver ahead, every cache line of the dense rows its coordinate will select (SpMM's
        ``X[k, :]``), an address no hardware prefetcher predicts (C harness, 128 columns,
        37700 x 37700 with 15 a row: 44.7 -> 40.3 ms, one thread). A row of fewer than
        ``PREFETCH_MIN_BYTES`` that starts on a cache line (runtime/aligned.py) is one or two
        lines, as cheap to wait for as the prefetch's instructions are to run: those rows are
        prefetched only when the operand's rows straddle lines, a test made once per call
        (16 columns, one thread, rows on lines: 1.01-1.37x faster without; rows 16 bytes past
        a line: 0.94-1.17x, so they keep it; docs/design.md, "Aligned results")."""
        w, tail = self.row_width, self.order[-1]
        for a in self.accs:
            if not a.spec.dense or not a.spec.ndim:
                continue
            e = a.acc
            if sum(ix == v for ix in e.indices) != 1 or sum(ix == tail for ix in e.indices) != 1:
                continue
            size = np.dtype(a.spec.dtype).itemsize
            cond = E.lt(E.add(j, self.ROW_AHEAD), end)
            if w * size < self.PREFETCH_MIN_BYTES:
                cond = E.Binary("&&", E.Var(self.straddles(a, e.indices.index(v), size)), cond)
            saved = dict(self.vname)
            self.vname[v], self.vname[tail] = E.load(lv_crd, E.add(j, self.ROW_AHEAD)), E.Int(0)
            row = self.value_of_access(a, e)
            self.vname.clear()
            self.vname.update(saved)
            lines = S.For("lpf", E.Int(0), E.Int(w), _fetch(E.add(E.AddrOf(row), "lpf")),
                          step=S.Update(E.Var("lpf"), "+", E.Int(64 // size)), oneline=True)
            body.add(_when(cond, lines))

    def straddles(self, a, m, size):
        """The name of a flag, set once per call, that is 1 when the rows of dense operand
        ``a`` along its axis ``m`` do not all start on a 64-byte line (its buffer is not on a
        line, or its row stride is not a multiple of 64 bytes)."""
        name = f"lsx{a.slot}"
        if name not in self.sched_flags.values():
            self.sched_flags[("straddles", a.slot)] = name
            stride = E.Paren(E.var(self._stride(a.spec, a.slot, m)))

            def off_line(x):  # ``x`` is not a multiple of 64 (bytes)
                return E.Paren(E.Binary("!=", E.Binary("%", x, E.Int(64)), E.Int(0)))
            buf = E.Cast(T.Scalar("uintptr"), E.Var(f"v{a.slot}"))
            row = E.Paren(E.mul(E.Cast(T.INDEX, stride), size))
            self.sched.add(S.Declare(name, T.INT, E.Binary("||", off_line(buf), off_line(row)), const=True))
        return name
