
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
/* out[i0,i1] = T0[i0,i1] | order i0,i1 | sort */
int32_t ls_kernel(void **p, int64_t *d) {
  int64_t n0_0 = d[0];
  const int32_t *restrict p0_1 = (const int32_t *)p[0];
  const int32_t *restrict c0_1 = (const int32_t *)p[1];
  const double *restrict v0 = (const double *)p[2];
  int64_t N0 = d[1];
  int64_t N1 = d[2];
  int64_t osz0 = d[3];
  int64_t osz1 = d[4];
  int64_t ocap = d[5] > 16 ? d[5] : 16;
  int32_t * op1 = NULL;
  int32_t * oc1 = NULL;
  double * ov = NULL;
  int64_t * tc0 = NULL;
  int64_t * tc1 = NULL;
  double * tv = NULL;
  int64_t * perm = NULL;
  int64_t * tmp = NULL;
  int64_t * h = NULL;
  int64_t * nx = NULL;
  const int64_t ls_nt = (d[6] > 1 && ((double)((int64_t)p0_1[(1) * n0_0])) >= (double)d[7]) ? d[6] : 1;
  d[8] = ls_nt;
  h = (int64_t *)ls_calloc((size_t)ls_nt * ((size_t)osz0 + 2), sizeof(int64_t));
  if (!h) goto ls_fail;
  #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
  {
    const int64_t tid = (int64_t)omp_get_thread_num();
    int64_t * ht = h + tid * (osz0 + 2);
    const int64_t ls_r0 = ({ const int64_t g_ = (int64_t)p0_1[0] + ((int64_t)p0_1[N0] - (int64_t)p0_1[0]) * (tid) / ls_nt; int64_t l_ = 0, u_ = N0; while (l_ < u_) { const int64_t m_ = (l_ + u_) / 2; if ((int64_t)p0_1[m_] < g_) l_ = m_ + 1; else u_ = m_; } l_; });
    const int64_t ls_r1 = (tid + 1 == ls_nt) ? N0 : ({ const int64_t g_ = (int64_t)p0_1[0] + ((int64_t)p0_1[N0] - (int64_t)p0_1[0]) * (tid + 1) / ls_nt; int64_t l_ = 0, u_ = N0; while (l_ < u_) { const int64_t m_ = (l_ + u_) / 2; if ((int64_t)p0_1[m_] < g_) l_ = m_ + 1; else u_ = m_; } l_; });
    for (int64_t t = (int64_t)p0_1[ls_r0]; t < (int64_t)p0_1[ls_r1]; t++) {
      ht[(int64_t)c0_1[t] + 1]++;
    }
  }
  {
    int64_t at = 0;
    for (int64_t r = 0; r < osz0; r++) {
      for (int64_t tt = 0; tt < ls_nt; tt++) {
        int64_t * hh = h + tt * (osz0 + 2);
        const int64_t k = hh[r + 1];
        hh[r] = at;
        at += k;
      }
    }
    h[osz0] = at;
  }
  ocap = h[osz0] > 16 ? h[osz0] : 16;
  op1 = (int32_t *)ls_calloc((size_t)(((1) * osz0) + 1), sizeof(int32_t));
  if (!op1) goto ls_fail;
  int64_t occ1 = ocap;
  oc1 = (int32_t *)ls_malloc((size_t)ocap * sizeof(int32_t));
  int64_t on1 = 0;
  if (!oc1) goto ls_fail;
  int64_t ovc = ocap;
  ov = (double *)ls_malloc((size_t)ocap * sizeof(double));
  if (!ov) goto ls_fail;
  for (int64_t t = 0; t < osz0 + 1; t++) {
    op1[t] = (int32_t)h[t];
  }
  int64_t nz = 0;
  {
    #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1) reduction(+:nz)
    {
      const int64_t tid = (int64_t)omp_get_thread_num();
      int64_t * ht = h + tid * (osz0 + 2);
      const int64_t ls_r0 = ({ const int64_t g_ = (int64_t)p0_1[0] + ((int64_t)p0_1[N0] - (int64_t)p0_1[0]) * (tid) / ls_nt; int64_t l_ = 0, u_ = N0; while (l_ < u_) { const int64_t m_ = (l_ + u_) / 2; if ((int64_t)p0_1[m_] < g_) l_ = m_ + 1; else u_ = m_; } l_; });
      const int64_t ls_r1 = (tid + 1 == ls_nt) ? N0 : ({ const int64_t g_ = (int64_t)p0_1[0] + ((int64_t)p0_1[N0] - (int64_t)p0_1[0]) * (tid + 1) / ls_nt; int64_t l_ = 0, u_ = N0; while (l_ < u_) { const int64_t m_ = (l_ + u_) / 2; if ((int64_t)p0_1[m_] < g_) l_ = m_ + 1; else u_ = m_; } l_; });
      for (int64_t x0 = ls_r0; x0 < ls_r1; x0++) {
        int64_t q0_0 = (0) * n0_0 + x0;
        int64_t b0_1 = (int64_t)p0_1[q0_0];
        int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
        for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
          int64_t x1 = (int64_t)c0_1[j0_1];
          double w = v0[j0_1];
          const int64_t at = ht[x1]++;
          oc1[at] = (int32_t)x0;
          ov[at] = w;
          nz += (w == 0);
        }
      }
    }
  }
  on1 = op1[osz0];
  free(h); h = NULL;
  if (nz > 0) {
    int64_t o = 0;
    int64_t s = 0;
    for (int64_t r = 0; r < osz0; r++) {
      const int64_t e = op1[r + 1];
      for (int64_t t = s; t < e; t++) {
        oc1[o] = oc1[t];
        ov[o] = ov[t];
        o += ov[t] != 0;
      }
      op1[r + 1] = (int32_t)o;
      s = e;
    }
    on1 = o;
  }
  for (int64_t t = 1; t < ((1) * osz0) + 1; t++) {
    if (op1[t] < op1[t - 1]) op1[t] = op1[t - 1];
  }
  LS_FIT(int32_t, oc1, on1, occ1);
  LS_FIT(double, ov, on1, ovc);
  p[3] = (void *)op1;
  p[4] = (void *)oc1;
  p[5] = (void *)ov;
  d[9] = on1;
  return 0;
  ls_fail:
  p[3] = (void *)op1;
  p[4] = (void *)oc1;
  p[5] = (void *)ov;
  free(tc0);
  free(tc1);
  free(tv);
  free(perm);
  free(tmp);
  free(h);
  free(nx);
  return 1;
}
