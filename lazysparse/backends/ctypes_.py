"""C spellings of dtypes, scalar operations and reductions (NumPy semantics)."""
from __future__ import annotations

import numpy as np

CTYPES = {
    "bool": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double",
    "complex64": "float _Complex", "complex128": "double _Complex",
}


def ctype(dtype) -> str:
    d = str(np.dtype(dtype))
    try:
        return CTYPES[d]
    except KeyError:
        raise TypeError(f"lazysparse cannot generate code for dtype {d}") from None


def kind(dtype) -> str:
    return np.dtype(dtype).kind  # b i u f c


def literal(value, dtype) -> str:
    """A C literal for a NumPy scalar (identities and fill values only)."""
    k = kind(dtype)
    if k == "b":
        return "1" if value else "0"
    if k in "iu":
        v = int(value)
        if v == np.iinfo(np.int64).min:
            return "INT64_MIN"
        return f"((int64_t){v}LL)" if k == "i" else f"((uint64_t){v}ULL)"
    if k == "f":
        v = float(value)
        if np.isnan(v):
            return "NAN"
        if np.isinf(v):
            return "INFINITY" if v > 0 else "(-INFINITY)"
        return repr(v)
    if k == "c":
        return f"({float(np.real(value))!r} + {float(np.imag(value))!r}*I)"
    raise TypeError(f"no C literal for {dtype}")


def cast(expr: str, src, dst) -> str:
    src, dst = str(np.dtype(src)), str(np.dtype(dst))
    if src == dst:
        return expr
    if kind(dst) == "b":
        return f"(({expr}) != 0)"
    if kind(src) == "c" and kind(dst) != "c":
        return f"(({ctype(dst)})creal({expr}))"
    return f"(({ctype(dst)})({expr}))"


def _fmax(a, b, k, big):
    if k == "c":
        raise TypeError("maximum/minimum of complex values is not supported")
    cmp = ">" if big else "<"
    if k == "f":
        return f"((({a}) {cmp} ({b}) || ({a}) != ({a})) ? ({a}) : ({b}))"
    return f"((({a}) {cmp} ({b})) ? ({a}) : ({b}))"


def call(op: str, args: list, in_dtypes, out_dtype) -> str:
    """C expression for ``op`` on already-cast argument expressions."""
    k = kind(in_dtypes[0]) if in_dtypes else "f"
    a = args[0] if args else None
    b = args[1] if len(args) > 1 else None
    simple = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "less": "<",
              "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==",
              "not_equal": "!=", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
    if op in simple:
        if op in ("add",) and k == "b":
            return f"(({a}) | ({b}))"
        if op == "multiply" and k == "b":
            return f"(({a}) & ({b}))"
        if op in ("less", "less_equal", "greater", "greater_equal") and k == "c":
            c = simple[op]
            strict = c.rstrip("=")
            return (f"((creal({a}) {strict} creal({b})) || (creal({a}) == creal({b}) && "
                    f"cimag({a}) {c} cimag({b})))")
        return f"(({a}) {simple[op]} ({b}))"
    if op == "logical_and":
        return f"(({a}) && ({b}))"
    if op == "logical_or":
        return f"(({a}) || ({b}))"
    if op == "logical_xor":
        return f"((!!({a})) != (!!({b})))"
    if op == "logical_not":
        return f"(!({a}))"
    if op == "maximum":
        return _fmax(a, b, k, True)
    if op == "minimum":
        return _fmax(a, b, k, False)
    if op == "power":
        if k in "iu":
            return f"ls_ipow(({a}), ({b}))"
        if k == "b":
            return f"(({a}) | !({b}))"
        if k == "c":  # NumPy: 0 ** 0 == 1 for complex too (C's cpow gives nan)
            return f"((({b}) == 0) ? ({ctype(out_dtype)})1 : pow(({a}), ({b})))"
        return f"pow(({a}), ({b}))"
    if op == "negative":
        return f"(-({a}))"
    if op == "absolute":
        if k in "iu":
            return f"((({a}) < 0) ? -({a}) : ({a}))"
        if k == "b":
            return a
        if k == "c":
            return f"cabs({a})"
        return f"fabs({a})"
    if op == "invert":
        return f"(!({a}))" if k == "b" else f"(~({a}))"
    if op == "sign":
        if k == "f":
            return f"((({a}) != ({a})) ? ({a}) : (({ctype(out_dtype)})((({a}) > 0) - (({a}) < 0))))"
        if k == "c":  # NumPy 2's: z / |z|, and 0 at 0 (NaN parts give NaN)
            return f"((({a}) == 0) ? ({ctype(out_dtype)})0 : ({a}) / cabs({a}))"
        return f"(({ctype(out_dtype)})((({a}) > 0) - (({a}) < 0)))"
    if op == "square":
        return f"(({a}) * ({a}))"
    if op == "conjugate":
        return f"conj({a})" if k == "c" else a
    if op == "sigmoid":
        return f"(1 / (1 + exp(-({a}))))"
    if op == "relu":
        if k == "f":
            return f"((({a}) > 0 || ({a}) != ({a})) ? ({a}) : 0)"
        return f"((({a}) > 0) ? ({a}) : 0)"
    if op == "where":
        return f"(({a}) ? ({b}) : ({args[2]}))"
    if op == "cast":
        return cast(a, in_dtypes[0], out_dtype)
    if op in ("rad2deg", "deg2rad"):  # (NumPy's: a multiplication by its constant)
        c = repr(180.0 / np.pi) if op == "rad2deg" else repr(np.pi / 180.0)
        return f"(({a}) * ({ctype(out_dtype)}){c})"
    if op in ("real", "imag"):  # (of a real number: itself, and zero)
        if k == "c":
            return f"{'creal' if op == 'real' else 'cimag'}({a})"
        return a if op == "real" else f"(({ctype(out_dtype)})0)"
    if k == "c" and op == "rint":  # each part rounded, as NumPy does
        return f"(rint(creal({a})) + rint(cimag({a})) * I)"
    if k == "c" and op in ("log2", "log10", "exp2"):  # (no complex spelling in tgmath.h)
        return {"log2": f"(clog({a}) / log(2.0))", "log10": f"(clog({a}) / log(10.0))",
                "exp2": f"cexp(({a}) * log(2.0))"}[op]
    fn = {"exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "sin": "sin",
          "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "arcsin": "asin",
          "arctan": "atan", "arcsinh": "asinh", "arctanh": "atanh", "arccos": "acos",
          "arccosh": "acosh", "cosh": "cosh", "log2": "log2", "log10": "log10", "exp2": "exp2",
          "cbrt": "cbrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "rint": "rint"}.get(op)
    if fn is None:
        raise TypeError(f"no C code for operation {op}")
    if k == "c" and fn in ("log1p", "expm1"):
        return f"({'clog(1 + (' + a + '))' if fn == 'log1p' else '(cexp(' + a + ') - 1)'})"
    return f"{fn}({a})"


def reduce_step(red: str, acc: str, v: str, dtype) -> str:
    """Statement folding ``v`` into ``acc``."""
    k = kind(dtype)
    if red == "sum":
        return f"{acc} |= {v};" if k == "b" else f"{acc} += {v};"
    if red == "prod":
        return f"{acc} &= {v};" if k == "b" else f"{acc} *= {v};"
    big = red == "max"
    if k == "b":
        return f"{acc} {'|' if big else '&'}= {v};"
    cmp = ">" if big else "<"
    if k == "f":
        return f"if (({v}) {cmp} {acc} || ({v}) != ({v})) {acc} = {v};"
    return f"if (({v}) {cmp} {acc}) {acc} = {v};"


PRELUDE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>
#include <complex.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#ifndef INFINITY
#define INFINITY (1.0/0.0)
#endif
#ifndef NAN
#define NAN (0.0/0.0)
#endif
static inline int64_t ls_ipow(int64_t a, int64_t b) {
  int64_t r = 1;
  if (b < 0) return (a == 1) ? 1 : ((a == -1) ? ((b & 1) ? -1 : 1) : 0);
  while (b) { if (b & 1) r *= a; a *= a; b >>= 1; }
  return r;
}
/* Large buffers ask for transparent huge pages, as NumPy does for its arrays: a result of
   hundreds of MB otherwise pays one page fault per 4 KB on first touch. Freed with free(). */
static inline void *ls_huge(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p && n >= ((size_t)4 << 20)) {
    uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + n) & ~(uintptr_t)4095;
    if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
  }
