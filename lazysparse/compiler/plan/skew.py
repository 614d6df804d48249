"""The default schedule's choice between row chunks and nonzero tiles (the load balancing of "A
Sparse Iteration Space Transformation Framework for Sparse Tensor Algebra", the scheduling paper).
The default parallel loop hands out rows in chunks (compiler/lower/teams.py ``chunk_size``),
which balances any mix of row lengths but one: a row that holds a large part of a thread's share
of the stored entries is one chunk's work, and the other threads wait for it. Tiles (``fuse``
the row loop with the loop over the row's entries, ``pos``, ``split`` into tiles of ``TILE``
stored entries, a row cut between two tiles summed with atomics; compiler/plan/loops.py) cost
more where rows are even, so the choice is read off the operand's row lengths
(``Storage.segment_stats``, computed once and kept): ``skewed`` offers tiles when ``longest row * threads >= SKEW_TILES * stored entries``."""
from __future__ import annotations

from lazysparse.formats import resolve_format

_CSR = resolve_format("csr", 2)

# Rows cost about max(1, r) times a balanced loop, r = longest row * threads / stored entries;
# tiles cost their overhead, measured at 1.0-1.15 on 16 threads and up to 1.6 on the two-core
# development VM, where memory bandwidth hardly grows with the second thread. SpMV on a 16-core
# machine, rows of k * c**i entries (the scheduling paper's load-balance generator; ns per stored
# entry, rows / tiles): 16 threads c = 1 (64-entry rows) 0.200 / 0.227, c = 1.001 (r = 0.016)
# 0.211 / 0.222, c = 1.01 (r = 0.16) 0.252 / 0.225, c = 1.1 (r = 1.3) 0.238 / 0.204, c = 1.5
# (r = 3.7) 0.318 / 0.188; 8 threads c = 1.1 (r = 0.67) 0.335 / 0.307, c = 1.5 (r = 1.9) 0.321 /
# 0.236; 4 threads c = 1.5 (r = 0.93) 0.469 / 0.464. R-MAT 2^18 (r well under 0.1) stays on rows:
# 0.135 against 0.182 at 16 threads. Two threads on the development VM, one row holding 50%, 60%,
# 80% of 4M entries (r = 1, 1.2, 1.6), rows / tiles: SpMV 0.94, 0.92, 0.93; row sums 0.63, 0.69,
# 0.93. Hence 1.5: tiles where the longest row is well past a thread's share.
SKEW_TILES = 1.5        # tiles when the longest row holds 1.5 threads' shares of the entries or more
MIN_ENTRIES = 1 << 17   # and the operand has this many stored entries (64 tiles)
TILE = 2048             # stored entries a tile (bench_balance's size too)

_SLOTS = {}      # id(statement) -> (statement, its candidate (slot, i, j) or False): structure only
_DENSE = {}      # bound-plan key -> whether tiles may run it (its default result came out dense,
#                  and its tiles planned and lowered)
_SCHEDULES = {}  # (operand slot, row index, entry index, tile) -> its tile schedule


def _structure(stmt):
    """``(slot, i, j)``: the operand ``T{slot}[i, j]`` whose rows tiles would split (``i`` the
    statement's one result index, ``j`` summed), or False. The statement alone decides it."""
    from lazysparse.ir.nodes import Index, accesses_of
    if len(stmt.out_indices) != 1 or not stmt.reduce_indices:
        return False  # (SpMM: see ``skewed``)
    i = stmt.out_indices[0]
    if not isinstance(i, Index):
        return False
    for acc in accesses_of(stmt.expr):
        if (len(acc.indices) == 2 and acc.indices[0] == i and isinstance(acc.indices[1], Index)
                and acc.indices[1] in stmt.reduce_indices):
            return acc.operand, i, acc.indices[1]
    return False


def skewed(stmt, storages, threads):
    """The candidate ``(slot, i, j)`` when this call's operand is skewed enough for tiles on
    ``threads`` threads, else None: the warm path's check on several threads
    (``Array.materialize``). A lookup by statement, then the operand's entry count, and only
    for a large CSR operand its kept row statistics.

    What takes tiles: a single operation (not a fused program) with one result index, the row index
    of a CSR-like operand (a dense level, then a compressed one, in mode order) read as ``T[i, j]``
    with ``j`` summed (SpMV, row sums, any ``o[i] = sum_j f(T[i, j], ...)``), on more than one thread,
    with at least ``MIN_ENTRIES`` stored entries (a scheduled call plans more per call than the
    default's bound plan). SpMM's tiles sum the columns of a segment as a scalar loop where the
    default's rows run as vectors (128 columns, c = 1.5, two threads: 176 ms against 103;
    docs/design.md, "Schedules and the autoscheduler"): not offered until they do.
    """
    ent = _SLOTS.get(id(stmt))
    if ent is None or ent[0] is not stmt:
        if len(_SLOTS) >= 4096:
            _SLOTS.clear()
        ent = _SLOTS[id(stmt)] = (stmt, _structure(stmt))
    cand = ent[1]
    if not cand:
        return None
    st = storages[cand[0]]
    nnz = st.vals.shape[0] if st.vals.ndim == 1 else 0
    if (nnz < MIN_ENTRIES or st.format != _CSR
            or st.segment_stats(1)[1] * threads < SKEW_TILES * nnz):
        return None
    return cand


def _key(stmt, storages):
    """The statement's bound-plan key (compiler/pipeline.py ``execute``, no requested format)."""
    from lazysparse.compiler.plan.kernel import operand_spec
    return (id(stmt), *[id(st.spec or operand_spec(st)) for st in storages], None)


def tiles_for(stmt, storages, threads):
    """For one call of a single operation on ``threads`` threads: ``(schedule, None)`` to run it
    under nonzero tiles; ``(None, key)`` when the operand is skewed but the statement is new
    (the caller runs the default and passes ``key`` and the result to ``learn``); ``(None,
    None)`` for the default.

    Tiles write a dense result only (compiler/plan/loops.py), so a statement's first skewed call
    runs the default, and the next ones take tiles if its result came out dense; one whose tiles do
    not plan or lower keeps the default from its first refusal on. Sums of a row cut between tiles
    are added in whichever order the threads reach them: the last bits of such a row's result can
    differ from run to run, as with any parallel reduction.
    """
    if threads < 2:
        return None, None
    cand = skewed(stmt, storages, threads)
    if cand is None:
        return None, None
    key = _key(stmt, storages)
    ok = _DENSE.get(key)
    if ok is None:
        return None, key
    if not ok:
        return None, None
    slot, i, j = cand
    skey = (slot, i.name, j.name, TILE)
    sched = _SCHEDULES.get(skey)
    if sched is None:  # (built once: each step derives its provenance graph)
        from lazysparse.compiler.schedule import Schedule
        sched = _SCHEDULES[skey] = (
            Schedule().fuse(i.name, j.name, "ls_f").pos("ls_f", "ls_p", f"T{slot}")
            .split("ls_p", "ls_p0", "ls_p1", TILE).parallelize("ls_p0", races="atomics"))
    return sched, None


def learn(key, result):
    """After the default's run of a new statement on a skewed operand: tiles may take it when
    its result came out dense (tiles write dense results only)."""
    if len(_DENSE) >= 4096:
        _DENSE.clear()
    _DENSE[key] = bool(result.format.is_dense)


def refuse(stmt, storages):
    """Tiles did not plan or lower for this statement: the default from now on."""
    _DENSE[_key(stmt, storages)] = False


def reset():
    _SLOTS.clear()
    _DENSE.clear()
