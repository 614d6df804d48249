"""Affine subscripts (``I[h+r, w+q]``, ``I[2*h+r]``, ``J[i, j+2]``) as window operands: an operand
read at compound subscripts is replaced by its *window*, an array with one axis per index of those
subscripts (``W[h, r, w, q] = I[h+r, w+q]``) read at plain subscripts, so the statement the
compiler plans is ordinary index notation and every pass (fusion, formats, workspaces, schedules,
threads) applies unchanged (docs/design.md, "Affine subscripts"). ``infer_extents`` sizes the
indices and ``window`` builds the window of a dense or sparse operand."""
from __future__ import annotations

import math

import numpy as np

from lazysparse.errors import shown
from lazysparse.ir.notation import Affine


def describe(name, subs):
    text = ",".join(s.text if isinstance(s, Affine) else str(s) for s in subs)
    return f"{name}[{text}]"


def check_form(sub: Affine, name, subs):
    """Raise ``ValueError`` for an affine subscript lazysparse cannot read."""
    where = f"{shown(sub.text)} in {describe(name, subs)}"
    if sub.problem:
        raise ValueError(f"expr: subscript {where}: {sub.problem}; subscripts are sums of "
                         "index names times non-negative integers plus a non-negative integer")
    neg = [v for v, c in sub.terms if c < 0]
    if neg:
        raise ValueError(f"expr: subscript {where} subtracts index {shown(neg[0])}; coefficients "
                         "must be positive (affine subscripts have no subtraction)")
    if sub.const < 0:
        raise ValueError(f"expr: subscript {where} has the negative offset {sub.const}: it would "
                         "read before the start of the axis; pad the operand instead")


def _reach(sub: Affine, extent):
    """The largest coordinate ``sub`` reads with the indices' extents (None when some extent
    is 0: the subscript is never evaluated)."""
    if any(extent[v] == 0 for v, _ in sub.terms):
        return None
    return sub.const + sum(c * (extent[v] - 1) for v, c in sub.terms)


