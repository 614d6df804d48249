"""Lowering a ``KernelSpec`` to loop IR. ``Lowerer`` composes the concerns, one mixin module
each (coiteration.py: the loop at each index; rows.py: fixed-width result rows; reductions.py:
accumulations and segment sums; parallel.py: threads; prefetch.py; values.py; stores.py: the
leaves; results.py: the result's buffers and assembly; operands.py: the level iterators), over
one lowering state that ``__init__`` and ``lower`` declare; ``lower`` drives it. Loops follow
the planned order. At each index the accesses whose next storage level is that index become
iterators, and the iteration space there is the DNF pattern of the expression over them
(``planner.patterns``): ``TRUE`` is a dense loop that sparse iterators follow, one iterator
drives a loop that the others follow, and several merge over the pattern's lattice points, the
loop running while some term still has all its iterators unexhausted. Levels whose index is
already bound are located (dense: arithmetic, sparse: binary search). Results are stored
densely, accumulated, appended to sparse levels in order, or emitted as coordinates and
assembled by sort and combine (``assembly.py``). Everything depends only on the ``KernelSpec``
(the signature): sizes arrive at run time through ``d[]`` and buffers through ``p[]`` (``ABI``).
"""
from __future__ import annotations

from lazysparse.ir.nodes import accesses_of, canonical_positions
from lazysparse.compiler.plan import fission
from lazysparse.compiler.plan.kernel import KernelSpec
from lazysparse.compiler.plan.workspace import hoisted, map_access, outside, spec_mask, storage_vars
from lazysparse.compiler.lower import counting, workspace
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block
from lazysparse.compiler.lower.coiteration import CoiterationMixin
from lazysparse.compiler.lower.operands import ABI, AccessState, IteratorMixin
from lazysparse.compiler.lower.parallel import NoShare, ParallelMixin
from lazysparse.compiler.lower.prefetch import PrefetchMixin
from lazysparse.compiler.lower.reductions import ReductionMixin
from lazysparse.compiler.lower.results import ResultMixin
from lazysparse.compiler.lower.rows import RowMixin
from lazysparse.compiler.lower.stores import StoreMixin
from lazysparse.compiler.lower.values import ValueMixin
# (names importers of this module use, from where they live now: ``__all__``)
from lazysparse.compiler.lower.operands import declare_operand, level_count_expr
from lazysparse.compiler.lower.teams import (
    APPEND_WORK, FLAT_WORK, KEEP, PRIVATE_RATIO, PRIVATE_SMALL, add_copies, chunk_size, owned_runs,
    owned_runs_setup, private_copy, private_team, release_copies, team_ids, team_size, work_estimate)

__all__ = [
    "lower", "Lowerer", "NoShare", "ABI", "AccessState", "declare_operand", "level_count_expr",
    "APPEND_WORK", "FLAT_WORK", "KEEP", "PRIVATE_RATIO", "PRIVATE_SMALL", "add_copies", "chunk_size",
    "owned_runs", "owned_runs_setup", "private_copy", "private_team", "release_copies", "team_ids",
    "team_size", "work_estimate",
]


