"""Co-iteration (``CoiterationMixin``): the loop at each index of the planned order, as
``emit`` dispatches it: a dense range that sparse iterators follow, one sparse level driving with
the others following, a merge loop over the lattice points of several (TACO's merge lattices), a
galloping search of the longer of two intersected segments, or a masked product summed into a
dense row; and the special loops the other concerns own (a schedule's tiles, fixed-width rows,
flat walks, a union fission's terms, accumulations), which ``_emit`` hands each case to.
"""
from __future__ import annotations

import numpy as np

from lazysparse.ir.nodes import Access, Call, accesses_of
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.lower import locate, simd, tiling
from lazysparse.compiler.lower.level_builder import LevelIR
from lazysparse.compiler.lower.operands import skip_equal, chain
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block
from lazysparse.compiler.loopir.support import gallop

INDEX_MAX = E.MaxOf(T.INDEX)


def _and(xs):
    return chain("&&", xs)


def _or(xs):
    return chain("||", xs)


def _crd(a, j):
    """The coordinate of access ``a`` at position ``j`` of its current (sparse) level, as an index."""
    b = LevelIR(a.slot, a.lvl)
    return b.index(a.spec.format.levels[a.lvl].level_kind.coordinate(b, E.var(j), None))


def _width(u):
    """The length of segment ``u``: ``z - b``."""
    return E.sub(f"z{u}", f"b{u}")


def _left(u):
    """Iterator ``u`` has entries left: ``j < z``."""
    return E.lt(f"j{u}", f"z{u}")


