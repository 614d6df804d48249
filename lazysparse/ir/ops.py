"""The scalar operations of index notation: NumPy semantics, C spelling, sparsity behaviour. Result
dtypes and argument casts come from NumPy's own ufunc type resolution, so a lazy expression has
exactly the dtype NumPy would give. Sparsity: ``mul``-like ops annihilate (their iteration space is
the intersection of their arguments'); every other op is checked numerically at zero (``f(0, 0) ==
0`` -> union, else the whole space); ``divide`` follows the sparse convention that an implicit
zero numerator stays zero (docs/design.md, "Semantics the project chose")."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

_sigmoid = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731


def _relu(x):
    return np.maximum(x, np.zeros((), dtype=np.asarray(x).dtype))


# name -> (numpy callable, arity, sparsity class)
# class: "intersect" (annihilating), "divide" (numerator pattern), "eval" (check f at zero)
OPS = {
    "add": (np.add, 2, "eval"),
    "subtract": (np.subtract, 2, "eval"),
    "multiply": (np.multiply, 2, "intersect"),
    "divide": (np.true_divide, 2, "divide"),
    "power": (np.power, 2, "eval"),
    "maximum": (np.maximum, 2, "eval"),
    "minimum": (np.minimum, 2, "eval"),
    "less": (np.less, 2, "eval"),
    "less_equal": (np.less_equal, 2, "eval"),
    "greater": (np.greater, 2, "eval"),
    "greater_equal": (np.greater_equal, 2, "eval"),
    "equal": (np.equal, 2, "eval"),
    "not_equal": (np.not_equal, 2, "eval"),
    "logical_and": (np.logical_and, 2, "intersect"),
    "logical_or": (np.logical_or, 2, "eval"),
    "logical_xor": (np.logical_xor, 2, "eval"),
    "bitwise_and": (np.bitwise_and, 2, "intersect"),
    "bitwise_or": (np.bitwise_or, 2, "eval"),
    "bitwise_xor": (np.bitwise_xor, 2, "eval"),
    "negative": (np.negative, 1, "eval"),
    "absolute": (np.absolute, 1, "eval"),
    "invert": (np.invert, 1, "eval"),
    "logical_not": (np.logical_not, 1, "eval"),
    "exp": (np.exp, 1, "eval"),
    "log": (np.log, 1, "eval"),
    "log1p": (np.log1p, 1, "eval"),
    "expm1": (np.expm1, 1, "eval"),
    "sqrt": (np.sqrt, 1, "eval"),
    "sin": (np.sin, 1, "eval"),
    "cos": (np.cos, 1, "eval"),
    "tan": (np.tan, 1, "eval"),
    "tanh": (np.tanh, 1, "eval"),
    "sinh": (np.sinh, 1, "eval"),
    "arcsin": (np.arcsin, 1, "eval"),
    "arctan": (np.arctan, 1, "eval"),
    "arcsinh": (np.arcsinh, 1, "eval"),
    "arctanh": (np.arctanh, 1, "eval"),
    "arccos": (np.arccos, 1, "eval"),
    "arccosh": (np.arccosh, 1, "eval"),
    "cosh": (np.cosh, 1, "eval"),
    "log2": (np.log2, 1, "eval"),
    "log10": (np.log10, 1, "eval"),
    "exp2": (np.exp2, 1, "eval"),
    "cbrt": (np.cbrt, 1, "eval"),
    "floor": (np.floor, 1, "eval"),
    "ceil": (np.ceil, 1, "eval"),
    "trunc": (np.trunc, 1, "eval"),
    "rint": (np.rint, 1, "eval"),
    "rad2deg": (np.rad2deg, 1, "eval"),
    "deg2rad": (np.deg2rad, 1, "eval"),
    "sign": (np.sign, 1, "eval"),
    "real": (np.real, 1, "eval"),  # (not ufuncs: dtypes resolved by ``resolve`` itself)
    "imag": (np.imag, 1, "eval"),
    "square": (np.square, 1, "eval"),
    "conjugate": (np.conjugate, 1, "eval"),
    # floating-point classification and the rest of NumPy's elementwise ufuncs (each "eval":
    # f at zero decides; floor_divide/remainder/fmod of floats by zero are nan there: dense)
    "isnan": (np.isnan, 1, "eval"),
    "isinf": (np.isinf, 1, "eval"),
    "isfinite": (np.isfinite, 1, "eval"),
    "signbit": (np.signbit, 1, "eval"),
    "reciprocal": (np.reciprocal, 1, "eval"),
    "fabs": (np.fabs, 1, "eval"),
    "spacing": (np.spacing, 1, "eval"),
    "arctan2": (np.arctan2, 2, "eval"),
    "hypot": (np.hypot, 2, "eval"),
    "copysign": (np.copysign, 2, "eval"),
    "floor_divide": (np.floor_divide, 2, "eval"),
    "remainder": (np.remainder, 2, "eval"),
    "fmod": (np.fmod, 2, "eval"),
    "fmax": (np.fmax, 2, "eval"),
    "fmin": (np.fmin, 2, "eval"),
    "logaddexp": (np.logaddexp, 2, "eval"),
    "logaddexp2": (np.logaddexp2, 2, "eval"),
    "heaviside": (np.heaviside, 2, "eval"),
    "nextafter": (np.nextafter, 2, "eval"),
    "left_shift": (np.left_shift, 2, "eval"),
    "right_shift": (np.right_shift, 2, "eval"),
    "ldexp": (np.ldexp, 2, "eval"),
    "sigmoid": (None, 1, "eval"),
    "relu": (None, 1, "eval"),
    "where": (np.where, 3, "where"),
    "cast": (None, 1, "eval"),
}

UFUNC_NAMES = {v[0].__name__: k for k, v in OPS.items() if isinstance(v[0], np.ufunc)}
UFUNC_NAMES.update({"true_divide": "divide", "abs": "absolute"})

REDUCTIONS = ("sum", "max", "min", "prod")


def numpy_impl(op, out_dtype=None):
    """A NumPy callable computing ``op`` elementwise (the reference interpreter uses it)."""
    fn = OPS[op][0]
    if op == "sigmoid":
        return _sigmoid
    if op == "relu":
        return _relu
    if op == "cast":
        return lambda x: np.asarray(x).astype(out_dtype)
    return fn


@lru_cache(maxsize=4096)
def resolve(op: str, arg_dtypes: tuple) -> tuple:
    """``(in_dtypes, out_dtype)`` for ``op`` on arguments of ``arg_dtypes``, as NumPy resolves it.

    An entry of ``arg_dtypes`` may be ``'pyint'``/``'pyfloat'``/``'pycomplex'``/``'pybool'`` for a
    Python scalar, which NumPy treats as weakly typed (NEP 50).
    """
    if op not in OPS:
        raise ValueError(f"unknown operation {op!r}")
    fn, arity, _ = OPS[op]
    if len(arg_dtypes) != arity:
        raise TypeError(f"{op}: expected {arity} arguments, got {len(arg_dtypes)}")
    samples = [_sample(d) for d in arg_dtypes]
    if op == "where":
        out = np.result_type(*[s for s in samples[1:]])
        return ("bool", str(out), str(out)), str(out)
    if op in ("sigmoid", "relu"):
        base = "exp" if op == "sigmoid" else "absolute"
        ins, out = resolve(base, arg_dtypes)
        return ins, out
    if op in ("real", "imag"):  # the part's dtype (complex128 -> float64); other dtypes kept
        d = samples[0] if isinstance(samples[0], np.dtype) else np.asarray(samples[0]).dtype
        return (str(d),), str(np.real(np.zeros(1, d)).dtype)
    if op in ("logical_and", "logical_or", "logical_xor", "logical_not"):
        return tuple("bool" for _ in arg_dtypes), "bool"
    try:
        with np.errstate(all="ignore"):
            res = fn.resolve_dtypes(tuple(s if isinstance(s, np.dtype) else type(s) for s in samples) + (None,) * fn.nout)
    except (TypeError, np.exceptions.DTypePromotionError) as e:
        raise TypeError(f"{op}: unsupported operand dtypes {arg_dtypes}: {e}") from None
    ins = tuple(str(d) for d in res[:arity])
    if op in _EXACT_CLASSIFY and ins[0] == "float16":
        # NumPy reads a bool (or 8-bit integer) through float16, which lazysparse does not store;
        # float32 holds the same values exactly, so the answer is the same
        ins = ("float32",)
    return ins, str(res[arity])


# ops whose result does not depend on the floating-point width they are computed in
_EXACT_CLASSIFY = frozenset(("signbit",))


def _sample(d):
    if d == "pyint":
        return 0
    if d == "pyfloat":
        return 0.0
    if d == "pycomplex":
        return 0j
    if d == "pybool":
        # resolve_dtypes takes Python int/float/complex as weak scalars but refuses the type bool;
        # a Python bool promotes exactly like np.bool_ (the lowest kind), so use its dtype
        return np.dtype(np.bool_)
    return np.dtype(d)


def zero_of(dtype):
    return np.zeros((), dtype=np.dtype(dtype))[()]


def value_at_zero(op, in_dtypes, out_dtype, scalar_values):
    """Evaluate ``op`` with every tensor argument at zero and scalars at their values.

    ``scalar_values[k]`` is None for a tensor argument. Returns the NumPy scalar result.
    """
    fn = numpy_impl(op, out_dtype)
    args = []
    for d, v in zip(in_dtypes, scalar_values):
        args.append(np.asarray(zero_of(d) if v is None else v, dtype=np.dtype(d)))
    with np.errstate(all="ignore"):
        return np.asarray(fn(*args)).astype(np.dtype(out_dtype))[()]


def is_zero(v) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.asarray(v) == 0) and not bool(np.isnan(np.asarray(v, dtype=complex if np.iscomplexobj(v) else float)))


def reduce_identity(red: str, dtype):
    dt = np.dtype(dtype)
    if red == "sum":
        return zero_of(dt)
    if red == "prod":
        return np.ones((), dt)[()]
    if dt.kind == "b":
        return np.bool_(red == "min")
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min if red == "max" else info.max
    if dt.kind == "c":
        raise TypeError(f"{red}: complex values have no ordering")
    return -np.inf if red == "max" else np.inf
