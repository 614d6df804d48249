"""Redundancy-aware fusion ("ReACT: Redundancy-Aware Code Generation for Tensor Expressions", the
ReACT paper) as pure passes over a ``Program``: ``plan_fusion`` propagates where each value is
needed, orders each operation's loops, computes their iteration spaces, shares the loops that
operations have in common (trie fusion) and drops the dimensions of temporaries that every use
sits inside, giving the ``IndexTree`` that ``explain`` prints and lowering turns into one
kernel."""
from __future__ import annotations

from dataclasses import dataclass

from lazysparse.formats.format import Format
from lazysparse.formats.levels import DENSE
from lazysparse.ir.nodes import Access, Call, Index, Statement, intern
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.inline import product_factors
from lazysparse.compiler.plan.kernel import OperandSpec, choose_order
from lazysparse.compiler.plan.program import INPUT, TEMP, Op, Program
from lazysparse.compiler.plan import visits


# -- the index tree -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Compute:
    op: int  # index into program.ops


@dataclass(frozen=True)
class Loop:
    var: Index
    space: frozenset  # DNF over (value id, subscripts) keys, patterns.TRUE for a dense loop
    body: tuple       # of Loop | Compute | Reset, in emission order


@dataclass(frozen=True)
class Reset:
    value: int  # a reduced temporary, zeroed here (first in the loop that encloses its uses)


@dataclass(frozen=True)
class Plan:
    program: Program
    orders: tuple     # loop order per op
    masks: dict       # value id -> DNF where it is needed
    tree: tuple       # top-level Loop | Compute | Reset
    temp_dims: dict   # temporary value id -> the variables it keeps (after dimension reduction)
    scalars: dict     # 0-d input value id -> its value (decides f(0, s) in iteration spaces)
    patterns: tuple   # per op, where its result can be nonzero (op_patterns)

    def __repr__(self):
        return show(self.tree, self.program)


def show(nodes, program=None, names=None) -> str:
    """``i{reset v2; k{j∈v0{S0}}; j∈v0{S1}}``: loops, their sparse drivers, resets and
    statements. ``names``: display names for value ids (default ``v<id>``)."""
    def nm(vid):
        return (names or {}).get(vid, f"v{vid}")

    def one(n):
        if isinstance(n, Compute):
            return f"S{n.op}"
        if isinstance(n, Reset):
            return f"reset {nm(n.value)}"
        drv = ""
        if n.space != P.TRUE and isinstance(n.space, frozenset):
            terms = ["∧".join(sorted(nm(k[0]) for k in t)) for t in n.space]
            drv = "∈" + "∨".join(sorted(terms))
        return f"{n.var!r}{drv}{{{'; '.join(one(c) for c in n.body)}}}"
    return "; ".join(one(n) for n in nodes)


# -- specs --------------------------------------------------------------------------------------
def _dense_spec(ndim, dtype):
    return OperandSpec(Format([DENSE] * ndim), dtype, "int64", tuple(range(ndim)), True)


def value_specs(program: Program, input_specs: dict) -> dict:
    """Per value id: the input's spec, or a dense row-major spec for a computed value."""
    out = {}
    for v in program.values:
        out[v.id] = input_specs[v.id] if v.kind == INPUT else _dense_spec(len(v.shape), v.dtype)
    return out


def _sparse_levels(spec, indices):
    """The variables of an access that sit at compressed/singleton levels of its format."""
    if spec.dense:
        return ()
    return tuple(indices[m] for l, m in enumerate(spec.format.order)
                 if spec.format.levels[l].is_sparse and isinstance(indices[m], Index))


# -- patterns over input keys ------------------------------------------------------------------
def _rename_key(key, ren):
    """A key of a temporary's pattern, read through an access: result variables renamed, other
    variables (reduced inside the temporary) and constants become None (any point)."""
    vid, idx = key
    return (vid, tuple(ren.get(ix) if isinstance(ix, Index) else None for ix in idx))


