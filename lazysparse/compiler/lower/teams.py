"""Thread teams, shared by both lowerers (lowering.py, fused.py): the chunk of a parallel loop
(``chunk_size``), the work estimate that decides whether a loop runs on the threads asked for
(``work_estimate``, ``team_size``), each thread's own run of chunks (``owned_runs``), private
copies of a dense result summed on threads (``private_team``, ``private_copy``, ``add_copies``,
``release_copies``) and the buffers a kernel keeps between calls (``KEEP``), with the measured
ratios that gate them; and the expression helpers the lowering modules share (``x``, ``par``,
``sum_of``).
"""
from __future__ import annotations

from lazysparse.ir.nodes import Index, accesses_of
from lazysparse.compiler.lower.locate import TEAM_NUM, THREAD_NUM
from lazysparse.compiler.lower.operands import level_count_expr
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block, Comment
from lazysparse.compiler.loopir.support import KEPT_BUFFERS

DOUBLE = T.scalar("float64")  # work estimates and byte counts compared as doubles


def x(e) -> E.Expr:
    """``e`` as an expression: an expression as is, a name or a number (``loopir.expr.var``)."""
    return E.var(e)


def par(e) -> E.Expr:
    """``(e)``: parenthesised as the generated text always had it."""
    return E.Paren(x(e))


def sum_of(terms, op="+"):
    """``terms`` joined by ``op``, left to right (None when there are none)."""
    out = None
    for t in terms:
        out = t if out is None else E.Binary(op, out, t)
    return out


def keep_call(name, *args):
    """A call of the kept buffers' support routines (``KEEP``)."""
    return E.SupportCall(name, tuple(x(a) for a in args))


