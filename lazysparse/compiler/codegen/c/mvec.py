"""glibc's vector math functions (libmvec): which of libm's functions have vector variants, their
declarations for the kernels' prelude, and whether C text calls one of them."""
from __future__ import annotations

import re

# glibc's vector math library (libmvec): SIMD variants of libm's functions, which gcc calls from
# a vectorised loop once a declaration says they exist. The prelude declares them under
# ``LS_MVEC``, which the toolchain defines where its probe found them working (runtime/
# toolchain.py, whose probe declares the same list: tests/compiler/loopir check they agree).
MVEC_UNARY = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cos", "cosh", "exp",
              "exp10", "exp2", "expm1", "log", "log10", "log1p", "log2", "sin", "sinh", "tan", "tanh")
MVEC_BINARY = ("atan2", "hypot", "pow")


def mvec_declarations() -> str:
    """The declarations that let gcc vectorise calls of libm's functions (double and float):
    gcc's ``simd`` attribute on each, named in parentheses so tgmath.h's macro does not expand."""
    def names(t, suffix):
        return ", ".join(f"({f}{suffix})({t}, {t})" if f in MVEC_BINARY else f"({f}{suffix})({t})"
                         for f in MVEC_UNARY + MVEC_BINARY)
    return (f'__attribute__((simd("notinbranch"))) extern double {names("double", "")};\n'
            f'__attribute__((simd("notinbranch"))) extern float {names("float", "f")};')


_LIBM_CALL = re.compile(r"\b(?:" + "|".join(MVEC_UNARY + MVEC_BINARY) + r")f?\s*\(")


def calls_libm(code: str) -> bool:
    """Whether C ``code`` calls one of the functions that have vector variants (libmvec)."""
    return _LIBM_CALL.search(code) is not None
