"""Sparse iteration spaces as minimal DNF formulas over iterators: a pattern says where an
expression can be nonzero, ``TRUE`` (everywhere) or a union of intersections of sparse operands'
patterns, held as a ``frozenset`` of terms, each term a ``frozenset`` of iterator keys (``TRUE`` is
the single empty term, ``FALSE`` no term). The same algebra serves format inference (keys = sparse
accesses) and lowering (keys = iterators at one loop level, where the DNF terms are exactly the
merge-lattice loop conditions)."""
from __future__ import annotations

import numpy as np

from lazysparse.ir import ops
from lazysparse.ir.nodes import Access

TRUE = frozenset([frozenset()])
FALSE = frozenset()


def var(key):
    return frozenset([frozenset([key])])


def _minimize(terms):
    terms = set(terms)
    return frozenset(t for t in terms if not any(o < t for o in terms))


def conj(*ps):
    out = TRUE
    for p in ps:
        out = _minimize(a | b for a in out for b in p)
    return out


def disj(*ps):
    out = set()
    for p in ps:
        out |= p
    return _minimize(out)


def without(p, keys):
    """``p`` with the iterators ``keys`` taken as present: where the others must be."""
    return _minimize(t - keys for t in p) if keys else p


def keys_of(p):
    out = set()
    for t in p:
        out |= t
    return out


def evaluate(p, present: set) -> bool:
    return any(t <= present for t in p)


def _scalars(call):
    """Which arguments of ``call`` are 0-d: operands, or calls of 0-d values only (``sqrt(s)``
    of a sum ``s``, substituted into ``y / sqrt(s)``), which are constants at every point as
    well. A ``where`` stays a tensor argument (the lowering keeps it in the loop)."""
    return [is_0d(a) for a in call.args]


def is_0d(e) -> bool:
    """A 0-d operand, or a call (not a ``where``) of 0-d values only."""
    if isinstance(e, Access):
        return not e.indices
    return e.op != "where" and all(is_0d(a) for a in e.args)


def value_0d(e, scalar_value):
    """The value of a 0-d expression from its operands' (``scalar_value(access)``), NumPy's
    scalar arithmetic as the kernels compute it; None when an operand's value is unknown."""
    if isinstance(e, Access):
        return scalar_value(e)
    vals = [value_0d(a, scalar_value) for a in e.args]
    if any(v is None for v in vals):
        return None
    return ops.value_at_zero(e.op, e.in_dtypes, e.dtype, vals)


def scalar_operands(e):
    """The 0-d operands' accesses of a 0-d expression, in order."""
    if isinstance(e, Access):
        return [e]
    return [x for a in e.args for x in scalar_operands(a)]


def _decides(kind, scalar) -> bool:
    """Whether a call of this kind makes a decision (f at zero: union or everywhere) in
    ``expr_pattern``'s walk: not an intersection, a division by a tensor or a ``where`` of
    tensors, whose patterns follow from their arguments' (``scalar_calls`` walks the same way).
    ``where(c, x, y)`` with a 0-d ``y`` decides whether ``y`` is zero (``where(A > t, A, 0)``
    keeps A's pattern; a nonzero ``y`` fills the rest)."""
    if kind == "where":  # decides only with a 0-d ``y`` (and a tensor condition): is it zero?
        return scalar[2] and not scalar[0]
    return not (kind == "intersect" or (kind == "divide" and not scalar[1]))


