
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

/* fused: i∈v0{k∈v0{reset v4; l∈v0{j{S0}}; j{S1}}} */
int32_t ls_kernel(void **p, int64_t *d) {
  /* v4[i,k,j] = sum_{l} multiply(T0[i,k,l], T1[l,j])  <- T0=v0, T1=v2 ; v3[i,j] = sum_{k} multiply(T0[k,j], T1[i,k,j])  <- T0=v1, T1=v4 */
  const int32_t *restrict p0_0 = (const int32_t *)p[0];
  const int32_t *restrict c0_0 = (const int32_t *)p[1];
  const int32_t *restrict p0_1 = (const int32_t *)p[2];
  const int32_t *restrict c0_1 = (const int32_t *)p[3];
  const int32_t *restrict p0_2 = (const int32_t *)p[4];
  const int32_t *restrict c0_2 = (const int32_t *)p[5];
  const double *restrict v0 = (const double *)p[6];
  const double *restrict v1 = (const double *)p[7];
  int64_t s1_0 = d[0];
  int64_t s1_1 = d[1];
  const double *restrict v2 = (const double *)p[8];
  int64_t s2_0 = d[2];
  int64_t s2_1 = d[3];
  int64_t N_i = d[4];
  int64_t N_k = d[5];
  int64_t N_j = d[6];
  int64_t N_l = d[7];
  double *restrict o = (double *)p[9];
  int32_t ls_bad = 0;
  {
    const int64_t ls_nt = (d[9] > 1 && ((((double)((int64_t)p0_0[1]) / (double)((1) > 0 ? (1) : 1)) * ((double)((int64_t)p0_1[(int64_t)p0_0[1]]) / (double)(((int64_t)p0_0[1]) > 0 ? ((int64_t)p0_0[1]) : 1)) * ((double)((int64_t)p0_2[(int64_t)p0_1[(int64_t)p0_0[1]]]) / (double)(((int64_t)p0_1[(int64_t)p0_0[1]]) > 0 ? ((int64_t)p0_1[(int64_t)p0_0[1]]) : 1)) * (double)(N_j)) + (((double)((int64_t)p0_0[1]) / (double)((1) > 0 ? (1) : 1)) * ((double)((int64_t)p0_1[(int64_t)p0_0[1]]) / (double)(((int64_t)p0_0[1]) > 0 ? ((int64_t)p0_0[1]) : 1)) * (double)(N_j))) >= (double)d[10]) ? d[9] : 1;
    d[11] = ls_nt;
    const int64_t ls_chunk = (ls_nt > 1 ? ((((int64_t)p0_0[1] - (int64_t)p0_0[0]) / (64 * (int64_t)ls_nt)) > 16 ? (((int64_t)p0_0[1] - (int64_t)p0_0[0]) / (64 * (int64_t)ls_nt)) : 16) : (((int64_t)p0_0[1] - (int64_t)p0_0[0]) > 0 ? ((int64_t)p0_0[1] - (int64_t)p0_0[0]) : 1));
    const int64_t ls_nch = (((int64_t)p0_0[1] - (int64_t)p0_0[0]) + ls_chunk - 1) / ls_chunk;
    int64_t ls_next[8 * ls_nt];  /* a run's next chunk, a cache line each */
    for (int64_t ls_w = 0; ls_w < ls_nt; ls_w++) {
      ls_next[8 * ls_w] = ls_w * ls_nch / ls_nt;
    }
    #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
    {
      double *restrict t4 = (double *)calloc((size_t)(N_j) > 0 ? (size_t)(N_j) : 1, sizeof(double));
      const int ls_ok = !(!t4);
      if (!ls_ok) __atomic_store_n(&ls_bad, 1, __ATOMIC_RELAXED);
      int64_t ls_nb = 0;
      if ((d[8] + 65535) / 65536 > ls_nb) ls_nb = (d[8] + 65535) / 65536;
      #pragma omp for schedule(dynamic, 1)
      for (int64_t ls_b = 0; ls_b < ls_nb; ls_b++) {
        const int64_t ls_lo = ls_b * 65536;
        if (ls_lo < d[8]) memset(o + ls_lo, 0, (size_t)(d[8] - ls_lo < 65536 ? d[8] - ls_lo : 65536) * sizeof(double));
      }
      if (ls_ok) {
        {
          if (N_j == 16) {
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
                  const int64_t ls_r1 = ls_r0 + ls_chunk < ((int64_t)p0_0[1] - (int64_t)p0_0[0]) ? ls_r0 + ls_chunk : ((int64_t)p0_0[1] - (int64_t)p0_0[0]);
                  {
                    for (int64_t q17 = (int64_t)p0_0[0] + ls_r0; q17 < (int64_t)p0_0[0] + ls_r1; q17++) {
                      int64_t i = (int64_t)c0_0[q17];
                      ls_vd rh18[16 / (LS_VB / 8)];
                      for (int64_t j = 0; j < 16; j += (LS_VB / 8)) rh18[j / (LS_VB / 8)] = *(const ls_vd *)&o[i * 16 + j];
                      for (int64_t q19 = (int64_t)p0_1[q17]; q19 < (int64_t)p0_1[(q17) + 1]; q19++) {
                        int64_t k = (int64_t)c0_1[q19];
                        if (q19 + 8 < (int64_t)p0_1[(int64_t)p0_0[1]]) { const int64_t r_ = (int64_t)c0_1[q19 + 8]; for (int64_t f_ = 0; f_ < 16 && f_ < 128; f_ += 8) __builtin_prefetch(&v1[r_ * s1_0 + f_]); }
                        for (int64_t j = 0; j < 16; j++) {
                          t4[j] = 0.0;
                        }
                        ls_vd rh20[16 / (LS_VB / 8)];
                        for (int64_t j = 0; j < 16; j += (LS_VB / 8)) rh20[j / (LS_VB / 8)] = *(const ls_vd *)&t4[j];
                        for (int64_t q21 = (int64_t)p0_2[q19]; q21 < (int64_t)p0_2[(q19) + 1]; q21++) {
                          int64_t l = (int64_t)c0_2[q21];
                          if (q21 + 8 < (int64_t)p0_2[(int64_t)p0_1[(int64_t)p0_0[1]]]) { const int64_t r_ = (int64_t)c0_2[q21 + 8]; for (int64_t f_ = 0; f_ < 16 && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                          for (int64_t j = 0; j < 16; j += (LS_VB / 8))
                          {
                            rh20[j / (LS_VB / 8)] += (v0[q21] * (*(const ls_vd *)&v2[(l) * s2_0 + (j)]));
                          }
                        }
                        for (int64_t j = 0; j < 16; j += (LS_VB / 8)) *(ls_vd *)&t4[j] = rh20[j / (LS_VB / 8)];
                        for (int64_t j = 0; j < 16; j += (LS_VB / 8))
                        {
                          rh18[j / (LS_VB / 8)] += ((*(const ls_vd *)&v1[(k) * s1_0 + (j)]) * (*(const ls_vd *)&t4[j]));
                        }
                      }
                      for (int64_t j = 0; j < 16; j += (LS_VB / 8)) *(ls_vd *)&o[i * 16 + j] = rh18[j / (LS_VB / 8)];
                    }
                  }
                }
              }
            }
          } else {
            if (N_j == 32) {
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
                    const int64_t ls_r1 = ls_r0 + ls_chunk < ((int64_t)p0_0[1] - (int64_t)p0_0[0]) ? ls_r0 + ls_chunk : ((int64_t)p0_0[1] - (int64_t)p0_0[0]);
                    {
                      for (int64_t q12 = (int64_t)p0_0[0] + ls_r0; q12 < (int64_t)p0_0[0] + ls_r1; q12++) {
                        int64_t i = (int64_t)c0_0[q12];
                        ls_vd rh13[32 / (LS_VB / 8)];
                        for (int64_t j = 0; j < 32; j += (LS_VB / 8)) rh13[j / (LS_VB / 8)] = *(const ls_vd *)&o[i * 32 + j];
                        for (int64_t q14 = (int64_t)p0_1[q12]; q14 < (int64_t)p0_1[(q12) + 1]; q14++) {
                          int64_t k = (int64_t)c0_1[q14];
                          if (q14 + 8 < (int64_t)p0_1[(int64_t)p0_0[1]]) { const int64_t r_ = (int64_t)c0_1[q14 + 8]; for (int64_t f_ = 0; f_ < 32 && f_ < 128; f_ += 8) __builtin_prefetch(&v1[r_ * s1_0 + f_]); }
                          for (int64_t j = 0; j < 32; j++) {
                            t4[j] = 0.0;
                          }
                          ls_vd rh15[32 / (LS_VB / 8)];
                          for (int64_t j = 0; j < 32; j += (LS_VB / 8)) rh15[j / (LS_VB / 8)] = *(const ls_vd *)&t4[j];
                          for (int64_t q16 = (int64_t)p0_2[q14]; q16 < (int64_t)p0_2[(q14) + 1]; q16++) {
                            int64_t l = (int64_t)c0_2[q16];
                            if (q16 + 8 < (int64_t)p0_2[(int64_t)p0_1[(int64_t)p0_0[1]]]) { const int64_t r_ = (int64_t)c0_2[q16 + 8]; for (int64_t f_ = 0; f_ < 32 && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                            for (int64_t j = 0; j < 32; j += (LS_VB / 8))
                            {
                              rh15[j / (LS_VB / 8)] += (v0[q16] * (*(const ls_vd *)&v2[(l) * s2_0 + (j)]));
                            }
                          }
                          for (int64_t j = 0; j < 32; j += (LS_VB / 8)) *(ls_vd *)&t4[j] = rh15[j / (LS_VB / 8)];
                          for (int64_t j = 0; j < 32; j += (LS_VB / 8))
                          {
                            rh13[j / (LS_VB / 8)] += ((*(const ls_vd *)&v1[(k) * s1_0 + (j)]) * (*(const ls_vd *)&t4[j]));
                          }
                        }
                        for (int64_t j = 0; j < 32; j += (LS_VB / 8)) *(ls_vd *)&o[i * 32 + j] = rh13[j / (LS_VB / 8)];
                      }
                    }
                  }
                }
              }
            } else {
              if (N_j == 64) {
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
                      const int64_t ls_r1 = ls_r0 + ls_chunk < ((int64_t)p0_0[1] - (int64_t)p0_0[0]) ? ls_r0 + ls_chunk : ((int64_t)p0_0[1] - (int64_t)p0_0[0]);
                      {
                        for (int64_t q7 = (int64_t)p0_0[0] + ls_r0; q7 < (int64_t)p0_0[0] + ls_r1; q7++) {
                          int64_t i = (int64_t)c0_0[q7];
                          ls_vd rh8[64 / (LS_VB / 8)];
                          for (int64_t j = 0; j < 64; j += (LS_VB / 8)) rh8[j / (LS_VB / 8)] = *(const ls_vd *)&o[i * 64 + j];
                          for (int64_t q9 = (int64_t)p0_1[q7]; q9 < (int64_t)p0_1[(q7) + 1]; q9++) {
                            int64_t k = (int64_t)c0_1[q9];
                            if (q9 + 8 < (int64_t)p0_1[(int64_t)p0_0[1]]) { const int64_t r_ = (int64_t)c0_1[q9 + 8]; for (int64_t f_ = 0; f_ < 64 && f_ < 128; f_ += 8) __builtin_prefetch(&v1[r_ * s1_0 + f_]); }
                            for (int64_t j = 0; j < 64; j++) {
                              t4[j] = 0.0;
                            }
                            ls_vd rh10[64 / (LS_VB / 8)];
                            for (int64_t j = 0; j < 64; j += (LS_VB / 8)) rh10[j / (LS_VB / 8)] = *(const ls_vd *)&t4[j];
                            for (int64_t q11 = (int64_t)p0_2[q9]; q11 < (int64_t)p0_2[(q9) + 1]; q11++) {
                              int64_t l = (int64_t)c0_2[q11];
                              if (q11 + 8 < (int64_t)p0_2[(int64_t)p0_1[(int64_t)p0_0[1]]]) { const int64_t r_ = (int64_t)c0_2[q11 + 8]; for (int64_t f_ = 0; f_ < 64 && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                              for (int64_t j = 0; j < 64; j += (LS_VB / 8))
                              {
                                rh10[j / (LS_VB / 8)] += (v0[q11] * (*(const ls_vd *)&v2[(l) * s2_0 + (j)]));
                              }
                            }
                            for (int64_t j = 0; j < 64; j += (LS_VB / 8)) *(ls_vd *)&t4[j] = rh10[j / (LS_VB / 8)];
                            for (int64_t j = 0; j < 64; j += (LS_VB / 8))
                            {
                              rh8[j / (LS_VB / 8)] += ((*(const ls_vd *)&v1[(k) * s1_0 + (j)]) * (*(const ls_vd *)&t4[j]));
                            }
                          }
                          for (int64_t j = 0; j < 64; j += (LS_VB / 8)) *(ls_vd *)&o[i * 64 + j] = rh8[j / (LS_VB / 8)];
                        }
                      }
                    }
                  }
                }
              } else {
                if (N_j == 128) {
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
                        const int64_t ls_r1 = ls_r0 + ls_chunk < ((int64_t)p0_0[1] - (int64_t)p0_0[0]) ? ls_r0 + ls_chunk : ((int64_t)p0_0[1] - (int64_t)p0_0[0]);
                        {
                          for (int64_t q4 = (int64_t)p0_0[0] + ls_r0; q4 < (int64_t)p0_0[0] + ls_r1; q4++) {
                            int64_t i = (int64_t)c0_0[q4];
                            for (int64_t q5 = (int64_t)p0_1[q4]; q5 < (int64_t)p0_1[(q4) + 1]; q5++) {
                              int64_t k = (int64_t)c0_1[q5];
                              if (q5 + 8 < (int64_t)p0_1[(int64_t)p0_0[1]]) { const int64_t r_ = (int64_t)c0_1[q5 + 8]; for (int64_t f_ = 0; f_ < 128 && f_ < 128; f_ += 8) __builtin_prefetch(&v1[r_ * s1_0 + f_]); }
                              for (int64_t j = 0; j < 128; j++) {
                                t4[j] = 0.0;
                              }
                              for (int64_t q6 = (int64_t)p0_2[q5]; q6 < (int64_t)p0_2[(q5) + 1]; q6++) {
                                int64_t l = (int64_t)c0_2[q6];
                                if (q6 + 8 < (int64_t)p0_2[(int64_t)p0_1[(int64_t)p0_0[1]]]) { const int64_t r_ = (int64_t)c0_2[q6 + 8]; for (int64_t f_ = 0; f_ < 128 && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                                for (int64_t j = 0; j < 128; j += (LS_VB / 8))
                                {
                                  *(ls_vd *)&t4[j] += (v0[q6] * (*(const ls_vd *)&v2[(l) * s2_0 + (j)]));
                                }
                              }
                              for (int64_t j = 0; j < 128; j += (LS_VB / 8))
                              {
                                *(ls_vd *)&o[i * 128 + j] += ((*(const ls_vd *)&v1[(k) * s1_0 + (j)]) * (*(const ls_vd *)&t4[j]));
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                } else {
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
                        const int64_t ls_r1 = ls_r0 + ls_chunk < ((int64_t)p0_0[1] - (int64_t)p0_0[0]) ? ls_r0 + ls_chunk : ((int64_t)p0_0[1] - (int64_t)p0_0[0]);
                        {
                          for (int64_t q1 = (int64_t)p0_0[0] + ls_r0; q1 < (int64_t)p0_0[0] + ls_r1; q1++) {
                            int64_t i = (int64_t)c0_0[q1];
                            for (int64_t q2 = (int64_t)p0_1[q1]; q2 < (int64_t)p0_1[(q1) + 1]; q2++) {
                              int64_t k = (int64_t)c0_1[q2];
                              if (q2 + 8 < (int64_t)p0_1[(int64_t)p0_0[1]]) { const int64_t r_ = (int64_t)c0_1[q2 + 8]; for (int64_t f_ = 0; f_ < N_j && f_ < 128; f_ += 8) __builtin_prefetch(&v1[r_ * s1_0 + f_]); }
                              for (int64_t j = 0; j < N_j; j++) {
                                t4[j] = 0.0;
                              }
                              for (int64_t q3 = (int64_t)p0_2[q2]; q3 < (int64_t)p0_2[(q2) + 1]; q3++) {
                                int64_t l = (int64_t)c0_2[q3];
                                if (q3 + 8 < (int64_t)p0_2[(int64_t)p0_1[(int64_t)p0_0[1]]]) { const int64_t r_ = (int64_t)c0_2[q3 + 8]; for (int64_t f_ = 0; f_ < N_j && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                                for (int64_t j = 0; j < N_j; j++) {
                                  t4[j] += ((v0[q3]) * (v2[(l) * s2_0 + (j)]));
                                }
                              }
                              for (int64_t j = 0; j < N_j; j++) {
                                o[i * N_j + j] += ((v1[(k) * s1_0 + (j)]) * (t4[j]));
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
      free(t4);
    }
  }
  return ls_bad;
}
