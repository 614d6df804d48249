"""A vector schedule for innermost segment sums, ``for j in [b, z): acc += f(j)``: the loop a
sparse level drives at the bottom of an accumulation (SpMV's row, a row sum, the ``k`` loop of
any contraction whose innermost index is sparse) processed ``W`` entries at a time with AVX-512
masked loads and gathers (``segment_sum``), emitted beside the scalar loop under a
target-feature guard and a run-time flag (``guarded``)."""
from __future__ import annotations

from lazysparse.ir.nodes import Access, Index
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S
from lazysparse.compiler.loopir import types as T
from lazysparse.compiler.loopir.nodes import Block

# (value dtype, index dtype) -> lanes; other combinations keep the scalar loop. Full iterations
# use unmasked loads and gathers (measured 20% faster than constant all-ones masks); the tail
# is masked.
_KINDS = {("float64", "int32"): 8, ("float64", "int64"): 8, ("float32", "int32"): 16}
# elementwise operations whose vector instruction rounds exactly as the scalar C does (IEEE)
_OPS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div"}
FEATURE = "avx512"  # the target feature the vector code needs
M = E.Var("m")  # the lane mask of a masked step


class _Kind:
    """The vector types of one (value dtype, index dtype) pair."""

    def __init__(self, odt, idx):
        self.W = _KINDS[(odt, idx)]
        self.vt, self.mt, self.it = T.Vec(odt, self.W), T.Mask(self.W), T.Vec(idx, self.W)
        self.idx, self.odt = idx, odt


def _kind(odt, idx):
    return _Kind(odt, idx) if (odt, idx) in _KINDS else None


def segment_sum(lw, v, drv, U):
    """The vector segment sum for the loop over index ``v`` driven by access ``drv`` (lowering
    state: ``drv`` not yet advanced, ``v`` not yet bound), as loop IR statements, or None when
    ``f`` does not qualify. Adds into ``acc`` (and ``cnt``), like the scalar loop it stands
    beside.

    Such a loop runs a handful of iterations per segment on power-law data; scalar code then
    pays a mispredicted loop exit per segment and one add latency per entry, where a segment of
    up to ``W`` entries is one vector iteration whatever its length (measured on the corpus, one
    core, C harness: 1.1-2.4x faster than the better of the plain and split-accumulator scalar
    loops on every matrix but cs4, where rows of 4 tie). It applies when ``f`` is built from
    ``+ - * negative`` over values of the result's float type, and each operand of ``f`` is
    either the driving level's own values (a contiguous load), a dense operand indexed by the
    driving coordinate with unit stride (a gather), or a value that does not change within the
    segment (a broadcast). Masked-off lanes are never added, so broadcasts and NaNs in them are
    harmless. The sum's association changes, as with split accumulators."""
    kind = _kind(lw.odt, lw.spec.inputs[drv.slot].index_dtype)
    red = lw.stmt.reduce
    if kind is None or red not in ("sum", "max", "min"):
        return None
    u = U[drv.q]
    # the driver must resolve fully here (its values are then contiguous in j), and nothing else
    # may need per-entry work (a located level, another iterator)
    if drv.lvl != len(drv.lvars) - 1:
        return None
    for a in lw.accs:
        if a is drv or a.spec.dense:
            continue
        if a.lvl < len(a.lvars):
            return None  # a sparse operand still to be resolved: per-entry searches
    crd = E.Var(f"c{drv.slot}_{drv.lvl}")

    # streamed (Lowerer.stream_gate): each step prefetches its values' and coordinates' lines
    # a page ahead, past where the hardware prefetchers have got to on short rows

    def body(pos, masked, acc, nan):
        got = _driven(lw, v, drv, u, kind, crd, pos, masked)
        ahead = stream_prefetch(drv.slot, crd, pos) if lw.stream_ahead else []
        return None if got is None else [*ahead, *got[0], *_step(red, kind, got[1], masked, acc, nan)]
    return _loop(lw, kind, red, f"vj{u}", f"b{u}", f"z{u}", body)


