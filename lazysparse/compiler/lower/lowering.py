"""Lowering a ``KernelSpec`` to loop IR through level iterators and merge lattices.

Loops follow the planned order. At each index the accesses whose next storage level is that index
become iterators (compressed/singleton levels); the iteration space there is the DNF pattern
of the expression over those iterators (``planner.patterns``):

* ``TRUE``: a dense loop; sparse iterators follow it (advance while behind).
* one iterator: it drives the loop; others follow.
* otherwise: a merge loop over the iterators of the pattern; each DNF term is a lattice point and
  the loop runs while some term still has all its iterators unexhausted.

Levels whose index is already bound (constants, diagonals) are located (dense: arithmetic,
sparse: binary search). Results are stored densely, accumulated, appended to sparse levels in
order, or emitted as coordinates and assembled by sort + combine (``assembly.py``).

Everything here depends only on the ``KernelSpec`` (the signature): sizes arrive at run time
through ``d[]`` and buffers through ``p[]`` (see ``ABI``).
"""
from __future__ import annotations

import numpy as np

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.ir import ops
from lazysparse.ir.nodes import Access, Call, Const, Index, accesses_of, canonical_positions
from lazysparse.compiler.plan import fission
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.kernel import KernelSpec, level_vars
from lazysparse.compiler.plan.workspace import hoisted, map_access, outside, spec_mask, storage_vars
from lazysparse.compiler.lower import counting, locate, simd, tiling, workspace
from lazysparse.compiler.lower.locate import TEAM_NUM, THREAD_NUM
from lazysparse.compiler.loopir.nodes import Block, Decl, For, If, Line, While


# The first position in [lo, hi) of a sorted coordinate array holding at least x (hi if none):
# doubling steps from lo, then a binary search of the last step. Searches for increasing x
# start where the previous one ended, so k of them over n entries cost O(k log(n / k)).
GALLOP = """static inline int64_t ls_gallop_T(const T_ *restrict c, int64_t lo, int64_t hi, int64_t x) {
  int64_t s = 1;
  while (lo < hi && (int64_t)c[lo] < x) {
    const int64_t p = lo + s;
    if (p >= hi || (int64_t)c[p] >= x) {
      int64_t r = p < hi ? p : hi;
      lo++;
      while (lo < r) {
        const int64_t m = lo + ((r - lo) >> 1);
        if ((int64_t)c[m] < x) lo = m + 1; else r = m;
      }
      return lo;
    }
    lo = p;
    s <<= 1;
  }
  return lo;
}"""

class ABI:
    """Where each kernel parameter comes from: ``p[k]`` pointers and ``d[k]`` integers."""

    def __init__(self):
        self.p = []
        self.d = []
        # the kernel stores every element of its dense result (no zero-fill needed before it)
        self.writes_all = False
        # ... or does so when its result's last extent is one of these (its fixed-width
        # register-row versions, which start their rows at zero: Lowerer.emit_row)
        self.writes_rows = ()

    # an equal descriptor is the same slot: a loop nest emitted once per version asks again
    def ptr(self, desc):
        if desc not in self.p:
            self.p.append(desc)
        return f"p[{self.p.index(desc)}]"

    def int(self, desc):
        if desc not in self.d:
            self.d.append(desc)
        return f"d[{self.d.index(desc)}]"


def declare_operand(top, abi, k, sp):
    """Declarations of operand ``k`` (spec ``sp``) from its ``p[]``/``d[]`` slots: ``v<k>`` values
    (``v<k>s`` for a 0-d one), ``s<k>_<m>`` dense strides, ``p<k>_<l>``/``c<k>_<l>`` positions
    and coordinates of sparse levels, ``n<k>_<l>`` sizes of dense levels."""
    t = C.ctype(sp.dtype)
    if sp.dense:
        if sp.ndim == 0:
            top.add(Decl(f"const {t}", f"v{k}s", f"*(const {t} *){abi.ptr(('in', k, 'vals'))}"))
            return
        top.add(Decl(f"const {t} *restrict", f"v{k}", f"(const {t} *){abi.ptr(('in', k, 'vals'))}"))
        for m in range(sp.ndim):
            top.add(Decl("int64_t", f"s{k}_{m}", abi.int(("stride", k, m))))
        return
    it = C.ctype(sp.index_dtype)
    for l, lv in enumerate(sp.format.levels):
        if lv.kind == "compressed":
            top.add(Decl(f"const {it} *restrict", f"p{k}_{l}", f"(const {it} *){abi.ptr(('in', k, 'pos', l))}"))
        if lv.kind != "dense":
            top.add(Decl(f"const {it} *restrict", f"c{k}_{l}", f"(const {it} *){abi.ptr(('in', k, 'crd', l))}"))
        else:
            top.add(Decl("int64_t", f"n{k}_{l}", abi.int(("size", k, l))))
    top.add(Decl(f"const {t} *restrict", f"v{k}", f"(const {t} *){abi.ptr(('in', k, 'vals'))}"))


class _Acc:
    """Lowering state of one access: how many levels are resolved, position, presence."""
    __slots__ = ("q", "acc", "slot", "spec", "lvars", "lvl", "pos", "pres", "seg", "rng", "at")

    def __init__(self, q, acc, spec):
        self.q, self.acc, self.slot, self.spec = q, acc, acc.operand, spec
        self.lvars = level_vars(acc, spec.format) if not spec.dense else []
        self.lvl, self.pos, self.pres, self.seg = 0, "0", "1", None
        # (begin, end) of the current level's segment when a schedule's tile cuts it
        # (compiler/lower/tiling.py), else None: the positions array's
        self.rng = None
        # the position at each resolved level (a mask's result position is at the level of
        # the result's last index, under the levels a reduction walks: compiler/plan/workspace.py)
        self.at = ()

    def snapshot(self):
        return (self.lvl, self.pos, self.pres, self.seg, self.rng, self.at)

    def restore(self, s):
        self.lvl, self.pos, self.pres, self.seg, self.rng, self.at = s


def level_count(fmt, slot, level):
    """C expression of the number of positions of operand ``slot`` (format ``fmt``) at
    ``level`` (-1: the one root), from the names ``declare_operand`` gives its arrays and
    sizes, or None where a singleton level on the way leaves it unknown."""
    n = "1"
    for l in range(level + 1):
        kind = fmt.levels[l].kind
        if kind == "dense":
            n = f"({n}) * n{slot}_{l}"
        elif kind == "compressed":
            n = f"(int64_t)p{slot}_{l}[{n}]"
        else:
            return None
    return n


def omp_chunk(nt, count):
    """C expression of the chunk of a parallel loop of ``count`` iterations
    on ``nt`` threads (here and compiler/lower/fused.py): about 64 chunks a thread, at least 16
    iterations (balance on skewed rows at a small dispatch cost), and the whole loop as one
    chunk on one thread. (A fixed chunk of 16 made a one-thread 8M-element sum 1.5-2x slower:
    the team of one still fetched 500k chunks.)"""
    per = f"(({count}) / (64 * (int64_t){nt}))"
    return f"({nt} > 1 ? ({per} > 16 ? {per} : 16) : (({count}) > 0 ? ({count}) : 1))"


# The autoscheduler's thread decision (issue 6): a parallel loop runs on the threads asked for
# only when its work estimate (``work_estimate``: innermost iterations) reaches
# runtime/threads.py's PAR_MIN_WORK (16384, read at each call); below it the region's fork and
# join cost more than the second thread saves. Measured on the two-core development VM, SpMV
# called back to back, one thread / two threads with every loop parallel (us): cryg2500 (12k
# entries) 14-20 / 22-24, cora (11k) 16-22 / 24, citeseer (9k) 19-25 / 25-26, tomography (29k)
# 17-20 / 15-17; with the threshold the first three run on one thread at both counts (17-25 us
# each). Iterations of a row that runs as vectors count each lane (a 16-column SpMM of 12k
# entries is 200k, and its two threads are even there).


def work_estimate(stmts, ext, abi):
    """C expression (a double) of the innermost iterations of a loop nest computing ``stmts``:
    ``(statement, spec_of)`` pairs, ``spec_of(access)`` giving ``(slot, spec)`` of a sparse
    input read there or None (dense operands, temporaries). Per statement: the stored entries of
    its sparse inputs, summed, times the extents (``ext``: index -> C expression) of the indices
    none of them holds; summed over the statements. SpMV: nnz; SpMM: nnz * columns; SDDMM: nnz *
    K; a dense product: I * K * J. Sums over several operands (A + B) count each one's entries,
    as their merged loop visits them; a product of two sparse operands counts the entries, not
    the products (its sparse result keeps it serial anyway)."""
    total = []
    for stmt, spec_of in stmts:
        held, entries = set(), []
        for a in accesses_of(stmt.expr):
            got = spec_of(a)
            if got is None:
                continue
            slot, sp = got
            held.update(ix for ix in a.indices if isinstance(ix, Index))
            leaf = level_count(sp.format, slot, len(sp.format.levels) - 1)
            entries.append(f"(double)({leaf if leaf is not None else abi.int(('nnz', slot))})")
        factors = (["(" + " + ".join(entries) + ")"] if entries else []) + \
            [f"(double)({ext[v]})" for v in tuple(stmt.out_indices) + tuple(stmt.reduce_indices)
             if v not in held]
        total.append(" * ".join(factors) or "1.0")
    return " + ".join(f"({t})" for t in total) or "0.0"


def team_size(blk, abi, work, name="ls_nt", report=True):
    """Declare in ``blk`` the thread count a parallel loop runs with, ``name``: the caller's
    ``ls.set_num_threads`` when the work estimate reaches the threshold the call passes
    (``("parmin",)``), else one (a negative estimate: one, whatever the threshold); the kernel
    reports it in ``("team",)`` (tests read it) unless
    ``report`` is off (a team for a kernel's preparation, before its main loops')."""
    nt = abi.int(("threads",))
    blk.add(Decl("const int64_t", name, f"({nt} > 1 && ({work}) >= (double){abi.int(('parmin',))}) ? {nt} : 1"))
    if report:
        blk.add(Line(f"{abi.int(('team',))} = {name};"))
    return name


def team_ids(prelude, *more):
    """The declarations a region's body starts with, ``tid`` (this thread) and ``ls_tn`` (the
    team that runs it: fewer than asked when the runtime gives fewer), with the prelude that
    defines them without OpenMP added to ``prelude`` (and ``more``: KEEP for kept buffers)."""
    for pre in (THREAD_NUM, TEAM_NUM, *more):
        if pre not in prelude:
            prelude.append(pre)
    return [Decl("const int64_t", "tid", "(int64_t)omp_get_thread_num()"),
            Decl("const int64_t", "ls_tn", "(int64_t)omp_get_num_threads()")]


def owned_runs_setup(nt, count):
    """Before the parallel region of ``owned_runs``: the chunk count and each run's counter
    (shared by the team)."""
    return [Decl("const int64_t", "ls_nch", f"(({count}) + ls_chunk - 1) / ls_chunk"),
            Line(f"int64_t ls_next[8 * {nt}];  /* a run's next chunk, a cache line each */"),
            For("ls_w", "0", nt, Block().add(f"ls_next[8 * ls_w] = ls_w * ls_nch / {nt};"))]


def owned_runs(nt, count):
    """Inside a parallel region (after ``owned_runs_setup``, with ``ls_chunk`` declared): the
    loop over ``[0, count)`` in chunks, cut into ``nt`` runs of consecutive chunks, each
    thread taking its own run's chunks first, in order, then helping the others with what is
    left of theirs (a counter per run, taken with an atomic add; ``Lowerer.owned_chunks``:
    why). Returns (the block to add to the region, the chunk's block), the chunk's bounds
    being ``ls_r0`` and ``ls_r1``."""
    chunk = Block()
    region = Block().add(
        Decl("const int64_t", "ls_me", "(int64_t)omp_get_thread_num()"),
        For("ls_s", "0", nt, Block().add(
            Decl("const int64_t", "ls_w", f"(ls_me + ls_s) % {nt}"),
            Decl("const int64_t", "ls_e", f"(ls_w + 1) * ls_nch / {nt}"),
            While("1", Block().add(
                Decl("int64_t", "ls_k"), Line("#pragma omp atomic capture"),
                "ls_k = ls_next[8 * ls_w]++;", "if (ls_k >= ls_e) break;",
                Decl("const int64_t", "ls_r0", "ls_k * ls_chunk"),
                Decl("const int64_t", "ls_r1", f"ls_r0 + ls_chunk < ({count}) ? ls_r0 + ls_chunk : ({count})"),
                chunk)))))
    return region, chunk


