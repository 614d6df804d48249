"""``explain``: what the compiler did for each node, and the C it generated."""
from __future__ import annotations


def _nodes(arrays):
    from lazysparse.array import Array
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


def explain(*arrays, fusion="auto", schedule=None, code=True) -> str:
    """Plan (and run) the arrays; describe every kernel: statement, formats, loop order,
    assembly, and the generated C (``code=False``: the plan without the C).

    >>> import numpy as np, lazysparse as ls
    >>> A = ls.asarray(np.eye(3), format="csr")
    >>> "ls_kernel" in ls.explain(A @ np.ones(3))
    True
    """
    from lazysparse.compiler.pipeline import check_options, compute_nodes, kernel_log
    from lazysparse.compiler.plan import skew
    check_options("explain", fusion=fusion, schedule=schedule)
    from lazysparse.array import Array
    nodes = _nodes(arrays)
    roots = [a._node for a in arrays if isinstance(a, Array) and a._node is not None]
    orders = []
    cuts = ()
    if fusion == "auto":  # before computing: a computed node has no DAG left to describe
        from lazysparse.compiler.fused_pipeline import reordered
        orders = [r for r in map(reordered, roots) if r is not None]
    if fusion != "none" and schedule is None:
        from lazysparse.compiler.plan.cuts import cut_points
        cuts = cut_points(roots)
    with kernel_log() as log:
        compute_nodes(roots, fusion=fusion, schedule=schedule)
    from lazysparse.compiler.fused_pipeline import FusedRun
    fused = any(isinstance(e, FusedRun) for e in log)
    how = {"auto": "fused kernels where the plan shares loops", "max": "every temporary substituted into its "
           "consumers where one statement can express it", "none": "one kernel per operation"}[fusion]
    lines = [f"lazysparse plan: {len(nodes)} node(s), fusion={fusion!r} ({how})"]
    for k, n in enumerate(nodes):
        st = n.result
        fmt = f"format {st.format!r}" if st is not None else ("not stored (computed inside a fused kernel, or reordered away: "
                                                      "see the kernels' statements)")
        lines.append(f"node {k}: {n.stmt!r}  shape={n.shape} dtype={n.dtype} -> {fmt}")
        for j, c in enumerate(n.children):
            label = (c._storage.stats or {}).get("window_of") if c._storage is not None else None
            if label:
                lines.append(f"  T{j}: the window of {label}, {c._storage.format!r} "
                             f"(affine subscripts, lazysparse/api/affine.py)")
    if cuts:
        from lazysparse.compiler.plan.cuts import REASONS
        number = {id(n): k for k, n in enumerate(nodes)}
        lines.append(f"\nregions: {len(cuts)} node(s) computed first, each planned on its own "
                     "(compiler/plan/cuts.py)")
        lines += [f"  node {number[id(c.node)]}: {c.reason}, {REASONS[c.reason]}" for c in cuts]
        cuts = None  # (a cut node's value lives while something else holds it)
    for written, chosen in orders:
        lines.append("\nassociation: the chain runs in a cheaper order than written (compiler/plan/associate.py)")
        lines += ["  as written: " + ln.strip() for ln in repr(written).splitlines()[1:]]
        lines += ["  computed:   " + ln.strip() for ln in repr(chosen).splitlines()[1:]]
    for k, entry in enumerate(log):
        if isinstance(entry, FusedRun):
            lines += _fused_lines(k, entry, code)
            continue
        spec, runner = entry
        ins = ", ".join(f"T{j}:{s.format!r}/{s.dtype}/{s.index_dtype}" for j, s in enumerate(spec.inputs))
        lines.append(f"\nkernel {k}: {spec.stmt!r}")
        lines.append(f"  operands: {ins}")
        lines.append(f"  result: {spec.output.format!r} ({spec.output.index_dtype} indices), "
                     f"assembly {spec.mode}, loop order {', '.join(map(repr, spec.order))}")
        if spec.loops is not None:
            lines.append("  " + _loops_line(spec.loops))
            if schedule is None:
                lines.append("  (the autoscheduler's nonzero tiles: the longest row holds at least "
                             f"{skew.SKEW_TILES:g} of a thread's share of the entries; compiler/plan/skew.py)")
        if spec.mode.startswith("ws-"):
            lines.append("  " + _workspace_line(spec, runner))
        elif spec.mode == "mask":
            from lazysparse.compiler.plan.workspace import spec_mask
            from lazysparse.ir.nodes import accesses_of
            q = spec_mask(spec)
            m = accesses_of(spec.stmt.expr)[q]
            lines.append(f"  workspace: none; every result entry is an entry of T{m.operand} (a mask), so "
                         f"the sums accumulate at its positions in a copy of its structure, and the "
                         f"entries left zero are squeezed out at the end (compiler/plan/workspace.py)")
        elif spec.mode == "map":
            from lazysparse.compiler.plan.workspace import map_access
            from lazysparse.ir.nodes import accesses_of
            m = accesses_of(spec.stmt.expr)[map_access(spec.stmt, spec.inputs, spec.output.format,
                                                        spec.decisions)]
            lines.append(f"  every result entry is a stored entry of T{m.operand}: its structure is "
                         f"copied and one value computed per entry, in one pass over its positions "
                         f"where nothing else reads the coordinates; computed zeros, if any were "
                         f"counted, are squeezed out at the end (compiler/plan/workspace.py map_access)")
        if "#define ls_fail ls_tfail" in runner.source:  # (compiler/lower/parallel.py emit_par_rows)
            lines.append("  threads: the rows in chunks on the team (ls.set_num_threads; one thread "
                         "under the work threshold or for a result over 64 MiB), each thread "
                         "appending to buffers of its own, kept for the next call, copied in row "
                         "order after")
        if "ls_o0" in runner.source:  # (compiler/lower/parallel.py emit_private)
            lines.append("  threads: the outer loop's reduction on the team (ls.set_num_threads; one "
                         "thread under the work threshold, or for a result of half the work or "
                         "more), each thread a static share of it summed into a private copy of "
                         "the result, the copies added in thread order after")
        if runner.sites is not None and hasattr(runner.sites, "slots"):  # tuning.Flags
            lines.append("  run-time schedule: each row's products summed into a dense row, or "
                         "the mask probed per product, the faster measured on the first calls with "
                         "each operand (LAZYSPARSE_TUNE=0: the probe)")
        elif runner.sites is not None:
            where = ", ".join(f"T{slot} level {lvl}" for slot, lvl, _, _ in runner.sites.sites)
            lines.append(f"  run-time schedule: innermost sums driven by {where} run as "
                         f"{'vector, ' if any(kv is not None for *_, kv in runner.sites.sites) else ''}"
                         f"split or plain loops, the fastest measured on the first calls with each "
                         f"operand and, for a short kernel, again over its next calls once each "
                         f"loop has run a few hundred times in a row (LAZYSPARSE_TUNE=0: chosen "
                         f"from row statistics)")
        lines.append(f"  signature: {runner.kernel.key}")
        if code:
            lines.append(runner.source)
    if not log:
        lines.append("(every node was already materialized: no kernel ran)")
    return "\n".join(lines)


