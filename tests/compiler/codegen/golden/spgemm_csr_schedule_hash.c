
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

#define LS_WT double
#define LS_WK int32_t
#define LS_WK_BITS 32
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
#define LS_WCOMB(d_, s_) do { (d_) += (s_); } while (0)
#define LS_WIDENT ((double)0.0)

/* Ranks: how many of a short row's keys are below a key, without a branch. R (32 or 64, a
   constant where these inline) is how many keys the row may have. With AVX-512 the row is held
   in registers, read by masked loads with keys past its end read as `pad` (above every key):
   padding it in memory instead made the first vector load of each row wait for the padding
   stores to retire (store forwarding fails on a partial overlap: 11% of cs4's drain samples).
   Elsewhere the list in memory is padded and compared a vector (AVX2) or a key at a time. */
#define LS_RANK_MAX 64
#if defined(__AVX512F__) && (LS_WK_BITS == 32 || LS_WK_BITS == 64)
#define LS_RL (512 / LS_WK_BITS)
static inline __attribute__((always_inline)) __m512i ls_rank_part(const LS_WK *l, int64_t m, LS_WK pad) {
  /* the mask of the first m lanes (m clamped to 0..LS_RL) without a branch: as branches, the
     choice mispredicted with the row length (cryg2500's drain) */
  const int64_t c0 = m < 0 ? 0 : m, c = c0 > LS_RL ? LS_RL : c0;
#if defined(__BMI2__)
  const uint64_t k = _bzhi_u64(~(uint64_t)0, (unsigned)c);
#else
  const uint64_t k = ((uint64_t)1 << c) - 1;  /* c <= LS_RL <= 16 */
#endif
#if LS_WK_BITS == 32
  return _mm512_mask_loadu_epi32(_mm512_set1_epi32(pad), (__mmask16)k, (const void *)l);
#else
  return _mm512_mask_loadu_epi64(_mm512_set1_epi64(pad), (__mmask8)k, (const void *)l);
#endif
}
/* whether the keys held in L[0..P) (pad lanes excepted) lie in more than one bitmap word */
static inline __attribute__((always_inline)) int ls_rank_multi(const __m512i *L, int P, LS_WK k0, LS_WK pad) {
  unsigned m = 0;
#if LS_WK_BITS == 32
  const __m512i q0 = _mm512_set1_epi32(k0 >> 6), pv = _mm512_set1_epi32(pad);
  for (int p = 0; p < P; p++)
    m |= _mm512_mask_cmpneq_epi32_mask(_mm512_cmpneq_epi32_mask(L[p], pv), _mm512_srli_epi32(L[p], 6), q0);
#else
  const __m512i q0 = _mm512_set1_epi64(k0 >> 6), pv = _mm512_set1_epi64(pad);
  for (int p = 0; p < P; p++)
    m |= _mm512_mask_cmpneq_epi64_mask(_mm512_cmpneq_epi64_mask(L[p], pv), _mm512_srli_epi64(L[p], 6), q0);
#endif
  return m != 0;
}
static inline __attribute__((always_inline)) int ls_rank_cmp(__m512i L, LS_WK ka) {
#if LS_WK_BITS == 32
  return __builtin_popcount(_mm512_cmplt_epi32_mask(L, _mm512_set1_epi32(ka)));
#else
  return __builtin_popcount(_mm512_cmplt_epi64_mask(L, _mm512_set1_epi64(ka)));
#endif
}
#else
static inline __attribute__((always_inline)) int ls_rank(const LS_WK *l, LS_WK ka, const int R) {
  int r = 0;
#if defined(__AVX2__) && LS_WK_BITS == 32
  const __m256i kv = _mm256_set1_epi32(ka);
  for (int b = 0; b < R; b += 8)
    r += __builtin_popcount(_mm256_movemask_ps(_mm256_castsi256_ps(
        _mm256_cmpgt_epi32(kv, _mm256_loadu_si256((const __m256i *)(l + b))))));
#elif defined(__AVX2__) && LS_WK_BITS == 64
  const __m256i kv = _mm256_set1_epi64x(ka);
  for (int b = 0; b < R; b += 4)
    r += __builtin_popcount(_mm256_movemask_pd(_mm256_castsi256_pd(
        _mm256_cmpgt_epi64(kv, _mm256_loadu_si256((const __m256i *)(l + b))))));
#else
  for (int b = 0; b < R; b++) r += l[b] < ka;
#endif
  return r;
}
#endif

