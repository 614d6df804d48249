"""Shared loops for sums (the read-read edges of "ReACT: Redundancy-Aware Code Generation for Tensor
Expressions", and sums of a temporary along the loop that writes it): ``share_reads`` renames
reduction variables so that trie fusion (``fusion.fuse``) can put a sum under a loop another
operation already runs, as a pure function ``Program -> Program``. Renaming an operation's own
reduction variables never changes what it computes, and the new names index the same modes of the
same value, so every name keeps one extent."""
from __future__ import annotations

from lazysparse.ir.nodes import Index, intern
from lazysparse.compiler.plan.decompose import _rename
from lazysparse.compiler.plan.program import Op, Program


def _closure(program: Program):
    """``reach[k]``: the ops that op k's result flows into, directly or not."""
    writer = {op.out: k for k, op in enumerate(program.ops)}
    reach = [set() for _ in program.ops]
    # consumers first (ops list producers before consumers), so reach[b] is complete when read
    for b in range(len(program.ops) - 1, -1, -1):
        for v in program.ops[b].args:
            a = writer.get(v)
            if a is not None:
                reach[a] |= {b} | reach[b]
    return reach


def _mapping(b_stmt, b_acc, like):
    """Renaming of ``b_stmt``'s reduction variables that makes ``b_acc`` read at subscripts
    ``like``, or None. Result variables and constants must already agree, and a new name must not be one
    that ``b`` keeps using (renaming is simultaneous: ``{k: j, j: k}`` is a swap)."""
    if len(b_acc.indices) != len(like):
        return None
    red = set(b_stmt.reduce_indices)
    ren = {}
    for bx, ax in zip(b_acc.indices, like):
        if bx in red and isinstance(ax, Index):
            if ren.setdefault(bx, ax) != ax:
                return None
        elif bx != ax:
            return None
    targets = list(ren.values())
    if all(k == v for k, v in ren.items()) or len(set(targets)) != len(targets):
        return None
    if any(t in b_stmt.out_indices or (t in red and t not in ren) for t in targets):
        return None
    return ren


def _candidates(program, b, reach, writer):
    """``(b's access, subscripts to read it like)`` pairs for op ``b``, best first: first the
    values ``b`` reads that an element-wise op writes, read at their writer's result variables
    (the row sum of ``E = expm1(A)`` in ``E / E.sum(axis=1)`` then shares the writer's loop
    and reads each entry as it is written); then the values an earlier independent op reads too, read at that op's
    subscripts."""
    op = program.ops[b]
    for acc in op.stmt.accesses:
        a = writer.get(op.args[acc.operand])
        # (not a writer that sums: its loop is a matrix product's, which runs faster as a
        # kernel of its own than with a sum of its result in the loop; ``(A @ x) ** 2`` summed
        # in A's row loop: 0.98 ms against 0.67 in two kernels, github-social)
        if a is not None and not program.ops[a].stmt.reduce_indices:
            yield acc, program.ops[a].stmt.out_indices
    for a in range(b):
        if b in reach[a] or a in reach[b]:
            continue
        other = program.ops[a]
        for acc in op.stmt.accesses:
            for acc_a in other.stmt.accesses:
                if other.args[acc_a.operand] == op.args[acc.operand]:
                    yield acc, acc_a.indices


def share_reads(program: Program) -> Program:
    """The program with each operation's reduction variables renamed after the result
    variables of a value's writer, or after an earlier independent operation that reads a
    common value (below), at the first of these that fits.

    Decomposition names a producer's result dimensions after its first consumer's access, which
    fuses producers with that consumer; reduction variables are fresh per operation. So two sums over
    one matrix (``A.sum()`` and ``(A != 0).sum()`` in a variance, a row sum and a row max) loop over
    differently named variables and never share a loop, and neither does the sum of ``E = expm1(A)``
    with the loop that writes ``E`` when ``E`` is also read elsewhere (``E / E.sum(axis=1)``). Fusion
    still decides legality (a sum used by the loop that reduces it, the ReACT paper's missed case, is
    not fused).
    """
    reach = _closure(program)
    writer = {op.out: k for k, op in enumerate(program.ops)}
    ops = list(program.ops)
    for b, op in enumerate(program.ops):
        if not op.stmt.reduce_indices:
            continue
        view = Program(program.values, tuple(ops), program.outputs)
        for acc, like in _candidates(view, b, reach, writer):
            ren = _mapping(op.stmt, acc, like)
            if ren is not None:
                ren.update((ix, ix) for ix in op.stmt.out_indices)
                ops[b] = Op(op.out, intern(_rename(op.stmt, ren)), op.args)
                break
    if all(x is y for x, y in zip(ops, program.ops)):
        return program
    return Program(program.values, tuple(ops), program.outputs)
