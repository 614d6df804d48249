"""One index-notation statement over concrete storages: plan it (or find its bound plan), build
its kernel through the runner, and call it. The warm path is one dictionary lookup on the
statement and its operand specs that yields a *bound plan*: the generated call of the kernel plus
the few checks that can change the plan. Guards (memory, work) run on the planning path.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from lazysparse.formats import Format, Storage, resolve_format
from lazysparse.ir.nodes import Access, Index, Statement, accesses_of, identity_statement, intern
from lazysparse.compiler.plan import patterns as P
from lazysparse.compiler import opcount as counting
from lazysparse.compiler.schedule import LOOPS_FORCED, WS_FORCED
from lazysparse.compiler.stages import Plan
from lazysparse.compiler.plan.passes import ACTIVE as _PASSES
from lazysparse.runtime.progress import timed
from lazysparse.runtime import kernel_cache, memory
from lazysparse.runtime import work as W
from lazysparse.compiler.plan import kernel as PL
from lazysparse.compiler.plan import workspace as WS
from lazysparse.compiler.plan import loops as LOOPS

# The plan caches below are shared by every Python thread. Each entry is a pure function of its
# key, and a dict's get, set and setdefault are atomic (under free-threaded Python too, which
# locks each dict), so a lookup needs no lock and two threads that miss one key at once compute
# equal entries; where an entry's identity matters (a kernel, a glue, a view) the miss path makes
# it once (``_get_runner``, ``_BIND_LOCK``, ``_relabel_view``).
_RUNNERS = {}
_RUNNERS_LOCK = threading.Lock()
_ANALYSIS = {}
_ORDERS = {}
# signature-cache hits that never reach the kernel cache. A statistic: threads racing on
# ``+= 1`` may lose an increment, which exactness would cost a lock on every warm call
STATS = {"plan_hits": 0}


# -- planning ----------------------------------------------------------------------------------
def _is_relabel(stmt: Statement):
    e = stmt.expr
    return (isinstance(e, Access) and not stmt.reduce_indices and len(set(e.indices)) == len(e.indices)
            and len(e.indices) == len(stmt.out_indices) and all(isinstance(i, Index) for i in e.indices))


def execute(stmt: Statement, storages, out_shape, req_format=None, name="materialize",
            buf=None, planned=False) -> Storage:
    """Compute one statement over concrete storages; returns the result storage. ``buf``: an
    array that a dense result of this shape and dtype may be written into (a temporary's
    buffer from the previous run of the same program; nothing else may hold it).

    ``planned``: the statement is an operation of a planned program (compiler/fused_pipeline.py,
    ``_run_ops``), whose reductions were already pushed in where they split: its bound plan is
    kept under a key of its own, which a single operation written by the user never looks up
    (one that may split is planned as a DAG first: ``_compute_nodes``, ``Array.materialize``).

    A warm call is one dictionary lookup on (statement, operand specs, requested format) that
    yields a *bound plan*: the generated call of the kernel plus the few checks that can change
    the plan (a density-dependent result format, an index width that depends on the shape). A
    miss, or a bound plan that declines, takes the planning path below, which binds the plan.
    """
    # keyed by ids (C-level hashing): statements and operand specs are interned, and a bound
    # plan keeps its statement alive, so an id cannot be reused while its entry exists.
    # (Array.materialize repeats this lookup for two concrete operands: keep both alike.)
    if len(storages) == 2:  # the common arity, without comprehension frames
        a, b = storages
        specs = (a.spec or PL.operand_spec(a), b.spec or PL.operand_spec(b))
        key = (id(stmt), id(specs[0]), id(specs[1]), req_format)
    else:
        specs = tuple([st.spec or PL.operand_spec(st) for st in storages])
        key = (id(stmt), *[id(s) for s in specs], req_format)
    if planned:
        key += (_PLANNED,)
    bound = _BOUND.get(key)
    if bound is not None and not _COUNTING[0] and LOOPS_FORCED.schedule is None:
        out = bound(storages, out_shape, name, buf)
        if out is not None:
            return out
    return _plan_and_run(stmt, storages, specs, out_shape, req_format, name, buf, planned)


_PLANNED = "planned"  # the last element of a program operation's bound-plan key


_BOUND = {}
_LOOP_PLANS = {}  # a schedule's LoopPlan per planning key (the key ends with the schedule)
_BINDS = {}
# held while a plan's glue is generated and compiled (a miss of _BINDS only): threads making
# the first calls of one expression at once then share one glue, compiled once
_BIND_LOCK = threading.Lock()
_COUNTING = counting.ON  # ls.opcount sessions open: bound plans (normal kernels) are skipped
_RULES = {}


@dataclass(frozen=True, eq=False)
class StatementPlan:
    """What planning decided for one statement over concrete operands, before anything runs:
    a view (``view``: the result is a relabelling of the operand's arrays), operands to convert
    first (``converted``: slot -> format; the statement is then planned again on them), or a
    ``KernelSpec`` (``spec``) with the sizes-dependent choices of this call (workspace, index
    width). ``stage`` is the compiler stage's ``Plan`` (lowered and built by the runner)."""
    stmt: Statement       # the statement with shared operands split into slots
    storages: tuple       # its operands, one per slot
    extra: tuple          # slots added by the split (each repeats an operand)
    out_fmt: Any          # the result format of the density rule or the request (None: sparse default)
    fixed: Any            # the format when it does not depend on densities (False: none fixed)
    rule: Any             # the density rule (None when ``fixed``)
    sdec: tuple           # decisions on 0-d operands' values the plan holds for
    dense_walk: bool      # the kernel walks a sparse operand's implicit zeros (work guard)
    view: bool = False
    converted: tuple = ()  # ((slot, format), ...)
    fmt: Any = None        # the result's format
    spec: Any = None       # KernelSpec
    key: Any = None        # the loop plan's key: a runner is kept per (key, index width, mode)
    choice: Any = None     # the workspace choice (policy, capacity, why), or None
    wsplan: Any = None     # what a bound plan checks again for a workspace, or None

    @property
    def stage(self) -> Plan:
        return Plan.of_statement(self.spec)


def plan_statement(stmt0, storages0, specs0, out_shape, req_format=None, name="materialize"):
    """Plan ``stmt0`` over these operands (``specs0``: their specs): the passes in order,
    each a cached pure function of its key, and the guards (memory, work) that refuse a plan
    this call cannot afford. Runs no kernel."""
    stmt, storages, extra = PL.split_shared_slots(stmt0, storages0)
    specs = specs0 + tuple(specs0[k] for k in extra)
    nd = len(out_shape)
    ext = PL.extents(stmt, storages, out_shape)
    # 0-d operands' values decide parts of the pattern (A * 0 is empty, A + 1 full): those
    # decisions key the plan, which A * 2 and A * 3 share (compiler/plan/kernel.py, scalar_decisions)
    sdec = PL.scalar_decisions(stmt, storages) if any(st.ndim == 0 for st in storages) else ()
    akey = (stmt, specs, req_format, sdec)
    pat, decisions, fixed = _analysis(akey, stmt, specs, storages, req_format, nd, ext)
    dense_walk = W.densifies(pat, storages)  # a walk over a sparse operand's implicit zeros
    sched = LOOPS_FORCED.schedule  # an ls.Schedule's loops being applied (compiler/plan/loops.py)
    rule = None
    if fixed is None:
        rule = _RULES.get(akey)
        if rule is None:
            rule = _RULES[akey] = PL.density_rule(pat, stmt, nd)
        # a schedule that runs threads or tiles of nonzeros writes a dense result, whatever
        # the densities (ask for a format to get another, and an error if it cannot)
        out_fmt = (resolve_format("dense", nd) if sched is not None and LOOPS.dense_only(sched)
                   else rule(storages, out_shape))
    else:
        out_fmt = fixed or None
    base = dict(stmt=stmt, storages=tuple(storages), extra=tuple(extra), out_fmt=out_fmt, fixed=fixed,
                rule=rule, sdec=sdec, dense_walk=dense_walk)
    # a relabelling whose result format mirrors the operand is a view: no kernel
    if _is_relabel(stmt) and out_fmt is not None and _is_view(stmt, storages[0].format, out_fmt):
        return StatementPlan(**base, view=True)
    okey, (order, converted, fmt, mode), lplan = _loops(stmt, specs, out_fmt, decisions, sched, name)
    for v, value in (lplan.bounds if lplan is not None else ()):
        if ext[v] != value:
            raise ValueError(f"{name}: Schedule.bound states that {v!r} ranges over {value}, but in "
                             f"`{stmt!r}` it ranges over {ext[v]} (a bound must hold for every input)")
    if converted:
        accs = accesses_of(stmt.expr)
        conv = tuple((k, PL.concordant_format(specs[k], next(a for a in accs if a.operand == k), order,
                                              storages[k])) for k in converted)
        return StatementPlan(**base, converted=conv, fmt=fmt)
    mode, choice, wsplan = _assembly(stmt, fmt, order, mode, lplan, storages, out_shape, name)
    idt = _index_width_and_guards(stmt, pat, fmt, mode, storages, out_shape, name)
    if dense_walk:  # the work guard, after the memory guard (a dense result refused says more)
        W.check(stmt, ext, name)
    spec = PL.KernelSpec(stmt, specs, PL.OperandSpec(fmt, stmt.dtype, idt, ()), order, mode, decisions, lplan)
    return StatementPlan(**base, fmt=fmt, spec=spec, key=(okey, idt, mode), choice=choice, wsplan=wsplan)


def _plan_and_run(stmt0, storages0, specs0, out_shape, req_format, name, buf=None, planned=False):
    """Plan ``stmt0`` over these operands, build or find its kernel, bind its warm path, run it."""
    with timed("plan a statement"):
        p = plan_statement(stmt0, storages0, specs0, out_shape, req_format, name)
    stmt, storages, out_fmt, fixed = p.stmt, p.storages, p.out_fmt, p.fixed
    bkey = None
    if intern(stmt0) is stmt0:
        bkey = (id(stmt0), *[id(s) for s in specs0], req_format) + ((_PLANNED,) if planned else ())
    if p.view:
        view = _relabel_view(stmt, storages[0], out_fmt, out_shape, req_format)
        if bkey is not None and fixed is not None:
            _BOUND[bkey] = lambda sts, shape, name, buf=None, stmt0=stmt0: _relabel_view(
                stmt, sts[0], out_fmt, shape, req_format)
        return view
    if p.converted:
        storages = list(storages)
        for k, fmt_k in p.converted:
            storages[k] = convert_storage(storages[k], fmt_k)
        return execute(stmt, storages, out_shape, p.fmt, name, buf, True)
    runner = _RUNNERS.get(p.key)
    if runner is not None:
        STATS["plan_hits"] += 1
    else:
        runner = _RUNNERS[p.key] = _get_runner(p.spec)
    fmt, idt = p.spec.output.format, p.spec.output.index_dtype
    if p.choice is not None:  # the capacity the glue passes (d[]), and explain's reason
        WS_CALL.capacity = p.choice.capacity
        runner.ws_why = p.choice.why
    log = getattr(_LOG, "items", None) if _LOGGING[0] else None
    if log is not None:
        log.append((runner.spec, runner))
    if (bkey is not None and LOOPS_FORCED.schedule is None and (fmt.is_dense or idt == "int32")
            and (p.wsplan is None or WS_FORCED.choice is None)):
        # one generated function per (key, runner, format): operands whose density verdicts
        # differ, used in turn, switch between bound plans without compiling glue each time.
        # A workspace's policy and capacity depend on sizes: its bound plan chooses them again
        # (``_workspace``'s rule) and declines when the policy would change
        bk = (bkey, runner, out_fmt, p.sdec)
        bfn = _BINDS.get(bk)
        if bfn is None:
            with _BIND_LOCK:
                bfn = _BINDS.get(bk)
                if bfn is None:
                    bfn = _BINDS[bk] = _bind(stmt0, p.extra, runner, out_fmt, None if fixed is not None else p.rule,
                                             fmt.is_sparse, p.wsplan, p.sdec, p.dense_walk)
        _BOUND[bkey] = bfn
    if _COUNTING[0]:
        t = counting.tally()
        if t is not None:
            return counting.call_runner(runner, storages, out_shape, name, t)
    return runner.call(storages, out_shape, name, buf)


def _analysis(akey, stmt, specs, storages, req_format, nd, ext):
    """The iteration pattern, the decisions of 0-d operands, and the result format when it does
    not depend on densities (else None; False: no format fixed), once per ``akey``."""
    an = _ANALYSIS.get(akey)
    if an is None:
        pat, decisions = PL.global_pattern(stmt, storages)
        fixed = None
        if req_format is not None:
            fixed = resolve_format(req_format, nd)
        elif not stmt.reduce_indices or pat == P.TRUE:
            # without reductions the inferred format does not depend on densities
            fixed = PL.infer_format(stmt, specs, [0.0] * len(specs), ext, nd, decisions) or False
        an = (pat, decisions, fixed)
        _ANALYSIS[akey] = an
    return an


def _loops(stmt, specs, out_fmt, decisions, sched, name):
    """The loop order, the operands to convert first, the result format and the assembly mode
    (once per key), and a schedule's bound loop plan: ``(key, (order, converted, fmt, mode),
    loop plan or None)``."""
    concordance = "concordance" in _PASSES[0]
    okey = (stmt, specs, out_fmt, decisions, concordance)
    if sched is not None:
        okey += (sched,)
    planned = _ORDERS.get(okey)
    lplan = _LOOP_PLANS.get(okey) if sched is not None else None
    if planned is not None:
        return okey, planned, lplan
    order, converted = PL.choose_order(stmt, specs, out_fmt, concordance)
    if sched is not None:  # a schedule's loops (compiler/plan/loops.py): its order, its kernel
        lplan = LOOPS.bind(sched, stmt, specs, order,
                           out_fmt if out_fmt is not None
                           else PL._default_sparse(order, list(stmt.out_indices)), decisions)
        order = list(lplan.order) if lplan is not None else order
        _LOOP_PLANS[okey] = lplan
    fmt = out_fmt if out_fmt is not None else PL._default_sparse(order, list(stmt.out_indices))
    mode = PL.choose_mode(stmt, order, fmt, specs, decisions)
    if lplan is not None and lplan.early:
        mode = LOOPS.interleaved_mode(lplan, stmt, mode)
    if mode == "workspace" and WS.mask_access(stmt, specs, fmt, decisions) is not None:
        mode = "mask"  # products accumulate at the mask's positions (compiler/plan/workspace.py)
    if lplan is not None and lplan.parallel is not None and fmt.is_sparse:
        mode = "mask"  # threads write a sparse result at an operand's positions (checked in bind)
    if mode == "sort" and not PL._appendable(fmt):
        raise NotImplementedError(f"{name}: cannot assemble a result in format {fmt!r} yet")
    if mode == "append" and sched is None and WS.map_access(stmt, specs, fmt, decisions) is not None:
        mode = "map"  # a value per stored entry of the one sparse operand, in its structure
    planned = (tuple(order), converted, fmt, mode)
    _ORDERS[okey] = planned
    return okey, planned, lplan


def _assembly(stmt, fmt, order, mode, lplan, storages, out_shape, name):
    """The assembly mode with its workspace, chosen for these sizes: ``(mode, workspace choice
    or None, what a bound plan checks again or None)``."""
    choice = wsplan = None
    if mode == "mask" and WS_FORCED.choice is not None:
        if lplan is not None and lplan.parallel is not None:
            raise NotImplementedError(f"{name}: Schedule.workspace: a workspace for a {fmt!r} result "
                                      "written by threads (one workspace per thread; not lowered yet)")
        mode = "workspace"  # a schedule's workspace(...) is asked for: it gets one
    if mode == "workspace":
        svars = WS.storage_vars(stmt, fmt)
        union = WS.hoisted(order, svars) == len(svars)  # a sum of sparse terms (fission)
        choice = _workspace(stmt, fmt, order, storages, out_shape, union)
        # what a bound plan checks again on each call: (levels outside, mode order, policy, union)
        wsplan = None if choice is None else (WS.outside(order, svars), tuple(fmt.order),
                                              choice.policy, union)
        if choice is not None and choice.policy == "append":  # the merge is cheaper here
            choice = None
            mode = "append"
        else:
            mode = "sort" if choice is None else "ws-" + choice.policy
    return mode, choice, wsplan


def _index_width_and_guards(stmt, pat, fmt, mode, storages, out_shape, name):
    """The result's index dtype, after the memory guard of its dense result or positions."""
    if not fmt.is_sparse:
        _guard(stmt, mode, out_shape, name)
        return "int64"
    full = int(np.prod(out_shape, dtype=np.float64)) if out_shape else 1
    # (mode "map" copies one operand's structure: its entries bound the result's too)
    if mode in ("append", "map") and full > PL.INT32_MAX:
        accs = accesses_of(stmt.expr)
        bound = P.bound_count(pat, lambda q: storages[accs[q].operand].nnz, full,
                              lambda q: frozenset(accs[q].indices), frozenset(stmt.out_indices))
    else:
        bound = full
    idt = PL.output_index_dtype(fmt, out_shape, bound)
    _guard_positions(stmt, fmt, idt, out_shape, name)
    return idt


from lazysparse.compiler.runner import WS_CALL  # noqa: E402  (the workspace capacity of the call being made)


def _workspace(stmt, fmt, order, storages, out_shape, union=False):
    """The policy and capacity of a scattering kernel's workspace (compiler/plan/workspace.py), or
    None when its keys would not fit an int64 (the sort assembly then runs instead). ``union``:
    a sum of sparse terms, whose policy may be "append" (merge them instead)."""
    h = WS.outside(order, WS.storage_vars(stmt, fmt))
    ext = [out_shape[m] for m in fmt.order]
    if math.prod(ext[h:]) >= WS.KEY_LIMIT:
        return None
    forced = WS_FORCED.choice
    return WS.choose(ext[h:], math.prod(ext[:h]), _inserts(storages), np.dtype(stmt.dtype).itemsize,
                     memory.limit(), *(forced or (None, None)), union=union)


def _inserts(storages):
    """The workspace's estimate of its inserts per call: the operands' stored entries."""
    return sum([st.nnz for st in storages if st.ndim and not st.format.is_dense])


def _guard(stmt, mode, shape, name):
    """The memory guard for a dense result (runtime/memory.py)."""
    n = math.prod(shape) * (np.dtype(stmt.dtype).itemsize + (8 if mode == "dense-count" else 0))
    if n >= GUARD_MIN:
        memory.check_dense(n, shape, lambda: f"the result of {stmt!r}", name)


GUARD_MIN = 64 << 10  # dense results under 64 KiB are never refused (no check on the warm path)


def _dense_prefix(fmt):
    """The modes of a sparse format's leading dense levels: its first position array has one
    entry per point of them (CSR: a row pointer of shape[0] + 1 entries)."""
    modes = []
    for l, lv in enumerate(fmt.levels):
        if lv.is_sparse:
            break
        modes.append(fmt.order[l])
    return modes


def _guard_positions(stmt, fmt, idt, shape, name):
    """The memory guard for a sparse result's position array over its dense levels, which is as
    large as those levels whatever the nonzeros (a CSR result with 2**33 rows)."""
    modes = _dense_prefix(fmt)
    if modes:
        count = math.prod(shape[m] for m in modes) + 1
        n = count * np.dtype(idt).itemsize
        if n >= GUARD_MIN:
            memory.check_dense(n, (count,), lambda: f"the positions over the dense levels of the "
                                                    f"sparse result of {stmt!r}", name)


def _NOTHING():  # a dead weak reference: no storage chose the plan yet
    return None


# the memory limit on the warm path: the value for the environment last read, unless the
# variable was set since (memory.LAST), with no call
LIMIT_LINE = ("    lc = LIM[0]; lim = lc[1] if RAW_GET(RAW_KEY) is lc[0] else limit()"
              if memory.RAW_GET is not None else "    lim = limit()")


def _bind(stmt0, extra, runner, out_fmt, density_rule, sparse_out, ws=None, sdec=(),
          dense_walk=False):
    """The warm path of one plan: a function ``(sts, shape, name)`` returning the result, or
    None when the plan does not apply. Its checks are generated into the runner's glue
    (``Runner.bind``), so that a warm call is one frame from here to the wrapped result.
    ``ws``: (levels outside the workspace, the result's mode order, policy, union) of a
    workspace plan, whose policy and capacity are chosen again on every call, as
    ``_workspace`` does; ``union``: a sum of sparse terms, whose "policy" may be "append".
    ``dense_walk``: the kernel walks a sparse operand's implicit zeros, so the work guard
    (runtime/work.py) checks its extents on every call."""
    stmt, mode = runner.spec.stmt, runner.spec.mode
    env = dict(STMT0=stmt0,  # (holds the statement whose id is the key)
               STMT=stmt, MODE=mode, OUT_FMT=out_fmt, RULE=density_rule, CHOSE=[_NOTHING],
               limit=memory.limit, LIM=memory.LAST, RAW_GET=memory.RAW_GET,
               RAW_KEY=memory._RAW_KEY, guard=_guard, STATS=STATS, LOGGING=_LOGGING, LOG=_LOG,
               ITEM=(runner.spec, runner))
    L = []
    if extra:  # operands used in several places of the statement, split into slots
        L.append("sts = [*sts, " + "".join(f"sts[{int(k)}], " for k in extra) + "]")
    if sdec:  # the plan holds for these decisions on 0-d operands' values only
        env.update(SDEC=PL.scalar_decisions, DEC=sdec)
        L += ["if SDEC(STMT, sts) != DEC:", "    return None"]
    if density_rule is not None:
        # the verdict of the density rule, remembered for the storage it reads when it reads
        # one (A @ x, A.sum(axis)): storages are immutable, so the same storage gives the same
        # verdict
        if len(density_rule.slots) == 1:
            k0 = int(density_rule.slots[0])
            # (only a storage that chose this plan is remembered: one test on the hit path)
            L += [f"if CHOSE[0]() is not sts[{k0}]:",
                  "    if RULE(sts, shape) is not OUT_FMT:",
                  "        return None",
                  f"    CHOSE[0] = wref(sts[{k0}])"]
        else:
            L += ["if RULE(sts, shape) is not OUT_FMT:", "    return None"]
    size = " * ".join(f"shape[{j}]" for j in range(len(stmt.out_indices))) or "1"
    if sparse_out:
        L += [f"if {size} > {int(PL.INT32_MAX)}:", "    return None  # int64 indices: planned again"]
        fmt = runner.spec.output.format
        modes = _dense_prefix(fmt)
        if modes:  # the guard for the position array over the dense levels, inline
            env.update(guard_pos=_guard_positions, FMT=fmt, IDT=runner.spec.output.index_dtype)
            npos = " * ".join(f"shape[{int(m)}]" for m in modes)
            isz = np.dtype(runner.spec.output.index_dtype).itemsize
            L += [f"if ({npos} + 1) * {int(isz)} >= {int(GUARD_MIN)}:",
                  LIMIT_LINE,
                  f"    if lim is not None and ({npos} + 1) * {int(isz)} > lim:",
                  "        guard_pos(STMT, FMT, IDT, shape, name)"]
    else:  # the memory guard for a dense result, inline (it raises only over the limit)
        isz = np.dtype(stmt.dtype).itemsize + (8 if mode == "dense-count" else 0)
        L += [f"nbytes = {size} * {int(isz)}",
              f"if nbytes >= {int(GUARD_MIN)}:",
              LIMIT_LINE,
              "    if lim is not None and nbytes > lim:",
              "        guard(STMT, MODE, shape, name)"]
    if dense_walk:  # (a kernel that visits every point: the check costs nothing beside it)
        env.update(WCHECK=W.check, EXTENTS=PL.extents)
        L.append("WCHECK(STMT, EXTENTS(STMT, sts, shape), name)")
    if ws is not None:
        h, order, policy, union = ws
        ext = [f"shape[{int(m)}]" for m in order]
        env.update(WS_DECIDE=WS.decide_union if union else WS.decide, INSERTS=_inserts, WS_CALL=WS_CALL, WS_FORCED=WS_FORCED,
                   POLICY=policy)
        L += ["if WS_FORCED.choice is not None or LOGGING[0]:",
              # explain's reason for the choice is made by the planning path, for these sizes
              "    return None  # a schedule's choice, or explain: planned",
              f"if {' * '.join(ext[h:]) or '1'} >= {int(WS.KEY_LIMIT)}:",
              "    return None",
              LIMIT_LINE.strip(),
              f"pc = WS_DECIDE(({''.join(e + ', ' for e in ext[h:])}), {' * '.join(ext[:h]) or '1'}, "
              f"INSERTS(sts), {int(np.dtype(stmt.dtype).itemsize)}, lim)",
              "if pc[0] != POLICY:",
              "    return None  # another policy: planned",
              "WS_CALL.capacity = pc[1]"]
    L += ['STATS["plan_hits"] += 1',
          # (a thread-local miss raises inside getattr: only looked up while some log is open)
          "if LOGGING[0]:",
          "    log = getattr(LOG, 'items', None)",
          "    if log is not None:",
          "        log.append(ITEM)"]
    return runner.bind(L, env)


def _relabel_view(stmt, src, out_fmt, out_shape, req_format=None):
    """The view a relabelling of ``src`` is (``A.T`` of a CSR array: its arrays as CSC), or
    None when it is not one. Made once per source storage and kept in its ``stats`` (storages
    never change) under the statement and the format asked for (None: the inferred one, which
    for a relabelling depends on the operand's format alone): the same view object every call
    keeps its spec and the next kernel's bound buffers, and ``Array.materialize`` finds it
    without planning (``Array._known``). A fresh view a call made ``A.T @ x`` on cora 72-92 us
    against 26-37 on a CSC operand: a new Format, spec, DAG key and glue binding per call."""
    stats = src.memo()
    key = ("view", stmt, req_format)
    view = stats.get(key)
    if view is None:
        view = _new_view(stmt, src, out_fmt, out_shape)
        if view is not None:  # (threads that made one each at once all return the one kept)
            view = stats.setdefault(key, view)
    return view


def _mirrored(stmt, fmt):
    """The format whose arrays a relabelling of an operand in ``fmt`` reads as they are."""
    acc = stmt.expr
    return Format(fmt.levels, tuple(stmt.out_indices.index(acc.indices[m]) for m in fmt.order))


def _is_view(stmt, src_fmt, out_fmt):
    """Whether the relabelling ``stmt`` of an operand in ``src_fmt`` is a view in ``out_fmt``."""
    if src_fmt.is_dense:
        return out_fmt.is_dense
    return _mirrored(stmt, src_fmt) == out_fmt


def _new_view(stmt, src, out_fmt, out_shape):
    if not _is_view(stmt, src.format, out_fmt):
        return None
    if src.format.is_dense:
        perm = [stmt.expr.indices.index(ix) for ix in stmt.out_indices]
        return Storage.wrap_dense(np.transpose(src.vals, perm))
    return Storage(out_shape, out_fmt, src.pos, src.crd, src.vals, src.index_dtype)


def convert_storage(st: Storage, fmt: Format) -> Storage:
    """Change a storage's format with a generated kernel (``out[i..] = A[i..]``)."""
    return execute(identity_statement(st.ndim, st.dtype), [st], st.shape, fmt, name="asformat")


_SPECS = {}
_SPECS_LOCK = threading.Lock()


def _get_runner(spec):
    r = _SPECS.get(spec)
    if r is not None:
        return r
    with _SPECS_LOCK:
        r = _SPECS.get(spec)
        if r is None:
            from lazysparse.compiler.runner import Runner
            r = Runner(spec)
            _SPECS[spec] = r
    return r


_LOG = threading.local()
_LOGGING = [0]  # open kernel_logs in any thread
_LOGGING_LOCK = threading.Lock()


class kernel_log:
    """Context manager collecting ``(KernelSpec, Runner)`` of every kernel run in this thread."""

    def __enter__(self):
        self.items = []
        self._prev = getattr(_LOG, "items", None)
        _LOG.items = self.items
        with _LOGGING_LOCK:
            _LOGGING[0] += 1
        return self.items

    def __exit__(self, *exc):
        _LOG.items = self._prev
        with _LOGGING_LOCK:
            _LOGGING[0] -= 1


def plan_cache_clear():
    _BOUND.clear()
    _BINDS.clear()
    _RULES.clear()
    _RUNNERS.clear()
    _SPECS.clear()
    _ANALYSIS.clear()
    _ORDERS.clear()
    _LOOP_PLANS.clear()


def _plan_cache_info():
    return STATS["plan_hits"], len(_RUNNERS)


def _reset_plan_hits():
    STATS["plan_hits"] = 0


kernel_cache.register_plan_cache(_plan_cache_info, plan_cache_clear, _reset_plan_hits)