/* bottom-up merge sort of n keys; t: scratch of n */
static void ls_ksort(LS_WK *k, LS_WK *t, int64_t n) {
  for (int64_t s = 0; s < n; s += 16) {
    const int64_t e = s + 16 < n ? s + 16 : n;
    for (int64_t a = s + 1; a < e; a++) {
      const LS_WK kk = k[a]; int64_t b = a;
      while (b > s && k[b - 1] > kk) { k[b] = k[b - 1]; b--; }
      k[b] = kk;
    }
  }
  LS_WK *sk = k, *dk = t;
  for (int64_t w = 16; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      const int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) dk[o++] = sk[b] < sk[a] ? sk[b++] : sk[a++];
      while (a < mid) dk[o++] = sk[a++];
      while (b < hi) dk[o++] = sk[b++];
    }
    LS_WK *x = sk; sk = dk; dk = x;
  }
  if (sk != k) memcpy(k, sk, (size_t)n * sizeof(LS_WK));
}

/* stable bottom-up merge sort of n (key, value) pairs by key; tk/tv: scratch of n */
static void ls_kvsort(LS_WK *k, LS_WT *v, LS_WK *tk, LS_WT *tv, int64_t n) {
  for (int64_t s = 0; s < n; s += 16) {
    const int64_t e = s + 16 < n ? s + 16 : n;
    for (int64_t a = s + 1; a < e; a++) {
      const LS_WK kk = k[a]; const LS_WT vv = v[a]; int64_t b = a;
      while (b > s && k[b - 1] > kk) { k[b] = k[b - 1]; v[b] = v[b - 1]; b--; }
      k[b] = kk; v[b] = vv;
    }
  }
  LS_WK *sk = k, *dk = tk; LS_WT *sv = v, *dv = tv;
  for (int64_t w = 16; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      const int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) {
        if (sk[b] < sk[a]) { dk[o] = sk[b]; dv[o++] = sv[b++]; } else { dk[o] = sk[a]; dv[o++] = sv[a++]; }
      }
      while (a < mid) { dk[o] = sk[a]; dv[o++] = sv[a++]; }
      while (b < hi) { dk[o] = sk[b]; dv[o++] = sv[b++]; }
    }
    LS_WK *xk = sk; sk = dk; dk = xk;
    LS_WT *xv = sv; sv = dv; dv = xv;
  }
  if (sk != k) { memcpy(k, sk, (size_t)n * sizeof(LS_WK)); memcpy(v, sv, (size_t)n * sizeof(LS_WT)); }
}



