"""``fusion="max"``: every temporary substituted into its consumers, one loop nest per result
(TACO's approach, the baseline of "ReACT: Redundancy-Aware Code Generation for Tensor
Expressions"), as a pure pass ``Program -> Program``. The substituted nests redo the inner work at
every outer point (SDDMM's dot product inside the ``j`` loop of ``B``), which is what ``"max"`` is
for: a comparison point for ``"auto"``. ``compiler/plan/associate.py`` uses the same
substitution."""
from __future__ import annotations

from lazysparse.ir.nodes import Access, Call, Index, Statement, intern
from lazysparse.compiler.plan.program import Op, Program


def product_factors(e, dtype):
    """The operands of ``e``'s multiplications of ``dtype`` (``[e]`` when it is none)."""
    if isinstance(e, Call) and e.op == "multiply" and e.dtype == dtype and all(d == dtype for d in e.in_dtypes):
        return [f for a in e.args for f in product_factors(a, dtype)]
    return [e]


def _product_path(e, target, dtype):
    """Is ``target`` (an Access node, by identity) reached from ``e`` through multiplications
    of ``dtype`` only?"""
    return any(f is target for f in product_factors(e, dtype))


def _used(stmt):
    return {ix for a in stmt.accesses for ix in a.indices if isinstance(ix, Index)} | set(stmt.out_indices)


def _can_inline(consumer: Statement, acc: Access, producer: Statement, extents) -> bool:
    if not producer.reduce_indices:
        return True
    return (producer.reduce == "sum" and (consumer.reduce == "sum" or not consumer.reduce_indices)
            and producer.dtype == consumer.dtype and _product_path(consumer.expr, acc, consumer.dtype)
            and all(extents.get(r, 0) > 0 for r in producer.reduce_indices))


def _substitute(op: Op, defs: dict, taken: set):
    """``op`` with every access to a value of ``defs`` replaced by its definition. ``taken``:
    the index names in use anywhere in the program (grown by the fresh ones): a fused plan gives
    one name one extent, so a fresh reduction index must not reuse another operation's name
    (a chain's ``m1`` of extent 3 reused for an inlined sum of extent 1 read out of bounds)."""
    args = list(op.args)
    n = [0]

    def fresh():
        while True:
            n[0] += 1
            ix = Index(f"m{n[0]}")
            if ix not in taken:
                taken.add(ix)
                return ix

    def slot(vid):
        if vid not in args:
            args.append(vid)
        return args.index(vid)

    def sub(e):
        if isinstance(e, Access):
            vid = op.args[e.operand]
            d = defs.get(vid)
            if d is None:
                return Access(slot(vid), e.indices)
            ren = dict(zip(d.stmt.out_indices, e.indices))
            ren.update((r, fresh()) for r in d.stmt.reduce_indices)

            def rename(x):
                if isinstance(x, Access):
                    return Access(slot(d.args[x.operand]), tuple(ren.get(i, i) for i in x.indices))
                return Call(x.op, tuple(rename(a) for a in x.args), x.in_dtypes, x.dtype)
            return rename(d.stmt.expr)
        return Call(e.op, tuple(sub(a) for a in e.args), e.in_dtypes, e.dtype)

    expr = sub(op.stmt.expr)
    reduces = op.stmt.reduce_indices or any(defs[op.args[a.operand]].stmt.reduce_indices
                                            for a in op.stmt.accesses if op.args[a.operand] in defs)
    red = op.stmt.reduce if op.stmt.reduce_indices else ("sum" if reduces else op.stmt.reduce)
    stmt = intern(Statement(op.stmt.out_indices, expr, red, op.stmt.dtype))
    # slots no longer read (a temporary's, now substituted) are dropped, numbering kept dense
    live = []
    for a in stmt.accesses:
        if args[a.operand] not in live:
            live.append(args[a.operand])
    if live != args:
        pos = {v: k for k, v in enumerate(live)}

        def renum(x):
            if isinstance(x, Access):
                return Access(pos[args[x.operand]], x.indices)
            return Call(x.op, tuple(renum(a) for a in x.args), x.in_dtypes, x.dtype)
        stmt = intern(Statement(stmt.out_indices, renum(stmt.expr), stmt.reduce, stmt.dtype))
    return Op(op.out, stmt, tuple(live))


def tiny(program: Program):
    """The paper's input-sensitive rule: a temporary whose reductions all have extent 1 (a
    rank-1 SDDMM's k) buys nothing as a temporary; it is substituted (maximal fusion for k)."""
    ext = program.extents()
    return lambda op: bool(op.stmt.reduce_indices) and all(ext[r] == 1 for r in op.stmt.reduce_indices)


# Operations a few instructions long: recomputing one in a second reader costs less than the
# pass that stores it and the loads that read it back (transcendental functions do not qualify)
CHEAP = frozenset((
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin", "less",
    "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and", "logical_or",
    "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
    "negative", "absolute", "fabs", "square", "sqrt", "sign", "real", "imag", "conjugate",
    "isnan", "isinf", "isfinite", "signbit", "floor", "ceil", "trunc", "rint", "copysign",
    "relu", "where", "cast"))
MAX_SHARED_READERS = 4  # readers of a temporary recomputed in each (``elementwise``)
MAX_SHARED_ARRAYS = 2   # arrays such a temporary reads, temporaries it reads counted through


def _calls(e):
    if isinstance(e, Access):
        return
    yield e.op
    for a in e.args:
        yield from _calls(a)


