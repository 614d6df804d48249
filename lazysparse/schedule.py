"""``ls.Schedule``: how a performance engineer steers the compiler (Halide's split between the
algorithm, the lazy expression, and its schedule). This version carries the workspace choice
(paper 003); loop transformations (issue 6) are to come.

    >>> import lazysparse as ls
    >>> ls.Schedule().workspace("hash", capacity=64)
    Schedule().workspace('hash', capacity=64)
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from .errors import shown


@dataclass(frozen=True)
class Schedule:
    steps: tuple = ()

    def workspace(self, policy: str, capacity: int | None = None) -> "Schedule":
        """Assemble scattered sparse results through the accumulation ``policy`` ("dense",
        "hash", "coord", "bucket", or one added with ``lazysparse.lower.workspace.register_policy``),
        sorting and merging it every ``capacity`` entries (default: the cost model's)."""
        from .lower.workspace import POLICIES
        if policy not in POLICIES:
            raise ValueError(f"Schedule.workspace: unknown policy {shown(policy)}; "
                             f"choose from {sorted(POLICIES)}")
        if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int)
                                     or capacity < 1):
            raise ValueError(f"Schedule.workspace: capacity must be a positive int, got {shown(capacity)}")
        return Schedule(self.steps + (("workspace", policy, capacity),))

    @contextmanager
    def apply(self):
        """Within this block, kernels this thread plans follow the schedule."""
        from .runtime.execute import WS_FORCED
        prev = WS_FORCED.choice
        ws = [s for s in self.steps if s[0] == "workspace"]
        WS_FORCED.choice = ws[-1][1:] if ws else prev
        try:
            yield self
        finally:
            WS_FORCED.choice = prev

    def __repr__(self):
        out = "Schedule()"
        for name, policy, cap in self.steps:
            out += f".{name}({policy!r}" + (f", capacity={cap}" if cap is not None else "") + ")"
        return out
