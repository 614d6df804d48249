
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

/* fused: j{S0}; i{S1; S2} */
int32_t ls_kernel(void **p, int64_t *d) {
  /* v4[j] = add(T0[j], multiply(T1[], T2[j]))  <- T0=v3, T1=v0, T2=v1 ; v8[i] = subtract(T0[i], multiply(T1[], T2[i]))  <- T0=v7, T1=v0, T2=v5 ; v10[] = sum_{i} multiply(T0[i], T0[i])  <- T0=v8 */
  const double v0s = *(const double *)p[0];
  const double *restrict v1 = (const double *)p[1];
  int64_t s1_0 = d[0];
  const double *restrict v3 = (const double *)p[2];
  int64_t s3_0 = d[1];
  const double *restrict v5 = (const double *)p[3];
  int64_t s5_0 = d[2];
  const double *restrict v7 = (const double *)p[4];
  int64_t s7_0 = d[3];
  int64_t N_j = d[4];
  int64_t N_i = d[5];
  double *restrict o = (double *)p[5];
  double *restrict ox8 = (double *)p[6];
  double *restrict ox10 = (double *)p[7];
  {
    int64_t ls_nb = 0;
    if ((d[6] + 65535) / 65536 > ls_nb) ls_nb = (d[6] + 65535) / 65536;
    for (int64_t ls_b = 0; ls_b < ls_nb; ls_b++) {
      const int64_t ls_lo = ls_b * 65536;
      if (ls_lo < d[6]) memset(ox10 + ls_lo, 0, (size_t)(d[6] - ls_lo < 65536 ? d[6] - ls_lo : 65536) * sizeof(double));
    }
    {
      if (N_j == 16) {
        {
          if (N_i == 16) {
            for (int64_t j = 0; j < 16; j += (LS_VB / 8))
            {
              *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
            }
            double acc25 = 0;
            #pragma omp simd reduction(+:acc25)
            for (int64_t i = 0; i < 16; i++) {
              ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
              acc25 += ((ox8[i]) * (ox8[i]));
            }
            ox10[0] += acc25;
          } else {
            if (N_i == 32) {
              for (int64_t j = 0; j < 16; j += (LS_VB / 8))
              {
                *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
              }
              double acc24 = 0;
              #pragma omp simd reduction(+:acc24)
              for (int64_t i = 0; i < 32; i++) {
                ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                acc24 += ((ox8[i]) * (ox8[i]));
              }
              ox10[0] += acc24;
            } else {
              if (N_i == 64) {
                for (int64_t j = 0; j < 16; j += (LS_VB / 8))
                {
                  *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                }
                double acc23 = 0;
                #pragma omp simd reduction(+:acc23)
                for (int64_t i = 0; i < 64; i++) {
                  ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                  acc23 += ((ox8[i]) * (ox8[i]));
                }
                ox10[0] += acc23;
              } else {
                if (N_i == 128) {
                  for (int64_t j = 0; j < 16; j += (LS_VB / 8))
                  {
                    *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                  }
                  double acc22 = 0;
                  #pragma omp simd reduction(+:acc22)
                  for (int64_t i = 0; i < 128; i++) {
                    ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                    acc22 += ((ox8[i]) * (ox8[i]));
                  }
                  ox10[0] += acc22;
                } else {
                  for (int64_t j = 0; j < 16; j += (LS_VB / 8))
                  {
                    *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                  }
                  double acc21 = 0;
                  #pragma omp simd reduction(+:acc21)
                  for (int64_t i = 0; i < N_i; i++) {
                    ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                    acc21 += ((ox8[i]) * (ox8[i]));
                  }
                  ox10[0] += acc21;
                }
              }
            }
          }
        }
      } else {
        if (N_j == 32) {
          {
            if (N_i == 16) {
              for (int64_t j = 0; j < 32; j += (LS_VB / 8))
              {
                *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
              }
              double acc20 = 0;
              #pragma omp simd reduction(+:acc20)
              for (int64_t i = 0; i < 16; i++) {
                ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                acc20 += ((ox8[i]) * (ox8[i]));
              }
              ox10[0] += acc20;
            } else {
              if (N_i == 32) {
                for (int64_t j = 0; j < 32; j += (LS_VB / 8))
                {
                  *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                }
                double acc19 = 0;
                #pragma omp simd reduction(+:acc19)
                for (int64_t i = 0; i < 32; i++) {
                  ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                  acc19 += ((ox8[i]) * (ox8[i]));
                }
                ox10[0] += acc19;
              } else {
                if (N_i == 64) {
                  for (int64_t j = 0; j < 32; j += (LS_VB / 8))
                  {
                    *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                  }
                  double acc18 = 0;
                  #pragma omp simd reduction(+:acc18)
                  for (int64_t i = 0; i < 64; i++) {
                    ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                    acc18 += ((ox8[i]) * (ox8[i]));
                  }
                  ox10[0] += acc18;
                } else {
                  if (N_i == 128) {
                    for (int64_t j = 0; j < 32; j += (LS_VB / 8))
                    {
                      *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                    }
                    double acc17 = 0;
                    #pragma omp simd reduction(+:acc17)
                    for (int64_t i = 0; i < 128; i++) {
                      ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                      acc17 += ((ox8[i]) * (ox8[i]));
                    }
                    ox10[0] += acc17;
                  } else {
                    for (int64_t j = 0; j < 32; j += (LS_VB / 8))
                    {
                      *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                    }
                    double acc16 = 0;
                    #pragma omp simd reduction(+:acc16)
                    for (int64_t i = 0; i < N_i; i++) {
                      ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                      acc16 += ((ox8[i]) * (ox8[i]));
                    }
                    ox10[0] += acc16;
                  }
                }
              }
            }
          }
        } else {
          if (N_j == 64) {
            {
              if (N_i == 16) {
                for (int64_t j = 0; j < 64; j += (LS_VB / 8))
                {
                  *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                }
                double acc15 = 0;
                #pragma omp simd reduction(+:acc15)
                for (int64_t i = 0; i < 16; i++) {
                  ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                  acc15 += ((ox8[i]) * (ox8[i]));
                }
                ox10[0] += acc15;
              } else {
                if (N_i == 32) {
                  for (int64_t j = 0; j < 64; j += (LS_VB / 8))
                  {
                    *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                  }
                  double acc14 = 0;
                  #pragma omp simd reduction(+:acc14)
                  for (int64_t i = 0; i < 32; i++) {
                    ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                    acc14 += ((ox8[i]) * (ox8[i]));
                  }
                  ox10[0] += acc14;
                } else {
                  if (N_i == 64) {
                    for (int64_t j = 0; j < 64; j += (LS_VB / 8))
                    {
                      *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                    }
                    double acc13 = 0;
                    #pragma omp simd reduction(+:acc13)
                    for (int64_t i = 0; i < 64; i++) {
                      ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                      acc13 += ((ox8[i]) * (ox8[i]));
                    }
                    ox10[0] += acc13;
                  } else {
                    if (N_i == 128) {
                      for (int64_t j = 0; j < 64; j += (LS_VB / 8))
                      {
                        *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                      }
                      double acc12 = 0;
                      #pragma omp simd reduction(+:acc12)
                      for (int64_t i = 0; i < 128; i++) {
                        ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                        acc12 += ((ox8[i]) * (ox8[i]));
                      }
                      ox10[0] += acc12;
                    } else {
                      for (int64_t j = 0; j < 64; j += (LS_VB / 8))
                      {
                        *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                      }
                      double acc11 = 0;
                      #pragma omp simd reduction(+:acc11)
                      for (int64_t i = 0; i < N_i; i++) {
                        ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                        acc11 += ((ox8[i]) * (ox8[i]));
                      }
                      ox10[0] += acc11;
                    }
                  }
                }
              }
            }
          } else {
            if (N_j == 128) {
              {
                if (N_i == 16) {
                  for (int64_t j = 0; j < 128; j += (LS_VB / 8))
                  {
                    *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                  }
                  double acc10 = 0;
                  #pragma omp simd reduction(+:acc10)
                  for (int64_t i = 0; i < 16; i++) {
                    ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                    acc10 += ((ox8[i]) * (ox8[i]));
                  }
                  ox10[0] += acc10;
                } else {
                  if (N_i == 32) {
                    for (int64_t j = 0; j < 128; j += (LS_VB / 8))
                    {
                      *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                    }
                    double acc9 = 0;
                    #pragma omp simd reduction(+:acc9)
                    for (int64_t i = 0; i < 32; i++) {
                      ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                      acc9 += ((ox8[i]) * (ox8[i]));
                    }
                    ox10[0] += acc9;
                  } else {
                    if (N_i == 64) {
                      for (int64_t j = 0; j < 128; j += (LS_VB / 8))
                      {
                        *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                      }
                      double acc8 = 0;
                      #pragma omp simd reduction(+:acc8)
                      for (int64_t i = 0; i < 64; i++) {
                        ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                        acc8 += ((ox8[i]) * (ox8[i]));
                      }
                      ox10[0] += acc8;
                    } else {
                      if (N_i == 128) {
                        for (int64_t j = 0; j < 128; j += (LS_VB / 8))
                        {
                          *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                        }
                        double acc7 = 0;
                        #pragma omp simd reduction(+:acc7)
                        for (int64_t i = 0; i < 128; i++) {
                          ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                          acc7 += ((ox8[i]) * (ox8[i]));
                        }
                        ox10[0] += acc7;
                      } else {
                        for (int64_t j = 0; j < 128; j += (LS_VB / 8))
                        {
                          *(ls_vd *)&o[j] = ((*(const ls_vd *)&v3[(j)]) + (v0s * (*(const ls_vd *)&v1[(j)])));
                        }
                        double acc6 = 0;
                        #pragma omp simd reduction(+:acc6)
                        for (int64_t i = 0; i < N_i; i++) {
                          ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                          acc6 += ((ox8[i]) * (ox8[i]));
                        }
                        ox10[0] += acc6;
                      }
                    }
                  }
                }
              }
            } else {
              {
                if (N_i == 16) {
                  for (int64_t j = 0; j < N_j; j++) {
                    o[j] = ((v3[(j)]) + (((v0s) * (v1[(j)]))));
                  }
                  double acc5 = 0;
                  #pragma omp simd reduction(+:acc5)
                  for (int64_t i = 0; i < 16; i++) {
                    ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                    acc5 += ((ox8[i]) * (ox8[i]));
                  }
                  ox10[0] += acc5;
                } else {
                  if (N_i == 32) {
                    for (int64_t j = 0; j < N_j; j++) {
                      o[j] = ((v3[(j)]) + (((v0s) * (v1[(j)]))));
                    }
                    double acc4 = 0;
                    #pragma omp simd reduction(+:acc4)
                    for (int64_t i = 0; i < 32; i++) {
                      ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                      acc4 += ((ox8[i]) * (ox8[i]));
                    }
                    ox10[0] += acc4;
                  } else {
                    if (N_i == 64) {
                      for (int64_t j = 0; j < N_j; j++) {
                        o[j] = ((v3[(j)]) + (((v0s) * (v1[(j)]))));
                      }
                      double acc3 = 0;
                      #pragma omp simd reduction(+:acc3)
                      for (int64_t i = 0; i < 64; i++) {
                        ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                        acc3 += ((ox8[i]) * (ox8[i]));
                      }
                      ox10[0] += acc3;
                    } else {
                      if (N_i == 128) {
                        for (int64_t j = 0; j < N_j; j++) {
                          o[j] = ((v3[(j)]) + (((v0s) * (v1[(j)]))));
                        }
                        double acc2 = 0;
                        #pragma omp simd reduction(+:acc2)
                        for (int64_t i = 0; i < 128; i++) {
                          ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                          acc2 += ((ox8[i]) * (ox8[i]));
                        }
                        ox10[0] += acc2;
                      } else {
                        for (int64_t j = 0; j < N_j; j++) {
                          o[j] = ((v3[(j)]) + (((v0s) * (v1[(j)]))));
                        }
                        double acc1 = 0;
                        #pragma omp simd reduction(+:acc1)
                        for (int64_t i = 0; i < N_i; i++) {
                          ox8[i] = ((v7[(i)]) - (((v0s) * (v5[(i)]))));
                          acc1 += ((ox8[i]) * (ox8[i]));
                        }
                        ox10[0] += acc1;
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
  return 0;
}
