"""Format of a lazy array's result, inferred without computing anything."""
from __future__ import annotations

import numpy as np

from lazysparse.formats import resolve_format
from lazysparse.compiler.plan import kernel as PL


def _density(arr):
    if arr._storage is not None or (arr._node is not None and arr._node.result is not None):
        st = arr.storage
        return 1.0 if st.format.is_dense else st.nnz / max(1.0, float(np.prod(st.shape, dtype=np.float64)))
    fmt = arr.format
    return 1.0 if fmt.is_dense else 0.1  # no estimate for an unplanned sparse intermediate yet


def infer_node_format(node):
    if node.format is not None:
        return resolve_format(node.format, len(node.shape))
    specs = []
    for c in node.children:
        fmt = c.format
        specs.append(PL.OperandSpec(fmt, str(c.dtype), "int64", tuple(range(c.ndim)) if fmt.is_dense else ()))
    specs = tuple(specs)
    stmt = node.stmt
    ext = {ix: n for ix, n in zip(stmt.out_indices, node.shape)}
    from lazysparse.ir.nodes import Index, accesses_of
    for a in accesses_of(stmt.expr):
        for ix, n in zip(a.indices, node.children[a.operand].shape):
            if isinstance(ix, Index):
                ext.setdefault(ix, n)
    scalars = [c.storage.vals[()] if c.ndim == 0 and not c.is_lazy else None for c in node.children]
    from lazysparse.compiler.plan import patterns as P
    _, decisions = P.expr_pattern(stmt.expr, lambda a, q: None,
                                  lambda a: scalars[a.operand], None)
    fmt = PL.infer_format(stmt, specs, [_density(c) for c in node.children], ext, len(node.shape), decisions)
    if fmt is None:
        order, _ = PL.choose_order(stmt, specs, None)
        fmt = PL._default_sparse(order, list(stmt.out_indices))
    return fmt
