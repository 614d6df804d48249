"""Types of loop IR values: scalars named by NumPy dtype (plus the target's plain ``int`` for
flags and ``size`` for byte counts), pointers, SIMD vectors and lane masks, and the opaque
types that support routines define. Printers spell them; nothing here is target text.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# scalar names beside NumPy's dtypes: the target's plain int (flags, small counts) and the
# type of a byte count or an allocation's element count
EXTRA_SCALARS = frozenset(("int", "unsigned", "size", "uintptr"))


@dataclass(frozen=True)
class Scalar:
    """A scalar of NumPy dtype ``name`` ("float64", "int32", "bool", ...) or one of
    ``EXTRA_SCALARS``."""
    name: str

    def __post_init__(self):
        if self.name not in EXTRA_SCALARS:
            object.__setattr__(self, "name", str(np.dtype(self.name)))


@dataclass(frozen=True)
class Ptr:
    """A pointer to ``elem``; ``const``: the pointee is read only; ``restrict``: no other
    pointer in scope reaches the same memory; ``fixed``: the pointer itself is never assigned
    again."""
    elem: object
    const: bool = False
    restrict: bool = False
    fixed: bool = False


@dataclass(frozen=True)
class Vec:
    """A SIMD vector of ``lanes`` values of dtype ``dtype`` (float or integer lanes); ``lanes``
    None: as many as the target's vector registers hold (``loopir.expr.VecBytes`` bytes), a
    vector of the compiler's own arithmetic (``+ - * /`` lane by lane, loads through a pointer
    cast) rather than of explicit intrinsics."""
    dtype: str
    lanes: int = None

    def __post_init__(self):
        object.__setattr__(self, "dtype", str(np.dtype(self.dtype)))


@dataclass(frozen=True)
class Mask:
    """A lane mask of a ``lanes``-wide vector."""
    lanes: int


@dataclass(frozen=True)
class Opaque:
    """A type a support routine defines (its state, or a type parameter it was built with):
    ``"ws_key"``, ``"ws_value"`` (a workspace's key and value types)."""
    name: str


@dataclass(frozen=True)
class Array:
    """A fixed-size local array of ``count`` (an expression) elements of ``elem``."""
    elem: object
    count: object


@dataclass(frozen=True)
class CText:
    """A type given as C text (no lowering module builds one; tests/compiler/loopir checks it)."""
    text: str


def of(t):
    """``t`` as a type: a type as is, C text as CText."""
    return CText(t) if isinstance(t, str) else t


INDEX = Scalar("int64")  # loop variables, positions, extents
INT = Scalar("int")
SIZE = Scalar("size")


def target_vec(dtype) -> Vec:
    """A vector of ``dtype`` lanes at the target's width."""
    return Vec(dtype, None)


def scalar(dtype) -> Scalar:
    return Scalar(str(np.dtype(dtype)))


def ptr(dtype, const=False, restrict=False) -> Ptr:
    return Ptr(dtype if isinstance(dtype, (Scalar, Opaque, Ptr, Vec)) else scalar(dtype), const, restrict)