def expr_pattern(expr, access_key, scalar_value, replay=None):
    """Pattern of ``expr``.

    ``access_key(access, position)`` gives the key of a sparse access (None: dense / not iterated
    here, i.e. TRUE). ``scalar_value(access)`` gives the value of a 0-d concrete operand or None.
    Accesses are numbered left to right (``position``), which identifies repeated operands;
    an access equal to an earlier one gets the earlier one's position.
    ``replay``: decisions recorded by an earlier walk (lowering has no operand values).
    """
    counter = [0]
    decisions = []
    first = {}

    def walk(e):
        if isinstance(e, Access):
            # an access equal to an earlier one (same slot and subscripts) takes its position:
            # one iterator for both (nodes.canonical_positions; the lowerer shares its state)
            k = access_key(e, first.setdefault(e, counter[0]))
            counter[0] += 1
            return TRUE if k is None else var(k)
        kind = ops.OPS[e.op][2]
        subs = [walk(a) for a in e.args]
        scalar = _scalars(e)
        if not _decides(kind, scalar):
            if kind == "intersect":
                return conj(*subs)
            if kind == "divide":
                return subs[0]  # implicit zeros of the numerator stay zero (structural convention)
            return disj(conj(subs[0], subs[1]), subs[2])  # where
        # "eval": f at zero decides between union and everywhere
        if replay is not None:
            zero = replay[len(decisions)]
        else:
            zero = _zero_at(e, [value_0d(a, scalar_value) if s else None for a, s in zip(e.args, scalar)])
        decisions.append(zero)
        if kind == "where":  # where(c, x, y) with y a 0-d zero: nonzero only where c and x are
            return conj(subs[0], subs[1]) if zero else TRUE
        # 0-d operands are constants: where the tensor arguments are zero the result is f(0, s)
        tensors = [p for p, s in zip(subs, scalar) if not s]
        return (disj(*tensors) if tensors else TRUE) if zero else TRUE

    p = walk(expr)
    return p, tuple(decisions)


_ZERO_AT = {}  # (op, dtypes, 0-d values' bytes) -> is f(0, s) zero


def _zero_at(call, svals) -> bool:
    """Is ``call`` zero with its tensor arguments at zero and its 0-d ones at ``svals``
    (None: a tensor), in NumPy's arithmetic; memoised by the values' bytes (NaN and -0.0
    included). A DAG whose 0-d values change every call (CG's alpha) is re-decided each
    time (``fused_pipeline._decisions``), but its calls that read no 0-d value (``x + alpha *
    p`` adds two tensors) are the same question every time: NumPy answered it in 10 us."""
    key = (call.op, call.in_dtypes, call.dtype,
           tuple(None if v is None else (np.asarray(v).dtype.char, np.asarray(v).tobytes()) for v in svals))
    got = _ZERO_AT.get(key)
    if got is None:
        if len(_ZERO_AT) > 4096:
            _ZERO_AT.clear()
        got = _ZERO_AT[key] = ops.is_zero(ops.value_at_zero(call.op, call.in_dtypes, call.dtype, svals))
    return got


def scalar_calls(expr):
    """The calls of ``expr`` whose ``expr_pattern`` decision reads a 0-d operand's value, as
    ``(decision index, call, operand of each argument or None)``, in the walk's order. Every
    other decision is fixed by the statement, so these alone tell whether a plan made for one
    set of scalar values holds for another (``A * 2`` and ``A * 3`` share one, ``A * 0`` not)."""
    out, n = [], [0]

    def walk(e):
        if isinstance(e, Access):
            return
        for a in e.args:
            walk(a)
        scalar = _scalars(e)
        if not _decides(ops.OPS[e.op][2], scalar):
            return
        if any(scalar):  # (an argument: its operand, or the 0-d call and its operands)
            out.append((n[0], e, tuple(None if not s else a.operand if isinstance(a, Access)
                                       else (a, tuple(x.operand for x in scalar_operands(a)))
                                       for a, s in zip(e.args, scalar))))
        n[0] += 1

    walk(expr)
    return tuple(out)


def estimate_density(p, density_of):
    """Density estimate of a pattern assuming independent operands."""
    if p == TRUE:
        return 1.0
    miss = 1.0
    for t in p:
        d = 1.0
        for k in t:
            d *= density_of(k)
        miss *= (1.0 - min(d, 1.0))
    return 1.0 - miss


def bound_count(p, nnz_of, full, fixes=None, need=frozenset()):
    """Upper bound on the number of points of a pattern (``full`` for TRUE). A term's points are
    at most the product of the entries of any of its keys that together fix every index in
    ``need`` (``fixes(k)``: the indices key k's entries fix; with ``fixes`` None every key fixes
    all). One key alone does not bound an outer product's term: ``A[i,j] * B[k,l]`` has
    nnz(A) * nnz(B) points."""
    if p == TRUE:
        return full
    tot = 0
    for t in p:
        keys = sorted(t)
        best = full
        for mask in range(1, 1 << len(keys)):
            sub = [k for b, k in enumerate(keys) if mask >> b & 1]
            if fixes is None or need <= frozenset().union(*[fixes(k) for k in sub]):
                n = 1
                for k in sub:
                    n *= nnz_of(k)
                best = min(best, n)
        tot += best
    return min(tot, full)
