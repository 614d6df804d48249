"""Lowering of a fused plan (compiler/plan/fusion.py) to one kernel: its index tree becomes loops
and its statements assignments and sums into temporaries and the result. ``FusedLowerer``
composes the concerns (fused_loops.py: the tree's loops; fused_vectors.py: their vector sums and
rows; fused_temps.py: temporaries; fused_outputs.py: statements and the result;
fused_parallel.py: the parallel outer loop) and ``lower_fused`` drives it. This version lowers
loops over a dense range or driven by one sparse iterator (a compressed level reached through
levels whose positions the enclosing loops know; unions and intersections of several iterators
are the single-operation lowerer's merge lattices), sparse accesses at positions the loops know
and dense ones by strides, temporaries dense over their kept dimensions, and the results: the
first dense (zero-filled by the kernel where a statement sums into it or leaves points unwritten;
statements store with ``=`` or sum), or in the pattern of one sparse input read at the result's
own subscripts (SDDMM's ``B .* T``: B's positions and coordinates, values by B's position,
assembled without search); the others (joint outputs) dense. Anything else it declines with
``Unsupported``, and the caller runs one kernel per operation, which computes the same values.
The kernel has the ``ls_kernel(void **p, int64_t *d)`` ABI of every kernel: ``p[]`` holds
buffers, ``d[]`` sizes, in the order ``abi`` records.
"""
from __future__ import annotations

from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.program import INPUT
from lazysparse.compiler.lower.operands import ABI, declare_operand
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block, Comment
from lazysparse.compiler.lower.fused_loops import FusedLoopMixin, Unsupported
from lazysparse.compiler.lower.fused_outputs import FusedOutputMixin, result_like
from lazysparse.compiler.lower.fused_parallel import FusedParallelMixin
from lazysparse.compiler.lower.fused_temps import FusedTempMixin
from lazysparse.compiler.lower.fused_vectors import FusedVectorMixin

__all__ = ["lower_fused", "FusedLowerer", "Unsupported", "result_like"]


