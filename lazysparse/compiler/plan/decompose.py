"""Decomposition (the first step of "ReACT: Redundancy-Aware Code Generation for Tensor
Expressions"): a lazy DAG becomes a ``Program`` of three-address ops, by pure functions of what the
front end built: equal nodes become one value, every operation's indices join one namespace (so a
fused loop is literally the same variable in both operations), and reductions are pushed in
(``_split``) so that a factor is multiplied outside the sums it does not depend on."""
from __future__ import annotations

from lazysparse.ir.nodes import Access, Call, Const, Index, Statement, accesses_of, intern
from lazysparse.compiler.plan.program import INPUT, OUTPUT, TEMP, Op, Program, Value
from lazysparse.compiler.plan import visits

_NAMES = "ijklmnpqrstuvw"


def _fresh(counter):
    n = counter[0]
    counter[0] += 1
    return Index(_NAMES[n] if n < len(_NAMES) else f"x{n}")


def _is_alias(stmt: Statement) -> bool:
    """A pure renaming of axes: one access, no reduction, every result index read once."""
    e = stmt.expr
    if not isinstance(e, Access) or stmt.reduce_indices:
        return False
    used = [ix for ix in e.indices if isinstance(ix, Index)]
    return len(set(used)) == len(used)


def _lazy_order(roots):
    """Lazy nodes reachable from ``roots`` (nodes), children first; each once."""
    order, seen = [], set()
    stack = [(n, False) for n in reversed(roots)]
    while stack:
        n, expanded = stack.pop()
        if expanded:
            if id(n) not in seen:
                seen.add(id(n))
                order.append(n)
            continue
        if id(n) in seen or n.result is not None:
            continue
        stack.append((n, True))
        for c in reversed(n.children):
            if c._node is not None and c._node.result is None:
                stack.append((c._node, False))
    return order


def _compose(access_indices, alias_stmt):
    """The subscripts of an alias's source when the alias is read at ``access_indices``."""
    pos = {ix: m for m, ix in enumerate(alias_stmt.out_indices)}
    return tuple(access_indices[pos[s]] if isinstance(s, Index) else s
                 for s in alias_stmt.expr.indices)


def decompose(roots, split=True):
    """``(program, node_values, inputs)``: the program computing the lazy ``roots`` (their
    nodes); for each lazy node planned, by ``id``, the value holding its result; and the
    storage of each input value id.

    Three steps. **Values**: lazy nodes are taken children first; equal nodes (same statement, shape,
    requested format and children) become one value, as ``compute_nodes`` does. A node that only
    renames axes (a transpose, a ``keepdims`` axis) is no operation: its consumers read its source
    directly with the subscripts composed (``(U @ V.T)`` reads ``V[j,k]``). **One index
    namespace**: consumers are visited before producers; a producer's result dimensions take the
    index variables of the first access that reads its value with distinct variables, so a fused loop
    is literally the same variable in both operations. Reduction variables are always fresh.
    **Reductions pushed in** (``_split``, when ``split``).
    """
    order = _lazy_order(roots)
    visits.count(len(order))
    values = []
    node_value = {}     # id(node) -> value id, or ("alias", source ref, stmt) for renamings
    input_of = {}       # Storage.buffers_key -> value id
    inputs = {}         # value id -> storage
    canon = {}          # CSE key -> value id

    def ref_of(child):
        """(value id, alias statements outermost first) for a child array."""
        st = child._storage if child._storage is not None else child._node.result
        if st is not None:
            key = st.buffers_key()  # (two wraps of one array are one input)
            vid = input_of.get(key)
            if vid is None:
                vid = input_of[key] = len(values)
                inputs[vid] = st
                values.append(Value(vid, INPUT, tuple(st.shape), str(st.vals.dtype)))
            return vid, ()
        return node_value[id(child._node)]

    raw = []  # (value id, local statement, [(child value id, aliases)])
    for n in order:
        refs = [ref_of(c) for c in n.children]
        if _is_alias(n.stmt) and len(refs) == 1:
            node_value[id(n)] = (refs[0][0], (n.stmt,) + refs[0][1])
            continue
        key = (n.stmt, n.shape, n.format, tuple((r[0], r[1]) for r in refs))
        vid = canon.get(key)
        if vid is None:
            vid = canon[key] = len(values)
            values.append(Value(vid, TEMP, tuple(n.shape), n.stmt.dtype))
            raw.append((vid, n.stmt, refs))
        node_value[id(n)] = (vid, ())
    outs = []
    for r in roots:
        vid, aliases = node_value[id(r)]
        if aliases:  # a renaming asked for as a result: one op copies it
            vid2 = len(values)
            values.append(Value(vid2, TEMP, tuple(r.shape), r.stmt.dtype))
            raw.append((vid2, r.stmt, [(vid, aliases[1:])]))
            vid = vid2
        node_value[id(r)] = (vid, ())  # a root's entry: the value holding its result
        if vid not in outs:
            outs.append(vid)
    for vid in outs:
        values[vid] = Value(vid, OUTPUT, values[vid].shape, values[vid].dtype)

    # each op's accesses through its children's renamings, still in its local names
    local = []
    for vid, stmt, refs in raw:
        args, slot_of = [], {}

        def resolve(e):
            if isinstance(e, Access):
                src, aliases = refs[e.operand]
                idx = e.indices
                for a in aliases:  # outermost alias first: the child as this op reads it
                    idx = _compose(idx, a)
                if src not in slot_of:
                    slot_of[src] = len(args)
                    args.append(src)
                return Access(slot_of[src], tuple(idx))
            return Call(e.op, tuple(resolve(a) for a in e.args), e.in_dtypes, e.dtype)
        local.append((vid, Statement(stmt.out_indices, resolve(stmt.expr), stmt.reduce, stmt.dtype),
                      tuple(args)))

    # one namespace: consumers first, so a producer inherits its first reader's variables
    counter = [0]
    named = {}      # value id -> (global Statement, args)
    reads = []      # (value id read, global access indices), in consumer order
    for vid, stmt, args in reversed(local):
        out_names = None
        for rv, idx in reads:
            if rv == vid and all(isinstance(ix, Index) for ix in idx) and len(set(idx)) == len(idx):
                out_names = idx
                break
        ren = {}
        for m, ix in enumerate(stmt.out_indices):
            ren[ix] = out_names[m] if out_names is not None else _fresh(counter)
        for ix in stmt.reduce_indices:
            ren[ix] = _fresh(counter)
        g = _rename(stmt, ren)
        named[vid] = (g, args)
        for a in g.accesses:
            reads.append((args[a.operand], a.indices))
    ops = []
    extent = _extents(values, named)
    for vid, _, _ in local:
        g, args = named[vid]
        if split:
            ops.extend(_split(vid, g, args, values, extent, counter))
        else:
            ops.append(Op(vid, intern(g), args))
    return (Program(tuple(values), tuple(ops), tuple(outs)),
            {k: v[0] for k, v in node_value.items()}, inputs)


