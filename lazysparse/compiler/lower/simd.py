"""A vector schedule for innermost segment sums: ``for j in [b, z): acc += f(j)``.

The loop a sparse level drives at the bottom of an accumulation (SpMV's row, a row sum, the
``k`` loop of any contraction whose innermost index is sparse) runs a handful of iterations per
segment on power-law data. Scalar code then pays a mispredicted loop exit per segment and one
add latency per entry. With AVX-512 the segment is processed ``W`` entries at a time with masked
loads and gathers, so a segment of up to ``W`` entries is one iteration whatever its length
(measured on the corpus, one core, C harness: 1.1-2.4x faster than the better of the plain and
split-accumulator scalar loops on every matrix but cs4, where rows of 4 tie).

The vector code is emitted under ``#if`` on the compiler's target macros, beside the scalar loop
and behind a run-time flag: a machine without AVX-512 compiles the scalar loop only, and where
both exist the faster one for the input at hand is measured (runtime/tuning.py: on uniform rows
of ~13 entries, cage10, the scalar loop wins in-process by ~10%). It applies when ``f`` is built from
``+ - * negative`` over values of the result's float type, and each operand of ``f`` is either
the driving level's own values (a contiguous load), a dense operand indexed by the driving
coordinate with unit stride (a gather), or a value that does not change within the segment (a
broadcast). Masked-off lanes are never added, so broadcasts and NaNs in them are harmless. The
sum's association changes, as with split accumulators.
"""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.ir.nodes import Access, Index
from lazysparse.compiler.loopir.nodes import Block, Line

# (value dtype, index dtype) -> vector spelling; other combinations keep the scalar loop
# Full iterations use unmasked loads and gathers (measured 20% faster than constant all-ones
# masks); the tail is masked.
_KINDS = {
    ("float64", "int32"): dict(W=8, mask="__mmask8", v="__m512d", sfx="pd", isz=8, iv="__m256i",
                               iload="_mm256_maskz_loadu_epi32", uiload="_mm256_loadu_si256",
                               gather="_mm512_mask_i32gather_pd", ugather="_mm512_i32gather_pd"),
    ("float64", "int64"): dict(W=8, mask="__mmask8", v="__m512d", sfx="pd", isz=8, iv="__m512i",
                               iload="_mm512_maskz_loadu_epi64", uiload="_mm512_loadu_si512",
                               gather="_mm512_mask_i64gather_pd", ugather="_mm512_i64gather_pd"),
    ("float32", "int32"): dict(W=16, mask="__mmask16", v="__m512", sfx="ps", isz=4, iv="__m512i",
                               iload="_mm512_maskz_loadu_epi32", uiload="_mm512_loadu_si512",
                               gather="_mm512_mask_i32gather_ps", ugather="_mm512_i32gather_ps"),
}
# elementwise operations whose vector instruction rounds exactly as the scalar C does (IEEE)
_OPS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div"}
GUARD = "#if defined(__AVX512F__) && defined(__AVX512VL__)"


def segment_sum(lw, v, drv, U):
    """C lines of the vector segment sum for the loop over index ``v`` driven by access ``drv``
    (lowering state: ``drv`` not yet advanced, ``v`` not yet bound), or None when ``f`` does not
    qualify. Adds into ``acc`` (and ``cnt``), like the scalar loop it stands beside."""
    kind = _KINDS.get((lw.odt, lw.spec.inputs[drv.slot].index_dtype))
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
    crd = f"c{drv.slot}_{drv.lvl}"

    # streamed (Lowerer.stream_gate): each step prefetches its values' and coordinates' lines
    # a page ahead, past where the hardware prefetchers have got to on short rows

    def body(pos, masked, acc, nan):
        got = _driven(lw, v, drv, u, kind, crd, pos, masked)
        ahead = stream_prefetch(drv.slot, crd, pos) if lw.stream_ahead else []
        return None if got is None else [*ahead, *got[0], *_step(red, kind, got[1], masked, acc, nan)]
    return _loop(lw, kind, red, f"vj{u}", f"b{u}", f"z{u}", body)


