"""The order in which a kernel visits the rows of a CSR-like operand (``order_of``), worked out once
per storage. A loop over a short row ends where the branch predictor cannot tell: on graphs whose
consecutive rows differ in length, each row pays a mispredicted loop exit of about 20 cycles,
which is most of a SpMV row of five entries. Visiting the rows of each block of ``BLOCK`` rows in
order of length makes consecutive trip counts equal, so the exits are predicted; the block keeps
the result's and the dense operands' rows near each other. Each row is still computed the same
way, so results do not change, only the order the rows are written in. The order pays where row lengths are hard to predict and rows are short: the conditional entropy
of a row's length given the previous row's (``surprise``, bits a row) over the mean row length,
at least ``MIN_SURPRISE`` bits per stored entry, on at least ``MIN_ROWS`` rows (fewer rows than
that, and the predictor learns the whole sequence when a kernel is called again). The rule and its
constants come from SpMV over the corpus (docs/design.md, "Row order")."""
from __future__ import annotations

import weakref

import numpy as np

BLOCK = 512          # rows sorted by length within blocks of this many (4096: 5-10% slower)
MIN_ROWS = 6144      # NSR8K (5,387 rows, 3.2 bits a row) learnt: 24 us in order, 32 sorted
MIN_SURPRISE = 0.24  # bits of surprise per stored entry: wiki-Vote 0.245 gains, fe_4elt2 0.22 loses
CAP = 64             # lengths from here on count as one (a mispredict is small beside the row)


def surprise(lengths) -> float:
    """The conditional entropy of a row's length given the previous row's, in bits (lengths
    over ``CAP`` counted as ``CAP``): what a predictor that knows the last trip count still
    has to guess, per row."""
    n = lengths.shape[0]
    if n < 2:
        return 0.0
    q = np.minimum(lengths, CAP).astype(np.int64)
    pairs = np.bincount(q[:-1] * (CAP + 1) + q[1:], minlength=(CAP + 1) ** 2).astype(np.float64)
    prev = pairs.reshape(CAP + 1, CAP + 1).sum(axis=1)

    def entropy(c):
        c = c[c > 0] / (n - 1)
        return float(-(c * np.log2(c)).sum())
    return max(0.0, entropy(pairs) - entropy(prev))


def pays(lengths) -> bool:
    """Whether visiting rows by length pays for segment lengths ``lengths`` (``surprise``)."""
    n = lengths.shape[0]
    if n < MIN_ROWS:
        return False
    mean = float(lengths.sum()) / n
    return mean > 0 and surprise(lengths) / mean >= MIN_SURPRISE


def by_length(lengths, index_dtype) -> np.ndarray:
    """The rows of each block of ``BLOCK`` sorted by length (stable), as ``index_dtype``."""
    n = lengths.shape[0]
    blocks = -(-n // BLOCK)
    # (16-bit keys up to 504 blocks, 258k rows: NumPy's stable sort of those is a radix sort,
    # 0.3 ms for 36k rows against 0.8 for 64-bit keys, which it sorts by timsort)
    dt = np.int16 if blocks * (CAP + 1) < (1 << 15) else np.int32
    key = np.repeat(np.arange(0, blocks * (CAP + 1), CAP + 1, dtype=dt), BLOCK)[:n]
    key += np.minimum(lengths, CAP).astype(dt)
    return np.argsort(key, kind="stable").astype(index_dtype)


_BY_POS = {}  # id(position array) -> (a weak reference to it, its order or None)
_MAX_POS = 256


def order_of(st, level: int):
    """The row order of compressed level ``level`` of storage ``st`` (its segments, the rows
    of a CSR matrix), or None for the stored order; worked out once and kept on the storage, and
    by its position array, which two wraps of one scipy matrix share (a loop that wraps its
    matrix each step would otherwise sort its rows each step)."""
    memo = st.memo()
    key = ("order", level)
    if key in memo:
        return memo[key]
    pos = st.pos[level]
    order = None
    if pos is not None and pos.shape[0] > MIN_ROWS:
        hit = _BY_POS.get(id(pos))
        if hit is not None and hit[0]() is pos:
            order = hit[1]
        else:
            lengths = np.diff(pos)
            if pays(lengths):
                order = by_length(lengths, st.index_dtype)
            if len(_BY_POS) >= _MAX_POS:
                _BY_POS.clear()
            _BY_POS[id(pos)] = (weakref.ref(pos), order)
    memo[key] = order
    return order