def op_patterns(program: Program, specs: dict, free=None, scalars=None):
    """Per op, where its result can be nonzero: a DNF over ``(input value, subscripts)`` keys of
    sparse inputs, a temporary's pattern substituted where it is read; and per computed value
    its pattern over its result variables. ``free``: a value taken as anything (TRUE)."""
    tpat = {}
    out = []
    for op in program.ops:
        pat = _pattern(op, program, specs, tpat, free, scalars)
        out.append(pat)
        tpat[op.out] = _projected(op, pat)
    return out, tpat


def _projected(op, pat):
    """A value's pattern over its result variables: a reduced variable's keys say only that
    some fiber exists, so that subscript becomes None."""
    outs = set(op.stmt.out_indices)
    return (op.stmt.out_indices, frozenset(
        frozenset((v, tuple(ix if ix in outs or not isinstance(ix, Index) else None for ix in idx))
                  for v, idx in t) for t in pat))


def _pattern(op, program, specs, tpat, free=None, scalars=None):
    subst = {}

    def key(a, _pos):
        vid = op.args[a.operand]
        if vid == free:
            return None
        if vid in tpat:
            outs, pat = tpat[vid]
            ren = dict(zip(outs, a.indices))
            k = ("temp", vid, a.indices)
            subst[k] = frozenset(frozenset(_rename_key(x, ren) for x in t) for t in pat)
            return k
        return (vid, a.indices) if not specs[vid].dense else None
    pat, _ = P.expr_pattern(op.stmt.expr, key,
                            lambda acc: (scalars or {}).get(op.args[acc.operand]))
    if not subst:
        return pat
    terms = []
    for t in pat:
        sub = [k for k in t if k in subst]
        rest = frozenset(k for k in t if k not in subst)
        terms.append(P.conj(frozenset([rest]), *[subst[k] for k in sub]))
    return P.disj(*terms) if terms else P.FALSE


# -- 1. masks -----------------------------------------------------------------------------------
def masks(program: Program, specs: dict, tpat: dict, scalars=None) -> dict:
    """Per value id, the DNF over input keys of where it is needed (``tpat``: the computed
    values' patterns, from ``op_patterns``)."""
    need = {o: P.TRUE for o in program.outputs}
    producer = {op.out: op for op in program.ops}
    patterns_free = {}
    for op in reversed(program.ops):
        mo = need.get(op.out, P.FALSE)
        if op.stmt.reduce_indices:
            mo = P.TRUE  # a reduced result's mask says nothing about the summands' points
        for a in op.stmt.accesses:
            vid = op.args[a.operand]
            if program.values[vid].kind == INPUT or (vid, id(op)) in patterns_free:
                continue
            patterns_free[(vid, id(op))] = True
            pat = _pattern(op, program, specs, tpat, vid, scalars)
            mine = set(ix for ix in a.indices if isinstance(ix, Index))
            if len(mine) != len(a.indices) or \
                    any(ix is not None and ix not in mine for t in pat for k in t for ix in k[1]):
                pat = P.TRUE  # a mask over variables the value is not read with
            m = P.conj(pat, mo)
            if len(mine) != len(a.indices):
                m = P.TRUE  # (a diagonal read: no renaming to the producer's variables)
            elif m != P.TRUE:
                # the consumer's variables are the producer's only for the reader whose names
                # it inherited (decompose): the mask in the producer's variables, a variable it
                # does not have as None (any point; masked_program drops such keys)
                out = producer[vid].stmt.out_indices
                ren = dict(zip(a.indices, out))
                m = frozenset(frozenset(_rename_key(k, ren) for k in t) for t in m)
            need[vid] = P.disj(need.get(vid, P.FALSE), m)
    return need