def _loops_line(plan):
    """A schedule's loops as the kernel runs them (compiler/plan/loops.py)."""
    par = f"; {plan.parallel[0]} on threads ({plan.parallel[1]})" if plan.parallel else ""
    vec = f"; {', '.join(plan.vector)} on vector lanes" if plan.vector else ""
    tiles = (f"; {plan.tiles.outer} runs tiles of {plan.tiles.factor} stored entries"
             if plan.tiles is not None else "")
    # coordinate splits get a guarded tail clone; position splits clamp their chunk's end
    cloned = sorted(g for g in plan.guarded if any(rel.parent == g for _, rel in plan.splits))
    guards = f"; guarded tail clones for {', '.join(cloned)}" if cloned else ""
    return f"schedule: {plan.text}; loops {', '.join(plan.nest)}" + tiles + par + vec + guards


def _workspace_line(spec, runner):
    """Which workspace assembles a scattered result, over which levels, and why."""
    from lazysparse.compiler.plan.workspace import hoisted, ordering, outside, storage_vars
    ovars = storage_vars(spec.stmt, spec.output.format)
    h = outside(spec.order, ovars)
    kept = ", ".join(map(repr, ovars[h:]))
    out = ", ".join(map(repr, ovars[:h]))
    if hoisted(spec.order, ovars) == len(ovars):
        what = "a sum of sparse terms, one loop per term (union fission, compiler/plan/fission.py)"
    else:
        what = (f"sparse scattering of order {ordering(spec.order, ovars, spec.stmt.reduce_indices)} "
                '("Compilation of Modular and General Sparse Workspaces")')
    return (f"workspace: {what}; levels {kept} in a {spec.mode[3:]!r} accumulation array"
            + (f", flushed after each {out}" if h else ", flushed once at the end")
            + f": {getattr(runner, 'ws_why', '')}")


def _fused_lines(k, run, code=True):
    plan = run.plan
    prog = plan.program
    out = [f"\nkernel {k}: fused, {len(prog.ops)} operations in one loop nest"]
    out += [f"  S{j}: {op!r}" for j, op in enumerate(prog.ops)]
    out.append("  loops: " + repr(plan))
    ext = prog.extents()
    by_pos = getattr(run.abi, "sparse_temps", {})
    temps = [f"v{vid}[{', '.join(map(repr, kept))}] " +
             (f"(length of the longest segment of v{by_pos[vid][0]}, by position in it)" if vid in by_pos
              else f"(dense, shape {tuple(int(ext[ix]) for ix in kept)})")
             for vid, kept in plan.temp_dims.items()]
    if temps:
        out.append("  temporaries: " + "; ".join(temps))
    out.append("  result: " + (f"the pattern and format of v{run.like}" if run.like is not None else "dense"))
    if "ls_o0" in run.kernel.source:  # (compiler/lower/fused.py parallel_loop: private copies)
        out.append("  threads: the loop, which only the result's operation sums over, in static "
                   "chunks on the team (ls.set_num_threads), each thread summing into a private "
                   "copy of the result, the copies added in thread order after")
    out += _order_lines(run)
    out.append(f"  signature: {run.kernel.key}")
    if code:
        out.append(run.kernel.source)
    return out


