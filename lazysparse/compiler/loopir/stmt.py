"""Statements of the loop IR as frozen data: declarations typed by dtype, assignments and
compound updates, reductions with NumPy's semantics, loops (plain, parallel with their schedule,
with unroll and SIMD hints), conditionals, jumps, atomics, barriers, allocation and copies,
prefetches, SIMD stores, calls of named support routines, and guards for code only some
targets have. Bodies are ``loopir.nodes.Block`` builders (filled while lowering; ``freeze``
makes a tree immutable). Printers spell them (compiler/codegen/c/printer.py)."""
from __future__ import annotations

from dataclasses import dataclass


class Stmt:
    """Base of the statement nodes. Their ``oneline`` fields are layout hints for printers of
    text (the statement on one line); they carry no meaning."""
    __slots__ = ()


@dataclass(frozen=True)
class Declare(Stmt):
    """A variable ``name`` of ``type`` (loopir.types), initialised to ``init`` when given;
    ``const``: never assigned again. ``more``: ``(name, init)`` of further variables of the
    same type, declared with it."""
    name: str
    type: object
    init: object = None
    const: bool = False
    more: tuple = ()


@dataclass(frozen=True)
class Assign(Stmt):
    """``target = value`` (``target``: a Var, a Load (a store), a Field; or a tuple of them,
    each set to ``value``)."""
    target: object
    value: object


@dataclass(frozen=True)
class Update(Stmt):
    """``target op= value`` (``op``: a binary operator of loopir.expr.BINARY). ``compound``
    (layout): printed as a compound assignment even where an increment would do."""
    target: object
    op: str
    value: object
    compound: bool = False


@dataclass(frozen=True)
class Reduce(Stmt):
    """Fold ``value`` into ``target`` with reduction ``op`` ("sum", "prod", "max", "min") on
    values of ``dtype``, with NumPy's semantics (a max propagates NaN)."""
    op: str
    target: object
    value: object
    dtype: str


@dataclass(frozen=True)
class ExprStmt(Stmt):
    """An expression evaluated for its effect (a support routine's call)."""
    expr: object


@dataclass(frozen=True)
class Reduction:
    """A variable a loop's lanes or threads each accumulate privately, combined with ``op``
    ("+", "*", "max", "min") after it."""
    op: str
    var: str


@dataclass(frozen=True)
class SimdHint:
    """The loop's iterations may run in SIMD lanes (``reductions``: each lane's private copies).
    ``merged`` (layout): the reductions of one operator named together."""
    reductions: tuple = ()
    merged: bool = False


@dataclass(frozen=True)
class Schedule:
    """How a parallel loop's iterations go to threads: ``static`` or ``dynamic`` chunks of
    ``chunk`` iterations (None: the runtime's default)."""
    kind: str = "static"
    chunk: object = None


@dataclass(frozen=True)
class Worksharing:
    """A loop inside a ``Parallel`` region whose iterations the team's threads share out by
    ``schedule`` (each iteration run once, by one thread); ``nowait``: a thread goes on past
    the loop without waiting for the others."""
    schedule: Schedule = Schedule()
    nowait: bool = False


@dataclass(frozen=True)
class For(Stmt):
    """``for var in [lo, hi)`` (``step``: a statement advancing ``var``; None: by one), the
    variable of the index type declared by the loop; ``cond``: the loop runs while it holds
    instead of while ``var < hi`` (``hi`` then None). ``worksharing``: a Worksharing, the loop's
    iterations shared out among the threads of the region around it. ``unroll``: unroll by this factor;
    ``simd``: a SimdHint. ``oneline`` (layout): the loop and its one statement on one line;
    ``brace_line`` (layout): the body's braces on lines of their own."""
    var: str
    lo: object
    hi: object
    body: object
    step: object = None
    unroll: int = None
    simd: SimdHint = None
    oneline: bool = False
    cond: object = None
    brace_line: bool = False
    worksharing: Worksharing = None


@dataclass(frozen=True)
class ParallelFor(Stmt):
    """A ``For`` whose iterations run on a team of ``threads`` (None: the runtime's default),
    in parallel only when ``when`` holds; ``reductions``: Reduction of each thread's copy."""
    loop: For
    schedule: Schedule = Schedule()
    threads: object = None
    when: object = None
    reductions: tuple = ()


@dataclass(frozen=True)
class Parallel(Stmt):
    """``body`` run by each thread of a team (see ParallelFor)."""
    body: object
    threads: object = None
    when: object = None
    reductions: tuple = ()


@dataclass(frozen=True)
class Barrier(Stmt):
    """Every thread of the team waits here for the others."""


ATOMIC_KINDS = frozenset(("update", "read", "write", "capture"))


@dataclass(frozen=True)
class Atomic(Stmt):
    """``stmt`` (an Update, an Assign, or for ``capture`` an Assign whose value is an update's
    result) done atomically with respect to other threads. ``relaxed``: a ``write`` that orders
    nothing else (a flag only read after the threads join)."""
    stmt: Stmt
    kind: str = "update"
    relaxed: bool = False

    def __post_init__(self):
        if self.kind not in ATOMIC_KINDS:
            raise ValueError(f"unknown atomic kind {self.kind!r}")