#endif
  return p;
}
static inline void *ls_malloc(size_t n) { return ls_huge(malloc(n), n); }
static inline void *ls_calloc(size_t k, size_t n) { return ls_huge(calloc(k, n), k * n); }
static inline void *ls_realloc(void *p, size_t n) { return ls_huge(realloc(p, n), n); }
#define LS_GROW(T, ptr, cap, need) do { if ((need) > (cap)) { \
    int64_t nc_ = (cap) * 2 > (need) ? (cap) * 2 : (need); \
    T *np_ = (T *)ls_realloc((ptr), (size_t)nc_ * sizeof(T)); \
    if (!np_) goto ls_fail; (ptr) = np_; (cap) = nc_; } } while (0)
/* Stable merge sort of the permutation a[0..n) by key[a[i]] (t: scratch of n entries); returns
   the buffer holding the result (a or t). The sort assembly uses it for a level whose extent is
   much larger than the number of entries, where a counting sort's histogram would be O(extent). */
static inline int64_t *ls_msort(int64_t *a, int64_t *t, int64_t n, const int64_t *key) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = n - lo > w ? lo + w : n, hi = n - lo > 2 * w ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) t[k++] = (key[a[j]] < key[a[i]]) ? a[j++] : a[i++];
      while (i < mid) t[k++] = a[i++];
      while (j < hi) t[k++] = a[j++];
    }
    int64_t *s = a; a = t; t = s;
  }
  return a;
}
#define LS_RESIZE(T, ptr, n) do { T *np_ = (T *)realloc((ptr), (size_t)((n) > 0 ? (n) : 1) * sizeof(T)); \
    if (!np_) goto ls_fail; (ptr) = np_; } while (0)
/* A result buffer of capacity cap holding n entries is shrunk only when over an eighth of it
   is spare. Shrinking a large buffer by a sliver defeats glibc's adaptive mmap threshold: the
   threshold rises to the size of a freed mmapped chunk, which after the shrink is just below
   the next call's request, so every call paid a fresh mmap and its page faults (A + B + C on
   cage10: 880 faults and 2 ms of system time a call, against 0 with this rule). */
#define LS_FIT(T, ptr, n, cap) do { if ((n) < (cap) - (cap) / 8) LS_RESIZE(T, ptr, n); } while (0)
"""
