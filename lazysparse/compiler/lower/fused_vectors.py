"""Vector code of the fused lowerer (``FusedVectorMixin``): a constant-width dense sum as vectors
of partial sums (``vector_sum``), rows written from vector expressions (``vector_rows``), and
rows kept in vectors across a sparse loop: the rows its sums read (``hoist_rows``) and the rows
they sum into (``hold_rows``). The vector types are the single-operation lowerer's (rows.py).
"""
from __future__ import annotations

import numpy as np

from lazysparse.ir.nodes import Access, Index
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.fusion import Compute, Loop, Reset
from lazysparse.compiler.plan.program import INPUT
from lazysparse.compiler.lower.rows import RowMixin
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block
from lazysparse.compiler.loopir.support import VECTOR_SUMS, VECTORS
from lazysparse.compiler.lower.fused_loops import Unsupported


class FusedVectorMixin:
    """Vector sums and rows. Owns ``hoisted`` and ``held``; adds the vector support code to
    ``prelude``."""

    # The sum as vectors of the target's width (RowMixin.VEC_TYPES):
    # under ``omp simd reduction`` gcc 12 summed SDDMM's K = 32 products into one vector and
    # folded its lanes one by one (a chain of 8 scalar adds a point, 25% of the kernel's time on
    # MIT8). Up to four vectors of partial sums, each started at its first product (adding to
    # a zero vector costs an add and a latency each), folded as a tree.
    VEC_OPS = {**RowMixin.VEC_OPS, "divide": "/"}  # (IEEE division rounds lanes alike)

    # A hoisted row at most: 1 KB (16 AVX-512 registers; the compiler spills what does not fit
    # to the stack, an L1 load as the row's own was). SDDMM K = 128 (1 KB rows), in one process
    # against 512: one thread bcsstk16 5.89 -> 4.30 ms, cage10 3.99 -> 3.38, MIT8 22.3 -> 20.9;
    # two threads MIT8 10.5 -> 9.5, cage10 2.33 -> 1.93.
    HOIST_BYTES = 1024

    HOLD_BYTES = 512  # a row held in vectors across a sparse loop at most (hold_rows)

    def vector_row(self, op, e, v):
        """Whether access ``e`` reads a dense input along ``v`` with unit stride (a vector load)."""
        vid = op.args[e.operand]
        sp = self.specs.get(vid)
        ms = [m for m, ix in enumerate(e.indices) if ix == v]
        return (self.prog.values[vid].kind == INPUT and sp.dense and len(ms) == 1
                and sp.unit and ms[0] == sp.layout[-1])

    def temp_row(self, vid, e, v):
        """Whether access ``e`` reads a dense temporary along its last kept dimension ``v``
        (contiguous in ``v``: ``temp_addr``)."""
        if vid not in self.temps or vid in self.sparse_temps:
            return False
        kept = self.temps[vid][1]
        op = next(o for o in self.prog.ops if o.out == vid)
        at = dict(zip(op.stmt.out_indices, e.indices))
        return bool(kept) and at.get(kept[-1]) == v and sum(ix == v for ix in e.indices) == 1

    def vector_plan(self, loop, k):
        """``(vector type, bytes a lane)`` when the sum ``loop`` (op ``k``) runs as vectors
        (``vector_sum``), else None."""
        op = self.prog.ops[k]
        t = RowMixin.VEC_TYPES.get(np.dtype(self.prog.values[op.out].dtype).name)
        w = self.ext[loop.var]
        if self.count or t is None or not w.isdigit() or (int(w) * t[1]) % 64:
            return None
        got = self.vector_expr(op, op.stmt.expr, loop.var, t[0], render=False)
        return t if got is not None and got[1] else None

    def hoist_rows(self, loop, blk):
        """Before the sparse ``loop``, load into vectors the rows its vector sums read that do
        not change within it (SDDMM's ``U[i, :]`` across row i's entries): the C compiler kept
        reloading them (C harness, SDDMM K = 32: 16-18% of the time on MIT8 and bcsstk16).
        Returns the keys registered in ``self.hoisted`` (the caller drops them after the loop)."""
        keys = []
        for n in loop.body:
            k = self.simd_sum(n) if isinstance(n, Loop) else None
            t = self.vector_plan(n, k) if k is not None else None
            if t is None:
                continue
            vt, isz = t
            w, op = int(self.ext[n.var]), self.prog.ops[k]
            if w * isz > self.HOIST_BYTES:
                continue
            for e in _accesses(op.stmt.expr):
                key = (op.args[e.operand], tuple(e.indices))
                if (key in self.hoisted or not self.vector_row(op, e, n.var)
                        or not all(ix == n.var or (isinstance(ix, Index) and ix in self.bound) for ix in e.indices)):
                    continue
                name = self.fresh("hv")
                blk.add(_row_decl(name, vt, w, isz))
                blk.add(_over(n.var.name, w, isz, S.Assign(_lane(name, n.var.name, isz),
                                                         _as_vector(vt, self.access_value(op, e), const=True))))
                self.hoisted[key] = (name, isz)
                keys.append(key)
        return keys

    def _row_target(self, op, v):
        """The location of ``op``'s result (at ``v``'s C name) when its row is contiguous in ``v``
        (the result's last index, or a temporary's last kept dimension), else None."""
        outs = op.stmt.out_indices
        if op.out == self.out or op.out in self.extra:
            if (op.out == self.out and self.out_like is not None) or not outs or outs[-1] != v \
                    or outs.count(v) != 1:
                return None
            return self.target(op)
        if self.temp_row(op.out, Access(0, outs), v):
            return self.target(op)
        return None

    HOLD = True  # (hold_rows on: a switch for measurements)

    def hold_rows(self, loop, blk):
        """Before the sparse ``loop``, load into vectors the rows that a vector row statement
        in its body sums into across it and that nothing else in it reads or writes (GNN-2's
        result row ``o[i, :]`` across row i's entries, MTTKRP's ``t[:]`` across a fiber), and
        return ``[(op, store statement)]`` for the caller to store them after the loop: the
        statement then adds in registers instead of loading and storing the row per entry.
        Each lane still sums its element in the scalar order."""
        out = []
        for n in loop.body:
            if not isinstance(n, Loop) or n.space != P.TRUE or not self.ext[n.var].isdigit():
                continue
            w = int(self.ext[n.var])
            for c in n.body:
                if not isinstance(c, Compute) or c.op in self.held:
                    continue
                op = self.prog.ops[c.op]
                t = RowMixin.VEC_TYPES.get(np.dtype(self.prog.values[op.out].dtype).name)
                if (self.count or t is None or (w * t[1]) % 64 or w * t[1] > self.HOLD_BYTES
                        or op.stmt.reduce != "sum" or loop.var not in op.stmt.reduce_indices
                        or n.var in op.stmt.reduce_indices):
                    continue
                got = self.vector_expr(op, op.stmt.expr, n.var, t[0], render=False)
                if got is None or not got[1] or not self._alone(op.out, c.op, loop.body):
                    continue
                if not all(ix == n.var or ix in self.bound for ix in op.stmt.out_indices):
                    continue  # the row moves within the loop
                try:
                    tgt = self._row_target(op, n.var)  # (at the row variable's C name)
                except Unsupported:
                    tgt = None
                if tgt is None:
                    continue
                vt, isz = t
                name, x = self.fresh("rh"), n.var.name
                blk.add(_row_decl(name, vt, w, isz))
                blk.add(_over(x, w, isz, S.Assign(_lane(name, x, isz), _as_vector(vt, tgt, const=True))))
                self.held[c.op] = (name, isz)
                out.append((c.op, _over(x, w, isz, S.Assign(_as_vector(vt, tgt), _lane(name, x, isz)))))
        return out

    def _alone(self, vid, k, nodes):
        """Whether op ``k`` is the only statement in ``nodes`` that reads or writes ``vid``,
        and nothing there resets it."""
        for n in nodes:
            if isinstance(n, Loop):
                if not self._alone(vid, k, n.body):
                    return False
            elif isinstance(n, Reset):
                if n.value == vid:
                    return False
            elif n.op != k:
                o = self.prog.ops[n.op]
                if o.out == vid or vid in o.args:
                    return False
        return True

    def vector_expr(self, op, e, v, vt, render=True):
        """``(value, is a vector)`` of ``e`` with ``v`` the first lane of a vector of ``vt``, or
        None where ``e`` is not ``+ - * / negative`` over values of the sum's type whose dense
        inputs read ``v`` with unit stride (a vector load) or not at all (a scalar the vector
        operation broadcasts), like sparse inputs and temporaries. ``render=False``: only
        whether it qualifies (the value is None), before the loops that bind its positions."""
        dt = self.prog.values[op.out].dtype
        if isinstance(e, Access):
            vid = op.args[e.operand]
            if self.prog.values[vid].dtype != dt:
                return None
            if v not in e.indices:
                return (self.access_value(op, e) if render else None), False
            if not (self.vector_row(op, e, v) or self.temp_row(vid, e, v)):
                return None
            held = self.hoisted.get((vid, tuple(e.indices)))
            if not render:
                return None, True
            if held is not None:
                return _lane(held[0], v.name, held[1]), True
            return E.Paren(_as_vector(vt, self.access_value(op, e), const=True)), True
        if e.dtype != dt or any(d != dt for d in e.in_dtypes):
            return None
        args = [self.vector_expr(op, a, v, vt, render) for a in e.args]
        if any(a is None for a in args):
            return None
        vec = any(a[1] for a in args)
        if not render:
            return (None, vec) if (e.op == "negative" and len(args) == 1 or
                                   e.op in self.VEC_OPS and len(args) == 2) else None
        if e.op == "negative" and len(args) == 1:
            return E.Paren(E.Unary("-", args[0][0])), vec
        if e.op in self.VEC_OPS and len(args) == 2:
            return E.Paren(E.Binary(self.VEC_OPS[e.op], args[0][0], args[1][0])), vec
        return None

    def _use_vectors(self):
        """Add the vector types and horizontal sums to the kernel's support code, once."""
        if VECTORS not in self.prelude:
            self.prelude += [VECTORS, VECTOR_SUMS]

    def vector_sum(self, loop, k, blk):
        """Emit the sum ``loop`` (op ``k``, ``simd_sum``) at a constant width as vectors, and
        return True; False where it does not qualify (an instrumented build counts in the
        scalar loop)."""
        t = self.vector_plan(loop, k)
        if t is None:
            return False
        op, w, (vt, isz) = self.prog.ops[k], self.ext[loop.var], t
        got = self.vector_expr(op, op.stmt.expr, loop.var, vt)
        self._use_vectors()
        dv, b = self.fresh("dv"), self.fresh("b")
        lanes = E.lanes(isz)
        nbv = E.Paren(E.Binary("/", E.var(w), lanes))
        nav = E.Paren(E.Select(E.lt(nbv, 4), nbv, E.Int(4)))  # 1, 2 or 4: widths and lanes are powers of two
        x, bv, dvv = E.Var("x_"), E.Var(b), E.Var(dv)
        body = Block()
        body.add(S.Declare("x_", vt, got[0], const=True))
        body.add(S.Declare(b, T.INDEX, E.Binary("/", E.Var(loop.var.name), lanes), const=True))
        body.add(S.If(E.lt(bv, nav), S.Assign(E.Load(dvv, bv), x),
                      S.Update(E.Load(dvv, E.Binary("%", bv, nav)), "+", x), oneline=True))
        blk.add(S.Declare(dv, T.Array(vt, E.Int(4))))
        blk.add(_by_vectors(loop.var.name, w, isz, body))
        s, l = E.Var("s_"), E.Var("l_")
        fold = S.For("l_", E.Int(0), s, S.Update(E.Load(dvv, l), "+", E.Load(dvv, E.add(l, s))), oneline=True)
        blk.add(S.For("s_", E.Binary("/", nav, E.Int(2)), None, fold, step=S.Update(s, "/", E.Int(2)),
                      cond=E.Binary(">=", s, E.Int(1)), oneline=True))
        blk.add(S.Update(self.target(op), "+", E.VReduce("add", vt, E.Load(dvv, E.Int(0)))))
        return True

    def vector_rows(self, loop, blk):
        """Emit the dense ``loop`` at a constant width whose statements each write a row
        contiguous in its variable (the result's last index, or a temporary's last kept
        dimension) from vector expressions (``vector_expr``; a sum only, and only over other
        loops: each lane sums its element in the scalar order) as one vector statement per
        vector of the row, and return True; False where it does not qualify. MTTKRP's
        ``t[r] += X[i,k,l] * C[l, r]``, GNN-2's ``o[i, r] += t * Y[k, r]``: gcc 12 compiled
        the 16-wide rows worse at a constant width than at a variable one."""
        w = self.ext[loop.var]
        if self.count or loop.space != P.TRUE or not w.isdigit() or not loop.body:
            return False
        if not all(isinstance(n, Compute) for n in loop.body):
            return False
        body, vt0, isz = Block(), None, None
        for n in loop.body:
            op = self.prog.ops[n.op]
            t = RowMixin.VEC_TYPES.get(np.dtype(self.prog.values[op.out].dtype).name)
            if t is None or (int(w) * t[1]) % 64 or (vt0 is not None and t[0] != vt0):
                return False
            vt0, isz = t
            if op.stmt.reduce_indices and (op.stmt.reduce != "sum" or loop.var in op.stmt.reduce_indices):
                return False
            tgt = self._row_target(op, loop.var)
            if tgt is None:
                return False
            got = self.vector_expr(op, op.stmt.expr, loop.var, t[0])
            if got is None or not got[1]:
                return False
            held = self.held.get(n.op)
            if held is not None:  # (hold_rows: the row is in vectors across the sparse loop)
                body.add(S.Update(_lane(held[0], loop.var.name, held[1]), "+", got[0]))
            elif op.stmt.reduce_indices:
                body.add(S.Update(_as_vector(t[0], tgt), "+", got[0]))
            else:
                body.add(S.Assign(_as_vector(t[0], tgt), got[0]))
        self._use_vectors()
        blk.add(_by_vectors(loop.var.name, w, isz, body))
        return True