# -- 2. loop orders -----------------------------------------------------------------------------
def _masked_stmt(op, mask, specs):
    """The op's statement multiplied by one access per sparse key of its mask (new slots), and
    the specs of all slots: ``choose_order`` then walks the mask's levels too."""
    args = list(op.args)
    expr = op.stmt.expr
    extra = sorted({k for t in mask for k in t}, key=repr)
    for vid, idx in extra:
        if any(ix is None for ix in idx):
            continue
        args.append(vid)
        expr = Call("multiply", (expr, Access(len(args) - 1, idx)), (op.stmt.dtype, op.stmt.dtype),
                    op.stmt.dtype)
    return Statement(op.stmt.out_indices, expr, op.stmt.reduce, op.stmt.dtype), [specs[v] for v in args]


def masked_program(program: Program, need: dict) -> Program:
    """The program with every temporary computed only where it is needed: its expression
    times the 0/1 pattern of its mask, ``cast(X != 0)`` of each key (products for a term,
    ``logical_or`` across terms), so the single-statement lowerer's lattices skip the rest.
    For running a plan one kernel per operation (the fused lowering declined): a masked SDDMM's
    product is then formed at the mask's points, never dense. Exact: the factor is 1 where
    the temporary is read; keys with unbound subscripts are dropped (a larger mask)."""
    ops = []
    for op in program.ops:
        mask = need.get(op.out, P.TRUE)
        if program.values[op.out].kind != TEMP or mask in (P.TRUE, P.FALSE):
            ops.append(op)
            continue
        args, dt = list(op.args), op.stmt.dtype
        terms = []
        for t in sorted(mask, key=repr):
            keys = [k for k in sorted(t, key=repr) if all(ix is not None for ix in k[1])]
            if not keys:
                terms = None  # a term without sparse keys: needed everywhere
                break
            conj = None
            for vid, idx in keys:
                if vid not in args:
                    args.append(vid)
                x = Call("cast", (Access(args.index(vid), tuple(idx)),), (program.values[vid].dtype,), "bool")
                conj = x if conj is None else Call("logical_and", (conj, x), ("bool", "bool"), "bool")
            terms.append(conj)
        if not terms:
            ops.append(op)
            continue
        m = terms[0]
        for x in terms[1:]:
            m = Call("logical_or", (m, x), ("bool", "bool"), "bool")
        expr = Call("multiply", (op.stmt.expr, Call("cast", (m,), ("bool",), dt)), (dt, dt), dt)
        ops.append(Op(op.out, intern(Statement(op.stmt.out_indices, expr, op.stmt.reduce, dt)), tuple(args)))
    return Program(program.values, tuple(ops), program.outputs)


def folds_into_reader(program: Program, need: dict):
    """Which temporaries ``masked_program`` should not mask but substitute into their reader
    (``inline``'s ``only``): a sum read once by an element-wise product of it and the one key of
    its mask, at every point of the reader. ``M * (A @ B)`` is then one
    statement ``sum_k M_ij A_ik B_kj`` instead of the product times M's 0/1 pattern and a second
    kernel multiplying by M: the same products at the same points, the mask's value used where
    its pattern was, and no temporary. Exact (``*`` distributes over the sum: inline.py)."""
    readers = {}
    for o in program.ops:
        for v in set(o.args):
            readers.setdefault(v, []).append(o)

    def ok(op):
        mask = need.get(op.out, P.TRUE)
        if (program.values[op.out].kind != TEMP or op.stmt.reduce != "sum" or mask in (P.TRUE, P.FALSE)
                or len(mask) != 1 or len(readers.get(op.out, ())) != 1):
            return False
        (r,) = readers[op.out]
        fs = product_factors(r.stmt.expr, r.stmt.dtype)
        accs = [a for a in r.stmt.accesses if r.args[a.operand] == op.out]
        if r.stmt.reduce_indices or len(accs) != 1 or not any(f is accs[0] for f in fs):
            return False
        idx = accs[0].indices
        if (not all(isinstance(ix, Index) for ix in idx) or len(set(idx)) != len(idx)
                or set(idx) != set(r.stmt.out_indices)):
            return False  # the reader would evaluate the sum more often than once per point
        back = dict(zip(idx, op.stmt.out_indices))  # the reader's names -> the producer's
        have = {(r.args[f.operand], tuple(back.get(ix) for ix in f.indices))
                for f in fs if isinstance(f, Access) and f is not accs[0]}
        (term,) = mask
        # exactly the mask's one key beside the sum: a reader with more factors would multiply
        # them all at every product, where the mask multiplies once ((A * B) * (U @ V.T))
        return len(fs) == 2 and len(term) == 1 and set(term) == have and None not in next(iter(term))[1]
    return ok