def _rename(stmt, ren):
    def walk(e):
        if isinstance(e, Access):
            return Access(e.operand, tuple(ren.get(ix, ix) if isinstance(ix, Index) else ix
                                           for ix in e.indices))
        return Call(e.op, tuple(walk(a) for a in e.args), e.in_dtypes, e.dtype)
    return Statement(tuple(ren[ix] for ix in stmt.out_indices), walk(stmt.expr), stmt.reduce, stmt.dtype)


def _extents(values, named):
    ext = {}
    for vid, (g, args) in named.items():
        for m, ix in enumerate(g.out_indices):
            ext.setdefault(ix, values[vid].shape[m])
        for a in g.accesses:
            shape = values[args[a.operand]].shape
            for m, ix in enumerate(a.indices):
                if isinstance(ix, Index) and not (shape[m] == 1 and ext.get(ix, 1) != 1):
                    ext.setdefault(ix, shape[m])
    return ext


# -- pushing reductions in ----------------------------------------------------------------------
_MAY_SPLIT = {}


def may_split(stmt: Statement) -> bool:
    """Would ``_split`` push a reduction of this one statement in (a factor free of a reduced
    variable)? Decides whether a single operation is worth planning as a DAG; remembered per
    statement (it is asked on every materialize of one operation with a reduction)."""
    hit = _MAY_SPLIT.get(stmt)
    if hit is None:
        hit = False
        red = set(stmt.reduce_indices)
        fs = _factors(stmt.expr, stmt.dtype) if red and stmt.reduce == "sum" else None
        if fs is not None and len(fs) >= 2:
            hit = any(not (_vars(f) & {r}) for f in fs for r in red)
        _MAY_SPLIT[stmt] = hit
    return hit



def _factors(e, dtype):
    """The factors of a product tree of ``multiply`` calls all of ``dtype``, or None."""
    if isinstance(e, Call) and e.op == "multiply" and e.dtype == dtype and \
            all(t == dtype for t in e.in_dtypes):
        left, right = _factors(e.args[0], dtype), _factors(e.args[1], dtype)
        if left is None or right is None:
            return None
        return left + right
    if isinstance(e, Call) and e.dtype != dtype:
        return None
    return [e]


def _vars(e):
    return {ix for a in accesses_of(e) for ix in a.indices if isinstance(ix, Index)}


def _product(fs, dtype):
    out = fs[0]
    for f in fs[1:]:
        out = Call("multiply", (out, f), (dtype, dtype), dtype)
    return out


