
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



/* the bitmap's words are `unsigned long long`, not `uint64_t` (`unsigned long`): stores through
   them cannot alias `n`, an `int64_t` (`long`), which then stays in a register in the loops */
typedef unsigned long long ls_wbits;
typedef struct {
  LS_WT *v; ls_wbits *bits, *sum; LS_WK *list; int64_t n, E;
  int z;  /* whether the last drain gave a zero value */
  int u;  /* whether the inserts are the branch-free ones (ls_ws_use) */
} ls_ws;
/* whether the last drain gave a zero value (the flush then needs no scan for one) */
#define LS_WS_ZERO(w) ((w)->z)
static int ls_ws_init(ls_ws *w, int64_t E, int64_t cap) {
  (void)cap;
  const size_t n = (size_t)(E > 0 ? E : 1), words = (n + 63) / 64;
  w->E = E; w->n = 0; w->z = 0; w->u = 0;
  w->v = (LS_WT *)ls_malloc(n * sizeof(LS_WT));  /* set point by point; ls_ws_use(w, 1) fills it */
  w->bits = (ls_wbits *)ls_calloc(words, sizeof(ls_wbits));
  w->sum = (ls_wbits *)ls_calloc((words + 63) / 64, sizeof(ls_wbits));
  w->list = (LS_WK *)ls_malloc((n + LS_RANK_MAX) * sizeof(LS_WK));
  return !w->v || !w->bits || !w->sum || !w->list;
}
/* Both inserts leave the summary words to the drain (ls_ws_sum, for the rows whose drain reads
   them: a short row drained by rank does not): kept here, they made a chain through memory and
   cost a new point three instructions (A @ A cryg2500 0.89, fe_4elt2 0.90, cs4 0.94 of the
   kernel's time before; measured in-process, the two builds interleaved on the same operands) */
static inline int ls_ws_insert(ls_ws *w, int64_t key, LS_WT val) {
  const int64_t q = key >> 6;
  const ls_wbits b = (ls_wbits)1 << (key & 63);
  if (w->bits[q] & b) { LS_WCOMB(w->v[key], val); return 0; }
  w->bits[q] |= b;
  w->v[key] = val; w->list[w->n++] = (LS_WK)key;
  return 0;
}
/* The same without a branch, for kernels whose points meet earlier ones at random (the branch
   above then mispredicts about once a product): the value folded into the point, which holds
   the reduction's identity until then (the drain puts it back; a select of the value became a
   branch again), the key listed either way and counted only when new (the list has room past
   the extent). Neither insert wins everywhere (the branch where points never meet, or meet in a
   pattern the predictor learns: sums of patterns, meshes), so the kernel has a loop nest for
   each and runtime/tuning.py measures which to run (`LS_WS_INSERT_B`); ls_ws_use says which. */
#define LS_WS_INSERT_B 1
static inline int ls_ws_insert_b(ls_ws *w, int64_t key, LS_WT val) {
  const int64_t q = key >> 6;
  const ls_wbits b = (ls_wbits)1 << (key & 63), x = w->bits[q];
  LS_WCOMB(w->v[key], val);
  w->bits[q] = x | b;
  w->list[w->n] = (LS_WK)key; w->n += (x & b) == 0;
  return 0;
}
/* nonzero: out of memory. The branch-free insert needs every value at the identity; a fresh
   zeroed array costs nothing until touched where calloc maps it, so the branch insert's calls
   (malloc'ed values, set as points arrive) never pay for it */
static int ls_ws_use(ls_ws *w, int b) {
  w->u = b;
  if (!b) return 0;
  const size_t n = (size_t)(w->E > 0 ? w->E : 1);
  free(w->v);
  w->v = (LS_WT *)ls_calloc(n, sizeof(LS_WT));
  if (w->v && LS_WIDENT != 0) for (size_t t = 0; t < n; t++) w->v[t] = LS_WIDENT;
  return !w->v;
}
static inline int64_t ls_ws_size(const ls_ws *w) { return w->n; }
/* Drain of a short row (n <= R keys, R = 32 or 64) by rank: a key's place in the sorted row
   is the number of keys below it, found with R comparisons and no branch. S: the row's summary
   words were built (ls_ws_sum), and are cleared with its bitmap words. */
