"""The autoscheduler's template space (the autoscheduler of "A Sparse Iteration Space Transformation
Framework for Sparse Tensor Algebra"): the schedules worth trying for a kernel, as command sequences
with their split sizes left open, and how much of the whole space the rules prune.

Stage 1 fixes the loops (partition): a collapse of adjacent variables whose inner one is not
dense (rule 1), each variable split at most once (rule 2), collapsed variables always split in
position space (rule 3), compressed variables never split in coordinates: their splits are
``pos`` + ``split`` (rule 4). Stage 2 orders the loops (every order the formats allow: an
operand's levels in storage order, a split's outer loop before its inner one) and places the
parallel units. CPU: only the outermost loop may run on threads, and only if it does not come
from a collapse; a split whose two loops end up adjacent with neither parallel is dropped (the
template without it is already in the list). GPU: blocks, warps and threads on the outermost
loops in that order, blocks only on loads balanced by position (the collapse of every sparse
variable), warps and threads only on constant-size loops (a split's inner loop).

``space_size`` counts the unpruned space the same way (any adjacent collapse, every variable
unsplit, split once or twice in either space, every order, every placement of units), so the ratio
is the pruning the rules achieve (the paper's, at least 100x for SpMM). ``instantiate`` turns a CPU
template and sizes into an ``ls.Schedule`` that kernels run (compiler/plan/loops.py), which is how
the tests check templates against the oracle. Choosing among templates by a cost model is not done
yet: the compiler's default schedule stays the one in lower/, with two decisions read off the data:
the thread count (compiler/lower/teams.py, ``team_size``) and row chunks or nonzero tiles
(compiler/plan/skew.py).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from lazysparse.ir.nodes import Index
from lazysparse.compiler.plan.kernel import level_vars


@dataclass(frozen=True)
class Problem:
    """What the rules read off a kernel: its variables in a valid order, which are dense, the
    sparse operands' level chains (by name), each chain's operand name, the reductions."""
    vars: tuple
    dense: frozenset
    chains: tuple      # ((operand name, (var, ...)), ...)
    reductions: frozenset


def problem(stmt, specs, order) -> Problem:
    from lazysparse.ir.nodes import accesses_of
    chains, sparse = [], set()
    for a in accesses_of(stmt.expr):
        sp = specs[a.operand]
        if sp.dense:
            continue
        lv = level_vars(a, sp.format)
        chain = tuple(v.name for v in lv if isinstance(v, Index))
        chains.append((f"T{a.operand}", chain))
        for v, l in zip(lv, sp.format.levels):
            if isinstance(v, Index) and l.is_sparse:
                sparse.add(v.name)
    names = tuple(v.name for v in order)
    return Problem(names, frozenset(n for n in names if n not in sparse), tuple(chains),
                   frozenset(v.name for v in stmt.reduce_indices))


# -- stage 1: partitions -------------------------------------------------------------------------
def collapses(pb: Problem, pruned=True):
    """Groups of two or more variables to collapse: contiguous runs of an operand's chain (the
    levels a ``pos`` can walk), the inner ones not dense (rule 1); ``()`` is no collapse."""
    out = [()]
    for opname, chain in pb.chains:
        for a in range(len(chain)):
            for b in range(a + 2, len(chain) + 1):
                g = chain[a:b]
                if pruned and any(v in pb.dense for v in g[1:]):
                    continue
                if (g, opname) not in out:
                    out.append((g, opname))
    if not pruned:  # any two variables next to each other in some order
        for x, y in itertools.permutations(pb.vars, 2):
            g = ((x, y), None)
            if all(g[0] != c[0] for c in out[1:]):
                out.append(g)
    return out


def _loops_of(pb, collapse):
    """The variables left after a collapse (the fused one named ``f``), and their kinds."""
    if not collapse:
        return list(pb.vars), {}
    group, opname = collapse
    rest = [v for v in pb.vars if v not in group]
    at = min(pb.vars.index(v) for v in group)
    loops = rest[:]
    loops.insert(len([v for v in rest if pb.vars.index(v) < at]), "f")
    return loops, {"f": group}


def split_choices(pb: Problem, v, fused):
    """How variable ``v`` may be split (None, "coord" or "pos"), under rules 2-4."""
    if v in fused:
        return ["pos"]                      # rule 3: always, in position space
    if v in pb.dense:
        return [None, "coord"]
    return [None, "pos"]                    # rule 4: never a coordinate split of a compressed one


def partitions(pb: Problem):
    """Stage 1: (collapse, {loop: split kind}) for every kept choice."""
    out = []
    for c in collapses(pb):
        loops, fused = _loops_of(pb, c)
        for combo in itertools.product(*[split_choices(pb, v, fused) for v in loops]):
            out.append((c, dict(zip(loops, combo))))
    return out


# -- stage 2: orders and units --------------------------------------------------------------------
def _leaf_loops(splits):
    """Loop names after splitting: ``v`` split gives ``v0`` (outer) and ``v1`` (inner); a
    position split walks ``vp`` first."""
    out, origin = [], {}
    for v, kind in splits.items():
        if kind is None:
            out.append(v)
            origin[v] = v
        else:
            base = f"{v}p" if kind == "pos" else v
            out += [f"{base}0", f"{base}1"]
            origin[f"{base}0"] = origin[f"{base}1"] = v
    return out, origin


def _constraints(pb, fused, splits, origin):
    """Pairs (a, b): loop a must run outside loop b."""
    cons = []
    for v, kind in splits.items():
        if kind is not None:
            base = f"{v}p" if kind == "pos" else v
            cons.append((f"{base}0", f"{base}1"))
    for _, chain in pb.chains:
        # an operand's levels in storage order: a fused group counts at its first level
        seq = []
        for v in chain:
            w = "f" if any(v in g for g in fused.values()) else v
            if w not in seq:
                seq.append(w)
        for x, y in zip(seq, seq[1:]):
            for a in [lp for lp, o in origin.items() if o == x]:
                for b in [lp for lp, o in origin.items() if o == y]:
                    cons.append((a, b))
    return cons


def _orders(loops, cons):
    for perm in itertools.permutations(loops):
        at = {v: k for k, v in enumerate(perm)}
        if all(at[a] < at[b] for a, b in cons):
            yield perm


@dataclass(frozen=True)
class Template:
    collapse: tuple        # (group of variables, operand name) or ()
    splits: tuple          # ((variable or "f", None | "coord" | "pos"), ...)
    order: tuple           # the loops, outermost first
    units: tuple           # ((loop, unit), ...)
    commands: tuple        # the schedule, split sizes as "S0", "S1", ...

    def __str__(self):
        return ".".join(f"{c[0]}({', '.join(map(str, c[1:]))})" for c in self.commands)


def templates(pb: Problem, target="cpu"):
    """Stage 2 over every stage-1 partition: the pruned template list."""
    out = []
    for collapse, splits in partitions(pb):
        fused = {"f": collapse[0]} if collapse else {}
        loops, origin = _leaf_loops(splits)
        cons = _constraints(pb, fused, splits, origin)
        for order in _orders(loops, cons):
            for units in _units(pb, order, origin, splits, fused, target):
                if target == "cpu" and _idle_split(order, splits, units, fused):
                    continue
                out.append(_template(pb, collapse, splits, order, units))
    return out


def _units(pb, order, origin, splits, fused, target):
    if target == "cpu":
        first = order[0]
        # rule 1: only the outermost loop, and not one that comes from a collapse
        yield (((first, "cpu-thread"),) if origin[first] != "f" else ())
        return
    sparse = {v for v in pb.vars if v not in pb.dense}
    balanced = bool(fused) and sparse <= set(fused["f"])
    const = {lp for lp in order if lp.endswith("1") and splits.get(origin[lp]) is not None}
    if not balanced:
        return  # load-balanced only: the collapse of every sparse variable, walked by position
    first = order[0]
    if origin[first] != "f" or first.endswith("1"):
        return
    # blocks on the outermost loop; warps and threads on constant-size loops nested in order
    inner = [lp for lp in order[1:] if lp in const]
    for k in (1, 2):
        for pick in itertools.combinations(inner, k):
            names = ("gpu-thread",) if k == 1 else ("gpu-warp", "gpu-thread")
            yield ((first, "gpu-block"),) + tuple(zip(pick, names))


def _idle_split(order, splits, units, fused):
    """CPU rule 2: a split (other than a collapse's) whose loops stay adjacent, neither parallel."""
    par = {lp for lp, _ in units}
    for v, kind in splits.items():
        if kind is None or v == "f":
            continue
        base = f"{v}p" if kind == "pos" else v
        a, b = order.index(f"{base}0"), order.index(f"{base}1")
        if b == a + 1 and f"{base}0" not in par:
            return True
    return False


def _template(pb, collapse, splits, order, units):
    cmds, n = [], 0
    access = collapse[1] if collapse else None
    if collapse:
        group = collapse[0]
        acc = group[0]
        for k, v in enumerate(group[1:]):
            name = "f" if k == len(group) - 2 else f"f{k}"
            cmds.append(("fuse", acc, v, name))
            acc = name
    for v, kind in splits.items():
        if kind is None:
            continue
        if kind == "pos":
            op = access if v == "f" else next(o for o, ch in pb.chains if v in ch)
            cmds.append(("pos", v, f"{v}p", op))
            cmds.append(("split", f"{v}p", f"{v}p0", f"{v}p1", f"S{n}"))
        else:
            cmds.append(("split", v, f"{v}0", f"{v}1", f"S{n}"))
        n += 1
    cmds.append(("reorder",) + tuple(order))
    for lp, unit in units:
        cmds.append(("parallelize", lp, unit))
    return Template(collapse, tuple(splits.items()), tuple(order), tuple(units), tuple(cmds))


# -- the unpruned space -----------------------------------------------------------------------------
def space_size(pb: Problem, target="cpu") -> int:
    """How many templates the same generator makes with the rules off: any group of variables
    adjacent in storage order collapsed (dense inner ones too) or none, every loop (a collapsed
    one included) unsplit or split once in either space, every order that keeps a split's outer
    loop outside its inner one, and the units placed anywhere (CPU: threads on any one loop or
    none; GPU: blocks, warps and threads each on any loop or unused, on distinct loops). The
    structural limits (one split per variable, one thread loop on a CPU) are kept, so the ratio
    to ``len(templates(...))`` is what the rules prune."""
    total = 0
    for c in collapses(pb, pruned=False):
        nvars = len(pb.vars) - (len(c[0]) - 1 if c else 0)
        for split in itertools.product((0, 1, 1), repeat=nvars):  # none, coord, pos
            s = sum(split)
            loops = nvars + s
            orders = math.factorial(loops) // (2 ** s)
            if target == "cpu":
                units = loops + 1
            else:
                units = sum(math.comb(3, m) * math.perm(loops, m) for m in range(4))
            total += orders * units
    return total


# -- templates as schedules -----------------------------------------------------------------------
def instantiate(t: Template, sizes, reductions=frozenset()):
    """A CPU template with its sizes (``{"S0": 32, ...}``) as an ``ls.Schedule``; threads on a
    loop that runs a reduction add atomically."""
    from lazysparse.compiler.schedule import Schedule
    s = Schedule()
    group = t.collapse[0] if t.collapse else ()
    _, origin = _leaf_loops(dict(t.splits))
    for c in t.commands:
        if c[0] == "fuse":
            s = s.fuse(c[1], c[2], c[3])
        elif c[0] == "pos":
            s = s.pos(c[1], c[2], c[3])
        elif c[0] == "split":
            s = s.split(c[1], c[2], c[3], sizes[c[4]])
        elif c[0] == "reorder":
            s = s.reorder(*c[1:]) if len(c) > 2 else s
        elif c[0] == "parallelize":
            lp = c[1]
            roots = set(group) if origin[lp] == "f" else {origin[lp]}
            races = "atomics" if roots & set(reductions) else "no-races"
            s = s.parallelize(lp, unit=c[2], races=races)
    return s
