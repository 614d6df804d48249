"""Running a whole lazy DAG as one fused kernel: decompose, plan, lower, compile, run.
``try_fused(roots)`` returns the result storage of each root, or None when the DAG is a single
operation; a plan that shares no loop, or needs a construct ``compiler/lower/fused.py`` does not
emit, runs one kernel per operation of the decomposed program instead, so every path computes the
same values and fusion is purely an optimisation. Plans are cached by the program and the operand
specs, kernels by their source, so a repeated expression plans and compiles once."""
from __future__ import annotations

import math
import sys
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from lazysparse.formats import Storage
from lazysparse.compiler import stages
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler.plan.associate import associate
from lazysparse.compiler.plan.dag_key import CUTS, dag_walk, fresh, nnz_bucket
from lazysparse.compiler.plan import promise
from lazysparse.compiler.plan.decisions import decisions, probe_item
from lazysparse.compiler.plan.decompose import decompose
from lazysparse.compiler.plan.fusion import Loop, plan_fusion
from lazysparse.compiler.plan.fusion import PASSES, folds_into_reader, masked_program
from lazysparse.compiler.plan.inline import cheap_scalars, elementwise, inline, tiny
from lazysparse.compiler.plan.kernel import _scalar_value, operand_spec
from lazysparse.compiler.plan.siblings import share_reads
from lazysparse.runtime import aligned, glue, kernel_cache, memory
from lazysparse.runtime.progress import timed
from lazysparse.compiler import opcount as counting
from lazysparse.compiler.runner import POISON, _poisoned
from lazysparse.compiler import statement as execute_statement
from lazysparse.compiler.statement import _BOUND, GUARD_MIN, convert_storage
from lazysparse.compiler.plan.passes import ACTIVE

_PLANS = {}  # (program, input specs, 0-d values) -> (plan, kernel, abi, (like, _Fixed)), or
#   (None, program, None, scratch pool): run the program one kernel per operation (_run_ops)
_MAX_PLANS = 1024
# held while a program is planned and its fused kernel built (a miss of _PLANS only), so that
# threads making the first calls of one program at once build it once and share its argument
# pool (planning and lowering run no kernel, so nothing under it waits for this lock). The
# other caches here are filled without a lock: their entries are pure functions of their keys,
# and a dict's get and set are atomic (compiler/pipeline.py)
_BUILD_LOCK = threading.Lock()
RUNS = [0]  # fused kernels run in this process (tests check that a plan took this path; a
#             statistic: threads racing on ``+= 1`` may lose an increment)


class FusedRun(NamedTuple):
    """A kernel log entry (``execute.kernel_log``) for a fused kernel."""
    plan: object
    kernel: object
    like: object  # the input whose structure the result takes, or None
    abi: object   # the kernel's p[]/d[] slots
    fixed: object = None  # its _Fixed (the call's argument arrays: ``fixed.pool``)


def _shares_loops(tree) -> bool:
    """Does some loop of the fused tree hold more than one operation?"""
    def ops_under(n):
        if isinstance(n, Loop):
            return [k for c in n.body for k in ops_under(c)]
        return [n.op] if hasattr(n, "op") else []
    return any(isinstance(n, Loop) and len(ops_under(n)) > 1 for n in _walk(tree))


def _walk(nodes):
    for n in nodes:
        yield n
        if isinstance(n, Loop):
            yield from _walk(n.body)


def _densities(inputs):
    """{input value id: density} from the nonzero buckets (association's cost model)."""
    out = {}
    for vid, st in inputs.items():
        b = nnz_bucket(st)
        size = float(np.prod(st.shape, dtype=np.float64))
        if b and size:
            out[vid] = min(1.0, (1 << (b - 1)) / size)
        elif not st.is_dense:
            out[vid] = 0.0
    return out


def _associated(roots, prog, inputs):
    """The program to plan for the DAG of the nodes ``roots``: ``prog`` (decomposed as written) or, with the
    "association" pass on, its chains in the order compiler/plan/associate.py picks."""
    if "association" not in _PASSES[0]:
        return prog
    return associate(decompose(roots, split=False)[0], prog, _densities(inputs))


def reordered(node):
    """``(as written, as computed)`` programs of a lazy node's DAG when the association pass
    reorders it under ``fusion="auto"``, else None (``explain`` shows it). A computed node has
    no DAG left: None."""
    if node.result is not None:
        return None
    prog, _, inputs = decompose([node])
    if len(prog.ops) < 2:
        return None
    chosen = _associated([node], prog, inputs)
    return None if chosen is prog else (prog, chosen)