class FusedLowerer(FusedLoopMixin, FusedVectorMixin, FusedTempMixin, FusedOutputMixin,
                   FusedParallelMixin):
    """The lowering of one fused plan: the state below, the concerns' methods from the mixins
    (each names the state it owns)."""

    def __init__(self, plan, specs, out_like=None, count=False):
        self.plan, self.prog, self.specs = plan, plan.program, specs
        self.count = count  # an instrumented build for ls.opcount (compiler/lower/counting.py)
        self.abi = ABI()
        self.out = self.prog.outputs[0]
        # the other results (joint outputs of ``ls.compute``): dense, each in a buffer of its
        # own the call allocates, as the first one is (``out_extra``)
        self.extra = {vid: f"ox{vid}" for vid in self.prog.outputs[1:]}
        self.out_like = out_like  # input value id whose pattern the result takes, or None
        self.ext = {}    # Index -> name of its extent (a number in a version at a constant width)
        self.pos = {}    # (value id, level) -> expression of the position there (bound now)
        self.bound = set()
        self.acc = {}    # op index -> local accumulator its statement sums into (simd_sum)
        self.seg = {}    # (input, path) -> (position variable, segment start) of an open loop
        self.segmax = set()
        self.sparse_temps = {}
        self.prelude = []  # support code of the kernel (the vector sums')
        self.hoisted = {}  # (input, indices) -> (vector array, lanes): rows held in vectors (hoist_rows)
        self.held = {}  # op -> (vector array, lanes): the row it sums into, in vectors (hold_rows)
        self.n = 0

    def fresh(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def declare(self, top):
        prog = self.prog
        for v in prog.values:
            if v.kind != INPUT:
                continue
            sp = self.specs[v.id]
            if any(lv.follows_parent for lv in sp.format.levels):
                raise Unsupported("singleton levels")
            declare_operand(top, self.abi, v.id, sp)
        for op in prog.ops:
            for ix in op.loops:
                if ix not in self.ext:
                    self.ext[ix] = f"N_{ix.name}"
                    top.add(S.Declare(self.ext[ix], T.INDEX, self.abi.int_expr(("ext", ix))))
        ov = prog.values[self.out]
        top.add(S.Declare("o", T.ptr(ov.dtype, restrict=True), E.Cast(T.ptr(ov.dtype), self.abi.ptr_expr(("out", "vals")))))
        for vid, name in self.extra.items():
            dt = prog.values[vid].dtype
            top.add(S.Declare(name, T.ptr(dt, restrict=True), E.Cast(T.ptr(dt), self.abi.ptr_expr(("out", "extra", vid)))))
        self.temps = {}
        for op in prog.ops:
            if op.out != self.out and op.out not in prog.outputs:
                self.temps[op.out] = (f"t{op.out}", self.plan.temp_dims[op.out])

    def check(self):
        """Decline what this version would get wrong: reductions other than sums (their implicit
        zeros need counting), and a temporary read over a loop that does not visit exactly the
        points its definition writes (stale values from an earlier iteration, or unwritten
        points, would be read)."""
        for k, op in enumerate(self.prog.ops):
            if op.stmt.reduce_indices and op.stmt.reduce != "sum":
                raise Unsupported(f"a {op.stmt.reduce} reduction")
            if op.out in self.prog.outputs:
                continue
            kept = set(self.plan.temp_dims[op.out])
            wrote = {lp.var: lp.space for lp in self.paths[k] if lp.var in kept}
            for u, o in enumerate(self.prog.ops):
                if op.out not in o.args:
                    continue
                for lp in self.paths[u]:
                    if lp.var in wrote and wrote[lp.var] != P.TRUE and lp.space != wrote[lp.var]:
                        raise Unsupported("a temporary read outside the points it is written at")

    def lower(self):
        """The kernel's loop IR: the plan checked, the operands, extents, result and temporaries
        declared, then the tree's loops on one thread (``emit_serial``) or with its outer loop
        on threads (fused_parallel.py ``emit_parallel``)."""
        from lazysparse.compiler.plan.fusion import _paths
        self.paths = _paths(self.plan.tree)
        self.check()
        top = self.top = Block()
        self.declare(top)
        self.sparse_temps = self.sparsify()
        if self.out_like is not None:
            op = next(o for o in self.prog.ops if o.out == self.out)
            self.like_idx = op.stmt.out_indices
        body = self.body = Block()
        top.add(body)
        self.orders = {}  # C name -> declaration of a row order (fused_parallel.py declare_order)
        par = self.parallel_loop()
        prep = self.result_prep(body)
        if par is None:
            self.emit_serial(top, body, prep)
        else:
            self.emit_parallel(top, body, par, prep)
        return self.with_prelude(top)

    def emit_serial(self, top, body, prep):
        """The result's preparation, the temporaries (the kernel fails when one cannot be
        had), the tree's loops in their width versions, and the temporaries freed."""
        prep(body, None)
        bad = self.alloc_temps(body)
        if bad is not None:
            body.add(S.If(bad, S.Inline((*self.free_temps().stmts, S.Return(E.Int(1)))), oneline=True))
        self.versions(self.plan.tree, body, lambda b: self.emit_top(b))
        if self.free_temps() is not None:
            body.add(self.free_temps())
        top.add(S.Return(E.Int(0)))

    def emit_top(self, blk):
        """The tree's top-level nodes, each loop whose iterations may run in any order
        (``any_order``) also through its driver's row order (``in_row_order``)."""
        def loop(n, b):
            vid = self.order_driver(n) if self.any_order(n) else None
            self.in_row_order(n, vid, b, lambda into: self.emit_loop(n, into))
        self.emit(self.plan.tree, blk, loop)

    def with_prelude(self, top):
        if self.prelude:
            top.prelude = list(getattr(top, "prelude", ())) + self.prelude
        return top


def lower_fused(plan, specs, count=False):
    """``(block, abi, out_like)`` for a fused plan; raises ``Unsupported``. ``count``: the
    instrumented build (compiler/lower/counting.py)."""
    for vid in plan.program.outputs[1:]:
        if result_like(plan, specs, vid) is not None:
            # (stored in an input's pattern when it is the only result: so one kernel per
            # operation, where it is)
            raise Unsupported("a result besides the first in an input's pattern")
    like = result_like(plan, specs)
    try:
        lw = FusedLowerer(plan, specs, like, count)
        block = lw.lower()
    except Unsupported:
        if like is None:
            raise
        # the loop that computes the result does not walk the like input's entries: dense
        like = None
        lw = FusedLowerer(plan, specs, like, count)
        block = lw.lower()
    lw.abi.sparse_temps = lw.sparse_temps  # for explain
    block.body.insert(0, Comment(" ; ".join(repr(op) for op in plan.program.ops)))
    return block, lw.abi, like