class Lowerer(CoiterationMixin, RowMixin, ReductionMixin, ParallelMixin, PrefetchMixin, ValueMixin,
              StoreMixin, ResultMixin, IteratorMixin):
    """The lowering of one ``KernelSpec``: the state below, the concerns' methods from the
    mixins (each names the state it owns)."""

    def __init__(self, spec: KernelSpec, count=False, shares=True):
        self.spec = spec
        self.shares = shares  # the outer loop may be shared out by rows or positions
        self.count = count  # an instrumented build for ls.opcount (compiler/lower/counting.py)
        self.stmt = spec.stmt
        self.abi = ABI()
        self.order = list(spec.order)
        self.vname = {v: f"x{k}" for k, v in enumerate(self.order)}
        self.ext = {v: f"N{k}" for k, v in enumerate(self.order)}
        self._occ = [AccessState(q, a, spec.inputs[a.operand]) for q, a in enumerate(accesses_of(self.stmt.expr))]
        self.share_equal(canonical_positions(self.stmt.expr))
        # the expression the loops being emitted evaluate, its first access and its f(0)
        # decisions in the statement's numbering: the statement, or one term of a union fission
        # (compiler/plan/fission.py; ``term`` set while its loop is emitted)
        self.expr, self.q0, self.dec = self.stmt.expr, 0, spec.decisions
        self.terms, self.term = None, None
        # union fission: the C condition under which a row may hold a zero (terms_maybe_zero),
        # and whether the input-zero flags are declared yet
        self.row_maybe_zero, self.inz_declared = None, False
        # mode "mask": the access whose positions hold the result (compiler/plan/workspace.py)
        self.mask_q = spec_mask(spec) if spec.mode == "mask" else None
        self.flat_map = False
        # a plain transposition on threads (emit_transposition_counts): the placing pass's row
        # range and cursor array
        self.row_span, self.hname = None, "h"
        if spec.mode == "map":  # (the access whose structure the result copies)
            self.mask_q = map_access(spec.stmt, spec.inputs, spec.output.format, spec.decisions)
        self.bound = set()
        self.outs = list(self.stmt.out_indices)
        self.red = list(self.stmt.reduce_indices)
        self.odt = self.stmt.dtype
        self.ofmt = spec.output.format
        # the result's value and index types
        self.val_t, self.idx_t = T.scalar(self.odt), T.scalar(spec.output.index_dtype)
        self.in_acc = False
        self.acc_name = "acc"
        self.out_partial = False  # some loop over a result index skips coordinates
        self.row_acc = None  # the local row a fixed-width version accumulates into
        self.row_width = 0   # the width of the version being emitted (0: the general loops)
        self.row_vec = None  # (width, vector type, lanes, vectors): the row as vector variables
        self.row_tile = None  # (rows, first row's C expression): rows sharing a vector row's loops
        self._untiled = False  # emitting emit_row_tiles' untiled fallback (#else of the target check)
        # dense-inter: the loops being emitted sum into a register row started at zero
        # (emit_row, fresh); a sum outside such a row needs a zero-filled result buffer
        self.in_slab, self.unzeroed = False, False
        # compiler/lower/locate.py: per depth, where code before and after that loop goes (the block, the
        # index of the loop's first statement, statements to append after it); scatter arrays
        self.hoist_at, self.locs, self.loc_names, self.prelude_extra = {}, [], {}, []
        self.par_open = False  # the loops being emitted run inside an OpenMP region
        self.zeros_after = False  # mode "map": the computed zeros are counted after the values loop
        self.par_rows = False  # a sparse result's rows appended on threads (emit_par_rows)
        # a dense result summed over the outermost loop, on threads with private copies of it
        # (emit_private): the loop's partition, or None
        self.private = None
        self.flat_span = None  # the positions a thread's flat walk visits (emit_private)
        self.span_uses = 0  # loops that took the threads' shares (emit_private checks)
        self.pos_share = False  # the outer walk's positions shared out (emit_private, "pos")
        self.pos_chunk = None  # (chunk, chunks, table width): emit_par_rows' chunks of positions
        # leaves add into the result atomically: a schedule runs a reduction's loop on threads
        # (compiler/plan/loops.py), or tiles of nonzeros on threads cut rows (compiler/lower/tiling.py)
        par = spec.loops.parallel if spec.loops is not None else None
        self.atomic = bool(par and par[2])
        self.split_done = set()  # a schedule's split loops emitted (compiler/lower/tiling.py)
        self.acc_store = None  # emit_accumulate's store, when a tile replaces it
        self.early_open = set()  # variables whose split outer loop is open further out

    def share_equal(self, canon):
        """Equal accesses (same slot and subscripts) share one lowering state: one iterator,
        one load (``canon[q]``: the first access equal to access q, as the patterns key them).
        ``accs`` holds each state once; ``acc_by_q`` maps every access to its state."""
        self.acc_by_q = [self._occ[c] for c in canon]
        self.accs = [a for q, a in enumerate(self._occ) if canon[q] == q]

    def lower(self) -> Block:
        """The kernel's loop IR, in steps: a workspace's support code, the operands and loop
        extents, the state the loops start from, the result's buffers, the loops, then the
        run-time schedule flags the loops asked for (put before the result's buffers, which a
        counting pass reads), the result's assembly and the exits."""
        top = Block()
        self.ws = self.spec.mode.startswith("ws-")  # a workspace assembles the result
        if self.ws:
            self._setup_workspace(top)
        self.declare_inputs(top)
        self._declare_extents(top)
        self._start_loop_state()
        at = len(top.body)
        self.counting_inserts = False
        self.declare_output(top)
        body = Block()
        top.add(body)
        self._emit_loops(body)
        top.body[at:at] = self.sched.body
        self._check_splits()
        self._finish(top)
        return top

    def _setup_workspace(self, top):
        """A workspace result (mode "ws-<policy>"): how many loops lie outside its scatter
        (``ws_h``), the terms of a sum it combines without scattering (a union fission), and
        the policy's support code in the kernel's prelude."""
        svars = storage_vars(self.stmt, self.ofmt)
        self.ws_h = outside(self.order, svars)
        reduce, comb_count = self.stmt.reduce, None
        if hoisted(self.order, svars) == len(svars):
            # no scattering: a sum of sparse terms, one loop per term (compiler/plan/fission.py);
            # what the workspace combines are the sum's additions, counted there
            self.terms = fission.terms(self.stmt, self.spec.inputs, self.ofmt, self.spec.decisions)
            if not self.terms:
                raise AssertionError(f"workspace without scattering or terms: {self.stmt!r}")
            # each term is lowered alone (emit_terms): accesses are shared within a term
            # only, as its own walk keys them
            canon = []
            for t in self.terms:
                canon += [t.q0 + c for c in canonical_positions(t.expr)]
            self.share_equal(canon)
            reduce, comb_count = "sum", (counting.ADD if self.count else None)
        # one level left: its keys are coordinates, of the result's index type
        key = self.idx_t.name if len(self.stmt.out_indices) - self.ws_h == 1 else T.INDEX.name
        top.prelude = [workspace.prelude(self.spec.mode[3:], self.val_t, key, reduce, self.odt, comb_count)]

    def _declare_extents(self, top):
        """Each loop's extent from ``d[]``, or a schedule's constant bound."""
        for v in self.order:
            top.add(S.Declare(self.ext[v], T.INDEX, self.abi.int_expr(("ext", v))))
        for v, value in (self.spec.loops.bounds if self.spec.loops is not None else ()):
            # a schedule's bound: the loop's trip count is a constant (checked per call in
            # compiler/pipeline.py), which the C compiler can unroll and vectorise
            self.ext[v] = str(value)

    def _start_loop_state(self):
        """The state the loops start from: no schedule flag, prefetch gate or hoisted call
        declared yet, and the workspace's insert flag."""
        self.sched = Block()  # run-time schedule flags, declared as the loops ask for them
        self.sched_flags = {}
        self.fixed_flags = {}  # flag -> its value in the loop nest being emitted (emit_flag_versions)
        self.static_rows = False  # a walk's parallel chunks in a fixed order (emit_flag_versions)
        self.stream_ahead = False  # segment sums prefetch their driver's entries (stream_gate)
        self.span = None  # the parallel loop's bounds when ``parallel`` set them (take_span)
        self.hoisted = {}  # a loop-invariant call's value -> the constant computed once (``valued``)
        # which of its inserts the workspace uses, when its policy has two: measured per call
        # on the first sparse operand (runtime/tuning.py Flags), the branch until then
        self.ws_flag = None
        if self.ws and self.ws_h >= 1 and not self.count and workspace.has_insert_b(self.spec.mode[3:]):
            key = next((a for a in self.accs if not a.spec.dense), None)
            if key is not None:
                self.ws_flag = self.sched_flag(("wsb", key.slot, 0))
        self.pf_flags = set()  # prefetch gates declared (prefetch_segments)

    def _emit_loops(self, body):
        """The loops, by how the threads share them: rows appended on threads
        (``emit_par_rows``), private copies of a summed result (``emit_private``), a
        transposition's placing pass on the rows its count pass gave each thread, or the loop
        nest's versions (``emit_flag_versions``)."""
        self.private = self._private()
        if self.par_rows:
            self.emit_par_rows(body)
        elif self.private is not None:
            self.emit_private(body)
        elif self.row_span is not None:  # each thread places its own rows at its own cursors
            self.hname = "ht"
            region = Block().add(*self._thread_rows("tid"), *self.row_range)
            nt = E.Var("ls_nt")
            body.add(S.Parallel(region, nt, E.Binary(">", nt, E.Int(1)), (S.Reduction("+", "nz"),)))
            self.emit_versions(region)
        else:
            self.emit_flag_versions(body)

    def _check_splits(self):
        """A schedule's split of a loop that walks stored entries is not lowered: say so."""
        loops = self.spec.loops
        for v, rel in (loops.splits if loops is not None else ()):
            if v not in self.split_done:
                raise NotImplementedError(
                    f"Schedule.split: the loop over {v.name!r} in `{self.stmt!r}` walks stored entries, "
                    f"not a range of coordinates; splitting it is not lowered yet: walk its "
                    f"positions (fuse, pos) and split those")

    def _finish(self, top):
        """After the loops: the result assembled (``finish_output``), the support code the
        loops asked for, the scatter arrays freed on both exits, and what the glue may skip."""
        self.fail_path = [S.Return(E.Int(0))]
        self.finish_output(top)
        if self.prelude_extra:
            top.prelude = list(getattr(top, "prelude", ())) + self.prelude_extra
        frees = [S.Free(E.Var(n)) for n in self.locs]
        fail = self.fail_path
        top.add(*frees, *fail[:-1], *(frees if len(fail) > 1 else []), fail[-1])
        # every loop over a result index ran over its whole extent and each point stores once
        # with "=": the result buffer may start uninitialised (np.empty, not a zero-fill pass)
        mode = self.spec.mode
        self.abi.writes_all = not self.out_partial and mode in ("dense", "dense-acc")
        if self.out_partial:
            self.abi.writes_rows = ()

    def declare_inputs(self, top):
        for k, sp in enumerate(self.spec.inputs):
            declare_operand(top, self.abi, k, sp)


def lower(spec: KernelSpec, count=False):
    """KernelSpec -> (loop IR Block, ABI); ``count``: the instrumented build (compiler/lower/counting.py).
    A kernel whose outer loop could not take the threads' shares (``NoShare``) is lowered
    again with its loops on one thread."""
    try:
        lw = Lowerer(spec, count)
        blk = lw.lower()
    except NoShare:
        lw = Lowerer(spec, count, shares=False)
        blk = lw.lower()
    return blk, lw.abi