STREAM_AHEAD = 4096  # bytes a streamed segment sum prefetches ahead (a page)


def stream_prefetch(slot, crd, pos):
    """Prefetches, ``STREAM_AHEAD`` bytes past position ``pos``, of the values of operand
    ``slot`` and of its coordinates ``crd``: non-temporal (each line is read once a call),
    never dereferenced past an array's end."""
    pos = E.var(pos)
    return [S.Prefetch(E.add(f"v{slot}", pos), STREAM_AHEAD), S.Prefetch(E.add(E.var(crd), pos), STREAM_AHEAD)]


def _driven(lw, v, drv, u, kind, crd, pos, masked):
    """(statements, vector expression) of ``f`` at the driver's positions ``pos``: the
    coordinates loaded into ``vi`` (gathers index by them), then the gathers; None when ``f``
    does not qualify."""
    terms = []
    expr = _vexpr(lw, lw.stmt.expr, v, drv, u, kind, terms, iter(lw.acc_by_q), masked, pos)
    if expr is None:
        return None
    vi = S.Declare("vi", kind.it, E.VLoad(kind.it, E.add(crd, pos), M if masked else None))
    return [vi, *terms], expr


def dense_segment(lw, v, n):
    """The innermost dense loop ``for v in [0, n): acc op= f(v)`` (a sum, max or min into the
    scalar ``acc``) W lanes at a time, as loop IR statements, or None when ``f`` does not
    qualify: every operand indexed by ``v`` must be dense with unit stride there (a contiguous
    load), the others constant in the loop (a broadcast). Adds into ``acc`` and ``cnt`` as the
    scalar loop does; a sum's association changes (as NumPy's pairwise sum's does)."""
    kind = _kind(lw.odt, "int32")
    red = lw.stmt.reduce
    if kind is None or red not in ("sum", "max", "min"):
        return None
    for a in lw.accs:
        if not a.spec.dense and a.lvl < len(a.lvars):
            return None  # a sparse operand still to be resolved in this loop

    def body(pos, masked, acc, nan):
        terms = []
        expr = _vexpr(lw, lw.stmt.expr, v, None, None, kind, terms, iter(lw.acc_by_q), masked, pos, dense=True)
        return None if expr is None else [*terms, *_step(red, kind, expr, masked, acc, nan)]
    return _loop(lw, kind, red, f"vj{lw.vname[v]}", "0", E.Paren(E.var(n)), body)


