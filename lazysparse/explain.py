"""``explain``: what the compiler did for each node, and the C it generated."""
from __future__ import annotations


def _nodes(arrays):
    from .array import Array
    out, seen = [], set()
    stack = [a._node for a in arrays if isinstance(a, Array) and a._node is not None]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(c._node for c in n.children if c._node is not None)
    return list(reversed(out))


def explain(*arrays, fusion="auto") -> str:
    """Plan (and run) the arrays; describe every kernel: statement, formats, loop order,
    assembly, and the generated C.

    >>> import numpy as np, lazysparse as ls
    >>> A = ls.asarray(np.eye(3), format="csr")
    >>> "ls_kernel" in ls.explain(A @ np.ones(3))
    True
    """
    from .runtime.execute import check_options, compute_nodes, kernel_log
    check_options("explain", fusion=fusion)
    from .array import Array
    nodes = _nodes(arrays)
    roots = [a._node for a in arrays if isinstance(a, Array) and a._node is not None]
    with kernel_log() as log:
        compute_nodes(roots, fusion=fusion)
    from .runtime.fused import FusedRun
    fused = any(isinstance(e, FusedRun) for e in log)
    how = "fused kernels where the plan shares loops" if fusion == "auto" else "one kernel per operation"
    lines = [f"lazysparse plan: {len(nodes)} node(s), fusion={fusion!r} ({how})"]
    for k, n in enumerate(nodes):
        st = n.result
        fmt = f"format {st.format!r}" if st is not None else "computed inside a fused kernel (not stored)"
        lines.append(f"node {k}: {n.stmt!r}  shape={n.shape} dtype={n.dtype} -> {fmt}")
    for k, entry in enumerate(log):
        if isinstance(entry, FusedRun):
            lines += _fused_lines(k, entry)
            continue
        spec, runner = entry
        ins = ", ".join(f"T{j}:{s.format!r}/{s.dtype}/{s.index_dtype}" for j, s in enumerate(spec.inputs))
        lines.append(f"\nkernel {k}: {spec.stmt!r}")
        lines.append(f"  operands: {ins}")
        lines.append(f"  result: {spec.output.format!r} ({spec.output.index_dtype} indices), "
                     f"assembly {spec.mode}, loop order {', '.join(map(repr, spec.order))}")
        if runner.sites is not None:
            where = ", ".join(f"T{slot} level {lvl}" for slot, lvl, _, _ in runner.sites.sites)
            lines.append(f"  run-time schedule: innermost sums driven by {where} run as "
                         f"{'vector, ' if any(kv is not None for *_, kv in runner.sites.sites) else ''}"
                         f"split or plain loops, the fastest measured on the first calls with each "
                         f"operand (LAZYSPARSE_TUNE=0: chosen from row statistics)")
        lines.append(f"  signature: {runner.kernel.key}")
        lines.append(runner.source)
    if not log:
        lines.append("(every node was already materialized: no kernel ran)")
    return "\n".join(lines)


def _fused_lines(k, run):
    plan = run.plan
    prog = plan.program
    out = [f"\nkernel {k}: fused, {len(prog.ops)} operations in one loop nest"]
    out += [f"  S{j}: {op!r}" for j, op in enumerate(prog.ops)]
    out.append("  loops: " + repr(plan))
    temps = [f"v{vid}[{', '.join(map(repr, kept))}] (dense)" for vid, kept in plan.temp_dims.items()]
    if temps:
        out.append("  temporaries: " + "; ".join(temps))
    out.append("  result: " + (f"the pattern and format of v{run.like}" if run.like is not None else "dense"))
    out.append(f"  signature: {run.kernel.key}")
    out.append(run.kernel.source)
    return out


def opcount(*arrays, fusion="auto") -> dict:
    """Scalar operations executed (instrumented kernels): arrives with the fusion work."""
    raise NotImplementedError("opcount: instrumented kernels arrive with redundancy-aware fusion (issue 3)")