_SKIP = {}  # DAG key -> the statements it names: a single operation, run by compute_nodes
_FAST = {}  # DAG key -> (0-d probe, {decisions: (plan entry, storage number per input value id,
#             statements, ...)}, {0-d values' bytes: decisions}); a plan entry of (None, program)
#             runs the program one kernel per operation. The key holds no 0-d value, the
#             decisions what the plan reads of them


class CheckCuts(NamedTuple):
    """``try_fused``'s answer for a DAG it has not planned: the driver looks for cut points
    first (compiler/plan/cuts.py, ``dag_key.region_cuts`` over this walk of the DAG), then
    asks again with checked=True."""
    walk: Any


def try_fused(roots, name="materialize", mode="auto", checked=False, walk=None):
    """The result storages of the lazy nodes ``roots`` (a list: ``compute`` asks for several),
    one per root, or None when their DAG is a single operation (``compute_nodes`` then runs it
    as before). ``mode``: "auto" (the fusion passes) or "max" (every temporary substituted
    into its consumers where one statement can express it, compiler/plan/inline.py; run one kernel
    per remaining operation).

    Several roots are planned as one program: common subexpressions once, and each temporary
    only where the union of its readers needs it (the ReACT paper's Listing 6: ``C = A @ B`` read
    by ``C * D`` and ``F / C`` is formed on ``D``'s and ``F``'s patterns only). A plan with
    several results runs as one kernel when the results after the first are dense (CG's ``A @ p``
    and ``p @ (A @ p)``), else one kernel per operation.

    The unfused fallback runs the decomposed operations, whose pushed-in reductions already avoid
    the reduction redundancy (``einsum('i,->', b, c)`` multiplies once, not once per element). ``walk``:
    the DAG's ``dag_walk``, when the caller made it. The
    compiled kernel is cached by its source (built from the plan's IR, the operands' formats, dtypes
    and index widths: the signature); the plan itself is cached by the program and the operand specs.
    """
    walk = dag_walk(roots) if walk is None else walk
    dag, stores = walk.key, walk.order
    if mode != "auto":
        dag = (mode, dag)
    if counting.ON[0]:
        # (ls.opcount plans a copy of the DAG, where nothing is held: its plans are its own)
        dag = ("count", dag)
    fast = _FAST.get(dag)  # (a key is in at most one of _FAST and _SKIP)
    if fast is not None:
        probe, plans, seen = fast
        entry = plans.get(decisions(probe, stores, seen) if probe else ())
        if entry is not None:
            return run_entry(entry, stores, name)
    elif dag in _SKIP:
        return None
    elif not checked:
        return CheckCuts(walk)
    prog, node_value, inputs = decompose(roots, split=mode == "auto")
    if len(prog.ops) < 2:
        _skip(dag, roots)
        return None
    outs = [node_value[id(r)] for r in roots]  # the program value each root is
    if mode == "auto":
        prog = _associated(roots, prog, inputs)
    if mode == "auto":
        small, free = tiny(prog), elementwise(prog)
        prog = inline(prog, lambda op: small(op) or free(op))
        if "fusion" in _PASSES[0]:
            prog = share_reads(prog)  # (read-read edges: sibling sums share their loops)
    number = {st.buffers_key(): k for k, st in enumerate(stores)}
    where = {vid: number[st.buffers_key()] for vid, st in inputs.items()}
    if len(_FAST) >= _MAX_PLANS:
        _FAST.clear()
    if mode == "max" or len(prog.ops) < 2:
        # substituted (everything, or the tiny reductions): one kernel per remaining op (each
        # keyed by its 0-d operands' decisions in compiler/statement.py)
        prog = inline(prog) if mode == "max" else prog
        pool = []
        _FAST[dag] = ((), {(): ((None, prog, None, pool), where, _stmts(roots), None, outs)}, None)
        return _pick(_run_ops(prog, inputs, name, pool), prog.outputs, outs)
    specs = {vid: operand_spec(st) for vid, st in inputs.items()}
    conv = _compressed(specs)
    converted = None
    if conv:  # plan (and key) for the converted operands
        converted = _convert(inputs, conv)
        specs = {vid: operand_spec(st) for vid, st in converted.items()}
    # 0-d inputs' values decide iteration spaces (A + 1 is dense, A * 2 sparse), through the
    # decisions of each operation's pattern (f(0, s) zero or not): those are in the keys
    scalars = {vid: _scalar_value(st) for vid, st in inputs.items() if st.ndim == 0}
    probe = _probe(prog, inputs, where)
    seen = _FAST[dag][2] if dag in _FAST else {}
    dec = decisions(probe, stores, seen) if probe else ()
    pkey = (prog, _PASSES[0], tuple(sorted((vid, id(sp)) for vid, sp in specs.items())), dec)
    hit = _PLANS.get(pkey)
    if hit is None:
        with _BUILD_LOCK:
            hit = _PLANS.get(pkey)
            if hit is None:
                if len(_PLANS) >= _MAX_PLANS:  # (a scalar that changes every call makes a new key)
                    _PLANS.clear()
                hit = _PLANS[pkey] = _build(prog, specs, scalars)
    _FAST.setdefault(dag, (probe, {}, seen))[1][dec] = (hit, where, _stmts(roots), conv, outs)
    plan, kernel, abi, fixed = hit
    if plan is None:
        return _pick(_run_ops(kernel, inputs, name, fixed), kernel.outputs, outs)
    return _results(plan, fixed, _run_converted(plan, kernel, abi, fixed, inputs, conv, name, converted), outs)


