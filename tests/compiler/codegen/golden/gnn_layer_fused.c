
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

/* out[i,j] = sum_{k,m1} multiply(T0[i,k], multiply(T1[k,m1], T2[m1,j])) | order i,k,m1,j | dense-inter */
int32_t ls_kernel(void **p, int64_t *d) {
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
  int64_t N0 = d[5];
  int64_t N1 = d[6];
  int64_t N2 = d[7];
  int64_t N3 = d[8];
  double *restrict o = (double *)p[5];
  int64_t os0 = d[9];
  int64_t os1 = d[10];
  {
    {
      {
        if (N3 == 8) {
          const int64_t ls_nt = (d[11] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])) * (double)(8) * (double)(N2))) >= (double)d[12]) ? d[11] : 1;
          d[13] = ls_nt;
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
                    ls_vd rv8[8 / (LS_VB / 8)];
                    for (int64_t lvb = 0; lvb < (8 / (LS_VB / 8)); lvb++) {
                      rv8[lvb] = (ls_vd){0};
                    }
                    {
                      int64_t b0_1 = (int64_t)p0_1[q0_0];
                      int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                      for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                        int64_t x1 = (int64_t)c0_1[j0_1];
                        for (int64_t x2 = 0; x2 < N2; x2++) {
                          for (int64_t lvb = 0; lvb < (8 / (LS_VB / 8)); lvb++) {
                            rv8[lvb] += (v0[j0_1] * (v1[(x1) * s1_0 + (x2)] * (*(const ls_vd *)&v2[(x2) * s2_0 + (lvb * (LS_VB / 8))])));
                          }
                        }
                      }
                    }
                    {
                      for (int64_t lvb = 0; lvb < (8 / (LS_VB / 8)); lvb++) {
                        *(ls_vd *)&o[(x0) * os0 + (lvb * (LS_VB / 8))] = rv8[lvb];
                      }
                    }
                  }
                }
              }
            }
          }
        } else {
          if (N3 == 16) {
            const int64_t ls_nt = (d[11] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])) * (double)(16) * (double)(N2))) >= (double)d[12]) ? d[11] : 1;
            d[13] = ls_nt;
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
                      ls_vd rv16[16 / (LS_VB / 8)];
                      for (int64_t lvb = 0; lvb < (16 / (LS_VB / 8)); lvb++) {
                        rv16[lvb] = (ls_vd){0};
                      }
                      {
                        int64_t b0_1 = (int64_t)p0_1[q0_0];
                        int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                        for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                          int64_t x1 = (int64_t)c0_1[j0_1];
                          for (int64_t x2 = 0; x2 < N2; x2++) {
                            for (int64_t lvb = 0; lvb < (16 / (LS_VB / 8)); lvb++) {
                              rv16[lvb] += (v0[j0_1] * (v1[(x1) * s1_0 + (x2)] * (*(const ls_vd *)&v2[(x2) * s2_0 + (lvb * (LS_VB / 8))])));
                            }
                          }
                        }
                      }
                      {
                        for (int64_t lvb = 0; lvb < (16 / (LS_VB / 8)); lvb++) {
                          *(ls_vd *)&o[(x0) * os0 + (lvb * (LS_VB / 8))] = rv16[lvb];
                        }
                      }
                    }
                  }
                }
              }
            }
          } else {
            if (N3 == 32) {
              const int64_t ls_nt = (d[11] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])) * (double)(32) * (double)(N2))) >= (double)d[12]) ? d[11] : 1;
              d[13] = ls_nt;
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
                        ls_vd rv32[32 / (LS_VB / 8)];
                        for (int64_t lvb = 0; lvb < (32 / (LS_VB / 8)); lvb++) {
                          rv32[lvb] = (ls_vd){0};
                        }
                        {
                          int64_t b0_1 = (int64_t)p0_1[q0_0];
                          int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                          for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                            int64_t x1 = (int64_t)c0_1[j0_1];
                            for (int64_t x2 = 0; x2 < N2; x2++) {
                              for (int64_t lvb = 0; lvb < (32 / (LS_VB / 8)); lvb++) {
                                rv32[lvb] += (v0[j0_1] * (v1[(x1) * s1_0 + (x2)] * (*(const ls_vd *)&v2[(x2) * s2_0 + (lvb * (LS_VB / 8))])));
                              }
                            }
                          }
                        }
                        {
                          for (int64_t lvb = 0; lvb < (32 / (LS_VB / 8)); lvb++) {
                            *(ls_vd *)&o[(x0) * os0 + (lvb * (LS_VB / 8))] = rv32[lvb];
                          }
                        }
                      }
                    }
                  }
                }
              }
            } else {
              if (N3 == 64) {
                const int64_t ls_nt = (d[11] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])) * (double)(64) * (double)(N2))) >= (double)d[12]) ? d[11] : 1;
                d[13] = ls_nt;
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
                          ls_vd rv64[64 / (LS_VB / 8)];
                          for (int64_t lvb = 0; lvb < (64 / (LS_VB / 8)); lvb++) {
                            rv64[lvb] = (ls_vd){0};
                          }
                          {
                            int64_t b0_1 = (int64_t)p0_1[q0_0];
                            int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                            for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              for (int64_t x2 = 0; x2 < N2; x2++) {
                                for (int64_t lvb = 0; lvb < (64 / (LS_VB / 8)); lvb++) {
                                  rv64[lvb] = LS_VFMA_ls_vd((v0[j0_1] - (ls_vd){0}), ((v1[(x1) * s1_0 + (x2)] * (*(const ls_vd *)&v2[(x2) * s2_0 + (lvb * (LS_VB / 8))])) - (ls_vd){0}), rv64[lvb]);
                                }
                              }
                            }
                          }
                          {
                            for (int64_t lvb = 0; lvb < (64 / (LS_VB / 8)); lvb++) {
                              *(ls_vd *)&o[(x0) * os0 + (lvb * (LS_VB / 8))] = rv64[lvb];
                            }
                          }
                        }
                      }
                    }
                  }
                }
              } else {
                if (N3 == 128) {
                  const int64_t ls_nt = (d[11] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])) * (double)(128) * (double)(N2))) >= (double)d[12]) ? d[11] : 1;
                  d[13] = ls_nt;
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
                            ls_vd rv128[128 / (LS_VB / 8)];
                            for (int64_t lvb = 0; lvb < (128 / (LS_VB / 8)); lvb++) {
                              rv128[lvb] = (ls_vd){0};
                            }
                            {
                              int64_t b0_1 = (int64_t)p0_1[q0_0];
                              int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                              for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                                int64_t x1 = (int64_t)c0_1[j0_1];
                                for (int64_t x2 = 0; x2 < N2; x2++) {
                                  for (int64_t lvb = 0; lvb < (128 / (LS_VB / 8)); lvb++) {
                                    rv128[lvb] = LS_VFMA_ls_vd((v0[j0_1] - (ls_vd){0}), ((v1[(x1) * s1_0 + (x2)] * (*(const ls_vd *)&v2[(x2) * s2_0 + (lvb * (LS_VB / 8))])) - (ls_vd){0}), rv128[lvb]);
                                  }
                                }
                              }
                            }
                            {
                              for (int64_t lvb = 0; lvb < (128 / (LS_VB / 8)); lvb++) {
                                *(ls_vd *)&o[(x0) * os0 + (lvb * (LS_VB / 8))] = rv128[lvb];
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                } else {
                  const int64_t ls_nt = (d[11] > 1 && ((((double)((int64_t)p0_1[(1) * n0_0])) * (double)(N3) * (double)(N2))) >= (double)d[12]) ? d[11] : 1;
                  d[13] = ls_nt;
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
                            int64_t b0_1 = (int64_t)p0_1[q0_0];
                            int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                            for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                              int64_t x1 = (int64_t)c0_1[j0_1];
                              for (int64_t x2 = 0; x2 < N2; x2++) {
                                for (int64_t x3 = 0; x3 < N3; x3++) {
                                  o[(x0) * os0 + (x3)] += ((v0[j0_1]) * (((v1[(x1) * s1_0 + (x2)]) * (v2[(x2) * s2_0 + (x3)]))));
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
    }
  }
  return 0;
}
