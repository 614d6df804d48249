"""Index-notation IR nodes (frozen, hashable, value-free). A ``Statement`` is one lazy operation,
``out[out_indices] = reduce_{other indices} expr``; ``Access(k, (i, j))`` reads operand slot
``k``. Operands live beside the statement (in the DAG node), so two statements that differ only in
their operands are the same IR, which is what the kernel signature is built from."""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property

import numpy as np


class _Hashed:
    """IR nodes are hashed on every cache lookup: compute the hash once per object."""

    def __hash__(self):
        h = self.__dict__.get("_h")
        if h is None:
            h = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_h", h)
        return h


@dataclass(frozen=True)
class Index(_Hashed):
    name: str

    def __repr__(self):
        return self.name


@dataclass(frozen=True)
class Const(_Hashed):
    value: int

    def __repr__(self):
        return str(self.value)


@dataclass(frozen=True)
class Access(_Hashed):
    """A read of operand slot ``operand`` at ``indices``: index variables or constants (broadcast
    axes)."""
    operand: int
    indices: tuple  # of Index | Const

    def __repr__(self):
        return f"T{self.operand}[{','.join(map(repr, self.indices))}]"


@dataclass(frozen=True)
class Call(_Hashed):
    """``op`` applied to ``args``. ``in_dtypes`` are the dtypes arguments are cast to (NumPy's
    ufunc loop), ``dtype`` the result dtype; both are dtype strings (e.g. ``'float64'``)."""
    op: str
    args: tuple
    in_dtypes: tuple
    dtype: str

    def __repr__(self):
        return f"{self.op}({', '.join(map(repr, self.args))})"


@dataclass(frozen=True)
class Statement(_Hashed):
    out_indices: tuple  # of Index
    expr: object        # Access | Call
    reduce: str = "sum"  # "sum" | "max" | "min" | "prod"; used for indices absent from the left
    dtype: str = "float64"

    @cached_property
    def accesses(self) -> tuple:
        return tuple(accesses_of(self.expr))

    @cached_property
    def reduce_indices(self) -> tuple:
        outs = set(self.out_indices)
        seen = []
        for a in self.accesses:
            for ix in a.indices:
                if isinstance(ix, Index) and ix not in outs and ix not in seen:
                    seen.append(ix)
        return tuple(seen)


    def __repr__(self):
        red = self.reduce_indices
        lhs = f"out[{','.join(map(repr, self.out_indices))}]"
        rhs = repr(self.expr)
        if red:
            rhs = f"{self.reduce}_{{{','.join(map(repr, red))}}} {rhs}"
        return f"{lhs} = {rhs}"


def accesses_of(expr):
    """All Access nodes of an expression, left to right (with repeats)."""
    if isinstance(expr, Access):
        return [expr]
    out = []
    for a in expr.args:
        out.extend(accesses_of(a))
    return out


def canonical_positions(expr) -> tuple:
    """For each access of ``expr`` (``accesses_of`` order), the position of the first access
    equal to it (same operand slot, same subscripts). Equal accesses read the same values at
    every point, so a walk that keys iterators by these positions co-iterates one pattern once:
    ``A * A`` walks A's entries, not the intersection of two copies of them."""
    first, out = {}, []
    for q, a in enumerate(accesses_of(expr)):
        out.append(first.setdefault(a, q))
    return tuple(out)


def indices_of(expr):
    """Index variables used by an expression, first-seen order."""
    seen = []
    for a in accesses_of(expr):
        for ix in a.indices:
            if isinstance(ix, Index) and ix not in seen:
                seen.append(ix)
    return seen


# @dataclass(frozen=True) generates __hash__ on each class; put the caching one back
for _cls in (Index, Const, Access, Call, Statement):
    _cls.__hash__ = _Hashed.__hash__

_INTERNED = {}


def intern(stmt: "Statement") -> "Statement":
    """The canonical object for an equal statement (cache lookups then compare by identity)."""
    return _INTERNED.setdefault(stmt, stmt)


_IDENTITY_IDX = tuple(Index(f"i{k}") for k in range(64))


def identity_statement(ndim, dtype) -> Statement:
    """``out[i..] = T0[i..]``: a copy, i.e. a format conversion when the result format differs."""
    idx = _IDENTITY_IDX[:ndim]
    return intern(Statement(idx, Access(0, idx), "sum", str(np.dtype(dtype))))