STREAM_AHEAD = 4096  # bytes a streamed segment sum prefetches ahead (a page)


def stream_prefetch(slot, crd, pos):
    """C lines prefetching, ``STREAM_AHEAD`` bytes past position ``pos``, the values of operand
    ``slot`` and its coordinates ``crd``: non-temporal (each line is read once a call). The
    address is formed as an integer: past an array's end it is never dereferenced (a prefetch
    does not fault), and no out-of-bounds pointer arithmetic is done in C."""
    return [f"__builtin_prefetch((const void *)((uintptr_t)(v{slot} + {pos}) + {STREAM_AHEAD}), 0, 0);",
            f"__builtin_prefetch((const void *)((uintptr_t)({crd} + {pos}) + {STREAM_AHEAD}), 0, 0);"]


def _driven(lw, v, drv, u, kind, crd, pos, masked):
    """(lines, vector expression) of ``f`` at the driver's positions ``pos``: the coordinates
    loaded into ``vi`` (gathers index by them), then the gathers; None when ``f`` does not
    qualify."""
    terms = []
    expr = _vexpr(lw, lw.stmt.expr, v, drv, u, kind, terms, iter(lw.acc_by_q), masked, pos)
    if expr is None:
        return None
    vi = (f"{kind['iv']} vi = {kind['iload']}(m, {crd} + {pos});" if masked else
          f"{kind['iv']} vi = {kind['uiload']}((const void *)({crd} + {pos}));")
    return [vi, *terms], expr


def dense_segment(lw, v, n):
    """C lines of the innermost dense loop ``for v in [0, n): acc op= f(v)`` (a sum, max or min
    into the scalar ``acc``) W lanes at a time, or None when ``f`` does not qualify: every
    operand indexed by ``v`` must be dense with unit stride there (a contiguous load), the
    others constant in the loop (a broadcast). Adds into ``acc`` and ``cnt`` as the scalar loop
    does; a sum's association changes (as NumPy's pairwise sum's does)."""
    kind = _KINDS.get((lw.odt, "int32"))
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
    return _loop(lw, kind, red, f"vj{lw.vname[v]}", "0", f"({n})", body)


# a vector of coordinates packed to its low lanes, and its store, by (index dtype, lanes). The
# kept lanes are compressed in a register and written with a store masked to the low ``cnt``
# lanes: the memory form of vpcompress (``_mm512_mask_compressstoreu_*``) is several times slower
# (`2.5 * A` ran 1.1-1.6x scipy's time with it)
_CPACK = {("int32", 8): ("_mm256_maskz_compress_epi32", "_mm256_mask_storeu_epi32"),
          ("int32", 16): ("_mm512_maskz_compress_epi32", "_mm512_mask_storeu_epi32"),
          ("int64", 8): ("_mm512_maskz_compress_epi64", "_mm512_mask_storeu_epi64")}