def orders(program: Program, specs: dict, need: dict) -> tuple:
    out = []
    for op in program.ops:
        stmt, sp = _masked_stmt(op, need.get(op.out, P.TRUE), specs)
        n = len(op.stmt.out_indices)
        order, _ = choose_order(stmt, sp, Format([DENSE] * n) if n else None)
        out.append(tuple(order))
    return tuple(out)


# -- 3. iteration spaces ------------------------------------------------------------------------
def _iterator(spec, idx, var):
    """The sparse iterator driving ``var`` in an access: (its subscripts in storage order up to
    that level), or None when ``var`` is not at a compressed/singleton level."""
    if spec.dense:
        return None
    fmt = spec.format
    for l, m in enumerate(fmt.order):
        if idx[m] == var:
            if fmt.levels[l].is_dense:
                return None
            return tuple(idx[fmt.order[q]] for q in range(l + 1))
    return None


def space(op_pattern, mask, specs, var):
    """The DNF of sparse iterators driving a loop over ``var`` (TRUE: a dense loop), from the
    op's pattern and its mask."""
    pat = P.conj(op_pattern, mask)
    terms = set()
    for t in pat:
        kept = frozenset((vid, it) for vid, idx in t
                         for it in [_iterator(specs[vid], idx, var)] if it is not None)
        if not kept:
            return P.TRUE
        terms.add(kept)
    return P.disj(*[frozenset([t]) for t in terms]) if terms else P.TRUE


# -- 4. trie fusion -----------------------------------------------------------------------------
def _flow(program):
    """(a, b) op index pairs: b reads what a writes."""
    writer = {op.out: k for k, op in enumerate(program.ops)}
    return {(writer[v], b) for b, op in enumerate(program.ops) for v in op.args if v in writer}


def _successors(flow):
    """op index -> the ops that read what it writes (``flow`` as adjacency lists, so a walk
    over the program costs its edges, not its ops times each step)."""
    succ = {}
    for a, b in flow:
        succ.setdefault(a, []).append(b)
    return succ


def fuse(program: Program, order: tuple, spaces) -> tuple:
    """The fused index tree; ``spaces(k, var)`` gives op k's iteration space for ``var``."""
    flow = _flow(program)

    def aligned(a_ops, b_ops, var):
        """May a loop over ``var`` hold writers in one set and their readers in the other?
        Only if no writer sums over ``var``, and every reader subscripts the value with ``var``
        exactly where its writer does:
        then an iteration reads what the same iteration wrote. ``T_ij = A_ij * A_ij`` and
        ``sum_k T_ik D_jk`` both loop over j, but the reader wants T's whole row i at every j:
        sharing j read points not yet written (wrong values, found by the several-results
        property test)."""
        for w, r in ((w, r) for x, y in ((a_ops, b_ops), (b_ops, a_ops)) for w in x for r in y):
            if (w, r) not in flow:
                continue
            if var in program.ops[w].stmt.reduce_indices:
                # the writer sums over var: within the loop its value is a partial sum (the ReACT
                # paper's missed case, ``a = sum_i B_i; C_i = B_i / a`` must not fuse at i; shared
                # reduction names, compiler/plan/siblings.py, make it reachable here)
                return False
            wo = program.ops[w].stmt.out_indices
            for acc in program.ops[r].stmt.accesses:
                if program.ops[r].args[acc.operand] != program.ops[w].out:
                    continue
                if any((ix == var) != (wx == var) for ix, wx in zip(acc.indices, wo)):
                    return False
        return True
    return _fuse_level(list(range(len(program.ops))), 0, order, spaces, flow, aligned,
                       _successors(flow))