def _split(vid, stmt, args, values, extent, counter, prefer=None):
    """``stmt`` with its reductions pushed in: the ops computing it, last one writes ``vid``.
    ``prefer``: the reduction variables in the order to push them in (default: the innermost,
    last to appear, first; compiler/plan/associate.py tries every order).

    ``sum_k B_ij * C_ik * D_jk`` computes the product of the factors that depend on k under the k
    loop, into a temporary, and multiplies by ``B_ij`` once per (i, j): ``T_ij = sum_k C_ik D_jk;
    A_ij = B_ij * T_ij``. With several reduction variables the innermost one goes first (``sum_{j,k}
    X_ijk C_kr B_jr`` gives ``T_ijr = sum_k X_ijk C_kr`` then ``sum_j B_jr T_ijr``: MTTKRP multiplies
    ``B_jr`` once per (i, j, r)). Valid because ``*`` distributes over ``+``; applied only to sums of
    products whose factors all have the result's dtype (NumPy casts each factor first otherwise), and
    not when a pushed-in sum could be empty (an empty extent: ``inf * 0`` would appear where the
    user's expression sums nothing).
    """
    red = list(stmt.reduce_indices)
    if stmt.reduce != "sum" or not red:
        return [Op(vid, intern(stmt), args)]
    fs = _factors(stmt.expr, stmt.dtype)
    if fs is None or len(fs) < 2:
        return [Op(vid, intern(stmt), args)]
    ops = []
    args = list(args)
    dtype = stmt.dtype
    first_seen = []
    for a in accesses_of(stmt.expr):
        for ix in a.indices:
            if isinstance(ix, Index) and ix not in first_seen:
                first_seen.append(ix)
    while True:
        inner_red = [r for r in red if any(r in _vars(f) for f in fs)]
        outer = [f for f in fs if not (_vars(f) & set(red))]
        inner = [f for f in fs if _vars(f) & set(red)]
        if outer and inner and all(extent.get(r, 0) > 0 for r in red):
            # sum_R outer * inner = outer * (sum_R inner), the inner sum split in turn
            tmp = _temp(inner, red, stmt.out_indices, first_seen, args, values, extent, dtype, ops,
                        counter, prefer)
            fs = outer + [tmp]
            red = []
            break
        if len(red) < 2:
            break
        # the innermost reduction variable (last to appear) whose factors are a strict subset
        rank = prefer.index if prefer is not None else (lambda r: -first_seen.index(r))
        for r in sorted(inner_red, key=rank):
            fr = [f for f in fs if r in _vars(f)]
            if 0 < len(fr) < len(fs) and extent.get(r, 0) > 0:
                tmp = _temp(fr, [r], None, first_seen, args, values, extent, dtype, ops)
                fs = [f for f in fs if r not in _vars(f)] + [tmp]
                red.remove(r)
                break
        else:
            break
    body, used = _reslot(_product(fs, dtype), args)
    ops.append(Op(vid, intern(Statement(stmt.out_indices, body, "sum", dtype)), used))
    return ops


def _reslot(expr, args):
    """``expr`` over new slots numbered by first read, and the value ids of those slots
    (``args``: the value id of each old slot)."""
    slots, used = {}, []

    def walk(e):
        if isinstance(e, Access):
            v = args[e.operand]
            if v not in slots:
                slots[v] = len(used)
                used.append(v)
            return Access(slots[v], e.indices)
        return Call(e.op, tuple(walk(a) for a in e.args), e.in_dtypes, e.dtype)
    return walk(expr), tuple(used)


def _temp(fs, red, out_order, first_seen, args, values, extent, dtype, ops, counter=None, prefer=None):
    """A new op ``T[idx] = sum_red prod(fs)`` (its arguments re-slotted; with ``counter``, its
    own sum split too); returns ``T``'s access in the caller's slots (``args`` grows by T's
    value id)."""
    keep = sorted({ix for f in fs for ix in _vars(f)} - set(red), key=first_seen.index)
    if out_order is not None:  # the result's own order where the temporary has all its indices
        keep = [ix for ix in out_order if ix in keep] + [ix for ix in keep if ix not in out_order]
    body, targs = _reslot(_product(fs, dtype), args)
    tid = len(values)
    values.append(Value(tid, TEMP, tuple(extent[ix] for ix in keep), dtype))
    tstmt = Statement(tuple(keep), body, "sum", dtype)
    if counter is not None and len(red) > 1:
        ops.extend(_split(tid, tstmt, targs, values, extent, counter, prefer))
    else:
        ops.append(Op(tid, intern(tstmt), targs))
    args.append(tid)
    return Access(len(args) - 1, tuple(keep))
