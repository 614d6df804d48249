"""lazysparse: lazy sparse and dense arrays compiled to fused native kernels. This package
re-exports the user-facing API (``ls.asarray``, ``ls.einsum``, ``ls.Schedule``, ``ls.explain``, ...):
operations on an ``Array`` build a lazy DAG, and computing it plans, generates C, compiles and runs
the kernels."""
from lazysparse._version import __version__

from lazysparse.formats import Format, dense, csr, csc, coo, dcsr, dcsc, csf
from lazysparse.array import Array, compute
from lazysparse.api.creation import asarray, random, zeros, ones, eye
from lazysparse.api.expressions import expr
from lazysparse.api.operations import einsum, matmul, tensordot, add, subtract, multiply, divide, maximum, minimum, where, transpose, sum, max, min, prod, mean, exp, log, log1p, expm1, sqrt, abs, negative, sin, cos, tanh, sigmoid, relu, astype, clip
from lazysparse.runtime.kernel_cache import cache_info, clear_cache
from lazysparse.runtime.threads import set_num_threads, get_num_threads
from lazysparse.explain import explain, opcount
from lazysparse.api.joining import concatenate, stack, hstack, vstack
from lazysparse.api.logic import any, all
from lazysparse.api.construct import diags, kron, triu, tril
from lazysparse.compiler.schedule import Schedule
from lazysparse.api.statistics import var, std, nansum, nanprod, nanmax, nanmin, nanmean, argmax, argmin, ptp, average, isclose, allclose, array_equal, outer, inner, vdot, zeros_like, ones_like, full_like, empty_like, count_nonzero, argwhere, take, unique_values, unique_counts
from lazysparse.traced import jit
from lazysparse import linalg
from lazysparse.api import ufuncs, shaping
from lazysparse.api.ufuncs import *  # noqa: E402,F401,F403  (NumPy's and the array API's elementwise names)
from lazysparse.api.shaping import *  # noqa: E402,F401,F403  (squeeze, expand_dims, moveaxis, broadcast_to, ...)

__all__ = [
    "Format", "dense", "csr", "csc", "coo", "dcsr", "dcsc", "csf", "Array",
    "asarray", "random", "zeros", "ones", "eye",
    "einsum", "expr", "matmul", "tensordot", "add", "subtract", "multiply", "divide", "maximum",
    "minimum", "where", "transpose", "sum", "max", "min", "prod", "mean", "exp", "log", "log1p",
    "expm1", "sqrt", "abs", "negative", "sin", "cos", "tanh", "sigmoid", "relu", "astype", "clip",
    "compute", "cache_info", "clear_cache", "set_num_threads", "get_num_threads", "explain",
    "opcount", "jit", "Schedule", "concatenate", "stack", "hstack", "vstack", "any", "all", "diags", "kron", "triu", "tril",
    "var", "std", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "argmax", "argmin", "ptp",
    "average", "isclose", "allclose", "array_equal", "outer", "inner", "vdot", "zeros_like",
    "ones_like", "full_like", "empty_like", "count_nonzero", "linalg", "argwhere", "take",
    "unique_values", "unique_counts",
]
__all__ += [n for n in ufuncs.__all__ + shaping.__all__ if n not in __all__]