def run_entry(entry, stores, name):
    """The root storages of a planned DAG from its plan entry (``_FAST``'s) and its concrete
    operands in ``dag_key``'s order."""
    (plan, kernel, abi, fixed), where, _, conv, outs = entry
    inputs = {vid: stores[k] for vid, k in where.items()}
    if plan is None:
        return _pick(_run_ops(kernel, inputs, name, fixed), kernel.outputs, outs)
    return _results(plan, fixed, _run_converted(plan, kernel, abi, fixed, inputs, conv, name), outs)


class Bound(NamedTuple):
    """A DAG's plan entry taken out of the plan cache for ``ls.jit`` to call again on new
    operands (``replay``); ``dec``: the decisions of its 0-d values it was planned for."""
    entry: Any
    probe: tuple
    seen: Any
    dec: tuple


def bind(walk, mode="auto"):
    """The ``Bound`` entry that ``try_fused`` ran for the DAG of ``walk`` (a ``dag_walk`` made
    before the compute), or None where it ran otherwise (a single operation, cut regions, a
    format asked for)."""
    dag = walk.key if mode == "auto" else (mode, walk.key)
    fast = _FAST.get(dag)
    if fast is None:
        return None
    probe, plans, seen = fast
    dec = decisions(probe, walk.order, seen) if probe else ()
    entry = plans.get(dec)
    return None if entry is None else Bound(entry, probe, seen, dec)


def replay(bound, stores, name):
    """``bound``'s kernel run on ``stores`` (its DAG's operands in ``dag_key``'s order, of the
    same specs), or None when a 0-d operand's value decides differently (a new plan)."""
    if bound.probe and decisions(bound.probe, stores, bound.seen) != bound.dec:
        return None
    return run_entry(bound.entry, stores, name)


def _results(plan, fixed, got, outs):
    """The storage of each root from a fused kernel's call: its result, or (joint outputs)
    one per value id of the program's outputs."""
    if not fixed[1].extra:
        return [got] * len(outs)
    return _pick(got, plan.program.outputs, outs)


def _probe(prog, inputs, where) -> tuple:
    """What a plan of ``prog`` reads of its 0-d inputs' values: for each operation with a
    pattern decision that reads one (``patterns.scalar_calls``; ``x + alpha * p`` has none: its
    decisions are fixed by the statement), as ``decisions.probe_item``s in ``dag_key``'s
    numbers. The planner reads the values only through their decisions (``fusion._pattern``),
    so a loop whose scalars change (CG's alpha) keeps its plan."""
    items = []
    for op in prog.ops:
        if not P.scalar_calls(op.stmt.expr):
            continue
        slots = {}
        for acc in op.stmt.accesses:
            st = inputs.get(op.args[acc.operand])
            if st is not None and st.ndim == 0:
                slots[acc.operand] = where[op.args[acc.operand]]
        if slots:
            items.append(probe_item(op.stmt.expr, sorted(slots.items())))
    return tuple(items)


