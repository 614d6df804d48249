
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

/* fused: i{j∈v0{reset v4; k{S0}; S1}} */
int32_t ls_kernel(void **p, int64_t *d) {
  /* v4[i,j] = sum_{k} multiply(T0[i,k], T1[j,k])  <- T0=v1, T1=v2 ; v3[i,j] = multiply(T0[i,j], T1[i,j])  <- T0=v0, T1=v4 */
  int64_t n0_0 = d[0];
  const int32_t *restrict p0_1 = (const int32_t *)p[0];
  const int32_t *restrict c0_1 = (const int32_t *)p[1];
  const double *restrict v0 = (const double *)p[2];
  const double *restrict v1 = (const double *)p[3];
  int64_t s1_0 = d[1];
  int64_t s1_1 = d[2];
  const double *restrict v2 = (const double *)p[4];
  int64_t s2_0 = d[3];
  int64_t s2_1 = d[4];
  int64_t N_i = d[5];
  int64_t N_j = d[6];
  int64_t N_k = d[7];
  double *restrict o = (double *)p[5];
  int32_t ls_bad = 0;
  {
    int32_t *restrict ls_pos1 = (int32_t *)p[6];
    int32_t *restrict ls_crd1 = (int32_t *)p[7];
    const int64_t ls_nt = (d[10] > 1 && (((double)(N_i) * ((double)((int64_t)p0_1[(1) * n0_0]) / (double)(((1) * n0_0) > 0 ? ((1) * n0_0) : 1)) * (double)(N_k)) + ((double)(N_i) * ((double)((int64_t)p0_1[(1) * n0_0]) / (double)(((1) * n0_0) > 0 ? ((1) * n0_0) : 1)))) >= (double)d[11]) ? d[10] : 1;
    d[12] = ls_nt;
    const int64_t ls_chunk = (ls_nt > 1 ? (((N_i) / (64 * (int64_t)ls_nt)) > 16 ? ((N_i) / (64 * (int64_t)ls_nt)) : 16) : ((N_i) > 0 ? (N_i) : 1));
    const int64_t ls_nch = ((N_i) + ls_chunk - 1) / ls_chunk;
    int64_t ls_next[8 * ls_nt];  /* a run's next chunk, a cache line each */
    for (int64_t ls_w = 0; ls_w < ls_nt; ls_w++) {
      ls_next[8 * ls_w] = ls_w * ls_nch / ls_nt;
    }
    #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
    {
      double t4[1] = {0};
      const int ls_ok = !(0);
      if (!ls_ok) __atomic_store_n(&ls_bad, 1, __ATOMIC_RELAXED);
      int64_t ls_nb = 0;
      if ((d[8] + 65535) / 65536 > ls_nb) ls_nb = (d[8] + 65535) / 65536;
      if ((d[9] + 65535) / 65536 > ls_nb) ls_nb = (d[9] + 65535) / 65536;
      #pragma omp for schedule(dynamic, 1) nowait
      for (int64_t ls_b = 0; ls_b < ls_nb; ls_b++) {
        const int64_t ls_lo = ls_b * 65536;
        if (ls_lo < d[8]) memcpy(ls_pos1 + ls_lo, p0_1 + ls_lo, (size_t)(d[8] - ls_lo < 65536 ? d[8] - ls_lo : 65536) * sizeof(int32_t));
        if (ls_lo < d[9]) memcpy(ls_crd1 + ls_lo, c0_1 + ls_lo, (size_t)(d[9] - ls_lo < 65536 ? d[9] - ls_lo : 65536) * sizeof(int32_t));
      }
      if (ls_ok) {
        {
          if (N_k == 16) {
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
                    for (int64_t i = ls_r0; i < ls_r1; i++) {
                      ls_vd hv15[16 / (LS_VB / 8)];
                      for (int64_t k = 0; k < 16; k += (LS_VB / 8)) hv15[k / (LS_VB / 8)] = *(const ls_vd *)&v1[(i) * s1_0 + (k)];
                      for (int64_t q16 = (int64_t)p0_1[i]; q16 < (int64_t)p0_1[(i) + 1]; q16++) {
                        int64_t j = (int64_t)c0_1[q16];
                        if (q16 + 8 < (int64_t)p0_1[(1) * n0_0]) { const int64_t r_ = (int64_t)c0_1[q16 + 8]; for (int64_t f_ = 0; f_ < 16 && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                        t4[0] = 0.0;
                        ls_vd dv17[4];
                        for (int64_t k = 0; k < 16; k += (LS_VB / 8))
                        {
                          const ls_vd x_ = (hv15[k / (LS_VB / 8)] * (*(const ls_vd *)&v2[(j) * s2_0 + (k)]));
                          const int64_t b18 = k / (LS_VB / 8);
                          if (b18 < ((16 / (LS_VB / 8)) < 4 ? (16 / (LS_VB / 8)) : 4)) dv17[b18] = x_; else dv17[b18 % ((16 / (LS_VB / 8)) < 4 ? (16 / (LS_VB / 8)) : 4)] += x_;
                        }
                        for (int64_t s_ = ((16 / (LS_VB / 8)) < 4 ? (16 / (LS_VB / 8)) : 4) / 2; s_ >= 1; s_ /= 2) for (int64_t l_ = 0; l_ < s_; l_++) dv17[l_] += dv17[l_ + s_];
                        t4[0] += ls_hsum_vd(dv17[0]);
                        o[q16] = ((v0[q16]) * (t4[0]));
                      }
                    }
                  }
                }
              }
            }
          } else {
            if (N_k == 32) {
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
                      for (int64_t i = ls_r0; i < ls_r1; i++) {
                        ls_vd hv11[32 / (LS_VB / 8)];
                        for (int64_t k = 0; k < 32; k += (LS_VB / 8)) hv11[k / (LS_VB / 8)] = *(const ls_vd *)&v1[(i) * s1_0 + (k)];
                        for (int64_t q12 = (int64_t)p0_1[i]; q12 < (int64_t)p0_1[(i) + 1]; q12++) {
                          int64_t j = (int64_t)c0_1[q12];
                          if (q12 + 8 < (int64_t)p0_1[(1) * n0_0]) { const int64_t r_ = (int64_t)c0_1[q12 + 8]; for (int64_t f_ = 0; f_ < 32 && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                          t4[0] = 0.0;
                          ls_vd dv13[4];
                          for (int64_t k = 0; k < 32; k += (LS_VB / 8))
                          {
                            const ls_vd x_ = (hv11[k / (LS_VB / 8)] * (*(const ls_vd *)&v2[(j) * s2_0 + (k)]));
                            const int64_t b14 = k / (LS_VB / 8);
                            if (b14 < ((32 / (LS_VB / 8)) < 4 ? (32 / (LS_VB / 8)) : 4)) dv13[b14] = x_; else dv13[b14 % ((32 / (LS_VB / 8)) < 4 ? (32 / (LS_VB / 8)) : 4)] += x_;
                          }
                          for (int64_t s_ = ((32 / (LS_VB / 8)) < 4 ? (32 / (LS_VB / 8)) : 4) / 2; s_ >= 1; s_ /= 2) for (int64_t l_ = 0; l_ < s_; l_++) dv13[l_] += dv13[l_ + s_];
                          t4[0] += ls_hsum_vd(dv13[0]);
                          o[q12] = ((v0[q12]) * (t4[0]));
                        }
                      }
                    }
                  }
                }
              }
            } else {
              if (N_k == 64) {
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
                        for (int64_t i = ls_r0; i < ls_r1; i++) {
                          ls_vd hv7[64 / (LS_VB / 8)];
                          for (int64_t k = 0; k < 64; k += (LS_VB / 8)) hv7[k / (LS_VB / 8)] = *(const ls_vd *)&v1[(i) * s1_0 + (k)];
                          for (int64_t q8 = (int64_t)p0_1[i]; q8 < (int64_t)p0_1[(i) + 1]; q8++) {
                            int64_t j = (int64_t)c0_1[q8];
                            if (q8 + 8 < (int64_t)p0_1[(1) * n0_0]) { const int64_t r_ = (int64_t)c0_1[q8 + 8]; for (int64_t f_ = 0; f_ < 64 && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                            t4[0] = 0.0;
                            ls_vd dv9[4];
                            for (int64_t k = 0; k < 64; k += (LS_VB / 8))
                            {
                              const ls_vd x_ = (hv7[k / (LS_VB / 8)] * (*(const ls_vd *)&v2[(j) * s2_0 + (k)]));
                              const int64_t b10 = k / (LS_VB / 8);
                              if (b10 < ((64 / (LS_VB / 8)) < 4 ? (64 / (LS_VB / 8)) : 4)) dv9[b10] = x_; else dv9[b10 % ((64 / (LS_VB / 8)) < 4 ? (64 / (LS_VB / 8)) : 4)] += x_;
                            }
                            for (int64_t s_ = ((64 / (LS_VB / 8)) < 4 ? (64 / (LS_VB / 8)) : 4) / 2; s_ >= 1; s_ /= 2) for (int64_t l_ = 0; l_ < s_; l_++) dv9[l_] += dv9[l_ + s_];
                            t4[0] += ls_hsum_vd(dv9[0]);
                            o[q8] = ((v0[q8]) * (t4[0]));
                          }
                        }
                      }
                    }
                  }
                }
              } else {
                if (N_k == 128) {
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
                          for (int64_t i = ls_r0; i < ls_r1; i++) {
                            ls_vd hv3[128 / (LS_VB / 8)];
                            for (int64_t k = 0; k < 128; k += (LS_VB / 8)) hv3[k / (LS_VB / 8)] = *(const ls_vd *)&v1[(i) * s1_0 + (k)];
                            for (int64_t q4 = (int64_t)p0_1[i]; q4 < (int64_t)p0_1[(i) + 1]; q4++) {
                              int64_t j = (int64_t)c0_1[q4];
                              if (q4 + 8 < (int64_t)p0_1[(1) * n0_0]) { const int64_t r_ = (int64_t)c0_1[q4 + 8]; for (int64_t f_ = 0; f_ < 128 && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                              t4[0] = 0.0;
                              ls_vd dv5[4];
                              for (int64_t k = 0; k < 128; k += (LS_VB / 8))
                              {
                                const ls_vd x_ = (hv3[k / (LS_VB / 8)] * (*(const ls_vd *)&v2[(j) * s2_0 + (k)]));
                                const int64_t b6 = k / (LS_VB / 8);
                                if (b6 < ((128 / (LS_VB / 8)) < 4 ? (128 / (LS_VB / 8)) : 4)) dv5[b6] = x_; else dv5[b6 % ((128 / (LS_VB / 8)) < 4 ? (128 / (LS_VB / 8)) : 4)] += x_;
                              }
                              for (int64_t s_ = ((128 / (LS_VB / 8)) < 4 ? (128 / (LS_VB / 8)) : 4) / 2; s_ >= 1; s_ /= 2) for (int64_t l_ = 0; l_ < s_; l_++) dv5[l_] += dv5[l_ + s_];
                              t4[0] += ls_hsum_vd(dv5[0]);
                              o[q4] = ((v0[q4]) * (t4[0]));
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
                        const int64_t ls_r1 = ls_r0 + ls_chunk < (N_i) ? ls_r0 + ls_chunk : (N_i);
                        {
                          for (int64_t i = ls_r0; i < ls_r1; i++) {
                            for (int64_t q1 = (int64_t)p0_1[i]; q1 < (int64_t)p0_1[(i) + 1]; q1++) {
                              int64_t j = (int64_t)c0_1[q1];
                              if (q1 + 8 < (int64_t)p0_1[(1) * n0_0]) { const int64_t r_ = (int64_t)c0_1[q1 + 8]; for (int64_t f_ = 0; f_ < N_k && f_ < 128; f_ += 8) __builtin_prefetch(&v2[r_ * s2_0 + f_]); }
                              t4[0] = 0.0;
                              double acc2 = 0;
                              #pragma omp simd reduction(+:acc2)
                              for (int64_t k = 0; k < N_k; k++) {
                                acc2 += ((v1[(i) * s1_0 + (k)]) * (v2[(j) * s2_0 + (k)]));
                              }
                              t4[0] += acc2;
                              o[q1] = ((v0[q1]) * (t4[0]));
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
  }
  return ls_bad;
}
