
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
/* fused: i{reset v2; j∈v0{S0}; S1} */
int32_t ls_kernel(void **p, int64_t *d) {
  /* v2[i] = sum_{j} multiply(T0[i,j], T1[j])  <- T0=v0, T1=v1 ; v6[i] = add(T0[i], multiply(T1[], subtract(T0[i], T2[i])))  <- T0=v1, T1=v4, T2=v2 */
  int64_t n0_0 = d[0];
  const int32_t *restrict p0_1 = (const int32_t *)p[0];
  const int32_t *restrict c0_1 = (const int32_t *)p[1];
  const double *restrict v0 = (const double *)p[2];
  const double *restrict v1 = (const double *)p[3];
  int64_t s1_0 = d[1];
  const double v4s = *(const double *)p[4];
  int64_t N_i = d[2];
  int64_t N_j = d[3];
  double *restrict o = (double *)p[5];
  int32_t ls_bad = 0;
  const int32_t *restrict ls_ord0 = (const int32_t *)p[6];
  {
    const int64_t ls_nt = (d[4] > 1 && (((double)(N_i) * ((double)((int64_t)p0_1[(1) * n0_0]) / (double)(((1) * n0_0) > 0 ? ((1) * n0_0) : 1))) + ((double)(N_i))) >= (double)d[5]) ? d[4] : 1;
    d[6] = ls_nt;
    const int64_t ls_chunk = (ls_nt > 1 ? (((N_i) / (64 * (int64_t)ls_nt)) > 16 ? ((N_i) / (64 * (int64_t)ls_nt)) : 16) : ((N_i) > 0 ? (N_i) : 1));
    const int64_t ls_nch = ((N_i) + ls_chunk - 1) / ls_chunk;
    int64_t ls_next[8 * ls_nt];  /* a run's next chunk, a cache line each */
    for (int64_t ls_w = 0; ls_w < ls_nt; ls_w++) {
      ls_next[8 * ls_w] = ls_w * ls_nch / ls_nt;
    }
    #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
    {
      double t2[1] = {0};
      const int ls_ok = !(0);
      if (!ls_ok) __atomic_store_n(&ls_bad, 1, __ATOMIC_RELAXED);
      if (ls_ok) {
        {
          const int64_t ls_me = (int64_t)omp_get_thread_num();
          for (int64_t ls_s = 0; ls_s < ls_nt; ls_s++) {
            const int64_t ls_w = (ls_me + ls_s) % ls_nt;
            const int64_t ls_e = (ls_w + 1) * ls_nch / ls_nt;
            while (1) {
              int64_t ls_k;
              #pragma omp atomic capture
              ls_k = ls_next[8 * ls_w]++;
              if (ls_k >= ls_e) break;
              const int64_t ls_r0 = ls_k * ls_chunk;
              const int64_t ls_r1 = ls_r0 + ls_chunk < (N_i) ? ls_r0 + ls_chunk : (N_i);
              {
                if (ls_ord0) {
                  for (int64_t k1 = ls_r0; k1 < ls_r1; k1++) {
                    const int64_t i = (int64_t)ls_ord0[k1];
                    t2[0] = 0.0;
                    int64_t b2 = (int64_t)p0_1[i];
                    int64_t z3 = (int64_t)p0_1[(i) + 1];
                    int64_t q4 = b2;
                    double acc5 = 0;
                    double acc6 = 0;
                    double acc7 = 0;
                    double acc8 = 0;
                    while (q4 + 3 < z3) {
                      {
                        int64_t j = (int64_t)c0_1[q4];
                        acc5 += ((v0[q4]) * (v1[(j)]));
                      }
                      {
                        int64_t j = (int64_t)c0_1[(q4 + 1)];
                        acc6 += ((v0[(q4 + 1)]) * (v1[(j)]));
                      }
                      {
                        int64_t j = (int64_t)c0_1[(q4 + 2)];
                        acc7 += ((v0[(q4 + 2)]) * (v1[(j)]));
                      }
                      {
                        int64_t j = (int64_t)c0_1[(q4 + 3)];
                        acc8 += ((v0[(q4 + 3)]) * (v1[(j)]));
                      }
                      q4 += 4;
                    }
                    while (q4 < z3) {
                      {
                        int64_t j = (int64_t)c0_1[q4];
                        acc5 += ((v0[q4]) * (v1[(j)]));
                      }
                      q4 += 1;
                    }
                    t2[0] += (acc5 + acc6 + acc7 + acc8);
                    o[i] = ((v1[(i)]) + (((v4s) * (((v1[(i)]) - (t2[0]))))));
                  }
                } else {
                  for (int64_t i = ls_r0; i < ls_r1; i++) {
                    t2[0] = 0.0;
                    int64_t b9 = (int64_t)p0_1[i];
                    int64_t z10 = (int64_t)p0_1[(i) + 1];
                    int64_t q11 = b9;
                    double acc12 = 0;
                    double acc13 = 0;
                    double acc14 = 0;
                    double acc15 = 0;
                    while (q11 + 3 < z10) {
                      {
                        int64_t j = (int64_t)c0_1[q11];
                        acc12 += ((v0[q11]) * (v1[(j)]));
                      }
                      {
                        int64_t j = (int64_t)c0_1[(q11 + 1)];
                        acc13 += ((v0[(q11 + 1)]) * (v1[(j)]));
                      }
                      {
                        int64_t j = (int64_t)c0_1[(q11 + 2)];
                        acc14 += ((v0[(q11 + 2)]) * (v1[(j)]));
                      }
                      {
                        int64_t j = (int64_t)c0_1[(q11 + 3)];
                        acc15 += ((v0[(q11 + 3)]) * (v1[(j)]));
                      }
                      q11 += 4;
                    }
                    while (q11 < z10) {
                      {
                        int64_t j = (int64_t)c0_1[q11];
                        acc12 += ((v0[q11]) * (v1[(j)]));
                      }
                      q11 += 1;
                    }
                    t2[0] += (acc12 + acc13 + acc14 + acc15);
                    o[i] = ((v1[(i)]) + (((v4s) * (((v1[(i)]) - (t2[0]))))));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return ls_bad;
}
