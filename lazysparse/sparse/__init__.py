"""``lazysparse.sparse``: scipy.sparse's names over lazysparse arrays, so that code written for
scipy.sparse changes its import line only: the array classes (``csr_array``, ``csc_array``,
``coo_array``, for construction and ``isinstance``), the constructors (``random_array``,
``eye_array``, ``identity``, ``diags_array``, ``block_array``, ``bmat``, ``hstack``,
``vstack``, ``kron``, ``kronsum``, ``tril``, ``triu``, ``find``, ``save_npz``/``load_npz``),
``issparse``, and the ``linalg`` and ``csgraph`` subpackages (scipy's solvers, eigensolvers and
graph algorithms taking lazysparse arrays)."""
from __future__ import annotations

from lazysparse.sparse import csgraph, linalg
from lazysparse.sparse.construct import (  # noqa: F401
    block_array, bmat, coo_array, csc_array, csr_array, diags_array, eye_array, find, hstack,
    identity, kron, kronsum, load_npz, random_array, save_npz, sparray, tril, triu, vstack)


def issparse(x) -> bool:
    """Whether ``x`` is a sparse array: a lazysparse array of a sparse format (its format is
    inferred, without computing a lazy one), or a scipy sparse array or matrix."""
    from lazysparse.array import Array
    if isinstance(x, Array):
        return not x.format.is_dense
    import scipy.sparse as sp
    return sp.issparse(x)


__all__ = ["issparse", "linalg", "csgraph", "sparray", "csr_array", "csc_array", "coo_array",
           "random_array", "eye_array", "identity", "diags_array", "block_array", "bmat", "hstack",
           "vstack", "kron", "kronsum", "tril", "triu", "find", "save_npz", "load_npz"]