def append_segment(lw, v, drv, U, L):
    """C lines appending ``f(j)`` for the segment ``j in [b, z)`` driven by ``drv`` to a sparse
    result's last level ``L`` (append assembly, the result's coordinate the driver's), W entries
    at a time: the values and coordinates of the lanes where ``f`` is not zero (NaN kept, as the
    scalar ``w != 0``) are compress-stored, so the loop has no branch per entry (`2.5 * A` on
    vt2010 took 2x scipy's time with one). None when ``f`` does not qualify or the result's
    index type differs from the driver's coordinates'."""
    idx, oidx = lw.spec.inputs[drv.slot].index_dtype, lw.spec.output.index_dtype
    kind = _KINDS.get((lw.odt, idx))
    # (int64 coordinates into an int32 result: narrowed in the register, as the scalar cast does)
    narrow = (idx, oidx) == ("int64", "int32")
    if kind is None or (idx != oidx and not narrow) or drv.lvl != len(drv.lvars) - 1:
        return None
    for a in lw.accs:
        if a is not drv and not a.spec.dense and a.lvl < len(a.lvars):
            return None
    u, W, m, sfx = U[drv.q], kind["W"], kind["mask"], kind["sfx"]
    crd, (cpack, cstore) = f"c{drv.slot}_{drv.lvl}", _CPACK[(oidx, W)]
    coords = "_mm512_cvtepi64_epi32(vi)" if narrow else "vi"
    j, lo, hi = f"vj{u}", f"b{u}", f"z{u}"

    def body(masked):
        got = _driven(lw, v, drv, u, kind, crd, j, masked)
        if got is None:
            return None
        lines, expr = got
        keep = (f"_mm512_mask_cmp_{sfx}_mask(m, vw, _mm512_setzero_{sfx}(), _CMP_NEQ_UQ)" if masked else
                f"_mm512_cmp_{sfx}_mask(vw, _mm512_setzero_{sfx}(), _CMP_NEQ_UQ)")
        return [*lines, f"const {kind['v']} vw = {expr};", f"const {m} vk = {keep};",
                "const int cnt = __builtin_popcount((unsigned)vk);",
                f"const {m} lo = ({m})((1u << cnt) - 1);",
                f"{cstore}(oc{L} + on{L}, lo, {cpack}(vk, {coords}));",
                f"_mm512_mask_storeu_{sfx}(ov + on{L}, lo, _mm512_maskz_compress_{sfx}(vk, vw));",
                f"on{L} += cnt;"]
    main, tail = body(False), body(True)
    if main is None or tail is None:
        return None
    need = f"on{L} + ({hi} - {lo})"
    return [f"if ({need} > ovc) {{ int64_t c_ = occ{L}; LS_GROW({lw.oit}, oc{L}, c_, {need}); occ{L} = c_; "
            f"LS_GROW({lw.oct}, ov, ovc, {need}); }}",
            f"int64_t {j} = {lo};",
            f"for (; {j} + {W} <= {hi}; {j} += {W}) {{", *["  " + x for x in main], "}",
            f"if ({j} < {hi}) {{",
            f"  const {m} m = ({m})((1u << ({hi} - {j})) - 1);", *["  " + x for x in tail], "}"]


UNROLL = 4  # independent vector accumulators in a long segment's main loop


def _loop(lw, kind, red, j, lo, hi, body):
    """The vector loop over positions ``[lo, hi)``: the first ``W`` positions as one masked step
    whatever the segment's length, then, when more remain, UNROLL vectors a step while that many
    remain, each into its own accumulator (one accumulator waits on its add's or max's latency
    every vector: on a 88k-entry max, 4 cycles each, the loop took 1.5x NumPy's), then one
    vector a step, then the masked tail; ``body(pos, masked, acc, nan)`` gives one step's lines,
    None when ``f`` does not qualify.

    The masked first step serves short segments (rows): a segment of up to ``W`` entries runs
    no loop and takes one branch, where the loops' entry tests cost it two or three, and the
    step needs no branch to start. C harness, SpMV, AMD Zen 5, against the loops alone: 0.83-1.01
    of the time at one thread on eight corpus matrices, 0.84-0.97 at two (docs/design.md,
    "A masked first step for segment sums")."""
    W, m, sfx = kind["W"], kind["mask"], kind["sfx"]
    main = body(j, False, "vacc", "vnan")
    tail = body(j, True, "vacc", "vnan")
    if main is None or tail is None:
        return None
    init, fold = _init_fold(red, kind, lw.odt)
    more = [f"vacc{k}" for k in range(1, UNROLL)]
    nans = [f"vnan{k}" for k in range(1, UNROLL)]
    if red == "sum":
        extra = [f"{kind['v']} {a} = _mm512_setzero_{sfx}();" for a in more]
        combine = [f"vacc = _mm512_add_{sfx}(vacc, {a});" for a in more]
    else:
        extra = [f"{kind['v']} {a} = vacc;" for a in more] + [f"{m} {n} = 0;" for n in nans]
        combine = [f"vacc = _mm512_{red}_{sfx}(vacc, {a});" for a in more] + \
            [f"vnan |= {' | '.join(nans)};"]
    unrolled = []
    for k, (a, n) in enumerate(zip(["vacc"] + more, ["vnan"] + nans)):
        unrolled += ["    {", *["      " + s for s in body(f"({j} + {k * W})", False, a, n)], "    }"]
    rest = [f"if ({j} + {UNROLL * W} <= {hi}) {{",
            *["  " + s for s in extra],
            f"  for (; {j} + {UNROLL * W} <= {hi}; {j} += {UNROLL * W}) {{", *unrolled, "  }",
            *["  " + s for s in combine],
            "}",
            f"for (; {j} + {W} <= {hi}; {j} += {W}) {{", *["  " + s for s in main], "}",
            f"if ({j} < {hi}) {{",
            f"  const {m} m = ({m})((1u << ({hi} - {j})) - 1);", *["  " + s for s in tail], "}"]
    # (the ternary keeps the shift below the lane count: a wider shift is undefined in C)
    return [*init,
            f"int64_t {j} = {lo};",
            "{",
            f"  const {m} m = {hi} - {j} >= {W} ? ({m})~0u : ({m})((1u << ({hi} - {j})) - 1);",
            *["  " + s for s in tail],
            "}",
            f"{j} += {W};",
            f"if ({j} < {hi}) {{", *["  " + s for s in rest], "}",
            *fold,
            f"cnt += {hi} - {lo};"]