def infer_extents(uses, extent, where):
    """Give every index of the affine subscripts in ``uses`` (``(ref name, subs, dim, Affine,
    axis size)``) an extent, in place in ``extent`` (index -> extent; ``where``: index -> text
    naming the operand that fixed it), then check that no subscript reads past its axis.

    Extents follow the rule of "Compiler Support for Sparse Tensor Convolutions": an index that
    appears alone in some subscript takes that axis's extent; one that appears only in compound
    subscripts takes the largest extent that keeps every subscript it is the one unknown index of
    inside its axis ("valid" convolution: ``I[h+r]`` with ``|I| = N``, ``|r| = K`` gives
    ``|h| = N-K+1``). Subscripts never read outside the operand: padding is the caller's (a padded
    operand), as in the paper.
    """
    unknown = {v for *_, sub, _n in uses for v, _ in sub.terms if v not in extent}
    while unknown:
        found = {}
        for name, subs, _d, sub, n in uses:
            free = [(v, c) for v, c in sub.terms if v not in extent]
            if len(free) != 1:
                continue
            (v, c), = free
            # the others at their largest (an empty one counts as 1: it reads nothing, and must
            # not widen this one)
            used = sub.const + sum(k * max(extent[u] - 1, 0) for u, k in sub.terms if u != v)
            size = max((n - 1 - used) // c + 1, 0)
            if v not in found or size < found[v][0]:
                found[v] = (size, f"{describe(name, subs)} (shape axis of size {n})")
        if not found:
            v = sorted(unknown)[0]
            seen = next(describe(name, subs) for name, subs, _d, sub, _n in uses
                        if any(u == v for u, _ in sub.terms))
            raise ValueError(f"expr: cannot infer the extent of index {shown(v)} in {seen}: it appears "
                             "only in compound subscripts together with other indices of unknown "
                             "extent; give one of them a plain subscript in another operand "
                             "(e.g. a filter F[r])")
        for v, (size, text) in found.items():
            extent[v] = size
            where[v] = text
            unknown.discard(v)
    for name, subs, _d, sub, n in uses:
        reach = _reach(sub, extent)
        if reach is not None and reach >= n:
            bounds = ", ".join(f"{v} < {extent[v]}" for v, _ in sub.terms)
            raise ValueError(f"expr: subscript {shown(sub.text)} of {describe(name, subs)} reaches {reach} "
                             f"with {bounds}, past its axis of size {n}")


def axes_of(subs, order):
    """The window's axes: the indices of ``subs``, each once, in the statement's order (its
    output indices first), so that a sparse window's levels lead with what the loops lead with."""
    names = set()
    for s in subs:
        if isinstance(s, Affine):
            names.update(v for v, _ in s.terms)
        elif isinstance(s, str):
            names.add(s)
    return tuple(v for v in order if v in names)


def _forms(subs):
    """Each subscript as ``(terms, const)``; a plain index is ``(((v, 1),), 0)``, a constant
    ``((), c)``."""
    out = []
    for s in subs:
        if isinstance(s, Affine):
            out.append((s.terms, s.const))
        elif isinstance(s, str):
            out.append((((s, 1),), 0))
        else:
            out.append(((), int(s)))
    return tuple(out)


def window(array, name, subs, axes, extent, dense_result=None):
    """The window operand (an ``Array``) of ``array`` read at ``subs`` (user names), with axes
    ``axes`` of extents ``extent[v]``. A lazy ``array`` is materialized first (the window needs
    its values); the window of a concrete sparse operand is kept with its storage for the next
    expression that reads it the same way.

    ``dense_result``: whether the expression's result is asked to be dense (True), sparse
    (False) or left to the planner (None: estimated here). A sparse window is stored taps first
    for a dense result (each tap adds a shifted copy of the operand: no sort to build, and the
    kernel's inner loop runs along a stored row), output indices first otherwise (the result's
    entries come out in order and are appended)."""
    st = array.storage
    shape = tuple(int(extent[v]) for v in axes)
    # an index of extent 1 is always 0: its coefficient is moot (and may not fit in 64 bits;
    # every other coefficient and intercept is below its axis size, infer_extents checked)
    forms = tuple((tuple((v, c if extent[v] > 1 else 1) for v, c in terms), b)
                  for terms, b in _forms(subs))
    if 0 in shape:
        from lazysparse.formats.storage import Storage
        if st.format.is_dense:
            return _labelled(Storage.from_dense(np.zeros(shape, dtype=st.dtype)), name, subs, axes)
        return _labelled(_store(shape, tuple(range(len(axes))), [np.zeros(0, np.int64) for _ in axes],
                                st.vals[:0]), name, subs, axes)
    if st.format.is_dense:
        return _labelled(_dense_window(st, forms, axes, shape), name, subs, axes)
    copies = _copies(forms, axes, shape)
    if dense_result is None:
        size = math.prod(st.shape)
        density = st.nnz / size if size else 0.0
        dense_result = 1.0 - (1.0 - density) ** copies > 0.5  # compiler/plan/kernel.py's projection rule
    key = ("window", forms, axes, shape, bool(dense_result))
    stats = st.stats if st.stats is not None else {}
    hit = stats.get("window")
    if hit is not None and hit[0] == key:
        return _labelled(hit[1], name, subs, axes)
    w = _sparse_window(st, forms, axes, shape, name, subs, copies, bool(dense_result))
    if st.stats is None:
        st.stats = stats
    stats["window"] = (key, w)  # the last window only: a window can be K times its operand
    return _labelled(w, name, subs, axes)


def _labelled(st, name, subs, axes):
    """An Array over window storage ``st`` that ``explain`` names (its statement reads it at
    plain subscripts, which alone would not say what it is)."""
    from lazysparse.api.base import ArrayBase as Array
    st.memo()["window_of"] = f"{describe(name, subs)} as W[{','.join(axes)}]"
    return Array._from_storage(st)


def _copies(forms, axes, shape):
    """How many window entries one stored entry makes at most: the product, over the compound
    subscripts, of the extents of all their indices but the widest (the enumerated ones)."""
    copies = 1
    for terms, _b in forms:
        free = sorted(shape[axes.index(v)] for v, _c in terms)
        copies *= math.prod(free[:-1])
    return copies


def _dense_window(st, forms, axes, shape):
    """A dense operand's window is a strided view of its buffer (no copy): an index's stride is the
    sum over the dimensions it appears in of coefficient times that dimension's stride, and the
    intercepts move the start.
    """
    from lazysparse.formats.storage import Storage
    base = st.vals
    start = tuple(b for _t, b in forms)
    strides = [0] * len(axes)
    pos = {v: k for k, v in enumerate(axes)}
    for (terms, _b), s in zip(forms, base.strides):
        for v, c in terms:
            strides[pos[v]] += c * s
    view = np.lib.stride_tricks.as_strided(base[tuple(slice(b, None) for b in start)], shape,
                                           tuple(strides), writeable=False)
    return Storage.from_dense(view)


def _sparse_window(st, forms, axes, shape, name, subs, copies, taps_first):
    """A sparse operand's window holds each stored entry once for every assignment of the subscript's
    indices that reads it: entry ``x`` of ``I[h+r]`` appears at ``(x-r, r)`` for the ``r`` that keep
    ``x-r`` in range. Its levels are all compressed: outermost the indices the statement puts first
    when the result is sparse, so the kernel's loops visit only the non-empty windows (the non-empty
    subsections of "Compiler Support for Sparse Tensor Convolutions") and append the result in order;
    the taps first when it is dense (each tap adds a shifted copy). Work and storage are bounded by
    the stored entries times the window size, never by the operand's extent.
    """
    from lazysparse.api.creation import _coords
    from lazysparse.runtime import memory
    coords = _coords(st)
    entries = np.arange(st.vals.shape[0], dtype=np.int64)
    cols = {}
    lim = memory.limit()  # the guard runs before anything that size is allocated
    need = len(entries) * copies * (8 * (len(axes) + 3) + st.vals.itemsize)
    if lim is not None and need > lim:
        raise MemoryError(f"expr: the window of {describe(name, subs)} would hold up to "
                          f"{len(entries) * copies:,} entries ({need / 2**20:.1f} MiB), over the memory "
                          f"limit of {lim / 2**20:.1f} MiB (LAZYSPARSE_MEMORY_LIMIT)")
    enumerated, resolved = [], {}  # (the order in which the entries come out, below)
    for d, (terms, b) in enumerate(forms):
        rem = coords[d][entries].astype(np.int64)
        if b:
            rem -= b
        for v, c in terms:
            if v in cols:
                rem -= c * cols[v]
        free = [(v, c) for v, c in terms if v not in cols]
        if not free:
            keep = rem == 0
            entries, cols = entries[keep], {v: col[keep] for v, col in cols.items()}
            continue
        # every free index but the widest is enumerated; the coordinate resolves the widest
        ext = {v: shape[axes.index(v)] for v, _c in free}
        last = max(range(len(free)), key=lambda k: (ext[free[k][0]], k))
        u, cu = free[last]
        others = [f for k, f in enumerate(free) if k != last]
        if others:
            # one copy of the entries per assignment, assignment-major: each copy keeps the
            # storage's order
            grid = np.indices([ext[v] for v, _c in others]).reshape(len(others), -1)
            m, n = len(entries), grid.shape[1]
            entries = np.tile(entries, n)
            rem = np.tile(rem, n)
            cols = {v: np.tile(col, n) for v, col in cols.items()}
            for (v, c), g in zip(others, grid):
                val = np.repeat(g.astype(np.int64), m)
                rem -= c * val
                cols[v] = val
            enumerated[:0] = [v for v, _c in others]  # a later dimension's copies are outer
        keep = (rem >= 0) & (rem < cu * ext[u])
        if cu != 1:
            keep &= rem % cu == 0
        entries, rem = entries[keep], rem[keep]
        cols = {v: col[keep] for v, col in cols.items()}
        cols[u] = rem // cu if cu != 1 else rem
        resolved[d] = u
    # the order the entries came out in: the enumerated indices (the last dimension's outermost),
    # then the resolved ones in the storage's order of their dimensions, which each copy keeps
    natural = enumerated + [resolved[m] for m in st.format.order if m in resolved]
    store = tuple(natural) if taps_first else tuple(axes)
    out = [cols[v] if len(entries) else np.zeros(0, np.int64) for v in store]
    sizes = tuple(shape[axes.index(v)] for v in store)
    vals = st.vals[entries]
    if len(entries) > 1:
        out, vals = _sorted_unique(out, vals, sizes)
    return _store(shape, tuple(axes.index(v) for v in store), out, vals)


def _store(shape, order, coords, vals):
    """All-compressed storage, modes stored in ``order``, of coordinates given in that order
    and already sorted in it (creation._from_coords, told not to sort again)."""
    from lazysparse.api.creation import _from_coords
    from lazysparse.formats.format import Format
    mode = [None] * len(order)
    for level, m in enumerate(order):
        mode[m] = coords[level]
    return _from_coords(shape, Format(["compressed"] * len(shape), order=order), mode, vals, presorted=True)


def _sorted_unique(cols, vals, shape):
    """``cols`` (one coordinate array per axis) in lexicographic order, duplicates summed (a
    COO operand may store a coordinate twice; the window then holds it twice too)."""
    if math.prod(shape) < 2**62:
        key = cols[0].copy()
        for c, n in zip(cols[1:], shape[1:]):
            key *= n
            key += c
        if not np.all(key[1:] > key[:-1]):
            order = np.argsort(key, kind="stable")  # timsort: merges the assignment-major runs
            cols, vals, key = [c[order] for c in cols], vals[order], key[order]
        dup = key[1:] == key[:-1]
    else:
        order = np.lexsort(cols[::-1])
        cols, vals = [c[order] for c in cols], vals[order]
        dup = np.logical_and.reduce([c[1:] == c[:-1] for c in cols])
    if dup.any():
        starts = np.flatnonzero(np.concatenate(([True], ~dup)))
        vals = np.add.reduceat(vals, starts).astype(vals.dtype, copy=False)
        cols = [c[starts] for c in cols]
    return cols, vals
