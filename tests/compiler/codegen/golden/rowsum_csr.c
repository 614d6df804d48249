
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

#if defined(__AVX512F__) && defined(__AVX512VL__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
extern int omp_get_thread_num(void);
#else
static inline int omp_get_thread_num(void) { return 0; }
#endif
/* out[i0] = sum_{i1} T0[i0,i1] | order i0,i1 | dense-acc */
int32_t ls_kernel(void **p, int64_t *d) {
  int64_t n0_0 = d[0];
  const int32_t *restrict p0_1 = (const int32_t *)p[0];
  const int32_t *restrict c0_1 = (const int32_t *)p[1];
  const double *restrict v0 = (const double *)p[2];
  int64_t N0 = d[1];
  int64_t N1 = d[2];
  const int split0 = (int)d[7];
  const int vec1 = (int)d[8];
  {
    #if defined(__AVX512F__) && defined(__AVX512VL__)
    d[9] = 1;
    #else
    d[9] = 0;
    #endif
  }
  const int st0_1 = (int64_t)((int64_t)p0_1[(1) * n0_0]) * (int64_t)(sizeof(c0_1[0]) + sizeof(v0[0])) >= d[10];
  double *restrict o = (double *)p[3];
  int64_t os0 = d[3];
  {
    if (st0_1) {
      if (vec1) {
        const int64_t ls_nt = (d[4] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])))) >= (double)d[5]) ? d[4] : 1;
        d[6] = ls_nt;
        const int64_t ls_chunk = (ls_nt > 1 ? (((N0) / (64 * (int64_t)ls_nt)) > 16 ? ((N0) / (64 * (int64_t)ls_nt)) : 16) : ((N0) > 0 ? (N0) : 1));
        const int64_t ls_nch = ((N0) + ls_chunk - 1) / ls_chunk;
        int64_t ls_next[8 * ls_nt];  /* a run's next chunk, a cache line each */
        for (int64_t ls_w = 0; ls_w < ls_nt; ls_w++) {
          ls_next[8 * ls_w] = ls_w * ls_nch / ls_nt;
        }
        #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
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
              const int64_t ls_r1 = ls_r0 + ls_chunk < (N0) ? ls_r0 + ls_chunk : (N0);
              {
                for (int64_t x0 = ls_r0; x0 < ls_r1; x0++) {
                  int64_t q0_0 = (0) * n0_0 + x0;
                  double acc = 0.0;
                  int64_t cnt = 0;
                  {
                    int64_t b0_1 = (int64_t)p0_1[q0_0];
                    int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                    {
                      #if defined(__AVX512F__) && defined(__AVX512VL__)
                      if (1) {
                        __m512d vacc = _mm512_setzero_pd();
                        int64_t vj0_1 = b0_1;
                        {
                          const __mmask8 m = z0_1 - vj0_1 >= 8 ? (__mmask8)~0u : (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                          __builtin_prefetch((const void *)((uintptr_t)(v0 + vj0_1) + 4096), 0, 0);
                          __builtin_prefetch((const void *)((uintptr_t)(c0_1 + vj0_1) + 4096), 0, 0);
                          __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                          vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                        }
                        vj0_1 += 8;
                        if (vj0_1 < z0_1) {
                          if (vj0_1 + 32 <= z0_1) {
                            __m512d vacc1 = _mm512_setzero_pd();
                            __m512d vacc2 = _mm512_setzero_pd();
                            __m512d vacc3 = _mm512_setzero_pd();
                            for (; vj0_1 + 32 <= z0_1; vj0_1 += 32) {
                              {
                                __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 0)) + 4096), 0, 0);
                                __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 0)) + 4096), 0, 0);
                                __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 0)));
                                vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + (vj0_1 + 0)));
                              }
                              {
                                __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 8)) + 4096), 0, 0);
                                __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 8)) + 4096), 0, 0);
                                __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 8)));
                                vacc1 = _mm512_add_pd(vacc1, _mm512_loadu_pd(v0 + (vj0_1 + 8)));
                              }
                              {
                                __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 16)) + 4096), 0, 0);
                                __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 16)) + 4096), 0, 0);
                                __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 16)));
                                vacc2 = _mm512_add_pd(vacc2, _mm512_loadu_pd(v0 + (vj0_1 + 16)));
                              }
                              {
                                __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 24)) + 4096), 0, 0);
                                __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 24)) + 4096), 0, 0);
                                __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 24)));
                                vacc3 = _mm512_add_pd(vacc3, _mm512_loadu_pd(v0 + (vj0_1 + 24)));
                              }
                            }
                            vacc = _mm512_add_pd(vacc, vacc1);
                            vacc = _mm512_add_pd(vacc, vacc2);
                            vacc = _mm512_add_pd(vacc, vacc3);
                          }
                          for (; vj0_1 + 8 <= z0_1; vj0_1 += 8) {
                            __builtin_prefetch((const void *)((uintptr_t)(v0 + vj0_1) + 4096), 0, 0);
                            __builtin_prefetch((const void *)((uintptr_t)(c0_1 + vj0_1) + 4096), 0, 0);
                            __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + vj0_1));
                            vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + vj0_1));
                          }
                          if (vj0_1 < z0_1) {
                            const __mmask8 m = (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                            __builtin_prefetch((const void *)((uintptr_t)(v0 + vj0_1) + 4096), 0, 0);
                            __builtin_prefetch((const void *)((uintptr_t)(c0_1 + vj0_1) + 4096), 0, 0);
                            __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                            vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                          }
                        }
                        acc += _mm512_reduce_add_pd(vacc);
                        cnt += z0_1 - b0_1;
                      } else
                      #endif
                      {
                        if (0) {
                          double acc_1 = 0.0;
                          double acc_2 = 0.0;
                          double acc_3 = 0.0;
                          int64_t j0_1 = b0_1;
                          __builtin_prefetch((const void *)((uintptr_t)(v0 + b0_1) + 4096), 0, 0);
                          __builtin_prefetch((const void *)((uintptr_t)(c0_1 + b0_1) + 4096), 0, 0);
                          while (j0_1 + 3 < z0_1) {
                            __builtin_prefetch((const void *)((uintptr_t)(v0 + j0_1) + 4096), 0, 0);
                            __builtin_prefetch((const void *)((uintptr_t)(c0_1 + j0_1) + 4096), 0, 0);
                            {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              acc += v0[j0_1];
                              cnt++;
                            }
                            {
                              int64_t x1_1 = (int64_t)c0_1[(j0_1 + 1)];
                              acc_1 += v0[(j0_1 + 1)];
                              cnt++;
                            }
                            {
                              int64_t x1_2 = (int64_t)c0_1[(j0_1 + 2)];
                              acc_2 += v0[(j0_1 + 2)];
                              cnt++;
                            }
                            {
                              int64_t x1_3 = (int64_t)c0_1[(j0_1 + 3)];
                              acc_3 += v0[(j0_1 + 3)];
                              cnt++;
                            }
                            j0_1 += 4;
                          }
                          while (j0_1 < z0_1) {
                            {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              acc += v0[j0_1];
                              cnt++;
                            }
                            j0_1 += 1;
                          }
                          acc += acc_1 + acc_2 + acc_3;
                        } else {
                          for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                            int64_t x1 = (int64_t)c0_1[j0_1];
                            acc += v0[j0_1];
                            cnt++;
                          }
                        }
                      }
                    }
                  }
                  o[(x0)] = acc;
                }
              }
            }
          }
        }
      } else {
        if (split0) {
          const int64_t ls_nt = (d[4] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])))) >= (double)d[5]) ? d[4] : 1;
          d[6] = ls_nt;
          const int64_t ls_chunk = (ls_nt > 1 ? (((N0) / (64 * (int64_t)ls_nt)) > 16 ? ((N0) / (64 * (int64_t)ls_nt)) : 16) : ((N0) > 0 ? (N0) : 1));
          const int64_t ls_nch = ((N0) + ls_chunk - 1) / ls_chunk;
          int64_t ls_next[8 * ls_nt];  /* a run's next chunk, a cache line each */
          for (int64_t ls_w = 0; ls_w < ls_nt; ls_w++) {
            ls_next[8 * ls_w] = ls_w * ls_nch / ls_nt;
          }
          #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
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
                const int64_t ls_r1 = ls_r0 + ls_chunk < (N0) ? ls_r0 + ls_chunk : (N0);
                {
                  for (int64_t x0 = ls_r0; x0 < ls_r1; x0++) {
                    int64_t q0_0 = (0) * n0_0 + x0;
                    double acc = 0.0;
                    int64_t cnt = 0;
                    {
                      int64_t b0_1 = (int64_t)p0_1[q0_0];
                      int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                      {
                        #if defined(__AVX512F__) && defined(__AVX512VL__)
                        if (0) {
                          __m512d vacc = _mm512_setzero_pd();
                          int64_t vj0_1 = b0_1;
                          {
                            const __mmask8 m = z0_1 - vj0_1 >= 8 ? (__mmask8)~0u : (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                            __builtin_prefetch((const void *)((uintptr_t)(v0 + vj0_1) + 4096), 0, 0);
                            __builtin_prefetch((const void *)((uintptr_t)(c0_1 + vj0_1) + 4096), 0, 0);
                            __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                            vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                          }
                          vj0_1 += 8;
                          if (vj0_1 < z0_1) {
                            if (vj0_1 + 32 <= z0_1) {
                              __m512d vacc1 = _mm512_setzero_pd();
                              __m512d vacc2 = _mm512_setzero_pd();
                              __m512d vacc3 = _mm512_setzero_pd();
                              for (; vj0_1 + 32 <= z0_1; vj0_1 += 32) {
                                {
                                  __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 0)) + 4096), 0, 0);
                                  __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 0)) + 4096), 0, 0);
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 0)));
                                  vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + (vj0_1 + 0)));
                                }
                                {
                                  __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 8)) + 4096), 0, 0);
                                  __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 8)) + 4096), 0, 0);
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 8)));
                                  vacc1 = _mm512_add_pd(vacc1, _mm512_loadu_pd(v0 + (vj0_1 + 8)));
                                }
                                {
                                  __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 16)) + 4096), 0, 0);
                                  __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 16)) + 4096), 0, 0);
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 16)));
                                  vacc2 = _mm512_add_pd(vacc2, _mm512_loadu_pd(v0 + (vj0_1 + 16)));
                                }
                                {
                                  __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 24)) + 4096), 0, 0);
                                  __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 24)) + 4096), 0, 0);
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 24)));
                                  vacc3 = _mm512_add_pd(vacc3, _mm512_loadu_pd(v0 + (vj0_1 + 24)));
                                }
                              }
                              vacc = _mm512_add_pd(vacc, vacc1);
                              vacc = _mm512_add_pd(vacc, vacc2);
                              vacc = _mm512_add_pd(vacc, vacc3);
                            }
                            for (; vj0_1 + 8 <= z0_1; vj0_1 += 8) {
                              __builtin_prefetch((const void *)((uintptr_t)(v0 + vj0_1) + 4096), 0, 0);
                              __builtin_prefetch((const void *)((uintptr_t)(c0_1 + vj0_1) + 4096), 0, 0);
                              __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + vj0_1));
                              vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + vj0_1));
                            }
                            if (vj0_1 < z0_1) {
                              const __mmask8 m = (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                              __builtin_prefetch((const void *)((uintptr_t)(v0 + vj0_1) + 4096), 0, 0);
                              __builtin_prefetch((const void *)((uintptr_t)(c0_1 + vj0_1) + 4096), 0, 0);
                              __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                              vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                            }
                          }
                          acc += _mm512_reduce_add_pd(vacc);
                          cnt += z0_1 - b0_1;
                        } else
                        #endif
                        {
                          if (1) {
                            double acc_1 = 0.0;
                            double acc_2 = 0.0;
                            double acc_3 = 0.0;
                            int64_t j0_1 = b0_1;
                            __builtin_prefetch((const void *)((uintptr_t)(v0 + b0_1) + 4096), 0, 0);
                            __builtin_prefetch((const void *)((uintptr_t)(c0_1 + b0_1) + 4096), 0, 0);
                            while (j0_1 + 3 < z0_1) {
                              __builtin_prefetch((const void *)((uintptr_t)(v0 + j0_1) + 4096), 0, 0);
                              __builtin_prefetch((const void *)((uintptr_t)(c0_1 + j0_1) + 4096), 0, 0);
                              {
                                int64_t x1 = (int64_t)c0_1[j0_1];
                                acc += v0[j0_1];
                                cnt++;
                              }
                              {
                                int64_t x1_1 = (int64_t)c0_1[(j0_1 + 1)];
                                acc_1 += v0[(j0_1 + 1)];
                                cnt++;
                              }
                              {
                                int64_t x1_2 = (int64_t)c0_1[(j0_1 + 2)];
                                acc_2 += v0[(j0_1 + 2)];
                                cnt++;
                              }
                              {
                                int64_t x1_3 = (int64_t)c0_1[(j0_1 + 3)];
                                acc_3 += v0[(j0_1 + 3)];
                                cnt++;
                              }
                              j0_1 += 4;
                            }
                            while (j0_1 < z0_1) {
                              {
                                int64_t x1 = (int64_t)c0_1[j0_1];
                                acc += v0[j0_1];
                                cnt++;
                              }
                              j0_1 += 1;
                            }
                            acc += acc_1 + acc_2 + acc_3;
                          } else {
                            for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              acc += v0[j0_1];
                              cnt++;
                            }
                          }
                        }
                      }
                    }
                    o[(x0)] = acc;
                  }
                }
              }
            }
          }
        } else {
          const int64_t ls_nt = (d[4] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])))) >= (double)d[5]) ? d[4] : 1;
          d[6] = ls_nt;
          const int64_t ls_chunk = (ls_nt > 1 ? (((N0) / (64 * (int64_t)ls_nt)) > 16 ? ((N0) / (64 * (int64_t)ls_nt)) : 16) : ((N0) > 0 ? (N0) : 1));
          const int64_t ls_nch = ((N0) + ls_chunk - 1) / ls_chunk;
          int64_t ls_next[8 * ls_nt];  /* a run's next chunk, a cache line each */
          for (int64_t ls_w = 0; ls_w < ls_nt; ls_w++) {
            ls_next[8 * ls_w] = ls_w * ls_nch / ls_nt;
          }
          #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
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
                const int64_t ls_r1 = ls_r0 + ls_chunk < (N0) ? ls_r0 + ls_chunk : (N0);
                {
                  for (int64_t x0 = ls_r0; x0 < ls_r1; x0++) {
                    int64_t q0_0 = (0) * n0_0 + x0;
                    double acc = 0.0;
                    int64_t cnt = 0;
                    {
                      int64_t b0_1 = (int64_t)p0_1[q0_0];
                      int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                      {
                        #if defined(__AVX512F__) && defined(__AVX512VL__)
                        if (0) {
                          __m512d vacc = _mm512_setzero_pd();
                          int64_t vj0_1 = b0_1;
                          {
                            const __mmask8 m = z0_1 - vj0_1 >= 8 ? (__mmask8)~0u : (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                            __builtin_prefetch((const void *)((uintptr_t)(v0 + vj0_1) + 4096), 0, 0);
                            __builtin_prefetch((const void *)((uintptr_t)(c0_1 + vj0_1) + 4096), 0, 0);
                            __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                            vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                          }
                          vj0_1 += 8;
                          if (vj0_1 < z0_1) {
                            if (vj0_1 + 32 <= z0_1) {
                              __m512d vacc1 = _mm512_setzero_pd();
                              __m512d vacc2 = _mm512_setzero_pd();
                              __m512d vacc3 = _mm512_setzero_pd();
                              for (; vj0_1 + 32 <= z0_1; vj0_1 += 32) {
                                {
                                  __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 0)) + 4096), 0, 0);
                                  __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 0)) + 4096), 0, 0);
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 0)));
                                  vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + (vj0_1 + 0)));
                                }
                                {
                                  __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 8)) + 4096), 0, 0);
                                  __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 8)) + 4096), 0, 0);
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 8)));
                                  vacc1 = _mm512_add_pd(vacc1, _mm512_loadu_pd(v0 + (vj0_1 + 8)));
                                }
                                {
                                  __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 16)) + 4096), 0, 0);
                                  __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 16)) + 4096), 0, 0);
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 16)));
                                  vacc2 = _mm512_add_pd(vacc2, _mm512_loadu_pd(v0 + (vj0_1 + 16)));
                                }
                                {
                                  __builtin_prefetch((const void *)((uintptr_t)(v0 + (vj0_1 + 24)) + 4096), 0, 0);
                                  __builtin_prefetch((const void *)((uintptr_t)(c0_1 + (vj0_1 + 24)) + 4096), 0, 0);
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 24)));
                                  vacc3 = _mm512_add_pd(vacc3, _mm512_loadu_pd(v0 + (vj0_1 + 24)));
                                }
                              }
                              vacc = _mm512_add_pd(vacc, vacc1);
                              vacc = _mm512_add_pd(vacc, vacc2);
                              vacc = _mm512_add_pd(vacc, vacc3);
                            }
                            for (; vj0_1 + 8 <= z0_1; vj0_1 += 8) {
                              __builtin_prefetch((const void *)((uintptr_t)(v0 + vj0_1) + 4096), 0, 0);
                              __builtin_prefetch((const void *)((uintptr_t)(c0_1 + vj0_1) + 4096), 0, 0);
                              __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + vj0_1));
                              vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + vj0_1));
                            }
                            if (vj0_1 < z0_1) {
                              const __mmask8 m = (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                              __builtin_prefetch((const void *)((uintptr_t)(v0 + vj0_1) + 4096), 0, 0);
                              __builtin_prefetch((const void *)((uintptr_t)(c0_1 + vj0_1) + 4096), 0, 0);
                              __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                              vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                            }
                          }
                          acc += _mm512_reduce_add_pd(vacc);
                          cnt += z0_1 - b0_1;
                        } else
                        #endif
                        {
                          if (0) {
                            double acc_1 = 0.0;
                            double acc_2 = 0.0;
                            double acc_3 = 0.0;
                            int64_t j0_1 = b0_1;
                            __builtin_prefetch((const void *)((uintptr_t)(v0 + b0_1) + 4096), 0, 0);
                            __builtin_prefetch((const void *)((uintptr_t)(c0_1 + b0_1) + 4096), 0, 0);
                            while (j0_1 + 3 < z0_1) {
                              __builtin_prefetch((const void *)((uintptr_t)(v0 + j0_1) + 4096), 0, 0);
                              __builtin_prefetch((const void *)((uintptr_t)(c0_1 + j0_1) + 4096), 0, 0);
                              {
                                int64_t x1 = (int64_t)c0_1[j0_1];
                                acc += v0[j0_1];
                                cnt++;
                              }
                              {
                                int64_t x1_1 = (int64_t)c0_1[(j0_1 + 1)];
                                acc_1 += v0[(j0_1 + 1)];
                                cnt++;
                              }
                              {
                                int64_t x1_2 = (int64_t)c0_1[(j0_1 + 2)];
                                acc_2 += v0[(j0_1 + 2)];
                                cnt++;
                              }
                              {
                                int64_t x1_3 = (int64_t)c0_1[(j0_1 + 3)];
                                acc_3 += v0[(j0_1 + 3)];
                                cnt++;
                              }
                              j0_1 += 4;
                            }
                            while (j0_1 < z0_1) {
                              {
                                int64_t x1 = (int64_t)c0_1[j0_1];
                                acc += v0[j0_1];
                                cnt++;
                              }
                              j0_1 += 1;
                            }
                            acc += acc_1 + acc_2 + acc_3;
                          } else {
                            for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              acc += v0[j0_1];
                              cnt++;
                            }
                          }
                        }
                      }
                    }
                    o[(x0)] = acc;
                  }
                }
              }
            }
          }
        }
      }
    } else {
      if (vec1) {
        const int64_t ls_nt = (d[4] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])))) >= (double)d[5]) ? d[4] : 1;
        d[6] = ls_nt;
        const int64_t ls_chunk = (ls_nt > 1 ? (((N0) / (64 * (int64_t)ls_nt)) > 16 ? ((N0) / (64 * (int64_t)ls_nt)) : 16) : ((N0) > 0 ? (N0) : 1));
        const int64_t ls_nch = ((N0) + ls_chunk - 1) / ls_chunk;
        int64_t ls_next[8 * ls_nt];  /* a run's next chunk, a cache line each */
        for (int64_t ls_w = 0; ls_w < ls_nt; ls_w++) {
          ls_next[8 * ls_w] = ls_w * ls_nch / ls_nt;
        }
        #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
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
              const int64_t ls_r1 = ls_r0 + ls_chunk < (N0) ? ls_r0 + ls_chunk : (N0);
              {
                for (int64_t x0 = ls_r0; x0 < ls_r1; x0++) {
                  int64_t q0_0 = (0) * n0_0 + x0;
                  double acc = 0.0;
                  int64_t cnt = 0;
                  {
                    int64_t b0_1 = (int64_t)p0_1[q0_0];
                    int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                    {
                      #if defined(__AVX512F__) && defined(__AVX512VL__)
                      if (1) {
                        __m512d vacc = _mm512_setzero_pd();
                        int64_t vj0_1 = b0_1;
                        {
                          const __mmask8 m = z0_1 - vj0_1 >= 8 ? (__mmask8)~0u : (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                          __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                          vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                        }
                        vj0_1 += 8;
                        if (vj0_1 < z0_1) {
                          if (vj0_1 + 32 <= z0_1) {
                            __m512d vacc1 = _mm512_setzero_pd();
                            __m512d vacc2 = _mm512_setzero_pd();
                            __m512d vacc3 = _mm512_setzero_pd();
                            for (; vj0_1 + 32 <= z0_1; vj0_1 += 32) {
                              {
                                __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 0)));
                                vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + (vj0_1 + 0)));
                              }
                              {
                                __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 8)));
                                vacc1 = _mm512_add_pd(vacc1, _mm512_loadu_pd(v0 + (vj0_1 + 8)));
                              }
                              {
                                __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 16)));
                                vacc2 = _mm512_add_pd(vacc2, _mm512_loadu_pd(v0 + (vj0_1 + 16)));
                              }
                              {
                                __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 24)));
                                vacc3 = _mm512_add_pd(vacc3, _mm512_loadu_pd(v0 + (vj0_1 + 24)));
                              }
                            }
                            vacc = _mm512_add_pd(vacc, vacc1);
                            vacc = _mm512_add_pd(vacc, vacc2);
                            vacc = _mm512_add_pd(vacc, vacc3);
                          }
                          for (; vj0_1 + 8 <= z0_1; vj0_1 += 8) {
                            __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + vj0_1));
                            vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + vj0_1));
                          }
                          if (vj0_1 < z0_1) {
                            const __mmask8 m = (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                            __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                            vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                          }
                        }
                        acc += _mm512_reduce_add_pd(vacc);
                        cnt += z0_1 - b0_1;
                      } else
                      #endif
                      {
                        if (0) {
                          double acc_1 = 0.0;
                          double acc_2 = 0.0;
                          double acc_3 = 0.0;
                          int64_t j0_1 = b0_1;
                          while (j0_1 + 3 < z0_1) {
                            {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              acc += v0[j0_1];
                              cnt++;
                            }
                            {
                              int64_t x1_1 = (int64_t)c0_1[(j0_1 + 1)];
                              acc_1 += v0[(j0_1 + 1)];
                              cnt++;
                            }
                            {
                              int64_t x1_2 = (int64_t)c0_1[(j0_1 + 2)];
                              acc_2 += v0[(j0_1 + 2)];
                              cnt++;
                            }
                            {
                              int64_t x1_3 = (int64_t)c0_1[(j0_1 + 3)];
                              acc_3 += v0[(j0_1 + 3)];
                              cnt++;
                            }
                            j0_1 += 4;
                          }
                          while (j0_1 < z0_1) {
                            {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              acc += v0[j0_1];
                              cnt++;
                            }
                            j0_1 += 1;
                          }
                          acc += acc_1 + acc_2 + acc_3;
                        } else {
                          for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                            int64_t x1 = (int64_t)c0_1[j0_1];
                            acc += v0[j0_1];
                            cnt++;
                          }
                        }
                      }
                    }
                  }
                  o[(x0)] = acc;
                }
              }
            }
          }
        }
      } else {
        if (split0) {
          const int64_t ls_nt = (d[4] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])))) >= (double)d[5]) ? d[4] : 1;
          d[6] = ls_nt;
          const int64_t ls_chunk = (ls_nt > 1 ? (((N0) / (64 * (int64_t)ls_nt)) > 16 ? ((N0) / (64 * (int64_t)ls_nt)) : 16) : ((N0) > 0 ? (N0) : 1));
          const int64_t ls_nch = ((N0) + ls_chunk - 1) / ls_chunk;
          int64_t ls_next[8 * ls_nt];  /* a run's next chunk, a cache line each */
          for (int64_t ls_w = 0; ls_w < ls_nt; ls_w++) {
            ls_next[8 * ls_w] = ls_w * ls_nch / ls_nt;
          }
          #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
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
                const int64_t ls_r1 = ls_r0 + ls_chunk < (N0) ? ls_r0 + ls_chunk : (N0);
                {
                  for (int64_t x0 = ls_r0; x0 < ls_r1; x0++) {
                    int64_t q0_0 = (0) * n0_0 + x0;
                    double acc = 0.0;
                    int64_t cnt = 0;
                    {
                      int64_t b0_1 = (int64_t)p0_1[q0_0];
                      int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                      {
                        #if defined(__AVX512F__) && defined(__AVX512VL__)
                        if (0) {
                          __m512d vacc = _mm512_setzero_pd();
                          int64_t vj0_1 = b0_1;
                          {
                            const __mmask8 m = z0_1 - vj0_1 >= 8 ? (__mmask8)~0u : (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                            __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                            vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                          }
                          vj0_1 += 8;
                          if (vj0_1 < z0_1) {
                            if (vj0_1 + 32 <= z0_1) {
                              __m512d vacc1 = _mm512_setzero_pd();
                              __m512d vacc2 = _mm512_setzero_pd();
                              __m512d vacc3 = _mm512_setzero_pd();
                              for (; vj0_1 + 32 <= z0_1; vj0_1 += 32) {
                                {
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 0)));
                                  vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + (vj0_1 + 0)));
                                }
                                {
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 8)));
                                  vacc1 = _mm512_add_pd(vacc1, _mm512_loadu_pd(v0 + (vj0_1 + 8)));
                                }
                                {
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 16)));
                                  vacc2 = _mm512_add_pd(vacc2, _mm512_loadu_pd(v0 + (vj0_1 + 16)));
                                }
                                {
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 24)));
                                  vacc3 = _mm512_add_pd(vacc3, _mm512_loadu_pd(v0 + (vj0_1 + 24)));
                                }
                              }
                              vacc = _mm512_add_pd(vacc, vacc1);
                              vacc = _mm512_add_pd(vacc, vacc2);
                              vacc = _mm512_add_pd(vacc, vacc3);
                            }
                            for (; vj0_1 + 8 <= z0_1; vj0_1 += 8) {
                              __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + vj0_1));
                              vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + vj0_1));
                            }
                            if (vj0_1 < z0_1) {
                              const __mmask8 m = (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                              __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                              vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                            }
                          }
                          acc += _mm512_reduce_add_pd(vacc);
                          cnt += z0_1 - b0_1;
                        } else
                        #endif
                        {
                          if (1) {
                            double acc_1 = 0.0;
                            double acc_2 = 0.0;
                            double acc_3 = 0.0;
                            int64_t j0_1 = b0_1;
                            while (j0_1 + 3 < z0_1) {
                              {
                                int64_t x1 = (int64_t)c0_1[j0_1];
                                acc += v0[j0_1];
                                cnt++;
                              }
                              {
                                int64_t x1_1 = (int64_t)c0_1[(j0_1 + 1)];
                                acc_1 += v0[(j0_1 + 1)];
                                cnt++;
                              }
                              {
                                int64_t x1_2 = (int64_t)c0_1[(j0_1 + 2)];
                                acc_2 += v0[(j0_1 + 2)];
                                cnt++;
                              }
                              {
                                int64_t x1_3 = (int64_t)c0_1[(j0_1 + 3)];
                                acc_3 += v0[(j0_1 + 3)];
                                cnt++;
                              }
                              j0_1 += 4;
                            }
                            while (j0_1 < z0_1) {
                              {
                                int64_t x1 = (int64_t)c0_1[j0_1];
                                acc += v0[j0_1];
                                cnt++;
                              }
                              j0_1 += 1;
                            }
                            acc += acc_1 + acc_2 + acc_3;
                          } else {
                            for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              acc += v0[j0_1];
                              cnt++;
                            }
                          }
                        }
                      }
                    }
                    o[(x0)] = acc;
                  }
                }
              }
            }
          }
        } else {
          const int64_t ls_nt = (d[4] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])))) >= (double)d[5]) ? d[4] : 1;
          d[6] = ls_nt;
          const int64_t ls_chunk = (ls_nt > 1 ? (((N0) / (64 * (int64_t)ls_nt)) > 16 ? ((N0) / (64 * (int64_t)ls_nt)) : 16) : ((N0) > 0 ? (N0) : 1));
          const int64_t ls_nch = ((N0) + ls_chunk - 1) / ls_chunk;
          int64_t ls_next[8 * ls_nt];  /* a run's next chunk, a cache line each */
          for (int64_t ls_w = 0; ls_w < ls_nt; ls_w++) {
            ls_next[8 * ls_w] = ls_w * ls_nch / ls_nt;
          }
          #pragma omp parallel num_threads((int)ls_nt) if(ls_nt > 1)
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
                const int64_t ls_r1 = ls_r0 + ls_chunk < (N0) ? ls_r0 + ls_chunk : (N0);
                {
                  for (int64_t x0 = ls_r0; x0 < ls_r1; x0++) {
                    int64_t q0_0 = (0) * n0_0 + x0;
                    double acc = 0.0;
                    int64_t cnt = 0;
                    {
                      int64_t b0_1 = (int64_t)p0_1[q0_0];
                      int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                      {
                        #if defined(__AVX512F__) && defined(__AVX512VL__)
                        if (0) {
                          __m512d vacc = _mm512_setzero_pd();
                          int64_t vj0_1 = b0_1;
                          {
                            const __mmask8 m = z0_1 - vj0_1 >= 8 ? (__mmask8)~0u : (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                            __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                            vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                          }
                          vj0_1 += 8;
                          if (vj0_1 < z0_1) {
                            if (vj0_1 + 32 <= z0_1) {
                              __m512d vacc1 = _mm512_setzero_pd();
                              __m512d vacc2 = _mm512_setzero_pd();
                              __m512d vacc3 = _mm512_setzero_pd();
                              for (; vj0_1 + 32 <= z0_1; vj0_1 += 32) {
                                {
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 0)));
                                  vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + (vj0_1 + 0)));
                                }
                                {
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 8)));
                                  vacc1 = _mm512_add_pd(vacc1, _mm512_loadu_pd(v0 + (vj0_1 + 8)));
                                }
                                {
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 16)));
                                  vacc2 = _mm512_add_pd(vacc2, _mm512_loadu_pd(v0 + (vj0_1 + 16)));
                                }
                                {
                                  __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + (vj0_1 + 24)));
                                  vacc3 = _mm512_add_pd(vacc3, _mm512_loadu_pd(v0 + (vj0_1 + 24)));
                                }
                              }
                              vacc = _mm512_add_pd(vacc, vacc1);
                              vacc = _mm512_add_pd(vacc, vacc2);
                              vacc = _mm512_add_pd(vacc, vacc3);
                            }
                            for (; vj0_1 + 8 <= z0_1; vj0_1 += 8) {
                              __m256i vi = _mm256_loadu_si256((const void *)(c0_1 + vj0_1));
                              vacc = _mm512_add_pd(vacc, _mm512_loadu_pd(v0 + vj0_1));
                            }
                            if (vj0_1 < z0_1) {
                              const __mmask8 m = (__mmask8)((1u << (z0_1 - vj0_1)) - 1);
                              __m256i vi = _mm256_maskz_loadu_epi32(m, c0_1 + vj0_1);
                              vacc = _mm512_mask_add_pd(vacc, m, vacc, _mm512_maskz_loadu_pd(m, v0 + vj0_1));
                            }
                          }
                          acc += _mm512_reduce_add_pd(vacc);
                          cnt += z0_1 - b0_1;
                        } else
                        #endif
                        {
                          if (0) {
                            double acc_1 = 0.0;
                            double acc_2 = 0.0;
                            double acc_3 = 0.0;
                            int64_t j0_1 = b0_1;
                            while (j0_1 + 3 < z0_1) {
                              {
                                int64_t x1 = (int64_t)c0_1[j0_1];
                                acc += v0[j0_1];
                                cnt++;
                              }
                              {
                                int64_t x1_1 = (int64_t)c0_1[(j0_1 + 1)];
                                acc_1 += v0[(j0_1 + 1)];
                                cnt++;
                              }
                              {
                                int64_t x1_2 = (int64_t)c0_1[(j0_1 + 2)];
                                acc_2 += v0[(j0_1 + 2)];
                                cnt++;
                              }
                              {
                                int64_t x1_3 = (int64_t)c0_1[(j0_1 + 3)];
                                acc_3 += v0[(j0_1 + 3)];
                                cnt++;
                              }
                              j0_1 += 4;
                            }
                            while (j0_1 < z0_1) {
                              {
                                int64_t x1 = (int64_t)c0_1[j0_1];
                                acc += v0[j0_1];
                                cnt++;
                              }
                              j0_1 += 1;
                            }
                            acc += acc_1 + acc_2 + acc_3;
                          } else {
                            for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              acc += v0[j0_1];
                              cnt++;
                            }
                          }
                        }
                      }
                    }
                    o[(x0)] = acc;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return 0;
}
