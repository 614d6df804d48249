"""The fused-planning IR: a whole lazy DAG as three-address operations over named values, all in one
index namespace, so that fusion ("ReACT: Redundancy-Aware Code Generation for Tensor
Expressions") can see which loop of one operation *is* a loop of another. Everything here is
frozen and value-free: passes are functions ``Program -> Program`` (or to an analysis), testable on
hand-written programs."""
from __future__ import annotations

from dataclasses import dataclass

from lazysparse.ir.nodes import Index, Statement, _Hashed

INPUT, TEMP, OUTPUT = "input", "temp", "output"


@dataclass(frozen=True)
class Value(_Hashed):
    id: int
    kind: str      # INPUT | TEMP | OUTPUT
    shape: tuple
    dtype: str

    def __repr__(self):
        return f"v{self.id}"


@dataclass(frozen=True)
class Op(_Hashed):
    """``values[out][stmt.out_indices] = stmt`` where ``Access(k, ...)`` in ``stmt`` reads
    ``values[args[k]]``. Index variables are the program's (shared with other ops)."""
    out: int
    stmt: Statement
    args: tuple

    @property
    def loops(self) -> tuple:
        """Every index variable of the operation: result indices, then reductions."""
        return tuple(self.stmt.out_indices) + tuple(self.stmt.reduce_indices)

    def reads(self) -> tuple:
        """Value ids read, with repeats removed, in first-read order."""
        seen = []
        for a in self.stmt.accesses:
            v = self.args[a.operand]
            if v not in seen:
                seen.append(v)
        return tuple(seen)

    def __repr__(self):
        s = repr(self.stmt)
        return f"v{self.out}" + s[3:] + "  <- " + ", ".join(f"T{k}=v{v}" for k, v in enumerate(self.args))


@dataclass(frozen=True)
class Program(_Hashed):
    """The front end builds one ``Statement`` per lazy operation, each in its own index names
    (``out[i0,i1] = ...``); a ``Program`` puts every operation in one index namespace: the producer of
    a value uses, for its result dimensions, the index variables its first consumer reads it with
    (the paper's ``T_ij = C_ik D_kj; A_ij = B_ij .* T_ij`` share i and j). Operand slots of an ``Op``
    are value ids; values are the DAG's concrete inputs, temporaries, and the results asked for.
    """
    values: tuple   # of Value, indexed by id
    ops: tuple      # of Op, producers before consumers
    outputs: tuple  # value ids, in the order asked for

    def producer(self, vid: int):
        """The index of the op that writes ``vid`` (None for an input)."""
        for k, op in enumerate(self.ops):
            if op.out == vid:
                return k
        return None

    def extents(self) -> dict:
        """The extent of every index variable, from the shapes of the values it indexes."""
        ext = {}
        for op in self.ops:
            for m, ix in enumerate(op.stmt.out_indices):
                ext[ix] = self.values[op.out].shape[m]
            for a in op.stmt.accesses:
                shape = self.values[op.args[a.operand]].shape
                for m, ix in enumerate(a.indices):
                    if isinstance(ix, Index) and ix not in ext:
                        ext[ix] = shape[m]
        return ext

    def consumers(self, vid: int) -> list:
        """Indices of the ops that read ``vid``."""
        return [k for k, op in enumerate(self.ops) if vid in op.args]

    def __repr__(self):
        lines = [f"program: inputs {', '.join(repr(v) for v in self.values if v.kind == INPUT)}; "
                 f"outputs {', '.join('v%d' % o for o in self.outputs)}"]
        lines += [f"  S{k}: {op!r}" for k, op in enumerate(self.ops)]
        return "\n".join(lines)