class CoiterationMixin:
    """The loops at each index. Advances and restores the iterator state (operands.py); owns
    ``hoist_at`` (where code hoisted to each depth goes: compiler/lower/locate.py),
    ``out_partial``, ``flat_map``, ``row_maybe_zero`` and ``inz_declared``; while a union
    fission's term is emitted, ``term``, ``expr``, ``q0``, ``dec`` and ``accs`` are that
    term's."""

    def emit(self, depth, blk: Block):
        """The loops from ``depth`` on, into ``blk``; records where code hoisted to this depth
        goes (compiler/lower/locate.py)."""
        loops = self.spec.loops
        if loops is not None and (loops.early or loops.chunks) and depth < len(self.order) \
                and not (self.spec.mode in ("dense-acc", "append") and self.red
                         and depth == len(self.outs) and not self.in_acc):
            # (at the accumulation's depth they open inside emit_accumulate's scalar instead)
            # a schedule's split outer loops that open outside this one (interleaved tiles),
            # and the chunk loop of a position split, right outside its own loop at the latest
            v = self.order[depth]
            opened = [r for r in loops.early_before(v) if r not in self.early_open]
            if loops.chunk_of(v) is not None and v not in self.early_open and v not in opened:
                opened.append(v)
            saved = [(a, a.rng) for a in self.accs]
            for r in opened:
                blk = (tiling.open_chunks if loops.chunk_of(r) is not None else tiling.open_outer)(
                    self, depth, r, blk)
                self.early_open.add(r)
            if opened:
                self.emit(depth, blk)
                self.early_open.difference_update(opened)
                for a, rng in saved:
                    a.rng = rng
                return
        saved = self.hoist_at.get(depth)
        if depth == 0 and saved is None:
            self.par_open = False
        post = []
        self.hoist_at[depth] = (blk, len(blk.body), post)
        self._emit(depth, blk)
        blk.body.extend(post)
        if saved is None:
            del self.hoist_at[depth]
        else:
            self.hoist_at[depth] = saved

    def _emit(self, depth, blk: Block):
        """The loops from ``depth`` on: the loop another concern owns there, where one does
        (``_emit_special``), else the loop over the index with its iterators (``_emit_index``)."""
        if not self._emit_special(depth, blk):
            self._emit_index(depth, blk)

    def _emit_special(self, depth, blk: Block):
        """Emit what replaces the plain loop at ``depth`` and return True, or return False: a
        schedule's tiles of nonzeros, a union fission's terms, a scalar accumulation under the
        result's indices, the leaf below the last loop, a flat walk of one operand's entries,
        tiles of vector rows, a fixed-width row, or a vector row's innermost loop. (The order
        matters: each case holds only where the ones before it did not apply.)"""
        if depth == 0 and self.spec.loops is not None and self.spec.loops.tiles is not None:
            tiling.emit_tiles(self, blk)  # a schedule's tiles of nonzeros (compiler/lower/tiling.py)
            return True
        if self.terms and depth == self.ws_h and self.term is None:
            self.emit_terms(depth, blk)
            return True
        mode = self.spec.mode
        m = len(self.outs)
        if mode in ("dense-acc", "append") and self.red and depth == m and not self.in_acc:
            self.emit_accumulate(depth, blk)
            return True
        if depth == len(self.order):
            if depth == 0:
                # no loops (``y = x[3]``): the constant levels are resolved here, since no
                # loop body will (every other kernel resolves them in its first loop's body)
                self.cascade(blk)
            self.emit_leaf(blk)
            return True
        if depth == 0 and self.in_acc and not self.outs:
            flat = self._flat_access()
            if flat is not None:
                self.emit_flat(flat, blk, self.flat_span)
                return True
        if depth == 0 and mode == "map" and self._map_flat():
            self.flat_map = True  # (its walk of the positions may run on threads: parallel)
            self.emit_flat(self.acc_by_q[self.mask_q], blk, (E.Var("mb0"), E.add("mb0", "mnz")))
            self.flat_map = False
            return True
        if depth == 0 and self.row_width and self.row_tile is None and self._row_tiles():
            self.emit_row_tiles(blk)
            return True
        if self.row_width and self.row_acc is None and self._row_tail(depth):
            self.emit_row(depth, blk, fresh=self._slab(depth))
            return True
        if self.row_vec is not None and depth == len(self.order) - 1:
            self.emit_row_vector_leaf(blk)
            return True
        return False

    def _emit_index(self, depth, blk: Block):
        """The loop over the index at ``depth``: its iterators' segments, then, by the pattern
        of the expression over them, searches of much longer segments (``search_pairs``),
        scattered segments probed (compiler/lower/locate.py), a dense range that iterators
        follow, segment-sum variants, one driver, or a merge over the lattice."""
        v = self.order[depth]
        x = self.vname[v]
        iters = [a for a in self.accs if not a.spec.dense and a.lvl < len(a.lvars)
                 and a.lvars[a.lvl] == v and a.spec.format.levels[a.lvl].is_sparse]
        iq = {a.q for a in iters}
        q0 = self.q0
        pat, _ = P.expr_pattern(self.expr, lambda acc, q: q + q0 if q + q0 in iq else None,
                                lambda acc: None, self.dec)
        keys = P.keys_of(pat)
        byq = {a.q: a for a in iters}
        # C names carry the access and the level: one access may locate several levels in a block
        U = {a.q: f"{a.q}_{a.lvl}" for a in iters}
        # ranges of every iterator at this level
        for a in iters:
            self.declare_range(a, blk)
        snap = {a.q: a.snapshot() for a in self.accs}
        body = Block()
        if v in self.outs and not (pat == P.TRUE or not keys):
            self.out_partial = True
        if self.spec.loops is not None and self.spec.loops.chunk_of(v) is not None:
            q, _ = self.spec.loops.chunk_of(v)
            if [a.q for a in iters] != [q] or len(pat) != 1:
                raise NotImplementedError(
                    f"Schedule.pos: chunks of T{self.acc_by_q[q].slot}'s entries over {v.name!r} in "
                    f"`{self.stmt!r}`, where the loop also walks other operands (not lowered yet)")
        located = locate.choose(self, depth, iters, pat, keys)
        for d, pr in self.search_pairs(pat, keys, iters, byq, located):
            # one segment much shorter than the other: it drives, the other is searched
            short, rest = Block(), Block()
            blk.add(S.If(E.lt(E.mul(_width(U[d.q]), self.SEARCH_RATIO), _width(U[pr.q])), short, rest))
            self.emit_search(depth, v, short, d, pr, U, snap)
            blk = rest
        if located:
            # scattered segments probed (compiler/lower/locate.py); the merge when the arrays are missing
            names = [locate.scatter(self, a, depth) for a in located]
            yes, no = Block(), Block()
            blk.add(S.If(_and(names), yes, no))
            plan = self.row_acc_plan(depth, located, keys, byq, iters)
            if plan is not None:
                # or, per call as measured (runtime/tuning.py), every product summed into a
                # dense row, multiplied by the mask's values once per row
                acc_blk, probe = Block(), Block()
                flag = self.sched_flag(("macc", plan[0].slot, plan[0].lvl))
                yes.add(S.If(_and([flag, "racc"]), acc_blk, probe))
                self.emit_row_acc(depth, v, acc_blk, plan, U, snap)
                yes = probe
            self.emit_lattice(depth, v, yes, pat, keys, iters, byq, U, snap, dict(zip(names, located)))
            blk = no
        if (pat == P.TRUE or not keys) and self._dense_acc_loop(depth, v, iters):
            self.emit_dense_reduction(depth, v, blk, snap)
            return
        if pat == P.TRUE or not keys:
            followers = iters
            for a in followers:
                blk.add(S.Declare(f"j{U[a.q]}", T.INDEX, E.Var(f"b{U[a.q]}")))
            tiling.range_loop(self, depth, v, blk, body, followers)
            self.bind(v)
            for a in followers:
                self.follow(a, x, body)
            inner = body
        elif len(pat) == 1 and len(keys) == 1 and self._can_split_acc(depth, byq[next(iter(keys))], iters):
            self.emit_segment_variants(depth, v, blk, byq[next(iter(keys))], keys, byq, iters, U, snap)
            return
        elif len(pat) == 1 and len(keys) == 1:
            vec = self._vector_append(depth, v, byq[next(iter(keys))], iters, U)
            if vec is not None:  # (the vector loop where the target has it: no branch per entry)
                self._report_simd()
                plain = Block()
                blk.add(simd.guarded("1", vec, plain))
                blk = plain
            self.emit_single_driver(depth, v, blk, keys, byq, iters, U, snap)
            return
        else:
            self.emit_lattice(depth, v, blk, pat, keys, iters, byq, U, snap)
            return
        self.cascade(inner)
        self.emit_output_level(depth, v, inner)
        # restore state for code after the loop
        self.bound.discard(v)
        for a in self.accs:
            a.restore(snap[a.q])

    def emit_single_driver(self, depth, v, blk, keys, byq, iters, U, snap):
        """One sparse level drives the loop; the other iterators follow it."""
        x = self.vname[v]
        body = Block()
        (q0,) = keys
        d0 = byq[q0]
        followers = [a for a in iters if a.q != q0]
        for a in followers:
            blk.add(S.Declare(f"j{U[a.q]}", T.INDEX, E.Var(f"b{U[a.q]}")))
        j = f"j{U[q0]}"
        lv = d0.spec.format.levels[d0.lvl]
        crd = f"c{d0.slot}_{d0.lvl}"
        shared = depth == 0 and not followers and (self.pos_share or self.pos_chunk is not None
                                                   or (not lv.unique and self._coo_team(v)))
        if shared:  # each thread a share of the walk's positions (``share_positions``)
            blk = self.share_positions(blk, U[q0], crd, lv.unique)
        if lv.unique:
            loop = S.For(j, E.Var(f"b{U[q0]}"), E.Var(f"z{U[q0]}"), body)
            body.add(S.Declare(x, T.INDEX, _crd(d0, j)))
            self.prefetch_segments(v, d0, j, body)
            seg = None
            where = blk if shared else self.parallel(depth, v, followers, blk,
                                                                E.sub(f"z{U[q0]}", f"b{U[q0]}"))
        else:
            where = blk
            g = f"g{U[q0]}"
            blk.add(S.Declare(g, T.INDEX, E.Int(0)))
            loop = S.For(j, E.Var(f"b{U[q0]}"), E.Var(f"z{U[q0]}"), body, step=S.Assign(E.Var(j), E.Var(g)))
            body.add(S.Declare(x, T.INDEX, _crd(d0, j)))
            body.add(S.Assign(E.Var(g), E.add(j, 1)))
            body.add(skip_equal(g, f"z{U[q0]}", crd, x, None))
            seg = f"g{U[q0]}"
        where.add(loop)
        self.bind(v)
        self.advance(d0, j, "1", seg)
        for a in followers:
            self.follow(a, x, body)
        self.cascade(body)
        self.emit_output_level(depth, v, body)
        self.bound.discard(v)
        for a in self.accs:
            a.restore(snap[a.q])

    def emit_lattice(self, depth, v, blk, pat, keys, iters, byq, U, snap, located=None):
        """Merge loops over the lattice points (TACO): one loop per satisfiable subset of the
        iterators, largest first, each running while all of its iterators have entries left.
        When one runs out, the loops of the smaller points finish the others without checking it.
        ``located``: {scatter array: access} probed at each point instead of merged
        (compiler/lower/locate.py); the loops run over the pattern without them, the body is guarded by
        the whole pattern."""
        x = self.vname[v]
        located = located or {}
        lk = {a.q for a in located.values()}
        walk = P.without(pat, lk)  # the iteration space of the iterators that drive the loop
        for a in iters:
            if a.q not in lk:
                blk.add(S.Declare(f"j{U[a.q]}", T.INDEX, E.Var(f"b{U[a.q]}")))
        keys = sorted(k for k in keys if k not in lk)
        points = []
        if len(keys) <= 4:
            from itertools import combinations
            for n in range(len(keys), 0, -1):
                for pt in combinations(keys, n):
                    if P.evaluate(walk, set(pt)):
                        points.append(frozenset(pt))
        else:  # many iterators: one loop over the whole lattice
            points.append(None)
        for pt in points:
            members = keys if pt is None else sorted(pt)
            sub = pat if pt is None else frozenset(t for t in pat if t - lk <= pt)
            for a in self.accs:
                a.restore(snap[a.q])
            body = Block()
            if pt is None:
                cond = _or([E.Paren(_and([_left(U[q]) for q in sorted(t)])) for t in walk])
            else:
                cond = _and([_left(U[q]) for q in members])
            blk.add(S.While(cond, body))
            for q in members:
                k = _crd(byq[q], f"j{U[q]}")
                if pt is None:
                    k = E.Select(_left(U[q]), k, INDEX_MAX)
                body.add(S.Declare(f"k{U[q]}", T.INDEX, k))
            mn = E.Var(f"k{U[members[0]]}")
            for q in members[1:]:
                kq = E.Var(f"k{U[q]}")
                mn = E.Paren(E.Select(E.lt(kq, mn), kq, mn))
            body.add(S.Declare(x, T.INDEX, mn))
            self.bind(v)
            single = len(members) == 1
            present = {}  # key -> its presence test at this point
            for q in members:
                a = byq[q]
                e = present[q] = "1" if single else f"e{U[q]}"
                if not single:
                    body.add(S.Declare(e, T.INT, E.Binary("==", E.Var(f"k{U[q]}"), E.var(x))))
                seg = None
                if not a.spec.format.levels[a.lvl].unique:
                    crd = f"c{a.slot}_{a.lvl}"
                    body.add(S.Declare(f"g{U[q]}", T.INDEX, E.add(f"j{U[q]}", 1)))
                    body.add(skip_equal(f"g{U[q]}", f"z{U[q]}", crd, x, e))
                    seg = f"g{U[q]}"
                self.advance(a, f"j{U[q]}", e, seg)
            for q in keys:
                if q not in members:  # exhausted in this lattice point: statically absent
                    self.advance(byq[q], "0", "0", None)
            for name, a in located.items():
                present[a.q] = f"e{U[a.q]}"
                locate.resolve(self, a, name, x, body)
            for a in iters:
                if a.q not in keys and a.q not in lk:
                    self.follow(a, x, body)
            if single and not lk:
                inner = body
            else:
                fcond = _or([E.Paren(_and([present[q] for q in sorted(t)] or [1])) for t in sub])
                inner = Block()
                body.add(S.If(fcond, inner))
            self.cascade(inner)
            self.emit_output_level(depth, v, inner)
            for q in members:
                a = byq[q]
                nxt = E.Var(f"g{U[q]}") if not a.spec.format.levels[snap[q][0]].unique else E.add(f"j{U[q]}", 1)
                step = S.Assign(E.Var(f"j{U[q]}"), nxt)
                body.add(step if single else S.If(E.Var(f"e{U[q]}"), step, oneline=True))
            self.bound.discard(v)
        for a in self.accs:
            a.restore(snap[a.q])

    # A segment at least this many times shorter than the other drives an intersection of two,
    # searching the other (masked A @ A on adder_dcop_05, whose rows reach 1310 entries where
    # most mask rows hold a few: see docs/design.md)
    SEARCH_RATIO = 64

    def search_pairs(self, pat, keys, iters, byq, located):
        """(driver, searched) pairs of the runtime choice ``emit_search`` adds in front of an
        intersection of exactly two sorted unique segments: either may drive when the loop is
        a merge; when one is located (compiler/lower/locate.py) only that one, since probing the scatter
        array is cheaper than a search once the other is the shorter."""
        if (pat == P.TRUE or len(pat) != 1 or len(keys) != 2 or set(next(iter(pat))) != set(keys)
                or {a.q for a in iters} != set(keys)):
            return []
        a, b = (byq[q] for q in sorted(keys))
        for t in (a, b):
            lv = t.spec.format.levels[t.lvl]
            if not lv.unique_segments:
                return []
        lk = {t.q for t in located}
        return [(d, o) for d, o in ((a, b), (b, a)) if not lk or d.q in lk]

    def gallop_fn(self, slot):
        """The support routine of the galloping search over coordinates of ``slot``'s index
        type (``loopir.support.gallop``), put in the kernel's prelude."""
        dt = str(self.spec.inputs[slot].index_dtype)
        src = gallop(dt)
        if src not in self.prelude_extra:
            self.prelude_extra.append(src)
        return f"gallop_{dt}"

    def emit_search(self, depth, v, blk, drv, prb, U, snap):
        """The intersection of two sorted unique segments driven by ``drv``'s: each of its
        coordinates is searched for in ``prb``'s, galloping from where the previous one was
        found, so a pass costs |drv| log(|prb| / |drv|) instead of |drv| + |prb| steps."""
        x = self.vname[v]
        ud, up = U[drv.q], U[prb.q]
        jd, jp = f"j{ud}", f"j{up}"
        cp = f"c{prb.slot}_{prb.lvl}"
        body = Block()
        blk.add(S.Declare(jp, T.INDEX, E.Var(f"b{up}")))
        blk.add(S.For(jd, E.Var(f"b{ud}"), E.Var(f"z{ud}"), body))
        body.add(S.Declare(x, T.INDEX, _crd(drv, jd)))
        gallop = E.SupportCall(self.gallop_fn(prb.slot), (E.Var(cp), E.Var(jp), E.Var(f"z{up}"), E.var(x)))
        body.add(S.Assign(E.Var(jp), gallop))
        body.add(S.If(E.Binary(">=", E.Var(jp), E.Var(f"z{up}")), S.Break(), oneline=True))
        body.add(S.Declare(f"e{up}", T.INT, E.Binary("==", _crd(prb, jp), E.var(x))))
        self.bind(v)
        self.advance(drv, jd, "1", None)
        self.advance(prb, jp, f"e{up}", None)
        inner = Block()
        body.add(S.If(E.Var(f"e{up}"), inner))
        self.cascade(inner)
        self.emit_output_level(depth, v, inner)
        self.bound.discard(v)
        for a in self.accs:
            a.restore(snap[a.q])

    def row_acc_plan(self, depth, located, keys, byq, iters):
        """(driver, mask access, the other factor, its first access number, mask first?) when
        the innermost loop of a masked product (mode "mask") can sum its products into a dense
        row instead of probing the mask: the statement is ``M * rest`` (or ``rest * M``) with
        both factors and the product in the result's dtype, ``rest`` free of M, one sorted
        unique level drives the loop and M is located (on threads, each thread has its own row:
        ``emit_row_acc``). Else None. (Not in an ``ls.opcount`` build: it counts the probe's
        operations.)"""
        e = self.stmt.expr
        if (self.spec.mode != "mask" or self.count or depth != len(self.order) - 1
                or len(located) != 1 or located[0].q != self.mask_q or self.stmt.reduce != "sum"
                or not isinstance(e, Call) or e.op != "multiply" or len(e.args) != 2
                or len(iters) != 2 or len(keys) != 2):
            return None
        if any(np.dtype(d) != np.dtype(self.odt) for d in (*e.in_dtypes, e.dtype)):
            return None
        first = isinstance(e.args[0], Access) and self.q0 == self.mask_q
        last = isinstance(e.args[1], Access) and self.q0 + len(accesses_of(e)) - 1 == self.mask_q
        if not (first or last):
            return None
        rest = e.args[1] if first else e.args[0]
        rq = self.q0 + 1 if first else self.q0
        if any(self.acc_by_q[q] is located[0] for q in range(rq, rq + len(accesses_of(rest)))):
            return None  # M read again in ``rest`` (``M * (M * (A @ B))``: one shared state)
        (drv,) = [a for a in iters if a.q != self.mask_q]
        lv = drv.spec.format.levels[drv.lvl]
        if not lv.unique_segments:
            return None
        return drv, located[0], rest, rq, first

    def emit_row_acc(self, depth, v, blk, plan, U, snap):
        """The driver's segment summed into ``racc`` (a dense row over the loop's extent) with
        no test of the mask; after the loop between, each mask entry takes its value times the
        row's sum there, and the span the row touched is cleared. A store per product and a
        clear per column touched, against a probe and a branch per product that mispredicts
        where about half the products land on the mask (ego-Facebook: 62 -> 13.6 ms)."""
        drv, m, rest, rq, mfirst = plan
        x = self.vname[v]
        u = U[drv.q]
        n = self.ext[v]
        h = locate.hoist_depth(self, m)
        host, at, post = self.hoist_at[h]
        private = self.in_region(h)  # rows on threads: a row and its span per thread
        elem = T.scalar(self.odt)
        rlo, rhi = E.Var("rlo"), E.Var("rhi")
        if "racc" not in self.locs and "ls_racc" not in self.locs:
            locate.dense_row(self, "racc", elem, n, private)
            if not private:
                self.sched.add(S.Declare("rlo", T.INDEX, INDEX_MAX), S.Declare("rhi", T.INDEX, E.Int(-1)))
        if private and ("racc-row", id(post)) not in self.loc_names:
            # (the span is empty between rows: each row starts one)
            self.loc_names[("racc-row", id(post))] = post
            host.body.insert(at, S.Declare("rhi", T.INDEX, E.Int(-1)))
            host.body.insert(at, S.Declare("rlo", T.INDEX, INDEX_MAX))
            host.body.insert(at, locate.thread_row("racc", elem, n))
        first, last = _crd(drv, f"b{u}"), _crd(drv, E.sub(f"z{u}", 1))
        blk.add(S.If(E.lt(f"b{u}", f"z{u}"), Block().add(
            S.If(E.lt(first, rlo), S.Assign(rlo, first), oneline=True),
            S.If(E.Binary(">", last, rhi), S.Assign(rhi, last), oneline=True))))
        body = Block()
        j = f"j{u}"
        blk.add(S.For(j, E.Var(f"b{u}"), E.Var(f"z{u}"), body))
        body.add(S.Declare(x, T.INDEX, _crd(drv, j)))
        self.bind(v)
        self.advance(drv, j, "1", None)
        self.advance(m, "0", "0", None)  # not read here: no search for it
        self.cascade(body)
        self._walk_q = rq
        body.add(S.Reduce("sum", E.load("racc", x), self.value(rest), self.odt))
        self.bound.discard(v)
        for a in self.accs:
            a.restore(snap[a.q])
        # once per row, after the loop between: the mask's entries take M times the row's sum
        key = ("racc", id(post))
        if key in self.loc_names:
            return
        self.loc_names[key] = post
        b, z = self.range_exprs(m)
        e = self.stmt.expr
        mi = 0 if mfirst else 1
        mv = E.NumCast(E.load(f"v{m.slot}", "t"), self.dtype_of(e.args[mi]), e.in_dtypes[mi])
        rv = E.load("racc", E.load(f"c{m.slot}_{m.lvl}", "t"))
        prod = E.NumOp("multiply", [mv, rv] if mfirst else [rv, mv], e.in_dtypes, e.dtype)
        gather = Block().add(S.Declare("b_", T.INDEX, b, const=True), S.Declare("z_", T.INDEX, z, const=True))
        gather.add(S.For("t", E.Var("b_"), E.Var("z_"), Block().add(
            S.Reduce("sum", E.Load(E.Var("ov"), E.sub("t", "mb0")), prod, self.odt))))
        gather.add(S.Memset(E.add(E.Var("racc"), rlo), 0, E.add(E.sub(rhi, rlo), 1), elem),
                   S.Assign(rlo, INDEX_MAX), S.Assign(rhi, E.Int(-1)))
        post.append(S.If(E.Binary(">=", rhi, rlo), gather))

    def _vector_append(self, depth, v, drv, iters, U):
        """The vector lines of an innermost loop that appends to a sparse result's last level
        at the coordinates of the one level driving it (``2.5 * A``, ``abs(A)``, ``A * x`` with
        ``x`` a dense row), or None (compiler/lower/simd.py, ``append_segment``)."""
        if (self.spec.mode != "append" or self.count or self.spec.loops is not None or self.ocoo
                or depth != len(self.order) - 1 or len(iters) != 1 or not self.ovars
                or self.ovars[-1] != v or len(self.outs) != len(self.order)):
            return None
        lv = drv.spec.format.levels[drv.lvl]
        if not lv.unique_segments:
            return None
        return simd.append_segment(self, v, drv, U, len(self.outs) - 1)

    def terms_maybe_zero(self):
        """C condition, per row, under which the workspace may hold a zero to squeeze out, or
        None (always look). When every term is one sparse access in the result's dtype, a zero
        needs a stored zero in an input or two terms meeting, and terms met exactly when the
        row drained fewer entries (``fn``) than its segments hold: most rows of a sum of
        independent patterns skip the scan (A + B + C on cage10 2.65 -> 2.50 ms, pubmed
        2.34 -> 2.14; the scan's vector loop dispatch cost more than the check)."""
        accs = [self.acc_by_q[t.q0] for t in self.terms]
        if not all(isinstance(t.expr, Access) and self.dtype_of(t.expr) == self.odt
                   and not a.spec.dense and a.spec.format.levels[a.lvl].has_pos
                   for t, a in zip(self.terms, accs)):
            return None
        rows = []
        for a in accs:
            pos, at = E.Var(f"p{a.slot}_{a.lvl}"), E.var(a.pos)
            end, start = E.Load(pos, E.add(E.Paren(at), 1)), E.Load(pos, at)
            rows.append(E.Paren(E.sub(E.Cast(T.INDEX, end), E.Cast(T.INDEX, start))))
        if not self.inz_declared:  # read once, before the loops
            self.inz_declared = True
            zeros = dict.fromkeys(self.abi.int_expr(("zeros", a.slot)) for a in accs)
            self.sched.add(S.Declare("ls_inz", T.INT, _or(list(zeros)), const=True))
        return E.Binary("||", E.Var("ls_inz"), E.Binary("!=", chain("+", rows), E.Var("fn")))

    def emit_terms(self, depth, blk):
        """A sum of sparse terms (compiler/plan/fission.py): each term's own loops, one after the
        other, insert its entries into the workspace, which adds the duplicates; the flush
        after the last hoisted loop drains them in order. Each term is lowered as a statement
        of its own (its accesses only, so no other term's operand is searched for), numbered
        as in the whole statement."""
        full = self.accs
        if depth > 0 and not self.counting_inserts:
            self.row_maybe_zero = self.terms_maybe_zero()
        for t in self.terms:
            self.term, self.expr, self.q0, self.dec = t, t.expr, t.q0, self.spec.decisions[t.d0:]
            self.accs = [a for a in full if t.q0 <= a.q < t.q0 + t.n]
            sub = Block()
            blk.add(sub)
            self.emit(depth, sub)
        self.term, self.expr, self.q0, self.dec = None, self.stmt.expr, 0, self.spec.decisions
        self.accs = full
