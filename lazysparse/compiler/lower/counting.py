"""Instrumented builds for ``ls.opcount``: the same lowering, with one counting line per
executed statement (``count_stmts``), so the counts are those of the kernels that run; the
printer declares the counters (compiler/codegen/c/support.py)."""
from __future__ import annotations

from lazysparse.ir.nodes import Call
from lazysparse.compiler.loopir import expr as E
from lazysparse.compiler.loopir import stmt as S

# the counters: ``mul, add, div, other, temporary loads``, then one load counter per operand slot
MUL, ADD, DIV, OTHER, TEMP = range(5)
FIRST_SLOT = 5
N_COUNTERS = 512  # operand slots up to FIRST_SLOT + 507

KIND = {"multiply": MUL, "add": ADD, "subtract": ADD, "divide": DIV}
REDUCE_KIND = {"sum": ADD, "prod": MUL, "max": OTHER, "min": OTHER}
NAMES = ("mul", "add", "div", "other")


def expr_ops(expr, hoisted=None) -> list:
    """Operations of one evaluation of ``expr``, by kind (casts are free). The branches of a
    ``where`` are not included: only the branch taken runs, and counts itself (``E.Counted``).
    Nor are the calls ``hoisted(call)`` says are computed once before the loops (counted there)."""
    out = [0, 0, 0, 0]

    def walk(e):
        if isinstance(e, Call) and not (hoisted is not None and hoisted(e)):
            if e.op != "cast":
                out[KIND.get(e.op, OTHER)] += 1
            for a in (e.args[:1] if e.op == "where" else e.args):
                walk(a)
    walk(expr)
    return out


def slot(k: int) -> int:
    if FIRST_SLOT + k >= N_COUNTERS:
        raise NotImplementedError(f"opcount: more than {N_COUNTERS - FIRST_SLOT} operands in one kernel")
    return FIRST_SLOT + k


def count_stmts(ops, loads, reduce=None):
    """The counting line: ``ops`` by kind, ``reduce`` (a reduction folding the value in, or
    None), ``loads``: ``(counter, expression of how many)`` per access; one ``Tally`` per
    counter that moves, on one line; None when none moves.

    A lowerer asked to count (``count=True``) emits this right before each statement that
    evaluates the expression at a loop point: the statement's scalar operations by kind, and
    one element load per operand access (a sparse access whose presence is tested adds the
    test's 0/1, so a load that does not happen is not counted). Nothing else in the kernel
    changes: stripping those lines from the counting source gives the normal source
    (tests/compiler/plan/test_opcount.py checks it). The one exception is inside an expression:
    each branch of a ``where`` is wrapped as ``(LS_COUNT(kind, n), branch)`` (``E.Counted``), so
    only the branch taken counts its operations (loads are counted per statement). A counting
    build is never tuned: its run-time schedule flags stay 0, so it runs the plain scalar loops
    (the vector and split variants do the same operations in another order). Updates are
    relaxed atomics, so a parallel kernel counts right too."""
    ops = list(ops)
    if reduce is not None:
        ops[REDUCE_KIND[reduce]] += 1
    adds = [S.Tally(k, E.Int(n)) for k, n in enumerate(ops) if n]
    adds += [S.Tally(k, E.var(n)) for k, n in loads]
    return S.Inline(tuple(adds)) if adds else None


# tests/compiler/plan/test_opcount.py strips the counters' declarations from an
# instrumented source by this text; the printer's copy is compiler/codegen/c/support.py
# COUNTERS (tests/compiler/loopir checks they agree).
PRELUDE = (
    f"int64_t ls_cnt[{N_COUNTERS}];\n"
    "int64_t *ls_counters(void) { return ls_cnt; }\n"
    "#define LS_COUNT(k, n) __atomic_fetch_add(&ls_cnt[k], (int64_t)(n), __ATOMIC_RELAXED)\n"
)
