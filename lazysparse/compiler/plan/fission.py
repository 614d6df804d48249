"""Union fission: a sum of sparse terms assembled through a row workspace instead of a merge.

A statement ``out[i,j] = T1 + T2 - T3 + ...`` whose terms are each nonzero only on their own
operands' entries can be computed by the workspace of "Compilation of Modular and General Sparse
Workspaces" with one loop per term: for each row, every term's loop inserts its entries into a
workspace keyed by ``j`` (duplicates add), and the workspace drains the row in order. A k-way merge
instead advances k cursors with a data-dependent branch per entry; on random patterns those branches
mispredict about once an entry, and the merge's loop-carried chain (load a coordinate, take the
minimum, advance) is longer than a scatter's, which has none (docs/design.md, "Assembly modes", its
union fission paragraph, for the timings that set ``MIN_TERMS``).

This module decides where fission applies and where each term sits in the statement's walk
order (its first access and its first ``f(0)`` decision), so that the lowerer can emit each
term with the statement's own numbering. Pure functions of the statement and operand specs.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lazysparse.ir.nodes import Call, accesses_of
from lazysparse.compiler.plan import patterns as P

#: fewest terms worth a workspace: two terms merge faster (one compare an entry, well predicted
#: on banded inputs); with three the scatter won on 22 of 24 corpus matrices
MIN_TERMS = 3

_SPINE = ("add", "subtract", "negative")


class Term(NamedTuple):
    q0: int        # the term's first access, in the statement's access order
    n: int         # how many accesses it has
    d0: int        # its first f(0) decision, in the statement's decision order
    sign: int      # +1 or -1 (under subtract / negative on the spine)
    expr: object   # the term itself


def terms(stmt, specs, out_fmt, decisions) -> tuple | None:
    """The additive terms of ``stmt`` when union fission applies to it, else None.

    It applies when the result is sparse with dense levels then one unique compressed level
    (CSR-like), the statement has no reduction and a numeric (not bool) dtype, its top is a
    chain of ``+``/``-`` computed in the result's dtype (no cast on the chain: a workspace
    adds in that dtype, as the chain does), and there are at least ``MIN_TERMS`` terms, each
    nonzero only on one intersection of sparse operands that are themselves CSR-like over the
    result's indices (so the loops outside the workspace are plain ranges)."""
    if stmt.reduce_indices or out_fmt is None or not csr_like(out_fmt):
        return None
    dt = np.dtype(stmt.dtype)
    if dt.kind not in "iufc":
        return None
    found = []
    if _walk(stmt.expr, stmt.dtype, 0, 0, 1, found) is None or len(found) < MIN_TERMS:
        return None
    outs = set(stmt.out_indices)
    for t in found:
        for acc in accesses_of(t.expr):
            sp = specs[acc.operand]
            if sp.dense:
                continue
            if set(acc.indices) != outs or len(acc.indices) != len(outs) or not csr_like(sp.format):
                return None
        pat, _ = P.expr_pattern(t.expr, lambda acc, q: None if specs[acc.operand].dense else q,
                                lambda acc: None, decisions[t.d0:])
        if pat == P.TRUE or len(pat) != 1:
            return None  # dense somewhere, empty, or itself a union: not one term's entries
    return tuple(found)


def csr_like(fmt) -> bool:
    lv = fmt.levels
    return (len(lv) >= 1 and all(l.is_dense for l in lv[:-1])
            and lv[-1].unique_segments)


def _walk(e, dtype, q, d, sign, found):
    """Collect the terms under the +/- chain rooted at ``e``; returns the (access, decision)
    counts after ``e`` in walk order (patterns.expr_pattern's: accesses left to right,
    decisions after their node's arguments), or None when the chain has a cast."""
    if isinstance(e, Call) and e.op in _SPINE:
        if e.dtype != dtype or any(t != dtype for t in e.in_dtypes):
            return None
        signs = (-sign,) if e.op == "negative" else (sign, -sign if e.op == "subtract" else sign)
        for arg, s in zip(e.args, signs):
            r = _walk(arg, dtype, q, d, s, found)
            if r is None:
                return None
            q, d = r
        return q, d + 1  # the chain node's own decision (add/subtract/negative are "eval")
    n = len(accesses_of(e))
    nd = len(P.expr_pattern(e, lambda acc, k: None, lambda acc: None)[1]) if isinstance(e, Call) else 0
    found.append(Term(q, n, d, sign, e))
    return q + n, d + nd
