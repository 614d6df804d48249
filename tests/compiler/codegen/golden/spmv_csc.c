
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
__attribute__((simd("notinbranch"))) extern double (acos)(double), (acosh)(double), (asin)(double), (asinh)(double), (atan)(double), (atanh)(double), (cbrt)(double), (cos)(double), (cosh)(double), (exp)(double), (exp10)(double), (exp2)(double), (expm1)(double), (log)(double), (log10)(double), (log1p)(double), (log2)(double), (sin)(double), (sinh)(double), (tan)(double), (tanh)(double), (atan2)(double, double), (hypot)(double, double), (pow)(double, double);
__attribute__((simd("notinbranch"))) extern float (acosf)(float), (acoshf)(float), (asinf)(float), (asinhf)(float), (atanf)(float), (atanhf)(float), (cbrtf)(float), (cosf)(float), (coshf)(float), (expf)(float), (exp10f)(float), (exp2f)(float), (expm1f)(float), (logf)(float), (log10f)(float), (log1pf)(float), (log2f)(float), (sinf)(float), (sinhf)(float), (tanf)(float), (tanhf)(float), (atan2f)(float, float), (hypotf)(float, float), (powf)(float, float);
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

#ifdef _OPENMP
extern int omp_get_thread_num(void);
#else
static inline int omp_get_thread_num(void) { return 0; }
#endif
#ifdef _OPENMP
extern int omp_get_num_threads(void);
#else
static inline int omp_get_num_threads(void) { return 1; }
#endif
#define LS_KEEP_N 128
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
}
/* out[i0] = sum_{i1} multiply(T0[i0,i1], T1[i1]) | order i1,i0 | dense-inter */
int32_t ls_kernel(void **p, int64_t *d) {
  int64_t n0_0 = d[0];
  const int32_t *restrict p0_1 = (const int32_t *)p[0];
  const int32_t *restrict c0_1 = (const int32_t *)p[1];
  const double *restrict v0 = (const double *)p[2];
  const double *restrict v1 = (const double *)p[3];
  int64_t s1_0 = d[1];
  int64_t N0 = d[2];
  int64_t N1 = d[3];
  double *restrict o = (double *)p[4];
  int64_t os0 = d[4];
  {
    const int64_t ls_ofull = (N1);
    const int64_t ls_osz = ls_ofull > 0 ? 1 + (N1 - 1) * os0 : 0;
    const int64_t ls_nt = (d[5] > 1 && ((!(ls_osz == ls_ofull) || (double)(d[5] - 1) * (double)ls_osz * (double)sizeof(double) > (double)LS_KEEP_MAX || ((double)ls_osz * (double)sizeof(double) <= 1048576.0 ? 2.0 : 12.0) * (double)ls_osz > ((((double)((int64_t)p0_1[(1) * n0_0]))))) ? -1.0 : ((((double)((int64_t)p0_1[(1) * n0_0]))))) >= (double)d[6]) ? d[5] : 1;
    d[7] = ls_nt;
    double * ls_pv = NULL;
    const int ls_own = ls_nt > 1 && ls_keep_take();
    double *const ls_o0 = o;
    int64_t ls_pt = ls_nt;
    if (ls_nt > 1) {
      ls_pv = (double *)ls_keep_get(ls_own, 0, (size_t)(ls_pt - 1) * (size_t)ls_osz * sizeof(double));
    }
    if (!ls_pv) ls_pt = 1;
    d[7] = ls_pt;
    #pragma omp parallel num_threads((int)ls_pt) if(ls_pt > 1)
    {
      const int64_t tid = (int64_t)omp_get_thread_num();
      const int64_t ls_tn = (int64_t)omp_get_num_threads();
      {
        double *restrict o = tid ? ls_pv + (tid - 1) * ls_osz : ls_o0;
        if (tid) memset(o, 0, (size_t)ls_osz * sizeof(double));
        const int64_t ls_r0 = ({ const int64_t g_ = (int64_t)p0_1[0] + ((int64_t)p0_1[N0] - (int64_t)p0_1[0]) * (tid) / ls_tn; int64_t l_ = 0, u_ = N0; while (l_ < u_) { const int64_t m_ = (l_ + u_) / 2; if ((int64_t)p0_1[m_] < g_) l_ = m_ + 1; else u_ = m_; } l_; });
        const int64_t ls_r1 = (tid + 1 == ls_tn) ? N0 : ({ const int64_t g_ = (int64_t)p0_1[0] + ((int64_t)p0_1[N0] - (int64_t)p0_1[0]) * (tid + 1) / ls_tn; int64_t l_ = 0, u_ = N0; while (l_ < u_) { const int64_t m_ = (l_ + u_) / 2; if ((int64_t)p0_1[m_] < g_) l_ = m_ + 1; else u_ = m_; } l_; });
        for (int64_t x0 = ls_r0; x0 < ls_r1; x0++) {
          int64_t q0_0 = (0) * n0_0 + x0;
          int64_t b0_1 = (int64_t)p0_1[q0_0];
          int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
          for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
            int64_t x1 = (int64_t)c0_1[j0_1];
            o[(x1)] += ((v0[j0_1]) * (v1[(x0)]));
          }
        }
      }
      if (ls_tn > 1) {
        #pragma omp barrier
        const int64_t e0_ = ls_osz * tid / ls_tn;
        const int64_t e1_ = ls_osz * (tid + 1) / ls_tn;
        for (int64_t t = 1; t < ls_tn; t++) {
          const double *restrict q_ = ls_pv + (t - 1) * ls_osz;
          for (int64_t e = e0_; e < e1_; e++) {
            ls_o0[e] += q_[e];
          }
        }
      }
    }
    ls_keep_put(ls_own, 0, ls_pv, (size_t)(ls_pt - 1) * (size_t)ls_osz * sizeof(double));
    if (ls_own) ls_keep_give();
  }
  return 0;
}
