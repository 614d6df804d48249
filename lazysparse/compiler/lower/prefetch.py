"""Software prefetches ahead of sparse walks (``PrefetchMixin``): the segments a driver's coming
coordinates select in other operands (the rows of B in Gustavson's SpGEMM), the dense rows a
vector row will gather (SpMM's ``X[k, :]``), and a page-ahead stream of a segment sum's own
entries when they outgrow the last-level cache; each gated by a test made once per call.
"""
from __future__ import annotations

import numpy as np

from lazysparse.compiler.lower.operands import level_count
from lazysparse.compiler.loopir.nodes import Decl


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
        end = level_count(fmt, slot, lvl)
        if end is None:
            return None
        name = f"st{slot}_{lvl}"
        size = f"(int64_t)({end}) * (int64_t)(sizeof(c{slot}_{lvl}[0]) + sizeof(v{slot}[0]))"
        self.sched.add(Decl("const int", name, f"{size} >= {self.abi.int(('streammin',))}"))
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
        end = level_count(drv.spec.format, drv.slot, drv.lvl)
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
                    or fmt.levels[l].kind != "dense" or a.lvars[l] != v
                    or fmt.levels[l + 1].kind != "compressed"):
                continue
            pos = f"p{a.slot}_{l + 1}"
            at = (lambda t: t) if a.pos == "0" else (lambda t, b=a.pos, n=f"n{a.slot}_{l}": f"({b}) * {n} + {t}")
            # only where the rows are short: on longer ones the row's own loop hides the
            # latency and the prefetches cost more than they save (cage10, 13 a row: 8% slower)
            # and only where its entries outgrow a cache (cryg2500's A @ A, 150 KB: 3% slower)
            rows = level_count(fmt, a.slot, l)
            flag = f"pf{a.slot}_{l + 1}"
            if flag not in self.pf_flags:
                self.pf_flags.add(flag)
                nnz = f"(int64_t){pos}[{rows}]"
                size = f"{nnz} * (int64_t)(sizeof(c{a.slot}_{l + 1}[0]) + sizeof(v{a.slot}[0]))"
                self.sched.add(Decl("const int", flag, f"{nnz} <= {self.SEG_SHORT} * ({rows}) && {size} > {self.SEG_CACHED}"))
            body.add(f"if ({flag} && {j} + {far} < {end}) __builtin_prefetch(&{pos}[{at(f'{lv_crd}[{j} + {far}]')}]);")
            body.add(f"if ({flag} && {j} + {near} < {end}) {{ const int64_t h_ = (int64_t){pos}[{at(f'{lv_crd}[{j} + {near}]')}]; "
                     f"__builtin_prefetch(&c{a.slot}_{l + 1}[h_]); __builtin_prefetch(&v{a.slot}[h_]); }}")

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
            gate = ""
            if w * size < self.PREFETCH_MIN_BYTES:
                gate = f"{self.straddles(a, e.indices.index(v), size)} && "
            saved = dict(self.vname)
            self.vname[v], self.vname[tail] = f"{lv_crd}[{j} + {self.ROW_AHEAD}]", "0"
            row = self.value_of_access(a, e)
            self.vname.clear()
            self.vname.update(saved)
            step = 64 // size
            body.add(f"if ({gate}{j} + {self.ROW_AHEAD} < {end}) for (int64_t lpf = 0; lpf < {w}; lpf += {step}) "
                     f"__builtin_prefetch(&{row} + lpf);")

    def straddles(self, a, m, size):
        """The name of a flag, set once per call, that is 1 when the rows of dense operand
        ``a`` along its axis ``m`` do not all start on a 64-byte line (its buffer is not on a
        line, or its row stride is not a multiple of 64 bytes)."""
        name = f"lsx{a.slot}"
        if name not in self.sched_flags.values():
            self.sched_flags[("straddles", a.slot)] = name
            stride = self._stride(a.spec, a.slot, m)
            self.sched.add(Decl("const int", name, f"((uintptr_t)v{a.slot} % 64 != 0) || "
                                                   f"(((int64_t)({stride}) * {size}) % 64 != 0)"))
        return name