def single_statement(root):
    """``(statement, storages)`` when the lazy DAG under ``root`` inlines into one statement
    (compiler/plan/inline.py) that sums over no more index variables than its widest operation
    (SDDMM ``A * (U @ V.T)`` is ``sum_k A[i,j] U[i,k] V[j,k]``; ``A @ (X @ W)`` would nest two
    sums, more work, and is not), else None. Its index variables are renamed as a single
    operation's are (results ``i0, i1, ...``, then the sums), so that a schedule names them
    alike; ``explain`` shows them. How a schedule applies to a whole expression (the scheduling paper, "Sparse Iteration Space Transformation Framework"
    schedules one statement): compiler/pipeline.py, ``_compute_nodes``."""
    from lazysparse.ir.nodes import Index, intern
    from lazysparse.compiler.plan.decompose import _rename
    prog, node_value, inputs = decompose([root], split=False)
    if len(prog.ops) < 2:
        return None
    widest = max(len(op.stmt.reduce_indices) for op in prog.ops)
    one = inline(prog)
    if len(one.ops) != 1 or one.ops[0].out != node_value.get(id(root)):
        return None
    op = one.ops[0]
    if len(op.stmt.reduce_indices) > widest or any(a not in inputs for a in op.args):
        return None
    names = [*op.stmt.out_indices, *op.stmt.reduce_indices]
    ren = {ix: Index(f"i{k}") for k, ix in enumerate(names) if isinstance(ix, Index)}
    return intern(_rename(op.stmt, ren)), [inputs[a] for a in op.args]


def _pick(results, outputs, outs):
    """The storage of each root (``outs``: its value id) from a program's ``results`` (one
    per value id of ``outputs``)."""
    return [results[outputs.index(v)] for v in outs]


def _compressed(specs):
    """{input value id: format} for sparse inputs with singleton levels (COO), which the fused
    lowering cannot drive: the same mode order with every level compressed (CSR-like, CSF for
    tensors), an ordered O(nnz) conversion. Without it a COO ``A * (U @ V.T)`` would form the
    dense product one kernel per operation."""
    from lazysparse.formats.format import Format
    from lazysparse.formats.levels import Level
    return {vid: Format([Level("compressed")] * sp.ndim, order=sp.format.order)
            for vid, sp in specs.items()
            if not sp.dense and any(lv.follows_parent for lv in sp.format.levels)}


_CONVERTED = weakref.WeakKeyDictionary()  # storage -> {format: its conversion}
_CONVERTED_LOCK = threading.Lock()


def _convert(inputs, conv):
    """Inputs with those of ``conv`` converted. Storages never change, so a conversion is kept
    while its source lives: a COO tensor used again (ALS calls MTTKRP with the same X every
    sweep) converts once, for the memory of one more copy."""
    out = {}
    for vid, st in inputs.items():
        if vid in conv:
            with _CONVERTED_LOCK:
                hit = _CONVERTED.get(st, {}).get(conv[vid])
            if hit is None:
                hit = convert_storage(st, conv[vid])
                with _CONVERTED_LOCK:
                    _CONVERTED.setdefault(st, {})[conv[vid]] = hit
            st = hit
        out[vid] = st
    return out


def _run_converted(plan, kernel, abi, fixed, inputs, conv, name, converted=None):
    """``_run`` on the converted operands (``converted``, when already made); a result in a
    converted operand's pattern goes back to that operand's own format (COO in, COO out)."""
    if not conv:
        return _run(plan, kernel, abi, fixed, inputs, name)
    st = _run(plan, kernel, abi, fixed, converted or _convert(inputs, conv), name)
    like = fixed[0]
    if like in conv:
        if fixed[1].extra:  # (the first of the results)
            return (convert_storage(st[0], inputs[like].format), *st[1:])
        st = convert_storage(st, inputs[like].format)
    return st


