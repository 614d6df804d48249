"""Contraction order (association) as a pass ``Program -> Program``: chains of sums of products are
flattened, split in every order of their reduction variables, and the cheapest program by an
estimate of the work is kept, so ``(A @ X) @ W`` may run as ``A @ (X @ W)``. Unlike "ReACT:
Redundancy-Aware Code Generation for Tensor Expressions", which keeps the user's parenthesization,
this does what NumPy's ``einsum(optimize=True)`` and ``multi_dot`` do, for sums of products only
(docs/design.md, "Association")."""
from __future__ import annotations

import itertools
import math

from lazysparse.ir.nodes import Access, Index, accesses_of
from lazysparse.compiler.plan.decompose import _factors, _split, _vars
from lazysparse.compiler.plan.inline import _product_path, inline
from lazysparse.compiler.plan.program import INPUT, OUTPUT, Program

MARGIN = 0.9        # another order must cost less than this fraction of the written one
_MAX_ORDERS = 120   # reduction-variable orders tried per flattened sum (5 variables)


def _link(program: Program):
    """Producers that flatten into their reader: a sum of products of one dtype whose one
    reader reads it once, through products, and sums or does not reduce. (Element-wise
    temporaries are left to ``inline.elementwise`` and the fusion passes.)"""
    def ok(op):
        if program.values[op.out].kind == OUTPUT:
            return False
        st = op.stmt
        if not st.reduce_indices or st.reduce != "sum" or _factors(st.expr, st.dtype) is None:
            return False
        readers = [o for o in program.ops if op.out in o.args]
        if len(readers) != 1:
            return False
        (r,) = readers
        accs = [a for a in accesses_of(r.stmt.expr) if r.args[a.operand] == op.out]
        return (len(accs) == 1 and r.stmt.dtype == st.dtype
                and (r.stmt.reduce == "sum" or not r.stmt.reduce_indices)
                and _product_path(r.stmt.expr, accs[0], st.dtype))
    return ok


def _density_of(e, op, dens):
    """Estimated fraction of the points of ``e`` (a factor) that are nonzero."""
    if isinstance(e, Access):
        return dens.get(op.args[e.operand], 1.0)
    accs = list(accesses_of(e))
    if not accs:
        return 1.0
    return min(1.0, sum(dens.get(op.args[a.operand], 1.0) for a in accs))  # a union, at most


def cost(program: Program, density: dict) -> float:
    """Estimated work of ``program``: multiply-adds at the points its loops visit, plus the
    entries its temporaries store. ``density``: {input value id: nnz / size}.

    Per operation the product of its loop extents times the density of each sparse factor
    (independent patterns), times the density of the mask its reader applies to it (``B .* (U @
    V.T)`` computes ``U @ V.T`` at B's pattern only), plus the entries each temporary stores. Input
    densities come from the caller (the nonzero counts, rounded to a power of two so that the choice
    is a function of the cached DAG key).
    """
    ext = program.extents()
    dens = {v.id: density.get(v.id, 1.0) for v in program.values if v.kind == INPUT}
    total = 0.0
    for op in program.ops:
        st = op.stmt
        fs = _factors(st.expr, st.dtype) or [st.expr]
        d = 1.0
        for f in fs:
            d *= _density_of(f, op, dens)
        d *= _mask(program, op, dens, ext)
        points = math.prod(ext[ix] for ix in op.loops) * d
        size = math.prod(program.values[op.out].shape)
        stored = min(size, points)
        dens[op.out] = stored / size if size else 1.0
        total += points + (stored if program.values[op.out].kind != OUTPUT else 0)
    return total


def _mask(program, op, dens, ext):
    """The density of the pattern every reader multiplies ``op``'s temporary by (1: none):
    the masks pass computes a temporary only where its readers keep it."""
    if program.values[op.out].kind == OUTPUT:
        return 1.0
    worst = 0.0
    for r in program.ops:
        for a in accesses_of(r.stmt.expr):
            if r.args[a.operand] != op.out:
                continue
            mine = {ix for ix in a.indices if isinstance(ix, Index)}
            best = 1.0
            fs = _factors(r.stmt.expr, r.stmt.dtype) if _product_path(r.stmt.expr, a, r.stmt.dtype) else None
            for f in fs or ():
                if isinstance(f, Access) and f is not a:
                    theirs = _vars(f)
                    if mine <= theirs:
                        extra = math.prod(ext[ix] for ix in theirs - mine)
                        best = min(best, dens.get(r.args[f.operand], 1.0) * extra)
            worst = max(worst, best)
    return min(1.0, worst) if worst else 1.0


def _resplit(program: Program, k: int, prefer) -> Program:
    """``program`` with op ``k``'s sum split (``decompose._split``), reductions pushed in by
    ``prefer`` (None: decompose's default order)."""
    op = program.ops[k]
    values = list(program.values)
    ops = _split(op.out, op.stmt, op.args, values, program.extents(), [0], prefer=prefer)
    return Program(tuple(values), program.ops[:k] + tuple(ops) + program.ops[k + 1:], program.outputs)


def associate(unsplit: Program, written: Program, density: dict) -> Program:
    """The cheaper (by ``MARGIN``) of ``written`` (``decompose(split=True)``: each lazy
    operation's sums pushed in, in the order written) and the same DAG with its chains of
    sums of products flattened and split in the cheapest estimated order. ``unsplit``:
    ``decompose(split=False)``, one op per lazy operation (the same value ids for inputs).
    A single operation (one ``einsum``) keeps decompose's own split: only chains across
    operations are reordered.

    The steps: (1) **chains are flattened**: a temporary that is a sum of products, read once by
    one operation that reaches it through products only and itself sums (or does not reduce), is
    substituted into its reader (``compiler/plan/inline.py``'s substitution): ``sum_h (sum_k A_ik
    X_kh) W_hj`` becomes ``sum_{h,k} A_ik X_kh W_hj``; (2) **the flattened sums are split**
    (``decompose._split``) in every order of their reduction variables; (3) **the cheapest program
    is kept** (``cost``). The order as written stays unless another is at least ``MARGIN`` cheaper, so
    near-ties (where the estimate cannot tell) keep the user's rounding. Reassociation changes
    rounding the way a BLAS does; with infinities in the operands ``inf * 0`` can appear in one order
    and not the other, as with ``multi_dot``.
    """
    flat = inline(unsplit, only=_link(unsplit))
    if flat.ops == unsplit.ops:
        return written
    old = {(op.out, op.stmt) for op in unsplit.ops}
    best = flat
    k = 0
    while k < len(best.ops):
        op = best.ops[k]
        if not op.stmt.reduce_indices:
            k += 1
            continue
        orders = ([None] if (op.out, op.stmt) in old else
                  itertools.islice(itertools.permutations(op.stmt.reduce_indices), _MAX_ORDERS))
        trials = []
        for prefer in orders:
            cand = _resplit(best, k, prefer)
            trials.append((cost(cand, density), len(trials), cand))
        _, _, cand = min(trials, key=lambda t: t[:2])
        k += len(cand.ops) - len(best.ops) + 1
        best = cand
    return best if cost(best, density) < MARGIN * cost(written, density) else written
