"""Planning one statement over concrete operands into a ``KernelSpec``, by pure passes: operand
specs -> iteration-space decisions -> output format -> loop order (+ operands that must change
format) -> assembly mode -> output index width. The ``KernelSpec`` is the kernel's canonical
signature: it holds no shapes and no values."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from lazysparse.formats import Format, Storage, resolve_format
from lazysparse.formats.levels import COMPRESSED, DENSE
from lazysparse.ir import ops
from lazysparse.ir.nodes import Access, Call, Index, Statement, _Hashed, accesses_of, intern
from lazysparse.compiler.plan import fission
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.workspace import hoisted, storage_vars

INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class OperandSpec(_Hashed):
    format: Format
    dtype: str
    index_dtype: str
    layout: tuple  # dense: modes from largest to smallest stride; sparse: ()
    unit: bool = False  # dense: the fastest mode has stride 1 (compiled as a constant)

    @property
    def ndim(self):
        return self.format.ndim

    @property
    def dense(self):
        return self.format.is_dense


@dataclass(frozen=True)
class KernelSpec(_Hashed):
    stmt: Statement
    inputs: tuple        # OperandSpec per slot
    output: OperandSpec
    order: tuple         # loop order (Index)
    mode: str            # dense | dense-acc | dense-inter | dense-count | append | sort | ws-<policy>
    decisions: tuple     # f(0) == 0 decisions of "eval" ops, in walk order
    loops: object = None  # a schedule's LoopPlan (compiler/plan/loops.py), None: the compiler's


_DTN = {}
_SPEC_CACHE = {}


def dtname(dt) -> str:
    n = _DTN.get(dt)
    if n is None:
        n = _DTN[dt] = str(np.dtype(dt))
    return n


OperandSpec.__hash__ = _Hashed.__hash__
KernelSpec.__hash__ = _Hashed.__hash__


def operand_spec(st: Storage) -> OperandSpec:
    """Interned: equal specs are the same object, so signature lookups compare by identity."""
    spec = st.spec
    if spec is not None:
        return spec
    st.spec = spec = _operand_spec(st)
    return spec


def _operand_spec(st: Storage) -> OperandSpec:
    fmt = st.format
    if fmt.is_dense:
        strides = st.vals.strides
        n = len(strides)
        if n <= 1:
            layout = (0,) if n else ()
        elif n == 2:
            layout = (0, 1) if abs(strides[0]) >= abs(strides[1]) else (1, 0)
        else:
            layout = tuple(sorted(range(n), key=lambda m: (-abs(strides[m]), m)))
        unit = bool(n) and strides[layout[-1]] == st.vals.itemsize
        key = (fmt, st.vals.dtype, None, layout, unit)
    else:
        key = (fmt, st.vals.dtype, st.index_dtype, (), False)
    spec = _SPEC_CACHE.get(key)
    if spec is None:
        spec = OperandSpec(fmt, dtname(key[1]), dtname(key[2]) if key[2] is not None else "int64", key[3], key[4])
        spec = _SPEC_CACHE.setdefault(key, spec)
    return spec


def level_vars(acc: Access, fmt: Format):
    """Index of each storage level of an access (Index or Const), outermost first."""
    return [acc.indices[m] for m in fmt.order]


def split_shared_slots(stmt: Statement, storages):
    """Give every access of a sparse operand its own slot, so each can be converted alone;
    accesses with equal subscripts keep one slot (they are converted alike and iterated once).

    Returns ``(stmt, storages, extra)``: the new slots are ``storages[k] for k in extra``,
    appended after the original ones.
    """
    if not _has_repeated_slot(stmt):
        return stmt, storages, ()
    seen = set()
    extra = []
    moved = {}  # an access already given its own slot -> that access

    def walk(e):
        if isinstance(e, Access):
            if storages[e.operand].format.is_dense or e.operand not in seen:
                seen.add(e.operand)
                moved.setdefault(e, e)
                return e
            if e in moved:  # equal to an earlier access: the same slot (one iterator)
                return moved[e]
            extra.append(e.operand)
            moved[e] = new = Access(len(storages) + len(extra) - 1, e.indices)
            return new
        return Call(e.op, tuple(walk(a) for a in e.args), e.in_dtypes, e.dtype)

    expr = walk(stmt.expr)
    if not extra:
        return stmt, storages, ()
    new = intern(Statement(stmt.out_indices, expr, stmt.reduce, stmt.dtype))
    return new, [*storages, *[storages[k] for k in extra]], tuple(extra)


_REPEATED = {}


def _has_repeated_slot(stmt):
    r = _REPEATED.get(stmt)
    if r is None:
        slots = [a.operand for a in stmt.accesses]
        r = _REPEATED[stmt] = len(set(slots)) != len(slots)
    return r


_EXT_SRC = {}


def extent_sources(stmt: Statement):
    """``(index, slot, mode)`` for every non-output index: the operand dimension giving its extent."""
    src = _EXT_SRC.get(stmt)
    if src is None:
        seen, src = set(stmt.out_indices), []
        for a in stmt.accesses:
            for m, ix in enumerate(a.indices):
                if isinstance(ix, Index) and ix not in seen:
                    seen.add(ix)
                    src.append((ix, a.operand, m))
        src = _EXT_SRC[stmt] = tuple(src)
    return src


def extents(stmt: Statement, storages, out_shape):
    """Extent of every index: outputs from the result shape, the rest from an operand."""
    ext = dict(zip(stmt.out_indices, out_shape))
    for ix, k, m in extent_sources(stmt):
        ext[ix] = storages[k].shape[m]
    return ext


def global_pattern(stmt: Statement, storages, decisions=None):
    """Pattern over all indices: keys are access positions of sparse operands."""
    def key(acc, q):
        return None if storages[acc.operand].format.is_dense else q

    return P.expr_pattern(stmt.expr, key, lambda a: _scalar_value(storages[a.operand]), decisions)


_SCALAR_CALLS = {}   # statement -> P.scalar_calls of its expression
_SCALAR_ZERO = {}    # (call, scalar values) -> whether the call is zero where its tensors are
_MEMO_MAX = 4096


def scalar_decisions(stmt: Statement, storages) -> tuple:
    """The pattern decisions of ``stmt`` that depend on its 0-d operands' values, for these
    storages (``P.scalar_calls``): with the statement and operand specs they fix the plan, so a
    plan made for ``A * 2`` is reused for ``A * 3`` without walking the pattern again."""
    calls = _SCALAR_CALLS.get(stmt)
    if calls is None:
        calls = _SCALAR_CALLS[stmt] = P.scalar_calls(stmt.expr)
    out = []
    for _, call, slots in calls:
        # an argument is an operand (its slot) or a call of 0-d operands (``sqrt(s)``), keyed
        # by its operands' values and computed only on a miss. Keyed by the values' bytes:
        # -0.0 and 0.0 differ for some calls (arctan2), and NaN, which equals nothing, still
        # finds its entry
        raw = [None if k is None else _scalar_value(storages[k]) if type(k) is int
               else tuple([_scalar_value(storages[q]) for q in k[1]]) for k in slots]
        try:
            key = (call, tuple([None if v is None else (v.dtype.char, v.tobytes()) if type(v) is not tuple
                                else tuple([(x.dtype.char, x.tobytes()) for x in v]) for v in raw]))
        except AttributeError:  # (not a NumPy scalar: computed each time)
            key = None
        zero = _SCALAR_ZERO.get(key)
        if zero is None:
            vals = [P.value_0d(k[0], lambda a: _scalar_value(storages[a.operand])) if type(v) is tuple else v
                    for k, v in zip(slots, raw)]
            zero = ops.is_zero(ops.value_at_zero(call.op, call.in_dtypes, call.dtype, vals))
            if key is not None and len(_SCALAR_ZERO) < _MEMO_MAX:
                _SCALAR_ZERO[key] = zero
        out.append(zero)
    return tuple(out)


def _scalar_value(st: Storage):
    if st.ndim == 0 and st.format.is_dense:
        return st.vals[()]
    return None


def infer_format(stmt: Statement, specs, densities, ext, out_ndim, decisions=None):
    """Output format when none is requested, from the iteration space and a density estimate."""
    accs = accesses_of(stmt.expr)
    pat, _ = P.expr_pattern(stmt.expr, lambda a, q: None if specs[a.operand].dense else q,
                            lambda a: None, decisions)
    if pat == P.TRUE or out_ndim == 0:
        return resolve_format("dense", out_ndim)
    red = stmt.reduce_indices
    if red:
        size = math.prod(max(ext[i], 1) for i in stmt.out_indices)
        if _sum_of_single_factors(stmt, [[specs[accs[q].operand].dense for q in t] for t in pat], size):
            return resolve_format("dense", out_ndim)
        n = 1.0
        for r in red:
            n *= max(ext[r], 1)
        if _stored_dense(pat, lambda q: densities[accs[q].operand], n):
            return resolve_format("dense", out_ndim)
    # mirror an operand whose pattern is the result's (keeps COO as COO, CSC as CSC, views free):
    # the first in the expression, as scipy keeps the left operand's format (``pat`` is a set of
    # terms: in its own order ``A + A.T`` came out CSC, assembled by a sort, 2x scipy's time)
    if not red:
        return mirror_format(stmt, accs, specs, pat)
    return None  # sparse, shape decided by the loop order


def mirror_format(stmt, accs, specs, pat):
    """The format of the first sparse operand (in the expression's first term) whose subscripts
    are the result's, relabelled to the result's modes, or None (the loop order decides)."""
    for term in sorted(pat, key=min):
        for q in sorted(term):
            a = accs[q]
            if all(isinstance(ix, Index) for ix in a.indices) and \
                    sorted(a.indices, key=str) == sorted(stmt.out_indices, key=str) and \
                    len(set(a.indices)) == len(a.indices):
                fmt = specs[a.operand].format
                # storage level l holds operand mode fmt.order[l] -> output mode of that index
                order = tuple(stmt.out_indices.index(a.indices[m]) for m in fmt.order)
                return Format(fmt.levels, order)
        break
    return None


NEARLY_FULL = 0.9  # a product of sparse operands is stored dense only when expected this full


def _sum_of_single_factors(stmt, dense_flags, size=0):
    """Whether a sum to a vector has at most one sparse factor in every term (``A.sum(axis=1)``,
    ``A @ x``, a count of nonzeros): it is stored dense, as scipy's is (an ndarray), whatever the
    estimate. A sum over products of two sparse operands (``A @ B``), a max or min over an axis
    (scipy gives a sparse array) and a sum to a matrix or tensor (a tensor-times-vector, sparse
    in pydata/sparse, and possibly too big to store dense) are left to the estimate, and so is
    a vector of ``size`` elements that the memory guard would refuse dense."""
    if stmt.reduce != "sum" or len(stmt.out_indices) > 1 or \
            not all(sum(not d for d in t) <= 1 for t in dense_flags):
        return False
    if 16 * size <= _SMALL:  # (16: the widest value, complex128)
        return True  # (the guard's own check still applies to it; reading the limit costs µs)
    from lazysparse.runtime.memory import limit
    lim = limit()
    return lim is None or 16 * size <= lim


_SMALL = 1 << 26  # bytes of a vector stored dense without asking the memory guard first


def _stored_dense(pat, density, n):
    """The density verdict of a result summed over ``n`` reduced points (``density_rule``)."""
    d = P.estimate_density(pat, density)
    d = 1.0 - (1.0 - min(d, 1.0)) ** max(n, 1.0) if d < 1 else 1.0
    if d <= 0.5:
        return False
    if n > 1 and any(sum(density(q) < 1.0 for q in t) >= 2 for t in pat):
        return d > NEARLY_FULL  # sparse factors under the sum: clustering (density_rule)
    return True


def density_rule(pat, stmt: Statement, out_ndim):
    """The density-dependent part of ``infer_format`` (statements with reductions), as a function
    ``(storages, out_shape) -> Format or None`` of the operands alone: the warm path calls it on
    every run, so everything that depends only on the statement is worked out here, once.

    The estimate: the pattern's density ``d`` assuming independent operands, then the chance that
    at least one of the ``n`` reduced points is present, ``1 - (1 - d)^n``; dense above 1/2. When
    a term multiplies two sparse operands under the sum (``A @ B``), real nonzeros cluster (bands,
    communities) and the products overlap far more than independence predicts: measured on the
    corpus, ``A @ A`` estimated 0.61 / 0.58 / 0.52 dense for MIT8 / bcsstk13 / bcsstk16, which are
    0.38 / 0.10 / 0.044 dense (bcsstk16's 1M entries became a 190 MB array). Such a result is
    stored dense only when expected nearly full (above 0.9: mbeacxc and tomography, 0.84 dense).
    """
    dense = resolve_format("dense", out_ndim)
    red = set(stmt.reduce_indices)
    red_src = tuple((k, m) for ix, k, m in extent_sources(stmt) if ix in red)
    accs = stmt.accesses
    terms = None if pat == P.TRUE else tuple(tuple(accs[q].operand for q in t) for t in pat)
    empty_prod = stmt.reduce == "prod"
    sum_to_vector = stmt.reduce == "sum" and len(stmt.out_indices) <= 1

    def rule(storages, out_shape):
        n = 1.0
        for k, m in red_src:
            n *= storages[k].shape[m]
        if out_ndim == 0 or terms is None or (n == 0 and empty_prod):
            return dense  # a scalar, a full iteration space, or an empty product (1 everywhere)
        if sum_to_vector and _sum_of_single_factors(
                stmt, [[storages[k].format._dense for k in t] for t in terms], math.prod(out_shape)):
            return dense
        def density(q):
            st = storages[accs[q].operand]
            return 1.0 if st.format._dense else st.vals.shape[0] / max(1, math.prod(st.shape))

        return dense if _stored_dense(pat, density, n) else None

    rule.slots = tuple(sorted({k for k, _ in red_src} | {k for t in (terms or ()) for k in t}))
    return rule


def _default_sparse(order_vars, out_indices):
    n = len(out_indices)
    mode_order = tuple(out_indices.index(v) for v in order_vars if v in out_indices)
    if n == 1:
        return Format([COMPRESSED], mode_order)
    return Format([DENSE] + [COMPRESSED] * (n - 1), mode_order)


def _toposort(vars_, edges, score):
    indeg = {v: 0 for v in vars_}
    for a, b in edges:
        indeg[b] += 1
    order = []
    ready = [v for v in vars_ if indeg[v] == 0]
    while ready:
        ready.sort(key=score)
        v = ready.pop(0)
        order.append(v)
        for a, b in edges:
            if a == v:
                indeg[b] -= 1
                if indeg[b] == 0:
                    ready.append(b)
    return order if len(order) == len(vars_) else None


def _chain_edges(seq):
    seq = [x for x in seq if isinstance(x, Index)]
    out = []
    dedup = []
    for x in seq:
        if x not in dedup:
            dedup.append(x)
    for a, b in zip(dedup, dedup[1:]):
        out.append((a, b))
    return out


def _storage_edges(accs, specs):
    """Loop-order constraints of sparse accesses: each one's levels in storage order."""
    return [e for a in accs for e in _chain_edges(level_vars(a, specs[a.operand].format))]


def _leading(stmt, out_fmt, order):
    """How many result levels ``order`` binds first, in storage order (the format is the one
    the order would give when none is asked for)."""
    fmt = out_fmt if out_fmt is not None else _default_sparse(order, list(stmt.out_indices))
    return fmt.is_sparse, hoisted(order, storage_vars(stmt, fmt))


def choose_order(stmt: Statement, specs, out_fmt, concordance=True):
    """Loop order, and the slots whose sparse operand must be converted to follow it.

    Hard constraints: each sparse operand's levels in storage order. Soft: a fixed sparse output's
    levels first (append assembly); for max/min/prod, reductions innermost. Among free choices,
    indices stored outer in more operands go first, output before reduction. ``concordance``:
    convert an operand rather than scatter into every level of a sparse result
    (``_outer_first``).
    """
    outs = list(stmt.out_indices)
    red = list(stmt.reduce_indices)
    vars_ = outs + red
    accs = accesses_of(stmt.expr)
    sparse_accs = list(dict.fromkeys(a for a in accs if not specs[a.operand].dense))  # (equal ones once)
    pos = {v: [] for v in vars_}
    for a in accs:
        sp = specs[a.operand]
        lv = level_vars(a, sp.format) if not sp.dense else [a.indices[m] for m in sp.layout]
        for l, ix in enumerate(lv):
            if isinstance(ix, Index):
                pos[ix].append(l)
    if out_fmt is not None:
        for l, m in enumerate(out_fmt.order if not out_fmt.is_dense else range(len(outs))):
            pos[outs[m]].append(l)

    def score(v):
        p = pos[v] or [0]
        return (max(p), sum(p), v in red, vars_.index(v))

    converted = []
    active = list(sparse_accs)
    while True:
        edges = _storage_edges(active, specs)
        base = _toposort(vars_, edges, score)
        if base is not None:
            break
        converted.append(active.pop())  # drop the last operand's constraints; it gets converted
    bad = _dense_outer_intersection(base, active, specs, outs, red)
    if bad is not None:
        # an inner-product order: the dense loop over v visits every (.., v) and intersects
        # sparse fibers at w, mostly finding nothing. Convert the operand that nests v above w and
        # put w first (Gustavson's order): work proportional to the products that exist.
        v, w, X = bad
        rest = [a for a in active if a is not X]
        edges2 = _storage_edges(rest, specs)
        o = _toposort(vars_, edges2 + [(w, v)], score)
        if o is not None:
            active, edges, base = rest, edges2 + [(w, v)], o
            converted.append(X)
    # (only when nothing is converted yet: the converted operands' new formats are planned again,
    # and a second conversion could undo the first)
    alt = _outer_first(stmt, specs, out_fmt, base, active, vars_, score) if concordance and not converted else None
    if alt is not None:
        active, edges, base, X = alt
        if X is not None:
            converted.append(X)
    soft = []
    if out_fmt is not None and out_fmt.is_sparse:
        ov = [outs[m] for m in out_fmt.order]
        soft.append(_chain_edges(ov) + [(ov[-1], r) for r in red] if ov else [])
    if red and stmt.reduce != "sum":
        soft.append([(o, r) for o in outs for r in red])
    order = base
    extra = []
    for s in soft:
        o = _toposort(vars_, edges + extra + s, score)
        if o is not None:
            extra += s
            order = o
    # an operand that the final order happens to follow needs no conversion (re-planning it
    # would find the same plan and convert again, forever)
    converted = [a for a in converted
                 if concordant_format(specs[a.operand], a, order) != specs[a.operand].format]
    return tuple(order), tuple(sorted({a.operand for a in converted}))


def _outer_first(stmt, specs, out_fmt, order, active, vars_, score):
    """A sum into a sparse result whose loops bind none of its levels first (an outer-product
    order, ``k, i, j`` for CSC @ CSR: a second-order workspace that sorts every product) runs
    instead with one sparse operand converted so that a result index leads (Gustavson's ``i, k,
    j``, a one-level workspace per row), as scipy converts CSC @ CSR. The conversion is O(nnz)
    of that operand; the products are at least as many. Returns ``(active, edges, order,
    converted access)`` or None."""
    outs = list(stmt.out_indices)
    if stmt.reduce != "sum" or not stmt.reduce_indices or len(outs) < 2:
        return None
    sparse, lead0 = _leading(stmt, out_fmt, order)
    if not sparse or lead0:
        return None
    firsts = storage_vars(stmt, out_fmt) if out_fmt is not None else outs
    red = list(stmt.reduce_indices)
    for first in firsts[:1] if out_fmt is not None else firsts:
        lead = [(first, v) for v in vars_ if v != first]
        # the operands may allow a result index first as they are: no conversion at all
        edges = _storage_edges(active, specs) + lead
        o = _toposort(vars_, edges, score)
        if o is not None and _leading(stmt, out_fmt, o)[1] and _dense_outer_intersection(o, active, specs, outs, red) is None:
            return active, edges, o, None
        for X in reversed(active):
            rest = [a for a in active if a is not X]
            edges = _storage_edges(rest, specs) + lead
            o = _toposort(vars_, edges, score)
            if o is None or not _leading(stmt, out_fmt, o)[1]:
                continue
            # X as it will be stored must not make the new order one the inner-product rule
            # converts back (CSC @ DCSR: a dense row loop over B's compressed top level)
            after = list(specs)
            after[X.operand] = replace(specs[X.operand], format=concordant_format(specs[X.operand], X, o))
            if _dense_outer_intersection(o, rest + [X], after, outs, red) is None:
                return rest, edges, o, X
    return None


def _dense_outer_intersection(order, active, specs, outs, red):
    """``(v, w, X)`` when output index ``v`` is iterated densely (no sparse level holds it) outside
    reduction index ``w`` at which two or more sparse operands are co-iterated, and operand ``X``
    stores ``v`` above ``w``; else None."""
    def sparse_vars(a):
        lv = level_vars(a, specs[a.operand].format)
        return [ix for ix, l in zip(lv, specs[a.operand].format.levels) if l.is_sparse]

    for wi, w in enumerate(order):
        if w not in red:
            continue
        its = [a for a in active if w in sparse_vars(a)]
        if len(its) < 2:
            continue
        for v in reversed(order[:wi]):  # keep outer (row) loops; fix the innermost
            if v not in outs or any(v in sparse_vars(a) for a in active):
                continue
            for X in its:
                lv = level_vars(X, specs[X.operand].format)
                if v in lv and lv.index(v) < lv.index(w):
                    return v, w, X
    return None


def concordant_format(spec: OperandSpec, acc: Access, order, storage: Storage = None) -> Format:
    """The operand's level kinds, with its modes stored in loop order.

    ``storage`` (the operand being converted), when given, keeps the conversion O(nnz): a dense
    level stores a position for every point of the levels above it, so when that count would be
    far beyond the operand's entries (CSC of shape (2**33, 3) stored as (k, j) would allocate 2**33
    positions) the dense prefix becomes compressed levels (CSR -> DCSR)."""
    modes = sorted(range(len(acc.indices)),
                   key=lambda m: order.index(acc.indices[m]) if isinstance(acc.indices[m], Index) else -1)
    levels = list(spec.format.levels)
    if storage is not None:
        count = 1
        for l, lv in enumerate(levels):
            if lv.is_sparse:
                break
            count *= storage.shape[modes[l]]
        if count > 4 * storage.nnz + 4096:
            levels = [COMPRESSED if lv.is_dense else lv for lv in levels]
    return Format(levels, tuple(modes))


def choose_mode(stmt: Statement, order, out_fmt: Format, specs=None, decisions=()):
    """The assembly mode; ``specs``/``decisions`` (the operands' specs and the statement's
    f(0) decisions) let a sum of three or more sparse terms take a row workspace instead of a
    merge (compiler/plan/fission.py): it plans as "workspace", and the caller falls back to "append"
    when the workspace would not be dense."""
    outs, red = list(stmt.out_indices), list(stmt.reduce_indices)
    m = len(outs)
    outs_first = set(order[:m]) == set(outs)
    if out_fmt.is_dense:
        if not red:
            return "dense"
        if outs_first:
            return "dense-acc"
        return "dense-inter" if stmt.reduce == "sum" else "dense-count"
    storage_vars = [outs[k] for k in out_fmt.order]
    if tuple(order[:m]) == tuple(storage_vars) and _appendable(out_fmt):
        if specs is not None and fission.terms(stmt, specs, out_fmt, decisions):
            return "workspace"
        return "append"
    coo = out_fmt.levels[0].has_pos and not out_fmt.levels[0].unique
    if red and stmt.reduce == "sum" and _appendable(out_fmt) and not coo:
        # sparse scattering with sums to combine: a workspace ("Compilation of Modular and General
        # Sparse Workspaces") whose policy the caller picks from sizes (compiler/plan/workspace.py);
        # "sort" stays for reorderings with nothing to combine (a transposition is one counting
        # pass) and other reductions
        return "workspace"
    return "sort"


def _appendable(fmt: Format) -> bool:
    # dense prefix then compressed levels, or COO (non-unique compressed + singletons)
    k = 0
    while k < fmt.ndim and fmt.levels[k].is_dense:
        k += 1
    rest = fmt.levels[k:]
    if all(l.unique_segments for l in rest):
        return True
    return k == 0 and rest[0].has_pos and all(l.follows_parent for l in rest[1:])


def output_index_dtype(out_fmt: Format, out_shape, bound):
    if out_fmt.is_dense:
        return "int64"
    full = int(np.prod(out_shape, dtype=np.float64)) if out_shape else 1
    if max(out_shape, default=0) > INT32_MAX:
        return "int64"
    return "int32" if min(full, bound) <= INT32_MAX else "int64"
