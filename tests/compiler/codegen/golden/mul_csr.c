
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
static inline int64_t ls_gallop_int32_t(const int32_t *restrict c, int64_t lo, int64_t hi, int64_t x) {
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
}
/* out[i0,i1] = multiply(T0[i0,i1], T1[i0,i1]) | order i0,i1 | append */
int32_t ls_kernel(void **p, int64_t *d) {
  int64_t n0_0 = d[0];
  const int32_t *restrict p0_1 = (const int32_t *)p[0];
  const int32_t *restrict c0_1 = (const int32_t *)p[1];
  const double *restrict v0 = (const double *)p[2];
  int64_t n1_0 = d[1];
  const int32_t *restrict p1_1 = (const int32_t *)p[3];
  const int32_t *restrict c1_1 = (const int32_t *)p[4];
  const double *restrict v1 = (const double *)p[5];
  int64_t N0 = d[2];
  int64_t N1 = d[3];
  int64_t osz0 = d[4];
  int64_t osz1 = d[5];
  int64_t ocap = d[6] > 16 ? d[6] : 16;
  int32_t * op1 = NULL;
  int32_t * oc1 = NULL;
  double * ov = NULL;
  int64_t * ls_ck = NULL;
  void * * ls_tp = NULL;
  op1 = (int32_t *)ls_calloc((size_t)(((1) * osz0) + 1), sizeof(int32_t));
  if (!op1) goto ls_fail;
  int64_t occ1 = ocap;
  oc1 = (int32_t *)ls_malloc((size_t)ocap * sizeof(int32_t));
  int64_t on1 = 0;
  if (!oc1) goto ls_fail;
  int64_t ovc = ocap;
  ov = (double *)ls_malloc((size_t)ocap * sizeof(double));
  if (!ov) goto ls_fail;
  {
    const int64_t ls_nt = (d[7] > 1 && (((double)ocap * (double)(sizeof(int32_t) + sizeof(double)) > (double)LS_KEEP_MAX) ? -1.0 : (((((double)((int64_t)p0_1[(1) * n0_0]) + (double)((int64_t)p1_1[(1) * n1_0])))) * 0.125)) >= (double)d[8]) ? d[7] : 1;
    d[9] = ls_nt;
    const int64_t ls_pch = (ls_nt > 1 ? (((N0) / (64 * (int64_t)ls_nt)) > 16 ? ((N0) / (64 * (int64_t)ls_nt)) : 16) : ((N0) > 0 ? (N0) : 1));
    const int64_t ls_nch = (N0 + ls_pch - 1) / ls_pch;
    const int64_t ls_tcap = ls_nt > 1 ? ocap / ls_nt + 16 : ocap;
    ls_tp = (void **)calloc((size_t)2 * ls_nt, sizeof(void *));
    ls_ck = (int64_t *)malloc(((size_t)4 * ls_nch + (size_t)3 * ls_nt + 1) * sizeof(int64_t));
    if (!ls_tp || !ls_ck) goto ls_fail;
    int ls_bad = 0;
    const int ls_own = ls_nt > 1 && ls_keep_take();
    if (ls_nt > 1) {
      for (int64_t t = 0; t < ls_nt; t++) {
        ls_tp[2 * t] = ls_keep_get(ls_own, 2 * t, (size_t)ls_tcap * sizeof(int32_t));
        ls_tp[2 * t + 1] = ls_keep_get(ls_own, 2 * t + 1, (size_t)ls_tcap * sizeof(double));
        if (!ls_tp[2 * t] || !ls_tp[2 * t + 1]) ls_bad = 1;
        ls_ck[4 * ls_nch + 3 * t] = 0;
        ls_ck[4 * ls_nch + 3 * t + 1] = ls_tcap;
        ls_ck[4 * ls_nch + 3 * t + 2] = ls_tcap;
      }
    } else {
      ls_tp[0] = (void *)oc1;
      ls_tp[1] = (void *)ov;
    }
    #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
    {
      const int64_t tid = (int64_t)omp_get_thread_num();
      int64_t occ1 = ls_tcap;
      int64_t ovc = ls_tcap;
      int64_t on1 = 0;
      int32_t * oc1 = (int32_t *)ls_tp[2 * tid];
      double * ov = (double *)ls_tp[2 * tid + 1];
      #pragma omp for schedule(dynamic, 1)
      for (int64_t ls_k = 0; ls_k < ls_nch; ls_k++) {
        int ls_b;
        #pragma omp atomic read
        ls_b = ls_bad;
        if (ls_b) continue;
        const int64_t ls_r0 = ls_k * ls_pch;
        const int64_t ls_r1 = ls_r0 + ls_pch < N0 ? ls_r0 + ls_pch : N0;
        const int64_t ls_s0 = on1;
        #define ls_fail ls_tfail
        {
          for (int64_t x0 = ls_r0; x0 < ls_r1; x0++) {
            int64_t q0_0 = (0) * n0_0 + x0;
            int64_t q1_0 = (0) * n1_0 + x0;
            int64_t od0 = (0) * osz0 + x0;
            int64_t b0_1 = (int64_t)p0_1[q0_0];
            int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
            int64_t b1_1 = (int64_t)p1_1[q1_0];
            int64_t z1_1 = (int64_t)p1_1[(q1_0) + 1];
            if ((z0_1 - b0_1) * 64 < z1_1 - b1_1) {
              int64_t j1_1 = b1_1;
              for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                int64_t x1 = (int64_t)c0_1[j0_1];
                j1_1 = ls_gallop_int32_t(c1_1, j1_1, z1_1, x1);
                if (j1_1 >= z1_1) break;
                int e1_1 = (int64_t)c1_1[j1_1] == x1;
                if (e1_1) {
                  double w = (((e1_1)) ? ((v0[j0_1]) * (((e1_1) ? v1[j1_1] : (double)0))) : (double)0);
                  if (w != 0) {
                    if (on1 >= ovc) { int64_t c_ = occ1; LS_GROW(int32_t, oc1, c_, on1 + 1); occ1 = c_; LS_GROW(double, ov, ovc, on1 + 1); }
                    oc1[on1] = (int32_t)x1;
                    ov[on1] = w;
                    on1++;
                  }
                }
              }
            } else {
              if ((z1_1 - b1_1) * 64 < z0_1 - b0_1) {
                int64_t j0_1 = b0_1;
                for (int64_t j1_1 = b1_1; j1_1 < z1_1; j1_1++) {
                  int64_t x1 = (int64_t)c1_1[j1_1];
                  j0_1 = ls_gallop_int32_t(c0_1, j0_1, z0_1, x1);
                  if (j0_1 >= z0_1) break;
                  int e0_1 = (int64_t)c0_1[j0_1] == x1;
                  if (e0_1) {
                    double w = (((e0_1)) ? ((((e0_1) ? v0[j0_1] : (double)0)) * (v1[j1_1])) : (double)0);
                    if (w != 0) {
                      if (on1 >= ovc) { int64_t c_ = occ1; LS_GROW(int32_t, oc1, c_, on1 + 1); occ1 = c_; LS_GROW(double, ov, ovc, on1 + 1); }
                      oc1[on1] = (int32_t)x1;
                      ov[on1] = w;
                      on1++;
                    }
                  }
                }
              } else {
                int64_t j0_1 = b0_1;
                int64_t j1_1 = b1_1;
                while (j0_1 < z0_1 && j1_1 < z1_1) {
                  int64_t k0_1 = (int64_t)c0_1[j0_1];
                  int64_t k1_1 = (int64_t)c1_1[j1_1];
                  int64_t x1 = (k1_1 < k0_1 ? k1_1 : k0_1);
                  int e0_1 = k0_1 == x1;
                  int e1_1 = k1_1 == x1;
                  if ((e0_1 && e1_1)) {
                    double w = (((e0_1) && (e1_1)) ? ((((e0_1) ? v0[j0_1] : (double)0)) * (((e1_1) ? v1[j1_1] : (double)0))) : (double)0);
                    if (w != 0) {
                      if (on1 >= ovc) { int64_t c_ = occ1; LS_GROW(int32_t, oc1, c_, on1 + 1); occ1 = c_; LS_GROW(double, ov, ovc, on1 + 1); }
                      oc1[on1] = (int32_t)x1;
                      ov[on1] = w;
                      on1++;
                    }
                  }
                  if (e0_1) j0_1 = j0_1 + 1;
                  if (e1_1) j1_1 = j1_1 + 1;
                }
              }
            }
            op1[od0 + 1] = on1;
          }
        }
        #undef ls_fail
        ls_ck[4 * ls_k] = ls_s0;
        ls_ck[4 * ls_k + 1] = on1 - ls_s0;
        ls_ck[4 * ls_k + 2] = tid;
        continue;
        ls_tfail: ;
        #pragma omp atomic write
        ls_bad = 1;
      }
      ls_tp[2 * tid] = (void *)oc1;
      ls_tp[2 * tid + 1] = (void *)ov;
      ls_ck[4 * ls_nch + 3 * tid] = on1;
      ls_ck[4 * ls_nch + 3 * tid + 1] = occ1;
      ls_ck[4 * ls_nch + 3 * tid + 2] = ovc;
    }
    if (ls_nt == 1) {
      oc1 = (int32_t *)ls_tp[0];
      ov = (double *)ls_tp[1];
      ls_tp[0] = ls_tp[1] = NULL;
      on1 = ls_ck[4 * ls_nch];
      occ1 = ls_ck[4 * ls_nch + 1];
      ovc = ls_ck[4 * ls_nch + 2];
    } else {
      if (!ls_bad) {
        int64_t ls_tot = 0;
        for (int64_t k = 0; k < ls_nch; k++) {
          ls_ck[4 * k + 3] = ls_tot;
          ls_tot += ls_ck[4 * k + 1];
        }
        if (ls_tot > occ1) {
          int32_t * gc_ = (int32_t *)ls_realloc(oc1, (size_t)ls_tot * sizeof(int32_t));
          if (gc_) {
            oc1 = gc_;
            occ1 = ls_tot;
          } else {
            ls_bad = 1;
          }
        }
        if (ls_tot > ovc) {
          double * gv_ = (double *)ls_realloc(ov, (size_t)ls_tot * sizeof(double));
          if (gv_) {
            ov = gv_;
            ovc = ls_tot;
          } else {
            ls_bad = 1;
          }
        }
        if (!ls_bad) {
          #pragma omp parallel for schedule(dynamic, 1) num_threads((int)ls_nt) if(ls_nt > 1)
          for (int64_t k = 0; k < ls_nch; k++) {
            const int64_t s_ = ls_ck[4 * k];
            const int64_t c_ = ls_ck[4 * k + 1];
            const int64_t t_ = ls_ck[4 * k + 2];
            const int64_t b_ = ls_ck[4 * k + 3];
            memcpy(oc1 + b_, (int32_t *)ls_tp[2 * t_] + s_, (size_t)c_ * sizeof(int32_t));
            memcpy(ov + b_, (double *)ls_tp[2 * t_ + 1] + s_, (size_t)c_ * sizeof(double));
            const int64_t r1_ = (k + 1) * ls_pch < N0 ? (k + 1) * ls_pch : N0;
            if (b_ != s_) {
              for (int64_t r = k * ls_pch; r < r1_; r++) {
                op1[r + 1] += (int32_t)(b_ - s_);
              }
            }
          }
          on1 = ls_tot;
        }
      }
    }
    for (int64_t t = 0; t < ls_nt; t++) {
      ls_keep_put(ls_own && !ls_bad, 2 * t, ls_tp[2 * t], (size_t)ls_ck[4 * ls_nch + 3 * t + 1] * sizeof(int32_t));
      ls_keep_put(ls_own && !ls_bad, 2 * t + 1, ls_tp[2 * t + 1], (size_t)ls_ck[4 * ls_nch + 3 * t + 2] * sizeof(double));
    }
    if (ls_own) ls_keep_give();
    free(ls_ck); free(ls_tp); ls_ck = NULL; ls_tp = NULL;
    if (ls_bad) goto ls_fail;
  }
  for (int64_t t = 1; t < ((1) * osz0) + 1; t++) {
    if (op1[t] < op1[t - 1]) op1[t] = op1[t - 1];
  }
  LS_FIT(int32_t, oc1, on1, occ1);
  LS_FIT(double, ov, on1, ovc);
  p[6] = (void *)op1;
  p[7] = (void *)oc1;
  p[8] = (void *)ov;
  d[10] = on1;
  return 0;
  ls_fail:
  p[6] = (void *)op1;
  p[7] = (void *)oc1;
  p[8] = (void *)ov;
  free(ls_ck);
  free(ls_tp);
  return 1;
}
