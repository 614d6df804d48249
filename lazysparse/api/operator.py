"""An array as a linear operator, in the protocol scipy.sparse.linalg's ``aslinearoperator`` reads
(``matvec``, ``rmatvec``, ``matmat``, ``rmatmat`` beside ``shape`` and ``dtype``): scipy's solvers
(``cg``, ``gmres``, ``eigsh``, ``svds``, ...) then take a lazysparse array and run its products in
lazysparse's kernels. Each call computes one product and returns a NumPy array the caller owns,
as scipy's operators do: solvers update their vectors in place."""
from __future__ import annotations

import numpy as np

from lazysparse.api.base import ArrayBase
from lazysparse.api.creation import asarray
from lazysparse.runtime import aligned


def apply(A, v, adjoint: bool, opname: str) -> np.ndarray:
    """``A @ v`` (``adjoint``: ``A^H @ v``) for a 2-d ``A`` and a 1-d or 2-d ``v``, computed now;
    a writable NumPy array."""
    if A.ndim != 2:
        raise ValueError(f"{opname}: a linear operator is 2-d; this array has shape {A.shape}")
    x = v if isinstance(v, ArrayBase) else asarray(np.asarray(v))
    if x.ndim not in (1, 2):
        raise ValueError(f"{opname}: expected a vector or a matrix, got shape {x.shape}")
    # a lazy operator is computed once (its node keeps the value), as scipy's operand was: a
    # solver applies it tens to thousands of times, and the fused expression (``I - L``) would
    # be recomputed in every product
    op = A.materialize() if A.is_lazy else A
    if adjoint:
        op = op.T.conj() if op.dtype.kind == "c" else op.T
    if x.shape[0] != op.shape[1]:
        raise ValueError(f"{opname}: dimension mismatch: operator of shape {op.shape} applied to "
                         f"shape {x.shape}")
    st = (op @ x).storage
    out = st.vals if st.is_dense else None
    # a kernel's new dense result is this call's alone (the array holding it is dropped here):
    # handed out as it is; anything else (a sparse result, a view) is copied
    if out is None or not out.flags.writeable or not aligned.owns(out):
        out = np.array(op.__class__._from_storage(st).todense())
    return out
