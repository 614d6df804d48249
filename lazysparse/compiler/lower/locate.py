"""Loop-invariant iterators located through a scattered segment instead of merged.

In ``out[i,j] = sum_k M[i,j] * A[i,k] * B[k,j]`` (a masked product, loops i, k, j) the loop
over j intersects ``B[k,:]`` with ``M[i,:]``. The merge walks ``M[i,:]`` once per k, although
its position was fixed before the k loop started: ``|B[k,:]| + |M[i,:]|`` steps per (i, k).
This pass scatters such an iterator's segment once where its position becomes known (``loc[j]
= offset + 1``), lets the other iterators drive the loop and probes ``loc[j]`` at each of their
points (a locate, as on a dense level), then clears the entries it set after the enclosing loop:
``|B[k,:]|`` steps per (i, k), plus ``2 |M[i,:]|`` per i. It is TACO's precompute of an operand
into a dense workspace and the mask scatter of Gustavson-style masked products, as a rule for
every kernel it applies to:

* the iterator walks a unique compressed level, at least one loop lies between the loop that
  fixes its position and the loop over its level (otherwise each segment is walked once anyway),
  and every term of the loop's iteration space keeps an iterator that is not located (a union
  must still visit the located segment's own points, so it cannot be located);
* the scatter array (int32 offsets, one per coordinate) is allocated once per call when the
  dimension has at most ``LIMIT`` points; otherwise, or when the allocation fails, the kernel
  runs the merge it always had (both are emitted, picked by ``if (loc)``);
* inside an OpenMP loop (a dense result's rows on several threads) each thread takes its own
  array from one allocation of ``threads x points`` (calloc: untouched pages cost nothing).
"""
from __future__ import annotations

from lazysparse.ir.nodes import Index
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.loopir.nodes import Block, Comment, Decl, For, If

# the thread number, with or without an OpenMP runtime (kernels build either way, without omp.h)
THREAD_NUM = """#ifdef _OPENMP
extern int omp_get_thread_num(void);
#else
static inline int omp_get_thread_num(void) { return 0; }
#endif"""
TEAM_NUM = """#ifdef _OPENMP
extern int omp_get_num_threads(void);
#else
static inline int omp_get_num_threads(void) { return 1; }
#endif"""

LIMIT = 1 << 24  # points of a located dimension: 64 MB of address space, touched only where rows have entries


def hoist_depth(lw, a):
    """The depth of the first loop entered after access ``a``'s position at its current level is
    known: one past the deepest loop over an index of its resolved levels (a level at a constant
    is resolved in the first loop body)."""
    ds = [lw.order.index(ix) for ix in a.lvars[:a.lvl] if isinstance(ix, Index)]
    if ds:
        return max(ds) + 1
    return 1 if a.lvl > 0 else 0


def choose(lw, depth, iters, pat, keys):
    """The iterators at loop ``depth`` to locate (possibly none)."""
    if pat == P.TRUE or not keys:  # (the opcount build too: it counts the very same loops)
        return []
    cands = {}
    for a in iters:
        lv = a.spec.format.levels[a.lvl]
        h = hoist_depth(lw, a)
        if a.q in keys and lv.kind == "compressed" and lv.unique and h < depth and h in lw.hoist_at:
            cands[a.q] = a
    # every term must keep a driver: drop a located key from each term it would empty
    while True:
        bare = [t for t in pat if t <= set(cands)]
        if not bare:
            break
        cands.pop(max(bare[0]))
    return [cands[q] for q in sorted(cands)]


def dense_row(lw, name, ctype, n, private):
    """Allocate (in the kernel's run-time block) a zeroed array of ``n + 1`` ``ctype`` for the
    loops to index, or NULL when ``n`` is over ``LIMIT``; ``private``: filled inside a parallel
    loop, so one such array per thread, under ``ls_<name>`` (``thread_row`` picks a thread's).
    Freed with the kernel's other arrays (``lw.locs``)."""
    base = f"ls_{name}" if private else name
    lw.locs.append(base)
    copies = f"(size_t){lw.abi.int(('threads',))} * " if private else ""
    lw.sched.add(Decl(f"{ctype} *", base, f"({n} <= {LIMIT}) ? ({ctype} *)calloc({copies}((size_t){n} + 1), "
                                          f"sizeof({ctype})) : NULL"))
    if private and THREAD_NUM not in lw.prelude_extra:
        lw.prelude_extra.append(THREAD_NUM)


def thread_row(name, ctype, n):
    """The declaration of ``name``: this thread's array of a private ``dense_row``."""
    return Decl(f"{ctype} *", name, f"ls_{name} ? ls_{name} + (int64_t)omp_get_thread_num() * "
                                    f"((int64_t){n} + 1) : NULL")


def scatter(lw, a, depth):
    """Allocate ``a``'s scatter array, fill it where its position becomes known and clear it
    after that loop; returns the array's C name."""
    h = hoist_depth(lw, a)
    host, at, post = lw.hoist_at[h]
    private = lw.par_open and h > 0  # filled inside the parallel loop: one array per thread
    name = lw.loc_names.get(("array", a.q, a.lvl, private))
    n = lw.ext[lw.order[depth]]
    if name is None:  # one array per access and level: its scatters never overlap in time
        name = lw.loc_names[("array", a.q, a.lvl, private)] = f"loc{len(lw.locs)}"
        dense_row(lw, name, "int32_t", n, private)
    # lattice points of a loop in between share one scatter (the entry keeps ``post`` alive,
    # so its id is not reused while the kernel is lowered)
    key = ("fill", id(post), a.q, a.lvl)
    if key in lw.loc_names:
        return name
    lw.loc_names[key] = (name, post)
    b, z = lw.range_exprs(a)
    crd = f"c{a.slot}_{a.lvl}"
    fill, clear = Block(), Block()
    for blk, val in ((fill, "(int32_t)(t - b_ + 1)"), (clear, "0")):
        blk.add(Decl("const int64_t", "b_", b), Decl("const int64_t", "z_", z))
        blk.add(For("t", "b_", "z_", Block().add(f"{name}[{crd}[t]] = {val};")))
    host.body.insert(at, If(name, fill))
    host.body.insert(at, Comment(f"access {a.q} level {a.lvl}: scattered once here, located in the loop over "
                                 f"{lw.vname[lw.order[depth]]} ({name})"))
    if private:
        host.body.insert(at, thread_row(name, "int32_t", n))
    post.append(If(name, clear))
    return name


def resolve(lw, a, name, x, body):
    """Access ``a`` at coordinate ``x`` through its scatter array: position and presence."""
    u = f"{a.q}_{a.lvl}"
    body.add(Decl("const int64_t", f"l{u}", f"(int64_t){name}[{x}]"))
    body.add(Decl("int", f"e{u}", f"l{u} != 0"))
    body.add(Decl("int64_t", f"j{u}", f"b{u} + l{u} - 1"))
    lw.advance(a, f"j{u}", f"e{u}", None)
