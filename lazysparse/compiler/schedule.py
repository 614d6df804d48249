"""``ls.Schedule``: how a performance engineer steers the compiler (Halide's split between the
algorithm, the lazy expression, and its schedule). It carries the workspace choice ("Compilation
of Modular and General Sparse Workspaces"), which kernels apply, and the loop transformations of
"A Sparse Iteration Space Transformation Framework for Sparse Tensor Algebra" (``split``,
``divide``, ``fuse``, ``pos``, ``bound``, ``reorder``, ``unroll``, ``parallelize``), which are
recorded and checked against their provenance (lazysparse/ir/provenance.py) as they are written,
bound to a kernel's statement by compiler/plan/loops.py and emitted by
compiler/lower/tiling.py."""
from __future__ import annotations

import threading

import re
from contextlib import contextmanager
from dataclasses import dataclass

from lazysparse.compiler.loopir.support import POLICIES  # the workspace policies' registry
from lazysparse.errors import shown
from lazysparse.ir import provenance as PV

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
UNITS = ("cpu-thread", "cpu-vector")
RACES = ("no-races", "ignore-races", "atomics", "temporary", "parallel-reduction")
# loop transformations: recorded and checked here, bound to kernels by compiler/plan/loops.py
LOOP_STEPS = ("split", "divide", "fuse", "pos", "bound", "reorder", "unroll", "parallelize")


# The schedule being applied in each thread (``Schedule.apply``), read by the planner.
class _Forced(threading.local):
    """.choice: (policy, capacity) from an ls.Schedule being applied in this thread. The class
    default makes a read in a thread that never set it a plain lookup: an attribute miss on a
    ``threading.local`` raises inside, which costs 8-35 µs on a cold interpreter (the bound
    workspace plans read it on every call)."""
    choice = None


WS_FORCED = _Forced()


class _Loops(threading.local):
    """.schedule: the ls.Schedule whose loop transformations the kernels planned in this
    thread follow (compiler/plan/loops.py); None: the compiler's own schedule."""
    schedule = None


LOOPS_FORCED = _Loops()


