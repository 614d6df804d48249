"""``lazysparse.sparse.linalg``: scipy.sparse.linalg's functions taking lazysparse arrays. The
iterative solvers and eigensolvers get them as linear operators, so every product they ask for
runs in a lazysparse kernel; factorizations (``spsolve``, ``splu``, ``inv``, ``expm``,
shift-invert ``eigsh``) get scipy's own storage, zero-copy for CSR and CSC. ``norm`` and
``matrix_power`` are lazysparse's own. ``ls.linalg.cg`` is conjugate gradients fused into one
kernel a step; ``cg`` here is scipy's, calling lazysparse's products."""
from __future__ import annotations

import scipy.sparse.linalg as _sla
from scipy.sparse.linalg import (ArpackError, ArpackNoConvergence, LaplacianNd, LinearOperator,  # noqa: F401
                                 MatrixRankWarning, SuperLU, aslinearoperator, use_solver)

from lazysparse.sparse._wrap import scipy_function

_SOLVERS = ("bicg", "bicgstab", "cg", "cgs", "gcrotmk", "gmres", "lgmres", "minres", "qmr", "tfqmr")
_OPERATORS = {"A", "M", "M1", "M2", "B", "Minv", "OPinv"}


def _shifted(arguments) -> bool:
    return arguments.get("sigma") is not None  # (shift-invert factorizes A - sigma M)


for _name in _SOLVERS + ("lsqr", "lsmr", "lobpcg", "svds", "onenormest"):
    globals()[_name] = scipy_function(getattr(_sla, _name), _OPERATORS)
for _name in ("eigs", "eigsh"):
    globals()[_name] = scipy_function(getattr(_sla, _name), _OPERATORS, _shifted)
for _name in ("spsolve", "spsolve_triangular", "splu", "spilu", "factorized", "inv", "expm",
              "is_sptriangular", "spbandwidth"):
    globals()[_name] = scipy_function(getattr(_sla, _name))


def expm_multiply(A, B, start=None, stop=None, num=None, endpoint=None, traceA=None):
    """``exp(t A) @ B`` as scipy's ``expm_multiply``, its products in lazysparse's kernels (the
    trace of ``A``, which scipy cannot read off an operator, computed here)."""
    from lazysparse.array import Array
    if isinstance(A, Array) and traceA is None and A.ndim == 2 and A.shape[0] == A.shape[1]:
        traceA = float(A.trace()) if A.dtype.kind != "c" else complex(A.trace())
    return scipy_function(_sla.expm_multiply, _OPERATORS)(A, B, start=start, stop=stop, num=num,
                                                          endpoint=endpoint, traceA=traceA)


def norm(x, ord=None, axis=None):
    """A matrix or vector norm (``ls.linalg.norm``, computed now), as scipy's ``norm``."""
    from lazysparse.api.statistics import norm as lazy_norm
    from lazysparse.api.creation import asarray
    out = lazy_norm(asarray(x), ord=ord, axis=axis)
    return float(out) if out.ndim == 0 else out.materialize()


def matrix_power(A, power):
    """``A`` multiplied by itself ``power`` times (repeated squaring, lazysparse's products);
    as scipy's, ``power`` 0 gives the identity."""
    import operator as _op
    from lazysparse.api.creation import asarray, eye
    A = asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise TypeError(f"matrix_power: sparse matrix is not square, shape {A.shape}")
    power = _op.index(power)
    if power < 0:
        raise ValueError(f"matrix_power: exponent must be >= 0, got {power}")
    if power == 0:
        return eye(A.shape[0], dtype=A.dtype)
    out, base = None, A
    while power:
        if power & 1:
            out = base if out is None else (out @ base).materialize()
        power >>= 1
        if power:
            base = (base @ base).materialize()
    return out


__all__ = sorted(set(_sla.__all__) - {"dsolve", "eigen", "interface", "isolve", "matfuncs",
                                       "funm_multiply_krylov"})