def _run_ops(prog, inputs, name, pool=None):
    """The program one kernel per operation; temporaries in their inferred formats.

    ``pool``: the program's scratch, a list of ``{value id: array}``: the dense temporaries'
    buffers of earlier runs, reused (``_NOT_DENSE`` for a temporary that came out sparse). A new buffer of several MB is new pages each run, because
    glibc gives the top of its heap back to the system once the temporary and the result are
    both freed; their first-touch page faults cost GNN-1 ``A @ (X @ W)`` on github-social a
    third of its time, and serialise two threads (docs/design.md, "Scratch buffers")."""
    execute = execute_statement.execute
    try:
        scratch = pool.pop() if pool is not None else {}
    except IndexError:  # (one per thread running this program at once)
        scratch = {}
    steps = _STEPS.get(id(prog))
    if steps is None or steps[0] is not prog:
        if len(_STEPS) >= _MAX_PLANS:
            _STEPS.clear()
        steps = _STEPS[id(prog)] = (prog, _steps(prog))
    vals = dict(inputs)
    for stmt, args, shape, out, kept, fresh in steps[1]:
        buf = scratch.pop(out, None) if kept else None
        sparse = buf is _NOT_DENSE  # (the last run's value was not dense: no buffer to offer)
        # the scratch dict, ``buf`` and getrefcount's argument: any other reference (a view in
        # a result the caller still holds) means it is not ours to overwrite; a view of an
        # aligned buffer refers to the raw buffer behind it instead (runtime/aligned.py)
        if sparse or (buf is not None and (sys.getrefcount(buf) > 2 or aligned.viewed(buf))):
            buf = None
        if buf is None and fresh is not None and not sparse:
            # the first buffer of a temporary the scratch would keep, on a cache line: kernels
            # that read it back gather whole lines of its rows (runtime/aligned.py). Unused if
            # the temporary is not dense; np.empty touches no page, and the memory guard still
            # runs before the kernel does
            buf = aligned.empty(shape, fresh, aligned.TEMP_MIN_BYTES)
        st = execute(stmt, [vals[v] for v in args], shape, None, name, buf, planned=True)
        vals[out] = st
        if not kept:
            pass
        elif not st.format.is_dense:
            scratch[out] = _NOT_DENSE
        elif aligned.owns(st.vals) and SCRATCH_MIN <= st.vals.nbytes <= SCRATCH_MAX:
            scratch[out] = st.vals
    out = [vals[o] for o in prog.outputs]
    if pool is not None and scratch:
        del vals, st, buf
        pool.append(scratch)
    return out


_STEPS = {}  # id(program) -> (program, its _steps)
def _steps(prog):
    """What ``_run_ops`` does for each operation of ``prog``, worked out once: ``(statement,
    argument value ids, result shape, result value id, kept, fresh)``; ``kept``: a temporary
    whose buffer the scratch may keep; ``fresh``: the dtype of the aligned first buffer it is
    offered (a temporary of rows whose size is in the scratch's range), else None."""
    outs = set(prog.outputs)
    steps = []
    for op in prog.ops:
        v = prog.values[op.out]
        shape = tuple(v.shape)
        kept = op.out not in outs
        fresh = None
        if kept and len(shape) >= 2 and \
                SCRATCH_MIN <= math.prod(shape) * np.dtype(v.dtype).itemsize <= SCRATCH_MAX:
            fresh = np.dtype(v.dtype)
        steps.append((op.stmt, tuple(op.args), shape, op.out, kept, fresh))
    return tuple(steps)


# dense temporaries kept for the next run (_run_ops): from a size where page faults show, up to
# one that a program may hold between runs
SCRATCH_MIN, SCRATCH_MAX = 64 << 10, 256 << 20
_NOT_DENSE = object()  # a scratch entry: the temporary came out sparse (no aligned buffer offered)


def _stmts(roots):
    """The statements of a DAG, each once: a cache entry keyed by their ids keeps them alive.
    (A node used twice is visited once: walked as a tree, a loop's DAG of k steps that each use
    the last value twice has 2^k paths.)"""
    stmts, stack, seen = [], list(roots), set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        stmts.append(n.stmt)
        stack += [c._node for c in n.children if c._storage is None and c._node.result is None]
    return stmts


def _skip(key, roots):
    if len(_SKIP) >= _MAX_PLANS:
        _SKIP.clear()
    _SKIP[key] = _stmts(roots)


_PASSES = ACTIVE


@contextmanager
def passes(*names):
    """Plan with only these of the passes "association" (contraction order,
    compiler/plan/associate.py), "masks", "fusion", "memory" (each can be turned
    off and results stay right; tests and ``explain`` comparisons use it), "concordance"
    (compiler/plan/kernel.py ``_outer_first``: an operand converted rather than an outer-product
    workspace)."""
    unknown = set(names) - PASSES
    if unknown:
        raise ValueError(f"passes: unknown pass(es) {sorted(unknown)}; choose from {sorted(PASSES)}")
    prev = _PASSES[0]
    _PASSES[0] = frozenset(names)
    _FAST.clear()
    _SKIP.clear()
    _BOUND.clear()  # bound warm paths skip planning
    try:
        yield
    finally:
        _PASSES[0] = prev
        _FAST.clear()
        _SKIP.clear()
        _BOUND.clear()