@dataclass(frozen=True)
class Schedule:
    """The steps recorded so far; every method returns a new ``Schedule`` with its step added.

    >>> import lazysparse as ls
    >>> ls.Schedule().workspace("hash", capacity=64)
    Schedule().workspace('hash', capacity=64)
    >>> ls.Schedule().split("i", "i0", "i1", 32).parallelize("i0")
    Schedule().split('i', 'i0', 'i1', 32).parallelize('i0', unit='cpu-thread', races='no-races')
    """
    steps: tuple = ()

    def workspace(self, policy: str, capacity: int | None = None) -> "Schedule":
        """Assemble scattered sparse results through the accumulation ``policy`` ("dense",
        "hash", "coord", "bucket", or one added with ``lazysparse.compiler.lower.workspace.register_policy``),
        sorting and merging it every ``capacity`` entries (default: the cost model's)."""
        if policy not in POLICIES:
            raise ValueError(f"Schedule.workspace: unknown policy {shown(policy)}; "
                             f"choose from {sorted(POLICIES)}")
        if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int)
                                     or capacity < 1):
            raise ValueError(f"Schedule.workspace: capacity must be a positive int, got {shown(capacity)}")
        return Schedule(self.steps + (("workspace", policy, capacity),))

    # -- loop transformations (the scheduling paper) -----------------------------------------------------------
    def split(self, var: str, outer: str, inner: str, factor: int) -> "Schedule":
        """Loop ``var`` as ``outer`` and ``inner``, the inner running ``factor`` times (a position
        variable's split tiles nonzeros evenly, a coordinate's the index range)."""
        return self._derive("split", PV.Split(*self._names("split", var, outer, inner), factor=factor),
                            (var, outer, inner, factor))

    def divide(self, var: str, outer: str, inner: str, parts: int) -> "Schedule":
        """Loop ``var`` as ``outer`` and ``inner``, the outer running ``parts`` times."""
        return self._derive("divide", PV.Split(*self._names("divide", var, outer, inner), factor=parts, up=True),
                            (var, outer, inner, parts))

    def fuse(self, outer: str, inner: str, fused: str) -> "Schedule":
        """One loop ``fused`` over the directly nested ``outer`` and ``inner``, in the same order."""
        return self._derive("fuse", PV.Fuse(*self._names("fuse", outer, inner, fused)), (outer, inner, fused))

    def pos(self, var: str, p: str, access: str) -> "Schedule":
        """Loop ``p`` over the positions of operand ``access``'s stored entries that ``var``
        (a coordinate variable, or a fuse of them) would visit."""
        return self._derive("pos", PV.Pos(*self._names("pos", var, p, access)), (var, p, access))

    def bound(self, var: str, bound: str, value: int) -> "Schedule":
        """The fact that ``var`` ranges below ``value`` on every input (a constant trip count)."""
        return self._derive("bound", PV.Bound(*self._names("bound", var, bound), value=value), (var, bound, value))

    def reorder(self, *variables: str) -> "Schedule":
        """Run the loops over ``variables`` in this order."""
        names = self._names("reorder", *variables)
        if len(set(names)) != len(names) or len(names) < 2:
            raise ValueError(f"Schedule.reorder: give two or more distinct index variables, got {shown(variables)}")
        return self._step("reorder", tuple(names))

    def unroll(self, var: str, factor: int) -> "Schedule":
        """Unroll the loop over ``var`` by ``factor``."""
        (var,) = self._names("unroll", var)
        self._factor("unroll", factor)
        return self._step("unroll", (var, factor))

    def parallelize(self, var: str, unit: str = "cpu-thread", races: str = "no-races") -> "Schedule":
        """Run the loop over ``var`` on ``unit`` ("cpu-thread" or "cpu-vector"); ``races`` says
        how results written by several iterations combine ("no-races", "ignore-races",
        "atomics", "temporary", "parallel-reduction"). Nothing may follow it."""
        (var,) = self._names("parallelize", var)
        if unit not in UNITS:
            raise ValueError(f"Schedule.parallelize: unknown unit {shown(unit)}; choose from {list(UNITS)}")
        if races not in RACES:
            raise ValueError(f"Schedule.parallelize: unknown race strategy {shown(races)}; choose from {list(RACES)}")
        return self._step("parallelize", (var, unit, races))

    @property
    def provenance(self) -> PV.Provenance:
        """The provenance graph of the recorded transformations (roots: the variables they
        start from)."""
        g = PV.Provenance(())
        for st in self.steps:
            if st[0] in ("split", "divide", "fuse", "pos", "bound"):
                g = _with_roots(g, st[-1]).derive(st[-1])
        return g

    def _names(self, op, *names):
        for n in names:
            if not isinstance(n, str) or not _NAME.fullmatch(n):
                raise ValueError(f"Schedule.{op}: names are identifiers (letters, digits, _), got {shown(n)}")
        return names

    @staticmethod
    def _factor(op, f):
        if isinstance(f, bool) or not isinstance(f, int) or f < 1:
            raise ValueError(f"Schedule.{op}: the factor must be a positive int, got {shown(f)}")

    def _step(self, name, args, rel=None):
        par = [s for s in self.steps if s[0] == "parallelize"]
        if name == "parallelize" and par:
            # several units (threads, then vector lanes) on different loops, as TACO's schedules
            if args[0] in [s[1][0] for s in par]:
                raise ValueError(f"Schedule.parallelize: the loop over {args[0]!r} is already parallel")
        elif par:
            raise ValueError(f"Schedule.{name}: no transformation may follow parallelize "
                             f"(the loop over {par[0][1][0]!r} is already parallel)")
        return Schedule(self.steps + ((name, args) if rel is None else (name, args, rel),))

    def _derive(self, name, rel, args):
        if isinstance(rel, PV.Split):
            self._factor(name, rel.factor)
        if isinstance(rel, PV.Bound):
            self._factor(name, rel.value)
        try:
            _with_roots(self.provenance, rel).derive(rel)
        except PV.ProvenanceError as e:
            raise ValueError(f"Schedule.{e}") from None
        return self._step(name, args, rel)

    @contextmanager
    def apply(self):
        """Within this block, kernels this thread plans follow the schedule."""
        prev, prev_loops = WS_FORCED.choice, LOOPS_FORCED.schedule
        ws = [s for s in self.steps if s[0] == "workspace"]
        WS_FORCED.choice = ws[-1][1:] if ws else prev
        if any(s[0] in LOOP_STEPS for s in self.steps):
            LOOPS_FORCED.schedule = self
        try:
            yield self
        finally:
            WS_FORCED.choice, LOOPS_FORCED.schedule = prev, prev_loops

    def __repr__(self):
        out = "Schedule()"
        for st in self.steps:
            if st[0] == "workspace":
                _, policy, cap = st
                out += f".workspace({policy!r}" + (f", capacity={cap}" if cap is not None else "") + ")"
            elif st[0] == "parallelize":
                var, unit, races = st[1]
                out += f".parallelize({var!r}, unit={unit!r}, races={races!r})"
            else:
                out += f".{st[0]}(" + ", ".join(repr(a) for a in st[1]) + ")"
        return out


def _with_roots(g: PV.Provenance, rel) -> PV.Provenance:
    """``g`` with the sources of ``rel`` that it has never seen taken as original variables (a
    schedule is written before it meets a statement: the statement checks them when applied)."""
    new = [s for s in rel.sources if s not in g.variables]
    return PV.Provenance(g.roots + tuple(new), g.relations) if new else g