def _fuse_level(op_ids, depth, order, spaces, flow, aligned=lambda a, b, var: True, succ=None):
    succ = _successors(flow) if succ is None else succ
    # an item per op here: (its next loop's (var, space), or None for a statement), ops in it
    items = []
    for k in op_ids:
        head = (order[k][depth], spaces(k, order[k][depth])) if depth < len(order[k]) else None
        items.append([head, [k]])
    # Algorithm 1 over the items in topological (program) order: a later item joins an earlier
    # one with the same head when no other path between them exists (no cycle)
    def reaches(a_ops, b_ops, members):
        """Is there a path from a's ops to b's ops through an op of this level outside
        ``members``?"""
        targets = set(b_ops)
        frontier = [x for a in a_ops for x in succ.get(a, ()) if x in level and x not in members]
        seen = set()
        while frontier:
            x = frontier.pop()
            if x in seen:
                continue
            seen.add(x)
            nxt = succ.get(x, ())
            if any(y in targets for y in nxt):
                return True
            frontier += [y for y in nxt if y in level and y not in members and y not in seen]
        visits.count(len(seen))
        return False
    visits.count(len(items))
    all_ops = [k for it in items for k in it[1]]
    level = set(all_ops)
    groups = []
    for it in items:
        host = None
        if it[0] is not None:
            for g in groups:
                members = set(g[1]) | set(it[1])
                if g[0] == it[0] and not reaches(g[1], it[1], members) and \
                        not reaches(it[1], g[1], members) and aligned(g[1], it[1], g[0][0]):
                    host = g
                    break
        if host is None:
            groups.append([it[0], list(it[1])])
        else:
            host[1].extend(it[1])
    # emission: each group after the predecessors of all its members (topological over groups)
    placed, out = [], []
    pending = list(groups)
    while pending:
        for g in pending:
            if not any(_edge(h[1], g[1], flow) for h in pending if h is not g):
                break
        else:  # pragma: no cover - Algorithm 1 creates no cycle
            raise AssertionError("fusion created a dependence cycle")
        pending.remove(g)
        placed.append(g)
        if g[0] is None:
            out += [Compute(k) for k in sorted(g[1])]
        else:
            var, sp = g[0]
            out.append(Loop(var, sp, _fuse_level(sorted(g[1]), depth + 1, order, spaces, flow, aligned,
                                                 succ)))
    return tuple(out)


def _edge(a_ops, b_ops, flow):
    return any((a, b) in flow for a in a_ops for b in b_ops)


# -- 5. dimension reduction ---------------------------------------------------------------------
def _paths(tree):
    """op index -> the loops around its statement, outermost first."""
    out = {}

    def walk(nodes, path):
        for n in nodes:
            if isinstance(n, Compute):
                out[n.op] = path
            elif isinstance(n, Loop):
                walk(n.body, path + [n])
    walk(tree, [])
    return out


def reduce_dims(program: Program, tree: tuple, enabled: bool = True):
    """(tree with resets, {temp: kept variables}). Algorithm 3: the loops common to a
    temporary's definition and all its uses are dropped from its dimensions; it is reset
    first thing in the innermost of them. ``enabled=False``: every temporary keeps its full
    shape and is reset once, before the tree (the paper's toggle)."""
    paths = _paths(tree)
    kept, reset_at = {}, {}
    for k, op in enumerate(program.ops):
        if program.values[op.out].kind == INPUT or op.out in program.outputs:
            continue
        users = [u for u, o in enumerate(program.ops) if op.out in o.args]
        common = list(paths[k])
        for u in users:
            pu = paths[u]
            n = 0
            while n < min(len(common), len(pu)) and common[n] is pu[n]:
                n += 1
            common = common[:n]
        if not enabled:
            common = []
        drop = {lp.var for lp in common}
        kept[op.out] = tuple(ix for ix in op.stmt.out_indices if ix not in drop)
        if not op.stmt.reduce_indices:
            continue  # every kept point is assigned before it is read: nothing to reset
        if common:
            reset_at.setdefault(id(common[-1]), []).append(op.out)
        else:
            reset_at.setdefault(None, []).append(op.out)

    def walk(nodes):
        out = []
        for n in nodes:
            if isinstance(n, Loop):
                body = tuple(Reset(v) for v in reset_at.get(id(n), ())) + walk(n.body)
                out.append(Loop(n.var, n.space, body))
            else:
                out.append(n)
        return tuple(out)
    return tuple(Reset(v) for v in reset_at.get(None, ())) + walk(tree), kept