def append_segment(lw, v, drv, U, L):
    """Loop IR appending ``f(j)`` for the segment ``j in [b, z)`` driven by ``drv`` to a sparse
    result's last level ``L`` (append assembly, the result's coordinate the driver's), W entries
    at a time: the values and coordinates of the lanes where ``f`` is not zero (NaN kept, as the
    scalar ``w != 0``) are compressed to the low lanes and stored under a mask of that many
    lanes, so the loop has no branch per entry (`2.5 * A` on vt2010 took 2x scipy's time with
    one; the compressing store of memory was several times slower than compressing in a
    register: `2.5 * A` ran 1.1-1.6x scipy's time with it). None when ``f`` does not qualify or
    the result's index type differs from the driver's coordinates'."""
    idx, oidx = lw.spec.inputs[drv.slot].index_dtype, lw.spec.output.index_dtype
    kind = _kind(lw.odt, idx)
    # (int64 coordinates into an int32 result: narrowed in the register, as the scalar cast does)
    narrow = (idx, oidx) == ("int64", "int32")
    if kind is None or (idx != oidx and not narrow) or drv.lvl != len(drv.lvars) - 1:
        return None
    for a in lw.accs:
        if a is not drv and not a.spec.dense and a.lvl < len(a.lvars):
            return None
    u, W, vt = U[drv.q], kind.W, kind.vt
    crd, ot = E.Var(f"c{drv.slot}_{drv.lvl}"), T.Vec(oidx, W)
    vi, vw, vk, cnt, lo_m = (E.Var(n) for n in ("vi", "vw", "vk", "cnt", "lo"))
    coords = E.VNarrow(kind.it, vi) if narrow else vi
    j, lo, hi = E.Var(f"vj{u}"), E.Var(f"b{u}"), E.Var(f"z{u}")
    oc, on, ov = E.Var(f"oc{L}"), E.Var(f"on{L}"), E.Var("ov")

    def body(masked):
        got = _driven(lw, v, drv, u, kind, crd, j, masked)
        if got is None:
            return None
        lines, expr = got
        keep = E.VCmp("neq_uq", vt, vw, E.VZero(vt), M if masked else None)
        return [*lines, S.Declare("vw", vt, expr, const=True), S.Declare("vk", kind.mt, keep, const=True),
                S.Declare("cnt", T.INT, E.PopCount(vk), const=True),
                S.Declare("lo", kind.mt, E.MaskFirst(W, cnt), const=True),
                S.VStore(ot, E.add(oc, on), E.VCompress(ot, vk, coords), lo_m),
                S.VStore(vt, E.add(ov, on), E.VCompress(vt, vk, vw), lo_m),
                S.Update(on, "+", cnt)]
    main, tail = body(False), body(True)
    if main is None or tail is None:
        return None
    it, need, c = T.scalar(oidx), E.add(on, E.sub(hi, lo)), E.Var("c_")
    occ = E.Var(f"occ{L}")
    room = S.If(E.Binary(">", need, E.Var("ovc")), S.Inline((
        S.Declare("c_", T.INDEX, occ), S.Grow(it, oc, c, need), S.Assign(occ, c),
        S.Grow(T.scalar(lw.odt), ov, E.Var("ovc"), need))), oneline=True)
    return [room, S.Declare(j.name, T.INDEX, lo),
            S.While(E.Binary("<=", E.add(j, W), hi), Block(main), step=S.Update(j, "+", E.Int(W))),
            S.If(E.lt(j, hi), Block([S.Declare("m", kind.mt, E.MaskFirst(W, E.sub(hi, j)), const=True), *tail]))]


UNROLL = 4  # independent vector accumulators in a long segment's main loop


