"""``ls.any`` and ``ls.all`` (NumPy's, lazy): whether some / every value along the axes is
nonzero, as a max / min of ``x != 0`` (NaN is nonzero, as in NumPy). A reduction over nothing is
NumPy's identity (``any``: False, ``all``: True), which max and min do not have, so such a result
is a constant array."""
from __future__ import annotations

import math

import numpy as np


def _truth(x, axis, keepdims, op, name):
    from lazysparse.api import primitives as build
    from lazysparse.api.operations import _as_array
    from lazysparse.api.creation import ones, zeros
    x = _as_array(x, name)
    axes = range(x.ndim) if axis is None else build.normalize_axes(axis, x.ndim, name, x.shape)
    if math.prod(x.shape[a] for a in axes) == 0:
        shape = tuple(1 if a in axes else n for a, n in enumerate(x.shape) if keepdims or a not in axes)
        return (ones if op == "min" else zeros)(shape, dtype="bool")
    return build.reduction(build.elementwise("not_equal", x, 0, opname=name), axis, op, keepdims,
                           opname=name)


def any(x, axis=None, keepdims=False):
    """Lazy ``numpy.any``.

    >>> import numpy as np, lazysparse as ls
    >>> ls.any(np.array([[0, 1], [0, 0]]), axis=1).todense().tolist()
    [True, False]
    """
    return _truth(x, axis, keepdims, "max", "any")


def all(x, axis=None, keepdims=False):
    """Lazy ``numpy.all``."""
    return _truth(x, axis, keepdims, "min", "all")


NP_FUNCTIONS = {np.any: lambda a, axis=None, out=None, keepdims=False, **kw:
                any(a, axis, keepdims) if out is None and not kw else NotImplemented,
                np.all: lambda a, axis=None, out=None, keepdims=False, **kw:
                all(a, axis, keepdims) if out is None and not kw else NotImplemented}