def _order_lines(run):
    """Which rows the kernel's loops visited in order of length (runtime/row_order.py): the
    order its last call was passed (the argument arrays it put back), or none."""
    from lazysparse.runtime.kernel_cache import ffi
    slots = [(k, desc[1]) for k, desc in enumerate(run.abi.p) if desc[2:3] == ("order",)]
    pool = getattr(run.fixed, "pool", None)
    if not slots or not pool:
        return []
    p = pool[-1][0]
    return [f"  rows of v{vid}: " + ("in order of length, a block of rows at a time (their lengths are hard "
                                     "for the branch predictor to tell: runtime/row_order.py)" if p[k] != ffi.NULL
                                     else "in stored order (their lengths repeat, or they are few or long)")
            for k, vid in slots]


def opcount(*arrays, fusion="auto", names=None) -> dict:
    """Scalar operations and element loads that computing ``arrays`` executes, counted by an
    instrumented build of the very kernels ``materialize``/``compute`` run (compiler/lower/counting.py).

    Returns ``{"mul", "add", "div", "other": int, "loads": {name: int}, "temp_loads": int,
    "kernels": int}``. A reduction counts one operation per term it folds in; casts are free.
    ``loads`` is per concrete operand, named by ``names`` (``{name: array}``) or else ``x0``,
    ``x1``, ... in the order the expression first reads them; ``temp_loads`` are the loads of
    intermediates (stored or a fused kernel's temporaries). The arrays are computed on a copy
    of their DAG: they stay lazy. A value computed before and kept (a lazy array the program
    held, compiler/plan/cuts.py) is read as an operand, as the next kernel reads it.

    >>> import numpy as np, lazysparse as ls
    >>> b = ls.asarray(np.arange(4.0))
    >>> c = ls.opcount(3.0 * ls.sum(b), names={"b": b})
    >>> c["mul"], c["add"], c["loads"]["b"]
    (1, 4, 4)
    """
    from lazysparse.array import Array
    from lazysparse.compiler import opcount as counting
    from lazysparse.compiler.pipeline import check_options, compute_nodes
    check_options("opcount", fusion=fusion)
    label = {}
    for nm, arr in (names or {}).items():
        if not isinstance(nm, str) or not isinstance(arr, Array) or arr._node is not None:
            raise TypeError(f"opcount: names must map str to concrete arrays, got {nm!r}: "
                            f"{type(arr).__name__}{' (lazy)' if isinstance(arr, Array) else ''}")
        label[id(arr._storage)] = nm
    roots, leaves = _copy_dag([a for a in arrays if isinstance(a, Array)])
    unnamed = [st for st in leaves if id(st) not in label]
    label.update((id(st), f"x{k}") for k, st in enumerate(unnamed))
    with counting.session() as t:
        compute_nodes(roots, fusion=fusion)
        temp = t.temp + sum(n for sid, n in t.loads.items() if sid not in label)
        loads = {label[sid]: n for sid, n in t.loads.items() if sid in label}
        out = dict(zip(("mul", "add", "div", "other"), t.ops))
        out.update(loads=loads, temp_loads=temp, kernels=t.kernels)
    return out


def _copy_dag(arrays):
    """Fresh lazy nodes for the DAGs of ``arrays`` (results not reused; children shared as in
    the original) and the concrete storages they read, left to right as written."""
    from lazysparse.array import Array
    from lazysparse.ir.dag import Node
    leaves, seen = [], set()
    stack = list(reversed(arrays))
    while stack:  # (each node once: a DAG walked as a tree has exponentially many paths)
        a = stack.pop()
        if a._node is None:
            if id(a._storage) not in seen:
                seen.add(id(a._storage))
                leaves.append(a._storage)
        elif id(a._node) not in seen:
            seen.add(id(a._node))
            stack += reversed(a._node.children)
    new = {}
    stack = [(a._node, False) for a in reversed(arrays) if a._node is not None]
    while stack:
        n, done = stack.pop()
        if id(n) in new:
            continue
        if not done:
            stack.append((n, True))
            stack += [(c._node, False) for c in reversed(n.children) if c._node is not None]
            continue
        kids = [c if c._node is None else Array._from_node(new[id(c._node)]) for c in n.children]
        new[id(n)] = Node(n.stmt, tuple(kids), n.shape, n.dtype, n.format)
    return [new[id(a._node)] for a in arrays if a._node is not None], leaves
