"""How ``lazysparse.sparse.linalg`` and ``csgraph`` hand lazysparse arrays to scipy's functions:
as linear operators whose products run in lazysparse's kernels (``operator``: the iterative
solvers and eigensolvers), or as scipy's own storage, zero-copy for CSR and CSC (``storage``:
factorizations and graph algorithms, which walk the matrix in compiled scipy code). Vectors
become NumPy arrays, and a scipy sparse result comes back as a lazysparse array."""
from __future__ import annotations

import functools
import inspect

import numpy as np

from lazysparse.array import Array


def operator(A):
    """A ``scipy.sparse.linalg.LinearOperator`` over a 2-d lazysparse array (all four
    products: scipy's ``aslinearoperator`` alone would apply a block a column at a time)."""
    from scipy.sparse.linalg import LinearOperator
    return LinearOperator(A.shape, matvec=A.matvec, rmatvec=A.rmatvec, matmat=A.matmat,
                          rmatmat=A.rmatmat, dtype=A.dtype)


def storage(A):
    """A 2-d lazysparse array as scipy's storage (a dense one as a NumPy array)."""
    return np.asarray(A.todense()) if A.format.is_dense else A.to_scipy()


def _value(x):
    """Any other lazysparse argument: a NumPy array (dense) or scipy's storage (sparse 2-d)."""
    if x.ndim == 2 and not x.format.is_dense:
        return x.to_scipy()
    return np.array(x.todense())


def _result(out):
    import scipy.sparse as sp
    if sp.issparse(out):
        from lazysparse.api.creation import asarray
        return asarray(out)
    if isinstance(out, tuple):
        return tuple(_result(o) for o in out)
    return out


def scipy_function(fn, operators=(), when_storage=None):
    """``fn`` (a scipy function) taking lazysparse arrays: those in the parameters named in
    ``operators`` as linear operators (as scipy's storage where ``when_storage(arguments)``
    says a factorization needs it), the others by ``_value``; the rest of its arguments as
    they are."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{fn.__name__}: {e}") from None
        direct = when_storage is not None and when_storage(bound.arguments)
        for name, v in list(bound.arguments.items()):
            if isinstance(v, Array):
                if name in operators and v.ndim == 2:
                    bound.arguments[name] = storage(v) if direct else operator(v)
                elif name in operators or not operators:
                    bound.arguments[name] = storage(v) if v.ndim == 2 else _value(v)
                else:
                    bound.arguments[name] = _value(v)
        return _result(fn(*bound.args, **bound.kwargs))
    wrapped.__doc__ = (f"scipy's ``{fn.__module__}.{fn.__name__}`` taking lazysparse arrays "
                       f"(``lazysparse/sparse/_wrap.py``); scipy's documentation follows.\n\n"
                       + (fn.__doc__ or ""))
    return wrapped