def _step(red, kind, expr, masked, acc="vacc", nan="vnan"):
    """Lines folding the vector ``expr`` into ``acc`` (masked: lanes under ``m`` only)."""
    sfx = kind["sfx"]
    if red == "sum":
        return ([f"{acc} = _mm512_mask_add_{sfx}({acc}, m, {acc}, {expr});"] if masked else
                [f"{acc} = _mm512_add_{sfx}({acc}, {expr});"])
    # max/min: the instruction returns its second operand when either is NaN, so NaNs are
    # tracked apart (NumPy's max propagates them); masked-off lanes keep the accumulator
    return [f"const {kind['v']} ve = {expr};",
            (f"{nan} |= _mm512_mask_cmp_{sfx}_mask(m, ve, ve, _CMP_UNORD_Q);" if masked else
             f"{nan} |= _mm512_cmp_{sfx}_mask(ve, ve, _CMP_UNORD_Q);"),
            (f"{acc} = _mm512_mask_{red}_{sfx}({acc}, m, {acc}, ve);" if masked else
             f"{acc} = _mm512_{red}_{sfx}({acc}, ve);")]


def _init_fold(red, kind, odt):
    """The vector accumulator's declarations, and the lines folding it into ``acc``."""
    sfx, m = kind["sfx"], kind["mask"]
    if red == "sum":
        return [f"{kind['v']} vacc = _mm512_setzero_{sfx}();"], [f"acc += _mm512_reduce_add_{sfx}(vacc);"]
    ct = "double" if sfx == "pd" else "float"
    return ([f"{kind['v']} vacc = _mm512_set1_{sfx}({'-' if red == 'max' else ''}INFINITY);", f"{m} vnan = 0;"],
            [f"{ct} vr = vnan ? ({ct})NAN : _mm512_reduce_{red}_{sfx}(vacc);", C.reduce_step(red, "acc", "vr", odt)])