def _cheap(program: Program):
    """``cheap(op)``: the arrays ``op`` reads, cheap temporaries substituted through, or None
    when it is not cheap (a few ``CHEAP`` operations). A reduction's result stays a temporary:
    reading it is one load."""
    by_out = {o.out: o for o in program.ops}
    memo = {}

    def cheap(op):
        if op.out in memo:
            return memo[op.out]
        memo[op.out] = None  # (a cycle cannot occur; the guard only stops a re-entry)
        if op.stmt.reduce_indices or not set(_calls(op.stmt.expr)) <= CHEAP:
            return None
        arrays = set()
        for v in op.args:
            src = by_out.get(v)
            if src is None or src.stmt.reduce_indices:
                arrays.add(v)
                continue
            sub = cheap(src)
            if sub is None:
                return None
            arrays |= sub
        memo[op.out] = arrays
        return arrays
    return cheap


def _readers(program: Program, op):
    """The operations that read ``op``'s value (``Program.consumers``, as operations)."""
    return [program.ops[k] for k in program.consumers(op.out)]


def elementwise(program: Program):
    """Element-wise temporaries that cost nothing to substitute: no reduction, read once at
    every point of each reader's loops (so substitution evaluates it at no point its readers
    do not visit, with no loop-invariant redundancy), and either one reader, or up to
    ``MAX_SHARED_READERS`` readers when the temporary is cheap: a few ``CHEAP`` operations on
    at most ``MAX_SHARED_ARRAYS`` arrays (the mask ``A != 0`` read by both sums of a variance is
    recomputed in each instead of stored by a pass of its own and read back twice). One
    statement then holds the chain, and the single-statement lowerer's merge lattices compute
    only what the result keeps (``where(B > 0, C + D, C - D)`` evaluates one branch per point;
    ``A + B + C`` is one three-way merge)."""
    cheap = _cheap(program)

    def ok(op):
        if op.stmt.reduce_indices:
            return False
        readers = _readers(program, op)
        if not readers or len(readers) > MAX_SHARED_READERS:
            return False
        for r in readers:
            accs = [a for a in r.stmt.accesses if r.args[a.operand] == op.out]
            if len(accs) != 1 or not set(r.loops) <= set(accs[0].indices):
                return False
        if len(readers) == 1:
            return True
        arrays = cheap(op)
        return arrays is not None and len(arrays) <= MAX_SHARED_ARRAYS
    return ok


def cheap_scalars(program: Program):
    """Cheap 0-d element-wise temporaries (``sqrt(s)`` of a sum ``s``) with up to
    ``MAX_SHARED_READERS`` readers, for a program run one kernel per operation: the value is
    the same at every point of its readers' loops, where the single-operation lowerer computes
    it once, before them (``Lowerer.hoist``), instead of a kernel call of its own (~10 us: the
    normalised ``y / sqrt((y ** 2).sum())`` ran four kernels). A fused kernel computes such a
    value once as a statement of its own, so the fusion passes keep it."""
    cheap = _cheap(program)

    def ok(op):
        if program.values[op.out].shape or op.stmt.reduce_indices or cheap(op) is None:
            return False
        readers = _readers(program, op)
        return 0 < len(readers) <= MAX_SHARED_READERS
    return ok


MAX_ACCESSES = 10  # a substituted statement's operand accesses, at most


def inline(program: Program, only=None) -> Program:
    """The program with every temporary that all its consumers can take substituted into them
    (producers first, so chains collapse into one statement); ``only(op)``: which producers
    are candidates (all by default).

    A temporary ``T[o] = sum_r g`` read as ``T[idx]`` by a consumer is replaced by ``g`` with ``o``
    renamed to ``idx`` and ``r`` to fresh variables, which is exact when the consumer reaches the
    access through products only and itself sums or does not reduce (``B_ij * sum_k C_ik D_kj`` ==
    ``sum_k B_ij C_ik D_kj``: ``*`` distributes over ``+``). A temporary without a reduction is
    substituted anywhere. Where some consumer cannot take it (``B / sum_k ...``, a max, a cast on the
    way, an empty reduction extent), the temporary stays an operation of its own: TACO rejects such
    expressions; here they are computed in two nests.
    """
    extents = program.extents()
    defs = {}
    kept = []
    taken = set().union(*(_used(o.stmt) for o in program.ops))
    for op in program.ops:
        new = _substitute(op, defs, taken)
        if len(new.stmt.accesses) > MAX_ACCESSES:
            # the producers it reads are computed as temporaries instead: a value read twice
            # doubles the accesses at each level it is substituted (x * (x @ B.T), nested three
            # times, made one statement of 15 operands and 7 sums, 5 MB of C that gcc compiled
            # in 6 minutes)
            for v in dict.fromkeys(op.args):
                if v in defs:
                    kept.append(defs.pop(v))
            new = _substitute(op, defs, taken)
        if op.out in program.outputs:
            kept.append(new)
            continue
        readers = _readers(program, op)
        # what is substituted is ``new``, which may sum where ``op`` did not (an element-wise
        # product of a substituted matrix product): judged by its own reductions and extents
        ext = dict(extents)
        for a in new.stmt.accesses:
            ext.update((ix, n) for ix, n in zip(a.indices, program.values[new.args[a.operand]].shape)
                       if isinstance(ix, Index))
        ok = all(_can_inline(o.stmt, a, new.stmt, ext)
                 for o in readers for a in o.stmt.accesses if o.args[a.operand] == op.out)
        if ok and readers and (only is None or only(op)):
            defs[op.out] = new
        else:
            kept.append(new)
    return Program(program.values, tuple(kept), program.outputs)