def private_team(body, abi, T, work, packed="1", counts=False):
    """Private copies of a dense result summed on threads (paper 001's "temporary" race
    strategy: ``Lowerer.emit_private``, ``FusedLowerer``'s loop over a summed index): declares
    the team (``ls_nt``: the caller's threads when the work pays for the copies,
    ``PRIVATE_RATIO``, and they fit the kept buffers' limit), the copies of ``ls_osz`` elements
    of C type ``T`` for threads 1.. (``ls_pv``, kept by the kernel between calls: ``KEEP``), the
    result's own pointer ``ls_o0`` (read from ``o``) and the team that runs (``ls_pt``: one when
    the copies cannot be allocated; a dense kernel has no failure path). ``counts``: a max, min
    or product whose entries are counted per point (mode "dense-count": ``ocnt``) gets copies of
    the counts too (``ls_pc``, ``ls_c0``)."""
    nt = abi.int(("threads",))
    item = f"(sizeof({T}) + sizeof(int64_t))" if counts else f"sizeof({T})"
    copies = f"(double)({nt} - 1) * (double)ls_osz * (double){item}"
    ratio = (f"((double)ls_osz * (double)sizeof({T}) <= {PRIVATE_SMALL:.1f} ? "
             f"{PRIVATE_RATIO[0]:.1f} : {PRIVATE_RATIO[1]:.1f})")
    team_size(body, abi, f"(!({packed}) || {copies} > (double)LS_KEEP_MAX "
                         f"|| {ratio} * (double)ls_osz > ({work})) ? -1.0 : ({work})")
    body.add(Decl(f"{T} *", "ls_pv", "NULL"),
             Decl("const int", "ls_own", "ls_nt > 1 && ls_keep_take()"),
             Decl(f"{T} *const", "ls_o0", "o"), Decl("int64_t", "ls_pt", "ls_nt"))
    get = Block().add(f"ls_pv = ({T} *)ls_keep_get(ls_own, 0, {_copies_size(T)});")
    if counts:
        body.add(Decl("int64_t *", "ls_pc", "NULL"), Decl("int64_t *const", "ls_c0", "ocnt"))
        get.add(f"ls_pc = (int64_t *)ls_keep_get(ls_own, 1, {_copies_size('int64_t')});")
    body.add(If("ls_nt > 1", get), "if (!ls_pv) ls_pt = 1;")
    if counts:
        body.add("if (!ls_pc) ls_pt = 1;")
    body.add(f"{abi.int(('team',))} = ls_pt;")


def _copies_size(T):
    return f"(size_t)(ls_pt - 1) * (size_t)ls_osz * sizeof({T})"


def private_copy(T, ident=None, counts=False):
    """The thread's result inside the region (thread ``tid``): its copy, started at zero (or at
    ``ident``, a max's or min's identity), or for thread 0 the result itself, as ``o`` (and
    ``ocnt``, with ``counts``): the loops are emitted unchanged. Put the loops in a block of
    their own with these: their restrict ``o`` must end before ``add_copies`` reads the copies
    through ``ls_o0``."""
    out = [Decl(f"{T} *restrict", "o", "tid ? ls_pv + (tid - 1) * ls_osz : ls_o0"),
           f"if (tid) memset(o, 0, (size_t)ls_osz * sizeof({T}));" if ident is None else
           If("tid", Block().add(For("e", "0", "ls_osz", Block().add(f"o[e] = {ident};"))))]
    if counts:
        out += [Decl("int64_t *restrict", "ocnt", "tid ? ls_pc + (tid - 1) * ls_osz : ls_c0"),
                "if (tid) memset(ocnt, 0, (size_t)ls_osz * sizeof(int64_t));"]
    return out


def add_copies(T, dtype, red="sum", counts=False):
    """After the loops, in the region: each thread folds the copies into its share of the
    result (``red``: sum, max, min, prod; ``counts``: the entry counts added), in thread order
    (the same values from call to call at one thread count)."""
    add = Block().add(Decl(f"const {T} *restrict", "q_", "ls_pv + (t - 1) * ls_osz"))
    step = Block().add(C.reduce_step(red, "ls_o0[e]", "q_[e]", dtype))
    if counts:
        add.add(Decl("const int64_t *restrict", "qc_", "ls_pc + (t - 1) * ls_osz"))
        step.add("ls_c0[e] += qc_[e];")
    add.add(For("e", "e0_", "e1_", step))
    return If("ls_tn > 1", Block().add(
        Line("#pragma omp barrier"),
        Decl("const int64_t", "e0_", "ls_osz * tid / ls_tn"),
        Decl("const int64_t", "e1_", "ls_osz * (tid + 1) / ls_tn"),
        For("t", "1", "ls_tn", add)))


def release_copies(T, counts=False):
    """After the region: the copies back to the kernel's pool."""
    out = [f"ls_keep_put(ls_own, 0, ls_pv, {_copies_size(T)});"]
    if counts:
        out.append(f"ls_keep_put(ls_own, 1, ls_pc, {_copies_size('int64_t')});")
    return out + ["if (ls_own) ls_keep_give();"]


# The threads' buffers of a sparse result appended on threads (emit_par_rows), kept by the
# kernel between calls: allocated and freed each call they came back as fresh pages every
# call (glibc trims the top of its heap, or maps a large block afresh), 2,400 page faults and
# 6 ms of system time a call for cage10's A @ A on two threads, more than the second thread
# saved. A call that finds them taken (another Python thread running the same kernel) allocates
# its own; buffers over LS_KEEP_MAX bytes in all are freed rather than kept, and a result
# expected larger than that runs on one thread (emit_par_rows): in a process whose heap other
# libraries churn, two threads made MIT8's A @ A (187 MB) 1.7x slower than one.
KEEP = """#define LS_KEEP_N 128
#define LS_KEEP_MAX ((size_t)64 << 20)
static void *ls_kp[LS_KEEP_N];
static size_t ls_kc[LS_KEEP_N], ls_kall;
static int ls_kbusy;
static inline int ls_keep_take(void) { return __atomic_exchange_n(&ls_kbusy, 1, __ATOMIC_ACQUIRE) == 0; }
static inline void ls_keep_give(void) { __atomic_store_n(&ls_kbusy, 0, __ATOMIC_RELEASE); }
/* a buffer of at least n bytes: the kept one when it is large enough (own: the pool is ours) */
static inline void *ls_keep_get(int own, int64_t k, size_t n) {
  if (own && k < LS_KEEP_N && ls_kp[k]) {
    void *b = ls_kp[k];
    ls_kall -= ls_kc[k]; ls_kp[k] = NULL;
    if (ls_kc[k] >= n) return b;
    free(b);
  }
  return ls_malloc(n ? n : 1);
}
/* back to the pool (b: a buffer of n bytes), or freed */
static inline void ls_keep_put(int own, int64_t k, void *b, size_t n) {
  if (own && b && k < LS_KEEP_N && !ls_kp[k] && ls_kall + n <= LS_KEEP_MAX) {
    ls_kp[k] = b; ls_kc[k] = n; ls_kall += n;
  } else {
    free(b);
  }
}"""


# An appended (merged) entry costs a few ns, and on threads it is copied once more after the
# region: its work counts an eighth of a SpMV's multiply-add against the thread threshold
# (``team_size``), so an element-wise merge needs about 130k entries before two threads run it.
# Two threads against one, A + A.T (us): cryg2500 (12k entries) 51 -> 85, cora (11k) 75 -> 86,
# tomography (29k) 89 -> 83, bcsstk13 (84k) 248 -> 236, fe_4elt2 (66k) 250 -> 211, wiki-Vote
# (104k) 793 -> 542. A workspace's rows (A @ B) keep the plain estimate: it counts the operands'
# entries, not the products, which are many more (cora's A @ A, 11k entries: 783 -> 494 us).
APPEND_WORK = 0.125

# Private copies of a result summed on threads (``emit_private``) are zeroed and added: the work
# must be PRIVATE_RATIO[0] times the result's points where a copy fits in PRIVATE_SMALL bytes
# (a core's cache), PRIVATE_RATIO[1] times where it does not (its zeroing, adding and scattered
# sums then go to memory). Measured on the corpus, two threads over one (bench --scaling 2):
# A.T @ x (results up to 512 KB) 1.26-1.79 from 4.8 entries a column up; A.T @ X with 128
# columns (results of 4-38 MB) 0.66-0.97 below 12 entries a column (fe_4elt2 5.9, vt2010 4.8,
# NSR8K 8.6, email-Enron 10), 1.12-1.60 above (ca-CondMat 8.5 at 1.12 the exception).
PRIVATE_SMALL = float(1 << 20)
PRIVATE_RATIO = (2.0, 12.0)
# A flat sum's entry (one vector lane of an add) is far cheaper than a SpMV's multiply-add with a
# gather: its work counts an eighth against the thread threshold. A.sum() two threads over
# one: 0.77-0.97 below 66k entries, 1.11-1.21 at 88k-180k, 1.5-1.84 from 180k up.
FLAT_WORK = 0.125


class NoShare(Exception):
    """The outermost loop the lowerer emitted did not take the threads' shares that
    ``emit_private`` or ``emit_par_rows`` set up for it (a loop shape they do not expect):
    ``lower`` then emits the kernel without them, on one thread."""


