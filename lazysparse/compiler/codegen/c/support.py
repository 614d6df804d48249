"""C support code every kernel or some kernels need before ``ls_kernel``: the base prelude
(headers, integer power, huge-page allocation, growable arrays, the permutation merge sort),
the ls.opcount counters, the thread number without OpenMP, and the declarations of glibc's
vector math functions (libmvec). ``text(support)`` is the C of a ``loopir.support.Support``.
"""
from __future__ import annotations

from lazysparse.compiler.codegen.c.mvec import MVEC_BINARY, MVEC_UNARY, calls_libm, mvec_declarations  # noqa: F401
from lazysparse.compiler.loopir.support import Support

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
#if defined(LS_MVEC) && defined(__GNUC__) && !defined(__clang__)
/* libm's functions have vector variants (glibc's libmvec; runtime/toolchain.py probes for them) */
""" + mvec_declarations() + r"""
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

# the ls.opcount counters of an instrumented build (compiler/lower/counting.py): relaxed atomic
# adds, so a parallel kernel counts right too
N_COUNTERS = 512
COUNTERS = (
    f"int64_t ls_cnt[{N_COUNTERS}];\n"
    "int64_t *ls_counters(void) { return ls_cnt; }\n"
    "#define LS_COUNT(k, n) __atomic_fetch_add(&ls_cnt[k], (int64_t)(n), __ATOMIC_RELAXED)\n"
)

# the thread number and team size, with or without an OpenMP runtime (kernels build either way,
# without omp.h)
THREAD_NUM = """#ifdef _OPENMP
extern int omp_get_thread_num(void);
#else
static inline int omp_get_thread_num(void) { return 0; }
#endif"""
TEAM_NUM = """#ifdef _OPENMP
extern int omp_get_num_threads(void);
#else
static inline int omp_get_num_threads(void) { return 1; }
#endif"""


# Vectors of the target's width (loopir.types.Vec of no lane count: compiler/lower/rows.py says
# why) as GCC/Clang vector extensions sized by the build's target macros: ``LS_VB`` bytes
# (VecBytes), ``ls_vd``/``ls_vf``, and VFma's one-rounding multiply-add
VECTORS = r"""
#if defined(__AVX512F__)
#define LS_VB 64
#elif defined(__AVX__)
#define LS_VB 32
#else
#define LS_VB 16
#endif
typedef double ls_vd __attribute__((vector_size(LS_VB), aligned(8), may_alias));
typedef float ls_vf __attribute__((vector_size(LS_VB), aligned(4), may_alias));
/* c + a * b in one rounding (the kernels build without contraction); only tiles of rows use it,
   and they are built for AVX-512 only (emit_row_tiles) */
#if defined(__AVX512F__)
#include <immintrin.h>
#define LS_VFMA_ls_vd(a, b, c) ((ls_vd)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define LS_VFMA_ls_vf(a, b, c) ((ls_vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#else
#define LS_VFMA_ls_vd(a, b, c) ((c) + (a) * (b))
#define LS_VFMA_ls_vf(a, b, c) ((c) + (a) * (b))
#endif
"""

# the lanes of a target-width vector added (VReduce "add")
VECTOR_SUMS = r"""
static inline double ls_hsum_vd(ls_vd v) {
#if defined(__AVX512F__)
  return _mm512_reduce_add_pd((__m512d)v);
#else
  double t[LS_VB / 8]; memcpy(t, &v, LS_VB);
  for (int s = LS_VB / 16; s >= 1; s /= 2) for (int l = 0; l < s; l++) t[l] += t[l + s];
  return t[0];
#endif
}
static inline float ls_hsum_vf(ls_vf v) {
#if defined(__AVX512F__)
  return _mm512_reduce_add_ps((__m512)v);
#else
  float t[LS_VB / 4]; memcpy(t, &v, LS_VB);
  for (int s = LS_VB / 8; s >= 1; s /= 2) for (int l = 0; l < s; l++) t[l] += t[l + s];
  return t[0];
#endif
}
"""


# the buffers a kernel keeps between calls (compiler/lower/teams.py: why), and their routines
KEEP = """#define LS_KEEP_N 128
#define LS_KEEP_MAX ((size_t)64 << 20)
static void *ls_kp[LS_KEEP_N];
static size_t ls_kc[LS_KEEP_N], ls_kall;
static int ls_kbusy;
static inline int ls_keep_take(void) { return __atomic_exchange_n(&ls_kbusy, 1, __ATOMIC_ACQUIRE) == 0; }
static inline void ls_keep_give(void) { __atomic_store_n(&ls_kbusy, 0, __ATOMIC_RELEASE); }
/* a buffer of at least n bytes: the kept one when it is large enough (own: the pool is ours) */
static inline void *ls_keep_get(int own, int64_t k, size_t n) {
  if (own && k < LS_KEEP_N && ls_kp[k]) {
    void *b = ls_kp[k];
    ls_kall -= ls_kc[k]; ls_kp[k] = NULL;
    if (ls_kc[k] >= n) return b;
    free(b);
  }
  return ls_malloc(n ? n : 1);
}
/* back to the pool (b: a buffer of n bytes), or freed */
static inline void ls_keep_put(int own, int64_t k, void *b, size_t n) {
  if (own && b && k < LS_KEEP_N && !ls_kp[k] && ls_kall + n <= LS_KEEP_MAX) {
    ls_kp[k] = b; ls_kc[k] = n; ls_kall += n;
  } else {
    free(b);
  }
}"""


# The first position in [lo, hi) of a sorted coordinate array holding at least x (hi if none):
# doubling steps from lo, then a binary search of the last step. Searches for increasing x
# start where the previous one ended, so k of them over n entries cost O(k log(n / k)).
GALLOP = """static inline int64_t ls_gallop_T(const T_ *restrict c, int64_t lo, int64_t hi, int64_t x) {
  int64_t s = 1;
  while (lo < hi && (int64_t)c[lo] < x) {
    const int64_t p = lo + s;
    if (p >= hi || (int64_t)c[p] >= x) {
      int64_t r = p < hi ? p : hi;
      lo++;
      while (lo < r) {
        const int64_t m = lo + ((r - lo) >> 1);
        if ((int64_t)c[m] < x) lo = m + 1; else r = m;
      }
      return lo;
    }
    lo = p;
    s <<= 1;
  }
  return lo;
}"""


def text(s) -> str:
    """The C of support piece ``s`` (a ``loopir.support.Support``, or C text as is)."""
    if isinstance(s, str):
        return s
    if not isinstance(s, Support):
        raise TypeError(f"unknown support code {s!r}")
    if s.name == "thread_num":
        return THREAD_NUM
    if s.name == "num_threads":
        return TEAM_NUM
    if s.name == "kept_buffers":
        return KEEP
    if s.name == "target_vectors":
        return VECTORS
    if s.name == "target_vector_sums":
        return VECTOR_SUMS
    if s.name == "gallop":
        from lazysparse.compiler.codegen.c.spelling import ctype
        t = ctype(s.get("index"))
        return GALLOP.replace("ls_gallop_T", f"ls_gallop_{t}").replace("T_", t)
    if s.name == "workspace":
        from lazysparse.compiler.codegen.c import exprs, workspace
        from lazysparse.compiler.codegen.c.spelling import ctype
        value, key = s.get("value"), s.get("key")
        # the value and key types arrive as dtype names (the key an index dtype: int32, int64)
        return workspace.prelude(s.get("policy"), ctype(value), ctype(key), s.get("reduce"), value,
                                 exprs.expr(s.get("identity")), s.get("count"))
    raise ValueError(f"no C support code named {s.name!r}")