def _loop(lw, kind, red, j, lo, hi, body):
    """The vector loop over positions ``[lo, hi)``: the first ``W`` positions as one masked step
    whatever the segment's length, then, when more remain, UNROLL vectors a step while that many
    remain, each into its own accumulator (one accumulator waits on its add's or max's latency
    every vector: on a 88k-entry max, 4 cycles each, the loop took 1.5x NumPy's), then one
    vector a step, then the masked tail; ``body(pos, masked, acc, nan)`` gives one step's
    statements, None when ``f`` does not qualify.

    The masked first step serves short segments (rows): a segment of up to ``W`` entries runs
    no loop and takes one branch, where the loops' entry tests cost it two or three, and the
    step needs no branch to start. C harness, SpMV, AMD Zen 5, against the loops alone: 0.83-1.01
    of the time at one thread on eight corpus matrices, 0.84-0.97 at two (docs/design.md,
    "A masked first step for segment sums")."""
    W, vt, mt = kind.W, kind.vt, kind.mt
    j, lo, hi = E.Var(j), E.var(lo), E.var(hi)
    main = body(j, False, "vacc", "vnan")
    tail = body(j, True, "vacc", "vnan")
    if main is None or tail is None:
        return None
    init, fold = _init_fold(red, kind)
    more = [f"vacc{k}" for k in range(1, UNROLL)]
    nans = [f"vnan{k}" for k in range(1, UNROLL)]
    vacc, vnan = E.Var("vacc"), E.Var("vnan")
    if red == "sum":
        extra = [S.Declare(a, vt, E.VZero(vt)) for a in more]
        combine = [S.Assign(vacc, E.VBinary("add", vt, vacc, E.Var(a))) for a in more]
    else:
        extra = [S.Declare(a, vt, vacc) for a in more] + [S.Declare(n, mt, E.Int(0)) for n in nans]
        any_nan = E.Var(nans[0])
        for n in nans[1:]:
            any_nan = E.Binary("|", any_nan, E.Var(n))
        combine = [S.Assign(vacc, E.VBinary(red, vt, vacc, E.Var(a))) for a in more] + [S.Update(vnan, "|", any_nan)]
    unrolled = Block()
    for k, (a, n) in enumerate(zip(["vacc"] + more, ["vnan"] + nans)):
        unrolled.add(Block(body(E.add(j, k * W), False, a, n)))
    step = UNROLL * W
    rest = Block().add(
        S.If(E.Binary("<=", E.add(j, step), hi), Block([
            *extra, S.While(E.Binary("<=", E.add(j, step), hi), unrolled, step=S.Update(j, "+", E.Int(step))),
            *combine])),
        S.While(E.Binary("<=", E.add(j, W), hi), Block(main), step=S.Update(j, "+", E.Int(W))),
        S.If(E.lt(j, hi), Block([S.Declare("m", mt, E.MaskFirst(W, E.sub(hi, j)), const=True), *tail])))
    # (the select keeps the shift below the lane count: a wider shift is undefined in C)
    first = E.Select(E.Binary(">=", E.sub(hi, j), E.Int(W)), E.MaskAll(W), E.MaskFirst(W, E.sub(hi, j)))
    return [*init,
            S.Declare(j.name, T.INDEX, lo),
            Block([S.Declare("m", mt, first, const=True), *tail]),
            S.Update(j, "+", E.Int(W)),
            S.If(E.lt(j, hi), rest),
            *fold,
            S.Update(E.Var("cnt"), "+", E.sub(hi, lo))]


def _step(red, kind, expr, masked, acc="vacc", nan="vnan"):
    """Statements folding the vector ``expr`` into ``acc`` (masked: lanes under ``m`` only)."""
    vt, acc, nan = kind.vt, E.Var(acc), E.Var(nan)
    mask = M if masked else None
    if red == "sum":
        return [S.Assign(acc, E.VBinary("add", vt, acc, expr, mask))]
    # max/min: the instruction returns its second operand when either is NaN, so NaNs are
    # tracked apart (NumPy's max propagates them); masked-off lanes keep the accumulator
    ve = E.Var("ve")
    return [S.Declare("ve", vt, expr, const=True),
            S.Update(nan, "|", E.VCmp("unord", vt, ve, ve, mask)),
            S.Assign(acc, E.VBinary(red, vt, acc, ve, mask))]


def _init_fold(red, kind):
    """The vector accumulator's declarations, and the statements folding it into ``acc``."""
    vt, odt = kind.vt, kind.odt
    vacc, acc = E.Var("vacc"), E.Var("acc")
    if red == "sum":
        return [S.Declare("vacc", vt, E.VZero(vt))], [S.Update(acc, "+", E.VReduce("add", vt, vacc))]
    inf = E.Lit(float("inf"), odt)
    start = E.Unary("-", inf) if red == "max" else inf
    ct = T.scalar(odt)
    vr = E.Select(E.Var("vnan"), E.Cast(ct, E.Lit(float("nan"), odt)), E.VReduce(red, vt, vacc))
    return ([S.Declare("vacc", vt, E.VSplat(vt, start)), S.Declare("vnan", kind.mt, E.Int(0))],
            [S.Declare("vr", ct, vr), S.Reduce(red, acc, E.Var("vr"), odt)])