#if defined(__AVX512F__) && (LS_WK_BITS == 32 || LS_WK_BITS == 64)
/* the row's keys in registers, R / LS_RL of them (lanes past n hold the pad key E) */
#define LS_RANK_LOAD(L, w, n, R) \
  for (int p_ = 0; p_ < (R) / LS_RL; p_++) (L)[p_] = ls_rank_part((w)->list + p_ * LS_RL, (n) - p_ * LS_RL, (LS_WK)(w)->E)
static inline __attribute__((always_inline)) int ls_rank_drain(ls_ws *w, LS_WK *restrict k, LS_WT *restrict v, int64_t n, const int R, const int S, const __m512i *L) {
#else
static inline __attribute__((always_inline)) int ls_rank_drain(ls_ws *w, LS_WK *restrict k, LS_WT *restrict v, int64_t n, const int R, const int S) {
#endif
  LS_WK *restrict l = w->list;
  int zf = 0;
#if defined(__AVX512F__) && (LS_WK_BITS == 32 || LS_WK_BITS == 64)
#else
  for (int b = 0; b < R; b++) l[n + b] = (LS_WK)w->E;
#endif
  for (int64_t a = 0; a < n; a++) {
    const LS_WK ka = l[a];
#if defined(__AVX512F__) && (LS_WK_BITS == 32 || LS_WK_BITS == 64)
    int r = 0;
    for (int p = 0; p < R / LS_RL; p++) r += ls_rank_cmp(L[p], ka);
#else
    const int r = ls_rank(l, ka, R);
#endif
    const LS_WT x = w->v[ka];
    k[r] = ka; v[r] = x; zf |= x == 0;
    w->bits[ka >> 6] = 0;
    if (S) w->sum[ka >> 12] = 0;
  }
  return zf;
}
/* The lowest and highest bitmap word the row touches, from its list at the drain (n >= 1):
   kept by every insert instead, they cost two selects a new point in the insert loop, the
   kernel's hottest. Up to 64 32-bit keys: masked loads (lanes past n read the first key) and one
   reduction each, no branch. */
static inline __attribute__((always_inline)) void ls_ws_span(const ls_ws *w, int64_t n, int64_t *lo, int64_t *hi) {
  const LS_WK *l = w->list;
#if defined(__AVX512F__) && LS_WK_BITS == 32
  if (n <= 64) {
    __m512i mn = ls_rank_part(l, n, l[0]), mx = mn;
    for (int p = 1; p < 4; p++) {
      const __m512i x = ls_rank_part(l + 16 * p, n - 16 * p, l[0]);
      mn = _mm512_min_epi32(mn, x); mx = _mm512_max_epi32(mx, x);
    }
    *lo = (int64_t)_mm512_reduce_min_epi32(mn) >> 6; *hi = (int64_t)_mm512_reduce_max_epi32(mx) >> 6;
    return;
  }
#endif
  LS_WK a = l[0], b = l[0];
  for (int64_t t = 1; t < n; t++) { a = l[t] < a ? l[t] : a; b = l[t] > b ? l[t] : b; }
  *lo = (int64_t)a >> 6; *hi = (int64_t)b >> 6;
}
/* whether the row's n entries touch at least 5n/8 bitmap words (a summary bit each; a row over
   8 or more summary words is taken as thin without counting) */
static inline int ls_ws_thin(const ls_ws *w, int64_t n, int64_t lo, int64_t hi) {
  const int64_t s0 = lo >> 6, s1 = hi >> 6;
  if (s1 - s0 >= 8) return 1;
  int64_t t = 0;
  for (int64_t s = s0; s <= s1; s++) t += __builtin_popcountll(w->sum[s]);
  return 8 * t >= 5 * n;
}
/* the summary words of the listed keys (the inserts leave them to the drain); a row within one
   summary word ORs its bits in a register (through memory, each OR waits on the last's store) */
static inline void ls_ws_sum(ls_ws *w, int64_t n, int64_t lo, int64_t hi) {
  if (lo >> 6 == hi >> 6) {
    ls_wbits a = 0;
    for (int64_t t = 0; t < n; t++) a |= (ls_wbits)1 << (((int64_t)w->list[t] >> 6) & 63);
    w->sum[lo >> 6] |= a;
    return;
  }
  for (int64_t t = 0; t < n; t++) {
    const int64_t q = (int64_t)w->list[t] >> 6;
    w->sum[q >> 6] |= (ls_wbits)1 << (q & 63);
  }
}
static int64_t ls_ws_drain(ls_ws *w, LS_WK *k, LS_WT *v, LS_WK *tk, LS_WT *tv) {
  const int64_t n = w->n;
  (void)tv;
  w->z = 0;
  if (n == 0) return 0;
  int zf = 0;
  int64_t lo, hi;
#if defined(__AVX512F__) && (LS_WK_BITS == 32 || LS_WK_BITS == 64)
  if (n <= 32) {
    /* a short row: its keys go to registers once, for the rank and for the test of whether
       they share one bitmap word (a compare a register, where the span's two reductions cost
       cryg2500's A @ A, 13 entries a row, about 4% of its time) */
    __m512i L[32 / LS_RL];
    LS_RANK_LOAD(L, w, n, 32);
    if (ls_rank_multi(L, 32 / LS_RL, w->list[0], (LS_WK)w->E)) {
      zf = ls_rank_drain(w, k, v, n, 32, 0, L);
      goto done;
    }
    lo = hi = (int64_t)w->list[0] >> 6;
  } else {
    ls_ws_span(w, n, &lo, &hi);
  }
#else
  ls_ws_span(w, n, &lo, &hi);
#endif
  if (!(n <= 32 && hi > lo)) ls_ws_sum(w, n, lo, hi);  /* the walk and the thin test read them */
  if (n <= 32 && hi > lo) {
    /* a short row over more than one bitmap word: the walk below would mispredict once a
       summary word (A + B + C on vt2010: 4.15 against 3.0 ms a call) and once a touched word
       (rows within one summary word, since the rank keeps the row in registers: A + B + C on
       cora 0.71 -> 0.57 of scipy, citeseer 0.63-0.71 -> 0.58; the padded rank was slower there) */
#if defined(__AVX512F__) && (LS_WK_BITS == 32 || LS_WK_BITS == 64)
    __builtin_unreachable();  /* told above */
#else
    zf = ls_rank_drain(w, k, v, n, 32, 0);
#endif
  } else if (n <= 64 && ls_ws_thin(w, n, lo, hi)) {
    /* a row of 33-64 entries, most alone in their bitmap word: the walk would mispredict
       about once an entry */
#if defined(__AVX512F__) && (LS_WK_BITS == 32 || LS_WK_BITS == 64)
    __m512i L[64 / LS_RL];
    LS_RANK_LOAD(L, w, n, 64);
    zf = ls_rank_drain(w, k, v, n, 64, 1, L);
#else
    zf = ls_rank_drain(w, k, v, n, 64, 1);
#endif
  } else if ((hi >> 6) - (lo >> 6) < 4 * n + 8) {
    int64_t o = 0;
    for (int64_t s = lo >> 6; s <= hi >> 6; s++) {
      ls_wbits y = w->sum[s];
      w->sum[s] = 0;
      while (y) {
        const int64_t q = (s << 6) + __builtin_ctzll(y);
        y &= y - 1;
        ls_wbits x = w->bits[q];
        w->bits[q] = 0;
        while (x) {
          const int64_t key = (q << 6) + __builtin_ctzll(x);
          const LS_WT val = w->v[key];
          x &= x - 1; k[o] = (LS_WK)key; v[o++] = val; zf |= val == 0;
        }
      }
    }
  } else {
    memcpy(k, w->list, (size_t)n * sizeof(LS_WK));
    ls_ksort(k, tk, n);
    for (int64_t t = 0; t < n; t++) {
      const LS_WT val = w->v[k[t]];
      v[t] = val; zf |= val == 0; w->bits[k[t] >> 6] = 0; w->sum[k[t] >> 12] = 0;
    }
  }
#if defined(__AVX512F__) && (LS_WK_BITS == 32 || LS_WK_BITS == 64)
done:
#endif
  /* the branch-free insert's points back to the identity, in a loop of their own: a test an
     entry in the loops above cost the insert with a branch (NSR8K's A @ A 0.92 -> 1.07 of scipy) */
  if (w->u) for (int64_t t = 0; t < n; t++) w->v[w->list[t]] = LS_WIDENT;
  w->n = 0; w->z = zf;
  return n;
}
static void ls_ws_free(ls_ws *w) { free(w->v); free(w->bits); free(w->sum); free(w->list); }


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
/* out[i,j] = add(add(T0[i,j], T1[i,j]), T2[i,j]) | order i,j | ws-dense */
int32_t ls_kernel(void **p, int64_t *d) {
  int64_t n0_0 = d[0];
  const int32_t *restrict p0_1 = (const int32_t *)p[0];
  const int32_t *restrict c0_1 = (const int32_t *)p[1];
  const double *restrict v0 = (const double *)p[2];
  int64_t n1_0 = d[1];
  const int32_t *restrict p1_1 = (const int32_t *)p[3];
  const int32_t *restrict c1_1 = (const int32_t *)p[4];
  const double *restrict v1 = (const double *)p[5];
  int64_t n2_0 = d[2];
  const int32_t *restrict p2_1 = (const int32_t *)p[6];
  const int32_t *restrict c2_1 = (const int32_t *)p[7];
  const double *restrict v2 = (const double *)p[8];
  int64_t N0 = d[3];
  int64_t N1 = d[4];
  const int wsb0 = (int)d[5];
  const int ls_inz = d[16] || d[17] || d[18];
  int64_t osz0 = d[6];
  int64_t osz1 = d[7];
  int64_t ocap = 16;
  int32_t * op1 = NULL;
  int32_t * oc1 = NULL;
  double * ov = NULL;
  int64_t * ls_ck = NULL;
  void * * ls_tp = NULL;
  ls_ws ws = {0};
  ls_ism ism = {0};
  const int64_t ls_prev = d[8] > 0 ? d[8] + d[8] / 8 + 16 : 0;
  ocap = (ls_prev && ls_prev < (d[9] + d[10] + d[11]) ? ls_prev : (d[9] + d[10] + d[11])) < osz0 * osz1 ? (ls_prev && ls_prev < (d[9] + d[10] + d[11]) ? ls_prev : (d[9] + d[10] + d[11])) : osz0 * osz1;
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
  {
    const int64_t ls_nt = (d[12] > 1 && (((double)ocap * (double)(sizeof(int32_t) + sizeof(double)) > (double)LS_KEEP_MAX) ? -1.0 : ((((double)((int64_t)p0_1[(1) * n0_0]) + (double)((int64_t)p1_1[(1) * n1_0]) + (double)((int64_t)p2_1[(1) * n2_0]))))) >= (double)d[13]) ? d[12] : 1;
    d[14] = ls_nt;
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
      ls_ws ws = {0};
      ls_ism ism = {0};
      int ls_ok = !ls_bad;
      if (ls_ok && ls_ws_init(&ws, osz1, d[15])) ls_ok = 0;
      if (ls_ok && ls_ws_use(&ws, wsb0)) ls_ok = 0;
      if (!ls_ok) {
        #pragma omp atomic write
        ls_bad = 1;
      }
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
            int64_t q2_0 = (0) * n2_0 + x0;
            int64_t od0 = (0) * osz0 + x0;
            if (wsb0) {
              {
                int64_t b0_1 = (int64_t)p0_1[q0_0];
                int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                  int64_t x1 = (int64_t)c0_1[j0_1];
                  if (ls_ws_insert_b(&ws, x1, v0[j0_1])) if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                }
              }
              {
                int64_t b1_1 = (int64_t)p1_1[q1_0];
                int64_t z1_1 = (int64_t)p1_1[(q1_0) + 1];
                for (int64_t j1_1 = b1_1; j1_1 < z1_1; j1_1++) {
                  int64_t x1 = (int64_t)c1_1[j1_1];
                  if (ls_ws_insert_b(&ws, x1, v1[j1_1])) if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                }
              }
              {
                int64_t b2_1 = (int64_t)p2_1[q2_0];
                int64_t z2_1 = (int64_t)p2_1[(q2_0) + 1];
                for (int64_t j2_1 = b2_1; j2_1 < z2_1; j2_1++) {
                  int64_t x1 = (int64_t)c2_1[j2_1];
                  if (ls_ws_insert_b(&ws, x1, v2[j2_1])) if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                }
              }
            } else {
              {
                int64_t b0_1 = (int64_t)p0_1[q0_0];
                int64_t z0_1 = (int64_t)p0_1[(q0_0) + 1];
                for (int64_t j0_1 = b0_1; j0_1 < z0_1; j0_1++) {
                  int64_t x1 = (int64_t)c0_1[j0_1];
                  if (ls_ws_insert(&ws, x1, v0[j0_1])) if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                }
              }
              {
                int64_t b1_1 = (int64_t)p1_1[q1_0];
                int64_t z1_1 = (int64_t)p1_1[(q1_0) + 1];
                for (int64_t j1_1 = b1_1; j1_1 < z1_1; j1_1++) {
                  int64_t x1 = (int64_t)c1_1[j1_1];
                  if (ls_ws_insert(&ws, x1, v1[j1_1])) if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                }
              }
              {
                int64_t b2_1 = (int64_t)p2_1[q2_0];
                int64_t z2_1 = (int64_t)p2_1[(q2_0) + 1];
                for (int64_t j2_1 = b2_1; j2_1 < z2_1; j2_1++) {
                  int64_t x1 = (int64_t)c2_1[j2_1];
                  if (ls_ws_insert(&ws, x1, v2[j2_1])) if (ls_ism_spill(&ws, &ism)) goto ls_fail;
                }
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
              if (ls_inz || ((int64_t)p0_1[(q0_0) + 1] - (int64_t)p0_1[q0_0]) + ((int64_t)p1_1[(q1_0) + 1] - (int64_t)p1_1[q1_0]) + ((int64_t)p2_1[(q2_0) + 1] - (int64_t)p2_1[q2_0]) != fn) {
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
      ls_ws_free(&ws); ls_ism_free(&ism); memset(&ws, 0, sizeof ws); memset(&ism, 0, sizeof ism);
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
  ls_ws_free(&ws); ls_ism_free(&ism); memset(&ws, 0, sizeof ws); memset(&ism, 0, sizeof ism);
  for (int64_t t = 1; t < ((1) * osz0) + 1; t++) {
    if (op1[t] < op1[t - 1]) op1[t] = op1[t - 1];
  }
  LS_FIT(int32_t, oc1, on1, occ1);
  LS_FIT(double, ov, on1, ovc);
  p[9] = (void *)op1;
  p[10] = (void *)oc1;
  p[11] = (void *)ov;
  d[8] = on1;
  return 0;
  ls_fail:
  p[9] = (void *)op1;
  p[10] = (void *)oc1;
  p[11] = (void *)ov;
  free(ls_ck);
  free(ls_tp);
  ls_ws_free(&ws); ls_ism_free(&ism); memset(&ws, 0, sizeof ws); memset(&ism, 0, sizeof ism);
  return 1;
}