def _as_vector(vt, elem, const=False):
    """The vector of (target-width) type ``vt`` whose first lane is the element ``elem``."""
    return E.Deref(E.Cast(T.Ptr(vt, const=const), E.AddrOf(elem)))


def _row_decl(name, vt, w, isz):
    """An array ``name`` of the vectors of ``vt`` (``isz``-byte lanes) a row of ``w`` holds."""
    return S.Declare(name, T.Array(vt, E.Binary("/", E.Int(w), E.lanes(isz))))


def _lane(name, var, isz):
    """The vector of array ``name`` holding lane ``var`` (vectors of ``isz``-byte values)."""
    return E.Load(E.Var(name), E.Binary("/", E.Var(var), E.lanes(isz)))


def _over(var, w, isz, stmt):
    """``stmt`` for ``var`` over ``[0, w)`` by vectors of ``isz``-byte values, on one line."""
    return S.For(var, E.Int(0), E.Int(w), stmt, step=S.Update(E.Var(var), "+", E.lanes(isz)), oneline=True)


def _by_vectors(var, w, isz, body):
    """``body`` for ``var`` over ``[0, w)`` by vectors of ``isz``-byte values."""
    return S.For(var, E.Int(0), E.var(w), body, step=S.Update(E.Var(var), "+", E.lanes(isz)), brace_line=True)


def _accesses(e):
    """The accesses of expression ``e``."""
    if isinstance(e, Access):
        return [e]
    return [a for x in e.args for a in _accesses(x)]