@dataclass(frozen=True)
class Tally(Stmt):
    """An instrumented build's count (ls.opcount): ``n`` added to counter ``counter``, a relaxed
    atomic add (compiler/lower/counting.py lays the counters out)."""
    counter: int
    n: object


@dataclass(frozen=True)
class While(Stmt):
    """``while cond: body`` (``step``: a statement run after each iteration, then ``cond``)."""
    cond: object
    body: object
    step: object = None
    oneline: bool = False


@dataclass(frozen=True)
class If(Stmt):
    """``if cond: then else: orelse``. ``bare`` (layout, with ``oneline``): the one statement of
    ``then`` printed without braces, whatever it is."""
    cond: object
    then: object
    orelse: object = None
    oneline: bool = False
    bare: bool = False

    def __post_init__(self):
        if self.bare and (not self.oneline or self.orelse is not None):
            raise ValueError("If: a bare arm is a one-line if's, without an else")


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class Return(Stmt):
    value: object = None


@dataclass(frozen=True)
class Fail(Stmt):
    """Leave through the kernel's failure path (out of memory): what it allocated is freed."""


@dataclass(frozen=True)
class FailPath(Stmt):
    """Where ``Fail`` lands: the kernel's failure path starts here."""


@dataclass(frozen=True)
class Recover(Stmt):
    """``body``, a failure inside which (``Fail``, or a support routine's out of memory) goes to
    ``handler`` instead of the kernel's failure path; then ``then``, which must leave (a
    ``Continue``: the handler is reached only through a failure); then ``handler``. ``name``
    names the handler's entry among others in the kernel."""
    body: object
    then: object
    handler: object
    name: str = "tfail"


@dataclass(frozen=True)
class Free(Stmt):
    """Release an array that Alloc made (a null one is fine)."""
    target: object


@dataclass(frozen=True)
class Memset(Stmt):
    """Every byte of ``count`` elements of ``elem`` at ``dst`` set to ``byte`` (0 or 0xff)."""
    dst: object
    byte: int
    count: object
    elem: object


@dataclass(frozen=True)
class Memcpy(Stmt):
    """``count`` elements of ``elem`` copied from ``src`` to ``dst`` (no overlap)."""
    dst: object
    src: object
    count: object
    elem: object


@dataclass(frozen=True)
class Grow(Stmt):
    """Make the array ``ptr`` of ``elem`` (capacity variable ``cap``) hold at least ``need``:
    doubled or grown to ``need``, the failure path when out of memory."""
    elem: object
    ptr: object
    cap: object
    need: object


@dataclass(frozen=True)
class Resize(Stmt):
    """Reallocate the array ``ptr`` of ``elem`` to ``n`` elements (at least one)."""
    elem: object
    ptr: object
    n: object


@dataclass(frozen=True)
class Fit(Stmt):
    """Shrink the array ``ptr`` of ``elem`` (capacity variable ``cap``) to ``n`` elements when
    over an eighth of it is spare."""
    elem: object
    ptr: object
    n: object
    cap: object


@dataclass(frozen=True)
class Prefetch(Stmt):
    """Ask for the cache line ``ahead`` bytes past the address ``addr`` (a pointer expression):
    never dereferenced (past an array's end too). ``write``: for a store; ``locality``: 0 (used
    once) to 3 (kept: a plain prefetch of an element's address, as ``Prefetch(AddrOf(x), 0,
    False, 3)``)."""
    addr: object
    ahead: int = 0
    write: bool = False
    locality: int = 0


@dataclass(frozen=True)
class VStore(Stmt):
    """The lanes of ``value`` (on in ``mask``) stored consecutively at ``ptr``."""
    vt: object
    ptr: object
    value: object
    mask: object = None


# features a target may lack: the code under a guard is compiled only where it has them
FEATURES = frozenset(("avx512", "openmp"))


@dataclass(frozen=True)
class FeatureGuard(Stmt):
    """``then`` where the target has ``feature``, else ``orelse`` (compile time)."""
    feature: str
    then: object
    orelse: object = None


@dataclass(frozen=True)
class TargetIf(Stmt):
    """``then`` where ``cond``, an expression of constants and the target's ``VecBytes``, holds
    (decided at compile time), else ``orelse``."""
    cond: object
    then: object
    orelse: object = None


@dataclass(frozen=True)
class FeatureIf(Stmt):
    """``if cond: then else: orelse`` where the target has ``feature``, ``orelse`` alone
    elsewhere: a run-time choice of a vector loop that only some targets compile."""
    feature: str
    cond: object
    then: object
    orelse: object


@dataclass(frozen=True)
class Inline(Stmt):
    """Statements run in order, printed on one line (layout only)."""
    stmts: tuple


@dataclass(frozen=True)
class Scope(Stmt):
    """A nested scope: its declarations end with it."""
    stmts: tuple
    oneline: bool = False
