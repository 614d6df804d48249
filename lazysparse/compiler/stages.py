"""The compiler's stage objects, as JAX names them: a ``Plan`` is lowered to a ``Lowered`` (loop IR,
its calling convention and the printed source), which is built into a ``Compiled`` (the loaded
kernel). Both drivers — one statement (``statement.py``, through ``runner.py``) and a fused
program (``fused_pipeline.py``) — lower and build through the two functions here, and
``explain`` and ``opcount`` read the same objects; the source text is the kernel cache's key.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lazysparse.runtime.kernel_cache import load_kernel
from lazysparse.runtime.progress import timed

TARGETS = ("c",)


@dataclass(frozen=True, eq=False)
class Plan:
    """What planning decided for one kernel: a ``KernelSpec`` (one statement: formats, loop
    order, mode, schedule) or a fusion plan over a program with its operands' specs."""
    kind: str            # "statement" or "fused"
    decision: Any        # the KernelSpec, or the fusion plan
    operand_specs: Any = None  # fused: value id -> OperandSpec

    @staticmethod
    def of_statement(spec) -> "Plan":
        return Plan("statement", spec)

    @staticmethod
    def of_program(plan, specs) -> "Plan":
        return Plan("fused", plan, specs)

    def header(self) -> str:
        """The one-line summary the printed source opens with (IR reprs: generated names only)."""
        if self.kind == "fused":
            return "fused: " + repr(self.decision)
        spec = self.decision
        return repr(spec.stmt) + " | order " + ",".join(map(repr, spec.order)) + " | " + spec.mode


@dataclass(frozen=True, eq=False)
class Lowered:
    """A plan as loop IR (``block``), the calling convention of its kernel (``abi``: what each
    pointer and integer argument carries) and the source printed for ``target``."""
    plan: Plan
    block: Any
    abi: Any
    target: str
    source: str
    count: bool = False  # an instrumented build (ls.opcount): one counter per operation
    extra: Any = None    # fused: how the result is assembled (``lower_fused``'s third value)

    def as_text(self) -> str:
        return self.source


@dataclass(frozen=True, eq=False)
class Compiled:
    """A built kernel: ``kernel`` is the loaded ``ls_kernel`` (``runtime.kernel_cache.Kernel``)."""
    lowered: Lowered
    kernel: Any

    @property
    def abi(self):
        return self.lowered.abi

    @property
    def source(self) -> str:
        return self.lowered.source


def lower(plan: Plan, target: str = "c", count: bool = False) -> Lowered:
    """Loop IR for ``plan`` and its source for ``target``. Raises ``lower.fused.Unsupported``
    for a fused plan the lowerer declines (the driver then runs the program per operation)."""
    if target not in TARGETS:
        raise ValueError(f"lower: unknown target {target!r}; this build has {TARGETS}")
    # the lowerers and printers load on the first lowering: creating the loop IR's frozen node
    # classes is a third of the package's import, which a process that finds every plan bound
    # (or only builds arrays) never needs
    from lazysparse.compiler.codegen.c import printer as c_printer
    from lazysparse.compiler.lower.fused import lower_fused
    from lazysparse.compiler.lower.lowering import lower as lower_statement
    with timed(f"lower {plan.kind} plan to {target}"):
        if plan.kind == "fused":
            block, abi, extra = lower_fused(plan.decision, plan.operand_specs, count=count)
        else:
            (block, abi), extra = lower_statement(plan.decision, count), None
        source = c_printer.emit(block, header_comment=plan.header(), count=count)
    return Lowered(plan, block, abi, target, source, count, extra)


def build(lowered: Lowered) -> Compiled:
    """Compile (or find in the kernel cache) and load the kernel of ``lowered``."""
    with timed(f"build a kernel of {lowered.source.count(chr(10))} lines (compile, or load from the cache)"):
        return Compiled(lowered, load_kernel(lowered.source))