def _vexpr(lw, e, v, drv, u, kind, terms, accs, masked, pos, dense=False):
    """Vector expression for ``e`` at the segment's position ``pos``; accesses are consumed
    from ``accs`` in ``accesses_of`` order, gathers and loads declared in ``terms``.
    ``masked``: lanes beyond the segment are off (the tail iteration). ``dense``: the loop over
    ``v`` is a dense range (no driver): operands indexed by ``v`` with unit stride are loaded
    contiguously instead of gathered."""
    vt = kind.vt
    mask = M if masked else None
    if isinstance(e, Access):
        a = next(accs)
        k = a.slot
        if a.spec.dtype != lw.odt:
            return None  # a value that needs a cast (int64 entries, float result): scalar loop
        if drv is not None and a is drv:
            return E.VLoad(vt, E.add(f"v{k}", pos), mask)
        if a.spec.dense:
            if a.spec.ndim == 0:
                return E.VSplat(vt, E.Var(f"v{k}s"))
            ms = [m for m, ix in enumerate(e.indices) if ix == v]
            if not ms:
                return E.VSplat(vt, E.var(lw.value_of_access(a, e)))
            if len(ms) != 1 or lw._stride(a.spec, k, ms[0]) != "1":
                return None  # a diagonal or a strided gather: keep the scalar loop
            base = E.Var(f"v{k}")
            for mm, ix in enumerate(e.indices):
                if mm != ms[0]:
                    base = E.add(base, lw.stride_term(lw.coord(ix), lw._stride(a.spec, k, mm)))
            name = f"vg{len(terms)}"
            if dense:
                load = E.VLoad(vt, E.add(base, pos), mask)
            else:
                load = E.VGather(vt, base, E.Var("vi"), kind.idx, mask)
            terms.append(S.Declare(name, vt, load))
            return E.Var(name)
        # a sparse operand resolved outside this loop: constant within the segment
        if a.spec.dtype != lw.odt or any(isinstance(ix, Index) and ix == v for ix in e.indices):
            return None
        return E.VSplat(vt, E.var(lw.value_of_access(a, e)))
    if any(d != lw.odt for d in e.in_dtypes) or e.dtype != lw.odt:
        return None
    args = []
    for arg in e.args:
        x = _vexpr(lw, arg, v, drv, u, kind, terms, accs, masked, pos, dense)
        if x is None:
            return None
        args.append(x)
    if e.op in _OPS and len(args) == 2:
        return E.VBinary(_OPS[e.op], vt, args[0], args[1])
    if e.op == "negative" and len(args) == 1:  # the sign bit flipped, as the scalar -x (0 - x is +0.0 at 0.0)
        return E.VUnary("neg", vt, args[0])
    if e.op in ("absolute", "sqrt") and len(args) == 1:
        return E.VUnary("abs" if e.op == "absolute" else "sqrt", vt, args[0])
    if e.op == "square" and len(args) == 1:
        return E.VBinary("mul", vt, args[0], args[0])
    return None


def guarded(flag: str, stmts, scalar: Block) -> Block:
    """``if (flag) {vector statements} else scalar`` where the target has the vector
    instructions (``FeatureIf``), the scalar block alone elsewhere: a machine without AVX-512
    compiles the scalar loop only. The flag is a run-time schedule choice: where both exist the
    faster one for the input at hand is measured (runtime/tuning.py: on uniform rows of ~13
    entries, cage10, the scalar loop wins in-process by ~10%)."""
    return Block().add(S.FeatureIf(FEATURE, E.var(flag), Block(list(stmts)), scalar))


def capability(slot) -> Block:
    """Reports to the caller, through ``slot`` (an argument slot's expression), whether this
    build has the vector code."""
    return Block().add(S.FeatureGuard(FEATURE, S.Assign(slot, E.Int(1)), S.Assign(slot, E.Int(0))))


__all__ = ["segment_sum", "dense_segment", "append_segment", "guarded", "capability", "stream_prefetch", "FEATURE"]