typedef struct { LS_WK *key; int64_t *used; LS_WT *v; int64_t n, cap, mask; int shift; } ls_ws;
static int ls_ws_init(ls_ws *w, int64_t E, int64_t cap) {
  (void)E;
  int64_t L = 2; int shift = 63;
  while (L < 2 * cap) { L *= 2; shift--; }
  w->n = 0; w->cap = cap; w->mask = L - 1; w->shift = shift;
  w->key = (LS_WK *)ls_malloc((size_t)L * sizeof(LS_WK));
  w->v = (LS_WT *)ls_malloc((size_t)L * sizeof(LS_WT));
  w->used = (int64_t *)ls_malloc((size_t)cap * sizeof(int64_t));
  if (!w->key || !w->v || !w->used) return 1;
  memset(w->key, 0xff, (size_t)L * sizeof(LS_WK));  /* -1: empty */
  return 0;
}
static inline int ls_ws_insert(ls_ws *w, int64_t key, LS_WT val) {
  int64_t h = (int64_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> w->shift);
  while (w->key[h] != key && w->key[h] != -1) h = (h + 1) & w->mask;
  if (w->key[h] == key) { LS_WCOMB(w->v[h], val); return 0; }
  w->key[h] = (LS_WK)key; w->v[h] = val; w->used[w->n++] = h;
  return w->n >= w->cap;
}
static inline int64_t ls_ws_size(const ls_ws *w) { return w->n; }
static int64_t ls_ws_drain(ls_ws *w, LS_WK *k, LS_WT *v, LS_WK *tk, LS_WT *tv) {
  const int64_t n = w->n;
  for (int64_t t = 0; t < n; t++) { const int64_t h = w->used[t]; k[t] = w->key[h]; v[t] = w->v[h]; w->key[h] = -1; }
  ls_kvsort(k, v, tk, tv, n);
  w->n = 0;
  return n;
}
static void ls_ws_free(ls_ws *w) { free(w->key); free(w->v); free(w->used); }


/* the drained entries (k/v, sort scratch tk/tv) and the all array (ak/av, spare bk/bv) */
typedef struct { LS_WK *k, *tk, *ak, *bk; LS_WT *v, *tv, *av, *bv; int64_t dcap, acap, an; } ls_ism;

static int ls_ism_grow(LS_WK **k, LS_WT **v, int64_t n) {
  LS_WK *nk = (LS_WK *)realloc(*k, (size_t)n * sizeof(LS_WK));
  if (!nk) return 1;
  *k = nk;
  LS_WT *nv = (LS_WT *)realloc(*v, (size_t)n * sizeof(LS_WT));
  if (!nv) return 1;
  *v = nv;
  return 0;
}

/* room for n drained entries */
static int ls_ism_reserve(ls_ism *s, int64_t n) {
  if (n <= s->dcap) return 0;
  int64_t c = s->dcap * 2 > n ? s->dcap * 2 : n;
  if (ls_ism_grow(&s->k, &s->v, c) || ls_ism_grow(&s->tk, &s->tv, c)) return 1;
  s->dcap = c;
  return 0;
}

/* drain the accumulation array and merge it into the all array (Sort, Merge, refresh) */
static int ls_ism_spill(ls_ws *w, ls_ism *s) {
  if (ls_ism_reserve(s, ls_ws_size(w))) return 1;
  const int64_t m = ls_ws_drain(w, s->k, s->v, s->tk, s->tv), n = s->an;
  if (n + m > s->acap) {
    int64_t c = s->acap * 2 > n + m ? s->acap * 2 : n + m;
    if (ls_ism_grow(&s->ak, &s->av, c) || ls_ism_grow(&s->bk, &s->bv, c)) return 1;
    s->acap = c;
  }
  int64_t a = 0, b = 0, o = 0;
  while (a < n && b < m) {
    if (s->ak[a] < s->k[b]) { s->bk[o] = s->ak[a]; s->bv[o++] = s->av[a++]; }
    else if (s->k[b] < s->ak[a]) { s->bk[o] = s->k[b]; s->bv[o++] = s->v[b++]; }
    else { s->bk[o] = s->ak[a]; s->bv[o] = s->av[a++]; LS_WCOMB(s->bv[o], s->v[b]); b++; o++; }
  }
  while (a < n) { s->bk[o] = s->ak[a]; s->bv[o++] = s->av[a++]; }
  while (b < m) { s->bk[o] = s->k[b]; s->bv[o++] = s->v[b++]; }
  LS_WK *xk = s->ak; s->ak = s->bk; s->bk = xk;
  LS_WT *xv = s->av; s->av = s->bv; s->bv = xv;
  s->an = o;
  return 0;
}

static void ls_ism_free(ls_ism *s) {
  free(s->k); free(s->tk); free(s->ak); free(s->bk); free(s->v); free(s->tv); free(s->av); free(s->bv);
}