@dataclass(frozen=True, eq=False)
class ProgramPlan:
    """What planning decided for a program of several operations over its inputs' specs:
    the fusion plan (``fusion``: its loop tree, masks and temporaries), and the program to run
    one kernel per operation when the tree shares no loop or the lowerer declines it
    (``per_op``: each temporary only where the plan's masks need it). ``stage`` is the
    compiler stage's ``Plan`` of the fused kernel, or None when no loop is shared."""
    fusion: Any
    per_op: Any
    specs: Any
    shares_loops: bool

    @property
    def stage(self):
        return stages.Plan.of_program(self.fusion, self.specs) if self.shares_loops else None


def plan_program(prog, specs, scalars) -> ProgramPlan:
    """Plan ``prog`` (decomposed, associated and inlined) over its inputs' specs and the
    values of its 0-d inputs; runs and builds nothing."""
    plan = plan_fusion(prog, specs, "auto", scalars, _PASSES[0])
    # (a masked sum whose reader multiplies it by its mask is substituted into that reader)
    folded = inline(prog, folds_into_reader(prog, plan.masks))
    # (one kernel per operation: a cheap 0-d value is computed inside its readers instead)
    per_op = masked_program(folded, plan.masks)
    return ProgramPlan(plan, inline(per_op, cheap_scalars(per_op)), specs, _shares_loops(plan.tree))


def _build(prog, specs, scalars):
    """The fused kernel's plan entry, or ``(None, program, None, [])``: run the program one
    kernel per operation."""
    with timed(f"plan a fused program of {len(prog.ops)} operations"):
        pp = plan_program(prog, specs, scalars)
    ops = (None, pp.per_op, None, [])  # [], the scratch pool (_run_ops)
    if pp.stage is None:
        return ops
    from lazysparse.compiler.lower.fused import Unsupported  # (loaded with the lowerer: stages.lower)
    try:
        lowered = stages.lower(pp.stage)
    except Unsupported:
        return ops
    abi, like = lowered.abi, lowered.extra
    return pp.fusion, stages.build(lowered).kernel, abi, (like, _Fixed(pp.fusion, abi, specs, like))


def _counting_kernel(plan, fx):
    """The instrumented twin of a fused kernel (ls.opcount), built once."""
    if fx.counting is None:
        with counting._BUILD:
            if fx.counting is None:
                lowered = stages.lower(stages.Plan.of_program(plan, fx.specs), count=True)
                fx.counting = stages.build(lowered).kernel
    return fx.counting


class _Fixed:
    """What a call needs that depends on the plan alone, computed once: the extents' ``d[]``
    entries, the temporaries' shapes and sizes for the memory guard, and the generated call
    (``glue_source``)."""

    def __init__(self, plan, abi, specs, like):
        prog = plan.program
        self.specs, self.counting = specs, None  # for the instrumented twin
        ext = prog.extents()
        self.d = [(k, int(ext[desc[1]])) for k, desc in enumerate(abi.d) if desc[0] == "ext"]
        self.temps = []
        for vid, kept in plan.temp_dims.items():
            shape = tuple(ext[ix] for ix in kept)
            nbytes = int(np.prod(shape, dtype=np.float64)) * np.dtype(prog.values[vid].dtype).itemsize
            self.temps.append((vid, shape, nbytes))
        out = prog.values[prog.outputs[0]]
        self.out_shape, self.odt = tuple(int(n) for n in out.shape), np.dtype(out.dtype)
        self.out_bytes = int(np.prod(out.shape, dtype=np.float64)) * self.odt.itemsize
        # the other results (dense): (value id, shape, dtype, bytes)
        self.extra = []
        for vid in prog.outputs[1:]:
            v = prog.values[vid]
            shape, dt = tuple(int(n) for n in v.shape), np.dtype(v.dtype)
            self.extra.append((vid, shape, dt, int(np.prod(shape, dtype=np.float64)) * dt.itemsize))
        self.like = like
        self.prog = prog
        self.call = _compile_glue(glue_source(abi, self, like), abi, self)

    def writer(self, vid):
        """The statement that writes value ``vid`` (None: the result), for the memory guard's
        message: it names the node, as the per-operation path does."""
        vid = self.prog.outputs[0] if vid is None else vid
        op = next((o for o in self.prog.ops if o.out == vid), None)
        return f"v{vid}" if op is None else f"v{vid}: {op.stmt!r}"


