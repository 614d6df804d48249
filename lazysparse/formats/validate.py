"""Structural validation of sparse ``Storage`` (the contract in ``storage.py``), O(nnz) and vectorised.

Every defect becomes a ``ValueError`` (or ``TypeError`` for a non-array where an array belongs) whose
message names the operation, the format, the offending array and the defect, e.g.
``asarray: invalid CSR input: indices[17]=5000 is out of range for 4000 columns``. Malformed input
(wrong lengths, negative offsets, 2-d index arrays, ...) is reported, never indexed out of bounds.
"""
from __future__ import annotations

import numpy as np

from lazysparse.formats.level_kinds import NumPyBuilder
from lazysparse.formats.storage import INDEX_DTYPES, VALUE_DTYPES, Storage

__all__ = ["validate", "order_defect"]

_INT64_MAX = 2**63 - 1  # kernels take extents as int64_t


class _Namer:
    """User-facing names of a storage's arrays: scipy's names for CSR/CSC/COO, generic otherwise."""

    def __init__(self, st: Storage, label):
        fmt = st.format
        self.st = st
        self.label = label or (fmt.name.upper() if getattr(fmt, "name", None) else "sparse")

    _SCIPY_NAMES = ("CSR", "CSC", "BSR", "GCXS")  # containers with indptr/indices/data

    def pos(self, l):
        return "indptr" if self.label in self._SCIPY_NAMES else f"pos[{l}]"

    def crd(self, l):
        if self.label in self._SCIPY_NAMES:
            return "indices"
        if self.label == "COO":
            return f"coords[{self.st.format.order[l]}]"
        return f"crd[{l}]"

    def vals(self):
        return "data" if self.label in self._SCIPY_NAMES + ("COO",) else "vals"

    def extent(self, l):
        mode = self.st.format.order[l]
        n = self.st.shape[mode]
        if len(self.st.shape) == 2:
            # BSR is checked as its grid of blocks, n-d GCXS as its 2-d (compressed, rest) view
            kind = {"BSR": "block ", "GCXS": "flattened "}.get(self.label, "")
            return f"{n} {kind}{('rows', 'columns')[mode]}"
        return f"axis {mode} of size {n}"

    def parent(self, l, k):
        """How to call parent position ``k`` of level ``l``."""
        if l == 1 and self.st.format.levels[0].is_dense and len(self.st.shape) == 2:
            return f"{('row', 'column')[self.st.format.order[0]]} {k}"
        return f"parent position {k}"


def validate(st: Storage, name: str = "validate", *, order: bool = True, label: str = None) -> None:
    """Check that ``st`` is well-formed storage for its format; raise ``ValueError`` naming the defect.

    ``order=False`` skips the ordered/unique checks (used on user input that will be canonicalized).

    >>> import numpy as np
    >>> from lazysparse.formats import Storage, resolve_format
    >>> st = Storage((2, 3), resolve_format("csr", 2), [None, np.array([0, 1, 2])],
    ...              [None, np.array([0, 7])], np.ones(2))
    >>> validate(st, "asarray")
    Traceback (most recent call last):
    ...
    ValueError: asarray: invalid CSR input: indices[1]=7 is out of range for 3 columns
    """
    nm = _Namer(st, label)

    def fail(msg):
        raise ValueError(f"{name}: invalid {nm.label} input: {msg}")

    fmt = st.format
    nd = fmt.ndim
    if len(st.shape) != nd:
        fail(f"shape {st.shape} has {len(st.shape)} dimensions but the format has {nd} levels")
    if any(s < 0 for s in st.shape):
        fail(f"shape {st.shape} has a negative dimension")
    if any(s > _INT64_MAX for s in st.shape):
        fail(f"shape {st.shape} has a dimension beyond int64 (at most {_INT64_MAX})")
    vals = st.vals
    if not isinstance(vals, np.ndarray):
        raise TypeError(f"{name}: invalid {nm.label} input: {nm.vals()} must be a NumPy array, "
                        f"got {type(vals).__name__}")
    if vals.dtype not in VALUE_DTYPES:
        fail(f"{nm.vals()} has dtype {vals.dtype}; values must be one of "
             f"{', '.join(str(d) for d in VALUE_DTYPES)}")
    if fmt.is_dense:
        if vals.shape != st.shape:
            fail(f"dense values have shape {vals.shape} but the array has shape {st.shape}")
        return
    if len(st.pos) != nd or len(st.crd) != nd:
        fail(f"expected {nd} pos and crd entries (one per level), got {len(st.pos)} and {len(st.crd)}")

    idx_dtypes = set()
    for l, lv in enumerate(fmt.levels):
        need = lv.level_kind.arrays
        for kind in ("pos", "crd"):
            a = (st.pos if kind == "pos" else st.crd)[l]
            an = nm.pos(l) if kind == "pos" else nm.crd(l)
            if kind not in need:
                continue  # dense levels keep no arrays; whatever sits there is never read
            if a is None:
                fail(f"{an} is missing (level {l} is {lv.kind})")
            if not isinstance(a, np.ndarray):
                raise TypeError(f"{name}: invalid {nm.label} input: {an} must be a NumPy array, "
                                f"got {type(a).__name__}")
            if a.dtype not in INDEX_DTYPES:
                fail(f"{an} has dtype {a.dtype}; index arrays must be int32 or int64")
            if a.ndim != 1:
                fail(f"{an} must be a 1-d array, got {a.ndim}-d with shape {a.shape}")
            if not a.flags.c_contiguous:
                fail(f"{an} must be contiguous (got strides {a.strides})")
            if not a.flags.aligned:
                fail(f"{an} is not aligned to its {a.itemsize}-byte elements")
            idx_dtypes.add(a.dtype)
    if len(idx_dtypes) > 1:
        fail(f"index arrays mix dtypes {sorted(str(d) for d in idx_dtypes)}; all must share one")

    count = 1  # positions of the parent level
    for l, lv in enumerate(fmt.levels):
        n = st.level_size(l)
        if lv.is_dense:
            count = lv.level_kind.size(NumPyBuilder(extent=n), count)
            continue
        crd = st.crd[l]
        cn = nm.crd(l)
        if lv.has_pos:
            pos, pn = st.pos[l], nm.pos(l)
            if len(pos) != count + 1:
                fail(f"{pn} has length {len(pos)} but expected {count + 1} (one more than the "
                     f"{count} parent positions)")
            if pos[0] != 0:
                fail(f"{pn}[0]={pos[0]} but must be 0")
            bad = np.flatnonzero(pos[1:] < pos[:-1])
            if bad.size:
                k = int(bad[0]) + 1
                fail(f"{pn} is decreasing: {pn}[{k}]={pos[k]} < {pn}[{k - 1}]={pos[k - 1]}")
            if int(pos[-1]) != len(crd):
                fail(f"{pn}[-1]={pos[-1]} does not match len({cn})={len(crd)}")
        elif len(crd) != count:
            fail(f"{cn} has length {len(crd)} but expected {count} (one per parent position)")
        bad = np.flatnonzero((crd < 0) | (crd >= n))
        if bad.size:
            k = int(bad[0])
            fail(f"{cn}[{k}]={crd[k]} is out of range for {nm.extent(l)}")
        count = len(crd)
    if vals.ndim != 1:
        fail(f"{nm.vals()} must be a 1-d array, got shape {vals.shape}")
    if not (vals.flags.c_contiguous and vals.flags.aligned):
        fail(f"{nm.vals()} must be contiguous and aligned (got strides {vals.strides})")
    if len(vals) != count:
        fail(f"{nm.vals()} has length {len(vals)} but expected {count} (one value per stored entry)")
    if order:
        msg = order_defect(st, label=nm.label)
        if msg:
            fail(msg)