def chunk_size(nt, count):
    """The chunk of a parallel loop of ``count`` iterations on ``nt`` threads (here and
    compiler/lower/fused.py): about 64 chunks a thread, at least 16
    iterations (balance on skewed rows at a small dispatch cost), and the whole loop as one
    chunk on one thread. (A fixed chunk of 16 made a one-thread 8M-element sum 1.5-2x slower:
    the team of one still fetched 500k chunks.)"""
    nt, c = x(nt), par(count)
    per = E.Paren(E.Binary("/", c, E.Paren(E.Binary("*", E.Int(64), E.Cast(T.INDEX, nt)))))
    return E.Paren(E.Select(E.Binary(">", nt, E.Int(1)), E.Paren(E.Select(E.Binary(">", per, E.Int(16)), per, E.Int(16))),
                            E.Paren(E.Select(E.Binary(">", c, E.Int(0)), c, E.Int(1)))))


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
    """The innermost iterations (a double) of a loop nest computing ``stmts``:
    ``(statement, spec_of)`` pairs, ``spec_of(access)`` giving ``(slot, spec)`` of a sparse
    input read there or None (dense operands, temporaries). Per statement: the stored entries of
    its sparse inputs, summed, times the extents (``ext``: index -> its expression) of the indices
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
            leaf = level_count_expr(sp.format, slot, len(sp.format.levels) - 1)
            entries.append(E.Cast(DOUBLE, par(leaf if leaf is not None else abi.int_expr(("nnz", slot)))))
        factors = ([E.Paren(sum_of(entries))] if entries else []) + \
            [E.Cast(DOUBLE, par(ext[v])) for v in tuple(stmt.out_indices) + tuple(stmt.reduce_indices)
             if v not in held]
        total.append(sum_of(factors, "*") or E.Lit(1.0, "float64"))
    return sum_of([E.Paren(t) for t in total]) or E.Lit(0.0, "float64")


def team_size(blk, abi, work, name="ls_nt", report=True):
    """Declare in ``blk`` the thread count a parallel loop runs with, ``name``: the caller's
    ``ls.set_num_threads`` when the work estimate reaches the threshold the call passes
    (``("parmin",)``), else one (a negative estimate: one, whatever the threshold); the kernel
    reports it in ``("team",)`` (tests read it) unless
    ``report`` is off (a team for a kernel's preparation, before its main loops')."""
    nt = abi.int_expr(("threads",))
    big = E.Binary(">=", par(work), E.Cast(DOUBLE, abi.int_expr(("parmin",))))
    blk.add(S.Declare(name, T.INDEX, E.Select(E.Paren(E.Binary("&&", E.Binary(">", nt, E.Int(1)), big)), nt, E.Int(1)),
                      const=True))
    if report:
        blk.add(S.Assign(abi.int_expr(("team",)), E.Var(name)))
    return name


def team_ids(prelude, *more):
    """The declarations a region's body starts with, ``tid`` (this thread) and ``ls_tn`` (the
    team that runs it: fewer than asked when the runtime gives fewer), with the prelude that
    defines them without OpenMP added to ``prelude`` (and ``more``: KEEP for kept buffers)."""
    for pre in (THREAD_NUM, TEAM_NUM, *more):
        if pre not in prelude:
            prelude.append(pre)
    return [S.Declare("tid", T.INDEX, E.Cast(T.INDEX, E.ThreadNum()), const=True),
            S.Declare("ls_tn", T.INDEX, E.Cast(T.INDEX, E.NumThreads()), const=True)]


def owned_runs_setup(nt, count):
    """Before the parallel region of ``owned_runs``: the chunk count and each run's counter
    (shared by the team)."""
    nt, w, chunk = x(nt), E.Var("ls_w"), E.Var("ls_chunk")
    nch = E.Binary("/", E.Paren(E.Binary("-", E.Binary("+", par(count), chunk), E.Int(1))), chunk)
    return [S.Declare("ls_nch", T.INDEX, nch, const=True),
            # (the empty Inline keeps the generated text's two spaces before the comment)
            S.Inline((S.Declare("ls_next", T.Array(T.INDEX, E.Binary("*", E.Int(8), nt))), S.Inline(()),
                      Comment("a run's next chunk, a cache line each"))),
            S.For("ls_w", E.Int(0), nt, Block().add(
                S.Assign(E.Load(E.Var("ls_next"), E.Binary("*", E.Int(8), w)),
                         E.Binary("/", E.Binary("*", w, E.Var("ls_nch")), nt))))]


def owned_runs(nt, count):
    """Inside a parallel region (after ``owned_runs_setup``, with ``ls_chunk`` declared): the
    loop over ``[0, count)`` in chunks, cut into ``nt`` runs of consecutive chunks, each
    thread taking its own run's chunks first, in order, then helping the others with what is
    left of theirs (a counter per run, taken with an atomic add; ``Lowerer.owned_chunks``:
    why). Returns (the block to add to the region, the chunk's block), the chunk's bounds
    being ``ls_r0`` and ``ls_r1``."""
    nt, c = x(nt), par(count)
    w, k, r0, chunk_n = E.Var("ls_w"), E.Var("ls_k"), E.Var("ls_r0"), E.Var("ls_chunk")
    chunk = Block()
    end = E.Binary("+", r0, chunk_n)
    region = Block().add(
        S.Declare("ls_me", T.INDEX, E.Cast(T.INDEX, E.ThreadNum()), const=True),
        S.For("ls_s", E.Int(0), nt, Block().add(
            S.Declare("ls_w", T.INDEX, E.Binary("%", E.Paren(E.Binary("+", E.Var("ls_me"), E.Var("ls_s"))), nt), const=True),
            S.Declare("ls_e", T.INDEX, E.Binary("/", E.Binary("*", E.Paren(E.Binary("+", w, E.Int(1))), E.Var("ls_nch")), nt),
                      const=True),
            S.While(E.Int(1), Block().add(
                S.Declare("ls_k", T.INDEX),
                S.Atomic(S.Assign(k, E.PostInc(E.Load(E.Var("ls_next"), E.Binary("*", E.Int(8), w)))), "capture"),
                S.If(E.Binary(">=", k, E.Var("ls_e")), S.Break(), oneline=True),
                S.Declare("ls_r0", T.INDEX, E.Binary("*", k, chunk_n), const=True),
                S.Declare("ls_r1", T.INDEX, E.Select(E.Binary("<", end, c), end, c), const=True),
                chunk)))))
    return region, chunk


def private_team(body, abi, elem, work, packed="1", counts=False):
    """Private copies of a dense result summed on threads (paper 001's "temporary" race
    strategy: ``Lowerer.emit_private``, ``FusedLowerer``'s loop over a summed index): declares
    the team (``ls_nt``: the caller's threads when the work pays for the copies,
    ``PRIVATE_RATIO``, and they fit the kept buffers' limit), the copies of ``ls_osz`` elements
    of ``elem`` (a loopir type) for threads 1..
    (``ls_pv``, kept by the kernel between calls: ``KEEP``), the result's own pointer ``ls_o0``
    (read from ``o``) and the team that runs (``ls_pt``: one when the copies cannot be
    allocated; a dense kernel has no failure path). ``counts``: a max, min or product whose
    entries are counted per point (mode "dense-count": ``ocnt``) gets copies of the counts too
    (``ls_pc``, ``ls_c0``). ``packed``: the condition that the result's strides pack it."""
    et = elem
    nt, osz = abi.int_expr(("threads",)), E.Cast(DOUBLE, E.Var("ls_osz"))
    item = E.Paren(E.Binary("+", E.SizeOf(et), E.SizeOf(T.INDEX))) if counts else E.SizeOf(et)
    copies = E.Binary("*", E.Binary("*", E.Cast(DOUBLE, E.Paren(E.Binary("-", nt, E.Int(1)))), osz), E.Cast(DOUBLE, item))
    ratio = E.Paren(E.Select(E.Binary("<=", E.Binary("*", osz, E.Cast(DOUBLE, E.SizeOf(et))), E.Lit(PRIVATE_SMALL, "float64")),
                             E.Lit(PRIVATE_RATIO[0], "float64"), E.Lit(PRIVATE_RATIO[1], "float64")))
    w = par(work)
    off = sum_of([E.Unary("!", par(packed)), E.Binary(">", copies, E.Cast(DOUBLE, E.Var("LS_KEEP_MAX"))),
                  E.Binary(">", E.Binary("*", ratio, osz), w)], "||")
    team_size(body, abi, E.Select(E.Paren(off), E.Lit(-1.0, "float64"), w))
    pv, pt = E.Var("ls_pv"), E.Var("ls_pt")
    body.add(S.Declare("ls_pv", T.Ptr(et), E.Null()),
             S.Declare("ls_own", T.INT, E.Binary("&&", E.Binary(">", E.Var("ls_nt"), E.Int(1)), keep_call("keep_take")),
                       const=True),
             S.Declare("ls_o0", T.Ptr(et, fixed=True), E.Var("o")), S.Declare("ls_pt", T.INDEX, E.Var("ls_nt")))
    get = Block().add(S.Assign(pv, E.Cast(T.Ptr(et), keep_call("keep_get", "ls_own", 0, _copies_size(et)))))
    if counts:
        body.add(S.Declare("ls_pc", T.Ptr(T.INDEX), E.Null()),
                 S.Declare("ls_c0", T.Ptr(T.INDEX, fixed=True), E.Var("ocnt")))
        get.add(S.Assign(E.Var("ls_pc"), E.Cast(T.Ptr(T.INDEX), keep_call("keep_get", "ls_own", 1, _copies_size(T.INDEX)))))
    body.add(S.If(E.Binary(">", E.Var("ls_nt"), E.Int(1)), get), S.If(E.Unary("!", pv), S.Assign(pt, E.Int(1)), oneline=True))
    if counts:
        body.add(S.If(E.Unary("!", E.Var("ls_pc")), S.Assign(pt, E.Int(1)), oneline=True))
    body.add(S.Assign(abi.int_expr(("team",)), pt))


def _copies_size(et):
    return E.Binary("*", E.Binary("*", E.Cast(T.SIZE, E.Paren(E.Binary("-", E.Var("ls_pt"), E.Int(1)))),
                                  E.Cast(T.SIZE, E.Var("ls_osz"))), E.SizeOf(et))


def _zero_if(cond, name, et):
    """``name``'s ``ls_osz`` elements of ``et`` zeroed where ``cond`` holds (one line)."""
    return S.If(cond, S.Memset(E.Var(name), 0, E.Var("ls_osz"), et), oneline=True, bare=True)


def private_copy(elem, ident=None, counts=False):
    """The thread's result inside the region (thread ``tid``): its copy, started at zero (or at
    ``ident``, a max's or min's identity: an expression), or for thread 0 the result itself, as
    ``o`` (and ``ocnt``, with ``counts``): the loops are emitted unchanged. Put the loops in a
    block of their own with these: their restrict ``o`` must end before ``add_copies`` reads the
    copies through ``ls_o0``."""
    et, tid, osz = elem, E.Var("tid"), E.Var("ls_osz")

    def own(name, pool, first, t):
        mine = E.Binary("+", E.Var(pool), E.Binary("*", E.Paren(E.Binary("-", tid, E.Int(1))), osz))
        return S.Declare(name, T.Ptr(t, restrict=True), E.Select(tid, mine, E.Var(first)))
    out = [own("o", "ls_pv", "ls_o0", et),
           _zero_if(tid, "o", et) if ident is None else
           S.If(tid, Block().add(S.For("e", E.Int(0), osz, Block().add(S.Assign(E.load("o", "e"), x(ident))))))]
    if counts:
        out += [own("ocnt", "ls_pc", "ls_c0", T.INDEX), _zero_if(tid, "ocnt", T.INDEX)]
    return out


def add_copies(elem, dtype, red="sum", counts=False):
    """After the loops, in the region: each thread folds the copies into its share of the
    result (``red``: sum, max, min, prod; ``counts``: the entry counts added), in thread order
    (the same values from call to call at one thread count)."""
    et, e, tid, tn, osz = elem, E.Var("e"), E.Var("tid"), E.Var("ls_tn"), E.Var("ls_osz")

    def copy(pool):
        return E.Binary("+", E.Var(pool), E.Binary("*", E.Paren(E.Binary("-", E.Var("t"), E.Int(1))), osz))
    add = Block().add(S.Declare("q_", T.Ptr(et, const=True, restrict=True), copy("ls_pv")))
    step = Block().add(S.Reduce(red, E.Load(E.Var("ls_o0"), e), E.Load(E.Var("q_"), e), str(dtype)))
    if counts:
        add.add(S.Declare("qc_", T.Ptr(T.INDEX, const=True, restrict=True), copy("ls_pc")))
        step.add(S.Update(E.Load(E.Var("ls_c0"), e), "+", E.Load(E.Var("qc_"), e)))
    add.add(S.For("e", E.Var("e0_"), E.Var("e1_"), step))
    return S.If(E.Binary(">", tn, E.Int(1)), Block().add(
        S.Barrier(),
        S.Declare("e0_", T.INDEX, E.Binary("/", E.Binary("*", osz, tid), tn), const=True),
        S.Declare("e1_", T.INDEX, E.Binary("/", E.Binary("*", osz, E.Paren(E.Binary("+", tid, E.Int(1)))), tn), const=True),
        S.For("t", E.Int(1), tn, add)))


def release_copies(elem, counts=False):
    """After the region: the copies back to the kernel's pool."""
    et = elem
    out = [S.ExprStmt(keep_call("keep_put", "ls_own", 0, "ls_pv", _copies_size(et)))]
    if counts:
        out.append(S.ExprStmt(keep_call("keep_put", "ls_own", 1, "ls_pc", _copies_size(T.INDEX))))
    return out + [S.If(E.Var("ls_own"), S.ExprStmt(keep_call("keep_give")), oneline=True)]


# The threads' buffers of a sparse result appended on threads (emit_par_rows), kept by the
# kernel between calls: allocated and freed each call they came back as fresh pages every
# call (glibc trims the top of its heap, or maps a large block afresh), 2,400 page faults and
# 6 ms of system time a call for cage10's A @ A on two threads, more than the second thread
# saved. A call that finds them taken (another Python thread running the same kernel) allocates
# its own; buffers over LS_KEEP_MAX bytes in all are freed rather than kept, and a result
# expected larger than that runs on one thread (emit_par_rows): in a process whose heap other
# libraries churn, two threads made MIT8's A @ A (187 MB) 1.7x slower than one.
KEEP = KEPT_BUFFERS  # (the support code: compiler/codegen/c/support.py KEEP)


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
