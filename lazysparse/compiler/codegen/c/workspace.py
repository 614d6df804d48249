"""C support code of workspaces for sparse scattering (paper 003): the insert-sort-merge (ISM)
template's all array and merge, the stable sorts, and the accumulation policies (dense, hash,
coord, bucket, and those added with ``register_policy``). compiler/lower/workspace.py lowers
the loops that call them; ``prelude`` is the text a kernel with a workspace needs before
``ls_kernel``."""
from __future__ import annotations

from lazysparse.compiler.codegen.c import spelling as C
from lazysparse.compiler.loopir.support import POLICIES as _REGISTRY

# Support for every policy (before it): the stable pair sort. The template's all array and its
# merge (after it): double buffered, the merge writes into the spare pair and swaps.
SORT = r"""
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

"""

ISM = r"""
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
"""

# Gustavson's workspace: a value per point, a two-level bitmap of the touched points (a bit per
# point, and a summary bit per 64-point word) and their list. Never full (its capacity is the
# extent). Drained in key order by walking the summary words between the lowest and highest
# touched word: only touched words are read, 64 summary bits a word, so a row costs its
# entries plus a word per 4096 points of its span (sorting the list instead cost ~20 ns an
# entry on cs4 and vt2010, half of the product: branchy insertion sorts of short rows). A row
# spread much wider than its length is sorted instead. A short row (at most 32 entries)
# over more than one bitmap word (spread over several summary words, 4096 points each, or
# within one) is drained by rank instead: the walk's
# loops mispredicted about once a summary word, while a rank is one vector compare, branch-free
# (kernel alone, interleaved: A + B + C vt2010 4.27 -> 3.21 ms, cs4 2.36 -> 1.74, pubmed
# 2.19 -> 1.72, email-Enron 7.64 -> 6.64; A @ A cs4 3.47 -> 2.88; no input slower). So is a
# row of 33-64 entries most of which are alone in their bitmap word, where the walk mispredicts
# about once an entry (NSR8K A @ A 1.06-1.13 -> 0.95-1.05 of scipy; cage10's rows, two entries
# a word, keep the walk: by rank they were 0.75 -> 0.85).
DENSE = r"""
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
"""

# Open addressing (linear probing, Fibonacci hashing) over a power-of-two table at most half
# full; full at ``cap`` distinct keys; drained by collecting the used slots and sorting them.
HASH = r"""
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
"""

# Sorted coordinates (the paper's Coord): append every insert, full at ``cap``; drained by a
# stable sort, duplicates combined in the order they were inserted.
COORD = r"""
typedef struct { LS_WK *k; LS_WT *v; int64_t n, cap; } ls_ws;
static int ls_ws_init(ls_ws *w, int64_t E, int64_t cap) {
  (void)E;
  w->n = 0; w->cap = cap;
  w->k = (LS_WK *)ls_malloc((size_t)cap * sizeof(LS_WK));
  w->v = (LS_WT *)ls_malloc((size_t)cap * sizeof(LS_WT));
  return !w->k || !w->v;
}
static inline int ls_ws_insert(ls_ws *w, int64_t key, LS_WT val) {
  w->k[w->n] = (LS_WK)key; w->v[w->n] = val; w->n++;
  return w->n >= w->cap;
}
static inline int64_t ls_ws_size(const ls_ws *w) { return w->n; }
static int64_t ls_ws_drain(ls_ws *w, LS_WK *k, LS_WT *v, LS_WK *tk, LS_WT *tv) {
  const int64_t n = w->n;
  memcpy(k, w->k, (size_t)n * sizeof(LS_WK)); memcpy(v, w->v, (size_t)n * sizeof(LS_WT));
  ls_kvsort(k, v, tk, tv, n);
  int64_t o = 0;
  for (int64_t t = 0; t < n; t++) {
    if (o && k[o - 1] == k[t]) { LS_WCOMB(v[o - 1], v[t]); } else { k[o] = k[t]; v[o++] = v[t]; }
  }
  w->n = 0;
  return o;
}
static void ls_ws_free(ls_ws *w) { free(w->k); free(w->v); }
"""

