"""``lazysparse.sparse.csgraph``: scipy.sparse.csgraph's graph algorithms taking lazysparse
arrays, which they read as scipy's own storage (zero-copy for CSR and CSC: the algorithms walk
the graph in scipy's compiled code); a sparse result (a tree, a Laplacian) comes back as a
lazysparse array."""
from __future__ import annotations

import scipy.sparse.csgraph as _cg
from scipy.sparse.csgraph import NegativeCycleError  # noqa: F401

from lazysparse.sparse._wrap import scipy_function

for _name in _cg.__all__:
    if _name != "NegativeCycleError":
        globals()[_name] = scipy_function(getattr(_cg, _name))

__all__ = list(_cg.__all__)
