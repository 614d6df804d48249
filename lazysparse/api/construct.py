"""scipy.sparse's constructors and structural filters: ``ls.diags``, ``ls.kron``, ``ls.triu``,
``ls.tril`` (scipy's names and arguments).

``kron`` is the lazy outer product ``einsum("ij,kl->ikjl")`` computed by the compiler, then
renumbered (a reshape) into ``(n*p, m*q)``. ``diags`` builds its result from the diagonals, as
``ls.eye`` does. ``triu``/``tril`` keep the stored entries on one side of a diagonal (a selection,
eager like indexing; a lazy input is computed first).
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from lazysparse.api.creation import _fits32, checked_shape
from lazysparse.errors import shown
from lazysparse.formats import Format, Level, resolve_format
from lazysparse.formats.storage import Storage


def diags(diagonals, offsets=0, shape=None, format="csr", dtype=None):
    """A 2-d array from its diagonals (scipy's ``diags_array``): ``diagonals[i]`` on diagonal
    ``offsets[i]``; a scalar is repeated along its diagonal when ``shape`` is given. Zero
    values are not stored (scipy's conversions from DIA drop them too).

    >>> import lazysparse as ls
    >>> ls.diags([[1, 2, 3], [4, 5]], [0, 1]).todense().tolist()
    [[1, 4, 0], [0, 2, 5], [0, 0, 3]]
    """
    from lazysparse.api.base import ArrayBase as Array
    from lazysparse.api.creation import _canonical, _from_coords, _result_format
    name = "diags"
    if np.isscalar(offsets) or isinstance(offsets, numbers.Integral):
        offsets = [offsets]
        if isinstance(diagonals, numbers.Number) or np.ndim(diagonals) == 1:
            diagonals = [diagonals]
    try:
        offsets = [operator.index(k) for k in offsets]
    except TypeError:
        raise TypeError(f"{name}: offsets must be integers, got {shown(offsets)}") from None
    diagonals = [np.asarray(d) for d in diagonals]
    if len(diagonals) != len(offsets):
        raise ValueError(f"{name}: {len(diagonals)} diagonal(s) but {len(offsets)} offset(s)")
    if len(set(offsets)) != len(offsets):
        raise ValueError(f"{name}: repeated diagonal offsets in {offsets}")
    if any(d.ndim > 1 for d in diagonals):
        raise ValueError(f"{name}: each diagonal must be a scalar or a 1-d array")
    if shape is None:
        if not diagonals or diagonals[0].ndim == 0:
            raise ValueError(f"{name}: give shape= when the first diagonal is a scalar (or there is none)")
        m = len(diagonals[0]) + abs(offsets[0])
        shape = (m, m)
    n, m = (int(s) for s in shape)
    if n < 0 or m < 0:
        raise ValueError(f"{name}: negative shape {tuple(shape)}")
    checked_shape((n, m), name, f"shape {(n, m)} was asked for")
    dt = np.dtype(dtype) if dtype is not None else (
        np.result_type(*diagonals) if diagonals else np.dtype(np.float64))
    flat = []
    for d, k in zip(diagonals, offsets):
        length = max(0, min(n + min(k, 0), m - max(k, 0)))
        if d.ndim == 0:
            d = np.full(length, d, dtype=dt)
        elif len(d) != length:
            raise ValueError(f"{name}: diagonal at offset {k} has length {len(d)}; the {n} x {m} array's "
                             f"has {length}")
        flat.append(d.astype(dt, copy=False))
    fmt = _result_format(format, 2, name)
    by_cols = fmt.order == (1, 0)
    if (m if by_cols else n) * len(flat) > 4 * sum(map(len, flat)) + (1 << 20):
        # short diagonals (offsets near the corners): the table of _diagonal_entries would be
        # mostly empty, so the entries are sorted instead
        i = [np.arange(len(d), dtype=np.int64) + max(-k, 0) for d, k in zip(flat, offsets)]
        coords, v = _canonical([np.concatenate(i), np.concatenate([r + k for r, k in zip(i, offsets)])],
                               np.concatenate(flat))
        keep = v != 0
        idt = np.int32 if _fits32(int(keep.sum()), n, m) else np.int64
        return Array._from_storage(_from_coords((n, m), fmt, [c[keep].astype(idt) for c in coords], v[keep]))
    counts, crd, v = _diagonal_entries(flat, offsets, n, m, by_cols, dt)
    idt = np.int32 if _fits32(len(v), n, m) else np.int64
    if fmt.ndim == 2 and fmt.levels[0].is_dense and fmt.levels[1].unique_segments:
        # CSR/CSC: the entries are in storage order, positions are the counts summed
        pos = np.zeros(len(counts) + 1, dtype=idt)
        np.cumsum(counts, out=pos[1:])
        return Array._from_storage(Storage((n, m), fmt, [None, pos], [None, crd.astype(idt)], v, idt))
    lead = np.repeat(np.arange(len(counts), dtype=idt), counts)
    coords = [crd.astype(idt), lead] if by_cols else [lead, crd.astype(idt)]
    return Array._from_storage(_from_coords((n, m), fmt, coords, v, presorted=by_cols))


def _diagonal_entries(flat, offsets, n, m, by_cols, dt):
    """Entries per row (per column with ``by_cols``), the other coordinate and the value of the
    nonzero entries of the diagonals ``flat`` at ``offsets``, in row-major (column-major) order,
    without a sort: each row meets the diagonals in the order of their offsets, so a table with
    a row per row of the array and a column per diagonal (offsets ascending) holds the entries
    in storage order, and its slots outside the array stay 0 and drop with the zero values
    (scipy's DIA-to-CSR walk, in NumPy). A sort of the concatenated diagonals took 5x scipy's
    time on three diagonals of 10^6."""
    lead = m if by_cols else n
    # (along columns j the rows i = j - k ascend for the offsets descending)
    o = np.argsort(offsets, kind="stable")[::-1] if by_cols else np.argsort(offsets, kind="stable")
    ks = np.asarray(offsets, dtype=np.int64)[o]
    table = np.zeros((lead, len(ks)), dtype=dt)
    for c, q in enumerate(o):
        k = -ks[c] if by_cols else ks[c]
        first = max(-k, 0)  # the first row (column) the diagonal meets
        table[first:first + len(flat[q]), c] = flat[q]
    keep = table != 0
    counts = np.zeros(lead, dtype=np.int64)
    for c in range(len(ks)):  # (a sum over the short axis is 5x slower in one call)
        counts += keep[:, c]
    lines = np.arange(lead, dtype=np.int64)[:, None]
    crd = (lines - ks[None, :] if by_cols else lines + ks[None, :])[keep]
    return counts, crd, table[keep]


def kron(a, b, format=None):
    """The Kronecker product of two 2-d arrays (scipy's ``kron``): its products are computed by
    the compiler (``einsum("ij,kl->ikjl")``), then renumbered into ``(n*p, m*q)`` and stored in
    ``format`` (default: the first sparse operand's, else dense); CSR and CSC results are laid
    out by ``_kron_compressed`` without renumbering."""
    from lazysparse.api.base import ArrayBase as Array
    from lazysparse.api.operations import _as_array, einsum
    name = "kron"
    a, b = _as_array(a, name), _as_array(b, name)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"{name}: needs two 2-d arrays, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    (n, m), (p, q) = a.shape, b.shape
    if format is None:
        sparse = [x.format for x in (a, b) if not x.format.is_dense]
        format = sparse[0] if sparse else "dense"
    fmt = resolve_format(format, 2)
    # the products' shape, exact, before anything is computed: int64 arithmetic would wrap
    checked_shape((int(n) * int(p), int(m) * int(q)), name,
                  f"the Kronecker product of shapes {tuple(a.shape)} and {tuple(b.shape)}",
                  itemsize=np.dtype(np.result_type(a.dtype, b.dtype)).itemsize if fmt.is_dense else None)
    csr, csc = resolve_format("csr", 2), resolve_format("csc", 2)
    if fmt in (csr, csc):
        # laid out in the operands' own order (a loop against it took 10x as long): b converted
        # to a's when they differ (operands are small beside their product), the product
        # converted when the format asked differs
        major = csc if a.format.order == (1, 0) else csr
        if not b.format.is_dense and b.format.order != major.order:
            b = b.asformat(major)
        out = Array._from_storage(_kron_compressed(a, b, major))
        return out if out.format == fmt else out.asformat(fmt)
    outer = einsum("ij,kl->ikjl", a, b).materialize()
    return outer.reshape((n * p, m * q)).asformat(format)


def _kron_compressed(a, b, fmt):
    """CSR or CSC storage of ``kron(a, b)``: the compiler's products stored with the two leading
    modes dense (rows ``(i, k)``, or columns ``(j, l)`` for CSC) and the two others compressed,
    so row ``i * p + k``'s entries are already in order: its positions are the last level's
    positions at the second's, and a coordinate ``j * q + l`` is the parent's ``j`` (repeated
    over its children) times ``q`` plus ``l``. The 4-d result renumbered entry by entry, with
    a sort check, took 3x scipy's time."""
    from lazysparse.api.operations import einsum
    (n, m), (p, q) = a.shape, b.shape
    by_cols = fmt.order == (1, 0)
    four = Format([Level("dense"), Level("dense"), Level("compressed"), Level("compressed")])
    st = einsum("ij,kl->jlik" if by_cols else "ij,kl->ikjl", a, b, format=four).materialize().storage
    p2, p3, c2, c3 = st.pos[2], st.pos[3], st.crd[2], st.crd[3]
    inner = p if by_cols else q  # the extent of the last mode
    idt = np.int32 if _fits32(len(st.vals), n * p, m * q) else np.int64
    pos = p3[p2].astype(idt)
    crd = np.repeat(c2.astype(idt) * idt(inner), np.diff(p3)) + c3.astype(idt)
    return Storage((n * p, m * q), fmt, [None, pos], [None, crd], st.vals, idt)


def _side(x, k, upper, name):
    from lazysparse.api.base import ArrayBase as Array
    from lazysparse.api.creation import _coords, _from_coords
    from lazysparse.api.operations import _as_array
    from lazysparse.api.indexing import matrix_offset
    x = _as_array(x, name)
    k = matrix_offset(x, k, name)
    st = x.storage
    if st.format.is_dense:
        v = np.asarray(st.vals)
        return Array._from_storage(Storage.from_dense(np.triu(v, k) if upper else np.tril(v, k)))
    i, j = _coords(st)
    keep = (j.astype(np.int64) - i >= k) if upper else (j.astype(np.int64) - i <= k)
    # the entries stay in the storage's order, so the coordinates stay canonical
    cs = [c[keep] for c in (i, j)]
    if st.format.order != (0, 1):
        o = np.lexsort(cs[::-1])
        cs = [c[o] for c in cs]
        vals = st.vals[keep][o]
    else:
        vals = st.vals[keep]
    return Array._from_storage(_from_coords(st.shape, st.format, cs, vals))


def triu(x, k=0):
    """The entries on and above diagonal ``k`` (scipy's and NumPy's ``triu``), in ``x``'s format."""
    return _side(x, k, True, "triu")


def tril(x, k=0):
    """The entries on and below diagonal ``k`` (scipy's and NumPy's ``tril``), in ``x``'s format."""
    return _side(x, k, False, "tril")
