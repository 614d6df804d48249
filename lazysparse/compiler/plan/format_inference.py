"""Format of a lazy array's result, inferred without computing anything: the DAG is walked once,
children first, each node's format and an estimate of its density inferred from its children's
(a concrete operand's density is its own; an intermediate's is estimated from its pattern, as the
density rule estimates a product's, where a first guess of 0.1 for every intermediate had called
a very sparse row sum dense), and a bound on its nonzeros (``nnz_bounds``: its pattern's points
over its operands' entries)."""
from __future__ import annotations

import math

from lazysparse.formats import resolve_format
from lazysparse.compiler.plan import kernel as PL
from lazysparse.compiler.plan import patterns as P
from lazysparse.ir.nodes import Index, accesses_of


def _concrete(arr):
    """``(format, density)`` of a concrete operand (or a value computed already), else None."""
    st = arr._storage if arr._storage is not None else arr._node.result
    if st is None:
        return None
    if st.format.is_dense:
        return st.format, 1.0
    return st.format, st.nnz / max(1.0, float(math.prod(st.shape)))


def _one(node, kids):
    """``(format, density)`` of ``node`` from ``kids``, its children's."""
    stmt = node.stmt
    specs = tuple(PL.OperandSpec(fmt, str(c.dtype), "int64", tuple(range(c.ndim)) if fmt.is_dense else ())
                  for c, (fmt, _) in zip(node.children, kids))
    ext = {ix: n for ix, n in zip(stmt.out_indices, node.shape)}
    accs = accesses_of(stmt.expr)
    for a in accs:
        for ix, n in zip(a.indices, node.children[a.operand].shape):
            if isinstance(ix, Index):
                ext.setdefault(ix, n)
    decisions = _decisions(node)
    dens = [d for _, d in kids]
    pat, _ = P.expr_pattern(stmt.expr, lambda a, q: None if specs[a.operand].dense else q,
                            lambda a: None, decisions)
    d = P.estimate_density(pat, lambda q: dens[accs[q].operand])
    red = set(stmt.reduce_indices)
    # a sum over dense factors only (SDDMM as one einsum, sum_k A_ij U_ik V_jk): the driver
    # pushes the sum in (decompose's split), so the pattern is the sparse factors', not spread
    # over k, and the result mirrors one of them
    summed = bool(red) and any(set(a.indices) & red for a in accs if not specs[a.operand].dense)
    mirror = PL.mirror_format(stmt, accs, specs, pat) if red and not summed and pat != P.TRUE else None
    if node.format is not None:
        fmt = resolve_format(node.format, len(node.shape))
    elif mirror is not None:
        fmt = mirror
    else:
        fmt = PL.infer_format(stmt, specs, dens, ext, len(node.shape), decisions)
        if fmt is None:
            order, _ = PL.choose_order(stmt, specs, None)
            fmt = PL._default_sparse(order, list(stmt.out_indices))
    if summed and d < 1.0:
        d = 1.0 - (1.0 - d) ** math.prod(max(ext[r], 1) for r in red)
    return fmt, min(d, 1.0)



def infer_formats(nodes) -> dict:
    """id(node) -> ``(format, density estimate)`` for every uncomputed node under ``nodes``,
    each inferred once (a DAG with sharing is walked as a DAG, never as a tree)."""
    from lazysparse.compiler.plan.cuts import lazy_order
    out = {}
    for n in lazy_order(nodes):
        kids = []
        for c in n.children:
            k = _concrete(c)
            kids.append(k if k is not None else out[id(c._node)])
        out[id(n)] = _one(n, kids)
    return out


def infer_node_format(node):
    """The format ``node``'s result is expected to have."""
    if node.result is not None:
        return node.result.format
    return infer_formats([node])[id(node)][0]


def _decisions(node):
    """The pattern decisions (``patterns.expr_pattern``) of ``node``'s statement, its computed
    0-d operands read at their values (a lazy one as unknown)."""
    scalars = [c.storage.vals[()] if c.ndim == 0 and not c.is_lazy else None for c in node.children]
    return P.expr_pattern(node.stmt.expr, lambda a, q: None, lambda a: scalars[a.operand], None)[1]


def nnz_bounds(nodes) -> dict:
    """id(node) -> an upper bound on the nonzeros of its result, for every uncomputed node under
    ``nodes`` (one walk, children first): the points of the statement's pattern
    (``patterns.bound_count``) over its operands' bounds, a concrete operand's being its stored
    entries (every element of a dense one). Whatever format the result takes, it stores no
    more entries than this where it is sparse (computed zeros are not stored)."""
    from lazysparse.compiler.plan.cuts import lazy_order
    out = {}
    for n in lazy_order(nodes):
        stmt = n.stmt
        accs = accesses_of(stmt.expr)
        kids = [_stored(c) if _stored(c) is not None else out[id(c._node)] for c in n.children]
        pat, _ = P.expr_pattern(stmt.expr, lambda a, q: q, lambda a: None, _decisions(n))
        full = math.prod(n.shape)
        out[id(n)] = P.bound_count(
            pat, lambda q: kids[accs[q].operand], full,
            lambda q: frozenset(ix for ix in accs[q].indices if isinstance(ix, Index)),
            frozenset(stmt.out_indices))
    return out


def _stored(arr):
    """The stored entries of a concrete operand (or a value computed already), else None."""
    st = arr._storage if arr._storage is not None else arr._node.result
    return None if st is None else st.nnz
