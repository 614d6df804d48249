"""Thread teams, shared by both lowerers (lowering.py, fused.py): the chunk of a parallel loop
(``omp_chunk``), the work estimate that decides whether a loop runs on the threads asked for
(``work_estimate``, ``team_size``), each thread's own run of chunks (``owned_runs``), private
copies of a dense result summed on threads (``private_team``, ``private_copy``, ``add_copies``,
``release_copies``) and the buffers a kernel keeps between calls (``KEEP``), with the measured
ratios that gate them.
"""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.ir.nodes import Index, accesses_of
from lazysparse.compiler.lower.locate import TEAM_NUM, THREAD_NUM
from lazysparse.compiler.lower.operands import level_count
from lazysparse.compiler.loopir.nodes import Block, Decl, For, If, Line, While


def omp_chunk(nt, count):
    """C expression of the chunk of a parallel loop of ``count`` iterations
    on ``nt`` threads (here and compiler/lower/fused.py): about 64 chunks a thread, at least 16
    iterations (balance on skewed rows at a small dispatch cost), and the whole loop as one
    chunk on one thread. (A fixed chunk of 16 made a one-thread 8M-element sum 1.5-2x slower:
    the team of one still fetched 500k chunks.)"""
    per = f"(({count}) / (64 * (int64_t){nt}))"
    return f"({nt} > 1 ? ({per} > 16 ? {per} : 16) : (({count}) > 0 ? ({count}) : 1))"


# The autoscheduler's thread decision: a parallel loop runs on the threads asked for
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
