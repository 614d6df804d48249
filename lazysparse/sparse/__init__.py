"""``lazysparse.sparse``: scipy.sparse's names over lazysparse arrays, so that code written for
scipy.sparse changes its import line only. So far: ``issparse`` and the ``linalg`` and
``csgraph`` subpackages (scipy's solvers, eigensolvers and graph algorithms taking lazysparse
arrays); the classes and constructors are to follow."""
from __future__ import annotations

from lazysparse.sparse import csgraph, linalg


def issparse(x) -> bool:
    """Whether ``x`` is a sparse array: a lazysparse array of a sparse format (its format is
    inferred, without computing a lazy one), or a scipy sparse array or matrix."""
    from lazysparse.array import Array
    if isinstance(x, Array):
        return not x.format.is_dense
    import scipy.sparse as sp
    return sp.issparse(x)


__all__ = ["issparse", "linalg", "csgraph"]
