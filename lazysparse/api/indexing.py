"""``Array.__getitem__``: NumPy's basic indexing plus one integer or boolean array (``A[i]``,
``A[:, j]``, ``A[2:10:3, ::-1]``, ``A[..., None]``, ``A[[4, 1, 4]]``, a 1-d ``A[mask]``,
``A[1, [0, 2]]``), as NumPy and scipy.sparse read them. Indexing is eager, as it is in scipy: a lazy
array is computed first and the result is concrete; dense storage is indexed by NumPy (a view for
basic indexing), sparse storage by mapping each stored entry's coordinates (``_sparse``)."""
from __future__ import annotations

import operator

import numpy as np

from lazysparse.errors import shown


def _kind(item, name):
    """``(kind, value)`` of one key item: ``"none"``, ``"ellipsis"``, ``"int"``, ``"slice"``,
    ``"array"`` (an integer array of any shape) or ``"mask"`` (a boolean array, lazysparse or
    scipy sparse array of any shape: ``(shape, coordinates of its True values, row-major)``)."""
    from lazysparse.api.base import ArrayBase
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        raise IndexError(f"{name}: a boolean scalar index is not supported (use a boolean array)")
    try:
        return "int", operator.index(item)
    except TypeError:
        pass
    sparse = isinstance(item, ArrayBase) or (hasattr(item, "tocoo") and hasattr(item, "shape"))
    if sparse and np.dtype(item.dtype) == bool:
        # a sparse mask: its stored True values, without densifying it
        if isinstance(item, ArrayBase):
            return "mask", (tuple(item.shape), nonzero(item))
        return "mask", (tuple(item.shape), _row_major(item.nonzero()))
    if sparse:
        item = item.todense() if isinstance(item, ArrayBase) else item.toarray()
    if isinstance(item, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(item)
        except ValueError as e:  # (a ragged list)
            raise IndexError(f"{name}: an index list must be rectangular: {e}") from None
        if arr.dtype == bool:
            if arr.ndim == 0:
                raise IndexError(f"{name}: a boolean scalar index is not supported (use a boolean array)")
            return "mask", (arr.shape, np.nonzero(arr))
        if arr.dtype.kind in "iu" or arr.size == 0:
            return "array", arr.astype(np.int64)
    raise IndexError(f"{name}: only integers, slices (':'), ellipsis ('...'), None, integer arrays "
                     f"and boolean masks are valid indices, got {type(item).__name__} (Index "
                     f"dimension must be 1 or 2, as an integer or array on each axis)")


def _row_major(coords):
    """Coordinates (one array per axis) sorted row-major (scipy's ``nonzero`` of a CSC array
    is column-major; NumPy's boolean indexing reads a mask row-major)."""
    coords = [np.asarray(c, dtype=np.int64) for c in coords]
    if len(coords) > 1 and len(coords[0]) > 1:
        o = np.lexsort(coords[::-1])
        coords = [c[o] for c in coords]
    return tuple(coords)


def normalize(key, shape, name="getitem"):
    """The key as ``[(kind, value, axis)]`` over the expanded items (``axis``: the operand's axis
    an item reads, None for ``None``), integers and arrays bounds-checked and made non-negative,
    slices as ``(start, step, count)``, a k-d boolean mask as k integer arrays (its True
    values' coordinates), and several integer arrays broadcast together (NumPy's advanced
    indexing)."""
    items = [_kind(k, name) for k in (key if isinstance(key, tuple) else (key,))]
    if sum(k == "ellipsis" for k, _ in items) > 1:
        raise IndexError(f"{name}: an index can only have a single ellipsis ('...')")
    used = sum(len(v[0]) if k == "mask" else k not in ("none", "ellipsis") for k, v in items)
    nd = len(shape)
    if used > nd:
        raise IndexError(f"{name}: too many indices for array: array is {nd}-dimensional, "
                         f"but {used} were indexed")
    if not any(k == "ellipsis" for k, _ in items):
        items.append(("ellipsis", None))
    out, axis, gap = _Items(), 0, None
    for kind, v in items:
        if kind == "none":
            out.append(("none", None, None))
            continue
        if kind == "ellipsis":
            gap = len(out)
            out.extend(("slice", (0, 1, shape[axis + j]), axis + j) for j in range(nd - used))
            axis += nd - used
            continue
        n = shape[axis]
        if kind == "int":
            if not -n <= v < n:
                raise IndexError(f"{name}: index ({v}) out of range: index {v} is out of bounds "
                                 f"for axis {axis} with size {n}")
            out.append(("int", v % n, axis))
        elif kind == "slice":
            start, stop, step = v.indices(n)  # ValueError for a zero step, as NumPy
            out.append(("slice", (start, step, len(range(start, stop, step))), axis))
        elif kind == "mask":
            mshape, coords = v
            want = tuple(shape[axis:axis + len(mshape)])
            # (NumPy reads an empty 1-d mask as an empty list of positions, whatever the axis)
            if mshape != want and not (len(mshape) == 1 and mshape[0] == 0):
                raise IndexError(f"{name}: bool index {_at(axis, len(mshape))} has shape {mshape} "
                                 f"instead of {want} (boolean index did not match indexed array "
                                 f"along axis {axis})")
            out.extend(("array", np.asarray(c, dtype=np.int64), axis + j) for j, c in enumerate(coords))
            axis += len(mshape)
            continue
        else:
            bad = (v < -n) | (v >= n)
            if bad.any():
                b = int(v[bad].flat[0])
                raise IndexError(f"{name}: index ({b}) out of range: index {b} is out of bounds "
                                 f"for axis {axis} with size {n}")
            out.append(("array", v % n if n else v, axis))
        axis += 1
    arrays = [p for p, (k, _, _) in enumerate(out) if k == "array"]
    if len(arrays) > 1:
        try:
            together = np.broadcast_arrays(*[out[p][1] for p in arrays])
        except ValueError:
            raise IndexError(f"{name}: shape mismatch: indexing arrays could not be broadcast "
                             f"together with shapes "
                             f"{' '.join(str(out[p][1].shape) for p in arrays)}") from None
        for p, a in zip(arrays, together):
            out[p] = ("array", a, out[p][2])
    # an ellipsis over no axis still parts the advanced indices on its two sides for NumPy
    # (``a[:, 0, ..., [1]]`` of a 3-d ``a`` puts the array's axis first): remembered here
    if nd == used and arrays:
        adv = [p for p, (k, _, _) in enumerate(out) if k in ("int", "array")]
        out.gap = gap
        out.split = adv[0] < gap <= adv[-1]
    return out


def _at(axis, k):
    return f"for axis {axis}" if k == 1 else f"for axes {axis}..{axis + k - 1}"


class _Items(list):
    """``normalize``'s items, and whether an ellipsis over no axis parts the advanced ones
    (``split``; ``gap``: the position of the item after it)."""
    split = False
    gap = None


def _out_axes(items):
    """The result's axes: ``[(kind, item index)]`` in order, the integer arrays (broadcast
    together) as one ``("array", first array's item)`` block. NumPy's rule: the advanced
    indices (the arrays and the integers) broadcast to one block of axes, which takes their
    place when they are next to each other and goes first otherwise."""
    adv = [p for p, (k, _, _) in enumerate(items) if k in ("int", "array")]
    arr = [p for p, (k, _, _) in enumerate(items) if k == "array"]
    axes = [(k, p) for p, (k, _, _) in enumerate(items) if k in ("slice", "none")]
    if not arr:
        return axes
    if adv != list(range(adv[0], adv[-1] + 1)) or getattr(items, "split", False):
        axes.insert(0, ("array", arr[0]))
    else:  # together: at the first advanced index's place
        before = sum(1 for k, p in axes if p < adv[0])
        axes.insert(before, ("array", arr[0]))
    return axes


def _slice(start, step, count):
    """A slice of NumPy's for ``count`` points from ``start`` by ``step`` (a normalized start
    can be -1 for an empty one, which NumPy would read as the last point)."""
    if count == 0:
        return slice(0, 0)
    stop = start + step * count
    return slice(start, stop if stop >= 0 else None, step)


def numpy_key(items):
    """``normalize``'s items as a key NumPy reads the same way (bounds checked already)."""
    np_key = tuple(None if k == "none" else v if k in ("int", "array") else _slice(*v)
                   for k, v, _ in items)
    if items.split:
        np_key = np_key[:items.gap] + (Ellipsis,) + np_key[items.gap:]
    return np_key


def getitem(x, key):
    from lazysparse.api.base import ArrayBase as Array
    from lazysparse.formats.storage import Storage
    name = "lazysparse.Array[...]"
    st = x.storage
    items = normalize(key, st.shape, name)
    if st.format.is_dense:
        r = Array._from_storage(Storage.from_dense(np.asarray(st.vals[numpy_key(items)])))
    else:
        r = Array._from_storage(_sparse(st, items))
    if not r.shape and all(k == "int" for k, _, _ in items):
        return r.todense()[()]  # an element is a NumPy scalar, as NumPy's and scipy's
    return r


def _rows(st, items):
    """``(item position, entries, row coordinate)`` when ``st`` is CSR-like (a dense level over a
    compressed one) and its outer axis takes an integer, a slice or an array: only the rows
    asked for are read, in the order asked (the coordinate is the row's place in that order,
    so an array that repeats a row repeats its entries). None otherwise."""
    fmt = st.format
    if not (fmt.ndim == 2 and fmt.levels[0].is_dense and fmt.levels[1].has_pos):
        return None
    p, (k, v, _) = next((p, i) for p, i in enumerate(items) if i[2] == fmt.order[0])
    if k == "slice" and v == (0, 1, st.shape[fmt.order[0]]):
        # every row: all the entries as they are; their rows are found after the other axes
        # have filtered them (a column of a CSR matrix keeps few)
        return p, np.arange(st.vals.shape[0], dtype=np.int64), None
    if k == "int":
        rows = np.array([v], dtype=np.int64)
    elif k == "slice":
        rows = np.arange(v[0], v[0] + v[1] * v[2], v[1], dtype=np.int64)[:v[2]]
    else:
        rows = v
    pos = st.pos[1].astype(np.int64, copy=False)
    starts, counts = pos[rows], pos[rows + 1] - pos[rows]
    total = int(counts.sum())
    # each row's positions, concatenated: its start, minus where it begins in the output
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    entries = shift + np.arange(total, dtype=np.int64)
    return p, entries, np.repeat(np.arange(len(rows), dtype=np.int64), counts)


def _rows_of(st, item, entries, row):
    """A CSR-like operand's rows (a slice or an array of them), the other axis whole: the same
    format, positions from the rows' counts, nothing to sort."""
    from lazysparse.formats.storage import Storage
    count = item[1][2] if item[0] == "slice" else len(item[1])
    # (an array that repeats rows can hold more entries than int32 positions count)
    idt = st.index_dtype if len(entries) < 2**31 else np.dtype(np.int64)
    pos = np.zeros(count + 1, dtype=idt)
    np.cumsum(np.bincount(row, minlength=count), out=pos[1:])
    shape = list(st.shape)
    shape[item[2]] = count
    return Storage(tuple(shape), st.format, [None, pos], [None, st.crd[1][entries].astype(idt, copy=False)],
                   st.vals[entries], idt)


def _sparse(st, items):
    """Each stored entry's coordinates are mapped axis by axis (an integer keeps the entries at it and
    drops the axis, a slice ``start:stop:step`` keeps ``x = start + k*step`` for ``0 <= k < len`` as
    coordinate ``k``, an integer array keeps an entry once per position that names its coordinate),
    then stored in the operand's format when the result has its dimensions, else in COO. Work is
    O(stored entries), or O(entries of the rows asked for) when the outer axis of a CSR/CSC operand
    is an integer or a unit-step slice.
    """
    from lazysparse.api.creation import _canonical, _coords, _from_coords, _fits32
    from lazysparse.formats import resolve_format
    arrays = [v for k, v, _ in items if k == "array"]
    if len(arrays) > 1 or any(a.ndim != 1 for a in arrays):
        return _fancy(st, items)
    new = {}  # item position -> the entries' coordinate along that result axis
    rows = _rows(st, items)
    if rows is None:
        entries, coords, done = np.arange(st.vals.shape[0], dtype=np.int64), _coords(st), None
    else:
        done, entries, row = rows
        inner = items[1 - done] if len(items) == 2 else None
        if row is not None and items[done][0] != "int" and inner is not None \
                and inner[0] == "slice" and inner[1] == (0, 1, st.shape[inner[2]]):
            return _rows_of(st, items[done], entries, row)
        coords = [None] * st.ndim
        coords[st.format.order[1]] = st.crd[1] if row is None else st.crd[1][entries]
        if items[done][0] != "int":
            new[done] = row
    keep = np.ones(len(entries), dtype=bool)
    array_at = None
    for p, (k, v, axis) in enumerate(items):
        if k == "none" or p == done:
            continue
        x = coords[axis].astype(np.int64, copy=False)
        if k == "int":
            keep &= x == v
        elif k == "slice":
            start, step, count = v
            if (start, step, count) == (0, 1, st.shape[axis]):
                new[p] = x  # the whole axis
                continue
            off = x - start
            q = off // step
            keep &= (off % step == 0) & (q >= 0) & (q < count)
            new[p] = q
        else:
            array_at = p
            new[p] = x
    if not keep.all():
        entries = entries[keep]
        new = {p: c if c is None else c[keep] for p, c in new.items()}
    if done is not None and new.get(done, 0) is None:  # every row: each entry's, by search
        new[done] = np.searchsorted(st.pos[1], entries, "right").astype(np.int64) - 1
    if array_at is not None:
        rep, new_at = _match(items[array_at][1], new[array_at])
        entries = entries[rep]
        new = {p: c[rep] for p, c in new.items()}
        new[array_at] = new_at
    axes = _out_axes(items)
    shape = tuple(1 if k == "none" else items[p][1][2] if k == "slice" else len(items[p][1])
                  for k, p in axes)
    cols = [np.zeros(len(entries), np.int64) if k == "none" else new[p] for k, p in axes]
    vals = st.vals[entries]
    nd = len(shape)
    if nd == 0:
        from lazysparse.formats.storage import Storage
        return Storage.from_dense(np.asarray(vals.sum() if len(vals) else np.zeros((), vals.dtype),
                                             dtype=vals.dtype))
    same = nd == st.ndim and all(k != "none" for k, _ in axes)
    fmt = st.format if same else resolve_format("coo", nd)
    idt = np.int32 if _fits32(len(vals), *shape) else np.int64
    cols, vals = _canonical([c.astype(idt) for c in cols], vals)
    return _from_coords(shape, fmt, cols, vals)


def _match(idx, x):
    """Each entry (coordinate ``x``) once per position of the flat integer array ``idx`` that
    names it: ``(the entry of each copy, the copy's position in idx)``, entries in order."""
    order = np.argsort(idx, kind="stable")
    srt = idx[order]
    lo, hi = np.searchsorted(srt, x, "left"), np.searchsorted(srt, x, "right")
    cnt = hi - lo
    rep = np.repeat(np.arange(len(x)), cnt)
    first = np.repeat(lo - np.concatenate(([0], np.cumsum(cnt)[:-1])), cnt)
    return rep, order[np.arange(len(rep)) + first]


def _fancy(st, items):
    """``_sparse`` for several integer arrays (broadcast together by ``normalize``) or arrays
    of more than one dimension: the arrays' axes read as one, by each entry's linear index
    over them, which is matched against the arrays' linear indices (``_match``); a matched
    entry's position in the broadcast arrays becomes its coordinates in the result's block of
    advanced axes. O(stored entries + index size) after a sort of the index."""
    import math
    from lazysparse.api.creation import _canonical, _coords, _from_coords, _fits32
    from lazysparse.formats import resolve_format
    coords = [c.astype(np.int64, copy=False) for c in _coords(st)]
    keep = np.ones(st.vals.shape[0], dtype=bool)
    new, arrays = {}, []
    for p, (k, v, axis) in enumerate(items):
        if k == "int":
            keep &= coords[axis] == v
        elif k == "slice":
            start, step, count = v
            off = coords[axis] - start
            q = off // step
            keep &= (off % step == 0) & (q >= 0) & (q < count)
            new[p] = q
        elif k == "array":
            arrays.append(p)
    entries = np.flatnonzero(keep)
    block = items[arrays[0]][1].shape
    sizes = [st.shape[items[p][2]] for p in arrays]
    if math.prod(sizes) >= 2**63:
        raise IndexError(f"lazysparse.Array[...]: the indexed axes {tuple(sizes)} have too many "
                         "elements to number in 64 bits")
    x = np.ravel_multi_index([coords[items[p][2]][entries] for p in arrays], sizes)
    idx = np.ravel_multi_index([items[p][1].ravel() for p in arrays], sizes) \
        if math.prod(block) else np.zeros(0, np.int64)
    rep, at = _match(idx, x)
    entries = entries[rep]
    inblock = np.unravel_index(at, block) if block else []
    shape, cols = [], []
    for k, p in _out_axes(items):
        if k == "none":
            shape.append(1)
            cols.append(np.zeros(len(entries), np.int64))
        elif k == "slice":
            shape.append(items[p][1][2])
            cols.append(new[p][entries])
        else:
            shape.extend(block)
            cols.extend(inblock)
    shape, vals = tuple(shape), st.vals[entries]
    if not shape:
        from lazysparse.formats.storage import Storage
        return Storage.from_dense(np.asarray(vals.sum() if len(vals) else np.zeros((), vals.dtype),
                                             dtype=vals.dtype))
    if len(shape) > 2 and st.ndim == 2 and st.format.levels[1].has_pos:
        # scipy's CSR/CSC arrays are at most 2-d, and so is what indexing one gives
        raise IndexError(f"lazysparse.Array[...]: the index gives a {len(shape)}-d result "
                         f"{shape}, and a {st.format.name or 'compressed'} array's is at most "
                         "2-d (Only 1D or 2D results: index A.tocoo() for an N-d one)")
    same = len(shape) == st.ndim and all(k != "none" for k, _ in _out_axes(items))
    fmt = st.format if same else resolve_format("coo", len(shape))
    idt = np.int32 if _fits32(len(vals), *shape) else np.int64
    cols, vals = _canonical([np.asarray(c).astype(idt) for c in cols], vals)
    return _from_coords(shape, fmt, cols, vals)


# -- scipy's selection methods -----------------------------------------------------------------
def matrix_offset(x, k, name):
    """``k`` as an int, for a diagonal of the 2-d ``x`` (errors name ``name``)."""
    if x.ndim != 2:
        raise ValueError(f"{name}: needs a 2-d array, got shape {tuple(x.shape)}")
    try:
        return operator.index(k)
    except TypeError:
        raise TypeError(f"{name}: k must be an integer, got {type(k).__name__}") from None


def diagonal(x, k=0):
    """``x.diagonal(k)``: the ``k``-th diagonal of a 2-d array as a dense vector, as scipy and
    NumPy give it. The main diagonal of a square array stays lazy (``einsum("ii->i")``);
    others read a window ``x[i, i+k]`` (lazysparse/api/affine.py) and are computed now."""
    from lazysparse.api import affine as windows
    from lazysparse.api.conversion import convert
    name = "diagonal"
    k = matrix_offset(x, k, name)
    n, m = x.shape
    if k == 0 and n == m:
        from lazysparse.api.operations import einsum
        return einsum("ii->i", x, format="dense")
    length = max(0, min(n, m - k) if k >= 0 else min(n + k, m))
    shifted = windows.Affine(f"i+{abs(k)}", (("i", 1),), abs(k))
    subs = ("i", shifted) if k >= 0 else (shifted, "i")
    w = windows.window(x, "A", subs, ("i",), {"i": length}, dense_result=True)
    return w if w.format.is_dense else convert(w, "dense", name)


def nonzero(x):
    """``x.nonzero()``: the coordinates of the nonzero values (explicit zeros left out), one
    array per axis, in row-major order, as NumPy and scipy give them."""
    from lazysparse.api.creation import _coords
    st = x.storage
    if st.format.is_dense:
        return np.nonzero(np.asarray(st.vals))
    coords = _coords(st)
    keep = st.vals != 0
    coords = [c[keep].astype(np.int64) for c in coords]
    if st.format.order != tuple(range(st.ndim)) and len(coords) and len(coords[0]) > 1:
        o = np.lexsort(coords[::-1])
        coords = [c[o] for c in coords]
    return tuple(coords)


def reshape(x, shape, order="C", same=None):
    """``x.reshape(shape, order)``: NumPy's (one ``-1`` inferred; ``order`` "C" or "F").
    Eager: a sparse array's entries are renumbered (their linear index in ``order``), then stored
    in its format when the number of dimensions stays, in COO otherwise. ``same``: what to
    return when the shape does not change (scipy's ``reshape`` gives the array itself)."""
    import math
    from lazysparse.api.base import ArrayBase as Array
    from lazysparse.api.creation import _canonical, _coords, _fits32, _from_coords, checked_shape
    from lazysparse.formats import resolve_format
    from lazysparse.formats.storage import Storage
    name = "reshape"
    if order not in ("C", "F"):
        raise ValueError(f"{name}: order must be 'C' or 'F', got {shown(order)}")
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = [operator.index(s) for s in shape]
    except TypeError:
        raise TypeError(f"{name}: the new shape must be integers, got {shown(shape)}") from None
    size = math.prod(x.shape)
    if shape.count(-1) > 1 or any(s < -1 for s in shape):
        raise ValueError(f"{name}: can only specify one unknown dimension (-1) and no other negative one, got {tuple(shape)}")
    if -1 in shape:
        rest = math.prod(s for s in shape if s != -1)
        if rest == 0 or size % rest:
            raise ValueError(f"{name}: cannot reshape array of size {size} into shape {tuple(shape)}")
        shape[shape.index(-1)] = size // rest
    shape = tuple(shape)
    if math.prod(shape) != size:
        raise ValueError(f"{name}: cannot reshape array of size {size} into shape {shape}")
    # (an empty array's new shape may have any other dimension: past int64 it cannot be stored)
    checked_shape(shape, name, f"reshaping shape {tuple(x.shape)} to {shape}")
    if same is not None and shape == tuple(x.shape):
        return same
    st = x.storage
    if st.format.is_dense:
        return Array._from_storage(Storage.from_dense(np.asarray(st.vals).reshape(shape, order=order)))
    if size >= 2**63:
        raise ValueError(f"{name}: reshaping shape {tuple(x.shape)} to {shape} renumbers its {size} "
                         "elements by a linear index, which does not fit in 64 bits")
    coords = _coords(st)
    lin = np.ravel_multi_index([c.astype(np.int64) for c in coords], x.shape, order=order) \
        if x.ndim else np.zeros(len(st.vals), np.int64)
    new = list(np.unravel_index(lin, shape, order=order)) if shape else []
    vals = st.vals
    if not shape:
        return Array._from_storage(Storage.from_dense(np.asarray(vals.sum() if len(vals) else 0, dtype=vals.dtype)))
    idt = np.int32 if _fits32(len(vals), *shape) else np.int64
    new, vals = _canonical([c.astype(idt) for c in new], vals)
    fmt = st.format if len(shape) == x.ndim else resolve_format("coo", len(shape))
    return Array._from_storage(_from_coords(shape, fmt, new, vals))
