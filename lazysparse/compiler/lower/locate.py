"""Loop-invariant iterators located through a scattered segment instead of merged. In
``out[i,j] = sum_k M[i,j] * A[i,k] * B[k,j]`` (a masked product, loops i, k, j) the loop over j
intersects ``B[k,:]`` with ``M[i,:]``. The merge walks ``M[i,:]`` once per k, although its
position was fixed before the k loop started: ``|B[k,:]| + |M[i,:]|`` steps per (i, k). This
pass scatters such an iterator's segment once where its position becomes known (``loc[j] =
offset + 1``), lets the other iterators drive the loop and probes ``loc[j]`` at each of their
points (a locate, as on a dense level), then clears the entries it set after the enclosing
loop: ``|B[k,:]|`` steps per (i, k), plus ``2 |M[i,:]|`` per i. It is TACO's precompute of an
operand into a dense workspace and the mask scatter of Gustavson-style masked products, as a
rule for every kernel it applies to (``choose``)."""
from __future__ import annotations

from lazysparse.ir.nodes import Index
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block, Comment
# the thread number and team size, with or without threads (lowering.py imports them from here)
from lazysparse.compiler.loopir.support import TEAM_NUM, THREAD_NUM  # noqa: F401

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
    """The iterators at loop ``depth`` to locate (possibly none): those that walk a unique
    compressed level, with at least one loop between the loop that fixes their position and
    this one (otherwise each segment is walked once anyway), as long as every term of the
    loop's iteration space keeps an iterator that is not located (a union must still visit the
    located segment's own points, so it cannot be located)."""
    if pat == P.TRUE or not keys:  # (the opcount build too: it counts the very same loops)
        return []
    cands = {}
    for a in iters:
        lv = a.spec.format.levels[a.lvl]
        h = hoist_depth(lw, a)
        if a.q in keys and lv.unique_segments and h < depth and h in lw.hoist_at:
            cands[a.q] = a
    # every term must keep a driver: drop a located key from each term it would empty
    while True:
        bare = [t for t in pat if t <= set(cands)]
        if not bare:
            break
        cands.pop(max(bare[0]))
    return [cands[q] for q in sorted(cands)]


def dense_row(lw, name, elem, n, private):
    """Allocate (in the kernel's run-time block, once per call) a zeroed array of ``n + 1``
    values of ``elem`` (a loopir type) for the loops to index, or NULL when ``n`` is over
    ``LIMIT``; where it is NULL (too large, or the allocation failed) the kernel runs the merge
    instead (both are emitted, picked by ``if (loc)``). ``private``: filled inside a
    parallel loop (a dense result's rows on several threads), so one array per thread from one
    allocation of ``threads x points`` under ``ls_<name>`` (calloc: untouched pages cost
    nothing; ``thread_row`` picks a thread's). Freed with the kernel's other arrays
    (``lw.locs``)."""
    base = f"ls_{name}" if private else name
    lw.locs.append(base)
    n = E.var(n)
    count = E.Paren(E.Binary("+", E.Cast(T.SIZE, n), E.Int(1)))
    if private:
        count = E.Binary("*", E.Cast(T.SIZE, lw.abi.int_expr(("threads",))), count)
    alloc = E.Alloc(elem, count, zero=True, huge=False)
    lw.sched.add(S.Declare(base, T.Ptr(elem), E.Select(E.Paren(E.Binary("<=", n, E.Int(LIMIT))), alloc, E.Null())))
    if private and THREAD_NUM not in lw.prelude_extra:
        lw.prelude_extra.append(THREAD_NUM)


def thread_row(name, elem, n):
    """The declaration of ``name``: this thread's array of a private ``dense_row``."""
    own = E.Binary("+", E.Var(f"ls_{name}"), E.Binary("*", E.Cast(T.INDEX, E.ThreadNum()),
                                                        E.Binary("+", E.Cast(T.INDEX, E.var(n)), E.Int(1))))
    return S.Declare(name, T.Ptr(elem), E.Select(E.Var(f"ls_{name}"), own, E.Null()))


def scatter(lw, a, depth):
    """Allocate ``a``'s scatter array, fill it where its position becomes known and clear it
    after that loop; returns the array's C name."""
    h = hoist_depth(lw, a)
    host, at, post = lw.hoist_at[h]
    private = lw.in_region(h)  # filled inside the parallel loop: one array per thread
    name = lw.loc_names.get(("array", a.q, a.lvl, private))
    n = lw.ext[lw.order[depth]]
    if name is None:  # one array per access and level: its scatters never overlap in time
        name = lw.loc_names[("array", a.q, a.lvl, private)] = f"loc{len(lw.locs)}"
        dense_row(lw, name, T.scalar("int32"), n, private)
    # lattice points of a loop in between share one scatter (the entry keeps ``post`` alive,
    # so its id is not reused while the kernel is lowered)
    key = ("fill", id(post), a.q, a.lvl)
    if key in lw.loc_names:
        return name
    lw.loc_names[key] = (name, post)
    b, z = lw.range_exprs(a)
    crd = E.Var(f"c{a.slot}_{a.lvl}")
    fill, clear = Block(), Block()
    t = E.Var("t")
    offset = E.Cast(T.scalar("int32"), E.Binary("+", E.Binary("-", t, E.Var("b_")), E.Int(1)))
    for blk, val in ((fill, offset), (clear, E.Int(0))):
        blk.add(S.Declare("b_", T.INDEX, E.var(b), const=True), S.Declare("z_", T.INDEX, E.var(z), const=True))
        blk.add(S.For("t", E.Var("b_"), E.Var("z_"), Block().add(S.Assign(E.Load(E.Var(name), E.Load(crd, t)), val))))
    host.body.insert(at, S.If(E.Var(name), fill))
    host.body.insert(at, Comment(f"access {a.q} level {a.lvl}: scattered once here, located in the loop over "
                                 f"{lw.vname[lw.order[depth]]} ({name})"))
    if private:
        host.body.insert(at, thread_row(name, T.scalar("int32"), n))
    post.append(S.If(E.Var(name), clear))
    return name


def resolve(lw, a, name, x, body):
    """Access ``a`` at coordinate ``x`` through its scatter array: position and presence."""
    u = f"{a.q}_{a.lvl}"
    l = E.Var(f"l{u}")
    body.add(S.Declare(f"l{u}", T.INDEX, E.Cast(T.INDEX, E.Load(E.Var(name), E.var(x))), const=True))
    body.add(S.Declare(f"e{u}", T.INT, E.Binary("!=", l, E.Int(0))))
    body.add(S.Declare(f"j{u}", T.INDEX, E.Binary("-", E.Binary("+", E.Var(f"b{u}"), l), E.Int(1))))
    lw.advance(a, f"j{u}", f"e{u}", None)