def order_defect(st: Storage, *, label: str = None):
    """Describe the first violation of the levels' ordered/unique properties, or return None.

    Assumes the structure already passed ``validate(..., order=False)``. Consecutive positions are
    compared within a *group*: the same parent segment for a compressed level, and for a singleton
    level additionally the same coordinate at the level above (so COO's levels together demand
    lexicographic order and distinct tuples).
    """
    nm = _Namer(st, label)
    fmt = st.format
    same = None  # same[p-1]: positions p-1 and p of the current level are in one group
    for l, lv in enumerate(fmt.levels):
        if lv.is_dense:
            same = None
            continue
        crd = st.crd[l]
        m = len(crd)
        if lv.has_pos:
            is_start = np.zeros(m + 1, dtype=bool)
            is_start[st.pos[l][:-1]] = True
            same = ~is_start[1:m]
        elif same is None:
            same = np.zeros(max(m - 1, 0), dtype=bool)  # singleton under a dense level: one child each
        else:
            prev = st.crd[l - 1]
            same = same & (prev[1:] == prev[:-1])
        if m < 2 or not (lv.ordered or lv.unique):
            continue
        a, b = crd[:-1], crd[1:]
        if lv.ordered:
            bad = np.flatnonzero(same & ((b <= a) if lv.unique else (b < a)))
            if bad.size:
                return _describe(st, nm, l, int(bad[0]) + 1)
        else:
            grp = np.concatenate(([0], np.cumsum(~same)))
            o = np.lexsort((crd, grp))
            dup = np.flatnonzero((grp[o][1:] == grp[o][:-1]) & (crd[o][1:] == crd[o][:-1]))
            if dup.size:
                p, q = sorted((int(o[dup[0]]), int(o[dup[0] + 1])))
                return (f"duplicate coordinate {crd[q]} in {nm.crd(l)}[{p}] and {nm.crd(l)}[{q}] "
                        f"(level {l} is unique)")
    return None


def _describe(st, nm, l, p):
    fmt = st.format
    crd = st.crd[l]
    if fmt.levels[l].follows_parent or (l + 1 < fmt.ndim and fmt.levels[l + 1].follows_parent):
        # a COO-like chain: report whole coordinate tuples (in mode order) of entries p-1 and p
        first = l
        while fmt.levels[first].follows_parent:
            first -= 1
        last = l
        while last + 1 < fmt.ndim and fmt.levels[last + 1].follows_parent:
            last += 1
        tup = lambda q: tuple(int(st.crd[k][q]) for k in range(first, last + 1))
        what = "duplicate coordinates" if tup(p) == tup(p - 1) else "coordinates out of lexicographic order"
        return (f"{what}: entry {p} {tup(p)} follows entry {p - 1} {tup(p - 1)}; "
                f"sorted, duplicate-free coordinates are required")
    parent = int(np.searchsorted(st.pos[l], p, side="right")) - 1
    dup = crd[p] == crd[p - 1]
    what = "duplicate" if dup else "unsorted"
    need = "strictly increasing" if fmt.levels[l].unique else "non-decreasing"
    return (f"{what} {nm.crd(l)} in {nm.parent(l, parent)}: {nm.crd(l)}[{p}]={crd[p]} follows "
            f"{nm.crd(l)}[{p - 1}]={crd[p - 1]} ({need} within each segment is required)")