def glue_source(abi, fx, like) -> str:
    """Python source of ``call(inputs, name, fn)``, the call of one fused kernel
    (runtime/glue.py): the memory guard, the result's buffers, ``p[]``/``d[]``, the kernel
    ``fn`` and the result's storage."""
    vids = _glue_inputs(abi, like)
    L = ["def call(inputs, name, fn):"]
    L += [f"    s{v} = inputs[{v}]" for v in vids]
    # the memory guard, only for arrays it may refuse: under GUARD_MIN never, as on the
    # per-operation path (a scalar temporary cost a limit() lookup on every call)
    for j, (vid, shape, nbytes) in enumerate(fx.temps):
        if nbytes >= GUARD_MIN:
            L.append(f"    check_dense({nbytes}, {shape!r}, TEMP_WHAT[{j}], name)")
    kinds = ("pos", "crd")
    if like is None:
        if fx.out_bytes >= GUARD_MIN:
            L.append(f"    check_dense({fx.out_bytes}, OSHAPE, RESULT_WHAT, name)")
        L.append("    out = empty(OSHAPE, ODT)")
    else:
        L.append(f"    out = empty(s{like}.vals.shape[0], ODT)")
        for kind in kinds:
            L.append(f"    o{kind} = [None if a is None else empty(a.shape, a.dtype) for a in s{like}.{kind}]")
    xnum = {vid: j for j, (vid, _, _, _) in enumerate(fx.extra)}
    for j, (vid, shape, dt, nbytes) in enumerate(fx.extra):
        if nbytes >= GUARD_MIN:
            L.append(f"    check_dense({nbytes}, {shape!r}, XWHAT[{j}], name)")
        L.append(f"    x{j} = empty({shape!r}, XDT[{j}])")

    def out_array(desc):
        if desc[1] == "extra":
            return f"x{xnum[desc[2]]}"
        return "out" if desc[1] == "vals" else f"o{desc[1]}[{int(desc[2])}]"

    def d_value(desc):
        tag = desc[0]
        if tag in ("ext", "team"):
            return None  # fixed by the plan (written once into each new set: new_bufs), or the kernel's
        if tag == "out" and desc[1] == "xlen":  # ("out", "xlen", value id): another result's
            return str(int(np.prod(fx.extra[xnum[desc[2]]][1], dtype=np.int64))), "always"
        if tag == "out" and len(desc) == 2:  # ("out", "len"): the result's values
            if like is None:
                return str(int(np.prod(fx.out_shape, dtype=np.int64))), "always"
            return f"s{like}.vals.shape[0]", like
        if tag == "out":  # ("out", "len", "pos" / "crd", level): the like input's array
            return f"s{like}.{desc[2]}[{int(desc[3])}].shape[0]", like
        raise AssertionError(desc)  # pragma: no cover - lower_fused records only these
    per, always, _ = glue.marshal(abi, {v: (f"s{v}", fx.specs[v]) for v in vids}, out_array, d_value,
                                  threads="nt")
    L += glue.indent(glue.TAKE_BUFS)
    for j, v in enumerate(vids):
        L += glue.indent(glue.remembered(j, f"s{v}", per[v]))
    if any(desc[0] == "threads" for desc in abi.d):
        L.append("    nt = nthreads()")
    L += ["    " + ln for ln in always]
    # on this thread, or off it when it may be long (runtime/interrupt.py): its operands' values
    # and its result's, a bound on the work of kernels whose loops walk stored entries or dense rows
    xs = [f"x{j}" for j in range(len(fx.extra))]
    size = " + ".join([f"s{v}.vals.size" for v in vids] + ["out.size"] + [f"{x}.size" for x in xs])
    keep = "(inputs, bufs, out" + "".join(f", {x}" for x in xs) + ")"
    L += glue.indent(glue.gated_call(size, keep, lambda fn: [f"rc = {fn}(p, d)"]))
    L += ["    pool.append(bufs)", "    if rc:",
          "        raise MemoryError(f'{name}: out of memory for the temporaries of a fused kernel')"]
    if like is None and xs:  # (the results in the program's order of outputs)
        L.append("    return (fresh(wrap_dense(out), OSPEC), "
                 + ", ".join(f"fresh(wrap_dense({x}), XSPEC[{j}])" for j, x in enumerate(xs)) + ")")
    elif like is None:
        L.append("    return fresh(wrap_dense(out), OSPEC)")
    else:
        L += ["    st = new(Storage)",
              f"    st.shape, st.format, st.pos, st.crd = OSHAPE, s{like}.format, opos, ocrd",
              f"    st.vals, st.index_dtype, st.spec, st.stats = out, s{like}.index_dtype, None, None"]
        L.append("    return (st, " + ", ".join(f"fresh(wrap_dense({x}), XSPEC[{j}])" for j, x in enumerate(xs)) + ")"
                 if xs else "    return st")
    return "\n".join(L) + "\n"