def _vexpr(lw, e, v, drv, u, kind, terms, accs, masked, pos, dense=False):
    """Vector expression for ``e`` at the segment's position ``pos`` (C); accesses are consumed
    from ``accs`` in ``accesses_of`` order. ``masked``: lanes beyond the segment are off (the
    tail iteration). ``dense``: the loop over ``v`` is a dense range (no driver): operands
    indexed by ``v`` with unit stride are loaded contiguously instead of gathered."""
    sfx = kind["sfx"]
    if isinstance(e, Access):
        a = next(accs)
        k = a.slot
        if a.spec.dtype != lw.odt:
            return None  # a value that needs a cast (int64 entries, float result): scalar loop
        if drv is not None and a is drv:
            if masked:
                return f"_mm512_maskz_loadu_{sfx}(m, v{k} + {pos})"
            return f"_mm512_loadu_{sfx}(v{k} + {pos})"
        if a.spec.dense:
            if a.spec.ndim == 0:
                return f"_mm512_set1_{sfx}(v{k}s)"
            ms = [m for m, ix in enumerate(e.indices) if ix == v]
            if not ms:
                return f"_mm512_set1_{sfx}({lw.value_of_access(a, e)})"
            if len(ms) != 1 or lw._stride(a.spec, k, ms[0]) != "1":
                return None  # a diagonal or a strided gather: keep the scalar loop
            rest = [lw._term(lw.coord(ix), lw._stride(a.spec, k, mm))
                    for mm, ix in enumerate(e.indices) if mm != ms[0]]
            base = f"v{k}" + (f" + {' + '.join(rest)}" if rest else "")
            name = f"vg{len(terms)}"
            if dense:
                load = (f"_mm512_maskz_loadu_{sfx}(m, {base} + {pos})" if masked else
                        f"_mm512_loadu_{sfx}({base} + {pos})")
                terms.append(f"{kind['v']} {name} = {load};")
            elif masked:
                terms.append(f"{kind['v']} {name} = {kind['gather']}(_mm512_setzero_{sfx}(), m, vi, {base}, {kind['isz']});")
            else:
                terms.append(f"{kind['v']} {name} = {kind['ugather']}(vi, {base}, {kind['isz']});")
            return name
        # a sparse operand resolved outside this loop: constant within the segment
        if a.spec.dtype != lw.odt or any(isinstance(ix, Index) and ix == v for ix in e.indices):
            return None
        return f"_mm512_set1_{sfx}({lw.value_of_access(a, e)})"
    if any(d != lw.odt for d in e.in_dtypes) or e.dtype != lw.odt:
        return None
    args = []
    for arg in e.args:
        x = _vexpr(lw, arg, v, drv, u, kind, terms, accs, masked, pos, dense)
        if x is None:
            return None
        args.append(x)
    if e.op in _OPS and len(args) == 2:
        return f"_mm512_{_OPS[e.op]}_{sfx}({args[0]}, {args[1]})"
    if e.op == "negative" and len(args) == 1:  # the sign bit flipped, as the scalar -x (0 - x is +0.0 at 0.0)
        if sfx == "pd":
            return (f"_mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512({args[0]}), "
                    f"_mm512_set1_epi64((long long)0x8000000000000000ULL)))")
        return (f"_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512({args[0]}), "
                f"_mm512_set1_epi32((int)0x80000000U)))")
    if e.op == "absolute" and len(args) == 1:
        return f"_mm512_abs_{sfx}({args[0]})"
    if e.op == "sqrt" and len(args) == 1:
        return f"_mm512_sqrt_{sfx}({args[0]})"
    if e.op == "square" and len(args) == 1:
        return f"_mm512_mul_{sfx}({args[0]}, {args[0]})"
    return None


def guarded(flag: str, lines, scalar: Block) -> Block:
    """``if (flag) {vector lines} else scalar`` where the target has the vector instructions,
    the scalar block alone elsewhere. The flag is a run-time schedule choice: the vector loop is
    not faster on every input (runtime/tuning.py measures)."""
    blk = Block().add(Line(GUARD), Line(f"if ({flag}) {{"))
    for s in lines:
        blk.add(Line("  " + s))
    blk.add(Line("} else"), Line("#endif"), scalar)
    return blk


def capability(slot: str) -> Block:
    """Lines that report to the caller, through ``slot``, whether this build has the vector code."""
    return Block().add(Line(GUARD), Line(f"{slot} = 1;"), Line("#else"), Line(f"{slot} = 0;"), Line("#endif"))


__all__ = ["segment_sum", "dense_segment", "append_segment", "guarded", "capability", "stream_prefetch", "GUARD"]
