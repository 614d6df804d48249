"""``ls.linalg``: NumPy's ``linalg`` names that lazysparse offers (``norm``, lazily), and iterative
solvers written as lazysparse programs (``cg``): every step is lazy arithmetic on arrays, planned
and compiled by the same compiler as any expression, with no kernel of its own."""
from __future__ import annotations

import math

import numpy as np

from lazysparse.api.statistics import norm
from lazysparse.traced import jit

__all__ = ["norm", "cg"]


def _vector(v, n, name):
    from lazysparse.api.creation import asarray
    from lazysparse.array import Array
    a = v if isinstance(v, Array) else asarray(np.asarray(v, dtype=np.float64))
    if a.shape != (n,):
        raise ValueError(f"cg: {name} must have shape ({n},), got {a.shape}")
    return a


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None):
    """Conjugate gradients for a symmetric positive definite ``A``, as ``scipy.sparse.linalg.cg``:
    returns ``(x, info)``, ``info`` 0 when ``||b - A x|| <= max(rtol * ||b||, atol)`` and else the
    number of steps taken. ``M``: a preconditioner applied as ``M @ r``. Each step is one
    fused kernel: ``alpha``, ``x + alpha p``, ``r - alpha A p`` and its squared norm, the next
    ``p`` (its beta a 0-d value of the kernel), ``A @ p`` and ``p @ (A @ p)``, traced once
    (``ls.jit``) and called again on each step's vectors; with ``M``, two computes of joint
    results (``M @ r`` between them). The scalars change every step without a new plan (the
    plans are keyed by what the planner reads of a 0-d value, not by the value).

    >>> import numpy as np, scipy.sparse as sp, lazysparse as ls
    >>> A = ls.asarray(sp.diags([4.0, 5.0, 6.0]).tocsr())
    >>> x, info = ls.linalg.cg(A, np.ones(3))
    >>> info, np.allclose(x.todense(), [1 / 4, 1 / 5, 1 / 6])
    (0, True)
    """
    from lazysparse.api.creation import asarray
    from lazysparse.array import Array, compute
    A = A if isinstance(A, Array) else asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"cg: A must be a square matrix, got shape {A.shape}")
    n = A.shape[0]
    b = _vector(b, n, "b")
    x = _vector(x0, n, "x0") if x0 is not None else asarray(np.zeros(n))
    maxiter = 10 * n if maxiter is None else int(maxiter)
    if M is None:  # (the residual, the first direction's A p and ||b||: one traced call)
        r, rr0, Ap, pAp, bnorm = _START(A, b, x)
        bnorm = float(bnorm)
    else:
        bnorm = float(norm(b))
        r = b - A @ x
        r, rr0 = compute(r, (r * r).sum())
    tol = max(rtol * bnorm, atol)
    if bnorm == 0.0:
        return asarray(np.zeros(n)), 0
    rr = float(rr0)
    if math.sqrt(rr) <= tol:
        return x, 0
    if M is None:
        return _unpreconditioned(A, x, r, r, Ap, rr0, pAp, maxiter, tol, callback)
    z, rz = _preconditioned(M, r, rr)
    p = z
    Ap = A @ p
    Ap, pAp = compute(Ap, (p * Ap).sum())
    for k in range(maxiter):
        alpha = rz / float(pAp)
        r = r - alpha * Ap
        x = x + alpha * p
        x, r, rr = compute(x, r, (r * r).sum())
        rr = float(rr)
        if callback is not None:
            callback(x)
        if math.sqrt(rr) <= tol:
            return x, 0
        if k == maxiter - 1:
            continue
        z, rz_new = _preconditioned(M, r, rr)
        p = z + (rz_new / rz) * p
        Ap = A @ p
        p, Ap, pAp = compute(p, Ap, (p * Ap).sum())
        rz = rz_new
    return x, maxiter


def _step(A, x, r, p, Ap, rz, pAp):
    """One step of CG and the next direction: ``alpha``, the step, ``r . r``, ``beta`` and the
    new ``p`` are 0-d and vector values of one kernel with ``A @ p`` and ``p . A p``."""
    x, r, rr = _last(x, r, p, Ap, rz, pAp)
    p = r + (rr / rz) * p
    Ap = A @ p
    return x, r, rr, p, Ap, (p * Ap).sum()


def _start(A, b, x):
    """The residual ``r``, ``r . r``, the first direction's ``A r`` and ``r . A r``, and
    ``||b||``."""
    r = b - A @ x
    Ar = A @ r
    return r, (r * r).sum(), Ar, (r * Ar).sum(), norm(b)


def _last(x, r, p, Ap, rz, pAp):
    """The step without a next direction: ``x + alpha p``, ``r - alpha A p`` and its ``r . r``."""
    alpha = rz / pAp
    r = r - alpha * Ap
    return x + alpha * p, r, (r * r).sum()


_START, _STEP, _LAST = jit(_start), jit(_step), jit(_last)  # (traced once per signature, for every call of cg)


def _unpreconditioned(A, x, r, p, Ap, rz, pAp, maxiter, tol, callback):
    """CG's steps without a preconditioner, each one call of a traced step (``ls.jit``): its
    kernel runs again on the new vectors without building the step's DAG (the next direction
    is made once in vain, on the step that converges)."""
    for k in range(maxiter):
        if k < maxiter - 1:
            x, r, rr, p, Ap, pAp = _STEP(A, x, r, p, Ap, rz, pAp)
        else:
            x, r, rr = _LAST(x, r, p, Ap, rz, pAp)
        rz = rr
        if callback is not None:
            callback(x)
        if math.sqrt(float(rr)) <= tol:
            return x, 0
    return x, maxiter


def _preconditioned(M, r, rr):
    """``(z, r @ z)`` for ``z = M @ r``, or ``(r, rr)`` without a preconditioner."""
    if M is None:
        return r, rr
    from lazysparse.array import compute
    z = M @ r
    z, rz = compute(z, (r * z).sum())
    return z, float(rz)