/* out[i0,i1] = sum_{i2} multiply(T0[i0,i2], T1[i2,i1]) | order i0,i2,i1 | ws-hash */
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
  int64_t N2 = d[4];
  const int pf1_1 = (int64_t)p1_1[(1) * n1_0] <= 10 * ((1) * n1_0) && (int64_t)p1_1[(1) * n1_0] * (int64_t)(sizeof(c1_1[0]) + sizeof(v1[0])) > 262144;
  int64_t osz0 = d[5];
  int64_t osz1 = d[6];
  int64_t ocap = 16;
  int32_t * op1 = NULL;
  int32_t * oc1 = NULL;
  double * ov = NULL;
  ls_ws ws = {0};
  ls_ism ism = {0};
  const int64_t ls_prev = d[7] > 0 ? d[7] + d[7] / 8 + 16 : 0;
  int64_t ls_ins = 0;
  if (ls_prev == 0) {
    for (int64_t x0o = 0; x0o < ((N0) + 4 - 1) / 4; x0o++) {
      const int64_t x0b = x0o * 4;
      if (x0b + 4 <= N0) {
        for (int64_t x0i = 0; x0i < 4; x0i++) {
          const int64_t x0 = x0b + x0i;
          {
            int64_t q0_0 = (0) * n0_0 + x0;
            int64_t b0_1 = (int64_t)p0_1[q0_0];
            int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
            for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
              int64_t x1 = (int64_t)c0_1[j0_1];
              if (pf1_1 && j0_1 + 16 < (int64_t)p0_1[(1) * n0_0]) __builtin_prefetch(&p1_1[c0_1[j0_1 + 16]]);
              if (pf1_1 && j0_1 + 8 < (int64_t)p0_1[(1) * n0_0]) { const int64_t h_ = (int64_t)p1_1[c0_1[j0_1 + 8]]; __builtin_prefetch(&c1_1[h_]); __builtin_prefetch(&v1[h_]); }
              int64_t q1_0 = (0) * n1_0 + x1;
              int64_t b1_1 = (int64_t)p1_1[q1_0];
              int64_t z1_1 = (int64_t)p1_1[(q1_0) + 1];
              for (int64_t j1_1 = b1_1; j1_1 < z1_1; j1_1++) {
                int64_t x2 = (int64_t)c1_1[j1_1];
                ls_ins++;
              }
            }
          }
        }
      } else {
        for (int64_t x0i = 0; x0i < 4; x0i++) {
          const int64_t x0 = x0b + x0i;
          if (x0 >= N0) break;
          {
            int64_t q0_0 = (0) * n0_0 + x0;
            int64_t b0_1 = (int64_t)p0_1[q0_0];
            int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
            for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
              int64_t x1 = (int64_t)c0_1[j0_1];
              if (pf1_1 && j0_1 + 16 < (int64_t)p0_1[(1) * n0_0]) __builtin_prefetch(&p1_1[c0_1[j0_1 + 16]]);
              if (pf1_1 && j0_1 + 8 < (int64_t)p0_1[(1) * n0_0]) { const int64_t h_ = (int64_t)p1_1[c0_1[j0_1 + 8]]; __builtin_prefetch(&c1_1[h_]); __builtin_prefetch(&v1[h_]); }
              int64_t q1_0 = (0) * n1_0 + x1;
              int64_t b1_1 = (int64_t)p1_1[q1_0];
              int64_t z1_1 = (int64_t)p1_1[(q1_0) + 1];
              for (int64_t j1_1 = b1_1; j1_1 < z1_1; j1_1++) {
                int64_t x2 = (int64_t)c1_1[j1_1];
                ls_ins++;
              }
            }
          }
        }
      }
    }
  }
  ocap = (ls_prev ? ls_prev : ls_ins) < osz0 * osz1 ? (ls_prev ? ls_prev : ls_ins) : osz0 * osz1;
  if (ocap < 16) ocap = 16;
  op1 = (int32_t *)ls_calloc((size_t)(((1) * osz0) + 1), sizeof(int32_t));
  if (!op1) goto ls_fail;
  int64_t occ1 = ocap;
  oc1 = (int32_t *)ls_malloc((size_t)ocap * sizeof(int32_t));
  int64_t on1 = 0;
  if (!oc1) goto ls_fail;
  int64_t ovc = ocap;
  ov = (double *)ls_malloc((size_t)ocap * sizeof(double));
  if (!ov) goto ls_fail;
  if (ls_ws_init(&ws, osz1, d[8])) goto ls_fail;
  {
    {
      for (int64_t x0o = 0; x0o < ((N0) + 4 - 1) / 4; x0o++) {
        const int64_t x0b = x0o * 4;
        if (x0b + 4 <= N0) {
          for (int64_t x0i = 0; x0i < 4; x0i++) {
            const int64_t x0 = x0b + x0i;
            {
              int64_t q0_0 = (0) * n0_0 + x0;
              int64_t od0 = (0) * osz0 + x0;
              int64_t b0_1 = (int64_t)p0_1[q0_0];
              int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
              for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                int64_t x1 = (int64_t)c0_1[j0_1];
                if (pf1_1 && j0_1 + 16 < (int64_t)p0_1[(1) * n0_0]) __builtin_prefetch(&p1_1[c0_1[j0_1 + 16]]);
                if (pf1_1 && j0_1 + 8 < (int64_t)p0_1[(1) * n0_0]) { const int64_t h_ = (int64_t)p1_1[c0_1[j0_1 + 8]]; __builtin_prefetch(&c1_1[h_]); __builtin_prefetch(&v1[h_]); }
                int64_t q1_0 = (0) * n1_0 + x1;
                int64_t b1_1 = (int64_t)p1_1[q1_0];
                int64_t z1_1 = (int64_t)p1_1[(q1_0) + 1];
                for (int64_t j1_1 = b1_1; j1_1 < z1_1; j1_1++) {
                  int64_t x2 = (int64_t)c1_1[j1_1];
                  if (ls_ws_insert(&ws, x2, ((v0[j0_1]) * (v1[j1_1])))) if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                }
              }
              {
                int64_t fn = ls_ws_size(&ws) + ism.an;
                LS_GROW(int32_t, oc1, occ1, on1 + fn);
                LS_GROW(double, ov, ovc, on1 + fn);
                int32_t *restrict fk = oc1 + on1;
                double *restrict fv = ov + on1;
                int zd_ = 0;
                int zk_ = 0;
                if (ism.an == 0) {
                  if (ls_ism_reserve(&ism, fn)) goto ls_fail;
                  fn = ls_ws_drain(&ws, fk, fv, ism.tk, ism.tv);
                  #ifdef LS_WS_ZERO
                  zd_ = LS_WS_ZERO(&ws) ? 1 : 0; zk_ = 1;
                  #endif
                } else {
                  if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                  fn = ism.an; ism.an = 0;
                  memcpy(fk, ism.ak, (size_t)fn * sizeof(int32_t));
                  memcpy(fv, ism.av, (size_t)fn * sizeof(double));
                }
                int64_t o = fn;
                int z_ = 0;
                if (!zk_) {
                  if (fn < 64) {
                    for (int64_t t = 0; t < fn; t++) {
                      if (fv[t] == 0) { z_ = 1; break; }
                    }
                  } else {
                    for (int64_t t = 0; t < fn; t++) {
                      z_ |= fv[t] == 0;
                    }
                  }
                } else {
                  z_ = zd_;
                }
                if (z_) {
                  o = 0;
                  for (int64_t t = 0; t < fn; t++) {
                    fk[o] = fk[t];
                    fv[o] = fv[t];
                    o += fv[t] != 0;
                  }
                }
                on1 += o;
                op1[(od0) + 1] = (int32_t)on1;
              }
              op1[od0 + 1] = on1;
            }
          }
        } else {
          for (int64_t x0i = 0; x0i < 4; x0i++) {
            const int64_t x0 = x0b + x0i;
            if (x0 >= N0) break;
            {
              int64_t q0_0 = (0) * n0_0 + x0;
              int64_t od0 = (0) * osz0 + x0;
              int64_t b0_1 = (int64_t)p0_1[q0_0];
              int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
              for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                int64_t x1 = (int64_t)c0_1[j0_1];
                if (pf1_1 && j0_1 + 16 < (int64_t)p0_1[(1) * n0_0]) __builtin_prefetch(&p1_1[c0_1[j0_1 + 16]]);
                if (pf1_1 && j0_1 + 8 < (int64_t)p0_1[(1) * n0_0]) { const int64_t h_ = (int64_t)p1_1[c0_1[j0_1 + 8]]; __builtin_prefetch(&c1_1[h_]); __builtin_prefetch(&v1[h_]); }
                int64_t q1_0 = (0) * n1_0 + x1;
                int64_t b1_1 = (int64_t)p1_1[q1_0];
                int64_t z1_1 = (int64_t)p1_1[(q1_0) + 1];
                for (int64_t j1_1 = b1_1; j1_1 < z1_1; j1_1++) {
                  int64_t x2 = (int64_t)c1_1[j1_1];
                  if (ls_ws_insert(&ws, x2, ((v0[j0_1]) * (v1[j1_1])))) if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                }
              }
              {
                int64_t fn = ls_ws_size(&ws) + ism.an;
                LS_GROW(int32_t, oc1, occ1, on1 + fn);
                LS_GROW(double, ov, ovc, on1 + fn);
                int32_t *restrict fk = oc1 + on1;
                double *restrict fv = ov + on1;
                int zd_ = 0;
                int zk_ = 0;
                if (ism.an == 0) {
                  if (ls_ism_reserve(&ism, fn)) goto ls_fail;
                  fn = ls_ws_drain(&ws, fk, fv, ism.tk, ism.tv);
                  #ifdef LS_WS_ZERO
                  zd_ = LS_WS_ZERO(&ws) ? 1 : 0; zk_ = 1;
                  #endif
                } else {
                  if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                  fn = ism.an; ism.an = 0;
                  memcpy(fk, ism.ak, (size_t)fn * sizeof(int32_t));
                  memcpy(fv, ism.av, (size_t)fn * sizeof(double));
                }
                int64_t o = fn;
                int z_ = 0;
                if (!zk_) {
                  if (fn < 64) {
                    for (int64_t t = 0; t < fn; t++) {
                      if (fv[t] == 0) { z_ = 1; break; }
                    }
                  } else {
                    for (int64_t t = 0; t < fn; t++) {
                      z_ |= fv[t] == 0;
                    }
                  }
                } else {
                  z_ = zd_;
                }
                if (z_) {
                  o = 0;
                  for (int64_t t = 0; t < fn; t++) {
                    fk[o] = fk[t];
                    fv[o] = fv[t];
                    o += fv[t] != 0;
                  }
                }
                on1 += o;
                op1[(od0) + 1] = (int32_t)on1;
              }
              op1[od0 + 1] = on1;
            }
          }
        }
      }
    }
  }
  ls_ws_free(&ws); ls_ism_free(&ism); memset(&ws, 0, sizeof ws); memset(&ism, 0, sizeof ism);
  for (int64_t t = 1; t < ((1) * osz0) + 1; t++) {
    if (op1[t] < op1[t - 1]) op1[t] = op1[t - 1];
  }
  LS_FIT(int32_t, oc1, on1, occ1);
  LS_FIT(double, ov, on1, ovc);
  p[6] = (void *)op1;
  p[7] = (void *)oc1;
  p[8] = (void *)ov;
  d[7] = on1;
  return 0;
  ls_fail:
  p[6] = (void *)op1;
  p[7] = (void *)oc1;
  p[8] = (void *)ov;
  ls_ws_free(&ws); ls_ism_free(&ism); memset(&ws, 0, sizeof ws); memset(&ism, 0, sizeof ism);
  return 1;
}