# Bucket (paper 003, Table 1): buckets over contiguous key ranges (bucket order is key order),
# each a chain of entries in a pool; an insert searches its bucket's chain (duplicates combine at
# insert); a drain visits the touched buckets in order and sorts each bucket's few entries.
BUCKET = r"""
typedef struct { LS_WK *k, *touched; LS_WT *v; int64_t *next, *head; int64_t n, cap, nt, L; int shift; } ls_ws;
static int ls_ws_init(ls_ws *w, int64_t E, int64_t cap) {
  int64_t want = 16;
  while (want < cap && want < ((int64_t)1 << 20)) want *= 2;  /* about one entry a bucket when full */
  int shift = 0;
  while ((E >> shift) >= want) shift++;
  w->shift = shift; w->L = (E >> shift) + 1; w->n = 0; w->nt = 0; w->cap = cap;
  w->k = (LS_WK *)ls_malloc((size_t)cap * sizeof(LS_WK));
  w->v = (LS_WT *)ls_malloc((size_t)cap * sizeof(LS_WT));
  w->next = (int64_t *)ls_malloc((size_t)cap * sizeof(int64_t));
  w->touched = (LS_WK *)ls_malloc((size_t)cap * sizeof(LS_WK));
  w->head = (int64_t *)ls_malloc((size_t)w->L * sizeof(int64_t));
  if (!w->k || !w->v || !w->next || !w->touched || !w->head) return 1;
  memset(w->head, 0xff, (size_t)w->L * sizeof(int64_t));  /* -1: an empty bucket */
  return 0;
}
static inline int ls_ws_insert(ls_ws *w, int64_t key, LS_WT val) {
  const int64_t b = key >> w->shift;
  for (int64_t e = w->head[b]; e >= 0; e = w->next[e])
    if (w->k[e] == (LS_WK)key) { LS_WCOMB(w->v[e], val); return 0; }
  if (w->head[b] < 0) w->touched[w->nt++] = (LS_WK)b;
  w->k[w->n] = (LS_WK)key; w->v[w->n] = val; w->next[w->n] = w->head[b]; w->head[b] = w->n; w->n++;
  return w->n >= w->cap;
}
static inline int64_t ls_ws_size(const ls_ws *w) { return w->n; }
static int64_t ls_ws_drain(ls_ws *w, LS_WK *k, LS_WT *v, LS_WK *tk, LS_WT *tv) {
  ls_ksort(w->touched, tk, w->nt);
  int64_t o = 0;
  for (int64_t t = 0; t < w->nt; t++) {
    const int64_t b = (int64_t)w->touched[t], s = o;
    for (int64_t e = w->head[b]; e >= 0; e = w->next[e]) { k[o] = w->k[e]; v[o] = w->v[e]; o++; }
    w->head[b] = -1;
    ls_kvsort(k + s, v + s, tk, tv, o - s);  /* keys are unique here: any sort will do */
  }
  w->n = 0; w->nt = 0;
  return o;
}
static void ls_ws_free(ls_ws *w) { free(w->k); free(w->v); free(w->next); free(w->touched); free(w->head); }
"""


BUILTIN = {"dense": DENSE, "hash": HASH, "coord": COORD, "bucket": BUCKET}


def policy_source(policy: str) -> str:
    """The C text of accumulation policy ``policy`` (built in, or registered with C source).

    A policy is C text with a fixed interface:

        typedef struct {...} ls_ws;
        int     ls_ws_init(ls_ws *w, int64_t extent, int64_t cap);   // nonzero: out of memory
        int     ls_ws_insert(ls_ws *w, int64_t key, LS_WT val);      // nonzero: now full
        int64_t ls_ws_size(const ls_ws *w);                           // entries a drain may write
        int64_t ls_ws_drain(ls_ws *w, LS_WK *k, LS_WT *v, LS_WK *tk, LS_WT *tv);
                // writes its entries sorted by key, duplicates combined in insertion order, into
                // k/v (tk/tv: scratch of the same size), empties itself, returns how many
        void    ls_ws_free(ls_ws *w);                                  // also after a failed init

    A policy may also have a second insert, ``ls_ws_insert_b`` (same contract), with
    ``ls_ws_use(w, b)`` telling it which of the two the kernel calls, and ``#define LS_WS_INSERT_B``.
    The reduction's identity is ``LS_WIDENT``; ``LS_WT`` is the value type, ``LS_WK`` the key type
    of drained entries, and ``LS_WCOMB(dst, src)`` folds ``src`` into ``dst`` (the statement's
    reduction); ``ls_kvsort`` (a stable sort of key/value pairs) and ``ls_ksort`` are there to use.
    """
    if policy in BUILTIN:
        return BUILTIN[policy]
    p = _REGISTRY.get(policy)
    src = p.source("c") if p is not None else None
    if src is None:
        raise KeyError(f"no C source for workspace policy {policy!r}")
    return src


def prelude(policy: str, ctype: str, ktype: str, reduce: str, dtype, identity: str, comb_count=None) -> str:
    """The C text a kernel with this workspace needs before ``ls_kernel`` (``identity``: the
    reduction's identity as a C literal). ``comb_count``: the ``ls.opcount`` counter a
    combination adds to, in an instrumented build whose combinations are the statement's own
    operations (a union fission's additions; compiler/lower/counting.py)."""
    comb = C.reduce_step(reduce, "(d_)", "(s_)", dtype).rstrip(";")
    tally = f" LS_COUNT({int(comb_count)}, 1);" if comb_count is not None else ""
    bits = 32 if ktype == "int32_t" else 64
    return "\n".join([f"#define LS_WT {ctype}", f"#define LS_WK {ktype}", f"#define LS_WK_BITS {bits}",
                      "#if defined(__AVX2__) || defined(__AVX512F__)\n#include <immintrin.h>\n#endif",
                      f"#define LS_WCOMB(d_, s_) do {{ {comb};{tally} }} while (0)",
                      f"#define LS_WIDENT (({ctype}){identity})",
                      SORT, policy_source(policy), ISM])
