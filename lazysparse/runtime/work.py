"""The work guard: no loop over a sparse operand's implicit zeros longer than
``LAZYSPARSE_WORK_LIMIT`` points. A statement whose value is nonzero where its sparse operands
are zero (``(A + 1).sum()``, ``exp(A).sum(axis=0)``) iterates its whole index space, not the
stored entries: on a 10^6 x 10^6 operand with a thousand entries that is 10^12 steps, about twenty
minutes, to sum what is mostly a constant. A dense result of that size is refused by the memory
guard (runtime/memory.py); a reduction to a small result is not, so ``check`` refuses it here,
before the kernel runs, with a message that names the operation and the override."""
from __future__ import annotations

import math
import os

from lazysparse.ir.nodes import Index, accesses_of

DEFAULT = 1 << 36
_ENV = "LAZYSPARSE_WORK_LIMIT"
_EVERYWHERE = frozenset()  # a pattern's term that holds at every point (compiler/plan/patterns.py)


class WorkLimitError(ValueError):
    """A loop over the implicit zeros of a sparse operand would run past the work limit."""


def limit():
    """The limit in points, or None (no limit). Read at each check: tests and users may change
    the variable between calls, and checks only happen before a kernel that walks every point.

    ``LAZYSPARSE_WORK_LIMIT``: points (loop iterations), optionally with a K/M/G/T suffix (powers of
    1024); ``0`` or ``none`` turns the guard off. Default: ``2**36`` (about 6.9e10 points, a minute or
    more of a kernel's time).
    """
    from lazysparse.runtime.memory import parse_limit
    raw = os.environ.get(_ENV, "").strip()
    if not raw:
        return DEFAULT
    try:
        return parse_limit(raw)
    except ValueError:
        raise ValueError(f"{_ENV}={raw!r}: expected a number of points with an optional K/M/G/T "
                         "suffix (e.g. 100G), or 0/none for no limit") from None


def densifies(pattern, storages) -> bool:
    """Whether a statement with this global pattern (compiler/plan/kernel.py ``global_pattern``) walks
    the implicit zeros of a sparse operand: a term holds everywhere, and some operand is sparse."""
    return _EVERYWHERE in pattern and any(
        st.ndim and not st.format.is_dense for st in storages)


def points(stmt, ext) -> int:
    """The points of the statement's index space (exact Python ints: no overflow)."""
    idx = set(stmt.out_indices) | set(stmt.reduce_indices)
    for a in accesses_of(stmt.expr):
        idx.update(ix for ix in a.indices if isinstance(ix, Index))
    return math.prod(int(ext[v]) for v in idx)


def check(stmt, ext, name: str) -> None:
    """Raise :class:`WorkLimitError` when ``stmt`` (which ``densifies``) has more points than
    the limit.

    Only such statements are checked: their kernels walk every point anyway, so the check costs
    nothing beside them. Work over stored entries (SpMV, SpGEMM, ``A + B``) and dense work the user
    asked for (a dense product of dense operands) is never refused.
    """
    n = points(stmt, ext)
    lim = limit()
    if lim is not None and n > lim:
        raise WorkLimitError(
            f"{name}: `{stmt!r}` is nonzero where its sparse operands are zero, so its kernel would "
            f"visit all {n:.3g} points of its index space, not only the stored entries: over the "
            f"work limit of {lim:.3g} points ({_ENV}, default 2**36). Rewrite it over the stored "
            "entries (e.g. (A + c).sum() as A.sum() + c * math.prod(A.shape)), or raise the limit "
            f"({_ENV}=none turns it off)")
