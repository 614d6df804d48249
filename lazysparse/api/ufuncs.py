"""Lazy elementwise functions under the names pydata/sparse and the array API use. NumPy's ufuncs of
these names dispatch to the lazy front end already (``np.isnan(A)``, ``np.mod(A, 3)``: NEP 13,
``frontend.array_ufunc``); these module-level functions give the same lazy nodes to code written
against ``sparse.isnan`` / ``xp.bitwise_left_shift`` / ``xp.atan2``. Result dtypes are NumPy's; an
operation NumPy has no loop for (``floor_divide`` of complex values, ``signbit`` of complex) or one
NumPy computes in a dtype lazysparse does not store (``arctan2`` of bools is float16) raises a
TypeError naming the function when the line is written."""
from __future__ import annotations

import numbers

import numpy as np

from lazysparse.api import primitives as build
from lazysparse.api.operations import _as_array, _binary, _unary, astype as _astype, checked, positive as _positive


# name -> operation (ir/ops.py)
_UNARY = {
    # new operations
    "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite", "signbit": "signbit",
    "reciprocal": "reciprocal", "fabs": "fabs", "spacing": "spacing",
    # array-API names of existing ones
    "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
    "atanh": "arctanh", "bitwise_invert": "invert", "bitwise_not": "invert", "logical_not": "logical_not",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "rint": "rint", "sign": "sign",
    "square": "square", "tan": "tan", "sinh": "sinh", "cosh": "cosh", "log2": "log2", "log10": "log10",
    "exp2": "exp2", "cbrt": "cbrt", "real": "real", "imag": "imag", "conj": "conjugate",
    "conjugate": "conjugate", "arcsin": "arcsin", "arccos": "arccos", "arctan": "arctan",
    "arcsinh": "arcsinh", "arccosh": "arccosh", "arctanh": "arctanh", "deg2rad": "deg2rad",
    "rad2deg": "rad2deg", "invert": "invert",
}
_BINARY = {
    # new operations
    "arctan2": "arctan2", "atan2": "arctan2", "hypot": "hypot", "copysign": "copysign",
    "floor_divide": "floor_divide", "remainder": "remainder", "mod": "remainder", "fmod": "fmod",
    "fmax": "fmax", "fmin": "fmin", "logaddexp": "logaddexp", "logaddexp2": "logaddexp2",
    "heaviside": "heaviside", "nextafter": "nextafter", "left_shift": "left_shift",
    "bitwise_left_shift": "left_shift", "right_shift": "right_shift",
    "bitwise_right_shift": "right_shift", "ldexp": "ldexp",
    # array-API names of existing ones
    "pow": "power", "power": "power", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor", "equal": "equal", "not_equal": "not_equal", "less": "less",
    "less_equal": "less_equal", "greater": "greater", "greater_equal": "greater_equal",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "true_divide": "divide",
}

# The generated functions compute what NumPy does, e.g.
#   isnan(ls.asarray(np.array([1.0, np.nan]))).todense().tolist() == [False, True]
#   floor_divide(ls.asarray(np.array([7, -7, 5])), np.array([2, 2, 0])).todense().tolist() == [3, -4, 0]
for _name, _op in _UNARY.items():
    globals()[_name] = _unary(_op, _name)
for _name, _op in _BINARY.items():
    globals()[_name] = _binary(_op, _name)
del _name, _op


def positive(x):
    """Lazy ``numpy.positive`` (a copy; NumPy has no bool loop for it)."""
    return _positive(x)


def round(x, decimals=0):
    """Lazy ``numpy.round``: half to even at ``decimals`` decimal places, as NumPy computes it.

    Floats: ``rint(x)`` for ``decimals=0``, else ``rint(x * 10**d) / 10**d`` (``d > 0``) or
    ``rint(x / 10**-d) * 10**-d`` (``d < 0``), in the array's dtype. Integers are returned
    unchanged for ``decimals >= 0`` (a copy) and rounded through float64 for ``decimals < 0``,
    keeping their dtype; complex values round each part (through complex multiplication: a part
    that is infinite gives a NaN other part, where NumPy rounds the parts apart). A bool array
    NumPy rounds in float16, which lazysparse does not store: a TypeError.

    >>> import numpy as np, lazysparse as ls
    >>> from lazysparse.api import ufuncs as U
    >>> U.round(ls.asarray(np.array([0.125, 2.5, 1234.0])), 1).todense().tolist()
    [0.1, 2.5, 1234.0]
    """
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral):
        raise TypeError(f"round: decimals must be an integer, got {type(decimals).__name__}")
    decimals = int(decimals)
    x = _as_array(x, "round")
    kind = np.dtype(x.dtype).kind
    if kind == "b" and decimals != 0:  # (NumPy: multiply's float64 result cannot go back to bool)
        raise TypeError(f"round: cannot round a bool array to {decimals} decimals (NumPy raises too)")
    if kind in "iu" and decimals >= 0:
        return _positive(x)
    if decimals == 0:
        return checked(build.elementwise("rint", x, opname="round"), "round")
    f = 10.0 ** abs(decimals)
    y = _astype(x, np.float64) if kind in "iu" else x
    scale, unscale = ("multiply", "divide") if decimals > 0 else ("divide", "multiply")
    y = checked(build.elementwise(scale, y, f, opname="round"), "round")
    y = checked(build.elementwise("rint", y, opname="round"), "round")
    y = checked(build.elementwise(unscale, y, f, opname="round"), "round")
    return _astype(y, x.dtype) if kind in "iu" else y


around = round


def _np_round(a, decimals=0, out=None):
    if out is not None:
        return NotImplemented
    return round(a, decimals)


#: NumPy functions (not ufuncs) that dispatch to lazysparse through ``__array_function__``.
NP_FUNCTIONS = {
    np.round: _np_round,
    np.around: _np_round,
}

__all__ = sorted([*_UNARY, *_BINARY, "positive", "round", "around"])