def _glue_inputs(abi, like):
    """The input value ids a fused kernel's call reads, in its memo's order."""
    return sorted({desc[1] for desc in abi.p if desc[0] == "in"}
                  | {desc[1] for desc in abi.d if desc[0] in ("stride", "size")}
                  | ({like} if like is not None else set()))


def _compile_glue(source, abi, fx):
    from lazysparse.runtime.kernel_cache import ffi
    n_in = len(_glue_inputs(abi, fx.like))

    def new_bufs():
        p = ffi.new("void*[]", max(len(abi.p), 1))
        d = ffi.new("int64_t[]", max(len(abi.d), 1))
        for k, v in fx.d:
            d[k] = v
        return p, d, [None] * n_in
    env = glue.environment(ffi, [], new_bufs, None)  # (the kernel is the call's argument fn)
    env.update(wrap_dense=Storage.wrap_dense, empty=_poisoned if POISON else aligned.empty,
               ODT=fx.odt, OSHAPE=fx.out_shape, check_dense=memory.check_dense,
               RESULT_WHAT=lambda: f"the result of {fx.writer(None)}",
               TEMP_WHAT=[(lambda vid=vid: f"the temporary {fx.writer(vid)} of a fused kernel")
                          for vid, _, _ in fx.temps],
               XDT=[dt for _, _, dt, _ in fx.extra], fresh=fresh,
               OSPEC=_dense_spec(fx.out_shape, fx.odt), XSPEC=[_dense_spec(sh, dt) for _, sh, dt, _ in fx.extra],
               XWHAT=[(lambda vid=vid: f"the result {fx.writer(vid)}") for vid, _, _, _ in fx.extra])
    fn = glue.compile_glue(source, env, "<lazysparse fused glue>")
    fx.pool = env["pool"]  # (the argument arrays a call puts back: tests read what it reported)
    return fn


def _dense_spec(shape, dtype):
    """The spec of a kernel's new dense result of ``shape`` and ``dtype`` (C order), read off
    a view with its strides over one element (nothing of its size is allocated)."""
    dtype = np.dtype(dtype)
    if 0 in shape:  # (no elements: NumPy's own strides, which are zero)
        return operand_spec(Storage.wrap_dense(np.empty(shape, dtype)))
    strides, step = [], dtype.itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= int(n)
    view = np.lib.stride_tricks.as_strided(np.empty(1, dtype), shape=shape, strides=tuple(reversed(strides)))
    return operand_spec(Storage.wrap_dense(view))


def _run(plan, kernel, abi, fixed, inputs, name):
    """Run a fused kernel through its generated call (``_Fixed.call``); under ``ls.opcount``
    its instrumented twin, on the same buffers."""
    like, fx = fixed
    t = counting.tally() if counting.ON[0] else None
    if t is None:
        st = fx.call(inputs, name, kernel.fn)
    else:
        ck = _counting_kernel(plan, fx)
        st = fx.call(inputs, name, lambda p, d: counting.run(ck, lambda: ck.fn(p, d), inputs.get, t))
    RUNS[0] += 1
    if execute_statement._LOGGING[0]:
        log = getattr(execute_statement._LOG, "items", None)
        if log is not None:
            log.append(FusedRun(plan, kernel, like, abi, fx))
    return st



def _clear_plans():
    """Drop the fused plans and their kernels (``ls.clear_cache``)."""
    for memo in (_FAST, _SKIP, _PLANS, _STEPS, CUTS):
        memo.clear()
    promise.clear()


kernel_cache.register_plan_cache(lambda: (0, len(_PLANS)), _clear_plans, lambda: None)