class Lowerer:
    def __init__(self, spec: KernelSpec, count=False, shares=True):
        self.spec = spec
        self.shares = shares  # the outer loop may be shared out by rows or positions
        self.count = count  # an instrumented build for ls.opcount (compiler/lower/counting.py)
        self.stmt = spec.stmt
        self.abi = ABI()
        self.order = list(spec.order)
        self.vname = {v: f"x{k}" for k, v in enumerate(self.order)}
        self.ext = {v: f"N{k}" for k, v in enumerate(self.order)}
        self._occ = [_Acc(q, a, spec.inputs[a.operand]) for q, a in enumerate(accesses_of(self.stmt.expr))]
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
        self.oct = C.ctype(self.odt)
        self.ofmt = spec.output.format
        self.oit = C.ctype(spec.output.index_dtype)
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

    # -- helpers ------------------------------------------------------------------------------
    def share_equal(self, canon):
        """Equal accesses (same slot and subscripts) share one lowering state: one iterator,
        one load (``canon[q]``: the first access equal to access q, as the patterns key them).
        ``accs`` holds each state once; ``acc_by_q`` maps every access to its state."""
        self.acc_by_q = [self._occ[c] for c in canon]
        self.accs = [a for q, a in enumerate(self._occ) if canon[q] == q]

    def it_type(self, slot):
        return C.ctype(self.spec.inputs[slot].index_dtype)

    # -- entry ------------------------------------------------------------------------------
    def lower(self) -> Block:
        top = Block()
        self.ws = self.spec.mode.startswith("ws-")  # a workspace assembles the result
        if self.ws:
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
            key = self.oit if len(self.stmt.out_indices) - self.ws_h == 1 else "int64_t"
            top.prelude = [workspace.prelude(self.spec.mode[3:], self.oct, key, reduce, self.odt, comb_count)]
        self.declare_inputs(top)
        for v in self.order:
            top.add(Decl("int64_t", self.ext[v], self.abi.int(("ext", v))))
        for v, value in (self.spec.loops.bounds if self.spec.loops is not None else ()):
            # a schedule's bound: the loop's trip count is a constant (checked per call in
            # compiler/pipeline.py), which the C compiler can unroll and vectorise
            self.ext[v] = str(value)
        self.sched = Block()  # run-time schedule flags, declared as the loops ask for them
        self.sched_flags = {}
        self.fixed_flags = {}  # flag -> its value in the loop nest being emitted (emit_flag_versions)
        self.static_rows = False  # a walk's parallel chunks in a fixed order (emit_flag_versions)
        self.stream_ahead = False  # segment sums prefetch their driver's entries (stream_gate)
        self.span = None  # the parallel loop's bounds when ``parallel`` set them (take_span)
        self.hoisted = {}  # C of a loop-invariant call -> the constant computed once (``valued``)
        # which of its inserts the workspace uses, when its policy has two: measured per call
        # on the first sparse operand (runtime/tuning.py Flags), the branch until then
        self.ws_flag = None
        if self.ws and self.ws_h >= 1 and not self.count and workspace.has_insert_b(self.spec.mode[3:]):
            key = next((a for a in self.accs if not a.spec.dense), None)
            if key is not None:
                self.ws_flag = self.sched_flag(("wsb", key.slot, 0))
        self.pf_flags = set()  # prefetch gates declared (prefetch_segments)
        at = len(top.body)
        self.counting_inserts = False
        self.declare_output(top)
        body = Block()
        top.add(body)
        self.private = self._private()
        if self.par_rows:
            self.emit_par_rows(body)
        elif self.private is not None:
            self.emit_private(body)
        elif self.row_span is not None:  # each thread places its own rows at its own cursors
            self.hname = "ht"
            region = Block().add(Decl("const int64_t", "tid", "(int64_t)omp_get_thread_num()"),
                                 Decl("int64_t *", "ht", "h + tid * (osz0 + 2)"), *self.row_range)
            body.add(Line("#pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1) reduction(+:nz)"),
                     region)
            self.emit_versions(region)
        else:
            self.emit_flag_versions(body)
        top.body[at:at] = self.sched.body
        loops = self.spec.loops
        for v, rel in (loops.splits if loops is not None else ()):
            if v not in self.split_done:
                raise NotImplementedError(
                    f"Schedule.split: the loop over {v.name!r} in `{self.stmt!r}` walks stored entries, "
                    f"not a range of coordinates; splitting it is not lowered yet (issue 6): walk its "
                    f"positions (fuse, pos) and split those")
        self.fail_path = ["return 0;"]
        self.finish_output(top)
        if self.prelude_extra:
            top.prelude = list(getattr(top, "prelude", ())) + self.prelude_extra
        frees = [f"free({n});" for n in self.locs]
        fail = self.fail_path
        top.add(*frees, *fail[:-1], *(frees if len(fail) > 1 else []), fail[-1])
        # every loop over a result index ran over its whole extent and each point stores once
        # with "=": the result buffer may start uninitialised (np.empty, not a zero-fill pass)
        mode = self.spec.mode
        self.abi.writes_all = not self.out_partial and mode in ("dense", "dense-acc")
        if self.out_partial:
            self.abi.writes_rows = ()
        return top

    def declare_inputs(self, top):
        for k, sp in enumerate(self.spec.inputs):
            declare_operand(top, self.abi, k, sp)

    # -- output -------------------------------------------------------------------------------
    def declare_output(self, top):
        mode = self.spec.mode
        nd = len(self.outs)
        if mode.startswith("dense"):
            top.add(Decl(f"{self.oct} *restrict", "o", f"({self.oct} *){self.abi.ptr(('out', 'vals'))}"))
            for m in range(nd):
                top.add(Decl("int64_t", f"os{m}", self.abi.int(("ostride", m))))
            if mode == "dense-count":
                top.add(Decl("int64_t *restrict", "ocnt", f"(int64_t *){self.abi.ptr(('out', 'cnt'))}"))
            return
        # sparse output: buffers are malloc'd here and handed back through p[]
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
        it = self.oit
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
        # every buffer the kernel allocates is declared NULL up front, so that a failed
        # allocation anywhere can jump to ls_fail (end of the kernel): the output buffers go
        # back through p[] for the glue to free (Runner._failed), the temporaries are freed there
        heap = []
        for l in range(nd):
            if self.olv[l].kind == "compressed":
                heap.append((it, f"op{l}"))
            if self.olv[l].kind != "dense":
                heap.append((it, f"oc{l}"))
        heap.append((self.oct, "ov"))
        self.temps = []
        if mode == "sort":
            self.temps = [f"tc{l}" for l in range(nd)] + ["tv", "perm", "tmp", "h", "nx"]
            heap += [("int64_t", f"tc{l}") for l in range(nd)] + [(self.oct, "tv")]
            heap += [("int64_t", n) for n in ("perm", "tmp", "h", "nx")]
        if self.par_rows:  # (the chunk table and the threads' buffers)
            heap += [("int64_t", "ls_ck"), ("void *", "ls_tp")]
            self.temps += ["ls_ck", "ls_tp"]
        for t, n in heap:
            top.add(Decl(f"{t} *", n, "NULL"))
        if self.ws:
            # the workspace and the all array: zeroed before any jump to ls_fail frees them
            top.add(Decl("ls_ws", "ws", "{0}"), Decl("ls_ism", "ism", "{0}"))
            # the loops once without values, counting inserts: every result entry comes from
            # one, so the result arrays start at that size (capped by the full size) and never
            # grow by copying; pages never written are never touched. The count's loops are
            # cheap (a row-wise product's inner loop is just its length).
            # A result inside an input's pattern (a masked product) has at most that input's
            # entries: that bound sizes it without the counting loops.
            # A result whose only compressed level is the workspace's (CSR-like: its flush grows
            # the coordinates and values as it goes) starts instead at the size of this argument
            # set's previous result, plus an eighth, when there is one: a repeated product then
            # allocates what it will use (no count, and no shrink at the end, whose size would
            # differ from the next call's request: glibc maps such a buffer afresh every call,
            # and its pages fault in again: wiki-Vote A @ A paid 640 faults and 3 ms of system
            # time a call, 30 ms when huge pages ran out).
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
        if self.direct:
            # the rows' entry counts, then their starts (h[r]: the next place in row r); the
            # result arrays get exactly the entries (a transposition's pages are all written)
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
        if mode in ("mask", "map"):
            a = self.acc_by_q[self.mask_q]
            pm = f"p{a.slot}_{nd - 1}"
            top.add(Decl("const int64_t", "mb0", f"(int64_t){pm}[0]"),
                    Decl("const int64_t", "mnz", f"(int64_t){pm}[{dense_count}] - mb0"),
                    "ocap = mnz > 16 ? mnz : 16;")
        for l in range(nd):
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
        if mode in ("mask", "map"):
            # the mask's structure, and zeros where the products accumulate
            L, a = nd - 1, self.acc_by_q[self.mask_q]
            par = []
            if mode == "map" and not self.count:  # (copies as wide as the values loop after them)
                team_size(top, self.abi, "(double)mnz", name="ls_cnt", report=False)
                par = [Line("#pragma omp parallel for schedule(static) num_threads((int)ls_cnt) if(ls_cnt > 1)")]
            top.add(*par, For("t", "0", f"({dense_count}) + 1",
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

    def _par_rows(self):
        """A CSR-like result appended row by row (mode "append", or a workspace flushed after
        each row) whose outermost loop is its row index: the rows may run on threads, each
        appending to buffers of its own (``emit_par_rows``). Not under a schedule (its loops
        are the schedule's). (An instrumented build is the same code plus its counters, which
        are atomic: compiler/lower/counting.py.)"""
        mode = self.spec.mode
        return (self.spec.loops is None and self.shares and len(self.outs) == 2
                and self.kd == 1 and not self.ocoo and self.olv[1].kind == "compressed"
                and self.order[0] == self.ovars[0]
                and (self._outer_range() is not None or self._outer_walker() is not None)
                and (mode == "append" or (self.ws and self.ws_h == 1)))

    def _outer_range(self):
        """The outermost loop runs over a range (no operand walks stored coordinates there: a
        thread's share of it is a range of rows, ``row_span``): the position array of a
        CSR-like operand's level under it (row ranges of about equal entries), "" when none
        has one; None when some operand walks a compressed level there (COO's first level,
        DCSR's rows: the walk's iterator carries from row to row)."""
        v, weights = self.order[0], ""
        for a in self.accs:
            if a.spec.dense or not a.lvars or a.lvars[0] != v:
                continue
            levels = a.spec.format.levels
            if levels[0].kind != "dense":
                return None
            if not weights and len(levels) > 1 and levels[1].kind == "compressed":
                weights = f"p{a.slot}_1"
        return weights

    def emit_par_rows(self, body):
        """The row loop of a ``_par_rows`` result in chunks of rows (``omp_chunk``) handed out
        to the team dynamically. On a team of one, thread 0 appends to the kernel's buffers as
        the serial loop does. On more, each thread appends its chunks' entries to coordinate and
        value buffers of its own (allocated here, before the region, so that they come from the
        main heap and are reused call after call: a thread's own malloc arena gave every call
        fresh pages, ~860 page faults for cage10's A + A.T) and keeps a workspace of its own;
        a row's end is written as the position in its thread's buffer. After the region the
        chunks are copied in row order into the kernel's buffers (grown to the total), each
        chunk's row ends shifted by where it landed. A failure inside the region (an
        allocation) cannot jump out of it: the chunk's ``goto ls_fail`` becomes ``goto
        ls_tfail`` (a macro around the loops), which flags it; the rest skip their chunks and the
        kernel fails after the region. Each row is computed by one thread as the serial loop
        computes it, so the values are the serial ones. Where the outer loop walks an
        operand's stored coordinates (COO's first level, a COO tensor's in TTV) instead of a
        range of rows, a chunk is a run of its positions cut where the coordinate changes
        (``share_positions``), and records the rows it spans for the shift."""
        it, vt, n = self.oit, self.oct, self.ext[self.order[0]]
        for pre in (THREAD_NUM, KEEP):
            if pre not in self.prelude_extra:
                self.prelude_extra.append(pre)
        # rows walked as a range: chunks of rows; walked by an operand's stored coordinates
        # (COO's first level, DCSR's rows): chunks of its positions, cut where the coordinate
        # changes (``share_positions``), each recording the rows it spans (two more slots)
        walker = self._outer_walker() if self._outer_range() is None else None
        W = 6 if walker is not None else 4
        count = n
        if walker is not None:
            p0 = f"p{walker.slot}_0"
            body.add(Decl("const int64_t", "ls_pb", f"(int64_t){p0}[0]"),
                     Decl("const int64_t", "ls_pz", f"(int64_t){p0}[1]"))
            count = "(ls_pz - ls_pb)"
        work = self.work()
        if self.spec.mode == "append":
            work = f"({work}) * {APPEND_WORK}"
        # a result larger than the kept buffers stays on one thread: its threads' buffers would
        # be fresh pages every call, a second copy of it (see KEEP)
        big = f"(double)ocap * (double)(sizeof({it}) + sizeof({vt})) > (double)LS_KEEP_MAX"
        team_size(body, self.abi, f"({big}) ? -1.0 : ({work})")
        body.add(Decl("const int64_t", "ls_pch", omp_chunk("ls_nt", count)),
                 Decl("const int64_t", "ls_nch", f"({count} + ls_pch - 1) / ls_pch"),
                 Decl("const int64_t", "ls_tcap", "ls_nt > 1 ? ocap / ls_nt + 16 : ocap"),
                 "ls_tp = (void **)calloc((size_t)2 * ls_nt, sizeof(void *));",
                 f"ls_ck = (int64_t *)malloc(((size_t){W} * ls_nch + (size_t)3 * ls_nt + 1) * sizeof(int64_t));",
                 "if (!ls_tp || !ls_ck) goto ls_fail;",
                 Decl("int", "ls_bad", "0"), Decl("const int", "ls_own", "ls_nt > 1 && ls_keep_take()"))
        # (a thread's counts start as its buffers' sizes: a thread the runtime did not start, as
        # without OpenMP, leaves them so, and they are what goes back to the pool)
        own = Block().add(For("t", "0", "ls_nt", Block().add(
            f"ls_tp[2 * t] = ls_keep_get(ls_own, 2 * t, (size_t)ls_tcap * sizeof({it}));",
            f"ls_tp[2 * t + 1] = ls_keep_get(ls_own, 2 * t + 1, (size_t)ls_tcap * sizeof({vt}));",
            "if (!ls_tp[2 * t] || !ls_tp[2 * t + 1]) ls_bad = 1;",
            f"ls_ck[{W} * ls_nch + 3 * t] = 0;", f"ls_ck[{W} * ls_nch + 3 * t + 1] = ls_tcap;",
            f"ls_ck[{W} * ls_nch + 3 * t + 2] = ls_tcap;")))
        body.add(If("ls_nt > 1", own, Block().add("ls_tp[0] = (void *)oc1;", "ls_tp[1] = (void *)ov;")))
        region = Block()
        body.add(Line("#pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)"), region)
        # the thread's own result arrays and counts, under the names the loops append with
        region.add(Decl("const int64_t", "tid", "(int64_t)omp_get_thread_num()"),
                   Decl("int64_t", "occ1", "ls_tcap"), Decl("int64_t", "ovc", "ls_tcap"),
                   Decl("int64_t", "on1", "0"),
                   Decl(f"{it} *", "oc1", f"({it} *)ls_tp[2 * tid]"),
                   Decl(f"{vt} *", "ov", f"({vt} *)ls_tp[2 * tid + 1]"))
        if self.ws:
            region.add(Decl("ls_ws", "ws", "{0}"), Decl("ls_ism", "ism", "{0}"),
                       Decl("int", "ls_ok", "!ls_bad"), f"if (ls_ok && {self._ws_init()}) ls_ok = 0;")
            if self.ws_flag:
                region.add(f"if (ls_ok && ls_ws_use(&ws, {self.ws_flag})) ls_ok = 0;")
            region.add(If("!ls_ok", Block().add(Line("#pragma omp atomic write"), "ls_bad = 1;")))
        chunk = Block()
        region.add(Line("#pragma omp for schedule(dynamic, 1)"), For("ls_k", "0", "ls_nch", chunk))
        chunk.add(Decl("int", "ls_b"), Line("#pragma omp atomic read"), "ls_b = ls_bad;",
                  "if (ls_b) continue;")
        if walker is None:
            chunk.add(Decl("const int64_t", "ls_r0", "ls_k * ls_pch"),
                      Decl("const int64_t", "ls_r1", f"ls_r0 + ls_pch < {n} ? ls_r0 + ls_pch : {n}"))
        chunk.add(Decl("const int64_t", "ls_s0", "on1"), Line("#define ls_fail ls_tfail"))
        rows = Block()
        chunk.add(rows)
        if walker is None:
            self.row_span = ("ls_r0", "ls_r1")
        else:
            self.pos_chunk = ("ls_k", "ls_nch", W)
        self.span_uses = 0
        self.emit_versions(rows)
        self.row_span = self.pos_chunk = None
        if not self.span_uses:  # (every chunk would run every row: never emitted so)
            raise NoShare(self.stmt)
        chunk.add(Line("#undef ls_fail"),
                  f"ls_ck[{W} * ls_k] = ls_s0;", f"ls_ck[{W} * ls_k + 1] = on1 - ls_s0;", f"ls_ck[{W} * ls_k + 2] = tid;",
                  "continue;", "ls_tfail: ;", Line("#pragma omp atomic write"), "ls_bad = 1;")
        region.add("ls_tp[2 * tid] = (void *)oc1;", "ls_tp[2 * tid + 1] = (void *)ov;",
                   f"ls_ck[{W} * ls_nch + 3 * tid] = on1;", f"ls_ck[{W} * ls_nch + 3 * tid + 1] = occ1;",
                   f"ls_ck[{W} * ls_nch + 3 * tid + 2] = ovc;")
        if self.ws:
            region.add(workspace.FREE)
        one = Block().add(f"oc1 = ({it} *)ls_tp[0];", f"ov = ({vt} *)ls_tp[1];", "ls_tp[0] = ls_tp[1] = NULL;",
                          f"on1 = ls_ck[{W} * ls_nch];", f"occ1 = ls_ck[{W} * ls_nch + 1];",
                          f"ovc = ls_ck[{W} * ls_nch + 2];")
        # a team: where each chunk lands, then the copies (on the team) into the kernel's buffers
        lo_r, hi_r = ("k * ls_pch", "r1_") if walker is None else (f"ls_ck[{W} * k + 4]", f"ls_ck[{W} * k + 5]")
        copy = Block().add(Decl("const int64_t", "s_", f"ls_ck[{W} * k]"), Decl("const int64_t", "c_", f"ls_ck[{W} * k + 1]"),
                           Decl("const int64_t", "t_", f"ls_ck[{W} * k + 2]"), Decl("const int64_t", "b_", f"ls_ck[{W} * k + 3]"),
                           f"memcpy(oc1 + b_, ({it} *)ls_tp[2 * t_] + s_, (size_t)c_ * sizeof({it}));",
                           f"memcpy(ov + b_, ({vt} *)ls_tp[2 * t_ + 1] + s_, (size_t)c_ * sizeof({vt}));",
                           *([Decl("const int64_t", "r1_", f"(k + 1) * ls_pch < {n} ? (k + 1) * ls_pch : {n}")]
                             if walker is None else []),
                           If("b_ != s_", Block().add(For("r", lo_r, hi_r, Block().add(
                               f"op1[r + 1] += ({it})(b_ - s_);")))))
        # (grown here without LS_GROW's jump: the threads' buffers and the pool are handed back
        # below first)
        grow = [If(f"ls_tot > {cap}", Block().add(
                    Decl(f"{t} *", f"{g}_", f"({t} *)ls_realloc({buf}, (size_t)ls_tot * sizeof({t}))"),
                    If(f"{g}_", Block().add(f"{buf} = {g}_;", f"{cap} = ls_tot;"), Block().add("ls_bad = 1;"))))
                for buf, cap, t, g in (("oc1", "occ1", it, "gc"), ("ov", "ovc", vt, "gv"))]
        team = Block().add(
            Decl("int64_t", "ls_tot", "0"),
            For("k", "0", "ls_nch", Block().add(f"ls_ck[{W} * k + 3] = ls_tot;", f"ls_tot += ls_ck[{W} * k + 1];")),
            *grow,
            If("!ls_bad", Block().add(
                Line("#pragma omp parallel for schedule(dynamic, 1) num_threads((int)ls_nt) if(ls_nt > 1)"),
                For("k", "0", "ls_nch", copy), "on1 = ls_tot;")))
        body.add(If("ls_nt == 1", one, Block().add(If("!ls_bad", team))))
        # (on a team of one, its buffers are the kernel's again: nothing left to free)
        # (after a failure nothing is kept: the memory goes back at once)
        back = Block().add(f"ls_keep_put(ls_own && !ls_bad, 2 * t, ls_tp[2 * t], (size_t)ls_ck[{W} * ls_nch + 3 * t + 1] * sizeof({it}));",
                           f"ls_keep_put(ls_own && !ls_bad, 2 * t + 1, ls_tp[2 * t + 1], (size_t)ls_ck[{W} * ls_nch + 3 * t + 2] * sizeof({vt}));")
        body.add(For("t", "0", "ls_nt", back), "if (ls_own) ls_keep_give();",
                 "free(ls_ck); free(ls_tp); ls_ck = NULL; ls_tp = NULL;",
                 "if (ls_bad) goto ls_fail;")

    def _private(self):
        """A dense result summed over its outermost loop, which is a reduction (``A.T @ x``:
        ``o[j] += A[i, j] * x[i]`` over the rows i of A; ``A.sum(axis=0)``; ``A.sum()``): no
        row of the loop owns a part of the result, so ``parallel`` keeps it on one thread. It
        can run on threads each summing into a private copy of the result (paper 001's
        "temporary" race strategy), the copies added after (``emit_private``). Sums, and a
        max, min or product over a result with indices (mode "dense-count": the copies carry
        their entry counts, added, so that the implicit zeros are folded in after as before).
        Returns ``("rows", positions or None)``: the outermost loop is a range (row ranges of
        about equal entries when a CSR-like operand's positions lie under it); ``("flat",
        access)``: a scalar's flat walk of one operand's positions (``emit_flat``); or None.
        Not under a schedule (its loops are the schedule's)."""
        mode = self.spec.mode
        if (self.spec.loops is not None or not self.shares or not self.order
                or self.order[0] not in self.red):
            return None
        if self.stmt.reduce == "sum":
            if not (mode == "dense-inter" or (mode == "dense-acc" and not self.outs)):
                return None
        elif mode != "dense-count" or not self.outs:
            # (a max, min or product over the outer loop counts its entries per point: the
            # copies hold counts too, added, and the implicit zeros are folded in after)
            return None
        if not self.outs:
            flat = self._sole_walk()
            if flat is not None:
                return ("flat", flat)
        if len(self.order) < 2:
            return None  # (a lone dense range is emit_dense_reduction's, which takes no span)
        weights = self._outer_range()
        if weights is None:  # one operand's stored coordinates: a share of its positions each
            return ("pos", None) if self._outer_walker() is not None else None
        return ("rows", weights or None)

    def _outer_walker(self):
        """The one access that walks a compressed level (COO's first, DCSR's rows) in the
        outermost loop, when it is the only one reading that loop's index at its first level;
        else None."""
        v = self.order[0]
        walkers = [a for a in self.accs if not a.spec.dense and a.lvars and a.lvars[0] == v]
        if len(walkers) != 1 or walkers[0].spec.format.levels[0].kind != "compressed":
            return None
        return walkers[0]

    def emit_private(self, body):
        """The loops of a ``_private`` kernel on the team: thread t > 0 sums into its own
        zeroed copy of the result (the loops' ``o``, shadowed), thread 0 into the result
        itself; each takes a static share of the outermost loop (rows of about equal stored
        entries, or an equal share of the flat walk's positions), then, after a barrier, each
        adds the copies into its share of the result, in thread order. The values are the same
        from call to call at one thread count; they differ from one thread's in rounding
        only, as NumPy's pairwise sums differ from a loop's. Copies are kept by the kernel
        between calls (``KEEP``: allocated each call they were fresh pages each time). The
        team runs when the result is small against the work (the copies are zeroed and added:
        ``PRIVATE_RATIO``), its copies fit the kept buffers' limit and its strides pack it (a
        strided view stays on one thread); copies that cannot be allocated leave it on one
        (``private_team``)."""
        kind, arg = self.private
        T = self.oct
        packed = self._result_span(body)
        work = self.work()
        if kind == "flat":
            work = f"({work}) * {FLAT_WORK}"
        private_team(body, self.abi, T, work, packed, self.spec.mode == "dense-count")
        region = Block().add(*team_ids(self.prelude_extra, KEEP))
        body.add(Line("#pragma omp parallel num_threads((int)ls_pt) if(ls_pt > 1)"), region)
        red, counts = self.stmt.reduce, self.spec.mode == "dense-count"
        ident = None if red == "sum" else C.literal(ops.reduce_identity(red, self.odt), self.odt)
        own = Block().add(*private_copy(T, ident, counts))
        region.add(own)
        if kind == "pos":
            self.pos_share = True  # (emit_single_driver shares out the walk's positions)
        elif kind == "flat":
            a = arg
            count = level_count(a.spec.format, a.slot, len(a.lvars) - 1)
            own.add(Decl("const int64_t", "ls_f0", f"({count}) * tid / ls_tn"),
                    Decl("const int64_t", "ls_f1", f"({count}) * (tid + 1) / ls_tn"))
            self.flat_span = ("ls_f0", "ls_f1")
        else:
            n = self.ext[self.order[0]]
            if arg is not None:
                own.add(*self._row_range(arg, n, "ls_tn"))
            else:
                own.add(Decl("const int64_t", "ls_r0", f"{n} * tid / ls_tn"),
                        Decl("const int64_t", "ls_r1", f"{n} * (tid + 1) / ls_tn"))
            self.row_span = ("ls_r0", "ls_r1")
        self.span_uses = 0
        self.emit_versions(own)
        self.row_span = self.flat_span = None
        self.pos_share = False
        if not self.span_uses:  # (every thread would run the whole loop: never emitted so)
            raise NoShare(self.stmt)
        region.add(add_copies(T, self.odt, red, counts))
        body.add(*release_copies(T, counts))

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

    @staticmethod
    def _row_range(p, n, nt="ls_nt"):
        """Declarations of ``ls_r0``/``ls_r1``, thread ``tid``'s rows of an operand with row
        positions ``p`` over ``n`` rows: ranges of about equal stored entries (a power-law
        graph's rows split by count put most entries on one thread), found by binary search, the
        same in every pass that uses them."""
        def first(share):  # the first row whose entries start at or past the share's target
            return (f"({{ const int64_t g_ = (int64_t){p}[0] + ((int64_t){p}[{n}] - (int64_t){p}[0]) "
                    f"* ({share}) / {nt}; int64_t l_ = 0, u_ = {n}; while (l_ < u_) {{ "
                    f"const int64_t m_ = (l_ + u_) / 2; if ((int64_t){p}[m_] < g_) l_ = m_ + 1; "
                    f"else u_ = m_; }} l_; }})")
        return [Decl("const int64_t", "ls_r0", first("tid")),
                Decl("const int64_t", "ls_r1", f"(tid + 1 == {nt}) ? {n} : {first('tid + 1')}")]

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

    # -- loops --------------------------------------------------------------------------------
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
        if depth == 0 and self.spec.loops is not None and self.spec.loops.tiles is not None:
            tiling.emit_tiles(self, blk)  # a schedule's tiles of nonzeros (compiler/lower/tiling.py)
            return
        if self.terms and depth == self.ws_h and self.term is None:
            self.emit_terms(depth, blk)
            return
        mode = self.spec.mode
        m = len(self.outs)
        if mode in ("dense-acc", "append") and self.red and depth == m and not self.in_acc:
            self.emit_accumulate(depth, blk)
            return
        if depth == len(self.order):
            if depth == 0:
                # no loops (``y = x[3]``): the constant levels are resolved here, since no
                # loop body will (every other kernel resolves them in its first loop's body)
                self.cascade(blk)
            self.emit_leaf(blk)
            return
        if depth == 0 and self.in_acc and not self.outs:
            flat = self._flat_access()
            if flat is not None:
                self.emit_flat(flat, blk, self.flat_span)
                return
        if depth == 0 and mode == "map" and self._map_flat():
            self.flat_map = True  # (its walk of the positions may run on threads: parallel)
            self.emit_flat(self.acc_by_q[self.mask_q], blk, ("mb0", "mb0 + mnz"))
            self.flat_map = False
            return
        if depth == 0 and self.row_width and self.row_tile is None and self._row_tiles():
            self.emit_row_tiles(blk)
            return
        if self.row_width and self.row_acc is None and self._row_tail(depth):
            self.emit_row(depth, blk, fresh=self._slab(depth))
            return
        if self.row_vec is not None and depth == len(self.order) - 1:
            self.emit_row_vector_leaf(blk)
            return
        v = self.order[depth]
        x = self.vname[v]
        iters = [a for a in self.accs if not a.spec.dense and a.lvl < len(a.lvars)
                 and a.lvars[a.lvl] == v and a.spec.format.levels[a.lvl].kind != "dense"]
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
                    f"`{self.stmt!r}`, where the loop also walks other operands (not lowered yet; issue 6)")
        located = locate.choose(self, depth, iters, pat, keys)
        for d, pr in self.search_pairs(pat, keys, iters, byq, located):
            # one segment much shorter than the other: it drives, the other is searched
            short, rest = Block(), Block()
            blk.add(If(f"(z{U[d.q]} - b{U[d.q]}) * {self.SEARCH_RATIO} < z{U[pr.q]} - b{U[pr.q]}", short, rest))
            self.emit_search(depth, v, short, d, pr, U, snap)
            blk = rest
        if located:
            # scattered segments probed (compiler/lower/locate.py); the merge when the arrays are missing
            names = [locate.scatter(self, a, depth) for a in located]
            yes, no = Block(), Block()
            blk.add(If(" && ".join(names), yes, no))
            plan = self.row_acc_plan(depth, located, keys, byq, iters)
            if plan is not None:
                # or, per call as measured (runtime/tuning.py), every product summed into a
                # dense row, multiplied by the mask's values once per row
                acc_blk, probe = Block(), Block()
                flag = self.sched_flag(("macc", plan[0].slot, plan[0].lvl))
                yes.add(If(f"{flag} && racc", acc_blk, probe))
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
                blk.add(Decl("int64_t", f"j{U[a.q]}", f"b{U[a.q]}"))
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

    # -- threads ----------------------------------------------------------------------------------
    def parallel(self, depth, v, followers, blk, count, forced=False, chunk=None, span=False):
        """OpenMP on the outermost loop when it runs over a result index of a dense result
        (each iteration writes its own elements; reductions stay inside an iteration), is a
        range or walks a unique level, and no iterator follows it (a follower's position
        carries from one iteration to the next). Chunks of rows (``omp_chunk``: rows of skewed
        graphs differ by orders of magnitude), each thread its own run of them first
        (``owned_chunks``) where the caller's loop is a range (``span``: it takes its bounds
        from ``take_span``), else handed out by OpenMP; the thread count comes from
        ``ls.set_num_threads`` at each call. ``count``: the loop's trip count. Returns the block
        the loop goes in. ``forced``: a schedule's parallel loop (checked in compiler/plan/loops.py),
        in dynamic chunks of ``chunk`` iterations; under a schedule no other loop is parallel."""
        if self.spec.loops is not None and not forced:
            return blk
        if (self.par_rows or self.private is not None) and depth == 0:
            # (emit_par_rows, emit_private: the region is open around the loop)
            self.par_open = True
            return blk
        # mode "map" writes each stored entry's value at its own position, whatever the loop:
        # its row loop, or the flat walk of the positions (``flat_map``); the zeros are summed
        mapped = self.spec.mode == "map" and not self.count
        # mode "mask" adds each row's sums at that row's own positions of the copied structure
        masked = self.spec.mode == "mask"
        if not forced and ((depth and not (mapped and self.flat_map)) or v not in self.outs or followers
                           or (self.spec.mode not in ("dense", "dense-inter", "dense-acc")
                               and not mapped and not masked)):
            return blk
        if forced and self.spec.loops.parallel[1] == "temporary" and v in self.red:
            return self.private_loop(blk, count, chunk)
        nt = self.abi.int(("threads",))
        if not forced:  # (a schedule's parallel loop runs on the threads asked for)
            nt = team_size(blk, self.abi, self.work())
        blk.add(Decl("const int64_t", "ls_chunk", chunk or omp_chunk(nt, count)))
        self.par_open = True
        red = " reduction(+:nz)" if mapped else ""
        if not forced and span and not (mapped or masked):
            return self.owned_chunks(blk, nt, count)
        # (a walk, or a schedule's loop:) chunks handed out as threads free up; in the loop
        # nests of a segment sum's variants (``emit_flag_versions``) a walk's chunks go round
        # the team in a fixed order instead (``owned_chunks``: why)
        kind = "static" if self.static_rows and not forced else "dynamic"
        blk.add(Line(f"#pragma omp parallel for schedule({kind}, ls_chunk) num_threads((int){nt}) "
                     f"if({nt} > 1){red}"))
        return blk

    def owned_chunks(self, blk, nt, count):
        """The row loop's chunks in ``nt`` runs of consecutive chunks, one a thread: each takes
        its own run's chunks first, in order, then helps the others with what is left of
        theirs (a counter per run, taken with an atomic add). Each thread then runs the same
        rows every call, so its branch predictor learns their loop exits (SpMV on vt2010, two
        threads, split loop: 98 us with chunks handed out as threads free up, 38 us with these),
        and a thread that starts late (woken from a passive wait) or runs slow (skewed rows) is
        covered by the others, which a fixed split of the rows cannot do (two threads with a
        passive wait: ca-CondMat 59 us against 91 for chunks round the team in a fixed order;
        docs/design.md, "Loop exits the predictor learns"); short kernels gain too (SpMM with
        128 columns on cryg2500, passive wait: 0.054-0.061 ms against 0.066-0.067 with
        OpenMP's dynamic chunks). Returns the block the row loop goes in; its bounds are
        ``take_span``'s."""
        if THREAD_NUM not in self.prelude_extra:
            self.prelude_extra.append(THREAD_NUM)
        blk.add(*owned_runs_setup(nt, count),
                Line(f"#pragma omp parallel num_threads((int){nt}) if({nt} > 1)"))
        region, chunk = owned_runs(nt, count)
        blk.add(region)
        self.span = ("ls_r0", "ls_r1")
        return chunk

    def take_span(self):
        """The bounds ``parallel`` set for the loop it returned a block for (``owned_chunks``),
        once, or None."""
        span, self.span = self.span, None
        return span

    def private_loop(self, blk, count, chunk):
        """A schedule's parallel loop over a reduction variable with ``races="temporary"``
        (checked in compiler/plan/loops.py: a dense result with indices, summed, mode dense-inter):
        the team (the threads asked for, one if the copies would pass the kept buffers' limit
        or a strided result) opens here, each thread sums into a private copy of the result
        (``private_copy``) over the chunks it takes (``omp for``, dynamic: the schedule's
        chunks), and the copies are added after (``add_copies``). Returns the block the loop
        goes in."""
        T = self.oct
        packed = self._result_span(blk)
        private_team(blk, self.abi, T, "1e300", packed)
        blk.add(Decl("const int64_t", "ls_chunk", chunk or omp_chunk("ls_pt", count)),
                Line("#pragma omp parallel num_threads((int)ls_pt) if(ls_pt > 1)"))
        own = Block().add(*private_copy(T))
        region = Block().add(*team_ids(self.prelude_extra, KEEP), own, add_copies(T, self.odt))
        blk.add(region, *release_copies(T))
        own.add(Line("#pragma omp for schedule(dynamic, ls_chunk)"))
        self.par_open = True
        return own

    def _result_span(self, body):
        """Declares ``ls_osz``, the dense result's span in its buffer; returns the C condition
        that its strides pack it (a strided view is not copied: it stays on one thread)."""
        if not self.outs:
            body.add(Decl("const int64_t", "ls_osz", "1"))
            return "1"
        exts = [self.ext[v] for v in self.outs]
        span = "1 + " + " + ".join(f"({e} - 1) * os{m}" for m, e in enumerate(exts))
        body.add(Decl("const int64_t", "ls_ofull", " * ".join(f"({e})" for e in exts)),
                 Decl("const int64_t", "ls_osz", f"ls_ofull > 0 ? {span} : 0"))
        return "ls_osz == ls_ofull"

    def work(self):
        """This kernel's work estimate (``work_estimate``)."""
        inputs = self.spec.inputs

        def spec_of(a):
            sp = inputs[a.operand]
            return None if sp.dense or not sp.ndim else (a.operand, sp)
        return work_estimate([(self.stmt, spec_of)], self.ext, self.abi)

    # -- fixed-width result rows ----------------------------------------------------------------
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
            chain = Block().add(If(f"{n} == {w}", version, chain))
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
        blk.add(Decl(self.oct, f"row{w}[{w}]"))
        init = self.zero() if fresh else f"o[{self.dense_addr()}]"
        blk.add(For(x, "0", str(w), Block().add(f"row{w}[{x}] = {init};")))
        inner = Block()
        blk.add(inner)
        self.emit(depth, inner)
        blk.add(For(x, "0", str(w), Block().add(f"o[{self.dense_addr()}] = row{w}[{x}];")))
        self.row_acc = None
        self.in_slab = False

    # The row as vectors of the target's width (GCC/Clang vector extensions, sized by the
    # build's target macros): gcc 12 vectorised the scalar row loop of a 32- or 64-wide SpMM
    # across the entries of A instead, with emulated gathers and the row in memory (bcsstk13, 64
    # columns, one thread: 2.1 ms, against 0.64 for MKL); as vector variables the row stays in
    # registers (C harness: 2.4x at 32 and 64 columns on AVX-512, 2.2x on AVX2, 1.7x on SSE2; a
    # vector of 64 bytes where the target has only 32 was 4x slower, hence the target's width).
    # Each lane sums its column in the same order as the scalar loop: the same values (rows of
    # WIDE_FMA bytes and more: one rounding less per product).
    VEC_PRELUDE = r"""
#if defined(__AVX512F__)
#define LS_VB 64
#elif defined(__AVX__)
#define LS_VB 32
#else
#define LS_VB 16
#endif
typedef double ls_vd __attribute__((vector_size(LS_VB), aligned(8), may_alias));
typedef float ls_vf __attribute__((vector_size(LS_VB), aligned(4), may_alias));
/* c + a * b in one rounding (the kernels build without contraction); only tiles of rows use it,
   and they are built for AVX-512 only (emit_row_tiles) */
#if defined(__AVX512F__)
#include <immintrin.h>
#define LS_VFMA_ls_vd(a, b, c) ((ls_vd)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define LS_VFMA_ls_vf(a, b, c) ((ls_vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#else
#define LS_VFMA_ls_vd(a, b, c) ((c) + (a) * (b))
#define LS_VFMA_ls_vf(a, b, c) ((c) + (a) * (b))
#endif
"""
    VEC_TYPES = {"float64": ("ls_vd", 8), "float32": ("ls_vf", 4)}
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
        if self.VEC_PRELUDE not in self.prelude_extra:
            self.prelude_extra.append(self.VEC_PRELUDE)
        ln = f"(LS_VB / {isz})"
        nv = f"({w} / {ln})"
        x = self.vname[tail]
        self.vname[tail] = f"lvb * {ln}"
        store = Block()
        for q, name in self._tile_rows(w):
            init = f"({vt}){{0}}" if fresh else f"*(const {vt} *)&o[{self.dense_addr()}]"
            blk.add(Decl(vt, f"{name}[{w} / {ln}]"))
            blk.add(For("lvb", "0", nv, Block().add(f"{name}[lvb] = {init};")))
            store.add(For("lvb", "0", nv, Block().add(f"*({vt} *)&o[{self.dense_addr()}] = {name}[lvb];")))
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
        self.vname[tail] = f"lvb * {ln}"
        self.unzeroed |= not self.in_slab

        def vec(e, it):
            if isinstance(e, Access):
                a = next(it)
                val = self.value_of_access(a, e)
                return f"(*(const {vt} *)&{val})" if a.spec.dense and tail in e.indices else val
            args = [vec(arg, it) for arg in e.args]
            return f"(-{args[0]})" if e.op == "negative" else f"({args[0]} {self.VEC_OPS[e.op]} {args[1]})"
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
                a, b = (f"({vec(x, it)} - ({vt}){{0}})" for x in e.args)
                lane.add(f"{name}[lvb] = LS_VFMA_{vt}({a}, {b}, {name}[lvb]);")
            else:
                lane.add(f"{name}[lvb] += {vec(e, iter(self.acc_by_q))};")
        self.vname[tail] = x
        blk.add(For("lvb", "0", nv, lane))

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
            self.vname[v] = f"({base} + {q})"
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
        blk.add(Line(f"#if LS_VB >= 64 && {need} <= 1024"), tiled, Line("#else"), plain, Line("#endif"))
        self._untiled = True
        self._emit(0, plain)
        self._untiled = False
        blk = tiled
        x, n = self.vname[v], self.ext[v]
        nb = f"(({n}) / {R})"
        body = Block().add(Decl("const int64_t", f"{x}t", f"lrb * {R}"))
        where = self.parallel(0, v, [], blk, nb)
        where.add(For("lrb", "0", nb, body))
        self.bind(v)
        self.row_tile = (R, f"{x}t")
        self.emit(1, body)
        self.row_tile = None
        rest = Block()
        blk.add(For(x, f"{nb} * {R}", n, rest))
        self.emit(1, rest)
        self.bound.discard(v)

    def sched_flag(self, desc):
        """The C name of a run-time schedule flag (declared from its ``d[]`` slot once), or its
        value where the loop nest being emitted is the version for it (``emit_flag_versions``)."""
        name = self.sched_flags.get(desc)
        if name is None:
            name = self.sched_flags[desc] = f"{desc[0]}{len(self.sched_flags)}"
            self.sched.add(Decl("const int", name, f"(int){self.abi.int(desc)}"))
        fixed = self.fixed_flags.get(desc)
        return name if fixed is None else str(fixed)

    def emit_flag_versions(self, body):
        """The loop nest once per run-time schedule of its segment sum (vector, split
        accumulators, plain loop: ``emit_segment_variants``), picked by the flags once at the
        top, where the kernel has one such site. Tested inside the loops, the flags cost two
        branches a row, taken the same way every time, which fill the branch history that
        predicts the segments' loop exits: SpMV on vt2010 (32k rows of 1-57), two threads, each
        running the same rows every call, took 83 us with the split loop picked inside and 31
        us with the flags constants (docs/design.md, "Loop exits the predictor learns"). A walk's
        parallel loop in the versions deals its chunks round the team in a fixed order
        (``parallel``; a range's chunks are always each thread's own run: ``owned_chunks``)."""
        general = Block()
        self.emit_versions(general)
        sites = {(d[1], d[2]) for d in self.sched_flags if d[0] in ("split", "vec")}
        if self.spec.loops is not None or len(sites) != 1:
            body.add(general)
            return
        (slot, lvl), = sites
        sd, vd = ("split", slot, lvl), ("vec", slot, lvl)
        combos = ([{vd: 1, sd: 0}] if vd in self.sched_flags else []) + [{sd: 1}, {sd: 0}]

        def nests(stream):
            versions = []
            for combo in combos:
                self.fixed_flags = dict(combo)
                if vd in self.sched_flags:
                    self.fixed_flags.setdefault(vd, 0)
                self.stream_ahead = stream
                blk = Block()
                self.emit_versions(blk)
                versions.append(blk)
            chain = If(self.sched_flags[sd], versions[-2], versions[-1])
            if vd in self.sched_flags:
                chain = If(self.sched_flags[vd], versions[0], Block().add(chain))
            return chain
        self.static_rows = True
        streamed = self.stream_gate(slot, lvl)
        chain = nests(False)
        if streamed is not None:
            chain = If(streamed, Block().add(nests(True)), Block().add(chain))
        self.fixed_flags, self.static_rows, self.stream_ahead = {}, False, False
        body.add(chain)

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

    def emit_single_driver(self, depth, v, blk, keys, byq, iters, U, snap):
        """One sparse level drives the loop; the other iterators follow it."""
        x = self.vname[v]
        body = Block()
        (q0,) = keys
        d0 = byq[q0]
        followers = [a for a in iters if a.q != q0]
        for a in followers:
            blk.add(Decl("int64_t", f"j{U[a.q]}", f"b{U[a.q]}"))
        j = f"j{U[q0]}"
        lv = d0.spec.format.levels[d0.lvl]
        crd = f"c{d0.slot}_{d0.lvl}"
        shared = depth == 0 and not followers and (self.pos_share or self.pos_chunk is not None
                                                   or (not lv.unique and self._coo_team(v)))
        if shared:  # each thread a share of the walk's positions (``share_positions``)
            blk = self.share_positions(blk, U[q0], crd, lv.unique)
        if lv.unique:
            loop = For(j, f"b{U[q0]}", f"z{U[q0]}", body)
            body.add(Decl("int64_t", x, f"(int64_t){crd}[{j}]"))
            self.prefetch_segments(v, d0, j, body)
            seg = None
            where = blk if shared else self.parallel(depth, v, followers, blk, f"z{U[q0]} - b{U[q0]}")
        else:
            where = blk
            blk.add(Decl("int64_t", f"g{U[q0]}", "0"))
            loop = For(j, f"b{U[q0]}", f"z{U[q0]}", body, step=f"{j} = g{U[q0]}")
            body.add(Decl("int64_t", x, f"(int64_t){crd}[{j}]"))
            body.add(f"g{U[q0]} = {j} + 1;")
            body.add(f"while (g{U[q0]} < z{U[q0]} && {crd}[g{U[q0]}] == {x}) g{U[q0]}++;")
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

    def _coo_team(self, v):
        """A dense result whose outermost loop walks a non-unique compressed level (COO's rows:
        ``A @ x``, TTV on a COO tensor) over one of its own indices: each stretch of equal
        coordinates writes its own points of the result, so the walk may run on threads, each
        a share of the positions cut at a change of coordinate (``share_positions``)."""
        return (self.shares and self.spec.loops is None and not self.par_open and self.private is None
                and self.spec.mode in ("dense", "dense-acc", "dense-inter") and v in self.outs
                and not self.in_acc)

    def share_positions(self, blk, u, crd, unique):
        """A block inside ``blk`` where the outer walk's bounds ``b{u}``/``z{u}`` are this
        thread's share of them: an equal part of the positions, moved on (non-unique levels)
        to where the coordinate changes, so that no stretch of one coordinate is split. In an
        ``emit_private`` region the team is open; otherwise one is opened here (``_coo_team``),
        sized by the work estimate."""
        share, parts = "tid", "ls_tn"
        if self.pos_chunk is not None:  # (emit_par_rows: this chunk's share of the positions)
            share, parts, W = self.pos_chunk
        elif self.private is None:
            team_size(blk, self.abi, self.work())
            region = Block().add(*team_ids(self.prelude_extra))
            blk.add(Line("#pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)"), region)
            blk = region
            self.par_open = True
        self.span_uses += 1
        b, z = f"b{u}", f"z{u}"

        def cut(name, k):
            blk.add(Decl("int64_t", name, f"{b} + ({z} - {b}) * ({k}) / {parts}"))
            if not unique:
                blk.add(f"while ({name} > {b} && {name} < {z} && {crd}[{name}] == {crd}[{name} - 1]) {name}++;")
        cut(f"ls_lo{u}", share)
        cut(f"ls_hi{u}", f"{share} + 1")
        if self.pos_chunk is not None:
            # the rows the chunk spans, for the shift of their ends once the chunks are placed
            # (rows it does not visit keep 0, which the shift leaves below the row before them:
            # finish_output's pass over the ends lifts them to it)
            lo, hi = f"ls_lo{u}", f"ls_hi{u}"
            blk.add(f"ls_ck[{W} * {share} + 4] = {lo} < {hi} ? (int64_t){crd}[{lo}] : 0;",
                    f"ls_ck[{W} * {share} + 5] = {lo} < {hi} ? (int64_t){crd}[{hi} - 1] + 1 : 0;")
        inner = Block().add(Decl("int64_t", b, f"ls_lo{u}"), Decl("int64_t", z, f"ls_hi{u}"))
        blk.add(inner)
        return inner

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
        if lv.kind != "compressed" or not lv.unique:
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
        crd = f"c{drv.slot}_{drv.lvl}"
        n = self.ext[v]
        h = locate.hoist_depth(self, m)
        host, at, post = self.hoist_at[h]
        private = self.par_open and h > 0  # rows on threads: a row and its span per thread
        if "racc" not in self.locs and "ls_racc" not in self.locs:
            locate.dense_row(self, "racc", self.oct, n, private)
            if not private:
                self.sched.add(Decl("int64_t", "rlo", "INT64_MAX"), Decl("int64_t", "rhi", "-1"))
        if private and ("racc-row", id(post)) not in self.loc_names:
            # (the span is empty between rows: each row starts one)
            self.loc_names[("racc-row", id(post))] = post
            host.body.insert(at, Decl("int64_t", "rhi", "-1"))
            host.body.insert(at, Decl("int64_t", "rlo", "INT64_MAX"))
            host.body.insert(at, locate.thread_row("racc", self.oct, n))
        blk.add(If(f"b{u} < z{u}", Block().add(
            f"if ((int64_t){crd}[b{u}] < rlo) rlo = (int64_t){crd}[b{u}];",
            f"if ((int64_t){crd}[z{u} - 1] > rhi) rhi = (int64_t){crd}[z{u} - 1];")))
        body = Block()
        j = f"j{u}"
        blk.add(For(j, f"b{u}", f"z{u}", body))
        body.add(Decl("int64_t", x, f"(int64_t){crd}[{j}]"))
        self.bind(v)
        self.advance(drv, j, "1", None)
        self.advance(m, "0", "0", None)  # not read here: no search for it
        self.cascade(body)
        self._walk_q = rq
        body.add(C.reduce_step("sum", f"racc[{x}]", self.value(rest), self.odt))
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
        mv = C.cast(f"v{m.slot}[t]", self.dtype_of(e.args[mi]), e.in_dtypes[mi])
        rv = f"racc[c{m.slot}_{m.lvl}[t]]"
        prod = C.call("multiply", [mv, rv] if mfirst else [rv, mv], e.in_dtypes, e.dtype)
        gather = Block().add(Decl("const int64_t", "b_", b), Decl("const int64_t", "z_", z))
        gather.add(For("t", "b_", "z_", Block().add(C.reduce_step("sum", "ov[t - mb0]", prod, self.odt))))
        gather.add(f"memset(racc + rlo, 0, (size_t)(rhi - rlo + 1) * sizeof({self.oct}));",
                   "rlo = INT64_MAX;", "rhi = -1;")
        post.append(If("rhi >= rlo", gather))

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
            if lv.kind != "compressed" or not lv.unique:
                return []
        lk = {t.q for t in located}
        return [(d, o) for d, o in ((a, b), (b, a)) if not lk or d.q in lk]

    def gallop_fn(self, slot):
        """The C name of the galloping search over coordinates of ``slot``'s index type."""
        t = self.it_type(slot)
        name = f"ls_gallop_{t}"
        src = GALLOP.replace("ls_gallop_T", name).replace("T_", t)
        if src not in self.prelude_extra:
            self.prelude_extra.append(src)
        return name

    def emit_search(self, depth, v, blk, drv, prb, U, snap):
        """The intersection of two sorted unique segments driven by ``drv``'s: each of its
        coordinates is searched for in ``prb``'s, galloping from where the previous one was
        found, so a pass costs |drv| log(|prb| / |drv|) instead of |drv| + |prb| steps."""
        x = self.vname[v]
        ud, up = U[drv.q], U[prb.q]
        jd, jp = f"j{ud}", f"j{up}"
        cd, cp = f"c{drv.slot}_{drv.lvl}", f"c{prb.slot}_{prb.lvl}"
        body = Block()
        blk.add(Decl("int64_t", jp, f"b{up}"))
        blk.add(For(jd, f"b{ud}", f"z{ud}", body))
        body.add(Decl("int64_t", x, f"(int64_t){cd}[{jd}]"))
        body.add(f"{jp} = {self.gallop_fn(prb.slot)}({cp}, {jp}, z{up}, {x});")
        body.add(f"if ({jp} >= z{up}) break;")
        body.add(Decl("int", f"e{up}", f"(int64_t){cp}[{jp}] == {x}"))
        self.bind(v)
        self.advance(drv, jd, "1", None)
        self.advance(prb, jp, f"e{up}", None)
        inner = Block()
        body.add(If(f"e{up}", inner))
        self.cascade(inner)
        self.emit_output_level(depth, v, inner)
        self.bound.discard(v)
        for a in self.accs:
            a.restore(snap[a.q])

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

    SPLIT = 4  # partial accumulators of an innermost floating-point sum

    def _flat_access(self):
        """The one sparse access of a reduction to a scalar that every loop walks, when its
        entries can be visited as one flat run of positions instead of level by level (the
        coordinates are not needed: no other operand but 0-d ones, every index reduced and the
        loop order the access's own level order, unique dense/compressed levels, no schedule,
        no thread loop). Else None."""
        if (self.outs or not self.in_acc or self.spec.loops is not None or self.row_width
                or self.stmt.reduce not in ("sum", "max", "min", "prod")):
            return None
        return self._sole_walk()

    def _sole_walk(self):
        """The one sparse access when the statement reads nothing else at a coordinate (its
        other operands 0-d) and the loops walk it in its own level order, distinct subscripts,
        unique dense/compressed levels ending compressed: its stored entries can be visited as
        one flat run of positions (scalar reductions, maps) or counted from its coordinates
        alone (transpositions). Else None."""
        sparse = [a for a in self.accs if not a.spec.dense]
        if len(sparse) != 1 or any(a.spec.ndim for a in self.accs if a.spec.dense):
            return None
        (a,) = sparse
        fmt = a.spec.format
        if (a.lvl != 0 or list(a.lvars) != list(self.order) or len(set(a.acc.indices)) != len(a.acc.indices)
                or any(lv.kind not in ("dense", "compressed") or not lv.unique for lv in fmt.levels)
                or fmt.levels[-1].kind != "compressed"):
            return None
        # the stored entries must be where the statement is nonzero: ``(A + 1).sum()`` or
        # ``where(A != 0, A, 1).min()`` read one array but are nonzero everywhere (the implicit
        # points are not zeros to fold in), so they walk the dense space
        pat, _ = P.expr_pattern(self.expr, lambda acc, q: None if self.spec.inputs[acc.operand].dense
                                else q + self.q0, lambda acc: None, self.dec)
        if pat != P.var(a.q):
            return None
        return a

    def _map_flat(self):
        """Whether a mode "map" kernel may walk its operand's stored entries as one flat run
        of positions: no operand but 0-d ones beside it (no coordinate is read), its levels in
        loop order, no schedule, no count. ``2.5 * A`` on rows of 4.8 entries (vt2010) paid a
        loop setup a row, 2.4x scipy's time, level by level."""
        if self.spec.loops is not None or self.count or self.row_width:
            return False
        return self._sole_walk() is self.acc_by_q[self.mask_q]

    def emit_flat(self, a, blk, span=None):
        """A scalar reduction over every stored entry of ``a`` (``A.sum()``, ``A.max()``,
        ``(A * 2).max()``) as one loop over the positions of its last level, the segment
        ``[0, entries)``, with the innermost segment's variants (vector, split, plain: the tuner
        measures them as for a row). Level by level, each row paid its loop's setup and, as
        vectors, a horizontal reduction: on cage10 (13 entries a row) ``A.max()`` took 3.4x
        scipy's ``np.max`` of the values. Implicit zeros are folded in afterwards as before
        (``cnt`` counts the entries)."""
        L = len(a.lvars)
        depth, v = L - 1, self.order[-1]
        for w in self.order[:-1]:
            self.bind(w)  # (walked implicitly: no coordinate of theirs is read)
        orig = {x.q: x.snapshot() for x in self.accs}
        a.lvl = L - 1
        snap = {x.q: x.snapshot() for x in self.accs}
        u = f"{a.q}_{L - 1}"
        U, byq = {a.q: u}, {a.q: a}
        lo, hi = span or ("0", level_count(a.spec.format, a.slot, L - 1))
        if span is not None and span == self.flat_span:
            self.span_uses += 1
        blk.add(Decl("int64_t", f"b{u}", lo), Decl("int64_t", f"z{u}", hi))
        if (span is None or self.flat_span is not None) and self._can_split_acc(depth, a, [a]):
            self.emit_segment_variants(depth, v, blk, a, {a.q}, byq, [a], U, snap)
        else:
            self.emit_single_driver(depth, v, blk, {a.q}, byq, [a], U, snap)
        for x in self.accs:
            x.restore(orig[x.q])
        for w in self.order[:-1]:
            self.bound.discard(w)

    def _vector_append(self, depth, v, drv, iters, U):
        """The vector lines of an innermost loop that appends to a sparse result's last level
        at the coordinates of the one level driving it (``2.5 * A``, ``abs(A)``, ``A * x`` with
        ``x`` a dense row), or None (compiler/lower/simd.py, ``append_segment``)."""
        if (self.spec.mode != "append" or self.count or self.spec.loops is not None or self.ocoo
                or depth != len(self.order) - 1 or len(iters) != 1 or not self.ovars
                or self.ovars[-1] != v or len(self.outs) != len(self.order)):
            return None
        lv = drv.spec.format.levels[drv.lvl]
        if lv.kind != "compressed" or not lv.unique:
            return None
        return simd.append_segment(self, v, drv, U, len(self.outs) - 1)

    def _dense_acc_loop(self, depth, v, iters):
        """The innermost loop of a float sum, max or min into the scalar ``acc`` runs over a
        dense range with no sparse operand walking it (``x.sum()``, a dense row's max)."""
        return (self.in_acc and depth == len(self.order) - 1 and not iters and self.spec.loops is None
                and self._reorderable())

    def _reorderable(self):
        """A float sum (its association may change, as NumPy's pairwise sum's does) or a float
        max or min (the same in any order, NaN included: any NaN wins): the reductions whose
        innermost loop may run split accumulators or vectors."""
        red, k = self.stmt.reduce, C.kind(self.odt)
        return red == "sum" and k in "fc" or red in ("max", "min") and k == "f"

    def emit_dense_reduction(self, depth, v, blk, snap):
        """``for v in [0, N): acc op= f(v)`` over a dense range: SPLIT accumulators (the C
        compiler keeps a float reduction's order, so one add's or compare's latency per element:
        a 500k-element sum ran 2.7x NumPy's time, a max 6.7x), and where the target has AVX-512
        and every operand is contiguous in ``v`` or constant, W lanes at a time (compiler/lower/simd.py),
        chosen statically: on contiguous data the vector loop has nothing to lose."""
        # (an instrumented build counts in the scalar loops: ls.opcount)
        vec = None if self.count else simd.dense_segment(self, v, self.ext[v])
        split = Block()
        self.emit_split_accumulators(depth, v, split, None, None, snap)
        if vec is None:
            blk.add(split)
            return
        self._report_simd()
        blk.add(simd.guarded("1", vec, split))

    def _report_simd(self):
        """The kernel reports once whether its build has the vector code (the tuner reads it)."""
        if ("simd",) not in self.sched_flags:
            self.sched_flags[("simd",)] = None
            self.sched.add(simd.capability(self.abi.int(("simd",))))

    def emit_segment_variants(self, depth, v, blk, drv, keys, byq, iters, U, snap):
        """The innermost segment reduction driven by ``drv`` as schedules of one loop picked at
        run time (runtime/tuning.py measures them; the segment lengths give the first guess):
        split accumulators hide the add latency on long or uniform segments, the plain loop
        mispredicts less on short, skewed ones, and a vector target can run the segment W
        entries at a time instead (compiler/lower/simd.py), a third choice behind its own flag (an
        instrumented build keeps the flags at 0: no tuner sets them)."""
        flag = self.sched_flag(("split", drv.slot, drv.lvl))
        vec = simd.segment_sum(self, v, drv, U)
        split, plain = Block(), Block()
        choice = Block().add(If(flag, split, plain))
        if vec is not None:
            vflag = self.sched_flag(("vec", drv.slot, drv.lvl))
            self._report_simd()
            blk.add(simd.guarded(vflag, vec, choice))
        else:
            blk.add(choice)
        self.emit_split_accumulators(depth, v, split, drv, U, snap)
        self.emit_single_driver(depth, v, plain, keys, byq, iters, U, snap)

    def _can_split_acc(self, depth, drv, iters):
        """An innermost floating-point sum, max or min driven by one unique sparse level: the
        candidates for split accumulators (a sum's association changes, as NumPy's pairwise sum
        does; a max or min is the same whatever the order, NaN included: any NaN wins) and for
        the vector loop (compiler/lower/simd.py)."""
        return (self.in_acc and depth == len(self.order) - 1 and len(iters) == 1
                and self._reorderable() and drv.spec.format.levels[drv.lvl].unique)

    def emit_split_accumulators(self, depth, v, blk, drv, U, snap):
        """``for j: acc += f(j)`` as SPLIT interleaved partial sums, then the remainder: the
        additions no longer wait on each other (one add's latency per SPLIT entries). ``drv``
        None: ``v`` is a dense range (``emit_dense_reduction``), its coordinate the position."""
        x0 = self.vname[v]
        if drv is None:
            j, lo, hi, crd = f"{x0}j", "0", f"({self.ext[v]})", None
        else:
            u = U[drv.q]
            j, lo, hi, crd = f"j{u}", f"b{u}", f"z{u}", f"c{drv.slot}_{drv.lvl}"
        n = self.SPLIT
        red = self.stmt.reduce
        for k in range(1, n):
            blk.add(Decl(self.oct, f"acc_{k}", C.literal(ops.reduce_identity(red, self.odt), self.odt)))
        blk.add(Decl("int64_t", j, lo))
        main, rest = Block(), Block()
        if self.stream_ahead and drv is not None:  # (stream_gate: the segment's start, each step)
            blk.add(*simd.stream_prefetch(drv.slot, crd, lo))
            main.add(*simd.stream_prefetch(drv.slot, crd, j))
        blk.add(While(f"{j} + {n - 1} < {hi}", main), While(f"{j} < {hi}", rest))
        for body, copies in ((main, range(n)), (rest, range(1))):
            for k in copies:
                for a in self.accs:
                    a.restore(snap[a.q])
                copy = Block()
                body.add(copy)
                xk = x0 if k == 0 else f"{x0}_{k}"
                self.vname[v] = xk
                pos = j if k == 0 else f"({j} + {k})"
                copy.add(Decl("int64_t", xk, pos if drv is None else f"(int64_t){crd}[{pos}]"))
                self.bind(v)
                if drv is not None:
                    self.advance(drv, pos, "1", None)
                self.acc_name = "acc" if k == 0 else f"acc_{k}"
                self.cascade(copy)
                self.emit_output_level(depth, v, copy)
                self.bound.discard(v)
            body.add(f"{j} += {len(copies)};")
        self.vname[v] = x0
        self.acc_name = "acc"
        if red == "sum":
            blk.add("acc += " + " + ".join(f"acc_{k}" for k in range(1, n)) + ";")
        else:
            for k in range(1, n):
                blk.add(C.reduce_step(red, "acc", f"acc_{k}", self.odt))
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
                blk.add(Decl("int64_t", f"j{U[a.q]}", f"b{U[a.q]}"))
        keys = sorted(k for k in keys if k not in lk)
        points = []
        if len(keys) <= 4:
            from itertools import combinations
            for n in range(len(keys), 0, -1):
                for S in combinations(keys, n):
                    if P.evaluate(walk, set(S)):
                        points.append(frozenset(S))
        else:  # many iterators: one loop over the whole lattice
            points.append(None)
        for S in points:
            members = keys if S is None else sorted(S)
            sub = pat if S is None else frozenset(t for t in pat if t - lk <= S)
            for a in self.accs:
                a.restore(snap[a.q])
            body = Block()
            if S is None:
                cond = " || ".join("(" + " && ".join(f"j{U[q]} < z{U[q]}" for q in sorted(t)) + ")" for t in walk)
            else:
                cond = " && ".join(f"j{U[q]} < z{U[q]}" for q in members)
            blk.add(While(cond, body))
            for q in members:
                a = byq[q]
                crd = f"c{a.slot}_{a.lvl}"
                k = f"(int64_t){crd}[j{U[q]}]"
                if S is None:
                    k = f"j{U[q]} < z{U[q]} ? {k} : INT64_MAX"
                body.add(Decl("int64_t", f"k{U[q]}", k))
            mn = f"k{U[members[0]]}"
            for q in members[1:]:
                mn = f"(k{U[q]} < {mn} ? k{U[q]} : {mn})"
            body.add(Decl("int64_t", x, mn))
            self.bind(v)
            single = len(members) == 1
            present = {}  # key -> its presence test at this point
            for q in members:
                a = byq[q]
                e = present[q] = "1" if single else f"e{U[q]}"
                if not single:
                    body.add(Decl("int", e, f"k{U[q]} == {x}"))
                seg = None
                if not a.spec.format.levels[a.lvl].unique:
                    crd = f"c{a.slot}_{a.lvl}"
                    body.add(Decl("int64_t", f"g{U[q]}", f"j{U[q]} + 1"))
                    body.add(f"if ({e}) while (g{U[q]} < z{U[q]} && {crd}[g{U[q]}] == {x}) g{U[q]}++;")
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
                fcond = " || ".join("(" + (" && ".join(present[q] for q in sorted(t)) or "1") + ")" for t in sub)
                inner = Block()
                body.add(If(fcond, inner))
            self.cascade(inner)
            self.emit_output_level(depth, v, inner)
            for q in members:
                a = byq[q]
                nxt = f"g{U[q]}" if not a.spec.format.levels[snap[q][0]].unique else f"j{U[q]} + 1"
                body.add(f"j{U[q]} = {nxt};" if single else f"if (e{U[q]}) j{U[q]} = {nxt};")
            self.bound.discard(v)
        for a in self.accs:
            a.restore(snap[a.q])

    def bind(self, v):
        self.bound.add(v)

    def declare_range(self, a: _Acc, blk):
        b, z = self.range_exprs(a)
        u = f"{a.q}_{a.lvl}"
        blk.add(Decl("int64_t", f"b{u}", b), Decl("int64_t", f"z{u}", z))

    def range_exprs(self, a: _Acc):
        """C expressions of the segment of access ``a`` at its current level: (begin, end)."""
        l = a.lvl
        lv = a.spec.format.levels[l]
        if a.rng is not None:
            return a.rng
        if lv.kind == "compressed":
            pos = f"p{a.slot}_{l}"
            b, z = f"(int64_t){pos}[{a.pos}]", f"(int64_t){pos}[({a.pos}) + 1]"
        else:  # singleton: the parent's position, or the parent's segment
            b = f"(int64_t)({a.pos})"
            z = a.seg if a.seg else f"(int64_t)({a.pos}) + 1"
        if a.pres != "1":
            b, z = f"({a.pres}) ? {b} : 0", f"({a.pres}) ? {z} : 0"
        return b, z

    def advance(self, a: _Acc, pos, pres, seg):
        a.at = a.at[:a.lvl] + (pos,)
        a.lvl += 1
        a.pos, a.pres, a.seg, a.rng = pos, pres, seg, None

    def follow(self, a: _Acc, x, body):
        u = f"{a.q}_{a.lvl}"
        crd = f"c{a.slot}_{a.lvl}"
        j = f"j{u}"
        body.add(f"while ({j} < z{u} && {crd}[{j}] < {x}) {j}++;")
        body.add(Decl("int", f"e{u}", f"{j} < z{u} && {crd}[{j}] == {x}"))
        seg = None
        if not a.spec.format.levels[a.lvl].unique:
            body.add(Decl("int64_t", f"g{u}", f"{j} + 1"))
            body.add(f"if (e{u}) while (g{u} < z{u} && {crd}[g{u}] == {x}) g{u}++;")
            seg = f"g{u}"
        self.advance(a, j, f"e{u}", seg)

    def coord(self, ix):
        return str(ix.value) if isinstance(ix, Const) else self.vname[ix]

    def cascade(self, blk):
        """Resolve every level whose index is now known: dense arithmetic or a search."""
        for a in self.accs:
            if a.spec.dense:
                continue
            while a.lvl < len(a.lvars):
                ix = a.lvars[a.lvl]
                if isinstance(ix, Index) and ix not in self.bound:
                    break
                l = a.lvl
                u = f"{a.q}_{l}"
                lv = a.spec.format.levels[l]
                c = self.coord(ix)
                if lv.kind == "dense":
                    name = f"q{u}"
                    blk.add(Decl("int64_t", name, f"({a.pos}) * n{a.slot}_{l} + {c}"))
                    self.advance(a, name, a.pres, None)
                    continue
                self.declare_range(a, blk)
                crd = f"c{a.slot}_{l}"
                j = f"j{u}"
                # binary search for the first position with coordinate >= c
                blk.add(Decl("int64_t", j, f"b{u}"), Decl("int64_t", f"hi{u}", f"z{u}"))
                blk.add(While(f"{j} < hi{u}", Block().add(
                    Decl("int64_t", f"md{u}", f"{j} + ((hi{u} - {j}) >> 1)"),
                    f"if ({crd}[md{u}] < {c}) {j} = md{u} + 1; else hi{u} = md{u};")))
                blk.add(Decl("int", f"e{u}", f"{j} < z{u} && {crd}[{j}] == {c}"))
                seg = None
                if not lv.unique:
                    blk.add(Decl("int64_t", f"g{u}", f"{j} + 1"))
                    blk.add(f"if (e{u}) while (g{u} < z{u} && {crd}[g{u}] == {c}) g{u}++;")
                    seg = f"g{u}"
                self.advance(a, j, f"e{u}", seg)

    # -- values -------------------------------------------------------------------------------
    def value(self, e):
        return self.valued(e)[0]

    _dec = None  # decisions replayed by ``valued`` (None: not aligned with the walk)

    def valued(self, e):
        """``(C value of e, C condition under which e may be nonzero here)``: the condition is
        e's pattern (compiler/plan/patterns.py's rules) over the presence flags of the sparse
        accesses at this point, "1" where it always holds. An intersection or a division whose
        condition fails is a structural zero: +0, whatever its arguments' values (``A * nan + 1``
        is 1 where A stores nothing, ``1 / (A * B)`` is +inf there, ``exp(A / s)`` is 1 with
        ``s = 0``), as when the operation runs alone on its pattern (docs/design.md,
        "Numerics"). A dense loop that also follows A evaluated ``0 * nan`` there."""
        if isinstance(e, Access):
            a = self.acc_by_q[self._walk_q]  # value() walks accesses in accesses_of order
            self._walk_q += 1
            return self.value_of_access(a, e), ("1" if a.spec.dense else a.pres)
        if self.invariant(e):
            return self.hoist(e, *self._valued_call(e))
        return self._valued_call(e)

    @staticmethod
    def invariant(e):
        """A call of 0-d values only (``sqrt(s)`` in ``y / sqrt(s)``): the same at every loop
        point, a scalar to the patterns too (``P.is_0d``). A ``where`` stays in the loop (its
        branches count as taken)."""
        return isinstance(e, Call) and P.is_0d(e)

    def hoist(self, e, code, nz):
        """``code``, the C of the invariant call ``e``, computed once before the loops (paper
        000's loop-invariant redundancy; the C compiler would hoist a pure call too, but an
        instrumented build counts what the source evaluates); its pattern condition is "1"."""
        name = self.hoisted.get(code)
        if name is None:
            name = self.hoisted[code] = f"ls_h{len(self.hoisted)}"
            self.sched.add(Decl(f"const {C.ctype(e.dtype)}", name, code))
            if self.count:
                text = counting.line(counting.expr_ops(e, lambda x: x is not e and self.invariant(x)), [])
                if text:
                    self.sched.add(text)
        return name, nz

    def _valued_call(self, e):
        pairs = [self.valued(arg) for arg in e.args]
        args = [C.cast(v, self.dtype_of(arg), d) for (v, _), arg, d in zip(pairs, e.args, e.in_dtypes)]
        if self.count and e.op == "where":  # only the branch taken counts (compiler/lower/counting.py)
            args[1:] = [counting.branch(a, t, self.invariant) for a, t in zip(e.args[1:], args[1:])]
        code = C.call(e.op, args, e.in_dtypes, e.dtype)
        nzs = [nz for _, nz in pairs]
        kind, scalar = ops.OPS[e.op][2], P._scalars(e)
        if not P._decides(kind, scalar):
            if kind == "where":
                return code, _any([_all(nzs[:2]), nzs[2]])
            nz = _all(nzs) if kind == "intersect" else nzs[0]
            if nz != "1":
                code = f"(({nz}) ? {code} : ({C.ctype(e.dtype)})0)"
            return code, nz
        # f at zero decides (in expr_pattern's order: arguments first), when replayed here
        if self._dec is None:
            return code, "1"
        zero = self._dec[self._dec_k]
        self._dec_k += 1
        if not zero:
            return code, "1"
        if kind == "where":
            return code, _all(nzs[:2])
        tensors = [nz for nz, sc in zip(nzs, scalar) if not sc]
        return code, (_any(tensors) if tensors else "1")

    def value_of_access(self, a, e):
        """C value of access ``e`` (lowering state ``a``) at the current loop point."""
        k = a.slot
        if a.spec.dense:
            if a.spec.ndim == 0:
                return f"v{k}s"
            off = " + ".join(self._term(self.coord(ix), self._stride(a.spec, k, m))
                             for m, ix in enumerate(e.indices))
            return f"v{k}[{off}]"
        if a.pres == "1":
            return f"v{k}[{a.pos}]"
        return f"(({a.pres}) ? v{k}[{a.pos}] : ({C.ctype(a.spec.dtype)})0)"

    @staticmethod
    def _stride(spec, k, m):
        return "1" if spec.unit and m == spec.layout[-1] else f"s{k}_{m}"

    @staticmethod
    def _term(c, s):
        return f"({c})" if s == "1" else f"({c}) * {s}"

    def dtype_of(self, e):
        if isinstance(e, Access):
            return self.spec.inputs[e.operand].dtype
        return e.dtype

    def leaf_value(self):
        self._walk_q = self.q0
        self._dec, self._dec_k = self.dec, 0
        try:
            val = self.value(self.expr)
        finally:
            self._dec = None
        if self.term is not None:  # one term of the sum: cast as the +/- chain does, then signed
            val = C.cast(val, self.dtype_of(self.expr), self.odt)
            if self.term.sign < 0:
                val = f"-({val})"
        return val

    # -- union fission ------------------------------------------------------------------------
    def terms_maybe_zero(self):
        """C condition, per row, under which the workspace may hold a zero to squeeze out, or
        None (always look). When every term is one sparse access in the result's dtype, a zero
        needs a stored zero in an input or two terms meeting, and terms met exactly when the
        row drained fewer entries (``fn``) than its segments hold: most rows of a sum of
        independent patterns skip the scan (A + B + C on cage10 2.65 -> 2.50 ms, pubmed
        2.34 -> 2.14; the scan's vector loop dispatch cost more than the check)."""
        accs = [self.acc_by_q[t.q0] for t in self.terms]
        if not all(isinstance(t.expr, Access) and self.dtype_of(t.expr) == self.odt
                   and not a.spec.dense and a.spec.format.levels[a.lvl].kind == "compressed"
                   for t, a in zip(self.terms, accs)):
            return None
        rows = [f"((int64_t)p{a.slot}_{a.lvl}[({a.pos}) + 1] - (int64_t)p{a.slot}_{a.lvl}[{a.pos}])"
                for a in accs]
        if not self.inz_declared:  # read once, before the loops
            self.inz_declared = True
            zeros = dict.fromkeys(self.abi.int(("zeros", a.slot)) for a in accs)
            self.sched.add(Decl("const int", "ls_inz", " || ".join(zeros)))
        return f"ls_inz || {' + '.join(rows)} != fn"

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

    def zero(self):
        return f"({self.oct})0"

    def red_total(self):
        return " * ".join(self.ext[r] for r in self.red) or "1"

    def dense_addr(self):
        # dense results are allocated C-contiguous: the last stride is 1
        n = len(self.outs)
        return " + ".join(self._term(self.vname[v], "1" if m == n - 1 else f"os{m}")
                          for m, v in enumerate(self.outs)) or "0"

    # -- counting (ls.opcount) -----------------------------------------------------------------
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

    # -- storing ------------------------------------------------------------------------------
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

    def emit_accumulate(self, depth, blk):
        """Outputs bound, reductions innermost: fold into a scalar, then store once."""
        ident = ops.reduce_identity(self.stmt.reduce, self.odt)
        blk.add(Decl(self.oct, "acc", C.literal(ident, self.odt)), Decl("int64_t", "cnt", "0"))
        inner = Block()
        blk.add(inner)
        self.in_acc = True
        self.emit(depth, inner)
        self.in_acc = False
        if self.stmt.reduce in ("max", "min", "prod"):
            # points outside the iterated pattern hold the fill value (0): fold it in once
            blk.add(f"if (cnt < {self.red_total()}) {{ {C.reduce_step(self.stmt.reduce, 'acc', self.zero(), self.odt)}"
                    f"{self.fold_count()} }}")
        if self.acc_store is not None:  # a schedule's tile: its own store (compiler/lower/tiling.py)
            self.acc_store(blk, f"o[{self.dense_addr()}]")
        elif self.spec.mode == "dense-acc":
            blk.add(f"o[{self.dense_addr()}] = acc;")
        else:
            tgt = Block()
            blk.add(If("cnt > 0 && acc != 0", tgt))
            self.append_leaf(tgt, "acc")

    # -- sparse output levels -----------------------------------------------------------------
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


def _all(flags):
    """C conjunction of presence conditions ("1": always)."""
    fs = [f for f in flags if f != "1"]
    if "0" in fs:
        return "0"
    return " && ".join(f"({f})" for f in dict.fromkeys(fs)) if fs else "1"


def _any(flags):
    """C disjunction of presence conditions."""
    if "1" in flags:
        return "1"
    fs = [f for f in flags if f != "0"]
    return " || ".join(f"({f})" for f in dict.fromkeys(fs)) if fs else "0"