# -- the passes together ------------------------------------------------------------------------
# "association" (compiler/plan/associate.py) runs on the program before planning, not in here
PASSES = frozenset({"association", "masks", "fusion", "memory", "concordance"})


def plan_fusion(program: Program, input_specs: dict, mode: str = "auto", scalars=None,
                passes=PASSES) -> Plan:
    """The fused plan of a program. ``mode``: "auto" (the passes below) or "none" (every
    operation its own loop nest: no loop is shared). ``scalars``: the values of 0-d inputs
    (``A + 1`` is nonzero everywhere, ``A * 2`` only at A's pattern). ``passes``: which of
    "masks" (iteration-space propagation), "fusion" (shared loops) and "memory" (dimension
    reduction) run; each can be left out and the plan stays correct.

    The passes, in the paper's order:

    1. **Masks** (sparse iteration-space propagation, removes dead values): where each value is
       needed. A result asked for is needed everywhere; a temporary where some consumer can be
       nonzero with the temporary taken as anything (``B * T`` needs T at B's pattern, ``B + T``
       everywhere, ``B / T`` at B's: division intersects), and only where that consumer is itself
       needed. Unions over several consumers (the paper's Listing 6).
    2. **Loop orders** per operation: each sparse operand's levels in storage order, the mask's
       sparse operands included (a producer restricted to B's pattern walks B's levels),
       dense operands in their stride order (``compiler.plan.kernel.choose_order``). Temporaries
       are dense, row-major, until format inference decides otherwise.
    3. **Iteration spaces** per (operation, variable): the sparse levels that drive the loop over
       that variable, as a DNF over ``(value, subscripts)`` keys; a dense loop is ``TRUE``.
    4. **Trie fusion** (Algorithms 1 and 2): operations whose next loops are the same variable over
       the same space share that loop; only common prefixes fuse, so a reduction completes before
       its consumer. Groups never create a cycle (a member joins only when no other path leads to
       it), and a fused loop is placed after the predecessors of all its members. Legality rule 1
       of the paper (``a = sum_i B_i; C_i = B_i / a`` must not fuse at i) holds by construction:
       reduction variables are fresh per operation (``compiler.plan.decompose``), so a reduced loop is
       never the same variable as a loop of the value's readers.
    5. **Dimension reduction** (Algorithm 3): a temporary's dimensions that are loops around its
       definition and every use are dropped; it is reset at the start of the innermost such loop.
    """
    if "fusion" not in passes:
        mode = "none"
    specs = value_specs(program, input_specs)
    pats, tpat = op_patterns(program, specs, scalars=scalars)
    need = masks(program, specs, tpat, scalars) if "masks" in passes else {}
    order = orders(program, specs, need)
    memo = {}

    def spaces(k, var):
        if (k, var) not in memo:
            memo[(k, var)] = (space(pats[k], need.get(program.ops[k].out, P.TRUE), specs, var)
                              if mode == "auto" else (k,))
        return memo[(k, var)]
    tree = fuse(program, order, spaces)
    tree, kept = reduce_dims(program, tree, "memory" in passes)
    return Plan(program, order, need, tree, kept, dict(scalars or {}), tuple(pats))
