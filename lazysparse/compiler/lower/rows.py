"""Fixed-width result rows (``RowMixin``): a dense result's contiguous last index kept in a local
row across the reductions below it (``o[i, :] += A[i, k] * X[k, :]``), the whole loop nest
emitted once per common width behind a dispatch at the kernel's top (``emit_versions``), the row
as vectors of the target's width where the statement allows (``emit_vector_row``), and tiles of
rows that share one pass of the loops below them (``emit_row_tiles``). Its vector types
(``VEC_TYPES``: vectors of the target's width) serve the fused lowerer too.
"""
from __future__ import annotations

from lazysparse.ir.nodes import Access, Call
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block
from lazysparse.compiler.loopir.support import VECTORS


class RowMixin:
    """Fixed-width row versions. Owns ``row_width``, ``row_acc``, ``row_vec``, ``row_tile``,
    ``_untiled``, ``in_slab`` and ``unzeroed``; sets ``ext`` of the row's index to the version's
    width while it is emitted, and ``ABI.writes_rows``."""

    ROW_WIDTHS = (8, 16, 32, 64)  # the common SpMM / dense-product widths, in registers

    def _row_tail(self, depth):
        """A dense result's last (contiguous) index is the innermost loop, dense, under the
        reductions from ``depth`` on, with every other result index bound outside them
        (``o[i, j] += A[i, k] * X[k, j]`` in order i, k, j): the row ``o[i, :]`` is reloaded and
        stored at every k. At a fixed width it can live in registers instead."""
        if self.spec.mode != "dense-inter" or depth >= len(self.order) - 1 or not self.outs:
            return False
        tail = self.order[-1]
        return (tail == self.outs[-1] and all(v in self.red for v in self.order[depth:-1])
                and set(self.outs[:-1]) <= set(self.order[:depth])
                and all(a.spec.dense or tail not in a.lvars for a in self.accs))

    def emit_versions(self, body):
        """The whole loop nest once per fixed row width and once as it is, behind ``if (N ==
        16) ... else if ...`` at the top of the kernel, when some depth has a fixed-width row
        (``_row_tail``). With the dispatch at the top each version is a loop nest of its own
        (its own OpenMP function when parallel): dispatched inside the loops, the four versions
        shared one function and gcc vectorised the 16-wide row worse (MIT8, 16 columns, one
        thread: 4.2 ms against 2.7 ms for the 16-wide version alone)."""
        if self.spec.loops is not None or not any(self._row_tail(d) for d in range(len(self.order))):
            self.emit(0, body)
            return
        tail = self.order[-1]
        n = self.ext[tail]
        chain = Block()
        self.emit(0, chain)  # the general loops, the fallback
        zeroing = []
        widths = self.ROW_WIDTHS + ((128,) if self._vector_row(128) else ())
        for w in reversed(widths):
            version = Block()
            self.row_width, self.ext[tail] = w, str(w)
            self.unzeroed = False
            self.emit(0, version)
            if not self.unzeroed:
                zeroing.append(w)
            chain = Block().add(S.If(E.Binary("==", E.var(n), E.Int(w)), version, chain))
        self.row_width, self.ext[tail] = 0, n
        # (the general loops sum into a zero-filled result: zeroing rows there would write a
        # fresh result twice, since large buffers come zeroed from the OS; bcsstk16's dense
        # A @ A, 190 MB, took 8% longer)
        self.abi.writes_rows = tuple(sorted(zeroing))
        body.add(chain)

    def _slab(self, depth):
        """Besides ``_row_tail(depth)``: the loops outside the row are exactly the result's
        other indices, each over its whole extent (no reduction around the row, no skipped
        coordinate). Every row is then summed once, start to end, so it can start at zero."""
        outs, order = self.outs, self.order
        return (not self.out_partial and depth == len(outs) - 1 and set(order[:depth]) == set(outs[:-1]))

    def emit_row(self, depth, blk, fresh=False):
        """The row ``o[i, :]`` of the version's width in a local array across the reductions
        below ``depth``: with a constant trip count the C compiler keeps it in vector registers
        (measured 2x on an 11k x 128 by 128 x 16 product). ``fresh`` (``_slab``): the row
        starts at zero instead of being loaded, and the result buffer may start uninitialised
        at this width (``ABI.writes_rows``). The glue's serial zero-fill of the whole result and
        the reload of each row cost 5-8% of GNN-1 on MIT8 and did not scale with threads;
        started here, each thread touches only its own rows."""
        w, x = self.row_width, self.vname[self.order[-1]]
        self.in_slab = fresh
        if self._vector_row(w):
            self.emit_vector_row(depth, blk, fresh)
            self.in_slab = False
            return
        self.row_acc = f"row{w}"
        elem = T.scalar(self.odt)
        blk.add(S.Declare(f"row{w}", T.Array(elem, E.Int(w))))
        row, out = E.load(f"row{w}", x), E.Load(E.Var("o"), self.dense_index())
        init = E.Cast(elem, E.Int(0)) if fresh else out
        blk.add(S.For(x, E.Int(0), E.Int(w), Block().add(S.Assign(row, init))))
        inner = Block()
        blk.add(inner)
        self.emit(depth, inner)
        blk.add(S.For(x, E.Int(0), E.Int(w), Block().add(S.Assign(out, row))))
        self.row_acc = None
        self.in_slab = False

    # The row as vectors of the target's width (loopir Vec types of no lane count; the C
    # printer's are GCC/Clang vector extensions sized by the build's target macros): gcc 12
    # vectorised the scalar row loop of a 32- or 64-wide SpMM across the entries of A instead,
    # with emulated gathers and the row in memory (bcsstk13, 64 columns, one thread: 2.1 ms,
    # against 0.64 for MKL); as vector variables the row stays in registers (C harness: 2.4x at
    # 32 and 64 columns on AVX-512, 2.2x on AVX2, 1.7x on SSE2; a vector of 64 bytes where the
    # target has only 32 was 4x slower, hence the target's width). Each lane sums its column in
    # the same order as the scalar loop: the same values (rows of WIDE_FMA bytes and more: one
    # rounding less per product). (vector type, bytes a lane) by the result's dtype:
    VEC_TYPES = {"float64": (T.target_vec("float64"), 8), "float32": (T.target_vec("float32"), 4)}

    VEC_OPS = {"add": "+", "subtract": "-", "multiply": "*"}

    def _vector_row(self, w):
        """Whether the fixed-width row of width ``w`` runs as vectors: a float result, a width
        that every target's vector divides, and a statement of ``+ - * negative`` over values of
        the result's type whose dense operands read the row's index with unit stride (a vector
        load) or not at all (a broadcast), like sparse operands (the row's index is dense)."""
        t = self.VEC_TYPES.get(self.odt)
        if t is None or self.count or (w * t[1]) % 64:
            return False
        tail = self.order[-1]

        def ok(e, it):
            if isinstance(e, Access):
                a = next(it)
                if a.spec.dtype != self.odt:
                    return False
                ms = [m for m, ix in enumerate(e.indices) if ix == tail]
                if not a.spec.dense:
                    return not ms
                return not ms or (len(ms) == 1 and self._stride(a.spec, a.slot, ms[0]) == "1")
            if not isinstance(e, Call) or e.dtype != self.odt or any(d != self.odt for d in e.in_dtypes):
                return False
            if not ((e.op in self.VEC_OPS and len(e.args) == 2) or (e.op == "negative" and len(e.args) == 1)):
                return False
            return all([ok(x, it) for x in e.args])
        return ok(self.stmt.expr, iter(self.acc_by_q))

    def emit_vector_row(self, depth, blk, fresh):
        """``emit_row`` with the row as ``w / lanes`` vectors ``rv<w>[]`` (loops over them have
        constant trip counts: unrolled, the array kept in registers)."""
        w, tail = self.row_width, self.order[-1]
        vt, isz = self.VEC_TYPES[self.odt]
        if VECTORS not in self.prelude_extra:
            self.prelude_extra.append(VECTORS)
        ln = E.lanes(isz)
        nv = E.Paren(E.Binary("/", E.Int(w), ln))
        x = self.vname[tail]
        self.vname[tail] = E.mul("lvb", ln)
        store = Block()
        for q, name in self._tile_rows(w):
            here = E.AddrOf(E.Load(E.Var("o"), self.dense_index()))
            init = E.Zero(vt) if fresh else E.Deref(E.Cast(T.Ptr(vt, const=True), here))
            lane = E.load(name, "lvb")
            blk.add(S.Declare(name, T.Array(vt, E.Binary("/", E.Int(w), ln))))
            blk.add(S.For("lvb", E.Int(0), nv, Block().add(S.Assign(lane, init))))
            store.add(S.For("lvb", E.Int(0), nv, Block().add(S.Assign(E.Deref(E.Cast(T.Ptr(vt), here)), lane))))
        self.vname[tail] = x
        self.row_vec, self.row_acc = (w, vt, ln, nv), f"rv{w}"
        inner = Block()
        blk.add(inner)
        self.emit(depth, inner)
        self.row_vec = self.row_acc = None
        blk.add(store)

    def emit_row_vector_leaf(self, blk):
        """The loop over the row's index as one vector statement per vector of the row."""
        w, vt, ln, nv = self.row_vec
        tail = self.order[-1]
        x = self.vname[tail]
        self.vname[tail] = E.mul("lvb", ln)
        self.unzeroed |= not self.in_slab

        def vec(e, it):
            if isinstance(e, Access):
                a = next(it)
                val = self.value_of_access(a, e)
                if a.spec.dense and tail in e.indices:  # (the row's vector at this lane)
                    return E.Paren(E.Deref(E.Cast(T.Ptr(vt, const=True), E.AddrOf(val))))
                return val
            args = [vec(arg, it) for arg in e.args]
            return E.Paren(E.Unary("-", args[0]) if e.op == "negative" else E.Binary(self.VEC_OPS[e.op], *args))
        lane = Block()
        e = self.stmt.expr
        # a tile's products are bound by the vector units' throughput, which fused multiply-adds
        # double (X @ W, 6440x128 @ 128x16: two operations a term held it at half the peak);
        # elsewhere the one-rounding sum is not worth its longer latency (compiler.py)
        fma = ((self.row_tile is not None or (self.WIDE_FMA and w * self.VEC_TYPES[self.odt][1] >= self.WIDE_FMA))
               and isinstance(e, Call) and e.op == "multiply" and len(e.args) == 2)
        for q, name in self._tile_rows(w):
            if fma:
                it = iter(self.acc_by_q)
                # x - 0 is x (also -0) and makes a scalar factor a vector (the intrinsics want one)
                a, b = (E.Paren(E.Binary("-", vec(x, it), E.Zero(vt))) for x in e.args)
                row = E.load(name, "lvb")
                lane.add(S.Assign(row, E.VFma(vt, a, b, row)))
            else:
                lane.add(S.Update(E.load(name, "lvb"), "+", vec(e, iter(self.acc_by_q))))
        self.vname[tail] = x
        blk.add(S.For("lvb", E.Int(0), nv, lane))

    def _tile_rows(self, w):
        """(row, accumulator name) of each result row the vector row's loops run for, with the
        row index's C name set to that row's while it is yielded (a generator: iterate it to
        the end, which sets the name back)."""
        if self.row_tile is None:
            yield 0, f"rv{w}"
            return
        v = self.outs[0]
        rows, base = self.row_tile
        x = self.vname[v]
        for q in range(rows):
            self.vname[v] = E.Paren(E.add(base, q))
            yield q, f"rv{w}_{q}"
        self.vname[v] = x

    # Rows of at least this many bytes (8 AVX-512 accumulators) use fused multiply-adds: with
    # that many independent sums the vector units' throughput bounds the loop, and a
    # multiply-add is one operation instead of two (SpMM, 128 columns, two threads, in one
    # process against separate operations: bcsstk16 0.91 of the time, MIT8 0.93, cage10 0.95,
    # astro-ph 0.97). Narrower rows keep separate operations: a sum chain waits on each add,
    # and this machine's vector add has a shorter latency than its multiply-add (16 columns,
    # bcsstk16: 1.41x slower with them). Their values differ from the scalar loop's by one
    # rounding of each product (as BLAS's do from a naive loop's).
    WIDE_FMA = 512

    ROW_TILE = 4  # rows at most whose vector rows share one pass of the loops below them

    TILE_BYTES = 1024  # their accumulators at most: half of AVX-512's 32 registers

    def _tile_height(self):
        """Rows per tile for this version's width: accumulators up to TILE_BYTES."""
        isz = self.VEC_TYPES[self.odt][1]
        return max(1, min(self.ROW_TILE, self.TILE_BYTES // (self.row_width * isz)))

    def _row_tiles(self):
        """A vector row version (``emit_vector_row``) whose outer loop is the result's first
        index over a dense range, with the row below it started fresh, where no sparse operand
        is indexed by that index: the loops below the rows do not depend on which row runs, so
        ``ROW_TILE`` rows run them together and each value the rows share (GEMM's ``W[k, :]``)
        is loaded once for all of them."""
        if (len(self.outs) != 2 or self.order[0] != self.outs[0] or self._untiled
                or not self._vector_row(self.row_width) or self._tile_height() < 2):
            return False
        v = self.order[0]
        if not (self._row_tail(1) and self._slab(1)):
            return False
        return all(a.spec.dense or v not in a.lvars for a in self.accs)

    def emit_row_tiles(self, blk):
        """The outer loop in blocks of ``_tile_height()`` rows (on threads where the loop
        would be), then the remaining rows one by one; where the target's vector registers
        cannot hold the tile's accumulators in half of them (1 KB with AVX-512; AVX's 16
        registers of 32 bytes, or SSE's of 16, hold a 16-wide double row at most) the rows run
        one by one (spilled accumulators cost more than the shared loads save)."""
        v, R = self.order[0], self._tile_height()
        need = R * self.row_width * self.VEC_TYPES[self.odt][1]
        tiled, plain = Block(), Block()
        fits = E.Binary("&&", E.Binary(">=", E.VecBytes(), E.Int(64)), E.Binary("<=", E.Int(need), E.Int(1024)))
        blk.add(S.TargetIf(fits, Block().add(tiled), Block().add(plain)))
        self._untiled = True
        self._emit(0, plain)
        self._untiled = False
        blk = tiled
        x, n = self.vname[v], self.ext[v]
        nb = E.Paren(E.Binary("/", E.Paren(E.var(n)), E.Int(R)))
        body = Block().add(S.Declare(f"{x}t", T.INDEX, E.mul("lrb", R), const=True))
        where = self.parallel(0, v, [], blk, nb)
        where.add(S.For("lrb", E.Int(0), nb, body))
        self.bind(v)
        self.row_tile = (R, f"{x}t")
        self.emit(1, body)
        self.row_tile = None
        rest = Block()
        blk.add(S.For(x, E.mul(nb, R), E.var(n), rest))
        self.emit(1, rest)
        self.bound.discard(v)
